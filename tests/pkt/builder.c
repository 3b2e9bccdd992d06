// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The test packet builder. Plain byte writes in network order, no kernel
 * structs: the tests must not share a layout mistake with the datapath.
 * Encapsulations are written inside out, so that each one's checksum
 * (UDP, GRE) sums what it carries as it is.
 */
#include <stdio.h>
#include <string.h>

#include "builder.h"

#define ETH_HLEN_ 14
#define IP4_HLEN 20
#define IP6_HLEN 40
#define TCP_HLEN 20
#define UDP_HLEN 8
#define VXLAN_HLEN 8
#define GENEVE_HLEN 8

#define NH_HOPOPTS 0
#define NH_IPIP 4
#define NH_TCP 6
#define NH_UDP 17
#define NH_IPV6 41
#define NH_ROUTING 43
#define NH_FRAGMENT 44
#define NH_GRE 47
#define NH_AH 51
#define NH_DSTOPTS 60

#define ET_IP 0x0800
#define ET_IPV6 0x86dd
#define ET_TEB 0x6558 /* transparent Ethernet bridging: an Ethernet frame inside */

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

/* The sum of an IPv4 or IPv6 pseudo header (@src, @dst: 4 or 16 bytes). */
static __u32 pseudo_sum(int ipv6, const __u8 *src, const __u8 *dst, __u8 proto, size_t len)
{
	__u8 ph[40] = { 0 };

	if (!ipv6) {
		memcpy(ph, src, 4);
		memcpy(ph + 4, dst, 4);
		ph[9] = proto;
		put16(ph + 10, (__u16)len);
		return pb_sum(ph, 12, 0);
	}
	memcpy(ph, src, 16);
	memcpy(ph + 16, dst, 16);
	ph[34] = (__u8)(len >> 8);
	ph[35] = (__u8)len;
	ph[39] = proto;
	return pb_sum(ph, 40, 0);
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

/* Addresses of each encapsulation's own IP header, outermost first. */
static const __u8 enc4[PB_MAX_ENCAP][2][4] = { { { 192, 0, 2, 1 }, { 192, 0, 2, 2 } },
					       { { 198, 51, 100, 1 }, { 198, 51, 100, 2 } } };
static const __u8 enc6[PB_MAX_ENCAP][2][16] = {
	{ { 0x20, 0x01, 0x0d, 0xb8, 0xff, 0x00, [15] = 1 },
	  { 0x20, 0x01, 0x0d, 0xb8, 0xff, 0x00, [15] = 2 } },
	{ { 0x20, 0x01, 0x0d, 0xb8, 0xff, 0x01, [15] = 1 },
	  { 0x20, 0x01, 0x0d, 0xb8, 0xff, 0x01, [15] = 2 } },
};

/* Whether level @i of @s (0: the outermost; n_enc: the TCP packet) starts
 * with an Ethernet header. */
static int level_l2(const struct pb_spec *s, int i)
{
	const struct pb_encap *e;

	if (!i)
		return !s->no_l2;
	e = &s->enc[i - 1];
	return e->kind == PB_ENC_VXLAN ||
	       ((e->kind == PB_ENC_GENEVE || e->kind == PB_ENC_GRE) && e->inner_l2);
}

/* Whether level @i's IP header is IPv6. */
static int level_ipv6(const struct pb_spec *s, int i)
{
	return i == s->n_enc ? s->ipv6 : s->enc[i].ipv6;
}

static size_t enc_ip_size(const struct pb_encap *e)
{
	return e->ipv6 ? IP6_HLEN + (e->frag_off ? 8 : 0) : IP4_HLEN;
}

static size_t enc_tun_size(const struct pb_encap *e)
{
	switch (e->kind) {
	case PB_ENC_VXLAN:
		return UDP_HLEN + VXLAN_HLEN;
	case PB_ENC_GENEVE:
		return UDP_HLEN + GENEVE_HLEN + e->opt_len;
	case PB_ENC_GRE:
		return 4 + 4 * (size_t)(!!(e->gre_flags & PB_GRE_C) + !!(e->gre_flags & PB_GRE_K) +
					!!(e->gre_flags & PB_GRE_S));
	default:
		return 0;
	}
}

/* An Ethernet header at @p for an EtherType @proto (@outer: the frame's
 * own addresses, else a tunnel's inner frame's). */
static void put_eth(__u8 *p, int outer, __u16 proto)
{
	memcpy(p,
	       outer ? "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01"
		     : "\x02\x00\x00\x00\x01\x02\x02\x00\x00\x00\x01\x01",
	       12);
	put16(p + 12, proto);
}

/* The TCP packet at @out + @off (Ethernet first with @l2): returns the
 * offset one past its datagram, the layout's TCP packet fields filled. */
static size_t put_packet(const struct pb_spec *s, int l2, const void *payload, size_t plen,
			 __u8 *out, size_t off, struct pb_layout *lay)
{
	size_t l3, l4, ext_len = 0, tcp_len, ah_len = s->ah4_len ? (s->ah4_len + 2) * 4u : 0, i;
	__u16 proto = s->ipv6 ? ET_IPV6 : ET_IP;
	const __u8 *src4 = ip4_src, *dst4 = ip4_dst, *src6 = ip6_src, *dst6 = ip6_dst;
	__u32 sum;
	int v;

	for (i = 0; i < (size_t)s->n_ext; i++)
		ext_len += ext_size(&s->ext[i]);
	tcp_len = TCP_HLEN + s->tcp_opts_len + plen;

	if (l2) {
		/* Ethernet and tags: each tag's TPID sits where the EtherType was. */
		put_eth(out + off, s->n_enc == 0, 0);
		off += 12;
		for (v = 0; v < s->n_vlans; v++) {
			put16(out + off, s->vlan_tpid[v]);
			put16(out + off + 2, (__u16)(100 + v)); /* PCP 0, VID 100.. */
			off += 4;
		}
		put16(out + off, proto);
		off += 2;
	}
	l3 = off;

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
		put16(out + l3 + 2, (__u16)(hlen + ah_len + tcp_len));
		put16(out + l3 + 4, 0x1234);
		put16(out + l3 + 6, s->frag_off);
		out[l3 + 8] = 64;
		out[l3 + 9] = ah_len ? NH_AH : NH_TCP;
		put16(out + l3 + 10, 0);
		memcpy(out + l3 + 12, src4, 4);
		memcpy(out + l3 + 16, dst4, 4);
		memcpy(out + l3 + 20, s->ip_opts, s->ip_opts_len);
		put16(out + l3 + 10, pb_fold(pb_sum(out + l3, hlen, 0)));
		lay->ip_check_off = l3 + 10;
		l4 = l3 + hlen;
		if (ah_len) {
			/* Next header, length, reserved, SPI, sequence number,
			 * an ICV of zeros. */
			memset(out + l4, 0, ah_len);
			out[l4] = NH_TCP;
			out[l4 + 1] = (__u8)s->ah4_len;
			put16(out + l4 + 6, 0x0100);
			put16(out + l4 + 10, 1);
			l4 += ah_len;
		}
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
	sum = s->ipv6 ? pseudo_sum(1, src6, dst6, NH_TCP, tcp_len)
		      : pseudo_sum(0, src4, dst4, NH_TCP, tcp_len);
	put16(out + l4 + 16, pb_fold(pb_sum(out + l4, tcp_len, sum)));

	lay->l3_off = l3;
	lay->l4_off = l4;
	lay->payload_off = l4 + TCP_HLEN + s->tcp_opts_len;
	lay->tcp_check_off = l4 + 16;
	return l4 + tcp_len;
}

/* GENEVE options filling @n bytes: TLVs of the experimental class 0xffff,
 * at most 124 bytes of data each. */
static void put_geneve_opts(__u8 *p, size_t n)
{
	size_t words;

	memset(p, 0, n);
	while (n >= 4) {
		words = n / 4 - 1 < 31 ? n / 4 - 1 : 31;
		put16(p, 0xffff);
		p[2] = 0x01; /* type */
		p[3] = (__u8)words;
		p += 4 + 4 * words;
		n -= 4 + 4 * words;
	}
}

/*
 * Encapsulation @i of @s at @out + @off (what it carries written after
 * it), its datagram ending at @end: Ethernet (when the level has one), IP,
 * UDP and VXLAN or GENEVE, or GRE; then its checksums.
 */
static void put_encap(const struct pb_spec *s, int i, __u8 *out, size_t off, size_t end,
		      struct pb_layout *lay)
{
	const struct pb_encap *e = &s->enc[i];
	const int inner6 = level_ipv6(s, i + 1), inner_l2 = level_l2(s, i + 1);
	const __u8 *src = e->ipv6 ? enc6[i][!!s->reply] : enc4[i][!!s->reply];
	const __u8 *dst = e->ipv6 ? enc6[i][!s->reply] : enc4[i][!s->reply];
	__u16 proto = e->proto ? e->proto : inner_l2 ? ET_TEB : inner6 ? ET_IPV6 : ET_IP;
	size_t l3, t, o;
	__u8 nh;

	switch (e->kind) {
	case PB_ENC_VXLAN:
	case PB_ENC_GENEVE:
		nh = NH_UDP;
		break;
	case PB_ENC_GRE:
		nh = NH_GRE;
		break;
	default:
		nh = inner6 ? NH_IPV6 : NH_IPIP;
		break;
	}
	if (level_l2(s, i)) {
		put_eth(out + off, i == 0, e->ipv6 ? ET_IPV6 : ET_IP);
		off += ETH_HLEN_;
	}
	l3 = off;
	if (!e->ipv6) {
		out[l3] = 0x45;
		out[l3 + 1] = 0;
		put16(out + l3 + 2, (__u16)(end - l3));
		put16(out + l3 + 4, (__u16)(0x5678 + i));
		put16(out + l3 + 6, e->frag_off);
		out[l3 + 8] = 64;
		out[l3 + 9] = nh;
		put16(out + l3 + 10, 0);
		memcpy(out + l3 + 12, src, 4);
		memcpy(out + l3 + 16, dst, 4);
		put16(out + l3 + 10, pb_fold(pb_sum(out + l3, IP4_HLEN, 0)));
		t = l3 + IP4_HLEN;
	} else {
		out[l3] = 0x60;
		memset(out + l3 + 1, 0, 3);
		put16(out + l3 + 4, (__u16)(end - l3 - IP6_HLEN));
		out[l3 + 6] = e->frag_off ? NH_FRAGMENT : nh;
		out[l3 + 7] = 64;
		memcpy(out + l3 + 8, src, 16);
		memcpy(out + l3 + 24, dst, 16);
		t = l3 + IP6_HLEN;
		if (e->frag_off) {
			struct pb_ext fh = { .type = NH_FRAGMENT,
					     .frag = (__u16)((e->frag_off & 0x1fff) << 3 |
							     !!(e->frag_off & 0x2000)) };

			put_ext(out + t, &fh, nh);
			t += 8;
		}
	}
	lay->enc[i].l3_off = l3;
	lay->enc[i].tun_off = t;
	lay->enc[i].check_off = 0;

	switch (e->kind) {
	case PB_ENC_VXLAN:
	case PB_ENC_GENEVE:
		put16(out + t, (__u16)(49152 + i)); /* the sender's flow port */
		put16(out + t + 2, e->port ? e->port : e->kind == PB_ENC_VXLAN ? 4789 : 6081);
		put16(out + t + 4, (__u16)(end - t));
		put16(out + t + 6, 0);
		o = t + UDP_HLEN;
		memset(out + o, 0, 8);
		if (e->kind == PB_ENC_VXLAN) {
			out[o] = e->no_i_flag ? 0 : 0x08;
		} else {
			out[o] = (__u8)(e->version << 6 | (e->opt_len / 4));
			put16(out + o + 2, proto);
			put_geneve_opts(out + o + GENEVE_HLEN, e->opt_len);
		}
		out[o + 4] = (__u8)(e->vni >> 16);
		out[o + 5] = (__u8)(e->vni >> 8);
		out[o + 6] = (__u8)e->vni;
		if (e->udp_csum) {
			__u16 c = pb_fold(pb_sum(out + t, end - t,
						 pseudo_sum(e->ipv6, src, dst, NH_UDP, end - t)));

			/* A computed zero is sent as all ones (RFC 768). */
			put16(out + t + 6, c ? c : 0xffff);
			lay->enc[i].check_off = t + 6;
		}
		break;
	case PB_ENC_GRE:
		put16(out + t, e->gre_flags);
		put16(out + t + 2, proto);
		o = t + 4;
		if (e->gre_flags & PB_GRE_C) {
			memset(out + o, 0, 4); /* checksum and reserved1, summed below */
			lay->enc[i].check_off = o;
			o += 4;
		}
		if (e->gre_flags & PB_GRE_K) {
			put16(out + o, (__u16)(e->vni >> 16));
			put16(out + o + 2, (__u16)e->vni);
			o += 4;
		}
		if (e->gre_flags & PB_GRE_S) { /* the last field */
			put16(out + o, 0);
			put16(out + o + 2, 7);
		}
		/* RFC 2784: over the GRE header and its payload. */
		if (e->gre_flags & PB_GRE_C)
			put16(out + t + 4, pb_fold(pb_sum(out + t, end - t, 0)));
		break;
	default:
		break;
	}
}

size_t pb_build(const struct pb_spec *s, const void *payload, size_t plen, __u8 *out,
		struct pb_layout *lay)
{
	size_t start[PB_MAX_ENCAP + 1], off = 0, ext_len = 0, end, i;
	const int n = s->n_enc;

	if (n < 0 || n > PB_MAX_ENCAP || s->n_vlans < 0 || s->n_vlans > PB_MAX_VLANS)
		return 0;
	/* VLAN tags need an Ethernet header to sit in; AH is IPv4's here. */
	if ((s->n_vlans && !level_l2(s, n)) || (s->ah4_len && s->ipv6))
		return 0;
	for (i = 0; i < (size_t)n; i++) {
		const struct pb_encap *e = &s->enc[i];

		if (e->kind < PB_ENC_VXLAN || e->kind > PB_ENC_IPIP || (e->opt_len & 3) ||
		    e->opt_len > 252)
			return 0;
		start[i] = off;
		off += (level_l2(s, (int)i) ? ETH_HLEN_ : 0) + enc_ip_size(e) + enc_tun_size(e);
	}
	start[n] = off;
	for (i = 0; i < (size_t)s->n_ext; i++)
		ext_len += ext_size(&s->ext[i]);
	if (off + ETH_HLEN_ + 4 * s->n_vlans + IP6_HLEN + 40 + (s->ah4_len + 2) * 4u + ext_len +
		    TCP_HLEN + s->tcp_opts_len + plen + s->trailer >
	    PB_MAX_PKT)
		return 0;

	memset(lay, 0, sizeof(*lay));
	end = put_packet(s, level_l2(s, n), payload, plen, out, start[n], lay);
	/* Inside out: each encapsulation sums what it carries. */
	for (i = (size_t)n; i-- > 0;)
		put_encap(s, (int)i, out, start[i], end, lay);
	memset(out + end, 0, s->trailer);
	lay->len = end + s->trailer;
	return lay->len;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(why, why_len, __VA_ARGS__);                                               \
		return -1;                                                                         \
	} while (0)

/* Tunnels in tunnels the walk below follows at most. */
#define CHECK_DEPTH 4

/*
 * One level of a frame: its Ethernet header and tags (@l2), its IP packet
 * at @off, bounded by @end (what holds it), and what it carries, down to
 * TCP. Returns as pb_check_frame().
 */
static const struct pb_tun_ports default_ports = { .vxlan = { 4789, 8472 }, .geneve = { 6081 } };

static int port_in(const __u16 *list, __u16 port)
{
	int i;

	for (i = 0; i < PB_MAX_TUN_PORTS && list[i]; i++)
		if (list[i] == port)
			return 1;
	return 0;
}

static int check_level(const __u8 *pkt, size_t end, size_t off, int l2, int depth,
		       const struct pb_tun_ports *tp, char *why, size_t why_len)
{
	size_t l4, dgram_end, n;
	__u16 proto;
	__u32 sum;
	__u8 nh, src[16], dst[16];
	int v6;

	if (depth > CHECK_DEPTH)
		FAIL("more than %d levels of tunnels", CHECK_DEPTH);
	if (l2) {
		if (off + ETH_HLEN_ > end)
			FAIL("cut in an Ethernet header at %zu", off);
		proto = get16(pkt + off + 12);
		off += ETH_HLEN_;
		while (proto == 0x8100 || proto == 0x88a8) {
			if (off + 4 > end)
				FAIL("cut in a VLAN tag");
			proto = get16(pkt + off + 2);
			off += 4;
		}
	} else {
		if (off + 1 > end)
			FAIL("no IP header at %zu", off);
		proto = (pkt[off] >> 4) == 4 ? 0x0800 : (pkt[off] >> 4) == 6 ? 0x86dd : 0;
	}
	if (proto == 0x0800) {
		size_t hlen, tot;

		if (off + IP4_HLEN > end)
			FAIL("cut in the IPv4 header at %zu", off);
		hlen = (pkt[off] & 0xf) * 4u;
		tot = get16(pkt + off + 2);
		if (hlen < IP4_HLEN || off + hlen > end || tot < hlen || off + tot > end)
			FAIL("bad IPv4 lengths at %zu (ihl %zu, total %zu, room %zu)", off, hlen,
			     tot, end - off);
		if (pb_fold(pb_sum(pkt + off, hlen, 0)) != 0)
			FAIL("bad IPv4 header checksum %#06x at %zu", get16(pkt + off + 10),
			     off + 10);
		if (get16(pkt + off + 6) & 0x3fff)
			return 1; /* a fragment: its datagram's sums are not all here */
		v6 = 0;
		memcpy(src, pkt + off + 12, 4);
		memcpy(dst, pkt + off + 16, 4);
		nh = pkt[off + 9];
		l4 = off + hlen;
		dgram_end = off + tot;
		if (nh == NH_AH) {
			if (l4 + 2 > dgram_end)
				FAIL("cut in an AH header");
			nh = pkt[l4];
			l4 += (pkt[l4 + 1] + 2u) * 4;
			if (l4 > dgram_end)
				FAIL("AH header past the datagram");
		}
	} else if (proto == 0x86dd) {
		if (off + IP6_HLEN > end)
			FAIL("cut in the IPv6 header at %zu", off);
		dgram_end = off + IP6_HLEN + get16(pkt + off + 4);
		if (dgram_end > end)
			FAIL("IPv6 payload length past what holds it, at %zu", off);
		v6 = 1;
		memcpy(src, pkt + off + 8, 16);
		memcpy(dst, pkt + off + 24, 16);
		nh = pkt[off + 6];
		l4 = off + IP6_HLEN;
		while (nh == NH_HOPOPTS || nh == NH_ROUTING || nh == NH_DSTOPTS || nh == NH_AH ||
		       nh == NH_FRAGMENT) {
			if (l4 + 8 > dgram_end)
				FAIL("cut in an extension header");
			if (nh == NH_FRAGMENT && get16(pkt + l4 + 2) != 0)
				return 1; /* a fragment (an atomic one goes on) */
			n = nh == NH_FRAGMENT ? 8
			    : nh == NH_AH     ? (pkt[l4 + 1] + 2u) * 4
					      : (pkt[l4 + 1] + 1u) * 8;
			nh = pkt[l4];
			l4 += n;
			if (l4 > dgram_end)
				FAIL("extension header past the payload");
		}
	} else {
		return 1;
	}

	switch (nh) {
	case NH_TCP:
		n = dgram_end - l4;
		if (n < TCP_HLEN)
			FAIL("TCP segment of %zu bytes", n);
		sum = pseudo_sum(v6, src, dst, NH_TCP, n);
		if (pb_fold(pb_sum(pkt + l4, n, sum)) != 0)
			FAIL("bad TCP checksum %#06x at %zu", get16(pkt + l4 + 16), l4 + 16);
		return 0;
	case NH_UDP: {
		__u16 port;

		/* The stack trims the datagram to the UDP length. */
		n = get16(pkt + l4 + 4);
		if (n < UDP_HLEN || l4 + n > dgram_end)
			FAIL("UDP length %zu in a datagram of %zu bytes", n, dgram_end - l4);
		dgram_end = l4 + n;
		if (get16(pkt + l4 + 6)) {
			sum = pseudo_sum(v6, src, dst, NH_UDP, n);
			if (pb_fold(pb_sum(pkt + l4, n, sum)) != 0)
				FAIL("bad UDP checksum %#06x at %zu", get16(pkt + l4 + 6), l4 + 6);
		}
		port = get16(pkt + l4 + 2);
		if (port_in(tp->vxlan, port)) {
			if (n < UDP_HLEN + VXLAN_HLEN)
				FAIL("cut in a VXLAN header");
			return check_level(pkt, dgram_end, l4 + UDP_HLEN + VXLAN_HLEN, 1, depth + 1,
					   tp, why, why_len);
		}
		if (port_in(tp->geneve, port)) {
			size_t o = l4 + UDP_HLEN + GENEVE_HLEN;

			if (n < UDP_HLEN + GENEVE_HLEN)
				FAIL("cut in a GENEVE header");
			o += (pkt[l4 + UDP_HLEN] & 0x3f) * 4u;
			proto = get16(pkt + l4 + UDP_HLEN + 2);
			if (pkt[l4 + UDP_HLEN] >> 6 || o > dgram_end ||
			    (proto != ET_TEB && proto != ET_IP && proto != ET_IPV6))
				return 1;
			return check_level(pkt, dgram_end, o, proto == ET_TEB, depth + 1, tp, why,
					   why_len);
		}
		return 1;
	}
	case NH_GRE: {
		__u16 fl;
		size_t o = l4 + 4;

		if (l4 + 4 > dgram_end)
			FAIL("cut in a GRE header");
		fl = get16(pkt + l4);
		if (fl & PB_GRE_C) {
			if (pb_fold(pb_sum(pkt + l4, dgram_end - l4, 0)) != 0)
				FAIL("bad GRE checksum %#06x at %zu", get16(pkt + l4 + 4), l4 + 4);
			o += 4;
		}
		o += 4 * (size_t)(!!(fl & PB_GRE_K) + !!(fl & PB_GRE_S));
		proto = get16(pkt + l4 + 2);
		if ((fl & (PB_GRE_R | 7)) || o > dgram_end ||
		    (proto != ET_TEB && proto != ET_IP && proto != ET_IPV6))
			return 1;
		return check_level(pkt, dgram_end, o, proto == ET_TEB, depth + 1, tp, why, why_len);
	}
	case NH_IPIP:
	case NH_IPV6:
		return check_level(pkt, dgram_end, l4, 0, depth + 1, tp, why, why_len);
	default:
		return 1;
	}
}

int pb_check_frame_ports(const __u8 *pkt, size_t len, int l2, const struct pb_tun_ports *ports,
			 char *why, size_t why_len)
{
	if (l2 && len < ETH_HLEN_)
		FAIL("frame of %zu bytes", len);
	return check_level(pkt, len, 0, l2, 0, ports ? ports : &default_ports, why, why_len);
}

int pb_check_frame(const __u8 *pkt, size_t len, int l2, char *why, size_t why_len)
{
	return pb_check_frame_ports(pkt, len, l2, NULL, why, why_len);
}

int pb_check_sums(const __u8 *pkt, size_t len, char *why, size_t why_len)
{
	return pb_check_frame(pkt, len, 1, why, why_len);
}
