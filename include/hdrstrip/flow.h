/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Per-connection state, and the rules that keep it true to what the
 * receiving TCP stack delivers to the application. Plain C shared by the
 * BPF datapath and the host's tests and fuzzers: the caller owns the flow
 * table and the scan loop, these functions decide.
 *
 * A flow knows the scanner's state at next_seq (the byte after everything
 * it passed in order) and at the starts of the last HS_FLOW_CKPTS segments
 * it passed: its "boundaries". Linux keeps the first copy of the bytes it
 * has and takes only the new tail of an overlapping segment, queues data
 * ahead of a gap, and may drop any segment hdrstrip passed (a window, a
 * timestamp or an ACK it rejects). Whatever copies of a range of bytes the
 * application ends up reading, each was scanned from the right state if:
 *
 *  - a segment is scanned only from a position whose state is known: a
 *    boundary, a byte inside a body of known length after one (body bytes
 *    are never read, so the state there depends on their count only), or a
 *    byte in the steady end of a segment (the rest of a kept line, or the
 *    'x' run of a masked one, up to the segment's end: the state there is
 *    the one the segment ended in);
 *  - a segment that overlaps what was passed is scanned in pieces cut at
 *    every boundary it crosses (the cuts of the first copies, so the same
 *    bytes are rewritten the same way), and at each cut the state it
 *    reached must be the one known there: the stream can switch from one
 *    copy to another only at a cut, and both copies agree there;
 *  - such a segment ends at a known position or beyond next_seq: the first
 *    copies' state inside a piece they passed whole is not known.
 *
 * Anything else is dropped (TCP resends it) or left to the on-error policy,
 * and counted. The scanner's bytes are the same whichever copy the stack
 * kept; only where a segment would be read differently does it matter, and
 * that is exactly a state that differs at a cut.
 */
#ifndef HDRSTRIP_FLOW_H
#define HDRSTRIP_FLOW_H

#include "portable.h"
#include "scan.h"

#define HS_MAP_FLOWS "flows"
/* Boundaries kept per flow, besides next_seq (a power of two). */
#define HS_FLOW_CKPTS 16
#define HS_FLOWS_DEFAULT 32768

/* TCP flags, as in the header's 14th byte. */
#define HS_TCP_FIN 0x01
#define HS_TCP_SYN 0x02
#define HS_TCP_RST 0x04
#define HS_TCP_PSH 0x08
#define HS_TCP_ACK 0x10
#define HS_TCP_URG 0x20

/*
 * The sending side's 4-tuple (client -> server), and the tunnel it came
 * through: two tunnels may deliver the same inner 4-tuple to different
 * sockets (other VNIs, other namespaces), whose connections must not share
 * state (include/hdrstrip/tunnel.h).
 */
struct hs_flow_key {
	__u32 saddr[4]; /* IPv4 in saddr[0] */
	__u32 daddr[4];
	__u16 sport; /* network order */
	__u16 dport;
	__u8 family; /* 4 or 6 */
	__u8 tunnel; /* enum hs_tunnel (HS_TUN_NONE: not in one) */
	__u16 reserved;
	__u32 zone; /* the tunnel's network id: VXLAN/GENEVE VNI, GRE key; else 0 */
};

/* No steady run in a checkpoint's segment. */
#define HS_CK_NO_STEADY 0xffff

struct hs_ckpt {
	__u32 seq; /* a segment's first byte */
	__u16 used;
	/* Bytes from seq after which the segment's end state held to its end
	 * (hs_scan_steady()), or HS_CK_NO_STEADY. */
	__u16 steady;
	struct hs_stream st; /* the state there */
};

/* hs_flow.fl */
#define HS_FL_STARTED 0x01 /* data was taken in order: a SYN is no retransmission */
#define HS_FL_SYN_PENDING 0x02 /* a SYN came inside the connection (syn_isn) */
#define HS_FL_NO_START 0x04 /* begun without state, line by line: its start is unknown */
#define HS_FL_RULE_DROP 0x08 /* a drop rule dropped the segment at drop_seq */
#define HS_FL_CLOSED 0x10 /* a FIN or an exact RST ended it (hs_flow_close()) */
/* The hooks follow it through NAT: its port is not inspected, the one NAT
 * takes it to is (the datapath's, which sets it; the flow code keeps it). */
