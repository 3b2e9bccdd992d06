// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Reference stripper. It works on whole lines, the way a person would read
 * the rules, and trades every bit of speed for being easy to check:
 *
 *  - lines end at CRLF, a bare LF or a bare CR;
 *  - the request line is skipped to after leading blank and empty lines,
 *    then split into words on blanks: METHOD (1-32 token bytes), TARGET and
 *    an optional version that starts with "HTTP/", blanks after it only;
 *  - a field line's name is the text between the leading blanks and the
 *    first ':', without trailing blanks; it matches a rule when equal to it
 *    after folding ASCII case (and '_' to '-'), or when it starts with a
 *    prefix rule's bytes; an exact rule beats a prefix rule, a longer prefix
 *    beats a shorter one;
 *  - a line that starts with SP/HTAB continues the field before it: masked
 *    with it when that field was masked, otherwise checked on its own; empty
 *    lines that do not end the block leave that link alone (a parser that
 *    does not see them as lines would still fold the next line in);
 *  - a masked line is rewritten from its first byte (after the leading
 *    SP/HTAB run of a continuation line) to its end: "x-hdrstrip" cut to
 *    the length of the text before the colon, ':', ' ', 'x'...; a masked
 *    field's continuation lines keep their SP/HTAB run and become 'x';
 *  - the block ends at an empty line ended by LF (or CRLF) when the line
 *    end before it had an LF too;
 *  - after a block, the same again for a pipelined request; what does not
 *    start a request line there is a body, and the stripping ends.
 */
#include <string.h>
#include <strings.h>

#include "refstrip.h"

static int blank(__u8 b)
{
	return b == ' ' || b == '\t' || b == 0x0b || b == 0x0c || (b >= 0x1c && b <= 0x1f) ||
	       b == 0x85 || b == 0xa0;
}

static int tchar(__u8 b)
{
	if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9'))
		return 1;
	return b && strchr("!#$%&'*+-.^_`|~", b) != NULL;
}

static __u8 fold(__u8 b, int fold_underscore)
{
	if (b >= 'A' && b <= 'Z')
		return b + 32;
	if (b == '_' && fold_underscore)
		return '-';
	return b;
}

static int space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int ref_list_parse(const char *text, size_t len, int mask_only, struct ref_list *l)
{
	size_t pos = 0;

	memset(l, 0, sizeof(*l));
	l->fold_underscore = 1;
	while (pos < len) {
		const char *s = text + pos, *e = memchr(s, '\n', len - pos);
		size_t n = e ? (size_t)(e - s) : len - pos, i, w;
		struct ref_rule *r;

		pos += n + 1;
		for (i = 0; i < n; i++)
			if (s[i] == '#' && (i == 0 || space(s[i - 1])))
				break;
		n = i;
		while (n && space(s[n - 1]))
			n--;
		while (n && space(*s)) {
			s++;
			n--;
		}
		if (!n)
			continue;
		if (*s == '@') {
			if (n >= 19 && !strncmp(s, "@fold-underscore", 16))
				l->fold_underscore = !strncmp(s + n - 2, "on", 2);
			continue;
		}
		if (l->n == REF_MAX_RULES)
			return -1;
		r = &l->rules[l->n++];
		for (w = 0; w < n && !space(s[w]); w++)
			;
		if (w < n) {
			const char *a = s + w;

			while (space(*a))
				a++;
			r->drop = !mask_only && !strncasecmp(a, "drop", 4);
		}
		if (s[w - 1] == '*') {
			r->prefix = 1;
			w--;
		}
		if (w > REF_MAX_NAME)
			return -1;
		for (i = 0; i < w; i++)
			r->name[i] = (char)fold((__u8)s[i], 0);
		r->len = w;
	}
	return 0;
}

/* Rule index matching @name, or -1. */
static int match(const struct ref_list *l, const __u8 *name, size_t n)
{
	int best = -1;
	size_t best_len = 0, i, k;

	for (i = 0; i < l->n; i++) {
		const struct ref_rule *r = &l->rules[i];

		if (r->prefix ? n < r->len : n != r->len)
			continue;
		for (k = 0; k < r->len; k++)
			if (fold(name[k], l->fold_underscore) !=
			    fold((__u8)r->name[k], l->fold_underscore))
				break;
		if (k < r->len)
			continue;
		if (!r->prefix)
			return (int)i;
		if (best < 0 || r->len > best_len) {
			best = (int)i;
			best_len = r->len;
		}
	}
	return best;
}

struct line {
	size_t start, len; /* content, without the line end */
	size_t eol_len; /* 0: the data ended inside the line */
	int eol_lf; /* the line end has an LF */
};

static size_t next_line(const __u8 *b, size_t len, size_t pos, struct line *ln)
{
	size_t i = pos;

	while (i < len && b[i] != '\r' && b[i] != '\n')
		i++;
	ln->start = pos;
	ln->len = i - pos;
	ln->eol_len = 0;
	ln->eol_lf = 0;
	if (i < len && b[i] == '\n') {
		ln->eol_len = 1;
		ln->eol_lf = 1;
	} else if (i < len) {
		ln->eol_len = (i + 1 < len && b[i + 1] == '\n') ? 2 : 1;
		ln->eol_lf = ln->eol_len == 2;
	}
	return i + ln->eol_len;
}

