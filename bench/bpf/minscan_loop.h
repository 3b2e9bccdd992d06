/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Benchmarks only (bpf/floor_scan.h, HS_BENCH_MIN_SCAN): the least per-line
 * work any scanner of a header block must add to the floor's loop, done the
 * cheapest way BPF allows, eight bytes a step with no step dispatch and no
 * state in memory. Each word is classified at once (its LF bytes, its
 * colons, its bytes outside 0x21-0x7e); the bytes of a line before its
 * colon are its name, and an odd byte among them is noted; each line's
 * first two bytes are looked up in the trie's two-symbol table (the one
 * load that settles most names the list does not hold).
 *
 * It does less than a correct scanner must: no request line, no framing
 * (Content-Length, Transfer-Encoding, chunks, bodies), no CR rules, no
 * continuation lines, no name walked past its first two bytes, nothing
 * masked, no state carried to the next segment, and in a word with two
 * line ends only the first one's next line is looked at. Whatever it costs
 * over the floor is a lower bound on what a scanner, however designed,
 * adds to the path around it (BENCHMARKS.md, issue 37).
 *
 * HS_BENCH_MIN_SCAN_LEAN leaves out the odd-byte check and the lookup too:
 * each line's end and its name's end found, nothing more, to show what the
 * classification alone costs.
 */
#ifndef HDRSTRIP_BENCH_MINSCAN_LOOP_H
#define HDRSTRIP_BENCH_MINSCAN_LOOP_H

#include "floor_loop.h"

/* What the loop found: globals, so that none of its work can be left out. */
__u64 minscan_names_live; /* lines whose first two bytes may start a listed name */
__u64 minscan_odd; /* words with an odd byte in a name */

/* 0x80 in every byte of @w equal to @c (exact per byte). */
static __always_inline __u64 minscan_eq(__u64 w, __u64 c)
{
	__u64 x = w ^ (ONES * c);

	return ~(((x & LOW7) + LOW7) | x) & (ONES << 7);
}

/* 0x80 in every byte of @w outside 0x21-0x7e. */
static __always_inline __u64 minscan_odd_bytes(__u64 w)
{
	__u64 lo = (w & LOW7) + ONES * (0x80 - 0x21); /* 0x80 set: low 7 bits >= 0x21 */
	__u64 hi = (w & LOW7) + ONES * (0x80 - 0x7f); /* 0x80 set: low 7 bits >= 0x7f */

	return (~lo | hi | w) & (ONES << 7);
}

static __always_inline __u64 minscan_words(__u8 *p, __u8 *end, const struct hs_trie *t)
{
	__u64 n = 0, in_name = 1;
	int i;

	for (i = 0; i < FLOOR_MAX_WORDS; i++) {
		__u64 w, lf, co, bad, f, after, name, ca;
		__u32 at;

		if (p + 8 > end)
			break;
		w = *(__u64 *)p;
		lf = minscan_eq(w, '\n');
		co = minscan_eq(w, ':');
#ifdef HS_BENCH_MIN_SCAN_LEAN
		bad = 0;
#else
		bad = minscan_odd_bytes(w);
#endif
		/* A name running into this word: its bytes up to the first
		 * colon or line end. */
		name = 0;
		if (in_name) {
			f = (lf | co) & -(lf | co);
			name = f ? f - 1 : ~0ULL;
			in_name = !f;
		}
		if (lf) {
			n += (lf >> 7) * ONES >> 56;
			/* The next line: its first two bytes looked up, its
			 * name's bytes in this word noted. */
			f = lf & -lf;
			at = (__u32)((((f - 1) >> 7) & ONES) * ONES >> 56) & 7;
#ifdef HS_BENCH_MIN_SCAN_LEAN
			minscan_names_live += at + !t;
#else
			__u64 nx;

			/* Its first two bytes, from this word and the next
			 * (zero past the end: no bound check the verifier
			 * could lose across a variable offset). */
			nx = p + 16 <= end ? *(__u64 *)(p + 8) : 0;
			nx = at < 7 ? (w >> (8 * (at + 1))) | (nx << (56 - 8 * at)) : nx;
			if (t) {
				__u32 s0 = t->sym[nx & 0xff], s1 = t->sym[(nx >> 8) & 0xff];

				minscan_names_live +=
					t->root2[(s0 * HS_MAX_SYMS + s1) &
						 (HS_MAX_SYMS * HS_MAX_SYMS - 1)] != HS_TRIE_DEAD;
			}
#endif
			after = ~((f << 1) - 1);
			ca = co & after;
			name |= ca ? after & ((ca & -ca) - 1) : after;
			in_name = !ca;
		}
#ifdef HS_BENCH_MIN_SCAN_LEAN
		minscan_odd += (bad | name) != 0;
#else
		minscan_odd += (bad & name) != 0;
#endif
		p += 8;
	}
	return floor_lf_tail(n, p, end);
}

#endif /* HDRSTRIP_BENCH_MINSCAN_LOOP_H */
