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

/* Read an accepted list's text into @r; returns its '@fold-underscore'
 * setting (1 when none). */
static int naive_read(const char *t, size_t len, struct lib_list *r)
{
	int fold = 1;

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
		if (*s == '@') {
			fold = !(n >= 3 && !memcmp(s + n - 3, "off", 3));
			continue;
		}
		for (w = 0; w < n && !space(s[w]); w++)
			;
		i = w;
		while (i < n && space(s[i]))
			i++;
		lib_add(r, s, w,
			n - i == 4 && !strncasecmp(s + i, "drop", 4)	  ? HS_ACT_DROP
			: n - i == 7 && !strncasecmp(s + i, "observe", 7) ? HS_ACT_OBSERVE
									  : HS_ACT_MASK);
	}
	return fold;
}

/* ---- verdicts ---- */

static void check_query(const struct hs_trie *t, const uint8_t *q, size_t n, struct cu_err *e)
{
	uint32_t want = lib_match(&g_ref, q, n), got, st = HS_TRIE_ROOT;
	uint8_t *exact = malloc(n ? n : 1);

	if (!exact)
		abort();
	/* An exact-size copy: ASan sees a lookup that reads past the name. */
	memcpy(exact, q, n);
	got = hs_trie_lookup(t, exact, (__u32)n);
	free(exact);
	if (got != want) {
		failf(e, "hs_trie_lookup(\"%s\") = %u, the naive matcher says %u", show(q, n), got,
		      want);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t next = hs_trie_step(t, st, q[i]);

		if (hs_trie_final(st) && next != st) {
			failf(e, "stepping \"%s\": final state %#x changed at byte %zu", show(q, n),
			      st, i);
			return;
		}
		st = next;
	}
	got = hs_trie_result(t, st);
	if (got != want)
		failf(e, "stepping \"%s\" gives %u, the naive matcher says %u", show(q, n), got,
		      want);
	else if (want && t->rules[want - 1].action != g_ref.rules[want - 1].action)
		failf(e, "rule %u of \"%s\": action %u, the list says %s", want, show(q, n),
		      t->rules[want - 1].action, hs_action_names[g_ref.rules[want - 1].action]);
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
	int r, fold;

	if (why_size)
		why[0] = 0;
	hs_list_opts_default(&o);
	if (size && (data[0] & 3) == 1)
		o.fold_underscore = 0;
	else if (size && (data[0] & 3) == 2)
		o.fold_underscore = 1;
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
	fold = naive_read(text, len, &g_ref);
	g_ref.fold_underscore = o.fold_underscore >= 0 ? o.fold_underscore : fold;
	if (l.fold_underscore != g_ref.fold_underscore)
		failf(&e, "fold-underscore %d, the text says %d", l.fold_underscore,
		      g_ref.fold_underscore);
	if (l.n != g_ref.n)
		failf(&e, "%zu names parsed, the text has %zu", l.n, g_ref.n);
	for (i = 0; i < l.n && !e.failed; i++) {
		const struct lib_rule *rr = &g_ref.rules[i];

		if (strlen(l.names[i].orig) != rr->len + rr->prefix ||
		    memcmp(l.names[i].orig, rr->name, rr->len) || l.names[i].prefix != rr->prefix ||
		    l.names[i].action != rr->action)
			failf(&e,
			      "name %zu parsed as \"%s\" (prefix %d, action %d), the text says \"%s\"",
			      i, l.names[i].orig, l.names[i].prefix, l.names[i].action,
			      show(rr->name, rr->len));
	}

	/* Every accepted list compiles, and the block is one the loader takes. */
	if (!e.failed && hs_compile(&l, &g_trie, NULL, &err))
		failf(&e, "accepted list does not compile: %s", err.msg);
	if (!e.failed && hs_trie_validate(&g_trie, &err))
		failf(&e, "compiled block does not validate: %s", err.msg);

	/* Verdicts: the first and last names in full, others as budget allows. */
	for (i = 0; i < g_ref.n && !e.failed && budget > 0; i++) {
		size_t k = i % 2 ? g_ref.n - 1 - i / 2 : i / 2;

		budget -= check_around(&g_trie, k, budget, &e);
	}
	hs_list_free(&l);
	return e.failed ? -1 : 0;
}
