// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Header-name lookup benchmark: ns per lookup of the hdrstrip trie
 * (hs_trie_lookup) against a gperf perfect hash of the same list and a plain
 * open-addressing hash set, over the corpus's lookup files.
 *
 * All three run in one process, interleaved in every repetition, so machine
 * noise hits them alike; each figure is the median of the repetitions,
 * timed in thread CPU time. The
 * lookup functions are inlined into one loop per method, and a compiler
 * barrier on every result keeps any lookup from being folded away.
 *
 * With --callgrind the program instead runs each (method, file) pair once
 * under callgrind's client requests, one dump per pair, and
 * bench/callgrind-lookup.sh turns the dumps into instructions per lookup.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/callgrind.h>

#include "bench_util.h"
#include "compile.h"
#include "hset.h"

/* What the generated gperf tables hold: the name and its rule index. */
struct bench_gperf_entry {
	const char *name;
	int rule;
};

/*
 * gperf emits external functions; declaring them static and always_inline
 * first (the definitions then inherit internal linkage) lets the compiler
 * inline them into the timing loop just as hs_trie_lookup is, so the
 * comparison is of lookups, not of call overhead.
 */
static __always_inline const struct bench_gperf_entry *gp_118(const char *str, size_t len);
static __always_inline const struct bench_gperf_entry *gp_internal(const char *str, size_t len);

#include "gperf_118.c"
#include "gperf_internal.c"

#define LOOKUP_FILES 4
static const int miss_rates[LOOKUP_FILES] = { 0, 50, 90, 100 };

enum method { M_TRIE, M_GPERF, M_HASH, M_LOOP, M_MAX };
static const char *const method_names[M_MAX] = { "trie", "gperf", "hash", "loop" };
/* Methods that are timed; M_LOOP (the bare loop) only shows under callgrind. */
#define M_TIMED M_LOOP

/* Names to look up, in file order, in one arena. */
struct names {
	char *arena;
	__u32 *off;
	__u32 *len;
	__u32 n;
};

typedef const struct bench_gperf_entry *(*gperf_fn)(const char *str, size_t len);

struct bench_set {
	const char *tag; /* suffix of the metric names */
	const char *list_file;
	const char *lookup_prefix; /* lookups-<prefix>miss<N>.txt */
	gperf_fn gperf;
	struct hs_list list;
	struct hs_trie *trie;
	struct hs_trie_stats stats;
	struct hset hset;
	struct names lookups[LOOKUP_FILES];
	double ns[M_TIMED][LOOKUP_FILES]; /* median ns per lookup */
	/* Median over repetitions of the ratio to gperf within a repetition:
	 * the two runs are adjacent in time, so slow spells of a shared
	 * machine cancel out of the ratio. */
	double vs_gperf[M_TIMED][LOOKUP_FILES];
};

static struct bench_set sets[] = {
	{ .tag = "118", .list_file = "bench-headers-118.txt", .lookup_prefix = "118-", .gperf = gp_118 },
	{ .tag = "internal", .list_file = "internal-headers.txt", .lookup_prefix = "",
	  .gperf = gp_internal },
};
#define N_SETS (sizeof(sets) / sizeof(sets[0]))

struct bench_opts {
	const char *corpus;
	int reps;
	int passes;
	int callgrind;
};

/*
 * Compiler barriers. opaque() hides where a name pointer came from, so no
 * lookup can be merged with one of an earlier pass; keep() makes the result
 * count, so no lookup can be dropped. Neither clobbers memory: the loop's
 * own loads stay free to be hoisted, as they would be in real code.
 */
static __always_inline const char *opaque(const char *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

static __always_inline void keep(__u32 *v)
{
	__asm__ volatile("" : "+r"(*v));
}

static void load_names(const char *path, struct names *nm)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 20, used = 0, n_cap = 16384, k;
	char line[512];

	if (!f)
		die("cannot open '%s': %s", path, strerror(errno));
	nm->arena = xcalloc(cap, 1);
	nm->off = xcalloc(n_cap, sizeof(*nm->off));
	nm->len = xcalloc(n_cap, sizeof(*nm->len));
	nm->n = 0;
	while (fgets(line, sizeof(line), f)) {
		k = strcspn(line, "\r\n");
		if (!k)
			continue;
		if (nm->n == n_cap || used + k + 8 > cap)
			die("'%s': more names than the benchmark holds", path);
		memcpy(nm->arena + used, line, k);
		nm->off[nm->n] = used;
		nm->len[nm->n++] = k;
		used += k + 1;
	}
	fclose(f);
	if (!nm->n)
		die("'%s': no names", path);
}

