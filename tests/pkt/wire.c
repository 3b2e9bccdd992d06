// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The wire (issue 34) beyond the one-packet tables of fixtures.c: the
 * tunnel and its id in the flow key (two tunnels may deliver the same
 * inner 4-tuple to different sockets: their connections never share
 * state), the object loaded for a device without a link header, and UDP
 * tunnel sockets made after the attach.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include "stream.h"
#include "wire.h"

#define TCP_SYN 0x02

static const __u16 port80 = 80;

#define REQ "GET / HTTP/1.1\r\nHost: h\r\nX-Internal-Auth: s3cret\r\n\r\n"
#define REQ_M "GET / HTTP/1.1\r\nHost: h\r\ny-hdrstrip: xxxxxxxxxxx\r\n\r\n"

/* Where a connection's packets come from: the same inner 4-tuple each. */
struct zone_place {
	const char *name;
	int n_enc;
	struct pb_encap enc;
};

static const struct zone_place places[] = {
	{ "no tunnel", 0, { 0 } },
	{ "VXLAN VNI 1", 1, { .kind = PB_ENC_VXLAN, .vni = 1, .udp_csum = 1 } },
	{ "VXLAN VNI 2", 1, { .kind = PB_ENC_VXLAN, .vni = 2, .udp_csum = 1 } },
	{ "VXLAN VNI 2 on port 8472", 1, { .kind = PB_ENC_VXLAN, .vni = 2, .port = 8472 } },
	{ "GENEVE VNI 2", 1, { .kind = PB_ENC_GENEVE, .vni = 2, .inner_l2 = 1 } },
	{ "GRE key 1", 1, { .kind = PB_ENC_GRE, .vni = 1, .gre_flags = PB_GRE_K } },
	{ "GRE key 2", 1, { .kind = PB_ENC_GRE, .vni = 2, .gre_flags = PB_GRE_K } },
	{ "GRE without a key", 1, { .kind = PB_ENC_GRE } },
	{ "IPIP", 1, { .kind = PB_ENC_IPIP } },
};

enum {
	P_NONE,
	P_VX1,
	P_VX2,
	P_VX2_8472,
	P_GENEVE2,
	P_GRE1,
	P_GRE2,
	P_GRE0,
	P_IPIP,
};

/* Pairs of places whose connections are two (the second: same key). */
static const struct {
	int a, b;
	int same; /* 1: one connection (the same tunnel and id) */
} pairs[] = {
	{ P_VX1, P_VX2, 0 },	  { P_VX2, P_GENEVE2, 0 }, { P_GRE1, P_GRE2, 0 },
	{ P_GRE0, P_IPIP, 0 },	  { P_NONE, P_IPIP, 0 },   { P_NONE, P_VX1, 0 },
	{ P_VX2, P_VX2_8472, 1 },
};

static void conn_at(struct st_conn *c, struct th *h, enum th_hook hook, int place, const char *what)
{
	st_conn_init(c, h, hook, 41234, what);
	c->spec.n_enc = places[place].n_enc;
	c->spec.enc[0] = places[place].enc;
}

/*
 * A SYN through place a, then the request with an internal field through
 * place b, then through a: when a and b are two connections, the request
 * through b has no state (counted untracked, scanned line by line and
 * masked all the same) and a's connection takes the request as its first
 * bytes; when they are one (the control), b's request is a's and a's copy
 * a retransmission (rescanned: counted again).
 */
