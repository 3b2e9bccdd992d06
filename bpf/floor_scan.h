/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Benchmarks only (bench/bench.mk, HS_BENCH_FLOOR_SCAN): the lower-bound
 * builds of both programs read a payload's bytes with the floor program's
 * loop (bench/bpf/floor.bpf.c) instead of scanning them. Never attached
 * outside a benchmark.
 */
#ifndef HDRSTRIP_BPF_FLOOR_SCAN_H
#define HDRSTRIP_BPF_FLOOR_SCAN_H

#ifdef HS_BENCH_FLOOR_SCAN

/* What the loops counted: a global, so that they cannot be left out. */
__u64 floor_scan_lines;

/* The line ends among @len bytes at @p (up to 4 KiB), eight at a time. */
static __always_inline void floor_lf_count(__u8 *p, __u8 *end, __u32 len)
{
	__u32 words = len / 8;
	__u64 n = 0, x;
	int i;

	for (i = 0; i < 512; i++) {
		if ((__u32)i >= words || p + 8 > end)
			break;
		x = HS_LOAD(__u64, p) ^ (HS_ONES * '\n');
		n += (((~(((x & 0x7f7f7f7f7f7f7f7fULL) + 0x7f7f7f7f7f7f7f7fULL) | x) >> 7) &
		       HS_ONES) *
		      HS_ONES) >>
		     56;
		p += 8;
	}
	for (i = 0; i < 7; i++) {
		if ((__u32)i >= (len & 7) || p + 1 > end)
			break;
		n += *p == '\n';
		p++;
	}
	floor_scan_lines += n;
}

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
