// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Reject (bpf/reject.h): a segment a reject rule or --on-error reject stops
 * comes back as the TCP reset its sender's stack takes for the end of the
 * connection. Each case checks the verdict (XDP_TX; at tc TC_ACT_REDIRECT),
 * every byte of the reset against one written out here from RFC 9293
 * 3.10.7.1 (a segment with ACK: sequence number its acknowledgment, no
 * ACK; without: sequence 0, ACK for what it occupies), its checksums
 * (pb_check_sums, which shares nothing with the datapath) and the counters.
 * A segment that cannot be answered in place (IPv4 options) is dropped as
 * a drop rule drops it; observe mode passes it.
 */
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>

#include "edges.h"

static const char reject_list[] = "x-internal-auth\nx-secret reject\n";

#define RQ "GET / HTTP/1.1\r\nHost: h\r\n"

static __u32 rd32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

static void wr16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void wr32(__u8 *p, __u32 v)
{
	wr16(p, v >> 16);
	wr16(p + 2, v & 0xffff);
}

/*
 * The reset hdrstrip must send for the frame @in (layout @l): the same
 * frame, addresses, MACs and ports swapped, the payload gone, TTL or hop
 * limit 64, DF, the flags and numbers of RFC 9293. Checksums zeroed: the
 * caller compares everything but them, and checks them apart.
 */
static size_t want_reset(const __u8 *in, const struct pb_layout *l, int ipv6, __u8 *out)
{
	size_t l3 = l->l3_off, l4 = l->l4_off, plen = l->len - l->payload_off;
	__u8 flags = in[l4 + 13];
	__u32 seq = rd32(in + l4 + 4), ack = rd32(in + l4 + 8);

	memcpy(out, in, l4 + 20);
	memcpy(out, in + 6, 6);
	memcpy(out + 6, in, 6);
	if (ipv6) {
		wr16(out + l3 + 4, 20);
		out[l3 + 7] = 64;
		memcpy(out + l3 + 8, in + l3 + 24, 16);
		memcpy(out + l3 + 24, in + l3 + 8, 16);
	} else {
		wr16(out + l3 + 2, 40);
		wr16(out + l3 + 6, 0x4000);
		out[l3 + 8] = 64;
		wr16(out + l3 + 10, 0);
		memcpy(out + l3 + 12, in + l3 + 16, 4);
		memcpy(out + l3 + 16, in + l3 + 12, 4);
	}
	memcpy(out + l4, in + l4 + 2, 2);
	memcpy(out + l4 + 2, in + l4, 2);
	if (flags & 0x10) {
		wr32(out + l4 + 4, ack);
		wr32(out + l4 + 8, 0);
		out[l4 + 13] = 0x04;
	} else {
		wr32(out + l4 + 4, 0);
		wr32(out + l4 + 8, seq + (__u32)plen + !!(flags & 0x02) + !!(flags & 0x01));
		out[l4 + 13] = 0x14;
	}
	out[l4 + 12] = 0x50;
	wr16(out + l4 + 14, 0);
	wr16(out + l4 + 16, 0);
	wr16(out + l4 + 18, 0);
	return l4 + 20;
}

struct reject_case {
	const char *what;
	struct pb_spec spec;
	const char *payload;
	__u8 on_error; /* enum hs_policy */
	int observe;
	int answered; /* 1: a reset comes back; 0: dropped (or, observe, passed) */
	int no_seed; /* no flow before it (th.no_seed): its SYN starts one */
	struct hs_counters delta;
};

static const struct reject_case cases[] = {
	{ "IPv4: a reject rule answers with a reset (seq = its ACK number)",
	  .payload = RQ "X-Secret: 1\r\n\r\n", .answered = 1,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 2,
		     .headers_matched = 1,
		     .packets_dropped = 1,
		     .packets_rejected = 1 } },
	{ "IPv6: the same", .spec = { .ipv6 = 1 }, .payload = RQ "X-Secret: 1\r\n\r\n",
	  .answered = 1,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 2,
		     .headers_matched = 1,
		     .packets_dropped = 1,
		     .packets_rejected = 1 } },
	{ "802.1Q IPv4: the tag stays, the rest turns round",
	  .spec = { .n_vlans = 1, .vlan_tpid = { 0x8100 } }, .payload = RQ "X-Secret: 1\r\n\r\n",
	  .answered = 1,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 2,
		     .headers_matched = 1,
		     .packets_dropped = 1,
		     .packets_rejected = 1 } },
	{ "without ACK (data in a SYN): seq 0, ACK for the SYN and its data",
	  .spec = { .tcp_flags = 0x02 }, .payload = RQ "X-Secret: 1\r\n\r\n", .answered = 1,
	  .no_seed = 1,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 2,
		     .headers_matched = 1,
		     .packets_dropped = 1,
		     .packets_rejected = 1,
		     .flows_new = 1 } },
	{ "--on-error reject: two Content-Lengths",
	  .payload = RQ "Content-Length: 1\r\nContent-Length: 2\r\n\r\n",
	  .on_error = HS_POLICY_REJECT, .answered = 1,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 3,
		     .framing_conflict = 1,
		     .packets_dropped = 1,
		     .packets_rejected = 1 } },
	{ "IPv4 options: not answered in place, dropped",
	  .spec = { .ip_opts = "\x01\x01\x01\x00", .ip_opts_len = 4 },
	  .payload = RQ "X-Secret: 1\r\n\r\n",
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 2,
		     .headers_matched = 1,
		     .packets_dropped = 1 } },
	{ "observe mode: passed as it is, observed", .payload = RQ "X-Secret: 1\r\n\r\n",
	  .observe = 1,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 2,
		     .headers_matched = 1,
		     .headers_observed = 1,
		     .packets_observed = 1 } },
};

