// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What a device's maps hold, read and written from user space: the config,
 * the two trie slots, the counters and the per-name hit counters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"

int config_read(const struct dev_maps *m, struct hs_config *c)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(m->config, &key, c) ? -errno : 0;
}

int config_write(const struct dev_maps *m, const struct hs_config *c)
{
	__u32 key = 0;

	return bpf_map_update_elem(m->config, &key, c, BPF_ANY) ? -errno : 0;
}

int trie_read_slot(const struct dev_maps *m, __u32 slot, struct hs_trie *t)
{
	return bpf_map_lookup_elem(m->trie, &slot, t) ? -errno : 0;
}

int trie_write_slot(const struct dev_maps *m, __u32 slot, const struct hs_trie *t)
{
	return bpf_map_update_elem(m->trie, &slot, t, BPF_ANY) ? -errno : 0;
}

/* Every CPU's value of @key in the per-CPU map @fd, each @size bytes: a
 * calloc'ed array of *ncpu values, or NULL with *err. */
static void *percpu_lookup(int fd, __u32 key, size_t size, int *ncpu, int *err)
{
	void *v;

	*ncpu = libbpf_num_possible_cpus();
	if (*ncpu < 0) {
		*err = *ncpu;
		return NULL;
	}
	v = calloc(*ncpu, size);
	if (!v) {
		*err = -ENOMEM;
		return NULL;
	}
	if (bpf_map_lookup_elem(fd, &key, v)) {
		*err = -errno;
		free(v);
		return NULL;
	}
	return v;
}

int counters_read(const struct dev_maps *m, struct hs_counters *sum)
{
	struct hs_counters *v;
	int ncpu, r;

	memset(sum, 0, sizeof(*sum));
	v = percpu_lookup(m->counters, 0, sizeof(*v), &ncpu, &r);
	if (!v)
		return r;
	for (int c = 0; c < ncpu; c++)
		for (size_t f = 0; f < HS_N_COUNTERS; f++)
			((__u64 *)sum)[f] += ((__u64 *)&v[c])[f];
	free(v);
	return 0;
}

int hits_read(const struct dev_maps *m, __u32 slot, __u64 *sum)
{
	__u64 *v;
	int ncpu, r;

	*sum = 0;
	v = percpu_lookup(m->header_hits, slot, sizeof(*v), &ncpu, &r);
	if (!v)
		return r;
	for (int c = 0; c < ncpu; c++)
		*sum += v[c];
	free(v);
	return 0;
}

int hits_reset(const struct dev_maps *m, const __u32 *slots, __u32 n)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, o);
	__u32 count = n;
	__u64 *v;
	int ncpu, r = 0;

	/* Asked only when needed: the first call parses a sysfs file with
	 * sscanf(), ~0.2 ms of a process that has not used it. */
	if (!n)
		return 0;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu < 0)
		return ncpu;
	/* One system call for every slot: a list of 1,000 new names would
	 * otherwise take 1,000 map writes. */
	v = calloc((size_t)n * ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_update_batch(m->header_hits, slots, v, &count, &o))
		r = -errno;
	else if (count != n)
		r = -EIO;
	free(v);
	return r;
}

int counters_add(const struct dev_maps *m, enum hs_counter field, __u64 value)
{
	struct hs_counters *v;
	__u32 key = 0;
	int ncpu, r = 0;

	if ((unsigned)field >= HS_N_COUNTERS)
		return -EINVAL;
	v = percpu_lookup(m->counters, key, sizeof(*v), &ncpu, &r);
	if (!v)
		return r;
	((__u64 *)&v[0])[field] += value;
	if (bpf_map_update_elem(m->counters, &key, v, BPF_ANY))
		r = -errno;
	free(v);
	return r;
}
