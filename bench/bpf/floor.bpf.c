// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The floor program of the data-plane benchmark: the least work any
 * program that looks at every payload byte must do. It finds the TCP
 * payload of an untagged IPv4 frame and counts its line ends (LF bytes),
 * eight bytes per step, then the last few bytes one at a time. The payload
 * is taken to run to the frame's end: the benchmark's frames carry no
 * Ethernet padding, and one bound per word is the cheapest honest check.
 *
 * The loop is a plain bounded loop with a packet bound check per word: no
 * helper call, no callback (bpf_loop() would add an indirect call per
 * step, an open-coded iterator a kfunc call). The verifier walks every
 * iteration, which it accepts for payloads of up to FLOOR_MAX_WORDS words.
 * The count goes to a global so that the loop cannot be optimised away.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "floor_loop.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 floor_lines;

static __always_inline __u64 count_lf(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct tcphdr *th;

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_TCP)
		return 0;
	th = (void *)ip + ip->ihl * 4;
	if ((void *)(th + 1) > data_end)
		return 0;
	return floor_lf_words((__u8 *)th + th->doff * 4, data_end);
}

SEC("xdp")
int floor_xdp(struct xdp_md *ctx)
{
	floor_lines += count_lf((void *)(long)ctx->data, (void *)(long)ctx->data_end);
	return XDP_PASS;
}

SEC("tc")
int floor_tc(struct __sk_buff *skb)
{
	floor_lines += count_lf((void *)(long)skb->data, (void *)(long)skb->data_end);
	return TC_ACT_UNSPEC;
}
