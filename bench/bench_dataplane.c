// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Data-plane benchmark: what the hdrstrip programs cost per packet, through
 * BPF_PROG_TEST_RUN on the real object, beside two programs of bench/bpf/
 * run over the same frames: an empty one (what test_run costs around any
 * program) and a floor one (counts the payload's line ends, 8 bytes a step:
 * the least a program that reads every byte does).
 *
 * Two methods, both in one run, programs interleaved:
 *
 *  A. repeat: one test_run call with repeat = 100,000; the kernel reports
 *     its mean time per iteration (whole ns). Every iteration runs on the
 *     same bytes and the same maps, so what hdrstrip does in iterations
 *     2..N is not what it does to a new packet: the bytes it masked stay
 *     masked, and its connection state has moved on. The run is set up so
 *     that every iteration does the same work as an in-order segment: a SYN
 *     first (the connection is tracked), so iterations 2..N are
 *     retransmissions found in a checkpoint (the same scan from the same
 *     state, one flows lookup and one state copy fewer). The lines
 *     iteration 1 masked are kept by the later ones: their name, the
 *     filler's, starts with a byte no listed name starts with, so each is
 *     rejected at its first byte (a miss, as most names are).
 *
 *  B. calls: one test_run call per packet (repeat = 1), each on fresh bytes,
 *     timed by the program's own run time (BPF statistics, run_time_ns; the
 *     kernel reads the clock around the program alone), the median over
 *     the calls. This gives each path exactly: an in-order segment of a
 *     tracked connection ("established": every segment of a connection
 *     whose SYN was seen, its first included), a first segment with no
 *     state ("no state": attached mid-connection or evicted; the test_run
 *     default), and the control packets (SYN, ACK, FIN).
 *
 * Also: --what scaling (cost against header-block size and list size, data
 * files for gnuplot), --what memory (trie and flow-table sizes), --what
 * events (what match events add, by --event-rate and reader) and --what
 * responses (a typical response beside the typical request, method B).
 *
 * The dataplane and scaling figures run with match events off (the
 * config's event_rate 0, as --event-rate 0 sets it); --what events
 * measures them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_util.h"
#include "builder.h"
#include "compile.h"
#include "harness.h"

#include <hdrstrip/scan.h>

#define MSS 1448
#define MAX_SEGS 16
#define HTTP_PORT 80
#define ISN 1000000u
#define SEED_PUBLISHED_NS 930.0 /* the seed's 0.93 us per request, userspace */

enum prog { P_EMPTY, P_FLOOR, P_HS, P_MAX };

/* How hdrstrip's connection state stands when a request's packets come. */
enum hs_state {
	ST_NONE, /* the program keeps none (empty, floor) */
	ST_RETX, /* method A: SYN first, then each segment repeated */
	ST_EST, /* method B: in-order segments of a tracked connection */
	ST_NEW, /* method B: no state for the request's first segment */
};

struct seg {
	__u8 *pkt;
	__u32 len;
	__u32 off; /* of its payload in the request */
	struct pb_layout lay;
};

struct request {
	const char *tag;
	char *text;
	__u32 len;
	__u32 fields, internal; /* what the host scanner found */
	struct seg seg[MAX_SEGS];
	int n_segs;
};

struct bench {
	struct th h; /* the hdrstrip object */
	struct bpf_object *obj[2]; /* empty, floor */
	int fd[P_MAX][TH_HOOKS];
	struct hs_trie *trie; /* the list */
	char fill[11]; /* its filler name (hs_trie.fill) */
	struct seg syn, ack, fin, synack; /* synack: the server's, of a response flow */
	__u32 next_seq; /* of hdrstrip's tracked connection */
	int stats_fd;
	/* options */
	const char *obj_path, *empty_path, *floor_path, *corpus, *lists, *out_dir;
	__u32 repeat;
	int runs, calls;
	int bound; /* --bound: the object scans nothing (HS_BENCH_FLOOR_SCAN) */
};

/* ---- requests ----------------------------------------------------------- */

struct sbuf {
	char *p;
	size_t len, cap;
};

static __attribute__((format(printf, 2, 3))) void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			die("vsnprintf failed");
		if (b->len + n < b->cap)
			break;
		b->cap = 2 * (b->cap + n) + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			die("out of memory");
	}
	b->len += n;
}

/* Deterministic token bytes for header values. */
static __u64 rng = 0x9e3779b97f4a7c15ULL;

static __u64 rnd(void)
{
	__u64 z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void sb_token(struct sbuf *b, size_t n)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789-_";

	for (size_t i = 0; i < n; i++)
		sb_add(b, "%c", set[rnd() % (sizeof(set) - 1)]);
}

/* The typical request's 20 fields; two are internal, or (without) two
 * names of the same lengths that are not. */
static void typical_fields(struct sbuf *b, int internal)
{
	sb_add(b, "Host: shop.example.com\r\n"
		  "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Firefox/128.0\r\n"
		  "Accept: application/json, text/plain, */*\r\n"
		  "Accept-Language: en-US,en;q=0.5\r\n"
		  "Accept-Encoding: gzip, deflate, br, zstd\r\n"
		  "Referer: https://shop.example.com/orders\r\n"
		  "Origin: https://shop.example.com\r\n"
		  "Connection: keep-alive\r\n"
		  "Cookie: session=8f14e45fceea167a5a36dedd4bea2543\r\n"
		  "Sec-Fetch-Dest: empty\r\n"
		  "Sec-Fetch-Mode: cors\r\n"
		  "Sec-Fetch-Site: same-origin\r\n"
		  "Priority: u=4\r\n"
		  "X-Request-Id: 2f6c1e0a93b44d519a7e\r\n"
		  "X-Forwarded-For: 203.0.113.77\r\n"
		  "X-Forwarded-Proto: https\r\n");
	sb_add(b, "%s: svc=checkout;sig=c29tZS1zaWduYXR1cmU\r\n",
	       internal ? "X-Internal-Auth" : "X-Api-Client-Id");
	sb_add(b, "%s: 00-4bf92f3577b34da6a3ce929d0e0e4736-01\r\n",
	       internal ? "X-Internal-Trace" : "X-Correlation-Id");
	sb_add(b, "Cache-Control: no-cache\r\n"
		  "Pragma: no-cache\r\n");
}

static char *req_typical(int internal)
{
	struct sbuf b = { 0 };

	sb_add(&b, "GET /api/v2/orders/58713?include=items HTTP/1.1\r\n");
	typical_fields(&b, internal);
	sb_add(&b, "\r\n");
	return b.p;
}

/* 4 KiB: the typical request's fields, 19 more, and a Cookie that fills it. */
static char *req_4k(void)
{
	struct sbuf b = { 0 };
	size_t fixed;

	sb_add(&b, "GET /api/v2/orders/58713?include=items HTTP/1.1\r\n");
	typical_fields(&b, 1);
	sb_add(&b, "sec-ch-ua: \"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\"\r\n"
		   "sec-ch-ua-mobile: ?0\r\n"
		   "sec-ch-ua-platform: \"Linux\"\r\n"
		   "DNT: 1\r\n"
		   "If-None-Match: W/\"5e1a-1c9a0f3b2d\"\r\n"
		   "If-Modified-Since: Tue, 25 Nov 2026 08:12:45 GMT\r\n"
		   "X-Client-Version: 4.18.2\r\n"
		   "Traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n"
		   "Tracestate: congo=t61rcWkgMzE,rojo=00f067aa0ba902b7\r\n"
		   "Baggage: userId=alice,serverNode=DF%%2028,isProduction=false\r\n"
		   "Forwarded: for=203.0.113.77;proto=https;by=198.51.100.17\r\n"
		   "Via: 1.1 cdn-edge-fra1 (squid/6.10)\r\n"
		   "X-Real-Ip: 203.0.113.77\r\n"
		   "Te: trailers\r\n"
		   "X-Device-Id: ");
	sb_token(&b, 36);
	sb_add(&b, "\r\nX-Csrf-Token: ");
	sb_token(&b, 43);
	sb_add(&b, "\r\nX-Amz-Date: 20261130T004512Z\r\n"
		   "X-Amz-Content-Sha256: ");
	sb_token(&b, 64);
	sb_add(&b, "\r\nAuthorization: Bearer ");
	sb_token(&b, 620);
	sb_add(&b, "\r\n");
	fixed = b.len + strlen("X-Session: \r\n\r\n");
	if (fixed >= 4096)
		die("the 4 KiB request's fixed part is %zu bytes", fixed);
	sb_add(&b, "X-Session: ");
	sb_token(&b, 4096 - fixed);
	sb_add(&b, "\r\n\r\n");
	return b.p;
}

