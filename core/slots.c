// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hlist.h"
#include "slots.h"

/* A depth-first walk hands every rule's name, as the path from the root,
 * to @emit: in symbol order, so in the same order for any two tries. */
struct walk {
	const struct hs_trie *t;
	void (*emit)(struct walk *w, __u32 rule, __u32 len, int prefix);
	void *ctx;
	unsigned char byte_of[HS_MAX_SYMS];
	char path[HS_MAX_NAME_LEN + 1];
	unsigned int seen;
	unsigned char emitted[HS_MAX_NAMES];
};

/*
 * Rule @rule's name is the path; so is that of a rule of the same name and
 * kind for other directions, which no node names: the rule's dir_rule[]
 * names it for a direction the rule does not apply to. A rule of the same
 * kind named there that is not one of them is a prefix rule of a shorter
 * name, whose node comes before on the path: emitted already.
 */
static void found(struct walk *w, __u32 rule, __u32 len, int prefix)
{
	const struct hs_rule *r;

	if (rule >= w->t->n_rules || rule >= HS_MAX_NAMES || w->emitted[rule])
		return;
	w->emit(w, rule, len, prefix);
	w->emitted[rule] = 1;
	w->seen++;
	r = &w->t->rules[rule];
	for (int d = 0; d < 2; d++) {
		__u32 v = r->dir_rule[d];

		if (v && !(hs_rule_dirs(r->flags) & (1u << d)) && v <= w->t->n_rules &&
		    !((w->t->rules[v - 1].flags ^ r->flags) & HS_RULE_F_PREFIX))
			found(w, v - 1, len, prefix);
	}
}

/* Depth-first; the depth is bounded by the name length limit. */
static int walk_node(struct walk *w, __u32 idx, __u32 depth)
{
	const struct hs_node *n;
	__u32 end, k = 0;

	if (idx >= w->t->n_nodes || idx >= HS_MAX_NODES)
		return -EINVAL;
	n = &w->t->nodes[idx];
	end = depth + n->label_len;
	if (end > HS_MAX_NAME_LEN || n->label_off + n->label_len > HS_MAX_LABEL_BYTES)
		return -EINVAL;
	memcpy(w->path + depth, &w->t->labels[n->label_off], n->label_len);
	if (n->pfx_out != n->pfx_in && n->pfx_out)
		found(w, n->pfx_out - 1, end, 1);
	if (n->end_rule && n->end_rule != n->pfx_out)
		found(w, n->end_rule - 1, end, 0);
	/* Children in symbol order: the set bits of the mask, lowest first. */
	for (__u64 m = n->mask; m; m &= m - 1) {
		if (end >= HS_MAX_NAME_LEN)
			return -EINVAL;
		w->path[end] = w->byte_of[__builtin_ctzll(m)];
		if (walk_node(w, n->first_child + k++, end + 1))
			return -EINVAL;
	}
	return 0;
}

static int walk(struct walk *w)
{
	const struct hs_trie *t = w->t;

	if (t->magic != HS_TRIE_MAGIC || t->version != HS_TRIE_VERSION || !t->n_nodes ||
	    t->n_rules > HS_MAX_NAMES)
		return -EINVAL;
	for (int c = 255; c >= 0; c--)
		if (t->sym[c] != HS_SYM_NONE)
			w->byte_of[t->sym[c] & (HS_MAX_SYMS - 1)] = t->canon[c];
	if (walk_node(w, HS_TRIE_ROOT, 0) || w->seen != t->n_rules)
		return -EINVAL;
	return 0;
}

static void emit_name(struct walk *w, __u32 rule, __u32 len, int prefix)
{
	hs_rule_name *names = w->ctx;

	memcpy(names[rule], w->path, len);
	names[rule][len] = prefix ? '*' : 0;
	names[rule][len + prefix] = 0;
}

int hs_trie_names(const struct hs_trie *t, hs_rule_name *names)
{
	struct walk w = { .t = t, .emit = emit_name, .ctx = names };

	if (t->magic == HS_TRIE_MAGIC && t->n_rules <= HS_MAX_NAMES)
		for (__u32 r = 0; r < t->n_rules; r++)
			names[r][0] = 0;
	return walk(&w);
}

/*
 * A list's names, by name: a hash table of rule + 1 (0: empty), at most
 * half full, over a copy of each name. A name is its folded bytes, whether
 * it is a prefix rule, and the directions it applies to: "x-a request"
 * and "x-a response" count apart, and a rule whose directions change
 * starts afresh.
 */
#define SLOT_TABLE (2 * HS_MAX_NAMES)

_Static_assert((SLOT_TABLE & (SLOT_TABLE - 1)) == 0, "the table size is a power of two");
_Static_assert(HS_MAX_NAMES < 0x10000 && HS_MAX_NAME_LEN < 0x100, "table entries and lengths");

