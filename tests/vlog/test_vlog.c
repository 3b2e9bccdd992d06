// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The verifier-log capture (user/vlog.c) on a real rejection: a tiny bad
 * program (bad.bpf.c) is loaded with libbpf while libbpf's messages go
 * through the CLI's own print callback (log_setup in
 * user/log.c), exactly as 'hdrstrip attach' loads its programs. Needs
 * root for BPF; skipped otherwise.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/libbpf.h>

#include "cli.h"
#include "loader.h"
#include "vlog.h"

#ifndef BAD_OBJ
#define BAD_OBJ "build/tests/bad.bpf.o"
#endif
#ifndef GOOD_OBJ
#define GOOD_OBJ "build/bpf/hdrstrip.bpf.o"
#endif

/* main.c's global options, for the commands linked in. */
struct global_opts g_opts;

static char dir[] = "/tmp/hdrstrip-test-vlog-XXXXXX";

/* main.c's, for the commands linked in (none runs here). */
int usage_out(const char *text, int ok)
{
	fputs(text, ok ? stdout : stderr);
	return ok ? 0 : 2;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	log_setup(0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

static void need_root(void)
{
	if (geteuid() != 0) {
		print_message("skipped: loading BPF programs needs root\n");
		skip();
	}
}

/* Load @path's programs; returns libbpf's error (0: loaded). */
static int load(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	int r;

	if (!obj)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	r = bpf_object__load(obj);
	bpf_object__close(obj);
	return r;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, len = 0, n;

	assert_non_null(f);
	do {
		if (len + 4096 + 1 > cap) {
			char *nb;

			cap = (cap ? cap * 2 : 8192);
			nb = realloc(buf, cap);
			assert_non_null(nb);
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	buf[len] = 0;
	fclose(f);
	return buf;
}

static int count_lines(const char *s, const char *prefix)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, prefix)); p++)
		if (p == s || p[-1] == '\n')
			n++;
	return n;
}

static void test_rejected_program(void **state)
{
	char path[512], want[600], *out = NULL, *saved;
	size_t out_len = 0;
	FILE *mem;
	int r;

	(void)state;
	need_root();
	vlog_begin();
	r = load(BAD_OBJ);
	assert_true(r < 0);
	mem = open_memstream(&out, &out_len);
	assert_int_equal(vlog_save(dir, "testdev", "xdp", mem, path, sizeof(path)), 1);
	fclose(mem);
	vlog_end(0, "testdev", "xdp", 1);

	snprintf(want, sizeof(want), "%s/verifier-testdev-xdp.log", dir);
	assert_string_equal(path, want);
	saved = slurp(path);
	/* The whole log: the markers and the verifier's verdict. */
	assert_non_null(strstr(saved, "-- BEGIN PROG LOAD LOG --"));
	assert_non_null(strstr(saved, "-- END PROG LOAD LOG --"));
	assert_non_null(strstr(saved, "invalid access to packet"));
	/* The report: program named, at most HS_VLOG_TAIL lines of the log,
	 * the error among them, and where the rest is. */
	print_message("%s", out);
	assert_non_null(strstr(out, "rejected program 'hdrstrip_bad' (xdp on 'testdev')"));
	assert_non_null(strstr(out, "invalid access to packet"));
	assert_true(count_lines(out, "  | ") >= 1);
	assert_true(count_lines(out, "  | ") <= HS_VLOG_TAIL);
	assert_null(strstr(out, "  | -- END PROG LOAD LOG --"));
	assert_non_null(strstr(out, want));
	free(saved);
	free(out);
	unlink(path);
}

static void test_nothing_kept_outside(void **state)
{
	char path[512];

	(void)state;
	need_root();
	/* Not capturing: a rejection leaves nothing to save. */
	assert_true(load(BAD_OBJ) < 0);
	vlog_begin();
	assert_int_equal(vlog_save(dir, "testdev", "tc-egress", NULL, path, sizeof(path)), 0);
	vlog_end(0, "testdev", "tc-egress", 1);
}

static void test_loaded_program(void **state)
{
	char path[512];

	(void)state;
	need_root();
	/* hdrstrip's own object loads: no verifier log, nothing saved. */
	vlog_begin();
	assert_int_equal(load(GOOD_OBJ), 0);
	assert_int_equal(vlog_save(dir, "testdev", "xdp", NULL, path, sizeof(path)), 0);
	vlog_end(0, "testdev", "xdp", 1);
}

static void test_unwritable_dir(void **state)
{
	char path[512];

	(void)state;
	need_root();
	/* A directory that cannot be made: the log goes to a new file in /tmp. */
	vlog_begin();
	assert_true(load(BAD_OBJ) < 0);
	assert_int_equal(
		vlog_save("/proc/hdrstrip-no-such-dir", "testdev", "xdp", NULL, path, sizeof(path)),
		1);
	vlog_end(0, "testdev", "xdp", 1);
	assert_int_equal(strncmp(path, "/tmp/hdrstrip-verifier-testdev-xdp-", 35), 0);
	assert_int_equal(access(path, R_OK), 0);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rejected_program),
		cmocka_unit_test(test_nothing_kept_outside),
		cmocka_unit_test(test_loaded_program),
		cmocka_unit_test(test_unwritable_dir),
	};

	return cmocka_run_group_tests_name("vlog", tests, setup, teardown);
}
