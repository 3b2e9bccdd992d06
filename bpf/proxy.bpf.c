// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Proxy mode: a sockops program on a cgroup puts the TCP connections of its
 * processes into sockhashes, and an sk_msg program takes internal field
 * lines out of what they send, before TCP sees the bytes. The same scanner
 * and trie as at XDP/TC, in its remove mode: lines go whole (name, value,
 * continuation lines, line end).
 *  - socks: connections the processes open to an inspected port; what they
 *    send is requests (request rules).
 *  - servers: connections they accept on an inspected port, while the list
 *    has response rules; what they send is responses (response rules). An
 *    sk_skb program reads, without changing them, the requests such a
 *    socket receives, as the server will read them: which of them were
 *    HEAD frames the responses (a response to HEAD has no body).
 * Origin mode (hdrstrip_origin instead of hdrstrip_sockops) puts every
 * connection the processes accept on an inspected port into servers (with
 * response rules) or origins, and the sk_skb program masks the listed
 * lines of the requests they receive (recv.h).
 *
 * A send that ends inside a line whose fate is not known yet (the name is
 * not finished) passes everything before that line and holds the line's
 * bytes back (bpf_msg_apply_bytes, then bpf_msg_cork_bytes) until more
 * arrive; finished lines are never held.
 */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/flow.h>
#include <hdrstrip/maps.h>
#include <hdrstrip/scan.h>

#include "maps.bpf.h"
#include "scan_loop.h"
#include "recv.h"
#include "floor_scan.h" /* after scan_loop.h: benchmarks only */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* socket cookie */
	__type(value, __u64);
} socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* socket cookie */
	__type(value, __u64);
} servers SEC(".maps");

/* Per connection: where the stream it sends is (zeroed: a request stream
 * before its first byte; a socket of servers starts a response stream),
 * and a socket of servers' cookie (its rxstate key: an sk_msg program
 * cannot ask for it). */
struct sk_state {
	struct hs_stream st;
	__u64 cookie;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sk_state);
} sk_state SEC(".maps");

struct pscratch {
	struct hs_scan s;
	struct scan_rm rm; /* the lines to take out */
	__u32 done; /* SCAN_DONE, SCAN_RM_FULL (scan_loop.h) */
	struct hs_flow_key key; /* the connection: the proxy's socket, its upstream */
	struct hs_event ev; /* the template of this send's events */
	struct scan_matches m; /* the send's matches (never held: obs_drop) */
	/* The window's compaction (compact_cb): the kept bytes [cp_src,
	 * cp_stop) go to cp_dst; cp_i is the range they follow (-1 before
	 * the first). */
	__u32 cp_src;
	__u32 cp_dst;
	__u32 cp_stop;
	__u32 cp_i;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pscratch);
} pscratch SEC(".maps");

/* One bpf_loop() call's steps (scan_loop.h), over the message's first
 * window. */
static long scan_cb(__u32 i __attribute__((unused)), void *arg)
{
	struct scan_arg *c = arg;
	struct sk_msg_md *msg = c->ctx;
	struct pscratch *sc = c->sc;

	return scan_steps(c, &sc->s, &sc->done, &sc->rm, (void *)(long)msg->data,
			  (void *)(long)msg->data_end);
}

/*
 * Taking the removal ranges out of the window [0, n) the run pulled into one
 * piece: the kept bytes after each range move down over it, eight at a time
 * (forward, so a move onto bytes still to be read reads them first), and
 * the window's last bytes, spare then, go in one pop at its end. A pop in
 * the middle of the message would split its piece in two, and TCP would
 * send each piece as a segment of its own; putting them back in one piece
 * costs a page and a copy of the whole window.
 */
#define CP_WORDS 4 /* words a call moves, at most */

struct compact_arg {
	struct sk_msg_md *msg;
	struct pscratch *sc;
	__u32 n; /* the window's end */
	__u32 bad; /* a move out of the window's bounds: nothing can be sent */
};

