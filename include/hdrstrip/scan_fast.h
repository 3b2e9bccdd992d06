/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fast lanes: steps that take many bytes at once where the byte-wise
 * steps would take one each, with the same states as those: eight bytes at
 * a time through a value, a request target or a masked line; a run of plain
 * name bytes a trie label at a time; and, at a kept line's end, the next
 * line's first bytes when they settle it as another kept line.
 *
 * A part of the scanner that scan.h includes in its place among the others:
 * it uses the state scan.h declares and the parts before it. Include
 * <hdrstrip/scan.h>, not this file.
 */
#ifndef HDRSTRIP_SCAN_FAST_H
#define HDRSTRIP_SCAN_FAST_H

#ifndef HDRSTRIP_SCAN_H
#error "include <hdrstrip/scan.h>, which includes scan_fast.h in its place"
#endif

/* The eight filler bytes from column @col < HS_FILL_NAME_LEN + 2 of a line
 * masked with the whole filler name: "x-hdrstrip: " and 'x' after it. */
HS_INLINE __u64 hs_fill_word(const struct hs_trie *t, __u32 col)
{
	__u64 a = t->fill[0], b = t->fill[1];

	return col >= 8 ? hs_str_window(b, HS_ONES * 'x', col) : hs_str_window(a, b, col);
}

/*
 * A word of a masked line: the eight bytes @w at @pos, of which the first
 * @c (1-8) become filler and the rest (a line end and what follows) stay;
 * the checksum's difference is added. Returns the new word. In BPF a
 * function of its own (HS_SUBPROG): the verifier checks it once rather than
 * in each round of the masking loop, whose rounds it cannot tell apart.
 */
HS_SUBPROG __u64 hs_mask_word(struct hs_scan *s, const struct hs_trie *t, __u64 w, __u32 c,
			      __u32 pos)
{
	__u64 keep = c >= 8 ? 0 : ~0ULL << (8 * (c & 7)), fill, nw;
	__u32 col;

	if (!s || !t)
		return w;
	col = hs_col(s, pos);
	if (s->st.flags & HS_SF_FILL_X)
		fill = HS_ONES * hs_fill_cont(t);
	else if (s->st.name_fill == HS_FILL_NAME_LEN && col < HS_FILL_NAME_LEN + 2u)
		fill = hs_fill_word(t, col);
	else
		fill = HS_ONES * 'x';
	nw = (w & keep) | (fill & ~keep);
	s->csum_acc += hs_csum_word(s, pos, nw) + 5 * 0xffffULL - hs_csum_word(s, pos, w);
	return nw;
}

#ifndef HS_MASK_WORDS
#define HS_MASK_WORDS 4
#endif
/* Words a step may take in a value or a request target (the last one's
 * end stays within 64 KiB of HS_MAX_BUF, for the verifier). */
#define HS_SKIP_WORDS 7
_Static_assert(HS_MAX_BUF + 8 * HS_SKIP_WORDS + 8 <= 0x10000, "a step's words fit in 64 KiB");

/* A request target ends at anything below '!' (blanks, CR, LF) or at
 * 0x85/0xa0 (blanks to Python). */
HS_INLINE __u64 hs_target_stop(__u64 w)
{
	return hs_bytes_below(w, 0x21) | hs_bytes_eq(w, 0x85) | hs_bytes_eq(w, 0xa0);
}

/* Where a name's run of bytes stops: at its colon, or at a byte that is
 * no plain name byte (a blank, a line end, any byte outside 0x21-0x7e,
 * which makes a line odd: hs_odd_name_byte()). */
HS_INLINE __u64 hs_name_stop(__u64 w)
{
	/* Above 0x7e: the top bit in the byte, or in the byte plus one (a
	 * carry from a byte 0xff below shows only above a stop already). */
	return hs_bytes_below(w, 0x21) | ((w | (w + HS_ONES)) & HS_HIGHS) | hs_bytes_eq(w, ':');
}

/* Where a word of a request target (@target), of a kept line's rest
 * (@skip) or of a masked line stops the word search (hs_step_word). */
HS_INLINE __u64 hs_word_stop(__u64 w, int target, int skip)
{
	return target ? hs_target_stop(w)
	       : skip ? hs_bytes_below(w, 0x0e)
		      : hs_bytes_eq(w, '\r') | hs_bytes_eq(w, '\n');
}

/*
 * A kept name's rest (SKIP with HS_SF_NAME_REST), the eight bytes @w at
 * @pos and (@have2) the eight after them, @w2: up to its colon, or up to
 * the first byte that makes the line odd (a line end too). Returns the
 * index (0-15) of the byte it ended at, from which the words are a kept
 * line's rest (every byte that search stops at stops this one, so the
 * lowest stop there is exact), or 16 when the words are all name
 * (consumed). In BPF a function of its own (HS_SUBPROG), checked once.
 */
