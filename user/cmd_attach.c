// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* 'hdrstrip attach', 'update' and 'detach'. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xdp/libxdp.h>

#include "apply.h"
#include "cli.h"
#include "compile.h"
#include "loader.h"
#include <hdrstrip/flow.h>

struct attach_cmd {
	const char *dev;
	const char *cgroup; /* proxy mode */
	const char *headers;
	int hook;
	int xdp_mode;
	int ports_set;
	__u64 ports[HS_PORT_WORDS];
	int on_error;
	int untracked; /* enum hs_policy, -1: keep */
	int urgent; /* enum hs_urgent, -1: keep */
	__u32 flows; /* 0: default */
	struct hs_list_opts list;
};

static const char attach_usage[] =
	"Usage: hdrstrip attach DEV --headers FILE [--hook xdp|tc-ingress|tc-egress]\n"
	"                       [--xdp-mode native|skb] [--ports 80,8080] [--on-error drop|pass]\n"
	"                       [--untracked scan|pass|drop] [--urgent clear|drop] [--flows N]\n"
	"       hdrstrip attach --cgroup PATH --headers FILE [--ports LIST] [--on-error drop|pass]\n"
	"\n"
	"Compile the header list and attach hdrstrip to DEV. Several hooks may be attached\n"
	"to one DEV; they share its list, ports, policy and counters.\n"
	"\n"
	"  --headers FILE        the header list (see hdrstrip(8) for the format)\n"
	"  --hook HOOK           xdp (default: ingress, earliest), tc-ingress, or tc-egress\n"
	"                        (requests leaving DEV, e.g. a proxy's upstream side)\n"
	"  --xdp-mode MODE       native (default; falls back to skb if the driver lacks it) or skb\n"
	"  --ports LIST          TCP destination ports to inspect: 80,8080,9000-9010 (default 80)\n"
	"  --on-error POLICY     what to do with a request that cannot be fully inspected\n"
	"                        (ambiguous framing, a gap in its headers, too long to scan):\n"
	"                        drop (default) or pass (then scanned line by line)\n"
	"  --untracked POLICY    segments of connections without state (older than the attach,\n"
	"                        or evicted) that do not start a request: scan (default: mask\n"
	"                        every line that looks like an internal field), pass or drop\n"
	"  --urgent POLICY       segments with urgent data (URG), whose urgent byte a receiver\n"
	"                        takes out of the stream: clear (default: clear URG and the\n"
	"                        urgent pointer, so the byte stays where it was scanned) or drop\n"
	"  --flows N             connections tracked per hook (16..1048576, default 32768; each\n"
	"                        takes about 928 bytes of kernel memory, taken at attach)\n"
	"  --cgroup PATH         proxy mode: instead of DEV and --hook, remove internal lines\n"
	"                        from what the processes of cgroup v2 directory PATH send\n"
	"  --no-fold-underscore  '_' and '-' are different bytes (overrides the list)\n";

static const char update_usage[] =
	"Usage: hdrstrip update DEV|--cgroup PATH --headers FILE [--ports LIST] [--on-error drop|pass]\n"
	"                       [--untracked scan|pass|drop] [--urgent clear|drop]\n"
	"\n"
	"Replace DEV's header list while attached. The new list is compiled first: a bad\n"
	"list changes nothing. It is written to the idle trie slot, then one map write\n"
	"switches every hook of DEV over; no packet sees half of two lists.\n";

static const char detach_usage[] =
	"Usage: hdrstrip detach DEV [--hook xdp|tc-ingress|tc-egress]\n"
	"       hdrstrip detach --cgroup PATH\n"
	"\n"
	"Detach hdrstrip from DEV (every hook, or the one given) and, when no hook is left,\n"
	"remove its pins and any clsact qdisc hdrstrip created.\n";

enum {
	OPT_HEADERS = 256,
	OPT_HOOK,
	OPT_XDP_MODE,
	OPT_PORTS,
	OPT_ON_ERROR,
	OPT_UNTRACKED,
	OPT_URGENT,
	OPT_FLOWS,
	OPT_CGROUP,
	OPT_NOFOLD
};

