/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The CLI's messages: its own (pr_*), libbpf's and libxdp's (shown with -v,
 * and kept for the verifier log while a hook attaches).
 */
#ifndef HDRSTRIP_LOG_H
#define HDRSTRIP_LOG_H

/* Route libbpf's and libxdp's messages here; @verbose is the number of -v
 * (1: their warnings, 2: their debug output too; pr_info shows from 1). */
void log_setup(int verbose);
int log_verbose(void);

/* "hdrstrip: <msg>" on stderr; pr_info only with -v. */
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A libbpf/-errno code as text, for "...: <text> (<code>)" messages. */
const char *errstr(int err);

#endif /* HDRSTRIP_LOG_H */
