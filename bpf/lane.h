/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The head lane (include/hdrstrip/scan_lane.h) in the datapath, beside the
 * scan (hdrstrip.bpf.c, lane_piece_*()): a piece that starts a request (its
 * stream at HS_PH_REQ_LEAD) and is one whole head of the lane's shape is
 * taken by the lane, a global function call a line, its matched lines
 * masked by a call each; any other piece is scanned as always, from the
 * bytes as they came (BENCHMARKS.md, "Speed, fifth pass").
 */
#ifndef HDRSTRIP_BPF_LANE_H
#define HDRSTRIP_BPF_LANE_H

#include <hdrstrip/scan_lane.h>

#include "ctx.h"

/*
 * One line (hs_lane_line()), a global function a hook: the verifier checks
 * it once, on its own, whatever the lines before it left (the next line's
 * offset is in @L, map memory). Four lines a call took the verifier's count
 * for XDP from 300,849 to 612,783 and gained nothing measurable.
 */
static __always_inline int lane_one_line(void *ctx, struct hs_lane *L, const struct hs_trie *t,
					 const int xdp)
{
	if (!L || !t)
		return HS_LANE_NO;
	return hs_lane_line(L, t, ctx_data(ctx, xdp), ctx_data_end(ctx, xdp), &L->ls);
}

__attribute__((noinline)) int lane_line_xdp_fn(struct xdp_md *ctx, struct hs_lane *L,
					       const struct hs_trie *t)
{
	return lane_one_line(ctx, L, t, CTX_XDP);
}

__attribute__((noinline)) int lane_line_tc_fn(struct __sk_buff *ctx, struct hs_lane *L,
					      const struct hs_trie *t)
{
	return lane_one_line(ctx, L, t, CTX_SKB);
}

/* Mask the @i-th matched line, the same way. */
static __always_inline int lane_mask(void *ctx, struct hs_lane *L, const struct hs_trie *t, __u32 i,
				     __u32 par, const int xdp)
{
	if (!L || !t)
		return 0;
	i &= HS_LANE_MAX_MASKS - 1;
	hs_lane_mask(L, t, ctx_data(ctx, xdp), ctx_data_end(ctx, xdp), L->mask_from[i],
		     L->mask_to[i], L->fill[i], par);
	return 0;
}

__attribute__((noinline)) int lane_mask_xdp_fn(struct xdp_md *ctx, struct hs_lane *L,
					       const struct hs_trie *t, __u32 i, __u32 par)
{
	return lane_mask(ctx, L, t, i, par, CTX_XDP);
}

__attribute__((noinline)) int lane_mask_tc_fn(struct __sk_buff *ctx, struct hs_lane *L,
					      const struct hs_trie *t, __u32 i, __u32 par)
{
	return lane_mask(ctx, L, t, i, par, CTX_SKB);
}

/*
 * The head in [@start, @end) through the lane's lines: 1 when it has the
 * lane's shape (@L filled in, nothing written yet), 0 when the piece is the
 * scanner's. Inline in lane_piece_*() (a call deeper, and the trie's walk
 * would pass the verifier's eight frames); its loop calls a global
 * function, which the verifier checks once.
 */
static __always_inline int lane_lines_all(void *ctx, struct hs_lane *L, const struct hs_trie *t,
					  __u32 start, __u32 end, const int xdp)
{
	int r = HS_LANE_NO;
	__u32 n;

	if (!L || !t)
		return 0;
	L->ls = hs_lane_begin(L, ctx_data(ctx, xdp), ctx_data_end(ctx, xdp), start, end);
	if (!L->ls)
		return 0;
	for (n = 0; n <= HS_LANE_MAX_LINES; n++) {
		r = xdp ? lane_line_xdp_fn(ctx, L, t) : lane_line_tc_fn(ctx, L, t);
		if (r != HS_LANE_LINE)
			break;
	}
	return r == HS_LANE_END && L->head_end == end;
}

/* The matched lines of a head lane_lines_all() took, masked. */
static __always_inline void lane_masks(void *ctx, struct hs_lane *L, const struct hs_trie *t,
				       __u32 par, const int xdp)
{
	__u32 n, masked = L->masked;

	for (n = 0; n < HS_LANE_MAX_MASKS; n++) {
		if (n >= masked)
			break;
		if (xdp)
			lane_mask_xdp_fn(ctx, L, t, n, par);
		else
			lane_mask_tc_fn(ctx, L, t, n, par);
	}
}

#endif /* HDRSTRIP_BPF_LANE_H */
