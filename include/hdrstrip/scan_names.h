/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Field names: the names that frame a request (Content-Length,
 * Transfer-Encoding, Upgrade), recognised beside the trie, a name's first
 * byte, and the verdict where a name ends (at its colon, or at a line end
 * with no colon): keep, learn the framing, mask from the line's start,
 * drop or remove.
 *
 * A part of the scanner that scan.h includes in its place among the others:
 * it uses the state scan.h declares and the parts before it. Include
 * <hdrstrip/scan.h>, not this file.
 */
#ifndef HDRSTRIP_SCAN_NAMES_H
#define HDRSTRIP_SCAN_NAMES_H

#ifndef HDRSTRIP_SCAN_H
#error "include <hdrstrip/scan.h>, which includes scan_names.h in its place"
#endif

/*
 * The fields that frame a request are recognised beside the trie, exactly
 * as servers spell them (any case, no '_' for '-'), so the list stays the
 * operator's alone. Byte @i of field name @k, or 0 past its end.
 */
#define HS_FR_CL 0x1 /* content-length */
#define HS_FR_TE 0x2 /* transfer-encoding */
#define HS_FR_UPGRADE 0x4 /* upgrade */

HS_INLINE __u8 hs_framing_byte(__u32 k, __u32 i)
{
	__u64 w;

	if (k == 0) {
		if (i >= 14)
			return 0;
		w = i < 8 ? 0x2d746e65746e6f63ULL : 0x00006874676e656cULL; /* "content-" "length" */
	} else if (k == 1) {
		if (i >= 17)
			return 0;
		w = i < 8 ? 0x726566736e617274ULL : i < 16 ? 0x6e69646f636e652dULL : 0x67;
	} else {
		if (i >= 7)
			return 0;
		w = 0x0065646172677075ULL; /* "upgrade" */
	}
	return (__u8)(w >> (8 * (i & 7)));
}

/* Narrow the framing candidates by name byte @b at index @i. */
HS_INLINE __u8 hs_framing_step(__u8 fc, __u8 b, __u32 i)
{
	__u8 c = b | 0x20; /* ASCII letters to lower case; '-' stays */

	if ((fc & HS_FR_CL) && c != hs_framing_byte(0, i))
		fc &= ~HS_FR_CL;
	if ((fc & HS_FR_TE) && c != hs_framing_byte(1, i))
		fc &= ~HS_FR_TE;
	if ((fc & HS_FR_UPGRADE) && c != hs_framing_byte(2, i))
		fc &= ~HS_FR_UPGRADE;
	return fc;
}

/* Eight bytes of a string held in words @lo, @hi, from byte @r (< 8). */
HS_INLINE __u64 hs_str_window(__u64 lo, __u64 hi, __u32 r)
{
	r &= 7;
	return r ? (lo >> (8 * r)) | (hi << (64 - 8 * r)) : lo;
}

/* Expected bytes (lower case, zero past the end) of framing name @k
 * (0: content-length, 1: transfer-encoding, 2: upgrade) from index @i. */
HS_INLINE __u64 hs_framing_word(__u32 k, __u32 i)
{
	if (i >= 24)
		return 0;
	if (k == 0)
		return i < 8 ? hs_str_window(0x2d746e65746e6f63ULL, 0x00006874676e656cULL, i)
			     : 0x00006874676e656cULL >> (8 * (i & 7));
	if (k == 1) {
		if (i < 8)
			return hs_str_window(0x726566736e617274ULL, 0x6e69646f636e652dULL, i);
		if (i < 16)
			return hs_str_window(0x6e69646f636e652dULL, 0x67, i);
		return 0x67ULL >> (8 * (i & 7));
	}
	return i < 8 ? 0x0065646172677075ULL >> (8 * i) : 0;
}

/* hs_framing_step() over the first @n (1..8) bytes of @w, at index @i. A
 * name byte is never zero once or-ed with 0x20, so the zeros past a name's
 * end drop the candidate a longer name was. */
