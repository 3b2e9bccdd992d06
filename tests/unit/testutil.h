/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the unit tests share:
 *  - a naive reference matcher, written from the header-list format alone
 *    (it reads list text itself and folds bytes itself), so that the parser
 *    and the compiler are checked against something that shares no code
 *    with them;
 *  - fixtures: list text parsed and compiled the way the CLI does it, with
 *    the reference built from the same text;
 *  - check_query(), which holds hs_trie_lookup(), byte-by-byte stepping
 *    split at every offset, and the reference to one verdict;
 *  - a seeded random generator and access to the corpus files.
 * Failures go through cmocka (fail_msg), with the query in the message.
 */
#ifndef HDRSTRIP_TESTUTIL_H
#define HDRSTRIP_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <hdrstrip/scan.h>

#include "compile.h"
#include "hlist.h"

/* The path list text is parsed under, so messages read "test.list:LINE: ...". */
#define TEST_LIST_PATH "test.list"

/* ---- reference matcher ---- */

struct ref_rule {
	char name[HS_MAX_NAME_LEN + 1]; /* folded by ref_fold(), without the '*' */
	size_t len;
	int prefix;
	int action; /* enum hs_action */
	int dirs; /* bit 1 << HS_DIR_* for each direction it applies to */
};

struct ref_list {
	struct ref_rule *rules;
	size_t n;
	int fold_underscore;
};

/* ASCII upper case to lower case; '_' to '-' when @fold_underscore. */
unsigned char ref_fold(unsigned char c, int fold_underscore);

/* Read valid list text the simple way: '#' comments at a line's start or
 * after white space, '@fold-underscore on|off', NAME [ACTION] [DIRECTION]. @fold
 * overrides the directive unless it is -1. Does not validate. Reuses
 * @r->rules if set (start from a zeroed struct). */
void ref_parse(struct ref_list *r, const char *text, int fold);
void ref_free(struct ref_list *r);

/* Rule index + 1 of the rule @q matches among those that apply to some
 * direction of @dirs (bits 1 << HS_DIR_*), or 0: an exact name equal to @q
 * wins, otherwise the longest prefix rule @q starts with; of two rules of
 * one name and kind (for other directions), the first in the list. */
__u32 ref_lookup_in(const struct ref_list *r, const __u8 *q, size_t len, int dirs);

/* The same among all rules: the rule the trie resolves @q to. */
__u32 ref_lookup(const struct ref_list *r, const __u8 *q, size_t len);

/* 1 when some rule's name starts with @q, i.e. a longer query may still
 * get a verdict other than @q's own. */
int ref_open(const struct ref_list *r, const __u8 *q, size_t len);

/* ---- fixtures ---- */

struct fixture {
	struct hs_list list;
	struct hs_trie *trie;
	/* A byte-for-byte copy of the block: stepping resumes on it, as the
	 * kernel resumes on its map value, so states must hold no pointers. */
	struct hs_trie *copy;
	struct hs_trie_stats stats;
	struct ref_list ref;
};

/*
 * Parse @text (NUL-terminated) as TEST_LIST_PATH with opts.fold_underscore
 * = @fold, compile it, and build the reference from the same text. Fails
 * the test if any step fails or the parser's names differ from the
 * reference's reading of the text.
 */
void fx_build(struct fixture *fx, const char *text, int fold);
/* The same on a fixture built before, reusing its blocks (ASan makes large
 * allocations slow, and the property test builds thousands). */
void fx_rebuild(struct fixture *fx, const char *text, int fold);
void fx_free(struct fixture *fx);

/* Rule index + 1 of the rule written as @orig in the list ("x-a*"); fails
 * the test if there is none. */
__u32 fx_rule(const struct fixture *fx, const char *orig);

/* check_query() on @q, then expect the rule written @rule_orig (NULL: no
 * match). */
void fx_expect(const struct fixture *fx, const char *q, const char *rule_orig);

