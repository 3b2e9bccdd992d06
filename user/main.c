// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* hdrstrip: the command table and global options. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>

#include "cli.h"
#include "jsonfmt.h"
#include "loader.h"
#include "log.h"

struct global_opts g_opts;

int usage_out(const char *text, int ok)
{
	fputs(text, ok ? stdout : stderr);
	return ok ? EXIT_OK : EXIT_USAGE;
}

static const struct cmd cmds[] = {
	{ "attach", cmd_attach, "attach hdrstrip to an interface (XDP or TC)", .json = 0 },
	{ "update", cmd_update, "replace an attached interface's header list", .json = 0 },
	{ "detach", cmd_detach, "detach hdrstrip from an interface", .json = 0 },
	{ "status", cmd_status, "show where hdrstrip is attached", .json = 1 },
	{ "stats", cmd_stats, "show hdrstrip's counters", .json = 1 },
	{ "events", cmd_events, "show match events: who sent internal fields", .json = 1 },
	{ "flows", cmd_flows, "list the connections hdrstrip tracks, as conntrack -L", .json = 1 },
	{ "run", cmd_agent, "run as the agent of a config file's attachments", .json = 0 },
	{ "compile", cmd_compile, "validate a header list and build its trie", .json = 0 },
	{ "check", cmd_check, "look header names up in a header list", .json = 0 },
};

/*
 * -n NAME: enter /run/netns/NAME for networking only. The mount namespace
 * (and so the host's /sys/fs/bpf) stays, unlike with 'ip netns exec'.
 */
static int enter_netns(const char *name)
{
	char path[PATH_MAX], hint[160];
	int entering, r = netns_enter(name, path, sizeof(path), &entering);

	if (!r)
		return EXIT_OK;
	if (!entering) {
		pr_err("cannot open network namespace '%s' (%s): %s; see 'ip netns list'", name,
		       path, strerror(-r));
		return r == -ENOENT ? EXIT_USAGE : EXIT_FAIL;
	}
	pr_err("cannot enter network namespace '%s': %s%s", name, strerror(-r),
	       r == -EPERM ? perm_hint(CAP_SYS_ADMIN, "CAP_SYS_ADMIN", hint, sizeof(hint)) : "");
	return EXIT_FAIL;
}

/* The commands that print JSON, as a sentence lists them: "status, stats
 * and events" (from cmds[]: a new one is named at once). */
static const char *json_cmds(char *buf, size_t size)
{
	size_t n = sizeof(cmds) / sizeof(cmds[0]), k = 0, o = 0, last = 0;

	for (size_t c = 0; c < n; c++)
		if (cmds[c].json)
			last = c;
	buf[0] = 0;
	for (size_t c = 0; c < n && o < size; c++)
		if (cmds[c].json)
			o += snprintf(buf + o, size - o, "%s%s",
				      !k++	  ? ""
				      : c == last ? " and "
						  : ", ",
				      cmds[c].name);
	return buf;
}

static int usage(int ok)
{
	FILE *f = ok ? stdout : stderr;
	char jc[128];

	fprintf(f, "Usage: hdrstrip [OPTIONS] COMMAND [ARGS]\n"
		   "\n"
		   "Strip internal HTTP headers from plaintext HTTP/1.x requests in the kernel.\n"
		   "\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\n"
		"Options:\n"
		"  -n, --netns NAME   run in network namespace NAME (/run/netns/NAME), like 'ip -n'\n"
		"  --netns-path PATH  the same, a namespace by its file (/proc/PID/ns/net: one\n"
		"                     with no name)\n"
		"  -v, --verbose      show libbpf's own messages (twice: debug)\n"
		"  -j, --json         JSON output, as the command's --json, of the commands that\n"
		"                     print JSON: %s (the others refuse it)\n"
		"  -p, --pretty       JSON output, indented: 2 spaces, one key per line (implies -j)\n"
		"  -h, --help         show this help; 'hdrstrip help COMMAND' (or 'hdrstrip\n"
		"                     COMMAND --help') for a command's\n"
		"  -V, --version      show the version, the libbpf and libxdp it uses and the\n"
		"                     kernel features it found (-j first: as JSON)\n"
		"\n"
		"Exit status: 0 success, 1 failure, 2 bad usage or bad input.\n",
		json_cmds(jc, sizeof(jc)));
	return ok ? EXIT_OK : EXIT_USAGE;
}

