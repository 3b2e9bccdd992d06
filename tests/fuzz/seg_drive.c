// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One segment through flow.h and scan.h as bpf/hdrstrip.bpf.c drives them
 * (see seg_drive.h). The functions follow track() and scan_pieces() line
 * for line; where the datapath counts, this records in struct sd_result.
 */
#include <string.h>

/*
 * GCC (12, -O2) inlines hs_seg_begin() here and, from its 'if (!w)' check,
 * builds a path on which w is NULL and warns that hs_flow_init(&w->fresh)
 * writes outside a zero-sized object (-Warray-bounds, -Wstringop-overflow):
 * a path no call takes (w is never NULL). clang, which builds the datapath
 * and the fuzzers, does not warn.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#include "seg_drive.h"

/* scan_piece() and its bpf_loop() callback: the piece [start, end) from
 * w.from, at most SD_MAX_STEPS steps. Returns 1 when the scan reached a
 * verdict or the piece's end (sc->done in the datapath). */
static int scan_piece(struct sd_table *tab, const struct hs_trie *t, uint8_t *pkt, size_t pkt_len,
		      __u32 start, __u32 end, __u32 l4_off, __u8 opts, struct sd_result *res,
		      struct sd_piece *pc)
{
	struct hs_scan *s = &tab->s;
	__u64 steps = 0, milli;
	int r, done = 0;

	hs_scan_begin(s, &tab->w.from, start, end, l4_off);
	s->opts = opts;
	while (!done && steps < SD_MAX_STEPS) {
		steps++;
		r = hs_scan_step(s, t, pkt, pkt + pkt_len);
		if (r == HS_STEP_MORE)
			continue;
		if (r == HS_STEP_MATCH) {
			res->matches++;
			if (s->st.phase != HS_PH_DROPPED)
				continue;
		}
		done = 1;
	}
	milli = steps * 1000 / ((__u64)(end > start ? end - start : 0) + 16);
	if (milli > res->worst_steps_milli)
		res->worst_steps_milli = milli;
	pc->steps = steps;
	return done;
}

/* scan_pieces(): scan the pieces hs_seg_*() hand out, from @r. */
static int scan_pieces(struct sd_table *tab, const struct sd_cfg *cfg, const struct hs_trie *t,
		       uint8_t *pkt, size_t pkt_len, __u32 payload_off, __u32 l4_off, int r,
		       struct sd_result *res)
{
	struct hs_segwork *w = &tab->w;
	__u8 opts = cfg->on_error_pass ? HS_OPT_CONFLICT_GO_ON : 0;
	int i, done;
	__u8 phase;

	for (i = 0; i < HS_SEG_MAX_PIECES && r == HS_SEG_SCAN; i++) {
		struct sd_piece *pc = &res->pieces[res->n_pieces++];

		pc->off = w->off;
		pc->end = w->end;
		pc->commit = w->commit;
		done = scan_piece(tab, t, pkt, pkt_len, payload_off + w->off, payload_off + w->end,
				  l4_off, opts, res, pc);
		res->csum_acc += tab->s.csum_acc;
		phase = tab->s.st.phase;
		pc->phase = phase;
		if (phase == HS_PH_DROPPED) {
			res->drop_rule = 1;
			return HS_SEG_DROP;
		}
		if (phase == HS_PH_HALT) {
			res->halted = 1;
			return HS_SEG_POLICY;
		}
		if (!done) {
			res->incomplete = 1;
			return HS_SEG_POLICY;
		}
		hs_scan_finish(&tab->s, &tab->got);
		hs_seg_scanned(w, hs_scan_steady(&tab->s), payload_off);
		r = hs_seg_next(w, &tab->f, &tab->got);
	}
	if (r == HS_SEG_SCAN) {
		w->why = HS_WHY_UNVERIFIED;
		return HS_SEG_DROP;
	}
	return r;
}

void sd_segment(struct sd_table *tab, const struct sd_cfg *cfg, const struct hs_trie *t,
		uint8_t *pkt, size_t pkt_len, __u32 payload_off, __u32 l4_off, __u32 seq, __u32 len,
		__u32 win, __u8 flags, struct sd_result *res)
{
	struct hs_segwork *w = &tab->w;
	struct hs_flow *f = tab->present ? &tab->f : NULL;
	int r;

	memset(res, 0, sizeof(*res));
	hs_seg_init(w, seq, len, win, flags, HS_DIR_REQUEST);
	if (!hs_flow_live(f) && (flags & (HS_TCP_SYN | HS_TCP_ACK)) == HS_TCP_SYN)
		w->conn_open = (__u8)tab->conn_open;
	r = hs_seg_begin(w, f, cfg->untracked);
	if (r == HS_SEG_CREATE) {
		/* BPF_ANY: a SYN starts the tuple's connection afresh. */
		tab->f = w->fresh;
		tab->present = 1;
		f = &tab->f;
		r = hs_seg_begin(w, f, cfg->untracked);
	}
	if (f && r == HS_SEG_SCAN)
		r = scan_pieces(tab, cfg, t, pkt, pkt_len, payload_off, l4_off, r, res);
	res->final = r;
	res->why = w->why;
	res->ev = w->ev;
	res->linewise = w->nosave;
	if (r == HS_SEG_POLICY && cfg->on_error_pass) {
		/* Passed, checked line by line where that can be done
		 * (flow.h's hs_seg_policy_pass(), as bpf/hdrstrip.bpf.c). */
		__u32 before = f ? f->next_seq : 0;
		/* Ahead of a gap: the flow goes on line by line from its
		 * next_seq. */
		int ahead = w->why == HS_WHY_OUT_OF_ORDER && !w->nosave;

		res->policy = 1;
		r = hs_seg_policy_pass(w, f);
		if (f && r == HS_SEG_SCAN)
			r = scan_pieces(tab, cfg, t, pkt, pkt_len, payload_off, l4_off, r, res);
		/* What the policy let through, checked line by line or not,
		 * was not read with the stream's state. */
		res->unscanned_policy = len > 0;
		res->reinit = f && (f->next_seq != before || ahead);
		res->restart_seq = f ? f->next_seq : 0;
		res->linewise = w->nosave;
		res->verdict = r == HS_SEG_DROP ? SD_DROP : SD_PASS;
		return;
	}
	if (r == HS_SEG_DROP) {
		res->verdict = SD_DROP;
		return;
	}
	if (r == HS_SEG_POLICY) {
		res->policy = 1;
		res->verdict = SD_DROP;
		return;
	}
	if (!f && len && (w->ev & HS_EV_UNTRACKED) && !(flags & (HS_TCP_RST | HS_TCP_SYN))) {
		/* No state, --untracked pass. */
		res->untracked_pass = 1;
		res->unscanned_policy = 1;
	}
	res->verdict = SD_PASS;
}
