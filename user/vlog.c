// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Capture of libbpf's and libxdp's messages while a program loads, and of
 * the verifier's log among them. libbpf 1.x retries a failed load with
 * log_level 1 and prints the log in one message, between
 * "-- BEGIN PROG LOAD LOG --" and "-- END PROG LOAD LOG --"; libxdp may
 * load a program more than once (dispatcher, then on its own), so the
 * last such log is the one that decided.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vlog.h"

#define VLOG_MAX (64u << 20) /* libbpf's own log buffer tops out at 16 MiB */

static const char begin_mark[] = "-- BEGIN PROG LOAD LOG --";
static const char end_mark[] = "-- END PROG LOAD LOG --";

static struct {
	char *buf;
	size_t len, cap;
	int on;
	int dropped; /* bytes did not fit in VLOG_MAX */
} vl;

void vlog_begin(void)
{
	vl.len = 0;
	vl.dropped = 0;
	vl.on = 1;
	if (vl.buf)
		vl.buf[0] = 0;
}

void vlog_feed(const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	if (!vl.on)
		return;
	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n <= 0)
		return;
	if (vl.len + n + 1 > vl.cap) {
		size_t cap = vl.cap ? vl.cap : 65536;
		char *nb;

		while (cap < vl.len + n + 1)
			cap *= 2;
		if (cap > VLOG_MAX || !(nb = realloc(vl.buf, cap))) {
			vl.dropped = 1;
			return;
		}
		vl.buf = nb;
		vl.cap = cap;
	}
	va_copy(aq, ap);
	vsnprintf(vl.buf + vl.len, n + 1, fmt, aq);
	va_end(aq);
	vl.len += n;
}

/* The last verifier log kept: [*start, *end) between the marks, and the
 * program's name from "prog 'NAME': -- BEGIN ...". */
static int last_log(const char **start, const char **end, char *prog, size_t prog_size)
{
	const char *b = NULL, *p, *e, *q;

	if (!vl.buf)
		return 0;
	for (p = vl.buf; (p = strstr(p, begin_mark)); p++)
		b = p;
	if (!b)
		return 0;
	/* The name sits on the marker's line: "libbpf: prog 'NAME': -- BEGIN". */
	snprintf(prog, prog_size, "?");
	for (q = b; q > vl.buf && q[-1] != '\n'; q--)
		;
	if ((q = strstr(q, "prog '")) && q < b) {
		const char *qe = memchr(q + 6, '\'', b - (q + 6));

		if (qe)
			snprintf(prog, prog_size, "%.*s", (int)(qe - (q + 6)), q + 6);
	}
	p = strchr(b, '\n');
	p = p ? p + 1 : b + strlen(b);
	e = strstr(p, end_mark);
	*start = p;
	*end = e ? e : vl.buf + vl.len;
	return 1;
}

static void print_tail(FILE *out, const char *start, const char *end, int lines)
{
	const char *p = end;
	int n = 0;

	/* Back from the end over @lines line ends (the last line may lack one). */
	if (p > start && p[-1] == '\n')
		p--;
	while (p > start) {
		if (p[-1] == '\n' && ++n == lines)
			break;
		p--;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		fprintf(out, "  | %.*s\n", (int)l, p);
		p += l + (nl != NULL);
	}
}

/* Open @path for the log, or a new file in /tmp; fills @path. */
static int open_log(const char *dir, const char *dev, const char *hook, char *path, size_t size)
{
	int fd = -1;

	if (dir && (!mkdir(dir, 0700) || errno == EEXIST)) {
		snprintf(path, size, "%s/verifier-%s-%s.log", dir, dev, hook);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		snprintf(path, size, "/tmp/hdrstrip-verifier-%s-%s-XXXXXX.log", dev, hook);
		fd = mkstemps(path, 4);
	}
	return fd < 0 ? -errno : fd;
}

int vlog_save(const char *dir, const char *dev, const char *hook, FILE *out, char *path,
	      size_t path_size)
{
	const char *start, *end;
	char prog[64];
	size_t off = 0;
	int fd, r = 0;

	path[0] = 0;
	if (!last_log(&start, &end, prog, sizeof(prog)))
		return 0;
	fd = open_log(dir, dev, hook, path, path_size);
	if (fd < 0) {
		r = fd;
	} else {
		while (off < vl.len && !r) {
			ssize_t w = write(fd, vl.buf + off, vl.len - off);

			if (w < 0 && errno != EINTR)
				r = -errno;
			else if (w > 0)
				off += w;
		}
		if (close(fd) && !r)
			r = -errno;
	}
	if (!out)
		return r ? r : 1;
	fprintf(out,
		"hdrstrip: the kernel's verifier rejected program '%s' (%s on '%s'); the end of its log:\n",
		prog, hook, dev);
	print_tail(out, start, end, HS_VLOG_TAIL);
	if (r)
		fprintf(out, "hdrstrip: cannot save the whole verifier log to %s: %s\n", path,
			strerror(-r));
	else
		fprintf(out, "hdrstrip: the whole verifier log is in %s%s\n", path,
			vl.dropped ? " (cut: it exceeded 64 MiB)" : "");
	return r ? r : 1;
}

void vlog_end(int failed, const char *dev, const char *hook, int no_tail)
{
	char path[512];

	vl.on = 0;
	if (failed) {
		int r = vlog_save(HS_VLOG_DIR, dev, hook, no_tail ? NULL : stderr, path,
				  sizeof(path));

		if (r > 0 && no_tail)
			fprintf(stderr, "hdrstrip: the whole verifier log is in %s\n", path);
		else if (r < 0 && no_tail)
			fprintf(stderr, "hdrstrip: cannot save the verifier log to %s: %s\n", path,
				strerror(-r));
	}
	free(vl.buf);
	vl.buf = NULL;
	vl.len = vl.cap = 0;
}
