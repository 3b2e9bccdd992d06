/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Per-header counters keep their header's name across list updates: the
 * trie itself records which counter slot each rule uses, and its names can
 * be read back from it. Pure: no libbpf.
 */
#ifndef HDRSTRIP_SLOTS_H
#define HDRSTRIP_SLOTS_H

#include <hdrstrip/trie.h>

/* A rule's folded name, with '*' appended for a prefix rule. */
typedef char hs_rule_name[HS_MAX_NAME_LEN + 2];

/* Read every rule's name back from @t into names[rule]. Returns 0 or
 * -EINVAL if @t is not a consistent trie. */
int hs_trie_names(const struct hs_trie *t, hs_rule_name *names);

/* The names of a list and the counter slot of each, read from its trie. */
struct hs_slots;

/*
 * Read the names and counter slots of the list compiled in @old, so that
 * its block may be reused. Returns 0 with *@out set, NULL if @old is not a
 * consistent trie (its counters then start afresh), or -ENOMEM. Free with
 * hs_slots_free().
 */
int hs_slots_read(const struct hs_trie *old, struct hs_slots **out);
void hs_slots_free(struct hs_slots *s);

/*
 * Give every rule of @nt the counter slot its name, of the same kind and
 * for the same directions, has in @old (NULL: no old list), and rules new
 * to the list slots that no kept rule uses. @fresh[s]
 * is set for each slot handed to a new name: its counter must be zeroed.
 */
int hs_assign_slots(const struct hs_slots *old, struct hs_trie *nt,
		    unsigned char fresh[HS_MAX_HIT_SLOTS]);

#endif /* HDRSTRIP_SLOTS_H */
