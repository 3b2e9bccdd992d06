// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* 'hdrstrip attach', 'update' and 'detach'. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <xdp/libxdp.h>

#include "apply.h"
#include "cli.h"
#include "compile.h"
#include "loader.h"
#include <hdrstrip/flow.h>

struct attach_cmd {
	const char *dev;
	const char *cgroup; /* proxy mode */
	const char *cgroup_id; /* detach --cgroup-id: a cgroup that may be gone */
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
	"       hdrstrip detach --cgroup-id ID\n"
	"\n"
	"Detach hdrstrip from DEV (every hook, or the one given) and, when no hook is left,\n"
	"remove its pins and any clsact qdisc hdrstrip created. With nothing attached, the\n"
	"pins an interrupted command left (and an interface's that was deleted) go.\n"
	"--cgroup-id ID detaches from a cgroup by its id, and removes the pins of one that\n"
	"was deleted ('hdrstrip status' lists them as cgroup-ID).\n";

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
	OPT_NOFOLD,
	OPT_CGROUP_ID
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
	{ "cgroup-id", required_argument, NULL, OPT_CGROUP_ID },
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
#define ATTACH_OPTS (~0u & ~OPT_BIT(OPT_CGROUP_ID))
#define UPDATE_OPTS                                                                                \
	(OPT_BIT(OPT_HEADERS) | OPT_BIT(OPT_PORTS) | OPT_BIT(OPT_ON_ERROR) |                       \
	 OPT_BIT(OPT_UNTRACKED) | OPT_BIT(OPT_URGENT) | OPT_BIT(OPT_CGROUP) | OPT_BIT(OPT_NOFOLD))
#define DETACH_OPTS (OPT_BIT(OPT_HOOK) | OPT_BIT(OPT_CGROUP) | OPT_BIT(OPT_CGROUP_ID))

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
		return "detach takes DEV (and --hook), --cgroup PATH or --cgroup-id ID only";
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
			o->on_error = hs_name_find(hs_policy_names, HS_POLICY_MAX, optarg);
			if (o->on_error < 0 || o->on_error == HS_POLICY_SCAN) {
				pr_err("%s: unknown policy '%s' (expected drop or pass)", cmd,
				       optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_UNTRACKED:
			o->untracked = hs_name_find(hs_policy_names, HS_POLICY_MAX, optarg);
			if (o->untracked < 0) {
				pr_err("%s: unknown policy '%s' for --untracked (expected scan, pass or drop)",
				       cmd, optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_URGENT:
			o->urgent = hs_name_find(hs_urgent_names, HS_URGENT_MAX, optarg);
			if (o->urgent < 0) {
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
		case OPT_CGROUP_ID:
			o->cgroup_id = optarg;
			break;
		case 'h':
			return usage_out(usage, 1);
		default:
			return usage_out(usage, 0);
		}
	}
	if (o->cgroup || o->cgroup_id) {
		if (optind != argc || o->hook >= 0 || (o->cgroup && o->cgroup_id)) {
			pr_err("%s: --cgroup PATH (or --cgroup-id ID) takes the place of DEV and --hook",
			       cmd);
			return usage_out(usage, 0);
		}
		o->hook = HS_HOOK_CGROUP;
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

/* Pins under DEV's name that are another namespace's live attachment. */
static void pins_elsewhere_err(const struct dev *d, const struct pins_info *pi, const char *what)
{
	char a[40], b[40];

	netns_str(pi->cfg.netns_ino, a, sizeof(a));
	netns_str(d->netns_ino, b, sizeof(b));
	if (pi->cfg.netns_ino == d->netns_ino) {
		/* Ours once, gone from here with its program: moved. */
		pr_err("%s: %s belongs to '%s' (ifindex %u), which left this network namespace "
		       "with hdrstrip attached (moved to another one?): detach it there "
		       "(hdrstrip -n NETNS detach DEV), or remove %s",
		       what, d->pin_dir, pi->cfg.ifname, pi->cfg.ifindex, d->pin_dir);
		return;
	}
	pr_err("%s: %s belongs to '%s' (ifindex %u) in network namespace %s, where hdrstrip is "
	       "attached; this '%s' is ifindex %d in %s. Pins are named by interface, so the two "
	       "would share maps: detach the other one first (hdrstrip -n NETNS detach %s), or "
	       "rename one interface",
	       what, d->pin_dir, pi->cfg.ifname, pi->cfg.ifindex, a, d->name, d->ifindex, b,
	       pi->cfg.ifname);
}

/* The hooks use two sets of maps (an older hdrstrip, or a hook attached by
 * hand): refused, with the way out. */
static void split_err(const struct dev *d, const char *cmd)
{
	pr_err("%s: the hooks of '%s' use different maps (two lists at once): detach every hook "
	       "('hdrstrip detach %s') and attach them again",
	       cmd, d->name, d->name);
}

/* Resolve DEV or --cgroup PATH, printing the error; an exit code or -1. */
static int resolve_target(const struct attach_cmd *o, struct dev *d)
{
	return o->cgroup ? resolve_cgroup(o->cgroup, d) : resolve(o->dev, d);
}

static const char *target_word(const struct dev *d)
{
	return d->cgroup ? "cgroup" : "interface";
}

/* "'eth0'" or "cgroup '/sys/fs/cgroup/x'", for messages. */
static const char *target_str(const struct dev *d)
{
	static char buf[PATH_MAX + 16];

	if (d->cgroup && d->cgroup_path[0])
		snprintf(buf, sizeof(buf), "cgroup '%s'", d->cgroup_path);
	else
		snprintf(buf, sizeof(buf), "'%s'", d->name);
	return buf;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_cmd o;
	struct attach_opts ao;
	struct apply_opts ap = { .qdisc_created = -1, .untracked = -1, .urgent = -1 };
	struct hs_config next, live;
	struct dev_state st;
	struct dev_maps m;
	struct dev_lock lk = { .fd = -1 };
	struct pins_info pi;
	struct hs_list l = { 0 };
	struct hs_trie *t = NULL;
	struct dev d;
	int r, rc, shared, pinned = 0, have_bpffs, mode, legacy, qcreated, marked = 0;

	rc = parse_opts(argc, argv, &o, attach_usage, "attach", ATTACH_OPTS);
	if (rc >= 0)
		return rc;
	if (o.hook < 0)
		o.hook = HS_HOOK_XDP;
	if (!o.headers) {
		pr_err("attach: --headers FILE is required");
		return usage_out(attach_usage, 0);
	}
	if (require_root("attach"))
		return EXIT_FAIL;
	/* A bad list changes nothing: it is read before anything is touched
	 * (and compiled by apply_prepare(), before any map write). */
	rc = load_list(o.headers, &o.list, &l);
	if (rc)
		return rc;
	t = trie_alloc();
	if (!t) {
		hs_list_free(&l);
		return EXIT_FAIL;
	}
	dev_maps_init(&m);
	rc = resolve_target(&o, &d);
	if (rc >= 0)
		goto out;
	rc = EXIT_FAIL;
	r = dev_lock(&d, &lk);
	if (r) {
		pr_err("cannot lock %s %s: %s (%d)", target_word(&d), target_str(&d), errstr(r), r);
		goto out;
	}
	r = bpffs_ensure(1);
	have_bpffs = !r;
	if (r)
		pr_warn("cannot mount bpffs at %s: %s (%d): attaching without pins (status, update "
			"and detach find the attachment from the %s; bpftool users will not find its "
			"maps pinned)",
			HS_BPFFS, errstr(r), r, target_word(&d));
	r = dev_query(&d, &st);
	if (r) {
		pr_err("cannot query the hooks of %s: %s (%d)", target_str(&d), errstr(r), r);
		goto out;
	}
	if (st.prog_id[o.hook] && o.cgroup) {
		pr_err("hdrstrip is already attached to cgroup '%s' (program id %u); use 'hdrstrip "
		       "update --cgroup %s --headers FILE' to change its list, or 'hdrstrip detach "
		       "--cgroup %s' first",
		       d.cgroup_path, st.prog_id[o.hook], d.cgroup_path, d.cgroup_path);
		goto out;
	}
	if (st.prog_id[o.hook]) {
		pr_err("%s on '%s' is already attached (program id %u); use 'hdrstrip update %s "
		       "--headers FILE' to change its list, or 'hdrstrip detach %s --hook %s' first",
		       hs_hook_name(o.hook), d.name, st.prog_id[o.hook], d.name, d.name,
		       hs_hook_name(o.hook));
		goto out;
	}
	/*
	 * The device's maps are those of its attached hooks, found from the
	 * kernel: pins named after the interface may be missing (a private
	 * bpffs, 'ip netns exec'), under its old name (a rename), or another
	 * attachment's. Only when no hook is attached are maps made.
	 */
	shared = dev_attached_hooks(&st) > 0;
	if (shared) {
		r = dev_open_maps_from_kernel(&st, &m);
		if (r == -EXDEV) {
			split_err(&d, "attach");
			goto out;
		}
		if (r || config_read(&m, &live)) {
			pr_err("cannot find the maps of hdrstrip's hooks on '%s': %s (%d)", d.name,
			       errstr(r ? r : -errno), r ? r : -errno);
			goto out;
		}
	} else {
		if (have_bpffs) {
			r = pins_clear_stale(&d, &st, &pi);
			if (r == -EBUSY) {
				pins_elsewhere_err(&d, &pi, "attach");
				goto out;
			}
		}
		r = maps_create(&d, &m);
		if (r) {
			pr_err("cannot create hdrstrip's maps for %s: %s (%d)", target_str(&d),
			       errstr(r), r);
			goto out;
		}
	}
	ap.first = !shared;
	ap.list_path = o.headers;
	ap.on_error = o.on_error >= 0 ? o.on_error : !shared ? HS_POLICY_DROP : -1;
	ap.untracked = o.untracked >= 0 ? o.untracked : !shared ? HS_POLICY_SCAN : -1;
	ap.urgent = o.urgent >= 0 ? o.urgent : !shared ? HS_URGENT_CLEAR : -1;
	if (o.ports_set) {
		ap.ports = o.ports;
	} else if (!shared) {
		ports_parse("80", o.ports);
		ap.ports = o.ports;
	}
	/* Everything but the switch: the new list goes to the idle slot. */
	r = apply_prepare(&d, &m, &l, t, &ap, &next);
	if (r) {
		pr_err("cannot write the header list into the maps of %s: %s (%d)", target_str(&d),
		       errstr(r), r);
		goto out;
	}
	ao.hook = o.hook;
	ao.xdp_mode = o.xdp_mode;
	ao.flows = o.flows ? o.flows : HS_FLOWS_DEFAULT;
	if (!shared)
		next.flows = ao.flows;
	if ((o.hook == HS_HOOK_TC_INGRESS || o.hook == HS_HOOK_TC_EGRESS) &&
	    !tc_qdisc_exists(d.ifindex) && !next.qdisc_created) {
		/* The qdisc is hdrstrip's to remove later: say so before making
		 * it, in the config a later command reads (the live one, or the
		 * pinned new one), so a killed attach leaves nothing nobody
		 * would remove. */
		next.qdisc_created = 1;
		if (shared) {
			live.qdisc_created = 1;
			marked = !config_write(&m, &live);
		}
	}
	if (!shared) {
		/* New maps: no packet sees them before the hook is attached. */
		r = apply_commit(&m, &next);
		if (r) {
			pr_err("cannot write the config of %s: %s (%d)", target_str(&d), errstr(r),
			       r);
			goto out;
		}
		if (o.cgroup) {
			/* Connections already open never pass the sockops
			 * program: say how many there are, as a counter. */
			counters_add(&m, HS_CTR_conns_preexisting,
				     count_preexisting(&d, next.ports));
		}
	}
	if (have_bpffs) {
		/* Pinned before the hook: a killed attach leaves pins the next
		 * command finds stale, with the qdisc they say was made. */
		r = pins_sync(&d, &st, &m, shared ? &live : NULL);
		if (r == -EBUSY) {
			if (!shared) {
				pins_elsewhere_err(&d, &pi, "attach");
				goto out;
			}
			pr_warn("%s holds another namespace's pins: '%s' is attached without pins",
				d.pin_dir, d.name);
		} else if (r) {
			pr_warn("cannot pin the maps of %s in %s: %s (%d); attaching without pins",
				target_str(&d), d.pin_dir, errstr(r), r);
		} else {
			pinned = !shared;
		}
	}

	/* Load and verify (most of an attach's time), then attach. */
	mode = legacy = qcreated = 0;
	if (o.cgroup) {
		r = proxy_attach(&d, &m);
		if (!r)
			warn_fastopen();
	} else {
		r = hook_attach(&d, &ao, &m, &mode, &legacy, &qcreated);
	}
	if (r) {
		pr_err("cannot attach %s to %s: %s (%d)%s", hs_hook_name(o.hook), target_str(&d),
		       errstr(r), r,
		       r == -EEXIST || r == -EBUSY
			       ? "; another program holds that hook (see 'bpftool net' / 'xdp-loader status')"
		       : r == -EPERM || r == -EACCES
			       ? "; the verifier may have rejected the program: rerun with -v for its log"
			       : "");
		if (marked) {
			live.qdisc_created = 0;
			config_write(&m, &live);
		}
		goto out;
	}
	pinned = 0; /* attached: the pins are its own */
	/* The switch, last: the new list applies to every hook at once. A
	 * killed attach before it left the new hook on the running list. */
	if (shared) {
		r = apply_commit(&m, &next);
		if (r) {
			pr_err("%s is attached to '%s', but the new list could not be switched in: %s "
			       "(%d); the previous list is still in use: run 'hdrstrip update %s "
			       "--headers %s'",
			       hs_hook_name(o.hook), d.name, errstr(r), r, d.name, o.headers);
			goto out;
		}
		printf("'%s' already has hdrstrip on another hook: the list%s now %s to every hook\n",
		       d.name, o.ports_set || o.on_error >= 0 ? " and settings" : "",
		       o.ports_set || o.on_error >= 0 ? "apply" : "applies");
	}
	if (o.hook == HS_HOOK_XDP && legacy)
		printf("note: libxdp's multi-program dispatcher is not usable on this kernel; "
		       "hdrstrip is attached as the only XDP program on '%s'\n",
		       d.name);
	if (o.flows > HS_FLOWS_DEFAULT)
		printf("note: --flows %u: this hook's flow table takes about %llu MiB of kernel "
		       "memory\n",
		       o.flows, (unsigned long long)o.flows * HS_FLOW_ENTRY_BYTES >> 20);
	{
		char ports[256];

		ports_format(next.ports, ports, sizeof(ports));
		printf("attached %s%s to '%s': %u names from %s, ports %s, on-error %s; maps in %s\n",
		       hs_hook_name(o.hook),
		       o.hook == HS_HOOK_XDP
			       ? (mode == XDP_MODE_SKB ? " (skb mode)" : " (native mode)")
			       : "",
		       d.name, t->n_rules, o.headers, ports, hs_policy_name(next.on_error),
		       have_bpffs ? d.pin_dir : "no pins (bpffs unavailable)");
	}
	rc = EXIT_OK;
out:
	if (pinned)
		pins_remove(&d); /* pinned for a hook that did not attach */
	dev_maps_close(&m);
	dev_unlock(&lk);
	dev_close(&d);
	free(t);
	hs_list_free(&l);
	return rc;
}

int cmd_update(int argc, char **argv)
{
	struct attach_cmd o;
	struct apply_opts ap = { .qdisc_created = -1, .untracked = -1, .urgent = -1 };
	struct hs_config before;
	struct dev_state st;
	struct dev_maps m;
	struct dev_lock lk = { .fd = -1 };
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
	rc = resolve_target(&o, &d);
	if (rc >= 0)
		goto out;
	rc = EXIT_FAIL;
	r = dev_lock(&d, &lk);
	if (r) {
		pr_err("cannot lock %s %s: %s (%d)", target_word(&d), target_str(&d), errstr(r), r);
		goto out;
	}
	r = dev_query(&d, &st);
	if (r || !dev_attached_hooks(&st)) {
		if (o.cgroup)
			pr_err("hdrstrip is not attached to cgroup '%s'; use 'hdrstrip attach --cgroup "
			       "%s --headers FILE'",
			       d.cgroup_path, d.cgroup_path);
		else
			pr_err("hdrstrip is not attached to '%s'; use 'hdrstrip attach %s --headers "
			       "FILE'",
			       d.name, d.name);
		goto out;
	}
	/* The maps of the attached hooks: no pin is needed. */
	r = dev_open_maps_from_kernel(&st, &m);
	if (r == -EXDEV) {
		split_err(&d, "update");
		goto out;
	}
	if (r || config_read(&m, &before)) {
		pr_err("cannot find the maps of hdrstrip's program on %s: %s (%d)", target_str(&d),
		       errstr(r ? r : -errno), r ? r : -errno);
		goto out;
	}
	ap.list_path = o.headers;
	ap.on_error = o.on_error;
	ap.untracked = o.untracked;
	ap.urgent = o.urgent;
	ap.ports = o.ports_set ? o.ports : NULL;
	r = apply_list(&d, &m, &l, t, &ap);
	if (r) {
		pr_err("cannot update the header list of %s: %s (%d); the previous list is still "
		       "in use",
		       target_str(&d), errstr(r), r);
		goto out;
	}
	/* Pins follow (a renamed interface's move to its name); without a
	 * bpffs the update is done all the same. */
	if (!bpffs_ensure(0))
		pins_sync(&d, &st, &m, &before);
	printf("updated '%s': %u names from %s (generation %u)\n", d.name, t->n_rules, o.headers,
	       t->generation);
	rc = EXIT_OK;
out:
	dev_maps_close(&m);
	dev_unlock(&lk);
	dev_close(&d);
	free(t);
	hs_list_free(&l);
	return rc;
}

/*
 * Pins of a device that is gone (an interface deleted, a cgroup removed):
 * cleared when nothing attached uses them. A deleted cgroup's sockhash is
 * emptied first, so its connections go back to plain TCP at once.
 */
static int detach_gone(struct dev *d, const char *what)
{
	struct dev_lock lk = { .fd = -1 };
	struct pins_info pi;
	int r, rc = EXIT_FAIL;

	if (bpffs_ensure(0) || dev_lock(d, &lk))
		return what ? resolve(what, d) : EXIT_FAIL;
	r = pins_inspect(d->pin_dir, d, NULL, &pi);
	if (r || pi.owner == PINS_NONE) {
		dev_unlock(&lk);
		if (what)
			return resolve(what, d); /* the usual "no interface" */
		pr_err("no pins of %s in %s: nothing to detach", d->name, d->pin_dir);
		return EXIT_FAIL;
	}
	if (pi.owner == PINS_ELSEWHERE && pi.cfg.netns_ino == d->netns_ino) {
		pins_elsewhere_err(d, &pi, "detach");
		goto out;
	}
	if (pi.owner == PINS_ELSEWHERE) {
		pr_err("no interface '%s' in this network namespace, but %s is in use by an "
		       "attached program (another namespace's '%s'?): use 'hdrstrip -n NETNS detach %s'",
		       d->name, d->pin_dir, d->name, d->name);
		goto out;
	}
	if (pi.owner == PINS_RENAMED) {
		pins_clear_stale(d, NULL, &pi);
		pr_err("no interface '%s' in this network namespace: it was renamed '%s', which "
		       "hdrstrip is attached to (its pins are now in %s/%s); use 'hdrstrip detach %s'",
		       d->name, pi.owner_name, HS_PIN_ROOT, pi.owner_name, pi.owner_name);
		rc = EXIT_USAGE;
		goto out;
	}
	if (d->cgroup) {
		char path[PATH_MAX + 32];
		int socks;

		snprintf(path, sizeof(path), "%s/%s", d->pin_dir, HS_MAP_SOCKS);
		socks = bpf_obj_get(path);
		if (socks >= 0) {
			r = proxy_release_socks(socks);
			close(socks);
			if (r)
				pr_warn("cannot empty the sockhash of %s: %s (%d); its connections "
					"stay filtered until the kernel frees it",
					d->name, errstr(r), r);
		}
	}
	pins_remove(d);
	if (d->cgroup)
		printf("removed the pins of %s in %s (the cgroup was deleted)\n", d->name,
		       d->pin_dir);
	else
		printf("removed the stale pins of '%s' in %s (the interface no longer exists)\n",
		       d->name, d->pin_dir);
	rc = EXIT_OK;
out:
	dev_unlock(&lk);
	return rc;
}

/* detach --cgroup-id ID: the cgroup if it is there, else its pins. */
static int detach_cgroup_id(const char *arg, struct dev *d)
{
	unsigned long long id;
	char end;
	int r;

	if (sscanf(arg, "%llu%c", &id, &end) != 1 || !id) {
		pr_err("detach: bad --cgroup-id '%s' (a cgroup's id, as 'hdrstrip status' shows)",
		       arg);
		return EXIT_USAGE;
	}
	r = cgroup_resolve_id(id, d);
	if (!r)
		return -1; /* there: detach it as usual */
	dev_close(d);
	if (r != -ESTALE && r != -ENOENT) {
		pr_err("cannot look cgroup %llu up: %s (%d)", id, errstr(r), r);
		return EXIT_FAIL;
	}
	{
		char name[32];

		snprintf(name, sizeof(name), "cgroup-%llu", id);
		dev_by_name(name, d);
	}
	return detach_gone(d, NULL);
}

int cmd_detach(int argc, char **argv)
{
	struct attach_cmd o;
	struct dev_state st;
	struct dev_maps m;
	struct hs_config cfg = { 0 };
	struct dev_lock lk = { .fd = -1 };
	struct pins_info pi;
	struct dev d;
	int r, rc, failed = 0, n, have_bpffs;

	rc = parse_opts(argc, argv, &o, detach_usage, "detach", DETACH_OPTS);
	if (rc >= 0)
		return rc;
	if (require_root("detach"))
		return EXIT_FAIL;
	if (o.cgroup_id) {
		rc = detach_cgroup_id(o.cgroup_id, &d);
		if (rc >= 0)
			return rc;
	} else if (!o.cgroup && dev_resolve(o.dev, &d) == -ENODEV) {
		dev_by_name(o.dev, &d);
		return detach_gone(&d, o.dev);
	} else {
		rc = resolve_target(&o, &d);
		if (rc >= 0)
			return rc;
	}
	dev_maps_init(&m);
	rc = EXIT_FAIL;
	r = dev_lock(&d, &lk);
	if (r) {
		pr_err("cannot lock %s %s: %s (%d)", target_word(&d), target_str(&d), errstr(r), r);
		goto out;
	}
	/* Hooks come off whether or not a bpffs can be had: pins are only
	 * their copy for bpftool. */
	have_bpffs = !bpffs_ensure(0);
	if (!have_bpffs)
		pr_info("bpffs is not available: no pins to remove");
	r = dev_query(&d, &st);
	if (r) {
		pr_err("cannot query the hooks of %s: %s (%d)", target_str(&d), errstr(r), r);
		goto out;
	}
	n = dev_attached_hooks(&st);
	if (!n) {
		/* Nothing attached: what a killed attach or detach left (any
		 * subset of pins, the qdisc they say was made) is the work. */
		r = have_bpffs ? pins_clear_stale(&d, &st, &pi) : 0;
		if (r == -EBUSY) {
			pins_elsewhere_err(&d, &pi, "detach");
		} else if (r > 0 && pi.owner == PINS_RENAMED) {
			pr_err("hdrstrip is not attached to '%s'; the pins in %s were those of '%s' "
			       "(renamed), now in %s/%s",
			       d.name, d.pin_dir, pi.owner_name, HS_PIN_ROOT, pi.owner_name);
		} else if (r > 0) {
			printf("hdrstrip is not attached to %s; removed the pins an interrupted "
			       "command left in %s\n",
			       target_str(&d), d.pin_dir);
			rc = EXIT_OK;
		} else {
			pr_err("hdrstrip is not attached to %s", target_str(&d));
		}
		goto out;
	}
	if (o.hook >= 0 && !st.prog_id[o.hook]) {
		char list[64] = "";

		for (int h = 0; h < HS_HOOK_MAX; h++)
			if (st.prog_id[h])
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 list[0] ? ", " : "", hs_hook_name(h));
		pr_err("%s on '%s' is not attached (attached: %s)", hs_hook_name(o.hook), d.name,
		       list);
		goto out;
	}
	/* Two sets of maps (-EXDEV) are no reason to keep the hooks. */
	r = dev_open_maps_from_kernel(&st, &m);
	if (!r || r == -EXDEV)
		config_read(&m, &cfg);
	for (int h = 0; h < HS_HOOK_MAX; h++) {
		if (!st.prog_id[h] || (o.hook >= 0 && h != o.hook))
			continue;
		r = hook_detach(&d, h, &st);
		if (r) {
			pr_err("cannot detach %s from %s: %s (%d)", hs_hook_name(h), target_str(&d),
			       errstr(r), r);
			failed = 1;
			continue;
		}
		printf("detached %s from '%s'\n", hs_hook_name(h), d.name);
	}
	r = dev_query(&d, &st);
	if (r) {
		pr_err("cannot query the hooks of %s: %s (%d)", target_str(&d), errstr(r), r);
		failed = 1;
		goto done;
	}
	/* No TC hook left: the clsact qdisc hdrstrip made goes (if it holds
	 * no one's filter), before the pins that say it made it. */
	if (!d.cgroup && cfg.qdisc_created && !st.prog_id[HS_HOOK_TC_INGRESS] &&
	    !st.prog_id[HS_HOOK_TC_EGRESS]) {
		r = tc_qdisc_release(&d);
		if (r)
			pr_warn("cannot remove the clsact qdisc hdrstrip created on '%s': %s (%d)",
				d.name, errstr(r), r);
		else if (m.config >= 0) {
			/* Said at once: a detach killed from here on leaves
			 * no qdisc for the next command to look for. */
			cfg.qdisc_created = 0;
			config_write(&m, &cfg);
		}
	}
	if (!dev_attached_hooks(&st) && have_bpffs) {
		/* Ours now stale: cleared like any other, and those under the
		 * interface's name before a rename too. */
		pins_clear_stale(&d, &st, &pi);
		if (cfg.ifname[0] && !d.cgroup && strcmp(cfg.ifname, d.name)) {
			struct dev old;
			struct pins_info there;

			dev_by_name(cfg.ifname, &old);
			if (!pins_inspect(old.pin_dir, &old, NULL, &there) && there.n &&
			    there.config_id == map_id(m.config))
				pins_remove(&old);
		}
	}
done:
	rc = failed ? EXIT_FAIL : EXIT_OK;
out:
	dev_maps_close(&m);
	dev_unlock(&lk);
	dev_close(&d);
	return rc;
}
