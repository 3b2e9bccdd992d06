// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * hdrstrip's datapath: find HTTP/1.x requests in TCP payloads to inspected
 * ports, look every field name up in the trie, mask or drop internal ones.
 * One datapath, two entry points (XDP and TC clsact, ingress or egress).
 */
#include <linux/bpf.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/flow.h>
#include <hdrstrip/hooks.h>
#include <hdrstrip/maps.h>
#include <hdrstrip/scan.h>

#include "ctx.h"
#include "events.h"
#include "maps.bpf.h"
#include "normalize.h"
#include "parse.h"
#include "reject.h"
#include "scan_loop.h"
#include "floor_scan.h" /* after scan_loop.h: benchmarks only */
/* The head lane, beside the scan; HS_BENCH_NO_LANE (benchmarks only)
 * builds the datapath without it, and so do the lower-bound builds. */
#if !defined(HS_BENCH_NO_LANE) && !defined(HS_BENCH_FLOOR_SCAN)
#define HS_HEAD_LANE 1
#include "lane.h"
#endif

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

/* Request streams' HEAD history (maps.h): shared by a device's hooks, so
 * that the one that sees a connection's responses knows which answer a
 * HEAD. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, HS_METHODS_ENTRIES);
	__type(key, struct hs_flow_key);
	__type(value, struct hs_peer);
} methods SEC(".maps");

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
	struct pkt pk; /* the packet's layers (parse.h) */
	struct hs_segwork w; /* the segment's way through its flow (flow.h) */
	struct hs_stream got; /* the state a piece's scan reached */
	__u64 csum_acc; /* every rewrite of this packet, for the TCP checksum */
	__u32 done; /* SCAN_DONE (scan_loop.h): a verdict or the end of its piece */
	__u32 csum_class; /* enum norm_csum of the packet's TCP checksum */
	/* The piece scan_piece_*() scans: packet offsets, the TCP header's
	 * offset (checksum parity) and HS_OPT_*. */
	__u32 p_start;
	__u32 p_end;
	__u32 p_l4;
	__u32 p_opts;
	__u32 p_payload; /* the payload's offset */
	__s32 p_r; /* the first HS_SEG_* for scan_pieces_*() */
	/* The segment one_segment_*() takes (a GSO packet's piece). */
	__u32 s_seq;
	__u32 s_len;
	__u32 s_win;
	__u32 s_payload;
	__u32 s_flags;
	__u32 s_mss; /* the packet's pieces' length (its gso_size, or all of it) */
	__u32 why; /* enum hs_ev_reason of a drop (HS_EVR_ON_ERROR unless said) */
	/* ambiguous framings (and HTTP/2 prefaces) a segment's scans went on
	 * past */
	__u32 conflicts;
	__u32 redrop; /* the segment retransmits one a drop rule dropped (flow.h) */
	struct hs_event ev; /* the template of this packet's events */
	/* The segment's matches; for one that may retransmit a dropped one,
	 * its counts held in pend and what that one was (exp_*). */
	struct scan_matches m;
	struct hs_counters pend;
	__u32 exp_sig;
	__u32 exp_len;
	/* The packet's direction (HS_DIR_*): a response comes from an
	 * inspected port. For a response, its request stream's HEAD history
	 * (the methods map), when peer_known. */
	__u32 dir;
	__u32 peer_known;
	struct hs_peer peer;
	struct hs_flow_key peer_key; /* (in scratch: the stack is full) */
#ifdef HS_HEAD_LANE
	struct hs_lane lane;
#endif
	/* NAT (nat_inspected()): conntrack's end of the client's stream so
	 * far, and whether it saw the stream from its SYN. */
	__u32 nat_seq;
	__u32 nat_start;
	__u32 nat; /* nat_inspected() took the segment: its flow is marked HS_FL_NAT */
	__u32 rejects; /* the drop rule that stopped the segment is a reject rule */
	/* The flow before a GSO packet's first piece (track(), flow_save()). */
	__u32 fsaved;
	struct hs_flow fsave;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* One bpf_loop() call's steps (scan_loop.h), over the hook's packet. */
static __always_inline long scan_some(struct scan_arg *c, const int xdp)
{
	struct scratch *sc = c->sc;

	return scan_steps(c, &sc->s, &sc->done, NULL, ctx_data(c->ctx, xdp),
			  ctx_data_end(c->ctx, xdp));
}

static long scan_cb_xdp(__u32 i __attribute__((unused)), void *arg)
{
	return scan_some(arg, CTX_XDP);
}

static long scan_cb_tc(__u32 i __attribute__((unused)), void *arg)
{
	return scan_some(arg, CTX_SKB);
}

#ifdef HS_BENCH_FLOOR_SCAN
/*
 * A benchmark's lower bound (floor_scan.h; bench/bench.mk builds it as
 * build/bench/hdrstrip_floorscan.bpf.o): every piece is read by the floor
 * program's loop and left a kept line's rest. Everything around the scan
 * (parsing, the normaliser, the checksum check, the flow) runs as in the
 * real program: what it costs is what no scanner, however fast, can take
 * away.
 */
static __always_inline void floor_scan(void *ctx, struct scratch *sc, const struct hs_trie *t,
				       const int xdp)
{
	/* From the piece's start to the frame's end, as the floor reads it
	 * (an offset the verifier can bound with 4 KiB added: the benchmark's
	 * frames are shorter). */
	floor_scan_lines += floor_read((__u8 *)ctx_data(ctx, xdp) + (sc->p_start & 0x7fff),
				       ctx_data_end(ctx, xdp), t);
	floor_scan_done(&sc->s, &sc->done);
}
#endif

/*
 * Scan packet bytes [sc->p_start, sc->p_end) from sc->w.from. A function of
 * its own per hook (global: the verifier checks it, and the scan loop's
 * callback in it, once, not at each of a segment's pieces).
 */
static __always_inline int scan_piece(void *ctx, struct scratch *sc, const struct hs_trie *t,
				      const int xdp)
{
	struct scan_arg c = { .sc = sc, .t = t, .ctx = ctx };

	if (!sc || !t)
		return 0;
	c.ev = &sc->ev;
	c.key = &sc->pk.key;
	c.m = &sc->m;
	hs_scan_begin(&sc->s, &sc->w.from, sc->p_start, sc->p_end, sc->p_l4);
	sc->s.opts = sc->p_opts;
	sc->s.peer_known = (__u8)sc->peer_known;
	sc->s.peer_n = sc->peer.n;
	sc->s.peer_heads = sc->peer.heads;
	sc->done = 0;
#ifdef HS_BENCH_FLOOR_SCAN
	floor_scan(ctx, sc, t, xdp);
	return 0;
#endif
	bpf_loop(HS_MAX_CALLS, xdp ? (void *)scan_cb_xdp : (void *)scan_cb_tc, &c, 0);
	return 0;
}

__attribute__((noinline)) int scan_piece_xdp(struct xdp_md *ctx, struct scratch *sc,
					     const struct hs_trie *t)
{
	return scan_piece(ctx, sc, t, CTX_XDP);
}

__attribute__((noinline)) int scan_piece_tc(struct __sk_buff *ctx, struct scratch *sc,
					    const struct hs_trie *t)
{
	return scan_piece(ctx, sc, t, CTX_SKB);
}

