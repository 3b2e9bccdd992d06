// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * 'hdrstrip status' and 'hdrstrip stats'. Both ask the kernel what is
 * attached (netlink) and read the maps of those programs, so they work from
 * any process and mount namespace, with or without pins.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include "apply.h"
#include "cli.h"
#include "loader.h"
#include "slots.h"

static const char status_usage[] =
	"Usage: hdrstrip status [DEV] [--json]\n"
	"\n"
	"Show where hdrstrip is attached in this network namespace: hooks, modes, program\n"
	"ids, the list (names, path, last update), ports and policy.\n";

static const char stats_usage[] =
	"Usage: hdrstrip stats [DEV] [--json] [--per-header]\n"
	"\n"
	"Show hdrstrip's counters (summed over CPUs) for DEV, or for every device.\n"
	"  --per-header   also the hits of each name in the list\n";

static const char *const counter_names[] = { HS_COUNTER_NAMES };
_Static_assert(HS_ARRAY_SIZE(counter_names) == HS_N_COUNTERS, "a name for every counter");

struct view_opts {
	const char *dev;
	int json;
	int per_header;
};

static int parse_view(int argc, char **argv, struct view_opts *o, const char *usage, int stats)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "per-header", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "jh", lopts, NULL)) != -1) {
		switch (c) {
		case 'j': o->json = 1; break;
		case 'p':
			if (!stats)
				return usage_out(usage, 0);
			o->per_header = 1;
			break;
		case 'h': return usage_out(usage, 1);
		default: return usage_out(usage, 0);
		}
	}
	if (argc - optind > 1) {
		pr_err("give at most one device");
		return usage_out(usage, 0);
	}
	o->dev = optind < argc ? argv[optind] : NULL;
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
};

/* Devices with hdrstrip attached: DEV alone, or every interface here. */
static int find_devices(const char *name, struct found **out, int *n)
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
		r = dev_resolve(name, &f->d);
		if (r) {
			free(f);
			return r;
		}
		r = dev_query(&f->d, &f->st);
		if (r || !dev_attached_hooks(&f->st) || dev_open_maps_from_kernel(&f->st, &f->m) ||
		    config_read(&f->m, &f->cfg)) {
			dev_maps_close(&f->m);
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
		if (dev_open_maps_from_kernel(&f.st, &f.m) || config_read(&f.m, &f.cfg)) {
			dev_maps_close(&f.m);
			continue;
		}
		if (*n == cap) {
			struct found *nf = realloc(*out, (cap = cap ? cap * 2 : 4) * sizeof(**out));

			if (!nf) {
				dev_maps_close(&f.m);
				break;
			}
			*out = nf;
		}
		(*out)[(*n)++] = f;
	}
	if_freenameindex(ifs);
	return 0;
}

static void free_found(struct found *f, int n)
{
	for (int i = 0; i < n; i++)
		dev_maps_close(&f[i].m);
	free(f);
}

static int find_or_fail(const struct view_opts *o, struct found **f, int *n, const char *cmd)
{
	int r;

	if (require_root(cmd))
		return EXIT_FAIL;
	r = find_devices(o->dev, f, n);
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

static const char *mode_name(int mode)
{
	return mode == XDP_MODE_SKB ? "skb" : mode == XDP_MODE_HW ? "hw" : "native";
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
		printf(",\"hooks\":[");
		for (int h = 0; h < HOOK_MAX; h++) {
			if (!f->st.prog_id[h])
				continue;
			printf("%s{\"hook\":\"%s\",\"prog_id\":%u", first ? "" : ",", hook_names[h],
			       f->st.prog_id[h]);
			if (h == HOOK_XDP)
				printf(",\"mode\":\"%s\",\"dispatcher\":%s", mode_name(f->st.xdp_mode),
				       f->st.xdp_legacy ? "false" : "true");
			printf("}");
			first = 0;
		}
		printf("],\"names\":%u,\"list\":", f->cfg.n_names);
		json_str(f->cfg.list_path);
		printf(",\"updated\":\"%s\",\"generation\":%u,\"active_slot\":%u,\"ports\":\"%s\","
		       "\"on_error\":\"%s\",\"pin_dir\":",
		       when, f->cfg.generation, f->cfg.active_slot, ports,
		       f->cfg.on_error == HS_POLICY_PASS ? "pass" : "drop");
		json_str(f->d.pin_dir);
		printf("}%s\n", last ? "" : ",");
		return;
	}
	printf("%s: ifindex %d, netns net:[%llu]%s%s%s\n", f->d.name, f->d.ifindex,
	       (unsigned long long)f->d.netns_ino, ns[0] ? " (" : "", ns, ns[0] ? ")" : "");
	for (int h = 0; h < HOOK_MAX; h++) {
		if (!f->st.prog_id[h])
			continue;
		printf("  %-11s program %u", hook_names[h], f->st.prog_id[h]);
		if (h == HOOK_XDP)
			printf(", %s mode%s", mode_name(f->st.xdp_mode),
			       f->st.xdp_legacy ? ", without libxdp dispatcher" : "");
		printf("\n");
	}
	printf("  list        %u names from %s\n", f->cfg.n_names, f->cfg.list_path);
	printf("  updated     %s (generation %u, trie slot %u)\n", when, f->cfg.generation,
	       f->cfg.active_slot);
	printf("  ports       %s\n  on-error    %s\n  pins        %s\n", ports,
	       f->cfg.on_error == HS_POLICY_PASS ? "pass" : "drop", f->d.pin_dir);
}

