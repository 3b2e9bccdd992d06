// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Linux's TCP receive path, as the fuzzer needs it: see tcp_model.h. */
#include <stdlib.h>
#include <string.h>

#include "tcp_model.h"

static int before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static int after(uint32_t a, uint32_t b)
{
	return before(b, a);
}

static uint32_t end_seq(const struct tm_seg *s)
{
	return s->end + (uint32_t)s->fin;
}

static void seg_free(struct tm_seg *s)
{
	free(s->data);
	free(s->tag);
	s->data = NULL;
	s->tag = NULL;
}

static void purge_ofo(struct tcp_model *m)
{
	for (size_t i = 0; i < m->n_ofo; i++)
		seg_free(&m->ofo[i]);
	m->n_ofo = 0;
}

static struct tm_app *cur(struct tcp_model *m)
{
	return &m->conns[m->n_conns - 1];
}

void tm_init(struct tcp_model *m, int preexisting, uint32_t rcv_nxt)
{
	memset(m, 0, sizeof(*m));
	if (!preexisting)
		return;
	m->state = TM_ESTABLISHED;
	m->rcv_nxt = rcv_nxt;
	m->n_conns = 1;
	m->conns[0].isn = rcv_nxt - 1;
	m->conns[0].preexisting = 1;
}

void tm_free(struct tcp_model *m)
{
	purge_ofo(m);
}

/* The connection is gone (RST, or reset for data after the FIN). */
static void tm_close(struct tcp_model *m, int reset)
{
	purge_ofo(m);
	if (m->n_conns)
		cur(m)->reset = reset;
	m->state = TM_LISTEN;
}

/* Bytes [from, to) of a segment at @seq go to the application. */
static void deliver(struct tcp_model *m, uint32_t seq, const uint8_t *data, const uint16_t *tag,
		    uint16_t one_tag, uint32_t from, uint32_t to)
{
	struct tm_app *a = cur(m);

	for (uint32_t i = from; i < to; i++) {
		if (a->len >= TM_MAX_APP) {
			m->overflow++;
			break;
		}
		a->data[a->len] = data[i];
		a->tag[a->len] = tag ? tag[i] : one_tag;
		a->len++;
	}
	(void)seq;
}

/* tcp_fin(): the client's FIN taken in order. */
static void take_fin(struct tcp_model *m)
{
	m->rcv_nxt++;
	m->state = TM_CLOSE_WAIT;
	cur(m)->fin = 1;
	purge_ofo(m);
}

/* tcp_ofo_queue(): what the queue holds at rcv_nxt goes to the socket. */
static void ofo_queue(struct tcp_model *m)
{
	while (m->n_ofo && !after(m->ofo[0].seq, m->rcv_nxt)) {
		struct tm_seg s = m->ofo[0];

		memmove(&m->ofo[0], &m->ofo[1], (m->n_ofo - 1) * sizeof(m->ofo[0]));
		m->n_ofo--;
		if (!after(end_seq(&s), m->rcv_nxt)) {
			seg_free(&s);
			continue;
		}
		if (after(s.end, m->rcv_nxt))
			deliver(m, s.seq, s.data, s.tag, 0, m->rcv_nxt - s.seq, s.end - s.seq);
		if (after(s.end, m->rcv_nxt))
			m->rcv_nxt = s.end;
		seg_free(&s);
		if (s.fin) {
			take_fin(m);
			break;
		}
	}
}

/* Append @x's bytes to queued segment @to (tcp_try_coalesce). */
static void coalesce(struct tm_seg *to, struct tm_seg *x)
{
	size_t a = to->end - to->seq, b = x->end - x->seq;
	uint8_t *d = realloc(to->data, a + b + 1);
	uint16_t *t = realloc(to->tag, (a + b + 1) * sizeof(*t));

	if (!d || !t)
		abort();
	memcpy(d + a, x->data, b);
	memcpy(t + a, x->tag, b * sizeof(*t));
	to->data = d;
	to->tag = t;
	to->end = x->end;
	to->fin |= x->fin;
	seg_free(x);
}

