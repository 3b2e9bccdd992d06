// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The options attach, update and detach share (see opts.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xdp/libxdp.h>

#include "apply.h"
#include "cli.h"
#include "loader.h"
#include "opts.h"
#include <hdrstrip/events.h>
#include <hdrstrip/flow.h>

/* Every device command's options: an option one command does not take is
 * named as another's (and refused), never ignored. */
static const struct option all_options[] = {
	OPTION_HEADERS,		 OPTION_HOOK,	   OPTION_XDP_MODE,    OPTION_PORTS,
	OPTION_ON_ERROR,	 OPTION_UNTRACKED, OPTION_URGENT,      OPTION_FLOWS,
	OPTION_CGROUP,		 OPTION_NOFOLD,	   OPTION_CGROUP_ID,   OPTION_EVENT_RATE,
	OPTION_OBSERVE,		 OPTION_ENFORCE,   OPTION_VXLAN_PORTS, OPTION_GENEVE_PORTS,
	OPTION_UDP_TUNNEL_PORTS, OPTION_NAT,	   OPTION_RECEIVE,     { 0 },
};

/* The option getopt_long refused, as it was written: "--name" (without
 * any "=value"), or "-x". */
static void refused_name(char **argv, char *buf, size_t size)
{
	const char *a = argv[optind - 1];

	if (optopt > 0 && optopt < 256 && a[1] != '-') {
		snprintf(buf, size, "-%c", optopt);
		return;
	}
	snprintf(buf, size, "%.*s", (int)strcspn(a, "="), a);
}

int opts_next(const struct dev_cmd *c, int argc, char **argv, int *rc)
{
	char name[64];
	int opt;

	opterr = 0; /* the messages are ours, naming the command */
	opt = getopt_long(argc, argv, ":h", c->options, NULL);
	switch (opt) {
	case -1:
		return OPT_END;
	case 'h':
		*rc = usage_out(c->usage, 1);
		return -1;
	case ':':
		refused_name(argv, name, sizeof(name));
		pr_err("%s: %s needs a value", c->name, name);
		*rc = usage_out(c->usage, 0);
		return -1;
	case '?':
		refused_name(argv, name, sizeof(name));
		if (optopt >= OPT_HEADERS) {
			/* One of @c's own, given "=VALUE" it does not take. */
			pr_err("%s: %s takes no value", c->name, name);
			*rc = usage_out(c->usage, 0);
			return -1;
		}
		for (const struct option *o = all_options; o->name && name[1] == '-'; o++)
			if (!strcmp(o->name, name + 2)) {
				pr_err("%s: %s does not apply (%s)", c->name, name,
				       c->why_not(o->val));
				*rc = usage_out(c->usage, 0);
				return -1;
			}
		pr_err("%s: unknown option '%s'", c->name, name);
		*rc = usage_out(c->usage, 0);
		return -1;
	default:
		return opt;
	}
}

/* Option @opt ("--flows") as @c's messages name it: a config file's key
 * is the option's name without its dashes. */
static const char *opt_word(const struct dev_cmd *c, const char *opt)
{
	return c->config ? opt + 2 : opt;
}

int opt_hook(const struct dev_cmd *c, const char *arg, int *out)
{
	*out = hook_parse(arg);
	if (*out >= 0)
		return -1;
	pr_err("%s: unknown hook '%s' (expected xdp, tc-ingress or tc-egress)", c->name, arg);
	return EXIT_USAGE;
}

int opt_xdp_mode(const struct dev_cmd *c, const char *arg, int *out)
{
	if (!strcmp(arg, "native")) {
		*out = XDP_MODE_NATIVE;
		return -1;
	}
	if (!strcmp(arg, "skb")) {
		*out = XDP_MODE_SKB;
		return -1;
	}
	pr_err("%s: unknown XDP mode '%s' (expected native or skb)", c->name, arg);
	return EXIT_USAGE;
}

int opt_ports(const struct dev_cmd *c, const char *arg, __u64 *out)
{
	if (!ports_parse(arg, out))
		return -1;
	pr_err("%s: bad port list '%s' (expected e.g. 80,8080,9000-9010; ports 1-65535)", c->name,
	       arg);
	return EXIT_USAGE;
}

