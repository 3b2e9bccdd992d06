// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Shared test helpers: see testutil.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

/* ---- reference matcher ---- */

unsigned char ref_fold(unsigned char c, int fold_underscore)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 'a';
	if (c == '_' && fold_underscore)
		return '-';
	return c;
}

static int ref_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* One line, comment and surrounding white space removed. */
static void ref_line(struct ref_list *r, const char *s, size_t len, int *fold)
{
	size_t i, nlen = 0;
	const char *w2;

	for (i = 0; i < len; i++)
		if (s[i] == '#' && (i == 0 || ref_space(s[i - 1])))
			break;
	len = i;
	while (len && ref_space(s[len - 1]))
		len--;
	while (len && ref_space(*s)) {
		s++;
		len--;
	}
	if (!len)
		return;
	if (*s == '@') {
		/* Valid lists only: "@fold-underscore on" or "... off". */
		*fold = !(len >= 3 && !strncmp(s + len - 3, "off", 3));
		return;
	}
	while (nlen < len && !ref_space(s[nlen]))
		nlen++;
	if (nlen > HS_MAX_NAME_LEN + 1)
		fail_msg("reference: line \"%.*s\" is not a valid name", (int)len, s);
	struct ref_rule *rule = &r->rules[r->n++];

	memset(rule, 0, sizeof(*rule));
	rule->prefix = nlen > 1 && s[nlen - 1] == '*';
	rule->len = nlen - rule->prefix;
	memcpy(rule->name, s, rule->len);
	rule->action = HS_ACT_MASK;
	rule->dirs = 1 << HS_DIR_REQUEST;
	/* Valid lists only: [ACTION] [DIRECTION], each known by its word. */
	for (w2 = s + nlen; w2 < s + len;) {
		size_t wl = 0;

		while (w2 < s + len && ref_space(*w2))
			w2++;
		while (w2 + wl < s + len && !ref_space(w2[wl]))
			wl++;
		if (wl == 4 && !strncasecmp(w2, "drop", 4))
			rule->action = HS_ACT_DROP;
		else if (wl == 7 && !strncasecmp(w2, "observe", 7))
			rule->action = HS_ACT_OBSERVE;
		else if (wl == 8 && !strncasecmp(w2, "response", 8))
			rule->dirs = 1 << HS_DIR_RESPONSE;
		else if (wl == 4 && !strncasecmp(w2, "both", 4))
			rule->dirs = 1 << HS_DIR_REQUEST | 1 << HS_DIR_RESPONSE;
		w2 += wl;
	}
}

void ref_parse(struct ref_list *r, const char *text, int fold)
{
	size_t pos = 0, len;
	const char *line;
	int list_fold = 1;

	r->n = 0;
	if (!r->rules)
		r->rules = calloc(HS_MAX_NAMES + 1, sizeof(*r->rules));
	assert_non_null(r->rules);
	while (next_line(text, &pos, &line, &len)) {
		if (r->n > HS_MAX_NAMES)
			fail_msg("reference: more than %d names", HS_MAX_NAMES);
		ref_line(r, line, len, &list_fold);
	}
	r->fold_underscore = fold >= 0 ? fold : list_fold;
	for (size_t i = 0; i < r->n; i++)
		for (size_t j = 0; j < r->rules[i].len; j++)
			r->rules[i].name[j] = ref_fold(r->rules[i].name[j], r->fold_underscore);
}

void ref_free(struct ref_list *r)
{
	free(r->rules);
	r->rules = NULL;
	r->n = 0;
}

/* Does folded @q start with rule @rr's name (its first @n bytes)? */
static int ref_starts(const struct ref_list *r, const struct ref_rule *rr, const __u8 *q, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ref_fold(q[i], r->fold_underscore) != (unsigned char)rr->name[i])
			return 0;
	return 1;
}