#ifdef HS_HEAD_LANE
/*
 * The head lane (bpf/lane.h) on the piece scan_piece_*() would scan: a
 * piece that is one whole request head of the lane's shape, at a
 * request's start, in a stream of requests that masks (no observe mode,
 * not proxy mode's remove). 1 when the lane took it: its matches reported
 * as the scan reports them (scan_match(): hits, events, a drop's hold),
 * then its lines masked, and sc->s and sc->done as the scan leaves them
 * (hs_lane_to_scan()); 0, nothing written, for scan_piece_*(). A global
 * function of its own beside scan_piece_*(): inside it, the trie's walk
 * would pass the verifier's eight frames.
 */
static __always_inline int lane_piece(void *ctx, struct scratch *sc, const struct hs_trie *t,
				      const int xdp)
{
	struct scan_arg c = { .sc = sc, .t = t, .ctx = ctx };
	struct hs_lane *L;
	__u32 n, k;

	if (!sc || !t)
		return 0;
	L = &sc->lane;
	if (sc->w.from.phase != HS_PH_REQ_LEAD ||
	    (sc->w.from.conn & (HS_CN_UNTRACKED | HS_CN_RESPONSE | HS_CN_EITHER)) ||
	    (sc->p_opts & (HS_OPT_OBSERVE | HS_OPT_REMOVE)) ||
	    !lane_lines_all(ctx, L, t, sc->p_start, sc->p_end, xdp))
		return 0;
	hs_scan_begin(&sc->s, &sc->w.from, sc->p_start, sc->p_end, sc->p_l4);
	sc->s.opts = sc->p_opts;
	sc->s.peer_known = (__u8)sc->peer_known;
	sc->s.peer_n = sc->peer.n;
	sc->s.peer_heads = sc->peer.heads;
	c.ev = &sc->ev;
	c.key = &sc->pk.key;
	c.m = &sc->m;
	/* The matches, in order, before the masks: an event copies the name
	 * as it came. */
	k = L->masked;
	for (n = 0; n < HS_LANE_MAX_MASKS && n < k; n++) {
		sc->s.rule = L->rule[n];
		sc->s.name_off = L->mask_from[n];
		sc->s.name_len = L->nlen[n];
		scan_match(&c, &sc->s, ctx_data(ctx, xdp), ctx_data_end(ctx, xdp));
	}
	lane_masks(ctx, L, t, sc->s.csum_par, xdp);
	hs_lane_to_scan(L, &sc->s);
	sc->done = SCAN_DONE;
	return 1;
}

__attribute__((noinline)) int lane_piece_xdp(struct xdp_md *ctx, struct scratch *sc,
					     const struct hs_trie *t)
{
	return lane_piece(ctx, sc, t, CTX_XDP);
}

__attribute__((noinline)) int lane_piece_tc(struct __sk_buff *ctx, struct scratch *sc,
					    const struct hs_trie *t)
{
	return lane_piece(ctx, sc, t, CTX_SKB);
}
#define scan_or_lane_xdp(ctx, sc, t) (lane_piece_xdp(ctx, sc, t) || scan_piece_xdp(ctx, sc, t))
#define scan_or_lane_tc(ctx, sc, t) (lane_piece_tc(ctx, sc, t) || scan_piece_tc(ctx, sc, t))
#else
#define scan_or_lane_xdp(ctx, sc, t) scan_piece_xdp(ctx, sc, t)
#define scan_or_lane_tc(ctx, sc, t) scan_piece_tc(ctx, sc, t)
#endif

/* What the segment's way through its flow found. */
static __always_inline void add_seg_counts(struct hs_counters *cnt, const struct hs_segwork *w)
{
	__u8 ev = w->ev;

	cnt->flows_new += !!(ev & HS_EV_FLOW_NEW);
	cnt->flows_closed += !!(ev & HS_EV_FLOW_CLOSED);
	cnt->rst_ignored += !!(ev & HS_EV_RST_IGNORED);
	cnt->syn_in_flow += !!(ev & HS_EV_SYN_IN_FLOW);
	cnt->retransmits += !!(ev & HS_EV_RETRANSMIT);
	cnt->untracked += !!(ev & HS_EV_UNTRACKED);
	switch (w->why) {
	case HS_WHY_MISMATCH:
		cnt->retransmit_mismatch++;
		break;
	case HS_WHY_UNVERIFIED:
		cnt->retransmit_unverified++;
		break;
	case HS_WHY_OUT_OF_ORDER:
		cnt->out_of_order++;
		break;
	case HS_WHY_OVERSIZE:
		cnt->oversize++;
		break;
	case HS_WHY_NO_ACK:
		cnt->malformed++;
		break;
	default: /* counted by its event */
		break;
	}
}

/*
 * Scan the segment's pieces (flow.h) while hs_seg_*() hands them out, from
 * sc->p_r, the first HS_SEG_*. Returns the final HS_SEG_* (HS_SEG_DROP
 * with w.why 0 for a drop rule, HS_SEG_POLICY for framing or a scan the
 * policy decides). Global, like scan_piece_*(): checked once by the
 * verifier, not once per path that reaches it.
 */
static __always_inline int scan_pieces(void *ctx, struct scratch *sc, struct hs_flow *f,
				       const struct hs_trie *t, struct hs_counters *cnt,
				       const int xdp)
{
	int i, r;
	__u8 phase;

	if (!sc || !f || !t || !cnt)
		return HS_SEG_DROP;
	r = sc->p_r;
	for (i = 0; i < HS_SEG_MAX_PIECES && r == HS_SEG_SCAN; i++) {
		sc->p_start = sc->p_payload + sc->w.off;
		sc->p_end = sc->p_payload + sc->w.end;
		if (xdp)
			scan_or_lane_xdp(ctx, sc, t);
		else
			scan_or_lane_tc(ctx, sc, t);
		count_scan(sc->m.hold ? &sc->pend : cnt, &sc->s, 0, 1);
		sc->conflicts += sc->s.conflicts + sc->s.h2c;
		cnt->split_names += sc->s.premasked;
		sc->csum_acc += sc->s.csum_acc;
		phase = sc->s.st.phase;
		if (phase == HS_PH_DROPPED) {
			sc->rejects = t->rules[(sc->s.rule - 1) & (HS_MAX_NAMES - 1)].action ==
				      HS_ACT_REJECT;
			return HS_SEG_DROP;
		}
		if (phase == HS_PH_HALT)
			return HS_SEG_POLICY;
		if (!sc->done) {
			cnt->scan_incomplete++;
			return HS_SEG_POLICY;
		}
		hs_scan_finish(&sc->s, &sc->got);
		hs_seg_scanned(&sc->w, hs_scan_steady(&sc->s), sc->p_payload);
		r = hs_seg_next(&sc->w, f, &sc->got);
	}
	if (r == HS_SEG_SCAN) {
		sc->w.why = HS_WHY_UNVERIFIED;
		return HS_SEG_DROP;
	}
	return r;
}

__attribute__((noinline)) int scan_pieces_xdp(struct xdp_md *ctx, struct scratch *sc,
					      struct hs_flow *f, const struct hs_trie *t,
					      struct hs_counters *cnt)
{
	return scan_pieces(ctx, sc, f, t, cnt, CTX_XDP);
}

