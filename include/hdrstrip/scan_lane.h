/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The head lane (issue 37): a request's whole head taken in one plain pass,
 * eight bytes at a time, with its state in registers, where the head has
 * the shape nearly every real request has; anything else is left, untouched,
 * to the byte-wise scanner (scan.h), which stays the reference the lane is
 * checked against (tests/unit/test_lane.c, and the scanner fuzzer's oracle:
 * tests/fuzz/scan_check.c, check_lane()).
 *
 * The shape it takes: a buffer that is one whole head, no more (its last
 * four bytes CR LF CR LF), of at most HS_LANE_MAX_LINES field lines and
 * 32 KiB, from its first byte:
 *  - a request line: a method of 1-7 bytes A-Z (not PRI, not CONNECT), one
 *    SP, a target of bytes 0x21-0x7e, one SP, "HTTP/1.1" or "HTTP/1.0",
 *    CRLF;
 *  - field lines: a name of bytes 0x21-0x7e up to its colon, a value with
 *    no CR or LF, CRLF; no name that frames a request (Content-Length,
 *    Transfer-Encoding, Upgrade, in any case: hs_framing_step8()), no name
 *    that a rule matches whose action is not mask, no name longer than
 *    HS_LANE_MAX_NAME bytes that the first two bytes' table (root2) leaves
 *    alive;
 *  - the empty line, CRLF, the buffer's last bytes.
 * For such a head the byte-wise scanner keeps every line but the matched
 * ones, and masks each of those from its first byte to its CR with the
 * filler (hs_fill_byte()): the lane does the same, with the same checksum
 * difference, and writes nothing until the whole head is known to have
 * that shape.
 *
 * The datapath's hooks run it beside the scan (bpf/lane.h): the matches it
 * reports are the scan's (hits, events), and hs_lane_to_scan() leaves the
 * stream where the scan would. Proxy and origin mode scan as before.
 * BENCHMARKS.md, "Speed, fifth pass", has what it costs and saves.
 */
#ifndef HDRSTRIP_SCAN_LANE_H
#define HDRSTRIP_SCAN_LANE_H

#include "scan.h"

/* Longest name the lane walks (four words); a longer one that the first
 * two bytes leave alive goes to the byte-wise scanner. */
#define HS_LANE_MAX_NAME 32
/* Field lines a head may have, and masked lines among them. */
#define HS_LANE_MAX_LINES 64
#define HS_LANE_MAX_MASKS 8
/* Words a line may take (512 bytes); a longer one goes byte-wise. */
#define HS_LANE_LINE_WORDS 64

/* The lane takes heads that end within the first 32 KiB of a buffer: its
 * offsets are masked to 15 bits, which the verifier takes as a bound that
 * leaves room for an 8-byte access below 64 KiB (a no-op at run time; the
 * empty asm keeps clang from proving it one and dropping it, as hs_off()). */
#define HS_LANE_MAX_END 0x8000

HS_INLINE __u32 hs_lane_off(__u32 v)
{
#ifdef __bpf__
	asm volatile("" : "+r"(v));
#endif
	return v & (HS_LANE_MAX_END - 1);
}

/* hs_lane_rule(): the name is no plain one for the lane. */
#define HS_LANE_NOT_PLAIN 0xffffffffu

struct hs_lane_name {
	__u64 w[4]; /* the name's bytes (and what follows them) */
	__u32 len;
	__u32 reserved;
};

struct hs_lane {
	__u64 csum_acc; /* as hs_scan.csum_acc */
	__u32 head_end; /* one past the empty line's LF */
	__u16 fields; /* field lines (hs_scan.seen) */
	__u16 masked; /* of them, masked (hs_scan.matched, .masked) */
	__u16 mask_from[HS_LANE_MAX_MASKS]; /* a masked line's first byte */
	__u16 mask_to[HS_LANE_MAX_MASKS]; /* ... and its CR */
	__u16 rule[HS_LANE_MAX_MASKS]; /* ... and its rule + 1 */
	__u8 fill[HS_LANE_MAX_MASKS]; /* ... and its filler name's length */
	__u8 nlen[HS_LANE_MAX_MASKS]; /* ... and its name's length */
	__u64 method; /* the request's method, as hs_stream.num holds it */
	__u32 spill; /* hs_lane_forget() */
	__u32 ls; /* BPF's driver: the next line's offset (bpf/lane.h) */
	__u32 end; /* the buffer's end: hs_lane_end() */
	/* The name hs_lane_rule() looks up (here, not on the stack: in BPF
	 * the stack's 512 bytes are the whole call chain's). */
	struct hs_lane_name nm;
};

