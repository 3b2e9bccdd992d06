// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * 'hdrstrip status': where hdrstrip is attached (the kernel's answer, see
 * view.h), and the pins no attachment here uses.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/netfilter.h>

#include "apply.h"
#include "cli.h"
#include "view.h"

static const char status_usage[] =
	"Usage: hdrstrip status [DEV | --cgroup PATH] [--json]\n"
	"\n"
	"Show where hdrstrip is attached in this network namespace: hooks, modes, program\n"
	"ids, the list (names, path, last update), ports and policy.\n"
	"  --json          a JSON array, one object a device (fields in hdrstrip(8))\n"
	"  --cgroup PATH   proxy mode: the cgroup v2 directory, instead of DEV\n";

/* What 'status' was asked for: its defaults, then the command line. */
struct status_opts {
	struct view_target target;
	int json;
};

/* Every device, as text. */
static const struct status_opts defaults_status = {
	.target = { .dev = NULL, .cgroup = NULL },
	.json = 0,
};

/* stats' options are in this table too (in stats' order, which getopt's
 * messages about abbreviations follow), so that status refuses them by
 * name, with their values, rather than as unknown. */
static const struct option status_options[] = {
	OPTION_JSON, OPTION_PER_HEADER, OPTION_PROMETHEUS, OPTION_WATCH, OPTION_COUNT,
	OPTION_ALL,  OPTION_CGROUP,	OPTION_HELP,	   { 0 },
};