__u32 ref_lookup_in(const struct ref_list *r, const __u8 *q, size_t len, int dirs)
{
	__u32 best = 0;
	size_t best_len = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct ref_rule *rr = &r->rules[i];

		if ((rr->dirs & dirs) && !rr->prefix && rr->len == len && ref_starts(r, rr, q, len))
			return i + 1;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct ref_rule *rr = &r->rules[i];

		if ((rr->dirs & dirs) && rr->prefix && rr->len <= len && rr->len > best_len &&
		    ref_starts(r, rr, q, rr->len)) {
			best = i + 1;
			best_len = rr->len;
		}
	}
	return best;
}

__u32 ref_lookup(const struct ref_list *r, const __u8 *q, size_t len)
{
	return ref_lookup_in(r, q, len, 1 << HS_DIR_REQUEST | 1 << HS_DIR_RESPONSE);
}

int ref_open(const struct ref_list *r, const __u8 *q, size_t len)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct ref_rule *rr = &r->rules[i];

		if (rr->len >= len) {
			size_t j;

			for (j = 0; j < len; j++)
				if (ref_fold(q[j], r->fold_underscore) !=
				    (unsigned char)rr->name[j])
					break;
			if (j == len)
				return 1;
		}
	}
	return 0;
}

/* ---- fixtures ---- */

void fx_build(struct fixture *fx, const char *text, int fold)
{
	memset(fx, 0, sizeof(*fx));
	fx_rebuild(fx, text, fold);
}

void fx_rebuild(struct fixture *fx, const char *text, int fold)
{
	struct hs_list_opts o;
	struct hs_err err;
	int r;

	hs_list_free(&fx->list);
	hs_list_opts_default(&o);
	o.fold_underscore = fold;
	r = hs_list_parse(text, strlen(text), TEST_LIST_PATH, &o, &fx->list, &err);
	if (r)
		fail_msg("hs_list_parse: %d: %s", r, err.msg);
	if (!fx->trie)
		fx->trie = malloc(sizeof(*fx->trie));
	if (!fx->copy)
		fx->copy = malloc(sizeof(*fx->copy));
	assert_non_null(fx->trie);
	assert_non_null(fx->copy);
	/* Garbage in the block must not matter: hs_compile() zeroes it. */
	memset(fx->trie, 0xa5, sizeof(*fx->trie));
	r = hs_compile(&fx->list, fx->trie, &fx->stats, &err);
	if (r)
		fail_msg("hs_compile: %d: %s", r, err.msg);
	memcpy(fx->copy, fx->trie, sizeof(*fx->copy));

	ref_parse(&fx->ref, text, fold);
	assert_int_equal(fx->list.n, fx->ref.n);
	assert_int_equal(fx->list.fold_underscore, fx->ref.fold_underscore);
	for (size_t i = 0; i < fx->ref.n; i++) {
		const struct hs_name *nm = &fx->list.names[i];
		const struct ref_rule *rr = &fx->ref.rules[i];

		if (nm->len != rr->len || memcmp(nm->name, rr->name, rr->len) ||
		    nm->name[nm->len] || nm->prefix != rr->prefix || nm->action != rr->action ||
		    nm->directions != rr->dirs)
			fail_msg(
				"name %zu: parser has \"%s\"%s (%u bytes, action %u, directions %u), the reference \"%.*s\"%s (action %d, directions %d)",
				i, nm->name, nm->prefix ? "*" : "", nm->len, nm->action,
				nm->directions, (int)rr->len, rr->name, rr->prefix ? "*" : "",
				rr->action, rr->dirs);
	}
}

void fx_free(struct fixture *fx)
{
	hs_list_free(&fx->list);
	ref_free(&fx->ref);
	free(fx->trie);
	free(fx->copy);
	fx->trie = fx->copy = NULL;
}

__u32 fx_rule(const struct fixture *fx, const char *orig)
{
	for (size_t i = 0; i < fx->list.n; i++)
		if (!strcmp(fx->list.names[i].orig, orig))
			return i + 1;
	fail_msg("no rule written \"%s\" in the list", orig);
	return 0;
}

