// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The header-list format: one name per line, '#' comments, an optional
 * action word and direction word, '@' directives. Every error names the
 * file and line and nothing is produced on error.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hlist.h"

static __attribute__((format(printf, 2, 3))) int fail(struct hs_err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->bad_input = 1;
	return -EINVAL;
}

/* Bytes a header-list name may hold: visible ASCII but ':'. RFC 9110
 * tokens are a subset; the rest draw a warning (strict servers reject such
 * names, lenient ones such as Python's accept them). */
int hs_is_name_byte(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != ':';
}

int hs_is_tchar(unsigned char c)
{
	/* RFC 9110: ALPHA / DIGIT / "!#$%&'*+-.^_`|~", as a bitmap of the
	 * bytes below 0x80 (every byte of every name asks). */
	static const __u64 tchar[2] = { 0x03ff6cfa00000000ULL, 0x57ffffffc7fffffeULL };

	return c < 0x80 && (tchar[c >> 6] >> (c & 63) & 1);
}

unsigned char hs_fold_byte(unsigned char c, int fold_underscore)
{
	if (!hs_is_name_byte(c))
		return 0;
	if (c >= 'A' && c <= 'Z')
		return c + ('a' - 'A');
	if (c == '_' && fold_underscore)
		return '-';
	return c;
}

void hs_prefault(void *p, size_t len)
{
	uintptr_t pg = sysconf(_SC_PAGESIZE), a = (uintptr_t)p & ~(pg - 1),
		  e = ((uintptr_t)p + len + pg - 1) & ~(pg - 1);

	/* A hint: on failure (before Linux 5.14) the pages fault in one by one. */
	if (len)
		madvise((void *)a, e - a, MADV_POPULATE_WRITE);
}

void hs_list_opts_default(struct hs_list_opts *o)
{
	o->fold_underscore = -1;
	o->warn = NULL;
	o->builtin = 0;
}

int hs_list_builtin(const struct hs_list *l)
{
	return l->n && l->names[l->n - 1].builtin;
}

void hs_list_free(struct hs_list *l)
{
	free(l->names);
	free(l->strings);
	l->names = NULL;
	l->strings = NULL;
	l->n = 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Render a byte for an error message: 'c', or '\xNN' when not printable. */
static const char *show_byte(unsigned char c, char buf[8])
{
	if (c >= 0x21 && c < 0x7f)
		snprintf(buf, 8, "'%c'", c);
	else if (c == ' ')
		snprintf(buf, 8, "' '");
	else
		snprintf(buf, 8, "'\\x%02x'", c);
	return buf;
}

/*
 * A name, or a word of a list line, as messages show it: its first bytes up
 * to the first one that is not an RFC 9110 token character, at most 40,
 * then "..." if anything was left out. A file given as a list by mistake
 * (/etc/shadow, a .env file) is not copied into a message, a terminal or a
 * log: "root:$6$..." shows as "root...", "API_KEY=s3cret" as "API_KEY...".
 * Real header names are tokens, and show whole.
 */
#define SHOW_MAX 40

static const char *show_name(const char *s, size_t len, char buf[SHOW_MAX + 4])
{
	size_t i;

	for (i = 0; i < len && i < SHOW_MAX && hs_is_tchar((unsigned char)s[i]); i++)
		buf[i] = s[i];
	if (i < len)
		memcpy(buf + i, "...", 3), i += 3;
	buf[i] = 0;
	return buf;
}

/*
 * A name the list accepted, as its warnings show it: whole (at most
 * SHOW_MAX bytes, then "..."), '"' and '\\' escaped; but not what follows
 * an '=': a KEY=VALUE line is rather a secret in a file given as a list by
 * mistake than a header name, and its value stays out of the message.
 */
static const char *show_listed(const char *s, size_t len, char buf[2 * SHOW_MAX + 4])
{
	size_t i, o = 0;

	for (i = 0; i < len && i < SHOW_MAX && s[i] != '='; i++) {
		if (s[i] == '"' || s[i] == '\\')
			buf[o++] = '\\';
		buf[o++] = s[i];
	}
	if (i < len)
		memcpy(buf + o, "...", 3), o += 3;
	buf[o] = 0;
	return buf;
}

/* A name's first byte that is not a token character; @len if none. */
static size_t first_non_token(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && hs_is_tchar((unsigned char)s[i]))
		i++;
	return i;
}

