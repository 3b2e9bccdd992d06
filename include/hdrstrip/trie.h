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
 * labels[] holds whole names, each once (a name that begins the next one in
 * sorted order shares its copy), and a node's label is the slice of one of
 * its names' copy that follows the node's path: labels[label_off - depth]
 * starts the whole path to the node, so a whole-name lookup can compare a
 * name with it in one piece.
 *
 * Lookups are a step function over one byte at a time, so a name split
 * across TCP segments resumes from a saved 32-bit state:
 *   bits 0..15  node index, bits 16..23 bytes of its label already matched;
 *   HS_TRIE_STICKY | rule: a prefix rule matched, whatever follows;
 *   HS_TRIE_DEAD: no rule can match any more (rejected early).
 */
#ifndef HDRSTRIP_TRIE_H
#define HDRSTRIP_TRIE_H

#include "portable.h"
#include "limits.h"
#include "names.h"

#define HS_TRIE_MAGIC 0x52545348u /* "HSTR" */
#define HS_TRIE_VERSION 5

/* Header flags. */
#define HS_TRIE_F_FOLD_UNDERSCORE 0x1 /* '_' matches '-' */
#define HS_TRIE_F_PREFIX_RULES 0x2 /* some rule is a prefix rule */
#define HS_TRIE_F_RESPONSE_RULES 0x4 /* some rule applies to responses */

/* Rule flags. */
#define HS_RULE_F_PREFIX 0x1 /* name ended in '*' */
#define HS_RULE_F_REQUEST 0x2 /* applies to requests */
#define HS_RULE_F_RESPONSE 0x4 /* applies to responses */
/* A name the trie resolves to this rule is masked or dropped in direction
 * @d (HS_DIR_*; by the rule its dir_rule[d] names). */
#define HS_RULE_F_ENFORCE(d) (0x8u << (d))
#define HS_RULE_F_ENFORCE_REQUEST 0x8
#define HS_RULE_F_ENFORCE_RESPONSE 0x10
#define HS_RULE_F_ENFORCE_EITHER 0x20

/*
 * Directions of a message: an index of hs_rule.dir_rule[]. A list line may
 * name the directions its rule applies to after its action (request,
 * response or both; request when it names none).
 */
#define HS_DIR_REQUEST 0
#define HS_DIR_RESPONSE 1
/* A stream that may be either (a segment between two inspected ports, of a
 * connection whose handshake was not seen; read line by line): the
 * stronger of the two directions' rules applies (drop, then mask, then
 * observe; the request's on a tie). Not a list word. */
#define HS_DIR_EITHER 2
#define HS_DIRS 3

/*
 * X(ID, name): the directions a rule applies to, a set of bits
 * 1 << HS_DIR_*; the name is the list file's word for it and what the CLI
 * prints. Rule flags hold the set one bit up (HS_RULE_F_REQUEST,
 * HS_RULE_F_RESPONSE). NONE is no rule's: a list line names one of the
 * others.
 */
#define HS_DIR_SETS(X)                                                                             \
	X(NONE, "none")                                                                            \
	X(REQUEST, "request")                                                                      \
	X(RESPONSE, "response")                                                                    \
	X(BOTH, "both")

enum hs_dir_set {
#define HS_DIR_SET_ENUM(id, name) HS_DIRSET_##id,
	HS_DIR_SETS(HS_DIR_SET_ENUM)
#undef HS_DIR_SET_ENUM
	HS_DIRSET_MAX
};
_Static_assert(HS_DIRSET_REQUEST == 1 << HS_DIR_REQUEST &&
		       HS_DIRSET_RESPONSE == 1 << HS_DIR_RESPONSE &&
		       HS_DIRSET_BOTH == (HS_DIRSET_REQUEST | HS_DIRSET_RESPONSE),
	       "a direction set is a bit a direction");
_Static_assert(HS_RULE_F_REQUEST == HS_DIRSET_REQUEST << 1 &&
		       HS_RULE_F_RESPONSE == HS_DIRSET_RESPONSE << 1,
	       "rule flags hold the direction set one bit up");

#ifndef __bpf__
HS_NAME_TABLE(hs_dir_set_names, HS_DIR_SETS, HS_DIRSET_MAX);

