/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Map values shared by the BPF programs and the loader. Only fixed-size
 * types; the asserts make clang-bpf and the host compiler check one layout.
 */
#ifndef HDRSTRIP_MAPS_H
#define HDRSTRIP_MAPS_H

#include "portable.h"
#include "counters.h"
#include "events.h"
#include "limits.h"
#include "names.h"
#include "trie.h"
#include "tunnel.h"

/* Map names: the pin names under /sys/fs/bpf/hdrstrip/<DEV>/. */
#define HS_MAP_TRIE "trie"
#define HS_MAP_CONFIG "config"
#define HS_MAP_COUNTERS "counters"
#define HS_MAP_HEADER_HITS "header_hits"
#define HS_MAP_EVENTS "events" /* match events' ring buffer (events.h) */
#define HS_MAP_EVENT_BUCKET "event_bucket" /* and each CPU's token bucket */
#define HS_MAP_SOCKS "socks" /* proxy mode: the connections being filtered */
/* Proxy mode: the accepted connections whose responses are filtered. */
#define HS_MAP_SERVERS "servers"
/* Origin mode: the accepted connections whose received requests are
 * filtered, without response rules (include/hdrstrip/recv.h). */
#define HS_MAP_ORIGINS "origins"
/* Each request stream's HEAD history, for the hook that sees its responses
 * (a response to HEAD has no body): keyed by the request direction's
 * 4-tuple (struct hs_flow_key, flow.h). */
#define HS_MAP_METHODS "methods"
/* Its capacity: as many request streams as a hook's default flow table
 * holds; the least recently used entry makes room (its responses are then
 * checked line by line). */
#define HS_METHODS_ENTRIES 32768

/* Two trie slots: the loader writes the idle one, then flips config. */
#define HS_TRIE_SLOTS 2

/*
 * --urgent: what to do with a segment to an inspected port that has URG.
 * X(ID, name), the name as the option takes it and status prints it.
 */
#define HS_URGENTS(X)                                                                              \
	X(CLEAR, "clear") /* clear URG and the urgent pointer: the byte stays in the stream */     \
	X(DROP, "drop")

enum hs_urgent {
#define HS_URGENT_ENUM(id, name) HS_URGENT_##id,
	HS_URGENTS(HS_URGENT_ENUM)
#undef HS_URGENT_ENUM
	HS_URGENT_MAX
};

/*
 * What to do when a packet cannot be fully inspected (--on-error: drop or
 * pass) or belongs to a connection without state (--untracked: any).
 */
#define HS_POLICIES(X)                                                                             \
	X(DROP, "drop")                                                                            \
	X(PASS, "pass")                                                                            \
	X(SCAN, "scan") /* untracked segments only: mask internal-looking lines */                 \
	X(REJECT, "reject") /* --on-error only: drop, and reset the sender's connection */

enum hs_policy {
#define HS_POLICY_ENUM(id, name) HS_POLICY_##id,
	HS_POLICIES(HS_POLICY_ENUM)
#undef HS_POLICY_ENUM
	HS_POLICY_MAX
};

/*
 * --nat: whether the ingress hooks ask conntrack (its lookup kfuncs) for a
 * segment to a port not inspected: DNAT, REDIRECT, docker -p and NodePort
 * rewrite the port after XDP and tc-ingress have seen it.
 */
#define HS_NATS(X)                                                                                 \
	X(LOOKUP, "lookup") /* ask, when the kernel has the kfuncs */                              \
	X(OFF, "off") /* never: no NAT in this namespace sends to an inspected port */

enum hs_nat {
#define HS_NAT_ENUM(id, name) HS_NAT_##id,
	HS_NATS(HS_NAT_ENUM)
#undef HS_NAT_ENUM
	HS_NAT_MAX
};

/* Stored in the config map: a value never changes meaning. */
_Static_assert(HS_URGENT_CLEAR == 0 && HS_URGENT_DROP == 1, "hs_urgent values");
_Static_assert(HS_NAT_LOOKUP == 0 && HS_NAT_OFF == 1, "hs_nat values");
_Static_assert(HS_POLICY_DROP == 0 && HS_POLICY_PASS == 1 && HS_POLICY_SCAN == 2 &&
		       HS_POLICY_REJECT == 3,
	       "hs_policy values");

