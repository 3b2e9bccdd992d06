// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Proxy mode and origin mode: a sockops program on a cgroup, the sk_msg
 * program on the sockhashes (socks: connections out; servers: connections
 * accepted, with response rules) and the sk_skb program on servers and
 * origins (origin mode's accepted connections without response rules),
 * with the maps pinned under /sys/fs/bpf/hdrstrip/cgroup-<id>/. The cgroup
 * holds the sockops attachment, the sockhashes the others: all outlive the
 * command, with or without the pins.
 */
#define _GNU_SOURCE /* setns */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "diag.h"
#include "log.h"
#include "loader.h"
#include "proxy.skel.h"
#include <hdrstrip/recv.h>

/* The skeleton's maps, in struct dev_maps' order (no methods). */
#define N_PROXY_MAPS 10
static void proxy_maps(struct hdrstrip_proxy *skel, struct bpf_map **maps)
{
	struct bpf_map *all[N_PROXY_MAPS] = { skel->maps.trie,	   skel->maps.config,
					      skel->maps.counters, skel->maps.header_hits,
					      skel->maps.events,   skel->maps.event_bucket,
					      skel->maps.socks,	   NULL /* methods */,
					      skel->maps.servers,  skel->maps.origins };

	memcpy(maps, all, sizeof(all));
}

/* The skeleton with its maps bound to @m (NULL: its own), and the programs
 * of @hook (proxy mode's HS_HOOK_CGROUP, origin mode's HS_HOOK_RECEIVE) set
 * to load when @load_progs. */
static struct hdrstrip_proxy *proxy_open(const struct dev_maps *m, int load_progs, int hook)
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
	skel->rodata->event_hook = (__u8)hook;
	bpf_program__set_autoload(skel->progs.hdrstrip_sockops,
				  load_progs && hook == HS_HOOK_CGROUP);
	bpf_program__set_autoload(skel->progs.hdrstrip_origin,
				  load_progs && hook == HS_HOOK_RECEIVE);
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
	struct hdrstrip_proxy *skel = proxy_open(NULL, 0, HS_HOOK_CGROUP);
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

/* The sk_msg and sk_skb programs off the sockhashes (a sockhash holds its
 * programs for as long as it lives); what was not attached is left. */
static void proxy_unhook(struct hdrstrip_proxy *skel)
{
	int msg = bpf_program__fd(skel->progs.hdrstrip_msg);
	int rx = bpf_program__fd(skel->progs.hdrstrip_rx);

	bpf_prog_detach2(msg, bpf_map__fd(skel->maps.socks), BPF_SK_MSG_VERDICT);
	bpf_prog_detach2(msg, bpf_map__fd(skel->maps.servers), BPF_SK_MSG_VERDICT);
	bpf_prog_detach2(rx, bpf_map__fd(skel->maps.servers), BPF_SK_SKB_VERDICT);
	bpf_prog_detach2(rx, bpf_map__fd(skel->maps.origins), BPF_SK_SKB_VERDICT);
}

/*
 * The programs onto the sockhashes: proxy mode's sends (socks) and both
 * modes' accepted connections (servers: responses and received requests;
 * origins: received requests only).
 */
static int proxy_hook_maps(struct hdrstrip_proxy *skel, int hook)
{
	int msg = bpf_program__fd(skel->progs.hdrstrip_msg);
	int rx = bpf_program__fd(skel->progs.hdrstrip_rx);

	if (hook == HS_HOOK_CGROUP &&
	    bpf_prog_attach(msg, bpf_map__fd(skel->maps.socks), BPF_SK_MSG_VERDICT, 0))
		return -errno;
	if (bpf_prog_attach(msg, bpf_map__fd(skel->maps.servers), BPF_SK_MSG_VERDICT, 0) ||
	    bpf_prog_attach(rx, bpf_map__fd(skel->maps.servers), BPF_SK_SKB_VERDICT, 0))
		return -errno;
	if (hook == HS_HOOK_RECEIVE &&
	    bpf_prog_attach(rx, bpf_map__fd(skel->maps.origins), BPF_SK_SKB_VERDICT, 0))
		return -errno;
	return 0;
}

int proxy_attach(const struct dev *d, const struct dev_maps *m, int hook)
{
	struct hdrstrip_proxy *skel = proxy_open(m, 1, hook);
	struct bpf_program *ops;
	int r;

	if (!skel)
		return -errno;
	/* The verifier runs here, before anything is attached. */
	r = hdrstrip_proxy__load(skel);
	if (r) {
		hdrstrip_proxy__destroy(skel);
		return r;
	}
	ops = hook == HS_HOOK_RECEIVE ? skel->progs.hdrstrip_origin : skel->progs.hdrstrip_sockops;
	r = proxy_hook_maps(skel, hook);
	/* MULTI: other sockops programs on the cgroup keep running. */
	if (!r && bpf_prog_attach(bpf_program__fd(ops), d->cgroup_fd, BPF_CGROUP_SOCK_OPS,
				  BPF_F_ALLOW_MULTI))
		r = -errno;
	if (r)
		proxy_unhook(skel);
	hdrstrip_proxy__destroy(skel);
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

static void cg_socks_free(struct cg_socks *cs)
{
	free(cs->ino);
	free(cs->nets);
	memset(cs, 0, sizeof(*cs));
}

/* The maps a cgroup program uses, found by name (program -> map ids). */
struct cg_maps {
	int hash[3]; /* the sockhashes: socks, servers, origins (-1: none) */
	int rxstate, ended;
};

static void cg_maps_close(struct cg_maps *c)
{
	for (int i = 0; i < 3; i++)
		if (c->hash[i] >= 0)
			close(c->hash[i]);
	if (c->rxstate >= 0)
		close(c->rxstate);
	if (c->ended >= 0)
		close(c->ended);
}

/* The maps of program @prog_fd into @c: 0, or -errno. */
static int cg_maps_of_prog(int prog_fd, struct cg_maps *c)
{
	static const char *const hashes[] = { HS_MAP_SOCKS, HS_MAP_SERVERS, HS_MAP_ORIGINS };
	__u32 ids[32] = { 0 }, len; /* zeroed: the kernel fills them, valgrind cannot see it */
	struct bpf_prog_info info;

	*c = (struct cg_maps){ .hash = { -1, -1, -1 }, .rxstate = -1, .ended = -1 };
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = HS_ARRAY_SIZE(ids);
	info.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	for (__u32 i = 0; i < info.nr_map_ids && i < HS_ARRAY_SIZE(ids); i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]), *slot = NULL;

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
			for (int k = 0; k < 3; k++)
				if (mi.type == BPF_MAP_TYPE_SOCKHASH && !strcmp(mi.name, hashes[k]))
					slot = &c->hash[k];
			if (!strcmp(mi.name, HS_MAP_RXSTATE))
				slot = &c->rxstate;
			if (!strcmp(mi.name, HS_MAP_ENDED))
				slot = &c->ended;
		}
		if (slot && *slot < 0)
			*slot = fd;
		else
			close(fd);
	}
	return 0;
}

