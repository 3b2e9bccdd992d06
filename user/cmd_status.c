// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * 'hdrstrip status' and 'hdrstrip stats'. Both ask the kernel what is
 * attached (netlink) and read the maps of those programs, so they work from
 * any process and mount namespace, with or without pins.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <xdp/libxdp.h>

#include "apply.h"
#include "cli.h"
#include "hlist.h"
#include "loader.h"
#include "slots.h"

static const char status_usage[] =
	"Usage: hdrstrip status [DEV | --cgroup PATH] [--json]\n"
	"\n"
	"Show where hdrstrip is attached in this network namespace: hooks, modes, program\n"
	"ids, the list (names, path, last update), ports and policy.\n";

static const char stats_usage[] =
	"Usage: hdrstrip stats [DEV | --cgroup PATH] [--json] [--per-header]\n"
	"       hdrstrip stats [DEV] --prometheus\n"
	"       hdrstrip stats [DEV] --watch SECS [--count N] [--json] [--per-header]\n"
	"\n"
	"Show hdrstrip's counters (summed over CPUs) for DEV, or for every device.\n"
	"  --per-header   also the hits of each name in the list\n"
	"  --prometheus   every counter and per-header hit in Prometheus' text format\n"
	"                 (for node_exporter's textfile collector)\n"
	"  --watch SECS   show rates per second every SECS seconds until interrupted\n"
	"  --count N      with --watch: stop after N updates\n";

struct view_opts {
	const char *dev;
	const char *cgroup; /* proxy mode: --cgroup PATH */
	int json;
	int per_header;
	int prometheus;
	double watch; /* seconds between updates; 0: no --watch */
	long count; /* updates before --watch stops; 0: until interrupted */
};

