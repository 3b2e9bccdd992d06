#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Raw HTTP client for the end-to-end tests: sends exact bytes.

    client.py ADDR PORT[,PORT...] [options]

The request is either a file (--request FILE, sent byte for byte) or built
from the options (request line, then each -H line in order with CRLF, an
empty line and the --body). -H @pad:COUNT:SIZE adds COUNT benign lines of
SIZE bytes each ("X-Pad-0001: aaa..."). --save FILE writes the bytes sent.
--print-offset BYTES (repeatable) prints where BYTES start in the request.

--warmup N first sends N requests with bodies on the same connection, so
that the server's receive window grows: TCP caps a segment at half the
largest window the peer has shown, and a new connection's is at most 64 KiB.
--split 120,300 sends the request in pieces cut at those byte offsets, with
TCP_NODELAY and --pause seconds between pieces; --maxseg N sets TCP_MAXSEG
before connecting. The response (status line, headers, body) is printed;
with --responses N (pipelined requests), N responses one after the other.

--check LIST checks each answer against the request in-process, as
check_report.py --list LIST does (with --premask-ok and --pipelined), and
prints the verdict instead of the response. With several ports the request
goes to each in turn (one Python start for all the origins).

Exit status: 0 a complete response arrived (and passed --check) from every
port; 3 timed out (nothing, or an incomplete response); 4 connection
refused, reset or closed without a response; 5 a --check failed; 2 bad
usage. With several ports, the first failure's status.
"""
import argparse
import socket
import struct
import sys
import time

import check_report


def build_request(a):
    lines = [("%s %s %s" % (a.method, a.path, a.version)).encode()]
    if a.host is not None:
        lines.append(b"Host: " + a.host.encode())
    for h in a.header:
        if h.startswith("@pad:"):
            _, count, size = h.split(":")
            for i in range(int(count)):
                prefix = b"X-Pad-%04d: " % (i + 1)
                lines.append(prefix + b"a" * max(1, int(size) - len(prefix)))
        else:
            lines.append(h.encode("latin-1"))
    body = a.body.encode("latin-1") if a.body else b""
    if body:
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class Reader:
    """Responses from a socket one at a time; bytes of the next one are kept."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def _more(self):
        chunk = self.sock.recv(65536)
        self.buf += chunk
        return bool(chunk)

    def _take(self, n, complete):
        out, self.buf = self.buf[:n], self.buf[n:]
        return out, complete

    def response(self):
        """Read one response; returns (bytes, complete)."""
        while b"\r\n\r\n" not in self.buf:
            if not self._more():
                return self._take(len(self.buf), False)
        head = self.buf.partition(b"\r\n\r\n")[0]
        length = None
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        if length is None:  # read to the end
            while self._more():
                pass
            return self._take(len(self.buf), True)
        total = len(head) + 4 + length
        while len(self.buf) < total:
            if not self._more():
                return self._take(len(self.buf), False)
        return self._take(total, True)


