/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * L2-L4 parsing, from the frame's first byte to the TCP payload: Ethernet
 * with up to HS_MAX_VLANS tags (or no link header at all, on a device
 * without one), IPv4 with options, IPv6 with a bounded chain of extension
 * headers, IPv4 AH, TCP with options; and one level of the tunnels the
 * host may take a packet out of after the hook (VXLAN, GENEVE, GRE and
 * gretap, IPIP, SIT, ip6tnl: include/hdrstrip/tunnel.h), whose inner
 * packet is parsed as the outer one is. Every helper takes a cursor and
 * the end pointer, checks bounds, and returns the next protocol or an
 * error. Lengths are read as ip_rcv_core() and ipv6_rcv() read them (BIG
 * TCP's zero length fields included).
 *
 * The pass audit: a packet is passed without a scan only when the stack
 * cannot deliver what it carries to a TCP socket (PARSE_PASS, with the
 * counter of its reason in pkt.why) or will drop it (PARSE_TRUNC).
 * Whatever the stack may deliver that cannot be read here is PARSE_UNSURE:
 * the on-error policy decides it, counted (pkt.why). The README's "What
 * passes unscanned" is the table of these reasons.
 */
#ifndef HDRSTRIP_BPF_PARSE_H
#define HDRSTRIP_BPF_PARSE_H

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/counters.h>
#include <hdrstrip/flow.h>
#include <hdrstrip/hooks.h>
#include <hdrstrip/maps.h>
#include <hdrstrip/tunnel.h>

/*
 * VLAN tags read. Linux takes off any number of priority tags (VID 0) with
 * no VLAN device at all (__netif_receive_skb_core(): check_vlan_id), and a
 * tag a VLAN device takes: a deeper stack is not left to chance.
 */
#define HS_MAX_VLANS 8
#define HS_MAX_IPV6_EXT 6

enum parse_res {
	PARSE_OK = 0, /* a TCP segment: see struct pkt */
	PARSE_PASS, /* the stack cannot deliver it to a TCP socket: pkt.why */
	PARSE_FRAG, /* a fragment of a TCP datagram (pkt.frag_port: its port is known) */
	PARSE_TRUNC, /* malformed or cut short: the stack drops it */
	PARSE_SHORT, /* headers run past the bytes within reach (an skb's linear part) */
	PARSE_UNSURE, /* the stack may deliver it, hdrstrip cannot read it: pkt.why */
};

struct pkt {
	struct hs_flow_key key; /* the sender's 4-tuple (the inner one in a tunnel) */
	__u32 seq; /* host order */
	__u32 l3_off; /* IP header */
	__u32 l4_off; /* TCP header */
	__u32 payload_off; /* first payload byte */
	__u32 payload_end; /* one past the last payload byte (from the IP length) */
	__u32 csum_off; /* the TCP checksum field */
	/* One past the last byte of what holds the IP packet: the frame, or
	 * the tunnel's datagram (the stack trims an inner packet to it). */
	__u32 limit;
	__u16 dport; /* host order */
	__u16 sport; /* host order */
	__u8 tcp_flags; /* FIN SYN RST PSH ACK URG... */
	__u8 ipv6;
	__u8 ip_hlen; /* IPv4 header bytes */
	__u8 frag_port; /* PARSE_FRAG: the first fragment (of TCP or UDP), with the ports */
	__u8 frag_proto; /* PARSE_FRAG: the datagram's protocol */
	__u8 why; /* PARSE_PASS, PARSE_UNSURE: enum hs_counter of the reason */
	/* PARSE_PASS: a UDP datagram to a port the tunnel table does not
	 * name, its ports in the key: the datapath asks the stack whether
	 * the socket it goes to takes packets out of UDP. */
	__u8 udp_ask;
	__u8 reserved;
	__u32 next_off; /* parse_layer(): where the next header starts */
};

struct cursor {
	void *pos;
	void *end;
	void *start;
};

struct vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/* The longest run of headers read before a TCP header (a VLAN stack, IPv6
 * extension headers of 2 KiB each, a tunnel, then all of it again). */
#define HS_HDR_MAX 0x7fff

/*
 * Put the cursor at the packet offset @off, saved in the packet's record
 * (map memory): the verifier keeps no value there, so the many ways into
 * the next layer (each number of VLAN tags, each IP header length) go on
 * from one state, not each from its own. -PARSE_SHORT when out of reach.
 */
static __always_inline int cursor_resume(struct cursor *c, volatile __u32 *off)
{
	__u32 o = *off;

	if (o > HS_HDR_MAX)
		return -PARSE_SHORT;
	c->pos = c->start + o;
	return 0;
}

/* A layer's outcome, below: the next protocol (>= 0), or -PARSE_*. */
static __always_inline int parse_fail(struct pkt *pk, int res, enum hs_counter why)
{
	pk->why = (__u8)why;
	return -res;
}

static __always_inline int proto_is_vlan(__u16 p)
{
	return p == bpf_htons(ETH_P_8021Q) || p == bpf_htons(ETH_P_8021AD);
}

/*
 * An EtherType that Linux takes IP out of, other than IPv4, IPv6 and the
 * VLAN tags read here: MPLS (mpls_forward), PPPoE sessions, MACsec,
 * batman-adv, HSR and PRP, NSH, 802.1ah, transparent Ethernet bridging,
 * and the DSA tags a switch's conduit carries. No other EtherType has a
 * handler in the kernel that yields an IP packet (dev_add_pack()
 * callers): those carry no request to a TCP socket.
 */
static __always_inline int proto_may_carry_ip(__u16 p)
{
	switch (bpf_ntohs(p)) {
	case 0x8847: /* MPLS unicast */
	case 0x8848: /* MPLS multicast */
	case 0x8864: /* PPPoE session */
	case 0x88e5: /* MACsec */
	case 0x4305: /* batman-adv */
	case 0x892f: /* HSR */
	case 0x88fb: /* PRP */
	case 0x894f: /* NSH */
	case 0x88e7: /* 802.1ah (PBB) */
	case 0x6558: /* transparent Ethernet bridging */
	case 0xdada: /* Marvell EDSA */
	case 0xdadb: /* DSA tags */
		return 1;
	}
	return 0;
}

/* Ethernet and its VLAN tags: returns the EtherType (network order) or
 * -PARSE_*. */
static __always_inline int parse_eth(struct cursor *c, struct pkt *pk)
{
	struct ethhdr *eth = c->pos;
	struct vlan_hdr *vh;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > c->end)
		return -PARSE_SHORT;
	proto = eth->h_proto;
	c->pos = eth + 1;
#pragma unroll
	for (i = 0; i < HS_MAX_VLANS; i++) {
		if (!proto_is_vlan(proto))
			break;
		vh = c->pos;
		if ((void *)(vh + 1) > c->end)
			return -PARSE_SHORT;
		proto = vh->proto;
		c->pos = vh + 1;
	}
	if (proto_is_vlan(proto))
		return parse_fail(pk, PARSE_UNSURE, HS_CTR_vlan_too_deep);
	return proto;
}

