// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Loading the object with a device's pinned maps, and attaching and
 * detaching hooks (XDP through libxdp, TC through libbpf's clsact API).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"
#include "hdrstrip.skel.h"
#include "loader.h"
#include "vlog.h"

/* The skeleton's maps a device's hooks share, in struct dev_maps' order
 * (no socks: proxy mode's). */
#define N_SKEL_MAPS 8
static void skel_maps(struct hdrstrip *skel, struct bpf_map **maps)
{
	struct bpf_map *all[N_SKEL_MAPS] = { skel->maps.trie,
					     skel->maps.config,
					     skel->maps.counters,
					     skel->maps.header_hits,
					     skel->maps.events,
					     skel->maps.event_bucket,
					     NULL,
					     skel->maps.methods };

	memcpy(maps, all, sizeof(all));
}

/* Open the skeleton with its shared maps bound to @m (NULL: its own, made
 * at load), and only the program of @hook set to load (-1: none). */
static struct hdrstrip *open_with_maps(const struct dev *d, const struct dev_maps *m,
				       struct bpf_program **keep_out, int hook)
{
	struct hdrstrip *skel = hdrstrip__open();
	int r = 0;

	if (!skel)
		return NULL;
	if (m) {
		struct bpf_map *maps[N_SKEL_MAPS];

		skel_maps(skel, maps);
		r = dev_maps_reuse(m, maps, N_SKEL_MAPS);
	}
	if (hook >= 0)
		skel->rodata->event_hook = (__u8)hook;
	if (d && d->link_type == HS_L2_NONE)
		skel->rodata->link_type = HS_L2_NONE;
	bpf_program__set_autoload(skel->progs.hdrstrip_xdp, hook == HS_HOOK_XDP);
	bpf_program__set_autoload(skel->progs.hdrstrip_tc,
				  hook == HS_HOOK_TC_INGRESS || hook == HS_HOOK_TC_EGRESS);
	if (keep_out)
		*keep_out =
			hook == HS_HOOK_XDP ? skel->progs.hdrstrip_xdp : skel->progs.hdrstrip_tc;
	if (r) {
		hdrstrip__destroy(skel);
		errno = -r;
		return NULL;
	}
	return skel;
}

int maps_create(const struct dev *d, struct dev_maps *m)
{
	struct hdrstrip *skel;
	int r;

	dev_maps_init(m);
	if (d->cgroup)
		return proxy_maps_create(m);
	skel = open_with_maps(NULL, NULL, NULL, -1);
	if (!skel)
		return -errno;
	/* Made with the rest and thrown away: one entry, not a table. */
	bpf_map__set_max_entries(skel->maps.flows, 1);
	r = hdrstrip__load(skel);
	if (!r) {
		struct bpf_map *maps[N_SKEL_MAPS];

		skel_maps(skel, maps);
		r = dev_maps_dup(m, maps, N_SKEL_MAPS);
	}
	hdrstrip__destroy(skel);
	return r;
}

static int xdp_attach(const struct dev *d, struct hdrstrip *skel, int mode, int *mode_used,
		      int *legacy)
{
	struct xdp_program *prog = xdp_program__from_bpf_obj(skel->obj, "xdp");
	long err = libxdp_get_error(prog);
	int r;

	if (err)
		return (int)err;
	r = xdp_program__attach(prog, d->ifindex, mode, 0);
	if ((r == -EOPNOTSUPP || r == -ERANGE) && mode == XDP_MODE_NATIVE) {
		/* ERANGE: the MTU (a veth's peer's, say) is larger than the
		 * driver's native XDP takes in one buffer. */
		if (r == -ERANGE)
			pr_warn("the MTU of '%s' is too large for native XDP on its driver; "
				"attaching in skb (generic) mode, which runs later and costs more",
				d->name);
		else
			pr_warn("the driver of '%s' has no native XDP support; attaching in skb "
				"(generic) mode, which runs later and costs more",
				d->name);
		mode = XDP_MODE_SKB;
		r = xdp_program__attach(prog, d->ifindex, mode, 0);
	}
	if (!r) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);

		*mode_used = mode;
		/*
		 * Without libxdp's dispatcher the interface runs our program
		 * itself. (Asked of the kernel, not of libxdp's multiprog
		 * query, which leaves a program fd open: harmless in a command
		 * that exits, but in the agent it would keep a deleted
		 * interface's program, and its maps, alive.)
		 */
		*legacy = !bpf_xdp_query(d->ifindex, 0, &q) &&
			  (mode == XDP_MODE_SKB ? q.skb_prog_id : q.drv_prog_id) ==
				  xdp_program__id(prog);
	}
	xdp_program__close(prog);
	return r;
}

