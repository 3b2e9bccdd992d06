// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libhdrstrip through its public header only: compiling lists (and their
 * errors), lookups, and masking header blocks, checked against a naive
 * reference masker on the corpus's 2,000 requests and on random requests
 * (seed printed; HS_SEED=N repeats a run). Every request is copied into a
 * buffer of its exact length, so the sanitizers catch a read past its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hdrstrip.h"

#ifndef HS_CORPUS_DIR
#define HS_CORPUS_DIR "../shared/corpus"
#endif

static const char *corpus_path(const char *file, char *buf, size_t size)
{
	const char *dir = getenv("CORPUS");

	snprintf(buf, size, "%s/%s", dir && *dir ? dir : HS_CORPUS_DIR, file);
	return buf;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

static hs_matcher *compile_str(const char *text)
{
	struct hs_error err;
	hs_matcher *m = hs_compile_text(text, strlen(text), "test.txt", NULL, &err);

	if (!m)
		fail_msg("compile failed: %s", err.msg);
	return m;
}

static const char basic_list[] = "# a list\n"
				 "X-Internal-Auth\n"
				 "x-edge-*\n"
				 "X-Proxy-Secret drop\n"
				 "x_tenant\n";

/* ---- compiling ---- */

static void test_compile_and_rules(void **state)
{
	struct hs_rule_info r;
	hs_matcher *m = compile_str(basic_list);

	(void)state;
	assert_int_equal(hs_rule_count(m), 4);
	assert_int_equal(hs_rule_get(m, 1, &r), 0);
	assert_int_equal(r.id, 1);
	assert_string_equal(r.name, "X-Internal-Auth");
	assert_int_equal(r.line, 2);
	assert_int_equal(r.action, HS_ACTION_MASK);
	assert_int_equal(r.prefix, 0);
	assert_int_equal(hs_rule_get(m, 2, &r), 0);
	assert_string_equal(r.name, "x-edge-*");
	assert_int_equal(r.prefix, 1);
	assert_int_equal(hs_rule_get(m, 3, &r), 0);
	assert_int_equal(r.action, HS_ACTION_DROP);
	assert_int_equal(hs_rule_get(m, 0, &r), -EINVAL);
	assert_int_equal(hs_rule_get(m, 5, &r), -EINVAL);
	hs_free(m);
	hs_free(NULL);
}

static void test_compile_errors(void **state)
{
	static const struct {
		const char *text, *msg_start, *msg_part;
	} cases[] = {
		{ "x-a\nx b c\n", "lst:2: ", "invalid character" },
		{ "x-a\nX-A\n", "lst:2: ", "duplicate" },
		{ "x-a\n@bogus on\n", "lst:2: ", "unknown directive" },
		{ "x-a maks\n", "lst:1: ", "unknown action" },
		{ "# nothing\n\n", "lst: ", "empty" },
	};
	struct hs_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hs_matcher *m =
			hs_compile_text(cases[i].text, strlen(cases[i].text), "lst", NULL, &err);

		assert_null(m);
		assert_int_equal(err.code, -EINVAL);
		assert_int_equal(err.bad_input, 1);
		if (strncmp(err.msg, cases[i].msg_start, strlen(cases[i].msg_start)) ||
		    !strstr(err.msg, cases[i].msg_part))
			fail_msg("case %zu: message \"%s\", expected \"%s...%s...\"", i, err.msg,
				 cases[i].msg_start, cases[i].msg_part);
		assert_null(strchr(err.msg, '\n'));
	}
	/* No error struct: still NULL, no crash. */
	assert_null(hs_compile_text("a b c", 5, NULL, NULL, NULL));
}

static void test_compile_file(void **state)
{
	char path[] = "/tmp/hdrstrip-test-lib-XXXXXX";
	struct hs_error err;
	hs_matcher *m;
	int fd;

	(void)state;
	m = hs_compile_file("/nonexistent/hdrstrip/list.txt", NULL, &err);
	assert_null(m);
	assert_int_equal(err.code, -ENOENT);
	assert_int_equal(err.bad_input, 1);
	assert_non_null(strstr(err.msg, "/nonexistent/hdrstrip/list.txt"));

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x-ok\nbad name here\n", 19), 19);
	close(fd);
	m = hs_compile_file(path, NULL, &err);
	assert_null(m);
	assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
	assert_int_equal(strncmp(err.msg + strlen(path), ":2: ", 4), 0);

	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x-ok\n", 5), 5);
	close(fd);
	m = hs_compile_file(path, NULL, &err);
	assert_non_null(m);
	assert_int_equal(hs_rule_count(m), 1);
	hs_free(m);
	unlink(path);
}

