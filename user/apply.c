// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Putting a compiled list into a device's maps: the idle trie slot is
 * written first, then one write of the config flips packets over to it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "apply.h"
#include "log.h"
#include "opts.h"
#include "compile.h"
#include "slots.h"
#include "target.h"
#include <hdrstrip/events.h>
#include <hdrstrip/flow.h>

/*
 * A packet reads the active slot once and may still be scanning with it
 * for a few microseconds after a flip. The next update rewrites that slot,
 * so it waits until this long after the previous flip: far more than any
 * program run, and short next to how often lists change.
 */
#define HS_FLIP_GRACE_NS (20 * 1000 * 1000ULL)

static __u64 now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A port number: 1 to 5 digits, 1..65535; the bytes after it in *end. */
static int port_number(const char *s, const char **end, unsigned long *out)
{
	unsigned long v = 0;
	const char *p = s;

	while (*p >= '0' && *p <= '9' && p - s < 5)
		v = v * 10 + (unsigned long)(*p++ - '0');
	if (p == s || (*p >= '0' && *p <= '9') || v < 1 || v > 65535)
		return -EINVAL;
	*end = p;
	*out = v;
	return 0;
}

/* Items are N or N-M, separated by single commas: no empty item, no sign,
 * no blank ("80," or "+80" is a typo, not a list). */
int ports_parse(const char *s, __u64 *bitmap)
{
	const char *p = s;

	memset(bitmap, 0, HS_PORT_WORDS * sizeof(__u64));
	for (;;) {
		unsigned long lo, hi;

		if (port_number(p, &p, &lo))
			return -EINVAL;
		hi = lo;
		if (*p == '-' && port_number(p + 1, &p, &hi))
			return -EINVAL;
		if (lo > hi)
			return -EINVAL;
		for (unsigned long q = lo; q <= hi; q++)
			bitmap[q / 64] |= 1ULL << (q % 64);
		if (!*p)
			return 0;
		if (*p++ != ',')
			return -EINVAL;
	}
}

static int port_set(const __u64 *bitmap, int p)
{
	return bitmap[p / 64] >> (p % 64) & 1;
}

int ports_next_run(const __u64 *bitmap, int from, int *first, int *last)
{
	int p = from < 1 ? 1 : from;

	while (p < 65536 && !port_set(bitmap, p))
		p++;
	if (p >= 65536)
		return 0;
	*first = p;
	while (p + 1 < 65536 && port_set(bitmap, p + 1))
		p++;
	*last = p;
	return 1;
}

void ports_format(const __u64 *bitmap, char *buf, size_t size)
{
	size_t o = 0;
	int p, q, from = 1;

	buf[0] = 0;
	while (o + 16 < size && ports_next_run(bitmap, from, &p, &q)) {
		o += snprintf(buf + o, size - o, "%s%d", o ? "," : "", p);
		if (q > p)
			o += snprintf(buf + o, size - o, "-%d", q);
		from = q + 1;
	}
}

/* The config of fresh maps, before what the command asks: the defaults
 * attach's --help names. */
/* Each CPU's share of @rate events a second (its token bucket's), rounded
 * up: the whole device never sends more than @rate plus a CPU or two. */
static __u32 event_cpu_rate(__u32 rate)
{
	int n = libbpf_num_possible_cpus();

	if (!rate)
		return 0;
	if (n <= 0)
		n = 1;
	return (rate + (__u32)n - 1) / (__u32)n;
}

static void config_defaults(struct hs_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	ports_parse("80", cfg->ports);
	cfg->on_error = HS_POLICY_DROP;
	cfg->untracked = HS_POLICY_SCAN;
	cfg->urgent = HS_URGENT_CLEAR;
	cfg->flows = HS_FLOWS_DEFAULT;
	cfg->event_rate = HS_EVENT_RATE_DEFAULT;
	hs_tunnels_default(cfg->tunnels);
	cfg->nat = HS_NAT_LOOKUP;
}

