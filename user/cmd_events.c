// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * 'hdrstrip events': the match events of the devices hdrstrip is attached
 * to (see view.h), read from each device's ring buffer: what is buffered,
 * or (--follow) each event as it comes until interrupted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cli.h"
#include "slots.h"
#include "view.h"

static const char events_usage[] =
	"Usage: hdrstrip events [DEV | --cgroup PATH] [--json] [--follow]\n"
	"\n"
	"Print the match events of DEV, or of every device (the interfaces of this\n"
	"network namespace, and cgroups in proxy mode): one per matched field line and\n"
	"one per packet a policy dropped, with its time, hook, addresses and ports, the\n"
	"rule's name, its action and, for a drop, the reason. Events are read once: what\n"
	"this prints is gone from the buffer (one reader at a time).\n"
	"  --json          one JSON object per line (fields in hdrstrip(8))\n"
	"  --follow        go on printing events as they come, until interrupted\n"
	"  --cgroup PATH   proxy mode: the cgroup v2 directory, instead of DEV\n";

enum events_opt {
	OPT_FOLLOW = 'f',
};

struct events_opts {
	struct view_target target;
	int json;
	int follow;
};

static const struct events_opts defaults_events = {
	.target = { .dev = NULL, .cgroup = NULL },
};

static const struct option events_options[] = {
	OPTION_JSON, { "follow", no_argument, NULL, OPT_FOLLOW }, OPTION_CGROUP, OPTION_HELP, { 0 },
};

