/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What 'status' and 'stats' share: the devices hdrstrip is attached to,
 * found from the kernel (netlink, and the pins of cgroups) with the maps of
 * their programs, so that both work from any process and mount namespace,
 * with or without pins; and the bits of output both print.
 */
#ifndef HDRSTRIP_VIEW_H
#define HDRSTRIP_VIEW_H

#include <stddef.h>
#include <xdp/libxdp.h>

#include "loader.h"
#include "opts.h"

/* The options of status and stats (with opts.h's --cgroup and --help):
 * stats takes them all; status refuses stats' own by name. */
enum view_opt {
	OPT_JSON = 'j', /* -j too */
	OPT_PER_HEADER = 512,
	OPT_PROMETHEUS,
	OPT_WATCH,
	OPT_COUNT,
	OPT_ALL,
};

#define OPTION_JSON                                                                                \
	{                                                                                          \
		"json", no_argument, NULL, OPT_JSON                                                \
	}
#define OPTION_PER_HEADER                                                                          \
	{                                                                                          \
		"per-header", no_argument, NULL, OPT_PER_HEADER                                    \
	}
#define OPTION_PROMETHEUS                                                                          \
	{                                                                                          \
		"prometheus", no_argument, NULL, OPT_PROMETHEUS                                    \
	}
#define OPTION_WATCH                                                                               \
	{                                                                                          \
		"watch", required_argument, NULL, OPT_WATCH                                        \
	}
#define OPTION_COUNT                                                                               \
	{                                                                                          \
		"count", required_argument, NULL, OPT_COUNT                                        \
	}
#define OPTION_ALL                                                                                 \
	{                                                                                          \
		"all", no_argument, NULL, OPT_ALL                                                  \
	}

/* What status and stats show: DEV, the cgroup of --cgroup PATH (proxy
 * mode), or (both NULL) every device. */
struct view_target {
	const char *dev;
	const char *cgroup;
};

static inline int view_all(const struct view_target *t)
{
	return !t->dev && !t->cgroup;
}

/* DEV, the operand if any, which --cgroup PATH (t->cgroup) takes the place
 * of: -1 with t->dev set, else the exit code after the message and @usage. */
int view_operand(const char *usage, int argc, char **argv, struct view_target *t);

/* One device with hdrstrip attached: its hooks, maps and config. */
struct found {
	struct dev d;
	struct dev_state st;
	struct dev_maps m;
	struct hs_config cfg;
	int split; /* the hooks use different maps */
	/* The connections each hook's table holds, as the kernel sized it
	 * (its max_entries): the flow table at XDP and TC, the sockhash in
	 * proxy mode (which has no flow table); 0 where it cannot be read. */
	__u32 flows[HS_HOOK_MAX];
};

/* The smallest table of @f's hooks (the connections every hook can hold),
 * 0 if none could be read. */
__u32 found_flows(const struct found *f);

/*
 * The devices @cmd shows: @t's interface or cgroup, or every interface of
 * this network namespace and, with @with_cgroups, every cgroup with pins.
 * -1 with *f (free_found()) and *n set, else the exit code after the
 * message.
 */
int find_or_fail(const char *cmd, const struct view_target *t, int with_cgroups, struct found **f,
		 int *n);
void free_found(struct found *f, int n);

/* @f's counters, per-header hits and settings in Prometheus' text format,
 * on standard output ('stats --prometheus', and the agent's /metrics):
 * EXIT_OK, or EXIT_FAIL after the message. */
int stats_prometheus(const struct found *f, int n);

/*
 * The match events of @f's @n devices, their ring buffers read as one
 * ('hdrstrip events', and the agent's --events): what ev_reader_consume()
 * finds is printed, one line an event (@json: JSON lines; @label_netns:
 * with a "netns" field for a device of another namespace). The reader
 * keeps descriptors of its own: @f may be freed. 0 or -errno after the
 * message.
 */
struct ev_reader;
int ev_reader_open(const struct found *f, int n, int json, int label_netns, struct ev_reader **r);
/* What to poll() for readability (the programs wake it only once a quarter
 * of a ring waits: consume now and then anyway). */
int ev_reader_fd(const struct ev_reader *r);
/* Print what is buffered: 0 or -errno. */
int ev_reader_consume(struct ev_reader *r);
void ev_reader_free(struct ev_reader *r);

/* The map named @name among those of program @prog_id, as a descriptor
 * (and its max_entries into *@max_entries): a hook's own table, found as
 * the kernel has it (no pins needed). -errno if there is none. */
int prog_map_open(__u32 prog_id, const char *name, __u32 *max_entries);
/* Address @a of connection @k (its family's), as inet_ntop() writes it. */
struct hs_flow_key;
void addr_str(const struct hs_flow_key *k, const __u32 *a, char *buf, size_t size);

/* @s as a JSON string, quotes included. */
void json_str(const char *s);
/* The @len bytes at @s (NUL bytes escaped), and @s[@len] readable. */
void json_strn(const char *s, size_t len);
/* The ports of @bitmap as a JSON array, in order: a port alone is a
 * number, a run of 3 or more a [first,last] array (80,81,8000-8010 is
 * [80,81,[8000,8010]]): at most 32768 elements, whatever the bitmap. */
void json_ports(const __u64 *bitmap);
/* The name of the network namespace @ino in /run/netns, or "". */
void netns_name(__u64 ino, char *buf, size_t size);
/* How output names the namespace @ino of a device: its name in /run/netns;
 * for one with no name (a container's) that is not this process's own,
 * "net:[INODE]" as status shows it; else "". */
void netns_label(__u64 ino, char *buf, size_t size);
/* @ns (since the epoch) as an ISO 8601 UTC time. */
void format_time(__u64 ns, char *buf, size_t size);
/* "native", "skb" or "hw". */
const char *mode_name(enum xdp_attach_mode mode);

#endif /* HDRSTRIP_VIEW_H */
