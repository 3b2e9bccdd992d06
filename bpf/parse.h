/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * L2-L4 parsing: Ethernet with up to two VLAN tags, IPv4 with options, IPv6
 * with a bounded chain of extension headers, TCP with options. Every helper
 * takes a cursor and the end pointer, checks bounds, and returns the next
 * protocol or an error. Lengths are read as ip_rcv_core() and ipv6_rcv()
 * read them (BIG TCP's zero length fields included); what they would drop
 * is PARSE_TRUNC, which the datapath passes without a look: the stack
 * drops it, so it can change nothing.
 */
#ifndef HDRSTRIP_BPF_PARSE_H
#define HDRSTRIP_BPF_PARSE_H

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/flow.h>

#define HS_MAX_VLANS 2
#define HS_MAX_IPV6_EXT 6

enum parse_res {
	PARSE_OK = 0, /* a TCP segment: see struct pkt */
	PARSE_OTHER, /* not TCP over IP: not ours */
	PARSE_FRAG, /* a fragment of a TCP datagram (pkt.frag_port: its port is known) */
	PARSE_TRUNC, /* malformed or cut short: the stack drops it */
	PARSE_OPAQUE, /* IP whose upper layer lies past what we follow */
};

struct pkt {
	struct hs_flow_key key; /* the sender's 4-tuple */
	__u32 seq; /* host order */
	__u32 l3_off; /* IP header */
	__u32 l4_off; /* TCP header */
	__u32 payload_off; /* first payload byte */
	__u32 payload_end; /* one past the last payload byte (from the IP length) */
	__u32 csum_off; /* the TCP checksum field */
	__u16 dport; /* host order */
	__u16 sport; /* host order */
	__u8 tcp_flags; /* FIN SYN RST PSH ACK URG... */
	__u8 ipv6;
	__u8 ip_hlen; /* IPv4 header bytes */
	__u8 frag_port; /* PARSE_FRAG: the first fragment, with dport */
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

static __always_inline int proto_is_vlan(__u16 p)
{
	return p == bpf_htons(ETH_P_8021Q) || p == bpf_htons(ETH_P_8021AD);
}

/* Ethernet and VLAN tags: returns the EtherType (network order) or -1. */
static __always_inline int parse_eth(struct cursor *c)
{
	struct ethhdr *eth = c->pos;
	struct vlan_hdr *vh;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > c->end)
		return -1;
	proto = eth->h_proto;
	c->pos = eth + 1;
#pragma unroll
	for (i = 0; i < HS_MAX_VLANS; i++) {
		if (!proto_is_vlan(proto))
			break;
		vh = c->pos;
		if ((void *)(vh + 1) > c->end)
			return -1;
		proto = vh->proto;
		c->pos = vh + 1;
	}
	if (proto_is_vlan(proto))
		return -1; /* more tags than we parse: malformed for us */
	return proto;
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
		return -PARSE_TRUNC;
	hlen = ip->ihl * 4;
	tot = bpf_ntohs(ip->tot_len);
	if (!tot && pkt_len > (__u32)(c->pos - c->start) + 0xffff && ip->protocol == IPPROTO_TCP)
		tot = pkt_len - (__u32)(c->pos - c->start);
	if (ip->version != 4 || hlen < sizeof(*ip) || tot < hlen)
		return -PARSE_TRUNC;
	if (c->pos + hlen > c->end)
		return -PARSE_TRUNC;
	pk->ip_hlen = hlen;
	if (ip->frag_off & bpf_htons(0x3fff)) { /* MF or a fragment offset */
		if (ip->protocol != IPPROTO_TCP)
			return -PARSE_OTHER;
		/* The first fragment carries the ports (when it holds them). */
		pk->frag_port = !(ip->frag_off & bpf_htons(0x1fff));
		c->pos += hlen;
		return -PARSE_FRAG;
	}
	*l4_end = (__u32)(c->pos - c->start) + tot;
	k->saddr[0] = ip->saddr;
	k->daddr[0] = ip->daddr;
	k->family = 4;
	c->pos += hlen;
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

/* A fragment header: -PARSE_FRAG for a TCP datagram's fragment (the first
 * one is left at its TCP header), -PARSE_OTHER for others. */
static __always_inline int parse_ipv6_frag(struct cursor *c, struct pkt *pk)
{
	struct ipv6_frag *fh = c->pos;

	if ((void *)(fh + 1) > c->end)
		return -PARSE_TRUNC;
	if (fh->nexthdr != IPPROTO_TCP)
		return -PARSE_OTHER;
	pk->frag_port = !(fh->off & bpf_htons(0xfff8));
	c->pos = fh + 1;
	return -PARSE_FRAG;
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
		return -PARSE_TRUNC;
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
				return -PARSE_TRUNC;
			next = opt->nexthdr;
			c->pos += (opt->hdrlen + 1) * 8;
			break;
		case IPPROTO_AH:
			opt = c->pos;
			if ((void *)(opt + 1) > c->end)
				return -PARSE_TRUNC;
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
		return -PARSE_OPAQUE;
	case IPPROTO_FRAGMENT:
		return parse_ipv6_frag(c, pk);
	default:
		return next;
	}
}

/* TCP header and options. */
static __always_inline int parse_tcp(struct cursor *c, struct pkt *pk, __u32 l4_end)
{
	struct tcphdr *th = c->pos;
	__u32 hlen;

	if ((void *)(th + 1) > c->end)
		return PARSE_TRUNC;
	hlen = th->doff * 4;
	if (hlen < sizeof(*th) || c->pos + hlen > c->end)
		return PARSE_TRUNC;
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

/* The ports of a first fragment, when it holds them. */
static __always_inline void parse_frag_ports(struct cursor *c, struct pkt *pk)
{
	struct tcphdr *th = c->pos;

	if (!pk->frag_port || (void *)(th + 1) > c->end) {
		pk->frag_port = 0;
		return;
	}
	pk->dport = bpf_ntohs(th->dest);
	pk->sport = bpf_ntohs(th->source);
}

/* The whole stack, from the start of the frame; @pkt_len: see parse_ipv4(). */
static __always_inline int parse_packet(void *data, void *data_end, struct pkt *pk, __u32 pkt_len)
{
	struct cursor c = { .pos = data, .end = data_end, .start = data };
	__u32 l4_end = 0;
	int proto;

	proto = parse_eth(&c);
	if (proto < 0)
		return PARSE_TRUNC;
	pk->l3_off = (__u32)(c.pos - c.start);
	if (proto == bpf_htons(ETH_P_IP)) {
		pk->ipv6 = 0;
		proto = parse_ipv4(&c, &l4_end, pk, pkt_len);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		pk->ipv6 = 1;
		proto = parse_ipv6(&c, &l4_end, pk, pkt_len);
	} else {
		return PARSE_OTHER;
	}
	if (proto == -PARSE_FRAG)
		parse_frag_ports(&c, pk);
	if (proto < 0)
		return -proto;
	if (proto != IPPROTO_TCP)
		return PARSE_OTHER;
	return parse_tcp(&c, pk, l4_end);
}

#endif /* HDRSTRIP_BPF_PARSE_H */
