/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The kernel-facing side of the CLI: interfaces, bpffs pins and locks, hooks,
 * and the maps of what is attached. Internal functions return 0 or -errno;
 * the command handlers print once, with context.
 */
#ifndef HDRSTRIP_LOADER_H
#define HDRSTRIP_LOADER_H

#include <limits.h>
#include <net/if.h>
#include <linux/types.h>

#include <hdrstrip/maps.h>

#define HS_BPFFS "/sys/fs/bpf"
#define HS_PIN_ROOT HS_BPFFS "/hdrstrip"

/* TC filter identity: every hdrstrip filter uses this handle and priority. */
#define HS_TC_HANDLE 0x4853 /* "HS" */
#define HS_TC_PRIO 1

enum hs_hook_id {
	HOOK_XDP = 0,
	HOOK_TC_INGRESS,
	HOOK_TC_EGRESS,
	HOOK_CGROUP, /* proxy mode: sockops on a cgroup + sk_msg on its sockhash */
	HOOK_MAX
};

extern const char *const hook_names[HOOK_MAX];
/* "xdp" -> HOOK_XDP ...; -1 if unknown. */
int hook_parse(const char *s);

/* What hdrstrip attaches to: an interface, or (proxy mode) a cgroup. */
struct dev {
	char name[64]; /* the interface's name, or "cgroup-<id>" */
	int ifindex; /* 0 for a cgroup */
	__u64 netns_ino; /* this process's network namespace (0 for a cgroup) */
	char pin_dir[PATH_MAX];
	int cgroup_fd; /* -1 for an interface */
	__u64 cgroup_id;
	char cgroup_path[PATH_MAX];
};

/* Resolve @name in the current network namespace: -ENODEV if absent. */
int dev_resolve(const char *name, struct dev *d);
/* A cgroup v2 directory: -ENOENT if absent, -ENOTDIR/-EMEDIUMTYPE if it is
 * not a cgroup v2 directory. Close with dev_close(). */
int cgroup_resolve(const char *path, struct dev *d);
void dev_close(struct dev *d);

/* Proxy mode. */
int proxy_attach(const struct dev *d);
/* Take sockops program @prog_id off the cgroup, then every socket out of its
 * sockhash: they are sent through plain TCP again when this returns. */
int proxy_detach(const struct dev *d, __u32 prog_id);
/* Established connections of the cgroup's processes to the ports in
 * @ports: the ones the sockops program will never see. */
int count_preexisting(const struct dev *d, const __u64 *ports);

/* Map fds of one device's state; -1 when not open. */
struct dev_maps {
	int trie, config, counters, header_hits;
};

void dev_maps_init(struct dev_maps *m);
void dev_maps_close(struct dev_maps *m);

/* What the kernel says is attached to a device. */
struct dev_state {
	__u32 prog_id[HOOK_MAX]; /* hdrstrip's program on each hook, 0: none */
	__u32 foreign_xdp_id; /* another XDP program, not ours */
	int xdp_mode; /* enum xdp_attach_mode of our XDP program */
	int xdp_legacy; /* attached without libxdp's dispatcher */
};

int dev_query(const struct dev *d, struct dev_state *st);
/* The same, up to the first hdrstrip hook found (enough to reach the
 * device's maps, as update does): two netlink queries fewer when it is XDP. */
int dev_query_any(const struct dev *d, struct dev_state *st);
int dev_attached_hooks(const struct dev_state *st); /* count */
/* Open the maps of any attached hdrstrip program (program -> map ids). */
int dev_open_maps_from_kernel(const struct dev_state *st, struct dev_maps *m);

/* bpffs, pins, locks. */
struct pin_lock {
	int fd;
	char dir[PATH_MAX];
};

/* Make sure HS_BPFFS is a bpffs, mounting it if needed; warns once if the
 * mount would vanish with this process (a private mount namespace). */
int bpffs_ensure(int warn_private);
/* Create and lock @d->pin_dir (flock, blocking); serialises commands on one
 * device. */
int pin_lock(const struct dev *d, struct pin_lock *l);
void pin_unlock(struct pin_lock *l);
/* Open the maps pinned under @d->pin_dir; -ENOENT if there are none. */
int pins_open(const struct dev *d, struct dev_maps *m);
/* Is any loaded BPF program using the map behind @map_fd? */
int map_in_use(int map_fd);
/* Remove hdrstrip's pins of @d (and its directory when empty). */
void pins_remove(const struct dev *d);

/* Hooks. */
struct attach_opts {
	int hook; /* enum hs_hook_id */
	int xdp_mode; /* enum xdp_attach_mode */
	__u32 flows; /* capacity of the program's connection table */
};

/* Load the program for @o->hook with the maps pinned under @d->pin_dir and
 * attach it; on failure nothing of this call remains. */
int hook_attach(const struct dev *d, const struct attach_opts *o, int *mode_used, int *legacy,
		int *qdisc_created);
int hook_detach(const struct dev *d, int hook, const struct dev_state *st);
/* Remove the clsact qdisc if hdrstrip created it and no filter is left. */
int tc_qdisc_release(const struct dev *d);
/* Does @ifindex have a clsact qdisc? 1, 0, or -errno. */
int tc_qdisc_exists(int ifindex);

/* Create the maps of a device (pinned), without any program. */
int maps_create_pinned(const struct dev *d);

/* Map contents. */
int config_read(const struct dev_maps *m, struct hs_config *c);
int config_write(const struct dev_maps *m, const struct hs_config *c);
int trie_read_slot(const struct dev_maps *m, __u32 slot, struct hs_trie *t);
int trie_write_slot(const struct dev_maps *m, __u32 slot, const struct hs_trie *t);
int counters_read(const struct dev_maps *m, struct hs_counters *sum);
int hits_read(const struct dev_maps *m, __u32 slot, __u64 *sum);
/* Zero the hit counters of the @n slots in @slots. */
int hits_reset(const struct dev_maps *m, const __u32 *slots, __u32 n);
/* Add @value to counter number @field (CPU 0's copy); only while no program
 * updates the counters (before an attach). */
int counters_add(const struct dev_maps *m, size_t field, __u64 value);

/* libbpf/libxdp messages go through here; shown with -v. */
void loader_setup_logging(int verbose);
/* Errors text: libbpf_strerror. */
const char *errstr(int err);

/* Required privileges for commands that touch BPF state; prints the error. */
int require_root(const char *cmd);

#endif /* HDRSTRIP_LOADER_H */
