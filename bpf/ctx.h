/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The context shim: the datapath is written once, over a context pointer and
 * a compile-time flag that says which hook it runs at. Each helper folds to
 * the code of one hook, so the verifier sees only that.
 */
#ifndef HDRSTRIP_BPF_CTX_H
#define HDRSTRIP_BPF_CTX_H

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/scan.h>

/* Our own verdict, mapped to the hook's codes at the very end. */
enum hs_verdict {
	HS_VERDICT_PASS = 0,
	HS_VERDICT_DROP,
	HS_VERDICT_TX, /* rewritten into a reply: back where it came from (reject.h) */
};

/* The flag every ctx_* helper takes: an XDP frame or an skb (tc-ingress and
 * tc-egress alike). Not a hook id: those are include/hdrstrip/hooks.h's. */
#define CTX_XDP 1
#define CTX_SKB 0

static __always_inline void *ctx_data(void *ctx, const int xdp)
{
	if (xdp)
		return (void *)(long)((struct xdp_md *)ctx)->data;
	return (void *)(long)((struct __sk_buff *)ctx)->data;
}

static __always_inline void *ctx_data_end(void *ctx, const int xdp)
{
	if (xdp)
		return (void *)(long)((struct xdp_md *)ctx)->data_end;
	return (void *)(long)((struct __sk_buff *)ctx)->data_end;
}

static __always_inline int ctx_verdict(enum hs_verdict v, const int xdp)
{
	if (xdp)
		return v == HS_VERDICT_DROP ? XDP_DROP : v == HS_VERDICT_TX ? XDP_TX : XDP_PASS;
	/* UNSPEC, not OK: let any later classifier on the hook run too. (TX:
	 * bpf_redirect() was called.) */
	return v == HS_VERDICT_DROP ? TC_ACT_SHOT
	       : v == HS_VERDICT_TX ? TC_ACT_REDIRECT
				    : TC_ACT_UNSPEC;
}

/*
 * Make the first @len bytes directly readable and writable. XDP frames are
 * one buffer already; an skb may keep its payload in page fragments (GSO at
 * egress, GRO at ingress), which bpf_skb_pull_data() copies into the head.
 * Invalidates every packet pointer. Returns 0 or a negative error.
 */
static __always_inline int ctx_linearize(void *ctx, __u32 len, const int xdp)
{
	struct __sk_buff *skb = ctx;

	if (xdp)
		return 0;
	if (skb->data_end - skb->data >= len)
		return 0;
	return bpf_skb_pull_data(skb, len);
}

static __always_inline __u32 ctx_len(void *ctx, const int xdp)
{
	if (xdp)
		return ctx_data_end(ctx, xdp) - ctx_data(ctx, xdp);
	return ((struct __sk_buff *)ctx)->len;
}

/*
 * Apply the checksum difference @acc of rewritten bytes (a memory-order sum
 * of new - old, as hs_scan.csum_acc) to the TCP checksum at @csum_off. At
 * TC the kernel helper also handles an skb whose checksum is still to be
 * completed (CHECKSUM_PARTIAL: nothing to change).
 */
static __always_inline int ctx_csum_apply(void *ctx, __u64 acc, __u32 csum_off, const int xdp)
{
	if (xdp) {
		void *data = ctx_data(ctx, xdp), *end = ctx_data_end(ctx, xdp);
		__u16 *check;

		/* An explicit bound the verifier can follow (not a mask: the
		 * TCP header sits past 1 KiB behind long IPv6 extension
		 * headers, and a masked offset would write elsewhere). */
		if (csum_off >= HS_MAX_BUF)
			return -1;
		check = data + csum_off;
		if ((void *)(check + 1) > end)
			return -1;
		*check = hs_csum_update_acc(acc, *check);
		return 0;
	}
	return bpf_l4_csum_replace(ctx, csum_off, 0, hs_csum_fold(acc), 0);
}

#endif /* HDRSTRIP_BPF_CTX_H */
