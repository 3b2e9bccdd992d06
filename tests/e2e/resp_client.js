// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * node's http client against an origin, on one keep-alive connection:
 * prints, per request, the status, every header and trailer name it
 * parsed, and the body's length, one line each:
 *   METHOD PATH STATUS name,name,... trailers:name,... body:N
 * Usage: node resp_client.js HOST PORT METHOD:PATH...
 */
'use strict';

const http = require('http');

const [host, port, ...reqs] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function one(spec) {
	const [method, path] = spec.split(':');
	return new Promise((resolve, reject) => {
		const r = http.request({ host, port: Number(port), method, path, agent }, (res) => {
			let n = 0;
			res.on('data', (d) => { n += d.length; });
			res.on('end', () => {
				const names = [];
				for (let i = 0; i < res.rawHeaders.length; i += 2)
					names.push(res.rawHeaders[i].toLowerCase());
				const tr = [];
				for (let i = 0; i < res.rawTrailers.length; i += 2)
					tr.push(res.rawTrailers[i].toLowerCase());
				console.log(`${method} ${path} ${res.statusCode} ${names.join(',')} ` +
					`trailers:${tr.join(',')} body:${n}`);
				resolve();
			});
		});
		r.on('information', (info) => {
			const names = [];
			for (let i = 0; i < info.rawHeaders.length; i += 2)
				names.push(info.rawHeaders[i].toLowerCase());
			console.log(`${method} ${path} ${info.statusCode} ${names.join(',')} interim`);
		});
		r.setTimeout(10000, () => r.destroy(new Error('timeout')));
		r.on('error', reject);
		r.end();
	});
}

(async () => {
	for (const spec of reqs)
		await one(spec);
	agent.destroy();
})().catch((e) => {
	console.error(e.message);
	process.exit(1);
});
