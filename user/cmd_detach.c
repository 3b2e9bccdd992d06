// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* 'hdrstrip detach': hooks off, then what they leave (qdisc, pins). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "cli.h"
#include "loader.h"
#include "opts.h"
#include "target.h"

static const char detach_usage[] =
	"Usage: hdrstrip detach DEV [--hook xdp|tc-ingress|tc-egress]\n"
	"       hdrstrip detach --cgroup PATH\n"
	"       hdrstrip detach --cgroup-id ID\n"
	"\n"
	"Detach hdrstrip from DEV (every hook, or the one given) and, when no hook is left,\n"
	"remove its pins and any clsact qdisc hdrstrip created. With nothing attached, the\n"
	"pins an interrupted command left (and an interface's that was deleted) go.\n"
	"\n"
	"  --hook HOOK      only that hook of DEV: xdp, tc-ingress or tc-egress\n"
	"  --cgroup PATH    proxy mode: the cgroup v2 directory, instead of DEV\n"
	"  --cgroup-id ID   proxy mode: a cgroup by its id, also one that was deleted\n"
	"                   ('hdrstrip status' lists it as cgroup-ID): its pins go\n";

/* What 'detach' was asked for: its defaults, then the command line. */
struct detach_opts {
	const char *dev; /* NULL: --cgroup or --cgroup-id */
	const char *cgroup;
	const char *cgroup_id; /* a cgroup that may be gone */
	int hook; /* enum hs_hook, -1: every hook */
};

static const struct detach_opts defaults_detach = {
	.hook = -1,
};

static const struct option detach_options[] = {
	OPTION_HOOK, OPTION_CGROUP, OPTION_CGROUP_ID, OPTION_HELP, { 0 },
};

static const char *detach_why_not(int opt)
{
	(void)opt;
	return "detach takes DEV (and --hook), --cgroup PATH or --cgroup-id ID only";
}

static const struct dev_cmd detach_cmd = {
	.name = "detach",
	.usage = detach_usage,
	.options = detach_options,
	.why_not = detach_why_not,
};

/* -1 with @o filled in, else the exit code. */
static int parse_detach(int argc, char **argv, struct detach_opts *o)
{
	const struct dev_cmd *c = &detach_cmd;
	int opt, rc = -1;

	while (rc < 0 && (opt = opts_next(c, argc, argv, &rc)) > 0) {
		switch (opt) {
		case OPT_HOOK:
			rc = opt_hook(c, optarg, &o->hook);
			break;
		case OPT_CGROUP:
			o->cgroup = optarg;
			break;
		case OPT_CGROUP_ID:
			o->cgroup_id = optarg;
			break;
		}
	}
	if (rc >= 0)
		return rc;
	return opts_target(c, argc, argv, !!o->cgroup + !!o->cgroup_id, o->hook >= 0, &o->dev);
}

/*
 * Pins of a device that is gone (an interface deleted, a cgroup removed):
 * cleared when nothing attached uses them. A deleted cgroup's sockhash is
 * emptied first, so its connections go back to plain TCP at once.
 */
static int detach_gone(struct dev *d, const char *what)
{
	struct dev_lock lk = { .fd = -1 };
	struct pins_info pi;
	int r, rc = EXIT_FAIL;

	if (bpffs_ensure(0) || dev_lock(d, &lk))
		return what ? target_resolve_dev(what, d) : EXIT_FAIL;
	r = pins_inspect(d->pin_dir, d, NULL, &pi);
	if (r || pi.owner == PINS_NONE) {
		dev_unlock(&lk);
		if (what)
			return target_resolve_dev(what, d); /* the usual "no interface" */
		pr_err("no pins of %s in %s: nothing to detach", d->name, d->pin_dir);
		return EXIT_FAIL;
	}
	if (pi.owner == PINS_ELSEWHERE && pi.cfg.netns_ino == d->netns_ino) {
		pins_elsewhere_err(d, &pi, "detach");
		goto out;
	}
	if (pi.owner == PINS_ELSEWHERE) {
		pr_err("no interface '%s' in this network namespace, but %s is in use by an "
		       "attached program (another namespace's '%s'?): use 'hdrstrip -n NETNS detach %s'",
		       d->name, d->pin_dir, d->name, d->name);
		goto out;
	}
	if (pi.owner == PINS_RENAMED) {
		pins_clear_stale(d, NULL, &pi);
		pr_err("no interface '%s' in this network namespace: it was renamed '%s', which "
		       "hdrstrip is attached to (its pins are now in %s/%s); use 'hdrstrip detach %s'",
		       d->name, pi.owner_name, HS_PIN_ROOT, pi.owner_name, pi.owner_name);
		rc = EXIT_USAGE;
		goto out;
	}
	for (int k = 0; d->cgroup && k < 3; k++) {
		static const char *const maps[] = { HS_MAP_SOCKS, HS_MAP_SERVERS, HS_MAP_ORIGINS };
		const char *map = maps[k];
		char path[PATH_MAX + 32];
		int socks;

		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, map);
		socks = bpf_obj_get(path);
		if (socks >= 0) {
			r = proxy_release_socks(d, socks);
			close(socks);
			if (r < 0)
				pr_warn("cannot empty the sockhash '%s' of %s: %s (%d); its "
					"connections stay filtered until the kernel frees it",
					map, d->name, errstr(r), r);
			if (r > 0) {
				rc = EXIT_FAIL;
				goto out;
			}
		}
	}
	pins_remove(d);
	if (d->cgroup)
		printf("removed the pins of %s in %s (the cgroup was deleted)\n", d->name,
		       d->pin_dir);
	else
		printf("removed the stale pins of '%s' in %s (the interface no longer exists)\n",
		       d->name, d->pin_dir);
	rc = EXIT_OK;
