// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The header-list parser: what it accepts, how it folds, and the exact
 * message of every error (the CLI prints them as they are).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

/* ---- helpers ---- */

static void parse_ok(const char *text, int fold, struct hs_list *l)
{
	struct hs_list_opts o;
	struct hs_err err;
	int r;

	hs_list_opts_default(&o);
	o.fold_underscore = fold;
	r = hs_list_parse(text, strlen(text), TEST_LIST_PATH, &o, l, &err);
	if (r)
		fail_msg("hs_list_parse: %d: %s", r, err.msg);
	assert_string_equal(err.msg, "");
}

/* Parse @len bytes; expect bad input with exactly @msg, and @out untouched. */
static void expect_error_len(const char *text, size_t len, int fold, const char *msg)
{
	struct hs_list_opts o;
	struct hs_err err;
	struct hs_list l = { .names = (struct hs_name *)&l, .n = 77, .fold_underscore = 5 };
	int r;

	hs_list_opts_default(&o);
	o.fold_underscore = fold;
	r = hs_list_parse(text, len, TEST_LIST_PATH, &o, &l, &err);
	assert_int_equal(r, -EINVAL);
	assert_int_equal(err.bad_input, 1);
	assert_string_equal(err.msg, msg);
	assert_ptr_equal(l.names, &l);
	assert_int_equal(l.n, 77);
	assert_int_equal(l.fold_underscore, 5);
}

static void expect_error(const char *text, const char *msg)
{
	expect_error_len(text, strlen(text), -1, msg);
}

static void expect_name(const struct hs_list *l, size_t i, const char *name, const char *orig,
			int prefix, int action, unsigned int line)
{
	const struct hs_name *nm;

	assert_true(i < l->n);
	nm = &l->names[i];
	assert_string_equal(nm->name, name);
	assert_string_equal(nm->orig, orig);
	assert_int_equal(nm->len, strlen(name));
	assert_int_equal(nm->prefix, prefix);
	assert_int_equal(nm->action, action);
	assert_int_equal(nm->line, line);
}

/* expect_name(), and the directions @dirs (enum hs_dir_set). */
static void expect_rule(const struct hs_list *l, size_t i, const char *name, const char *orig,
			int prefix, int action, int dirs, unsigned int line)
{
	expect_name(l, i, name, orig, prefix, action, line);
	assert_int_equal(l->names[i].directions, dirs);
}

/* @n names "x-0", "x-1", ... after @head, one per line. */
static char *numbered_names(const char *head, size_t n)
{
	size_t cap = strlen(head) + n * 16 + 1, o;
	char *s = malloc(cap);

	assert_non_null(s);
	o = snprintf(s, cap, "%s", head);
	for (size_t i = 0; i < n; i++)
		o += snprintf(s + o, cap - o, "x-%zu\n", i);
	return s;
}

/* A name of @len bytes: "x-" then a repeating pattern, so that cutting it
 * anywhere gives a different name. */
static void long_name(char *buf, size_t len)
{
	static const char pat[] = "abcdefghijklmnopqrstuvwxyz0123456789-";

	for (size_t i = 0; i < len; i++)
		buf[i] = i < 2 ? "x-"[i] : pat[i % (sizeof(pat) - 1)];
	buf[len] = 0;
}

static char warnings[8][HS_ERR_MSG];
static int n_warnings;

static void collect_warning(const char *msg)
{
	if (n_warnings < 8)
		snprintf(warnings[n_warnings], sizeof(warnings[0]), "%s", msg);
	n_warnings++;
}

/* ---- what is accepted ---- */

static void test_comments_blanks_actions(void **state)
{
	const char *text = "# a comment line\n"
			   "\n"
			   "   \t\n"
			   "X-Internal-Auth\n"
			   "  x-trace-id   drop  # trailing comment\n"
			   "x-hash#tag\n"
			   "x-crlf\r\n"
			   "x-case DROP\n"
			   "x-mask\tMask\n"
			   "\t# indented comment\n"
			   "x-last";
	struct hs_list l;

	(void)state;
	parse_ok(text, -1, &l);
	assert_int_equal(l.n, 7);
	assert_int_equal(l.fold_underscore, 1);
	expect_name(&l, 0, "x-internal-auth", "X-Internal-Auth", 0, HS_ACT_MASK, 4);
	expect_name(&l, 1, "x-trace-id", "x-trace-id", 0, HS_ACT_DROP, 5);
	/* '#' inside a name is a token character, not a comment. */
	expect_name(&l, 2, "x-hash#tag", "x-hash#tag", 0, HS_ACT_MASK, 6);
	expect_name(&l, 3, "x-crlf", "x-crlf", 0, HS_ACT_MASK, 7);
	expect_name(&l, 4, "x-case", "x-case", 0, HS_ACT_DROP, 8);
	expect_name(&l, 5, "x-mask", "x-mask", 0, HS_ACT_MASK, 9);
	/* The last line has no newline: still a name. */
	expect_name(&l, 6, "x-last", "x-last", 0, HS_ACT_MASK, 11);
	hs_list_free(&l);
}

static void test_prefix_rules_parse(void **state)
{
	struct hs_list l;

	(void)state;
	parse_ok("X-Internal-*\nx-a\nx-a* drop\n**\nx*y\n", -1, &l);
	assert_int_equal(l.n, 5);
	expect_name(&l, 0, "x-internal-", "X-Internal-*", 1, HS_ACT_MASK, 1);
	/* An exact name and a prefix rule on the same bytes are two rules. */
	expect_name(&l, 1, "x-a", "x-a", 0, HS_ACT_MASK, 2);
	expect_name(&l, 2, "x-a", "x-a*", 1, HS_ACT_DROP, 3);
	/* Only the last '*' makes a prefix rule; others are name bytes. */
	expect_name(&l, 3, "*", "**", 1, HS_ACT_MASK, 4);
	expect_name(&l, 4, "x*y", "x*y", 0, HS_ACT_MASK, 5);
	hs_list_free(&l);
}

