// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The normaliser at the packet level (issue 14): crafted segments played
 * through BPF_PROG_TEST_RUN on one connection each, at both hooks, with
 * the flow table kept between runs. Each case checks the verdict, the
 * bytes that left, their checksums (the builder's own routine) and the
 * counters the normaliser owns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "compile.h"
#include "hlist.h"
#include "stream.h"

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_URG 0x20

/* Counters before and after a step, by name. */
#define MOVED(field) (a.field - b.field)

static const char req_auth[] = "GET /n HTTP/1.1\r\nX-Internal-Auth: s\r\n\r\n",
		  req_auth_m[] = "GET /n HTTP/1.1\r\ny-hdrstrip: xxxxxx\r\n\r\n",
		  auth_m[] = "y-hdrstrip: xxxxxx\r\n";

/* Change the config map's urgent policy, active trie slot or on-error
 * policy (-1: keep). */
static int set_config3(struct th *h, int urgent, int slot, int on_error)
{
	struct hs_config cfg;
	__u32 key = 0;

	if (bpf_map_lookup_elem(h->config_fd, &key, &cfg))
		return -errno;
	if (urgent >= 0)
		cfg.urgent = (__u8)urgent;
	if (slot >= 0)
		cfg.active_slot = (__u32)slot;
	if (on_error >= 0)
		cfg.on_error = (__u8)on_error;
	return bpf_map_update_elem(h->config_fd, &key, &cfg, BPF_ANY) ? -errno : 0;
}

static int set_config(struct th *h, int urgent, int slot)
{
	return set_config3(h, urgent, slot, -1);
}

/* A list compiled into trie slot @slot. */
static int set_list(struct th *h, __u32 slot, const char *list)
{
	struct hs_list_opts o;
	struct hs_list l;
	struct hs_err err;
	struct hs_trie *t = calloc(1, sizeof(*t));
	int r = -1;

	hs_list_opts_default(&o);
	if (t && !hs_list_parse(list, strlen(list), "test", &o, &l, &err)) {
		r = hs_compile(&l, t, NULL, &err) || th_set_trie(h, slot, t) ? -1 : 0;
		hs_list_free(&l);
	}
	free(t);
	return r;
}

static __u16 rd16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

static void wr16(__u8 *p, __u16 v)
{
	p[0] = (__u8)(v >> 8);
	p[1] = (__u8)v;
}

/* The pseudo header's sum of an IPv4 TCP segment (network order words). */
static __u32 pseudo_sum(const __u8 *pkt, const struct pb_layout *lay)
{
	__u8 ph[12];

	memcpy(ph, pkt + lay->l3_off + 12, 8);
	ph[8] = 0;
	ph[9] = 6;
	wr16(ph + 10, (__u16)(lay->len - lay->l4_off));
	return pb_sum(ph, sizeof(ph), 0);
}

/* The TCP checksum made right again after a change to the segment. */
static void fix_tcp_sum(__u8 *pkt, const struct pb_layout *lay)
{
	__u32 sum;

	wr16(pkt + lay->tcp_check_off, 0);
	sum = pb_sum(pkt + lay->l4_off, lay->len - lay->l4_off, pseudo_sum(pkt, lay));
	wr16(pkt + lay->tcp_check_off, pb_fold(sum));
}

/* URG with the urgent pointer at the 11th payload byte. */
static void mangle_urgent(__u8 *pkt, size_t len, const struct pb_layout *lay)
{
	(void)len;
	pkt[lay->l4_off + 13] |= TCP_URG;
	wr16(pkt + lay->l4_off + 18, 11);
	fix_tcp_sum(pkt, lay);
}

static void mangle_tcp_sum(__u8 *pkt, size_t len, const struct pb_layout *lay)
{
	(void)len;
	pkt[lay->tcp_check_off] ^= 0x40;
}

static void mangle_ip_sum(__u8 *pkt, size_t len, const struct pb_layout *lay)
{
	(void)len;
	pkt[lay->ip_check_off + 1] ^= 0x01;
}

/* What a local sender leaves for checksum offload: the pseudo header's
 * sum alone, not complemented. */
static void mangle_offload_sum(__u8 *pkt, size_t len, const struct pb_layout *lay)
{
	__u32 s = pseudo_sum(pkt, lay);

	(void)len;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	wr16(pkt + lay->tcp_check_off, (__u16)s);
}

/* Urgent data: cleared by default, dropped under --urgent drop. */
static int urgent(struct th *h, enum th_hook hook)
{
	static const char req[] = "GET /u HTTP/1.1\r\nX-InternalZ-Auth: s\r\n\r\n";
	const char *hn = th_hook_name[hook];
	struct hs_counters b, a;
	__u8 got[256], hdr[256];
	struct st_conn c;
	int bad = 0;

	st_conn_init(&c, h, hook, 45001, "urgent data");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	c.mangle = mangle_urgent;
	c.urgent_ok = 1;
	c.hdr_out = hdr;
	th_counters(h, &b);
	bad += st_send_at(&c, c.next, 0, req, sizeof(req) - 1, got) != 1;
	th_counters(h, &a);
	bad += st_check_out(&c, got, req, "the urgent byte stays in the stream");
	if ((hdr[34 + 13] & TCP_URG) || rd16(hdr + 34 + 18)) { /* IPv4: TCP at 34 */
		fprintf(stderr, "  [%s] urgent data: URG or the urgent pointer left set\n", hn);
		bad++;
	}
	bad += st_diff1(c.what, hn, "urgent_cleared", MOVED(urgent_cleared), 1);
	bad += st_diff1(c.what, hn, "packets_modified", MOVED(packets_modified), 1);

	bad += set_config(h, HS_URGENT_DROP, -1) != 0;
	st_conn_init(&c, h, hook, 45002, "urgent data, --urgent drop");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	c.mangle = mangle_urgent;
	th_counters(h, &b);
	bad += st_send_at(&c, c.next, 0, req, sizeof(req) - 1, got) != 0;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "urgent_cleared", MOVED(urgent_cleared), 1);
	bad += st_diff1(c.what, hn, "packets_dropped", MOVED(packets_dropped), 1);
	bad += set_config(h, HS_URGENT_CLEAR, -1) != 0;
	return bad;
}