/*
 * The offset the buffer ends at. In BPF read from map memory at each use:
 * a register would carry, from one round of a loop to the next, the range
 * each round's bound check narrowed it to, and the verifier would check
 * every round of every loop after it once for each such range.
 */
HS_INLINE __u32 hs_lane_end(const struct hs_lane *L)
{
#ifdef __bpf__
	return *(const volatile __u32 *)&L->end;
#else
	return L->end;
#endif
}

/*
 * @v, as the BPF verifier knows it after it went through map memory: not
 * at all. Offsets are exact to the verifier (they form packet pointers), so
 * the paths out of a loop over words, which differ in the offset where the
 * loop stopped, would each be checked apart, and each path through every
 * loop after it: forgotten, they are one. @L is in map memory in BPF
 * (bpf/lane.h). On the host, @v.
 */
HS_INLINE __u32 hs_lane_forget(struct hs_lane *L, __u32 v)
{
#ifdef __bpf__
	*(volatile __u32 *)&L->spill = v;
	return *(volatile __u32 *)&L->spill;
#else
	(void)L;
	return v;
#endif
}

/* 0x80 in every byte of @w outside [@lo, @hi] (0 < lo <= hi < 0x7f), exact
 * per byte. */
HS_INLINE __u64 hs_bytes_outside(__u64 w, __u8 lo, __u8 hi)
{
	const __u64 low7 = 0x7f7f7f7f7f7f7f7fULL;
	__u64 x = w & low7;
	__u64 ge = x + HS_ONES * (__u64)(0x80 - lo);
	__u64 gt = x + HS_ONES * (__u64)(0x80 - hi - 1);

	return (~ge | gt | w) & HS_HIGHS;
}

/*
 * The eight bytes at offset @off of the buffer [@d, @de) into *@w, zero
 * past offset @end (the last word before @end, shifted): 0 when there is
 * no byte at @off, or fewer than eight bytes before @end.
 */
HS_INLINE int hs_lane_load(const struct hs_lane *L, const __u8 *d, const __u8 *de, __u32 off,
			   __u64 *w)
{
	__u32 end = hs_lane_end(L), at, sh, diff;
	const __u8 *q;

	if (off >= end || end < 8 || end > HS_LANE_MAX_END)
		return 0;
	/* The word at @off, or the last one before @end shifted down to
	 * @off: chosen without a branch, whose two ways the verifier would
	 * follow apart, each with the offset's range narrowed its own way,
	 * doubling the paths at every word of a loop. */
	diff = end - 8 - off; /* negative (as 32 bits) past the last word */
	at = off + (diff & (__u32)((__s32)diff >> 31));
	sh = off - at;
	q = d + hs_lane_off(at);
	if (q + 8 > de)
		return 0;
	*w = hs_load64(q) >> (8 * (sh & 7));
	return 1;
}

/* Could a name that starts with @b0 @b1 frame the request (Content-Length,
 * Transfer-Encoding, Upgrade, in any case)? */
HS_INLINE int hs_lane_framing2(__u8 b0, __u8 b1)
{
	__u32 c = (__u32)(b0 | 0x20) | (__u32)(b1 | 0x20) << 8;

	return c == ('c' | 'o' << 8) || c == ('t' | 'r' << 8) || c == ('u' | 'p' << 8);
}

/*
 * One hs_trie_walk8() of a name's walk (hs_lane_rule()): the state, and
 * (<< 32) the bytes it took. In BPF a function of its own, checked once:
 * inside the walk's loop, each hop's branches after each other round's
 * would be checked apart.
 */
HS_SUBPROG __u64 hs_lane_walk8(const struct hs_trie *t, __u32 s, __u64 w, __u32 k)
{
	__u32 used = 0;

	if (!t || k == 0 || k > 8)
		return HS_TRIE_DEAD | (8ULL << 32);
	s = hs_trie_walk8(t, s, w, k, &used);
	return s | (__u64)(used & 15) << 32;
}

