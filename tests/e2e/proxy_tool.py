#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Small helpers of the proxy-mode tests (test_proxy.sh).

    proxy_tool.py curl-sent TRACE PREFIX   the requests curl sent (its --trace
                                           file), one per file: PREFIX.1, ...;
                                           prints how many
    proxy_tool.py expect LIST IN OUT       OUT: the request(s) in IN as the
                                           origin should get them in proxy
                                           mode (listed lines removed, with
                                           their continuation lines)
    proxy_tool.py expect-masked LIST IN OUT
                                           OUT: IN as the origin gets it on a
                                           connection checked line by line
                                           (after a desync): every line that
                                           starts with a listed name masked in
                                           place, same length
    proxy_tool.py removed LIST IN          "LINES BYTES" that proxy mode takes
                                           out of IN (headers_removed and
                                           removed_bytes should grow by these)
    proxy_tool.py body-length REQ          the length of REQ's body
    proxy_tool.py cookies < bpftool -j map dump of a sockhash
                                           the keys (socket cookies), one a line
    proxy_tool.py sock-maps < bpftool -j map show
                                           "ID TYPE NAME" of every sockhash,
                                           sockmap and sk_storage map
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_report import lookup, masked, read_list  # noqa: E402
from proxy_client import split_requests, strip  # noqa: E402

HEX_LINE = re.compile(r"^[0-9a-f]{4}: ")


def curl_sent(trace, prefix):
    """Bytes of the '=> Send header' and '=> Send data' blocks, in order."""
    sent, sending = bytearray(), False
    with open(trace, encoding="latin-1") as f:
        for line in f:
            if line.startswith("=> Send "):
                sending = True
            elif HEX_LINE.match(line):
                if sending:
                    sent += bytes.fromhex(line[6:6 + 48])
            else:
                sending = False
    reqs = split_requests(bytes(sent))
    for i, r in enumerate(reqs, 1):
        with open("%s.%d" % (prefix, i), "wb") as f:
            f.write(r)
    print(len(reqs))
    return 0


def expect(list_path, src, dst):
    rules, fold = read_list(list_path)
    with open(src, "rb") as f:
        reqs = split_requests(f.read())
    with open(dst, "wb") as f:
        f.write(b"".join(strip(r, rules, fold) for r in reqs))
    return 0


def expect_masked(list_path, src, dst):
    rules, fold = read_list(list_path)
    with open(src, "rb") as f:
        lines = f.read().split(b"\r\n")
    out = [masked(line) if line[:1] not in (b" ", b"\t") and
           lookup(rules, fold, line.split(b":", 1)[0].decode("latin-1")) else line
           for line in lines]
    with open(dst, "wb") as f:
        f.write(b"\r\n".join(out))
    return 0


def removed(list_path, src):
    rules, fold = read_list(list_path)
    with open(src, "rb") as f:
        reqs = split_requests(f.read())
    lines = nbytes = 0
    for r in reqs:
        nbytes += len(r) - len(strip(r, rules, fold))
        head = r[:r.index(b"\r\n\r\n")]
        for line in head.split(b"\r\n")[1:]:
            if line[:1] not in (b" ", b"\t") and \
                    lookup(rules, fold, line.split(b":", 1)[0].decode("latin-1")):
                lines += 1
    print(lines, nbytes)
    return 0


def body_length(src):
    with open(src, "rb") as f:
        data = f.read()
    print(len(data) - data.index(b"\r\n\r\n") - 4)
    return 0


def cookies():
    for e in json.load(sys.stdin):
        key = e["key"]
        if isinstance(key, list):  # raw bytes, little-endian
            print(int.from_bytes(bytes(int(b, 16) for b in key), "little"))
        else:
            print(int(key))
    return 0


def sock_maps():
    for m in json.load(sys.stdin):
        if m.get("type") in ("sockhash", "sockmap", "sk_storage"):
            print(m["id"], m["type"], m.get("name", "-"))
    return 0


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "curl-sent" and len(args) == 2:
        return curl_sent(*args)
    if cmd == "expect" and len(args) == 3:
        return expect(*args)
    if cmd == "expect-masked" and len(args) == 3:
        return expect_masked(*args)
    if cmd == "removed" and len(args) == 2:
        return removed(*args)
    if cmd == "body-length" and len(args) == 1:
        return body_length(*args)
    if cmd == "cookies" and not args:
        return cookies()
    if cmd == "sock-maps" and not args:
        return sock_maps()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