int cmd_status(int argc, char **argv)
{
	struct view_opts o;
	struct found *f;
	int n, rc;

	rc = parse_view(argc, argv, &o, status_usage, 0);
	if (rc >= 0)
		return rc;
	rc = find_or_fail(&o, &f, &n, "status");
	if (rc >= 0)
		return rc;
	if (o.json && !o.dev)
		printf("[\n");
	for (int i = 0; i < n; i++)
		print_status(&f[i], o.json, o.dev || i == n - 1);
	if (o.json && !o.dev)
		printf("]\n");
	else if (!n && !o.json)
		printf("hdrstrip is not attached to any interface in this network namespace\n");
	free_found(f, n);
	return EXIT_OK;
}

/* Per-header hits of the active list: name -> count. */
static int print_hits(const struct found *f, int json)
{
	struct hs_trie *t = malloc(sizeof(*t));
	hs_rule_name *names = calloc(HS_MAX_NAMES, sizeof(*names));
	int r = -ENOMEM;

	if (!t || !names)
		goto out;
	r = trie_read_slot(&f->m, f->cfg.active_slot & 1, t);
	if (!r)
		r = hs_trie_names(t, names);
	if (r)
		goto out;
	if (json)
		printf(",\"per_header\":{");
	for (__u32 i = 0; i < t->n_rules; i++) {
		__u64 hits = 0;

		hits_read(&f->m, t->rules[i].hit_slot, &hits);
		if (json) {
			printf("%s", i ? "," : "");
			json_str(names[i]);
			printf(":%llu", (unsigned long long)hits);
		} else {
			printf("  %-40s %llu%s\n", names[i], (unsigned long long)hits,
			       t->rules[i].action == HS_ACT_DROP ? " (drop)" : "");
		}
	}
	if (json)
		printf("}");
out:
	free(t);
	free(names);
	return r;
}

int cmd_stats(int argc, char **argv)
{
	struct view_opts o;
	struct found *f;
	int n, rc;

	rc = parse_view(argc, argv, &o, stats_usage, 1);
	if (rc >= 0)
		return rc;
	rc = find_or_fail(&o, &f, &n, "stats");
	if (rc >= 0)
		return rc;
	if (!n && !o.json) {
		pr_err("hdrstrip is not attached to any interface in this network namespace");
		free_found(f, n);
		return EXIT_FAIL;
	}
	if (o.json && !o.dev)
		printf("[\n");
	for (int i = 0; i < n; i++) {
		struct hs_counters c;
		const __u64 *v = (const __u64 *)&c;
		int r = counters_read(&f[i].m, &c);

		if (r) {
			pr_err("cannot read the counters of '%s': %s (%d)", f[i].d.name, errstr(r), r);
			rc = EXIT_FAIL;
			continue;
		}
		if (o.json) {
			printf("{\"dev\":");
			json_str(f[i].d.name);
			for (size_t k = 0; k < HS_N_COUNTERS; k++)
				printf(",\"%s\":%llu", counter_names[k], (unsigned long long)v[k]);
			if (o.per_header && print_hits(&f[i], 1))
				rc = EXIT_FAIL;
			printf("}%s\n", o.dev || i == n - 1 ? "" : ",");
			continue;
		}
		printf("%s:\n", f[i].d.name);
		for (size_t k = 0; k < HS_N_COUNTERS; k++)
			printf("  %-18s %llu\n", counter_names[k], (unsigned long long)v[k]);
		if (o.per_header) {
			printf(" per header:\n");
			if (print_hits(&f[i], 0))
				rc = EXIT_FAIL;
		}
	}
	if (o.json && !o.dev)
		printf("]\n");
	free_found(f, n);
	return rc < 0 ? EXIT_OK : rc;
}
