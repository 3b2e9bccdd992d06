#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Two TUN devices, one in each of two network namespaces, joined by this
process: every IP packet one device sends the other receives (a link with
no Ethernet header, as WireGuard's or an IPIP device's).

    tun_relay.py NETNS_A DEV_A NETNS_B DEV_B READY_FILE

NETNS_* are names in /run/netns. The devices exist (down, no address)
once READY_FILE does; they go with this process.
"""
import ctypes
import fcntl
import os
import select
import struct
import sys

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
CLONE_NEWNET = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)


def enter(ns):
    fd = os.open("/run/netns/" + ns, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET):
            raise OSError(ctypes.get_errno(), "setns " + ns)
    finally:
        os.close(fd)


def tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def main():
    ns_a, dev_a, ns_b, dev_b, ready = sys.argv[1:6]
    enter(ns_a)
    a = tun(dev_a)
    enter(ns_b)
    b = tun(dev_b)
    open(ready, "w").close()
    peer = {a: b, b: a}
    while True:
        for fd in select.select([a, b], [], [])[0]:
            pkt = os.read(fd, 65536)
            try:
                os.write(peer[fd], pkt)
            except OSError:
                pass  # the other device is not up yet: the packet is lost, as on a wire


if __name__ == "__main__":
    sys.exit(main())