__attribute__((noinline)) int scan_pieces_tc(struct __sk_buff *ctx, struct scratch *sc,
					     struct hs_flow *f, const struct hs_trie *t,
					     struct hs_counters *cnt)
{
	return scan_pieces(ctx, sc, f, t, cnt, CTX_SKB);
}

/* The key's 4-tuple as the socket and conntrack lookups take it; returns
 * the tuple's size. */
static __always_inline __u32 key_tuple(struct bpf_sock_tuple *tup, const struct hs_flow_key *k)
{
	if (k->family == 4) {
		tup->ipv4.saddr = k->saddr[0];
		tup->ipv4.daddr = k->daddr[0];
		tup->ipv4.sport = k->sport;
		tup->ipv4.dport = k->dport;
		return sizeof(tup->ipv4);
	}
	__builtin_memcpy(tup->ipv6.saddr, k->saddr, 16);
	__builtin_memcpy(tup->ipv6.daddr, k->daddr, 16);
	tup->ipv6.sport = k->sport;
	tup->ipv6.dport = k->dport;
	return sizeof(tup->ipv6);
}

/* Socket states (include/net/tcp_states.h) */
#define HS_TCP_TIME_WAIT 6
#define HS_TCP_CLOSE 7
#define HS_TCP_LISTEN 10
#define HS_TCP_NEW_SYN_RECV 12

/*
 * A SYN without a flow: does the stack that receives it (a socket in this
 * namespace) hold an open connection on its tuple? Then it answers with a
 * challenge ACK and goes on with that connection (RFC 5961), which must
 * not be scanned as a new one. Only a local receiver is found: at egress,
 * and for traffic routed through, the answer is no (README: blind spots).
 */
static __always_inline int conn_open(void *ctx, struct scratch *sc)
{
	struct bpf_sock_tuple tup = {};
	struct bpf_sock *sk;
	__u32 size = key_tuple(&tup, &sc->pk.key);
	int open;

	sk = bpf_skc_lookup_tcp(ctx, &tup, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	open = sk->state != HS_TCP_LISTEN && sk->state != HS_TCP_TIME_WAIT &&
	       sk->state != HS_TCP_NEW_SYN_RECV && sk->state != HS_TCP_CLOSE;
	bpf_sk_release(sk);
	return open;
}

__attribute__((noinline)) int conn_open_xdp(struct xdp_md *ctx, struct scratch *sc)
{
	return sc ? conn_open(ctx, sc) : 0;
}

__attribute__((noinline)) int conn_open_tc(struct __sk_buff *ctx, struct scratch *sc)
{
	return sc ? conn_open(ctx, sc) : 0;
}

/*
 * A UDP datagram to a port the tunnel table does not name (pkt.udp_ask):
 * does the socket the stack hands it to take packets out of UDP
 * (udp_sock.encap_type or encap_rcv, as bpf/udp_encap.bpf.c reads them at
 * attach: VXLAN, GENEVE, FOU, GUE, WireGuard, L2TP, ESP in UDP...)? Such a
 * socket made after the attach is in no table, and what it takes out may
 * be a request for an inspected socket: 1 sends the datagram to the
 * on-error policy. Any other UDP socket gets UDP. The fields are read
 * through bpf_rdonly_cast() (Linux 6.2): before it, the attach's table is
 * all the hooks know, as it was.
 */
struct udp_sock___hs {
	__u8 encap_type;
	void *encap_rcv;
} __attribute__((preserve_access_index));

extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id__k) __ksym __weak;

static __always_inline int udp_encap_sock(void *ctx, struct scratch *sc)
{
	struct bpf_sock_tuple tup = {};
	struct udp_sock___hs *up;
	struct bpf_sock *sk;
	__u32 size = key_tuple(&tup, &sc->pk.key);
	int encap;

	if (!bpf_rdonly_cast)
		return 0;
	sk = bpf_sk_lookup_udp(ctx, &tup, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	up = bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct udp_sock___hs));
	encap = up->encap_type || up->encap_rcv;
	bpf_sk_release(sk);
	return encap;
}

__attribute__((noinline)) int udp_encap_xdp(struct xdp_md *ctx, struct scratch *sc)
{
	return sc ? udp_encap_sock(ctx, sc) : 0;
}

__attribute__((noinline)) int udp_encap_tc(struct __sk_buff *ctx, struct scratch *sc)
{
	return sc ? udp_encap_sock(ctx, sc) : 0;
}

/*
 * The flow's part: find the segment's flow, scan its pieces, keep what it
 * taught. Returns the verdict.
 */
/*
 * One segment's way through its flow: sc->s_seq (as in a TCP header),
 * sc->s_len payload bytes from packet offset sc->s_payload, of which the
 * scanner reaches sc->s_win, TCP flags sc->s_flags. Returns the verdict.
 */
/* Observe mode passes a packet enforce mode drops for @why: counted, and
 * said in an event (action observe). */
static __always_inline void observed_drop(struct scratch *sc, struct hs_counters *cnt, __u8 why)
{
	cnt->packets_observed++;
	sc->m.obs_drop |= 2; /* counted: a drop rule's match adds nothing */
	event_drop(&sc->ev, &sc->pk.key, HS_ACT_OBSERVE, why);
}

/* A drop rule dropped the segment: its flow remembers where it starts, so
 * that its retransmissions are told apart. */
static __always_inline void rule_dropped(struct scratch *sc, struct hs_flow *f)
{
	sc->why = HS_EVR_RULE;
	if (f) {
		f->fl |= HS_FL_RULE_DROP;
		f->drop_seq = sc->s_seq;
		f->drop_len = sc->s_len;
		f->drop_sig = sc->m.sig;
	}
}

/*
 * A segment that started where a drop rule's segment did (sc->m.hold): the
 * retransmission of that segment when a drop rule dropped it again, with
 * the same length and the same rules matched; its hits, events and scan
 * counts go nowhere (the first copy's were counted). Anything else there
 * is counted and reported as any segment is: what was held goes out now.
 */
static __always_inline void held_settle(struct scratch *sc, const struct hs_trie *t,
					struct hs_counters *cnt, enum hs_verdict v)
{
	__u32 n = sc->m.n, i;

	sc->redrop = v == HS_VERDICT_DROP && sc->why == HS_EVR_RULE && sc->m.sig == sc->exp_sig &&
		     sc->s_len == sc->exp_len && n <= SCAN_HELD;
	if (sc->redrop)
		return;
	for (i = 0; i < HS_N_COUNTERS; i++)
		((__u64 *)cnt)[i] += ((const __u64 *)&sc->pend)[i];
	for (i = 0; i < SCAN_HELD && i < n; i++) {
		count_hit(t, sc->m.rule[i]);
		if (sc->m.ev[i].on)
			event_emit(&sc->m.ev[i], &sc->pk.key);
	}
}

/*
 * A request stream's HEAD history, for the hook that sees its responses:
 * written when a request began in what the flow took in order. (The
 * server answers a request only once it has it: once this hook passed it.)
 */
