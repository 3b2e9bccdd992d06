// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The head lane (include/hdrstrip/scan_lane.h) against the byte-wise
 * scanner it stands in for: a head the lane takes must come out byte for
 * byte as the scanner leaves it, with the same checksum difference, counts
 * and matches, and the stream left as the scanner hands it on
 * (hs_lane_to_scan()); a head it does not take must be left as it came. Every
 * request of the corpus, heads built to sit on each of the lane's limits,
 * and random heads, each at both checksum parities.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdrstrip/scan_lane.h>

#include "testutil.h"

#define LIST                                                                                       \
	"x-internal-auth\n"                                                                        \
	"x-a\n"                                                                                    \
	"q\n"                                                                                      \
	"x-trace-*\n"                                                                              \
	"x-edge-internal-route-identifier-v2\n"                                                    \
	"x-drop-me  drop\n"                                                                        \
	"x-watch  observe\n"                                                                       \
	"x-backend-server  mask  response\n"

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

/* What the byte-wise scanner made of a buffer. */
struct bytewise {
	struct hs_scan s; /* where it ended */
	struct hs_stream fin; /* hs_scan_finish() */
	unsigned int n; /* its matches, as reported: rule, name */
	__u16 rule[16], off[16], len[16];
};

static void scan_bytewise(const struct hs_trie *t, __u8 *buf, size_t len, __u32 par,
			  const struct hs_stream *from, struct bytewise *r)
{
	int k;

	memset(r, 0, sizeof(*r));
	hs_scan_begin(&r->s, from, 0, (__u32)len, par);
	while ((k = hs_scan_step(&r->s, t, buf, buf + len)) != HS_STEP_DONE) {
		if (k == HS_STEP_MATCH && r->n < 16) {
			r->rule[r->n] = r->s.rule;
			r->off[r->n] = r->s.name_off;
			r->len[r->n] = r->s.name_len;
			r->n++;
		}
	}
	hs_scan_finish(&r->s, &r->fin);
}

/* The checksum field a difference of @acc makes of two starting values:
 * equal for two accumulators that fold to the same difference. */
static void assert_same_csum(__u64 a, __u64 b, const char *ctx)
{
	if (hs_csum_update_acc(a, 0x1234) != hs_csum_update_acc(b, 0x1234) ||
	    hs_csum_update_acc(a, 0xfffe) != hs_csum_update_acc(b, 0xfffe))
		fail_msg("%s: checksum difference %#llx (lane) and %#llx (scanner) differ", ctx,
			 (unsigned long long)a, (unsigned long long)b);
}

/*
 * @len bytes of @text through the lane and through the scanner, each in an
 * exact-size copy (ASan sees over-reads), at parity @par, from the stream
 * state @from (at a request's start). Returns 1 when the lane took the
 * head: then both copies agree, and what hs_lane_to_scan() leaves agrees
 * with where the scanner ended: the stream state it hands on, the counts,
 * the checksum, the matches and their names, in order. When it did not,
 * its copy is the text as it came.
 */