static int ofo_insert_at(struct tcp_model *m, size_t i, struct tm_seg *x)
{
	if (m->n_ofo >= TM_MAX_OFO) {
		/* The kernel would prune; the fuzzer's inputs stay far below. */
		m->overflow++;
		seg_free(x);
		return -1;
	}
	memmove(&m->ofo[i + 1], &m->ofo[i], (m->n_ofo - i) * sizeof(m->ofo[0]));
	m->ofo[i] = *x;
	m->n_ofo++;
	return 0;
}

/* tcp_data_queue_ofo(). Takes @x's buffers. */
static void ofo_add(struct tcp_model *m, struct tm_seg *x)
{
	struct tm_seg *last;
	size_t i, p;
	uint32_t xe = end_seq(x);

	m->ofo_queued++;
	if (!m->n_ofo) {
		(void)ofo_insert_at(m, 0, x);
		return;
	}
	/* The usual case: after the last queued segment. */
	last = &m->ofo[m->n_ofo - 1];
	if (!x->no_coalesce && x->seq == end_seq(last) && !last->fin) {
		coalesce(last, x);
		return;
	}
	if (!before(x->seq, end_seq(last))) {
		(void)ofo_insert_at(m, m->n_ofo, x);
		return;
	}
	/* The predecessor: the last queued segment starting at or before it. */
	for (p = m->n_ofo; p > 0 && after(m->ofo[p - 1].seq, x->seq); p--)
		;
	i = p; /* where x goes */
	if (p > 0) {
		struct tm_seg *q = &m->ofo[p - 1];

		if (before(x->seq, end_seq(q))) {
			if (!after(xe, end_seq(q))) {
				/* All its bytes are queued already. */
				m->ofo_dropped++;
				seg_free(x);
				return;
			}
			if (x->seq == q->seq) {
				/* Covers the queued one from its start: replaces it. */
				seg_free(q);
				*q = *x;
				i = p - 1;
				goto merge_right;
			}
			/* A partial overlap: inserted after it. */
		} else if (!x->no_coalesce && x->seq == end_seq(q) && !q->fin) {
			coalesce(q, x);
			return;
		}
	}
	if (ofo_insert_at(m, i, x))
		return;
merge_right:
	/* Remove the segments after it that it covers. */
	while (i + 1 < m->n_ofo) {
		struct tm_seg *n = &m->ofo[i + 1];

		if (!after(xe, n->seq) || before(xe, end_seq(n)))
			break;
		seg_free(n);
		memmove(n, n + 1, (m->n_ofo - i - 2) * sizeof(*n));
		m->n_ofo--;
		m->ofo_dropped++;
	}
}

/* The right edge of the highest SACK block. */
static int max_sack(const struct tcp_model *m, uint32_t *edge)
{
	if (!m->n_ofo)
		return 0;
	*edge = end_seq(&m->ofo[0]);
	for (size_t i = 1; i < m->n_ofo; i++)
		if (after(end_seq(&m->ofo[i]), *edge))
			*edge = end_seq(&m->ofo[i]);
	return 1;
}

static void new_conn(struct tcp_model *m, uint32_t isn, const uint8_t *data, uint16_t tag,
		     size_t len, int fin, int tfo)
{
	struct tm_app *a;

	if (m->n_conns >= TM_MAX_CONNS) {
		m->overflow++;
		return;
	}
	a = &m->conns[m->n_conns++];
	memset(a, 0, sizeof(*a));
	a->isn = isn;
	m->state = TM_ESTABLISHED;
	m->rcv_nxt = isn + 1;
	if (!tfo)
		return;
	/* tcp_fastopen_add_skb(): the SYN's data, and its FIN, are taken. */
	deliver(m, isn + 1, data, NULL, tag, 0, (uint32_t)len);
	m->rcv_nxt += (uint32_t)len;
	if (fin)
		take_fin(m);
}

