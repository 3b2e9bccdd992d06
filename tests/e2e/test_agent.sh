#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: timing (an update applied within a second)
# The agent, run with the command line of deploy/kubernetes/daemonset.yaml
# (its config and metrics address moved), against namespaces that stand in
# for pods:
#  - the config and the list in a ConfigMap-like directory (files that are
#    links into ..data, swapped by an atomic rename);
#  - two pods' interfaces of one name, each in its own namespace (one at
#    xdp, one at xdp and tc-egress), attached at once;
#  - a request with an internal field masked; the list swapped: applied
#    within a second, and no request in between got through unmasked;
#  - a bad list swapped in: reported with its FILE:LINE, the running list
#    stays; --check-config says the same (exit 2);
#  - one pod's interface deleted and made again: attached again;
#  - the agent killed: the attachments stay, a request sent meanwhile is
#    masked; restarted: it adopts them (the same programs, an update);
#  - SIGTERM with --detach-on-exit: everything detached;
#  - throughout, /metrics, /healthz and /readyz over HTTP (--metrics-listen):
#    both pods' series, reloads and failed reloads counted;
#  - --events: standard output carries the match events as JSON lines and
#    nothing else (the agent's and the commands' lines go to stderr).
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node
require_cli attach update detach status run

topo_setup
start_node

# The second pod: a namespace with an interface named as the first's.
PNS=hse2e-p-$$
QNS=hse2e-q-$$
agent_exit() {
	local rc=$?
	set +e
	[ -n "${AGENT_PID:-}" ] && kill -KILL "$AGENT_PID" 2>/dev/null
	for ns in "$PNS" "$QNS"; do
		[ -e "/run/netns/$ns" ] && hs_in "$ns" detach "$SDEV" >/dev/null 2>&1
		[ -e "/run/netns/$ns" ] && ip netns del "$ns"
	done
	(exit "$rc")
	cleanup
}
trap agent_exit EXIT
step "pod namespace $PNS" ip netns add "$PNS"
step "its peer's namespace $QNS" ip netns add "$QNS"
pod_link() {
	ip -n "$PNS" link add "$SDEV" type veth peer name "q$SDEV" netns "$QNS" &&
		ip -n "$PNS" link set "$SDEV" up && ip -n "$QNS" link set "q$SDEV" up
}
step "its interface $SDEV" pod_link
note_attached "$SNS" "$SDEV"

# The ConfigMap: NAME -> ..data/NAME, ..data -> a directory of this version.
CM=$WORK/cm
mkdir -p "$CM"
cm_version() { # N LIST-TEXT
	local d="$CM/..v$1"
	mkdir "$d"
	printf '%b' "$2" >"$d/list"
	cat >"$d/agent.conf" <<EOF
# two pods' eth0: the same name, each in its own namespace
[attach $SDEV]
netns = $SNS
headers = $CM/list
hooks = xdp
ports = $PORT_NODE

[attach $SDEV]
netns = /run/netns/$PNS
headers = $CM/list
hooks = xdp, tc-egress
ports = $PORT_NODE
EOF
	ln -s "..v$1" "$CM/..data_tmp" && mv -T "$CM/..data_tmp" "$CM/..data"
}
cm_version 1 'x-internal-auth\nx-internal-trace\n'
ln -s ..data/list "$CM/list"
ln -s ..data/agent.conf "$CM/agent.conf"

expect_exit 0 "--check-config" "$HDRSTRIP" run --config "$CM/agent.conf" --check-config
assert_match "$EXPECT_OUT" "2 attachments, every list compiles, every setting is valid" "--check-config says so"
printf '[attach x]\nheaders = /nonexistent\nbogus = 1\n' >"$WORK/bad.conf"
expect_exit 2 "--check-config of a bad config" "$HDRSTRIP" run --config "$WORK/bad.conf" \
	--check-config
assert_match "$EXPECT_OUT" "bad.conf:3: unknown key 'bogus'" "the error names FILE:LINE"

# The metrics endpoint on loopback, at a port nothing listens on.
MADDR=127.0.0.1:$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
metrics() { curl -sS --max-time 5 "http://$MADDR/metrics"; }
metric() { # SERIES-PREFIX: the value of the first sample that starts so
	metrics | "$PYTHON" -c 'import sys
p = sys.argv[1]
for l in sys.stdin:
    if l.startswith(p):
        print(l.split()[-1]); break' "$1"
}
http_code() { curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }

# The DaemonSet's command line (deploy/kubernetes/daemonset.yaml), with its
# config at this test's ConfigMap and its metrics on loopback: everything
# else as the pods run it.
mapfile -t DS_ARGS < <("$PYTHON" - "$REPO_ROOT/deploy/kubernetes/daemonset.yaml" "$CM/agent.conf" "$MADDR" <<'PY'
import sys, yaml
ds = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d['kind'] == 'DaemonSet')
cmd = ds['spec']['template']['spec']['containers'][0]['command'][1:]
for i, a in enumerate(cmd[:-1]):
    if a == '--config':
        cmd[i + 1] = sys.argv[2]
    elif a == '--metrics-listen':
        cmd[i + 1] = sys.argv[3]
print('\n'.join(cmd))
PY
)
[ "${DS_ARGS[0]:-}" = run ] || fail "cannot read the DaemonSet's command: ${DS_ARGS[*]}"
log "the DaemonSet's command: hdrstrip ${DS_ARGS[*]}"

# Standard output is the events' (--events: JSON lines only, for the log
# pipeline); everything else goes to standard error.
start_agent() { # ARGS...
	"$HDRSTRIP" "${DS_ARGS[@]}" "$@" >>"$WORK/agent.events" 2>>"$WORK/agent.log" &
	AGENT_PID=$!
	E2E_PIDS+=($AGENT_PID)
}
attached() { # NS HOOKS...: every one of HOOKS attached to SDEV in NS
	local out h
	out=$(hs_in "$1" status "$SDEV" 2>/dev/null) || return 1
	shift
	for h in "$@"; do grep -q "^  $h " <<<"$out" || return 1; done
}
names() { hs_in "$1" status "$SDEV" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0]["names"])'; }
prog_of() { hs_in "$1" status "$SDEV" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0]["hooks"][0]["prog_id"])'; }

start_agent
poll_until 10 attached "$SNS" xdp || fail "the agent did not attach in $SNS: $(cat "$WORK/agent.log")"
poll_until 10 attached "$PNS" xdp tc-egress ||
	fail "the agent did not attach in $PNS: $(cat "$WORK/agent.log")"
log "ok: both pods' $SDEV attached"

# Metrics over HTTP: both pods' devices, named by their namespace, and the
# agent's own series; health and readiness for the kubelet's probes.
poll_until 5 sh -c "curl -sf http://$MADDR/readyz >/dev/null" ||
	fail "/readyz is not 200 with both attached: $(curl -sS "http://$MADDR/readyz"; tail -3 "$WORK/agent.log")"
m=$(metrics) || fail "GET /metrics failed"
assert_match "$m" "hdrstrip_attached_info{dev=\"$SDEV\",netns=\"$SNS\",hook=\"xdp\"" "/metrics: the first pod's xdp"
assert_match "$m" "hdrstrip_attached_info{dev=\"$SDEV\",netns=\"$PNS\",hook=\"tc-egress\"" "/metrics: the second pod's tc-egress"
assert_match "$m" "hdrstrip_agent_attachments 2" "/metrics: the agent's attachments"
assert_match "$m" "hdrstrip_agent_reloads_total 0" "/metrics: no reload yet"
assert_eq "$(grep -c '^# TYPE hdrstrip_packets_total ' <<<"$m")" 1 "/metrics: one family, both pods' samples in it"
assert_eq "$(http_code "http://$MADDR/healthz")" 200 "/healthz"
assert_eq "$(http_code "http://$MADDR/nothing")" 404 "an unknown path"
assert_eq "$(http_code -X POST "http://$MADDR/metrics")" 405 "POST"
fds0=$(ls /proc/"$AGENT_PID"/fd | wc -l)

# masked_req WHAT: a request with internal fields through the first pod;
# its secret must never reach the origin.
n_req=0
masked_req() {
	n_req=$((n_req + 1))
	client "$S4" "$PORT_NODE" -H "X-Internal-Auth: agent-secret-$n_req" -H "X-Keep-Alpha: k" \
		--save "$WORK/req" >"$WORK/resp" || fail "$1: the request failed"
	if grep -q "agent-secret" "$WORK/node.log"; then
		fail "$1: an internal field reached the origin"
	fi
}
masked_req "first list"
# --events (in the DaemonSet's command): the match as a JSON line in the
# log, naming the pod's namespace.
poll_until 3 grep -q '"name":"x-internal-auth"' "$WORK/agent.events" ||
	fail "no match event in the agent's output: $(tail -5 "$WORK/agent.events" "$WORK/agent.log")"
ev=$(grep -m1 '"name":"x-internal-auth"' "$WORK/agent.events")
assert_match "$ev" "\"dev\":\"$SDEV\",\"netns\":\"$SNS\"" "the event names the device and its namespace"
assert_match "$ev" '"action":"mask"' "the event's action"