static inline const char *hs_dir_set_name(unsigned int s)
{
	return hs_name_of(hs_dir_set_names, HS_DIRSET_MAX, s);
}
#endif

/* The directions (enum hs_dir_set) of rule flags @flags. */
HS_INLINE __u32 hs_rule_dirs(__u32 flags)
{
	return (flags / HS_RULE_F_REQUEST) & HS_DIRSET_BOTH;
}

/*
 * X(ID, name): what a rule does to a field line whose name matches. The name
 * is the list file's word for it and what the CLI prints.
 */
#define HS_ACTIONS(X)                                                                              \
	X(MASK, "mask") /* rewrite the field line in place, same length */                         \
	X(DROP, "drop") /* drop the packet that carries it */                                      \
	X(OBSERVE, "observe") /* count and report it; change and drop nothing */                   \
	X(REJECT, "reject") /* drop it and reset the sender's connection (at the hooks) */

enum hs_action {
#define HS_ACTION_ENUM(id, name) HS_ACT_##id,
	HS_ACTIONS(HS_ACTION_ENUM)
#undef HS_ACTION_ENUM
	HS_ACT_MAX
};
/* Stored in the trie map: a value never changes meaning. */
_Static_assert(HS_ACT_MASK == 0 && HS_ACT_DROP == 1 && HS_ACT_OBSERVE == 2 && HS_ACT_REJECT == 3,
	       "hs_action values");

/* A rule whose match stops the packet: drop and reject alike (a reject is
 * a drop whose sender is told, by the datapath, at the hooks). */
static inline int hs_action_drops(unsigned int a)
{
	return a == HS_ACT_DROP || a == HS_ACT_REJECT;
}

#ifndef __bpf__
HS_NAME_TABLE(hs_action_names, HS_ACTIONS, HS_ACT_MAX);

static inline const char *hs_action_name(unsigned int a)
{
	return hs_name_of(hs_action_names, HS_ACT_MAX, a);
}
#endif

#define HS_SYM_NONE 63
#define HS_LABEL_MASK (HS_MAX_LABEL_BYTES - 1)

#define HS_TRIE_ROOT 0u
#define HS_TRIE_STICKY 0x80000000u
#define HS_TRIE_DEAD 0xffffffffu

struct hs_rule {
	__u16 hit_slot; /* index into the header_hits map, stable across updates */
	__u8 action; /* enum hs_action */
	__u8 flags; /* HS_RULE_F_* */
	/*
	 * The trie resolves a name to one rule whatever the direction: the
	 * most specific of all (an exact name, else the longest prefix rule).
	 * dir_rule[d] is rule + 1 of the one that applies to the name in
	 * direction d (0: none): this rule when it applies to d; else the
	 * rule of the same name and kind for d, or the longest prefix rule
	 * for d that covers the name. So a response-only exact rule under a
	 * request prefix rule does not hide the prefix rule from requests.
	 */
	__u16 dir_rule[HS_DIRS];
	__u16 reserved;
};

struct hs_node {
	__u64 mask; /* bit c set: a child for symbol c */
	/*
	 * Summaries of the names that can match below this node, exactly or
	 * through a prefix rule (all bits under a prefix rule): bit L % 32 of
	 * name_lens for each length L, bit c % 32 of last_syms for the symbol
	 * c of each last byte. A whole-name lookup whose length or last byte
	 * has no bit here is a miss without reading another byte. Only
	 * hs_trie_lookup reads them; stepping does not need them.
	 */
	__u32 name_lens;
	__u32 last_syms;
	__u32 first_child; /* node index of the child with the lowest symbol */
	__u32 label_off; /* this node's edge label, in labels[] */
	__u16 end_rule; /* rule + 1 matching a name that ends at the label's end */
	__u16 pfx_in; /* rule + 1 of the prefix rule covering names that end or
			 diverge inside the label (0: none) */
	__u16 pfx_out; /* same, for names that diverge after the label */
	__u8 label_len;
	/* Name bytes from the root to the label's end (all paths through a
	 * node have the same length), so a lookup knows where in a name the
	 * next child byte is without counting. Read by hs_trie_lookup only. */
	__u8 end_depth;
};

