// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Devices, what the kernel has attached to them, and the maps behind it;
 * bpffs, pin directories and their locks.
 */
#define _GNU_SOURCE /* open_by_handle_at */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"
#include "loader.h"

/* The maps of struct dev_maps, in its order: config before socks, the
 * last to be pinned (pins_write). */
static const char *const map_names[] = { HS_MAP_TRIE,	     HS_MAP_CONFIG,  HS_MAP_COUNTERS,
					 HS_MAP_HEADER_HITS, HS_MAP_EVENTS,  HS_MAP_EVENT_BUCKET,
					 HS_MAP_SOCKS,	     HS_MAP_METHODS, HS_MAP_SERVERS,
					 HS_MAP_ORIGINS };
/* All but socks, servers and origins (the cgroup programs') and methods
 * (an interface's hooks'): every program has them. */
#define N_SHARED_MAPS 6

int hook_parse(const char *s)
{
	/* Proxy mode is --cgroup, not a --hook of an interface. */
	return hs_name_find(hs_hook_names, HS_HOOK_CGROUP, s);
}

/* This process's effective capabilities; all of them when they cannot be
 * read (the operations themselves then fail, and say so). */
static __u64 caps_effective(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return ~0ULL;
	return data[0].effective | ((__u64)data[1].effective << 32);
}

const char *perm_hint(int cap, const char *cap_name, char *buf, size_t size)
{
	if ((caps_effective() >> cap) & 1)
		buf[0] = 0;
	else if (geteuid())
		snprintf(buf, size, " (it needs %s: run as root)", cap_name);
	else
		/* Root, without it: its bounding set (a unit's or a
		 * container's) left it out, and sudo would not help. */
		snprintf(buf, size,
			 " (it needs %s: this process runs as root, but its capability bounding "
			 "set leaves it out)",
			 cap_name);
	return buf;
}

int caps_bpf(void)
{
	__u64 eff = caps_effective();

#ifndef CAP_BPF
#define CAP_BPF 39
#endif
	return (eff >> CAP_BPF) & 1 || (eff >> CAP_SYS_ADMIN) & 1;
}

int require_root(const char *cmd)
{
	__u64 eff = caps_effective();
	int bpf_ok, net_ok;

#ifndef CAP_BPF
#define CAP_BPF 39
#endif
	bpf_ok = (eff >> CAP_BPF) & 1 || (eff >> CAP_SYS_ADMIN) & 1;
	net_ok = (eff >> CAP_NET_ADMIN) & 1;
	if (bpf_ok && net_ok)
		return 0;
	if (geteuid())
		pr_err("%s needs root: it is missing %s%s%s (run it as root, e.g. with sudo)", cmd,
		       bpf_ok ? "" : "CAP_BPF", !bpf_ok && !net_ok ? " and " : "",
		       net_ok ? "" : "CAP_NET_ADMIN");
	else
		pr_err("%s needs %s%s%s: this process runs as root, but its capability bounding "
		       "set leaves %s out (add %s to the unit's CapabilityBoundingSet= or the "
		       "container's capabilities)",
		       cmd, bpf_ok ? "" : "CAP_BPF", !bpf_ok && !net_ok ? " and " : "",
		       net_ok ? "" : "CAP_NET_ADMIN", bpf_ok || net_ok ? "it" : "them",
		       bpf_ok || net_ok ? "it" : "them");
	return -EPERM;
}

static __u64 netns_ino_self(void)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return 0;
	return st.st_ino;
}

