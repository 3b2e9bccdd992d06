/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One TCP segment through the shared per-connection code (include/hdrstrip/
 * flow.h) and the scanner (scan.h), driven exactly as bpf/hdrstrip.bpf.c's
 * track() and scan_pieces() drive them, on the host: the TCP fuzzer and the
 * unit tests share it. What comes before flow.h in the datapath (parsing,
 * the normaliser's checksum checks and urgent-pointer clearing) is the
 * caller's: a segment whose checksum the normaliser rejects never gets
 * here, and URG is cleared first.
 *
 * The flow table is one entry (one 4-tuple) and a 'present' flag; the LRU
 * map's eviction is the caller clearing the flag.
 */
#ifndef HDRSTRIP_FUZZ_SEG_DRIVE_H
#define HDRSTRIP_FUZZ_SEG_DRIVE_H

#include <stddef.h>
#include <stdint.h>

#include <hdrstrip/flow.h>

/*
 * The table entry of the connection's 4-tuple, and the datapath's per-CPU
 * scratch (struct scratch in hdrstrip.bpf.c): kept from one segment to the
 * next as the map keeps it, never cleared, so a field flow.h reads before
 * it sets it shows up as it would in the kernel.
 */
struct sd_table {
	struct hs_flow f;
	int present;
	struct hs_segwork w;
	struct hs_scan s;
	struct hs_stream got;
	/* The caller's socket lookup for a SYN without a flow (XDP and TC
	 * ingress ask the stack): it holds an open connection on the tuple. */
	int conn_open;
};

/* What the datapath's configuration holds for flow.h. */
struct sd_cfg {
	__u8 untracked; /* HS_UNTRACKED_* */
	int on_error_pass; /* --on-error pass (else drop) */
};

/* The datapath's verdict on the segment. */
enum sd_verdict {
	SD_PASS = 0,
	SD_DROP,
};

#define SD_MAX_PIECES (HS_SEG_MAX_PIECES + 1)

/* A piece the scanner went over: payload offsets and what it was. */
struct sd_piece {
	__u32 off, end;
	__u8 commit; /* new data: the flow moved past it */
	__u8 phase; /* the scan's phase at its end */
	__u64 steps;
};

struct sd_result {
	enum sd_verdict verdict;
	int final; /* the last HS_SEG_* (HS_SEG_PASS, _DROP or _POLICY) */
	__u8 why; /* enum hs_why of the segment's way */
	__u8 ev; /* HS_EV_* */
	int policy; /* the on-error policy decided (HS_SEG_POLICY) */
	int drop_rule; /* dropped by a drop rule (HS_PH_DROPPED) */
	int halted; /* a piece stopped in HS_PH_HALT */
	int incomplete; /* a piece's scan did not end within the BPF budget */
	/* Policy pass: the flow goes on line by line from restart_seq (after
	 * the segment, or from the gap before one ahead of it). */
	int reinit;
	__u32 restart_seq;
	int untracked_pass; /* no flow, --untracked pass: passed unscanned */
	/* Passed with bytes no piece scanned while the policy let them
	 * through (on-error pass, --untracked pass): not hdrstrip's to mask. */
	int unscanned_policy;
	/* Checked line by line from its first byte on its own, the flow
	 * unchanged (hs_seg_untracked()): masked as a connection without
	 * state is, not as the stream in order. */
	int linewise;
	struct sd_piece pieces[SD_MAX_PIECES];
	size_t n_pieces;
	__u64 csum_acc; /* every rewrite of the segment (for the TCP checksum) */
	__u16 matches; /* HS_STEP_MATCH results */
	/* The largest steps/(n+16) ratio of a piece, times 1000: the scan loop
	 * bound is HS_STEPS_PER_BYTE. */
	__u64 worst_steps_milli;
};

/*
 * The segment in @pkt: @payload_off its payload's offset, @l4_off the TCP
 * header's (the checksum's parity), @seq the TCP header's sequence number,
 * @len payload bytes of which the scanner reaches @win, TCP @flags (URG
 * already cleared). Masks in place, updates @tab as the datapath updates
 * its map, and fills @res. @t is the compiled list.
 */
void sd_segment(struct sd_table *tab, const struct sd_cfg *cfg, const struct hs_trie *t,
		uint8_t *pkt, size_t pkt_len, __u32 payload_off, __u32 l4_off, __u32 seq, __u32 len,
		__u32 win, __u8 flags, struct sd_result *res);

/* The steps hdrstrip.bpf.c's bpf_loop() budget allows one piece's scan. */
#define SD_MAX_STEPS ((__u64)HS_STEPS_PER_BYTE * (HS_MAX_BUF + 16))

#endif /* HDRSTRIP_FUZZ_SEG_DRIVE_H */
