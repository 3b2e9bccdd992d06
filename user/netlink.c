// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The rtnetlink questions libbpf's TC API does not answer: is there a clsact
 * qdisc on an interface, and how many filters does it hold (anyone's)? Which
 * tunnel devices does this namespace have (tunnel_devs())? Generic
 * netlink's: which interfaces run XDP natively (--version)? And ctnetlink's:
 * which connections did NAT take to another port (ct_nat_ports())? And
 * nftables': which rules take which TCP ports to which (nft_nat_rules())?
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/xt_tcpudp.h>
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
 * The answers to the request just sent on @fd, each message to @cb, until
 * NLMSG_DONE for a @dump (not every family marks a dump's parts
 * NLM_F_MULTI), else the first: 0, or the -errno an NLMSG_ERROR says.
 */
static int nl_answers(int fd, int dump, void (*cb)(const struct nlmsghdr *nh, void *arg), void *arg)
{
	char buf[16384];

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
			if (nh->nlmsg_type == NLMSG_ERROR)
				return ((const struct nlmsgerr *)NLMSG_DATA(nh))->error;
			cb(nh, arg);
			if (!dump)
				return 0;
		}
	}
}

struct tc_cb {
	void (*cb)(const struct nlmsghdr *nh, int ifindex, void *arg);
	int ifindex;
	void *arg;
};

static void tc_answer(const struct nlmsghdr *nh, void *arg)
{
	const struct tc_cb *c = arg;

	c->cb(nh, c->ifindex, c->arg);
}

/*
 * Send the dump request @type for @ifindex under @parent and give each
 * answer to @cb until the dump ends. A dump the kernel refuses with -EINVAL
 * or -ENOENT (no such qdisc) is an empty one. 0 or -errno.
 */
