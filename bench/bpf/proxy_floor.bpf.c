// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The floor proxy mode's figures are set against (bench/bench-proxy.sh): the
 * same plumbing as bpf/proxy.bpf.c, a sockops program that puts every
 * outgoing connection of the cgroup into a sockhash and an sk_msg program on
 * it, but one that passes every send untouched. What it costs is what the
 * kernel's sk_msg path costs before hdrstrip looks at a byte.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} floor_socks SEC(".maps");

SEC("sockops")
int floor_sockops(struct bpf_sock_ops *skops)
{
	__u64 cookie;

	if (skops->op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB)
		return 1;
	cookie = bpf_get_socket_cookie(skops);
	bpf_sock_hash_update(skops, &floor_socks, &cookie, BPF_NOEXIST);
	return 1;
}

SEC("sk_msg")
int floor_msg(struct sk_msg_md *msg __attribute__((unused)))
{
	return SK_PASS;
}
