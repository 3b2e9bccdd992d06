/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The normaliser: what a segment to an inspected port must be before the
 * flow state (include/hdrstrip/flow.h) and the scanner may trust it, so
 * that hdrstrip reads the bytes the receiving stack will deliver:
 *
 *  - checksums: a segment whose IPv4 header or TCP checksum is wrong is
 *    dropped (the stack would drop it: it must change nothing). A TCP
 *    checksum field that holds only the pseudo header's sum is what a local
 *    sender leaves to checksum offload (CHECKSUM_PARTIAL: at egress, and on
 *    veth from another namespace): it cannot be checked here, and it is
 *    kept as it is when bytes are masked (the device completes it);
 *  - urgent data: Linux takes the urgent byte out of the stream the
 *    application reads, so URG and the urgent pointer are cleared (the byte
 *    stays where hdrstrip read it), or the segment is dropped (--urgent).
 *
 * What else the stack may refuse (a window, a timestamp, an ACK) cannot be
 * seen from here; flow.h's rules make a refused segment harmless.
 */
#ifndef HDRSTRIP_BPF_NORMALIZE_H
#define HDRSTRIP_BPF_NORMALIZE_H

#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/scan.h>

#include "ctx.h"
#include "parse.h"

enum norm_csum {
	NORM_CSUM_GOOD = 0,
	NORM_CSUM_BAD, /* the stack drops it */
	NORM_CSUM_OFFLOAD, /* only the pseudo header's sum: left to offload */
};

/* Add @n (a multiple of 4, a constant) bytes at @p to @sum, a word at a
 * time in memory order, as bpf_csum_diff() sums them: a helper call costs
 * more than the few loads a header or a tail takes. */
typedef __u32 __attribute__((may_alias)) csum_word;

static __always_inline __u64 csum_words(const void *p, const int n, __u64 sum)
{
	const csum_word *w = p;

#pragma unroll
	for (int i = 0; i < n / 4; i++)
		sum += w[i];
	return sum;
}

/* @x folded into the 32-bit unfolded sum the helper takes as its seed. */
static __always_inline __u32 csum_to32(__u64 x)
{
	x = (x & 0xffffffffULL) + (x >> 32);
	x = (x & 0xffffffffULL) + (x >> 32);
	return (__u32)x;
}

/* The chunk bpf_csum_diff() sums in one call (its limit: 512 bytes). */
#define NORM_CHUNK 512

struct csum_walk {
	void *ctx;
	__u32 off; /* next byte to sum */
	__u32 end; /* one past the last */
	__u32 sum; /* unfolded one's complement sum, memory order */
	__u32 bad; /* a chunk was out of the packet's reach */
};

static __always_inline long csum_chunk(struct csum_walk *w, const int xdp)
{
	void *data = ctx_data(w->ctx, xdp), *end = ctx_data_end(w->ctx, xdp);
	__u32 off = w->off;
	void *p;

	if (w->end - w->off < NORM_CHUNK)
		return 1;
	/* A bound the verifier keeps (MAX_PACKET_OFF). */
	if (off > 0xffff - NORM_CHUNK) {
		w->bad = 1;
		return 1;
	}
	p = data + off;
	asm volatile("" : "+r"(p));

	if (p + NORM_CHUNK > end) {
		w->bad = 1;
		return 1;
	}
	w->sum = bpf_csum_diff(0, 0, p, NORM_CHUNK, w->sum);
	w->off += NORM_CHUNK;
	return 0;
}

static long csum_cb_xdp(__u32 i __attribute__((unused)), void *arg)
{
	return csum_chunk(arg, CTX_XDP);
}

static long csum_cb_tc(__u32 i __attribute__((unused)), void *arg)
{
	return csum_chunk(arg, CTX_SKB);
}

/* Sum @k bytes (a constant) at w->off when that many are left: up to 32
 * inline, more by the helper. */