static __always_inline void publish_methods(struct scratch *sc, struct hs_flow *f)
{
	struct hs_peer *p;

	if (f->pub_n == f->cur.nmsg)
		return;
	f->pub_n = f->cur.nmsg;
	/* In place when the entry is there (an update would take a new LRU
	 * element each time): the history first, then the count that makes
	 * it readable, which a reader takes in the other order. */
	p = bpf_map_lookup_elem(&methods, &sc->pk.key);
	if (p) {
		*(volatile __u64 *)&p->heads = f->cur.heads;
		barrier();
		*(volatile __u16 *)&p->n = f->cur.nmsg;
		return;
	}
	__builtin_memset(&sc->peer, 0, sizeof(sc->peer));
	sc->peer.heads = f->cur.heads;
	sc->peer.n = f->cur.nmsg;
	bpf_map_update_elem(&methods, &sc->pk.key, &sc->peer, BPF_ANY);
}

/* A response's request stream: the same connection's other direction. */
static __always_inline void peer_lookup(struct scratch *sc)
{
	struct hs_flow_key *k = &sc->peer_key;
	struct hs_peer *p;

	__builtin_memcpy(k->saddr, sc->pk.key.daddr, sizeof(k->saddr));
	__builtin_memcpy(k->daddr, sc->pk.key.saddr, sizeof(k->daddr));
	k->sport = sc->pk.key.dport;
	k->dport = sc->pk.key.sport;
	k->family = sc->pk.key.family;
	p = bpf_map_lookup_elem(&methods, k);
	sc->peer_known = p != NULL;
	if (p) {
		sc->peer.n = *(volatile __u16 *)&p->n;
		barrier();
		sc->peer.heads = *(volatile __u64 *)&p->heads;
	}
}

static __always_inline enum hs_verdict segment_body(void *ctx, struct scratch *sc,
						    const struct hs_trie *t, struct hs_config *cfg,
						    struct hs_counters *cnt, const int xdp)
{
	const struct pkt *pk;
	struct hs_flow *f;
	__u32 len;
	int r;

	if (!sc || !t || !cfg || !cnt)
		return HS_VERDICT_PASS;
	pk = &sc->pk;
	len = sc->s_len;
	f = bpf_map_lookup_elem(&flows, &pk->key);
	/* Between two inspected ports: the direction its handshake gave it. */
	if (f && sc->dir == HS_DIR_EITHER)
		sc->dir = hs_stream_dir(&f->cur);
	hs_seg_init(&sc->w, sc->s_seq, len, sc->s_win, sc->s_flags, (__u8)sc->dir);
	/* A NAT'd connection whose first data byte this is: its flow starts
	 * here (flow.h). */
	sc->w.stream_start = !f && sc->nat_start && sc->s_seq == sc->nat_seq;
	if (!hs_flow_live(f) && (sc->s_flags & (HS_TCP_SYN | HS_TCP_ACK)) == HS_TCP_SYN)
		sc->w.conn_open = (__u8)(xdp ? conn_open_xdp(ctx, sc) : conn_open_tc(ctx, sc));
	r = hs_seg_begin(&sc->w, f, cfg->untracked);
	if (r == HS_SEG_DROP && sc->w.why == HS_WHY_UNTRACKED && cfg->observe) {
		/* Observe mode: what --untracked drop would drop is passed,
		 * unscanned, and said. */
		observed_drop(sc, cnt, HS_EVR_UNTRACKED);
		hs_seg_init(&sc->w, sc->s_seq, len, sc->s_win, sc->s_flags, (__u8)sc->dir);
		r = hs_seg_begin(&sc->w, f, HS_POLICY_PASS);
	}
	if (r == HS_SEG_CREATE) {
		/* BPF_ANY: a SYN starts the tuple's connection afresh. Its
		 * time, for 'hdrstrip flows'. */
		sc->w.fresh.born_s = (__u32)(bpf_ktime_get_boot_ns() / HS_NS_PER_S);
		bpf_map_update_elem(&flows, &pk->key, &sc->w.fresh, BPF_ANY);
		f = bpf_map_lookup_elem(&flows, &pk->key);
		if (!f) {
			cnt->scan_incomplete++;
			return policy_drops(cfg) ? HS_VERDICT_DROP : HS_VERDICT_PASS;
		}
		r = hs_seg_begin(&sc->w, f, cfg->untracked);
	}
	/* Followed through NAT (nat_inspected()): said in the flow, for a
	 * segment conntrack will have forgotten. */
	if (sc->nat && f)
		f->fl |= HS_FL_NAT;
	sc->p_payload = sc->s_payload;
	sc->p_l4 = pk->l4_off;
	/* Observe mode goes on where the pass policy does. */
	sc->p_opts = cfg->on_error == HS_POLICY_PASS || cfg->observe ? HS_OPT_CONFLICT_GO_ON : 0;
	if (cfg->observe)
		sc->p_opts |= HS_OPT_OBSERVE;
	sc->conflicts = 0;
	if (f && (f->fl & HS_FL_RULE_DROP) && f->drop_seq == sc->s_seq) {
		sc->m.hold = 1;
		sc->exp_sig = f->drop_sig;
		sc->exp_len = f->drop_len;
		__builtin_memset(&sc->pend, 0, sizeof(sc->pend));
	}
	sc->ev.on = cfg->event_rate != 0;
	sc->ev.dir = (__u8)sc->dir;
	sc->peer_known = 0;
	if (sc->dir == HS_DIR_RESPONSE)
		peer_lookup(sc);
	if (f && r == HS_SEG_SCAN) {
		sc->p_r = r;
		r = xdp ? scan_pieces_xdp(ctx, sc, f, t, cnt) : scan_pieces_tc(ctx, sc, f, t, cnt);
	}
	/* Ambiguous framing (or an HTTP/2 preface) the drop policy would
	 * have stopped at. */
	if (cfg->observe && policy_drops(cfg) && sc->conflicts)
		observed_drop(sc, cnt, HS_EVR_ON_ERROR);
	if (r == HS_SEG_POLICY && (cfg->on_error == HS_POLICY_PASS || cfg->observe)) {
		/* Passed, checked line by line where that can be done
		 * (flow.h). */
		if (cfg->on_error != HS_POLICY_PASS)
			observed_drop(sc, cnt, HS_EVR_ON_ERROR);
		r = hs_seg_policy_pass(&sc->w, f);
		if (f && r == HS_SEG_SCAN) {
			sc->p_r = r;
			r = xdp ? scan_pieces_xdp(ctx, sc, f, t, cnt)
				: scan_pieces_tc(ctx, sc, f, t, cnt);
		}
		add_seg_counts(cnt, &sc->w);
		if (r == HS_SEG_DROP) {
			rule_dropped(sc, f);
			return HS_VERDICT_DROP;
		}
		return HS_VERDICT_PASS;
	}
	add_seg_counts(cnt, &sc->w);
	if (r == HS_SEG_DROP) {
		if (sc->w.why == HS_WHY_NONE)
			rule_dropped(sc, f);
		else
			sc->why = sc->w.why == HS_WHY_UNTRACKED ? HS_EVR_UNTRACKED : HS_EVR_INVALID;
		return HS_VERDICT_DROP;
	}
	if (r == HS_SEG_POLICY)
		return HS_VERDICT_DROP;
	/* (A closed flow stays, and so does a request stream's history: its
	 * responses may follow a FIN. A stream started afresh writes its own
	 * at once (hs_flow.pub_n); the LRU drops the rest.) */
	if (f && sc->dir == HS_DIR_REQUEST && (t->flags & HS_TRIE_F_RESPONSE_RULES))
		publish_methods(sc, f);
	return HS_VERDICT_PASS;
}