static long compact_cb(__u32 i __attribute__((unused)), void *arg)
{
	struct compact_arg *c = arg;
	struct pscratch *sc = c->sc;
	__u8 *data = (void *)(long)c->msg->data, *end = (void *)(long)c->msg->data_end;
	__u32 src = sc->cp_src, dst = sc->cp_dst, stop = sc->cp_stop, k, w;

	if (src >= stop) {
		/* The next range's kept bytes, up to the range after it (the
		 * first call starts the first range's). */
		k = sc->cp_i + 1;
		if (k >= sc->rm.n || k >= HS_MAX_RM)
			return 1;
		sc->cp_i = k;
		sc->cp_src = sc->rm.off[k & (HS_MAX_RM - 1)] + sc->rm.len[k & (HS_MAX_RM - 1)];
		sc->cp_stop = k + 1 < sc->rm.n ? sc->rm.off[(k + 1) & (HS_MAX_RM - 1)] : c->n;
		return 0;
	}
	for (w = 0; w < CP_WORDS && src < stop; w++) {
		__u8 *from, *to;
		__u64 v;

		/* (Offsets the verifier sees below 64 KiB with a word added.) */
		if (src > HS_MAX_BUF || dst > HS_MAX_BUF)
			goto bad;
		from = data + src;
		to = data + dst;
		if (stop - src >= 8) {
			if (from + 8 > end)
				goto bad;
			v = hs_load64(from);
			if (to + 8 > end)
				goto bad;
			hs_store64(to, v);
			src += 8;
			dst += 8;
		} else {
			if (from + 1 > end)
				goto bad;
			v = *from;
			if (to + 1 > end)
				goto bad;
			*to = (__u8)v;
			src++;
			dst++;
		}
	}
	sc->cp_src = src;
	sc->cp_dst = dst;
	return 0;
bad:
	c->bad = 1;
	return 1;
}

/* The ranges in sc->rm out of the window [0, @n): 0, or -1 when it cannot
 * be done (the message must not go). */
static __always_inline int compact(struct sk_msg_md *msg, struct pscratch *sc, __u32 n,
				   __u32 removed)
{
	struct compact_arg c = { .msg = msg, .sc = sc, .n = n };

	sc->cp_i = -1;
	sc->cp_dst = sc->rm.off[0];
	sc->cp_src = 0;
	sc->cp_stop = 0;
	/* Calls: a segment takes one to start and up to 2 more than its
	 * words need (its last bytes one at a time). */
	bpf_loop(n / 8 + 4 * HS_MAX_RM + 8, compact_cb, &c, 0);
	if (c.bad || sc->cp_i + 1 < sc->rm.n || sc->cp_src < sc->cp_stop)
		return -1;
	return bpf_msg_pop_data(msg, n - removed, removed, 0) ? -1 : 0;
}

/* The fields of the kernel's struct tcp_sock read here (CO-RE: libbpf finds
 * their offsets in the running kernel's BTF). */
struct tcp_sock___hs {
	void *fastopen_req;
	void *fastopen_rsk;
} __attribute__((preserve_access_index));

/*
 * Did this connection's first bytes leave with TCP Fast Open? They are sent
 * before this callback puts the socket in the sockhash, so the sk_msg
 * program never sees them: with the SYN (a cookie was cached), or right
 * after the handshake by the same sendto(MSG_FASTOPEN) or first write after
 * TCP_FASTOPEN_CONNECT (no cookie yet), which holds tp->fastopen_req
 * while it waits here. Sent in the SYN, they also show as more acked than
 * the SYN, or as sent and not acked. Nothing can take them back: counted.
 */
static __always_inline int fastopen_unseen(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;
	struct tcp_sock___hs *tp;

	if (skops->bytes_acked > 1 || skops->snd_nxt != skops->snd_una)
		return 1;
	if (!sk)
		return 0;
	tp = (struct tcp_sock___hs *)bpf_skc_to_tcp_sock(sk);
	return tp && tp->fastopen_req;
}

/* Socket @skops, whose cookie is @cookie, into @map: counted in flows_new,
 * or where the map is full, conns_unfiltered (nothing can refuse the
 * connection from here). */
static __always_inline void sock_add(struct bpf_sock_ops *skops, void *map, __u64 cookie,
				     struct hs_counters *cnt)
{
	long r = bpf_sock_hash_update(skops, map, &cookie, BPF_NOEXIST);

	if (!r)
		cnt->flows_new++;
	else if (r != -17 /* EEXIST */)
		cnt->conns_unfiltered++;
}

/*
 * A connection a process of the cgroup accepted on an inspected port, while
 * the list has response rules (proxy mode), or any (origin mode, @mask):
 * its responses from their first byte, and the requests it receives
 * (recv.h). Without response rules, an origin's connection goes into
 * origins, where no sk_msg program runs.
 */