static const char *rule_name(const struct fixture *fx, __u32 v)
{
	return v ? fx->list.names[v - 1].orig : "(no match)";
}

void fx_expect(const struct fixture *fx, const char *q, const char *rule_orig)
{
	__u32 want = rule_orig ? fx_rule(fx, rule_orig) : 0;
	__u32 got =
		check_query(fx->trie, fx->copy, &fx->ref, (const __u8 *)q, strlen(q), "fx_expect");

	if (got != want)
		fail_msg("\"%s\" matches %s; expected %s", q, rule_name(fx, got),
			 rule_name(fx, want));
}

const char *show_query(const __u8 *q, size_t len)
{
	static char buf[4 * 256 + 8];
	size_t o = 0;

	buf[o++] = '"';
	for (size_t i = 0; i < len && i < 256; i++) {
		if (q[i] >= 0x20 && q[i] < 0x7f && q[i] != '"' && q[i] != '\\')
			buf[o++] = q[i];
		else
			o += snprintf(buf + o, sizeof(buf) - o, "\\x%02x", q[i]);
	}
	buf[o++] = '"';
	buf[o] = 0;
	return buf;
}

__u32 check_query(const struct hs_trie *t, const struct hs_trie *copy, const struct ref_list *ref,
		  const __u8 *q, size_t len, const char *ctx)
{
	__u32 *states = malloc((len + 1) * sizeof(*states));
	__u8 *exact = malloc(len ? len : 1);
	__u32 want, got;
	size_t k, i;
	int enforced = 0; /* bit d: enforced in direction d */

	assert_non_null(states);
	assert_non_null(exact);
	memcpy(exact, q, len);
	want = ref_lookup(ref, q, len);
	got = hs_trie_lookup(t, exact, len);
	if (got != want)
		fail_msg("%s: %s: hs_trie_lookup gives rule %u, the reference rule %u (0: none)",
			 ctx, show_query(q, len), got, want);
	for (int d = 0; d < 2; d++) {
		__u32 wd = ref_lookup_in(ref, q, len, 1 << d);

		if (hs_dir_rule(t, got, d) != wd)
			fail_msg(
				"%s: %s: direction %d: the trie's rule %u names rule %u, the reference rule %u",
				ctx, show_query(q, len), d, got, hs_dir_rule(t, got, d), wd);
		enforced |= (wd && ref->rules[wd - 1].action != HS_ACT_OBSERVE) << d;
	}

	states[0] = HS_TRIE_ROOT;
	for (k = 0; k < len; k++)
		states[k + 1] = hs_trie_step(t, states[k], q[k]);
	/* A name masked or dropped in a direction: every state on its way
	 * must say a rule that enforces there may still match (the scanner
	 * rewrites a name cut at a buffer's end ahead only then). */
	for (int d = 0; d < 2; d++)
		for (k = 0; k <= len && (enforced >> d & 1); k++)
			if (!hs_trie_may_enforce(t, states[k], (__u32)d))
				fail_msg(
					"%s: %s: state %#x after %zu bytes says no rule that enforces in direction %d may match; the name is enforced there",
					ctx, show_query(q, len), states[k], k, d);

	/* Early rejection must be right: once final, nothing may change. */
	for (k = 0; k <= len; k++) {
		__u32 rk;

		if (!hs_trie_final(states[k]))
			continue;
		if (ref_open(ref, q, k))
			fail_msg(
				"%s: %s: state %#x after %zu bytes is final, but a rule's name still starts with those bytes",
				ctx, show_query(q, len), states[k], k);
		rk = hs_trie_result(t, states[k]);
		if (rk != ref_lookup(ref, q, k))
			fail_msg(
				"%s: %s: final state %#x after %zu bytes gives rule %u, the reference %u",
				ctx, show_query(q, len), states[k], k, rk, ref_lookup(ref, q, k));
		for (i = k; i < len; i++)
			if (states[i + 1] != states[k])
				fail_msg("%s: %s: final state %#x changed to %#x at byte %zu", ctx,
					 show_query(q, len), states[k], states[i + 1], i);
		break;
	}

	/* hs_trie_walk8 (the scanner's runs of name bytes) from every offset,
	 * over every run length it takes, with other bytes after the run: the
	 * states of stepping byte by byte; fewer bytes only while not final. */
	for (k = 0; k < len; k++) {
		for (size_t n = 1; n <= 8 && k + n <= len; n++) {
			__u8 win[8];
			__u32 used = 0, s;
			__u64 w;

			memset(win, 0xa5, sizeof(win));
			memcpy(win, q + k, k + 8 <= len ? 8 : len - k);
			memcpy(&w, win, sizeof(w));
			s = hs_trie_walk8(t, states[k], w, (__u32)n, &used);
			if (used < 1 || used > n || s != states[k + used] ||
			    (used < n && hs_trie_final(s)))
				fail_msg(
					"%s: %s: hs_trie_walk8 of %zu bytes from %zu took %u to state %#x; stepping gives %#x there",
					ctx, show_query(q, len), n, k, used, s,
					states[k + (used <= n ? used : 0)]);
		}
	}

	/* A name split across segments: save the state after k bytes, resume
	 * on the copy of the block. */
	for (k = 0; k <= len; k++) {
		__u32 saved = states[k], s = saved;

		for (i = k; i < len; i++)
			s = hs_trie_step(copy, s, q[i]);
		if (s != states[len] || hs_trie_result(copy, s) != want)
			fail_msg(
				"%s: %s: stepping split after %zu bytes gives state %#x (rule %u); unsplit %#x, lookup and the reference rule %u",
				ctx, show_query(q, len), k, s, hs_trie_result(copy, s), states[len],
				want);
	}
	free(states);
	free(exact);
	return want;
}