static int tc_dump(int fd, int type, int ifindex, __u32 parent, __u32 seq,
		   void (*cb)(const struct nlmsghdr *nh, int ifindex, void *arg), void *arg)
{
	struct tc_cb c = { .cb = cb, .ifindex = ifindex, .arg = arg };
	struct tc_dump_req req;
	int r;

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
	r = nl_answers(fd, 1, tc_answer, &c);
	return r == -EINVAL || r == -ENOENT ? 0 : r;
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

/*
 * Which interfaces' drivers run XDP programs natively: the netdev generic
 * netlink family's xdp-features (Linux 6.3). Its numbers, from the
 * kernel's include/uapi/linux/netdev.h (newer than some distributions'
 * headers).
 */
#define HS_NETDEV_CMD_DEV_GET 1
#define HS_NETDEV_A_DEV_IFINDEX 1
#define HS_NETDEV_A_DEV_XDP_FEATURES 3
#define HS_NETDEV_XDP_ACT_BASIC 1

struct genl_req {
	struct nlmsghdr nh;
	struct genlmsghdr g;
	char attrs[64];
};

/* The attributes of generic netlink message @nh, one at a time to @cb. */
static void genl_attrs(const struct nlmsghdr *nh, void (*cb)(const struct nlattr *a, void *arg),
		       void *arg)
{
	const char *p = (const char *)NLMSG_DATA(nh) + GENL_HDRLEN;
	int left = (int)nh->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

	while (left >= NLA_HDRLEN) {
		const struct nlattr *a = (const void *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > left)
			return;
		cb(a, arg);
		left -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
}

struct genl_cb {
	void (*cb)(const struct nlattr *a, void *arg);
	void (*end)(void *arg);
	void *arg;
};

static void genl_answer(const struct nlmsghdr *nh, void *arg)
{
	const struct genl_cb *c = arg;

	genl_attrs(nh, c->cb, c->arg);
	if (c->end)
		c->end(c->arg);
}

/* Send @req, give the attributes of every answer to @cb (and the end of
 * each answer to @end) until the last: 0 or -errno. */
static int genl_ask(int fd, struct genl_req *req, void (*cb)(const struct nlattr *a, void *arg),
		    void (*end)(void *arg), void *arg)
{
	struct genl_cb c = { .cb = cb, .end = end, .arg = arg };

	if (send(fd, req, req->nh.nlmsg_len, 0) < 0)
		return -errno;
	return nl_answers(fd, !!(req->nh.nlmsg_flags & NLM_F_DUMP), genl_answer, &c);
}

static void family_id(const struct nlattr *a, void *arg)
{
	if (a->nla_type == CTRL_ATTR_FAMILY_ID)
		*(__u16 *)arg = *(const __u16 *)((const char *)a + NLA_HDRLEN);
}

struct xdp_devs {
	__u32 ifindex;
	__u64 features;
	int seen;
	int *out;
	int max;
	int n;
};

static void dev_attr(const struct nlattr *a, void *arg)
{
	struct xdp_devs *x = arg;
	const char *v = (const char *)a + NLA_HDRLEN;

	if (a->nla_type == HS_NETDEV_A_DEV_IFINDEX)
		memcpy(&x->ifindex, v, sizeof(x->ifindex));
	if (a->nla_type == HS_NETDEV_A_DEV_XDP_FEATURES) {
		memcpy(&x->features, v, sizeof(x->features));
		x->seen = 1;
	}
}

static void dev_end(void *arg)
{
	struct xdp_devs *x = arg;

	if (x->seen && (x->features & HS_NETDEV_XDP_ACT_BASIC) && x->n < x->max)
		x->out[x->n++] = (int)x->ifindex;
	x->ifindex = 0;
	x->features = 0;
	x->seen = 0;
}

int xdp_native_devs(int *ifindex, int max)
{
	struct genl_req req;
	struct nlattr *a;
	struct xdp_devs x = { .out = ifindex, .max = max };
	__u16 family = 0;
	int fd, r;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_type = GENL_ID_CTRL;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = 1;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	a = (struct nlattr *)req.attrs;
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof("netdev");
	memcpy((char *)a + NLA_HDRLEN, "netdev", sizeof("netdev"));
	req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + NLA_ALIGN(a->nla_len));
	r = genl_ask(fd, &req, family_id, NULL, &family);
	if (!r && !family)
		r = -ENOENT;
	if (!r) {
		memset(&req, 0, sizeof(req));
		req.nh.nlmsg_type = family;
		req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		req.nh.nlmsg_seq = 2;
		req.g.cmd = HS_NETDEV_CMD_DEV_GET;
		req.g.version = 1;
		req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
		r = genl_ask(fd, &req, dev_attr, dev_end, &x);
	}
	close(fd);
	return r ? r : x.n;
}

/* A dump request of @type with @hdr (@hlen bytes) after the netlink
 * header, on a new socket of @proto, its answers to @cb. 0 or -errno. */
static int nl_dump(int proto, __u16 type, const void *hdr, size_t hlen,
		   void (*cb)(const struct nlmsghdr *nh, void *arg), void *arg)
{
	struct {
		struct nlmsghdr nh;
		char body[64];
	} req;
	int fd, r;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(hlen);
	req.nh.nlmsg_type = type;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 1;
	memcpy(req.body, hdr, hlen);
	r = send(fd, &req, req.nh.nlmsg_len, 0) < 0 ? -errno : nl_answers(fd, 1, cb, arg);
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

/* A 16-bit attribute in network order. */
static int be16_attr(const struct rtattr *a)
{
	const unsigned char *p = RTA_DATA(a);

	return RTA_PAYLOAD(a) >= 2 ? p[0] << 8 | p[1] : -1;
}

/* A 32-bit attribute in network order (below 2^31), or -1. */
static long be32_attr(const struct rtattr *a)
{
	const unsigned char *p = RTA_DATA(a);

	return RTA_PAYLOAD(a) >= 4 ? (long)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3] : -1;
}

struct devs_cb {
	void (*cb)(const char *name, const char *kind, int udp_port, void *arg);
	void *arg;
};

static void tunnel_dev(const struct nlmsghdr *nh, void *arg)
{
	const struct devs_cb *c = arg;
	const struct ifinfomsg *ifi = NLMSG_DATA(nh);
	const struct rtattr *a, *info = NULL, *kind, *data, *port = NULL;
	const char *name = NULL;
	int alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi));

	if (nh->nlmsg_type != RTM_NEWLINK)
		return;
	for (a = IFLA_RTA(ifi); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
		if (a->rta_type == IFLA_IFNAME)
			name = RTA_DATA(a);
		else if (a->rta_type == IFLA_LINKINFO)
			info = a;
	}
	if (!name || !info || !(kind = nested(info, IFLA_INFO_KIND)))
		return;
	data = nested(info, IFLA_INFO_DATA);
	if (!strcmp(RTA_DATA(kind), "vxlan")) {
		port = data ? nested(data, IFLA_VXLAN_PORT) : NULL;
		/* No port attribute: the kernel's default. */
		c->cb(name, "vxlan", port ? be16_attr(port) : 8472, c->arg);
	} else if (!strcmp(RTA_DATA(kind), "geneve")) {
		port = data ? nested(data, IFLA_GENEVE_PORT) : NULL;
		c->cb(name, "geneve", port ? be16_attr(port) : 6081, c->arg);
	} else {
		c->cb(name, RTA_DATA(kind), 0, c->arg);
	}
}

