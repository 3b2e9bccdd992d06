/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef HDRSTRIP_APPLY_H
#define HDRSTRIP_APPLY_H

#include "loader.h"

/* What a command asks of the config; what it leaves unset (NULL, -1, 0)
 * is kept, or, for fresh maps, the default (config_defaults()). */
struct apply_opts {
	int first; /* fresh maps: slot 0, counters from zero */
	const char *list_path;
	const __u64 *ports; /* NULL: keep */
	int on_error; /* enum hs_policy, -1: keep */
	int untracked; /* enum hs_policy, -1: keep */
	int urgent; /* enum hs_urgent, -1: keep */
	__u32 flows; /* 0: keep */
	long event_rate; /* events a second, -1: keep */
	int observe; /* 1: observe mode, 0: enforce, -1: keep */
	const struct tunnel_ports *tunnels; /* the kinds given replace theirs; NULL: keep */
	int nat; /* enum hs_nat, -1: keep */
	int qdisc_created; /* -1: keep */
};

struct hs_list;
struct tunnel_ports;

/* The tunnel table @cfg would have with the kinds @t gives; -E2BIG when
 * they do not fit. */
int tunnels_merge(struct hs_config *cfg, const struct tunnel_ports *t);
/* The tunnel sockets of this network namespace into @cfg: each UDP port a
 * socket takes packets out of that the table does not read (VXLAN, GENEVE)
 * becomes an OPAQUE entry (HS_TP_FOUND: made again at every look), and
 * udp_tunnels their count. 0, or -E2BIG when the table is full. */
int tunnels_found(struct hs_config *cfg);
/* How many ports of the table a UDP socket of this network namespace is
 * bound to (/proc/net/udp, udp6); -errno when neither can be read. */
int tunnels_bound(const struct hs_tunnel_port *table);
/* Each tunnel device of this namespace whose packets the hooks with @cfg
 * will not read (a vxlan or geneve on a port not in the table, an
 * encrypting one), said to @say. 0 or -errno. */
int tunnels_check(const struct hs_config *cfg, void (*say)(void *arg, const char *msg), void *arg);
/* "vxlan 4789,8472; geneve 6081" */
void tunnels_format(const struct hs_tunnel_port *table, char *buf, size_t size);

/* Compile @l into @t (a whole block; what it holds is overwritten), write
 * it into the idle slot of @m and flip the config to it. Per-header counter
 * slots follow names across updates (see slots.h). */
int apply_list(const struct dev *d, const struct dev_maps *m, const struct hs_list *l,
	       struct hs_trie *t, const struct apply_opts *o);
/* The same in two steps: everything but the flip (packets still use the
 * active list; @next is the config to switch to), then the flip. An attach
 * loads and verifies its hook between the two, so a failed or killed
 * attach leaves the running list as it was. */
int apply_prepare(const struct dev *d, const struct dev_maps *m, const struct hs_list *l,
		  struct hs_trie *t, const struct apply_opts *o, struct hs_config *next);
int apply_commit(const struct dev_maps *m, struct hs_config *next);

/* "80,8080,9000-9010" -> bitmap of HS_PORT_WORDS words; -EINVAL if bad. */
int ports_parse(const char *s, __u64 *bitmap);
void ports_format(const __u64 *bitmap, char *buf, size_t size);
/* The next run of ports of @bitmap at or after @from: 1 with [*first,
 * *last] set, 0 when there is none. What the text and the JSON print. */
int ports_next_run(const __u64 *bitmap, int from, int *first, int *last);

#endif /* HDRSTRIP_APPLY_H */
