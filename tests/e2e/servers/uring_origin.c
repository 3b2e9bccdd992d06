// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * An origin that reads each request through io_uring (liburing): one
 * listening port per operation, as servers/readpaths.py does for the
 * system calls.
 *
 *   uring_origin BASE_PORT LOG ACCEPT_DELAY_MS
 *
 * Port BASE_PORT + i reads with the i-th of recv, read, readv, recvmsg,
 * splice (into a pipe); a connection is accepted after ACCEPT_DELAY_MS
 * (the client's first bytes arrive before accept() returns), read up to
 * its empty line, EOF, an error or a 3 s silence, answered 200 and
 * closed. Each appends one line to LOG: "METHOD STEPS BYTES", STEPS what
 * each operation returned (comma-separated), BYTES the bytes read with
 * \r and \n written as \r and \n.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static const char *const methods[] = { "recv", "read", "readv", "recvmsg", "splice" };
#define N_METHODS (sizeof(methods) / sizeof(methods[0]))

/* One operation of @method on @fd into @buf: its result (bytes or -errno). */
static int one_op(struct io_uring *ring, int method, int fd, char *buf, size_t size, int pipe_w)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	struct iovec iov[2] = { { buf, 17 }, { buf + 17, size - 17 } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	int r;

	switch (method) {
	case 0:
		io_uring_prep_recv(sqe, fd, buf, size, 0);
		break;
	case 1:
		io_uring_prep_read(sqe, fd, buf, size, 0);
		break;
	case 2:
		io_uring_prep_readv(sqe, fd, iov, 2, 0);
		break;
	case 3:
		io_uring_prep_recvmsg(sqe, fd, &mh, 0);
		break;
	default:
		io_uring_prep_splice(sqe, fd, -1, pipe_w, -1, size, SPLICE_F_NONBLOCK);
		break;
	}
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	r = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return r;
}

static void serve_one(struct io_uring *ring, int method, int fd, const char *log)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
	char data[65536], steps[512] = "", buf[65536];
	size_t len = 0;
	int pipefd[2] = { -1, -1 };
	FILE *f;

	if (method == 4 && pipe(pipefd))
		return;
	while (len < sizeof(data) - 1 && !memmem(data, len, "\r\n\r\n", 4)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r;

		if (poll(&p, 1, 3000) != 1) {
			strcat(steps, "silence,");
			break;
		}
		r = one_op(ring, method, fd, buf, sizeof(buf) - len, pipefd[1]);
		snprintf(steps + strlen(steps), sizeof(steps) - strlen(steps), "%d,", r);
		if (r <= 0)
			break;
		if (method == 4)
			r = (int)read(pipefd[0], buf, (size_t)r);
		if (r <= 0)
			break;
		memcpy(data + len, buf, (size_t)r);
		len += (size_t)r;
	}
	if (write(fd, ok, sizeof(ok) - 1) < 0)
		strcat(steps, "write-failed,");
	close(fd);
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	f = fopen(log, "a");
	if (!f)
		return;
	fprintf(f, "%s %s ", methods[method], steps);
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\r')
			fputs("\\r", f);
		else if (data[i] == '\n')
			fputs("\\n", f);
		else
			fputc(data[i], f);
	}
	fputc('\n', f);
	fclose(f);
}

int main(int argc, char **argv)
{
	struct pollfd ls[N_METHODS];
	struct io_uring ring;
	int base, delay_ms, one = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: %s BASE_PORT LOG ACCEPT_DELAY_MS\n", argv[0]);
		return 2;
	}
	base = atoi(argv[1]);
	delay_ms = atoi(argv[3]);
	if (io_uring_queue_init(8, &ring, 0)) {
		perror("io_uring_queue_init");
		return 1;
	}
	for (size_t i = 0; i < N_METHODS; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(base + i) };

		ls[i].fd = socket(AF_INET, SOCK_STREAM, 0);
		ls[i].events = POLLIN;
		setsockopt(ls[i].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(ls[i].fd, (struct sockaddr *)&a, sizeof(a)) || listen(ls[i].fd, 16)) {
			perror("bind");
			return 1;
		}
	}
	printf("uring_origin: listening on %d-%d\n", base, base + (int)N_METHODS - 1);
	fflush(stdout);
	for (;;) {
		if (poll(ls, N_METHODS, -1) < 0)
			return 1;
		for (size_t i = 0; i < N_METHODS; i++) {
			int c;

			if (!(ls[i].revents & POLLIN))
				continue;
			usleep((useconds_t)delay_ms * 1000);
			c = accept(ls[i].fd, NULL, NULL);
			if (c >= 0)
				serve_one(&ring, (int)i, c, argv[2]);
		}
	}
}