static int parse_view(int argc, char **argv, struct view_opts *o, const char *usage, int stats)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "per-header", no_argument, NULL, 'p' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "watch", required_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'c' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "jh", lopts, NULL)) != -1) {
		if (!stats && (c == 'p' || c == 'P' || c == 'w' || c == 'c'))
			return usage_out(usage, 0);
		switch (c) {
		case 'j':
			o->json = 1;
			break;
		case 'g':
			o->cgroup = optarg;
			break;
		case 'p':
			o->per_header = 1;
			break;
		case 'P':
			o->prometheus = 1;
			break;
		case 'w':
			errno = 0;
			o->watch = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(o->watch) ||
			    o->watch < 0.1 || o->watch > 86400) {
				pr_err("stats: --watch takes seconds between updates, 0.1 to 86400, not '%s'",
				       optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
			errno = 0;
			o->count = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o->count < 1) {
				pr_err("stats: --count takes a number of updates (1 or more), not '%s'",
				       optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			return usage_out(usage, 1);
		default:
			return usage_out(usage, 0);
		}
	}
	if (argc - optind > 1) {
		pr_err("give at most one device");
		return usage_out(usage, 0);
	}
	if (o->prometheus && (o->json || o->watch > 0 || o->per_header)) {
		pr_err("stats: --prometheus prints every counter and per-header hit; it goes with no "
		       "--json, --per-header or --watch");
		return usage_out(usage, 0);
	}
	if (o->count && !(o->watch > 0)) {
		pr_err("stats: --count goes with --watch SECS");
		return usage_out(usage, 0);
	}
	o->dev = optind < argc ? argv[optind] : NULL;
	if (o->cgroup && o->dev) {
		pr_err("--cgroup PATH takes the place of DEV");
		return usage_out(usage, 0);
	}
	return -1;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* The name of the network namespace we are in, if /run/netns has one. */
static void netns_name(__u64 ino, char *buf, size_t size)
{
	DIR *dir = opendir("/run/netns");
	struct dirent *e;

	buf[0] = 0;
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		char path[300];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", e->d_name);
		if (!stat(path, &st) && st.st_ino == ino) {
			snprintf(buf, size, "%s", e->d_name);
			break;
		}
	}
	closedir(dir);
}

struct found {
	struct dev d;
	struct dev_state st;
	struct dev_maps m;
	struct hs_config cfg;
	int split; /* the hooks use different maps */
};

/* The maps of @f's hooks and their config; 0 or -errno. Hooks that use two
 * sets of maps are shown (the first hook's), and said to be split. */
static int found_maps(struct found *f)
{
	int r = dev_open_maps_from_kernel(&f->st, &f->m);

	f->split = r == -EXDEV;
	if (r && !f->split)
		return r;
	return config_read(&f->m, &f->cfg);
}

static int found_add(struct found **out, int *n, int *cap, const struct found *f)
{
	if (!*out || *n >= *cap) {
		struct found *nf = realloc(*out, (*cap = *cap ? *cap * 2 : 4) * sizeof(**out));

		if (!nf)
			return -ENOMEM;
		*out = nf;
	}
	(*out)[(*n)++] = *f;
	return 0;
}

/* Proxy-mode attachments, found from their pins (a cgroup belongs to no
 * network namespace, and has no list of its own to walk). */
static void find_cgroups(struct found **out, int *n, int *cap)
{
	DIR *dir = opendir(HS_PIN_ROOT);
	struct dirent *e;

	while (dir && (e = readdir(dir))) {
		unsigned long long id;
		struct found f = { 0 };
		char end;

		if (sscanf(e->d_name, "cgroup-%llu%c", &id, &end) != 1 ||
		    cgroup_resolve_id(id, &f.d))
			continue;
		if (dev_query(&f.d, &f.st) || !dev_attached_hooks(&f.st) || found_maps(&f) ||
		    found_add(out, n, cap, &f)) {
			dev_maps_close(&f.m);
			dev_close(&f.d);
		}
	}
	if (dir)
		closedir(dir);
}

/* Devices with hdrstrip attached: DEV alone, or every interface here (and,
 * @with_cgroups, every cgroup with pins). */
static int find_devices(const char *name, int cgroup, int with_cgroups, struct found **out, int *n)
{
	struct if_nameindex *ifs, *i;
	int cap = 0;

	*out = NULL;
	*n = 0;
	if (name) {
		struct found *f = calloc(1, sizeof(*f));
		int r;

		if (!f)
			return -ENOMEM;
		r = cgroup ? cgroup_resolve(name, &f->d) : dev_resolve(name, &f->d);
		if (r) {
			free(f);
			return r;
		}
		r = dev_query(&f->d, &f->st);
		if (r || !dev_attached_hooks(&f->st) || found_maps(f)) {
			dev_maps_close(&f->m);
			dev_close(&f->d);
			free(f);
			return r ? r : -ENOENT;
		}
		*out = f;
		*n = 1;
		return 0;
	}
	ifs = if_nameindex();
	if (!ifs)
		return -errno;
	for (i = ifs; i->if_index; i++) {
		struct found f = { 0 };

		if (dev_resolve(i->if_name, &f.d) || dev_query(&f.d, &f.st) ||
		    !dev_attached_hooks(&f.st))
			continue;
		if (found_maps(&f) || found_add(out, n, &cap, &f))
			dev_maps_close(&f.m);
	}
	if_freenameindex(ifs);
	if (with_cgroups)
		find_cgroups(out, n, &cap);
	return 0;
}

static void free_found(struct found *f, int n)
{
	for (int i = 0; i < n; i++) {
		dev_maps_close(&f[i].m);
		dev_close(&f[i].d);
	}
	free(f);
}

static int find_or_fail(const struct view_opts *o, struct found **f, int *n, const char *cmd,
			int with_cgroups)
{
	int r;

	if (require_root(cmd))
		return EXIT_FAIL;
	r = find_devices(o->cgroup ? o->cgroup : o->dev, o->cgroup != NULL, with_cgroups, f, n);
	if (o->cgroup && (r == -EMEDIUMTYPE || r == -ENOTDIR || (r == -ENOENT && !*n))) {
		if (r == -ENOENT && !access(o->cgroup, F_OK)) {
			pr_err("hdrstrip is not attached to cgroup '%s'", o->cgroup);
			return EXIT_FAIL;
		}
		if (r == -ENOENT)
			pr_err("no cgroup '%s'; if it was deleted while hdrstrip was attached, "
			       "'hdrstrip status' lists its pins as cgroup-ID, and 'hdrstrip detach "
			       "--cgroup-id ID' removes them",
			       o->cgroup);
		else
			pr_err("'%s' is not a cgroup v2 directory", o->cgroup);
		return EXIT_USAGE;
	}
	if (r == -ENODEV || r == -EINVAL) {
		pr_err("no interface '%s' in this network namespace; see 'ip link show'", o->dev);
		return EXIT_USAGE;
	}
	if (r == -ENOENT) {
		pr_err("hdrstrip is not attached to '%s'", o->dev);
		return EXIT_FAIL;
	}
	if (r) {
		pr_err("cannot query interfaces: %s (%d)", errstr(r), r);
		return EXIT_FAIL;
	}
	return -1;
}

static void format_time(__u64 ns, char *buf, size_t size)
{
	time_t t = ns / 1000000000ULL;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static const char *mode_name(enum xdp_attach_mode mode)
{
	switch (mode) {
	case XDP_MODE_SKB:
		return "skb";
	case XDP_MODE_HW:
		return "hw";
	case XDP_MODE_NATIVE:
	case XDP_MODE_UNSPEC:
		break;
	}
	return "native";
}

/* Are @f's maps pinned under its directory (in this mount namespace)? */
static int pinned_here(const struct found *f)
{
	char path[PATH_MAX + 16];
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", f->d.pin_dir, HS_MAP_CONFIG);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	r = map_id(fd) == map_id(f->m.config);
	close(fd);
	return r;
}

static void print_status(const struct found *f, int json, int last)
{
	char ports[512], when[40], ns[300];

	ports_format(f->cfg.ports, ports, sizeof(ports));
	format_time(f->cfg.updated_ns, when, sizeof(when));
	netns_name(f->d.netns_ino, ns, sizeof(ns));
	if (json) {
		int first = 1;

		printf("{\"dev\":");
		json_str(f->d.name);
		printf(",\"ifindex\":%d,\"netns\":%llu,\"netns_name\":", f->d.ifindex,
		       (unsigned long long)f->d.netns_ino);
		json_str(ns);
		if (f->d.cgroup) {
			printf(",\"cgroup\":");
			json_str(f->d.cgroup_path);
			printf(",\"cgroup_id\":%llu", (unsigned long long)f->d.cgroup_id);
		}
		printf(",\"hooks\":[");
		for (int h = 0; h < HS_HOOK_MAX; h++) {
			if (!f->st.prog_id[h])
				continue;
			printf("%s{\"hook\":\"%s\",\"prog_id\":%u", first ? "" : ",",
			       hs_hook_name(h), f->st.prog_id[h]);
			if (h == HS_HOOK_XDP)
				printf(",\"mode\":\"%s\",\"dispatcher\":%s",
				       mode_name(f->st.xdp_mode),
				       f->st.xdp_legacy ? "false" : "true");
			printf("}");
			first = 0;
		}
		printf("],\"names\":%u,\"list\":", f->cfg.n_names);
		json_str(f->cfg.list_path);
		printf(",\"updated\":\"%s\",\"generation\":%u,\"active_slot\":%u,\"ports\":\"%s\","
		       "\"on_error\":\"%s\",\"untracked\":\"%s\",\"urgent\":\"%s\",\"flows\":%u,"
		       "\"pin_dir\":",
		       when, f->cfg.generation, f->cfg.active_slot, ports,
		       hs_policy_name(f->cfg.on_error), hs_policy_name(f->cfg.untracked),
		       hs_urgent_name(f->cfg.urgent), f->cfg.flows);
		json_str(f->d.pin_dir);
		printf(",\"pinned\":%s", pinned_here(f) ? "true" : "false");
		if (f->split)
			printf(",\"split\":true");
		printf("}%s\n", last ? "" : ",");
		return;
	}
	if (f->d.cgroup)
		printf("%s: cgroup %s (proxy mode: sockops + sk_msg)\n", f->d.name,
		       f->d.cgroup_path);
	else
		printf("%s: ifindex %d, netns net:[%llu]%s%s%s\n", f->d.name, f->d.ifindex,
		       (unsigned long long)f->d.netns_ino, ns[0] ? " (" : "", ns, ns[0] ? ")" : "");
	for (int h = 0; h < HS_HOOK_MAX; h++) {
		if (!f->st.prog_id[h])
			continue;
		printf("  %-11s program %u", hs_hook_name(h), f->st.prog_id[h]);
		if (h == HS_HOOK_XDP)
			printf(", %s mode%s", mode_name(f->st.xdp_mode),
			       f->st.xdp_legacy ? ", without libxdp dispatcher" : "");
		printf("\n");
	}
	printf("  list        %u names from %s\n", f->cfg.n_names, f->cfg.list_path);
	printf("  updated     %s (generation %u, trie slot %u)\n", when, f->cfg.generation,
	       f->cfg.active_slot);
	printf("  ports       %s\n  on-error    %s\n  untracked   %s\n", ports,
	       hs_policy_name(f->cfg.on_error), hs_policy_name(f->cfg.untracked));
	if (!f->d.cgroup)
		printf("  urgent      %s\n", hs_urgent_name(f->cfg.urgent));
	if (f->cfg.flows)
		printf("  flows       %u connections per hook\n", f->cfg.flows);
	if (pinned_here(f))
		printf("  pins        %s\n", f->d.pin_dir);
	else
		printf("  pins        none in %s (made from another mount namespace or bpffs, or "
		       "before a rename: the next 'hdrstrip update' makes them)\n",
		       HS_PIN_ROOT);
	if (f->split)
		printf("  WARNING     the hooks use different maps (two lists at once): detach every "
		       "hook ('hdrstrip detach %s') and attach them again\n",
		       f->d.name);
}

/* Pins that no attachment here uses: a deleted cgroup's, a deleted or
 * renamed interface's, a killed command's. */
struct leftover {
	char name[64];
	char pin_dir[PATH_MAX];
	int cgroup, deleted, renamed;
	unsigned long long cgroup_id;
	char owner[IF_NAMESIZE]; /* renamed: the interface's name now */
	int n_pins;
};

static int listed(const struct found *f, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(f[i].d.name, name))
			return 1;
	return 0;
}

static int find_leftovers(const struct found *f, int n, struct leftover **out)
{
	DIR *dir = opendir(HS_PIN_ROOT);
	struct dirent *e;
	int k = 0, cap = 0;

	*out = NULL;
	while (dir && (e = readdir(dir))) {
		struct leftover lo = { 0 };
		struct dev_state st = { 0 };
		struct pins_info pi;
		struct dev d;
		int exists;

		if (e->d_name[0] == '.' || listed(f, n, e->d_name))
			continue;
		dev_by_name(e->d_name, &d);
		if (d.cgroup) {
			struct dev c;

			exists = !cgroup_resolve_id(d.cgroup_id, &c);
			if (exists) {
				dev_query(&c, &st);
				dev_close(&c);
			}
		} else {
			struct dev c;

			exists = !dev_resolve(e->d_name, &c);
			if (exists) {
				d = c;
				dev_query(&d, &st);
			}
		}
		if (pins_inspect(d.pin_dir, &d, &st, &pi) || pi.owner == PINS_NONE ||
		    pi.owner == PINS_OURS || pi.owner == PINS_ELSEWHERE)
			continue; /* another namespace's attachment, or nothing */
		snprintf(lo.name, sizeof(lo.name), "%.*s", (int)sizeof(lo.name) - 1, e->d_name);
		snprintf(lo.pin_dir, sizeof(lo.pin_dir), "%s", d.pin_dir);
		lo.cgroup = d.cgroup;
		lo.cgroup_id = d.cgroup_id;
		lo.deleted = !exists;
		lo.renamed = pi.owner == PINS_RENAMED;
		snprintf(lo.owner, sizeof(lo.owner), "%s", pi.owner_name);
		lo.n_pins = pi.n;
		if (k == cap) {
			struct leftover *nl =
				realloc(*out, (cap = cap ? cap * 2 : 4) * sizeof(**out));

			if (!nl)
				break;
			*out = nl;
		}
		(*out)[k++] = lo;
	}
	if (dir)
		closedir(dir);
	return k;
}

/* What removes them, for the message and the JSON. */
static void leftover_fix(const struct leftover *lo, char *buf, size_t size)
{
	if (lo->renamed)
		snprintf(buf, size, "hdrstrip update %s --headers FILE (moves them)", lo->owner);
	else if (lo->cgroup)
		snprintf(buf, size, "hdrstrip detach --cgroup-id %llu", lo->cgroup_id);
	else
		snprintf(buf, size, "hdrstrip detach %s", lo->name);
}

static void print_leftover(const struct leftover *lo, int json, int last)
{
	char fix[128];

	leftover_fix(lo, fix, sizeof(fix));
	if (json) {
		printf("{\"dev\":");
		json_str(lo->name);
		if (lo->cgroup)
			printf(",\"cgroup_id\":%llu", lo->cgroup_id);
		printf(",\"hooks\":[],\"pins_left\":%d,\"reason\":\"%s\",\"pin_dir\":", lo->n_pins,
		       lo->renamed   ? "renamed"
		       : lo->deleted ? (lo->cgroup ? "cgroup deleted" : "interface deleted")
				     : "not attached");
		json_str(lo->pin_dir);
		printf(",\"remove_with\":");
		json_str(fix);
		printf("}%s\n", last ? "" : ",");
		return;
	}
	if (lo->renamed)
		printf("%s: not an interface any more: renamed '%s', whose %d pins are still in %s; "
		       "'%s'\n",
		       lo->name, lo->owner, lo->n_pins, lo->pin_dir, fix);
	else if (lo->cgroup && lo->deleted)
		printf("%s: cgroup deleted while hdrstrip was attached: %d pins left in %s; '%s' "
		       "removes them\n",
		       lo->name, lo->n_pins, lo->pin_dir, fix);
	else
		printf("%s: %s; %d pins left in %s (an interrupted command's, or a deleted "
		       "interface's); '%s' removes them\n",
		       lo->name, lo->deleted ? "no such interface here" : "not attached",
		       lo->n_pins, lo->pin_dir, fix);
}

int cmd_status(int argc, char **argv)
{
	struct leftover *lo = NULL;
	struct view_opts o;
	struct found *f;
	int n, rc, k = 0, all;

	rc = parse_view(argc, argv, &o, status_usage, 0);
	if (rc >= 0)
		return rc;
	all = !(o.dev || o.cgroup);
	rc = find_or_fail(&o, &f, &n, "status", all);
	if (rc >= 0)
		return rc;
	if (all)
		k = find_leftovers(f, n, &lo);
	if (o.json && all)
		printf("[\n");
	for (int i = 0; i < n; i++)
		print_status(&f[i], o.json, !all || (i == n - 1 && !k));
	if (!n && !o.json)
		printf("hdrstrip is not attached to any interface in this network namespace\n");
	for (int i = 0; i < k; i++)
		print_leftover(&lo[i], o.json, i == k - 1);
	if (o.json && all)
		printf("]\n");
	free(lo);
	free_found(f, n);
	return EXIT_OK;
}

/* The names of the active list and the hits of each, in rule order. */
struct hits {
	__u32 n;
	hs_rule_name *names;
	__u64 *hits;
	__u8 *drop; /* the rule's action is drop */
};

static void hits_free(struct hits *h)
{
	free(h->names);
	free(h->hits);
	free(h->drop);
	memset(h, 0, sizeof(*h));
}

static int hits_load(const struct found *f, struct hits *h)
{
	struct hs_trie *t = malloc(sizeof(*t));
	int r = -ENOMEM;

	memset(h, 0, sizeof(*h));
	h->names = calloc(HS_MAX_NAMES, sizeof(*h->names));
	h->hits = calloc(HS_MAX_NAMES, sizeof(*h->hits));
	h->drop = calloc(HS_MAX_NAMES, sizeof(*h->drop));
	if (!t || !h->names || !h->hits || !h->drop)
		goto out;
	hs_prefault(t, sizeof(*t)); /* the kernel writes it whole */
	r = trie_read_slot(&f->m, f->cfg.active_slot & 1, t);
	if (!r)
		r = hs_trie_names(t, h->names);
	if (r)
		goto out;
	/* A slot that cannot be read shows 0 hits, as it always has. */
	for (__u32 i = 0; i < t->n_rules && i < HS_MAX_NAMES; i++) {
		hits_read(&f->m, t->rules[i].hit_slot, &h->hits[i]);
		h->drop[i] = t->rules[i].action == HS_ACT_DROP;
		h->n = i + 1;
	}
out:
	free(t);
	if (r)
		hits_free(h);
	return r;
}

/* Per-header hits of the active list: name -> count. */
static int print_hits(const struct found *f, int json)
{
	struct hits h;
	int r = hits_load(f, &h);

	if (r)
		return r;
	if (json)
		printf(",\"per_header\":{");
	for (__u32 i = 0; i < h.n; i++) {
		if (json) {
			printf("%s", i ? "," : "");
			json_str(h.names[i]);
			printf(":%llu", (unsigned long long)h.hits[i]);
		} else {
			printf("  %-40s %llu%s\n", h.names[i], (unsigned long long)h.hits[i],
			       h.drop[i] ? " (drop)" : "");
		}
	}
	if (json)
		printf("}");
	hits_free(&h);
	return 0;
}

/*
 * Prometheus' text exposition format. The counters are the device's, shared
 * by every hook attached to it, so each series is labelled by device (and
 * network namespace, when it has a name) only; which hooks are attached is
 * a separate hdrstrip_attached_info series per hook, to join on when
 * needed. A hooks label on the counters would start new series whenever a
 * hook comes or goes, and a series per hook would count every packet once
 * per hook.
 */

/* A label value: backslash, double quote and newline escaped. */
static void prom_value(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			printf("\\n");
		else
			putchar(*s);
	}
	putchar('"');
}