int tunnels_merge(struct hs_config *cfg, const struct tunnel_ports *t)
{
	struct hs_tunnel_port out[HS_MAX_TUNNEL_PORTS];
	int n = 0, i, k;

	memset(out, 0, sizeof(out));
	for (k = 0; k < HS_TUN_MAX; k++) {
		if (t && t->given[k]) {
			for (i = 0; i < t->n[k]; i++) {
				if (n == HS_MAX_TUNNEL_PORTS)
					return -E2BIG;
				out[n++] = (struct hs_tunnel_port){ .port = t->port[k][i],
								    .kind = (__u8)k };
			}
			continue;
		}
		for (i = 0; i < HS_MAX_TUNNEL_PORTS && cfg->tunnels[i].port; i++) {
			if (cfg->tunnels[i].kind != k)
				continue;
			if (n == HS_MAX_TUNNEL_PORTS)
				return -E2BIG;
			out[n++] = cfg->tunnels[i];
		}
	}
	memcpy(cfg->tunnels, out, sizeof(out));
	return 0;
}

int tunnels_found(struct hs_config *cfg)
{
	struct hs_encap_sock enc[HS_MAX_TUNNEL_PORTS * 4];
	int n = udp_encap_ports(enc, (int)HS_ARRAY_SIZE(enc)), k = 0, i, j;

	/* The last look's entries go; this one's come. */
	for (i = 0; i < HS_MAX_TUNNEL_PORTS && cfg->tunnels[i].port; i++)
		if (!(cfg->tunnels[i].flags & HS_TP_FOUND))
			cfg->tunnels[k++] = cfg->tunnels[i];
	for (i = k; i < HS_MAX_TUNNEL_PORTS; i++)
		cfg->tunnels[i] = (struct hs_tunnel_port){ 0 };
	if (n < 0) {
		/* No iterator over UDP sockets: as many as sit on the table's
		 * ports; unreadable, as if every one did. */
		n = tunnels_bound(cfg->tunnels);
		cfg->udp_tunnels = (__u8)(n < 0 ? HS_MAX_TUNNEL_PORTS : n);
		return 0;
	}
	/* A UDP fragment passes only while no socket here takes packets out
	 * of UDP (bpf/hdrstrip.bpf.c, fragment()). */
	cfg->udp_tunnels = (__u8)(n < 255 ? n : 255);
	for (i = 0; i < n; i++) {
		for (j = 0; j < k && cfg->tunnels[j].port != enc[i].port; j++)
			;
		if (j < k)
			continue; /* a VXLAN or GENEVE port, read inside */
		if (k == HS_MAX_TUNNEL_PORTS)
			return -E2BIG;
		cfg->tunnels[k++] = (struct hs_tunnel_port){ .port = enc[i].port,
							     .kind = HS_TUN_OPAQUE,
							     .flags = HS_TP_FOUND };
	}
	return 0;
}

/* Is UDP port @port bound in /proc/net/@file (the current namespace's)?
 * 1, 0, or -errno when the file cannot be read. */
static int udp_bound(const char *file, const struct hs_tunnel_port *table, unsigned char *seen)
{
	char path[64], line[512];
	unsigned int port;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/net/%s", file);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* "  sl  local_address ...": "N: ADDR:PORT ..." in hex. */
		char *colon = strchr(line, ':');

		if (!colon || !(colon = strchr(colon + 1, ':')) ||
		    sscanf(colon + 1, "%x", &port) != 1)
			continue;
		for (int i = 0; i < HS_MAX_TUNNEL_PORTS && table[i].port; i++)
			if (table[i].port == port)
				seen[i] = 1;
	}
	fclose(f);
	return 0;
}

int tunnels_bound(const struct hs_tunnel_port *table)
{
	unsigned char seen[HS_MAX_TUNNEL_PORTS] = { 0 };
	int r4 = udp_bound("udp", table, seen), r6 = udp_bound("udp6", table, seen), n = 0;

	if (r4 && r6)
		return r4;
	for (int i = 0; i < HS_MAX_TUNNEL_PORTS; i++)
		n += seen[i];
	return n;
}

/* Proxy mode takes lines out of requests only: a list's response rules do
 * nothing there, which the operator is told (the list still applies). */

int apply_prepare(const struct dev *d, const struct dev_maps *m, const struct hs_list *l,
		  struct hs_trie *t, const struct apply_opts *o, struct hs_config *next)
{
	unsigned char fresh[HS_MAX_HIT_SLOTS];
	__u32 reset[HS_MAX_HIT_SLOTS], n_reset = 0;
	struct hs_slots *old = NULL;
	struct hs_config cfg;
	struct hs_err err;
	__u32 idle;
	__u64 now;
	int r;

