/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Stream tests (stream.c): one connection, several segments, through
 * BPF_PROG_TEST_RUN with the flow table kept between runs. Each returns the
 * number of mismatches. */
#ifndef HDRSTRIP_TEST_PKT_STREAM_H
#define HDRSTRIP_TEST_PKT_STREAM_H

#include "pkttest.h"

struct st_stats {
	unsigned long runs; /* test_run calls */
	unsigned long streams; /* connections played */
	unsigned long requests; /* corpus requests covered */
	unsigned long split_names, dropped, modified;
};

/* Every corpus request cut in two at every offset: requests [0, @first)
 * and @sample more drawn from @seed (all of them when @sample < 0). */
int st_split2(struct th *h, const char *corpus, int first, int sample, __u64 seed,
	      struct st_stats *st);
/* Every corpus request cut in 3-8 random pieces. */
int st_random_pieces(struct th *h, const char *corpus, __u64 seed, struct st_stats *st);
/* The whole corpus as one connection in MSS-sized segments. */
int st_pipelined(struct th *h, const char *corpus, size_t mss, int conflict_pass,
		 struct st_stats *st);
/* Hand-written streams: bodies, conflicts, tunnels, every cut of each. */
int st_framing(struct th *h, struct st_stats *st);
/* Retransmissions, out of order, gaps, SYN/FIN/RST. */
int st_tcp(struct th *h);
/* A name split at every offset, matching or benign. */
int st_split_names(struct th *h, struct st_stats *st);
/* LRU eviction: the object reopened with a small flow table. */
int st_eviction(const char *obj_path, unsigned int max_flows);

#endif /* HDRSTRIP_TEST_PKT_STREAM_H */
