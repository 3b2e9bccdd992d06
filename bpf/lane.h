/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Benchmarks only, so far (bench/bench.mk, HS_BENCH_HEAD_LANE): the head
 * lane (include/hdrstrip/scan_lane.h) in the datapath, beside the scan
 * (hdrstrip.bpf.c, lane_piece_*()). A piece that starts a request (its
 * stream at HS_PH_REQ_LEAD) and is one whole head of the lane's shape is
 * taken by the lane, a global function call a line; any other piece is
 * scanned as always, from the bytes as they came. What the lane does not
 * do yet, and the scan does: the stream's state after the request (its
 * count, the HEAD history), the rules' hit counters, match events
 * (BENCHMARKS.md, "Speed, fifth pass").
 */
#ifndef HDRSTRIP_BPF_LANE_H
#define HDRSTRIP_BPF_LANE_H

#include <hdrstrip/scan_lane.h>

#include "ctx.h"

/*
 * Up to LANE_LINES_PER_CALL lines (hs_lane_line()), a global function a
 * hook: the verifier checks it once, on its own, whatever the lines before
 * it left (the next line's offset is in @L, map memory). More lines a call
 * save calls; each costs the verifier the line's instructions again.
 */
#define LANE_LINES_PER_CALL 1

static __always_inline int lane_lines(void *ctx, struct hs_lane *L, const struct hs_trie *t,
				      const int xdp)
{
	int i, r = HS_LANE_NO;

	if (!L || !t)
		return HS_LANE_NO;
	for (i = 0; i < LANE_LINES_PER_CALL; i++) {
		r = hs_lane_line(L, t, ctx_data(ctx, xdp), ctx_data_end(ctx, xdp), &L->ls);
		if (r != HS_LANE_LINE)
			break;
	}
	return r;
}

__attribute__((noinline)) int lane_line_xdp_fn(struct xdp_md *ctx, struct hs_lane *L,
					       const struct hs_trie *t)
{
	return lane_lines(ctx, L, t, CTX_XDP);
}

__attribute__((noinline)) int lane_line_tc_fn(struct __sk_buff *ctx, struct hs_lane *L,
					      const struct hs_trie *t)
{
	return lane_lines(ctx, L, t, CTX_SKB);
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
 * The head in [@start, @end) through the lane: 1 when it took it whole
 * (masked, @L filled in), 0 when the piece is the scanner's. Inline in the
 * scan's global function (a call deeper, and the trie's walk would pass
 * the verifier's eight frames); its loops call global functions, which the
 * verifier checks once each.
 */
static __always_inline int lane_head(void *ctx, struct hs_lane *L, const struct hs_trie *t,
				     __u32 start, __u32 end, __u32 par, const int xdp)
{
	__u32 n, masked;
	int r = HS_LANE_NO;

	if (!L || !t)
		return 0;
	L->ls = hs_lane_begin(L, ctx_data(ctx, xdp), ctx_data_end(ctx, xdp), start, end);
	if (!L->ls)
		return 0;
	for (n = 0; n <= HS_LANE_MAX_LINES / LANE_LINES_PER_CALL; n++) {
		r = xdp ? lane_line_xdp_fn(ctx, L, t) : lane_line_tc_fn(ctx, L, t);
		if (r != HS_LANE_LINE)
			break;
	}
	if (r != HS_LANE_END || L->head_end != end)
		return 0;
	masked = L->masked;
	for (n = 0; n < HS_LANE_MAX_MASKS; n++) {
		if (n >= masked)
			break;
		if (xdp)
			lane_mask_xdp_fn(ctx, L, t, n, par);
		else
			lane_mask_tc_fn(ctx, L, t, n, par);
	}
	return 1;
}

#endif /* HDRSTRIP_BPF_LANE_H */