/* NAME [ACTION] [DIRECTION]: every form, words in any case. */
static void test_directions_parse(void **state)
{
	const char *text = "x-plain\n"
			   "x-resp response\n"
			   "x-both drop both\n"
			   "x-req  observe\trequest  # comment\n"
			   "x-case MASK RESPONSE\n"
			   "x-mixed Drop Both\n"
			   "x-pfx-* Request\n"
			   "x-only-dir BOTH\n";
	struct hs_list l;

	(void)state;
	parse_ok(text, -1, &l);
	assert_int_equal(l.n, 8);
	expect_rule(&l, 0, "x-plain", "x-plain", 0, HS_ACT_MASK, HS_DIRSET_REQUEST, 1);
	/* A direction without an action: the action is mask. */
	expect_rule(&l, 1, "x-resp", "x-resp", 0, HS_ACT_MASK, HS_DIRSET_RESPONSE, 2);
	expect_rule(&l, 2, "x-both", "x-both", 0, HS_ACT_DROP, HS_DIRSET_BOTH, 3);
	expect_rule(&l, 3, "x-req", "x-req", 0, HS_ACT_OBSERVE, HS_DIRSET_REQUEST, 4);
	expect_rule(&l, 4, "x-case", "x-case", 0, HS_ACT_MASK, HS_DIRSET_RESPONSE, 5);
	expect_rule(&l, 5, "x-mixed", "x-mixed", 0, HS_ACT_DROP, HS_DIRSET_BOTH, 6);
	expect_rule(&l, 6, "x-pfx-", "x-pfx-*", 1, HS_ACT_MASK, HS_DIRSET_REQUEST, 7);
	expect_rule(&l, 7, "x-only-dir", "x-only-dir", 0, HS_ACT_MASK, HS_DIRSET_BOTH, 8);
	hs_list_free(&l);
}

/* A name may come twice, of one kind, for directions that do not overlap. */
static void test_directions_disjoint_duplicates(void **state)
{
	struct hs_list l;

	(void)state;
	parse_ok("x-debug mask request\nX_Debug drop response\nx-a* response\nx-a*\nx-a both\n", -1,
		 &l);
	assert_int_equal(l.n, 5);
	expect_rule(&l, 0, "x-debug", "x-debug", 0, HS_ACT_MASK, HS_DIRSET_REQUEST, 1);
	expect_rule(&l, 1, "x-debug", "X_Debug", 0, HS_ACT_DROP, HS_DIRSET_RESPONSE, 2);
	expect_rule(&l, 2, "x-a", "x-a*", 1, HS_ACT_MASK, HS_DIRSET_RESPONSE, 3);
	expect_rule(&l, 3, "x-a", "x-a*", 1, HS_ACT_MASK, HS_DIRSET_REQUEST, 4);
	/* An exact name beside prefix rules of the same bytes: another kind. */
	expect_rule(&l, 4, "x-a", "x-a", 0, HS_ACT_MASK, HS_DIRSET_BOTH, 5);
	hs_list_free(&l);
}

static void test_fold_underscore_directive_and_option(void **state)
{
	struct hs_list l;

	(void)state;
	/* Default: '_' folds to '-'. */
	parse_ok("X_Forwarded_For\n", -1, &l);
	assert_int_equal(l.fold_underscore, 1);
	expect_name(&l, 0, "x-forwarded-for", "X_Forwarded_For", 0, HS_ACT_MASK, 1);
	hs_list_free(&l);

	parse_ok("@fold-underscore off\nX_Forwarded_For\nx-forwarded-for\n", -1, &l);
	assert_int_equal(l.fold_underscore, 0);
	assert_int_equal(l.n, 2);
	expect_name(&l, 0, "x_forwarded_for", "X_Forwarded_For", 0, HS_ACT_MASK, 2);
	expect_name(&l, 1, "x-forwarded-for", "x-forwarded-for", 0, HS_ACT_MASK, 3);
	hs_list_free(&l);

	parse_ok("  @fold-underscore on   # explicit\nX_A\n", -1, &l);
	assert_int_equal(l.fold_underscore, 1);
	expect_name(&l, 0, "x-a", "X_A", 0, HS_ACT_MASK, 2);
	hs_list_free(&l);

	/* The directive is about the whole list, wherever it stands. */
	parse_ok("X_A\n@fold-underscore off\n", -1, &l);
	assert_int_equal(l.fold_underscore, 0);
	expect_name(&l, 0, "x_a", "X_A", 0, HS_ACT_MASK, 1);
	hs_list_free(&l);

	/* The option overrides the directive, both ways. */
	parse_ok("@fold-underscore on\nX_A\n", 0, &l);
	assert_int_equal(l.fold_underscore, 0);
	expect_name(&l, 0, "x_a", "X_A", 0, HS_ACT_MASK, 2);
	hs_list_free(&l);
	parse_ok("@fold-underscore off\nX_A\n", 1, &l);
	assert_int_equal(l.fold_underscore, 1);
	expect_name(&l, 0, "x-a", "X_A", 0, HS_ACT_MASK, 2);
	hs_list_free(&l);
	parse_ok("X_A\n", 0, &l);
	assert_int_equal(l.fold_underscore, 0);
	hs_list_free(&l);

	/* Names differing only in '_' / '-' are two names without folding. */
	parse_ok("x_a\nx-a\n", 0, &l);
	assert_int_equal(l.n, 2);
	hs_list_free(&l);
}

