// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What attach, update and detach act on, found and named (see target.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "target.h"

/* Resolve a cgroup directory, printing the error. */
static int resolve_cgroup(const char *path, struct dev *d)
{
	int r = cgroup_resolve(path, d);

	if (r == -EMEDIUMTYPE) {
		pr_err("'%s' is not a cgroup v2 directory; the cgroup2 hierarchy is where /proc/mounts "
		       "shows type cgroup2 (e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified)",
		       path);
		return EXIT_USAGE;
	}
	if (r) {
		pr_err("cannot open cgroup '%s': %s", path, strerror(-r));
		return r == -ENOENT || r == -ENOTDIR ? EXIT_USAGE : EXIT_FAIL;
	}
	return -1;
}

int target_resolve_dev(const char *name, struct dev *d)
{
	int r = dev_resolve(name, d);

	if (r == -EINVAL) {
		pr_err("'%s' is not a valid interface name", name);
		return EXIT_USAGE;
	}
	if (r) {
		struct stat st;
		unsigned long long ino = stat("/proc/self/ns/net", &st) ? 0 : st.st_ino;

		if (g_opts.netns)
			pr_err("no interface '%s' in network namespace '%s'; see 'ip -n %s link show'",
			       name, g_opts.netns, g_opts.netns);
		else
			pr_err("no interface '%s' in this network namespace (net:[%llu]); see 'ip link "
			       "show', or use 'hdrstrip -n NETNS ...' for one in another namespace",
			       name, ino);
		return EXIT_USAGE;
	}
	return -1;
}

static void netns_str(__u64 ino, char *buf, size_t size)
{
	snprintf(buf, size, "net:[%llu]", (unsigned long long)ino);
}

void pins_elsewhere_err(const struct dev *d, const struct pins_info *pi, const char *cmd)
{
	char a[40], b[40];

	netns_str(pi->cfg.netns_ino, a, sizeof(a));
	netns_str(d->netns_ino, b, sizeof(b));
	if (pi->cfg.netns_ino == d->netns_ino) {
		/* Ours once, gone from here with its program: moved. */
		pr_err("%s: %s belongs to '%s' (ifindex %u), which left this network namespace "
		       "with hdrstrip attached (moved to another one?): detach it there "
		       "(hdrstrip -n NETNS detach DEV), or remove %s",
		       cmd, d->pin_dir, pi->cfg.ifname, pi->cfg.ifindex, d->pin_dir);
		return;
	}
	pr_err("%s: %s belongs to '%s' (ifindex %u) in network namespace %s, where hdrstrip is "
	       "attached; this '%s' is ifindex %d in %s. Pins are named by interface, so the two "
	       "would share maps: detach the other one first (hdrstrip -n NETNS detach %s), or "
	       "rename one interface",
	       cmd, d->pin_dir, pi->cfg.ifname, pi->cfg.ifindex, a, d->name, d->ifindex, b,
	       pi->cfg.ifname);
}

/* Two sets of maps: an older hdrstrip's, or a hook attached by hand. */
void split_err(const struct dev *d, const char *cmd)
{
	pr_err("%s: the hooks of '%s' use different maps (two lists at once): detach every hook "
	       "('hdrstrip detach %s') and attach them again",
	       cmd, d->name, d->name);
}

int target_resolve(const char *dev, const char *cgroup, struct dev *d)
{
	return cgroup ? resolve_cgroup(cgroup, d) : target_resolve_dev(dev, d);
}

const char *target_word(const struct dev *d)
{
	return d->cgroup ? "cgroup" : "interface";
}

const char *target_str(const struct dev *d)
{
	static char buf[PATH_MAX + 16];

	if (d->cgroup && d->cgroup_path[0])
		snprintf(buf, sizeof(buf), "cgroup '%s'", d->cgroup_path);
	else
		snprintf(buf, sizeof(buf), "'%s'", d->name);
	return buf;
}

void mode_note(const struct dev *d, int before, int now)
{
	if (now)
		printf("OBSERVE MODE on %s: matches and policy drops are counted and reported "
		       "('hdrstrip events'), nothing is masked, removed or dropped; 'hdrstrip update "
		       "%s --enforce' makes them act\n",
		       target_str(d), d->cgroup ? "--cgroup PATH" : d->name);
	else if (before)
		printf("enforce mode on %s: the rules and policies act again\n", target_str(d));
}

int target_lock(const struct dev *d, struct dev_lock *lk)
{
	int r = dev_lock(d, lk);

	if (!r)
		return 0;
	pr_err("cannot lock %s %s: %s (%d)", target_word(d), target_str(d), errstr(r), r);
	return -1;
}

int list_run_begin(const char *cmd, const struct list_settings *s, const char *dev,
		   struct list_run *run)
{
	int rc;

	memset(run, 0, sizeof(*run));
	run->d.cgroup_fd = -1;
	run->lk.fd = -1;
	dev_maps_init(&run->m);
	if (require_root(cmd))
		return EXIT_FAIL;
	rc = load_list(s->headers, &s->list, &run->l);
	if (rc)
		return rc;
	run->t = trie_alloc();
	if (!run->t)
		return EXIT_FAIL;
	rc = target_resolve(dev, s->cgroup, &run->d);
	if (rc >= 0)
		return rc;
	return target_lock(&run->d, &run->lk) ? EXIT_FAIL : -1;
}

void list_run_end(struct list_run *run)
{
	dev_maps_close(&run->m);
	dev_unlock(&run->lk);
	dev_close(&run->d);
	free(run->t);
	hs_list_free(&run->l);
}