/* ---- randomness ---- */

__u64 test_seed(const char *what)
{
	const char *env = getenv("HS_SEED");
	unsigned long long seed;
	struct timespec ts;

	if (env && *env) {
		char *end;

		errno = 0;
		seed = strtoull(env, &end, 0);
		if (errno || *end)
			fail_msg("HS_SEED=\"%s\" is not a number", env);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((unsigned long long)ts.tv_sec * 1000000007ULL) ^
		       (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 32);
	}
	print_message("%s: seed %llu (HS_SEED=%llu repeats this run)\n", what, seed, seed);
	return seed;
}

/* splitmix64: small, fast, and every seed gives a good stream. */
__u64 rng_next(struct rng *r)
{
	__u64 z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

__u32 rng_below(struct rng *r, __u32 n)
{
	return (__u32)(((rng_next(r) >> 32) * n) >> 32);
}

void rng_mix_case(struct rng *r, char *dst, const char *src, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = src[i];

		if (rng_below(r, 2)) {
			if (c >= 'a' && c <= 'z')
				c -= 'a' - 'A';
			else if (c >= 'A' && c <= 'Z')
				c += 'a' - 'A';
		}
		dst[i] = c;
	}
}

/* ---- corpus ---- */

#ifndef HS_CORPUS_DIR
#define HS_CORPUS_DIR "../shared/corpus"
#endif

const char *corpus_path(const char *name)
{
	static char path[4096];
	const char *dir = getenv("CORPUS");

	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : HS_CORPUS_DIR, name);
	return path;
}

char *corpus_read(const char *name, size_t *len)
{
	const char *path = corpus_path(name);
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap + 1);
	FILE *f;

	assert_non_null(buf);
	f = fopen(path, "rb");
	if (!f) {
		fail_msg("cannot open corpus file %s: %s (set CORPUS to the corpus directory)",
			 path, strerror(errno));
		return NULL; /* not reached: fail_msg() jumps out of the test */
	}
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = realloc(buf, cap * 2 + 1);

			assert_non_null(nb);
			buf = nb;
			cap *= 2;
		}
	}
	assert_false(ferror(f));
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

