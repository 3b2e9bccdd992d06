/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The maps every hdrstrip program shares with the loader (layouts in
 * include/hdrstrip/maps.h), and the small helpers over them.
 */
#ifndef HDRSTRIP_BPF_MAPS_H
#define HDRSTRIP_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/events.h>
#include <hdrstrip/maps.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HS_TRIE_SLOTS);
	__type(key, __u32);
	__type(value, struct hs_trie);
} trie SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hs_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hs_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HS_MAX_HIT_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} header_hits SEC(".maps");

/* Match events (bpf/events.h): the ring buffer 'hdrstrip events' reads, and
 * each CPU's token bucket for --event-rate. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HS_EVENTS_RING_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hs_event_bucket);
} event_bucket SEC(".maps");

/*
 * The config and the counters every program starts from: 0, or -1 when
 * either is missing (never, once loaded; the verifier wants the check).
 */
static __always_inline int maps_lookup(struct hs_config **cfg, struct hs_counters **cnt)
{
	__u32 key = 0;

	*cfg = bpf_map_lookup_elem(&config, &key);
	*cnt = bpf_map_lookup_elem(&counters, &key);
	return *cfg && *cnt ? 0 : -1;
}

/* The trie slot the config makes active (the loader writes the other one
 * and flips), or NULL. */
static __always_inline const struct hs_trie *active_trie(const struct hs_config *cfg)
{
	__u32 slot = cfg->active_slot & (HS_TRIE_SLOTS - 1);

	return bpf_map_lookup_elem(&trie, &slot);
}

static __always_inline void count_hit(const struct hs_trie *t, __u32 rule)
{
	__u32 slot = t->rules[(rule - 1) & (HS_MAX_NAMES - 1)].hit_slot;
	__u64 *hits = bpf_map_lookup_elem(&header_hits, &slot);

	if (hits)
		(*hits)++;
}

static __always_inline int port_inspected(const struct hs_config *cfg, __u16 port)
{
	return (cfg->ports[(port >> 6) & (HS_PORT_WORDS - 1)] >> (port & 63)) & 1;
}

/* Under the on-error policy: 1 to drop, 0 to pass. (Counted where the
 * verdict is final: observe mode passes what enforce mode drops.) */
static __always_inline int policy_drops(const struct hs_config *cfg)
{
	return cfg->on_error != HS_POLICY_PASS;
}

#endif /* HDRSTRIP_BPF_MAPS_H */