/* Words of hs_trie.enforce, a bit a node. */
#define HS_ENFORCE_WORDS ((HS_MAX_NODES + 63) / 64)

/* Bytes of the filler name a masked line takes (hs_trie.fill). */
#define HS_FILL_NAME_LEN 10

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
	/* What a masked line becomes (scan.h): the filler name's ten bytes,
	 * then ": xxxx", little-endian. Its first byte starts no listed name
	 * (its walk from the root dies at once), so no line it begins is a
	 * listed field, whatever follows. */
	__u64 fill[2];
	/* Bit i of enforce[d]: a rule that masks or drops in direction d
	 * (HS_DIR_*) may still match a name whose walk is at node i (a rule
	 * ending at it or below, or a prefix rule of it). A name cut at a
	 * buffer's end is rewritten ahead only then: one that can only be
	 * observed, or that only the other direction's rules list, is left as
	 * it is (scan.h). */
	__u64 enforce[HS_DIRS][HS_ENFORCE_WORDS];
};

_Static_assert(sizeof(struct hs_rule) == 12, "hs_rule layout");
_Static_assert(sizeof(struct hs_node) == 32, "hs_node layout");
_Static_assert(__builtin_offsetof(struct hs_node, name_lens) == 8, "hs_node layout");
_Static_assert(__builtin_offsetof(struct hs_node, first_child) == 16, "hs_node layout");
_Static_assert(__builtin_offsetof(struct hs_trie, sym) == 32, "hs_trie header");
_Static_assert(__builtin_offsetof(struct hs_trie, root2) % 8 == 0, "root2 alignment");
_Static_assert(__builtin_offsetof(struct hs_trie, nodes) % 8 == 0, "nodes alignment");
_Static_assert((HS_MAX_LABEL_BYTES & HS_LABEL_MASK) == 0, "labels size is a power of two");
_Static_assert(HS_MAX_NODES < 0x10000, "node index fits the state's 16 bits");
_Static_assert(HS_MAX_NAME_LEN < 0x100, "label position fits the state's 8 bits");
_Static_assert(HS_MAX_NAME_LEN < 0x100, "end_depth fits its 8 bits");

HS_INLINE __u32 hs_trie_fail(__u16 pfx)
{
	return pfx ? (HS_TRIE_STICKY | (__u32)(pfx - 1)) : HS_TRIE_DEAD;
}

/* Does list rule @v - 1 only observe (count and report, change nothing)? */
HS_INLINE int hs_rule_observes(const struct hs_trie *t, __u32 v)
{
	return t->rules[(v - 1) & (HS_MAX_NAMES - 1)].action == HS_ACT_OBSERVE;
}

/* The list rule + 1 (0: none) that applies in direction @dir to a name the
 * trie resolved to @v (rule + 1, or 0). */
HS_INLINE __u32 hs_dir_rule(const struct hs_trie *t, __u32 v, __u32 dir)
{
	return v ? t->rules[(v - 1) & (HS_MAX_NAMES - 1)].dir_rule[dir > 1 ? 2 : dir] : 0;
}

/* May a rule that masks or drops in direction @dir still match a name
 * whose walk is in state @s? */
HS_INLINE int hs_trie_may_enforce(const struct hs_trie *t, __u32 s, __u32 dir)
{
	__u32 idx = s & 0xffff;

	dir = dir > 1 ? 2 : dir;
	if (s == HS_TRIE_DEAD)
		return 0;
	if (s & HS_TRIE_STICKY)
		return (t->rules[idx & (HS_MAX_NAMES - 1)].flags & HS_RULE_F_ENFORCE(dir)) != 0;
	if (idx >= HS_MAX_NODES)
		return 0;
	return (t->enforce[dir][idx >> 6] >> (idx & 63)) & 1;
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
		if (t->canon[hs_index_byte(b)] == t->labels[(n->label_off + pos) & HS_LABEL_MASK])
			return s + (1u << 16);
		return hs_trie_fail(n->pfx_in);
	}
	bit = 1ULL << (t->sym[hs_index_byte(b)] & (HS_MAX_SYMS - 1));
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

/* Bytes 0..@n-1 of a word (0 < n <= 8). */
HS_INLINE __u64 hs_byte_mask(__u32 n)
{
	return n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1;
}

