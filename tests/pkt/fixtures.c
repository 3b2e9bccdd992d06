// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Fixture tables: {what, packet, verdict, output, counter deltas, hits}.
 * Expected outputs are written out by hand from the documented masking
 * rules; the reference stripper is checked against them as well.
 */
#include <stddef.h>
#include <string.h>

#include "pkttest.h"

const char pt_fixture_list[] = "# the fixtures' list: a rule's index is its hit slot (R_*)\n"
			       "x-internal-auth\n"
			       "x-internal-trace\n"
			       "x-secret drop\n"
			       "x-edge-*\n"
			       "x-edge-id\n"
			       "cdn-trace-id\n"
			       "x-a\n"
			       "x-proxy_hop-count\n";

#define RL "GET /index.html HTTP/1.1\r\n"
#define HOST "Host: example.com\r\n"
/* "X-Internal-Auth: s3cret": a 15-byte name, so the whole filler name. */
#define AUTH_M "y-hdrstrip: xxxxxxxxxxx\r\n"
/* "X-Internal-Auth: a" */
#define AUTH_A "X-Internal-Auth: a\r\n"
#define AUTH_A_M "y-hdrstrip: xxxxxx\r\n"

#define MASKED_AUTH(line)                                                                          \
	IN(RL HOST line "\r\n\r\n"), OUT(RL HOST AUTH_M "\r\n"), .delta = { HTTP(2, 1, 1) },       \
								 .hits = { [R_AUTH] = 1 }

/*
 * Not a request, in a packet of a connection the program has no state for
 * (every one-packet case: no SYN seen): counted non_http and untracked, and
 * with the default --untracked scan checked line by line. Streams changed
 * this: it used to be passed unlooked-at (a mid-connection segment may well
 * carry internal fields). NOT_HTTP(seen, matched, masked).
 */
/* A first line that is no request line to hdrstrip: some server may still
 * read one, so every line is checked (line by line, no framing). */
#define LINE_BY_LINE(seen_, matched_, masked_)                                                     \
	.delta = { .inspected = 1,                                                                 \
		   .desync = 1,                                                                    \
		   .headers_seen = (seen_),                                                        \
		   .headers_matched = (matched_),                                                  \
		   .headers_masked = (masked_),                                                    \
		   .packets_modified = (masked_) > 0 }

/* An empty line where some parser ends the block and others read on: the
 * request's framing is ambiguous, refused at the block's end (--on-error
 * drop), the masking done. */
#define AMBIGUOUS_END(seen_, matched_, masked_)                                                    \
	.verdict = PV_DROP, .delta = { .inspected = 1,                                             \
				       .http_requests = 1,                                         \
				       .headers_seen = (seen_),                                    \
				       .headers_matched = (matched_),                              \
				       .headers_masked = (masked_),                                \
				       .framing_conflict = 1,                                      \
				       .packets_dropped = 1 }

