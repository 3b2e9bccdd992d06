/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Benchmarks only (bench/bench.mk, HS_BENCH_FLOOR_SCAN): the lower-bound
 * builds of both programs read a payload's bytes with the floor program's
 * loop (bench/bpf/floor_loop.h) instead of scanning them. Never attached
 * outside a benchmark.
 */
#ifndef HDRSTRIP_BPF_FLOOR_SCAN_H
#define HDRSTRIP_BPF_FLOOR_SCAN_H

#ifdef HS_BENCH_FLOOR_SCAN

#include "../bench/bpf/floor_loop.h"
#ifdef HS_BENCH_MIN_SCAN
/* With HS_BENCH_MIN_SCAN too: the least per-line work any scanner adds
 * (bench/bpf/minscan_loop.h) in place of the floor's loop. The hooks'
 * programs only: in proxy mode's sk_msg program the verifier does not
 * accept that loop (BENCHMARKS.md, "Speed, fourth pass"). */
#include "../bench/bpf/minscan_loop.h"
#define floor_read(p, end, t) minscan_words(p, end, t)
#else
#define floor_read(p, end, t) ((void)(t), floor_lf_words(p, end))
#endif

/* What the loop counted: a global, so that it cannot be left out. */
__u64 floor_scan_lines;

/* The scan @s over [@s->start, @s->end) done, the stream left in the rest
 * of a kept line: the cheapest state it has. */
static __always_inline void floor_scan_done(struct hs_scan *s, __u32 *done)
{
	s->st.phase = HS_PH_SKIP;
	s->run_phase = HS_PH_SKIP;
	s->pos = s->end;
	*done = SCAN_DONE;
}

#endif /* HS_BENCH_FLOOR_SCAN */
#endif /* HDRSTRIP_BPF_FLOOR_SCAN_H */