/* A device without a link header: the IP version says what comes. */
static __always_inline int parse_l3_start(struct cursor *c)
{
	__u8 *b = c->pos;

	if ((void *)(b + 1) > c->end)
		return -PARSE_SHORT;
	if ((*b >> 4) == 4)
		return bpf_htons(ETH_P_IP);
	if ((*b >> 4) == 6)
		return bpf_htons(ETH_P_IPV6);
	return -PARSE_TRUNC; /* neither ip_rcv() nor ipv6_rcv() takes it */
}

/*
 * An IP protocol whose datagrams the stack may turn into a TCP segment for
 * a socket: TCP itself, the tunnels (UDP ones by port), and what xfrm
 * undoes. The rest (ICMP, IGMP, SCTP, OSPF, ...) goes to sockets of its
 * own.
 */
static __always_inline int ip_may_reach_tcp(__u8 p)
{
	switch (p) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_GRE:
	case IPPROTO_IPIP:
	case IPPROTO_IPV6:
	case IPPROTO_ESP:
	case IPPROTO_AH:
	case IPPROTO_COMP:
	case IPPROTO_ETHERNET:
	case IPPROTO_MPLS:
	case 97: /* EtherIP */
	case 115: /* L2TPv3 */
		return 1;
	}
	return 0;
}