static void test_non_token_names_warn(void **state)
{
	struct hs_list_opts o;
	struct hs_err err;
	struct hs_list l;

	(void)state;
	hs_list_opts_default(&o);
	assert_int_equal(o.fold_underscore, -1);
	assert_null(o.warn);
	o.warn = collect_warning;
	n_warnings = 0;
	const char *text = "x-token\nReferer[sic]\nx-ok drop\nx\"q\" drop\n";

	assert_int_equal(hs_list_parse(text, strlen(text), TEST_LIST_PATH, &o, &l, &err), 0);
	assert_int_equal(l.n, 4);
	assert_int_equal(n_warnings, 2);
	assert_string_equal(
		warnings[0],
		"test.list:2: header name \"Referer[sic]\" is not an RFC 9110 token ('[' is not a token character): strict servers reject such a header, lenient ones accept it; it is matched as written");
	assert_string_equal(
		warnings[1],
		"test.list:4: header name \"x\\\"q\\\"\" is not an RFC 9110 token ('\"' is not a token character): strict servers reject such a header, lenient ones accept it; it is matched as written");
	assert_int_equal(l.names[0].non_token, 0);
	assert_int_equal(l.names[1].non_token, 1);
	assert_int_equal(l.names[2].non_token, 0);
	assert_int_equal(l.names[3].non_token, 1);
	expect_name(&l, 1, "referer[sic]", "Referer[sic]", 0, HS_ACT_MASK, 2);
	expect_name(&l, 3, "x\"q\"", "x\"q\"", 0, HS_ACT_DROP, 4);
	hs_list_free(&l);

	/* Without a callback the same list parses silently. */
	parse_ok(text, -1, &l);
	assert_int_equal(l.n, 4);
	hs_list_free(&l);

	/* The name whole, up to 40 bytes; never what follows an '=' (a
	 * KEY=VALUE line of a file given as a list by mistake). */
	n_warnings = 0;
	text = "x-{abcdefghijklmnopqrstuvwxyz0123456789}-tail\nAPI_KEY=[s3cret]\n";
	assert_int_equal(hs_list_parse(text, strlen(text), TEST_LIST_PATH, &o, &l, &err), 0);
	assert_int_equal(n_warnings, 2);
	assert_string_equal(
		warnings[0],
		"test.list:1: header name \"x-{abcdefghijklmnopqrstuvwxyz0123456789}...\" is not an RFC 9110 token ('{' is not a token character): strict servers reject such a header, lenient ones accept it; it is matched as written");
	assert_string_equal(
		warnings[1],
		"test.list:2: header name \"API_KEY...\" is not an RFC 9110 token ('=' is not a token character): strict servers reject such a header, lenient ones accept it; it is matched as written");
	assert_null(strstr(warnings[1], "s3cret"));
	hs_list_free(&l);
}

/* A '*' inside a name is a byte of it (a token character), not a
 * wildcard: the list says so, and the rule matches that byte only. */
static void test_inner_star_warns(void **state)
{
	struct hs_list_opts o;
	struct hs_err err;
	struct hs_list l;
	const char *text = "x-*-auth\nx-a*\nx-**\nx-ok\n";

	(void)state;
	hs_list_opts_default(&o);
	o.warn = collect_warning;
	n_warnings = 0;
	assert_int_equal(hs_list_parse(text, strlen(text), TEST_LIST_PATH, &o, &l, &err), 0);
	assert_int_equal(l.n, 4);
	assert_int_equal(n_warnings, 2);
	assert_string_equal(
		warnings[0],
		"test.list:1: header name \"x-*-auth\" has a '*' before its end: it is matched as that byte (only a '*' at the end makes a prefix rule; there are no wildcards inside a name)");
	assert_string_equal(
		warnings[1],
		"test.list:3: header name \"x-**\" has a '*' before its end: it is matched as that byte (only a '*' at the end makes a prefix rule; there are no wildcards inside a name)");
	expect_name(&l, 0, "x-*-auth", "x-*-auth", 0, HS_ACT_MASK, 1);
	expect_name(&l, 1, "x-a", "x-a*", 1, HS_ACT_MASK, 2);
	expect_name(&l, 2, "x-*", "x-**", 1, HS_ACT_MASK, 3);
	hs_list_free(&l);
}

static void test_name_length_limit(void **state)
{
	char name[HS_MAX_NAME_LEN + 2], text[HS_MAX_NAME_LEN + 16], msg[HS_ERR_MSG];
	struct hs_list l;

	(void)state;
	long_name(name, HS_MAX_NAME_LEN);
	snprintf(text, sizeof(text), "%s\n", name);
	parse_ok(text, -1, &l);
	assert_int_equal(l.names[0].len, HS_MAX_NAME_LEN);
	assert_string_equal(l.names[0].name, name);
	hs_list_free(&l);

	/* The '*' of a prefix rule does not count. */
	snprintf(text, sizeof(text), "%s*\n", name);
	parse_ok(text, -1, &l);
	assert_int_equal(l.names[0].len, HS_MAX_NAME_LEN);
	assert_int_equal(l.names[0].prefix, 1);
	hs_list_free(&l);

	long_name(name, HS_MAX_NAME_LEN + 1);
	snprintf(text, sizeof(text), "%s\n", name);
	/* The name itself is not shown: a long line may be a secret. */
	expect_error(text, "test.list:1: header name is 129 bytes long; the limit is 128");
	snprintf(text, sizeof(text), "# long\n%s* drop\n", name);
	expect_error(text, "test.list:2: header name is 129 bytes long; the limit is 128");
	(void)msg;
}

