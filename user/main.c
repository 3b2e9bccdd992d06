// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* hdrstrip: the command table and global options. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct global_opts g_opts;

static void vpr(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "hdrstrip: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpr("", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpr("warning: ", fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	if (!g_opts.verbose)
		return;
	va_start(ap, fmt);
	vpr("", fmt, ap);
	va_end(ap);
}

int exit_code_for(int err, int bad_input)
{
	if (!err)
		return EXIT_OK;
	return bad_input ? EXIT_USAGE : EXIT_FAIL;
}

int usage_out(const char *text, int ok)
{
	fputs(text, ok ? stdout : stderr);
	return ok ? EXIT_OK : EXIT_USAGE;
}

static const struct cmd cmds[] = {
	{ "compile", cmd_compile, "validate a header list and build its trie" },
	{ "check", cmd_check, "look header names up in a header list" },
};

static int usage(int ok)
{
	FILE *f = ok ? stdout : stderr;

	fprintf(f, "Usage: hdrstrip [OPTIONS] COMMAND [ARGS]\n"
		   "\n"
		   "Strip internal HTTP headers from plaintext HTTP/1.x requests in the kernel.\n"
		   "\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\n"
		   "Options:\n"
		   "  -v, --verbose      show libbpf's own messages\n"
		   "  -h, --help         show this help; 'hdrstrip COMMAND --help' for a command\n"
		   "  -V, --version      show the version\n"
		   "\n"
		   "Exit status: 0 success, 1 failure, 2 bad usage or bad input.\n");
	return ok ? EXIT_OK : EXIT_USAGE;
}

int main(int argc, char **argv)
{
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		const char *a = argv[i];

		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			g_opts.verbose++;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			return usage(1);
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("hdrstrip %s\n", HDRSTRIP_VERSION);
			return EXIT_OK;
		} else {
			pr_err("unknown option '%s' (see 'hdrstrip --help')", a);
			return EXIT_USAGE;
		}
		i++;
	}
	if (i >= argc)
		return usage(0);
	if (!strcmp(argv[i], "help"))
		return usage(1);
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
		if (!strcmp(argv[i], cmds[c].name)) {
			optind = 1;
			return cmds[c].run(argc - i, argv + i);
		}
	pr_err("unknown command '%s' (see 'hdrstrip --help')", argv[i]);
	return EXIT_USAGE;
}
