// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Proxy mode: the sockops program on a cgroup and the sk_msg program on its
 * sockhash, with the maps pinned under /sys/fs/bpf/hdrstrip/cgroup-<id>/.
 * The cgroup holds the sockops attachment, the sockhash holds the sk_msg
 * one: both outlive the command, with or without the pins.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "loader.h"
#include "proxy.skel.h"

int proxy_attach(const struct dev *d)
{
	char path[PATH_MAX + 32];
	struct hdrstrip_proxy *skel = hdrstrip_proxy__open();
	struct bpf_map *maps[5];
	int r = 0;

	if (!skel)
		return -errno;
	maps[0] = skel->maps.trie;
	maps[1] = skel->maps.config;
	maps[2] = skel->maps.counters;
	maps[3] = skel->maps.header_hits;
	maps[4] = skel->maps.socks;
	for (size_t i = 0; i < HS_ARRAY_SIZE(maps) && !r; i++) {
		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, bpf_map__name(maps[i]));
		r = bpf_map__set_pin_path(maps[i], path);
	}
	if (!r)
		r = hdrstrip_proxy__load(skel);
	if (!r && bpf_prog_attach(bpf_program__fd(skel->progs.hdrstrip_msg),
				  bpf_map__fd(skel->maps.socks), BPF_SK_MSG_VERDICT, 0))
		r = -errno;
	/* MULTI: other sockops programs on the cgroup keep running. */
	if (!r && bpf_prog_attach(bpf_program__fd(skel->progs.hdrstrip_sockops), d->cgroup_fd,
				  BPF_CGROUP_SOCK_OPS, BPF_F_ALLOW_MULTI))
		r = -errno;
	hdrstrip_proxy__destroy(skel);
	return r;
}

int proxy_detach(const struct dev *d, __u32 prog_id)
{
	int fd = bpf_prog_get_fd_by_id(prog_id), r = 0;

	if (fd < 0)
		return -errno;
	if (bpf_prog_detach2(fd, d->cgroup_fd, BPF_CGROUP_SOCK_OPS))
		r = -errno;
	close(fd);
	/* The sockhash, its sk_msg program and the sockets in it go with the
	 * last reference: the pins, removed by the caller. */
	return r;
}

/* Socket inodes held by the processes of the cgroup at @dir (and below). */
static void collect_inodes(const char *dir, unsigned long **ino, size_t *n, size_t *cap, int depth)
{
	char path[PATH_MAX];
	FILE *f;
	DIR *dd;
	struct dirent *e;
	int pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "r");
	while (f && fscanf(f, "%d", &pid) == 1) {
		char fdd[64];
		DIR *fds;

		snprintf(fdd, sizeof(fdd), "/proc/%d/fd", pid);
		fds = opendir(fdd);
		while (fds && (e = readdir(fds))) {
			char lp[320], link[64];
			ssize_t k;
			unsigned long i;

			snprintf(lp, sizeof(lp), "%s/%s", fdd, e->d_name);
			k = readlink(lp, link, sizeof(link) - 1);
			if (k <= 0)
				continue;
			link[k] = 0;
			if (sscanf(link, "socket:[%lu]", &i) != 1)
				continue;
			if (*n == *cap) {
				unsigned long *ni = realloc(*ino, (*cap = *cap ? *cap * 2 : 64) * sizeof(**ino));

				if (!ni)
					break;
				*ino = ni;
			}
			(*ino)[(*n)++] = i;
		}
		if (fds)
			closedir(fds);
	}
	if (f)
		fclose(f);
	if (depth > 16 || !(dd = opendir(dir)))
		return;
	while ((e = readdir(dd))) {
		char sub[PATH_MAX];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		if (!stat(sub, &st) && S_ISDIR(st.st_mode))
			collect_inodes(sub, ino, n, cap, depth + 1);
	}
	closedir(dd);
}

int count_preexisting(const struct dev *d, const __u64 *ports)
{
	static const char *const tables[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	unsigned long *ino = NULL;
	size_t n = 0, cap = 0;
	int count = 0;

	collect_inodes(d->cgroup_path, &ino, &n, &cap, 0);
	for (size_t t = 0; t < HS_ARRAY_SIZE(tables); t++) {
		FILE *f = fopen(tables[t], "r");
		char line[512];

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char rem[64];
			unsigned int state, port;
			unsigned long i;
			char *colon;

			/* sl local rem st tx:rx tr:tm retrnsmt uid timeout inode */
			if (sscanf(line, " %*s %*s %63s %x %*s %*s %*s %*u %*u %lu", rem, &state, &i) != 3)
				continue;
			colon = strrchr(rem, ':');
			if (state != 1 /* ESTABLISHED */ || !colon || sscanf(colon + 1, "%x", &port) != 1)
				continue;
			if (!(ports[port / 64] >> (port % 64) & 1))
				continue;
			for (size_t k = 0; k < n; k++)
				if (ino[k] == i) {
					count++;
					break;
				}
		}
		fclose(f);
	}
	free(ino);
	return count;
}
