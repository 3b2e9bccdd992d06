// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Randomized property test: thousands of random header lists (small
 * alphabets, so names are often prefixes of each other; prefix rules, both
 * fold modes, random case, comments, actions, directions, names twice for
 * disjoint directions) and random queries against
 * each, every query checked by check_query() against the naive reference,
 * stepping split at every offset, and hs_trie_lookup(). The seed is printed;
 * HS_SEED=N repeats a run, and a failure names the set and its list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define SMALL_SETS 4000
#define LARGE_SETS 6

static __u64 g_seed;

/* Name bytes, most often from a tiny alphabet so that names collide,
 * nest and differ only in case or in '_' / '-'. */
static const char common[] = "abAB-_";
static const char rare[] = "!#$%&'*+.^`|~09zZxX";
static const char odd[] = "\"(),/;<=>?[\\]{}"; /* not tokens: the parser warns */

struct gen {
	struct rng r;
	char *text;
	size_t len, cap;
	/* The names as generated, for building queries. */
	char names[HS_MAX_NAMES][HS_MAX_NAME_LEN + 1];
	size_t n;
	int fold;
};

static void put(struct gen *g, const char *s, size_t n)
{
	if (g->len + n + 1 > g->cap) {
		g->cap = (g->len + n + 1) * 2;
		g->text = realloc(g->text, g->cap);
		assert_non_null(g->text);
	}
	memcpy(g->text + g->len, s, n);
	g->len += n;
	g->text[g->len] = 0;
}

static void puts_(struct gen *g, const char *s)
{
	put(g, s, strlen(s));
}

static char name_byte(struct rng *r)
{
	__u32 u = rng_below(r, 100);

	if (u < 85)
		return common[rng_below(r, sizeof(common) - 1)];
	if (u < 97)
		return rare[rng_below(r, sizeof(rare) - 1)];
	return odd[rng_below(r, sizeof(odd) - 1)];
}

static size_t name_len(struct rng *r, size_t max)
{
	__u32 u = rng_below(r, 100);
	size_t len;

	if (u < 70)
		len = 1 + rng_below(r, 6);
	else if (u < 96)
		len = 1 + rng_below(r, 24);
	else
		len = 1 + rng_below(r, HS_MAX_NAME_LEN);
	return len < max ? len : max;
}

/* A new name: fresh bytes, or an earlier name cut or extended. */
static size_t gen_name(struct gen *g, char *buf, size_t max)
{
	struct rng *r = &g->r;
	size_t len;

	if (g->n && rng_below(r, 100) < 45) {
		const char *base = g->names[rng_below(r, g->n)];
		size_t blen = strlen(base);

		if (rng_below(r, 3) == 0 && blen > 1) {
			len = 1 + rng_below(r, blen - 1);
			memcpy(buf, base, len);
		} else {
			size_t extra = 1 + rng_below(r, 4);

			len = blen + extra < max ? blen + extra : max;
			memcpy(buf, base, blen < len ? blen : len);
			for (size_t i = blen; i < len; i++)
				buf[i] = name_byte(r);
		}
		rng_mix_case(r, buf, buf, len);
	} else {
		len = name_len(r, max);
		for (size_t i = 0; i < len; i++)
			buf[i] = name_byte(r);
	}
	if (!len)
		fail_msg("an empty name was generated");
	/* A leading '#' is a comment, a trailing '*' a prefix rule. */
	if (buf[0] == '#')
		buf[0] = 'a';
	if (buf[len - 1] == '*')
		buf[len - 1] = 'b';
	buf[len] = 0;
	return len;
}

/* Is @name (folded) with @prefix already in the list, for a direction of
 * @want_dirs? */
static int taken(const struct gen *g, const char *name, const int *prefix, int want_prefix,
		 const int *dirs, int want_dirs)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < g->n; i++) {
		size_t j;

		if (prefix[i] != want_prefix || !(dirs[i] & want_dirs) ||
		    strlen(g->names[i]) != len)
			continue;
		for (j = 0; j < len; j++)
			if (ref_fold(g->names[i][j], g->fold) != ref_fold(name[j], g->fold))
				break;
		if (j == len)
			return 1;
	}
	return 0;
}

