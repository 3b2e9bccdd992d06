/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * -p, --pretty: the compact JSON the commands print, indented. One
 * reformatter of the text, between the printers and standard output, so
 * that no printer has a second, pretty copy: 2 spaces a level, one key or
 * element per line, "key": value, empty containers as [] and {}, and a
 * line end after each top-level value (stats --watch prints a stream of
 * them).
 */
#ifndef HDRSTRIP_JSONFMT_H
#define HDRSTRIP_JSONFMT_H

#include <stddef.h>

/* Where the reformatted bytes go. */
typedef void (*jsonfmt_emit)(void *ctx, const char *s, size_t n);

struct jsonfmt {
	int mode; /* decided by the first byte: JSON, or other text passed as is */
	int depth;
	int in_str, esc;
	int opened; /* the last token opened a container */
	jsonfmt_emit emit;
	void *ctx;
};

void jsonfmt_init(struct jsonfmt *j, jsonfmt_emit emit, void *ctx);
/*
 * Feed @n bytes of output, in pieces cut anywhere. Output whose first byte
 * is not '[' or '{' (a command's --help, say) passes unchanged. Input is
 * trusted to be JSON (the commands' own); white space outside strings is
 * dropped, strings are copied byte for byte.
 */
void jsonfmt_feed(struct jsonfmt *j, const char *in, size_t n);

/* Standard output through the reformatter, until pretty_stdout_end():
 * 0, or -errno (output then stays as it is). */
int pretty_stdout_begin(void);
/* Flush and restore standard output: 0, or -errno if writing failed. */
int pretty_stdout_end(void);

#endif /* HDRSTRIP_JSONFMT_H */