/* N fields: Host, names from a pool of common ones, then X-App-Attr-<i>;
 * the two internal names at a third and two thirds of the block. */
static char *req_fields(int n)
{
	static const char *const pool[] = {
		"User-Agent", "Accept", "Accept-Language", "Accept-Encoding", "Referer",
		"Origin", "Connection", "Cookie", "Sec-Fetch-Dest", "Sec-Fetch-Mode",
		"Sec-Fetch-Site", "Priority", "X-Request-Id", "X-Forwarded-For",
		"X-Forwarded-Proto", "Cache-Control", "Pragma", "sec-ch-ua", "DNT",
		"If-None-Match", "X-Client-Version", "Traceparent", "Tracestate", "Baggage",
		"Forwarded", "Via", "X-Real-Ip", "X-Device-Id", "X-Csrf-Token", "X-Amz-Date",
	};
	struct sbuf b = { 0 };
	int next = 0;

	sb_add(&b, "GET /bench/fields?n=%d HTTP/1.1\r\nHost: shop.example.com\r\n", n);
	for (int i = 1; i < n; i++) {
		if (i == n / 3)
			sb_add(&b, "X-Internal-Auth: ");
		else if (i == 2 * n / 3)
			sb_add(&b, "X-Internal-Trace: ");
		else if (next < (int)HS_ARRAY_SIZE(pool))
			sb_add(&b, "%s: ", pool[next++]);
		else
			sb_add(&b, "X-App-Attr-%d: ", next++);
		sb_token(&b, 8 + rnd() % 40);
		sb_add(&b, "\r\n");
	}
	sb_add(&b, "\r\n");
	return b.p;
}

/* ---- packets ------------------------------------------------------------- */

static void put32be(__u8 *p, __u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* Sequence number and flags, with the TCP checksum made right again. */
static void set_tcp(struct seg *s, __u32 seq, __u8 flags)
{
	__u8 *ip = s->pkt + s->lay.l3_off, *th = s->pkt + s->lay.l4_off, ph[12];
	__u32 tcp_len = s->lay.len - s->lay.l4_off;
	__u16 c;

	put32be(th + 4, seq);
	th[13] = flags;
	th[16] = th[17] = 0;
	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = IPPROTO_TCP;
	ph[10] = tcp_len >> 8;
	ph[11] = tcp_len;
	c = pb_fold(pb_sum(th, tcp_len, pb_sum(ph, sizeof(ph), 0)));
	th[16] = c >> 8;
	th[17] = c;
}

/* Segments of responses (the connection's other direction) when set. */
static int g_reply;

static void build_seg(struct seg *s, const char *payload, __u32 len, __u32 off)
{
	struct pb_spec spec;

	memset(&spec, 0, sizeof(spec));
	spec.dport = HTTP_PORT;
	if (g_reply) {
		spec.sport = HTTP_PORT;
		spec.dport = 40000;
		spec.reply = 1;
	}
	s->pkt = xcalloc(1, PB_MAX_PKT);
	s->len = pb_build(&spec, payload, len, s->pkt, &s->lay);
	s->off = off;
	if (!s->len)
		die("cannot build a packet of %u payload bytes", len);
}

/* The host scanner's view of a request (or, g_reply, a response whose
 * request is known): its fields and internal names. */
static void count_fields(const struct hs_trie *t, struct request *r)
{
	__u8 *copy = xcalloc(1, r->len + 8);
	struct hs_stream st;
	struct hs_scan s;

	memcpy(copy, r->text, r->len);
	hs_stream_init_dir(&st, g_reply ? HS_DIR_RESPONSE : HS_DIR_REQUEST);
	hs_scan_begin(&s, &st, 0, r->len, 0);
	s.peer_known = 1;
	s.peer_n = 1;
	while (hs_scan_step(&s, t, copy, copy + r->len) != HS_STEP_DONE)
		;
	r->fields = s.seen;
	r->internal = s.matched;
	free(copy);
}

static void make_request(struct request *r, const char *tag, char *text,
			 const struct hs_trie *t)
{
	r->tag = tag;
	r->text = text;
	r->len = strlen(text);
	r->n_segs = 0;
	for (__u32 off = 0; off < r->len; off += MSS) {
		__u32 n = r->len - off < MSS ? r->len - off : MSS;

		if (r->n_segs == MAX_SEGS)
			die("request '%s' needs more than %d segments", tag, MAX_SEGS);
		build_seg(&r->seg[r->n_segs++], text + off, n, off);
	}
	count_fields(t, r);
}

static void free_request(struct request *r)
{
	for (int i = 0; i < r->n_segs; i++)
		free(r->seg[i].pkt);
	free(r->text);
}

/* ---- running programs ---------------------------------------------------- */

/* Method A: the kernel's mean ns per iteration over @repeat iterations. */
static double run_repeat(int fd, const struct seg *s, __u32 repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = s->pkt, .data_size_in = s->len,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &o))
		die("BPF_PROG_TEST_RUN (repeat %u): %s", repeat, strerror(errno));
	return o.duration;
}

static void run_once(int fd, const struct seg *s)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = s->pkt, .data_size_in = s->len, .repeat = 1);

	if (bpf_prog_test_run_opts(fd, &o))
		die("BPF_PROG_TEST_RUN: %s", strerror(errno));
}

static __u64 run_time(int fd, __u64 *cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		die("cannot read a program's info: %s", strerror(errno));
	*cnt = info.run_cnt;
	return info.run_time_ns;
}

/* Method B: the program's own run time for one packet. */
static double call_once(int fd, const struct seg *s)
{
	__u64 c0, c1, t0 = run_time(fd, &c0), t1;

	run_once(fd, s);
	t1 = run_time(fd, &c1);
	if (c1 != c0 + 1)
		die("the program ran %llu times for one call: is it attached somewhere?",
		    (unsigned long long)(c1 - c0));
	return (double)(t1 - t0);
}

