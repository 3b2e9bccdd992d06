// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The rtnetlink questions libbpf's TC API does not answer: is there a clsact
 * qdisc on an interface, and how many filters does it hold (anyone's)? And
 * which tunnel devices does this namespace have (tunnel_devs())?
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "loader.h"

struct tc_dump_req {
	struct nlmsghdr nh;
	struct tcmsg tc;
};

/*
 * Send the dump request @type for @ifindex under @parent and give each
 * answer to @cb until the dump ends. A dump the kernel refuses with -EINVAL
 * or -ENOENT (no such qdisc) is an empty one. 0 or -errno.
 */
static int tc_dump(int fd, int type, int ifindex, __u32 parent, __u32 seq,
		   void (*cb)(const struct nlmsghdr *nh, int ifindex, void *arg), void *arg)
{
	struct tc_dump_req req;
	char buf[16384];

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.tc));
	req.nh.nlmsg_type = type;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = seq;
	req.tc.tcm_family = AF_UNSPEC;
	req.tc.tcm_ifindex = ifindex;
	req.tc.tcm_parent = parent;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				return e->error == -EINVAL || e->error == -ENOENT ? 0 : e->error;
			}
			cb(nh, ifindex, arg);
		}
	}
}

static void is_clsact(const struct nlmsghdr *nh, int ifindex, void *arg)
{
	const struct tcmsg *tc = NLMSG_DATA(nh);
	int alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*tc));

	if (nh->nlmsg_type != RTM_NEWQDISC || tc->tcm_ifindex != ifindex)
		return;
	for (const struct rtattr *a = (const void *)((const char *)tc + NLMSG_ALIGN(sizeof(*tc)));
	     RTA_OK(a, alen); a = RTA_NEXT(a, alen))
		if (a->rta_type == TCA_KIND && !strcmp(RTA_DATA(a), "clsact"))
			*(int *)arg = 1;
}

int tc_qdisc_exists(int ifindex)
{
	int fd, r, found = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	r = tc_dump(fd, RTM_GETQDISC, ifindex, 0, 1, is_clsact, &found);
	close(fd);
	return r ? r : found;
}

static void count_filter(const struct nlmsghdr *nh, int ifindex, void *arg)
{
	(void)ifindex;
	if (nh->nlmsg_type == RTM_NEWTFILTER && ((const struct tcmsg *)NLMSG_DATA(nh))->tcm_handle)
		(*(int *)arg)++;
}

int tc_count_filters(int ifindex, int *count)
{
	int fd, r = 0;

	*count = 0;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	for (int dir = 0; dir < 2 && !r; dir++)
		r = tc_dump(fd, RTM_GETTFILTER, ifindex,
			    TC_H_MAKE(TC_H_CLSACT, dir ? TC_H_MIN_EGRESS : TC_H_MIN_INGRESS),
			    dir + 1, count_filter, count);
	close(fd);
	return r;
}

