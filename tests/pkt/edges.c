// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Cases built by code rather than written in a table: every junk byte, cuts
 * at every byte, the largest frames test_run takes, many headers, and a trie
 * swap between two runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "edges.h"

#define RL "GET /index.html HTTP/1.1\r\n"
#define HOST "Host: example.com\r\n"

static const __u8 junk[] = { ' ', '\t', 0x0b, 0x0c, 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0 };

/* A case whose payloads live in caller buffers. */
static struct pt_case dyn(const char *what, const char *in, size_t in_len, const char *out)
{
	struct pt_case c;

	memset(&c, 0, sizeof(c));
	c.what = what;
	c.in = in;
	c.in_len = in_len;
	c.out = out;
	c.out_len = out ? in_len : 0;
	return c;
}

static void set_http(struct hs_counters *d, __u64 seen, __u64 matched, __u64 masked)
{
	memset(d, 0, sizeof(*d));
	d->inspected = 1;
	d->http_requests = 1;
	d->headers_seen = seen;
	d->headers_matched = matched;
	d->headers_masked = masked;
	d->packets_modified = masked > 0;
}

int pt_junk_bytes(struct th *h)
{
	char in[256], out[256], what[96];
	int failed = 0;
	size_t i, n;

	for (i = 0; i < sizeof(junk); i++) {
		const unsigned int j = junk[i];
		struct pt_case c;
		int cont = j == ' ' || j == '\t';

		/* One junk byte between the name and the colon: 16 bytes
		 * before the colon, so the whole filler name. */
		n = (size_t)snprintf(in, sizeof(in), RL HOST "X-Internal-Auth%c: a\r\n\r\n", j);
		snprintf(out, sizeof(out), RL HOST "y-hdrstrip: xxxxxxx\r\n\r\n");
		snprintf(what, sizeof(what), "junk byte %#04x before the colon", j);
		c = dyn(what, in, n, out);
		set_http(&c.delta, 2, 1, 1);
		c.hits[R_AUTH] = 1;
		failed += pt_check(h, &c, PT_ALL_HOOKS) != 0;

		/* Two of them, upper case and '_' in the name. */
		n = (size_t)snprintf(in, sizeof(in), RL HOST "X_INTERNAL_AUTH%c%c: a\r\n\r\n", j,
				     j);
		snprintf(out, sizeof(out), RL HOST "y-hdrstrip: xxxxxxxx\r\n\r\n");
		snprintf(what, sizeof(what), "two junk bytes %#04x before the colon", j);
		c = dyn(what, in, n, out);
		set_http(&c.delta, 2, 1, 1);
		c.hits[R_AUTH] = 1;
		failed += pt_check(h, &c, PT_ALL_HOOKS) != 0;

		/* Before the name: SP and HTAB make a continuation line (kept,
		 * the rest masked, not counted as a new field); the other junk
		 * bytes are masked with the name. */
		n = (size_t)snprintf(in, sizeof(in), RL HOST "%cX-Internal-Auth: a\r\n\r\n", j);
		if (cont)
			snprintf(out, sizeof(out), RL HOST "%cy-hdrstrip: xxxxxx\r\n\r\n", j);
		else
			snprintf(out, sizeof(out), RL HOST "y-hdrstrip: xxxxxxx\r\n\r\n");
		snprintf(what, sizeof(what), "junk byte %#04x before the name", j);
		c = dyn(what, in, n, out);
		set_http(&c.delta, cont ? 1 : 2, 1, 1);
		c.hits[R_AUTH] = 1;
		failed += pt_check(h, &c, PT_ALL_HOOKS) != 0;

		/* A drop rule behind the same byte. */
		n = (size_t)snprintf(in, sizeof(in), RL HOST "X-Secret%c: 1\r\n\r\n", j);
		snprintf(what, sizeof(what), "drop rule, junk byte %#04x before the colon", j);
		c = dyn(what, in, n, NULL);
		set_http(&c.delta, 2, 1, 0);
		c.delta.packets_dropped = 1;
		c.verdict = PV_DROP;
		c.hits[R_SECRET] = 1;
		failed += pt_check(h, &c, PT_ALL_HOOKS) != 0;
	}
	return failed;
}

