/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The TCP fuzzer's harness and oracle (fuzz_tcp): one input is a client's
 * request stream sent to one 4-tuple as a sequence of TCP segments with
 * overlaps, retransmissions (of the same or other bytes), reordering, gaps,
 * SYNs (with data: TCP Fast Open), RSTs and FINs anywhere, segments the
 * normaliser drops for their checksum and segments the receiving kernel
 * drops after hdrstrip passed them. Each segment goes through the datapath's
 * shared code as hdrstrip.bpf.c drives it (seg_drive.c), what it passes
 * through a model of Linux's receive path (tcp_model.c), and the oracle
 * judges what the application reads (tcp_check.c says what it guarantees).
 * The unit tests replay the fuzzer's findings through the same function.
 *
 * Input layout (little-endian; a short input leaves the rest at zero):
 *   byte 0     mode:
 *                bit 0    --on-error pass (else drop)
 *                bits 1-2 --untracked: 0 or 3 scan, 1 pass, 2 drop
 *                bit 3    the connection was open before the attach: no SYN,
 *                         the kernel has it established, hdrstrip no flow
 *                bit 4    the client's FIN follows its last byte
 *                bit 5    the first SYN carries segment 0 (TCP Fast Open)
 *                bit 6    ... and the server takes it (a valid cookie)
 *                bit 7    a header list follows (else the built-in one)
 *   bytes 1-4  the client's ISN
 *   [list]     header list text up to a NUL byte (mode bit 7)
 *   byte       n_cuts, then n_cuts segment lengths (0 is 256): the stream is
 *              cut into "original segments" by them, repeated (none: a
 *              built-in cutting)
 *   byte       n_ops, then n_ops operations of TC_OP_SIZE bytes (none: every
 *              original segment once, in order)
 *   the rest   the request stream (at most TC_MAX_STREAM bytes are used)
 *
 * An operation is 8 bytes:
 *   b0 bits 0-2  kind: 0, 6 original segment number OFF (mod the count);
 *                1 stream bytes [OFF, OFF + LEN) (OFF mod the length, LEN 0
 *                is 1); 2 SYN at BASE - 1 + (int16)OFF carrying LEN bytes;
 *                3 RST at BASE + (int16)OFF (LEN bytes of payload); 4 bare
 *                FIN at BASE + (int16)OFF; 5 the flow table loses the
 *                connection's entry (LRU eviction); 7 the kernel prunes the
 *                LEN highest segments of its out-of-order queue (0: all)
 *                under memory pressure
 *      bit 3     FIN on the segment
 *      bit 4     no ACK
 *      bit 5     the kernel drops it after hdrstrip passed it (bad ACK, PAWS,
 *                out of window, a checksum hdrstrip did not check)
 *      bit 6     other bytes: byte i is XORed with b5 (0: 0x20) where bit
 *                (i & 7) of b6 is set (b6 0: every byte)
 *      bit 7     the kernel cannot coalesce it with a queued segment
 *   b1 bit 0     a checksum the normaliser sees as bad: dropped before
 *                flow.h (and by the kernel): nothing happens
 *      bit 1     SYN: a new connection for the client (its stream starts
 *                again after this ISN); the server closed the old one if it
 *                had read its FIN
 *      bits 4-7  TCP option words (0-10: the payload's offset and parity)
 *   b2-b3        OFF
 *   b4           LEN
 *   b5, b6       the XOR value and positions (bit 6 of b0)
 *   b7           the scanner's window: 0 the whole payload, else b7 - 1
 *                bytes (a smaller window tests oversize segments)
 * BASE is the client's current ISN + 1. After the operations the client
 * resends, in order, what the kernel lacks of each original segment (TCP's
 * retransmission: the first hole in it, its head trimmed by a partial ACK,
 * SACKed bytes left out), TC_ROUNDS times, as long as its connection is up.
 */
#ifndef HDRSTRIP_FUZZ_TCP_CHECK_H
#define HDRSTRIP_FUZZ_TCP_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define TC_MAX_STREAM 4096
#define TC_OP_SIZE 8
#define TC_ROUNDS 3

#define TC_MODE_ON_ERROR_PASS 0x01
#define TC_MODE_UNTRACKED_SHIFT 1
#define TC_MODE_PREEXISTING 0x08
#define TC_MODE_FIN 0x10
#define TC_MODE_TFO 0x20
#define TC_MODE_TFO_ACCEPT 0x40
#define TC_MODE_LIST 0x80

enum tc_kind {
	TC_OP_SEG = 0,
	TC_OP_RANGE = 1,
	TC_OP_SYN = 2,
	TC_OP_RST = 3,
	TC_OP_FIN = 4,
	TC_OP_EVICT = 5,
	TC_OP_PRUNE = 7,
};

#define TC_F_FIN 0x08
#define TC_F_NO_ACK 0x10
#define TC_F_KDROP 0x20
#define TC_F_OTHER 0x40
#define TC_F_NO_COALESCE 0x80
#define TC_F1_BAD_CSUM 0x01
#define TC_F1_NEW_CONN 0x02

/* 0 if every oracle holds; otherwise -1 with what failed in @why. */
int tc_check(const uint8_t *data, size_t size, char *why, size_t why_size);

#endif /* HDRSTRIP_FUZZ_TCP_CHECK_H */
