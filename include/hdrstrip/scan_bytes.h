/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What a byte is to the scanner, and what a masked byte becomes: line ends,
 * the blanks some parser strips around a name, RFC 9110 token bytes, hex
 * digits, and the filler's bytes (hs_trie.fill). The other parts classify
 * bytes only through these.
 *
 * A part of the scanner that scan.h includes in its place among the others:
 * it uses the state scan.h declares and the parts before it. Include
 * <hdrstrip/scan.h>, not this file.
 */
#ifndef HDRSTRIP_SCAN_BYTES_H
#define HDRSTRIP_SCAN_BYTES_H

#ifndef HDRSTRIP_SCAN_H
#error "include <hdrstrip/scan.h>, which includes scan_bytes.h in its place"
#endif

HS_INLINE int hs_is_eol(__u8 b)
{
	return b == '\r' || b == '\n';
}

/* Bytes that some parser strips around a name or splits a request line on:
 * SP HTAB VT FF 0x1c-0x1f (Python's str.split/strip), 0x85 0xa0 (the same on
 * latin-1 text). */
#define HS_BLANK_LOW                                                                               \
	((1ULL << ' ') | (1ULL << '\t') | (1ULL << 0x0b) | (1ULL << 0x0c) | (0xfULL << 0x1c))

HS_INLINE int hs_is_blank(__u8 b)
{
	if (b < 64)
		return (HS_BLANK_LOW >> b) & 1;
	return b == 0x85 || b == 0xa0;
}

/* RFC 9110 tchar, as a 128-bit set. */
HS_INLINE int hs_is_tchar_byte(__u8 b)
{
	const __u64 lo = 0x03ff6cfa00000000ULL; /* ! # $ % & ' * + - . 0-9 */
	const __u64 hi = 0x57ffffffc7fffffeULL; /* A-Z ^ _ ` a-z | ~ */

	if (b < 64)
		return (lo >> b) & 1;
	if (b < 128)
		return (hi >> (b - 64)) & 1;
	return 0;
}

/* Value 0-15 of a hex digit, or 16. */
HS_INLINE __u32 hs_hex(__u8 b)
{
	if (b >= '0' && b <= '9')
		return b - '0';
	b |= 0x20;
	if (b >= 'a' && b <= 'f')
		return b - 'a' + 10;
	return 16;
}

/* The filler byte for column @col of a masked line: the list's filler name
 * (hs_trie.fill) cut to @name_fill bytes, ':', ' ', then 'x'. */
HS_INLINE __u8 hs_fill_byte(const struct hs_trie *t, __u32 col, __u32 name_fill)
{
	if (col < name_fill)
		return (__u8)(t->fill[(col >> 3) & 1] >> (8 * (col & 7)));
	if (col == name_fill)
		return ':';
	if (col == name_fill + 1)
		return ' ';
	return 'x';
}

/* The byte a masked continuation line is made of (after its SP/HTAB run):
 * the filler name's first byte, which starts no listed name, so that the
 * line read on its own is no listed field either. */
HS_INLINE __u8 hs_fill_cont(const struct hs_trie *t)
{
	return (__u8)t->fill[0];
}

#endif /* HDRSTRIP_SCAN_BYTES_H */