static int run_case(struct th *h, const struct reject_case *c, const struct hs_trie *t)
{
	static __u8 in[PB_MAX_PKT], got[2 * PB_MAX_PKT], want[PB_MAX_PKT];
	struct hs_counters before, after;
	struct pb_layout lay;
	struct hs_config cfg;
	size_t len, wlen;
	int hook, bad = 0;
	__u32 key = 0;

	if (th_config(h, 0, c->on_error, &(const __u16){ 80 }, 1) || th_set_trie(h, 0, t))
		return 1;
	if (c->observe) {
		if (bpf_map_lookup_elem(h->config_fd, &key, &cfg))
			return 1;
		cfg.observe = 1;
		if (bpf_map_update_elem(h->config_fd, &key, &cfg, BPF_ANY))
			return 1;
	}
	h->no_seed = c->no_seed;
	len = pb_build(&c->spec, c->payload, strlen(c->payload), in, &lay);
	wlen = want_reset(in, &lay, c->spec.ipv6, want);
	for (hook = 0; hook < TH_HOOKS; hook++) {
		__u32 glen = 0, ret = 0, want_ret;
		char why[160];

		struct hs_counters wantc = c->delta;

		wantc.packets = 1;
		th_counters(h, &before);
		if (th_run(h, hook, in, (__u32)len, got, sizeof(got), &glen, &ret)) {
			fprintf(stderr, "  [%s] %s: test_run failed\n", th_hook_name[hook],
				c->what);
			bad++;
			continue;
		}
		th_counters(h, &after);
		want_ret = c->answered	? (hook == TH_XDP ? XDP_TX : TC_ACT_REDIRECT)
			   : c->observe ? (hook == TH_XDP ? XDP_PASS : (__u32)TC_ACT_UNSPEC)
					: (hook == TH_XDP ? XDP_DROP : TC_ACT_SHOT);
		if (ret != want_ret) {
			fprintf(stderr, "  [%s] %s: returned %u, expected %u\n", th_hook_name[hook],
				c->what, ret, want_ret);
			bad++;
		}
		bad += pt_diff_counters(c->what, th_hook_name[hook], &wantc, &before, &after);
		if (!c->answered)
			continue;
		if (glen != wlen) {
			fprintf(stderr, "  [%s] %s: the reset is %u bytes, expected %zu\n",
				th_hook_name[hook], c->what, glen, wlen);
			bad++;
			continue;
		}
		if (pb_check_sums(got, glen, why, sizeof(why)) < 0) {
			fprintf(stderr, "  [%s] %s: the reset's checksums: %s\n",
				th_hook_name[hook], c->what, why);
			bad++;
		}
		/* Every byte but the checksums, which pb_check_sums checked. */
		if (!c->spec.ipv6) {
			got[lay.l3_off + 10] = 0;
			got[lay.l3_off + 11] = 0;
		}
		got[lay.l4_off + 16] = 0;
		got[lay.l4_off + 17] = 0;
		for (size_t k = 0; k < wlen; k++)
			if (got[k] != want[k]) {
				fprintf(stderr, "  [%s] %s: byte %zu is 0x%02x, expected 0x%02x\n",
					th_hook_name[hook], c->what, k, got[k], want[k]);
				bad++;
				break;
			}
	}
	h->no_seed = 0;
	return bad;
}

int pt_reject_cases(struct th *h)
{
	static struct hs_trie t;
	int bad = 0;

	if (pt_compile(reject_list, &t))
		return 1;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int b = run_case(h, &cases[i], &t);

		if (b)
			fprintf(stderr, "FAIL %s: %s\n", h->label, cases[i].what);
		bad += b;
	}
	return bad;
}