#define HS_FL_NAT 0x20

#define HS_PUB_NONE 0xffff /* hs_flow.pub_n: nothing written yet */

struct hs_flow {
	__u32 next_seq; /* sequence number of the next byte in order */
	__u32 syn_isn; /* HS_FL_SYN_PENDING: that SYN's sequence number */
	__u8 ck_next; /* next checkpoint slot to fill */
	__u8 fl; /* HS_FL_* */
	/* A request stream: cur.nmsg when its HEAD history was last written
	 * for its responses (the caller's, hs_peer in maps.h); HS_PUB_NONE
	 * after hs_flow_init(), so that a stream started afresh (a new
	 * connection on the tuple, or line by line from here) writes its own
	 * at once, in place of the last connection's. */
	__u16 pub_n;
	/* HS_FL_RULE_DROP: where that segment started, its length and the
	 * rules it matched (a digest, in order). A segment that starts there
	 * too, has that length and matches those rules again is its
	 * retransmission: dropped again and counted apart, so that the
	 * counters and events say how many requests were refused. Any other
	 * segment there is counted and reported as any segment is. */
	__u32 drop_seq;
	__u32 drop_len;
	__u32 drop_sig;
	__u32 start_seq; /* HS_FL_NO_START: the byte it began at without state */
	/* The second of CLOCK_BOOTTIME the datapath began tracking it, for
	 * 'hdrstrip flows' (its age); 0 where nobody said (the host's own
	 * callers). */
	__u32 born_s;
	struct hs_stream cur; /* the state at next_seq */
	struct hs_ckpt ck[HS_FLOW_CKPTS];
};

_Static_assert(sizeof(struct hs_flow_key) == 44, "hs_flow_key layout");
_Static_assert(sizeof(struct hs_ckpt) == 56, "hs_ckpt layout");
_Static_assert(sizeof(struct hs_flow) == 32 + 48 + HS_FLOW_CKPTS * 56, "hs_flow layout");
_Static_assert((HS_FLOW_CKPTS & (HS_FLOW_CKPTS - 1)) == 0, "checkpoints: a power of two");

/* What a segment gets (hs_seg_begin(), hs_seg_next()). */
enum hs_seg {
	HS_SEG_PASS = 0, /* as it is (with what its pieces rewrote) */
	HS_SEG_SCAN, /* scan payload [off, end) from hs_segwork.from, then hs_seg_next() */
	HS_SEG_DROP, /* dropped: hs_segwork.why */
	HS_SEG_POLICY, /* the on-error policy decides: hs_segwork.why */
	HS_SEG_CREATE, /* put hs_segwork.fresh in the table, then hs_seg_begin() again */
};

/* Why a segment is dropped or left to the policy: one counter each. */
enum hs_why {
	HS_WHY_NONE = 0,
	HS_WHY_MISMATCH, /* retransmit_mismatch: a copy read another way at a cut */
	HS_WHY_UNVERIFIED, /* retransmit_unverified: starts or ends where no state is known */
	HS_WHY_OUT_OF_ORDER, /* out_of_order: ahead of a gap outside a body */
	HS_WHY_OVERSIZE, /* oversize: more payload than the scan window, not all body */
	HS_WHY_SYN_DATA, /* syn_in_flow: data on a SYN inside a connection */
	HS_WHY_NO_ACK, /* malformed: data without ACK, which Linux discards */
	HS_WHY_UNTRACKED, /* untracked: no state, --untracked drop */
	HS_WHY_MAX
};

/* hs_segwork.ev: what happened, one counter each. */
#define HS_EV_FLOW_NEW 0x01 /* flows_new */
#define HS_EV_FLOW_CLOSED 0x02 /* flows_closed */
#define HS_EV_RST_IGNORED 0x04 /* rst_ignored */
#define HS_EV_SYN_IN_FLOW 0x08 /* syn_in_flow */
#define HS_EV_RETRANSMIT 0x10 /* retransmits */
#define HS_EV_UNTRACKED 0x20 /* untracked: a segment of a connection without state */

