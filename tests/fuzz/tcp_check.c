// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The TCP fuzzer's harness and oracle (see tcp_check.h for the input).
 *
 * Every segment goes through seg_drive.c (flow.h and scan.h as the
 * datapath drives them) and, when passed, through tcp_model.c (Linux's
 * receive path); the oracle judges what the application reads from each
 * connection the model opened, not what hdrstrip scanned:
 *
 * (1) Security. The application's stream of a connection is scanned again
 *     from a fresh state in one buffer (a connection open before the attach:
 *     line by line from its first byte, as nothing is known of where it
 *     was), ambiguous framing going on line by line. That scan must find
 *     no field the list matches (no match, no drop rule), and no line it
 *     reads as a field line (header or trailer block, or line by line) may
 *     hold a field the liberal reader (liberal.c: colon-less names too)
 *     matches unless the line has a masked shape. Excused: a line that
 *     scan read first as a request line (where a request must start no
 *     server reads a field; one that is none is checked line by line, but
 *     split over segments only once partly sent: scan.h, scan_check.c);
 *     and lines holding bytes of a segment the operator's policy passed
 *     unscanned (--on-error pass or --untracked pass), or starting right
 *     after them, counted as policy exposures (TC_STRICT=1 makes them
 *     failures).
 * (2) Benign streams. When no segment carries other bytes, none is dropped
 *     by the kernel after hdrstrip, there is no SYN, RST or bare FIN of the
 *     attacker's, no eviction, no segment without ACK or beyond the
 *     scanner's window, and the stream's own scan meets no drop rule or
 *     (with --on-error drop) ambiguous framing, then the application reads
 *     the whole stream on one connection, and it equals the stream scanned
 *     in order, cut where hdrstrip's pieces that moved the flow on began
 *     and ended
 *     (policy-passed bytes as sent); no segment is dropped as a mismatch;
 *     and that cut scan against the unsplit one passes the scanner
 *     fuzzer's oracle (scan_check.c), when its cuts fit that oracle's
 *     input (its run cut at every byte, and the matches it counts, are
 *     fuzz_scan's to judge).
 * (3) No crash or sanitizer error; every piece's scan ends within
 *     HS_STEPS_PER_BYTE * (n + 16) steps; headers are never written; the
 *     checksum update hdrstrip accumulates is the real difference.
 *
 * TC_DEBUG=1 traces every segment; TC_STATS=1 prints counters at exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdrstrip/flow.h>
#include <hdrstrip/scan.h>

#include "check_util.h"
#include "liberal.h"
#include "scan_check.h"
#include "seg_drive.h"
#include "tcp_check.h"
#include "tcp_model.h"

/* Bytes before the TCP header (Ethernet, IPv4). */
#define TC_L4 34
#define TC_MAX_SEGS 512
#define TC_MAX_COPIES 4096
#define TC_MAX_COMMITS 4096
#define TC_HDR 54

static const uint8_t default_cuts[] = { 37, 5, 120, 1, 64, 13 };

struct tc_input {
	uint8_t mode;
	uint32_t isn;
	const uint8_t *list;
	size_t list_len;
	const uint8_t *cuts;
	size_t n_cuts;
	const uint8_t *ops;
	size_t n_ops;
	const uint8_t *stream;
	size_t len;
};

struct tc_copy {
	int op; /* the operation that sent it: >= 0, -1 the first SYN, -2 a resend */
	uint8_t unscanned; /* passed unscanned by the operator's policy */
	uint8_t linewise; /* checked line by line on its own (sd_result.linewise) */
};

/* One transmission: a segment the client sends. */
struct tc_tx {
	uint32_t seq; /* as in the TCP header */
	uint8_t flags; /* HS_TCP_* */
	const uint8_t *payload;
	size_t len;
	size_t win; /* the scanner's window */
	int kdrop, bad_csum, no_coalesce, tfo, closed;
	unsigned int optw;
	int op;
};

static struct tc_run {
	const struct tc_input *in;
	const struct hs_trie *t;
	const struct lib_list *lib;
	const uint8_t *list_text;
	size_t list_len;
	struct sd_table tab;
	struct sd_cfg cfg;
	struct tcp_model m;
	uint32_t isn, base; /* the client's current connection */
	size_t seg_off[TC_MAX_SEGS], seg_len[TC_MAX_SEGS], n_segs;
	struct tc_copy copies[TC_MAX_COPIES];
	size_t n_copies;
	/* Stream offsets where pieces that moved the flow on began and ended. */
	uint32_t commits[TC_MAX_COMMITS];
	size_t n_commits;
	int hostile; /* not a benign input (see the top) */
	/* Where hdrstrip's flow began without a SYN (line by line). */
	uint32_t restarts[TC_MAX_COPIES];
	size_t n_restarts;
	unsigned long mismatch_drops;
	struct cu_err *e;
	int debug;
} g_run;

/* What all runs did, for TC_STATS=1. */
static struct {
	unsigned long inputs, benign, benign_checked, segs, passed, dropped, policy_passed,
		unscanned, kdropped, csum_dropped, rst_accepted, syn_ignored, conns, app_bytes,
		exposures, known_stalls, known_midline, scan_bytewise, drop_why[HS_WHY_MAX],
		drop_rule, sc_checked;
} g_stats;

static const char *const why_name[HS_WHY_MAX] = {
	[HS_WHY_NONE] = "none",
	[HS_WHY_MISMATCH] = "mismatch",
	[HS_WHY_UNVERIFIED] = "unverified",
	[HS_WHY_OUT_OF_ORDER] = "out-of-order",
	[HS_WHY_OVERSIZE] = "oversize",
	[HS_WHY_SYN_DATA] = "syn-data",
	[HS_WHY_NO_ACK] = "no-ack",
	[HS_WHY_UNTRACKED] = "untracked",
};

static const char *show(const uint8_t *p, size_t n)
{
	static char buf[4][240];
	static int k;

	return cu_escape(buf[k++ & 3], sizeof(buf[0]), p, n);
}

static void print_stats(void)
{
	fprintf(stderr,
		"fuzz_tcp: %lu inputs (%lu benign, %lu checked as benign), %lu segments: %lu passed "
		"(%lu by policy, %lu of them unscanned), %lu dropped by hdrstrip, %lu by the "
		"kernel after it, %lu for their checksum; %lu connections, %lu bytes read; RST "
		"accepted %lu, SYN ignored %lu; policy exposures %lu, known stalls %lu, benign mid-line "
		"restarts %lu; scan oracle on %lu cut runs (%lu byte-by-byte or match-count ones left to fuzz_scan)\n",
		g_stats.inputs, g_stats.benign, g_stats.benign_checked, g_stats.segs,
		g_stats.passed, g_stats.policy_passed, g_stats.unscanned, g_stats.dropped,
		g_stats.kdropped, g_stats.csum_dropped, g_stats.conns, g_stats.app_bytes,
		g_stats.rst_accepted, g_stats.syn_ignored, g_stats.exposures, g_stats.known_stalls,
		g_stats.known_midline, g_stats.sc_checked, g_stats.scan_bytewise);
	fprintf(stderr, "fuzz_tcp: drops: drop rule %lu", g_stats.drop_rule);
	for (int i = 1; i < HS_WHY_MAX; i++)
		fprintf(stderr, ", %s %lu", why_name[i], g_stats.drop_why[i]);
	fputc('\n', stderr);
}

/* ---- input ---- */

static void split_input(const uint8_t *data, size_t size, struct tc_input *in)
{
	const uint8_t *p = data, *end = data + size, *z;
	size_t n;

	memset(in, 0, sizeof(*in));
	in->stream = (const uint8_t *)"";
	if (p < end)
		in->mode = *p++;
	for (int i = 0; i < 4 && p < end; i++)
		in->isn |= (uint32_t)*p++ << (8 * i);
	if ((in->mode & TC_MODE_LIST) && p < end) {
		z = memchr(p, 0, end - p);
		in->list = p;
		in->list_len = z ? (size_t)(z - p) : (size_t)(end - p);
		p = z ? z + 1 : end;
	}
	if (p < end) {
		n = *p++;
		in->n_cuts = n < (size_t)(end - p) ? n : (size_t)(end - p);
		in->cuts = p;
		p += in->n_cuts;
	}
	if (p < end) {
		n = *p++;
		in->n_ops = n < (size_t)(end - p) / TC_OP_SIZE ? n : (size_t)(end - p) / TC_OP_SIZE;
		in->ops = p;
		p += in->n_ops * TC_OP_SIZE;
	}
	in->stream = p;
	in->len = (size_t)(end - p);
	if (in->len > TC_MAX_STREAM)
		in->len = TC_MAX_STREAM;
}

/* The original segments: the stream cut by the input's lengths. */
static void cut_stream(struct tc_run *r)
{
	const struct tc_input *in = r->in;
	size_t off = 0, i = 0, min = (in->len + TC_MAX_SEGS - 1) / TC_MAX_SEGS;

	r->n_segs = 0;
	while (off < in->len && r->n_segs < TC_MAX_SEGS) {
		size_t n = in->n_cuts ? in->cuts[i % in->n_cuts]
				      : default_cuts[i % sizeof(default_cuts)];

		if (!n)
			n = 256;
		if (n < min)
			n = min;
		if (n > in->len - off)
			n = in->len - off;
		r->seg_off[r->n_segs] = off;
		r->seg_len[r->n_segs++] = n;
		off += n;
		i++;
	}
}

/* ---- one transmission ---- */

static const char *flag_str(uint8_t f)
{
	static char b[4][16];
	static int k;
	char *s = b[k++ & 3];

	snprintf(s, sizeof(b[0]), "%s%s%s%s%s", f & HS_TCP_SYN ? "S" : "",
		 f & HS_TCP_FIN ? "F" : "", f & HS_TCP_RST ? "R" : "", f & HS_TCP_ACK ? "." : "",
		 f ? "" : "-");
	return s;
}

static void note_commits(struct tc_run *r, __u32 seq0, const struct sd_result *res)
{
	for (size_t i = 0; i < res->n_pieces; i++) {
		/* Where the piece began and where its buffer ended (a name cut
		 * there is rewritten ahead). */
		uint32_t o[2] = { seq0 + res->pieces[i].off - r->base,
				  seq0 + res->pieces[i].end - r->base };

		for (int k = 0; k < 2 && res->pieces[i].commit; k++)
			if (o[k] && o[k] < r->in->len && r->n_commits < TC_MAX_COMMITS)
				r->commits[r->n_commits++] = o[k];
	}
}

static void check_pieces(struct tc_run *r, const struct tc_tx *tx, const struct sd_result *res)
{
	for (size_t i = 0; i < res->n_pieces; i++) {
		const struct sd_piece *pc = &res->pieces[i];
		__u64 n = pc->end - pc->off, limit = HS_STEPS_PER_BYTE * (n + 16);

		if (pc->steps > limit)
			failf(r->e,
			      "segment at base%+d (op %d): piece [%u, %u) took %llu steps; the BPF "
			      "loop allows %llu (HS_STEPS_PER_BYTE a byte)",
			      (int)(tx->seq - r->base), tx->op, pc->off, pc->end,
			      (unsigned long long)pc->steps, (unsigned long long)limit);
	}
	if (res->incomplete)
		failf(r->e, "segment at base%+d (op %d): a piece's scan did not end",
		      (int)(tx->seq - r->base), tx->op);
}

static void transmit(struct tc_run *r, const struct tc_tx *tx)
{
	const size_t payload_off = TC_L4 + 20 + 4 * tx->optw, size = payload_off + tx->len;
	struct sd_result res;
	uint8_t *pkt;
	uint16_t tag, check, want, got;
	uint64_t before;
	int present;

	if (r->n_copies >= TC_MAX_COPIES)
		return;
	tag = (uint16_t)r->n_copies++;
	r->copies[tag].op = tx->op;
	r->copies[tag].unscanned = 0;
	r->copies[tag].linewise = 0;
	g_stats.segs++;
	if (tx->bad_csum) {
		/* The normaliser drops it, and so would the kernel. */
		g_stats.csum_dropped++;
		if (r->debug)
			fprintf(stderr,
				"  #%u op %d: seq base%+d len %zu %s: bad checksum, dropped\n", tag,
				tx->op, (int)(tx->seq - r->base), tx->len, flag_str(tx->flags));
		return;
	}
	pkt = malloc(size);
	if (!pkt)
		abort();
	for (size_t i = 0; i < payload_off; i++)
		pkt[i] = (uint8_t)(0xa5 ^ i);
	if (tx->len)
		memcpy(pkt + payload_off, tx->payload, tx->len);
	before = cu_sum16(pkt, TC_L4, size);

	present = r->tab.present;
	/* What the datapath's socket lookup finds at ingress (XDP, TC). */
	r->tab.conn_open =
		r->m.state == TM_ESTABLISHED || (r->m.state == TM_CLOSE_WAIT && !tx->closed);
	sd_segment(&r->tab, &r->cfg, r->t, pkt, size, payload_off, TC_L4, tx->seq, tx->len, tx->win,
		   tx->flags, &res);
	/* The flow begins (again) without state, line by line: where no
	 * state was known, at data where a SYN seen inside the connection
	 * would start one (the segment's start), and after a policy pass
	 * (restart_seq). */
	if ((res.ev & HS_EV_UNTRACKED) && (present || r->cfg.untracked == HS_UNTRACKED_SCAN) &&
	    r->n_restarts < TC_MAX_COPIES)
		r->restarts[r->n_restarts++] = tx->seq;
	if (res.reinit && r->n_restarts < TC_MAX_COPIES)
		r->restarts[r->n_restarts++] = res.restart_seq;

	for (size_t i = 0; i < payload_off; i++)
		if (pkt[i] != (uint8_t)(0xa5 ^ i))
			failf(r->e, "segment at base%+d (op %d): header byte %zu was written",
			      (int)(tx->seq - r->base), tx->op, i);
	check = (uint16_t)~cu_fold16(before);
	want = (uint16_t)~cu_fold16(cu_sum16(pkt, TC_L4, size));
	got = hs_csum_update_acc(res.csum_acc, check);
	if (res.verdict == SD_PASS && got != want &&
	    !((got == 0 || got == 0xffff) && (want == 0 || want == 0xffff)))
		failf(r->e, "segment at base%+d (op %d): checksum update %#06x, real %#06x",
		      (int)(tx->seq - r->base), tx->op, got, want);
	check_pieces(r, tx, &res);
	if (r->debug) {
		fprintf(stderr, "  #%u op %d: seq base%+d len %zu win %zu %s%s: %s why %s%s%s", tag,
			tx->op, (int)(tx->seq - r->base), tx->len, tx->win, flag_str(tx->flags),
			tx->kdrop ? " kdrop" : "", res.verdict == SD_PASS ? "PASS" : "DROP",
			why_name[res.why % HS_WHY_MAX], res.policy ? " (policy)" : "",
			res.drop_rule ? " (drop rule)" : "");
		for (size_t i = 0; i < res.n_pieces; i++)
			fprintf(stderr, " [%u,%u)%s ph%u", res.pieces[i].off, res.pieces[i].end,
				res.pieces[i].commit ? "c" : "", res.pieces[i].phase);
		if (r->tab.present)
			fprintf(stderr, " -> next base%+d ph%u%s",
				(int)(r->tab.f.next_seq - r->base), r->tab.f.cur.phase,
				(r->tab.f.cur.conn & HS_CN_UNTRACKED) ? " untracked" : "");
		else
			fprintf(stderr, " -> no flow");
		fputc('\n', stderr);
		if (res.why == HS_WHY_MISMATCH) {
			const struct hs_stream *x = &r->tab.w.expect, *g = &r->tab.got;

			fprintf(stderr,
				"      expected ph%u num %llu cl %llu fl %#x req %#x conn %#x vs %u "
				"%llu %llu %#x %#x %#x (col %u/%u vstate %u/%u tstate %u/%u)\n",
				x->phase, (unsigned long long)x->num, (unsigned long long)x->cl,
				x->flags, x->req, x->conn, g->phase, (unsigned long long)g->num,
				(unsigned long long)g->cl, g->flags, g->req, g->conn, x->col,
				g->col, x->vstate, g->vstate, x->tstate, g->tstate);
		}
	}
	if (res.verdict == SD_DROP) {
		g_stats.dropped++;
		if (res.drop_rule)
			g_stats.drop_rule++;
		else
			g_stats.drop_why[res.why % HS_WHY_MAX]++;
		if (res.why == HS_WHY_MISMATCH)
			r->mismatch_drops++;
		free(pkt);
		return;
	}
	g_stats.passed++;
	if (res.policy)
		g_stats.policy_passed++;
	if (res.unscanned_policy) {
		g_stats.unscanned++;
		r->copies[tag].unscanned = 1;
	}
	r->copies[tag].linewise = (uint8_t)res.linewise;
	note_commits(r, tx->flags & HS_TCP_SYN ? tx->seq + 1 : tx->seq, &res);
	if (tx->kdrop) {
		g_stats.kdropped++;
		free(pkt);
		return;
	}
	tm_segment(&r->m, tx->seq, tx->flags & (TM_FIN | TM_SYN | TM_RST | TM_ACK),
		   pkt + payload_off, tag, tx->len, tx->no_coalesce, tx->tfo, tx->closed);
	if (r->debug)
		fprintf(stderr,
			"      kernel: state %d rcv_nxt base%+d, %zu queued, app %zu bytes\n",
			r->m.state, (int)(r->m.rcv_nxt - r->base), r->m.n_ofo,
			r->m.n_conns ? r->m.conns[r->m.n_conns - 1].len : (size_t)0);
	free(pkt);
}

/* ---- the client ---- */

/* Stream bytes [off, off + len) into @buf (zeros past the end), other
 * bytes where the operation says so. */
static void fill_payload(const struct tc_run *r, const uint8_t *op, long off, size_t len,
			 uint8_t *buf)
{
	const uint8_t x = op[5] ? op[5] : 0x20, mask = op[6] ? op[6] : 0xff;

	for (size_t i = 0; i < len; i++) {
		long p = off + (long)i;

		buf[i] = p >= 0 && (size_t)p < r->in->len ? r->in->stream[p] : 0;
		if ((op[0] & TC_F_OTHER) && ((mask >> (i & 7)) & 1))
			buf[i] ^= x;
	}
}

/* Original segment @i, or its bytes [from, from + len) (a resend). */
static void send_part(struct tc_run *r, size_t i, size_t from, size_t len, int op)
{
	struct tc_tx tx = { 0 };
	uint8_t flags = HS_TCP_ACK;

	if ((r->in->mode & TC_MODE_FIN) && i + 1 == r->n_segs &&
	    from + len == r->seg_off[i] + r->seg_len[i])
		flags |= HS_TCP_FIN;
	tx.seq = r->base + (uint32_t)from;
	tx.flags = flags;
	tx.payload = r->in->stream + from;
	tx.len = len;
	tx.win = tx.len;
	tx.op = op;
	transmit(r, &tx);
}

static void send_original(struct tc_run *r, size_t i, int op)
{
	send_part(r, i, r->seg_off[i], r->seg_len[i], op);
}

static void do_op(struct tc_run *r, size_t k)
{
	const uint8_t *op = r->in->ops + k * TC_OP_SIZE;
	const int kind = op[0] & 7;
	const uint16_t off = (uint16_t)(op[2] | op[3] << 8);
	uint8_t buf[512];
	struct tc_tx tx = { 0 };
	long from = 0;
	int new_conn = 0;

	tx.op = (int)k;
	tx.kdrop = !!(op[0] & TC_F_KDROP);
	tx.no_coalesce = !!(op[0] & TC_F_NO_COALESCE);
	tx.bad_csum = op[1] & TC_F1_BAD_CSUM;
	tx.optw = (op[1] >> 4) % 11;
	tx.flags = HS_TCP_ACK;
	if (op[0] & (TC_F_NO_ACK | TC_F_KDROP | TC_F_OTHER | TC_F_FIN))
		r->hostile = 1;
	switch (kind) {
	case TC_OP_RANGE:
		if (!r->in->len)
			return;
		from = off % r->in->len;
		tx.len = op[4] ? op[4] : 1;
		if (tx.len > r->in->len - (size_t)from)
			tx.len = r->in->len - (size_t)from;
		tx.seq = r->base + (uint32_t)from;
		break;
	case TC_OP_SYN:
		r->hostile = 1;
		new_conn = op[1] & TC_F1_NEW_CONN;
		tx.seq = r->base - 1 + (uint32_t)(int16_t)off;
		tx.flags = HS_TCP_SYN;
		tx.len = op[4];
		from = new_conn ? 0 : (long)(int16_t)off;
		tx.tfo = !!(r->in->mode & TC_MODE_TFO_ACCEPT);
		tx.closed = new_conn;
		break;
	case TC_OP_RST:
		r->hostile = 1;
		tx.seq = r->base + (uint32_t)(int16_t)off;
		tx.flags = HS_TCP_RST | HS_TCP_ACK;
		tx.len = op[4];
		break;
	case TC_OP_FIN:
		r->hostile = 1;
		tx.seq = r->base + (uint32_t)(int16_t)off;
		tx.flags = HS_TCP_FIN | HS_TCP_ACK;
		break;
	case TC_OP_EVICT:
		r->hostile = 1;
		r->tab.present = 0;
		if (r->debug)
			fprintf(stderr, "  op %zu: the flow table loses the entry\n", k);
		return;
	case TC_OP_PRUNE:
		/* The kernel drops data hdrstrip passed: no longer benign. */
		r->hostile = 1;
		tm_prune(&r->m, op[4]);
		if (r->debug)
			fprintf(stderr, "  op %zu: the kernel prunes its out-of-order queue (%u)\n",
				k, op[4]);
		return;
	default:
		if (!r->n_segs)
			return;
		from = (long)r->seg_off[off % r->n_segs];
		tx.len = r->seg_len[off % r->n_segs];
		tx.seq = r->base + (uint32_t)from;
		if ((r->in->mode & TC_MODE_FIN) && off % r->n_segs == r->n_segs - 1)
			tx.flags |= HS_TCP_FIN;
		break;
	}
	if (op[0] & TC_F_FIN)
		tx.flags |= HS_TCP_FIN;
	if (op[0] & TC_F_NO_ACK)
		tx.flags &= (uint8_t)~HS_TCP_ACK;
	fill_payload(r, op, from, tx.len, buf);
	tx.payload = buf;
	tx.win = op[7] ? (size_t)op[7] - 1 : tx.len;
	if (tx.win < tx.len)
		r->hostile = 1;
	transmit(r, &tx);
	if (new_conn) {
		r->isn = tx.seq;
		r->base = tx.seq + 1;
	}
}

/* TCP's retransmission: the original segments the kernel lacks, in order. */
static void resend(struct tc_run *r)
{
	for (int round = 0; round < TC_ROUNDS; round++) {
		struct tm_app *a;
		int sent = 0;

		if (r->m.state != TM_ESTABLISHED || !r->m.n_conns)
			return;
		a = &r->m.conns[r->m.n_conns - 1];
		if (a->isn != r->isn)
			return;
		for (size_t i = 0; i < r->n_segs && r->m.state == TM_ESTABLISHED; i++) {
			int fin = (r->in->mode & TC_MODE_FIN) && i + 1 == r->n_segs;
			uint32_t hs, he, s0 = r->base + (uint32_t)r->seg_off[i];

			/* What the kernel lacks of it: a partial ACK trims its
			 * head, SACK leaves out what is queued (tcp_trim_head(),
			 * tcp_fragment() in tcp_sacktag). */
			if (!tm_hole(&r->m, s0, r->seg_len[i] + fin, &hs, &he))
				continue;
			if (he - s0 > r->seg_len[i])
				he = s0 + (uint32_t)r->seg_len[i]; /* the FIN alone */
			send_part(r, i, hs - r->base, he - hs, -2 - round);
			sent = 1;
		}
		if ((r->in->mode & TC_MODE_FIN) && !r->n_segs && r->m.state == TM_ESTABLISHED) {
			struct tc_tx tx = { .seq = r->base, .flags = HS_TCP_FIN | HS_TCP_ACK };

			tx.op = -2 - round;
			transmit(r, &tx);
			sent = 1;
		}
		if (!sent)
			return;
	}
}

/* ---- what the application reads ---- */

#define TC_MAX_HITS 1024

/* A scan of @n bytes of @src, cut at the ascending stream offsets @cuts,
 * from a fresh state or line by line (@untracked), with @opts. */
struct scan_out {
	uint8_t out[TM_MAX_APP];
	uint8_t cls[TM_MAX_APP];
	/* Read as part of a request line at some point (a line that turned
	 * out to be none is read again line by line: cls then says field). */
	uint8_t req[TM_MAX_APP];
	uint32_t hits[TC_MAX_HITS]; /* offsets of matches (the colon or line end) */
	size_t n_hits;
	int dropped; /* ended at a drop rule */
	int halted;
	__u8 end_phase;
	size_t scanned; /* bytes the scan went over before a terminal phase */
};

static void scan_cut(struct tc_run *r, const uint8_t *src, size_t n, const uint32_t *cuts,
		     size_t n_cuts, int untracked, __u8 opts, struct scan_out *o)
{
	struct hs_stream st;
	size_t off = 0, c = 0;

	memcpy(o->out, src, n);
	memset(o->cls, CL_NONE, n);
	memset(o->req, 0, n);
	o->n_hits = 0;
	o->dropped = o->halted = 0;
	o->scanned = n;
	hs_stream_init(&st);
	if (untracked)
		hs_stream_untrack(&st);
	o->end_phase = st.phase;
	while (off < n) {
		size_t end = n, len;
		uint8_t *buf;
		struct hs_scan s;
		__u64 steps = 0, limit;
		int done = 0, rc;

		while (c < n_cuts && cuts[c] <= off)
			c++;
		if (c < n_cuts && cuts[c] < n)
			end = cuts[c];
		len = end - off;
		limit = HS_STEPS_PER_BYTE * (len + 16);
		buf = malloc(TC_HDR + len);
		if (!buf)
			abort();
		memset(buf, 0, TC_HDR);
		memcpy(buf + TC_HDR, o->out + off, len);
		hs_scan_begin(&s, &st, TC_HDR, TC_HDR + len, TC_HDR - 20);
		s.opts = opts;
		while (!done && steps <= 64 * (len + 16)) {
			__u32 pos0 = s.pos;
			__u8 ph0 = s.st.phase;

			steps++;
			rc = hs_scan_step(&s, r->t, buf, buf + TC_HDR + len);
			for (__u32 p = pos0; p < s.pos && p < TC_HDR + len; p++) {
				o->cls[off + p - TC_HDR] = (uint8_t)sc_phase_class(ph0);
				o->req[off + p - TC_HDR] |= sc_phase_class(ph0) == CL_REQ;
			}
			if (rc == HS_STEP_MATCH) {
				/* At the name's colon or line end (scan_check.c). */
				if (o->n_hits < TC_MAX_HITS)
					o->hits[o->n_hits++] =
						(uint32_t)(off + s.name_off + s.name_len - TC_HDR);
				done = s.st.phase == HS_PH_DROPPED;
			} else if (rc != HS_STEP_MORE) {
				done = 1;
			}
		}
		if (steps > limit)
			failf(r->e,
			      "a scan of %zu bytes took %llu steps (HS_STEPS_PER_BYTE a byte)", len,
			      (unsigned long long)steps);
		memcpy(o->out + off, buf + TC_HDR, len);
		free(buf);
		o->end_phase = s.st.phase;
		if (s.st.phase >= HS_PH_NOT_HTTP) {
			o->dropped = s.st.phase == HS_PH_DROPPED;
			o->halted = s.st.phase == HS_PH_HALT;
			o->scanned = off + (s.pos > TC_HDR ? s.pos - TC_HDR : 0);
			return;
		}
		hs_scan_finish(&s, &st);
		off = end;
	}
}

static struct scan_out g_fresh, g_ref;
static struct lib_line g_lines[TM_MAX_APP + 1];
static struct lib_line g_rlines[2 * (TM_MAX_APP + 1)];

/* Does [start, end) of connection @a hold a byte the policy passed unscanned? */
static int tainted(const struct tc_run *r, const struct tm_app *a, size_t start, size_t end)
{
	for (size_t i = start; i < end && i < a->len; i++)
		if (r->copies[a->tag[i]].unscanned)
			return 1;
	return 0;
}

/* The operations whose copies the application read in [start, end). */
static const char *sources(const struct tc_run *r, const struct tm_app *a, size_t start, size_t end)
{
	static char b[256];
	size_t o = 0;
	int last = -100;

	b[0] = 0;
	for (size_t i = start; i < end && i < a->len && o + 24 < sizeof(b); i++) {
		int op = r->copies[a->tag[i]].op;

		if (op == last)
			continue;
		o += snprintf(b + o, sizeof(b) - o, "%s#%u(op %d)", o ? "," : "", a->tag[i], op);
		last = op;
	}
	return b;
}

/* Did hdrstrip's flow begin without state strictly inside [start, end) of
 * connection @a's stream? */
static int restart_inside(const struct tc_run *r, const struct tm_app *a, size_t start, size_t end)
{
	for (size_t i = 0; i < r->n_restarts; i++) {
		uint32_t o = r->restarts[i] - (a->isn + 1);

		if (o > start && o < end)
			return 1;
	}
	return 0;
}

/* Did hdrstrip's flow begin again without state at or before offset @i of
 * connection @a's stream (its start included: a segment ahead of a gap
 * passed by policy before any other leaves the flow line by line from
 * there)? What the flow carried over from the lines before (a masked field
 * that a continuation line follows), and the stream's framing, are then
 * unknown to it. */
static int restart_before(const struct tc_run *r, const struct tm_app *a, size_t i)
{
	for (size_t k = 0; k < r->n_restarts; k++) {
		uint32_t o = r->restarts[k] - (a->isn + 1);

		if (o <= i)
			return 1;
	}
	return 0;
}

static void expose(struct tc_run *r, size_t ci, const struct tm_app *a, const struct lib_line *ln,
		   const char *what)
{
	/* A line that holds such bytes, or starts right after them (where
	 * it starts is theirs to say: the copy scanned in order may go on
	 * there inside a line of its own). */
	if (tainted(r, a, ln->start ? ln->start - 1 : 0, ln->next)) {
		g_stats.exposures++;
		if (!getenv("TC_STRICT"))
			return;
	}
	failf(r->e,
	      "connection %zu: the application reads %s in the line at %zu: \"%s\" (bytes from "
	      "%s)",
	      ci, what, ln->start, show(a->data + ln->start, ln->end - ln->start),
	      sources(r, a, ln->start, ln->next));
}

static void check_app(struct tc_run *r, size_t ci)
{
	const struct tm_app *a = &r->m.conns[ci];
	struct scan_out *o = &g_fresh;
	size_t n_lines, n, h = 0;

	g_stats.conns++;
	g_stats.app_bytes += a->len;
	scan_cut(r, a->data, a->len, NULL, 0, a->preexisting, HS_OPT_CONFLICT_GO_ON, o);
	n_lines = lib_lines(a->data, a->len, g_lines, TM_MAX_APP + 1);
	/* Lines as the scan read them (a desynchronised request line goes
	 * on as field lines), as the scanner oracle splits them. */
	n = sc_run_lines(o->cls, g_lines, n_lines, g_rlines);
	for (size_t k = 0; k < n && !r->e->failed; k++) {
		const struct lib_line *ln = &g_rlines[k];
		size_t ns, ne;
		int hit = 0;

		while (h < o->n_hits && o->hits[h] < ln->next) {
			if (o->hits[h] >= ln->start)
				hit = 1;
			h++;
		}
		/* Where a request line must start, no server reads a field: the
		 * scanner checks such a line that is no request line (a first
		 * line, a desynchronised stream) line by line all the same, but
		 * cut into segments it is known only once sent in part (the
		 * scanner fuzzer's oracle excuses it likewise). */
		if (ln->end > ln->start && o->req[ln->start])
			continue;
		/* Framing the fresh scan found ambiguous sends it on line by
		 * line from the byte after (HS_OPT_CONFLICT_GO_ON), a "line"
		 * that starts where no line ends: no parser reads a field
		 * there. Where hdrstrip's flow had gone line by line before
		 * (begun again without state), it read that byte inside the
		 * real line, as every parser does. */
		if (hit && ln->start && !hs_is_eol(a->data[ln->start - 1]) &&
		    restart_before(r, a, ln->start)) {
			g_stats.known_midline++;
			continue;
		}
		if (hit) {
			expose(r, ci, a, ln, "a field the scanner matches");
			continue;
		}
		if (ln->end <= ln->start || o->cls[ln->start] != CL_FIELD)
			continue;
		if (!lib_filler(a->data, ln->start, ln->end) && lib_field(a->data, ln, &ns, &ne) &&
		    lib_match(r->lib, a->data + ns, ne - ns))
			expose(r, ci, a, ln, "an internal field (liberal reader)");
	}
}

/* ---- benign streams ---- */

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* The cut scan against the unsplit one, by the scanner fuzzer's oracle. */
static void check_cuts(struct tc_run *r, const uint32_t *cuts, size_t n_cuts, int untracked)
{
	static uint8_t buf[1 + 65536 + 1 + TC_MAX_STREAM + 1 + TC_MAX_STREAM];
	static uint8_t lens[TC_MAX_STREAM];
	size_t prev = 0, k = 0, n;
	char why[1024];
	uint8_t mode;

	for (size_t i = 0; i <= n_cuts; i++) {
		size_t c = i < n_cuts ? cuts[i] : r->in->len;

		if (c == prev)
			continue;
		if (c - prev > 255)
			return;
		lens[k++] = (uint8_t)(c - prev);
		prev = c;
	}
	if (!k || r->list_len > 65536)
		return;
	mode = (r->cfg.on_error_pass ? 0x08 : 0) | (untracked ? 0x01 : 0);
	n = sc_build(buf, sizeof(buf), mode, "", lens, k, r->in->stream, r->in->len);
	if (!n)
		return;
	/* sc_build() takes the list as a string: put the text in place. */
	memmove(buf + 1 + r->list_len, buf + 1, n - 1);
	memcpy(buf + 1, r->list_text, r->list_len);
	n += r->list_len;
	g_stats.sc_checked++;
	if (!sc_check(buf, n, why, sizeof(why)))
		return;
	if ((strstr(why, "byte-by-byte") || strstr(why, "report different matches")) &&
	    !getenv("TC_STRICT")) {
		/* The scanner oracle's cut at every byte, not one hdrstrip
		 * made, or only the matches it counts differ (the bytes are
		 * the same): fuzz_scan's to judge (counted). */
		g_stats.scan_bytewise++;
		return;
	}
	failf(r->e, "benign stream: hdrstrip's cuts fail the scanner oracle: %s", why);
	/* sc_check() may have loaded the same list again: it is the same. */
}

static void check_benign(struct tc_run *r)
{
	const struct tc_input *in = r->in;
	const int untracked = !!(in->mode & TC_MODE_PREEXISTING);
	const struct tm_app *a;
	struct scan_out *ref = &g_ref;
	size_t n_cuts = r->n_commits;
	struct hs_stream st;

	g_stats.benign++;
	qsort(r->commits, n_cuts, sizeof(r->commits[0]), cmp_u32);
	scan_cut(r, in->stream, in->len, r->commits, n_cuts, untracked,
		 r->cfg.on_error_pass ? HS_OPT_CONFLICT_GO_ON : 0, ref);
	/* A drop rule, or framing the policy drops, stops the stream by design. */
	if (ref->dropped || ref->halted)
		return;
	g_stats.benign_checked++;
	if (r->m.n_conns != 1 || r->m.conns[0].reset)
		return failf(r->e, "benign stream: %zu connections, the first %s", r->m.n_conns,
			     r->m.n_conns && r->m.conns[0].reset ? "reset" : "never opened");
	a = &r->m.conns[0];
	if (a->len != in->len && r->tab.present && !getenv("TC_STRICT") &&
	    hs_seq_lt(r->m.rcv_nxt, r->tab.f.next_seq) &&
	    !hs_flow_known(&r->tab.f, r->m.rcv_nxt, &st)) {
		/* Known (tests/fuzz/regress/tcp/open-*-stalls): the kernel
		 * lacks bytes before anything hdrstrip still knows a state at
		 * (a flow begun without state ahead of a gap, Fast Open data
		 * the server refused, resent after more segments than the
		 * flow keeps checkpoints for): every resend is dropped as
		 * unverified. */
		g_stats.known_stalls++;
		return;
	}
	if (a->len != in->len)
		return failf(r->e,
			     "benign stream stalled: the application read %zu of %zu bytes "
			     "(after %d rounds of resends)",
			     a->len, in->len, TC_ROUNDS);
	if ((in->mode & TC_MODE_FIN) && !a->fin)
		return failf(r->e, "benign stream: the client's FIN was not read");
	for (size_t i = 0; i < a->len; i++) {
		size_t ls = i, le = i;

		/* A copy checked line by line on its own masks as a connection
		 * without state does, from its first byte: not the stream's
		 * framing (its exposures are judged above all the same). */
		if (a->data[i] == ref->out[i] || r->copies[a->tag[i]].unscanned ||
		    r->copies[a->tag[i]].linewise)
			continue;
		while (ls && !hs_is_eol(a->data[ls - 1]))
			ls--;
		while (le < a->len && !hs_is_eol(a->data[le]))
			le++;
		if ((restart_inside(r, a, ls, le) || restart_before(r, a, i)) &&
		    !getenv("TC_STRICT")) {
			/* A flow begun again without state inside a line reads
			 * its rest as a line, and knows nothing of the lines
			 * before: a benign value may be masked, or a masked
			 * field's continuation line kept (a field that is
			 * hdrstrip's to mask never gets through: judged
			 * above). */
			g_stats.known_midline++;
			continue;
		}
		return failf(r->e,
			     "benign stream: byte %zu reads '%s', the stream scanned in order with "
			     "hdrstrip's cuts gives '%s' (line \"%s\"; from %s)",
			     i, show(a->data + i, 1), show(ref->out + i, 1),
			     show(a->data + (i > 20 ? i - 20 : 0), i > 20 ? 40 : i + 20),
			     sources(r, a, i, i + 1));
	}
	if (r->mismatch_drops)
		return failf(r->e,
			     "benign stream: %lu retransmissions of the same bytes dropped "
			     "as a mismatch",
			     r->mismatch_drops);
	check_cuts(r, r->commits, n_cuts, untracked);
}

/* ---- the run ---- */

int tc_check(const uint8_t *data, size_t size, char *why, size_t why_size)
{
	static int stats_on;
	struct cu_err e = { .buf = why, .size = why_size };
	struct tc_input in;
	struct tc_run *r = &g_run;
	int untracked;

	if (!stats_on) {
		stats_on = 1;
		if (getenv("TC_STATS"))
			atexit(print_stats);
	}
	if (why_size)
		why[0] = 0;
	g_stats.inputs++;
	split_input(data, size, &in);
	memset(r, 0, sizeof(*r));
	r->in = &in;
	r->e = &e;
	r->debug = getenv("TC_DEBUG") != NULL;
	r->t = sc_load(in.list, in.list_len, &r->lib, &r->list_text, &r->list_len);
	untracked = (in.mode >> TC_MODE_UNTRACKED_SHIFT) & 3;
	r->cfg.untracked = untracked == 1   ? HS_UNTRACKED_PASS
			   : untracked == 2 ? HS_UNTRACKED_DROP
					    : HS_UNTRACKED_SCAN;
	r->cfg.on_error_pass = in.mode & TC_MODE_ON_ERROR_PASS;
	r->isn = in.isn;
	r->base = in.isn + 1;
	cut_stream(r);
	if ((in.mode & TC_MODE_PREEXISTING) && r->cfg.untracked == HS_UNTRACKED_DROP)
		r->hostile = 1; /* every segment is dropped, by design */
	if (r->debug)
		fprintf(stderr, "mode %#x isn %#x, %zu bytes in %zu segments, %zu operations\n",
			in.mode, in.isn, in.len, r->n_segs, in.n_ops);

	tm_init(&r->m, in.mode & TC_MODE_PREEXISTING, r->base);
	if (!(in.mode & TC_MODE_PREEXISTING)) {
		struct tc_tx syn = { .seq = in.isn, .flags = HS_TCP_SYN, .op = -1 };

		if ((in.mode & TC_MODE_TFO) && r->n_segs) {
			syn.payload = in.stream;
			syn.len = r->seg_len[0];
			syn.tfo = !!(in.mode & TC_MODE_TFO_ACCEPT);
			if (r->n_segs == 1 && (in.mode & TC_MODE_FIN))
				syn.flags |= HS_TCP_FIN;
		}
		syn.win = syn.len;
		transmit(r, &syn);
	}
	if (in.n_ops) {
		for (size_t k = 0; k < in.n_ops && !e.failed; k++)
			do_op(r, k);
	} else {
		for (size_t i = 0; i < r->n_segs && !e.failed; i++)
			send_original(r, i, (int)i);
	}
	if (!e.failed)
		resend(r);
	g_stats.rst_accepted += r->m.rst_accepted;
	g_stats.syn_ignored += r->m.syn_ignored;
	if (r->m.overflow)
		r->hostile = 1; /* past the model's limits: only security is judged */
	for (size_t c = 0; c < r->m.n_conns && !e.failed; c++)
		check_app(r, c);
	if (!e.failed && !r->hostile)
		check_benign(r);
	if (r->debug)
		for (size_t c = 0; c < r->m.n_conns; c++)
			fprintf(stderr, "connection %zu (isn base%+d%s%s): \"%s\"\n", c,
				(int)(r->m.conns[c].isn - r->base),
				r->m.conns[c].fin ? ", FIN" : "",
				r->m.conns[c].reset ? ", reset" : "",
				show(r->m.conns[c].data,
				     r->m.conns[c].len < 200 ? r->m.conns[c].len : 200));
	tm_free(&r->m);
	return e.failed ? -1 : 0;
}
