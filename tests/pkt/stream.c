// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Stream tests: a connection played through BPF_PROG_TEST_RUN segment by
 * segment on one 4-tuple (SYN, data with correct sequence numbers, FIN),
 * with the flow table kept between runs. Every passed segment's checksums
 * are checked with the builder's own RFC 1071 routine, its headers must be
 * unchanged, and the concatenation of the payloads that come out must be
 * what the reference stripper makes of the whole stream cut the same way;
 * counters are compared over the whole connection.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "edges.h"
#include "stream.h"

#define MAX_SEGS 4096
#define ISN 0xfffff000u /* wraps within the first pipelined segments */
#define TCP_SYN 0x02
#define TCP_FIN_ACK 0x11
#define TCP_RST 0x04
#define MAX_REPORTED 10

static const __u16 port80 = 80;

/* splitmix64, as in random.c. */
static __u64 rng;

static __u64 rnd(void)
{
	__u64 z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __u32 ret_code(enum th_hook hook, int drop)
{
	if (hook == TH_XDP)
		return drop ? XDP_DROP : XDP_PASS;
	return drop ? TC_ACT_SHOT : (__u32)TC_ACT_UNSPEC;
}

void st_conn_init(struct st_conn *c, struct th *h, enum th_hook hook, __u16 sport, const char *what)
{
	memset(c, 0, sizeof(*c));
	c->h = h;
	c->hook = hook;
	c->spec.sport = sport;
	c->spec.seq_set = 1;
	c->what = what;
	c->next = ISN;
}

/*
 * Send @n bytes at sequence number @seq with TCP @flags. Returns 1 when the
 * program passed it, 0 when it dropped it, -1 on a test failure; @out gets
 * the payload as it left.
 */
int st_send_at(struct st_conn *c, __u32 seq, __u8 flags, const void *payload, size_t n, __u8 *out)
{
	static __u8 pkt[PB_MAX_PKT], got[2 * PB_MAX_PKT];
	struct pb_tun_ports tp;
	struct pb_layout lay;
	__u32 glen = 0, ret = 0;
	size_t len, i;
	char why[160];
	int rc;

	c->spec.seq = seq;
	c->spec.tcp_flags = flags;
	len = pb_build(&c->spec, payload, n, pkt, &lay);
	if (len && c->mangle)
		c->mangle(pkt, len, &lay);
	rc = len ? th_run(c->h, c->hook, pkt, (__u32)len, got, sizeof(got), &glen, &ret) : -E2BIG;
	if (rc) {
		fprintf(stderr, "  [%s] %s: test_run failed: %s\n", th_hook_name[c->hook], c->what,
			strerror(-rc));
		return -1;
	}
	if (ret == ret_code(c->hook, 1))
		return 0;
	if (ret != ret_code(c->hook, 0)) {
		fprintf(stderr, "  [%s] %s: returned %u\n", th_hook_name[c->hook], c->what, ret);
		return -1;
	}
	pt_tun_ports(c->h->tunnels, HS_MAX_TUNNEL_PORTS, &tp);
	if (glen != len || (!c->no_sum_check && pb_check_frame_ports(got, glen, !c->spec.no_l2, &tp,
								     why, sizeof(why)) < 0)) {
		fprintf(stderr, "  [%s] %s: segment at seq %u: %s\n", th_hook_name[c->hook],
			c->what, seq, glen != len ? "length changed" : why);
		return -1;
	}
	/* Only the payload and the TCP checksum may change (and what the
	 * normaliser clears: URG, the urgent pointer). */
	for (i = 0; i < lay.payload_off; i++) {
		if (got[i] != pkt[i] && i != lay.tcp_check_off && i != lay.tcp_check_off + 1 &&
		    !(c->urgent_ok &&
		      (i == lay.l4_off + 13 || i == lay.l4_off + 18 || i == lay.l4_off + 19))) {
			fprintf(stderr, "  [%s] %s: header byte %zu changed\n",
				th_hook_name[c->hook], c->what, i);
			return -1;
		}
	}
	if (out)
		memcpy(out, got + lay.payload_off, n);
	if (c->hdr_out)
		memcpy(c->hdr_out, got, lay.payload_off);
	return 1;
}

int st_send_ctl(struct st_conn *c, __u8 flags)
{
	int r = st_send_at(c, c->next, flags, "", 0, NULL);

	if (flags & TCP_SYN)
		c->next++;
	return r;
}

/* How a stream should come out. */
struct expect {
	__u8 *out; /* the reference's output */
	__u8 *touched;
	struct ref_result r;
};

static void expect_stream(const struct ref_list *l, const __u8 *data, size_t len,
			  const size_t *ends, size_t n_ends, int conflict_pass, struct expect *e)
{
	const struct ref_opts o = { .ends = ends,
				    .n_ends = n_ends,
				    .conflict_pass = conflict_pass };

	memcpy(e->out, data, len);
	ref_strip_ex(l, e->out, len, &o, e->touched, &e->r);
}

/*
 * Play @data cut at @ends (ascending, the last one @len) as one connection:
 * SYN, the segments, FIN. Checks verdicts, bytes, checksums and counters
 * against the reference. @got (len bytes) receives the output. Returns the
 * number of mismatches.
 */
static int play(struct th *h, enum th_hook hook, const struct ref_list *l, const __u8 *data,
		size_t len, const size_t *ends, size_t n_ends, int conflict_pass, const char *what,
		__u8 *got, struct st_stats *st)
{
	static __u8 ref_out[1 << 21], touched[1 << 21];
	struct expect e = { .out = ref_out, .touched = touched };
	struct hs_counters before, after, want;
	struct st_conn c;
	size_t i, start = 0, sent = 0, modified = 0;
	int bad = 0, dropped = 0, r;

	if (len > sizeof(ref_out))
		return 1;
	expect_stream(l, data, len, ends, n_ends, conflict_pass, &e);
	th_config(h, 0, conflict_pass ? HS_POLICY_PASS : HS_POLICY_DROP, &port80, 1);
	th_forget_flows(h);
	h->keep_flows = 1;
	st_conn_init(&c, h, hook, 40000, what);
	th_counters(h, &before);
	if (st_send_ctl(&c, TCP_SYN) != 1)
		bad++;
	for (i = 0; i < n_ends && !bad; i++) {
		size_t end = ends[i];
		int want_drop = (e.r.outcome == REF_DROP || e.r.outcome == REF_HALT) &&
				e.r.stop >= start && e.r.stop < end;
		size_t k2;

		r = st_send_at(&c, c.next, 0, data + start, end - start, got + start);
		sent++;
		if (r < 0 || r != !want_drop) {
			fprintf(stderr, "  [%s] %s: segment %zu [%zu, %zu) %s, expected %s\n",
				th_hook_name[hook], what, i, start, end, r ? "passed" : "dropped",
				want_drop ? "dropped" : "passed");
			bad++;
			break;
		}
		if (!r) {
			dropped = 1;
			break;
		}
		if (memcmp(got + start, ref_out + start, end - start)) {
			for (k2 = start; got[k2] == ref_out[k2]; k2++)
				;
			fprintf(stderr,
				"  [%s] %s: segment %zu [%zu, %zu): byte %zu is %#04x, the "
				"reference has %#04x\n",
				th_hook_name[hook], what, i, start, end, k2, got[k2], ref_out[k2]);
			bad++;
			break;
		}
		for (k2 = start; k2 < end && !touched[k2]; k2++)
			;
		modified += k2 < end;
		c.next += (__u32)(end - start);
		start = end;
	}
	if (st_send_ctl(&c, TCP_FIN_ACK) != 1)
		bad++;
	h->keep_flows = 0;
	if (th_live_flows(h)) {
		fprintf(stderr, "  [%s] %s: a flow is left open after FIN\n", th_hook_name[hook],
			what);
		bad++;
	}
	th_counters(h, &after);
	if (!bad) {
		memset(&want, 0, sizeof(want));
		want.packets = sent + 2;
		want.inspected = sent;
		want.http_requests = e.r.requests;
		want.headers_seen = e.r.seen;
		want.headers_matched = e.r.matched;
		want.headers_masked = e.r.masked;
		want.packets_modified = modified;
		want.packets_dropped = dropped;
		/* Every segment from the one that showed it is no HTTP/1.x. */
		for (i = 0; e.r.not_http && i < sent; i++)
			want.non_http += ends[i] > e.r.stop;
		want.split_names = e.r.premasked;
		want.framing_conflict = e.r.conflicts;
		want.framing_invalid = e.r.framing_invalid;
		want.desync = e.r.desync;
		want.h2c_preface = e.r.h2c;
		want.bodies_unframed = e.r.bodies_unframed;
		want.flows_new = 1;
		want.flows_closed = 1;
		bad += pt_diff_counters(what, th_hook_name[hook], &want, &before, &after);
	}
	st->runs += sent + 2;
	st->streams++;
	st->split_names += e.r.premasked;
	st->dropped += dropped;
	st->modified += modified;
	return bad;
}

/* The corpus, its list (as written: drop rules too) in slot 0, and where
 * each request starts. */
struct corpus {
	char *reqs, *list;
	size_t len, n, off[2001];
	struct hs_trie *t;
	struct ref_list *ref;
};

static void corpus_free(struct corpus *k)
{
	free(k->reqs);
	free(k->list);
	free(k->t);
	free(k->ref);
}

static int corpus_load(struct th *h, const char *dir, int with_drop, struct corpus *k)
{
	size_t list_len, pos = 0;

	memset(k, 0, sizeof(*k));
	k->reqs = th_slurp(dir, "requests.http", &k->len);
	k->list = th_slurp(dir, "internal-headers.txt", &list_len);
	k->t = calloc(1, sizeof(*k->t));
	k->ref = calloc(1, sizeof(*k->ref));
	if (k->list && !with_drop) {
		pt_strip_drop_words(k->list);
		list_len = strlen(k->list);
	}
	if (!k->reqs || !k->list || !k->t || !k->ref || pt_compile(k->list, k->t) ||
	    th_set_trie(h, 0, k->t) || ref_list_parse(k->list, list_len, 0, k->ref)) {
		corpus_free(k);
		return -1;
	}
	while (pos < k->len && k->n < 2000) {
		const char *e = strstr(k->reqs + pos, "\r\n\r\n");

		k->off[k->n++] = pos;
		pos = e ? (size_t)(e - k->reqs) + 4 : k->len;
	}
	k->off[k->n] = pos;
	return 0;
}

static int corpus_done(struct th *h, struct corpus *k, int bad)
{
	corpus_free(k);
	th_config(h, 0, HS_POLICY_DROP, &port80, 1);
	if (th_set_trie(h, 0, pt.fix_trie))
		bad++;
	return bad;
}

/* One packet, one connection without state: the single-packet output. */
static int single(struct th *h, enum th_hook hook, const __u8 *data, size_t len, __u8 *out,
		  int *passed)
{
	struct st_conn c;
	int r;

	h->keep_flows = 0;
	st_conn_init(&c, h, hook, 40000, "single packet");
	r = st_send_at(&c, c.next, 0, data, len, out);
	*passed = r == 1;
	return r < 0;
}

int st_split2(struct th *h, const char *corpus, int first, int sample, __u64 seed,
	      struct st_stats *st)
{
	static __u8 got[1 << 16], one[1 << 16];
	struct corpus k;
	int bad = 0, hook, reported = 0;
	size_t i, cut;

	memset(st, 0, sizeof(*st));
	if (corpus_load(h, corpus, 1, &k))
		return 1;
	rng = seed;
	for (i = 0; i < k.n && reported < MAX_REPORTED; i++) {
		const __u8 *req = (const __u8 *)k.reqs + k.off[i];
		size_t len = k.off[i + 1] - k.off[i];

		/* The first requests, then a sample of the others. */
		if ((int)i >= first && sample >= 0 &&
		    rnd() % (k.n - (size_t)first) >= (size_t)sample)
			continue;
		st->requests++;
		for (hook = 0; hook < TH_HOOKS; hook++) {
			int passed;

			th_config(h, 0, HS_POLICY_DROP, &port80, 1);
			bad += single(h, (enum th_hook)hook, req, len, one, &passed);
			for (cut = 1; cut < len && reported < MAX_REPORTED; cut++) {
				size_t ends[2] = { cut, len };
				char what[96];
				int b;

				snprintf(what, sizeof(what), "corpus request %zu cut at %zu", i,
					 cut);
				memset(got, 0, len);
				b = play(h, (enum th_hook)hook, k.ref, req, len, ends, 2, 0, what,
					 got, st);
				/* No name rewritten ahead: the same bytes as one packet. */
				if (!b && passed && got[len - 1] == one[len - 1] &&
				    memcmp(got, one, len)) {
					struct ref_result r;
					static __u8 tmp[1 << 16];
					const struct ref_opts o = { .ends = ends, .n_ends = 2 };

					memcpy(tmp, req, len);
					ref_strip_ex(k.ref, tmp, len, &o, NULL, &r);
					if (!r.premasked) {
						fprintf(stderr,
							"  [%s] %s: differs from the "
							"single packet\n",
							th_hook_name[hook], what);
						b++;
					}
				}
				if (b) {
					bad += b;
					reported++;
				}
			}
		}
	}
	return corpus_done(h, &k, bad);
}

int st_random_pieces(struct th *h, const char *corpus, __u64 seed, struct st_stats *st)
{
	static __u8 got[1 << 16];
	struct corpus k;
	int bad = 0, hook, reported = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	if (corpus_load(h, corpus, 1, &k))
		return 1;
	rng = seed;
	for (i = 0; i < k.n && reported < MAX_REPORTED; i++) {
		const __u8 *req = (const __u8 *)k.reqs + k.off[i];
		size_t len = k.off[i + 1] - k.off[i], ends[8], n = 3 + rnd() % 6, j, a, b2;
		int pass = (int)(rnd() & 1);
		char what[96];

		/* n - 1 distinct cuts in (0, len), sorted. */
		for (j = 0; j + 1 < n; j++) {
			size_t c;

			do {
				c = 1 + rnd() % (len - 1);
				for (a = 0; a < j && ends[a] != c; a++)
					;
			} while (a < j);
			ends[j] = c;
		}
		for (a = 0; a + 1 < n; a++)
			for (b2 = a + 1; b2 + 1 < n; b2++)
				if (ends[b2] < ends[a]) {
					size_t t = ends[a];

					ends[a] = ends[b2];
					ends[b2] = t;
				}
		ends[n - 1] = len;
		snprintf(what, sizeof(what), "corpus request %zu in %zu pieces (seed %llu, %s)", i,
			 n, (unsigned long long)seed, pass ? "on_error pass" : "on_error drop");
		st->requests++;
		for (hook = 0; hook < TH_HOOKS; hook++) {
			int b = play(h, (enum th_hook)hook, k.ref, req, len, ends, n, pass, what,
				     got, st);

			bad += b;
			reported += b != 0;
		}
	}
	return corpus_done(h, &k, bad);
}

int st_pipelined(struct th *h, const char *corpus, size_t mss, int conflict_pass,
		 struct st_stats *st)
{
	static __u8 got[1 << 21];
	static size_t ends[MAX_SEGS];
	struct corpus k;
	size_t n = 0, pos = 0;
	int bad = 0, hook;
	char what[96];

	memset(st, 0, sizeof(*st));
	/* Every rule masks here: a drop rule would end the connection early. */
	if (corpus_load(h, corpus, 0, &k))
		return 1;
	while (pos < k.len && n < MAX_SEGS) {
		pos = pos + mss < k.len ? pos + mss : k.len;
		ends[n++] = pos;
	}
	if (pos != k.len)
		return corpus_done(h, &k, 1);
	snprintf(what, sizeof(what), "the corpus as one connection, %zu-byte segments, %s", mss,
		 conflict_pass ? "on_error pass" : "on_error drop");
	st->requests = k.n;
	for (hook = 0; hook < TH_HOOKS; hook++)
		bad += play(h, (enum th_hook)hook, k.ref, (const __u8 *)k.reqs, k.len, ends, n,
			    conflict_pass, what, got, st);
	return corpus_done(h, &k, bad);
}

/*
 * Hand-written streams: the expected output of the whole stream is written
 * out; each is then played cut at every offset (and in one segment) against
 * the reference, which must agree with the written output.
 */
struct framing_case {
	const char *what;
	const char *in, *out; /* out NULL: unchanged */
	int pass; /* on_error pass */
	int dropped; /* under drop: the stream stops */
};

#define RQ "POST /u HTTP/1.1\r\nHost: h\r\n"
#define AUTH "X-Internal-Auth: a\r\n"
#define AUTH_M "y-hdrstrip: xxxxxx\r\n"
#define NEXT "GET /n HTTP/1.1\r\n" AUTH "\r\n"
#define NEXT_M "GET /n HTTP/1.1\r\n" AUTH_M "\r\n"
#define H2PRI "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

static const struct framing_case framing_cases[] = {
	{ "Content-Length body that looks like fields, then a request",
	  RQ "Content-Length: 20\r\n\r\n" AUTH "\r\n" NEXT,
	  RQ "Content-Length: 20\r\n\r\n" AUTH "\r\n" NEXT_M, 0, 0 },
	{ "chunked body that looks like fields, internal trailer, then a request",
	  RQ "Transfer-Encoding: chunked\r\n\r\n14\r\n" AUTH "\r\n3;x=" AUTH "abc\r\n0\r\n" AUTH
	     "\r\n" NEXT,
	  RQ "Transfer-Encoding: chunked\r\n\r\n14\r\n" AUTH "\r\n3;x=" AUTH "abc\r\n0\r\n" AUTH_M
	     "\r\n" NEXT_M,
	  0, 0 },
	{ "chunked, upper-case hex and LF-only size lines",
	  RQ "transfer-encoding: gzip, CHUNKED\r\n\r\n1A\n" AUTH "123456\r\n0\n\n" NEXT,
	  RQ "transfer-encoding: gzip, CHUNKED\r\n\r\n1A\n" AUTH "123456\r\n0\n\n" NEXT_M, 0, 0 },
	{ "Content-Length 0, then a request", RQ "Content-Length: 0\r\n\r\n" NEXT,
	  RQ "Content-Length: 0\r\n\r\n" NEXT_M, 0, 0 },
	{ "the same length twice", RQ "Content-Length: 4\r\ncontent-length:4 \r\n\r\nabcd" NEXT,
	  RQ "Content-Length: 4\r\ncontent-length:4 \r\n\r\nabcd" NEXT_M, 0, 0 },
	{ "invalid length: no body", RQ "Content-Length: abc\r\n\r\n" NEXT,
	  RQ "Content-Length: abc\r\n\r\n" NEXT_M, 0, 0 },
	{ "'_' is not '-' in a framing name: no body", RQ "Content_Length: 20\r\n\r\n" NEXT,
	  RQ "Content_Length: 20\r\n\r\n" NEXT_M, 0, 0 },
	{ "CONNECT: line by line after it",
	  "CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n\x16\x03\x01zz\r\n" AUTH,
	  "CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n\x16\x03\x01zz\r\n" AUTH_M, 0, 0 },
	{ "Upgrade: line by line after it",
	  "GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n\x81\x05hello\n" AUTH,
	  "GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n\x81\x05hello\n" AUTH_M, 0, 0 },
	/* Conflicts: dropped by default, line by line under pass. */
	{ "Content-Length and Transfer-Encoding, drop",
	  RQ "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", NULL, 0, 1 },
	{ "Content-Length and Transfer-Encoding, pass",
	  RQ "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" AUTH,
	  RQ "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" AUTH_M, 1, 0 },
	{ "two different lengths, drop", RQ "Content-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef",
	  NULL, 0, 1 },
	{ "a length with a sign, drop", RQ "Content-Length: +5\r\n\r\nabcde", NULL, 0, 1 },
	{ "digits then other bytes, pass", RQ "Content-Length: 8qaa2v6\r\n\r\n" AUTH,
	  RQ "Content-Length: 8qaa2v6\r\n\r\n" AUTH_M, 1, 0 },
	{ "blanks before a framing name's colon, drop", RQ "Content-Length : 5\r\n\r\nabcde", NULL,
	  0, 1 },
	{ "framing field on a continuation line, drop",
	  RQ "Accept: a\r\n Content-Length: 5\r\n\r\nabcde", NULL, 0, 1 },
	{ "framing field continued by a line, drop", RQ "Content-Length: 5\r\n 6\r\n\r\nabcde",
	  NULL, 0, 1 },
	{ "framing field after leading junk, drop",
	  RQ "\x0b"
	     "Content-Length: 5\r\n\r\nabcde",
	  NULL, 0, 1 },
	{ "Transfer-Encoding not ending in chunked, drop",
	  RQ "Transfer-Encoding: chunked, gzip\r\n\r\nabc", NULL, 0, 1 },
	{ "bad chunk size, pass: line by line from it",
	  RQ "Transfer-Encoding: chunked\r\n\r\nzz\r\n" AUTH,
	  RQ "Transfer-Encoding: chunked\r\n\r\nzz\r\n" AUTH_M, 1, 0 },
	/* A bare LF after chunk data: the end for nginx, two bytes skipped
	 * unread by Python's http.client ("\nf00" is then size "00"). */
	{ "a bare LF after chunk data, drop",
	  RQ "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\nf00\r\n\r\n" NEXT, NULL, 0, 1 },
	{ "a bare LF after chunk data, pass: line by line from it",
	  RQ "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\nf00\r\n\r\n" NEXT,
	  RQ "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\nf00\r\n\r\n" NEXT_M, 1, 0 },
	{ "missing CRLF after chunk data, drop",
	  RQ "Transfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", NULL, 0, 1 },
	{ "desync after a request without a body", "GET / HTTP/1.1\r\n\r\nhello\r\n" AUTH,
	  "GET / HTTP/1.1\r\n\r\nhello\r\n" AUTH_M, 0, 0 },
	/* HTTP/2's preface (h2c with prior knowledge): binary frames follow,
	 * which an h2c origin reads fields from and no line reading parses.
	 * Dropped by default; under pass a connection that starts with it
	 * goes through unscanned (its "field" below too), one after a request
	 * (where no HTTP/2 server reads it) line by line. */
	{ "HTTP/2 preface, drop", H2PRI AUTH, NULL, 0, 1 },
	{ "HTTP/2 preface, pass: the connection goes through unscanned", H2PRI AUTH, NULL, 1, 0 },
	{ "HTTP/2 preface after a request, drop", "GET / HTTP/1.1\r\n\r\n" H2PRI AUTH, NULL, 0, 1 },
	{ "HTTP/2 preface after a request, pass: line by line from it",
	  "GET / HTTP/1.1\r\n\r\n" H2PRI AUTH, "GET / HTTP/1.1\r\n\r\n" H2PRI AUTH_M, 1, 0 },
	{ "PRI with an HTTP/1.1 version: a request", "PRI * HTTP/1.1\r\n\r\n" NEXT,
	  "PRI * HTTP/1.1\r\n\r\n" NEXT_M, 0, 0 },
	/* A body on a method that defines no use for one: Python's
	 * SimpleHTTPRequestHandler reads it as its next request, node and
	 * nginx skip it; line by line from it, both readings masked. */
	{ "GET with a body that is a request: line by line from it",
	  "GET / HTTP/1.1\r\nContent-Length: 39\r\n\r\n" NEXT NEXT,
	  "GET / HTTP/1.1\r\nContent-Length: 39\r\n\r\n" NEXT_M NEXT_M, 0, 0 },
	{ "HEAD with a body that is a request",
	  "HEAD / HTTP/1.1\r\nContent-Length: 39\r\n\r\n" NEXT,
	  "HEAD / HTTP/1.1\r\nContent-Length: 39\r\n\r\n" NEXT_M, 0, 0 },
	{ "DELETE with a body", "DELETE /x HTTP/1.1\r\nContent-Length: 20\r\n\r\n" AUTH,
	  "DELETE /x HTTP/1.1\r\nContent-Length: 20\r\n\r\n" AUTH_M, 0, 0 },
	{ "OPTIONS with a body", "OPTIONS * HTTP/1.1\r\nContent-Length: 20\r\n\r\n" AUTH,
	  "OPTIONS * HTTP/1.1\r\nContent-Length: 20\r\n\r\n" AUTH_M, 0, 0 },
	{ "TRACE with a body, lower case", "trace / HTTP/1.1\r\nContent-Length: 20\r\n\r\n" AUTH,
	  "trace / HTTP/1.1\r\nContent-Length: 20\r\n\r\n" AUTH_M, 0, 0 },
	{ "GET with a chunked body: its chunks line by line",
	  "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n" AUTH "\r\n0\r\n\r\n",
	  "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n" AUTH_M "\r\n0\r\n\r\n", 0,
	  0 },
	{ "GET with Content-Length 0: framed, the next request read as one",
	  "GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n" NEXT,
	  "GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n" NEXT_M, 0, 0 },
	{ "GETX with a body: a method like any other, body skipped",
	  "GETX / HTTP/1.1\r\nContent-Length: 20\r\n\r\n" AUTH NEXT,
	  "GETX / HTTP/1.1\r\nContent-Length: 20\r\n\r\n" AUTH NEXT_M, 0, 0 },
	/* A line Python's header parser stops reading fields at, then a
	 * framing field: Python never sees that length (its next request is
	 * the body), nginx does. Ambiguous framing. */
	{ "a byte >= 0x80 in a name, then Content-Length, drop",
	  RQ "X-F\x80oo: a\r\nContent-Length: 5\r\n\r\nabcde", NULL, 0, 1 },
	{ "a byte >= 0x80 in a name, then Content-Length, pass: line by line",
	  RQ "X-F\x80oo: a\r\nContent-Length: 39\r\n\r\n" NEXT,
	  RQ "X-F\x80oo: a\r\nContent-Length: 39\r\n\r\n" NEXT_M, 1, 0 },
	{ "a long name with a byte >= 0x80, then Content-Length, drop",
	  RQ "Accept-Language-Of-The-Client\x85x: a\r\nContent-Length: 5\r\n\r\nabcde", NULL, 0,
	  1 },
	{ "a line that starts with VT, then Transfer-Encoding, drop",
	  RQ "\x0bX-Foo: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", NULL, 0, 1 },
	{ "a line without a colon, then Content-Length, drop",
	  RQ "NoColonAtAll\r\nContent-Length: 5\r\n\r\nabcde", NULL, 0, 1 },
	{ "a name with a space, then Content-Length, drop",
	  RQ "Accept Language: a\r\nContent-Length: 5\r\n\r\nabcde", NULL, 0, 1 },
	{ "a control byte in a name, then Content-Length, drop",
	  RQ "Acc\x01ept: a\r\nContent-Length: 5\r\n\r\nabcde", NULL, 0, 1 },
	{ "blanks alone on a line, then Content-Length, drop",
	  RQ "\x0c\x0b\r\nContent-Length: 5\r\n\r\nabcde", NULL, 0, 1 },
	{ "a listed name alone (masked, no colon still), then Content-Length, drop",
	  RQ "X-A\r\nContent-Length: 5\r\n\r\nabcde", NULL, 0, 1 },
	{ "a listed name alone, longer than the filler name (masked: a field), then Content-Length",
	  RQ "X-Internal-Auth\r\nContent-Length: 5\r\n\r\nabcde" NEXT,
	  RQ "y-hdrstrip: xxx\r\nContent-Length: 5\r\n\r\nabcde" NEXT_M, 0, 0 },
	{ "Content-Length before a line Python stops at: framed",
	  RQ "Content-Length: 5\r\nX-F\x80oo: a\r\n\r\nabcde" NEXT,
	  RQ "Content-Length: 5\r\nX-F\x80oo: a\r\n\r\nabcde" NEXT_M, 0, 0 },
	{ "a listed name with blanks before its colon (masked: filler), then Content-Length",
	  RQ "X-Internal-Auth : a\r\nContent-Length: 5\r\n\r\nabcde" NEXT,
	  RQ "y-hdrstrip: xxxxxxx\r\nContent-Length: 5\r\n\r\nabcde" NEXT_M, 0, 0 },
	{ "bytes Python takes in a name ('(', '/', '@', an empty name), then Content-Length",
	  RQ "X(a: 1\r\nX/b: 2\r\n@c: 3\r\n: 4\r\n folded\r\nContent-Length: 5\r\n\r\nabcde" NEXT,
	  RQ "X(a: 1\r\nX/b: 2\r\n@c: 3\r\n: 4\r\n folded\r\nContent-Length: 5\r\n\r\nabcde" NEXT_M,
	  0, 0 },
	{ "a line Python stops at, then Upgrade: line by line after it as always",
	  "GET /ws HTTP/1.1\r\nX-F\x80oo: a\r\nUpgrade: websocket\r\n\r\n" AUTH,
	  "GET /ws HTTP/1.1\r\nX-F\x80oo: a\r\nUpgrade: websocket\r\n\r\n" AUTH_M, 0, 0 },
	{ "a line Python stops at, then a trailer Content-Length: trailers frame nothing",
	  RQ
	  "Transfer-Encoding: chunked\r\n\r\n0\r\nX-F\x80oo: a\r\nContent-Length: 5\r\n\r\n" NEXT,
	  RQ
	  "Transfer-Encoding: chunked\r\n\r\n0\r\nX-F\x80oo: a\r\nContent-Length: 5\r\n\r\n" NEXT_M,
	  0, 0 },
};

int st_framing(struct th *h, struct st_stats *st)
{
	static __u8 got[4096], ref[4096];
	int bad = 0, hook;
	size_t i, cut;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < sizeof(framing_cases) / sizeof(framing_cases[0]); i++) {
		const struct framing_case *fc = &framing_cases[i];
		size_t len = strlen(fc->in);
		const struct ref_opts o = { .conflict_pass = fc->pass };
		struct ref_result r;

		/* The reference agrees with the written output. */
		memcpy(ref, fc->in, len);
		ref_strip_ex(pt.fix_ref, ref, len, &o, NULL, &r);
		if (fc->dropped != (r.outcome == REF_HALT) ||
		    (!fc->dropped && memcmp(ref, fc->out ? fc->out : fc->in, len))) {
			fprintf(stderr, "  [ref] %s: the reference disagrees (outcome %d)\n",
				fc->what, r.outcome);
			bad++;
		}
		for (hook = 0; hook < TH_HOOKS; hook++) {
			for (cut = 0; cut < len; cut++) {
				size_t ends[2] = { cut, len };
				char what[160];

				snprintf(what, sizeof(what), "%s, cut at %zu", fc->what, cut);
				/* cut 0: the stream in one segment */
				bad += play(h, (enum th_hook)hook, pt.fix_ref, (const __u8 *)fc->in,
					    len, cut ? ends : ends + 1, cut ? 2 : 1, fc->pass, what,
					    got, st);
				if (!cut && !fc->dropped &&
				    memcmp(got, fc->out ? fc->out : fc->in, len)) {
					fprintf(stderr, "  [%s] %s: not the written output\n",
						th_hook_name[hook], what);
					bad++;
				}
			}
		}
	}
	th_config(h, 0, HS_POLICY_DROP, &port80, 1);
	return bad;
}

