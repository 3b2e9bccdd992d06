// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Proxy mode: the sockops program on a cgroup, the sk_msg program on its two
 * sockhashes (socks: connections out; servers: connections accepted) and
 * the sk_skb program on servers, with the maps pinned under
 * /sys/fs/bpf/hdrstrip/cgroup-<id>/. The cgroup holds the sockops
 * attachment, the sockhashes the others: all outlive the command, with or
 * without the pins.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/membarrier.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "loader.h"
#include "proxy.skel.h"

/* The skeleton's maps, in struct dev_maps' order (no methods). */
#define N_PROXY_MAPS 9
static void proxy_maps(struct hdrstrip_proxy *skel, struct bpf_map **maps)
{
	struct bpf_map *all[N_PROXY_MAPS] = { skel->maps.trie,	   skel->maps.config,
					      skel->maps.counters, skel->maps.header_hits,
					      skel->maps.events,   skel->maps.event_bucket,
					      skel->maps.socks,	   NULL /* methods */,
					      skel->maps.servers };

	memcpy(maps, all, sizeof(all));
}

/* The skeleton with its seven maps bound to @m (NULL: its own), and its
 * programs set to load or not. */
static struct hdrstrip_proxy *proxy_open(const struct dev_maps *m, int load_progs)
{
	struct hdrstrip_proxy *skel = hdrstrip_proxy__open();
	int r = 0;

	if (!skel)
		return NULL;
	if (m) {
		struct bpf_map *maps[N_PROXY_MAPS];

		proxy_maps(skel, maps);
		r = dev_maps_reuse(m, maps, N_PROXY_MAPS);
	}
	skel->rodata->event_hook = HS_HOOK_CGROUP;
	bpf_program__set_autoload(skel->progs.hdrstrip_sockops, load_progs);
	bpf_program__set_autoload(skel->progs.hdrstrip_msg, load_progs);
	bpf_program__set_autoload(skel->progs.hdrstrip_rx, load_progs);
	if (r) {
		hdrstrip_proxy__destroy(skel);
		errno = -r;
		return NULL;
	}
	return skel;
}

int proxy_maps_create(struct dev_maps *m)
{
	struct hdrstrip_proxy *skel = proxy_open(NULL, 0);
	int r;

	dev_maps_init(m);
	if (!skel)
		return -errno;
	r = hdrstrip_proxy__load(skel);
	if (!r) {
		struct bpf_map *maps[N_PROXY_MAPS];

		proxy_maps(skel, maps);
		r = dev_maps_dup(m, maps, N_PROXY_MAPS);
	}
	hdrstrip_proxy__destroy(skel);
	return r;
}

/* The sk_msg and sk_skb programs off both sockhashes (a sockhash holds its
 * programs for as long as it lives). */
static void proxy_unhook(struct hdrstrip_proxy *skel)
{
	int msg = bpf_program__fd(skel->progs.hdrstrip_msg);

	bpf_prog_detach2(msg, bpf_map__fd(skel->maps.socks), BPF_SK_MSG_VERDICT);
	bpf_prog_detach2(msg, bpf_map__fd(skel->maps.servers), BPF_SK_MSG_VERDICT);
	bpf_prog_detach2(bpf_program__fd(skel->progs.hdrstrip_rx), bpf_map__fd(skel->maps.servers),
			 BPF_SK_SKB_VERDICT);
}