/* A cluster of flags: -v, -vv, -j, -p, -jp ...; 0 if @a is not one. */
static int short_flags(const char *a)
{
	if (a[0] != '-' || !a[1] || strspn(a + 1, "vjp") != strlen(a + 1))
		return 0;
	for (const char *c = a + 1; *c; c++) {
		if (*c == 'v')
			g_opts.verbose++;
		if (*c == 'j' || *c == 'p') {
			g_opts.json = 1;
			g_opts.json_opt = a;
		}
		if (*c == 'p')
			g_opts.pretty = 1;
	}
	return 1;
}

static const struct cmd *cmd_find(const char *name)
{
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
		if (!strcmp(name, cmds[c].name))
			return &cmds[c];
	return NULL;
}

/* The command, with standard output through the reformatter for -p. */
static int cmd_run(const struct cmd *c, int argc, char **argv)
{
	int rc, r = g_opts.pretty ? pretty_stdout_begin() : 0;

	if (r)
		pr_warn("cannot indent the output (%s): printing it compact", strerror(-r));
	rc = c->run(argc, argv);
	if (g_opts.pretty && !r && pretty_stdout_end() && !rc)
		rc = EXIT_FAIL;
	return rc;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	int i = 1;

	while (i < argc && argv[i][0] == '-') {
		const char *a = argv[i];

		if (short_flags(a)) {
			/* -v, -j, -p, and clusters of them */
		} else if (!strcmp(a, "--verbose")) {
			g_opts.verbose++;
		} else if (!strcmp(a, "--json") || !strcmp(a, "--pretty")) {
			g_opts.json = 1;
			g_opts.pretty |= a[2] == 'p';
			g_opts.json_opt = a;
		} else if (!strcmp(a, "-n") || !strcmp(a, "--netns") ||
			   !strcmp(a, "--netns-path")) {
			if (i + 1 >= argc) {
				pr_err("%s needs a namespace name", a);
				return EXIT_USAGE;
			}
			g_opts.netns = argv[++i];
		} else if (!strncmp(a, "--netns=", 8)) {
			g_opts.netns = a + 8;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			return usage(1);
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			/* After -n: the namespace's interfaces are asked about. */
			if (g_opts.netns) {
				int r = enter_netns(g_opts.netns);

				if (r)
					return r;
			}
			return print_version(g_opts.json);
		} else {
			pr_err("unknown option '%s' (see 'hdrstrip --help')", a);
			return EXIT_USAGE;
		}
		i++;
	}
	if (i >= argc)
		return usage(0);
	if (!strcmp(argv[i], "help")) {
		/* help CMD: the command's own --help. */
		char *help_argv[] = { argv[i + 1], "--help", NULL };

		if (i + 1 >= argc)
			return usage(1);
		c = cmd_find(argv[i + 1]);
		if (!c || i + 2 < argc) {
			pr_err("help: %s (see 'hdrstrip --help')",
			       c ? "one COMMAND at a time" : "no such command");
			return EXIT_USAGE;
		}
		optind = 1;
		return c->run(2, help_argv);
	}
	c = cmd_find(argv[i]);
	/* JSON asked of a command that prints none: a script would read its
	 * text as JSON, or nothing. Refused before anything is done. */
	if (c && g_opts.json && !c->json) {
		char jc[128];

		pr_err("%s: %s prints no JSON (%s do; see 'hdrstrip --help')", g_opts.json_opt,
		       c->name, json_cmds(jc, sizeof(jc)));
		return EXIT_USAGE;
	}
	log_setup(g_opts.verbose);
	if (g_opts.netns) {
		int r = enter_netns(g_opts.netns);

		if (r)
			return r;
	}
	if (c) {
		optind = 1;
		return cmd_run(c, argc - i, argv + i);
	}
	pr_err("unknown command '%s' (see 'hdrstrip --help')", argv[i]);
	return EXIT_USAGE;
}