static int zone_pair(struct th *h, enum th_hook hook, int a, int b, int same)
{
	const char *hn = th_hook_name[hook];
	struct hs_counters before, after;
	struct st_conn ca, cb;
	char what[128];
	__u8 got[sizeof(REQ)];
	int bad = 0, live;

	snprintf(what, sizeof(what), "SYN through %s, the request through %s", places[a].name,
		 places[b].name);
	th_forget_flows(h);
	conn_at(&ca, h, hook, a, what);
	conn_at(&cb, h, hook, b, what);
	if (st_send_ctl(&ca, TCP_SYN) != 1)
		return 1;
	cb.next = ca.next;

	th_counters(h, &before);
	bad += st_send_at(&cb, cb.next, 0, REQ, sizeof(REQ) - 1, got) != 1;
	bad += st_check_out(&cb, got, REQ_M, "the request through the second place");
	th_counters(h, &after);
	bad += st_diff1(what, hn, "untracked", after.untracked - before.untracked, !same);
	bad += st_diff1(what, hn, "http_requests", after.http_requests - before.http_requests,
			same);
	bad += st_diff1(what, hn, "headers_masked", after.headers_masked - before.headers_masked,
			1);
	bad += st_diff1(what, hn, "tunneled", after.tunneled - before.tunneled,
			places[b].n_enc != 0);

	th_counters(h, &before);
	bad += st_send_at(&ca, ca.next, 0, REQ, sizeof(REQ) - 1, got) != 1;
	bad += st_check_out(&ca, got, REQ_M, "the request through the first place");
	th_counters(h, &after);
	bad += st_diff1(what, hn, "untracked (first place)", after.untracked - before.untracked, 0);
	bad += st_diff1(what, hn, "http_requests (first place)",
			after.http_requests - before.http_requests, 1);
	bad += st_diff1(what, hn, "retransmits (first place)",
			after.retransmits - before.retransmits, same);

	/* A SYN through b: a connection of its own, beside a's. */
	conn_at(&cb, h, hook, b, what);
	bad += st_send_ctl(&cb, TCP_SYN) != 1;
	live = th_live_flows(h);
	if (live != (same ? 1 : 2)) {
		fprintf(stderr, "  [%s] %s: %d live flows after a SYN through each, expected %d\n",
			hn, what, live, same ? 1 : 2);
		bad++;
	}
	return bad;
}

int pt_wire_zones(struct th *h)
{
	int hook, bad = 0;
	size_t i;

	if (th_config(h, 0, HS_POLICY_DROP, &port80, 1))
		return 1;
	h->keep_flows = 1;
	for (hook = 0; hook < TH_HOOKS; hook++)
		for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
			bad += zone_pair(h, (enum th_hook)hook, pairs[i].a, pairs[i].b,
					 pairs[i].same);
	h->keep_flows = 0;
	th_forget_flows(h);
	return bad;
}

/* A UDP socket bound to @port (any address, @family), with the
 * encapsulation @encap (UDP_ENCAP_*, 0: none): its fd, or -1. */
