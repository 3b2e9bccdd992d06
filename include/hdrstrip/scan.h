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
 *    HTTP/1.x server reads on;
 *  - HTTP/2's connection preface where a request starts (the method PRI
 *    and a version "HTTP/2": h2c with prior knowledge) is no HTTP/1.x:
 *    binary frames follow, whose fields an h2c origin reads (node's
 *    http2.createServer, nginx's "listen ... http2") and no line reading
 *    parses. It stops the scan (HS_PH_HALT) for the caller's policy; under
 *    pass (HS_OPT_CONFLICT_GO_ON) a connection that starts with it is
 *    passed untouched, as one that starts with a TLS record is
 *    (HS_PH_NOT_HTTP), and after a request, where no HTTP/2 server reads a
 *    preface, it is a line that starts no request (scan_reqline.h);
 *  - a line that is a name and nothing else (no colon) is a field with an
 *    empty value to nginx: a listed one is masked too.
 * The header block ends only where every such parser agrees it ends: an
 * empty line terminated by LF whose previous line end had an LF too. Where
 * parsers disagree, scanning goes on (masking more is safe, less is not),
 * and the request's framing is ambiguous: an empty line that some parser
 * ends the block at (node's lenient parser: LF CR and another byte) would
 * start its body earlier.
 *
 * Some parsers stop reading fields early. Python's http.client (which
 * http.server uses too) reads every line up to the empty one, but takes
 * fields only up to the first line that its email parser does not read as
 * one: a line that is no continuation line (SP or HTAB first) and has no
 * colon, or a byte outside 0x21-0x7e before its first colon (a blank
 * before the colon or inside the name, VT or another blank first, a control
 * byte, DEL, a byte >= 0x80). The rest of the block is no field to it.
 * nginx skips such a line (bytes >= 0x80, no colon) and reads on; node
 * refuses the request (measured: tests/e2e/normalize.py, class 15). So a
 * Content-Length or Transfer-Encoding after such a line (an "odd" line,
 * HS_CN_ODD_LINE), which Python never sees, is ambiguous framing: the body
 * is Python's next request. One before it is read by every parser that
 * takes the request. What counts is the line as it goes out: a masked one
 * is a field line (its filler's colon sits where its own was, or after the
 * filler name's ten bytes), but for a name alone no longer than the
 * filler name, whose filler has no colon either, and for a line whose
 * blanks other than SP and HTAB before its name went out in an earlier
 * buffer than the name (hs_end_of_buffer()): the mask keeps them.
 *
 * Requests follow each other by HTTP/1.1 framing: Content-Length bytes of
 * body, or chunks (whose trailer fields are scanned like headers), or none.
 * Framing that servers could read two ways (two lengths, a length and
 * chunked, a bad chunk size, a framing field with odd bytes around its
 * name or after an odd line, an ambiguous end of the block) stops the scan
 * in HS_PH_HALT for the caller's policy. A body on a request whose method
 * defines no use for one (GET, HEAD, DELETE, OPTIONS, TRACE, in any case)
 * is read two ways too: Python's SimpleHTTPRequestHandler never reads it
 * and parses it as its next request, node and nginx skip it; the body and
 * the rest of the connection are checked line by line, which is right for
 * both (hs_body_unframed(), scan_ends.h). After CONNECT or an Upgrade, and
 * after bytes that do not start a request where one should start, the
 * connection is scanned line by line with no framing (untracked mode):
 * every line that looks like an internal field is masked. So is a
 * connection first seen mid-way (hs_stream_untrack() from its first byte:
 * flow.h).
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
	HS_PH_RESP_STATUS, /* a status line's code (and the blanks before it) */
	HS_PH_RESP_REASON, /* the rest of a status line */
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
/* SKIP: a kept name's rest, before its colon, is still checked for what
 * some parser stops reading fields at (see the top of this file) */
#define HS_SF_NAME_REST 0x2000
#define HS_SF_ODD_NAME 0x4000 /* NAME: a byte outside 0x21-0x7e in the name */

/* hs_stream.req: the current request */
/* The method defines no use for a body (GET, HEAD, DELETE, OPTIONS, TRACE) */
#define HS_RQ_NO_BODY 0x01
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
#define HS_CN_RESPONSE 0x08 /* a stream of responses (see below) */
/* A stream whose direction is not known (line by line, no framing): the
 * rules of both directions apply (HS_DIR_EITHER). */
#define HS_CN_EITHER 0x10
/* The current header block has a line that some parser does not read as a
 * field line and stops reading fields at (see the top of this file). */
#define HS_CN_ODD_LINE 0x20

/*
 * Responses: the same field lines, read the same way, after a status line
 * ("HTTP/" version, a three-digit code, any reason) read as liberally as
 * the request line; framing by RFC 9112 section 6.3. 1xx interim
 * responses (but 101) are followed by another response; 204 and 304, and
 * responses to HEAD, have no body; then Transfer-Encoding (chunked, with
 * trailers, else read until close), Content-Length, or read until close.
 * Whether a response answers HEAD is known only from the request stream of
 * the same connection: hs_stream.nmsg and .heads there, which the caller
 * passes in (hs_scan.peer_*). A final response whose request is not known
 * so (no request side seen, more than HS_HEADS_WINDOW requests ahead, or
 * past the last request counted before the request stream went line by
 * line: an origin that read a GET's body as requests answers more of them)
 * and whose body depends on it is followed line by line: every line of
 * the rest of the connection is checked (hs_scan.unframed).
 */
#define HS_HEADS_WINDOW 64

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
	__u16 status; /* a response's status code */
	/* Requests begun (a request stream), or final responses done (a
	 * response stream), modulo 2^16: the index of the current message. */
	__u16 nmsg;
	/* A request stream: bit n % HS_HEADS_WINDOW is set when request n
	 * (of the last HS_HEADS_WINDOW) was a HEAD. */
	__u64 heads;
};

_Static_assert(sizeof(struct hs_stream) == 48, "hs_stream layout");

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
	__u16 removed; /* of the masked lines, those taken out whole (hs_removes()) */
	/* HS_STEP_MATCH: the matched name's bytes in this buffer (up to the
	 * colon or line end), for the caller's match event. */
	__u16 name_off;
	__u16 name_len;
	__u16 observed; /* lines that matched and were kept (observe) */
	/* Final responses whose framing needed their request's method, which
	 * was not known: the connection is checked line by line from there. */
	__u16 unframed;
	/* A response stream: the request stream's nmsg and heads, when
	 * peer_known (set by the caller after hs_scan_begin()). */
	__u64 peer_heads;
	__u16 peer_n;
	__u8 peer_known;
	__u8 reserved5;
	__u16 h2c; /* HTTP/2 connection prefaces where a request starts */
	/* Requests with a body their method defines no use for: the
	 * connection is checked line by line from that body on. */
	__u16 bodies_unframed;
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
 * and scans them again, from line_snap, with what follows. A stream checked
 * line by line is masked in place all the same (hs_removes()).
 */
#define HS_OPT_REMOVE 0x4
/*
 * Observe mode: every rule observes. A line that matches is reported
 * (HS_STEP_MATCH, hs_scan.observed) and kept as a line that matches nothing
 * is; no name is rewritten ahead at a buffer's end. A rule whose action is
 * observe does the same in any mode.
 */
#define HS_OPT_OBSERVE 0x8

_Static_assert(sizeof(struct hs_scan) == 192, "hs_scan layout");

/*
 * Does this scan take matched lines out (HS_OPT_REMOVE)? Not once the stream
 * is checked line by line (HS_CN_UNTRACKED): there a "line" may lie inside a
 * body whose length the peer reads from its framing, so it is masked in
 * place, as at the hooks, and every byte count stays as sent. The option is
 * cleared where a scan makes its stream untracked (hs_scan_untrack(),
 * hs_request_done()), and a caller does not set it on an untracked stream:
 * one bit to test, which costs the verifier less than the two.
 */
HS_INLINE int hs_removes(const struct hs_scan *s)
{
	return (s->opts & HS_OPT_REMOVE) != 0;
}

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

/* The state of a stream of direction @dir (HS_DIR_*) before its first
 * byte; one of HS_DIR_EITHER is read line by line from it. */
HS_INLINE void hs_stream_init_dir(struct hs_stream *st, __u32 dir)
{
	hs_stream_init(st);
	if (dir == HS_DIR_RESPONSE)
		st->conn = HS_CN_RESPONSE;
	if (dir == HS_DIR_EITHER) {
		st->conn = HS_CN_SEEN_REQUEST | HS_CN_UNTRACKED | HS_CN_EITHER;
		st->phase = HS_PH_LINE_START;
	}
}

/* Untracked mode from the next line on: no framing, every line checked.
 * A stream keeps its direction. */
HS_INLINE void hs_stream_untrack(struct hs_stream *st)
{
	__u8 dir = st->conn & (HS_CN_RESPONSE | HS_CN_EITHER);

	hs_stream_init(st);
	st->conn = HS_CN_SEEN_REQUEST | HS_CN_UNTRACKED | dir;
	st->phase = HS_PH_LINE_START;
}

/* The same for the stream @s scans: line by line, masked in place from
 * here (hs_removes()). */
HS_INLINE void hs_scan_untrack(struct hs_scan *s)
{
	hs_stream_untrack(&s->st);
	s->opts &= ~HS_OPT_REMOVE;
}

/* The direction of the stream @st scans: HS_DIR_REQUEST, HS_DIR_RESPONSE
 * or HS_DIR_EITHER. */
HS_INLINE __u32 hs_stream_dir(const struct hs_stream *st)
{
	return (st->conn & HS_CN_EITHER)     ? HS_DIR_EITHER
	       : (st->conn & HS_CN_RESPONSE) ? HS_DIR_RESPONSE
					     : HS_DIR_REQUEST;
}

/* The list rule + 1 (0: none) that applies in the stream @st to a name the
 * trie resolved to @v (trie.h, HS_DIR_EITHER for a stream of either). */
HS_INLINE __u32 hs_stream_rule(const struct hs_trie *t, __u32 v, const struct hs_stream *st)
{
	return hs_dir_rule(t, v, hs_stream_dir(st));
}

/* May a rule that masks or drops in the stream @st still match a name
 * whose walk is in trie state @s? */
HS_INLINE int hs_stream_may_enforce(const struct hs_trie *t, __u32 s, const struct hs_stream *st)
{
	return hs_trie_may_enforce(t, s, hs_stream_dir(st));
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
	/* A name's walk means something only inside the name, the filler's
	 * length only in a masked line: elsewhere they are whatever the way
	 * there left (a line end byte by byte, or the next line settled at
	 * once: scan_fast.h), and are cleared so that the same bytes give the
	 * same state. */
	if (st->phase != HS_PH_NAME) {
		st->tstate = 0;
		st->saved = 0;
		st->fcand = 0;
		st->name_col = 0;
	}
	if (st->phase != HS_PH_MASK)
		st->name_fill = 0;
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
		if (st->phase != HS_PH_BODY)
			st->vstate = 0;
		return;
	case HS_PH_SKIP:
		/* The rest of a kept line: columns mean nothing. */
		st->col = 0;
		return;
	case HS_PH_MASK:
		/* Past the filler name, a masked line is 'x' bytes to its end,
		 * whatever the column. */
		if (!(st->flags & (HS_SF_FILL_X | HS_SF_KEEP_WS)) && col >= st->name_fill + 2u) {
			st->col = HS_COL_CLAMP;
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

/*
 * The scanner's code, by role, in the order the compiler needs it (each part
 * uses the state above and the parts before it). What a step does at the end
 * of a buffer, and the step itself, follow them here.
 */
#include "scan_bytes.h"
#include "scan_csum.h"
#include "scan_ends.h"
#include "scan_names.h"
#include "scan_reqline.h"
#include "scan_fields.h"
#include "scan_framing.h"
#include "scan_fast.h"

/* At the end of the buffer inside a name that may still match: rewrite its
 * bytes here now (see the top of this file). A name kept in NAME only
 * because it may still be a framing name (Content-Length, ...), or whose
 * blanks after it follow no listed name, cannot match the list: it is left
 * alone, or every Content-Length split across segments would be masked. */
HS_INLINE int hs_end_of_buffer(struct hs_scan *s, const struct hs_trie *t, __u32 pos)
{
	if (hs_removes(s)) {
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
	/* Blanks other than SP and HTAB before a name that has not begun
	 * go out as they came: a mask of the line in a later buffer starts
	 * after them (below, hs_start_mask()), so the line stays one that
	 * Python stops at, masked or kept. */
	if (s->st.phase == HS_PH_LEAD && (s->st.flags & HS_SF_LEAD_JUNK))
		hs_odd_line(s);
	if (s->st.phase == HS_PH_PREMASK) {
		s->st.phase = HS_PH_NAME;
		s->st.flags |= HS_SF_PREMASKED;
		return HS_STEP_DONE;
	}
	if (s->st.phase != HS_PH_NAME || s->resume == pos)
		return HS_STEP_DONE;
	/* Only a name that a rule that masks or drops may still match. */
	if (!(s->st.flags & HS_SF_PREMASKED) &&
	    ((s->opts & HS_OPT_OBSERVE) ||
	     ((s->st.flags & HS_SF_IN_JUNK)
		      ? !hs_rule_enforced(t,
					  hs_stream_rule(t, hs_trie_result(t, s->st.saved), &s->st))
		      : !hs_stream_may_enforce(t, s->st.tstate, &s->st))))
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
		if ((s->st.flags & HS_SF_NAME_REST) && (b == ':' || hs_odd_name_byte(b)))
			hs_name_rest_end(s, b != ':', pos);
		if (hs_is_eol(b)) {
			/* At a kept or masked line's end (a masked line's end
			 * comes here from MASK, with HS_SF_PREV_MASKED set:
			 * the line before a continuation line), the next
			 * line's first bytes may settle it (scan_fast.h). */
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
			hs_end_line(s, b, pos);
		} else {
			s->pos = hs_off(pos + 1);
		}
		return HS_STEP_MORE;
	case HS_PH_MASK:
		if (hs_is_eol(b) && !hs_removes(s)) {
			/* The line end of a masked line is a kept line's:
			 * the next step takes it in SKIP. */
			s->st.flags |= HS_SF_PREV_MASKED;
			s->st.phase = HS_PH_SKIP;
			return HS_STEP_MORE;
		}
		if (hs_is_eol(b)) {
			hs_end_line(s, b, pos);
			s->st.flags |= HS_SF_PREV_MASKED;
			if (hs_removes(s)) {
				/* The line with its line end: a CRLF at once;
				 * an LF after a CR at the buffer's end is
				 * reported on its own when it comes. */
				if (b == '\r' && pos + 2 <= s->end && p + 2 <= data_end &&
				    p[1] == '\n') {
					s->st.phase = HS_PH_LINE_START;
					s->st.flags |= HS_SF_PREV_LF;
					s->pos = hs_off(pos + 2);
				} else if (b == '\r') {
					s->st.flags |= HS_SF_RM_CR;
				}
				s->rm_end = s->pos;
				return HS_STEP_REMOVE;
			}
		} else if (hs_removes(s)) {
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
			/* Blanks and nothing else (or, below, blanks and a
			 * colon): to a parser that takes other blanks than SP
			 * and HTAB for no name byte, no field line. */
			hs_odd_lead(s);
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
			hs_odd_lead(s);
			s->st.phase = HS_PH_SKIP;
			s->pos = hs_off(pos + 1);
		} else {
			s->st.flags &= ~HS_SF_PREV_MASKED;
			hs_start_name(s, t, b, pos);
		}
		return HS_STEP_MORE;
	case HS_PH_NAME:
		if (!(s->st.flags & HS_SF_IN_JUNK) && pos + 8 <= s->end && p + 8 <= data_end &&
		    hs_step_name_run(s, t, hs_load64(p), pos)) {
			/* A run that stopped at its name's colon: the verdict
			 * in this step too, as the next one would give it. */
			pos = s->pos;
			if (s->st.phase != HS_PH_NAME || pos >= s->end || pos >= HS_MAX_BUF)
				return HS_STEP_MORE;
			p = data + pos;
			if (p + 1 > data_end || *p != ':')
				return HS_STEP_MORE;
			goto colon;
		}
		if (b == ':') {
colon:
			return hs_decide(s, t, pos);
		}
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
		s->st.flags |= hs_odd_name_flag(b);
		s->st.tstate = hs_trie_step(t, s->st.tstate, b);
		if (s->st.tstate == HS_TRIE_DEAD && !s->st.fcand &&
		    !(s->st.flags & (HS_SF_IN_JUNK | HS_SF_PREMASKED)))
			hs_skip_name(s);
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
