// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Per-header counter slots across list updates (core/slots.c), against a
 * naive reference written from the contract in slots.h: a chain of random
 * lists (names that nest, prefix rules, bytes that sort before '*'), each
 * compiled and given slots from the one before, as 'hdrstrip update' does
 * (the old list read with hs_slots_read(), the new one compiled over it).
 *  - hs_trie_names() reads back every rule's folded name ('*' appended for
 *    a prefix rule), checked against the list the trie came from;
 *  - hs_assign_slots(): a rule kept from the old list (the same name, of
 *    the same kind, for the same directions) keeps its slot; the others
 *    take the lowest slots nobody keeps, in rule order, and are the fresh
 *    ones. The seed is printed; HS_SEED=N repeats a run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slots.h"
#include "testutil.h"

#define POOL 1500
#define UPDATES 40

/* Folded name bytes only (so the list's own folding changes nothing); '!'
 * and '$' sort before '*', which a sort of "name*" strings would trip on. */
static const char alphabet[] = "abc-xy!$*.09";

struct pool {
	char name[POOL][HS_MAX_NAME_LEN + 2]; /* folded; '*' appended for a prefix rule */
	int dirs[POOL]; /* enum hs_dir_set */
	int n;
};

/* Add @s, as a prefix rule if @prefix, for directions @dirs, unless the
 * pool has it for one of them (a list may hold all of the pool's rules). */
static void pool_add(struct pool *p, const char *s, int prefix, int dirs)
{
	char name[HS_MAX_NAME_LEN + 2];

	snprintf(name, sizeof(name), "%s%s", s, prefix ? "*" : "");
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->name[i], name) && (p->dirs[i] & dirs))
			return;
	if (p->n < POOL) {
		p->dirs[p->n] = dirs;
		memcpy(p->name[p->n++], name, sizeof(name));
	}
}

/* Mostly requests (the default), sometimes responses or both. */
static int pool_dirs(struct rng *r)
{
	__u32 u = rng_below(r, 10);

	return u < 7 ? HS_DIRSET_REQUEST : u < 9 ? HS_DIRSET_RESPONSE : HS_DIRSET_BOTH;
}

static void pool_fill(struct pool *p, struct rng *r)
{
	while (p->n < POOL) {
		char s[32];
		size_t len = 0, k = 1 + rng_below(r, 6);

		/* Often an extension of a name already there. */
		if (p->n && rng_below(r, 3) == 0) {
			const char *base = p->name[rng_below(r, p->n)];

			len = strlen(base);
			if (len && base[len - 1] == '*')
				len--;
			if (len > 20)
				len = 20;
			memcpy(s, base, len);
		}
		do
			s[len++] = alphabet[rng_below(r, sizeof(alphabet) - 1)];
		while (--k && len < 24);
		/* An exact name may not end in '*' (that makes it a prefix rule). */
		if (s[len - 1] == '*')
			s[len - 1] = 'a';
		s[len] = 0;
		/* Sometimes the same bytes as both kinds of rule, or as one
		 * kind twice, for requests and for responses. */
		switch (rng_below(r, 10)) {
		case 0:
			pool_add(p, s, 0, pool_dirs(r));
			pool_add(p, s, 1, pool_dirs(r));
			break;
		case 1:
			pool_add(p, s, 1, pool_dirs(r));
			break;
		case 2:
			k = rng_below(r, 2);
			pool_add(p, s, (int)k, HS_DIRSET_REQUEST);
			pool_add(p, s, (int)k, HS_DIRSET_RESPONSE);
			break;
		default:
			pool_add(p, s, 0, pool_dirs(r));
		}
	}
}

/* A list of @n distinct pool rules, in random order. */
static char *list_text(const struct pool *p, struct rng *r, int n)
{
	static int pick[POOL];
	char *text = malloc((size_t)n * (HS_MAX_NAME_LEN + 24) + 1), *o = text;

	assert_non_null(text);
	for (int i = 0; i < POOL; i++)
		pick[i] = i;
	for (int i = 0; i < n; i++) {
		int j = i + rng_below(r, POOL - i), t = pick[i];

		pick[i] = pick[j];
		pick[j] = t;
		int d = p->dirs[pick[i]], say = d != HS_DIRSET_REQUEST || rng_below(r, 2);

		o += sprintf(o, "%s%s%s%s\n", p->name[pick[i]], rng_below(r, 4) ? "" : " drop",
			     say ? " " : "", say ? hs_dir_set_name(d) : "");
	}
	*o = 0;
	return text;
}