/*
 * A fragment of a datagram of protocol @proto: the stack puts the datagram
 * together, then reads it. -PARSE_FRAG for one that may reach a TCP
 * socket (the first fragment of a TCP or UDP datagram is left at its
 * ports: pkt.frag_port), -PARSE_PASS for the rest.
 */
static __always_inline int parse_frag(struct pkt *pk, __u8 proto, int first)
{
	if (!ip_may_reach_tcp(proto))
		return parse_fail(pk, PARSE_PASS, HS_CTR_not_tcp);
	pk->frag_proto = proto;
	pk->frag_port = first && (proto == IPPROTO_TCP || proto == IPPROTO_UDP);
	return -PARSE_FRAG;
}

/*
 * IPv4: fills the L4 bounds; returns the protocol or -PARSE_*. @pkt_len is
 * the whole packet's length when the stack reads a zero tot_len as "the
 * rest of the packet" (a GRO or GSO TCP skb: BIG TCP), else 0.
 */
static __always_inline int parse_ipv4(struct cursor *c, __u32 *l4_end, struct pkt *pk,
				      __u32 pkt_len)
{
	struct iphdr *ip = c->pos;
	struct hs_flow_key *k = &pk->key;
	__u32 hlen, tot;

	if ((void *)(ip + 1) > c->end)
		return -PARSE_SHORT;
	hlen = ip->ihl * 4;
	tot = bpf_ntohs(ip->tot_len);
	if (!tot && pkt_len > (__u32)(c->pos - c->start) + 0xffff && ip->protocol == IPPROTO_TCP)
		tot = pkt_len - (__u32)(c->pos - c->start);
	if (ip->version != 4 || hlen < sizeof(*ip) || tot < hlen)
		return -PARSE_TRUNC;
	if (c->pos + hlen > c->end)
		return -PARSE_SHORT;
	pk->ip_hlen = hlen;
	*l4_end = (__u32)(c->pos - c->start) + tot;
	k->saddr[0] = ip->saddr;
	k->daddr[0] = ip->daddr;
	k->family = 4;
	c->pos += hlen;
	if (ip->frag_off & bpf_htons(0x3fff)) /* MF or a fragment offset */
		return parse_frag(pk, ip->protocol, !(ip->frag_off & bpf_htons(0x1fff)));
	return ip->protocol;
}

struct ipv6_opt {
	__u8 nexthdr;
	__u8 hdrlen;
};

struct ipv6_frag {
	__u8 nexthdr;
	__u8 reserved;
	__be16 off; /* offset << 3 | M */
	__be32 id;
};

/* A fragment header (parse_frag()). */
static __always_inline int parse_ipv6_frag(struct cursor *c, struct pkt *pk)
{
	struct ipv6_frag *fh = c->pos;

	if ((void *)(fh + 1) > c->end)
		return -PARSE_SHORT;
	c->pos = fh + 1;
	return parse_frag(pk, fh->nexthdr, !(fh->off & bpf_htons(0xfff8)));
}

/* IPv6 and its extension headers; returns the upper protocol or -PARSE_*.
 * @pkt_len as for IPv4: a zero payload length on a GRO or GSO skb. */
