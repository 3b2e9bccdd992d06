#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Write the fuzzers' seed corpora (tests/fuzz/seeds/{scan,hlist}/) from the
test corpus and a few hand-made cases. Deterministic: running it again
gives the same files. Input layouts: tests/fuzz/scan_check.h, hlist_check.h.

    tests/fuzz/gen_seeds.py [--corpus DIR]
"""
import argparse
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))

# scan_check.h: mode bits
FRESH, UT_PASS, UT_DROP, ON_ERROR_PASS = 0x01, 0x02, 0x04, 0x08


def scan_input(mode, lst, cuts, stream):
    assert b"\0" not in lst and 0 not in cuts
    return bytes([mode]) + lst + b"\0" + bytes(cuts) + b"\0" + stream


SMALL_LIST = b"x-internal-auth\nx-internal-*\nX_Secret-Token drop\ncontent-md5\nu*\n"

EDGE_STREAMS = [
    # obs-fold continuation of a masked field, bare LF and bare CR line ends
    b"GET / HTTP/1.1\r\nHost: a\r\nX-Internal-Auth: s\r\n  more\r\n\tand more\r\nA: b\r\n\r\n",
    b"GET / HTTP/1.1\nHost: a\nx-internal-auth: s\n\n",
    b"GET / HTTP/1.1\rHost: a\rx-internal-auth: s\r\r\n\r\n",
    # blanks around names
    b"GET / HTTP/1.1\r\n\x0bX-Internal-Auth\x0c : s\r\n x_secret-token\xa0: t\r\n\r\n",
    # bodies: Content-Length, chunked with trailers, both (conflict)
    b"POST / HTTP/1.1\r\nContent-Length: 18\r\n\r\nX-Internal-Auth: bGET / HTTP/1.1\r\nX-Internal-A: c\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext\r\nhello\r\n0\r\nX-Internal-Auth: t\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
    b"POST / HTTP/1.1\r\n\x0b\x0bContent-Length: 5\r\n\r\nhello",
    # tunnels
    b"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\nX-Internal-Auth: s\r\n",
    b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\nx-internal-auth: s\r\n",
    # desync, HTTP/0.9, not HTTP
    b"GET / HTTP/1.1\r\n\r\nX-Internal-Auth: a\r\n\r\n",
    b"GET /\r\nX-Internal-Auth: a\r\n\r\n",
    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
    b"Accept: a\r\nX-Internal-Auth: leak\r\n\r\n",
    # a long line, a long name
    b"GET /" + b"a" * 300 + b" HTTP/1.1\r\nX-Internal-" + b"z" * 120 + b": v\r\n\r\n",
]


def scan_seeds(corpus):
    out = {}
    with open(os.path.join(corpus, "requests.http"), "rb") as f:
        reqs = f.read().split(b"\r\n\r\n")
    with open(os.path.join(corpus, "internal-headers.txt"), "rb") as f:
        internal = f.read()
    rnd = random.Random(6)
    for i in range(16):
        k = rnd.randrange(1, 4)
        start = rnd.randrange(0, len(reqs) - k)
        stream = b"".join(r + b"\r\n\r\n" for r in reqs[start:start + k])
        lst = internal if i % 2 == 0 else SMALL_LIST
        cuts = [rnd.randrange(1, 256) for _ in range(rnd.randrange(0, 4))]
        mode = rnd.choice([0, 0, FRESH, ON_ERROR_PASS, FRESH | UT_PASS]) | (i << 4 & 0xf0)
        out["corpus-%02d" % i] = scan_input(mode, lst, cuts, stream[:6000])
    for i, s in enumerate(EDGE_STREAMS):
        cuts = [(i * 7) % 23 + 1, 3, 1]
        out["edge-%02d" % i] = scan_input((i & 1) * ON_ERROR_PASS, SMALL_LIST, cuts, s)
        out["edge-%02d-fresh" % i] = scan_input(FRESH, SMALL_LIST, [5], s)
    out["default-list"] = bytes([0]) + EDGE_STREAMS[0]
    return out


def hlist_seeds(corpus):
    out = {}
    for name in ("internal-headers.txt", "bench-headers-118.txt"):
        with open(os.path.join(corpus, name), "rb") as f:
            text = f.read()
        for opt in (0, 1, 2):
            out["%s-%d" % (name.split(".")[0], opt)] = bytes([opt]) + text
    out["mixed"] = b"\0# c\n  x-a*  drop # c2\nX_B\tmask\n@fold-underscore off\nx-b\nfoo#bar\n"
    out["prefixes"] = b"\0x-*\nx-a*\nx-a\nx-ab*\nx-abc\nX-AB\n"
    out["one-byte"] = b"\0a\nb*\n!\n~*\n"
    out["long"] = b"\0" + b"x" * 128 + b"\n" + b"y" * 127 + b"*\n"
    out["bad-dup"] = b"\0x_a\nX-A\n"
    out["bad-char"] = b"\0x a b\nx\x01\n"
    out["bad-directive"] = b"\0@fold-underscore maybe\n"
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(HERE, "..", "corpus"))
    args = ap.parse_args()
    for kind, seeds in (("scan", scan_seeds(args.corpus)), ("hlist", hlist_seeds(args.corpus))):
        d = os.path.join(HERE, "seeds", kind)
        os.makedirs(d, exist_ok=True)
        for name, data in sorted(seeds.items()):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print("%s: %d seeds in %s" % (kind, len(seeds), os.path.relpath(d)))


if __name__ == "__main__":
    main()
