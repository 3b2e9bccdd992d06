// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * An LD_PRELOAD shim for test_metrics.sh: with HS_FAIL_COUNTERS=N in the
 * environment, the Nth read of a map named "counters" fails with ENOENT,
 * as when a device is detached between 'hdrstrip stats' finding it and
 * reading its counters. Every other system call goes through unchanged.
 *
 *   cc -shared -fPIC -o failread.so failread.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

typedef long (*syscall_fn)(long, ...);

/* Is @fd a map named "counters"? */
static int is_counters(syscall_fn real, int fd)
{
	struct bpf_map_info info;
	union bpf_attr q;

	memset(&info, 0, sizeof(info));
	memset(&q, 0, sizeof(q));
	q.info.bpf_fd = (__u32)fd;
	q.info.info_len = sizeof(info);
	q.info.info = (__u64)(unsigned long)&info;
	return !real(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &q, sizeof(q)) &&
	       !strcmp(info.name, "counters");
}

long syscall(long nr, ...)
{
	static syscall_fn real;
	static int seen;
	const char *nth = getenv("HS_FAIL_COUNTERS");
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	if (nth && nr == __NR_bpf && a[0] == BPF_MAP_LOOKUP_ELEM &&
	    is_counters(real, (int)((const union bpf_attr *)a[1])->map_fd) && ++seen == atoi(nth)) {
		errno = ENOENT;
		return -1;
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
