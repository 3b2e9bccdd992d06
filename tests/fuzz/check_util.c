// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* What the fuzzers' oracles share: see check_util.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "check_util.h"

void failf(struct cu_err *e, const char *fmt, ...)
{
	va_list ap;

	if (e->failed++)
		return;
	va_start(ap, fmt);
	vsnprintf(e->buf, e->size, fmt, ap);
	va_end(ap);
}

const char *cu_escape(char *buf, size_t size, const uint8_t *p, size_t n)
{
	size_t o = 0;

	/* Each step leaves room for an escape (4 bytes) and the NUL. */
	for (size_t i = 0; i < n && o + 8 < size; i++)
		o += snprintf(buf + o, size - o,
			      p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\' ? "%c" : "\\x%02x", p[i]);
	buf[o] = 0;
	return buf;
}

uint64_t cu_sum16(const uint8_t *p, size_t from, size_t to)
{
	uint64_t s = 0;

	for (size_t i = from; i < to; i += 2)
		s += p[i] | (i + 1 < to ? (uint64_t)p[i + 1] << 8 : 0);
	return s;
}

uint16_t cu_fold16(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

int cu_fuzz_one(const char *name, int (*check)(const uint8_t *, size_t, char *, size_t),
		const uint8_t *data, size_t size)
{
	char why[1024];

	if (check(data, size, why, sizeof(why))) {
		fprintf(stderr, "%s: %s\n", name, why);
		abort();
	}
	return 0;
}
