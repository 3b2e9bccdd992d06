// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Stream cost of the datapath, through BPF_PROG_TEST_RUN on the real object
 * (both hooks), with the corpus list:
 *
 *  - ns per segment (test_run's own duration, repeat N, median of K runs)
 *    of a typical ~700-byte corpus request in one segment and cut in three,
 *    and of the continuation segment in the middle; per byte of header;
 *  - the flow state per new connection: a SYN, then the first segment of
 *    a new flow, against the same request on an existing flow (repeat 1 on
 *    distinct 4-tuples, median of the durations).
 *
 * With repeat, test_run runs the program N times on one packet: the first
 * run is the in-order segment (its checkpoint recorded), the others are
 * retransmissions rescanned from that checkpoint (the same scan from the
 * same state, plus the checkpoint search, without the state save), and see
 * the bytes the first run masked. Every figure here is measured that way,
 * the one-segment baseline included.
 *
 *   bench_stream --corpus DIR [--repeat N] [--runs K] [--conns N]
 * Prints "bench: NAME VALUE UNIT" lines and a table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "builder.h"
#include "compile.h"
#include "harness.h"
#include "hlist.h"

#define ISN 1000u
#define SYN 0x02

static const __u16 port80 = 80;

struct opts {
	const char *corpus;
	unsigned int repeat, runs, conns;
};

static int load_list(struct th *h, const char *text)
{
	static struct hs_trie t;
	struct hs_list_opts o;
	struct hs_list l;
	struct hs_err err;
	int r;

	hs_list_opts_default(&o);
	r = hs_list_parse(text, strlen(text), "internal-headers.txt", &o, &l, &err);
	if (!r) {
		r = hs_compile(&l, &t, NULL, &err);
		hs_list_free(&l);
	}
	if (r) {
		fprintf(stderr, "bench_stream: %s\n", err.msg);
		return r;
	}
	return th_set_trie(h, 0, &t);
}

/* The corpus request nearest 700 bytes that has a field to mask and no
 * Content-Length (no body, no conflict): a plain header block. */
static const char *typical_request(const char *reqs, size_t *len, unsigned int *index)
{
	const char *best = NULL, *p = reqs;
	size_t best_d = (size_t)-1;
	unsigned int i = 0;

	while (*p) {
		const char *e = strstr(p, "\r\n\r\n");
		size_t n = e ? (size_t)(e - p) + 4 : strlen(p), d = n > 700 ? n - 700 : 700 - n;
		char *copy = strndup(p, n), *c;
		int cl = 0, internal = 0;

		for (c = copy; *c; c++)
			*c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
		cl = strstr(copy, "\ncontent-length") != NULL;
		internal = strstr(copy, "\ncdn-") || strstr(copy, "\nx-internal") ||
			   strstr(copy, "\nx-edge");
		free(copy);
		if (!cl && internal && d < best_d) {
			best = p;
			best_d = d;
			*len = n;
			*index = i;
		}
		p += n;
		i++;
	}
	return best;
}

/* One test_run of @n payload bytes at @seq from source port @sport; returns
 * test_run's duration (ns per run) or 0 on failure. */
static __u32 run(struct th *h, enum th_hook hook, __u16 sport, __u32 seq, __u8 flags,
		 const char *payload, size_t n, unsigned int repeat)
{
	static __u8 pkt[PB_MAX_PKT], out[2 * PB_MAX_PKT];
	struct pb_spec spec = { .sport = sport, .seq = seq, .seq_set = 1, .tcp_flags = flags };
	struct pb_layout lay;
	size_t len = pb_build(&spec, payload, n, pkt, &lay);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = (__u32)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = repeat);

	if (!len || bpf_prog_test_run_opts(h->prog_fd[hook], &o)) {
		fprintf(stderr, "bench_stream: test_run failed: %s\n", strerror(errno));
		return 0;
	}
	return o.duration ? o.duration : 1;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static __u32 median(__u32 *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u32);
	return v[n / 2];
}

