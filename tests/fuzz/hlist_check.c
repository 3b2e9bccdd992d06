// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The list fuzzer's oracle: see hlist_check.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <hdrstrip/trie.h>

#include "check_util.h"
#include "compile.h"
#include "hlist.h"
#include "hlist_check.h"
#include "liberal.h"

/* Queries per list: enough for every name of a small list, a sample of
 * the names of a large one. */
#define HL_MAX_QUERIES 4000

static struct hs_trie g_trie;
static struct lib_list g_ref;
/* The directions of each rule of g_ref (bit 1 << HS_DIR_*), and for each
 * direction the list of its rules only, with each one's index in g_ref:
 * what a list of one direction's rules matches is what the trie's
 * dir_rule[] must give. */
static int g_dirs[LIB_MAX_RULES];
static struct lib_list g_dir_ref[2];
static uint32_t g_dir_index[2][LIB_MAX_RULES];

static const char *show(const uint8_t *p, size_t n)
{
	static char buf[2][600];
	static int k;

	return cu_escape(buf[k++ & 1], sizeof(buf[0]), p, n);
}

/* ---- the list as the manual describes it, read the plain way ---- */

static int space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* A word of an accepted line after its name, in any case. */
static int word_is(const char *w, size_t n, const char *word)
{
	return n == strlen(word) && !strncasecmp(w, word, n);
}

/* Read an accepted list's text into @r and @dirs; returns its
 * '@fold-underscore' setting (1 when none), and its '@h2c-upgrade' one
 * in @h2c_block (1 when none). */
static int naive_read(const char *t, size_t len, struct lib_list *r, int *dirs, int *h2c_block)
{
	int fold = 1;

	*h2c_block = 1;
	memset(r, 0, sizeof(*r));
	for (size_t pos = 0; pos < len;) {
		const char *s = t + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos, i, w;

		pos += n + (nl != NULL);
		for (i = 0; i < n; i++)
			if (s[i] == '#' && (i == 0 || space(s[i - 1])))
				break;
		n = i;
		while (n && space(s[n - 1]))
			n--;
		while (n && space(*s)) {
			s++;
			n--;
		}
		if (!n)
			continue;
		if (*s == '@' && n > 12 && !memcmp(s, "@h2c-upgrade", 12)) {
			*h2c_block = !(n >= 5 && !memcmp(s + n - 5, "allow", 5));
			continue;
		}
		if (*s == '@') {
			fold = !(n >= 3 && !memcmp(s + n - 3, "off", 3));
			continue;
		}
		for (w = 0; w < n && !space(s[w]); w++)
			;
		/* NAME [ACTION] [DIRECTION]: each word known by itself. */
		int act = HS_ACT_MASK, d = 1 << HS_DIR_REQUEST;

		for (i = w; i < n;) {
			size_t k = 0;

			while (i < n && space(s[i]))
				i++;
			while (i + k < n && !space(s[i + k]))
				k++;
			if (word_is(s + i, k, "drop"))
				act = HS_ACT_DROP;
			else if (word_is(s + i, k, "observe"))
				act = HS_ACT_OBSERVE;
			else if (word_is(s + i, k, "reject"))
				act = HS_ACT_REJECT;
			else if (word_is(s + i, k, "response"))
				d = 1 << HS_DIR_RESPONSE;
			else if (word_is(s + i, k, "both"))
				d = 1 << HS_DIR_REQUEST | 1 << HS_DIR_RESPONSE;
			i += k;
		}
		if (r->n < LIB_MAX_RULES)
			dirs[r->n] = d;
		lib_add(r, s, w, act);
	}
	return fold;
}

/* The rules of @r for each direction, apart (see g_dir_ref). */
static void split_dirs(const struct lib_list *r, const int *dirs)
{
	for (int d = 0; d < 2; d++) {
		memset(&g_dir_ref[d], 0, sizeof(g_dir_ref[d]));
		g_dir_ref[d].fold_underscore = r->fold_underscore;
		for (size_t i = 0; i < r->n; i++) {
			const struct lib_rule *rr = &r->rules[i];

			if (!(dirs[i] & (1 << d)))
				continue;
			g_dir_index[d][g_dir_ref[d].n] = (uint32_t)i;
			/* lib_add() reads the '*' back from the name. */
			g_dir_ref[d].rules[g_dir_ref[d].n++] = *rr;
		}
	}
}

