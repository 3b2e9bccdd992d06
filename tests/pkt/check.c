// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The run-and-check step of every packet case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include "compile.h"
#include "hlist.h"
#include "pkttest.h"

int pt_compile(const char *text, struct hs_trie *t)
{
	struct hs_list_opts o;
	struct hs_list l;
	struct hs_err err;
	int r;

	hs_list_opts_default(&o);
	r = hs_list_parse(text, strlen(text), "<test list>", &o, &l, &err);
	if (!r) {
		r = hs_compile(&l, t, NULL, &err);
		hs_list_free(&l);
	}
	if (r)
		fprintf(stderr, "cannot compile a test list: %s\n", err.msg);
	return r;
}

void pt_tun_ports(const struct hs_tunnel_port *t, int n, struct pb_tun_ports *p)
{
	int i, v = 0, g = 0;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < n && t[i].port; i++) {
		if (t[i].kind == HS_TUN_VXLAN && v < PB_MAX_TUN_PORTS)
			p->vxlan[v++] = t[i].port;
		else if (t[i].kind == HS_TUN_GENEVE && g < PB_MAX_TUN_PORTS)
			p->geneve[g++] = t[i].port;
	}
}

static __u32 want_ret(enum th_hook hook, enum pt_verdict v)
{
	if (hook == TH_XDP)
		return v == PV_DROP ? XDP_DROP : XDP_PASS;
	return v == PV_DROP ? TC_ACT_SHOT : (__u32)TC_ACT_UNSPEC;
}

int pt_diff_counters(const char *what, const char *hook, const struct hs_counters *want,
		     const struct hs_counters *before, const struct hs_counters *after)
{
	const __u64 *w = (const __u64 *)want, *b = (const __u64 *)before;
	const __u64 *a = (const __u64 *)after;
	int bad = 0;
	size_t k;

	for (k = 0; k < HS_N_COUNTERS; k++) {
		if (a[k] - b[k] == w[k])
			continue;
		fprintf(stderr, "  [%s] %s: counter %s moved by %llu, expected %llu\n", hook, what,
			hs_counter_info[k].name, (unsigned long long)(a[k] - b[k]),
			(unsigned long long)w[k]);
		bad++;
	}
	return bad;
}

static void hex_around(const char *tag, const __u8 *p, size_t len, size_t at)
{
	size_t from = at > 8 ? at - 8 : 0, i;

	fprintf(stderr, "    %s @%zu:", tag, from);
	for (i = from; i < len && i < at + 16; i++)
		fprintf(stderr, i == at ? " [%02x]" : " %02x", p[i]);
	fprintf(stderr, "\n");
}

int pt_same_bytes(const __u8 *got, size_t got_len, const __u8 *want, size_t want_len,
		  size_t tcp_check_off, char *why, size_t why_len)
{
	size_t i;

	if (got_len != want_len) {
		snprintf(why, why_len, "output is %zu bytes, expected %zu", got_len, want_len);
		return -1;
	}
	for (i = 0; i < got_len; i++) {
		if (got[i] == want[i])
			continue;
		if (tcp_check_off && (i == tcp_check_off || i == tcp_check_off + 1)) {
			__u16 g = (__u16)(got[tcp_check_off] << 8 | got[tcp_check_off + 1]);
			__u16 w = (__u16)(want[tcp_check_off] << 8 | want[tcp_check_off + 1]);

			/* 0x0000 and 0xffff are the same one's complement number. */
			if ((g == 0 && w == 0xffff) || (g == 0xffff && w == 0))
				continue;
		}
		snprintf(why, why_len, "first difference at byte %zu: %#04x, expected %#04x", i,
			 got[i], want[i]);
		hex_around("got ", got, got_len, i);
		hex_around("want", want, want_len, i);
		return -1;
	}
	return 0;
}

/* The reference stripper must agree with every hand-written fixture it can
 * judge: that is what makes it trustworthy for the corpus comparison. */
static int ref_agrees(const struct pt_case *c)
{
	const struct hs_counters *d = &c->delta;
	struct ref_result r;
	__u8 *buf;
	int bad = 0;

	if (c->no_ref || c->mangle || !d->inspected || d->truncated || !pt.fix_ref)
		return 0;
	buf = malloc(c->in_len + 1);
	if (!buf)
		return 1;
	memcpy(buf, c->in, c->in_len);
	ref_strip(pt.fix_ref, buf, c->in_len, &r);
	if ((r.outcome == REF_DROP || r.outcome == REF_HALT) != (c->verdict == PV_DROP)) {
		fprintf(stderr, "  [ref] %s: reference outcome %d, fixture verdict %d\n", c->what,
			r.outcome, c->verdict);
		bad++;
	}
	if (c->verdict == PV_PASS && memcmp(buf, c->out ? c->out : c->in, c->in_len)) {
		fprintf(stderr, "  [ref] %s: the reference strips differently:\n    ref  \"",
			c->what);
		fwrite(buf, 1, c->in_len, stderr);
		fprintf(stderr, "\"\n");
		bad++;
	}
	if (r.requests != d->http_requests || r.seen != d->headers_seen ||
	    r.matched != d->headers_matched || r.masked != d->headers_masked ||
	    r.not_http != (d->non_http != 0) || r.premasked != d->split_names ||
	    r.desync != d->desync || r.framing_invalid != d->framing_invalid ||
	    r.conflicts != d->framing_conflict || r.h2c != d->h2c_preface ||
	    r.bodies_unframed != d->bodies_unframed) {
		fprintf(stderr,
			"  [ref] %s: reference counts requests %u seen %u matched %u masked %u "
			"not-http %d split %u desync %u invalid %u conflicts %u h2c %u "
			"bodies-unframed %u\n",
			c->what, r.requests, r.seen, r.matched, r.masked, r.not_http, r.premasked,
			r.desync, r.framing_invalid, r.conflicts, r.h2c, r.bodies_unframed);
		bad++;
	}
	free(buf);
	return bad;
}