/*
 * A length is checked before it is narrowed (issue 16): a name of 65,536 + k
 * bytes, k <= 128, once passed the limit as k bytes long and was copied
 * whole into room for k (a heap overflow, "double free or corruption").
 */
static void test_name_length_not_narrowed(void **state)
{
	static const size_t lens[] = { 65536 + 1, 65536 + 64, 65536 + 128, 70000, 131072 + 5 };
	char msg[HS_ERR_MSG];

	(void)state;
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		for (int prefix = 0; prefix < 2; prefix++) {
			size_t len = lens[k];
			char *text = malloc(len + 16);

			assert_non_null(text);
			long_name(text, len);
			snprintf(text + len, 16, "%s\n", prefix ? "*" : "");
			snprintf(msg, sizeof(msg),
				 "test.list:1: header name is %zu bytes long; the limit is 128",
				 len);
			/* Exactly its own length: the sanitizers see a read past it. */
			expect_error_len(text, strlen(text), -1, msg);
			free(text);
		}
	}
}

static void test_name_count_limit(void **state)
{
	struct hs_list l;
	char *text;

	(void)state;
	text = numbered_names("", HS_MAX_NAMES);
	parse_ok(text, -1, &l);
	assert_int_equal(l.n, HS_MAX_NAMES);
	assert_string_equal(l.names[HS_MAX_NAMES - 1].name, "x-1023");
	hs_list_free(&l);
	/* The names array is sized by the lines: the last without a newline
	 * counts too. */
	text[strlen(text) - 1] = 0;
	parse_ok(text, -1, &l);
	assert_int_equal(l.n, HS_MAX_NAMES);
	assert_string_equal(l.names[HS_MAX_NAMES - 1].name, "x-1023");
	hs_list_free(&l);
	free(text);

	text = numbered_names("", HS_MAX_NAMES + 1);
	expect_error(text, "test.list:1025: more than 1024 header names (the limit)");
	text[strlen(text) - 1] = 0;
	expect_error(text, "test.list:1025: more than 1024 header names (the limit)");
	free(text);

	/* The line number is the file's, comments included. */
	text = numbered_names("# head\n\n@fold-underscore on\n", HS_MAX_NAMES + 1);
	expect_error(text, "test.list:1028: more than 1024 header names (the limit)");
	free(text);
}

/* ---- bad input: exact messages ---- */

static void test_error_invalid_character(void **state)
{
	(void)state;
	expect_error(
		"x-ok\nx bad\n",
		"test.list:2: invalid character ' ' in header name \"x...\" (after the name may come an action, 'mask', 'drop', 'observe' or 'reject', and a direction, 'request', 'response' or 'both')");
	/* A tab is named as a tab. */
	expect_error(
		"x\tbad\n",
		"test.list:1: invalid character '\\x09' in header name \"x...\" (after the name may come an action, 'mask', 'drop', 'observe' or 'reject', and a direction, 'request', 'response' or 'both')");
	/* Three words: the third is a direction, and shown only when it is
	 * a misspelt one (test_error_direction). */
	expect_error(
		"x-foo drop extra\n",
		"test.list:1: unexpected word after the action of header name \"x-foo\" (expected a direction: 'request', 'response' or 'both')");
	expect_error("x:y\n", "test.list:1: invalid character ':' in header name \"x...\"");
	expect_error("x-foo:\n", "test.list:1: invalid character ':' in header name \"x-foo...\"");
	expect_error("# c\nx\001y\n",
		     "test.list:2: invalid character '\\x01' in header name \"x...\"");
	expect_error("x\177y\n", "test.list:1: invalid character '\\x7f' in header name \"x...\"");
	expect_error("caf\303\251\n",
		     "test.list:1: invalid character '\\xc3' in header name \"caf...\"");
}

/* A file given as a list by mistake: a message names the line and what is
 * wrong, never what follows its first byte that is not a token character
 * (issue 16: --headers /etc/shadow printed its first line). */
static void test_error_no_secrets(void **state)
{
	(void)state;
	expect_error("root:$y$j9T$N0tAs4lt$5ecretHashHashHash:19000:0:99999:7:::\n",
		     "test.list:1: invalid character ':' in header name \"root...\"");
	expect_error(
		"password hunter2\n",
		"test.list:1: invalid character ' ' in header name \"password...\" (after the name may come an action, 'mask', 'drop', 'observe' or 'reject', and a direction, 'request', 'response' or 'both')");
	expect_error(
		"x-ok\nAPI_KEY=s3cr3t-value with-space\n",
		"test.list:2: invalid character ' ' in header name \"API_KEY...\" (after the name may come an action, 'mask', 'drop', 'observe' or 'reject', and a direction, 'request', 'response' or 'both')");
	expect_error(
		"-----BEGIN OPENSSH PRIVATE KEY-----\n",
		"test.list:1: invalid character ' ' in header name \"-----BEGIN...\" (after the name may come an action, 'mask', 'drop', 'observe' or 'reject', and a direction, 'request', 'response' or 'both')");
	/* 200 bytes of token: a key, not a name. */
	expect_error(
		"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"
		"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"
		"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0\n",
		"test.list:1: header name is 200 bytes long; the limit is 128");
	expect_error(
		"@secret=hunter2\n",
		"test.list:1: unknown directive \"@secret...\" (known: @fold-underscore on|off, @h2c-upgrade block|allow)");
	expect_error("@fold-underscore hunter2=x\nx-a\n",
		     "test.list:1: @fold-underscore takes 'on' or 'off', not \"hunter2...\"");
	expect_error(
		"x-a\nTOKEN=abc\ntoken=abc\n",
		"test.list:3: duplicate header name \"token...\": same as \"TOKEN...\" on line 2 (names are case-insensitive and '_' matches '-')");
}

