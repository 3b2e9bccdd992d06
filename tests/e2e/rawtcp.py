#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A TCP client in userspace, for the normalisation tests (test_normalize.sh).

The client writes every Ethernet frame itself through an AF_PACKET socket
on the client's veth: sequence numbers, flags, the urgent pointer,
checksums (right or deliberately wrong), overlaps, retransmissions,
reordering, data in the SYN, IPv6 destination options, IP fragments
(ip_fragments()). It reads the server's answers from the same socket and
acknowledges them, so the server's TCP behaves as with a real peer.

Or through a TAP device (Link(..., tap=True)): the frames are written to
its file descriptor, so that the kernel receives them on the device, and
the frames the kernel sends out of it are read there. With frags=(FIRST,
SIZE) each frame is written as iovecs (FIRST bytes, then pieces of SIZE)
to a device opened with IFF_NAPI_FRAGS: the kernel builds a non-linear skb,
the first iovec its linear part, every other one a page fragment
(drivers/net/tun.c, tun_napi_alloc_frags()).

The client's own kernel must not answer the server (it would reset a
connection it never opened): the client uses an address and a MAC address
that no interface owns (--src, --src-mac); the server namespace has a
static neighbour entry for that address (test_normalize.sh makes it), so
the server's frames come back to the veth, where the client's kernel drops
them (addressed to another host) and the packet socket reads them.

Library:
    link = Link(ifname, src_mac, dst_mac)   # tap=True, frags=(54, 1024)
    c = Conn(link, src, dst, sport, dport)
    c.connect(syn_data=b"...", tfo=True)   # handshake (waits for SYN-ACK)
    c.send(b"...", wait=True)               # at snd_nxt; waits for its ACK
    c.segment(b"...", seq=c.seq_at(10), flags="PA", urg=4, bad_tcp_csum=True)
    c.segment(b"...", frags=[(16, 40), (0, 16)])  # IP fragments, last first
    c.wait_ack(c.seq_at(n)), c.responses(2), c.resend(), c.rst()
Sequence numbers are given relative to the first data byte (seq_at(0) is
ISN + 1) or absolute through seq=.
The server's side (a hostile origin, resp_attack.py) uses the same Conn:
    listen(link, addr, port); c = accept(link, addr, port)  # SYN-ACK, ACK
    poll_until(link, lambda: b"\\r\\n\\r\\n" in c.rx, 2.0)   # the request

CLI (one connection):
    rawtcp.py DEV SRC DST PORT --src-mac MAC --dst-mac MAC [--syn-data TEXT]
              [--seg OFFSET:TEXT[:FLAGS[:URG]]]... [--seg-file FILE]
              [--responses N] [--out FILE]
              [--tap [--frags FIRST,SIZE]] [--dstopts BYTES]
