// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sock_diag requests for one TCP socket (see diag.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>

#include "diag.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* The request for @k's socket: the kernel's lookup takes the socket's own
 * view, local (this host: the key's destination) first. */
static void diag_req(struct inet_diag_req_v2 *r, const struct hs_flow_key *k, __u64 cookie)
{
	memset(r, 0, sizeof(*r));
	r->sdiag_family = k->family == 6 ? AF_INET6 : AF_INET;
	r->sdiag_protocol = IPPROTO_TCP;
	r->idiag_states = ~0u;
	r->idiag_ext = 1 << (INET_DIAG_INFO - 1);
	r->id.idiag_sport = k->dport;
	r->id.idiag_dport = k->sport;
	memcpy(r->id.idiag_src, k->daddr, sizeof(r->id.idiag_src));
	memcpy(r->id.idiag_dst, k->saddr, sizeof(r->id.idiag_dst));
	r->id.idiag_cookie[0] = (__u32)cookie;
	r->id.idiag_cookie[1] = (__u32)(cookie >> 32);
}

/*
 * Send request @type for @k's socket and read the answer: a socket's
 * message into @out (when not NULL), or an error. 0 or -errno.
 */
static int diag_call(__u16 type, const struct hs_flow_key *k, __u64 cookie, struct diag_tcp *out)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req = { 0 };
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	union {
		char buf[8192];
		struct nlmsghdr align;
	} ans;
	int fd, r = -EIO;
	ssize_t n;

	diag_req(&req.r, k, cookie);
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = type;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.nh.nlmsg_seq = 1;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		goto out;
	}
	for (int got = 0; !got;) {
		n = recv(fd, ans.buf, sizeof(ans.buf), 0);
		if (n < 0) {
			r = -errno;
			break;
		}
		for (struct nlmsghdr *h = &ans.align; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				/* The ack of a destroy (0), or why not. */
				if (r != 0)
					r = e->error;
				got = 1;
				break;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				got = 1;
				break;
			}
			if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && out) {
				const struct inet_diag_msg *m = NLMSG_DATA(h);
				int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
				const struct rtattr *a = (const struct rtattr *)(m + 1);

				memset(out, 0, sizeof(*out));
				out->rqueue = m->idiag_rqueue;
				out->inode = m->idiag_inode;
				out->state = m->idiag_state;
				for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
					struct tcp_info ti = { 0 };
					size_t len = RTA_PAYLOAD(a);

					if (a->rta_type != INET_DIAG_INFO)
						continue;
					memcpy(&ti, RTA_DATA(a),
					       len < sizeof(ti) ? len : sizeof(ti));
					out->bytes_received = ti.tcpi_bytes_received;
				}
				r = 0;
			}
		}
	}
out:
	close(fd);
	return r;
}

int diag_tcp_query(const struct hs_flow_key *k, __u64 cookie, struct diag_tcp *out)
{
	return diag_call(SOCK_DIAG_BY_FAMILY, k, cookie, out);
}

int diag_tcp_destroy(const struct hs_flow_key *k, __u64 cookie)
{
	return diag_call(SOCK_DESTROY, k, cookie, NULL);
}

__u64 diag_netns_cookie(void)
{
	__u64 c = 0;
	socklen_t len = sizeof(c);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &len))
		c = 0;
	close(fd);
	return c;
}
