// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Reference stripper. It works on whole lines, the way a person would read
 * the rules, and trades every bit of speed for being easy to check:
 *
 *  - lines end at CRLF, a bare LF or a bare CR;
 *  - a request line comes after blank and empty lines: METHOD (1-32 token
 *    bytes; exactly "CONNECT" opens a tunnel), blanks, TARGET, and an
 *    optional version that starts with "HTTP/", blanks after it only; a
 *    connection that starts with a TLS record (0x16) is not HTTP/1.x, and
 *    is left alone;
 *    any other first line that is no request line is a desync (below);
 *  - the method "PRI" with a version that starts "HTTP/2" is HTTP/2's
 *    connection preface, decided at that "2": under the drop policy the
 *    stream stops there; under pass a connection that starts with it is
 *    left alone (not HTTP/1.x), and one after a request is a desync at
 *    that byte;
 *  - a field line's name is the text between the leading blanks and the
 *    first ':', without trailing blanks; it matches a rule when equal to it
 *    after folding ASCII case (and '_' to '-'), or when it starts with a
 *    prefix rule's bytes; an exact rule beats a prefix rule, a longer prefix
 *    beats a shorter one;
 *  - a line that starts with SP/HTAB continues the field before it: masked
 *    with it when that field was masked, otherwise checked on its own; empty
 *    lines that do not end the block leave that link alone (a parser that
 *    does not see them as lines would still fold the next line in), except
 *    a lone LF, which ends it;
 *  - a line that is a name alone (no colon) is a field with an empty value
 *    (nginx reads it so): masked or dropped when the name is listed;
 *  - a masked line is rewritten from its first byte (after the leading
 *    SP/HTAB run of a continuation line) to its end: the filler name cut to
 *    the length of the text before the colon (or of the whole line), ':',
 *    ' ', 'x'...; a masked field's continuation lines keep their SP/HTAB
 *    run and become the filler name's first byte. The filler name is
 *    "x-hdrstrip" with its first byte the first of "xyzqj..." that starts
 *    no rule's name;
 *  - a segment that ends inside a name that some rule could still match
 *    (a prefix of a listed name, or past a prefix rule's bytes, or a whole
 *    listed name followed by blanks) has that name's bytes in the segment
 *    rewritten as a masked line's; the whole line is then masked, matching
 *    or not;
 *  - the block ends at an empty line ended by LF (or CRLF) when the line
 *    end before it had an LF too; any other empty line in a block (a bare
 *    CR one, or one after a bare CR) is where some parser ends it: the
 *    request's framing is then a conflict at the block's end;
 *  - framing: Content-Length, Transfer-Encoding and Upgrade fields (names
 *    exactly that, any case, not masked) of the header block. A length is
 *    digits with blanks around; an empty value, or one that starts with
 *    something else than a digit or a sign, is invalid (no body); anything
 *    else is a conflict. Transfer-Encoding is chunked when its last field's
 *    last coding is "chunked". A conflict too: a framing name with blanks
 *    before it or before its colon, on a continuation line or continued by
 *    one, two different lengths, Transfer-Encoding with a length or not
 *    chunked, a bad chunk. Under the drop policy a conflict stops
 *    everything; under pass, the rest is read line by line;
 *  - a line of a header block that Python's header parser stops at (one
 *    that is no continuation line and has no colon, or a byte outside
 *    0x21-0x7e before its first colon), as it goes out (a masked line is
 *    filler, a field line to everyone but when it is a name alone no longer
 *    than the filler name: it has no colon then), makes a Content-Length or
 *    Transfer-Encoding field after it in the same block a conflict;
 *  - a body: that many bytes, or chunks (hex size, extensions, exactly CRLF
 *    after the data, trailer fields read like header fields); a body on a
 *    request whose method (any case) is GET, HEAD, DELETE, OPTIONS or
 *    TRACE, a length above zero or chunked, is not skipped: the stream goes
 *    line by line from the block's end;
 *  - then the next request; what does not start one is a desync, and the
 *    rest of the stream is read line by line from that line on (from the
 *    line's first byte in its segment; after the connection's first line,
 *    which no server reads as a field); so is what follows CONNECT or a
 *    request with an Upgrade field, and all of a connection without state.
 *    Read line by line, every line is a field line and nothing ends.
 */