static void set_config(struct bench *b, __u32 slot)
{
	struct hs_config cfg;
	__u32 key = 0;

	/* The loader's defaults: --on-error drop, --untracked scan, port 80. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.active_slot = slot;
	cfg.on_error = HS_POLICY_DROP;
	cfg.untracked = HS_POLICY_SCAN;
	cfg.ports[HTTP_PORT / 64] |= 1ULL << (HTTP_PORT % 64);
	if (bpf_map_update_elem(b->h.config_fd, &key, &cfg, BPF_ANY))
		die("cannot write the config: %s", strerror(errno));
}

/* A tracked connection, from its SYN; the next segment is ISN + 1. */
static void open_flow(struct bench *b, enum th_hook hook)
{
	th_forget_flows(&b->h);
	set_tcp(&b->syn, ISN, 0x02);
	run_once(b->fd[P_HS][hook], &b->syn);
	b->next_seq = ISN + 1;
}

/* The request's segments from sequence number @seq on (PSH ACK). */
static void place_request(struct request *r, __u32 seq)
{
	for (int i = 0; i < r->n_segs; i++)
		set_tcp(&r->seg[i], seq + r->seg[i].off, 0x18);
}

/* Method A for one request: the sum over its segments. */
static double measure_repeat(struct bench *b, enum prog p, enum th_hook hook, struct request *r)
{
	double sum = 0;

	if (p == P_HS) {
		open_flow(b, hook);
		place_request(r, b->next_seq);
	}
	for (int i = 0; i < r->n_segs; i++)
		sum += run_repeat(b->fd[p][hook], &r->seg[i], b->repeat);
	return sum;
}

/*
 * Method B for one request, @calls times: per segment the median of its
 * calls, summed over the segments. For ST_EST the connection goes on from
 * request to request; ST_NEW forgets it before each request.
 */
static double measure_calls(struct bench *b, enum prog p, enum th_hook hook, struct request *r,
			    enum hs_state st, int calls)
{
	double *v = xcalloc((size_t)calls * r->n_segs, sizeof(double)), sum = 0;
	int fd = b->fd[p][hook];

	if (st == ST_EST)
		open_flow(b, hook);
	for (int c = 0; c < calls; c++) {
		if (st == ST_NEW)
			th_forget_flows(&b->h);
		place_request(r, b->next_seq);
		for (int i = 0; i < r->n_segs; i++)
			v[(size_t)i * calls + c] = call_once(fd, &r->seg[i]);
		if (st == ST_EST)
			b->next_seq += r->len;
	}
	for (int i = 0; i < r->n_segs; i++)
		sum += median(&v[(size_t)i * calls], calls);
	free(v);
	return sum;
}

enum ctl { CTL_SYN, CTL_ACK, CTL_FIN, CTL_MAX };
static const char *const ctl_name[CTL_MAX] = { "syn", "ack", "fin" };

/* Method B for a control packet: SYN of a new connection (inserts its
 * state), a pure ACK of a tracked one, FIN of a tracked one (deletes it). */
static double measure_ctl(struct bench *b, enum prog p, enum th_hook hook, enum ctl k, int calls)
{
	double *v = xcalloc(calls, sizeof(double)), m;
	int fd = b->fd[p][hook];

	for (int c = 0; c < calls; c++) {
		if (k == CTL_SYN) {
			th_forget_flows(&b->h);
			set_tcp(&b->syn, ISN, 0x02);
			v[c] = call_once(fd, &b->syn);
		} else if (k == CTL_ACK) {
			if (!c)
				open_flow(b, hook);
			set_tcp(&b->ack, b->next_seq, 0x10);
			v[c] = call_once(fd, &b->ack);
		} else {
			open_flow(b, hook);
			set_tcp(&b->fin, b->next_seq, 0x11);
			v[c] = call_once(fd, &b->fin);
		}
	}
	m = median(v, calls);
	free(v);
	return m;
}

/* ---- checks --------------------------------------------------------------- */

/* How many times @needle occurs in @p[0, n), ASCII case ignored. */
static int count_ci(const __u8 *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	int c = 0;

	for (size_t i = 0; i + k <= n; i++)
		c += !strncasecmp((const char *)p + i, needle, k);
	return c;
}

/*
 * hdrstrip must do to the benchmark's packets what it does for real: every
 * internal line masked, the right counters moved. One established pass
 * over the request, output checked.
 */
static void check_request(struct bench *b, enum th_hook hook, struct request *r)
{
	struct hs_counters c0, c1;
	__u8 *out = xcalloc(1, PB_MAX_PKT);
	int found = 0;

	open_flow(b, hook);
	place_request(r, b->next_seq);
	if (th_counters(&b->h, &c0))
		die("cannot read the counters");
	for (int i = 0; i < r->n_segs; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = r->seg[i].pkt,
			    .data_size_in = r->seg[i].len, .data_out = out,
			    .data_size_out = PB_MAX_PKT, .repeat = 1);

		if (bpf_prog_test_run_opts(b->fd[P_HS][hook], &o))
			die("BPF_PROG_TEST_RUN: %s", strerror(errno));
		if (o.retval != (hook == TH_XDP ? XDP_PASS : (__u32)-1))
			die("%s %s: segment %d: verdict %u", th_hook_name[hook], r->tag, i,
			    o.retval);
		if (b->bound)
			continue;
		if (count_ci(out, o.data_size_out, "x-internal"))
			die("%s %s: segment %d left with an internal name", th_hook_name[hook],
			    r->tag, i);
		found += count_ci(out, o.data_size_out, b->fill);
	}
	if (th_counters(&b->h, &c1))
		die("cannot read the counters");
	if (b->bound) {
		free(out);
		return;
	}
	if (c1.http_requests - c0.http_requests != 1 ||
	    c1.headers_masked - c0.headers_masked != r->internal ||
	    c1.headers_seen - c0.headers_seen != r->fields || c1.untracked != c0.untracked ||
	    (__u32)found != r->internal)
		die("%s %s: requests %llu, seen %llu (want %u), masked %llu (want %u), filler lines %d",
		    th_hook_name[hook], r->tag,
		    (unsigned long long)(c1.http_requests - c0.http_requests),
		    (unsigned long long)(c1.headers_seen - c0.headers_seen), r->fields,
		    (unsigned long long)(c1.headers_masked - c0.headers_masked), r->internal,
		    found);
	free(out);
}

/* ---- set-up --------------------------------------------------------------- */

static struct hs_trie *compile_text(const char *text, const char *what,
				    struct hs_trie_stats *stats)
{
	struct hs_trie *t = xcalloc(1, sizeof(*t));
	struct hs_list_opts lo;
	struct hs_list l;
	struct hs_err err;

	hs_list_opts_default(&lo);
	lo.warn = warn_list;
	if (hs_list_parse(text, strlen(text), what, &lo, &l, &err))
		die("%s", err.msg);
	if (hs_compile(&l, t, stats, &err))
		die("%s: %s", what, err.msg);
	hs_list_free(&l);
	return t;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct sbuf b = { 0 };
	char chunk[4096];
	size_t n;

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	sb_add(&b, "%s", "");
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sb_add(&b, "%.*s", (int)n, chunk);
	fclose(f);
	return b.p;
}

static struct hs_trie *compile_file(const char *path, const char *extra,
				    struct hs_trie_stats *stats)
{
	char *text = slurp(path);
	struct sbuf b = { 0 };
	struct hs_trie *t;

	sb_add(&b, "%s\n%s", text, extra ? extra : "");
	t = compile_text(b.p, path, stats);
	free(text);
	free(b.p);
	return t;
}

static int prog_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	if (!p)
		die("no program '%s'", name);
	return bpf_program__fd(p);
}

static struct bpf_object *load_obj(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);

	if (libbpf_get_error(obj))
		die("cannot open '%s'", path);
	if (bpf_object__load(obj))
		die("cannot load '%s': %s", path, strerror(errno));
	return obj;
}

static void setup(struct bench *b)
{
	char path[4096];

	b->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (b->stats_fd < 0)
		die("cannot enable BPF run-time statistics: %s (root?)", strerror(errno));
	if (th_open(&b->h, b->obj_path, "hdrstrip"))
		die("cannot load '%s'", b->obj_path);
	b->obj[0] = load_obj(b->empty_path);
	b->obj[1] = load_obj(b->floor_path);
	b->fd[P_HS][TH_XDP] = b->h.prog_fd[TH_XDP];
	b->fd[P_HS][TH_TC] = b->h.prog_fd[TH_TC];
	b->fd[P_EMPTY][TH_XDP] = prog_fd(b->obj[0], "empty_xdp");
	b->fd[P_EMPTY][TH_TC] = prog_fd(b->obj[0], "empty_tc");
	b->fd[P_FLOOR][TH_XDP] = prog_fd(b->obj[1], "floor_xdp");
	b->fd[P_FLOOR][TH_TC] = prog_fd(b->obj[1], "floor_tc");
	b->h.keep_flows = 1;

	snprintf(path, sizeof(path), "%s/internal-headers.txt", b->corpus);
	b->trie = compile_file(path, NULL, NULL);
	memcpy(b->fill, b->trie->fill, 10);
	b->fill[10] = 0;
	if (th_set_trie(&b->h, 0, b->trie))
		die("cannot write the trie map");
	set_config(b, 0);
	build_seg(&b->syn, "", 0, 0);
	build_seg(&b->ack, "", 0, 0);
	build_seg(&b->fin, "", 0, 0);
	g_reply = 1;
	build_seg(&b->synack, "", 0, 0);
	g_reply = 0;
}

/* ---- the data-plane table ------------------------------------------------ */

enum col { A_EMPTY, A_FLOOR, A_HS, B_EMPTY, B_FLOOR, B_EST, B_NEW, N_COLS };
static const char *const col_name[N_COLS] = { "repeat_empty", "repeat_floor", "repeat_hdrstrip",
					      "calls_empty",  "calls_floor",  "calls_established",
					      "calls_nostate" };

#define N_CASES 3

struct dp_result {
	double ns[N_COLS];
	double ratio_a, ratio_est, ratio_new; /* medians of per-run ratios to the floor */
	double net_a, net_est; /* the same after taking the empty program off both */
};

static double measure_col(struct bench *b, enum col c, enum th_hook hook, struct request *r)
{
	switch (c) {
	case A_EMPTY:
		return measure_repeat(b, P_EMPTY, hook, r);
	case A_FLOOR:
		return measure_repeat(b, P_FLOOR, hook, r);
	case A_HS:
		return measure_repeat(b, P_HS, hook, r);
	case B_EMPTY:
		return measure_calls(b, P_EMPTY, hook, r, ST_NONE, b->calls);
	case B_FLOOR:
		return measure_calls(b, P_FLOOR, hook, r, ST_NONE, b->calls);
	case B_EST:
		return measure_calls(b, P_HS, hook, r, ST_EST, b->calls);
	default:
		return measure_calls(b, P_HS, hook, r, ST_NEW, b->calls);
	}
}

