// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* 'hdrstrip compile' and 'hdrstrip check': header lists without a kernel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compile.h"
#include "opts.h"

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
	"  X-Internal-Auth: match (id 3, mask, request)\n"
	"  X-Debug: match (id 4, mask, request), match (id 5, drop, response)\n"
	"  accept: no match\n"
	"Ids are the names' positions in the list, counting from 1; each match\n"
	"says in which directions (request, response or both) it applies.\n"
	"Exit status (as grep's): 0 when a NAME matched, 1 when none did, 2 for bad\n"
	"usage or a bad list.\n"
	"\n"
	"  --headers FILE          the header list ('-' for standard input)\n"
	"  --no-fold-underscore    '_' and '-' are different bytes (overrides the list)\n";

static void print_label(const struct hs_trie *t, const struct hs_node *n)
{
	for (__u32 i = 0; i < n->label_len; i++)
		putchar(t->labels[n->label_off + i]);
}

/*
 * The rules that apply to a name the trie resolved to @v (rule + 1), and
 * in which directions: one rule for both, or one for each direction that
 * has one. Returns how many (0: the name matches nothing).
 */
static int dir_rules(const struct hs_trie *t, __u32 v, __u32 rule[2], enum hs_dir_set dirs[2])
{
	__u32 req = hs_dir_rule(t, v, HS_DIR_REQUEST), resp = hs_dir_rule(t, v, HS_DIR_RESPONSE);
	int n = 0;

	if (req && req == resp) {
		rule[0] = req;
		dirs[0] = HS_DIRSET_BOTH;
		return 1;
	}
	if (req) {
		rule[n] = req;
		dirs[n++] = HS_DIRSET_REQUEST;
	}
	if (resp) {
		rule[n] = resp;
		dirs[n++] = HS_DIRSET_RESPONSE;
	}
	return n;
}

/* " x-a* (request), x-a (response)": the rules of a name the trie
 * resolved to @v. */
static void print_dir_rules(const struct hs_trie *t, const struct hs_list *l, __u32 v)
{
	enum hs_dir_set dirs[2];
	__u32 rule[2];
	int n = dir_rules(t, v, rule, dirs);

	for (int k = 0; k < n; k++)
		printf("%s %s (%s%s)", k ? "," : "", l->names[rule[k] - 1].orig,
		       hs_dir_set_name(dirs[k]), l->names[rule[k] - 1].builtin ? ", built-in" : "");
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
		if (n->end_rule) {
			printf(" ends");
			print_dir_rules(t, l, n->end_rule);
		}
		if (n->pfx_out && n->pfx_out != n->end_rule) {
			printf(" under");
			print_dir_rules(t, l, n->pfx_out);
		}
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

/* The header list compile and check read: --headers FILE, and how. */
struct list_arg {
	const char *path;
	struct hs_list_opts opts;
};

/* 1 when @opt is an option of the list (--headers, --no-fold-underscore),
 * its value then in @a; else 0. */
static int list_opt(int opt, struct list_arg *a)
{
	switch (opt) {
	case OPT_HEADERS:
		a->path = optarg;
		return 1;
	case OPT_NOFOLD:
		a->opts.fold_underscore = 0;
		return 1;
	default:
		return 0;
	}
}

/* What 'compile' was asked for: its defaults, then the command line. */
struct compile_opts {
	struct list_arg list;
	const char *out; /* -o: where the trie block goes, NULL: nowhere */
	int dump;
};

static const struct compile_opts defaults_compile = {
	.list = { .opts = { .fold_underscore = -1, .warn = list_warn, .builtin = 1 } },
};

static const struct option compile_options[] = {
	OPTION_HEADERS,
	{ "output", required_argument, NULL, 'o' },
	{ "dump", no_argument, NULL, 'd' },
	OPTION_NOFOLD,
	OPTION_HELP,
	{ 0 },
};

/* -1 with @o filled in, else the exit code. */
static int parse_compile(int argc, char **argv, struct compile_opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "o:h", compile_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'd':
			o->dump = 1;
			break;
		default:
			/* the list's; else --help, or an option compile does not take */
			if (!list_opt(c, &o->list))
				return usage_out(compile_usage, c == 'h');
		}
	}
	if (!o->list.path || optind != argc) {
		pr_err("compile: %s",
		       !o->list.path ? "--headers FILE is required" : "unexpected argument");
		return usage_out(compile_usage, 0);
	}
	return -1;
}

