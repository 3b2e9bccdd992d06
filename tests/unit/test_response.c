// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The response side of the scanner (scan.h, scan_reqline.h, scan_ends.h):
 * status lines, framing by RFC 9112 section 6.3 with the request stream's
 * HEAD history, line-by-line checking where that history is not known, and
 * rules that apply to one direction only. Every case is scanned whole and
 * cut at every offset (two buffers, the state carried as the datapath
 * carries it), and must give the same bytes and counts both ways.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdrstrip/scan.h>

#include "testutil.h"

#define LIST                                                                                       \
	"secret-token\n"                                                                           \
	"x-backend-server  mask  response\n"                                                       \
	"debug-*  mask  both\n"                                                                    \
	"x-upstream-addr  drop  response\n"

static struct fixture fx;

static int setup(void **state)
{
	(void)state;
	fx_build(&fx, LIST, -1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fx_free(&fx);
	return 0;
}

/* A response's fields: response rules apply, request-only rules do not. */
static void test_directions(void **state)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\n"
				   "Secret-Token: kept\r\n"
				   "X-Backend-Server: 10.0.0.7\r\n"
				   "debug-trace: 1\r\n"
				   "Content-Length: 0\r\n\r\n";
	static const char req[] = "GET / HTTP/1.1\r\n"
				  "Secret-Token: gone\r\n"
				  "X-Backend-Server: kept\r\n"
				  "debug-trace: 1\r\n\r\n";
	struct seg_peer p = { 1, 1, 0 };
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &p, &r);
	assert_int_equal(r.masked, 2);
	assert_non_null(strstr(r.out, "Secret-Token: kept"));
	assert_null(strstr(r.out, "10.0.0.7"));
	assert_int_equal(r.messages, 1);
	assert_int_equal(r.unframed, 0);
	assert_int_equal(r.st.phase, HS_PH_REQ_LEAD);
	assert_int_equal(r.st.nmsg, 1);

	seg_scan_all_cuts(fx.trie, req, HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.masked, 2);
	assert_null(strstr(r.out, "gone"));
	assert_non_null(strstr(r.out, "X-Backend-Server: kept"));
}

/* The request stream counts its requests and marks the HEADs, in any case
 * (a client may take "head" for one). */
static void test_request_heads(void **state)
{
	static const char req[] = "HEAD / HTTP/1.1\r\n\r\n"
				  "GET / HTTP/1.1\r\n\r\n"
				  "head /x HTTP/1.1\r\n\r\n"
				  "HEADER / HTTP/1.1\r\n\r\n"
				  "HEA / HTTP/1.1\r\n\r\n"
				  "GET / HTTP/1.1\r\nContent-Length: 4\r\n\r\nHEAD";
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, req, HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.messages, 6);
	assert_int_equal(r.st.nmsg, 6);
	assert_int_equal(r.st.heads, 0x5);
}

/* A response to HEAD has no body whatever its Content-Length says: the
 * next response starts right after its header block, and its fields are
 * checked. Taken for a GET, that response would be read as body. */
static void test_head_among_gets(void **state)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
				   "X-Backend-Server: a\r\n\r\nhello"
				   "HTTP/1.1 200 OK\r\nContent-Length: 64\r\n"
				   "X-Backend-Server: b\r\n\r\n"
				   "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
				   "X-Backend-Server: c\r\n\r\nok";
	struct seg_peer head = { 1, 3, 0x2 }, get = { 1, 3, 0 };
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &head, &r);
	assert_int_equal(r.masked, 3);
	assert_int_equal(str_count(r.out, "X-Backend-Server"), 0);
	assert_int_equal(r.st.nmsg, 3);
	assert_int_equal(r.st.phase, HS_PH_REQ_LEAD);

	/* What the history says matters: as three GETs, the third response is
	 * the second one's body. */
	seg_scan_dir(fx.trie, resp, 0, HS_DIR_RESPONSE, 0, &get, &r);
	assert_int_equal(r.masked, 2);
	assert_int_equal(r.st.phase, HS_PH_BODY);
}

/* No request history (no hook saw the requests, or a response beyond it):
 * a response whose body depends on the method is followed line by line to
 * the end of the connection, so every later field line is checked. */