const struct pt_case pt_http_cases[] = {
	{ "no internal header: output byte-identical",
	  IN(RL HOST "Accept: */*\r\nUser-Agent: t/1\r\n\r\n"), .delta = { HTTP(3, 0, 0) } },
	{ "lower case", MASKED_AUTH("x-internal-auth: s3cret") },
	{ "upper case", MASKED_AUTH("X-INTERNAL-AUTH: s3cret") },
	{ "capitalised", MASKED_AUTH("X-Internal-Auth: s3cret") },
	{ "alternating case", MASKED_AUTH("x-InTeRnAl-AuTh: s3cret") },
	{ "'_' for every '-'", MASKED_AUTH("X_Internal_Auth: s3cret") },
	{ "'_' for one '-', upper case", MASKED_AUTH("X-INTERNAL_AUTH: s3cret") },
	{ "list name written with '_', request with '-'",
	  IN(RL HOST "X-Proxy-Hop-Count: 3\r\n\r\n"), OUT(RL HOST "y-hdrstrip: xxxxxxxx\r\n\r\n"),
	  .delta = { HTTP(2, 1, 1) }, .hits = { [R_HOPCOUNT] = 1 } },
	{ "list name written with '_', request with '_'",
	  IN(RL HOST "x_proxy_hop_count: 3\r\n\r\n"), OUT(RL HOST "y-hdrstrip: xxxxxxxx\r\n\r\n"),
	  .delta = { HTTP(2, 1, 1) }, .hits = { [R_HOPCOUNT] = 1 } },
	{ "prefix rule", IN(RL HOST "X-Edge-Foo: bar\r\n\r\n"),
	  OUT(RL HOST "y-hdrstrip: xxx\r\n\r\n"), .delta = { HTTP(2, 1, 1) },
	  .hits = { [R_EDGE_PFX] = 1 } },
	{ "prefix rule, upper case and '_'", IN(RL HOST "X_EDGE_FOO: bar\r\n\r\n"),
	  OUT(RL HOST "y-hdrstrip: xxx\r\n\r\n"), .delta = { HTTP(2, 1, 1) },
	  .hits = { [R_EDGE_PFX] = 1 } },
	{ "prefix rule matching the bare prefix", IN(RL HOST "x-edge-: 1\r\n\r\n"),
	  OUT(RL HOST "y-hdrst: x\r\n\r\n"), .delta = { HTTP(2, 1, 1) },
	  .hits = { [R_EDGE_PFX] = 1 } },
	{ "prefix rule, long name", IN(RL HOST "X-Edge-Very-Long-Name-Here: v\r\n\r\n"),
	  OUT(RL HOST "y-hdrstrip: xxxxxxxxxxxxxxxxx\r\n\r\n"), .delta = { HTTP(2, 1, 1) },
	  .hits = { [R_EDGE_PFX] = 1 } },
	{ "exact rule under a prefix rule wins", IN(RL HOST "X-Edge-Id: 9\r\n\r\n"),
	  OUT(RL HOST "y-hdrstri: x\r\n\r\n"), .delta = { HTTP(2, 1, 1) },
	  .hits = { [R_EDGE_ID] = 1 } },
	{ "near misses stay",
	  IN(RL HOST "X-Edge: 1\r\nX-Internal-Aut: 2\r\nX-Internal-Auth2: 3\r\n"
		     "XX-Internal-Auth: 4\r\nX-Ab: 5\r\nX-Internal-Auth-: 6\r\n\r\n"),
	  .delta = { HTTP(7, 0, 0) } },
	{ "short name: the filler name is cut", IN(RL HOST "X-A: 1\r\n\r\n"),
	  OUT(RL HOST "y-h: x\r\n\r\n"), .delta = { HTTP(2, 1, 1) }, .hits = { [R_XA] = 1 } },
	{ "short name, nothing after the colon", IN(RL HOST "X-A:\r\n\r\n"),
	  OUT(RL HOST "y-h:\r\n\r\n"), .delta = { HTTP(2, 1, 1) }, .hits = { [R_XA] = 1 } },
	{ "several internal headers",
	  IN(RL HOST AUTH_A "Accept: b\r\nX-Internal-Trace: t\r\ncdn-trace-id: 7\r\n\r\n"),
	  OUT(RL HOST AUTH_A_M "Accept: b\r\ny-hdrstrip: xxxxxxx\r\ny-hdrstrip: xxx\r\n\r\n"),
	  .delta = { HTTP(5, 3, 3) }, .hits = { [R_AUTH] = 1, [R_TRACE] = 1, [R_CDN_TRACE] = 1 } },
	{ "the same header twice", IN(RL AUTH_A HOST AUTH_A "\r\n"),
	  OUT(RL AUTH_A_M HOST AUTH_A_M "\r\n"), .delta = { HTTP(3, 2, 2) },
	  .hits = { [R_AUTH] = 2 } },
	{ "internal header first", IN(RL AUTH_A HOST "\r\n"), OUT(RL AUTH_A_M HOST "\r\n"),
	  .delta = { HTTP(2, 1, 1) }, .hits = { [R_AUTH] = 1 } },
	{ "internal header last", IN(RL HOST "Accept: b\r\n" AUTH_A "\r\n"),
	  OUT(RL HOST "Accept: b\r\n" AUTH_A_M "\r\n"), .delta = { HTTP(3, 1, 1) },
	  .hits = { [R_AUTH] = 1 } },
	{ "bare LF line ends", IN("GET / HTTP/1.1\nHost: h\nX-Internal-Auth: a\nAccept: b\n\n"),
	  OUT("GET / HTTP/1.1\nHost: h\ny-hdrstrip: xxxxxx\nAccept: b\n\n"),
	  .delta = { HTTP(3, 1, 1) }, .hits = { [R_AUTH] = 1 } },
	/* Streams: after a request without a body the next bytes are the next
	 * request; a field line there is a desync, checked line by line (it
	 * used to be left alone as "after the block"). */
	{ "bare LF: the block ends; a field line after it is a desync, masked",
	  IN("GET / HTTP/1.1\nHost: h\n\nX-Internal-Auth: a\n"),
	  OUT("GET / HTTP/1.1\nHost: h\n\ny-hdrstrip: xxxxxx\n"),
	  .delta = { HTTP(2, 1, 1), .desync = 1 }, .hits = { [R_AUTH] = 1 } },
	{ "bare CR line ends", IN("GET / HTTP/1.1\rHost: h\rX-Internal-Auth: a\rAccept: b\r\r"),
	  OUT("GET / HTTP/1.1\rHost: h\ry-hdrstrip: xxxxxx\rAccept: b\r\r"),
	  .delta = { HTTP(3, 1, 1) }, .hits = { [R_AUTH] = 1 } },
	{ "mixed line ends", IN("GET / HTTP/1.1\r\nHost: h\rX-Internal-Auth: a\nAccept: b\r\n\r\n"),
	  OUT("GET / HTTP/1.1\r\nHost: h\ry-hdrstrip: xxxxxx\nAccept: b\r\n\r\n"),
	  .delta = { HTTP(3, 1, 1) }, .hits = { [R_AUTH] = 1 } },
	{ "an empty line ended by a bare CR (node's lenient end): framing ambiguous",
	  IN(RL HOST "\r" AUTH_A "\r\n"), AMBIGUOUS_END(2, 1, 1), .hits = { [R_AUTH] = 1 } },
	{ "CR CR LF after a field (Python's header parser ends there): framing ambiguous",
	  IN(RL HOST "\r\r\n" AUTH_A "\r\n"), AMBIGUOUS_END(2, 1, 1), .hits = { [R_AUTH] = 1 } },
	{ "junk inside a name: no match",
	  IN(RL HOST "X-Internal\x0b-Auth: a\r\nX-Internal-Auth x: b\r\n\r\n"),
	  .delta = { HTTP(3, 0, 0) } },
	{ "junk on both sides of a name", IN(RL HOST "\x0b X-Internal-Auth \x85\t: a\r\n\r\n"),
	  OUT(RL HOST "y-hdrstrip: xxxxxxxxxxx\r\n\r\n"), .delta = { HTTP(2, 1, 1) },
	  .hits = { [R_AUTH] = 1 } },
	{ "obs-fold: continuation lines share the masked field's fate",
	  IN(RL HOST AUTH_A "  b c\r\n\td\r\nAccept: x\r\n\r\n"),
	  OUT(RL HOST AUTH_A_M "  yyy\r\n\ty\r\nAccept: x\r\n\r\n"), .delta = { HTTP(3, 1, 1) },
	  .hits = { [R_AUTH] = 1 } },
	{ "obs-fold: a continuation line is also checked on its own",
	  IN(RL HOST "Accept: a\r\n X-Internal-Auth: b\r\n\tc\r\n\r\n"),
	  OUT(RL HOST "Accept: a\r\n y-hdrstrip: xxxxxx\r\n\ty\r\n\r\n"),
	  .delta = { HTTP(2, 1, 1) }, .hits = { [R_AUTH] = 1 } },
	{ "obs-fold: a benign continuation stays", IN(RL HOST "Accept: a\r\n b\r\n\r\n"),
	  .delta = { HTTP(2, 0, 0) } },
	{ "obs-fold across an empty line that may end the block: framing ambiguous",
	  IN(RL HOST "X-Internal-Auth: a\r\r\n b\r\n\r\n"), AMBIGUOUS_END(2, 1, 1),
	  .hits = { [R_AUTH] = 1 } },
	{ "field line with a leading space, first in the block",
	  IN(RL " X-Internal-Auth: b\r\n" HOST "\r\n"),
	  OUT(RL " y-hdrstrip: xxxxxx\r\n" HOST "\r\n"), .delta = { HTTP(1, 1, 1) },
	  .hits = { [R_AUTH] = 1 } },
	{ "field line with leading tab and spaces", IN(RL "\t  X-Internal-Auth: b\r\n" HOST "\r\n"),
	  OUT(RL "\t  y-hdrstrip: xxxxxx\r\n" HOST "\r\n"), .delta = { HTTP(1, 1, 1) },
	  .hits = { [R_AUTH] = 1 } },
	{ "value cut by the packet end", IN(RL HOST "X-Internal-Auth: sec"),
	  OUT(RL HOST "y-hdrstrip: xxxxxxxx"), .delta = { HTTP(2, 1, 1) },
	  .hits = { [R_AUTH] = 1 } },
	{ "cut right after the colon", IN(RL HOST "X-Internal-Auth:"),
	  OUT(RL HOST "y-hdrstrip: xxxx"), .delta = { HTTP(2, 1, 1) }, .hits = { [R_AUTH] = 1 } },
	{ "cut after the CR of a masked line", IN(RL HOST "X-Internal-Auth: a\r"),
	  OUT(RL HOST "y-hdrstrip: xxxxxx\r"), .delta = { HTTP(2, 1, 1) },
	  .hits = { [R_AUTH] = 1 } },
	/* Streams: a segment that ends inside a name the list could still
	 * match has the name's bytes rewritten ahead (they cannot be changed
	 * once sent); it used to be left as no match. */
	{ "name cut by the packet end: rewritten ahead", IN(RL HOST "X-Internal-Au"),
	  OUT(RL HOST "y-hdrstrip: x"),
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 2,
		     .packets_modified = 1,
		     .split_names = 1 } },
	{ "benign name cut by the packet end: left alone", IN(RL HOST "Accept-Enc"),
	  .delta = { HTTP(2, 0, 0) } },
	{ "framing name cut by the packet end: left alone", IN(RL HOST "Content-Len"),
	  .delta = { HTTP(2, 0, 0) } },
	{ "a line without a colon is not a field", IN(RL HOST "garbage line\r\n" AUTH_A "\r\n"),
	  OUT(RL HOST "garbage line\r\n" AUTH_A_M "\r\n"), .delta = { HTTP(3, 1, 1) },
	  .hits = { [R_AUTH] = 1 } },
	{ "a line that starts with a colon", IN(RL HOST ":x\r\n" AUTH_A "\r\n"),
	  OUT(RL HOST ":x\r\n" AUTH_A_M "\r\n"), .delta = { HTTP(3, 1, 1) },
	  .hits = { [R_AUTH] = 1 } },
	{ "HTTP/0.9 request line", IN("GET /\r\n" AUTH_A "\r\n"), OUT("GET /\r\n" AUTH_A_M "\r\n"),
	  .delta = { HTTP(1, 1, 1) }, .hits = { [R_AUTH] = 1 } },
	{ "empty lines before the request line", IN("\r\n\n" RL AUTH_A "\r\n"),
	  OUT("\r\n\n" RL AUTH_A_M "\r\n"), .delta = { HTTP(1, 1, 1) }, .hits = { [R_AUTH] = 1 } },
	{ "request line split by junk bytes", IN("GET\x0b/\x1f\x1cHTTP/1.1\xa0\r\n" AUTH_A "\r\n"),
	  OUT("GET\x0b/\x1f\x1cHTTP/1.1\xa0\r\n" AUTH_A_M "\r\n"), .delta = { HTTP(1, 1, 1) },
	  .hits = { [R_AUTH] = 1 } },
	{ "32-byte method", IN("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345 / HTTP/1.1\r\n" AUTH_A "\r\n"),
	  OUT("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345 / HTTP/1.1\r\n" AUTH_A_M "\r\n"),
	  .delta = { HTTP(1, 1, 1) }, .hits = { [R_AUTH] = 1 } },
	{ "33-byte method (nginx takes it): scanned line by line",
	  IN("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456 / HTTP/1.1\r\n" AUTH_A "\r\n"),
	  OUT("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456 / HTTP/1.1\r\n" AUTH_A_M "\r\n"),
	  LINE_BY_LINE(1, 1, 1), .hits = { [R_AUTH] = 1 } },
	{ "bad version: scanned line by line", IN("GET / HTTX/1.1\r\n" AUTH_A "\r\n"),
	  OUT("GET / HTTX/1.1\r\n" AUTH_A_M "\r\n"), LINE_BY_LINE(1, 1, 1),
	  .hits = { [R_AUTH] = 1 } },
	{ "a method alone: scanned line by line", IN("GET\r\n" AUTH_A "\r\n"),
	  OUT("GET\r\n" AUTH_A_M "\r\n"), LINE_BY_LINE(1, 1, 1), .hits = { [R_AUTH] = 1 } },
	{ "a CR between method and target (Python splits there): scanned line by line",
	  IN("GET\r/ HTTP/1.1\r\n" AUTH_A "\r\n"), OUT("GET\r/ HTTP/1.1\r\n" AUTH_A_M "\r\n"),
	  LINE_BY_LINE(2, 1, 1), .hits = { [R_AUTH] = 1 } },
	{ "0x85 in the target (nginx takes it): scanned line by line",
	  IN("GET /a\x85"
	     "b HTTP/1.1\r\n" AUTH_A "\r\n"),
	  OUT("GET /a\x85"
	      "b HTTP/1.1\r\n" AUTH_A_M "\r\n"),
	  LINE_BY_LINE(1, 1, 1), .hits = { [R_AUTH] = 1 } },
	{ "TLS record on port 80: another protocol, passed",
	  IN("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\x00"),
	  .delta = { .inspected = 1, .non_http = 1 } },
	/* It used to be read as a request line and the frames after it line by
	 * line, which parses no HTTP/2: an h2c origin read the HPACK fields. */
	{ "HTTP/2 preface and frames (h2c) on port 80: --on-error drop",
	  IN("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	     /* SETTINGS, then HEADERS (END_STREAM, END_HEADERS) of GET http /
	      * and the literal field x-internal-auth: a, not indexed */
	     "\0\0\0\x04\0\0\0\0\0"
	     "\0\0\x16\x01\x05\0\0\0\x01\x82\x86\x84\0\x0fx-internal-auth\x01a"),
	  .verdict = PV_DROP, .delta = { .inspected = 1, .h2c_preface = 1, .packets_dropped = 1 } },
	{ "HTTP/2 preface cut after its version's '2': --on-error drop", IN("PRI * HTTP/2"),
	  .verdict = PV_DROP, .delta = { .inspected = 1, .h2c_preface = 1, .packets_dropped = 1 } },
	{ "HTTP/2 preface cut before its version's '2': nothing decided yet", IN("PRI * HTTP/"),
	  .delta = { .inspected = 1 } },
	{ "SSH banner on port 80: scanned line by line", IN("SSH-2.0-OpenSSH_9.6\r\n"),
	  LINE_BY_LINE(0, 0, 0) },
	{ "a response on port 80: scanned line by line", IN("HTTP/1.1 200 OK\r\n" AUTH_A "\r\n"),
	  OUT("HTTP/1.1 200 OK\r\n" AUTH_A_M "\r\n"), LINE_BY_LINE(1, 1, 1),
	  .hits = { [R_AUTH] = 1 } },
	{ "a response from port 80: port not inspected", .spec = { .sport = 80, .dport = 40000 },
	  IN("HTTP/1.1 200 OK\r\n" AUTH_A "\r\n"), .delta = { .not_inspected = 1 } },
	{ "a request to port 8080: port not inspected", .spec = { .dport = 8080 },
	  IN(RL AUTH_A "\r\n"), .delta = { .not_inspected = 1 } },
	{ "no payload: a bare ACK", IN(""), .delta = { .no_payload = 1 } },
	{ "Ethernet padding after the datagram", .spec = { .trailer = 20 }, IN(RL "X-A: 1\r\n\r\n"),
	  OUT(RL "y-h: x\r\n\r\n"), .delta = { HTTP(1, 1, 1) }, .hits = { [R_XA] = 1 } },
	{ "drop rule", IN(RL HOST "X-Secret: 1\r\n\r\n"), .verdict = PV_DROP,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 2,
		     .headers_matched = 1,
		     .packets_dropped = 1 },
	  .hits = { [R_SECRET] = 1 } },
	{ "drop rule after a masked field", IN(RL AUTH_A "x_SECRET: 1\r\n\r\n"), .verdict = PV_DROP,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 2,
		     .headers_matched = 2,
		     .headers_masked = 1,
		     .packets_dropped = 1 },
	  .hits = { [R_AUTH] = 1, [R_SECRET] = 1 } },
	{ "drop rule with junk before the colon", IN(RL "X-Secret\xa0\x1f: 1\r\n\r\n"),
	  .verdict = PV_DROP,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 1,
		     .headers_matched = 1,
		     .packets_dropped = 1 },
	  .hits = { [R_SECRET] = 1 } },
	{ "drop rule as the continuation of a benign field",
	  IN(RL "Accept: a\r\n X-Secret: 1\r\n\r\n"), .verdict = PV_DROP,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 1,
		     .headers_matched = 1,
		     .packets_dropped = 1 },
	  .hits = { [R_SECRET] = 1 } },
	{ "drop-rule name inside a masked field's continuation: masked",
	  IN(RL AUTH_A " X-Secret: 1\r\n\r\n"), OUT(RL AUTH_A_M " yyyyyyyyyyy\r\n\r\n"),
	  .delta = { HTTP(1, 1, 1) }, .hits = { [R_AUTH] = 1 } },
	/* Streams: after a request without a body, a field line is a desync,
	 * checked line by line: its drop rule drops (it used to pass). */
	{ "drop-rule name after the header block: a desync, dropped",
	  IN(RL HOST "\r\nX-Secret: 1\r\n"), .verdict = PV_DROP,
	  .delta = { .inspected = 1,
		     .http_requests = 1,
		     .headers_seen = 2,
		     .headers_matched = 1,
		     .packets_dropped = 1,
		     .desync = 1 },
	  .hits = { [R_SECRET] = 1 } },
	{ "pipelined: a second request in the same segment", IN(RL HOST "\r\n" RL AUTH_A "\r\n"),
	  OUT(RL HOST "\r\n" RL AUTH_A_M "\r\n"),
	  .delta = { .inspected = 1,
		     .http_requests = 2,
		     .headers_seen = 2,
		     .headers_matched = 1,
		     .headers_masked = 1,
		     .packets_modified = 1 },
	  .hits = { [R_AUTH] = 1 } },
	{ "pipelined: three requests, bare LF, a drop rule in the third",
	  IN("GET /a HTTP/1.1\nHost: h\n\nGET /b HTTP/1.1\n"
	     "X-A: 1\n\n"
	     "GET /c HTTP/1.1\nX-Secret: 1\n\n"),
	  .verdict = PV_DROP,
	  .delta = { .inspected = 1,
		     .http_requests = 3,
		     .headers_seen = 3,
		     .headers_matched = 2,
		     .headers_masked = 1,
		     .packets_dropped = 1 },
	  .hits = { [R_XA] = 1, [R_SECRET] = 1 } },
	/* Streams: the body is skipped because of its length now (it used to
	 * end the scan for not being a request); the assertion stands. */
	{ "a Content-Length body is skipped, even what looks like a field",
	  IN("POST / HTTP/1.1\r\nContent-Length: 22\r\n\r\n{\"X-Internal-Auth\": 1}\n"),
	  .delta = { HTTP(1, 0, 0) } },
};

