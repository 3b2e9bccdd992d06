// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libhdrstrip example: read one HTTP/1.x request on standard input, write it
 * to standard output with its internal header lines masked, and say on
 * standard error what was found.
 *
 *   cc example.c $(pkg-config --cflags --libs hdrstrip) -o hdrstrip-mask
 *   printf 'GET / HTTP/1.1\r\nX-Internal-Auth: s3cret\r\n\r\n' |
 *       ./hdrstrip-mask /etc/hdrstrip/internal-headers.txt
 *
 * Exit status: 0 the request was masked (or had nothing to mask), 1 a drop
 * rule matched or the input is not a complete request, 2 bad usage or a bad
 * list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdrstrip.h>

static void on_warning(const char *msg, void *ctx)
{
	fprintf(stderr, "%s: warning: %s\n", (const char *)ctx, msg);
}

static const char *status_name(int st)
{
	switch (st) {
	case HS_MASK_DONE:
		return "complete";
	case HS_MASK_INCOMPLETE:
		return "incomplete";
	case HS_MASK_DROP:
		return "dropped";
	case HS_MASK_NOT_HTTP:
		return "not an HTTP/1.x request";
	case HS_MASK_AMBIGUOUS:
		return "ambiguous framing (refuse it)";
	default:
		return "error";
	}
}

int main(int argc, char **argv)
{
	struct hs_compile_opts opts = { .fold_underscore = -1,
					.warn = on_warning,
					.warn_ctx = argv[0] };
	struct hs_mask_result res;
	struct hs_error err;
	struct hs_rule_info rule;
	hs_matcher *m;
	char *buf;
	size_t len = 0, n;
	int st;

	if (argc != 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc == 2 ? stdout : stderr, "Usage: %s HEADER-LIST < request\n", argv[0]);
		return argc == 2 ? 0 : 2;
	}
	m = hs_compile_file(argv[1], &opts, &err);
	if (!m) {
		fprintf(stderr, "%s: %s\n", argv[0], err.msg);
		return err.bad_input ? 2 : 1;
	}
	/* The scanner looks at most at the first HS_MASK_MAX_BYTES bytes;
	 * anything after them is copied through. */
	buf = malloc(HS_MASK_MAX_BYTES);
	if (!buf) {
		hs_free(m);
		return 1;
	}
	while (len < HS_MASK_MAX_BYTES &&
	       (n = fread(buf + len, 1, HS_MASK_MAX_BYTES - len, stdin)) > 0)
		len += n;

	st = hs_mask_headers(m, buf, len, &res);
	if (st == HS_MASK_DROP) {
		/* Nothing of a refused request goes out. */
		hs_rule_get(m, res.drop_rule, &rule);
		fprintf(stderr, "%s: dropped: the request carries '%s' (rule %u, line %u)\n",
			argv[0], rule.name, rule.id, rule.line);
	} else if (st == HS_MASK_AMBIGUOUS) {
		/* Servers could read where its body ends two ways: refuse it. */
		fprintf(stderr, "%s: refused: %s\n", argv[0], status_name(st));
	} else {
		fwrite(buf, 1, len, stdout);
		while ((n = fread(buf, 1, HS_MASK_MAX_BYTES, stdin)) > 0)
			fwrite(buf, 1, n, stdout);
		fprintf(stderr, "%s: %s: %u header lines, %u internal, %u masked\n", argv[0],
			status_name(st), res.headers_seen, res.headers_matched, res.headers_masked);
	}
	free(buf);
	hs_free(m);
	return st == HS_MASK_DONE ? 0 : 1;
}
