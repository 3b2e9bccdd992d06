#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What can be checked of the Kubernetes deployment and the container build
# without a cluster or an image registry (make test-deploy):
#  - every manifest of deploy/kubernetes against the Kubernetes API's
#    schemas (validate.js, npm's kubernetes-models, installed here into
#    build/deploy-node at pinned versions);
#  - the DaemonSet agrees with the rest: its command is the image's
#    binary with the ConfigMap's config where the ConfigMap is mounted, the
#    metrics port is the one the probes, the annotations and the Service
#    use, the probes ask for the agent's /healthz and /readyz, its
#    capabilities are the systemd unit's, bpffs is mounted from the host;
#  - the ConfigMap's agent config and list pass 'hdrstrip run
#    --check-config' (paths moved from the mount to a scratch copy); its
#    default attachment is origin mode on the node's pod cgroup tree, the
#    systemd driver's and the cgroupfs driver's layout (test_origin_k8s.sh
#    runs it on both);
#  - the Containerfile: the Debian packages it installs exist, its build
#    target makes the files it copies, the runtime stage has the package of
#    every library the binary needs (and of libmicrohttpd, opened at run
#    time), its CMD is the DaemonSet's command.
# Usage: test_deploy.sh HDRSTRIP NODE_DIR
set -euo pipefail