/* Wrong checksums: dropped, and the connection's state untouched by them. */
static int checksums(struct th *h, enum th_hook hook)
{
	static const char framing[] = "POST /b HTTP/1.1\r\nContent-Length: 40\r\n\r\n";
	const char *hn = th_hook_name[hook];
	struct hs_counters b, a;
	struct st_conn c;
	__u8 got[256];
	int bad = 0;

	st_conn_init(&c, h, hook, 45011, "bad TCP checksum");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	c.mangle = mangle_tcp_sum;
	th_counters(h, &b);
	bad += st_send_at(&c, c.next, 0, framing, sizeof(framing) - 1, NULL) != 0;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "bad_checksum", MOVED(bad_checksum), 1);
	/* The real bytes at the same place: in order, not a retransmission
	 * of a body that never was. */
	c.mangle = NULL;
	th_counters(h, &b);
	bad += st_send_at(&c, c.next, 0, req_auth, sizeof(req_auth) - 1, got) != 1;
	th_counters(h, &a);
	bad += st_check_out(&c, got, req_auth_m, "the request after a bad checksum");
	bad += st_diff1(c.what, hn, "retransmits", MOVED(retransmits), 0);

	st_conn_init(&c, h, hook, 45012, "bad IPv4 header checksum");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	c.mangle = mangle_ip_sum;
	th_counters(h, &b);
	bad += st_send_at(&c, c.next, 0, framing, sizeof(framing) - 1, NULL) != 0;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "bad_checksum", MOVED(bad_checksum), 1);

	if (hook == TH_XDP) {
		/* A checksum left to offload: not checked, the segment
		 * scanned, and the field left for the device to complete. */
		st_conn_init(&c, h, hook, 45013, "checksum left to offload");
		bad += st_send_ctl(&c, TCP_SYN) != 1;
		c.mangle = mangle_offload_sum;
		c.no_sum_check = 1;
		th_counters(h, &b);
		bad += st_send_at(&c, c.next, 0, req_auth, sizeof(req_auth) - 1, got) != 1;
		th_counters(h, &a);
		bad += st_check_out(&c, got, req_auth_m, "masked all the same");
		bad += st_diff1(c.what, hn, "csum_unchecked", MOVED(csum_unchecked), 1);
		bad += st_diff1(c.what, hn, "bad_checksum", MOVED(bad_checksum), 0);
	}
	return bad;
}

