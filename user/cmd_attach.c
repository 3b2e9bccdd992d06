// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* 'hdrstrip attach': compile a list and attach a hook (or proxy mode). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xdp/libxdp.h>

#include "apply.h"
#include "cli.h"
#include "compile.h"
#include "loader.h"
#include "opts.h"
#include "target.h"
#include <hdrstrip/flow.h>

static const char attach_usage[] =
	"Usage: hdrstrip attach DEV --headers FILE [--hook xdp|tc-ingress|tc-egress]\n"
	"                       [--xdp-mode native|skb] [--ports 80,8080] [--on-error drop|reject|pass]\n"
	"                       [--untracked scan|pass|drop] [--urgent clear|drop] [--flows N]\n"
	"                       [--event-rate N] [--observe | --enforce] [--nat lookup|off]\n"
	"                       [--vxlan-ports LIST] [--geneve-ports LIST] [--udp-tunnel-ports LIST]\n"
	"       hdrstrip attach --cgroup PATH [--receive] --headers FILE [--ports LIST]\n"
	"                       [--on-error drop|reject|pass] [--event-rate N] [--observe | --enforce]\n"
	"\n"
	"Compile the header list and attach hdrstrip to DEV. Several hooks may be attached\n"
	"to one DEV; they share its list, ports, policy and counters.\n"
	"\n"
	"  --headers FILE        the header list (see hdrstrip(8) for the format)\n"
	"  --hook HOOK           xdp (default: ingress, earliest), tc-ingress, or tc-egress\n"
	"                        (requests leaving DEV, e.g. a proxy's upstream side)\n"
	"  --xdp-mode MODE       native (default; falls back to skb if the driver lacks it) or skb\n"
	"  --ports LIST          TCP destination ports to inspect: 80,8080,9000-9010 (default 80);\n"
	"                        with response rules, responses from them too\n"
	"  --on-error POLICY     what to do with a request that cannot be fully inspected\n"
	"                        (ambiguous framing, a gap in its headers, too long to scan,\n"
	"                        HTTP/2's preface): drop (default), reject (drop, and reset\n"
	"                        the client's connection) or pass (then scanned line by line;\n"
	"                        an HTTP/2 connection passes unscanned)\n"
	"  --untracked POLICY    segments of connections without state (older than the attach,\n"
	"                        or evicted) that do not start a request: scan (default: mask\n"
	"                        every line that looks like an internal field), pass or drop\n"
	"  --urgent POLICY       segments with urgent data (URG), whose urgent byte a receiver\n"
	"                        takes out of the stream: clear (default: clear URG and the\n"
	"                        urgent pointer, so the byte stays where it was scanned) or drop\n"
	"  --flows N             connections tracked per hook (16..1048576, default 32768; each\n"
	"                        takes about 1084 bytes of kernel memory, taken at attach)\n"
	"  --event-rate N        match events a second at most, all CPUs together ('hdrstrip\n"
	"                        events'; default 2000, 0: none); the rest are counted\n"
	"  --observe             observe mode: every rule and policy counts and reports (events)\n"
	"                        what it would do, and changes and drops nothing; a dry run, not\n"
	"                        a security boundary ('update --enforce' switches it off)\n"
	"  --enforce             the rules and policies act (the default)\n"
	"  --nat MODE            lookup (default): at xdp and tc-ingress, ask conntrack where a\n"
	"                        segment to a port not inspected really goes (DNAT, REDIRECT,\n"
	"                        docker -p, NodePort) and inspect it when that port is; off\n"
	"  --vxlan-ports LIST    UDP ports whose VXLAN packets are read inside (default\n"
	"                        " HS_VXLAN_PORTS_DEFAULT "; none: no VXLAN port)\n"
	"  --geneve-ports LIST   the same for GENEVE (default " HS_GENEVE_PORTS_DEFAULT ")\n"
	"  --udp-tunnel-ports LIST  UDP ports of another tunnel this host takes packets out of\n"
	"                        (FOU, GUE, L2TP, ...): sent to the --on-error policy\n"
	"  --cgroup PATH         proxy mode: instead of DEV and --hook, remove internal lines\n"
	"                        from what the processes of cgroup v2 directory PATH send\n"
	"                        (requests; with response rules, responses of connections\n"
	"                        they accept on --ports too)\n"
	"  --receive             origin mode, with --cgroup: mask internal lines in the requests\n"
	"                        the processes of PATH receive on connections they accept on\n"
	"                        --ports, before they can read them (a drop ends the connection)\n"
	"  --no-fold-underscore  '_' and '-' are different bytes (overrides the list)\n";

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

