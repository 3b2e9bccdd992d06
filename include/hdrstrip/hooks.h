/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where hdrstrip attaches. X(ID, name), the name as --hook takes it and
 * status, stats and Prometheus' hook label print it. The BPF programs do not
 * use these ids: their context shim only tells XDP from an skb (bpf/ctx.h).
 */
#ifndef HDRSTRIP_HOOKS_H
#define HDRSTRIP_HOOKS_H

#include "names.h"

#define HS_HOOKS(X)                                                                                \
	X(XDP, "xdp")                                                                              \
	X(TC_INGRESS, "tc-ingress")                                                                \
	X(TC_EGRESS, "tc-egress")                                                                  \
	X(CGROUP, "cgroup") /* proxy mode: sockops on a cgroup + sk_msg on its sockhash */         \
	X(RECEIVE, "receive") /* origin mode: sockops on a cgroup + sk_skb on what it accepts */

enum hs_hook {
#define HS_HOOK_ENUM(id, name) HS_HOOK_##id,
	HS_HOOKS(HS_HOOK_ENUM)
#undef HS_HOOK_ENUM
	HS_HOOK_MAX
};

/* How a device's packets start at its hooks (the loader reads the device's
 * link type and sets the program's link_type before it loads it). */
#define HS_L2_ETHER 0 /* an Ethernet header, VLAN tags maybe */
#define HS_L2_NONE 1 /* no link header: tun, wireguard, ipip, gre, sit, ppp */

#ifndef __bpf__
HS_NAME_TABLE(hs_hook_names, HS_HOOKS, HS_HOOK_MAX);

static inline const char *hs_hook_name(unsigned int h)
{
	return hs_name_of(hs_hook_names, HS_HOOK_MAX, h);
}
#endif

#endif /* HDRSTRIP_HOOKS_H */