HDRSTRIP=$1
NODE_DIR=$(mkdir -p "$2" && cd "$2" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K8S=$ROOT/deploy/kubernetes
# Pinned: kubernetes-models 4.x runs on the nodejs of Debian 12 (5.x needs
# node 22).
NPM_PKGS=(kubernetes-models@4.5.1 yaml@2.9.1)
WORK=$(mktemp -d /tmp/hdrstrip-deploy.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

fail() {
	echo "test_deploy: FAIL: $*" >&2
	exit 1
}
ok() { echo "test_deploy: ok: $*"; }

command -v node >/dev/null || fail "node is missing: make deps (scripts/install-deps.sh) installs nodejs"
if [ ! -e "$NODE_DIR/node_modules/kubernetes-models/package.json" ] ||
	! grep -q '"version": "4.5.1"' "$NODE_DIR/node_modules/kubernetes-models/package.json"; then
	command -v npm >/dev/null || fail "npm is missing: make deps installs it"
	mkdir -p "$NODE_DIR"
	npm install --prefix "$NODE_DIR" --no-audit --no-fund --no-package-lock --no-save \
		--loglevel=error "${NPM_PKGS[@]}" >"$WORK/npm.log" 2>&1 ||
		fail "npm install ${NPM_PKGS[*]} failed (the schemas come from npm's registry): $(tail -5 "$WORK/npm.log")"
fi

# 1. The schemas; and a manifest with a typo and a wrong type is refused.
node "$ROOT/tests/deploy/validate.js" "$NODE_DIR/node_modules" "$K8S"/*.yaml ||
	fail "the manifests do not validate (above)"
sed -e 's/hostNetwork: true/hostNetowrk: true/' -e 's/containerPort: 9464/containerPort: "9464x"/' \
	"$K8S/daemonset.yaml" >"$WORK/bad.yaml"
if node "$ROOT/tests/deploy/validate.js" "$NODE_DIR/node_modules" "$WORK/bad.yaml" >"$WORK/bad.out" 2>&1; then
	fail "the validator took a DaemonSet with a misspelt field and a string port"
fi
grep -q "hostNetowrk: no field of that name" "$WORK/bad.out" || fail "the misspelt field was not named: $(cat "$WORK/bad.out")"
grep -q "containerPort must be integer" "$WORK/bad.out" || fail "the string port was not named: $(cat "$WORK/bad.out")"
ok "the validator refuses a misspelt field and a wrong type"

# 2. and 3. The DaemonSet against the rest, and the ConfigMap's config.
python3 - "$K8S" "$ROOT" "$WORK" <<'PY' || fail "the manifests disagree (above)"
import os, re, sys, yaml
k8s, root, work = sys.argv[1:4]
docs = {}
for f in sorted(os.listdir(k8s)):
    if f.endswith('.yaml'):
        for d in yaml.safe_load_all(open(os.path.join(k8s, f))):
            if d:
                docs[d['kind']] = d
ds, cm, svc = docs['DaemonSet'], docs['ConfigMap'], docs['Service']
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
pod = ds['spec']['template']
c = pod['spec']['containers'][0]
cmd = c['command']
want(cmd[:2] == ['/usr/sbin/hdrstrip', 'run'], "the command is /usr/sbin/hdrstrip run")
opt = {cmd[i]: cmd[i + 1] for i in range(2, len(cmd) - 1) if cmd[i].startswith('--')}
conf = opt.get('--config', '')
mounts = {m['name']: m['mountPath'] for m in c['volumeMounts']}
vols = {v['name']: v for v in pod['spec']['volumes']}
cm_mount = [mounts[n] for n, v in vols.items() if v.get('configMap', {}).get('name') == cm['metadata']['name']]
want(len(cm_mount) == 1, "the ConfigMap is mounted once")
mount = cm_mount[0] if cm_mount else '/nonexistent'
want(os.path.dirname(conf) == mount and os.path.basename(conf) in cm['data'],
     f"--config {conf} is a key of the ConfigMap mounted at {mount}")
port = int(opt.get('--metrics-listen', ':0').rsplit(':', 1)[1])
ports = {p['name']: p['containerPort'] for p in c['ports']}
want(ports.get('metrics') == port, f"containerPort 'metrics' is --metrics-listen's port {port}")
for probe, path in (('livenessProbe', '/healthz'), ('readinessProbe', '/readyz')):
    g = c[probe]['httpGet']
    want(g['path'] == path and g['port'] in ('metrics', port), f"{probe} asks for {path} on the metrics port")
want(pod['metadata']['annotations'].get('prometheus.io/port') == str(port), "the pod's scrape annotation names the port")
want(svc['spec']['ports'][0]['targetPort'] in ('metrics', port) and svc['spec']['ports'][0]['port'] == port,
     "the Service's port is the metrics port")
want(svc['spec']['selector'] == ds['spec']['selector']['matchLabels'], "the Service selects the DaemonSet's pods")
want(pod['spec'].get('hostNetwork') is True, "the pod is in the host's network namespace")
want(any(v.get('hostPath', {}).get('path') == '/sys/fs/bpf' and mounts.get(n) == '/sys/fs/bpf'
         for n, v in vols.items()), "bpffs is mounted from the host at /sys/fs/bpf")
sc = c['securityContext']
want(sc.get('privileged') is False, "not privileged")
unit = open(os.path.join(root, 'packaging', 'hdrstrip-agent.service')).read()
caps = set(re.search(r'^CapabilityBoundingSet=(.*)$', unit, re.M).group(1).split())
want({'CAP_' + x for x in sc['capabilities']['add']} == caps,
     f"the capabilities are the systemd unit's ({' '.join(sorted(caps))})")
# The config and the lists it names, moved from the mount to a scratch copy.
for k, v in cm['data'].items():
    open(os.path.join(work, k), 'w').write(v.replace(mount + '/', work + '/'))
want(all(os.path.dirname(h) == mount and os.path.basename(h) in cm['data']
         for h in re.findall(r'^\s*headers\s*=\s*(\S+)', cm['data'][os.path.basename(conf)], re.M)),
     "every list the config names is a key of the ConfigMap")
# The default attachment: origin mode on the node's pod cgroup tree, as the
# kubelet lays it out with either cgroup driver, under the cgroup mount.
agent = cm['data'].get(os.path.basename(conf), '')
heads = list(re.finditer(r'^\[(\w+) ([^\]]*)\]', agent, re.M))
want(heads and heads[0].group(1) == 'cgroup', "the first attachment of the config is a [cgroup] section")
if heads:
    body = agent[heads[0].end():heads[1].start() if len(heads) > 1 else len(agent)]
    paths = [p.strip() for p in heads[0].group(2).split('|')]
    cg_mount = [mounts[n] for n, v in vols.items() if v.get('hostPath', {}).get('path') == '/sys/fs/cgroup']
    want(sorted(os.path.basename(p) for p in paths) == ['kubepods', 'kubepods.slice'],
         "the pod cgroup tree of both kubelet cgroup drivers: kubepods.slice (systemd), kubepods (cgroupfs)")
    want(cg_mount and all(os.path.dirname(p) == cg_mount[0] for p in paths),
         "the pod cgroup paths are under the host's cgroups mount")
    want(re.search(r'^\s*receive\s*=\s*yes\s*$', body, re.M) is not None,
         "the default attachment is origin mode (receive = yes)")
open(os.path.join(work, 'config-path'), 'w').write(os.path.join(work, os.path.basename(conf)))
open(os.path.join(work, 'cmd'), 'w').write('\n'.join(cmd[1:]) + '\n')
for b in bad:
    print('test_deploy: FAIL:', b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
ok "the DaemonSet, the ConfigMap and the Service agree"
"$HDRSTRIP" run --config "$(cat "$WORK/config-path")" --check-config ||
	fail "the ConfigMap's agent config does not pass run --check-config"
ok "the ConfigMap's config passes run --check-config"

# 4. The Containerfile.
CF=$ROOT/Containerfile
stage_pkgs() { # N: the packages of the Nth stage's apt-get install
	awk -v n="$1" '/^FROM /{s++} s==n' "$CF" | tr -d '\\' | tr '\n' ' ' |
		grep -o 'apt-get install [^&]*' | sed 's/apt-get install//' | tr ' ' '\n' |
		grep -v '^-' | grep -v '^$' || true
}
build_pkgs=$(stage_pkgs 1)
run_pkgs=$(stage_pkgs 2)
[ -n "$build_pkgs" ] && [ -n "$run_pkgs" ] || fail "cannot read the Containerfile's two stages"
if apt-cache show make >/dev/null 2>&1; then
	for p in $build_pkgs $run_pkgs; do
		apt-cache show "$p" >/dev/null 2>&1 || fail "Containerfile: no Debian package '$p'"
	done
	ok "every package the Containerfile installs is Debian's"
else
	echo "test_deploy: note: apt has no package lists (apt-get update): the Containerfile's package names not checked"
fi
grep -q '^RUN make build/hdrstrip$' "$CF" || fail "the build stage does not run 'make build/hdrstrip'"
[ -x "$ROOT/build/hdrstrip" ] || fail "build/hdrstrip is not built"
grep -o '^COPY --from=build /src/[^ ]*' "$CF" | sed 's|.*/src/||' | while read -r f; do
	[ -e "$ROOT/$f" ] || fail "Containerfile copies $f, which the build does not make"
done
need_pkgs=$(for lib in $(readelf -d "$ROOT/build/hdrstrip" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p') libmicrohttpd.so.12; do
	dpkg -S "*/$lib" 2>/dev/null | head -1 | cut -d: -f1
done | sort -u)
for p in $need_pkgs; do
	[ "$p" = libc6 ] && continue # in every Debian image
	grep -qx "$p" <<<"$run_pkgs" || fail "the runtime stage lacks $p (a library build/hdrstrip needs)"
done
ok "the runtime stage has every library the binary needs ($(echo $need_pkgs))"
cmd_cf=$(sed -n 's/^CMD \[\(.*\)\]$/\1/p' "$CF" | tr -d '"' | sed 's/, /\n/g')
[ "$cmd_cf" = "$(cat "$WORK/cmd")" ] || fail "the image's CMD is not the DaemonSet's command ($cmd_cf)"
grep -q '^ENTRYPOINT \["/usr/sbin/hdrstrip"\]$' "$CF" || fail "ENTRYPOINT is not the binary"
ok "the Containerfile's CMD is the DaemonSet's command"
echo "test_deploy: PASS"
