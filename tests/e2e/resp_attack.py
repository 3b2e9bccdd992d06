#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A hostile origin for the response normalisation suite
(test_response_attacks.sh): the mirror of normalize.py, which plays a
hostile client against real servers.

    resp_attack.py run --dev DEV --dst-mac MAC --client-ns NS --port PORT
                       --place NAME --fam 4|6 --out RESULTS
                       [--stats-ns NS --stats-dev DEV] [--control] [--case ID]...
    resp_attack.py judge RESULTS
    resp_attack.py cases
    resp_attack.py client-http HOST PORT PATH...      (run in the client namespace)
    resp_attack.py client-raw HOST PORT REQUEST_HEX WANT

'run' is the origin. It speaks TCP itself through rawtcp.py (a packet
socket on the server namespace's veth, from an address and a MAC address
nobody owns, so that the server namespace's kernel, which drops those
frames as another host's, never answers with a RST), and, for every case,
starts a real client application in the client namespace (curl, Python's
http.client, or a raw socket for pipelined requests) that connects to that
address. The origin takes the connection (rawtcp.accept), reads the
request, and shapes its response's segments the way a hostile origin
would: urgent pointers inside or around an internal field name,
overlapping retransmissions whose bytes differ, reordering, bad checksums,
RST and SYN the client's stack ignores, a HEAD, 204 or 304 response whose
Content-Length covers the next response's head, a name cut at every
offset, interim 1xx responses; and, on a keep-alive connection, two
framings that Python's http.client reads otherwise than curl and hdrstrip
(a chunk's data ended by a bare LF; a 103, which it takes for a final
response, before the answer to a GET that a HEAD follows). Where hdrstrip
drops a segment, the origin does what TCP does: it sends again, in order,
the bytes the client has not acknowledged, so every case ends with the
client holding a whole response (but the 'lenient' ones, where dropping
the response is as right as masking it: only a leak fails them).
Then it checks:
  - LEAK: no internal field name (any case, '-' or '_') in anything the
    client application read: curl's output (-D - -o -: the header blocks
    of every response, 1xx included, and the body), the bytes http.client
    read from its socket and the fields it parsed, or a raw socket's bytes;
  - DAMAGE: the application read exactly the bytes a Linux receiver keeps,
    each internal field line masked to the same length (resp_tool's
    masked_form), a benign line whose name a segment cut may come out
    masked too (a name that could still be internal is rewritten ahead);
  - the request reached the origin with its internal field masked (the
    list's request rule, on the same attachment);
  - COUNT: hdrstrip's counters moved as the case says ('hdrstrip stats
    --json' before and after; exact where the case makes it certain).
With --control (no hdrstrip attached) only the cases that are attacks on
the client's stack run, and each must LEAK: the proof that the shapes are
real (Linux takes the urgent byte out of the stream, keeps the first copy
of overlapping bytes) and that the checks see a leak.

'judge' prints one table, case by placement, and the reason of every
failure; it exits 1 when any case failed.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The origin's modules, imported by run() only: the clients start faster
# without them (one start per case).
json_counters = rawtcp = masked_form = None

FAKE4 = "10.199.0.88"  # on the veth's subnet, owned by nobody
FAKE6 = "fd00:199::88"
FAKE_MAC = "02:00:00:00:00:88"

INTERNAL = (b"x-backend-server", b"x-internal-secret")
# An internal name under any spelling a client could take for it.
LEAK_RE = re.compile(rb"x[-_]backend[-_]server|x[-_]internal[-_]secret", re.I)
REQ_LEAK_RE = re.compile(rb"x[-_]internal[-_]auth", re.I)
BODY = b"hello from the hostile origin\n"
ACK_WAIT = 0.5  # for bytes the client must acknowledge
DROP_WAIT = 0.12  # before sending again what hdrstrip may have dropped (veth: < 1 ms)
CLIENT_WAIT = 6.0  # for a client application to end


class Case:
    def __init__(self, cid, cls, what, fn, clients, counters=None, attack=False, v4only=False,
                 lenient=False):
        self.cid, self.cls, self.what, self.fn = cid, cls, what, fn
        self.clients, self.counters = clients, counters or {}
        self.attack, self.v4only = attack, v4only
        # Dropping the response is as right as masking it (no whole
        # response expected): only a leak fails the case.
        self.lenient = lenient


CASES = []


def case(cid, cls, what, clients=("curl",), **kw):
    def reg(fn):
        CASES.append(Case(cid, cls, what, fn, clients, **kw))
        return fn
    return reg


def response(fields, body=BODY, status=b"200 OK", length=True):
    head = b"HTTP/1.1 " + status + b"\r\n" + b"".join(f + b"\r\n" for f in fields)
    if length:
        head += b"Content-Length: %d\r\n" % len(body)
    return head + b"\r\n" + body


class Run:
    """One client application's run: what it must read, response by
    response (http.client and the raw client print one JSON line each)."""

    def __init__(self, kind, argv):
        self.kind, self.argv = kind, argv
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.expect = []  # (bytes, cuts, allowed) per exchange
        self.out = self.err = b""
        self.rc = None


class Trial:
    """One case, with one kind of client, at one placement and family."""

    def __init__(self, a, link, cs, kind):
        self.a, self.link, self.case, self.kind = a, link, cs, kind
        self.fam = a.fam
        self.addr = FAKE6 if self.fam == 6 else FAKE4
        self.host = "[%s]" % self.addr if self.fam == 6 else self.addr
        self.tok = b"tok-" + cs.cid.encode()
        self.problems, self.notes = [], []
        self.conns, self.runs = [], []
        self.requests = b""

    # --- the client application -------------------------------------------
    def _ns(self, argv):
        return ["nsenter", "--net=/run/netns/" + self.a.client_ns] + argv

    def curl(self, path):
        self.link.listeners[(self.addr, self.a.port)].clear()
        r = Run("curl", self._ns(["curl", "-sS", "-g", "--max-time", "5", "-D", "-", "-o", "-",
                                  "-H", "X-Internal-Auth: req-" + self.tok.decode(),
                                  "http://%s:%d%s" % (self.host, self.a.port, path)]))
        self.runs.append(r)
        return r

    def http(self, *paths, keep=False):
        self.link.listeners[(self.addr, self.a.port)].clear()
        r = Run("http", self._ns([sys.executable, "-S", os.path.abspath(__file__), "client-http",
                                  self.addr, str(self.a.port)] + list(paths) +
                                 (["--keep"] if keep else [])))
        self.runs.append(r)
        return r

    def raw(self, request, want):
        self.link.listeners[(self.addr, self.a.port)].clear()
        r = Run("raw", self._ns([sys.executable, "-S", os.path.abspath(__file__), "client-raw",
                                 self.addr, str(self.a.port), request.hex(), str(want)]))
        self.runs.append(r)
        return r

    def client(self, path):
        """The trial's kind of client, for one request to @path."""
        return self.curl(path) if self.kind == "curl" else self.http(path)

    def open(self, path):
        """client(@path) and its connection, accepted (None: see problems)."""
        run = self.client(path)
        return run, self.accept()

    def expect(self, run, data, cuts=(), allowed=(), alt=()):
        """@run must read @data (internal lines masked), or one of the
        streams in @alt; @cuts: stream offsets where segments were cut;
        @allowed: benign spellings that hold an internal name (a byte left
        in the middle)."""
        run.expect.append(((data,) + tuple(alt), tuple(cuts), tuple(allowed)))

    # --- the origin's side of TCP -----------------------------------------
    def accept(self, requests=1):
        """The client's connection, once @requests request heads came."""
        c = rawtcp.accept(self.link, self.addr, self.a.port, timeout=5.0)
        if not c:
            self.problem("no connection from the client (no SYN, or no ACK of the SYN-ACK)")
            return None
        self.conns.append(c)
        rawtcp.poll_until(self.link, lambda: c.rx.count(b"\r\n\r\n") >= requests or c.reset,
                          3.0)
        if c.rx.count(b"\r\n\r\n") < requests:
            self.problem("the client's request did not come whole: %r" % c.rx[:200])
            return None
        self.requests += c.rx
        return c

    def send(self, c, data, off=None, **kw):
        """Bytes the client's stack keeps, at relative @off (default: next)."""
        return c.segment(data, off=off, **kw)

    def hostile(self, c, data, off=None, **kw):
        """A segment the client's stack must not keep as it is (the stack
        or hdrstrip drops it, or it holds bytes the stack has already)."""
        nxt, mx = c.snd_nxt, c.snd_max
        c.segment(data, off=off, record=False, **kw)
        c.snd_nxt, c.snd_max = nxt, mx

    def deliver(self, c, wait=ACK_WAIT, tries=5):
        """Every byte sent in order acknowledged; else (hdrstrip dropped a
        segment) send again, as TCP would, what is not acknowledged."""
        for i in range(tries):
            if self.wait_ack(c, wait if i == 0 else ACK_WAIT):
                return True
            if c.reset:
                break
            start, stop = c.acked_off(), c.off_of(c.snd_nxt)
            if start < 0 or start >= stop:
                break
            data = bytes(c.stream[k] for k in range(start, stop))
            self.note("sent again from %d" % start)
            for k in range(0, len(data), 1400):
                c.raw(c.seq_at(start + k), "PA", data[k:k + 1400])
        if self.wait_ack(c, 0.05):
            return True
        if self.case.lenient:
            # Dropped, as may be: the client need not wait for its timeout.
            self.note("the response was never acknowledged whole: reset")
            c.rst()
        else:
            self.problem("the response was never acknowledged whole (DROP)")
        return False

    def wait_ack(self, c, timeout):
        """Has the client acknowledged every byte sent in order?"""
        def done():
            return c.reset or (c.acked is not None and
                               ((c.acked - c.snd_nxt) & 0xFFFFFFFF) < (1 << 31))
        return rawtcp.poll_until(self.link, done, timeout) and not c.reset

    def problem(self, msg):
        self.problems.append(msg)

    def note(self, msg):
        self.notes.append(msg)

    def finish(self):
        """Wait for the clients to end (answering their TCP meanwhile),
        then reset what is left of the connections."""
        end = time.monotonic() + CLIENT_WAIT
        for r in self.runs:
            rawtcp.poll_until(self.link, lambda: r.proc.poll() is not None,
                              end - time.monotonic())
            if r.proc.poll() is None:
                r.proc.kill()
                self.problem("%s did not end within %.0fs" % (r.kind, CLIENT_WAIT))
            r.out, r.err = r.proc.communicate()
            r.rc = r.proc.returncode
        for c in self.conns:
            c.rst()


# --- checks -----------------------------------------------------------------------

def leaks(data, allowed=()):
    """Internal names in @data, but for the benign spellings @allowed."""
    for a in allowed:
        data = re.sub(re.escape(a), b"", data, flags=re.I)
    return [m.group(0).decode("latin-1") for m in LEAK_RE.finditer(data)]


def compare(want, got, cuts):
    """@got against @want line by line: internal lines masked, benign
    lines as sent (or masked, when a cut falls in their name)."""
    bad = []
    if len(got) != len(want):
        bad.append("read %d bytes, expected %d" % (len(got), len(want)))
    pos = 0
    for line in want.split(b"\n"):
        g = got[pos:pos + len(line)]
        name = line.split(b":", 1)[0].strip().lower()
        if name in INTERNAL:
            if not masked_form(g.rstrip(b"\r")):
                bad.append("internal line %r read as %r" % (line, g))
        elif g != line:
            name_end = pos + len(line.split(b":", 1)[0])
            if not (any(pos < k <= name_end for k in cuts) and masked_form(g.rstrip(b"\r"))):
                bad.append("line %r read as %r" % (line, g))
        pos += len(line) + 1
        if len(bad) > 3:
            break
    return bad


def judge_run(t, r, control):
    """Problems of one client run (LEAK first); with @control, a leak is
    what must happen."""
    bad, leaked = [], []
    if r.kind == "curl":
        got = [r.out]
        if r.rc != 0:
            bad.append("curl exited %d: %s" % (r.rc, r.err.decode("latin-1").strip()[:200]))
    else:
        got = []
        for line in r.out.decode("latin-1").splitlines():
            try:
                d = json.loads(line)
            except ValueError:
                continue
            got.append(d["raw"].encode("latin-1"))
            if d.get("error"):
                bad.append("%s: %s" % (r.kind, d["error"]))
            if r.kind == "http" and not d.get("error"):
                # What the application works with: the parsed fields.
                names = [k.strip().lower().replace("_", "-").encode("latin-1")
                         for k, _ in d["headers"]]
                leaked += ["parsed field %s" % n.decode() for n in names if n in INTERNAL]
                if b"x-keep" not in names:
                    bad.append("http.client: no X-Keep field among %s" % names)
        if r.rc != 0:
            bad.append("%s client exited %d: %s" % (r.kind, r.rc,
                                                   r.err.decode("latin-1").strip()[-200:]))
    if len(got) != len(r.expect):
        bad.append("%s read %d responses, expected %d" % (r.kind, len(got), len(r.expect)))
    for i, (g, (wants, cuts, allowed)) in enumerate(zip(got, r.expect)):
        leaked += leaks(g, allowed)
        diffs = [compare(w, g, cuts) for w in wants]
        if not control and all(diffs):
            bad += ["%s, exchange %d: %s (DAMAGE)" % (r.kind, i + 1, b) for b in diffs[0]]
    if control:
        return [] if leaked else ["%s: no leak without hdrstrip (the attack did nothing)" % r.kind]
    if t.case.lenient:
        t.notes += ["not whole: " + b for b in bad]
        bad = []
    if leaked:
        bad.insert(0, "LEAK %s read %s" % (r.kind, ", ".join(sorted(set(leaked)))))
    return bad


def read_counters(a):
    if not a.stats_ns:
        return {}
    out = subprocess.run(["nsenter", "--net=/run/netns/" + a.stats_ns, a.hdrstrip, "stats",
                          a.stats_dev, "--json"], capture_output=True, check=True).stdout
    d = json_counters.pick_dev(json.loads(out), a.stats_dev) or {}
    if "counters" in d and isinstance(d["counters"], dict):
        d = dict(d["counters"])
    return dict(json_counters.flatten(d))


NORM = ("urgent_cleared", "bad_checksum", "retransmits", "retransmit_mismatch",
        "retransmit_unverified", "out_of_order", "rst_ignored", "syn_in_flow", "untracked",
        "packets_dropped", "response_headers_masked", "split_names", "responses_unframed")


def check_counters(cs, before, after):
    got, bad = {}, []
    for k in sorted(set(NORM) | set(cs.counters)):
        if k in after:
            got[k] = after[k] - before.get(k, 0)
    for k, want in cs.counters.items():
        if k not in after:
            bad.append("counter %s absent" % k)
            continue
        d = got[k]
        if isinstance(want, tuple):
            if d < want[1]:
                bad.append("counter %s +%d, expected at least +%d" % (k, d, want[1]))
        elif d != want:
            bad.append("counter %s +%d, expected +%d" % (k, d, want))
    return {k: v for k, v in got.items() if v}, bad


# --- the standard response --------------------------------------------------------

def fields(t, internal=True):
    f = [b"Server: hostile-origin/1.0"]
    if internal:
        f.append(b"X-Backend-Server: " + t.tok + b".internal:9000")
    f.append(b"X-Keep: yes")
    if internal:
        f.append(b"X-Internal-Secret: " + t.tok)
    return f


# --- class 1: urgent data -----------------------------------------------------------

def urgent(t, line, ahead=False):
    """The response with @line (holding the urgent byte 'Z') in its header
    block; the segment with URG starts at that line, or (@ahead) is the
    one before it."""
    run, c = t.open("/urg")
    if not c:
        return
    r = response([b"Server: hostile-origin/1.0", b"X-Keep: yes", line])
    at = r.index(line)
    z = line.index(b"Z")
    if ahead:
        prev = r.index(b"X-Keep")
        t.send(c, r[:prev])
        t.send(c, r[prev:at], urg=at - prev + z + 1)  # BSD pointer: one past the byte
        t.send(c, r[at:])
    else:
        t.send(c, r[:at])
        t.send(c, r[at:], urg=z + 1)
    t.deliver(c)
    t.expect(run, r, allowed=[line.split(b":")[0]])


@case("urg-in-name", 1, "URG, the urgent byte inside an internal name (X-BackendZ-Server)",
      counters={"urgent_cleared": 1}, attack=True)
def urg_in_name(t):
    urgent(t, b"X-BackendZ-Server: " + t.tok)


@case("urg-before-name", 1, "URG, the urgent byte before an internal name at a line start",
      clients=("http",), counters={"urgent_cleared": 1}, attack=True)
def urg_before_name(t):
    urgent(t, b"ZX-Internal-Secret: " + t.tok)


@case("urg-after-name", 1, "URG, the urgent byte between an internal name and its colon",
      counters={"urgent_cleared": 1}, attack=True)
def urg_after_name(t):
    urgent(t, b"X-Internal-SecretZ: " + t.tok)


@case("urg-ahead", 1, "URG in a benign segment, the urgent byte in the next one's name",
      clients=("curl", "http"), counters={"urgent_cleared": 1}, attack=True)
def urg_ahead(t):
    urgent(t, b"X-BackendZ-Server: " + t.tok, ahead=True)


# --- class 2: overlapping retransmissions -------------------------------------------

@case("rtx-tail", 2, "a benign line acknowledged, then a copy whose old bytes differ and whose "
      "new tail is an internal line: dropped", counters={"retransmit_mismatch": 1}, attack=True)
def rtx_tail(t):
    run, c = t.open("/rtx")
    if not c:
        return
    a = b"HTTP/1.1 200 OK\r\nServer: hostile-origin/1.0\r\n"
    t.send(c, a)
    at = c.off_of(c.snd_nxt)
    t.send(c, b"X-Foo: a\r\n")
    t.deliver(c)
    rest = b"X-Keep: yes\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
    # Linux keeps "X-Foo: a\r\n" and takes the tail as a line of its own.
    t.hostile(c, b"X-Foo: aaa" + b"X-Internal-Secret: " + t.tok + b"\r\n" + rest, off=at)
    c.quiet(0.01)
    t.send(c, rest)
    t.deliver(c)
    t.expect(run, a + b"X-Foo: a\r\n" + rest)


@case("rtx-evil-again", 2, "a benign line acknowledged, then the same range again holding an "
      "internal line of the same length (the stack keeps the first)",
      counters={"retransmits": (">=", 1)})
def rtx_evil_again(t):
    run, c = t.open("/rtx")
    if not c:
        return
    a = b"HTTP/1.1 200 OK\r\nServer: hostile-origin/1.0\r\n"
    benign = b"X-Aaaaaaaa-Secret: " + t.tok + b"\r\n"
    evil = b"X-Internal-Secret: " + t.tok + b"\r\n"
    assert len(benign) == len(evil)
    t.send(c, a)
    at = c.off_of(c.snd_nxt)
    t.send(c, benign)
    t.deliver(c)
    t.hostile(c, evil, off=at)
    c.quiet(0.01)
    rest = b"X-Keep: yes\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
    t.send(c, rest)
    t.deliver(c)
    t.expect(run, a + benign + rest)


@case("rtx-benign-again", 2, "an internal line (masked) acknowledged, then the same range again "
      "with benign bytes and the rest of the response", clients=("http",),
      counters={"retransmits": (">=", 1), "response_headers_masked": (">=", 1)})
def rtx_benign_again(t):
    run, c = t.open("/rtx")
    if not c:
        return
    a = b"HTTP/1.1 200 OK\r\nServer: hostile-origin/1.0\r\n"
    evil = b"X-Internal-Secret: " + t.tok + b"\r\n"
    benign = b"X-Aaaaaaaa-Secret: " + t.tok + b"\r\n"
    rest = b"X-Keep: yes\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
    t.send(c, a)
    at = c.off_of(c.snd_nxt)
    t.send(c, evil)
    t.deliver(c)
    # The stack keeps the first copy (masked) and takes the new tail.
    t.send(c, benign + rest, off=at)
    t.deliver(c, wait=DROP_WAIT)
    t.expect(run, a + evil + rest)


@case("rtx-far", 2, "20 segments, then all of them again with other bytes and an internal line "
      "after them (no state kept that far back): dropped",
      counters={"retransmit_unverified": 1}, attack=True)
def rtx_far(t):
    run, c = t.open("/far")
    if not c:
        return
    a = b"HTTP/1.1 200 OK\r\n"
    t.send(c, a)
    t.deliver(c)
    at = c.off_of(c.snd_nxt)
    lines = [b"X-S%02d: v\r\n" % i for i in range(20)]
    for l in lines:
        t.send(c, l)
    t.deliver(c)
    rest = b"X-Keep: yes\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
    other = b"".join(l.replace(b": v", b": w") for l in lines)
    t.hostile(c, other + b"X-Internal-Secret: " + t.tok + b"\r\n" + rest, off=at)
    c.quiet(0.01)
    t.send(c, rest)
    t.deliver(c)
    t.expect(run, a + b"".join(lines) + rest)


# --- class 3: out of order ---------------------------------------------------------

def in_order(t, c, r, cuts, order, wait=DROP_WAIT):
    """@r cut at @cuts into segments, sent in @order (indices); @wait:
    for the ACK of them all before sending again what is missing."""
    bounds = [0] + list(cuts) + [len(r)]
    base = c.off_of(c.snd_nxt)
    for i in order:
        t.send(c, r[bounds[i]:bounds[i + 1]], off=base + bounds[i])
        c.quiet(0.005)
    t.deliver(c, wait=wait)


@case("ooo-status", 3, "the rest of the response before its first bytes (cut in the status line)",
      counters={"out_of_order": (">=", 1)})
def ooo_status(t):
    run, c = t.open("/ooo")
    if not c:
        return
    r = response(fields(t))
    in_order(t, c, r, [10], [1, 0])
    t.expect(run, r, cuts=[10])


@case("ooo-name", 3, "an internal name cut in two, the second half (and the rest) first",
      clients=("http",), counters={"out_of_order": (">=", 1)})
def ooo_name(t):
    run, c = t.open("/ooo")
    if not c:
        return
    r = response(fields(t))
    k1 = r.index(b"X-Internal-Secret") + 6
    k2 = r.index(b"\r\n", k1) + 2
    in_order(t, c, r, [k1, k2], [1, 0, 2])
    t.expect(run, r, cuts=[k1, k2])


@case("ooo-body-next", 3, "pipelined: a segment ahead of a gap in a body of known length that "
      "holds the next response's head: scanned from the body's end, not dropped",
      clients=("raw",), counters={"out_of_order": 0, "response_headers_masked": (">=", 2)})
def ooo_body_next(t):
    body = b"".join(b"body line %03d\r\n" % i for i in range(40))
    r1 = response([b"Server: hostile-origin/1.0", b"X-Keep: yes"], body=body)
    r2 = response(fields(t))
    s = r1 + r2
    reqs = b"GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n"
    run = t.raw(reqs, len(s))
    c = t.accept(requests=2)
    if not c:
        return
    k1 = len(r1) - len(body) + 100
    k2 = k1 + 200
    in_order(t, c, s, [k1, k2], [0, 2, 1], wait=ACK_WAIT)
    t.expect(run, s, cuts=[k1, k2])


# --- class 4: bad checksums -----------------------------------------------------------

def bad_then_good(t, first, second, bad_ip=False):
    """A bad-checksum segment with @first, then a good one with @second at
    the same place; each followed by the rest of the response."""
    run, c = t.open("/csum")
    if not c:
        return
    a = b"HTTP/1.1 200 OK\r\nServer: hostile-origin/1.0\r\n"
    rest = b"X-Keep: yes\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
    t.send(c, a)
    t.deliver(c)
    at = c.off_of(c.snd_nxt)
    kw = {"bad_ip_csum": True} if bad_ip else {"bad_tcp_csum": True}
    t.hostile(c, first + rest, off=at, **kw)
    c.quiet(0.01)
    t.send(c, second + rest)
    t.deliver(c)
    t.expect(run, a + second + rest)


@case("csum-benign-bad", 4, "a bad TCP checksum on benign bytes, then an internal line at the "
      "same place", counters={"bad_checksum": 1, "retransmit_mismatch": 0,
                              "response_headers_masked": (">=", 1)})
def csum_benign_bad(t):
    bad_then_good(t, b"X-Aaaaaaaa-Secret: " + t.tok + b"\r\n",
                  b"X-Internal-Secret: " + t.tok + b"\r\n")


@case("csum-evil-bad", 4, "a bad TCP checksum on an internal line, then benign bytes at the "
      "same place", clients=("http",), counters={"bad_checksum": 1, "packets_dropped": 1,
                                                 "retransmit_mismatch": 0})
def csum_evil_bad(t):
    bad_then_good(t, b"X-Internal-Secret: " + t.tok + b"\r\n",
                  b"X-Aaaaaaaa-Secret: " + t.tok + b"\r\n")


@case("ipcsum-evil-bad", 4, "a bad IPv4 header checksum on an internal line, then benign bytes",
      counters={"bad_checksum": 1, "packets_dropped": 1}, v4only=True)
def ipcsum_evil_bad(t):
    bad_then_good(t, b"X-Internal-Secret: " + t.tok + b"\r\n",
                  b"X-Aaaaaaaa-Secret: " + t.tok + b"\r\n", bad_ip=True)


# --- class 5: RST and SYN the client's stack ignores ------------------------------------

@case("rst-bad-seq", 5, "RSTs in the window but not at the next byte, and out of it: the "
      "stack keeps the connection, the response goes on", counters={"rst_ignored": 3})
def rst_bad_seq(t):
    run, c = t.open("/rst")
    if not c:
        return
    r = response(fields(t))
    k = r.index(b"X-Backend")
    t.send(c, r[:k])
    t.deliver(c)
    c.raw(c.snd_nxt + 100, "RA")
    # The data of a RST is never read: Linux discards it with the RST.
    c.raw(c.snd_nxt + 5, "R", b"X-Internal-Secret: " + t.tok + b"\r\n")
    c.raw(c.snd_nxt - 20000, "RA")
    c.quiet(0.01)
    t.send(c, r[k:])
    t.deliver(c)
    t.expect(run, r)


@case("syn-in-flow", 5, "a SYN and a SYN-ACK inside the response, one byte before the next: "
      "the stack answers with challenge ACKs, the response goes on",
      counters={"syn_in_flow": 2})
def syn_in_flow(t):
    run, c = t.open("/syn")
    if not c:
        return
    r = response(fields(t))
    k = r.index(b"X-Backend")
    t.send(c, r[:k])
    t.deliver(c)
    c.raw(c.snd_nxt - 1, "S")
    c.raw(c.snd_nxt - 1, "SA")
    c.quiet(0.01)
    t.send(c, r[k:])
    t.deliver(c)
    t.expect(run, r)


@case("syn-data", 5, "a SYN inside the response whose data (an internal line) lands where the "
      "response goes on; the stack discards it", clients=("http",),
      counters={"syn_in_flow": 1})
def syn_data(t):
    run, c = t.open("/syn")
    if not c:
        return
    a = b"HTTP/1.1 200 OK\r\nServer: hostile-origin/1.0\r\n"
    rest = b"X-Keep: yes\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
    t.send(c, a)
    t.deliver(c)
    c.raw(c.snd_nxt - 1, "S", b"X-Internal-Secret: " + t.tok + b"\r\n" + rest)
    c.quiet(0.01)
    benign = b"X-Aaaaaaaa-Secret: " + t.tok + b"\r\n"
    t.send(c, benign + rest)
    t.deliver(c)
    t.expect(run, a + benign + rest)


@case("ack-unsent", 5, "benign bytes with an ACK of data the client never sent (the stack "
      "discards the segment, hdrstrip passed it), then an internal line at the same place",
      counters={"retransmits": (">=", 1)})
def ack_unsent(t):
    run, c = t.open("/ack")
    if not c:
        return
    a = b"HTTP/1.1 200 OK\r\nServer: hostile-origin/1.0\r\n"
    rest = b"X-Keep: yes\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
    benign = b"X-Aaaaaaaa-Secret: " + t.tok + b"\r\n"
    evil = b"X-Internal-Secret: " + t.tok + b"\r\n"
    t.send(c, a)
    t.deliver(c)
    at = c.off_of(c.snd_nxt)
    t.hostile(c, benign + rest, off=at, ack=(c.rcv_nxt + 100000) & 0xFFFFFFFF)
    c.quiet(0.01)
    # The copy the stack takes: scanned (masked) if its state agrees with
    # the passed copy's at every cut, else dropped; then the origin gives
    # up on it and sends the benign bytes with a good ACK.
    t.send(c, evil + rest)
    if not t.wait_ack(c, DROP_WAIT):
        t.note("the internal copy was dropped")
        for k in range(len(evil + rest)):
            c.stream[at + k] = (benign + rest)[k]
        t.deliver(c, wait=0.01)
    t.deliver(c)
    t.expect(run, a + evil + rest, alt=[a + benign + rest])


# --- class 6: responses without a body whose length says otherwise --------------------------

def covering(t, requests, first):
    """Pipelined @requests; the first response (@first, a status and
    fields) has a Content-Length that covers the head of the next one."""
    r2 = response(fields(t))
    head2 = r2[:r2.index(b"\r\n\r\n") + 4]
    r1 = response(first, body=b"X" * len(head2))
    r1 = r1[:len(r1) - len(head2)]  # no body: a HEAD, 204 or 304
    s = r1 + r2
    run = t.raw(requests, len(s))
    c = t.accept(requests=requests.count(b"\r\n\r\n"))
    if not c:
        return
    t.send(c, r1)
    t.send(c, r2)
    t.deliver(c)
    t.expect(run, s, cuts=[len(r1)])


@case("head-cl", 6, "HEAD then GET pipelined: the HEAD response's Content-Length covers the "
      "GET response's head", clients=("raw",),
      counters={"response_headers_masked": (">=", 2), "responses_unframed": 0})
def head_cl(t):
    covering(t, b"HEAD /h HTTP/1.1\r\nHost: h\r\n\r\nGET /g HTTP/1.1\r\nHost: h\r\n\r\n",
             [b"X-Keep: yes"])


@case("head-cl-lower", 6, "as head-cl with the method 'head' in lower case", clients=("raw",),
      counters={"response_headers_masked": (">=", 2), "responses_unframed": 0})
def head_cl_lower(t):
    covering(t, b"head /h HTTP/1.1\r\nHost: h\r\n\r\nGET /g HTTP/1.1\r\nHost: h\r\n\r\n",
             [b"X-Keep: yes"])


@case("nobody-204-304", 6, "GET x3 pipelined: a 204 and a 304 whose Content-Length covers the "
      "next response's head", clients=("raw",),
      counters={"response_headers_masked": (">=", 3), "responses_unframed": 0})
def nobody_204_304(t):
    r3 = response(fields(t))
    head3 = r3[:r3.index(b"\r\n\r\n") + 4]
    r2 = (b"HTTP/1.1 304 Not Modified\r\nX-Backend-Server: " + t.tok +
          b"\r\nContent-Length: %d\r\n\r\n" % len(head3))
    r1 = b"HTTP/1.1 204 No Content\r\nX-Keep: yes\r\nContent-Length: %d\r\n\r\n" % len(r2)
    s = r1 + r2 + r3
    reqs = b"".join(b"GET /%d HTTP/1.1\r\nHost: h\r\n\r\n" % i for i in range(3))
    run = t.raw(reqs, len(s))
    c = t.accept(requests=3)
    if not c:
        return
    t.send(c, s)
    t.deliver(c)
    t.expect(run, s)


@case("chunk-lf-end", 6, "keep-alive http.client: a chunk's data ended by a bare LF (curl and "
      "hdrstrip take it; http.client tosses two bytes, and so reads the next size line 'f00' as "
      "'00', the last chunk); the next response is in what hdrstrip takes for chunk data",
      clients=("http",), lenient=True)
def chunk_lf_end(t):
    run = t.http("/c1", "/c2", keep=True)
    c = t.accept()
    if not c:
        return
    r1 = (b"HTTP/1.1 200 OK\r\nServer: hostile-origin/1.0\r\nX-Keep: yes\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\nf00\r\n\r\n")
    r2 = response(fields(t))
    t.expect(run, r1)
    t.expect(run, r2)
    t.send(c, r1)
    if not t.deliver(c, tries=2):
        return
    # The second request, on the same connection, once the first response
    # was read (http.client drops what its last response read ahead).
    if rawtcp.poll_until(t.link, lambda: c.rx.count(b"\r\n\r\n") >= 2 or c.reset, 3.0):
        t.send(c, r2)
        t.deliver(c, tries=2)


# --- class 7: a name cut at every offset -------------------------------------------------

def split_offsets(r, name):
    p = r.index(name)
    return list(range(p - 1, p + len(name) + 3))


@case("split-every", 7, "an internal name cut into two segments at every offset from the line "
      "end before it to past its colon (http.client: one connection each)", clients=("http",),
      counters={"split_names": (">=", 10)})
def split_every(t):
    r = response(fields(t))
    ks = split_offsets(r, b"X-Internal-Secret")
    run = t.http(*["/split/%d" % k for k in ks])
    for k in ks:
        c = t.accept()
        if not c:
            return
        path = c.rx.split(b" ")[1]
        if path != b"/split/%d" % k:
            t.problem("request for %r, expected /split/%d" % (path, k))
            return
        t.send(c, r[:k])
        t.send(c, r[k:])
        t.deliver(c)
        t.expect(run, r, cuts=[k])


@case("split-curl", 7, "X-Backend-Server cut at a handful of offsets (curl)",
      counters={"split_names": (">=", 4)})
def split_curl(t):
    r = response(fields(t))
    p = r.index(b"X-Backend-Server")
    for k in (p + 1, p + 2, p + 9, p + 15, p + 16):
        run = t.curl("/split/%d" % k)
        c = t.accept()
        if not c:
            return
        t.send(c, r[:k])
        t.send(c, r[k:])
        t.deliver(c)
        t.expect(run, r, cuts=[k])


# --- class 8: interim responses --------------------------------------------------------

@case("interim-100", 8, "a 100 Continue with an internal field, then the final response",
      clients=("curl", "http"), counters={"response_headers_masked": (">=", 3)})
def interim_100(t):
    run, c = t.open("/interim")
    if not c:
        return
    r = (b"HTTP/1.1 100 Continue\r\nX-Internal-Secret: " + t.tok + b"-100\r\n\r\n" +
         response(fields(t)))
    t.send(c, r)
    t.deliver(c)
    t.expect(run, r)


@case("interim-103-cl", 8, "a 103 whose Content-Length covers the final response's head, "
      "with an internal field, each response in a segment of its own",
      counters={"response_headers_masked": (">=", 3)})
def interim_103_cl(t):
    run, c = t.open("/interim")
    if not c:
        return
    final = response(fields(t))
    head = final[:final.index(b"\r\n\r\n") + 4]
    early = (b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n"
             b"X-Backend-Server: " + t.tok + b"-103\r\nContent-Length: %d\r\n\r\n" % len(head))
    t.send(c, early)
    t.send(c, final)
    t.deliver(c)
    t.expect(run, early + final, cuts=[len(early)])


@case("interim-103-head", 8, "keep-alive http.client, GET, HEAD, GET: a 103 (which http.client "
      "takes for the GET's final response), the GET's 200 (which it takes for the HEAD's: no "
      "body), and that 200's body: a whole response with internal fields",
      clients=("http",), lenient=True)
def interim_103_head(t):
    run = t.http("/i1", "HEAD:/i2", "/i3", keep=True)
    c = t.accept()
    if not c:
        return
    early = b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
    r3 = response(fields(t))
    final = (b"HTTP/1.1 200 OK\r\nServer: hostile-origin/1.0\r\nX-Keep: yes\r\n"
             b"Content-Length: %d\r\n\r\n" % len(r3))
    # Each part once the client asked for what it takes it for
    # (http.client drops what a response read ahead).
    for part in (early, final, r3):
        t.expect(run, part)
    for n, part in ((1, early), (2, final), (3, r3)):
        if not rawtcp.poll_until(t.link, lambda: c.rx.count(b"\r\n\r\n") >= n or c.reset, 3.0):
            t.note("no request %d" % n)
            break
        t.send(c, part)
        if not t.deliver(c, tries=2):
            break


# --- running ------------------------------------------------------------------------

def run(a):
    global json_counters, rawtcp, masked_form
    import json_counters
    import rawtcp
    from resp_tool import masked_form
    link = rawtcp.Link(a.dev, FAKE_MAC, a.dst_mac)
    addr = FAKE6 if a.fam == 6 else FAKE4
    rawtcp.listen(link, addr, a.port)
    results = []
    for cs in CASES:
        if (a.case and cs.cid not in a.case) or (a.control and not cs.attack) or \
                (cs.v4only and a.fam != 4):
            continue
        for kind in cs.clients:
            t = Trial(a, link, cs, kind)
            before = read_counters(a)
            t0 = time.monotonic()
            try:
                cs.fn(t)
            except Exception as e:  # a broken case is a failed case
                t.problem("case raised %s: %s" % (type(e).__name__, e))
            t.finish()
            secs = time.monotonic() - t0
            problems = []
            for r in t.runs:
                problems += judge_run(t, r, a.control)
            problems += t.problems
            if not t.runs:
                problems.append("no client ran")
            if REQ_LEAK_RE.search(t.requests) and not a.control:
                problems.append("LEAK the request's internal field reached the origin: %r" %
                                t.requests[:300])
            counters = {}
            if not a.control:
                counters, cbad = check_counters(cs, before, read_counters(a))
                problems += cbad
            results.append({"place": a.place, "fam": a.fam, "case": cs.cid, "cls": cs.cls,
                            "what": cs.what, "client": kind, "problems": problems,
                            "notes": t.notes + ["%.2fs" % secs], "secs": secs,
                            "counters": counters,
                            "control": bool(a.control)})
    link.close()
    with open(a.out, "a") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    nfail = sum(1 for r in results if r["problems"])
    took = sum(r["secs"] for r in results)
    print("resp_attack: %s IPv%d: %d trials, %d failed, %.1fs" %
          (a.place, a.fam, len(results), nfail, took))
    return 0


def short_reason(problems):
    tags = []
    for p in problems:
        tag = ("LEAK" if p.startswith("LEAK") else "ABSENT" if "absent" in p else
               "COUNT" if p.startswith("counter") else "DAMAGE" if "DAMAGE" in p else
               "DROP" if "DROP" in p else "NOLEAK" if "no leak" in p else "OTHER")
        if tag not in tags:
            tags.append(tag)
    return ",".join(tags)


def judge(a):
    rows = []
    with open(a.results) as f:
        rows = [json.loads(l) for l in f if l.strip()]
    cols = list(dict.fromkeys("%s/%d" % (r["place"], r["fam"]) for r in rows))
    cases = list(dict.fromkeys(r["case"] for r in rows))
    info = {r["case"]: (r["cls"], r["what"]) for r in rows}
    w = max([16] + [len(c) for c in cols])
    table, failures = [], []
    npass = nfail = 0
    for cid in cases:
        cells = []
        for col in cols:
            rs = [r for r in rows if r["case"] == cid and "%s/%d" % (r["place"], r["fam"]) == col]
            if not rs:
                cells.append("%-*s" % (w, "-"))
                continue
            bad = [r for r in rs if r["problems"]]
            if not bad:
                cells.append("%-*s" % (w, "LEAK(control)" if rs[0]["control"] else "PASS"))
                npass += 1
                continue
            nfail += 1
            cells.append("%-*s" % (w, ("FAIL " + short_reason(sum((r["problems"] for r in bad),
                                                                    [])))[:w]))
            for r in bad:
                failures.append("%s/%s/IPv%d/%s: %s [notes: %s; counters: %s]" % (
                    cid, r["place"], r["fam"], r["client"], "; ".join(r["problems"]),
                    ", ".join(r["notes"]), json.dumps(r["counters"], sort_keys=True)))
        table.append("%-2s %-16s " % (info[cid][0], cid[:16]) + " ".join(cells))
    if not rows:
        print("resp_attack: no results (no case ran)")
        return 1
    print("resp_attack: the cases:")
    for cid in cases:
        print("  %-16s (class %s) %s" % (cid, info[cid][0], info[cid][1]))
    print("resp_attack: per case and placement/family: PASS; LEAK(control): without hdrstrip the")
    print("client read the internal name (as it must); or FAIL and why: LEAK a client read an")
    print("internal name; DAMAGE other bytes than expected; COUNT a counter moved wrong; DROP")
    print("bytes that must pass never did; NOLEAK the control saw no leak")
    print("%-2s %-16s " % ("cl", "case") + " ".join("%-*s" % (w, c) for c in cols))
    for line in table:
        print(line)
    print("resp_attack: %d passed, %d failed (case x placement)" % (npass, nfail))
    if failures:
        print("resp_attack: failures:")
        for f in failures:
            print("  " + f[:700])
    if a.failed:
        # One line per failed case, for the known-issues check: ID, a tab,
        # where and why.
        with open(a.failed, "w") as f:
            for cid in cases:
                bad = [r for r in rows if r["case"] == cid and r["problems"]]
                if bad:
                    f.write("%s\t%s\n" % (cid, ", ".join(
                        "%s/IPv%d/%s %s" % (r["place"], r["fam"], r["client"],
                                            short_reason(r["problems"])) for r in bad)))
    return 1 if failures else 0


# --- the clients (in the client namespace) -------------------------------------------

class Tee:
    """A response's file object that keeps every byte http.client took."""

    def __init__(self, f):
        self.f, self.data = f, bytearray()

    def readline(self, *a):
        b = self.f.readline(*a)
        self.data += b
        return b

    def read(self, *a):
        b = self.f.read(*a)
        self.data += b
        return b

    def read1(self, *a):
        b = self.f.read1(*a)
        self.data += b
        return b

    def readinto(self, buf):
        n = self.f.readinto(buf)
        self.data += bytes(memoryview(buf)[:n or 0])
        return n

    def __getattr__(self, name):
        return getattr(self.f, name)


class TeeSocket:
    def __init__(self, s):
        self.s, self.tees = s, []

    def makefile(self, *a, **kw):
        t = Tee(self.s.makefile(*a, **kw))
        self.tees.append(t)
        return t

    def __getattr__(self, name):
        return getattr(self.s, name)


def client_http(host, port, paths, keep=False):
    """Python's http.client, one connection per path (@keep: one for all,
    kept alive), METHOD:/path for another method than GET; prints per
    response what it parsed and every byte it read, as a JSON line."""
    import http.client
    rc = 0
    c = ts = None
    for path in paths:
        if c is None or not keep:
            c = http.client.HTTPConnection(host, port, timeout=5)
            ts = None
        d = {"path": path, "raw": "", "headers": []}
        seen = len(ts.tees) if ts else 0
        try:
            if ts is None:
                c.connect()
                ts = TeeSocket(c.sock)
                c.sock = ts
            method, _, target = path.rpartition(":")
            c.request(method or "GET", target, headers={"X-Internal-Auth": "req-secret"})
            r = c.getresponse()
            body = r.read()
            d.update(status=r.status, headers=r.getheaders(), body=body.decode("latin-1"))
        except Exception as e:  # what went wrong is the check's to judge
            d["error"] = "%s: %s" % (type(e).__name__, e)
            rc = 1
        if ts:
            d["raw"] = b"".join(bytes(t.data) for t in ts.tees[seen:]).decode("latin-1")
        if not keep or "error" in d:
            c.close()
            c = None
        print(json.dumps(d), flush=True)
        if keep and "error" in d:
            break  # the kept connection is gone: the origin expects no other
    return rc


def client_raw(host, port, request, want):
    """Send @request at once, read up to @want bytes (or to EOF, or 5 s)."""
    import socket
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(5)
    d = {"raw": ""}
    got = b""
    try:
        s.connect((host, port))
        s.sendall(request)
        while len(got) < want:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except OSError as e:
        d["error"] = "%s: %s" % (type(e).__name__, e)
    d["raw"] = got.decode("latin-1")
    print(json.dumps(d), flush=True)
    s.close()
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--dev", required=True, help="the server namespace's interface")
    r.add_argument("--dst-mac", required=True, help="the client's MAC address")
    r.add_argument("--client-ns", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--place", required=True)
    r.add_argument("--fam", type=int, choices=(4, 6), default=4)
    r.add_argument("--out", required=True, help="results, appended (JSON lines)")
    r.add_argument("--case", action="append", default=[])
    r.add_argument("--control", action="store_true", help="no hdrstrip: the attacks must leak")
    r.add_argument("--stats-ns")
    r.add_argument("--stats-dev")
    r.add_argument("--hdrstrip", default=os.environ.get("HDRSTRIP", "hdrstrip"))
    j = sub.add_parser("judge")
    j.add_argument("results")
    j.add_argument("--failed", help="write the failed cases here, one per line")
    sub.add_parser("cases")
    h = sub.add_parser("client-http")
    h.add_argument("host")
    h.add_argument("port", type=int)
    h.add_argument("paths", nargs="+")
    h.add_argument("--keep", action="store_true", help="one connection for every path")
    w = sub.add_parser("client-raw")
    w.add_argument("host")
    w.add_argument("port", type=int)
    w.add_argument("request", help="hex")
    w.add_argument("want", type=int)
    a = ap.parse_args()
    if a.cmd == "run":
        return run(a)
    if a.cmd == "judge":
        return judge(a)
    if a.cmd == "client-http":
        return client_http(a.host, a.port, a.paths, a.keep)
    if a.cmd == "client-raw":
        return client_raw(a.host, a.port, bytes.fromhex(a.request), a.want)
    for c in CASES:
        print("%-16s class %d %-10s %s%s" % (c.cid, c.cls, ",".join(c.clients), c.what,
                                              " (control: must leak)" if c.attack else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
