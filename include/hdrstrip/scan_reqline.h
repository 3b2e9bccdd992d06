/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The request line: method, target and version as the most liberal server
 * reads them (with CONNECT noticed: a tunnel follows; HEAD, whose response
 * has no body; the methods that define no use for a body; and HTTP/2's
 * connection preface), and what a line that is no request line where one
 * should start (or a TLS record) makes of the connection.
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

/*
 * A status line, where a response should start, one byte (@b at @pos; @w:
 * the eight bytes from there, or 0 when the buffer holds fewer): "HTTP/"
 * and the version's bytes, blanks, three digits, then anything up to the
 * line end (what Python's http.client, node and curl accept, and more:
 * blanks and empty lines before it). Returns 0 for anything else: no
 * response, and the connection is checked line by line from there
 * (hs_step_request's not_http). In BPF a function of its own
 * (HS_SUBPROG): responses only, out of the scan loop's way.
 */
HS_SUBPROG int hs_step_status(struct hs_scan *s, __u32 b, __u64 w, __u32 pos)
{
	int blank, eol;
	__u32 i;

	if (!s)
		return 0;
	b &= 0xff;
	blank = hs_is_blank((__u8)b);
	eol = hs_is_eol((__u8)b);
	i = hs_col(s, pos);

	switch (s->st.phase) {
	case HS_PH_REQ_LEAD:
		if (blank || eol)
			break;
		s->line_start = hs_off(pos);
		if (b != 'H')
			return 0;
		s->st.phase = HS_PH_REQ_VERSION;
		s->st.req = 0;
		s->st.status = 0;
		s->mask_start = hs_off(pos);
		/* "HTTP/1.1" or "HTTP/1.0" in one step. */
		if ((w | (1ULL << 56)) == 0x312e312f50545448ULL) {
			s->pos = hs_off(pos + 8);
			return 1;
		}
		break;
	case HS_PH_REQ_VERSION:
		if (i < 5) {
			/* "HTTP/": the 'H' started the word. */
			__u32 want = i == 4 ? '/' : i == 3 ? 'P' : 'T';

			if (b != want)
				return 0;
			break;
		}
		if (eol)
			return 0;
		if (blank) {
			s->st.phase = HS_PH_RESP_STATUS;
			s->st.vstate = 0;
		}
		break;
	case HS_PH_RESP_STATUS:
		/* vstate: digits so far. */
		if (b >= '0' && b <= '9' && s->st.vstate < 3) {
			s->st.status = s->st.status * 10 + (b - '0');
			s->st.vstate++;
			break;
		}
		if (blank && !s->st.vstate)
			break; /* blanks before the code */
		if (s->st.vstate != 3 || !(blank || eol))
			return 0;
		s->st.vstate = 0;
		if (eol)
			goto done;
		s->st.phase = HS_PH_RESP_REASON;
		break;
	default: /* HS_PH_RESP_REASON */
		if (eol)
			goto done;
		break;
	}
	s->pos = hs_off(pos + 1);
	return 1;
done:
	s->requests++;
	s->st.conn |= HS_CN_SEEN_REQUEST;
	s->st.flags = 0;
	hs_end_line(s, b, pos);
	return 1;
}

/*
 * A request's method is gathered in hs_stream.num while the request line is
 * read: its first eight bytes, as they came (a method is token bytes, never
 * zero, so a longer one equals none of the names below). Folded to lower
 * case by or-ing 0x20 into every byte (the zero bytes past the method's end
 * become spaces, which no method holds), it is compared whole.
 */
#define HS_METHOD_GET 0x544547ULL /* "GET" */
#define HS_METHOD_POST 0x54534f50ULL /* "POST" */
#define HS_METHOD_PRI 0x495250ULL /* "PRI": HTTP/2's preface */
#define HS_METHOD_CONNECT 0x5443454e4e4f43ULL /* "CONNECT" */
#define HS_FOLD8 (HS_ONES * 0x20)
#define HS_FOLDED_HEAD 0x2020202064616568ULL /* "head" */

/* The method @m (hs_stream.num) defines no use for a body (RFC 9110: GET,
 * HEAD, DELETE, OPTIONS, TRACE), in any case, as a server that dispatches
 * on it without minding case might read it. */
HS_INLINE int hs_method_bodiless(__u64 m)
{
	m |= HS_FOLD8;
	return m == 0x2020202020746567ULL /* get */ || m == HS_FOLDED_HEAD ||
	       m == 0x20206574656c6564ULL /* delete */ ||
	       m == 0x20736e6f6974706fULL /* options */ || m == 0x2020206563617274ULL /* trace */;
}