static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t d[16][16], i, j;

	if (la > 15 || lb > 15)
		return 99;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t c = d[i - 1][j - 1] + ((a[i - 1] | 0x20) != b[j - 1]);

			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && (a[i - 1] | 0x20) == b[j - 2] &&
			    (a[i - 2] | 0x20) == b[j - 1] && d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[la][lb];
}

/* A word of table @names (its values @first..@n - 1), in any case: the
 * value, or -1. */
static int parse_word(const char *w, size_t len, const char *const *names, int first, int n)
{
	for (int v = first; v < n; v++)
		if (strlen(names[v]) == len && !strncasecmp(w, names[v], len))
			return v;
	return -1;
}

/* Edits from @w to the nearest word of table @names (values @first..@n -
 * 1): a word of letters within two is a misspelling of it, worth naming;
 * anything else (99: not letters only) is not meant as one. */
static size_t word_distance(const char *w, size_t len, const char *const *names, int first, int n)
{
	size_t best = 99;

	for (size_t i = 0; i < len; i++)
		if (!((w[i] | 0x20) >= 'a' && (w[i] | 0x20) <= 'z'))
			return best;
	for (int v = first; v < n; v++) {
		size_t d = edit_distance(w, len, names[v], strlen(names[v]));

		if (d < best)
			best = d;
	}
	return best;
}

#define NEAR_MISS 2

/* The words of table @names (values @first..@n - 1) as messages list them,
 * into @buf: "'mask', 'drop' or 'observe'". From the table, so a new
 * action or direction is in every hint at once. */
static const char *words_of(const char *const *names, int first, int n, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = 0;
	for (int v = first; v < n && o < size; v++)
		o += snprintf(buf + o, size - o, "%s'%s'",
			      v == first   ? ""
			      : v == n - 1 ? " or "
					   : ", ",
			      names[v]);
	return buf;
}

/* Room for the words of either table. */
#define WORDS_MAX 128

static const char *action_words(char buf[WORDS_MAX])
{
	return words_of(hs_action_names, 0, HS_ACT_MAX, buf, WORDS_MAX);
}

static const char *dirs_words(char buf[WORDS_MAX])
{
	return words_of(hs_dir_set_names, HS_DIRSET_REQUEST, HS_DIRSET_MAX, buf, WORDS_MAX);
}

/* The words of a line's action and direction tables. */
static int parse_action(const char *w, size_t len)
{
	return parse_word(w, len, hs_action_names, 0, HS_ACT_MAX);
}

static size_t action_distance(const char *w, size_t len)
{
	return word_distance(w, len, hs_action_names, 0, HS_ACT_MAX);
}

/* A list names a direction set that is not empty. */
static int parse_dirs(const char *w, size_t len)
{
	return parse_word(w, len, hs_dir_set_names, HS_DIRSET_REQUEST, HS_DIRSET_MAX);
}

static size_t dirs_distance(const char *w, size_t len)
{
	return word_distance(w, len, hs_dir_set_names, HS_DIRSET_REQUEST, HS_DIRSET_MAX);
}

struct line_ctx {
	const char *path;
	unsigned int lineno;
	struct hs_err *err;
	void (*warn)(const char *msg);
	char *strings; /* where the next name's strings go */
};

#define KNOWN_DIRECTIVES "@fold-underscore on|off, @h2c-upgrade block|allow"

/* "@key value": a directive's value, one of two words (@w1 gives 1, @w0
 * 0), into @out. */