struct warn_seen {
	int n;
	char last[HS_ERROR_MSG_MAX];
};

static void count_warning(const char *msg, void *ctx)
{
	struct warn_seen *w = ctx;

	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

static void test_compile_warning(void **state)
{
	struct warn_seen w = { 0 };
	struct hs_compile_opts o = { .fold_underscore = -1, .warn = count_warning, .warn_ctx = &w };
	const char *text = "x-good\nx-bad(name)\n";
	hs_matcher *m = hs_compile_text(text, strlen(text), "w.txt", &o, NULL);

	(void)state;
	assert_non_null(m);
	assert_int_equal(w.n, 1);
	assert_int_equal(strncmp(w.last, "w.txt:2: ", 9), 0);
	/* A list without such names warns nothing, and NULL opts is silent. */
	hs_free(m);
	m = hs_compile_text(text, strlen(text), "w.txt", NULL, NULL);
	assert_non_null(m);
	assert_int_equal(w.n, 1);
	hs_free(m);
}

/* ---- lookups ---- */

static unsigned int look(const hs_matcher *m, const char *name)
{
	return hs_lookup(m, name, strlen(name), NULL);
}

static void test_lookup(void **state)
{
	struct hs_rule_info r;
	hs_matcher *m = compile_str(basic_list);
	struct hs_compile_opts nofold = { .fold_underscore = 0 };
	hs_matcher *m2;

	(void)state;
	assert_int_equal(look(m, "x-internal-auth"), 1);
	assert_int_equal(look(m, "X-INTERNAL-AUTH"), 1);
	assert_int_equal(look(m, "x_internal_auth"), 1); /* '_' folds by default */
	assert_int_equal(look(m, "x-internal-aut"), 0);
	assert_int_equal(look(m, "x-internal-auth2"), 0);
	assert_int_equal(look(m, "x-edge-"), 2);
	assert_int_equal(look(m, "X-Edge-Anything-At-All"), 2);
	assert_int_equal(look(m, "x-edge"), 0);
	assert_int_equal(look(m, "x-tenant"), 4);
	assert_int_equal(look(m, ""), 0);
	assert_int_equal(look(m, "host"), 0);
	assert_int_equal(hs_lookup(m, "x-proxy-secret", 14, &r), 3);
	assert_int_equal(r.action, HS_ACTION_DROP);
	assert_string_equal(r.name, "X-Proxy-Secret");
	/* Not NUL-terminated: only @len bytes count. */
	assert_int_equal(hs_lookup(m, "x-tenantXYZ", 8, NULL), 4);
	assert_int_equal(hs_lookup(NULL, "x-tenant", 8, NULL), 0);

	m2 = hs_compile_text(basic_list, strlen(basic_list), "t", &nofold, NULL);
	assert_non_null(m2);
	assert_int_equal(look(m2, "x_internal_auth"), 0);
	assert_int_equal(look(m2, "x_tenant"), 4);
	assert_int_equal(look(m2, "x-tenant"), 0);
	hs_free(m2);
	hs_free(m);
}

/* The lookup is a request's: rules for responses only match nothing, nor
 * hide the request rule under them. */
static void test_lookup_directions(void **state)
{
	hs_matcher *m = compile_str("x-internal-*\nx-internal-id response\nx-resp drop response\n"
				    "x-debug drop response\nx-debug request\nx-both both\n");

	(void)state;
	assert_int_equal(hs_rule_count(m), 6);
	assert_int_equal(look(m, "x-internal-id"), 1);
	assert_int_equal(look(m, "x-internal-other"), 1);
	assert_int_equal(look(m, "x-resp"), 0);
	assert_int_equal(look(m, "x-debug"), 5);
	assert_int_equal(look(m, "x-both"), 6);
	hs_free(m);
}

/* ---- masking ---- */

/* Mask @req in a heap buffer of its exact length; returns the status. */
static int mask_exact(const hs_matcher *m, const char *req, size_t len, char **out,
		      struct hs_mask_result *res)
{
	char *buf = malloc(len ? len : 1);
	int st;

	assert_non_null(buf);
	memcpy(buf, req, len);
	st = hs_mask_headers(m, buf, len, res);
	*out = buf;
	return st;
}

static void test_mask_basic(void **state)
{
	static const char req[] = "GET /x HTTP/1.1\r\n"
				  "Host: example.com\r\n"
				  "X-Internal-Auth: s3cret\r\n"
				  "Accept: */*\r\n"
				  "x_tenant:42\r\n"
				  "\r\n"
				  "X-Internal-Auth: in the body\r\n";
	static const char want[] = "GET /x HTTP/1.1\r\n"
				   "Host: example.com\r\n"
				   "y-hdrstrip: xxxxxxxxxxx\r\n"
				   "Accept: */*\r\n"
				   "y-hdrstr: x\r\n"
				   "\r\n"
				   "X-Internal-Auth: in the body\r\n";
	struct hs_mask_result res;
	hs_matcher *m = compile_str(basic_list);
	size_t len = sizeof(req) - 1;
	char *out;

	(void)state;
	assert_int_equal(mask_exact(m, req, len, &out, &res), HS_MASK_DONE);
	assert_memory_equal(out, want, len);
	assert_int_equal(res.status, HS_MASK_DONE);
	assert_int_equal(res.end, strstr(req, "\r\n\r\n") + 4 - req);
	assert_int_equal(res.requests, 1);
	assert_int_equal(res.headers_seen, 4);
	assert_int_equal(res.headers_matched, 2);
	assert_int_equal(res.headers_masked, 2);
	/* Idempotent: a masked block stays as it is. */
	assert_int_equal(hs_mask_headers(m, out, len, &res), HS_MASK_DONE);
	assert_memory_equal(out, want, len);
	assert_int_equal(res.headers_masked, 0);
	free(out);
	/* res may be NULL. */
	out = malloc(len);
	memcpy(out, req, len);
	assert_int_equal(hs_mask_headers(m, out, len, NULL), HS_MASK_DONE);
	assert_memory_equal(out, want, len);
	assert_int_equal(hs_mask_headers(NULL, out, len, NULL), -EINVAL);
	free(out);
	assert_int_equal(hs_mask_headers(m, NULL, 3, NULL), -EINVAL);
	hs_free(m);
}

static void test_mask_statuses(void **state)
{
	static const char drop[] = "POST / HTTP/1.1\r\nX-Edge-Id: 1\r\nX-Proxy-Secret: k\r\n\r\n";
	static const char nothttp[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
	static const char part[] = "GET / HTTP/1.1\r\nHost: a\r\nX-Internal-Auth: s3c";
	static const char fold[] = "GET / HTTP/1.0\nX-Internal-Auth: a\n  continued\nB: c\n\n";
	static const char foldw[] = "GET / HTTP/1.0\ny-hdrstrip: xxxxxx\n  yyyyyyyyy\nB: c\n\n";
	struct hs_mask_result res;
	hs_matcher *m = compile_str(basic_list);
	char *out;

	(void)state;
	assert_int_equal(mask_exact(m, drop, sizeof(drop) - 1, &out, &res), HS_MASK_DROP);
	assert_int_equal(res.drop_rule, 3);
	assert_int_equal(res.headers_matched, 2);
	free(out);

	assert_int_equal(mask_exact(m, nothttp, sizeof(nothttp) - 1, &out, &res), HS_MASK_NOT_HTTP);
	assert_memory_equal(out, nothttp, sizeof(nothttp) - 1);
	assert_int_equal(res.requests, 0);
	free(out);

	/* A block cut inside a line: the complete lines are scanned, the cut
	 * one is left whole for the next call. */
	assert_int_equal(mask_exact(m, part, sizeof(part) - 1, &out, &res), HS_MASK_INCOMPLETE);
	assert_int_equal(res.headers_masked, 0);
	assert_int_equal(res.end, 0);
	assert_int_equal(res.scanned, 25);
	assert_memory_equal(out, part, sizeof(part) - 1);
	free(out);
	/* ... cut inside the name: not rewritten ahead either. */
	assert_int_equal(mask_exact(m, part, 30, &out, &res), HS_MASK_INCOMPLETE);
	assert_memory_equal(out, part, 30);
	free(out);

	/* Bare LF line ends; an obs-fold continuation shares its field's fate. */
	assert_int_equal(mask_exact(m, fold, sizeof(fold) - 1, &out, &res), HS_MASK_DONE);
	assert_memory_equal(out, foldw, sizeof(foldw) - 1);
	free(out);

	/* Framing servers could read two ways: stop, say so. */
	{
		static const char amb[] =
			"POST / HTTP/1.1\r\nContent-Length: 5\r\n"
			"Transfer-Encoding: chunked\r\nX-Internal-Auth: a\r\n\r\n";

		assert_int_equal(mask_exact(m, amb, sizeof(amb) - 1, &out, &res),
				 HS_MASK_AMBIGUOUS);
		assert_int_equal(res.end, 0);
		free(out);
	}
	/* A request with a body: the block ends before it; the body is not
	 * looked at. */
	{
		static const char body[] = "POST / HTTP/1.1\r\nContent-Length: 23\r\n\r\n"
					   "X-Internal-Auth: body\r\n";

		assert_int_equal(mask_exact(m, body, sizeof(body) - 1, &out, &res), HS_MASK_DONE);
		assert_int_equal(res.end, sizeof(body) - 1 - 23);
		assert_memory_equal(out, body, sizeof(body) - 1);
		free(out);
	}
	/* Empty input: nothing to see yet. */
	assert_int_equal(mask_exact(m, "", 0, &out, &res), HS_MASK_INCOMPLETE);
	free(out);
	hs_free(m);
}

static void test_mask_limit(void **state)
{
	const char *head = "GET / HTTP/1.1\r\n";
	size_t len = HS_MASK_MAX_BYTES + 4096, o;
	struct hs_mask_result res;
	hs_matcher *m = compile_str(basic_list);
	char *buf = malloc(len);

	(void)state;
	/* A block longer than the scanner's window: incomplete, and nothing
	 * past the window is touched. */
	o = strlen(head);
	memcpy(buf, head, o);
	while (o + 32 <= len) {
		memcpy(buf + o, "X-Internal-Auth: 0123456789abc\r\n", 32);
		o += 32;
	}
	memset(buf + o, 'a', len - o);
	assert_int_equal(hs_mask_headers(m, buf, len, &res), HS_MASK_INCOMPLETE);
	assert_true(res.scanned <= HS_MASK_MAX_BYTES);
	{
		/* The first whole record past the window is untouched. */
		size_t first = strlen(head) + 32 * ((HS_MASK_MAX_BYTES - strlen(head) + 31) / 32);

		assert_memory_equal(buf + first, "X-Internal-Auth: 0123456789abc\r\n", 32);
	}
	assert_memory_equal(buf + strlen(head), "y-hdrstrip: xxxx", 16);
	free(buf);
	hs_free(m);
}

/* ---- NULL, zero-length and huge inputs (issue 16) ---- */

/* A list whose one name is @len bytes of 'a' (and a prefix '*'), in a buffer
 * of its exact length. */
static char *long_name_list(size_t len, int prefix, size_t *out_len)
{
	char *t = malloc(len + 2);

	assert_non_null(t);
	memset(t, 'a', len);
	t[len] = prefix ? '*' : '\n';
	*out_len = len + (size_t)(prefix != 0);
	return t;
}

static void test_compile_long_name(void **state)
{
	static const size_t lens[] = { 129, 65536 + 1, 65536 + 128, 70000 };
	struct hs_error err;
	char want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (int prefix = 0; prefix < 2; prefix++) {
			size_t len;
			char *t = long_name_list(lens[i], prefix, &len);

			/* Once a heap overflow for 65,536 + k bytes (k <= 128). */
			assert_null(hs_compile_text(t, len, "lst", NULL, &err));
			assert_int_equal(err.code, -EINVAL);
			assert_int_equal(err.bad_input, 1);
			snprintf(want, sizeof(want), " is %zu bytes long; the limit is 128",
				 lens[i]);
			if (!strstr(err.msg, want))
				fail_msg("message \"%s\" does not say \"%s\"", err.msg, want);
			free(t);
		}
}

static void test_null_zero_huge(void **state)
{
	static const char req[] = "GET / HTTP/1.1\r\nX-Internal-Auth: s\r\n\r\n";
	hs_matcher *m = compile_str(basic_list);
	struct hs_mask_result res;
	struct hs_rule_info info;
	struct hs_error err;
	size_t huge = HS_MASK_MAX_BYTES * (size_t)80; /* 5 MiB */
	char *buf, *big;

	(void)state;
	/* Compiling: NULL text with a length, no text at all, no path. */
	assert_null(hs_compile_text(NULL, 5, "lst", NULL, &err));
	assert_int_equal(err.code, -EINVAL);
	assert_int_equal(err.bad_input, 1);
	assert_null(hs_compile_text(NULL, 0, "lst", NULL, &err));
	assert_int_equal(err.code, -EINVAL); /* an empty list */
	assert_int_equal(err.bad_input, 1);
	assert_null(hs_compile_text("", 0, NULL, NULL, &err));
	assert_int_equal(err.code, -EINVAL);
	assert_null(hs_compile_file(NULL, NULL, &err));
	assert_int_equal(err.code, -EINVAL);
	assert_null(hs_compile_file("", NULL, &err));
	assert_int_equal(err.code, -ENOENT);
	assert_int_equal(err.bad_input, 1);
	/* More than 64 MiB of list: refused before it is read. */
	big = malloc((64u << 20) + 1);
	assert_non_null(big);
	memset(big, '\n', (64u << 20) + 1);
	assert_null(hs_compile_text(big, (64u << 20) + 1, "big", NULL, &err));
	assert_int_equal(err.code, -EFBIG);
	assert_int_equal(err.bad_input, 1);
	assert_string_equal(err.msg, "big: header list is larger than 64 MiB");
	free(big);

	/* Lookups and rules. */
	assert_int_equal(hs_lookup(m, NULL, 0, NULL), 0);
	assert_int_equal(hs_lookup(m, NULL, 7, NULL), 0);
	assert_int_equal(hs_lookup(NULL, NULL, 0, NULL), 0);
	assert_int_equal(hs_rule_get(m, 0, &info), -EINVAL);
	assert_int_equal(hs_rule_get(m, hs_rule_count(m) + 1, &info), -EINVAL);
	assert_int_equal(hs_rule_get(m, 1, NULL), -EINVAL);
	assert_int_equal(hs_rule_get(NULL, 1, &info), -EINVAL);
	assert_int_equal(hs_rule_count(NULL), 0);
	/* A name far longer than any rule: only a prefix rule can match it. */
	buf = malloc(huge);
	assert_non_null(buf);
	memset(buf, 'a', huge);
	assert_int_equal(hs_lookup(m, buf, huge, NULL), 0);
	memcpy(buf, "x-edge-", 7);
	assert_int_equal(hs_lookup(m, buf, huge, NULL), 2);

	/* Masking: NULL is -EINVAL at any length, as documented (once 1,
	 * with UBSan reporting an offset applied to NULL). */
	assert_int_equal(hs_mask_headers(m, NULL, 0, &res), -EINVAL);
	assert_int_equal(hs_mask_headers(m, NULL, 0, NULL), -EINVAL);
	assert_int_equal(hs_mask_headers(m, NULL, 10, &res), -EINVAL);
	assert_int_equal(hs_mask_headers(NULL, buf, 10, &res), -EINVAL);
	assert_int_equal(hs_mask_headers(NULL, NULL, 0, &res), -EINVAL);
	/* Zero bytes of a real buffer: nothing yet. */
	assert_int_equal(hs_mask_headers(m, buf, 0, &res), HS_MASK_INCOMPLETE);
	assert_int_equal(res.scanned, 0);
	/* A huge buffer: a request within the window is masked, nothing past
	 * the window is read. */
	memcpy(buf, req, sizeof(req) - 1);
	assert_int_equal(hs_mask_headers(m, buf, huge, &res), HS_MASK_DONE);
	assert_int_equal(res.end, sizeof(req) - 1);
	assert_int_equal(res.headers_masked, 1);
	assert_memory_equal(buf + 16, "y-hdrstrip: x", 13);
	free(buf);
	hs_free(m);
}

/* ---- the naive reference ---- */

struct ref_list {
	char names[1100][140]; /* folded; prefix rules without the '*' */
	int prefix[1100], drop[1100];
	int n;
	char fill[11]; /* the filler name: its first byte starts no name */
};

static void ref_fold(char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		s[i] = s[i] == '_' ? '-' : (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
}

/* The corpus list's format, the simple way: NAME [ACTION] per line. */
static void ref_load(struct ref_list *rl, const char *text)
{
	const char *p = text;

	rl->n = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) : strlen(p);
		char line[300], *name, *act, *save;

		snprintf(line, sizeof(line), "%.*s", (int)ll, p);
		p += ll + (nl != NULL);
		name = strtok_r(line, " \t\r", &save);
		if (!name || name[0] == '#')
			continue;
		act = strtok_r(NULL, " \t\r", &save);
		rl->prefix[rl->n] = name[strlen(name) - 1] == '*';
		if (rl->prefix[rl->n])
			name[strlen(name) - 1] = 0;
		ref_fold(name, strlen(name));
		snprintf(rl->names[rl->n], sizeof(rl->names[0]), "%s", name);
		rl->drop[rl->n] = act && !strcasecmp(act, "drop");
		rl->n++;
	}
	/* The documented choice: "x-hdrstrip" with the first of these bytes
	 * that no listed name (folded) starts with. */
	snprintf(rl->fill, sizeof(rl->fill), "x-hdrstrip");
	for (const char *c = "xyzqjkvwgfhbpmdcnlutsroiea0123456789!#$%&'*+.^`|~"; *c; c++) {
		int used = 0;

		for (int i = 0; i < rl->n && !used; i++)
			used = rl->names[i][0] == *c;
		if (!used) {
			rl->fill[0] = *c;
			break;
		}
	}
}

/* -1: no rule, else the rule's index. */
static int ref_match(const struct ref_list *rl, const char *name, size_t len)
{
	char f[300];

	if (len >= sizeof(f))
		return -1;
	memcpy(f, name, len);
	ref_fold(f, len);
	for (int i = 0; i < rl->n; i++) {
		size_t nl = strlen(rl->names[i]);

		if (rl->prefix[i] ? (len >= nl && !memcmp(f, rl->names[i], nl))
				  : (len == nl && !memcmp(f, rl->names[i], nl)))
			return i;
	}
	return -1;
}

/*
 * Mask @req (request line, "Name: value" lines with CRLF, empty line) the
 * obvious way into @out. Returns the expected status; *end the block's end.
 */
static int ref_mask(const struct ref_list *rl, const char *req, size_t len, char *out, size_t *end,
		    unsigned int *masked)
{
	size_t pos = 0;
	int first = 1;

	memcpy(out, req, len);
	*masked = 0;
	while (pos < len) {
		const char *eol = memchr(req + pos, '\n', len - pos);
		size_t ll = eol ? (size_t)(eol - (req + pos)) : len - pos, content = ll;
		const char *colon;

		if (!eol)
			return HS_MASK_INCOMPLETE;
		if (content && req[pos + content - 1] == '\r')
			content--;
		if (!content && !first) {
			*end = pos + ll + 1;
			return HS_MASK_DONE;
		}
		colon = first ? NULL : memchr(req + pos, ':', content);
		if (colon) {
			size_t nlen = colon - (req + pos);
			int r = ref_match(rl, req + pos, nlen);

			if (r >= 0 && rl->drop[r])
				return HS_MASK_DROP;
			if (r >= 0) {
				size_t nf = nlen < 10 ? nlen : 10;

				for (size_t c = 0; c < content; c++)
					out[pos + c] = c < nf	     ? rl->fill[c]
						       : c == nf     ? ':'
						       : c == nf + 1 ? ' '
								     : 'x';
				(*masked)++;
			}
		}
		first = 0;
		pos += ll + 1;
	}
	return HS_MASK_INCOMPLETE;
}

/* Does @req carry a field that frames its body? */
static int has_framing(const char *req, size_t len)
{
	static const char *const names[] = { "\ncontent-length:", "\ntransfer-encoding:" };

	for (size_t i = 0; i < 2; i++) {
		size_t nl = strlen(names[i]);

		for (size_t o = 0; o + nl <= len; o++)
			if (!strncasecmp(req + o, names[i], nl))
				return 1;
	}
	return 0;
}

/* Compare the library with the reference on one request; returns its
 * status. A request with a framing field whose value servers could read
 * two ways (the corpus has random Content-Length values) is refused as
 * ambiguous: the reference does not judge framing. */
static int check_request(const hs_matcher *m, const struct ref_list *rl, const char *req,
			 size_t len, const char *what)
{
	struct hs_mask_result res;
	size_t rend = 0;
	unsigned int rmasked;
	char *want = malloc(len + 1), *got;
	int rst = ref_mask(rl, req, len, want, &rend, &rmasked);
	int st = mask_exact(m, req, len, &got, &res);

	if (st == HS_MASK_AMBIGUOUS && has_framing(req, len) && rst != HS_MASK_DROP) {
		free(want);
		free(got);
		return st;
	}
	if (st != rst)
		fail_msg("%s: status %d, reference %d:\n%.*s", what, st, rst, (int)len, req);
	if (st == HS_MASK_DONE) {
		if (res.end != rend || res.headers_masked != rmasked)
			fail_msg("%s: end %zu masked %u, reference %zu %u", what, res.end,
				 res.headers_masked, rend, rmasked);
		if (memcmp(got, want, len))
			fail_msg("%s: masked bytes differ:\n%.*s\nreference:\n%.*s", what, (int)len,
				 got, (int)len, want);
	}
	free(want);
	free(got);
	return st;
}

static struct ref_list ref;

static hs_matcher *corpus_matcher(void)
{
	char path[512];
	size_t len;
	char *text = read_file(corpus_path("internal-headers.txt", path, sizeof(path)), &len);
	struct hs_error err;
	hs_matcher *m;

	if (!text)
		fail_msg("cannot read %s", path);
	ref_load(&ref, text);
	m = hs_compile_file(path, NULL, &err);
	if (!m)
		fail_msg("%s", err.msg);
	assert_int_equal(hs_rule_count(m), ref.n);
	free(text);
	return m;
}

static void test_corpus_requests(void **state)
{
	char path[512], what[64];
	size_t len, pos = 0, done = 0, masked = 0, dropped = 0, ambiguous = 0;
	hs_matcher *m = corpus_matcher();
	char *stream = read_file(corpus_path("requests.http", path, sizeof(path)), &len);

	(void)state;
	if (!stream)
		fail_msg("cannot read %s", path);
	/* The stream is pipelined requests without bodies: each block's end is
	 * the next request's start. */
	while (pos < len) {
		const char *next = strstr(stream + pos, "\r\n\r\n");
		size_t rlen = next ? (size_t)(next + 4 - (stream + pos)) : len - pos;
		struct hs_mask_result res;
		char *copy;

		snprintf(what, sizeof(what), "request %zu", done + 1);
		ambiguous += check_request(m, &ref, stream + pos, rlen, what) == HS_MASK_AMBIGUOUS;
		/* The whole rest of the stream as the buffer: the scan must stop
		 * at this block's end. */
		copy = malloc(len - pos);
		memcpy(copy, stream + pos, len - pos);
		if (hs_mask_headers(m, copy, len - pos, &res) == HS_MASK_DONE)
			assert_int_equal(res.end, rlen);
		assert_memory_equal(copy + rlen, stream + pos + rlen, len - pos - rlen);
		masked += res.headers_masked;
		dropped += res.status == HS_MASK_DROP;
		free(copy);
		pos += rlen;
		done++;
	}
	print_message(
		"%zu corpus requests: %zu lines masked, %zu dropped, %zu with ambiguous framing\n",
		done, masked, dropped, ambiguous);
	assert_int_equal(done, 2000);
	assert_true(masked > 100);
	free(stream);
	hs_free(m);
}

/* ---- random requests ---- */

static unsigned long long rng;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng % n);
}

