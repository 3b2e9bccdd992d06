// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * 'hdrstrip run --config FILE': the agent a service manager or a container
 * runs in the foreground. The config names the attachments (interfaces, in
 * network namespaces of their own if need be, and cgroups for proxy mode)
 * with their lists and settings; the agent brings the kernel to it with
 * the commands' own code (attach, update, detach), adopts what is attached
 * already (an update, never a detach and attach: a restart opens no window
 * without filtering), applies a changed list or config as the atomic
 * update, and attaches again an interface that comes back. On SIGTERM it
 * leaves the attachments as they are (filtering outlives the agent) unless
 * --detach-on-exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "cli.h"
#include "hlist.h"
#include "http.h"
#include "loader.h"
#include "opts.h"
#include "view.h"

static const char agent_usage[] =
	"Usage: hdrstrip run --config FILE [--metrics-listen ADDR:PORT] [--events]\n"
	"                    [--detach-on-exit]\n"
	"       hdrstrip run --config FILE --check-config\n"
	"\n"
	"Run in the foreground as the agent of the attachments FILE names (see\n"
	"hdrstrip(8), AGENT): attach what is missing, adopt what is attached (update),\n"
	"apply a changed list or config as an atomic update, attach again an interface\n"
	"that comes back. SIGTERM or SIGINT: exit, leaving the attachments in place;\n"
	"SIGHUP: apply FILE and the lists again.\n"
	"  --config FILE      the agent's configuration\n"
	"  --check-config     check FILE and every list it names, then exit (0 or 2)\n"
	"  --metrics-listen ADDR:PORT\n"
	"                     serve /metrics (Prometheus), /healthz and /readyz over HTTP\n"
	"  --events           print every attachment's match events on standard output,\n"
	"                     one JSON object a line (as 'hdrstrip events --json'), and\n"
	"                     nothing else: the agent's own lines go to standard error\n"
	"  --detach-on-exit   detach everything FILE names on SIGTERM or SIGINT\n";

#define AGENT_MAX 64 /* attachments in one config */
#define AGENT_MAX_OPTS 20 /* --option value pairs of one attachment */

/*
 * --events: the events' stream, the agent's standard output as it started;
 * standard output itself then goes to standard error, so that the agent's
 * and the commands' own lines never mix with the JSON lines a log pipeline
 * reads. NULL without --events (the lines then go to standard output).
 */
static FILE *events_out;

/* Print what the rings of @r hold, to events_out. */
static void events_consume(struct ev_reader *r)
{
	FILE *saved = stdout;

	if (!r || !events_out)
		return;
	fflush(stdout);
	stdout = events_out;
	ev_reader_consume(r);
	fflush(events_out);
	stdout = saved;
}

/* Standard output for the events only (events_out): 0, or -1. */
static int events_stdout(void)
{
	int fd = dup(STDOUT_FILENO);

	if (fd < 0)
		return -1;
	events_out = fdopen(fd, "w");
	if (!events_out) {
		close(fd);
		return -1;
	}
	fflush(stdout);
	if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fclose(events_out);
		events_out = NULL;
		return -1;
	}
	setvbuf(events_out, NULL, _IOLBF, 0);
	return 0;
}