int st_diff1(const char *what, const char *hook, const char *counter, __u64 got, __u64 want)
{
	if (got == want)
		return 0;
	fprintf(stderr, "  [%s] %s: %s moved by %llu, expected %llu\n", hook, what, counter,
		(unsigned long long)got, (unsigned long long)want);
	return 1;
}

#define SEG1 "GET /a HTTP/1.1\r\nHost: h\r\n"
#define SEG2 "X-Internal-Auth: s\r\nAccept: */*\r\n"
#define SEG3 "X-Internal-Trace: t\r\n\r\n"
#define SEG2_M "y-hdrstrip: xxxxxx\r\nAccept: */*\r\n"
#define SEG3_M "y-hdrstrip: xxxxxxx\r\n\r\n"

int st_check_out(struct st_conn *c, const __u8 *got, const char *want, const char *step)
{
	if (!memcmp(got, want, strlen(want)))
		return 0;
	fprintf(stderr, "  [%s] %s: %s: not the expected bytes\n", th_hook_name[c->hook], c->what,
		step);
	return 1;
}

/* Retransmissions, out of order, gaps, SYN/FIN/RST on one hook. */
static int tcp_hook(struct th *h, enum th_hook hook)
{
	const char *hn = th_hook_name[hook];
	struct hs_counters b, a;
	__u8 got[256], first[256];
	struct hs_flow_key k;
	struct st_conn c;
	__u32 s1, s2, s3;
	int bad = 0;

	th_config(h, 0, HS_POLICY_DROP, &port80, 1);
	th_forget_flows(h);
	h->keep_flows = 1;

	/* SYN creates the state; three segments in order. */
	st_conn_init(&c, h, hook, 41000, "retransmissions");
	th_counters(h, &b);
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "flows_new after SYN", a.flows_new - b.flows_new, 1);
	bad += bpf_map_get_next_key(h->flows_fd, NULL, &k) != 0;
	s1 = c.next;
	s2 = s1 + sizeof(SEG1) - 1;
	s3 = s2 + sizeof(SEG2) - 1;
	bad += st_send_at(&c, s1, 0, SEG1, sizeof(SEG1) - 1, got) != 1;
	bad += st_send_at(&c, s2, 0, SEG2, sizeof(SEG2) - 1, first) != 1;
	bad += st_check_out(&c, first, SEG2_M, "second segment");
	th_counters(h, &b);
	bad += st_send_at(&c, s3, 0, SEG3, sizeof(SEG3) - 1, got) != 1;
	bad += st_check_out(&c, got, SEG3_M, "third segment");
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "headers_masked (third)", a.headers_masked - b.headers_masked,
			1);

	/* The last segment again: rescanned from its checkpoint, the same
   * bytes out. */
	th_counters(h, &b);
	bad += st_send_at(&c, s3, 0, SEG3, sizeof(SEG3) - 1, got) != 1;
	bad += st_check_out(&c, got, SEG3_M, "last segment retransmitted");
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "retransmits", a.retransmits - b.retransmits, 1);
	bad += st_diff1(c.what, hn, "headers_masked (rescan)", a.headers_masked - b.headers_masked,
			1);
	/* An earlier one, within the four checkpoints. */
	th_counters(h, &b);
	bad += st_send_at(&c, s2, 0, SEG2, sizeof(SEG2) - 1, got) != 1;
	bad += memcmp(got, first, sizeof(SEG2) - 1) != 0;
	bad += st_check_out(&c, got, SEG2_M, "earlier segment retransmitted");
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "retransmits", a.retransmits - b.retransmits, 1);
	/* The stream goes on where it was: a new request after it. */
	c.next = s3 + sizeof(SEG3) - 1;
	bad += st_send_at(&c, c.next, 0, SEG1 SEG2 "\r\n", sizeof(SEG1 SEG2 "\r\n") - 1, got) != 1;
	bad += st_check_out(&c, got, SEG1 SEG2_M "\r\n", "next request after the retransmissions");
	c.next += sizeof(SEG1 SEG2 "\r\n") - 1;
	/* FIN ends the state. */
	th_counters(h, &b);
	bad += st_send_ctl(&c, TCP_FIN_ACK) != 1;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "flows_closed after FIN", a.flows_closed - b.flows_closed, 1);
	bad += th_live_flows(h) != 0;

	/* Out of order inside a header block: dropped (on_error drop), then
   * the gap is filled and the segment comes again, in order. */
	st_conn_init(&c, h, hook, 41001, "out of order in a header block");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	s1 = c.next;
	s2 = s1 + sizeof(SEG1) - 1;
	s3 = s2 + sizeof(SEG2) - 1;
	bad += st_send_at(&c, s1, 0, SEG1, sizeof(SEG1) - 1, got) != 1;
	th_counters(h, &b);
	bad += st_send_at(&c, s3, 0, SEG3, sizeof(SEG3) - 1, got) != 0;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "out_of_order", a.out_of_order - b.out_of_order, 1);
	bad += st_diff1(c.what, hn, "packets_dropped", a.packets_dropped - b.packets_dropped, 1);
	bad += st_send_at(&c, s2, 0, SEG2, sizeof(SEG2) - 1, got) != 1;
	bad += st_check_out(&c, got, SEG2_M, "the gap filled");
	bad += st_send_at(&c, s3, 0, SEG3, sizeof(SEG3) - 1, got) != 1;
	bad += st_check_out(&c, got, SEG3_M, "the dropped segment again, in order");
	/* RST ends the state too. */
	c.next = s3 + sizeof(SEG3) - 1;
	th_counters(h, &b);
	bad += st_send_ctl(&c, TCP_RST) != 1;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "flows_closed after RST", a.flows_closed - b.flows_closed, 1);

	/* Out of order inside a body of known length: passed untouched. */
	st_conn_init(&c, h, hook, 41002, "out of order inside a body");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	s1 = c.next;
	{
		static const char head[] =
			"POST / HTTP/1.1\r\nContent-Length: 40\r\n\r\n0123456789";
		static const char mid[] = "X-Internal-Auth: 1\r\n", tail[] = "0123456789";

		s2 = s1 + sizeof(head) - 1;
		s3 = s2 + sizeof(mid) - 1;
		bad += st_send_at(&c, s1, 0, head, sizeof(head) - 1, got) != 1;
		th_counters(h, &b);
		bad += st_send_at(&c, s3, 0, tail, sizeof(tail) - 1, got) != 1;
		bad += st_check_out(&c, got, tail, "body bytes ahead of a gap");
		th_counters(h, &a);
		bad += st_diff1(c.what, hn, "out_of_order", a.out_of_order - b.out_of_order, 0);
		/* The gap: body bytes that look like a field, untouched. */
		bad += st_send_at(&c, s2, 0, mid, sizeof(mid) - 1, got) != 1;
		bad += st_check_out(&c, got, mid, "the gap filled with body bytes");
		/* The next request follows the body whose end was passed ahead of
     * the gap: the flow knows the bytes between are body. */
		th_counters(h, &b);
		bad += st_send_at(&c, s3 + sizeof(tail) - 1, 0, SEG1 SEG2 "\r\n",
				  sizeof(SEG1 SEG2 "\r\n") - 1, got) != 1;
		bad += st_check_out(&c, got, SEG1 SEG2_M "\r\n", "the request after that body");
		th_counters(h, &a);
		bad += st_diff1(c.what, hn, "out_of_order (next request)",
				a.out_of_order - b.out_of_order, 0);
	}
	h->keep_flows = 0;
	th_forget_flows(h);
	return bad;
}