TEXT takes Python escapes (\\r\\n, \\xNN). Prints the answers' bytes (to
FILE with --out; what became of each segment to stderr). Exit status 0
once every segment was acknowledged and N answers came, 3 otherwise.
"""
import argparse
import errno
import fcntl
import os
import random
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
PACKET_OUTGOING = 4

TUNSETIFF = 0x400454CA
IFF_TAP, IFF_NAPI, IFF_NAPI_FRAGS, IFF_NO_PI = 0x0002, 0x0010, 0x0020, 0x1000
IPPROTO_DSTOPTS = 60
IPPROTO_FRAGMENT = 44
# Linux reads at most this many options in a destination-options header
# (net.ipv6.max_dst_opts_number), and refuses PadN longer than 7 bytes
# (ip6_parse_tlv(), RFC 4942 2.1.9.5): a long header is made of options of
# an unknown type whose two high bits say "skip it".
IP6_OPT_SKIP = 0x1E
IP6_MAX_DST_OPTS = 8

FIN, SYN, RST, PSH, ACK, URG = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
FLAG_CHARS = {"F": FIN, "S": SYN, "R": RST, "P": PSH, "A": ACK, "U": URG}
TCPOPT_FASTOPEN = 34


def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


def if_mac(ifname):
    with open("/sys/class/net/%s/address" % ifname) as f:
        return f.read().strip()


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def flags_of(spec):
    if isinstance(spec, int):
        return spec
    f = 0
    for ch in spec.upper():
        f |= FLAG_CHARS[ch]
    return f


def tcp_options(mss=None, wscale=None, tfo=False):
    opts = b""
    if mss:
        opts += struct.pack("!BBH", 2, 4, mss)
    if wscale is not None:
        opts += struct.pack("!BBBB", 1, 3, 3, wscale)  # NOP, window scale
    if tfo:
        opts += bytes([1, 1, TCPOPT_FASTOPEN, 2])  # NOP, NOP, an empty cookie
    while len(opts) % 4:
        opts += b"\x01"
    return opts


def dst_options(size, nexthdr):
    """An IPv6 destination-options header of @size bytes (a multiple of 8)
    that Linux accepts: options it skips, at most IP6_MAX_DST_OPTS of them
    (so at most 2058 bytes), and a Pad1 where one byte is left over."""
    if size < 8 or size % 8 or size > 2 + IP6_MAX_DST_OPTS * 257:
        raise ValueError("destination options of %d bytes" % size)
    body, left = b"", size - 2
    while left >= 2:
        n = min(255, left - 2)
        body += bytes([IP6_OPT_SKIP, n]) + bytes(n)
        left -= 2 + n
    body += bytes(left)  # Pad1
    return bytes([nexthdr, size // 8 - 1]) + body


def build_frame(src_mac, dst_mac, src, dst, sport, dport, seq, ack, flags, data=b"",
                window=65535, urg=0, opts=b"", bad_tcp_csum=False, bad_ip_csum=False,
                ip_len=None, dstopts=0):
    """One Ethernet frame with an IPv4 or IPv6 header and a TCP segment.
    @ip_len overrides the IPv4 total length (0: a BIG TCP packet); IPv6:
    @dstopts bytes of destination options (dst_options()) before TCP."""
    v6 = ":" in src
    thl = 20 + len(opts)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                      (thl // 4) << 4, flags, window, 0, urg) + opts + data
    if v6:
        s, d = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
        pseudo = s + d + struct.pack("!IxxxB", len(tcp), socket.IPPROTO_TCP)
    else:
        s, d = socket.inet_aton(src), socket.inet_aton(dst)
        pseudo = s + d + struct.pack("!xBH", socket.IPPROTO_TCP, len(tcp))
    c = csum(pseudo + tcp)
    if bad_tcp_csum:
        c ^= 0x5A5A
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    if v6:
        ext = dst_options(dstopts, socket.IPPROTO_TCP) if dstopts else b""
        ip = struct.pack("!IHBB", 6 << 28, len(ext) + len(tcp),
                         IPPROTO_DSTOPTS if ext else socket.IPPROTO_TCP, 64) + s + d + ext
        etype = ETH_P_IPV6
    else:
        tot = 20 + len(tcp) if ip_len is None else ip_len
        ip = struct.pack("!BBHHHBBH", 0x45, 0, tot, random.randrange(65536), 0x4000, 64,
                         socket.IPPROTO_TCP, 0) + s + d
        c = csum(ip)
        if bad_ip_csum:
            c ^= 0x5A5A
        ip = ip[:10] + struct.pack("!H", c) + ip[12:]
        etype = ETH_P_IP
    return dst_mac + src_mac + struct.pack("!H", etype) + ip + tcp


def ip_fragments(frame, pieces, ident=None):
    """@frame (one frame of build_frame(): IPv4, or IPv6 with no extension
    header) as IP fragments of one datagram, in the order of @pieces: each
    a (START, END) byte range of its IP payload (the TCP segment), or
    (START, END, BYTES) to send other bytes of that length there (a copy
    that overlaps another). START is a multiple of 8, and so is the END of
    a piece that does not reach the payload's end (RFC 791, RFC 8200 4.5);
    the pieces need not cover the payload once, nor come in order. IPv6
    gets a Fragment header (44) between its header and the piece."""
    eth = frame[:14]
    v6 = struct.unpack("!H", frame[12:14])[0] == ETH_P_IPV6
    ip, payload = (frame[14:54], frame[54:]) if v6 else (frame[14:34], frame[34:])
    if v6 and ip[6] != socket.IPPROTO_TCP:
        raise ValueError("IPv6 fragments of a frame with extension headers")
    if ident is None:
        ident = random.randrange(1, 1 << (32 if v6 else 16))
    out = []
    for p in pieces:
        start, end = p[0], p[1]
        data = p[2] if len(p) > 2 else payload[start:end]
        more = end < len(payload)
        if start % 8 or (more and end % 8) or len(data) != end - start or end > len(payload):
            raise ValueError("fragment %d-%d of a %d-byte payload" % (start, end, len(payload)))
        if v6:
            # The offset in 8-byte units sits above 2 reserved bits and M.
            fh = struct.pack("!BBHI", ip[6], 0, start | more, ident)
            h = ip[:4] + struct.pack("!HBB", len(fh) + len(data), IPPROTO_FRAGMENT, ip[7]) + \
                ip[8:40] + fh
        else:
            h = struct.pack("!BBHHHBBH", 0x45, ip[1], 20 + len(data), ident,
                            start // 8 | (0x2000 if more else 0), ip[8], ip[9], 0) + ip[12:20]
            h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
        out.append(eth + h + data)
    return out


def parse_frame(frame):
    """(src, dst, sport, dport, seq, ack, flags, window, payload) of a TCP
    frame, or None."""
    if len(frame) < 14:
        return None
    etype = struct.unpack("!H", frame[12:14])[0]
    p = frame[14:]
    if etype == ETH_P_IP and len(p) >= 20:
        ihl = (p[0] & 15) * 4
        tot = struct.unpack("!H", p[2:4])[0] or len(p)
        if p[9] != socket.IPPROTO_TCP:
            return None
        src, dst = socket.inet_ntoa(p[12:16]), socket.inet_ntoa(p[16:20])
        t = p[ihl:tot]
    elif etype == ETH_P_IPV6 and len(p) >= 40:
        if p[6] != socket.IPPROTO_TCP:
            return None
        plen = struct.unpack("!H", p[4:6])[0]
        src = socket.inet_ntop(socket.AF_INET6, p[8:24])
        dst = socket.inet_ntop(socket.AF_INET6, p[24:40])
        t = p[40:40 + plen]
    else:
        return None
    if len(t) < 20:
        return None
    sport, dport, seq, ack, off, flags, window = struct.unpack("!HHIIBBH", t[:16])
    return src, dst, sport, dport, seq, ack, flags, window, t[(off >> 4) * 4:]


class Link:
    """The packet socket on the client's interface, shared by connections;
    or, @tap, the file descriptor of the TAP device @ifname (of the
    current network namespace), @frags=(FIRST, SIZE) writing every frame
    in pieces the kernel keeps as page fragments (see the module's text)."""

    def __init__(self, ifname, src_mac, dst_mac=None, mtu=None, tap=False, frags=None):
        self.ifname = ifname
        self.src_mac = mac_bytes(src_mac)
        self.dst_mac = mac_bytes(dst_mac) if dst_mac else None
        self.frags = frags
        if tap:
            self.sock = None
            self.fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
            fl = IFF_TAP | IFF_NO_PI | (IFF_NAPI | IFF_NAPI_FRAGS if frags else 0)
            fcntl.ioctl(self.fd, TUNSETIFF, struct.pack("16sH", ifname.encode(), fl))
        else:
            if frags:
                raise ValueError("frags need a TAP device")
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                                      socket.htons(ETH_P_ALL))
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
            self.sock.bind((ifname, 0))
            self.fd = self.sock.fileno()
        self.conns = {}
        # listen(): (address, port) -> SYNs for accept(), in arrival order.
        self.listeners = {}
        self.sent = 0
        self.dropped_here = 0

    def pieces(self, frame):
        """@frame as the iovecs written to the TAP device."""
        first, size = self.frags
        return [frame[:first]] + [frame[k:k + size] for k in range(first, len(frame), size)]

    def send(self, frame):
        try:
            if self.sock is None:
                os.writev(self.fd, self.pieces(frame) if self.frags else [frame])
            else:
                self.sock.send(frame)
        except OSError as e:
            # A qdisc or a tc egress program dropped it (NET_XMIT_DROP):
            # for the tests, a segment lost on the way.
            if e.errno != errno.ENOBUFS:
                raise
            self.dropped_here += 1
        self.sent += 1

    def poll(self, timeout):
        """Read what arrives within @timeout seconds (at least one read
        attempt) and hand each frame to its connection."""
        end = time.monotonic() + timeout
        while True:
            left = max(0.0, end - time.monotonic())
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                return
            while True:
                try:
                    if self.sock is None:
                        # What the kernel sends out of the TAP device.
                        frame = os.read(self.fd, 1 << 18)
                    else:
                        frame, addr = self.sock.recvfrom(1 << 18, socket.MSG_DONTWAIT)
                        if addr[2] == PACKET_OUTGOING:
                            continue
                except BlockingIOError:
                    break
                t = parse_frame(frame)
                if not t:
                    continue
                c = self.conns.get((t[1], t[3], t[0], t[2]))
                if c:
                    c.receive(t)
                elif t[6] & (SYN | ACK | RST) == SYN and (t[1], t[3]) in self.listeners:
                    self.listeners[(t[1], t[3])].append(t)
            if time.monotonic() >= end:
                return

    def close(self):
        if self.sock is None:
            os.close(self.fd)
        else:
            self.sock.close()