	r = config_read(m, &cfg);
	if (r)
		return r;
	/*
	 * The old list's names and slots come out of @t, then the new list is
	 * compiled into it: the kernel copies the old block out and the new
	 * one in through the same pages. A first touch of a page costs several
	 * microseconds on virtual machines, and a second 213 KiB block about
	 * 1 ms an update.
	 */
	if (!o->first && !trie_read_slot(m, cfg.active_slot & 1, t)) {
		r = hs_slots_read(t, &old);
		if (r)
			return r;
	}
	r = hs_compile(l, t, NULL, &err);
	if (!r)
		r = hs_assign_slots(old, t, fresh);
	hs_slots_free(old);
	if (r)
		return r;
	/* Slots no name of the active list uses: zeroing them changes no
	 * counter packets see until the flip. */
	for (__u32 s = 0; s < HS_MAX_HIT_SLOTS; s++)
		if (fresh[s])
			reset[n_reset++] = s;
	r = hits_reset(m, reset, n_reset);
	if (r)
		return r;

	idle = o->first ? 0 : !(cfg.active_slot & 1);
	now = now_ns(CLOCK_MONOTONIC);
	if (!o->first && cfg.flipped_ns && now < cfg.flipped_ns + HS_FLIP_GRACE_NS) {
		__u64 wait = cfg.flipped_ns + HS_FLIP_GRACE_NS - now;
		struct timespec ts = { .tv_sec = wait / 1000000000ULL,
				       .tv_nsec = wait % 1000000000ULL };

		nanosleep(&ts, NULL);
	}
	t->generation = cfg.generation + 1;
	/* The idle slot: packets read the active one until the flip. */
	r = trie_write_slot(m, idle, t);
	if (r)
		return r;

	if (o->first)
		config_defaults(&cfg);
	cfg.active_slot = idle;
	cfg.generation++;
	cfg.builtin = hs_list_builtin(l);
	cfg.n_names = t->n_rules - cfg.builtin;
	cfg.ifindex = d->ifindex;
	cfg.netns_ino = d->netns_ino;
	snprintf(cfg.ifname, sizeof(cfg.ifname), "%.*s", (int)sizeof(cfg.ifname) - 1, d->name);
	if (o->list_path) {
		char *abs = realpath(o->list_path, NULL);

		snprintf(cfg.list_path, sizeof(cfg.list_path), "%s", abs ? abs : o->list_path);
		free(abs);
	}
	cfg.updated_ns = now_ns(CLOCK_REALTIME);
	if (o->ports)
		memcpy(cfg.ports, o->ports, sizeof(cfg.ports));
	if (o->on_error >= 0)
		cfg.on_error = o->on_error;
	if (o->untracked >= 0)
		cfg.untracked = o->untracked;
	if (o->urgent >= 0)
		cfg.urgent = o->urgent;
	if (o->flows)
		cfg.flows = o->flows;
	if (o->qdisc_created >= 0)
		cfg.qdisc_created = o->qdisc_created;
	if (o->observe >= 0)
		cfg.observe = (__u8)o->observe;
	if (o->event_rate >= 0)
		cfg.event_rate = (__u32)o->event_rate;
	cfg.event_cpu_rate = event_cpu_rate(cfg.event_rate);
	if (o->nat >= 0)
		cfg.nat = (__u8)o->nat;
	if (tunnels_merge(&cfg, o->tunnels)) {
		pr_err("%s: more than %d UDP tunnel ports in all (--vxlan-ports, --geneve-ports and "
		       "--udp-tunnel-ports together)",
		       d->name, HS_MAX_TUNNEL_PORTS);
		return -EINVAL;
	}
	if (!d->cgroup) {
		r = tunnels_found(&cfg);
		if (r == -E2BIG) {
			pr_err("%s: the sockets of this namespace take packets out of more UDP ports "
			       "than the tunnel table holds (%d in all, --vxlan-ports, --geneve-ports "
			       "and --udp-tunnel-ports included)",
			       d->name, HS_MAX_TUNNEL_PORTS);
			return -EINVAL;
		}
	}
	*next = cfg;
	return 0;
}

int apply_commit(const struct dev_maps *m, struct hs_config *next)
{
	/* The flip: one map write. */
	next->updated_ns = now_ns(CLOCK_REALTIME);
	next->flipped_ns = now_ns(CLOCK_MONOTONIC);
	return config_write(m, next);
}