int st_tcp(struct th *h)
{
	int hook, bad = 0;

	for (hook = 0; hook < TH_HOOKS; hook++)
		bad += tcp_hook(h, (enum th_hook)hook);
	return bad;
}

/*
 * A name split at every offset of its line. A listed name: the output is
 * exactly the unsplit one. A benign name that the list could still match
 * where it was cut: the line comes out masked (the documented price), and
 * one that it could not: untouched.
 */
int st_split_names(struct th *h, struct st_stats *st)
{
	static const struct {
		const char *line, *masked;
		int listed;
		/* Rewritten ahead when cut after byte from + 1 .. upto of the
     * line: inside a name the list can still match. */
		size_t from, upto;
	} lines[] = {
		{ "X-Internal-Auth: secret\r\n", "y-hdrstrip: xxxxxxxxxxx\r\n", 1, 0, 15 },
		{ "x_edge_foo \x0b: 1\r\n", "y-hdrstrip: xxx\r\n", 1, 0, 12 },
		{ "X-A: 1\r\n", "y-h: x\r\n", 1, 0, 3 },
		{ " X-Internal-Trace: t\r\n", " y-hdrstrip: xxxxxxx\r\n", 1, 1, 17 },
		{ "X-Internal-Autx: benign\r\n", "y-hdrstrip: xxxxxxxxxxx\r\n", 0, 0, 14 },
		{ "X-Edge: 1\r\n", "y-hdrs: x\r\n", 0, 0, 6 },
		/* 'c' starts cdn-trace-id: one byte only, not the framing name */
		{ "Content-Length: 0\r\n", "y-hdrstrip: xxxxx\r\n", 0, 0, 1 },
		{ "Accept: x\r\n", NULL, 0, 0, 0 },
	};
	static const char pre[] = "GET / HTTP/1.1\r\nHost: h\r\n", post[] = "\r\n";
	__u8 in[256], want[256], got[256];
	int bad = 0, hook;
	size_t i, cut;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		size_t ll = strlen(lines[i].line), len = sizeof(pre) - 1 + ll + sizeof(post) - 1;

		snprintf((char *)in, sizeof(in), "%s%s%s", pre, lines[i].line, post);
		for (hook = 0; hook < TH_HOOKS; hook++) {
			for (cut = sizeof(pre); cut < sizeof(pre) - 1 + ll; cut++) {
				size_t ends[2] = { cut, len }, off;
				const char *colon = strchr(lines[i].line, ':');
				char what[128];
				struct st_stats one = { 0 };
				int premasked;

				snprintf(what, sizeof(what), "split name '%.*s' cut at %zu",
					 (int)(colon - lines[i].line), lines[i].line,
					 cut - (sizeof(pre) - 1));
				bad += play(h, (enum th_hook)hook, pt.fix_ref, in, len, ends, 2, 0,
					    what, got, &one);
				st->runs += one.runs;
				st->streams++;
				st->split_names += one.split_names;
				premasked = one.split_names > 0;
				off = cut - (sizeof(pre) - 1);
				if (premasked != (off > lines[i].from && off <= lines[i].upto)) {
					fprintf(stderr, "  [%s] %s: %s\n", th_hook_name[hook], what,
						premasked ? "rewritten ahead"
							  : "not rewritten ahead");
					bad++;
				}
				/* Listed: exactly the unsplit output. Benign but still a
         * possible match where cut: the line comes out masked. */
				snprintf((char *)want, sizeof(want), "%s%s%s", pre,
					 lines[i].listed || premasked ? lines[i].masked
								      : lines[i].line,
					 post);
				if (memcmp(got, want, len)) {
					fprintf(stderr, "  [%s] %s: not the expected bytes\n",
						th_hook_name[hook], what);
					bad++;
				}
			}
		}
	}
	return bad;
}

