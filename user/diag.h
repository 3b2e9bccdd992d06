/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One TCP socket of this network namespace asked for by its connection and
 * its cookie (sock_diag: NETLINK_SOCK_DIAG): what its application has read,
 * and its reset (SOCK_DESTROY, which the kernel's CONFIG_INET_DIAG_DESTROY
 * provides). Each returns 0 or -errno (-ENOENT: no such socket here).
 */
#ifndef HDRSTRIP_DIAG_H
#define HDRSTRIP_DIAG_H

#include <linux/types.h>

#include <hdrstrip/flow.h>

struct diag_tcp {
	__u64 bytes_received; /* payload bytes (and a FIN) the socket received */
	__u32 rqueue; /* of them, not read by the application yet */
	__u32 inode; /* its file's: 0 until accept() returned it */
	__u8 state; /* TCP_ESTABLISHED ... */
};

/* The socket of connection @k (source the peer, destination this host, as
 * struct hs_rx keeps it) whose cookie is @cookie. */
int diag_tcp_query(const struct hs_flow_key *k, __u64 cookie, struct diag_tcp *out);
/* Reset it: the peer gets a RST, the application ECONNABORTED. */
int diag_tcp_destroy(const struct hs_flow_key *k, __u64 cookie);
/* SO_NETNS_COOKIE of the network namespace this thread is in, 0 if unknown. */
__u64 diag_netns_cookie(void);

#endif /* HDRSTRIP_DIAG_H */