/* The agent's own lines, on standard output (the journal, the pod's log),
 * or with --events standard error. */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("hdrstrip: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

/* The keys of a section: the option each stands for. */
static const struct {
	const char *key;
	const char *opt; /* NULL: handled apart */
	int id; /* enum dev_opt of opt; 0 for the others */
	int attach_only;
	int iface_only; /* not a [cgroup]'s */
} agent_keys[] = {
	{ "headers", NULL, 0, 0, 0 },
	{ "hooks", NULL, 0, 0, 1 },
	{ "netns", NULL, 0, 0, 1 },
	{ "mode", NULL, 0, 0, 0 },
	{ "fold-underscore", NULL, 0, 0, 0 },
	{ "ports", "--ports", OPT_PORTS, 0, 0 },
	{ "on-error", "--on-error", OPT_ON_ERROR, 0, 0 },
	{ "untracked", "--untracked", OPT_UNTRACKED, 0, 0 },
	{ "urgent", "--urgent", OPT_URGENT, 0, 1 },
	{ "event-rate", "--event-rate", OPT_EVENT_RATE, 0, 0 },
	{ "nat", "--nat", OPT_NAT, 0, 1 },
	{ "vxlan-ports", "--vxlan-ports", OPT_VXLAN_PORTS, 0, 1 },
	{ "geneve-ports", "--geneve-ports", OPT_GENEVE_PORTS, 0, 1 },
	{ "udp-tunnel-ports", "--udp-tunnel-ports", OPT_UDP_TUNNEL_PORTS, 0, 1 },
	{ "receive", NULL, 0, 1, 0 }, /* [cgroup]: origin mode */
	{ "flows", "--flows", OPT_FLOWS, 1, 0 },
	{ "xdp-mode", "--xdp-mode", OPT_XDP_MODE, 1, 1 },
};

#define AGENT_N_KEYS (sizeof(agent_keys) / sizeof(agent_keys[0]))
#define AGENT_KEY_HEADERS 0 /* agent_keys[]' index of headers */
/* Each key once a section: its options fit. */
_Static_assert(AGENT_N_KEYS <= AGENT_MAX_OPTS, "a section's options fit agent_att");

/* One attachment of the config: a section. */
struct agent_att {
	int cgroup; /* [cgroup PATH], else [attach IFACE] */
	int line; /* the section's line */
	int key_line[AGENT_N_KEYS]; /* where each key was given (0: not) */
	int bad; /* a line of the section was refused */
	char target[PATH_MAX]; /* the interface's name or the cgroup's path */
	char netns[PATH_MAX]; /* "": the agent's own */
	char headers[PATH_MAX];
	char hooks[64]; /* space-separated; "" is xdp */
	/* Options attach and update both take, and attach's own. */
	const char *opt[AGENT_MAX_OPTS][2];
	int n_opt;
	const char *attach_opt[4][2];
	int n_attach_opt;
	char vals[AGENT_MAX_OPTS + 4][64];
	int waiting; /* the interface is not there: said once */
	int receive; /* [cgroup]: receive = yes, origin mode */
	/* [cgroup A | B ...]: the first of the paths that is a cgroup (the
	 * layouts of several cgroup managers); the commands act on it. */
	char path[PATH_MAX];
};

/* The cgroup @a names: its first path that is a cgroup v2 directory, into
 * @a->path (the first path when none is). 0, or the first one's -errno. */
static int att_cgroup(struct agent_att *a, struct dev *d)
{
	char buf[PATH_MAX], *save = NULL, *p;
	int r, first = 0;

	snprintf(buf, sizeof(buf), "%s", a->target);
	for (p = strtok_r(buf, "|", &save); p; p = strtok_r(NULL, "|", &save)) {
		while (*p == ' ' || *p == '\t')
			p++;
		for (char *e = p + strlen(p); e > p && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = 0;
		r = cgroup_resolve(p, d);
		if (!first) {
			first = r;
			snprintf(a->path, sizeof(a->path), "%s", p);
		}
		if (!r) {
			snprintf(a->path, sizeof(a->path), "%s", p);
			return 0;
		}
		dev_close(d);
	}
	return first ? first : -ENOENT;
}

struct agent_config {
	struct agent_att att[AGENT_MAX];
	int n;
};

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* "FILE:LINE", as the option parsers' messages start, in a config's words. */
struct at_line {
	char where[PATH_MAX + 16];
	struct dev_cmd c;
};

static const struct dev_cmd *at_line(struct at_line *at, const char *file, int line)
{
	snprintf(at->where, sizeof(at->where), "%s:%d", file, line);
	at->c = (struct dev_cmd){ .name = at->where, .config = 1 };
	return &at->c;
}

/* @val of the key that stands for option @id, as attach would take it: 0,
 * or -1 after the message (at @file:@line, naming the key). */
static int agent_value(const char *file, int line, int id, const char *val)
{
	struct at_line at;
	const struct dev_cmd *c = at_line(&at, file, line);
	__u64 ports[HS_PORT_WORDS];
	__u32 flows;
	long rate;
	int v, rc;

	switch (id) {
	case OPT_PORTS:
		rc = opt_ports(c, val, ports);
		break;
	case OPT_ON_ERROR:
		rc = opt_on_error(c, val, &v);
		break;
	case OPT_UNTRACKED:
		rc = opt_untracked(c, val, &v);
		break;
	case OPT_URGENT:
		rc = opt_urgent(c, val, &v);
		break;
	case OPT_EVENT_RATE:
		rc = opt_event_rate(c, val, &rate);
		break;
	case OPT_FLOWS:
		rc = opt_flows(c, val, &flows);
		break;
	case OPT_XDP_MODE:
		rc = opt_xdp_mode(c, val, &v);
		break;
	case OPT_NAT:
		rc = opt_nat(c, val, &v);
		break;
	case OPT_VXLAN_PORTS:
	case OPT_GENEVE_PORTS:
	case OPT_UDP_TUNNEL_PORTS: {
		struct tunnel_ports tp;

		memset(&tp, 0, sizeof(tp));
		rc = opt_tunnel_ports(c, val,
				      id == OPT_VXLAN_PORTS    ? HS_TUN_VXLAN
				      : id == OPT_GENEVE_PORTS ? HS_TUN_GENEVE
							       : HS_TUN_OPAQUE,
				      &tp);
		break;
	}
	default:
		rc = -1;
		break;
	}
	return rc < 0 ? 0 : -1;
}

/* @val into @buf (@size bytes): 0, or -1 after the message. */
static int agent_copy(const char *file, int line, const char *key, const char *val, char *buf,
		      size_t size)
{
	if (snprintf(buf, size, "%s", val) < (int)size)
		return 0;
	pr_err("%s:%d: the value of '%s' is too long", file, line, key);
	return -1;
}

/* One "key = value" line of section @a: 0, or -1 after the message. */
static int agent_key(const char *file, int line, struct agent_att *a, const char *key,
		     const char *val)
{
	size_t k;
	char *slot;

	for (k = 0; k < AGENT_N_KEYS && strcmp(agent_keys[k].key, key); k++)
		;
	if (k == AGENT_N_KEYS) {
		char known[512];
		size_t o = 0;

		/* The known keys, from the table. */
		for (size_t i = 0; i < AGENT_N_KEYS && o < sizeof(known); i++)
			o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s", i ? " " : "",
					      agent_keys[i].key);
		pr_err("%s:%d: unknown key '%s' (known: %s)", file, line, key, known);
		return -1;
	}
	if (a->key_line[k]) {
		pr_err("%s:%d: '%s' again in [%s %s] (first on line %d)", file, line, key,
		       a->cgroup ? "cgroup" : "attach", a->target, a->key_line[k]);
		return -1;
	}
	a->key_line[k] = line;
	if (!strcmp(key, "receive")) {
		if (!a->cgroup || (strcmp(val, "yes") && strcmp(val, "no"))) {
			pr_err("%s:%d: receive is yes or no, in a [cgroup] section (origin mode)",
			       file, line);
			return -1;
		}
		a->receive = !strcmp(val, "yes");
		return 0;
	}
	if (a->cgroup && agent_keys[k].iface_only) {
		pr_err("%s:%d: '%s' is for interfaces, not a [cgroup] (proxy mode)", file, line,
		       key);
		return -1;
	}
	if (!strcmp(key, "headers"))
		return agent_copy(file, line, key, val, a->headers, sizeof(a->headers));
	if (!strcmp(key, "netns"))
		return agent_copy(file, line, key, val, a->netns, sizeof(a->netns));
	if (!strcmp(key, "hooks")) {
		char buf[64], *save = NULL, *h;
		struct at_line at;
		int v;

		if (agent_copy(file, line, key, val, buf, sizeof(buf)))
			return -1;
		a->hooks[0] = 0;
		for (h = strtok_r(buf, " ,\t", &save); h; h = strtok_r(NULL, " ,\t", &save)) {
			if (opt_hook(at_line(&at, file, line), h, &v) >= 0)
				return -1;
			snprintf(a->hooks + strlen(a->hooks), sizeof(a->hooks) - strlen(a->hooks),
				 "%s%s", a->hooks[0] ? " " : "", h);
		}
		return 0;
	}
	if (!strcmp(key, "mode")) {
		if (strcmp(val, "enforce") && strcmp(val, "observe")) {
			pr_err("%s:%d: mode is enforce or observe, not '%s'", file, line, val);
			return -1;
		}
		key = !strcmp(val, "observe") ? "--observe" : "--enforce";
		a->opt[a->n_opt][0] = key;
		a->opt[a->n_opt++][1] = NULL;
		return 0;
	}
	if (!strcmp(key, "fold-underscore")) {
		if (strcmp(val, "yes") && strcmp(val, "no")) {
			pr_err("%s:%d: fold-underscore is yes or no, not '%s'", file, line, val);
			return -1;
		}
		if (!strcmp(val, "no")) {
			a->opt[a->n_opt][0] = "--no-fold-underscore";
			a->opt[a->n_opt++][1] = NULL;
		}
		return 0;
	}
	slot = a->vals[a->n_opt + a->n_attach_opt];
	if (agent_copy(file, line, key, val, slot, sizeof(a->vals[0])))
		return -1;
	if (!strcmp(key, "ports")) {
		/* "80, 8080" as hooks take lists: the blanks go. */
		char *w = slot;

		for (const char *r = slot; *r; r++)
			if (*r != ' ' && *r != '\t')
				*w++ = *r;
		*w = 0;
	}
	if (agent_value(file, line, agent_keys[k].id, slot))
		return -1;
	if (agent_keys[k].attach_only) {
		a->attach_opt[a->n_attach_opt][0] = agent_keys[k].opt;
		a->attach_opt[a->n_attach_opt++][1] = slot;
	} else {
		a->opt[a->n_opt][0] = agent_keys[k].opt;
		a->opt[a->n_opt++][1] = slot;
	}
	return 0;
}

/* The namespace @netns (agent_att's) names, as a path: "" is the agent's
 * own, a name one in /run/netns. */
static void netns_path(const char *netns, char *buf, size_t size)
{
	if (!*netns)
		snprintf(buf, size, "/proc/self/ns/net");
	else if (!strncmp(netns, "/var/run/", 9))
		snprintf(buf, size, "/run/%s", netns + 9);
	else if (strchr(netns, '/'))
		snprintf(buf, size, "%s", netns);
	else
		snprintf(buf, size, "/run/netns/%s", netns);
}

/* Do @a and @b name one place: a cgroup's path, or an interface in one
 * network namespace (its path, or the namespace itself when both are
 * there to compare)? */
static int same_target(const struct agent_att *a, const struct agent_att *b)
{
	char pa[PATH_MAX], pb[PATH_MAX];
	struct stat sa, sb;

	if (a->cgroup != b->cgroup)
		return 0;
	if (a->cgroup) {
		if (realpath(a->target, pa) && realpath(b->target, pb))
			return !strcmp(pa, pb);
		snprintf(pa, sizeof(pa), "%s", a->target);
		snprintf(pb, sizeof(pb), "%s", b->target);
		for (char *p = pa + strlen(pa); p > pa + 1 && p[-1] == '/'; p--)
			p[-1] = 0;
		for (char *p = pb + strlen(pb); p > pb + 1 && p[-1] == '/'; p--)
			p[-1] = 0;
		return !strcmp(pa, pb);
	}
	if (strcmp(a->target, b->target))
		return 0;
	netns_path(a->netns, pa, sizeof(pa));
	netns_path(b->netns, pb, sizeof(pb));
	if (!stat(pa, &sa) && !stat(pb, &sb))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return !strcmp(pa, pb);
}

/* Two sections for one interface (whatever hooks each names: the hooks of
 * an interface share its list, and each section would detach the other's)
 * or one cgroup: the second is refused at its line. */
static int agent_dups(const char *file, const struct agent_config *c)
{
	int bad = 0;

	for (int i = 1; i < c->n; i++)
		for (int j = 0; j < i; j++) {
			const struct agent_att *a = &c->att[i];

			if (!same_target(&c->att[j], a))
				continue;
			if (a->cgroup)
				pr_err("%s:%d: [cgroup %s] again (first on line %d): one section a "
				       "cgroup",
				       file, a->line, a->target, c->att[j].line);
			else
				pr_err("%s:%d: [attach %s] again (first on line %d, the same network "
				       "namespace): one section names every hook of an interface "
				       "(hooks = xdp, tc-egress)",
				       file, a->line, a->target, c->att[j].line);
			bad = 1;
			break;
		}
	return bad;
}

/* Read @file into @c: 0, or -1 after the messages (FILE:LINE:). */
static int agent_parse(const char *file, struct agent_config *c)
{
	FILE *f = fopen(file, "r");
	char buf[PATH_MAX + 64];
	struct agent_att *a = NULL;
	int line = 0, bad = 0;

	memset(c, 0, sizeof(*c));
	if (!f) {
		pr_err("cannot read %s: %s", file, strerror(errno));
		return -1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *s = trim(buf), *eq, kind[16], name[PATH_MAX];

		line++;
		if (!*s || *s == '#')
			continue;
		if (*s == '[') {
			if (s[strlen(s) - 1] != ']' ||
			    sscanf(s, "[%15s %4095[^]]]", kind, name) != 2 ||
			    (strcmp(kind, "attach") && strcmp(kind, "cgroup"))) {
				pr_err("%s:%d: expected [attach IFACE] or [cgroup PATH], not '%s'",
				       file, line, s);
				bad = 1;
				a = NULL;
				continue;
			}
			if (c->n >= AGENT_MAX) {
				pr_err("%s:%d: more than %d attachments", file, line, AGENT_MAX);
				bad = 1;
				break;
			}
			a = &c->att[c->n++];
			a->cgroup = !strcmp(kind, "cgroup");
			a->line = line;
			snprintf(a->target, sizeof(a->target), "%s", trim(name));
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			pr_err("%s:%d: expected 'key = value', not '%s'", file, line, s);
			bad = 1;
			continue;
		}
		if (!a) {
			pr_err("%s:%d: a key before any [attach IFACE] or [cgroup PATH]", file,
			       line);
			bad = 1;
			continue;
		}
		*eq = 0;
		if (agent_key(file, line, a, trim(s), trim(eq + 1))) {
			a->bad = 1;
			bad = 1;
		}
	}
	fclose(f);
	for (int i = 0; i < c->n; i++)
		if (!c->att[i].headers[0]) {
			pr_err("%s:%d: [%s %s] has no 'headers = FILE'", file, c->att[i].line,
			       c->att[i].cgroup ? "cgroup" : "attach", c->att[i].target);
			bad = 1;
		}
	if (!bad && !c->n) {
		pr_err("%s: no attachment ([attach IFACE] or [cgroup PATH] sections)", file);
		bad = 1;
	}
	bad |= agent_dups(file, c);
	return bad ? -1 : 0;
}

/* ---- running the commands ---- */

static int self_netns = -1; /* the agent's own network namespace */

/* Into @a's network namespace (nothing for the agent's own): 0, or -1. */
static int att_netns_enter(const struct agent_att *a)
{
	char path[PATH_MAX];
	int entering, r;

	if (!a->netns[0])
		return 0;
	r = netns_enter(a->netns, path, sizeof(path), &entering);
	errno = -r;
	return r ? -1 : 0;
}

static void netns_leave(const struct agent_att *a)
{
	if (a->netns[0] && setns(self_netns, CLONE_NEWNET))
		pr_warn("cannot return to the agent's network namespace: %s", strerror(errno));
}

/* The command line of @cmd on @a with @hook (NULL: none) and the options
 * (all of them with @attach), into @argv (64 entries): its argc. */
static int agent_argv(const struct agent_att *a, const char *cmd, const char *hook, int with_list,
		      int attach, const char **argv)
{
	int argc = 0;

	argv[argc++] = cmd;
	if (a->cgroup) {
		argv[argc++] = "--cgroup";
		argv[argc++] = a->path[0] ? a->path : a->target;
	} else {
		argv[argc++] = a->target;
	}
	if (hook) {
		argv[argc++] = "--hook";
		argv[argc++] = hook;
	}
	if (with_list) {
		argv[argc++] = "--headers";
		argv[argc++] = a->headers;
		for (int i = 0; i < a->n_opt; i++) {
			argv[argc++] = a->opt[i][0];
			if (a->opt[i][1])
				argv[argc++] = a->opt[i][1];
		}
		for (int i = 0; attach && i < a->n_attach_opt; i++) {
			argv[argc++] = a->attach_opt[i][0];
			argv[argc++] = a->attach_opt[i][1];
		}
		if (attach && a->receive)
			argv[argc++] = "--receive";
	}
	argv[argc] = NULL;
	return argc;
}

/* Run command @cmd on @a (agent_argv()). Returns its exit code. */
static int agent_cmd(const struct agent_att *a, const char *cmd, const char *hook, int with_list,
		     int attach)
{
	const char *argv[64];
	int argc = agent_argv(a, cmd, hook, with_list, attach, argv);

	optind = 0; /* getopt from scratch for each command */
	fflush(stdout);
	if (!strcmp(cmd, "attach"))
		return cmd_attach(argc, (char **)argv);
	if (!strcmp(cmd, "update"))
		return cmd_update(argc, (char **)argv);
	return cmd_detach(argc, (char **)argv);
}

static int hook_wanted(const struct agent_att *a, int h)
{
	char buf[64], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", a->hooks[0] ? a->hooks : "xdp");
	for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (hook_parse(w) == h)
			return 1;
	return 0;
}

/*
 * Bring @a to the config: attach its missing hooks (the first with every
 * setting, then the rest), with @update an update of what was attached
 * already (the list and settings), detach hooks it does not name. Returns
 * 0, or the first failing command's exit code.
 */
static int agent_apply(struct agent_att *a, int update)
{
	struct dev_state st;
	struct dev d;
	int r, rc = 0, n;

	if (att_netns_enter(a)) {
		if (!a->waiting)
			pr_warn("[%s %s]: cannot enter network namespace '%s' (%s): waiting for it",
				a->cgroup ? "cgroup" : "attach", a->target, a->netns,
				strerror(errno));
		a->waiting = 1;
		return 0;
	}
	r = a->cgroup ? att_cgroup(a, &d) : dev_resolve(a->target, &d);
	if (r) {
		if (!a->waiting)
			pr_warn("[%s %s]: %s: waiting for it", a->cgroup ? "cgroup" : "attach",
				a->target, r == -ENODEV ? "no such interface yet" : strerror(-r));
		a->waiting = 1;
		netns_leave(a);
		return 0;
	}
	if (a->waiting)
		say("[%s %s]: there now", a->cgroup ? "cgroup" : "attach", a->target);
	a->waiting = 0;
	r = dev_query(&d, &st);
	dev_close(&d);
	if (r) {
		netns_leave(a);
		return EXIT_FAIL;
	}
	n = dev_attached_hooks(&st);
	if (a->cgroup && n && !st.prog_id[a->receive ? HS_HOOK_RECEIVE : HS_HOOK_CGROUP]) {
		/* The other mode: a cgroup changes mode only by a detach. */
		say("[cgroup %s]: attached in %s mode, the config says %s mode: detaching and "
		    "attaching again",
		    a->target, a->receive ? "proxy" : "origin", a->receive ? "origin" : "proxy");
		rc = agent_cmd(a, "detach", NULL, 0, 0);
		n = 0;
	}
	if (n && update)
		rc = agent_cmd(a, "update", NULL, 1, 0);
	if (a->cgroup) {
		if (!n)
			rc = agent_cmd(a, "attach", NULL, 1, 1);
		netns_leave(a);
		return rc;
	}
	for (int h = 0; h < HS_HOOK_CGROUP; h++) {
		if (hook_wanted(a, h) && !st.prog_id[h]) {
			r = agent_cmd(a, "attach", hs_hook_name(h), 1, 1);
			if (r && !rc)
				rc = r;
		} else if (!hook_wanted(a, h) && st.prog_id[h]) {
			r = agent_cmd(a, "detach", hs_hook_name(h), 0, 0);
			if (r && !rc)
				rc = r;
		}
	}
	netns_leave(a);
	return rc;
}

/* Origin mode: reset the connections of @a a drop ended (the sk_skb
 * program stops passing their bytes; the reset tells both ends). */
static void agent_reset_ended(const struct agent_att *a)
{
	struct dev_state st;
	struct dev d;
	int n = 0;

	if (!a->path[0] || cgroup_resolve(a->path, &d))
		return;
	if (!dev_query(&d, &st) && st.prog_id[HS_HOOK_RECEIVE])
		n = origin_reset_ended(&d, st.prog_id[HS_HOOK_RECEIVE]);
	dev_close(&d);
	if (n > 0)
		say("[cgroup %s]: reset %d connection%s a drop ended", a->path, n,
		    n == 1 ? "" : "s");
}

/* ---- what to watch ---- */

/* A cheap digest of a file's bytes (FNV-1a), 0 when it cannot be read. */
static unsigned long long file_digest(const char *path)
{
	unsigned long long h = 1469598103934665603ULL;
	unsigned char buf[4096];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		for (size_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
	fclose(f);
	return h;
}

/* The digest of the config and every list it names. */
static unsigned long long config_digest(const char *file, const struct agent_config *c)
{
	unsigned long long h = file_digest(file);

	for (int i = 0; i < c->n; i++)
		h = h * 31 + file_digest(c->att[i].headers);
	return h;
}

/* Watch the directories of @path (and its link's target, for a ConfigMap's
 * "..data" swap, which renames in the directory itself). */
static void watch_dir_of(int fd, const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	inotify_add_watch(fd, dirname(buf),
			  IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE |
				  IN_ATTRIB);
}

static void watch_all(int fd, const char *file, const struct agent_config *c)
{
	watch_dir_of(fd, file);
	for (int i = 0; i < c->n; i++)
		watch_dir_of(fd, c->att[i].headers);
}

/* Link events of the network namespace @a is in (the agent's own for
 * NULL): a socket, or -1. */
static int link_socket(const struct agent_att *a)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
	int fd;

	if (a && att_netns_enter(a))
		return -1;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		fd = -1;
	}
	if (a)
		netns_leave(a);
	return fd;
}