static __always_inline void server_add(struct bpf_sock_ops *skops, const struct hs_config *cfg,
				       struct hs_counters *cnt, int mask)
{
	const struct hs_trie *t = active_trie(cfg);
	int responses = t && (t->flags & HS_TRIE_F_RESPONSE_RULES);
	struct bpf_sock *sk = skops->sk;
	struct sk_state *ss;
	__u64 cookie;

	if (!sk || (!responses && !mask))
		return;
	cookie = bpf_get_socket_cookie(skops);
	if (!responses) {
		rx_add(skops, &origins, cookie, mask, cnt);
		return;
	}
	ss = bpf_sk_storage_get(&sk_state, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!ss) {
		cnt->conns_unfiltered++;
		return;
	}
	hs_stream_init_dir(&ss->st, HS_DIR_RESPONSE);
	ss->cookie = cookie;
	rx_add(skops, &servers, cookie, mask, cnt);
}

/*
 * Never true in practice; it keeps the trie, header_hits and the event
 * maps in a sockops program's map list beside config and counters, so that
 * every command finds all of them from the cgroup's attachment (program ->
 * map ids), with or without pins.
 */
static __always_inline void maps_keep(struct bpf_sock_ops *skops)
{
	__u32 key = 0;

	if (skops->op == 0xffffffff) {
		bpf_map_lookup_elem(&trie, &key);
		bpf_map_lookup_elem(&header_hits, &key);
		bpf_map_lookup_elem(&event_bucket, &key);
		bpf_ringbuf_query(&events, 0);
	}
}

/* What both sockops programs do alike: a connection that ends leaves the
 * receive side's maps; one the cgroup accepts on an inspected port joins
 * servers or (@origin) origins. 1 when @skops was one of those two. */
static __always_inline int accepted_op(struct bpf_sock_ops *skops, int origin)
{
	struct hs_counters *cnt;
	struct hs_config *cfg;

	if (skops->op == BPF_SOCK_OPS_STATE_CB) {
		rx_closed(skops);
		return 1;
	}
	if (skops->op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB)
		return 0;
	if (!maps_lookup(&cfg, &cnt) && port_inspected(cfg, (__u16)skops->local_port))
		server_add(skops, cfg, cnt, origin);
	return 1;
}

SEC("sockops")
int hdrstrip_sockops(struct bpf_sock_ops *skops)
{
	struct hs_counters *cnt;
	struct hs_config *cfg;

	if (accepted_op(skops, 0))
		return 1;
	if (skops->op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB) {
		maps_keep(skops);
		return 1;
	}
	if (maps_lookup(&cfg, &cnt) || !port_inspected(cfg, bpf_ntohl(skops->remote_port)))
		return 1;
	if (fastopen_unseen(skops))
		cnt->fastopen_unfiltered++;
	sock_add(skops, &socks, bpf_get_socket_cookie(skops), cnt);
	return 1;
}

/*
 * Origin mode's sockops program (attach --cgroup PATH --receive): every
 * connection the cgroup's processes accept on an inspected port, from its
 * first byte; the connections they open are left alone.
 */
SEC("sockops")
int hdrstrip_origin(struct bpf_sock_ops *skops)
{
	if (!accepted_op(skops, 1))
		maps_keep(skops);
	return 1;
}

/*
 * A send enforce mode drops, for @why: dropped and counted (a drop rule's
 * line made its own event; another reason makes one without a name), or in
 * observe mode passed and counted.
 */
static __always_inline int msg_drop(struct pscratch *sc, const struct hs_config *cfg,
				    struct hs_counters *cnt, __u32 why)
{
	if (cfg->observe) {
		cnt->packets_observed++;
		event_drop(&sc->ev, &sc->key, HS_ACT_OBSERVE, why);
		return SK_PASS;
	}
	cnt->packets_dropped++;
	if (why != HS_EVR_RULE)
		event_drop(&sc->ev, &sc->key, HS_ACT_DROP, why);
	return SK_DROP;
}

/*
 * What a send cannot be inspected through: counted, and under the pass
 * policy (or observe mode) sent whole, with the rest of the connection
 * scanned line by line. Its apply and cork counts are reset, as on every
 * run (below).
 */