/* The UDP port of a vxlan or geneve device, from its IFLA_INFO_DATA. */
static int udp_port_of(const char *kind, const struct rtattr *data)
{
	int alen = RTA_PAYLOAD(data), type;
	const struct rtattr *a;

	if (!strcmp(kind, "vxlan"))
		type = IFLA_VXLAN_PORT;
	else if (!strcmp(kind, "geneve"))
		type = IFLA_GENEVE_PORT;
	else
		return 0;
	for (a = RTA_DATA(data); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
		if (a->rta_type == type && RTA_PAYLOAD(a) >= 2) {
			const unsigned char *p = RTA_DATA(a);

			return p[0] << 8 | p[1]; /* network order */
		}
	/* No port attribute: the kernel's default (VXLAN's 8472). */
	return !strcmp(kind, "vxlan") ? 8472 : 6081;
}

struct link_dump_req {
	struct nlmsghdr nh;
	struct ifinfomsg ifi;
};

int tunnel_devs(void (*cb)(const char *name, const char *kind, int udp_port, void *arg), void *arg)
{
	struct link_dump_req req;
	char buf[32768];
	int fd, r = 0, done = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 1;
	req.ifi.ifi_family = AF_UNSPEC;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
		r = -errno;
		goto out;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n <= 0) {
			r = n ? -errno : 0;
			break;
		}
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			const struct ifinfomsg *ifi = NLMSG_DATA(nh);
			const struct rtattr *a, *info = NULL;
			const char *name = NULL, *kind = NULL;
			const struct rtattr *data = NULL;
			int alen;

			if (nh->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR) {
				r = ((const struct nlmsgerr *)NLMSG_DATA(nh))->error;
				done = 1;
				break;
			}
			if (nh->nlmsg_type != RTM_NEWLINK)
				continue;
			alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi));
			for (a = IFLA_RTA(ifi); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
				if (a->rta_type == IFLA_IFNAME)
					name = RTA_DATA(a);
				else if (a->rta_type == IFLA_LINKINFO)
					info = a;
			}
			if (!name || !info)
				continue;
			alen = RTA_PAYLOAD(info);
			for (a = RTA_DATA(info); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
				if (a->rta_type == IFLA_INFO_KIND)
					kind = RTA_DATA(a);
				else if (a->rta_type == IFLA_INFO_DATA)
					data = a;
			}
			if (kind)
				cb(name, kind, data ? udp_port_of(kind, data) : 0, arg);
		}
	}
out:
	close(fd);
	return r;
}

/* The attribute @type among the nested ones of @nest, or NULL. */
static const struct rtattr *nested(const struct rtattr *nest, int type)
{
	int alen = RTA_PAYLOAD(nest);

	for (const struct rtattr *a = RTA_DATA(nest); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
		if ((a->rta_type & ~NLA_F_NESTED) == type)
			return a;
	return NULL;
}

/* A conntrack tuple's TCP port (@which: CTA_PROTO_SRC_PORT, _DST_PORT), or
 * -1 when it is no TCP tuple. */
static int tuple_port(const struct rtattr *tuple, int which)
{
	const struct rtattr *proto = nested(tuple, CTA_TUPLE_PROTO), *num, *port;
	const unsigned char *p;

	if (!proto || !(num = nested(proto, CTA_PROTO_NUM)) || *(const __u8 *)RTA_DATA(num) != 6 ||
	    !(port = nested(proto, which)))
		return -1;
	p = RTA_DATA(port);
	return p[0] << 8 | p[1];
}

struct ct_dump_req {
	struct nlmsghdr nh;
	struct nfgenmsg nfg;
};

int ct_nat_ports(void (*cb)(int from_port, int to_port, void *arg), void *arg)
{
	struct ct_dump_req req;
	char buf[32768];
	int fd, r = 0, done = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.nfg));
	req.nh.nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 1;
	req.nfg.nfgen_family = AF_UNSPEC;
	req.nfg.version = NFNETLINK_V0;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
		r = -errno;
		goto out;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n <= 0) {
			r = n ? -errno : 0;
			break;
		}
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			const struct rtattr *a, *orig = NULL, *reply = NULL;
			int alen, from, to;

			if (nh->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR) {
				r = ((const struct nlmsgerr *)NLMSG_DATA(nh))->error;
				done = 1;
				break;
			}
			alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct nfgenmsg));
			for (a = (const struct rtattr *)((const char *)NLMSG_DATA(nh) +
							 NLMSG_ALIGN(sizeof(struct nfgenmsg)));
			     RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
				if ((a->rta_type & ~NLA_F_NESTED) == CTA_TUPLE_ORIG)
					orig = a;
				else if ((a->rta_type & ~NLA_F_NESTED) == CTA_TUPLE_REPLY)
					reply = a;
			}
			if (!orig || !reply)
				continue;
			/* The port the client sent to, and the one its reply
			 * comes from: the socket's own. */
			from = tuple_port(orig, CTA_PROTO_DST_PORT);
			to = tuple_port(reply, CTA_PROTO_SRC_PORT);
			if (from > 0 && to > 0 && from != to)
				cb(from, to, arg);
		}
	}
out:
	close(fd);
	return r;
}
