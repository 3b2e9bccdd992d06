// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The empty program of the data-plane benchmark: what BPF_PROG_TEST_RUN
 * costs around any program at all. Every other figure includes it.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int empty_xdp(struct xdp_md *ctx __attribute__((unused)))
{
	return XDP_PASS;
}

SEC("tc")
int empty_tc(struct __sk_buff *skb __attribute__((unused)))
{
	return TC_ACT_UNSPEC;
}
