/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Stream tests (stream.c): one connection, several segments, through
 * BPF_PROG_TEST_RUN with the flow table kept between runs. Each returns the
 * number of mismatches. */
#ifndef HDRSTRIP_TEST_PKT_STREAM_H
#define HDRSTRIP_TEST_PKT_STREAM_H

#include "pkttest.h"

/* One connection's sending side, for tests that play segments by hand. */
struct st_conn {
	struct th *h;
	enum th_hook hook;
	struct pb_spec spec;
	__u32 next; /* sequence number of the next byte */
	const char *what;
	int bad;
	/* Changes to a built packet before it is sent (its checksums are
	 * then the function's business), NULL for none. */
	void (*mangle)(__u8 *pkt, size_t len, const struct pb_layout *lay);
	int no_sum_check; /* a passed packet's checksums are not checked */
	int urgent_ok; /* URG and the urgent pointer may come out changed */
	__u8 *hdr_out; /* NULL, or where the headers of a passed packet go */
};

void st_conn_init(struct st_conn *c, struct th *h, enum th_hook hook, __u16 sport,
		  const char *what);
/* Send @n bytes at sequence number @seq with TCP @flags (0: PSH ACK).
 * Returns 1 when the program passed it, 0 when it dropped it, -1 on a test
 * failure; @out (NULL, or @n bytes) gets the payload as it left. */
int st_send_at(struct st_conn *c, __u32 seq, __u8 flags, const void *payload, size_t n, __u8 *out);
/* A segment without payload at c->next (a SYN moves c->next on). */
int st_send_ctl(struct st_conn *c, __u8 flags);
/* 0 when counter @counter moved by @want; else a message and 1. */
int st_diff1(const char *what, const char *hook, const char *counter, __u64 got, __u64 want);
/* 0 when @got starts with @want; else a message and 1. */
int st_check_out(struct st_conn *c, const __u8 *got, const char *want, const char *step);

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
/* Responses (response.c): requests at one hook, responses at another, with
 * a list that has response rules; @plays gets the connections played. */
int st_responses(struct th *h, unsigned long *plays);
/* A name split at every offset, matching or benign. */
int st_split_names(struct th *h, struct st_stats *st);
/* LRU eviction: the object reopened with a small flow table. */
int st_eviction(const char *obj_path, unsigned int max_flows);
/* The normaliser (normalize.c): checksums, urgent data, overlapping
 * copies, control segments, SYN data, the filler name. */
int st_normalize(struct th *h);

#endif /* HDRSTRIP_TEST_PKT_STREAM_H */