static __always_inline int parse_ipv6(struct cursor *c, __u32 *l4_end, struct pkt *pk,
				      __u32 pkt_len)
{
	struct ipv6hdr *ip6 = c->pos;
	struct hs_flow_key *k = &pk->key;
	struct ipv6_opt *opt;
	__u32 plen;
	__u8 next;
	int i;

	if ((void *)(ip6 + 1) > c->end)
		return -PARSE_SHORT;
	if (ip6->version != 6)
		return -PARSE_TRUNC;
	plen = bpf_ntohs(ip6->payload_len);
	if (!plen) {
		/* A jumbo payload (BIG TCP): the packet's length, where the
		 * stack takes it so; no frame on a link carries one else. */
		if (pkt_len <= (__u32)((void *)(ip6 + 1) - c->start) + 0xffff)
			return -PARSE_TRUNC;
		plen = pkt_len - (__u32)((void *)(ip6 + 1) - c->start);
	}
	*l4_end = (__u32)((void *)(ip6 + 1) - c->start) + plen;
	next = ip6->nexthdr;
	__builtin_memcpy(k->saddr, &ip6->saddr, sizeof(k->saddr));
	__builtin_memcpy(k->daddr, &ip6->daddr, sizeof(k->daddr));
	k->family = 6;
	c->pos = ip6 + 1;
#pragma unroll
	for (i = 0; i < HS_MAX_IPV6_EXT; i++) {
		switch (next) {
		case IPPROTO_HOPOPTS:
			/* Only right after the fixed header (else dropped). */
			if (i)
				return -PARSE_TRUNC;
			__attribute__((fallthrough));
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
			opt = c->pos;
			if ((void *)(opt + 1) > c->end)
				return -PARSE_SHORT;
			next = opt->nexthdr;
			c->pos += (opt->hdrlen + 1) * 8;
			break;
		case IPPROTO_AH:
			opt = c->pos;
			if ((void *)(opt + 1) > c->end)
				return -PARSE_SHORT;
			next = opt->nexthdr;
			c->pos += (opt->hdrlen + 2) * 4;
			break;
		case IPPROTO_FRAGMENT:
			return parse_ipv6_frag(c, pk);
		default:
			return next;
		}
	}
	/* The header after the last one we follow. */
	switch (next) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_DSTOPTS:
	case IPPROTO_AH:
		/* A longer chain than we follow: the stack may still deliver
		 * what it carries, which we cannot see. */
		return parse_fail(pk, PARSE_UNSURE, HS_CTR_malformed);
	case IPPROTO_FRAGMENT:
		return parse_ipv6_frag(c, pk);
	default:
		return next;
	}
}

/* IPv4's AH (RFC 4302): the protocol it protects comes after it. */
static __always_inline int parse_ah4(struct cursor *c)
{
	struct ipv6_opt *ah = c->pos;

	if ((void *)(ah + 1) > c->end)
		return -PARSE_SHORT;
	c->pos += (ah->hdrlen + 2) * 4;
	return ah->nexthdr;
}

/* TCP header and options. */
static __always_inline int parse_tcp(struct cursor *c, struct pkt *pk, __u32 l4_end)
{
	struct tcphdr *th = c->pos;
	__u32 hlen;

	if ((void *)(th + 1) > c->end)
		return PARSE_SHORT;
	hlen = th->doff * 4;
	if (hlen < sizeof(*th))
		return PARSE_TRUNC;
	if (c->pos + hlen > c->end)
		return PARSE_SHORT;
	pk->l4_off = (__u32)(c->pos - c->start);
	pk->payload_off = pk->l4_off + hlen;
	pk->payload_end = l4_end;
	if (l4_end < pk->payload_off)
		return PARSE_TRUNC;
	pk->csum_off = pk->l4_off + __builtin_offsetof(struct tcphdr, check);
	pk->dport = bpf_ntohs(th->dest);
	pk->sport = bpf_ntohs(th->source);
	pk->key.sport = th->source;
	pk->key.dport = th->dest;
	pk->seq = bpf_ntohl(th->seq);
	pk->tcp_flags = ((__u8 *)th)[13];
	return PARSE_OK;
}

