// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The fuzzers' naive list matcher and liberal field reader: see liberal.h. */
#include <string.h>

#include "liberal.h"

int lib_add(struct lib_list *l, const char *name, size_t len, int action)
{
	struct lib_rule *r;

	if (l->n >= LIB_MAX_RULES || !len)
		return -1;
	r = &l->rules[l->n];
	r->prefix = len > 1 && name[len - 1] == '*';
	r->len = len - r->prefix;
	if (r->len > LIB_MAX_NAME)
		return -1;
	memcpy(r->name, name, r->len);
	r->name[r->len] = 0;
	r->action = action;
	r->off = 0;
	l->n++;
	return 0;
}

static uint8_t fold(const struct lib_list *l, uint8_t c)
{
	if (c >= 'A' && c <= 'Z')
		return c + 32;
	if (c == '_' && l->fold_underscore)
		return '-';
	return c;
}

/* Do the first @n bytes of @a and @b agree, folded? */
static int same(const struct lib_list *l, const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fold(l, a[i]) != fold(l, b[i]))
			return 0;
	return 1;
}

uint32_t lib_match(const struct lib_list *l, const uint8_t *q, size_t n)
{
	uint32_t best = 0;
	size_t best_len = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct lib_rule *r = &l->rules[i];

		if (!r->off && !r->prefix && r->len == n && same(l, q, r->name, n))
			return i + 1;
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct lib_rule *r = &l->rules[i];

		if (!r->off && r->prefix && r->len <= n && r->len >= best_len &&
		    same(l, q, r->name, r->len)) {
			best = i + 1;
			best_len = r->len;
		}
	}
	return best;
}

int lib_blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1f) ||
	       c == 0x85 || c == 0xa0;
}

int lib_possible(const struct lib_list *l, const uint8_t *q, size_t n)
{
	size_t t = n;

	while (t && lib_blank(q[t - 1]))
		t--;
	/* After blanks only a colon keeps the name as it is; more name bytes
	 * make a name no rule spells (names hold no blanks) unless a prefix
	 * rule already covers it. Either way the verdict of the bytes before
	 * the blanks decides. */
	if (t < n || !t)
		return t && lib_match(l, q, t);
	for (size_t i = 0; i < l->n; i++) {
		const struct lib_rule *r = &l->rules[i];

		if (r->off)
			continue;
		if (r->len >= n && same(l, q, r->name, n))
			return 1;
		if (r->prefix && r->len <= n && same(l, q, r->name, r->len))
			return 1;
	}
	return 0;
}

size_t lib_lines(const uint8_t *buf, size_t len, struct lib_line *lines, size_t max)
{
	size_t n = 0, i = 0, start = 0;

	while (i < len && n < max) {
		if (buf[i] != '\r' && buf[i] != '\n') {
			i++;
			continue;
		}
		lines[n].start = start;
		lines[n].end = i;
		if (buf[i] == '\r' && i + 1 < len && buf[i + 1] == '\n')
			i++;
		lines[n].next = ++i;
		n++;
		start = i;
	}
	if (start < len && n < max) {
		lines[n].start = start;
		lines[n].end = len;
		lines[n].next = len;
		n++;
	}
	return n;
}

int lib_field(const uint8_t *buf, const struct lib_line *ln, size_t *ns, size_t *ne)
{
	size_t a = ln->start, c;

	while (a < ln->end && lib_blank(buf[a]))
		a++;
	for (c = a; c < ln->end && buf[c] != ':'; c++)
		;
	/* No colon: nginx reads a name alone, ended by the line end, as a
	 * field with an empty value. */
	if (c >= ln->end && ln->next == ln->end)
		return 0;
	*ns = a;
	while (c > a && lib_blank(buf[c - 1]))
		c--;
	*ne = c;
	return c > a;
}

int lib_is_cont(const uint8_t *buf, const struct lib_line *ln)
{
	return ln->end > ln->start && (buf[ln->start] == ' ' || buf[ln->start] == '\t');
}

int lib_is_framing(const uint8_t *buf, size_t ns, size_t ne)
{
	static const char *const names[] = { "content-length", "transfer-encoding", "upgrade" };

	for (size_t k = 0; k < 3; k++) {
		size_t n = strlen(names[k]), i;

		if (ne - ns != n)
			continue;
		for (i = 0; i < n; i++) {
			uint8_t c = buf[ns + i];

			if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != (uint8_t)names[k][i])
				break;
		}
		if (i == n)
			return 1;
	}
	return 0;
}

