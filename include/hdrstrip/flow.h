/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Per-connection state: where in the request stream each inspected TCP
 * connection is, so requests split over segments, pipelined or kept alive
 * are scanned as one stream. Kept in an LRU hash per program.
 */
#ifndef HDRSTRIP_FLOW_H
#define HDRSTRIP_FLOW_H

#include "compiler.h"
#include "scan.h"

#define HS_MAP_FLOWS "flows"
/* Checkpoints: the state before each of the last few segments, so that a
 * retransmission of any of them is rewritten exactly as the original. */
#define HS_FLOW_CKPTS 4
#define HS_FLOWS_DEFAULT 32768

/* The sending side's 4-tuple (client -> server). */
struct hs_flow_key {
	__u32 saddr[4]; /* IPv4 in saddr[0] */
	__u32 daddr[4];
	__u16 sport; /* network order */
	__u16 dport;
	__u32 family; /* 4 or 6 */
};

struct hs_ckpt {
	__u32 seq; /* sequence number of the segment's first byte */
	__u32 used;
	struct hs_stream st; /* the state before it */
};

struct hs_flow {
	__u32 next_seq; /* sequence number of the next byte in order */
	__u8 ck_next; /* next checkpoint slot to fill */
	__u8 reserved[3];
	struct hs_stream cur; /* the state at next_seq */
	struct hs_ckpt ck[HS_FLOW_CKPTS];
};

_Static_assert(sizeof(struct hs_flow_key) == 40, "hs_flow_key layout");
_Static_assert(sizeof(struct hs_flow) == 8 + 40 + HS_FLOW_CKPTS * 48, "hs_flow layout");

#endif /* HDRSTRIP_FLOW_H */