static void prom_family(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* '{dev="eth0"' (and ',netns="NAME"'): the caller closes the set. */
static void prom_dev_labels(const struct found *f)
{
	char ns[300];

	printf("{dev=");
	prom_value(f->d.name);
	netns_name(f->d.netns_ino, ns, sizeof(ns));
	if (ns[0]) {
		printf(",netns=");
		prom_value(ns);
	}
}

static int print_prometheus(const struct found *f, int n)
{
	struct hs_counters *c = calloc(n ? n : 1, sizeof(*c));
	struct hits *h = calloc(n ? n : 1, sizeof(*h));
	char name[96];
	int rc = EXIT_OK;

	if (!c || !h) {
		free(c);
		free(h);
		pr_err("out of memory");
		return EXIT_FAIL;
	}
	/* Read everything first: a family's samples must come together. */
	for (int i = 0; i < n; i++) {
		int r = counters_read(&f[i].m, &c[i]);

		if (!r)
			r = hits_load(&f[i], &h[i]);
		if (r) {
			pr_err("cannot read the counters of '%s': %s (%d)", f[i].d.name, errstr(r),
			       r);
			rc = EXIT_FAIL;
		}
	}
	if (rc)
		goto out;
	prom_family("hdrstrip_devices", "gauge",
		    "Interfaces with hdrstrip attached in this network namespace.");
	printf("hdrstrip_devices %d\n", n);
	prom_family("hdrstrip_attached_info", "gauge",
		    "1 for each hook hdrstrip is attached to; mode is native, skb or hw for XDP, "
		    "clsact for TC.");
	for (int i = 0; i < n; i++)
		for (int k = 0; k < HS_HOOK_MAX; k++) {
			if (!f[i].st.prog_id[k])
				continue;
			printf("hdrstrip_attached_info");
			prom_dev_labels(&f[i]);
			printf(",hook=\"%s\",mode=\"%s\"} 1\n", hs_hook_name(k),
			       k == HS_HOOK_XDP ? mode_name(f[i].st.xdp_mode) : "clsact");
		}
	prom_family("hdrstrip_list_names", "gauge", "Names in the device's active header list.");
	for (int i = 0; i < n; i++) {
		printf("hdrstrip_list_names");
		prom_dev_labels(&f[i]);
		printf("} %u\n", f[i].cfg.n_names);
	}
	prom_family("hdrstrip_list_generation", "gauge",
		    "Header list changes since the device's first attach.");
	for (int i = 0; i < n; i++) {
		printf("hdrstrip_list_generation");
		prom_dev_labels(&f[i]);
		printf("} %u\n", f[i].cfg.generation);
	}
	prom_family("hdrstrip_list_updated_timestamp_seconds", "gauge",
		    "Unix time of the device's last header list change.");
	for (int i = 0; i < n; i++) {
		printf("hdrstrip_list_updated_timestamp_seconds");
		prom_dev_labels(&f[i]);
		printf("} %llu\n", (unsigned long long)(f[i].cfg.updated_ns / 1000000000ULL));
	}
	for (size_t k = 0; k < HS_N_COUNTERS; k++) {
		snprintf(name, sizeof(name), "hdrstrip_%s_total", hs_counter_info[k].name);
		prom_family(name, "counter", hs_counter_info[k].help);
		for (int i = 0; i < n; i++) {
			printf("%s", name);
			prom_dev_labels(&f[i]);
			printf("} %llu\n", (unsigned long long)((const __u64 *)&c[i])[k]);
		}
	}
	prom_family(
		"hdrstrip_header_hits_total", "counter",
		"Header field lines that matched each name of the list (prefix rules end in *).");
	for (int i = 0; i < n; i++)
		for (__u32 k = 0; k < h[i].n; k++) {
			printf("hdrstrip_header_hits_total");
			prom_dev_labels(&f[i]);
			printf(",header=");
			prom_value(h[i].names[k]);
			printf("} %llu\n", (unsigned long long)h[i].hits[k]);
		}
out:
	for (int i = 0; i < n; i++)
		hits_free(&h[i]);
	free(h);
	free(c);
	return rc;
}

/*
 * --watch: rates per second between two readings, every interval, until
 * interrupted or --count updates have been shown.
 */
static volatile sig_atomic_t watch_stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

/* One reading of one device. */
struct sample {
	char dev[sizeof(((struct dev *)0)->name)]; /* an interface or "cgroup-<id>" */
	int ifindex;
	__u32 generation;
	char hooks[48];
	struct hs_counters c;
	struct hits h;
};

struct reading {
	struct sample *s;
	int n;
	double t; /* CLOCK_MONOTONIC seconds */
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void reading_free(struct reading *rd)
{
	for (int i = 0; i < rd->n; i++)
		hits_free(&rd->s[i].h);
	free(rd->s);
	memset(rd, 0, sizeof(*rd));
}

/* Read every device (or DEV): returns an exit code, or -1 on success. */
static int reading_take(const struct view_opts *o, struct reading *rd)
{
	struct found *f;
	int n, rc;

	memset(rd, 0, sizeof(*rd));
	rc = find_or_fail(o, &f, &n, "stats", 0);
	if (rc >= 0)
		return rc;
	rd->t = mono_now();
	rd->s = calloc(n ? n : 1, sizeof(*rd->s));
	if (!rd->s) {
		free_found(f, n);
		pr_err("out of memory");
		return EXIT_FAIL;
	}
	for (int i = 0; i < n; i++) {
		struct sample *s = &rd->s[rd->n];
		int r;

		snprintf(s->dev, sizeof(s->dev), "%s", f[i].d.name);
		s->ifindex = f[i].d.ifindex;
		s->generation = f[i].cfg.generation;
		for (int k = 0; k < HS_HOOK_MAX; k++)
			if (f[i].st.prog_id[k])
				snprintf(s->hooks + strlen(s->hooks),
					 sizeof(s->hooks) - strlen(s->hooks), "%s%s",
					 s->hooks[0] ? ", " : "", hs_hook_name(k));
		r = counters_read(&f[i].m, &s->c);
		if (!r && o->per_header)
			r = hits_load(&f[i], &s->h);
		if (r) {
			/* Detached between the query and the read: skip it. */
			hits_free(&s->h);
			continue;
		}
		rd->n++;
	}
	free_found(f, n);
	return -1;
}

static const struct sample *sample_find(const struct reading *rd, const struct sample *s)
{
	for (int i = 0; i < rd->n; i++)
		if (!strcmp(rd->s[i].dev, s->dev) && rd->s[i].ifindex == s->ifindex)
			return &rd->s[i];
	return NULL;
}

/* Hits of @name in @h before, or -1 if the name was not in the list. */
static long long hits_before(const struct hits *h, __u32 idx, const char *name)
{
	if (idx < h->n && !strcmp(h->names[idx], name))
		return (long long)h->hits[idx];
	for (__u32 i = 0; i < h->n; i++)
		if (!strcmp(h->names[i], name))
			return (long long)h->hits[i];
	return -1;
}

/* Counters went backwards: the device was detached and attached again. */
static int sample_reset(const struct sample *prev, const struct sample *cur)
{
	const __u64 *a = (const __u64 *)&prev->c, *b = (const __u64 *)&cur->c;

	for (size_t k = 0; k < HS_N_COUNTERS; k++)
		if (b[k] < a[k])
			return 1;
	return 0;
}

static void watch_json(const struct sample *cur, const struct sample *prev, double dt,
		       const char *when)
{
	const __u64 *v = (const __u64 *)&cur->c, *pv = prev ? (const __u64 *)&prev->c : NULL;
	int reset = !prev || sample_reset(prev, cur);

	printf("{\"time\":\"%s\",\"interval\":%.6f,\"dev\":", when, dt);
	json_str(cur->dev);
	for (size_t k = 0; k < HS_N_COUNTERS; k++)
		printf(",\"%s\":%llu", hs_counter_info[k].name, (unsigned long long)v[k]);
	printf(",\"reset\":%s,\"rates\":{", reset ? "true" : "false");
	for (size_t k = 0; k < HS_N_COUNTERS; k++)
		printf("%s\"%s\":%.3f", k ? "," : "", hs_counter_info[k].name,
		       reset ? 0.0 : (double)(v[k] - pv[k]) / dt);
	printf("}");
	if (cur->h.names) {
		printf(",\"per_header_rates\":{");
		for (__u32 i = 0; i < cur->h.n; i++) {
			long long before = reset ? -1 : hits_before(&prev->h, i, cur->h.names[i]);

			printf("%s", i ? "," : "");
			json_str(cur->h.names[i]);
			printf(":%.3f", before < 0 ? 0.0 : (double)(cur->h.hits[i] - before) / dt);
		}
		printf("}");
	}
	printf("}\n");
}

static void watch_text(const struct sample *cur, const struct sample *prev, double dt)
{
	const __u64 *v = (const __u64 *)&cur->c, *pv = prev ? (const __u64 *)&prev->c : NULL;
	int reset = !prev || sample_reset(prev, cur);
	__u32 quiet = 0;

	printf("%s (%s)%s\n", cur->dev, cur->hooks,
	       !prev   ? ": new, rates from the next update"
	       : reset ? ": counters were reset (attached again), rates from the next update"
		       : "");
	printf("  %-18s %20s %14s\n", "counter", "total", "per second");
	for (size_t k = 0; k < HS_N_COUNTERS; k++) {
		if (reset)
			printf("  %-18s %20llu %14s\n", hs_counter_info[k].name,
			       (unsigned long long)v[k], "-");
		else
			printf("  %-18s %20llu %14.1f\n", hs_counter_info[k].name,
			       (unsigned long long)v[k], (double)(v[k] - pv[k]) / dt);
	}
	if (!cur->h.names)
		return;
	printf("  %-38s %14s\n", "per header (names with hits)", "per second");
	for (__u32 i = 0; i < cur->h.n; i++) {
		long long before = reset ? -1 : hits_before(&prev->h, i, cur->h.names[i]);

		if (!cur->h.hits[i]) {
			quiet++;
			continue;
		}
		if (before < 0)
			printf("  %-38s %14s\n", cur->h.names[i], "-");
		else
			printf("  %-38s %14.1f\n", cur->h.names[i],
			       (double)(cur->h.hits[i] - before) / dt);
	}
	if (quiet)
		printf("  (%u names without hits)\n", quiet);
}

static int watch_stats(const struct view_opts *o)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct reading prev, cur;
	int tty = isatty(STDOUT_FILENO) && !o->json, rc;
	char when[40];

	rc = reading_take(o, &prev);
	if (rc >= 0)
		return rc;
	if (!prev.n && !(o->dev || o->cgroup)) {
		pr_err("hdrstrip is not attached to any interface in this network namespace");
		reading_free(&prev);
		return EXIT_FAIL;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (long upd = 0; !o->count || upd < o->count; upd++) {
		struct timespec ts;
		double until = prev.t + o->watch, left;

		/* Sleep in slices, so a signal stops us at once. */
		while (!watch_stop && (left = until - mono_now()) > 0) {
			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
		if (watch_stop)
			break;
		rc = reading_take(o, &cur);
		if (rc >= 0) {
			reading_free(&prev);
			return rc; /* DEV went away: the error is printed */
		}
		format_time((__u64)time(NULL) * 1000000000ULL, when, sizeof(when));
		if (tty)
			printf("\033[H\033[2J");
		if (!o->json)
			printf("hdrstrip stats, every %gs, %s%s\n", o->watch, when,
			       tty ? " (Ctrl-C to stop)" : "");
		for (int i = 0; i < cur.n; i++) {
			const struct sample *p = sample_find(&prev, &cur.s[i]);

			if (o->json)
				watch_json(&cur.s[i], p, cur.t - prev.t, when);
			else
				watch_text(&cur.s[i], p, cur.t - prev.t);
		}
		if (!cur.n && !o->json)
			printf("hdrstrip is not attached to any interface in this network namespace\n");
		fflush(stdout);
		reading_free(&prev);
		prev = cur;
	}
	reading_free(&prev);
	return EXIT_OK;
}

int cmd_stats(int argc, char **argv)
{
	struct view_opts o;
	struct found *f;
	int n, rc;

	rc = parse_view(argc, argv, &o, stats_usage, 1);
	if (rc >= 0)
		return rc;
	if (o.watch > 0)
		return watch_stats(&o);
	rc = find_or_fail(&o, &f, &n, "stats", 0);
	if (rc >= 0)
		return rc;
	if (o.prometheus) {
		/* No device is a valid answer here: hdrstrip_devices 0. */
		rc = print_prometheus(f, n);
		free_found(f, n);
		return rc;
	}
	if (!n && !o.json) {
		pr_err("hdrstrip is not attached to any interface in this network namespace");
		free_found(f, n);
		return EXIT_FAIL;
	}
	if (o.json && !(o.dev || o.cgroup))
		printf("[\n");
	for (int i = 0; i < n; i++) {
		struct hs_counters c = { 0 };
		const __u64 *v = (const __u64 *)&c;
		int r = counters_read(&f[i].m, &c);

		if (r) {
			pr_err("cannot read the counters of '%s': %s (%d)", f[i].d.name, errstr(r),
			       r);
			rc = EXIT_FAIL;
			continue;
		}
		if (o.json) {
			printf("{\"dev\":");
			json_str(f[i].d.name);
			for (size_t k = 0; k < HS_N_COUNTERS; k++)
				printf(",\"%s\":%llu", hs_counter_info[k].name,
				       (unsigned long long)v[k]);
			if (o.per_header && print_hits(&f[i], 1))
				rc = EXIT_FAIL;
			printf("}%s\n", (o.dev || o.cgroup) || i == n - 1 ? "" : ",");
			continue;
		}
		printf("%s:\n", f[i].d.name);
		for (size_t k = 0; k < HS_N_COUNTERS; k++)
			printf("  %-18s %llu\n", hs_counter_info[k].name, (unsigned long long)v[k]);
		if (o.per_header) {
			printf(" per header:\n");
			if (print_hits(&f[i], 0))
				rc = EXIT_FAIL;
		}
	}
	if (o.json && !(o.dev || o.cgroup))
		printf("]\n");
	free_found(f, n);
	return rc < 0 ? EXIT_OK : rc;
}
