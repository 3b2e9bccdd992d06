/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Framing, which tells where the next request starts: the values of
 * Content-Length (a length wherever some server reads one) and
 * Transfer-Encoding (is chunked the final coding?), chunk sizes and the line
 * end after each chunk's data, and body bytes, skipped in one step.
 *
 * A part of the scanner that scan.h includes in its place among the others:
 * it uses the state scan.h declares and the parts before it. Include
 * <hdrstrip/scan.h>, not this file.
 */
#ifndef HDRSTRIP_SCAN_FRAMING_H
#define HDRSTRIP_SCAN_FRAMING_H

#ifndef HDRSTRIP_SCAN_H
#error "include <hdrstrip/scan.h>, which includes scan_framing.h in its place"
#endif

/* Content-Length value, one byte: follows what Python's int() accepts
 * (blanks around digits), so no server reads a length we do not. */
HS_INLINE void hs_step_value_cl(struct hs_scan *s, __u8 b, __u32 pos)
{
	enum {
		LEAD,
		DIGITS,
		TRAIL,
		NON_NUMERIC,
		BAD
	};
	__u8 v = s->st.vstate;

	if (hs_is_eol(b)) {
		if (v == DIGITS || v == TRAIL) {
			if ((s->st.req & HS_RQ_CL) && s->st.cl != s->st.num)
				s->st.conn |= HS_CN_BAD_FRAMING; /* two lengths */
			s->st.cl = s->st.num;
			s->st.req |= HS_RQ_CL;
		} else if (v == BAD) {
			s->st.conn |= HS_CN_BAD_FRAMING;
		} else {
			/* Empty or not a number at all: servers reject the
			 * request or ignore the field; either way no body. */
			s->framing_invalid++;
		}
		hs_end_line(s, b, pos);
		return;
	}
	if (hs_is_blank(b)) {
		if (v == DIGITS)
			v = TRAIL;
	} else if (b >= '0' && b <= '9') {
		if (v == LEAD || v == DIGITS) {
			s->st.num = s->st.num * 10 + (b - '0');
			v = s->st.num > HS_MAX_BODY ? BAD : DIGITS;
		} else if (v == TRAIL) {
			v = BAD;
		}
	} else if (v == LEAD) {
		/* A sign may be read as part of a number; anything else not. */
		v = (b == '+' || b == '-') ? BAD : NON_NUMERIC;
	} else if (v != NON_NUMERIC) {
		v = BAD; /* "5x", "5,5", "5_0" */
	}
	s->st.vstate = v;
	s->pos = hs_off(pos + 1);
}

/* Transfer-Encoding value, one byte: is chunked the final coding? vstate:
 * bits 0-2 bytes of "chunked" matched in the current coding, 0x10 the
 * coding has a byte, 0x20 blanks after it, 0x40 it is not chunked. */
HS_INLINE void hs_step_value_te(struct hs_scan *s, __u8 b, __u32 pos)
{
	__u8 v = s->st.vstate;

	if (hs_is_eol(b)) {
		s->st.req |= HS_RQ_TE;
		s->st.req &= ~HS_RQ_CHUNKED;
		if ((v & 0x50) == 0x10 && (v & 7) == 7)
			s->st.req |= HS_RQ_CHUNKED;
		hs_end_line(s, b, pos);
		return;
	}
	if (b == ',') {
		v = 0;
	} else if (b == ' ' || b == '\t') {
		if (v & 0x10)
			v |= 0x20;
	} else {
		__u32 i = v & 7;
		/* "chunked", little-endian */
		__u8 want = (__u8)(0x64656b6e756863ULL >> (8 * i));

		if ((v & 0x20) || i >= 7 || (b | 0x20) != want)
			v |= 0x40;
		else
			v = (v & 0xf8) | (i + 1);
		v |= 0x10;
	}
	s->st.vstate = v;
	s->pos = hs_off(pos + 1);
}

/* Chunk framing, one byte. */
HS_INLINE int hs_step_chunk(struct hs_scan *s, __u8 b, __u32 pos)
{
	__u32 d;

	switch (s->st.phase) {
	case HS_PH_CHUNK_SIZE:
		d = hs_hex(b);
		if (d < 16) {
			s->st.num = s->st.num * 16 + d;
			s->st.vstate = 1;
			if (s->st.num > HS_MAX_BODY)
				goto bad;
			break;
		}
		if (!s->st.vstate)
			goto bad; /* no digits */
		if (b == ';' || b == ' ' || b == '\t') {
			s->st.phase = HS_PH_CHUNK_EXT;
			break;
		}
		if (!hs_is_eol(b))
			goto bad;
		/* the size line ends here */
		__attribute__((fallthrough));
	case HS_PH_CHUNK_EXT:
		if (b == '\r') {
			s->st.phase = HS_PH_CHUNK_LF;
			break;
		}
		if (b != '\n')
			break;
		__attribute__((fallthrough));
	case HS_PH_CHUNK_LF:
		if (b != '\n')
			goto bad;
		if (s->st.num) {
			s->st.phase = HS_PH_BODY;
		} else {
			/* The last chunk: trailer fields follow. */
			s->st.req |= HS_RQ_TRAILERS;
			s->st.phase = HS_PH_LINE_START;
			s->st.flags = HS_SF_PREV_LF;
		}
		break;
	default:
		/*
		 * HS_PH_CHUNK_END: CRLF after the data, exactly. Parsers read
		 * anything else each their own way: nginx and curl take a bare
		 * LF as the end, Python's http.client (and urllib3) skip any
		 * two bytes unread, so that the next chunk's size line starts
		 * one byte later for them; ambiguous framing.
		 */
		if (!(s->st.flags & HS_SF_CHUNK_CR)) {
			if (b != '\r')
				goto bad;
			s->st.flags |= HS_SF_CHUNK_CR;
			break;
		}
		if (b != '\n')
			goto bad;
		s->st.flags &= ~HS_SF_CHUNK_CR;
		s->st.phase = HS_PH_CHUNK_SIZE;
		s->st.num = 0;
		s->st.vstate = 0;
		break;
	}
	s->pos = hs_off(pos + 1);
	return HS_STEP_MORE;
bad:
	return hs_conflict(s);
}

/* Body bytes: as many as the buffer holds, in one step. */
HS_INLINE int hs_step_body(struct hs_scan *s, __u32 pos)
{
	__u64 n = s->end - pos;

	if (n > s->st.num)
		n = s->st.num;
	s->st.num -= n;
	s->pos = hs_off(pos + (__u32)n);
	if (s->st.num)
		return HS_STEP_MORE;
	if (s->st.req & HS_RQ_TE) {
		s->st.phase = HS_PH_CHUNK_END;
		s->st.flags &= ~HS_SF_CHUNK_CR;
		return HS_STEP_MORE;
	}
	hs_request_done(s);
	return HS_STEP_MORE;
}

#endif /* HDRSTRIP_SCAN_FRAMING_H */