/* The maps of the sk_skb program on sockhash @fd (a cgroup that is gone
 * has no sockops program left to find them from). */
static int cg_maps_of_sockhash(int fd, struct cg_maps *c)
{
	__u32 ids[4] = { 0 }, cnt = HS_ARRAY_SIZE(ids), flags = 0;
	int prog, r;

	*c = (struct cg_maps){ .hash = { -1, -1, -1 }, .rxstate = -1, .ended = -1 };
	if (bpf_prog_query(fd, BPF_SK_SKB_VERDICT, 0, &flags, ids, &cnt) || !cnt)
		return -ENOENT;
	prog = bpf_prog_get_fd_by_id(ids[0]);
	if (prog < 0)
		return -errno;
	r = cg_maps_of_prog(prog, c);
	close(prog);
	return r;
}

/*
 * The network namespaces the cgroup's processes are in, and the named ones
 * (/run/netns), each with its SO_NETNS_COOKIE (what the sockops program
 * recorded of each connection), and this process's own to come back to.
 */
struct cg_netns {
	int self;
	int n;
	int fd[256];
	__u64 cookie[256];
};

static void cg_netns_close(struct cg_netns *ns)
{
	for (int i = 0; i < ns->n; i++)
		close(ns->fd[i]);
	if (ns->self >= 0)
		close(ns->self);
	ns->n = 0;
	ns->self = -1;
}

static void cg_netns_add(struct cg_netns *ns, int fd)
{
	__u64 c;

	if (ns->n >= (int)HS_ARRAY_SIZE(ns->fd) || setns(fd, CLONE_NEWNET)) {
		close(fd);
		return;
	}
	c = diag_netns_cookie();
	for (int i = 0; i < ns->n; i++)
		if (ns->cookie[i] == c) {
			close(fd);
			return;
		}
	ns->cookie[ns->n] = c;
	ns->fd[ns->n++] = fd;
}

