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

#include <hdrstrip/hooks.h>
#include <hdrstrip/maps.h>

#define HS_BPFFS "/sys/fs/bpf"
#define HS_PIN_ROOT HS_BPFFS "/hdrstrip"

/* TC filter identity: every hdrstrip filter uses this handle and priority. */
#define HS_TC_HANDLE 0x4853 /* "HS" */
#define HS_TC_PRIO 1

/* "xdp" -> HS_HOOK_XDP ... (an interface's hooks only); -1 if unknown. */
int hook_parse(const char *s);

/* What hdrstrip attaches to: an interface, or (proxy mode) a cgroup. */
struct dev {
	char name[64]; /* the interface's name, or "cgroup-<id>" */
	int ifindex; /* 0 for a cgroup */
	__u64 netns_ino; /* this process's network namespace (0 for a cgroup) */
	char pin_dir[PATH_MAX];
	int cgroup; /* proxy mode: a cgroup, its fd in cgroup_fd (-1 once deleted) */
	int cgroup_fd; /* -1 for an interface */
	__u64 cgroup_id;
	char cgroup_path[PATH_MAX];
	/* The interface's link type (ARPHRD_*, as ip link shows it) and how
	 * its packets start: HS_L2_ETHER, HS_L2_NONE (an IP header), or -1
	 * for a framing hdrstrip does not read. */
	int arphrd;
	int link_type;
};

/* Resolve @name in the current network namespace: -ENODEV if absent. */
int dev_resolve(const char *name, struct dev *d);
/* The name of link type @arphrd ("ether", "none", "ipip", ...). */
const char *arphrd_name(int arphrd);
/* Enter network namespace @name: /run/netns/@name, or a path when it has a
 * slash (/proc/PID/ns/net). 0, or -errno with @path (@size bytes) naming
 * the file, and *@entering 1 when the open worked and setns failed. */
int netns_enter(const char *name, char *path, size_t size, int *entering);
/* A cgroup v2 directory: -ENOENT if absent, -ENOTDIR/-EMEDIUMTYPE if it is
 * not a cgroup v2 directory. Close with dev_close(). */
int cgroup_resolve(const char *path, struct dev *d);
void dev_close(struct dev *d);

/* The cgroup whose id is @id (the cgroup2 hierarchy's inode number), for
 * pins named cgroup-<id>: -ESTALE (or -ENOENT) when it was deleted. */
int cgroup_resolve_id(__u64 id, struct dev *d);
/* A device whose interface or cgroup is gone, known by its pins alone
 * ("cgroup-<id>", or an interface name). */
void dev_by_name(const char *name, struct dev *d);

/* Map fds of one device's state; -1 when not open. socks, servers: proxy
 * mode's sockhashes, servers and origins origin mode's (-1 for an
 * interface); methods: an interface's request streams' HEAD history (-1 in
 * proxy mode). */
struct dev_maps {
	int trie, config, counters, header_hits, events, event_bucket, socks, methods, servers,
		origins;
};

void dev_maps_init(struct dev_maps *m);
void dev_maps_close(struct dev_maps *m);
/* A skeleton's maps, in struct dev_maps' order (trie, config, counters,
 * header_hits, events, event_bucket, socks, methods, servers, origins; the first @n;
 * NULL for a map the skeleton has not): bound to @m's fds before load, so its
 * programs use the device's maps; or copied into @m after load, to outlive
 * the skeleton. */
struct bpf_map;
int dev_maps_reuse(const struct dev_maps *m, struct bpf_map *const *maps, size_t n);
int dev_maps_dup(struct dev_maps *m, struct bpf_map *const *maps, size_t n);
/* The kernel's id of map @fd, 0 if unknown. */
__u32 map_id(int fd);

/* Proxy mode (@hook HS_HOOK_CGROUP) or origin mode (HS_HOOK_RECEIVE): load
 * the programs with @m's maps and attach them (sk_msg and sk_skb on the
 * sockhashes, then sockops on the cgroup); on failure nothing of this call
 * remains attached. */
int proxy_attach(const struct dev *d, const struct dev_maps *m, int hook);
/* Proxy mode's maps, sockhash included (maps_create for a cgroup). */
int proxy_maps_create(struct dev_maps *m);
/* Take sockops program @prog_id off the cgroup, then every socket out of its
 * sockhashes: they go through plain TCP again when this returns, but a
 * socket whose application has not read what it received (once it has,
 * polled; at a deadline it is left filtered: proxy_release_pinned()). */
int proxy_detach(const struct dev *d, __u32 prog_id);
/* Take every socket out of sockhash @fd (a cgroup that is gone): the
 * sockets left (see proxy_detach), or -errno. */
int proxy_release_socks(const struct dev *d, int fd);
/* The same for the sockhashes pinned under @d->pin_dir: before pins of a
 * cgroup with nothing attached go. The sockets left, or -errno. */