int tunnel_devs(void (*cb)(const char *name, const char *kind, int udp_port, void *arg), void *arg)
{
	struct devs_cb c = { .cb = cb, .arg = arg };
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };

	return nl_dump(NETLINK_ROUTE, RTM_GETLINK, &ifi, sizeof(ifi), tunnel_dev, &c);
}

/* A conntrack tuple's TCP port (@which: CTA_PROTO_SRC_PORT, _DST_PORT), or
 * -1 when it is no TCP tuple. */
static int tuple_port(const struct rtattr *tuple, int which)
{
	const struct rtattr *proto = nested(tuple, CTA_TUPLE_PROTO), *num, *port;

	if (!proto || !(num = nested(proto, CTA_PROTO_NUM)) || *(const __u8 *)RTA_DATA(num) != 6 ||
	    !(port = nested(proto, which)))
		return -1;
	return be16_attr(port);
}

struct nat_cb {
	void (*cb)(int from_port, int to_port, void *arg);
	void *arg;
};

static void nat_conn(const struct nlmsghdr *nh, void *arg)
{
	const struct nat_cb *c = arg;
	const struct rtattr *a, *orig = NULL, *reply = NULL;
	int alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct nfgenmsg)), from, to;

	for (a = (const struct rtattr *)((const char *)NLMSG_DATA(nh) +
					 NLMSG_ALIGN(sizeof(struct nfgenmsg)));
	     RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
		if ((a->rta_type & ~NLA_F_NESTED) == CTA_TUPLE_ORIG)
			orig = a;
		else if ((a->rta_type & ~NLA_F_NESTED) == CTA_TUPLE_REPLY)
			reply = a;
	}
	if (!orig || !reply)
		return;
	/* The port the client sent to, and the one its reply comes from: the
	 * socket's own. */
	from = tuple_port(orig, CTA_PROTO_DST_PORT);
	to = tuple_port(reply, CTA_PROTO_SRC_PORT);
	if (from > 0 && to > 0 && from != to)
		c->cb(from, to, c->arg);
}

int ct_nat_ports(void (*cb)(int from_port, int to_port, void *arg), void *arg)
{
	struct nat_cb c = { .cb = cb, .arg = arg };
	struct nfgenmsg nfg = { .nfgen_family = AF_UNSPEC, .version = NFNETLINK_V0 };

	return nl_dump(NETLINK_NETFILTER, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET, &nfg,
		       sizeof(nfg), nat_conn, &c);
}

/*
 * nftables' NAT rules (nft_nat_rules()): which TCP ports a rule takes to
 * which port. A rule is read as the kernel runs it, expression by
 * expression, following the registers: the transport header's bytes 2-3
 * loaded into a register and compared equal to a port (nft's "tcp dport
 * 80"), or iptables-nft's "tcp" match, give the ports it takes; an
 * immediate port in the register a "nat" (dnat) or "redir" expression
 * reads its port from, or iptables-nft's DNAT and REDIRECT targets, give
 * the port it takes them to. Anything else that picks ports (a set, a
 * range, a map, an inverted match) is read as every port: a warning too
 * many rather than one missed.
 */
#define NFT_SLOTS 24

struct nft_rule_read {
	int family;
	const char *table, *chain;
	int dport[NFT_SLOTS]; /* the slot holds the TCP destination port */
	int l4proto[NFT_SLOTS]; /* ... the transport protocol (meta l4proto) */
	int imm[NFT_SLOTS]; /* a 2-byte immediate in the slot, or -1 */
	int lo, hi; /* the ports the rule takes */
	int not_tcp; /* it takes another protocol's packets only */
};

/* nftables numbers 16-byte registers 1-4 and 4-byte ones 8-23 over the
 * same space: the 4-byte slot a register starts at, or -1. */
static int nft_slot(const struct rtattr *a)
{
	long r = a ? be32_attr(a) : -1;

	if (r >= 1 && r <= 4)
		return (int)(r - 1) * 4;
	if (r >= 8 && r < 8 + NFT_SLOTS)
		return (int)r - 8;
	return -1;
}

