#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Responses end to end: an origin whose responses carry internal fields,
and clients that show exactly what reached them.

  resp_tool.py serve PORT            the origin (keep-alive, any number of
                                     pipelined requests); every response is
                                     a pure function of the request, so a
                                     client knows what was sent
  resp_tool.py pipeline HOST PORT    GET, HEAD, GET with 103, chunked with a
                                     trailer, a benign one, close-delimited:
                                     in one send; reads everything to EOF
  resp_tool.py split HOST PORT K     /split/K: the origin sends the response
                                     in two writes cut at byte K
  resp_tool.py httpclient HOST PORT  Python's http.client: GET, HEAD, GET on
                                     one connection; prints what it parsed
  resp_tool.py fastopen HOST PORT    GET /close in the SYN (TCP Fast Open; a
                                     first connection fetches the cookie), twice
  resp_tool.py bodyreq HOST PORT     to SimpleHTTPRequestHandler (it never reads
                                     a body): a GET /f.txt whose body is a HEAD
                                     /f.txt, then GET /f.txt: three answers, no
                                     internal field in any
The origin's listener takes TCP Fast Open where the namespace lets servers
use it (net.ipv4.tcp_fastopen bit 2).
Clients check the bytes they got against what the origin sent: every line
with an internal field (by name, case-insensitive) comes out masked to the
same length ("y-hdrstrip: xxx" or a cut form of it), every other byte as
sent. They print "ok ..." lines and exit 0, or print what differs and exit 1.
"""
import http.client
import os
import re
import socket
import sys
import time

INTERNAL = (b"x-backend-server", b"x-powered-by", b"x-upstream-addr", b"x-upstream-status")


BIG = b"".join(b"%07d the quick brown fox: jumps over the lazy dog\r\n" % i
               for i in range(20000)) + bytes(range(256)) * 64


def body_for(path):
    if path == "/big":
        return BIG
    return b"hello from " + path.encode() + b"\n"


def response(method, path):
    """The exact bytes the origin sends for one request."""
    body = body_for(path)
    common = (b"Server: hs-origin/1.2\r\n"
              b"X-Backend-Server: origin-7.internal:9000\r\n"
              b"X-Keep: yes\r\n"
              b"x-powered-by: hs-test\r\n")
    if path == "/benign":
        return (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nX-Keep: yes\r\n\r\n" % len(body)
                + (b"" if method == "HEAD" else body))
    if path == "/early":
        return (b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n"
                b"X-Upstream-Addr: 10.9.8.7:443\r\n\r\n"
                b"HTTP/1.1 200 OK\r\n" + common
                + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    if path == "/chunked":
        return (b"HTTP/1.1 200 OK\r\n" + common + b"Transfer-Encoding: chunked\r\n"
                b"Trailer: X-Upstream-Status\r\n\r\n"
                + b"%x\r\n" % len(body) + body + b"\r\n"
                b"0\r\nX-Upstream-Status: 200 from 10.9.8.7\r\n\r\n")
    if path == "/close":
        return b"HTTP/1.1 200 OK\r\n" + common + b"Connection: close\r\n\r\n" + body
    head = (b"HTTP/1.1 200 OK\r\n" + common
            + b"Content-Length: %d\r\n" % len(body) + b"\r\n")
    return head if method == "HEAD" else head + body


def serve(port):
    srv = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    srv.bind(("::", port))
    srv.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
    srv.listen(64)
    import threading

    def conn(c):
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    d = c.recv(65536)
                    if not d:
                        return
                    buf += d
                head, buf = buf.split(b"\r\n\r\n", 1)
                method, path = head.split(b"\r\n")[0].decode().split(" ")[:2]
                m = re.fullmatch(r"/split/(\d+)", path)
                if m:
                    data = response("GET", "/split")
                    k = int(m.group(1))
                    c.sendall(data[:k])
                    time.sleep(0.03)
                    c.sendall(data[k:])
                    continue
                c.sendall(response(method, path))
                if path == "/close":
                    c.shutdown(socket.SHUT_WR)
                    return
        finally:
            c.close()

    while True:
        c, _ = srv.accept()
        threading.Thread(target=conn, args=(c,), daemon=True).start()


def masked_form(line):
    """Is @line (without its line end) a masked line of the same length?"""
    return re.fullmatch(rb"y(-(h(d(r(s(t(r(i(p)?)?)?)?)?)?)?)?)?(: x*)?|y-hdrstrip: x*", line) is not None


# RESP_REMOVED=1: proxy mode, which takes internal lines out whole instead
# of masking them, while it can follow the stream's framing.
REMOVED = os.environ.get("RESP_REMOVED") == "1"


def removed_form(sent):
    """@sent with every internal field line (and its line end) taken out."""
    lines = [line + b"\n" for line in sent.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return b"".join(line for line in lines
                    if line.split(b":", 1)[0].strip().lower() not in INTERNAL)


def interim_end(sent):
    """Where the connection goes line by line: after the first interim
    response other than 100 (len(@sent) when there is none)."""
    m = re.search(rb"HTTP/1\.1 1(?!00)\d\d[^\r\n]*\r\n.*?\r\n\r\n", sent, re.S)
    return m.end() if m else len(sent)


def compare_removed(sent, got, what, line_by_line_from):
    """Proxy mode: internal lines taken out whole up to where the stream
    goes line by line, masked in place from there (same length). One of
    @line_by_line_from (offsets in @sent) must explain @got."""
    first = None
    for cut in line_by_line_from:
        want = removed_form(sent[:cut])
        if got[:len(want)] != want:
            if first is None:
                at = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                          min(len(got), len(want)))
                first = ("%s: got %d bytes; the origin's %d bytes up to %d minus their internal "
                         "lines are %d; first difference at %d: got %r, want %r"
                         % (what, len(got), len(sent), cut, len(want), at,
                            got[max(0, at - 40):at + 40], want[max(0, at - 40):at + 40]))
            continue
        bad, masked = masked_problems(sent[cut:], got[len(want):], what + " (line by line)")
        if bad:
            first = first or "\n".join(bad)
            continue
        return sent[:cut].count(b"\n") - want.count(b"\n") + masked
    print(first)
    sys.exit(1)


def masked_problems(sent, got, what, cut=None):
    bad = []
    if len(sent) != len(got):
        bad.append("%s: got %d bytes, the origin sent %d" % (what, len(got), len(sent)))
    masked = 0
    pos = 0
    for line in sent.split(b"\n"):
        g = got[pos:pos + len(line)]
        name = line.split(b":", 1)[0].strip().lower()
        if name in INTERNAL:
            if not masked_form(g.rstrip(b"\r")):
                bad.append("%s: internal line %r arrived as %r" % (what, line, g))
            masked += 1
        elif g != line:
            name_end = pos + len(line.split(b":", 1)[0])
            if not (cut is not None and pos < cut <= name_end and masked_form(g.rstrip(b"\r"))):
                bad.append("%s: line %r arrived as %r" % (what, line, g))
        pos += len(line) + 1
    for line in got.split(b"\n"):
        if line.split(b":", 1)[0].strip().lower() in INTERNAL:
            bad.append("%s: field line %r reached the client" % (what, line))
    return bad, masked


def compare(sent, got, what, cut=None, maybe_line_by_line=False):
    """The bytes a client got against the bytes the origin sent. With @cut
    (where the origin split its writes), a benign line whose name the cut
    falls in may come out masked too: a name that a response rule could
    still match when its segment ended is rewritten ahead (scan.h). With
    @maybe_line_by_line (proxy mode), the whole of it may have been checked
    line by line (a request the origin's side could not follow)."""
    if REMOVED:
        cuts = [interim_end(sent)] + ([0] if maybe_line_by_line else [])
        return compare_removed(sent, got, what, cuts)
    bad, masked = masked_problems(sent, got, what, cut)
    if bad:
        print("\n".join(bad))
        sys.exit(1)
    return masked


def connect(host, port):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect((host, port))
    return s


def read_all(s):
    out = b""
    while True:
        d = s.recv(65536)
        if not d:
            return out
        out += d


def pipeline(host, port):
    reqs = [("GET", "/a"), ("HEAD", "/b"), ("GET", "/early"), ("GET", "/chunked"),
            ("HEAD", "/c"), ("GET", "/benign"), ("GET", "/close")]
    s = connect(host, port)
    s.sendall(b"".join(b"%s %s HTTP/1.1\r\nHost: h\r\n\r\n" % (m.encode(), p.encode())
                       for m, p in reqs))
    got = read_all(s)
    sent = b"".join(response(m, p) for m, p in reqs)
    n = compare(sent, got, "pipelined")
    print("ok pipelined: %d responses, %d bytes, %d internal lines %s"
          % (len(reqs), len(got), n, "removed" if REMOVED else "masked"))


def split(host, port, k):
    s = connect(host, port)
    s.sendall(b"GET /split/%d HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n" % k)
    sent = response("GET", "/split")
    got = b""
    while len(got) < len(removed_form(sent) if REMOVED else sent):
        d = s.recv(65536)
        if not d:
            break
        got += d
    n = compare(sent, got, "split at %d" % k, cut=k)
    print("ok split at %d: %d internal lines %s" % (k, n, "removed" if REMOVED else "masked"))


def big(host, port):
    """A 1 MiB body (text lines, then every byte value) arrives whole."""
    c = http.client.HTTPConnection(host, port, timeout=20)
    for _ in range(2):
        c.request("GET", "/big")
        r = c.getresponse()
        body = r.read()
        if body != BIG:
            print("/big: %d bytes, %s" % (len(body), "differs" if len(body) == len(BIG) else "short"))
            sys.exit(1)
    print("ok /big twice on one connection: %d bytes each, as sent" % len(BIG))


def httpclient(host, port):
    c = http.client.HTTPConnection(host, port, timeout=10)
    for method, path in (("GET", "/a"), ("HEAD", "/b"), ("GET", "/chunked"), ("GET", "/benign")):
        c.request(method, path)
        r = c.getresponse()
        body = r.read()
        names = [k.lower() for k, _ in r.getheaders()]
        leaked = [n for n in names if n.encode() in INTERNAL]
        want = b"" if method == "HEAD" else body_for(path)
        if leaked or body != want or "x-keep" not in names:
            print("%s %s: headers %s, body %r" % (method, path, names, body))
            sys.exit(1)
        print("ok http.client %s %s: %d %s" % (method, path, r.status, ",".join(names)))


def fastopen(host, port):
    """GET /close sent with the SYN (MSG_FASTOPEN): the first connection without
    a cookie (the request goes after the handshake), then two with it."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    sent = response("GET", "/close")
    for i in range(3):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.sendto(b"GET /close HTTP/1.1\r\nHost: h\r\n\r\n", socket.MSG_FASTOPEN, (host, port))
        s.settimeout(10)
        got = read_all(s)
        s.close()
        n = compare(sent, got, "fast open %d" % i)
        print("ok fast open %d: %d internal lines %s" % (i, n, "removed" if REMOVED else "masked"))


def bodyreq(host, port):
    """The origin answers the HEAD it found in the GET's body: the file, the
    HEAD's head (the file's length, no body), the file. Counted as two
    requests (two GETs), the HEAD's answer would be framed as a GET's, its
    length's bytes (more than a head) taken for its body, and the third
    answer's head with its internal field skipped unchecked."""
    head = b"HEAD /f.txt HTTP/1.1\r\nHost: h\r\n\r\n"
    s = connect(host, port)
    s.sendall(b"GET /f.txt HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n" % len(head) + head +
              b"GET /f.txt HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
    got = read_all(s)
    heads = got.count(b"HTTP/1.1 200 ")
    leaked = [l.strip() for l in got.split(b"\n") if l.strip().lower().startswith(INTERNAL)]
    if leaked or heads != 3 or b"internal" in got:
        print("GET with a HEAD in its body: %d answers, %d bytes, internal lines %r"
              % (heads, len(got), leaked))
        sys.exit(1)
    print("ok GET with a HEAD in its body: 3 answers, %d bytes, no internal field" % len(got))


def main():
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(int(sys.argv[2]))
    elif cmd == "pipeline":
        pipeline(sys.argv[2], int(sys.argv[3]))
    elif cmd == "split":
        split(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "splitall":
        n = len(response("GET", "/split"))
        for k in range(1, n):
            split(sys.argv[2], int(sys.argv[3]), k)
    elif cmd == "big":
        big(sys.argv[2], int(sys.argv[3]))
    elif cmd == "httpclient":
        httpclient(sys.argv[2], int(sys.argv[3]))
    elif cmd == "fastopen":
        fastopen(sys.argv[2], int(sys.argv[3]))
    elif cmd == "bodyreq":
        bodyreq(sys.argv[2], int(sys.argv[3]))
    elif cmd == "length":
        print(len(response("GET", "/split")))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
