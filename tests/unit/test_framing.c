// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Requests that real origins read otherwise than their framing says (issue
 * 34, classes 6-8; scan.h's top comment has the rules, and
 * tests/e2e/normalize.py shows what each origin does with them):
 *  - HTTP/2's connection preface (h2c with prior knowledge): binary frames
 *    follow, whose fields an h2c origin reads;
 *  - a body on a method that defines no use for one, which Python's
 *    SimpleHTTPRequestHandler reads as its next request and node and nginx
 *    skip; and the responses after it, which such an origin sends for more
 *    requests than were counted;
 *  - a framing field after a line that Python's header parser stops
 *    reading fields at.
 * Every case is scanned whole and cut at every offset (testutil.h:
 * seg_scan_all_cuts), and must give the same bytes and counts each way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdrstrip/scan.h>

#include "testutil.h"

#define LIST                                                                                       \
	"x-internal-auth\n"                                                                        \
	"x-a\n"                                                                                    \
	"x-backend-server  mask  response\n"

#define PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define AUTH "X-Internal-Auth: a\r\n"
/* A request with an internal field, as the body of another one. */
#define SMUGGLED "GET /s HTTP/1.1\r\n" AUTH "\r\n"

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

/* ---- class 6: h2c with prior knowledge ---- */

/* The preface stops the scan for the policy (drop by default): nothing of
 * the frames after it is read as lines, and no request is counted. */
static void test_h2c_preface_halts(void **state)
{
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, PREFACE AUTH, HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.phase, HS_PH_HALT);
	assert_int_equal(r.h2c, 1);
	assert_int_equal(r.messages, 0);
	assert_int_equal(r.masked, 0);
	/* Decided at the version's "2": the rest need not have come. */
	seg_scan_dir(fx.trie, "PRI * HTTP/2", 0, HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.phase, HS_PH_HALT);
	seg_scan_dir(fx.trie, "PRI * HTTP/", 0, HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.phase, HS_PH_REQ_VERSION);
	assert_int_equal(r.h2c, 0);
}

/* Under the pass policy a connection that starts with the preface goes
 * through untouched, as a TLS one does: its binary frames would be
 * corrupted by masking, and reading them as lines parses no HTTP/2. What
 * it carries is not looked at, as the README says. */
static void test_h2c_preface_pass(void **state)
{
	static const char in[] = PREFACE AUTH;
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, in, HS_DIR_REQUEST, HS_OPT_CONFLICT_GO_ON, NULL, &r);
	assert_int_equal(r.phase, HS_PH_NOT_HTTP);
	assert_int_equal(r.h2c, 1);
	assert_int_equal(r.conflicts, 0);
	assert_string_equal(r.out, in);
}

/* After a request no HTTP/2 server reads a preface: under pass it is a
 * line that starts no request, and the rest goes line by line. */
static void test_h2c_preface_after_request(void **state)
{
	static const char in[] = "GET / HTTP/1.1\r\n\r\n" PREFACE AUTH;
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, in, HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.phase, HS_PH_HALT);
	assert_int_equal(r.messages, 1);
	seg_scan_all_cuts(fx.trie, in, HS_DIR_REQUEST, HS_OPT_CONFLICT_GO_ON, NULL, &r);
	assert_int_equal(r.h2c, 1);
	assert_int_equal(r.desync, 1);
	assert_int_equal(r.masked, 1);
	assert_null(strstr(r.out, "X-Internal-Auth"));
	assert_true(r.st.conn & HS_CN_UNTRACKED);
}

/* Only the method PRI with an HTTP/2 version is the preface. */
static void test_h2c_near_misses(void **state)
{
	static const char *const reqs[] = {
		"PRI * HTTP/1.1\r\n\r\n", "PRIX * HTTP/2.0\r\n\r\n", "pri * HTTP/2.0\r\n\r\n",
		"PR * HTTP/2.0\r\n\r\n",  "GET / HTTP/2.0\r\n\r\n",  "PRI *\r\n\r\n",
	};
	struct seg_scan r;

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(reqs); i++) {
		seg_scan_all_cuts(fx.trie, reqs[i], HS_DIR_REQUEST, 0, NULL, &r);
		if (r.h2c || r.messages != 1 || r.phase != HS_PH_REQ_LEAD)
			fail_msg("case %zu: h2c %u, messages %u, phase %u", i, r.h2c, r.messages,
				 r.phase);
	}
}

/* ---- class 7: a body on a method that defines no use for one ---- */

/* Each such method with a body that is a request: the body is checked line
 * by line (its internal field masked, whichever way the origin reads it),
 * and so is the rest of the connection. */
