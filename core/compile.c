// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The trie compiler. Names are sorted by their folded bytes; a node covers a
 * run of sorted names that share its path. Nodes are numbered breadth-first
 * so that the children of every node are contiguous and ordered by symbol,
 * which is what the popcount child index needs. Rules of one name and kind
 * (for disjoint directions) share one place in the trie.
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
	__u32 *name_off; /* sorted index -> its copy in labels[] */
	struct build_item *queue;
	__u32 qhead, qtail;
};

static int cmp_name(const void *a, const void *b)
{
	const struct hs_name *x = *(const struct hs_name *const *)a;
	const struct hs_name *y = *(const struct hs_name *const *)b;
	int r = strcmp(x->name, y->name);

	/* Within equal bytes the exact name comes before the prefix rule,
	 * and rules of one name and kind (for other directions) keep their
	 * list order: the first is the one the trie's nodes name. */
	if (r)
		return r;
	if (x->prefix != y->prefix)
		return x->prefix - y->prefix;
	return (x > y) - (x < y);
}

/* The directions of a name; one built by hand with none applies to
 * requests, as a list line that names none. */
static unsigned int name_dirs(const struct hs_name *nm)
{
	return nm->directions ? nm->directions : HS_DIRSET_REQUEST;
}

static int same_name(const struct hs_name *a, const struct hs_name *b)
{
	return a->len == b->len && !memcmp(a->name, b->name, a->len);
}

/* Does @nm begin with prefix rule @p's bytes (or equal them)? */
static int begins(const struct hs_name *nm, const struct hs_name *p)
{
	return p->len <= nm->len && !memcmp(nm->name, p->name, p->len);
}

/* Rule + 1 of the first of sorted[@lo..@hi) that applies to direction
 * @d, or 0. */
static __u16 first_for(const struct hs_name *const *sorted, __u32 lo, __u32 hi,
		       const struct hs_name *base, int d)
{
	for (__u32 k = lo; k < hi; k++)
		if (name_dirs(sorted[k]) & (1u << d))
			return (__u16)(sorted[k] - base + 1);
	return 0;
}

/*
 * Each rule's dir_rule[] (see struct hs_rule): which rule a list of only
 * the rules for direction d resolves its name to. One pass over the
 * sorted names keeps a stack of the prefix rules that begin the current
 * name (in sorted order a name's prefixes come before it, and a name
 * between a prefix and one of its extensions extends it too), each with
 * the rule + 1 that covers its name in each direction: its own for d,
 * else its parent's.
 */
/* How much a rule's action keeps from a reader: reject (a drop that tells
 * the sender), drop, then mask, then observe. */
static int action_rank(__u8 a)
{
	switch (a) {
	case HS_ACT_REJECT:
		return 3;
	case HS_ACT_DROP:
		return 2;
	case HS_ACT_MASK:
		return 1;
	default:
		return 0;
	}
}

/* Of rules @a and @b (rule + 1, 0: none), the one a stream of either
 * direction applies: the stronger action; @a on a tie (HS_DIR_EITHER). */
static __u16 stronger(const struct hs_trie *t, __u16 a, __u16 b)
{
	if (!a || !b)
		return a ? a : b;
	return action_rank(t->rules[b - 1].action) > action_rank(t->rules[a - 1].action) ? b : a;
}

static void set_dir_rules(struct hs_trie *t, const struct hs_list *l,
			  const struct hs_name *const *sorted, __u32 n)
{
	struct {
		const struct hs_name *nm;
		__u16 rule[2];
	} stack[HS_MAX_NAME_LEN + 1];
	__u32 depth = 0, i, j, k, m;

	for (i = 0; i < n; i = j) {
		/* [i, k) the exact rules of this name, [k, j) its prefix rules. */
		for (j = i; j < n && same_name(sorted[j], sorted[i]); j++)
			;
		for (k = i; k < j && !sorted[k]->prefix; k++)
			;
		while (depth && !begins(sorted[i], stack[depth - 1].nm))
			depth--;
		if (k < j && depth < HS_ARRAY_SIZE(stack)) {
			stack[depth].nm = sorted[k];
			for (int d = 0; d < 2; d++) {
				__u16 own = first_for(sorted, k, j, l->names, d);

				stack[depth].rule[d] = own     ? own
						       : depth ? stack[depth - 1].rule[d]
							       : 0;
			}
			depth++;
		}
		for (m = i; m < j; m++) {
			struct hs_rule *r = &t->rules[sorted[m] - l->names];

			for (int d = 0; d < 2; d++) {
				__u16 v = 0;

				if (name_dirs(sorted[m]) & (1u << d))
					v = (__u16)(sorted[m] - l->names + 1);
				else if (!sorted[m]->prefix)
					v = first_for(sorted, i, k, l->names, d);
				/* Else the prefix rules that cover it: its own
				 * name's first, which the stack's top holds. */
				if (!v && depth)
					v = stack[depth - 1].rule[d];
				r->dir_rule[d] = v;
			}
		}
	}
	for (i = 0; i < n; i++) {
		struct hs_rule *r = &t->rules[i];

		r->dir_rule[HS_DIR_EITHER] =
			stronger(t, r->dir_rule[HS_DIR_REQUEST], r->dir_rule[HS_DIR_RESPONSE]);
		for (int d = 0; d < HS_DIRS; d++) {
			__u16 v = r->dir_rule[d];

			if (v && t->rules[v - 1].action != HS_ACT_OBSERVE)
				r->flags |= HS_RULE_F_ENFORCE(d);
		}
	}
}

