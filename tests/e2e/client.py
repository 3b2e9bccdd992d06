#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Raw HTTP client for the end-to-end tests: sends exact bytes.

The request is either a file (--request FILE, sent byte for byte) or built
from the options (request line, then each -H line in order with CRLF, an
empty line and the --body). -H @pad:COUNT:SIZE adds COUNT benign lines of
SIZE bytes each ("X-Pad-0001: aaa..."). --save FILE writes the bytes sent.

--warmup N first sends N requests with bodies on the same connection, so
that the server's receive window grows: TCP caps a segment at half the
largest window the peer has shown, and a new connection's is at most 64 KiB.
--split 120,300 sends the request in pieces cut at those byte offsets, with
TCP_NODELAY and --pause seconds between pieces; --maxseg N sets TCP_MAXSEG
before connecting. The response (status line, headers, body) is printed.

Exit status: 0 a complete response arrived; 3 timed out (nothing, or an
incomplete response); 4 connection refused, reset or closed without a
response; 2 bad usage.
"""
import argparse
import socket
import sys
import time


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


def read_response(sock):
    """Read one response; returns (bytes, complete)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return buf, False
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    length = None
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None:  # read to the end
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return buf, True
            buf += chunk
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return buf, False
        body += chunk
        buf += chunk
    return buf, True


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("addr")
    ap.add_argument("port", type=int)
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
    ap.add_argument("--print-offset", metavar="BYTES",
                    help="print where BYTES start in the request and exit")
    ap.add_argument("--body-only", action="store_true", help="print only the response body")
    a = ap.parse_args()

    if a.request:
        with open(a.request, "rb") as f:
            req = f.read()
    else:
        if a.host is None and not a.no_host:
            a.host = "[%s]" % a.addr if ":" in a.addr else a.addr
        if a.no_host:
            a.host = None
        req = build_request(a)
    if a.print_offset:
        off = req.find(a.print_offset.encode("latin-1"))
        if off < 0:
            print("client: %r is not in the request" % a.print_offset, file=sys.stderr)
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

    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    sock = socket.socket(fam, socket.SOCK_STREAM)
    sock.settimeout(a.timeout)
    if a.maxseg:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.maxseg)
    if a.sndbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, a.sndbuf)
    if len(pieces) > 1:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.connect((a.addr, a.port))
        host = a.host or ("[%s]" % a.addr if ":" in a.addr else a.addr)
        for _ in range(a.warmup):
            sock.sendall(b"POST /warmup HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n"
                         % (host.encode(), a.warmup_body) + b"w" * a.warmup_body)
            _, ok = read_response(sock)
            if not ok:
                print("client: no answer to a warm-up request", file=sys.stderr)
                return 3
        for i, p in enumerate(pieces):
            if i:
                time.sleep(a.pause)
            sock.sendall(p)
        resp, complete = read_response(sock)
    except socket.timeout:
        print("client: timed out after %.1fs" % a.timeout, file=sys.stderr)
        return 3
    except (ConnectionRefusedError, ConnectionResetError, BrokenPipeError) as e:
        print("client: %s" % e, file=sys.stderr)
        return 4
    finally:
        sock.close()
    if not resp:
        print("client: connection closed without a response", file=sys.stderr)
        return 4
    if not complete:
        print("client: incomplete response", file=sys.stderr)
        sys.stdout.buffer.write(resp)
        return 3
    if a.body_only:
        resp = resp.partition(b"\r\n\r\n")[2]
    sys.stdout.buffer.write(resp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
