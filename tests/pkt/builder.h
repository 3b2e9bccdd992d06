/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A small packet builder for the packet tests: Ethernet, VLAN tags (802.1Q
 * or 802.1ad), IPv4 with options (and AH) or IPv6 with extension headers,
 * TCP with options, and a payload; or the same packet without a link
 * header (a tun or ipip device's), and inside up to two encapsulations
 * (VXLAN, GENEVE, GRE, IP in IP). Checksums come from the RFC 1071 routine
 * in builder.c, written for the tests and sharing nothing with the
 * datapath.
 */
#ifndef HDRSTRIP_TEST_PKT_BUILDER_H
#define HDRSTRIP_TEST_PKT_BUILDER_H

#include <stddef.h>
#include <linux/types.h>

#define PB_MAX_VLANS 12
#define PB_MAX_EXT 8
#define PB_MAX_PKT 65536
#define PB_MAX_ENCAP 2

/* What wraps the packet (struct pb_encap.kind). */
enum pb_encap_kind {
	PB_ENC_NONE = 0,
	PB_ENC_VXLAN, /* UDP, an 8-byte VXLAN header, an Ethernet frame */
	PB_ENC_GENEVE, /* UDP, 8 bytes and options, an Ethernet frame (inner_l2) or IP */
	PB_ENC_GRE, /* IP protocol 47: GRE, then IP or (inner_l2) Ethernet: gretap */
	/* IP protocol 4 (IPv4 inside) or 41 (IPv6 inside): IPIP, SIT, ip6tnl */
	PB_ENC_IPIP,
};

/* GRE's flags (struct pb_encap.gre_flags; the version is the low 3 bits). */
#define PB_GRE_C 0x8000 /* a checksum field, and its checksum */
#define PB_GRE_R 0x4000 /* the routing bit (no field: the stack drops such a packet) */
#define PB_GRE_K 0x2000 /* a key field: struct pb_encap.vni */
#define PB_GRE_S 0x1000 /* a sequence number field */

/* One encapsulation: its own IP header (and UDP), its tunnel header. */
struct pb_encap {
	int kind; /* enum pb_encap_kind */
	int ipv6; /* the outer IP header is IPv6 (else IPv4) */
	/* GENEVE, GRE: an Ethernet frame inside (VXLAN always carries one,
	 * IP in IP never). */
	int inner_l2;
	__u16 port; /* VXLAN, GENEVE: the UDP destination port; 0: 4789, 6081 */
	int udp_csum; /* VXLAN, GENEVE: the UDP checksum computed (else zero) */
	__u32 vni; /* VXLAN, GENEVE: the VNI (24 bits); GRE: the key (PB_GRE_K) */
	int no_i_flag; /* VXLAN: the I flag clear (vxlan_rcv() drops such a packet) */
	__u8 version; /* GENEVE: the version field (0..3) */
	__u8 opt_len; /* GENEVE: option bytes (a multiple of 4, up to 252) */
	__u16 gre_flags; /* GRE: PB_GRE_* and the version */
	/* GENEVE, GRE: the protocol field; 0: the inner packet's (0x6558 for
	 * Ethernet, else 0x0800 or 0x86dd). */
	__u16 proto;
	/* The outer IP header's fragment field, as IPv4 has it (MF 0x2000 |
	 * offset in 8-byte units); an IPv6 outer header gets a fragment
	 * header with that offset and M flag when it is not 0. */
	__u16 frag_off;
};

struct pb_ext {
	__u8 type; /* IPPROTO_HOPOPTS, _ROUTING, _DSTOPTS, _FRAGMENT, _AH */
	__u8 len; /* the header's own length field (0 for a fragment header) */
	__u16 frag; /* fragment header: offset in 8-byte units << 3 | M flag */
};

struct pb_spec {
	/* 0x8100 or 0x88a8, outermost first: the TCP packet's Ethernet
	 * header's tags (in a tunnel, the inner frame's). */
	__u16 vlan_tpid[PB_MAX_VLANS];
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
	 * swapped (set the ports too: sport 80, dport 40000); the outer
	 * headers' too. */
	int reply;
	/* IPv4: an AH header (RFC 4302) between the IP header and TCP, with
	 * this length field ((ah4_len + 2) * 4 bytes); 0: none. */
	int ah4_len;
	/* No link header: the frame starts at its (outermost) IP header, as on
	 * a tun or ipip device. */
	int no_l2;
	/* Encapsulations, outermost first: the packet above (its VLAN tags
	 * on the innermost Ethernet header) inside them. */
	struct pb_encap enc[PB_MAX_ENCAP];
	int n_enc;
};

/* Where the layers of a built packet start: the TCP packet's (the inner
 * one in a tunnel), and each encapsulation's. */
struct pb_layout {
	size_t l3_off, l4_off, payload_off, len;
	size_t ip_check_off; /* IPv4 header checksum (0 for IPv6) */
	size_t tcp_check_off;
	struct {
		size_t l3_off; /* its IP header */
		size_t tun_off; /* its UDP or GRE header (IP in IP: the inner IP header) */
		size_t check_off; /* its UDP or GRE checksum field (0: none) */
	} enc[PB_MAX_ENCAP];
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
 * Ethernet, VLANs, IPv4 (+ AH) or IPv6 (+ extension headers), and the
 * tunnels (VXLAN on UDP 4789 and 8472, GENEVE on 6081, GRE, IP in IP) to
 * TCP, and verifies on the way every IPv4 header checksum, every UDP
 * checksum that is not zero and every GRE checksum (C flag), and, unless
 * the packet is a fragment, the TCP checksum over the segment the IP
 * length describes. Returns 0 when valid, 1 when there is no TCP checksum
 * to check (what was on the way valid), or -1 with @why filled in.
 */
int pb_check_sums(const __u8 *pkt, size_t len, char *why, size_t why_len);
/* The same for a frame that starts with a link header (@l2 1) or at its IP
 * header (@l2 0). */
int pb_check_frame(const __u8 *pkt, size_t len, int l2, char *why, size_t why_len);

/* UDP ports the walk takes for VXLAN and GENEVE, each list ended by a 0. */
#define PB_MAX_TUN_PORTS 16
struct pb_tun_ports {
	__u16 vxlan[PB_MAX_TUN_PORTS + 1];
	__u16 geneve[PB_MAX_TUN_PORTS + 1];
};

/* pb_check_frame() with VXLAN and GENEVE on @ports (NULL: 4789, 8472 and
 * 6081). */
int pb_check_frame_ports(const __u8 *pkt, size_t len, int l2, const struct pb_tun_ports *ports,
			 char *why, size_t why_len);

#endif /* HDRSTRIP_TEST_PKT_BUILDER_H */