static void test_unknown_request(void **state)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 19\r\n\r\n"
				   "x-backend-server: 1"
				   "HTTP/1.1 200 OK\r\nX-Backend-Server: b\r\n"
				   "Content-Length: 0\r\n\r\n";
	struct seg_peer none = { 0, 0, 0 }, behind = { 1, 1, 0 };
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &none, &r);
	assert_int_equal(r.unframed, 1);
	assert_int_equal(str_count(r.out, "X-Backend-Server"), 0);
	assert_true(r.st.conn & HS_CN_UNTRACKED);
	assert_true(r.st.conn & HS_CN_RESPONSE);

	/* One request known, two responses: the second is unframed. */
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &behind, &r);
	assert_int_equal(r.masked, 1); /* the body's line is body */
	assert_int_equal(r.unframed, 1);
	assert_non_null(strstr(r.out, "x-backend-server: 1"));
}

/* 100 Continue precedes the final response and takes no request; 204 and
 * 304 have no body, whatever their Content-Length. */
static void test_interim_and_bodiless(void **state)
{
	static const char resp[] = "HTTP/1.1 100 Continue\r\nX-Backend-Server: a\r\n\r\n"
				   "HTTP/1.1 100 Continue\r\nLink: </s.css>\r\n\r\n"
				   "HTTP/1.1 204 No Content\r\nContent-Length: 40\r\n"
				   "X-Backend-Server: b\r\n\r\n"
				   "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n"
				   "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n"
				   "X-Backend-Server: c\r\n\r\n";
	struct seg_peer p = { 1, 3, 0 };
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &p, &r);
	assert_int_equal(r.messages, 5);
	assert_int_equal(r.masked, 3);
	assert_int_equal(r.unframed, 0);
	assert_int_equal(r.st.nmsg, 3);
	assert_int_equal(r.st.phase, HS_PH_REQ_LEAD);
}

/*
 * Another interim response (103 Early Hints, 102) ends framing: Python's
 * http.client takes it for the final one, and every later response for
 * the next request's. Here GET, HEAD, GET: after the 103, the GET's answer
 * has a body that the client, taking it for the HEAD's, reads as the third
 * answer, with its internal field. Line by line, that field is masked
 * whichever way a client reads it.
 */
static void test_other_interim(void **state)
{
	static const char resp[] =
		"HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
		"HTTP/1.1 200 OK\r\nContent-Length: 62\r\n\r\n"
		"HTTP/1.1 200 OK\r\nX-Backend-Server: b\r\nContent-Length: 0\r\n\r\n"
		"HTTP/1.1 102 Processing\r\n\r\n";
	struct seg_peer p = { 1, 3, 0x2 };
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &p, &r);
	assert_int_equal(r.unframed, 1);
	assert_int_equal(r.masked, 1);
	assert_null(strstr(r.out, "X-Backend-Server"));
	assert_true(r.st.conn & HS_CN_UNTRACKED);
}

/*
 * Proxy mode's remove mode takes a matched line out whole, but not once the
 * stream goes line by line (here after a 103): a "line" there may be inside
 * a body whose length the client reads from Content-Length, so it is
 * masked in place and the body keeps its length.
 */
static void test_remove_untracked_masks(void **state)
{
	static const char first[] =
		"HTTP/1.1 200 OK\r\nX-Backend-Server: a\r\nContent-Length: 0\r\n\r\n";
	static const char rest[] = "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n"
				   "HTTP/1.1 200 OK\r\nContent-Length: 21\r\n\r\n"
				   "X-Backend-Server: b\r\n";
	const char *line = strstr(first, "X-Backend-Server");
	size_t nf = sizeof(first) - 1, n = nf + sizeof(rest) - 1;
	__u32 lo = ~0u, hi = 0, removed = 0;
	struct hs_stream st;
	struct hs_scan s;
	char buf[256];
	int rc, steps = 0;

	(void)state;
	assert_true(n < sizeof(buf));
	memcpy(buf, first, nf);
	memcpy(buf + nf, rest, sizeof(rest));
	hs_stream_init_dir(&st, HS_DIR_RESPONSE);
	hs_scan_begin(&s, &st, 0, (__u32)n, 0);
	s.opts = HS_OPT_REMOVE;
	s.peer_known = 1;
	s.peer_n = 2;
	do {
		rc = hs_scan_step(&s, fx.trie, (__u8 *)buf, (__u8 *)buf + n);
		if (rc == HS_STEP_REMOVE) {
			lo = s.rm_start < lo ? s.rm_start : lo;
			hi = s.rm_end > hi ? s.rm_end : hi;
			removed += s.rm_end - s.rm_start;
		}
		assert_true(++steps < 10000);
	} while (rc != HS_STEP_DONE);
	/* The tracked response's line: reported whole, left in place. */
	assert_int_equal(lo, line - first);
	assert_int_equal(hi, line - first + strlen("X-Backend-Server: a\r\n"));
	assert_int_equal(removed, hi - lo);
	assert_memory_equal(buf, first, nf);
	/* The body's line after the 103: masked in place, same length. */
	assert_true(s.st.conn & HS_CN_UNTRACKED);
	assert_int_equal(s.masked, 2);
	assert_int_equal(s.removed, 1);
	assert_int_equal(s.unframed, 1);
	assert_memory_equal(buf + nf, rest, sizeof(rest) - 1 - strlen("X-Backend-Server: b\r\n"));
	assert_null(strstr(buf + nf, "X-Backend-Server"));
	assert_memory_equal(buf + n - 2, "\r\n", 2);
}

