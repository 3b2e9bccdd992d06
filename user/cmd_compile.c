// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* 'hdrstrip compile' and 'hdrstrip check': header lists without a kernel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compile.h"

struct compile_opts {
	const char *headers;
	const char *out;
	int dump;
	struct hs_list_opts list;
};

static const char compile_usage[] =
	"Usage: hdrstrip compile --headers FILE [-o OUT] [--dump] [--no-fold-underscore]\n"
	"\n"
	"Validate a header list and build its trie; print a summary.\n"
	"\n"
	"  --headers FILE          the header list ('-' for standard input)\n"
	"  -o, --output OUT        write the binary trie (the BPF map value) to OUT\n"
	"  --dump                  print every node of the trie\n"
	"  --no-fold-underscore    '_' and '-' are different bytes (overrides the list)\n";

static const char check_usage[] =
	"Usage: hdrstrip check --headers FILE [--no-fold-underscore] NAME...\n"
	"\n"
	"Look each NAME up in the header list: one line per NAME, e.g.\n"
	"  X-Internal-Auth: match (id 3, mask)\n"
	"  accept: no match\n"
	"Ids are the names' positions in the list, counting from 1.\n";

static void print_label(const struct hs_trie *t, const struct hs_node *n)
{
	for (__u32 i = 0; i < n->label_len; i++)
		putchar(t->labels[n->label_off + i]);
}

static void dump_trie(const struct hs_trie *t, const struct hs_list *l)
{
	unsigned char byte_of[HS_MAX_SYMS] = { 0 };

	for (int c = 255; c >= 0; c--)
		if (t->sym[c] != HS_SYM_NONE)
			byte_of[t->sym[c]] = t->canon[c];
	for (__u32 i = 0; i < t->n_nodes; i++) {
		const struct hs_node *n = &t->nodes[i];

		printf("node %u: label \"", i);
		print_label(t, n);
		printf("\"");
		if (n->mask) {
			printf(" children \"");
			for (int c = 0; c < HS_MAX_SYMS; c++)
				if (n->mask & (1ULL << c))
					putchar(byte_of[c]);
			printf("\" from node %u", n->first_child);
		}
		if (n->end_rule)
			printf(" ends %s", l->names[n->end_rule - 1].orig);
		if (n->pfx_out && n->pfx_out != n->end_rule)
			printf(" under %s", l->names[n->pfx_out - 1].orig);
		putchar('\n');
	}
}

/* The block as the BPF map holds it. Returns an exit code. */
static int write_trie(const char *path, const struct hs_trie *t)
{
	FILE *f = fopen(path, "wb");
	int ok, e;

	if (!f) {
		pr_err("cannot write trie to '%s': %s", path, strerror(errno));
		return EXIT_FAIL;
	}
	/* Close even when the write failed; the first error is the one to
	 * report (fclose() flushes, so a full disk may show only there). */
	ok = fwrite(t, sizeof(*t), 1, f) == 1;
	e = errno;
	if (fclose(f) && ok) {
		ok = 0;
		e = errno;
	}
	if (!ok) {
		pr_err("cannot write trie to '%s': %s", path, strerror(e));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static void warn_cb(const char *msg)
{
	pr_warn("%s", msg);
}

int cmd_compile(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "headers", required_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "dump", no_argument, NULL, 'd' },
		{ "no-fold-underscore", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct compile_opts o = { 0 };
	struct hs_trie_stats st;
	struct hs_list l;
	struct hs_trie *t;
	int c, r;

	hs_list_opts_default(&o.list);
	o.list.warn = warn_cb;
	while ((c = getopt_long(argc, argv, "o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			o.headers = optarg;
			break;
		case 'o':
			o.out = optarg;
			break;
		case 'd':
			o.dump = 1;
			break;
		case 'U':
			o.list.fold_underscore = 0;
			break;
		case 'h':
			return usage_out(compile_usage, 1);
		default:
			return usage_out(compile_usage, 0);
		}
	}
	if (!o.headers || optind != argc) {
		pr_err("compile: %s",
		       !o.headers ? "--headers FILE is required" : "unexpected argument");
		return usage_out(compile_usage, 0);
	}
	r = load_trie(o.headers, &o.list, &l, &t, &st);
	if (r)
		return r;
	printf("%s: %u names, %u nodes, %u label bytes, %u distinct bytes, max depth %u, %u bytes"
	       " ('_' %s '-')\n",
	       o.headers, st.names, st.nodes, st.label_bytes, st.distinct_bytes, st.max_depth,
	       st.bytes, l.fold_underscore ? "matches" : "does not match");
	if (o.dump)
		dump_trie(t, &l);
	if (o.out)
		r = write_trie(o.out, t);
	free(t);
	hs_list_free(&l);
	return r;
}

int cmd_check(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "headers", required_argument, NULL, 'H' },
		{ "no-fold-underscore", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct hs_list_opts lo;
	const char *headers = NULL;
	struct hs_list l;
	struct hs_trie *t;
	int c, r;

	hs_list_opts_default(&lo);
	lo.warn = warn_cb;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			headers = optarg;
			break;
		case 'U':
			lo.fold_underscore = 0;
			break;
		case 'h':
			return usage_out(check_usage, 1);
		default:
			return usage_out(check_usage, 0);
		}
	}
	if (!headers || optind >= argc) {
		pr_err("check: %s",
		       !headers ? "--headers FILE is required" : "give at least one NAME");
		return usage_out(check_usage, 0);
	}
	r = load_trie(headers, &lo, &l, &t, NULL);
	if (r)
		return r;
	for (int i = optind; i < argc; i++) {
		__u32 rule = hs_trie_lookup(t, (const __u8 *)argv[i], strlen(argv[i]));

		if (!rule) {
			printf("%s: no match\n", argv[i]);
			continue;
		}
		const struct hs_name *nm = &l.names[rule - 1];

		printf("%s: match (id %u, %s", argv[i], rule, hs_action_name(nm->action));
		if (nm->prefix || strcasecmp(nm->orig, argv[i]))
			printf(", rule \"%s\"", nm->orig);
		printf(")\n");
	}
	free(t);
	hs_list_free(&l);
	return EXIT_OK;
}
