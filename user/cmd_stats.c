// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * 'hdrstrip stats': the counters (and per-header hits) of the devices
 * hdrstrip is attached to (see view.h), once, in Prometheus' text format,
 * or as rates with --watch.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "hlist.h"
#include "slots.h"
#include "view.h"

static const char stats_usage[] =
	"Usage: hdrstrip stats [DEV | --cgroup PATH] [--json] [--per-header]\n"
	"       hdrstrip stats [DEV] --prometheus\n"
	"       hdrstrip stats [DEV] --watch SECS [--count N] [--all] [--json] [--per-header]\n"
	"\n"
	"Show hdrstrip's counters (summed over CPUs) for DEV, or for every device\n"
	"(the interfaces of this network namespace, and cgroups in proxy mode).\n"
	"  --json          a JSON array, one object a device (--watch: a line an update)\n"
	"  --cgroup PATH   proxy mode: the cgroup v2 directory, instead of DEV\n"
	"  --per-header    also the hits of each name in the list\n"
	"  --prometheus    every counter and per-header hit in Prometheus' text format\n"
	"                  (for node_exporter's textfile collector)\n"
	"  --watch SECS    show rates per second every SECS seconds until interrupted\n"
	"  --count N       with --watch: stop after N updates\n"
	"  --all           with --watch: every counter (by default the text shows those\n"
	"                  that changed; JSON has every one)\n";

/* What 'stats' was asked for: its defaults, then the command line. */
struct stats_opts {
	struct view_target target;
	double watch; /* seconds between updates; 0: no --watch */
	long count; /* updates before --watch stops; 0: until interrupted */
	int json;
	int per_header;
	int prometheus;
	int all; /* --watch: every counter, not only those that changed */
};

/* Every device, once, as text. */
static const struct stats_opts defaults_stats = {
	.target = { .dev = NULL, .cgroup = NULL },
	.watch = 0,
	.count = 0,
};

static const struct option stats_options[] = {
	OPTION_JSON, OPTION_PER_HEADER, OPTION_PROMETHEUS, OPTION_WATCH, OPTION_COUNT,
	OPTION_ALL,  OPTION_CGROUP,	OPTION_HELP,	   { 0 },
};

/* --watch SECS: -1 when good, else the exit code after the message. */
static int opt_watch(const char *arg, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(*out) || *out < 0.1 || *out > 86400) {
		pr_err("stats: --watch takes seconds between updates, 0.1 to 86400, not '%s'", arg);
		return EXIT_USAGE;
	}
	return -1;
}

/* --count N: -1 when good, else the exit code after the message. */
static int opt_count(const char *arg, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(arg, &end, 10);
	if (errno || end == arg || *end || *out < 1) {
		pr_err("stats: --count takes a number of updates (1 or more), not '%s'", arg);
		return EXIT_USAGE;
	}
	return -1;
}

/* The options that go together: -1, else the exit code after the message. */
static int stats_combine(const struct stats_opts *o)
{
	if (o->prometheus && (o->json || o->watch > 0 || o->per_header)) {
		pr_err("stats: --prometheus prints every counter and per-header hit; it goes with no "
		       "--json, --per-header or --watch");
		return usage_out(stats_usage, 0);
	}
	if ((o->count || o->all) && !(o->watch > 0)) {
		pr_err("stats: %s goes with --watch SECS", o->count ? "--count" : "--all");
		return usage_out(stats_usage, 0);
	}
	return -1;
}

