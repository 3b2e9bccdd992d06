/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What every subcommand of the CLI shares. */
#ifndef HDRSTRIP_CLI_H
#define HDRSTRIP_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "log.h"

/* Exit codes (documented in hdrstrip(8)). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1, /* the operation failed */
	EXIT_USAGE = 2, /* bad usage or bad input */
};

struct global_opts {
	int verbose;
	const char *netns; /* -n NAME, or NULL */
	int json; /* -j, --json (or -p): as the command's own --json */
	int pretty; /* -p, --pretty: JSON, indented (jsonfmt.h) */
	const char *json_opt; /* how -j or -p was spelt, for messages */
	int agent; /* set by 'hdrstrip run': the commands it runs are the agent's */
};

extern struct global_opts g_opts;

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	int json; /* prints JSON (--json): the global -j and -p apply */
};

/* Map a -errno from the pure layers to an exit code. Inline, so that every
 * caller (and a static analyser) sees that an error never maps to EXIT_OK. */
static inline int exit_code_for(int err, int bad_input)
{
	if (!err)
		return EXIT_OK;
	return bad_input ? EXIT_USAGE : EXIT_FAIL;
}

/* Shared usage helper: prints "Usage: hdrstrip CMD ..." text and returns
 * EXIT_USAGE (or EXIT_OK when @ok). */
int usage_out(const char *text, int ok);

struct hs_list;
struct hs_list_opts;
struct hs_trie;
struct hs_trie_stats;
/* A list's warning (a name that is not an RFC 9110 token), printed as one:
 * struct hs_list_opts' .warn for the commands. */
void list_warn(const char *msg);
/* Load a header list, printing any error once; returns an exit code. On
 * success @l must be freed by the caller. */
int load_list(const char *path, const struct hs_list_opts *lo, struct hs_list *l);
/* A zeroed trie block, its pages faulted in; NULL after printing the error. */
struct hs_trie *trie_alloc(void);
/* Load and compile a header list, printing any error once; returns an exit
 * code. On success *t is malloc'ed and @l must be freed by the caller. */
int load_trie(const char *path, const struct hs_list_opts *lo, struct hs_list *l,
	      struct hs_trie **t, struct hs_trie_stats *st);

int cmd_attach(int argc, char **argv);
/* attach's command line checked as attach would take it (values,
 * combinations), nothing done: EXIT_OK, or the exit code after the message. */
int cmd_attach_check(int argc, char **argv);
int cmd_update(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_flows(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_check(int argc, char **argv);
/* --version: the libraries and the kernel's features (-j: as JSON). */
int print_version(int json);

#endif /* HDRSTRIP_CLI_H */