static void test_bodiless_methods(void **state)
{
	static const char *const methods[] = { "GET",	"HEAD", "DELETE", "OPTIONS",
					       "TRACE", "get",	"Head" };
	char req[256];
	struct seg_scan r;

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(methods); i++) {
		snprintf(req, sizeof(req), "%s /x HTTP/1.1\r\nContent-Length: %zu\r\n\r\n" SMUGGLED,
			 methods[i], strlen(SMUGGLED));
		seg_scan_all_cuts(fx.trie, req, HS_DIR_REQUEST, 0, NULL, &r);
		if (r.masked != 1 || r.bodies_unframed != 1 || r.messages != 1 ||
		    !(r.st.conn & HS_CN_UNTRACKED) || strstr(r.out, "X-Internal-Auth"))
			fail_msg("%s, a length: masked %u, bodies_unframed %u, messages %u, conn "
				 "%#x: %s",
				 methods[i], r.masked, r.bodies_unframed, r.messages, r.st.conn,
				 r.out);
		snprintf(req, sizeof(req),
			 "%s /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n%zx\r\n" SMUGGLED
			 "\r\n0\r\n\r\n",
			 methods[i], strlen(SMUGGLED));
		seg_scan_all_cuts(fx.trie, req, HS_DIR_REQUEST, 0, NULL, &r);
		if (r.masked != 1 || r.bodies_unframed != 1 || !(r.st.conn & HS_CN_UNTRACKED))
			fail_msg("%s, chunked: masked %u, bodies_unframed %u, conn %#x", methods[i],
				 r.masked, r.bodies_unframed, r.st.conn);
	}
}

/* Other methods keep their bodies as bodies; and without a body (a length
 * of 0) a GET is framed as before. */
static void test_bodies_framed(void **state)
{
	static const char *const methods[] = { "POST", "PUT", "PATCH", "GETX", "GE", "HEADS" };
	char req[256];
	struct seg_scan r;

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(methods); i++) {
		snprintf(req, sizeof(req),
			 "%s /x HTTP/1.1\r\nContent-Length: %zu\r\n\r\n" SMUGGLED
			 "GET / HTTP/1.1\r\n"
			 "\r\n",
			 methods[i], strlen(SMUGGLED));
		seg_scan_all_cuts(fx.trie, req, HS_DIR_REQUEST, 0, NULL, &r);
		if (r.masked || r.bodies_unframed || r.messages != 2 ||
		    (r.st.conn & HS_CN_UNTRACKED))
			fail_msg("%s: masked %u, bodies_unframed %u, messages %u", methods[i],
				 r.masked, r.bodies_unframed, r.messages);
	}
	seg_scan_all_cuts(fx.trie, "GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n" SMUGGLED,
			  HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.messages, 2);
	assert_int_equal(r.masked, 1);
	assert_int_equal(r.bodies_unframed, 0);
	assert_false(r.st.conn & HS_CN_UNTRACKED);
}

/*
 * The responses of an origin that read a GET's body as a request (Python's
 * SimpleHTTPRequestHandler): one to the GET, one to the HEAD it found in
 * the body (a length, no body), one to the GET that follows, with an
 * internal field. The request stream keeps the count of the requests
 * framed before it went line by line (one), so the response after the
 * first goes line by line and the third response's field is masked. As
 * hdrstrip counted them before (two GETs), the HEAD's answer was framed as
 * a GET's: its length's bytes were skipped as body, the third response's
 * head with them.
 */
static void test_responses_after_bodiless_body(void **state)
{
	static const char req[] = "GET /f HTTP/1.1\r\nContent-Length: 29\r\n\r\n"
				  "HEAD /f HTTP/1.1\r\nHost: h\r\n\r\n"
				  "GET /g HTTP/1.1\r\n\r\n";
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
				   "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n"
				   "HTTP/1.1 200 OK\r\nX-Backend-Server: b\r\nContent-Length: 2\r\n"
				   "\r\nok";
	struct seg_peer p = { 1, 0, 0 }, old = { 1, 2, 0 };
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, req, HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.bodies_unframed, 1);
	assert_int_equal(r.st.nmsg, 1);
	assert_int_equal(r.st.heads, 0);
	p.n = r.st.nmsg;
	p.heads = r.st.heads;
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &p, &r);
	assert_int_equal(r.unframed, 1);
	assert_int_equal(r.masked, 1);
	assert_null(strstr(r.out, "X-Backend-Server"));
	assert_true(r.st.conn & HS_CN_UNTRACKED);
	/* What the old count made of it. */
	seg_scan_dir(fx.trie, resp, 0, HS_DIR_RESPONSE, 0, &old, &r);
	assert_int_equal(r.masked, 0);
	assert_non_null(strstr(r.out, "X-Backend-Server"));
}

/* A HEAD with a body: its own response is still framed as a HEAD's. */
static void test_head_with_body_keeps_head(void **state)
{
	static const char req[] = "HEAD /f HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc";
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, req, HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.st.nmsg, 1);
	assert_int_equal(r.st.heads, 1);
	assert_int_equal(r.bodies_unframed, 1);
}