static __always_inline enum hs_verdict one_segment(void *ctx, struct scratch *sc,
						   const struct hs_trie *t, struct hs_config *cfg,
						   struct hs_counters *cnt, const int xdp)
{
	enum hs_verdict v;

	if (!sc || !t || !cfg || !cnt)
		return HS_VERDICT_PASS;
	sc->m.sig = 0;
	sc->m.n = 0;
	sc->m.hold = 0;
	sc->redrop = 0;
	v = segment_body(ctx, sc, t, cfg, cnt, xdp);
	if (sc->m.hold)
		held_settle(sc, t, cnt, v);
	return v;
}

__attribute__((noinline)) int one_segment_xdp(struct xdp_md *ctx, struct scratch *sc,
					      const struct hs_trie *t, struct hs_config *cfg,
					      struct hs_counters *cnt)
{
	return one_segment(ctx, sc, t, cfg, cnt, CTX_XDP);
}

__attribute__((noinline)) int one_segment_tc(struct __sk_buff *ctx, struct scratch *sc,
					     const struct hs_trie *t, struct hs_config *cfg,
					     struct hs_counters *cnt)
{
	return one_segment(ctx, sc, t, cfg, cnt, CTX_SKB);
}

/*
 * A GSO or GRO packet is passed or dropped whole, but its pieces go through
 * the flow one at a time: when a later piece is dropped, the earlier ones
 * have moved the flow on over bytes the stack will never get, and every
 * resend of them would be checked against a state that is not the
 * stream's (retransmit_unverified, out_of_order: the connection stalls).
 * So the flow as it was before the packet is kept, and put back then; only
 * what a drop rule's drop notes of itself stays.
 */
__attribute__((noinline)) int flow_save(struct scratch *sc)
{
	struct hs_flow *f;

	if (!sc)
		return 0;
	f = bpf_map_lookup_elem(&flows, &sc->pk.key);
	sc->fsaved = f != NULL;
	if (f)
		__builtin_memcpy(&sc->fsave, f, sizeof(*f));
	return 0;
}

__attribute__((noinline)) int flow_restore(struct scratch *sc)
{
	__u32 rule, seq, len, sig;
	struct hs_flow *f;

	if (!sc || !sc->fsaved)
		return 0;
	f = bpf_map_lookup_elem(&flows, &sc->pk.key);
	if (!f)
		return 0;
	rule = f->fl & HS_FL_RULE_DROP;
	seq = f->drop_seq;
	len = f->drop_len;
	sig = f->drop_sig;
	__builtin_memcpy(f, &sc->fsave, sizeof(*f));
	if (rule) {
		f->fl |= HS_FL_RULE_DROP;
		f->drop_seq = seq;
		f->drop_len = len;
		f->drop_sig = sig;
	}
	return 0;
}

/* GSO/GRO packets are cut in this many pieces at most (the last takes the
 * rest). */
#define HS_MAX_GSO_PIECES 64

/*
 * The packet in sc->pk through its flow. A GSO or GRO packet (TC) is taken
 * as the segments its gso_size cuts it in on the wire, one after the
 * other: a loss after hdrstrip makes TCP send such a segment again, which
 * must start where a checkpoint is (flow.h). Any segment dropped drops the
 * packet.
 */
static __always_inline enum hs_verdict track(void *ctx, struct scratch *sc, const struct hs_trie *t,
					     struct hs_config *cfg, struct hs_counters *cnt,
					     const int xdp)
{
	const struct pkt *pk;
	__u32 len, off, piece, k, end;

	if (!sc || !t || !cfg || !cnt)
		return HS_VERDICT_PASS;
	pk = &sc->pk;
	len = pk->payload_end - pk->payload_off;
	sc->s_mss = 0;
	if (!xdp && !(pk->tcp_flags & (HS_TCP_SYN | HS_TCP_RST)))
		sc->s_mss = ((struct __sk_buff *)ctx)->gso_size;
	if (!sc->s_mss || len <= sc->s_mss)
		sc->s_mss = len;
	sc->s_payload = pk->payload_off;
	sc->s_len = 0;
	sc->fsaved = 0;
	if (sc->s_mss < len)
		flow_save(sc);
	/* Only the piece's number lives across the call: the rest is read
	 * from the scratch again (the stack's 512 bytes are shared by the
	 * whole chain down to the scan's steps). */
	for (k = 0; k < HS_MAX_GSO_PIECES; k++) {
		len = pk->payload_end - pk->payload_off;
		off = sc->s_payload + sc->s_len - pk->payload_off;
		if (off >= len && k)
			break;
		piece = k == HS_MAX_GSO_PIECES - 1 || len - off <= sc->s_mss ? len - off
									     : sc->s_mss;
		sc->s_seq = pk->seq + off;
		sc->s_len = piece;
		sc->s_payload = pk->payload_off + off;
		/* A FIN comes after the last piece. */
		sc->s_flags = off + piece < len ? pk->tcp_flags & ~HS_TCP_FIN : pk->tcp_flags;
		end = sc->s_payload + piece;
		sc->s_win = sc->s_payload >= HS_MAX_BUF
				    ? 0
				    : (end < HS_MAX_BUF ? end : HS_MAX_BUF) - sc->s_payload;
		if ((xdp ? one_segment_xdp(ctx, sc, t, cfg, cnt)
			 : one_segment_tc(ctx, sc, t, cfg, cnt)) == HS_VERDICT_DROP) {
			if (k)
				flow_restore(sc);
			return HS_VERDICT_DROP;
		}
	}
	return HS_VERDICT_PASS;
}

__attribute__((noinline)) int track_xdp(struct xdp_md *ctx, struct scratch *sc,
					const struct hs_trie *t, struct hs_config *cfg,
					struct hs_counters *cnt)
{
	return track(ctx, sc, t, cfg, cnt, CTX_XDP);
}

__attribute__((noinline)) int track_tc(struct __sk_buff *ctx, struct scratch *sc,
				       const struct hs_trie *t, struct hs_config *cfg,
				       struct hs_counters *cnt)
{
	return track(ctx, sc, t, cfg, cnt, CTX_SKB);
}

/*
 * The normaliser's checks (normalize.h) of the packet in sc->pk: 0 to go
 * on (sc->csum_class set, urgent data cleared), 1 to drop.
 */
static __always_inline int normalize(void *ctx, struct scratch *sc, struct hs_config *cfg,
				     struct hs_counters *cnt, const int xdp)
{
	struct pkt *pk;

	if (!sc || !cfg || !cnt)
		return 1;
	pk = &sc->pk;
	sc->why = HS_EVR_INVALID;
	if (!pk->ipv6 && norm_ip4_csum(ctx, pk, xdp)) {
		cnt->bad_checksum++;
		return 1;
	}
	sc->csum_class = norm_tcp_csum(ctx, pk, xdp);
	if (sc->csum_class == NORM_CSUM_BAD) {
		cnt->bad_checksum++;
		return 1;
	}
	sc->why = HS_EVR_URGENT;
	if (sc->csum_class == NORM_CSUM_OFFLOAD)
		cnt->csum_unchecked++;
	sc->csum_acc = 0;
	if (pk->tcp_flags & HS_TCP_URG) {
		cnt->urgent_cleared++;
		/* Observe mode leaves the segment as it is. */
		if (cfg->urgent == HS_URGENT_DROP ||
		    (!cfg->observe && norm_clear_urgent(ctx, pk, &sc->csum_acc, xdp))) {
			return 1;
		}
		pk->tcp_flags &= ~HS_TCP_URG;
	}
	sc->why = HS_EVR_ON_ERROR;
	return 0;
}

