// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Loading the real object and running it through BPF_PROG_TEST_RUN. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <hdrstrip/hooks.h>

#include "hdrstrip.skel.h"
#include "harness.h"

const char *const th_hook_name[TH_HOOKS] = { "xdp", "tc" };

static const char *const prog_name[TH_HOOKS] = { "hdrstrip_xdp", "hdrstrip_tc" };

#define LOG_SIZE (256 * 1024)

static int map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

/* "processed 1234 insns (limit ...": the verifier's stats line. */
static __u32 processed_insns(const char *log)
{
	const char *p = strstr(log, "processed ");

	return p ? (__u32)strtoul(p + 10, NULL, 10) : 0;
}

/*
 * Set the one-byte global @name of the object's .rodata before load, found
 * by name in its BTF: the skeleton's rodata struct is the clang-14 build's
 * only, and the clang-19 object is opened from its file.
 */
static int set_rodata_u8(struct bpf_object *obj, const char *name, __u8 v)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, ".rodata");
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	const void *init;
	size_t size = 0;
	__u8 *data;
	int id, i, err = -ENOENT;

	init = m ? bpf_map__initial_value(m, &size) : NULL;
	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -ENOENT;
	if (!init || id < 0)
		return -ENOENT;
	data = malloc(size);
	if (!data)
		return -ENOMEM;
	memcpy(data, init, size);
	sec = btf__type_by_id(btf, (__u32)id);
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if (vs->size != 1 || vs->offset >= size) {
			err = -EINVAL;
			break;
		}
		data[vs->offset] = v;
		err = bpf_map__set_initial_value(m, data, size);
		break;
	}
	free(data);
	return err;
}

struct open_opts {
	__u32 max_flows; /* 0: as built */
	int l3; /* link_type HS_L2_NONE */
};

static int open_obj(struct th *h, const char *path, const char *label, const struct open_opts *oo);

int th_open(struct th *h, const char *path, const char *label)
{
	const struct open_opts oo = { 0 };

	return open_obj(h, path, label, &oo);
}

int th_open_flows(struct th *h, const char *path, const char *label, __u32 max_flows)
{
	const struct open_opts oo = { .max_flows = max_flows };

	return open_obj(h, path, label, &oo);
}

int th_open_l3(struct th *h, const char *path, const char *label)
{
	const struct open_opts oo = { .l3 = 1 };

	return open_obj(h, path, label, &oo);
}

static int open_obj(struct th *h, const char *path, const char *label, const struct open_opts *oo)
{
	char *log[TH_HOOKS] = { 0 };
	struct bpf_program *prog[TH_HOOKS];
	__u32 max_flows = oo->max_flows;
	int i, err;

	memset(h, 0, sizeof(*h));
	h->label = label;
	hs_tunnels_default(h->tunnels);
	if (path) {
		h->obj = bpf_object__open_file(path, NULL);
		err = libbpf_get_error(h->obj);
		if (err) {
			h->obj = NULL;
			fprintf(stderr, "%s: cannot open %s: %s\n", label, path, strerror(-err));
			return err;
		}
	} else {
		h->skel = hdrstrip__open();
		if (!h->skel) {
			err = -errno;
			fprintf(stderr, "%s: cannot open the skeleton: %s\n", label,
				strerror(errno));
			return err;
		}
		h->obj = h->skel->obj;
	}
	if (max_flows) {
		/* What the loader's --flows does: the capacity is set before load. */
		struct bpf_map *m = bpf_object__find_map_by_name(h->obj, HS_MAP_FLOWS);

		err = m ? bpf_map__set_max_entries(m, max_flows) : -ENOENT;
		if (err) {
			fprintf(stderr, "%s: cannot size the flow table: %s\n", label,
				strerror(-err));
			goto out;
		}
	}
	if (oo->l3) {
		/* What attach does for a device without a link header. */
		err = set_rodata_u8(h->obj, "link_type", HS_L2_NONE);
		if (err) {
			fprintf(stderr, "%s: the object has no link_type to set: %s\n", label,
				strerror(-err));
			goto out;
		}
		h->l3_dev = 1;
	}
	for (i = 0; i < TH_HOOKS; i++) {
		prog[i] = bpf_object__find_program_by_name(h->obj, prog_name[i]);
		log[i] = calloc(1, LOG_SIZE);
		if (!prog[i] || !log[i]) {
			err = -ENOMEM;
			goto out;
		}
		/* Level 4 is the statistics only: the instruction count. */
		bpf_program__set_log_buf(prog[i], log[i], LOG_SIZE);
		bpf_program__set_log_level(prog[i], 4);
	}
	err = bpf_object__load(h->obj);
	if (err) {
		fprintf(stderr, "%s: cannot load: %s\n", label, strerror(-err));
		for (i = 0; i < TH_HOOKS; i++) {
			size_t n = strlen(log[i]);

			fprintf(stderr, "--- %s verifier log (tail) ---\n%s\n", prog_name[i],
				log[i] + (n > 4000 ? n - 4000 : 0));
		}
		goto out;
	}
	for (i = 0; i < TH_HOOKS; i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		h->prog_fd[i] = bpf_program__fd(prog[i]);
		h->processed[i] = processed_insns(log[i]);
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(h->prog_fd[i], &info, &len))
			h->verified[i] = info.verified_insns;
	}
	h->trie_fd = map_fd(h->obj, HS_MAP_TRIE);
	h->config_fd = map_fd(h->obj, HS_MAP_CONFIG);
	h->counters_fd = map_fd(h->obj, HS_MAP_COUNTERS);
	h->hits_fd = map_fd(h->obj, HS_MAP_HEADER_HITS);
	h->flows_fd = map_fd(h->obj, HS_MAP_FLOWS);
	h->ncpus = libbpf_num_possible_cpus();
	if (h->trie_fd < 0 || h->config_fd < 0 || h->counters_fd < 0 || h->hits_fd < 0 ||
	    h->ncpus <= 0) {
		fprintf(stderr, "%s: a map is missing\n", label);
		err = -ENOENT;
	}