static int tc_hook_for(const struct dev *d, int hook, struct bpf_tc_hook *h)
{
	memset(h, 0, sizeof(*h));
	h->sz = sizeof(*h);
	h->ifindex = d->ifindex;
	h->attach_point = hook == HS_HOOK_TC_INGRESS ? BPF_TC_INGRESS : BPF_TC_EGRESS;
	return 0;
}

static int tc_attach(const struct dev *d, int hook, struct bpf_program *prog, int *qdisc_created)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, o, .handle = HS_TC_HANDLE, .priority = HS_TC_PRIO,
			    .prog_fd = bpf_program__fd(prog));
	struct bpf_tc_hook h;
	int r;

	tc_hook_for(d, hook, &h);
	r = bpf_tc_hook_create(&h);
	if (r && r != -EEXIST)
		return r;
	*qdisc_created = !r;
	r = bpf_tc_attach(&h, &o);
	if (r && *qdisc_created) {
		h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&h);
		*qdisc_created = 0;
	}
	return r;
}

int hook_attach(const struct dev *d, const struct hook_opts *o, const struct dev_maps *m,
		int *mode_used, int *legacy, int *qdisc_created)
{
	struct bpf_program *prog;
	struct hdrstrip *skel = open_with_maps(d, m, &prog, o->hook);
	int r;

	if (skel && o->flows)
		bpf_map__set_max_entries(skel->maps.flows, o->flows);
	*legacy = 0;
	*qdisc_created = 0;
	*mode_used = 0;
	if (!skel)
		return -errno;
	vlog_begin();
	if (o->hook == HS_HOOK_XDP) {
		r = xdp_attach(d, skel, o->xdp_mode, mode_used, legacy);
	} else {
		r = hdrstrip__load(skel);
		if (!r)
			r = tc_attach(d, o->hook, prog, qdisc_created);
	}
	/* A rejected program: save the verifier's log and show its end. */
	vlog_end(r != 0, d->name, hs_hook_name(o->hook), log_verbose() > 0);
	/* The attachment holds the program and its maps; our references go. */
	hdrstrip__destroy(skel);
	return r;
}

int hook_detach(const struct dev *d, int hook, const struct dev_state *st)
{
	if (hook == HS_HOOK_CGROUP || hook == HS_HOOK_RECEIVE)
		return proxy_detach(d, st->prog_id[hook]);
	if (hook == HS_HOOK_XDP) {
		struct xdp_multiprog *mp;
		struct xdp_program *prog;
		int r;

		if (st->xdp_legacy) {
			mp = xdp_multiprog__get_from_ifindex(d->ifindex);
			if (libxdp_get_error(mp) || !mp)
				return mp ? (int)libxdp_get_error(mp) : -ENOENT;
			r = xdp_multiprog__detach(mp);
			xdp_multiprog__close(mp);
			return r;
		}
		prog = xdp_program__from_id(st->prog_id[HS_HOOK_XDP]);
		if (libxdp_get_error(prog))
			return (int)libxdp_get_error(prog);
		r = xdp_program__detach(prog, d->ifindex, st->xdp_mode, 0);
		xdp_program__close(prog);
		return r;
	} else {
		DECLARE_LIBBPF_OPTS(bpf_tc_opts, o, .handle = HS_TC_HANDLE, .priority = HS_TC_PRIO);
		struct bpf_tc_hook h;

		tc_hook_for(d, hook, &h);
		return bpf_tc_detach(&h, &o);
	}
}

int tc_qdisc_release(const struct dev *d)
{
	struct bpf_tc_hook h;
	int n, r;

	/* None there (removed already, or never made by a killed attach):
	 * nothing to ask libbpf to destroy. */
	r = tc_qdisc_exists(d->ifindex);
	if (r <= 0)
		return r;
	r = tc_count_filters(d->ifindex, &n);
	if (r)
		return r;
	if (n)
		return 0; /* someone else's filters: keep the qdisc */
	tc_hook_for(d, HS_HOOK_TC_INGRESS, &h);
	h.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	r = bpf_tc_hook_destroy(&h);
	return r == -ENOENT ? 0 : r;
}
