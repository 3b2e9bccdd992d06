/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Map values shared by the BPF programs and the loader. Only fixed-size
 * types; the asserts make clang-bpf and the host compiler check one layout.
 */
#ifndef HDRSTRIP_MAPS_H
#define HDRSTRIP_MAPS_H

#include "compiler.h"
#include "limits.h"
#include "trie.h"

/* Map names: the pin names under /sys/fs/bpf/hdrstrip/<DEV>/. */
#define HS_MAP_TRIE "trie"
#define HS_MAP_CONFIG "config"
#define HS_MAP_COUNTERS "counters"
#define HS_MAP_HEADER_HITS "header_hits"
#define HS_MAP_SOCKS "socks" /* proxy mode: the connections being filtered */

/* Two trie slots: the loader writes the idle one, then flips config. */
#define HS_TRIE_SLOTS 2

/* --urgent: what to do with a segment to an inspected port that has URG. */
enum hs_urgent {
	HS_URGENT_CLEAR = 0, /* clear URG and the urgent pointer: the byte stays in the stream */
	HS_URGENT_DROP = 1,
	HS_URGENT_MAX
};

/* What to do when a packet cannot be fully inspected. */
enum hs_policy {
	HS_POLICY_DROP = 0,
	HS_POLICY_PASS = 1,
	HS_POLICY_SCAN = 2, /* untracked segments only: mask internal-looking lines */
	HS_POLICY_MAX
};

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
	__u32 n_names; /* names in the active list */
	__u32 ifindex; /* the interface this state belongs to */
	__u32 flows; /* capacity of each program's flow table */
	__u64 netns_ino; /* ... and the inode of its network namespace */
	__u64 updated_ns; /* wall-clock time of the last list change */
	__u64 flipped_ns; /* CLOCK_MONOTONIC time of the last slot flip */
	char ifname[16];
	char list_path[256];
	__u64 ports[HS_PORT_WORDS]; /* bitmap of inspected TCP destination ports */
};

_Static_assert(__builtin_offsetof(struct hs_config, ports) == 320, "hs_config layout");
_Static_assert(sizeof(struct hs_config) == 320 + HS_PORT_WORDS * 8, "hs_config size");

/*
 * Counters: a per-CPU array with one element of this struct, so bpftool
 * prints every field by name. Keep HS_COUNTER_NAMES in the same order.
 */
struct hs_counters {
	__u64 packets; /* packets the program ran on */
	__u64 inspected; /* TCP segments with payload to an inspected port */
	__u64 http_requests; /* request lines recognised */
	__u64 headers_seen; /* field lines examined */
	__u64 headers_matched; /* field lines whose name is in the list */
	__u64 headers_masked; /* field lines rewritten in place */
	__u64 packets_modified; /* packets that left with masked bytes */
	__u64 packets_dropped; /* packets dropped, by a drop rule or the policy */
	__u64 non_http; /* inspected payloads that do not start a request */
	__u64 fragments; /* IP fragments, passed without inspection */
	__u64 scan_incomplete; /* payloads that could not be scanned to the end */
	__u64 truncated; /* malformed or truncated L2-L4 headers */
	__u64 split_names; /* names split over segments, rewritten ahead */
	__u64 framing_conflict; /* requests whose body framing servers could read two ways */
	__u64 framing_invalid; /* Content-Length values that are not numbers */
	__u64 desync; /* a request should start and something else does */
	__u64 flows_new; /* connections the program started tracking */
	__u64 flows_closed; /* ... and saw end (FIN/RST) */
	__u64 untracked; /* segments of connections with no state, e.g. evicted */
	__u64 retransmits; /* segments rescanned from a checkpoint */
	__u64 out_of_order; /* segments ahead of a gap in a header block */
	/* Proxy mode (sockops + sk_msg on a cgroup). */
	__u64 headers_removed; /* field lines taken out of sent data */
	__u64 bytes_removed; /* ... and their bytes */
	__u64 conns_preexisting; /* connections older than the attach, left alone */
	__u64 fastopen_unfiltered; /* connections whose first bytes left with TCP Fast Open, unseen */
	/* The normaliser (bpf/normalize.h, include/hdrstrip/flow.h). */
	__u64 urgent_cleared; /* segments with URG: cleared (or dropped, --urgent drop) */
	__u64 bad_checksum; /* segments with a wrong IPv4 or TCP checksum: dropped */
	__u64 csum_unchecked; /* TCP checksums left to offload (pseudo header only): not checked */
	__u64 retransmit_mismatch; /* overlapping copies read another way than the first: dropped */
	__u64 retransmit_unverified; /* overlapping copies cut where no state is known: dropped */
	__u64 rst_ignored; /* RSTs not at the next byte: the stack keeps the connection, so do we */
	__u64 syn_in_flow; /* SYNs inside a connection (tracked, or open at the socket): ignored */
	__u64 oversize; /* payloads past the scan window, not all body: the on-error policy */
	__u64 malformed; /* data without ACK, IPv6 chains we cannot follow: dropped or the policy */
};

#define HS_COUNTER_NAMES                                                                           \
	"packets", "inspected", "http_requests", "headers_seen", "headers_matched",                \
		"headers_masked", "packets_modified", "packets_dropped", "non_http", "fragments",  \
		"scan_incomplete", "truncated", "split_names", "framing_conflict",                 \
		"framing_invalid", "desync", "flows_new", "flows_closed", "untracked",             \
		"retransmits", "out_of_order", "headers_removed", "bytes_removed",                 \
		"conns_preexisting", "fastopen_unfiltered", "urgent_cleared", "bad_checksum",      \
		"csum_unchecked", "retransmit_mismatch", "retransmit_unverified", "rst_ignored",   \
		"syn_in_flow", "oversize", "malformed"

#define HS_N_COUNTERS (sizeof(struct hs_counters) / sizeof(__u64))

#endif /* HDRSTRIP_MAPS_H */
