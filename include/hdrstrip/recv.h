/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the cgroup programs keep of a connection a process of the cgroup
 * accepted: origin mode (attach --cgroup PATH --receive) masks the listed
 * lines of the stream it receives; proxy mode follows that stream's framing
 * only, for its responses. One entry per socket in the rxstate hash, by
 * socket cookie (an sk_skb program cannot reach socket storage); the loader
 * reads it at detach (what the application has still to read) and to end
 * the connections a drop stopped.
 */
#ifndef HDRSTRIP_RECV_H
#define HDRSTRIP_RECV_H

#include "portable.h"
#include "flow.h"
#include "scan.h"

/* Map names (found from the programs' map ids; origins, the sockhash, is in
 * maps.h with the pinned ones). */
#define HS_MAP_RXSTATE "rxstate"
#define HS_MAP_ENDED "ended" /* connections a drop ended, to be reset */

/* Connections the hashes hold at once. */
#define HS_RX_CONNS 65536
/* Ended connections waiting for their reset. */
#define HS_ENDED_CONNS 4096

/* hs_rx.flags */
#define HS_RX_MASK 0x1 /* origin mode: listed lines are masked (else framing only) */
/* A drop ended the connection: nothing from here on reaches the
 * application; the agent resets it (sock_diag SOCK_DESTROY). */
#define HS_RX_ENDED 0x2

struct hs_rx {
	struct hs_stream st; /* the received stream, as the application reads it */
	/* The connection as a request travels: source the client, destination
	 * the origin (events, and the reset's socket lookup). */
	struct hs_flow_key key;
	__u32 reserved;
	__u64 passed; /* payload bytes handed to the application's queue */
	__u32 next_seq; /* TCP sequence number of the next byte the program should see */
	__u32 flags; /* HS_RX_* */
	__u64 netns_cookie; /* the socket's network namespace (SO_NETNS_COOKIE) */
};

_Static_assert(sizeof(struct hs_rx) == 48 + 44 + 4 + 24, "hs_rx layout");

#endif /* HDRSTRIP_RECV_H */
