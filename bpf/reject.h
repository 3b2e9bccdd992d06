/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Reject: a segment a reject rule (or --on-error reject) stops is turned,
 * in place, into the TCP reset its sender's stack takes as the end of the
 * connection, and sent back where it came from (XDP_TX; at TC, redirected
 * out of the device at ingress, into it at egress), as iptables' REJECT
 * --reject-with tcp-reset answers: the client learns at once instead of
 * resending for minutes, and the origin gets nothing.
 *
 * The reset is built as tcp_v4_send_reset() builds one (RFC 9293 3.10.7.1):
 * to a segment with ACK, sequence number its acknowledgment number and no
 * ACK; to one without, sequence number 0 and ACK for all the segment
 * occupies. Its headers keep their places (only lengths change), so a
 * checksum the device is to complete (CHECKSUM_PARTIAL, whose csum_start
 * points at the TCP header) stays one: it holds the pseudo header's sum.
 * Only a plain segment is answered: IPv4 without options, IPv6 without
 * extension headers, not inside a tunnel; any other is dropped as it is.
 */
#ifndef HDRSTRIP_BPF_REJECT_H
#define HDRSTRIP_BPF_REJECT_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/scan.h>

#include "ctx.h"
#include "normalize.h"
#include "parse.h"

/* The offsets a reset is built at, bounded for the verifier: a frame's
 * link header with its VLAN tags. */
#define REJECT_L3_MAX (14 + 4 * HS_MAX_VLANS)

static __always_inline void swap_bytes(__u8 *a, __u8 *b, const int n)
{
	int i;

#pragma unroll
	for (i = 0; i < n; i++) {
		__u8 t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

/*
 * Rewrite the segment @pk into its reset (its length @len, the new one in
 * *@new_len); @offload: its TCP checksum is the device's to complete.
 * 0, or -1 when this segment is not one to answer.
 */
static __always_inline int reject_rewrite(void *ctx, const struct pkt *pk, int offload,
					  __u32 *new_len, const int xdp, const int l2)
{
	void *data = ctx_data(ctx, xdp), *end = ctx_data_end(ctx, xdp);
	__u32 l3 = pk->l3_off, seq, ack, occupies, sum;
	struct tcphdr *th;
	__u8 flags;

	if (pk->key.tunnel || l3 > REJECT_L3_MAX)
		return -1;
	if (l2 == HS_L2_ETHER) {
		if (data + ETH_HLEN > end)
			return -1;
		swap_bytes(data, data + ETH_ALEN, ETH_ALEN);
	}
	if (pk->ipv6) {
		struct ipv6hdr *ip6 = data + l3;
		struct pseudo6 ph = {};

		/* One register for the bound and every access (the verifier
		 * proves ranges per pointer). */
		asm volatile("" : "+r"(ip6));
		if (pk->l4_off != l3 + sizeof(*ip6))
			return -1;
		th = (void *)(ip6 + 1);
		if ((void *)(th + 1) > end)
			return -1;
		swap_bytes((__u8 *)&ip6->saddr, (__u8 *)&ip6->daddr, 16);
		ip6->payload_len = bpf_htons(sizeof(*th));
		ip6->hop_limit = 64;
		__builtin_memcpy(ph.saddr, &ip6->saddr, 16);
		__builtin_memcpy(ph.daddr, &ip6->daddr, 16);
		ph.len = bpf_htonl(sizeof(*th));
		ph.next = IPPROTO_TCP;
		sum = bpf_csum_diff(0, 0, (void *)&ph, sizeof(ph), 0);
	} else {
		struct iphdr *ip = data + l3;
		struct pseudo4 ph = {};
		__be32 a;

		asm volatile("" : "+r"(ip));
		if (pk->l4_off != l3 + sizeof(*ip) || pk->ip_hlen != sizeof(*ip))
			return -1;
		th = (void *)(ip + 1);
		if ((void *)(th + 1) > end)
			return -1;
		a = ip->saddr;
		ip->saddr = ip->daddr;
		ip->daddr = a;
		ip->tot_len = bpf_htons(sizeof(*ip) + sizeof(*th));
		ip->ttl = 64;
		ip->frag_off = bpf_htons(0x4000); /* DF */
		ip->check = 0;
		ip->check = ~hs_csum_fold(bpf_csum_diff(0, 0, (void *)ip, sizeof(*ip), 0));
		ph.saddr = ip->saddr;
		ph.daddr = ip->daddr;
		ph.proto = IPPROTO_TCP;
		ph.len = bpf_htons(sizeof(*th));
		sum = bpf_csum_diff(0, 0, (void *)&ph, sizeof(ph), 0);
	}
	/* What the segment occupies of the sequence space. */
	occupies = pk->payload_end - pk->payload_off;
	occupies += !!(pk->tcp_flags & HS_TCP_SYN) + !!(pk->tcp_flags & HS_TCP_FIN);
	seq = bpf_ntohl(th->seq);
	ack = bpf_ntohl(th->ack_seq);
	if (pk->tcp_flags & HS_TCP_ACK) {
		th->seq = bpf_htonl(ack);
		th->ack_seq = 0;
		flags = HS_TCP_RST;
	} else {
		th->seq = 0;
		th->ack_seq = bpf_htonl(seq + occupies);
		flags = HS_TCP_RST | HS_TCP_ACK;
	}
	swap_bytes((__u8 *)&th->source, (__u8 *)&th->dest, 2);
	((__u8 *)th)[12] = 5 << 4; /* no options */
	((__u8 *)th)[13] = flags;
	th->window = 0;
	th->urg_ptr = 0;
	th->check = 0;
	if (offload && !xdp) {
		th->check = hs_csum_fold(sum); /* the device adds the header's */
	} else {
		sum = bpf_csum_diff(0, 0, (void *)th, sizeof(*th), sum);
		th->check = ~hs_csum_fold(sum);
	}
	*new_len = pk->l4_off + sizeof(*th);
	return 0;
}

/*
 * The segment in @pk answered with its reset, when it can be: 1 with the
 * packet rewritten, trimmed and (at TC) redirected back, to be returned as
 * HS_VERDICT_TX; 0 to drop it as it is.
 */
static __always_inline int reject_send(void *ctx, const struct pkt *pk, int offload, int egress,
				       const int xdp, const int l2)
{
	__u32 len = ctx_len(ctx, xdp), new_len;

	if (reject_rewrite(ctx, pk, offload, &new_len, xdp, l2) || new_len > len)
		return 0;
	if (xdp)
		return !bpf_xdp_adjust_tail(ctx, (int)new_len - (int)len);
	if (bpf_skb_change_tail(ctx, new_len, 0))
		return 0;
	/* Back where it came from: out of the device at ingress; at egress,
	 * to the local sender, as if the device had received it. */
	return bpf_redirect(((struct __sk_buff *)ctx)->ifindex, egress ? BPF_F_INGRESS : 0) ==
	       TC_ACT_REDIRECT;
}

#endif /* HDRSTRIP_BPF_REJECT_H */