class Conn:
    """One connection of the userspace client. Keeps what it needs to act as
    a TCP peer: its ISN, the next sequence number to send, the highest one
    sent, what the server acknowledged, the server's next sequence number,
    the server's bytes (responses)."""

    def __init__(self, link, src, dst, sport, dport, window=65535):
        self.link, self.src, self.dst = link, src, dst
        self.sport, self.dport = sport, dport
        self.isn = random.randrange(1 << 32)
        self.snd_nxt = self.isn  # absolute, next byte to send in order
        self.snd_max = self.isn
        self.acked = None  # highest ACK from the server (absolute)
        self.rcv_nxt = None  # next byte we expect from the server
        self.server_window = 0
        self.rx = b""  # the server's bytes in order
        self.fin = False
        self.reset = False
        self.challenge_acks = 0
        self.dup_acks = 0
        self.window = window
        self.ack_synack = True  # connect(ack_synack=False): the first data segment is the ACK
        self.stream = {}  # relative offset -> byte: the bytes the receiver keeps
        # VLAN tags every frame of ours carries, outermost first: (TPID,
        # TCI) pairs (a TCI of 0: a priority tag, VID 0).
        self.vlans = []
        # IPv6: bytes of destination options in every segment of ours.
        self.dstopts = 0
        link.conns[(src, sport, dst, dport)] = self

    # --- numbers ---
    def seq_at(self, off):
        """Absolute sequence number of data byte @off (0: the first after the SYN)."""
        return (self.isn + 1 + off) & 0xFFFFFFFF

    def off_of(self, seq):
        return (seq - self.isn - 1) & 0xFFFFFFFF

    def acked_off(self):
        return self.off_of(self.acked) if self.acked is not None else -1

    # --- input ---
    def receive(self, t):
        src, dst, sport, dport, seq, ack, flags, window, data = t
        if flags & RST:
            self.reset = True
            return
        if flags & ACK:
            if self.acked is None or 0 < ((ack - self.acked) & 0xFFFFFFFF) < (1 << 31):
                self.acked = ack
            elif ack == self.acked and not data and not flags & (SYN | FIN):
                self.dup_acks += 1
            self.server_window = window
        if flags & SYN:
            if self.rcv_nxt is None:
                self.rcv_nxt = (seq + 1) & 0xFFFFFFFF
            if self.ack_synack:
                self._ack()
            return
        if self.rcv_nxt is None:
            return
        if data:
            d = (seq - self.rcv_nxt) & 0xFFFFFFFF
            if d == 0:
                self.rx += data
                self.rcv_nxt = (self.rcv_nxt + len(data)) & 0xFFFFFFFF
            elif d >= (1 << 31) and ((seq + len(data) - self.rcv_nxt) & 0xFFFFFFFF) < (1 << 31):
                k = (self.rcv_nxt - seq) & 0xFFFFFFFF
                self.rx += data[k:]
                self.rcv_nxt = (seq + len(data)) & 0xFFFFFFFF
        if flags & FIN and ((seq + len(data) - self.rcv_nxt) & 0xFFFFFFFF) == 0:
            self.rcv_nxt = (self.rcv_nxt + 1) & 0xFFFFFFFF
            self.fin = True
        if data or flags & FIN:
            self._ack()

    def _ack(self):
        # The sequence number the server expects next, so that a pure ACK
        # is never out of its window, whatever we sent out of order.
        seq = self.acked if self.acked is not None else self.snd_nxt
        self.raw(seq, ACK)

    # --- output ---
    def raw(self, seq, flags, data=b"", urg=0, opts=b"", ack=None, frags=None, **kw):
        """Send one segment exactly as told (absolute @seq); with @frags,
        as the IP fragments ip_fragments() makes of it with those pieces."""
        flags = flags_of(flags)
        if ack is None:
            ack = self.rcv_nxt if self.rcv_nxt is not None else 0
        if self.rcv_nxt is None and not flags & SYN:
            flags &= ~ACK
        if self.dstopts:
            kw.setdefault("dstopts", self.dstopts)
        frame = build_frame(self.link.src_mac, self.link.dst_mac, self.src, self.dst,
                            self.sport, self.dport, seq, ack, flags, data,
                            window=self.window, urg=urg, opts=opts, **kw)
        for f in ip_fragments(frame, frags) if frags else [frame]:
            if self.vlans:
                tags = b"".join(struct.pack("!HH", tpid, tci) for tpid, tci in self.vlans)
                f = f[:12] + tags + f[12:]
            self.link.send(f)

    def connect(self, syn_data=b"", tfo=False, mss=1460, wscale=7, timeout=2.0, ack_synack=True):
        """Handshake; returns True once the SYN-ACK arrived (and was
        acknowledged). With @syn_data, the data rides in the SYN; without
        @ack_synack the SYN-ACK is not acknowledged here: the next data
        segment is the handshake's last ACK."""
        self.ack_synack = ack_synack
        opts = tcp_options(mss=mss, wscale=wscale, tfo=tfo)
        self.raw(self.isn, SYN, syn_data, opts=opts)
        self.snd_max = self.snd_nxt = (self.isn + 1 + len(syn_data)) & 0xFFFFFFFF
        self._record(0, syn_data)
        end = time.monotonic() + timeout
        while self.rcv_nxt is None and time.monotonic() < end:
            self.link.poll(min(0.05, max(0.0, end - time.monotonic())))
            if self.rcv_nxt is None and time.monotonic() < end and self.reset:
                return False
        if self.rcv_nxt is None:
            return False
        # The SYN-ACK acknowledged the SYN (and the SYN data it took).
        return True

    def syn_data_acked(self):
        return self.acked is not None and self.acked_off() >= 0 and \
            self.acked == self.snd_nxt

    def _record(self, off, data):
        for i, b in enumerate(data):
            self.stream.setdefault(off + i, b)

    def segment(self, data, off=None, seq=None, flags="PA", urg=0, record=True, **kw):
        """One data segment at relative offset @off (default: snd_nxt) or
        absolute @seq; moves snd_nxt past it when it ends later. @record:
        the receiver will keep these bytes (False for a segment it
        discards: a bad checksum)."""
        if seq is None:
            seq = self.seq_at(off) if off is not None else self.snd_nxt
        fl = flags_of(flags) | (URG if urg else 0)
        self.raw(seq, fl | (ACK if self.rcv_nxt is not None else 0), data, urg=urg, **kw)
        end = (seq + len(data)) & 0xFFFFFFFF
        if record:
            self._record(self.off_of(seq), data)
            if 0 < ((end - self.snd_nxt) & 0xFFFFFFFF) < (1 << 31):
                self.snd_nxt = end
        if 0 < ((end - self.snd_max) & 0xFFFFFFFF) < (1 << 31):
            self.snd_max = end
        return end

    def send(self, data, wait=True, timeout=1.0, **kw):
        """A segment at snd_nxt; with @wait, True once the server acknowledged it."""
        end = self.segment(data, **kw)
        return self.wait_ack(end, timeout) if wait else True

    def wait_ack(self, seq, timeout=1.0):
        """Wait until the server acknowledged every byte before absolute @seq."""
        end = time.monotonic() + timeout
        while True:
            if self.acked is not None and ((self.acked - seq) & 0xFFFFFFFF) < (1 << 31):
                return True
            if self.reset:
                return False
            left = end - time.monotonic()
            if left <= 0:
                return False
            self.link.poll(min(left, 0.05))

    def quiet(self, t=0.05):
        """Read whatever arrives for @t seconds (challenge ACKs, answers)."""
        self.link.poll(t)

    def resend(self, mss=1400, tries=4, timeout=0.5):
        """Act as TCP would after a loss: send again, in order, every byte
        the server has not acknowledged (the bytes it will keep, as
        recorded), from its ACK up to the highest byte sent. True once all
        of them were acknowledged."""
        for _ in range(tries):
            start = self.acked_off()
            stop = self.off_of(self.snd_max)
            if start < 0 or start >= stop:
                return True
            data = bytes(self.stream[i] for i in range(start, stop) if i in self.stream)
            if len(data) != stop - start:
                return False
            for k in range(0, len(data), mss):
                self.raw(self.seq_at(start + k), PSH | ACK, data[k:k + mss])
            self.wait_ack(self.snd_max, timeout)
        return self.acked_off() >= self.off_of(self.snd_max)

    def responses(self, n, timeout=2.0):
        """Wait for @n complete HTTP responses (by Content-Length); returns
        the list of (status, bytes) that arrived."""
        end = time.monotonic() + timeout
        while True:
            got = split_responses(self.rx)
            if len(got) >= n or self.reset or self.fin or time.monotonic() >= end:
                return got
            self.link.poll(min(0.05, max(0.0, end - time.monotonic())))

    def rst(self):
        """Reset the connection (at the sequence number the server expects)."""
        seq = self.acked if self.acked is not None else self.snd_nxt
        self.raw(seq, RST | ACK)
        self.link.conns.pop((self.src, self.sport, self.dst, self.dport), None)