int proxy_attach(const struct dev *d, const struct dev_maps *m)
{
	struct hdrstrip_proxy *skel = proxy_open(m, 1);
	int r, msg;

	if (!skel)
		return -errno;
	/* The verifier runs here, before anything is attached. */
	r = hdrstrip_proxy__load(skel);
	if (r) {
		hdrstrip_proxy__destroy(skel);
		return r;
	}
	msg = bpf_program__fd(skel->progs.hdrstrip_msg);
	if (bpf_prog_attach(msg, bpf_map__fd(skel->maps.socks), BPF_SK_MSG_VERDICT, 0) ||
	    bpf_prog_attach(msg, bpf_map__fd(skel->maps.servers), BPF_SK_MSG_VERDICT, 0) ||
	    bpf_prog_attach(bpf_program__fd(skel->progs.hdrstrip_rx),
			    bpf_map__fd(skel->maps.servers), BPF_SK_SKB_VERDICT, 0))
		r = -errno;
	/* MULTI: other sockops programs on the cgroup keep running. */
	if (!r && bpf_prog_attach(bpf_program__fd(skel->progs.hdrstrip_sockops), d->cgroup_fd,
				  BPF_CGROUP_SOCK_OPS, BPF_F_ALLOW_MULTI))
		r = -errno;
	if (r)
		proxy_unhook(skel);
	hdrstrip_proxy__destroy(skel);
	return r;
}

/* The sockhashes among the maps of program @prog_fd, opened into @fds (up
 * to @max): how many, or -errno. */
static int sockhashes_of_prog(int prog_fd, int *fds, int max)
{
	__u32 ids[16] = { 0 }, len; /* zeroed: the kernel fills them, valgrind cannot see it */
	struct bpf_prog_info info;
	int n = 0;

	memset(&info, 0, sizeof(info));
	info.nr_map_ids = HS_ARRAY_SIZE(ids);
	info.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	for (__u32 i = 0; i < info.nr_map_ids && i < HS_ARRAY_SIZE(ids) && n < max; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mlen) && mi.type == BPF_MAP_TYPE_SOCKHASH)
			fds[n++] = fd;
		else
			close(fd);
	}
	return n;
}

/*
 * Take every socket out of the sockhash @fd. A socket leaving its last
 * sockmap or sockhash drops its psock, and with it the sk_msg and sk_skb
 * programs: the kernel gives the socket its own protocol operations back
 * before the delete returns. A socket that closes meanwhile leaves by
 * itself (-ENOENT), and a key that went makes bpf_map_get_next_key start
 * over.
 */
static int sockhash_flush(int fd)
{
	__u64 key, next;
	int more;

	more = !bpf_map_get_next_key(fd, NULL, &key);
	if (!more && errno != ENOENT)
		return -errno;
	while (more) {
		more = !bpf_map_get_next_key(fd, &key, &next);
		if (!more && errno != ENOENT)
			return -errno;
		if (bpf_map_delete_elem(fd, &key) && errno != ENOENT)
			return -errno;
		key = next;
	}
	return 0;
}

/*
 * Empty the sockhashes @fds twice: a sockops run that began before the
 * detach may still add a socket after the first pass; the second, after an
 * RCU grace period (MEMBARRIER_CMD_GLOBAL waits for one; on nohz_full
 * kernels it cannot, and the second pass only narrows the window), takes
 * it out.
 */
static int sockhashes_release(const int *fds, int n)
{
	int r = 0;

	for (int pass = 0; pass < 2 && !r; pass++) {
		if (pass)
			(void)syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
		for (int i = 0; i < n && !r; i++)
			r = sockhash_flush(fds[i]);
	}
	return r;
}

int proxy_release_socks(int fd)
{
	return sockhashes_release(&fd, 1);
}

int proxy_detach(const struct dev *d, __u32 prog_id)
{
	int fd = bpf_prog_get_fd_by_id(prog_id), socks[2] = { -1, -1 }, n, r;

	if (fd < 0)
		return -errno;
	/* Before the detach: the program is what leads to its sockhashes. */
	n = sockhashes_of_prog(fd, socks, (int)HS_ARRAY_SIZE(socks));
	if (n > (int)HS_ARRAY_SIZE(socks))
		n = (int)HS_ARRAY_SIZE(socks); /* never: for the analyser */
	if (n <= 0) {
		close(fd);
		return n ? n : -ENOENT;
	}
	r = bpf_prog_detach2(fd, d->cgroup_fd, BPF_CGROUP_SOCK_OPS) ? -errno : 0;
	close(fd);
	/*
	 * No new socket enters now, but a sockhash would let go of the ones
	 * in it (and they of the sk_msg and sk_skb programs) only when the
	 * kernel frees the map: from a work queue, after an RCU grace period,
	 * some time after its last reference (the pins, which the caller
	 * removes) goes; seconds on a busy machine. Until then they would stay
	 * filtered. Empty them now instead. Bytes a socket holds back (corked)
	 * are freed with its psock.
	 */
	if (!r)
		r = sockhashes_release(socks, n);
	for (int i = 0; i < n; i++)
		close(socks[i]);
	return r;
}