/*
 * Copy the sorted names into labels[], each once: a name that begins the
 * next one shares that one's copy (every name between a name and one of its
 * extensions also extends it, so looking at the next one is enough). At
 * most HS_MAX_NAMES * HS_MAX_NAME_LEN bytes, the size of labels[].
 */
static void store_names(struct builder *b, __u32 n)
{
	struct hs_trie *t = b->t;

	for (__u32 i = n; i-- > 0;) {
		const struct hs_name *nm = b->sorted[i],
				     *next = i + 1 < n ? b->sorted[i + 1] : NULL;

		if (next && next->len >= nm->len && !memcmp(next->name, nm->name, nm->len)) {
			b->name_off[i] = b->name_off[i + 1];
			continue;
		}
		b->name_off[i] = t->label_bytes;
		memcpy(&t->labels[t->label_bytes], nm->name, nm->len);
		t->label_bytes += nm->len;
	}
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
			if (b->sorted[i]->len <= end ||
			    b->sorted[i]->name[end] != b->sorted[lo]->name[end])
				same = 0;
		if (!same)
			break;
		end++;
	}
	n->label_off = b->name_off[lo] + it->depth;
	n->label_len = end - it->depth;
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

/*
 * What hs_trie_lookup reads beyond the step function's fields (end_depth
 * and the summaries it filters on, name_lens and last_syms; see trie.h),
 * and the enforce bits of premasking (scan.h). Breadth-first numbering puts every child after its parent: depths
 * go forward, summaries backward, children first. A prefix rule covering
 * the label (pfx_in) or the names past it (pfx_out) admits every length and
 * every last byte.
 */
/* Is a name the trie resolves to rule @v - 1 (0: none) masked or dropped
 * in direction @d (by the rule dir_rule[d] names)? */
static int enforces(const struct hs_trie *t, __u32 v, int d)
{
	return v && (t->rules[v - 1].flags & HS_RULE_F_ENFORCE(d));
}

/* Has node @n a child with its direction @d enforce bit set (children come
 * later in the numbering, so theirs are set already)? */
static int children_enforce(const struct hs_trie *t, const struct hs_node *n, int d)
{
	__u32 k = 0;

	for (__u64 m = n->mask; m; m &= m - 1, k++) {
		__u32 c = n->first_child + k;

		if ((t->enforce[d][c >> 6] >> (c & 63)) & 1)
			return 1;
	}
	return 0;
}

static int set_summaries(struct hs_trie *t)
{
	__u32 *depth = calloc(HS_MAX_NODES, sizeof(*depth));

	if (!depth)
		return -ENOMEM;
	for (__u32 i = 0; i < t->n_nodes; i++) {
		const struct hs_node *n = &t->nodes[i];
		__u32 k = 0;

		for (__u64 m = n->mask; m; m &= m - 1)
			depth[n->first_child + k++] = depth[i] + n->label_len + 1;
	}
	for (__u32 i = t->n_nodes; i-- > 0;) {
		struct hs_node *n = &t->nodes[i];
		__u32 lens = 0, last = 0, k = 0;

		n->end_depth = depth[i] + n->label_len;
		if (n->pfx_in || n->pfx_out)
			lens = last = ~0u;
		if (n->end_rule) {
			/* The name ending here is the path to the label's end,
			 * which labels[] holds in one piece (at least one byte). */
			__u8 b = t->labels[n->label_off + n->label_len - 1];

			lens |= 1u << ((depth[i] + n->label_len) & 31);
			last |= 1u << (t->sym[b] & 31);
		}
		/* The children are the mask's set bits, contiguous from first_child. */
		for (__u64 m = n->mask; m; m &= m - 1) {
			const struct hs_node *child = &t->nodes[n->first_child + k++];

			lens |= child->name_lens;
			last |= child->last_syms;
		}
		n->name_lens = lens;
		n->last_syms = last;
		for (int d = 0; d < HS_DIRS; d++)
			if (enforces(t, n->end_rule, d) || enforces(t, n->pfx_in, d) ||
			    enforces(t, n->pfx_out, d) || children_enforce(t, n, d))
				t->enforce[d][i >> 6] |= 1ULL << (i & 63);
	}
	free(depth);
	return 0;
}

