/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Portability shims for code that is compiled both by clang for the BPF
 * target and by the host compiler. Nothing here may pull in libc.
 */
#ifndef HDRSTRIP_PORTABLE_H
#define HDRSTRIP_PORTABLE_H

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Every function shared with the BPF programs is forced inline: the
 * verifier then sees the bounds checks in the context of each caller. */
#define HS_INLINE static __always_inline

/*
 * A function the BPF verifier should check once, on its own, rather than
 * inline at every call site: a global BPF subprogram (its pointer
 * arguments may be NULL as far as the verifier knows; it checks them). On
 * the host, an inline function like the rest.
 */
#ifdef __bpf__
#define HS_SUBPROG __attribute__((noinline))
#else
#define HS_SUBPROG HS_INLINE
#endif

#define HS_LIKELY(x) __builtin_expect(!!(x), 1)
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define HS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The BPF target has no popcount instruction, so the trie uses the classic
 * branch-free SWAR count (Hacker's Delight 5-2) everywhere: the host tools
 * and benchmarks measure the very instruction sequence the kernel runs.
 */
HS_INLINE __u32 hs_popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

/*
 * Index (0..7) of the lowest byte whose top bit is set in @t, where @t only
 * has bits at positions 8k+7 (the output of the SWAR byte tests below).
 * Isolate the lowest bit, move it to bit 8k, and let a multiply move the
 * constant byte k into the top byte. Undefined for t == 0.
 */
HS_INLINE __u32 hs_first_byte(__u64 t)
{
	__u64 low = t & (~t + 1);

	return (__u32)(((low >> 7) * 0x0001020304050607ULL) >> 56);
}

/*
 * A byte used as a table index, with what the BPF verifier knows of it
 * reset to "some byte". Indexing makes the verifier track a value exactly;
 * without this, every path that had compared the byte to some constant first
 * would carry its own range of it and be verified apart. The AND is an
 * instruction of its own (in asm, so clang cannot fold it away).
 */
HS_INLINE __u32 hs_index_byte(__u8 b)
{
	__u32 v = b;

#ifdef __bpf__
	asm volatile("%0 &= 0xff" : "+r"(v));
#endif
	return v;
}

#define HS_ONES 0x0101010101010101ULL
#define HS_HIGHS 0x8080808080808080ULL

/* Top bit of each byte of @w that equals @c (exact for the lowest match;
 * bytes above a match may show false positives, which callers ignore). */
HS_INLINE __u64 hs_bytes_eq(__u64 w, __u8 c)
{
	__u64 x = w ^ (HS_ONES * c);

	return (x - HS_ONES) & ~x & HS_HIGHS;
}

/* Top bit of each byte of @w below @c (< 0x80), exact as hs_bytes_eq(). */
HS_INLINE __u64 hs_bytes_below(__u64 w, __u8 c)
{
	return (w - HS_ONES * c) & ~w & HS_HIGHS;
}

/*
 * Unaligned little-endian 64-bit load and store. The BPF backend would split
 * a memcpy with unknown alignment into eight byte loads; the kernel allows
 * unaligned packet and map access on the architectures we run on, so the BPF
 * build dereferences directly and the host build stays UBSan-clean.
 */
#ifdef __bpf__
#define HS_LOAD(type, p) (*(const type *)(p))
#else
#define HS_LOAD(type, p)                                                                           \
	({                                                                                         \
		type v_;                                                                           \
		__builtin_memcpy(&v_, (p), sizeof(v_));                                            \
		v_;                                                                                \
	})
#endif

HS_INLINE __u64 hs_load64(const __u8 *p)
{
	return HS_LOAD(__u64, p);
}

/* Narrower loads, same rules. */
HS_INLINE __u32 hs_load32(const __u8 *p)
{
	return HS_LOAD(__u32, p);
}

HS_INLINE __u16 hs_load16(const __u8 *p)
{
	return HS_LOAD(__u16, p);
}

HS_INLINE void hs_store64(__u8 *p, __u64 v)
{
#ifdef __bpf__
	*(__u64 *)p = v;
#else
	__builtin_memcpy(p, &v, sizeof(v));
#endif
}

#endif /* HDRSTRIP_PORTABLE_H */
