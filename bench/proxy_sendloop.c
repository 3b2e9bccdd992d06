// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The cost proxy mode adds to each send(): one request written over and over
 * on a loopback TCP connection, timed, with or without hdrstrip on the cgroup
 * this process runs in (bench/bench-proxy.sh alternates the two).
 *
 *   proxy_sendloop --request FILE --port PORT [--count N] [--warmup N]
 *
 * It listens on 127.0.0.1:PORT and connects to itself: the connecting side
 * is an active connection, the one hdrstrip's sockops program puts into the
 * sockhash when PORT is inspected; a thread reads and discards everything on
 * the accepted side. Each send() carries one whole request (TCP_NODELAY, as
 * proxies write). Prints:
 *   ns_per_send N        wall time of the timed sends / their number
 *   cpu_ns_per_send N    the sending thread's CPU time / their number: the
 *                        send path, loopback delivery included (it runs in
 *                        the sender's context), without the time other
 *                        tasks had the CPU
 *   bytes_per_send N     bytes that arrived per send (fewer when lines
 *                        were removed: proof the program ran)
 *   segments_per_send N  TCP segments the connection sent per send()
 *                        (tcpi_segs_out)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct sink {
	int fd;
	unsigned long long bytes;
};

static void *drain(void *arg)
{
	struct sink *s = arg;
	char buf[1 << 16];
	ssize_t n;

	while ((n = recv(s->fd, buf, sizeof(buf), 0)) > 0)
		s->bytes += n;
	return NULL;
}

static long long now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int send_whole(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc(n);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = n;
	}
	fclose(f);
	return buf;
}

static void usage(void)
{
	fprintf(stderr, "usage: proxy_sendloop --request FILE --port PORT [--count N] [--warmup N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "request", required_argument, NULL, 'r' }, { "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'c' },   { "warmup", required_argument, NULL, 'w' },
		{ 0 },
	};
	long count = 200000, warmup = 20000, port = 0;
	const char *reqpath = NULL;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int lfd, cfd, one = 1, c, r;
	struct sink sink = { .fd = -1 };
	pthread_t th;
	long long t0, t1, c0, c1;
	unsigned int segs = 0;
	size_t len = 0;
	char *req;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'r': reqpath = optarg; break;
		case 'p': port = strtol(optarg, NULL, 10); break;
		case 'c': count = strtol(optarg, NULL, 10); break;
		case 'w': warmup = strtol(optarg, NULL, 10); break;
		default: usage();
		}
	}
	if (!reqpath || port <= 0 || port > 65535 || count <= 0 || warmup < 0)
		usage();
	req = read_file(reqpath, &len);
	if (!req || !len) {
		fprintf(stderr, "proxy_sendloop: cannot read %s\n", reqpath);
		return 1;
	}

	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd >= 0)
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1)) {
		perror("proxy_sendloop: listen");
		return 1;
	}
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (cfd < 0 || connect(cfd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("proxy_sendloop: connect");
		return 1;
	}
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sink.fd = accept(lfd, NULL, NULL);
	if (sink.fd < 0 || pthread_create(&th, NULL, drain, &sink)) {
		perror("proxy_sendloop: accept");
		return 1;
	}

	for (long i = 0; i < warmup; i++)
		if ((r = send_whole(cfd, req, len))) {
			fprintf(stderr, "proxy_sendloop: send: %s\n", strerror(-r));
			return 1;
		}
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; i < count; i++)
		if ((r = send_whole(cfd, req, len))) {
			fprintf(stderr, "proxy_sendloop: send: %s\n", strerror(-r));
			return 1;
		}
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	t1 = now_ns(CLOCK_MONOTONIC);
	{
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);

		if (!getsockopt(cfd, IPPROTO_TCP, TCP_INFO, &ti, &tl))
			segs = ti.tcpi_segs_out;
	}
	shutdown(cfd, SHUT_WR);
	pthread_join(th, NULL);
	printf("ns_per_send %.1f\n", (double)(t1 - t0) / count);
	printf("cpu_ns_per_send %.1f\n", (double)(c1 - c0) / count);
	printf("bytes_per_send %.1f\n", (double)sink.bytes / (count + warmup));
	printf("segments_per_send %.2f\n", (double)segs / (count + warmup));
	close(cfd);
	close(sink.fd);
	close(lfd);
	free(req);
	return 0;
}