__attribute__((noinline)) int normalize_xdp(struct xdp_md *ctx, struct scratch *sc,
					    struct hs_config *cfg, struct hs_counters *cnt)
{
	return normalize(ctx, sc, cfg, cnt, CTX_XDP);
}

__attribute__((noinline)) int normalize_tc(struct __sk_buff *ctx, struct scratch *sc,
					   struct hs_config *cfg, struct hs_counters *cnt)
{
	return normalize(ctx, sc, cfg, cnt, CTX_SKB);
}

/* How the device frames packets (HS_L2_*, parse.h): the loader reads the
 * device's type before it loads the program. */
const volatile __u8 link_type = HS_L2_ETHER;

/* The packet's layers into sc->pk (parse.h); @big: see parse_ipv4(). */
static __always_inline int parse(void *ctx, struct scratch *sc, const struct hs_config *cfg,
				 __u32 big, const int xdp)
{
	void *data = ctx_data(ctx, xdp), *end = ctx_data_end(ctx, xdp);

	if (!sc || !cfg)
		return PARSE_TRUNC;
	__builtin_memset(&sc->pk, 0, sizeof(sc->pk));
	/* XDP in skb (generic) mode runs after GRO: the frame may be a BIG
	 * TCP one, its length left to the frame. (A native frame of that
	 * kind is no frame the stack takes: what it changes, flow.h makes
	 * harmless.) */
	if (xdp)
		big = end - data;
	return parse_packet(data, end, &sc->pk, ctx_len(ctx, xdp), big, cfg,
			    link_type == HS_L2_NONE ? HS_L2_NONE : HS_L2_ETHER);
}

__attribute__((noinline)) int parse_xdp(struct xdp_md *ctx, struct scratch *sc,
					const struct hs_config *cfg)
{
	return parse(ctx, sc, cfg, 0, CTX_XDP);
}

__attribute__((noinline)) int parse_tc(struct __sk_buff *ctx, struct scratch *sc,
				       const struct hs_config *cfg, __u32 big)
{
	return parse(ctx, sc, cfg, big, CTX_SKB);
}

/* Has the active list rules for responses? */
static __always_inline int responses_on(struct hs_config *cfg)
{
	const struct hs_trie *t = active_trie(cfg);

	return t && (t->flags & HS_TRIE_F_RESPONSE_RULES);
}

/*
 * Which way the packet in sc->pk goes, into sc->dir: 0 for one to inspect
 * (to an inspected port: a request; or, when the list has rules for
 * responses, from one: a response), 1 for one to pass. Between two
 * inspected ports (a client may bind its port to one), the handshake
 * decides: a SYN starts requests, a SYN-ACK responses, and the flow keeps
 * its direction; a segment of a connection whose handshake was not seen
 * may be either (HS_DIR_EITHER: line by line, both directions' rules).
 * (A function of its own: the entry program's stack is part of the scan
 * loop's, which has none to spare.)
 */
static __attribute__((noinline)) int packet_dir(struct scratch *sc, struct hs_config *cfg)
{
	int to, from;

	if (!sc || !cfg)
		return 1;
	sc->dir = HS_DIR_REQUEST;
	to = port_inspected(cfg, sc->pk.dport);
	from = port_inspected(cfg, sc->pk.sport) && responses_on(cfg);
	if (to && from) {
		__u8 syn = sc->pk.tcp_flags & (HS_TCP_SYN | HS_TCP_ACK);

		sc->dir = syn == HS_TCP_SYN		     ? HS_DIR_REQUEST
			  : syn == (HS_TCP_SYN | HS_TCP_ACK) ? HS_DIR_RESPONSE
							     : HS_DIR_EITHER;
		return 0;
	}
	if (to)
		return 0;
	if (!from)
		return 1;
	sc->dir = HS_DIR_RESPONSE;
	return 0;
}

/*
 * NAT (DNAT, REDIRECT, docker -p, NodePort) rewrites a connection's port
 * after XDP and tc-ingress have seen its packets: conntrack knows where it
 * goes (its reply tuple's source is the socket's own address and port).
 * The lookup kfuncs (net/netfilter/nf_conntrack_bpf.c); the fields read,
 * by name through CO-RE.
 */
struct bpf_ct_opts___hs {
	__s32 netns_id;
	__s32 error;
	__u8 l4proto;
	__u8 dir;
	__u16 ct_zone_id;
	__u8 ct_zone_dir;
	__u8 reserved[3];
};

union nf_conntrack_man_proto___hs {
	__be16 all;
} __attribute__((preserve_access_index));

struct nf_conntrack_man___hs {
	union nf_conntrack_man_proto___hs u;
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple___hs {
	struct nf_conntrack_man___hs src;
} __attribute__((preserve_access_index));

struct nf_conntrack_tuple_hash___hs {
	struct nf_conntrack_tuple___hs tuple;
} __attribute__((preserve_access_index));

struct ip_ct_tcp_state___hs {
	__u32 td_end; /* the sender's highest sequence number, plus its length */
	__u8 flags;
} __attribute__((preserve_access_index));

struct ip_ct_tcp___hs {
	struct ip_ct_tcp_state___hs seen[2];
} __attribute__((preserve_access_index));

union nf_conntrack_proto___hs {
	struct ip_ct_tcp___hs tcp;
} __attribute__((preserve_access_index));

struct nf_conn___hs {
	struct nf_conntrack_tuple_hash___hs tuplehash[2];
	union nf_conntrack_proto___hs proto;
} __attribute__((preserve_access_index));

/* ip_ct_tcp_state.flags: a connection picked up mid-stream (its SYN never
 * seen by conntrack). */
#define HS_CT_TCP_FLAG_BE_LIBERAL 0x08

extern struct nf_conn___hs *bpf_xdp_ct_lookup(struct xdp_md *ctx, struct bpf_sock_tuple *t,
					      __u32 t_len, struct bpf_ct_opts___hs *o,
					      __u32 o_len) __ksym __weak;
extern struct nf_conn___hs *bpf_skb_ct_lookup(struct __sk_buff *ctx, struct bpf_sock_tuple *t,
					      __u32 t_len, struct bpf_ct_opts___hs *o,
					      __u32 o_len) __ksym __weak;
extern void bpf_ct_release(struct nf_conn___hs *ct) __ksym __weak;

#define HS_CT_DIR_REPLY 1

/* The port the segment's socket will see, as conntrack maps it (host
 * order), or 0 when conntrack has no connection for it. */
static __always_inline __u16 ct_dport(void *ctx, struct scratch *sc, const int xdp)
{
	struct bpf_ct_opts___hs o = { .netns_id = -1 /* BPF_F_CURRENT_NETNS */,
				      .l4proto = IPPROTO_TCP };
	struct bpf_sock_tuple tup = {};
	struct nf_conn___hs *ct;
	__u32 size = key_tuple(&tup, &sc->pk.key);
	__u16 port;

	if (xdp) {
		if (!bpf_xdp_ct_lookup)
			return 0;
		ct = bpf_xdp_ct_lookup(ctx, &tup, size, &o, sizeof(o));
	} else {
		if (!bpf_skb_ct_lookup)
			return 0;
		ct = bpf_skb_ct_lookup(ctx, &tup, size, &o, sizeof(o));
	}
	if (!ct)
		return 0;
	port = bpf_ntohs(BPF_CORE_READ(ct, tuplehash[HS_CT_DIR_REPLY].tuple.src.u.all));
	/* Where the client's stream is, as conntrack saw it: the end of its
	 * SYN until a data byte went by (and no data can have gone by
	 * unseen: conntrack knows a connection from its first packet, unless
	 * it picked it up mid-stream). */
	sc->nat_seq = BPF_CORE_READ(ct, proto.tcp.seen[0].td_end);
	sc->nat_start = !(BPF_CORE_READ(ct, proto.tcp.seen[0].flags) & HS_CT_TCP_FLAG_BE_LIBERAL);
	bpf_ct_release(ct);
	return port;
}

__attribute__((noinline)) int ct_dport_xdp(struct xdp_md *ctx, struct scratch *sc)
{
	return sc ? ct_dport(ctx, sc, CTX_XDP) : 0;
}

__attribute__((noinline)) int ct_dport_tc(struct __sk_buff *ctx, struct scratch *sc)
{
	return sc ? ct_dport(ctx, sc, CTX_SKB) : 0;
}

/*
 * A segment (or first fragment) to a port not inspected whose connection
 * NAT takes to an inspected one: 1, its direction a request's. Asked at
 * the ingress hooks only (at tc-egress, netfilter has rewritten the port
 * already); for a tunnel's inner packet too, which a tunnel device of this
 * namespace hands to the same conntrack (one of another namespace: no
 * entry here, and nothing is lost by asking). The SYN that opens such a connection comes
 * before conntrack knows it: its data (TCP Fast Open) is scanned as a
 * request's all the same, and the rest of the connection then has a flow.
 */
static __always_inline int nat_inspected(void *ctx, struct scratch *sc, struct hs_config *cfg,
					 struct hs_counters *cnt, const int xdp)
{
	__u16 port;
	int r;