/* -1 with @o filled in, else the exit code. */
static int parse_status(int argc, char **argv, struct status_opts *o)
{
	int c, idx = 0;

	while ((c = getopt_long(argc, argv, "jh", status_options, &idx)) != -1) {
		switch (c) {
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_PER_HEADER:
		case OPT_PROMETHEUS:
		case OPT_WATCH:
		case OPT_COUNT:
		case OPT_ALL:
			pr_err("status: --%s does not apply (see --help)",
			       status_options[idx].name);
			return usage_out(status_usage, 0);
		case OPT_CGROUP:
			o->target.cgroup = optarg;
			break;
		default: /* --help, or an option no command takes */
			return usage_out(status_usage, c == 'h');
		}
	}
	return view_operand(status_usage, argc, argv, &o->target);
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

/* The connection tables, as the kernel sized them (see struct found). */
static void print_flows(const struct found *f)
{
	int first = 1, same = 1;

	for (int h = 0; h < HS_HOOK_MAX; h++)
		if (f->flows[h] && f->flows[h] != found_flows(f))
			same = 0;
	if (!found_flows(f))
		return;
	if (f->d.cgroup && f->st.prog_id[HS_HOOK_RECEIVE]) {
		printf("  flows       %u connections accepted at once (the sockhashes origins and "
		       "servers; origin mode has no flow table)\n",
		       found_flows(f));
		return;
	}
	if (f->d.cgroup) {
		printf("  flows       %u connections at once, out and as many in (the sockhashes "
		       "socks and servers; proxy mode has no flow table)\n",
		       found_flows(f));
		return;
	}
	if (same) {
		printf("  flows       %u connections per hook\n", found_flows(f));
		return;
	}
	printf("  flows      ");
	for (int h = 0; h < HS_HOOK_MAX; h++) {
		if (!f->flows[h])
			continue;
		printf("%s %s %u", first ? "" : ",", hs_hook_name(h), f->flows[h]);
		first = 0;
	}
	printf(" connections\n");
}

/* "flows": the size of a table, null when the kernel could not say. */
static void json_flows(__u32 flows)
{
	if (flows)
		printf(",\"flows\":%u", flows);
	else
		printf(",\"flows\":null");
}

static int port_on(const struct hs_config *cfg, int port)
{
	return port > 0 && port < 65536 && (cfg->ports[port / 64] >> (port % 64) & 1);
}

/* The warnings of a device's status: what its hooks cannot read here. */
struct warn_out {
	int n;
};

static void text_warning(void *arg, const char *msg)
{
	((struct warn_out *)arg)->n++;
	printf("  WARNING     %s\n", msg);
}

static void json_warning(void *arg, const char *msg)
{
	printf("%s", ((struct warn_out *)arg)->n++ ? "," : "");
	json_str(msg);
}

struct nat_seen {
	const struct hs_config *cfg;
	void (*say)(void *arg, const char *msg);
	struct warn_out *w;
	int pairs[8][2];
	int n;
	int lookup; /* --nat lookup, and the kernel has its kfuncs */
};

/* A connection NAT took from a port not inspected to an inspected one,
 * which the hooks cannot see as such (--nat off, or no kfuncs): said once
 * a pair of ports. */
static void nat_pair(int from, int to, void *arg)
{
	struct nat_seen *ns = arg;
	char msg[320];

	if (!port_on(ns->cfg, to) || port_on(ns->cfg, from))
		return;
	for (int i = 0; i < ns->n; i++)
		if (ns->pairs[i][0] == from && ns->pairs[i][1] == to)
			return;
	if (ns->n < 8) {
		ns->pairs[ns->n][0] = from;
		ns->pairs[ns->n][1] = to;
		ns->n++;
	}
	snprintf(
		msg, sizeof(msg),
		"conntrack holds connections NAT'd from port %d, not inspected, to inspected port "
		"%d: the ingress hooks pass them without a look (%s); use --nat lookup on a kernel "
		"with conntrack's kfuncs, or inspect port %d too",
		from, to, ns->cfg->nat == HS_NAT_OFF ? "--nat off" : "no conntrack kfuncs", from);
	ns->say(ns->w, msg);
}

/* Does [lo, hi] hold a port the list does not inspect? */
static int ports_not_all_on(const struct hs_config *cfg, int lo, int hi)
{
	for (int p = lo; p <= hi; p++)
		if (!port_on(cfg, p))
			return 1;
	return 0;
}

/*
 * A NAT rule that takes ports not inspected to an inspected one: the
 * ingress hooks see the port the client wrote. Under --nat lookup they
 * follow such a connection through conntrack; a segment of one conntrack
 * does not hold (flushed, timed out) they cannot place.
 */
static void nat_rule(const struct hs_nat_rule *nr, void *arg)
{
	struct nat_seen *ns = arg;
	char msg[512], from[48];
	const char *them = "the ports it matches";
	const char *fam = nr->family == NFPROTO_IPV4   ? "ip "
			  : nr->family == NFPROTO_IPV6 ? "ip6 "
			  : nr->family == NFPROTO_INET ? "inet "
						       : "";

	if (!port_on(ns->cfg, nr->to) || !ports_not_all_on(ns->cfg, nr->from_lo, nr->from_hi))
		return;
	if (nr->from_lo == nr->from_hi) {
		snprintf(from, sizeof(from), "port %d", nr->from_lo);
		them = from;
	} else if (nr->from_lo == 0 && nr->from_hi == 65535) {
		snprintf(from, sizeof(from), "any port (or a set of ports)");
	} else {
		snprintf(from, sizeof(from), "ports %d-%d", nr->from_lo, nr->from_hi);
	}
	if (ns->lookup)
		snprintf(
			msg, sizeof(msg),
			"nftables rule in table %s%s chain %s takes TCP to %s, not inspected, on to "
			"inspected port %d: the ingress hooks follow its connections through "
			"conntrack (--nat lookup); to be independent of conntrack, inspect %s too",
			fam, nr->table, nr->chain, from, nr->to, them);
	else
		snprintf(
			msg, sizeof(msg),
			"nftables rule in table %s%s chain %s takes TCP to %s, not inspected, on to "
			"inspected port %d: the ingress hooks pass its connections without a look "
			"(%s); use --nat lookup on a kernel with conntrack's kfuncs, or inspect %s "
			"too",
			fam, nr->table, nr->chain, from, nr->to,
			ns->cfg->nat == HS_NAT_OFF ? "--nat off" : "no conntrack kfuncs", them);
	ns->say(ns->w, msg);
}

static void status_warnings(const struct found *f, void (*say)(void *arg, const char *msg))
{
	struct warn_out w = { 0 };
	struct nat_seen ns = { .cfg = &f->cfg, .say = say, .w = &w };
	struct hs_config live;
	char msg[320];
	int n;

	tunnels_check(&f->cfg, say, &w);
	ns.lookup = f->cfg.nat == HS_NAT_LOOKUP && ct_kfuncs_present();
	/* The rules, whatever --nat says; then, where the hooks do not ask
	 * conntrack, the NAT'd connections it holds (made by rules or not). */
	nft_nat_rules(nat_rule, &ns);
	if (!ns.lookup) {
		if (f->cfg.nat == HS_NAT_LOOKUP)
			say(&w, "this kernel has no conntrack lookup kfuncs (bpf_xdp_ct_lookup): "
				"--nat lookup cannot see where NAT takes a connection");
		ct_nat_ports(nat_pair, &ns);
	}
	/* The namespace's tunnel sockets now, against the table's last look. */
	live = f->cfg;
	n = tunnels_found(&live);
	if (n == -E2BIG || memcmp(live.tunnels, f->cfg.tunnels, sizeof(live.tunnels)) ||
	    live.udp_tunnels != f->cfg.udp_tunnels) {
		snprintf(msg, sizeof(msg),
			 "the UDP sockets that take packets out of a tunnel here changed since the "
			 "list was applied (%u then): run 'hdrstrip update %s --headers FILE' so "
			 "that the hooks know their ports",
			 f->cfg.udp_tunnels, f->d.name);
		say(&w, msg);
	}
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
			json_flows(f->flows[h]);
			printf("}");
			first = 0;
		}
		printf("],\"names\":%u,\"builtin\":[%s],\"list\":", f->cfg.n_names,
		       f->cfg.builtin ? "\"" HS_BUILTIN_H2C "\"" : "");
		json_str(f->cfg.list_path);
		printf(",\"updated\":\"%s\",\"generation\":%u,\"active_slot\":%u,\"ports\":", when,
		       f->cfg.generation, f->cfg.active_slot);
		json_ports(f->cfg.ports);
		printf(",\"on_error\":\"%s\",\"untracked\":\"%s\",\"urgent\":\"%s\"",
		       hs_policy_name(f->cfg.on_error), hs_policy_name(f->cfg.untracked),
		       hs_urgent_name(f->cfg.urgent));
		json_flows(found_flows(f));
		printf(",\"pin_dir\":");
		json_str(f->d.pin_dir);
		printf(",\"event_rate\":%u,\"mode\":\"%s\"", f->cfg.event_rate,
		       f->cfg.observe ? "observe" : "enforce");
		if (!f->d.cgroup) {
			printf(",\"link\":\"%s\",\"nat\":\"%s\",\"tunnels\":[",
			       arphrd_name(f->d.arphrd), hs_nat_name(f->cfg.nat));
			for (int i = 0; i < HS_MAX_TUNNEL_PORTS && f->cfg.tunnels[i].port; i++)
				printf("%s{\"kind\":\"%s\",\"port\":%u}", i ? "," : "",
				       hs_tunnel_name(f->cfg.tunnels[i].kind),
				       f->cfg.tunnels[i].port);
			printf("],\"warnings\":[");
			status_warnings(f, json_warning);
			printf("]");
		}
		printf(",\"pinned\":%s", pinned_here(f) ? "true" : "false");
		if (f->split)
			printf(",\"split\":true");
		printf("}%s\n", last ? "" : ",");
		return;
	}
	if (f->d.cgroup && f->st.prog_id[HS_HOOK_RECEIVE])
		printf("%s: cgroup %s (origin mode: sockops + sk_skb on what it receives, sk_msg "
		       "for responses)\n",
		       f->d.name, f->d.cgroup_path);
	else if (f->d.cgroup)
		printf("%s: cgroup %s (proxy mode: sockops + sk_msg, sk_skb for responses)\n",
		       f->d.name, f->d.cgroup_path);
	else
		printf("%s: ifindex %d, netns net:[%llu]%s%s%s\n", f->d.name, f->d.ifindex,
		       (unsigned long long)f->d.netns_ino, ns[0] ? " (" : "", ns, ns[0] ? ")" : "");
	if (f->cfg.observe)
		printf("  MODE        OBSERVE: matches and policy drops are counted and reported, "
		       "nothing is masked, removed or dropped ('update --enforce' makes them act)\n");
	for (int h = 0; h < HS_HOOK_MAX; h++) {
		if (!f->st.prog_id[h])
			continue;
		printf("  %-11s program %u", hs_hook_name(h), f->st.prog_id[h]);
		if (h == HS_HOOK_XDP)
			printf(", %s mode%s", mode_name(f->st.xdp_mode),
			       f->st.xdp_legacy ? ", without libxdp dispatcher" : "");
		printf("\n");
	}
	printf("  list        %u names from %s%s\n", f->cfg.n_names, f->cfg.list_path,
	       f->cfg.builtin ? HS_BUILTIN_NOTE : "");
	printf("  updated     %s (generation %u, trie slot %u)\n", when, f->cfg.generation,
	       f->cfg.active_slot);
	printf("  ports       %s\n  on-error    %s\n  untracked   %s\n", ports,
	       hs_policy_name(f->cfg.on_error), hs_policy_name(f->cfg.untracked));
	if (!f->d.cgroup) {
		char tun[256];

		tunnels_format(f->cfg.tunnels, tun, sizeof(tun));
		printf("  urgent      %s\n  link        %s\n  tunnels     %s\n  nat         %s\n",
		       hs_urgent_name(f->cfg.urgent), arphrd_name(f->d.arphrd), tun,
		       hs_nat_name(f->cfg.nat));
	}
	print_flows(f);
	if (f->cfg.event_rate)
		printf("  events      %u a second at most ('hdrstrip events %s')\n",
		       f->cfg.event_rate, f->d.cgroup ? "--cgroup PATH" : f->d.name);
	else
		printf("  events      none (--event-rate 0)\n");
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
	if (!f->d.cgroup)
		status_warnings(f, text_warning);
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