/*
 * The verdict for a name the lane holds whole: its rule + 1 when a rule
 * masks it in a request, 0 when none matches, HS_LANE_NOT_PLAIN when it
 * frames the request or a rule that drops, rejects or observes matches it.
 * The name is walked as hs_trie_step() from the root would, a label at a
 * time (hs_trie_walk8()). In BPF a function of its own, checked once.
 */
HS_SUBPROG __u32 hs_lane_rule(const struct hs_trie *t, const struct hs_lane_name *nm)
{
	__u32 len, s = HS_TRIE_ROOT, i = 0, c, v;
	__u8 fc = HS_FR_CL | HS_FR_TE | HS_FR_UPGRADE;

	if (!t || !nm)
		return HS_LANE_NOT_PLAIN;
	len = nm->len;
	if (len == 0 || len > HS_LANE_MAX_NAME)
		return HS_LANE_NOT_PLAIN;
	/* The framing names (7, 14 and 17 bytes: three words), for a name
	 * that starts as one does. */
	if (!hs_lane_framing2((__u8)nm->w[0], (__u8)(nm->w[0] >> 8)))
		fc = 0;
	else
		fc = hs_framing_step8(fc, nm->w[0], len < 8 ? len : 8, 0);
	if (fc && len > 8)
		fc = hs_framing_step8(fc, nm->w[1], len < 16 ? len - 8 : 8, 8);
	if (fc && len > 16)
		fc = hs_framing_step8(fc, nm->w[2], len - 16 < 8 ? len - 16 : 8, 16);
	if (hs_framing_exact(fc, len))
		return HS_LANE_NOT_PLAIN;
	/* Each round takes one byte at least, or the state is final. */
	for (c = 0; c < HS_LANE_MAX_NAME; c++) {
		__u32 k = 8 - (i & 7);
		__u64 r;

		if (i >= len || (s & HS_TRIE_STICKY))
			break;
		if (k > len - i)
			k = len - i;
		r = hs_lane_walk8(t, s, nm->w[(i >> 3) & 3] >> (8 * (i & 7)), k);
		s = (__u32)r;
		i += (__u32)(r >> 32);
	}
	v = hs_dir_rule(t, hs_trie_result(t, s), HS_DIR_REQUEST);
	if (v && t->rules[(v - 1) & (HS_MAX_NAMES - 1)].action != HS_ACT_MASK)
		return HS_LANE_NOT_PLAIN;
	return v;
}

/*
 * Could a name that starts with the bytes @b0 @b1 be listed, or frame the
 * request? One load from the trie's two-symbol table settles most names.
 */
HS_INLINE int hs_lane_alive2(const struct hs_trie *t, __u8 b0, __u8 b1)
{
	if (hs_lane_framing2(b0, b1))
		return 1;
	return t->root2[((__u32)t->sym[hs_index_byte(b0)] * HS_MAX_SYMS +
			 t->sym[hs_index_byte(b1)]) &
			(HS_MAX_SYMS * HS_MAX_SYMS - 1)] != HS_TRIE_DEAD;
}

/*
 * The request line from @off: the offset after its CRLF, or 0 when it is
 * not of the lane's shape.
 */
HS_INLINE __u32 hs_lane_reqline(struct hs_lane *L, const __u8 *d, const __u8 *de, __u32 off)
{
	__u64 w, stop;
	__u32 m, i, at;

	if (!hs_lane_load(L, d, de, off, &w))
		return 0;
	stop = hs_bytes_eq(w, ' ');
	if (!stop)
		return 0;
	m = hs_first_byte(stop);
	if (m == 0 || (hs_bytes_outside(w, 'A', 'Z') & hs_byte_mask(m)))
		return 0;
	L->method = w & hs_byte_mask(m);
	/* PRI (HTTP/2's preface) and CONNECT (a tunnel) are the scanner's. */
	if ((m == 3 && (w & 0xffffff) == 0x495250) ||
	    (m == 7 && (w & 0xffffffffffffffULL) == 0x5443454e4e4f43ULL))
		return 0;
	/* The target: bytes 0x21-0x7e up to one SP. */
	at = off + m + 1;
	for (i = 0; i < HS_LANE_LINE_WORDS; i++) {
		if (!hs_lane_load(L, d, de, at, &w))
			return 0;
		stop = hs_bytes_outside(w, 0x21, 0x7e);
		if (stop) {
			at += hs_first_byte(stop);
			break;
		}
		at += 8;
	}
	if (at == off + m + 1)
		return 0;
	at = hs_lane_forget(L, at);
	if (!hs_lane_load(L, d, de, at, &w) || (__u8)w != ' ')
		return 0;
	/* " HTTP/1.1" or " HTTP/1.0", then CRLF. */
	if (!hs_lane_load(L, d, de, at + 1, &w) || (w | (1ULL << 56)) != 0x312e312f50545448ULL)
		return 0;
	if (!hs_lane_load(L, d, de, at + 3, &w) || (w >> 48) != 0x0a0d)
		return 0;
	return at + 11;
}

