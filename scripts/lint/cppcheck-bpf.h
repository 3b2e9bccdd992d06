/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * For make lint's cppcheck of the BPF programs only (forced with --include):
 * the libbpf macros they use, which cppcheck cannot see (it does not read
 * system headers). Map definitions keep their shape (a pointer member per
 * attribute), which is all cppcheck needs; sections mean nothing to it.
 */
#define SEC(name)
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name
#define __always_inline inline