HS_SUBPROG int hs_name_rest_word(struct hs_scan *s, __u64 w, __u64 w2, int have2, __u32 pos)
{
	__u64 ns = hs_name_stop(w);
	__u32 j = 0;

	if (!s)
		return 16;
	if (!ns) {
		if (!have2) {
			s->pos = hs_off(pos + 8);
			return 16;
		}
		ns = hs_name_stop(w2);
		if (!ns) {
			s->pos = hs_off(pos + 16);
			return 16;
		}
		w = w2;
		j = 8;
	}
	j += hs_first_byte(ns) & 7;
	hs_name_rest_end(s, (__u8)(w >> (8 * (j & 7))) != ':', pos + j);
	return (int)(j & 15);
}

/*
 * Eight bytes at once where only a line end matters: up to HS_SKIP_WORDS
 * words of a value or a request target, up to four of a masked line.
 * Returns 1 when it consumed bytes, 0 when the byte at @pos needs the
 * byte-wise path.
 */
HS_INLINE int hs_step_word(struct hs_scan *s, const struct hs_trie *t, __u8 *p, __u8 *data_end,
			   __u32 pos)
{
	int target = s->st.phase == HS_PH_REQ_TARGET, skip = s->st.phase == HS_PH_SKIP;
	__u64 w = hs_load64(p), stop;
	__u32 k;
	int first = 0; /* the words loop's first round (below) */

	/* A kept line's rest stops at any byte below 0x0e (three operations
	 * where CR and LF take eight): the byte-wise step takes a control
	 * byte that is no line end as the rest of the line, as the word would
	 * have. */
	stop = hs_word_stop(w, target, skip);
	k = stop ? hs_first_byte(stop) & 7 : 8; /* & 7: see the masked words below */
	if (skip && (s->st.flags & HS_SF_NAME_REST)) {
		/* A kept name's rest (hs_name_rest_word()), two words of it,
		 * then the line's rest from where it ended, in the same step. */
		__u64 w2 = 0;
		int have2 = 0;
		__u32 j;

		if (pos + 16 <= s->end && p + 16 <= data_end) {
			w2 = hs_load64(p + 8);
			have2 = 1;
		}
		j = (__u32)hs_name_rest_word(s, w, w2, have2, pos);
		if (j >= 16)
			return 1;
		if (j >= 8) {
			/* Ended in the second word: on from there, the words
			 * after it a round fewer (the last one's end stays where
			 * the verifier bounds an offset from @p: HS_SKIP_WORDS). */
			stop = hs_word_stop(w2, 0, 1) & ~hs_byte_mask(j - 8);
			if (stop) {
				s->pos = hs_off(pos + 8 + (hs_first_byte(stop) & 7));
				return 1;
			}
			k = 16;
			first = 1;
		} else {
			stop &= ~hs_byte_mask(j);
			k = stop ? hs_first_byte(stop) & 7 : 8;
		}
	}
	if (!k)
		return 0;
	if (k >= 8 &&
	    (s->st.phase == HS_PH_SKIP || target || (s->st.phase == HS_PH_MASK && hs_removes(s)))) {
		/* A long value or target (or a line being removed, which
		 * nothing rewrites): a few more words in this step, two a
		 * bound check (the check was the search's costliest line). */
		int i;

		for (i = first; i < (HS_SKIP_WORDS - 1) / 2; i++) {
			__u64 w2;

			if (pos + k + 16 > s->end || p + k + 16 > data_end)
				break;
			w = hs_load64(p + k);
			w2 = hs_load64(p + k + 8);
			stop = hs_word_stop(w, target, skip);
			if (stop) {
				k += hs_first_byte(stop);
				break;
			}
			stop = hs_word_stop(w2, target, skip);
			if (stop) {
				k += 8 + hs_first_byte(stop);
				break;
			}
			k += 16;
		}
		s->pos = hs_off(pos + k);
		return 1;
	}
	if (s->st.phase == HS_PH_MASK && !hs_removes(s)) {
		/* Filler up to the line end (the line end stays), up to four
		 * words. */
		__u32 j, c = k, off = 0;

#ifdef __clang__
#pragma unroll
#endif
		for (j = 0; j < HS_MASK_WORDS; j++) {
			if (j) {
				if (pos + off + 8 > s->end || p + off + 8 > data_end)
					break;
				w = hs_load64(p + off);
				stop = hs_bytes_eq(w, '\r') | hs_bytes_eq(w, '\n');
				/* & 7: the verifier must see the next offset
				 * stay below 64 KiB. */
				c = stop ? hs_first_byte(stop) & 7 : 8;
				if (!c)
					break;
			}
			hs_store64(p + off, hs_mask_word(s, t, w, c, pos + off));
			off += c;
			if (c < 8)
				break;
		}
		s->pos = hs_off(pos + off);
		return 1;
	}
	s->pos = hs_off(pos + k);
	return 1;
}

