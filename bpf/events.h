/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Match events (include/hdrstrip/events.h): a program fills a template
 * (struct hs_event in its scratch) and event_emit() stamps it and copies it
 * into the device's ring buffer, when the CPU's token bucket has a token.
 */
#ifndef HDRSTRIP_BPF_EVENTS_H
#define HDRSTRIP_BPF_EVENTS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/events.h>
#include <hdrstrip/maps.h>

#include "maps.bpf.h"

#define HS_NS_PER_S 1000000000ULL

/* The hook this program is loaded for (enum hs_hook): the loader sets it. */
const volatile __u8 event_hook = 0;

/* A token from this CPU's bucket: @rate a second, a second's worth at
 * most. Returns 1 when there was one. */
static __always_inline int event_token(__u32 rate)
{
	struct hs_event_bucket *b;
	__u32 key = 0;
	__u64 now, el, tok, cap;

	b = bpf_map_lookup_elem(&event_bucket, &key);
	if (!b || !rate)
		return 0;
	now = bpf_ktime_get_ns();
	el = now - b->last_ns;
	if (el > HS_NS_PER_S)
		el = HS_NS_PER_S;
	cap = (__u64)rate * HS_NS_PER_S;
	tok = b->tokens + el * rate;
	if (tok > cap)
		tok = cap;
	b->last_ns = now;
	if (tok < HS_NS_PER_S) {
		b->tokens = tok;
		return 0;
	}
	b->tokens = tok - HS_NS_PER_S;
	return 1;
}

/*
 * Send the event @ev describes (rule, action, reason, name; the rest is
 * stamped here) for a packet of connection @key. Global: the verifier
 * checks it once, not at every place that emits. Counted as events or
 * events_dropped.
 */
__attribute__((noinline)) int event_emit(struct hs_event *ev, const struct hs_flow_key *key)
{
	struct hs_counters *cnt;
	struct hs_config *cfg;
	struct hs_event *out;

	if (!ev || !key || maps_lookup(&cfg, &cnt))
		return 0;
	if (!cfg->event_rate)
		return 0;
	if (!event_token(cfg->event_cpu_rate)) {
		cnt->events_dropped++;
		return 0;
	}
	out = bpf_ringbuf_reserve(&events, sizeof(*out), 0);
	if (!out) {
		cnt->events_dropped++;
		return 0;
	}
	__builtin_memcpy(out, ev, sizeof(*out));
	__builtin_memcpy(&out->key, key, sizeof(out->key));
	out->time_ns = bpf_ktime_get_boot_ns();
	out->ifindex = cfg->ifindex;
	out->hook = event_hook;
	/* No wake-up per event (a wake-up costs more than the event): the
	 * reader polls; it is woken only when a quarter of the ring waits. */
	bpf_ringbuf_submit(out,
			   bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > HS_EVENTS_RING_BYTES / 4
				   ? BPF_RB_FORCE_WAKEUP
				   : BPF_RB_NO_WAKEUP);
	cnt->events++;
	return 0;
}

/* An event without a name: a packet dropped (@action drop) for @reason,
 * or passed by observe mode (@action observe) where it would have been. */
static __always_inline void event_drop(struct hs_event *ev, const struct hs_flow_key *key,
				       __u8 action, __u32 reason)
{
	ev->rule = 0;
	ev->generation = 0;
	ev->action = action;
	ev->reason = (__u8)reason;
	ev->name_len = 0;
	event_emit(ev, key);
}

#endif /* HDRSTRIP_BPF_EVENTS_H */