const size_t pt_n_http_cases = sizeof(pt_http_cases) / sizeof(pt_http_cases[0]);

/* The same masked request over every L2-L4 shape. */
#define MREQ IN(RL HOST "X-Internal-Auth: s3cret\r\n\r\n")
#define MASKED                                                                                     \
	MREQ, OUT(RL HOST AUTH_M "\r\n"), .delta = { HTTP(2, 1, 1) }, .hits = { [R_AUTH] = 1 }

#define NH_HOP 0
#define NH_RT 43
#define NH_FRAG 44
#define NH_AH 51
#define NH_DST 60

/* MSS 1460, SACK permitted, timestamps, NOP, window scale 7. */
#define TCP_OPTS_20                                                                                \
	"\x02\x04\x05\xb4\x04\x02\x08\x0a\x00\x00\x00\x01\x00\x00\x00\x00\x01\x03\x03\x07"
#define NOP8 "\x01\x01\x01\x01\x01\x01\x01\x01"
/* Record route with room for nine addresses, then end of options: 40 bytes. */
#define IP_RR_40                                                                                   \
	"\x07\x27\x04"                                                                             \
	"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"                 \
	"\x00"

const struct pt_case pt_layer_cases[] = {
	{ "IPv4, no options", MASKED },
	{ "802.1Q tag", .spec = { .n_vlans = 1, .vlan_tpid = { 0x8100 } }, MASKED },
	{ "QinQ: 802.1ad outer tag, 802.1Q inner tag",
	  .spec = { .n_vlans = 2, .vlan_tpid = { 0x88a8, 0x8100 } }, MASKED },
	{ "two 802.1Q tags", .spec = { .n_vlans = 2, .vlan_tpid = { 0x8100, 0x8100 } }, MASKED },
	/* Linux takes off any number of priority tags (VID 0) without a VLAN
	 * device, and a VLAN device its own: every tag is read, up to eight;
	 * a deeper stack goes to the on-error policy. */
	{ "three tags: QinQ and an 802.1Q tag",
	  .spec = { .n_vlans = 3, .vlan_tpid = { 0x88a8, 0x8100, 0x8100 } }, MASKED },
	{ "eight tags, the most read",
	  .spec = { .n_vlans = 8,
		    .vlan_tpid = { 0x88a8, 0x8100, 0x8100, 0x8100, 0x88a8, 0x8100, 0x8100,
				   0x8100 } },
	  MASKED },
	{ "nine tags: more than read, dropped (on-error)",
	  .spec = { .n_vlans = 9,
		    .vlan_tpid = { 0x8100, 0x8100, 0x8100, 0x8100, 0x8100, 0x8100, 0x8100, 0x8100,
				   0x8100 } },
	  MREQ, .verdict = PV_DROP, .delta = { .vlan_too_deep = 1, .packets_dropped = 1 } },
	{ "IPv4 options, 4 bytes", .spec = { .ip_opts = "\x01\x01\x01\x00", .ip_opts_len = 4 },
	  MASKED },
	{ "IPv4 options, 40 bytes (IHL 15)", .spec = { .ip_opts = IP_RR_40, .ip_opts_len = 40 },
	  MASKED },
	{ "TCP options: MSS, SACK permitted, timestamps, window scale",
	  .spec = { .tcp_opts = TCP_OPTS_20, .tcp_opts_len = 20 }, MASKED },
	{ "TCP options, 40 bytes (data offset 15)",
	  .spec = { .tcp_opts = NOP8 NOP8 NOP8 NOP8 NOP8, .tcp_opts_len = 40 }, MASKED },
	{ "IPv4 and TCP options at their largest",
	  .spec = { .ip_opts = IP_RR_40,
		    .ip_opts_len = 40,
		    .tcp_opts = NOP8 NOP8 NOP8 NOP8 NOP8,
		    .tcp_opts_len = 40 },
	  MASKED },
	{ "IPv4 with DF: not a fragment", .spec = { .frag_off = 0x4000 }, MASKED },
	/* The stack puts fragments together: what they carry cannot be
	 * scanned, so the on-error policy decides (drop). */
	{ "IPv4 first fragment (MF) to an inspected port: dropped", .spec = { .frag_off = 0x2000 },
	  MREQ, .verdict = PV_DROP, .delta = { .fragments = 1, .packets_dropped = 1 } },
	{ "IPv4 first fragment (MF) to another port: passed",
	  .spec = { .frag_off = 0x2000, .dport = 8080 }, MREQ, .delta = { .fragments = 1 } },
	{ "IPv4 middle fragment (MF, offset), port unknown: dropped",
	  .spec = { .frag_off = 0x2000 | 185 }, MREQ, .verdict = PV_DROP,
	  .delta = { .fragments = 1, .packets_dropped = 1 } },
	{ "IPv4 last fragment (offset), port unknown: dropped", .spec = { .frag_off = 185 }, MREQ,
	  .verdict = PV_DROP, .delta = { .fragments = 1, .packets_dropped = 1 } },
	{ "IPv6", .spec = { .ipv6 = 1 }, MASKED },
	{ "IPv6 in 802.1Q", .spec = { .ipv6 = 1, .n_vlans = 1, .vlan_tpid = { 0x8100 } }, MASKED },
	{ "IPv6: hop-by-hop, routing, destination options, AH",
	  .spec = { .ipv6 = 1,
		    .ext = { { NH_HOP, 0 }, { NH_RT, 1 }, { NH_DST, 0 }, { NH_AH, 4 } },
		    .n_ext = 4 },
	  MASKED },
	{ "IPv6: six extension headers, the most followed",
	  .spec = { .ipv6 = 1,
		    .ext = { { NH_HOP, 0 },
			     { NH_DST, 1 },
			     { NH_RT, 0 },
			     { NH_AH, 4 },
			     { NH_DST, 0 },
			     { NH_DST, 2 } },
		    .n_ext = 6 },
	  MASKED },
	{ "IPv6: seven extension headers, the upper layer out of reach: dropped",
	  .spec = { .ipv6 = 1,
		    .ext = { { NH_HOP, 0 },
			     { NH_DST, 1 },
			     { NH_RT, 0 },
			     { NH_AH, 4 },
			     { NH_DST, 0 },
			     { NH_DST, 2 },
			     { NH_DST, 0 } },
		    .n_ext = 7 },
	  MREQ, .verdict = PV_DROP, .delta = { .malformed = 1, .packets_dropped = 1 } },
	{ "IPv6: hop-by-hop after another header (the stack drops it): passed, untouched",
	  .spec = { .ipv6 = 1, .ext = { { NH_DST, 0 }, { NH_HOP, 0 } }, .n_ext = 2 }, MREQ,
	  .delta = { .truncated = 1 } },
	{ "IPv6 fragment header (first fragment) to an inspected port: dropped",
	  .spec = { .ipv6 = 1, .ext = { { NH_FRAG, 0, 0x0001 } }, .n_ext = 1 }, MREQ,
	  .verdict = PV_DROP, .delta = { .fragments = 1, .packets_dropped = 1 } },
	{ "IPv6 hop-by-hop then a fragment header, port unknown: dropped",
	  .spec = { .ipv6 = 1, .ext = { { NH_HOP, 0 }, { NH_FRAG, 0, 0x0008 } }, .n_ext = 2 }, MREQ,
	  .verdict = PV_DROP, .delta = { .fragments = 1, .packets_dropped = 1 } },
	{ "IPv6: a 2 KiB destination-options header",
	  .spec = { .ipv6 = 1, .ext = { { NH_DST, 255 } }, .n_ext = 1 }, MASKED },
	{ "IPv6 in QinQ with extension headers and TCP options",
	  .spec = { .ipv6 = 1,
		    .n_vlans = 2,
		    .vlan_tpid = { 0x88a8, 0x8100 },
		    .ext = { { NH_HOP, 1 }, { NH_DST, 0 } },
		    .n_ext = 2,
		    .tcp_opts = TCP_OPTS_20,
		    .tcp_opts_len = 20 },
	  MASKED },
	{ "IPv6 with 4 bytes of TCP options, short filler name",
	  .spec = { .ipv6 = 1, .tcp_opts = "\x01\x01\x01\x00", .tcp_opts_len = 4 },
	  IN(RL "X-A: 12345\r\n\r\n"), OUT(RL "y-h: xxxxx\r\n\r\n"), .delta = { HTTP(1, 1, 1) },
	  .hits = { [R_XA] = 1 } },
};