/* A 2-byte value of an nft_data attribute (NFTA_DATA_VALUE), or -1. */
static int nft_port_value(const struct rtattr *data)
{
	const struct rtattr *v = data ? nested(data, NFTA_DATA_VALUE) : NULL;

	return v && RTA_PAYLOAD(v) == 2 ? be16_attr(v) : -1;
}

/* The port a compat NAT target's range starts at, or -1 (none given). */
static int xt_nat_port(const char *name, int rev, int family, const struct rtattr *info)
{
	const void *p = RTA_DATA(info);
	size_t len = RTA_PAYLOAD(info);

	if (strcmp(name, "DNAT") && strcmp(name, "REDIRECT"))
		return -1;
	if (rev == 0 && family == NFPROTO_IPV4) {
		const struct nf_nat_ipv4_multi_range_compat *m = p;

		if (len < sizeof(*m) || !(m->range[0].flags & NF_NAT_RANGE_PROTO_SPECIFIED))
			return -1;
		return ntohs(m->range[0].min.all);
	}
	if (len >= sizeof(struct nf_nat_range)) {
		const struct nf_nat_range *r = p; /* nf_nat_range2 starts alike */

		if (!(r->flags & NF_NAT_RANGE_PROTO_SPECIFIED))
			return -1;
		return ntohs(r->min_proto.all);
	}
	return -1;
}

static void nft_every_port(struct nft_rule_read *rr)
{
	rr->lo = 0;
	rr->hi = 65535;
}

/* One expression of a rule: the registers it sets, the ports it picks,
 * the NAT it does (@cb). */
static void nft_expr(struct nft_rule_read *rr, const struct rtattr *elem,
		     void (*cb)(const struct hs_nat_rule *nr, void *arg), void *arg)
{
	const struct rtattr *name = nested(elem, NFTA_EXPR_NAME), *d = nested(elem, NFTA_EXPR_DATA);
	const struct rtattr *a;
	struct hs_nat_rule nr = { .family = rr->family, .table = rr->table, .chain = rr->chain };
	const char *n;
	int slot, to = -1;

	if (!name || !d)
		return;
	n = RTA_DATA(name);
	if (!strcmp(n, "payload")) {
		slot = nft_slot(nested(d, NFTA_PAYLOAD_DREG));
		if (slot < 0)
			return;
		a = nested(d, NFTA_PAYLOAD_BASE);
		rr->dport[slot] = a && be32_attr(a) == NFT_PAYLOAD_TRANSPORT_HEADER &&
				  (a = nested(d, NFTA_PAYLOAD_OFFSET)) && be32_attr(a) == 2 &&
				  (a = nested(d, NFTA_PAYLOAD_LEN)) && be32_attr(a) == 2;
		rr->imm[slot] = -1;
		rr->l4proto[slot] = 0;
	} else if (!strcmp(n, "meta")) {
		slot = nft_slot(nested(d, NFTA_META_DREG));
		if (slot < 0)
			return;
		a = nested(d, NFTA_META_KEY);
		rr->l4proto[slot] = a && be32_attr(a) == NFT_META_L4PROTO;
		rr->dport[slot] = 0;
		rr->imm[slot] = -1;
	} else if (!strcmp(n, "cmp")) {
		const struct rtattr *v;
		int port;

		long op;

		slot = nft_slot(nested(d, NFTA_CMP_SREG));
		a = nested(d, NFTA_CMP_OP);
		op = a ? be32_attr(a) : -1;
		if (slot < 0)
			return;
		if (rr->dport[slot] && (op == NFT_CMP_GTE || op == NFT_CMP_LTE)) {
			/* "tcp dport 100-200": two compares */
			port = nft_port_value(nested(d, NFTA_CMP_DATA));
			if (port >= 0 && op == NFT_CMP_GTE)
				rr->lo = port;
			else if (port >= 0)
				rr->hi = port;
			return;
		}
		if (op != NFT_CMP_EQ)
			return;
		if (rr->l4proto[slot]) {
			a = nested(d, NFTA_CMP_DATA);
			v = a ? nested(a, NFTA_DATA_VALUE) : NULL;
			if (v && RTA_PAYLOAD(v) == 1 && *(const __u8 *)RTA_DATA(v) != IPPROTO_TCP)
				rr->not_tcp = 1;
			return;
		}
		port = rr->dport[slot] ? nft_port_value(nested(d, NFTA_CMP_DATA)) : -1;
		if (port >= 0)
			rr->lo = rr->hi = port;
	} else if (!strcmp(n, "immediate")) {
		slot = nft_slot(nested(d, NFTA_IMMEDIATE_DREG));
		if (slot >= 0) {
			rr->imm[slot] = nft_port_value(nested(d, NFTA_IMMEDIATE_DATA));
			rr->dport[slot] = 0;
			rr->l4proto[slot] = 0;
		}
	} else if (!strcmp(n, "nat")) {
		a = nested(d, NFTA_NAT_TYPE);
		slot = nft_slot(nested(d, NFTA_NAT_REG_PROTO_MIN));
		if (a && be32_attr(a) == NFT_NAT_DNAT && slot >= 0)
			to = rr->imm[slot];
	} else if (!strcmp(n, "redir")) {
		slot = nft_slot(nested(d, NFTA_REDIR_REG_PROTO_MIN));
		if (slot >= 0)
			to = rr->imm[slot];
	} else if (!strcmp(n, "match")) {
		const struct xt_tcp *m;

		a = nested(d, NFTA_MATCH_INFO);
		name = nested(d, NFTA_MATCH_NAME);
		if (!a || !name || strcmp(RTA_DATA(name), "tcp") || RTA_PAYLOAD(a) < sizeof(*m))
			return;
		m = RTA_DATA(a);
		if (!(m->invflags & XT_TCP_INV_DSTPT)) {
			rr->lo = m->dpts[0];
			rr->hi = m->dpts[1];
		}
	} else if (!strcmp(n, "target")) {
		const struct rtattr *rev = nested(d, NFTA_TARGET_REV);

		a = nested(d, NFTA_TARGET_INFO);
		name = nested(d, NFTA_TARGET_NAME);
		if (a && name)
			to = xt_nat_port(RTA_DATA(name), rev ? be32_attr(rev) : 0, rr->family, a);
	} else if (!strcmp(n, "lookup") || !strcmp(n, "range")) {
		/* A set or a range of ports: every port, to be safe. */
		slot = nft_slot(
			nested(d, !strcmp(n, "lookup") ? NFTA_LOOKUP_SREG : NFTA_RANGE_SREG));
		if (slot >= 0 && rr->dport[slot])
			nft_every_port(rr);
	}
	if (to < 0 || rr->not_tcp)
		return;
	nr.from_lo = rr->lo;
	nr.from_hi = rr->hi;
	nr.to = to;
	cb(&nr, arg);
}

