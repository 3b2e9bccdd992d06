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
'@fold-underscore off'; the CLI's built-in http2-settings rule unless
'@h2c-upgrade allow' or a request rule of the list covers it) becomes the masked line of the same length:
"y-hdrstrip: xxx..." (the filler name, set from the list). Names in --ignore are left out on both sides (lines
a proxy adds or rewrites). With --unmasked every line is expected as sent.
Also fails when any reported line still holds a listed name.

--premask-ok: a kept line may arrive masked too when its name could have
been cut by a segment boundary while it still looked like a listed name
(its first byte is the first byte of a listed name): hdrstrip rewrites a
cut name that may match before it knows (include/hdrstrip/scan.h).
--pipelined: REQ holds several requests (bodies by Content-Length) and RESP
the same number of responses, one after the other; each pair is checked.
Exit status 0 when the report matches, 1 otherwise.
"""
import argparse
import sys

# The filler name: "x-hdrstrip" with the first of these bytes that no listed
# name starts with (set from the list, choose_fill()).
FILL_ORDER = "xyzqjkvwgfhbpmdcnlutsroiea0123456789!#$%&'*+.^`|~"
FILL = "x-hdrstrip"


def choose_fill(rules, fold):
    firsts = {(r.replace("_", "-") if fold else r)[:1] for r, _, _ in rules}
    for c in FILL_ORDER:
        if (c.replace("_", "-") if fold else c) not in firsts:
            return c + "-hdrstrip"
    return None


def esc(raw: bytes) -> str:
    return "".join("\\\\" if b == 0x5C else ("\\x%02x" % b if b < 0x20 or b > 0x7E else chr(b))
                   for b in raw)


# The CLI's built-in rule (core/hlist.h, HS_BUILTIN_H2C): HTTP2-Settings
# masked in requests, unless the list says '@h2c-upgrade allow' or a
# request rule of its own covers the name.
BUILTIN = "http2-settings"


def covers(rules, fold, name):
    for r, prefix, _ in rules:
        rr = r.replace("_", "-") if fold else r
        if (prefix and name.startswith(rr)) or name == rr:
            return True
    return False


def read_list(path):
    rules, fold, h2c_block, response_only = [], True, True, []
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
                if words[0] == "@h2c-upgrade":
                    h2c_block = words[1] == "block"
                continue
            action = words[1].lower() if len(words) > 1 else "mask"
            name = words[0].lower()
            prefix = name.endswith("*")
            rules.append((name.rstrip("*"), prefix, action))
            if "response" in (w.lower() for w in words[1:]):
                response_only.append(rules[-1])
    if h2c_block and not covers([r for r in rules if r not in response_only], fold, BUILTIN):
        rules.append((BUILTIN, False, "mask"))
    # The masked forms below take this list's filler name.
    global FILL
    FILL = choose_fill(rules, fold) or FILL
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


def content_length(head: bytes):
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


def split_messages(data: bytes):
    """Messages (requests or responses) one after the other, framed by
    Content-Length."""
    out = []
    while data:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            out.append(data)
            break
        total = end + 4 + content_length(data[:end])
        out.append(data[:total])
        data = data[total:]
    return out


def all_masks(line: bytes):
    """Every masked form hdrstrip may give @line: the filler name cut to the
    length of the name it replaced (at most its ten bytes)."""
    n = len(line)
    return {(FILL[:nf] + ": " + "x" * (n - nf - 2)).encode()
            for nf in range(0, min(len(FILL), n - 2) + 1)}


# The bytes a masked line may hold: the filler name, ':', ' ', 'x'.
def filler_bytes():
    return set(FILL + ": x")


def resynced(got: str, want: str) -> bool:
    """A line a retransmission no checkpoint covered started inside:
    hdrstrip masks the rest of that line ("x: xxx"), whether it was kept
    or masked. Same length, the expected bytes up to some point, filler
    bytes after it: nothing of a value survives where the mask began."""
    if len(got) != len(want):
        return False
    k = 0
    while k < len(got) and got[k] == want[k]:
        k += 1
    return set(got[k:]) <= filler_bytes()


def may_be_premasked(rules, fold, name):
    n = name.strip(" \t").lower()
    return bool(n) and any(r.startswith(n[0]) or (fold and r.replace("_", "-").startswith(n[0]))
                           for r, _, _ in rules)


def check_one(a, rules, fold, ignore, req, resp):
    """Check one response against the request it answers; 0 or 1."""
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

    want, alts, n_masked = [], [], 0
    for line in sent_fields(req):
        name = line.split(b":", 1)[0].decode("latin-1")
        action = None if a.unmasked else lookup(rules, fold, name)
        if action == "drop":
            print("check_report: '%s' has a drop rule, yet %s answered" % (name, server))
            return 1
        alt = set()
        if action == "mask":
            line = masked(line)
            n_masked += 1
        elif a.premask_ok and may_be_premasked(rules, fold, name):
            alt = {esc(m) for m in all_masks(line)}
        if getattr(a, "resync_ok", False):
            alt = ("resync", alt)
        want.append(esc(line))
        alts.append(alt)

    def keep(l):
        return l.split(":", 1)[0].strip().lower() not in ignore

    got_f = [l for l in got if keep(l)]
    pairs = [(w, al) for w, al in zip(want, alts) if keep(w)]
    want_f = [w for w, _ in pairs]
    premasked = 0
    ok = len(got_f) == len(want_f)
    def accepted(g, w, al):
        if isinstance(al, tuple):
            return g in al[1] or resynced(g, w)
        return g in al

    for g, (w, al) in zip(got_f, pairs):
        if g != w and accepted(g, w, al):
            premasked += 1
        elif g != w:
            ok = False
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
            mark = "  " if w == g else "~~" if i < len(pairs) and accepted(g, w, pairs[i][1]) else "!!"
            print("%s%-*s | %s" % (mark, width, w[:width], g[:width]))
        return 1
    extra = " (%d kept lines masked, their names cut)" % premasked if premasked else ""
    print("check_report: %s received %d field lines as expected (%d masked)%s"
          % (server, len(got_f), n_masked, extra))
    return 0


def check(req, resp, list_path=None, unmasked=False, ignore="host,connection",
          premask_ok=False, pipelined=False, resync_ok=False):
    """Check response bytes @resp against request bytes @req; prints the
    verdict, returns 0 (as expected) or 1."""
    opts = argparse.Namespace(unmasked=unmasked, premask_ok=premask_ok, resync_ok=resync_ok)
    ignored = {x.strip().lower() for x in ignore.split(",") if x.strip()}
    rules, fold = read_list(list_path) if list_path else ([], True)
    if not pipelined:
        return check_one(opts, rules, fold, ignored, req, resp.decode("latin-1"))
    reqs, resps = split_messages(req), split_messages(resp)
    if len(reqs) != len(resps):
        print("check_report: %d requests sent, %d responses" % (len(reqs), len(resps)))
        return 1
    failed = 0
    for i, (q, r) in enumerate(zip(reqs, resps)):
        print("check_report: pipelined request %d of %d:" % (i + 1, len(reqs)))
        failed |= check_one(opts, rules, fold, ignored, q, r.decode("latin-1"))
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sent", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--list")
    ap.add_argument("--unmasked", action="store_true")
    ap.add_argument("--ignore", default="host,connection")
    ap.add_argument("--premask-ok", action="store_true")
    ap.add_argument("--resync-ok", action="store_true",
                    help="masked lines may also be partly masked again after a retransmission")
    ap.add_argument("--pipelined", action="store_true")
    a = ap.parse_args()

    with open(a.sent, "rb") as f:
        req = f.read()
    with open(a.report, "rb") as f:
        resp = f.read()
    return check(req, resp, a.list, a.unmasked, a.ignore, a.premask_ok, a.pipelined,
                 a.resync_ok)


if __name__ == "__main__":
    sys.exit(main())
