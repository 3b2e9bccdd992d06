// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Test-only TC program for the end-to-end tests: how much of each skb is
 * linear where it runs (data_end - data, what a tc program can read with
 * direct packet access) against the packet's length. It changes nothing
 * and returns TC_ACT_UNSPEC (the next filter runs).
 *
 * The test reads the "stats" map: of the IPv6 frames at least
 * stats.min_len bytes long (set by the test; 0: every one), how many were
 * seen, how many had part of them outside the linear head, the shortest
 * linear head and the longest frame among those.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct probe_stats {
	__u32 min_len; /* frames shorter than this are not counted (set by the test) */
	__u32 min_linear; /* the shortest linear head of the counted frames (0: none yet) */
	__u32 max_len; /* the longest counted frame */
	__u32 reserved;
	__u64 frames; /* counted frames */
	__u64 nonlinear; /* counted frames with bytes outside the linear head */
};

_Static_assert(sizeof(struct probe_stats) == 32, "probe_stats layout");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_stats);
} stats SEC(".maps");

SEC("tc")
int linear_probe(struct __sk_buff *skb)
{
	__u32 key = 0, linear = skb->data_end - skb->data;
	struct probe_stats *s = bpf_map_lookup_elem(&stats, &key);

	if (!s || skb->protocol != bpf_htons(ETH_P_IPV6) || skb->len < s->min_len)
		return TC_ACT_UNSPEC;
	/* One CPU at a time here: the test sends one frame at a time. */
	s->frames++;
	if (linear < skb->len)
		s->nonlinear++;
	if (!s->min_linear || linear < s->min_linear)
		s->min_linear = linear;
	if (skb->len > s->max_len)
		s->max_len = skb->len;
	return TC_ACT_UNSPEC;
}
