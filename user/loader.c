// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Devices, what the kernel has attached to them, and the maps behind it;
 * bpffs, pin directories and their locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "cli.h"
#include "loader.h"
#include "vlog.h"

const char *const hook_names[HOOK_MAX] = { "xdp", "tc-ingress", "tc-egress", "cgroup" };

static const char *const map_names[] = { HS_MAP_TRIE, HS_MAP_CONFIG, HS_MAP_COUNTERS,
					 HS_MAP_HEADER_HITS };

int hook_parse(const char *s)
{
	/* Proxy mode is --cgroup, not a --hook of an interface. */
	for (int i = 0; i < HOOK_CGROUP; i++)
		if (!strcmp(s, hook_names[i]))
			return i;
	return -1;
}

const char *errstr(int err)
{
	static char buf[128];

	libbpf_strerror(err < 0 ? err : -err, buf, sizeof(buf));
	return buf;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_DEBUG)
		vlog_feed(fmt, ap); /* kept while a hook attaches: a verifier log */
	if (level == LIBBPF_DEBUG && g_opts.verbose < 2)
		return 0;
	if (!g_opts.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int print_libxdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBXDP_DEBUG)
		vlog_feed(fmt, ap);
	if (level == LIBXDP_DEBUG && g_opts.verbose < 2)
		return 0;
	if (!g_opts.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void loader_setup_logging(int verbose)
{
	(void)verbose;
	libbpf_set_print(print_libbpf);
	libxdp_set_print(print_libxdp);
}

int require_root(const char *cmd)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	__u64 eff;
	int bpf_ok, net_ok;

	if (syscall(SYS_capget, &hdr, data))
		return 0; /* let the operations themselves fail */
	eff = data[0].effective | ((__u64)data[1].effective << 32);
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
	bpf_ok = (eff >> CAP_BPF) & 1 || (eff >> CAP_SYS_ADMIN) & 1;
	net_ok = (eff >> CAP_NET_ADMIN) & 1;
	if (bpf_ok && net_ok)
		return 0;
	pr_err("%s needs root: it is missing %s%s%s (run it as root, e.g. with sudo)", cmd,
	       bpf_ok ? "" : "CAP_BPF", !bpf_ok && !net_ok ? " and " : "",
	       net_ok ? "" : "CAP_NET_ADMIN");
	return -EPERM;
}

static __u64 netns_ino_self(void)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return 0;
	return st.st_ino;
}