/* Is pin directory @name one of @f's (NAME, or NAME@<netns inode>)? */
static int listed(const struct found *f, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		const char *base = strrchr(f[i].d.pin_dir, '/');

		if (!strcmp(f[i].d.name, name) || (base && !strcmp(base + 1, name)))
			return 1;
	}
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

static int do_status(const struct status_opts *o)
{
	struct leftover *lo = NULL;
	struct found *f;
	int n, rc, k = 0, all = view_all(&o->target);

	rc = find_or_fail("status", &o->target, all, &f, &n);
	if (rc >= 0)
		return rc;
	if (all)
		k = find_leftovers(f, n, &lo);
	/* JSON is an array whatever was asked: one shape to parse. */
	if (o->json)
		printf("[\n");
	for (int i = 0; i < n; i++)
		print_status(&f[i], o->json, i == n - 1 && !k);
	if (!n && !o->json)
		printf("hdrstrip is not attached to any interface in this network namespace\n");
	for (int i = 0; i < k; i++)
		print_leftover(&lo[i], o->json, i == k - 1);
	if (o->json)
		printf("]\n");
	free(lo);
	free_found(f, n);
	return EXIT_OK;
}

int cmd_status(int argc, char **argv)
{
	struct status_opts o = defaults_status;
	int rc;

	o.json = g_opts.json; /* hdrstrip -j status */
	rc = parse_status(argc, argv, &o);

	return rc >= 0 ? rc : do_status(&o);
}
