// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * -p, --pretty (see jsonfmt.h): a streaming reformatter, and standard
 * output routed through it (a stdio cookie stream in place of stdout, so
 * the printers' printf, putchar and fflush reach it unchanged).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jsonfmt.h"

enum {
	JF_UNDECIDED,
	JF_JSON,
	JF_RAW,
};

void jsonfmt_init(struct jsonfmt *j, jsonfmt_emit emit, void *ctx)
{
	memset(j, 0, sizeof(*j));
	j->emit = emit;
	j->ctx = ctx;
}

static void put(struct jsonfmt *j, const char *s, size_t n)
{
	j->emit(j->ctx, s, n);
}

/* A line end, then the indentation of the current depth. */
static void newline(struct jsonfmt *j)
{
	static const char spaces[] = "                                ";

	put(j, "\n", 1);
	for (size_t left = (size_t)j->depth * 2; left;) {
		size_t k = left < sizeof(spaces) - 1 ? left : sizeof(spaces) - 1;

		put(j, spaces, k);
		left -= k;
	}
}

static void close_container(struct jsonfmt *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	if (!j->opened)
		newline(j);
	j->opened = 0;
	put(j, &c, 1);
	if (!j->depth)
		put(j, "\n", 1);
}

static void feed_byte(struct jsonfmt *j, char c)
{
	if (j->in_str) {
		put(j, &c, 1);
		if (j->esc)
			j->esc = 0;
		else if (c == '\\')
			j->esc = 1;
		else if (c == '"')
			j->in_str = 0;
		return;
	}
	if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
		return;
	if (c == ']' || c == '}') {
		close_container(j, c);
		return;
	}
	/* The first element of a container goes on a line of its own; an
	 * empty container stays [] or {}. */
	if (j->opened) {
		j->opened = 0;
		newline(j);
	}
	switch (c) {
	case '[':
	case '{':
		put(j, &c, 1);
		j->depth++;
		j->opened = 1;
		break;
	case ',':
		put(j, ",", 1);
		newline(j);
		break;
	case ':':
		put(j, ": ", 2);
		break;
	case '"':
		put(j, &c, 1);
		j->in_str = 1;
		break;
	default:
		put(j, &c, 1);
		break;
	}
}

void jsonfmt_feed(struct jsonfmt *j, const char *in, size_t n)
{
	if (n && j->mode == JF_UNDECIDED)
		j->mode = in[0] == '[' || in[0] == '{' ? JF_JSON : JF_RAW;
	if (j->mode == JF_RAW) {
		put(j, in, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		feed_byte(j, in[i]);
}

/* Standard output through the reformatter: what it emits is gathered in
 * out[] and written to the file descriptor whenever stdio hands it on (at
 * every fflush, so --watch's updates show as they come). */
struct pretty_out {
	struct jsonfmt fmt;
	char out[4096];
	size_t len;
	int err; /* the first write error, -errno */
};

static struct pretty_out pretty;
static FILE *saved_stdout;

static void pretty_flush(struct pretty_out *p)
{
	size_t done = 0;

	while (done < p->len && !p->err) {
		ssize_t w = write(STDOUT_FILENO, p->out + done, p->len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			p->err = w < 0 ? -errno : -EIO;
		else
			done += (size_t)w;
	}
	p->len = 0;
}

static void pretty_emit(void *ctx, const char *s, size_t n)
{
	struct pretty_out *p = ctx;

	while (n) {
		size_t k = sizeof(p->out) - p->len;

		if (!k) {
			pretty_flush(p);
			continue;
		}
		if (k > n)
			k = n;
		memcpy(p->out + p->len, s, k);
		p->len += k;
		s += k;
		n -= k;
	}
}

static ssize_t pretty_write(void *cookie, const char *buf, size_t n)
{
	struct pretty_out *p = cookie;

	jsonfmt_feed(&p->fmt, buf, n);
	pretty_flush(p);
	if (p->err) {
		errno = -p->err;
		return -1;
	}
	return (ssize_t)n;
}

int pretty_stdout_begin(void)
{
	cookie_io_functions_t io = { .write = pretty_write };
	FILE *f;

	fflush(stdout);
	memset(&pretty, 0, sizeof(pretty));
	jsonfmt_init(&pretty.fmt, pretty_emit, &pretty);
	f = fopencookie(&pretty, "w", io);
	if (!f)
		return -errno;
	saved_stdout = stdout;
	stdout = f;
	return 0;
}

int pretty_stdout_end(void)
{
	int r;

	if (!saved_stdout)
		return 0;
	r = fclose(stdout) ? -errno : 0;
	stdout = saved_stdout;
	saved_stdout = NULL;
	return pretty.err ? pretty.err : r;
}
