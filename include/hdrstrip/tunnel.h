/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Encapsulations: what the host may take a packet out of after the hook
 * has seen it, so that the request inside reaches a socket the hook never
 * saw a TCP segment for. The hooks read the inner packet of the ones they
 * know and send the rest to the on-error policy (bpf/parse.h); the UDP
 * ones are found by port, from the config's table (--vxlan-ports,
 * --geneve-ports, --udp-tunnel-ports).
 *
 * X(ID, name), the name as the options and status print it.
 */
#ifndef HDRSTRIP_TUNNEL_H
#define HDRSTRIP_TUNNEL_H

#include "portable.h"
#include "names.h"

#define HS_TUNNELS(X)                                                                              \
	X(NONE, "none") /* not in a tunnel */                                                      \
	X(VXLAN, "vxlan") /* UDP: an 8-byte header, then an Ethernet frame */                      \
	X(GENEVE, "geneve") /* UDP: 8 bytes and options, then Ethernet or IP */                    \
	X(GRE, "gre") /* IP protocol 47, version 0: IP or Ethernet (gretap) */                     \
	X(IPIP, "ipip") /* IP in IP: IPIP, SIT, ip6tnl (IP protocols 4 and 41) */                  \
	X(OPAQUE, "udp") /* UDP to a port some tunnel takes that hdrstrip cannot read */

enum hs_tunnel {
#define HS_TUNNEL_ENUM(id, name) HS_TUN_##id,
	HS_TUNNELS(HS_TUNNEL_ENUM)
#undef HS_TUNNEL_ENUM
	HS_TUN_MAX
};

/* UDP ports of the config's table (struct hs_config.tunnels). */
#define HS_MAX_TUNNEL_PORTS 16
/* The IANA ports, and Linux's own default VXLAN port (flannel's too). */
#define HS_VXLAN_PORTS_DEFAULT "4789,8472"
#define HS_GENEVE_PORTS_DEFAULT "6081"

struct hs_tunnel_port {
	__u16 port; /* host order; 0: an empty entry (the table's end) */
	__u8 kind; /* enum hs_tunnel: VXLAN, GENEVE or OPAQUE */
	__u8 flags; /* HS_TP_* */
};

/* The loader found a socket that takes packets out of this port (an
 * OPAQUE entry made at attach or update, made again at each). */
#define HS_TP_FOUND 0x01

_Static_assert(sizeof(struct hs_tunnel_port) == 4, "hs_tunnel_port layout");

/* A record of bpf/udp_encap.bpf.c's iterator: a UDP socket of the
 * namespace with an encapsulation (udp_sock.encap_type, or an encap_rcv
 * of a kernel tunnel). */
struct hs_encap_sock {
	__u16 port; /* local port, host order */
	__u8 encap_type; /* UDP_ENCAP_*: 1 for the kernel's UDP tunnels */
	__u8 family; /* AF_INET, AF_INET6 */
};

_Static_assert(sizeof(struct hs_encap_sock) == 4, "hs_encap_sock layout");

#ifndef __bpf__
/* The table's default: VXLAN's and GENEVE's ports. */
static inline void hs_tunnels_default(struct hs_tunnel_port *t)
{
	static const struct hs_tunnel_port def[] = {
		{ .port = 4789, .kind = HS_TUN_VXLAN },
		{ .port = 8472, .kind = HS_TUN_VXLAN },
		{ .port = 6081, .kind = HS_TUN_GENEVE },
	};
	unsigned int i;

	for (i = 0; i < HS_MAX_TUNNEL_PORTS; i++)
		t[i] = i < sizeof(def) / sizeof(def[0]) ? def[i] : (struct hs_tunnel_port){ 0 };
}

HS_NAME_TABLE(hs_tunnel_names, HS_TUNNELS, HS_TUN_MAX);

static inline const char *hs_tunnel_name(unsigned int k)
{
	return hs_name_of(hs_tunnel_names, HS_TUN_MAX, k);
}
#endif

#endif /* HDRSTRIP_TUNNEL_H */