static int lane_vs_scan_from(const struct hs_trie *t, const char *text, size_t len, __u32 par,
			     const struct hs_stream *from, const char *ctx)
{
	__u8 *a = malloc(len ? len : 1), *b = malloc(len ? len : 1);
	struct bytewise r;
	struct hs_stream fin;
	struct hs_scan ls;
	struct hs_lane L;
	int taken;

	assert_non_null(a);
	assert_non_null(b);
	memcpy(a, text, len);
	memcpy(b, text, len);
	taken = hs_lane_head(&L, t, a, a + len, 0, (__u32)len, par);
	scan_bytewise(t, b, len, par, from, &r);
	if (!taken) {
		if (memcmp(a, text, len))
			fail_msg("%s: the lane wrote to a head it did not take", ctx);
		goto out;
	}
	if (L.head_end != len)
		fail_msg("%s: head end %u, buffer %zu", ctx, L.head_end, len);
	if (memcmp(a, b, len))
		fail_msg("%s: the lane left\n%.*s\nthe scanner\n%.*s", ctx, (int)len,
			 (const char *)a, (int)len, (const char *)b);
	hs_scan_begin(&ls, from, 0, (__u32)len, par);
	hs_lane_to_scan(&L, &ls);
	hs_scan_finish(&ls, &fin);
	assert_same_csum(ls.csum_acc, r.s.csum_acc, ctx);
	if (memcmp(&fin, &r.fin, sizeof(fin)) || ls.st.phase != r.s.st.phase || ls.pos != r.s.pos ||
	    hs_scan_steady(&ls) != hs_scan_steady(&r.s))
		fail_msg(
			"%s: the lane hands on phase %u nmsg %u heads %#llx conn %#x flags %#x "
			"req %#x at %u; the scanner phase %u nmsg %u heads %#llx conn %#x flags %#x "
			"req %#x at %u",
			ctx, fin.phase, fin.nmsg, (unsigned long long)fin.heads, fin.conn,
			fin.flags, fin.req, ls.pos, r.fin.phase, r.fin.nmsg,
			(unsigned long long)r.fin.heads, r.fin.conn, r.fin.flags, r.fin.req,
			r.s.pos);
	if (ls.requests != r.s.requests || ls.seen != r.s.seen || ls.matched != r.s.matched ||
	    ls.masked != r.s.masked || r.s.requests != 1)
		fail_msg("%s: lane requests %u seen %u matched %u masked %u; scanner %u %u %u %u",
			 ctx, ls.requests, ls.seen, ls.matched, ls.masked, r.s.requests, r.s.seen,
			 r.s.matched, r.s.masked);
	if (L.masked != r.n)
		fail_msg("%s: the lane matched %u lines, the scanner reported %u", ctx, L.masked,
			 r.n);
	for (unsigned int i = 0; i < r.n && i < L.masked; i++)
		if (L.rule[i] != r.rule[i] || L.mask_from[i] != r.off[i] || L.nlen[i] != r.len[i])
			fail_msg(
				"%s: match %u: lane rule %u name %u+%u, scanner rule %u name %u+%u",
				ctx, i, L.rule[i], L.mask_from[i], L.nlen[i], r.rule[i], r.off[i],
				r.len[i]);
out:
	free(a);
	free(b);
	return taken;
}

static int lane_vs_scan(const struct hs_trie *t, const char *text, size_t len, __u32 par,
			const char *ctx)
{
	struct hs_stream from;

	hs_stream_init(&from);
	return lane_vs_scan_from(t, text, len, par, &from, ctx);
}

static int lane_both_parities(const char *text, const char *ctx)
{
	int t0 = lane_vs_scan(fx.trie, text, strlen(text), 0, ctx);
	int t1 = lane_vs_scan(fx.trie, text, strlen(text), 1, ctx);

	if (t0 != t1)
		fail_msg("%s: taken at one parity only", ctx);
	return t0;
}

#define HEAD(lines) "GET /index.html?q=1 HTTP/1.1\r\nHost: example.com\r\n" lines "\r\n"

/* Heads of the lane's shape: taken, and the same as the scanner's. */
static void test_taken(void **state)
{
	static const char *const heads[] = {
		HEAD(""),
		HEAD("X-Internal-Auth: secret\r\n"),
		HEAD("x-a: 1\r\nAccept: */*\r\nX-A:\r\nx-a:  spaced  value \r\n"),
		HEAD("Q: a\r\nq:b\r\nqq: kept\r\n"), /* one-byte names */
		HEAD("X-Trace-Id: 1\r\nx-trace-: 2\r\nX-TRACE-SPAN-PARENT-ID-LONG: 3\r\n"),
		HEAD("X-Edge-Internal-Route-Identifier-V2: r\r\n"), /* 35 bytes, dead at 32? no */
		HEAD("X-Internal-Aut: near\r\nX-Internal-Authx: near\r\nX-Internal: near\r\n"),
		HEAD("Content-Type: text/plain\r\nContent-Lengthy: 1\r\nUpgrade-Insecure-Requests: 1\r\n"),
		HEAD("X-Backend-Server: response only\r\nx-watch-not: 1\r\n"),
		HEAD("Cookie: a=b; c=d:e\x01\x7f\x80\xff\r\n"),
		"HEAD / HTTP/1.0\r\nX-A: 1\r\n\r\n",
		"DELETE /a/b HTTP/1.1\r\n\r\n",
		"POST /form HTTP/1.1\r\nX-Internal-Auth: 0123456789abcdef0123456789\r\n\r\n",
	};

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(heads); i++) {
		char ctx[32];

		snprintf(ctx, sizeof(ctx), "head %zu", i);
		/* The 35-byte listed name is the one head the lane leaves. */
		if (strstr(heads[i], "Route-Identifier"))
			assert_int_equal(lane_both_parities(heads[i], ctx), 0);
		else if (!lane_both_parities(heads[i], ctx))
			fail_msg("%s: not taken:\n%s", ctx, heads[i]);
	}
}

