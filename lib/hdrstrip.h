/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libhdrstrip: hdrstrip's header-list compiler, name lookup and header-block
 * masking, for user-space proxies. It is built from the very sources the
 * hdrstrip CLI and its BPF programs use (the list parser, the trie compiler,
 * the trie lookup and the HTTP/1.x scanner), so a proxy that calls it masks
 * exactly what the kernel would.
 *
 *	struct hs_error err;
 *	hs_matcher *m = hs_compile_file("/etc/hdrstrip/internal.txt", NULL, &err);
 *
 *	if (!m)
 *		fprintf(stderr, "%s\n", err.msg);   // "internal.txt:7: invalid ..."
 *	...
 *	struct hs_mask_result res;
 *	int r = hs_mask_headers(m, buf, len, &res);
 *
 * A matcher is immutable once compiled: any number of threads may use one
 * at the same time. Nothing here prints, exits or keeps global state.
 *
 * The layouts of the structs below are part of the ABI: a release that
 * changes them changes the soname (libhdrstrip.so.0).
 */
#ifndef HDRSTRIP_LIB_H
#define HDRSTRIP_LIB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A compiled header list. */
typedef struct hs_matcher hs_matcher;

#define HS_ERROR_MSG_MAX 512

/* Why a call failed. */
struct hs_error {
	int code; /* -errno: -EINVAL for a bad list, else a system error */
	int bad_input; /* 1: the list is wrong; 0: the system failed (memory, I/O) */
	/* One line, without a newline, naming the file and line of a bad
	 * list: "internal.txt:7: invalid character ' ' in header name ...". */
	char msg[HS_ERROR_MSG_MAX];
};

struct hs_compile_opts {
	/* -1: as the list says ('@fold-underscore on|off', default on);
	 * 0: '_' and '-' are different bytes; 1: '_' matches '-'. */
	int fold_underscore;
	/* Called with each warning about a list that is accepted (a name that
	 * is not an RFC 9110 token); NULL: warnings are dropped. */
	void (*warn)(const char *msg, void *ctx);
	void *warn_ctx;
};

/* What a rule does to a request that carries its header. */
enum hs_rule_action {
	HS_ACTION_MASK = 0, /* overwrite the field line in place, same length */
	HS_ACTION_DROP = 1, /* refuse the whole request */
	HS_ACTION_OBSERVE = 2, /* count it (headers_observed), change nothing */
	/* Refuse the request as DROP does; at the kernel hooks the client's
	 * connection is reset too. In process, as DROP. */
	HS_ACTION_REJECT = 3,
};

/* One name of the list. */
struct hs_rule_info {
	unsigned int id; /* position in the list, from 1 */
	enum hs_rule_action action;
	int prefix; /* 1: the name ended in '*' and matches every extension */
	unsigned int line; /* line of the list it was read from */
	const char *name; /* as written (with its '*'); lives as long as the matcher */
};

/*
 * Compile a header list held in @text (@len bytes, need not end in NUL).
 * @name names it in error messages ("<text>" if NULL). @opts may be NULL
 * for the defaults, @err may be NULL. Returns NULL on failure, with @err
 * filled in: code -EINVAL for a bad list (or NULL @text with a non-zero
 * @len), -EFBIG for a list over 64 MiB, -ENOMEM. The format is the one of
 * hdrstrip(8), FILES section.
 */
hs_matcher *hs_compile_text(const char *text, size_t len, const char *name,
			    const struct hs_compile_opts *opts, struct hs_error *err);

/* Same, from a file ("-": standard input). A file that cannot be opened or
 * read is bad input too (bad_input 1) when the path is wrong: missing, a
 * directory, a symlink loop, no permission. */
hs_matcher *hs_compile_file(const char *path, const struct hs_compile_opts *opts,
			    struct hs_error *err);

void hs_free(hs_matcher *m);

/* Number of names in the list. */
unsigned int hs_rule_count(const hs_matcher *m);

/* Rule @id (1..hs_rule_count) into @info: 0, or -EINVAL if there is none. */
int hs_rule_get(const hs_matcher *m, unsigned int id, struct hs_rule_info *info);

