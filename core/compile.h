/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Header list -> flat trie (struct hs_trie). Pure: no libbpf. */
#ifndef HDRSTRIP_COMPILE_H
#define HDRSTRIP_COMPILE_H

#include "hlist.h"

struct hs_trie_stats {
	__u32 names;
	__u32 nodes;
	__u32 label_bytes;
	__u32 distinct_bytes;
	__u32 max_depth;
	__u32 bytes; /* bytes of the block that carry data */
};

/* Build @t (zeroed first) from @l. Rule i is the list's i-th name, and its
 * hit slot is i until the loader assigns stable slots. */
int hs_compile(const struct hs_list *l, struct hs_trie *t, struct hs_trie_stats *st,
	       struct hs_err *err);

/* Check a block read from a file or a map before trusting its counts. */
int hs_trie_validate(const struct hs_trie *t, struct hs_err *err);

#endif /* HDRSTRIP_COMPILE_H */