/* The request line's words: REF_BODY when complete and valid. */
static enum ref_outcome check_request(const __u8 *c, size_t n, int has_eol)
{
	const enum ref_outcome short_bad = has_eol ? REF_NOT_HTTP : REF_INCOMPLETE;
	const enum ref_outcome short_ok = has_eol ? REF_BODY : REF_INCOMPLETE;
	size_t i = 0, k;

	for (; i < n && !blank(c[i]); i++)
		if (!tchar(c[i]) || i >= 32)
			return REF_NOT_HTTP;
	if (i == n)
		return short_bad; /* no target */
	while (i < n && blank(c[i]))
		i++;
	if (i == n)
		return short_bad;
	while (i < n && !blank(c[i]))
		i++;
	while (i < n && blank(c[i]))
		i++;
	if (i == n)
		return short_ok; /* HTTP/0.9: no version */
	for (k = 0; k < 5; k++) {
		if (i + k == n)
			return short_bad;
		if (c[i + k] != "HTTP/"[k])
			return REF_NOT_HTTP;
	}
	for (i += 5; i < n && !blank(c[i]); i++)
		;
	while (i < n && blank(c[i]))
		i++;
	return i < n ? REF_NOT_HTTP : short_ok;
}

static void mask_line(__u8 *c, size_t from, size_t len, size_t name_len)
{
	size_t fill = name_len < 10 ? name_len : 10, col;

	for (col = 0; from + col < len; col++)
		c[from + col] = col < fill ? "x-hdrstrip"[col] : col == fill ? ':'
						     : col == fill + 1 ? ' '
								       : 'x';
}

/* One request from @*pos: its request line and header block. Leaves @*pos
 * after the block's last line end. */
static enum ref_outcome strip_one(const struct ref_list *l, __u8 *buf, size_t len, size_t *pos,
				  struct ref_result *r)
{
	enum ref_outcome out;
	struct line ln;
	size_t p = *pos, next;
	int prev_lf, prev_masked = 0;

	while (p < len && (blank(buf[p]) || buf[p] == '\r' || buf[p] == '\n'))
		p++;
	if (p == len)
		return REF_INCOMPLETE;
	next = next_line(buf, len, p, &ln);
	out = check_request(buf + ln.start, ln.len, ln.eol_len != 0);
	if (out != REF_BODY)
		return out;
	r->requests++;
	prev_lf = ln.eol_lf;

	for (p = next; p < len; p = next) {
		__u8 *c = buf + p;
		size_t ms = 0, i, nend;
		const __u8 *colon;
		int rule, cont = 0;

		next = next_line(buf, len, p, &ln);
		if (ln.len == 0) {
			if (ln.eol_lf && prev_lf) {
				*pos = next;
				return REF_BODY;
			}
			prev_lf = ln.eol_lf;
			continue;
		}
		prev_lf = ln.eol_lf;
		if (c[0] == ' ' || c[0] == '\t') {
			while (ms < ln.len && (c[ms] == ' ' || c[ms] == '\t'))
				ms++;
			if (prev_masked) {
				for (i = ms; i < ln.len; i++)
					c[i] = 'x';
				continue;
			}
			cont = 1;
		}
		prev_masked = 0;
		for (i = ms; i < ln.len && blank(c[i]); i++)
			;
		if (i == ln.len)
			continue;
		/* Counted as seen like the scanner does: a line that is not a
		 * continuation and whose first non-blank byte starts a name, or
		 * whose very first byte is the colon of an empty name. */
		if (!cont && (c[i] != ':' || i == 0))
			r->seen++;
		colon = memchr(c + i, ':', ln.len - i);
		if (!colon || colon == c + i)
			continue;
		for (nend = (size_t)(colon - c); nend > i && blank(c[nend - 1]); nend--)
			;
		rule = match(l, c + i, nend - i);
		if (rule < 0)
			continue;
		r->matched++;
		if (r->n_hits < REF_MAX_HITS)
			r->hits[r->n_hits++] = (unsigned int)rule;
		if (l->rules[rule].drop)
			return REF_DROP;
		r->masked++;
		mask_line(c, ms, ln.len, (size_t)(colon - c) - ms);
		prev_masked = 1;
	}
	return REF_INCOMPLETE;
}

void ref_strip(const struct ref_list *l, __u8 *buf, size_t len, struct ref_result *r)
{
	size_t pos = 0;

	memset(r, 0, sizeof(*r));
	do {
		r->outcome = strip_one(l, buf, len, &pos, r);
	} while (r->outcome == REF_BODY);
	/* What follows a complete request without starting one is a body. */
	if (r->outcome == REF_NOT_HTTP && r->requests)
		r->outcome = REF_BODY;
}