int proxy_release_pinned(const struct dev *d);
/* The sockets the pinned sockhashes of @d with an sk_skb program hold. */
int proxy_socks_left(const struct dev *d);
/* Established connections of the cgroup's processes to the ports in
 * @ports (@accepted: from them, the connections they accepted): the ones
 * the sockops program will never see. */
int count_preexisting(const struct dev *d, const __u64 *ports, int accepted);
/* Origin mode: reset the connections a drop ended (the sk_skb program lists
 * them by cookie), from the maps of sockops program @prog_id. Returns how
 * many were reset, or -errno. */
int origin_reset_ended(const struct dev *d, __u32 prog_id);

/* What the kernel says is attached to a device. */
struct dev_state {
	__u32 prog_id[HS_HOOK_MAX]; /* hdrstrip's program on each hook, 0: none */
	__u32 foreign_xdp_id; /* another XDP program, not ours */
	int xdp_mode; /* enum xdp_attach_mode of our XDP program */
	int xdp_legacy; /* attached without libxdp's dispatcher */
};

int dev_query(const struct dev *d, struct dev_state *st);
int dev_attached_hooks(const struct dev_state *st); /* count */
/*
 * Open the maps of the programs attached to the device (program -> map
 * ids): they, not pins named after the interface, are the device's state.
 * Every hook must use the same maps: -EXDEV when they do not (@m then holds
 * the first hook's); -ENOENT when no hook is attached.
 */
int dev_open_maps_from_kernel(const struct dev_state *st, struct dev_maps *m);

/*
 * Serialise attach, update and detach of one device: a flock on its
 * network namespace (an interface) or its cgroup directory. Nothing on
 * bpffs: a read-only /sys/fs or a missing bpffs stop neither update nor
 * detach, and pin directories may come and go under it.
 */
struct dev_lock {
	int fd;
};

int dev_lock(const struct dev *d, struct dev_lock *l);
void dev_unlock(struct dev_lock *l);

/* Make sure HS_BPFFS is a bpffs, mounting it if needed; warns once if the
 * mount would vanish with this process (a private mount namespace). */
int bpffs_ensure(int warn_private);

/*
 * Pins: a copy of the device's maps under @d->pin_dir, for bpftool users.
 * Never the source of truth: commands find the maps from the attached
 * programs; pins are written from them, and whatever else is found under
 * the directory is classified (pins_inspect) and cleared or refused.
 */
enum pins_owner {
	PINS_NONE, /* no pin there */
	PINS_OURS, /* the maps of the hooks attached to this device */
	PINS_STALE, /* nothing attached uses them: a killed command, a deleted interface */
	PINS_RENAMED, /* this namespace's interface that had this name: owner_name now */
	PINS_ELSEWHERE, /* in use by an attachment in another network namespace */
};

struct pins_info {
	enum pins_owner owner;
	int n; /* pins found (partial sets count) */
	int have_cfg; /* the config pin was read */
	struct hs_config cfg;
	__u32 config_id;
	char owner_name[IF_NAMESIZE]; /* PINS_RENAMED */
};

/* Classify the pins under @dir for device @d (whose hooks are @st; a
 * device that is gone has ifindex 0 and no hooks). */
/*
 * Pins are named after the interface. When that name's pins belong to a
 * live attachment in another network namespace (a container's eth0 and
 * another's), @d's go to NAME@<its namespace's inode> instead, and are
 * found there from then on. Call after dev_query().
 */
void pins_choose(struct dev *d, const struct dev_state *st);
int pins_inspect(const char *dir, const struct dev *d, const struct dev_state *st,
		 struct pins_info *pi);
/* Pin @m under @d->pin_dir, replacing pins of other maps; config last, so
 * that a set without it is known to be partial. */
int pins_write(const struct dev *d, const struct dev_maps *m);
/* Remove hdrstrip's pins under @dir (whatever subset is there), the
 * directory, and the pin root when no other device is left. */
void pins_remove_dir(const char *dir);
void pins_remove(const struct dev *d);
/*
 * Before an attach with nothing attached, or after a detach left nothing:
 * clear what stale pins @d->pin_dir holds (and the clsact qdisc their
 * attach made, if it holds no filter), and move a renamed interface's pins
 * to its name. Returns 1 if pins were removed, 0 if there were none, or
 * -EBUSY when they are another namespace's live state (@pi says whose).
 */
int pins_clear_stale(const struct dev *d, const struct dev_state *st, struct pins_info *pi);
/*
 * After an attach or update found @m from the kernel: make @d->pin_dir hold
 * them (a renamed interface's pins move along, those under its old name
 * go). Returns 0, or -errno when the pins could not be written (the
 * attachment works without them).
 */