static void run_dataplane(struct bench *b)
{
	struct request req[N_CASES];
	struct dp_result res[TH_HOOKS][N_CASES];
	double ctl[TH_HOOKS][CTL_MAX][2];
	double *s = xcalloc((size_t)TH_HOOKS * N_CASES * N_COLS * b->runs, sizeof(double));
	double *rt = xcalloc((size_t)b->runs * 5, sizeof(double));
#define S(hk, cs, cl, run) s[(((size_t)(hk) * N_CASES + (cs)) * N_COLS + (cl)) * b->runs + (run)]

	make_request(&req[0], "typical", req_typical(1), b->trie);
	make_request(&req[1], "nointernal", req_typical(0), b->trie);
	make_request(&req[2], "4k", req_4k(), b->trie);
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int cs = 0; cs < N_CASES; cs++)
			check_request(b, hk, &req[cs]);
	printf("Requests (checked: each hook masks every internal line, counters agree):\n");
	for (int cs = 0; cs < N_CASES; cs++)
		printf("  %-10s %5u bytes, %2u fields, %u internal, %d segment(s) of at most %d bytes\n",
		       req[cs].tag, req[cs].len, req[cs].fields, req[cs].internal, req[cs].n_segs,
		       MSS);

	/* Warm-up, then the runs; each run rotates the order of the columns. */
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int cs = 0; cs < N_CASES; cs++)
			for (int c = 0; c < N_COLS; c++)
				measure_col(b, c, hk, &req[cs]);
	for (int run = 0; run < b->runs; run++)
		for (int hk = 0; hk < TH_HOOKS; hk++)
			for (int cs = 0; cs < N_CASES; cs++)
				for (int k = 0; k < N_COLS; k++) {
					int c = (k + run) % N_COLS;

					S(hk, cs, c, run) = measure_col(b, c, hk, &req[cs]);
				}
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int cs = 0; cs < N_CASES; cs++) {
			struct dp_result *d = &res[hk][cs];

			for (int run = 0; run < b->runs; run++) {
				rt[run] = S(hk, cs, A_HS, run) / S(hk, cs, A_FLOOR, run);
				rt[b->runs + run] = S(hk, cs, B_EST, run) / S(hk, cs, B_FLOOR, run);
				rt[2 * b->runs + run] = S(hk, cs, B_NEW, run) / S(hk, cs, B_FLOOR, run);
				rt[3 * b->runs + run] =
					(S(hk, cs, A_HS, run) - S(hk, cs, A_EMPTY, run)) /
					(S(hk, cs, A_FLOOR, run) - S(hk, cs, A_EMPTY, run));
				rt[4 * b->runs + run] =
					(S(hk, cs, B_EST, run) - S(hk, cs, B_EMPTY, run)) /
					(S(hk, cs, B_FLOOR, run) - S(hk, cs, B_EMPTY, run));
			}
			d->ratio_a = median(rt, b->runs);
			d->ratio_est = median(rt + b->runs, b->runs);
			d->ratio_new = median(rt + 2 * b->runs, b->runs);
			d->net_a = median(rt + 3 * b->runs, b->runs);
			d->net_est = median(rt + 4 * b->runs, b->runs);
			for (int c = 0; c < N_COLS; c++)
				d->ns[c] = median(&S(hk, cs, c, 0), b->runs);
		}
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int k = 0; k < CTL_MAX; k++) {
			ctl[hk][k][0] = measure_ctl(b, P_EMPTY, hk, k, b->calls);
			ctl[hk][k][1] = measure_ctl(b, P_HS, hk, k, b->calls);
		}

	printf("\nA. BPF_PROG_TEST_RUN repeat=%u: kernel's mean ns per iteration, median of %d runs\n"
	       "   (per request: the 4k request is the sum of its 3 segments)\n",
	       b->repeat, b->runs);
	printf("%-4s %-10s %8s %8s %9s %9s %12s\n", "hook", "request", "empty", "floor",
	       "hdrstrip", "hs/floor", "net hs/floor");
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int cs = 0; cs < N_CASES; cs++) {
			const struct dp_result *d = &res[hk][cs];

			printf("%-4s %-10s %8.1f %8.1f %9.1f %8.2fx %11.2fx\n", th_hook_name[hk],
			       req[cs].tag, d->ns[A_EMPTY], d->ns[A_FLOOR], d->ns[A_HS], d->ratio_a,
			       d->net_a);
		}
	printf("\nB. %d calls x %d runs, repeat=1, the program's own run time (BPF stats), median ns\n"
	       "   per packet (summed over the 4k request's segments), median of the runs\n",
	       b->calls, b->runs);
	printf("%-4s %-10s %8s %8s %9s %9s %10s %10s %12s\n", "hook", "request", "empty", "floor",
	       "hs est.", "hs new", "est/floor", "new/floor", "net est/fl.");
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int cs = 0; cs < N_CASES; cs++) {
			const struct dp_result *d = &res[hk][cs];

			printf("%-4s %-10s %8.1f %8.1f %9.1f %9.1f %9.2fx %9.2fx %11.2fx\n",
			       th_hook_name[hk], req[cs].tag, d->ns[B_EMPTY], d->ns[B_FLOOR],
			       d->ns[B_EST], d->ns[B_NEW], d->ratio_est, d->ratio_new, d->net_est);
		}
	printf("\nControl packets (method B, median ns): program / empty program\n");
	for (int hk = 0; hk < TH_HOOKS; hk++)
		printf("%-4s SYN (new state) %6.1f / %5.1f   ACK %6.1f / %5.1f   FIN (state closed) %6.1f / %5.1f\n",
		       th_hook_name[hk], ctl[hk][CTL_SYN][1], ctl[hk][CTL_SYN][0],
		       ctl[hk][CTL_ACK][1], ctl[hk][CTL_ACK][0], ctl[hk][CTL_FIN][1],
		       ctl[hk][CTL_FIN][0]);
	printf("\nFor context: the seed's published %.0f ns per request (userspace, headers already parsed).\n",
	       SEED_PUBLISHED_NS);
	printf("Verifier: processed insns xdp %u, tc %u\n", b->h.processed[TH_XDP],
	       b->h.processed[TH_TC]);

	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int cs = 0; cs < N_CASES; cs++) {
			const struct dp_result *d = &res[hk][cs];
			const char *h = th_hook_name[hk], *r = req[cs].tag;

			for (int c = 0; c < N_COLS; c++)
				printf("bench: dp_%s_%s_%s %.1f ns\n", h, r, col_name[c], d->ns[c]);
			printf("bench: dp_%s_%s_repeat_vs_floor %.3f ratio\n", h, r, d->ratio_a);
			printf("bench: dp_%s_%s_repeat_net_vs_floor %.3f ratio\n", h, r, d->net_a);
			printf("bench: dp_%s_%s_established_vs_floor %.3f ratio\n", h, r, d->ratio_est);
			printf("bench: dp_%s_%s_established_net_vs_floor %.3f ratio\n", h, r,
			       d->net_est);
			printf("bench: dp_%s_%s_nostate_vs_floor %.3f ratio\n", h, r, d->ratio_new);
		}
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int k = 0; k < CTL_MAX; k++) {
			printf("bench: dp_%s_%s_calls_hdrstrip %.1f ns\n", th_hook_name[hk],
			       ctl_name[k], ctl[hk][k][1]);
			printf("bench: dp_%s_%s_calls_empty %.1f ns\n", th_hook_name[hk], ctl_name[k],
			       ctl[hk][k][0]);
		}
	printf("bench: seed_published_per_request %.0f ns\n", SEED_PUBLISHED_NS);
	printf("bench: verifier_insns_xdp %u insns\n", b->h.processed[TH_XDP]);
	printf("bench: verifier_insns_tc %u insns\n", b->h.processed[TH_TC]);
	for (int cs = 0; cs < N_CASES; cs++)
		free_request(&req[cs]);
	free(rt);
	free(s);
#undef S
}

/* ---- scaling ---------------------------------------------------------------- */