/* Label bytes and child picks hs_trie_walk8() takes per call, at most. */
#define HS_TRIE_WALK_HOPS 3

/*
 * Advance state @s by the first @k (1..8) bytes of @w (little-endian), none
 * of them special to the scanner, as hs_trie_step() byte by byte would: a
 * label's bytes are compared in one go (hs_fold8 folds as canon[] does).
 * Sets *@used to the bytes taken: all @k once the state is final or dead
 * (the rest cannot change it), else fewer when the hops run out.
 */
HS_INLINE __u32 hs_trie_walk8(const struct hs_trie *t, __u32 s, __u64 w, __u32 k, __u32 *used)
{
	__u64 fw = hs_fold8(w, t->flags & HS_TRIE_F_FOLD_UNDERSCORE);
	__u32 i = 0, hop;

	for (hop = 0; hop < HS_TRIE_WALK_HOPS && i < k; hop++) {
		const struct hs_node *n;
		__u32 idx = s & 0xffff, pos = (s >> 16) & 0xff, m;
		__u64 bit;

		if (s & HS_TRIE_STICKY)
			break;
		if (idx >= HS_MAX_NODES) {
			s = HS_TRIE_DEAD;
			break;
		}
		n = &t->nodes[idx];
		if (pos < n->label_len) {
			m = n->label_len - pos;
			if (m > k - i)
				m = k - i;
			if (((fw >> (8 * (i & 7))) ^
			     hs_load64(&t->labels[(n->label_off + pos) & HS_LABEL_MASK])) &
			    hs_byte_mask(m)) {
				s = hs_trie_fail(n->pfx_in);
				break;
			}
			s += m << 16;
			i += m;
			continue;
		}
		bit = 1ULL << (t->sym[hs_index_byte((__u8)(w >> (8 * (i & 7))))] &
			       (HS_MAX_SYMS - 1));
		if (!(n->mask & bit)) {
			s = hs_trie_fail(n->pfx_out);
			break;
		}
		s = n->first_child + hs_popcount64(n->mask & (bit - 1));
		i++;
	}
	*used = (s & HS_TRIE_STICKY) ? k : i;
	return s;
}

/* Top bit of every byte of @x that is not zero (exact). */
HS_INLINE __u64 hs_nonzero8(__u64 x)
{
	const __u64 low7 = 0x7f7f7f7f7f7f7f7fULL;

	return (((x & low7) + low7) | x) & HS_HIGHS;
}

/*
 * Bytes @i.. of a name of @len bytes, when fewer than eight remain
 * (0 < len - i < 8), in the low bytes of the result and zeros above, without
 * reading outside the name: a long name is read through its last eight
 * bytes, a short one through two overlapping loads (the overlap holds the
 * same bytes twice, so or-ing them is exact).
 */
HS_INLINE __u64 hs_name_tail(const __u8 *name, __u32 len, __u32 i)
{
	__u64 w;

	if (len >= 8)
		return hs_load64(name + len - 8) >> (8 * (8 - (len - i)));
	if (len >= 4)
		w = hs_load32(name) | (__u64)hs_load32(name + len - 4) << (8 * (len - 4));
	else if (len >= 2)
		w = hs_load16(name) | (__u64)hs_load16(name + len - 2) << (8 * (len - 2));
	else
		w = name[0];
	return w >> (8 * i);
}

/* One word of a whole-name compare: zero when bytes @j..@j+7 agree. */
HS_INLINE __u64 hs_trie_diff8(const struct hs_trie *t, const __u8 *name, __u32 j, __u32 start,
			      int fold_us)
{
	return hs_fold8(hs_load64(name + j), fold_us) ^
	       hs_load64(&t->labels[(start + j) & HS_LABEL_MASK]);
}

/*
 * A name read for a whole-name compare with labels[]: three folded words,
 * taken before the trie walk so that reading and folding them overlaps the
 * walk's chain of dependent loads. A name of 8 to 24 bytes, the common
 * case, is covered by them with no loop: its first eight bytes, eight from
 * the middle and its last eight, overlapping as the length requires. A
 * shorter name is one word (two overlapping loads) and a byte mask.
 */
struct hs_name_words {
	__u64 first, mid, last, mask;
	__u32 mid_off, last_off;
};