int lib_is_length_field(const uint8_t *buf, size_t ns, size_t ne)
{
	return lib_is_framing(buf, ns, ne) && ne - ns != 7; /* not "upgrade" */
}

int lib_py_stops(const uint8_t *buf, const struct lib_line *ln)
{
	size_t i;

	if (lib_is_cont(buf, ln))
		return 0;
	for (i = ln->start; i < ln->end && buf[i] != ':'; i++)
		if (buf[i] < 0x21 || buf[i] > 0x7e)
			return 1;
	return i == ln->end;
}

size_t lib_words(const uint8_t *buf, size_t start, size_t end, struct lib_span *w, size_t max)
{
	size_t n = 0, i = start;

	for (;;) {
		size_t a;

		while (i < end && lib_blank(buf[i]))
			i++;
		if (i == end)
			return n;
		for (a = i; i < end && !lib_blank(buf[i]); i++)
			;
		if (n < max)
			w[n] = (struct lib_span){ a, i };
		n++;
	}
}

int lib_method_bodiless(const uint8_t *m, size_t n)
{
	static const char *const names[] = { "get", "head", "delete", "options", "trace" };

	for (size_t k = 0; k < 5; k++) {
		size_t i, len = strlen(names[k]);

		if (n != len)
			continue;
		for (i = 0; i < n; i++)
			if ((m[i] >= 'A' && m[i] <= 'Z' ? m[i] + 32 : m[i]) != (uint8_t)names[k][i])
				break;
		if (i == n)
			return 1;
	}
	return 0;
}

int lib_h2c_preface(const uint8_t *buf, size_t start, size_t end, size_t *two)
{
	struct lib_span w[3];

	if (lib_words(buf, start, end, w, 3) < 3 || w[0].end - w[0].start != 3 ||
	    memcmp(buf + w[0].start, "PRI", 3) || w[2].end - w[2].start < 6 ||
	    memcmp(buf + w[2].start, "HTTP/2", 6))
		return 0;
	*two = w[2].start + 5;
	return 1;
}

int lib_length_value(const uint8_t *buf, size_t vs, size_t ve, uint64_t *v)
{
	size_t i = vs, d;
	uint64_t x = 0;

	while (i < ve && lib_blank(buf[i]))
		i++;
	for (d = i; i < ve && buf[i] >= '0' && buf[i] <= '9'; i++)
		x = x > (UINT64_MAX >> 4) ? UINT64_MAX >> 1 : x * 10 + (buf[i] - '0');
	if (i == d)
		return 0;
	while (i < ve && lib_blank(buf[i]))
		i++;
	*v = x;
	return i == ve;
}

static char fill_name[11] = "x-hdrstrip";

void lib_set_filler(const char *name)
{
	memcpy(fill_name, name, 10);
}

/* Byte @i of the masked shape whose name part is @k bytes long. */
static uint8_t filler_byte(size_t i, size_t k)
{
	if (i < k)
		return (uint8_t)fill_name[i];
	if (i == k)
		return ':';
	if (i == k + 1)
		return ' ';
	return 'x';
}

void lib_fill(uint8_t *buf, size_t start, size_t end)
{
	size_t a = start;

	while (a < end && (buf[a] == ' ' || buf[a] == '\t'))
		a++;
	for (size_t i = a; i < end; i++)
		buf[i] = filler_byte(i - a, 10);
}

int lib_filler(const uint8_t *buf, size_t start, size_t end)
{
	size_t a = start, i, j, k;

	while (a < end && (buf[a] == ' ' || buf[a] == '\t'))
		a++;
	/* A masked continuation: the filler's first byte repeated. */
	for (i = a; i < end && buf[i] == (uint8_t)fill_name[0]; i++)
		;
	if (i == end)
		return 1;
	/* Blanks an earlier segment carried may be kept before the shape,
	 * which then goes on at their column. */
	for (j = 0; a + j <= end; j++) {
		for (k = 0; k <= 10; k++) {
			for (i = a + j; i < end && buf[i] == filler_byte(i - a, k); i++)
				;
			if (i == end)
				return 1;
		}
		if (a + j == end || !lib_blank(buf[a + j]))
			break;
	}
	return 0;
}
