// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The seed experiment, in C: how long it takes to take the internal fields
 * out of one request, over the 2,000 requests of the corpus
 * (requests.http) and its internal list (internal-headers.txt).
 *
 *   1. original: for each internal name, search the request's parsed field
 *      list and remove every field of that name (list order kept);
 *   2. inverted loop, hash set: for each field, one lookup; keep or drop;
 *   3. inverted loop, gperf (bench/gperf-input.sh, as in bench_lookup);
 *   4. inverted loop, the hdrstrip trie (hs_trie_lookup);
 *   5. hdrstrip's scanner (scan.h) on the raw bytes: parsing the request
 *      line and every field line included, internal lines masked in place,
 *      checksum difference accumulated, as the BPF programs do;
 *   6. a plain parse, then 4: each line's LF and colon found with glibc's
 *      memchr() (parse_fields(), which trusts its input: CRLF line ends,
 *      a colon on every line, nothing a hostile request could bend), then
 *      each name looked up in the trie. What method 4 costs with the
 *      parsing it leaves out;
 *   7. 5 with the head lane first (scan_lane.h): a head of the plain shape
 *      most requests have taken in one pass a word at a time, any other
 *      request scanned as in 5 (the corpus's requests with a
 *      Content-Length, for one).
 *
 * 1-4 start from the fields already parsed (a name and a value per field,
 * pointing into the request's bytes); the parsing is not timed. Every
 * method gets a fresh copy of its input before each timed pass. A pass
 * runs one method over all 2,000 requests; per request is the pass's
 * thread CPU time divided by 2,000. Figures are medians over the passes,
 * ratios medians of the per-pass ratios to method 1. Before any timing
 * every method must agree with method 1 on every request.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "compile.h"
#include "hset.h"

#include <hdrstrip/scan.h>
#include <hdrstrip/scan_lane.h>

/* What the generated gperf table holds: the name and its rule index. */
struct bench_gperf_entry {
	const char *name;
	int rule;
};

/* Static and always_inline first, so the definition inlines into the loop
 * as hs_trie_lookup does (see bench_lookup.c). */
static __always_inline const struct bench_gperf_entry *gp_internal(const char *str, size_t len);

#include "gperf_internal.c"

#define MAX_FIELDS 64

struct field {
	const char *name;
	const char *value;
	__u16 nlen, vlen;
};

struct req {
	const char *raw; /* into the corpus text */
	__u32 len;
	__u32 nf;
	struct field f[MAX_FIELDS];
};

enum method { M_ORIG, M_HASH, M_GPERF, M_TRIE, M_SCAN, M_PARSE, M_LANE, M_MAX };
static const char *const method_tag[M_MAX] = { "original", "hash",    "gperf",
					       "trie",	   "scanner", "parse_trie",
					       "lane" };
static const char *const method_what[M_MAX] = {
	"1. original: per internal name, search the parsed list",
	"2. inverted loop, hash set",
	"3. inverted loop, gperf",
	"4. inverted loop, hdrstrip trie",
	"5. hdrstrip scanner on the raw bytes (parsing included)",
	"6. 4 after a plain parse of the raw bytes (memchr)",
	"7. 5 with the head lane first (scan_lane.h)",
};

struct seed {
	struct hs_list list;
	struct hs_trie *trie;
	struct hset hset;
	struct req *reqs, *work; /* parsed requests, and the copy a pass works on */
	__u32 n_reqs;
	__u8 *raw, *raw_work; /* all requests back to back, and a copy */
	size_t raw_len;
	/* The internal names, lower case, for method 1. */
	const char **names;
	__u16 *name_len;
};

static __always_inline int eq_name(const char *lc, __u32 n, const char *p, __u32 len)
{
	return n == len && eq_lower(lc, p, len);
}

/* Remove field @i, keeping the order of the rest. */
static __always_inline void remove_field(struct req *r, __u32 i)
{
	memmove(&r->f[i], &r->f[i + 1], (r->nf - i - 1) * sizeof(r->f[0]));
	r->nf--;
}

static __attribute__((noinline)) __u32 run_orig(const struct seed *s, struct req *rs, __u32 n)
{
	__u32 removed = 0;

	for (__u32 k = 0; k < n; k++) {
		struct req *r = &rs[k];

		for (__u32 j = 0; j < s->list.n; j++)
			for (__u32 i = 0; i < r->nf;) {
				if (eq_name(s->names[j], s->name_len[j], r->f[i].name, r->f[i].nlen)) {
					remove_field(r, i);
					removed++;
				} else {
					i++;
				}
			}
	}
	return removed;
}

/*
 * The field lines of the request at @r->raw whose empty line starts at
 * @stop, into @r's fields: 0, -1 for a line without a colon, -2 for more
 * than MAX_FIELDS fields, -3 for a line end other than CRLF. Trusts its
 * input otherwise (methods 1-4 and 6).
 */
static __always_inline int parse_fields(struct req *r, const char *stop)
{
	const char *line = memchr(r->raw, '\n', stop - r->raw), *eol;

	r->nf = 0;
	for (line = line ? line + 1 : stop; line < stop + 2; line = eol + 2) {
		const char *colon;
		struct field *fl;

		eol = memchr(line, '\n', stop + 2 - line);
		if (!eol || eol == line || *--eol != '\r')
			return -3;
		colon = memchr(line, ':', eol - line);
		if (!colon)
			return -1;
		if (r->nf == MAX_FIELDS)
			return -2;
		fl = &r->f[r->nf++];
		fl->name = line;
		fl->nlen = colon - line;
		fl->value = colon + 1;
		while (fl->value < eol && *fl->value == ' ')
			fl->value++;
		fl->vlen = eol - fl->value;
	}
	return 0;
}

static __always_inline int is_internal(const struct seed *s, const enum method m,
				       const struct field *f)
{
	switch (m) {
	case M_HASH:
		return hset_lookup(&s->hset, f->name, f->nlen) != 0;
	case M_GPERF:
		return gp_internal(f->name, f->nlen) != NULL;
	default:
		return hs_trie_lookup(s->trie, (const __u8 *)f->name, f->nlen) != 0;
	}
}

/* The inverted loop: each field looked up once, kept fields moved down in
 * place. Inlined into one function per method (@m is a constant there). */
static __always_inline __u32 inverted(const struct seed *s, struct req *rs, __u32 n,
				      const enum method m)
{
	__u32 removed = 0;

	for (__u32 k = 0; k < n; k++) {
		struct req *r = &rs[k];
		__u32 w = 0;

		for (__u32 i = 0; i < r->nf; i++) {
			if (is_internal(s, m, &r->f[i]))
				continue;
			r->f[w++] = r->f[i];
		}
		removed += r->nf - w;
		r->nf = w;
	}
	return removed;
}

static __attribute__((noinline)) __u32 run_hash(const struct seed *s, struct req *rs, __u32 n)
{
	return inverted(s, rs, n, M_HASH);
}

static __attribute__((noinline)) __u32 run_gperf(const struct seed *s, struct req *rs, __u32 n)
{
	return inverted(s, rs, n, M_GPERF);
}

static __attribute__((noinline)) __u32 run_trie(const struct seed *s, struct req *rs, __u32 n)
{
	return inverted(s, rs, n, M_TRIE);
}

/* Method 6: each request parsed (its length known: the corpus's framing),
 * then method 4 on its fields. */
static __attribute__((noinline)) __u32 run_parse_trie(const struct seed *s, struct req *rs, __u32 n)
{
	__u32 removed = 0;

	for (__u32 k = 0; k < n; k++) {
		parse_fields(&rs[k], rs[k].raw + rs[k].len - 4);
		removed += inverted(s, &rs[k], 1, M_TRIE);
	}
	return removed;
}

/* One request's bytes through the scanner, as the BPF programs run it. */
static __always_inline __u32 scan_one(const struct hs_trie *t, __u8 *p, __u32 len)
{
	struct hs_stream st;
	struct hs_scan sc;

	hs_stream_init(&st);
	hs_scan_begin(&sc, &st, 0, len, 0);
	while (hs_scan_step(&sc, t, p, p + len) != HS_STEP_DONE)
		;
	return sc.masked;
}

static __attribute__((noinline)) __u32 run_scan(const struct seed *s, __u8 *raw, const struct req *rs,
						__u32 n)
{
	__u32 masked = 0;

	for (__u32 k = 0; k < n; k++)
		masked += scan_one(s->trie, raw + (rs[k].raw - (const char *)s->raw), rs[k].len);
	return masked;
}

/* Method 7: the lane where it takes the head (a request is its head: the
 * corpus's have no body), else the scanner. @taken: how many it took. */
static __always_inline __u32 lane_one(const struct hs_trie *t, __u8 *p, __u32 len, __u32 *taken)
{
	struct hs_lane L;

	if (hs_lane_head(&L, t, p, p + len, 0, len, 0) && L.head_end == len) {
		(*taken)++;
		return L.masked;
	}
	return scan_one(t, p, len);
}

static __attribute__((noinline)) __u32 run_lane(const struct seed *s, __u8 *raw, const struct req *rs,
						__u32 n)
{
	__u32 masked = 0, taken = 0;

	for (__u32 k = 0; k < n; k++)
		masked += lane_one(s->trie, raw + (rs[k].raw - (const char *)s->raw), rs[k].len,
				   &taken);
	return masked + 0 * taken;
}

static __u32 run(struct seed *s, enum method m)
{
	switch (m) {
	case M_ORIG:
		return run_orig(s, s->work, s->n_reqs);
	case M_HASH:
		return run_hash(s, s->work, s->n_reqs);
	case M_GPERF:
		return run_gperf(s, s->work, s->n_reqs);
	case M_TRIE:
		return run_trie(s, s->work, s->n_reqs);
	case M_PARSE:
		return run_parse_trie(s, s->work, s->n_reqs);
	case M_LANE:
		return run_lane(s, s->raw_work, s->reqs, s->n_reqs);
	default:
		return run_scan(s, s->raw_work, s->reqs, s->n_reqs);
	}
}

/* A fresh input for method @m: the parsed fields or the raw bytes. */
static void reset(struct seed *s, enum method m)
{
	if (m == M_SCAN || m == M_LANE)
		memcpy(s->raw_work, s->raw, s->raw_len);
	else
		memcpy(s->work, s->reqs, s->n_reqs * sizeof(*s->reqs));
}

/* ---- set-up ---------------------------------------------------------------- */

static void load_requests(struct seed *s, const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	__u32 cap = 4096;
	const char *p, *end;

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		die("cannot size '%s'", path);
	s->raw = xcalloc(1, n + 8);
	s->raw_work = xcalloc(1, n + 8);
	if (fread(s->raw, 1, n, f) != (size_t)n)
		die("cannot read '%s'", path);
	fclose(f);
	s->raw_len = n;
	s->reqs = xcalloc(cap, sizeof(*s->reqs));
	p = (const char *)s->raw;
	end = p + n;
	/* The corpus's requests have no bodies and CRLF line ends: a request
	 * runs to its empty line. */
	while (p < end) {
		const char *stop = memmem(p, end - p, "\r\n\r\n", 4);
		struct req *r;

		if (!stop)
			die("'%s': a request without its empty line at byte %ld", path,
			    (long)(p - (const char *)s->raw));
		if (s->n_reqs == cap)
			die("'%s': more than %u requests", path, cap);
		r = &s->reqs[s->n_reqs++];
		r->raw = p;
		r->len = stop + 4 - p;
		switch (parse_fields(r, stop)) {
		case -1:
			die("'%s': request %u: a field line without a colon", path, s->n_reqs);
		case -2:
			die("'%s': request %u has more than %d fields", path, s->n_reqs,
			    MAX_FIELDS);
		case -3:
			die("'%s': request %u: a line end other than CRLF", path, s->n_reqs);
		}
		p = stop + 4;
	}
	s->work = xcalloc(s->n_reqs, sizeof(*s->work));
}

static void setup(struct seed *s, const char *corpus)
{
	struct hs_list_opts lo;
	struct hs_err err;
	char path[4096];

	hs_list_opts_default(&lo);
	lo.warn = warn_list;
	snprintf(path, sizeof(path), "%s/internal-headers.txt", corpus);
	if (hs_list_load(path, &lo, &s->list, &err))
		die("%s", err.msg);
	/* Every method removes every internal field: the scanner's drop rules
	 * would stop at the first one instead, so all rules mask here. */
	for (size_t i = 0; i < s->list.n; i++)
		s->list.names[i].action = HS_ACT_MASK;
	s->trie = xcalloc(1, sizeof(*s->trie));
	if (hs_compile(&s->list, s->trie, NULL, &err))
		die("%s: %s", path, err.msg);
	hset_build(&s->hset, &s->list);
	s->names = xcalloc(s->list.n, sizeof(*s->names));
	s->name_len = xcalloc(s->list.n, sizeof(*s->name_len));
	for (size_t i = 0; i < s->list.n; i++) {
		char *lc = xcalloc(1, s->list.names[i].len + 1);

		for (__u32 k = 0; k < s->list.names[i].len; k++)
			lc[k] = lower(s->list.names[i].orig[k]);
		s->names[i] = lc;
		s->name_len[i] = s->list.names[i].len;
	}
	snprintf(path, sizeof(path), "%s/requests.http", corpus);
	load_requests(s, path);
}

/* Methods 2-4 and 6 must leave the very fields method 1 leaves; the scanner must
 * mask as many lines, and each masked line must be one method 1 removed. */
static __u32 lane_taken;

static void check_agreement(struct seed *s, __u32 *removed_total)
{
	struct req *ref = xcalloc(s->n_reqs, sizeof(*ref));
	__u8 *scanned = xcalloc(s->raw_len, 1);
	__u32 removed[M_MAX];

	reset(s, M_ORIG);
	removed[M_ORIG] = run(s, M_ORIG);
	memcpy(ref, s->work, s->n_reqs * sizeof(*ref));
	for (int m = M_HASH; m <= M_PARSE; m++) {
		if (m == M_SCAN)
			continue; /* below, with method 7 */
		reset(s, m);
		removed[m] = run(s, m);
		for (__u32 k = 0; k < s->n_reqs; k++) {
			const struct req *a = &ref[k], *b = &s->work[k];

			if (a->nf != b->nf || memcmp(a->f, b->f, a->nf * sizeof(a->f[0])))
				die("method %s disagrees with method 1 on request %u", method_tag[m],
				    k + 1);
		}
	}
	for (int m = M_SCAN; m < M_MAX; m++) {
	if (m == M_PARSE)
		continue;
	reset(s, m);
	removed[m] = 0;
	for (__u32 k = 0; k < s->n_reqs; k++) {
		const struct req *r = &s->reqs[k];
		__u8 *p = s->raw_work + (r->raw - (const char *)s->raw);
		__u32 masked = m == M_LANE ? lane_one(s->trie, p, r->len, &lane_taken)
					    : scan_one(s->trie, p, r->len),
		      filler = 0;

		if (masked != r->nf - ref[k].nf)
			die("method %s masked %u lines of request %u, method 1 removed %u", method_tag[m], masked,
			    k + 1, r->nf - ref[k].nf);
		/* Masked lines start with the filler, kept lines as they were. */
		for (__u32 i = 0; i < r->nf; i++) {
			const __u8 *line = p + (r->f[i].name - r->raw);
			int kept = 0;

			for (__u32 j = 0; j < ref[k].nf; j++)
				kept |= ref[k].f[j].name == r->f[i].name;
			if (!kept) {
				/* The filler name cut to the name's length, then ':' */
				__u32 fill = r->f[i].nlen < 10 ? r->f[i].nlen : 10;

				filler += !memcmp(line, s->trie->fill, fill) && line[fill] == ':';
			}
			else if (memcmp(line, r->f[i].name, r->f[i].nlen))
				die("the scanner changed a kept field of request %u", k + 1);
		}
		if (filler != masked)
			die("request %u: %u masked lines start with the filler, %u expected", k + 1,
			    filler, masked);
		removed[m] += masked;
	}
	/* The lane's bytes are the scanner's, every one. */
	if (m == M_SCAN)
		memcpy(scanned, s->raw_work, s->raw_len);
	else if (memcmp(scanned, s->raw_work, s->raw_len))
		die("the lane's bytes differ from the scanner's");
	}
	free(scanned);
	for (int m = 0; m < M_MAX; m++)
		if (removed[m] != removed[M_ORIG])
			die("method %s removed %u fields, method 1 %u", method_tag[m], removed[m],
			    removed[M_ORIG]);
	*removed_total = removed[M_ORIG];
	free(ref);
}

int main(int argc, char **argv)
{
	struct seed s;
	const char *corpus = NULL;
	int reps = 31;
	double *ns, *ratio, med[M_MAX], rmed[M_MAX];
	__u32 removed, fields = 0;
	volatile __u32 sink = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--corpus") && i + 1 < argc)
			corpus = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else
			corpus = NULL, reps = 0, i = argc;
	}
	if (!corpus || reps < 1) {
		fprintf(stderr, "Usage: bench_seed --corpus DIR [--reps N]\n"
				"Per-request time of five ways to take internal fields out of the\n"
				"corpus's 2,000 requests; each figure is the median of N passes (31).\n");
		return 2;
	}
	memset(&s, 0, sizeof(s));
	setup(&s, corpus);
	check_agreement(&s, &removed);
	for (__u32 k = 0; k < s.n_reqs; k++)
		fields += s.reqs[k].nf;

	ns = xcalloc((size_t)reps * M_MAX, sizeof(double));
	ratio = xcalloc(reps, sizeof(double));
	for (int m = 0; m < M_MAX; m++) {
		reset(&s, m);
		sink += run(&s, m); /* warm-up */
	}
	for (int rep = 0; rep < reps; rep++)
		for (int k = 0; k < M_MAX; k++) {
			int m = (k + rep) % M_MAX;
			double t0;

			reset(&s, m);
			t0 = now_ns();
			sink += run(&s, m);
			ns[m * reps + rep] = (now_ns() - t0) / s.n_reqs;
		}
	for (int m = 0; m < M_MAX; m++) {
		for (int rep = 0; rep < reps; rep++)
			ratio[rep] = ns[m * reps + rep] / ns[M_ORIG * reps + rep];
		rmed[m] = median(ratio, reps);
	}
	for (int m = 0; m < M_MAX; m++)
		med[m] = median(&ns[m * reps], reps);

	printf("Seed experiment in C: %u requests, %u fields (%.1f per request), %u internal fields\n"
	       "removed, list of %zu names; ns per request, median of %d passes; ratio to 1\n"
	       "(median of per-pass ratios). All agree on every request; the lane (7) took %u.\n",
	       s.n_reqs, fields, (double)fields / s.n_reqs, removed, s.list.n, reps, lane_taken);
	printf("%-58s %9s %8s\n", "method", "ns/req", "vs 1");
	for (int m = 0; m < M_MAX; m++)
		printf("%-58s %9.1f %7.3fx\n", method_what[m], med[m], rmed[m]);
	printf("The seed's published table: 3650 -> 1530 -> 930 ns per request (userspace).\n");
	for (int m = 0; m < M_MAX; m++) {
		printf("bench: seed_%s_ns %.1f ns\n", method_tag[m], med[m]);
		printf("bench: seed_%s_vs_original %.3f ratio\n", method_tag[m], rmed[m]);
	}
	(void)sink;
	free(ns);
	free(ratio);
	return 0;
}