int dev_resolve(const char *name, struct dev *d)
{
	memset(d, 0, sizeof(*d));
	d->cgroup_fd = -1;
	if (strlen(name) >= IF_NAMESIZE || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return -EINVAL;
	d->ifindex = if_nametoindex(name);
	if (!d->ifindex)
		return -ENODEV;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->netns_ino = netns_ino_self();
	snprintf(d->pin_dir, sizeof(d->pin_dir), "%s/%s", HS_PIN_ROOT, name);
	return 0;
}

void dev_maps_init(struct dev_maps *m)
{
	m->trie = m->config = m->counters = m->header_hits = -1;
}

void dev_maps_close(struct dev_maps *m)
{
	int *fds[] = { &m->trie, &m->config, &m->counters, &m->header_hits };

	for (size_t i = 0; i < HS_ARRAY_SIZE(fds); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

static int *dev_map_slot(struct dev_maps *m, int i)
{
	int *fds[] = { &m->trie, &m->config, &m->counters, &m->header_hits };

	return fds[i];
}

/* The kernel's name of program @id (at most 15 bytes). */
static int prog_name(__u32 id, char name[BPF_OBJ_NAME_LEN])
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id), r;

	if (fd < 0)
		return -errno;
	r = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	close(fd);
	if (!r)
		memcpy(name, info.name, BPF_OBJ_NAME_LEN);
	return r;
}

static int prog_name_is(__u32 id, const char *name)
{
	char n[BPF_OBJ_NAME_LEN];

	return !prog_name(id, n) && !strcmp(n, name);
}

/*
 * A program attached alone is named by libbpf's query; only libxdp's
 * dispatcher needs libxdp to list the programs it runs. (libxdp reads the
 * attached program's BTF twice to tell, most of the cost of a query.) The
 * modes are libxdp's reading of the netlink attach mode.
 */
static int query_xdp(const struct dev *d, struct dev_state *st)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	char name[BPF_OBJ_NAME_LEN];
	__u32 id = 0;
	int mode = XDP_MODE_UNSPEC;
	long err = bpf_xdp_query(d->ifindex, 0, &q);

	if (err)
		return err == -ENOENT ? 0 : (int)err;
	if (q.attach_mode == XDP_ATTACHED_DRV ||
	    (q.attach_mode == XDP_ATTACHED_MULTI && q.drv_prog_id)) {
		id = q.drv_prog_id;
		mode = XDP_MODE_NATIVE;
	} else if (q.attach_mode == XDP_ATTACHED_SKB || q.attach_mode == XDP_ATTACHED_MULTI) {
		id = q.skb_prog_id;
		mode = XDP_MODE_SKB;
	}
	if (!id)
		return 0; /* nothing, or only an offloaded program */
	err = prog_name(id, name);
	if (err)
		return err == -ENOENT ? 0 : (int)err; /* detached meanwhile */
	if (strcmp(name, "xdp_dispatcher")) {
		if (!strcmp(name, "hdrstrip_xdp")) {
			st->prog_id[HOOK_XDP] = id;
			st->xdp_legacy = 1;
		} else {
			st->foreign_xdp_id = id;
		}
		st->xdp_mode = mode;
		return 0;
	}
	mp = xdp_multiprog__get_from_ifindex(d->ifindex);
	err = libxdp_get_error(mp);
	if (err)
		return err == -ENOENT ? 0 : (int)err;
	if (!mp)
		return 0;
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && !strcmp(xdp_program__name(p), "hdrstrip_xdp")) {
			st->prog_id[HOOK_XDP] = xdp_program__id(p);
			st->xdp_legacy = 1;
		} else if (p) {
			st->foreign_xdp_id = xdp_program__id(p);
		}
	} else {
		while ((p = xdp_multiprog__next_prog(p, mp)))
			if (!strcmp(xdp_program__name(p), "hdrstrip_xdp"))
				st->prog_id[HOOK_XDP] = xdp_program__id(p);
	}
	st->xdp_mode = xdp_multiprog__attach_mode(mp);
	xdp_multiprog__close(mp);
	return 0;
}

static int query_tc(const struct dev *d, int hook, struct dev_state *st)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, h, .ifindex = d->ifindex,
			    .attach_point =
				    hook == HOOK_TC_INGRESS ? BPF_TC_INGRESS : BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, o, .handle = HS_TC_HANDLE, .priority = HS_TC_PRIO);
	int r = bpf_tc_query(&h, &o);

	if (r == -ENOENT || r == -EINVAL)
		return 0; /* no qdisc, or no such filter */
	if (r)
		return r;
	if (prog_name_is(o.prog_id, "hdrstrip_tc"))
		st->prog_id[hook] = o.prog_id;
	return 0;
}

/* hdrstrip's sockops program on a cgroup. */
static int query_cgroup(const struct dev *d, struct dev_state *st)
{
	__u32 ids[64] = { 0 }, cnt = HS_ARRAY_SIZE(ids), flags = 0;

	if (bpf_prog_query(d->cgroup_fd, BPF_CGROUP_SOCK_OPS, 0, &flags, ids, &cnt))
		return errno == ENOENT ? 0 : -errno;
	for (__u32 i = 0; i < cnt && i < HS_ARRAY_SIZE(ids); i++)
		/* Program names keep 15 bytes: "hdrstrip_sockop". */
		if (prog_name_is(ids[i], "hdrstrip_sockop"))
			st->prog_id[HOOK_CGROUP] = ids[i];
	return 0;
}

static int query(const struct dev *d, struct dev_state *st, int any)
{
	int r;

	memset(st, 0, sizeof(*st));
	if (d->cgroup_fd >= 0)
		return query_cgroup(d, st);
	r = query_xdp(d, st);
	if (!r && !(any && st->prog_id[HOOK_XDP]))
		r = query_tc(d, HOOK_TC_INGRESS, st);
	if (!r && !(any && st->prog_id[HOOK_TC_INGRESS]))
		r = query_tc(d, HOOK_TC_EGRESS, st);
	return r;
}