/* --untracked, as hs_seg_begin() takes it (enum hs_policy in maps.h). */
#define HS_UNTRACKED_DROP 0
#define HS_UNTRACKED_PASS 1
#define HS_UNTRACKED_SCAN 2

/* One segment's work: kept by the caller (a per-CPU scratch map in BPF). */
struct hs_segwork {
	struct hs_stream from; /* the current piece's state at its start */
	struct hs_stream expect; /* ... and the state its end must reach (check) */
	struct hs_flow fresh; /* HS_SEG_CREATE: the new flow */
	__u32 hdr_seq; /* the segment's sequence number, as in its header */
	__u32 seq; /* sequence number of the first payload byte */
	__u32 len; /* payload bytes */
	__u32 win; /* payload bytes the scanner can reach (<= len) */
	__u32 pos; /* sequence number of the current piece's start */
	__u32 off; /* the piece: payload offsets [off, end) */
	__u32 end;
	__u8 flags; /* the segment's TCP flags */
	__u8 check; /* compare the piece's end state with expect */
	__u8 commit; /* the piece is new data: the flow advances past it */
	__u8 why; /* enum hs_why */
	__u8 ev; /* HS_EV_* */
	__u8 pieces; /* pieces handed out so far */
	__u8 nosave; /* the piece is checked line by line; the flow learns nothing */
	/* Set by the caller before hs_seg_begin() for a SYN with no flow: the
	 * receiving stack holds an open connection on the tuple (its socket
	 * lookup found one neither listening nor in TIME_WAIT), so it will
	 * answer the SYN with a challenge ACK and go on with that connection. */
	__u8 conn_open;
	__u8 dir; /* set by the caller: HS_DIR_RESPONSE for a stream of responses */
	/* Set by the caller before hs_seg_begin() for a data segment with no
	 * flow that is known to start its stream: its SYN went by before the
	 * hooks knew the connection was theirs (NAT: conntrack saw the SYN and
	 * no data byte before this one). Its flow starts here, framed. */
	__u8 stream_start;
	__u8 reserved[2];
	/* hs_seg_next()'s input (hs_seg_scanned()): the sequence number from
	 * which the piece's end state held, when has_steady. */
	__u32 steady_seq;
	__u32 has_steady;
};

/* Pieces one segment can take: one per boundary it crosses, and the new
 * bytes after next_seq. */
#define HS_SEG_MAX_PIECES (HS_FLOW_CKPTS + 2)

HS_INLINE int hs_seq_lt(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

HS_INLINE int hs_stream_eq(const struct hs_stream *a, const struct hs_stream *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4] &&
	       x[5] == y[5];
}

/* A flow of direction @dir that starts at @seq: from a message's start,
 * or (@untracked) line by line. */
HS_INLINE void hs_flow_init(struct hs_flow *f, __u32 seq, int untracked, __u32 dir)
{
	__builtin_memset(f, 0, sizeof(*f));
	f->next_seq = seq;
	f->start_seq = seq;
	f->pub_n = HS_PUB_NONE;
	hs_stream_init_dir(&f->cur, dir);
	if (untracked) {
		hs_stream_untrack(&f->cur);
		f->fl = HS_FL_NO_START;
	}
}

/*
 * A FIN right after the last byte passed, or a RST at exactly the next one:
 * the end of the connection for a stack that holds every byte before it.
 * One that lacks some (a segment hdrstrip passed and the stack dropped)
 * takes neither, and reads on when those bytes come again: so the flow
 * stays, to check such resends at its boundaries as before (deleted, they
 * would start a flow without state in the middle of a request, while the
 * stack reads the bytes queued after them with the framing the flow had),
 * and only a SYN starts a new one on the tuple; the table's LRU frees it
 * in time. Counted once.
 */