/* The ports of a first fragment, when it holds them (TCP's and UDP's are
 * its first four bytes). */
static __always_inline void parse_frag_ports(struct cursor *c, struct pkt *pk)
{
	struct udphdr *uh = c->pos;

	if (!pk->frag_port || (void *)(uh + 1) > c->end) {
		pk->frag_port = 0;
		return;
	}
	pk->dport = bpf_ntohs(uh->dest);
	pk->sport = bpf_ntohs(uh->source);
	pk->key.sport = uh->source;
	pk->key.dport = uh->dest;
}

/* The tunnel a UDP port of the config's table names, or HS_TUN_NONE. */
static __always_inline __u8 udp_tunnel(const struct hs_config *cfg, __u16 port)
{
	int i;

#pragma unroll
	for (i = 0; i < HS_MAX_TUNNEL_PORTS; i++) {
		if (!cfg->tunnels[i].port)
			break;
		if (cfg->tunnels[i].port == port)
			return cfg->tunnels[i].kind;
	}
	return HS_TUN_NONE;
}

struct vxlan_hdr_ {
	__u8 flags; /* 0x08: the VNI is valid */
	__u8 reserved[3];
	__be32 vni; /* VNI << 8 */
};

struct geneve_hdr_ {
	__u8 ver_opt; /* version (2 bits), options' length in words (6) */
	__u8 flags;
	__be16 proto;
	__be32 vni; /* VNI << 8 */
};

/*
 * Past a UDP header to a tunnel's port: returns the inner EtherType (the
 * cursor at the inner frame; HS_ETH_INNER_L2 for an Ethernet frame) or
 * -PARSE_*; the zone in the key.
 */
#define HS_ETH_INNER_L2 0xffff /* (not an EtherType: the inner frame has its own) */

static __always_inline int parse_udp_tunnel(struct cursor *c, struct pkt *pk, __u8 kind)
{
	struct vxlan_hdr_ *vx = c->pos;
	struct geneve_hdr_ *gn = c->pos;

	if (kind == HS_TUN_VXLAN) {
		if ((void *)(vx + 1) > c->end)
			return -PARSE_SHORT;
		/* vxlan_rcv() drops a header without the VNI flag. */
		if (!(vx->flags & 0x08))
			return -PARSE_TRUNC;
		pk->key.zone = bpf_ntohl(vx->vni) >> 8;
		c->pos = vx + 1;
		return HS_ETH_INNER_L2;
	}
	if (kind == HS_TUN_GENEVE) {
		if ((void *)(gn + 1) > c->end)
			return -PARSE_SHORT;
		if (gn->ver_opt >> 6) /* geneve_udp_encap_recv() drops it */
			return -PARSE_TRUNC;
		pk->key.zone = bpf_ntohl(gn->vni) >> 8;
		c->pos = (void *)(gn + 1) + (gn->ver_opt & 0x3f) * 4;
		if (gn->proto == bpf_htons(ETH_P_TEB))
			return HS_ETH_INNER_L2;
		if (gn->proto == bpf_htons(ETH_P_IP) || gn->proto == bpf_htons(ETH_P_IPV6))
			return gn->proto;
		return parse_fail(pk, PARSE_UNSURE, HS_CTR_encap_unknown);
	}
	/* A port some tunnel of the host takes, in a form not read here. */
	return parse_fail(pk, PARSE_UNSURE, HS_CTR_encap_unknown);
}

struct gre_hdr_ {
	__be16 flags; /* C R K S, version in the low 3 bits */
	__be16 proto;
};

#define GRE_C_ 0x8000
#define GRE_R_ 0x4000
#define GRE_K_ 0x2000
#define GRE_S_ 0x1000
#define GRE_VER_ 0x0007

