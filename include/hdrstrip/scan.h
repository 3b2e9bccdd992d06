/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The HTTP/1.x request scanner, shared by the BPF programs and the host.
 *
 * A resumable state machine over a byte stream that arrives in buffers (a
 * TCP payload each, in the kernel), driven one step at a time by
 * hs_scan_step(): a step consumes one byte, or up to eight bytes at once
 * where only a line end can matter (SWAR search), or a run of body bytes.
 * The caller owns the loop, so the BPF side can bound it for the verifier.
 * The per-connection part of the state (struct hs_stream) is saved after a
 * buffer and resumed before the next one: a line split at any byte scans as
 * the unsplit line does.
 *
 * Parsing is as liberal as the most liberal server hdrstrip protects:
 *  - a line ends at CRLF, a bare LF or a bare CR;
 *  - SP, HTAB, VT, FF, 0x1c-0x1f, 0x85 and 0xa0 around a name (the bytes
 *    some parser strips) do not change the name;
 *  - a line that starts with SP or HTAB continues the previous field
 *    (obs-fold) and shares its fate, and is also checked on its own;
 *  - the request line accepts what Python accepts (any of the bytes above
 *    between words, HTTP/0.9's two words); a first line that is no such
 *    request line is checked line by line with the rest of the connection,
 *    unless it is certainly another protocol (a TLS record), which no
 *    HTTP/1.x server reads on (HTTP/2's preface reads as a request line,
 *    and what follows it line by line);
 *  - a line that is a name and nothing else (no colon) is a field with an
 *    empty value to nginx: a listed one is masked too.
 * The header block ends only where every such parser agrees it ends: an
 * empty line terminated by LF whose previous line end had an LF too. Where
 * parsers disagree, scanning goes on (masking more is safe, less is not),
 * and the request's framing is ambiguous: an empty line that some parser
 * ends the block at (node's lenient parser: LF CR and another byte) would
 * start its body earlier.
 *
 * Requests follow each other by HTTP/1.1 framing: Content-Length bytes of
 * body, or chunks (whose trailer fields are scanned like headers), or none.
 * Framing that servers could read two ways (two lengths, a length and
 * chunked, a bad chunk size, a framing field with odd bytes around its
 * name, an ambiguous end of the block) stops the scan in HS_PH_HALT for the
 * caller's policy. After CONNECT or an Upgrade, and after bytes that do not
 * start a request where one should start, the connection is scanned line
 * by line with no framing (untracked mode): every line that looks like an
 * internal field is masked. So is a connection first seen mid-way
 * (hs_stream_untrack() from its first byte: flow.h).
 *
 * A matched field is masked in place: from its first byte (after a leading
 * SP/HTAB run, kept so the line's shape stays) to its line end, it becomes
 * the list's filler name (hs_trie.fill: "x-hdrstrip" whose first byte
 * starts no listed name: 'y' for most lists, which name "x-..." fields)
 * cut to fit, ':' ' ' and then 'x' bytes; continuation lines of a masked
 * field keep their leading SP/HTAB and become the filler's first byte. The
 * result is a valid field line of the same length that carries nothing of
 * the original. When a buffer ends inside a name that could still match,
 * the name's bytes in that buffer are rewritten as if it matched (they
 * cannot be changed once sent): the same bytes the unsplit line gets when it
 * does match; if it turns out not to, the rest of that line is masked too,
 * so the line stays a valid field. The one's complement difference of every
 * rewritten byte is accumulated for the caller's checksum update.
 */
#ifndef HDRSTRIP_SCAN_H
#define HDRSTRIP_SCAN_H

#include "portable.h"
#include "trie.h"

enum hs_phase {
	HS_PH_REQ_LEAD = 0, /* empty lines and blanks before the request line */
	HS_PH_REQ_METHOD,
	HS_PH_REQ_WS1,
	HS_PH_REQ_TARGET,
	HS_PH_REQ_WS2,
	HS_PH_REQ_VERSION, /* "HTTP/" then the version bytes */
	HS_PH_REQ_TRAIL, /* blanks after the version */
	HS_PH_REQ_REST, /* the rest of a first line that is no request line */
	HS_PH_LINE_START, /* first byte of a field line */
	HS_PH_LEAD, /* blanks before a name */
	HS_PH_NAME,
	HS_PH_SKIP, /* rest of a line that is kept */
	HS_PH_MASK, /* rest of a line that is rewritten */
	HS_PH_CR, /* after a CR: an LF here is part of the same line end */
	HS_PH_VALUE_CL, /* the value of a Content-Length field */
	HS_PH_VALUE_TE, /* the value of a Transfer-Encoding field */
	HS_PH_BODY, /* hs_stream.num bytes of body (or of a chunk) to skip */
	HS_PH_CHUNK_SIZE,
	HS_PH_CHUNK_EXT, /* chunk extensions, up to the line end */
	HS_PH_CHUNK_LF, /* after the CR of a chunk-size line */
	HS_PH_CHUNK_END, /* the CRLF after a chunk's data */
	HS_PH_PREMASK, /* rewriting the name bytes of this buffer, then DONE */
	/* Terminal: nothing more is scanned in this stream's buffer. */
	HS_PH_NOT_HTTP, /* the stream does not start with a request */
	HS_PH_DROPPED, /* a drop rule matched */
	HS_PH_HALT, /* ambiguous framing: the caller's policy decides */
	HS_PH_MAX
};

/* hs_stream.flags: the current line */
#define HS_SF_PREV_LF 0x001 /* the previous line end had an LF */
#define HS_SF_PREV_MASKED 0x002 /* the previous field was masked */
#define HS_SF_IN_JUNK 0x004 /* NAME: in a run of blanks after the name */
#define HS_SF_CONT 0x008 /* this line started with SP/HTAB */
#define HS_SF_WS_PREFIX 0x010 /* LEAD: still in the line's leading SP/HTAB */
#define HS_SF_EMPTY 0x020 /* CR: the CR ended an empty line */
#define HS_SF_KEEP_WS 0x040 /* MASK: keep SP/HTAB up to the first other byte */
#define HS_SF_FILL_X 0x080 /* MASK: a continuation line: every byte becomes 'x' */
#define HS_SF_LEAD_JUNK 0x100 /* the name came after other bytes */
#define HS_SF_NAME_JUNK 0x200 /* blanks came after the name (framing names) */
#define HS_SF_PREMASKED 0x400 /* the line was rewritten in an earlier buffer */
#define HS_SF_CHUNK_CR 0x800 /* CHUNK_END: the CR was seen */
#define HS_SF_RM_CR 0x1000 /* REMOVE: a removed line ended in CR; an LF next is its */

/* hs_stream.req: the current request */
#define HS_RQ_CONNECT_CAND 0x01 /* the method so far is a prefix of CONNECT */
#define HS_RQ_CONNECT 0x02
#define HS_RQ_UPGRADE 0x04 /* an Upgrade field was kept */
#define HS_RQ_CL 0x08 /* a Content-Length was seen (value in hs_stream.cl) */
#define HS_RQ_TE 0x10 /* a Transfer-Encoding was seen */
#define HS_RQ_CHUNKED 0x20 /* ... and chunked is its final coding */
#define HS_RQ_PREV_FRAMING 0x40 /* the previous field frames the body */
#define HS_RQ_TRAILERS 0x80 /* the fields are a chunked body's trailers */

/* hs_stream.conn: the connection */
#define HS_CN_SEEN_REQUEST 0x01 /* a request has started on this stream */
#define HS_CN_UNTRACKED 0x02 /* line by line, no framing (see above) */
#define HS_CN_BAD_FRAMING 0x04 /* the current request's framing is ambiguous */

/* hs_scan_step() results */
enum hs_step {
	HS_STEP_MORE = 0, /* call again */
	HS_STEP_MATCH, /* a field matched list rule hs_scan.rule - 1; call again */
	HS_STEP_DONE, /* nothing more to scan in this buffer */
	HS_STEP_REMOVE, /* HS_OPT_REMOVE: remove [rm_start, rm_end); call again */
};

#define HS_MAX_METHOD_LEN 32
/* Columns carried from one buffer to the next are clamped: past this, no
 * decision depends on the exact value (method length, filler columns). */
#define HS_COL_CLAMP 48
/* Chunk sizes and lengths above this are taken as bad framing. */
#define HS_MAX_BODY (1ULL << 48)

/*
 * Offsets into a buffer stay below HS_MAX_BUF: the verifier only proves
 * packet accesses whose offset plus size stays within 64 KiB (MAX_PACKET_OFF),
 * and a step's last 8-byte load (HS_SKIP_WORDS words from its offset) must
 * fit too.
 */
#define HS_MAX_BUF 0xffc0

/*
 * Steps one buffer can take, per byte (plus a few at its end): a callers'
 * loop bound. A byte is walked at most three times: read as part of a
 * request line; read again line by line when that line turns out to be none
 * (a first line no server agrees on, or a desynchronised stream); and rewritten when the
 * buffer ends inside a name that may still match, on that same line. Other
 * bytes take two walks at most (a masked name is walked again to be
 * rewritten).
 */
#define HS_STEPS_PER_BYTE 3

/* The part of the state that lives from one buffer to the next. */
struct hs_stream {
	__u64 num; /* number being parsed, or body bytes left (BODY) */
	__u64 cl; /* the request's Content-Length */
	__u32 tstate; /* trie state of the current name */
	__u32 saved; /* trie state before a run of blanks after the name */
	__u16 flags; /* HS_SF_* */
	__u16 col; /* bytes of the current line (or word) before this buffer */
	__u8 phase; /* enum hs_phase */
	__u8 req; /* HS_RQ_* */
	__u8 conn; /* HS_CN_* */
	__u8 name_fill; /* MASK: length of the filler name on this line */
	__u8 vstate; /* value and chunk-size parsers' sub-state */
	__u8 fcand; /* HS_FR_*: framing field names the name may still be */
	__u16 name_col; /* column of the name's first byte */
	/* Zero: flows compare states whole (flow.h). */
	__u8 reserved[4];
};

_Static_assert(sizeof(struct hs_stream) == 40, "hs_stream layout");

/* One buffer's scan. */
struct hs_scan {
	struct hs_stream st;
	__u32 pos; /* offset of the next byte in the buffer */
	__u32 end; /* offset one past the last byte to scan (<= HS_MAX_BUF) */
	__u32 start; /* offset of the buffer's first byte */
	/* First byte of the current line that may be rewritten; in the request
	 * line, the first byte of the current word. Columns are measured from
	 * it rather than counted, which also keeps the verifier's view of the
	 * state small (a counter would be a new exact value every byte). It may
	 * lie before @start when the line began in an earlier buffer. */
	__u32 mask_start;
	__u32 resume; /* PREMASK: where the buffer ends */
	/* The current line's first byte in this buffer: for a request line,
	 * where a desynchronised stream is checked from, line by line; for a
	 * field line (HS_OPT_REMOVE), where its removal or holding starts. */
	__u32 line_start;
	/* Where the phase the scan is in began (run_phase: that phase): from
	 * there on, in a kept line's rest or a masked line's 'x' run, the
	 * state is the one the buffer ends in (hs_scan_steady()). */
	__u32 run_at;
	__u8 csum_par; /* parity of the offset the checksum's 16-bit words start at */
	__u8 opts; /* HS_OPT_* */
	__u16 rule; /* list rule + 1 of the last match */
	/* One's complement sum of (new - old) over rewritten bytes, in the
	 * byte order of memory (what the kernel's checksum helpers use). */
	__u64 csum_acc;
	/* What this buffer's scan found. */
	__u16 requests;
	__u16 seen;
	__u16 matched;
	__u16 masked;
	__u16 premasked; /* lines rewritten ahead because a name was split */
	__u16 framing_invalid; /* Content-Length values no server reads as a length */
	__u16 desync; /* where a request should start, something else did */
	__u16 conflicts; /* ambiguous framing, scanned on line by line */
	/* HS_OPT_REMOVE only. */
	struct hs_stream line_snap; /* the state at the current line's start */
	__u32 rm_start; /* HS_STEP_REMOVE: the bytes to remove */
	__u32 rm_end;
	__u8 hold; /* the buffer ends in a line not decided yet, from line_start */
	__u8 run_phase;
	__u8 reserved3[2];
};

/* hs_scan.opts: what to do where the stream is not what it should be. */
#define HS_OPT_CONFLICT_GO_ON                                                                      \
	0x2 /* ambiguous framing: go on line by line
				     instead of stopping (HS_PH_HALT) */
/*
 * Remove internal field lines instead of masking them: nothing is written;
 * each line (name, value, continuation lines and line end) is reported as
 * HS_STEP_REMOVE ranges, for a caller that can take bytes out of the stream
 * (a socket's send path). A buffer that ends before a line's fate is known
 * stops with hs_scan.hold set: the caller holds the bytes from line_start
 * and scans them again, from line_snap, with what follows.
 */
#define HS_OPT_REMOVE 0x4

_Static_assert(sizeof(struct hs_scan) == 152, "hs_scan layout");

/*
 * Every offset stored in struct hs_scan goes through hs_off(). The mask is a
 * no-op at run time (offsets stay below HS_MAX_BUF + 8), but it gives the
 * verifier the same range for a stored offset on every pass over the scan
 * loop, so its states converge instead of drifting by one byte a pass. The
 * empty asm keeps clang from proving the mask redundant and dropping it.
 */
HS_INLINE __u32 hs_off(__u32 v)
{
#ifdef __bpf__
	asm volatile("" : "+r"(v));
#endif
	return v & 0xffff;
}

/* Column of @pos on the current line (16-bit: mask_start may have wrapped
 * below zero for a line that began in an earlier buffer). */
HS_INLINE __u32 hs_col(const struct hs_scan *s, __u32 pos)
{
	return (pos - s->mask_start) & 0xffff;
}

/* Is the scan inside a request line or a field block (headers, trailers)? */
HS_INLINE int hs_scan_in_block(const struct hs_scan *s)
{
	return s->st.phase >= HS_PH_REQ_METHOD && s->st.phase <= HS_PH_VALUE_TE &&
	       !(s->st.conn & HS_CN_UNTRACKED);
}

/* The state of a stream before its first byte. */
HS_INLINE void hs_stream_init(struct hs_stream *st)
{
	__builtin_memset(st, 0, sizeof(*st));
	st->phase = HS_PH_REQ_LEAD;
}

/* Untracked mode from the next line on: no framing, every line checked. */
HS_INLINE void hs_stream_untrack(struct hs_stream *st)
{
	hs_stream_init(st);
	st->conn = HS_CN_SEEN_REQUEST | HS_CN_UNTRACKED;
	st->phase = HS_PH_LINE_START;
}

/*
 * Scan @buf[start, end) with stream state @st. @csum_base is the offset the
 * checksummed data starts at (the TCP header), so that rewritten bytes land
 * in the right half of their 16-bit word.
 */
HS_INLINE void hs_scan_begin(struct hs_scan *s, const struct hs_stream *st, __u32 start, __u32 end,
			     __u32 csum_base)
{
	__builtin_memset(s, 0, sizeof(*s));
	s->st = *st;
	s->start = start;
	s->pos = start;
	s->end = end > HS_MAX_BUF ? HS_MAX_BUF : end;
	s->mask_start = hs_off(start - st->col);
	s->line_start = s->start;
	s->rm_start = start;
	s->run_at = start;
	s->run_phase = st->phase;
	s->csum_par = csum_base & 1;
}

/*
 * The first offset of the buffer from which the state it ends in holds at
 * every byte (as hs_scan_finish() gives it): the rest of a kept line, or
 * the 'x' run of a masked one, without a line end after it. ~0 when there
 * is none. A flow knows the state there without a checkpoint (flow.h).
 */
HS_INLINE __u32 hs_scan_steady(const struct hs_scan *s)
{
	__u32 at = s->run_at, c, need;

	if (s->run_phase != s->st.phase || at >= s->pos)
		return ~0u;
	if (s->st.phase == HS_PH_SKIP)
		return at;
	if (s->st.phase != HS_PH_MASK || (s->st.flags & (HS_SF_FILL_X | HS_SF_KEEP_WS)))
		return ~0u;
	c = hs_col(s, at);
	need = s->st.name_fill + 2u;
	if (c < need)
		at += need - c;
	return at < s->pos ? at : ~0u;
}

/*
 * @st made canonical for a line whose column is @col: what the next line or
 * word starts afresh keeps nothing of the last one's columns or name, so
 * the same bytes give the same state wherever a buffer ends (flows compare
 * states, flow.h).
 */
HS_INLINE void hs_stream_canon(struct hs_stream *st, __u32 col)
{
	switch (st->phase) {
	case HS_PH_REQ_LEAD:
	case HS_PH_REQ_REST:
	case HS_PH_LINE_START:
	case HS_PH_CR:
	case HS_PH_BODY:
	case HS_PH_CHUNK_EXT:
	case HS_PH_CHUNK_LF:
	case HS_PH_CHUNK_END:
		st->col = 0;
		st->name_col = 0;
		st->tstate = 0;
		st->saved = 0;
		st->fcand = 0;
		st->name_fill = 0;
		if (st->phase != HS_PH_BODY)
			st->vstate = 0;
		return;
	case HS_PH_SKIP:
		/* The rest of a kept line: columns mean nothing. */
		st->col = 0;
		st->name_col = 0;
		return;
	case HS_PH_MASK:
		/* Past the filler name, a masked line is 'x' bytes to its end,
		 * whatever the column. */
		if (!(st->flags & (HS_SF_FILL_X | HS_SF_KEEP_WS)) && col >= st->name_fill + 2u) {
			st->col = HS_COL_CLAMP;
			st->name_col = 0;
			return;
		}
		break;
	default:
		break;
	}
	if (col > HS_COL_CLAMP) {
		/* The name's column moves with the line's, so that the length
		 * of a name begun in this buffer stays exact in the next one
		 * (framing names are recognised by it). A name that began more
		 * than HS_COL_CLAMP bytes back is no framing name any more. */
		__u32 d = col - HS_COL_CLAMP;

		st->name_col = st->name_col > d ? st->name_col - d : 0;
		col = HS_COL_CLAMP;
	}
	st->col = col;
}

/* The stream state to resume from with the buffer that follows. */
HS_INLINE void hs_scan_finish(const struct hs_scan *s, struct hs_stream *st)
{
	*st = s->st;
	hs_stream_canon(st, hs_col(s, s->pos));
}

HS_INLINE int hs_is_eol(__u8 b)
{
	return b == '\r' || b == '\n';
}

/* Bytes that some parser strips around a name or splits a request line on:
 * SP HTAB VT FF 0x1c-0x1f (Python's str.split/strip), 0x85 0xa0 (the same on
 * latin-1 text). */
#define HS_BLANK_LOW                                                                               \
	((1ULL << ' ') | (1ULL << '\t') | (1ULL << 0x0b) | (1ULL << 0x0c) | (0xfULL << 0x1c))

HS_INLINE int hs_is_blank(__u8 b)
{
	if (b < 64)
		return (HS_BLANK_LOW >> b) & 1;
	return b == 0x85 || b == 0xa0;
}

/* RFC 9110 tchar, as a 128-bit set. */
HS_INLINE int hs_is_tchar_byte(__u8 b)
{
	const __u64 lo = 0x03ff6cfa00000000ULL; /* ! # $ % & ' * + - . 0-9 */
	const __u64 hi = 0x57ffffffc7fffffeULL; /* A-Z ^ _ ` a-z | ~ */

	if (b < 64)
		return (lo >> b) & 1;
	if (b < 128)
		return (hi >> (b - 64)) & 1;
	return 0;
}

/* Value 0-15 of a hex digit, or 16. */
HS_INLINE __u32 hs_hex(__u8 b)
{
	if (b >= '0' && b <= '9')
		return b - '0';
	b |= 0x20;
	if (b >= 'a' && b <= 'f')
		return b - 'a' + 10;
	return 16;
}

/* The filler byte for column @col of a masked line: the list's filler name
 * (hs_trie.fill) cut to @name_fill bytes, ':', ' ', then 'x'. */
HS_INLINE __u8 hs_fill_byte(const struct hs_trie *t, __u32 col, __u32 name_fill)
{
	if (col < name_fill)
		return (__u8)(t->fill[(col >> 3) & 1] >> (8 * (col & 7)));
	if (col == name_fill)
		return ':';
	if (col == name_fill + 1)
		return ' ';
	return 'x';
}

/* The byte a masked continuation line is made of (after its SP/HTAB run):
 * the filler name's first byte, which starts no listed name, so that the
 * line read on its own is no listed field either. */
HS_INLINE __u8 hs_fill_cont(const struct hs_trie *t)
{
	return (__u8)t->fill[0];
}

/* Contribution of byte @b at offset @off to a memory-order 16-bit sum. */
HS_INLINE __u64 hs_csum_byte(const struct hs_scan *s, __u32 off, __u8 b)
{
	return ((off ^ s->csum_par) & 1) ? (__u64)b << 8 : b;
}

/* Same, for the eight bytes of @w at offset @off. */
HS_INLINE __u64 hs_csum_word(const struct hs_scan *s, __u32 off, __u64 w)
{
	const __u64 m = 0x0000ffff0000ffffULL;
	__u64 x = ((off ^ s->csum_par) & 1) ? (w << 8) : w;
	__u64 sum = (x & m) + ((x >> 16) & m);

	sum = (sum & 0xffffffffULL) + (sum >> 32);
	if ((off ^ s->csum_par) & 1)
		sum += w >> 56;
	return sum;
}

/* Fold a 64-bit one's complement accumulator to 16 bits. */
HS_INLINE __u16 hs_csum_fold(__u64 x)
{
	x = (x & 0xffffffffULL) + (x >> 32);
	x = (x & 0xffff) + (x >> 16);
	x = (x & 0xffff) + (x >> 16);
	x = (x & 0xffff) + (x >> 16);
	return (__u16)x;
}

/* New value of a 16-bit Internet checksum field (as read from memory) after
 * rewrites whose differences add up to @acc (RFC 1624, eqn. 3). */
HS_INLINE __u16 hs_csum_update_acc(__u64 acc, __u16 check)
{
	__u64 sum = (__u64)(__u16)~check + hs_csum_fold(acc);

	return (__u16)~hs_csum_fold(sum);
}

/* The same for the rewrites accumulated in @s. */
HS_INLINE __u16 hs_csum_update(const struct hs_scan *s, __u16 check)
{
	return hs_csum_update_acc(s->csum_acc, check);
}

HS_INLINE void hs_rewrite_byte(struct hs_scan *s, __u8 *p, __u32 off, __u8 nb)
{
	__u8 ob = *p;

	*p = nb;
	s->csum_acc += hs_csum_byte(s, off, nb) + 0xffff - hs_csum_byte(s, off, ob);
}

/* A line ends at byte @b (CR or LF) at offset @pos. */
HS_INLINE void hs_end_line(struct hs_scan *s, __u8 b, __u32 pos)
{
	s->st.flags &= HS_SF_PREV_LF | HS_SF_PREV_MASKED;
	if (b == '\r') {
		s->st.phase = HS_PH_CR;
	} else {
		s->st.phase = HS_PH_LINE_START;
		s->st.flags |= HS_SF_PREV_LF;
	}
	s->pos = hs_off(pos + 1);
}

/* Framing that servers could read two ways: stop for the caller's policy,
 * or, when the policy lets such requests through, check every line of the
 * rest of the connection. */
HS_INLINE int hs_conflict(struct hs_scan *s)
{
	s->conflicts++;
	if (!(s->opts & HS_OPT_CONFLICT_GO_ON)) {
		s->st.phase = HS_PH_HALT;
		return HS_STEP_DONE;
	}
	hs_stream_untrack(&s->st);
	s->st.flags = HS_SF_PREV_LF;
	return HS_STEP_MORE;
}

/* A request (with its body) is over: the next one starts here. */
HS_INLINE void hs_stream_request_done(struct hs_stream *st)
{
	int tunnel = st->req & (HS_RQ_CONNECT | HS_RQ_UPGRADE);

	st->req = 0;
	st->cl = 0;
	st->num = 0;
	st->conn &= ~HS_CN_BAD_FRAMING;
	if (tunnel) {
		/* A server may refuse the switch and read on: what follows
		 * might still be HTTP, and is checked line by line. */
		st->conn |= HS_CN_UNTRACKED;
		st->phase = HS_PH_LINE_START;
		return;
	}
	st->phase = HS_PH_REQ_LEAD;
}

HS_INLINE void hs_request_done(struct hs_scan *s)
{
	hs_stream_request_done(&s->st);
}

/* A body (or a chunk's data) that @st is in ended: what follows it. */
HS_INLINE void hs_stream_body_done(struct hs_stream *st)
{
	st->num = 0;
	if (st->req & HS_RQ_TE) {
		st->phase = HS_PH_CHUNK_END;
		st->flags &= ~HS_SF_CHUNK_CR;
		return;
	}
	hs_stream_request_done(st);
}

/* A line end just ended an empty line that is not where every parser ends
 * the block (CR LF after a bare CR; a bare CR, which node's lenient parser
 * takes for the end after an LF): some server's body starts here, ours
 * later, so this request's framing cannot be trusted. */
HS_INLINE void hs_ambiguous_end(struct hs_scan *s)
{
	if ((s->st.flags & HS_SF_EMPTY) && !(s->st.conn & HS_CN_UNTRACKED))
		s->st.conn |= HS_CN_BAD_FRAMING;
}

/* The header (or trailer) block ended at an empty line. */
HS_INLINE int hs_block_done(struct hs_scan *s)
{
	__u8 rq = s->st.req;

	if (s->st.conn & HS_CN_BAD_FRAMING)
		return hs_conflict(s);
	if (rq & HS_RQ_TRAILERS) {
		hs_request_done(s);
		return HS_STEP_MORE;
	}
	if ((rq & HS_RQ_TE) && ((rq & HS_RQ_CL) || !(rq & HS_RQ_CHUNKED)))
		return hs_conflict(s);
	if (rq & HS_RQ_TE) {
		s->st.phase = HS_PH_CHUNK_SIZE;
		s->st.num = 0;
		s->st.vstate = 0;
		return HS_STEP_MORE;
	}
	if ((rq & HS_RQ_CL) && s->st.cl) {
		s->st.phase = HS_PH_BODY;
		s->st.num = s->st.cl;
		return HS_STEP_MORE;
	}
	hs_request_done(s);
	return HS_STEP_MORE;
}

/*
 * The fields that frame a request are recognised beside the trie, exactly
 * as servers spell them (any case, no '_' for '-'), so the list stays the
 * operator's alone. Byte @i of field name @k, or 0 past its end.
 */
#define HS_FR_CL 0x1 /* content-length */
#define HS_FR_TE 0x2 /* transfer-encoding */
#define HS_FR_UPGRADE 0x4 /* upgrade */

HS_INLINE __u8 hs_framing_byte(__u32 k, __u32 i)
{
	__u64 w;

	if (k == 0) {
		if (i >= 14)
			return 0;
		w = i < 8 ? 0x2d746e65746e6f63ULL : 0x00006874676e656cULL; /* "content-" "length" */
	} else if (k == 1) {
		if (i >= 17)
			return 0;
		w = i < 8 ? 0x726566736e617274ULL : i < 16 ? 0x6e69646f636e652dULL : 0x67;
	} else {
		if (i >= 7)
			return 0;
		w = 0x0065646172677075ULL; /* "upgrade" */
	}
	return (__u8)(w >> (8 * (i & 7)));
}

/* Narrow the framing candidates by name byte @b at index @i. */
HS_INLINE __u8 hs_framing_step(__u8 fc, __u8 b, __u32 i)
{
	__u8 c = b | 0x20; /* ASCII letters to lower case; '-' stays */

	if ((fc & HS_FR_CL) && c != hs_framing_byte(0, i))
		fc &= ~HS_FR_CL;
	if ((fc & HS_FR_TE) && c != hs_framing_byte(1, i))
		fc &= ~HS_FR_TE;
	if ((fc & HS_FR_UPGRADE) && c != hs_framing_byte(2, i))
		fc &= ~HS_FR_UPGRADE;
	return fc;
}

/* Eight bytes of a string held in words @lo, @hi, from byte @r (< 8). */
HS_INLINE __u64 hs_str_window(__u64 lo, __u64 hi, __u32 r)
{
	r &= 7;
	return r ? (lo >> (8 * r)) | (hi << (64 - 8 * r)) : lo;
}

/* Expected bytes (lower case, zero past the end) of framing name @k
 * (0: content-length, 1: transfer-encoding, 2: upgrade) from index @i. */
HS_INLINE __u64 hs_framing_word(__u32 k, __u32 i)
{
	if (i >= 24)
		return 0;
	if (k == 0)
		return i < 8 ? hs_str_window(0x2d746e65746e6f63ULL, 0x00006874676e656cULL, i)
			     : 0x00006874676e656cULL >> (8 * (i & 7));
	if (k == 1) {
		if (i < 8)
			return hs_str_window(0x726566736e617274ULL, 0x6e69646f636e652dULL, i);
		if (i < 16)
			return hs_str_window(0x6e69646f636e652dULL, 0x67, i);
		return 0x67ULL >> (8 * (i & 7));
	}
	return i < 8 ? 0x0065646172677075ULL >> (8 * i) : 0;
}

/* hs_framing_step() over the first @n (1..8) bytes of @w, at index @i. A
 * name byte is never zero once or-ed with 0x20, so the zeros past a name's
 * end drop the candidate a longer name was. */
HS_INLINE __u8 hs_framing_step8(__u8 fc, __u64 w, __u32 n, __u32 i)
{
	__u64 c = w | (HS_ONES * 0x20), m = hs_byte_mask(n);

	if ((fc & HS_FR_CL) && ((c ^ hs_framing_word(0, i)) & m))
		fc &= ~HS_FR_CL;
	if ((fc & HS_FR_TE) && ((c ^ hs_framing_word(1, i)) & m))
		fc &= ~HS_FR_TE;
	if ((fc & HS_FR_UPGRADE) && ((c ^ hs_framing_word(2, i)) & m))
		fc &= ~HS_FR_UPGRADE;
	return fc;
}

/* The candidates whose whole name is the @i bytes seen. */
HS_INLINE __u8 hs_framing_exact(__u8 fc, __u32 i)
{
	if ((fc & HS_FR_CL) && hs_framing_byte(0, i))
		fc &= ~HS_FR_CL;
	if ((fc & HS_FR_TE) && hs_framing_byte(1, i))
		fc &= ~HS_FR_TE;
	if ((fc & HS_FR_UPGRADE) && hs_framing_byte(2, i))
		fc &= ~HS_FR_UPGRADE;
	return fc;
}

/* First byte of a name at @pos: counted, and looked up from the root. */
HS_INLINE void hs_start_name(struct hs_scan *s, const struct hs_trie *t, __u8 b, __u32 pos)
{
	__u32 col = hs_col(s, pos);

	if (!(s->st.flags & HS_SF_CONT))
		s->seen++;
	s->st.name_col = col;
	s->st.fcand = hs_framing_step(HS_FR_CL | HS_FR_TE | HS_FR_UPGRADE, b, 0);
	s->st.tstate = hs_trie_step(t, HS_TRIE_ROOT, b);
	s->st.phase = s->st.tstate == HS_TRIE_DEAD && !s->st.fcand ? HS_PH_SKIP : HS_PH_NAME;
	s->pos = hs_off(pos + 1);
}

/* Rewrite the current line from its first rewritable byte in this buffer. */
HS_INLINE void hs_start_mask(struct hs_scan *s, __u32 pos)
{
	__u32 len = hs_col(s, pos);

	s->st.name_fill = len < HS_FILL_NAME_LEN ? len : HS_FILL_NAME_LEN;
	s->st.flags &= ~(HS_SF_KEEP_WS | HS_SF_FILL_X);
	s->st.phase = HS_PH_MASK;
	/* Go back to the line's start, or this buffer's if it began earlier. */
	s->pos = hs_col(s, s->start) <= hs_col(s, pos) && hs_col(s, s->start) ? s->start
									      : s->mask_start;
}

/* A field that frames the request (Content-Length, Transfer-Encoding,
 * Upgrade) is kept: learn from it. Returns the next phase. */
HS_INLINE __u8 hs_framing_field(struct hs_scan *s, __u8 fc)
{
	/* Odd bytes around the name: some servers take the field, others
	 * drop it, so nobody can tell where the body ends. */
	if (s->st.flags & (HS_SF_NAME_JUNK | HS_SF_LEAD_JUNK | HS_SF_CONT)) {
		s->st.conn |= HS_CN_BAD_FRAMING;
		return HS_PH_SKIP;
	}
	s->st.req |= HS_RQ_PREV_FRAMING;
	s->st.vstate = 0;
	s->st.num = 0;
	if (fc & HS_FR_CL)
		return HS_PH_VALUE_CL;
	if (fc & HS_FR_TE)
		return HS_PH_VALUE_TE;
	s->st.req |= HS_RQ_UPGRADE;
	return HS_PH_SKIP;
}

/*
 * The name that ended at @pos matched list rule @v - 1: drop, or mask the
 * line from its start, or (HS_OPT_REMOVE) report the whole line from its
 * first byte, scanning on from @next.
 */
HS_INLINE int hs_matched(struct hs_scan *s, const struct hs_trie *t, __u32 v, __u32 pos, __u32 next)
{
	s->rule = v;
	s->matched++;
	if (t->rules[(v - 1) & (HS_MAX_NAMES - 1)].action == HS_ACT_DROP) {
		s->st.phase = HS_PH_DROPPED;
		return HS_STEP_MATCH;
	}
	s->masked++;
	if (s->opts & HS_OPT_REMOVE) {
		/* The whole line goes, from its first byte: no rewriting. */
		s->st.phase = HS_PH_MASK;
		s->rm_start = s->line_start;
		s->pos = hs_off(next);
		return HS_STEP_MATCH;
	}
	hs_start_mask(s, pos);
	return HS_STEP_MATCH;
}

/* The name ended at a colon at @pos: look the verdict up and act on it. */
HS_INLINE int hs_decide(struct hs_scan *s, const struct hs_trie *t, __u32 pos)
{
	__u32 v = hs_trie_result(t, (s->st.flags & HS_SF_IN_JUNK) ? s->st.saved : s->st.tstate);
	__u8 fc = s->st.fcand;

	if (!(s->st.flags & HS_SF_NAME_JUNK))
		fc = hs_framing_exact(fc, hs_col(s, pos) - s->st.name_col);
	s->st.req &= ~HS_RQ_PREV_FRAMING;
	if (!v) {
		s->st.phase = HS_PH_SKIP;
		if (fc && !(s->st.conn & HS_CN_UNTRACKED) && !(s->st.req & HS_RQ_TRAILERS))
			s->st.phase = hs_framing_field(s, fc);
		if (s->st.flags & HS_SF_PREMASKED) {
			/* Its first bytes are gone already: mask the rest. */
			hs_start_mask(s, pos);
			return HS_STEP_MORE;
		}
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	return hs_matched(s, t, v, pos, pos + 1);
}

/*
 * The line ended at @pos (byte @b) in its name, with no colon: nginx takes
 * it for a field with an empty value, so a listed name is masked (or
 * dropped) as a field is; any other such line is kept.
 */
HS_INLINE int hs_decide_bare(struct hs_scan *s, const struct hs_trie *t, __u8 b, __u32 pos)
{
	__u32 v = hs_trie_result(t, (s->st.flags & HS_SF_IN_JUNK) ? s->st.saved : s->st.tstate);

	s->st.flags &= ~HS_SF_PREV_MASKED;
	if (!v) {
		if (s->st.flags & HS_SF_PREMASKED) {
			/* Its first bytes are gone already: mask the rest. */
			hs_start_mask(s, pos);
			return HS_STEP_MORE;
		}
		hs_end_line(s, b, pos);
		return HS_STEP_MORE;
	}
	/* Removed, the line goes with its line end (at @pos). */
	return hs_matched(s, t, v, pos, pos);
}

/* Request line, one byte (@p, @data_end: where it is, for a word). */
HS_INLINE int hs_step_request(struct hs_scan *s, __u8 *p, __u8 *data_end, __u8 b, __u32 pos)
{
	int blank = hs_is_blank(b), eol = hs_is_eol(b);
	__u32 i = hs_col(s, pos);
	__u8 conn = s->st.conn;

	switch (s->st.phase) {
	case HS_PH_REQ_LEAD:
		if (blank || eol)
			break;
		s->line_start = hs_off(pos);
		if (b == 0x16 && !(s->st.conn & HS_CN_SEEN_REQUEST)) {
			/* A TLS record (handshake): certainly no HTTP/1.x, which
			 * no server reads on (it is no token byte). */
			s->st.phase = HS_PH_NOT_HTTP;
			return HS_STEP_DONE;
		}
		if (!hs_is_tchar_byte(b))
			goto not_http;
		if ((b == 'G' || b == 'P') && pos + 8 <= s->end && p + 8 <= data_end) {
			/* "GET /" or "POST /" in one step, on to the target. */
			__u64 w = hs_load64(p);
			__u32 n = (w & 0xffffffffffULL) == 0x2f20544547ULL	 ? 4
				  : (w & 0xffffffffffffULL) == 0x2f2054534f50ULL ? 5
										 : 0;

			if (n) {
				s->st.req = 0;
				s->mask_start = hs_off(pos);
				s->st.phase = HS_PH_REQ_TARGET;
				s->pos = hs_off(pos + n);
				return HS_STEP_MORE;
			}
		}
		s->st.phase = HS_PH_REQ_METHOD;
		s->st.req = b == 'C' ? HS_RQ_CONNECT_CAND : 0;
		s->mask_start = hs_off(pos);
		break;
	case HS_PH_REQ_METHOD:
		if (blank) {
			if ((s->st.req & HS_RQ_CONNECT_CAND) && i == 7)
				s->st.req |= HS_RQ_CONNECT;
			s->st.req &= ~HS_RQ_CONNECT_CAND;
			s->st.phase = HS_PH_REQ_WS1;
			break;
		}
		if (!hs_is_tchar_byte(b) || i >= HS_MAX_METHOD_LEN)
			goto not_http;
		/* "ONNECT" (after the 'C'), little-endian */
		if (i >= 7 || b != (__u8)(0x5443454e4e4fULL >> (8 * (i - 1))))
			s->st.req &= ~HS_RQ_CONNECT_CAND;
		break;
	case HS_PH_REQ_WS1:
		if (eol)
			goto not_http;
		if (!blank)
			s->st.phase = HS_PH_REQ_TARGET;
		break;
	case HS_PH_REQ_TARGET:
		if (eol)
			goto done;
		if (blank)
			s->st.phase = HS_PH_REQ_WS2;
		break;
	case HS_PH_REQ_WS2:
		if (eol)
			goto done;
		if (blank)
			break;
		if (b != 'H')
			goto not_http;
		s->st.phase = HS_PH_REQ_VERSION;
		s->mask_start = hs_off(pos);
		if (pos + 8 <= s->end && p + 8 <= data_end) {
			/* "HTTP/1.1" or "HTTP/1.0" in one step. */
			__u64 w = hs_load64(p) | (1ULL << 56);

			if (w == 0x312e312f50545448ULL) {
				s->pos = hs_off(pos + 8);
				return HS_STEP_MORE;
			}
		}
		break;
	case HS_PH_REQ_VERSION:
		if (i < 5) {
			/* "HTTP/": the 'H' started the word. */
			__u8 want = i == 4 ? '/' : i == 3 ? 'P' : 'T';

			if (b != want)
				goto not_http;
			break;
		}
		if (eol)
			goto done;
		if (blank)
			s->st.phase = HS_PH_REQ_TRAIL;
		break;
	case HS_PH_REQ_REST:
		if (eol) {
			hs_end_line(s, b, pos);
			return HS_STEP_MORE;
		}
		break;
	default: /* HS_PH_REQ_TRAIL */
		if (eol)
			goto done;
		if (!blank)
			goto not_http;
		break;
	}
	s->pos = hs_off(pos + 1);
	return HS_STEP_MORE;
done:
	s->requests++;
	s->st.conn |= HS_CN_SEEN_REQUEST;
	s->st.flags = 0;
	hs_end_line(s, b, pos);
	return HS_STEP_MORE;
not_http:
	/* Not a request line as this reader has it, where one should start:
	 * some server may still read one (nginx takes 0x85 in a target,
	 * Python a CR between words), or framing and the server disagree.
	 * Check every line from here line by line, trusting no framing. */
	s->desync++;
	hs_stream_untrack(&s->st);
	if (!(conn & HS_CN_SEEN_REQUEST)) {
		/* A connection's first line is no field to any server (each
		 * reads a request line there, or refuses it): the lines after
		 * it are checked, wherever the buffers are cut. */
		s->st.phase = HS_PH_REQ_REST;
		return HS_STEP_MORE;
	}
	/* After a request, this line too: from its first byte in this
	 * buffer (the request line's words were not looked at as a name). */
	s->st.flags = HS_SF_PREV_LF;
	s->pos = hs_off(s->line_start);
	return HS_STEP_MORE;
}

/* A line's first byte. */
HS_INLINE int hs_step_line_start(struct hs_scan *s, const struct hs_trie *t, __u8 b, __u32 pos)
{
	__u16 keep = s->st.flags & (HS_SF_PREV_LF | HS_SF_PREV_MASKED);

	if (s->opts & HS_OPT_REMOVE) {
		s->line_snap = s->st;
		s->line_start = hs_off(pos);
	}

	if (b == '\n') {
		/* An empty line: the end of the block if the line end before it
		 * had an LF too; otherwise some parser still reads fields. */
		s->pos = hs_off(pos + 1);
		s->st.flags = HS_SF_PREV_LF;
		if ((keep & HS_SF_PREV_LF) && !(s->st.conn & HS_CN_UNTRACKED))
			return hs_block_done(s);
		return HS_STEP_MORE;
	}
	if (b == '\r') {
		s->st.phase = HS_PH_CR;
		s->st.flags = keep | HS_SF_EMPTY;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	s->mask_start = hs_off(pos);
	if (b == ' ' || b == '\t') {
		s->st.flags = keep | HS_SF_CONT;
		/* obs-fold continuing a field whose value is being parsed: a
		 * server may or may not join it, so the framing is unclear. */
		if (s->st.req & HS_RQ_PREV_FRAMING)
			s->st.conn |= HS_CN_BAD_FRAMING;
		if (keep & HS_SF_PREV_MASKED) {
			/* obs-fold continuation of a masked field: masked too. */
			s->st.phase = HS_PH_MASK;
			s->st.flags |= HS_SF_KEEP_WS | HS_SF_FILL_X;
			s->rm_start = hs_off(pos);
			s->pos = hs_off(pos + 1);
			return HS_STEP_MORE;
		}
		s->st.flags |= HS_SF_WS_PREFIX;
		s->mask_start = hs_off(pos + 1);
		s->st.phase = HS_PH_LEAD;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	s->st.flags = keep & HS_SF_PREV_LF;
	s->st.req &= ~HS_RQ_PREV_FRAMING;
	if (hs_is_blank(b)) {
		s->st.flags |= HS_SF_LEAD_JUNK;
		s->st.phase = HS_PH_LEAD;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	if (b == ':') {
		s->seen++;
		s->st.phase = HS_PH_SKIP;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	hs_start_name(s, t, b, pos);
	return HS_STEP_MORE;
}

/* Rest of a masked line, one byte. */
HS_INLINE void hs_step_mask_byte(struct hs_scan *s, const struct hs_trie *t, __u8 *p, __u8 b,
				 __u32 pos)
{
	if ((s->st.flags & HS_SF_KEEP_WS) && (b == ' ' || b == '\t')) {
		s->pos = hs_off(pos + 1);
		return;
	}
	s->st.flags &= ~HS_SF_KEEP_WS;
	hs_rewrite_byte(s, p, pos,
			(s->st.flags & HS_SF_FILL_X)
				? hs_fill_cont(t)
				: hs_fill_byte(t, hs_col(s, pos), s->st.name_fill));
	s->pos = hs_off(pos + 1);
}

/* Content-Length value, one byte: follows what Python's int() accepts
 * (blanks around digits), so no server reads a length we do not. */
HS_INLINE void hs_step_value_cl(struct hs_scan *s, __u8 b, __u32 pos)
{
	enum {
		LEAD,
		DIGITS,
		TRAIL,
		NON_NUMERIC,
		BAD
	};
	__u8 v = s->st.vstate;

	if (hs_is_eol(b)) {
		if (v == DIGITS || v == TRAIL) {
			if ((s->st.req & HS_RQ_CL) && s->st.cl != s->st.num)
				s->st.conn |= HS_CN_BAD_FRAMING; /* two lengths */
			s->st.cl = s->st.num;
			s->st.req |= HS_RQ_CL;
		} else if (v == BAD) {
			s->st.conn |= HS_CN_BAD_FRAMING;
		} else {
			/* Empty or not a number at all: servers reject the
			 * request or ignore the field; either way no body. */
			s->framing_invalid++;
		}
		hs_end_line(s, b, pos);
		return;
	}
	if (hs_is_blank(b)) {
		if (v == DIGITS)
			v = TRAIL;
	} else if (b >= '0' && b <= '9') {
		if (v == LEAD || v == DIGITS) {
			s->st.num = s->st.num * 10 + (b - '0');
			v = s->st.num > HS_MAX_BODY ? BAD : DIGITS;
		} else if (v == TRAIL) {
			v = BAD;
		}
	} else if (v == LEAD) {
		/* A sign may be read as part of a number; anything else not. */
		v = (b == '+' || b == '-') ? BAD : NON_NUMERIC;
	} else if (v != NON_NUMERIC) {
		v = BAD; /* "5x", "5,5", "5_0" */
	}
	s->st.vstate = v;
	s->pos = hs_off(pos + 1);
}

/* Transfer-Encoding value, one byte: is chunked the final coding? vstate:
 * bits 0-2 bytes of "chunked" matched in the current coding, 0x10 the
 * coding has a byte, 0x20 blanks after it, 0x40 it is not chunked. */
HS_INLINE void hs_step_value_te(struct hs_scan *s, __u8 b, __u32 pos)
{
	__u8 v = s->st.vstate;

	if (hs_is_eol(b)) {
		s->st.req |= HS_RQ_TE;
		s->st.req &= ~HS_RQ_CHUNKED;
		if ((v & 0x50) == 0x10 && (v & 7) == 7)
			s->st.req |= HS_RQ_CHUNKED;
		hs_end_line(s, b, pos);
		return;
	}
	if (b == ',') {
		v = 0;
	} else if (b == ' ' || b == '\t') {
		if (v & 0x10)
			v |= 0x20;
	} else {
		__u32 i = v & 7;
		/* "chunked", little-endian */
		__u8 want = (__u8)(0x64656b6e756863ULL >> (8 * i));

		if ((v & 0x20) || i >= 7 || (b | 0x20) != want)
			v |= 0x40;
		else
			v = (v & 0xf8) | (i + 1);
		v |= 0x10;
	}
	s->st.vstate = v;
	s->pos = hs_off(pos + 1);
}

/* Chunk framing, one byte. */
HS_INLINE int hs_step_chunk(struct hs_scan *s, __u8 b, __u32 pos)
{
	__u32 d;

	switch (s->st.phase) {
	case HS_PH_CHUNK_SIZE:
		d = hs_hex(b);
		if (d < 16) {
			s->st.num = s->st.num * 16 + d;
			s->st.vstate = 1;
			if (s->st.num > HS_MAX_BODY)
				goto bad;
			break;
		}
		if (!s->st.vstate)
			goto bad; /* no digits */
		if (b == ';' || b == ' ' || b == '\t') {
			s->st.phase = HS_PH_CHUNK_EXT;
			break;
		}
		if (!hs_is_eol(b))
			goto bad;
		/* the size line ends here */
		__attribute__((fallthrough));
	case HS_PH_CHUNK_EXT:
		if (b == '\r') {
			s->st.phase = HS_PH_CHUNK_LF;
			break;
		}
		if (b != '\n')
			break;
		__attribute__((fallthrough));
	case HS_PH_CHUNK_LF:
		if (b != '\n')
			goto bad;
		if (s->st.num) {
			s->st.phase = HS_PH_BODY;
		} else {
			/* The last chunk: trailer fields follow. */
			s->st.req |= HS_RQ_TRAILERS;
			s->st.phase = HS_PH_LINE_START;
			s->st.flags = HS_SF_PREV_LF;
		}
		break;
	default: /* HS_PH_CHUNK_END: CRLF (or LF) after the data */
		if (b == '\r' && !(s->st.flags & HS_SF_CHUNK_CR)) {
			s->st.flags |= HS_SF_CHUNK_CR;
			break;
		}
		if (b != '\n')
			goto bad;
		s->st.flags &= ~HS_SF_CHUNK_CR;
		s->st.phase = HS_PH_CHUNK_SIZE;
		s->st.num = 0;
		s->st.vstate = 0;
		break;
	}
	s->pos = hs_off(pos + 1);
	return HS_STEP_MORE;
bad:
	return hs_conflict(s);
}

/* Body bytes: as many as the buffer holds, in one step. */
HS_INLINE int hs_step_body(struct hs_scan *s, __u32 pos)
{
	__u64 n = s->end - pos;

	if (n > s->st.num)
		n = s->st.num;
	s->st.num -= n;
	s->pos = hs_off(pos + (__u32)n);
	if (s->st.num)
		return HS_STEP_MORE;
	if (s->st.req & HS_RQ_TE) {
		s->st.phase = HS_PH_CHUNK_END;
		s->st.flags &= ~HS_SF_CHUNK_CR;
		return HS_STEP_MORE;
	}
	hs_request_done(s);
	return HS_STEP_MORE;
}

/* The eight filler bytes from column @col < HS_FILL_NAME_LEN + 2 of a line
 * masked with the whole filler name: "x-hdrstrip: " and 'x' after it. */
HS_INLINE __u64 hs_fill_word(const struct hs_trie *t, __u32 col)
{
	__u64 a = t->fill[0], b = t->fill[1];

	return col >= 8 ? hs_str_window(b, HS_ONES * 'x', col) : hs_str_window(a, b, col);
}

/* Words a step may take in a value or a request target (the last one's
 * end stays within 64 KiB of HS_MAX_BUF, for the verifier). */
#define HS_SKIP_WORDS 6
_Static_assert(HS_MAX_BUF + 8 * HS_SKIP_WORDS + 8 <= 0x10000, "a step's words fit in 64 KiB");

/* A request target ends at anything below '!' (blanks, CR, LF) or at
 * 0x85/0xa0 (blanks to Python). */
HS_INLINE __u64 hs_target_stop(__u64 w)
{
	return ((w - HS_ONES * 0x21) & ~w & HS_HIGHS) | hs_bytes_eq(w, 0x85) | hs_bytes_eq(w, 0xa0);
}

/*
 * Eight bytes at once where only a line end matters: up to HS_SKIP_WORDS
 * words of a value or a request target, up to four of a masked line.
 * Returns 1 when it consumed bytes, 0 when the byte at @pos needs the
 * byte-wise path.
 */
HS_INLINE int hs_step_word(struct hs_scan *s, const struct hs_trie *t, __u8 *p, __u8 *data_end,
			   __u32 pos)
{
	int target = s->st.phase == HS_PH_REQ_TARGET;
	__u64 w = hs_load64(p), stop;
	__u32 k;

	stop = target ? hs_target_stop(w) : hs_bytes_eq(w, '\r') | hs_bytes_eq(w, '\n');
	k = stop ? hs_first_byte(stop) & 7 : 8; /* & 7: see the masked words below */
	if (!k)
		return 0;
	if (k == 8 && (s->st.phase == HS_PH_SKIP || target)) {
		/* A long value or target: a few more words in this step. */
		int i;

		for (i = 0; i < HS_SKIP_WORDS - 1; i++) {
			if (pos + k + 8 > s->end || p + k + 8 > data_end)
				break;
			w = hs_load64(p + k);
			stop = target ? hs_target_stop(w)
				      : hs_bytes_eq(w, '\r') | hs_bytes_eq(w, '\n');
			if (stop) {
				k += hs_first_byte(stop);
				break;
			}
			k += 8;
		}
		s->pos = hs_off(pos + k);
		return 1;
	}
	if (s->st.phase == HS_PH_MASK && !(s->opts & HS_OPT_REMOVE)) {
		/* Filler up to the line end (the line end stays), up to four
		 * words. */
		__u32 j, c = k, off = 0, col;
		__u64 keep, fill, nw;

#ifdef __clang__
#pragma unroll
#endif
		for (j = 0; j < 4; j++) {
			if (j) {
				if (pos + off + 8 > s->end || p + off + 8 > data_end)
					break;
				w = hs_load64(p + off);
				stop = hs_bytes_eq(w, '\r') | hs_bytes_eq(w, '\n');
				/* & 7: the verifier must see the next offset
				 * stay below 64 KiB. */
				c = stop ? hs_first_byte(stop) & 7 : 8;
				if (!c)
					break;
			}
			keep = c == 8 ? 0 : ~0ULL << (8 * c);
			col = hs_col(s, pos + off);
			if (s->st.flags & HS_SF_FILL_X)
				fill = HS_ONES * hs_fill_cont(t);
			else if (s->st.name_fill == HS_FILL_NAME_LEN && col < HS_FILL_NAME_LEN + 2u)
				fill = hs_fill_word(t, col);
			else
				fill = HS_ONES * 'x';
			nw = (w & keep) | (fill & ~keep);
			hs_store64(p + off, nw);
			s->csum_acc += hs_csum_word(s, pos + off, nw) + 5 * 0xffffULL -
				       hs_csum_word(s, pos + off, w);
			off += c;
			if (c < 8)
				break;
		}
		s->pos = hs_off(pos + off);
		return 1;
	}
	s->pos = hs_off(pos + k);
	return 1;
}

/*
 * A run of plain name bytes (no blank, line end or colon) in one step, from
 * @w, the eight bytes at @pos: the trie walks them a label at a time
 * (hs_trie_walk8), framing names are narrowed a word at a time.
 * The same states as byte by byte; a name that can match nothing any more
 * is skipped from the run's end rather than from the byte that settled it,
 * which no later byte of the run could change. Returns 1 when it consumed
 * bytes. In BPF it is a function of its own (HS_SUBPROG), which the
 * verifier checks once rather than at every step of the scan loop.
 */
HS_SUBPROG int hs_step_name_run(struct hs_scan *s, const struct hs_trie *t, __u64 w, __u32 pos)
{
	/* A name's run ends where a target would, or at the colon. */
	__u64 stop = hs_target_stop(w) | hs_bytes_eq(w, ':');
	__u32 k = stop ? hs_first_byte(stop) & 7 : 8, used = 0, col;
	__u8 fc;

	if (!s || !t || k < 2)
		return 0;
	col = hs_col(s, pos) - s->st.name_col;
	fc = s->st.fcand;
	s->st.tstate = hs_trie_walk8(t, s->st.tstate, w, k, &used);
	if (fc && used)
		fc = hs_framing_step8(fc, w, used, col);
	s->st.fcand = fc;
	if (s->st.tstate == HS_TRIE_DEAD && !fc && !(s->st.flags & HS_SF_PREMASKED))
		s->st.phase = HS_PH_SKIP;
	s->pos = hs_off(pos + used);
	return 1;
}

/*
 * The fast lane for kept lines: at the line end of a kept field, when the
 * next line's first few bytes already settle it as another kept field (no
 * listed name and no framing name starts so), go straight to skipping that
 * line; when they are plain name bytes that may still match, go on in NAME
 * after them. It is what hs_end_line(), hs_step_line_start() and the NAME
 * steps would do, in one step instead of four or more. Not in remove mode,
 * which marks each line's start.
 */
HS_INLINE int hs_name_byte_plain(__u8 b)
{
	return !hs_is_eol(b) && !hs_is_blank(b) && b != ':';
}

#define HS_FAST_NAME_BYTES 4

HS_INLINE int hs_skip_next_line(struct hs_scan *s, const struct hs_trie *t, __u8 *p, __u8 *data_end,
				__u8 b, __u32 pos)
{
	__u32 eol = b == '\r' ? 2 : 1, ts = HS_TRIE_ROOT, i;
	__u8 fc = HS_FR_CL | HS_FR_TE | HS_FR_UPGRADE, nb;
	__u8 *q;

	if (s->opts & HS_OPT_REMOVE)
		return 0;
	if (pos + eol + HS_FAST_NAME_BYTES > s->end || p + 2 > data_end)
		return 0;
	if (b == '\r' && p[1] != '\n')
		return 0;
	q = p + eol;
	if (q + HS_FAST_NAME_BYTES > data_end)
		return 0;
		/* The next name's first bytes: settled once neither the list nor a
	 * framing name can match, all of them plain name bytes. */
#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < HS_FAST_NAME_BYTES; i++) {
		nb = q[i];
		if (!hs_name_byte_plain(nb))
			return 0;
		ts = hs_trie_step(t, ts, nb);
		fc = hs_framing_step(fc, nb, i);
		if (ts == HS_TRIE_DEAD && !fc)
			break;
	}
	s->seen++;
	s->st.flags = HS_SF_PREV_LF;
	s->st.req &= ~HS_RQ_PREV_FRAMING;
	if (i == HS_FAST_NAME_BYTES) {
		/* Still a possible match: on in NAME after those bytes, where
		 * the line's first steps would have left it. */
		s->mask_start = hs_off(pos + eol);
		s->st.name_col = 0;
		s->st.fcand = fc;
		s->st.tstate = ts;
		s->st.phase = HS_PH_NAME;
		s->pos = hs_off(pos + eol + HS_FAST_NAME_BYTES);
		return 1;
	}
	s->pos = hs_off(pos + eol + i + 1);
	s->run_at = s->pos; /* a new kept line's rest */
	return 1;
}

/* At the end of the buffer inside a name that may still match: rewrite its
 * bytes here now (see the top of this file). A name kept in NAME only
 * because it may still be a framing name (Content-Length, ...), or whose
 * blanks after it follow no listed name, cannot match the list: it is left
 * alone, or every Content-Length split across segments would be masked. */
HS_INLINE int hs_end_of_buffer(struct hs_scan *s, const struct hs_trie *t, __u32 pos)
{
	if (s->opts & HS_OPT_REMOVE) {
		/* The part of a line being removed that this buffer holds. */
		if (s->st.phase == HS_PH_MASK && s->rm_start < pos && s->rm_end != pos) {
			s->rm_end = pos;
			return HS_STEP_REMOVE;
		}
		/* A line whose fate is not known yet: the caller holds it. */
		if (s->st.phase == HS_PH_NAME || s->st.phase == HS_PH_LEAD)
			s->hold = 1;
		return HS_STEP_DONE;
	}
	if (s->st.phase == HS_PH_PREMASK) {
		s->st.phase = HS_PH_NAME;
		s->st.flags |= HS_SF_PREMASKED;
		return HS_STEP_DONE;
	}
	if (s->st.phase != HS_PH_NAME || s->resume == pos)
		return HS_STEP_DONE;
	if (!(s->st.flags & HS_SF_PREMASKED) &&
	    ((s->st.flags & HS_SF_IN_JUNK) ? !hs_trie_result(t, s->st.saved)
					   : s->st.tstate == HS_TRIE_DEAD))
		return HS_STEP_DONE;
	s->resume = pos;
	s->st.phase = HS_PH_PREMASK;
	s->pos = hs_col(s, s->start) <= hs_col(s, pos) && hs_col(s, s->start) ? s->start
									      : s->mask_start;
	s->premasked++;
	return HS_STEP_MORE;
}

/*
 * One step over @data[s->pos ...]: @data and @data_end bound the buffer the
 * way the verifier wants packet bounds checked. Returns enum hs_step.
 */
HS_INLINE int hs_scan_step(struct hs_scan *s, const struct hs_trie *t, __u8 *data, __u8 *data_end)
{
	__u32 pos = s->pos;
	__u8 phase = s->st.phase;
	__u8 *p;
	__u8 b;

	if (phase >= HS_PH_NOT_HTTP)
		return HS_STEP_DONE;
	if (phase != s->run_phase) {
		s->run_phase = phase;
		s->run_at = pos;
	}
	if (pos >= s->end || pos >= HS_MAX_BUF)
		return hs_end_of_buffer(s, t, pos);
	p = data + pos;
	if (p + 1 > data_end)
		return hs_end_of_buffer(s, t, pos);

	/* A masked line goes a word at a time past its filler name, or from
	 * its start when the filler name is whole (hs_fill_word). */
	if ((phase == HS_PH_SKIP || phase == HS_PH_REQ_TARGET || phase == HS_PH_CHUNK_EXT ||
	     (phase == HS_PH_MASK &&
	      ((s->st.flags & (HS_SF_FILL_X | HS_SF_KEEP_WS)) == HS_SF_FILL_X ||
	       (!(s->st.flags & HS_SF_FILL_X) && (s->st.name_fill == HS_FILL_NAME_LEN ||
						  hs_col(s, pos) >= s->st.name_fill + 2u))))) &&
	    pos + 8 <= s->end && p + 8 <= data_end && hs_step_word(s, t, p, data_end, pos))
		return HS_STEP_MORE;

	b = *p;
	switch (phase) {
	case HS_PH_LINE_START:
		return hs_step_line_start(s, t, b, pos);
	case HS_PH_CR:
		if (b == '\n' && (s->st.flags & HS_SF_RM_CR)) {
			/* The LF of a removed line's CRLF. */
			s->st.flags = (s->st.flags & ~HS_SF_RM_CR) | HS_SF_PREV_LF;
			s->st.phase = HS_PH_LINE_START;
			s->rm_start = hs_off(pos);
			s->rm_end = hs_off(pos + 1);
			s->pos = hs_off(pos + 1);
			return HS_STEP_REMOVE;
		}
		s->st.flags &= ~HS_SF_RM_CR;
		if (b == '\n') {
			s->pos = hs_off(pos + 1);
			s->st.phase = HS_PH_LINE_START;
			if ((s->st.flags & (HS_SF_EMPTY | HS_SF_PREV_LF)) ==
				    (HS_SF_EMPTY | HS_SF_PREV_LF) &&
			    !(s->st.conn & HS_CN_UNTRACKED)) {
				s->st.flags = HS_SF_PREV_LF;
				return hs_block_done(s);
			}
			hs_ambiguous_end(s);
			s->st.flags = (s->st.flags & ~HS_SF_EMPTY) | HS_SF_PREV_LF;
			return HS_STEP_MORE;
		}
		/* A bare CR ended the line; this byte starts the next one. */
		hs_ambiguous_end(s);
		s->st.flags &= ~(HS_SF_EMPTY | HS_SF_PREV_LF);
		s->st.phase = HS_PH_LINE_START;
		return hs_step_line_start(s, t, b, pos);
	case HS_PH_SKIP:
		if (hs_is_eol(b)) {
			if (hs_skip_next_line(s, t, p, data_end, b, pos)) {
				/* ... and on through that line's value or name. */
				pos = s->pos;
				p = data + pos;
				if (pos + 8 > s->end || p + 8 > data_end)
					return HS_STEP_MORE;
				if (s->st.phase == HS_PH_SKIP)
					hs_step_word(s, t, p, data_end, pos);
				else
					hs_step_name_run(s, t, hs_load64(p), pos);
				return HS_STEP_MORE;
			}
			s->st.flags &= ~HS_SF_PREV_MASKED;
			hs_end_line(s, b, pos);
		} else {
			s->pos = hs_off(pos + 1);
		}
		return HS_STEP_MORE;
	case HS_PH_MASK:
		if (hs_is_eol(b)) {
			hs_end_line(s, b, pos);
			s->st.flags |= HS_SF_PREV_MASKED;
			if (s->opts & HS_OPT_REMOVE) {
				/* The line with its line end; an LF after a CR
				 * is reported on its own when it comes. */
				if (b == '\r')
					s->st.flags |= HS_SF_RM_CR;
				s->rm_end = hs_off(pos + 1);
				return HS_STEP_REMOVE;
			}
		} else if (s->opts & HS_OPT_REMOVE) {
			s->pos = hs_off(pos + 1);
		} else {
			hs_step_mask_byte(s, t, p, b, pos);
		}
		return HS_STEP_MORE;
	case HS_PH_PREMASK:
		if (pos >= s->resume) {
			s->st.phase = HS_PH_NAME;
			s->st.flags |= HS_SF_PREMASKED;
			return HS_STEP_DONE;
		}
		hs_rewrite_byte(s, p, pos, hs_fill_byte(t, hs_col(s, pos), HS_FILL_NAME_LEN));
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	case HS_PH_LEAD:
		if (hs_is_eol(b)) {
			s->st.flags &= ~HS_SF_PREV_MASKED;
			hs_end_line(s, b, pos);
		} else if (b == ' ' || b == '\t') {
			if (s->st.flags & HS_SF_WS_PREFIX)
				s->mask_start = hs_off(pos + 1);
			s->pos = hs_off(pos + 1);
		} else if (hs_is_blank(b)) {
			s->st.flags = (s->st.flags & ~HS_SF_WS_PREFIX) | HS_SF_LEAD_JUNK;
			s->pos = hs_off(pos + 1);
		} else if (b == ':') {
			s->st.phase = HS_PH_SKIP;
			s->pos = hs_off(pos + 1);
		} else {
			s->st.flags &= ~HS_SF_PREV_MASKED;
			hs_start_name(s, t, b, pos);
		}
		return HS_STEP_MORE;
	case HS_PH_NAME:
		if (!(s->st.flags & HS_SF_IN_JUNK) && pos + 8 <= s->end && p + 8 <= data_end &&
		    hs_step_name_run(s, t, hs_load64(p), pos))
			return HS_STEP_MORE;
		if (b == ':')
			return hs_decide(s, t, pos);
		if (hs_is_eol(b))
			return hs_decide_bare(s, t, b, pos);
		if (hs_is_blank(b)) {
			if (!(s->st.flags & HS_SF_IN_JUNK)) {
				s->st.flags |= HS_SF_IN_JUNK | HS_SF_NAME_JUNK;
				s->st.saved = s->st.tstate;
				s->st.fcand = hs_framing_exact(s->st.fcand,
							       hs_col(s, pos) - s->st.name_col);
			}
		} else if (s->st.flags & HS_SF_IN_JUNK) {
			/* The name goes on after blanks: none of the framing ones. */
			s->st.flags &= ~HS_SF_IN_JUNK;
			s->st.fcand = 0;
		} else if (s->st.fcand) {
			s->st.fcand =
				hs_framing_step(s->st.fcand, b, hs_col(s, pos) - s->st.name_col);
		}
		s->st.tstate = hs_trie_step(t, s->st.tstate, b);
		if (s->st.tstate == HS_TRIE_DEAD && !s->st.fcand &&
		    !(s->st.flags & (HS_SF_IN_JUNK | HS_SF_PREMASKED)))
			s->st.phase = HS_PH_SKIP;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	case HS_PH_VALUE_CL:
		hs_step_value_cl(s, b, pos);
		return HS_STEP_MORE;
	case HS_PH_VALUE_TE:
		hs_step_value_te(s, b, pos);
		return HS_STEP_MORE;
	case HS_PH_BODY:
		return hs_step_body(s, pos);
	case HS_PH_CHUNK_SIZE:
	case HS_PH_CHUNK_EXT:
	case HS_PH_CHUNK_LF:
	case HS_PH_CHUNK_END:
		return hs_step_chunk(s, b, pos);
	default:
		return hs_step_request(s, p, data_end, b, pos);
	}
}

#endif /* HDRSTRIP_SCAN_H */