static void setup(struct bench_set *s, const struct bench_opts *o)
{
	struct hs_list_opts lo;
	struct hs_err err;
	char path[4096];
	int r;

	hs_list_opts_default(&lo);
	lo.warn = warn_list;
	snprintf(path, sizeof(path), "%s/%s", o->corpus, s->list_file);
	r = hs_list_load(path, &lo, &s->list, &err);
	if (r)
		die("%s", err.msg);
	s->trie = xcalloc(1, sizeof(*s->trie));
	r = hs_compile(&s->list, s->trie, &s->stats, &err);
	if (r)
		die("%s: %s", path, err.msg);
	hset_build(&s->hset, &s->list);
	for (int f = 0; f < LOOKUP_FILES; f++) {
		snprintf(path, sizeof(path), "%s/lookups-%smiss%d.txt", o->corpus, s->lookup_prefix,
			 miss_rates[f]);
		load_names(path, &s->lookups[f]);
	}
}

/* The reference verdict: every byte stepped from the root. */
static __u32 step_all(const struct hs_trie *t, const char *p, __u32 len)
{
	__u32 st = HS_TRIE_ROOT;

	for (__u32 i = 0; i < len; i++)
		st = hs_trie_step(t, st, p[i]);
	return hs_dir_rule(t, hs_trie_result(t, st), HS_DIR_REQUEST);
}

/* The rule + 1 of a request's field @p: the other methods know no
 * directions, and the lists hold requests' rules only. */
static __u32 trie_request(const struct hs_trie *t, const char *p, __u32 len)
{
	return hs_dir_rule(t, hs_trie_lookup(t, (const __u8 *)p, len), HS_DIR_REQUEST);
}

static void check_one(const struct bench_set *s, const char *p, __u32 len, const char *where)
{
	const struct bench_gperf_entry *g = s->gperf(p, len);
	__u32 trie = trie_request(s->trie, p, len);
	__u32 step = step_all(s->trie, p, len);
	__u32 gp = g ? (__u32)g->rule + 1 : 0;
	__u32 hs = hset_lookup(&s->hset, p, len);

	if (trie != step || trie != gp || trie != hs) {
		fprintf(stderr,
			"bench_lookup: %s: methods disagree on \"%.*s\": trie %u, stepping %u, gperf %u, hash %u (rule + 1; 0 = miss)\n",
			where, (int)len, p, trie, step, gp, hs);
		exit(1);
	}
}

/* All methods must agree on every name, list and lookups alike. */
static void check_agreement(const struct bench_set *s)
{
	char where[64];

	for (__u32 r = 0; r < s->list.n; r++) {
		const struct hs_name *nm = &s->list.names[r];

		check_one(s, nm->orig, nm->len, s->list_file);
		if (trie_request(s->trie, nm->orig, nm->len) != r + 1)
			die("%s: \"%s\" does not find its own rule", s->list_file, nm->orig);
	}
	for (int f = 0; f < LOOKUP_FILES; f++) {
		const struct names *nm = &s->lookups[f];

		snprintf(where, sizeof(where), "lookups-%smiss%d.txt", s->lookup_prefix,
			 miss_rates[f]);
		for (__u32 i = 0; i < nm->n; i++)
			check_one(s, nm->arena + nm->off[i], nm->len[i], where);
	}
}

/*
 * One loop per method, each a separate function so that callgrind and perf
 * can tell them apart; the lookups are inlined into them.
 */