/*
 * A chunk's data ends in CRLF, exactly: a bare LF is the end for nginx and
 * curl, while http.client skips any two bytes there, so "\nf00\r\n" is a
 * 3,840-byte chunk for one and the last chunk ("00") for the other, and the
 * next response is body or a head. Ambiguous framing: it stops (the drop
 * policy) or goes on line by line, the next head's field masked.
 */
static void test_chunk_end_exact(void **state)
{
	static const char *const bad[] = {
		"5\r\nhello\nf00\r\n\r\n",
		"5\r\nhello\r\rf00\r\n\r\n",
		"5\r\nhellox\r\n0\r\n\r\n",
	};
	static const char next[] = "HTTP/1.1 200 OK\r\nX-Backend-Server: b\r\n"
				   "Content-Length: 0\r\n\r\n";
	struct seg_peer p = { 1, 2, 0 };
	struct seg_scan r;
	char resp[512];

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++) {
		struct hs_stream st;

		snprintf(resp, sizeof(resp),
			 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%s%s", bad[i], next);
		hs_stream_init_dir(&st, HS_DIR_RESPONSE);
		seg_scan(fx.trie, resp, st, NULL, 0, 0, 0, &p, &r);
		if (r.phase != HS_PH_HALT)
			fail_msg("case %zu: phase %u, not halted", i, r.phase);
		seg_scan(fx.trie, resp, st, NULL, 0, 0, HS_OPT_CONFLICT_GO_ON, &p, &r);
		if (r.conflicts != 1 || r.masked != 1 || strstr(r.out, "X-Backend-Server"))
			fail_msg("case %zu: conflicts %u, masked %u: %s", i, r.conflicts, r.masked,
				 r.out);
	}
}

/* Chunked bodies: chunk data is body; trailer fields are fields. */
static void test_chunked_trailers(void **state)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				   "15\r\nx-backend-server: 123\r\n"
				   "0\r\nX-Backend-Server: trailer\r\n\r\n"
				   "HTTP/1.1 200 OK\r\nX-Backend-Server: next\r\n"
				   "Content-Length: 0\r\n\r\n";
	struct seg_peer p = { 1, 2, 0 };
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &p, &r);
	assert_int_equal(r.masked, 2);
	assert_non_null(strstr(r.out, "x-backend-server: 123"));
	assert_null(strstr(r.out, "trailer"));
	assert_null(strstr(r.out, "next"));
	assert_int_equal(r.st.nmsg, 2);
}

/* Each of @cases (a response whose one internal field comes after where
 * framing ends) must leave the connection line by line with that field
 * masked, and count @desync places where no status line was (and no
 * unframed response). */
static void expect_line_by_line(const char *const *cases, size_t n, unsigned int desync)
{
	struct seg_peer p = { 1, 1, 0 };
	struct seg_scan r;

	for (size_t i = 0; i < n; i++) {
		seg_scan_all_cuts(fx.trie, cases[i], HS_DIR_RESPONSE, 0, &p, &r);
		if (r.masked != 1 || r.desync != desync || r.unframed ||
		    !(r.st.conn & HS_CN_UNTRACKED))
			fail_msg("case %zu: masked %u, desync %u, unframed %u, conn %#x", i,
				 r.masked, r.desync, r.unframed, r.st.conn);
	}
}

/* Read until close (no length, or a coding that is not chunked) and 101:
 * nothing after is framed, so every line is checked. */
static void test_to_close(void **state)
{
	static const char *const resp[] = {
		"HTTP/1.1 200 OK\r\n\r\nbody\nX-Backend-Server: a\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nX-Backend-Server: a\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\nX-Backend-Server: a\r\n",
	};
	(void)state;
	expect_line_by_line(resp, sizeof(resp) / sizeof(resp[0]), 0);
}

/* An Upgrade field on a response that does not switch (a 200 advertising
 * h2c) changes nothing: the next response is read as one. */
