// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Responses through the real programs (BPF_PROG_TEST_RUN): a connection's
 * requests go through one hook, its responses (from the inspected port)
 * through another, with the methods map the object's programs share, as
 * the hooks of one device share it. Every case is played whole and with
 * the responses cut in two at every offset, each play a connection of its
 * own, over IPv4 and IPv6, at every pair of hooks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "pkttest.h"
#include "stream.h"

#define TCP_SYN 0x02
#define TCP_ACK 0x10

static const char resp_list[] = "secret-token\n"
				"x-backend-server  mask  response\n"
				"x-upstream-addr  drop  response\n";

struct resp_case {
	const char *what;
	const char *requests; /* NULL: no hook sees the requests */
	const char *responses;
	const char *out; /* the responses as they must leave (NULL: unchanged) */
	int dropped; /* the responses' segment is dropped */
	/* Counter deltas for one play. */
	__u64 http_responses, matched, masked, unframed, responses_dropped, req_masked;
};

#define GET "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
#define HEAD "HEAD / HTTP/1.1\r\nHost: h\r\n\r\n"
#define OK5 "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
#define BACKEND(c) "X-Backend-Server: " c "\r\n"
#define BACKEND_M "y-hdrstrip: xxxxxxx\r\n"

static const struct resp_case cases[] = {
	{
		"a HEAD among GETs: its response has no body",
		GET HEAD GET,
		OK5 BACKEND("a") "\r\nhello" OK5 BACKEND("b") "\r\n" OK5 BACKEND("c") "\r\nworld",
		OK5 BACKEND_M "\r\nhello" OK5 BACKEND_M "\r\n" OK5 BACKEND_M "\r\nworld",
		0,
		3,
		3,
		3,
		0,
		0,
		0,
	},
	{
		"request rules stay on requests, response rules on responses",
		"GET / HTTP/1.1\r\nSecret-Token: s\r\nX-Backend-Server: q\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nSecret-Token: kept\r\n" BACKEND("z") "\r\n",
		"HTTP/1.1 204 No Content\r\nSecret-Token: kept\r\n" BACKEND_M "\r\n",
		0,
		1,
		1,
		1,
		0,
		0,
		1,
	},
	{
		"no hook saw the requests: line by line after the first response",
		NULL,
		OK5 BACKEND("a") "\r\nhello" OK5 BACKEND("b") "\r\n\r\n",
		OK5 BACKEND_M "\r\nhello" OK5 BACKEND_M "\r\n\r\n",
		0,
		1,
		2,
		2,
		1,
		0,
		0,
	},
	{
		"chunked, with a trailer",
		GET,
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		"5\r\nhello\r\n0\r\n" BACKEND("t") "\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		"5\r\nhello\r\n0\r\n" BACKEND_M "\r\n",
		0,
		1,
		1,
		1,
		0,
		0,
		0,
	},
	/* Issue 34: an origin that reads a GET's body as a request (Python's
	 * SimpleHTTPRequestHandler) answers the HEAD in it: a length, no
	 * body. Counted as two GETs, that answer's length (the next head's)
	 * was skipped as body, the next head's field with it; the request
	 * stream stops counting at the GET (its body and what follows go
	 * line by line), so the answers after the GET's go line by line. */
	{
		"a GET whose body is a HEAD: the answers after the GET's line by line",
		"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 28\r\n\r\n" HEAD GET,
		OK5 BACKEND("a") "\r\nhello"
				 "HTTP/1.1 200 OK\r\nContent-Length: 59\r\n" BACKEND(
					 "b") "\r\n" OK5 BACKEND("c") "\r\nworld",
		OK5 BACKEND_M "\r\nhello"
			      "HTTP/1.1 200 OK\r\nContent-Length: 59\r\n" BACKEND_M
			      "\r\n" OK5 BACKEND_M "\r\nworld",
		0,
		2,
		3,
		3,
		1,
		0,
		0,
	},
	/* A line Python's http.client stops reading fields at, then the
	 * length: that client reads until close, curl and node the length. */
	{
		"a length after a line http.client stops at: dropped (on-error drop)",
		GET,
		"HTTP/1.1 200 OK\r\nZ-F\x80oo: a\r\nContent-Length: 5\r\n\r\nhello",
		NULL,
		1,
		1,
		0,
		0,
		0,
		0,
		0,
	},
	{
		"a response drop rule drops the segment",
		GET,
		"HTTP/1.1 200 OK\r\nX-Upstream-Addr: 10.1.2.3\r\nContent-Length: 0\r\n\r\n",
		NULL,
		1,
		1,
		1,
		0,
		0,
		1,
		0,
	},
};