/*
 * A random list of @min_names to @max_names names. Returns the fold option
 * to pass the parser (-1 to let the list decide).
 */
static int gen_list(struct gen *g, size_t min_names, size_t max_names)
{
	static int prefix[HS_MAX_NAMES], dirs[HS_MAX_NAMES];
	struct rng *r = &g->r;
	size_t want = min_names + rng_below(r, max_names - min_names + 1);
	__u32 mode = rng_below(r, 5);
	/* One list in two names directions: some names twice, one for each. */
	int with_dirs = rng_below(r, 2);
	/* One list in four has no prefix rule: lookups take another path. */
	__u32 pfx_pct = (const __u32[]){ 0, 5, 25, 50 }[rng_below(r, 4)];
	int opt = -1;

	g->len = 0;
	g->n = 0;
	puts_(g, "");
	/* Fold: default, directive off/on, option off, option on over a
	 * directive that says off. */
	g->fold = mode != 1 && mode != 3;
	if (mode == 1 || mode == 4)
		puts_(g, "@fold-underscore off\n");
	if (mode == 2)
		puts_(g, "# fold explicitly\n@fold-underscore on\n");
	if (mode == 3)
		opt = 0;
	if (mode == 4)
		opt = 1;

	for (size_t tries = 0; g->n < want && tries < 4 * want; tries++) {
		static const char *const dir_words[] = { "", " request", " Response", " both" };
		char name[HS_MAX_NAME_LEN + 1];
		int is_prefix = rng_below(r, 100) < pfx_pct, d = HS_DIRSET_REQUEST;
		const char *dir_word = "";

		gen_name(g, name, HS_MAX_NAME_LEN);
		if (with_dirs && g->n && rng_below(r, 5) == 0) {
			/* A name of the list again, for the other direction. */
			size_t k = rng_below(r, g->n), len = strlen(g->names[k]);

			rng_mix_case(r, name, g->names[k], len + 1);
			is_prefix = prefix[k];
			d = dirs[k] ^ HS_DIRSET_BOTH;
		} else if (with_dirs) {
			d = rng_below(r, 3) + 1;
		}
		if (!d || taken(g, name, prefix, is_prefix, dirs, d))
			continue;
		if (d != HS_DIRSET_REQUEST || rng_below(r, 2))
			dir_word = dir_words[d];
		memcpy(g->names[g->n], name, sizeof(name));
		dirs[g->n] = d;
		prefix[g->n++] = is_prefix;
		if (rng_below(r, 8) == 0)
			puts_(g, rng_below(r, 2) ? "\n" : "# a comment\n");
		if (rng_below(r, 8) == 0)
			puts_(g, " \t");
		puts_(g, name);
		if (is_prefix)
			puts_(g, "*");
		switch (rng_below(r, 7)) {
		case 0:
			puts_(g, " drop");
			break;
		case 1:
			puts_(g, "\tDROP");
			break;
		case 2:
			puts_(g, " Mask");
			break;
		case 3:
			puts_(g, " observe");
			break;
		}
		puts_(g, dir_word);
		if (rng_below(r, 8) == 0)
			puts_(g, "  # trailing comment");
		puts_(g, rng_below(r, 10) ? "\n" : "\r\n");
	}
	return opt;
}

/* The list text with line ends shown, cut to fit a failure message. */
static const char *describe(const struct gen *g, __u64 seed, int set)
{
	static char buf[700];
	size_t o = snprintf(buf, sizeof(buf), "seed %llu set %d, list \"", (unsigned long long)seed,
			    set);

	for (size_t i = 0; i < g->len && o + 8 < sizeof(buf); i++)
		o += g->text[i] == '\n'
			     ? (size_t)snprintf(buf + o, sizeof(buf) - o, "\\n")
			     : (size_t)snprintf(buf + o, sizeof(buf) - o, "%c", g->text[i]);
	snprintf(buf + o, sizeof(buf) - o, "%s\"", o + 8 < sizeof(buf) ? "" : "...");
	return buf;
}