const size_t pt_n_layer_cases = sizeof(pt_layer_cases) / sizeof(pt_layer_cases[0]);

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void ip4_ihl4(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	p[l->l3_off] = 0x44;
}

static void ip4_ihl15_short(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	p[l->l3_off] = 0x4f;
}

static void ip4_version6(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	p[l->l3_off] = 0x65;
}

static void ip4_total_below_header(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	put16(p + l->l3_off + 2, 10);
}

static void ip4_total_past_frame(__u8 *p, size_t *len, const struct pb_layout *l)
{
	put16(p + l->l3_off + 2, (__u16)(*len - l->l3_off + 100));
}

static void ip4_udp(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	p[l->l3_off + 9] = 17;
}

static void tcp_doff4(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	p[l->l4_off + 12] = 0x40;
}

static void tcp_doff15_short(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	p[l->l4_off + 12] = 0xf0;
}

static void ip6_version4(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	p[l->l3_off] = 0x40;
}

static void ip6_payload_len0(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	put16(p + l->l3_off + 4, 0);
}

static void ip6_ext_past_frame(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	p[l->l3_off + 40 + 1] = 200; /* the first extension header's length */
}

static void ip6_no_next(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	p[l->l3_off + 6] = 59;
}

static void ether_arp(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	put16(p + l->l3_off - 2, 0x0806);
}

