/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Header-list parsing (text -> validated, folded names). Pure: no libbpf. */
#ifndef HDRSTRIP_HLIST_H
#define HDRSTRIP_HLIST_H

#include <stddef.h>
#include <hdrstrip/trie.h>

/* The strings live in the list's block of strings, sized by the list: a
 * name is a few dozen bytes, not the 260 its limit allows, and every page
 * a parse touches costs (see hs_prefault()). */
struct hs_name {
	char *name; /* folded, without the '*' of a prefix rule */
	char *orig; /* as written, '*' included */
	__u16 len;
	__u8 action; /* enum hs_action */
	__u8 prefix; /* 1: prefix rule */
	__u8 non_token; /* holds visible bytes that RFC 9110 tokens do not */
	/* enum hs_dir_set: bit 1 << HS_DIR_* for each direction the rule
	 * applies to (request when the line names none; hs_compile() reads
	 * 0, from a list built by hand, as request too). A name may appear
	 * twice, of the same kind, for disjoint directions. */
	__u8 directions;
	__u8 builtin; /* 1: the built-in rule (HS_BUILTIN_H2C), on no line of the file */
	__u32 line; /* 0 for the built-in rule */
};

struct hs_list {
	struct hs_name *names;
	size_t n;
	int fold_underscore;
	char *strings; /* every name's name and orig, NUL-terminated */
};

/* Options that start from defaults (hs_list_opts_default) and may be
 * overridden by the list's own directives. */
struct hs_list_opts {
	int fold_underscore; /* -1: as the list says (default on) */
	/* Called with each warning of an accepted list (names that are not
	 * RFC 9110 tokens); NULL: silent. */
	void (*warn)(const char *msg);
	/* 1: add the built-in rule, HS_BUILTIN_H2C masked in requests,
	 * unless a request rule of the list covers that name (the list's
	 * rule then decides) or the list says "@h2c-upgrade allow". 0 (the
	 * default): the list as written. The CLI's datapath lists set it. */
	int builtin;
};

/* The built-in rule's name. RFC 7540 3.2: a request that upgrades a
 * connection to HTTP/2 without TLS (h2c, "Upgrade: h2c") must carry
 * exactly one HTTP2-Settings field, and a server must not upgrade
 * without it. Masked, it keeps such a connection HTTP/1.1, which the
 * scanner reads; upgraded, its HTTP/2 frames (HPACK) would not be. */
#define HS_BUILTIN_H2C "http2-settings"

#define HS_ERR_MSG 512

/* The largest header list read or parsed: 1,024 names of 128 bytes fit
 * many times over; more is not a list (-EFBIG). */
#define HS_LIST_MAX_BYTES (64u << 20)

/* A failure to parse or compile, printed as is by the CLI. */
struct hs_err {
	int bad_input; /* 1: the input is wrong (exit 2); 0: a system error (exit 1) */
	char msg[HS_ERR_MSG];
};

void hs_list_opts_default(struct hs_list_opts *o);

/* Parse @len bytes of @text; @path names the source in messages.
 * Returns 0 or -errno (-EINVAL for bad input, -EFBIG for more than
 * HS_LIST_MAX_BYTES) with @err filled in. */
int hs_list_parse(const char *text, size_t len, const char *path, const struct hs_list_opts *opts,
		  struct hs_list *out, struct hs_err *err);

/* Read and parse a file ("-" is standard input). */
int hs_list_load(const char *path, const struct hs_list_opts *opts, struct hs_list *out,
		 struct hs_err *err);

void hs_list_free(struct hs_list *l);

/* 1 when @l's last rule is the built-in one (the only place it goes). */
int hs_list_builtin(const struct hs_list *l);

/* How messages count a list with the built-in rule: "N names" then this. */
#define HS_BUILTIN_NOTE " + built-in " HS_BUILTIN_H2C

/* Fault in the pages of [@p, @p + @len) in one system call, before they
 * are written: page faults one by one cost far more on some virtual
 * machines (~12 us each, against < 1 us a page here). */
void hs_prefault(void *p, size_t len);

/* A hash of a folded name and its kind (exact or prefix rule), for tables
 * of names. */
__u32 hs_name_hash(const char *name, size_t len, int prefix);

/* Fold one name byte as the trie does: 0 if @c is not a token character. */
unsigned char hs_fold_byte(unsigned char c, int fold_underscore);
int hs_is_tchar(unsigned char c);
int hs_is_name_byte(unsigned char c);

#endif /* HDRSTRIP_HLIST_H */