# --- the server's side (resp_attack.py: a hostile origin) -------------------
# The same Link and Conn answer connections: the origin's address and MAC
# address are the ones nobody owns, and the client namespace has the static
# neighbour entry. Sequence numbers stay relative to our own ISN (seq_at(0)
# is the first byte of the responses); rx holds the client's requests.

def listen(link, addr, port):
    """Queue the SYNs to @addr:@port that @link reads, for accept()."""
    link.listeners.setdefault((addr, port), [])


def accept(link, addr, port, timeout=2.0, mss=1460, wscale=7, window=65535):
    """Take the next SYN to @addr:@port (listen() first), answer it with a
    SYN-ACK (MSS and window scale; no SACK, no timestamps, so the peer uses
    neither) and wait for the handshake's ACK. Returns the Conn, or None."""
    q = link.listeners.setdefault((addr, port), [])
    end = time.monotonic() + timeout
    while True:
        while q:
            t = q.pop(0)
            if (addr, port, t[0], t[2]) in link.conns:
                continue  # the peer resent its SYN
            c = Conn(link, addr, t[0], port, t[2], window=window)
            c.rcv_nxt = (t[4] + 1) & 0xFFFFFFFF
            c.raw(c.isn, SYN | ACK, opts=tcp_options(mss=mss, wscale=wscale))
            c.snd_max = c.snd_nxt = (c.isn + 1) & 0xFFFFFFFF
            if poll_until(link, lambda: c.acked == c.snd_nxt or c.reset,
                          end - time.monotonic()) and not c.reset:
                return c
            link.conns.pop((addr, port, t[0], t[2]), None)
            return None
        if not poll_until(link, lambda: q, end - time.monotonic()):
            return None


