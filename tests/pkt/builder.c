// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The test packet builder. Plain byte writes in network order, no kernel
 * structs: the tests must not share a layout mistake with the datapath.
 */
#include <stdio.h>
#include <string.h>

#include "builder.h"

#define ETH_HLEN_ 14
#define IP4_HLEN 20
#define IP6_HLEN 40
#define TCP_HLEN 20

#define NH_HOPOPTS 0
#define NH_TCP 6
#define NH_ROUTING 43
#define NH_FRAGMENT 44
#define NH_AH 51
#define NH_DSTOPTS 60

static const __u8 ip4_src[4] = { 10, 0, 0, 1 }, ip4_dst[4] = { 10, 0, 0, 2 };
static const __u8 ip6_src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const __u8 ip6_dst[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static __u16 get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

/* RFC 1071: add 16-bit big-endian words; an odd last byte is padded with
 * a zero byte on its right. Carries are folded once at the end. */
__u32 pb_sum(const void *p, size_t len, __u32 sum)
{
	const __u8 *b = p;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (__u32)b[len - 1] << 8;
	return sum;
}

__u16 pb_fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

static size_t ext_size(const struct pb_ext *e)
{
	switch (e->type) {
	case NH_FRAGMENT:
		return 8;
	case NH_AH:
		return ((size_t)e->len + 2) * 4;
	default:
		return ((size_t)e->len + 1) * 8;
	}
}

static void put_ext(__u8 *p, const struct pb_ext *e, __u8 next)
{
	size_t n = ext_size(e);

	memset(p, 0, n);
	p[0] = next;
	switch (e->type) {
	case NH_FRAGMENT:
		put16(p + 2, e->frag);
		p[4] = 0xab; /* identification */
		break;
	case NH_AH:
		p[1] = e->len;
		break;
	case NH_ROUTING:
		p[1] = e->len;
		p[2] = 253; /* experimental routing type, segments left 0 */
		break;
	default:
		/* Hop-by-hop / destination options: one PadN filling it. */
		p[1] = e->len;
		p[2] = 1;
		p[3] = (__u8)(n - 4);
		break;
	}
}

size_t pb_build(const struct pb_spec *s, const void *payload, size_t plen, __u8 *out,
		struct pb_layout *lay)
{
	size_t off = 0, l3, l4, ext_len = 0, tcp_len, i;
	__u16 proto = s->ipv6 ? 0x86dd : 0x0800;
	const __u8 *src4 = ip4_src, *dst4 = ip4_dst, *src6 = ip6_src, *dst6 = ip6_dst;
	__u32 sum;
	int v;

	for (i = 0; i < (size_t)s->n_ext; i++)
		ext_len += ext_size(&s->ext[i]);
	tcp_len = TCP_HLEN + s->tcp_opts_len + plen;
	if (ETH_HLEN_ + 4 * s->n_vlans + IP6_HLEN + 40 + ext_len + tcp_len + s->trailer >
	    PB_MAX_PKT)
		return 0;

	/* Ethernet and tags: each tag's TPID sits where the EtherType was. */
	memcpy(out, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	off = 12;
	for (v = 0; v < s->n_vlans; v++) {
		put16(out + off, s->vlan_tpid[v]);
		put16(out + off + 2, (__u16)(100 + v)); /* PCP 0, VID 100.. */
		off += 4;
	}
	put16(out + off, proto);
	off += 2;
	l3 = off;

	memset(lay, 0, sizeof(*lay));
	/* The other direction of the same connection: addresses swapped. */
	if (s->reply) {
		src4 = ip4_dst;
		dst4 = ip4_src;
		src6 = ip6_dst;
		dst6 = ip6_src;
	}
	if (!s->ipv6) {
		size_t hlen = IP4_HLEN + s->ip_opts_len;

		out[l3] = 0x40 | (__u8)(hlen / 4);
		out[l3 + 1] = 0;
		put16(out + l3 + 2, (__u16)(hlen + tcp_len));
		put16(out + l3 + 4, 0x1234);
		put16(out + l3 + 6, s->frag_off);
		out[l3 + 8] = 64;
		out[l3 + 9] = NH_TCP;
		put16(out + l3 + 10, 0);
		memcpy(out + l3 + 12, src4, 4);
		memcpy(out + l3 + 16, dst4, 4);
		memcpy(out + l3 + 20, s->ip_opts, s->ip_opts_len);
		put16(out + l3 + 10, pb_fold(pb_sum(out + l3, hlen, 0)));
		lay->ip_check_off = l3 + 10;
		l4 = l3 + hlen;
	} else {
		__u8 next;

		out[l3] = 0x60;
		memset(out + l3 + 1, 0, 3);
		put16(out + l3 + 4, (__u16)(ext_len + tcp_len));
		out[l3 + 6] = s->n_ext ? s->ext[0].type : NH_TCP;
		out[l3 + 7] = 64;
		memcpy(out + l3 + 8, src6, 16);
		memcpy(out + l3 + 24, dst6, 16);
		off = l3 + IP6_HLEN;
		for (i = 0; i < (size_t)s->n_ext; i++) {
			next = i + 1 < (size_t)s->n_ext ? s->ext[i + 1].type : NH_TCP;
			put_ext(out + off, &s->ext[i], next);
			off += ext_size(&s->ext[i]);
		}
		l4 = off;
	}

	put16(out + l4, s->sport ? s->sport : 40000);
	put16(out + l4 + 2, s->dport ? s->dport : 80);
	memcpy(out + l4 + 4, "\x00\x00\x00\x01\x00\x00\x00\x01", 8);
	if (s->seq_set) {
		put16(out + l4 + 4, (__u16)(s->seq >> 16));
		put16(out + l4 + 6, (__u16)s->seq);
	}
	out[l4 + 12] = (__u8)(((TCP_HLEN + s->tcp_opts_len) / 4) << 4);
	out[l4 + 13] = s->tcp_flags ? s->tcp_flags : 0x18; /* PSH ACK */
	put16(out + l4 + 14, 65535);
	put16(out + l4 + 16, 0);
	put16(out + l4 + 18, 0);
	memcpy(out + l4 + TCP_HLEN, s->tcp_opts, s->tcp_opts_len);
	memcpy(out + l4 + TCP_HLEN + s->tcp_opts_len, payload, plen);

	/* Pseudo header, then the segment (RFC 793 / RFC 8200 8.1). */
	if (!s->ipv6) {
		__u8 ph[12];

		memcpy(ph, src4, 4);
		memcpy(ph + 4, dst4, 4);
		ph[8] = 0;
		ph[9] = NH_TCP;
		put16(ph + 10, (__u16)tcp_len);
		sum = pb_sum(ph, sizeof(ph), 0);
	} else {
		__u8 ph[40] = { 0 };

		memcpy(ph, src6, 16);
		memcpy(ph + 16, dst6, 16);
		ph[34] = (__u8)(tcp_len >> 8);
		ph[35] = (__u8)tcp_len;
		ph[39] = NH_TCP;
		sum = pb_sum(ph, sizeof(ph), 0);
	}
	put16(out + l4 + 16, pb_fold(pb_sum(out + l4, tcp_len, sum)));

	lay->l3_off = l3;
	lay->l4_off = l4;
	lay->payload_off = l4 + TCP_HLEN + s->tcp_opts_len;
	lay->tcp_check_off = l4 + 16;
	lay->len = l4 + tcp_len + s->trailer;
	memset(out + l4 + tcp_len, 0, s->trailer);
	return lay->len;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(why, why_len, __VA_ARGS__);                                               \
		return -1;                                                                         \
	} while (0)

int pb_check_sums(const __u8 *pkt, size_t len, char *why, size_t why_len)
{
	size_t off = 12, l4, tcp_len;
	__u16 proto;
	__u32 sum;
	__u8 ph[40] = { 0 };

	if (len < 14)
		FAIL("frame of %zu bytes", len);
	proto = get16(pkt + off);
	while (proto == 0x8100 || proto == 0x88a8) {
		off += 4;
		if (off + 2 > len)
			FAIL("cut in a VLAN tag");
		proto = get16(pkt + off);
	}
	off += 2;
	if (proto == 0x0800) {
		size_t hlen, tot;

		if (off + 20 > len)
			FAIL("cut in the IPv4 header");
		hlen = (pkt[off] & 0xf) * 4u;
		tot = get16(pkt + off + 2);
		if (hlen < 20 || off + hlen > len || tot < hlen || off + tot > len)
			FAIL("bad IPv4 lengths (ihl %zu, total %zu, frame %zu)", hlen, tot, len);
		if (pb_fold(pb_sum(pkt + off, hlen, 0)) != 0)
			FAIL("bad IPv4 header checksum %#06x", get16(pkt + off + 10));
		if (get16(pkt + off + 6) & 0x3fff)
			return 1;
		if (pkt[off + 9] != NH_TCP)
			return 1;
		memcpy(ph, pkt + off + 12, 8);
		ph[9] = NH_TCP;
		l4 = off + hlen;
		tcp_len = tot - hlen;
		put16(ph + 10, (__u16)tcp_len);
		sum = pb_sum(ph, 12, 0);
	} else if (proto == 0x86dd) {
		size_t end;
		__u8 nh;

		if (off + 40 > len)
			FAIL("cut in the IPv6 header");
		end = off + 40 + get16(pkt + off + 4);
		if (end > len)
			FAIL("IPv6 payload length past the frame");
		nh = pkt[off + 6];
		memcpy(ph, pkt + off + 8, 32);
		l4 = off + 40;
		for (;;) {
			if (nh == NH_TCP)
				break;
			if (nh == NH_FRAGMENT)
				return 1;
			if (nh != NH_HOPOPTS && nh != NH_ROUTING && nh != NH_DSTOPTS && nh != NH_AH)
				return 1;
			if (l4 + 2 > end)
				FAIL("cut in an extension header");
			{
				size_t n = nh == NH_AH ? (pkt[l4 + 1] + 2u) * 4
						       : (pkt[l4 + 1] + 1u) * 8;

				nh = pkt[l4];
				l4 += n;
			}
			if (l4 > end)
				FAIL("extension header past the payload");
		}
		tcp_len = end - l4;
		ph[34] = (__u8)(tcp_len >> 8);
		ph[35] = (__u8)tcp_len;
		ph[39] = NH_TCP;
		sum = pb_sum(ph, 40, 0);
	} else {
		return 1;
	}
	if (tcp_len < 20 || l4 + tcp_len > len)
		FAIL("TCP segment of %zu bytes", tcp_len);
	if (pb_fold(pb_sum(pkt + l4, tcp_len, sum)) != 0)
		FAIL("bad TCP checksum %#06x", get16(pkt + l4 + 16));
	return 0;
}