static const struct option attach_lopts[] = {
	{ "headers", required_argument, NULL, OPT_HEADERS },
	{ "hook", required_argument, NULL, OPT_HOOK },
	{ "xdp-mode", required_argument, NULL, OPT_XDP_MODE },
	{ "ports", required_argument, NULL, OPT_PORTS },
	{ "on-error", required_argument, NULL, OPT_ON_ERROR },
	{ "untracked", required_argument, NULL, OPT_UNTRACKED },
	{ "urgent", required_argument, NULL, OPT_URGENT },
	{ "flows", required_argument, NULL, OPT_FLOWS },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "no-fold-underscore", no_argument, NULL, OPT_NOFOLD },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static void warn_cb(const char *msg)
{
	pr_warn("%s", msg);
}

/* The options each command takes (bits of 1 << (OPT_x - OPT_HEADERS)):
 * one given to a command it does not apply to is an error, never ignored
 * (update --hook tc-egress once changed every hook's list). */
#define OPT_BIT(o) (1u << ((o)-OPT_HEADERS))
#define ATTACH_OPTS (~0u)
#define UPDATE_OPTS                                                                                \
	(OPT_BIT(OPT_HEADERS) | OPT_BIT(OPT_PORTS) | OPT_BIT(OPT_ON_ERROR) |                       \
	 OPT_BIT(OPT_UNTRACKED) | OPT_BIT(OPT_URGENT) | OPT_BIT(OPT_CGROUP) | OPT_BIT(OPT_NOFOLD))
#define DETACH_OPTS (OPT_BIT(OPT_HOOK) | OPT_BIT(OPT_CGROUP))

static const char *opt_name(int c)
{
	for (const struct option *lo = attach_lopts; lo->name; lo++)
		if (lo->val == c)
			return lo->name;
	return "?";
}

/* Why an option does not apply to @cmd, for the message. */
static const char *not_applicable_why(const char *cmd, int c)
{
	if (!strcmp(cmd, "update") && (c == OPT_HOOK || c == OPT_XDP_MODE || c == OPT_FLOWS))
		return "update changes the list and settings every hook of DEV shares; to change a "
		       "hook itself, detach it and attach it again";
	if (!strcmp(cmd, "detach"))
		return "detach takes DEV (and --hook) or --cgroup PATH only";
	return "see --help";
}

/* The largest --flows: each entry is preallocated (an LRU hash), so the
 * table's memory is taken at attach, per hook. */
#define HS_FLOWS_MAX (1u << 20)
/* Bytes of kernel memory a flow entry takes: its value and key, and the
 * LRU hash's element header (64 bytes on 64-bit kernels). 928 bytes
 * (BENCHMARKS.md, "memory"). */
#define HS_FLOW_ENTRY_BYTES (sizeof(struct hs_flow) + sizeof(struct hs_flow_key) + 64)

/* MemAvailable from /proc/meminfo, in bytes; 0 if unknown. */
static unsigned long long mem_available(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/* --flows N: a count in 16..HS_FLOWS_MAX, whose table fits in half the
 * memory available. Returns -1, or the exit code after the message. */
static int parse_flows(const char *arg, const char *cmd, __u32 *out)
{
	unsigned long long cost, avail;
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || arg[0] < '0' || arg[0] > '9' || n < 16 ||
	    n > HS_FLOWS_MAX) {
		pr_err("%s: bad --flows '%s' (a count of connections, 16..%u; each takes about %zu "
		       "bytes of kernel memory per hook)",
		       cmd, arg, HS_FLOWS_MAX, HS_FLOW_ENTRY_BYTES);
		return EXIT_USAGE;
	}
	cost = (unsigned long long)n * HS_FLOW_ENTRY_BYTES;
	avail = mem_available();
	if (avail && cost > avail / 2) {
		pr_err("%s: --flows %lu would take %llu MiB of kernel memory for this hook, more than "
		       "half of what is available (%llu MiB); choose a smaller --flows",
		       cmd, n, cost >> 20, avail >> 20);
		return EXIT_USAGE;
	}
	*out = n;
	return -1;
}