#define CSUM_STEP(k)                                                                               \
	do {                                                                                       \
		if ((w->end - w->off) & (k)) {                                                     \
			__u32 o = w->off;                                                          \
			void *p;                                                                   \
			/* A bound the verifier keeps (MAX_PACKET_OFF). */                         \
			if (o > 0xffff - (k))                                                      \
				return -1;                                                         \
			p = data + o;                                                              \
			/* One register for the check and the call. */                             \
			asm volatile("" : "+r"(p));                                                \
			if (p + (k) > end)                                                         \
				return -1;                                                         \
			if ((k) <= 32)                                                             \
				w->sum = csum_to32(csum_words(p, (k), w->sum));                    \
			else                                                                       \
				w->sum = bpf_csum_diff(0, 0, p, (k), w->sum);                      \
			w->off += (k);                                                             \
		}                                                                                  \
	} while (0)

/* Sum the packet's bytes [w->off, w->end) into w->sum; 0, or -1 when they
 * are not all within reach (past the linear part of an skb). */
static __always_inline int csum_bytes(struct csum_walk *w, const int xdp)
{
	void *data, *end;
	__u32 tail = 0;

	bpf_loop(0x10000 / NORM_CHUNK, xdp ? (void *)csum_cb_xdp : (void *)csum_cb_tc, w, 0);
	if (w->bad)
		return -1;
	data = ctx_data(w->ctx, xdp);
	end = ctx_data_end(w->ctx, xdp);
	CSUM_STEP(256);
	CSUM_STEP(128);
	CSUM_STEP(64);
	CSUM_STEP(32);
	CSUM_STEP(16);
	CSUM_STEP(8);
	CSUM_STEP(4);
	if (w->end != w->off) {
		/* One to three bytes: zero-padded, in memory order. */
		__u32 o = w->off;
		__u8 *p;

		if (o > 0xffff - 4)
			return -1;
		p = data + o;

		if ((void *)(p + 3) > end) {
			if ((void *)(p + 1) > end)
				return -1;
			((__u8 *)&tail)[0] = p[0];
			if (w->end - w->off > 1) {
				if ((void *)(p + 2) > end)
					return -1;
				((__u8 *)&tail)[1] = p[1];
			}
		} else {
			((__u8 *)&tail)[0] = p[0];
			if (w->end - w->off > 1)
				((__u8 *)&tail)[1] = p[1];
			if (w->end - w->off > 2)
				((__u8 *)&tail)[2] = p[2];
		}
		w->sum = csum_to32((__u64)w->sum + tail);
	}
	return 0;
}

struct pseudo4 {
	__be32 saddr, daddr;
	__u8 zero, proto;
	__be16 len;
};

struct pseudo6 {
	__be32 saddr[4], daddr[4];
	__be32 len;
	__u8 zero[3], next;
};

/* Sum @k bytes (a constant) of the IPv4 options when their length has it. */
#define IP4_OPT_STEP(k)                                                                            \
	do {                                                                                       \
		if (opt & (k)) {                                                                   \
			if ((void *)p + (k) > end)                                                 \
				return -1;                                                         \
			sum = bpf_csum_diff(0, 0, (void *)p, (k), sum);                            \
			p += (k);                                                                  \
		}                                                                                  \
	} while (0)

/* The IPv4 header's checksum: 0 when it holds. */
static __always_inline int norm_ip4_csum(void *ctx, const struct pkt *pk, const int xdp)
{
	void *data = ctx_data(ctx, xdp), *end = ctx_data_end(ctx, xdp);
	__u32 opt = (pk->ip_hlen - 20) & 0x3c, sum;
	__u8 *p = data + (pk->l3_off & 0xfff);

	if ((void *)p + 20 > end)
		return -1;
	/* The 20 bytes every header has, summed inline; options (rare) by
	 * the helper. */
	sum = csum_to32(csum_words(p, 20, 0));
	p += 20;
	IP4_OPT_STEP(32);
	IP4_OPT_STEP(16);
	IP4_OPT_STEP(8);
	IP4_OPT_STEP(4);
	return hs_csum_fold(sum) == 0xffff ? 0 : -1;
}