static int do_compile(const struct compile_opts *o)
{
	struct hs_trie_stats st;
	struct hs_list l;
	struct hs_trie *t;
	int r = load_trie(o->list.path, &o->list.opts, &l, &t, &st), builtin;

	if (r)
		return r;
	builtin = hs_list_builtin(&l);
	printf("%s: %u names%s, %u nodes, %u label bytes, %u distinct bytes, max depth %u, %u bytes"
	       " ('_' %s '-')\n",
	       o->list.path, st.names - builtin, builtin ? HS_BUILTIN_NOTE : "", st.nodes,
	       st.label_bytes, st.distinct_bytes, st.max_depth, st.bytes,
	       l.fold_underscore ? "matches" : "does not match");
	if (o->dump)
		dump_trie(t, &l);
	if (o->out)
		r = write_trie(o->out, t);
	free(t);
	hs_list_free(&l);
	return r;
}

int cmd_compile(int argc, char **argv)
{
	struct compile_opts o = defaults_compile;
	int rc = parse_compile(argc, argv, &o);

	return rc >= 0 ? rc : do_compile(&o);
}

/* What 'check' was asked for: its defaults, then the command line. */
struct check_opts {
	struct list_arg list;
	char *const *names; /* the NAMEs to look up */
	int n_names;
};

static const struct check_opts defaults_check = {
	.list = { .opts = { .fold_underscore = -1, .warn = list_warn, .builtin = 1 } },
};

static const struct option check_options[] = {
	OPTION_HEADERS,
	OPTION_NOFOLD,
	OPTION_HELP,
	{ 0 },
};

/* -1 with @o filled in, else the exit code. */
static int parse_check(int argc, char **argv, struct check_opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "h", check_options, NULL)) != -1) {
		/* the list's; else --help, or an option check does not take */
		if (!list_opt(c, &o->list))
			return usage_out(check_usage, c == 'h');
	}
	if (!o->list.path || optind >= argc) {
		pr_err("check: %s",
		       !o->list.path ? "--headers FILE is required" : "give at least one NAME");
		return usage_out(check_usage, 0);
	}
	o->names = argv + optind;
	o->n_names = argc - optind;
	return -1;
}

static int do_check(const struct check_opts *o)
{
	struct hs_list l;
	struct hs_trie *t;
	int r = load_trie(o->list.path, &o->list.opts, &l, &t, NULL), matched = 0;

	if (r)
		return r;
	for (int i = 0; i < o->n_names; i++) {
		const char *name = o->names[i];
		enum hs_dir_set dirs[2];
		__u32 rule[2];
		int n = dir_rules(t, hs_trie_lookup(t, (const __u8 *)name, strlen(name)), rule,
				  dirs);

		matched |= n > 0;
		printf("%s:%s", name, n ? "" : " no match");
		for (int k = 0; k < n; k++) {
			const struct hs_name *nm = &l.names[rule[k] - 1];

			printf("%s match (id %u, %s, %s", k ? "," : "", rule[k],
			       hs_action_name(nm->action), hs_dir_set_name(dirs[k]));
			if (nm->builtin)
				printf(", built-in: keeps h2c upgrades out");
			else if (nm->prefix || strcasecmp(nm->orig, name))
				printf(", rule \"%s\"", nm->orig);
			putchar(')');
		}
		putchar('\n');
	}
	free(t);
	hs_list_free(&l);
	/* As grep: a script asks 'if hdrstrip check ... NAME'. */
	return matched ? EXIT_OK : EXIT_FAIL;
}

int cmd_check(int argc, char **argv)
{
	struct check_opts o = defaults_check;
	int rc = parse_check(argc, argv, &o);

	return rc >= 0 ? rc : do_check(&o);
}
