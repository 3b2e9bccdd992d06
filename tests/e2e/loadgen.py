#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Request loop for the update-under-load test.

Sends one request per connection, over and over, from --workers threads,
until at least --min requests are done and the --stop file exists. Every
request carries the lines of list A and list B interleaved (and a line in
both lists); the node origin's report shows, line by line, which were
masked. Each answer must be exactly "list A applied" or "list B applied":
a mix of the two, a line masked by neither, a changed benign line, a failed
request: all count as errors.

Prints "requests N a N b N mix N failed N" and exits 1 on any error, or
when either list never applied.
"""
import argparse
import os
import socket
import sys
import threading
import time

A = ["X-List-A-%d: a-value-%d" % (i, i) for i in range(1, 5)]
B = ["X-List-B-%d: b-value-%d" % (i, i) for i in range(1, 5)]
COMMON = "X-Common-Secret: both-lists"
KEEP = ["X-Keep-1: k1", "X-Keep-2: k2"]


def request_lines(host):
    lines = ["Host: " + host]
    lines += [A[0], B[0], COMMON, A[1], B[1], KEEP[0], A[2], B[2], A[3], B[3], KEEP[1]]
    lines.append("Connection: close")
    return lines


def masked(line):
    # Both lists name "x-..." fields: the filler name starts with 'y'.
    return "y-hdrstrip: " + "x" * (len(line) - 12)


def expected(lines, masked_set):
    return [masked(l) if l in masked_set else l for l in lines]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = self.a = self.b = self.mix = self.failed = 0
        self.examples = []

    def add(self, kind, detail=None):
        with self.lock:
            self.n += 1
            setattr(self, kind, getattr(self, kind) + 1)
            if detail and len(self.examples) < 3:
                self.examples.append(detail)


def one(addr, port, req, timeout):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect((addr, port))
        s.sendall(req)
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    return buf.decode("latin-1")


def worker(a, stats, stop_evt):
    host = "[%s]" % a.addr if ":" in a.addr else a.addr
    lines = request_lines(host)
    req = ("GET /load HTTP/1.1\r\n" + "\r\n".join(lines) + "\r\n\r\n").encode()
    want_a = expected(lines, set(A + [COMMON]))
    want_b = expected(lines, set(B + [COMMON]))
    while not stop_evt.is_set():
        try:
            resp = one(a.addr, a.port, req, a.timeout)
        except OSError as e:
            stats.add("failed", "error: %s" % e)
            continue
        if not resp.startswith("HTTP/1.1 200"):
            stats.add("failed", "answer: %r" % resp[:200])
            continue
        got = [l[8:] for l in resp.split("\n") if l.startswith("header: ")]
        if got == want_a:
            stats.add("a")
        elif got == want_b:
            stats.add("b")
        else:
            stats.add("mix", "lines: %r" % got)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("addr")
    ap.add_argument("port", type=int)
    ap.add_argument("--min", type=int, default=2000)
    ap.add_argument("--max", type=int, default=50000)
    ap.add_argument("--stop", required=True, help="stop once this file exists")
    ap.add_argument("--progress", help="file to write the running count to")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=2.0)
    a = ap.parse_args()

    stats, stop_evt = Stats(), threading.Event()
    threads = [threading.Thread(target=worker, args=(a, stats, stop_evt), daemon=True)
               for _ in range(a.workers)]
    for t in threads:
        t.start()
    while True:
        time.sleep(0.02)
        if a.progress:
            with open(a.progress + ".tmp", "w") as f:
                f.write("%d\n" % stats.n)
            os.replace(a.progress + ".tmp", a.progress)
        if (stats.n >= a.min and os.path.exists(a.stop)) or stats.n >= a.max:
            break
    stop_evt.set()
    for t in threads:
        t.join()
    print("requests %d a %d b %d mix %d failed %d"
          % (stats.n, stats.a, stats.b, stats.mix, stats.failed))
    for e in stats.examples:
        print("  e.g. " + e)
    ok = stats.mix == 0 and stats.failed == 0 and stats.a > 0 and stats.b > 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