/* Rule + 1 of g_ref that a list of direction @d's rules matches @q to. */
static uint32_t dir_match(int d, const uint8_t *q, size_t n)
{
	uint32_t m = lib_match(&g_dir_ref[d], q, n);

	return m ? g_dir_index[d][m - 1] + 1 : 0;
}

/* Do rules @a and @b of g_ref have one name (folded) and kind? */
static int same_rule_name(const struct lib_list *r, size_t a, size_t b)
{
	const struct lib_rule *x = &r->rules[a], *y = &r->rules[b];

	if (x->len != y->len || x->prefix != y->prefix)
		return 0;
	for (size_t i = 0; i < x->len; i++) {
		uint8_t c = x->name[i], d = y->name[i];

		c = c >= 'A' && c <= 'Z' ? c + 32 : c == '_' && r->fold_underscore ? '-' : c;
		d = d >= 'A' && d <= 'Z' ? d + 32 : d == '_' && r->fold_underscore ? '-' : d;
		if (c != d)
			return 0;
	}
	return 1;
}

/* An accepted list names a name of one kind once a direction. */
static void check_no_overlap(const struct lib_list *r, const int *dirs, struct cu_err *e)
{
	/* Pairs: only on lists of a size a fuzzer's run can afford. */
	if (r->n > 256)
		return;
	for (size_t a = 0; a < r->n && !e->failed; a++)
		for (size_t b = a + 1; b < r->n && !e->failed; b++)
			if ((dirs[a] & dirs[b]) && same_rule_name(r, a, b))
				failf(e, "rules %zu and %zu (\"%s\") overlap in directions %d", a,
				      b, show(r->rules[b].name, r->rules[b].len),
				      dirs[a] & dirs[b]);
}

/* ---- verdicts ---- */

/*
 * The trie resolves @q to rule @got (+ 1) whatever the direction: each
 * direction's rule, through dir_rule[], must be the one a list of that
 * direction's rules matches; @got itself one of them (the most specific
 * rule applies in its own directions). Sets *@enforced when one of them
 * masks or drops.
 */
static int check_dirs(const struct hs_trie *t, const uint8_t *q, size_t n, uint32_t got,
		      const char *how, int *enforced, struct cu_err *e)
{
	uint32_t want[2] = { dir_match(0, q, n), dir_match(1, q, n) };

	for (int d = 0; d < 2; d++) {
		uint32_t gd = hs_dir_rule(t, got, d);

		if (gd != want[d]) {
			failf(e,
			      "%s(\"%s\") = %u, for direction %d rule %u; the naive matcher says %u",
			      how, show(q, n), got, d, gd, want[d]);
			return -1;
		}
		if (want[d] && t->rules[want[d] - 1].action != g_ref.rules[want[d] - 1].action) {
			failf(e, "rule %u of \"%s\": action %u, the list says %s", want[d],
			      show(q, n), t->rules[want[d] - 1].action,
			      hs_action_names[g_ref.rules[want[d] - 1].action]);
			return -1;
		}
		*enforced |= lib_enforced(&g_ref, want[d]) << d;
	}
	if (got ? got != want[0] && got != want[1] : want[0] || want[1]) {
		failf(e,
		      "%s(\"%s\") = %u, the naive matcher says %u for requests, %u for responses",
		      how, show(q, n), got, want[0], want[1]);
		return -1;
	}
	return 0;
}

/* Does state @st say a rule may still match in every direction whose bit
 * @enforced has (bit d: the name is masked or dropped in direction d)? */
static int may_enforce_all(const struct hs_trie *t, uint32_t st, int enforced)
{
	for (int d = 0; d < 2; d++)
		if ((enforced >> d & 1) && !hs_trie_may_enforce(t, st, (__u32)d))
			return 0;
	return 1;
}