static __always_inline int give_up(struct sk_msg_md *msg, struct sk_state *ss, struct pscratch *sc,
				   const struct hs_config *cfg, struct hs_counters *cnt)
{
	cnt->scan_incomplete++;
	if (policy_drops(cfg) && msg_drop(sc, cfg, cnt, HS_EVR_ON_ERROR) == SK_DROP)
		return SK_DROP;
	hs_stream_untrack(&ss->st);
	bpf_msg_apply_bytes(msg, 0);
	bpf_msg_cork_bytes(msg, 0);
	return SK_PASS;
}

/* The connection of @msg, as events carry it: from the proxy's socket to
 * its upstream. */
static __always_inline void msg_key(struct sk_msg_md *msg, struct hs_flow_key *k)
{
	__u32 a, b;

	if (msg->family == 10 /* AF_INET6 */) {
		k->family = 6;
		put4(k->saddr, msg->local_ip6[0], msg->local_ip6[1], msg->local_ip6[2],
		     msg->local_ip6[3]);
		put4(k->daddr, msg->remote_ip6[0], msg->remote_ip6[1], msg->remote_ip6[2],
		     msg->remote_ip6[3]);
	} else {
		k->family = 4;
		a = msg->local_ip4;
		b = msg->remote_ip4;
		asm volatile("" : "+r"(a), "+r"(b));
		k->saddr[0] = a;
		k->daddr[0] = b;
	}
	k->sport = bpf_htons((__u16)msg->local_port);
	k->dport = bpf_htons((__u16)bpf_ntohl(msg->remote_port));
}