HS_INLINE __u8 hs_framing_step8(__u8 fc, __u64 w, __u32 n, __u32 i)
{
	__u64 c = w | (HS_ONES * 0x20), m = hs_byte_mask(n);

	if ((fc & HS_FR_CL) && ((c ^ hs_framing_word(0, i)) & m))
		fc &= ~HS_FR_CL;
	if ((fc & HS_FR_TE) && ((c ^ hs_framing_word(1, i)) & m))
		fc &= ~HS_FR_TE;
	if ((fc & HS_FR_UPGRADE) && ((c ^ hs_framing_word(2, i)) & m))
		fc &= ~HS_FR_UPGRADE;
	return fc;
}

/* The candidates whose whole name is the @i bytes seen. */
HS_INLINE __u8 hs_framing_exact(__u8 fc, __u32 i)
{
	if ((fc & HS_FR_CL) && hs_framing_byte(0, i))
		fc &= ~HS_FR_CL;
	if ((fc & HS_FR_TE) && hs_framing_byte(1, i))
		fc &= ~HS_FR_TE;
	if ((fc & HS_FR_UPGRADE) && hs_framing_byte(2, i))
		fc &= ~HS_FR_UPGRADE;
	return fc;
}

/*
 * Lines that some parser does not read as field lines (see the top of
 * scan.h): a byte outside 0x21-0x7e in a name (':' ends it) is one no
 * parser takes there alike.
 */
HS_INLINE int hs_odd_name_byte(__u8 b)
{
	return (__u8)(b - 0x21) > 0x7e - 0x21;
}

/* HS_SF_ODD_NAME for name byte @b, or 0 (no branch). */
HS_INLINE __u16 hs_odd_name_flag(__u8 b)
{
	_Static_assert(HS_SF_ODD_NAME == 1 << 14, "HS_SF_ODD_NAME's bit");
	return (__u16)(hs_odd_name_byte(b) << 14);
}

/* The current line is kept as it came, and is no field line to some
 * parser (a continuation line is one to every parser: it folds). */
HS_INLINE void hs_odd_line(struct hs_scan *s)
{
	if (!(s->st.flags & HS_SF_CONT))
		s->st.conn |= HS_CN_ODD_LINE;
}

/* A line whose first bytes were blanks other than SP and HTAB ended, or
 * met its colon, before any name byte: no field line to such a parser. */
HS_INLINE void hs_odd_lead(struct hs_scan *s)
{
	if ((s->st.flags & (HS_SF_LEAD_JUNK | HS_SF_CONT)) == HS_SF_LEAD_JUNK)
		s->st.conn |= HS_CN_ODD_LINE;
}

/*
 * A kept name that can match nothing any more: the rest of its line is
 * skipped. The rest of the name, up to its colon, is still looked at
 * (HS_SF_NAME_REST) for what makes the line odd, unless the line is odd
 * already, or an odd line can no longer matter (a block already odd, a
 * stream read line by line, trailers, which frame nothing).
 */
HS_INLINE void hs_skip_name(struct hs_scan *s)
{
	s->st.phase = HS_PH_SKIP;
	if (s->st.flags & HS_SF_CONT)
		return;
	if (s->st.flags & (HS_SF_LEAD_JUNK | HS_SF_NAME_JUNK | HS_SF_ODD_NAME))
		s->st.conn |= HS_CN_ODD_LINE;
	else
		s->st.flags |= HS_SF_NAME_REST;
}

/* SKIP with HS_SF_NAME_REST: the name's rest ended at @at, at its colon
 * or (@odd) at a byte that makes the line odd, or at the line's end. From
 * the next byte on the rest of the line is any kept line's. */
HS_INLINE void hs_name_rest_end(struct hs_scan *s, int odd, __u32 at)
{
	s->st.flags &= ~HS_SF_NAME_REST;
	if (odd)
		s->st.conn |= HS_CN_ODD_LINE;
	s->run_at = hs_off(at + 1);
}

/* First byte of a name at @pos: counted, and looked up from the root. */
HS_INLINE void hs_start_name(struct hs_scan *s, const struct hs_trie *t, __u8 b, __u32 pos)
{
	__u32 col = hs_col(s, pos);

	if (!(s->st.flags & HS_SF_CONT))
		s->seen++;
	s->st.flags |= hs_odd_name_flag(b);
	s->st.name_col = col;
	s->st.fcand = hs_framing_step(HS_FR_CL | HS_FR_TE | HS_FR_UPGRADE, b, 0);
	s->st.tstate = hs_trie_step(t, HS_TRIE_ROOT, b);
	s->st.phase = HS_PH_NAME;
	if (s->st.tstate == HS_TRIE_DEAD && !s->st.fcand)
		hs_skip_name(s);
	s->pos = hs_off(pos + 1);
}

