// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The CLI's messages, and where libbpf's and libxdp's go. */
#include <stdarg.h>
#include <stdio.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"
#include "vlog.h"

static int verbosity;

static void vpr(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "hdrstrip: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpr("", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpr("warning: ", fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	if (!verbosity)
		return;
	va_start(ap, fmt);
	vpr("", fmt, ap);
	va_end(ap);
}

const char *errstr(int err)
{
	static char buf[128];

	libbpf_strerror(err < 0 ? err : -err, buf, sizeof(buf));
	return buf;
}

/* A library's message: kept while a hook attaches (the verifier log is
 * made of them), shown with -v, its debug output with -vv. */
static int lib_print(int debug, const char *fmt, va_list ap)
{
	if (!debug)
		vlog_feed(fmt, ap);
	if (verbosity < (debug ? 2 : 1))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return lib_print(level == LIBBPF_DEBUG, fmt, ap);
}

static int print_libxdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return lib_print(level == LIBXDP_DEBUG, fmt, ap);
}

void log_setup(int verbose)
{
	verbosity = verbose;
	libbpf_set_print(print_libbpf);
	libxdp_set_print(print_libxdp);
}

int log_verbose(void)
{
	return verbosity;
}
