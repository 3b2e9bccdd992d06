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
#include "parse.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HS_TRIE_SLOTS);
	__type(key, __u32);
	__type(value, struct hs_trie);
} trie SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hs_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hs_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HS_MAX_HIT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} header_hits SEC(".maps");

/*
 * Scan state lives in a per-CPU scratch map rather than on the stack: the
 * verifier does not track values in map memory, so every step starts from
 * the same abstract state and the loop's states converge at once (on the
 * stack, each exact phase/flags combination would be explored apart).
 * Slot 0 serves XDP, slot 1 TC: they never interrupt each other on a CPU,
 * but separate slots make that not matter.
 */
struct scan_state {
	struct hs_scan s;
	__u32 done; /* the scan reached a verdict or the end of the buffer */
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct scan_state);
} scratch SEC(".maps");

/* bpf_loop()'s argument: on the stack, as the helper requires; pointers may
 * not be stored in map values. */
struct scan_ctx {
	struct scan_state *st;
	const struct hs_trie *t;
	void *ctx;
};

/*
 * The scan runs under bpf_loop(): the verifier checks the callback once, not
 * once per byte. Each call makes up to HS_STEPS_PER_CALL steps, which keeps
 * the per-call overhead small next to the work; enough calls are allowed for
 * a 64 KiB payload even when every byte takes a step of its own, plus the
 * name bytes a masked line walks twice.
 */
#define HS_STEPS_PER_CALL 16
#define HS_MAX_CALLS (2 * (HS_MAX_BUF + 16) / HS_STEPS_PER_CALL)

static __always_inline void count_hit(const struct hs_trie *t, __u32 rule)
{
	__u32 slot = t->rules[(rule - 1) & (HS_MAX_NAMES - 1)].hit_slot;
	__u64 *hits = bpf_map_lookup_elem(&header_hits, &slot);

	if (hits)
		(*hits)++;
}

static __always_inline long scan_some(struct scan_ctx *c, const int xdp)
{
	void *data = ctx_data(c->ctx, xdp), *data_end = ctx_data_end(c->ctx, xdp);
	int i, r;

	struct scan_state *st = c->st;

	for (i = 0; i < HS_STEPS_PER_CALL; i++) {
		r = hs_scan_step(&st->s, c->t, data, data_end);
		if (r == HS_STEP_MORE)
			continue;
		if (r == HS_STEP_MATCH) {
			count_hit(c->t, st->s.rule);
			if (st->s.phase != HS_PH_DROPPED)
				continue;
		}
		st->done = 1;
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

static __always_inline int port_inspected(const struct hs_config *cfg, __u16 port)
{
	return (cfg->ports[(port >> 6) & (HS_PORT_WORDS - 1)] >> (port & 63)) & 1;
}

static __always_inline enum hs_verdict on_error(const struct hs_config *cfg,
						struct hs_counters *cnt)
{
	if (cfg->on_error == HS_POLICY_PASS)
		return HS_VERDICT_PASS;
	cnt->packets_dropped++;
	return HS_VERDICT_DROP;
}

static __always_inline void add_scan_counts(struct hs_counters *cnt, const struct hs_scan *s)
{
	cnt->http_requests += s->requests;
	cnt->headers_seen += s->seen;
	cnt->headers_matched += s->matched;
	cnt->headers_masked += s->masked;
}

static __always_inline enum hs_verdict process(void *ctx, const int xdp)
{
	struct scan_ctx c;
	struct scan_state *st;
	struct hs_counters *cnt;
	struct hs_config *cfg;
	const struct hs_trie *t;
	struct pkt pk = {};
	__u32 key = 0, slot, len, sk = xdp ? 0 : 1;
	int r;

	cnt = bpf_map_lookup_elem(&counters, &key);
	cfg = bpf_map_lookup_elem(&config, &key);
	st = bpf_map_lookup_elem(&scratch, &sk);
	if (!cnt || !cfg || !st)
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
	if (r != PARSE_OK || pk.payload_end <= pk.payload_off || !port_inspected(cfg, pk.dport))
		return HS_VERDICT_PASS;
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
		return on_error(cfg, cnt);
	}

	/* One slot per packet: an update never shows a packet two lists. */
	slot = cfg->active_slot & (HS_TRIE_SLOTS - 1);
	t = bpf_map_lookup_elem(&trie, &slot);
	if (!t)
		return HS_VERDICT_PASS;

	hs_scan_init(&st->s, pk.payload_off, pk.payload_end, pk.l4_off);
	st->done = 0;
	c.st = st;
	c.t = t;
	c.ctx = ctx;
	bpf_loop(HS_MAX_CALLS, xdp ? (void *)scan_cb_xdp : (void *)scan_cb_tc, &c, 0);

	add_scan_counts(cnt, &st->s);
	if (st->s.phase == HS_PH_DROPPED) {
		cnt->packets_dropped++;
		return HS_VERDICT_DROP;
	}
	if (st->s.phase == HS_PH_NOT_HTTP)
		cnt->non_http++;
	if (st->s.masked) {
		if (ctx_csum_apply(ctx, &st->s, pk.csum_off, xdp)) {
			cnt->scan_incomplete++;
			cnt->packets_dropped++;
			return HS_VERDICT_DROP; /* never send a masked packet with a bad checksum */
		}
		cnt->packets_modified++;
	}
	if (!st->done || (pk.payload_end > HS_MAX_BUF && st->s.phase < HS_PH_BODY)) {
		cnt->scan_incomplete++;
		return on_error(cfg, cnt);
	}
	return HS_VERDICT_PASS;
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