	if (cfg->nat != HS_NAT_LOOKUP || event_hook == HS_HOOK_TC_EGRESS)
		return 0;
	if ((sc->pk.tcp_flags & (HS_TCP_SYN | HS_TCP_ACK)) == HS_TCP_SYN) {
		/* (Its data: counted as a request's below.) */
		if (sc->pk.payload_end <= sc->pk.payload_off)
			return 0;
	} else {
		if (sc->pk.payload_end <= sc->pk.payload_off &&
		    !(sc->pk.tcp_flags & (HS_TCP_FIN | HS_TCP_RST)))
			return 0; /* a bare ACK: nothing to read, nothing to look up */
		r = xdp ? ct_dport_xdp(ctx, sc) : ct_dport_tc(ctx, sc);
		/* The verifier takes a global function's result as unknown:
		 * the compiler must not drop the cut to 16 bits either. */
		asm volatile("" : "+r"(r));
		port = (__u16)r;
		/*
		 * conntrack holds no connection for it (flushed, timed out,
		 * or never seen): the stack will pick it up mid-stream and
		 * NAT it by the rules as if new, possibly to an inspected
		 * port. A connection the hooks followed there before still
		 * has its flow under this tuple, marked: it stays inspected
		 * (a flow of a port that was inspected before an update took
		 * it off the list is no such flow). (One
		 * neither conntrack nor the flow table holds any more passes:
		 * README, blind spots; status names the NAT rules.)
		 */
		if (!port) {
			struct hs_flow *f = bpf_map_lookup_elem(&flows, &sc->pk.key);

			if (f && (f->fl & HS_FL_NAT))
				goto inspected;
		}
		if (!port || port == sc->pk.dport || !port_inspected(cfg, port))
			return 0;
	}
inspected:
	cnt->nat_inspected++;
	sc->dir = HS_DIR_REQUEST;
	sc->nat = 1;
	return 1;
}

/* The counter of parse.h's reason for a pass or an on-error verdict. */
static __always_inline void count_reason(struct hs_counters *cnt, __u8 why)
{
	switch (why) {
	case HS_CTR_not_ip:
		cnt->not_ip++;
		break;
	case HS_CTR_not_tcp:
		cnt->not_tcp++;
		break;
	case HS_CTR_vlan_too_deep:
		cnt->vlan_too_deep++;
		break;
	case HS_CTR_malformed:
		cnt->malformed++;
		break;
	default:
		cnt->encap_unknown++;
		break;
	}
}

/* A segment's verdict under the on-error policy. */
static __always_inline enum hs_verdict on_error(const struct hs_config *cfg)
{
	return policy_drops(cfg) ? HS_VERDICT_DROP : HS_VERDICT_PASS;
}

/*
 * A fragment (parse.h: the stack puts the datagram together, then reads
 * it). Passed when its datagram cannot reach an inspected socket: a TCP
 * one's first fragment to a port not inspected (after NAT), a UDP one's to
 * a port no tunnel takes (not in the table, and its socket, asked now,
 * takes nothing out of UDP), any UDP one while no socket of this namespace
 * sits on a tunnel's port (the loader's count, hs_config.udp_tunnels).
 * Everything else goes to the on-error policy.
 */
static __always_inline enum hs_verdict fragment(void *ctx, struct scratch *sc,
						struct hs_config *cfg, struct hs_counters *cnt,
						const int xdp)
{
	struct pkt *pk = &sc->pk;

	cnt->fragments++;
	if (pk->frag_proto == IPPROTO_TCP && pk->frag_port && packet_dir(sc, cfg) &&
	    !nat_inspected(ctx, sc, cfg, cnt, xdp))
		return HS_VERDICT_PASS;
	if (pk->frag_proto == IPPROTO_UDP && !pk->frag_port && !cfg->udp_tunnels)
		return HS_VERDICT_PASS;
	if (pk->frag_proto == IPPROTO_UDP && pk->frag_port &&
	    udp_tunnel(cfg, pk->dport) == HS_TUN_NONE &&
	    !(xdp ? udp_encap_xdp(ctx, sc) : udp_encap_tc(ctx, sc)))
		return HS_VERDICT_PASS;
	return on_error(cfg);
}

static __always_inline enum hs_verdict process_pkt(void *ctx, struct scratch *sc, const int xdp)
{
	struct hs_counters *cnt;
	struct hs_config *cfg;
	const struct hs_trie *t;
	struct pkt *pk;
	__u32 len, big = 0;
	enum hs_verdict v;
	int r;

	if (maps_lookup(&cfg, &cnt) || !sc)
		return HS_VERDICT_PASS;
	sc->why = HS_EVR_ON_ERROR;
	sc->rejects = 0;
	cnt->packets++;
	pk = &sc->pk;

	/* A GRO or GSO skb may leave its IP length to the packet (BIG TCP). */
	if (!xdp && ((struct __sk_buff *)ctx)->gso_size)
		big = ((struct __sk_buff *)ctx)->len;
	r = xdp ? parse_xdp(ctx, sc, cfg) : parse_tc(ctx, sc, cfg, big);
	if (r == PARSE_SHORT && !xdp) {
		/* Headers that run past the skb's linear head: pulled, as far
		 * as the scan window reaches (no header chain is longer). */
		len = ctx_len(ctx, xdp);
		if (ctx_linearize(ctx, len < HS_MAX_BUF ? len : HS_MAX_BUF, xdp) == 0)
			r = parse_tc(ctx, sc, cfg, big);
		else
			r = -1;
	}
	if (r == PARSE_PASS && pk->udp_ask &&
	    (xdp ? udp_encap_xdp(ctx, sc) : udp_encap_tc(ctx, sc))) {
		/* UDP to a port not in the table whose socket takes packets
		 * out of UDP (made after the attach): a tunnel not read. */
		r = PARSE_UNSURE;
		pk->why = HS_CTR_encap_unknown;
	}
	switch (r) {
	case PARSE_OK:
		break;
	case PARSE_PASS:
		/* No way from it to a TCP socket (parse.h: its reason). */
		count_reason(cnt, pk->why);
		return HS_VERDICT_PASS;
	case PARSE_SHORT: /* all of it within reach, and still cut short */
	case PARSE_TRUNC:
		/* The stack drops it: passed, it changes nothing. */
		cnt->truncated++;
		return HS_VERDICT_PASS;
	case PARSE_FRAG:
		return fragment(ctx, sc, cfg, cnt, xdp);
	case PARSE_UNSURE:
		/* The stack may deliver what it carries; hdrstrip cannot
		 * read it. */
		count_reason(cnt, pk->why);
		return on_error(cfg);
	default: /* headers out of reach: the pull failed */
		cnt->encap_unknown++;
		return on_error(cfg);
	}
	if (pk->key.tunnel)
		cnt->tunneled++;
	sc->nat_start = 0;
	sc->nat = 0;
	if (packet_dir(sc, cfg) && !nat_inspected(ctx, sc, cfg, cnt, xdp)) {
		/* Neither to nor from an inspected port, the one its socket
		 * will see after NAT included: not a stream hdrstrip reads. */
		cnt->not_inspected++;
		return HS_VERDICT_PASS;
	}
	if (pk->payload_end > pk->payload_off) {
		cnt->inspected++;
	} else if (!(pk->tcp_flags & (HS_TCP_SYN | HS_TCP_FIN | HS_TCP_RST | HS_TCP_URG))) {
		/* A bare ACK: no byte for a socket, and no state to change. */
		cnt->no_payload++;
		return HS_VERDICT_PASS;
	}
	if (pk->payload_end > pk->limit) {
		/* The IP length claims bytes the packet (or the tunnel's
		 * datagram) does not have: the stack drops such packets; we
		 * leave them alone. */
		cnt->truncated++;
		return HS_VERDICT_PASS;
	}
	if (ctx_linearize(ctx, pk->payload_end < HS_MAX_BUF ? pk->payload_end : HS_MAX_BUF, xdp)) {
		cnt->scan_incomplete++;
		return on_error(cfg);
	}

	/* The normaliser (normalize.h): what the stack would drop changes
	 * nothing here; urgent data stays in the stream. */
	if (xdp ? normalize_xdp(ctx, sc, cfg, cnt) : normalize_tc(ctx, sc, cfg, cnt))
		return HS_VERDICT_DROP;

	/* One slot per packet: an update never shows a packet two lists. */
	t = active_trie(cfg);
	if (!t)
		return HS_VERDICT_PASS;

	v = xdp ? track_xdp(ctx, sc, t, cfg, cnt) : track_tc(ctx, sc, t, cfg, cnt);
	if (v == HS_VERDICT_DROP || !sc->csum_acc)
		return v;
	/* Any rewritten byte, header or payload: every rewrite adds to
	 * csum_acc. A checksum left to offload stays as it is. */
	if (sc->csum_class != NORM_CSUM_OFFLOAD || !xdp) {
		if (ctx_csum_apply(ctx, sc->csum_acc, pk->csum_off, xdp)) {
			cnt->scan_incomplete++;
			return HS_VERDICT_DROP; /* never send a masked packet with a bad checksum */
		}
	}
	cnt->packets_modified++;
	return HS_VERDICT_PASS;
}

/* The dropped TCP segment in sc->pk answered with a reset (reject.h): 1,
 * or 0 to drop it as it is. */
__attribute__((noinline)) int reject_xdp(struct xdp_md *ctx, struct scratch *sc)
{
	return sc ? reject_send(ctx, &sc->pk, sc->csum_class == NORM_CSUM_OFFLOAD, 0, CTX_XDP,
				link_type == HS_L2_NONE ? HS_L2_NONE : HS_L2_ETHER)
		  : 0;
}

__attribute__((noinline)) int reject_tc(struct __sk_buff *ctx, struct scratch *sc)
{
	return sc ? reject_send(ctx, &sc->pk, sc->csum_class == NORM_CSUM_OFFLOAD,
				event_hook == HS_HOOK_TC_EGRESS, CTX_SKB,
				link_type == HS_L2_NONE ? HS_L2_NONE : HS_L2_ETHER)
		  : 0;
}

/*
 * The packet's verdict, where a drop is counted: dropped (a packet dropped
 * for another reason than a drop rule, whose line made its own event,
 * makes an event without a name), or in observe mode passed.
 */
static __always_inline enum hs_verdict process(void *ctx, const int xdp)
{
	__u32 sk = xdp ? 0 : 1;
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &sk);
	struct hs_counters *cnt;
	struct hs_config *cfg;
	enum hs_verdict v;
	int rejects;