/* Rewrite the current line from its first rewritable byte in this buffer. */
HS_INLINE void hs_start_mask(struct hs_scan *s, __u32 pos)
{
	__u32 len = hs_col(s, pos);

	s->st.name_fill = len < HS_FILL_NAME_LEN ? len : HS_FILL_NAME_LEN;
	s->st.flags &= ~(HS_SF_KEEP_WS | HS_SF_FILL_X);
	s->st.phase = HS_PH_MASK;
	/* Go back to the line's start, or this buffer's if it began earlier. */
	s->pos = hs_col(s, s->start) <= hs_col(s, pos) && hs_col(s, s->start) ? s->start
									      : s->mask_start;
	/* The stream is in MASK from the byte after @pos, not from where the
	 * rewriting goes back to: a buffer that ends inside the name ends in
	 * NAME (hs_scan_steady()). */
	s->run_phase = HS_PH_MASK;
	s->run_at = hs_off(pos + 1);
}

/* A field that frames the request (Content-Length, Transfer-Encoding,
 * Upgrade) is kept: learn from it. Returns the next phase. */
HS_INLINE __u8 hs_framing_field(struct hs_scan *s, __u8 fc)
{
	/* Odd bytes around the name: some servers take the field, others
	 * drop it, so nobody can tell where the body ends. */
	if (s->st.flags & (HS_SF_NAME_JUNK | HS_SF_LEAD_JUNK | HS_SF_CONT)) {
		s->st.conn |= HS_CN_BAD_FRAMING;
		return HS_PH_SKIP;
	}
	/* After a line that some parser stops reading fields at (Python's
	 * http.client): that parser never reads a length or a coding here,
	 * others do. (Upgrade: the connection goes line by line anyway.) */
	if ((s->st.conn & HS_CN_ODD_LINE) && (fc & (HS_FR_CL | HS_FR_TE)))
		s->st.conn |= HS_CN_BAD_FRAMING;
	s->st.req |= HS_RQ_PREV_FRAMING;
	s->st.vstate = 0;
	s->st.num = 0;
	if (fc & HS_FR_CL)
		return HS_PH_VALUE_CL;
	if (fc & HS_FR_TE)
		return HS_PH_VALUE_TE;
	s->st.req |= HS_RQ_UPGRADE;
	return HS_PH_SKIP;
}

/* A match of rule @v - 1 by the name that ended at @pos: what the caller's
 * event reports. */
HS_INLINE void hs_note_match(struct hs_scan *s, __u32 v, __u32 pos)
{
	__u32 dist = (hs_col(s, pos) - s->st.name_col) & 0xffff;
	/* The name's bytes this buffer holds (a name split over two buffers:
	 * its end). */
	__u32 from = pos - s->start < dist ? s->start : pos - dist;

	s->name_off = (__u16)hs_off(from);
	s->name_len = (__u16)hs_off(pos - from);
	s->rule = v;
	s->matched++;
}

/* Rule @v - 1 (0: none) masks or drops here. */
HS_INLINE int hs_rule_enforced(const struct hs_trie *t, __u32 v)
{
	return v && !hs_rule_observes(t, v);
}

/*
 * A match of rule @v - 1 that only observes (its action, or observe mode):
 * reported, then kept as a line that matches nothing is (which the caller
 * does when this returns 1). A line whose first bytes were rewritten ahead
 * cannot be kept: its rest is masked, as for a name that matches nothing.
 */
HS_INLINE int hs_observed(struct hs_scan *s, const struct hs_trie *t, __u32 v, __u32 pos)
{
	if (!v || (!(s->opts & HS_OPT_OBSERVE) && !hs_rule_observes(t, v)))
		return 0;
	hs_note_match(s, v, pos);
	s->observed++;
	return 1;
}

/*
 * The name that ended at @pos matched list rule @v - 1: drop, or mask the
 * line from its start, or (HS_OPT_REMOVE) report the whole line from its
 * first byte, scanning on from @next.
 */