static FILE *open_dat(const struct bench *b, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", b->out_dir, name);
	f = fopen(path, "w");
	if (!f)
		die("cannot write '%s': %s", path, strerror(errno));
	return f;
}

/* Steps the host scanner takes over the request, and those in NAME (the
 * bytes of a name it walks the trie with): what the cost follows. */
static void count_steps(const struct hs_trie *t, const struct request *r, __u32 *steps,
			__u32 *name_steps)
{
	__u8 *copy = xcalloc(1, r->len + 8);
	struct hs_stream st;
	struct hs_scan s;

	memcpy(copy, r->text, r->len);
	hs_stream_init(&st);
	hs_scan_begin(&s, &st, 0, r->len, 0);
	*steps = *name_steps = 0;
	for (;;) {
		int in_name = s.st.phase == HS_PH_NAME;

		if (hs_scan_step(&s, t, copy, copy + r->len) == HS_STEP_DONE)
			break;
		(*steps)++;
		*name_steps += in_name;
	}
	free(copy);
}

/* One point of a scaling curve: a request and the trie it runs with. */
struct point {
	struct request req;
	struct hs_trie *trie;
	double hs[TH_HOOKS][64], fl[TH_HOOKS][64]; /* per run */
	double hs_med[TH_HOOKS], fl_med[TH_HOOKS], ratio[TH_HOOKS];
	__u32 steps, name_steps;
};

/*
 * Method B (established) for every point, the points taking turns within
 * each run (rotated from run to run), so that a slow spell of the machine
 * hits all of them; ratios to the floor are medians of per-run ratios.
 */
static void measure_points(struct bench *b, struct point *pt, int n)
{
	double tmp[64];

	for (int i = 0; i < n; i++) {
		if (th_set_trie(&b->h, 0, pt[i].trie))
			die("cannot write the trie map");
		check_request(b, TH_XDP, &pt[i].req);
		check_request(b, TH_TC, &pt[i].req);
		count_steps(pt[i].trie, &pt[i].req, &pt[i].steps, &pt[i].name_steps);
	}
	for (int run = 0; run < b->runs; run++)
		for (int k = 0; k < n; k++) {
			struct point *q = &pt[(k + run) % n];

			if (th_set_trie(&b->h, 0, q->trie))
				die("cannot write the trie map");
			for (int hk = 0; hk < TH_HOOKS; hk++) {
				q->hs[hk][run] = measure_calls(b, P_HS, hk, &q->req, ST_EST, b->calls);
				q->fl[hk][run] =
					measure_calls(b, P_FLOOR, hk, &q->req, ST_NONE, b->calls);
			}
		}
	for (int i = 0; i < n; i++)
		for (int hk = 0; hk < TH_HOOKS; hk++) {
			for (int run = 0; run < b->runs; run++)
				tmp[run] = pt[i].hs[hk][run] / pt[i].fl[hk][run];
			pt[i].ratio[hk] = median(tmp, b->runs);
			pt[i].hs_med[hk] = median(pt[i].hs[hk], b->runs);
			pt[i].fl_med[hk] = median(pt[i].fl[hk], b->runs);
		}
	if (th_set_trie(&b->h, 0, b->trie))
		die("cannot write the trie map");
}

/*
 * Per request and per packet against the number of fields (10, 30, 100,
 * 500) and the list size (10, 100, 1,000 names), with data files for
 * bench/plot-scaling.gp.
 */
static void run_scaling(struct bench *b)
{
	static const int fields[] = { 10, 30, 100, 500 };
	static const int list_sizes[] = { 10, 100, 1000 };
	const int nf = HS_ARRAY_SIZE(fields), nl = HS_ARRAY_SIZE(list_sizes);
	struct point *pf = xcalloc(nf, sizeof(*pf)), *pl = xcalloc(nl, sizeof(*pl));
	struct hs_trie_stats ts[3];
	char path[4096];
	FILE *f;

	if (b->runs > 64)
		die("--runs: at most 64 for the scaling runs");
	for (int i = 0; i < nf; i++) {
		make_request(&pf[i].req, "fields", req_fields(fields[i]), b->trie);
		pf[i].trie = b->trie;
	}
	for (int i = 0; i < nl; i++) {
		snprintf(path, sizeof(path), "%s/names-%d.txt", b->lists, list_sizes[i]);
		pl[i].trie = compile_file(path, NULL, &ts[i]);
		make_request(&pl[i].req, "typical", req_typical(1), pl[i].trie);
	}
	measure_points(b, pf, nf);
	measure_points(b, pl, nl);

	printf("Scaling (method B, established connection, %d calls x %d runs per point, points\n"
	       "interleaved within each run; ratio: median of per-run ratios to the floor)\n",
	       b->calls, b->runs);
	printf("Against the header-block size (list: %s/internal-headers.txt, 100 names); requests\n"
	       "longer than one %d-byte segment are cut at %d bytes, as TCP would, and run as\n"
	       "consecutive segments of one connection: per request is the sum, per packet the mean.\n",
	       b->corpus, MSS, MSS);
	printf("%-6s %6s %4s %6s %5s | %-27s | %-27s\n", "fields", "bytes", "segs", "steps",
	       "name", "xdp: hs / floor ns (x)", "tc: hs / floor ns (x)");
	f = open_dat(b, "scaling-fields.dat");
	fprintf(f, "# fields bytes segments xdp_hs xdp_floor xdp_ratio tc_hs tc_floor tc_ratio (ns per request)\n");
	for (int i = 0; i < nf; i++) {
		const struct point *q = &pf[i];

		printf("%6d %6u %4d %6u %5u | %9.1f / %7.1f (%5.2fx) | %9.1f / %7.1f (%5.2fx)\n",
		       fields[i], q->req.len, q->req.n_segs, q->steps, q->name_steps,
		       q->hs_med[TH_XDP], q->fl_med[TH_XDP], q->ratio[TH_XDP], q->hs_med[TH_TC],
		       q->fl_med[TH_TC], q->ratio[TH_TC]);
		fprintf(f, "%d %u %d %.1f %.1f %.3f %.1f %.1f %.3f\n", fields[i], q->req.len,
			q->req.n_segs, q->hs_med[TH_XDP], q->fl_med[TH_XDP], q->ratio[TH_XDP],
			q->hs_med[TH_TC], q->fl_med[TH_TC], q->ratio[TH_TC]);
	}
	fclose(f);
	for (int i = 0; i < nf; i++)
		for (int hk = 0; hk < TH_HOOKS; hk++) {
			const struct point *q = &pf[i];
			const char *h = th_hook_name[hk];

			printf("bench: scale_fields%d_%s_hdrstrip %.1f ns\n", fields[i], h, q->hs_med[hk]);
			printf("bench: scale_fields%d_%s_floor %.1f ns\n", fields[i], h, q->fl_med[hk]);
			printf("bench: scale_fields%d_%s_hdrstrip_per_packet %.1f ns\n", fields[i], h,
			       q->hs_med[hk] / q->req.n_segs);
			printf("bench: scale_fields%d_%s_vs_floor %.3f ratio\n", fields[i], h,
			       q->ratio[hk]);
		}

	printf("\nAgainst the list size (the typical request; lists from bench/gen-lists.sh)\n");
	printf("%-6s %6s %6s %6s %5s | %-27s | %-27s\n", "names", "nodes", "bytes", "steps", "name",
	       "xdp: hs / floor ns (x)", "tc: hs / floor ns (x)");
	f = open_dat(b, "scaling-list.dat");
	fprintf(f, "# names nodes trie_bytes xdp_hs xdp_floor xdp_ratio tc_hs tc_floor tc_ratio (ns per packet)\n");
	for (int i = 0; i < nl; i++) {
		const struct point *q = &pl[i];

		printf("%6u %6u %6u %6u %5u | %9.1f / %7.1f (%5.2fx) | %9.1f / %7.1f (%5.2fx)\n",
		       ts[i].names, ts[i].nodes, ts[i].bytes, q->steps, q->name_steps,
		       q->hs_med[TH_XDP], q->fl_med[TH_XDP], q->ratio[TH_XDP], q->hs_med[TH_TC],
		       q->fl_med[TH_TC], q->ratio[TH_TC]);
		fprintf(f, "%u %u %u %.1f %.1f %.3f %.1f %.1f %.3f\n", ts[i].names, ts[i].nodes,
			ts[i].bytes, q->hs_med[TH_XDP], q->fl_med[TH_XDP], q->ratio[TH_XDP],
			q->hs_med[TH_TC], q->fl_med[TH_TC], q->ratio[TH_TC]);
	}
	fclose(f);
	for (int i = 0; i < nl; i++)
		for (int hk = 0; hk < TH_HOOKS; hk++) {
			const struct point *q = &pl[i];
			const char *h = th_hook_name[hk];

			printf("bench: scale_list%d_%s_hdrstrip %.1f ns\n", list_sizes[i], h,
			       q->hs_med[hk]);
			printf("bench: scale_list%d_%s_floor %.1f ns\n", list_sizes[i], h, q->fl_med[hk]);
			printf("bench: scale_list%d_%s_vs_floor %.3f ratio\n", list_sizes[i], h,
			       q->ratio[hk]);
			printf("bench: scale_list%d_name_steps %u steps\n", list_sizes[i],
			       q->name_steps);
		}
	for (int i = 0; i < nf; i++)
		free_request(&pf[i].req);
	for (int i = 0; i < nl; i++) {
		free_request(&pl[i].req);
		free(pl[i].trie);
	}
	free(pf);
	free(pl);
}