int dev_query(const struct dev *d, struct dev_state *st)
{
	return query(d, st, 0);
}

int dev_query_any(const struct dev *d, struct dev_state *st)
{
	return query(d, st, 1);
}

int dev_attached_hooks(const struct dev_state *st)
{
	int n = 0;

	for (int i = 0; i < HOOK_MAX; i++)
		n += st->prog_id[i] != 0;
	return n;
}

/* Open hdrstrip's maps among the maps program @prog_id uses. */
static int maps_of_prog(__u32 prog_id, struct dev_maps *m)
{
	__u32 ids[16] = { 0 }, len; /* zeroed: see map_in_use() */
	struct bpf_prog_info info;
	int fd, r, found = 0;

	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = HS_ARRAY_SIZE(ids);
	info.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(info);
	r = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (r)
		return -errno;
	for (__u32 i = 0; i < info.nr_map_ids && i < HS_ARRAY_SIZE(ids); i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);
		int mfd = bpf_map_get_fd_by_id(ids[i]);

		if (mfd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(mfd, &mi, &mlen)) {
			close(mfd);
			continue;
		}
		for (size_t k = 0; k < HS_ARRAY_SIZE(map_names); k++) {
			int *slot = dev_map_slot(m, k);

			if (!strcmp(mi.name, map_names[k]) && *slot < 0) {
				*slot = mfd;
				mfd = -1;
				found++;
				break;
			}
		}
		if (mfd >= 0)
			close(mfd);
	}
	if (found != (int)HS_ARRAY_SIZE(map_names)) {
		dev_maps_close(m);
		return -ENOENT;
	}
	return 0;
}

int dev_open_maps_from_kernel(const struct dev_state *st, struct dev_maps *m)
{
	dev_maps_init(m);
	for (int i = 0; i < HOOK_MAX; i++)
		if (st->prog_id[i] && !maps_of_prog(st->prog_id[i], m))
			return 0;
	return -ENOENT;
}

