/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The receive side of the cgroup programs (proxy.bpf.c): what a connection
 * a process of the cgroup accepted receives, read by an sk_skb verdict
 * program on the sockhash the connection joined (struct hs_rx,
 * include/hdrstrip/recv.h).
 *  - Origin mode (HS_RX_MASK): every listed request line is masked in
 *    place, as at XDP and TC, before the application can read it. A verdict
 *    hands the whole buffer to the socket's queue or drops it: bytes cannot
 *    be taken out of the middle of the stream without TCP's count of what
 *    the application read (copied_seq) going wrong, so lines are masked,
 *    not removed. A drop (a drop rule, the on-error policy) ends the
 *    connection: nothing from that buffer on reaches the application
 *    (HS_RX_ENDED), and the connection waits in the ended map for the
 *    agent's reset.
 *  - Proxy mode: the requests are scanned for their framing only (which
 *    were HEAD), for the responses the sk_msg program strips.
 * The verdict runs on the stream in the order TCP delivers it and as the
 * application reads it; bytes the kernel queued before the socket had its
 * file (before accept() returned: the handshake's last ACK, Fast Open data
 * in the SYN) are run through it at the application's first recvmsg() or
 * read(). A reader that takes bytes from the socket's own queue without the
 * verdict (splice, TCP_ZEROCOPY_RECEIVE) is seen afterwards by the
 * sequence numbers, and counted (recv_unscanned); a retransmission the
 * stack queued with bytes the application has already loses them
 * (rx_align()).
 */
#ifndef HDRSTRIP_BPF_RECV_H
#define HDRSTRIP_BPF_RECV_H

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/flow.h>
#include <hdrstrip/maps.h>
#include <hdrstrip/recv.h>
#include <hdrstrip/scan.h>

#include "events.h"
#include "maps.bpf.h"
#include "scan_loop.h"

/* Origin mode's accepted connections without response rules: the verdict
 * program only (the servers sockhash has the sk_msg program too). */
struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, HS_RX_CONNS);
	__type(key, __u64); /* socket cookie */
	__type(value, __u64);
} origins SEC(".maps");

/* Every accepted connection's received stream, by socket cookie; an entry
 * goes when its socket closes (BPF_SOCK_OPS_STATE_CB). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, HS_RX_CONNS);
	__type(key, __u64);
	__type(value, struct hs_rx);
} rxstate SEC(".maps");

/* Connections a drop ended, by socket cookie: the agent resets each and
 * takes it out. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, HS_ENDED_CONNS);
	__type(key, __u64);
	__type(value, struct hs_flow_key);
} ended SEC(".maps");

/* The verdict's scan, per CPU: one a nesting level (a softirq may run it
 * over a program the backlog's release runs). */
#define RX_NEST 2
struct rxscratch {
	struct hs_scan s;
	__u32 done;
	__u32 reserved;
	struct hs_event ev; /* the template of this buffer's events */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RX_NEST);
	__type(key, __u32);
	__type(value, struct rxscratch);
} rxscratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} rxnest SEC(".maps");

/* The kernel's own view of the buffer and the socket (CO-RE: libbpf finds
 * the offsets in the running kernel's BTF). TCP keeps a segment's sequence
 * numbers at the start of skb->cb (struct tcp_skb_cb). */
struct sk_buff___hs {
	char cb[48];
} __attribute__((preserve_access_index));

struct tcp_sock___hs_rx {
	__u32 copied_seq;
} __attribute__((preserve_access_index));

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

/* Four words read from the context into @d: the empty asm keeps each read
 * at its own fixed offset (the verifier refuses a read through a context
 * pointer clang computed). */
static __always_inline void put4(__u32 *d, __u32 a, __u32 b, __u32 c, __u32 e)
{
	asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(e));
	d[0] = a;
	d[1] = b;
	d[2] = c;
	d[3] = e;
}

/* The connection of @skops as a request travels (client to origin); an
 * IPv4 client of a dual-stack socket (::ffff:a.b.c.d) as IPv4, as the
 * interface hooks see it. */