out:
	dev_unlock(&lk);
	return rc;
}

/* detach --cgroup-id ID: the cgroup if it is there, else its pins. */
static int detach_cgroup_id(const char *arg, struct dev *d)
{
	unsigned long long id;
	char end;
	int r;

	if (sscanf(arg, "%llu%c", &id, &end) != 1 || !id) {
		pr_err("detach: bad --cgroup-id '%s' (a cgroup's id, as 'hdrstrip status' shows)",
		       arg);
		return EXIT_USAGE;
	}
	r = cgroup_resolve_id(id, d);
	if (!r)
		return -1; /* there: detach it as usual */
	dev_close(d);
	if (r != -ESTALE && r != -ENOENT) {
		pr_err("cannot look cgroup %llu up: %s (%d)", id, errstr(r), r);
		return EXIT_FAIL;
	}
	{
		char name[32];

		snprintf(name, sizeof(name), "cgroup-%llu", id);
		dev_by_name(name, d);
	}
	return detach_gone(d, NULL);
}

/* Nothing attached to @d: what a killed attach or detach left (any subset
 * of pins, the qdisc they say was made) is the work. */
static int detach_leftovers(const struct dev *d, const struct dev_state *st, int have_bpffs)
{
	struct pins_info pi;
	int r;

	/* A cgroup's last detach may have left connections filtered (their
	 * applications had not read what they received): they go first. */
	if (have_bpffs && d->cgroup) {
		r = proxy_release_pinned(d);
		if (r > 0) {
			pr_err("hdrstrip is not attached to %s, but its sockhashes still hold %d "
			       "connection%s whose application has not read what it received: "
			       "they stay filtered, with the pins in %s; run detach again later",
			       target_str(d), r, r == 1 ? "" : "s", d->pin_dir);
			return EXIT_FAIL;
		}
	}
	r = have_bpffs ? pins_clear_stale(d, st, &pi) : 0;

	if (r == -EBUSY) {
		pins_elsewhere_err(d, &pi, "detach");
	} else if (r > 0 && pi.owner == PINS_RENAMED) {
		pr_err("hdrstrip is not attached to '%s'; the pins in %s were those of '%s' "
		       "(renamed), now in %s/%s",
		       d->name, d->pin_dir, pi.owner_name, HS_PIN_ROOT, pi.owner_name);
	} else if (r > 0) {
		printf("hdrstrip is not attached to %s; removed the pins an interrupted "
		       "command left in %s\n",
		       target_str(d), d->pin_dir);
		return EXIT_OK;
	} else {
		pr_err("hdrstrip is not attached to %s", target_str(d));
	}
	return EXIT_FAIL;
}

/* --hook HOOK that is not attached: refused, naming those that are. */
static int detach_hook_attached(const struct dev *d, const struct dev_state *st, int hook)
{
	char list[64] = "";

	if (hook < 0 || st->prog_id[hook])
		return 0;
	for (int h = 0; h < HS_HOOK_MAX; h++)
		if (st->prog_id[h])
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 list[0] ? ", " : "", hs_hook_name(h));
	pr_err("%s on '%s' is not attached (attached: %s)", hs_hook_name(hook), d->name, list);
	return -1;
}