/* Play @c once: requests through @rq, responses through @rs, cut at @cut
 * (0: one segment), on a connection from client port @port. */
static int play_case(struct th *h, const struct resp_case *c, enum th_hook rq, enum th_hook rs,
		     int ipv6, size_t cut, __u16 port)
{
	static __u8 got[4096];
	size_t len = strlen(c->responses);
	struct hs_counters before, after;
	struct st_conn q, r;
	char what[256];
	int bad = 0, passed = 1;

	snprintf(what, sizeof(what), "%s (requests at %s, responses at %s, IPv%d, cut at %zu)",
		 c->what, th_hook_name[rq], th_hook_name[rs], ipv6 ? 6 : 4, cut);
	st_conn_init(&q, h, rq, port, what);
	q.spec.ipv6 = ipv6;
	st_conn_init(&r, h, rs, 80, what);
	r.spec.dport = port;
	r.spec.reply = 1;
	r.spec.ipv6 = ipv6;
	r.next = 7000;
	th_counters(h, &before);
	if (st_send_ctl(&q, TCP_SYN) != 1 || st_send_ctl(&r, TCP_SYN | TCP_ACK) != 1)
		return 1;
	if (c->requests) {
		size_t n = strlen(c->requests);

		if (st_send_at(&q, q.next, 0, c->requests, n, NULL) != 1)
			bad++;
		q.next += (__u32)n;
	}
	for (size_t off = 0, end = cut ? cut : len; off < len && passed; off = end, end = len) {
		int rc = st_send_at(&r, r.next, 0, c->responses + off, end - off, got + off);

		if (rc < 0)
			return bad + 1;
		passed = rc;
		r.next += (__u32)(end - off);
	}
	if (passed == c->dropped) {
		fprintf(stderr, "  %s: the responses were %s\n", what,
			passed ? "passed" : "dropped");
		bad++;
	} else if (passed && memcmp(got, c->out ? c->out : c->responses, len)) {
		fprintf(stderr, "  %s: left as \"%.*s\"\n", what, (int)len, got);
		bad++;
	}
	th_counters(h, &after);
#define D(f) ((after.f) - (before.f))
	bad += st_diff1(what, th_hook_name[rs], "http_responses", D(http_responses),
			c->dropped && cut ? D(http_responses) : c->http_responses);
	bad += st_diff1(what, th_hook_name[rs], "response_headers_matched",
			D(response_headers_matched), c->matched);
	bad += st_diff1(what, th_hook_name[rs], "response_headers_masked",
			D(response_headers_masked), c->masked);
	bad += st_diff1(what, th_hook_name[rs], "responses_unframed", D(responses_unframed),
			c->unframed);
	bad += st_diff1(what, th_hook_name[rs], "responses_dropped", D(responses_dropped),
			c->responses_dropped);
	bad += st_diff1(what, th_hook_name[rq], "headers_masked", D(headers_masked), c->req_masked);
#undef D
	return bad;
}

/*
 * A connection's request history does not outlive it. The first connection
 * on a tuple sends two GETs; the next one on the same tuple (its SYN inside
 * the old request flow: its data is read line by line, so its requests are
 * not counted) sends a HEAD, whose response's Content-Length is exactly the
 * length of the response after it. Framed by the old connection's history
 * (a GET), that next response would be skipped as body, its internal field
 * with it; the new stream's history (none) must frame nothing: line by line.
 */