/* ---- memory ---------------------------------------------------------------- */

/* "memlock:" of a map fd: the kernel's own count of the map's memory. */
static long long fd_memlock(int fd)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		die("cannot open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static long long meminfo_kb(const char *key)
{
	char line[256], k[64];
	long long v, r = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("cannot open /proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63[^:]: %lld", k, &v) == 2 && !strcmp(k, key))
			r = v;
	fclose(f);
	return r;
}

static int flows_map(__u32 entries)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "bench_flows", sizeof(struct hs_flow_key),
				sizeof(struct hs_flow), entries, NULL);

	if (fd < 0)
		die("cannot create a flows map of %u entries: %s", entries, strerror(errno));
	return fd;
}

static void run_memory(struct bench *b)
{
	static const int list_sizes[] = { 10, 100, 1000 };
	const __u32 small = HS_FLOWS_DEFAULT, big = 1u << 20;
	double d[7];
	long long ml_small, ml_big, trie_ml;
	char path[4096];
	int fd;

	printf("Memory\n");
	trie_ml = fd_memlock(b->h.trie_fd);
	printf("  trie map: %d slots x %zu bytes (struct hs_trie, fixed) = %zu bytes; memlock %lld bytes\n",
	       HS_TRIE_SLOTS, sizeof(struct hs_trie), HS_TRIE_SLOTS * sizeof(struct hs_trie),
	       trie_ml);
	printf("bench: mem_trie_value %zu bytes\n", sizeof(struct hs_trie));
	printf("bench: mem_trie_map_memlock %lld bytes\n", trie_ml);
	for (size_t i = 0; i < HS_ARRAY_SIZE(list_sizes); i++) {
		struct hs_trie_stats st;
		struct hs_trie *t;

		snprintf(path, sizeof(path), "%s/names-%d.txt", b->lists, list_sizes[i]);
		t = compile_file(path, NULL, &st);
		printf("  %4u names: %6u bytes of the block used (%u nodes, %u label bytes) = %.1f bytes per name\n",
		       st.names, st.bytes, st.nodes, st.label_bytes, (double)st.bytes / st.names);
		printf("bench: mem_trie_used_%d %u bytes\n", list_sizes[i], st.bytes);
		printf("bench: mem_trie_used_per_name_%d %.1f bytes\n", list_sizes[i],
		       (double)st.bytes / st.names);
		free(t);
	}

	fd = flows_map(small);
	ml_small = fd_memlock(fd);
	close(fd);
	fd = flows_map(big);
	ml_big = fd_memlock(fd);
	close(fd);
	/* What the kernel really allocates: MemAvailable before and after a
	 * big map is made (preallocated: LRU maps allocate every entry at
	 * creation), median of several tries. */
	for (int i = 0; i < 7; i++) {
		long long m0, m1;

		usleep(200000);
		m0 = meminfo_kb("MemAvailable");
		fd = flows_map(big);
		m1 = meminfo_kb("MemAvailable");
		close(fd);
		d[i] = (double)(m0 - m1) * 1024 / big;
	}
	printf("  flows map (LRU hash, key %zu + value %zu bytes): memlock %lld bytes for %u entries, %lld for %u:\n"
	       "    %.1f bytes per entry (memlock slope); MemAvailable drop for %u entries: %.1f bytes per entry (median of 7)\n"
	       "    the default --flows %u preallocates %.1f MiB per hook, connections or not\n",
	       sizeof(struct hs_flow_key), sizeof(struct hs_flow), ml_small, small, ml_big, big,
	       (double)(ml_big - ml_small) / (big - small), big, median(d, 7), small,
	       ml_small / 1048576.0);
	printf("bench: mem_flow_entry_memlock %.1f bytes\n", (double)(ml_big - ml_small) / (big - small));
	printf("bench: mem_flow_entry_meminfo %.1f bytes\n", median(d, 7));
	printf("bench: mem_flows_default_memlock %lld bytes\n", ml_small);
}

/* ---- events ---------------------------------------------------------------- */

/*
 * What match events cost (--what events): the typical request, whose two
 * internal fields are each a match and so an event, on an established
 * connection (method B: one call per packet on fresh bytes, the program's
 * own run time), with the events configured five ways, taking turns
 * within each run:
 *
 *   off        --event-rate 0: no event, no bucket
 *   full       the default 2000/s (each CPU's bucket its share, rounded
 *              up), the ring buffer full and nobody reading it: a match
 *              takes a token when the bucket has one, then fails to reserve
 *   read       the default, with a reader draining the ring buffer as
 *              'hdrstrip events --follow' does (ring_buffer__poll, another
 *              thread)
 *   all_full   every match passes the bucket (a rate no --event-rate
 *              gives: the bucket never empties), ring full: each match is
 *              a token and a failed reserve
 *   all_read   every match passes the bucket, the reader draining: each
 *              match is written (reserve, copy, submit, and the reader's
 *              wake-ups)
 *   all_batch  the same, but the reader reads what is there every
 *              millisecond (ring_buffer__consume) instead of waiting on
 *              the ring buffer: it is seldom caught up, so a submit seldom
 *              has to wake it
 *
 * The default's bucket starts full: its first tokens (its share of a
 * second) go to the first matches of each turn, the rest find it empty,
 * as under a flood. So the medians give the steady cost per packet and
 * the means what the tokens add on top.
 */
enum ev_variant { EV_OFF, EV_FULL, EV_READ, EV_ALL_FULL, EV_ALL_READ, EV_ALL_BATCH, EV_MAX };
static const char *const ev_name[EV_MAX] = { "off",	 "full",     "read",
					     "all_full", "all_read", "all_batch" };
#define EV_UNLIMITED 4000000000u /* each CPU's rate: tokens for any match rate */

struct ev_reader {
	struct ring_buffer *rb;
	pthread_t thread;
	volatile int stop;
	int batch; /* read every millisecond, not when woken */
	volatile __u64 got;
};

static int ev_count(void *ctx, void *data, size_t size)
{
	struct ev_reader *r = ctx;

	(void)data;
	(void)size;
	r->got++;
	return 0;
}

static void *ev_read_loop(void *arg)
{
	struct ev_reader *r = arg;

	while (!r->stop) {
		if (r->batch) {
			usleep(1000);
			ring_buffer__consume(r->rb);
		} else {
			ring_buffer__poll(r->rb, 20);
		}
	}
	ring_buffer__consume(r->rb);
	return NULL;
}

static void ev_reader_start(struct ev_reader *r)
{
	r->stop = 0;
	if (pthread_create(&r->thread, NULL, ev_read_loop, r))
		die("cannot start the reader thread");
}

static void ev_reader_stop(struct ev_reader *r)
{
	r->stop = 1;
	pthread_join(r->thread, NULL);
}

/* The config's event fields: @rate a second for the device, @cpu_rate
 * each CPU's (what the programs read). */
static void set_events(struct bench *b, __u32 rate, __u32 cpu_rate)
{
	struct hs_config cfg;
	__u32 key = 0;

	if (bpf_map_lookup_elem(b->h.config_fd, &key, &cfg))
		die("cannot read the config: %s", strerror(errno));
	cfg.event_rate = rate;
	cfg.event_cpu_rate = cpu_rate;
	if (bpf_map_update_elem(b->h.config_fd, &key, &cfg, BPF_ANY))
		die("cannot write the config: %s", strerror(errno));
}