static void vlan_cut_after_tag(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)p;
	*len = l->l3_off - 2 + 1; /* half of the inner EtherType */
}

#define TRUNC .delta = { .truncated = 1 }

const struct pt_case pt_malformed_cases[] = {
	{ "IPv4 IHL 4", MREQ, TRUNC, .mangle = ip4_ihl4 },
	{ "IPv4 IHL 15 past the frame", IN(""), TRUNC, .mangle = ip4_ihl15_short },
	{ "IPv4 EtherType, version 6", MREQ, TRUNC, .mangle = ip4_version6 },
	{ "IPv4 total length below the header", MREQ, TRUNC, .mangle = ip4_total_below_header },
	{ "IPv4 total length past the frame", MREQ, .delta = { .inspected = 1, .truncated = 1 },
	  .mangle = ip4_total_past_frame },
	{ "IPv4 UDP to port 80: not ours", MREQ, .delta = { .not_tcp = 1 }, .mangle = ip4_udp },
	{ "TCP data offset 4", MREQ, TRUNC, .mangle = tcp_doff4 },
	{ "TCP data offset 15 past the frame", IN(""), TRUNC, .mangle = tcp_doff15_short },
	{ "IPv6 EtherType, version 4", .spec = { .ipv6 = 1 }, MREQ, TRUNC, .mangle = ip6_version4 },
	{ "IPv6 payload length 0 (jumbogram)", .spec = { .ipv6 = 1 }, MREQ, TRUNC,
	  .mangle = ip6_payload_len0 },
	{ "IPv6 extension header past the frame",
	  .spec = { .ipv6 = 1, .ext = { { NH_DST, 0 } }, .n_ext = 1 }, MREQ, TRUNC,
	  .mangle = ip6_ext_past_frame },
	{ "IPv6 no next header: not ours", .spec = { .ipv6 = 1 }, MREQ, .delta = { .not_tcp = 1 },
	  .mangle = ip6_no_next },
	{ "ARP EtherType: not ours", MREQ, .delta = { .not_ip = 1 }, .mangle = ether_arp },
	{ "802.1Q tag, then the frame ends", .spec = { .n_vlans = 1, .vlan_tpid = { 0x8100 } },
	  MREQ, TRUNC, .mangle = vlan_cut_after_tag },
};

const size_t pt_n_malformed_cases = sizeof(pt_malformed_cases) / sizeof(pt_malformed_cases[0]);

/*
 * The wire (issue 34): tunnels read one level deep, what the stack may
 * take a request out of that hdrstrip cannot read (on-error: dropped
 * here), and what cannot reach a TCP socket (passed, with its reason's
 * counter). Outer headers come from the builder's pb_encap; every passed
 * frame's inner IPv4 and TCP checksums and outer UDP (when not zero) and
 * GRE (C) checksums are verified by pb_check_frame().
 */
#define VXLAN(...)                                                                                 \
	{                                                                                          \
		.kind = PB_ENC_VXLAN, __VA_ARGS__                                                  \
	}
#define GENEVE(...)                                                                                \
	{                                                                                          \
		.kind = PB_ENC_GENEVE, __VA_ARGS__                                                 \
	}
#define GRE(...)                                                                                   \
	{                                                                                          \
		.kind = PB_ENC_GRE, __VA_ARGS__                                                    \
	}
#define IPIP(...)                                                                                  \
	{                                                                                          \
		.kind = PB_ENC_IPIP, __VA_ARGS__                                                   \
	}
#define ENC1(a) .n_enc = 1, .enc = { a }
#define ENC2(a, b) .n_enc = 2, .enc = { a, b }

/* The masked request, read inside a tunnel. */
#define MASKED_TUN                                                                                 \
	MREQ, OUT(RL HOST AUTH_M "\r\n"), .delta = { HTTP(2, 1, 1), .tunneled = 1 },               \
					  .hits = { [R_AUTH] = 1 }
/* The request, not scanned: dropped by the on-error policy, or passed,
 * with the reason's counter. */
#define ON_ERROR(ctr) MREQ, .verdict = PV_DROP, .delta = { .ctr = 1, .packets_dropped = 1 }
#define PASSED(ctr) MREQ, .delta = { .ctr = 1 }

static void ip4_resum(__u8 *p, size_t l3)
{
	put16(p + l3 + 10, 0);
	put16(p + l3 + 10, pb_fold(pb_sum(p + l3, (p[l3] & 0xf) * 4u, 0)));
}

/* The TCP packet's IP protocol (IPv4) or next header (IPv6) made ESP. */
static void ip_esp(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	if ((p[l->l3_off] >> 4) == 6) {
		p[l->l3_off + 6] = 50;
		return;
	}
	p[l->l3_off + 9] = 50;
	ip4_resum(p, l->l3_off);
}

static void ether_mpls(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	put16(p + l->l3_off - 2, 0x8847);
}

static void ether_pppoe_session(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	put16(p + l->l3_off - 2, 0x8864);
}

static void ether_macsec(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	put16(p + l->l3_off - 2, 0x88e5);
}