int apply_list(const struct dev *d, const struct dev_maps *m, const struct hs_list *l,
	       struct hs_trie *t, const struct apply_opts *o)
{
	struct hs_config next;
	int r = apply_prepare(d, m, l, t, o, &next);

	return r ? r : apply_commit(m, &next);
}

struct tun_check {
	const struct hs_config *cfg;
	void (*say)(void *arg, const char *msg);
	void *arg;
	unsigned char told[HS_MAX_TUNNEL_PORTS]; /* entries a device's message covered */
};

/* The table's entry for UDP port @port, or -1. */
static int tunnel_entry(const struct hs_config *cfg, int port)
{
	for (int i = 0; i < HS_MAX_TUNNEL_PORTS && cfg->tunnels[i].port; i++)
		if (cfg->tunnels[i].port == port)
			return i;
	return -1;
}

/* A tunnel device of this namespace the hooks will not read inside:
 * said. */
static void tunnel_dev_check(const char *name, const char *kind, int udp_port, void *arg)
{
	static const char *const sealed[] = { "wireguard", "xfrm",    "vti", "vti6",
					      "macsec",	   "bareudp", "gtp", "pptp" };
	struct tun_check *c = arg;
	char msg[512];
	int want = !strcmp(kind, "vxlan")    ? HS_TUN_VXLAN
		   : !strcmp(kind, "geneve") ? HS_TUN_GENEVE
					     : -1;
	int e;

	if (want >= 0) {
		e = tunnel_entry(c->cfg, udp_port);
		if (e >= 0 && c->cfg->tunnels[e].kind == want)
			return;
		if (e >= 0)
			c->told[e] = 1;
		snprintf(
			msg, sizeof(msg),
			"%s (%s) takes packets out of UDP port %d, which is not among the %s ports: "
			"%s; add the port (--%s-ports) to read them",
			name, kind, udp_port, kind,
			e >= 0 || udp_encap_lookup_present()
				? "they go to the --on-error policy"
				: "they pass as plain UDP, unread (this kernel has no bpf_rdonly_cast "
				  "for the hooks to tell a tunnel's socket)",
			kind);
		c->say(c->arg, msg);
		return;
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(sealed); i++)
		if (!strcmp(kind, sealed[i])) {
			snprintf(
				msg, sizeof(msg),
				"%s (%s) decrypts or unwraps what it receives after the hooks, in a "
				"form hdrstrip cannot read (its UDP packets go to the --on-error "
				"policy): attach to %s itself, or strip at the origin's sockets "
				"(attach --cgroup PATH --receive)",
				name, kind, name);
			c->say(c->arg, msg);
			return;
		}
}

int tunnels_check(const struct hs_config *cfg, void (*say)(void *arg, const char *msg), void *arg)
{
	struct tun_check c = { .cfg = cfg, .say = say, .arg = arg };
	int r = tunnel_devs(tunnel_dev_check, &c);
	char msg[400];

	for (int i = 0; i < HS_MAX_TUNNEL_PORTS && cfg->tunnels[i].port; i++) {
		if (!(cfg->tunnels[i].flags & HS_TP_FOUND) || c.told[i])
			continue;
		snprintf(
			msg, sizeof(msg),
			"UDP port %u: a socket of this namespace takes packets out of it, in a form "
			"hdrstrip cannot read (FOU, GUE, L2TP, ESP in UDP, ...): they go to the "
			"--on-error policy (%s)",
			cfg->tunnels[i].port, hs_policy_name(cfg->on_error));
		say(arg, msg);
	}
	return r;
}

void tunnels_format(const struct hs_tunnel_port *table, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = 0;
	for (int k = 0; k < HS_TUN_MAX; k++) {
		const char *sep = o ? "; " : "";

		for (int i = 0; i < HS_MAX_TUNNEL_PORTS && table[i].port && o + 24 < size; i++) {
			if (table[i].kind != k)
				continue;
			o += snprintf(buf + o, size - o, "%s%s%s%u", sep,
				      *sep == ',' ? "" : hs_tunnel_name(k), *sep == ',' ? "" : " ",
				      table[i].port);
			sep = ",";
		}
	}
	if (!o)
		snprintf(buf, size, "none");
}