/* What 'attach' was asked for: its defaults, then the command line. */
struct attach_opts {
	const char *dev; /* NULL: --cgroup */
	struct list_settings set;
	int hook; /* enum hs_hook */
	int hook_given;
	int xdp_mode; /* enum xdp_attach_mode */
	__u32 flows;
	int receive; /* --receive: origin mode (with --cgroup) */
};

static const struct attach_opts defaults_attach = {
	.set = LIST_SETTINGS_DEFAULTS,
	.hook = HS_HOOK_XDP,
	.xdp_mode = XDP_MODE_NATIVE,
	.flows = HS_FLOWS_DEFAULT,
};

static const struct option attach_options[] = {
	OPTION_HEADERS,	 OPTION_HOOK,	     OPTION_XDP_MODE,	  OPTION_PORTS,
	OPTION_ON_ERROR, OPTION_UNTRACKED,   OPTION_URGENT,	  OPTION_FLOWS,
	OPTION_CGROUP,	 OPTION_NOFOLD,	     OPTION_EVENT_RATE,	  OPTION_OBSERVE,
	OPTION_ENFORCE,	 OPTION_VXLAN_PORTS, OPTION_GENEVE_PORTS, OPTION_UDP_TUNNEL_PORTS,
	OPTION_NAT,	 OPTION_RECEIVE,     OPTION_HELP,	  { 0 },
};

static const char *attach_why_not(int opt)
{
	(void)opt; /* --cgroup-id: detach's only */
	return "see --help";
}

static const struct dev_cmd attach_cmd = {
	.name = "attach",
	.usage = attach_usage,
	.options = attach_options,
	.why_not = attach_why_not,
};

/* -1 with @o filled in, else the exit code. */
static int parse_attach(int argc, char **argv, struct attach_opts *o)
{
	const struct dev_cmd *c = &attach_cmd;
	int opt, rc = -1;

	while (rc < 0 && (opt = opts_next(c, argc, argv, &rc)) > 0) {
		switch (opt) {
		case OPT_HOOK:
			rc = opt_hook(c, optarg, &o->hook);
			o->hook_given = 1;
			break;
		case OPT_XDP_MODE:
			rc = opt_xdp_mode(c, optarg, &o->xdp_mode);
			break;
		case OPT_FLOWS:
			rc = opt_flows(c, optarg, &o->flows);
			break;
		case OPT_RECEIVE:
			o->receive = 1;
			break;
		default:
			rc = opt_settings(c, opt, &o->set);
			break;
		}
	}
	if (rc >= 0)
		return rc;
	rc = opts_target(c, argc, argv, !!o->set.cgroup, o->hook_given, &o->dev);
	if (rc >= 0)
		return rc;
	if (o->receive && !o->set.cgroup) {
		pr_err("attach: --receive is origin mode, for the processes of a cgroup: give "
		       "--cgroup PATH");
		return usage_out(attach_usage, 0);
	}
	if (o->set.cgroup)
		o->hook = o->receive ? HS_HOOK_RECEIVE : HS_HOOK_CGROUP;
	if (!o->set.headers) {
		pr_err("attach: --headers FILE is required");
		return usage_out(attach_usage, 0);
	}
	return -1;
}

/* The attached program's maps, found from the kernel when another hook of
 * @d is attached (*shared, @live its config), else made: 0 or -1 after
 * the message. Pins named after the interface may be missing (a private
 * bpffs, 'ip netns exec'), under its old name (a rename), or another
 * attachment's: only when no hook is attached are maps made. */
static int attach_maps(struct dev *d, const struct dev_state *st, int have_bpffs,
		       struct dev_maps *m, int *shared, struct hs_config *live,
		       struct pins_info *pi)
{
	int r;