static int udp_sock_on(int family, __u16 port, int encap)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int r;

	if (fd < 0)
		return -1;
	r = family == AF_INET6 ? bind(fd, (struct sockaddr *)&a6, sizeof(a6))
			       : bind(fd, (struct sockaddr *)&a4, sizeof(a4));
	if (!r && encap)
		r = setsockopt(fd, SOL_UDP, UDP_ENCAP, &encap, sizeof(encap));
	if (r) {
		fprintf(stderr, "  UDP socket on %u (encapsulation %d): %s\n", port, encap,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Tunnel sockets made after the attach (issue 34): the datapath asks the
 * stack which socket a UDP datagram to a port not in the table goes to
 * (bpf_sk_lookup_udp, in the namespace BPF_PROG_TEST_RUN runs the packet
 * in: the caller's), and sends it to the on-error policy when that socket
 * takes packets out of UDP. In a namespace of its own: VXLAN devices
 * (external: an IPv4 and an IPv6 socket each) on 4790, which the table
 * does not name, and 4789, which it does; an ESP-in-UDP socket (what an
 * IKE daemon makes with UDP_ENCAP) on 4500, dual stack; a plain IPv4 UDP
 * socket on 5353. pt_late_cases at both hooks, then back to the caller's
 * namespace (the one the other tables run in).
 */
int pt_wire_late(struct th *h)
{
	int home, fds[2] = { -1, -1 }, bad = 0, i;

	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0 || unshare(CLONE_NEWNET)) {
		fprintf(stderr, "  a network namespace of its own: %s\n", strerror(errno));
		if (home >= 0)
			close(home);
		return 1;
	}
	if (system("ip link add hs-late0 type vxlan external dstport 4790 && "
		   "ip link set hs-late0 up && "
		   "ip link add hs-late1 type vxlan external dstport 4789 && "
		   "ip link set hs-late1 up")) {
		fprintf(stderr, "  VXLAN devices on 4790 and 4789: 'ip link add' failed\n");
		bad++;
	}
	fds[0] = udp_sock_on(AF_INET6, 4500, UDP_ENCAP_ESPINUDP);
	fds[1] = udp_sock_on(AF_INET, 5353, 0);
	bad += fds[0] < 0 || fds[1] < 0;
	if (!bad)
		bad += th_config(h, 0, HS_POLICY_DROP, &port80, 1) != 0;
	if (!bad)
		bad += pt_check_table(h, pt_late_cases, pt_n_late_cases, PT_ALL_HOOKS);
	for (i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* Back home; the namespace and its devices go with the last
	 * reference to it. */
	if (setns(home, CLONE_NEWNET)) {
		fprintf(stderr, "  back to the test's namespace: %s\n", strerror(errno));
		bad++;
	}
	close(home);
	return bad;
}

/* @c, its frame without a link header. */
static struct pt_case l3_of(const struct pt_case *c)
{
	struct pt_case l = *c;

	l.spec.no_l2 = 1;
	return l;
}

/*
 * At tc, BPF_PROG_TEST_RUN takes the frame's first 14 bytes for an
 * Ethernet header (eth_type_trans(): skb->protocol and pkt_type come from
 * IP header bytes here) and pushes them back before the program runs: the
 * program sees the frame from its first byte, as on a tun device, and the
 * datapath reads neither field. So IP-first frames run at both hooks (the
 * masked outputs at tc below show the program read them from byte 0).
 */
int pt_l3(const char *obj_path, const char *label, int *cases)
{
	struct th h;
	int failed = 0;
	size_t i;

	*cases = 0;
	if (th_open_l3(&h, obj_path, label))
		return 1;
	if (th_config(&h, 0, HS_POLICY_DROP, &port80, 1) || th_set_trie(&h, 0, pt.fix_trie)) {
		th_close(&h);
		return 1;
	}
	/* The HTTP table, as it is, on IP-first frames. */
	for (i = 0; i < pt_n_http_cases; i++) {
		struct pt_case c = l3_of(&pt_http_cases[i]);

		++*cases;
		if (pt_check(&h, &c, PT_ALL_HOOKS)) {
			fprintf(stderr, "FAIL %s: %s (no link header)\n", label, c.what);
			failed++;
		}
	}
	/* The layer table but what needs an Ethernet header (VLAN tags) or
	 * damages one (its mangles write at Ethernet offsets). */
	for (i = 0; i < pt_n_layer_cases; i++) {
		struct pt_case c = l3_of(&pt_layer_cases[i]);

		if (c.spec.n_vlans || c.mangle)
			continue;
		++*cases;
		if (pt_check(&h, &c, PT_ALL_HOOKS)) {
			fprintf(stderr, "FAIL %s: %s (no link header)\n", label, c.what);
			failed++;
		}
	}
	*cases += (int)pt_n_l3_cases;
	failed += pt_check_table(&h, pt_l3_cases, pt_n_l3_cases, PT_ALL_HOOKS);
	th_close(&h);
	return failed;
}

/* A checksum the frame fails, damaged at @at: pb_check_frame() must say
 * so, naming @sum. */
static int must_refuse(const struct pt_case *c, const struct pb_tun_ports *tp, __u8 *pkt,
		       size_t len, size_t at, const char *sum, const char *what)
{
	char why[160] = "";
	int r;

	pkt[at] ^= 0x5a;
	r = pb_check_frame_ports(pkt, len, !c->spec.no_l2, tp, why, sizeof(why));
	pkt[at] ^= 0x5a;
	if (r < 0 && strstr(why, sum))
		return 0;
	fprintf(stderr, "  [builder] %s: %s damaged at byte %zu: %s\n", c->what, what, at,
		r < 0 ? why : "not seen");
	return 1;
}

/*
 * The checker the tables trust, against frames it must refuse: each case's
 * frame is built and checked, then damaged where one checksum sees it: a
 * payload byte (TCP) and the inner IPv4 header's TTL (its header checksum)
 * in frames without an outer checksum, a byte of each tunnel header
 * outside what it carries (VXLAN's reserved byte, GENEVE's flags: the
 * outer UDP checksum; GRE's reserved field: the GRE checksum).
 */
static int builder_table(const struct pt_case *tab, size_t n, const struct hs_tunnel_port *tunnels,
			 int n_tunnels, int *frames)
{
	struct pb_tun_ports tp;
	static __u8 pkt[PB_MAX_PKT];
	struct pb_layout lay;
	char why[160];
	size_t len, i;
	int bad = 0, r, e, outer_sums;

	pt_tun_ports(tunnels, n_tunnels, &tp);
	for (i = 0; i < n; i++) {
		const struct pt_case *c = &tab[i];

		if (c->mangle)
			continue;
		len = pb_build(&c->spec, c->in, c->in_len, pkt, &lay);
		if (!len) {
			fprintf(stderr, "  [builder] %s: does not build\n", c->what);
			bad++;
			continue;
		}
		++*frames;
		if (memcmp(pkt + lay.payload_off, c->in, c->in_len) ||
		    lay.tcp_check_off != lay.l4_off + 16) {
			fprintf(stderr, "  [builder] %s: the layout misses the TCP packet\n",
				c->what);
			bad++;
		}
		r = pb_check_frame_ports(pkt, len, !c->spec.no_l2, &tp, why, sizeof(why));
		/* A fragment's or a dropped tunnel's TCP checksum is not
		 * reached: every other frame's is. */
		if (r < 0 || (r != 0 && c->delta.inspected)) {
			fprintf(stderr, "  [builder] %s: %s\n", c->what, r < 0 ? why : "no TCP");
			bad++;
			continue;
		}
		if (r)
			continue;
		/* Under an outer checksum that sees them too: the frames
		 * without one check the inner sums, in tunnels as well. */
		for (e = 0, outer_sums = 0; e < c->spec.n_enc; e++)
			outer_sums += lay.enc[e].check_off != 0;
		if (c->in_len && !outer_sums)
			bad += must_refuse(c, &tp, pkt, len, lay.payload_off, "TCP", "the payload");
		if (!c->spec.ipv6 && !outer_sums)
			bad += must_refuse(c, &tp, pkt, len, lay.l3_off + 8, "IPv4 header",
					   "the TTL");
		for (e = 0; e < c->spec.n_enc; e++) {
			const struct pb_encap *en = &c->spec.enc[e];
			size_t t = lay.enc[e].tun_off;

			if (!lay.enc[e].check_off)
				continue;
			if (en->kind == PB_ENC_GRE)
				bad += must_refuse(c, &tp, pkt, len, t + 6, "GRE",
						   "GRE's reserved1");
			else
				bad += must_refuse(c, &tp, pkt, len, t + 9, "UDP",
						   "the tunnel header");
		}
	}
	return bad;
}

int pt_builder_sums(int *frames)
{
	struct hs_tunnel_port def[HS_MAX_TUNNEL_PORTS];

	hs_tunnels_default(def);
	*frames = 0;
	return builder_table(pt_wire_cases, pt_n_wire_cases, def, HS_MAX_TUNNEL_PORTS, frames) +
	       builder_table(pt_wire_config_cases, pt_n_wire_config_cases, pt_wire_config.tunnels,
			     pt_wire_config.n_tunnels, frames) +
	       builder_table(pt_l3_cases, pt_n_l3_cases, def, HS_MAX_TUNNEL_PORTS, frames) +
	       builder_table(pt_layer_cases, pt_n_layer_cases, def, HS_MAX_TUNNEL_PORTS, frames);
}