static int directive_value(const struct line_ctx *c, const char *key, const char *val, size_t vlen,
			   const char *w1, const char *w0, int *out)
{
	char buf[SHOW_MAX + 4];

	if (vlen == strlen(w1) && !strncmp(val, w1, vlen)) {
		*out = 1;
		return 0;
	}
	if (vlen == strlen(w0) && !strncmp(val, w0, vlen)) {
		*out = 0;
		return 0;
	}
	return fail(c->err, "%s:%u: @%s takes '%s' or '%s', not \"%s\"", c->path, c->lineno, key,
		    w1, w0, show_name(val, vlen, buf));
}

/* The list's own settings: @fold-underscore into @fold, @h2c-upgrade
 * (block: the built-in rule, allow: none) into @h2c_block. */
static int parse_directive(const struct line_ctx *c, const char *s, size_t len, int *fold,
			   int *h2c_block)
{
	char buf[SHOW_MAX + 4];
	const char *key = s + 1, *val;
	size_t klen = 0, vlen;

	while (klen < len - 1 && !is_space(key[klen]))
		klen++;
	val = key + klen;
	while (val < s + len && is_space(*val))
		val++;
	vlen = s + len - val;
	if (klen == 15 && !strncmp(key, "fold-underscore", 15))
		return directive_value(c, "fold-underscore", val, vlen, "on", "off", fold);
	if (klen == 11 && !strncmp(key, "h2c-upgrade", 11))
		return directive_value(c, "h2c-upgrade", val, vlen, "block", "allow", h2c_block);
	return fail(c->err, "%s:%u: unknown directive \"@%s\" (known: " KNOWN_DIRECTIVES ")",
		    c->path, c->lineno, show_name(key, klen, buf));
}

_Static_assert(HS_MAX_NAME_LEN <= 0xffff, "a name's length fits hs_name.len");

/* A word of a line: [s, s + len). */
struct word {
	const char *s;
	size_t len;
};

/* Split line @s into at most @max words; returns how many there are. */
static size_t split_words(const char *s, size_t len, struct word *w, size_t max)
{
	const char *e = s + len;
	size_t n = 0;

	while (n < max) {
		while (s < e && is_space(*s))
			s++;
		if (s == e)
			break;
		w[n].s = s;
		while (s < e && !is_space(*s))
			s++;
		w[n].len = s - w[n].s;
		n++;
	}
	return n;
}

/*
 * The words after a name (@w[0]): [ACTION] [DIRECTION], into @act and
 * @dirs. A word that is neither, nor within two edits of one, is not meant
 * as one: the name has white space in it, or the line is no list line
 * (a secret's value), and the message shows no more of it.
 */
static int parse_rule_words(const struct line_ctx *c, const char *s, size_t len,
			    const struct word *w, size_t nw, int *act, int *dirs)
{
	char nb[SHOW_MAX + 4], wb[SHOW_MAX + 4], bb[8], aw[WORDS_MAX], dw[WORDS_MAX];
	const char *name = show_name(w[0].s, w[0].len, nb);
	size_t k = 1, da, dd;

	*act = parse_action(w[1].s, w[1].len);
	if (*act >= 0)
		k++;
	else
		*act = HS_ACT_MASK;
	if (k < nw) {
		*dirs = parse_dirs(w[k].s, w[k].len);
		if (*dirs >= 0) {
			k++;
		} else {
			da = k == 1 ? action_distance(w[k].s, w[k].len) : 99;
			dd = dirs_distance(w[k].s, w[k].len);
			if (da <= NEAR_MISS && da <= dd)
				return fail(
					c->err,
					"%s:%u: unknown action \"%s\" for header name \"%s\" (expected %s)",
					c->path, c->lineno, show_name(w[k].s, w[k].len, wb), name,
					action_words(aw));
			if (dd <= NEAR_MISS)
				return fail(
					c->err,
					"%s:%u: unknown direction \"%s\" for header name \"%s\" (expected %s)",
					c->path, c->lineno, show_name(w[k].s, w[k].len, wb), name,
					dirs_words(dw));
			if (k == 1)
				/* The name itself has white space in it: name the
				 * byte, which may be a tab rather than a space. */
				return fail(
					c->err,
					"%s:%u: invalid character %s in header name \"%s\" (after the name may come an action, %s, and a direction, %s)",
					c->path, c->lineno, show_byte(s[w[0].len], bb),
					show_name(s, len, wb), action_words(aw), dirs_words(dw));
			return fail(
				c->err,
				"%s:%u: unexpected word after the action of header name \"%s\" (expected a direction: %s)",
				c->path, c->lineno, name, dirs_words(dw));
		}
	}
	if (k < nw) {
		if (parse_action(w[k].s, w[k].len) >= 0)
			return fail(
				c->err,
				"%s:%u: action \"%s\" after the direction of header name \"%s\" (a line is NAME [ACTION] [DIRECTION])",
				c->path, c->lineno, show_name(w[k].s, w[k].len, wb), name);
		return fail(
			c->err,
			"%s:%u: unexpected word after the direction of header name \"%s\" (a line is NAME [ACTION] [DIRECTION])",
			c->path, c->lineno, name);
	}
	return 0;
}