static __attribute__((noinline)) __u32 run_trie(const struct bench_set *s, const struct names *nm,
						int passes)
{
	__u32 acc = 0;

	for (int p = 0; p < passes; p++)
		for (__u32 i = 0; i < nm->n; i++) {
			__u32 v = hs_trie_lookup(s->trie, (const __u8 *)opaque(nm->arena + nm->off[i]),
						 nm->len[i]);

			keep(&v);
			acc += v;
		}
	return acc;
}

static __always_inline __u32 gperf_loop(gperf_fn fn, const struct names *nm, int passes)
{
	__u32 acc = 0;

	for (int p = 0; p < passes; p++)
		for (__u32 i = 0; i < nm->n; i++) {
			const struct bench_gperf_entry *e = fn(opaque(nm->arena + nm->off[i]), nm->len[i]);
			__u32 v = e ? (__u32)e->rule + 1 : 0;

			keep(&v);
			acc += v;
		}
	return acc;
}

static __attribute__((noinline)) __u32 run_gperf_118(const struct names *nm, int passes)
{
	return gperf_loop(gp_118, nm, passes);
}

static __attribute__((noinline)) __u32 run_gperf_internal(const struct names *nm, int passes)
{
	return gperf_loop(gp_internal, nm, passes);
}

static __attribute__((noinline)) __u32 run_hash(const struct bench_set *s, const struct names *nm,
						int passes)
{
	__u32 acc = 0;

	for (int p = 0; p < passes; p++)
		for (__u32 i = 0; i < nm->n; i++) {
			__u32 v = hset_lookup(&s->hset, opaque(nm->arena + nm->off[i]), nm->len[i]);

			keep(&v);
			acc += v;
		}
	return acc;
}

/* The loop without a lookup: what every figure above includes. */
static __attribute__((noinline)) __u32 run_loop(const struct names *nm, int passes)
{
	__u32 acc = 0;

	for (int p = 0; p < passes; p++)
		for (__u32 i = 0; i < nm->n; i++) {
			__u32 v = (__u8)*opaque(nm->arena + nm->off[i]) + nm->len[i];

			keep(&v);
			acc += v;
		}
	return acc;
}

static __u32 run(const struct bench_set *s, enum method m, const struct names *nm, int passes)
{
	switch (m) {
	case M_TRIE:
		return run_trie(s, nm, passes);
	case M_GPERF:
		return s->gperf == gp_118 ? run_gperf_118(nm, passes) :
					    run_gperf_internal(nm, passes);
	case M_HASH:
		return run_hash(s, nm, passes);
	default:
		return run_loop(nm, passes);
	}
}

static void time_set(struct bench_set *s, const struct bench_opts *o)
{
	double *samples = xcalloc((size_t)o->reps * M_TIMED * LOOKUP_FILES, sizeof(double));
	double *ratios = xcalloc(o->reps, sizeof(double));
	volatile __u32 sink = 0;

	/* Warm caches and branch predictors once. */
	for (int f = 0; f < LOOKUP_FILES; f++)
		for (int m = 0; m < M_TIMED; m++)
			sink += run(s, m, &s->lookups[f], 1);
	for (int rep = 0; rep < o->reps; rep++)
		for (int f = 0; f < LOOKUP_FILES; f++)
			/* Rotate the order so no method always runs first. */
			for (int k = 0; k < M_TIMED; k++) {
				int m = (k + rep) % M_TIMED;
				const struct names *nm = &s->lookups[f];
				double t0 = now_ns();

				sink += run(s, m, nm, o->passes);
				samples[(m * LOOKUP_FILES + f) * o->reps + rep] =
					(now_ns() - t0) / ((double)o->passes * nm->n);
			}
	for (int f = 0; f < LOOKUP_FILES; f++) {
		const double *g = &samples[(M_GPERF * LOOKUP_FILES + f) * o->reps];

		for (int m = 0; m < M_TIMED; m++) {
			double *v = &samples[(m * LOOKUP_FILES + f) * o->reps];

			for (int rep = 0; rep < o->reps; rep++)
				ratios[rep] = v[rep] / g[rep];
			s->vs_gperf[m][f] = median(ratios, o->reps);
		}
		for (int m = 0; m < M_TIMED; m++)
			s->ns[m][f] = median(&samples[(m * LOOKUP_FILES + f) * o->reps], o->reps);
	}
	free(ratios);
	free(samples);
	(void)sink;
}

