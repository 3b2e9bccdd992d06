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

/*
 * Give every rule of @nt the counter slot its name has in @old (NULL: no old
 * list), and names new to the list slots that no kept name uses. @fresh[s]
 * is set for each slot handed to a new name: its counter must be zeroed.
 */
int hs_assign_slots(const struct hs_trie *old, struct hs_trie *nt,
		    unsigned char fresh[HS_MAX_HIT_SLOTS]);

#endif /* HDRSTRIP_SLOTS_H */