/*
 * A run of plain name bytes (no blank, line end or colon) in one step, from
 * @w, the eight bytes at @pos: the trie walks them a label at a time
 * (hs_trie_walk8), framing names are narrowed a word at a time.
 * The same states as byte by byte; a name that can match nothing any more
 * is skipped from the run's end rather than from the byte that settled it,
 * which no later byte of the run could change. Returns 1 when it consumed
 * bytes. In BPF it is a function of its own (HS_SUBPROG), which the
 * verifier checks once rather than at every step of the scan loop.
 */
HS_SUBPROG int hs_step_name_run(struct hs_scan *s, const struct hs_trie *t, __u64 w, __u32 pos)
{
	/* A name's run ends at its colon, or where the byte-wise steps are
	 * needed: blanks, line ends, and the bytes that make a line odd. */
	__u64 stop = hs_name_stop(w);
	__u32 k = stop ? hs_first_byte(stop) & 7 : 8, used = 0, col;
	__u8 fc;

	if (!s || !t || k < 2)
		return 0;
	col = hs_col(s, pos) - s->st.name_col;
	fc = s->st.fcand;
	s->st.tstate = hs_trie_walk8(t, s->st.tstate, w, k, &used);
	if (fc && used)
		fc = hs_framing_step8(fc, w, used, col);
	s->st.fcand = fc;
	if (s->st.tstate == HS_TRIE_DEAD && !fc && !(s->st.flags & HS_SF_PREMASKED))
		hs_skip_name(s);
	s->pos = hs_off(pos + used);
	return 1;
}

/*
 * The fast lane for kept lines: at the line end of a kept field (or of a
 * masked one, whose line end scan.h takes in SKIP), when the
 * next line's first few bytes already settle it as another kept field (no
 * listed name and no framing name starts so), go straight to skipping that
 * line; when they are plain name bytes that may still match, go on in NAME
 * after them. It is what hs_end_line(), hs_step_line_start() and the NAME
 * steps would do, in one step instead of four or more; in remove mode, the
 * line's start marked as hs_step_line_start() marks it.
 */
HS_INLINE int hs_name_byte_plain(__u8 b)
{
	return !hs_odd_name_byte(b) && b != ':';
}

#define HS_FAST_NAME_BYTES 4

HS_INLINE int hs_skip_next_line(struct hs_scan *s, const struct hs_trie *t, __u8 *p, __u8 *data_end,
				__u8 b, __u32 pos)
{
	__u32 eol = b == '\r' ? 2 : 1, ts = HS_TRIE_ROOT, i;
	__u8 fc = HS_FR_CL | HS_FR_TE | HS_FR_UPGRADE, nb;
	__u8 *q;

	if (pos + eol + HS_FAST_NAME_BYTES > s->end || p + 2 > data_end)
		return 0;
	if (b == '\r' && p[1] != '\n')
		return 0;
	q = p + eol;
	if (q + HS_FAST_NAME_BYTES > data_end)
		return 0;
		/* The next name's first bytes: settled once neither the list nor a
	 * framing name can match, all of them plain name bytes. */
#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < HS_FAST_NAME_BYTES; i++) {
		nb = q[i];
		if (!hs_name_byte_plain(nb))
			return 0;
		ts = hs_trie_step(t, ts, nb);
		fc = hs_framing_step(fc, nb, i);
		if (ts == HS_TRIE_DEAD && !fc)
			break;
	}
	/* Remove mode marks the line's start, with the state the line end's
	 * steps would have left there (hs_end_line(), the LF), for a line
	 * held back at the buffer's end. */
	if (hs_removes(s))
		hs_mark_line(s, pos + eol, (s->st.flags & HS_SF_PREV_MASKED) | HS_SF_PREV_LF);
	s->seen++;
	s->st.flags = HS_SF_PREV_LF;
	s->st.req &= ~HS_RQ_PREV_FRAMING;
	if (i == HS_FAST_NAME_BYTES) {
		/* Still a possible match: on in NAME after those bytes, where
		 * the line's first steps would have left it. */
		s->mask_start = hs_off(pos + eol);
		s->st.name_col = 0;
		s->st.fcand = fc;
		s->st.tstate = ts;
		s->st.phase = HS_PH_NAME;
		s->pos = hs_off(pos + eol + HS_FAST_NAME_BYTES);
		return 1;
	}
	/* A kept name: its rest is checked up to the colon (hs_skip_name()). */
	hs_skip_name(s);
	s->pos = hs_off(pos + eol + i + 1);
	s->run_at = s->pos; /* a new kept line's rest */
	return 1;
}

#endif /* HDRSTRIP_SCAN_FAST_H */