int netns_enter(const char *name, char *path, size_t size, int *entering)
{
	int fd, r = 0;

	*entering = 0;
	if (strchr(name, '/'))
		snprintf(path, size, "%s", name);
	else
		snprintf(path, size, "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*entering = 1;
	if (setns(fd, CLONE_NEWNET))
		r = -errno;
	close(fd);
	return r;
}

/* What ip link calls each link type hdrstrip may meet, and the framing
 * of its packets at XDP and TC. */
static const struct {
	const char *name;
	int arphrd;
	int link_type;
} link_types[] = {
	{ "ether", ARPHRD_ETHER, HS_L2_ETHER },
	{ "loopback", ARPHRD_LOOPBACK, HS_L2_ETHER },
	/* No link header: the program sees the IP header first. */
	{ "none", ARPHRD_NONE, HS_L2_NONE }, /* tun, wireguard */
	{ "rawip", ARPHRD_RAWIP, HS_L2_NONE },
	{ "ipip", ARPHRD_TUNNEL, HS_L2_NONE },
	{ "tunnel6", ARPHRD_TUNNEL6, HS_L2_NONE },
	{ "sit", ARPHRD_SIT, HS_L2_NONE },
	{ "gre", ARPHRD_IPGRE, HS_L2_NONE },
	{ "ip6gre", 823 /* ARPHRD_IP6GRE */, HS_L2_NONE },
	{ "ppp", ARPHRD_PPP, HS_L2_NONE },
	{ "infiniband", ARPHRD_INFINIBAND, -1 },
	{ "ieee802.15.4", ARPHRD_IEEE802154, -1 },
	{ "can", ARPHRD_CAN, -1 },
};

const char *arphrd_name(int arphrd)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(link_types); i++)
		if (link_types[i].arphrd == arphrd)
			return link_types[i].name;
	return "unknown";
}

/* @d's link type, from the kernel (SIOCGIFHWADDR's address family). */
static void dev_link_type(struct dev *d)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	d->arphrd = -1;
	d->link_type = -1;
	if (fd < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%.*s", (int)sizeof(ifr.ifr_name) - 1,
		 d->name);
	if (!ioctl(fd, SIOCGIFHWADDR, &ifr))
		d->arphrd = ifr.ifr_hwaddr.sa_family;
	close(fd);
	for (size_t i = 0; i < HS_ARRAY_SIZE(link_types); i++)
		if (link_types[i].arphrd == d->arphrd)
			d->link_type = link_types[i].link_type;
}

int dev_resolve(const char *name, struct dev *d)
{
	memset(d, 0, sizeof(*d));
	d->cgroup_fd = -1;
	if (!*name || strlen(name) >= IF_NAMESIZE || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return -EINVAL;
	d->ifindex = if_nametoindex(name);
	if (!d->ifindex)
		return -ENODEV;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->netns_ino = netns_ino_self();
	snprintf(d->pin_dir, sizeof(d->pin_dir), "%s/%s", HS_PIN_ROOT, name);
	dev_link_type(d);
	return 0;
}

void dev_maps_init(struct dev_maps *m)
{
	m->trie = m->config = m->counters = m->header_hits = m->events = m->event_bucket =
		m->socks = m->methods = m->servers = m->origins = -1;
}

static int *dev_map_slot(struct dev_maps *m, size_t i)
{
	int *fds[] = { &m->trie,	 &m->config, &m->counters, &m->header_hits, &m->events,
		       &m->event_bucket, &m->socks,  &m->methods,  &m->servers,	    &m->origins };

	_Static_assert(HS_ARRAY_SIZE(fds) == HS_ARRAY_SIZE(map_names), "a name for every map");
	return fds[i];
}

void dev_maps_close(struct dev_maps *m)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(map_names); i++) {
		int *fd = dev_map_slot(m, i);

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

int dev_maps_reuse(const struct dev_maps *m, struct bpf_map *const *maps, size_t n)
{
	struct dev_maps fds = *m;
	int r = 0;

	for (size_t i = 0; i < n && i < HS_ARRAY_SIZE(map_names) && !r; i++)
		if (maps[i]) /* NULL: a map this kind of program has not */
			r = bpf_map__reuse_fd(maps[i], *dev_map_slot(&fds, i));
	return r;
}

int dev_maps_dup(struct dev_maps *m, struct bpf_map *const *maps, size_t n)
{
	dev_maps_init(m);
	for (size_t i = 0; i < n && i < HS_ARRAY_SIZE(map_names); i++) {
		int *fd = dev_map_slot(m, i);

		if (!maps[i])
			continue;
		*fd = fcntl(bpf_map__fd(maps[i]), F_DUPFD_CLOEXEC, 3);
		if (*fd < 0) {
			int e = -errno;

			dev_maps_close(m);
			return e;
		}
	}
	return 0;
}

__u32 map_id(int fd)
{
	struct bpf_map_info mi = { 0 };
	__u32 len = sizeof(mi);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &mi, &len))
		return 0;
	return mi.id;
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
			st->prog_id[HS_HOOK_XDP] = id;
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
			st->prog_id[HS_HOOK_XDP] = xdp_program__id(p);
			st->xdp_legacy = 1;
		} else if (p) {
			st->foreign_xdp_id = xdp_program__id(p);
		}
	} else {
		while ((p = xdp_multiprog__next_prog(p, mp)))
			if (!strcmp(xdp_program__name(p), "hdrstrip_xdp"))
				st->prog_id[HS_HOOK_XDP] = xdp_program__id(p);
	}
	st->xdp_mode = xdp_multiprog__attach_mode(mp);
	xdp_multiprog__close(mp);
	return 0;
}

