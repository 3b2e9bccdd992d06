/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the fuzzers' oracles (hlist_check.c, scan_check.c, tcp_check.c) and
 * their libFuzzer entry points share: how a failure is recorded, how bytes
 * are shown in it, and the one's complement sum both packet oracles check
 * the scanner's checksum update against. Written once here so that the
 * oracles cannot drift apart in how they report or what they sum.
 */
#ifndef HDRSTRIP_FUZZ_CHECK_UTIL_H
#define HDRSTRIP_FUZZ_CHECK_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Where an oracle writes what failed: only the first failure is kept (the
 * later ones are often its consequences), but all are counted, so that a
 * check can stop as soon as @failed is set. */
struct cu_err {
	char *buf;
	size_t size;
	int failed;
};

/* Record a failure in @e, printf-style (a short name: every check calls it). */
__attribute__((format(printf, 2, 3))) void failf(struct cu_err *e, const char *fmt, ...);

/* @p[0, n) as C-escaped text in @buf (of @size bytes), cut short to fit;
 * returns @buf. Each oracle keeps its own ring of such buffers, sized for
 * its messages. */
const char *cu_escape(char *buf, size_t size, const uint8_t *p, size_t n);

/* 16-bit one's complement sum of @p[from, to), words in memory order, not
 * folded yet: cu_fold16() folds it. */
uint64_t cu_sum16(const uint8_t *p, size_t from, size_t to);
uint16_t cu_fold16(uint64_t s);

/* A libFuzzer entry point's body: run the oracle @check (hl_check,
 * sc_check, tc_check) on the input and abort with what failed, prefixed by
 * the fuzzer's @name, so that libFuzzer reports the input and keeps it. */
int cu_fuzz_one(const char *name, int (*check)(const uint8_t *, size_t, char *, size_t),
		const uint8_t *data, size_t size);

#endif /* HDRSTRIP_FUZZ_CHECK_UTIL_H */
