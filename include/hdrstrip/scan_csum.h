/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The checksum of rewritten bytes: every byte the scanner rewrites goes
 * through hs_rewrite_byte() (or the word-wide masking in scan_fast.h, which
 * adds words the same way), and the one's complement difference is summed
 * in memory order, so that the caller updates the TCP checksum once
 * (RFC 1624) instead of summing the payload again.
 *
 * A part of the scanner that scan.h includes in its place among the others:
 * it uses the state scan.h declares and the parts before it. Include
 * <hdrstrip/scan.h>, not this file.
 */
#ifndef HDRSTRIP_SCAN_CSUM_H
#define HDRSTRIP_SCAN_CSUM_H

#ifndef HDRSTRIP_SCAN_H
#error "include <hdrstrip/scan.h>, which includes scan_csum.h in its place"
#endif

/* Contribution of byte @b at offset @off to a memory-order 16-bit sum whose
 * words start at offsets of parity @par. */
HS_INLINE __u64 hs_csum_byte_par(__u32 par, __u32 off, __u8 b)
{
	return ((off ^ par) & 1) ? (__u64)b << 8 : b;
}

/* Same, for the eight bytes of @w at offset @off. */
HS_INLINE __u64 hs_csum_word_par(__u32 par, __u32 off, __u64 w)
{
	const __u64 m = 0x0000ffff0000ffffULL;
	__u64 x = ((off ^ par) & 1) ? (w << 8) : w;
	__u64 sum = (x & m) + ((x >> 16) & m);

	sum = (sum & 0xffffffffULL) + (sum >> 32);
	if ((off ^ par) & 1)
		sum += w >> 56;
	return sum;
}

/* The same for the buffer @s scans. */
HS_INLINE __u64 hs_csum_byte(const struct hs_scan *s, __u32 off, __u8 b)
{
	return hs_csum_byte_par(s->csum_par, off, b);
}

HS_INLINE __u64 hs_csum_word(const struct hs_scan *s, __u32 off, __u64 w)
{
	return hs_csum_word_par(s->csum_par, off, w);
}

/* Fold a 64-bit one's complement accumulator to 16 bits. */
HS_INLINE __u16 hs_csum_fold(__u64 x)
{
	x = (x & 0xffffffffULL) + (x >> 32);
	x = (x & 0xffff) + (x >> 16);
	x = (x & 0xffff) + (x >> 16);
	x = (x & 0xffff) + (x >> 16);
	return (__u16)x;
}

/* New value of a 16-bit Internet checksum field (as read from memory) after
 * rewrites whose differences add up to @acc (RFC 1624, eqn. 3). */
HS_INLINE __u16 hs_csum_update_acc(__u64 acc, __u16 check)
{
	__u64 sum = (__u64)(__u16)~check + hs_csum_fold(acc);

	return (__u16)~hs_csum_fold(sum);
}

/* The same for the rewrites accumulated in @s. */
HS_INLINE __u16 hs_csum_update(const struct hs_scan *s, __u16 check)
{
	return hs_csum_update_acc(s->csum_acc, check);
}

HS_INLINE void hs_rewrite_byte(struct hs_scan *s, __u8 *p, __u32 off, __u8 nb)
{
	__u8 ob = *p;

	*p = nb;
	s->csum_acc += hs_csum_byte(s, off, nb) + 0xffff - hs_csum_byte(s, off, ob);
}

#endif /* HDRSTRIP_SCAN_CSUM_H */