static __always_inline void rx_key(struct bpf_sock_ops *skops, struct hs_flow_key *k)
{
	__u32 a, b;

	if (skops->family == 10 /* AF_INET6 */ && !(skops->remote_ip6[0] | skops->remote_ip6[1]) &&
	    skops->remote_ip6[2] == bpf_htonl(0xffff)) {
		k->family = 4;
		a = skops->remote_ip6[3];
		b = skops->local_ip6[3];
		asm volatile("" : "+r"(a), "+r"(b));
		k->saddr[0] = a;
		k->daddr[0] = b;
	} else if (skops->family == 10 /* AF_INET6 */) {
		k->family = 6;
		put4(k->saddr, skops->remote_ip6[0], skops->remote_ip6[1], skops->remote_ip6[2],
		     skops->remote_ip6[3]);
		put4(k->daddr, skops->local_ip6[0], skops->local_ip6[1], skops->local_ip6[2],
		     skops->local_ip6[3]);
	} else {
		k->family = 4;
		a = skops->remote_ip4;
		b = skops->local_ip4;
		asm volatile("" : "+r"(a), "+r"(b));
		k->saddr[0] = a;
		k->daddr[0] = b;
	}
	k->sport = bpf_htons((__u16)bpf_ntohl(skops->remote_port));
	k->dport = bpf_htons((__u16)skops->local_port);
}

/*
 * An accepted connection, from its first byte: its received stream into
 * rxstate (@mask: origin mode's masking, else framing only), then the
 * socket into @map. The sockops callback runs before the kernel queues the
 * handshake's last ACK's data or a Fast Open SYN's, so no byte comes
 * before it. Returns 0 when the socket joined.
 */
static __always_inline int rx_add(struct bpf_sock_ops *skops, void *map, __u64 cookie, int mask,
				  struct hs_counters *cnt)
{
	struct hs_rx rx = {};
	long r;

	hs_stream_init_dir(&rx.st, HS_DIR_REQUEST);
	rx.flags = mask ? HS_RX_MASK : 0;
	rx.next_seq = skops->rcv_nxt;
	rx.netns_cookie = bpf_get_netns_cookie(skops);
	rx_key(skops, &rx.key);
	if (bpf_map_update_elem(&rxstate, &cookie, &rx, BPF_ANY)) {
		cnt->conns_unfiltered++;
		return -1;
	}
	bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_STATE_CB_FLAG);
	r = bpf_sock_hash_update(skops, map, &cookie, BPF_NOEXIST);
	if (!r) {
		cnt->flows_new++;
		return 0;
	}
	if (r != -17 /* EEXIST */) {
		cnt->conns_unfiltered++;
		bpf_map_delete_elem(&rxstate, &cookie);
	}
	return -1;
}

/* The socket @skops closes: its state goes. */
static __always_inline void rx_closed(struct bpf_sock_ops *skops)
{
	__u64 cookie;

	if (skops->args[1] != BPF_TCP_CLOSE)
		return;
	cookie = bpf_get_socket_cookie(skops);
	bpf_map_delete_elem(&rxstate, &cookie);
	bpf_map_delete_elem(&ended, &cookie);
}

/* One bpf_loop() call's steps over a received buffer's first window. */
static long rx_cb(__u32 i __attribute__((unused)), void *arg)
{
	struct scan_arg *c = arg;
	struct __sk_buff *skb = c->ctx;
	struct rxscratch *sc = c->sc;

	return scan_steps(c, &sc->s, &sc->done, NULL, (void *)(long)skb->data,
			  (void *)(long)skb->data_end);
}

/* The most bytes one bpf_skb_adjust_room() call takes off (sk_skb). */
#define RX_TRIM_STEP 4095
#define RX_TRIM_CALLS 16

/*
 * The buffer set against the stream the program has passed so far
 * (@rx->next_seq), which then moves past it:
 *  - a segment that overlaps bytes already received is queued whole, its
 *    start before the stack's next byte: TCP's own reader skips what it
 *    read already, tcp_read_skb() hands over all of it. Those first bytes
 *    are taken off here (counted in retransmits), or the application would
 *    read them twice;
 *  - bytes read from the socket's own queue without the program (splice,
 *    zero-copy receive) leave a gap, or the application has read past the
 *    buffer's start.
 * Returns 0 (the buffer starts at the stream's next byte, *@len its
 * length now), 1 for a gap, -1 when its head could not be taken off.
 */
static __always_inline int rx_align(struct __sk_buff *skb, struct hs_rx *rx, __u32 *len,
				    struct hs_counters *cnt)
{
	struct sk_buff___hs *k = bpf_cast_to_kern_ctx(skb);
	struct tcp_sock___hs_rx *tp;
	__u32 seq = *(__u32 *)&k->cb[0], over = rx->next_seq - seq, n;
	int i, gap = 0;

