// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libhdrstrip: the public API over the CLI's own list parser and trie
 * compiler (core/hlist.c, core/compile.c, linked into the library as they
 * are) and the inline trie lookup and scanner the BPF programs run
 * (include/hdrstrip/trie.h, scan.h). This file only adapts: no matching
 * or scanning logic lives here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdrstrip/scan.h>
#include <hdrstrip/trie.h>

#include "compile.h"
#include "hdrstrip.h"
#include "hlist.h"

/* Everything else is hidden: the shared object exports these only. */
#define HS_API __attribute__((visibility("default")))

_Static_assert(HS_MASK_MAX_BYTES == HS_MAX_BUF, "the public limit is the scanner's");
_Static_assert(HS_ERROR_MSG_MAX >= HS_ERR_MSG, "room for every parser message");

/* The public enum is the ABI: a new internal action must choose its public
 * value here (-Wswitch names the case that lacks one). */
static enum hs_rule_action public_action(enum hs_action a)
{
	switch (a) {
	case HS_ACT_DROP:
		return HS_ACTION_DROP;
	case HS_ACT_REJECT:
		return HS_ACTION_REJECT;
	case HS_ACT_OBSERVE:
		return HS_ACTION_OBSERVE;
	case HS_ACT_MASK:
	case HS_ACT_MAX:
		break;
	}
	return HS_ACTION_MASK;
}

struct hs_matcher {
	struct hs_list list; /* rule i + 1 is list.names[i] */
	struct hs_trie *trie;
};

/* The parser's warning callback has no context argument: route it through
 * a per-thread pointer, set only while one compile runs. */
static __thread const struct hs_compile_opts *warn_opts;

static void warn_tramp(const char *msg)
{
	if (warn_opts && warn_opts->warn)
		warn_opts->warn(msg, warn_opts->warn_ctx);
}

static void set_error(struct hs_error *err, int code, const struct hs_err *e)
{
	if (!err)
		return;
	err->code = code;
	err->bad_input = e->bad_input;
	snprintf(err->msg, sizeof(err->msg), "%s", e->msg);
}

static void set_oom(struct hs_error *err)
{
	if (!err)
		return;
	err->code = -ENOMEM;
	err->bad_input = 0;
	snprintf(err->msg, sizeof(err->msg), "out of memory");
}

/* Parse @text (or, when NULL, the file @name), then compile. */
static hs_matcher *build(const struct hs_compile_opts *opts, struct hs_error *err, const char *text,
			 size_t len, const char *name)
{
	struct hs_list_opts lo;
	struct hs_matcher *m;
	struct hs_err e = { 0 };
	int r;

	if (err) {
		err->code = 0;
		err->bad_input = 0;
		err->msg[0] = 0;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		set_oom(err);
		return NULL;
	}
	hs_list_opts_default(&lo);
	if (opts) {
		lo.fold_underscore = opts->fold_underscore < 0 ? -1 : !!opts->fold_underscore;
		lo.warn = opts->warn ? warn_tramp : NULL;
	}
	warn_opts = opts;
	if (text)
		r = hs_list_parse(text, len, name, &lo, &m->list, &e);
	else
		r = hs_list_load(name, &lo, &m->list, &e);
	warn_opts = NULL;
	if (r) {
		set_error(err, r, &e);
		free(m);
		return NULL;
	}
	m->trie = calloc(1, sizeof(*m->trie));
	if (!m->trie) {
		set_oom(err);
		hs_free(m);
		return NULL;
	}
	r = hs_compile(&m->list, m->trie, NULL, &e);
	if (r) {
		/* The compiler's messages do not name the list: add it. */
		struct hs_err named = { .bad_input = e.bad_input };

		snprintf(named.msg, sizeof(named.msg), "%s: %.*s", name, 400, e.msg);
		set_error(err, r, &named);
		hs_free(m);
		return NULL;
	}
	return m;
}

HS_API hs_matcher *hs_compile_text(const char *text, size_t len, const char *name,
				   const struct hs_compile_opts *opts, struct hs_error *err)
{
	if (!text && len) {
		struct hs_err e = { .bad_input = 1, .msg = "no text to compile" };

		set_error(err, -EINVAL, &e);
		return NULL;
	}
	return build(opts, err, text ? text : "", len, name ? name : "<text>");
}

HS_API hs_matcher *hs_compile_file(const char *path, const struct hs_compile_opts *opts,
				   struct hs_error *err)
{
	if (!path) {
		struct hs_err e = { .bad_input = 1, .msg = "no header list file given" };

		set_error(err, -EINVAL, &e);
		return NULL;
	}
	return build(opts, err, NULL, 0, path);
}