static void check_query(const struct hs_trie *t, const uint8_t *q, size_t n, struct cu_err *e)
{
	uint32_t got, st = HS_TRIE_ROOT;
	uint8_t *exact = malloc(n ? n : 1);
	int enforced = 0;

	if (!exact)
		abort();
	/* An exact-size copy: ASan sees a lookup that reads past the name. */
	memcpy(exact, q, n);
	got = hs_trie_lookup(t, exact, (__u32)n);
	free(exact);
	if (check_dirs(t, q, n, got, "hs_trie_lookup", &enforced, e))
		return;
	for (size_t i = 0; i < n; i++) {
		uint32_t next = hs_trie_step(t, st, q[i]);

		/* A name masked or dropped in a direction: no state on its way
		 * may say that no such rule for it can match any more. */
		if (!may_enforce_all(t, st, enforced)) {
			failf(e, "stepping \"%s\": state %#x after %zu bytes may not enforce",
			      show(q, n), st, i);
			return;
		}
		if (hs_trie_final(st) && next != st) {
			failf(e, "stepping \"%s\": final state %#x changed at byte %zu", show(q, n),
			      st, i);
			return;
		}
		st = next;
	}
	if (!may_enforce_all(t, st, enforced))
		failf(e, "stepping \"%s\": its last state %#x may not enforce", show(q, n), st);
	else
		check_dirs(t, q, n, hs_trie_result(t, st), "stepping", &enforced, e);
}

/* The name of rule @i and what is near it. */
static size_t check_around(const struct hs_trie *t, size_t i, size_t budget, struct cu_err *e)
{
	static const char *const ext[] = { "a", "-", "_", "*", "x-", "Z9", "\x80", ":", " " };
	const struct lib_rule *r = &g_ref.rules[i];
	uint8_t q[LIB_MAX_NAME + 4];
	size_t n = r->len, used = 0, k;

	for (k = 0; k <= n && used < budget && !e->failed; k++, used++)
		check_query(t, r->name, k, e); /* every prefix, the name itself included */
	for (k = 0; k < HS_ARRAY_SIZE(ext) && used < budget && !e->failed; k++, used++) {
		size_t m = strlen(ext[k]);

		memcpy(q, r->name, n);
		memcpy(q + n, ext[k], m);
		check_query(t, q, n + m, e);
	}
	for (int v = 0; v < 3 && used < budget && !e->failed; v++, used++) {
		/* Upper case, lower case, '_' and '-' swapped. */
		for (k = 0; k < n; k++) {
			uint8_t c = r->name[k];

			if (v == 0 && c >= 'a' && c <= 'z')
				c -= 32;
			else if (v == 1 && c >= 'A' && c <= 'Z')
				c += 32;
			else if (v == 2 && (c == '_' || c == '-'))
				c = c == '_' ? '-' : '_';
			q[k] = c;
		}
		check_query(t, q, n, e);
	}
	if (n && used < budget && !e->failed) {
		/* The last byte changed: a near miss. */
		memcpy(q, r->name, n);
		q[n - 1] ^= 1;
		check_query(t, q, n, e);
		used++;
	}
	return used;
}

