/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The reference stripper: the documented masking rules, written a second
 * time as plain line-by-line host code (no scan.h, no trie, no hlist.c), so
 * that the packet tests compare the datapath with an independent opinion.
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
};

enum ref_outcome {
	REF_INCOMPLETE = 0, /* the data ended (inside a request, or after one) */
	REF_BODY, /* bytes that start no request follow the last block */
	REF_NOT_HTTP, /* the data does not start with a request line */
	REF_DROP, /* a drop rule matched */
};

struct ref_result {
	enum ref_outcome outcome;
	unsigned int requests, seen, matched, masked;
	unsigned int n_hits;
	unsigned int hits[REF_MAX_HITS]; /* rule index of each match, in order */
};

/* Parse a header list: one name per line, optional trailing '*' (prefix
 * rule) and action word, '#' comments, "@fold-underscore on|off". With
 * @mask_only, "drop" is read as "mask". Returns 0 or -1. */
int ref_list_parse(const char *text, size_t len, int mask_only, struct ref_list *l);

/* Strip @buf[0, len) in place as the documented rules say. */
void ref_strip(const struct ref_list *l, __u8 *buf, size_t len, struct ref_result *r);

#endif /* HDRSTRIP_TEST_PKT_REFSTRIP_H */
