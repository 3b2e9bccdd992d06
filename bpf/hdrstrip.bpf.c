// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * hdrstrip's datapath: find HTTP/1.x requests in TCP payloads to inspected
 * ports, look every field name up in the trie, mask or drop internal ones.
 * One datapath, two entry points (XDP and TC clsact, ingress or egress).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/maps.h>
#include <hdrstrip/scan.h>

#include "ctx.h"
#include "maps.bpf.h"
#include "parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Connections being scanned (see include/hdrstrip/flow.h). The loader sets
 * the capacity (--flows); the least recently used entry makes room.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, HS_FLOWS_DEFAULT);
	__type(key, struct hs_flow_key);
	__type(value, struct hs_flow);
} flows SEC(".maps");

/*
 * Scan state lives in a per-CPU scratch map rather than on the stack: the
 * verifier does not track values in map memory, so every step starts from
 * the same abstract state and the loop's states converge at once (on the
 * stack, each exact phase/flags combination would be explored apart).
 * Slot 0 serves XDP, slot 1 TC: they never interrupt each other on a CPU,
 * but separate slots make that not matter.
 */
struct scratch {
	struct hs_scan s;
	struct hs_flow fresh_flow; /* a new flow, to insert */
	struct hs_stream from; /* the state a scan starts from */
	__u32 done; /* the scan reached a verdict or the end of the buffer */
	/* How the segment relates to its flow (kept here, not in locals, so
	 * that the verifier meets one state at the scan, not one per path). */
	__u8 fresh; /* the flow had no state */
	__u8 save; /* 0: save the state after the scan; 1: keep the flow's */
	__u8 reserved[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* bpf_loop()'s argument: on the stack, as the helper requires; pointers may
 * not be stored in map values. */
struct scan_ctx {
	struct scratch *sc;
	const struct hs_trie *t;
	void *ctx;
};

/*
 * The scan runs under bpf_loop(): the verifier checks the callback once, not
 * once per byte. Each call makes up to HS_STEPS_PER_CALL steps, which keeps
 * the per-call overhead small next to the work; enough calls are allowed for
 * a 64 KiB payload even when every byte takes a step of its own,
 * HS_STEPS_PER_BYTE times (scan.h). The call count is a run-time bound: it
 * costs the verifier nothing.
 */
#define HS_STEPS_PER_CALL 4
#define HS_MAX_CALLS (HS_STEPS_PER_BYTE * (HS_MAX_BUF + 16) / HS_STEPS_PER_CALL)

static __always_inline long scan_some(struct scan_ctx *c, const int xdp)
{
	void *data = ctx_data(c->ctx, xdp), *data_end = ctx_data_end(c->ctx, xdp);
	struct scratch *sc = c->sc;
	int i, r;

	for (i = 0; i < HS_STEPS_PER_CALL; i++) {
		/* Every step reads the state from the map again: clang would
		 * otherwise carry known values from one step to the next in
		 * registers, and the verifier would walk each combination. */
		asm volatile("" ::: "memory");
		/* Keep the counter a plain register the verifier can count. */
		asm volatile("" : "+r"(i));
		r = hs_scan_step(&sc->s, c->t, data, data_end);
		if (r == HS_STEP_MORE)
			continue;
		if (r == HS_STEP_MATCH) {
			count_hit(c->t, sc->s.rule);
			if (sc->s.st.phase != HS_PH_DROPPED)
				continue;
		}
		sc->done = 1;
		return 1;
	}
	return 0;
}

static long scan_cb_xdp(__u32 i __attribute__((unused)), void *arg)
{
	return scan_some(arg, HOOK_XDP);
}

static long scan_cb_tc(__u32 i __attribute__((unused)), void *arg)
{
	return scan_some(arg, HOOK_TC);
}

/* Scan the payload from sc->from, with options @opts (HS_OPT_*). */
static __always_inline void run_scan(void *ctx, struct scratch *sc, const struct hs_trie *t,
				     const struct pkt *pk, __u8 opts, const int xdp)
{
	struct scan_ctx c = { .sc = sc, .t = t, .ctx = ctx };

	hs_scan_begin(&sc->s, &sc->from, pk->payload_off, pk->payload_end, pk->l4_off);
	sc->s.opts = opts;
	sc->done = 0;
	bpf_loop(HS_MAX_CALLS, xdp ? (void *)scan_cb_xdp : (void *)scan_cb_tc, &c, 0);
}

static __always_inline void add_scan_counts(struct hs_counters *cnt, const struct hs_scan *s)
{
	cnt->http_requests += s->requests;
	cnt->headers_seen += s->seen;
	cnt->headers_matched += s->matched;
	cnt->headers_masked += s->masked;
	cnt->split_names += s->premasked;
	cnt->framing_invalid += s->framing_invalid;
	cnt->desync += s->desync;
	cnt->framing_conflict += s->conflicts;
}

/* A segment without payload: connections start and end here. */
static __always_inline void track_control(const struct pkt *pk, struct scratch *sc,
					  struct hs_counters *cnt)
{
	if (pk->tcp_flags & (TCP_FL_FIN | TCP_FL_RST)) {
		if (!bpf_map_delete_elem(&flows, &pk->key))
			cnt->flows_closed++;
		return;
	}
	if (pk->tcp_flags & TCP_FL_SYN) {
		__builtin_memset(&sc->fresh_flow, 0, sizeof(sc->fresh_flow));
		hs_stream_init(&sc->fresh_flow.cur);
		sc->fresh_flow.next_seq = pk->seq + 1;
		if (!bpf_map_update_elem(&flows, &pk->key, &sc->fresh_flow, BPF_ANY))
			cnt->flows_new++;
	}
}

/* The server resets: the client's flow is over (it may never send FIN). */
static __always_inline void track_reverse_rst(const struct pkt *pk, struct hs_counters *cnt)
{
	struct hs_flow_key k = pk->key;

	__builtin_memcpy(k.saddr, pk->key.daddr, sizeof(k.saddr));
	__builtin_memcpy(k.daddr, pk->key.saddr, sizeof(k.daddr));
	k.sport = pk->key.dport;
	k.dport = pk->key.sport;
	if (!bpf_map_delete_elem(&flows, &k))
		cnt->flows_closed++;
}

/*
 * Which state does this segment start from? Sets sc->from, sc->fresh and
 * sc->save; returns 0 to scan, 2 to pass as is, 3 for the failure policy.
 */
static __always_inline int locate(const struct pkt *pk, struct scratch *sc,
				  struct hs_counters *cnt)
{
	__u32 len = pk->payload_end - pk->payload_off;
	struct hs_flow *f;
	__s32 d;
	int i;

	sc->fresh = 0;
	sc->save = 0;
	f = bpf_map_lookup_elem(&flows, &pk->key);
	if (!f) {
		/* No state: attached mid-connection, or the entry was evicted. */
		__builtin_memset(&sc->fresh_flow, 0, sizeof(sc->fresh_flow));
		hs_stream_init(&sc->fresh_flow.cur);
		sc->fresh_flow.next_seq = pk->seq;
		sc->fresh = 1;
		sc->from = sc->fresh_flow.cur;
		if (bpf_map_update_elem(&flows, &pk->key, &sc->fresh_flow, BPF_NOEXIST))
			sc->save = 1; /* the table refused it: scan, keep nothing */
		return 0;
	}
	d = (__s32)(pk->seq - f->next_seq);
	if (d > 0 && f->cur.phase == HS_PH_BODY && (__u64)d <= f->cur.num) {
		/* Ahead of a gap inside a body of known length. */
		if ((__u64)d + len <= f->cur.num)
			return 2; /* all body: passed, the flow stays where it is */
		/* The gap is body, which is never scanned, so the state where
		 * this segment starts is known: go on from there. Otherwise,
		 * once the receiver holds the body's end, the next request
		 * would be "ahead of a gap" forever: nobody resends the end. */
		f->cur.num -= d;
		f->next_seq = pk->seq;
		d = 0;
	}
	if (d == 0) {
		struct hs_ckpt *ck = &f->ck[f->ck_next & (HS_FLOW_CKPTS - 1)];

		ck->seq = pk->seq;
		ck->used = 1;
		ck->st = f->cur;
		f->ck_next = (f->ck_next + 1) & (HS_FLOW_CKPTS - 1);
		sc->from = f->cur;
		return 0;
	}
	if (d < 0) {
		cnt->retransmits++;
		sc->save = 1;
#pragma unroll
		for (i = 0; i < HS_FLOW_CKPTS; i++) {
			if (f->ck[i].used && f->ck[i].seq == pk->seq) {
				sc->from = f->ck[i].st;
				/* Longer than before: its end is the new position. */
				if ((__s32)(pk->seq + len - f->next_seq) > 0)
					sc->save = 0;
				return 0;
			}
		}
		/* Older than every checkpoint (or cut differently): its first
		 * bytes may be the middle of an internal field. */
		hs_stream_resync(&sc->from);
		return 0;
	}
	cnt->out_of_order++;
	return 3;
}

/* After the scan: verdict, checksum, and the flow's new state. */
static __always_inline enum hs_verdict conclude(void *ctx, const struct pkt *pk,
						struct scratch *sc, struct hs_config *cfg,
						struct hs_counters *cnt, const int xdp)
{
	__u8 phase = sc->s.st.phase;
	struct hs_flow *f;
	int untrack = 0;

	add_scan_counts(cnt, &sc->s);
	if (phase == HS_PH_NOT_HTTP) {
		cnt->non_http++;
		if (sc->fresh) {
			/* A connection we know nothing about whose bytes do not
			 * start a request: --untracked pass or drop. */
			cnt->untracked++;
			if (cfg->untracked == HS_POLICY_DROP) {
				cnt->packets_dropped++;
				return HS_VERDICT_DROP;
			}
			return HS_VERDICT_PASS;
		}
	} else if (sc->fresh && (sc->s.st.conn & HS_CN_UNTRACKED) && !sc->s.requests) {
		/* The same payload, scanned line by line (--untracked scan):
		 * it does not start a request either. */
		cnt->non_http++;
		cnt->untracked++;
	}
	if (phase == HS_PH_DROPPED) {
		cnt->packets_dropped++;
		return HS_VERDICT_DROP;
	}
	if (phase == HS_PH_HALT)
		return policy_drops(cfg, cnt) ? HS_VERDICT_DROP : HS_VERDICT_PASS; /* drop: it halted */
	if (!sc->done || (pk->payload_end > HS_MAX_BUF && hs_scan_in_block(&sc->s))) {
		cnt->scan_incomplete++;
		if (policy_drops(cfg, cnt))
			return HS_VERDICT_DROP;
		/* Passed anyway: the rest of the connection line by line. */
		untrack = 1;
	}
	/* Any rewritten byte, not only a new match: the rest of a line whose
	 * name was rewritten ahead in an earlier segment is masked here with
	 * no count of its own. Every rewrite adds to csum_acc. */
	if (sc->s.csum_acc) {
		if (ctx_csum_apply(ctx, &sc->s, pk->csum_off, xdp)) {
			cnt->scan_incomplete++;
			cnt->packets_dropped++;
			return HS_VERDICT_DROP; /* never send a masked packet with a bad checksum */
		}
		cnt->packets_modified++;
	}
	if (pk->tcp_flags & (TCP_FL_FIN | TCP_FL_RST)) {
		if (!bpf_map_delete_elem(&flows, &pk->key))
			cnt->flows_closed++;
		return HS_VERDICT_PASS;
	}
	if (sc->save)
		return HS_VERDICT_PASS;
	f = bpf_map_lookup_elem(&flows, &pk->key);
	if (f) {
		hs_scan_finish(&sc->s, &f->cur);
		if (untrack)
			hs_stream_untrack(&f->cur);
		f->next_seq = pk->seq + (pk->payload_end - pk->payload_off);
	}
	return HS_VERDICT_PASS;
}

static __always_inline enum hs_verdict process(void *ctx, const int xdp)
{
	struct hs_counters *cnt;
	struct hs_config *cfg;
	const struct hs_trie *t;
	struct scratch *sc;
	struct pkt pk = {};
	__u32 key = 0, slot, len, sk = xdp ? 0 : 1;
	__u8 opts;
	int r;

	cnt = bpf_map_lookup_elem(&counters, &key);
	cfg = bpf_map_lookup_elem(&config, &key);
	sc = bpf_map_lookup_elem(&scratch, &sk);
	if (!cnt || !cfg || !sc)
		return HS_VERDICT_PASS;
	cnt->packets++;

	r = parse_packet(ctx_data(ctx, xdp), ctx_data_end(ctx, xdp), &pk);
	if (r == PARSE_TRUNC && !xdp) {
		/* Headers may sit partly outside the skb's linear head. */
		len = ctx_len(ctx, xdp);
		if (ctx_linearize(ctx, len < 512 ? len : 512, xdp) == 0)
			r = parse_packet(ctx_data(ctx, xdp), ctx_data_end(ctx, xdp), &pk);
	}
	if (r == PARSE_FRAG)
		cnt->fragments++;
	if (r == PARSE_TRUNC)
		cnt->truncated++;
	if (r != PARSE_OK)
		return HS_VERDICT_PASS;
	if (!port_inspected(cfg, pk.dport)) {
		if ((pk.tcp_flags & TCP_FL_RST) && port_inspected(cfg, pk.sport))
			track_reverse_rst(&pk, cnt);
		return HS_VERDICT_PASS;
	}
	if (pk.payload_end <= pk.payload_off) {
		track_control(&pk, sc, cnt);
		return HS_VERDICT_PASS;
	}
	cnt->inspected++;

	len = ctx_len(ctx, xdp);
	if (pk.payload_end > len) {
		/* The IP length claims bytes the packet does not have: the
		 * stack drops such packets; we leave them alone. */
		cnt->truncated++;
		return HS_VERDICT_PASS;
	}
	if (ctx_linearize(ctx, pk.payload_end < HS_MAX_BUF ? pk.payload_end : HS_MAX_BUF, xdp)) {
		cnt->scan_incomplete++;
		return policy_drops(cfg, cnt) ? HS_VERDICT_DROP : HS_VERDICT_PASS;
	}

	/* One slot per packet: an update never shows a packet two lists. */
	slot = cfg->active_slot & (HS_TRIE_SLOTS - 1);
	t = bpf_map_lookup_elem(&trie, &slot);
	if (!t)
		return HS_VERDICT_PASS;

	r = locate(&pk, sc, cnt);
	if (r == 2)
		return HS_VERDICT_PASS;
	if (r == 3)
		return policy_drops(cfg, cnt) ? HS_VERDICT_DROP : HS_VERDICT_PASS;

	opts = cfg->on_error == HS_POLICY_PASS ? HS_OPT_CONFLICT_GO_ON : 0;
	if (sc->fresh && cfg->untracked == HS_POLICY_SCAN)
		opts |= HS_OPT_UNTRACKED;
	run_scan(ctx, sc, t, &pk, opts, xdp);
	return conclude(ctx, &pk, sc, cfg, cnt, xdp);
}

SEC("xdp")
int hdrstrip_xdp(struct xdp_md *ctx)
{
	return ctx_verdict(process(ctx, HOOK_XDP), HOOK_XDP);
}

SEC("tc")
int hdrstrip_tc(struct __sk_buff *skb)
{
	return ctx_verdict(process(skb, HOOK_TC), HOOK_TC);
}
