#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Cases of the normalisation suite (test_normalize.sh, issue 14).

    normalize.py run --dev DEV --dst-mac MAC --hook HOOK --group GROUP
                     --list LIST --origin NAME:PORT:LOG... --out RESULTS
                     [--stats-ns NS --stats-dev DEV] [--flows-map ID]
                     [--case ID...]
    normalize.py judge RESULTS...
    normalize.py cases

Every case speaks TCP itself through rawtcp.py (a userspace client on a
packet socket, from an address the client namespace does not own) to one
origin: it shapes segments the way an attacker or an unusual but honest
sender would (urgent pointer, overlapping retransmissions, bad checksums,
RST and SYN the receiver ignores, data in the SYN, reordering, lost flow
state, oversized frames), or sends request lines and field lines that some
parser reads differently. Then it checks:
  - no application got an internal field name under any spelling it
    accepts (bypass.py's check of the origin's log, with the case's list);
  - for benign parts, the application got exactly the bytes it should
    (check_report.py's field-line comparison with the expected masks, and
    the body's SHA-256), and TCP got every byte through (retransmitting as
    TCP would when hdrstrip dropped a segment);
  - hdrstrip's counters moved as the case says ('hdrstrip stats --json'
    before and after; a counter the build does not have is reported as
    absent, and the case fails).