HS_INLINE void hs_flow_close(struct hs_segwork *w, struct hs_flow *f)
{
	if (!(f->fl & HS_FL_CLOSED))
		w->ev |= HS_EV_FLOW_CLOSED;
	f->fl |= HS_FL_CLOSED;
}

/* A flow that is there and not closed: a SYN on any other is taken as on no
 * flow (hs_seg_begin()), so the caller asks the stack for it
 * (hs_segwork.conn_open). */
HS_INLINE int hs_flow_live(const struct hs_flow *f)
{
	return f && !(f->fl & HS_FL_CLOSED);
}

/*
 * The segment checked line by line from its first byte, as a connection
 * without state is (its first bytes taken for a line's start), and passed
 * with what that masked: the flow learns nothing from it.
 */
HS_INLINE int hs_seg_untracked(struct hs_segwork *w)
{
	hs_stream_init_dir(&w->from, w->dir);
	hs_stream_untrack(&w->from);
	w->pos = w->seq;
	w->off = 0;
	w->end = w->win;
	w->check = 0;
	w->commit = 0;
	w->nosave = 1;
	w->pieces++;
	w->ev |= HS_EV_UNTRACKED;
	return HS_SEG_SCAN;
}

/*
 * The searches over the checkpoints below choose without branches: the
 * verifier would walk each combination of a branch per checkpoint. These
 * give 0 or 1 for u32 values, and a mask no compiler turns into a branch.
 */
HS_INLINE __u64 hs_lt(__u32 a, __u32 b)
{
	return ((__u64)a - (__u64)b) >> 63;
}

HS_INLINE __u64 hs_nonneg(__u32 d) /* (s32)d >= 0 */
{
	return ((d >> 31) & 1) ^ 1;
}

HS_INLINE __u64 hs_nonzero(__u32 d)
{
	return ((__u64)d + 0xffffffffULL) >> 32;
}

HS_INLINE __u64 hs_mask(__u64 c)
{
	__u64 m = -c;

#ifdef __bpf__
	asm volatile("" : "+r"(m));
#endif
	return m;
}

/* Checkpoint @k (< HS_FLOW_CKPTS), an index the verifier sees bounded. */
HS_INLINE __u32 hs_ck_index(__u32 k)
{
	k &= HS_FLOW_CKPTS - 1;
#ifdef __bpf__
	asm volatile("" : "+r"(k));
	k &= HS_FLOW_CKPTS - 1;
#endif
	return k;
}

/* The checkpoint after the one at @q (HS_FLOW_CKPTS: next_seq, the end of
 * the last segment). A function of its own in BPF, like hs_flow_known(). */
HS_SUBPROG int hs_flow_after(const struct hs_flow *f, __u32 q)
{
	__u64 next, d, m;
	__u32 i, n = HS_FLOW_CKPTS;

	if (!f)
		return HS_FLOW_CKPTS;
	next = (__u32)(f->next_seq - q);
	for (i = 0; i < HS_FLOW_CKPTS; i++) {
		d = (__u32)(f->ck[i].seq - q);
		m = hs_mask(f->ck[i].used & hs_nonneg((__u32)d) & hs_nonzero((__u32)d) &
			    hs_lt((__u32)d, (__u32)next));
		next = (next & ~m) | (d & m);
		n = (n & ~(__u32)m) | (i & (__u32)m);
	}
	return (int)n;
}

/*
 * The state at sequence number @p: the nearest boundary at or before it, if
 * @p is that boundary, lies inside (or right at the end of) a body of known
 * length that starts there, or lies in the steady end of the segment that
 * starts there. Returns 1 with *@st, or 0 when it is not known.
 */