/* Every length of a masked line's value, so that the mask's last word and
 * its last bytes fall at every offset, as the head's last field and not. */
static void test_mask_lengths(void **state)
{
	(void)state;
	for (int n = 0; n < 40; n++) {
		char head[256], ctx[32];

		snprintf(head, sizeof(head), HEAD("X-Internal-Auth: %.*s\r\n"), n,
			 "0123456789012345678901234567890123456789");
		snprintf(ctx, sizeof(ctx), "value of %d bytes", n);
		assert_int_equal(lane_both_parities(head, ctx), 1);
		snprintf(head, sizeof(head), HEAD("x-a:%.*s\r\nAccept: x\r\n"), n,
			 "0123456789012345678901234567890123456789");
		assert_int_equal(lane_both_parities(head, ctx), 1);
	}
}

/* Heads of any other shape: left to the scanner, untouched. */
static void test_not_taken(void **state)
{
	static const char *const heads[] = {
		"GET / HTTP/1.1\r\nX-A: 1\r\n", /* no empty line */
		"GET / HTTP/1.1\r\nX-A: 1\r\n\r", /* cut in it */
		HEAD("X-A: 1\r\n folded\r\n"), /* obs-fold */
		HEAD("X-A: 1\n"), /* a bare LF */
		HEAD("X-A: 1\rAccept: 2\r\n"), /* a bare CR */
		HEAD("Content-Length: 0\r\n"),
		HEAD("content-LENGTH: 0\r\n"),
		HEAD("Transfer-Encoding: chunked\r\n"),
		HEAD("UPGRADE: websocket\r\n"),
		HEAD("X-A : 1\r\n"), /* a blank before the colon */
		HEAD("X-\x80: 1\r\n"), /* a byte outside 0x21-0x7e in a name */
		HEAD("X-A\r\n"), /* no colon */
		HEAD(": 1\r\n"), /* no name */
		HEAD("X-Drop-Me: 1\r\n"), /* a drop rule */
		HEAD("X-Watch: 1\r\n"), /* an observe rule */
		HEAD("X-A: 1\r\nX-A: 2\r\nX-A: 3\r\nX-A: 4\r\nX-A: 5\r\nX-A: 6\r\nX-A: 7\r\n"
		     "X-A: 8\r\nX-A: 9\r\n"), /* more masked lines than the lane holds */
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"CONNECT a:443 HTTP/1.1\r\n\r\n",
		"get / HTTP/1.1\r\n\r\n",
		"GET / HTTP/2.0\r\n\r\n",
		"GET  / HTTP/1.1\r\n\r\n",
		"GET /\x85 HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1 \r\n\r\n",
		"\r\nGET / HTTP/1.1\r\n\r\n",
		"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
	};

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(heads); i++) {
		char ctx[32];

		snprintf(ctx, sizeof(ctx), "head %zu", i);
		if (lane_both_parities(heads[i], ctx))
			fail_msg("%s: taken:\n%s", ctx, heads[i]);
	}
}

/* Every request of the corpus (its LF lines as CRLF): the ones the lane
 * takes agree with the scanner. Most are of its shape. */
