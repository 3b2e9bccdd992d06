#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Client for the proxy-mode tests: sends requests the way a proxy might
(whole, pipelined in one send(), in random pieces, one byte per send()) to
servers/echo.py, which answers each request with the exact bytes it got, and
checks every byte of every answer against the request as sent minus its
internal field lines (or unchanged, with --expect unchanged).

    proxy_client.py ADDR PORT --set NAME [--list FILE] [--send MODE] ...

--set: basic (internal lines in many spellings, continuation lines, names
that only look internal), origin (basic's lines without continuations, as a
GET and a POST: what every origin of lib.sh parses), post (a body holding text that looks like internal
field lines and like a second request), pipeline (three requests, one with a
body), drop (a line with a drop rule), update (one name of each of two
lists), typical (about 700 bytes, 20 field lines, 2 internal), many (80
internal lines in two requests), big (a 70 KiB header block, a 177 KB body),
longname (a name that may still be internal, longer than 64 KiB), fill and
fillwindow (40 and 3,500 internal lines in a row), threewalks (after a
request, a 65,456-byte line that takes the scanner more than one step a
byte, then a request with an internal line; with --send pipelined, one
send()).
--send: whole (a send() per request, each answer read before the next
request; keep-alive), pipelined (every request in one send()), random
(pieces of 1..--max-piece bytes, --seed, printed), bytes (one per send()).
--repeat N sends the set N times, on one connection (--conns one) or a new
connection each time (--conns new); with --stop FILE, on until FILE exists
(--progress FILE: the rounds done so far).
The expected bytes come from a naive reading of --list (check_report.py's):
a line whose name is listed goes, with the continuation lines after it;
nothing else changes. With --alt-list, each answer must match one of the two
lists exactly (an update in flight: never a mix); the count of each is
printed. --expect-eacces: the send must fail with EACCES (a drop rule).
--ready FILE / --gate FILE: connect, make READY, wait for GATE, then send;
with --gate-at TEXT, the bytes up to the middle of TEXT go before the gate.
--send sendfile: every request in one sendfile() from a file; --send cut
--cut-after-line TEXT: two send()s, the first ending with the line that
holds TEXT. --fastopen:
each connection opened by sendto(MSG_FASTOPEN) of its requests (TCP Fast
Open; the data leaves with, or right after, the SYN).
--cookie-file FILE: write the socket's cookie (SO_COOKIE) there once
connected. --save-dir DIR keeps each request (DIR/sent.N) and the body of
its answer (DIR/resp.N); with --no-check the server need not be an echo
origin (the test compares the reports itself, with check_report.py).

Exit status: 0 every answer as expected; 1 a mismatch; 3 timeout or an
incomplete answer; 4 connection error; 2 bad usage.
"""
import argparse
import errno
import os
import random
import socket
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_report import esc, lookup, read_list  # noqa: E402

SO_COOKIE = 57


def req(head_lines, body=b"", host=b"origin"):
    """A request from its request line and field lines (CRLF ends)."""
    lines = [head_lines[0], b"Host: " + host] + list(head_lines[1:])
    if body:
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


POST_BODY = (b"first line of the body\r\n"
             b"X-Internal-Auth: this is body text, not a field\r\n"
             b"x-edge-secret-key: also body text\r\n"
             b"\r\n"
             b"GET /not-a-request HTTP/1.1\r\n"
             b"X-Internal-Tenant: still body text\r\n"
             b"\r\n")


def request_set(name):
    if name == "basic":
        return [req([b"GET /basic?x-internal-auth=q HTTP/1.1",
                     b"User-Agent: hdrstrip-e2e",
                     b"X-Internal-Auth: secret-1",
                     b"Accept: */*",
                     b"x-internal-tenant: t-42",
                     b"X-Edge-Secret-Key: k1",
                     b"X_Internal_Auth: underscored",
                     b"X-INTERNAL-AUTH: upper case",
                     b"X-Internal-Authority: kept, a longer name",
                     b"X-Internal: kept, a shorter name",
                     b"X-Edge-Secret: kept, no dash after the prefix",
                     b"X-Internal-Tenant: folded",
                     b" continuation of an internal line",
                     b"\tand another one",
                     b"X-Keep: value naming X-Internal-Auth: inside",
                     b"X-Fold-Keep: a",
                     b" b continues a kept field",
                     b"x-edge-secret-: empty rest of the prefix",
                     b"Accept-Language: en"])]
    if name == "origin":
        # What every origin of lib.sh parses (no obs-fold): the field lines
        # of basic, as a GET and as a POST.
        fields = [l for l in request_set("basic")[0].split(b"\r\n\r\n")[0].split(b"\r\n")[2:]
                  if l[:1] not in (b" ", b"\t")]
        return [req([b"GET /origin HTTP/1.1"] + fields),
                req([b"POST /origin HTTP/1.1"] + fields, POST_BODY)]
    if name == "post":
        return [req([b"POST /upload HTTP/1.1",
                     b"Content-Type: text/plain",
                     b"X-Internal-Auth: secret-2",
                     b"X-Request-Id: r-1"], POST_BODY)]
    if name == "pipeline":
        return [req([b"GET /one HTTP/1.1", b"X-Internal-Auth: p1", b"X-Keep: 1"]),
                req([b"POST /two HTTP/1.1", b"X-Keep: 2", b"x-edge-secret-a: p2"], POST_BODY),
                req([b"GET /three HTTP/1.1", b"X-Internal-Tenant: p3", b"X-Keep: 3",
                     b"X-Internal-Auth: p3b"])]
    if name == "drop":
        return [req([b"GET /drop HTTP/1.1", b"X-Keep: d", b"X-Kill-Switch: on",
                     b"X-Internal-Auth: d"])]
    if name == "update":
        # The lines of two lists interleaved, and one line in both.
        return [req([b"GET /update HTTP/1.1", b"X-List-A-1: a1", b"X-List-B-1: b1",
                     b"X-Common-Secret: both", b"X-List-A-2: a2", b"X-Keep: u",
                     b"X-List-B-2: b2", b"X-List-A-3: a3", b"X-List-B-3: b3"])]
    if name == "typical":
        return [typical_request()]
    if name == "longname":
        # A field name that could still be internal (x-edge-secret-*) and
        # goes on past the 64 KiB the program scans: never decided.
        return [req([b"GET /longname HTTP/1.1", b"X-Keep: l",
                     b"X-Edge-Secret-" + b"a" * 70000 + b": value", b"X-Keep-2: l"])]
    if name == "fill":
        # 40 internal lines right at the start of a send() (with --send
        # cut --cut-after-line Host), then more: one run of the program
        # takes out a bounded number of ranges and must see the rest.
        return [req([b"GET /fill HTTP/1.1"] + [b"X-Internal-Auth: fill-%02d" % i for i in range(40)]
                    + [b"X-Internal-Tenant: after-the-first-run", b"X-Keep: k"])]
    if name == "fillwindow":
        # The same with more internal lines than the 64 KiB the program
        # scans at once: nothing of that window is kept.
        return [req([b"GET /fill HTTP/1.1"] + [b"X-Internal-Auth: fill-%04d" % i for i in range(3500)]
                    + [b"X-Internal-Tenant: after-the-window", b"X-Keep: k"])]
    if name == "threewalks":
        # test_three_walks_one_line's buffer (tests/unit/test_fuzz_regress.c)
        # as a line after a request (a desync): HS_MAX_BUF - 16 bytes
        # (include/hdrstrip/scan.h), a name that a prefix rule
        # (x-edge-secret-*) matches whatever follows, two thirds of the
        # bytes blanks, then "b c" and 'z' to the end. Read as a request
        # line, then again line by line when it is none, the blanks take a
        # step each both times: a scan of the window it ends takes about
        # 1.38 steps a byte. The request after it carries an internal line.
        n = 0xffc0 - 16
        line = b"x-edge-secret-a" + b" " * (n * 2 // 3) + b"b c"
        line += b"z" * (n - len(line))
        return [req([b"GET /three-walks-1 HTTP/1.1", b"X-Keep: 1"]),
                line + b"\r\n" + req([b"GET /three-walks-2 HTTP/1.1",
                                       b"X-Internal-Auth: after-the-blanks", b"X-Keep: 2"])]
    if name == "many":
        # More internal lines in one send() than one run of the program
        # takes out (bpf/proxy.bpf.c: HS_MAX_RM ranges).
        fields = []
        for i in range(40):
            fields += [b"X-Internal-Auth: many-%02d" % i, b"X-Keep-%02d: k" % i]
        return [req([b"GET /many HTTP/1.1"] + fields),
                req([b"GET /many-2 HTTP/1.1"] + fields[:30])]
    if name == "big":
        # A request larger than the program scans in one run (64 KiB),
        # internal lines before, across and after that mark.
        fields = [b"X-Internal-Auth: big-first"]
        for i in range(1100):
            fields.append(b"X-Pad-%04d: %s" % (i, b"p" * 48))
            if i % 100 == 99:
                fields.append(b"X-Internal-Tenant: big-%d" % i)
        return [req([b"GET /big HTTP/1.1"] + fields + [b"X-Internal-Auth: big-last"]),
                req([b"POST /big-body HTTP/1.1", b"X-Internal-Auth: b"], POST_BODY * 1000)]
    raise SystemExit("proxy_client: unknown --set %s" % name)


def typical_request():
    """What a proxy sends upstream: about 700 bytes, 20 field lines (the
    Host line included), 2 of them internal."""
    fields = [b"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Firefox/128.0",
              b"Accept: text/html,application/xhtml+xml,*/*;q=0.8",
              b"Accept-Language: en-US,en;q=0.5",
              b"Accept-Encoding: gzip, deflate",
              b"Referer: http://www.example.com/catalogue/page/2",
              b"Cookie: session=4f1c2a9e8b7d6c5e; theme=dark",
              b"X-Forwarded-For: 203.0.113.7",
              b"X-Forwarded-Proto: https",
              b"X-Request-Id: 0b6e4a2c-4f1e-4c1a-9d2b-7f3e5a6c8d90",
              b"X-Internal-Auth: svc-edge:7d9f1e2a3b4c5d6e",
              b"Via: 1.1 edge-proxy",
              b"Cache-Control: no-cache",
              b"Pragma: no-cache",
              b"DNT: 1",
              b"Upgrade-Insecure-Requests: 1",
              b"X-Internal-Tenant: tenant-0042",
              b"Sec-Fetch-Mode: navigate",
              b"Sec-Fetch-Site: same-origin",
              b"Connection: keep-alive"]
    return req([b"GET /catalogue/item/12345?ref=home HTTP/1.1"] + fields,
               host=b"www.example.com")


def strip(request, rules, fold):
    """@request with every listed field line removed, with the continuation
    lines that follow it; the request line and the body stay."""
    end = request.index(b"\r\n\r\n")
    lines = request[:end].split(b"\r\n")
    out, dropping = [lines[0]], False
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):
            if not dropping:
                out.append(line)
            continue
        name = line.split(b":", 1)[0].decode("latin-1")
        dropping = lookup(rules, fold, name) is not None
        if not dropping:
            out.append(line)
    return b"\r\n".join(out) + request[end:]


def split_requests(data):
    """Requests one after the other, framed by Content-Length."""
    out = []
    while data:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            out.append(data)
            break
        n = 0
        for line in data[:end].split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                n = int(v.strip())
        out.append(data[:end + 4 + n])
        data = data[end + 4 + n:]
    return out


class Reader:
    """Responses of servers/echo.py, one at a time."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _more(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionResetError("connection closed by the server")
        self.buf += chunk

    def body(self):
        while b"\r\n\r\n" not in self.buf:
            self._more()
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        n = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                n = int(v.strip())
        while len(rest) < n:
            self._more()
            rest = self.buf.partition(b"\r\n\r\n")[2]
        self.buf = rest[n:]
        return rest[:n]


def show(what, data):
    for line in data.split(b"\n"):
        print("    %-9s| %s" % (what, esc(line)))


def pieces(data, mode, rng, max_piece, cut_after_line=None):
    if mode == "cut":
        i = data.find(cut_after_line.encode("latin-1"))
        if i < 0:
            raise SystemExit("proxy_client: --cut-after-line text not in the request")
        i = data.index(b"\n", i) + 1
        return [data[:i], data[i:]]
    if mode == "bytes":
        return [data[i:i + 1] for i in range(len(data))]
    if mode == "random":
        out, i = [], 0
        while i < len(data):
            k = rng.randint(1, max_piece)
            out.append(data[i:i + k])
            i += k
        return out
    return [data]


def send_all(sock, parts, mode):
    if mode == "sendfile":
        with tempfile.TemporaryFile() as f:
            f.write(b"".join(parts))
            f.flush()
            size, off = f.tell(), 0
            while off < size:
                off += os.sendfile(sock.fileno(), f.fileno(), off, size - off)
        return
    for p in parts:
        sock.sendall(p)


MSG_FASTOPEN = 0x20000000


def connect(a, fam, first=None):
    """A connection; with @first, the connection is opened by sending it
    (TCP Fast Open: sendto(MSG_FASTOPEN) on a blocking socket)."""
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if first is None:
        s.settimeout(a.timeout)
        s.connect((a.addr, a.port))
    else:
        sent = s.sendto(first, MSG_FASTOPEN, (a.addr, a.port))
        s.settimeout(a.timeout)
        if sent < len(first):
            s.sendall(first[sent:])
    if a.cookie_file:
        cookie = struct.unpack("=Q", s.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8))[0]
        with open(a.cookie_file, "w") as f:
            f.write("%d\n" % cookie)
    return s


