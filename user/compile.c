// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The trie compiler. Names are sorted by their folded bytes; a node covers a
 * run of sorted names that share its path. Nodes are numbered breadth-first
 * so that the children of every node are contiguous and ordered by symbol,
 * which is what the popcount child index needs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"

struct build_item {
	__u32 lo, hi; /* run of sorted names */
	__u32 depth; /* bytes of the path before this node's label */
	__u32 node;
};

struct builder {
	struct hs_trie *t;
	const struct hs_name **sorted;
	__u32 *rule_of; /* sorted index -> rule index */
	struct build_item *queue;
	__u32 qhead, qtail;
};

static int cmp_name(const void *a, const void *b)
{
	const struct hs_name *x = *(const struct hs_name *const *)a;
	const struct hs_name *y = *(const struct hs_name *const *)b;
	int r = strcmp(x->name, y->name);

	/* Within equal bytes the exact name comes before the prefix rule. */
	return r ? r : x->prefix - y->prefix;
}

static void build_node(struct builder *b, const struct build_item *it)
{
	struct hs_trie *t = b->t;
	struct hs_node *n = &t->nodes[it->node];
	__u32 end = it->depth, lo = it->lo, i;

	/* Compress the chain: extend the label while every name continues
	 * with the same byte and none ends. */
	for (;;) {
		int same = 1;

		for (i = lo; i < it->hi && same; i++)
			if (b->sorted[i]->len <= end || b->sorted[i]->name[end] != b->sorted[lo]->name[end])
				same = 0;
		if (!same)
			break;
		end++;
	}
	n->label_off = t->label_bytes;
	n->label_len = end - it->depth;
	if (n->label_len) {
		memcpy(&t->labels[t->label_bytes], &b->sorted[lo]->name[it->depth], n->label_len);
		t->label_bytes += n->label_len;
	}
	/* Names that end here: at most an exact name and a prefix rule. */
	n->pfx_out = n->pfx_in;
	n->end_rule = 0;
	while (lo < it->hi && b->sorted[lo]->len == end) {
		__u32 rule = b->rule_of[lo] + 1;

		if (b->sorted[lo]->prefix)
			n->pfx_out = rule;
		else
			n->end_rule = rule;
		lo++;
	}
	if (!n->end_rule)
		n->end_rule = n->pfx_out;
	/* Children, one per distinct next byte, in symbol order. */
	n->first_child = b->qtail;
	n->mask = 0;
	while (lo < it->hi) {
		unsigned char c = b->sorted[lo]->name[end];
		__u32 hi = lo + 1;
		struct build_item *child = &b->queue[b->qtail];

		while (hi < it->hi && (unsigned char)b->sorted[hi]->name[end] == c)
			hi++;
		n->mask |= 1ULL << t->sym[c];
		child->lo = lo;
		child->hi = hi;
		child->depth = end + 1;
		child->node = b->qtail++;
		t->nodes[child->node].pfx_in = n->pfx_out;
		lo = hi;
	}
}

/* x << by, with every bit that would reach bit 63 or beyond kept in bit 63. */
static __u64 shift_lens(__u64 x, __u32 by)
{
	if (by >= 63)
		return x ? 1ULL << 63 : 0;
	return (x << by) | ((x >> (63 - by)) ? 1ULL << 63 : 0);
}

/*
 * rem_lens of every node (see trie.h), children first: breadth-first
 * numbering puts every child after its parent. A prefix rule covering the
 * label (pfx_in) or the names past it (pfx_out) admits every such length.
 */
static void set_rem_lens(struct hs_trie *t)
{
	for (__u32 i = t->n_nodes; i-- > 0;) {
		struct hs_node *n = &t->nodes[i];
		__u64 lens = 0;
		__u32 k = 0;

		if (n->pfx_in)
			lens = ~0ULL;
		if (n->pfx_out)
			lens |= ~0ULL << (n->label_len + 1 < 63 ? n->label_len + 1 : 63);
		if (n->end_rule)
			lens |= 1ULL << (n->label_len < 63 ? n->label_len : 63);
		for (__u32 c = 0; c < HS_MAX_SYMS; c++)
			if (n->mask & (1ULL << c))
				lens |= shift_lens(t->nodes[n->first_child + k++].rem_lens,
						   n->label_len + 1);
		n->rem_lens = lens;
	}
}

int hs_compile(const struct hs_list *l, struct hs_trie *t, struct hs_trie_stats *st,
	       struct hs_err *err)
{
	struct builder b = { .t = t };
	__u8 seen[256] = { 0 };
	__u32 i, c, nsym = 0, maxd = 0;
	int r = 0;