/*
 * What the processes of a cgroup hold: their socket inodes, and one process
 * per network namespace they live in. A cgroup belongs to no network
 * namespace: its connections are in the TCP tables of its processes'
 * namespaces (/proc/PID/net/tcp), whichever namespace this command runs in.
 */
struct cg_socks {
	unsigned long *ino;
	size_t n, cap;
	struct cg_net {
		__u64 netns_ino;
		int pid;
	} * nets;
	size_t n_nets, cap_nets;
};

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *np;

	if (n < *cap)
		return 0;
	np = realloc(*p, (*cap ? *cap * 2 : 16) * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = *cap ? *cap * 2 : 16;
	return 0;
}

static void note_netns(struct cg_socks *cs, int pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	if (stat(path, &st))
		return;
	for (size_t i = 0; i < cs->n_nets; i++)
		if (cs->nets[i].netns_ino == st.st_ino)
			return;
	if (grow((void **)&cs->nets, &cs->cap_nets, cs->n_nets, sizeof(*cs->nets)))
		return;
	cs->nets[cs->n_nets].netns_ino = st.st_ino;
	cs->nets[cs->n_nets++].pid = pid;
}

static void note_sockets(struct cg_socks *cs, int pid)
{
	char fdd[64];
	struct dirent *e;
	DIR *fds;

	snprintf(fdd, sizeof(fdd), "/proc/%d/fd", pid);
	fds = opendir(fdd);
	while (fds && (e = readdir(fds))) {
		char lp[320], link[64];
		unsigned long i;
		ssize_t k;

		snprintf(lp, sizeof(lp), "%s/%s", fdd, e->d_name);
		k = readlink(lp, link, sizeof(link) - 1);
		if (k <= 0)
			continue;
		link[k] = 0;
		if (sscanf(link, "socket:[%lu]", &i) != 1)
			continue;
		if (grow((void **)&cs->ino, &cs->cap, cs->n, sizeof(*cs->ino)))
			break;
		cs->ino[cs->n++] = i;
	}
	if (fds)
		closedir(fds);
}

/* The processes of the cgroup at @dir and of the cgroups below it. */
static void collect(const char *dir, struct cg_socks *cs, int depth)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dd;
	FILE *f;
	int pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "r");
	while (f && fscanf(f, "%d", &pid) == 1) {
		note_netns(cs, pid);
		note_sockets(cs, pid);
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
			collect(sub, cs, depth + 1);
	}
	closedir(dd);
}

/* Established connections to @ports in one TCP table that @cs holds. */
static int count_table(const char *table, const struct cg_socks *cs, const __u64 *ports)
{
	FILE *f = fopen(table, "r");
	char line[512];
	int count = 0;

	if (!f)
		return 0;
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
		if (port > 65535 || !(ports[port / 64] >> (port % 64) & 1))
			continue;
		for (size_t k = 0; k < cs->n; k++)
			if (cs->ino[k] == i) {
				count++;
				break;
			}
	}
	fclose(f);
	return count;
}

int count_preexisting(const struct dev *d, const __u64 *ports)
{
	struct cg_socks cs = { 0 };
	int count = 0;

	collect(d->cgroup_path, &cs, 0);
	for (size_t k = 0; k < cs.n_nets; k++) {
		static const char *const tables[] = { "tcp", "tcp6" };

		for (size_t t = 0; t < HS_ARRAY_SIZE(tables); t++) {
			char path[64];

			snprintf(path, sizeof(path), "/proc/%d/net/%s", cs.nets[k].pid, tables[t]);
			count += count_table(path, &cs, ports);
		}
	}
	free(cs.ino);
	free(cs.nets);
	return count;
}
