#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A point-to-point link without Ethernet, for test_wire.sh: two TUN devices
(IFF_TUN, no packet information), one in each network namespace, joined by
this process, which copies every IP packet one reads to the other.

    tunrelay.py NETNS_A DEV_A NETNS_B DEV_B READY_FILE
    tunrelay.py linktype NETNS DEV ARPHRD

It opens both devices (entering each namespace in turn), writes READY_FILE
once both are attached, then relays until killed. The test gives the
devices their addresses and brings them up. 'linktype' makes a persistent
TUN device DEV whose link type is ARPHRD (TUNSETLINK): a device of a kind
this kernel has no driver for (infiniband, 32), for attach to refuse.
"""
import ctypes
import fcntl
import os
import select
import struct
import sys

TUNSETIFF = 0x400454CA
TUNSETPERSIST = 0x400454CB
TUNSETLINK = 0x400454CD
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)


def setns(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, "setns %s: %s" % (path, os.strerror(e)))
    finally:
        os.close(fd)


def open_tun(netns, name):
    setns("/run/netns/" + netns)
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "linktype":
        fd = open_tun(sys.argv[2], sys.argv[3])
        fcntl.ioctl(fd, TUNSETLINK, int(sys.argv[4]))
        fcntl.ioctl(fd, TUNSETPERSIST, 1)
        os.close(fd)
        return
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    ns_a, dev_a, ns_b, dev_b, ready = sys.argv[1:]
    a = open_tun(ns_a, dev_a)
    b = open_tun(ns_b, dev_b)
    with open(ready, "w") as f:
        f.write("ready\n")
    peer = {a: b, b: a}
    while True:
        r, _, _ = select.select([a, b], [], [])
        for fd in r:
            try:
                pkt = os.read(fd, 65536)
            except OSError:
                continue  # the device is down for a moment
            try:
                os.write(peer[fd], pkt)
            except OSError:
                pass  # the other side is down: a lost packet, as on a wire


if __name__ == "__main__":
    main()