HS_SUBPROG int hs_flow_known(const struct hs_flow *f, __u32 p, struct hs_stream *st)
{
	__u64 best, d, m, found;
	__u32 i, k = HS_FLOW_CKPTS, n, next, q;

	if (!f || !st)
		return 0;
	d = (__u32)(p - f->next_seq);
	found = hs_nonneg((__u32)d);
	best = d | (~hs_mask(found) & 0xffffffffULL);
	for (i = 0; i < HS_FLOW_CKPTS; i++) {
		d = (__u32)(p - f->ck[i].seq);
		m = hs_mask(f->ck[i].used & hs_nonneg((__u32)d) & hs_lt((__u32)d, (__u32)best));
		best = (best & ~m) | (d & m);
		k = (k & ~(__u32)m) | (i & (__u32)m);
		found |= m & 1;
	}
	if (!found)
		return 0;
	/* (HS_CK_NO_STEADY is no offset: a body checkpoint's segment may
	 * reach more than 64 KiB past it.) */
	if (best && k < HS_FLOW_CKPTS && f->ck[hs_ck_index(k)].steady != HS_CK_NO_STEADY &&
	    f->ck[hs_ck_index(k)].steady <= best) {
		/* In the steady end of that checkpoint's segment: the state
		 * is the one at the boundary after it (its end). */
		q = f->ck[hs_ck_index(k)].seq;
		n = (__u32)hs_flow_after(f, q);
		next = (n < HS_FLOW_CKPTS ? f->ck[hs_ck_index(n)].seq : f->next_seq) - q;
		if (next <= best)
			return 0;
		if (n < HS_FLOW_CKPTS)
			*st = f->ck[hs_ck_index(n)].st;
		else
			*st = f->cur;
		return 1;
	}
	if (k < HS_FLOW_CKPTS)
		*st = f->ck[hs_ck_index(k)].st;
	else
		*st = f->cur;
	if (best && (st->phase != HS_PH_BODY || best > st->num))
		return 0;
	st->num -= best;
	if (best && !st->num) {
		hs_stream_body_done(st);
		hs_stream_canon(st, 0);
	}
	return 1;
}

/* The first boundary after @pos, or @e if none comes before it. */
HS_SUBPROG __u32 hs_flow_next_cut(const struct hs_flow *f, __u32 pos, __u32 e)
{
	__u64 best = (__u32)(e - pos), d, m;
	int i;

	if (!f)
		return e;
	d = (__u32)(f->next_seq - pos);
	m = hs_mask(hs_nonneg((__u32)d) & hs_nonzero((__u32)d) & hs_lt((__u32)d, (__u32)best));
	best = (best & ~m) | (d & m);
	for (i = 0; i < HS_FLOW_CKPTS; i++) {
		d = (__u32)(f->ck[i].seq - pos);
		m = hs_mask(f->ck[i].used & hs_nonneg((__u32)d) & hs_nonzero((__u32)d) &
			    hs_lt((__u32)d, (__u32)best));
		best = (best & ~m) | (d & m);
	}
	return pos + (__u32)best;
}

/* Remember the state at next_seq before the flow moves past it to @e,
 * with the segment's steady end from @steady_seq (w->has_steady), unless a
 * body that starts at the last boundary already says what it is. */
HS_INLINE void hs_flow_push(struct hs_flow *f, const struct hs_segwork *w, __u32 e)
{
	struct hs_ckpt *last = &f->ck[(f->ck_next - 1) & (HS_FLOW_CKPTS - 1)];
	struct hs_ckpt *ck = &f->ck[f->ck_next & (HS_FLOW_CKPTS - 1)];
	__u32 d = f->next_seq - last->seq, st = w->steady_seq - f->next_seq;

	if (last->used && last->st.phase == HS_PH_BODY && f->cur.phase == HS_PH_BODY &&
	    (__s32)d > 0 && d < last->st.num && f->cur.num == last->st.num - d &&
	    f->cur.cl == last->st.cl && f->cur.req == last->st.req &&
	    f->cur.conn == last->st.conn) {
		/* The last checkpoint's segment now reaches further: its
		 * body says it all, a steady end would say too little. */
		last->steady = HS_CK_NO_STEADY;
		return;
	}
	ck->seq = f->next_seq;
	ck->used = 1;
	ck->steady = HS_CK_NO_STEADY;
	/* Only a segment that starts at the checkpoint has its steady end
	 * measured from it. */
	if (w->has_steady && w->pos == f->next_seq && (__s32)st > 0 && st < e - f->next_seq &&
	    st < HS_CK_NO_STEADY)
		ck->steady = (__u16)st;
	ck->st = f->cur;
	f->ck_next = (f->ck_next + 1) & (HS_FLOW_CKPTS - 1);
}

