// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * An h2c origin for the end-to-end tests: node's HTTP/2 server without TLS
 * (http2.createServer), which speaks HTTP/2 with prior knowledge only: a
 * connection that starts with the HTTP/2 preface. Every request (stream) is
 * answered with a report of the header fields it delivered, in the format
 * of servers/origin.js (one "header: name: value" line each, pseudo-header
 * fields included), and the report is appended to the log file.
 *
 * With MODE "upgrade" it speaks HTTP/1.1 first, and takes a connection to
 * h2c by Upgrade as RFC 7540 3.2 lets a server: a request with "h2c" among
 * its Upgrade tokens, "HTTP2-Settings" among its Connection options and
 * exactly one HTTP2-Settings field gets "101 Switching Protocols", and the
 * connection goes on as HTTP/2 (the streams the client opens after its
 * preface are served and reported as above; the upgraded request itself
 * is reported with "upgrade: h2c" and not answered on stream 1). Any other
 * request, an upgrade the RFC does not allow included, is answered in
 * HTTP/1.1 (with "upgrade: refused" when it asked for one). Servers that
 * upgrade check the same (lighttpd and libmicrohttpd ignore the Upgrade
 * without HTTP2-Settings; Go's x/net/http2/h2c answers 500).
 *
 * Usage: node h2origin.js PORT LOGFILE [NAME [MODE]]
 */
'use strict';

const http = require('http');
const http2 = require('http2');
const fs = require('fs');
const crypto = require('crypto');

const port = Number(process.argv[2] || 80);
const logPath = process.argv[3] || '/dev/null';
const serverName = process.argv[4] || 'node-h2c';
const upgradeMode = process.argv[5] === 'upgrade';

function esc(s) {
	let out = '';
	for (let i = 0; i < s.length; i++) {
		const c = s.charCodeAt(i);
		if (c === 0x5c)
			out += '\\\\';
		else if (c < 0x20 || c > 0x7e)
			out += '\\x' + c.toString(16).padStart(2, '0');
		else
			out += s[i];
	}
	return out;
}

const server = http2.createServer();

/* Read a request's body (an HTTP/2 stream or an HTTP/1.1 request), then
 * call @done with its length and digest. */
function readBody(src, done) {
	let bodyBytes = 0;
	const digest = crypto.createHash('sha256');
	src.on('data', (chunk) => {
		bodyBytes += chunk.length;
		digest.update(chunk);
	});
	src.on('end', () => done(bodyBytes, digest));
}

server.on('stream', (stream, headers, flags, rawHeaders) => {
	readBody(stream, (bodyBytes, digest) => {
		const r = report(`${esc(String(headers[':method']))} ${esc(String(headers[':path']))} HTTP/2`,
			rawHeaders, [], bodyBytes, digest);
		stream.respond({ ':status': 200, 'content-type': 'text/plain' });
		stream.end(r);
	});
});

/* A request's report (the format of servers/origin.js), appended to the log. */
function report(request, rawHeaders, extra, bodyBytes, digest) {
	const lines = [`server: ${serverName}`, `request: ${request}`];
	for (let i = 0; i < rawHeaders.length; i += 2)
		lines.push(`header: ${esc(rawHeaders[i])}: ${esc(rawHeaders[i + 1])}`);
	lines.push(...extra, `body-bytes: ${bodyBytes}`, `body-sha256: ${digest.digest('hex')}`, 'end', '');
	const r = lines.join('\n');
	fs.appendFileSync(logPath, r);
	return r;
}

/* The values of a request's fields named @name (lowercase), in order. */
function values(req, name) {
	const out = [];
	for (let i = 0; i < req.rawHeaders.length; i += 2)
		if (req.rawHeaders[i].toLowerCase() === name)
			out.push(req.rawHeaders[i + 1]);
	return out;
}

/* The comma-separated tokens of those fields, lowercase. */
function tokens(req, name) {
	return values(req, name).flatMap((v) => v.split(',').map((t) => t.trim().toLowerCase()));
}

/* RFC 7540 3.2: may this request upgrade the connection to h2c? */
function mayUpgrade(req) {
	return tokens(req, 'upgrade').includes('h2c') &&
		tokens(req, 'connection').includes('http2-settings') &&
		values(req, 'http2-settings').length === 1;
}

function http1Request(req) {
	return `${esc(req.method)} ${esc(req.url)} HTTP/${req.httpVersion}`;
}

function http1Answer(sock, r) {
	sock.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n' +
		`Content-Length: ${Buffer.byteLength(r)}\r\n\r\n${r}`);
}

const h1 = upgradeMode ? http.createServer((req, res) => {
	readBody(req, (bodyBytes, digest) => {
		const r = report(http1Request(req), req.rawHeaders, [], bodyBytes, digest);
		res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(r) });
		res.end(r);
	});
}) : null;

if (h1) {
	/* Node hands every request with Connection: upgrade and an Upgrade
	 * field here, with the socket; a GET's has no body to read. */
	h1.on('upgrade', (req, sock, head) => {
		const digest = crypto.createHash('sha256');

		/* The tests' clients end with a reset: no crash for it. */
		sock.on('error', () => {});
		if (!mayUpgrade(req)) {
			http1Answer(sock, report(http1Request(req), req.rawHeaders, ['upgrade: refused'], 0, digest));
			return;
		}
		report(http1Request(req), req.rawHeaders, ['upgrade: h2c'], 0, digest);
		sock.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n');
		if (head && head.length)
			sock.unshift(head);
		server.emit('connection', sock);
	});
	h1.on('clientError', (err, sock) => {
		fs.appendFileSync(logPath, `server: ${serverName}\nclient-error: ${err.code}\nend\n`);
		sock.destroy();
	});
}

server.on('sessionError', (err) => {
	fs.appendFileSync(logPath, `server: ${serverName}\nclient-error: ${err.code}\nend\n`);
});

(h1 || server).listen({ port, host: '::', ipv6Only: false }, () => {
	process.stdout.write(`node h2c ${upgradeMode ? 'upgrade ' : ''}origin listening on ${port}\n`);
});

process.on('SIGTERM', () => {
	(h1 || server).close();
	process.exit(0);
});
