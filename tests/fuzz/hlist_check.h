/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The list fuzzer's oracle: any text goes to the header-list parser
 * (core/hlist.c); a list it accepts must be the list a naive reading of
 * the text finds (names, actions, directions; no name of one kind twice
 * for one direction), compile (core/compile.c) into a block
 * hs_trie_validate accepts, and give, by hs_trie_lookup and by stepping
 * byte by byte, then through each direction's dir_rule[], the naive
 * matcher's verdict (tests/fuzz/liberal.h) on a list of that direction's
 * rules only, on every name of the list, its prefixes, extensions and case
 * and '_'/'-' variants; no state on the way to a name masked or dropped in
 * some direction may say that no such rule can match.
 *
 * Input: byte 0 picks the caller's fold-underscore option (bits 0-1: 1 off,
 * 2 on, else as the list says); the rest is the list text.
 */
#ifndef HDRSTRIP_FUZZ_HLIST_CHECK_H
#define HDRSTRIP_FUZZ_HLIST_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* 0 if every oracle holds; otherwise -1 with what failed in @why. */
int hl_check(const uint8_t *data, size_t size, char *why, size_t why_size);

#endif /* HDRSTRIP_FUZZ_HLIST_CHECK_H */