/* -1 with @o filled in, else the exit code. */
static int parse_stats(int argc, char **argv, struct stats_opts *o)
{
	int c, rc = -1;

	while (rc < 0 && (c = getopt_long(argc, argv, "jh", stats_options, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_PER_HEADER:
			o->per_header = 1;
			break;
		case OPT_PROMETHEUS:
			o->prometheus = 1;
			break;
		case OPT_WATCH:
			rc = opt_watch(optarg, &o->watch);
			break;
		case OPT_COUNT:
			rc = opt_count(optarg, &o->count);
			break;
		case OPT_ALL:
			o->all = 1;
			break;
		case OPT_CGROUP:
			o->target.cgroup = optarg;
			break;
		default: /* --help, or an option stats does not take */
			return usage_out(stats_usage, c == 'h');
		}
	}
	/* Of several mistakes, the first said is: more than one DEV, options
	 * that do not go together, DEV with --cgroup. */
	if (rc < 0 && argc - optind <= 1)
		rc = stats_combine(o);
	return rc >= 0 ? rc : view_operand(stats_usage, argc, argv, &o->target);
}

/* The names of the active list and the hits of each, in rule order. */
struct hits {
	__u32 n;
	hs_rule_name *names;
	__u64 *hits;
	__u8 *action; /* enum hs_action of each rule */
	__u8 *dirs; /* enum hs_dir_set of each rule */
};

static void hits_free(struct hits *h)
{
	free(h->names);
	free(h->hits);
	free(h->action);
	free(h->dirs);
	memset(h, 0, sizeof(*h));
}

/*
 * Rule @i's key in JSON objects of names: its name, then its directions
 * when they are not the default (requests), as the list line spells them:
 * "x-debug response". A name may be listed once for each direction.
 */
static const char *hits_key(const struct hits *h, __u32 i, char *buf, size_t size)
{
	if (h->dirs[i] == HS_DIRSET_REQUEST)
		return h->names[i];
	snprintf(buf, size, "%s %s", h->names[i], hs_dir_set_name(h->dirs[i]));
	return buf;
}

#define HITS_KEY_MAX (sizeof(hs_rule_name) + 16)

static int hits_load(const struct found *f, struct hits *h)
{
	struct hs_trie *t = malloc(sizeof(*t));
	int r = -ENOMEM;

	memset(h, 0, sizeof(*h));
	h->names = calloc(HS_MAX_NAMES, sizeof(*h->names));
	h->hits = calloc(HS_MAX_NAMES, sizeof(*h->hits));
	h->action = calloc(HS_MAX_NAMES, sizeof(*h->action));
	h->dirs = calloc(HS_MAX_NAMES, sizeof(*h->dirs));
	if (!t || !h->names || !h->hits || !h->action || !h->dirs)
		goto out;
	hs_prefault(t, sizeof(*t)); /* the kernel writes it whole */
	r = trie_read_slot(&f->m, f->cfg.active_slot & 1, t);
	if (!r)
		r = hs_trie_names(t, h->names);
	if (r)
		goto out;
	/* A slot that cannot be read shows 0 hits, as it always has. */
	for (__u32 i = 0; i < t->n_rules && i < HS_MAX_NAMES; i++) {
		hits_read(&f->m, t->rules[i].hit_slot, &h->hits[i]);
		h->action[i] = t->rules[i].action;
		h->dirs[i] = hs_rule_dirs(t->rules[i].flags);
		h->n = i + 1;
	}
out:
	free(t);
	if (r)
		hits_free(h);
	return r;
}

/* Per-header hits of the active list: name -> count. */
static int print_hits(const struct found *f, int json)
{
	char key[HITS_KEY_MAX];
	struct hits h;
	int r = hits_load(f, &h);

	if (r)
		return r;
	if (json)
		printf(",\"per_header\":{");
	for (__u32 i = 0; i < h.n; i++) {
		int mask = h.action[i] == HS_ACT_MASK, req = h.dirs[i] == HS_DIRSET_REQUEST;

		if (json) {
			printf("%s", i ? "," : "");
			json_str(hits_key(&h, i, key, sizeof(key)));
			printf(":%llu", (unsigned long long)h.hits[i]);
			continue;
		}
		/* The default action and direction (mask, request) go unsaid;
		 * others are named. */
		printf("  %-40s %llu", h.names[i], (unsigned long long)h.hits[i]);
		if (!mask || !req)
			printf(" (%s%s%s)", mask ? "" : hs_action_name(h.action[i]),
			       !mask && !req ? ", " : "", req ? "" : hs_dir_set_name(h.dirs[i]));
		putchar('\n');
	}
	if (json)
		printf("}");
	hits_free(&h);
	return 0;
}

/*
 * Prometheus' text exposition format. The counters are the device's, shared
 * by every hook attached to it, so each series is labelled by device (and
 * network namespace, when it has a name) only; which hooks are attached is
 * a separate hdrstrip_attached_info series per hook, to join on when
 * needed. A hooks label on the counters would start new series whenever a
 * hook comes or goes, and a series per hook would count every packet once
 * per hook.
 */

/* A label value: backslash, double quote and newline escaped. */
static void prom_value(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			printf("\\n");
		else
			putchar(*s);
	}
	putchar('"');
}