HS_INLINE void hs_name_words(const struct hs_trie *t, const __u8 *name, __u32 len,
			     struct hs_name_words *w)
{
	int fold_us = t->flags & HS_TRIE_F_FOLD_UNDERSCORE;

	if (len < 8) {
		w->first = w->mid = w->last = hs_fold8(hs_name_tail(name, len, 0), fold_us);
		w->mask = (1ULL << (8 * len)) - 1;
		w->mid_off = w->last_off = 0;
		return;
	}
	w->mid_off = len >= 16 ? 8 : len - 8;
	w->last_off = len - 8;
	w->first = hs_fold8(hs_load64(name), fold_us);
	w->mid = hs_fold8(hs_load64(name + w->mid_off), fold_us);
	w->last = hs_fold8(hs_load64(name + w->last_off), fold_us);
	w->mask = ~0ULL;
}

/* True when the @len bytes of the name read into @w equal labels[@start...]. */
HS_INLINE int hs_trie_same(const struct hs_trie *t, const __u8 *name, __u32 len, __u32 start,
			   const struct hs_name_words *w)
{
	__u64 diff = (w->first ^ hs_load64(&t->labels[start & HS_LABEL_MASK])) |
		     (w->mid ^ hs_load64(&t->labels[(start + w->mid_off) & HS_LABEL_MASK])) |
		     (w->last ^ hs_load64(&t->labels[(start + w->last_off) & HS_LABEL_MASK]));
	__u32 j;

	for (j = 16; j + 8 < len; j += 8)
		diff |= hs_trie_diff8(t, name, j, start, t->flags & HS_TRIE_F_FOLD_UNDERSCORE);
	return !(diff & w->mask);
}

/*
 * A node index a lookup may follow: out-of-range ones (HS_TRIE_DEAD's too)
 * become HS_TRIE_SPARE, the last node, which hs_compile leaves empty (a
 * list of n names needs at most 2n - 1 nodes) and hs_trie_validate checks:
 * its summaries admit no name, so a lookup that lands there is a miss at
 * its next filter, without a branch of its own.
 */
#define HS_TRIE_SPARE (HS_MAX_NODES - 1)

HS_INLINE __u32 hs_trie_node_index(__u32 idx)
{
	return idx < HS_TRIE_SPARE ? idx : HS_TRIE_SPARE;
}

/*
 * Lookup in a trie without prefix rules, from state @s after the first two
 * bytes (not final). Without prefix rules a mismatch anywhere is a miss, so
 * the walk reads only the bytes that pick children (a blind descent, as in
 * a Patricia tree) and compares the whole name once, at the end, with the
 * path of the node it ends at, which labels[] holds in one piece.
 */
HS_INLINE __u32 hs_trie_lookup_exact(const struct hs_trie *t, const __u8 *name, __u32 len, __u32 s)
{
	__u32 len_bit = len & 31, last = t->sym[name[len - 1]] & 31;
	/* root2[] holds no sticky state without prefix rules: s is a node's
	 * state or HS_TRIE_DEAD, whose index (like any index out of range)
	 * lands on the spare node, which admits no name: the commonest miss
	 * costs one branch that is hard to predict, not two. */
	__u32 idx = hs_trie_node_index(s & 0xffff), e, steps;
	const struct hs_node *n = &t->nodes[idx];
	struct hs_name_words w;

	/* Only here: deeper down, the test costs hits more than it saves the
	 * few near misses that get past this one (measured). */
	if (!((n->name_lens >> len_bit) & (n->last_syms >> last) & 1))
		return 0;
	hs_name_words(t, name, len, &w);
	/* A path has at most HS_MAX_NAME_LEN + 1 nodes; the bound only stops
	 * a damaged block whose children loop. */
	for (steps = 0;; steps++) {
		__u64 bit;

		e = n->end_depth; /* where n's label ends in the name */
		if (len <= e)
			break;
		bit = 1ULL << (t->sym[name[e]] & (HS_MAX_SYMS - 1));
		if (!(n->mask & bit) || steps > HS_MAX_NAME_LEN)
			return 0;
		n = &t->nodes[hs_trie_node_index(n->first_child +
						 hs_popcount64(n->mask & (bit - 1)))];
	}
	/* A name ending inside a label is a miss (no prefix rule covers it);
	 * one ending at a label's end is compared whole with the path, which
	 * starts end_depth bytes before the label's end. */
	if (len != e || !hs_trie_same(t, name, len, n->label_off + n->label_len - e, &w))
		return 0;
	return n->end_rule;
}

