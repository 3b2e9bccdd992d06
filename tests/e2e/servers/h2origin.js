// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * An h2c origin for the end-to-end tests: node's HTTP/2 server without TLS
 * (http2.createServer), which speaks HTTP/2 with prior knowledge only: a
 * connection that starts with the HTTP/2 preface. Every request (stream) is
 * answered with a report of the header fields it delivered, in the format
 * of servers/origin.js (one "header: name: value" line each, pseudo-header
 * fields included), and the report is appended to the log file.
 *
 * Usage: node h2origin.js PORT LOGFILE [NAME]
 */
'use strict';

const http2 = require('http2');
const fs = require('fs');
const crypto = require('crypto');

const port = Number(process.argv[2] || 80);
const logPath = process.argv[3] || '/dev/null';
const serverName = process.argv[4] || 'node-h2c';

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

server.on('stream', (stream, headers, flags, rawHeaders) => {
	let bodyBytes = 0;
	const digest = crypto.createHash('sha256');
	stream.on('data', (chunk) => {
		bodyBytes += chunk.length;
		digest.update(chunk);
	});
	stream.on('end', () => {
		const lines = [`server: ${serverName}`,
			`request: ${esc(String(headers[':method']))} ${esc(String(headers[':path']))} HTTP/2`];
		for (let i = 0; i < rawHeaders.length; i += 2)
			lines.push(`header: ${esc(rawHeaders[i])}: ${esc(rawHeaders[i + 1])}`);
		lines.push(`body-bytes: ${bodyBytes}`, `body-sha256: ${digest.digest('hex')}`, 'end', '');
		const report = lines.join('\n');
		fs.appendFileSync(logPath, report);
		stream.respond({ ':status': 200, 'content-type': 'text/plain' });
		stream.end(report);
	});
});

server.on('sessionError', (err) => {
	fs.appendFileSync(logPath, `server: ${serverName}\nclient-error: ${err.code}\nend\n`);
});

server.listen({ port, host: '::', ipv6Only: false }, () => {
	process.stdout.write(`node h2c origin listening on ${port}\n`);
});

process.on('SIGTERM', () => {
	server.close();
	process.exit(0);
});