def wait_for(path, timeout):
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > end:
            raise socket.timeout("no %s" % path)
        time.sleep(0.01)


class Checker:
    def __init__(self, a):
        self.expect_unchanged = a.expect == "unchanged"
        self.lists = []
        for path in [a.list, a.alt_list]:
            if path:
                self.lists.append((path,) + read_list(path))
        self.seen = [0] * max(1, len(self.lists))
        self.n = 0
        self.save_dir = a.save_dir
        self.no_check = a.no_check

    def expected(self, request):
        if self.expect_unchanged or not self.lists:
            return [request]
        return [strip(request, rules, fold) for _, rules, fold in self.lists]

    def check(self, request, got):
        self.n += 1
        if self.save_dir:
            for what, data in (("sent", request), ("resp", got)):
                with open(os.path.join(self.save_dir, "%s.%d" % (what, self.n)), "wb") as f:
                    f.write(data)
        if self.no_check:
            return True
        want = self.expected(request)
        for i, w in enumerate(want):
            if got == w:
                self.seen[i] += 1
                return True
        print("proxy_client: request %d: the origin got other bytes than expected" % self.n)
        w = want[0]
        i = next((k for k in range(min(len(w), len(got))) if w[k] != got[k]), min(len(w), len(got)))
        line = w.rfind(b"\n", 0, i) + 1
        print("proxy_client: first difference at byte %d: expected %s, got %s"
              % (i, esc(w[line:w.find(b"\r", i)]), esc(got[line:got.find(b"\r", i)])))
        show("sent", request)
        for i, w in enumerate(want):
            show("expected" if len(want) == 1 else "list %d" % (i + 1), w)
        show("got", got)
        return False