static void ether_lldp(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	put16(p + l->l3_off - 2, 0x88cc);
}

/* The inner IPv4 total length 100 bytes past the tunnel's datagram. */
static void inner_ip4_past_datagram(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	put16(p + l->l3_off + 2, (__u16)(((p[l->l3_off + 2] << 8) | p[l->l3_off + 3]) + 100));
	ip4_resum(p, l->l3_off);
}

/* The IP header's version nibble 5 (a device without a link header). */
static void ip_version5(__u8 *p, size_t *len, const struct pb_layout *l)
{
	(void)len;
	p[l->l3_off] = (__u8)(0x50 | (p[l->l3_off] & 0xf));
}

/* Eight tags, the most read; nine, one more. */
#define TAGS8                                                                                      \
	{                                                                                          \
		0x88a8, 0x8100, 0x8100, 0x8100, 0x88a8, 0x8100, 0x8100, 0x8100                     \
	}
#define TAGS9                                                                                      \
	{                                                                                          \
		0x8100, 0x8100, 0x8100, 0x8100, 0x8100, 0x8100, 0x8100, 0x8100, 0x8100             \
	}

const struct pt_case pt_wire_cases[] = {
	/* VXLAN: UDP to 4789 or 8472, an 8-byte header, an Ethernet frame. */
	{ "VXLAN over IPv4, UDP checksum zero", .spec = { ENC1(VXLAN()) }, MASKED_TUN },
	{ "VXLAN over IPv4, UDP checksum computed",
	  .spec = { ENC1(VXLAN(.vni = 42, .udp_csum = 1)) }, MASKED_TUN },
	{ "VXLAN over IPv6, UDP checksum computed",
	  .spec = { ENC1(VXLAN(.ipv6 = 1, .vni = 42, .udp_csum = 1)) }, MASKED_TUN },
	{ "VXLAN on Linux's default port 8472",
	  .spec = { ENC1(VXLAN(.port = 8472, .udp_csum = 1)) }, MASKED_TUN },
	{ "VXLAN, IPv6 inside", .spec = { .ipv6 = 1, ENC1(VXLAN(.udp_csum = 1)) }, MASKED_TUN },
	{ "VXLAN, IPv6 with extension headers inside, over IPv6",
	  .spec = { .ipv6 = 1,
		    .ext = { { NH_HOP, 0 }, { NH_DST, 1 } },
		    .n_ext = 2,
		    ENC1(VXLAN(.ipv6 = 1, .udp_csum = 1)) },
	  MASKED_TUN },
	{ "VXLAN, IPv4 and TCP options inside",
	  .spec = { .ip_opts = IP_RR_40,
		    .ip_opts_len = 40,
		    .tcp_opts = TCP_OPTS_20,
		    .tcp_opts_len = 20,
		    ENC1(VXLAN(.udp_csum = 1)) },
	  MASKED_TUN },
	{ "VXLAN, the VNI at its largest (0xffffff)",
	  .spec = { ENC1(VXLAN(.vni = 0xffffff, .udp_csum = 1)) }, MASKED_TUN },
	{ "VXLAN, an 802.1Q tag on the inner frame",
	  .spec = { .n_vlans = 1, .vlan_tpid = { 0x8100 }, ENC1(VXLAN(.udp_csum = 1)) },
	  MASKED_TUN },
	{ "VXLAN, eight VLAN tags on the inner frame",
	  .spec = { .n_vlans = 8, .vlan_tpid = TAGS8, ENC1(VXLAN(.udp_csum = 1)) }, MASKED_TUN },
	{ "VXLAN, nine VLAN tags on the inner frame: dropped (on-error)",
	  .spec = { .n_vlans = 9, .vlan_tpid = TAGS9, ENC1(VXLAN(.udp_csum = 1)) },
	  ON_ERROR(vlan_too_deep) },
	{ "VXLAN, a response inside from port 80: not inspected",
	  .spec = { .sport = 80, .dport = 40000, .reply = 1, ENC1(VXLAN(.udp_csum = 1)) }, MREQ,
	  .delta = { .tunneled = 1, .not_inspected = 1 } },
	{ "VXLAN, a bare ACK inside", .spec = { ENC1(VXLAN()) }, IN(""),
	  .delta = { .tunneled = 1, .no_payload = 1 } },
	{ "VXLAN without the I flag (vxlan_rcv() drops it): passed, untouched",
	  .spec = { ENC1(VXLAN(.no_i_flag = 1, .udp_csum = 1)) }, PASSED(truncated) },
	{ "VXLAN, the inner IPv4 length past the datagram (the stack drops it): passed",
	  .spec = { ENC1(VXLAN()) }, MREQ, .mangle = inner_ip4_past_datagram,
	  .delta = { .tunneled = 1, .inspected = 1, .truncated = 1 } },

	/* GENEVE: UDP to 6081, 8 bytes and options, Ethernet or IP. */
	{ "GENEVE, no options, an Ethernet frame inside", .spec = { ENC1(GENEVE(.inner_l2 = 1)) },
	  MASKED_TUN },
	{ "GENEVE, 8 bytes of options, an Ethernet frame inside, UDP checksum",
	  .spec = { ENC1(GENEVE(.inner_l2 = 1, .opt_len = 8, .vni = 42, .udp_csum = 1)) },
	  MASKED_TUN },
	{ "GENEVE, 252 bytes of options (the most), IPv4 inside",
	  .spec = { ENC1(GENEVE(.opt_len = 252, .udp_csum = 1)) }, MASKED_TUN },
	{ "GENEVE over IPv6, 12 bytes of options, IPv6 inside",
	  .spec = { .ipv6 = 1, ENC1(GENEVE(.ipv6 = 1, .opt_len = 12, .udp_csum = 1)) },
	  MASKED_TUN },
	{ "GENEVE version 1 (geneve_udp_encap_recv() drops it): passed, untouched",
	  .spec = { ENC1(GENEVE(.version = 1, .udp_csum = 1)) }, PASSED(truncated) },
	{ "GENEVE carrying MPLS: dropped (on-error)",
	  .spec = { ENC1(GENEVE(.proto = 0x8847, .udp_csum = 1)) }, ON_ERROR(encap_unknown) },

	/* GRE version 0 (RFC 2784, 2890): IP or Ethernet (gretap) inside. */
	{ "GRE, IPv4 in IPv4", .spec = { ENC1(GRE()) }, MASKED_TUN },
	{ "GRE with checksum, key and sequence number",
	  .spec = { ENC1(GRE(.gre_flags = PB_GRE_C | PB_GRE_K | PB_GRE_S, .vni = 0x01020304)) },
	  MASKED_TUN },
	{ "GRE with a checksum, IPv6 inside",
	  .spec = { .ipv6 = 1, ENC1(GRE(.gre_flags = PB_GRE_C)) }, MASKED_TUN },
	{ "gretap: GRE with a key and a checksum, an Ethernet frame inside",
	  .spec = { ENC1(GRE(.gre_flags = PB_GRE_C | PB_GRE_K, .vni = 77, .inner_l2 = 1)) },
	  MASKED_TUN },
	{ "ip6gre: GRE over IPv6 with a checksum, IPv4 inside",
	  .spec = { ENC1(GRE(.ipv6 = 1, .gre_flags = PB_GRE_C | PB_GRE_S)) }, MASKED_TUN },
	{ "GRE version 1 (PPTP, PPP inside): dropped (on-error)",
	  .spec = { ENC1(GRE(.gre_flags = PB_GRE_K | 1, .proto = 0x880b)) },
	  ON_ERROR(encap_unknown) },
	{ "GRE with the routing bit (gre_parse_header() drops it): passed, untouched",
	  .spec = { ENC1(GRE(.gre_flags = PB_GRE_R)) }, PASSED(truncated) },
	{ "GRE carrying ERSPAN: dropped (on-error)",
	  .spec = { ENC1(GRE(.gre_flags = PB_GRE_S, .proto = 0x88be)) }, ON_ERROR(encap_unknown) },
	{ "GRE carrying MPLS: dropped (on-error)", .spec = { ENC1(GRE(.proto = 0x8847)) },
	  ON_ERROR(encap_unknown) },

	/* IP in IP: IPIP, SIT, ip6tnl. */
	{ "IPIP: IPv4 in IPv4", .spec = { ENC1(IPIP()) }, MASKED_TUN },
	{ "IPIP, IPv4 and TCP options inside",
	  .spec = { .ip_opts = "\x01\x01\x01\x00",
		    .ip_opts_len = 4,
		    .tcp_opts = TCP_OPTS_20,
		    .tcp_opts_len = 20,
		    ENC1(IPIP()) },
	  MASKED_TUN },
	{ "SIT: IPv6 in IPv4", .spec = { .ipv6 = 1, ENC1(IPIP()) }, MASKED_TUN },
	{ "SIT, IPv6 extension headers inside",
	  .spec = { .ipv6 = 1,
		    .ext = { { NH_DST, 0 }, { NH_RT, 1 }, { NH_AH, 4 } },
		    .n_ext = 3,
		    ENC1(IPIP()) },
	  MASKED_TUN },
	{ "ip6tnl: IPv4 in IPv6", .spec = { ENC1(IPIP(.ipv6 = 1)) }, MASKED_TUN },
	{ "ip6tnl: IPv6 in IPv6", .spec = { .ipv6 = 1, ENC1(IPIP(.ipv6 = 1)) }, MASKED_TUN },
	{ "IPIP, an inner TCP first fragment to an inspected port: dropped (on-error)",
	  .spec = { .frag_off = 0x2000, ENC1(IPIP()) }, ON_ERROR(fragments) },

	/* A tunnel in a tunnel: the stack reads it, hdrstrip reads one. */
	{ "VXLAN in VXLAN: dropped (on-error)",
	  .spec = { ENC2(VXLAN(.udp_csum = 1), VXLAN(.vni = 7, .udp_csum = 1)) },
	  ON_ERROR(encap_unknown) },
	{ "GRE in IPIP: dropped (on-error)", .spec = { ENC2(IPIP(), GRE()) },
	  ON_ERROR(encap_unknown) },
	{ "IPIP in GENEVE: dropped (on-error)", .spec = { ENC2(GENEVE(), IPIP()) },
	  ON_ERROR(encap_unknown) },
	{ "VXLAN in SIT's IPv6: dropped (on-error)",
	  .spec = { ENC2(IPIP(), VXLAN(.ipv6 = 1, .udp_csum = 1)) }, ON_ERROR(encap_unknown) },

	/* UDP: a UDP socket is no TCP socket, except a tunnel's. */
	{ "UDP to a port no tunnel takes (4790): passed",
	  .spec = { ENC1(VXLAN(.port = 4790, .udp_csum = 1)) }, PASSED(not_tcp) },
	{ "a UDP first fragment to 4789 (VXLAN): dropped (on-error)",
	  .spec = { ENC1(VXLAN(.frag_off = 0x2000)) }, ON_ERROR(fragments) },
	{ "a UDP first fragment to 6081 (GENEVE): dropped (on-error)",
	  .spec = { ENC1(GENEVE(.frag_off = 0x2000)) }, ON_ERROR(fragments) },
	{ "IPv6: a UDP first fragment to 4789: dropped (on-error)",
	  .spec = { ENC1(VXLAN(.ipv6 = 1, .frag_off = 0x2000)) }, ON_ERROR(fragments) },
	{ "a UDP first fragment to port 53: passed",
	  .spec = { ENC1(VXLAN(.port = 53, .frag_off = 0x2000)) }, PASSED(fragments) },
	{ "a UDP middle fragment, no UDP socket on a tunnel port: passed",
	  .spec = { ENC1(VXLAN(.frag_off = 0x2000 | 185)) }, PASSED(fragments) },
	{ "IPv6: a UDP last fragment, no UDP socket on a tunnel port: passed",
	  .spec = { ENC1(VXLAN(.ipv6 = 1, .frag_off = 185)) }, PASSED(fragments) },

	/* IP protocols and EtherTypes the stack takes IP out of. */
	{ "ESP (IPv4 protocol 50): dropped (on-error)", MREQ, .mangle = ip_esp, .verdict = PV_DROP,
	  .delta = { .encap_unknown = 1, .packets_dropped = 1 } },
	{ "ESP (IPv6 next header 50): dropped (on-error)", .spec = { .ipv6 = 1 }, MREQ,
	  .mangle = ip_esp, .verdict = PV_DROP,
	  .delta = { .encap_unknown = 1, .packets_dropped = 1 } },
	{ "IPv4 AH, then TCP", .spec = { .ah4_len = 4 }, MASKED },
	{ "IPv4 AH with options and a longer ICV, then TCP",
	  .spec = { .ah4_len = 7, .ip_opts = "\x01\x01\x01\x00", .ip_opts_len = 4 }, MASKED },
	{ "IPv4 AH inside GRE, then TCP", .spec = { .ah4_len = 4, ENC1(GRE()) }, MASKED_TUN },
	{ "MPLS unicast EtherType: dropped (on-error)", MREQ, .mangle = ether_mpls,
	  .verdict = PV_DROP, .delta = { .encap_unknown = 1, .packets_dropped = 1 } },
	{ "PPPoE session EtherType: dropped (on-error)", MREQ, .mangle = ether_pppoe_session,
	  .verdict = PV_DROP, .delta = { .encap_unknown = 1, .packets_dropped = 1 } },
	{ "MACsec EtherType: dropped (on-error)", MREQ, .mangle = ether_macsec, .verdict = PV_DROP,
	  .delta = { .encap_unknown = 1, .packets_dropped = 1 } },
	{ "MPLS in an 802.1Q tag: dropped (on-error)",
	  .spec = { .n_vlans = 1, .vlan_tpid = { 0x8100 } }, MREQ, .mangle = ether_mpls,
	  .verdict = PV_DROP, .delta = { .encap_unknown = 1, .packets_dropped = 1 } },
	{ "LLDP EtherType: passed", MREQ, .mangle = ether_lldp, .delta = { .not_ip = 1 } },
	{ "ARP inside VXLAN: passed", .spec = { ENC1(VXLAN()) }, MREQ, .mangle = ether_arp,
	  .delta = { .not_ip = 1 } },
	{ "MACsec inside VXLAN: dropped (on-error)", .spec = { ENC1(VXLAN()) }, MREQ,
	  .mangle = ether_macsec, .verdict = PV_DROP,
	  .delta = { .encap_unknown = 1, .packets_dropped = 1 } },
};

