// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * 'hdrstrip flows': the connections each hook tracks (its flow table,
 * include/hdrstrip/flow.h), as 'conntrack -L' lists the kernel's: the
 * addresses and ports, which way it goes, open or closed, read by its
 * framing or line by line, and how long ago it began. Read only: a
 * lookup from user space does not touch the table's LRU order.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "cli.h"
#include "loader.h"
#include "view.h"
#include <hdrstrip/flow.h>

static const char flows_usage[] =
	"Usage: hdrstrip flows [DEV] [--hook xdp|tc-ingress|tc-egress] [--json]\n"
	"\n"
	"List the connections hdrstrip tracks on DEV (or on every interface of this\n"
	"network namespace), hook by hook, as 'conntrack -L' lists the kernel's: one\n"
	"line a connection, with its addresses and ports (the sender's first), which\n"
	"way it goes (request or response), open or closed, framed (requests followed\n"
	"by their HTTP framing) or line by line (every line checked, no framing\n"
	"trusted), and its age.\n"
	"  --hook HOOK   that hook's table only\n"
	"  --json        one JSON object a connection, a line each (keys in hdrstrip(8))\n";

struct flows_opts {
	struct view_target target;
	int hook; /* enum hs_hook, or -1: every hook */
	int json;
};

static const struct flows_opts defaults_flows = {
	.target = { .dev = NULL, .cgroup = NULL },
	.hook = -1,
};

enum flows_opt {
	OPT_FLOWS_HOOK = 'k',
};

static const struct option flows_options[] = {
	OPTION_JSON,
	{ "hook", required_argument, NULL, OPT_FLOWS_HOOK },
	OPTION_HELP,
	{ 0 },
};

/* -1 with @o filled in, else the exit code. */
static int parse_flows(int argc, char **argv, struct flows_opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "jh", flows_options, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_FLOWS_HOOK:
			o->hook = hook_parse(optarg);
			if (o->hook < 0) {
				pr_err("flows: unknown hook '%s' (expected xdp, tc-ingress or "
				       "tc-egress)",
				       optarg);
				return usage_out(flows_usage, 0);
			}
			break;
		default: /* --help, or an option flows does not take */
			return usage_out(flows_usage, c == 'h');
		}
	}
	return view_operand(flows_usage, argc, argv, &o->target);
}

/* Seconds of CLOCK_BOOTTIME now: what the programs stamp a flow with. */
static __u64 boot_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (__u64)ts.tv_sec;
}

static const char *flow_dir(const struct hs_flow *f)
{
	switch (hs_stream_dir(&f->cur)) {
	case HS_DIR_RESPONSE:
		return "response";
	case HS_DIR_EITHER:
		return "either";
	default:
		return "request";
	}
}

/* One connection: a line, or a JSON object. */
static void flow_print(const struct found *fd, int hook, const struct hs_flow_key *k,
		       const struct hs_flow *f, __u64 now, int json)
{
	char sa[INET6_ADDRSTRLEN], da[INET6_ADDRSTRLEN];
	const char *state = f->fl & HS_FL_CLOSED ? "closed" : "open";
	const char *read = f->cur.conn & HS_CN_UNTRACKED ? "line-by-line" : "framed";
	int v6 = k->family == 6;
	long long age = f->born_s && now >= f->born_s ? (long long)(now - f->born_s) : -1;

	addr_str(k, k->saddr, sa, sizeof(sa));
	addr_str(k, k->daddr, da, sizeof(da));
	if (json) {
		printf("{\"dev\":");
		json_str(fd->d.name);
		printf(",\"hook\":\"%s\",\"family\":%u,\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\","
		       "\"dport\":%u,\"direction\":\"%s\",\"state\":\"%s\",\"read\":\"%s\","
		       "\"started\":%s,\"age\":",
		       hs_hook_name(hook), k->family, sa, ntohs(k->sport), da, ntohs(k->dport),
		       flow_dir(f), state, read, f->fl & HS_FL_NO_START ? "false" : "true");
		if (age < 0)
			printf("null");
		else
			printf("%lld", age);
		printf(",\"next_seq\":%u}\n", f->next_seq);
		return;
	}
	printf("%-10s %s%s%s:%u -> %s%s%s:%u %s %s %s%s age ", hs_hook_name(hook), v6 ? "[" : "",
	       sa, v6 ? "]" : "", ntohs(k->sport), v6 ? "[" : "", da, v6 ? "]" : "",
	       ntohs(k->dport), flow_dir(f), state, read,
	       f->fl & HS_FL_NO_START ? " (begun without state)" : "");
	if (age < 0)
		printf("-\n");
	else
		printf("%llds\n", age);
}

/* Every connection of hook @hook of @fd; the count, or -errno. */
static int hook_flows(const struct found *fd, int hook, __u64 now, int json, __u32 *size)
{
	struct hs_flow_key k, next;
	struct hs_flow *f = malloc(sizeof(*f));
	int mfd, n = 0, first = 1;

	if (!f)
		return -ENOMEM;
	mfd = prog_map_open(fd->st.prog_id[hook], HS_MAP_FLOWS, size);
	if (mfd < 0) {
		free(f);
		return mfd;
	}
	while (!bpf_map_get_next_key(mfd, first ? NULL : &k, &next)) {
		first = 0;
		k = next;
		/* (Evicted or replaced between the two calls: left out.) */
		if (bpf_map_lookup_elem(mfd, &k, f))
			continue;
		flow_print(fd, hook, &k, f, now, json);
		n++;
	}
	close(mfd);
	free(f);
	return n;
}

static int do_flows(const struct flows_opts *o)
{
	struct found *f;
	int n, rc, shown = 0;
	__u64 now = boot_s();

	rc = find_or_fail("flows", &o->target, 0, &f, &n);
	if (rc >= 0)
		return rc;
	rc = EXIT_OK;
	for (int i = 0; i < n; i++) {
		for (int h = 0; h < HS_HOOK_CGROUP; h++) {
			__u32 size = 0;
			int c;

			if (!f[i].st.prog_id[h] || (o->hook >= 0 && o->hook != h))
				continue;
			shown++;
			c = hook_flows(&f[i], h, now, o->json, &size);
			if (c < 0) {
				pr_err("cannot read the flow table of %s on '%s': %s (%d)",
				       hs_hook_name(h), f[i].d.name, errstr(c), c);
				rc = EXIT_FAIL;
				continue;
			}
			if (!o->json)
				printf("%s %s: %d connection%s tracked (table of %u)\n",
				       f[i].d.name, hs_hook_name(h), c, c == 1 ? "" : "s", size);
		}
	}
	if (!shown && rc == EXIT_OK) {
		if (o->hook >= 0 && o->target.dev)
			pr_err("%s is not attached to '%s'", hs_hook_name(o->hook), o->target.dev);
		else
			pr_err("hdrstrip is not attached to any interface in this network namespace");
		rc = EXIT_FAIL;
	}
	free_found(f, n);
	return rc;
}

int cmd_flows(int argc, char **argv)
{
	struct flows_opts o = defaults_flows;
	int rc;

	o.json = g_opts.json; /* hdrstrip -j flows */
	rc = parse_flows(argc, argv, &o);
	return rc >= 0 ? rc : do_flows(&o);
}