/* sd_notify(3)'s protocol, for Type=notify: a datagram to $NOTIFY_SOCKET. */
static void notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0; /* an abstract socket */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Every attachment; @update: with an update of what is attached. */
static int apply_all(struct agent_config *c, int update)
{
	int rc = 0;

	for (int i = 0; i < c->n; i++) {
		int r = agent_apply(&c->att[i], update);

		if (r && !rc)
			rc = r;
	}
	return rc;
}

/* ---- the HTTP endpoint ---- */

/* What the agent reports of itself. */
struct agent_stats {
	const struct agent_config *cfg;
	unsigned long long reloads; /* config or list changes applied */
	unsigned long long reload_failures; /* ... of which some part failed */
	double last_reload; /* Unix time of the last one, 0: none yet */
	int last_ok; /* the last apply (start, reload or reconcile) succeeded */
};

/* Add the devices hdrstrip is attached to in the network namespace we are
 * in (with @cgroups, the cgroups too) to *@all. */
static void collect_found(struct found **all, int *n_all, int cgroups)
{
	struct view_target every = { 0 };
	struct found *f = NULL, *grown;
	int n = 0;

	if (find_or_fail("run", &every, cgroups, &f, &n) != -1 || !n) {
		free_found(f, n);
		return;
	}
	grown = realloc(*all, (size_t)(*n_all + n) * sizeof(*grown));
	if (!grown) {
		free_found(f, n);
		return;
	}
	memcpy(grown + *n_all, f, (size_t)n * sizeof(*f));
	free(f); /* the entries moved, with their descriptors */
	*all = grown;
	*n_all += n;
}