static void prom_family(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* '{dev="eth0"' (and ',netns="NAME"'): the caller closes the set. */
/* How hook @k of @f is attached, for hdrstrip_attached_info's mode. */
static const char *hook_mode(const struct found *f, int k)
{
	switch (k) {
	case HS_HOOK_XDP:
		return mode_name(f->st.xdp_mode);
	case HS_HOOK_TC_INGRESS:
	case HS_HOOK_TC_EGRESS:
		return "clsact";
	case HS_HOOK_CGROUP:
		return "sockops+sk_msg";
	case HS_HOOK_RECEIVE:
		return "sockops+sk_skb";
	}
	return "?";
}

static void prom_dev_labels(const struct found *f)
{
	char ns[300];

	if (f->d.cgroup) {
		/* Proxy mode belongs to a cgroup, in no network namespace. */
		printf("{cgroup=");
		prom_value(f->d.cgroup_path);
		return;
	}
	printf("{dev=");
	prom_value(f->d.name);
	/* The agent reports devices of several namespaces. */
	netns_label(f->d.netns_ino, ns, sizeof(ns));
	if (ns[0]) {
		printf(",netns=");
		prom_value(ns);
	}
}

/* One sample of @f's: 'name{dev="eth0"} v'. */
static void prom_sample(const char *name, const struct found *f, unsigned long long v)
{
	printf("%s", name);
	prom_dev_labels(f);
	printf("} %llu\n", v);
}

/* The gauges of a device's header list, one family each. */
enum list_gauge {
	LIST_NAMES,
	LIST_GENERATION,
	LIST_UPDATED,
	LIST_OBSERVE,
	LIST_GAUGE_MAX,
};

static const struct {
	const char *name;
	const char *help;
} list_gauges[LIST_GAUGE_MAX] = {
	[LIST_NAMES] = { "hdrstrip_list_names", "Names in the device's active header list." },
	[LIST_GENERATION] = { "hdrstrip_list_generation",
			      "Header list changes since the device's first attach." },
	[LIST_UPDATED] = { "hdrstrip_list_updated_timestamp_seconds",
			   "Unix time of the device's last header list change." },
	[LIST_OBSERVE] = { "hdrstrip_observe_mode",
			   "1 in observe mode (--observe: nothing is masked, removed or dropped), "
			   "0 in enforce mode." },
};

static unsigned long long list_gauge(const struct hs_config *cfg, enum list_gauge g)
{
	switch (g) {
	case LIST_NAMES:
		return cfg->n_names;
	case LIST_GENERATION:
		return cfg->generation;
	case LIST_OBSERVE:
		return cfg->observe;
	case LIST_UPDATED:
	case LIST_GAUGE_MAX:
		break;
	}
	return cfg->updated_ns / 1000000000ULL;
}

int stats_prometheus(const struct found *f, int n)
{
	struct hs_counters *c = calloc(n ? n : 1, sizeof(*c));
	struct hits *h = calloc(n ? n : 1, sizeof(*h));
	char name[96];
	int rc = EXIT_OK;

	if (!c || !h) {
		free(c);
		free(h);
		pr_err("out of memory");
		return EXIT_FAIL;
	}
	/* Read everything first: a family's samples must come together. */
	for (int i = 0; i < n; i++) {
		int r = counters_read(&f[i].m, &c[i]);

		if (!r)
			r = hits_load(&f[i], &h[i]);
		if (r) {
			pr_err("cannot read the counters of '%s': %s (%d)", f[i].d.name, errstr(r),
			       r);
			rc = EXIT_FAIL;
		}
	}
	if (rc)
		goto out;
	prom_family("hdrstrip_build_info", "gauge", "1, labelled with the version of hdrstrip.");
	printf("hdrstrip_build_info{version=");
	prom_value(HDRSTRIP_VERSION);
	printf("} 1\n");
	prom_family("hdrstrip_devices", "gauge",
		    "Interfaces with hdrstrip attached in this network namespace, and cgroups "
		    "(proxy mode).");
	printf("hdrstrip_devices %d\n", n);
	prom_family("hdrstrip_attached_info", "gauge",
		    "1 for each hook hdrstrip is attached to; mode is native, skb or hw for XDP, "
		    "clsact for TC, sockops+sk_msg for a cgroup (proxy mode).");
	for (int i = 0; i < n; i++)
		for (int k = 0; k < HS_HOOK_MAX; k++) {
			if (!f[i].st.prog_id[k])
				continue;
			printf("hdrstrip_attached_info");
			prom_dev_labels(&f[i]);
			printf(",hook=\"%s\",mode=\"%s\"} 1\n", hs_hook_name(k),
			       hook_mode(&f[i], k));
		}
	for (int g = 0; g < LIST_GAUGE_MAX; g++) {
		prom_family(list_gauges[g].name, "gauge", list_gauges[g].help);
		for (int i = 0; i < n; i++)
			prom_sample(list_gauges[g].name, &f[i], list_gauge(&f[i].cfg, g));
	}
	for (size_t k = 0; k < HS_N_COUNTERS; k++) {
		snprintf(name, sizeof(name), "hdrstrip_%s_total", hs_counter_info[k].name);
		prom_family(name, "counter", hs_counter_info[k].help);
		for (int i = 0; i < n; i++)
			prom_sample(name, &f[i], ((const __u64 *)&c[i])[k]);
	}
	prom_family(
		"hdrstrip_header_hits_total", "counter",
		"Header field lines that matched each name of the list (prefix rules end in *), "
		"labelled with the name's action and the directions it applies to (request, "
		"response or both).");
	for (int i = 0; i < n; i++)
		for (__u32 k = 0; k < h[i].n; k++) {
			printf("hdrstrip_header_hits_total");
			prom_dev_labels(&f[i]);
			printf(",header=");
			prom_value(h[i].names[k]);
			printf(",action=\"%s\",direction=\"%s\"} %llu\n",
			       hs_action_name(h[i].action[k]), hs_dir_set_name(h[i].dirs[k]),
			       (unsigned long long)h[i].hits[k]);
		}
out:
	for (int i = 0; i < n; i++)
		hits_free(&h[i]);
	free(h);
	free(c);
	return rc;
}

/*
 * --watch: rates per second between two readings, every interval, until
 * interrupted or --count updates have been shown.
 */
static volatile sig_atomic_t watch_stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

/* One reading of one device. */
struct sample {
	char dev[sizeof(((struct dev *)0)->name)]; /* an interface or "cgroup-<id>" */
	int ifindex;
	__u32 generation;
	char hooks[48];
	struct hs_counters c;
	struct hits h;
};

struct reading {
	struct sample *s;
	int n;
	double t; /* CLOCK_MONOTONIC seconds */
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void reading_free(struct reading *rd)
{
	for (int i = 0; i < rd->n; i++)
		hits_free(&rd->s[i].h);
	free(rd->s);
	memset(rd, 0, sizeof(*rd));
}

/* Read every device (or DEV): returns an exit code, or -1 on success. */
static int reading_take(const struct stats_opts *o, struct reading *rd)
{
	struct found *f;
	int n, rc;

	memset(rd, 0, sizeof(*rd));
	rc = find_or_fail("stats", &o->target, view_all(&o->target), &f, &n);
	if (rc >= 0)
		return rc;
	rd->t = mono_now();
	rd->s = calloc(n ? n : 1, sizeof(*rd->s));
	if (!rd->s) {
		free_found(f, n);
		pr_err("out of memory");
		return EXIT_FAIL;
	}
	for (int i = 0; i < n; i++) {
		struct sample *s = &rd->s[rd->n];
		int r;

		snprintf(s->dev, sizeof(s->dev), "%s", f[i].d.name);
		s->ifindex = f[i].d.ifindex;
		s->generation = f[i].cfg.generation;
		for (int k = 0; k < HS_HOOK_MAX; k++)
			if (f[i].st.prog_id[k])
				snprintf(s->hooks + strlen(s->hooks),
					 sizeof(s->hooks) - strlen(s->hooks), "%s%s",
					 s->hooks[0] ? ", " : "", hs_hook_name(k));
		r = counters_read(&f[i].m, &s->c);
		if (!r && o->per_header)
			r = hits_load(&f[i], &s->h);
		if (r) {
			/* Detached between the query and the read: skip it. */
			hits_free(&s->h);
			continue;
		}
		rd->n++;
	}
	free_found(f, n);
	return -1;
}

static const struct sample *sample_find(const struct reading *rd, const struct sample *s)
{
	for (int i = 0; i < rd->n; i++)
		if (!strcmp(rd->s[i].dev, s->dev) && rd->s[i].ifindex == s->ifindex)
			return &rd->s[i];
	return NULL;
}

/* Hits before in @h of rule @idx of @cur (its name and directions), or -1
 * if the list had no such rule. */
static long long hits_before(const struct hits *h, const struct hits *cur, __u32 idx)
{
	const char *name = cur->names[idx];

	if (idx < h->n && h->dirs[idx] == cur->dirs[idx] && !strcmp(h->names[idx], name))
		return (long long)h->hits[idx];
	for (__u32 i = 0; i < h->n; i++)
		if (h->dirs[i] == cur->dirs[idx] && !strcmp(h->names[i], name))
			return (long long)h->hits[i];
	return -1;
}

/* Counters went backwards: the device was detached and attached again. */
static int sample_reset(const struct sample *prev, const struct sample *cur)
{
	const __u64 *a = (const __u64 *)&prev->c, *b = (const __u64 *)&cur->c;

	for (size_t k = 0; k < HS_N_COUNTERS; k++)
		if (b[k] < a[k])
			return 1;
	return 0;
}

static void watch_json(const struct sample *cur, const struct sample *prev, double dt,
		       const char *when)
{
	const __u64 *v = (const __u64 *)&cur->c, *pv = prev ? (const __u64 *)&prev->c : NULL;
	int reset = !prev || sample_reset(prev, cur);

	printf("{\"time\":\"%s\",\"interval\":%.6f,\"dev\":", when, dt);
	json_str(cur->dev);
	for (size_t k = 0; k < HS_N_COUNTERS; k++)
		printf(",\"%s\":%llu", hs_counter_info[k].name, (unsigned long long)v[k]);
	printf(",\"reset\":%s,\"rates\":{", reset ? "true" : "false");
	for (size_t k = 0; k < HS_N_COUNTERS; k++)
		printf("%s\"%s\":%.3f", k ? "," : "", hs_counter_info[k].name,
		       reset ? 0.0 : (double)(v[k] - pv[k]) / dt);
	printf("}");
	if (cur->h.names) {
		char key[HITS_KEY_MAX];

		printf(",\"per_header_rates\":{");
		for (__u32 i = 0; i < cur->h.n; i++) {
			long long before = reset ? -1 : hits_before(&prev->h, &cur->h, i);

			printf("%s", i ? "," : "");
			json_str(hits_key(&cur->h, i, key, sizeof(key)));
			printf(":%.3f", before < 0 ? 0.0 : (double)(cur->h.hits[i] - before) / dt);
		}
		printf("}");
	}
	printf("}\n");
}

/*
 * One device's update as text: the counters that changed since the last
 * (with @all, every one; a device new or reset shows those that are not
 * 0), then how many were left out.
 */
static void watch_text(const struct sample *cur, const struct sample *prev, double dt, int all)
{
	const __u64 *v = (const __u64 *)&cur->c, *pv = prev ? (const __u64 *)&prev->c : NULL;
	int reset = !prev || sample_reset(prev, cur);
	__u32 quiet = 0, still = 0;

	printf("%s (%s)%s\n", cur->dev, cur->hooks,
	       !prev   ? ": new, rates from the next update"
	       : reset ? ": counters were reset (attached again), rates from the next update"
		       : "");
	printf("  %-25s %20s %14s\n", "counter", "total", "per second");
	for (size_t k = 0; k < HS_N_COUNTERS; k++) {
		if (!all && (reset ? !v[k] : v[k] == pv[k])) {
			still++;
			continue;
		}
		if (reset)
			printf("  %-25s %20llu %14s\n", hs_counter_info[k].name,
			       (unsigned long long)v[k], "-");
		else
			printf("  %-25s %20llu %14.1f\n", hs_counter_info[k].name,
			       (unsigned long long)v[k], (double)(v[k] - pv[k]) / dt);
	}
	if (still)
		printf("  (%u counters %s; --all shows every one)\n", still,
		       reset ? "at 0" : "unchanged");
	if (!cur->h.names)
		return;
	printf("  %-38s %14s\n", "per header (names with hits)", "per second");
	for (__u32 i = 0; i < cur->h.n; i++) {
		long long before = reset ? -1 : hits_before(&prev->h, &cur->h, i);
		char key[HITS_KEY_MAX];
		const char *name = hits_key(&cur->h, i, key, sizeof(key));

		if (!cur->h.hits[i]) {
			quiet++;
			continue;
		}
		if (before < 0)
			printf("  %-38s %14s\n", name, "-");
		else
			printf("  %-38s %14.1f\n", name, (double)(cur->h.hits[i] - before) / dt);
	}
	if (quiet)
		printf("  (%u names without hits)\n", quiet);
}

static int watch_stats(const struct stats_opts *o)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct reading prev, cur;
	int tty = isatty(STDOUT_FILENO) && !o->json, rc;
	char when[40];

	rc = reading_take(o, &prev);
	if (rc >= 0)
		return rc;
	if (!prev.n && view_all(&o->target)) {
		pr_err("hdrstrip is not attached to any interface in this network namespace");
		reading_free(&prev);
		return EXIT_FAIL;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (long upd = 0; !o->count || upd < o->count; upd++) {
		struct timespec ts;
		double until = prev.t + o->watch, left;

		/* Sleep in slices, so a signal stops us at once. */
		while (!watch_stop && (left = until - mono_now()) > 0) {
			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
		if (watch_stop)
			break;
		rc = reading_take(o, &cur);
		if (rc >= 0) {
			reading_free(&prev);
			return rc; /* DEV went away: the error is printed */
		}
		format_time((__u64)time(NULL) * 1000000000ULL, when, sizeof(when));
		if (tty)
			printf("\033[H\033[2J");
		if (!o->json)
			printf("hdrstrip stats, every %gs, %s%s\n", o->watch, when,
			       tty ? " (Ctrl-C to stop)" : "");
		for (int i = 0; i < cur.n; i++) {
			const struct sample *p = sample_find(&prev, &cur.s[i]);

			if (o->json)
				watch_json(&cur.s[i], p, cur.t - prev.t, when);
			else
				watch_text(&cur.s[i], p, cur.t - prev.t, o->all);
		}
		if (!cur.n && !o->json)
			printf("hdrstrip is not attached to any interface in this network namespace\n");
		fflush(stdout);
		reading_free(&prev);
		prev = cur;
	}
	reading_free(&prev);
	return EXIT_OK;
}

static int do_stats(const struct stats_opts *o)
{
	struct found *f;
	int n, rc, printed = 0;

	if (o->watch > 0)
		return watch_stats(o);
	rc = find_or_fail("stats", &o->target, view_all(&o->target), &f, &n);
	if (rc >= 0)
		return rc;
	if (o->prometheus) {
		/* No device is a valid answer here: hdrstrip_devices 0. */
		rc = stats_prometheus(f, n);
		free_found(f, n);
		return rc;
	}
	if (!n && !o->json) {
		pr_err("hdrstrip is not attached to any interface in this network namespace");
		free_found(f, n);
		return EXIT_FAIL;
	}
	/* JSON is an array whatever was asked: one shape to parse. A device
	 * whose counters cannot be read (detached since it was found) is left
	 * out, so each separator goes before an object, never after one. */
	if (o->json)
		printf("[\n");
	for (int i = 0; i < n; i++) {
		struct hs_counters c = { 0 };
		const __u64 *v = (const __u64 *)&c;
		int r = counters_read(&f[i].m, &c);

		if (r) {
			pr_err("cannot read the counters of '%s': %s (%d)", f[i].d.name, errstr(r),
			       r);
			rc = EXIT_FAIL;
			continue;
		}
		if (o->json) {
			printf("%s{\"dev\":", printed++ ? ",\n" : "");
			json_str(f[i].d.name);
			for (size_t k = 0; k < HS_N_COUNTERS; k++)
				printf(",\"%s\":%llu", hs_counter_info[k].name,
				       (unsigned long long)v[k]);
			if (o->per_header && print_hits(&f[i], 1))
				rc = EXIT_FAIL;
			printf("}");
			continue;
		}
		printf("%s:\n", f[i].d.name);
		for (size_t k = 0; k < HS_N_COUNTERS; k++)
			printf("  %-25s %llu\n", hs_counter_info[k].name, (unsigned long long)v[k]);
		if (o->per_header) {
			printf(" per header:\n");
			if (print_hits(&f[i], 0))
				rc = EXIT_FAIL;
		}
	}
	if (o->json)
		printf("%s]\n", printed ? "\n" : "");
	free_found(f, n);
	return rc < 0 ? EXIT_OK : rc;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_opts o = defaults_stats;
	int rc;

	o.json = g_opts.json; /* hdrstrip -j stats */
	rc = parse_stats(argc, argv, &o);

	return rc >= 0 ? rc : do_stats(&o);
}
