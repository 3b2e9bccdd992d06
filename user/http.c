// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The agent's HTTP endpoint (hdrstrip run --metrics-listen), served by
 * Debian's libmicrohttpd. The library is opened when the endpoint is asked
 * for, not linked: every other command of the CLI is a short process that
 * would pay for loading it (and the TLS libraries it depends on) at each
 * start. The daemon runs in the caller's thread: its epoll descriptor goes
 * into the caller's poll(), and http_run() answers what is ready there, so
 * a handler runs in the agent's loop, between its other work.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "http.h"
#include "log.h"

#define MHD_SONAME "libmicrohttpd.so.12"

/* The library's functions the endpoint uses. */
static struct {
	void *lib;
	struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port,
					   MHD_AcceptPolicyCallback apc, void *apc_cls,
					   MHD_AccessHandlerCallback dh, void *dh_cls, ...);
	void (*stop_daemon)(struct MHD_Daemon *d);
	const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *d,
						       enum MHD_DaemonInfoType info, ...);
	enum MHD_Result (*run)(struct MHD_Daemon *d);
	struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer,
							    enum MHD_ResponseMemoryMode mode);
	enum MHD_Result (*add_response_header)(struct MHD_Response *r, const char *header,
					       const char *content);
	enum MHD_Result (*queue_response)(struct MHD_Connection *c, unsigned int status,
					  struct MHD_Response *r);
	void (*destroy_response)(struct MHD_Response *r);
} mhd;

struct http_srv {
	struct MHD_Daemon *d;
	http_handler fn;
	void *cls;
};

static int mhd_open(void)
{
	static const char *const names[] = {
		"MHD_start_daemon",
		"MHD_stop_daemon",
		"MHD_get_daemon_info",
		"MHD_run",
		"MHD_create_response_from_buffer",
		"MHD_add_response_header",
		"MHD_queue_response",
		"MHD_destroy_response",
	};
	void **slot[] = {
		(void **)&mhd.start_daemon,
		(void **)&mhd.stop_daemon,
		(void **)&mhd.get_daemon_info,
		(void **)&mhd.run,
		(void **)&mhd.create_response_from_buffer,
		(void **)&mhd.add_response_header,
		(void **)&mhd.queue_response,
		(void **)&mhd.destroy_response,
	};

	if (mhd.lib)
		return 0;
	mhd.lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!mhd.lib) {
		pr_err("--metrics-listen needs libmicrohttpd (%s): %s; install Debian's "
		       "libmicrohttpd12",
		       MHD_SONAME, dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*slot[i] = dlsym(mhd.lib, names[i]);
		if (!*slot[i]) {
			pr_err("%s has no %s: %s", MHD_SONAME, names[i], dlerror());
			dlclose(mhd.lib);
			mhd.lib = NULL;
			return -1;
		}
	}
	return 0;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct http_srv *h = cls;
	const char *ctype = "text/plain; charset=utf-8";
	struct MHD_Response *resp;
	char *body = NULL;
	size_t len = 0;
	enum MHD_Result r;
	int status;

	(void)version;
	(void)upload;
	if (!*con_cls) {
		/* The first call of a request comes with its headers only. */
		*con_cls = h;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* nothing is uploaded here: ignored */
		return MHD_YES;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		status = 405;
		body = strdup("only GET and HEAD\n");
	} else {
		status = h->fn(h->cls, url, &body, &ctype);
	}
	if (!body) {
		status = 500;
		body = strdup("out of memory\n");
		if (!body)
			return MHD_NO;
	}
	len = strlen(body);
	resp = mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	mhd.add_response_header(resp, "Content-Type", ctype);
	if (status == 405)
		mhd.add_response_header(resp, "Allow", "GET, HEAD");
	r = mhd.queue_response(conn, (unsigned int)status, resp);
	mhd.destroy_response(resp);
	return r;
}

struct http_srv *http_start(const char *listen, http_handler fn, void *cls)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV },
			*ai = NULL;
	char host[128], *colon;
	const char *port;
	struct http_srv *h;
	unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	int r;

	if (snprintf(host, sizeof(host), "%s", listen) >= (int)sizeof(host) ||
	    !(colon = strrchr(host, ':')) || !colon[1]) {
		pr_err("--metrics-listen '%s': expected ADDRESS:PORT (0.0.0.0:9464, "
		       "127.0.0.1:9464, [::]:9464)",
		       listen);
		return NULL;
	}
	*colon = 0;
	port = colon + 1;
	if (host[0] == '[' && colon > host + 1 && colon[-1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	if (!host[0])
		hints.ai_family = AF_INET; /* ":PORT": every IPv4 address */
	r = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (r || !ai) {
		pr_err("--metrics-listen '%s': not a numeric address and port: %s", listen,
		       gai_strerror(r));
		return NULL;
	}
	if (mhd_open()) {
		freeaddrinfo(ai);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		freeaddrinfo(ai);
		return NULL;
	}
	h->fn = fn;
	h->cls = cls;
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = mhd.start_daemon(flags, 0, NULL, NULL, answer, h, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)16, MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!h->d) {
		pr_err("--metrics-listen '%s': cannot listen there (%s); is the port in use?",
		       listen, strerror(errno ? errno : EADDRINUSE));
		free(h);
		return NULL;
	}
	return h;
}

int http_fd(const struct http_srv *h)
{
	const union MHD_DaemonInfo *i = mhd.get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);

	return i ? i->epoll_fd : -1;
}

void http_run(struct http_srv *h)
{
	mhd.run(h->d);
}

void http_stop(struct http_srv *h)
{
	if (!h)
		return;
	mhd.stop_daemon(h->d);
	free(h);
}
