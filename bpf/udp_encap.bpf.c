// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Which UDP sockets of a network namespace take packets out of a tunnel:
 * a BPF iterator over the namespace's UDP sockets (the loader runs it at
 * attach and update, user/encap.c) that writes the local port of every
 * socket with an encapsulation set (udp_sock.encap_type or encap_rcv:
 * VXLAN, GENEVE, FOU, GUE, WireGuard, L2TP, ESP in UDP, bareudp, GTP...).
 * What such a socket takes out of a datagram may be a TCP segment for an
 * inspected socket; what any other UDP socket gets is only UDP. The
 * datapath reads the same two fields of the socket that a datagram to a
 * port not in the table goes to (bpf/hdrstrip.bpf.c, udp_encap_sock()):
 * a socket made after the attach is not missed either.
 */
#include <linux/bpf.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include <hdrstrip/tunnel.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The kernel's structs, the fields read, by name (CO-RE). */
struct sock_common___hs {
	__u16 skc_num; /* the local port, host order */
	unsigned short skc_family;
} __attribute__((preserve_access_index));

struct sock___hs {
	struct sock_common___hs __sk_common;
} __attribute__((preserve_access_index));

struct inet_sock___hs {
	struct sock___hs sk;
} __attribute__((preserve_access_index));

struct udp_sock___hs {
	struct inet_sock___hs inet;
	__u8 encap_type;
	void *encap_rcv;
} __attribute__((preserve_access_index));

struct seq_file___hs;

struct bpf_iter_meta___hs {
	struct seq_file___hs *seq;
} __attribute__((preserve_access_index));

struct bpf_iter__udp___hs {
	struct bpf_iter_meta___hs *meta;
	struct udp_sock___hs *udp_sk;
} __attribute__((preserve_access_index));

SEC("iter/udp")
int hdrstrip_udp_encap(struct bpf_iter__udp___hs *ctx)
{
	struct udp_sock___hs *up = ctx->udp_sk;
	struct hs_encap_sock rec = {};

	if (!up)
		return 0;
	rec.encap_type = BPF_CORE_READ(up, encap_type);
	if (!rec.encap_type && !BPF_CORE_READ(up, encap_rcv))
		return 0;
	rec.port = BPF_CORE_READ(up, inet.sk.__sk_common.skc_num);
	rec.family = (__u8)BPF_CORE_READ(up, inet.sk.__sk_common.skc_family);
	bpf_seq_write((void *)ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}