/*
 * Look @q up every way there is and fail unless all agree:
 *  - hs_trie_lookup() on an exact-size copy of @q (ASan sees over-reads);
 *  - hs_trie_step() byte by byte from HS_TRIE_ROOT, the state saved after
 *    every offset k and the rest stepped from it on @copy;
 *  - the reference;
 *  - every final state (sticky or dead) is one the reference agrees can
 *    no longer change, and it does not change.
 * @ctx prefixes failure messages (a seed, a corpus name). Returns the
 * verdict (rule index + 1, or 0).
 */
__u32 check_query(const struct hs_trie *t, const struct hs_trie *copy, const struct ref_list *ref,
		  const __u8 *q, size_t len, const char *ctx);

/* @q as C source text, for messages (static buffer: one call per message). */
const char *show_query(const __u8 *q, size_t len);

/* ---- the scanner, segment by segment ---- */

/* What the request side published for a response stream (hs_scan.peer_*). */
struct seg_peer {
	int known;
	__u16 n;
	__u64 heads;
};

/* What scanning a text segment by segment gave. */
struct seg_scan {
	char out[4096]; /* the text as the scan left it (masked) */
	struct hs_stream st; /* the state after the last segment finished */
	__u8 phase; /* where the stream ended */
	unsigned int messages, matched, masked, observed, unframed, desync, conflicts;
	unsigned int h2c, bodies_unframed;
};

/*
 * Scan @text (NUL-terminated) from stream state @st in segments that end at
 * the first @n_cuts of @cuts (ascending, inside the text) and at its end, as
 * the datapath does: each segment an exact-size buffer of its own (ASan sees
 * over-reads), the state carried from one to the next; the first segment
 * with opts @first_opts, every one with @opts; a response stream's request
 * history @p (NULL: none). A terminal phase (not HTTP, dropped, halted) ends
 * the scan there.
 */
void seg_scan(const struct hs_trie *t, const char *text, struct hs_stream st, const size_t *cuts,
	      size_t n_cuts, __u8 first_opts, __u8 opts, const struct seg_peer *p,
	      struct seg_scan *r);

/* seg_scan() of @text as a stream of direction @dir (HS_DIR_*) from its
 * first byte, with @opts in every segment, cut at @cut (0: whole). */
void seg_scan_dir(const struct hs_trie *t, const char *text, size_t cut, __u32 dir, __u8 opts,
		  const struct seg_peer *p, struct seg_scan *r);

/*
 * @text scanned whole, then cut at every offset: the same bytes, counts and
 * end phase every time, or the test fails (a masked name split at a cut is
 * rewritten the same way; callers keep benign names clear of the rules'
 * first bytes, so that scan.h's split-name rule, which masks a benign name
 * cut where a rule of the stream's direction could still match it, never
 * applies). The whole scan's result is left in @r.
 */
void seg_scan_all_cuts(const struct hs_trie *t, const char *text, __u32 dir, __u8 opts,
		       const struct seg_peer *p, struct seg_scan *r);

/* How many times @needle occurs in @hay. */
unsigned int str_count(const char *hay, const char *needle);

/* ---- randomness ---- */

struct rng {
	__u64 s;
};

/* The run's seed: $HS_SEED if set, otherwise from the clock; printed so a
 * failing run can be repeated. */
__u64 test_seed(const char *what);
__u64 rng_next(struct rng *r);
/* Uniform in [0, n), n > 0. */
__u32 rng_below(struct rng *r, __u32 n);
/* @len bytes of @src with each ASCII letter's case chosen at random. */
void rng_mix_case(struct rng *r, char *dst, const char *src, size_t len);

/* ---- corpus ---- */

/* $CORPUS/@name (static buffer). */
const char *corpus_path(const char *name);

/* Whole corpus file ($CORPUS/@name) as a NUL-terminated string; fails the
 * test if it cannot be read. Free with free(). */
char *corpus_read(const char *name, size_t *len);

/* Next line of @text from *@pos: start and length, without the '\n'.
 * Returns 0 at the end. */
int next_line(const char *text, size_t *pos, const char **line, size_t *len);

#endif /* HDRSTRIP_TESTUTIL_H */
