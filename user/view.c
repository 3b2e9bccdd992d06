// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The devices 'status' and 'stats' show (see view.h). Both ask the kernel
 * what is attached (netlink) and read the maps of those programs.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "apply.h"
#include "cli.h"
#include "view.h"
#include <hdrstrip/flow.h>

int view_operand(const char *usage, int argc, char **argv, struct view_target *t)
{
	if (argc - optind > 1) {
		pr_err("give at most one device");
		return usage_out(usage, 0);
	}
	t->dev = optind < argc ? argv[optind] : NULL;
	if (t->cgroup && t->dev) {
		pr_err("--cgroup PATH takes the place of DEV");
		return usage_out(usage, 0);
	}
	return -1;
}

/* The length of the well-formed UTF-8 sequence at @s (RFC 3629: no
 * overlong form, no surrogate, nothing above U+10FFFF), 0 if none. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	unsigned int cp = s[0] & (0x3f >> (n - 1));

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Names and paths are bytes: one that is not UTF-8 is written as the
 * code point of its value (\u00XX), so the output is always valid JSON. */
void json_str(const char *s)
{
	json_strn(s, strlen(s));
}

void json_strn(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	putchar('"');
	while (p < end) {
		int n = *p >= 0x80 ? utf8_len(p) : 1;

		if (n > end - p)
			n = 0; /* a sequence cut at the end */
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || !n)
			printf("\\u%04x", *p);
		else
			fwrite(p, 1, n, stdout);
		p += n ? n : 1;
	}
	putchar('"');
}

void json_ports(const __u64 *bitmap)
{
	int p, q, from = 1, n = 0;

	putchar('[');
	while (ports_next_run(bitmap, from, &p, &q)) {
		if (q - p >= 2)
			printf("%s[%d,%d]", n++ ? "," : "", p, q);
		else
			for (int k = p; k <= q; k++)
				printf("%s%d", n++ ? "," : "", k);
		from = q + 1;
	}
	putchar(']');
}

void netns_label(__u64 ino, char *buf, size_t size)
{
	struct stat sb;

	netns_name(ino, buf, size);
	if (!buf[0] && ino && !stat("/proc/self/ns/net", &sb) && (__u64)sb.st_ino != ino)
		snprintf(buf, size, "net:[%llu]", (unsigned long long)ino);
}

/* The name of the network namespace we are in, if /run/netns has one. */
void netns_name(__u64 ino, char *buf, size_t size)
{
	DIR *dir = opendir("/run/netns");
	struct dirent *e;

	buf[0] = 0;
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		char path[300];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", e->d_name);
		if (!stat(path, &st) && st.st_ino == ino) {
			snprintf(buf, size, "%s", e->d_name);
			break;
		}
	}
	closedir(dir);
}

/*
 * The size of the connection table of program @prog_id: the max_entries of
 * its map named @name, as the kernel made it (attach sizes each hook's
 * flow table with its own --flows; the config keeps the first attach's).
 * 0 if it cannot be read.
 */
static __u32 prog_table_size(__u32 prog_id, const char *name)
{
	__u32 size = 0;
	int fd = prog_map_open(prog_id, name, &size);

	if (fd >= 0)
		close(fd);
	return size;
}

int prog_map_open(__u32 prog_id, const char *name, __u32 *max_entries)
{
	__u32 ids[16] = { 0 }, len; /* zeroed: see map_in_use() */
	struct bpf_prog_info info;
	int fd = bpf_prog_get_fd_by_id(prog_id);

	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = HS_ARRAY_SIZE(ids);
	info.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.nr_map_ids = 0;
	close(fd);
	for (__u32 i = 0; i < info.nr_map_ids && i < HS_ARRAY_SIZE(ids); i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);
		int mfd = bpf_map_get_fd_by_id(ids[i]);

		if (mfd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(mfd, &mi, &mlen) && !strcmp(mi.name, name)) {
			if (max_entries)
				*max_entries = mi.max_entries;
			return mfd;
		}
		close(mfd);
	}
	return -ENOENT;
}

void addr_str(const struct hs_flow_key *k, const __u32 *a, char *buf, size_t size)
{
	if (!inet_ntop(k->family == 6 ? AF_INET6 : AF_INET, a, buf, (socklen_t)size))
		snprintf(buf, size, "?");
}

__u32 found_flows(const struct found *f)
{
	__u32 min = 0;

	for (int h = 0; h < HS_HOOK_MAX; h++)
		if (f->flows[h] && (!min || f->flows[h] < min))
			min = f->flows[h];
	return min;
}

/* The maps of @f's hooks and their config; 0 or -errno. Hooks that use two
 * sets of maps are shown (the first hook's), and said to be split. */
static int found_maps(struct found *f)
{
	int r = dev_open_maps_from_kernel(&f->st, &f->m);

	f->split = r == -EXDEV;
	if (r && !f->split)
		return r;
	/* Proxy mode keeps no flow table: a connection's state is socket
	 * storage, and the connections it filters at once are those its
	 * sockhash holds. */
	for (int h = 0; h < HS_HOOK_MAX; h++)
		if (f->st.prog_id[h])
			f->flows[h] = prog_table_size(f->st.prog_id[h],
						      h == HS_HOOK_CGROUP    ? HS_MAP_SOCKS
						      : h == HS_HOOK_RECEIVE ? HS_MAP_ORIGINS
									     : HS_MAP_FLOWS);
	return config_read(&f->m, &f->cfg);
}