/*
 * The TCP checksum of the segment (pseudo header, TCP header, payload). At
 * TC a device or GRO may have checked it already (CHECKSUM_UNNECESSARY).
 */
static __always_inline enum norm_csum norm_tcp_csum(void *ctx, const struct pkt *pk, const int xdp)
{
	struct csum_walk w = { .ctx = ctx, .off = pk->l4_off, .end = pk->payload_end };
	__u32 tcp_len = pk->payload_end - pk->l4_off, seed;
	void *data, *end;
	__u16 *check;

#ifdef HS_BENCH_NO_TCP_CSUM
	/* A benchmark's lower bound only (bench/bench.mk): never attached. */
	return NORM_CSUM_GOOD;
#endif
	/* (Not for a tunnel's inner segment: which of the packet's checksums
	 * a device's level counts depends on the tunnel, and the inner one
	 * is checked here.) */
	if (!xdp && !pk->key.tunnel && bpf_csum_level(ctx, BPF_CSUM_LEVEL_QUERY) >= 0)
		return NORM_CSUM_GOOD;
	/* A GSO packet of the local stack (or of a guest, through a tap):
	 * its checksums are the device's to complete, from the bytes. */
	if (!xdp && ((struct __sk_buff *)ctx)->gso_size)
		return NORM_CSUM_OFFLOAD;
	data = ctx_data(ctx, xdp);
	end = ctx_data_end(ctx, xdp);
	/* The pseudo header's sum, inline: its addresses in place, its
	 * length and protocol words in memory order (struct pseudo4/6). */
	if (pk->ipv6) {
		struct ipv6hdr *ip6 = data + (pk->l3_off & 0xfff);

		if ((void *)(ip6 + 1) > end)
			return NORM_CSUM_BAD;
		seed = csum_to32(csum_words(&ip6->saddr, 32,
					    (__u64)bpf_htonl(tcp_len) + bpf_htonl(IPPROTO_TCP)));
	} else {
		struct iphdr *ip = data + (pk->l3_off & 0xfff);

		if ((void *)(ip + 1) > end)
			return NORM_CSUM_BAD;
		seed = csum_to32((__u64)ip->saddr + ip->daddr + bpf_htons(IPPROTO_TCP) +
				 bpf_htons(tcp_len));
	}
	w.sum = seed;
	if (csum_bytes(&w, xdp))
		return NORM_CSUM_OFFLOAD; /* beyond reach: a GSO skb from the local stack */
	if (hs_csum_fold(w.sum) == 0xffff)
		return NORM_CSUM_GOOD;
	data = ctx_data(ctx, xdp);
	end = ctx_data_end(ctx, xdp);
	if (pk->csum_off > 0xfff0)
		return NORM_CSUM_BAD;
	check = data + pk->csum_off;
	if ((void *)(check + 1) > end)
		return NORM_CSUM_BAD;
	return *check == hs_csum_fold(seed) ? NORM_CSUM_OFFLOAD : NORM_CSUM_BAD;
}

/*
 * Clear URG and the urgent pointer, adding the change to @csum_acc (the
 * memory-order sum of rewrites the TCP checksum takes). Returns 0, or -1
 * when the header is out of reach.
 */
static __always_inline int norm_clear_urgent(void *ctx, const struct pkt *pk, __u64 *csum_acc,
					     const int xdp)
{
	void *data = ctx_data(ctx, xdp), *end = ctx_data_end(ctx, xdp);
	__u16 *th, o12, o18;

	if (pk->l4_off > 0xff00)
		return -1;
	th = data + pk->l4_off;
	if ((void *)(th + 10) > end)
		return -1;
	o12 = th[6];
	o18 = th[9];
	((__u8 *)th)[13] &= ~HS_TCP_URG;
	th[9] = 0;
	*csum_acc += (__u64)th[6] + 0xffff - o12 + 0xffff - o18;
	return 0;
}

#endif /* HDRSTRIP_BPF_NORMALIZE_H */