/*
 * Mask [@from, @to) with the filler of a name of @nf bytes (hs_fill_byte()):
 * a word at a time, then the last few bytes as the word that ends at @to
 * (bytes before @from in it kept, bytes masked already rewritten with what
 * they are: no difference to the checksum). No loop over bytes: the
 * verifier would check each byte's branches after each other's.
 */
HS_INLINE void hs_lane_mask(struct hs_lane *L, const struct hs_trie *t, __u8 *d, const __u8 *de,
			    __u32 from, __u32 to, __u32 nf, __u32 par)
{
	const __u64 x = HS_ONES * 'x';
	__u64 f0 = 0, f1 = 0, w, nw, keep = 0;
	__u32 j, q, len = to - from;
	__u8 *p;

	if (to > HS_LANE_MAX_END || from > to || to < 8)
		return;
#ifdef __clang__
#pragma unroll
#endif
	for (j = 0; j < 8; j++) {
		f0 |= (__u64)hs_fill_byte(t, j, nf) << (8 * j);
		f1 |= (__u64)hs_fill_byte(t, j + 8, nf) << (8 * j);
	}
	for (j = 0; j < HS_LANE_LINE_WORDS; j++) {
		q = from + 8 * j;
		if (q + 8 > to)
			break;
		p = d + hs_lane_off(q);
		if (p + 8 > de)
			return;
		w = hs_load64(p);
		nw = j == 0 ? f0 : j == 1 ? f1 : x;
		hs_store64(p, nw);
		L->csum_acc +=
			hs_csum_word_par(par, q, nw) + 5 * 0xffffULL - hs_csum_word_par(par, q, w);
	}
	if (!(len & 7))
		return;
	/* The word that ends at @to: its filler from column len - 8. */
	if (len < 8) {
		keep = hs_byte_mask(8 - len);
		nw = f0 << (8 * (8 - len));
	} else if (len < 16) {
		nw = hs_str_window(f0, f1, len - 8);
	} else if (len < 24) {
		nw = hs_str_window(f1, x, len - 16);
	} else {
		nw = x;
	}
	q = to - 8;
	p = d + hs_lane_off(q);
	if (p + 8 > de)
		return;
	w = hs_load64(p);
	nw = (w & keep) | (nw & ~keep);
	hs_store64(p, nw);
	L->csum_acc += hs_csum_word_par(par, q, nw) + 5 * 0xffffULL - hs_csum_word_par(par, q, w);
}

/* 0x80 in every byte of @w equal to @c, exact per byte. */
HS_INLINE __u64 hs_lane_eq(__u64 w, __u8 c)
{
	return ~hs_nonzero8(w ^ (HS_ONES * c)) & HS_HIGHS;
}

/*
 * The verdict for the name of @len bytes at offset @at, whose first eight
 * bytes are @w: hs_lane_rule()'s,
 * after the first two bytes' table when they settle it (no listed name and
 * no framing name starts so: 0).
 */
HS_INLINE __u32 hs_lane_verdict(struct hs_lane *L, const struct hs_trie *t, const __u8 *d,
				const __u8 *de, __u32 at, __u32 len, __u64 w)
{
	__u32 i;

	if (len >= 2 && !hs_lane_alive2(t, (__u8)w, (__u8)(w >> 8)))
		return 0;
	if (len > HS_LANE_MAX_NAME)
		return HS_LANE_NOT_PLAIN;
	L->nm.len = len;
	for (i = 0; i < HS_LANE_MAX_NAME / 8; i++) {
		if (8 * i >= len)
			break;
		if (i && !hs_lane_load(L, d, de, at + 8 * i, &w))
			return HS_LANE_NOT_PLAIN;
		L->nm.w[i & 3] = w; /* hs_lane_rule() reads no byte past len */
	}
	return hs_lane_rule(t, &L->nm);
}