HS_API void hs_free(hs_matcher *m)
{
	if (!m)
		return;
	hs_list_free(&m->list);
	free(m->trie);
	free(m);
}

HS_API unsigned int hs_rule_count(const hs_matcher *m)
{
	return m ? (unsigned int)m->list.n : 0;
}

HS_API int hs_rule_get(const hs_matcher *m, unsigned int id, struct hs_rule_info *info)
{
	const struct hs_name *nm;

	if (!m || !info || id < 1 || id > m->list.n)
		return -EINVAL;
	nm = &m->list.names[id - 1];
	info->id = id;
	info->action = public_action(nm->action);
	info->prefix = nm->prefix;
	info->line = nm->line;
	info->name = nm->orig;
	return 0;
}

HS_API unsigned int hs_lookup(const hs_matcher *m, const char *name, size_t len,
			      struct hs_rule_info *info)
{
	__u32 rule;

	if (!m || (!name && len))
		return 0;
	/* The trie's lookup takes a 32-bit length; no name in a list is longer
	 * than HS_MAX_NAME_LEN, so a longer one can only match a prefix rule,
	 * and its first bytes decide that. */
	if (len > 0xffff)
		len = 0xffff;
	/* Requests are what the library masks: a rule for responses only
	 * does not hide the rule that applies to a request. */
	rule = hs_dir_rule(m->trie, hs_trie_lookup(m->trie, (const __u8 *)name, (__u32)len),
			   HS_DIR_REQUEST);
	if (rule && info)
		hs_rule_get(m, rule, info);
	return rule;
}

/* The first request's header block has ended: the scanner has gone on to
 * its body or to the next request. */
static int block_over(const struct hs_scan *s)
{
	return s->requests && !hs_scan_in_block(s) && s->st.phase < HS_PH_NOT_HTTP;
}

/*
 * Where the scan of @len bytes must stop: after the last line end (CR or
 * LF). A line cut by the buffer's end is left as it is, so that the call on
 * the longer buffer sees it whole: the scanner would rewrite the first
 * bytes of a cut name ahead (right for a packet, which cannot be changed
 * once sent), and a line masked in part would no longer match. With no
 * line end at all the bytes are a request line in part, which the scanner
 * never rewrites: scan them all to tell a request from other bytes.
 */
static __u32 scan_end(const char *buf, __u32 len)
{
	for (__u32 i = len; i > 0; i--)
		if (buf[i - 1] == '\n' || buf[i - 1] == '\r')
			return i;
	return len;
}

HS_API int hs_mask_headers(const hs_matcher *m, char *buf, size_t len, struct hs_mask_result *res)
{
	struct hs_mask_result local;
	struct hs_stream st;
	struct hs_scan s;
	__u8 *data = (__u8 *)buf;
	__u32 end;
	int r;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	/* NULL is refused at any length, as documented: with len 0 it once
	 * went on to scan nothing at NULL (pointer arithmetic on NULL). */
	if (!m || !buf)
		return -EINVAL;
	end = scan_end(buf, len > HS_MAX_BUF ? HS_MAX_BUF : (__u32)len);
	hs_stream_init(&st);
	hs_scan_begin(&s, &st, 0, end, 0);
	/* Run the kernel's step function until it is done or this request's
	 * header block is over: the scanner goes on into the body and the next
	 * request, but the caller frames the body and calls again for the next
	 * request, at res->end. */
	do
		r = hs_scan_step(&s, m->trie, data, data + end);
	while (r != HS_STEP_DONE && !block_over(&s));

	res->scanned = s.pos;
	res->requests = s.requests;
	res->headers_seen = s.seen;
	res->headers_matched = s.matched;
	res->headers_masked = s.masked;
	res->headers_observed = s.observed;
	if (s.st.phase == HS_PH_DROPPED) {
		res->status = HS_MASK_DROP;
		res->drop_rule = s.rule;
	} else if (s.st.phase == HS_PH_NOT_HTTP) {
		res->status = HS_MASK_NOT_HTTP;
	} else if (s.st.phase == HS_PH_HALT) {
		res->status = HS_MASK_AMBIGUOUS;
	} else if (block_over(&s)) {
		res->status = HS_MASK_DONE;
		res->end = s.pos;
	} else {
		res->status = HS_MASK_INCOMPLETE;
	}
	return res->status;
}