/* A rule's identity for its counter: its name (as hs_trie_names() writes
 * it) and its directions. */
typedef char rule_key[sizeof(hs_rule_name) + 4];

/* What slots.h promises, the slow way. */
static void ref_assign(rule_key *old_names, const __u16 *old_slots, __u32 n_old,
		       rule_key *new_names, __u32 n_new, __u16 *slots,
		       unsigned char fresh[HS_MAX_HIT_SLOTS])
{
	unsigned char used[HS_MAX_HIT_SLOTS] = { 0 };
	__u32 next = 0;

	memset(fresh, 0, HS_MAX_HIT_SLOTS);
	for (__u32 i = 0; i < n_new; i++) {
		slots[i] = HS_MAX_HIT_SLOTS;
		for (__u32 j = 0; j < n_old; j++)
			if (!strcmp(old_names[j], new_names[i])) {
				if (old_slots[j] < HS_MAX_HIT_SLOTS && !used[old_slots[j]]) {
					slots[i] = old_slots[j];
					used[slots[i]] = 1;
				}
				break;
			}
	}
	for (__u32 i = 0; i < n_new; i++) {
		if (slots[i] < HS_MAX_HIT_SLOTS)
			continue;
		while (used[next])
			next++;
		slots[i] = next;
		used[next] = fresh[next] = 1;
	}
}

/* The list's own names, as hs_trie_names() writes them, and their keys. */
static void list_names(const struct hs_list *l, hs_rule_name *names, rule_key *keys)
{
	for (size_t i = 0; i < l->n; i++) {
		snprintf(names[i], sizeof(names[i]), "%s%s", l->names[i].name,
			 l->names[i].prefix ? "*" : "");
		snprintf(keys[i], sizeof(keys[i]), "%s %d", names[i], l->names[i].directions);
	}
}

static void compile_text(const char *text, struct hs_list *l, struct hs_trie *t)
{
	struct hs_err err;

	hs_list_free(l);
	if (hs_list_parse(text, strlen(text), TEST_LIST_PATH, NULL, l, &err) ||
	    hs_compile(l, t, NULL, &err))
		fail_msg("%s", err.msg);
}

/* 'hdrstrip update' on @t: the old list's slots read from it, then @text
 * compiled into it and given slots from them. */
static void update_to(const char *text, struct hs_list *l, struct hs_trie *t,
		      unsigned char fresh[HS_MAX_HIT_SLOTS])
{
	struct hs_slots *old;

	assert_int_equal(hs_slots_read(t, &old), 0);
	assert_non_null(old);
	compile_text(text, l, t);
	assert_int_equal(hs_assign_slots(old, t, fresh), 0);
	hs_slots_free(old);
}

static void expect_slots(const struct hs_trie *t, const __u16 *want)
{
	for (__u32 i = 0; i < t->n_rules; i++)
		assert_int_equal(t->rules[i].hit_slot, want[i]);
}

static void test_update_chain(void **state)
{
	static struct pool p;
	static hs_rule_name want[HS_MAX_NAMES], got[HS_MAX_NAMES];
	static rule_key keys[HS_MAX_NAMES], old_keys[HS_MAX_NAMES];
	unsigned char fresh[HS_MAX_HIT_SLOTS], ref_fresh[HS_MAX_HIT_SLOTS];
	__u16 old_slots[HS_MAX_NAMES], ref_slots[HS_MAX_NAMES];
	struct hs_trie *t = calloc(1, sizeof(*t));
	struct hs_list l = { 0 };
	__u64 seed = test_seed("slots");
	struct rng r = { seed };
	__u32 n_old = 0;

	(void)state;
	assert_non_null(t);
	pool_fill(&p, &r);
	for (int u = 0; u < UPDATES; u++) {
		/* Small lists, full ones, and everything between. */
		int n = u % 4 == 0   ? HS_MAX_NAMES
			: u % 4 == 1 ? 1 + (int)rng_below(&r, 8)
				     : 1 + (int)rng_below(&r, HS_MAX_NAMES);
		char *text = list_text(&p, &r, n);
		struct hs_slots *old = NULL;

		/* The previous list's names come out of the block the next
		 * one is compiled into. */
		if (u)
			assert_int_equal(hs_slots_read(t, &old), 0);
		compile_text(text, &l, t);
		free(text);
		list_names(&l, want, keys);
		assert_int_equal(hs_trie_names(t, got), 0);
		for (int i = 0; i < n; i++)
			if (strcmp(got[i], want[i]) ||
			    hs_rule_dirs(t->rules[i].flags) != l.names[i].directions)
				fail_msg(
					"seed %llu update %d rule %d: hs_trie_names gives \"%s\" (directions %u), the list \"%s\" (%u)",
					(unsigned long long)seed, u, i, got[i],
					hs_rule_dirs(t->rules[i].flags), want[i],
					l.names[i].directions);

		ref_assign(old_keys, old_slots, n_old, keys, n, ref_slots, ref_fresh);
		assert_int_equal(hs_assign_slots(old, t, fresh), 0);
		hs_slots_free(old);
		for (int i = 0; i < n; i++)
			if (t->rules[i].hit_slot != ref_slots[i])
				fail_msg(
					"seed %llu update %d: rule %d (\"%s\") has slot %u, expected %u",
					(unsigned long long)seed, u, i, want[i],
					t->rules[i].hit_slot, ref_slots[i]);
		assert_memory_equal(fresh, ref_fresh, HS_MAX_HIT_SLOTS);

		memcpy(old_keys, keys, sizeof(keys[0]) * n);
		for (int i = 0; i < n; i++)
			old_slots[i] = t->rules[i].hit_slot;
		n_old = n;
	}
	hs_list_free(&l);
	free(t);
}