/* hs_lane_line() results */
#define HS_LANE_NO 0 /* not of the lane's shape: the scanner's */
#define HS_LANE_LINE 1 /* a field line taken: *ls is the next one's */
#define HS_LANE_END 2 /* the empty line: L->head_end set */

/*
 * The line at offset *@ls of a head the lane takes, a word at a time: its
 * name up to the first byte that is no plain name byte (its colon, or the
 * lane stops), its value up to the first byte below 0x0e (its CR, or a
 * control byte: then CR and LF are looked for exactly from there). A
 * matched line is noted in @L, to be masked once the whole head is known.
 * In BPF one bpf_loop() call a line (bpf/lane.h): the verifier checks a
 * line once.
 */
HS_INLINE int hs_lane_line(struct hs_lane *L, const struct hs_trie *t, const __u8 *d,
			   const __u8 *de, __u32 *ls_io)
{
	__u32 ls = *ls_io, pos = ls, i, k, at, v, nlen, m;
	__u64 w, ev = 0;

	if (!hs_lane_load(L, d, de, ls, &w))
		return HS_LANE_NO;
	if ((__u16)w == 0x0a0d) {
		/* The empty line: it must end the buffer (a request after it
		 * is the scanner's, from the state this one leaves). */
		if (ls + 2 != hs_lane_end(L))
			return HS_LANE_NO;
		L->head_end = ls + 2;
		return HS_LANE_END;
	}
	/*
	 * Three plain loops, each a word at a time up to its first byte of
	 * interest: each one's offset is forgotten where it stops
	 * (hs_lane_forget()), so that the verifier checks the loops after it
	 * once, not once for each round it could have stopped at.
	 */
	/* The name: up to its colon, all plain name bytes. */
	for (i = 0; i < HS_LANE_LINE_WORDS; i++) {
		ev = hs_name_stop(w);
		if (ev)
			break;
		pos += 8;
		if (!hs_lane_load(L, d, de, pos, &w))
			return HS_LANE_NO;
	}
	if (!ev)
		return HS_LANE_NO;
	k = hs_first_byte(ev) & 7;
	if ((__u8)(w >> (8 * k)) != ':')
		return HS_LANE_NO;
	pos = hs_lane_forget(L, pos);
	nlen = pos + k - ls;
	/* The value: up to its first byte below 0x0e, its CR if all is
	 * well. The name's bytes, up to the colon, are none: the search
	 * above them is exact. */
	ev = hs_bytes_below(w, 0x0e) & (k < 7 ? ~0ULL << (8 * k + 8) : 0);
	for (i = 0; i < HS_LANE_LINE_WORDS && !ev; i++) {
		pos += 8;
		if (!hs_lane_load(L, d, de, pos, &w))
			return HS_LANE_NO;
		ev = hs_bytes_below(w, 0x0e);
	}
	if (!ev)
		return HS_LANE_NO;
	k = hs_first_byte(ev) & 7;
	pos = hs_lane_forget(L, pos);
	if ((__u8)(w >> (8 * k)) != '\r') {
		/* A control byte in the value: CR and LF exactly from it. */
		ev = (hs_lane_eq(w, '\r') | hs_lane_eq(w, '\n')) & (~0ULL << (8 * k));
		for (i = 0; i < HS_LANE_LINE_WORDS && !ev; i++) {
			pos += 8;
			if (!hs_lane_load(L, d, de, pos, &w))
				return HS_LANE_NO;
			ev = hs_lane_eq(w, '\r') | hs_lane_eq(w, '\n');
		}
		if (!ev)
			return HS_LANE_NO;
		k = hs_first_byte(ev) & 7;
		pos = hs_lane_forget(L, pos);
	}
	/* The line's CR (an LF must follow it), and its name's verdict. */
	at = pos + k;
	if (!hs_lane_load(L, d, de, at, &w) || (__u16)w != 0x0a0d ||
	    L->fields >= HS_LANE_MAX_LINES || !hs_lane_load(L, d, de, ls, &w))
		return HS_LANE_NO;
	v = hs_lane_verdict(L, t, d, de, ls, nlen, w);
	if (v == HS_LANE_NOT_PLAIN)
		return HS_LANE_NO;
	if (v) {
		m = L->masked;
		if (m >= HS_LANE_MAX_MASKS)
			return HS_LANE_NO;
		L->mask_from[m & (HS_LANE_MAX_MASKS - 1)] = (__u16)ls;
		L->mask_to[m & (HS_LANE_MAX_MASKS - 1)] = (__u16)at;
		L->rule[m & (HS_LANE_MAX_MASKS - 1)] = (__u16)v;
		L->fill[m & (HS_LANE_MAX_MASKS - 1)] =
			(__u8)(nlen < HS_FILL_NAME_LEN ? nlen : HS_FILL_NAME_LEN);
		L->nlen[m & (HS_LANE_MAX_MASKS - 1)] = (__u8)nlen;
		L->masked = m + 1;
	}
	L->fields++;
	*ls_io = at + 2;
	return HS_LANE_LINE;
}

