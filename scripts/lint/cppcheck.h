/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * For make lint's cppcheck only (forced with --include): the libbpf macros
 * the host code uses, which cppcheck cannot see (it does not read system
 * headers), as libbpf defines them in effect.
 */
#define LIBBPF_OPTS(TYPE, NAME, ...) struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }
#define DECLARE_LIBBPF_OPTS LIBBPF_OPTS