/* Bytes that overlap what was passed: read as the first copy, or dropped. */
static int overlaps(struct th *h, enum th_hook hook)
{
	static const char first[] = "GET /o HTTP/1.1\r\nX-Foo: a\r\n",
			  other[] = "GET /o HTTP/1.1\r\nX-Foo: aaaX-Internal-Auth: s\r\n\r\n",
			  p1[] = "GET /o HTTP/1.1\r\nX-Inter", p2[] = "nal-Auth: s\r\n\r\n";
	const char *hn = th_hook_name[hook];
	struct hs_counters b, a;
	__u8 got[256], o1[64], o2[64];
	struct st_conn c;
	char both[128];
	__u32 s0;
	int bad = 0, i;

	/* The same length, other bytes: the stack keeps the first copy, and
	 * the tail would be read from another state. */
	st_conn_init(&c, h, hook, 45021, "overlap with other bytes");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	s0 = c.next;
	bad += st_send_at(&c, s0, 0, first, sizeof(first) - 1, NULL) != 1;
	th_counters(h, &b);
	bad += st_send_at(&c, s0, 0, other, sizeof(other) - 1, NULL) != 0;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "retransmit_mismatch", MOVED(retransmit_mismatch), 1);

	/* The same bytes, two segments resent as one: the same output as
	 * the first time, name rewritten ahead included. */
	st_conn_init(&c, h, hook, 45022, "retransmission, two segments as one");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	s0 = c.next;
	bad += st_send_at(&c, s0, 0, p1, sizeof(p1) - 1, o1) != 1;
	bad += st_send_at(&c, s0 + sizeof(p1) - 1, 0, p2, sizeof(p2) - 1, o2) != 1;
	snprintf(both, sizeof(both), "%s%s", p1, p2);
	th_counters(h, &b);
	bad += st_send_at(&c, s0, 0, both, strlen(both), got) != 1;
	th_counters(h, &a);
	if (memcmp(got, o1, sizeof(p1) - 1) || memcmp(got + sizeof(p1) - 1, o2, sizeof(p2) - 1)) {
		fprintf(stderr, "  [%s] %s: other bytes than the first time\n", hn, c.what);
		bad++;
	}
	bad += st_diff1(c.what, hn, "retransmits", MOVED(retransmits), 1);
	bad += st_diff1(c.what, hn, "retransmit_mismatch", MOVED(retransmit_mismatch), 0);

	/* Twenty segments on (the flow keeps 16 checkpoints), a copy of the
	 * first: no state kept there. */
	st_conn_init(&c, h, hook, 45023, "retransmission past the checkpoints");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	s0 = c.next;
	bad += st_send_at(&c, s0, 0, "GET /r HTTP/1.1\r\n", 17, NULL) != 1;
	for (i = 0; i < 20; i++)
		bad += st_send_at(&c, s0 + 17 + 8 * (__u32)i, 0, "X-Ab: c\n", 8, NULL) != 1;
	th_counters(h, &b);
	bad += st_send_at(&c, s0 + 17, 0, "X-Ab: c\nX-Ab: c\n", 16, NULL) != 0;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "retransmit_unverified", MOVED(retransmit_unverified), 1);
	/* One within reach passes. */
	th_counters(h, &b);
	bad += st_send_at(&c, s0 + 17 + 8 * 16, 0, "X-Ab: c\nX-Ab: c\n", 16, NULL) != 1;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "retransmit_unverified (in reach)",
			MOVED(retransmit_unverified), 0);
	return bad;
}