/* An old block that is no trie starts every counter afresh. */
static void test_unreadable_old(void **state)
{
	unsigned char fresh[HS_MAX_HIT_SLOTS];
	struct hs_trie *t = calloc(1, sizeof(*t));
	struct hs_list l = { 0 };
	struct hs_slots *old;

	(void)state;
	assert_non_null(t);
	compile_text("x-a\nx-b*\nx-c drop\n", &l, t);
	assert_int_equal(hs_assign_slots(NULL, t, fresh), 0);
	t->rules[0].hit_slot = 7;
	t->rules[1].hit_slot = 3;
	t->rules[2].hit_slot = 5;
	update_to("x-c\nx-b*\nx-d\nx-a\n", &l, t, fresh);
	expect_slots(t, (const __u16[]){ 5, 3, 0, 7 });
	assert_true(fresh[0] && !fresh[3] && !fresh[5] && !fresh[7]);

	t->magic = 0;
	assert_int_equal(hs_slots_read(t, &old), 0);
	assert_null(old);
	t->magic = HS_TRIE_MAGIC;
	assert_int_equal(hs_assign_slots(NULL, t, fresh), 0);
	for (__u32 i = 0; i < t->n_rules; i++) {
		assert_int_equal(t->rules[i].hit_slot, i);
		assert_true(fresh[i]);
	}
	/* A damaged new trie is an error. */
	t->magic = 0;
	assert_int_equal(hs_assign_slots(NULL, t, fresh), -EINVAL);
	hs_list_free(&l);
	free(t);
}

/* One name for requests and for responses: two counters, each kept by
 * its own rule; a rule whose directions change starts afresh. */
static void test_directions_keep_slots(void **state)
{
	static hs_rule_name names[HS_MAX_NAMES];
	unsigned char fresh[HS_MAX_HIT_SLOTS];
	struct hs_trie *t = calloc(1, sizeof(*t));
	struct hs_list l = { 0 };

	(void)state;
	assert_non_null(t);
	compile_text("x-debug mask request\nx-a*\nx-debug drop response\nx-a* response\n", &l, t);
	assert_int_equal(hs_trie_names(t, names), 0);
	assert_string_equal(names[0], "x-debug");
	assert_string_equal(names[1], "x-a*");
	assert_string_equal(names[2], "x-debug");
	assert_string_equal(names[3], "x-a*");
	assert_int_equal(hs_assign_slots(NULL, t, fresh), 0);
	expect_slots(t, (const __u16[]){ 0, 1, 2, 3 });

	/* Reordered, the response rules first, one of them now for both
	 * directions: the others keep their slots; x-debug both and x-new
	 * take the lowest slots nobody keeps. */
	update_to("x-a* response\nx-debug drop both\nx-a* request\nx-new response\n", &l, t, fresh);
	expect_slots(t, (const __u16[]){ 3, 0, 1, 2 });
	assert_true(fresh[0] && fresh[2] && !fresh[1] && !fresh[3]);
	hs_list_free(&l);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_update_chain),
		cmocka_unit_test(test_directions_keep_slots),
		cmocka_unit_test(test_unreadable_old),
	};

	return cmocka_run_group_tests_name("slots", tests, NULL, NULL);
}