static void test_load_symlink_loop_and_permission(void **state)
{
	char dir[] = "/tmp/hdrstrip-unit-XXXXXX", loop[64], noperm[64];
	struct hs_err err;
	struct hs_list l;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(loop, sizeof(loop), "%s/loop", dir);
	assert_int_equal(symlink(loop, loop), 0);
	assert_int_equal(hs_list_load(loop, NULL, &l, &err), -ELOOP);
	assert_int_equal(err.bad_input, 1);
	/* Without read permission (root reads anyway: only checked as a user). */
	snprintf(noperm, sizeof(noperm), "%s/noperm", dir);
	fd = open(noperm, O_WRONLY | O_CREAT, 0);
	assert_true(fd >= 0);
	close(fd);
	if (geteuid() != 0) {
		assert_int_equal(hs_list_load(noperm, NULL, &l, &err), -EACCES);
		assert_int_equal(err.bad_input, 1);
	}
	unlink(noperm);
	unlink(loop);
	rmdir(dir);
}

static void test_error_nul_byte(void **state)
{
	static const char text[] = "x-a\nx\0y\n";

	(void)state;
	expect_error_len(text, sizeof(text) - 1, -1,
			 "test.list:2: invalid character '\\x00' in header name");
}

static void test_error_unknown_action(void **state)
{
	(void)state;
	expect_error(
		"x-foo maks\n",
		"test.list:1: unknown action \"maks\" for header name \"x-foo\" (expected 'mask', 'drop', 'observe' or 'reject')");
	expect_error(
		"x-a\n\nx-foo  Dorp  # typo\n",
		"test.list:3: unknown action \"Dorp\" for header name \"x-foo\" (expected 'mask', 'drop', 'observe' or 'reject')");
	expect_error(
		"x-foo drp\n",
		"test.list:1: unknown action \"drp\" for header name \"x-foo\" (expected 'mask', 'drop', 'observe' or 'reject')");
	/* A word nowhere near an action: the name has a space in it. */
	expect_error(
		"x-foo dropped\n",
		"test.list:1: invalid character ' ' in header name \"x-foo...\" (after the name may come an action, 'mask', 'drop', 'observe' or 'reject', and a direction, 'request', 'response' or 'both')");
}

/* The hints that name the actions and directions name every one of their
 * tables (issue 36: observe was missing), each once, in the table's order. */
static void test_error_hints_from_tables(void **state)
{
	static const char *const texts[] = { "x-foo maks\n", "x bad\n" };
	struct hs_err err;
	struct hs_list l;

	(void)state;
	for (size_t k = 0; k < HS_ARRAY_SIZE(texts); k++) {
		const char *at;

		assert_int_equal(
			hs_list_parse(texts[k], strlen(texts[k]), TEST_LIST_PATH, NULL, &l, &err),
			-EINVAL);
		at = err.msg;
		for (int a = 0; a < HS_ACT_MAX; a++) {
			char w[32];

			snprintf(w, sizeof(w), "'%s'", hs_action_names[a]);
			at = strstr(at, w);
			assert_non_null(at);
		}
		if (k == 1)
			for (int d = HS_DIRSET_REQUEST; d < HS_DIRSET_MAX; d++) {
				char w[32];

				snprintf(w, sizeof(w), "'%s'", hs_dir_set_names[d]);
				at = strstr(at, w);
				assert_non_null(at);
			}
	}
}

/* Direction words: misspelt ones are named, other words are not (they may
 * be a secret's value), and words after the direction are refused. */
static void test_error_direction(void **state)
{
	(void)state;
	expect_error(
		"x-foo respones\n",
		"test.list:1: unknown direction \"respones\" for header name \"x-foo\" (expected 'request', 'response' or 'both')");
	expect_error(
		"x-a\nx-foo mask Reqest\n",
		"test.list:2: unknown direction \"Reqest\" for header name \"x-foo\" (expected 'request', 'response' or 'both')");
	expect_error(
		"x-foo drop bth\n",
		"test.list:1: unknown direction \"bth\" for header name \"x-foo\" (expected 'request', 'response' or 'both')");
	/* A misspelt action before a direction is still the action's error. */
	expect_error(
		"x-foo maks response\n",
		"test.list:1: unknown action \"maks\" for header name \"x-foo\" (expected 'mask', 'drop', 'observe' or 'reject')");
	/* An unknown third word, not shown. */
	expect_error(
		"x-foo mask s3cr3t\n",
		"test.list:1: unexpected word after the action of header name \"x-foo\" (expected a direction: 'request', 'response' or 'both')");
	expect_error(
		"x-foo* observe responses-only\n",
		"test.list:1: unexpected word after the action of header name \"x-foo*\" (expected a direction: 'request', 'response' or 'both')");
	/* A fourth word, or anything after a direction. */
	expect_error(
		"x-foo mask response extra\n",
		"test.list:1: unexpected word after the direction of header name \"x-foo\" (a line is NAME [ACTION] [DIRECTION])");
	expect_error(
		"x-foo both both\n",
		"test.list:1: unexpected word after the direction of header name \"x-foo\" (a line is NAME [ACTION] [DIRECTION])");
	expect_error(
		"x-foo response drop\n",
		"test.list:1: action \"drop\" after the direction of header name \"x-foo\" (a line is NAME [ACTION] [DIRECTION])");
	/* A second word far from any word: the name has a space in it. */
	expect_error(
		"x-foo responsible\n",
		"test.list:1: invalid character ' ' in header name \"x-foo...\" (after the name may come an action, 'mask', 'drop', 'observe' or 'reject', and a direction, 'request', 'response' or 'both')");
}