static void cg_netns_open(const struct dev *d, struct cg_netns *ns)
{
	struct cg_socks cs = { 0 };
	struct dirent *e;
	DIR *dd;

	ns->n = 0;
	ns->self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (ns->self < 0)
		return;
	cg_netns_add(ns, dup(ns->self));
	collect(d->cgroup_path, &cs, 0);
	for (size_t k = 0; k < cs.n_nets; k++) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/ns/net", cs.nets[k].pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			cg_netns_add(ns, fd);
	}
	cg_socks_free(&cs);
	/* The named ones too (a container runtime's, /run/netns): reached
	 * without the right to look into another user's processes. */
	dd = opendir("/run/netns");
	while (dd && (e = readdir(dd))) {
		char path[PATH_MAX];
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			cg_netns_add(ns, fd);
	}
	if (dd)
		closedir(dd);
	if (setns(ns->self, CLONE_NEWNET))
		pr_warn("cannot return to this command's network namespace: %s", strerror(errno));
}

/* Into the network namespace whose cookie is @cookie: 0, or -ENOENT. */
static int cg_netns_enter(const struct cg_netns *ns, __u64 cookie)
{
	for (int i = 0; i < ns->n; i++)
		if (ns->cookie[i] == cookie)
			return setns(ns->fd[i], CLONE_NEWNET) ? -errno : 0;
	return -ENOENT;
}

static void cg_netns_leave(const struct cg_netns *ns)
{
	if (ns->self >= 0 && setns(ns->self, CLONE_NEWNET))
		pr_warn("cannot return to this command's network namespace: %s", strerror(errno));
}

/* sock_diag on the socket @rx describes, in its namespace: query (@out) or
 * reset (@out NULL). */
static int rx_diag(const struct cg_netns *ns, const struct hs_rx *rx, __u64 cookie,
		   struct diag_tcp *out)
{
	int r = cg_netns_enter(ns, rx->netns_cookie);

	if (r)
		return r;
	r = out ? diag_tcp_query(&rx->key, cookie, out) : diag_tcp_destroy(&rx->key, cookie);
	cg_netns_leave(ns);
	return r;
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

/* How long detach waits for applications to read what their sockets
 * received (HS_DRAIN_MS), polling every HS_DRAIN_POLL_MS. */
#define HS_DRAIN_MS 5000
#define HS_DRAIN_POLL_MS 20

struct drain {
	struct timespec deadline; /* CLOCK_MONOTONIC */
	int pass; /* 0, then 1 (sockhashes_release()) */
	int waited; /* sockets that had to wait for their application */
	int reset; /* reset: ended by a drop, or bytes came as it left */
	int left; /* still waiting at the deadline: left in the sockhash */
};

static int drain_over(const struct drain *dr)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > dr->deadline.tv_sec ||
	       (now.tv_sec == dr->deadline.tv_sec && now.tv_nsec >= dr->deadline.tv_nsec);
}

/*
 * May the socket leave its sockhash? Only once its application has taken
 * it (accept()) and read everything it received (a FIN aside). Bytes the
 * sk_skb program passed wait in the psock's queue, which goes with the
 * psock: the stream would have a hole TCP never recovers from. Bytes that
 * came before accept() wait in the socket's own queue until the
 * application's first read runs them through the program: taken out, the
 * socket would hand them over unmasked.
 */
static int rx_read_all(const struct diag_tcp *t)
{
	int fin = t->state != 1 /* TCP_ESTABLISHED */ && t->state != 4 /* TCP_FIN_WAIT1 */ &&
		  t->state != 5 /* TCP_FIN_WAIT2 */;

	return t->inode && t->rqueue <= (__u32)fin;
}

/*
 * One pass over sockhash @fd, whose sockets' queues the sk_skb program
 * fills (@c->rxstate): a socket leaves once it may (rx_read_all()). One a
 * drop ended is reset as it leaves (bytes after the drop must not reach
 * the application by the plain path). Bytes that arrive between the check
 * and the removal and go through the program are lost with the psock: the
 * connection is reset then (never a stream with bytes missing). Returns
 * the sockets left, or -errno.
 */
static int drain_pass(int fd, const struct cg_maps *c, const struct cg_netns *ns, struct drain *dr)
{
	__u64 key, next;
	int more, left = 0;

	more = !bpf_map_get_next_key(fd, NULL, &key);
	if (!more && errno != ENOENT)
		return -errno;
	while (more) {
		struct hs_rx rx, after;
		struct diag_tcp t;
		int ended;

		more = !bpf_map_get_next_key(fd, &key, &next);
		if (!more && errno != ENOENT)
			return -errno;
		if (bpf_map_lookup_elem(c->rxstate, &key, &rx)) {
			/* Closing (its state went first): it leaves by itself. */
			bpf_map_delete_elem(fd, &key);
			key = next;
			continue;
		}
		ended = (rx.flags & HS_RX_ENDED) != 0;
		if (!ended && !rx_diag(ns, &rx, key, &t) && !rx_read_all(&t)) {
			left++;
			key = next;
			continue;
		}
		if (ended && !rx_diag(ns, &rx, key, NULL))
			dr->reset++;
		if (bpf_map_delete_elem(fd, &key) && errno != ENOENT)
			return -errno;
		if (!ended && !bpf_map_lookup_elem(c->rxstate, &key, &after) &&
		    after.passed != rx.passed) {
			/* Passed to the psock's queue as it went. */
			rx_diag(ns, &rx, key, NULL);
			dr->reset++;
		}
		key = next;
	}
	return left;
}