/* -1 with @o filled in, else the exit code. */
static int parse_events(int argc, char **argv, struct events_opts *o)
{
	int c;

	while ((c = getopt_long(argc, argv, "jfh", events_options, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_FOLLOW:
			o->follow = 1;
			break;
		case OPT_CGROUP:
			o->target.cgroup = optarg;
			break;
		default: /* --help, or an option events does not take */
			return usage_out(events_usage, c == 'h');
		}
	}
	return view_operand(events_usage, argc, argv, &o->target);
}

/* One device's ring buffer, and the names of its lists to print rules by:
 * those of both trie slots (the active list and the one before it). */
struct ev_source {
	char dev[sizeof(((struct dev *)0)->name)];
	char cgroup[sizeof(((struct dev *)0)->cgroup_path)];
	char netns[64]; /* the device's namespace when not this one's ("" here) */
	int trie_fd; /* the device's trie map, for names (the reader's own) */
	int events_fd; /* its ring buffer (the reader's own) */
	struct hs_trie *t; /* scratch to read a slot into */
	hs_rule_name *names[HS_TRIE_SLOTS];
	__u32 gen[HS_TRIE_SLOTS]; /* each slot's generation, 0: not read */
	int json;
};

/* The ring buffers of a set of devices, read as one (ev_reader_open()). */
struct ev_reader {
	struct ring_buffer *rb;
	struct ev_source *src;
	int n;
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* Read both slots' names again: an update made a generation we lack. */
static void names_reload(struct ev_source *src)
{
	struct dev_maps m;

	dev_maps_init(&m);
	m.trie = src->trie_fd;
	for (__u32 k = 0; k < HS_TRIE_SLOTS; k++) {
		src->gen[k] = 0;
		if (!src->t || !src->names[k] || trie_read_slot(&m, k, src->t) ||
		    hs_trie_names(src->t, src->names[k]))
			continue;
		src->gen[k] = src->t->generation;
	}
}

/* The listed name of rule @rule (+ 1) of list generation @gen, or NULL
 * when that list is no longer loaded. */
static const char *rule_name(struct ev_source *src, __u32 gen, __u32 rule)
{
	for (int pass = 0; pass < 2; pass++) {
		for (__u32 k = 0; k < HS_TRIE_SLOTS; k++)
			if (gen && src->gen[k] == gen && rule >= 1 && rule <= HS_MAX_NAMES)
				return src->names[k][rule - 1];
		if (!pass)
			names_reload(src);
	}
	return NULL;
}

/* CLOCK_BOOTTIME nanoseconds @t as wall-clock time, ISO 8601 with
 * microseconds. */
static void event_time(__u64 t, char *buf, size_t size)
{
	struct timespec real, boot;
	__u64 ns;
	time_t sec;
	struct tm tm;
	char s[32];

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	ns = (__u64)real.tv_sec * 1000000000ULL + (__u64)real.tv_nsec -
	     ((__u64)boot.tv_sec * 1000000000ULL + (__u64)boot.tv_nsec) + t;
	sec = (time_t)(ns / 1000000000ULL);
	gmtime_r(&sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%06lluZ", s, (unsigned long long)(ns % 1000000000ULL / 1000));
}

/* The name as received, for a terminal: printable ASCII, the rest \xNN. */
static void print_raw(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"')
			putchar(c);
		else
			printf("\\x%02x", c);
	}
}

/* The event's direction, as JSON says it. */
static const char *event_dir(const struct hs_event *ev)
{
	return ev->dir == HS_DIR_RESPONSE ? "response" : ev->dir ? "either" : "request";
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct ev_source *src = ctx;
	const struct hs_event *ev = data;
	char when[48], sa[INET6_ADDRSTRLEN], da[INET6_ADDRSTRLEN], name[HS_EVENT_NAME_MAX + 1];
	const char *listed = NULL, *reason;
	__u32 len;

	if (size < sizeof(*ev))
		return 0;
	event_time(ev->time_ns, when, sizeof(when));
	addr_str(&ev->key, ev->key.saddr, sa, sizeof(sa));
	addr_str(&ev->key, ev->key.daddr, da, sizeof(da));
	len = ev->name_len < HS_EVENT_NAME_MAX ? ev->name_len : HS_EVENT_NAME_MAX;
	memcpy(name, ev->name, len);
	name[len] = 0;
	if (ev->rule)
		listed = rule_name(src, ev->generation, ev->rule);
	reason = hs_name_of(hs_ev_reason_names, HS_EVR_MAX, ev->reason);
	if (src->json) {
		printf("{\"time\":\"%s\",\"dev\":", when);
		if (src->cgroup[0]) {
			printf("null,\"cgroup\":");
			json_str(src->cgroup);
		} else {
			json_str(src->dev);
		}
		if (src->netns[0]) {
			printf(",\"netns\":");
			json_str(src->netns);
		}
		printf(",\"hook\":\"%s\",\"direction\":\"%s\",\"family\":%u,\"src\":\"%s\","
		       "\"sport\":%u,\"dst\":\"%s\",\"dport\":%u,\"name\":",
		       hs_hook_name(ev->hook), event_dir(ev), ev->key.family, sa,
		       ntohs(ev->key.sport), da, ntohs(ev->key.dport));
		if (listed)
			json_str(listed);
		else
			printf("null");
		printf(",\"received\":");
		json_strn(name, len);
		printf(",\"rule\":%u,\"generation\":%u,\"action\":\"%s\",\"reason\":", ev->rule,
		       ev->generation, hs_action_name(ev->action));
		if (ev->reason)
			printf("\"%s\"}\n", reason);
		else
			printf("null}\n");
	} else {
		int v6 = ev->key.family == 6;

		printf("%s %s %s%s %s%s%s:%u -> %s%s%s:%u %s ", when,
		       src->cgroup[0] ? src->cgroup : src->dev, hs_hook_name(ev->hook),
		       ev->dir == HS_DIR_RESPONSE ? " response"
		       : ev->dir		  ? " either"
						  : "",
		       v6 ? "[" : "", sa, v6 ? "]" : "", ntohs(ev->key.sport), v6 ? "[" : "", da,
		       v6 ? "]" : "", ntohs(ev->key.dport), hs_action_name(ev->action));
		if (listed)
			printf("%s", listed);
		else if (ev->rule)
			printf("rule %u of list generation %u (since replaced)", ev->rule,
			       ev->generation);
		else
			printf("-");
		if (len) {
			printf(" \"");
			print_raw(name, len);
			printf("\"");
		}
		if (ev->reason)
			printf(" (%s)", reason);
		printf("\n");
	}
	return 0;
}

void ev_reader_free(struct ev_reader *r)
{
	if (!r)
		return;
	ring_buffer__free(r->rb);
	for (int i = 0; r->src && i < r->n; i++) {
		for (int k = 0; k < HS_TRIE_SLOTS; k++)
			free(r->src[i].names[k]);
		free(r->src[i].t);
		if (r->src[i].trie_fd >= 0)
			close(r->src[i].trie_fd);
		if (r->src[i].events_fd >= 0)
			close(r->src[i].events_fd);
	}
	free(r->src);
	free(r);
}

int ev_reader_open(const struct found *f, int n, int json, int label_netns, struct ev_reader **out)
{
	struct ev_reader *r = calloc(1, sizeof(*r));
	int err = 0;

	*out = NULL;
	if (!r || !(r->src = calloc(n ? n : 1, sizeof(*r->src)))) {
		free(r);
		return -ENOMEM;
	}
	for (int i = 0; i < n && !err; i++) {
		struct ev_source *s = &r->src[i];

		r->n = i + 1;
		s->trie_fd = s->events_fd = -1;
		snprintf(s->dev, sizeof(s->dev), "%s", f[i].d.name);
		if (f[i].d.cgroup)
			snprintf(s->cgroup, sizeof(s->cgroup), "%s", f[i].d.cgroup_path);
		else if (label_netns)
			netns_label(f[i].d.netns_ino, s->netns, sizeof(s->netns));
		s->json = json;
		s->t = malloc(sizeof(*s->t));
		for (int k = 0; k < HS_TRIE_SLOTS; k++)
			s->names[k] = calloc(HS_MAX_NAMES, sizeof(hs_rule_name));
		if (f[i].m.events < 0) {
			pr_err("'%s' has no event ring buffer (attached by an older hdrstrip): "
			       "detach and attach it again",
			       s->cgroup[0] ? s->cgroup : s->dev);
			err = -ENOENT;
			break;
		}
		s->trie_fd = fcntl(f[i].m.trie, F_DUPFD_CLOEXEC, 0);
		s->events_fd = fcntl(f[i].m.events, F_DUPFD_CLOEXEC, 0);
		if (s->trie_fd < 0 || s->events_fd < 0) {
			err = -errno;
			break;
		}
		if (!r->rb)
			r->rb = ring_buffer__new(s->events_fd, on_event, s, NULL);
		else if (ring_buffer__add(r->rb, s->events_fd, on_event, s))
			err = -errno;
		if (!r->rb)
			err = -errno;
	}
	if (err) {
		if (err != -ENOENT)
			pr_err("cannot read the events of '%s': %s", n ? f[r->n - 1].d.name : "?",
			       errstr(err));
		ev_reader_free(r);
		return err;
	}
	*out = r;
	return 0;
}

int ev_reader_fd(const struct ev_reader *r)
{
	return r && r->rb ? ring_buffer__epoll_fd(r->rb) : -1;
}

int ev_reader_consume(struct ev_reader *r)
{
	int n;

	if (!r || !r->rb)
		return 0;
	n = ring_buffer__consume(r->rb);
	fflush(stdout);
	return n < 0 ? n : 0;
}

int cmd_events(int argc, char **argv)
{
	struct events_opts o = defaults_events;
	struct ev_reader *r = NULL;
	struct found *f = NULL;
	int n = 0, rc, err;

	o.json = g_opts.json; /* hdrstrip -j events */
	rc = parse_events(argc, argv, &o);
	if (rc >= 0)
		return rc;
	rc = find_or_fail("events", &o.target, view_all(&o.target), &f, &n);
	if (rc >= 0)
		return rc;
	err = ev_reader_open(f, n, o.json, 0, &r);
	free_found(f, n);
	if (!err && r) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		signal(SIGINT, on_stop);
		signal(SIGTERM, on_stop);
		err = ev_reader_consume(r);
		/* The programs wake the reader only when a quarter of a ring
		 * waits: each turn reads every ring after at most 100 ms. */
		while (!err && o.follow && !stop) {
			int p = r->rb ? ring_buffer__poll(r->rb, 100) : 0;

			if (p >= 0)
				p = ev_reader_consume(r);
			if (p < 0 && p != -EINTR)
				err = p;
		}
		if (err)
			pr_err("cannot read the events: %s", errstr(err));
	}
	fflush(stdout);
	ev_reader_free(r);
	return err ? EXIT_FAIL : EXIT_OK;
}