static int parent_pid(int pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	/* "pid (comm) state ppid ...": comm may hold spaces and parentheses. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid;
}

/*
 * Is this process in a mount namespace of its own, one its ancestors do not
 * share (what 'ip netns exec' sets up)? Compare with the oldest ancestor
 * whose namespace we can read.
 */
static int private_mount_ns(void)
{
	struct stat self, anc;
	__u64 top = 0;
	char path[64];
	int pid = getpid();

	if (stat("/proc/self/ns/mnt", &self))
		return 0;
	for (int depth = 0; depth < 64 && (pid = parent_pid(pid)) > 0; depth++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
		if (stat(path, &anc))
			break;
		top = anc.st_ino;
		if (pid == 1)
			break;
	}
	return top && top != self.st_ino;
}

int bpffs_ensure(int warn_private)
{
	static int warned;
	struct statfs sfs;

	if (!statfs(HS_BPFFS, &sfs) && sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (mkdir(HS_BPFFS, 0700) && errno != EEXIST)
		return -errno;
	if (mount("bpf", HS_BPFFS, "bpf", 0, "mode=0700"))
		return -errno;
	/* A private mount namespace (what 'ip netns exec' gives) loses this
	 * mount, and the pins in it, when the command exits. */
	if (warn_private && !warned && private_mount_ns()) {
		pr_warn("bpffs was not mounted in this mount namespace: the pins under %s vanish "
			"when this command exits (the attachment itself stays, and later commands "
			"find it from the interface); run 'hdrstrip -n NETNS ...' instead of "
			"'ip netns exec NETNS hdrstrip ...' to keep the pins",
			HS_PIN_ROOT);
		warned = 1;
	}
	return 0;
}

int pin_lock(const struct dev *d, struct pin_lock *l)
{
	struct stat a, b;

	l->fd = -1;
	snprintf(l->dir, sizeof(l->dir), "%s", d->pin_dir);
	for (;;) {
		if (mkdir(HS_PIN_ROOT, 0700) && errno != EEXIST)
			return -errno;
		if (mkdir(d->pin_dir, 0700) && errno != EEXIST) {
			if (errno == ENOENT)
				continue; /* the root went away with another device's pins */
			return -errno;
		}
		l->fd = open(d->pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (l->fd < 0) {
			if (errno == ENOENT)
				continue; /* removed under us by a detach */
			return -errno;
		}
		if (flock(l->fd, LOCK_EX)) {
			int e = -errno;

			close(l->fd);
			l->fd = -1;
			return e;
		}
		/* The holder before us may have removed the directory. */
		if (!fstat(l->fd, &a) && !stat(d->pin_dir, &b) && a.st_ino == b.st_ino)
			return 0;
		close(l->fd);
		l->fd = -1;
	}
}

void pin_unlock(struct pin_lock *l)
{
	if (l->fd < 0)
		return;
	/* A command that pinned nothing leaves no directory behind: these
	 * fail while pins remain (or another device's directory does). */
	rmdir(l->dir);
	rmdir(HS_PIN_ROOT);
	close(l->fd);
	l->fd = -1;
}

int pins_open(const struct dev *d, struct dev_maps *m)
{
	char path[PATH_MAX + 32];

	dev_maps_init(m);
	for (size_t i = 0; i < HS_ARRAY_SIZE(map_names); i++) {
		int *slot = dev_map_slot(m, i);

		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, map_names[i]);
		*slot = bpf_obj_get(path);
		if (*slot < 0) {
			int e = -errno;

			dev_maps_close(m);
			return e;
		}
	}
	return 0;
}

int map_in_use(int map_fd)
{
	struct bpf_map_info mi = { 0 };
	__u32 mlen = sizeof(mi), id = 0;

	if (bpf_obj_get_info_by_fd(map_fd, &mi, &mlen))
		return 0;
	while (!bpf_prog_get_next_id(id, &id)) {
		/* Zeroed: the kernel fills it through a pointer, which valgrind
		 * cannot see. */
		__u32 ids[16] = { 0 };
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.nr_map_ids = HS_ARRAY_SIZE(ids);
		info.map_ids = (__u64)(unsigned long)ids;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			for (__u32 i = 0; i < info.nr_map_ids && i < HS_ARRAY_SIZE(ids); i++)
				if (ids[i] == mi.id) {
					close(fd);
					return 1;
				}
		close(fd);
	}
	return 0;
}

void pins_remove(const struct dev *d)
{
	char path[PATH_MAX + 32];

	for (size_t i = 0; i < HS_ARRAY_SIZE(map_names); i++) {
		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, map_names[i]);
		unlink(path);
	}
	/* Proxy mode's sockhash: the last reference to it lets its sockets go. */
	snprintf(path, sizeof(path), "%s/%s", d->pin_dir, HS_MAP_SOCKS);
	unlink(path);
	rmdir(d->pin_dir);
	rmdir(HS_PIN_ROOT); /* only if no other device is left */
}

int cgroup_resolve(const char *path, struct dev *d)
{
	struct statfs sfs;
	struct stat st;

	memset(d, 0, sizeof(*d));
	d->cgroup_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->cgroup_fd < 0)
		return -errno;
	if (fstatfs(d->cgroup_fd, &sfs) || fstat(d->cgroup_fd, &st)) {
		int e = -errno;

		dev_close(d);
		return e;
	}
	if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		dev_close(d);
		return -EMEDIUMTYPE;
	}
	/* A cgroup's id is its directory's inode on cgroup2. */
	d->cgroup_id = st.st_ino;
	snprintf(d->name, sizeof(d->name), "cgroup-%llu", (unsigned long long)d->cgroup_id);
	snprintf(d->pin_dir, sizeof(d->pin_dir), "%s/%s", HS_PIN_ROOT, d->name);
	if (!realpath(path, d->cgroup_path))
		snprintf(d->cgroup_path, sizeof(d->cgroup_path), "%s", path);
	return 0;
}

void dev_close(struct dev *d)
{
	if (d->cgroup_fd >= 0)
		close(d->cgroup_fd);
	d->cgroup_fd = -1;
}