/* Set up the piece that starts at w->pos (whose state is in w->from). */
HS_INLINE int hs_seg_piece(struct hs_segwork *w, const struct hs_flow *f)
{
	__u32 e = w->seq + w->len, b;

	w->pieces++;
	w->off = w->pos - w->seq;
	if (!hs_seq_lt(w->pos, f->next_seq)) {
		/* New bytes (or bytes ahead of a gap in a body): the rest of
		 * the segment, after which the flow moves on. */
		w->end = w->win;
		w->check = 0;
		w->commit = 1;
		return HS_SEG_SCAN;
	}
	b = hs_flow_next_cut(f, w->pos, e);
	w->end = b - w->seq;
	w->commit = 0;
	w->check = 1;
	/* Every cut is a boundary, and the segment's end was checked. */
	if (!hs_flow_known(f, b, &w->expect)) {
		w->why = HS_WHY_UNVERIFIED;
		return HS_SEG_DROP;
	}
	return HS_SEG_SCAN;
}

/*
 * Payload bytes past the scanner's window: only a body may hold them. A
 * body may end exactly at the segment's end, as a sender's write usually
 * does (a BIG TCP packet's last piece, past 64 KiB, ends where its request
 * does): the next message starts after it, as the scanner's own step to a
 * body's end leaves it (hs_step_body(), hs_flow_known()).
 */
HS_INLINE int hs_seg_rest_is_body(struct hs_stream *st, __u32 rest)
{
	if (!rest)
		return 1;
	if (st->phase != HS_PH_BODY || st->num < rest)
		return 0;
	st->num -= rest;
	if (!st->num) {
		hs_stream_body_done(st);
		hs_stream_canon(st, 0);
	}
	return 1;
}

/* A segment of a stream of direction @dir (HS_DIR_*): @seq as in its TCP
 * header, @len payload bytes of which the scanner reaches @win, TCP
 * @flags. */
HS_INLINE void hs_seg_init(struct hs_segwork *w, __u32 seq, __u32 len, __u32 win, __u8 flags,
			   __u8 dir)
{
	w->dir = dir;
	w->hdr_seq = seq;
	w->len = len;
	w->win = win < len ? win : len;
	w->flags = flags;
	w->ev = 0;
	w->conn_open = 0;
	w->stream_start = 0;
}

/*
 * The segment of hs_seg_init(), with @f its connection's flow or NULL and
 * @untracked the --untracked policy (HS_UNTRACKED_*). The header checks
 * (checksums, lengths, options, urgent data) come first, in the datapath.
 * In BPF this and hs_seg_next() are functions of their own (HS_SUBPROG),
 * which the verifier checks once rather than at every piece.
 */