/* RST and SYN the stack would ignore, SYN data, data without ACK. */
static int control(struct th *h, enum th_hook hook)
{
	static const char post[] = "POST /c HTTP/1.1\r\nContent-Length: 21\r\n\r\n",
			  body[] = "X-Internal-Auth: bb\r\n";
	const char *hn = th_hook_name[hook];
	struct hs_counters b, a;
	struct st_conn c;
	__u8 got[256];
	__u32 s0;
	int bad = 0;

	/* A RST off by a few bytes: the connection lives on, in its body. */
	st_conn_init(&c, h, hook, 45031, "RST not at the next byte");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	bad += st_send_at(&c, c.next, 0, post, sizeof(post) - 1, NULL) != 1;
	c.next += sizeof(post) - 1;
	th_counters(h, &b);
	bad += st_send_at(&c, c.next + 5, TCP_RST | TCP_ACK, "", 0, NULL) != 1;
	bad += st_send_at(&c, c.next, 0, body, sizeof(body) - 1, got) != 1;
	th_counters(h, &a);
	bad += st_check_out(&c, got, body, "the body after it, untouched");
	bad += st_diff1(c.what, hn, "rst_ignored", MOVED(rst_ignored), 1);
	bad += st_diff1(c.what, hn, "untracked", MOVED(untracked), 0);
	/* At the next byte: the connection is over. */
	c.next += sizeof(body) - 1;
	th_counters(h, &b);
	bad += st_send_at(&c, c.next, TCP_RST | TCP_ACK, "", 0, NULL) != 1;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "flows_closed", MOVED(flows_closed), 1);

	/* A SYN inside the connection: its state stays. */
	st_conn_init(&c, h, hook, 45032, "SYN inside a connection");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	bad += st_send_at(&c, c.next, 0, post, sizeof(post) - 1, NULL) != 1;
	c.next += sizeof(post) - 1;
	th_counters(h, &b);
	bad += st_send_at(&c, 0x10000000, TCP_SYN, "", 0, NULL) != 1;
	bad += st_send_at(&c, c.next, 0, body, sizeof(body) - 1, got) != 1;
	th_counters(h, &a);
	bad += st_check_out(&c, got, body, "the body after it, untouched");
	bad += st_diff1(c.what, hn, "syn_in_flow", MOVED(syn_in_flow), 1);
	/* Data where that SYN would start a connection: line by line. */
	th_counters(h, &b);
	bad += st_send_at(&c, 0x10000001, 0, body, sizeof(body) - 1, got) != 1;
	th_counters(h, &a);
	bad += st_check_out(&c, got, "y-hdrstrip: xxxxxxx\r\n", "checked line by line");
	bad += st_diff1(c.what, hn, "untracked", MOVED(untracked), 1);

	/* TCP Fast Open: the SYN's data starts the stream. */
	st_conn_init(&c, h, hook, 45033, "data in the SYN");
	s0 = c.next;
	th_counters(h, &b);
	bad += st_send_at(&c, s0, TCP_SYN, req_auth, sizeof(req_auth) - 1, got) != 1;
	bad += st_check_out(&c, got, req_auth_m, "the SYN's request");
	bad += st_send_at(&c, s0 + 1 + sizeof(req_auth) - 1, 0, req_auth, sizeof(req_auth) - 1,
			  got) != 1;
	th_counters(h, &a);
	bad += st_check_out(&c, got, req_auth_m, "the request after it, in order");
	bad += st_diff1(c.what, hn, "flows_new", MOVED(flows_new), 1);
	bad += st_diff1(c.what, hn, "out_of_order", MOVED(out_of_order), 0);

	/* Data without ACK: Linux discards it. */
	st_conn_init(&c, h, hook, 45034, "data without ACK");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	th_counters(h, &b);
	bad += st_send_at(&c, c.next, TCP_PSH, req_auth, sizeof(req_auth) - 1, NULL) != 0;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "malformed", MOVED(malformed), 1);
	return bad;
}

/* A list with 1- and 2-byte names: no masked line may carry one. */
static int filler(struct th *h, enum th_hook hook)
{
	static const char in[] = "GET /f HTTP/1.1\r\nX: v\r\nx-: vv\r\nX\r\n\r\n",
			  want[] = "GET /f HTTP/1.1\r\ny: x\r\ny-: xx\r\ny\r\n\r\n";
	struct st_conn c;
	__u8 got[256];
	int bad = 0;

	if (set_list(h, 0, "x\nx-\nx-internal-auth\n")) {
		fprintf(stderr, "  [%s] filler: cannot set the list up\n", th_hook_name[hook]);
		return 1;
	}
	st_conn_init(&c, h, hook, 45041, "1- and 2-byte names");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	bad += st_send_at(&c, c.next, 0, in, sizeof(in) - 1, got) != 1;
	bad += st_check_out(&c, got, want, "masked with 'y-hdrstrip'");
	return bad + (th_set_trie(h, 0, pt.fix_trie) != 0);
}

