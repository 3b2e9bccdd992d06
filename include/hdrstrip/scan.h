/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The HTTP/1.x request scanner, shared by the BPF programs and the host.
 *
 * It is a resumable state machine over the bytes of a buffer (a packet's TCP
 * payload in the kernel), driven one step at a time by hs_scan_step(): a
 * step consumes one byte, or up to eight bytes at once where only a line end
 * can matter (SWAR search). The caller owns the loop, so the BPF side can
 * bound it for the verifier and the host side can run it to the end.
 *
 * Parsing is as liberal as the most liberal server hdrstrip protects:
 *  - a line ends at CRLF, a bare LF or a bare CR;
 *  - SP, HTAB, VT, FF, 0x1c-0x1f, 0x85 and 0xa0 around a name (the bytes
 *    some parser strips) do not change the name;
 *  - a line that starts with SP or HTAB continues the previous field
 *    (obs-fold) and shares its fate, and is also checked on its own;
 *  - the request line accepts what Python accepts (any of the bytes above
 *    between words, HTTP/0.9's two words).
 * The header block ends only where every such parser agrees it ends: an
 * empty line terminated by LF whose previous line end had an LF too. Where
 * parsers disagree, scanning goes on: masking more is safe, less is not.
 * A pipelined request may follow in the same buffer, and a server reads it
 * as soon as the block before it ends: bytes after a block that start a
 * request line are scanned as the next request; the first bytes that do
 * not are a body, and the scan stops there.
 *
 * A matched field is masked in place: from its first byte (after a leading
 * SP/HTAB run, kept so the line's shape stays) to its line end, it becomes
 * "x-hdrstrip" (cut to fit) ':' ' ' and then 'x' bytes; continuation lines
 * of a masked field keep their leading SP/HTAB and become 'x' bytes. The
 * result is a valid field line of the same length that carries nothing of
 * the original. The one's complement difference of every rewritten byte is
 * accumulated for the caller's checksum update.
 */
#ifndef HDRSTRIP_SCAN_H
#define HDRSTRIP_SCAN_H

#include "compiler.h"
#include "trie.h"

enum hs_phase {
	HS_PH_REQ_LEAD = 0, /* empty lines and blanks before the request line */
	HS_PH_REQ_METHOD,
	HS_PH_REQ_WS1,
	HS_PH_REQ_TARGET,
	HS_PH_REQ_WS2,
	HS_PH_REQ_VERSION, /* "HTTP/" then the version bytes */
	HS_PH_REQ_TRAIL, /* blanks after the version */
	HS_PH_LINE_START, /* first byte of a line in the header block */
	HS_PH_LEAD, /* blanks before a name */
	HS_PH_NAME,
	HS_PH_SKIP, /* rest of a line that is kept */
	HS_PH_MASK, /* rest of a line that is rewritten */
	HS_PH_CR, /* after a CR: an LF here is part of the same line end */
	HS_PH_BODY, /* the last header block is over and no request follows it */
	HS_PH_NOT_HTTP, /* the payload does not start with a request */
	HS_PH_DROPPED, /* a drop rule matched */
	HS_PH_MAX
};

/* hs_scan.flags */
#define HS_SF_PREV_LF 0x01 /* the previous line end had an LF */
#define HS_SF_PREV_MASKED 0x02 /* the previous field was masked */
#define HS_SF_IN_JUNK 0x04 /* NAME: in a run of blanks after the name */
#define HS_SF_CONT 0x08 /* this line started with SP/HTAB */
#define HS_SF_WS_PREFIX 0x10 /* LEAD: still in the line's leading SP/HTAB */
#define HS_SF_EMPTY 0x20 /* CR: the CR ended an empty line */
#define HS_SF_KEEP_WS 0x40 /* MASK: keep SP/HTAB up to the first other byte */
#define HS_SF_FILL_X 0x80 /* MASK: a continuation line: every byte becomes 'x' */

/* hs_scan_step() results */
enum hs_step {
	HS_STEP_MORE = 0, /* call again */
	HS_STEP_MATCH, /* a field matched rule hs_scan.rule - 1; call again */
	HS_STEP_DONE, /* nothing more to scan in this buffer */
};

#define HS_MAX_METHOD_LEN 32
#define HS_FILL_NAME "x-hdrstrip"
#define HS_FILL_NAME_LEN 10
/*
 * Offsets into a buffer stay below HS_MAX_BUF: the verifier only proves
 * packet accesses whose offset plus size stays within 64 KiB (MAX_PACKET_OFF),
 * and an 8-byte load at the last offset must fit too.
 */
#define HS_MAX_BUF 0xfff0

struct hs_scan {
	__u32 pos; /* offset of the next byte in the buffer */
	__u32 end; /* offset one past the last byte to scan (<= HS_MAX_BUF) */
	__u32 tstate; /* trie state of the current name */
	__u32 saved; /* trie state before a run of blanks after the name */
	/* First byte of the current line that may be rewritten; in the request
	 * line, the first byte of the current word. Columns are measured from
	 * it rather than counted, which also keeps the verifier's view of the
	 * state small (a counter would be a new exact value every byte). */
	__u32 mask_start;
	__u16 reserved0;
	__u16 rule; /* rule + 1 of the last match */
	__u8 phase; /* enum hs_phase */
	__u8 flags; /* HS_SF_* */
	__u8 reserved1;
	__u8 name_fill; /* MASK: length of the filler name on this line */
	__u8 csum_par; /* parity of the offset the checksum's 16-bit words start at */
	__u8 reserved[3];
	/* One's complement sum of (new - old) over rewritten bytes, in the
	 * byte order of memory (what the kernel's checksum helpers use). */
	__u64 csum_acc;
	/* What this scan found. */
	__u16 requests;
	__u16 seen;
	__u16 matched;
	__u16 masked;
};

_Static_assert(sizeof(struct hs_scan) == 48, "hs_scan layout");

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

/* Start scanning @buf[start, end) as the first bytes of a request stream.
 * @csum_base is the offset the checksummed data starts at (the TCP header),
 * so that rewritten bytes land in the right half of their 16-bit word. */
HS_INLINE void hs_scan_init(struct hs_scan *s, __u32 start, __u32 end, __u32 csum_base)
{
	__builtin_memset(s, 0, sizeof(*s));
	s->pos = start;
	s->end = end > HS_MAX_BUF ? HS_MAX_BUF : end;
	s->phase = HS_PH_REQ_LEAD;
	s->csum_par = csum_base & 1;
}

HS_INLINE int hs_is_eol(__u8 b)
{
	return b == '\r' || b == '\n';
}

/* Bytes that some parser strips around a name or splits a request line on:
 * SP HTAB VT FF 0x1c-0x1f (Python's str.split/strip), 0x85 0xa0 (the same on
 * latin-1 text). */
#define HS_BLANK_LOW ((1ULL << ' ') | (1ULL << '\t') | (1ULL << 0x0b) | (1ULL << 0x0c) | \
		      (0xfULL << 0x1c))

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

/* The filler byte for column @col of a masked line: HS_FILL_NAME cut to
 * @name_fill bytes, ':', ' ', then 'x'. */
HS_INLINE __u8 hs_fill_byte(__u32 col, __u32 name_fill)
{
	const __u64 first8 = 0x7274737264682d78ULL; /* "x-hdrstr", little-endian */

	if (col < name_fill)
		return col < 8 ? (__u8)(first8 >> (8 * col)) : col == 8 ? 'i' : 'p';
	if (col == name_fill)
		return ':';
	if (col == name_fill + 1)
		return ' ';
	return 'x';
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
 * the rewrites accumulated in @s (RFC 1624, eqn. 3). */
HS_INLINE __u16 hs_csum_update(const struct hs_scan *s, __u16 check)
{
	__u64 sum = (__u64)(__u16)~check + hs_csum_fold(s->csum_acc);

	return (__u16)~hs_csum_fold(sum);
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
	s->flags &= ~(HS_SF_IN_JUNK | HS_SF_CONT | HS_SF_WS_PREFIX | HS_SF_EMPTY | HS_SF_KEEP_WS);
	if (b == '\r') {
		s->phase = HS_PH_CR;
	} else {
		s->phase = HS_PH_LINE_START;
		s->flags |= HS_SF_PREV_LF;
	}
	s->pos = hs_off(pos + 1);
}

/* First byte of a name at @pos: counted, and looked up from the root. */
HS_INLINE void hs_start_name(struct hs_scan *s, const struct hs_trie *t, __u8 b, __u32 pos)
{
	if (!(s->flags & HS_SF_CONT))
		s->seen++;
	s->tstate = hs_trie_step(t, HS_TRIE_ROOT, b);
	s->phase = s->tstate == HS_TRIE_DEAD ? HS_PH_SKIP : HS_PH_NAME;
	s->pos = hs_off(pos + 1);
}

/* The name ended at a colon at @pos: look the verdict up and act on it. */
HS_INLINE int hs_decide(struct hs_scan *s, const struct hs_trie *t, __u32 pos)
{
	__u32 r = hs_trie_result(t, (s->flags & HS_SF_IN_JUNK) ? s->saved : s->tstate);
	__u32 len;

	if (!r) {
		s->phase = HS_PH_SKIP;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	s->rule = r;
	s->matched++;
	if (t->rules[(r - 1) & (HS_MAX_NAMES - 1)].action == HS_ACT_DROP) {
		s->phase = HS_PH_DROPPED;
		return HS_STEP_MATCH;
	}
	/* Rewrite from the line's first rewritable byte: go back there. */
	s->masked++;
	len = pos - s->mask_start;
	s->name_fill = len < HS_FILL_NAME_LEN ? len : HS_FILL_NAME_LEN;
	s->flags &= ~(HS_SF_KEEP_WS | HS_SF_FILL_X);
	s->phase = HS_PH_MASK;
	s->pos = hs_off(s->mask_start);
	return HS_STEP_MATCH;
}

/* The header block ended with the line end at @pos: look for a pipelined
 * request after it, as for the first one. */
HS_INLINE int hs_end_block(struct hs_scan *s, __u32 pos)
{
	s->phase = HS_PH_REQ_LEAD;
	s->flags = 0;
	s->pos = hs_off(pos + 1);
	return HS_STEP_MORE;
}

/* Request line, one byte. */
HS_INLINE int hs_step_request(struct hs_scan *s, __u8 b, __u32 pos)
{
	int blank = hs_is_blank(b), eol = hs_is_eol(b);

	switch (s->phase) {
	case HS_PH_REQ_LEAD:
		if (blank || eol)
			break;
		if (!hs_is_tchar_byte(b))
			goto not_http;
		s->phase = HS_PH_REQ_METHOD;
		s->mask_start = hs_off(pos);
		break;
	case HS_PH_REQ_METHOD:
		if (blank) {
			s->phase = HS_PH_REQ_WS1;
			break;
		}
		if (!hs_is_tchar_byte(b) || pos - s->mask_start >= HS_MAX_METHOD_LEN)
			goto not_http;
		break;
	case HS_PH_REQ_WS1:
		if (eol)
			goto not_http;
		if (!blank)
			s->phase = HS_PH_REQ_TARGET;
		break;
	case HS_PH_REQ_TARGET:
		if (eol)
			goto done;
		if (blank)
			s->phase = HS_PH_REQ_WS2;
		break;
	case HS_PH_REQ_WS2:
		if (eol)
			goto done;
		if (blank)
			break;
		if (b != 'H')
			goto not_http;
		s->phase = HS_PH_REQ_VERSION;
		s->mask_start = hs_off(pos);
		break;
	case HS_PH_REQ_VERSION:
		if (pos - s->mask_start < 5) {
			/* "HTTP/": the 'H' started the token. */
			__u32 i = pos - s->mask_start;
			__u8 want = i == 4 ? '/' : i == 3 ? 'P' : 'T';

			if (b != want)
				goto not_http;
			break;
		}
		if (eol)
			goto done;
		if (blank)
			s->phase = HS_PH_REQ_TRAIL;
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
	s->flags &= ~(HS_SF_PREV_LF | HS_SF_PREV_MASKED);
	hs_end_line(s, b, pos);
	return HS_STEP_MORE;
not_http:
	/* After a complete request, bytes that start no other are its body. */
	s->phase = s->requests ? HS_PH_BODY : HS_PH_NOT_HTTP;
	return HS_STEP_DONE;
}

/* A line's first byte. */
HS_INLINE int hs_step_line_start(struct hs_scan *s, const struct hs_trie *t, __u8 b, __u32 pos)
{
	if (b == '\n') {
		/* An empty line: the end of the block if the line end before it
		 * had an LF too; otherwise some parser still reads fields. */
		if (s->flags & HS_SF_PREV_LF)
			return hs_end_block(s, pos);
		s->flags |= HS_SF_PREV_LF;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	if (b == '\r') {
		s->phase = HS_PH_CR;
		s->flags |= HS_SF_EMPTY;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	s->mask_start = hs_off(pos);
	if (b == ' ' || b == '\t') {
		s->flags |= HS_SF_CONT;
		if (s->flags & HS_SF_PREV_MASKED) {
			/* obs-fold continuation of a masked field: masked too. */
			s->phase = HS_PH_MASK;
			s->flags |= HS_SF_KEEP_WS | HS_SF_FILL_X;
			s->pos = hs_off(pos + 1);
			return HS_STEP_MORE;
		}
		s->flags |= HS_SF_WS_PREFIX;
		s->mask_start = hs_off(pos + 1);
		s->phase = HS_PH_LEAD;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	s->flags &= ~HS_SF_PREV_MASKED;
	if (hs_is_blank(b)) {
		s->phase = HS_PH_LEAD;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	if (b == ':') {
		s->seen++;
		s->phase = HS_PH_SKIP;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	}
	hs_start_name(s, t, b, pos);
	return HS_STEP_MORE;
}

/* Rest of a masked line, one byte. */
HS_INLINE void hs_step_mask_byte(struct hs_scan *s, __u8 *p, __u8 b, __u32 pos)
{
	if ((s->flags & HS_SF_KEEP_WS) && (b == ' ' || b == '\t')) {
		s->pos = hs_off(pos + 1);
		return;
	}
	s->flags &= ~HS_SF_KEEP_WS;
	hs_rewrite_byte(s, p, pos,
			(s->flags & HS_SF_FILL_X) ? 'x' : hs_fill_byte(pos - s->mask_start, s->name_fill));
	s->pos = hs_off(pos + 1);
}

/*
 * Eight bytes at once where only a line end matters. Returns 1 when it
 * consumed bytes, 0 when the byte at @pos needs the byte-wise path.
 */
HS_INLINE int hs_step_word(struct hs_scan *s, __u8 *p, __u32 pos)
{
	__u64 w = hs_load64(p), stop;
	__u32 k;

	if (s->phase == HS_PH_REQ_TARGET) {
		/* Stop at anything below '!' (blanks, CR, LF) or 0x85/0xa0. */
		stop = ((w - HS_ONES * 0x21) & ~w & HS_HIGHS) | hs_bytes_eq(w, 0x85) |
		       hs_bytes_eq(w, 0xa0);
	} else {
		stop = hs_bytes_eq(w, '\r') | hs_bytes_eq(w, '\n');
	}
	k = stop ? hs_first_byte(stop) : 8;
	if (!k)
		return 0;
	if (s->phase == HS_PH_MASK) {
		/* Only plain filler ('x') is written a word at a time. */
		__u64 keep = k == 8 ? 0 : ~0ULL << (8 * k);
		__u64 nw = (w & keep) | (HS_ONES * 'x' & ~keep);

		hs_store64(p, nw);
		s->csum_acc += hs_csum_word(s, pos, nw) + 5 * 0xffffULL - hs_csum_word(s, pos, w);
	}
	s->pos = hs_off(pos + k);
	return 1;
}

/*
 * One step over @data[s->pos ...]: @data and @data_end bound the buffer the
 * way the verifier wants packet bounds checked. Returns enum hs_step.
 */
HS_INLINE int hs_scan_step(struct hs_scan *s, const struct hs_trie *t, __u8 *data, __u8 *data_end)
{
	__u32 pos = s->pos;
	__u8 *p;
	__u8 b;

	if (s->phase >= HS_PH_BODY || pos >= s->end || pos >= HS_MAX_BUF)
		return HS_STEP_DONE;
	p = data + pos;
	if (p + 1 > data_end)
		return HS_STEP_DONE;

	if ((s->phase == HS_PH_SKIP || s->phase == HS_PH_REQ_TARGET ||
	     (s->phase == HS_PH_MASK && !(s->flags & HS_SF_KEEP_WS) &&
	      ((s->flags & HS_SF_FILL_X) || pos - s->mask_start >= s->name_fill + 2u))) &&
	    pos + 8 <= s->end && p + 8 <= data_end && hs_step_word(s, p, pos))
		return HS_STEP_MORE;

	b = *p;
	switch (s->phase) {
	case HS_PH_LINE_START:
		return hs_step_line_start(s, t, b, pos);
	case HS_PH_CR:
		if (b == '\n') {
			if ((s->flags & HS_SF_EMPTY) && (s->flags & HS_SF_PREV_LF))
				return hs_end_block(s, pos);
			s->flags = (s->flags & ~HS_SF_EMPTY) | HS_SF_PREV_LF;
			s->phase = HS_PH_LINE_START;
			s->pos = hs_off(pos + 1);
			return HS_STEP_MORE;
		}
		/* A bare CR ended the line; this byte starts the next one. */
		s->flags &= ~(HS_SF_EMPTY | HS_SF_PREV_LF);
		s->phase = HS_PH_LINE_START;
		return hs_step_line_start(s, t, b, pos);
	case HS_PH_SKIP:
		if (hs_is_eol(b)) {
			s->flags &= ~HS_SF_PREV_MASKED;
			hs_end_line(s, b, pos);
		} else {
			s->pos = hs_off(pos + 1);
		}
		return HS_STEP_MORE;
	case HS_PH_MASK:
		if (hs_is_eol(b)) {
			s->flags |= HS_SF_PREV_MASKED;
			hs_end_line(s, b, pos);
		} else {
			hs_step_mask_byte(s, p, b, pos);
		}
		return HS_STEP_MORE;
	case HS_PH_LEAD:
		if (hs_is_eol(b)) {
			s->flags &= ~HS_SF_PREV_MASKED;
			hs_end_line(s, b, pos);
		} else if (b == ' ' || b == '\t') {
			if (s->flags & HS_SF_WS_PREFIX)
				s->mask_start = hs_off(pos + 1);
			s->pos = hs_off(pos + 1);
		} else if (hs_is_blank(b)) {
			s->flags &= ~HS_SF_WS_PREFIX;
			s->pos = hs_off(pos + 1);
		} else if (b == ':') {
			s->phase = HS_PH_SKIP;
			s->pos = hs_off(pos + 1);
		} else {
			s->flags &= ~HS_SF_PREV_MASKED;
			hs_start_name(s, t, b, pos);
		}
		return HS_STEP_MORE;
	case HS_PH_NAME:
		if (b == ':')
			return hs_decide(s, t, pos);
		if (hs_is_eol(b)) {
			/* No colon: not a field line. */
			s->flags &= ~HS_SF_PREV_MASKED;
			hs_end_line(s, b, pos);
			return HS_STEP_MORE;
		}
		if (hs_is_blank(b)) {
			if (!(s->flags & HS_SF_IN_JUNK)) {
				s->flags |= HS_SF_IN_JUNK;
				s->saved = s->tstate;
			}
		} else {
			s->flags &= ~HS_SF_IN_JUNK;
		}
		s->tstate = hs_trie_step(t, s->tstate, b);
		if (s->tstate == HS_TRIE_DEAD && !(s->flags & HS_SF_IN_JUNK))
			s->phase = HS_PH_SKIP;
		s->pos = hs_off(pos + 1);
		return HS_STEP_MORE;
	default:
		return hs_step_request(s, b, pos);
	}
}

#endif /* HDRSTRIP_SCAN_H */