/*
 * The filler name a masked line takes (hs_trie.fill): "x-hdrstrip" with a
 * first byte that starts no listed name ('x' unless the list names some
 * "x..." field, as most do, then 'y', ...). A masked line reaches the
 * server with a cut of it (its first 1 to 10 bytes) for a name, a masked
 * continuation line with that byte repeated, and a name rewritten ahead
 * of a buffer's end with the cut the buffer held: whatever bytes follow
 * such a line, even from a segment scanned with no state, its name cannot
 * be a listed one (the mid-name findings in tests/fuzz/regress/tcp).
 */
static int choose_fill(struct hs_trie *t)
{
	/* Letters first, then the other token bytes. */
	static const char order[] = "xyzqjkvwgfhbpmdcnlutsroiea0123456789!#$%&'*+.^`|~";
	char name[HS_FILL_NAME_LEN + 1] = "x-hdrstrip";

	for (size_t i = 0; order[i]; i++) {
		if (hs_trie_step(t, HS_TRIE_ROOT, (unsigned char)order[i]) != HS_TRIE_DEAD)
			continue;
		name[0] = order[i];
		memcpy(&t->fill[0], name, 8);
		t->fill[1] = (__u64)(unsigned char)name[8] | (__u64)(unsigned char)name[9] << 8 |
			     0x78787878203a0000ULL; /* ": xxxx" */
		return 0;
	}
	return -1;
}

int hs_compile(const struct hs_list *l, struct hs_trie *t, struct hs_trie_stats *st,
	       struct hs_err *err)
{
	struct builder b = { .t = t };
	__u8 seen[256] = { 0 };
	__u32 i, c, nsym = 0, maxd = 0, n_uniq;
	int r = 0;

	if (!l->n || l->n > HS_MAX_NAMES) {
		snprintf(err->msg, sizeof(err->msg), "cannot compile a list of %zu names (1..%d)",
			 l->n, HS_MAX_NAMES);
		err->bad_input = 1;
		return -EINVAL;
	}
	/* The labels hold HS_MAX_NAME_LEN bytes a name: a list built by hand
	 * (not by hs_list_parse) is held to that too. */
	for (i = 0; i < l->n; i++)
		if (!l->names[i].len || l->names[i].len > HS_MAX_NAME_LEN) {
			snprintf(err->msg, sizeof(err->msg),
				 "cannot compile name %u: %u bytes long (1..%d)", i + 1,
				 l->names[i].len, HS_MAX_NAME_LEN);
			err->bad_input = 1;
			return -EINVAL;
		}
	memset(t, 0, sizeof(*t));
	t->magic = HS_TRIE_MAGIC;
	t->version = HS_TRIE_VERSION;
	t->flags = l->fold_underscore ? HS_TRIE_F_FOLD_UNDERSCORE : 0;
	for (i = 0; i < l->n; i++) {
		if (l->names[i].prefix)
			t->flags |= HS_TRIE_F_PREFIX_RULES;
		if (name_dirs(&l->names[i]) & HS_DIRSET_RESPONSE)
			t->flags |= HS_TRIE_F_RESPONSE_RULES;
	}
	t->n_rules = l->n;

	/* Symbols: one per folded byte that occurs, in byte order. */
	for (i = 0; i < l->n; i++) {
		for (c = 0; c < l->names[i].len; c++)
			seen[(unsigned char)l->names[i].name[c]] = 1;
		if (l->names[i].len > maxd)
			maxd = l->names[i].len;
		t->rules[i].hit_slot = i;
		t->rules[i].action = l->names[i].action;
		t->rules[i].flags = (l->names[i].prefix ? HS_RULE_F_PREFIX : 0) |
				    name_dirs(&l->names[i]) * HS_RULE_F_REQUEST;
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

	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	b.sorted = calloc(l->n, sizeof(*b.sorted));
	b.rule_of = calloc(l->n, sizeof(*b.rule_of));
	b.name_off = calloc(l->n, sizeof(*b.name_off));
	b.queue = calloc(HS_MAX_NODES, sizeof(*b.queue));
	if (!b.sorted || !b.rule_of || !b.name_off || !b.queue) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		err->bad_input = 0;
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < l->n; i++)
		b.sorted[i] = &l->names[i];
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	qsort(b.sorted, l->n, sizeof(*b.sorted), cmp_name);
	set_dir_rules(t, l, b.sorted, l->n);
	/* The trie holds each name of each kind once, for its first rule;
	 * the others are reached through that one's dir_rule[]. */
	for (i = 0, n_uniq = 0; i < l->n; i++) {
		const struct hs_name *last = n_uniq ? b.sorted[n_uniq - 1] : NULL;

		if (last && same_name(b.sorted[i], last) && b.sorted[i]->prefix == last->prefix)
			continue;
		b.sorted[n_uniq] = b.sorted[i];
		b.rule_of[n_uniq++] = b.sorted[i] - l->names;
	}
	store_names(&b, n_uniq);