/* Once the hooks are off: the clsact qdisc hdrstrip made (no TC hook left,
 * no one's filter on it), then, with no hook left, the pins. */
static void detach_cleanup(const struct dev *d, const struct dev_state *st,
			   const struct dev_maps *m, struct hs_config *cfg, int have_bpffs)
{
	struct pins_info pi;
	int r;

	/* The qdisc before the pins that say it was made. */
	if (!d->cgroup && cfg->qdisc_created && !st->prog_id[HS_HOOK_TC_INGRESS] &&
	    !st->prog_id[HS_HOOK_TC_EGRESS]) {
		r = tc_qdisc_release(d);
		if (r)
			pr_warn("cannot remove the clsact qdisc hdrstrip created on '%s': %s (%d)",
				d->name, errstr(r), r);
		else if (m->config >= 0) {
			/* Said at once: a detach killed from here on leaves
			 * no qdisc for the next command to look for. */
			cfg->qdisc_created = 0;
			config_write(m, cfg);
		}
	}
	if (dev_attached_hooks(st) || !have_bpffs)
		return;
	/* The pins keep a cgroup's sockhashes, and the connections detach
	 * left filtered in them, until those are done. */
	if (d->cgroup && proxy_socks_left(d) > 0)
		return;
	/* Ours now stale: cleared like any other, and those under the
	 * interface's name before a rename too. */
	pins_clear_stale(d, st, &pi);
	pins_remove_renamed(d, m, cfg);
}

/* The device @o names, resolved: -1, or the exit code (a device that is gone
 * is dealt with here: its pins). */
static int detach_target(const struct detach_opts *o, struct dev *d)
{
	if (o->cgroup_id)
		return detach_cgroup_id(o->cgroup_id, d);
	if (!o->cgroup && dev_resolve(o->dev, d) == -ENODEV) {
		dev_by_name(o->dev, d);
		return detach_gone(d, o->dev);
	}
	return target_resolve(o->dev, o->cgroup, d);
}

static int do_detach(const struct detach_opts *o)
{
	struct dev_state st;
	struct dev_maps m;
	struct hs_config cfg = { 0 };
	struct dev_lock lk = { .fd = -1 };
	struct dev d;
	int r, rc, failed = 0, have_bpffs;

	if (require_root("detach"))
		return EXIT_FAIL;
	rc = detach_target(o, &d);
	if (rc >= 0)
		return rc;
	dev_maps_init(&m);
	rc = EXIT_FAIL;
	if (target_lock(&d, &lk))
		goto out;
	/* Hooks come off whether or not a bpffs can be had: pins are only
	 * their copy for bpftool. */
	have_bpffs = !bpffs_ensure(0);
	if (!have_bpffs)
		pr_info("bpffs is not available: no pins to remove");
	r = dev_query(&d, &st);
	if (r) {
		pr_err("cannot query the hooks of %s: %s (%d)", target_str(&d), errstr(r), r);
		goto out;
	}
	pins_choose(&d, &st);
	if (!dev_attached_hooks(&st)) {
		rc = detach_leftovers(&d, &st, have_bpffs);
		goto out;
	}
	if (detach_hook_attached(&d, &st, o->hook))
		goto out;
	/* Two sets of maps (-EXDEV) are no reason to keep the hooks. */
	r = dev_open_maps_from_kernel(&st, &m);
	if (!r || r == -EXDEV)
		config_read(&m, &cfg);
	for (int h = 0; h < HS_HOOK_MAX; h++) {
		if (!st.prog_id[h] || (o->hook >= 0 && h != o->hook))
			continue;
		r = hook_detach(&d, h, &st);
		if (r) {
			pr_err("cannot detach %s from %s: %s (%d)", hs_hook_name(h), target_str(&d),
			       errstr(r), r);
			failed = 1;
			continue;
		}
		printf("detached %s from '%s'\n", hs_hook_name(h), d.name);
	}
	r = dev_query(&d, &st);
	if (r) {
		pr_err("cannot query the hooks of %s: %s (%d)", target_str(&d), errstr(r), r);
		failed = 1;
	} else {
		detach_cleanup(&d, &st, &m, &cfg, have_bpffs);
	}
	rc = failed ? EXIT_FAIL : EXIT_OK;
out:
	dev_maps_close(&m);
	dev_unlock(&lk);
	dev_close(&d);
	return rc;
}

int cmd_detach(int argc, char **argv)
{
	struct detach_opts o = defaults_detach;
	int rc = parse_detach(argc, argv, &o);

	return rc >= 0 ? rc : do_detach(&o);
}