/* Random queries: variants of the list's names, and random strings. */
static size_t run_queries(struct gen *g, const struct fixture *fx, size_t n_queries,
			  const char *ctx)
{
	struct rng *r = &g->r;
	__u8 q[2 * HS_MAX_NAME_LEN + 16];
	size_t hits = 0;
	const char *some = g->names[rng_below(r, g->n)];

	/* Every cut of one name, and one byte more. */
	for (size_t len = 0; len <= strlen(some); len++) {
		rng_mix_case(r, (char *)q, some, len);
		q[len] = name_byte(r);
		check_query(fx->trie, fx->copy, &fx->ref, q, len, ctx);
		check_query(fx->trie, fx->copy, &fx->ref, q, len + 1, ctx);
	}

	for (size_t k = 0; k < n_queries; k++) {
		size_t len = 0;
		__u32 kind = rng_below(r, 100);

		if (kind < 60) {
			/* A name of the list, then changes. */
			const char *base = g->names[rng_below(r, g->n)];
			__u32 how = rng_below(r, 6);

			len = strlen(base);
			memcpy(q, base, len);
			rng_mix_case(r, (char *)q, (const char *)q, len);
			for (size_t i = 0; i < len; i++)
				if ((q[i] == '-' || q[i] == '_') && rng_below(r, 3) == 0)
					q[i] ^= '-' ^ '_';
			if (how == 1 && len > 0)
				len = rng_below(r, len);
			else if (how == 2 || how == 3)
				for (size_t e = 1 + rng_below(r, how == 2 ? 3 : 20); e; e--)
					q[len++] =
						how == 2 ? (__u8)name_byte(r) : (__u8)rng_next(r);
			else if (how == 4 && len > 0)
				q[rng_below(r, len)] =
					rng_below(r, 2) ? (__u8)name_byte(r) : (__u8)rng_next(r);
			else if (how == 5) {
				/* Two names back to back. */
				const char *b2 = g->names[rng_below(r, g->n)];
				size_t l2 = strlen(b2);

				memcpy(q + len, b2, l2);
				len += l2;
			}
		} else if (kind < 92) {
			len = rng_below(r, 14);
			for (size_t i = 0; i < len; i++)
				q[i] = name_byte(r);
		} else {
			len = rng_below(r, 24);
			for (size_t i = 0; i < len; i++)
				q[i] = rng_next(r);
		}
		hits += check_query(fx->trie, fx->copy, &fx->ref, q, len, ctx) != 0;
	}
	return hits;
}

static void run_sets(int n_sets, size_t min_names, size_t max_names, size_t n_queries, __u64 salt)
{
	struct gen *g = calloc(1, sizeof(*g));
	size_t queries = 0, hits = 0, names = 0;
	struct fixture fx = { 0 };

	assert_non_null(g);
	g->r.s = g_seed ^ salt;
	for (int set = 0; set < n_sets; set++) {
		int opt = gen_list(g, min_names, max_names);
		const char *ctx = describe(g, g_seed, set);

		fx_rebuild(&fx, g->text, opt);
		assert_int_equal(fx.list.n, g->n);
		hits += run_queries(g, &fx, n_queries, ctx);
		queries += n_queries;
		names += g->n;
	}
	fx_free(&fx);
	print_message("%d sets, %zu names, %zu queries, %zu hits\n", n_sets, names, queries, hits);
	/* The generator must produce both outcomes in earnest. */
	assert_true(hits > queries / 10);
	assert_true(hits < queries - queries / 10);
	free(g->text);
	free(g);
}

static void test_random_small_sets(void **state)
{
	(void)state;
	run_sets(SMALL_SETS, 1, 24, 60, 0);
}

static void test_random_medium_sets(void **state)
{
	(void)state;
	run_sets(SMALL_SETS / 10, 25, 200, 300, 0x5eed);
}

static void test_random_full_sets(void **state)
{
	(void)state;
	run_sets(LARGE_SETS, HS_MAX_NAMES - 24, HS_MAX_NAMES, 3000, 0xf011);
}

static int setup(void **state)
{
	(void)state;
	g_seed = test_seed("test_prop");
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_small_sets),
		cmocka_unit_test(test_random_medium_sets),
		cmocka_unit_test(test_random_full_sets),
	};

	return cmocka_run_group_tests_name("property", tests, setup, NULL);
}