/* Past a GRE header: the inner EtherType (HS_ETH_INNER_L2 for gretap's
 * Ethernet frame) or -PARSE_*; the key's zone. */
static __always_inline int parse_gre(struct cursor *c, struct pkt *pk)
{
	struct gre_hdr_ *g = c->pos;
	__u16 fl;
	__u32 *key;
	void *p;

	if ((void *)(g + 1) > c->end)
		return -PARSE_SHORT;
	fl = bpf_ntohs(g->flags);
	/* Version 1 is PPTP's (PPP inside: not read here); a routing
	 * field makes gre_parse_header() drop it. */
	if (fl & GRE_VER_)
		return parse_fail(pk, PARSE_UNSURE, HS_CTR_encap_unknown);
	if (fl & GRE_R_)
		return -PARSE_TRUNC;
	p = g + 1;
	if (fl & GRE_C_)
		p += 4;
	if (fl & GRE_K_) {
		key = p;
		if ((void *)(key + 1) > c->end)
			return -PARSE_SHORT;
		pk->key.zone = bpf_ntohl(*key);
		p += 4;
	}
	if (fl & GRE_S_)
		p += 4;
	c->pos = p;
	if (g->proto == bpf_htons(ETH_P_TEB))
		return HS_ETH_INNER_L2;
	if (g->proto == bpf_htons(ETH_P_IP) || g->proto == bpf_htons(ETH_P_IPV6))
		return g->proto;
	/* ERSPAN, WCCP, MPLS, NSH...: formats not read here. */
	return parse_fail(pk, PARSE_UNSURE, HS_CTR_encap_unknown);
}

/*
 * One layer, from a link header (@l2: HS_L2_*) or from IP (@proto, its
 * EtherType), to TCP. Returns PARSE_OK, another PARSE_* that ends the
 * parse, or a tunnel's inner start: -(0x10000 | EtherType), the cursor
 * there (HS_ETH_INNER_L2: an Ethernet frame). @inner: this is a tunnel's
 * inner packet (a tunnel in it cannot be read).
 */
#define HS_PARSE_INNER 0x10000