	*shared = dev_attached_hooks(st) > 0;
	if (*shared) {
		r = dev_open_maps_from_kernel(st, m);
		if (r == -EXDEV) {
			split_err(d, "attach");
			return -1;
		}
		if (r || config_read(m, live)) {
			pr_err("cannot find the maps of hdrstrip's hooks on '%s': %s (%d)", d->name,
			       errstr(r ? r : -errno), r ? r : -errno);
			return -1;
		}
		return 0;
	}
	/* Connections a detach left filtered: the pins that keep them go
	 * only once they are done. */
	if (have_bpffs && d->cgroup && (r = proxy_release_pinned(d)) > 0) {
		pr_err("the last attachment of %s still holds %d connection%s whose application has "
		       "not read what it received (left filtered by its detach): 'hdrstrip detach "
		       "--cgroup %s' once they are done",
		       target_str(d), r, r == 1 ? "" : "s", d->cgroup_path);
		return -1;
	}
	if (have_bpffs && pins_clear_stale(d, st, pi) == -EBUSY) {
		pins_elsewhere_err(d, pi, "attach");
		return -1;
	}
	r = maps_create(d, m);
	if (r) {
		pr_err("cannot create hdrstrip's maps for %s: %s (%d)", target_str(d), errstr(r),
		       r);
		return -1;
	}
	return 0;
}

/* Proxy mode's or origin mode's name, for messages. */
static const char *cgroup_mode(int hook)
{
	return hook == HS_HOOK_RECEIVE ? "origin mode (--receive)" : "proxy mode";
}

/* Refused when @o->hook of @d is taken already (for a cgroup, either mode:
 * an accepted connection can be in one sockhash with an sk_skb program
 * only): -1 after the message. */
static int attach_hook_free(const struct attach_opts *o, const struct dev *d,
			    const struct dev_state *st)
{
	int other = o->hook == HS_HOOK_RECEIVE ? HS_HOOK_CGROUP : HS_HOOK_RECEIVE;
	__u32 id = st->prog_id[o->hook];

	if (o->set.cgroup && !id && st->prog_id[other]) {
		pr_err("hdrstrip is attached to cgroup '%s' in %s (program id %u): a cgroup has one "
		       "mode at a time; 'hdrstrip detach --cgroup %s' first",
		       d->cgroup_path, cgroup_mode(other), st->prog_id[other], d->cgroup_path);
		return -1;
	}
	if (!id)
		return 0;
	if (o->set.cgroup)
		pr_err("hdrstrip is already attached to cgroup '%s' (program id %u); use 'hdrstrip "
		       "update --cgroup %s --headers FILE' to change its list, or 'hdrstrip detach "
		       "--cgroup %s' first",
		       d->cgroup_path, id, d->cgroup_path, d->cgroup_path);
	else
		pr_err("%s on '%s' is already attached (program id %u); use 'hdrstrip update %s "
		       "--headers FILE' to change its list, or 'hdrstrip detach %s --hook %s' first",
		       hs_hook_name(o->hook), d->name, id, d->name, d->name, hs_hook_name(o->hook));
	return -1;
}

/* Does a request rule of @t drop or reject? */
static int request_rule_drops(const struct hs_trie *t)
{
	for (__u32 i = 0; i < t->n_rules && i < HS_MAX_NAMES; i++)
		if (hs_action_drops(t->rules[i].action) && (t->rules[i].flags & HS_RULE_F_REQUEST))
			return 1;
	return 0;
}

/* In origin mode a drop ends its connection, which then waits for the
 * agent's reset (SOCK_DESTROY): attached by hand, nobody sends it and the
 * connection stalls. Said when something may drop (one line, stderr). */
static void warn_no_agent(const struct hs_config *cfg, const struct hs_trie *t)
{
	int policy = cfg->on_error == HS_POLICY_DROP || cfg->on_error == HS_POLICY_REJECT;
	int rule = request_rule_drops(t);
	char why[64];

	if (g_opts.agent || (!policy && !rule))
		return;
	snprintf(why, sizeof(why), "%s%s%s%s", rule ? "a drop or reject rule" : "",
		 rule && policy ? ", " : "", policy ? "--on-error " : "",
		 policy ? hs_policy_name(cfg->on_error) : "");
	pr_warn("origin mode attached by hand cannot reset a connection a drop ends (%s): it "
		"stalls until a side gives up; run it from the agent instead ('hdrstrip run' "
		"with 'receive = yes', or hdrstrip-origin@SLICE.service)",
		why);
}

static void warn_say(void *arg, const char *msg)
{
	(void)arg;
	pr_warn("%s", msg);
}

