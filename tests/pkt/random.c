// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Random requests against the reference: the corpus is well-formed CRLF
 * text; these mix every line end, junk byte, case, '_', obs-fold, empty
 * line, pipelined request and a cut anywhere, with the fixture list (drop
 * rule included), and framing: Content-Length and chunked bodies holding
 * text that looks like fields, bad lengths and chunk sizes, Upgrade and
 * CONNECT. The seed is printed; HS_SEED repeats a run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edges.h"

static __u64 rng_state;

/* splitmix64: small, and the same sequence everywhere for one seed. */
static __u64 rnd(void)
{
	__u64 z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int pick(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

struct buf {
	char *p;
	size_t n, cap;
};

static void add(struct buf *b, const char *s, size_t n)
{
	if (b->n + n > b->cap)
		n = b->cap - b->n;
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void adds(struct buf *b, const char *s)
{
	add(b, s, strlen(s));
}

static void addc(struct buf *b, char c)
{
	add(b, &c, 1);
}

static const char *const eols[] = { "\r\n", "\r\n", "\r\n", "\n", "\r" };
static const char blanks[] = {
	' ', '\t', 0x0b, 0x0c, 0x1c, 0x1d, 0x1e, 0x1f, (char)0x85, (char)0xa0
};

static void eol(struct buf *b)
{
	adds(b, eols[pick(5)]);
}

static void some_blanks(struct buf *b, unsigned int max)
{
	unsigned int i, n = pick(max + 1);

	for (i = 0; i < n; i++)
		addc(b, blanks[pick(sizeof(blanks))]);
}

/* A name from the list, a near miss, or a benign one, in random case,
 * '-' sometimes written '_'. */
static void name(struct buf *b)
{
	static const char *const names[] = {
		"x-internal-auth",
		"x-internal-trace",
		"x-secret",
		"x-edge-foo",
		"x-edge-id",
		"cdn-trace-id",
		"x-a",
		"x-proxy-hop-count",
		"x-edge-",
		"x-edge",
		"x-internal",
		"x-internal-auth2",
		"host",
		"accept",
		"user-agent",
		"x-ab",
		"cdn-trace",
		"content-length",
		"x-edgeid",
		"x-internal-tracer",
	};
	const char *n = names[pick(sizeof(names) / sizeof(names[0]))];

	for (; *n; n++) {
		char c = *n;

		if (c >= 'a' && c <= 'z' && pick(3) == 0)
			c -= 32;
		if (c == '-' && pick(4) == 0)
			c = '_';
		addc(b, c);
	}
}

static void value(struct buf *b)
{
	unsigned int i, n = pick(20);

	for (i = 0; i < n; i++) {
		unsigned int r = pick(20);

		addc(b, r == 0	 ? blanks[pick(sizeof(blanks))]
			: r == 1 ? ':'
				 : (char)('a' + pick(26)));
	}
}

/* Body bytes that look like field lines. */
static void body_text(struct buf *b, unsigned int n)
{
	static const char *const bits[] = { "X-Internal-Auth: a\r\n",
					    "x-secret: 1\n",
					    "\r\n",
					    "GET / HTTP/1.1\r\n",
					    "X-A: 1",
					    " z",
					    "\r" };
	size_t start = b->n;

	while (b->n - start < n && b->n < b->cap)
		adds(b, bits[pick(sizeof(bits) / sizeof(bits[0]))]);
	if (b->n > start + n)
		b->n = start + n;
}

/* A framing field, mostly well formed. */
static void framing(struct buf *b, unsigned int *cl, int *chunked)
{
	static const char *const bad_cl[] = { "5x", "+5",   "-1",   "abc",
					      "",   " 5 6", "0x10", "\xef\xbc\x95" };
	char num[24];
	unsigned int r = pick(10);

	if (r < 4) {
		*cl = pick(40);
		snprintf(num, sizeof(num), "%u", *cl);
		adds(b, pick(2) ? "Content-Length: " : "content-LENGTH:\t");
		adds(b, num);
	} else if (r < 7) {
		*chunked = 1;
		adds(b,
		     pick(2) ? "Transfer-Encoding: chunked" : "transfer-encoding: gzip, Chunked ");
	} else if (r == 7) {
		adds(b, "Content-Length: ");
		adds(b, bad_cl[pick(sizeof(bad_cl) / sizeof(bad_cl[0]))]);
	} else if (r == 8) {
		adds(b, pick(2) ? "Transfer-Encoding: gzip" : "Content_Length: 3");
	} else {
		adds(b, pick(2) ? "Upgrade: websocket" : "Content-Length : 3");
	}
	eol(b);
}

static void chunks(struct buf *b)
{
	unsigned int i, n = pick(3);
	char size[16];

	for (i = 0; i < n; i++) {
		unsigned int len = 1 + pick(30);

		snprintf(size, sizeof(size), pick(2) ? "%x" : "%X", len);
		adds(b, pick(12) ? size : "g");
		if (pick(4) == 0)
			adds(b, ";ext=1");
		adds(b, pick(8) ? "\r\n" : "\n");
		body_text(b, len);
		adds(b, pick(10) ? "\r\n" : "\n");
	}
	adds(b, "0\r\n");
	if (pick(3) == 0) {
		adds(b, pick(2) ? "X-Internal-Trace: t\r\n" : "Trailer-Ok: 1\r\n");
	}
	adds(b, "\r\n");
}

static void request(struct buf *b)
{
	static const char *const methods[] = {
		"GET", "POST", "M-SEARCH", "get", "G\"T", "CONNECT"
	};
	unsigned int i, n, cl = 0, at;
	int chunked = 0;

	if (pick(6) == 0)
		eol(b);
	adds(b, methods[pick(pick(10) ? 5 : 6)]);
	addc(b, ' ');
	some_blanks(b, 1);
	adds(b, pick(8) ? "/p" : "/p q");
	if (pick(10)) {
		addc(b, ' ');
		adds(b, pick(12) ? "HTTP/1.1" : "HTTX/1.1");
		some_blanks(b, 1);
	}
	eol(b);
	n = pick(10);
	at = pick(3) == 0 ? pick(n + 1) : n + 1;
	for (i = 0; i < n; i++) {
		unsigned int shape = pick(16);

		if (i == at)
			framing(b, &cl, &chunked);

		if (shape == 0) { /* obs-fold continuation */
			addc(b, pick(2) ? ' ' : '\t');
			if (pick(2)) {
				name(b);
				adds(b, ": ");
			}
			value(b);
		} else if (shape == 1) { /* an empty line that may end the block */
		} else if (shape == 2) { /* junk without a colon */
			value(b);
		} else {
			if (pick(4) == 0)
				some_blanks(b, 2);
			name(b);
			if (pick(4) == 0)
				some_blanks(b, 2);
			addc(b, ':');
			if (pick(3))
				addc(b, ' ');
			value(b);
		}
		eol(b);
	}
	if (at == n)
		framing(b, &cl, &chunked);
	eol(b);
	if (chunked)
		chunks(b);
	else if (cl)
		body_text(b, cl);
}

int pt_random(struct th *h, __u64 seed, unsigned int count, int conflict_pass,
	      unsigned int *modified)
{
	static char in[3000], out[3000];
	static __u8 touched[3000];
	const struct ref_opts ro = { .conflict_pass = conflict_pass };
	static const __u16 port80 = 80;
	unsigned int i, bad = 0;

	if (th_config(h, 0, conflict_pass ? HS_POLICY_PASS : HS_POLICY_DROP, &port80, 1))
		return 1;
	rng_state = seed;
	*modified = 0;
	for (i = 0; i < count && bad < 10; i++) {
		struct buf b = { .p = in, .cap = sizeof(in) };
		struct ref_result r;
		struct pt_case c;
		char what[96];
		unsigned int k;

		request(&b);
		while (pick(4) == 0)
			request(&b);
		if (pick(3) == 0) /* a segment cut anywhere */
			b.n = pick((unsigned int)b.n + 1);
		memcpy(out, in, b.n);
		ref_strip_ex(pt.fix_ref, (__u8 *)out, b.n, &ro, touched, &r);

		memset(&c, 0, sizeof(c));
		snprintf(what, sizeof(what), "random request %u of seed %llu", i,
			 (unsigned long long)seed);
		c.what = what;
		c.in = in;
		c.in_len = b.n;
		c.out = out;
		c.out_len = b.n;
		c.no_ref = 1;
		pt_expect_from_ref(&c, &r, touched, b.n);
		*modified += c.delta.packets_modified != 0;
		if (pt_check(h, &c, PT_ALL_HOOKS)) {
			fprintf(stderr, "  payload of %s: \"", what);
			for (k = 0; k < b.n; k++) {
				unsigned char ch = (unsigned char)in[k];

				if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\')
					fputc(ch, stderr);
				else
					fprintf(stderr, "\\x%02x", ch);
			}
			fprintf(stderr, "\"\n");
			bad++;
		}
	}
	if (th_config(h, 0, HS_POLICY_DROP, &port80, 1))
		bad++;
	return (int)bad;
}
