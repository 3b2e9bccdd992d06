/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Match events: one fixed-size record per matched field line (and one per
 * packet a policy drops), written by the programs into the device's ring
 * buffer under a per-CPU token bucket, read by 'hdrstrip events'.
 */
#ifndef HDRSTRIP_EVENTS_H
#define HDRSTRIP_EVENTS_H

#include "portable.h"
#include "names.h"
#include "flow.h"

/* Bytes of the field's name an event keeps, as received (never its value). */
#define HS_EVENT_NAME_MAX 60
/* The ring buffer of one device: about 1,800 events. */
#define HS_EVENTS_RING_BYTES (256 * 1024)
/* Events a second per device (all CPUs together) unless --event-rate says. */
#define HS_EVENT_RATE_DEFAULT 2000
#define HS_EVENT_RATE_MAX 1000000

/*
 * Why a packet was dropped. X(ID, name), the name as 'hdrstrip events'
 * prints it.
 */
#define HS_EV_REASONS(X)                                                                           \
	X(NONE, "") /* not dropped */                                                              \
	X(RULE, "rule") /* a drop rule matched this line */                                        \
	X(ON_ERROR, "on-error") /* not fully inspectable: --on-error drop */                       \
	X(UNTRACKED, "untracked") /* a connection without state: --untracked drop */               \
	X(INVALID, "invalid") /* read another way by the stack, or dropped by it too */            \
	X(URGENT, "urgent") /* URG set: --urgent drop */

enum hs_ev_reason {
#define HS_EV_REASON_ENUM(id, name) HS_EVR_##id,
	HS_EV_REASONS(HS_EV_REASON_ENUM)
#undef HS_EV_REASON_ENUM
	HS_EVR_MAX
};

#ifndef __bpf__
HS_NAME_TABLE(hs_ev_reason_names, HS_EV_REASONS, HS_EVR_MAX);
#endif

/*
 * One event. The addresses are the packet's (source: the client, or for a
 * response the origin; in proxy mode the proxy's own socket, destination
 * its upstream). rule is the list
 * rule + 1 of the list with that generation; 0 for a policy drop, which
 * has no name.
 */
struct hs_event {
	__u64 time_ns; /* CLOCK_BOOTTIME */
	struct hs_flow_key key; /* ports in network order */
	__u32 generation; /* the list's (hs_trie.generation) */
	__u32 ifindex; /* the device's (0 in proxy mode) */
	__u16 rule;
	__u8 hook; /* enum hs_hook */
	__u8 action; /* enum hs_action of the rule */
	__u8 reason; /* enum hs_ev_reason */
	__u8 name_len; /* bytes in name */
	__u8 on; /* the programs' template only: --event-rate is not 0 */
	__u8 dir; /* HS_DIR_REQUEST or HS_DIR_RESPONSE (trie.h) */
	char name[HS_EVENT_NAME_MAX];
};

_Static_assert(sizeof(struct hs_event) == 128, "hs_event layout");

/* The per-CPU token bucket: tokens in billionths of an event. */
struct hs_event_bucket {
	__u64 tokens;
	__u64 last_ns;
};

#endif /* HDRSTRIP_EVENTS_H */
