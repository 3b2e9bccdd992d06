/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The compiled header list: a bit-packed, path-compressed trie in one flat
 * block, and the lookup over it.
 *
 * Layout. Every byte that occurs in a (folded) name gets a symbol 0..62; the
 * 256-entry sym[] table maps bytes to symbols, so case folding and '-'/'_'
 * folding cost nothing at lookup time: both spellings of a byte are simply
 * entries with the same symbol. Bytes that occur in no name map to symbol 63,
 * which no node ever has as a child, so they need no branch either.
 *
 * A node is entered through one symbol of its parent's 64-bit child mask,
 * then has an edge label: bytes that must follow one by one (single-child
 * chains compressed away), compared through canon[], which maps a byte to
 * its folded spelling or to 0 for non-token bytes. Children of a node are
 * contiguous and ordered by symbol, so the child for symbol c is
 * first_child + popcount(mask & (bit(c) - 1)).
 *
 * Lookups are a step function over one byte at a time, so a name split
 * across TCP segments resumes from a saved 32-bit state:
 *   bits 0..15  node index, bits 16..23 bytes of its label already matched;
 *   HS_TRIE_STICKY | rule: a prefix rule matched, whatever follows;
 *   HS_TRIE_DEAD: no rule can match any more (rejected early).
 */
#ifndef HDRSTRIP_TRIE_H
#define HDRSTRIP_TRIE_H

#include "compiler.h"
#include "limits.h"

#define HS_TRIE_MAGIC 0x52545348u /* "HSTR" */
#define HS_TRIE_VERSION 1

/* Header flags. */
#define HS_TRIE_F_FOLD_UNDERSCORE 0x1 /* '_' matches '-' */

/* Rule flags. */
#define HS_RULE_F_PREFIX 0x1 /* name ended in '*' */

enum hs_action {
	HS_ACT_MASK = 0, /* rewrite the field line in place, same length */
	HS_ACT_DROP = 1, /* drop the packet that carries it */
	HS_ACT_MAX
};

#define HS_SYM_NONE 63
#define HS_LABEL_MASK (HS_MAX_LABEL_BYTES - 1)

#define HS_TRIE_ROOT 0u
#define HS_TRIE_STICKY 0x80000000u
#define HS_TRIE_DEAD 0xffffffffu

struct hs_rule {
	__u16 hit_slot; /* index into the header_hits map, stable across updates */
	__u8 action; /* enum hs_action */
	__u8 flags; /* HS_RULE_F_* */
};

struct hs_node {
	__u64 mask; /* bit c set: a child for symbol c */
	__u32 first_child; /* node index of the child with the lowest symbol */
	__u32 label_off; /* this node's edge label, in labels[] */
	__u16 end_rule; /* rule + 1 matching a name that ends at the label's end */
	__u16 pfx_in; /* rule + 1 of the prefix rule covering names that end or
			 diverge inside the label (0: none) */
	__u16 pfx_out; /* same, for names that diverge after the label */
	__u8 label_len;
	__u8 reserved;
};

struct hs_trie {
	__u32 magic;
	__u16 version;
	__u16 flags; /* HS_TRIE_F_* */
	__u32 n_nodes;
	__u32 n_rules;
	__u32 label_bytes;
	__u32 n_syms;
	__u32 max_depth; /* longest name, in bytes */
	__u32 generation; /* bumped by the loader on every update */
	__u8 sym[256];
	__u8 canon[256];
	/* State after the first two symbols: one load resolves most misses. */
	__u32 root2[HS_MAX_SYMS * HS_MAX_SYMS];
	struct hs_rule rules[HS_MAX_NAMES];
	struct hs_node nodes[HS_MAX_NODES];
	/* +8: the 8-byte label compare may read past the last label. */
	__u8 labels[HS_MAX_LABEL_BYTES + 8];
};

_Static_assert(sizeof(struct hs_rule) == 4, "hs_rule layout");
_Static_assert(sizeof(struct hs_node) == 24, "hs_node layout");
_Static_assert(__builtin_offsetof(struct hs_trie, sym) == 32, "hs_trie header");
_Static_assert(__builtin_offsetof(struct hs_trie, root2) % 8 == 0, "root2 alignment");
_Static_assert(__builtin_offsetof(struct hs_trie, nodes) % 8 == 0, "nodes alignment");
_Static_assert((HS_MAX_LABEL_BYTES & HS_LABEL_MASK) == 0, "labels size is a power of two");
_Static_assert(HS_MAX_NODES < 0x10000, "node index fits the state's 16 bits");
_Static_assert(HS_MAX_NAME_LEN < 0x100, "label position fits the state's 8 bits");

HS_INLINE __u32 hs_trie_fail(__u16 pfx)
{
	return pfx ? (HS_TRIE_STICKY | (__u32)(pfx - 1)) : HS_TRIE_DEAD;
}