struct hs_slots {
	char *bytes; /* the names, one after the other */
	__u32 used, size;
	__u32 off[HS_MAX_NAMES];
	__u16 slot[HS_MAX_NAMES]; /* the rule's hit_slot */
	__u8 len[HS_MAX_NAMES];
	__u8 prefix[HS_MAX_NAMES];
	__u8 dirs[HS_MAX_NAMES]; /* enum hs_dir_set */
	__u16 table[SLOT_TABLE];
};

/* The table entry for a name: the one that holds it, or the empty one
 * where it would go. */
static __u32 find(const struct hs_slots *o, const char *s, __u32 len, int prefix, __u32 dirs)
{
	for (__u32 i = hs_name_hash(s, len, prefix | dirs << 1);; i++) {
		__u32 e = i & (SLOT_TABLE - 1), r = o->table[e] - 1u;

		if (!o->table[e] || (o->len[r] == len && o->prefix[r] == prefix &&
				     o->dirs[r] == dirs && !memcmp(&o->bytes[o->off[r]], s, len)))
			return e;
	}
}

static void emit_old(struct walk *w, __u32 rule, __u32 len, int prefix)
{
	struct hs_slots *o = w->ctx;
	__u32 e, dirs = hs_rule_dirs(w->t->rules[rule].flags);

	/* Only a damaged trie names more than n_rules rules (and fails the walk). */
	if (len > o->size - o->used)
		return;
	memcpy(&o->bytes[o->used], w->path, len);
	o->off[rule] = o->used;
	o->used += len;
	o->len[rule] = len;
	o->prefix[rule] = prefix;
	o->dirs[rule] = dirs;
	o->slot[rule] = w->t->rules[rule].hit_slot;
	e = find(o, w->path, len, prefix, dirs);
	if (!o->table[e])
		o->table[e] = rule + 1;
}

int hs_slots_read(const struct hs_trie *old, struct hs_slots **out)
{
	struct hs_slots *o;
	struct walk w = { .t = old, .emit = emit_old };

	*out = NULL;
	if (old->n_rules > HS_MAX_NAMES || !old->n_rules)
		return 0;
	o = malloc(sizeof(*o));
	if (!o)
		return -ENOMEM;
	memset(o->table, 0, sizeof(o->table));
	o->used = 0;
	/* Sized by the list; only its names' bytes are written. */
	o->size = old->n_rules * HS_MAX_NAME_LEN;
	o->bytes = malloc(o->size);
	if (!o->bytes) {
		free(o);
		return -ENOMEM;
	}
	w.ctx = o;
	if (walk(&w)) {
		hs_slots_free(o);
		return 0;
	}
	*out = o;
	return 0;
}

void hs_slots_free(struct hs_slots *s)
{
	if (s)
		free(s->bytes);
	free(s);
}

/* The new list's walk: which old rule, + 1, has each new rule's name. */
struct matches {
	const struct hs_slots *old;
	__u16 rule[HS_MAX_NAMES];
};

static void emit_new(struct walk *w, __u32 rule, __u32 len, int prefix)
{
	struct matches *mt = w->ctx;

	mt->rule[rule] = mt->old ? mt->old->table[find(mt->old, w->path, len, prefix,
						       hs_rule_dirs(w->t->rules[rule].flags))]
				 : 0;
}

int hs_assign_slots(const struct hs_slots *old, struct hs_trie *nt,
		    unsigned char fresh[HS_MAX_HIT_SLOTS])
{
	unsigned char used[HS_MAX_HIT_SLOTS] = { 0 };
	struct matches mt = { .old = old };
	struct walk w = { .t = nt, .emit = emit_new, .ctx = &mt };
	__u32 next = 0;
	int r;

	memset(fresh, 0, HS_MAX_HIT_SLOTS);
	r = walk(&w);
	if (r)
		return r;
	for (__u32 i = 0; i < nt->n_rules; i++)
		nt->rules[i].hit_slot = HS_MAX_HIT_SLOTS;
	/* Names kept from the old list keep their slots. */
	for (__u32 i = 0; i < nt->n_rules; i++) {
		__u16 s;

		if (!mt.rule[i])
			continue;
		s = old->slot[mt.rule[i] - 1];
		if (s < HS_MAX_HIT_SLOTS && !used[s]) {
			nt->rules[i].hit_slot = s;
			used[s] = 1;
		}
	}
	/* New names take slots nobody keeps. */
	for (__u32 i = 0; i < nt->n_rules; i++) {
		if (nt->rules[i].hit_slot < HS_MAX_HIT_SLOTS)
			continue;
		while (next < HS_MAX_HIT_SLOTS && used[next])
			next++;
		if (next == HS_MAX_HIT_SLOTS)
			return -ENOSPC;
		nt->rules[i].hit_slot = next;
		used[next] = 1;
		fresh[next] = 1;
	}
	return 0;
}