/* One name line: NAME [ACTION] [DIRECTION], comment already removed,
 * trimmed. */
static int parse_name_line(struct line_ctx *c, const char *s, size_t len, struct hs_name *out)
{
	char buf[SHOW_MAX + 4], bb[8];
	struct word w[4];
	size_t nw, nlen, i;
	int act = HS_ACT_MASK, dirs = HS_DIRSET_REQUEST, r;

	/* Never NULL, even on an error path the analyzers follow (they do not
	 * see that the variadic fail() never returns 0); set below. */
	out->orig = out->name = c->strings;
	/* A fourth word after the name is only looked for to be refused. */
	nw = split_words(s, len, w, HS_ARRAY_SIZE(w));
	nlen = w[0].len;
	if (nw > 1) {
		r = parse_rule_words(c, s, len, w, nw, &act, &dirs);
		if (r)
			return r;
	}
	for (i = 0; i < nlen; i++) {
		unsigned char ch = s[i];

		if (ch == '*' && i == nlen - 1 && i > 0)
			continue;
		if (!hs_is_name_byte(ch))
			return fail(c->err, "%s:%u: invalid character %s in header name \"%s\"",
				    c->path, c->lineno, show_byte(ch, bb), show_name(s, nlen, buf));
		if (!hs_is_tchar(ch))
			out->non_token = 1;
	}
	out->prefix = s[nlen - 1] == '*';
	if (out->prefix && nlen == 1)
		return fail(
			c->err,
			"%s:%u: prefix rule \"*\" needs at least one byte before the '*' (it would match every header)",
			c->path, c->lineno);
	/* Checked before it is narrowed to hs_name's 16 bits: a name of
	 * 65,536 + k bytes would pass as k bytes long, and be copied whole
	 * into room for k. */
	if (nlen - out->prefix > HS_MAX_NAME_LEN)
		return fail(c->err, "%s:%u: header name is %zu bytes long; the limit is %d",
			    c->path, c->lineno, nlen - out->prefix, HS_MAX_NAME_LEN);
	out->len = (__u16)(nlen - out->prefix);
	/* orig, then room for the folded name (fold_and_check() writes it). */
	out->orig = c->strings;
	out->name = c->strings + nlen + 1;
	c->strings = out->name + out->len + 1;
	memcpy(out->orig, s, nlen);
	if (out->non_token && c->warn) {
		char w[HS_ERR_MSG], lb[2 * SHOW_MAX + 4];

		snprintf(
			w, sizeof(w),
			"%s:%u: header name \"%s\" is not an RFC 9110 token (%s is not a token character): strict servers reject such a header, lenient ones accept it; it is matched as written",
			c->path, c->lineno, show_listed(s, nlen, lb),
			show_byte(s[first_non_token(s, nlen)], bb));
		c->warn(w);
	}
	if (memchr(s, '*', nlen - out->prefix) && c->warn) {
		char w[HS_ERR_MSG], lb[2 * SHOW_MAX + 4];

		/* "x-*-auth": a glob was meant, but '*' is a token byte. */
		snprintf(
			w, sizeof(w),
			"%s:%u: header name \"%s\" has a '*' before its end: it is matched as that byte (only a '*' at the end makes a prefix rule; there are no wildcards inside a name)",
			c->path, c->lineno, show_listed(s, nlen, lb));
		c->warn(w);
	}
	out->orig[nlen] = 0;
	out->action = act;
	out->directions = dirs;
	out->line = c->lineno;
	return 0;
}