'judge' prints one table, case by hook, and the reason of every failure;
it exits 1 when any case failed.
"""
import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_report  # noqa: E402
import json_counters  # noqa: E402
import rawtcp  # noqa: E402
from client import Reader  # noqa: E402
from bypass import examine, log_size  # noqa: E402

SRC4 = "10.199.0.77"  # on the veth's subnet, owned by nobody
SRC6 = "fd00:199::77"
SRC_MAC = "02:00:00:00:00:77"
NAME = b"X-Internal-Auth"
ACK_WAIT = 1.0  # for a segment the server must acknowledge
DROP_WAIT = 0.3  # for one it must not (veth: an ACK takes well under 1 ms)

ALL = ("node", "node-insecure", "nginx", "python")
# Class 13's origins speak HTTP/2 without TLS (h2c with prior knowledge);
# class 14's include Python's SimpleHTTPRequestHandler, which never reads a
# request's body.
H2C = ("node-h2c", "nginx-h2c")
WITH_SIMPLE = ALL + ("python-simple",)
# The TCP-level classes (1-7, 12) do not depend on how a parser reads the
# bytes that arrive: one strict and one liberal origin run them. The
# HTTP-level ones (8-11) run at every origin.
TCP_ORIGINS = ("node", "python")


class Case:
    """@expect_leak: the application must get the internal field (what the
    README says a policy lets through unscanned), not the reverse."""

    def __init__(self, cid, cls, what, fn, group="main", origins=None, counters=None, fam=4,
                 hooks=None, expect_leak=False):
        if origins is None:
            origins = ALL if 8 <= cls <= 11 or cls == 15 else TCP_ORIGINS
        self.cid, self.cls, self.what, self.fn = cid, cls, what, fn
        self.group, self.origins, self.counters, self.fam = group, origins, counters or {}, fam
        self.hooks = hooks  # None: every hook
        self.expect_leak = expect_leak


CASES = []


def case(cid, cls, what, **kw):
    def reg(fn):
        CASES.append(Case(cid, cls, what, fn, **kw))
        return fn
    return reg


def req(host, fields, target=b"/n", method=b"GET", body=b"", eol=b"\r\n"):
    head = method + b" " + target + b" HTTP/1.1" + eol + b"Host: " + host + eol
    return head + b"".join(f + eol for f in fields) + eol + body


class Trial:
    """One case against one origin: connections, expectations, problems."""

    def __init__(self, a, case, origin, port, link):
        self.a, self.case, self.origin, self.port, self.link = a, case, origin, port, link
        self.fam = case.fam
        self.dst = a.dst6 if self.fam == 6 else a.dst4
        self.host = ("[%s]" % self.dst if self.fam == 6 else self.dst).encode()
        self.tok = b"tok-" + case.cid.encode() + b"-q7"
        self.expected = None  # requests as the application must get them
        self.want_reports = None  # how many requests the application must take
        self.problems, self.notes = [], []
        self.conns = []
        self.lost = False  # bytes that had to pass never got through

    def internal(self, name=NAME):
        return name + b": " + self.tok

    def conn(self, **kw):
        src = SRC6 if self.fam == 6 else SRC4
        c = rawtcp.Conn(self.link, src, self.dst, random.randrange(20000, 60000), self.port)
        self.conns.append(c)
        if not c.connect(**kw):
            self.problem("no SYN-ACK")
            return None
        return c

    def problem(self, msg):
        self.problems.append(msg)

    def note(self, msg):
        self.notes.append(msg)

    def must_ack(self, c, ok, what):
        """A segment that must pass: when the server did not acknowledge
        it, retransmit as TCP would; a problem if even that fails."""
        if ok:
            return True
        self.note("%s: not acknowledged at first" % what)
        if c.resend(tries=4, timeout=0.5):
            return True
        self.problem("%s: never acknowledged, even resent (DROP)" % what)
        self.lost = True
        return False

    def answers(self, c, n, timeout=3.0):
        """Wait for @n answers (not long once bytes were lost). The wait
        ends at the n-th answer: a long one costs nothing on a quiet
        machine and keeps a busy one (CI, 2 shared cores) from failing."""
        got = c.responses(n, DROP_WAIT if self.lost else timeout)
        if len(got) < n:
            self.note("%d of %d answers%s%s" % (len(got), n, ", reset" if c.reset else "",
                                               ", FIN" if c.fin else ""))
        return got

    def expect(self, *requests):
        self.expected = list(requests)

    def close(self):
        for c in self.conns:
            c.rst()


# --- class 1: urgent data ---------------------------------------------------

@case("urg-name", 1, "URG with the urgent byte inside a field name",
      counters={"urgent_cleared": 1})
def urg_name(t):
    c = t.conn()
    if not c:
        return
    head = b"GET /urg HTTP/1.1\r\nHost: " + t.host + b"\r\n"
    t.must_ack(c, c.send(head), "head")
    seg = b"X-Internal" + b"Z" + b"-Auth: " + t.tok + b"\r\nX-Keep: k\r\n\r\n"
    # BSD urgent pointer (Linux's default): one past the urgent byte.
    t.must_ack(c, c.send(seg, urg=seg.index(b"Z") + 1), "the urgent segment")
    t.answers(c, 1)
    t.expect(head + b"X-InternalZ-Auth: " + t.tok + b"\r\nX-Keep: k\r\n\r\n")


@case("urg-ahead", 1, "URG in a benign segment, the urgent byte in the next one",
      counters={"urgent_cleared": 1})
def urg_ahead(t):
    c = t.conn()
    if not c:
        return
    head = b"GET /urg HTTP/1.1\r\nHost: " + t.host + b"\r\n"
    t.must_ack(c, c.send(head), "head")
    first = b"X-Keep: kk\r\n"
    second = b"X-Internal" + b"Z" + b"-Auth: " + t.tok + b"\r\n\r\n"
    urg = len(first) + second.index(b"Z") + 1
    t.must_ack(c, c.send(first, urg=urg), "the segment with the urgent pointer")
    t.must_ack(c, c.send(second), "the segment holding the urgent byte")
    t.answers(c, 1)
    t.expect(head + first + b"X-InternalZ-Auth: " + t.tok + b"\r\n\r\n")


@case("urg-drop", 1, "URG inside a name, attached with --urgent drop: dropped",
      group="urgent-drop", counters={"urgent_cleared": 1, "packets_dropped": 1})
def urg_drop(t):
    c = t.conn()
    if not c:
        return
    head = b"GET /urg HTTP/1.1\r\nHost: " + t.host + b"\r\n"
    t.must_ack(c, c.send(head), "head")
    seg = b"X-Internal" + b"Z" + b"-Auth: " + t.tok + b"\r\n\r\n"
    if c.send(seg, urg=seg.index(b"Z") + 1, timeout=DROP_WAIT):
        t.problem("the urgent segment was acknowledged (not dropped)")
    c.responses(1, DROP_WAIT)


# --- class 2: retransmissions -----------------------------------------------

@case("rtx-mismatch", 2, "a retransmission whose old bytes differ, new tail holds a field",
      counters={"retransmit_mismatch": 1})
def rtx_mismatch(t):
    c = t.conn()
    if not c:
        return
    head = b"GET /rtx HTTP/1.1\r\nHost: " + t.host + b"\r\n"
    t.must_ack(c, c.send(head), "head")
    at = c.off_of(c.snd_nxt)
    t.must_ack(c, c.send(b"X-Foo: a\r\n"), "first copy")
    # Same start, same length over the old bytes, other bytes: Linux keeps
    # its first copy and takes the tail as a new line.
    evil = b"X-Foo: aaa" + t.internal() + b"\r\n\r\n"
    if c.send(evil, off=at, timeout=DROP_WAIT, record=False):
        t.problem("the overlapping segment was acknowledged (not dropped)")
    # The honest continuation: the request as the receiver holds it.
    c.snd_nxt = c.seq_at(at + 10)
    t.must_ack(c, c.send(b"X-Keep: k\r\n\r\n"), "the honest rest")
    t.answers(c, 1)
    t.expect(head + b"X-Foo: a\r\nX-Keep: k\r\n\r\n")


@case("rtx-same", 2, "identical retransmissions: one alone, one coalesced with new bytes",
      counters={"retransmit_mismatch": 0, "packets_dropped": 0})
def rtx_same(t):
    c = t.conn()
    if not c:
        return
    head = b"GET /rtx HTTP/1.1\r\nHost: " + t.host + b"\r\n"
    t.must_ack(c, c.send(head), "head")
    at = c.off_of(c.snd_nxt)
    t.must_ack(c, c.send(b"X-A: 1\r\n"), "X-A")
    c.segment(b"X-A: 1\r\n", off=at)
    c.quiet(0.02)
    at = c.off_of(c.snd_nxt)
    t.must_ack(c, c.send(b"X-B: 2\r\n"), "X-B")
    t.must_ack(c, c.send(b"X-B: 2\r\nX-C: 3\r\n\r\n", off=at), "X-B again with X-C")
    t.answers(c, 1)
    t.expect(head + b"X-A: 1\r\nX-B: 2\r\nX-C: 3\r\n\r\n")


@case("rtx-same-masked", 2, "identical retransmission of a masked line, coalesced",
      counters={"retransmit_mismatch": 0, "packets_dropped": 0})
def rtx_same_masked(t):
    c = t.conn()
    if not c:
        return
    head = b"GET /rtx HTTP/1.1\r\nHost: " + t.host + b"\r\n"
    t.must_ack(c, c.send(head), "head")
    at = c.off_of(c.snd_nxt)
    line = t.internal() + b"\r\n"
    t.must_ack(c, c.send(line), "the internal line")
    t.must_ack(c, c.send(line + b"X-C: 3\r\n\r\n", off=at), "the same again with X-C")
    t.answers(c, 1)
    t.expect(head + line + b"X-C: 3\r\n\r\n")


@case("rtx-drop-other", 2, "a drop rule's segment, its exact copy, then another segment of the "
      "same length at the same place with a masked field: only the copy goes uncounted",
      counters={"packets_dropped": 1, "retransmits_dropped": 1, "headers_matched": 2})
def rtx_drop_other(t):
    c = t.conn()
    if not c:
        return
    at = c.off_of(c.snd_nxt)
    keep = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/other")
    # The drop rule's request, padded to the length of the other one.
    kill = b"X-Kill-Switch: " + t.tok
    pad = len(keep) - len(req(t.host, [kill, b"X-Keep: "], target=b"/other"))
    drop = req(t.host, [kill, b"X-Keep: " + b"k" * pad], target=b"/other")
    assert len(drop) == len(keep), (len(drop), len(keep))
    if c.send(drop, timeout=DROP_WAIT, record=False):
        t.problem("the drop rule's segment was acknowledged (not dropped)")
    # Its retransmission, as TCP sends it: dropped again, counted apart.
    if c.send(drop, off=at, timeout=DROP_WAIT, record=False):
        t.problem("the drop rule's retransmission was acknowledged (not dropped)")
    # Other bytes at that place: a request of its own, counted and masked.
    c.snd_nxt = c.seq_at(at)
    t.must_ack(c, c.send(keep), "the other request")
    t.answers(c, 1)
    t.expect(keep)


@case("rtx-drop-variant", 2, "a drop rule's segment, then another one of the same length at the "
      "same place that a drop rule drops too but with a masked field before it: counted, not a copy",
      counters={"packets_dropped": 2, "retransmits_dropped": 0, "headers_matched": 4})
def rtx_drop_variant(t):
    c = t.conn()
    if not c:
        return
    at = c.off_of(c.snd_nxt)
    kill = b"X-Kill-Switch: " + t.tok
    keep = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/variant")
    variant = req(t.host, [t.internal(), kill], target=b"/variant")
    pad = len(variant) - len(req(t.host, [kill, b"X-Keep: "], target=b"/variant"))
    drop = req(t.host, [kill, b"X-Keep: " + b"k" * pad], target=b"/variant")
    assert len(drop) == len(variant), (len(drop), len(variant))
    if c.send(drop, timeout=DROP_WAIT, record=False):
        t.problem("the drop rule's segment was acknowledged (not dropped)")
    # Same place, same length, dropped by the same rule: but another field
    # matched first, so not a copy (its hits and events are not hidden).
    if c.send(variant, off=at, timeout=DROP_WAIT, record=False):
        t.problem("the variant was acknowledged (not dropped)")
    c.snd_nxt = c.seq_at(at)
    t.must_ack(c, c.send(keep), "the request after them")
    t.answers(c, 1)
    t.expect(keep)


@case("rtx-old", 2, "a retransmission from 20 segments back (past the 16 checkpoints), with "
      "new bytes: dropped, not rewritten", counters={"retransmit_unverified": 1})
def rtx_old(t):
    c = t.conn()
    if not c:
        return
    head = b"GET /rtx HTTP/1.1\r\nHost: " + t.host + b"\r\n"
    t.must_ack(c, c.send(head), "head")
    at = c.off_of(c.snd_nxt)
    lines = [b"X-S%d: v%d\r\n" % (i, i) for i in range(1, 20)] + [b"X-S20: vvv"]
    for i, l in enumerate(lines):
        t.must_ack(c, c.send(l), "segment %d" % (i + 1))
    # TCP may resend everything since segment 1 in one segment, with the
    # next bytes: a benign line that begins in the old bytes.
    old = b"".join(lines)
    if not c.send(old + b"www\r\nX-New: n\r\n\r\n", off=at):
        t.note("the old retransmission was not acknowledged: TCP resends")
        t.must_ack(c, False, "the new bytes")
    t.answers(c, 1)
    t.expect(head + old + b"www\r\nX-New: n\r\n\r\n")


@case("rtx-recut", 12, "a retransmission cut elsewhere (starts mid-segment), same bytes",
      counters={"retransmit_mismatch": 0})
def rtx_recut(t):
    c = t.conn()
    if not c:
        return
    first = b"GET /recut HTTP/1.1\r\nHost: " + t.host + b"\r\nX-Benign: aaaa"
    t.must_ack(c, c.send(first), "first segment")
    at = first.index(b"X-Benign")
    t.must_ack(c, c.send(b"X-Benign: aaaabbbb\r\nX-Keep: k\r\n\r\n", off=at),
               "the retransmission with new bytes")
    t.answers(c, 1)
    t.expect(first + b"bbbb\r\nX-Keep: k\r\n\r\n")


@case("reorder-body", 2, "a body's second half with the next request, before the first half")
def reorder_body(t):
    c = t.conn()
    if not c:
        return
    body = b"line1\r\nX-Benign: body\r\nline3 line3 line3\r\n"
    r1 = req(t.host, [b"Content-Length: %d" % len(body)], target=b"/p1", method=b"POST")
    r2 = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/p2")
    t.must_ack(c, c.send(r1), "the first request's head")
    at = c.off_of(c.snd_nxt)
    c.segment(body[20:] + r2, off=at + 20)  # ahead of the gap: the receiver queues it
    c.quiet(0.02)
    c.segment(body[:20], off=at)
    t.must_ack(c, c.wait_ack(c.snd_max), "both halves")
    t.answers(c, 2)
    t.expect(r1 + body, r2)


def send_1_3_2(t, c, r, a, b):
    """@r in three segments, [:a], [b:] and [a:b], sent in that order: the
    second is ahead of the gap the third fills. Then the answer."""
    t.must_ack(c, c.send(r[:a]), "segment 1")
    c.segment(r[b:], off=b)
    c.quiet(0.02)
    c.segment(r[a:b], off=a)
    t.must_ack(c, c.wait_ack(c.snd_max), "segments 2 and 3")
    t.answers(c, 1)


@case("reorder-head", 12, "a header block in three segments sent 1, 3, 2")
def reorder_head(t):
    c = t.conn()
    if not c:
        return
    r = req(t.host, [b"X-One: 1", t.internal(), b"X-Three: 3"], target=b"/ooo")
    send_1_3_2(t, c, r, r.index(b"X-One"), r.index(b"X-Three"))
    t.expect(r)


# Under --on-error pass (group on-error-pass): a segment ahead of a gap in
# a header block is not refused but scanned line by line; the internal
# field it holds whole is masked in it, and the application gets the
# request masked once the gap is filled.
@case("pass-ahead-head", 12, "--on-error pass: a header segment ahead of a gap, masked line by line",
      group="on-error-pass", counters={"out_of_order": (">=", 1), "headers_masked": (">=", 1)})
def pass_ahead_head(t):
    reorder_head(t)


@case("pass-ahead-split", 12, "--on-error pass: an internal name cut at the gap's edge",
      group="on-error-pass", counters={"out_of_order": (">=", 1)})
def pass_ahead_split(t):
    """The segment ahead of the gap starts in the middle of the internal
    name: scanned line by line, its first bytes are no line's start and
    pass. The segment that fills the gap ends inside the name, which it
    rewrites with the filler's first bytes (a name cut at a segment's end):
    the application gets "y-hdrs" + "rnal-Auth: <value>", a name no parser
    reads as the listed one, with its value (README, --on-error pass)."""
    c = t.conn()
    if not c:
        return
    r = req(t.host, [b"X-One: 1", t.internal(), b"X-Three: 3"], target=b"/ooo-split")
    a = r.index(NAME)
    cut = a + 6
    send_1_3_2(t, c, r, a, cut)
    t.expect(r[:a] + check_report.FILL.encode()[:cut - a] + r[cut:])


@case("pass-ahead-other-framing", 12, "--on-error pass: a segment ahead of a gap with other "
      "framing than the copy sent in order after it: the stack reads the first, the rest of the "
      "connection is checked line by line", group="on-error-pass", origins=ALL,
      counters={"out_of_order": (">=", 1), "headers_masked": (">=", 1)})
def pass_ahead_other_framing(t):
    """The copy hdrstrip scans in order says Content-Length: the internal
    field after the empty line is body. The segment ahead of the gap holds
    a benign field of the same length in that place, and Linux keeps the
    bytes it queued: the origin reads no Content-Length and no empty line
    there, so the internal field is a header. hdrstrip checks the
    connection line by line from the gap on, and masks it."""
    c = t.conn()
    if not c:
        return
    head = b"POST /ooo-frame HTTP/1.1\r\nHost: " + t.host + b"\r\n"
    body = t.internal() + b"\r\n\r\n"
    framing = b"Content-Length: %d\r\n\r\n" % len(body)
    pad = b"X-Pad: " + b"p" * (len(framing) - 9) + b"\r\n"
    at = len(head)
    c.segment(pad, off=at)  # ahead of the gap: the receiver queues it
    c.quiet(0.02)
    c.segment(head, off=0)  # fills the gap: the stack reads head + pad
    c.quiet(0.02)
    c.segment(framing + body, off=at)  # in order for hdrstrip; the stack takes the body
    t.must_ack(c, c.wait_ack(c.snd_max), "the three segments")
    t.answers(c, 1)
    t.expect(head + pad + body)


@case("pass-chunk-lf-end", 12, "--on-error pass: chunk data ended by a bare LF, then a request "
      "with an internal field: the rest of the connection line by line, the field masked",
      group="on-error-pass", origins=ALL,
      counters={"framing_conflict": (">=", 1), "headers_masked": (">=", 1)})
def pass_chunk_lf_end(t):
    if chunk_lf_end(t, ACK_WAIT) is False:
        t.problem("the segment was not acknowledged (dropped under --on-error pass)")


# --- class 3: segments the receiver discards ----------------------------------

def discarded_framing(t, **bad):
    """A segment the kernel discards carries a Content-Length that would
    make the next request a body; then the real segment of the same length
    at the same place, a complete request, and a request with an internal
    field after it."""
    c = t.conn()
    if not c:
        return
    r2 = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/second")
    fake = req(t.host, [b"Content-Length: %d" % len(r2)], target=b"/fake", method=b"POST")
    r1 = req(t.host, [b"X-Pad: " + b"p" * (len(fake) - len(req(t.host, [b"X-Pad: "],
                                                                 target=b"/first")))],
             target=b"/first")
    assert len(r1) == len(fake)
    if c.send(fake, timeout=DROP_WAIT, record=False, **bad):
        t.problem("the server took the bad segment (checksum offload on?)")
    c.snd_nxt = c.seq_at(0)
    t.must_ack(c, c.send(r1), "the real first request")
    t.must_ack(c, c.send(r2), "the request with an internal field")
    t.answers(c, 2)
    t.expect(r1, r2)


@case("badsum-tcp", 3, "bad TCP checksum on a segment with framing (IPv4)",
      counters={"bad_checksum": 1})
def badsum_tcp(t):
    discarded_framing(t, bad_tcp_csum=True)


@case("badsum-ip", 3, "bad IPv4 header checksum on a segment with framing",
      counters={"bad_checksum": 1})
def badsum_ip(t):
    discarded_framing(t, bad_ip_csum=True)


@case("badsum-tcp6", 3, "bad TCP checksum on a segment with framing (IPv6)",
      counters={"bad_checksum": 1}, fam=6)
def badsum_tcp6(t):
    discarded_framing(t, bad_tcp_csum=True)


# --- class 4: control segments the receiver ignores ---------------------------

def ignored_segment(t, c, seq, flags, want_challenge=True):
    """Send a bare control segment the server must ignore (@flags at
    @seq), and wait up to 0.5 s for its challenge ACK (RFC 5961). False,
    with a problem, when the server reset the connection instead; with
    @want_challenge, a note when no challenge ACK came."""
    dups = c.dup_acks
    c.raw(seq, flags)
    end = time.monotonic() + 0.5
    while c.dup_acks == dups and not c.reset and time.monotonic() < end:
        c.quiet(0.01)
    if c.reset:
        t.problem("the server reset the connection")
        return False
    if want_challenge and c.dup_acks == dups:
        t.note("no challenge ACK seen")
    return True


def ignored_control(t, kind, where):
    c = t.conn()
    if not c:
        return
    if where == "head":
        head = b"GET /ctl HTTP/1.1\r\nHost: " + t.host + b"\r\n"
        t.must_ack(c, c.send(head), "head")
    else:
        r2 = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/second")
        body = req(t.host, [b"Content-Length: %d" % len(r2)], target=b"/fake")
        head = req(t.host, [b"Content-Length: %d" % len(body)], target=b"/first",
                   method=b"POST")
        t.must_ack(c, c.send(head), "the first request's head")
    if kind == "rst":
        # In the window, not the next byte: RFC 5961 challenge ACK.
        ok = ignored_segment(t, c, c.seq_at(c.off_of(c.snd_nxt) + 100), rawtcp.RST)
    else:
        ok = ignored_segment(t, c, c.seq_at(c.off_of(c.snd_nxt) - 1), rawtcp.SYN)
    if not ok:
        return
    if where == "head":
        rest = t.internal() + b"\r\nX-Keep: k\r\n\r\n"
        t.must_ack(c, c.send(rest), "the rest of the header block")
        t.answers(c, 1)
        t.expect(head + rest)
    else:
        t.must_ack(c, c.send(body + r2), "the body and the next request")
        t.answers(c, 2)
        t.expect(head + body, r2)


def close_after_lost(t, kind):
    """The segment with the framing (a Content-Length whose body is an
    internal field line) passes hdrstrip and is discarded by the server
    (its ACK acknowledges data never sent); the body and then a FIN after
    it, or a RST at the next byte (@kind), follow, and the server queues
    the body and ignores the RST (it is not at the byte it expects).
    hdrstrip must not forget the connection there: another copy of the
    lost segment, a benign field of the same length where the framing was,
    would make the queued body a header block. It is dropped as a
    mismatch; the real copy then completes the request, whose body the
    origin gets as sent."""
    c = t.conn()
    if not c:
        return
    head = b"POST /" + kind.encode() + b"-lost HTTP/1.1\r\nHost: " + t.host + b"\r\n"
    body = t.internal() + b"\r\n\r\n"
    framing = b"Content-Length: %d\r\n\r\n" % len(body)
    other = b"X-Pad: " + b"p" * (len(framing) - 9) + b"\r\n"
    t.must_ack(c, c.send(head), "the head")
    at = len(head)
    c.segment(framing, off=at, record=False, ack=(c.rcv_nxt + 100000) & 0xFFFFFFFF)
    c.quiet(0.02)
    c.segment(body, off=at + len(framing))  # queued: the server lacks the framing
    c.quiet(0.02)
    end = at + len(framing) + len(body)
    if kind == "fin":
        c.segment(b"", off=end, flags="FA")
    else:
        c.raw(c.seq_at(end), rawtcp.RST | rawtcp.ACK)
    c.quiet(0.02)
    c.segment(other, off=at, record=False)  # must be dropped
    c.quiet(0.05)
    c.segment(framing, off=at)
    t.must_ack(c, c.wait_ack(c.snd_max), "the framing, sent again as it was")
    t.answers(c, 1)
    t.expect(head + framing + body)


@case("fin-after-lost", 4, "a FIN at the next byte while the server lacks a segment hdrstrip "
      "passed, then that segment again with other bytes: the flow is kept and checks it",
      counters={"flows_closed": 1, "retransmit_mismatch": (">=", 1)})
def fin_after_lost(t):
    close_after_lost(t, "fin")


@case("rst-after-lost", 4, "a RST at the next byte while the server lacks a segment hdrstrip "
      "passed (the server ignores it), then that segment again with other bytes: the flow is "
      "kept and checks it", counters={"flows_closed": 1, "retransmit_mismatch": (">=", 1)})
def rst_after_lost(t):
    close_after_lost(t, "rst")


@case("rst-head", 4, "in-window RST (not the next byte) inside a header block",
      counters={"rst_ignored": 1})
def rst_head(t):
    ignored_control(t, "rst", "head")


@case("rst-body", 4, "in-window RST before a body that looks like a request with a length",
      counters={"rst_ignored": 1})
def rst_body(t):
    ignored_control(t, "rst", "body")


@case("syn-head", 4, "SYN inside the connection (challenge ACK) inside a header block",
      counters={"syn_in_flow": 1})
def syn_head(t):
    ignored_control(t, "syn", "head")


@case("syn-body", 4, "SYN inside the connection before a body that looks like a request",
      counters={"syn_in_flow": 1})
def syn_body(t):
    ignored_control(t, "syn", "body")


# --- class 16: link layers the stack takes off (issue 34) --------------------
# Linux takes off any number of priority tags (VID 0) without a VLAN device
# (__netif_receive_skb_core(): check_vlan_id), and delivers the request
# inside: hdrstrip reads up to eight tags; a deeper stack goes to the
# on-error policy (drop by default), so such a connection never opens.

def vlan_stack(n):
    tpids = (0x88A8, 0x8100, 0x8100)
    return [(tpids[i % len(tpids)], 0) for i in range(n)]


def vlan_request(t, n):
    c = rawtcp.Conn(t.link, SRC6 if t.fam == 6 else SRC4, t.dst, random.randrange(20000, 60000),
                    t.port)
    c.vlans = vlan_stack(n)
    t.conns.append(c)
    if not c.connect():
        t.problem("no SYN-ACK through %d VLAN tags" % n)
        return
    r = req(t.host, [b"X-Keep: 1", t.internal(), b"X-Keep: 2"])
    t.must_ack(c, c.send(r), "the request in %d VLAN tags" % n)
    t.answers(c, 1)
    t.expect(r)


@case("vlan-prio-3", 16, "three priority tags (802.1ad, 802.1Q, 802.1Q, VID 0) around a request",
      origins=ALL,
      counters={"headers_masked": (">=", 1)})
def vlan_prio_3(t):
    vlan_request(t, 3)


@case("vlan-prio-8", 16, "eight priority tags, the most hdrstrip reads", origins=ALL,
      counters={"headers_masked": (">=", 1)})
def vlan_prio_8(t):
    vlan_request(t, 8)


@case("vlan-prio-8-v6", 16, "eight priority tags around an IPv6 request",
      counters={"headers_masked": (">=", 1)}, fam=6)
def vlan_prio_8_v6(t):
    vlan_request(t, 8)


@case("vlan-prio-10", 16, "ten priority tags: more than read, dropped (on-error), never opened",
      counters={"vlan_too_deep": (">=", 1), "packets_dropped": (">=", 1)})
def vlan_prio_10(t):
    # (tc-ingress sees one tag fewer: the device or the stack moved the
    # outermost into the skb's metadata before the hook.)
    c = rawtcp.Conn(t.link, SRC4, t.dst, random.randrange(20000, 60000), t.port)
    c.vlans = vlan_stack(10)
    t.conns.append(c)
    if c.connect(timeout=DROP_WAIT):
        t.problem("a SYN in ten VLAN tags was answered: the frame passed")


# --- class 17: IP fragments ------------------------------------------------------
# The stack puts a datagram together before TCP reads it; the hooks read
# one frame at a time, and a fragment of TCP to an inspected port (its
# first, with the port, or a later one, without) cannot be scanned: the
# on-error policy drops it (the default), each counted in 'fragments'. TCP
# sends the bytes again; here, as a sender that stopped fragmenting would,
# in one frame, which is scanned. Origin mode reads the stream the stack
# put together: the request arrives masked from the fragments themselves.

TCP_HDR = 20  # rawtcp's data segments carry no TCP options


def fragmented_request(t, order, decoy=False):
    """A request with an internal field in one TCP segment, sent as three IP
    fragments cut inside the field's name and inside its value, in @order
    (indices of the three); with @decoy, another copy of the middle one,
    its part of the name turned to 'z's, right after it: it lies within
    the middle one, so Linux drops it and keeps the first copy
    (inet_frag_queue_insert(), RFC 5722 with erratum 3089)."""
    c = t.conn()
    if not c:
        return
    r = req(t.host, [b"X-Keep: 1", t.internal(), b"X-Keep: 2"], target=b"/frag")
    name = TCP_HDR + r.index(NAME)
    cut1 = (name + 8) // 8 * 8  # after the name's first byte, before its last
    cut2 = (TCP_HDR + r.index(t.tok) + 8) // 8 * 8
    assert name < cut1 < name + len(NAME) and cut2 < TCP_HDR + len(r)
    pieces = [(0, cut1), (cut1, cut2), (cut2, TCP_HDR + len(r))]
    sent = []
    for i in order:
        sent.append(pieces[i])
        if decoy and i == 1:
            mid = bytearray(r[cut1 - TCP_HDR:cut2 - TCP_HDR])
            mid[:name + len(NAME) - cut1] = b"z" * (name + len(NAME) - cut1)
            sent.append((cut1, cut2, bytes(mid)))
    inline = t.a.hook == "receive"
    ok = c.send(r, frags=sent, timeout=ACK_WAIT if inline else DROP_WAIT)
    if inline:
        t.must_ack(c, ok, "the fragments")
    elif ok:
        t.problem("the fragments were put together and acknowledged (not dropped)")
    else:
        # Not scanned, not delivered: TCP sends it again, in one frame.
        t.must_ack(c, c.resend(), "the segment sent again in one frame")
    t.answers(c, 1)
    t.expect(r)


@case("frag4-name", 17, "IPv4 fragments of a segment cut inside an internal name: dropped at the "
      "hooks (on-error), sent again whole and masked; origin mode: masked",
      counters={"fragments": 3})
def frag4_name(t):
    fragmented_request(t, (0, 1, 2))


@case("frag4-overlap", 17, "IPv4 fragments out of order (last first) with an overlapping copy "
      "of the middle one that turns the name's end to 'z's: the same",
      counters={"fragments": 4})
def frag4_overlap(t):
    fragmented_request(t, (2, 1, 0), decoy=True)


@case("frag6-name", 17, "IPv6 fragments (a Fragment header) of a segment cut inside an internal "
      "name: the same", counters={"fragments": 3}, fam=6)
def frag6_name(t):
    fragmented_request(t, (0, 1, 2))


# --- class 5: TCP Fast Open ---------------------------------------------------

@case("tfo-request", 5, "a whole request with an internal field in the SYN, then another")
def tfo_request(t):
    r1 = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/tfo1")
    r2 = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/tfo2")
    c = t.conn(syn_data=r1, tfo=True)
    if not c:
        return
    if not c.syn_data_acked():
        t.problem("the SYN-ACK did not take the SYN's data")
        t.must_ack(c, False, "the SYN's data")
    t.must_ack(c, c.send(r2), "the second request")
    t.answers(c, 2)
    t.expect(r1, r2)


@case("ack-data", 5, "the handshake's last ACK carries a request with an internal field")
def ack_data(t):
    r = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/ackdata")
    c = t.conn(ack_synack=False)
    if not c:
        return
    t.must_ack(c, c.send(r), "the ACK with the request")
    t.answers(c, 1)
    t.expect(r)


@case("tfo-split", 5, "the SYN carries a request's first line, the next segment the rest")
def tfo_split(t):
    r = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/tfo")
    cut = r.index(NAME)
    c = t.conn(syn_data=r[:cut], tfo=True)
    if not c:
        return
    if not c.syn_data_acked():
        t.problem("the SYN-ACK did not take the SYN's data")
        t.must_ack(c, False, "the SYN's data")
    t.must_ack(c, c.send(r[cut:]), "the rest")
    t.answers(c, 1)
    t.expect(r)


# --- class 6: flow state lost -------------------------------------------------

def forget_flows(a):
    out = subprocess.run(["bpftool", "-j", "map", "dump", "id", str(a.flows_map)],
                         check=True, capture_output=True).stdout
    keys = [e["key"] for e in json.loads(out or b"[]")]
    cmds = "".join("map delete id %d key hex %s\n" % (a.flows_map, " ".join(k[2:] for k in key))
                   for key in keys)
    if cmds:
        subprocess.run(["bpftool", "batch", "file", "-"], input=cmds.encode(),
                       capture_output=True)
    return len(keys)


def evicted_in_body(t, syn=False):
    """State lost inside a body that looks like a request with a length
    (the flow table emptied after the body's first bytes); with @syn, a SYN
    at the next byte then, which the server ignores. The rest of the body
    and a request with an internal field follow: both must arrive as sent."""
    c = t.conn()
    if not c:
        return
    r2 = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/second")
    fake = req(t.host, [b"Content-Length: %d" % len(r2)], target=b"/fake", method=b"POST")
    body = b"BODY-START\r\n" + fake
    r1 = req(t.host, [b"Content-Length: %d" % len(body)], target=b"/first", method=b"POST")
    t.must_ack(c, c.send(r1 + body[:12]), "the head and the body's first bytes")
    if not t.a.flows_map:
        t.problem("no flow table id (--flows-map)")
        return
    if forget_flows(t.a) == 0:
        t.note("the flow table was empty already")
    if syn and not ignored_segment(t, c, c.seq_at(c.off_of(c.snd_nxt) - 1), rawtcp.SYN,
                                   want_challenge=False):
        return
    t.must_ack(c, c.send(body[12:] + r2), "the rest of the body and the next request")
    t.answers(c, 2)
    t.expect(r1 + body, r2)


# The hooks' own flow table (origin mode keeps no state to lose).
TABLE_HOOKS = ("xdp", "tc-ingress", "tc-egress")


@case("evict-body", 6, "state lost inside a body that looks like a request with a length",
      counters={"untracked": (">=", 1)}, hooks=TABLE_HOOKS)
def evict_body(t):
    evicted_in_body(t)


@case("syn-evicted", 6, "state lost inside a body, then a SYN at the next byte (ignored by the "
      "server) before a body that looks like a request with a length",
      counters={"syn_in_flow": 1, "untracked": (">=", 1)},
      hooks=("xdp", "tc-ingress"))
def syn_evicted(t):
    # Where the receiving socket is local (XDP, TC ingress), hdrstrip asks
    # the stack whether it holds the connection: it does, so the SYN starts
    # nothing and the rest is checked line by line. (At TC egress, or for
    # routed traffic, no local socket answers: README, blind spots.)
    evicted_in_body(t, syn=True)


# --- class 7: frames larger than the scan window --------------------------------

@case("oversize", 7, "one 65,495-byte segment (MTU 65535), an internal field after byte 65,472",
      group="big", counters={"oversize": 1, "packets_dropped": 1})
def oversize(t):
    c = t.conn(mss=65495)
    if not c:
        return
    tail = NAME + b": t\r\n\r\n"
    head = b"POST /big HTTP/1.1\r\nHost: " + t.host + b"\r\nX-Pad: "
    pad = 65495 - len(tail) - len(head) - 2
    data = head + b"p" * pad + b"\r\n" + tail
    assert len(data) == 65495 and data.index(NAME) >= 65472
    if c.send(data, timeout=DROP_WAIT):
        t.problem("the oversized segment was acknowledged (not dropped)")
    c.responses(1, DROP_WAIT)


def body_in_one_segment(t, method):
    """@method /big with a body of some 65,500 bytes, its first 65,433 in one
    65,495-byte segment (past the 64 KiB scan window; the rest never sent).
    Returns whether it was acknowledged."""
    c = t.conn(mss=65495)
    if not c:
        return None
    head = b"%s /big HTTP/1.1\r\nHost: %s\r\nContent-Length: " % (method, t.host)
    n = 65495 - len(head) - len(b"65000\r\n\r\n")
    data = head + b"%d\r\n\r\n" % (n + 100) + b"b" * n
    assert len(data) == 65495
    ok = c.send(data, timeout=1.0 if method == b"POST" else DROP_WAIT)
    c.responses(1, 1.0 if ok else DROP_WAIT)
    return ok


@case("oversize-get-body", 14, "a GET whose body runs past the 64 KiB window in one segment: "
      "checked line by line, it cannot be scanned to its end: --on-error (dropped)",
      group="big", counters={"oversize": 1, "bodies_unframed": 1, "packets_dropped": 1})
def oversize_get_body(t):
    if body_in_one_segment(t, b"GET"):
        t.problem("the oversized segment was acknowledged (not dropped)")


@case("oversize-post-body", 14, "the same with POST: the body's rest past the window is body, "
      "passed", group="big", counters={"oversize": 0, "packets_dropped": 0})
def oversize_post_body(t):
    if not body_in_one_segment(t, b"POST"):
        t.problem("the segment was not acknowledged (DROP)")


# Driven by test_normalize.sh itself; it records the result ('record').
@case("xdp-mtu-attach", 7, "XDP attach at MTU 65535: succeeds, falling back to skb mode with a note",
      group="shell", origins=())
def xdp_mtu_attach(t):
    pass


class LargestFrame:
    """The largest frame on a device while the 'with' block runs (a packet
    socket on the client's device: a GSO packet shows whole, before the
    device cuts it)."""

    def __init__(self, dev):
        self.dev, self.size = dev, 0
        self.stop, self.th = threading.Event(), None

    def _sniff(self, s):
        while not self.stop.is_set():
            try:
                n = len(s.recv(1 << 18))
            except socket.timeout:
                continue
            self.size = max(self.size, n)
        s.close()

    def __enter__(self):
        # Bound before the block sends anything; room for a few frames of
        # BIG TCP's size.
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(rawtcp.ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.bind((self.dev, 0))
        s.settimeout(0.05)
        self.th = threading.Thread(target=self._sniff, args=(s,))
        self.th.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.th.join()

    def big(self):
        """A frame over 64 KiB (BIG TCP's IP length 0) left the client."""
        return self.size > 65535 + 14


def big_tcp(t):
    """A request of ~100 KB with an internal field near its end, from the
    client namespace's own TCP (GSO up to 185,000 bytes, MTU 65535, large
    windows: test_normalize.sh sets them): TCP sends it in packets over
    64 KiB, whose IP length field is 0 (IPv4) or whose payload length is 0
    (IPv6). A sniffer on the client's device notes the largest frame."""
    with LargestFrame(t.a.dev) as largest:
        out = subprocess.run([sys.executable, os.path.join(os.path.dirname(
            os.path.abspath(__file__)), "client.py"), t.dst, str(t.port), "-H", "@pad:95:1024",
            "-H", t.internal().decode(), "-H", "X-Keep: k", "--warmup", "3", "--warmup-body",
            "200000", "--sndbuf", "4194304", "--timeout", "3", "--path", "/bigtcp",
            # Bytes hdrstrip dropped (too big) would otherwise be resent by
            # the kernel after the case, into a later case's log.
            "--abort"],
            capture_output=True)
    t.note("client.py exit %d; largest frame %d bytes" % (out.returncode, largest.size))
    if b"no answer to a warm-up request" in out.stderr or b"(a warm-up request)" in out.stderr:
        # Warm-ups are benign: only the big request may go unanswered.
        t.problem("a warm-up request (a body past 64 KiB) got no answer (DROP)")
    if not largest.big():
        t.note("no frame over 64 KiB left the client (BIG TCP not in use, or dropped at egress)")


def big_tcp_body(t):
    """Benign BIG TCP (issue 34, class 9): requests whose bytes past the
    64 KiB window are all body, each ending in its body as a sender's write
    does, from the client namespace's own TCP (as big_tcp()): POSTs of
    100,000 bytes until one went in packets over 64 KiB (TCP sends no
    segment over half the largest window the server has shown, which grows
    as it receives; at most four), then a POST with an internal field in
    its head and a 150,000-byte body. The last piece of such a packet ends
    exactly where the body does: each request must be answered, the
    internal field masked, every body byte as sent."""
    body = bytes(range(256)) * (150000 // 256) + b"e" * (150000 % 256)
    # Content-Length first: nginx sends the length it read right after Host.
    big = req(t.host, [b"Content-Length: %d" % len(body), t.internal(), b"X-Keep: k"],
              target=b"/bigtcp-body", method=b"POST", body=body)
    sent = []
    s = socket.socket(socket.AF_INET6 if t.fam == 6 else socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4194304)
    s.settimeout(3.0)
    answered, largest = 0, LargestFrame(t.a.dev)
    try:
        with largest:
            s.connect((t.dst, t.port))
            reader = Reader(s)
            while True:
                warm = len(sent) < 4 and not largest.big()
                r = req(t.host, [b"Content-Length: 100000"], target=b"/warmup-%d" % len(sent),
                        method=b"POST", body=b"w" * 100000) if warm else big
                sent.append(r)
                s.sendall(r)
                _, complete = reader.response()
                if not complete:
                    break
                answered += 1
                if not warm:
                    break
    except OSError as e:  # a timeout too: a stalled connection
        t.note("%s after %d answers" % (type(e).__name__, answered))
    finally:
        # A reset: bytes hdrstrip dropped are not resent into a later case.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    t.expect(*sent)
    t.note("%d requests sent; largest frame %d bytes" % (len(sent), largest.size))
    if answered < len(sent) or big not in sent:
        t.problem("the connection stalled after %d answers, %d requests sent (%s) (DROP)" %
                  (answered, len(sent), "the last one the big one" if big in sent else
                   "the big one not yet"))
    if not largest.big():
        t.problem("no frame over 64 KiB left the client: BIG TCP not in use, nothing shown")


@case("bigtcp", 7, "BIG TCP (IPv4): a GSO packet over 64 KiB, IP length 0, an internal field "
      "after 64 KiB: parsed with its real length, the on-error policy", group="big",
      origins=("node",), counters={"oversize": (">=", 1)})
def bigtcp(t):
    big_tcp(t)


@case("bigtcp6", 7, "BIG TCP (IPv6): the same with payload length 0", group="big",
      origins=("node",), counters={"oversize": (">=", 1)}, fam=6)
def bigtcp6(t):
    big_tcp(t)


@case("bigtcp-body", 7, "BIG TCP (IPv4), benign: requests whose bytes past 64 KiB are body, "
      "ending with it (a packet's last piece ends with the body): answered, an internal field in "
      "the head masked", group="big", origins=("node", "nginx", "python"),
      counters={"oversize": 0, "packets_dropped": 0, "headers_masked": 1})
def bigtcp_body(t):
    big_tcp_body(t)


@case("bigtcp6-body", 7, "BIG TCP (IPv6), benign: the same with payload length 0", group="big",
      origins=("node", "nginx", "python"),
      counters={"oversize": 0, "packets_dropped": 0, "headers_masked": 1}, fam=6)
def bigtcp6_body(t):
    big_tcp_body(t)


# --- class 8: request lines some parsers accept --------------------------------

def after_request_line(t, line):
    c = t.conn()
    if not c:
        return
    r = line + b"\r\nHost: " + t.host + b"\r\n" + t.internal() + b"\r\nX-Keep: k\r\n\r\n"
    c.send(r)
    c.responses(1, 1.0)


@case("rl-0x85", 8, "byte 0x85 in the target (nginx takes it)")
def rl_85(t):
    after_request_line(t, b"GET /a\x85b HTTP/1.1")


@case("rl-0xa0", 8, "byte 0xa0 in the target (nginx takes it)")
def rl_a0(t):
    after_request_line(t, b"GET /a\xa0b HTTP/1.1")


@case("rl-long-method", 8, "a 40-byte method (nginx takes it)")
def rl_long_method(t):
    after_request_line(t, b"M" * 40 + b" /a HTTP/1.1")


@case("rl-cr", 8, "a CR between the method and the target (Python takes it)")
def rl_cr(t):
    after_request_line(t, b"GET\r/a HTTP/1.1")


# --- class 9: a listed name alone on a line ---------------------------------------

@case("bare-name", 9, "'X-Real-IP' alone on a line (nginx: a field with no value)")
def bare_name(t):
    c = t.conn()
    if not c:
        return
    c.send(req(t.host, [b"X-Real-IP", b"X-Keep: k"], target=b"/bare"))
    c.responses(1, 1.0)


@case("bare-drop", 9, "'X-Kill-Switch' (a drop rule) alone on a line: dropped",
      counters={"packets_dropped": (">=", 1)})
def bare_drop(t):
    c = t.conn()
    if not c:
        return
    if c.send(req(t.host, [b"X-Kill-Switch", b"X-Keep: k"], target=b"/bare"),
              timeout=DROP_WAIT):
        t.problem("the segment was acknowledged (not dropped)")
    c.responses(1, DROP_WAIT)


@case("ctl-value", 9, "control bytes (0x01, TAB, VT, FF, 0x1f) inside a long kept value, then "
      "a bare CR and an internal field: the field is found and masked",
      counters={"headers_masked": 1})
def ctl_value(t):
    c = t.conn()
    if not c:
        return
    # Every control byte falls in a different word of the value, so the
    # word search stops at each and the byte-wise step goes on from there.
    value = b"v" * 9 + b"\x01" + b"v" * 9 + b"\t" + b"v" * 9 + b"\x0b" + b"v" * 9 + b"\x0c" + \
        b"v" * 9 + b"\x1f" + b"v" * 12
    ok = c.send(req(t.host, [b"X-Ctl: " + value + b"\r" + t.internal(), b"X-Keep: k"],
                    target=b"/ctl"))
    c.responses(1, 1.0 if ok else DROP_WAIT)


# --- class 10: where the header block ends ----------------------------------------

def lf_cr(t, sep):
    c = t.conn()
    if not c:
        return
    r2 = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/second")
    hidden = b"X-Pad: " + b"p" * (len(r2) - 11) + b"\r\n\r\n"
    r1 = (b"POST /first HTTP/1.1\r\nHost: " + t.host + b"\r\nContent-Length: %d" % len(hidden)
          + sep + hidden)
    ok = c.send(r1 + r2)
    c.responses(2, 1.0 if ok else DROP_WAIT)


@case("lfcr-crlf", 10, "a field line, then CR and another byte: node-insecure ends the block")
def lfcr_crlf(t):
    lf_cr(t, b"\r\n\r")


@case("lfcr-lf", 10, "a field line ending with a bare LF, then CR and another byte")
def lfcr_lf(t):
    lf_cr(t, b"\n\r")


def chunk_lf_end(t, timeout):
    """A chunked body whose data ends in a bare LF, then, in the same
    segment, a request with an internal field. nginx and curl take the LF
    as the chunk's end and read that request next; Python's http.client
    skips any two bytes there. Returns whether the server acknowledged it."""
    c = t.conn()
    if not c:
        return None
    r2 = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/second")
    r1 = (b"POST /first HTTP/1.1\r\nHost: " + t.host + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
          b"5\r\nhello\n0\r\n\r\n")
    ok = c.send(r1 + r2, timeout=timeout)
    c.responses(2, 1.0 if ok else DROP_WAIT)
    return ok


@case("chunk-lf-end", 10, "chunk data ended by a bare LF, a request with an internal field "
      "after it: ambiguous framing, dropped (--on-error drop)",
      counters={"framing_conflict": (">=", 1), "packets_dropped": (">=", 1)})
def chunk_lf_end_drop(t):
    if chunk_lf_end(t, DROP_WAIT):
        t.problem("the segment was acknowledged (not dropped)")


# --- class 11: the filler name cut to fit ----------------------------------------

@case("short-x", 11, "'x' (listed, 1 byte) masked: the filler must not be 'x'", group="short")
def short_x(t):
    c = t.conn()
    if not c:
        return
    c.send(req(t.host, [b"x: " + t.tok, b"X-Keep: k"], target=b"/short"))
    c.responses(1, 1.0)


@case("short-x-dash", 11, "'x-' (listed, 2 bytes) masked: the filler must not be 'x-'",
      group="short")
def short_x_dash(t):
    c = t.conn()
    if not c:
        return
    c.send(req(t.host, [b"X-: " + t.tok, b"X-Keep: k"], target=b"/short"))
    c.responses(1, 1.0)


@case("short-x-split", 11, "'x' cut after its one byte, ':' in the next segment", group="short")
def short_x_split(t):
    c = t.conn()
    if not c:
        return
    r = req(t.host, [b"X-Keep: k", b"x: " + t.tok], target=b"/short")
    cut = r.index(b"x: ") + 1
    c.send(r[:cut])
    c.send(r[cut:])
    c.responses(1, 1.0)


# --- class 13: h2c with prior knowledge -------------------------------------------

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2_frame(typ, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([typ, flags]) + struct.pack(">I", stream) \
        + payload


def hpack_int(v, prefix):
    m = (1 << prefix) - 1
    if v < m:
        return bytes([v])
    out = [m]
    v -= m
    while v >= 128:
        out.append((v & 127) | 128)
        v >>= 7
    return bytes(out + [v])


def hpack_literal(name, value):
    """A literal field, not indexed, new name, no Huffman coding: the bytes
    of the name and value as they are (RFC 7541 6.2.2)."""
    return b"\0" + hpack_int(len(name), 7) + name + hpack_int(len(value), 7) + value


def h2c_request(host, fields, path=b"/h2"):
    """The preface, an empty SETTINGS frame and one HEADERS frame (GET, http,
    END_STREAM and END_HEADERS) with @fields as literals."""
    block = b"\x82\x86" + hpack_literal(b":path", path) + hpack_literal(b":authority", host)
    block += b"".join(hpack_literal(n, v) for n, v in fields)
    return H2_PREFACE + h2_frame(4, 0, 0, b"") + h2_frame(1, 0x05, 1, block)


def h2c_fields(t):
    return [(b"x-internal-auth", t.tok), (b"x-keep", b"k")]


@case("h2c-preface", 13, "h2c with prior knowledge: the preface, SETTINGS and a HEADERS frame "
      "with an internal field (an HPACK literal) in one segment: dropped (--on-error drop)",
      origins=H2C, counters={"h2c_preface": (">=", 1), "packets_dropped": (">=", 1)})
def h2c_preface(t):
    c = t.conn()
    if not c:
        return
    if c.send(h2c_request(t.host, h2c_fields(t)), timeout=DROP_WAIT):
        t.problem("the segment was acknowledged (not dropped)")
    c.quiet(DROP_WAIT)


@case("h2c-preface-cut", 13, "the preface cut after 'PRI * HTTP/' (passed: nothing shows yet), "
      "the rest of it with the frames in the next segment: that one dropped",
      origins=H2C, counters={"h2c_preface": (">=", 1), "packets_dropped": (">=", 1)})
def h2c_preface_cut(t):
    c = t.conn()
    if not c:
        return
    data = h2c_request(t.host, h2c_fields(t))
    cut = len(b"PRI * HTTP/")
    t.must_ack(c, c.send(data[:cut]), "the preface's first bytes")
    if c.send(data[cut:], timeout=DROP_WAIT):
        t.problem("the segment with the version's '2' was acknowledged (not dropped)")
    c.quiet(DROP_WAIT)


@case("h2c-pass", 13, "--on-error pass: the h2c connection goes through unscanned and counted "
      "(the origin reads its fields, as the README says of pass)", group="on-error-pass",
      origins=H2C, counters={"h2c_preface": 1, "non_http": (">=", 1)}, expect_leak=True)
def h2c_pass(t):
    c = t.conn()
    if not c:
        return
    t.must_ack(c, c.send(h2c_request(t.host, h2c_fields(t))), "the preface and frames")
    c.quiet(0.3)


# h2c by Upgrade (RFC 7540 3.2): an origin that upgrades as the RFC lets it
# (servers/h2origin.js in upgrade mode) reads HTTP/2 after its 101, whose
# HPACK fields no hook reads. The CLI's built-in rule masks HTTP2-Settings,
# without which the RFC forbids the upgrade: the origin answers in HTTP/1.1.
H2C_UPGRADE = ("node-h2c-upgrade",)


def h2c_upgrade_try(t):
    """The upgrade request; after a 101, the preface, SETTINGS and a HEADERS
    frame on stream 3 with an internal field (an HPACK literal). Returns
    the status line."""
    c = t.conn()
    if not c:
        return None
    r = req(t.host, [b"Connection: Upgrade, HTTP2-Settings", b"Upgrade: h2c",
                     b"HTTP2-Settings: AAMAAABkAAQAAP__", b"X-Keep: k"], target=b"/up")
    t.must_ack(c, c.send(r), "the upgrade request")
    end = time.monotonic() + 3.0
    while b"\r\n\r\n" not in c.rx and not c.reset and time.monotonic() < end:
        c.link.poll(0.05)
    status = bytes(c.rx).split(b"\r\n", 1)[0]
    t.note("answer: %r" % status[:40])
    if not status.startswith(b"HTTP/1.1 101"):
        return status
    block = b"\x82\x86" + hpack_literal(b":path", b"/h2") + hpack_literal(b":authority", t.host)
    block += hpack_literal(b"x-internal-auth", t.tok)
    t.must_ack(c, c.send(H2_PREFACE + h2_frame(4, 0, 0, b"") + h2_frame(1, 0x05, 3, block)),
               "the preface and frames after the 101")
    end = time.monotonic() + 3.0
    while t.tok not in c.rx and not c.reset and time.monotonic() < end:
        c.link.poll(0.05)
    return status


@case("h2c-upgrade", 13, "h2c by Upgrade to an origin that upgrades as RFC 7540 3.2 lets it: "
      "HTTP2-Settings masked by the built-in rule, so the origin answers in HTTP/1.1 (no 101) and "
      "never reads HTTP/2", origins=H2C_UPGRADE, counters={"headers_masked": 1})
def h2c_upgrade(t):
    t.want_reports = 1
    status = h2c_upgrade_try(t)
    if status is not None and not status.startswith(b"HTTP/1.1 200"):
        t.problem("the origin answered %r, not 200 in HTTP/1.1" % status[:40])


@case("h2c-upgrade-allowed", 13, "the same after an update to a list that says '@h2c-upgrade "
      "allow': the origin upgrades (101) and reads the internal field sent in HTTP/2 (the blind "
      "spot the built-in rule closes)", group="short", origins=H2C_UPGRADE, expect_leak=True)
def h2c_upgrade_allowed(t):
    t.want_reports = 2
    status = h2c_upgrade_try(t)
    if status is not None and not status.startswith(b"HTTP/1.1 101"):
        t.problem("the origin answered %r, not 101" % status[:40])


# --- class 14: a body on a method that defines no use for one -----------------------

def smuggled(t):
    """A request with an internal field, to be sent as another's body."""
    return req(t.host, [t.internal(), b"X-Keep: k"], target=b"/f.txt")


def body_then_last(t, method, chunked=False):
    """METHOD /f.txt with a body that is a request, then a last request, in
    one segment. SimpleHTTPRequestHandler never reads the body: it answers
    the request in it (three requests); node, nginx and the Python origin
    that reads its bodies skip it (two)."""
    c = t.conn()
    if not c:
        return
    body = smuggled(t)
    if chunked:
        fields, body = [b"Transfer-Encoding: chunked"], b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    else:
        fields = [b"Content-Length: %d" % len(body)]
    first = req(t.host, fields, target=b"/f.txt", method=method, body=body)
    last = req(t.host, [b"X-Keep: last", b"Connection: close"], target=b"/f.txt")
    t.must_ack(c, c.send(first + last), "the request with its body and the next one")
    c.quiet(0.5)
    if not chunked and method in (b"GET", b"HEAD"):
        t.want_reports = 3 if t.origin == "python-simple" else 2


@case("get-body-request", 14, "a GET whose Content-Length body is a request with an internal "
      "field: SimpleHTTPRequestHandler answers it, the others skip it; line by line, masked "
      "for both", origins=WITH_SIMPLE, counters={"bodies_unframed": 1, "headers_masked": 1})
def get_body_request(t):
    body_then_last(t, b"GET")


@case("head-body-request", 14, "the same with HEAD", origins=WITH_SIMPLE,
      counters={"bodies_unframed": 1, "headers_masked": 1})
def head_body_request(t):
    body_then_last(t, b"HEAD")


@case("get-chunked-request", 14, "a GET whose chunked body holds a request with an internal "
      "field: line by line, masked", origins=WITH_SIMPLE,
      counters={"bodies_unframed": 1, "headers_masked": 1})
def get_chunked_request(t):
    body_then_last(t, b"GET", chunked=True)


# --- class 15: a framing field after a line Python stops reading fields at --------

def odd_then_length(t, line, ok=False, timeout=DROP_WAIT):
    """POST /first with @line, then (@ok: before it) a Content-Length whose
    body is a request with an internal field. Python's header parser stops
    at @line, so it never sees the length and reads the body as its next
    request; nginx skips @line and reads the length. Returns whether the
    server acknowledged it."""
    c = t.conn()
    if not c:
        return None
    r2 = req(t.host, [t.internal(), b"X-Keep: k"], target=b"/second")
    length = b"Content-Length: %d\r\n" % len(r2)
    head = b"POST /first HTTP/1.1\r\nHost: " + t.host + b"\r\n"
    head += length + line + b"\r\n" if ok else line + b"\r\n" + length
    acked = c.send(head + b"\r\n" + r2, timeout=1.0 if ok else timeout)
    c.responses(2, 1.0 if acked else DROP_WAIT)
    return acked


ODD = {"odd-x80": b"X-F\x80oo: a", "odd-nocolon": b"NoColonAtAll",
       "odd-vt": b"\x0bX-Foo: a", "odd-space": b"X-Foo : a"}


def odd_case(cid, line):
    @case(cid, 15, "%r, then Content-Length: ambiguous framing, dropped (--on-error drop)"
          % line, counters={"framing_conflict": (">=", 1), "packets_dropped": (">=", 1)})
    def fn(t):
        if odd_then_length(t, line):
            t.problem("the segment was acknowledged (not dropped)")
    return fn


for _cid, _line in ODD.items():
    odd_case(_cid, _line)


@case("odd-after-length", 15, "Content-Length, then a line with a byte >= 0x80 in its name: "
      "every parser that takes the request reads the length (framed, passed)",
      counters={"framing_conflict": 0, "packets_dropped": 0})
def odd_after_length(t):
    if not odd_then_length(t, ODD["odd-x80"], ok=True):
        t.problem("the request was not acknowledged (DROP)")


@case("pass-odd-length", 15, "--on-error pass: a line Python stops at, then Content-Length: "
      "passed, line by line, the body's internal field masked for Python",
      group="on-error-pass", counters={"framing_conflict": (">=", 1)})
def pass_odd_length(t):
    if not odd_then_length(t, ODD["odd-x80"], timeout=1.0):
        t.problem("the request was not acknowledged under --on-error pass (DROP)")


# --- running ----------------------------------------------------------------------

def log_since(path, off):
    try:
        with open(path, "rb") as f:
            f.seek(off)
            return f.read().decode("latin-1")
    except FileNotFoundError:
        return ""


def read_counters(a):
    if a.stats_cgroup:
        out = subprocess.run([a.hdrstrip, "stats", "--cgroup", a.stats_cgroup, "--json"],
                             capture_output=True, check=True).stdout
        d = json.loads(out)[0]
        if "counters" in d and isinstance(d["counters"], dict):
            d = dict(d["counters"])
        return dict(json_counters.flatten(d))
    if not a.stats_ns:
        return {}
    out = subprocess.run(["nsenter", "--net=/run/netns/" + a.stats_ns, a.hdrstrip, "stats",
                          a.stats_dev, "--json"], capture_output=True, check=True).stdout
    d = json_counters.pick_dev(json.loads(out), a.stats_dev) or {}
    if "counters" in d and isinstance(d["counters"], dict):
        d = dict(d["counters"])
    return dict(json_counters.flatten(d))


def check_counters(case, before, after):
    got, bad = {}, []
    for k, want in case.counters.items():
        if k not in after:
            got[k] = None
            bad.append("counter %s absent" % k)
            continue
        d = after[k] - before.get(k, 0)
        got[k] = d
        if isinstance(want, tuple):
            if d < want[1]:
                bad.append("counter %s +%d, expected at least +%d" % (k, d, want[1]))
        elif d != want:
            bad.append("counter %s +%d, expected +%d" % (k, d, want))
    return got, bad


def reports_of(text):
    """The reports (list of lines) of requests the application took."""
    out = []
    for block in text.split("\nend\n"):
        lines = block.strip("\n").split("\n")
        if any(l.startswith("server: ") for l in lines) and \
                not any(l.startswith("client-error: ") for l in lines):
            out.append(lines)
    return out


def body_of(r):
    head, sep, rest = r.partition(b"\r\n\r\n")
    return rest if sep else b""


def check_app(t, rules, fold, text):
    """The application's requests against t.expected; problems."""
    bad = []
    got = reports_of(text)
    if len(got) != len(t.expected):
        return ["the application got %d requests, expected %d" % (len(got), len(t.expected))]
    for i, (want, lines) in enumerate(zip(t.expected, got)):
        report = "\n".join(lines) + "\nend\n"
        sha = next((l[13:] for l in lines if l.startswith("body-sha256: ")), None)
        if sha is not None and sha != hashlib.sha256(body_of(want)).hexdigest():
            bad.append("request %d: the body differs (DAMAGE)" % (i + 1))
        opts = argparse.Namespace(unmasked=False, premask_ok=True, resync_ok=False)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = check_report.check_one(opts, rules, fold, {"host", "connection"},
                                        want.partition(b"\r\n\r\n")[0] + b"\r\n\r\n", report)
        if rc:
            bad.append("request %d: field lines differ (DAMAGE): %s" %
                       (i + 1, " / ".join(l.strip() for l in buf.getvalue().splitlines()
                                          if l.startswith("!!"))[:300]))
    return bad


# Counters of a segment a hook drops (or whose copies it checks): in origin
# mode (hook 'receive') the receiving stack has decided what it keeps
# before the program reads the stream, and the case's expected bytes,
# which assume the hook dropped the segment, need not be what it delivers.
DROP_COUNTERS = ("packets_dropped", "retransmit_mismatch", "retransmit_unverified",
                 "out_of_order", "oversize", "malformed", "retransmits_dropped", "syn_in_flow",
                 "rst_ignored", "flows_closed", "untracked")


def stack_decides(case):
    """Does the case's outcome at the hooks depend on a segment they drop,
    or on their flow state (not the stack's reading)?"""
    return any(k in DROP_COUNTERS and v != 0 for k, v in case.counters.items())


def inline_judgement(cs, problems, notes):
    """Origin mode: the stack, not hdrstrip, drops what it drops. A segment
    a hook must drop may be taken (the stack keeps its first copy and reads
    on); what is judged is what the application read: no internal name,
    and, where the case does not depend on such a segment, exactly the
    benign bytes. (The notes' last entry stays the case's time.)"""
    kept = []
    for p in problems:
        if "not dropped" in p:
            notes.insert(-1, "the stack took it: " + p)
        elif stack_decides(cs) and "DAMAGE" in p:
            notes.insert(-1, "the stack's reading: " + p[:200])
        elif stack_decides(cs) and "requests, expected" in p:
            notes.insert(-1, "the stack's reading: " + p)
        else:
            kept.append(p)
    return kept


def run(a):
    rules, fold = check_report.read_list(a.list)
    inline = a.hook == "receive"
    origins = {}
    for o in a.origin:
        name, port, log = o.split(":", 2)
        origins[name] = (int(port), log)
    link = rawtcp.Link(a.dev, SRC_MAC, a.dst_mac)
    cases = [c for c in CASES if c.group == a.group and (not a.case or c.cid in a.case)
             and (c.hooks is None or a.hook in c.hooks)]
    results = []
    for cs in cases:
        for oname in cs.origins:
            if oname not in origins:
                continue
            port, log = origins[oname]
            t = Trial(a, cs, oname, port, link)
            before = read_counters(a) if cs.counters and not inline else {}
            off = log_size(log)
            t0 = time.monotonic()
            try:
                cs.fn(t)
            except Exception as e:  # a broken case is a failed case
                t.problem("case raised %s: %s" % (type(e).__name__, e))
            t.close()
            t.notes.append("%.2fs" % (time.monotonic() - t0))
            # The origin's log may be written a little after its answer
            # (a busy machine): wait for as many reports as requests are
            # expected, up to a deadline.
            end = time.monotonic() + 2.0
            time.sleep(0.02)
            text = log_since(log, off)
            while (t.expected is not None and len(reports_of(text)) < len(t.expected)
                   and time.monotonic() < end):
                time.sleep(0.05)
                text = log_since(log, off)
            reports, errors, leaks, token_in = examine(text, rules, fold, t.tok)
            problems = list(t.problems)
            if cs.expect_leak:
                if not leaks:
                    problems.insert(0, "the application did not get the field it should "
                                    "have got unscanned (policy pass)")
                leaks = []
            if leaks:
                problems.insert(0, "LEAK " + "; ".join(leaks))
            if t.want_reports is not None and reports != t.want_reports:
                problems.append("the application took %d requests, expected %d"
                                % (reports, t.want_reports))
            if t.expected is not None and not leaks:
                problems += check_app(t, rules, fold, text)
            counters, cbad = {}, []
            if cs.counters and not inline:
                counters, cbad = check_counters(cs, before, read_counters(a))
            problems += cbad
            if inline:
                problems = inline_judgement(cs, problems, t.notes)
            results.append({"hook": a.hook, "case": cs.cid, "cls": cs.cls, "what": cs.what,
                            "origin": oname, "reports": reports, "refused": errors,
                            "problems": problems, "notes": t.notes, "counters": counters})
    link.close()
    with open(a.out, "a") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    nfail = sum(1 for r in results if r["problems"])
    took = sorted(((float(r["notes"][-1][:-1]), r["case"], r["origin"]) for r in results),
                  reverse=True)
    print("normalize: %s/%s: %d trials, %d failed, %.1fs; slowest: %s" %
          (a.hook, a.group, len(results), nfail, sum(t for t, _, _ in took),
           ", ".join("%s/%s %.2fs" % (c, o, t) for t, c, o in took[:40] if t > 0.4)))
    return 0


def short_reason(problems):
    tags = []
    for p in problems:
        tag = ("LEAK" if p.startswith("LEAK") else "ABSENT" if "absent" in p else
               "COUNT" if p.startswith("counter") else "DAMAGE" if "DAMAGE" in p else
               "DROP" if "DROP" in p or "never acknowledged" in p else
               "NOTDROP" if "not dropped" in p else "ATTACH" if p.startswith("attach") else
               "REQS" if "requests, expected" in p else "OTHER")
        if tag not in tags:
            tags.append(tag)
    return ",".join(tags)


def judge(a):
    rows = []
    for path in a.results:
        with open(path) as f:
            rows += [json.loads(l) for l in f if l.strip()]
    hooks = list(dict.fromkeys(r["hook"] for r in rows))
    cases = list(dict.fromkeys(r["case"] for r in rows))
    info = {r["case"]: (r["cls"], r["what"]) for r in rows}
    # The table, then the reasons, come last: run.sh shows a failed test's last lines.
    w = 30
    table, failures = [], []
    npass = nfail = 0
    for c in cases:
        cells = []
        for h in hooks:
            rs = [r for r in rows if r["case"] == c and r["hook"] == h]
            if not rs:
                cells.append("%-*s" % (w, "-"))
                continue
            bad = [r for r in rs if r["problems"]]
            if not bad:
                cells.append("%-*s" % (w, "PASS"))
                npass += 1
                continue
            nfail += 1
            tags = short_reason(sum((r["problems"] for r in bad), []))
            who = ",".join(r["origin"].replace("node-insecure", "ni") for r in bad)
            if len(bad) == len(rs) and len(rs) > 1:
                who = "all"
            cells.append("%-*s" % (w, ("FAIL %s %s" % (tags, who))[:w]))
            for r in bad:
                failures.append("%s/%s/%s: %s [notes: %s]" % (c, h, r["origin"],
                                                              "; ".join(r["problems"]),
                                                              ", ".join(r["notes"])))
        table.append("%-3s %-16s " % (info[c][0], c[:16]) + " ".join(cells))
    print("normalize: the cases:")
    for c in cases:
        print("  %-16s (class %s) %s" % (c, info[c][0], info[c][1]))
    print("normalize: per case and hook: PASS, or FAIL with the origins that failed (ni:")
    print("node-insecure) and why: LEAK an application got an internal name; DAMAGE bytes")
    print("differ from what was sent; ABSENT a counter this build does not have; COUNT a")
    print("counter moved wrong; DROP bytes that must pass never got through; NOTDROP a")
    print("segment that must be dropped was taken; REQS another number of requests")
    print("%-3s %-16s " % ("cl", "case") + " ".join("%-*s" % (w, h) for h in hooks))
    for line in table:
        print(line)
    print("normalize: %d passed, %d failed (case x hook)" % (npass, nfail))
    # The reasons last: run.sh shows a failed test's last lines.
    if failures:
        print("normalize: failures, per case, hook and origin:")
        for f in failures:
            print("  " + f[:400])
    return 1 if failures else 0


# rtnetlink attributes of RTM_NEWLINK that iproute2 before 6.3 cannot set.
LINK_ATTRS = {"gso_ipv4_max_size": 63, "gro_ipv4_max_size": 64}  # IFLA_*


def link_set(ifname, attr, value):
    """Set one u32 link attribute through rtnetlink; 0 or 1 (printed)."""
    idx = socket.if_nametoindex(ifname)
    body = struct.pack("=BxHiII", 0, 0, idx, 0, 0) + struct.pack("=HHI", 8, LINK_ATTRS[attr], value)
    msg = struct.pack("=IHHII", 16 + len(body), 16, 1 | 4, 1, 0) + body  # RTM_NEWLINK, REQUEST|ACK
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as s:
        s.send(msg)
        err = struct.unpack("=i", s.recv(4096)[16:20])[0]
    if err:
        print("normalize: cannot set %s of %s: %s" % (attr, ifname, os.strerror(-err)),
              file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--dev", required=True, help="the client's interface")
    r.add_argument("--dst-mac", required=True, help="the server's MAC address")
    r.add_argument("--dst4", default="10.199.0.2")
    r.add_argument("--dst6", default="fd00:199::2")
    r.add_argument("--hook", required=True)
    r.add_argument("--group", default="main")
    r.add_argument("--list", required=True)
    r.add_argument("--origin", action="append", required=True, help="NAME:PORT:LOGFILE")
    r.add_argument("--out", required=True, help="results, appended (JSON lines)")
    r.add_argument("--case", action="append", default=[])
    r.add_argument("--stats-ns")
    r.add_argument("--stats-dev")
    r.add_argument("--stats-cgroup", help="origin mode: the cgroup's counters")
    r.add_argument("--hdrstrip", default=os.environ.get("HDRSTRIP", "hdrstrip"))
    r.add_argument("--flows-map", type=int, default=0)
    rec = sub.add_parser("record", help="a result the shell found (an attach that failed)")
    rec.add_argument("--out", required=True)
    rec.add_argument("--hook", required=True)
    rec.add_argument("--case", required=True)
    rec.add_argument("--problem", action="append", default=[])
    rec.add_argument("--note", action="append", default=[])
    ls = sub.add_parser("link-size", help="set a device's gso/gro IPv4 size (iproute2 < 6.3)")
    ls.add_argument("dev")
    ls.add_argument("attr", choices=sorted(LINK_ATTRS))
    ls.add_argument("value", type=int)
    j = sub.add_parser("judge")
    j.add_argument("results", nargs="+")
    sub.add_parser("cases")
    a = ap.parse_args()
    if a.cmd == "run":
        return run(a)
    if a.cmd == "judge":
        return judge(a)
    if a.cmd == "link-size":
        return link_set(a.dev, a.attr, a.value)
    if a.cmd == "record":
        cs = next(c for c in CASES if c.cid == a.case)
        with open(a.out, "a") as f:
            f.write(json.dumps({"hook": a.hook, "case": cs.cid, "cls": cs.cls, "what": cs.what,
                                "origin": "-", "reports": 0, "refused": 0,
                                "problems": a.problem, "notes": a.note, "counters": {}}) + "\n")
        return 0
    for c in CASES:
        print("%-16s class %-2d %-12s %s" % (c.cid, c.cls, c.group, c.what))
    return 0


if __name__ == "__main__":
    sys.exit(main())