static void test_corpus(void **state)
{
	struct fixture cfx;
	size_t len, pos = 0, n = 0, taken = 0;
	char *list = corpus_read("internal-headers.txt", &len);
	char *text = corpus_read("requests.http", &len);
	char *head = malloc(len + 3);
	size_t hl = 0;
	const char *line;
	size_t ll;

	(void)state;
	assert_non_null(head);
	fx_build(&cfx, list, -1);
	while (next_line(text, &pos, &line, &ll)) {
		if (ll && line[ll - 1] == '\r')
			ll--;
		memcpy(head + hl, line, ll);
		hl += ll;
		head[hl++] = '\r';
		head[hl++] = '\n';
		if (ll)
			continue;
		if (hl > 2) {
			char ctx[32];

			snprintf(ctx, sizeof(ctx), "corpus request %zu", n + 1);
			taken += lane_vs_scan(cfx.trie, head, hl, n & 1, ctx);
			n++;
		}
		hl = 0;
	}
	print_message("corpus: the lane took %zu of %zu requests\n", taken, n);
	assert_true(n > 100);
	assert_true(taken > 0);
	fx_free(&cfx);
	free(head);
	free(text);
	free(list);
}

/* Random heads: names listed and not, in any case, values of any bytes but
 * CR and LF, and now and then a byte that leaves the head to the scanner. */
static void test_random(void **state)
{
	static const char *const names[] = {
		"x-internal-auth",  "x-a",	  "q",	  "x-trace-",	      "x-trace-span",
		"accept",	    "x-internal", "host", "x-internal-authz", "content-type",
		"x-backend-server", "x-b",	  "qq",	  "x-tracer",
	};
	/* Now and then a name the lane leaves to the scanner. */
	static const char *const others[] = {
		"x-drop-me", "x-watch", "content-length", "upgrade", "transfer-encoding",
	};
	struct rng r = { test_seed("test_lane") };
	struct hs_stream from;
	char head[2048];
	int taken = 0;

	(void)state;
	for (int it = 0; it < 3000; it++) {
		static const char *const methods[] = { "GET",	  "HEAD", "POST",  "DELETE", "head",
						       "OPTIONS", "PUT",  "TRACE", "X" };
		size_t hl = (size_t)snprintf(head, sizeof(head), "%s /%u HTTP/1.1\r\n",
					     methods[rng_below(&r, HS_ARRAY_SIZE(methods))],
					     rng_below(&r, 1000));
		int nl = (int)rng_below(&r, 12);
		char ctx[48];

		for (int k = 0; k < nl; k++) {
			const char *nm = rng_below(&r, 20)
						 ? names[rng_below(&r, HS_ARRAY_SIZE(names))]
						 : others[rng_below(&r, HS_ARRAY_SIZE(others))];
			size_t n = strlen(nm), vl = rng_below(&r, 30);

			rng_mix_case(&r, head + hl, nm, n);
			hl += n;
			head[hl++] = ':';
			for (size_t j = 0; j < vl; j++) {
				__u8 b = (__u8)(1 + rng_below(&r, 255));

				head[hl++] = (char)(b == '\r' || b == '\n' ? ' ' : b);
			}
			head[hl++] = '\r';
			head[hl++] = '\n';
		}
		head[hl++] = '\r';
		head[hl++] = '\n';
		if (rng_below(&r, 4) == 0) /* one byte anywhere made anything */
			head[rng_below(&r, (__u32)hl)] = (char)rng_below(&r, 256);
		snprintf(ctx, sizeof(ctx), "random head %d", it);
		/* From a connection's start, or after requests: any count, any
		 * HEAD history. */
		hs_stream_init(&from);
		if (rng_below(&r, 2)) {
			from.conn = HS_CN_SEEN_REQUEST;
			from.flags = HS_SF_PREV_LF;
			from.nmsg = (__u16)rng_next(&r);
			from.heads = rng_next(&r);
		}
		taken += lane_vs_scan_from(fx.trie, head, hl, rng_below(&r, 2), &from, ctx);
	}
	print_message("random: the lane took %d of 3000 heads\n", taken);
	assert_true(taken > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_taken),	  cmocka_unit_test(test_mask_lengths),
		cmocka_unit_test(test_not_taken), cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