int opt_on_error(const struct dev_cmd *c, const char *arg, int *out)
{
	*out = hs_name_find(hs_policy_names, HS_POLICY_MAX, arg);
	if (*out >= 0 && *out != HS_POLICY_SCAN)
		return -1;
	pr_err("%s: unknown policy '%s' for %s (expected drop, reject or pass)", c->name, arg,
	       opt_word(c, "--on-error"));
	return EXIT_USAGE;
}

int opt_untracked(const struct dev_cmd *c, const char *arg, int *out)
{
	*out = hs_name_find(hs_policy_names, HS_POLICY_MAX, arg);
	if (*out >= 0 && *out != HS_POLICY_REJECT)
		return -1;
	pr_err("%s: unknown policy '%s' for %s (expected scan, pass or drop)", c->name, arg,
	       opt_word(c, "--untracked"));
	return EXIT_USAGE;
}

int opt_urgent(const struct dev_cmd *c, const char *arg, int *out)
{
	*out = hs_name_find(hs_urgent_names, HS_URGENT_MAX, arg);
	if (*out >= 0)
		return -1;
	pr_err("%s: unknown policy '%s' for %s (expected clear or drop)", c->name, arg,
	       opt_word(c, "--urgent"));
	return EXIT_USAGE;
}

/* The largest --flows: each entry is preallocated (an LRU hash), so the
 * table's memory is taken at attach, per hook. */
#define HS_FLOWS_MAX (1u << 20)
/* Bytes of kernel memory a flow entry takes: its value and key, and the
 * LRU hash's element header (64 bytes on 64-bit kernels). 1084 bytes
 * (BENCHMARKS.md, "memory"). */
#define HS_FLOW_ENTRY_BYTES (sizeof(struct hs_flow) + sizeof(struct hs_flow_key) + 64)

unsigned long long flows_bytes(__u32 flows)
{
	return (unsigned long long)flows * HS_FLOW_ENTRY_BYTES;
}

/* MemAvailable from /proc/meminfo, in bytes; 0 if unknown. */
static unsigned long long mem_available(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/* --flows N: a count in 16..HS_FLOWS_MAX, whose table fits in half the
 * memory available. */
int opt_event_rate(const struct dev_cmd *c, const char *arg, long *out)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || arg[0] < '0' || arg[0] > '9' || n > HS_EVENT_RATE_MAX) {
		pr_err("%s: bad %s '%s' (match events a second, 0..%u; 0 sends none)", c->name,
		       opt_word(c, "--event-rate"), arg, HS_EVENT_RATE_MAX);
		return EXIT_USAGE;
	}
	*out = (long)n;
	return -1;
}

int opt_tunnel_ports(const struct dev_cmd *c, const char *arg, int kind, struct tunnel_ports *t)
{
	static __u64 bitmap[HS_PORT_WORDS];
	int p, q, from = 1;

	t->given[kind] = 1;
	t->n[kind] = 0;
	if (!strcmp(arg, "none"))
		return -1;
	if (ports_parse(arg, bitmap)) {
		pr_err("%s: bad %s '%s' (expected UDP ports, e.g. %s, or none)", c->name,
		       opt_word(c, kind == HS_TUN_OPAQUE   ? "--udp-tunnel-ports"
				   : kind == HS_TUN_GENEVE ? "--geneve-ports"
							   : "--vxlan-ports"),
		       arg,
		       kind == HS_TUN_GENEVE ? HS_GENEVE_PORTS_DEFAULT : HS_VXLAN_PORTS_DEFAULT);
		return EXIT_USAGE;
	}
	while (ports_next_run(bitmap, from, &p, &q)) {
		for (; p <= q; p++) {
			if (t->n[kind] == HS_MAX_TUNNEL_PORTS) {
				pr_err("%s: more than %d UDP tunnel ports", c->name,
				       HS_MAX_TUNNEL_PORTS);
				return EXIT_USAGE;
			}
			t->port[kind][t->n[kind]++] = (__u16)p;
		}
		from = q + 1;
	}
	return -1;
}

int opt_nat(const struct dev_cmd *c, const char *arg, int *out)
{
	*out = hs_name_find(hs_nat_names, HS_NAT_MAX, arg);
	if (*out >= 0)
		return -1;
	pr_err("%s: unknown %s '%s' (expected lookup or off)", c->name, opt_word(c, "--nat"), arg);
	return EXIT_USAGE;
}