def exchange(a, port, host, pieces):
    """One connection: warm-up, the pieces, the answers. Returns (status,
    response bytes) with the exit status of one port."""
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    sock = socket.socket(fam, socket.SOCK_STREAM)
    sock.settimeout(a.timeout)
    if a.maxseg:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.maxseg)
    if a.sndbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, a.sndbuf)
    if len(pieces) > 1:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    resp, complete = b"", True
    stage = "a warm-up request"
    try:
        sock.connect((a.addr, port))
        reader = Reader(sock)
        for _ in range(a.warmup):
            sock.sendall(b"POST /warmup HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n"
                         % (host.encode(), a.warmup_body) + b"w" * a.warmup_body)
            _, ok = reader.response()
            if not ok:
                print("client: no answer to a warm-up request", file=sys.stderr)
                return 3, b""
        stage = "the request"
        for i, p in enumerate(pieces):
            if i:
                time.sleep(a.pause)
            sock.sendall(p)
        for _ in range(a.responses):
            one, complete = reader.response()
            resp += one
            if not complete:
                break
    except socket.timeout:
        print("client: :%d: timed out after %.1fs (%s)" % (port, a.timeout, stage),
              file=sys.stderr)
        return 3, resp
    except (ConnectionRefusedError, ConnectionResetError, BrokenPipeError) as e:
        print("client: :%d: %s" % (port, e), file=sys.stderr)
        return 4, resp
    finally:
        if a.abort:
            # A reset now: nothing left unsent reaches the server later.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    if not resp:
        print("client: :%d: connection closed without a response" % port, file=sys.stderr)
        return 4, resp
    if not complete:
        print("client: :%d: incomplete response" % port, file=sys.stderr)
        return 3, resp
    return 0, resp


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("addr")
    ap.add_argument("ports", help="PORT, or PORT,PORT,... to send the request to each")
    ap.add_argument("--request", help="file with the exact request bytes")
    ap.add_argument("--method", default="GET")
    ap.add_argument("--path", default="/")
    ap.add_argument("--version", default="HTTP/1.1")
    ap.add_argument("--host", help="value of a Host line put first (default: ADDR)")
    ap.add_argument("--no-host", action="store_true")
    ap.add_argument("-H", "--header", action="append", default=[])
    ap.add_argument("--body", default="")
    ap.add_argument("--save", help="write the request bytes here")
    ap.add_argument("--split", default="", help="byte offsets to cut the request at")
    ap.add_argument("--pause", type=float, default=0.05)
    ap.add_argument("--maxseg", type=int, default=0)
    ap.add_argument("--sndbuf", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=3.0)
    ap.add_argument("--warmup", type=int, default=0, metavar="N",
                    help="first send N requests with a --warmup-body on the same connection "
                    "and read their answers: the server's receive window grows with them")
    ap.add_argument("--warmup-body", type=int, default=32768, metavar="BYTES")
    ap.add_argument("--abort", action="store_true",
                    help="close with a reset: bytes the kernel still holds are never sent "
                    "(a request a test gave up on must not reach the server later)")
    ap.add_argument("--print-offset", metavar="BYTES", action="append", default=[],
                    help="print where BYTES start in the request and exit (repeatable)")
    ap.add_argument("--body-only", action="store_true", help="print only the response body")
    ap.add_argument("--responses", type=int, default=1, metavar="N",
                    help="read N responses (the request holds N pipelined requests)")
    ap.add_argument("--check", metavar="LIST", help="check each answer against LIST")
    ap.add_argument("--premask-ok", action="store_true", help="with --check: see check_report")
    ap.add_argument("--resync-ok", action="store_true", help="with --check: see check_report")
    ap.add_argument("--pipelined", action="store_true", help="with --check: see check_report")
    a = ap.parse_args()
    try:
        ports = [int(p) for p in a.ports.split(",")]
    except ValueError:
        print("client: bad port list %r" % a.ports, file=sys.stderr)
        return 2

    host = a.host or ("[%s]" % a.addr if ":" in a.addr else a.addr)
    if a.request:
        with open(a.request, "rb") as f:
            req = f.read()
    else:
        a.host = None if a.no_host else host
        req = build_request(a)
    if a.print_offset:
        for text in a.print_offset:
            off = req.find(text.encode("latin-1"))
            if off < 0:
                print("client: %r is not in the request" % text, file=sys.stderr)
                return 2
            print(off)
        return 0
    if a.save:
        with open(a.save, "wb") as f:
            f.write(req)

    cuts = sorted(int(x) for x in a.split.split(",") if x)
    if any(c <= 0 or c >= len(req) for c in cuts):
        print("client: --split offsets must be inside the request (1..%d)" % (len(req) - 1),
              file=sys.stderr)
        return 2
    pieces, prev = [], 0
    for c in cuts + [len(req)]:
        pieces.append(req[prev:c])
        prev = c

    first_bad = 0
    for port in ports:
        rc, resp = exchange(a, port, host, pieces)
        if a.check:
            if rc == 0 and check_report.check(req, resp, a.check, premask_ok=a.premask_ok, resync_ok=a.resync_ok,
                                              pipelined=a.pipelined):
                rc = 5
        else:
            if a.body_only:
                resp = resp.partition(b"\r\n\r\n")[2]
            sys.stdout.buffer.write(resp)
            sys.stdout.flush()
        first_bad = first_bad or rc
    return first_bad


if __name__ == "__main__":
    sys.exit(main())