/* test_run's return code for a pass at @hook. */
static __u32 pass_code(enum th_hook hook)
{
	return hook == TH_XDP ? XDP_PASS : (__u32)TC_ACT_UNSPEC;
}

/*
 * Cut @spec's masked request at every length: below an Ethernet header
 * test_run refuses the frame; from there on the program must pass the frame
 * unchanged and count it as truncated (and as inspected once the cut is
 * inside the payload the IP length promises).
 */
static int sweep_one(struct th *h, const char *what, const struct pb_spec *spec, int *runs,
		     int *refused)
{
	static const char req[] = RL HOST "X-Internal-Auth: s3cret\r\n\r\n";
	static __u8 pkt[PB_MAX_PKT], got[2 * PB_MAX_PKT];
	struct hs_counters before, after, want;
	struct pb_layout lay;
	size_t len = pb_build(spec, req, sizeof(req) - 1, pkt, &lay), cut, skb_min = 0;
	int hook, bad = 0;

	/* skb test_run refuses an IPv4 or IPv6 EtherType (not a VLAN one)
	 * whose frame is shorter than the bare IP header. */
	if (!spec->n_vlans)
		skb_min = lay.l3_off + (spec->ipv6 ? 40 : 20);

	for (cut = 0; cut < len; cut++) {
		for (hook = 0; hook < TH_HOOKS; hook++) {
			__u32 glen = 0, ret = 0;
			char why[160], tag[128];
			int rc;

			th_counters(h, &before);
			rc = th_run(h, hook, pkt, (__u32)cut, got, sizeof(got), &glen, &ret);
			(*runs)++;
			snprintf(tag, sizeof(tag), "%s cut at %zu", what, cut);
			if (cut < 14 || (hook == TH_TC && cut < skb_min)) {
				if (rc != -EINVAL) {
					fprintf(stderr,
						"  [%s] %s: test_run gave %d, expected -EINVAL\n",
						th_hook_name[hook], tag, rc);
					bad++;
				}
				(*refused)++;
				continue;
			}
			if (rc || ret != pass_code(hook)) {
				fprintf(stderr, "  [%s] %s: rc %d, returned %d\n",
					th_hook_name[hook], tag, rc, (int)ret);
				bad++;
				continue;
			}
			if (pt_same_bytes(got, glen, pkt, cut, 0, why, sizeof(why))) {
				fprintf(stderr, "  [%s] %s: %s\n", th_hook_name[hook], tag, why);
				bad++;
			}
			th_counters(h, &after);
			memset(&want, 0, sizeof(want));
			want.packets = 1;
			want.truncated = 1;
			want.inspected = cut >= lay.payload_off;
			bad += pt_diff_counters(tag, th_hook_name[hook], &want, &before, &after);
		}
	}
	return bad;
}

int pt_truncation_sweep(struct th *h, int *runs, int *refused)
{
	struct pb_spec v4 = { .ip_opts = "\x01\x01\x01\x00",
			      .ip_opts_len = 4,
			      .tcp_opts = "\x02\x04\x05\xb4\x01\x01\x04\x02",
			      .tcp_opts_len = 8 };
	struct pb_spec v6 = { .ipv6 = 1,
			      .n_vlans = 2,
			      .vlan_tpid = { 0x88a8, 0x8100 },
			      .ext = { { 0, 0 }, { 43, 1 }, { 51, 4 }, { 60, 0 } },
			      .n_ext = 4,
			      .tcp_opts = "\x01\x01\x01\x01",
			      .tcp_opts_len = 4 };
	struct pb_spec v6_plain = { .ipv6 = 1, .ext = { { 60, 1 } }, .n_ext = 1 };
	struct pb_spec v4_vlan = { .n_vlans = 1, .vlan_tpid = { 0x8100 } };
	int bad = 0;

	bad += sweep_one(h, "IPv4+options, TCP+options", &v4, runs, refused);
	bad += sweep_one(h, "QinQ IPv6+4 extension headers", &v6, runs, refused);
	bad += sweep_one(h, "IPv6+destination options", &v6_plain, runs, refused);
	bad += sweep_one(h, "802.1Q IPv4", &v4_vlan, runs, refused);
	return bad;
}