	if ((int)over > 0 && over < *len) {
		cnt->retransmits++;
		for (i = 0; i < RX_TRIM_CALLS && over; i++) {
			n = over > RX_TRIM_STEP ? RX_TRIM_STEP : over;
			if (bpf_skb_adjust_room(skb, -(int)n, 0, 0))
				break;
			over -= n;
		}
		if (over)
			return -1;
		*len = skb->len;
		seq = rx->next_seq;
	}
	if (seq != rx->next_seq) {
		gap = 1;
	} else if (skb->sk) {
		tp = (struct tcp_sock___hs_rx *)bpf_skc_to_tcp_sock(skb->sk);
		gap = tp && (int)(tp->copied_seq - seq) > 0;
	}
	rx->next_seq = seq + *len;
	return gap;
}

/*
 * A buffer enforce mode drops, for @why (enum hs_ev_reason): the
 * connection ends there (counted, an event unless a drop rule's line made
 * its own, the socket into the ended map for its reset). In observe mode
 * it passes, counted, and the connection is checked line by line. @sc
 * (the event's template) is NULL in a nested run with no scratch left:
 * no event.
 */
static __always_inline int rx_end(struct rxscratch *sc, struct hs_rx *rx, __u64 cookie,
				  const struct hs_config *cfg, struct hs_counters *cnt, __u32 why)
{
	if (cfg->observe) {
		cnt->packets_observed++;
		if (sc)
			event_drop(&sc->ev, &rx->key, HS_ACT_OBSERVE, why);
		hs_stream_untrack(&rx->st);
		return SK_PASS;
	}
	rx->flags |= HS_RX_ENDED;
	cnt->packets_dropped++;
	cnt->conns_ended++;
	if (sc && why != HS_EVR_RULE)
		event_drop(&sc->ev, &rx->key, HS_ACT_DROP, why);
	bpf_map_update_elem(&ended, &cookie, &rx->key, BPF_ANY);
	return SK_DROP;
}

/* What cannot be inspected (the on-error policy): ended, or under pass
 * passed with the rest of the connection checked line by line. */
static __always_inline int rx_policy(struct rxscratch *sc, struct hs_rx *rx, __u64 cookie,
				     const struct hs_config *cfg, struct hs_counters *cnt)
{
	if (policy_drops(cfg))
		return rx_end(sc, rx, cookie, cfg, cnt, HS_EVR_ON_ERROR);
	hs_stream_untrack(&rx->st);
	return SK_PASS;
}

/* Origin mode: scan @len bytes of @skb from @rx's state, masking listed
 * lines in place; the verdict. */
static __always_inline int rx_mask(struct __sk_buff *skb, struct rxscratch *sc, struct hs_rx *rx,
				   __u64 cookie, const struct hs_config *cfg,
				   struct hs_counters *cnt, __u32 len)
{
	const struct hs_trie *t = active_trie(cfg);
	struct scan_arg c;
	__u32 n;

	n = len < HS_MAX_BUF ? len : HS_MAX_BUF;
	if (!t || bpf_skb_pull_data(skb, n)) {
		cnt->scan_incomplete++;
		return rx_policy(sc, rx, cookie, cfg, cnt);
	}
	hs_scan_begin(&sc->s, &rx->st, 0, n, 0);
	sc->s.opts = (cfg->on_error == HS_POLICY_PASS || cfg->observe ? HS_OPT_CONFLICT_GO_ON : 0) |
		     (cfg->observe ? HS_OPT_OBSERVE : 0);
	sc->done = 0;
	sc->ev.on = cfg->event_rate != 0;
	sc->ev.dir = HS_DIR_REQUEST;
	c.sc = sc;
	c.t = t;
	c.ctx = skb;
	c.ev = &sc->ev;
	c.key = &rx->key;
	c.m = NULL; /* a buffer is never seen twice: hits and events at once */
	bpf_loop(HS_MAX_CALLS, rx_cb, &c, 0);
	count_scan(cnt, &sc->s, 0, 1);
	cnt->split_names += sc->s.premasked;
	if (sc->s.masked || sc->s.premasked)
		cnt->packets_modified++;
	if (sc->s.st.phase == HS_PH_DROPPED)
		return rx_end(sc, rx, cookie, cfg, cnt, HS_EVR_RULE);
	if (sc->s.st.phase == HS_PH_HALT) /* only under the drop policy */
		return rx_end(sc, rx, cookie, cfg, cnt, HS_EVR_ON_ERROR);
	/* Ambiguous framing the drop policy would have stopped at. */
	if (cfg->observe && policy_drops(cfg) && sc->s.conflicts) {
		cnt->packets_observed++;
		event_drop(&sc->ev, &rx->key, HS_ACT_OBSERVE, HS_EVR_ON_ERROR);
	}
	if (!sc->done) {
		cnt->scan_incomplete++;
		return rx_policy(sc, rx, cookie, cfg, cnt);
	}
	hs_scan_finish(&sc->s, &rx->st);
	if (!hs_seg_rest_is_body(&rx->st, len - n)) {
		/* Past the scan window, outside a body. */
		cnt->oversize++;
		return rx_policy(sc, rx, cookie, cfg, cnt);
	}
	return SK_PASS;
}

