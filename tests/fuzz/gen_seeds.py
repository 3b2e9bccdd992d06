#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Write the fuzzers' seed corpora (tests/fuzz/seeds/{scan,hlist,tcp}/) from
the test corpus and a few hand-made cases. Deterministic: running it again
gives the same files. Input layouts: tests/fuzz/scan_check.h, hlist_check.h,
tcp_check.h.

    tests/fuzz/gen_seeds.py [--corpus DIR]
"""
import argparse
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# scan_check.h: mode bits
FRESH, UT_PASS, UT_DROP, ON_ERROR_PASS, RESPONSE = 0x01, 0x02, 0x04, 0x08, 0x80


def scan_input(mode, lst, cuts, stream):
    assert b"\0" not in lst and 0 not in cuts
    return bytes([mode]) + lst + b"\0" + bytes(cuts) + b"\0" + stream


SMALL_LIST = b"x-internal-auth\nx-internal-*\nX_Secret-Token drop\ncontent-md5\nu*\n"

EDGE_STREAMS = [
    # obs-fold continuation of a masked field, bare LF and bare CR line ends
    b"GET / HTTP/1.1\r\nHost: a\r\nX-Internal-Auth: s\r\n  more\r\n\tand more\r\nA: b\r\n\r\n",
    b"GET / HTTP/1.1\nHost: a\nx-internal-auth: s\n\n",
    b"GET / HTTP/1.1\rHost: a\rx-internal-auth: s\r\r\n\r\n",
    # blanks around names
    b"GET / HTTP/1.1\r\n\x0bX-Internal-Auth\x0c : s\r\n x_secret-token\xa0: t\r\n\r\n",
    # bodies: Content-Length, chunked with trailers, both (conflict)
    b"POST / HTTP/1.1\r\nContent-Length: 18\r\n\r\nX-Internal-Auth: bGET / HTTP/1.1\r\nX-Internal-A: c\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext\r\nhello\r\n0\r\nX-Internal-Auth: t\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
    b"POST / HTTP/1.1\r\n\x0b\x0bContent-Length: 5\r\n\r\nhello",
    # tunnels
    b"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\nX-Internal-Auth: s\r\n",
    b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\nx-internal-auth: s\r\n",
    # desync, HTTP/0.9, not HTTP
    b"GET / HTTP/1.1\r\n\r\nX-Internal-Auth: a\r\n\r\n",
    b"GET /\r\nX-Internal-Auth: a\r\n\r\n",
    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
    b"Accept: a\r\nX-Internal-Auth: leak\r\n\r\n",
    # a long line, a long name
    b"GET /" + b"a" * 300 + b" HTTP/1.1\r\nX-Internal-" + b"z" * 120 + b": v\r\n\r\n",
    # more internal lines apart in one send than proxy mode's removal list
    # holds (SCAN_RM_FULL): the send is cut after the 32nd
    b"GET / HTTP/1.1\r\n" + b"X-Internal-Auth: a\r\nB: c\r\n" * 40 + b"\r\n",
    # what origins read otherwise (scan.h): HTTP/2's preface and a HEADERS
    # frame with a literal field; a GET whose body is a request; a length
    # after a line Python's header parser stops at
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0\0\0\x16\x01\x05\0\0\0\x01"
    b"\x82\x86\x84\0\x0fx-internal-auth\x01a",
    b"GET / HTTP/1.1\r\nContent-Length: 40\r\n\r\nHEAD /s HTTP/1.1\r\nX-Internal-Auth: a\r\n\r\n"
    b"GET / HTTP/1.1\r\n\r\n",
    b"POST / HTTP/1.1\r\nX-F\x80oo: a\r\nNo colon\r\nContent-Length: 39\r\n\r\n"
    b"GET /s HTTP/1.1\r\nX-Internal-Auth: a\r\n\r\n",
]


RESP_LIST = (b"x-internal-auth\nx-backend-server response\nx-powered-by drop response\n"
             b"x-upstream-* mask both\nserver-timing observe response\n")

# A connection's responses (scan_check.h: its request history is known, every
# third request a HEAD, unless the stream's length is a multiple of 5).
RESP_STREAMS = [
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Backend-Server: a\r\n\r\nhello"
    b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nX-Upstream-Addr: b\r\n\r\n"
    b"HTTP/1.1 204 No Content\r\nX-Backend-Server: c\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\nX-Backend-Server: a\r\n\r\n"
    b"HTTP/1.1 103 Early Hints\r\nLink: </s>\r\n\r\n"
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5\r\nhello\r\n0\r\nX-Upstream-Status: 1\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nx-backend-server : a\r\n  folded\r\nServer-Timing: db;dur=3\r\n\r\nbody\nX-Backend-Server: b\n",
    b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\nX-Backend-Server: a\r\n",
    b"HTTP/1.0 200\nX-Powered-By: p\n\n",
    b"HTTP/1.1 2000 OK\r\nX-Backend-Server: a\r\n\r\n",
    b"X-Backend-Server: a\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
    b"HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\nHTTP/1.1 200 OK\rX-Backend-Server: a\r\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX-Backend\x80: a\r\nContent-Length: 3\r\n\r\nabc"
    b"HTTP/1.1 200 OK\r\nX-Backend-Server: b\r\n\r\n",
]


def scan_seeds(corpus):
    out = {}
    with open(os.path.join(corpus, "requests.http"), "rb") as f:
        reqs = f.read().split(b"\r\n\r\n")
    with open(os.path.join(corpus, "internal-headers.txt"), "rb") as f:
        internal = f.read()
    rnd = random.Random(6)
    for i in range(16):
        k = rnd.randrange(1, 4)
        start = rnd.randrange(0, len(reqs) - k)
        stream = b"".join(r + b"\r\n\r\n" for r in reqs[start:start + k])
        lst = internal if i % 2 == 0 else SMALL_LIST
        cuts = [rnd.randrange(1, 256) for _ in range(rnd.randrange(0, 4))]
        mode = rnd.choice([0, 0, FRESH, ON_ERROR_PASS, FRESH | UT_PASS]) | (i << 4 & 0x70)
        out["corpus-%02d" % i] = scan_input(mode, lst, cuts, stream[:6000])
    for i, s in enumerate(EDGE_STREAMS):
        cuts = [(i * 7) % 23 + 1, 3, 1]
        out["edge-%02d" % i] = scan_input((i & 1) * ON_ERROR_PASS, SMALL_LIST, cuts, s)
        out["edge-%02d-fresh" % i] = scan_input(FRESH, SMALL_LIST, [5], s)
    for i, s in enumerate(RESP_STREAMS):
        cuts = [(i * 5) % 17 + 1, 2, 7]
        out["resp-%02d" % i] = scan_input(RESPONSE | (i & 1) * ON_ERROR_PASS, RESP_LIST, cuts, s)
        out["resp-%02d-fresh" % i] = scan_input(RESPONSE | FRESH, RESP_LIST, [4], s)
    out["default-list"] = bytes([0]) + EDGE_STREAMS[0]
    out["default-list-resp"] = bytes([RESPONSE]) + RESP_STREAMS[0]
    return out


def hlist_seeds(corpus):
    out = {}
    for name in ("internal-headers.txt", "bench-headers-118.txt"):
        with open(os.path.join(corpus, name), "rb") as f:
            text = f.read()
        for opt in (0, 1, 2):
            out["%s-%d" % (name.split(".")[0], opt)] = bytes([opt]) + text
    out["mixed"] = b"\0# c\n  x-a*  drop # c2\nX_B\tmask\n@fold-underscore off\nx-b\nfoo#bar\n"
    out["prefixes"] = b"\0x-*\nx-a*\nx-a\nx-ab*\nx-abc\nX-AB\n"
    out["one-byte"] = b"\0a\nb*\n!\n~*\n"
    out["long"] = b"\0" + b"x" * 128 + b"\n" + b"y" * 127 + b"*\n"
    out["bad-dup"] = b"\0x_a\nX-A\n"
    out["bad-char"] = b"\0x a b\nx\x01\n"
    out["bad-directive"] = b"\0@fold-underscore maybe\n"
    out["directions"] = (b"\0x-internal-*\nx-internal-id response\nx-debug mask request\n"
                         b"X_Debug DROP Response\nx-a* observe both\nx-abc* request\n"
                         b"x-abcd response\n")
    out["directions-twice"] = b"\2x-a* response\nx-a*\nx-a drop\nx-a observe response\nx-* both\n"
    out["bad-direction"] = b"\0x-a\nx-b mask respones\nx-c drop both extra\n"
    out["bad-dup-direction"] = b"\0x-a both\nx-a response\n"
    # Bit 4: the CLI's built-in rule (http2-settings) on.
    out["builtin-internal"] = b"\4" + open(os.path.join(corpus, "internal-headers.txt"), "rb").read()
    out["builtin-allow"] = b"\4x-a\n@h2c-upgrade allow\n"
    out["builtin-own"] = b"\4x-a\nHTTP2_Settings observe\nhttp2-settings drop response\n"
    out["builtin-prefix"] = b"\5h*\n@fold-underscore off\nhttp2_settings\n"
    out["builtin-block"] = b"\6@h2c-upgrade block\nx-a\nhttp3-*\n"
    return out


# tcp_check.h: mode bits, operation kinds and flags
T_PASS, T_UT_PASS, T_UT_DROP, T_PRE, T_FIN, T_TFO, T_TFO_OK, T_LIST = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80)
SEG, RANGE, SYN, RST, FIN, EVICT, PRUNE = 0, 1, 2, 3, 4, 5, 7
F_FIN, F_NOACK, F_KDROP, F_OTHER, F_NOCOAL = 0x08, 0x10, 0x20, 0x40, 0x80
F1_BADCSUM, F1_NEWCONN = 0x01, 0x02


def op(kind, off=0, ln=0, flags=0, flags1=0, xor=0, mask=0, win=0):
    return bytes([kind | flags, flags1]) + struct.pack("<H", off & 0xFFFF) + bytes(
        [ln, xor, mask, win])


def tcp_input(mode, isn, cuts, ops, stream, lst=None):
    b = bytes([mode | (T_LIST if lst is not None else 0)]) + struct.pack("<I", isn)
    if lst is not None:
        assert b"\0" not in lst
        b += lst + b"\0"
    return b + bytes([len(cuts)]) + bytes(cuts) + bytes([len(ops)]) + b"".join(ops) + stream


def segs(ids, **kw):
    return [op(SEG, i, **kw) for i in ids]


REQ = (b"GET / HTTP/1.1\r\nHost: a\r\nX-Internal-Auth: s\r\nAccept: */*\r\n\r\n"
       b"POST /p HTTP/1.1\r\nContent-Length: 22\r\n\r\nX-Internal-Auth: body\r\n"
       b"GET /2 HTTP/1.1\r\nX-Internal-Auth: t\r\n\r\n")
CHUNKED = (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"16\r\nX-Internal-Auth: chunk\r\n0\r\nX-Internal-Auth: t\r\n\r\n"
           b"GET / HTTP/1.1\r\nx-internal-auth: u\r\n\r\n")


def tcp_seeds(corpus):
    out = {}
    with open(os.path.join(corpus, "requests.http"), "rb") as f:
        reqs = f.read().split(b"\r\n\r\n")
    rnd = random.Random(14)
    # Benign: corpus requests, cut at random, reordered and duplicated.
    for i in range(12):
        k = rnd.randrange(1, 4)
        start = rnd.randrange(0, len(reqs) - k)
        stream = b"".join(r + b"\r\n\r\n" for r in reqs[start:start + k])[:3000]
        cuts = [rnd.randrange(1, 200) for _ in range(rnd.randrange(1, 4))]
        n = 0
        off = 0
        while off < len(stream):
            off += cuts[n % len(cuts)]
            n += 1
        order = list(range(n))
        for _ in range(rnd.randrange(0, 4)):
            a, b = rnd.randrange(n), rnd.randrange(n)
            order[a], order[b] = order[b], order[a]
        order += [rnd.randrange(n) for _ in range(rnd.randrange(0, 3))]
        mode = rnd.choice([0, 0, T_PASS, T_FIN, T_TFO | T_TFO_OK, T_TFO, T_PRE])
        isn = rnd.choice([1000, 0xFFFFFF00, 0x7FFFFFF0])
        out["benign-%02d" % i] = tcp_input(mode, isn, cuts, segs(order[:250]), stream)
    out["benign-plain"] = tcp_input(0, 1, [], [], REQ)
    out["benign-chunked-bytes"] = tcp_input(T_FIN, 5, [1], [], CHUNKED)
    # Overlap with other bytes: the first copy passed and then dropped by
    # the kernel, a retransmission with other bytes; and the reverse.
    out["overlap-other-after-kdrop"] = tcp_input(
        0, 7, [20], segs([0, 1]) + [op(SEG, 2, flags=F_KDROP), op(SEG, 2, flags=F_OTHER,
                                                                    xor=0x01, mask=0x0f)], REQ)
    out["overlap-other-range"] = tcp_input(
        T_PASS, 7, [30], segs([0, 1, 2]) + [op(RANGE, 25, 30, flags=F_OTHER, xor=0x0d, mask=0x80)],
        REQ)
    out["overlap-other-ofo"] = tcp_input(
        0, 9, [16], segs([0]) + [op(SEG, 3), op(RANGE, 48, 40, flags=F_OTHER, xor=0x20)] +
        segs([1, 2]), REQ)
    # A retransmission older than the 8 checkpoints, the first copy lost.
    out["rtx-older-than-checkpoints"] = tcp_input(
        0, 11, [7], [op(SEG, 1, flags=F_KDROP)] + segs([0] + list(range(2, 14))) +
        [op(SEG, 1, flags=F_OTHER, xor=0x0a, mask=0x01)], REQ)
    # A SYN inside the connection, with and without data, and data at its ISN + 1.
    out["syn-inside"] = tcp_input(0, 13, [24], segs([0, 1]) + [op(SYN, 60), op(SEG, 2), op(SEG, 3)],
                                  REQ)
    out["syn-inside-data"] = tcp_input(0, 13, [24], segs([0]) + [op(SYN, 24, 30)] + segs([1, 2, 3]),
                                       REQ)
    out["syn-new-conn-after-fin"] = tcp_input(
        T_FIN, 17, [50], segs([0, 1, 2, 3]) +
        [op(SYN, 0x2000, 40, flags1=F1_NEWCONN), op(RANGE, 0, 60), op(RANGE, 40, 100)], REQ)
    # RST: inexact, at the right edge of the highest SACK block, exact.
    out["rst-inexact"] = tcp_input(0, 19, [30], segs([0]) + [op(RST, 5), op(SEG, 1),
                                                              op(RST, 1000)] + segs([2, 3]), REQ)
    out["rst-sack-edge"] = tcp_input(0, 19, [30], segs([0, 1, 3]) + [op(RST, 120)] + segs([2, 4]),
                                     REQ)
    out["rst-after-kdrop"] = tcp_input(0, 23, [30], segs([0]) + [op(SEG, 1, flags=F_KDROP),
                                                                  op(RST, 60)] + segs([1, 2, 3]),
                                       REQ)
    out["fin-inexact"] = tcp_input(0, 29, [30], segs([0, 2]) + [op(FIN, 30), op(FIN, 60)] +
                                   segs([1, 3]), REQ)
    # TCP Fast Open: taken, not taken (data sent again), a new connection's.
    out["tfo-accepted"] = tcp_input(T_TFO | T_TFO_OK, 31, [40], segs([1, 2, 3]), REQ)
    out["tfo-refused-other"] = tcp_input(T_TFO, 31, [40], [op(SEG, 0, flags=F_OTHER, xor=3)] +
                                         segs([1, 2]), REQ)
    out["tfo-new-conn"] = tcp_input(T_TFO_OK, 37, [40], segs([0]) + [
        op(RST, 40), op(SYN, 0x100, 40, flags1=F1_NEWCONN), op(RANGE, 40, 200)], REQ)
    # Reordering inside a body, and bytes ahead of a gap.
    out["reorder-body"] = tcp_input(0, 41, [8], segs([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 12, 11,
                                                     15, 14]), REQ)
    out["reorder-chunked"] = tcp_input(T_PASS, 43, [9], segs([0, 1, 2, 3, 4, 6, 5, 8, 7, 9]),
                                       CHUNKED)
    # Bad framing, desync, an oversize segment, no ACK, an eviction.
    out["bad-framing-pass"] = tcp_input(
        T_PASS, 47, [11], segs(range(12)),
        b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 30\r\n\r\n"
        b"abcX-Internal-Auth: x\r\n\r\n")
    out["bad-framing-drop"] = tcp_input(
        0, 47, [11], segs(range(12)),
        b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    out["oversize"] = tcp_input(T_PASS, 53, [80], segs([0]) + [op(SEG, 1, win=20)] + segs([2]), REQ)
    out["no-ack-evict"] = tcp_input(0, 59, [25], segs([0]) + [op(SEG, 1, flags=F_NOACK),
                                                               op(EVICT)] + segs([1, 2, 3, 4]),
                                    REQ)
    out["prune-then-other"] = tcp_input(0, 73, [8], segs([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 12]) +
                                        [op(PRUNE), op(SEG, 12, flags=F_OTHER, xor=0x2a)] +
                                        segs([11]), REQ)
    out["preexisting-reorder"] = tcp_input(T_PRE, 61, [30], segs([0, 2, 1, 4, 3]), REQ)
    out["bad-csum"] = tcp_input(0, 67, [30], [op(SEG, 0, flags1=F1_BADCSUM)] + segs([0, 1]), REQ)
    out["list"] = tcp_input(T_FIN, 71, [3, 50], [], REQ, lst=SMALL_LIST)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(HERE, "..", "corpus"))
    args = ap.parse_args()
    for kind, seeds in (("scan", scan_seeds(args.corpus)), ("hlist", hlist_seeds(args.corpus)),
                        ("tcp", tcp_seeds(args.corpus))):
        d = os.path.join(HERE, "seeds", kind)
        os.makedirs(d, exist_ok=True)
        for name, data in sorted(seeds.items()):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print("%s: %d seeds in %s" % (kind, len(seeds), os.path.relpath(d)))


if __name__ == "__main__":
    main()
