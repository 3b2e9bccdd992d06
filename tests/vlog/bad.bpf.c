// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A program the verifier must reject: it reads a packet byte without
 * checking it against data_end. Loaded by test_vlog to produce a real
 * verifier log through the CLI's capture path.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int hdrstrip_bad(struct xdp_md *ctx)
{
	unsigned char *data = (unsigned char *)(long)ctx->data;

	return data[20] == 0x42 ? XDP_DROP : XDP_PASS;
}