static int query_tc(const struct dev *d, int hook, struct dev_state *st)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, h, .ifindex = d->ifindex,
			    .attach_point =
				    hook == HS_HOOK_TC_INGRESS ? BPF_TC_INGRESS : BPF_TC_EGRESS);
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

/* hdrstrip's sockops program on a cgroup: proxy mode's, or origin
 * mode's. */
static int query_cgroup(const struct dev *d, struct dev_state *st)
{
	__u32 ids[64] = { 0 }, cnt = HS_ARRAY_SIZE(ids), flags = 0;

	if (bpf_prog_query(d->cgroup_fd, BPF_CGROUP_SOCK_OPS, 0, &flags, ids, &cnt))
		return errno == ENOENT ? 0 : -errno;
	for (__u32 i = 0; i < cnt && i < HS_ARRAY_SIZE(ids); i++) {
		/* Program names keep 15 bytes: "hdrstrip_sockop". */
		if (prog_name_is(ids[i], "hdrstrip_sockop"))
			st->prog_id[HS_HOOK_CGROUP] = ids[i];
		else if (prog_name_is(ids[i], "hdrstrip_origin"))
			st->prog_id[HS_HOOK_RECEIVE] = ids[i];
	}
	return 0;
}

/* Every hook: update must see them all, to find one set of maps. */
static int query(const struct dev *d, struct dev_state *st)
{
	int r;

	memset(st, 0, sizeof(*st));
	if (d->cgroup)
		return d->cgroup_fd >= 0 ? query_cgroup(d, st) : 0; /* a deleted cgroup */
	if (!d->ifindex)
		return 0; /* an interface that is gone */
	r = query_xdp(d, st);
	if (!r)
		r = query_tc(d, HS_HOOK_TC_INGRESS, st);
	if (!r)
		r = query_tc(d, HS_HOOK_TC_EGRESS, st);
	return r;
}

int dev_query(const struct dev *d, struct dev_state *st)
{
	return query(d, st);
}

int dev_attached_hooks(const struct dev_state *st)
{
	int n = 0;

	for (int i = 0; i < HS_HOOK_MAX; i++)
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
				found += k < N_SHARED_MAPS;
				break;
			}
		}
		if (mfd >= 0)
			close(mfd);
	}
	if (found != N_SHARED_MAPS) {
		dev_maps_close(m);
		return -ENOENT;
	}
	return 0;
}