/* Sockhash @fd emptied: at once (socks: no verdict program, nothing
 * queued), or drained until the deadline. */
static int sockhash_release(int fd, const struct cg_maps *c, const struct cg_netns *ns,
			    struct drain *dr)
{
	struct timespec pause = { 0, HS_DRAIN_POLL_MS * 1000000L };
	int r;

	if (c->rxstate < 0)
		return sockhash_flush(fd);
	for (int first = 1;; first = 0) {
		r = drain_pass(fd, c, ns, dr);
		if (r <= 0)
			return r;
		if (first && !dr->pass)
			dr->waited += r;
		if (drain_over(dr)) {
			dr->left += r;
			return 0;
		}
		nanosleep(&pause, NULL);
	}
}

/*
 * Empty the sockhashes of @c twice: a sockops run that began before the
 * detach may still add a socket after the first pass; the second, after an
 * RCU grace period (MEMBARRIER_CMD_GLOBAL waits for one; on nohz_full
 * kernels it cannot, and the second pass only narrows the window), takes
 * it out. Returns the sockets left in them (their applications have not
 * read what they received), or -errno.
 */
static int sockhashes_release(const struct dev *d, const struct cg_maps *c)
{
	struct drain dr = { 0 };
	struct cg_netns ns = { .self = -1 };
	int r = 0;

	cg_netns_open(d, &ns);
	clock_gettime(CLOCK_MONOTONIC, &dr.deadline);
	dr.deadline.tv_sec += HS_DRAIN_MS / 1000;
	for (int pass = 0; pass < 2 && !r; pass++) {
		if (pass)
			(void)syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
		dr.pass = pass;
		dr.left = 0;
		for (int i = 0; i < 3 && !r; i++)
			if (c->hash[i] >= 0)
				r = i ? sockhash_release(c->hash[i], c, &ns, &dr)
				      : sockhash_flush(c->hash[i]);
	}
	cg_netns_close(&ns);
	if (dr.waited)
		printf("%d connection%s waited for %s application to read what %s received\n",
		       dr.waited, dr.waited == 1 ? "" : "s", dr.waited == 1 ? "its" : "their",
		       dr.waited == 1 ? "it" : "they");
	if (dr.reset)
		printf("reset %d connection%s a drop had ended, or that received bytes as %s left\n",
		       dr.reset, dr.reset == 1 ? "" : "s", dr.reset == 1 ? "it" : "they");
	if (dr.left)
		printf("%d connection%s still hold%s bytes %s application has not read after %d s: "
		       "left filtered (taken out, %s would lose them or hand them over unmasked); "
		       "the pins stay until %s done, and 'hdrstrip detach' again takes %s out\n",
		       dr.left, dr.left == 1 ? "" : "s", dr.left == 1 ? "s" : "",
		       dr.left == 1 ? "its" : "their", HS_DRAIN_MS / 1000,
		       dr.left == 1 ? "it" : "they", dr.left == 1 ? "it is" : "they are",
		       dr.left == 1 ? "it" : "them");
	return r ? r : dr.left;
}

int proxy_release_socks(const struct dev *d, int fd)
{
	struct cg_maps c;
	int r;

	if (cg_maps_of_sockhash(fd, &c))
		return sockhash_flush(fd);
	/* The sockhash given, whichever of the program's it is. */
	for (int i = 0; i < 3; i++)
		if (c.hash[i] >= 0) {
			close(c.hash[i]);
			c.hash[i] = -1;
		}
	c.hash[1] = fd;
	r = sockhashes_release(d, &c);
	c.hash[1] = -1;
	cg_maps_close(&c);
	return r;
}

int proxy_socks_left(const struct dev *d)
{
	static const char *const maps[] = { HS_MAP_SERVERS, HS_MAP_ORIGINS };
	int n = 0;

	for (size_t k = 0; k < HS_ARRAY_SIZE(maps); k++) {
		char path[PATH_MAX + 32];
		__u64 key, next;
		int fd, more;

		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, maps[k]);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		for (more = !bpf_map_get_next_key(fd, NULL, &key); more;
		     more = !bpf_map_get_next_key(fd, &key, &next), key = next)
			n++;
		close(fd);
	}
	return n;
}