/*
 * LRU eviction: a table of @max_flows connections, one connection that
 * starts a request, a flood of SYNs of other 4-tuples, then a continuation
 * segment of the first connection carrying an internal field: its state is
 * gone, so the segment is scanned line by line (untracked) and masked. It
 * looks like a request with a body, and the field after the body is masked
 * too: without state no framing is trusted (bytes a server reads as a
 * request may be body to this reader, and the other way round).
 */
int st_eviction(const char *obj_path, unsigned int max_flows)
{
	static const char head[] = "GET / HTTP/1.1\r\nHost: h\r\n",
			  cont[] = "Accept: a\r\nX-Internal-Auth: leak\r\n\r\n"
				   "POST / HTTP/1.1\r\nContent-Length: 24\r\n\r\n"
				   "X-Internal-Auth: hidden\r\n",
			  cont_m[] = "Accept: a\r\ny-hdrstrip: xxxxxxxxx\r\n\r\n"
				     "POST / HTTP/1.1\r\nContent-Length: 24\r\n\r\n"
				     "y-hdrstrip: xxxxxxxxxxx\r\n";
	struct hs_counters b, a;
	struct hs_flow_key k;
	struct th h;
	struct st_conn c, flood;
	__u8 got[256];
	unsigned int i, n;
	int bad = 0, hook;

	if (th_open_flows(&h, obj_path, "small flow table", max_flows))
		return 1;
	if (th_config(&h, 0, HS_POLICY_DROP, &port80, 1) || th_set_trie(&h, 0, pt.fix_trie)) {
		th_close(&h);
		return 1;
	}
	h.keep_flows = 1;
	for (hook = 0; hook < TH_HOOKS; hook++) {
		const char *hn = th_hook_name[hook];

		th_forget_flows(&h);
		st_conn_init(&c, &h, (enum th_hook)hook, 42000, "evicted connection");
		bad += st_send_ctl(&c, TCP_SYN) != 1;
		bad += st_send_at(&c, c.next, 0, head, sizeof(head) - 1, got) != 1;
		c.next += sizeof(head) - 1;
		th_counters(&h, &b);
		/* Each flood connection sends a request too: the LRU keeps
     * entries that were looked up over ones only inserted. */
		for (i = 0; i < 8 * max_flows; i++) {
			st_conn_init(&flood, &h, (enum th_hook)hook, (__u16)(43000 + i), "flood");
			bad += st_send_ctl(&flood, TCP_SYN) != 1;
			bad += st_send_at(&flood, flood.next, 0, head, sizeof(head) - 1, got) != 1;
		}
		th_counters(&h, &a);
		bad += st_diff1(c.what, hn, "flows_new (flood)", a.flows_new - b.flows_new,
				8 * max_flows);
		for (n = 0; !bpf_map_get_next_key(h.flows_fd, n ? &k : NULL, &k); n++) {
			if (k.sport == htons(42000)) {
				fprintf(stderr, "  [%s] the first connection was not evicted\n",
					hn);
				bad++;
			}
		}
		if (n > max_flows) {
			fprintf(stderr, "  [%s] %u flows in a table of %u\n", hn, n, max_flows);
			bad++;
		}
		th_counters(&h, &b);
		bad += st_send_at(&c, c.next, 0, cont, sizeof(cont) - 1, got) != 1;
		bad += st_check_out(&c, got, cont_m, "continuation after eviction");
		th_counters(&h, &a);
		bad += st_diff1(c.what, hn, "untracked", a.untracked - b.untracked, 1);
		bad += st_diff1(c.what, hn, "non_http", a.non_http - b.non_http, 0);
		bad += st_diff1(c.what, hn, "headers_masked", a.headers_masked - b.headers_masked,
				2);
	}
	th_close(&h);
	return bad;
}
