/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The reference stripper: the documented masking and framing rules, written
 * a second time as plain line-by-line host code (no scan.h, no trie, no
 * hlist.c), so that the packet tests compare the datapath with an
 * independent opinion. It reads a whole stream at once; where the stream
 * was cut into segments matters only for names split across them, so the
 * cuts are an input.
 */
#ifndef HDRSTRIP_TEST_PKT_REFSTRIP_H
#define HDRSTRIP_TEST_PKT_REFSTRIP_H

#include <stddef.h>
#include <linux/types.h>

#define REF_MAX_RULES 1024
#define REF_MAX_NAME 128
#define REF_MAX_HITS 64

struct ref_rule {
	char name[REF_MAX_NAME + 1]; /* lower case, without the '*' */
	size_t len;
	int prefix;
	int drop;
};

struct ref_list {
	struct ref_rule rules[REF_MAX_RULES];
	size_t n;
	int fold_underscore;
	char fill[11]; /* the filler name (ref_list_parse() picks it) */
};

enum ref_outcome {
	REF_PASS = 0, /* scanned to the end of the data */
	REF_NOT_HTTP, /* no request at the start, and no line-by-line scan */
	REF_DROP, /* a drop rule matched (at ref_result.stop) */
	REF_HALT, /* ambiguous framing under the drop policy (at ref_result.stop) */
};

struct ref_opts {
	/* Where the segments end, ascending, the last one the data length;
	 * NULL: one segment. */
	const size_t *ends;
	size_t n_ends;
	int conflict_pass; /* on_error pass: ambiguous framing, then line by line */
	int untracked; /* no connection state: line by line from the first byte
			  (--untracked scan) */
};

struct ref_result {
	enum ref_outcome outcome;
	/* REF_DROP, REF_HALT, REF_NOT_HTTP: offset of the byte that decided */
	size_t stop;
	int not_http; /* the data does not start with a request */
	unsigned int requests, seen, matched, masked;
	unsigned int premasked; /* names rewritten ahead at a segment end */
	unsigned int framing_invalid, desync, conflicts;
	unsigned int h2c; /* HTTP/2 connection prefaces where a request starts */
	unsigned int bodies_unframed; /* bodies of GET, HEAD, ... read line by line */
	unsigned int n_hits;
	unsigned int hits[REF_MAX_HITS]; /* rule index of each match, in order */
};

/* Parse a header list: one name per line, optional trailing '*' (prefix
 * rule) and action word, '#' comments, "@fold-underscore on|off". With
 * @mask_only, "drop" is read as "mask". Returns 0 or -1. */
int ref_list_parse(const char *text, size_t len, int mask_only, struct ref_list *l);

/* Strip @buf[0, len) in place as the documented rules say: one segment, the
 * start of a connection, the drop policy for ambiguous framing. */
void ref_strip(const struct ref_list *l, __u8 *buf, size_t len, struct ref_result *r);

/* The same with options; @touched (NULL or @len bytes) gets 1 for every byte
 * the rules rewrite (even with the same value). */
void ref_strip_ex(const struct ref_list *l, __u8 *buf, size_t len, const struct ref_opts *o,
		  __u8 *touched, struct ref_result *r);

#endif /* HDRSTRIP_TEST_PKT_REFSTRIP_H */
