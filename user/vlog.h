/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The verifier's log of a program that fails to load: libbpf prints it
 * through its print callback (shown only with -v), so while a hook is being
 * attached that output is also kept here; when the attach fails, the whole
 * of it is saved to a file and the end of the verifier's log is printed.
 */
#ifndef HDRSTRIP_VLOG_H
#define HDRSTRIP_VLOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Where failed loads leave their logs: verifier-<DEV>-<HOOK>.log. */
#define HS_VLOG_DIR "/run/hdrstrip"
/* Lines of the verifier's log printed when a load fails. */
#define HS_VLOG_TAIL 20

/* Keep what libbpf and libxdp print (but debug output) from now on. */
void vlog_begin(void);

/* From the print callbacks: keep one message, if capturing. */
void vlog_feed(const char *fmt, va_list ap);

/*
 * Stop keeping. If @failed and what was kept holds a verifier log, save it
 * to HS_VLOG_DIR and say so on stderr, with the log's last lines unless
 * @no_tail (the log was shown already, with -v).
 */
void vlog_end(int failed, const char *dev, const char *hook, int no_tail);

/*
 * vlog_end's work: when what was kept holds a verifier log, write all of
 * it to @dir/verifier-@dev-@hook.log (or, if @dir cannot be written, to a
 * new file in /tmp), put that path in @path, and print the log's tail on
 * @out unless it is NULL. Returns 1 if saved, 0 if there was no verifier
 * log, -errno if it could not be saved.
 */
int vlog_save(const char *dir, const char *dev, const char *hook, FILE *out, char *path,
	      size_t path_size);

#endif /* HDRSTRIP_VLOG_H */