def run(a):
    reqs = request_set(a.set)
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    rng = random.Random(a.seed)
    if a.send == "random":
        print("proxy_client: random pieces of 1..%d bytes, seed %d" % (a.max_piece, a.seed))
    chk = Checker(a)
    ok, sock, reader = True, None, None
    try:
        rep = 0
        while rep < a.repeat or (a.stop and not os.path.exists(a.stop)):
            if a.progress and rep % 50 == 0:
                with open(a.progress + ".tmp", "w") as f:
                    f.write("%d\n" % rep)
                os.rename(a.progress + ".tmp", a.progress)
            stream = b"".join(reqs)
            if sock is None or a.conns == "new":
                if sock:
                    sock.close()
                first = None
                if a.fastopen:
                    first, stream = stream, b""
                elif rep == 0 and a.gate_at:
                    # Up to the middle of GATE_AT before the gate: the
                    # connection waits with a line cut inside its name.
                    cut = stream.find(a.gate_at.encode("latin-1"))
                    if cut < 0:
                        raise SystemExit("proxy_client: --gate-at text not in the request")
                    cut += len(a.gate_at) // 2
                    first, stream = stream[:cut], stream[cut:]
                sock = connect(a, fam, first if a.fastopen else None)
                if first is not None and not a.fastopen:
                    sock.sendall(first)
                reader = Reader(sock)
                if rep == 0 and a.ready:
                    with open(a.ready, "w"):
                        pass
                if rep == 0 and a.gate:
                    wait_for(a.gate, a.gate_timeout)
            if a.expect_eacces:
                try:
                    send_all(sock, pieces(stream, a.send, rng, a.max_piece, a.cut_after_line), a.send)
                except PermissionError as e:
                    if e.errno == errno.EACCES:
                        print("proxy_client: send() failed with EACCES, as expected")
                        return 0
                    raise
                print("proxy_client: send() succeeded; expected EACCES")
                return 1
            if a.send == "whole" and len(stream) == sum(len(r) for r in reqs):
                for r in reqs:
                    sock.sendall(r)
                    ok &= chk.check(r, reader.body())
            else:
                send_all(sock, pieces(stream, a.send, rng, a.max_piece, a.cut_after_line), a.send)
                for r in reqs:
                    ok &= chk.check(r, reader.body())
            if not ok:
                break
            rep += 1
    except socket.timeout as e:
        print("proxy_client: timed out (%s) after %d answers" % (e, chk.n))
        return 3
    except OSError as e:
        print("proxy_client: %s after %d answers" % (e, chk.n))
        return 4
    finally:
        if sock:
            sock.close()
    if not ok:
        return 1
    detail = ""
    if len(chk.lists) > 1:
        detail = "; matching " + ", ".join("%s: %d" % (os.path.basename(p), n)
                                           for (p, _, _), n in zip(chk.lists, chk.seen))
    print("proxy_client: %d answers as expected (%s)%s"
          % (chk.n, "unchanged" if chk.expect_unchanged else "internal lines removed", detail))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("addr")
    ap.add_argument("port", type=int)
    ap.add_argument("--set", required=True)
    ap.add_argument("--list")
    ap.add_argument("--alt-list")
    ap.add_argument("--expect", choices=("removed", "unchanged"), default="removed")
    ap.add_argument("--send", choices=("whole", "pipelined", "random", "bytes", "sendfile", "cut"),
                    default="whole")
    ap.add_argument("--cut-after-line", metavar="TEXT",
                    help="--send cut: two send()s, the first ending with the line holding TEXT")
    ap.add_argument("--gate-at", metavar="TEXT",
                    help="with --gate: send up to the middle of TEXT before waiting")
    ap.add_argument("--fastopen", action="store_true",
                    help="open each connection with sendto(MSG_FASTOPEN) of its requests")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--max-piece", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--conns", choices=("one", "new"), default="one")
    ap.add_argument("--stop", help="after --repeat rounds, go on until this file exists")
    ap.add_argument("--progress", help="write the number of rounds done here, now and then")
    ap.add_argument("--expect-eacces", action="store_true")
    ap.add_argument("--ready")
    ap.add_argument("--gate")
    ap.add_argument("--gate-timeout", type=float, default=60.0)
    ap.add_argument("--cookie-file")
    ap.add_argument("--save-dir", help="write each request (sent.N) and answer body (resp.N) here")
    ap.add_argument("--no-check", action="store_true",
                    help="the server is no echo origin: only save (--save-dir)")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--print-set", action="store_true",
                    help="write the set's requests to stdout and exit")
    a = ap.parse_args()
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1 << 31)
    if a.expect == "removed" and not a.list and not a.print_set and not a.no_check:
        ap.error("--list is needed to know what to remove (or --expect unchanged)")
    if a.print_set:
        sys.stdout.buffer.write(b"".join(request_set(a.set)))
        return 0
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