/* Largest @len in [lo, hi) for which test_run accepts a frame of @len
 * bytes of an EtherType nobody parses (lo must be accepted). */
static __u32 largest_accepted(struct th *h, enum th_hook hook, __u32 lo, __u32 hi)
{
	static __u8 frame[1 << 20], out[1 << 20];
	__u32 glen, ret;

	memset(frame, 0, sizeof(frame));
	frame[12] = 0x88;
	frame[13] = 0xb5; /* local experimental EtherType */
	while (hi - lo > 1) {
		__u32 mid = lo + (hi - lo) / 2;

		if (th_run(h, hook, frame, mid, out, sizeof(out), &glen, &ret) == 0)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* A request of exactly @frame_len bytes on the wire, the internal field
 * last: a pad field takes up the room. Returns the payload length. */
static size_t sized_request(size_t frame_len, char *in, char *out)
{
	const size_t hdrs = 14 + 20 + 20;
	static const char head[] = RL HOST "X-Pad: ", tail[] = "\r\nX-Internal-Auth: a\r\n\r\n",
			  tail_m[] = "\r\ny-hdrstrip: xxxxxx\r\n\r\n";
	size_t pad = frame_len - hdrs - (sizeof(head) - 1) - (sizeof(tail) - 1), n;

	n = sizeof(head) - 1;
	memcpy(in, head, n);
	memset(in + n, 'p', pad);
	memcpy(in + n + pad, tail, sizeof(tail) - 1);
	memcpy(out, in, n + pad);
	memcpy(out + n + pad, tail_m, sizeof(tail_m) - 1);
	return n + pad + sizeof(tail) - 1;
}

int pt_limits(struct th *h, struct pt_limits *lim)
{
	static char in[PB_MAX_PKT], out[PB_MAX_PKT];
	int bad = 0, hook;

	lim->accepted[TH_XDP] = largest_accepted(h, TH_XDP, 14, 1 << 20);
	lim->accepted[TH_TC] = largest_accepted(h, TH_TC, 14, 1 << 20);

	/* The XDP program sees the linear part only (it is not a frags
	 * program): find the largest frame whose request it still masks. */
	{
		__u32 lo = 200, hi = lim->accepted[TH_XDP] + 1;

		while (hi - lo > 1) {
			__u32 mid = lo + (hi - lo) / 2;
			static __u8 pkt[PB_MAX_PKT], got[2 * PB_MAX_PKT];
			struct pb_spec spec = { 0 };
			struct pb_layout lay;
			struct hs_counters b, a;
			size_t plen = sized_request(mid, in, out);
			size_t len = pb_build(&spec, in, plen, pkt, &lay);
			__u32 glen, ret;

			th_counters(h, &b);
			if (th_run(h, TH_XDP, pkt, (__u32)len, got, sizeof(got), &glen, &ret)) {
				hi = mid;
				continue;
			}
			th_counters(h, &a);
			if (a.packets_modified - b.packets_modified == 1)
				lo = mid;
			else
				hi = mid;
		}
		lim->xdp_linear = lo;
	}

	/* Masked at the largest size each hook takes whole. */
	for (hook = 0; hook < TH_HOOKS; hook++) {
		size_t frame = hook == TH_XDP ? lim->xdp_linear : lim->accepted[TH_TC];
		char what[96];
		struct pt_case c;
		size_t plen = sized_request(frame, in, out);

		snprintf(what, sizeof(what), "largest frame (%zu bytes), internal field last",
			 frame);
		c = dyn(what, in, plen, out);
		set_http(&c.delta, 3, 1, 1);
		c.hits[R_AUTH] = 1;
		bad += pt_check(h, &c, 1u << hook) != 0;
	}

	/* One byte more at XDP: test_run hands the program a frame with
	 * fragments; the program sees the linear part, cannot reach the
	 * payload the IP length promises, and passes it as truncated. */
	if (lim->accepted[TH_XDP] > lim->xdp_linear) {
		size_t plen = sized_request(lim->xdp_linear + 1, in, out);
		struct pt_case c = dyn("XDP frame one byte past the linear part", in, plen, NULL);

		c.delta.inspected = 1;
		c.delta.truncated = 1;
		bad += pt_check(h, &c, 1u << TH_XDP) != 0;
	}
	return bad;
}

int pt_many_headers(struct th *h, int n_benign)
{
	static char in[PB_MAX_PKT], out[PB_MAX_PKT];
	static const char auth[] = "X-Internal-Auth: a\r\n\r\n",
			  auth_m[] = "y-hdrstrip: xxxxxx\r\n\r\n";
	size_t n = 0;
	struct pt_case c;
	int i;

	n += (size_t)sprintf(in + n, RL);
	/* Short benign names ("000:" ...): 500 of them fit under the skb
	 * test_run limit together with the internal one. */
	for (i = 0; i < n_benign; i++)
		n += (size_t)sprintf(in + n, "%03d:\r\n", i);
	memcpy(out, in, n);
	memcpy(in + n, auth, sizeof(auth) - 1);
	memcpy(out + n, auth_m, sizeof(auth_m) - 1);
	n += sizeof(auth) - 1;
	c = dyn("benign headers before an internal one", in, n, out);
	set_http(&c.delta, (__u64)n_benign + 1, 1, 1);
	c.hits[R_AUTH] = 1;
	return pt_check(h, &c, PT_ALL_HOOKS);
}

int pt_trie_swap(struct th *h)
{
	static const char in[] = RL "X-Internal-Auth: a\r\nX-B-Only: b\r\n\r\n";
	static const char out_a[] = RL "y-hdrstrip: xxxxxx\r\nX-B-Only: b\r\n\r\n";
	static const char out_b[] = RL "X-Internal-Auth: a\r\ny-hdrstr: x\r\n\r\n";
	static const __u16 port80 = 80;
	struct hs_trie *tb = calloc(1, sizeof(*tb));
	struct pt_case c;
	int bad = 0;

	if (!tb || pt_compile("x-b-only\n", tb) || th_set_trie(h, 1, tb)) {
		free(tb);
		return 1;
	}
	/* Written into the idle slot: nothing changes yet. */
	c = dyn("slot 0 active, slot 1 just written", in, sizeof(in) - 1, out_a);
	set_http(&c.delta, 2, 1, 1);
	c.hits[R_AUTH] = 1;
	bad += pt_check(h, &c, PT_ALL_HOOKS);

	th_config(h, 1, HS_POLICY_DROP, &port80, 1);
	c = dyn("after the flip to slot 1", in, sizeof(in) - 1, out_b);
	c.no_ref = 1; /* the reference holds the fixture list only */
	set_http(&c.delta, 2, 1, 1);
	c.hits[0] = 1; /* rule 0 of the second list */
	bad += pt_check(h, &c, PT_ALL_HOOKS);

	th_config(h, 0, HS_POLICY_DROP, &port80, 1);
	c = dyn("after the flip back to slot 0", in, sizeof(in) - 1, out_a);
	set_http(&c.delta, 2, 1, 1);
	c.hits[R_AUTH] = 1;
	bad += pt_check(h, &c, PT_ALL_HOOKS);
	free(tb);
	return bad;
}