__u32 hs_name_hash(const char *name, size_t len, int prefix)
{
	__u32 h = 2166136261u ^ (__u32)prefix; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h ^ (h >> 15);
}

/* Names seen so far, by folded name and prefix flag: index + 1 into the
 * list (0: empty), at most half full. */
#define SEEN_TABLE (2 * HS_MAX_NAMES)

_Static_assert((SEEN_TABLE & (SEEN_TABLE - 1)) == 0, "the table size is a power of two");
_Static_assert(HS_MAX_NAMES < 0x10000, "table entries fit 16 bits");

/* The directions two rules of one name share, for a message. */
static const char *dup_dirs_words(enum hs_dir_set dirs)
{
	switch (dirs) {
	case HS_DIRSET_REQUEST:
		return "requests";
	case HS_DIRSET_RESPONSE:
		return "responses";
	case HS_DIRSET_BOTH:
		return "requests and responses";
	case HS_DIRSET_NONE:
	case HS_DIRSET_MAX:
		break;
	}
	return "?";
}

/* Fold every name and report the first duplicate by line order: the first
 * name whose equal came before it (names are in line order). */
static int fold_and_check(struct hs_list *l, const char *path, struct hs_err *err)
{
	__u16 seen[SEEN_TABLE] = { 0 };
	struct hs_name *dup = NULL, *first = NULL;
	char db[SHOW_MAX + 4], fb[SHOW_MAX + 4], for_dirs[32];
	size_t i;

	unsigned char used[256] = { 0 };
	unsigned int distinct = 0;

	for (i = 0; i < l->n; i++) {
		struct hs_name *nm = &l->names[i];

		for (size_t j = 0; j < nm->len; j++) {
			unsigned char f = hs_fold_byte(nm->orig[j], l->fold_underscore);

			nm->name[j] = f;
			if (used[f])
				continue;
			used[f] = 1;
			/* The trie gives each folded byte a bit of a 64-bit mask
			 * (one bit stands for "no such byte"): tokens use at most
			 * 51, but visible ASCII has 67 after case folding. */
			if (++distinct > HS_MAX_SYMS - 1) {
				char bb[8], nb[SHOW_MAX + 4];

				if (nm->builtin)
					return fail(
						err,
						"%s: the built-in rule \"%s\" (it keeps h2c upgrades out) brings a %uth distinct byte (%s) into the list; names may use at most %d different bytes: list fewer different bytes, or say \"@h2c-upgrade allow\"",
						path, nm->orig, distinct, show_byte(f, bb),
						HS_MAX_SYMS - 1);
				return fail(
					err,
					"%s:%u: header name \"%s\" brings a %uth distinct byte (%s) into the list; names may use at most %d different bytes (a letter counts once in either case)",
					path, nm->line, show_name(nm->orig, strlen(nm->orig), nb),
					distinct, show_byte(f, bb), HS_MAX_SYMS - 1);
			}
		}
		nm->name[nm->len] = 0;
	}
	/* A name may come twice (of one kind) for disjoint directions, so
	 * twice in the table: at most that, the directions being two. */
	for (i = 0; i < l->n && !dup; i++) {
		struct hs_name *nm = &l->names[i];

		for (__u32 h = hs_name_hash(nm->name, nm->len, nm->prefix);; h++) {
			__u16 *e = &seen[h & (SEEN_TABLE - 1)];
			struct hs_name *o = *e ? &l->names[*e - 1] : NULL;

			if (!o) {
				*e = i + 1;
				break;
			}
			if (o->len == nm->len && o->prefix == nm->prefix &&
			    (o->directions & nm->directions) &&
			    !memcmp(o->name, nm->name, nm->len)) {
				dup = nm;
				first = o;
				break;
			}
		}
	}
	if (!dup)
		return 0;
	show_name(dup->orig, strlen(dup->orig), db);
	/* Lists that name no direction read as they always have. */
	if ((dup->directions | first->directions) == HS_DIRSET_REQUEST)
		for_dirs[0] = 0;
	else
		snprintf(for_dirs, sizeof(for_dirs), " for %s",
			 dup_dirs_words((enum hs_dir_set)(dup->directions & first->directions)));
	if (!strcmp(dup->orig, first->orig))
		return fail(err, "%s:%u: duplicate header name \"%s\"%s (first on line %u)", path,
			    dup->line, db, for_dirs, first->line);
	return fail(
		err,
		"%s:%u: duplicate header name \"%s\"%s: same as \"%s\" on line %u (names are case-insensitive%s)",
		path, dup->line, db, for_dirs, show_name(first->orig, strlen(first->orig), fb),
		first->line, l->fold_underscore ? " and '_' matches '-'" : "");
}

