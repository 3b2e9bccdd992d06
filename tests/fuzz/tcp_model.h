/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What Linux's TCP receive path hands the application, for one 4-tuple, as
 * plain C: written from net/ipv4/tcp_input.c (tcp_validate_incoming,
 * tcp_data_queue, tcp_data_queue_ofo, tcp_ofo_queue, tcp_fin) and
 * tcp_minisocks.c/tcp_fastopen.c for the SYN. The TCP fuzzer feeds it what
 * hdrstrip passed and judges what the application reads.
 *
 * Modelled:
 *  - rcv_nxt; a segment that ends at or before it is a retransmission and
 *    is dropped; one that straddles it is queued whole and the reader skips
 *    the bytes it has (the first copy wins for in-order data);
 *  - the out-of-order queue, ordered by sequence number, as
 *    tcp_data_queue_ofo() keeps it: a segment after the last one is added
 *    (or coalesced onto it when it starts exactly at its end); otherwise,
 *    against the queued segment that starts at or before it (the
 *    predecessor): a segment it covers is dropped, one that starts with it
 *    and goes further replaces it, one that starts exactly at its end is
 *    coalesced onto it; a segment inserted (or replacing) removes the ones
 *    after it that it covers. tcp_ofo_queue() moves the queue to the
 *    socket in order once rcv_nxt reaches it, each segment adding only the
 *    bytes past rcv_nxt (so for overlapping queued data the lower sequence
 *    number wins);
 *  - coalescing can fail in the kernel (a cloned skb, frags full): the
 *    caller says per segment whether it may be coalesced;
 *  - RST (RFC 5961, tcp_validate_incoming): accepted only at exactly
 *    rcv_nxt, at rcv_nxt - 1 after a FIN, or at the right edge of the
 *    highest SACK block (the end of the out-of-order queue); otherwise a
 *    challenge ACK and nothing happens;
 *  - a SYN on an established connection is dropped (challenge ACK), data
 *    and all; a SYN to the listener opens a connection (rcv_nxt = ISN + 1),
 *    its data taken only when TCP Fast Open accepts it (else the client
 *    sends it again after the handshake); the handshake's ACK is taken as
 *    done (data segments carry ACK);
 *  - data without ACK is discarded (tcp_rcv_established);
 *  - a FIN taken in order ends the data: later data is not delivered
 *    (CLOSE_WAIT), and data that still reaches past rcv_nxt there resets
 *    the connection; the out-of-order queue is purged (tcp_fin());
 *  - a segment the kernel drops for reasons of its own (a bad ACK, PAWS,
 *    out of window, a checksum hdrstrip did not check) is the caller's to
 *    leave out.
 * The receive window is a constant TM_WINDOW. Not modelled: memory
 * pressure pruning, urgent data (the normaliser clears URG), the exact
 * rb-tree walk of tcp_data_queue_ofo() when coalesced segments already
 * cover others (the predecessor stands for the nodes on the walk's path),
 * and SACK blocks beyond the four Linux keeps (the queue's end stands for
 * the highest one).
 */
#ifndef HDRSTRIP_FUZZ_TCP_MODEL_H
#define HDRSTRIP_FUZZ_TCP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define TM_MAX_APP 8192 /* bytes one connection delivers, at most */
#define TM_MAX_OFO 128 /* segments in the out-of-order queue */
#define TM_MAX_CONNS 8 /* connections one run can open on the 4-tuple */
/* The receive window: data starting this far past rcv_nxt is dropped. */
#define TM_WINDOW 65535u

#define TM_FIN 0x01
#define TM_SYN 0x02
#define TM_RST 0x04
#define TM_ACK 0x10

enum tm_state {
	TM_LISTEN = 0, /* no connection on the 4-tuple: a SYN opens one */
	TM_ESTABLISHED,
	TM_CLOSE_WAIT, /* the client's FIN was taken */
};

/* What the application read from one connection. Each byte carries the tag
 * of the transmission it came from (the caller's). */
struct tm_app {
	uint8_t data[TM_MAX_APP];
	uint16_t tag[TM_MAX_APP];
	size_t len;
	uint32_t isn;
	int preexisting; /* open before the run (no SYN seen) */
	int fin; /* the client's FIN was read */
	int reset; /* ended by a RST (or data after the FIN) */
};

struct tm_seg {
	uint32_t seq, end; /* payload [seq, end); end_seq = end + fin */
	int fin;
	int no_coalesce;
	uint8_t *data;
	uint16_t *tag;
};

struct tcp_model {
	enum tm_state state;
	uint32_t rcv_nxt;
	struct tm_seg ofo[TM_MAX_OFO];
	size_t n_ofo;
	struct tm_app conns[TM_MAX_CONNS];
	size_t n_conns; /* conns[n_conns - 1] is the current one when not LISTEN */
	/* What happened, for the fuzzer's statistics. */
	unsigned long rst_accepted, rst_ignored, syn_ignored, ofo_queued, ofo_dropped, old_dropped,
		overflow;
};

/* A model with no connection, or with one established before the run whose
 * next expected byte is @rcv_nxt (@preexisting). */
void tm_init(struct tcp_model *m, int preexisting, uint32_t rcv_nxt);
void tm_free(struct tcp_model *m);

/*
 * A segment the kernel's TCP receives: sequence number @seq as in its
 * header, TCP @flags (TM_*), @len payload bytes @data tagged @tag.
 * @no_coalesce: the kernel cannot coalesce it with the queued one before
 * it; @tfo: a SYN's data is accepted (Fast Open cookie); @closed: a SYN
 * finds the old connection (in CLOSE_WAIT) closed by the server already.
 */
void tm_segment(struct tcp_model *m, uint32_t seq, uint8_t flags, const uint8_t *data, uint16_t tag,
		size_t len, int no_coalesce, int tfo, int closed);

/* Memory pressure (tcp_prune_ofo_queue()): the @n highest queued segments
 * are dropped (0: all of them). */
void tm_prune(struct tcp_model *m, size_t n);

/* Is [seq, seq + len) all received (in order or queued)? */
int tm_has(const struct tcp_model *m, uint32_t seq, size_t len);

/* The first range of [seq, seq + len) not received (what a sender with
 * SACK and partial ACKs resends of it): 1 with [*hs, *he), or 0. */
int tm_hole(const struct tcp_model *m, uint32_t seq, size_t len, uint32_t *hs, uint32_t *he);

#endif /* HDRSTRIP_FUZZ_TCP_MODEL_H */