int proxy_release_pinned(const struct dev *d)
{
	static const char *const maps[] = { HS_MAP_SOCKS, HS_MAP_SERVERS, HS_MAP_ORIGINS };
	int r, left = 0;

	for (size_t k = 0; k < HS_ARRAY_SIZE(maps); k++) {
		char path[PATH_MAX + 32];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, maps[k]);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		r = proxy_release_socks(d, fd);
		close(fd);
		if (r < 0)
			return r;
		left += r;
	}
	return left;
}

int proxy_detach(const struct dev *d, __u32 prog_id)
{
	int fd = bpf_prog_get_fd_by_id(prog_id), r;
	struct cg_maps c;

	if (fd < 0)
		return -errno;
	/* Before the detach: the program is what leads to its maps. */
	r = cg_maps_of_prog(fd, &c);
	if (!r && c.hash[0] < 0 && c.hash[1] < 0 && c.hash[2] < 0)
		r = -ENOENT;
	if (r) {
		close(fd);
		cg_maps_close(&c);
		return r;
	}
	r = bpf_prog_detach2(fd, d->cgroup_fd, BPF_CGROUP_SOCK_OPS) ? -errno : 0;
	close(fd);
	/*
	 * No new socket enters now, but a sockhash would let go of the ones
	 * in it (and they of the sk_msg and sk_skb programs) only when the
	 * kernel frees the map: from a work queue, after an RCU grace period,
	 * some time after its last reference (the pins, which the caller
	 * removes) goes; seconds on a busy machine. Until then they would stay
	 * filtered, and the map's end would drop what the sk_skb program had
	 * queued for them. Empty them now instead. Bytes a socket holds back
	 * (corked) are freed with its psock.
	 */
	if (!r)
		r = sockhashes_release(d, &c);
	cg_maps_close(&c);
	return r < 0 ? r : 0;
}

int origin_reset_ended(const struct dev *d, __u32 prog_id)
{
	struct cg_netns ns = { .self = -1 };
	int fd = bpf_prog_get_fd_by_id(prog_id), r, n = 0;
	struct cg_maps c;
	__u64 key, next;
	int more;

	if (fd < 0)
		return -errno;
	r = cg_maps_of_prog(fd, &c);
	close(fd);
	if (r || c.ended < 0 || c.rxstate < 0) {
		cg_maps_close(&c);
		return r ? r : -ENOENT;
	}
	more = !bpf_map_get_next_key(c.ended, NULL, &key);
	if (more)
		cg_netns_open(d, &ns);
	while (more) {
		struct hs_rx rx;

		more = !bpf_map_get_next_key(c.ended, &key, &next);
		/* Its state went with the socket: nothing left to reset. */
		if (!bpf_map_lookup_elem(c.rxstate, &key, &rx) && !rx_diag(&ns, &rx, key, NULL))
			n++;
		bpf_map_delete_elem(c.ended, &key);
		key = next;
	}
	cg_netns_close(&ns);
	cg_maps_close(&c);
	return n;
}

/* Established connections to @ports (@accepted: from them) in one TCP
 * table that @cs holds. */
static int count_table(const char *table, const struct cg_socks *cs, const __u64 *ports,
		       int accepted)
{
	FILE *f = fopen(table, "r");
	char line[512];
	int count = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char loc[64], rem[64];
		unsigned int state, port;
		unsigned long i;
		char *colon;

		/* sl local rem st tx:rx tr:tm retrnsmt uid timeout inode */
		if (sscanf(line, " %*s %63s %63s %x %*s %*s %*s %*u %*u %lu", loc, rem, &state,
			   &i) != 4)
			continue;
		colon = strrchr(accepted ? loc : rem, ':');
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

int count_preexisting(const struct dev *d, const __u64 *ports, int accepted)
{
	struct cg_socks cs = { 0 };
	int count = 0;

	collect(d->cgroup_path, &cs, 0);
	for (size_t k = 0; k < cs.n_nets; k++) {
		static const char *const tables[] = { "tcp", "tcp6" };

		for (size_t t = 0; t < HS_ARRAY_SIZE(tables); t++) {
			char path[64];

			snprintf(path, sizeof(path), "/proc/%d/net/%s", cs.nets[k].pid, tables[t]);
			count += count_table(path, &cs, ports, accepted);
		}
	}
	cg_socks_free(&cs);
	return count;
}