static void attach_report(const struct attach_opts *o, const struct dev *d,
			  const struct hs_config *cfg, int shared, int mode, int legacy,
			  int have_bpffs)
{
	int settings = o->set.ports_given || o->set.on_error >= 0;
	char ports[256];

	if (shared)
		printf("'%s' already has hdrstrip on another hook: the list%s now %s to every hook\n",
		       d->name, settings ? " and settings" : "", settings ? "apply" : "applies");
	if (o->hook == HS_HOOK_XDP && legacy)
		printf("note: libxdp's multi-program dispatcher is not usable on this kernel; "
		       "hdrstrip is attached as the only XDP program on '%s'\n",
		       d->name);
	if (o->flows > HS_FLOWS_DEFAULT)
		printf("note: --flows %u: this hook's flow table takes about %llu MiB of kernel "
		       "memory\n",
		       o->flows, flows_bytes(o->flows) >> 20);
	ports_format(cfg->ports, ports, sizeof(ports));
	printf("attached %s%s to '%s': %u names from %s%s, ports %s, on-error %s; maps in %s\n",
	       hs_hook_name(o->hook),
	       o->hook == HS_HOOK_XDP ? (mode == XDP_MODE_SKB ? " (skb mode)" : " (native mode)")
				      : "",
	       d->name, cfg->n_names, o->set.headers, cfg->builtin ? HS_BUILTIN_NOTE : "", ports,
	       hs_policy_name(cfg->on_error),
	       have_bpffs ? d->pin_dir : "no pins (bpffs unavailable)");
	mode_note(d, 0, cfg->observe);
	if (!d->cgroup)
		tunnels_check(cfg, warn_say, NULL);
}