/*
 * A list update between a segment and its retransmission: the first copy
 * was scanned with the old list (its cut inside a name that list could
 * still match: rewritten ahead); the new list reads the cut otherwise, so
 * the copy is dropped rather than passed read another way.
 */
static int update(struct th *h, enum th_hook hook)
{
	static const char p1[] = "GET /up HTTP/1.1\r\nX-Inter", p2[] = "nal-Auth: s\r\n\r\n";
	const char *hn = th_hook_name[hook];
	struct hs_counters b, a;
	struct st_conn c;
	char both[96];
	__u32 s0;
	int bad = 0;

	if (set_list(h, 1, "x-other\n")) {
		fprintf(stderr, "  [%s] update: cannot set the list up\n", hn);
		return 1;
	}
	st_conn_init(&c, h, hook, 45051, "retransmission across a list update");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	s0 = c.next;
	bad += st_send_at(&c, s0, 0, p1, sizeof(p1) - 1, NULL) != 1;
	bad += set_config(h, -1, 1) != 0;
	snprintf(both, sizeof(both), "%s%s", p1, p2);
	th_counters(h, &b);
	bad += st_send_at(&c, s0, 0, both, strlen(both), NULL) != 0;
	th_counters(h, &a);
	bad += st_diff1(c.what, hn, "retransmit_mismatch", MOVED(retransmit_mismatch), 1);
	return bad + (set_config(h, -1, 0) != 0);
}

/* --on-error pass: what the policy lets through is checked line by line
 * where it can be (flow.h's hs_seg_policy_pass()). */
static int policy_pass(struct th *h, enum th_hook hook)
{
	static const char head[] = "GET /p HTTP/1.1\r\nHost: a\r\n", gap[] = "Accept: */*\r\n",
			  auth[] = "X-Internal-Auth: s\r\n";
	const char *hn = th_hook_name[hook];
	struct hs_counters b, a;
	struct st_conn c;
	__u8 got[256];
	int bad = 0;

	if (set_config3(h, -1, -1, HS_POLICY_PASS))
		return 1;
	/* A field line ahead of a gap in the header: passed, masked all the
	 * same; the gap's bytes then come in order. */
	st_conn_init(&c, h, hook, 45041, "field ahead of a gap, --on-error pass");
	bad += st_send_ctl(&c, TCP_SYN) != 1;
	bad += st_send_at(&c, c.next, 0, head, sizeof(head) - 1, NULL) != 1;
	c.next += sizeof(head) - 1;
	th_counters(h, &b);
	bad += st_send_at(&c, c.next + sizeof(gap) - 1, 0, auth, sizeof(auth) - 1, got) != 1;
	th_counters(h, &a);
	bad += st_check_out(&c, got, auth_m, "checked line by line");
	bad += st_diff1(c.what, hn, "out_of_order", MOVED(out_of_order), 1);
	bad += st_diff1(c.what, hn, "untracked", MOVED(untracked), 1);
	bad += st_send_at(&c, c.next, 0, gap, sizeof(gap) - 1, got) != 1;
	bad += st_check_out(&c, got, gap, "the gap, in order");
	c.next += sizeof(gap) - 1;
	/* Its retransmission, in order now, is read with the stream. */
	bad += st_send_at(&c, c.next, 0, auth, sizeof(auth) - 1, got) != 1;
	bad += st_check_out(&c, got, auth_m, "in order");
	return bad + (set_config3(h, -1, -1, HS_POLICY_DROP) != 0);
}

int st_normalize(struct th *h)
{
	int hook, bad = 0;

	h->keep_flows = 1;
	for (hook = 0; hook < TH_HOOKS; hook++) {
		th_forget_flows(h);
		bad += urgent(h, (enum th_hook)hook);
		bad += checksums(h, (enum th_hook)hook);
		bad += overlaps(h, (enum th_hook)hook);
		bad += control(h, (enum th_hook)hook);
		bad += filler(h, (enum th_hook)hook);
		bad += update(h, (enum th_hook)hook);
		bad += policy_pass(h, (enum th_hook)hook);
	}
	h->keep_flows = 0;
	th_forget_flows(h);
	return bad;
}
