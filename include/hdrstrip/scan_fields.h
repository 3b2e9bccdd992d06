/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Field lines, byte by byte: a line's first byte (an empty line, a
 * continuation line, blanks, a colon or a name), and the rest of a masked
 * line rewritten with the filler. The name's own bytes are hs_scan_step()'s
 * NAME case (scan.h).
 *
 * A part of the scanner that scan.h includes in its place among the others:
 * it uses the state scan.h declares and the parts before it. Include
 * <hdrstrip/scan.h>, not this file.
 */
#ifndef HDRSTRIP_SCAN_FIELDS_H
#define HDRSTRIP_SCAN_FIELDS_H

#ifndef HDRSTRIP_SCAN_H
#error "include <hdrstrip/scan.h>, which includes scan_fields.h in its place"
#endif

/*
 * Remove mode: the line that starts at @pos may be held back at the buffer's
 * end and scanned again, from the state it starts in (struct hs_scan's
 * line_start, line_snap): the scan's own, at a line's start with @flags. A
 * call on BPF: it keeps the 48-byte copy out of the frames of the steps
 * that call it (the stack's 512 bytes are shared by the whole call chain).
 */
HS_SUBPROG int hs_mark_line(struct hs_scan *s, __u32 pos, __u16 flags)
{
	if (!s)
		return 0;
	s->line_snap = s->st;
	s->line_snap.phase = HS_PH_LINE_START;
	s->line_snap.flags = flags;
	s->line_start = hs_off(pos);
	return 0;
}

/* A line's first byte. */
HS_INLINE int hs_step_line_start(struct hs_scan *s, const struct hs_trie *t, __u8 b, __u32 pos)
{
	__u16 keep = s->st.flags & (HS_SF_PREV_LF | HS_SF_PREV_MASKED);

	if (hs_removes(s))
		hs_mark_line(s, pos, s->st.flags);

	if (b == '\n') {
		/* An empty line: the end of the block if the line end before it
		 * had an LF too; otherwise some parser still reads fields. */
		s->pos = hs_off(pos + 1);
		s->st.flags = HS_SF_PREV_LF;
		if ((keep & HS_SF_PREV_LF) && !(s->st.conn & HS_CN_UNTRACKED))
			return hs_block_done(s);
		return HS_STEP_MORE;
	}
	if (b == '\r') {
		s->st.phase = HS_PH_CR;
		s->st.flags = keep | HS_SF_EMPTY;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	s->mask_start = hs_off(pos);
	if (b == ' ' || b == '\t') {
		s->st.flags = keep | HS_SF_CONT;
		/* obs-fold continuing a field whose value is being parsed: a
		 * server may or may not join it, so the framing is unclear. */
		if (s->st.req & HS_RQ_PREV_FRAMING)
			s->st.conn |= HS_CN_BAD_FRAMING;
		if (keep & HS_SF_PREV_MASKED) {
			/* obs-fold continuation of a masked field: masked too. */
			s->st.phase = HS_PH_MASK;
			s->st.flags |= HS_SF_KEEP_WS | HS_SF_FILL_X;
			s->rm_start = hs_off(pos);
			s->pos = hs_off(pos + 1);
			return HS_STEP_MORE;
		}
		s->st.flags |= HS_SF_WS_PREFIX;
		s->mask_start = hs_off(pos + 1);
		s->st.phase = HS_PH_LEAD;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	s->st.flags = keep & HS_SF_PREV_LF;
	s->st.req &= ~HS_RQ_PREV_FRAMING;
	if (hs_is_blank(b)) {
		s->st.flags |= HS_SF_LEAD_JUNK;
		s->st.phase = HS_PH_LEAD;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	if (b == ':') {
		s->seen++;
		s->st.phase = HS_PH_SKIP;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	hs_start_name(s, t, b, pos);
	return HS_STEP_MORE;
}

/* Rest of a masked line, one byte. */
HS_INLINE void hs_step_mask_byte(struct hs_scan *s, const struct hs_trie *t, __u8 *p, __u8 b,
				 __u32 pos)
{
	if ((s->st.flags & HS_SF_KEEP_WS) && (b == ' ' || b == '\t')) {
		s->pos = hs_off(pos + 1);
		return;
	}
	s->st.flags &= ~HS_SF_KEEP_WS;
	hs_rewrite_byte(s, p, pos,
			(s->st.flags & HS_SF_FILL_X)
				? hs_fill_cont(t)
				: hs_fill_byte(t, hs_col(s, pos), s->st.name_fill));
	s->pos = hs_off(pos + 1);
}

#endif /* HDRSTRIP_SCAN_FIELDS_H */
