// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Test-only TC program for the end-to-end tests: drop one TCP segment per
 * connection, once, so that TCP has to send it again. No netem: the loss is
 * exact and happens only where a test asks for it.
 *
 * The test arms it through the "conf" map: in every connection to port
 * conf.port (0: any) opened while it is armed, the first data segment that
 * carries byte conf.offset of the stream (bytes counted from the one after
 * the SYN) is dropped; its retransmission passes. Attached where the
 * segment has passed hdrstrip already (the server's
 * TC ingress behind hdrstrip's XDP or TC program, or behind tc-egress), it
 * makes hdrstrip see a retransmission of bytes it has scanned; attached in
 * front of hdrstrip (the client's TC egress, for a hook on the server), it
 * makes hdrstrip see a gap.
 *
 * At ingress the segment is dropped. At egress a drop would be a local one
 * (TCP learns of it and sends the segment again at once, before anything
 * after it): there the segment goes to conf.sink_ifindex instead, a device
 * where it vanishes (the client's loopback), and TCP takes it for sent and
 * lost.
 *
 * Packets are read with bpf_skb_load_bytes(): a GSO packet's headers are in
 * its linear part, but nothing here needs its payload.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct drop_conf {
	__u32 offset; /* stream byte the dropped segment carries */
	__u32 armed; /* 1: connections opened now lose that segment once */
	__u32 port; /* server port, host order; 0: any */
	__u32 sink_ifindex; /* 0: drop; else: redirect there (egress) */
	__u64 dropped; /* segments dropped since the last arming */
	__u64 data_segments; /* data segments to conf.port seen */
};

_Static_assert(sizeof(struct drop_conf) == 32, "drop_conf layout");

/* The client's side of a connection. */
struct conn_key {
	__u32 addr[4];
	__u32 family;
	__u32 sport;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct drop_conf);
} conf SEC(".maps");

struct conn {
	__u32 isn; /* the SYN's sequence number */
	__u32 done; /* the segment was dropped */
};

/* Connections opened while armed. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct conn_key);
	__type(value, struct conn);
} conns SEC(".maps");

struct seg {
	struct conn_key key;
	__u32 seq;
	__u32 len; /* payload bytes */
	__u16 dport;
	__u8 flags; /* TCP flags byte */
};

/* IPv4 or IPv6 (no extension headers) and TCP: 0, or -1 for anything else. */
static __always_inline int parse(struct __sk_buff *skb, struct seg *s)
{
	struct ethhdr eth;
	struct tcphdr th;
	__u32 off = sizeof(eth), ip_payload;

	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)))
		return -1;
	__builtin_memset(&s->key, 0, sizeof(s->key));
	if (eth.h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, off, &ip, sizeof(ip)) || ip.protocol != IPPROTO_TCP)
			return -1;
		if (ip.frag_off & bpf_htons(0x3fff))
			return -1;
		s->key.addr[0] = ip.saddr;
		s->key.family = 4;
		ip_payload = bpf_ntohs(ip.tot_len) - ip.ihl * 4;
		off += ip.ihl * 4;
	} else if (eth.h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, off, &ip6, sizeof(ip6)) || ip6.nexthdr != IPPROTO_TCP)
			return -1;
		__builtin_memcpy(s->key.addr, &ip6.saddr, sizeof(s->key.addr));
		s->key.family = 6;
		ip_payload = bpf_ntohs(ip6.payload_len);
		off += sizeof(ip6);
	} else {
		return -1;
	}
	if (bpf_skb_load_bytes(skb, off, &th, sizeof(th)))
		return -1;
	if (ip_payload < th.doff * 4u)
		return -1;
	s->len = ip_payload - th.doff * 4;
	s->seq = bpf_ntohl(th.seq);
	s->dport = bpf_ntohs(th.dest);
	s->key.sport = bpf_ntohs(th.source);
	/* The flags byte follows the data offset byte. */
	if (bpf_skb_load_bytes(skb, off + 13, &s->flags, 1))
		return -1;
	return 0;
}

SEC("tc")
int drop_once(struct __sk_buff *skb)
{
	struct drop_conf *c;
	struct conn *cn;
	struct seg s;
	__u32 key = 0, rel;

	c = bpf_map_lookup_elem(&conf, &key);
	if (!c || !c->armed || parse(skb, &s) || (c->port && s.dport != c->port))
		return TC_ACT_UNSPEC;
	if ((s.flags & 0x12) == 0x02) { /* SYN without ACK: a new connection */
		struct conn fresh = { .isn = s.seq };

		bpf_map_update_elem(&conns, &s.key, &fresh, BPF_ANY);
		return TC_ACT_UNSPEC;
	}
	if (!s.len)
		return TC_ACT_UNSPEC;
	__sync_fetch_and_add(&c->data_segments, 1);
	cn = bpf_map_lookup_elem(&conns, &s.key);
	if (!cn)
		return TC_ACT_UNSPEC;
	rel = s.seq - cn->isn - 1;
	if (c->offset - rel >= s.len) /* unsigned: also when offset < rel */
		return TC_ACT_UNSPEC;
	/* Once, even when two CPUs get here at once. */
	if (__sync_val_compare_and_swap(&cn->done, 0, 1) != 0)
		return TC_ACT_UNSPEC;
	__sync_fetch_and_add(&c->dropped, 1);
	if (c->sink_ifindex)
		return bpf_redirect(c->sink_ifindex, 0);
	return TC_ACT_SHOT;
}