const size_t pt_n_wire_cases = sizeof(pt_wire_cases) / sizeof(pt_wire_cases[0]);

/*
 * A config of its own (pt_wire_config): VXLAN on 4789 and on 9999, GENEVE
 * on 6081, a tunnel hdrstrip cannot read on 5555 (--udp-tunnel-ports), a
 * UDP socket of the namespace on one of them (udp_tunnels), no NAT lookup.
 */
static const struct hs_tunnel_port wire_tunnels[] = {
	{ .port = 4789, .kind = HS_TUN_VXLAN },
	{ .port = 9999, .kind = HS_TUN_VXLAN },
	{ .port = 6081, .kind = HS_TUN_GENEVE },
	{ .port = 5555, .kind = HS_TUN_OPAQUE },
};

const struct th_wire pt_wire_config = {
	.nat = HS_NAT_OFF,
	.udp_tunnels = 1,
	.tunnels = wire_tunnels,
	.n_tunnels = sizeof(wire_tunnels) / sizeof(wire_tunnels[0]),
};

const struct pt_case pt_wire_config_cases[] = {
	{ "VXLAN on a port the table names (9999)",
	  .spec = { ENC1(VXLAN(.port = 9999, .udp_csum = 1)) }, MASKED_TUN },
	{ "VXLAN on 8472, not in this table: passed", .spec = { ENC1(VXLAN(.port = 8472)) },
	  PASSED(not_tcp) },
	{ "UDP to a tunnel port hdrstrip cannot read (--udp-tunnel-ports): dropped (on-error)",
	  .spec = { ENC1(VXLAN(.port = 5555, .udp_csum = 1)) }, ON_ERROR(encap_unknown) },
	{ "a UDP first fragment to that port: dropped (on-error)",
	  .spec = { ENC1(VXLAN(.port = 5555, .frag_off = 0x2000)) }, ON_ERROR(fragments) },
	{ "a UDP first fragment to port 53, a socket on a tunnel port: passed",
	  .spec = { ENC1(VXLAN(.port = 53, .frag_off = 0x2000)) }, PASSED(fragments) },
	{ "a UDP middle fragment while a UDP socket sits on a tunnel port: dropped (on-error)",
	  .spec = { ENC1(VXLAN(.frag_off = 0x2000 | 185)) }, ON_ERROR(fragments) },
	{ "IPv6: a UDP last fragment while a UDP socket sits on a tunnel port: dropped",
	  .spec = { ENC1(VXLAN(.ipv6 = 1, .frag_off = 185)) }, ON_ERROR(fragments) },
	{ "a TCP first fragment to an inspected port: dropped (on-error), as before",
	  .spec = { .frag_off = 0x2000 }, ON_ERROR(fragments) },
	{ "a request to port 8080 without the NAT lookup: not inspected", .spec = { .dport = 8080 },
	  PASSED(not_inspected) },
};