#define NEXT_HEAD "HTTP/1.1 200 OK\r\n" BACKEND("b") "\r\n"
static int stale_history(struct th *h, __u16 port)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" NEXT_HEAD;
	static __u8 got[sizeof(resp)];
	struct hs_counters before, after;
	struct hs_flow_key k = { .family = 4 };
	struct st_conn q, r;
	int bad = 0;

	_Static_assert(sizeof(NEXT_HEAD) - 1 == 40, "the HEAD's length covers the next head");
	st_conn_init(&q, h, TH_XDP, port, "stale history");
	st_conn_init(&r, h, TH_TC, 80, "stale history");
	r.spec.dport = port;
	r.spec.reply = 1;
	r.next = 9000;
	if (st_send_ctl(&q, TCP_SYN) != 1 || st_send_ctl(&r, TCP_SYN | TCP_ACK) != 1 ||
	    st_send_at(&q, q.next, 0, GET GET, strlen(GET GET), NULL) != 1)
		return 1;
	q.next += (__u32)strlen(GET GET);
	/* The response flow is evicted (the request one stays). */
	k.saddr[0] = htonl(0x0a000002);
	k.daddr[0] = htonl(0x0a000001);
	k.sport = htons(80);
	k.dport = htons(port);
	if (bpf_map_delete_elem(h->flows_fd, &k)) {
		fprintf(stderr, "  stale history: no response flow to evict\n");
		return 1;
	}
	q.next += 100000;
	r.next += 100000;
	th_counters(h, &before);
	if (st_send_ctl(&q, TCP_SYN) != 1 || st_send_ctl(&r, TCP_SYN | TCP_ACK) != 1 ||
	    st_send_at(&q, q.next, 0, HEAD, strlen(HEAD), NULL) != 1 ||
	    st_send_at(&r, r.next, 0, resp, strlen(resp), got) != 1)
		return 1;
	th_counters(h, &after);
	if (strstr((const char *)got, "X-Backend-Server")) {
		fprintf(stderr, "  stale history: the next response's field went through: \"%s\"\n",
			got);
		bad++;
	}
	bad += st_diff1("stale history", "tc", "responses_unframed",
			after.responses_unframed - before.responses_unframed, 1);
	return bad;
}

/*
 * Between two inspected ports (a client that bound its port to one), the
 * handshake decides which way a connection's segments go: requests after
 * the SYN, responses after the SYN-ACK, each with its own rules. A segment
 * whose handshake was not seen may be either: both directions' rules.
 */
static int both_ports(struct th *h)
{
	static const __u16 ports[] = { 80, 8080 };
	static const char req[] =
		"GET / HTTP/1.1\r\nSecret-Token: s\r\nX-Backend-Server: q\r\n\r\n";
	static const char resp[] =
		"HTTP/1.1 204 No Content\r\nSecret-Token: k\r\nX-Backend-Server: z\r\n\r\n";
	static __u8 got[sizeof(req) + sizeof(resp)];
	struct st_conn q, r;
	int bad = 0;

	if (th_config(h, 0, HS_POLICY_DROP, ports, 2))
		return 1;
	st_conn_init(&q, h, TH_XDP, 8080, "both ports inspected");
	st_conn_init(&r, h, TH_TC, 80, "both ports inspected");
	r.spec.dport = 8080;
	r.spec.reply = 1;
	r.next = 5000;
	if (st_send_ctl(&q, TCP_SYN) != 1 || st_send_ctl(&r, TCP_SYN | TCP_ACK) != 1 ||
	    st_send_at(&q, q.next, 0, req, strlen(req), got) != 1)
		return 1;
	bad += !strstr((const char *)got, "X-Backend-Server: q") ||
	       strstr((const char *)got, "Secret-Token");
	if (st_send_at(&r, r.next, 0, resp, strlen(resp), got) != 1)
		return bad + 1;
	bad += !strstr((const char *)got, "Secret-Token: k") ||
	       strstr((const char *)got, "X-Backend-Server");
	if (bad)
		fprintf(stderr, "  both ports inspected: the handshake's direction was not kept\n");
	/* No handshake seen: either way, every rule. */
	th_forget_flows(h);
	q.next += 1000;
	r.next += 1000;
	if (st_send_at(&q, q.next, 0, req, strlen(req), got) != 1 ||
	    strstr((const char *)got, "Secret-Token") || strstr((const char *)got, "X-Backend")) {
		fprintf(stderr, "  both ports, no state: a request kept an internal field\n");
		bad++;
	}
	if (st_send_at(&r, r.next, 0, resp, strlen(resp), got) != 1 ||
	    strstr((const char *)got, "Secret-Token") || strstr((const char *)got, "X-Backend")) {
		fprintf(stderr, "  both ports, no state: a response kept an internal field\n");
		bad++;
	}
	return bad;
}