int pins_sync(const struct dev *d, const struct dev_state *st, const struct dev_maps *m,
	      const struct hs_config *cfg);
/* The interface was renamed since its first attach (@cfg has the name it
 * had): its pins under the old name go, if they are @m's. */
void pins_remove_renamed(const struct dev *d, const struct dev_maps *m,
			 const struct hs_config *cfg);

/* Hooks. */
struct hook_opts {
	int hook; /* enum hs_hook */
	int xdp_mode; /* enum xdp_attach_mode */
	__u32 flows; /* capacity of the program's connection table */
};

/* Load the program for @o->hook with the maps @m (the verifier runs here)
 * and attach it; on failure nothing of this call remains. */
int hook_attach(const struct dev *d, const struct hook_opts *o, const struct dev_maps *m,
		int *mode_used, int *legacy, int *qdisc_created);
int hook_detach(const struct dev *d, int hook, const struct dev_state *st);
/* Remove the clsact qdisc if hdrstrip created it and no filter is left. */
int tc_qdisc_release(const struct dev *d);
/* Does @ifindex have a clsact qdisc? 1, 0, or -errno (netlink.c). */
int tc_qdisc_exists(int ifindex);
/* The filters on @ifindex's clsact qdisc, both directions, anyone's. */
int tc_count_filters(int ifindex, int *count);
/* Every TCP connection conntrack holds in this network namespace whose
 * port NAT rewrote, with the port its client sent to and the one its
 * socket has, to @cb. 0 or -errno (no conntrack). */
int ct_nat_ports(void (*cb)(int from_port, int to_port, void *arg), void *arg);
/* A NAT rule of nftables (iptables-nft's too) that takes TCP ports
 * [from_lo, from_hi] to port @to (netlink.c's reading of it). */
struct hs_nat_rule {
	int family; /* NFPROTO_* of its table */
	const char *table, *chain;
	int from_lo, from_hi;
	int to;
};
/* Every such rule of this network namespace to @cb: 0, or -errno (no
 * nftables). */
int nft_nat_rules(void (*cb)(const struct hs_nat_rule *nr, void *arg), void *arg);
/* Has the running kernel conntrack's lookup kfuncs (--nat lookup)? */
int ct_kfuncs_present(void);
/* Can the hooks ask which UDP socket takes a datagram and whether it takes
 * packets out of UDP (bpf_rdonly_cast, Linux 6.2)? Else they know only the
 * tunnel ports found at attach and update. */
int udp_encap_lookup_present(void);
/* The UDP sockets of this network namespace with an encapsulation (each
 * port once), at most @max into @out: how many, or -errno when the kernel
 * cannot say (no BPF iterator over UDP sockets). */
struct hs_encap_sock;
int udp_encap_ports(struct hs_encap_sock *out, int max);
/* Every device of this network namespace that has a kind (ip -d link:
 * vxlan, geneve, wireguard, ipip, ...), with its UDP port for vxlan and
 * geneve (0 for others), to @cb. 0 or -errno. */
int tunnel_devs(void (*cb)(const char *name, const char *kind, int udp_port, void *arg), void *arg);
/* The interfaces of this network namespace whose drivers run XDP natively,
 * into @ifindex (at most @max): how many, or -errno (-ENOENT before Linux
 * 6.3, which has no netdev family to ask). */
int xdp_native_devs(int *ifindex, int max);

/* Create a device's maps (not pinned, no program): @m holds their fds. */
int maps_create(const struct dev *d, struct dev_maps *m);

/* Map contents. */
int config_read(const struct dev_maps *m, struct hs_config *c);
int config_write(const struct dev_maps *m, const struct hs_config *c);
int trie_read_slot(const struct dev_maps *m, __u32 slot, struct hs_trie *t);
int trie_write_slot(const struct dev_maps *m, __u32 slot, const struct hs_trie *t);
int counters_read(const struct dev_maps *m, struct hs_counters *sum);
int hits_read(const struct dev_maps *m, __u32 slot, __u64 *sum);
/* Zero the hit counters of the @n slots in @slots. */
int hits_reset(const struct dev_maps *m, const __u32 *slots, __u32 n);
/* Add @value to counter @field (CPU 0's copy); only while no program
 * updates the counters (before an attach). */
int counters_add(const struct dev_maps *m, enum hs_counter field, __u64 value);

/* May this process load BPF programs (CAP_BPF or CAP_SYS_ADMIN)? */
int caps_bpf(void);
/* Required privileges for commands that touch BPF state; prints the error. */
int require_root(const char *cmd);
/* What an EPERM from an operation that needs capability @cap (its name
 * @cap_name) calls for, into @buf: "" when the process has it, else the
 * capability it lacks and, as root or not, what to do. */
const char *perm_hint(int cap, const char *cap_name, char *buf, size_t size);

#endif /* HDRSTRIP_LOADER_H */