const size_t pt_n_wire_config_cases =
	sizeof(pt_wire_config_cases) / sizeof(pt_wire_config_cases[0]);

/*
 * Tunnel sockets made after the attach (pt_wire_late(), wire.c: a
 * namespace of its own with a VXLAN device on 4790 (external: IPv4 and
 * IPv6 sockets), one on 4789, an ESP-in-UDP socket on 4500 (dual stack)
 * and a plain UDP socket on 5353), under th_config(): the default table,
 * which names none of 4790, 4500, 5353. The datapath asks the stack which
 * socket a datagram to a port not in the table goes to.
 */
const struct pt_case pt_late_cases[] = {
	{ "VXLAN on 4790, a device the table does not know: dropped (on-error)",
	  .spec = { ENC1(VXLAN(.port = 4790, .udp_csum = 1)) }, ON_ERROR(encap_unknown) },
	{ "VXLAN on 4790 over IPv6: dropped (on-error)",
	  .spec = { ENC1(VXLAN(.ipv6 = 1, .port = 4790, .udp_csum = 1)) },
	  ON_ERROR(encap_unknown) },
	{ "VXLAN on 4789, listed, with a device on it: read as before",
	  .spec = { ENC1(VXLAN(.udp_csum = 1)) }, MASKED_TUN },
	{ "UDP to 4500, an ESP-in-UDP socket (UDP_ENCAP): dropped (on-error)",
	  .spec = { ENC1(VXLAN(.port = 4500)) }, ON_ERROR(encap_unknown) },
	{ "UDP over IPv6 to 4500, the same socket: dropped (on-error)",
	  .spec = { ENC1(VXLAN(.ipv6 = 1, .port = 4500, .udp_csum = 1)) },
	  ON_ERROR(encap_unknown) },
	{ "UDP to 5353, a socket without encapsulation: passed",
	  .spec = { ENC1(VXLAN(.port = 5353, .udp_csum = 1)) }, PASSED(not_tcp) },
	{ "UDP over IPv6 to 5353 (an IPv4 socket): passed",
	  .spec = { ENC1(VXLAN(.ipv6 = 1, .port = 5353, .udp_csum = 1)) }, PASSED(not_tcp) },
	{ "UDP to 4791, no socket: passed", .spec = { ENC1(VXLAN(.port = 4791)) },
	  PASSED(not_tcp) },
	{ "a UDP first fragment to 4790: dropped (on-error)",
	  .spec = { ENC1(VXLAN(.port = 4790, .frag_off = 0x2000)) }, ON_ERROR(fragments) },
	{ "IPv6: a UDP first fragment to 4790: dropped (on-error)",
	  .spec = { ENC1(VXLAN(.ipv6 = 1, .port = 4790, .frag_off = 0x2000)) },
	  ON_ERROR(fragments) },
	{ "a UDP first fragment to 5353: passed",
	  .spec = { ENC1(VXLAN(.port = 5353, .frag_off = 0x2000)) }, PASSED(fragments) },
	{ "VXLAN in VXLAN, the inner one to 4790: dropped (on-error)",
	  .spec = { ENC2(VXLAN(.udp_csum = 1), VXLAN(.port = 4790, .udp_csum = 1)) },
	  ON_ERROR(encap_unknown) },
};

const size_t pt_n_late_cases = sizeof(pt_late_cases) / sizeof(pt_late_cases[0]);

/* A device without a link header (tun, wireguard, ipip): every frame
 * starts at its IP header. */
const struct pt_case pt_l3_cases[] = {
	{ "IPv4 first", .spec = { .no_l2 = 1 }, MASKED },
	{ "IPv6 first", .spec = { .no_l2 = 1, .ipv6 = 1 }, MASKED },
	{ "IPv4 AH, then TCP", .spec = { .no_l2 = 1, .ah4_len = 4 }, MASKED },
	{ "IPv6 first, a 2 KiB destination-options header",
	  .spec = { .no_l2 = 1, .ipv6 = 1, .ext = { { NH_DST, 255 } }, .n_ext = 1 }, MASKED },
	{ "IPv4 first, version nibble 5 (neither ip_rcv() nor ipv6_rcv() takes it): passed",
	  .spec = { .no_l2 = 1 }, MREQ, .mangle = ip_version5, TRUNC },
	{ "IPv6 first, ESP: dropped (on-error)", .spec = { .no_l2 = 1, .ipv6 = 1 }, MREQ,
	  .mangle = ip_esp, .verdict = PV_DROP,
	  .delta = { .encap_unknown = 1, .packets_dropped = 1 } },
	{ "IPIP on a device without a link header", .spec = { .no_l2 = 1, ENC1(IPIP()) },
	  MASKED_TUN },
	{ "SIT on a device without a link header", .spec = { .no_l2 = 1, .ipv6 = 1, ENC1(IPIP()) },
	  MASKED_TUN },
	{ "GRE with a key on a device without a link header",
	  .spec = { .no_l2 = 1, ENC1(GRE(.gre_flags = PB_GRE_K | PB_GRE_C)) }, MASKED_TUN },
	{ "VXLAN over a device without a link header (a WireGuard underlay)",
	  .spec = { .no_l2 = 1, ENC1(VXLAN(.ipv6 = 1, .udp_csum = 1)) }, MASKED_TUN },
	{ "a tunnel in a tunnel on a device without a link header: dropped (on-error)",
	  .spec = { .no_l2 = 1, ENC2(IPIP(), IPIP(.ipv6 = 1)) }, ON_ERROR(encap_unknown) },
	{ "UDP to a port no tunnel takes: passed",
	  .spec = { .no_l2 = 1, ENC1(VXLAN(.port = 4790)) }, PASSED(not_tcp) },
	{ "a UDP first fragment to 4789: dropped (on-error)",
	  .spec = { .no_l2 = 1, ENC1(VXLAN(.frag_off = 0x2000)) }, ON_ERROR(fragments) },
};

const size_t pt_n_l3_cases = sizeof(pt_l3_cases) / sizeof(pt_l3_cases[0]);
