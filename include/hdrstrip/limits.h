/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Every size limit of hdrstrip, in one place (documented in README.md). */
#ifndef HDRSTRIP_LIMITS_H
#define HDRSTRIP_LIMITS_H

/* Names in one header list. */
#define HS_MAX_NAMES 1024
/* Bytes in one header name (without a trailing '*' of a prefix rule). */
#define HS_MAX_NAME_LEN 128
/*
 * Path compression bounds the node count: every name adds at most one leaf
 * and splits at most one edge, so a list of N names needs at most 2N+1
 * nodes, whatever the names look like.
 */
#define HS_MAX_NODES (2 * HS_MAX_NAMES + 1)
/* Edge labels hold each byte of each name at most once. */
#define HS_MAX_LABEL_BYTES (HS_MAX_NAMES * HS_MAX_NAME_LEN)
/* Symbols of the folded token alphabet (RFC 9110 tchar has at most 51). */
#define HS_MAX_SYMS 64
/* TCP destination ports are a bitmap over the whole port space. */
#define HS_PORT_WORDS (65536 / 64)
/* Header-hit counters: one slot per name, stable across list updates. */
#define HS_MAX_HIT_SLOTS HS_MAX_NAMES

#endif /* HDRSTRIP_LIMITS_H */