static int do_attach(const struct attach_opts *o)
{
	struct hook_opts ho = { .hook = o->hook, .xdp_mode = o->xdp_mode, .flows = o->flows };
	struct apply_opts ap;
	struct hs_config next, live;
	struct dev_state st;
	struct pins_info pi = { 0 };
	struct list_run run;
	struct dev *d = &run.d;
	struct dev_maps *m = &run.m;
	int r, rc, shared, pinned = 0, have_bpffs, mode = 0, legacy = 0, qcreated = 0;
	int make_qdisc, marked = 0, preexisting = 0;

	rc = list_run_begin("attach", &o->set, o->dev, &run);
	if (rc >= 0)
		goto out;
	if (!d->cgroup && d->link_type < 0) {
		/* Read as Ethernet, its packets would all pass as "not IP". */
		pr_err("cannot attach to '%s': its link type is %s (%d), and hdrstrip reads "
		       "Ethernet and raw IP (tun, wireguard, ipip, gre, sit, ppp) only; attach to "
		       "the interface its IP traffic crosses as Ethernet or IP, or strip at the "
		       "origin's own sockets (hdrstrip attach --cgroup PATH --receive)",
		       d->name, arphrd_name(d->arphrd), d->arphrd);
		rc = EXIT_USAGE;
		goto out;
	}
	rc = EXIT_FAIL;
	r = bpffs_ensure(1);
	have_bpffs = !r;
	if (r)
		pr_warn("cannot mount bpffs at %s: %s (%d): attaching without pins (status, update "
			"and detach find the attachment from the %s; bpftool users will not find its "
			"maps pinned)",
			HS_BPFFS, errstr(r), r, target_word(d));
	r = dev_query(d, &st);
	if (r) {
		pr_err("cannot query the hooks of %s: %s (%d)", target_str(d), errstr(r), r);
		goto out;
	}
	pins_choose(d, &st);
	if (attach_hook_free(o, d, &st) || attach_maps(d, &st, have_bpffs, m, &shared, &live, &pi))
		goto out;

	/* The whole config this attach asks for, computed once: what was
	 * given, the defaults for new maps, the rest kept. The qdisc is
	 * hdrstrip's to remove later when this attach makes it. */
	make_qdisc = (o->hook == HS_HOOK_TC_INGRESS || o->hook == HS_HOOK_TC_EGRESS) &&
		     !tc_qdisc_exists(d->ifindex);
	settings_apply_opts(&o->set, &ap);
	ap.first = !shared;
	ap.flows = shared ? 0 : o->flows;
	ap.qdisc_created = make_qdisc ? 1 : -1;
	/* Everything but the switch: the new list goes to the idle slot. */
	r = apply_prepare(d, m, &run.l, run.t, &ap, &next);
	if (r) {
		pr_err("cannot write the header list into the maps of %s: %s (%d)", target_str(d),
		       errstr(r), r);
		goto out;
	}
	if (shared && make_qdisc && !live.qdisc_created) {
		/* Said before the qdisc is made, in the config a later command
		 * reads, so a killed attach leaves nothing nobody would remove. */
		live.qdisc_created = 1;
		marked = !config_write(m, &live);
	}
	if (!shared) {
		/* New maps: no packet sees them before the hook is attached. */
		r = apply_commit(m, &next);
		if (r) {
			pr_err("cannot write the config of %s: %s (%d)", target_str(d), errstr(r),
			       r);
			goto out;
		}
		if (o->set.cgroup) {
			/* Connections already open never pass the sockops
			 * program: say how many there are, as a counter. */
			preexisting = count_preexisting(d, next.ports, o->receive);
			counters_add(m, HS_CTR_conns_preexisting, preexisting);
		}
	}
	if (have_bpffs) {
		/* Pinned before the hook: a killed attach leaves pins the next
		 * command finds stale, with the qdisc they say was made. */
		r = pins_sync(d, &st, m, shared ? &live : NULL);
		if (r == -EBUSY) {
			if (!shared) {
				pins_elsewhere_err(d, &pi, "attach");
				goto out;
			}
			pr_warn("%s holds another namespace's pins: '%s' is attached without pins",
				d->pin_dir, d->name);
		} else if (r) {
			pr_warn("cannot pin the maps of %s in %s: %s (%d); attaching without pins",
				target_str(d), d->pin_dir, errstr(r), r);
		} else {
			pinned = !shared;
		}
	}

	/* Load and verify (most of an attach's time), then attach. */
	if (o->set.cgroup) {
		r = proxy_attach(d, m, o->hook);
		if (!r && !o->receive)
			warn_fastopen();
	} else {
		r = hook_attach(d, &ho, m, &mode, &legacy, &qcreated);
	}
	if (r) {
		pr_err("cannot attach %s to %s: %s (%d)%s", hs_hook_name(o->hook), target_str(d),
		       errstr(r), r,
		       r == -EEXIST || r == -EBUSY
			       ? "; another program holds that hook (see 'bpftool net' / 'xdp-loader status')"
		       : r == -EPERM || r == -EACCES
			       ? "; the verifier may have rejected the program: rerun with -v for its log"
			       : "");
		if (marked) {
			live.qdisc_created = 0;
			config_write(m, &live);
		}
		goto out;
	}
	pinned = 0; /* attached: the pins are its own */
	/* The switch, last: the new list applies to every hook at once. A
	 * killed attach before it left the new hook on the running list. */
	if (shared) {
		r = apply_commit(m, &next);
		if (r) {
			pr_err("%s is attached to '%s', but the new list could not be switched in: %s "
			       "(%d); the previous list is still in use: run 'hdrstrip update %s "
			       "--headers %s'",
			       hs_hook_name(o->hook), d->name, errstr(r), r, d->name,
			       o->set.headers);
			goto out;
		}
	}
	attach_report(o, d, &next, shared, mode, legacy, have_bpffs);
	if (o->receive)
		printf("origin mode: what the processes of %s receive on connections they accept "
		       "from now on is masked before they read it; %d connection%s accepted before "
		       "are left alone (conns_preexisting); a drop ends its connection (the agent, "
		       "'hdrstrip run', resets it)\n",
		       d->cgroup_path, preexisting, preexisting == 1 ? "" : "s");
	if (o->receive)
		warn_no_agent(&next, run.t);
	rc = EXIT_OK;
out:
	if (pinned)
		pins_remove(d); /* pinned for a hook that did not attach */
	list_run_end(&run);
	return rc;
}

int cmd_attach_check(int argc, char **argv)
{
	struct attach_opts o = defaults_attach;
	int rc = parse_attach(argc, argv, &o);

	return rc >= 0 ? rc : EXIT_OK;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_opts o = defaults_attach;
	int rc = parse_attach(argc, argv, &o);

	return rc >= 0 ? rc : do_attach(&o);
}