/*
 * A bulk body, then the retransmission of one of its first segments, more
 * than HS_FLOW_CKPTS segments back and cut anew (a loss after hdrstrip; at
 * tc-egress, the sender's own resend): body bytes, known from the body's
 * one checkpoint (flow.h merges a body's segments into it), passed; the
 * response after the body is still read, its field masked.
 */
static int body_retransmit(struct th *h, __u16 port)
{
	static char body[100000];
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n";
	static const char next[] = "HTTP/1.1 204 No Content\r\n" BACKEND("n") "\r\n";
	static __u8 got[sizeof(next)];
	struct hs_counters before, after;
	struct st_conn q, r;
	__u32 body_seq;
	int bad = 0;

	memset(body, 'b', sizeof(body));
	for (size_t i = 0; i + 20 < sizeof(body); i += 97)
		memcpy(body + i, "\r\nX-Backend-Server: ", 20); /* body, not fields */
	st_conn_init(&q, h, TH_XDP, port, "body retransmission");
	st_conn_init(&r, h, TH_TC, 80, "body retransmission");
	r.spec.dport = port;
	r.spec.reply = 1;
	r.next = 12000;
	if (st_send_ctl(&q, TCP_SYN) != 1 || st_send_ctl(&r, TCP_SYN | TCP_ACK) != 1 ||
	    st_send_at(&q, q.next, 0, GET GET, strlen(GET GET), NULL) != 1 ||
	    st_send_at(&r, r.next, 0, head, strlen(head), NULL) != 1)
		return 1;
	r.next += (__u32)strlen(head);
	body_seq = r.next;
	for (size_t off = 0; off < sizeof(body); off += 1000) {
		if (st_send_at(&r, r.next, 0, body + off, 1000, NULL) != 1)
			return 1;
		r.next += 1000;
	}
	th_counters(h, &before);
	/* Bytes 1500-2700 of the body again: 98 segments back, cut anew;
	 * and bytes 80,000-81,200, more than 64 KiB past the body's one
	 * checkpoint (a segment's steady end is a 16-bit offset: none must
	 * not read as one). */
	if (st_send_at(&r, body_seq + 1500, 0, body + 1500, 1200, NULL) != 1 ||
	    st_send_at(&r, body_seq + 80000, 0, body + 80000, 1200, NULL) != 1) {
		fprintf(stderr, "  body retransmission: dropped\n");
		bad++;
	}
	/* The body's last segment again: body up to its last byte. */
	if (st_send_at(&r, body_seq + 99000, 0, body + 99000, 1000, NULL) != 1) {
		fprintf(stderr, "  body retransmission: the last body segment again was dropped\n");
		bad++;
	}
	if (st_send_at(&r, r.next, 0, next, strlen(next), got) != 1 ||
	    strstr((const char *)got, "X-Backend-Server")) {
		fprintf(stderr, "  body retransmission: the next response went unread\n");
		bad++;
	}
	th_counters(h, &after);
	bad += st_diff1("body retransmission", "tc", "retransmit_unverified",
			after.retransmit_unverified - before.retransmit_unverified, 0);
	bad += st_diff1("body retransmission", "tc", "retransmit_mismatch",
			after.retransmit_mismatch - before.retransmit_mismatch, 0);
	bad += st_diff1("body retransmission", "tc", "retransmits",
			after.retransmits - before.retransmits, 3);
	return bad;
}