/* Fill the ring buffer (nobody reading): requests until events are lost. */
static void ev_fill(struct bench *b, enum th_hook hook, struct request *r)
{
	struct hs_counters c0, c1;

	set_events(b, HS_EVENT_RATE_MAX, EV_UNLIMITED);
	open_flow(b, hook);
	for (int i = 0; i < 100000; i++) {
		if (th_counters(&b->h, &c0))
			die("cannot read the counters");
		place_request(r, b->next_seq);
		for (int k = 0; k < r->n_segs; k++)
			run_once(b->fd[P_HS][hook], &r->seg[k]);
		b->next_seq += r->len;
		if (th_counters(&b->h, &c1))
			die("cannot read the counters");
		if (c1.events_dropped > c0.events_dropped)
			return;
	}
	die("the ring buffer did not fill");
}

/* One turn of @v: @calls requests; their per-call times (the sum over the
 * request's segments) go to @v_out. */
static void ev_turn(struct bench *b, enum ev_variant v, enum th_hook hook, struct request *r,
		    struct ev_reader *rd, double *v_out, __u64 *events, __u64 *dropped)
{
	__u32 cpu_rate = (HS_EVENT_RATE_DEFAULT + b->h.ncpus - 1) / b->h.ncpus;
	int reading = v == EV_READ || v == EV_ALL_READ || v == EV_ALL_BATCH;
	struct hs_counters c0, c1;

	if (v == EV_FULL || v == EV_ALL_FULL)
		ev_fill(b, hook, r);
	if (v == EV_OFF)
		set_events(b, 0, 0);
	else if (v == EV_ALL_FULL || v == EV_ALL_READ || v == EV_ALL_BATCH)
		set_events(b, HS_EVENT_RATE_MAX, EV_UNLIMITED);
	else
		set_events(b, HS_EVENT_RATE_DEFAULT, cpu_rate);
	if (reading) {
		rd->batch = v == EV_ALL_BATCH;
		ev_reader_start(rd);
		usleep(50000); /* it drains what a 'full' turn left */
	}
	open_flow(b, hook);
	if (th_counters(&b->h, &c0))
		die("cannot read the counters");
	for (int c = 0; c < b->calls; c++) {
		place_request(r, b->next_seq);
		v_out[c] = 0;
		for (int i = 0; i < r->n_segs; i++)
			v_out[c] += call_once(b->fd[P_HS][hook], &r->seg[i]);
		b->next_seq += r->len;
	}
	if (th_counters(&b->h, &c1))
		die("cannot read the counters");
	if (reading)
		ev_reader_stop(rd);
	*events += c1.events - c0.events;
	*dropped += c1.events_dropped - c0.events_dropped;
	if (c1.headers_masked - c0.headers_masked != (__u64)b->calls * r->internal)
		die("events %s: %llu lines masked, want %llu", ev_name[v],
		    (unsigned long long)(c1.headers_masked - c0.headers_masked),
		    (unsigned long long)b->calls * r->internal);
}

static double mean(const double *v, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += v[i];
	return s / n;
}

static void run_events(struct bench *b)
{
	struct request req;
	struct ev_reader rd = { 0 };
	double *med = xcalloc((size_t)TH_HOOKS * EV_MAX * b->runs, sizeof(double));
	double *avg = xcalloc((size_t)TH_HOOKS * EV_MAX * b->runs, sizeof(double));
	double *v = xcalloc(b->calls, sizeof(double)), tmp[64];
	__u64 events[TH_HOOKS][EV_MAX] = { 0 }, dropped[TH_HOOKS][EV_MAX] = { 0 };
	double m[TH_HOOKS][EV_MAX], a[TH_HOOKS][EV_MAX], ratio[TH_HOOKS][EV_MAX];
	struct bpf_map *map = bpf_object__find_map_by_name(b->h.obj, "events");
#define EVS(arr, hk, ev, run) arr[((size_t)(hk) * EV_MAX + (ev)) * b->runs + (run)]

	if (b->runs > 64)
		die("--runs: at most 64 for the events runs");
	if (!map)
		die("no map 'events' in '%s': an object without match events", b->obj_path);
	rd.rb = ring_buffer__new(bpf_map__fd(map), ev_count, &rd, NULL);
	if (!rd.rb)
		die("cannot open the events ring buffer: %s", strerror(errno));
	make_request(&req, "typical", req_typical(1), b->trie);
	if (req.internal != 2)
		die("the typical request matches %u fields of the list, not 2", req.internal);
	for (int hk = 0; hk < TH_HOOKS; hk++)
		check_request(b, hk, &req);
	for (int run = 0; run < b->runs; run++)
		for (int hk = 0; hk < TH_HOOKS; hk++)
			for (int k = 0; k < EV_MAX; k++) {
				enum ev_variant e = (k + run) % EV_MAX;

				ev_turn(b, e, hk, &req, &rd, v, &events[hk][e], &dropped[hk][e]);
				EVS(avg, hk, e, run) = mean(v, b->calls);
				EVS(med, hk, e, run) = median(v, b->calls);
			}
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int e = 0; e < EV_MAX; e++) {
			for (int run = 0; run < b->runs; run++)
				tmp[run] = EVS(med, hk, e, run) / EVS(med, hk, EV_OFF, run);
			ratio[hk][e] = median(tmp, b->runs);
			m[hk][e] = median(&EVS(med, hk, e, 0), b->runs);
			a[hk][e] = median(&EVS(avg, hk, e, 0), b->runs);
		}

	printf("Match events (the typical request, %u bytes, %u fields of which %u match: %u events\n"
	       "a request; method B, established connection, %d calls x %d runs per variant,\n"
	       "variants interleaved within each run; %d CPUs, default rate %u/s = %u/s per CPU)\n",
	       req.len, req.fields, req.internal, req.internal, b->calls, b->runs, b->h.ncpus,
	       HS_EVENT_RATE_DEFAULT, (HS_EVENT_RATE_DEFAULT + b->h.ncpus - 1) / b->h.ncpus);
	printf("%-5s %-9s %9s %9s %9s %12s %12s\n", "hook", "variant", "median", "mean", "x off",
	       "events", "ev dropped");
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int e = 0; e < EV_MAX; e++)
			printf("%-5s %-9s %9.1f %9.1f %9.3f %12llu %12llu\n", th_hook_name[hk],
			       ev_name[e], m[hk][e], a[hk][e], ratio[hk][e],
			       (unsigned long long)events[hk][e], (unsigned long long)dropped[hk][e]);
	printf("(ns per request = per packet: one segment; events / ev dropped: the counters over\n"
	       "all runs; the reader read %llu events)\n",
	       (unsigned long long)rd.got);
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int e = 0; e < EV_MAX; e++) {
			const char *h = th_hook_name[hk];

			printf("bench: ev_%s_%s_median %.1f ns\n", h, ev_name[e], m[hk][e]);
			printf("bench: ev_%s_%s_mean %.1f ns\n", h, ev_name[e], a[hk][e]);
			printf("bench: ev_%s_%s_vs_off %.3f ratio\n", h, ev_name[e], ratio[hk][e]);
		}
	set_events(b, 0, 0);
	ring_buffer__free(rd.rb);
	free_request(&req);
	free(v);
	free(med);
	free(avg);
#undef EVS
}

/* ---- main ---------------------------------------------------------------- */

/* ---- responses (--what responses) --------------------------------------- */

/* A typical response: a status line and 16 fields, two of them internal to
 * the origin (response rules), no body (Content-Length: 0), so that the
 * next one follows on the connection. */
static char *resp_typical(void)
{
	struct sbuf b = { 0 };

	sb_add(&b, "HTTP/1.1 200 OK\r\n"
		   "Date: Wed, 02 Dec 2026 08:00:00 GMT\r\n"
		   "Content-Type: application/json; charset=utf-8\r\n"
		   "Content-Length: 0\r\n"
		   "Connection: keep-alive\r\n"
		   "Cache-Control: private, max-age=0\r\n"
		   "ETag: W/\"5f3a-18c9e2b7d41\"\r\n"
		   "Vary: Accept-Encoding, Origin\r\n"
		   "Server: nginx\r\n"
		   "X-Backend-Server: app-17.dc2.internal:8080\r\n"
		   "Strict-Transport-Security: max-age=63072000\r\n"
		   "X-Content-Type-Options: nosniff\r\n"
		   "X-Powered-By: Express\r\n"
		   "Access-Control-Allow-Origin: https://shop.example.com\r\n"
		   "X-Request-Id: 2f6c1e0a93b44d519a7e\r\n"
		   "Set-Cookie: session=8f14e45fceea167a5a36dedd4bea2543; Path=/; Secure\r\n"
		   "Referrer-Policy: strict-origin-when-cross-origin\r\n"
		   "\r\n");
	return b.p;
}

