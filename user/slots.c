// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "slots.h"

struct walk {
	const struct hs_trie *t;
	hs_rule_name *names;
	unsigned char byte_of[HS_MAX_SYMS];
	char path[HS_MAX_NAME_LEN + 1];
	unsigned int seen;
};

static void set_name(struct walk *w, __u32 rule, __u32 len, int prefix)
{
	if (rule >= w->t->n_rules || rule >= HS_MAX_NAMES)
		return;
	memcpy(w->names[rule], w->path, len);
	w->names[rule][len] = prefix ? '*' : 0;
	w->names[rule][len + prefix] = 0;
	w->seen++;
}

/* Depth-first; the depth is bounded by the name length limit. */
static int walk_node(struct walk *w, __u32 idx, __u32 depth)
{
	const struct hs_node *n;
	__u32 end;

	if (idx >= w->t->n_nodes || idx >= HS_MAX_NODES)
		return -EINVAL;
	n = &w->t->nodes[idx];
	end = depth + n->label_len;
	if (end > HS_MAX_NAME_LEN || n->label_off + n->label_len > HS_MAX_LABEL_BYTES)
		return -EINVAL;
	memcpy(w->path + depth, &w->t->labels[n->label_off], n->label_len);
	if (n->pfx_out != n->pfx_in && n->pfx_out)
		set_name(w, n->pfx_out - 1, end, 1);
	if (n->end_rule && n->end_rule != n->pfx_out)
		set_name(w, n->end_rule - 1, end, 0);
	for (__u32 c = 0, k = 0; c < HS_MAX_SYMS; c++) {
		if (!(n->mask & (1ULL << c)))
			continue;
		if (end >= HS_MAX_NAME_LEN)
			return -EINVAL;
		w->path[end] = w->byte_of[c];
		if (walk_node(w, n->first_child + k++, end + 1))
			return -EINVAL;
	}
	return 0;
}

int hs_trie_names(const struct hs_trie *t, hs_rule_name *names)
{
	struct walk w = { .t = t, .names = names };

	if (t->magic != HS_TRIE_MAGIC || !t->n_nodes || t->n_rules > HS_MAX_NAMES)
		return -EINVAL;
	for (int c = 255; c >= 0; c--)
		if (t->sym[c] != HS_SYM_NONE)
			w.byte_of[t->sym[c] & (HS_MAX_SYMS - 1)] = t->canon[c];
	for (__u32 r = 0; r < t->n_rules; r++)
		names[r][0] = 0;
	if (walk_node(&w, HS_TRIE_ROOT, 0) || w.seen != t->n_rules)
		return -EINVAL;
	return 0;
}

/* qsort has no context argument: the names being sorted. */
static hs_rule_name *sort_names;

static int cmp_order(const void *a, const void *b)
{
	return strcmp(sort_names[*(const __u32 *)a], sort_names[*(const __u32 *)b]);
}

int hs_assign_slots(const struct hs_trie *old, struct hs_trie *nt,
		    unsigned char fresh[HS_MAX_HIT_SLOTS])
{
	__u32 order[HS_MAX_NAMES];
	hs_rule_name *on = NULL, *nn = NULL;
	unsigned char used[HS_MAX_HIT_SLOTS] = { 0 };
	int r = -ENOMEM;
	__u32 next = 0;

	memset(fresh, 0, HS_MAX_HIT_SLOTS);
	nn = calloc(HS_MAX_NAMES, sizeof(*nn));
	on = calloc(HS_MAX_NAMES, sizeof(*on));
	if (!nn || !on)
		goto out;
	r = hs_trie_names(nt, nn);
	if (r)
		goto out;
	if (old && hs_trie_names(old, on))
		old = NULL; /* unreadable: start the counters afresh */
	for (__u32 i = 0; i < nt->n_rules; i++)
		nt->rules[i].hit_slot = HS_MAX_HIT_SLOTS;
	/* Names kept from the old list keep their slots (binary search over
	 * the old names sorted: an update of 1,000 names stays fast). */
	if (old) {
		for (__u32 j = 0; j < old->n_rules; j++)
			order[j] = j;
		sort_names = on;
		qsort(order, old->n_rules, sizeof(*order), cmp_order);
	}
	for (__u32 i = 0; old && i < nt->n_rules; i++) {
		__u32 lo = 0, hi = old->n_rules;

		while (lo < hi) {
			__u32 mid = (lo + hi) / 2;
			int c = strcmp(on[order[mid]], nn[i]);

			if (!c) {
				__u16 s = old->rules[order[mid]].hit_slot;

				if (s < HS_MAX_HIT_SLOTS && !used[s]) {
					nt->rules[i].hit_slot = s;
					used[s] = 1;
				}
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	/* New names take slots nobody keeps. */
	for (__u32 i = 0; i < nt->n_rules; i++) {
		if (nt->rules[i].hit_slot < HS_MAX_HIT_SLOTS)
			continue;
		while (next < HS_MAX_HIT_SLOTS && used[next])
			next++;
		if (next == HS_MAX_HIT_SLOTS) {
			r = -ENOSPC;
			goto out;
		}
		nt->rules[i].hit_slot = next;
		used[next] = 1;
		fresh[next] = 1;
	}
	r = 0;
out:
	free(nn);
	free(on);
	return r;
}