int dev_open_maps_from_kernel(const struct dev_state *st, struct dev_maps *m)
{
	__u32 first = 0;
	int r = -ENOENT;

	dev_maps_init(m);
	for (int i = 0; i < HS_HOOK_MAX; i++) {
		struct dev_maps o;

		if (!st->prog_id[i])
			continue;
		dev_maps_init(&o);
		if (maps_of_prog(st->prog_id[i], &o))
			continue; /* detached meanwhile */
		if (!first) {
			*m = o;
			first = map_id(m->config);
			r = 0;
			continue;
		}
		/* Two sets of maps for one device: update would change one
		 * hook only. Say so; never pick one silently. */
		if (map_id(o.config) != first)
			r = -EXDEV;
		dev_maps_close(&o);
	}
	return r;
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

int dev_lock(const struct dev *d, struct dev_lock *l)
{
	/* The cgroup directory itself; for an interface (or a cgroup that is
	 * gone) its network namespace, the same inode from any process and
	 * mount namespace. A lock file in bpffs needed a writable bpffs, and
	 * its directory was removed with the pins. */
	l->fd = d->cgroup_fd >= 0 ? open(d->cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
				  : open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (l->fd < 0)
		return -errno;
	if (flock(l->fd, LOCK_EX)) {
		int e = -errno;

		close(l->fd);
		l->fd = -1;
		return e;
	}
	return 0;
}

void dev_unlock(struct dev_lock *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

/* Open what is pinned under @dir, whatever subset it is. */
static int pins_open_dir(const char *dir, struct dev_maps *m)
{
	char path[PATH_MAX + 32];
	int n = 0;

	dev_maps_init(m);
	for (size_t i = 0; i < HS_ARRAY_SIZE(map_names); i++) {
		int *slot = dev_map_slot(m, i);

		snprintf(path, sizeof(path), "%s/%s", dir, map_names[i]);
		*slot = bpf_obj_get(path);
		n += *slot >= 0;
	}
	return n;
}

/* Do the programs attached to ifindex @ifindex use the map @config_id? */
static int ifindex_uses(int ifindex, __u32 config_id, const char *name)
{
	struct dev o = { .ifindex = ifindex, .cgroup_fd = -1 };
	struct dev_state st;
	struct dev_maps m;
	int r;

	snprintf(o.name, sizeof(o.name), "%s", name);
	if (dev_query(&o, &st) || !dev_attached_hooks(&st))
		return 0;
	r = dev_open_maps_from_kernel(&st, &m);
	r = (!r || r == -EXDEV) && map_id(m.config) == config_id;
	dev_maps_close(&m);
	return r;
}

/* Is the map behind @config_id used by any program (one attached in a
 * namespace this process cannot query)? */
static int map_in_use(__u32 config_id)
{
	__u32 id = 0;

	while (config_id && !bpf_prog_get_next_id(id, &id)) {
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
				if (ids[i] == config_id) {
					close(fd);
					return 1;
				}
		close(fd);
	}
	return 0;
}

/*
 * map_in_use(), given a moment to settle: the programs of a deleted
 * interface's TC filters are released after an RCU grace period, some
 * milliseconds after 'ip link del' returns; a moved interface's XDP program
 * stays. At most a second, only for pins of an interface that is gone.
 */
static int map_in_use_settled(__u32 config_id)
{
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		if (!map_in_use(config_id))
			return 0;
		nanosleep(&ts, NULL);
	}
	return 1;
}

int pins_inspect(const char *dir, const struct dev *d, const struct dev_state *st,
		 struct pins_info *pi)
{
	struct dev_maps m, ours;
	__u32 ours_id = 0;

	memset(pi, 0, sizeof(*pi));
	pi->n = pins_open_dir(dir, &m);
	if (!pi->n) {
		pi->owner = PINS_NONE;
		return 0;
	}
	pi->config_id = map_id(m.config);
	pi->have_cfg = m.config >= 0 && !config_read(&m, &pi->cfg);
	dev_maps_close(&m);
	if (st && dev_attached_hooks(st)) {
		int r = dev_open_maps_from_kernel(st, &ours);

		if (!r || r == -EXDEV)
			ours_id = map_id(ours.config);
		dev_maps_close(&ours);
	}
	if (ours_id && pi->config_id == ours_id) {
		pi->owner = PINS_OURS;
		return 0;
	}
	/*
	 * Not the maps of this device's hooks. Pins are named after the
	 * interface (or cgroup id); the config inside says whose they were.
	 * A partial set (no config) or unreadable config: whoever made them
	 * was killed while pinning or unlinking, and nothing else pins.
	 */
	pi->owner = PINS_STALE;
	if (!pi->have_cfg || d->cgroup || !pi->cfg.ifindex)
		return 0;
	if (pi->cfg.netns_ino == netns_ino_self()) {
		char name[IF_NAMESIZE] = "";

		/* This device: its hooks do not use them. */
		if ((int)pi->cfg.ifindex == d->ifindex)
			return 0;
		/* This namespace's interface @ifindex: if it is still there under
		 * another name and uses these maps, it was renamed. */
		if (if_indextoname(pi->cfg.ifindex, name)) {
			if (ifindex_uses(pi->cfg.ifindex, pi->config_id, name)) {
				pi->owner = PINS_RENAMED;
				snprintf(pi->owner_name, sizeof(pi->owner_name), "%s", name);
			}
			return 0;
		}
		/* Gone from here: deleted, or moved to another namespace with
		 * its XDP program (which the kernel keeps). */
	}
	/* Another namespace: no way to ask its interfaces from here. A
	 * program still using the maps is that namespace's attachment. */
	if (map_in_use_settled(pi->config_id))
		pi->owner = PINS_ELSEWHERE;
	return 0;
}

void pins_choose(struct dev *d, const struct dev_state *st)
{
	char alt[sizeof(d->pin_dir)];
	struct pins_info pi;
	struct stat sb;

	if (d->cgroup || !d->netns_ino)
		return;
	if (snprintf(alt, sizeof(alt), "%s/%s@%llu", HS_PIN_ROOT, d->name,
		     (unsigned long long)d->netns_ino) >= (int)sizeof(alt))
		return;
	if (!stat(alt, &sb) ||
	    (!pins_inspect(d->pin_dir, d, st, &pi) && pi.owner == PINS_ELSEWHERE && pi.have_cfg &&
	     pi.cfg.netns_ino != d->netns_ino))
		snprintf(d->pin_dir, sizeof(d->pin_dir), "%s", alt);
}

/* Pins are written in this order and removed in the reverse one: config
 * last in, first out, so a set without it is known to be partial. */
static const size_t pin_order[] = { 0, 2, 3, 4, 5, 6, 7, 8, 9, 1 };

_Static_assert(HS_ARRAY_SIZE(pin_order) == HS_ARRAY_SIZE(map_names), "every map pinned");

void pins_remove_dir(const char *dir)
{
	char path[PATH_MAX + 32];

	for (size_t k = HS_ARRAY_SIZE(pin_order); k-- > 0;) {
		snprintf(path, sizeof(path), "%s/%s", dir, map_names[pin_order[k]]);
		unlink(path);
	}
	rmdir(dir);
	rmdir(HS_PIN_ROOT); /* only if no other device is left */
}

void pins_remove(const struct dev *d)
{
	pins_remove_dir(d->pin_dir);
}

/* Make @dir (and the pin root): another device's command may remove an
 * empty root between the two mkdirs. */
static int pin_dir_make(const char *dir)
{
	for (int tries = 0; tries < 16; tries++) {
		if (mkdir(HS_PIN_ROOT, 0700) && errno != EEXIST)
			return -errno;
		if (!mkdir(dir, 0700) || errno == EEXIST)
			return 0;
		if (errno != ENOENT)
			return -errno;
	}
	return -ENOENT;
}

int pins_write(const struct dev *d, const struct dev_maps *m)
{
	char path[PATH_MAX + 32];
	struct dev_maps mm = *m;
	int r = pin_dir_make(d->pin_dir);

	for (size_t k = 0; !r && k < HS_ARRAY_SIZE(pin_order); k++) {
		int fd = *dev_map_slot(&mm, pin_order[k]), old;

		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, map_names[pin_order[k]]);
		old = bpf_obj_get(path);
		if (old >= 0) {
			__u32 same = map_id(old) == map_id(fd);

			close(old);
			if (same && fd >= 0)
				continue;
			if (unlink(path) && errno != ENOENT) {
				r = -errno;
				break;
			}
		}
		if (fd >= 0 && bpf_obj_pin(fd, path))
			r = -errno;
	}
	return r;
}

int pins_clear_stale(const struct dev *d, const struct dev_state *st, struct pins_info *pi)
{
	int r = pins_inspect(d->pin_dir, d, st, pi);

	if (r)
		return r;
	switch (pi->owner) {
	case PINS_NONE:
	case PINS_OURS:
		return 0;
	case PINS_ELSEWHERE:
		return -EBUSY;
	case PINS_RENAMED: {
		/* The renamed interface's pins go under its name, unless
		 * something is there already; here they go either way. */
		struct dev o;
		struct dev_maps m;
		struct pins_info there;

		dev_by_name(pi->owner_name, &o);
		if (!pins_inspect(o.pin_dir, &o, NULL, &there) &&
		    (there.owner == PINS_NONE || there.config_id == pi->config_id) &&
		    pins_open_dir(d->pin_dir, &m) > 0) {
			pins_write(&o, &m);
			dev_maps_close(&m);
		}
		pins_remove(d);
		return 1;
	}
	case PINS_STALE:
		break;
	}
	/* The clsact qdisc a killed attach of this device made, if it holds
	 * no filter (anyone's), goes with its pins. */
	if (pi->have_cfg && pi->cfg.qdisc_created && !d->cgroup && d->ifindex &&
	    pi->cfg.ifindex == (__u32)d->ifindex && pi->cfg.netns_ino == d->netns_ino &&
	    !(st && (st->prog_id[HS_HOOK_TC_INGRESS] || st->prog_id[HS_HOOK_TC_EGRESS])))
		tc_qdisc_release(d);
	pins_remove(d);
	return 1;
}

void pins_remove_renamed(const struct dev *d, const struct dev_maps *m, const struct hs_config *cfg)
{
	struct dev old;
	struct pins_info there;

	if (d->cgroup || !cfg->ifname[0] || !strcmp(cfg->ifname, d->name))
		return;
	dev_by_name(cfg->ifname, &old);
	if (!pins_inspect(old.pin_dir, &old, NULL, &there) && there.n &&
	    there.config_id == map_id(m->config))
		pins_remove(&old);
}

int pins_sync(const struct dev *d, const struct dev_state *st, const struct dev_maps *m,
	      const struct hs_config *cfg)
{
	struct pins_info pi;
	int r;

	/* What is under our name and not ours goes first: stale pins, or a
	 * renamed interface's (to its name). Another namespace's stay, and
	 * this attachment does without pins. */
	r = pins_clear_stale(d, st, &pi);
	if (r < 0)
		return r;
	r = pins_write(d, m);
	if (!r && cfg)
		pins_remove_renamed(d, m, cfg);
	return r;
}

int cgroup_resolve(const char *path, struct dev *d)
{
	struct statfs sfs;
	struct stat st;

	memset(d, 0, sizeof(*d));
	d->cgroup = 1;
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

void dev_by_name(const char *name, struct dev *d)
{
	unsigned long long id;
	char end;

	memset(d, 0, sizeof(*d));
	d->cgroup_fd = -1;
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->pin_dir, sizeof(d->pin_dir), "%s/%s", HS_PIN_ROOT, name);
	if (sscanf(name, "cgroup-%llu%c", &id, &end) == 1) {
		d->cgroup = 1;
		d->cgroup_id = id;
	} else {
		d->netns_ino = netns_ino_self();
	}
}

/* Where the cgroup2 hierarchy is mounted here: "" if nowhere. */
static void cgroup2_root(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	char dev[64], dir[PATH_MAX], type[32];

	buf[0] = 0;
	if (!f)
		return;
	while (fscanf(f, "%63s %4095s %31s %*[^\n]", dev, dir, type) == 3)
		if (!strcmp(type, "cgroup2")) {
			snprintf(buf, size, "%s", dir);
			break;
		}
	fclose(f);
}

int cgroup_resolve_id(__u64 id, struct dev *d)
{
	struct {
		struct file_handle fh;
		__u64 id; /* f_handle[] */
	} h = { .fh = { .handle_bytes = sizeof(__u64), .handle_type = 0xfe /* FILEID_KERNFS */ } };
	char root[PATH_MAX], link[64], path[PATH_MAX];
	int mfd, fd, e;
	ssize_t n;

	_Static_assert(__builtin_offsetof(typeof(h), id) == sizeof(struct file_handle),
		       "the id follows the handle's header");
	h.id = id;
	cgroup2_root(root, sizeof(root));
	if (!root[0])
		return -ENOENT;
	mfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	e = -errno;
	close(mfd);
	if (fd < 0)
		return e;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	close(fd);
	if (n <= 0)
		return -ENOENT;
	path[n] = 0;
	return cgroup_resolve(path, d);
}

void dev_close(struct dev *d)
{
	if (d->cgroup_fd >= 0)
		close(d->cgroup_fd);
	d->cgroup_fd = -1;
}
