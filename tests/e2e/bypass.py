#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Hostile requests for the bypass suite (test_bypass.sh).

    bypass.py run ADDR --list LIST --origin NAME:PORT:LOG... --phase PHASE
                      --out RESULTS [--case ID...] [--flood-port PORT]
                      [--flows-map ID]
    bypass.py judge --list LIST RESULTS...
    bypass.py cases

'run' sends every case (a hand-made request, in pieces with pauses where
the case says so) to every origin over TCP, then a benign control request,
and records per case and origin what came back (status, or timeout, or a
closed connection) and what the origin's application got: the new reports
in its log (servers/origin.js format), checked for internal names under
every spelling an application may accept (any case, '_' for '-', blanks
and control bytes around the name) in the lines the application sees
(node's headers and trailers, python's parsed self.headers, what nginx
forwarded to its backend). Each case's internal value holds a unique token;
where the token turns up under another name, that is noted.

'judge' prints one table of every results file (the 'open' phase without
hdrstrip shows what the origins do with the attacks on their own) and
exits 1 when, in a phase other than 'open':
  - an application got an internal name (LEAK);
  - a case that is a valid request did not get 200 from every origin;
  - a case hdrstrip must drop reached an application (origin mode, phase
    'receive': the part of it from the dropped segment on);
  - a benign control request after a case did not get 200.
