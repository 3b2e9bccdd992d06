// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* 'hdrstrip update': a new list (and settings) for an attached device. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "cli.h"
#include "compile.h"
#include "loader.h"
#include "opts.h"
#include "target.h"

static const char update_usage[] =
	"Usage: hdrstrip update DEV|--cgroup PATH --headers FILE [--ports LIST] [--on-error drop|pass]\n"
	"                       [--untracked scan|pass|drop] [--urgent clear|drop]\n"
	"\n"
	"Replace DEV's header list while attached. The new list is compiled first: a bad\n"
	"list changes nothing. It is written to the idle trie slot, then one map write\n"
	"switches every hook of DEV over; no packet sees half of two lists.\n";

/* What 'update' was asked for: its defaults, then the command line. */
struct update_opts {
	const char *dev; /* NULL: --cgroup */
	const char *cgroup;
	const char *headers;
	__u64 ports[HS_PORT_WORDS];
	int ports_given;
	int on_error; /* enum hs_policy, -1: keep */
	int untracked; /* enum hs_policy, -1: keep */
	int urgent; /* enum hs_urgent, -1: keep */
	struct hs_list_opts list;
};

static const struct update_opts defaults_update = {
	.on_error = -1,
	.untracked = -1,
	.urgent = -1,
	.list = { .fold_underscore = -1, .warn = list_warn },
};

static const struct option update_options[] = {
	OPTION_HEADERS,	  OPTION_PORTS,	 OPTION_ON_ERROR,
	OPTION_UNTRACKED, OPTION_URGENT, OPTION_CGROUP,
	OPTION_NOFOLD,	  OPTION_HELP,	 { 0 },
};

static const char *update_why_not(int opt)
{
	if (opt == OPT_HOOK || opt == OPT_XDP_MODE || opt == OPT_FLOWS)
		return "update changes the list and settings every hook of DEV shares; to change a "
		       "hook itself, detach it and attach it again";
	return "see --help";
}

static const struct dev_cmd update_cmd = {
	.name = "update",
	.usage = update_usage,
	.options = update_options,
	.why_not = update_why_not,
};

/* -1 with @o filled in, else the exit code. */
static int parse_update(int argc, char **argv, struct update_opts *o)
{
	const struct dev_cmd *c = &update_cmd;
	int opt, rc = -1;

	while (rc < 0 && (opt = opts_next(c, argc, argv, &rc)) > 0) {
		switch (opt) {
		case OPT_HEADERS:
			o->headers = optarg;
			break;
		case OPT_PORTS:
			rc = opt_ports(c, optarg, o->ports);
			o->ports_given = 1;
			break;
		case OPT_ON_ERROR:
			rc = opt_on_error(c, optarg, &o->on_error);
			break;
		case OPT_UNTRACKED:
			rc = opt_untracked(c, optarg, &o->untracked);
			break;
		case OPT_URGENT:
			rc = opt_urgent(c, optarg, &o->urgent);
			break;
		case OPT_CGROUP:
			o->cgroup = optarg;
			break;
		case OPT_NOFOLD:
			o->list.fold_underscore = 0;
			break;
		}
	}
	if (rc >= 0)
		return rc;
	rc = opts_target(c, argc, argv, !!o->cgroup, 0, &o->dev);
	if (rc >= 0)
		return rc;
	if (!o->headers) {
		pr_err("update: --headers FILE is required");
		return usage_out(update_usage, 0);
	}
	return -1;
}

static int do_update(const struct update_opts *o)
{
	struct apply_opts ap = {
		.list_path = o->headers,
		.ports = o->ports_given ? o->ports : NULL,
		.on_error = o->on_error,
		.untracked = o->untracked,
		.urgent = o->urgent,
		.qdisc_created = -1,
	};
	struct hs_config before;
	struct dev_state st;
	struct dev_maps m;
	struct dev_lock lk = { .fd = -1 };
	struct hs_list l = { 0 };
	struct hs_trie *t = NULL;
	struct dev d;
	int r, rc;

	if (require_root("update"))
		return EXIT_FAIL;
	/* Read the list first: a bad list changes nothing. apply_list()
	 * compiles it before any map write. */
	rc = load_list(o->headers, &o->list, &l);
	if (rc)
		return rc;
	t = trie_alloc();
	if (!t) {
		hs_list_free(&l);
		return EXIT_FAIL;
	}
	dev_maps_init(&m);
	rc = target_resolve(o->dev, o->cgroup, &d);
	if (rc >= 0)
		goto out;
	rc = EXIT_FAIL;
	if (target_lock(&d, &lk))
		goto out;
	r = dev_query(&d, &st);
	if (r || !dev_attached_hooks(&st)) {
		if (o->cgroup)
			pr_err("hdrstrip is not attached to cgroup '%s'; use 'hdrstrip attach --cgroup "
			       "%s --headers FILE'",
			       d.cgroup_path, d.cgroup_path);
		else
			pr_err("hdrstrip is not attached to '%s'; use 'hdrstrip attach %s --headers "
			       "FILE'",
			       d.name, d.name);
		goto out;
	}
	/* The maps of the attached hooks: no pin is needed. */
	r = dev_open_maps_from_kernel(&st, &m);
	if (r == -EXDEV) {
		split_err(&d, "update");
		goto out;
	}
	if (r || config_read(&m, &before)) {
		pr_err("cannot find the maps of hdrstrip's program on %s: %s (%d)", target_str(&d),
		       errstr(r ? r : -errno), r ? r : -errno);
		goto out;
	}
	r = apply_list(&d, &m, &l, t, &ap);
	if (r) {
		pr_err("cannot update the header list of %s: %s (%d); the previous list is still "
		       "in use",
		       target_str(&d), errstr(r), r);
		goto out;
	}
	/* Pins follow (a renamed interface's move to its name); without a
	 * bpffs the update is done all the same. */
	if (!bpffs_ensure(0))
		pins_sync(&d, &st, &m, &before);
	printf("updated '%s': %u names from %s (generation %u)\n", d.name, t->n_rules, o->headers,
	       t->generation);
	rc = EXIT_OK;
out:
	dev_maps_close(&m);
	dev_unlock(&lk);
	dev_close(&d);
	free(t);
	hs_list_free(&l);
	return rc;
}

int cmd_update(int argc, char **argv)
{
	struct update_opts o = defaults_update;
	int rc = parse_update(argc, argv, &o);

	return rc >= 0 ? rc : do_update(&o);
}