int next_line(const char *text, size_t *pos, const char **line, size_t *len)
{
	const char *s = text + *pos, *nl;

	if (!*s)
		return 0;
	nl = strchr(s, '\n');
	*line = s;
	*len = nl ? (size_t)(nl - s) : strlen(s);
	*pos += *len + (nl != NULL);
	return 1;
}

/* ---- the scanner, segment by segment ---- */

void seg_scan(const struct hs_trie *t, const char *text, struct hs_stream st, const size_t *cuts,
	      size_t n_cuts, __u8 first_opts, __u8 opts, const struct seg_peer *p,
	      struct seg_scan *r)
{
	size_t len = strlen(text), off = 0;

	assert_true(len < sizeof(r->out));
	memset(r, 0, sizeof(*r));
	memcpy(r->out, text, len);
	for (size_t i = 0; i <= n_cuts && off < len; i++) {
		size_t end = i < n_cuts ? cuts[i] : len, n = end - off;
		__u8 *buf = malloc(n);
		struct hs_scan s;
		int rc, steps = 0;

		assert_non_null(buf);
		memcpy(buf, text + off, n);
		hs_scan_begin(&s, &st, 0, (__u32)n, 0);
		s.opts = opts | (i == 0 ? first_opts : 0);
		if (p) {
			s.peer_known = (__u8)p->known;
			s.peer_n = p->n;
			s.peer_heads = p->heads;
		}
		do {
			rc = hs_scan_step(&s, t, buf, buf + n);
			assert_true(++steps < 100000);
		} while (rc != HS_STEP_DONE && s.st.phase != HS_PH_DROPPED);
		memcpy(r->out + off, buf, n);
		free(buf);
		r->phase = s.st.phase;
		r->messages += s.requests;
		r->matched += s.matched;
		r->masked += s.masked;
		r->observed += s.observed;
		r->unframed += s.unframed;
		r->desync += s.desync;
		r->conflicts += s.conflicts;
		r->h2c += s.h2c;
		r->bodies_unframed += s.bodies_unframed;
		if (s.st.phase >= HS_PH_NOT_HTTP)
			break;
		hs_scan_finish(&s, &st);
		off = end;
	}
	r->st = st;
}

void seg_scan_dir(const struct hs_trie *t, const char *text, size_t cut, __u32 dir, __u8 opts,
		  const struct seg_peer *p, struct seg_scan *r)
{
	struct hs_stream st;

	hs_stream_init_dir(&st, dir);
	seg_scan(t, text, st, &cut, cut ? 1 : 0, 0, opts, p, r);
}

void seg_scan_all_cuts(const struct hs_trie *t, const char *text, __u32 dir, __u8 opts,
		       const struct seg_peer *p, struct seg_scan *r)
{
	static struct seg_scan c;
	size_t len = strlen(text);

	seg_scan_dir(t, text, 0, dir, opts, p, r);
	for (size_t cut = 1; cut < len; cut++) {
		seg_scan_dir(t, text, cut, dir, opts, p, &c);
		if (strcmp(c.out, r->out) || c.masked != r->masked || c.matched != r->matched ||
		    c.unframed != r->unframed || c.messages != r->messages || c.phase != r->phase ||
		    c.conflicts != r->conflicts || c.h2c != r->h2c ||
		    c.bodies_unframed != r->bodies_unframed)
			fail_msg(
				"cut at %zu: masked %u/%u matched %u/%u unframed %u/%u phase %u/%u "
				"conflicts %u/%u h2c %u/%u bodies_unframed %u/%u\n"
				"whole: %s\ncut:   %s",
				cut, c.masked, r->masked, c.matched, r->matched, c.unframed,
				r->unframed, c.phase, r->phase, c.conflicts, r->conflicts, c.h2c,
				r->h2c, c.bodies_unframed, r->bodies_unframed,
				show_query((const __u8 *)r->out, strlen(r->out)), c.out);
	}
}

unsigned int str_count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}
