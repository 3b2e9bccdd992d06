// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * 'hdrstrip --version': the version, the libraries it was linked with and
 * what the running kernel offers of what hdrstrip uses, as 'bpftool -V'
 * tells its build: what a bug report needs, and why an attach would fail.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <net/if.h>

#include "cli.h"
#include "loader.h"
#include "view.h"

/* libxdp has no version call: the one the CLI was built (and, by default,
 * statically linked) with. */
#ifndef HDRSTRIP_LIBXDP_VERSION
#define HDRSTRIP_LIBXDP_VERSION "unknown"
#endif

/* A feature: 1 found, 0 not, -1 unknown (a probe this process may not run). */
struct feature {
	const char *name;
	const char *what; /* why hdrstrip cares */
	int have;
};

/* Is @name a function of the kernel's BTF, or of module @mod's? */
static int btf_has_func(const struct btf *vmlinux, const char *mod, const char *name)
{
	char path[64];
	struct btf *m;
	int r;

	if (!vmlinux)
		return -1;
	if (btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) >= 0)
		return 1;
	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", mod);
	if (access(path, R_OK))
		return 0;
	m = btf__parse_split(path, (struct btf *)vmlinux);
	if (!m)
		return 0;
	r = btf__find_by_name_kind(m, name, BTF_KIND_FUNC) >= 0;
	btf__free(m);
	return r;
}

/* A probe's answer: it loads a program, which needs CAP_BPF. */
static int probe_answer(int r)
{
	return r == 1 ? 1 : r == 0 ? 0 : -1;
}

static void silent(void)
{
	libbpf_set_print(NULL);
}

/* XDP's modes here: skb (generic) on every interface, native on those whose
 * driver has it, as "native: eth0 veth1" into @buf; "" when unknown. */
static const char *xdp_modes(char *buf, size_t size, int json)
{
	int idx[64], n = xdp_native_devs(idx, 64);
	size_t o = 0;

	buf[0] = 0;
	if (n < 0)
		return buf;
	for (int i = 0; i < n && o < size; i++) {
		char name[IF_NAMESIZE];

		if (!if_indextoname((unsigned int)idx[i], name))
			continue;
		o += snprintf(buf + o, size - o, json ? "%s\"%s\"" : "%s%s",
			      o ? (json ? "," : " ") : "", name);
	}
	return buf;
}

int print_version(int json)
{
	struct btf *vmlinux;
	struct utsname u;
	struct feature f[] = {
		{ "btf", "CO-RE (proxy mode reads the kernel's struct tcp_sock)", 0 },
		{ "bpf_loop", "the scan loop: hdrstrip loads only with it (Linux 5.17)", 0 },
		{ "bpf_xdp_ct_lookup", "conntrack lookups at XDP (kfunc)", 0 },
		{ "bpf_skb_ct_lookup", "conntrack lookups at TC (kfunc)", 0 },
		{ "xdp", "the xdp hook (skb mode on any device, native where the driver has it)",
		  0 },
		{ "tc", "the tc-ingress and tc-egress hooks", 0 },
		{ "sk_msg", "proxy mode (with sockops)", 0 },
	};
	size_t n = sizeof(f) / sizeof(f[0]);
	char native[1024];
	int can_load = caps_bpf();

	silent();
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	vmlinux = btf__load_vmlinux_btf();
	f[0].have = vmlinux != NULL;
	/* Probes load programs: without the capability they say nothing. */
	f[1].have = can_load ? probe_answer(libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP,
								    BPF_FUNC_loop, NULL))
			     : -1;
	f[2].have = btf_has_func(vmlinux, "nf_conntrack", "bpf_xdp_ct_lookup");
	f[3].have = btf_has_func(vmlinux, "nf_conntrack", "bpf_skb_ct_lookup");
	f[4].have =
		can_load ? probe_answer(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL)) : -1;
	f[5].have =
		can_load ? probe_answer(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SCHED_CLS, NULL))
			 : -1;
	f[6].have = can_load ? probe_answer(libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SK_MSG, NULL))
			     : -1;
	btf__free(vmlinux);
	xdp_modes(native, sizeof(native), json);

	if (json) {
		printf("{\"version\":\"%s\",\"libbpf\":\"%s\",\"libxdp\":\"%s\",\"kernel\":",
		       HDRSTRIP_VERSION, libbpf_version_string(), HDRSTRIP_LIBXDP_VERSION);
		json_str(u.release);
		printf(",\"features\":{");
		for (size_t i = 0; i < n; i++)
			printf("%s\"%s\":%s", i ? "," : "", f[i].name,
			       f[i].have < 0 ? "null"
			       : f[i].have   ? "true"
					     : "false");
		printf("},\"xdp_modes\":{\"skb\":%s,\"native\":", f[4].have > 0 ? "true" : "false");
		if (xdp_native_devs(NULL, 0) < 0)
			printf("null}}\n");
		else
			printf("[%s]}}\n", native);
		return EXIT_OK;
	}
	printf("hdrstrip %s\n", HDRSTRIP_VERSION);
	printf("using libbpf %s, libxdp v%s\n", libbpf_version_string(), HDRSTRIP_LIBXDP_VERSION);
	printf("kernel %s:", u.release);
	for (size_t i = 0; i < n; i++)
		printf(" %s %s%s", f[i].name,
		       f[i].have < 0 ? "unknown"
		       : f[i].have   ? "yes"
				     : "no",
		       i + 1 < n ? "," : "\n");
	if (f[4].have > 0)
		printf("xdp modes: skb on every interface; native on %s\n",
		       xdp_native_devs(NULL, 0) < 0
			       ? "those whose driver has it (Linux 6.3 tells which)"
		       : native[0] ? native
				   : "none here (no driver of this namespace has it)");
	for (size_t i = 0; i < n; i++)
		if (f[i].have <= 0)
			printf("  %s %s: %s%s\n", f[i].name, f[i].have ? "unknown" : "missing",
			       f[i].what,
			       f[i].have < 0 ? " (probing it loads a program: run as root)" : "");
	return EXIT_OK;
}
