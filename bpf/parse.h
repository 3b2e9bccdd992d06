/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * L2-L4 parsing: Ethernet with up to two VLAN tags, IPv4 with options, IPv6
 * with a bounded chain of extension headers, TCP with options. Every helper
 * takes a cursor and the end pointer, checks bounds, and returns the next
 * protocol or an error.
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

#define TCP_FL_FIN 0x01
#define TCP_FL_SYN 0x02
#define TCP_FL_RST 0x04

enum parse_res {
	PARSE_OK = 0, /* a TCP segment: see struct pkt */
	PARSE_OTHER, /* not TCP over IP: not ours */
	PARSE_FRAG, /* an IP fragment */
	PARSE_TRUNC, /* malformed, or cut short */
};

struct pkt {
	struct hs_flow_key key; /* the sender's 4-tuple */
	__u32 seq; /* host order */
	__u32 l4_off; /* TCP header */
	__u32 payload_off; /* first payload byte */
	__u32 payload_end; /* one past the last payload byte (from the IP length) */
	__u32 csum_off; /* the TCP checksum field */
	__u16 dport; /* host order */
	__u16 sport; /* host order */
	__u8 tcp_flags; /* FIN SYN RST PSH ACK URG... */
	__u8 ipv6;
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

/* IPv4: fills the L4 bounds; returns the protocol or -PARSE_*. */
static __always_inline int parse_ipv4(struct cursor *c, __u32 *l4_end, struct hs_flow_key *k)
{
	struct iphdr *ip = c->pos;
	__u32 hlen, tot;

	if ((void *)(ip + 1) > c->end)
		return -PARSE_TRUNC;
	hlen = ip->ihl * 4;
	tot = bpf_ntohs(ip->tot_len);
	if (ip->version != 4 || hlen < sizeof(*ip) || tot < hlen)
		return -PARSE_TRUNC;
	if (c->pos + hlen > c->end)
		return -PARSE_TRUNC;
	if (ip->frag_off & bpf_htons(0x3fff)) /* MF or a fragment offset */
		return -PARSE_FRAG;
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

/* IPv6 and its extension headers; returns the upper protocol or -PARSE_*. */
static __always_inline int parse_ipv6(struct cursor *c, __u32 *l4_end, struct hs_flow_key *k)
{
	struct ipv6hdr *ip6 = c->pos;
	struct ipv6_opt *opt;
	__u8 next;
	int i;

	if ((void *)(ip6 + 1) > c->end)
		return -PARSE_TRUNC;
	if (ip6->version != 6)
		return -PARSE_TRUNC;
	*l4_end = (__u32)((void *)(ip6 + 1) - c->start) + bpf_ntohs(ip6->payload_len);
	next = ip6->nexthdr;
	__builtin_memcpy(k->saddr, &ip6->saddr, sizeof(k->saddr));
	__builtin_memcpy(k->daddr, &ip6->daddr, sizeof(k->daddr));
	k->family = 6;
	c->pos = ip6 + 1;
#pragma unroll
	for (i = 0; i < HS_MAX_IPV6_EXT; i++) {
		switch (next) {
		case IPPROTO_HOPOPTS:
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
			return -PARSE_FRAG;
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
		/* A longer chain than we follow: we cannot tell what it carries. */
		return -PARSE_TRUNC;
	case IPPROTO_FRAGMENT:
		return -PARSE_FRAG;
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

/* The whole stack, from the start of the frame. */
static __always_inline int parse_packet(void *data, void *data_end, struct pkt *pk)
{
	struct cursor c = { .pos = data, .end = data_end, .start = data };
	__u32 l4_end = 0;
	int proto;

	proto = parse_eth(&c);
	if (proto < 0)
		return PARSE_TRUNC;
	if (proto == bpf_htons(ETH_P_IP)) {
		pk->ipv6 = 0;
		proto = parse_ipv4(&c, &l4_end, &pk->key);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		pk->ipv6 = 1;
		proto = parse_ipv6(&c, &l4_end, &pk->key);
	} else {
		return PARSE_OTHER;
	}
	if (proto < 0)
		return -proto;
	if (proto != IPPROTO_TCP)
		return PARSE_OTHER;
	return parse_tcp(&c, pk, l4_end);
}

#endif /* HDRSTRIP_BPF_PARSE_H */