/* True when no further byte can change the verdict of state @s. */
HS_INLINE int hs_trie_final(__u32 s)
{
	return (s & HS_TRIE_STICKY) != 0;
}

/* Advance state @s by byte @b. */
HS_INLINE __u32 hs_trie_step(const struct hs_trie *t, __u32 s, __u8 b)
{
	const struct hs_node *n;
	__u32 idx = s & 0xffff, pos = (s >> 16) & 0xff;
	__u64 bit;

	if (s & HS_TRIE_STICKY)
		return s;
	if (idx >= HS_MAX_NODES)
		return HS_TRIE_DEAD;
	n = &t->nodes[idx];
	if (pos < n->label_len) {
		if (t->canon[b] == t->labels[(n->label_off + pos) & HS_LABEL_MASK])
			return s + (1u << 16);
		return hs_trie_fail(n->pfx_in);
	}
	bit = 1ULL << (t->sym[b] & (HS_MAX_SYMS - 1));
	if (!(n->mask & bit))
		return hs_trie_fail(n->pfx_out);
	return n->first_child + hs_popcount64(n->mask & (bit - 1));
}

/* Verdict for a name that ends in state @s: rule index + 1, or 0. */
HS_INLINE __u32 hs_trie_result(const struct hs_trie *t, __u32 s)
{
	const struct hs_node *n;
	__u32 idx = s & 0xffff, pos = (s >> 16) & 0xff;

	if (s == HS_TRIE_DEAD)
		return 0;
	if (s & HS_TRIE_STICKY)
		return (s & 0xffff) + 1;
	if (idx >= HS_MAX_NODES)
		return 0;
	n = &t->nodes[idx];
	return pos < n->label_len ? n->pfx_in : n->end_rule;
}

/*
 * Fold eight name bytes the way canon[] does: ASCII upper case to lower
 * case and, when the list folds them, '_' to '-'. Bytes that are not token
 * characters are left alone, so they never equal a label byte. Exact
 * per-byte tests (no borrow between bytes): '^' next to '_' stays '^'.
 */
HS_INLINE __u64 hs_fold8(__u64 w, int fold_underscore)
{
	const __u64 low7 = 0x7f7f7f7f7f7f7f7fULL;
	__u64 h = w & low7;
	__u64 ge_a = h + HS_ONES * (0x80 - 'A');
	__u64 gt_z = h + HS_ONES * (0x80 - 'Z' - 1);
	__u64 upper = ge_a & ~gt_z & ~w & HS_HIGHS;

	w |= upper >> 2;
	if (fold_underscore) {
		__u64 x = w ^ (HS_ONES * '_');
		__u64 us = ~(((x & low7) + low7) | x) & HS_HIGHS;

		w ^= (us >> 7) * ('_' ^ '-');
	}
	return w;
}

/* Top bit of every byte of @x that is not zero (exact). */
HS_INLINE __u64 hs_nonzero8(__u64 x)
{
	const __u64 low7 = 0x7f7f7f7f7f7f7f7fULL;

	return (((x & low7) + low7) | x) & HS_HIGHS;
}

/*
 * Whole-name lookup: rule index + 1, or 0. Equal by construction to stepping
 * every byte from the root (the unit tests check it on every split); it only
 * takes shortcuts: one root2[] load for the first two bytes, and labels
 * compared eight bytes at a time.
 */
HS_INLINE __u32 hs_trie_lookup(const struct hs_trie *t, const __u8 *name, __u32 len)
{
	int fold_us = t->flags & HS_TRIE_F_FOLD_UNDERSCORE;
	__u32 s = HS_TRIE_ROOT, i = 0;

	if (len >= 2) {
		s = t->root2[(t->sym[name[0]] & (HS_MAX_SYMS - 1)) * HS_MAX_SYMS +
			     (t->sym[name[1]] & (HS_MAX_SYMS - 1))];
		i = 2;
	}
	while (i < len && !hs_trie_final(s)) {
		const struct hs_node *n;
		__u32 idx = s & 0xffff, pos = (s >> 16) & 0xff;
		__u32 avail, k, same;
		__u64 diff;

		if (idx >= HS_MAX_NODES)
			return 0;
		n = &t->nodes[idx];
		if (pos >= n->label_len || len - i < 8) {
			s = hs_trie_step(t, s, name[i++]);
			continue;
		}
		avail = n->label_len - pos;
		k = avail < 8 ? avail : 8;
		diff = hs_fold8(hs_load64(name + i), fold_us) ^
		       hs_load64(&t->labels[(n->label_off + pos) & HS_LABEL_MASK]);
		same = diff ? hs_first_byte(hs_nonzero8(diff)) : 8;
		if (same < k)
			return n->pfx_in;
		s += k << 16;
		i += k;
	}
	return hs_trie_result(t, s);
}

#endif /* HDRSTRIP_TRIE_H */