/*
 * Method B, established, for the typical request and the typical response
 * on one list (the corpus list and two response rules): each response's
 * request is known (the methods map says so before each call, as the
 * request hook would have), so it is framed as on an origin's host.
 */
static void run_responses(struct bench *b)
{
	struct hs_trie *t, *old = b->trie;
	struct request rq, rs;
	struct hs_flow_key k;
	struct hs_peer peer;
	char path[4096];
	/* By what: the request with the corpus list alone, the request and the
	 * response with the response rules added; floor, hdrstrip, ratio. */
	double ns[TH_HOOKS][3][3];
	static const char *const what_name[3] = { "request", "request", "response" };
	static const char *const list_name[3] = { "corpus list", "+ response rules",
						  "+ response rules" };
	double *v = xcalloc((size_t)b->runs * 3, sizeof(double));
	int mfd = bpf_object__find_map_fd_by_name(b->h.obj, HS_MAP_METHODS);

	if (mfd < 0)
		die("no methods map");
	snprintf(path, sizeof(path), "%s/internal-headers.txt", b->corpus);
	t = compile_file(path, "x-backend-server response\nx-powered-by response\n", NULL);
	if (th_set_trie(&b->h, 0, t))
		die("cannot write the trie map");
	make_request(&rq, "typical", req_typical(1), t);
	g_reply = 1;
	make_request(&rs, "response", resp_typical(), t);
	g_reply = 0;
	if (rs.internal != 2 || rq.internal != 2)
		die("the typical request and response match %u and %u fields, not 2 and 2",
		    rq.internal, rs.internal);
	/* The methods map's key: the request direction's tuple. */
	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.saddr[0] = htonl(0x0a000001);
	k.daddr[0] = htonl(0x0a000002);
	k.sport = htons(40000);
	k.dport = htons(HTTP_PORT);
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int what = 0; what < 3; what++) {
			struct request *r = what == 2 ? &rs : &rq;
			int which = what == 2;

			if (th_set_trie(&b->h, 0, what ? t : old))
				die("cannot write the trie map");
			for (int run = 0; run < b->runs; run++) {
				double *f = xcalloc((size_t)b->calls, sizeof(double));
				double *h = xcalloc((size_t)b->calls, sizeof(double));
				int fd = b->fd[P_HS][hk];

				th_forget_flows(&b->h);
				set_tcp(which ? &b->synack : &b->syn, ISN, which ? 0x12 : 0x02);
				run_once(fd, which ? &b->synack : &b->syn);
				for (int c = 0; c < b->calls; c++) {
					__u32 seq = ISN + 1 + (__u32)c * r->len;

					if (which) {
						memset(&peer, 0, sizeof(peer));
						peer.n = (__u16)(c + 1);
						if (bpf_map_update_elem(mfd, &k, &peer, BPF_ANY))
							die("cannot write the methods map");
					}
					place_request(r, seq);
					f[c] = call_once(b->fd[P_FLOOR][hk], &r->seg[0]);
					h[c] = call_once(fd, &r->seg[0]);
				}
				v[run] = median(f, b->calls);
				v[b->runs + run] = median(h, b->calls);
				v[2 * b->runs + run] = v[b->runs + run] / v[run];
				free(f);
				free(h);
			}
			for (int i = 0; i < 3; i++)
				ns[hk][what][i] = median(v + (size_t)i * b->runs, b->runs);
		}
	printf("\nResponses beside requests (method B, established, %d calls x %d runs, median ns\n"
	       "per message; list: the corpus list and 2 response rules)\n",
	       b->calls, b->runs);
	printf("  typical request  %4u bytes, %2u fields, %u internal\n", rq.len, rq.fields,
	       rq.internal);
	printf("  typical response %4u bytes, %2u fields, %u internal\n", rs.len, rs.fields,
	       rs.internal);
	printf("%-4s %-9s %-17s %8s %9s %9s %12s\n", "hook", "message", "list", "floor",
	       "hdrstrip", "hs/floor", "ns per field");
	for (int hk = 0; hk < TH_HOOKS; hk++)
		for (int what = 0; what < 3; what++) {
			const struct request *r = what == 2 ? &rs : &rq;

			printf("%-4s %-9s %-17s %8.1f %9.1f %8.2fx %12.1f\n", th_hook_name[hk],
			       what_name[what], list_name[what], ns[hk][what][0], ns[hk][what][1],
			       ns[hk][what][2], ns[hk][what][1] / r->fields);
			printf("bench: resp_%s_%s%s_hdrstrip %.1f ns\n", th_hook_name[hk],
			       what_name[what], what == 1 ? "_with_response_rules" : "",
			       ns[hk][what][1]);
		}
	free(v);
	free_request(&rq);
	free_request(&rs);
	if (th_set_trie(&b->h, 0, old))
		die("cannot write the trie map");
	free(t);
}

static void usage(void)
{
	fprintf(stderr,
		"Usage: bench_dataplane --obj HDRSTRIP.bpf.o --empty EMPTY.bpf.o --floor FLOOR.bpf.o\n"
		"                       --corpus DIR [--lists DIR] [--out DIR] [--what LIST]\n"
		"                       [--repeat N] [--runs N] [--calls N]\n"
		"\n"
		"ns per packet of hdrstrip's XDP and TC programs through BPF_PROG_TEST_RUN (root).\n"
		"  --what LIST   dataplane,scaling,memory,events,responses (default: dataplane,memory)\n"
		"  --lists DIR   names-{10,100,1000}.txt (bench/gen-lists.sh), for scaling and memory\n"
		"  --out DIR     where scaling writes its .dat files\n"
		"  --repeat N    method A: iterations per test_run call (default 100000)\n"
		"  --runs N      runs; each figure is the median over them (default 7)\n"
		"  --calls N     method B: calls per packet and run (default 3000)\n"
		"  --bound 1     HDRSTRIP.bpf.o is the lower-bound build (hdrstrip_floorscan.bpf.o:\n"
		"                the floor's loop in place of the scanner): its output is not checked\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct bench b = { .repeat = 100000, .runs = 7, .calls = 3000 };
	const char *what = "dataplane,memory";

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(a, "--obj"))
			b.obj_path = v;
		else if (!strcmp(a, "--empty"))
			b.empty_path = v;
		else if (!strcmp(a, "--floor"))
			b.floor_path = v;
		else if (!strcmp(a, "--corpus"))
			b.corpus = v;
		else if (!strcmp(a, "--lists"))
			b.lists = v;
		else if (!strcmp(a, "--out"))
			b.out_dir = v;
		else if (!strcmp(a, "--what"))
			what = v;
		else if (!strcmp(a, "--repeat"))
			b.repeat = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--runs"))
			b.runs = atoi(v);
		else if (!strcmp(a, "--calls"))
			b.calls = atoi(v);
		else if (!strcmp(a, "--bound"))
			b.bound = atoi(v);
		else
			usage();
		i++;
	}
	if (!b.obj_path || !b.empty_path || !b.floor_path || !b.corpus || b.runs < 1 ||
	    b.calls < 1 || b.repeat < 1)
		usage();
	if ((strstr(what, "scaling") || strstr(what, "memory")) && !b.lists)
		usage();
	if (strstr(what, "scaling") && !b.out_dir)
		usage();
	if (geteuid() != 0) {
		fprintf(stderr, "bench_dataplane: needs root (BPF_PROG_TEST_RUN, BPF statistics); skipped\n");
		return 77;
	}
	setup(&b);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strstr(what, "dataplane"))
		run_dataplane(&b);
	if (strstr(what, "scaling"))
		run_scaling(&b);
	if (strstr(what, "memory"))
		run_memory(&b);
	if (strstr(what, "events"))
		run_events(&b);
	if (strstr(what, "responses"))
		run_responses(&b);
	th_close(&b.h);
	bpf_object__close(b.obj[0]);
	bpf_object__close(b.obj[1]);
	close(b.stats_fd);
	return 0;
}
