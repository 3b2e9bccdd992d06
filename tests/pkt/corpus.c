// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Differential test: every request of the corpus, one IPv4 packet each,
 * through both hooks, against the reference stripper.
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edges.h"

#define MAX_REPORTED 20

static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	FILE *f;
	char *buf = NULL;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = 0;
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

/* The list with its action words dropped: every rule masks. */
static void strip_drop_words(char *text)
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

static void expect_from_ref(struct pt_case *c, const struct ref_result *r)
{
	struct hs_counters *d = &c->delta;
	unsigned int i;

	memset(d, 0, sizeof(*d));
	d->inspected = 1;
	d->http_requests = r->requests;
	d->headers_seen = r->seen;
	d->headers_matched = r->matched;
	d->headers_masked = r->masked;
	d->non_http = r->outcome == REF_NOT_HTTP;
	if (r->outcome == REF_DROP) {
		c->verdict = PV_DROP;
		d->packets_dropped = 1;
	} else {
		d->packets_modified = r->masked > 0;
	}
	for (i = 0; i < r->n_hits; i++)
		if (r->hits[i] < PT_HIT_SLOTS)
			c->hits[r->hits[i]]++;
}

int pt_corpus(struct th *h, const char *dir, int with_drop, size_t pack,
	      struct pt_corpus_stats *st)
{
	size_t list_len, len, pos = 0, i;
	char *list = slurp(dir, "internal-headers.txt", &list_len);
	char *reqs = slurp(dir, "requests.http", &len);
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
		strip_drop_words(list);
	if (pt_compile(list, t) || th_set_trie(h, 0, t) ||
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
		buf = malloc(n);
		if (!buf) {
			bad++;
			break;
		}
		memcpy(buf, reqs + pos, n);
		ref_strip(ref, buf, n, &r);
		memset(&c, 0, sizeof(c));
		snprintf(what, sizeof(what), "corpus request %u (offset %zu, %zu in the packet)",
			 st->requests, pos, k);
		c.what = what;
		c.in = reqs + pos;
		c.in_len = n;
		c.out = (const char *)buf;
		c.out_len = n;
		c.no_ref = 1;
		expect_from_ref(&c, &r);
		for (i = 0; i < r.n_hits; i++)
			want_hits[r.hits[i]] += TH_HOOKS;
		if (pt_check(h, &c, PT_ALL_HOOKS)) {
			if (++bad == MAX_REPORTED) {
				fprintf(stderr, "  ... stopping after %d mismatching requests\n", bad);
				free(buf);
				break;
			}
		}
		st->requests += (unsigned int)k;
		st->packets++;
		st->modified += r.outcome != REF_DROP && r.masked > 0;
		st->masked += r.outcome != REF_DROP ? r.masked : 0;
		st->dropped += r.outcome == REF_DROP;
		free(buf);
		pos += n;
	}

	/* Every rule's hit counter, not only the first PT_HIT_SLOTS. */
	if (!bad && !th_hits(h, ha, (__u32)ref->n)) {
		for (i = 0; i < ref->n; i++) {
			if (ha[i] - hb[i] == want_hits[i])
				continue;
			fprintf(stderr, "  corpus: header_hits[%zu] (%s) moved by %llu, expected %llu\n",
				i, ref->rules[i].name, (unsigned long long)(ha[i] - hb[i]),
				(unsigned long long)want_hits[i]);
			bad++;
		}
	}
out:
	if (pt.fix_trie && th_set_trie(h, 0, pt.fix_trie))
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