/*
 * Look a field name up: the id of the rule it matches in a request (1..),
 * or 0 when the name is not internal. Case does not matter, nor '_' against
 * '-' when the list folds them; the name is the bytes before the colon,
 * without white space. Rules for responses only (a list line's direction
 * word, hdrstrip(8)) match nothing here. @info, if not NULL, is filled in
 * on a match.
 */
unsigned int hs_lookup(const hs_matcher *m, const char *name, size_t len,
		       struct hs_rule_info *info);

/* The scanner keeps offsets below this: a header block must end within
 * the first HS_MASK_MAX_BYTES bytes of the buffer to be scanned whole. */
#define HS_MASK_MAX_BYTES 65472u

/* What hs_mask_headers found. */
enum hs_mask_status {
	/* The header block ended; the body (or the next request) starts at
	 * result.end. A body on a request whose method defines no use for
	 * one (GET, HEAD, DELETE, OPTIONS, TRACE) is read as the next
	 * request by some origins (Python's SimpleHTTPRequestHandler) and
	 * skipped by others: mask it as requests too (call again at
	 * result.end), or refuse such a request, as the kernel checks it
	 * line by line. */
	HS_MASK_DONE = 0,
	/* The buffer ended inside the header block (or the block is longer
	 * than HS_MASK_MAX_BYTES): its complete lines are masked, a line cut
	 * by the buffer's end is left as it is; call again on the whole,
	 * longer buffer once more bytes have arrived. */
	HS_MASK_INCOMPLETE = 1,
	/* A 'drop' rule matched (result.drop_rule): refuse the request. The
	 * buffer may be partly masked. */
	HS_MASK_DROP = 2,
	/* The buffer does not start with an HTTP/1.x request line: nothing
	 * was changed. */
	HS_MASK_NOT_HTTP = 3,
	/* The request's framing could be read two ways by servers (two
	 * Content-Length values, Content-Length with Transfer-Encoding, a
	 * framing field with odd bytes around its name, or after a line
	 * Python's header parser stops reading fields at), or the buffer
	 * starts with HTTP/2's connection preface (h2c, which this does not
	 * parse): the scan stopped there, and the lines after it were not
	 * looked at. Refuse the request (400), as the kernel's default
	 * on-error policy does. */
	HS_MASK_AMBIGUOUS = 4,
};

struct hs_mask_result {
	enum hs_mask_status status;
	size_t end; /* DONE: offset one past the empty line that ends the block */
	size_t scanned; /* bytes of the buffer the scanner read */
	unsigned int drop_rule; /* DROP: id of the rule that matched */
	unsigned int requests; /* request lines recognised (0 or 1) */
	unsigned int headers_seen; /* field lines examined */
	unsigned int headers_matched; /* field lines whose name is in the list */
	unsigned int headers_masked; /* field lines rewritten */
	unsigned int headers_observed; /* field lines matched by an observe rule, kept */
};

/*
 * Mask the internal field lines of the request that starts @buf (@len
 * bytes: the request line, the header block, and maybe more) in place, as
 * the kernel does: every byte of a matched field line, from its name to its
 * line end, becomes "x-hdrstrip: xxx..." (its first byte the first of x, y,
 * z, ... that no listed name starts with: "y-hdrstrip" for a list of X-...
 * names), so the block keeps its length and shape and carries nothing of
 * the original; continuation lines (obs-fold) of a masked field become the
 * filler's first byte repeated. Bytes after the block are never
 * changed: a pipelined request that follows (after the body the caller
 * frames) is masked by a call of its own. Masking a masked block again
 * changes nothing, so a caller that got HS_MASK_INCOMPLETE may call again
 * on the same, longer buffer.
 *
 * Returns the status (also in @res->status, and @res may be NULL), or
 * -EINVAL if @m or @buf is NULL.
 */
int hs_mask_headers(const hs_matcher *m, char *buf, size_t len, struct hs_mask_result *res);

#ifdef __cplusplus
}
#endif

#endif /* HDRSTRIP_LIB_H */