#ifndef __bpf__
HS_NAME_TABLE(hs_urgent_names, HS_URGENTS, HS_URGENT_MAX);

HS_NAME_TABLE(hs_policy_names, HS_POLICIES, HS_POLICY_MAX);

HS_NAME_TABLE(hs_nat_names, HS_NATS, HS_NAT_MAX);

static inline const char *hs_urgent_name(unsigned int u)
{
	return hs_name_of(hs_urgent_names, HS_URGENT_MAX, u);
}

static inline const char *hs_policy_name(unsigned int p)
{
	return hs_name_of(hs_policy_names, HS_POLICY_MAX, p);
}

static inline const char *hs_nat_name(unsigned int n)
{
	return hs_name_of(hs_nat_names, HS_NAT_MAX, n);
}
#endif

/*
 * One element. The program reads active_slot, on_error and ports; the rest
 * is the loader's bookkeeping, kept here because this map is reachable from
 * the attached program itself (program -> map ids), so every command finds
 * it with or without pins, from any mount namespace.
 */
struct hs_config {
	__u32 active_slot; /* trie slot packets use: 0 or 1 */
	__u32 generation; /* bumped on every list change */
	__u8 on_error; /* enum hs_policy: drop or pass */
	__u8 untracked; /* enum hs_policy: scan, pass or drop */
	__u8 qdisc_created; /* the loader created this device's clsact qdisc */
	__u8 urgent; /* enum hs_urgent */
	__u32 n_names; /* names of the active list's file (the built-in rule apart) */
	__u32 ifindex; /* the interface this state belongs to */
	__u32 flows; /* capacity of each program's flow table */
	__u64 netns_ino; /* ... and the inode of its network namespace */
	__u64 updated_ns; /* wall-clock time of the last list change */
	__u64 flipped_ns; /* CLOCK_MONOTONIC time of the last slot flip */
	char ifname[16];
	char list_path[256];
	__u64 ports[HS_PORT_WORDS]; /* bitmap of inspected TCP destination ports */
	__u32 event_rate; /* --event-rate: events a second, all CPUs (0: none) */
	__u32 event_cpu_rate; /* ... each CPU's share, rounded up: what the program reads */
	__u8 observe; /* --observe: every rule and policy observes; nothing changes */
	/* --nat: at the ingress hooks, a segment to a port not inspected
	 * asks conntrack where its connection really goes (enum hs_nat). */
	__u8 nat;
	/* Ports of the tunnel table a UDP socket of this namespace was bound
	 * to when the loader looked (attach, update): with none, a UDP
	 * fragment cannot reach a tunnel (a fragment's port is unknown). */
	__u8 udp_tunnels;
	/* 1: the list's last rule is the built-in one (HS_BUILTIN_H2C,
	 * core/hlist.h), which n_names does not count. */
	__u8 builtin;
	__u8 reserved[4];
	/* UDP ports a tunnel takes (--vxlan-ports, --geneve-ports,
	 * --udp-tunnel-ports), ended by a zero port. */
	struct hs_tunnel_port tunnels[HS_MAX_TUNNEL_PORTS];
};

_Static_assert(__builtin_offsetof(struct hs_config, ports) == 320, "hs_config layout");
_Static_assert(__builtin_offsetof(struct hs_config, tunnels) == 320 + HS_PORT_WORDS * 8 + 16,
	       "hs_config tunnels");
_Static_assert(sizeof(struct hs_config) == 320 + HS_PORT_WORDS * 8 + 16 + HS_MAX_TUNNEL_PORTS * 4,
	       "hs_config size");

/* A methods map entry: the request stream's hs_stream.nmsg and .heads
 * after the last segment passed in order (scan.h). */
struct hs_peer {
	__u64 heads;
	__u16 n;
	__u16 reserved[3];
};

_Static_assert(sizeof(struct hs_peer) == 16, "hs_peer layout");

#endif /* HDRSTRIP_MAPS_H */
