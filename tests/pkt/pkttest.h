/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the packet test files share: the loaded objects, the fixture list,
 * and the run-and-check step every case goes through. */
#ifndef HDRSTRIP_TEST_PKT_PKTTEST_H
#define HDRSTRIP_TEST_PKT_PKTTEST_H

#include <stddef.h>
#include <linux/types.h>

#include <hdrstrip/maps.h>

#include "builder.h"
#include "harness.h"
#include "refstrip.h"

/* Hit slots the fixtures check (the fixture list is shorter). */
#define PT_HIT_SLOTS 16

enum pt_verdict {
	PV_PASS = 0,
	PV_DROP,
};

struct pt_case {
	const char *what;
	struct pb_spec spec;
	const char *in; /* TCP payload */
	size_t in_len;
	const char *out; /* expected payload; NULL: the input, unchanged */
	size_t out_len;
	enum pt_verdict verdict;
	struct hs_counters delta; /* expected; .packets = 1 is implied */
	__u8 hits[PT_HIT_SLOTS]; /* expected header_hits deltas, by slot */
	/* Malformed packets: damage the built frame (its checksums no longer
	 * need to hold; the output must equal the damaged input). */
	void (*mangle)(__u8 *pkt, size_t *len, const struct pb_layout *lay);
	/* Expectations that came from the reference itself: do not ask it
	 * again about this case (it only knows the fixture list). */
	int no_ref;
};

/* Payload from a string literal (it may hold NUL bytes). */
#define IN(s) .in = (s), .in_len = sizeof(s) - 1
#define OUT(s) .out = (s), .out_len = sizeof(s) - 1
/* Counters of a request that was scanned to the end of its header block. */
#define HTTP(seen_, matched_, masked_)                                                             \
	.inspected = 1, .http_requests = 1, .headers_seen = (seen_),                               \
	.headers_matched = (matched_), .headers_masked = (masked_),                                \
	.packets_modified = (masked_) > 0

struct pt_state {
	struct th obj14; /* clang-14, through the skeleton */
	struct th obj19; /* clang-19, from its file */
	int have19;
	struct hs_trie *fix_trie; /* the fixture list, compiled */
	struct ref_list *fix_ref; /* the same list, read by the reference */
	const char *corpus;
	const char *obj19_path;
	__u32 xdp_max, skb_max; /* largest frames test_run takes (found at start) */
};

extern struct pt_state pt;
extern const char pt_fixture_list[];

/* Fixture list slots (rule index = hit slot). */
enum {
	R_AUTH = 0,
	R_TRACE,
	R_SECRET, /* drop */
	R_EDGE_PFX, /* x-edge-* */
	R_EDGE_ID,
	R_CDN_TRACE,
	R_XA,
	R_HOPCOUNT, /* written with '_' in the list */
};

extern const struct pt_case pt_http_cases[], pt_layer_cases[], pt_malformed_cases[];
extern const size_t pt_n_http_cases, pt_n_layer_cases, pt_n_malformed_cases;
/* The wire (fixtures.c): tunnels and what the parser passes or sends to
 * on-error, under th_config(); the same under pt_wire_config (a tunnel
 * table of its own, a UDP socket on a tunnel port, no NAT lookup); frames
 * without a link header, for an object opened with th_open_l3(). */
extern const struct pt_case pt_wire_cases[], pt_wire_config_cases[], pt_l3_cases[];
extern const size_t pt_n_wire_cases, pt_n_wire_config_cases, pt_n_l3_cases;
extern const struct th_wire pt_wire_config;
/* UDP tunnel sockets the table does not name, in pt_wire_late()'s
 * namespace (wire.c). */
extern const struct pt_case pt_late_cases[];
extern const size_t pt_n_late_cases;

/* Compile list text into a trie (hs_list_parse + hs_compile). */
int pt_compile(const char *text, struct hs_trie *t);

/*
 * Run @c through @h on every hook in @hooks (bit 1 << TH_*) and check
 * verdict, output bytes, checksums, counter and hit deltas. Prints each
 * mismatch with the case name; returns the number of mismatches.
 */
int pt_check(struct th *h, const struct pt_case *c, unsigned int hooks);

/* Expected counters, verdict and hits of a one-packet case from the
 * reference's result (@touched: its rewritten bytes, @len of them). */
void pt_expect_from_ref(struct pt_case *c, const struct ref_result *r, const __u8 *touched,
			size_t len);

/* Run a whole table; returns the number of mismatching cases. */
int pt_check_table(struct th *h, const struct pt_case *tab, size_t n, unsigned int hooks);

/* Counter deltas, field by field, with names in messages. */
int pt_diff_counters(const char *what, const char *hook, const struct hs_counters *want,
		     const struct hs_counters *before, const struct hs_counters *after);

/* Output equal to @want, allowing the TCP checksum field to hold the other
 * one's complement zero (0x0000 for 0xffff). */
int pt_same_bytes(const __u8 *got, size_t got_len, const __u8 *want, size_t want_len,
		  size_t tcp_check_off, char *why, size_t why_len);

/* The VXLAN and GENEVE ports of a config's tunnel table (@n entries at
 * most), for pb_check_frame_ports(). */
void pt_tun_ports(const struct hs_tunnel_port *t, int n, struct pb_tun_ports *p);

#define PT_ALL_HOOKS ((1u << TH_XDP) | (1u << TH_TC))

#endif /* HDRSTRIP_TEST_PKT_PKTTEST_H */