HS_SUBPROG int hs_seg_begin(struct hs_segwork *w, struct hs_flow *f, __u8 untracked)
{
	__u32 d, seq, len;
	__u8 flags;

	if (!w)
		return HS_SEG_PASS;
	seq = w->hdr_seq;
	len = w->len;
	flags = w->flags;
	w->why = HS_WHY_NONE;
	w->pieces = 0;
	w->check = 0;
	w->commit = 0;
	w->nosave = 0;
	w->seq = seq;
	if (flags & HS_TCP_RST) {
		/* RFC 5961: Linux resets the connection only for a RST at
		 * exactly the next byte; others get a challenge ACK. Its
		 * payload is never data. */
		if (f && seq == f->next_seq) {
			hs_flow_close(w, f);
		} else if (f) {
			w->ev |= HS_EV_RST_IGNORED;
		}
		return HS_SEG_PASS;
	}
	if (flags & HS_TCP_SYN) {
		/* The data of a SYN (TCP Fast Open) starts after it. A closed
		 * flow is no connection to it (the caller asked the stack). */
		w->seq = seq + 1;
		if (!hs_flow_live(f))
			f = NULL;
		if (!f && w->conn_open) {
			/* A connection hdrstrip holds no state for (older than
			 * the attach, or evicted) goes on: the SYN changes
			 * nothing, and its data comes without state. */
			w->ev |= HS_EV_SYN_IN_FLOW;
			if (len) {
				w->why = HS_WHY_SYN_DATA;
				return HS_SEG_DROP;
			}
			return HS_SEG_PASS;
		}
		if (!f) {
			hs_flow_init(&w->fresh, seq + 1, 0, w->dir);
			w->ev |= HS_EV_FLOW_NEW;
			return HS_SEG_CREATE;
		}
		if (f->next_seq != seq + 1 || (f->fl & HS_FL_STARTED)) {
			/* Inside a connection: Linux answers with a challenge
			 * ACK and keeps the connection; the SYN's data is never
			 * read there. Should the connection be gone and this a
			 * new one, its data will show it (below). */
			w->ev |= HS_EV_SYN_IN_FLOW;
			f->fl |= HS_FL_SYN_PENDING;
			f->syn_isn = seq;
			if (len) {
				w->why = HS_WHY_SYN_DATA;
				return HS_SEG_DROP;
			}
			return HS_SEG_PASS;
		}
		/* The same SYN again: on as for the first. */
	} else if (!len) {
		if (f && (flags & HS_TCP_FIN) && seq == f->next_seq)
			hs_flow_close(w, f);
		return HS_SEG_PASS;
	} else if (!(flags & HS_TCP_ACK)) {
		w->why = HS_WHY_NO_ACK;
		return HS_SEG_DROP;
	} else if (!f && w->stream_start) {
		hs_flow_init(&w->fresh, seq, 0, w->dir);
		w->ev |= HS_EV_FLOW_NEW;
		return HS_SEG_CREATE;
	} else if (!f) {
		/* Opened before the attach, or evicted: nothing is known of
		 * where the stream is, so no framing is trusted and every line
		 * is checked (--untracked scan), or the policy decides. */
		w->ev |= HS_EV_UNTRACKED;
		if (untracked == HS_UNTRACKED_PASS)
			return HS_SEG_PASS;
		if (untracked != HS_UNTRACKED_SCAN) {
			w->why = HS_WHY_UNTRACKED;
			return HS_SEG_DROP;
		}
		hs_flow_init(&w->fresh, seq, 1, w->dir);
		return HS_SEG_CREATE;
	} else if ((f->fl & HS_FL_SYN_PENDING) && seq == f->syn_isn + 1) {
		/* Data where the SYN seen inside the connection would start
		 * one: a new connection, or the old one's bytes placed there.
		 * Checking every line without framing is right for both. */
		hs_flow_init(f, seq, 1, hs_stream_dir(&f->cur));
		w->ev |= HS_EV_UNTRACKED;
	}
	if (!len)
		return HS_SEG_PASS;
	w->pos = w->seq;
	d = w->seq - f->next_seq;
	if (!d) {
		w->from = f->cur;
		return hs_seg_piece(w, f);
	}
	if ((__s32)d > 0) {
		/* Ahead of a gap: known only inside a body of known length. */
		if (f->cur.phase == HS_PH_BODY && d <= f->cur.num) {
			if ((__u64)d + len <= f->cur.num)
				return HS_SEG_PASS; /* all body; the flow stays */
			hs_flow_known(f, w->seq, &w->from);
			return hs_seg_piece(w, f);
		}
		w->why = HS_WHY_OUT_OF_ORDER;
		return HS_SEG_POLICY;
	}
	/* Overlaps what was passed. */
	w->ev |= HS_EV_RETRANSMIT;
	if (w->win < len) {
		w->why = HS_WHY_OVERSIZE;
		return HS_SEG_POLICY;
	}
	if (!hs_flow_known(f, w->seq, &w->from) ||
	    (hs_seq_lt(w->seq + len, f->next_seq) && !hs_flow_known(f, w->seq + len, &w->expect))) {
		/* A connection begun without state was checked line by line
		 * from that byte on, trusting no framing, as if a line began
		 * there: a resend of bytes before it, up to exactly that byte,
		 * is checked so too, from its own first byte. The stack reads
		 * such bytes from one copy (one that ends there and starts at
		 * or before what it lacks covers the rest), so no copy's state
		 * matters where it meets another's. A resend that ends anywhere
		 * else could be read with other copies' bytes from a place no
		 * state is known at: dropped. */
		if ((f->fl & HS_FL_NO_START) && w->seq + len == f->start_seq)
			return hs_seg_untracked(w);
		w->why = HS_WHY_UNVERIFIED;
		return HS_SEG_DROP;
	}
	return hs_seg_piece(w, f);
}