/* Parse the options shared by attach/update/detach; returns -1 on success,
 * else the exit code to return. */
static int parse_opts(int argc, char **argv, struct attach_cmd *o, const char *usage,
		      const char *cmd, unsigned int allowed)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->hook = -1;
	o->xdp_mode = XDP_MODE_NATIVE;
	o->on_error = -1;
	o->untracked = -1;
	o->urgent = -1;
	hs_list_opts_default(&o->list);
	o->list.warn = warn_cb;
	while ((c = getopt_long(argc, argv, "h", attach_lopts, NULL)) != -1) {
		if (c >= OPT_HEADERS && !(allowed & OPT_BIT(c))) {
			pr_err("%s: --%s does not apply (%s)", cmd, opt_name(c),
			       not_applicable_why(cmd, c));
			return usage_out(usage, 0);
		}
		switch (c) {
		case OPT_HEADERS:
			o->headers = optarg;
			break;
		case OPT_HOOK:
			o->hook = hook_parse(optarg);
			if (o->hook < 0) {
				pr_err("%s: unknown hook '%s' (expected xdp, tc-ingress or tc-egress)",
				       cmd, optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_XDP_MODE:
			if (!strcmp(optarg, "native")) {
				o->xdp_mode = XDP_MODE_NATIVE;
			} else if (!strcmp(optarg, "skb")) {
				o->xdp_mode = XDP_MODE_SKB;
			} else {
				pr_err("%s: unknown XDP mode '%s' (expected native or skb)", cmd,
				       optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_PORTS:
			if (ports_parse(optarg, o->ports)) {
				pr_err("%s: bad port list '%s' (expected e.g. 80,8080,9000-9010; ports 1-65535)",
				       cmd, optarg);
				return EXIT_USAGE;
			}
			o->ports_set = 1;
			break;
		case OPT_ON_ERROR:
			if (!strcmp(optarg, "drop")) {
				o->on_error = HS_POLICY_DROP;
			} else if (!strcmp(optarg, "pass")) {
				o->on_error = HS_POLICY_PASS;
			} else {
				pr_err("%s: unknown policy '%s' (expected drop or pass)", cmd,
				       optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_UNTRACKED:
			if (!strcmp(optarg, "scan")) {
				o->untracked = HS_POLICY_SCAN;
			} else if (!strcmp(optarg, "pass")) {
				o->untracked = HS_POLICY_PASS;
			} else if (!strcmp(optarg, "drop")) {
				o->untracked = HS_POLICY_DROP;
			} else {
				pr_err("%s: unknown policy '%s' for --untracked (expected scan, pass or drop)",
				       cmd, optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_URGENT:
			if (!strcmp(optarg, "clear")) {
				o->urgent = HS_URGENT_CLEAR;
			} else if (!strcmp(optarg, "drop")) {
				o->urgent = HS_URGENT_DROP;
			} else {
				pr_err("%s: unknown policy '%s' for --urgent (expected clear or drop)",
				       cmd, optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_FLOWS: {
			int rc = parse_flows(optarg, cmd, &o->flows);

			if (rc >= 0)
				return rc;
			break;
		}
		case OPT_NOFOLD:
			o->list.fold_underscore = 0;
			break;
		case OPT_CGROUP:
			o->cgroup = optarg;
			break;
		case 'h':
			return usage_out(usage, 1);
		default:
			return usage_out(usage, 0);
		}
	}
	if (o->cgroup) {
		if (optind != argc || o->hook >= 0) {
			pr_err("%s: --cgroup PATH takes the place of DEV and --hook", cmd);
			return usage_out(usage, 0);
		}
		o->hook = HOOK_CGROUP;
		return -1;
	}
	if (optind != argc - 1) {
		pr_err("%s: %s", cmd,
		       optind >= argc ? "give the device (DEV), or --cgroup PATH"
				      : "more than one device given");
		return usage_out(usage, 0);
	}
	o->dev = argv[optind];
	return -1;
}

/* Data sent in a SYN (TCP Fast Open) leaves before sockops may put the
 * connection into the sockhash: say so when clients may use it here. */
static void warn_fastopen(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_fastopen", "r");
	int v = 0;

	if (!f)
		return;
	if (fscanf(f, "%d", &v) == 1 && (v & 1))
		pr_warn("TCP Fast Open is on for clients (net.ipv4.tcp_fastopen=%d): a request a "
			"process sends in its SYN is not filtered; set net.ipv4.tcp_fastopen=%d to "
			"turn it off",
			v, v & ~1);
	fclose(f);
}

/* Resolve a cgroup directory, printing the error. */
static int resolve_cgroup(const char *path, struct dev *d)
{
	int r = cgroup_resolve(path, d);

	if (r == -EMEDIUMTYPE) {
		pr_err("'%s' is not a cgroup v2 directory; the cgroup2 hierarchy is where /proc/mounts "
		       "shows type cgroup2 (e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified)",
		       path);
		return EXIT_USAGE;
	}
	if (r) {
		pr_err("cannot open cgroup '%s': %s", path, strerror(-r));
		return r == -ENOENT || r == -ENOTDIR ? EXIT_USAGE : EXIT_FAIL;
	}
	return -1;
}

/* Resolve DEV, printing the error. Returns an exit code or -1. */
static int resolve(const char *name, struct dev *d)
{
	int r = dev_resolve(name, d);

	if (r == -EINVAL) {
		pr_err("'%s' is not a valid interface name", name);
		return EXIT_USAGE;
	}
	if (r) {
		struct stat st;
		unsigned long long ino = stat("/proc/self/ns/net", &st) ? 0 : st.st_ino;

		if (g_opts.netns)
			pr_err("no interface '%s' in network namespace '%s'; see 'ip -n %s link show'",
			       name, g_opts.netns, g_opts.netns);
		else
			pr_err("no interface '%s' in this network namespace (net:[%llu]); see 'ip link "
			       "show', or use 'hdrstrip -n NETNS ...' for one in another namespace",
			       name, ino);
		return EXIT_USAGE;
	}
	return -1;
}

static void netns_str(__u64 ino, char *buf, size_t size)
{
	snprintf(buf, size, "net:[%llu]", (unsigned long long)ino);
}

/*
 * Pins left under DEV's directory: reuse them when they are this device's
 * live state, clear them when nothing uses them (an interrupted attach, a
 * deleted namespace), refuse when they are another namespace's live state.
 * Returns 1 if @m holds live maps to share, 0 if there are none, or an
 * exit code (> 1) after printing the error.
 */
static int check_pins(const struct dev *d, struct dev_maps *m)
{
	struct hs_config cfg;
	char a[40], b[40];

	if (pins_open(d, m))
		return 0;
	if (config_read(m, &cfg)) {
		dev_maps_close(m);
		pins_remove(d);
		return 0;
	}
	if (!map_in_use(m->config)) {
		pr_info("removing stale pins in %s (nothing uses them)", d->pin_dir);
		/* ... and the qdisc an interrupted attach on this device made. */
		if (cfg.qdisc_created && d->cgroup_fd < 0 && cfg.ifindex == (__u32)d->ifindex &&
		    cfg.netns_ino == d->netns_ino)
			tc_qdisc_release(d);
		dev_maps_close(m);
		pins_remove(d);
		return 0;
	}
	if (cfg.ifindex != (__u32)d->ifindex || cfg.netns_ino != d->netns_ino) {
		netns_str(cfg.netns_ino, a, sizeof(a));
		netns_str(d->netns_ino, b, sizeof(b));
		pr_err("%s belongs to '%s' (ifindex %u) in network namespace %s, where hdrstrip is "
		       "attached; this '%s' is ifindex %d in %s. Pins are named by interface, so "
		       "the two would share maps: detach the other one first (hdrstrip -n NETNS "
		       "detach %s), or rename one interface",
		       d->pin_dir, cfg.ifname, cfg.ifindex, a, d->name, d->ifindex, b, cfg.ifname);
		dev_maps_close(m);
		return EXIT_FAIL;
	}
	return 1;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_cmd o;
	struct attach_opts ao;
	struct apply_opts ap = { .qdisc_created = -1, .untracked = -1, .urgent = -1 };
	struct hs_config saved;
	struct dev_state st;
	struct dev_maps m;
	struct pin_lock lk = { .fd = -1 };
	struct hs_list l = { 0 };
	struct hs_trie *t = NULL;
	struct dev d;
	int r, rc, shared, created = 0, mode, legacy, qcreated;

	rc = parse_opts(argc, argv, &o, attach_usage, "attach", ATTACH_OPTS);
	if (rc >= 0)
		return rc;
	if (o.hook < 0)
		o.hook = HOOK_XDP;
	if (!o.headers) {
		pr_err("attach: --headers FILE is required");
		return usage_out(attach_usage, 0);
	}
	if (require_root("attach"))
		return EXIT_FAIL;
	/* A bad list changes nothing: it is read before anything is touched
	 * (and compiled by apply_list(), before any map write). */
	rc = load_list(o.headers, &o.list, &l);
	if (rc)
		return rc;
	t = trie_alloc();
	if (!t) {
		hs_list_free(&l);
		return EXIT_FAIL;
	}
	dev_maps_init(&m);
	rc = o.cgroup ? resolve_cgroup(o.cgroup, &d) : resolve(o.dev, &d);
	if (rc >= 0)
		goto out;
	rc = EXIT_FAIL;
	r = bpffs_ensure(1);
	if (r) {
		pr_err("cannot mount bpffs at %s: %s (%d); mount it with 'mount -t bpf bpf %s'",
		       HS_BPFFS, errstr(r), r, HS_BPFFS);
		goto out;
	}
	r = pin_lock(&d, &lk);
	if (r) {
		pr_err("cannot create or lock %s: %s (%d)", d.pin_dir, errstr(r), r);
		goto out;
	}
	r = dev_query(&d, &st);
	if (r) {
		pr_err("cannot query the hooks of '%s': %s (%d)", d.name, errstr(r), r);
		goto out;
	}
	if (st.prog_id[o.hook] && o.cgroup) {
		pr_err("cgroup '%s' already has hdrstrip attached (program id %u); use 'hdrstrip "
		       "update --cgroup %s --headers FILE' to change its list, or 'hdrstrip detach "
		       "--cgroup %s' first",
		       d.cgroup_path, st.prog_id[o.hook], d.cgroup_path, d.cgroup_path);
		goto out;
	}
	if (st.prog_id[o.hook]) {
		pr_err("%s on '%s' is already attached (program id %u); use 'hdrstrip update %s "
		       "--headers FILE' to change its list, or 'hdrstrip detach %s --hook %s' first",
		       hook_names[o.hook], d.name, st.prog_id[o.hook], d.name, d.name,
		       hook_names[o.hook]);
		goto out;
	}
	shared = check_pins(&d, &m);
	if (shared > 1) {
		rc = shared;
		goto out;
	}
	if (!shared) {
		r = maps_create_pinned(&d);
		if (r) {
			pr_err("cannot create hdrstrip's maps for '%s' in %s: %s (%d)", d.name,
			       d.pin_dir, errstr(r), r);
			pins_remove(&d);
			goto out;
		}
		created = 1;
		r = pins_open(&d, &m);
		if (r) {
			pr_err("cannot open the maps pinned in %s: %s (%d)", d.pin_dir, errstr(r),
			       r);
			goto out;
		}
	} else if (config_read(&m, &saved)) {
		pr_err("cannot read the config of '%s': %s (%d)", d.name, errstr(-errno), -errno);
		goto out;
	}
	ap.first = created;
	ap.list_path = o.headers;
	ap.on_error = o.on_error >= 0 ? o.on_error : created ? HS_POLICY_DROP : -1;
	ap.untracked = o.untracked >= 0 ? o.untracked : created ? HS_POLICY_SCAN : -1;
	ap.urgent = o.urgent >= 0 ? o.urgent : created ? HS_URGENT_CLEAR : -1;
	if (o.ports_set) {
		ap.ports = o.ports;
	} else if (created) {
		ports_parse("80", o.ports);
		ap.ports = o.ports;
	}
	r = apply_list(&d, &m, &l, t, &ap);
	if (r) {
		pr_err("cannot write the header list into the maps of '%s': %s (%d)", d.name,
		       errstr(r), r);
		goto out;
	}
	if (shared) {
		int settings = o.ports_set || o.on_error >= 0;

		printf("'%s' already has hdrstrip on another hook: the list%s now %s to every hook\n",
		       d.name, settings ? " and settings" : "", settings ? "apply" : "applies");
	}

	ao.hook = o.hook;
	ao.xdp_mode = o.xdp_mode;
	ao.flows = o.flows ? o.flows : HS_FLOWS_DEFAULT;
	mode = legacy = qcreated = 0;
	if ((o.hook == HOOK_TC_INGRESS || o.hook == HOOK_TC_EGRESS) &&
	    !tc_qdisc_exists(d.ifindex)) {
		/* The qdisc is hdrstrip's to remove later: say so before making
		 * it, so a killed attach leaves nothing nobody would remove. */
		struct hs_config cfg;

		if (!config_read(&m, &cfg)) {
			cfg.qdisc_created = 1;
			config_write(&m, &cfg);
		}
	}
	if (o.cgroup) {
		/* Connections already open never pass the sockops program:
		 * say how many there are, as a counter. */
		struct hs_config cfg;

		if (!config_read(&m, &cfg))
			counters_add(&m,
				     __builtin_offsetof(struct hs_counters, conns_preexisting) / 8,
				     count_preexisting(&d, cfg.ports));
		r = proxy_attach(&d);
		if (!r)
			warn_fastopen();
	} else {
		r = hook_attach(&d, &ao, &mode, &legacy, &qcreated);
	}
	if (r) {
		pr_err("cannot attach %s to '%s': %s (%d)%s", hook_names[o.hook], d.name, errstr(r),
		       r,
		       r == -EEXIST || r == -EBUSY
			       ? "; another program holds that hook (see 'bpftool net' / 'xdp-loader status')"
		       : r == -EPERM || r == -EACCES
			       ? "; the verifier may have rejected the program: rerun with -v for its log"
			       : "");
		if (shared)
			config_write(&m, &saved);
		goto out;
	}
	if (qcreated) {
		struct hs_config cfg;

		if (!config_read(&m, &cfg)) {
			cfg.qdisc_created = 1;
			config_write(&m, &cfg);
		}
	}
	if (o.hook == HOOK_XDP && legacy)
		printf("note: libxdp's multi-program dispatcher is not usable on this kernel; "
		       "hdrstrip is attached as the only XDP program on '%s'\n",
		       d.name);
	{
		char ports[256];
		struct hs_config cfg;

		config_read(&m, &cfg);
		ports_format(cfg.ports, ports, sizeof(ports));
		printf("attached %s%s to '%s': %u names from %s, ports %s, on-error %s; maps in %s\n",
		       hook_names[o.hook],
		       o.hook == HOOK_XDP
			       ? (mode == XDP_MODE_SKB ? " (skb mode)" : " (native mode)")
			       : "",
		       d.name, t->n_rules, o.headers, ports,
		       cfg.on_error == HS_POLICY_PASS ? "pass" : "drop", d.pin_dir);
	}
	rc = EXIT_OK;
	created = 0;
out:
	if (created) {
		dev_maps_close(&m);
		pins_remove(&d);
	}
	dev_maps_close(&m);
	pin_unlock(&lk);
	dev_close(&d);
	free(t);
	hs_list_free(&l);
	return rc;
}

int cmd_update(int argc, char **argv)
{
	struct attach_cmd o;
	struct apply_opts ap = { .qdisc_created = -1, .untracked = -1, .urgent = -1 };
	struct dev_state st;
	struct dev_maps m;
	struct pin_lock lk = { .fd = -1 };
	struct hs_list l = { 0 };
	struct hs_trie *t = NULL;
	struct dev d;
	int r, rc;

	rc = parse_opts(argc, argv, &o, update_usage, "update", UPDATE_OPTS);
	if (rc >= 0)
		return rc;
	if (!o.headers) {
		pr_err("update: --headers FILE is required");
		return usage_out(update_usage, 0);
	}
	if (require_root("update"))
		return EXIT_FAIL;
	/* Read the list first: a bad list changes nothing. apply_list()
	 * compiles it before any map write. */
	rc = load_list(o.headers, &o.list, &l);
	if (rc)
		return rc;
	t = trie_alloc();
	if (!t) {
		hs_list_free(&l);
		return EXIT_FAIL;
	}
	dev_maps_init(&m);
	rc = o.cgroup ? resolve_cgroup(o.cgroup, &d) : resolve(o.dev, &d);
	if (rc >= 0)
		goto out;
	rc = EXIT_FAIL;
	if (bpffs_ensure(0) || pin_lock(&d, &lk)) {
		pr_err("cannot lock %s: %s", d.pin_dir, errstr(-errno));
		goto out;
	}
	r = dev_query_any(&d, &st);
	if (r || !dev_attached_hooks(&st)) {
		pr_err("hdrstrip is not attached to '%s'; use 'hdrstrip attach %s --headers FILE'",
		       d.name, d.name);
		goto out;
	}
	r = dev_open_maps_from_kernel(&st, &m);
	if (r) {
		pr_err("cannot find the maps of hdrstrip's program on '%s': %s (%d)", d.name,
		       errstr(r), r);
		goto out;
	}
	ap.list_path = o.headers;
	ap.on_error = o.on_error;
	ap.untracked = o.untracked;
	ap.urgent = o.urgent;
	ap.ports = o.ports_set ? o.ports : NULL;
	r = apply_list(&d, &m, &l, t, &ap);
	if (r) {
		pr_err("cannot update the header list of '%s': %s (%d); the previous list is still "
		       "in use",
		       d.name, errstr(r), r);
		goto out;
	}
	printf("updated '%s': %u names from %s (generation %u)\n", d.name, t->n_rules, o.headers,
	       t->generation);
	rc = EXIT_OK;
out:
	dev_maps_close(&m);
	pin_unlock(&lk);
	dev_close(&d);
	free(t);
	hs_list_free(&l);
	return rc;
}

/* A device that no longer exists may still have pins: clear them if unused. */
static int detach_missing_dev(const char *name)
{
	struct dev d = { 0 };
	struct dev_maps m;

	snprintf(d.name, sizeof(d.name), "%s", name);
	snprintf(d.pin_dir, sizeof(d.pin_dir), "%s/%s", HS_PIN_ROOT, name);
	if (strchr(name, '/') || pins_open(&d, &m))
		return resolve(name, &d);
	if (map_in_use(m.config)) {
		dev_maps_close(&m);
		pr_err("no interface '%s' in this network namespace, but %s is in use by an "
		       "attached program (another namespace's '%s'?): use 'hdrstrip -n NETNS detach %s'",
		       name, d.pin_dir, name, name);
		return EXIT_FAIL;
	}
	dev_maps_close(&m);
	pins_remove(&d);
	printf("removed the stale pins of '%s' in %s (the interface no longer exists)\n", name,
	       d.pin_dir);
	return EXIT_OK;
}

int cmd_detach(int argc, char **argv)
{
	struct attach_cmd o;
	struct dev_state st;
	struct dev_maps m;
	struct hs_config cfg = { 0 };
	struct pin_lock lk = { .fd = -1 };
	struct dev d;
	int r, rc, tc_detached = 0, failed = 0, n;

	rc = parse_opts(argc, argv, &o, detach_usage, "detach", DETACH_OPTS);
	if (rc >= 0)
		return rc;
	if (require_root("detach"))
		return EXIT_FAIL;
	if (bpffs_ensure(0))
		pr_info("bpffs is not available: only the hooks are removed");
	if (!o.cgroup && dev_resolve(o.dev, &d) == -ENODEV)
		return detach_missing_dev(o.dev);
	rc = o.cgroup ? resolve_cgroup(o.cgroup, &d) : resolve(o.dev, &d);
	if (rc >= 0)
		return rc;
	dev_maps_init(&m);
	rc = EXIT_FAIL;
	if (pin_lock(&d, &lk)) {
		pr_err("cannot lock %s: %s", d.pin_dir, errstr(-errno));
		goto out;
	}
	r = dev_query(&d, &st);
	if (r) {
		pr_err("cannot query the hooks of '%s': %s (%d)", d.name, errstr(r), r);
		goto out;
	}
	n = dev_attached_hooks(&st);
	if (!n || (o.hook >= 0 && !st.prog_id[o.hook])) {
		if (!n) {
			if (!pins_open(&d, &m) && !map_in_use(m.config)) {
				/* An interrupted attach: clearing it up is the work,
				 * with the qdisc it may have made. */
				if (!config_read(&m, &cfg) && cfg.qdisc_created && d.cgroup_fd < 0)
					tc_qdisc_release(&d);
				dev_maps_close(&m);
				pins_remove(&d);
				printf("hdrstrip is not attached to '%s'; removed the pins an interrupted "
				       "attach left in %s\n",
				       d.name, d.pin_dir);
				rc = EXIT_OK;
				goto out;
			}
			pr_err("hdrstrip is not attached to '%s'", d.name);
		} else {
			char list[64] = "";

			for (int h = 0; h < HOOK_MAX; h++)
				if (st.prog_id[h])
					snprintf(list + strlen(list), sizeof(list) - strlen(list),
						 "%s%s", list[0] ? ", " : "", hook_names[h]);
			pr_err("%s on '%s' is not attached (attached: %s)", hook_names[o.hook],
			       d.name, list);
		}
		goto out;
	}
	if (!dev_open_maps_from_kernel(&st, &m))
		config_read(&m, &cfg);
	for (int h = 0; h < HOOK_MAX; h++) {
		if (!st.prog_id[h] || (o.hook >= 0 && h != o.hook))
			continue;
		r = hook_detach(&d, h, &st);
		if (r) {
			pr_err("cannot detach %s from '%s': %s (%d)", hook_names[h], d.name,
			       errstr(r), r);
			failed = 1;
			continue;
		}
		tc_detached |= h != HOOK_XDP;
		printf("detached %s from '%s'\n", hook_names[h], d.name);
	}
	r = dev_query(&d, &st);
	if (!r && tc_detached && !st.prog_id[HOOK_TC_INGRESS] && !st.prog_id[HOOK_TC_EGRESS] &&
	    cfg.qdisc_created) {
		r = tc_qdisc_release(&d);
		if (r)
			pr_warn("cannot remove the clsact qdisc hdrstrip created on '%s': %s (%d)",
				d.name, errstr(r), r);
		else if (!st.prog_id[HOOK_XDP])
			cfg.qdisc_created = 0;
	}
	if (!r && !dev_attached_hooks(&st)) {
		dev_maps_close(&m);
		pins_remove(&d);
	}
	rc = failed ? EXIT_FAIL : EXIT_OK;
out:
	dev_maps_close(&m);
	pin_unlock(&lk);
	dev_close(&d);
	return rc;
}