static void test_error_duplicate(void **state)
{
	(void)state;
	expect_error("x-foo\nx-bar\nx-foo\n",
		     "test.list:3: duplicate header name \"x-foo\" (first on line 1)");
	/* A different action does not make it a different name. */
	expect_error("x-foo\nx-foo drop\n",
		     "test.list:2: duplicate header name \"x-foo\" (first on line 1)");
	/* Duplicates only after folding. */
	expect_error(
		"X-Foo\nx_foo\n",
		"test.list:2: duplicate header name \"x_foo\": same as \"X-Foo\" on line 1 (names are case-insensitive and '_' matches '-')");
	expect_error(
		"x-a*\nx-b\nX-A* drop\n",
		"test.list:3: duplicate header name \"X-A*\": same as \"x-a*\" on line 1 (names are case-insensitive and '_' matches '-')");
	expect_error_len(
		"X-Foo\nx-FOO\n", 12, 0,
		"test.list:2: duplicate header name \"x-FOO\": same as \"X-Foo\" on line 1 (names are case-insensitive)");
	expect_error(
		"@fold-underscore off\nx_a\nx-a\nX_A\n",
		"test.list:4: duplicate header name \"X_A\": same as \"x_a\" on line 2 (names are case-insensitive)");
	/* Three copies: the second is reported, against the first. */
	expect_error("a\nb\na\na\n", "test.list:3: duplicate header name \"a\" (first on line 1)");
	/* Two pairs: the one whose second line comes first. */
	expect_error("a\nb\nc\nb\na\n",
		     "test.list:4: duplicate header name \"b\" (first on line 2)");
	expect_error("b\na\na\nb\n", "test.list:3: duplicate header name \"a\" (first on line 2)");
	/* Directions that overlap: the one they share is named. */
	expect_error("x-foo request\nx-foo\n",
		     "test.list:2: duplicate header name \"x-foo\" (first on line 1)");
	expect_error(
		"x-foo both\nx-foo drop response\n",
		"test.list:2: duplicate header name \"x-foo\" for responses (first on line 1)");
	expect_error(
		"x-foo response\nx-foo drop both\n",
		"test.list:2: duplicate header name \"x-foo\" for responses (first on line 1)");
	expect_error("x-foo\nx-foo both\n",
		     "test.list:2: duplicate header name \"x-foo\" for requests (first on line 1)");
	expect_error(
		"x-a* both\nX_A* Both\n",
		"test.list:2: duplicate header name \"X_A*\" for requests and responses: same as \"x-a*\" on line 1 (names are case-insensitive and '_' matches '-')");
	/* Disjoint twice, then a third that overlaps one of them. */
	expect_error(
		"x-foo request\nx-foo response\nx-foo response\n",
		"test.list:3: duplicate header name \"x-foo\" for responses (first on line 2)");
}

static void test_error_empty_list(void **state)
{
	(void)state;
	expect_error("", "test.list: no header names (the list is empty)");
	expect_error("# only\n   # comments\n\n\t\n",
		     "test.list: no header names (the list is empty)");
	expect_error("@fold-underscore off\n", "test.list: no header names (the list is empty)");
}

static void test_error_star_alone(void **state)
{
	(void)state;
	expect_error(
		"*\n",
		"test.list:1: prefix rule \"*\" needs at least one byte before the '*' (it would match every header)");
	expect_error(
		"x-a\n  * drop\n",
		"test.list:2: prefix rule \"*\" needs at least one byte before the '*' (it would match every header)");
}

static void test_error_directives(void **state)
{
	(void)state;
	expect_error(
		"x-a\n@foo bar\n",
		"test.list:2: unknown directive \"@foo\" (known: @fold-underscore on|off, @h2c-upgrade block|allow)");
	expect_error(
		"@\n",
		"test.list:1: unknown directive \"@\" (known: @fold-underscore on|off, @h2c-upgrade block|allow)");
	expect_error("@fold-underscore yes\nx-a\n",
		     "test.list:1: @fold-underscore takes 'on' or 'off', not \"yes\"");
	expect_error("@fold-underscore\nx-a\n",
		     "test.list:1: @fold-underscore takes 'on' or 'off', not \"\"");
	expect_error("@fold-underscore on off\nx-a\n",
		     "test.list:1: @fold-underscore takes 'on' or 'off', not \"on...\"");
}

/* ---- the built-in rule (HTTP2-Settings masked in requests) ---- */

/* Parse @text as the CLI does (built-in rule on); 0 or -errno, @err set. */
static int parse_builtin(const char *text, struct hs_list *l, struct hs_err *err)
{
	struct hs_list_opts o;

	hs_list_opts_default(&o);
	o.builtin = 1;
	return hs_list_parse(text, strlen(text), TEST_LIST_PATH, &o, l, err);
}