def poll_until(link, cond, timeout, step=0.002):
    """Read from @link until cond() holds (checked after every read of a
    few milliseconds: Link.poll() reads to its timeout's end), for at most
    @timeout seconds. Returns whether it held."""
    end = time.monotonic() + timeout
    while not cond():
        left = end - time.monotonic()
        if left <= 0:
            return False
        link.poll(min(left, step))
    return True


def split_responses(data):
    """Complete responses at the start of @data: [(status, bytes)]."""
    out = []
    while True:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            return out
        head = data[:end]
        n = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                n = int(v.strip() or b"0")
        if len(data) < end + 4 + n:
            return out
        parts = head.split(b" ", 2)
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        out.append((status, data[:end + 4 + n]))
        data = data[end + 4 + n:]


def unescape_arg(s):
    return s.encode("latin-1").decode("unicode_escape").encode("latin-1")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dev")
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("port", type=int)
    ap.add_argument("--src-mac", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--sport", type=int, default=0)
    ap.add_argument("--syn-data", default="")
    ap.add_argument("--tfo", action="store_true", help="an empty Fast Open option in the SYN")
    ap.add_argument("--seg", action="append", default=[],
                    help="OFFSET:TEXT[:FLAGS[:URG]]: a segment at a relative offset "
                         "('-' for the next byte); each waits for its ACK")
    ap.add_argument("--seg-file", action="append", default=[],
                    help="a segment at the next byte with FILE's bytes (after the --seg ones)")
    ap.add_argument("--bad-csum", action="store_true", help="every --seg with a bad TCP checksum")
    ap.add_argument("--responses", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--out", help="write the answers' bytes here, not to stdout")
    ap.add_argument("--tap", action="store_true",
                    help="DEV is a TAP device of this namespace: write frames to it")
    ap.add_argument("--frags", help="FIRST,SIZE: with --tap, each frame in iovecs of FIRST "
                    "bytes, then SIZE (IFF_NAPI_FRAGS: a non-linear skb)")
    ap.add_argument("--dstopts", type=int, default=0,
                    help="IPv6: this many bytes of destination options in every segment")
    a = ap.parse_args()
    frags = tuple(int(x) for x in a.frags.split(",")) if a.frags else None
    link = Link(a.dev, a.src_mac, a.dst_mac, tap=a.tap, frags=frags)
    c = Conn(link, a.src, a.dst, a.sport or random.randrange(20000, 60000), a.port)
    c.dstopts = a.dstopts
    if not c.connect(unescape_arg(a.syn_data), tfo=a.tfo, timeout=a.timeout):
        print("rawtcp: no SYN-ACK", file=sys.stderr)
        return 3
    acked = True
    for path in a.seg_file:
        with open(path, "rb") as f:
            a.seg.append(f.read())
    for s in a.seg:
        if isinstance(s, bytes):
            ok = c.send(s, timeout=a.timeout, bad_tcp_csum=a.bad_csum)
            acked = acked and ok
            print("rawtcp: segment of %d bytes: %s" % (
                len(s), "acknowledged" if ok else "NOT acknowledged"), file=sys.stderr)
            continue
        parts = s.split(":", 1)
        off = None if parts[0] == "-" else int(parts[0])
        rest = parts[1]
        flags, urg = "PA", 0
        bits = rest.rsplit(":", 2)
        if len(bits) == 3 and bits[1].isalpha() and bits[2].isdigit():
            rest, flags, urg = bits[0], bits[1], int(bits[2])
        ok = c.send(unescape_arg(rest), off=off, flags=flags, urg=urg, timeout=a.timeout,
                    bad_tcp_csum=a.bad_csum)
        acked = acked and ok
        print("rawtcp: segment at %s: %s" % (parts[0], "acknowledged" if ok else "NOT acknowledged"),
              file=sys.stderr)
    got = c.responses(a.responses, a.timeout)
    out = open(a.out, "wb") if a.out else sys.stdout.buffer
    for status, data in got:
        out.write(data + b"\n")
    out.flush()
    c.rst()
    link.close()
    return 0 if acked and len(got) >= a.responses else 3


if __name__ == "__main__":
    sys.exit(main())