/*
 * Start a head at offset @start of a buffer that ends at @end: @L cleared,
 * the request line taken. The offset of the first field line, or 0: not of
 * the lane's shape, or not a buffer that the head ends (its last four
 * bytes, CR LF CR LF, looked at first: a head cut by the buffer's end is
 * the scanner's at once, not after a pass of the lane over all of it).
 */
HS_INLINE __u32 hs_lane_begin(struct hs_lane *L, const __u8 *d, const __u8 *de, __u32 start,
			      __u32 end)
{
	__u64 w;

	__builtin_memset(L, 0, sizeof(*L));
	if (end > HS_LANE_MAX_END || end < 8 || start >= end)
		return 0;
	L->end = end;
	if (!hs_lane_load(L, d, de, end - 8, &w) || (w >> 32) != 0x0a0d0a0d)
		return 0;
	return hs_lane_forget(L, hs_lane_reqline(L, d, de, start));
}

/*
 * Take the head in [@start, @end) of the buffer [@d, @de) when it has the
 * lane's shape (above): mask its matched lines, fill in @L, and return 1.
 * Returns 0, with nothing written, for any other head: the byte-wise
 * scanner's. @par: the parity of the checksum's first offset (csum_base).
 * The host's driver; BPF's is bpf/lane.h, with the same steps.
 */
HS_INLINE int hs_lane_head(struct hs_lane *L, const struct hs_trie *t, __u8 *d, const __u8 *de,
			   __u32 start, __u32 end, __u32 par)
{
	__u32 ls = hs_lane_begin(L, d, de, start, end), n, i;
	int r = HS_LANE_NO;

	for (n = 0; ls && n <= HS_LANE_MAX_LINES; n++) {
		r = hs_lane_line(L, t, d, de, &ls);
		if (r != HS_LANE_LINE)
			break;
	}
	if (r != HS_LANE_END)
		return 0;
	for (i = 0; i < HS_LANE_MAX_MASKS && i < L->masked; i++)
		hs_lane_mask(L, t, d, de, L->mask_from[i], L->mask_to[i], L->fill[i], par);
	return 1;
}

/*
 * What a head the lane took leaves in @s, a scan begun on the buffer from a
 * stream at a request's start (hs_scan_begin()): what the byte-wise steps
 * leave there, through the same functions where they change the stream
 * (hs_request_line_done() at the request line's end, hs_block_done() at
 * the empty line), and the counts and checksum difference of its lines. Its
 * matches are the caller's to report, before the masks are written (an
 * event copies the name as it came): rule L->rule[i], the name's L->nlen[i]
 * bytes at L->mask_from[i], as hs_note_match() gives them.
 */
HS_INLINE void hs_lane_to_scan(const struct hs_lane *L, struct hs_scan *s)
{
	/* The request line: its method read, its end. */
	s->st.req = 0;
	s->st.num = L->method;
	hs_request_line_done(s);
	/* The field lines, then the empty line's LF after a line end that
	 * had one. */
	s->seen += L->fields;
	s->matched += L->masked;
	s->masked += L->masked;
	s->csum_acc += L->csum_acc;
	if (L->masked) {
		__u32 k = (L->masked - 1) & (HS_LANE_MAX_MASKS - 1);

		s->rule = L->rule[k];
		s->name_off = L->mask_from[k];
		s->name_len = L->nlen[k];
	}
	s->st.flags = HS_SF_PREV_LF;
	hs_block_done(s);
	s->pos = hs_off(L->head_end);
	s->run_phase = s->st.phase;
	s->run_at = s->pos;
}

#endif /* HDRSTRIP_SCAN_LANE_H */