int opt_flows(const struct dev_cmd *c, const char *arg, __u32 *out)
{
	unsigned long long cost, avail;
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || arg[0] < '0' || arg[0] > '9' || n < 16 ||
	    n > HS_FLOWS_MAX) {
		pr_err("%s: bad %s '%s' (a count of connections, 16..%u; each takes about %zu "
		       "bytes of kernel memory per hook)",
		       c->name, opt_word(c, "--flows"), arg, HS_FLOWS_MAX, HS_FLOW_ENTRY_BYTES);
		return EXIT_USAGE;
	}
	cost = flows_bytes(n);
	avail = mem_available();
	if (avail && cost > avail / 2) {
		pr_err("%s: %s %lu would take %llu MiB of kernel memory for this hook, more than "
		       "half of what is available (%llu MiB); choose a smaller %s",
		       c->name, opt_word(c, "--flows"), n, cost >> 20, avail >> 20,
		       opt_word(c, "--flows"));
		return EXIT_USAGE;
	}
	*out = n;
	return -1;
}

int opt_settings(const struct dev_cmd *c, int opt, struct list_settings *s)
{
	switch (opt) {
	case OPT_HEADERS:
		s->headers = optarg;
		return -1;
	case OPT_CGROUP:
		s->cgroup = optarg;
		return -1;
	case OPT_PORTS:
		s->ports_given = 1;
		return opt_ports(c, optarg, s->ports);
	case OPT_ON_ERROR:
		return opt_on_error(c, optarg, &s->on_error);
	case OPT_UNTRACKED:
		return opt_untracked(c, optarg, &s->untracked);
	case OPT_URGENT:
		return opt_urgent(c, optarg, &s->urgent);
	case OPT_NOFOLD:
		s->list.fold_underscore = 0;
		return -1;
	case OPT_EVENT_RATE:
		return opt_event_rate(c, optarg, &s->event_rate);
	case OPT_VXLAN_PORTS:
		return opt_tunnel_ports(c, optarg, HS_TUN_VXLAN, &s->tunnels);
	case OPT_GENEVE_PORTS:
		return opt_tunnel_ports(c, optarg, HS_TUN_GENEVE, &s->tunnels);
	case OPT_UDP_TUNNEL_PORTS:
		return opt_tunnel_ports(c, optarg, HS_TUN_OPAQUE, &s->tunnels);
	case OPT_NAT:
		return opt_nat(c, optarg, &s->nat);
	case OPT_OBSERVE:
	case OPT_ENFORCE:
		if (s->observe >= 0 && s->observe != (opt == OPT_OBSERVE)) {
			pr_err("%s: --observe and --enforce go one at a time", c->name);
			return usage_out(c->usage, 0);
		}
		s->observe = opt == OPT_OBSERVE;
		return -1;
	default:
		return -2;
	}
}

void settings_apply_opts(const struct list_settings *s, struct apply_opts *ap)
{
	*ap = (struct apply_opts){
		.list_path = s->headers,
		.ports = s->ports_given ? s->ports : NULL,
		.on_error = s->on_error,
		.untracked = s->untracked,
		.urgent = s->urgent,
		.event_rate = s->event_rate,
		.observe = s->observe,
		.tunnels = &s->tunnels,
		.nat = s->nat,
		.qdisc_created = -1,
	};
}

int opts_target(const struct dev_cmd *c, int argc, char **argv, int by_cgroup, int hook_given,
		const char **dev)
{
	*dev = NULL;
	if (by_cgroup) {
		if (optind != argc || hook_given || by_cgroup > 1) {
			pr_err("%s: --cgroup PATH (or --cgroup-id ID) takes the place of DEV and --hook",
			       c->name);
			return usage_out(c->usage, 0);
		}
		return -1;
	}
	if (optind != argc - 1) {
		pr_err("%s: %s", c->name,
		       optind >= argc ? "give the device (DEV), or --cgroup PATH"
				      : "more than one device given");
		return usage_out(c->usage, 0);
	}
	*dev = argv[optind];
	return -1;
}