/* Proxy mode's remove mode: from the body on, lines are masked in place
 * (a body's length stays as the origin that skips it reads it). */
static void test_bodiless_body_remove_mode(void **state)
{
	static const char req[] = "GET / HTTP/1.1\r\n" AUTH "Content-Length: 20\r\n\r\n" AUTH;
	size_t n = sizeof(req) - 1;
	__u32 removed = 0;
	struct hs_stream st;
	struct hs_scan s;
	char buf[256];
	int rc, steps = 0;

	(void)state;
	memcpy(buf, req, n);
	hs_stream_init(&st);
	hs_scan_begin(&s, &st, 0, (__u32)n, 0);
	s.opts = HS_OPT_REMOVE;
	do {
		rc = hs_scan_step(&s, fx.trie, (__u8 *)buf, (__u8 *)buf + n);
		if (rc == HS_STEP_REMOVE)
			removed += s.rm_end - s.rm_start;
		assert_true(++steps < 10000);
	} while (rc != HS_STEP_DONE);
	/* The header's line reported whole; the body's masked in place. */
	assert_int_equal(removed, strlen(AUTH));
	assert_int_equal(s.removed, 1);
	assert_int_equal(s.masked, 2);
	assert_int_equal(s.bodies_unframed, 1);
	assert_false(hs_removes(&s));
	assert_memory_equal(buf, req, n - strlen(AUTH));
	assert_null(strstr(buf + n - strlen(AUTH), "X-Internal-Auth"));
}

/* ---- class 8: a framing field after a line Python stops at ---- */

/* Lines Python's header parser does not read as fields (no colon, or a
 * byte outside 0x21-0x7e before it), kept as they came. */
static const char *const odd_lines[] = {
	"Z-F\x80oo: a", "\x80Z-Foo: a", "Accept-Language-Of-The-Client\x85x: a",
	"Z-Foo\xa0: a", "\x0bZ-Foo: a", "\x0cZ: a",
	"\x1cZ: a",	"\x0b: a",	"\x0c\x0b",
	"Z-Foo : a",	"Z-Foo\t: a",	"Accept Language: a",
	"NoColonAtAll", "Z-F\x01oo: a", "Z-Foo\x7f: a",
	"Z-F\x0boo: a", "X-A", /* a listed name alone: masked, and without a colon still */
};

static void test_odd_line_then_framing(void **state)
{
	static const char *const framing[] = { "Content-Length: 5\r\n\r\nabcde",
					       "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" };
	char req[256];
	struct seg_scan r;

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(odd_lines); i++) {
		for (size_t f = 0; f < HS_ARRAY_SIZE(framing); f++) {
			snprintf(req, sizeof(req), "POST / HTTP/1.1\r\nHost: h\r\n%s\r\n%s",
				 odd_lines[i], framing[f]);
			seg_scan_all_cuts(fx.trie, req, HS_DIR_REQUEST, 0, NULL, &r);
			if (r.phase != HS_PH_HALT || r.conflicts != 1)
				fail_msg("line %zu, framing %zu: phase %u, conflicts %u", i, f,
					 r.phase, r.conflicts);
		}
		/* Under pass: line by line from the block's end, the body
		 * (Python's next request) checked. */
		snprintf(req, sizeof(req),
			 "POST / HTTP/1.1\r\nHost: h\r\n%s\r\nContent-Length: %zu\r\n\r\n" SMUGGLED,
			 odd_lines[i], strlen(SMUGGLED));
		seg_scan_all_cuts(fx.trie, req, HS_DIR_REQUEST, HS_OPT_CONFLICT_GO_ON, NULL, &r);
		if (r.conflicts != 1 || strstr(r.out, "X-Internal-Auth") ||
		    !(r.st.conn & HS_CN_UNTRACKED))
			fail_msg("line %zu, pass: conflicts %u: %s", i, r.conflicts, r.out);
	}
}

/* A framing field before such a line is read by every parser that takes
 * the request, and lines every parser that takes the request reads as
 * fields (or folds) change nothing: framed as before. */