out:
	for (i = 0; i < TH_HOOKS; i++)
		free(log[i]);
	if (err)
		th_close(h);
	return err;
}

void th_close(struct th *h)
{
	if (h->skel)
		hdrstrip__destroy(h->skel);
	else if (h->obj)
		bpf_object__close(h->obj);
	h->skel = NULL;
	h->obj = NULL;
}

int th_config(struct th *h, __u32 slot, __u8 on_error, const __u16 *ports, int n_ports)
{
	/* The loader's default for connections without state. */
	return th_config_untracked(h, slot, on_error, HS_POLICY_SCAN, ports, n_ports);
}

static int config_write(struct th *h, __u32 slot, __u8 on_error, __u8 untracked, const __u16 *ports,
			int n_ports, const struct th_wire *w)
{
	struct hs_config cfg;
	__u32 key = 0;
	int i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.active_slot = slot;
	cfg.on_error = on_error;
	cfg.untracked = untracked;
	for (i = 0; i < n_ports; i++)
		cfg.ports[ports[i] / 64] |= 1ULL << (ports[i] % 64);
	/* By default the loader's tunnel ports and the NAT lookup on (it
	 * finds nothing here). */
	cfg.nat = w ? w->nat : HS_NAT_LOOKUP;
	cfg.udp_tunnels = w ? w->udp_tunnels : 0;
	if (w && w->tunnels) {
		if (w->n_tunnels < 0 || w->n_tunnels > HS_MAX_TUNNEL_PORTS)
			return -EINVAL;
		memcpy(cfg.tunnels, w->tunnels, (size_t)w->n_tunnels * sizeof(cfg.tunnels[0]));
	} else {
		hs_tunnels_default(cfg.tunnels);
	}
	if (bpf_map_update_elem(h->config_fd, &key, &cfg, BPF_ANY))
		return -errno;
	memcpy(h->tunnels, cfg.tunnels, sizeof(h->tunnels));
	return 0;
}

int th_config_untracked(struct th *h, __u32 slot, __u8 on_error, __u8 untracked, const __u16 *ports,
			int n_ports)
{
	return config_write(h, slot, on_error, untracked, ports, n_ports, NULL);
}

int th_config_wire(struct th *h, __u32 slot, __u8 on_error, const __u16 *ports, int n_ports,
		   const struct th_wire *w)
{
	return config_write(h, slot, on_error, HS_POLICY_SCAN, ports, n_ports, w);
}

int th_set_trie(struct th *h, __u32 slot, const struct hs_trie *t)
{
	return bpf_map_update_elem(h->trie_fd, &slot, t, BPF_ANY) ? -errno : 0;
}