HS_INLINE int hs_matched(struct hs_scan *s, const struct hs_trie *t, __u32 v, __u32 pos, __u32 next)
{
	hs_note_match(s, v, pos);
	if (hs_action_drops(t->rules[(v - 1) & (HS_MAX_NAMES - 1)].action)) {
		s->st.phase = HS_PH_DROPPED;
		return HS_STEP_MATCH;
	}
	s->masked++;
	if (hs_removes(s)) {
		/* The whole line goes, from its first byte: no rewriting. */
		s->removed++;
		s->st.phase = HS_PH_MASK;
		s->rm_start = s->line_start;
		s->pos = hs_off(next);
		return HS_STEP_MATCH;
	}
	hs_start_mask(s, pos);
	return HS_STEP_MATCH;
}

/* The name ended at a colon at @pos: look the verdict up and act on it. */
HS_INLINE int hs_decide(struct hs_scan *s, const struct hs_trie *t, __u32 pos)
{
	__u32 v = hs_stream_rule(
		t, hs_trie_result(t, (s->st.flags & HS_SF_IN_JUNK) ? s->st.saved : s->st.tstate),
		&s->st);
	__u8 fc = s->st.fcand;
	int r = HS_STEP_MORE;

	if (!(s->st.flags & HS_SF_NAME_JUNK))
		fc = hs_framing_exact(fc, hs_col(s, pos) - s->st.name_col);
	s->st.req &= ~HS_RQ_PREV_FRAMING;
	if (hs_observed(s, t, v, pos)) {
		r = HS_STEP_MATCH;
		v = 0;
	}
	if (!v) {
		s->st.phase = HS_PH_SKIP;
		/* Kept with odd bytes in or around its name (a line rewritten
		 * ahead is masked whole below, a field to every parser). */
		if ((s->st.flags & (HS_SF_LEAD_JUNK | HS_SF_NAME_JUNK | HS_SF_ODD_NAME)) &&
		    !(s->st.flags & HS_SF_PREMASKED))
			hs_odd_line(s);
		/* An observed framing field is read as framing all the same. */
		if (fc && !(s->st.conn & HS_CN_UNTRACKED) && !(s->st.req & HS_RQ_TRAILERS))
			s->st.phase = hs_framing_field(s, fc);
		if (s->st.flags & HS_SF_PREMASKED) {
			/* Its first bytes are gone already: mask the rest. */
			hs_start_mask(s, pos);
			return r;
		}
		s->pos = hs_off(pos + 1);
		return r;
	}
	return hs_matched(s, t, v, pos, pos + 1);
}

/*
 * The line ended at @pos (byte @b) in its name, with no colon: nginx takes
 * it for a field with an empty value, so a listed name is masked (or
 * dropped) as a field is; any other such line is kept.
 */
HS_INLINE int hs_decide_bare(struct hs_scan *s, const struct hs_trie *t, __u8 b, __u32 pos)
{
	__u32 v = hs_stream_rule(
		t, hs_trie_result(t, (s->st.flags & HS_SF_IN_JUNK) ? s->st.saved : s->st.tstate),
		&s->st);
	int r = HS_STEP_MORE;

	s->st.flags &= ~HS_SF_PREV_MASKED;
	if (hs_observed(s, t, v, pos)) {
		r = HS_STEP_MATCH;
		v = 0;
	}
	/* No colon: no field line to Python's http.client when kept, or when
	 * masked no longer than the filler name (the filler has no colon then
	 * either: hs_start_mask()); a removed one is gone. */
	if ((!v && !(s->st.flags & HS_SF_PREMASKED)) ||
	    (!hs_removes(s) && hs_col(s, pos) <= HS_FILL_NAME_LEN))
		hs_odd_line(s);
	if (!v) {
		if (s->st.flags & HS_SF_PREMASKED) {
			/* Its first bytes are gone already: mask the rest. */
			hs_start_mask(s, pos);
			return r;
		}
		hs_end_line(s, b, pos);
		return r;
	}
	/* Removed, the line goes with its line end (at @pos). */
	return hs_matched(s, t, v, pos, pos);
}

#endif /* HDRSTRIP_SCAN_NAMES_H */