#include <stdlib.h>
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

static int match(const struct ref_list *l, const __u8 *name, size_t n);

/* The filler name: "x-hdrstrip" with its first byte taken from @order:
 * the first that begins no rule's name (a prefix rule's included). */
static void pick_fill(struct ref_list *l)
{
	static const char order[] = "xyzqjkvwgfhbpmdcnlutsroiea0123456789!#$%&'*+.^`|~";

	memcpy(l->fill, "x-hdrstrip", 11);
	for (size_t i = 0; order[i]; i++) {
		size_t r;

		for (r = 0; r < l->n; r++)
			if (l->rules[r].len &&
			    fold((__u8)l->rules[r].name[0], l->fold_underscore) ==
				    fold((__u8)order[i], l->fold_underscore))
				break;
		if (r == l->n) {
			l->fill[0] = order[i];
			return;
		}
	}
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
			r->drop = !mask_only &&
				  (!strncasecmp(a, "drop", 4) || !strncasecmp(a, "reject", 6));
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
	pick_fill(l);
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

/* Are the first @n bytes of @a and rule @r's name equal, folded? */
static int same_start(const struct ref_list *l, const __u8 *a, const struct ref_rule *r, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (fold(a[k], l->fold_underscore) != fold((__u8)r->name[k], l->fold_underscore))
			return 0;
	return 1;
}

/* Could a name whose first @n bytes are @name still match some rule? */
static int could_match(const struct ref_list *l, const __u8 *name, size_t n)
{
	size_t core = n, i, k;
	int inner_blank = 0;

	while (core && blank(name[core - 1]))
		core--;
	for (k = 0; k < core; k++)
		inner_blank |= blank(name[k]);
	if (!inner_blank && core < n)
		return match(l, name, core) >= 0; /* a whole name, then blanks */
	for (i = 0; i < l->n; i++) {
		const struct ref_rule *r = &l->rules[i];

		if (r->prefix && r->len <= n && same_start(l, name, r, r->len))
			return 1; /* past a prefix rule: anything matches */
		if (!inner_blank && n <= r->len && same_start(l, name, r, n))
			return 1;
	}
	return 0;
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

/* A request line's words: 0 when complete and valid, 1 when the data ends
 * before it can tell, -1 when it is not one (@*fail: the offset of the
 * first byte that shows it; @n for its line end), 2 when it is HTTP/2's
 * preface (@*fail: the offset of the version's "2"). */
static int check_request(const __u8 *c, size_t n, int has_eol, size_t *fail)
{
	size_t i = 0, k;
	int pri = n > 3 && !memcmp(c, "PRI", 3) && blank(c[3]);

	for (; i < n && !blank(c[i]); i++) {
		if (!tchar(c[i]) || i >= 32) {
			*fail = i;
			return -1;
		}
	}
	if (i < n)
		while (i < n && blank(c[i]))
			i++;
	if (i == n)
		goto short_bad; /* a method alone */
	while (i < n && !blank(c[i]))
		i++;
	while (i < n && blank(c[i]))
		i++;
	if (i == n)
		return has_eol ? 0 : 1; /* HTTP/0.9: no version */
	for (k = 0; k < 5; k++) {
		if (i + k == n)
			goto short_bad;
		if (c[i + k] != (__u8) "HTTP/"[k]) {
			*fail = i + k;
			return -1;
		}
	}
	if (pri && i + 5 < n && c[i + 5] == '2') {
		*fail = i + 5;
		return 2;
	}
	for (i += 5; i < n && !blank(c[i]); i++)
		;
	while (i < n && blank(c[i]))
		i++;
	if (i < n) {
		*fail = i;
		return -1;
	}
	return has_eol ? 0 : 1;
short_bad:
	if (!has_eol)
		return 1;
	*fail = n;
	return -1;
}

static __u8 fill_byte(const struct ref_list *l, size_t col, size_t name_len)
{
	size_t fill = name_len < 10 ? name_len : 10;

	return col < fill ? (__u8)l->fill[col] : col == fill ? ':' : col == fill + 1 ? ' ' : 'x';
}

enum mode {
	M_REQUEST,
	M_FIELDS,
	M_BODY,
	M_CHUNKS,
	M_LINES,
	M_STOP
};

/* One pass over the stream. */
struct ref {
	const struct ref_list *l;
	__u8 *b;
	size_t len;
	const struct ref_opts *o;
	__u8 *touched;
	struct ref_result *r;
	enum mode mode;
	size_t p;
	int seen_request;
	/* the current block */
	int trailers, prev_lf, prev_masked;
	/* the current request's framing */
	int connect, upgrade, cl_seen, te, chunked, bad, prev_framing;
	int bodiless; /* GET, HEAD, DELETE, OPTIONS, TRACE */
	int odd; /* a line of the block Python's header parser stops at */
	__u64 cl;
};

static void touch(struct ref *s, size_t from, size_t to, size_t col0, size_t name_len, int fill_x)
{
	size_t i;

	for (i = from; i < to; i++) {
		s->b[i] = fill_x ? (__u8)s->l->fill[0] : fill_byte(s->l, i - col0, name_len);
		if (s->touched)
			s->touched[i] = 1;
	}
}

/* Start of the segment that holds byte @pos. */
static size_t seg_start(const struct ref *s, size_t pos)
{
	size_t i, start = 0;

	for (i = 0; s->o->ends && i < s->o->n_ends; i++) {
		if (pos < s->o->ends[i])
			break;
		start = s->o->ends[i];
	}
	return start;
}

static int is_seg_end(const struct ref *s, size_t k)
{
	size_t i;

	if (!s->o->ends)
		return k == s->len;
	for (i = 0; i < s->o->n_ends; i++)
		if (s->o->ends[i] == k)
			return 1;
	return 0;
}

static void go_lines(struct ref *s, size_t from)
{
	s->mode = M_LINES;
	s->p = from;
	s->prev_masked = 0;
}

static void new_request(struct ref *s)
{
	s->connect = s->upgrade = s->cl_seen = s->te = s->chunked = s->bad = 0;
	s->prev_framing = s->bodiless = s->odd = 0;
	s->cl = 0;
}

/* A conflict decided at byte @at; line by line from @from under pass. */
static void conflict(struct ref *s, size_t at, size_t from)
{
	s->r->conflicts++;
	if (!s->o->conflict_pass) {
		s->r->outcome = REF_HALT;
		s->r->stop = at;
		s->mode = M_STOP;
		return;
	}
	go_lines(s, from);
}

static void request_done(struct ref *s)
{
	if (s->connect || s->upgrade) {
		go_lines(s, s->p);
		return;
	}
	s->mode = M_REQUEST;
}

static void step_request(struct ref *s)
{
	size_t q = s->p, fail = 0, next;
	struct line ln = { 0 };
	int v;

	while (q < s->len && (blank(s->b[q]) || s->b[q] == '\r' || s->b[q] == '\n'))
		q++;
	if (q == s->len) {
		s->mode = M_STOP;
		return;
	}
	if (!s->seen_request && s->b[q] == 0x16) {
		s->r->not_http = 1;
		s->r->outcome = REF_NOT_HTTP;
		s->r->stop = q;
		s->mode = M_STOP;
		return;
	}
	next = next_line(s->b, s->len, q, &ln);
	v = check_request(s->b + q, ln.len, ln.eol_len != 0, &fail);
	if (v == 1) {
		s->mode = M_STOP;
		return;
	}
	if (v == 2) {
		s->r->h2c++;
		if (!s->o->conflict_pass) {
			s->r->outcome = REF_HALT;
			s->r->stop = q + fail;
			s->mode = M_STOP;
			return;
		}
		if (!s->seen_request) {
			s->r->not_http = 1;
			s->r->outcome = REF_NOT_HTTP;
			s->r->stop = q + fail;
			s->mode = M_STOP;
			return;
		}
		v = -1; /* after a request: a line that starts none */
	}
	if (v < 0) {
		size_t seg = seg_start(s, q + fail);

		s->r->desync++;
		/* A connection's first line is no field to any server: the
		 * lines after it are checked. */
		go_lines(s, !s->seen_request ? next : q > seg ? q : seg);
		return;
	}
	s->r->requests++;
	s->seen_request = 1;
	new_request(s);
	s->connect = ln.len > 7 && !memcmp(s->b + q, "CONNECT", 7) && blank(s->b[q + 7]);
	{
		static const char *const bodiless[] = { "get", "head", "delete", "options",
							"trace" };
		size_t m = 0, k;

		while (m < ln.len && !blank(s->b[q + m]))
			m++;
		for (k = 0; k < 5; k++)
			if (m == strlen(bodiless[k]) &&
			    !strncasecmp((const char *)s->b + q, bodiless[k], m))
				s->bodiless = 1;
	}
	s->trailers = 0;
	s->prev_lf = ln.eol_lf;
	s->prev_masked = 0;
	s->mode = M_FIELDS;
	s->p = next;
}

static int framing_name(const __u8 *n, size_t len)
{
	static const char *const names[] = { "content-length", "transfer-encoding", "upgrade" };
	size_t i, k;

	for (i = 0; i < 3; i++) {
		if (strlen(names[i]) != len)
			continue;
		for (k = 0; k < len; k++)
			if (fold(n[k], 0) != (__u8)names[i][k])
				break;
		if (k == len)
			return (int)i + 1;
	}
	return 0;
}

static void content_length(struct ref *s, const __u8 *v, size_t n)
{
	const __u64 max = 1ULL << 48;
	size_t i = 0;
	__u64 x = 0;

	while (i < n && blank(v[i]))
		i++;
	if (i == n || !(v[i] >= '0' && v[i] <= '9')) {
		if (i < n && (v[i] == '+' || v[i] == '-'))
			s->bad = 1;
		else
			s->r->framing_invalid++;
		return;
	}
	for (; i < n && v[i] >= '0' && v[i] <= '9'; i++) {
		x = x * 10 + (v[i] - '0');
		if (x > max) {
			s->bad = 1;
			return;
		}
	}
	while (i < n && blank(v[i]))
		i++;
	if (i < n) {
		s->bad = 1;
		return;
	}
	if (s->cl_seen && s->cl != x)
		s->bad = 1;
	s->cl = x;
	s->cl_seen = 1;
}

static void transfer_encoding(struct ref *s, const __u8 *v, size_t n)
{
	size_t a = 0, e = n, k;

	for (k = 0; k < n; k++)
		if (v[k] == ',')
			a = k + 1;
	while (a < e && (v[a] == ' ' || v[a] == '\t'))
		a++;
	while (e > a && (v[e - 1] == ' ' || v[e - 1] == '\t'))
		e--;
	s->te = 1;
	s->chunked = e - a == 7;
	for (k = 0; s->chunked && k < 7; k++)
		if (fold(v[a + k], 0) != (__u8) "chunked"[k])
			s->chunked = 0;
}

static void block_done(struct ref *s, size_t lf)
{
	if (s->bad) {
		conflict(s, lf, s->p);
		return;
	}
	if (s->trailers) {
		request_done(s);
		return;
	}
	if (s->te && (s->cl_seen || !s->chunked)) {
		conflict(s, lf, s->p);
		return;
	}
	if (s->bodiless && (s->te || (s->cl_seen && s->cl))) {
		/* Read as the next requests by some origins, skipped by
		 * others: line by line from here. */
		s->r->bodies_unframed++;
		go_lines(s, s->p);
		return;
	}
	if (s->te) {
		s->mode = M_CHUNKS;
		return;
	}
	if (s->cl_seen && s->cl) {
		s->mode = M_BODY;
		return;
	}
	request_done(s);
}

/* Does Python's header parser stop at line @c (@n bytes, not a
 * continuation line)? It reads a field line only up to a colon whose name
 * bytes are all 0x21-0x7e. */
static int py_stops(const __u8 *c, size_t n)
{
	size_t i;

	for (i = 0; i < n && c[i] != ':'; i++)
		if (c[i] < 0x21 || c[i] > 0x7e)
			return 1;
	return i == n;
}

/* A line's name matched @rule (decided at byte @at): counted; 1 when it
 * drops the stream there, 0 when the line is to be masked. */
static int matched(struct ref *s, int rule, size_t at)
{
	s->r->matched++;
	if (s->r->n_hits < REF_MAX_HITS)
		s->r->hits[s->r->n_hits++] = (unsigned int)rule;
	if (s->l->rules[rule].drop) {
		s->r->outcome = REF_DROP;
		s->r->stop = at;
		s->mode = M_STOP;
		return 1;
	}
	s->r->masked++;
	return 0;
}

/* One line of a field block (M_FIELDS) or of a line-by-line scan (M_LINES). */
static void step_field_line(struct ref *s)
{
	const int lines = s->mode == M_LINES;
	size_t p = s->p, next, ms = 0, i, k, colon_at, name_end, nend;
	struct line ln;
	__u8 *c = s->b + p;
	int cont = 0, premasked = 0, rule, fr, stops;
	const __u8 *colon;
	__u8 *name;

	if (p >= s->len) {
		s->mode = M_STOP;
		return;
	}
	next = next_line(s->b, s->len, p, &ln);
	s->p = next;
	if (ln.len == 0) {
		if (!lines && ln.eol_lf && s->prev_lf) {
			block_done(s, next - 1);
			return;
		}
		/* An empty line some parser ends the block at. (A bare CR at
		 * the very end of the data is not one yet.) */
		if (!lines && (ln.eol_lf || next < s->len))
			s->bad = 1;
		if (ln.eol_len == 1 && ln.eol_lf)
			s->prev_masked = 0;
		s->prev_lf = ln.eol_lf;
		return;
	}
	s->prev_lf = ln.eol_lf;
	if (c[0] == ' ' || c[0] == '\t') {
		cont = 1;
		if (s->prev_framing)
			s->bad = 1;
		while (ms < ln.len && (c[ms] == ' ' || c[ms] == '\t'))
			ms++;
		if (s->prev_masked) {
			touch(s, p + ms, p + ln.len, 0, 0, 1);
			return;
		}
	} else {
		s->prev_framing = 0;
	}
	s->prev_masked = 0;
	/* Kept as it came, a line Python's header parser stops at hides the
	 * framing fields after it from that parser. */
	stops = !cont && py_stops(c, ln.len);
	for (i = ms; i < ln.len && blank(c[i]); i++)
		;
	if (i == ln.len) {
		s->odd |= stops;
		return;
	}
	/* Counted as seen like the scanner does: a line that is not a
	 * continuation and whose first non-blank byte starts a name, or whose
	 * very first byte is the colon of an empty name. */
	if (!cont && (c[i] != ':' || i == 0))
		s->r->seen++;
	if (c[i] == ':') {
		s->odd |= stops;
		return;
	}
	colon = memchr(c + i, ':', ln.len - i);
	colon_at = colon ? (size_t)(colon - c) : 0;
	name_end = colon ? colon_at : ln.len;
	/* The name as it came: rewriting ahead changes the line's bytes. */
	name = malloc(name_end - i);
	if (!name) {
		s->mode = M_STOP;
		return;
	}
	memcpy(name, c + i, name_end - i);

	/* Segment ends inside the name: rewritten ahead when it could match. */
	for (k = p + i + 1; k <= p + name_end; k++) {
		size_t from;

		if (!is_seg_end(s, k) || !(premasked || could_match(s->l, name, k - p - i)))
			continue;
		premasked = 1;
		s->r->premasked++;
		from = seg_start(s, k - 1);
		if (from < p + ms)
			from = p + ms;
		touch(s, from, k, p + ms, 10, 0);
	}

	if (!colon) {
		/* A name alone: a field with an empty value to nginx; no field
		 * to Python, kept, or masked into a filler as short (which has
		 * no colon either; a longer one has). */
		for (nend = ln.len; nend > i && blank(name[nend - 1 - i]); nend--)
			;
		rule = ln.eol_len ? match(s->l, name, nend - i) : -1;
		free(name);
		if (rule >= 0 && matched(s, rule, p + ln.len))
			return;
		if (ln.eol_len && (premasked || rule >= 0)) {
			touch(s, p + ms, p + ln.len, p + ms, ln.len - ms, 0);
			s->prev_masked = 1;
		}
		s->odd |= !cont && py_stops(c, ln.len);
		return;
	}
	for (nend = colon_at; nend > i && blank(name[nend - 1 - i]); nend--)
		;
	rule = match(s->l, name, nend - i);
	fr = lines || s->trailers ? 0 : framing_name(name, nend - i);
	free(name);
	if (rule >= 0) {
		if (matched(s, rule, p + colon_at))
			return;
		touch(s, p + ms, p + ln.len, p + ms, colon_at - ms, 0);
		s->prev_masked = 1;
		return;
	}
	if (!premasked)
		s->odd |= stops;
	if (fr && (cont || i > 0 || nend < colon_at)) {
		s->bad = 1; /* blanks around a framing name */
	} else if (fr) {
		/* Python read no field after a line it stopped at: a length
		 * or a coding it never sees. */
		if (s->odd && fr != 3)
			s->bad = 1;
		s->prev_framing = 1;
		if (fr == 3)
			s->upgrade = 1;
		else if (!premasked && ln.eol_len && fr == 1)
			content_length(s, colon + 1, ln.len - colon_at - 1);
		else if (!premasked && ln.eol_len && fr == 2)
			transfer_encoding(s, colon + 1, ln.len - colon_at - 1);
	}
	if (premasked) {
		/* Its first bytes are gone already: the rest goes too. */
		touch(s, p + ms, p + ln.len, p + ms, colon_at - ms, 0);
		s->prev_masked = 1;
	}
}

static void step_body(struct ref *s)
{
	size_t left = s->len - s->p;

	if (s->cl > left) {
		s->p = s->len;
		s->mode = M_STOP;
		return;
	}
	s->p += s->cl;
	request_done(s);
}

static int hex(__u8 b)
{
	if (b >= '0' && b <= '9')
		return b - '0';
	if (b >= 'a' && b <= 'f')
		return b - 'a' + 10;
	if (b >= 'A' && b <= 'F')
		return b - 'A' + 10;
	return -1;
}

/* One chunk: size line, data, CRLF; or the last chunk, then trailers. */
static void step_chunk(struct ref *s)
{
	const __u8 *b = s->b;
	size_t q = s->p, len = s->len, digits = 0;
	__u64 size = 0;

	for (; q < len && hex(b[q]) >= 0; q++, digits++) {
		size = size * 16 + (__u64)hex(b[q]);
		if (size > 1ULL << 48)
			goto bad;
	}
	if (q == len)
		goto data_end;
	if (!digits)
		goto bad;
	if (b[q] == ';' || b[q] == ' ' || b[q] == '\t')
		while (q < len && b[q] != '\r' && b[q] != '\n')
			q++;
	if (q == len)
		goto data_end;
	if (b[q] == '\r' && ++q == len)
		goto data_end;
	if (b[q] != '\n')
		goto bad;
	q++;
	if (!size) {
		s->trailers = 1;
		s->prev_lf = 1;
		s->prev_masked = 0;
		s->mode = M_FIELDS;
		s->p = q;
		return;
	}
	if (size >= len - q)
		goto data_end;
	q += size;
	/* Exactly CRLF after the data (a bare LF is read two ways). */
	if (b[q] != '\r')
		goto bad;
	if (++q == len)
		goto data_end;
	if (b[q] != '\n')
		goto bad;
	s->p = q + 1;
	return;
bad:
	conflict(s, q, q);
	return;
data_end:
	s->mode = M_STOP;
}

void ref_strip_ex(const struct ref_list *l, __u8 *buf, size_t len, const struct ref_opts *o,
		  __u8 *touched, struct ref_result *r)
{
	struct ref s;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	s.l = l;
	s.b = buf;
	s.len = len;
	s.o = o;
	s.touched = touched;
	s.r = r;
	s.mode = M_REQUEST;
	if (o->untracked) {
		/* No state: line by line from the first byte. */
		s.seen_request = 1;
		go_lines(&s, 0);
	}
	if (touched)
		memset(touched, 0, len);
	while (s.mode != M_STOP) {
		switch (s.mode) {
		case M_REQUEST:
			step_request(&s);
			break;
		case M_FIELDS:
		case M_LINES:
			step_field_line(&s);
			break;
		case M_BODY:
			step_body(&s);
			break;
		case M_CHUNKS:
			step_chunk(&s);
			break;
		default:
			s.mode = M_STOP;
			break;
		}
	}
}

void ref_strip(const struct ref_list *l, __u8 *buf, size_t len, struct ref_result *r)
{
	const struct ref_opts o = { 0 };

	ref_strip_ex(l, buf, len, &o, NULL, r);
}