/* 1 when a request rule of @l (not folded yet) covers HS_BUILTIN_H2C:
 * that name, or a prefix of it with '*'. The list's rule then decides. */
static int covers_h2c(const struct hs_list *l)
{
	static const char h2c[] = HS_BUILTIN_H2C;

	for (size_t i = 0; i < l->n; i++) {
		const struct hs_name *nm = &l->names[i];
		size_t j;

		if (!(nm->directions & HS_DIRSET_REQUEST) || nm->len > sizeof(h2c) - 1 ||
		    (!nm->prefix && nm->len != sizeof(h2c) - 1))
			continue;
		for (j = 0; j < nm->len; j++)
			if (hs_fold_byte(nm->orig[j], l->fold_underscore) != (unsigned char)h2c[j])
				break;
		if (j == nm->len)
			return 1;
	}
	return 0;
}

/* The built-in rule into @nm, its strings at @strings (room for both). */
static void add_builtin(struct hs_name *nm, char *strings)
{
	static const char h2c[] = HS_BUILTIN_H2C;

	memset(nm, 0, sizeof(*nm));
	nm->orig = strings;
	nm->name = strings + sizeof(h2c);
	memcpy(nm->orig, h2c, sizeof(h2c));
	nm->len = sizeof(h2c) - 1;
	nm->action = HS_ACT_MASK;
	nm->directions = HS_DIRSET_REQUEST;
	nm->builtin = 1;
}

int hs_list_parse(const char *text, size_t len, const char *path, const struct hs_list_opts *opts,
		  struct hs_list *out, struct hs_err *err)
{
	struct line_ctx c = { .path = path, .err = err, .warn = opts ? opts->warn : NULL };
	struct hs_list l = { 0 };
	int fold = 1, h2c_block = 1, r;
	size_t pos = 0, cap = 0, strings;