/*
 * ns of segment @k of @req cut at @cuts (n_cuts + 1 segments), on a flow
 * that saw the SYN and the segments before it: median of @o->runs runs of
 * @o->repeat.
 */
static __u32 segment_ns(struct th *h, enum th_hook hook, const char *req, size_t len,
			const size_t *cuts, size_t n_cuts, size_t k, const struct opts *o)
{
	__u32 v[64];
	unsigned int r;
	size_t j;

	for (r = 0; r < o->runs && r < 64; r++) {
		size_t start = 0;

		th_forget_flows(h);
		run(h, hook, 40000, ISN, SYN, "", 0, 1);
		for (j = 0; j <= k; j++) {
			size_t end = j < n_cuts ? cuts[j] : len;

			v[r] = run(h, hook, 40000, ISN + 1 + (__u32)start, 0, req + start,
				   end - start, j == k ? o->repeat : 1);
			start = end;
		}
	}
	return median(v, r);
}

static void line(const char *hook, const char *name, double v, const char *unit)
{
	printf("bench: stream_%s_%s %.*f %s\n", hook, name, v < 10 ? 3 : 1, v, unit);
}

static int bench_hook(struct th *h, enum th_hook hook, const char *req, size_t len,
		      const struct opts *o, double *ratio)
{
	const char *hn = th_hook_name[hook];
	size_t cuts[2] = { len / 3, 2 * len / 3 }, i;
	__u32 one, seg[3], *syn, *first, *again, *nosyn;
	double split;
	unsigned int c;

	one = segment_ns(h, hook, req, len, NULL, 0, 0, o);
	for (i = 0; i < 3; i++)
		seg[i] = segment_ns(h, hook, req, len, cuts, 2, i, o);
	split = (double)seg[0] + seg[1] + seg[2];
	*ratio = split / one;

	/* Per connection: distinct 4-tuples, repeat 1, kernel-measured. */
	syn = calloc(o->conns, sizeof(*syn));
	first = calloc(o->conns, sizeof(*first));
	again = calloc(o->conns, sizeof(*again));
	nosyn = calloc(o->conns, sizeof(*nosyn));
	if (!syn || !first || !again || !nosyn)
		return -ENOMEM;
	th_forget_flows(h);
	for (c = 0; c < o->conns; c++) {
		__u16 sport = (__u16)(1024 + c % 30000);

		if (c % 30000 == 0)
			th_forget_flows(h);
		syn[c] = run(h, hook, sport, ISN, SYN, "", 0, 1);
		first[c] = run(h, hook, sport, ISN + 1, 0, req, len, 1);
		again[c] = run(h, hook, sport, ISN + 1 + (__u32)len, 0, req, len, 1);
	}
	/* No SYN seen (attached mid-connection, or evicted): the flow is
	 * created by the first segment itself. */
	th_forget_flows(h);
	for (c = 0; c < o->conns; c++) {
		if (c % 30000 == 0)
			th_forget_flows(h);
		nosyn[c] = run(h, hook, (__u16)(1024 + c % 30000), ISN + 1, 0, req, len, 1);
	}
	th_forget_flows(h);

	line(hn, "one_segment_ns", one, "ns");
	line(hn, "split3_seg1_ns", seg[0], "ns");
	line(hn, "split3_continuation_ns", seg[1], "ns");
	line(hn, "split3_seg3_ns", seg[2], "ns");
	line(hn, "split3_total_ns", split, "ns");
	line(hn, "one_segment_ns_per_byte", (double)one / len, "ns/B");
	line(hn, "split3_ns_per_byte", split / len, "ns/B");
	line(hn, "split3_vs_one_segment", *ratio, "x");
	{
		__u32 ms = median(syn, o->conns), mf = median(first, o->conns);
		__u32 ma = median(again, o->conns), mn = median(nosyn, o->conns);

		line(hn, "syn_ns", ms, "ns");
		line(hn, "first_segment_new_flow_ns", mf, "ns");
		line(hn, "segment_existing_flow_ns", ma, "ns");
		line(hn, "first_segment_no_syn_ns", mn, "ns");
		line(hn, "per_new_connection_ns", (double)ms + mf - ma, "ns");
		printf("\n  %-4s %-42s %10s\n", hn, "what", "ns");
		printf("  %-4s %-42s %10u\n", hn, "request in one segment", one);
		printf("  %-4s %-42s %10u\n", hn, "segment 1 of 3 (request line, fields)", seg[0]);
		printf("  %-4s %-42s %10u\n", hn, "segment 2 of 3 (continuation)", seg[1]);
		printf("  %-4s %-42s %10u\n", hn, "segment 3 of 3 (fields, block end)", seg[2]);
		printf("  %-4s %-42s %10.0f  (%.2fx one segment)\n", hn, "three segments in all",
		       split, *ratio);
		printf("  %-4s %-42s %10u\n", hn, "SYN (flow created)", ms);
		printf("  %-4s %-42s %10u\n", hn, "first segment of a new flow", mf);
		printf("  %-4s %-42s %10u\n", hn, "same request, existing flow", ma);
		printf("  %-4s %-42s %10u\n", hn, "first segment, no SYN seen", mn);
		printf("  %-4s %-42s %10.0f\n\n", hn, "per new connection (SYN + first - existing)",
		       (double)ms + mf - ma);
	}
	free(syn);
	free(first);
	free(again);
	free(nosyn);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .repeat = 100000, .runs = 7, .conns = 20000 };
	char *reqs, *list;
	size_t rlen;
	const char *req;
	unsigned int idx = 0;
	double ratio[TH_HOOKS];
	size_t len = 0;
	struct th h;
	int i, hook;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--corpus") && i + 1 < argc)
			o.corpus = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			o.repeat = (unsigned int)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			o.runs = (unsigned int)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--conns") && i + 1 < argc)
			o.conns = (unsigned int)strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr,
				"usage: %s --corpus DIR [--repeat N] [--runs K] [--conns N]\n",
				argv[0]);
			return 2;
		}
	}
	if (!o.corpus || !o.repeat || !o.runs || !o.conns) {
		fprintf(stderr, "usage: %s --corpus DIR [--repeat N] [--runs K] [--conns N]\n",
			argv[0]);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench_stream: skipped: BPF_PROG_TEST_RUN needs root\n");
		return 77;
	}
	reqs = th_slurp(o.corpus, "requests.http", &rlen);
	list = th_slurp(o.corpus, "internal-headers.txt", &rlen);
	if (!reqs || !list) {
		fprintf(stderr, "bench_stream: cannot read the corpus in %s\n", o.corpus);
		return 1;
	}
	req = typical_request(reqs, &len, &idx);
	if (!req || th_open(&h, NULL, "bench") || th_config(&h, 0, HS_POLICY_DROP, &port80, 1) ||
	    load_list(&h, list))
		return 1;
	printf("stream bench: corpus request %u (%zu bytes), cut at %zu and %zu; repeat %u, median "
	       "of %u runs; %u connections\n",
	       idx, len, len / 3, 2 * len / 3, o.repeat, o.runs, o.conns);
	for (hook = 0; hook < TH_HOOKS; hook++)
		if (bench_hook(&h, (enum th_hook)hook, req, len, &o, &ratio[hook]))
			return 1;
	th_close(&h);
	for (hook = 0; hook < TH_HOOKS; hook++)
		printf("stream bench: %s, three segments cost %.2fx one segment per byte of header "
		       "(target <= 1.3x): %s\n",
		       th_hook_name[hook], ratio[hook], ratio[hook] <= 1.3 ? "met" : "NOT met");
	free(reqs);
	free(list);
	return 0;
}
