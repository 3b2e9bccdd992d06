// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Offline check of Kubernetes manifests against the Kubernetes API's
// schemas (npm's kubernetes-models: the OpenAPI schemas compiled into
// validators): every document of every file given, by its apiVersion and
// kind. The validators check types, formats, enums and required fields but
// let unknown fields through (the API server drops or refuses them); so
// every key is also checked to be a field name the schemas know, outside
// the maps whose keys are the user's (labels, annotations, data, ...).
//
//   node validate.js NODE_MODULES_DIR FILE.yaml...
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, ...files] = process.argv.slice(2);
const need = (m) => require(path.join(modules, m));
const YAML = need('yaml');

// Every field name of every schema: the validators name each property
// they check as parentDataProperty:"NAME".
const known = new Set();
for (const dir of [path.join(modules, 'kubernetes-models', '_schemas'),
		   path.join(modules, '@kubernetes-models', 'apimachinery', '_schemas')]) {
	for (const f of fs.readdirSync(dir)) {
		if (!f.endsWith('.js'))
			continue;
		const src = fs.readFileSync(path.join(dir, f), 'utf8');
		for (const m of src.matchAll(/parentDataProperty:"([^"]+)"/g))
			known.add(m[1]);
	}
}
// Maps whose keys are free text, and a Service's selector (a plain map).
const FREE = new Set(['labels', 'annotations', 'matchLabels', 'data', 'binaryData',
		      'stringData', 'nodeSelector', 'requests', 'limits', 'capacity']);

function unknownKeys(v, where, out, parentKey, kind) {
	if (Array.isArray(v)) {
		v.forEach((x, i) => unknownKeys(x, `${where}[${i}]`, out, parentKey, kind));
		return;
	}
	if (!v || typeof v !== 'object')
		return;
	if (FREE.has(parentKey) || (kind === 'Service' && where === '.spec.selector'))
		return;
	for (const k of Object.keys(v)) {
		if (!known.has(k) && !(where === '' && (k === 'apiVersion' || k === 'kind')))
			out.push(`${where}.${k}`);
		unknownKeys(v[k], `${where}.${k}`, out, k, kind);
	}
}

let bad = 0, docs = 0;
for (const file of files) {
	const all = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'));
	all.forEach((d, i) => {
		const at = `${file}: document ${i + 1}`;
		if (d.errors.length) {
			console.error(`${at}: not YAML: ${d.errors[0].message}`);
			bad++;
			return;
		}
		const obj = d.toJS();
		if (!obj)
			return;
		docs++;
		const { apiVersion, kind } = obj;
		let Model;
		try {
			Model = need(`kubernetes-models/${apiVersion}/${kind}`)[kind];
		} catch (e) {
			console.error(`${at}: no schema for apiVersion ${apiVersion}, kind ${kind}`);
			bad++;
			return;
		}
		try {
			new Model(obj).validate();
		} catch (e) {
			console.error(`${at} (${kind} ${obj.metadata && obj.metadata.name}): ${e.message}`);
			bad++;
		}
		const unknown = [];
		unknownKeys(obj, '', unknown, '', kind);
		for (const u of unknown) {
			console.error(`${at} (${kind}): ${u}: no field of that name in the Kubernetes API`);
			bad++;
		}
		if (!bad)
			console.log(`ok: ${file}: ${kind} ${obj.metadata.name} (${apiVersion})`);
	});
}
if (!docs) {
	console.error('no document to check');
	process.exit(1);
}
process.exit(bad ? 1 : 0);