"""
import argparse
import json
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_report import read_list, lookup  # noqa: E402
from client import Reader  # noqa: E402

NAME = b"X-Internal-Auth"
# Bytes some parser strips around a name (include/hdrstrip/scan.h), and
# the other control bytes: an application never gets a name with them, but
# a check that strips them cannot miss one that does.
STRIP = bytes(range(0, 0x21)) + b"\x7f\x85\xa0"


class Case:
    """@pieces: the request, cut where TCP segments should end (the client
    pauses between pieces); @expect: 'ok' (a valid request: every origin
    answers 200), 'any' (an origin may refuse it), 'drop' (hdrstrip drops
    it: no application may see it); @responses: answers to read."""

    def __init__(self, cid, what, pieces, expect="any", responses=1, evict=False,
                 pause=0.03):
        self.cid, self.what, self.pieces = cid, what, pieces
        self.expect, self.responses, self.evict, self.pause = expect, responses, evict, pause


def token(cid):
    return b"tok-" + cid.encode() + b"-q7"


def req(host, fields, target=b"/bypass", method=b"GET", version=b"HTTP/1.1", eol=b"\r\n",
        body=b""):
    head = method + b" " + target + b" " + version + eol
    head += b"".join(f + eol for f in [b"Host: " + host] + fields)
    return head + eol + body


def cut(data, *marks):
    """Cut @data before each mark: bytes (its first occurrence, found after
    the previous cut), (bytes, k) (k bytes into it) or an int (an offset
    from the previous cut)."""
    pieces, start = [], 0
    for m in marks:
        if isinstance(m, tuple):
            at = data.index(m[0], start) + m[1]
        elif isinstance(m, bytes):
            at = data.index(m, start)
        else:
            at = start + m
        pieces.append(data[start:at])
        start = at
    pieces.append(data[start:])
    return [p for p in pieces if p]


def build_cases(host):
    cases = []

    def add(cid, what, data, expect="any", **kw):
        data = data if isinstance(data, list) else [data]
        cases.append(Case(cid, what, data, expect, **kw))

    def internal(cid):
        return NAME + b": " + token(cid)

    keep = b"X-Keep: kept"
    # Whitespace and bytes around the name.
    add("ws-before-colon", "SP before the colon", req(host, [NAME + b" : " + token("ws-before-colon"), keep]))
    add("tab-before-colon", "HTAB before the colon",
        req(host, [NAME + b"\t: " + token("tab-before-colon"), keep]))
    add("ws-lead", "SP before the name, not a fold (first field)",
        req(host, [keep]).replace(b"Host:", b" " + internal("ws-lead") + b"\r\nHost:", 1))
    add("bare-lf", "every line ends with a bare LF",
        req(host, [keep, internal("bare-lf")], eol=b"\n"))
    add("bare-lf-one", "the internal line alone ends with a bare LF",
        req(host, [keep, internal("bare-lf-one") + b"\n" + b"X-After: a"]))
    add("bare-cr", "a bare CR before the internal line",
        req(host, [keep + b"\r" + internal("bare-cr")]))
    add("bare-cr-all", "every line ends with a bare CR, the block with CRLF CRLF",
        req(host, [keep, internal("bare-cr-all")], eol=b"\r")[:-1] + b"\n\r\n")
    add("obs-fold-value", "the internal field's value folded onto a second line",
        req(host, [NAME + b": first", b"  " + token("obs-fold-value"), keep]))
    add("obs-fold-line", "an internal line folded into a benign field",
        req(host, [keep, b" " + internal("obs-fold-line")]))
    add("obs-fold-tab", "an internal line folded with HTAB",
        req(host, [keep, b"\t" + internal("obs-fold-tab")]))
    add("mixed-case", "mixed case", req(host, [b"x-InTeRnAl-AuTh: " + token("mixed-case"), keep]),
        "ok")
    add("underscore", "'_' for '-'", req(host, [b"X_Internal_Auth: " + token("underscore"), keep]),
        "ok")
    add("underscore-mixed", "'_' and '-' mixed, upper case",
        req(host, [b"X-INTERNAL_AUTH: " + token("underscore-mixed"), keep]), "ok")
    add("nul-value", "NUL in the value", req(host, [NAME + b": a\x00" + token("nul-value"), keep]))
    add("ctl-value", "control bytes in the value",
        req(host, [NAME + b": \x01\x7f" + token("ctl-value") + b"\x1b", keep]))
    add("nul-after-name", "NUL between the name and the colon",
        req(host, [NAME + b"\x00: " + token("nul-after-name"), keep]))
    add("nul-before-name", "NUL before the name", req(host, [b"\x00" + internal("nul-before-name")]))
    add("vt-before-name", "VT before the name", req(host, [b"\x0b" + internal("vt-before-name")]))
    add("ff-after-name", "FF after the name",
        req(host, [NAME + b"\x0c: " + token("ff-after-name"), keep]))
    add("nbsp-after-name", "0xa0 after the name",
        req(host, [NAME + b"\xa0: " + token("nbsp-after-name"), keep]))
    add("ctl-in-name", "a control byte inside the name (another name for every server)",
        req(host, [b"X-Internal\x01-Auth: " + token("ctl-in-name"), keep]))
    add("dup", "the internal field three times",
        req(host, [internal("dup"), keep, internal("dup"), b"x-internal-auth: " + token("dup")]),
        "ok")
    add("absolute-form", "absolute-form target",
        req(host, [internal("absolute-form"), keep], target=b"http://" + host + b"/abs"), "ok")
    add("http10", "HTTP/1.0", req(host, [internal("http10"), keep], version=b"HTTP/1.0"), "ok")
    add("http09ish", "a request line without a version, then fields",
        req(host, [internal("http09ish")], version=b"").replace(b" \r\n", b"\r\n", 1))
    # Segments.
    data = req(host, [keep, internal("split-name"), b"X-After: a"])
    for i in range(len(NAME) + 1):
        add("split-name-%02d" % i, "the name cut after %d bytes" % i,
            cut(data.replace(b"split-name", b"split-name-%02d" % i), (NAME + b": ", i)), "ok")
    # (split-name-15: the colon starts the next segment.)
    add("colon-alone", "the colon alone in a segment of its own",
        cut(req(host, [keep, internal("colon-alone")]), b": tok", 1), "ok")
    add("crlf-split", "the CR and the LF before the internal line in two segments",
        cut(req(host, [keep, internal("crlf-split")]), b"\n" + NAME), "ok")
    value = token("long-value") + b"-" + b"v" * 900
    add("long-value", "a 900-byte value in 30 segments",
        cut(req(host, [NAME + b": " + value, keep]), NAME, *([30] * 30)), "ok", pause=0.01)
    big = [b"X-Pad-%02d: %s" % (i, b"p" * 2040) for i in range(30)]
    add("after-60k", "60 KiB of benign fields first",
        req(host, big + [internal("after-60k"), keep]), "ok")
    # Framing: bodies, chunks, trailers, pipelining.
    add("trailer", "the internal field as a trailer of a chunked body",
        req(host, [b"Transfer-Encoding: chunked"], method=b"POST",
            body=b"5\r\nhello\r\n0\r\n" + internal("trailer") + b"\r\n\r\n"))
    first = req(host, [keep], target=b"/first")
    add("pipelined", "a second, pipelined request carries it",
        first + req(host, [internal("pipelined"), keep], target=b"/second"), "ok", responses=2)
    post = req(host, [b"Content-Length: 24"], method=b"POST", body=b"A" * 12 + NAME[:12])
    add("after-body", "a pipelined request after a body that holds a name",
        post + req(host, [internal("after-body")], target=b"/after"), "ok", responses=2)
    smuggled = req(host, [internal("smuggle-agree")], target=b"/smuggled")
    add("smuggle-agree", "CL and TE both: a request after the chunked body", cut(
        req(host, [b"Content-Length: 5", b"Transfer-Encoding: chunked"], method=b"POST",
            body=b"0\r\n\r\n" + smuggled), b"Content-Length"), "drop")
    smuggled = req(host, [internal("smuggle-cl-te")], target=b"/smuggled")
    add("smuggle-cl-te", "CL covers a request that TE leaves after the body",
        req(host, [b"Content-Length: %d" % (5 + len(smuggled)), b"Transfer-Encoding: chunked"],
            method=b"POST", body=b"0\r\n\r\n" + smuggled), "drop")
    smuggled = req(host, [internal("smuggle-two-cl")], target=b"/smuggled")
    add("smuggle-two-cl", "two Content-Lengths",
        req(host, [b"Content-Length: 0", b"Content-Length: %d" % len(smuggled)], method=b"POST",
            body=smuggled), "drop")
    # A connection whose flow state is lost in the middle of a request.
    data = req(host, [keep, b"X-Keep-2: v", internal("evict-line"), b"X-After: a"])
    add("evict-line", "flow state evicted; the internal line starts the next segment",
        cut(data, NAME), "ok", evict=True)
    data = req(host, [keep, internal("evict-name"), b"X-After: a"])
    add("evict-name", "flow state evicted inside the internal name",
        cut(data, (NAME + b": ", 7)), "ok", evict=True)
    data = req(host, [b"X-Keep: a long value", internal("evict-value"), b"X-After: a"])
    add("evict-value", "flow state evicted inside the value before it",
        cut(data, b"long value"), "ok", evict=True)
    return cases


def unescape(s):
    """Report text (\\xNN, \\\\) back to bytes."""
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == "\\" and s[i + 1:i + 2] == "x":
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        elif s[i] == "\\" and s[i + 1:i + 2] == "\\":
            out.append(0x5C)
            i += 2
        else:
            out.append(ord(s[i]))
            i += 1
    return bytes(out)


def app_lines(report):
    """(kind, raw field line) of what the application sees in one report."""
    server = next((l[8:] for l in report if l.startswith("server: ")), "?")
    # Python: self.headers (its header parser may stop before the block's
    # end: the lines after are no fields to the application).
    kinds = ("app-header: ",) if server.startswith("python") else ("header: ", "trailer: ")
    for l in report:
        for k in kinds:
            if l.startswith(k):
                yield k[:-2], unescape(l[len(k):])


def targets_of(text):
    """The request lines of the reports in the new part of a server log."""
    out = []
    for block in text.split("\nend\n"):
        for l in block.strip("\n").split("\n"):
            if l.startswith("request: ") and not l.startswith(("request: GET /control ",
                                                                 "request: GET /flood ")):
                out.append(l[9:])
    return out


def examine(text, rules, fold, tok):
    """What the new part of a server log shows: reports, refusals, internal
    names the application got, names the token arrived under."""
    reports, errors, leaks, token_in = 0, 0, [], []
    for block in text.split("\nend\n"):
        lines = block.strip("\n").split("\n")
        if not any(l.startswith("server: ") for l in lines):
            continue
        if any(l.startswith(("request: GET /control ", "request: GET /flood ")) for l in lines):
            continue  # the benign requests around a case
        if any(l.startswith("client-error: ") for l in lines):
            errors += 1
            continue
        reports += 1
        for kind, raw in app_lines(lines):
            name, _, value = raw.partition(b":")
            n = name.strip(STRIP).decode("latin-1")
            if n and lookup(rules, fold, n):
                leaks.append("%s %r" % (kind, raw[:60]))
            if tok in value:
                token_in.append(name.decode("latin-1")[:24])
    return reports, errors, leaks, token_in


def exchange(addr, port, pieces, pause, responses, timeout, hold=None):
    """Send the pieces, read the answers; returns a list of statuses (int,
    or 'timeout', 'closed', 'reset'). @hold(sock) runs after the first piece."""
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    out = []
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            s.connect((addr, port))
            for i, p in enumerate(pieces):
                if i == 1 and hold:
                    hold()
                elif i:
                    time.sleep(pause)
                s.sendall(p)
            r = Reader(s)
            for _ in range(responses):
                resp, complete = r.response()
                if not resp:
                    out.append("closed")
                    break
                status = resp.split(b" ", 2)[1:2]
                out.append(int(status[0]) if status and status[0].isdigit() else "nostatus")
                if not complete:
                    break
        except socket.timeout:
            out.append("timeout")
            # Reset, not close: a closed socket would go on resending the
            # unanswered bytes for a minute, and one resent while the
            # test detaches hdrstrip between hooks reaches the origin
            # unguarded (seen once: smuggle-two-cl in the log scan).
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except (ConnectionResetError, BrokenPipeError):
            out.append("reset")
    return out


def flood(addr, port, n, host, timeout):
    """@n connections open at once, a request on each: evicts older flows
    from a small flow table (--flows), as an attacker would. The kernel's
    LRU is not strict (an entry looked up lately survives a pass, and one
    in another CPU's pending list is taken last), so even 400 connections
    for 64 entries left a case's state in place about once in ten runs:
    forget_flows() finishes the job."""
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(fam, socket.SOCK_STREAM)
            socks.append(s)
            s.settimeout(timeout)
            s.connect((addr, port))
            s.sendall(req(host, [b"X-Flood: 1"], target=b"/flood"))
        for s in socks:
            Reader(s).response()
    finally:
        for s in socks:
            s.close()


def forget_flows(map_id):
    """Delete every entry of the flow table (map @map_id) that the flood
    left: the rest of the request then meets no state, every time."""
    for _ in range(5):
        out = subprocess.run(["bpftool", "-j", "map", "dump", "id", str(map_id)],
                             check=True, capture_output=True).stdout
        keys = [e["key"] for e in json.loads(out or b"[]")]
        if not keys:
            return
        # One bpftool for all; it stops at an entry gone meanwhile, so
        # dump and delete again until the table is empty.
        cmds = "".join("map delete id %d key hex %s\n" % (map_id, " ".join(k[2:] for k in key))
                       for key in keys)
        subprocess.run(["bpftool", "batch", "file", "-"], input=cmds.encode(),
                       capture_output=True)
    sys.exit("bypass: the flow table (map %d) does not empty" % map_id)


def log_size(path):
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0


def log_since(path, off):
    with open(path, "rb") as f:
        f.seek(off)
        return f.read().decode("latin-1")


def run(a):
    rules, fold = read_list(a.list)
    host = ("[%s]" % a.addr if ":" in a.addr else a.addr).encode()
    cases = [c for c in build_cases(host) if not a.case or c.cid in a.case]
    origins = []
    for o in a.origin:
        name, port, log = o.split(":", 2)
        origins.append((name, int(port), log))
    control = req(host, [b"X-Keep: control"], target=b"/control")
    results = []
    for c in cases:
        tok = token(c.cid)
        for name, port, log in origins:
            off = log_size(log)
            hold = None
            if c.evict:
                def hold():
                    flood(a.addr, a.flood_port, a.flood, host, a.timeout)
                    if a.flows_map:
                        forget_flows(a.flows_map)
            timeout = 1.0 if c.expect == "drop" else a.timeout
            got = exchange(a.addr, port, c.pieces, c.pause, c.responses, timeout, hold)
            ctl = exchange(a.addr, port, [control], 0, 1, a.timeout)
            text = log_since(log, off)
            reports, errors, leaks, token_in = examine(text, rules, fold, tok)
            results.append({"phase": a.phase, "case": c.cid, "what": c.what,
                            "expect": c.expect, "origin": name, "status": got,
                            "control": ctl[0], "reports": reports, "refused": errors,
                            "leaks": leaks, "token_in": token_in,
                            "targets": targets_of(text)})
    with open(a.out, "w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    print("bypass: %s: %d cases x %d origins sent" % (a.phase, len(cases), len(origins)))
    return 0


def verdict(r):
    """Problems with one result of a guarded phase (empty: fine)."""
    bad = []
    if r["leaks"]:
        bad.append("LEAK " + "; ".join(r["leaks"]))
    if r["control"] != 200:
        bad.append("control request got %s" % r["control"])
    if r["expect"] == "ok" and any(s != 200 for s in r["status"]):
        bad.append("valid request got %s" % r["status"])
    if r["expect"] == "drop" and r["phase"] == "receive":
        # Origin mode ends the connection at the segment it drops: what the
        # application had of it before stays had (Python's parser, woken
        # with nothing, reads it as a request of its own), nothing from
        # there on reaches it: not the request smuggled after the body.
        if any("/smuggled" in t for t in r.get("targets", [])):
            bad.append("the request smuggled after the drop reached the application")
    elif r["expect"] == "drop" and r["reports"] > 0:
        bad.append("a request hdrstrip must drop reached the application")
    return bad


def judge(a):
    rows = []
    for path in a.results:
        with open(path) as f:
            rows += [json.loads(l) for l in f if l.strip()]
    phases = list(dict.fromkeys(r["phase"] for r in rows))
    by = {(r["case"], r["origin"], r["phase"]): r for r in rows}
    cases = list(dict.fromkeys(r["case"] for r in rows))
    origins = list(dict.fromkeys(r["origin"] for r in rows))
    what = {r["case"]: (r["what"], r["expect"]) for r in rows}

    def cell(r):
        st = "/".join(str(s) for s in r["status"])
        s = "%s r%d" % (st, r["reports"])
        if r["leaks"]:
            s += " LEAK"
        elif r["token_in"]:
            s += " val@" + ",".join(sorted(set(r["token_in"])))[:20]
        return s

    failures = []
    w = 26
    print("bypass: per case and origin, for each phase: status(es) (nostatus: an answer")
    print("without a status line), r<N>: requests the application got; LEAK: it got an")
    print("internal name; val@NAME: the internal value arrived under another name.")
    print("Phase 'open' runs without hdrstrip.")
    print("%-22s %-4s %-8s " % ("case", "exp", "phase") +
          " ".join("%-*s" % (w, o) for o in origins))
    for c in cases:
        for p in phases:
            cells, bad_here = [], []
            for o in origins:
                r = by.get((c, o, p))
                if not r:
                    cells.append("%-*s" % (w, "-"))
                    continue
                cells.append("%-*s" % (w, cell(r)[:w]))
                if p != "open":
                    bad_here += ["%s/%s/%s: %s" % (c, p, o, b) for b in verdict(r)]
            print("%-22s %-4s %-8s " % (c[:22], what[c][1], p) + " ".join(cells))
            failures += bad_here
    for c in cases:
        print("  %-22s %s" % (c, what[c][0]))
    if failures:
        print("bypass: FAILED:")
        for f in failures:
            print("  " + f)
        return 1
    print("bypass: no internal name reached an application; valid requests answered")
    return 0


def scan(a):
    """Every report in whole server logs: no internal name anywhere."""
    rules, fold = read_list(a.list)
    bad = 0
    for path in a.logs:
        with open(path, "rb") as f:
            reports, errors, leaks, _ = examine(f.read().decode("latin-1"), rules, fold, b"\0\0")
        print("bypass: %s: %d requests reached the application, %d refused, %d internal names"
              % (os.path.basename(path), reports, errors, len(leaks)))
        for l in leaks:
            print("  LEAK " + l)
        bad |= bool(leaks)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("addr")
    r.add_argument("--list", required=True)
    r.add_argument("--origin", action="append", required=True, help="NAME:PORT:LOGFILE")
    r.add_argument("--phase", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--case", action="append", default=[])
    r.add_argument("--timeout", type=float, default=2.0)
    r.add_argument("--flood", type=int, default=400)
    r.add_argument("--flood-port", type=int, default=80)
    r.add_argument("--flows-map", type=int, default=0,
                   help="id of hdrstrip's flow table: emptied after each flood")
    j = sub.add_parser("judge")
    j.add_argument("--list", required=True)
    j.add_argument("results", nargs="+")
    sc = sub.add_parser("scan")
    sc.add_argument("--list", required=True)
    sc.add_argument("logs", nargs="+")
    sub.add_parser("cases")
    a = ap.parse_args()
    if a.cmd == "run":
        return run(a)
    if a.cmd == "judge":
        return judge(a)
    if a.cmd == "scan":
        return scan(a)
    for c in build_cases(b"HOST"):
        print("%-22s %-4s %d piece(s)  %s" % (c.cid, c.expect, len(c.pieces), c.what))
    return 0


if __name__ == "__main__":
    sys.exit(main())