/*
 * Proxy mode: the requests a socket of servers receives, scanned for their
 * framing only, in observe mode, with no hit, event or counter, so that the
 * socket's responses know which requests were HEAD. Every byte passes
 * unchanged. What cannot be followed (a buffer past the scan window outside
 * a body, no scratch, no memory) leaves the count where it is: the
 * responses from there on go line by line (responses_unframed).
 */
static __always_inline int rx_framing(struct __sk_buff *skb, struct rxscratch *sc, struct hs_rx *rx,
				      const struct hs_config *cfg, struct hs_counters *cnt,
				      __u32 len)
{
	const struct hs_trie *t = active_trie(cfg);
	struct scan_arg c;
	__u32 n;

	if (!len || (rx->st.conn & HS_CN_UNTRACKED))
		return SK_PASS;
	n = len < HS_MAX_BUF ? len : HS_MAX_BUF;
	if (!sc || !t || bpf_skb_pull_data(skb, n))
		goto lost;
	hs_scan_begin(&sc->s, &rx->st, 0, n, 0);
	sc->s.opts = HS_OPT_OBSERVE | HS_OPT_CONFLICT_GO_ON;
	sc->done = 0;
	c.sc = sc;
	c.t = t;
	c.ctx = skb;
	c.ev = NULL; /* framing only: matches are not the list's hits */
	c.key = NULL;
	c.m = NULL;
	bpf_loop(HS_MAX_CALLS, rx_cb, &c, 0);
	if (!sc->done)
		goto lost;
	if (sc->s.st.phase >= HS_PH_NOT_HTTP) {
		/* No HTTP request (it may be TLS): none is counted from here. */
		hs_stream_untrack(&rx->st);
		return SK_PASS;
	}
	hs_scan_finish(&sc->s, &rx->st);
	if (hs_seg_rest_is_body(&rx->st, len - n))
		return SK_PASS;
lost:
	cnt->scan_incomplete++;
	hs_stream_untrack(&rx->st);
	return SK_PASS;
}

/* The verdict on a buffer an accepted connection received. */
static __always_inline int rx_verdict(struct __sk_buff *skb)
{
	struct hs_counters *cnt;
	struct hs_config *cfg;
	struct rxscratch *sc;
	struct hs_rx *rx;
	__u32 key = 0, len = skb->len, *nest, level, mask;
	__u64 cookie = bpf_get_socket_cookie(skb);
	int v, align;

	nest = bpf_map_lookup_elem(&rxnest, &key);
	if (!nest || maps_lookup(&cfg, &cnt))
		return SK_PASS;
	rx = bpf_map_lookup_elem(&rxstate, &cookie);
	if (!rx)
		return SK_PASS;
	if (rx->flags & HS_RX_ENDED)
		return SK_DROP; /* a drop ended the connection */
	level = (*nest)++;
	sc = level < RX_NEST ? bpf_map_lookup_elem(&rxscratch, &level) : NULL;
	mask = rx->flags & HS_RX_MASK;
	if (mask) {
		cnt->packets++;
		cnt->inspected += len != 0;
	}
	align = len ? rx_align(skb, rx, &len, cnt) : 0;
	if (align > 0 && mask)
		cnt->recv_unscanned++;
	if (align < 0 && mask)
		cnt->scan_incomplete++;
	if (!len) {
		v = SK_PASS; /* a FIN */
	} else if (!mask) {
		/* Requests the program did not see: none is framed from here. */
		if (align)
			hs_stream_untrack(&rx->st);
		v = rx_framing(skb, sc, rx, cfg, cnt, len);
	} else if (!sc || align < 0) {
		if (!sc)
			cnt->scan_incomplete++;
		v = rx_policy(sc, rx, cookie, cfg, cnt);
	} else if (align && (policy_drops(cfg) || cfg->observe)) {
		/* The application read bytes hdrstrip never saw: what follows
		 * cannot be framed. */
		v = rx_end(sc, rx, cookie, cfg, cnt, HS_EVR_ON_ERROR);
	} else {
		if (align)
			hs_stream_untrack(&rx->st);
		v = rx_mask(skb, sc, rx, cookie, cfg, cnt, len);
	}
	/* What the application's queue got (detach waits for it to be read). */
	if (v == SK_PASS)
		rx->passed += len;
	(*nest)--;
	return v;
}

#endif /* HDRSTRIP_BPF_RECV_H */