	if (!l->n || l->n > HS_MAX_NAMES) {
		snprintf(err->msg, sizeof(err->msg), "cannot compile a list of %zu names (1..%d)",
			 l->n, HS_MAX_NAMES);
		err->bad_input = 1;
		return -EINVAL;
	}
	memset(t, 0, sizeof(*t));
	t->magic = HS_TRIE_MAGIC;
	t->version = HS_TRIE_VERSION;
	t->flags = l->fold_underscore ? HS_TRIE_F_FOLD_UNDERSCORE : 0;
	t->n_rules = l->n;

	/* Symbols: one per folded byte that occurs, in byte order. */
	for (i = 0; i < l->n; i++) {
		for (c = 0; c < l->names[i].len; c++)
			seen[(unsigned char)l->names[i].name[c]] = 1;
		if (l->names[i].len > maxd)
			maxd = l->names[i].len;
		t->rules[i].hit_slot = i;
		t->rules[i].action = l->names[i].action;
		t->rules[i].flags = l->names[i].prefix ? HS_RULE_F_PREFIX : 0;
	}
	memset(t->sym, HS_SYM_NONE, sizeof(t->sym));
	for (c = 0; c < 256; c++) {
		if (!seen[c])
			continue;
		if (nsym == HS_SYM_NONE) {
			/* Cannot happen: a folded token alphabet has < 63 bytes. */
			snprintf(err->msg, sizeof(err->msg), "too many distinct name bytes");
			err->bad_input = 1;
			return -EINVAL;
		}
		seen[c] = 0x80 | nsym++;
	}
	for (c = 0; c < 256; c++) {
		unsigned char f = hs_fold_byte(c, l->fold_underscore);

		t->canon[c] = f;
		if (f && (seen[f] & 0x80))
			t->sym[c] = seen[f] & 0x7f;
	}
	t->n_syms = nsym;
	t->max_depth = maxd;

	b.sorted = calloc(l->n, sizeof(*b.sorted));
	b.rule_of = calloc(l->n, sizeof(*b.rule_of));
	b.queue = calloc(HS_MAX_NODES, sizeof(*b.queue));
	if (!b.sorted || !b.rule_of || !b.queue) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		err->bad_input = 0;
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < l->n; i++)
		b.sorted[i] = &l->names[i];
	qsort(b.sorted, l->n, sizeof(*b.sorted), cmp_name);
	for (i = 0; i < l->n; i++)
		b.rule_of[i] = b.sorted[i] - l->names;

	b.queue[0] = (struct build_item){ .lo = 0, .hi = l->n, .depth = 0, .node = 0 };
	b.qtail = 1;
	while (b.qhead < b.qtail)
		build_node(&b, &b.queue[b.qhead++]);
	t->n_nodes = b.qtail;

	set_rem_lens(t);
	/* root2[] is derived from the step function itself, so the shortcut
	 * cannot disagree with stepping. Symbols without a byte (63, and ids
	 * past the last one in use) behave like byte 0, which is in no name. */
	{
		unsigned char rep[HS_MAX_SYMS] = { 0 };

		for (c = 255; c > 0; c--)
			if (t->sym[c] != HS_SYM_NONE)
				rep[t->sym[c]] = c;
		for (i = 0; i < HS_MAX_SYMS; i++) {
			__u32 s1 = hs_trie_step(t, HS_TRIE_ROOT, rep[i]);

			for (c = 0; c < HS_MAX_SYMS; c++)
				t->root2[i * HS_MAX_SYMS + c] = hs_trie_step(t, s1, rep[c]);
		}
	}
	if (st) {
		st->names = l->n;
		st->nodes = t->n_nodes;
		st->label_bytes = t->label_bytes;
		st->distinct_bytes = nsym;
		st->max_depth = maxd;
		st->bytes = __builtin_offsetof(struct hs_trie, nodes) +
			    t->n_nodes * sizeof(struct hs_node) + t->label_bytes;
	}
out:
	free(b.sorted);
	free(b.rule_of);
	free(b.queue);
	return r;
}

int hs_trie_validate(const struct hs_trie *t, struct hs_err *err)
{
	err->bad_input = 1;
	if (t->magic != HS_TRIE_MAGIC || t->version != HS_TRIE_VERSION) {
		snprintf(err->msg, sizeof(err->msg),
			 "not a hdrstrip trie (magic %#x version %u; expected %#x version %u)",
			 t->magic, t->version, HS_TRIE_MAGIC, HS_TRIE_VERSION);
		return -EINVAL;
	}
	if (!t->n_nodes || t->n_nodes > HS_MAX_NODES || !t->n_rules || t->n_rules > HS_MAX_NAMES ||
	    t->label_bytes > HS_MAX_LABEL_BYTES) {
		snprintf(err->msg, sizeof(err->msg),
			 "trie counts out of range (%u nodes, %u rules, %u label bytes)", t->n_nodes,
			 t->n_rules, t->label_bytes);
		return -EINVAL;
	}
	return 0;
}