SEC("sk_msg")
int hdrstrip_msg(struct sk_msg_md *msg)
{
	struct hs_counters *cnt;
	struct hs_config *cfg;
	const struct hs_trie *t;
	struct pscratch *sc;
	struct sk_state *ss;
	struct scan_arg c;
	__u32 key = 0, size = msg->size, n, removed = 0, keep;
	int i;

	sc = bpf_map_lookup_elem(&pscratch, &key);
	if (maps_lookup(&cfg, &cnt) || !sc || !msg->sk)
		return SK_PASS;
	ss = bpf_sk_storage_get(&sk_state, msg->sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!ss)
		return SK_PASS; /* a zeroed state is a stream before its first byte */
	cnt->packets++;
	t = active_trie(cfg);
	if (!t || !size)
		return SK_PASS;
	cnt->inspected++;

	/* Scan up to HS_MAX_BUF bytes; a longer send is taken in parts (the
	 * program runs again on what apply_bytes leaves). */
	n = size < HS_MAX_BUF ? size : HS_MAX_BUF;
	if (bpf_msg_pull_data(msg, 0, n, 0)) {
		cnt->scan_incomplete++;
		msg_key(msg, &sc->key);
		return policy_drops(cfg) ? msg_drop(sc, cfg, cnt, HS_EVR_ON_ERROR) : SK_PASS;
	}
	msg_key(msg, &sc->key);
	hs_scan_begin(&sc->s, &ss->st, 0, n, 0);
	if (ss->st.conn & HS_CN_RESPONSE) {
		/* The requests this server socket read (hdrstrip_rx). */
		struct hs_rx *rx = bpf_map_lookup_elem(&rxstate, &ss->cookie);

		sc->s.peer_known = rx != NULL;
		if (rx) {
			sc->s.peer_n = rx->st.nmsg;
			sc->s.peer_heads = rx->st.heads;
		}
	}
	/* Observe mode goes on where the pass policy does, and removes
	 * nothing; a stream checked line by line is masked in place
	 * (hs_removes()). */
	sc->s.opts = (ss->st.conn & HS_CN_UNTRACKED ? 0 : HS_OPT_REMOVE) |
		     (cfg->on_error == HS_POLICY_PASS || cfg->observe ? HS_OPT_CONFLICT_GO_ON : 0) |
		     (cfg->observe ? HS_OPT_OBSERVE : 0);
	sc->rm.n = 0;
	sc->done = 0;
	c.sc = sc;
	c.t = t;
	c.ctx = msg;
	c.ev = &sc->ev;
	sc->ev.on = cfg->event_rate != 0;
	sc->ev.dir = (__u8)hs_stream_dir(&ss->st);
	c.key = &sc->key;
	/* A dropped send is not sent again: nothing to hold; what observe
	 * mode passes that a drop rule matched is said (obs_drop). */
	sc->m.sig = 0;
	sc->m.n = 0;
	sc->m.hold = 0;
	sc->m.obs_drop = 0;
	c.m = &sc->m;
#ifdef HS_BENCH_FLOOR_SCAN
	/* A benchmark's lower bound (floor_scan.h): the bytes read, not
	 * scanned. */
	floor_scan_lines += floor_read((void *)(long)msg->data, (void *)(long)msg->data_end, c.t);
	floor_scan_done(&sc->s, &sc->done);
#else
	bpf_loop(HS_MAX_CALLS, scan_cb, &c, 0);
#endif

	/* A held line's name is counted again when it is scanned again. */
	count_scan(cnt, &sc->s,
		   sc->s.hold && sc->s.st.phase == HS_PH_NAME && !(sc->s.st.flags & HS_SF_CONT),
		   0 /* removed, not masked: headers_removed */);
	if (sc->s.st.phase == HS_PH_DROPPED) {
		/* The send fails (EACCES): a response never leaves. */
		if (!cfg->observe && (sc->s.st.conn & HS_CN_RESPONSE))
			cnt->responses_dropped++;
		return msg_drop(sc, cfg, cnt, HS_EVR_RULE);
	}
	if (sc->s.st.phase == HS_PH_HALT) /* only under the drop policy */
		return msg_drop(sc, cfg, cnt, HS_EVR_ON_ERROR);
	/* Observe mode: a drop rule matched (its lines' events say so). */
	cnt->packets_observed += sc->m.obs_drop;
	/* Ambiguous framing (or an HTTP/2 preface) the drop policy would
	 * have stopped at. */
	if (cfg->observe && policy_drops(cfg) && (sc->s.conflicts || sc->s.h2c))
		msg_drop(sc, cfg, cnt, HS_EVR_ON_ERROR);
	if (!sc->done)
		return give_up(msg, ss, sc, cfg, cnt);

	for (i = 0; i < HS_MAX_RM; i++) {
		if ((__u32)i >= sc->rm.n)
			break;
		removed += sc->rm.len[i];
	}
	if (removed && compact(msg, sc, n, removed)) {
		/* Never send what should have gone. */
		cnt->scan_incomplete++;
		return msg_drop(sc, cfg, cnt, HS_EVR_ON_ERROR);
	}
	/* Lines of a stream checked line by line are masked in place
	 * instead (hs_removes()). */
	if (sc->s.st.conn & HS_CN_RESPONSE) {
		cnt->response_headers_removed += sc->s.removed;
		cnt->response_headers_masked += sc->s.masked - sc->s.removed;
	} else {
		cnt->headers_removed += sc->s.removed;
		cnt->headers_masked += sc->s.masked - sc->s.removed;
	}
	cnt->removed_bytes += removed;
	/*
	 * The message keeps the apply and cork counts of earlier runs (a corked
	 * message is the same object), so both are set on every run: a stale
	 * count would let bytes through without this program seeing them.
	 */
	if (sc->s.hold) {
		/* Hold the unfinished line back: pass what is before it now,
		 * and see the line again, with more, from its first byte. */
		keep = sc->s.line_start - removed;
		if (!keep && n < size) {
			/*
			 * The line fills the whole window and goes on: more
			 * bytes will never decide it, and corking would hold
			 * the connection for good. It cannot be inspected.
			 */
			return give_up(msg, ss, sc, cfg, cnt);
		}
		ss->st = sc->s.line_snap;
		bpf_msg_apply_bytes(msg, keep);
		bpf_msg_cork_bytes(msg, keep ? 0 : size - removed + 1);
		return SK_PASS;
	}
	keep = sc->s.pos - removed;
	if ((sc->done == SCAN_RM_FULL || n < size) && !keep) {
		/*
		 * The run stopped before the end of the message and took out
		 * everything it scanned (a whole window of internal lines):
		 * there is nothing to pass while the rest waits for the next
		 * run, and an apply count of 0 would pass all of it unseen.
		 */
		return give_up(msg, ss, sc, cfg, cnt);
	}
	hs_scan_finish(&sc->s, &ss->st);
	/* The rest of a message the run did not reach comes back in a new run. */
	bpf_msg_apply_bytes(msg, sc->done == SCAN_RM_FULL || n < size ? keep : 0);
	bpf_msg_cork_bytes(msg, 0);
	return SK_PASS;
}

/* What an accepted connection receives (recv.h): masked in origin mode,
 * followed for its framing in proxy mode. */
SEC("sk_skb")
int hdrstrip_rx(struct __sk_buff *skb)
{
	return rx_verdict(skb);
}
