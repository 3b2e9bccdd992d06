/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Packet cases built by code (edges.c) and the corpus comparison (corpus.c).
 * Each returns the number of mismatching cases. */
#ifndef HDRSTRIP_TEST_PKT_EDGES_H
#define HDRSTRIP_TEST_PKT_EDGES_H

#include "pkttest.h"

struct pt_limits {
	__u32 accepted[TH_HOOKS]; /* largest frame test_run takes at all */
	__u32 xdp_linear; /* largest frame the XDP program sees whole */
};

int pt_junk_bytes(struct th *h);
/* @runs: test_run calls; @refused: those test_run itself refused (frames
 * below an Ethernet header; at tc, below the bare IP header). */
int pt_truncation_sweep(struct th *h, int *runs, int *refused);
int pt_limits(struct th *h, struct pt_limits *lim);
int pt_many_headers(struct th *h, int n_benign);
int pt_trie_swap(struct th *h);
/* Reject rules and --on-error reject: the reset sent back (reject.c). */
int pt_reject_cases(struct th *h);

struct pt_corpus_stats {
	unsigned int requests, packets, modified, masked, dropped; /* modified etc.: packets */
	unsigned int conflicts, invalid, desync; /* the reference's counts */
	unsigned int cl_conflicts; /* packets whose Content-Length conflicts (corpus.c's rule) */
};

/* Every request of requests.http against the reference, with the list's
 * drop words read as mask (@with_drop 0) or as written (1). One request a
 * packet (@pack 0), or as many whole requests as fit in @pack bytes of
 * payload (a pipelined stream cut at request boundaries). */
int pt_corpus(struct th *h, const char *dir, int with_drop, size_t pack, int conflict_pass,
	      struct pt_corpus_stats *st);

/* A list's text with its action words dropped: every rule masks. */
void pt_strip_drop_words(char *text);

/* @count random payloads (random.c) from @seed against the reference, with
 * the fixture list; @modified: how many the reference masked something in. */
int pt_random(struct th *h, __u64 seed, unsigned int count, int conflict_pass,
	      unsigned int *modified);

#endif /* HDRSTRIP_TEST_PKT_EDGES_H */