static int found_add(struct found **out, int *n, int *cap, const struct found *f)
{
	if (!*out || *n >= *cap) {
		struct found *nf = realloc(*out, (*cap = *cap ? *cap * 2 : 4) * sizeof(**out));

		if (!nf)
			return -ENOMEM;
		*out = nf;
	}
	(*out)[(*n)++] = *f;
	return 0;
}

/* Proxy-mode attachments, found from their pins (a cgroup belongs to no
 * network namespace, and has no list of its own to walk). */
static void find_cgroups(struct found **out, int *n, int *cap)
{
	DIR *dir = opendir(HS_PIN_ROOT);
	struct dirent *e;

	while (dir && (e = readdir(dir))) {
		unsigned long long id;
		struct found f = { 0 };
		char end;

		if (sscanf(e->d_name, "cgroup-%llu%c", &id, &end) != 1 ||
		    cgroup_resolve_id(id, &f.d))
			continue;
		if (dev_query(&f.d, &f.st) || !dev_attached_hooks(&f.st) || found_maps(&f) ||
		    found_add(out, n, cap, &f)) {
			dev_maps_close(&f.m);
			dev_close(&f.d);
		}
	}
	if (dir)
		closedir(dir);
}

/* Devices with hdrstrip attached: DEV alone, or every interface here (and,
 * @with_cgroups, every cgroup with pins). */
static int find_devices(const char *name, int cgroup, int with_cgroups, struct found **out, int *n)
{
	struct if_nameindex *ifs, *i;
	int cap = 0;

	*out = NULL;
	*n = 0;
	if (name) {
		struct found *f = calloc(1, sizeof(*f));
		int r;

		if (!f)
			return -ENOMEM;
		r = cgroup ? cgroup_resolve(name, &f->d) : dev_resolve(name, &f->d);
		if (r) {
			free(f);
			return r;
		}
		r = dev_query(&f->d, &f->st);
		if (!r)
			pins_choose(&f->d, &f->st);
		if (r || !dev_attached_hooks(&f->st) || found_maps(f)) {
			dev_maps_close(&f->m);
			dev_close(&f->d);
			free(f);
			return r ? r : -ENOENT;
		}
		*out = f;
		*n = 1;
		return 0;
	}
	ifs = if_nameindex();
	if (!ifs)
		return -errno;
	for (i = ifs; i->if_index; i++) {
		struct found f = { 0 };

		if (dev_resolve(i->if_name, &f.d) || dev_query(&f.d, &f.st) ||
		    !dev_attached_hooks(&f.st))
			continue;
		pins_choose(&f.d, &f.st);
		if (found_maps(&f) || found_add(out, n, &cap, &f))
			dev_maps_close(&f.m);
	}
	if_freenameindex(ifs);
	if (with_cgroups)
		find_cgroups(out, n, &cap);
	return 0;
}

void free_found(struct found *f, int n)
{
	for (int i = 0; i < n; i++) {
		dev_maps_close(&f[i].m);
		dev_close(&f[i].d);
	}
	free(f);
}

int find_or_fail(const char *cmd, const struct view_target *t, int with_cgroups, struct found **f,
		 int *n)
{
	const char *dev = t->dev, *cgroup = t->cgroup;
	int r;

	if (require_root(cmd))
		return EXIT_FAIL;
	r = find_devices(cgroup ? cgroup : dev, cgroup != NULL, with_cgroups, f, n);
	if (cgroup && (r == -EMEDIUMTYPE || r == -ENOTDIR || (r == -ENOENT && !*n))) {
		if (r == -ENOENT && !access(cgroup, F_OK)) {
			pr_err("hdrstrip is not attached to cgroup '%s'", cgroup);
			return EXIT_FAIL;
		}
		if (r == -ENOENT)
			pr_err("no cgroup '%s'; if it was deleted while hdrstrip was attached, "
			       "'hdrstrip status' lists its pins as cgroup-ID, and 'hdrstrip detach "
			       "--cgroup-id ID' removes them",
			       cgroup);
		else
			pr_err("'%s' is not a cgroup v2 directory", cgroup);
		return EXIT_USAGE;
	}
	if (r == -ENODEV || r == -EINVAL) {
		pr_err("no interface '%s' in this network namespace; see 'ip link show'", dev);
		return EXIT_USAGE;
	}
	if (r == -ENOENT) {
		pr_err("hdrstrip is not attached to '%s'", dev);
		return EXIT_FAIL;
	}
	if (r) {
		pr_err("cannot query interfaces: %s (%d)", errstr(r), r);
		return EXIT_FAIL;
	}
	return -1;
}

void format_time(__u64 ns, char *buf, size_t size)
{
	time_t t = ns / 1000000000ULL;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

const char *mode_name(enum xdp_attach_mode mode)
{
	switch (mode) {
	case XDP_MODE_SKB:
		return "skb";
	case XDP_MODE_HW:
		return "hw";
	case XDP_MODE_NATIVE:
	case XDP_MODE_UNSPEC:
		break;
	}
	return "native";
}
