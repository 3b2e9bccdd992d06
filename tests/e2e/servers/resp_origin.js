// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A node origin for the response tests: every response carries internal
 * fields, set the way applications set them (setHeader, 103 Early Hints,
 * chunked trailers), next to benign ones.
 *
 * Usage: node resp_origin.js PORT
 *   /            200, Content-Length
 *   /chunked     200, chunked, with an internal trailer field
 *   /early       103 Early Hints (with an internal field), then 200
 */
'use strict';

const http = require('http');

const port = Number(process.argv[2] || 80);

const server = http.createServer((req, res) => {
	const body = `node says hello from ${req.url}\n`;
	res.setHeader('X-Backend-Server', 'node-origin-3.internal:9000');
	res.setHeader('X-Powered-By', 'node/hs-test');
	res.setHeader('X-Keep', 'yes');
	if (req.url === '/early')
		res.writeEarlyHints({ link: '</s.css>; rel=preload', 'x-upstream-addr': '10.9.8.7:443' });
	if (req.url === '/chunked') {
		res.setHeader('Trailer', 'X-Upstream-Status');
		res.write(body);
		res.addTrailers({ 'X-Upstream-Status': '200 from 10.9.8.7' });
		res.end();
		return;
	}
	res.setHeader('Content-Length', Buffer.byteLength(body));
	res.end(req.method === 'HEAD' ? undefined : body);
});
server.keepAliveTimeout = 30000;
server.listen(port, '::');