	err->msg[0] = 0;
	err->bad_input = 0;
	if (len > HS_LIST_MAX_BYTES) {
		snprintf(err->msg, sizeof(err->msg), "%s: header list is larger than 64 MiB", path);
		err->bad_input = 1;
		return -EFBIG;
	}
	/* Room for a name on every line, up to the limit. */
	for (const char *p = text, *e = text + len; p < e && cap < HS_MAX_NAMES; cap++) {
		const char *nl = memchr(p, '\n', e - p);

		p = nl ? nl + 1 : e;
	}
	if (!cap)
		cap = 1;
	/* A name's two strings take at most its line twice, and at most
	 * (HS_MAX_NAME_LEN + 2) + (HS_MAX_NAME_LEN + 1) bytes: longer names
	 * are refused before they are copied. */
	strings = 2 * (len + 1);
	if (strings > cap * (2 * HS_MAX_NAME_LEN + 3))
		strings = cap * (2 * HS_MAX_NAME_LEN + 3);
	/* And room for the built-in rule. */
	strings += 2 * sizeof(HS_BUILTIN_H2C);
	l.names = calloc(cap + 1, sizeof(*l.names));
	l.strings = malloc(strings);
	if (!l.names || !l.strings) {
		snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
		hs_list_free(&l);
		return -ENOMEM;
	}
	hs_prefault(l.names, (cap + 1) * sizeof(*l.names));
	hs_prefault(l.strings, strings);
	c.strings = l.strings;
	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - s) : len - pos;
		size_t i;

		pos += llen + (nl != NULL);
		c.lineno++;
		/* A comment starts with '#' at the start or after white space;
		 * elsewhere '#' is a token character. */
		for (i = 0; i < llen; i++)
			if (s[i] == '#' && (i == 0 || is_space(s[i - 1])))
				break;
		llen = i;
		while (llen && is_space(s[llen - 1]))
			llen--;
		while (llen && is_space(*s)) {
			s++;
			llen--;
		}
		if (!llen)
			continue;
		if (memchr(s, 0, llen)) {
			r = fail(err, "%s:%u: invalid character '\\x00' in header name", path,
				 c.lineno);
			goto out;
		}
		if (*s == '@') {
			r = parse_directive(&c, s, llen, &fold, &h2c_block);
			if (r)
				goto out;
			continue;
		}
		if (l.n == cap) {
			r = fail(err, "%s:%u: more than %d header names (the limit)", path,
				 c.lineno, HS_MAX_NAMES);
			goto out;
		}
		r = parse_name_line(&c, s, llen, &l.names[l.n]);
		if (r)
			goto out;
		l.n++;
	}
	if (!l.n) {
		r = fail(err, "%s: no header names (the list is empty)", path);
		goto out;
	}
	l.fold_underscore = opts && opts->fold_underscore >= 0 ? opts->fold_underscore : fold;
	if (opts && opts->builtin && h2c_block && !covers_h2c(&l)) {
		if (l.n == HS_MAX_NAMES) {
			r = fail(
				err,
				"%s: %d header names leave no room for the built-in rule \"" HS_BUILTIN_H2C
				"\" (it keeps h2c upgrades out; the limit is %d in all): list one name fewer, or list \"" HS_BUILTIN_H2C
				"\" in place of another name, or say \"@h2c-upgrade allow\"",
				path, HS_MAX_NAMES, HS_MAX_NAMES);
			goto out;
		}
		add_builtin(&l.names[l.n++], c.strings);
	}
	r = fold_and_check(&l, path, err);
	if (r)
		goto out;
	*out = l;
	return 0;
out:
	hs_list_free(&l);
	return r;
}

int hs_list_load(const char *path, const struct hs_list_opts *opts, struct hs_list *out,
		 struct hs_err *err)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int r;

	if (!f) {
		r = -errno;
		snprintf(err->msg, sizeof(err->msg), "cannot open header list '%s': %s", path,
			 strerror(errno));
		/* A path that leads to no readable file is the user's input being
		 * wrong: missing, a directory, a symlink loop, no permission. */
		err->bad_input = r == -ENOENT || r == -EISDIR || r == -ENOTDIR || r == -ELOOP ||
				 r == -EACCES || r == -EPERM || r == -ENAMETOOLONG || r == -ENXIO;
		return r;
	}
	do {
		if (len == cap) {
			char *nb;

			cap = cap ? cap * 2 : 65536;
			if (cap > HS_LIST_MAX_BYTES) {
				r = -EFBIG;
				snprintf(err->msg, sizeof(err->msg),
					 "%s: header list is larger than 64 MiB", path);
				err->bad_input = 1;
				goto out;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				r = -ENOMEM;
				snprintf(err->msg, sizeof(err->msg), "%s: out of memory", path);
				err->bad_input = 0;
				goto out;
			}
			buf = nb;
		}
		errno = 0;
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f)) {
		int e = errno ? errno : EIO;

		r = -e;
		snprintf(err->msg, sizeof(err->msg), "cannot read header list '%s': %s", path,
			 strerror(e));
		/* fopen() opens a directory; only reading it fails. */
		err->bad_input = e == EISDIR;
		goto out;
	}
	r = hs_list_parse(buf, len, strcmp(path, "-") ? path : "<stdin>", opts, out, err);
out:
	free(buf);
	if (f != stdin)
		fclose(f);
	return r;
}
