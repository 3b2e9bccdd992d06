/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The options of the commands that act on a device (attach, update,
 * detach): each command has its own table and its own struct, starting
 * from its defaults; these are the parts they share, so that an option
 * means one thing and reads one way in every command that takes it.
 */
#ifndef HDRSTRIP_OPTS_H
#define HDRSTRIP_OPTS_H

#include <getopt.h>
#include <linux/types.h>

#include "cli.h"
#include "hlist.h"
#include <hdrstrip/maps.h>

/* One id per option across the commands, so that a command given an
 * option it does not take can say it belongs to another. */
enum dev_opt {
	OPT_END = 0, /* opts_next(): no option left */
	OPT_HEADERS = 256,
	OPT_HOOK,
	OPT_XDP_MODE,
	OPT_PORTS,
	OPT_ON_ERROR,
	OPT_UNTRACKED,
	OPT_URGENT,
	OPT_FLOWS,
	OPT_CGROUP,
	OPT_NOFOLD,
	OPT_CGROUP_ID,
	OPT_EVENT_RATE,
	OPT_OBSERVE,
	OPT_ENFORCE,
	OPT_VXLAN_PORTS,
	OPT_GENEVE_PORTS,
	OPT_UDP_TUNNEL_PORTS,
	OPT_NAT,
	OPT_RECEIVE,
};

/* The option entries of getopt_long's table, one per option, for the
 * commands' tables to be built from. */
#define OPTION_HEADERS                                                                             \
	{                                                                                          \
		"headers", required_argument, NULL, OPT_HEADERS                                    \
	}
#define OPTION_HOOK                                                                                \
	{                                                                                          \
		"hook", required_argument, NULL, OPT_HOOK                                          \
	}
#define OPTION_XDP_MODE                                                                            \
	{                                                                                          \
		"xdp-mode", required_argument, NULL, OPT_XDP_MODE                                  \
	}
#define OPTION_PORTS                                                                               \
	{                                                                                          \
		"ports", required_argument, NULL, OPT_PORTS                                        \
	}
#define OPTION_ON_ERROR                                                                            \
	{                                                                                          \
		"on-error", required_argument, NULL, OPT_ON_ERROR                                  \
	}
#define OPTION_UNTRACKED                                                                           \
	{                                                                                          \
		"untracked", required_argument, NULL, OPT_UNTRACKED                                \
	}
#define OPTION_URGENT                                                                              \
	{                                                                                          \
		"urgent", required_argument, NULL, OPT_URGENT                                      \
	}
#define OPTION_FLOWS                                                                               \
	{                                                                                          \
		"flows", required_argument, NULL, OPT_FLOWS                                        \
	}
#define OPTION_CGROUP                                                                              \
	{                                                                                          \
		"cgroup", required_argument, NULL, OPT_CGROUP                                      \
	}
#define OPTION_NOFOLD                                                                              \
	{                                                                                          \
		"no-fold-underscore", no_argument, NULL, OPT_NOFOLD                                \
	}
#define OPTION_CGROUP_ID                                                                           \
	{                                                                                          \
		"cgroup-id", required_argument, NULL, OPT_CGROUP_ID                                \
	}
#define OPTION_EVENT_RATE                                                                          \
	{                                                                                          \
		"event-rate", required_argument, NULL, OPT_EVENT_RATE                              \
	}
#define OPTION_OBSERVE                                                                             \
	{                                                                                          \
		"observe", no_argument, NULL, OPT_OBSERVE                                          \
	}
#define OPTION_ENFORCE                                                                             \
	{                                                                                          \
		"enforce", no_argument, NULL, OPT_ENFORCE                                          \
	}
#define OPTION_VXLAN_PORTS                                                                         \
	{                                                                                          \
		"vxlan-ports", required_argument, NULL, OPT_VXLAN_PORTS                            \
	}
#define OPTION_GENEVE_PORTS                                                                        \
	{                                                                                          \
		"geneve-ports", required_argument, NULL, OPT_GENEVE_PORTS                          \
	}
#define OPTION_UDP_TUNNEL_PORTS                                                                    \
	{                                                                                          \
		"udp-tunnel-ports", required_argument, NULL, OPT_UDP_TUNNEL_PORTS                  \
	}
#define OPTION_NAT                                                                                 \
	{                                                                                          \
		"nat", required_argument, NULL, OPT_NAT                                            \
	}
#define OPTION_RECEIVE                                                                             \
	{                                                                                          \
		"receive", no_argument, NULL, OPT_RECEIVE                                          \
	}