/* The rule of @l that is the built-in one, or -1; every other is not. */
static int builtin_index(const struct hs_list *l)
{
	int at = -1;

	for (size_t i = 0; i < l->n; i++)
		if (l->names[i].builtin) {
			assert_int_equal(at, -1);
			at = (int)i;
		}
	return at;
}

static void test_builtin_added(void **state)
{
	struct hs_list l;
	struct hs_err err;

	(void)state;
	/* Off by default: the list as written. */
	parse_ok("x-a\n", -1, &l);
	assert_int_equal(l.n, 1);
	assert_int_equal(builtin_index(&l), -1);
	hs_list_free(&l);
	/* On: after the list's own names, a request mask rule on no line. */
	assert_int_equal(parse_builtin("x-a\nx-b drop\n", &l, &err), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(builtin_index(&l), 2);
	expect_rule(&l, 2, "http2-settings", "http2-settings", 0, HS_ACT_MASK, HS_DIRSET_REQUEST,
		    0);
	expect_rule(&l, 1, "x-b", "x-b", 0, HS_ACT_DROP, HS_DIRSET_REQUEST, 2);
	hs_list_free(&l);
	/* A response rule of that name leaves requests to the built-in one. */
	assert_int_equal(parse_builtin("HTTP2-Settings observe response\n", &l, &err), 0);
	assert_int_equal(l.n, 2);
	expect_rule(&l, 1, "http2-settings", "http2-settings", 0, HS_ACT_MASK, HS_DIRSET_REQUEST,
		    0);
	hs_list_free(&l);
	/* With '_' not folded, "http2_settings" is another name. */
	assert_int_equal(parse_builtin("@fold-underscore off\nhttp2_settings observe\n", &l, &err),
			 0);
	assert_int_equal(builtin_index(&l), 1);
	hs_list_free(&l);
}

static void test_builtin_list_decides(void **state)
{
	/* A request rule that covers the name (itself in any case, through
	 * '_', or a prefix of it) decides instead; so does the directive. */
	static const char *const texts[] = {
		"x-a\nhttp2-settings observe\n",
		"x-a\nHTTP2-Settings drop\n",
		"http2_settings\n",
		"x-a\nhttp2-* observe both\n",
		"h*\n",
		"http2-settings*\n",
		"x-a\n@h2c-upgrade allow\n",
		"@h2c-upgrade block\n@h2c-upgrade allow\nx-a\n",
	};
	struct hs_list l;
	struct hs_err err;

	(void)state;
	for (size_t k = 0; k < HS_ARRAY_SIZE(texts); k++) {
		assert_int_equal(parse_builtin(texts[k], &l, &err), 0);
		if (builtin_index(&l) != -1)
			fail_msg("the built-in rule was added to \"%s\"", texts[k]);
		hs_list_free(&l);
	}
	/* Not a prefix of it, or a longer name: the built-in rule stays. */
	assert_int_equal(parse_builtin("http2-settingsx\nhttp3-*\n@h2c-upgrade block\n", &l, &err),
			 0);
	assert_int_equal(builtin_index(&l), 2);
	hs_list_free(&l);
}

/* Names that use @n distinct name bytes (after folding), "http" first,
 * never @skip, about eight a line. */
static char *distinct_names(int n, char skip)
{
	char *text = calloc(1, 256), *p = text;
	int used = 0;

	p += sprintf(p, "http");
	used = 3;
	for (int c = 0x21; c < 0x7f && used < n; c++) {
		/* ('*' would end a prefix rule; each line starts with 'h', so
		 * that none is a comment or a directive.) */
		if (c == ':' || c == skip || (c >= 'A' && c <= 'Z') || c == '_' || c == '*' ||
		    c == 'h' || c == 't' || c == 'p')
			continue;
		*p++ = (char)c;
		if (++used % 8 == 0)
			p += sprintf(p, "\nh");
	}
	assert_int_equal(used, n);
	*p = '\n';
	return text;
}

static void test_builtin_limits(void **state)
{
	struct hs_list l;
	struct hs_err err;
	char *text, msg[HS_ERR_MSG];

	(void)state;
	/* A full list leaves it no room: an error that says what to do. */
	text = numbered_names("", HS_MAX_NAMES);
	assert_int_equal(parse_builtin(text, &l, &err), -EINVAL);
	assert_int_equal(err.bad_input, 1);
	snprintf(
		msg, sizeof(msg),
		"test.list: %d header names leave no room for the built-in rule \"http2-settings\" (it keeps h2c upgrades out; the limit is %d in all): list one name fewer, or list \"http2-settings\" in place of another name, or say \"@h2c-upgrade allow\"",
		HS_MAX_NAMES, HS_MAX_NAMES);
	assert_string_equal(err.msg, msg);
	free(text);
	text = numbered_names("@h2c-upgrade allow\n", HS_MAX_NAMES);
	assert_int_equal(parse_builtin(text, &l, &err), 0);
	assert_int_equal(l.n, HS_MAX_NAMES);
	hs_list_free(&l);
	free(text);
	text = numbered_names("", HS_MAX_NAMES - 1);
	assert_int_equal(parse_builtin(text, &l, &err), 0);
	assert_int_equal(builtin_index(&l), HS_MAX_NAMES - 1);
	hs_list_free(&l);
	free(text);
	/* 63 distinct bytes, "http" among them but not '2': the built-in
	 * rule's '2' goes over, and the message names the rule. */
	text = distinct_names(63, '2');
	assert_int_equal(parse_builtin(text, &l, &err), -EINVAL);
	free(text);
	assert_string_equal(
		err.msg,
		"test.list: the built-in rule \"http2-settings\" (it keeps h2c upgrades out) brings a 64th distinct byte ('2') into the list; names may use at most 63 different bytes: list fewer different bytes, or say \"@h2c-upgrade allow\"");
}

static void test_builtin_directive_errors(void **state)
{
	(void)state;
	expect_error("@h2c-upgrade on\nx-a\n",
		     "test.list:1: @h2c-upgrade takes 'block' or 'allow', not \"on\"");
	expect_error("x-a\n@h2c-upgrade\n",
		     "test.list:2: @h2c-upgrade takes 'block' or 'allow', not \"\"");
}

/* ---- files ---- */

static void test_load_missing_and_directory(void **state)
{
	struct hs_err err;
	struct hs_list l;

	(void)state;
	assert_int_equal(hs_list_load("/nonexistent/hdrstrip-test.list", NULL, &l, &err), -ENOENT);
	assert_int_equal(err.bad_input, 1);
	assert_string_equal(
		err.msg,
		"cannot open header list '/nonexistent/hdrstrip-test.list': No such file or directory");

	/* fopen() succeeds on a directory; reading it is what fails. */
	assert_int_equal(hs_list_load("/", NULL, &l, &err), -EISDIR);
	assert_int_equal(err.bad_input, 1);
	assert_string_equal(err.msg, "cannot read header list '/': Is a directory");
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/hdrstrip-unit-XXXXXX", msg[HS_ERR_MSG];
	static const char good[] = "x-a\nX_B drop\n";
	static const char bad[] = "x-a\nx bad\n";
	struct hs_err err;
	struct hs_list l;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, good, sizeof(good) - 1), sizeof(good) - 1);
	assert_int_equal(hs_list_load(path, NULL, &l, &err), 0);
	assert_int_equal(l.n, 2);
	expect_name(&l, 1, "x-b", "X_B", 0, HS_ACT_DROP, 2);
	hs_list_free(&l);

	/* Messages name the file as given. */
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, bad, sizeof(bad) - 1, 0), sizeof(bad) - 1);
	assert_int_equal(hs_list_load(path, NULL, &l, &err), -EINVAL);
	assert_int_equal(err.bad_input, 1);
	snprintf(
		msg, sizeof(msg),
		"%s:2: invalid character ' ' in header name \"x...\" (after the name may come an action, 'mask', 'drop', 'observe' or 'reject', and a direction, 'request', 'response' or 'both')",
		path);
	assert_string_equal(err.msg, msg);
	close(fd);
	unlink(path);
}