int hl_check(const uint8_t *data, size_t size, char *why, size_t why_size)
{
	struct cu_err e = { .buf = why, .size = why_size };
	struct hs_list_opts o;
	struct hs_list l;
	struct hs_err err;
	const char *text = size ? (const char *)data + 1 : "";
	size_t len = size ? size - 1 : 0, budget = HL_MAX_QUERIES, i;
	int r, fold, h2c_block, builtin = 0, resp = 0;

	if (why_size)
		why[0] = 0;
	hs_list_opts_default(&o);
	if (size && (data[0] & 3) == 1)
		o.fold_underscore = 0;
	else if (size && (data[0] & 3) == 2)
		o.fold_underscore = 1;
	/* The CLI's lists: with the built-in rule. */
	o.builtin = size && (data[0] & 4);
	r = hs_list_parse(text, len, "fuzz.list", &o, &l, &err);
	if (r) {
		if (r != -EINVAL || !err.bad_input || !err.msg[0])
			failf(&e, "refused with %d (bad_input %d) and message \"%s\"", r,
			      err.bad_input, err.msg);
		else if (strncmp(err.msg, "fuzz.list", 9))
			failf(&e, "error message does not name the file: \"%s\"", err.msg);
		return e.failed ? -1 : 0;
	}

	/* The parser's list is the one the text spells. */
	fold = naive_read(text, len, &g_ref, g_dirs, &h2c_block);
	g_ref.fold_underscore = o.fold_underscore >= 0 ? o.fold_underscore : fold;
	split_dirs(&g_ref, g_dirs);
	/* The built-in rule, read the plain way: after the list's own names,
	 * unless the list allows h2c upgrades or a request rule of its own
	 * matches the name (the reference matcher decides). */
	if (o.builtin && h2c_block && g_ref.n < LIB_MAX_RULES &&
	    !lib_match(&g_dir_ref[HS_DIR_REQUEST], (const uint8_t *)HS_BUILTIN_H2C,
		       strlen(HS_BUILTIN_H2C))) {
		g_dirs[g_ref.n] = 1 << HS_DIR_REQUEST;
		lib_add(&g_ref, HS_BUILTIN_H2C, strlen(HS_BUILTIN_H2C), HS_ACT_MASK);
		split_dirs(&g_ref, g_dirs);
		builtin = 1;
	}
	check_no_overlap(&g_ref, g_dirs, &e);
	if (l.fold_underscore != g_ref.fold_underscore)
		failf(&e, "fold-underscore %d, the text says %d", l.fold_underscore,
		      g_ref.fold_underscore);
	if (l.n != g_ref.n)
		failf(&e, "%zu names parsed, the text has %zu", l.n, g_ref.n);
	for (i = 0; i < l.n && !e.failed; i++) {
		const struct lib_rule *rr = &g_ref.rules[i];

		if (l.names[i].builtin != (builtin && i == l.n - 1))
			failf(&e, "name %zu is%s the built-in rule, the text says%s", i,
			      l.names[i].builtin ? "" : " not",
			      l.names[i].builtin ? " not" : " so");
		if (strlen(l.names[i].orig) != rr->len + rr->prefix ||
		    memcmp(l.names[i].orig, rr->name, rr->len) || l.names[i].prefix != rr->prefix ||
		    l.names[i].action != rr->action || l.names[i].directions != g_dirs[i])
			failf(&e,
			      "name %zu parsed as \"%s\" (prefix %d, action %d, directions %d), the text says \"%s\" (directions %d)",
			      i, l.names[i].orig, l.names[i].prefix, l.names[i].action,
			      l.names[i].directions, show(rr->name, rr->len), g_dirs[i]);
	}

	/* Every accepted list compiles, and the block is one the loader takes. */
	if (!e.failed && hs_compile(&l, &g_trie, NULL, &err))
		failf(&e, "accepted list does not compile: %s", err.msg);
	if (!e.failed && hs_trie_validate(&g_trie, &err))
		failf(&e, "compiled block does not validate: %s", err.msg);
	/* Each rule's kind and directions as the text says; the block says
	 * whether any rule applies to responses (the programs skip them when
	 * none does). */
	for (i = 0; i < l.n && !e.failed; i++) {
		unsigned int want = (l.names[i].prefix ? HS_RULE_F_PREFIX : 0) |
				    (unsigned int)g_dirs[i] * HS_RULE_F_REQUEST;

		resp |= g_dirs[i] & (1 << HS_DIR_RESPONSE);
		if ((g_trie.rules[i].flags &
		     ~(HS_RULE_F_ENFORCE_REQUEST | HS_RULE_F_ENFORCE_RESPONSE |
		       HS_RULE_F_ENFORCE_EITHER)) != want)
			failf(&e, "rule %zu has flags %#x, the text says prefix %d, directions %d",
			      i, g_trie.rules[i].flags, l.names[i].prefix, g_dirs[i]);
	}
	if (!e.failed && !resp != !(g_trie.flags & HS_TRIE_F_RESPONSE_RULES))
		failf(&e, "trie flags %#x, but %s rule applies to responses", g_trie.flags,
		      resp ? "a" : "no");

	/* Verdicts: the first and last names in full, others as budget allows. */
	for (i = 0; i < g_ref.n && !e.failed && budget > 0; i++) {
		size_t k = i % 2 ? g_ref.n - 1 - i / 2 : i / 2;

		budget -= check_around(&g_trie, k, budget, &e);
	}
	hs_list_free(&l);
	return e.failed ? -1 : 0;
}
