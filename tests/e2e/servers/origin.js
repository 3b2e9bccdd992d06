// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Origin server for the end-to-end tests: Node's own HTTP parser (llhttp,
 * strict mode). Every request is answered with a report of exactly the
 * header lines the parser delivered, in order, as it got them
 * (req.rawHeaders keeps case and order); the same report is appended to a
 * log file, so a test can also prove what never arrived.
 *
 * Usage: node --max-http-header-size=N [--insecure-http-parser] origin.js PORT LOGFILE [NAME]
 * NAME (default "node") is the server's name in its reports.
 *
 * Report format (shared with servers/pyorigin.py):
 *   server: node
 *   request: METHOD TARGET HTTP/x.y
 *   header: Name: value          one line per field line, in order
 *   trailer: Name: value         node: a chunked body's trailer fields
 *   app-header: Name: value      python: the fields as the application
 *                                sees them (self.headers), after parsing
 *   body-bytes: N
 *   body-sha256: HEX             the body's digest (byte-exact checks)
 *   end
 * Bytes outside printable ASCII are written as \xNN, a backslash as \\.
 */
'use strict';

const http = require('http');
const fs = require('fs');
const crypto = require('crypto');

const port = Number(process.argv[2] || 80);
const logPath = process.argv[3] || '/dev/null';
const serverName = process.argv[4] || 'node';

/* Headers reach JavaScript as latin1 strings: one char per byte. */
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

const server = http.createServer({ maxHeaderSize: 131072 }, (req, res) => {
	let bodyBytes = 0;
	const digest = crypto.createHash('sha256');
	req.on('data', (chunk) => {
		bodyBytes += chunk.length;
		digest.update(chunk);
	});
	req.on('end', () => {
		const lines = [`server: ${serverName}`,
			`request: ${esc(req.method)} ${esc(req.url)} HTTP/${req.httpVersion}`];
		for (let i = 0; i < req.rawHeaders.length; i += 2)
			lines.push(`header: ${esc(req.rawHeaders[i])}: ${esc(req.rawHeaders[i + 1])}`);
		for (let i = 0; i < req.rawTrailers.length; i += 2)
			lines.push(`trailer: ${esc(req.rawTrailers[i])}: ${esc(req.rawTrailers[i + 1])}`);
		lines.push(`body-bytes: ${bodyBytes}`, `body-sha256: ${digest.digest('hex')}`, 'end', '');
		const report = lines.join('\n');
		fs.appendFileSync(logPath, report);
		res.writeHead(200, {
			'Content-Type': 'text/plain',
			'Content-Length': Buffer.byteLength(report),
		});
		res.end(report);
	});
});

/* A request llhttp rejects is logged too: a test may want to know why. */
server.on('clientError', (err, sock) => {
	fs.appendFileSync(logPath, `server: ${serverName}\nclient-error: ${err.code}\nend\n`);
	if (sock.writable)
		sock.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
	else
		sock.destroy();
});

server.listen({ port, host: '::', ipv6Only: false }, () => {
	process.stdout.write(`node origin listening on ${port}\n`);
});

process.on('SIGTERM', () => {
	server.close();
	process.exit(0);
});
