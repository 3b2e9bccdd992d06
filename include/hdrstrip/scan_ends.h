/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where a line, a header block, a body and a request end, and what starts
 * after each: the transitions the phases end in. hs_conflict(), the policy
 * for framing that servers could read two ways, is here too: most of it
 * shows at a block's end (hs_block_done()), once every framing field is
 * known.
 *
 * A part of the scanner that scan.h includes in its place among the others:
 * it uses the state scan.h declares and the parts before it. Include
 * <hdrstrip/scan.h>, not this file.
 */
#ifndef HDRSTRIP_SCAN_ENDS_H
#define HDRSTRIP_SCAN_ENDS_H

#ifndef HDRSTRIP_SCAN_H
#error "include <hdrstrip/scan.h>, which includes scan_ends.h in its place"
#endif

/* A line ends at byte @b (CR or LF) at offset @pos. */
HS_INLINE void hs_end_line(struct hs_scan *s, __u8 b, __u32 pos)
{
	s->st.flags &= HS_SF_PREV_LF | HS_SF_PREV_MASKED;
	if (b == '\r') {
		s->st.phase = HS_PH_CR;
	} else {
		s->st.phase = HS_PH_LINE_START;
		s->st.flags |= HS_SF_PREV_LF;
	}
	s->pos = hs_off(pos + 1);
}

/* Framing that servers could read two ways: stop for the caller's policy,
 * or, when the policy lets such requests through, check every line of the
 * rest of the connection. */
HS_INLINE int hs_conflict(struct hs_scan *s)
{
	s->conflicts++;
	if (!(s->opts & HS_OPT_CONFLICT_GO_ON)) {
		s->st.phase = HS_PH_HALT;
		return HS_STEP_DONE;
	}
	hs_scan_untrack(s);
	s->st.flags = HS_SF_PREV_LF;
	return HS_STEP_MORE;
}

/* A request (with its body) is over: the next one starts here. */
HS_INLINE void hs_stream_request_done(struct hs_stream *st)
{
	/* A response switches protocols by its status (101), not by an
	 * Upgrade field (hs_response_done()). */
	int tunnel = !(st->conn & HS_CN_RESPONSE) && (st->req & (HS_RQ_CONNECT | HS_RQ_UPGRADE));

	st->req = 0;
	st->cl = 0;
	st->num = 0;
	st->conn &= ~(HS_CN_BAD_FRAMING | HS_CN_ODD_LINE);
	if (tunnel) {
		/* A server may refuse the switch and read on: what follows
		 * might still be HTTP, and is checked line by line. */
		st->conn |= HS_CN_UNTRACKED;
		st->phase = HS_PH_LINE_START;
		return;
	}
	st->phase = HS_PH_REQ_LEAD;
}

HS_INLINE void hs_request_done(struct hs_scan *s)
{
	hs_stream_request_done(&s->st);
	if (s->st.conn & HS_CN_UNTRACKED) /* a tunnel, or may be one */
		s->opts &= ~HS_OPT_REMOVE;
}

/* A body (or a chunk's data) that @st is in ended: what follows it. */
HS_INLINE void hs_stream_body_done(struct hs_stream *st)
{
	st->num = 0;
	if (st->req & HS_RQ_TE) {
		st->phase = HS_PH_CHUNK_END;
		st->flags &= ~HS_SF_CHUNK_CR;
		return;
	}
	hs_stream_request_done(st);
}

/* A line end just ended an empty line that is not where every parser ends
 * the block (CR LF after a bare CR; a bare CR, which node's lenient parser
 * takes for the end after an LF): some server's body starts here, ours
 * later, so this request's framing cannot be trusted. */
HS_INLINE void hs_ambiguous_end(struct hs_scan *s)
{
	if ((s->st.flags & HS_SF_EMPTY) && !(s->st.conn & HS_CN_UNTRACKED))
		s->st.conn |= HS_CN_BAD_FRAMING;
}

/* Line by line from here to the connection's end (no framing): a
 * response switched protocols, is read until the connection closes, is an
 * interim one other than 100, or its framing depends on a request not
 * known. */
HS_INLINE int hs_lines_to_close(struct hs_scan *s)
{
	hs_scan_untrack(s);
	s->st.flags = HS_SF_PREV_LF;
	return HS_STEP_MORE;
}