int th_counters(struct th *h, struct hs_counters *sum)
{
	struct hs_counters *v = calloc(h->ncpus, sizeof(*v));
	__u64 *out = (__u64 *)sum;
	__u32 key = 0;
	int c, err = 0;
	size_t k;

	if (!v)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(h->counters_fd, &key, v)) {
		err = -errno;
	} else {
		for (c = 0; c < h->ncpus; c++)
			for (k = 0; k < HS_N_COUNTERS; k++)
				out[k] += ((const __u64 *)&v[c])[k];
	}
	free(v);
	return err;
}

int th_hits(struct th *h, __u64 *sum, __u32 n_slots)
{
	__u64 *v = calloc(h->ncpus, sizeof(*v));
	__u32 slot;
	int c, err = 0;

	if (!v)
		return -ENOMEM;
	for (slot = 0; slot < n_slots && !err; slot++) {
		sum[slot] = 0;
		if (bpf_map_lookup_elem(h->hits_fd, &slot, v))
			err = -errno;
		for (c = 0; c < h->ncpus && !err; c++)
			sum[slot] += v[c];
	}
	free(v);
	return err;
}

int th_live_flows(struct th *h)
{
	struct hs_flow_key k, next;
	struct hs_flow f;
	int n = 0, first = 1;

	while (!bpf_map_get_next_key(h->flows_fd, first ? NULL : &k, &next)) {
		first = 0;
		k = next;
		if (!bpf_map_lookup_elem(h->flows_fd, &k, &f) && hs_flow_live(&f))
			n++;
	}
	return n;
}

void th_forget_flows(struct th *h)
{
	struct hs_flow_key k, next;

	while (!bpf_map_get_next_key(h->flows_fd, NULL, &next)) {
		k = next;
		if (bpf_map_delete_elem(h->flows_fd, &k))
			break;
	}
}

static __u16 rd16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

/* The tunnel the config's table names for UDP port @port (host order). */
static __u8 udp_tunnel_of(const struct th *h, __u16 port)
{
	int i;

	for (i = 0; i < HS_MAX_TUNNEL_PORTS && h->tunnels[i].port; i++)
		if (h->tunnels[i].port == port)
			return h->tunnels[i].kind;
	return HS_TUN_NONE;
}

/*
 * The flow key and sequence number of a TCP segment, read here apart from
 * the datapath's parser: Ethernet with VLAN tags (or, @l2 0, an IP packet
 * with no link header), IPv4 (and AH), IPv6 with the extension headers it
 * follows, and one tunnel (VXLAN and GENEVE on the ports of the config's
 * table, GRE version 0, IP in IP), whose inner packet's key carries the
 * tunnel and its id. Returns 0, or -1 for anything else (a packet the
 * program keeps no flow for).
 */
static int seg_key_at(const struct th *h, const __u8 *p, size_t len, size_t off, int l2, int depth,
		      struct hs_flow_key *k, __u32 *seq)
{
	size_t l4;
	__u16 proto;
	__u8 next;
	int i;