	if (!sc)
		return HS_VERDICT_PASS;
	sc->m.obs_drop = 0;
	v = process_pkt(ctx, sc, xdp);
	if (v != HS_VERDICT_DROP) {
		/* Observe mode passed what a drop rule matched (its lines'
		 * events say so, reason rule): once a packet. */
		if (sc->m.obs_drop == 1 && !maps_lookup(&cfg, &cnt))
			cnt->packets_observed++;
		return v;
	}
	if (maps_lookup(&cfg, &cnt))
		return v;
	if (cfg->observe) {
		observed_drop(sc, cnt, (__u8)sc->why);
		return HS_VERDICT_PASS;
	}
	if (sc->why == HS_EVR_RULE && sc->redrop) {
		cnt->retransmits_dropped++;
	} else {
		cnt->packets_dropped++;
		cnt->responses_dropped += sc->why == HS_EVR_RULE && sc->dir == HS_DIR_RESPONSE;
	}
	/* A reject rule, or --on-error reject for what the policy stopped
	 * (a TCP segment: pk.csum_off is set once its header was read). */
	rejects = sc->why == HS_EVR_RULE
			  ? sc->rejects
			  : sc->why == HS_EVR_ON_ERROR && cfg->on_error == HS_POLICY_REJECT &&
				    sc->pk.csum_off;
	if (sc->why != HS_EVR_RULE)
		event_drop(&sc->ev, &sc->pk.key, rejects ? HS_ACT_REJECT : HS_ACT_DROP,
			   (__u8)sc->why);
	if (rejects && (xdp ? reject_xdp(ctx, sc) : reject_tc(ctx, sc))) {
		cnt->packets_rejected++;
		return HS_VERDICT_TX;
	}
	return v;
}

SEC("xdp")
int hdrstrip_xdp(struct xdp_md *ctx)
{
	return ctx_verdict(process(ctx, CTX_XDP), CTX_XDP);
}

SEC("tc")
int hdrstrip_tc(struct __sk_buff *skb)
{
	return ctx_verdict(process(skb, CTX_SKB), CTX_SKB);
}