#define OPTION_HELP                                                                                \
	{                                                                                          \
		"help", no_argument, NULL, 'h'                                                     \
	}

/* A device command, for its option parser and messages. */
struct dev_cmd {
	const char *name;
	const char *usage;
	const struct option *options; /* its own, ending in { 0 } */
	/* Why another command's @opt does not apply to this one. */
	const char *(*why_not)(int opt);
	/* Values come from a config file's keys (the agent's): messages name
	 * "flows", not "--flows" (and @name is "FILE:LINE"). */
	int config;
};

/*
 * The next option of the command line, from @c's own table: its id, OPT_END
 * when none is left, or -1 with *rc the exit code once the message is out
 * (an option @c does not take, a value missing, --help).
 */
int opts_next(const struct dev_cmd *c, int argc, char **argv, int *rc);

/* The UDP tunnel ports a command was given, by kind (HS_TUN_VXLAN,
 * HS_TUN_GENEVE, HS_TUN_OPAQUE): apply.c merges them into the config's
 * table. */
struct tunnel_ports {
	__u16 port[HS_TUN_MAX][HS_MAX_TUNNEL_PORTS];
	int n[HS_TUN_MAX];
	int given[HS_TUN_MAX];
};

/*
 * The header list and the settings every hook of a device shares: what
 * attach and update both take. Unset (-1, not given) is kept by update and
 * by an attach to a device with another hook, else the config's default.
 */
struct list_settings {
	const char *headers;
	const char *cgroup; /* proxy mode: --cgroup PATH in place of DEV */
	__u64 ports[HS_PORT_WORDS];
	int ports_given;
	int on_error; /* enum hs_policy */
	int untracked; /* enum hs_policy */
	int urgent; /* enum hs_urgent */
	long event_rate; /* events a second */
	int observe; /* 1: --observe, 0: --enforce */
	/* --vxlan-ports, --geneve-ports, --udp-tunnel-ports: the UDP
	 * tunnels' ports of each kind given (tunnels_given[kind]), the rest
	 * kept. */
	struct tunnel_ports tunnels;
	int nat; /* enum hs_nat */
	struct hs_list_opts list;
};

#define LIST_SETTINGS_DEFAULTS                                                                     \
	{                                                                                          \
		.on_error = -1, .untracked = -1, .urgent = -1, .event_rate = -1, .observe = -1,    \
		.nat = -1, .list = { .fold_underscore = -1, .warn = list_warn, .builtin = 1 },     \
	}

/* @opt when it is one of struct list_settings': -1 when taken, or the exit
 * code after the message; -2 when it is not one of them. */
int opt_settings(const struct dev_cmd *c, int opt, struct list_settings *s);

struct apply_opts;
/* The apply_opts @s asks for: the list and what was given, the rest kept. */
void settings_apply_opts(const struct list_settings *s, struct apply_opts *ap);

/* Option values: each returns -1 when @arg is good (stored in *out), else
 * the exit code after the message naming @c and what is expected. */
int opt_hook(const struct dev_cmd *c, const char *arg, int *out);
int opt_xdp_mode(const struct dev_cmd *c, const char *arg, int *out);
int opt_ports(const struct dev_cmd *c, const char *arg, __u64 *out);
int opt_on_error(const struct dev_cmd *c, const char *arg, int *out);
int opt_untracked(const struct dev_cmd *c, const char *arg, int *out);
int opt_urgent(const struct dev_cmd *c, const char *arg, int *out);
int opt_flows(const struct dev_cmd *c, const char *arg, __u32 *out);
int opt_event_rate(const struct dev_cmd *c, const char *arg, long *out);
/* "4789,8472", or "none": the ports of one kind of UDP tunnel. */
int opt_tunnel_ports(const struct dev_cmd *c, const char *arg, int kind, struct tunnel_ports *t);
int opt_nat(const struct dev_cmd *c, const char *arg, int *out);

/*
 * What the command acts on: DEV, the one operand, or a cgroup given by
 * option (@by_cgroup: how many of --cgroup and --cgroup-id were given),
 * which takes the place of DEV and --hook (@hook_given). -1 with *dev set
 * (NULL for a cgroup), else the exit code after the message.
 */
int opts_target(const struct dev_cmd *c, int argc, char **argv, int by_cgroup, int hook_given,
		const char **dev);

/* The kernel memory a flow table of @flows entries takes, in bytes. */
unsigned long long flows_bytes(__u32 flows);

#endif /* HDRSTRIP_OPTS_H */
