#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The Kubernetes DaemonSet's default (deploy/kubernetes/configmap.yaml):
# origin mode on the node's pod cgroup tree. The ConfigMap's own agent.conf
# and list (the host's cgroup mount and the ConfigMap's mount moved to
# scratch paths), run by the agent against a cgroup tree laid out as the
# kubelet lays it out on cgroup v2,
#  - with the systemd driver: kubepods.slice/kubepods-besteffort.slice/
#    kubepods-besteffort-pod<uid>.slice/cri-containerd-<id>.scope;
#  - with the cgroupfs driver: kubepods/besteffort/pod<uid>/<id>;
# and a pod's server (Python's http.server) in the container's cgroup,
# created after the agent attached, as a pod starts: the agent attaches to
# the tree's root that exists, and the pod reads requests masked (the
# ConfigMap starts in observe mode: it is switched to enforce, as its
# comments say to, and the agent applies that at once).
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node
require_cli run stats
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"
topo_setup
CGROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CGROOT" ] && [ -e "$CGROOT/cgroup.procs" ] || skip "no cgroup2 hierarchy in /proc/mounts"
FAKE=$CGROOT/hse2e-k8s-$$ # stands for the host's /sys/fs/cgroup
E2E_CG_PARENT=$FAKE
step "the node's stand-in cgroup root $FAKE" mkdir "$FAKE"
LEAVES=()
k8s_cleanup() {
	local d
	for d in "${LEAVES[@]}"; do
		[ -e "$d/cgroup.kill" ] && echo 1 >"$d/cgroup.kill" 2>/dev/null
	done
	sleep 0.3
	for d in "${LEAVES[@]}"; do
		while [ -n "$d" ] && [ "$d" != "$FAKE" ] && [ "${d#"$FAKE"/}" != "$d" ]; do
			rmdir "$d" 2>/dev/null
			d=$(dirname "$d")
		done
	done
}
k8s_exit() {
	local rc=$?
	set +e
	k8s_cleanup
	(exit "$rc")
	cleanup
}
trap k8s_exit EXIT

"$PYTHON" - "$REPO_ROOT/deploy/kubernetes/configmap.yaml" "$WORK" "$FAKE" <<'EOF' ||
import os, sys, yaml
cm = yaml.safe_load(open(sys.argv[1]))
work, fake = sys.argv[2], sys.argv[3]
for k, v in cm["data"].items():
    v = v.replace("/etc/hdrstrip/", work + "/").replace("/host/sys/fs/cgroup", fake)
    open(os.path.join(work, k), "w").write(v)
EOF
	fail "cannot read the ConfigMap"
grep -q '^receive = yes' "$WORK/agent.conf" || fail "the ConfigMap's default is not origin mode"
# From observe mode (the ConfigMap's start) to enforce.
sed -i 's/^mode = observe$/mode = enforce/' "$WORK/agent.conf"
PORT=8080
grep -qE "^ports = .*\b$PORT\b" "$WORK/agent.conf" || fail "the ConfigMap does not inspect port $PORT"

# pod_server LEAF: Python's http.server in the container cgroup LEAF.
pod_server() {
	E2E_CG=$1
	SRV_IN_CG=1
	srv_run "$PYTHON" "$E2E_DIR/servers/pyorigin.py" --mode http --port "$PORT" \
		--log "$WORK/pod.log" >"$WORK/pod.out.log" 2>&1 &
	POD=$!
	E2E_PIDS+=("$POD")
	wait_listen "$SNS" "$PORT" "the pod's server" $POD
	E2E_CG= # the cleanup empties the tree (k8s_cleanup), not lib.sh's
}

for driver in systemd cgroupfs; do
	if [ $driver = systemd ]; then
		root=$FAKE/kubepods.slice
		leaf=$root/kubepods-besteffort.slice/kubepods-besteffort-pod1234.slice/cri-containerd-abcd.scope
	else
		root=$FAKE/kubepods
		leaf=$root/besteffort/pod1234/abcd
	fi
	step "$driver driver: the kubelet's pod cgroup root $root" mkdir "$root"
	"$HDRSTRIP" run --config "$WORK/agent.conf" >"$WORK/agent-$driver.log" 2>&1 &
	agent=$!
	E2E_PIDS+=("$agent")
	on_root() { "$HDRSTRIP" status --cgroup "$root" --json 2>/dev/null | grep -q '"hook": *"receive"'; }
	poll_until 15 on_root || fail "$driver: the agent did not attach origin mode to $root: $(cat "$WORK/agent-$driver.log")"
	log "ok: $driver: the agent attached origin mode to $root in ${POLL_WAITED} s"
	# A pod that starts afterwards, its container's cgroup deep in the tree.
	step "$driver: the pod's container cgroup" mkdir -p "$leaf"
	LEAVES+=("$leaf")
	pod_server "$leaf"
	step "$driver: a request to the pod answered" to_file "$WORK/resp" client "$S4" "$PORT" \
		-H "X-Internal-Trace: k8s-$driver" -H "X-Keep: k" --save "$WORK/req"
	step "$driver: the pod read it masked" check_report --sent "$WORK/req" --report "$WORK/resp" \
		--list "$WORK/internal-headers.txt"
	echo 1 >"$leaf/cgroup.kill"
	wait "$POD" 2>/dev/null || true
	poll_until 5 test -z "$(cat "$leaf/cgroup.procs")" || fail "$driver: the pod's server did not end"
	kill -TERM "$agent"
	wait "$agent" || true
	step "$driver: detach" "$HDRSTRIP" detach --cgroup "$root"
	k8s_cleanup
	LEAVES=()
done
if grep -q 'k8s-' "$WORK/pod.log"; then
	fail "a pod read an internal value"
fi
log "ok: no pod read an internal value"
log "PASS"
