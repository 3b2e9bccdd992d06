/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The floor program's loop (floor.bpf.c): the LF bytes from @p to @end,
 * eight bytes per step, then the last few bytes one at a time, with one
 * packet bound check per word. Also what the lower-bound builds of the
 * datapath and of proxy mode read their payloads with (bpf/floor_scan.h),
 * so that "the floor's loop in place of the scanner" is this very loop.
 */
#ifndef HDRSTRIP_BENCH_FLOOR_LOOP_H
#define HDRSTRIP_BENCH_FLOOR_LOOP_H

/* 4 KiB of payload: more than any frame BPF_PROG_TEST_RUN takes linearly. */
#define FLOOR_MAX_WORDS 512

#define ONES 0x0101010101010101ULL
#define LOW7 0x7f7f7f7f7f7f7f7fULL

/* 1 in the low bit of every byte of @w that is '\n' (exact per byte). */
static __always_inline __u64 lf_bytes(__u64 w)
{
	__u64 x = w ^ (ONES * '\n');

	return (~(((x & LOW7) + LOW7) | x) >> 7) & ONES;
}

/* @n and the LF bytes of the last few bytes from @p to @end (fewer than a
 * word), one at a time. */
static __always_inline __u64 floor_lf_tail(__u64 n, __u8 *p, __u8 *end)
{
	int i;

	for (i = 0; i < 7; i++) {
		if (p + 1 > end)
			break;
		n += *p == '\n';
		p++;
	}
	return n;
}

static __always_inline __u64 floor_lf_words(__u8 *p, __u8 *end)
{
	__u64 n = 0;
	int i;

	for (i = 0; i < FLOOR_MAX_WORDS; i++) {
		if (p + 8 > end)
			break;
		/* Bytes summed by a multiply: each byte of lf_bytes() is 0 or 1. */
		n += (lf_bytes(*(__u64 *)p) * ONES) >> 56;
		p += 8;
	}
	return floor_lf_tail(n, p, end);
}

#endif /* HDRSTRIP_BENCH_FLOOR_LOOP_H */
