// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A header list file read and compiled for a command: the core's parser and
 * compiler, with their error printed once and turned into an exit code.
 */
#include <stdlib.h>

#include "cli.h"
#include "compile.h"

void list_warn(const char *msg)
{
	pr_warn("%s", msg);
}

int load_list(const char *path, const struct hs_list_opts *lo, struct hs_list *l)
{
	struct hs_err err;
	int r = hs_list_load(path, lo, l, &err);

	if (!r)
		return EXIT_OK;
	pr_err("%s", err.msg);
	return exit_code_for(r, err.bad_input);
}

struct hs_trie *trie_alloc(void)
{
	struct hs_trie *t = calloc(1, sizeof(*t));

	if (!t) {
		pr_err("out of memory for the trie (%zu bytes)", sizeof(*t));
		return NULL;
	}
	hs_prefault(t, sizeof(*t)); /* written whole, by hs_compile() or the kernel */
	return t;
}

/* Load and compile a list; print the error once. Returns an exit code. */
int load_trie(const char *path, const struct hs_list_opts *lo, struct hs_list *l,
	      struct hs_trie **t, struct hs_trie_stats *st)
{
	struct hs_err err;
	int r;

	r = load_list(path, lo, l);
	if (r)
		return r;
	*t = trie_alloc();
	if (!*t) {
		hs_list_free(l);
		return EXIT_FAIL;
	}
	r = hs_compile(l, *t, st, &err);
	if (r) {
		pr_err("%s: %s", path, err.msg);
		free(*t);
		*t = NULL;
		hs_list_free(l);
		return exit_code_for(r, err.bad_input);
	}
	return EXIT_OK;
}
