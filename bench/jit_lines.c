// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The JIT line table of a loaded BPF program, for profiling by source line
 * where perf cannot annotate BPF (a perf built without libopcodes, a
 * bpftool without libbfd): one line per line-info record,
 *
 *   FUNCTION OFFSET FILE:LINE
 *
 * OFFSET from the start of the function's JIT image, as perf script's
 * sym+offset gives it (bench/profile-scan.sh maps samples through it).
 *
 *   jit_lines PROG_ID
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

int main(int argc, char **argv)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), nl, njl, nk, nf, lrs, frs, btf_id;
	struct bpf_line_info *li;
	struct bpf_func_info *fi;
	__u64 *jli, *ks;
	struct btf *btf;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: jit_lines PROG_ID\n");
		return 2;
	}
	fd = bpf_prog_get_fd_by_id((__u32)strtoul(argv[1], NULL, 0));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		fprintf(stderr, "jit_lines: program %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	nl = info.nr_line_info;
	njl = info.nr_jited_line_info;
	nk = info.nr_jited_ksyms;
	nf = info.nr_func_info;
	lrs = info.line_info_rec_size;
	frs = info.func_info_rec_size;
	btf_id = info.btf_id;
	li = calloc(nl ? nl : 1, lrs ? lrs : 1);
	fi = calloc(nf ? nf : 1, frs ? frs : 1);
	jli = calloc(njl ? njl : 1, sizeof(*jli));
	ks = calloc(nk ? nk : 1, sizeof(*ks));
	if (!li || !fi || !jli || !ks)
		return 1;
	memset(&info, 0, sizeof(info));
	info.nr_line_info = nl;
	info.line_info_rec_size = lrs;
	info.line_info = (__u64)(unsigned long)li;
	info.nr_jited_line_info = njl;
	info.jited_line_info_rec_size = sizeof(*jli);
	info.jited_line_info = (__u64)(unsigned long)jli;
	info.nr_jited_ksyms = nk;
	info.jited_ksyms = (__u64)(unsigned long)ks;
	info.nr_func_info = nf;
	info.func_info_rec_size = frs;
	info.func_info = (__u64)(unsigned long)fi;
	len = sizeof(info);
	btf = btf__load_from_kernel_by_id(btf_id);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !btf) {
		fprintf(stderr, "jit_lines: program %s: no line info (%s)\n", argv[1],
			strerror(errno));
		return 1;
	}
	for (__u32 i = 0; i < njl && i < nl; i++) {
		const struct bpf_line_info *l = (const void *)((const char *)li + (size_t)i * lrs);
		const char *fname = "?", *file, *base;
		__u64 a = jli[i], start = 0;
		int f = -1;

		for (__u32 k = 0; k < nk; k++)
			if (ks[k] <= a && ks[k] >= start) {
				start = ks[k];
				f = (int)k;
			}
		if (f >= 0 && (__u32)f < nf) {
			const struct bpf_func_info *fn =
				(const void *)((const char *)fi + (size_t)f * frs);
			const struct btf_type *t = btf__type_by_id(btf, fn->type_id);

			if (t)
				fname = btf__name_by_offset(btf, t->name_off);
		}
		file = btf__name_by_offset(btf, l->file_name_off);
		base = file ? strrchr(file, '/') : NULL;
		printf("%s %llu %s:%u\n", fname, (unsigned long long)(a - start),
		       base ? base + 1 : file ? file : "?", BPF_LINE_INFO_LINE_NUM(l->line_col));
	}
	btf__free(btf);
	return 0;
}