/* ---- byte classes ---- */

static void test_byte_classes(void **state)
{
	static const char tchar_specials[] = "!#$%&'*+-.^_`|~";
	int n_tchar = 0, n_name = 0;

	(void)state;
	for (int c = 0; c < 256; c++) {
		int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
		int digit = c >= '0' && c <= '9';
		int tchar = alpha || digit ||
			    (c && memchr(tchar_specials, c, sizeof(tchar_specials) - 1));
		int name = c >= 0x21 && c <= 0x7e && c != ':';
		int want_on = name ? ref_fold(c, 1) : 0, want_off = name ? ref_fold(c, 0) : 0;

		if (hs_is_tchar(c) != tchar)
			fail_msg("hs_is_tchar(%#x) = %d", c, hs_is_tchar(c));
		if (!!hs_is_name_byte(c) != name)
			fail_msg("hs_is_name_byte(%#x) = %d", c, hs_is_name_byte(c));
		if (hs_fold_byte(c, 1) != want_on || hs_fold_byte(c, 0) != want_off)
			fail_msg("hs_fold_byte(%#x) = %#x / %#x, want %#x / %#x", c,
				 hs_fold_byte(c, 1), hs_fold_byte(c, 0), want_on, want_off);
		n_tchar += tchar;
		n_name += name;
	}
	/* RFC 9110 5.6.2: 26 + 26 letters, 10 digits, 15 others. */
	assert_int_equal(n_tchar, 77);
	assert_int_equal(n_name, 93);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_comments_blanks_actions),
		cmocka_unit_test(test_prefix_rules_parse),
		cmocka_unit_test(test_directions_parse),
		cmocka_unit_test(test_directions_disjoint_duplicates),
		cmocka_unit_test(test_fold_underscore_directive_and_option),
		cmocka_unit_test(test_non_token_names_warn),
		cmocka_unit_test(test_inner_star_warns),
		cmocka_unit_test(test_name_length_limit),
		cmocka_unit_test(test_name_length_not_narrowed),
		cmocka_unit_test(test_name_count_limit),
		cmocka_unit_test(test_error_invalid_character),
		cmocka_unit_test(test_error_nul_byte),
		cmocka_unit_test(test_error_no_secrets),
		cmocka_unit_test(test_error_hints_from_tables),
		cmocka_unit_test(test_load_symlink_loop_and_permission),
		cmocka_unit_test(test_error_unknown_action),
		cmocka_unit_test(test_error_direction),
		cmocka_unit_test(test_error_duplicate),
		cmocka_unit_test(test_error_empty_list),
		cmocka_unit_test(test_error_star_alone),
		cmocka_unit_test(test_error_directives),
		cmocka_unit_test(test_builtin_added),
		cmocka_unit_test(test_builtin_list_decides),
		cmocka_unit_test(test_builtin_limits),
		cmocka_unit_test(test_builtin_directive_errors),
		cmocka_unit_test(test_load_missing_and_directory),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_byte_classes),
	};

	return cmocka_run_group_tests_name("hlist", tests, NULL, NULL);
}
