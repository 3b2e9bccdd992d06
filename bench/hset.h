/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The plain hash set the benchmarks compare the trie with: open addressing
 * with linear probing, FNV-1a over lower-cased bytes, load factor <= 1/2.
 * Each slot keeps the hash and the length, so a name is compared only when
 * both match. It folds ASCII case but not '_' to '-', and cannot hold
 * prefix rules.
 */
#ifndef HDRSTRIP_BENCH_HSET_H
#define HDRSTRIP_BENCH_HSET_H

#include "bench_util.h"
#include "hlist.h"

/* rule1 == 0 marks a free slot. */
struct hset_slot {
	__u32 hash;
	__u16 len;
	__u16 rule1;
	const char *name; /* lower case */
};

struct hset {
	struct hset_slot *slots;
	__u32 mask;
};

static __always_inline __u8 lower(__u8 c)
{
	return c + ((__u8)(c - 'A') < 26 ? 'a' - 'A' : 0);
}

static __always_inline __u32 fnv1a_lower(const char *p, __u32 len)
{
	__u32 h = 2166136261u;

	for (__u32 i = 0; i < len; i++) {
		h ^= lower(p[i]);
		h *= 16777619u;
	}
	return h;
}

static __always_inline int eq_lower(const char *lc, const char *p, __u32 len)
{
	for (__u32 i = 0; i < len; i++)
		if (lc[i] != lower(p[i]))
			return 0;
	return 1;
}

/* Rule index + 1 of the name @p[0, len), or 0. */
static __always_inline __u32 hset_lookup(const struct hset *s, const char *p, __u32 len)
{
	__u32 h = fnv1a_lower(p, len), i = h & s->mask;

	for (;;) {
		const struct hset_slot *sl = &s->slots[i];

		if (!sl->rule1)
			return 0;
		if (sl->hash == h && sl->len == len && eq_lower(sl->name, p, len))
			return sl->rule1;
		i = (i + 1) & s->mask;
	}
}

static __attribute__((unused)) void hset_build(struct hset *s, const struct hs_list *l)
{
	__u32 cap = 8;

	while (cap < 2 * l->n)
		cap *= 2;
	s->slots = xcalloc(cap, sizeof(*s->slots));
	s->mask = cap - 1;
	for (__u32 r = 0; r < l->n; r++) {
		const struct hs_name *nm = &l->names[r];
		char *lc = xcalloc(nm->len + 1, 1);
		__u32 h, i;

		if (nm->prefix)
			die("prefix rule \"%s\": the hash set cannot match prefixes", nm->orig);
		if (nm->directions != HS_DIRSET_REQUEST)
			die("rule \"%s\" is not for requests only: the hash set knows no directions",
			    nm->orig);
		for (__u32 k = 0; k < nm->len; k++)
			lc[k] = lower(nm->orig[k]);
		h = fnv1a_lower(lc, nm->len);
		i = h & s->mask;
		while (s->slots[i].rule1)
			i = (i + 1) & s->mask;
		s->slots[i] = (struct hset_slot){ .hash = h, .len = nm->len, .rule1 = r + 1, .name = lc };
	}
}

#endif /* HDRSTRIP_BENCH_HSET_H */