static void test_framing_read_by_all(void **state)
{
	static const char *const reqs[] = {
		/* the length first */
		"POST / HTTP/1.1\r\nContent-Length: 5\r\nZ-F\x80oo: a\r\nNoColon\r\n\r\nabcde",
		/* bytes Python takes in a name, an empty name, a fold */
		"POST / HTTP/1.1\r\nZ(a: 1\r\nZ/b: 2\r\n@c: 3\r\n: 4\r\n folded \x80\r\n"
		"\t\x0b\r\nContent-Length: 5\r\n\r\nabcde",
		/* odd bytes in a value */
		"POST / HTTP/1.1\r\nZ-V: a b\x80\x01\x7f :c\r\nContent-Length: 5\r\n\r\nabcde",
		/* a listed field with a blank before its colon: masked, its filler
		 * a field line; and a listed name alone longer than the filler
		 * name, whose filler has a colon */
		"POST / HTTP/1.1\r\nX-Internal-Auth : a\r\nContent-Length: 5\r\n\r\nabcde",
		"POST / HTTP/1.1\r\nX-Internal-Auth\r\nContent-Length: 5\r\n\r\nabcde",
		/* a trailer block frames nothing */
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nZ-F\x80oo: a\r\n"
		"Content-Length: 5\r\n\r\n",
		/* the line belongs to the request before */
		"POST / HTTP/1.1\r\nZ-F\x80oo: a\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 5\r\n"
		"\r\nabcde",
	};
	struct seg_scan r;

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(reqs); i++) {
		seg_scan_all_cuts(fx.trie, reqs[i], HS_DIR_REQUEST, 0, NULL, &r);
		if (r.conflicts || r.phase != HS_PH_REQ_LEAD || (r.st.conn & HS_CN_UNTRACKED))
			fail_msg("case %zu: conflicts %u, phase %u, conn %#x", i, r.conflicts,
				 r.phase, r.st.conn);
	}
}

/* An Upgrade after such a line is no conflict: the connection goes line by
 * line after an Upgrade whoever reads it. */
static void test_odd_line_then_upgrade(void **state)
{
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie,
			  "GET / HTTP/1.1\r\nZ-F\x80oo: a\r\nUpgrade: websocket\r\n\r\n" AUTH,
			  HS_DIR_REQUEST, 0, NULL, &r);
	assert_int_equal(r.conflicts, 0);
	assert_int_equal(r.masked, 1);
	assert_true(r.st.conn & HS_CN_UNTRACKED);
}

/* Responses are read by the same parser (http.client): the same rule. */
static void test_odd_line_in_response(void **state)
{
	static const char resp[] =
		"HTTP/1.1 200 OK\r\nZ-F\x80oo: a\r\nContent-Length: 5\r\n\r\nhello";
	struct seg_peer p = { 1, 1, 0 };
	struct seg_scan r;

	(void)state;
	seg_scan_all_cuts(fx.trie, resp, HS_DIR_RESPONSE, 0, &p, &r);
	assert_int_equal(r.phase, HS_PH_HALT);
	assert_int_equal(r.conflicts, 1);
}

/* VT (or another blank Python stops at) before an internal name, in a
 * segment before the name's: it has gone out when the name matches, so the
 * masked line keeps it, and stays one Python stops at; a length after it is
 * read two ways. Whole, or cut after the name began, the mask covers the VT:
 * a field line to every parser, the body framed. */
static void test_kept_lead_blank_then_framing(void **state)
{
	static const char req[] = "POST / HTTP/1.1\r\nHost: h\r\n\x0bX-Internal-Auth: a\r\n"
				  "Content-Length: 5\r\n\r\nabcde";
	const size_t vt = strlen("POST / HTTP/1.1\r\nHost: h\r\n");
	struct seg_scan r;

	(void)state;
	for (size_t cut = 0; cut < sizeof(req) - 1; cut++) {
		seg_scan_dir(fx.trie, req, cut, HS_DIR_REQUEST, 0, NULL, &r);
		if (cut == vt + 1) {
			/* The segment ended right after the VT. */
			if (r.phase != HS_PH_HALT || r.conflicts != 1)
				fail_msg("cut %zu: phase %u, conflicts %u", cut, r.phase,
					 r.conflicts);
			assert_int_equal(r.out[vt], '\x0b');
		} else if (r.phase == HS_PH_HALT || r.conflicts || r.masked != 1 ||
			   strstr(r.out, "X-Internal-Auth")) {
			fail_msg("cut %zu: phase %u, conflicts %u, masked %u: %s", cut, r.phase,
				 r.conflicts, r.masked, r.out);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_h2c_preface_halts),
		cmocka_unit_test(test_h2c_preface_pass),
		cmocka_unit_test(test_h2c_preface_after_request),
		cmocka_unit_test(test_h2c_near_misses),
		cmocka_unit_test(test_bodiless_methods),
		cmocka_unit_test(test_bodies_framed),
		cmocka_unit_test(test_responses_after_bodiless_body),
		cmocka_unit_test(test_head_with_body_keeps_head),
		cmocka_unit_test(test_bodiless_body_remove_mode),
		cmocka_unit_test(test_odd_line_then_framing),
		cmocka_unit_test(test_framing_read_by_all),
		cmocka_unit_test(test_odd_line_then_upgrade),
		cmocka_unit_test(test_odd_line_in_response),
		cmocka_unit_test(test_kept_lead_blank_then_framing),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
