/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A small packet builder for the packet tests: Ethernet, VLAN tags (802.1Q
 * or 802.1ad), IPv4 with options or IPv6 with extension headers, TCP
 * with options, and a payload. Checksums come from the RFC 1071 routine in
 * builder.c, written for the tests and sharing nothing with the datapath.
 */
#ifndef HDRSTRIP_TEST_PKT_BUILDER_H
#define HDRSTRIP_TEST_PKT_BUILDER_H

#include <stddef.h>
#include <linux/types.h>

#define PB_MAX_VLANS 12
#define PB_MAX_EXT 8
#define PB_MAX_PKT 65536

struct pb_ext {
	__u8 type; /* IPPROTO_HOPOPTS, _ROUTING, _DSTOPTS, _FRAGMENT, _AH */
	__u8 len; /* the header's own length field (0 for a fragment header) */
	__u16 frag; /* fragment header: offset in 8-byte units << 3 | M flag */
};

struct pb_spec {
	__u16 vlan_tpid[PB_MAX_VLANS]; /* 0x8100 or 0x88a8, outermost first */
	int n_vlans;
	int ipv6;
	/* IPv4 */
	__u8 ip_opts[40];
	int ip_opts_len; /* a multiple of 4 */
	__u16 frag_off; /* host order: flags (DF 0x4000, MF 0x2000) and offset */
	/* IPv6 */
	struct pb_ext ext[PB_MAX_EXT];
	int n_ext;
	/* TCP */
	__u16 sport, dport; /* 0: 40000 and 80 */
	__u32 seq; /* with seq_set; otherwise 1 */
	int seq_set;
	__u8 tcp_flags; /* 0: PSH ACK */
	__u8 tcp_opts[40];
	int tcp_opts_len; /* a multiple of 4 */
	/* Bytes after the IP datagram (Ethernet padding). */
	int trailer;
	/* The connection's other direction: source and destination addresses
	 * swapped (set the ports too: sport 80, dport 40000). */
	int reply;
};

/* Where the layers of a built packet start. */
struct pb_layout {
	size_t l3_off, l4_off, payload_off, len;
	size_t ip_check_off; /* IPv4 header checksum (0 for IPv6) */
	size_t tcp_check_off;
};

/* Build the packet into @out (at least PB_MAX_PKT bytes); returns its length,
 * or 0 when it would not fit. */
size_t pb_build(const struct pb_spec *s, const void *payload, size_t plen, __u8 *out,
		struct pb_layout *lay);

/* RFC 1071 sum of @len bytes at @p added to @sum (not folded). */
__u32 pb_sum(const void *p, size_t len, __u32 sum);
/* Fold and complement. */
__u16 pb_fold(__u32 sum);

/*
 * Check the checksums of a frame independently of how it was made: walks
 * Ethernet, VLANs, IPv4/IPv6 (+ extension headers) to TCP and verifies the
 * IPv4 header checksum and, unless the packet is a fragment, the TCP
 * checksum over the segment the IP length describes. Returns 0 when valid,
 * 1 when there is no TCP checksum to check, or -1 with @why filled in.
 */
int pb_check_sums(const __u8 *pkt, size_t len, char *why, size_t why_len);

#endif /* HDRSTRIP_TEST_PKT_BUILDER_H */