static void report(const struct bench_opts *o)
{
	printf("Header-name lookup: ns per lookup, median of %d repetitions x %d passes x 10000 names;\n"
	       "ratios: median of the per-repetition ratios to gperf\n",
	       o->reps, o->passes);
	printf("%-9s %5s %8s %8s %8s %11s %11s\n", "list", "miss", "trie", "gperf", "hash",
	       "trie/gperf", "hash/gperf");
	for (size_t i = 0; i < N_SETS; i++)
		for (int f = 0; f < LOOKUP_FILES; f++) {
			const struct bench_set *s = &sets[i];

			printf("%-9s %4d%% %8.2f %8.2f %8.2f %10.2fx %10.2fx\n", s->tag,
			       miss_rates[f], s->ns[M_TRIE][f], s->ns[M_GPERF][f], s->ns[M_HASH][f],
			       s->vs_gperf[M_TRIE][f], s->vs_gperf[M_HASH][f]);
		}
	for (size_t i = 0; i < N_SETS; i++) {
		const struct bench_set *s = &sets[i];

		for (int f = 0; f < LOOKUP_FILES; f++) {
			for (int m = 0; m < M_TIMED; m++)
				printf("bench: %s_ns_miss%d_%s %.2f ns\n", method_names[m],
				       miss_rates[f], s->tag, s->ns[m][f]);
			printf("bench: trie_vs_gperf_miss%d_%s %.3f ratio\n", miss_rates[f], s->tag,
			       s->vs_gperf[M_TRIE][f]);
			printf("bench: hash_vs_gperf_miss%d_%s %.3f ratio\n", miss_rates[f], s->tag,
			       s->vs_gperf[M_HASH][f]);
		}
		printf("bench: trie_bytes_%s %u bytes\n", s->tag, s->stats.bytes);
		printf("bench: trie_nodes_%s %u nodes\n", s->tag, s->stats.nodes);
	}
}

/*
 * One dump per (method, file), named after its metric and carrying the
 * number of lookups: "<method>_ir_miss<N>_<tag> <lookups>".
 */
static void callgrind_set(const struct bench_set *s)
{
	volatile __u32 sink = 0;
	char label[96];

	for (int f = 0; f < LOOKUP_FILES; f++)
		for (int m = 0; m < M_MAX; m++) {
			const struct names *nm = &s->lookups[f];

			snprintf(label, sizeof(label), "%s_ir_miss%d_%s %u", method_names[m],
				 miss_rates[f], s->tag, nm->n);
			CALLGRIND_ZERO_STATS;
			CALLGRIND_TOGGLE_COLLECT;
			sink += run(s, m, nm, 1);
			CALLGRIND_TOGGLE_COLLECT;
			CALLGRIND_DUMP_STATS_AT(label);
		}
	(void)sink;
}

static void usage(void)
{
	fprintf(stderr,
		"Usage: bench_lookup --corpus DIR [--reps N] [--passes N] [--callgrind]\n"
		"\n"
		"Time header-name lookups (hdrstrip trie, gperf, hash set) over DIR's lookup files.\n"
		"  --reps N      repetitions; each figure is their median (default 31)\n"
		"  --passes N    passes over the 10000 names per repetition (default 5)\n"
		"  --callgrind   one pass per method and file, for bench/callgrind-lookup.sh\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct bench_opts o = { .reps = 31, .passes = 5 };

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--corpus") && i + 1 < argc)
			o.corpus = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			o.reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--passes") && i + 1 < argc)
			o.passes = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--callgrind"))
			o.callgrind = 1;
		else
			usage();
	}
	if (!o.corpus || o.reps < 1 || o.passes < 1)
		usage();
	for (size_t i = 0; i < N_SETS; i++) {
		setup(&sets[i], &o);
		check_agreement(&sets[i]);
	}
	if (o.callgrind) {
		for (size_t i = 0; i < N_SETS; i++)
			callgrind_set(&sets[i]);
		return 0;
	}
	for (size_t i = 0; i < N_SETS; i++)
		time_set(&sets[i], &o);
	report(&o);
	return 0;
}