# The list swapped: applied within a second; requests go on meanwhile.
gen0=$(hs_in "$SNS" status "$SDEV" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0]["generation"])')
t0=$(date +%s.%N)
cm_version 2 'x-internal-auth\nx-internal-trace\nx-keep-alpha\n'
for i in 1 2 3 4 5; do masked_req "during the swap ($i)"; done
poll_until 1 sh -c "[ \"\$(nsenter --net=/run/netns/$SNS $HDRSTRIP status $SDEV --json | grep -o '\"names\":[0-9]*')\" = '\"names\":3' ]" ||
	fail "the new list was not applied within a second: $(tail -5 "$WORK/agent.log")"
log "ok: the new list applied after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
assert_eq "$(names "$PNS")" 3 "the second pod has the new list too"
assert_eq "$(metric "hdrstrip_list_names{dev=\"$SDEV\",netns=\"$SNS\"")" 3 "/metrics: the new list's names"
assert_ge "$(metric hdrstrip_agent_reloads_total)" 1 "/metrics: the reload counted"
assert_ge "$(metric hdrstrip_agent_last_reload_timestamp_seconds | cut -d. -f1)" "${t0%.*}" "/metrics: the reload's time"
assert_ge "$(hs_in "$SNS" status "$SDEV" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0]["generation"])')" \
	$((gen0 + 1)) "generation moved"
masked_req "after the swap"

# A bad list: reported, the running one stays.
cm_version 3 'x-internal-auth\nnot a name\n'
poll_until 3 grep -q "list:2:" "$WORK/agent.log" ||
	fail "the bad list was not reported with its line: $(tail -5 "$WORK/agent.log")"
assert_eq "$(names "$SNS")" 3 "the running list stays"
poll_until 3 sh -c "[ \"\$(curl -sS http://$MADDR/metrics | grep '^hdrstrip_agent_reload_failures_total ')\" = 'hdrstrip_agent_reload_failures_total 1' ]" ||
	fail "/metrics: the failed reload is not counted: $(metrics | grep agent_reload)"
expect_exit 2 "--check-config with the bad list" "$HDRSTRIP" run --config "$CM/agent.conf" \
	--check-config
cm_version 4 'x-internal-auth\nx-internal-trace\n'
poll_until 3 sh -c "[ \"\$(nsenter --net=/run/netns/$SNS $HDRSTRIP status $SDEV --json | grep -o '\"names\":[0-9]*')\" = '\"names\":2' ]" ||
	fail "a good list after the bad one was not applied"

# The second pod's interface deleted and made again: attached again.
step "delete $SDEV in $PNS" ip -n "$PNS" link del "$SDEV"
step "make it again" pod_link
poll_until 5 attached "$PNS" xdp tc-egress ||
	fail "not attached again in $PNS: $(tail -5 "$WORK/agent.log")"
log "ok: attached again after the interface came back"
# Four list changes and an interface made again: no fd kept (one kept
# program fd would keep a deleted interface's program and maps alive).
assert_eq "$(ls /proc/"$AGENT_PID"/fd | wc -l)" "$fds0" "the agent's open files, as after its start"

# The agent killed: no window. Restarted: it adopts.
prog=$(prog_of "$SNS")
kill -KILL "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
attached "$SNS" xdp || fail "the attachment went with the agent"
masked_req "while the agent is down"
start_agent
poll_until 5 grep -q "run: 2 attachments" <(tail -n 3 "$WORK/agent.log") ||
	sleep 1
assert_eq "$(prog_of "$SNS")" "$prog" "the restarted agent adopted the program (the same id)"
masked_req "after the restart"

# SIGTERM: the attachments stay; with --detach-on-exit they go.
kill -TERM "$AGENT_PID"
rc=0
wait "$AGENT_PID" || rc=$?
assert_eq "$rc" 0 "exit status at SIGTERM"
attached "$SNS" xdp || fail "SIGTERM detached"
start_agent --detach-on-exit
sleep 1
kill -TERM "$AGENT_PID"
rc=0
wait "$AGENT_PID" || rc=$?
assert_eq "$rc" 0 "exit status at SIGTERM with --detach-on-exit"
AGENT_PID=
attached "$SNS" xdp && fail "--detach-on-exit left $SDEV in $SNS attached"
attached "$PNS" xdp && fail "--detach-on-exit left $SDEV in $PNS attached"
assert_clean "$SNS" "$SDEV"
# Three runs of the agent (attach, reloads, a bad list, an interface made
# again, adoption, detach): their standard output held events only.
step "the agent's standard output: match events as JSON lines, nothing else" \
	"$PYTHON" "$E2E_DIR/events_check.py" --min "$n_req" <"$WORK/agent.events"
assert_match "$(cat "$WORK/agent.log")" "run: 2 attachments" "the agent's own lines on standard error"
log "PASS"