/*
 * Responses resent by TCP (a tail loss probe, a loss after hdrstrip): each
 * segment again as it was, and all of them again in one, are the same bytes
 * read the same way: passed, never a mismatch.
 */
static int response_resends(struct th *h, __u16 port, enum th_hook rs)
{
	static const char resp[] =
		OK5 BACKEND("a") "\r\nhello" OK5 BACKEND("b") "\r\n" OK5 BACKEND("c") "\r\nworld";
	static const size_t cuts[] = { 0, 30, 70, 120, sizeof(resp) - 1 };
	struct hs_counters before, after;
	struct st_conn q, r;
	__u32 base;
	int bad = 0;

	st_conn_init(&q, h, TH_XDP, port, "response resends");
	st_conn_init(&r, h, rs, 80, "response resends");
	r.spec.dport = port;
	r.spec.reply = 1;
	r.next = 30000;
	if (st_send_ctl(&q, TCP_SYN) != 1 || st_send_ctl(&r, TCP_SYN | TCP_ACK) != 1 ||
	    st_send_at(&q, q.next, 0, GET HEAD GET, strlen(GET HEAD GET), NULL) != 1)
		return 1;
	base = r.next;
	for (size_t i = 0; i + 1 < HS_ARRAY_SIZE(cuts); i++)
		if (st_send_at(&r, base + (__u32)cuts[i], 0, resp + cuts[i], cuts[i + 1] - cuts[i],
			       NULL) != 1)
			return 1;
	th_counters(h, &before);
	for (size_t i = 0; i + 1 < HS_ARRAY_SIZE(cuts); i++)
		bad += st_send_at(&r, base + (__u32)cuts[i], 0, resp + cuts[i],
				  cuts[i + 1] - cuts[i], NULL) != 1;
	bad += st_send_at(&r, base, 0, resp, sizeof(resp) - 1, NULL) != 1;
	th_counters(h, &after);
	bad += st_diff1("response resends", th_hook_name[rs], "retransmit_mismatch",
			after.retransmit_mismatch - before.retransmit_mismatch, 0);
	bad += st_diff1("response resends", th_hook_name[rs], "retransmits",
			after.retransmits - before.retransmits, 5);
	return bad;
}

int st_responses(struct th *h, unsigned long *plays)
{
	static const __u16 port80 = 80;
	struct hs_trie *t = calloc(1, sizeof(*t));
	__u16 port = 20000;
	int bad = 0;

	*plays = 0;
	if (!t || pt_compile(resp_list, t) || th_config(h, 0, HS_POLICY_DROP, &port80, 1) ||
	    th_set_trie(h, 0, t)) {
		free(t);
		return 1;
	}
	/* Flows live from one packet to the next, as on a device. */
	th_forget_flows(h);
	h->keep_flows = 1;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && bad < 10; i++) {
		size_t len = strlen(cases[i].responses);

		for (int rq = 0; rq < TH_HOOKS; rq++)
			for (int rs = 0; rs < TH_HOOKS; rs++)
				for (int v6 = 0; v6 < 2; v6++)
					for (size_t cut = 0; cut < len && bad < 10; cut++) {
						bad += play_case(h, &cases[i], (enum th_hook)rq,
								 (enum th_hook)rs, v6, cut, port++);
						(*plays)++;
						if (port < 20000)
							port = 20000;
					}
	}
	bad += stale_history(h, port);
	(*plays)++;
	bad += body_retransmit(h, port + 1);
	(*plays)++;
	for (int rs = 0; rs < TH_HOOKS; rs++) {
		bad += response_resends(h, (__u16)(port + 2 + rs), (enum th_hook)rs);
		(*plays)++;
	}
	bad += both_ports(h);
	(*plays)++;
	h->keep_flows = 0;
	/* The fixture list and port 80 back in place for the tests that
	 * follow. */
	bad += th_config(h, 0, HS_POLICY_DROP, &port80, 1) != 0;
	bad += th_set_trie(h, 0, pt.fix_trie) != 0;
	free(t);
	return bad;
}