/*
 * Lookup in a trie with prefix rules, from state @s after the first two
 * bytes (not final). Where a mismatch happens decides the verdict (the
 * prefix rule covering that spot), so labels are compared node by node,
 * eight bytes at a time.
 */
HS_INLINE __u32 hs_trie_lookup_prefix(const struct hs_trie *t, const __u8 *name, __u32 len, __u32 s)
{
	int fold_us = t->flags & HS_TRIE_F_FOLD_UNDERSCORE;
	__u32 i = 2, pos = (s >> 16) & 0xff; /* only root2[]'s state can be inside a label */
	__u32 len_bit = len & 31, last = t->sym[name[len - 1]] & 31;

	for (;;) {
		const struct hs_node *n;
		__u32 idx = s & 0xffff, rem, avail, k, j, off;
		__u64 bit;

		if (idx >= HS_MAX_NODES)
			return 0;
		n = &t->nodes[idx];
		if (!((n->name_lens >> len_bit) & (n->last_syms >> last) & 1))
			return 0;
		avail = n->label_len - pos;
		rem = len - i;
		k = rem < avail ? rem : avail;
		off = n->label_off + pos;
		for (j = 0; j < k; j += 8) {
			__u64 w = i + j + 8 <= len ? hs_load64(name + i + j)
						   : hs_name_tail(name, len, i + j);
			__u64 diff = hs_fold8(w, fold_us) ^
				     hs_load64(&t->labels[(off + j) & HS_LABEL_MASK]);

			if (k - j < 8)
				diff &= (1ULL << (8 * (k - j))) - 1;
			if (diff)
				return n->pfx_in;
		}
		if (rem <= avail)
			return rem == avail ? n->end_rule : n->pfx_in;
		i += avail;
		bit = 1ULL << (t->sym[name[i++]] & (HS_MAX_SYMS - 1));
		if (!(n->mask & bit))
			return n->pfx_out;
		s = n->first_child + hs_popcount64(n->mask & (bit - 1));
		pos = 0;
	}
}

/*
 * Whole-name lookup: rule index + 1, or 0. Gives the verdict of stepping
 * every byte from the root (the unit tests check it on every split), with
 * shortcuts only:
 *  - one root2[] load for the first two bytes (most misses end there);
 *  - the summaries of the node root2[] leads to (name_lens, last_syms): a
 *    name whose length or last byte no match below it has is a miss at
 *    once (most names that survive root2[], near misses like "x-foo-x");
 *  - labels compared eight bytes at a time, and without prefix rules only
 *    once, as the whole name, at the end of a blind descent.
 * Every exit gives what hs_trie_result would of the state stepping reaches:
 * a mismatch or an end inside a label is pfx_in, a byte no child takes is
 * pfx_out, an end at the label's end is end_rule.
 */
HS_INLINE __u32 hs_trie_lookup(const struct hs_trie *t, const __u8 *name, __u32 len)
{
	__u32 s;

	if (len < 2) {
		s = len ? hs_trie_step(t, HS_TRIE_ROOT, name[0]) : HS_TRIE_ROOT;
		return hs_trie_result(t, s);
	}
	/* Symbols are below HS_MAX_SYMS; the mask only keeps a damaged block
	 * from sending the load outside root2[]. */
	s = t->root2[((__u32)t->sym[name[0]] * HS_MAX_SYMS + t->sym[name[1]]) &
		     (HS_MAX_SYMS * HS_MAX_SYMS - 1)];
	if (!(t->flags & HS_TRIE_F_PREFIX_RULES))
		return hs_trie_lookup_exact(t, name, len, s);
	if (s & HS_TRIE_STICKY)
		return s == HS_TRIE_DEAD ? 0 : (s & 0xffff) + 1;
	return hs_trie_lookup_prefix(t, name, len, s);
}

#endif /* HDRSTRIP_TRIE_H */