/*
 * An HTTP/2 connection preface ("PRI * HTTP/2.0" and "SM": h2c with prior
 * knowledge) where a request starts, seen at the version's "2" after the
 * method PRI: HTTP/2's binary frames follow, which no HTTP/1.x field line
 * reading parses, and an h2c origin (node's http2.createServer, nginx's
 * "listen ... http2") reads their fields. Under the drop policy it stops the
 * scan (HS_PH_HALT, the caller's policy); under pass, a connection that
 * starts with it is passed untouched, as one that starts with a TLS record
 * is (HS_PH_NOT_HTTP: rewriting bytes of binary frames would corrupt them),
 * and after a request (where no HTTP/2 server reads a preface) it is a
 * line that starts no request: line by line from its first byte (returns
 * 0 for the caller's not_http).
 */
HS_INLINE int hs_h2c_preface(struct hs_scan *s, __u8 conn)
{
	s->h2c++;
	if (!(s->opts & HS_OPT_CONFLICT_GO_ON))
		s->st.phase = HS_PH_HALT;
	else if (!(conn & HS_CN_SEEN_REQUEST))
		s->st.phase = HS_PH_NOT_HTTP;
	else
		return 0;
	return 1;
}

/*
 * A request line ended, its method in hs_stream.num: the request counted,
 * whether it is a HEAD (its response has no body: in any case, as a client
 * might take it, see hs_block_done) and whether its method defines no use
 * for a body. The head lane (scan_lane.h) ends its request lines here too.
 */
HS_INLINE void hs_request_line_done(struct hs_scan *s)
{
	__u64 bit = 1ULL << (s->st.nmsg & (HS_HEADS_WINDOW - 1));

	s->requests++;
	s->st.conn |= HS_CN_SEEN_REQUEST;
	s->st.heads =
		(s->st.num | HS_FOLD8) == HS_FOLDED_HEAD ? s->st.heads | bit : s->st.heads & ~bit;
	s->st.nmsg++;
	if (hs_method_bodiless(s->st.num))
		s->st.req |= HS_RQ_NO_BODY;
	s->st.num = 0;
	s->st.flags = 0;
}

/* Request line, one byte (@p, @data_end: where it is, for a word). */
HS_INLINE int hs_step_request(struct hs_scan *s, __u8 *p, __u8 *data_end, __u8 b, __u32 pos)
{
	int blank = hs_is_blank(b), eol = hs_is_eol(b);
	__u32 i = hs_col(s, pos);
	__u8 conn = s->st.conn;

	if ((conn & HS_CN_RESPONSE) && s->st.phase != HS_PH_REQ_REST) {
		__u64 w = pos + 8 <= s->end && p + 8 <= data_end ? hs_load64(p) : 0;

		if (hs_step_status(s, b, w, pos))
			return HS_STEP_MORE;
		goto not_http;
	}
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
				s->st.num = n == 4 ? HS_METHOD_GET : HS_METHOD_POST;
				s->mask_start = hs_off(pos);
				s->st.phase = HS_PH_REQ_TARGET;
				s->pos = hs_off(pos + n);
				return HS_STEP_MORE;
			}
		}
		s->st.phase = HS_PH_REQ_METHOD;
		s->st.req = 0;
		s->st.flags = 0;
		s->st.num = b; /* the method's bytes (above) */
		s->mask_start = hs_off(pos);
		break;
	case HS_PH_REQ_METHOD:
		if (blank) {
			if (s->st.num == HS_METHOD_CONNECT)
				s->st.req |= HS_RQ_CONNECT;
			s->st.phase = HS_PH_REQ_WS1;
			break;
		}
		if (!hs_is_tchar_byte(b) || i >= HS_MAX_METHOD_LEN)
			goto not_http;
		if (i < 8)
			s->st.num |= (__u64)b << (8 * i);
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
		if (i == 5 && b == '2' && s->st.num == HS_METHOD_PRI) {
			if (hs_h2c_preface(s, conn))
				return HS_STEP_DONE;
			goto not_http;
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
	hs_request_line_done(s);
	hs_end_line(s, b, pos);
	return HS_STEP_MORE;
not_http:
	/* Not a request line as this reader has it, where one should start:
	 * some server may still read one (nginx takes 0x85 in a target,
	 * Python a CR between words), or framing and the server disagree.
	 * Check every line from here line by line, trusting no framing. */
	s->desync++;
	hs_scan_untrack(s);
	if (!(conn & (HS_CN_SEEN_REQUEST | HS_CN_RESPONSE))) {
		/* A connection's first line is no field to any server (each
		 * reads a request line there, or refuses it): the lines after
		 * it are checked, wherever the buffers are cut. (A client may
		 * read a first line that is no status line as the start of an
		 * HTTP/0.9 body, which it shows: checked too.) */
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
