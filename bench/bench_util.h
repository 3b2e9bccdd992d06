/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Small helpers the host benchmarks share: fatal errors, allocation,
 * thread CPU time and medians. Header-only, so each benchmark stays one
 * program built from one source file.
 */
#ifndef HDRSTRIP_BENCH_UTIL_H
#define HDRSTRIP_BENCH_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* glibc's name of the running program (errno.h declares it only under
 * _GNU_SOURCE, which a benchmark may have included without). */
extern char *program_invocation_short_name;

static __attribute__((format(printf, 1, 2), noreturn, unused)) void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static __attribute__((unused)) void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die("out of memory");
	return p;
}

static __attribute__((unused)) void warn_list(const char *msg)
{
	fprintf(stderr, "%s: warning: %s\n", program_invocation_short_name, msg);
}

/*
 * This thread's CPU time, not wall time: on a shared machine the process is
 * often preempted in the middle of a sample, and wall time would count the
 * other process's slice. What is left (caches and branch predictors shared
 * with the other process, the hypervisor's own noise) the medians absorb.
 */
static __attribute__((unused)) double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of @v (sorted in place). */
static __attribute__((unused)) double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif /* HDRSTRIP_BENCH_UTIL_H */