	if (l2) {
		if (len < off + 14)
			return -1;
		proto = rd16(p + off + 12);
		off += 14;
		for (i = 0; i < 12 && (proto == 0x8100 || proto == 0x88a8); i++) {
			if (len < off + 4)
				return -1;
			proto = rd16(p + off + 2);
			off += 4;
		}
	} else {
		if (len < off + 1)
			return -1;
		proto = (p[off] >> 4) == 6 ? 0x86dd : 0x0800;
	}
	memset(k->saddr, 0, sizeof(k->saddr));
	memset(k->daddr, 0, sizeof(k->daddr));
	if (proto == 0x0800) {
		if (len < off + 20 || (p[off + 6] & 0x3f) || p[off + 7])
			return -1;
		memcpy(&k->saddr[0], p + off + 12, 4);
		memcpy(&k->daddr[0], p + off + 16, 4);
		k->family = 4;
		next = p[off + 9];
		l4 = off + (p[off] & 0xf) * 4;
		if (next == 51) { /* AH: the protocol it protects follows it */
			if (len < l4 + 2)
				return -1;
			next = p[l4];
			l4 += (size_t)(p[l4 + 1] + 2) * 4;
		}
	} else if (proto == 0x86dd) {
		if (len < off + 40)
			return -1;
		memcpy(k->saddr, p + off + 8, 16);
		memcpy(k->daddr, p + off + 24, 16);
		k->family = 6;
		next = p[off + 6];
		l4 = off + 40;
		for (i = 0; i < 6 && (next == 0 || next == 43 || next == 60 || next == 51); i++) {
			size_t hl;

			if (len < l4 + 2)
				return -1;
			hl = next == 51 ? (size_t)(p[l4 + 1] + 2) * 4 : (size_t)(p[l4 + 1] + 1) * 8;
			next = p[l4];
			l4 += hl;
		}
	} else {
		return -1;
	}
	if (next != 6 && depth)
		return -1; /* no tunnel inside a tunnel */
	if (next == 17) { /* VXLAN and GENEVE, by the config's table */
		__u8 kind;

		if (len < l4 + 16)
			return -1;
		kind = udp_tunnel_of(h, rd16(p + l4 + 2));
		k->zone = (__u32)p[l4 + 12] << 16 | (__u32)p[l4 + 13] << 8 | p[l4 + 14];
		k->tunnel = kind;
		if (kind == HS_TUN_VXLAN && (p[l4 + 8] & 0x08))
			return seg_key_at(h, p, len, l4 + 16, 1, 1, k, seq);
		if (kind == HS_TUN_GENEVE && !(p[l4 + 8] >> 6))
			return seg_key_at(h, p, len, l4 + 16 + (p[l4 + 8] & 0x3f) * 4,
					  rd16(p + l4 + 10) == 0x6558, 1, k, seq);
		return -1;
	}
	if (next == 47) { /* GRE version 0: checksum, key, sequence number */
		__u16 fl;
		size_t o = l4 + 4;

		if (len < l4 + 4)
			return -1;
		fl = rd16(p + l4);
		if (fl & 0x4007) /* routing, or another version */
			return -1;
		if (fl & 0x8000)
			o += 4;
		k->zone = 0;
		if (fl & 0x2000) {
			if (len < o + 4)
				return -1;
			k->zone = (__u32)rd16(p + o) << 16 | rd16(p + o + 2);
			o += 4;
		}
		if (fl & 0x1000)
			o += 4;
		k->tunnel = HS_TUN_GRE;
		return seg_key_at(h, p, len, o, rd16(p + l4 + 2) == 0x6558, 1, k, seq);
	}
	if (next == 4 || next == 41) {
		k->tunnel = HS_TUN_IPIP;
		k->zone = 0;
		return seg_key_at(h, p, len, l4, 0, 1, k, seq);
	}
	if (next != 6 || len < l4 + 20)
		return -1;
	memcpy(&k->sport, p + l4, 2);
	memcpy(&k->dport, p + l4 + 2, 2);
	*seq = (__u32)rd16(p + l4 + 4) << 16 | rd16(p + l4 + 6);
	return 0;
}

static int seg_key(const struct th *h, const __u8 *p, size_t len, struct hs_flow_key *k, __u32 *seq)
{
	memset(k, 0, sizeof(*k));
	return seg_key_at(h, p, len, 0, !h->l3_dev, 0, k, seq);
}

/* A connection whose SYN the program saw, for the segment @in: the flow a
 * SYN would have made (include/hdrstrip/flow.h), starting at its data. */
static void seed_flow(struct th *h, const __u8 *in, __u32 len)
{
	struct hs_flow_key k;
	struct hs_flow f;
	__u32 seq;

	if (seg_key(h, in, len, &k, &seq))
		return;
	hs_flow_init(&f, seq, 0, HS_DIR_REQUEST);
	bpf_map_update_elem(h->flows_fd, &k, &f, BPF_ANY);
}

int th_run(struct th *h, enum th_hook hook, const void *in, __u32 len, void *out, __u32 out_cap,
	   __u32 *out_len, __u32 *ret)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len, .data_out = out,
		    .data_size_out = out_cap, .repeat = 1);
	int err;

	if (!h->keep_flows) {
		th_forget_flows(h);
		if (!h->no_seed)
			seed_flow(h, in, len);
	}
	err = bpf_prog_test_run_opts(h->prog_fd[hook], &o);
	if (err)
		return -errno;
	*out_len = o.data_size_out;
	*ret = o.retval;
	return 0;
}

char *th_slurp(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	char *buf = NULL;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = 0;
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}
