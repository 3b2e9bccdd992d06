/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Loads the real BPF object (from the skeleton or from a file), fills its
 * maps and runs its programs through BPF_PROG_TEST_RUN.
 */
#ifndef HDRSTRIP_TEST_PKT_HARNESS_H
#define HDRSTRIP_TEST_PKT_HARNESS_H

#include <linux/types.h>

#include <hdrstrip/maps.h>
#include <hdrstrip/flow.h>

struct hdrstrip;
struct bpf_object;

enum th_hook {
	TH_XDP = 0,
	TH_TC = 1,
	TH_HOOKS
};

struct th {
	const char *label; /* for messages: which compiler built it */
	struct hdrstrip *skel; /* NULL when opened from a file */
	struct bpf_object *obj;
	int prog_fd[TH_HOOKS];
	int trie_fd, config_fd, counters_fd, hits_fd, flows_fd;
	/* 0: every th_run() starts a connection of its own: the flow a SYN
	 * makes, at the segment's sequence number (no_seed 0), or none (a
	 * connection older than the attach, no_seed 1); 1: runs continue
	 * each other's connections. */
	int keep_flows;
	int no_seed;
	/* The object was loaded for a device without a link header (its
	 * link_type rodata: HS_L2_NONE): packets start at their IP header. */
	int l3_dev;
	/* The config's tunnel table as th_config*() last wrote it (the
	 * loader's default until then): where seed_flow() finds tunnels. */
	struct hs_tunnel_port tunnels[HS_MAX_TUNNEL_PORTS];
	int ncpus;
	/* The verifier's "processed N insns" (log_level 4, the stats line)
	 * and bpf_prog_info.verified_insns: the same number, read twice. */
	__u32 processed[TH_HOOKS];
	__u32 verified[TH_HOOKS];
};

extern const char *const th_hook_name[TH_HOOKS];

/* Open and load: @path NULL takes the object embedded in the skeleton.
 * Returns 0 or -errno (the verifier log is printed on failure). */
/* The whole file @dir/@name, NUL-terminated (its length in *@len), or NULL
 * (after a message naming the file when it cannot be opened). */
char *th_slurp(const char *dir, const char *name, size_t *len);

int th_open(struct th *h, const char *path, const char *label);
/* The same with a flow table of @max_flows connections (0: as built). */
int th_open_flows(struct th *h, const char *path, const char *label, __u32 max_flows);
/* The same, the object loaded for a device without a link header (its
 * link_type rodata set to HS_L2_NONE before load, as attach does for a
 * tun or ipip device): packets start at their IP header (h->l3_dev). */
int th_open_l3(struct th *h, const char *path, const char *label);
void th_close(struct th *h);

/* Config: @ports inspected, trie @slot active, @on_error policy, and the
 * loader's default --untracked scan. */
int th_config(struct th *h, __u32 slot, __u8 on_error, const __u16 *ports, int n_ports);
/* The same with an --untracked policy of its own (enum hs_policy). */
int th_config_untracked(struct th *h, __u32 slot, __u8 on_error, __u8 untracked, const __u16 *ports,
			int n_ports);

/* The config's wire fields (struct hs_config), for th_config_wire(). */
struct th_wire {
	__u8 nat; /* enum hs_nat */
	__u8 udp_tunnels; /* UDP sockets on a tunnel port (the loader's count) */
	/* The tunnel table, n_tunnels entries (NULL: the loader's default). */
	const struct hs_tunnel_port *tunnels;
	int n_tunnels;
};

/* th_config() with the wire fields of @w (NULL: the loader's defaults, as
 * th_config() writes them: default tunnel table, NAT lookup on, no UDP
 * socket on a tunnel port). */
int th_config_wire(struct th *h, __u32 slot, __u8 on_error, const __u16 *ports, int n_ports,
		   const struct th_wire *w);
int th_set_trie(struct th *h, __u32 slot, const struct hs_trie *t);

/* Sums over every CPU. */
int th_counters(struct th *h, struct hs_counters *sum);
int th_hits(struct th *h, __u64 *sum, __u32 n_slots);

/* Forget every connection the programs track. */
/* Flows in the table that no FIN or exact RST closed (hs_flow_close()). */
int th_live_flows(struct th *h);
void th_forget_flows(struct th *h);
/* One BPF_PROG_TEST_RUN: returns 0 or -errno; @out gets the packet as the
 * program left it (@out_cap bytes at most), @ret the program's return. */
int th_run(struct th *h, enum th_hook hook, const void *in, __u32 len, void *out, __u32 out_cap,
	   __u32 *out_len, __u32 *ret);

#endif /* HDRSTRIP_TEST_PKT_HARNESS_H */