/*
 * Under --on-error pass, what becomes of a segment the policy decided
 * (HS_SEG_POLICY): one ahead of a gap is checked line by line on its own
 * (hs_seg_untracked()), and the flow goes on line by line from next_seq, as
 * one begun without state: the stack queues that segment and keeps its
 * bytes where the gap's bytes come again in order, so from the gap on the
 * application may read that copy's framing, not the one the flow would
 * learn from the copy it scans in order (a Transfer-Encoding in one and not
 * in the other). One that reached past what the flow knew leaves the flow
 * line by line after it. Returns HS_SEG_SCAN or HS_SEG_PASS.
 */
HS_INLINE int hs_seg_policy_pass(struct hs_segwork *w, struct hs_flow *f)
{
	if (w->why == HS_WHY_OUT_OF_ORDER && !w->nosave) {
		if (f)
			hs_flow_init(f, f->next_seq, 1, hs_stream_dir(&f->cur));
		return hs_seg_untracked(w);
	}
	if (f && !hs_seq_lt(f->next_seq, w->seq) && hs_seq_lt(f->next_seq, w->seq + w->len))
		hs_flow_init(f, w->seq + w->len, 1, hs_stream_dir(&f->cur));
	return HS_SEG_PASS;
}

/* What the scan of the current piece (@steady: hs_scan_steady(), at buffer
 * offsets where the payload starts at @payload_off) says of its end. */
HS_INLINE void hs_seg_scanned(struct hs_segwork *w, __u32 steady, __u32 payload_off)
{
	w->has_steady = steady != ~0u;
	w->steady_seq = w->seq + (steady - payload_off);
}

/*
 * The current piece was scanned to its end (a drop rule, ambiguous framing
 * or a scan cut short are the caller's to handle first): @got is the state
 * it reached (hs_scan_finish()). Returns the next step.
 */
HS_SUBPROG int hs_seg_next(struct hs_segwork *w, struct hs_flow *f, struct hs_stream *got)
{
	__u32 e;

	if (!w || !f || !got || w->nosave)
		return HS_SEG_PASS;
	e = w->seq + w->len;

	if (w->check) {
		if (!hs_stream_eq(got, &w->expect)) {
			w->why = HS_WHY_MISMATCH;
			return HS_SEG_DROP;
		}
		w->pos = w->seq + w->end;
		if (w->pos == e)
			return HS_SEG_PASS; /* all of it was passed before */
		if (w->pos == f->next_seq)
			w->from = f->cur;
		else
			w->from = w->expect;
		if (w->pieces >= HS_SEG_MAX_PIECES) {
			w->why = HS_WHY_UNVERIFIED;
			return HS_SEG_DROP;
		}
		return hs_seg_piece(w, f);
	}
	if (!hs_seg_rest_is_body(got, w->len - w->win)) {
		w->why = HS_WHY_OVERSIZE;
		return HS_SEG_POLICY;
	}
	hs_flow_push(f, w, e);
	f->cur = *got;
	f->next_seq = e;
	f->fl |= HS_FL_STARTED;
	if (w->flags & HS_TCP_FIN)
		hs_flow_close(w, f); /* the FIN right after the data */
	return HS_SEG_PASS;
}

#endif /* HDRSTRIP_FLOW_H */
