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
	"Usage: hdrstrip update DEV|--cgroup PATH --headers FILE [--ports LIST]\n"
	"                       [--on-error drop|reject|pass]\n"
	"                       [--untracked scan|pass|drop] [--urgent clear|drop] [--event-rate N]\n"
	"                       [--observe | --enforce] [--no-fold-underscore] [--nat lookup|off]\n"
	"                       [--vxlan-ports LIST] [--geneve-ports LIST] [--udp-tunnel-ports LIST]\n"
	"\n"
	"Replace DEV's header list while attached. The new list is compiled first: a bad\n"
	"list changes nothing. It is written to the idle trie slot, then one map write\n"
	"switches every hook of DEV over; no packet sees half of two lists. A setting not\n"
	"given keeps its value; those given change with the list, in the same write.\n"
	"\n"
	"  --headers FILE        the new header list (see hdrstrip(8) for the format)\n"
	"  --cgroup PATH         proxy mode: the cgroup v2 directory attached, instead of DEV\n"
	"  --ports LIST          TCP ports to inspect: 80,8080,9000-9010\n"
	"  --on-error POLICY     a request that cannot be fully inspected: drop, reject or pass\n"
	"  --untracked POLICY    segments of connections without state: scan, pass or drop\n"
	"  --urgent POLICY       segments with urgent data: clear or drop\n"
	"  --event-rate N        match events a second at most (0: none)\n"
	"  --observe             observe mode: count and report, change and drop nothing\n"
	"  --enforce             the rules and policies act again\n"
	"  --no-fold-underscore  '_' and '-' are different bytes (overrides the list)\n"
	"  --nat MODE            lookup (conntrack says where a segment to a port not\n"
	"                        inspected really goes) or off\n"
	"  --vxlan-ports LIST    UDP ports whose VXLAN packets are read inside (none: no port)\n"
	"  --geneve-ports LIST   the same for GENEVE\n"
	"  --udp-tunnel-ports LIST  UDP ports of another tunnel: sent to the --on-error policy\n";

/* What 'update' was asked for: its defaults, then the command line. */
struct update_opts {
	const char *dev; /* NULL: --cgroup */
	struct list_settings set;
};

static const struct update_opts defaults_update = {
	.set = LIST_SETTINGS_DEFAULTS,
};

static const struct option update_options[] = {
	OPTION_HEADERS,	     OPTION_PORTS,
	OPTION_ON_ERROR,     OPTION_UNTRACKED,
	OPTION_URGENT,	     OPTION_CGROUP,
	OPTION_NOFOLD,	     OPTION_EVENT_RATE,
	OPTION_OBSERVE,	     OPTION_ENFORCE,
	OPTION_NAT,	     OPTION_VXLAN_PORTS,
	OPTION_GENEVE_PORTS, OPTION_UDP_TUNNEL_PORTS,
	OPTION_HELP,	     { 0 },
};

static const char *update_why_not(int opt)
{
	if (opt == OPT_HOOK || opt == OPT_XDP_MODE || opt == OPT_FLOWS)
		return "update changes the list and settings every hook of DEV shares; to change a "
		       "hook itself, detach it and attach it again";
	if (opt == OPT_RECEIVE)
		return "a cgroup keeps the mode it was attached in; to change it, detach and attach "
		       "again";
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

	while (rc < 0 && (opt = opts_next(c, argc, argv, &rc)) > 0)
		rc = opt_settings(c, opt, &o->set);
	if (rc >= 0)
		return rc;
	rc = opts_target(c, argc, argv, !!o->set.cgroup, 0, &o->dev);
	if (rc >= 0)
		return rc;
	if (!o->set.headers) {
		pr_err("update: --headers FILE is required");
		return usage_out(update_usage, 0);
	}
	return -1;
}

static int do_update(const struct update_opts *o)
{
	struct apply_opts ap;
	struct hs_config before;
	struct dev_state st;
	struct list_run run;
	struct dev *d = &run.d;
	struct dev_maps *m = &run.m;
	int r, rc, builtin;

	rc = list_run_begin("update", &o->set, o->dev, &run);
	if (rc >= 0)
		goto out;
	rc = EXIT_FAIL;
	r = dev_query(d, &st);
	if (!r)
		pins_choose(d, &st);
	if (r || !dev_attached_hooks(&st)) {
		if (o->set.cgroup)
			pr_err("hdrstrip is not attached to cgroup '%s'; use 'hdrstrip attach --cgroup "
			       "%s --headers FILE'",
			       d->cgroup_path, d->cgroup_path);
		else
			pr_err("hdrstrip is not attached to '%s'; use 'hdrstrip attach %s --headers "
			       "FILE'",
			       d->name, d->name);
		goto out;
	}
	/* The maps of the attached hooks: no pin is needed. */
	r = dev_open_maps_from_kernel(&st, m);
	if (r == -EXDEV) {
		split_err(d, "update");
		goto out;
	}
	if (r || config_read(m, &before)) {
		pr_err("cannot find the maps of hdrstrip's program on %s: %s (%d)", target_str(d),
		       errstr(r ? r : -errno), r ? r : -errno);
		goto out;
	}
	settings_apply_opts(&o->set, &ap);
	r = apply_list(d, m, &run.l, run.t, &ap);
	if (r) {
		pr_err("cannot update the header list of %s: %s (%d); the previous list is still "
		       "in use",
		       target_str(d), errstr(r), r);
		goto out;
	}
	/* Pins follow (a renamed interface's move to its name); without a
	 * bpffs the update is done all the same. */
	if (!bpffs_ensure(0))
		pins_sync(d, &st, m, &before);
	builtin = hs_list_builtin(&run.l);
	printf("updated '%s': %u names from %s%s (generation %u)\n", d->name,
	       run.t->n_rules - builtin, o->set.headers, builtin ? HS_BUILTIN_NOTE : "",
	       run.t->generation);
	mode_note(d, before.observe, o->set.observe >= 0 ? o->set.observe : before.observe);
	rc = EXIT_OK;
out:
	list_run_end(&run);
	return rc;
}

int cmd_update(int argc, char **argv)
{
	struct update_opts o = defaults_update;
	int rc = parse_update(argc, argv, &o);

	return rc >= 0 ? rc : do_update(&o);
}