static void test_upgrade_field_no_switch(void **state)
{
	static const char resp[] =
		"HTTP/1.1 200 OK\r\nUpgrade: h2c\r\nContent-Length: 2\r\n\r\nok"
		"HTTP/1.1 200 OK\r\nX-Backend-Server: a\r\nContent-Length: 0\r\n\r\n";
	struct seg_peer p = { 1, 2, 0 };
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &p, &r);
	assert_int_equal(r.masked, 1);
	assert_false(r.st.conn & HS_CN_UNTRACKED);
	assert_int_equal(r.st.nmsg, 2);
}

/* What no client reads as a status line where one should start: the
 * connection is checked line by line from that line on. */
static void test_bad_status_lines(void **state)
{
	static const char *const bad[] = {
		"HTTP/1.1 20 OK\r\nX-Backend-Server: a\r\n\r\n",
		"HTTP/1.1 2000 OK\r\nX-Backend-Server: a\r\n\r\n",
		"HTTX/1.1 200 OK\r\nX-Backend-Server: a\r\n\r\n",
		"HTTP/1.1\r\nX-Backend-Server: a\r\n\r\n",
		"X-Backend-Server: a\r\n\r\n",
	};
	(void)state;
	expect_line_by_line(bad, sizeof(bad) / sizeof(bad[0]), 1);
}

/* The liberal forms a client may take: blanks and empty lines before the
 * status line, no reason, other blanks between the parts, obs-fold and
 * blanks before the colon in the fields. */
static void test_liberal_status_lines(void **state)
{
	static const char resp[] = "\r\n HTTP/1.1 200\r\nX-Backend-Server : a\r\n"
				   "Debug-Id: 1\r\n  folded\r\nContent-Length: 0\r\n\r\n"
				   "HTTP/1.1\t200\tOK\r\nx-backend-server: b\r\n\r\n";
	struct seg_peer p = { 1, 2, 0 };
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &p, &r);
	assert_int_equal(r.messages, 2);
	assert_int_equal(r.masked, 3);
	assert_int_equal(r.desync, 0);
	assert_null(strstr(r.out, "folded"));
}

/* A drop rule for responses stops the scan where it matched. */
static void test_response_drop(void **state)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nX-Upstream-Addr: 10.1.2.3\r\n\r\n";
	static const char req[] = "GET / HTTP/1.1\r\nX-Upstream-Addr: 10.1.2.3\r\n\r\n";
	struct seg_peer p = { 1, 1, 0 };
	struct seg_scan r;

	(void)state;
	seg_scan_dir(fx.trie, resp, 0, HS_DIR_RESPONSE, 0, &p, &r);
	assert_int_equal(r.phase, HS_PH_DROPPED);
	seg_scan_dir(fx.trie, req, 0, HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.phase, HS_PH_REQ_LEAD);
	assert_int_equal(r.matched, 0);
}

/* A stream that may be either direction (a segment between two inspected
 * ports whose handshake was not seen) is read line by line with both
 * directions' rules. */
static void test_either_stream(void **state)
{
	static const char text[] = "HTTP/1.1 200 OK\r\nSecret-Token: s\r\nX-Backend-Server: a\r\n"
				   "\r\nGET / HTTP/1.1\r\nsecret-token: t\r\nAccept: */*\r\n\r\n";
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, text, HS_DIR_EITHER, 0, NULL, &r);
	assert_int_equal(r.masked, 3);
	assert_null(strstr(r.out, "Secret-Token"));
	assert_null(strstr(r.out, "secret-token"));
	assert_null(strstr(r.out, "X-Backend-Server"));
	assert_non_null(strstr(r.out, "Accept: */*"));
	assert_true(r.st.conn & HS_CN_UNTRACKED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_directions),
		cmocka_unit_test(test_request_heads),
		cmocka_unit_test(test_head_among_gets),
		cmocka_unit_test(test_unknown_request),
		cmocka_unit_test(test_interim_and_bodiless),
		cmocka_unit_test(test_other_interim),
		cmocka_unit_test(test_remove_untracked_masks),
		cmocka_unit_test(test_chunk_end_exact),
		cmocka_unit_test(test_chunked_trailers),
		cmocka_unit_test(test_to_close),
		cmocka_unit_test(test_upgrade_field_no_switch),
		cmocka_unit_test(test_bad_status_lines),
		cmocka_unit_test(test_liberal_status_lines),
		cmocka_unit_test(test_response_drop),
		cmocka_unit_test(test_either_stream),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
