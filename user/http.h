/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The agent's HTTP endpoint (http.c). */
#ifndef HDRSTRIP_HTTP_H
#define HDRSTRIP_HTTP_H

struct http_srv;

/* The answer to GET @url: its HTTP status, with *@body (malloc'ed text, the
 * endpoint frees it; NULL is a 500) and *@ctype (a static string; plain
 * text unless set). */
typedef int (*http_handler)(void *cls, const char *url, char **body, const char **ctype);

/* Listen at @listen ("ADDRESS:PORT", "[V6ADDRESS]:PORT", ":PORT" for every
 * address) and answer with @fn: NULL after the message. */
struct http_srv *http_start(const char *listen, http_handler fn, void *cls);
/* What to poll() for readability before http_run(). */
int http_fd(const struct http_srv *h);
/* Answer what is ready, in the caller's thread. */
void http_run(struct http_srv *h);
void http_stop(struct http_srv *h);

#endif /* HDRSTRIP_HTTP_H */
