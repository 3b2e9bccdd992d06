// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Differential test: every request of the corpus, one IPv4 packet each,
 * through both hooks, against the reference stripper.
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "edges.h"

#define MAX_REPORTED 20

/* The list with its action words dropped: every rule masks. */
void pt_strip_drop_words(char *text)
{
	char *line = text, *w = text;

	while (*line) {
		char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		if (n >= 5 && line[0] != '#' && !strncmp(line + n - 4, "drop", 4) &&
		    (line[n - 5] == ' ' || line[n - 5] == '\t')) {
			size_t k = n - 5;

			while (k && (line[k - 1] == ' ' || line[k - 1] == '\t'))
				k--;
			memmove(w, line, k);
			w += k;
		} else {
			memmove(w, line, n);
			w += n;
		}
		if (nl)
			*w++ = '\n';
		line += n + (nl != NULL);
	}
	*w = 0;
}

/* The default policy drops a request whose Content-Length is a conflict:
 * a sign first, or digits followed by anything but blanks. Written apart
 * from both the datapath and the reference, straight from that rule. */
static int cl_conflict(const char *req, size_t n)
{
	static const char name[] = "content-length:";
	size_t i = 0;

	while (i < n) {
		const char *line = req + i, *eol = memchr(line, '\n', n - i);
		size_t len = eol ? (size_t)(eol - line) : n - i, k;

		i += len + 1;
		if (len && line[len - 1] == '\r')
			len--;
		if (len < sizeof(name) - 1 || strncasecmp(line, name, sizeof(name) - 1))
			continue;
		for (k = sizeof(name) - 1; k < len && (line[k] == ' ' || line[k] == '\t'); k++)
			;
		if (k < len && (line[k] == '+' || line[k] == '-'))
			return 1;
		if (k == len || line[k] < '0' || line[k] > '9')
			continue; /* invalid: no body, not a conflict */
		while (k < len && line[k] >= '0' && line[k] <= '9')
			k++;
		while (k < len && (line[k] == ' ' || line[k] == '\t'))
			k++;
		if (k < len)
			return 1;
	}
	return 0;
}

int pt_corpus(struct th *h, const char *dir, int with_drop, size_t pack, int conflict_pass,
	      struct pt_corpus_stats *st)
{
	const struct ref_opts ro = { .conflict_pass = conflict_pass };
	static const __u16 port80 = 80;
	size_t list_len, len, pos = 0, i;
	char *list = th_slurp(dir, "internal-headers.txt", &list_len);
	char *reqs = th_slurp(dir, "requests.http", &len);
	struct hs_trie *t = calloc(1, sizeof(*t));
	struct ref_list *ref = calloc(1, sizeof(*ref));
	__u64 *want_hits = NULL, *hb = NULL, *ha = NULL;
	unsigned int drops = 0;
	int bad = 0;

	memset(st, 0, sizeof(*st));
	if (!list || !reqs || !t || !ref) {
		bad = 1;
		goto out;
	}
	if (!with_drop)
		pt_strip_drop_words(list);
	if (th_config(h, 0, conflict_pass ? HS_POLICY_PASS : HS_POLICY_DROP, &port80, 1) ||
	    pt_compile(list, t) || th_set_trie(h, 0, t) ||
	    ref_list_parse(list, strlen(list), 0, ref)) {
		fprintf(stderr, "cannot set up the corpus list\n");
		bad = 1;
		goto out;
	}
	for (i = 0; i < ref->n; i++)
		drops += ref->rules[i].drop;
	if (drops != (with_drop ? 3u : 0u)) {
		fprintf(stderr, "the corpus list has %u drop rules here\n", drops);
		bad = 1;
		goto out;
	}
	if (!ref->n) {
		fprintf(stderr, "the corpus list has no names\n");
		bad = 1;
		goto out;
	}
	want_hits = calloc(ref->n, sizeof(*want_hits));
	hb = calloc(ref->n, sizeof(*hb));
	ha = calloc(ref->n, sizeof(*ha));
	if (!want_hits || !hb || !ha || th_hits(h, hb, (__u32)ref->n)) {
		bad = 1;
		goto out;
	}

	while (pos < len) {
		size_t n = 0, k = 0;
		struct ref_result r;
		struct pt_case c;
		char what[64];
		__u8 *buf;

		/* One request, or as many whole ones as fit in @pack bytes. */
		do {
			char *end = memmem(reqs + pos + n, len - pos - n, "\r\n\r\n", 4);
			size_t one = end ? (size_t)(end - (reqs + pos + n)) + 4 : len - pos - n;

			if (k && n + one > pack)
				break;
			n += one;
			k++;
		} while (pos + n < len && pack);
		buf = malloc(2 * n);
		if (!buf) {
			bad++;
			break;
		}
		memcpy(buf, reqs + pos, n);
		ref_strip_ex(ref, buf, n, &ro, buf + n, &r);
		memset(&c, 0, sizeof(c));
		snprintf(what, sizeof(what), "corpus request %u (offset %zu, %zu in the packet)",
			 st->requests, pos, k);
		c.what = what;
		c.in = reqs + pos;
		c.in_len = n;
		c.out = (const char *)buf;
		c.out_len = n;
		c.no_ref = 1;
		pt_expect_from_ref(&c, &r, buf + n, n);
		/* Under the drop policy the requests dropped are exactly those
		 * whose Content-Length conflicts (one request a packet). */
		if (!pack && !conflict_pass && !with_drop &&
		    cl_conflict(reqs + pos, n) != (c.verdict == PV_DROP)) {
			fprintf(stderr,
				"  %s: reference verdict %d, the Content-Length rule says %d\n",
				what, c.verdict, cl_conflict(reqs + pos, n));
			bad++;
		}
		st->cl_conflicts += (unsigned int)cl_conflict(reqs + pos, n);
		st->conflicts += r.conflicts;
		st->invalid += r.framing_invalid;
		st->desync += r.desync;
		for (i = 0; i < r.n_hits; i++)
			want_hits[r.hits[i]] += TH_HOOKS;
		if (pt_check(h, &c, PT_ALL_HOOKS)) {
			if (++bad == MAX_REPORTED) {
				fprintf(stderr, "  ... stopping after %d mismatching requests\n",
					bad);
				free(buf);
				break;
			}
		}
		st->requests += (unsigned int)k;
		st->packets++;
		st->modified += c.delta.packets_modified != 0;
		st->masked += c.verdict == PV_PASS ? r.masked : 0;
		st->dropped += c.verdict == PV_DROP;
		free(buf);
		pos += n;
	}

	/* Every rule's hit counter, not only the first PT_HIT_SLOTS. */
	if (!bad && !th_hits(h, ha, (__u32)ref->n)) {
		for (i = 0; i < ref->n; i++) {
			if (ha[i] - hb[i] == want_hits[i])
				continue;
			fprintf(stderr,
				"  corpus: header_hits[%zu] (%s) moved by %llu, expected %llu\n", i,
				ref->rules[i].name, (unsigned long long)(ha[i] - hb[i]),
				(unsigned long long)want_hits[i]);
			bad++;
		}
	}
out:
	if (pt.fix_trie && th_set_trie(h, 0, pt.fix_trie))
		bad++;
	if (th_config(h, 0, HS_POLICY_DROP, &port80, 1))
		bad++;
	free(want_hits);
	free(hb);
	free(ha);
	free(ref);
	free(t);
	free(reqs);
	free(list);
	return bad;
}