	b.queue[0] = (struct build_item){ .lo = 0, .hi = n_uniq, .depth = 0, .node = 0 };
	b.qtail = 1;
	while (b.qhead < b.qtail)
		build_node(&b, &b.queue[b.qhead++]);
	t->n_nodes = b.qtail;
	/* At most 2n - 1 nodes (each name adds a leaf and at most one
	 * branching node), so the spare node stays empty. */
	if (t->n_nodes > HS_TRIE_SPARE) {
		snprintf(err->msg, sizeof(err->msg), "%u nodes: more than the trie holds (%u)",
			 t->n_nodes, (unsigned int)HS_TRIE_SPARE);
		err->bad_input = 0;
		r = -E2BIG;
		goto out;
	}

	if (set_summaries(t)) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		err->bad_input = 0;
		r = -ENOMEM;
		goto out;
	}
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
	if (choose_fill(t)) {
		/* Not from a list file ('#' starts a comment there, never a
		 * name), but hs_compile() takes any hs_list. */
		snprintf(err->msg, sizeof(err->msg),
			 "the list's names start with every letter, digit and token symbol: a "
			 "masked line needs a first byte no listed name starts with; remove "
			 "the names (or prefix rules) of one first byte");
		err->bad_input = 1;
		r = -EINVAL;
		goto out;
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
	free(b.name_off);
	free(b.queue);
	return r;
}

int hs_trie_validate(const struct hs_trie *t, struct hs_err *err)
{
	err->bad_input = 1;
	if (t->magic != HS_TRIE_MAGIC || t->version != HS_TRIE_VERSION) {
		snprintf(err->msg, sizeof(err->msg),
			 "not a hdrstrip trie (magic %#x version %u; expected %#x version %u)",
			 t->magic, (unsigned int)t->version, HS_TRIE_MAGIC,
			 (unsigned int)HS_TRIE_VERSION);
		return -EINVAL;
	}
	if (!t->n_nodes || t->n_nodes > HS_TRIE_SPARE || !t->n_rules || t->n_rules > HS_MAX_NAMES ||
	    t->label_bytes > HS_MAX_LABEL_BYTES) {
		snprintf(err->msg, sizeof(err->msg),
			 "trie counts out of range (%u nodes, %u rules, %u label bytes)",
			 t->n_nodes, t->n_rules, t->label_bytes);
		return -EINVAL;
	}
	/* hs_trie_lookup sends dead ends to the spare node and trusts it to
	 * admit no name. */
	if (t->nodes[HS_TRIE_SPARE].name_lens || t->nodes[HS_TRIE_SPARE].last_syms) {
		snprintf(err->msg, sizeof(err->msg), "trie's spare node %u is not empty",
			 (unsigned int)HS_TRIE_SPARE);
		return -EINVAL;
	}
	/* hs_trie_lookup trusts the flag to skip prefix handling, and the
	 * programs trust the response-rules flag to skip responses. */
	for (__u32 i = 0; i < t->n_rules; i++) {
		const struct hs_rule *r = &t->rules[i];

		if ((r->flags & HS_RULE_F_PREFIX) && !(t->flags & HS_TRIE_F_PREFIX_RULES)) {
			snprintf(err->msg, sizeof(err->msg),
				 "trie has a prefix rule (%u) but not the prefix-rules flag", i);
			return -EINVAL;
		}
		if ((r->flags & HS_RULE_F_RESPONSE) && !(t->flags & HS_TRIE_F_RESPONSE_RULES)) {
			snprintf(err->msg, sizeof(err->msg),
				 "trie has a response rule (%u) but not the response-rules flag",
				 i);
			return -EINVAL;
		}
		for (int d = 0; d < HS_DIRS; d++)
			if (r->dir_rule[d] > t->n_rules) {
				snprintf(
					err->msg, sizeof(err->msg),
					"trie's rule %u names rule %u for direction %d, of %u rules",
					i, r->dir_rule[d], d, t->n_rules);
				return -EINVAL;
			}
	}
	return 0;
}