void tm_segment(struct tcp_model *m, uint32_t seq, uint8_t flags, const uint8_t *data, uint16_t tag,
		size_t len, int no_coalesce, int tfo, int closed)
{
	const int fin = !!(flags & TM_FIN);
	uint32_t end = seq + (uint32_t)len, edge;
	struct tm_seg x;

	if (flags & TM_RST) {
		/* tcp_validate_incoming(), RFC 5961 3.2. */
		if (m->state == TM_LISTEN)
			return;
		if (seq == m->rcv_nxt || (m->state == TM_CLOSE_WAIT && seq == m->rcv_nxt - 1) ||
		    (max_sack(m, &edge) && seq == edge)) {
			m->rst_accepted++;
			tm_close(m, 1);
		} else {
			m->rst_ignored++;
		}
		return;
	}
	if (m->state == TM_CLOSE_WAIT && (flags & TM_SYN) && closed)
		tm_close(m, 0);
	if (m->state == TM_LISTEN) {
		/* The listener takes a SYN (without ACK); anything else gets a
		 * RST from it and delivers nothing. */
		if ((flags & TM_SYN) && !(flags & TM_ACK))
			new_conn(m, seq, data, tag, len, fin, tfo && len);
		return;
	}
	if (flags & TM_SYN) {
		/* RFC 5961 4.2: a challenge ACK, the segment dropped. */
		m->syn_ignored++;
		return;
	}
	if (!(flags & TM_ACK))
		return;
	if (m->state == TM_CLOSE_WAIT) {
		/* tcp_rcv_state_process(): nothing past rcv_nxt is queued;
		 * old data reaching past it resets. */
		if (before(seq, m->rcv_nxt) && after(end, m->rcv_nxt))
			tm_close(m, 1);
		return;
	}
	/* tcp_data_queue() */
	if (!len && !fin)
		return;
	if (!after(end + (uint32_t)fin, m->rcv_nxt)) {
		m->old_dropped++;
		return;
	}
	if (!before(seq, m->rcv_nxt + TM_WINDOW)) {
		/* Out of window (tcp_sequence(), tcp_data_queue()). */
		m->old_dropped++;
		return;
	}
	if (!after(seq, m->rcv_nxt)) {
		/* In order, or straddling rcv_nxt: the reader skips what it
		 * has (tcp_recvmsg's offset into the skb). */
		if (after(end, m->rcv_nxt)) {
			deliver(m, seq, data, NULL, tag, m->rcv_nxt - seq, (uint32_t)len);
			m->rcv_nxt = end;
		}
		if (fin) {
			take_fin(m);
			return;
		}
		ofo_queue(m);
		return;
	}
	x.seq = seq;
	x.end = end;
	x.fin = fin;
	x.no_coalesce = no_coalesce;
	x.data = malloc(len + 1);
	x.tag = malloc((len + 1) * sizeof(*x.tag));
	if (!x.data || !x.tag)
		abort();
	if (len)
		memcpy(x.data, data, len);
	for (size_t i = 0; i < len; i++)
		x.tag[i] = tag;
	ofo_add(m, &x);
}

void tm_prune(struct tcp_model *m, size_t n)
{
	/* From the highest sequence numbers down: the holes below may still
	 * be filled. */
	while (m->n_ofo && (!n || n--))
		seg_free(&m->ofo[--m->n_ofo]);
}

int tm_has(const struct tcp_model *m, uint32_t seq, size_t len)
{
	uint32_t p = seq, e = seq + (uint32_t)len;

	if (m->state == TM_LISTEN)
		return 0;
	if (!after(e, m->rcv_nxt))
		return 1;
	if (before(p, m->rcv_nxt))
		p = m->rcv_nxt;
	/* The queue is ordered by start: walk it over [p, e). */
	for (size_t i = 0; i < m->n_ofo && before(p, e); i++) {
		const struct tm_seg *s = &m->ofo[i];

		if (after(s->seq, p))
			return 0;
		if (after(s->end, p))
			p = s->end;
	}
	return !before(p, e);
}

int tm_hole(const struct tcp_model *m, uint32_t seq, size_t len, uint32_t *hs, uint32_t *he)
{
	uint32_t p = seq, e = seq + (uint32_t)len;

	if (m->state == TM_LISTEN || !len)
		return 0;
	if (before(p, m->rcv_nxt))
		p = m->rcv_nxt;
	for (size_t i = 0; i < m->n_ofo && before(p, e); i++) {
		const struct tm_seg *s = &m->ofo[i];

		if (after(s->seq, p)) {
			*hs = p;
			*he = before(s->seq, e) ? s->seq : e;
			return 1;
		}
		if (after(s->end, p))
			p = s->end;
	}
	if (!before(p, e))
		return 0;
	*hs = p;
	*he = e;
	return 1;
}