static void test_random_requests(void **state)
{
	char path[512], *pool, *names[600], *p, *req;
	const char *seed_env = getenv("HS_SEED");
	unsigned long long seed =
		seed_env ? strtoull(seed_env, NULL, 0) : (unsigned long long)time(NULL);
	size_t plen, npool = 0;
	hs_matcher *m = corpus_matcher();

	(void)state;
	print_message("random requests: seed %llu (HS_SEED=%llu repeats this run)\n", seed, seed);
	rng = seed * 2654435761ULL + 1;
	pool = read_file(corpus_path("miss-pool.txt", path, sizeof(path)), &plen);
	if (!pool)
		fail_msg("cannot read %s", path);
	/* Framing fields with random values make requests the reference
	 * cannot judge (test_mask_statuses has those). */
	for (p = strtok(pool, "\n"); p && npool < 400; p = strtok(NULL, "\n"))
		if (strcasecmp(p, "content-length") && strcasecmp(p, "transfer-encoding"))
			names[npool++] = p;
	if (!npool)
		fail_msg("no names in %s", path);
	req = malloc(16384);
	for (int iter = 0; iter < 3000; iter++) {
		size_t o = (size_t)snprintf(req, 16384, "%s /%u HTTP/1.1\r\n",
					    rnd(2) ? "GET" : "POST", rnd(100000));
		unsigned int fields = rnd(25);
		char what[64];

		for (unsigned int f = 0; f < fields; f++) {
			char name[200];
			size_t nl;

			if (rnd(3) == 0)
				snprintf(name, sizeof(name), "%s", ref.names[rnd(ref.n)]);
			else
				snprintf(name, sizeof(name), "%s", names[rnd(npool)]);
			nl = strlen(name);
			for (size_t i = 0; i < nl; i++) {
				if (name[i] >= 'a' && name[i] <= 'z' && rnd(2))
					name[i] -= 32;
				else if (name[i] == '-' && rnd(4) == 0)
					name[i] = '_';
			}
			o += (size_t)snprintf(req + o, 16384 - o, "%s:%s", name, rnd(2) ? " " : "");
			for (unsigned int v = rnd(40); v > 0; v--)
				req[o++] = "abcdefghijklmnopqrstuvwxyz0123456789-=;,/ "[rnd(43)];
			req[o++] = '\r';
			req[o++] = '\n';
		}
		req[o++] = '\r';
		req[o++] = '\n';
		snprintf(what, sizeof(what), "random request %d (seed %llu)", iter, seed);
		check_request(m, &ref, req, o, what);
		/* A request cut short of its end is incomplete (or dropped once a
		 * drop rule's line is whole), and calling again on the whole
		 * request, in the same buffer, gives what one call gives. */
		if (iter % 20 == 0)
			for (size_t cut = 0; cut < o - 1; cut += 1 + rnd(9)) {
				struct hs_mask_result res;
				char *got = malloc(o), *want = malloc(o);
				size_t rend;
				unsigned int rmasked;
				int rst = ref_mask(&ref, req, o, want, &rend, &rmasked);
				int st;

				memcpy(got, req, o);
				st = hs_mask_headers(m, got, cut, &res);
				if (st != HS_MASK_INCOMPLETE && st != HS_MASK_DROP)
					fail_msg("%s cut at %zu: status %d", what, cut, st);
				if (st == HS_MASK_INCOMPLETE) {
					st = hs_mask_headers(m, got, o, &res);
					if (st != rst ||
					    (st == HS_MASK_DONE && memcmp(got, want, o)))
						fail_msg(
							"%s: after a cut at %zu, status %d (reference %d):\n%.*s",
							what, cut, st, rst, (int)o, got);
				}
				free(got);
				free(want);
			}
	}
	free(req);
	free(pool);
	hs_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compile_and_rules),
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_compile_file),
		cmocka_unit_test(test_compile_warning),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_lookup_directions),
		cmocka_unit_test(test_mask_basic),
		cmocka_unit_test(test_mask_statuses),
		cmocka_unit_test(test_mask_limit),
		cmocka_unit_test(test_compile_long_name),
		cmocka_unit_test(test_null_zero_huge),
		cmocka_unit_test(test_corpus_requests),
		cmocka_unit_test(test_random_requests),
	};

	return cmocka_run_group_tests_name("libhdrstrip", tests, NULL, NULL);
}