static void prom_agent(const char *name, const char *type, const char *help, double v)
{
	printf("# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, v);
}

/* Every device of the agent's network namespace (and every cgroup) and of
 * every namespace @c names, into *@all. */
static void collect_config(const struct agent_config *c, struct found **all, int *n_all)
{
	collect_found(all, n_all, 1);
	for (int i = 0; i < c->n; i++) {
		int seen = 0;

		for (int j = 0; j < i && !seen; j++)
			seen = !strcmp(c->att[j].netns, c->att[i].netns);
		if (!c->att[i].netns[0] || seen || att_netns_enter(&c->att[i]))
			continue;
		collect_found(all, n_all, 0);
		netns_leave(&c->att[i]);
	}
}

/* --events: a reader of the ring buffers of every device collect_config()
 * finds now, after what @old still holds is printed. */
static struct ev_reader *events_again(const struct agent_config *c, struct ev_reader *old)
{
	struct ev_reader *r = NULL;
	struct found *all = NULL;
	int n = 0;

	events_consume(old);
	ev_reader_free(old);
	collect_config(c, &all, &n);
	if (ev_reader_open(all, n, 1, 1, &r))
		r = NULL;
	free_found(all, n);
	return r;
}

/* /metrics: what 'stats --prometheus' prints for every device of the
 * agent's network namespace and of every namespace its config names, and
 * the agent's own series. */
static int metrics_text(const struct agent_stats *as, char **body)
{
	const struct agent_config *c = as->cfg;
	struct found *all = NULL;
	size_t len = 0;
	int n_all = 0, waiting = 0, rc;
	FILE *m, *saved;

	collect_config(c, &all, &n_all);
	for (int i = 0; i < c->n; i++)
		waiting += c->att[i].waiting;
	m = open_memstream(body, &len);
	if (!m) {
		free_found(all, n_all);
		return 500;
	}
	fflush(stdout);
	saved = stdout;
	stdout = m;
	rc = stats_prometheus(all, n_all);
	prom_agent("hdrstrip_agent_attachments", "gauge",
		   "Attachments ([attach] and [cgroup] sections) in the agent's config.", c->n);
	prom_agent("hdrstrip_agent_attachments_waiting", "gauge",
		   "Attachments whose interface, cgroup or network namespace is not there yet.",
		   waiting);
	prom_agent("hdrstrip_agent_reloads_total", "counter",
		   "Changes of the config or of a list the agent applied.", (double)as->reloads);
	prom_agent("hdrstrip_agent_reload_failures_total", "counter",
		   "Changes that were not applied whole: a config or list that does not parse, or "
		   "an update that failed (the running list stays).",
		   (double)as->reload_failures);
	prom_agent("hdrstrip_agent_last_reload_timestamp_seconds", "gauge",
		   "Unix time of the last change applied (0: none since the agent started).",
		   as->last_reload);
	prom_agent("hdrstrip_agent_last_apply_success", "gauge",
		   "1 when the agent's last pass over its config (start, change or check) "
		   "succeeded.",
		   as->last_ok);
	fflush(stdout);
	stdout = saved;
	fclose(m);
	free_found(all, n_all);
	return rc == EXIT_OK ? 200 : 500;
}

static int agent_http(void *cls, const char *url, char **body, const char **ctype)
{
	const struct agent_stats *as = cls;
	int waiting = 0;

	if (!strcmp(url, "/metrics")) {
		*ctype = "text/plain; version=0.0.4; charset=utf-8";
		return metrics_text(as, body);
	}
	if (!strcmp(url, "/healthz")) {
		/* Answered from the agent's loop: an answer is a loop that runs. */
		*body = strdup("ok\n");
		return 200;
	}
	if (!strcmp(url, "/readyz")) {
		for (int i = 0; i < as->cfg->n; i++)
			waiting += as->cfg->att[i].waiting;
		if (!waiting && as->last_ok) {
			*body = strdup("ready\n");
			return 200;
		}
		if (asprintf(body, "not ready: %d attachment%s waiting%s\n", waiting,
			     waiting == 1 ? "" : "s",
			     as->last_ok ? "" : ", the last apply failed (see the log)") < 0)
			*body = NULL;
		return 503;
	}
	*body = strdup("not found: /metrics, /healthz, /readyz\n");
	return 404;
}

/*
 * --check-config: after agent_parse() (@bad: it refused lines, each said at
 * its own line), every list the sections name, so that one run reports
 * every error of the config.
 */
static int check_config(const char *file, const struct agent_config *c, int bad)
{
	for (int i = 0; i < c->n; i++) {
		const struct agent_att *a = &c->att[i];
		const char *argv[64], *hook = NULL;
		struct hs_list_opts lo;
		struct hs_list l;
		int argc;

		/* The settings as attach takes them: each value was checked at
		 * its line; this is a backstop for their combination. */
		for (int h = 0; !a->cgroup && h < HS_HOOK_CGROUP && !hook; h++)
			if (hook_wanted(a, h))
				hook = hs_hook_name(h);
		argc = agent_argv(a, "attach", hook, 1, 1, argv);
		optind = 0;
		if (!a->bad && a->headers[0] && cmd_attach_check(argc, (char **)argv) != EXIT_OK) {
			pr_err("%s:%d: [%s %s]: attach refuses these settings (above)", file,
			       a->line, a->cgroup ? "cgroup" : "attach", a->target);
			bad = 1;
		}
		if (!a->headers[0])
			continue;
		hs_list_opts_default(&lo);
		lo.warn = list_warn;
		lo.builtin = 1; /* as attach reads it */
		if (load_list(a->headers, &lo, &l) == EXIT_OK) {
			hs_list_free(&l);
			continue;
		}
		pr_err("%s:%d: headers = %s: the list does not load (above)", file,
		       a->key_line[AGENT_KEY_HEADERS], a->headers);
		bad = 1;
	}
	if (bad)
		return EXIT_USAGE;
	printf("%s: %d attachment%s, every list compiles, every setting is valid\n", file, c->n,
	       c->n == 1 ? "" : "s");
	return EXIT_OK;
}

int cmd_agent(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'k' },
		{ "detach-on-exit", no_argument, NULL, 'd' },
		{ "metrics-listen", required_argument, NULL, 'm' },
		{ "events", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct agent_config cfg, next;
	struct agent_stats as = { .cfg = &cfg };
	struct http_srv *http = NULL;
	struct ev_reader *events = NULL;
	const char *file = NULL, *listen = NULL;
	int check = 0, detach = 0, want_events = 0, opt, ifd, sfd, nfd[AGENT_MAX + 1], n_nfd = 0,
	    rc;
	unsigned long long digest;
	double dirty_at = 0, reconcile_at;
	sigset_t mask;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			file = optarg;
			break;
		case 'k':
			check = 1;
			break;
		case 'd':
			detach = 1;
			break;
		case 'm':
			listen = optarg;
			break;
		case 'e':
			want_events = 1;
			break;
		default:
			return usage_out(agent_usage, opt == 'h');
		}
	}
	if (!file || optind != argc) {
		pr_err("run: %s", file ? "no operand is taken" : "give --config FILE");
		return usage_out(agent_usage, 0);
	}
	rc = agent_parse(file, &cfg);
	if (check)
		return check_config(file, &cfg, rc != 0);
	if (rc)
		return EXIT_USAGE;
	if (require_root("run"))
		return EXIT_FAIL;
	g_opts.agent = 1; /* attach: the agent resets what a drop ends */
	self_netns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (self_netns < 0 || ifd < 0 || sfd < 0) {
		pr_err("run: cannot set up (netns, inotify, signalfd): %s", strerror(errno));
		return EXIT_FAIL;
	}
	if (want_events && events_stdout()) {
		pr_err("run: cannot set standard output apart for --events: %s", strerror(errno));
		return EXIT_FAIL;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (listen) {
		http = http_start(listen, agent_http, &as);
		if (!http)
			return EXIT_FAIL;
	}
	watch_all(ifd, file, &cfg);
	nfd[n_nfd++] = link_socket(NULL);
	for (int i = 0; i < cfg.n; i++)
		if (cfg.att[i].netns[0] && n_nfd <= AGENT_MAX)
			nfd[n_nfd++] = link_socket(&cfg.att[i]);
	digest = config_digest(file, &cfg);
	rc = apply_all(&cfg, 1);
	as.last_ok = !rc;
	if (want_events)
		events = events_again(&cfg, NULL);
	say("run: %d attachment%s from %s%s%s%s", cfg.n, cfg.n == 1 ? "" : "s", file,
	    rc ? " (some failed: see above; retried when something changes)" : "",
	    listen ? "; metrics at " : "", listen ? listen : "");
	notify("READY=1");
	reconcile_at = mono() + 2;
	for (;;) {
		struct pollfd p[AGENT_MAX + 5];
		struct signalfd_siginfo si;
		char buf[8192];
		int np = 0, link = 0, sig = 0;

		p[np++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		p[np++] = (struct pollfd){ .fd = ifd, .events = POLLIN };
		for (int i = 0; i < n_nfd; i++)
			p[np++] = (struct pollfd){ .fd = nfd[i], .events = POLLIN };
		if (http)
			p[np++] = (struct pollfd){ .fd = http_fd(http), .events = POLLIN };
		if (events)
			p[np++] = (struct pollfd){ .fd = ev_reader_fd(events), .events = POLLIN };
		poll(p, (nfds_t)np, 100);
		if (http)
			http_run(http);
		/* Every turn (at most 100 ms): the programs wake a reader only
		 * once a quarter of a ring waits. */
		events_consume(events);
		if (read(sfd, &si, sizeof(si)) == sizeof(si))
			sig = (int)si.ssi_signo;
		if (sig == SIGTERM || sig == SIGINT)
			break;
		while (read(ifd, buf, sizeof(buf)) > 0)
			dirty_at = mono();
		for (int i = 0; i < n_nfd; i++)
			while (nfd[i] >= 0 && recv(nfd[i], buf, sizeof(buf), 0) > 0)
				link = 1;
		if (sig == SIGHUP)
			dirty_at = mono() - 1;
		/* A change settles for 100 ms (an editor's or a ConfigMap's
		 * several steps), then counts once. */
		if (dirty_at && mono() - dirty_at >= 0.1) {
			unsigned long long now;

			dirty_at = 0;
			if (agent_parse(file, &next)) {
				pr_warn("run: %s is not applied (see above); the running config stays",
					file);
				as.reloads++;
				as.reload_failures++;
				as.last_reload = (double)time(NULL);
			} else {
				now = config_digest(file, &next);
				if (now != digest || sig == SIGHUP) {
					digest = now;
					cfg = next;
					watch_all(ifd, file, &cfg);
					say("run: applying %s and its lists", file);
					rc = apply_all(&cfg, 1);
					as.last_ok = !rc;
					as.reloads++;
					as.reload_failures += rc != 0;
					as.last_reload = (double)time(NULL);
				}
			}
		}
		/* Origin mode: the connections a drop ended, reset at once. */
		for (int i = 0; i < cfg.n; i++)
			if (cfg.att[i].cgroup && cfg.att[i].receive)
				agent_reset_ended(&cfg.att[i]);
		if (link || mono() >= reconcile_at) {
			/* An interface that came back, or a hook someone took off. */
			as.last_ok = !apply_all(&cfg, 0);
			reconcile_at = mono() + 2;
			/* Attachments come and go (an interface, a reload): read
			 * the rings of those there are now. */
			if (want_events)
				events = events_again(&cfg, events);
		}
		notify("WATCHDOG=1");
	}
	notify("STOPPING=1");
	http_stop(http);
	events_consume(events);
	ev_reader_free(events);
	rc = EXIT_OK;
	if (detach)
		for (int i = 0; i < cfg.n; i++) {
			struct agent_att *a = &cfg.att[i];

			if (att_netns_enter(a))
				continue;
			if (agent_cmd(a, "detach", NULL, 0, 0))
				rc = EXIT_FAIL;
			netns_leave(a);
		}
	else
		say("run: exiting; the attachments stay (--detach-on-exit detaches them)");
	return rc;
}