struct nft_cb {
	void (*cb)(const struct hs_nat_rule *nr, void *arg);
	void *arg;
};

static void nft_rule(const struct nlmsghdr *nh, void *arg)
{
	const struct nft_cb *c = arg;
	const struct nfgenmsg *nfg = NLMSG_DATA(nh);
	const struct rtattr *a, *exprs = NULL;
	int alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*nfg));
	struct nft_rule_read rr = { .family = nfg->nfgen_family, .table = "?", .chain = "?" };

	if (nh->nlmsg_type != ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE))
		return;
	for (a = (const struct rtattr *)((const char *)nfg + NLMSG_ALIGN(sizeof(*nfg)));
	     RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
		switch (a->rta_type & ~NLA_F_NESTED) {
		case NFTA_RULE_TABLE:
			rr.table = RTA_DATA(a);
			break;
		case NFTA_RULE_CHAIN:
			rr.chain = RTA_DATA(a);
			break;
		case NFTA_RULE_EXPRESSIONS:
			exprs = a;
			break;
		}
	}
	if (!exprs)
		return;
	nft_every_port(&rr);
	memset(rr.imm, 0xff, sizeof(rr.imm));
	alen = RTA_PAYLOAD(exprs);
	for (a = RTA_DATA(exprs); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
		if ((a->rta_type & ~NLA_F_NESTED) == NFTA_LIST_ELEM)
			nft_expr(&rr, a, c->cb, c->arg);
}

int nft_nat_rules(void (*cb)(const struct hs_nat_rule *nr, void *arg), void *arg)
{
	struct nft_cb c = { .cb = cb, .arg = arg };
	struct nfgenmsg nfg = { .nfgen_family = NFPROTO_UNSPEC, .version = NFNETLINK_V0 };

	return nl_dump(NETLINK_NETFILTER, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETRULE, &nfg,
		       sizeof(nfg), nft_rule, &c);
}
