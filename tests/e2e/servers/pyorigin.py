#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Origin servers for the end-to-end tests, in Python.

--mode http: Python's http.server (BaseHTTPRequestHandler). The handler's
    input is recorded line by line as http.client's header parser reads it,
    so the report shows the raw field lines that ended up in self.headers,
    in order, and then self.headers itself (app-header lines).
--mode simple: Python's SimpleHTTPRequestHandler over --dir, as it is:
    it serves files to GET and HEAD and never reads a request's body (so
    an origin that reads less than the framing says: the body of a GET is
    its next request). The report of what it read (request line, field
    lines, self.headers) goes to the --log file only; the answer is the
    file.
--mode raw: a plain socket server that reads a request's bytes up to the
    empty line and reports every line as received. It stands behind nginx
    (proxy_pass), so its report shows what nginx accepted and forwarded.

Every report (format in servers/origin.js) is sent as the response body and
appended to the --log file.
"""
import argparse
import hashlib
import http.server
import select
import socket
import socketserver
import sys
import threading
import time

LOG_LOCK = threading.Lock()


def esc(raw: bytes) -> str:
    out = []
    for b in raw:
        if b == 0x5C:
            out.append("\\\\")
        elif b < 0x20 or b > 0x7E:
            out.append("\\x%02x" % b)
        else:
            out.append(chr(b))
    return "".join(out)


def strip_eol(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2]
    if line.endswith(b"\n") or line.endswith(b"\r"):
        return line[:-1]
    return line


def make_report(server, request_line, header_lines, body, app_headers=()):
    lines = ["server: " + server, "request: " + esc(strip_eol(request_line))]
    lines += ["header: " + esc(strip_eol(h)) for h in header_lines]
    lines += ["app-header: %s: %s" % (esc(n.encode("latin-1", "replace")),
                                      esc(v.encode("latin-1", "replace"))) for n, v in app_headers]
    lines += ["body-bytes: %d" % len(body), "body-sha256: " + hashlib.sha256(body).hexdigest(),
              "end", ""]
    return "\n".join(lines).encode("ascii")


def write_log(path, report):
    with LOG_LOCK, open(path, "ab") as f:
        f.write(report)


class Recorder:
    """Wraps the handler's rfile and keeps every line read from it.

    In origin mode a blocking read can fail with EAGAIN (the kernel's
    tcp_bpf_recvmsg_parser(), when the reader wakes for bytes the sk_skb
    program has not taken yet: README, "A blocking read can return
    EAGAIN"). Python's socket file takes that for "no data": readline()
    returns the part of a line it has, read() fewer bytes, and http.server
    would serve half a head as a request. These origins stand for Python's
    parser, not its socket file, so they wait and read on, as an event loop
    does (and as servers/readpaths.py does), and say so on stderr."""

    WAIT = 10.0  # for the rest of a line the kernel woke the reader for

    def __init__(self, f, sock, tag):
        self.f = f
        self.sock = sock
        self.tag = tag
        self.lines = []

    def _more(self):
        """After a short read: True when more bytes came, False at the end
        of the stream (or after WAIT seconds without a byte)."""
        end = time.monotonic() + self.WAIT
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                return False
            try:
                more = self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
            except BlockingIOError:
                time.sleep(0.01)
                continue
            except OSError:
                return False
            if more:
                sys.stderr.write("%s origin: a short read (EAGAIN), read on\n" % self.tag)
            return more

    def readline(self, limit=-1):
        line = self.f.readline(limit)
        while not line.endswith(b"\n") and not 0 < limit <= len(line) and self._more():
            line += self.f.readline(limit - len(line) if limit > 0 else -1)
        self.lines.append(line)
        return line

    def read(self, n=-1):
        data = self.f.read(n) or b""
        while 0 < n and len(data) < n and self._more():
            data += self.f.read(n - len(data)) or b""
        return data

    def __getattr__(self, name):
        return getattr(self.f, name)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_name_tag = "python"
    log_path = "/dev/null"
    extra_headers = []  # --response-header: fields every response carries

    def setup(self):
        super().setup()
        self.rfile = Recorder(self.rfile, self.connection, self.server_name_tag)

    def handle_one_request(self):
        self.rfile.lines = []
        super().handle_one_request()

    def respond(self):
        n = int(self.headers.get("Content-Length", "0") or "0")
        body = self.rfile.read(n) if n > 0 else b""
        rec = self.rfile.lines
        # rec[0] is the request line, then the field lines up to the empty
        # line that ended them (as http.client read them).
        fields = [l for l in rec[1:] if l not in (b"\r\n", b"\n", b"")]
        report = make_report(self.server_name_tag, rec[0], fields, body,
                             self.headers.items())
        write_log(self.log_path, report)
        self.send_response(200)
        for name, value in self.extra_headers:
            self.send_header(name, value)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(report)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(report)

    do_GET = do_POST = do_PUT = do_DELETE = do_OPTIONS = do_HEAD = respond

    def log_message(self, fmt, *args):
        sys.stderr.write("python origin: " + (fmt % args) + "\n")


class SimpleHandler(http.server.SimpleHTTPRequestHandler):
    """SimpleHTTPRequestHandler, keep-alive (HTTP/1.1), reporting what it
    read before it answers as it always does."""
    protocol_version = "HTTP/1.1"
    server_name_tag = "python-simple"
    log_path = "/dev/null"
    extra_headers = []

    def setup(self):
        super().setup()
        self.rfile = Recorder(self.rfile, self.connection, self.server_name_tag)

    def handle_one_request(self):
        self.rfile.lines = []
        super().handle_one_request()

    def report(self):
        rec = self.rfile.lines
        fields = [l for l in rec[1:] if l not in (b"\r\n", b"\n", b"")]
        write_log(self.log_path, make_report(self.server_name_tag, rec[0], fields, b"",
                                             self.headers.items()))

    def do_GET(self):
        self.report()
        super().do_GET()

    def do_HEAD(self):
        self.report()
        super().do_HEAD()

    def end_headers(self):
        for name, value in self.extra_headers:
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, fmt, *args):
        sys.stderr.write("python-simple origin: " + (fmt % args) + "\n")


class DualStackHTTPServer(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


class RawHandler(socketserver.BaseRequestHandler):
    server_name_tag = "nginx"
    log_path = "/dev/null"

    def handle(self):
        sock = self.request
        sock.settimeout(10)
        buf = b""
        while b"\r\n\r\n" not in buf and b"\n\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buf += chunk
        end = buf.find(b"\r\n\r\n")
        sep = 4
        if end < 0:
            end, sep = buf.find(b"\n\n"), 2
        head, rest = buf[:end], buf[end + sep:]
        lines = head.split(b"\n")
        lines = [l[:-1] if l.endswith(b"\r") else l for l in lines]
        length = 0
        for l in lines[1:]:
            name, _, value = l.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip() or b"0")
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        report = make_report(self.server_name_tag, lines[0], lines[1:], rest)
        write_log(self.log_path, report)
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                     b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(report) + report)


class RawServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mode", choices=("http", "simple", "raw"), required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--bind", default="::")
    ap.add_argument("--log", default="/dev/null")
    ap.add_argument("--server-name", default=None)
    ap.add_argument("--dir", default=".", help="the files simple mode serves")
    ap.add_argument("--response-header", action="append", default=[],
                    help="'Name: value' for every response (http and simple modes)")
    a = ap.parse_args()
    if a.mode == "http":
        Handler.extra_headers = [tuple(h.split(": ", 1)) for h in a.response_header]
        Handler.log_path = a.log
        Handler.server_name_tag = a.server_name or "python"
        srv = DualStackHTTPServer((a.bind, a.port), Handler)
    elif a.mode == "simple":
        SimpleHandler.extra_headers = [tuple(h.split(": ", 1)) for h in a.response_header]
        SimpleHandler.log_path = a.log
        SimpleHandler.server_name_tag = a.server_name or "python-simple"
        directory = a.dir
        srv = DualStackHTTPServer(
            (a.bind, a.port),
            lambda *args, **kw: SimpleHandler(*args, directory=directory, **kw))
    else:
        RawHandler.log_path = a.log
        RawHandler.server_name_tag = a.server_name or "raw"
        srv = RawServer((a.bind, a.port), RawHandler)
    print("python origin (%s) listening on %s:%d" % (a.mode, a.bind, a.port), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