void pt_expect_from_ref(struct pt_case *c, const struct ref_result *r, const __u8 *touched,
			size_t len)
{
	struct hs_counters *d = &c->delta;
	unsigned int i;
	size_t k;

	memset(d, 0, sizeof(*d));
	memset(c->hits, 0, sizeof(c->hits));
	c->verdict = PV_PASS;
	if (!len) {
		d->no_payload = 1; /* a bare ACK: passed, nothing to read */
		return;
	}
	d->inspected = 1;
	d->http_requests = r->requests;
	d->headers_seen = r->seen;
	d->headers_matched = r->matched;
	d->headers_masked = r->masked;
	d->split_names = r->premasked;
	d->framing_invalid = r->framing_invalid;
	d->framing_conflict = r->conflicts;
	d->desync = r->desync;
	d->h2c_preface = r->h2c;
	d->bodies_unframed = r->bodies_unframed;
	/* One packet starts a connection (the harness gives it the flow a
	 * SYN would have made). */
	d->non_http = r->not_http;
	if (r->outcome == REF_DROP || r->outcome == REF_HALT) {
		c->verdict = PV_DROP;
		d->packets_dropped = 1;
	} else {
		for (k = 0; k < len && !d->packets_modified; k++)
			d->packets_modified = touched[k];
	}
	for (i = 0; i < r->n_hits; i++)
		if (r->hits[i] < PT_HIT_SLOTS)
			c->hits[r->hits[i]]++;
}

int pt_check(struct th *h, const struct pt_case *c, unsigned int hooks)
{
	static __u8 in[PB_MAX_PKT], want[PB_MAX_PKT], got[2 * PB_MAX_PKT];
	struct hs_counters before, after, delta = c->delta;
	__u64 hb[PT_HIT_SLOTS], ha[PT_HIT_SLOTS];
	struct pb_layout lay, lay2;
	struct pb_tun_ports tp;
	size_t len, wlen;
	char why[160];
	int hook, bad = 0, s;

	len = pb_build(&c->spec, c->in, c->in_len, in, &lay);
	if (!len) {
		fprintf(stderr, "  %s: fixture does not build\n", c->what);
		return 1;
	}
	if (c->mangle)
		c->mangle(in, &len, &lay);
	if (c->out && c->out_len != c->in_len) {
		fprintf(stderr, "  %s: fixture error: output %zu bytes, input %zu\n", c->what,
			c->out_len, c->in_len);
		return 1;
	}
	if (c->out) {
		wlen = pb_build(&c->spec, c->out, c->out_len, want, &lay2);
	} else {
		memcpy(want, in, len);
		wlen = len;
	}
	bad += ref_agrees(c);
	delta.packets = 1;
	/* Output checksums are followed into the tunnels the config names. */
	pt_tun_ports(h->tunnels, HS_MAX_TUNNEL_PORTS, &tp);

	for (hook = 0; hook < TH_HOOKS; hook++) {
		const char *hn = th_hook_name[hook];
		__u32 glen = 0, ret = 0;
		int rc;

		if (!(hooks & (1u << hook)))
			continue;
		if (th_counters(h, &before) || th_hits(h, hb, PT_HIT_SLOTS)) {
			fprintf(stderr, "  [%s] %s: cannot read the counters\n", hn, c->what);
			return bad + 1;
		}
		rc = th_run(h, hook, in, (__u32)len, got, sizeof(got), &glen, &ret);
		if (rc) {
			fprintf(stderr, "  [%s] %s: test_run failed: %s\n", hn, c->what,
				strerror(-rc));
			bad++;
			continue;
		}
		if (ret != want_ret(hook, c->verdict)) {
			fprintf(stderr, "  [%s] %s: returned %d, expected %d\n", hn, c->what,
				(int)ret, (int)want_ret(hook, c->verdict));
			bad++;
		}
		if (c->verdict == PV_PASS) {
			if (pt_same_bytes(got, glen, want, wlen, c->mangle ? 0 : lay.tcp_check_off,
					  why, sizeof(why))) {
				fprintf(stderr, "  [%s] %s: %s\n", hn, c->what, why);
				bad++;
			}
			if (!c->mangle && pb_check_frame_ports(got, glen, !c->spec.no_l2, &tp, why,
							       sizeof(why)) < 0) {
				fprintf(stderr, "  [%s] %s: checksum: %s\n", hn, c->what, why);
				bad++;
			}
		}
		th_counters(h, &after);
		th_hits(h, ha, PT_HIT_SLOTS);
		bad += pt_diff_counters(c->what, hn, &delta, &before, &after);
		for (s = 0; s < PT_HIT_SLOTS; s++) {
			if (ha[s] - hb[s] == c->hits[s])
				continue;
			fprintf(stderr, "  [%s] %s: header_hits[%d] moved by %llu, expected %u\n",
				hn, c->what, s, (unsigned long long)(ha[s] - hb[s]), c->hits[s]);
			bad++;
		}
	}
	return bad;
}

int pt_check_table(struct th *h, const struct pt_case *tab, size_t n, unsigned int hooks)
{
	size_t i;
	int failed = 0;

	for (i = 0; i < n; i++)
		if (pt_check(h, &tab[i], hooks)) {
			fprintf(stderr, "FAIL %s: %s\n", h->label, tab[i].what);
			failed++;
		}
	return failed;
}
