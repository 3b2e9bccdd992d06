// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The scanner fuzzer's oracle (see scan_check.h). Each input is scanned
 * four times: as one buffer, cut by the input's segment lengths, cut by
 * sums of four of them (segments of up to 1020 bytes: the buffers origin
 * mode's sk_skb program scans end anywhere), and cut at every byte. Every
 * run must hold on its own:
 *  - no crash, no undefined behaviour, no read outside a segment (ASan and
 *    UBSan; each segment is a heap block of exactly its packet's size);
 *  - the bytes before the payload (the packet's headers) are unchanged, and
 *    the checksum update the scanner accumulates is the real difference;
 *  - line ends are unchanged and every other byte that changed lies in a
 *    line that now has a masked shape (liberal.h: lib_filler);
 *  - every step count stays within the bound the BPF program gives a
 *    buffer (HS_STEPS_PER_BYTE steps a byte, scan.h);
 *  - in the bytes the program lets through, no line the scanner read as a
 *    field line (the request line, bodies and chunk framing are not
 *    scanned for fields by design) holds a field whose name the list
 *    matches, as the liberal reader sees it; a field that matches in the
 *    input comes out masked, and so do its obs-fold continuation lines;
 *  - every match the scanner reports is the verdict of the naive matcher
 *    on that line's name;
 *  - what real origins read otherwise than the framing says is never read
 *    by one reading only (check_readings(), the rules at the top of
 *    scan.h): an HTTP/2 preface where a request starts is dropped (or,
 *    under on-error pass, the stream goes unscanned or line by line from
 *    it), nothing after the header block of a GET, HEAD, DELETE, OPTIONS or
 *    TRACE with a body is skipped as a body or read as a request line, and
 *    neither is anything after a length or a coding that follows a line
 *    Python's header parser stops at.
 * And the four outputs are the same, but for scan.h's split-name rule: a
 * name that could still match when its segment ended is rewritten ahead;
 * when it turns out not to match, that field (its line and its obs-fold
 * continuation lines) comes out masked where the unsplit scan kept it.
 * Nothing else may differ, except after such a field when its name is one
 * that frames the request (the masked field no longer frames anything).
 *
 * Every input is also sent through proxy mode (bpf/proxy.bpf.c), the
 * scanner in remove mode, each segment of the unsplit, cut and
 * byte-by-byte runs one send (run_remove()). What the origin receives must
 * be the unsplit run's output with each line it masked taken out whole (a
 * field's continuation lines and line ends with it), and nothing else
 * changed; where the stream goes line by line, remove mode masks in place,
 * and is held to what a split run is held to against the unsplit one
 * (rm_fill(), then check_run() and compare_runs()). The liberal reader
 * finds no listed field in what the origin receives, and nothing from the
 * line a drop rule matched on reaches it.
 *
 * And the head lane (scan_lane.h): a request stream it takes as one head
 * comes out of it as out of the byte-wise scanner (check_lane()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdrstrip/scan.h>
#include <hdrstrip/scan_lane.h>

#include "check_util.h"
#include "compile.h"
#include "hlist.h"
#include "liberal.h"
#include "scan_check.h"

/* The built-in list: exact, prefix and drop rules, '_' folding, a name
 * that shares its first bytes with Content-Length, and rules for responses
 * (one of them a name a request rule lists too). */
static const char default_list[] = "x-internal-auth\n"
				   "x-a\n"
				   "X_Secret-*\n"
				   "x-kill-switch drop\n"
				   "content-md5\n"
				   "authorization-internal\n"
				   "x-backend-* response\n"
				   "x-a drop response\n"
				   "server-timing both\n";
static const uint8_t default_cuts[] = { 5, 1, 9, 3, 17 };

/* Bytes before the payload: Ethernet, IPv4, TCP headers. */
#define SC_HDR 54
#define SC_MAX_HITS 4096
#define SC_MAX_LINES (SC_MAX_STREAM + 1)
/* One a segment end at most: the byte-by-byte run ends a segment at every
 * byte (a smaller table left the names it rewrote ahead past the 4,096th
 * unrecorded, and the oracle blamed the scanner for them). */
#define SC_MAX_PREMASK SC_MAX_STREAM

/* RUN_UNTRACKED: unsplit, from the state of a connection scanned line by
 * line from its first byte. RUN_RM_*: proxy mode's remove mode, each
 * segment of the run it is named after one send (run_remove()). RUN_LONG:
 * segments of up to 1020 bytes, each the sum of four segment lengths (an
 * sk_skb program's buffers in origin mode, a GRO packet's at the hooks:
 * cuts anywhere, far apart). */
enum {
	RUN_WHOLE,
	RUN_CUTS,
	RUN_BYTES,
	RUN_UNTRACKED,
	RUN_RM_WHOLE,
	RUN_RM_CUTS,
	RUN_RM_BYTES,
	RUN_LONG,
	RUN_KINDS
};

static const char *const run_name[RUN_KINDS] = {
	"unsplit",	  "cut",	"byte-by-byte",	       "unsplit-untracked",
	"remove-unsplit", "remove-cut", "remove-byte-by-byte", "long-cut"
};

static int is_remove(int kind)
{
	return kind >= RUN_RM_WHOLE && kind <= RUN_RM_BYTES;
}

/* The mask-mode run whose segments a remove-mode run's sends are. */
static int seg_kind(int kind)
{
	return is_remove(kind) ? kind - RUN_RM_WHOLE : kind;
}

struct sc_hit {
	uint32_t off; /* stream offset of the colon */
	uint32_t rule; /* rule + 1 */
};

struct sc_run {
	uint8_t out[SC_MAX_STREAM];
	uint8_t cls[SC_MAX_STREAM];
	size_t delivered; /* bytes the program let through, from the start */
	size_t stopped; /* where scanning stopped for good (or the length) */
	int end_phase;
	struct sc_hit hits[SC_MAX_HITS];
	size_t n_hits;
	/* Segment ends at which a name was left rewritten ahead. */
	uint32_t premask[SC_MAX_PREMASK];
	size_t n_premask;
};

struct sc_input {
	uint8_t mode;
	const uint8_t *list;
	size_t list_len;
	const uint8_t *cuts;
	size_t n_cuts;
	const uint8_t *stream;
	size_t len;
};

/* The compiled list, kept while inputs bring the same list text. */
static struct {
	struct hs_trie trie;
	struct lib_list lib[2]; /* by direction: HS_DIR_REQUEST, HS_DIR_RESPONSE */
	uint8_t text[65536];
	size_t text_len;
	int valid;
} g_list;

static struct sc_run g_runs[RUN_KINDS];

/*
 * What a remove-mode run did besides what struct sc_run holds (its out[]
 * there is a stand-in, see rm_fill()): the bytes the origin received, each
 * with the stream offset it came from, and by stream offset what became of
 * the rest.
 */
#define RM_MAX_RUNS (2 * SC_MAX_STREAM + 2)

struct rm_run {
	uint8_t out[SC_MAX_STREAM]; /* what the origin received, in order */
	uint32_t src[SC_MAX_STREAM]; /* the stream offset of each */
	size_t n_out;
	/* The message the program runs on next: held or not reached yet. */
	uint8_t pb[SC_MAX_STREAM];
	uint32_t ps[SC_MAX_STREAM];
	size_t pn;
	uint8_t gone[SC_MAX_STREAM]; /* by stream offset: popped (removed) */
	uint8_t tracked[SC_MAX_STREAM]; /* last stepped over with HS_OPT_REMOVE set */
	uint8_t seen[SC_MAX_STREAM]; /* by stream offset: as the last scan left it */
	/* The stream offset of each program run's first byte (increasing). */
	uint32_t starts[RM_MAX_RUNS];
	size_t n_starts;
	size_t held; /* the held line the stream ended in starts here (or len) */
	size_t drop_from; /* the dropped message started here (or len) */
};

static struct rm_run g_rm[3]; /* by kind - RUN_RM_WHOLE */
static struct lib_line g_lines[SC_MAX_LINES];
static size_t g_n_lines_in; /* the stream's lines in g_lines */

/* ---- input ---- */

static void split_input(const uint8_t *data, size_t size, struct sc_input *in)
{
	const uint8_t *p = data + 1, *end = data + size, *z1, *z2;

	memset(in, 0, sizeof(*in));
	in->stream = (const uint8_t *)"";
	in->mode = size ? data[0] : 0;
	if (size <= 1)
		return;
	z1 = memchr(p, 0, end - p);
	z2 = z1 ? memchr(z1 + 1, 0, end - z1 - 1) : NULL;
	if (z2) {
		in->list = p;
		in->list_len = z1 - p;
		in->cuts = z1 + 1;
		in->n_cuts = z2 - z1 - 1;
		p = z2 + 1;
	}
	in->stream = p;
	in->len = end - p;
	if (in->len > SC_MAX_STREAM)
		in->len = SC_MAX_STREAM;
}

size_t sc_build(uint8_t *out, size_t cap, uint8_t mode, const char *list, const uint8_t *cuts,
		size_t n_cuts, const uint8_t *stream, size_t len)
{
	size_t ll = strlen(list), n = 1 + ll + 1 + n_cuts + 1 + len;

	if (n > cap)
		return 0;
	out[0] = mode;
	memcpy(out + 1, list, ll);
	out[1 + ll] = 0;
	memcpy(out + 2 + ll, cuts, n_cuts);
	out[2 + ll + n_cuts] = 0;
	memcpy(out + 3 + ll + n_cuts, stream, len);
	return n;
}

static int compile_list(const uint8_t *text, size_t len)
{
	struct hs_list_opts o;
	struct hs_list l;
	struct hs_err err;
	int r;

	hs_list_opts_default(&o);
	if (hs_list_parse((const char *)text, len, "fuzz", &o, &l, &err))
		return -1;
	r = hs_compile(&l, &g_list.trie, NULL, &err);
	for (int d = 0; d < 2 && !r; d++) {
		struct lib_list *ll = &g_list.lib[d];

		memset(ll, 0, sizeof(*ll));
		ll->fold_underscore = l.fold_underscore;
		for (size_t i = 0; i < l.n && !r; i++) {
			/* No direction named: requests (hlist.h). */
			__u8 dirs =
				l.names[i].directions ? l.names[i].directions : 1 << HS_DIR_REQUEST;

			r = lib_add(ll, l.names[i].orig, strlen(l.names[i].orig),
				    l.names[i].action);
			if (!r)
				ll->rules[i].off = !(dirs & (1 << d));
		}
	}
	hs_list_free(&l);
	return r ? -1 : 0;
}

static void load_text(const uint8_t *text, size_t len)
{
	if (!text || len > sizeof(g_list.text)) {
		text = (const uint8_t *)default_list;
		len = sizeof(default_list) - 1;
	}
	if (g_list.valid && len == g_list.text_len && !memcmp(text, g_list.text, len))
		return;
	g_list.valid = 0;
	if (compile_list(text, len)) {
		text = (const uint8_t *)default_list;
		len = sizeof(default_list) - 1;
		if (compile_list(text, len))
			abort(); /* the built-in list must compile */
	}
	memcpy(g_list.text, text, len);
	g_list.text_len = len;
	g_list.valid = 1;
	lib_set_filler((const char *)g_list.trie.fill);
}

static void load_list(const struct sc_input *in)
{
	load_text(in->list, in->list_len);
}

const struct hs_trie *sc_load(const uint8_t *text, size_t len, const struct lib_list **lib,
			      const uint8_t **used, size_t *used_len)
{
	load_text(text, len);
	*lib = &g_list.lib[HS_DIR_REQUEST];
	*used = g_list.text;
	*used_len = g_list.text_len;
	return &g_list.trie;
}

/* ---- one run, as bpf/hdrstrip.bpf.c drives the scanner ---- */

int sc_phase_class(uint8_t phase)
{
	/* The rest of a line where a request line must start, that is none
	 * (HS_PH_REQ_REST), is no field line to any server either. */
	if (phase <= HS_PH_REQ_REST)
		return CL_REQ;
	if (phase == HS_PH_BODY || (phase >= HS_PH_CHUNK_SIZE && phase <= HS_PH_CHUNK_END))
		return CL_BODY;
	if (phase < HS_PH_NOT_HTTP)
		return CL_FIELD;
	return CL_NONE;
}

static size_t seg_len(const struct sc_input *in, int kind, size_t i, size_t left)
{
	size_t n;

	kind = seg_kind(kind);
	if (kind == RUN_WHOLE || kind == RUN_UNTRACKED)
		return left;
	if (kind == RUN_BYTES)
		return left ? 1 : 0;
	if (kind == RUN_LONG) {
		n = 0;
		for (size_t k = 4 * i; k < 4 * i + 4; k++)
			n += in->n_cuts ? in->cuts[k % in->n_cuts]
					: default_cuts[k % sizeof(default_cuts)];
		return n < left ? n : left;
	}
	n = in->n_cuts ? in->cuts[i % in->n_cuts] : default_cuts[i % sizeof(default_cuts)];
	return n < left ? n : left;
}

static void run_stream(const struct sc_input *in, int kind, struct sc_run *r, struct cu_err *e)
{
	const size_t hdr = SC_HDR + ((in->mode >> 4) & 7);
	const int resp = !!(in->mode & SC_MODE_RESPONSE);
	const int fresh = in->mode & SC_MODE_FRESH;
	const int untracked = (in->mode >> SC_MODE_UNTRACKED_SHIFT) & 3;
	const int go_on = in->mode & SC_MODE_ON_ERROR_PASS;
	struct hs_stream st;
	size_t off = 0, seg = 0;

	memcpy(r->out, in->stream, in->len);
	memset(r->cls, CL_NONE, in->len);
	r->delivered = r->stopped = in->len;
	r->n_hits = r->n_premask = 0;
	r->end_phase = -1;
	hs_stream_init_dir(&st, resp);
	/* A connection first seen mid-way is scanned line by line from its
	 * first byte under --untracked scan (flow.h). */
	if (kind == RUN_UNTRACKED || (fresh && (untracked == 0 || untracked == 3)))
		hs_stream_untrack(&st);

	while (off < in->len && !e->failed) {
		const size_t n = seg_len(in, kind, seg, in->len - off);
		const int first = seg == 0;
		uint8_t *buf = malloc(hdr + n);
		__u64 before, after, limit = HS_STEPS_PER_BYTE * (n + 16), steps = 0;
		struct hs_scan s;
		int done = 0, rc;
		__u8 phase;

		if (!buf)
			abort();
		for (size_t i = 0; i < hdr; i++)
			buf[i] = (uint8_t)(0xa5 ^ i);
		memcpy(buf + hdr, in->stream + off, n);
		before = cu_sum16(buf, hdr - 20, hdr + n);

		hs_scan_begin(&s, &st, hdr, hdr + n, hdr - 20);
		if (resp) {
			s.peer_known = in->len % 5 != 0;
			s.peer_n = HS_HEADS_WINDOW;
			s.peer_heads = 0x4924924924924924ULL;
		}
		if (go_on)
			s.opts |= HS_OPT_CONFLICT_GO_ON;
		while (!done) {
			__u32 pos0 = s.pos;
			__u8 ph0 = s.st.phase;

			if (++steps > 64 * (n + 16)) {
				failf(e, "%s run: no end after %llu steps in the segment at %zu",
				      run_name[kind], (unsigned long long)steps, off);
				break;
			}
			rc = hs_scan_step(&s, &g_list.trie, buf, buf + hdr + n);
			for (__u32 p = pos0; p < s.pos && p < hdr + n; p++)
				r->cls[off + p - hdr] = sc_phase_class(ph0);
			if (rc == HS_STEP_MATCH) {
				/* At the name's colon (or line end), which the
				 * step that reports it need not have started
				 * at (a name's run goes on to its verdict). */
				if (r->n_hits < SC_MAX_HITS)
					r->hits[r->n_hits++] = (struct sc_hit){
						off + (__u32)(s.name_off + s.name_len) - hdr, s.rule
					};
				done = s.st.phase == HS_PH_DROPPED;
			} else if (rc == HS_STEP_DONE) {
				done = 1;
			}
		}
		if (steps > limit)
			failf(e,
			      "%s run: %llu steps for the %zu-byte segment at %zu; the BPF program allows %llu (HS_STEPS_PER_BYTE a byte)",
			      run_name[kind], (unsigned long long)steps, n, off,
			      (unsigned long long)limit);
		for (size_t i = 0; i < hdr; i++)
			if (buf[i] != (uint8_t)(0xa5 ^ i))
				failf(e,
				      "%s run: header byte %zu before the segment at %zu was changed",
				      run_name[kind], i, off);
		after = cu_sum16(buf, hdr - 20, hdr + n);
		{
			__u16 check = (__u16)~cu_fold16(before), want = (__u16)~cu_fold16(after);
			__u16 got = hs_csum_update(&s, check);

			/* 0x0000 and 0xffff are the same number in one's complement. */
			if (got != want &&
			    !((got == 0 || got == 0xffff) && (want == 0 || want == 0xffff)))
				failf(e,
				      "%s run: checksum update %#06x, real checksum %#06x (segment at %zu)",
				      run_name[kind], got, want, off);
		}
		memcpy(r->out + off, buf + hdr, n);
		free(buf);

		/* conclude(): the verdict and whether the flow goes on. */
		phase = s.st.phase;
		r->end_phase = phase;
		if (phase == HS_PH_DROPPED || phase == HS_PH_HALT ||
		    (phase == HS_PH_NOT_HTTP && first && fresh && untracked == 2)) {
			if (phase == HS_PH_HALT && go_on)
				failf(e, "%s run: halted at %zu although on-error is pass",
				      run_name[kind], off);
			/* Dropped; its retransmissions are dropped again. */
			r->delivered = off;
			r->stopped = off;
			break;
		}
		if (phase == HS_PH_NOT_HTTP) {
			/* Passed, and so is the rest of the connection. */
			r->stopped = off + n;
			break;
		}
		hs_scan_finish(&s, &st);
		if (st.phase == HS_PH_NAME && (st.flags & HS_SF_PREMASKED) &&
		    r->n_premask < SC_MAX_PREMASK)
			r->premask[r->n_premask++] = off + n;
		off += n;
		seg++;
	}
}

/* ---- what one run must hold on its own ---- */

static const char *show(const uint8_t *p, size_t n)
{
	static char buf[4][200];
	static int k;

	return cu_escape(buf[k++ & 3], sizeof(buf[0]), p, n);
}

static int line_changed(const struct sc_run *r, const uint8_t *in, const struct lib_line *ln)
{
	return memcmp(r->out + ln->start, in + ln->start, ln->end - ln->start) != 0;
}

/* First offset of the segment of run @kind that holds offset @p. */
static size_t seg_start_of(const struct sc_input *in, int kind, size_t p)
{
	size_t off = 0, i = 0, n;

	if (is_remove(kind)) {
		/* The last program run that began at or before @p: a held line
		 * is scanned again from its first byte, with the next send. */
		const struct rm_run *m = &g_rm[kind - RUN_RM_WHOLE];

		for (i = m->n_starts; i-- > 0;)
			if (m->starts[i] <= p)
				return m->starts[i];
		return 0;
	}
	if (kind == RUN_WHOLE || kind == RUN_UNTRACKED)
		return 0;
	if (kind == RUN_BYTES)
		return p;
	for (;; i++) {
		n = seg_len(in, kind, i, in->len - off);
		if (!n || p < off + n)
			return off;
		off += n;
	}
}

size_t sc_run_lines(const uint8_t *cls, const struct lib_line *lines, size_t n_lines,
		    struct lib_line *out)
{
	size_t n = 0;

	for (size_t k = 0; k < n_lines; k++) {
		struct lib_line ln = lines[k];

		for (size_t p = ln.start + 1; p < ln.end; p++) {
			if (cls[p] != CL_FIELD || cls[p - 1] == CL_FIELD)
				continue;
			out[n++] = (struct lib_line){ ln.start, p, p };
			ln.start = p;
		}
		out[n++] = ln;
	}
	return n;
}

static struct lib_line g_rlines[RUN_KINDS][2 * SC_MAX_LINES];
static size_t g_n_rlines[RUN_KINDS];

static void check_run(const struct sc_input *in, int kind, const struct sc_run *r, struct cu_err *e)
{
	const struct lib_list *l = &g_list.lib[!!(in->mode & SC_MODE_RESPONSE)];
	const struct lib_line *lines = g_rlines[kind];
	const size_t n_lines = g_n_rlines[kind];
	const char *rn = run_name[kind];
	int prev_match = 0; /* the previous line is (or continues) a field that matches */

	for (size_t i = 0; i < in->len; i++)
		if ((in->stream[i] == '\r' || in->stream[i] == '\n') && r->out[i] != in->stream[i])
			return failf(e, "%s run: line end at %zu was rewritten", rn, i);
	for (size_t k = 0; k < n_lines && !e->failed; k++) {
		struct lib_line cut = lines[k];
		size_t ns, ne;
		int scoped, filler, field_match = 0;

		/* What went out (or would have, before a drop) is masked where
		 * it was changed. */
		if (cut.start >= r->stopped)
			break;
		if (cut.end > r->stopped)
			cut.end = r->stopped;
		if (line_changed(r, in->stream, &cut) && !lib_filler(r->out, cut.start, cut.end))
			return failf(
				e,
				"%s run: line at %zu changed but is not masked: \"%s\" -> \"%s\"",
				rn, cut.start, show(in->stream + cut.start, cut.end - cut.start),
				show(r->out + cut.start, cut.end - cut.start));
		if (cut.end > r->delivered)
			cut.end = r->delivered;
		scoped = cut.end > cut.start && r->cls[cut.start] == CL_FIELD;
		if (!scoped) {
			prev_match = 0;
			continue;
		}
		filler = lib_filler(r->out, cut.start, cut.end);
		/* What the liberal reader finds in the output. */
		if (!filler && lib_field(r->out, &cut, &ns, &ne) &&
		    lib_enforced(l, lib_match(l, r->out + ns, ne - ns)))
			return failf(e, "%s run: field \"%s\" (line at %zu) went through unmasked",
				     rn, show(r->out + ns, ne - ns), cut.start);
		/* What it finds in the input must have been masked (an observe
		 * rule's field is kept, unless its name was rewritten ahead for a
		 * rule that masks, which the checks above hold to masking). */
		if (lib_field(in->stream, &cut, &ns, &ne)) {
			__u32 m = lib_match(l, in->stream + ns, ne - ns);

			field_match = m && l->rules[m - 1].action != HS_ACT_OBSERVE;
		}
		if ((field_match || (prev_match && lib_is_cont(in->stream, &cut))) && !filler)
			return failf(e, "%s run: %s at %zu is not masked: \"%s\"", rn,
				     field_match ? "internal field"
						 : "continuation of an internal field",
				     cut.start, show(r->out + cut.start, cut.end - cut.start));
		prev_match = field_match || (prev_match && lib_is_cont(in->stream, &cut));
	}
	/* Every match the scanner reports is the naive verdict on the name. */
	for (size_t h = 0, k = 0; h < r->n_hits && !e->failed; h++) {
		const struct sc_hit *hit = &r->hits[h];
		size_t ns, ne, c = 0;
		__u32 want;

		while (k < n_lines && lines[k].next <= hit->off)
			k++;
		if (k == n_lines || r->cls[lines[k].start] != CL_FIELD)
			continue;
		if (lib_field(in->stream, &lines[k], &ns, &ne))
			for (c = ns; c < lines[k].end && in->stream[c] != ':'; c++)
				;
		if (!lib_field(in->stream, &lines[k], &ns, &ne) || c != hit->off) {
			failf(e,
			      "%s run: match at %zu is not at the colon (or line end) of a field line",
			      rn, (size_t)hit->off);
			break;
		}
		want = lib_match(l, in->stream + ns, ne - ns);
		if (want != hit->rule)
			failf(e, "%s run: name \"%s\" matched rule %u, the naive matcher says %u",
			      rn, show(in->stream + ns, ne - ns), hit->rule, want);
	}
}

/*
 * What origins read otherwise (scan.h): found in the run's output (what
 * the origin gets: a masked line is filler, a field to every parser), with
 * the liberal reader's helpers, from each line the run read as a request
 * (or status) line. @gone (NULL but for remove mode): bytes taken out of
 * the stream, whose lines the origin never gets.
 */
static void check_readings(const struct sc_input *in, int kind, const struct sc_run *r,
			   const uint8_t *gone, struct cu_err *e)
{
	const int resp = !!(in->mode & SC_MODE_RESPONSE);
	const int go_on = !!(in->mode & SC_MODE_ON_ERROR_PASS);
	const uint8_t *out = r->out;
	const char *rn = run_name[kind];

	for (size_t k = 0; k < g_n_lines_in && !e->failed; k++) {
		const struct lib_line *ln = &g_lines[k];
		size_t q = ln->start, two, ns, ne, j, from = in->len, p;
		const char *why = "has a length or a coding after a line Python stops at";
		struct lib_span w[1];
		int odd = 0, body = 0, bodiless;
		uint64_t v;

		while (q < ln->end && lib_blank(in->stream[q]))
			q++;
		if (q == ln->end || q >= r->stopped || r->cls[q] != CL_REQ)
			continue;
		if (!resp && lib_h2c_preface(in->stream, q, ln->end, &two)) {
			if (!go_on && r->delivered > two)
				return failf(e,
					     "%s run: HTTP/2 preface at %zu, its '2' at %zu passed",
					     rn, q, two);
			for (p = two; p < r->delivered; p++)
				if (r->cls[p] == CL_REQ || r->cls[p] == CL_BODY ||
				    (r->cls[p] == CL_NONE && r->end_phase != HS_PH_NOT_HTTP))
					return failf(e,
						     "%s run: HTTP/2 preface at %zu read on as "
						     "HTTP/1.x (byte %zu of class %d)",
						     rn, q, p, r->cls[p]);
			continue;
		}
		bodiless = !resp && lib_words(in->stream, q, ln->end, w, 1) &&
			   lib_method_bodiless(in->stream + w[0].start, w[0].end - w[0].start);
		/* The header block, as the origin gets it. */
		for (j = k + 1; j < g_n_lines_in && g_lines[j].end > g_lines[j].start; j++) {
			const struct lib_line *f = &g_lines[j];
			size_t c;

			if (gone && gone[f->start])
				continue;
			if (lib_field(out, f, &ns, &ne) && lib_is_length_field(out, ns, ne)) {
				for (c = ne; c < f->end && out[c] != ':'; c++)
					;
				/* A name alone (no colon) is a field with an empty
				 * value to nginx, which then refuses the request
				 * (no length, no coding it knows), and no field to
				 * anyone else: it frames nothing. */
				if (c == f->end) {
					odd |= lib_py_stops(out, f);
					continue;
				}
				/* A coding, or a length above 0, is a body. */
				body |= ne - ns == 17 ||
					(lib_length_value(out, c + 1, f->end, &v) && v > 0);
				if (odd && from == in->len)
					from = f->next;
			}
			odd |= lib_py_stops(out, f);
		}
		if (bodiless && body && j < g_n_lines_in && g_lines[j].next < from) {
			from = g_lines[j].next;
			why = "has a body its method has no use for";
		}
		for (p = from; p < r->delivered; p++)
			if (r->cls[p] == CL_BODY || r->cls[p] == CL_REQ)
				return failf(
					e,
					"%s run: byte %zu read as %s after the head at %zu, which %s",
					rn, p, r->cls[p] == CL_BODY ? "body" : "a request line", q,
					why);
	}
}

/* ---- the runs against each other ---- */

/* The first segment end inside line @ln at which the run rewrote a name
 * ahead, or 0. */
static size_t premask_in(const struct sc_run *r, const struct lib_line *ln)
{
	for (size_t i = 0; i < r->n_premask; i++)
		if (r->premask[i] > ln->start && r->premask[i] <= ln->end)
			return r->premask[i];
	return 0;
}

/*
 * Split run @b kept the blanks that lead line @ln, in segments before the
 * one its name starts in, where the unsplit run @a masked them: they went
 * out before the name was seen. Everything else of the line is the same.
 */
static int kept_lead_blanks(const struct sc_input *in, int kind, const struct sc_run *a,
			    const struct sc_run *b, const struct lib_line *ln)
{
	const uint8_t *src = in->stream;
	size_t ns = ln->start, seg;

	while (ns < ln->end && lib_blank(src[ns]))
		ns++;
	if (ns == ln->end)
		return 0;
	seg = seg_start_of(in, kind, ns);
	for (size_t i = ln->start; i < ln->end; i++)
		if (a->out[i] != b->out[i] && (i >= seg || b->out[i] != src[i]))
			return 0;
	return 1;
}

/*
 * A request line that turned out not to be one (desynchronised framing) is
 * checked line by line from its first byte in the segment where that
 * showed: where the unsplit run went over from the request line at @q to
 * checking it as a field line, the split run still read a request line,
 * and went over at a segment boundary after it, the bytes before that
 * unchanged. Returns @q, or 0. The part from the boundary on is a line of
 * its own for check_run().
 */
static size_t desync_cut(const struct sc_input *in, int kind, const struct sc_run *a,
			 const struct sc_run *b, const struct lib_line *ln)
{
	size_t q, p;

	for (q = ln->start; q < ln->end; q++)
		if (a->cls[q] == CL_FIELD && b->cls[q] == CL_REQ)
			break;
	if (q == ln->end || (q > ln->start && a->cls[q - 1] == CL_FIELD))
		return 0;
	for (p = q + 1; p < ln->end && b->cls[p] == CL_REQ; p++)
		;
	/* Or the split run read the whole rest of the line as the request
	 * line that is none (no server reads a field there either). */
	if (((p < ln->end && b->cls[p] == CL_FIELD && seg_start_of(in, kind, p) == p) ||
	     p == ln->end) &&
	    !memcmp(b->out + q, in->stream + q, p - q))
		return q ? q : ln->end + 1; /* q == 0 is the stream's first byte */
	return 0;
}

/* Did run @r stop at a drop rule in line @ln? */
static int dropped_in(const struct sc_run *r, const struct lib_line *ln)
{
	return r->end_phase == HS_PH_DROPPED && r->n_hits &&
	       r->hits[r->n_hits - 1].off >= ln->start && r->hits[r->n_hits - 1].off < ln->next;
}

#define SC_MAX_EXCUSED 256
static struct lib_line g_excused[SC_MAX_EXCUSED];

static int excused(size_t off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (off >= g_excused[i].start && off < g_excused[i].next)
			return 1;
	return 0;
}

/* Lines compared: the input's, cut where either run went over to field
 * lines in the middle of one; g_cdesync marks the parts of a line
 * desync_cut() excuses. */
static struct lib_line g_clines[2 * SC_MAX_LINES];
static uint8_t g_cdesync[2 * SC_MAX_LINES];

/* An obs-fold continuation line @ln of a masked field in @src parts the
 * unsplit run @a from a split one when @a dropped there or @ln is a
 * framing field: the runs are compared only up to it. */
static int cont_parts_runs(const struct sc_run *a, const uint8_t *src, const struct lib_line *ln)
{
	size_t ns, ne;

	return dropped_in(a, ln) || (lib_field(src, ln, &ns, &ne) && lib_is_framing(src, ns, ne));
}

static size_t compare_lines(const struct sc_input *in, int kind, const struct sc_run *a,
			    const struct sc_run *b, size_t n_lines)
{
	size_t n = 0;

	for (size_t k = 0; k < n_lines; k++) {
		const struct lib_line *ln = &g_lines[k];
		size_t q = desync_cut(in, kind, a, b, ln), start = ln->start;

		if (q > ln->end)
			q = 0;
		else if (!q)
			q = ln->next + 1; /* none */
		for (size_t p = ln->start + 1; p < ln->end; p++) {
			if ((a->cls[p] != CL_FIELD || a->cls[p - 1] == CL_FIELD) &&
			    (b->cls[p] != CL_FIELD || b->cls[p - 1] == CL_FIELD))
				continue;
			g_cdesync[n] = start >= q;
			g_clines[n++] = (struct lib_line){ start, p, p };
			start = p;
		}
		g_cdesync[n] = start >= q;
		g_clines[n++] = (struct lib_line){ start, ln->end, ln->next };
	}
	return n;
}

/* Did run @r match a rule that masks or drops in line @ln? */
static int enforced_hit_in(const struct sc_input *in, const struct sc_run *r,
			   const struct lib_line *ln)
{
	const struct lib_list *l = &g_list.lib[!!(in->mode & SC_MODE_RESPONSE)];

	for (size_t h = 0; h < r->n_hits; h++)
		if (r->hits[h].off >= ln->start && r->hits[h].off < ln->next &&
		    lib_enforced(l, r->hits[h].rule))
			return 1;
	return 0;
}

static void compare_runs(const struct sc_input *in, int base, int kind, size_t n_lines,
			 struct cu_err *e)
{
	const struct sc_run *a = &g_runs[base], *b = &g_runs[kind];
	const uint8_t *src = in->stream;
	size_t cutoff = in->len, k, n_excused = 0, drop_at = in->len;
	int in_masked_field = 0, in_desync = 0;

	/* Both runs dropped at the same field: neither sent that line whole,
	 * and the split one may have rewritten its name ahead. */
	if (a->end_phase == HS_PH_DROPPED && b->end_phase == HS_PH_DROPPED && a->n_hits &&
	    b->n_hits && a->hits[a->n_hits - 1].off == b->hits[b->n_hits - 1].off)
		drop_at = a->hits[a->n_hits - 1].off;
	n_lines = compare_lines(in, kind, a, b, n_lines);
	for (k = 0; k < n_lines && !e->failed; k++) {
		const struct lib_line *ln = &g_clines[k];
		size_t len = ln->end - ln->start, at, ns, ne, i;
		int ahead;

		if (drop_at >= ln->start && drop_at < ln->next)
			break;
		/* Taken out whole in remove mode where the unsplit run masked it
		 * into a line still no field to Python (a name alone): the origin
		 * of one gets a line Python stops reading fields at, the other's
		 * none, and a framing field after it parts their readings. Or
		 * it would have been, but a halt later on dropped the send that
		 * held it: the runs part at it all the same. */
		if (is_remove(kind) && len &&
		    (g_rm[kind - RUN_RM_WHOLE].gone[ln->start] ||
		     (ln->start >= g_rm[kind - RUN_RM_WHOLE].drop_from && !g_cdesync[k] &&
		      enforced_hit_in(in, a, ln))) &&
		    lib_py_stops(a->out, ln)) {
			cutoff = ln->next;
			break;
		}
		if (g_cdesync[k]) {
			/* Matches in it are the two readings' own, and so is the
			 * fate of its obs-fold continuation lines; a drop rule
			 * the unsplit run found there parts the runs. */
			if (dropped_in(a, ln) || dropped_in(b, ln)) {
				cutoff = ln->start;
				break;
			}
			if (n_excused < SC_MAX_EXCUSED)
				g_excused[n_excused++] = *ln;
			in_desync = 1;
			continue;
		}
		at = premask_in(b, ln);
		for (ns = ln->start; ns < ln->end && lib_blank(src[ns]); ns++)
			;
		/* The split run rewrote the name ahead as one that may match. */
		ahead = at && at > ns &&
			lib_possible(&g_list.lib[!!(in->mode & SC_MODE_RESPONSE)], src + ns,
				     at - ns);
		if (!memcmp(a->out + ln->start, b->out + ln->start, len)) {
			/* The same bytes, but maybe masked in the split run all
			 * the same (a line that was filler already). An empty
			 * line ended by a CR keeps a masked field's fate for
			 * SP/HTAB lines after it (a parser that does not end
			 * lines at a bare CR reads on); one ended by LF does not. */
			int carry = lib_is_cont(src, ln) ||
				    (!len && ln->end < in->len && src[ln->end] == '\r');

			if (in_masked_field && lib_is_cont(src, ln) &&
			    lib_filler(b->out, ln->start, ln->end)) {
				/* An obs-fold continuation of a field rewritten
				 * ahead, masked as such where the unsplit run
				 * masked it as a match of its own (" x" after
				 * "X-"): the same bytes, and that match is not
				 * made; but a drop or framing field there parts
				 * the runs, as below. */
				if (cont_parts_runs(a, src, ln)) {
					cutoff = ln->start;
					break;
				}
				if (n_excused < SC_MAX_EXCUSED)
					g_excused[n_excused++] = *ln;
			}
			in_desync = in_desync && carry;
			in_masked_field = (ahead && lib_filler(b->out, ln->start, ln->end)) ||
					  (in_masked_field && carry);
			continue;
		}
		if (in_masked_field && lib_is_cont(src, ln) && dropped_in(b, ln)) {
			/* The split run checked it and dropped there. */
			cutoff = ln->start;
			break;
		}
		if (in_masked_field && lib_is_cont(src, ln) &&
		    lib_filler(b->out, ln->start, ln->end) &&
		    (!line_changed(a, src, ln) || lib_filler(a->out, ln->start, ln->end))) {
			/* An obs-fold continuation of the field below shares its
			 * fate: masked, and not checked on its own any more. A
			 * match the unsplit run found in it is not made: masked
			 * either way, but a drop rule there parts the runs ... */
			if (cont_parts_runs(a, src, ln)) {
				/* ... and so does a framing field there, masked
				 * unread (no server gets it any more). */
				cutoff = ln->start;
				break;
			}
			if (n_excused < SC_MAX_EXCUSED)
				g_excused[n_excused++] = *ln;
			continue;
		}
		in_masked_field = 0;
		if (kept_lead_blanks(in, kind, a, b, ln)) {
			/* Blanks Python stops at, kept where the unsplit run
			 * masked them: the runs' framing parts there. */
			if (lib_py_stops(b->out, ln) && !lib_py_stops(a->out, ln)) {
				cutoff = ln->next;
				break;
			}
			continue;
		}
		if (in_desync && lib_is_cont(src, ln) && (dropped_in(a, ln) || dropped_in(b, ln))) {
			/* One run masked it as a continuation, the other checked
			 * it on its own and met a drop rule: they part here (what
			 * the dropping run rewrote ahead of the drop never went
			 * out whole). */
			cutoff = ln->start;
			break;
		}
		if (in_desync && lib_is_cont(src, ln) &&
		    (!line_changed(a, src, ln) || lib_filler(a->out, ln->start, ln->end)) &&
		    (!line_changed(b, src, ln) || lib_filler(b->out, ln->start, ln->end))) {
			if (n_excused < SC_MAX_EXCUSED)
				g_excused[n_excused++] = *ln;
			in_desync = 1;
			continue;
		}
		in_desync = 0;
		if (ahead && !line_changed(a, src, ln) && lib_filler(b->out, ln->start, ln->end)) {
			/* The split-name rule: a benign name rewritten ahead.
			 * A framing field masked unread, or a line Python stops
			 * at masked into a field line, parts the runs' framing. */
			in_masked_field = 1;
			if ((lib_field(src, ln, &ns, &ne) && lib_is_framing(src, ns, ne)) ||
			    lib_py_stops(src, ln)) {
				cutoff = ln->next;
				break;
			}
			continue;
		}
		for (i = ln->start; a->out[i] == b->out[i]; i++)
			;
		failf(e, "%s and %s runs differ at %zu (line at %zu): \"%s\" vs \"%s\"%s",
		      run_name[base], run_name[kind], i, ln->start, show(a->out + ln->start, len),
		      show(b->out + ln->start, len),
		      at ? " (a name was rewritten ahead there, but not as the rule allows)" : "");
		return;
	}
	if (e->failed)
		return;
	for (size_t h = 0, g = 0;; h++, g++) {
		int ina, inb;

		while (h < a->n_hits && excused(a->hits[h].off, n_excused))
			h++;
		while (g < b->n_hits && excused(b->hits[g].off, n_excused))
			g++;
		ina = h < a->n_hits && a->hits[h].off < cutoff;
		inb = g < b->n_hits && b->hits[g].off < cutoff;
		if (!ina && !inb)
			break;
		if (ina != inb || a->hits[h].off != b->hits[g].off ||
		    a->hits[h].rule != b->hits[g].rule)
			return failf(
				e, "%s and %s runs report different matches (#%zu: %s)",
				run_name[base], run_name[kind], h,
				ina ? (inb ? "other rule or place" : "missing in the split run")
				    : "extra in the split run");
	}
	/* How a run ended: a drop, a halt or a stream that is no HTTP the same
	 * way in both (a name cut at the very end may leave one in NAME). */
	if (cutoff == in->len && a->end_phase != b->end_phase &&
	    (a->end_phase >= HS_PH_NOT_HTTP || b->end_phase >= HS_PH_NOT_HTTP))
		failf(e, "%s run ends in phase %d, %s run in phase %d", run_name[base],
		      a->end_phase, run_name[kind], b->end_phase);
}

/* ---- proxy mode: remove mode, as bpf/proxy.bpf.c drives the scanner ---- */

/* Is the connection scanned line by line from its first byte (no state,
 * --untracked scan)? */
static int untracked_scan(const struct sc_input *in)
{
	int untracked = (in->mode >> SC_MODE_UNTRACKED_SHIFT) & 3;

	return (in->mode & SC_MODE_FRESH) && (untracked == 0 || untracked == 3);
}

/*
 * Each segment of the run a remove-mode run is named after is one send
 * (sendmsg) through hdrstrip_msg; rm_msg() is one run of that program over
 * the message it is given, and run_remove() is what the kernel's sk_msg
 * send path (tcp_bpf_sendmsg, tcp_bpf_send_verdict) does with its verdict:
 * bytes passed go to the origin, a remainder after an apply count gets the
 * program again at once, a corked message waits for the next send's bytes
 * and then gets it again whole. Not modelled: observe mode (the input has
 * no mode bit for it; it removes nothing), counters and events, a failing
 * bpf_msg_pull_data (proxy.bpf.c:360) or bpf_msg_pop_data (:417), which
 * drop under the drop policy and cannot fail here, and a send the kernel
 * splits under memory pressure (any segmentation stands for that). The
 * proxy attaches before a connection's first byte: a remove-mode run starts
 * from the state the unsplit run does (line by line from the first byte
 * when the input says the connection is untracked, as after give_up()),
 * and has no rule for a first segment that is no HTTP (flow.h's, at the
 * hooks): it passes it.
 */
enum {
	RM_PASS_ALL, /* apply count 0: the whole message goes */
	RM_PASS_KEEP, /* apply count @keep: those go, the program runs on the rest */
	RM_CORK, /* held whole until the next send */
	RM_DROP /* SK_DROP: the send fails */
};

/* struct scan_rm and scan_rm_add() of bpf/scan_loop.h (BPF-only headers):
 * adjacent ranges merge, and the HS_MAX_RM-th range stops the scan. */
#define RM_MAX 32

struct rm_list {
	uint32_t off[RM_MAX];
	uint32_t len[RM_MAX];
	uint32_t n;
};

static int rm_add(struct rm_list *rm, const struct hs_scan *s)
{
	uint32_t n = rm->n, last = (n - 1) & (RM_MAX - 1);

	if (n && rm->off[last] + rm->len[last] == s->rm_start) {
		rm->len[last] += s->rm_end - s->rm_start;
		return 0;
	}
	if (n >= RM_MAX)
		return 1;
	rm->off[n] = s->rm_start;
	rm->len[n] = s->rm_end - s->rm_start;
	rm->n = n + 1;
	return n + 1 == RM_MAX;
}

/* The first @k bytes of the message go to the origin. */
static void rm_deliver(struct rm_run *m, size_t k)
{
	memcpy(m->out + m->n_out, m->pb, k);
	memcpy(m->src + m->n_out, m->ps, k * sizeof(m->ps[0]));
	m->n_out += k;
	m->pn -= k;
	memmove(m->pb, m->pb + k, m->pn);
	memmove(m->ps, m->ps + k, m->pn * sizeof(m->ps[0]));
}

/* give_up() (proxy.bpf.c:285-295): dropped under the drop policy, else the
 * message passes whole and the connection goes line by line from the state
 * before this run. Never reached by streams of at most SC_MAX_STREAM bytes
 * (no line fills HS_MAX_BUF, bpf_loop's bound is never met, a full range
 * list has kept bytes between its ranges): reported. */
static int rm_give_up(int kind, struct hs_stream *st, int go_on, size_t at, const char *why,
		      struct cu_err *e)
{
	failf(e, "%s run: the program gives up on the message at %zu (%s)", run_name[kind], at,
	      why);
	if (!go_on)
		return RM_DROP;
	hs_stream_untrack(st);
	return RM_PASS_ALL;
}

/* One run of hdrstrip_msg (proxy.bpf.c:334-481) over the message m->pb. */
static int rm_msg(const struct sc_input *in, int kind, struct sc_run *r, struct rm_run *m,
		  struct hs_stream *st, size_t *keep_out, struct cu_err *e)
{
	const int resp = !!(in->mode & SC_MODE_RESPONSE);
	const int go_on = !!(in->mode & SC_MODE_ON_ERROR_PASS);
	const size_t size = m->pn, at = m->ps[0];
	/* :359: a window of at most HS_MAX_BUF bytes. */
	const size_t n = size < HS_MAX_BUF ? size : HS_MAX_BUF;
	const __u64 limit = HS_STEPS_PER_BYTE * (n + 16);
	/* :393: bpf_loop(HS_MAX_CALLS) of HS_STEPS_PER_CALL (4) steps. */
	const __u64 max_steps = HS_STEPS_PER_BYTE * (HS_MAX_BUF + 16);
	uint8_t *buf = malloc(n); /* exactly the window: ASan sees any read past it */
	struct rm_list rm = { .n = 0 };
	struct hs_scan s;
	__u64 steps = 0;
	size_t removed = 0, keep;
	int done = 0, rc;

	if (!buf)
		abort();
	memcpy(buf, m->pb, n);
	if (m->n_starts < RM_MAX_RUNS)
		m->starts[m->n_starts++] = (uint32_t)at;
	/* :366 */
	hs_scan_begin(&s, st, 0, (__u32)n, 0);
	/* :367-376: the requests the server socket read, as run_stream()
	 * gives them. */
	if (resp) {
		s.peer_known = in->len % 5 != 0;
		s.peer_n = HS_HEADS_WINDOW;
		s.peer_heads = 0x4924924924924924ULL;
	}
	/* :380-382: a stream checked line by line is masked in place. */
	s.opts = (st->conn & HS_CN_UNTRACKED ? 0 : HS_OPT_REMOVE) |
		 (go_on ? HS_OPT_CONFLICT_GO_ON : 0);
	/* :393 and scan_steps() (scan_loop.h). */
	while (!done && steps < max_steps) {
		__u32 pos0 = s.pos, prev_end = rm.n ? rm.off[rm.n - 1] + rm.len[rm.n - 1] : 0;
		__u8 ph0 = s.st.phase, rem0 = hs_removes(&s);

		steps++;
		rc = hs_scan_step(&s, &g_list.trie, buf, buf + n);
		for (__u32 p = pos0; p < s.pos && p < n; p++) {
			r->cls[m->ps[p]] = sc_phase_class(ph0);
			m->tracked[m->ps[p]] = rem0;
		}
		if (rc == HS_STEP_MATCH) {
			__u32 at = (__u32)(s.name_off + s.name_len); /* as above */

			if (r->n_hits < SC_MAX_HITS)
				r->hits[r->n_hits++] =
					(struct sc_hit){ at < n ? m->ps[at] : m->ps[n - 1] + 1,
							 s.rule };
			done = s.st.phase == HS_PH_DROPPED;
		} else if (rc == HS_STEP_REMOVE) {
			if (!rem0 || s.rm_start >= s.rm_end || s.rm_end > n ||
			    s.rm_start < prev_end) {
				failf(e,
				      "%s run: removal [%u, %u) in the %zu-byte message at %zu (after %u, remove mode %s)",
				      run_name[kind], s.rm_start, s.rm_end, size, at, prev_end,
				      rem0 ? "on" : "off");
				break;
			}
			if (rm_add(&rm, &s))
				done = 2; /* SCAN_RM_FULL */
		} else if (rc == HS_STEP_DONE) {
			done = 1; /* SCAN_DONE */
		}
	}
	if (steps > limit)
		failf(e,
		      "%s run: %llu steps for the %zu-byte message at %zu; the scanner promises at most %llu (HS_STEPS_PER_BYTE a byte)",
		      run_name[kind], (unsigned long long)steps, n, at, (unsigned long long)limit);
	/* Remove mode writes nothing; only a part scanned line by line is
	 * masked in place. */
	for (size_t p = 0; p < n && !e->failed; p++)
		if (buf[p] != m->pb[p] && m->tracked[m->ps[p]])
			failf(e, "%s run: remove mode rewrote byte %u (\"%s\" -> \"%s\")",
			      run_name[kind], m->ps[p], show(m->pb + p, 1), show(buf + p, 1));
	memcpy(m->pb, buf, n);
	for (size_t p = 0; p < n; p++)
		m->seen[m->ps[p]] = buf[p];
	free(buf);
	r->end_phase = s.st.phase;
	if (e->failed)
		return RM_DROP;
	/* :399-406: a drop rule, or ambiguous framing under the drop policy. */
	if (s.st.phase == HS_PH_DROPPED || s.st.phase == HS_PH_HALT) {
		if (s.st.phase == HS_PH_HALT && go_on)
			failf(e, "%s run: halted at %zu although on-error is pass", run_name[kind],
			      at);
		return RM_DROP;
	}
	/* :410 */
	if (!done)
		return rm_give_up(kind, st, go_on, at, "bpf_loop's bound", e);
	/* :413-423: the ranges out, last first (earlier offsets stay valid). */
	for (uint32_t i = rm.n; i-- > 0;) {
		size_t o = rm.off[i], l = rm.len[i];

		for (size_t p = o; p < o + l; p++)
			m->gone[m->ps[p]] = 1;
		memmove(m->pb + o, m->pb + o + l, m->pn - o - l);
		memmove(m->ps + o, m->ps + o + l, (m->pn - o - l) * sizeof(m->ps[0]));
		m->pn -= l;
		removed += l;
	}
	if (s.hold) {
		/* :452 */
		if (s.line_start < removed || s.line_start > n) {
			failf(e,
			      "%s run: held line at %u of the %zu-byte message at %zu, %zu bytes removed",
			      run_name[kind], s.line_start, size, at, removed);
			return RM_DROP;
		}
		keep = s.line_start - removed;
		/* :453-460 */
		if (!keep && n < size)
			return rm_give_up(kind, st, go_on, at, "a held line fills the window", e);
		/* :461-464: apply count @keep and no cork, or cork until more
		 * bytes than the message has come (the next send). */
		*st = s.line_snap;
		*keep_out = keep;
		return keep ? RM_PASS_KEEP : RM_CORK;
	}
	/* :466-475 */
	keep = s.pos - removed;
	if ((done == 2 || n < size) && !keep)
		return rm_give_up(kind, st, go_on, at, "a window of removed lines", e);
	/* :476 */
	hs_scan_finish(&s, st);
	if (st->phase == HS_PH_NAME && (st->flags & HS_SF_PREMASKED) && n > removed &&
	    r->n_premask < SC_MAX_PREMASK)
		r->premask[r->n_premask++] = m->ps[n - removed - 1] + 1;
	/* :478: the rest of the message the run did not reach comes back. */
	if (done == 2 || n < size) {
		*keep_out = keep;
		return RM_PASS_KEEP;
	}
	return RM_PASS_ALL;
}

static void run_remove(const struct sc_input *in, int kind, struct sc_run *r, struct cu_err *e)
{
	struct rm_run *m = &g_rm[kind - RUN_RM_WHOLE];
	struct hs_stream st;
	size_t off = 0, seg = 0;
	int stop = 0;

	memset(r->cls, CL_NONE, in->len);
	memset(m->gone, 0, in->len);
	memset(m->tracked, 0, in->len);
	memcpy(m->seen, in->stream, in->len);
	r->n_hits = r->n_premask = 0;
	r->end_phase = -1;
	m->n_out = m->pn = m->n_starts = 0;
	m->held = m->drop_from = in->len;
	/* sk_state's stream: zeroed, or a server socket's response stream
	 * (proxy.bpf.c:48-51, :210); see above for the untracked start. */
	hs_stream_init_dir(&st, !!(in->mode & SC_MODE_RESPONSE));
	if (untracked_scan(in))
		hs_stream_untrack(&st);
	while (off < in->len && !stop && !e->failed) {
		const size_t n = seg_len(in, kind, seg, in->len - off);

		/* The send's bytes join a corked message (tcp_bpf_sendmsg). */
		memcpy(m->pb + m->pn, in->stream + off, n);
		for (size_t i = 0; i < n; i++)
			m->ps[m->pn + i] = (uint32_t)(off + i);
		m->pn += n;
		off += n;
		seg++;
		while (m->pn && !stop && !e->failed) {
			size_t keep = 0;

			switch (rm_msg(in, kind, r, m, &st, &keep, e)) {
			case RM_PASS_ALL:
				rm_deliver(m, m->pn);
				break;
			case RM_PASS_KEEP:
				/* tcp_bpf_send_verdict: the apply count's bytes
				 * go, and the program runs on the rest at once. */
				rm_deliver(m, keep);
				break;
			case RM_CORK:
				stop = -1;
				break;
			default:
				/* Dropped: the send fails, and the driver stops
				 * (nothing after it reaches the origin). */
				m->drop_from = m->ps[0];
				stop = 1;
				break;
			}
		}
		if (stop < 0)
			stop = 0;
	}
	/* A corked line when the stream ends never reaches the origin. */
	if (!stop && m->pn)
		m->held = m->ps[0];
}

/*
 * The stand-in for what a remove-mode run @r did, in the shape the other
 * runs have (one byte per stream offset), so that check_run() and
 * compare_runs() judge it as they judge a split run: a delivered byte as it
 * went out; a removed byte, or one never delivered (the dropped send, the
 * held line at the end), as the unsplit run @a has it, but for the part of
 * the dropped send the scan masked in place line by line: as it left it
 * (the split runs' out[] holds a dropped segment as scanned, too). What makes that
 * stand-in honest is checked here first: the output is the stream in
 * order with whole lines taken out, each of them a line the unsplit run
 * masked (or, past where the unsplit run halted, a listed field: masking
 * can leave a line removal does not), in the part scanned in remove mode only; what was not delivered
 * is the dropped send and what follows, or the line held at the end.
 */
static void rm_fill(const struct sc_input *in, int kind, const struct sc_run *a, struct sc_run *r,
		    struct cu_err *e)
{
	const struct rm_run *m = &g_rm[kind - RUN_RM_WHOLE];
	const char *rn = run_name[kind];
	const size_t lost = m->drop_from < m->held ? m->drop_from : m->held;
	const struct lib_list *l = &g_list.lib[!!(in->mode & SC_MODE_RESPONSE)];
	static uint8_t sent[SC_MAX_STREAM];
	size_t k, i;
	int listed;

	/* What the scan made of the dropped send where the stream went line
	 * by line (masked in place), as the split mask-mode runs keep it. */
	for (i = 0; i < in->len; i++)
		r->out[i] = m->tracked[i] || i < m->drop_from ? a->out[i] : m->seen[i];
	memset(sent, 0, in->len);
	r->delivered = lost;
	r->stopped = m->drop_from;
	for (i = 0; i < m->n_out; i++) {
		if (i && m->src[i] <= m->src[i - 1])
			return failf(e, "%s run: output byte %zu comes from %u, after %u", rn, i,
				     m->src[i], m->src[i - 1]);
		r->out[m->src[i]] = m->out[i];
		sent[m->src[i]] = 1;
	}
	for (i = 0; i < in->len; i++) {
		if (sent[i] || m->gone[i] ? i >= lost : i < lost)
			return failf(e, "%s run: byte %zu %s (delivered up to %zu%s)", rn, i,
				     sent[i]	  ? "delivered"
				     : m->gone[i] ? "removed"
						  : "neither delivered nor removed",
				     lost, m->held < in->len ? ", a held line from there" : "");
		if (m->gone[i] && !m->tracked[i])
			return failf(e,
				     "%s run: byte %zu removed where the stream went line by line",
				     rn, i);
	}
	/* The line held at the end: one line's start, no line end. */
	for (i = m->held; i < in->len; i++)
		if (in->stream[i] == '\r' || in->stream[i] == '\n')
			return failf(
				e,
				"%s run: the line held at %zu at the end goes past its end at %zu",
				rn, m->held, i);
	/* Lines go whole, and only those the unsplit run masked. A line's
	 * rest in a send that was dropped never went out at all. */
	for (k = 0, listed = 0; k < g_n_lines_in; k++) {
		const struct lib_line *ln = &g_lines[k];
		const size_t to = ln->next < lost ? ln->next : lost;
		size_t n_gone = 0, ns, ne;

		for (i = ln->start; i < to; i++)
			n_gone += m->gone[i];
		if (!n_gone) {
			listed = 0;
			continue;
		}
		if (n_gone != to - ln->start)
			return failf(e, "%s run: line at %zu partly removed: \"%s\"", rn, ln->start,
				     show(in->stream + ln->start, ln->next - ln->start));
		/* Past where the unsplit run halted. Masking can leave what
		 * removal does not: a name-alone line masked stays a line
		 * that Python stops at, so a framing field after it is read
		 * two ways, and the mask-mode scan halts there; remove mode
		 * takes that line out and goes on. A line it removes there
		 * must be a field the liberal reader reads as one a rule
		 * masks or drops, or that field's continuation. */
		if (a->end_phase == HS_PH_HALT && a->cls[ln->start] == CL_NONE) {
			if (lib_is_cont(in->stream, ln) && listed) {
				lib_fill(r->out, ln->start, ln->end < to ? ln->end : to);
				continue;
			}
			if (!lib_field(in->stream, ln, &ns, &ne) ||
			    !lib_enforced(l, lib_match(l, in->stream + ns, ne - ns)))
				return failf(e,
					     "%s run: line at %zu removed past the unsplit run's "
					     "halt, and the liberal reader reads no listed field "
					     "there: \"%s\"",
					     rn, ln->start,
					     show(in->stream + ln->start, ln->end - ln->start));
			/* The stand-in shows it masked, as the unsplit run
			 * would have, had it gone on. */
			lib_fill(r->out, ln->start, ln->end < to ? ln->end : to);
			listed = 1;
			continue;
		}
		listed = 0;
		if (ln->end == ln->start || !lib_filler(a->out, ln->start, ln->end) ||
		    (!line_changed(a, in->stream, ln) &&
		     !lib_filler(in->stream, ln->start, ln->end)))
			return failf(e, "%s run: line at %zu removed, the unsplit run has \"%s\"",
				     rn, ln->start, show(a->out + ln->start, ln->end - ln->start));
	}
}

static struct lib_line g_olines[SC_MAX_LINES], g_orlines[2 * SC_MAX_LINES];

/*
 * What the origin received, read by the liberal reader: no line the scan
 * read as a field line (by the class of its first byte's source) holds a
 * field whose name a rule that masks or drops lists, filler aside. Lines
 * that lines taken out of the middle of a block leave next to each other
 * are read as they now are.
 */
static void rm_check_output(const struct sc_input *in, int kind, const struct sc_run *r,
			    struct cu_err *e)
{
	const struct rm_run *m = &g_rm[kind - RUN_RM_WHOLE];
	const struct lib_list *l = &g_list.lib[!!(in->mode & SC_MODE_RESPONSE)];
	static uint8_t ocls[SC_MAX_STREAM];
	size_t n, ns, ne;

	for (size_t i = 0; i < m->n_out; i++)
		ocls[i] = r->cls[m->src[i]];
	n = lib_lines(m->out, m->n_out, g_olines, SC_MAX_LINES);
	n = sc_run_lines(ocls, g_olines, n, g_orlines);
	for (size_t k = 0; k < n; k++) {
		const struct lib_line *ln = &g_orlines[k];

		if (ln->end <= ln->start || ocls[ln->start] != CL_FIELD ||
		    lib_filler(m->out, ln->start, ln->end))
			continue;
		if (lib_field(m->out, ln, &ns, &ne) &&
		    lib_enforced(l, lib_match(l, m->out + ns, ne - ns)))
			return failf(
				e,
				"%s run: the origin gets field \"%s\" (output line at %zu, from %u): \"%s\"",
				run_name[kind], show(m->out + ns, ne - ns), ln->start,
				m->src[ln->start], show(m->out + ln->start, ln->end - ln->start));
	}
}

/* A drop rule stops the connection: nothing of the line it matched, nor
 * anything after it, reaches the origin (but a name rewritten ahead). */
static void rm_check_drop(const struct sc_input *in, int kind, const struct sc_run *r,
			  struct cu_err *e)
{
	const struct rm_run *m = &g_rm[kind - RUN_RM_WHOLE];
	/* The run's lines: a request line that turned out to be none is read
	 * line by line from where that showed, its bytes before gone out. */
	const struct lib_line *lines = g_rlines[kind];
	const size_t n_lines = g_n_rlines[kind];
	size_t k = 0, h, i;

	if (r->end_phase != HS_PH_DROPPED || !r->n_hits)
		return;
	h = r->hits[r->n_hits - 1].off;
	while (k + 1 < n_lines && lines[k].next <= h)
		k++;
	if (m->drop_from == in->len)
		return failf(e, "%s run: dropped at %zu, but the driver went on", run_name[kind],
			     h);
	/* Where the stream went line by line, the name's bytes in earlier
	 * sends went out rewritten ahead (scan.h's split-name rule), masked;
	 * in remove mode the line is held whole. */
	for (i = m->n_out; i > 0 && m->src[i - 1] >= lines[k].start; i--)
		;
	if (i < m->n_out && (m->src[m->n_out - 1] >= h || !lib_filler(m->out, i, m->n_out) ||
			     m->tracked[m->src[m->n_out - 1]]))
		return failf(e, "%s run: dropped at %zu (line at %zu), but \"%s\" of it went out",
			     run_name[kind], h, lines[k].start, show(m->out + i, m->n_out - i));
}

/* SC_DEBUG=1: show what each run made of the stream (for triage). */
static void dump(const struct sc_input *in)
{
	const char *at = getenv("SC_DEBUG_AT");

	if (at) {
		/* SC_DEBUG_AT=FROM,TO: bytes and classes of each run there. */
		size_t lo = strtoul(at, NULL, 10),
		       hi = strchr(at, ',') ? strtoul(strchr(at, ',') + 1, NULL, 10) : lo + 64;

		hi = hi > in->len ? in->len : hi;
		for (int k = 0; k < RUN_KINDS; k++) {
			fprintf(stderr, "%-18s ", run_name[k]);
			for (size_t i = lo; i < hi; i++)
				fprintf(stderr, "%s", show(g_runs[k].out + i, 1));
			fprintf(stderr, "\n%-18s ", "");
			for (size_t i = lo; i < hi; i++)
				fprintf(stderr, "%-*c", (int)strlen(show(in->stream + i, 1)),
					"-RFB"[g_runs[k].cls[i]]);
			fputc('\n', stderr);
		}
		return;
	}
	fprintf(stderr, "mode %#x, list %zu bytes, %zu cuts, stream %zu bytes\n", in->mode,
		g_list.text_len, in->n_cuts, in->len);
	for (int k = 0; k < RUN_KINDS; k++) {
		const struct sc_run *r = &g_runs[k];

		fprintf(stderr,
			"%s: phase %d, delivered %zu, stopped %zu, %zu matches, %zu ahead\n  ",
			run_name[k], r->end_phase, r->delivered, r->stopped, r->n_hits,
			r->n_premask);
		for (size_t h = 0; h < r->n_hits; h++)
			fprintf(stderr, "match at %u: rule %u\n  ", r->hits[h].off,
				r->hits[h].rule);
		for (size_t h = 0; h < r->n_premask; h++)
			fprintf(stderr, "rewritten ahead up to %u\n  ", r->premask[h]);
		for (size_t i = 0; i < in->len; i++) {
			fputc(r->out[i] >= 0x20 && r->out[i] < 0x7f ? r->out[i] : '.', stderr);
			if (r->out[i] == '\n')
				fputs("\n  ", stderr);
		}
		fputs("\n  ", stderr);
		for (size_t i = 0; i < in->len; i++) {
			fputc("-RFB"[r->cls[i]], stderr);
			if (in->stream[i] == '\n')
				fputs("\n  ", stderr);
		}
		fputc('\n', stderr);
		if (is_remove(k)) {
			/* Remove mode: what the origin received, and where each
			 * program run began. */
			const struct rm_run *m = &g_rm[k - RUN_RM_WHOLE];

			fprintf(stderr,
				"  the origin got %zu bytes (held from %zu, dropped from %zu):\n  ",
				m->n_out, m->held, m->drop_from);
			for (size_t i = 0; i < m->n_out; i++) {
				fputc(m->out[i] >= 0x20 && m->out[i] < 0x7f ? m->out[i] : '.',
				      stderr);
				if (m->out[i] == '\n')
					fputs("\n  ", stderr);
			}
			fputs("\n  runs from:", stderr);
			for (size_t i = 0; i < m->n_starts; i++)
				fprintf(stderr, " %u", m->starts[i]);
			fputc('\n', stderr);
		}
	}
}

/*
 * The head lane (scan_lane.h) against the byte-wise scanner, at both
 * checksum parities: a request stream the lane takes as one whole head must
 * come out of it as out of one byte-wise scan of the same bytes, with the
 * same checksum difference, counts and matches (rule and name, in order),
 * and hs_lane_to_scan() must hand on the stream state the scan does; one
 * it does not take, untouched. Each side works on an exact-size copy, so
 * that ASan sees a read past the end.
 */
static void check_lane(const struct sc_input *in, struct cu_err *e)
{
	size_t n = in->len;
	__u8 *a, *b;

	if ((in->mode & SC_MODE_RESPONSE) || !n)
		return;
	a = malloc(n);
	b = malloc(n);
	if (!a || !b) {
		free(a);
		free(b);
		return failf(e, "out of memory");
	}
	for (__u32 par = 0; par < 2 && !e->failed; par++) {
		struct hs_stream st, fin, lfin;
		struct hs_scan s, ls;
		struct hs_lane L;
		__u32 nm;
		int k;

		memcpy(a, in->stream, n);
		memcpy(b, in->stream, n);
		if (!hs_lane_head(&L, &g_list.trie, a, a + n, 0, (__u32)n, par)) {
			if (memcmp(a, in->stream, n))
				failf(e, "lane: wrote to a head it did not take");
			continue;
		}
		hs_stream_init(&st);
		hs_scan_begin(&s, &st, 0, (__u32)n, par);
		nm = 0;
		while ((k = hs_scan_step(&s, &g_list.trie, b, b + n)) != HS_STEP_DONE) {
			if (k != HS_STEP_MATCH)
				continue;
			if (nm >= L.masked || L.rule[nm] != s.rule ||
			    L.mask_from[nm] != s.name_off || L.nlen[nm] != s.name_len) {
				failf(e,
				      "lane: match %u differs from the scanner's (rule %u, name %u+%u)",
				      nm, s.rule, s.name_off, s.name_len);
				break;
			}
			nm++;
		}
		if (e->failed)
			break;
		hs_scan_begin(&ls, &st, 0, (__u32)n, par);
		hs_lane_to_scan(&L, &ls);
		hs_scan_finish(&s, &fin);
		hs_scan_finish(&ls, &lfin);
		if (L.head_end != n || nm != L.masked)
			failf(e, "lane: took a head of %u bytes of %zu, %u matches; the scanner %u",
			      L.head_end, n, L.masked, nm);
		else if (memcmp(a, b, n))
			failf(e, "lane: its bytes differ from the scanner's (parity %u)", par);
		else if (hs_csum_update_acc(ls.csum_acc, 0x1234) !=
			 hs_csum_update_acc(s.csum_acc, 0x1234))
			failf(e, "lane: checksum difference %#llx, the scanner's %#llx",
			      (unsigned long long)ls.csum_acc, (unsigned long long)s.csum_acc);
		else if (memcmp(&fin, &lfin, sizeof(fin)) || ls.pos != s.pos ||
			 hs_scan_steady(&ls) != hs_scan_steady(&s))
			failf(e,
			      "lane: hands on phase %u nmsg %u conn %#x flags %#x req %#x; the "
			      "scanner phase %u nmsg %u conn %#x flags %#x req %#x",
			      lfin.phase, lfin.nmsg, lfin.conn, lfin.flags, lfin.req, fin.phase,
			      fin.nmsg, fin.conn, fin.flags, fin.req);
		else if (ls.requests != s.requests || ls.seen != s.seen || ls.masked != s.masked ||
			 ls.matched != s.matched)
			failf(e, "lane: %u requests %u seen %u masked; the scanner %u %u %u",
			      ls.requests, ls.seen, ls.masked, s.requests, s.seen, s.masked);
	}
	free(a);
	free(b);
}

int sc_check(const uint8_t *data, size_t size, char *why, size_t why_size)
{
	struct cu_err e = { .buf = why, .size = why_size };
	struct sc_input in;
	size_t n_lines;

	if (why_size)
		why[0] = 0;
	split_input(data, size, &in);
	load_list(&in);
	n_lines = lib_lines(in.stream, in.len, g_lines, SC_MAX_LINES);
	g_n_lines_in = n_lines;
	for (int k = 0; k <= RUN_UNTRACKED && !e.failed; k++) {
		if (k == RUN_UNTRACKED && !untracked_scan(&in))
			continue;
		run_stream(&in, k, &g_runs[k], &e);
		g_n_rlines[k] = sc_run_lines(g_runs[k].cls, g_lines, n_lines, g_rlines[k]);
		if (!e.failed)
			check_run(&in, k, &g_runs[k], &e);
		if (!e.failed)
			check_readings(&in, k, &g_runs[k], NULL, &e);
	}
	if (!e.failed) {
		run_stream(&in, RUN_LONG, &g_runs[RUN_LONG], &e);
		g_n_rlines[RUN_LONG] =
			sc_run_lines(g_runs[RUN_LONG].cls, g_lines, n_lines, g_rlines[RUN_LONG]);
		if (!e.failed)
			check_run(&in, RUN_LONG, &g_runs[RUN_LONG], &e);
	}
	for (int k = RUN_CUTS; k <= RUN_BYTES && !e.failed; k++)
		compare_runs(&in, RUN_WHOLE, k, n_lines, &e);
	if (!e.failed)
		compare_runs(&in, RUN_WHOLE, RUN_LONG, n_lines, &e);
	/* Proxy mode over the same sends: judged as a split run is, against
	 * the unsplit run with its masked lines taken out (rm_fill()). */
	for (int k = RUN_RM_WHOLE; k <= RUN_RM_BYTES && !e.failed; k++) {
		run_remove(&in, k, &g_runs[k], &e);
		if (!e.failed)
			rm_fill(&in, k, &g_runs[RUN_WHOLE], &g_runs[k], &e);
		g_n_rlines[k] = sc_run_lines(g_runs[k].cls, g_lines, n_lines, g_rlines[k]);
		if (!e.failed)
			rm_check_drop(&in, k, &g_runs[k], &e);
		if (!e.failed)
			rm_check_output(&in, k, &g_runs[k], &e);
		if (!e.failed)
			check_run(&in, k, &g_runs[k], &e);
		if (!e.failed)
			check_readings(&in, k, &g_runs[k], g_rm[k - RUN_RM_WHOLE].gone, &e);
		if (!e.failed)
			compare_runs(&in, RUN_WHOLE, k, n_lines, &e);
	}
	if (!e.failed)
		check_lane(&in, &e);
	if (getenv("SC_DEBUG"))
		dump(&in);
	return e.failed ? -1 : 0;
}