/*
 * A response's header block ended (not its trailers): is there a body, and
 * how long? 1 when it has none (the next response starts here), 0 when
 * hs_block_done() is to read its framing fields, 2 when the connection is
 * followed line by line from here (hs_lines_to_close() done).
 */
HS_INLINE int hs_response_head_done(struct hs_scan *s)
{
	__u16 st = s->st.status, k = s->st.nmsg, ahead = (__u16)(s->peer_n - k);

	if (st == 100)
		return 1; /* interim: the final response follows */
	if (st > 101 && st < 200) {
		/*
		 * Another interim response (102, 103 Early Hints): the final
		 * one follows, but Python's http.client (and urllib3) skip only
		 * 100 and take this one as the final response, answering the
		 * request, so every later response answers the next request
		 * for them: one to HEAD and one to GET frame their bodies
		 * differently. The rest of the connection goes line by line.
		 */
		s->unframed++;
		hs_lines_to_close(s);
		return 2;
	}
	if (st == 101) {
		hs_lines_to_close(s);
		return 2;
	}
	s->st.nmsg++;
	if (st == 204 || st == 304)
		return 1;
	if (!s->peer_known || !ahead || ahead > HS_HEADS_WINDOW) {
		/* Whether it answers a HEAD (no body) is not known. */
		s->unframed++;
		hs_lines_to_close(s);
		return 2;
	}
	return (s->peer_heads >> (k & (HS_HEADS_WINDOW - 1))) & 1;
}

/*
 * A request whose method defines no use for a body (GET, HEAD, DELETE,
 * OPTIONS, TRACE) came with one (a length, or chunked): origins read it two
 * ways. Python's SimpleHTTPRequestHandler (and any BaseHTTPRequestHandler
 * whose handler does not read it) never reads it and parses it as its next
 * request or requests; node and nginx skip it. Both readings must be
 * checked: the body, and the rest of the connection (whose framing from
 * there depends on the reading the origin made), go line by line. The
 * requests counted so far stay counted (nmsg, heads): their responses are
 * framed as before, and the ones after them go line by line, for the
 * origin may answer more requests than were counted (hs_response_head_done).
 */
HS_INLINE int hs_body_unframed(struct hs_scan *s)
{
	s->bodies_unframed++;
	hs_request_done(s);
	s->st.conn |= HS_CN_UNTRACKED;
	s->st.phase = HS_PH_LINE_START;
	s->opts &= ~HS_OPT_REMOVE;
	return HS_STEP_MORE;
}

/* The header (or trailer) block ended at an empty line. */
HS_INLINE int hs_block_done(struct hs_scan *s)
{
	__u8 rq = s->st.req;

	if (s->st.conn & HS_CN_BAD_FRAMING)
		return hs_conflict(s);
	if (rq & HS_RQ_TRAILERS) {
		hs_request_done(s);
		return HS_STEP_MORE;
	}
	if (s->st.conn & HS_CN_RESPONSE) {
		int r = hs_response_head_done(s);

		if (r == 2)
			return HS_STEP_MORE;
		if (r) {
			hs_request_done(s);
			return HS_STEP_MORE;
		}
		if ((rq & HS_RQ_TE) && !(rq & HS_RQ_CL) && !(rq & HS_RQ_CHUNKED))
			return hs_lines_to_close(s); /* read until close */
		if (!(rq & (HS_RQ_TE | HS_RQ_CL)))
			return hs_lines_to_close(s); /* read until close */
	}
	if ((rq & HS_RQ_TE) && ((rq & HS_RQ_CL) || !(rq & HS_RQ_CHUNKED)))
		return hs_conflict(s);
	if ((rq & HS_RQ_NO_BODY) && ((rq & HS_RQ_TE) || s->st.cl))
		return hs_body_unframed(s);
	if (rq & HS_RQ_TE) {
		s->st.phase = HS_PH_CHUNK_SIZE;
		s->st.num = 0;
		s->st.vstate = 0;
		return HS_STEP_MORE;
	}
	if ((rq & HS_RQ_CL) && s->st.cl) {
		s->st.phase = HS_PH_BODY;
		s->st.num = s->st.cl;
		return HS_STEP_MORE;
	}
	hs_request_done(s);
	return HS_STEP_MORE;
}

#endif /* HDRSTRIP_SCAN_ENDS_H */