static __always_inline int parse_layer(struct cursor *c, struct pkt *pk, __u32 pkt_len, int proto,
				       const struct hs_config *cfg, const int inner)
{
	struct udphdr *uh;
	__u32 l4_end = 0;
	__u8 kind;
	int r;

	if (proto == HS_ETH_INNER_L2) {
		proto = parse_eth(c, pk);
		if (proto < 0)
			return -proto;
		pk->next_off = (__u32)(c->pos - c->start);
		r = cursor_resume(c, &pk->next_off);
		if (r)
			return -r;
	}
	pk->l3_off = (__u32)(c->pos - c->start);
	if (proto == bpf_htons(ETH_P_IP)) {
		pk->ipv6 = 0;
		proto = parse_ipv4(c, &l4_end, pk, pkt_len);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		pk->ipv6 = 1;
		proto = parse_ipv6(c, &l4_end, pk, pkt_len);
	} else if (proto_may_carry_ip((__u16)proto)) {
		return -parse_fail(pk, PARSE_UNSURE, HS_CTR_encap_unknown);
	} else {
		/* ARP, LLDP, LLC, ...: the stack has no way from it to IP. */
		return -parse_fail(pk, PARSE_PASS, HS_CTR_not_ip);
	}
	if (proto == -PARSE_FRAG)
		parse_frag_ports(c, pk);
	if (proto == IPPROTO_AH && !pk->ipv6)
		proto = parse_ah4(c);
	if (proto < 0)
		return -proto;
	/* (A TCP segment longer than what holds it is the datapath's
	 * PARSE_TRUNC, once it is counted as inspected or not.) */
	if (l4_end > pk->limit && proto != IPPROTO_TCP)
		return PARSE_TRUNC; /* more than the frame or datagram holds */
	pk->next_off = (__u32)(c->pos - c->start);
	pk->payload_end = l4_end;
	r = cursor_resume(c, &pk->next_off);
	if (r)
		return -r;
	switch (proto) {
	case IPPROTO_TCP:
		return parse_tcp(c, pk, *(volatile __u32 *)&pk->payload_end);
	case IPPROTO_UDP:
		uh = c->pos;
		if ((void *)(uh + 1) > c->end)
			return PARSE_SHORT;
		kind = udp_tunnel(cfg, bpf_ntohs(uh->dest));
		/* A UDP socket is no TCP socket: what reaches one can reach
		 * TCP only through a tunnel's socket. The config's tunnel
		 * ports are the ones known at attach; a socket made since
		 * (a port not in the table) is asked for by the datapath
		 * (udp_encap_sock(), bpf/hdrstrip.bpf.c). */
		if (kind == HS_TUN_NONE) {
			pk->key.sport = uh->source;
			pk->key.dport = uh->dest;
			pk->udp_ask = 1;
			return -parse_fail(pk, PARSE_PASS, HS_CTR_not_tcp);
		}
		c->pos = uh + 1;
		proto = parse_udp_tunnel(c, pk, kind);
		break;
	case IPPROTO_GRE:
		kind = HS_TUN_GRE;
		proto = parse_gre(c, pk);
		break;
	case IPPROTO_IPIP:
		kind = HS_TUN_IPIP;
		proto = bpf_htons(ETH_P_IP);
		break;
	case IPPROTO_IPV6:
		kind = HS_TUN_IPIP;
		proto = bpf_htons(ETH_P_IPV6);
		break;
	default:
		/* ESP and IPComp (xfrm undoes them after the hook), AH in
		 * AH, EtherIP, L2TPv3, MPLS in IP, SRv6's Ethernet: not read
		 * here. ICMP, IGMP, SCTP, OSPF...: sockets of their own. */
		if (ip_may_reach_tcp((__u8)proto))
			return -parse_fail(pk, PARSE_UNSURE, HS_CTR_encap_unknown);
		return -parse_fail(pk, PARSE_PASS, HS_CTR_not_tcp);
	}
	if (proto < 0)
		return -proto;
	if (inner)
		return -parse_fail(pk, PARSE_UNSURE, HS_CTR_encap_unknown);
	pk->key.tunnel = kind;
	/* The stack trims the inner packet to what holds it. */
	pk->limit = *(volatile __u32 *)&pk->payload_end;
	pk->next_off = (__u32)(c->pos - c->start);
	return -(HS_PARSE_INNER | proto);
}

/*
 * The whole stack, from the start of the frame (@len bytes; @l2: HS_L2_*;
 * @pkt_len: see parse_ipv4()), through one tunnel at most.
 */
static __always_inline int parse_packet(void *data, void *data_end, struct pkt *pk, __u32 len,
					__u32 pkt_len, const struct hs_config *cfg, const int l2)
{
	struct cursor c = { .pos = data, .end = data_end, .start = data };
	int r, proto;

	pk->limit = len;
	proto = l2 == HS_L2_NONE ? parse_l3_start(&c) : HS_ETH_INNER_L2;
	if (proto < 0)
		return -proto;
	r = parse_layer(&c, pk, pkt_len, proto, cfg, 0);
	if (r >= 0)
		return r;
	/* A tunnel's inner packet (never BIG TCP's jumbo length), its own
	 * addresses in the key. */
	proto = (-r) & 0xffff;
	__builtin_memset(pk->key.saddr, 0, sizeof(pk->key.saddr));
	__builtin_memset(pk->key.daddr, 0, sizeof(pk->key.daddr));
	r = cursor_resume(&c, &pk->next_off);
	if (r)
		return -r;
	r = parse_layer(&c, pk, 0, proto, cfg, 1);
	return r >= 0 ? r : PARSE_UNSURE;
}

#endif /* HDRSTRIP_BPF_PARSE_H */
