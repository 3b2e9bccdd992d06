#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Byte-exact echo origin for the proxy-mode tests.

Reads HTTP/1.1 requests one after the other on each connection (the head up
to the first CRLF CRLF, then Content-Length bytes of body) and answers each
with "200 OK" and a body that is exactly the bytes of that request as they
arrived, so that the client can compare every byte the origin got with what
it should have got. The reports of servers/origin.js show field lines only;
this one shows the request line, the line ends and the body too.

Each request is also appended to --log as one line: the peer's port, the
request's number on its connection and its bytes in hex.

    echo.py --port PORT [--port PORT ...] [--bind ADDR] [--log FILE]
"""
import argparse
import socket
import socketserver
import sys
import threading

LOG_LOCK = threading.Lock()
LOG_PATH = "/dev/null"


def content_length(head):
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                return int(value.strip())
            except ValueError:
                return 0
    return 0


class EchoHandler(socketserver.BaseRequestHandler):
    def handle(self):
        sock = self.request
        sock.settimeout(30)
        peer = self.client_address[1]
        buf, n = b"", 0
        while True:
            while b"\r\n\r\n" not in buf:
                try:
                    chunk = sock.recv(65536)
                except OSError:
                    return
                if not chunk:
                    if buf:
                        self.log(peer, n, b"INCOMPLETE " + buf)
                    return
                buf += chunk
            end = buf.index(b"\r\n\r\n") + 4
            total = end + content_length(buf[:end])
            while len(buf) < total:
                try:
                    chunk = sock.recv(65536)
                except OSError:
                    return
                if not chunk:
                    self.log(peer, n, b"INCOMPLETE " + buf)
                    return
                buf += chunk
            req, buf = buf[:total], buf[total:]
            n += 1
            self.log(peer, n, req)
            try:
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                             b"Content-Length: %d\r\n\r\n" % len(req) + req)
            except OSError:
                return

    @staticmethod
    def log(peer, n, data):
        with LOG_LOCK, open(LOG_PATH, "a") as f:
            f.write("%d %d %s\n" % (peer, n, data.hex()))


class DualStackServer(socketserver.ThreadingTCPServer):
    address_family = socket.AF_INET6
    allow_reuse_address = True
    daemon_threads = True

    fastopen = False

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        if self.fastopen:
            # Accept data in the SYN (with the namespace's
            # net.ipv4.tcp_fastopen server bit set).
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_FASTOPEN, 16)
        super().server_bind()


def main():
    global LOG_PATH
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, action="append", required=True)
    ap.add_argument("--bind", default="::")
    ap.add_argument("--log", default="/dev/null")
    ap.add_argument("--fastopen", action="store_true", help="accept TCP Fast Open")
    a = ap.parse_args()
    LOG_PATH = a.log
    DualStackServer.fastopen = a.fastopen
    servers = [DualStackServer((a.bind, p), EchoHandler) for p in a.port]
    for s in servers[1:]:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("echo origin listening on %s" % ",".join(str(p) for p in a.port), flush=True)
    try:
        servers[0].serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
