#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""An origin that reads each request through one way of reading a socket.

    readpaths.py serve --base-port PORT --log FILE [--accept-delay SECONDS]
    readpaths.py send HOST PORT [--urgent] [--wait SECONDS] [--then TEXT]
    readpaths.py check LOG METHOD masked|first-part|nothing [--uring] [--step TEXT]

serve listens on PORT + i for the i-th method of METHODS, accepts (after
--accept-delay, so that a client's first bytes arrive before accept()
returns), reads one request (up to its empty line, EOF or a 3 s silence)
the method's way in a thread of its own, answers 200 and closes. Each connection appends one JSON
line to FILE: {"method", "got" (the bytes read, latin-1), "steps" (what each
call returned), "error"}.

send writes a request in two parts, each with an internal field: PART1 at
once (it arrives before the server's accept() when that waits), PART2 0.6 s
later (after the server's first read); with --urgent the last byte of
PART1 goes as urgent data (MSG_OOB), with --wait it waits that long after
the handshake first, with --then it sends TEXT (a marker the server must
never read) 0.3 s after PART2. It prints the answer, and exits 0 on a 200,
3 on a reset, 4 on EOF without an answer, 5 on silence.

check reads METHOD's last record in LOG (--uring: uring_origin's log) and
exits 0 when the server read: 'masked' the whole request with both
internal lines masked; 'first-part' PART1 alone, as sent (what it read
before the sk_skb program saw it), and nothing after; 'nothing'; --step
TEXT: and one of its calls returned TEXT.
"""
import argparse
import ctypes
import errno
import fcntl
import json
import mmap
import os
import select
import socket
import sys
import threading
import time

METHODS = ["recv", "read", "readv", "recvmsg", "recv_into", "peek", "oob", "oobinline",
           "splice", "sendfile", "zerocopy", "slow", "stall"]
# slow: recv() after SLOW seconds; stall: after STALL seconds (past the
# time detach waits for an application to read what it was given).
SLOW, STALL = 2.0, 13.0
LOG_LOCK = threading.Lock()

TCP_ZEROCOPY_RECEIVE = 35
PAGE = mmap.PAGESIZE
ZC_PAGES = 16


class ZcArgs(ctypes.Structure):
    # struct tcp_zerocopy_receive (include/uapi/linux/tcp.h)
    _fields_ = [("address", ctypes.c_uint64), ("length", ctypes.c_uint32),
                ("recv_skip_hint", ctypes.c_uint32), ("inq", ctypes.c_uint32),
                ("err", ctypes.c_int32), ("copybuf_address", ctypes.c_uint64),
                ("copybuf_len", ctypes.c_int32), ("flags", ctypes.c_uint32),
                ("msg_control", ctypes.c_uint64), ("msg_controllen", ctypes.c_uint64),
                ("msg_flags", ctypes.c_uint32), ("reserved", ctypes.c_uint32)]


libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.getsockopt.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                            ctypes.c_void_p]


def done(data):
    return b"\r\n\r\n" in data


def wait_readable(c, secs=3.0):
    return bool(select.select([c], [], [], secs)[0])


def read_plain(c, data, steps, how):
    """The rest of the request with @how(c) -> bytes. EAGAIN (which a
    socket in a sockhash returns even when blocking, after a wake-up that
    brought nothing) waits again, as an event loop would."""
    while not done(data):
        if not wait_readable(c):
            steps.append("silence")
            break
        try:
            d = how(c)
        except BlockingIOError:
            steps.append("EAGAIN")
            time.sleep(0.01)
            continue
        steps.append("%d" % len(d))
        if not d:
            break
        data += d
    return data


def m_recv(c, steps):
    return read_plain(c, b"", steps, lambda c: c.recv(65536))


def m_read(c, steps):
    return read_plain(c, b"", steps, lambda c: os.read(c.fileno(), 65536))


def m_readv(c, steps):
    def rv(c):
        bufs = [bytearray(17), bytearray(65536)]
        n = os.readv(c.fileno(), bufs)
        return bytes((bufs[0] + bufs[1])[:n])
    return read_plain(c, b"", steps, rv)


def m_recvmsg(c, steps):
    return read_plain(c, b"", steps, lambda c: c.recvmsg(65536)[0])


def m_recv_into(c, steps):
    def ri(c):
        b = bytearray(65536)
        n = c.recv_into(b)
        return bytes(b[:n])
    return read_plain(c, b"", steps, ri)


def m_peek(c, steps):
    if wait_readable(c):
        p = c.recv(65536, socket.MSG_PEEK)
        steps.append("peek:" + p.decode("latin-1"))
    return m_recv(c, steps)


def m_oob(c, steps):
    data = b""
    if wait_readable(c):
        try:
            d = c.recv(65536, socket.MSG_OOB)
            steps.append("oob:%d" % len(d))
            data += d
        except OSError as e:
            steps.append("oob:" + errno.errorcode.get(e.errno, str(e.errno)))
    return read_plain(c, data, steps, lambda c: c.recv(65536))


def m_slow(c, steps):
    time.sleep(SLOW)
    return m_recv(c, steps)


def m_stall(c, steps):
    time.sleep(STALL)
    return m_recv(c, steps)


def m_oobinline(c, steps):
    c.setsockopt(socket.SOL_SOCKET, socket.SO_OOBINLINE, 1)
    return m_recv(c, steps)


def nonblocking(c, on):
    fl = fcntl.fcntl(c.fileno(), fcntl.F_GETFL)
    fcntl.fcntl(c.fileno(), fcntl.F_SETFL, (fl | os.O_NONBLOCK) if on else (fl & ~os.O_NONBLOCK))


def m_splice(c, steps):
    """splice() to a pipe until the request is whole or splice has nothing
    (then recv() for the rest)."""
    r, w = os.pipe()
    data = b""
    nonblocking(c, True)
    try:
        while not done(data):
            if not wait_readable(c, 1.0):
                break
            try:
                n = os.splice(c.fileno(), w, 65536, flags=os.SPLICE_F_NONBLOCK)
            except OSError as e:
                steps.append("splice:" + errno.errorcode.get(e.errno, str(e.errno)))
                break
            steps.append("splice:%d" % n)
            if not n:
                break
            data += os.read(r, n)
    finally:
        nonblocking(c, False)
        os.close(r)
        os.close(w)
    return read_plain(c, data, steps, lambda c: c.recv(65536))


def m_sendfile(c, steps):
    path = "/tmp/readpaths-%d" % os.getpid()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    data = b""
    try:
        if wait_readable(c):
            try:
                n = os.sendfile(fd, c.fileno(), None, 65536)
                steps.append("sendfile:%d" % n)
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as e:
                steps.append("sendfile:" + errno.errorcode.get(e.errno, str(e.errno)))
    finally:
        os.close(fd)
        os.unlink(path)
    return read_plain(c, data, steps, lambda c: c.recv(65536))


def m_zerocopy(c, steps):
    """TCP_ZEROCOPY_RECEIVE: pages of the socket's queue mapped, the rest
    copied into copybuf; then recv() for what it did not give."""
    size = ZC_PAGES * PAGE
    addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, c.fileno(), 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        steps.append("mmap:" + errno.errorcode.get(ctypes.get_errno(), "?"))
        return m_recv(c, steps)
    copybuf = ctypes.create_string_buffer(65536)
    data = b""
    try:
        for _ in range(3):
            if done(data) or not wait_readable(c, 1.0):
                break
            zc = ZcArgs(address=addr, length=size, copybuf_address=ctypes.addressof(copybuf),
                        copybuf_len=len(copybuf))
            ln = ctypes.c_uint32(ctypes.sizeof(zc))
            rc = libc.getsockopt(c.fileno(), socket.IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE,
                                 ctypes.byref(zc), ctypes.byref(ln))
            if rc:
                steps.append("zerocopy:" + errno.errorcode.get(ctypes.get_errno(), "?"))
                break
            got = ctypes.string_at(addr, zc.length) if zc.length else b""
            if zc.copybuf_len > 0:
                got += copybuf.raw[:zc.copybuf_len]
            steps.append("zerocopy:%d+%d" % (zc.length, max(zc.copybuf_len, 0)))
            if not got:
                break
            data += got
    finally:
        libc.munmap(addr, size)
    return read_plain(c, data, steps, lambda c: c.recv(65536))


def serve_one(method, c, log):
    steps, error = [], None
    data = b""
    try:
        data = globals()["m_" + method](c, steps)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
    except OSError as e:
        error = "%s: %s" % (errno.errorcode.get(e.errno, str(e.errno)), e.strerror)
    c.close()
    with LOG_LOCK, open(log, "a") as f:
        f.write(json.dumps({"method": method, "got": data.decode("latin-1"), "steps": steps,
                            "error": error}) + "\n")


PART1 = b"GET /readpath HTTP/1.1\r\nHost: origin\r\nX-Internal-Auth: secret-one\r\nX-Tag: v"
PART2 = b"alue\r\nX-Internal-Trace: secret-two\r\nX-Keep: kept\r\n\r\n"


def send(a):
    c = socket.create_connection((a.host, a.port), timeout=a.timeout)
    time.sleep(a.wait)
    if a.urgent:
        c.sendall(PART1[:-1])
        c.send(PART1[-1:], socket.MSG_OOB)
    else:
        c.sendall(PART1)
    time.sleep(0.6)
    try:
        c.sendall(PART2)
        if a.then:
            time.sleep(0.3)
            c.sendall(a.then.encode())
        got = b""
        while True:
            d = c.recv(4096)
            if not d:
                break
            got += d
    except ConnectionResetError:
        print("reset")
        return 3
    except socket.timeout:
        print("silence")
        return 5
    print(got.decode("latin-1"))
    return 0 if got.startswith(b"HTTP/1.1 200") else 4


def masked(raw):
    """The request as origin mode hands it over: each internal line
    becomes the filler line of its length."""
    out = []
    for line in raw.split(b"\r\n"):
        if line.lower().startswith(b"x-internal-"):
            line = b"y-hdrstrip: " + b"x" * (len(line) - 12)
        out.append(line)
    return b"\r\n".join(out)


def check(a):
    recs = []
    with open(a.log, "rb") as f:
        for line in f:
            if a.uring:
                m, steps, data = (line.rstrip(b"\n").split(b" ", 2) + [b""])[:3]
                recs.append({"method": m.decode(), "steps": steps.decode().strip(",").split(","),
                             "got": data.replace(b"\\r", b"\r").replace(b"\\n", b"\n")})
            else:
                r = json.loads(line)
                r["got"] = r["got"].encode("latin-1")
                recs.append(r)
    mine = [r for r in recs if r["method"] == a.method]
    if not mine:
        print("readpaths: no record of %s in %s" % (a.method, a.log))
        return 1
    r = mine[-1]
    want = {"masked": masked(PART1 + PART2), "first-part": PART1, "nothing": b""}[a.expect]
    ok = r["got"] == want and (not a.step or a.step in r["steps"])
    print("readpaths: %s read %r (steps %s)%s" % (a.method, r["got"], ",".join(r["steps"]),
                                                 "" if ok else "; expected %r%s" % (
                                                     want, " and step " + a.step if a.step
                                                     else "")))
    return 0 if ok else 1


def serve(a):
    listeners = {}
    for i, m in enumerate(METHODS):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((a.bind, a.base_port + i))
        s.listen(16)
        listeners[s] = m
    print("readpaths: listening on %d-%d" % (a.base_port, a.base_port + len(METHODS) - 1),
          flush=True)
    while True:
        for s in select.select(list(listeners), [], [])[0]:
            time.sleep(a.accept_delay)
            c, _ = s.accept()
            # Each connection on its own: one that waits to read holds up
            # no other.
            threading.Thread(target=serve_one, args=(listeners[s], c, a.log),
                             daemon=True).start()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sv = sub.add_parser("serve")
    sv.add_argument("--base-port", type=int, required=True)
    sv.add_argument("--bind", default="0.0.0.0")
    sv.add_argument("--log", required=True)
    sv.add_argument("--accept-delay", type=float, default=0.0)
    se = sub.add_parser("send")
    se.add_argument("host")
    se.add_argument("port", type=int)
    se.add_argument("--urgent", action="store_true")
    se.add_argument("--wait", type=float, default=0.0)
    se.add_argument("--then", default="")
    se.add_argument("--timeout", type=float, default=5.0)
    ck = sub.add_parser("check")
    ck.add_argument("log")
    ck.add_argument("method")
    ck.add_argument("expect", choices=["masked", "first-part", "nothing"])
    ck.add_argument("--uring", action="store_true")
    ck.add_argument("--step", default="")
    a = ap.parse_args()
    return {"serve": serve, "send": send, "check": check}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
