#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Compare what an origin server reported with the request that was sent.

    check_report.py --sent REQ --report RESP [--list LIST | --unmasked]
                    [--ignore host,connection]

REQ holds the exact request bytes; RESP the response (status line and body,
or the body alone) with a report in the format of servers/origin.js.

Expected field lines: every line sent, in order, byte for byte, except that
a line whose name is in LIST (a naive reading of the header-list format:
exact names, 'prefix*' rules, case-insensitive, '_' as '-' unless
'@fold-underscore off') becomes the masked line of the same length:
"x-hdrstrip: xxx...". Names in --ignore are left out on both sides (lines
a proxy adds or rewrites). With --unmasked every line is expected as sent.
Also fails when any reported line still holds a listed name.
Exit status 0 when the report matches, 1 otherwise.
"""
import argparse
import sys

FILL = "x-hdrstrip"


def esc(raw: bytes) -> str:
    return "".join("\\\\" if b == 0x5C else ("\\x%02x" % b if b < 0x20 or b > 0x7E else chr(b))
                   for b in raw)


def read_list(path):
    rules, fold = [], True
    with open(path, "rb") as f:
        for raw in f.read().decode("latin-1").splitlines():
            words = []
            for w in raw.split():
                if w.startswith("#"):
                    break
                words.append(w)
            if not words:
                continue
            if words[0].startswith("@"):
                if words[0] == "@fold-underscore":
                    fold = words[1] == "on"
                continue
            action = words[1].lower() if len(words) > 1 else "mask"
            name = words[0].lower()
            prefix = name.endswith("*")
            rules.append((name.rstrip("*"), prefix, action))
    return rules, fold


def lookup(rules, fold, name):
    n = name.strip(" \t").lower()
    if fold:
        n = n.replace("_", "-")
    for r, prefix, action in rules:
        rr = r.replace("_", "-") if fold else r
        if (prefix and n.startswith(rr)) or n == rr:
            return action
    return None


def masked(line: bytes) -> bytes:
    n = len(line)
    nf = min(len(FILL), max(n - 2, 0))
    out = (FILL[:nf] + ": "[: n - nf] + "x" * max(n - nf - 2, 0)).encode()
    assert len(out) == n
    return out


def sent_fields(req: bytes):
    head = req.split(b"\r\n\r\n", 1)[0]
    return head.split(b"\r\n")[1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sent", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--list")
    ap.add_argument("--unmasked", action="store_true")
    ap.add_argument("--ignore", default="host,connection")
    a = ap.parse_args()

    with open(a.sent, "rb") as f:
        req = f.read()
    with open(a.report, "rb") as f:
        resp = f.read().decode("latin-1")
    ignore = {x.strip().lower() for x in a.ignore.split(",") if x.strip()}
    rules, fold = read_list(a.list) if a.list else ([], True)

    if resp.startswith("HTTP/"):
        status = resp.split("\r\n", 1)[0]
        if status.split(" ")[1:2] != ["200"]:
            print("check_report: status is not 200: %r" % status)
            return 1
        resp = resp.split("\r\n\r\n", 1)[1] if "\r\n\r\n" in resp else ""
    lines = resp.split("\n")
    server = next((l[8:] for l in lines if l.startswith("server: ")), "?")
    if any(l.startswith("client-error:") for l in lines):
        print("check_report: %s rejected the request: %s" % (server, resp))
        return 1
    if "end" not in lines:
        print("check_report: no complete report in the response: %r" % resp[:500])
        return 1
    got = [l[8:] for l in lines if l.startswith("header: ")]

    want, n_masked = [], 0
    for line in sent_fields(req):
        name = line.split(b":", 1)[0].decode("latin-1")
        action = None if a.unmasked else lookup(rules, fold, name)
        if action == "drop":
            print("check_report: '%s' has a drop rule, yet %s answered" % (name, server))
            return 1
        if action == "mask":
            line = masked(line)
            n_masked += 1
        want.append(esc(line))

    def keep(l):
        return l.split(":", 1)[0].strip().lower() not in ignore

    got_f = [l for l in got if keep(l)]
    want_f = [l for l in want if keep(l)]
    ok = got_f == want_f
    if ok and not a.unmasked:
        for l in got:
            nm = l.split(":", 1)[0]
            if lookup(rules, fold, nm):
                print("check_report: %s received a listed name: %r" % (server, l))
                ok = False
    if not ok:
        print("check_report: %s did not receive the expected field lines" % server)
        width = max([len(x) for x in want_f + got_f] + [8])
        width = min(width, 70)
        print("  %-*s | %s" % (width, "expected", "received"))
        for i in range(max(len(want_f), len(got_f))):
            w = want_f[i] if i < len(want_f) else "-"
            g = got_f[i] if i < len(got_f) else "-"
            mark = "  " if w == g else "!!"
            print("%s%-*s | %s" % (mark, width, w[:width], g[:width]))
        return 1
    print("check_report: %s received %d field lines as expected (%d masked)"
          % (server, len(got_f), n_masked))
    return 0


if __name__ == "__main__":
    sys.exit(main())
