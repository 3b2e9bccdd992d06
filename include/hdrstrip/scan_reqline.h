/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The request line: method, target and version as the most liberal server
 * reads them (with CONNECT noticed: a tunnel follows), and what a line that
 * is no request line where one should start (or a TLS record) makes of the
 * connection.
 *
 * A part of the scanner that scan.h includes in its place among the others:
 * it uses the state scan.h declares and the parts before it. Include
 * <hdrstrip/scan.h>, not this file.
 */
#ifndef HDRSTRIP_SCAN_REQLINE_H
#define HDRSTRIP_SCAN_REQLINE_H

#ifndef HDRSTRIP_SCAN_H
#error "include <hdrstrip/scan.h>, which includes scan_reqline.h in its place"
#endif

/* Request line, one byte (@p, @data_end: where it is, for a word). */
HS_INLINE int hs_step_request(struct hs_scan *s, __u8 *p, __u8 *data_end, __u8 b, __u32 pos)
{
	int blank = hs_is_blank(b), eol = hs_is_eol(b);
	__u32 i = hs_col(s, pos);
	__u8 conn = s->st.conn;

	switch (s->st.phase) {
	case HS_PH_REQ_LEAD:
		if (blank || eol)
			break;
		s->line_start = hs_off(pos);
		if (b == 0x16 && !(s->st.conn & HS_CN_SEEN_REQUEST)) {
			/* A TLS record (handshake): certainly no HTTP/1.x, which
			 * no server reads on (it is no token byte). */
			s->st.phase = HS_PH_NOT_HTTP;
			return HS_STEP_DONE;
		}
		if (!hs_is_tchar_byte(b))
			goto not_http;
		if ((b == 'G' || b == 'P') && pos + 8 <= s->end && p + 8 <= data_end) {
			/* "GET /" or "POST /" in one step, on to the target. */
			__u64 w = hs_load64(p);
			__u32 n = (w & 0xffffffffffULL) == 0x2f20544547ULL	 ? 4
				  : (w & 0xffffffffffffULL) == 0x2f2054534f50ULL ? 5
										 : 0;

			if (n) {
				s->st.req = 0;
				s->mask_start = hs_off(pos);
				s->st.phase = HS_PH_REQ_TARGET;
				s->pos = hs_off(pos + n);
				return HS_STEP_MORE;
			}
		}
		s->st.phase = HS_PH_REQ_METHOD;
		s->st.req = b == 'C' ? HS_RQ_CONNECT_CAND : 0;
		s->mask_start = hs_off(pos);
		break;
	case HS_PH_REQ_METHOD:
		if (blank) {
			if ((s->st.req & HS_RQ_CONNECT_CAND) && i == 7)
				s->st.req |= HS_RQ_CONNECT;
			s->st.req &= ~HS_RQ_CONNECT_CAND;
			s->st.phase = HS_PH_REQ_WS1;
			break;
		}
		if (!hs_is_tchar_byte(b) || i >= HS_MAX_METHOD_LEN)
			goto not_http;
		/* "ONNECT" (after the 'C'), little-endian */
		if (i >= 7 || b != (__u8)(0x5443454e4e4fULL >> (8 * (i - 1))))
			s->st.req &= ~HS_RQ_CONNECT_CAND;
		break;
	case HS_PH_REQ_WS1:
		if (eol)
			goto not_http;
		if (!blank)
			s->st.phase = HS_PH_REQ_TARGET;
		break;
	case HS_PH_REQ_TARGET:
		if (eol)
			goto done;
		if (blank)
			s->st.phase = HS_PH_REQ_WS2;
		break;
	case HS_PH_REQ_WS2:
		if (eol)
			goto done;
		if (blank)
			break;
		if (b != 'H')
			goto not_http;
		s->st.phase = HS_PH_REQ_VERSION;
		s->mask_start = hs_off(pos);
		if (pos + 8 <= s->end && p + 8 <= data_end) {
			/* "HTTP/1.1" or "HTTP/1.0" in one step. */
			__u64 w = hs_load64(p) | (1ULL << 56);

			if (w == 0x312e312f50545448ULL) {
				s->pos = hs_off(pos + 8);
				return HS_STEP_MORE;
			}
		}
		break;
	case HS_PH_REQ_VERSION:
		if (i < 5) {
			/* "HTTP/": the 'H' started the word. */
			__u8 want = i == 4 ? '/' : i == 3 ? 'P' : 'T';

			if (b != want)
				goto not_http;
			break;
		}
		if (eol)
			goto done;
		if (blank)
			s->st.phase = HS_PH_REQ_TRAIL;
		break;
	case HS_PH_REQ_REST:
		if (eol) {
			hs_end_line(s, b, pos);
			return HS_STEP_MORE;
		}
		break;
	default: /* HS_PH_REQ_TRAIL */
		if (eol)
			goto done;
		if (!blank)
			goto not_http;
		break;
	}
	s->pos = hs_off(pos + 1);
	return HS_STEP_MORE;
done:
	s->requests++;
	s->st.conn |= HS_CN_SEEN_REQUEST;
	s->st.flags = 0;
	hs_end_line(s, b, pos);
	return HS_STEP_MORE;
not_http:
	/* Not a request line as this reader has it, where one should start:
	 * some server may still read one (nginx takes 0x85 in a target,
	 * Python a CR between words), or framing and the server disagree.
	 * Check every line from here line by line, trusting no framing. */
	s->desync++;
	hs_stream_untrack(&s->st);
	if (!(conn & HS_CN_SEEN_REQUEST)) {
		/* A connection's first line is no field to any server (each
		 * reads a request line there, or refuses it): the lines after
		 * it are checked, wherever the buffers are cut. */
		s->st.phase = HS_PH_REQ_REST;
		return HS_STEP_MORE;
	}
	/* After a request, this line too: from its first byte in this
	 * buffer (the request line's words were not looked at as a name). */
	s->st.flags = HS_SF_PREV_LF;
	s->pos = hs_off(s->line_start);
	return HS_STEP_MORE;
}

#endif /* HDRSTRIP_SCAN_REQLINE_H */
