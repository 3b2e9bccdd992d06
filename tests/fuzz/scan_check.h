/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The scanner fuzzer's oracle: one input drives the shared scanner
 * (include/hdrstrip/scan.h, trie.h) the way bpf/hdrstrip.bpf.c and origin
 * mode (bpf/recv.h) drive it, over the same stream cut four ways, and the
 * way bpf/proxy.bpf.c drives it (remove mode, one send a segment) over
 * three of those cuts, and checks what came out. The unit
 * tests replay the fuzzer's findings through the same function.
 *
 * Input layout:
 *   byte 0    mode: bit 0 the first segment belongs to a connection with no
 *             state (attached mid-connection); bits 1-2 --untracked (0 or 3
 *             scan, 1 pass, 2 drop); bit 3 --on-error pass; bits 4-6 extra
 *             bytes before the payload (0-7: the checksum's byte parity);
 *             bit 7 the stream is a connection's responses: its request
 *             history (scan.h, hs_scan.peer_*) known, with every third
 *             request a HEAD, when the stream's length is not a multiple
 *             of 5, else not known
 *   then      header list text, up to a NUL byte
 *   then      segment lengths (one byte each, 1-255, repeated), up to a NUL
 *   then      the request (or response) stream (at most SC_MAX_STREAM bytes
 *             are used)
 * With fewer than two NUL bytes after byte 0, all of it is the stream and a
 * built-in list and segmentation are used. A list the parser refuses is
 * replaced by the built-in one, so every input scans something.
 */
#ifndef HDRSTRIP_FUZZ_SCAN_CHECK_H
#define HDRSTRIP_FUZZ_SCAN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define SC_MAX_STREAM 8192

#define SC_MODE_FRESH 0x01
#define SC_MODE_UNTRACKED_SHIFT 1
#define SC_MODE_ON_ERROR_PASS 0x08
#define SC_MODE_RESPONSE 0x80

/* What the scanner read a byte as, by the phase it stepped over the byte
 * in: part of a request line, of a field line (header or trailer block, or
 * line by line), of a body or its chunk framing, or none of these (not
 * HTTP, dropped, halted). The TCP oracle classes bytes the same way. */
enum {
	CL_NONE = 0,
	CL_REQ,
	CL_FIELD,
	CL_BODY
};

int sc_phase_class(uint8_t phase);

struct lib_line;

/*
 * The lines @lines[0, n_lines) of a stream as a scan that classed its bytes
 * @cls read them: a line also starts where the scanner went over to field
 * lines in the middle of one (a desynchronised request line or chunk line,
 * checked line by line from there). Returns the count, in @out: a line may
 * be split at any of its bytes, so @out needs room for 2 * (length + 1).
 */
size_t sc_run_lines(const uint8_t *cls, const struct lib_line *lines, size_t n_lines,
		    struct lib_line *out);

/* 0 if every oracle holds; otherwise -1 with what failed in @why. */
int sc_check(const uint8_t *data, size_t size, char *why, size_t why_size);

/* Build an input from its parts (for seeds and tests); returns its size,
 * or 0 if @cap is too small. */
size_t sc_build(uint8_t *out, size_t cap, uint8_t mode, const char *list, const uint8_t *cuts,
		size_t n_cuts, const uint8_t *stream, size_t len);

struct hs_trie;
struct lib_list;

/* The compiled list of list text @text (NULL, or a list the parser
 * refuses: the built-in one), with its naive reading in *@lib and the text
 * actually compiled in *@used. Kept until the next call with other text. */
const struct hs_trie *sc_load(const uint8_t *text, size_t len, const struct lib_list **lib,
			      const uint8_t **used, size_t *used_len);

#endif /* HDRSTRIP_FUZZ_SCAN_CHECK_H */
