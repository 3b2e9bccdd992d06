// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The UDP sockets of this network namespace that take packets out of a
 * tunnel (bpf/udp_encap.bpf.c's iterator): their ports are where a UDP
 * datagram may turn into a TCP segment for an inspected socket.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "udp_encap.skel.h"

int udp_encap_ports(struct hs_encap_sock *out, int max)
{
	struct hdrstrip_udp_encap *skel = hdrstrip_udp_encap__open_and_load();
	struct hs_encap_sock rec;
	struct bpf_link *link;
	int fd, n = 0, r = 0;
	ssize_t got;

	if (!skel)
		return -errno;
	link = bpf_program__attach_iter(skel->progs.hdrstrip_udp_encap, NULL);
	if (!link) {
		r = -errno;
		goto out;
	}
	/* The iterator walks the namespace of the process that makes its fd:
	 * this one's. */
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		r = -errno;
		goto out_link;
	}
	while ((got = read(fd, &rec, sizeof(rec))) == (ssize_t)sizeof(rec)) {
		int dup = 0;

		for (int i = 0; i < n; i++)
			dup |= out[i].port == rec.port;
		if (!dup && n < max)
			out[n++] = rec;
	}
	if (got < 0)
		r = -errno;
	close(fd);
out_link:
	bpf_link__destroy(link);
out:
	hdrstrip_udp_encap__destroy(skel);
	return r ? r : n;
}

int ct_kfuncs_present(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf(), *mod;
	int found;

	if (!vmlinux)
		return 0;
	found = btf__find_by_name_kind(vmlinux, "bpf_xdp_ct_lookup", BTF_KIND_FUNC) > 0;
	if (!found) {
		/* A modular conntrack keeps them in its own BTF. */
		mod = btf__load_module_btf("nf_conntrack", vmlinux);
		found = mod && btf__find_by_name_kind(mod, "bpf_xdp_ct_lookup", BTF_KIND_FUNC) > 0;
		btf__free(mod);
	}
	btf__free(vmlinux);
	return found;
}

int udp_encap_lookup_present(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int found;

	if (!vmlinux)
		return 0;
	found = btf__find_by_name_kind(vmlinux, "bpf_rdonly_cast", BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return found;
}
