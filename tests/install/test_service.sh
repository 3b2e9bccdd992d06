#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The systemd unit's helper (packaging/hdrstrip-service) on a real
# interface in a network namespace: start attaches every hook of HOOKS (all
# or none), start again brings attached hooks to the file, reload updates
# the list, ports and policy, a bad list changes nothing, stop detaches.
# systemd itself is not needed: the unit only runs these three commands
# (test_install.sh checks the unit with systemd-analyze verify).
# Exit 0 pass, 1 fail, 77 skipped.

source "$(dirname "$0")/../e2e/lib.sh"
E2E_NAME=test_service
SVC=$REPO_ROOT/packaging/hdrstrip-service
export HDRSTRIP

e2e_init
require_cli attach status
topo_setup

# The helper runs with the unit's capabilities only (its
# CapabilityBoundingSet, as systemd would give it to a root service).
require_tools setpriv
CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$REPO_ROOT/packaging/hdrstrip@.service")
[ -n "$CAPS" ] || fail "the unit has no CapabilityBoundingSet"
BOUND=-all$(for c in $CAPS; do c=${c#CAP_}; printf ',+%s' "${c,,}"; done)
log "the unit's capabilities: $CAPS (setpriv --bounding-set=$BOUND)"
svc() { setpriv --bounding-set="$BOUND" "$SVC" -n "$SNS" -c "$WORK/dev.conf" "$@" "$SDEV"; }
status_json() { hs_s status "$SDEV" --json; }
field() { # KEY: from 'status --json' (hooks: their names; ports: compact JSON)
	status_json | "$PYTHON" -c 'import json,sys; k=sys.argv[1]; v=json.load(sys.stdin)[0][k]
print(" ".join(h["hook"] for h in v) if k == "hooks" else json.dumps(v, separators=(",", ":")) if k == "ports" else v)' "$1"
}

printf 'x-internal-auth\nx-edge-id\n' >"$WORK/list1.txt"
printf 'x-internal-auth\nx-edge-id\nx-internal-*\n' >"$WORK/list2.txt"
printf 'x-ok\nnot a name\n' >"$WORK/bad.txt"

cat >"$WORK/dev.conf" <<EOF
# test configuration
HEADERS=$WORK/list1.txt
HOOKS="xdp, tc-egress"   # both
PORTS=8000
ON_ERROR=pass
EOF
note_attached "$SNS" "$SDEV"
step "start" svc start
assert_eq "$(field hooks)" "xdp tc-egress" "hooks after start"
assert_eq "$(field names)" 2 "names after start"
assert_eq "$(field ports)" "[8000]" "ports after start"
assert_eq "$(field on_error)" pass "policy after start"
gen=$(field generation)

# A second start (a restart after a crash, say) updates what is attached.
step "start again" svc start
assert_eq "$(field hooks)" "xdp tc-egress" "hooks after a second start"
assert_ge "$(field generation)" $((gen + 1)) "generation after a second start"

# reload: a new list and ports.
sed -i -e "s|list1.txt|list2.txt|" -e 's|^PORTS=.*|PORTS=8000,8080-8082|' "$WORK/dev.conf"
step "reload" svc reload
assert_eq "$(field names)" 3 "names after reload"
assert_eq "$(field ports)" "[8000,[8080,8082]]" "ports after reload"
assert_eq "$(field list)" "$WORK/list2.txt" "list path after reload"

# reload with a bad list: exit 2, the old list stays.
sed -i "s|list2.txt|bad.txt|" "$WORK/dev.conf"
expect_exit 2 "reload with a bad list" svc reload
assert_match "$EXPECT_OUT" "bad.txt:2:" "the error names the list's line"
assert_eq "$(field names)" 3 "names after a failed reload"
sed -i "s|bad.txt|list2.txt|" "$WORK/dev.conf"

# MODE and EVENT_RATE: observe mode and the rate on a reload, enforce again
# when MODE goes; a bad MODE names the file.
printf 'MODE=observe\nEVENT_RATE=50\n' >>"$WORK/dev.conf"
step "reload with MODE=observe" svc reload
assert_eq "$(field mode)" observe "mode after MODE=observe"
assert_eq "$(field event_rate)" 50 "event rate after EVENT_RATE=50"
sed -i '/^MODE=/d' "$WORK/dev.conf"
step "reload without MODE" svc reload
assert_eq "$(field mode)" enforce "mode after MODE is taken out"
echo "MODE=dry-run" >>"$WORK/dev.conf"
expect_exit 2 "reload with MODE=dry-run" svc reload
assert_match "$EXPECT_OUT" "dev.conf: MODE is enforce, observe or empty" "the error names the file"
sed -i '/^MODE=/d' "$WORK/dev.conf"

# textfile: every device's metrics for node_exporter, replaced whole.
mkdir "$WORK/textfile"
# With the textfile unit's capabilities.
TCAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$REPO_ROOT/packaging/hdrstrip-textfile.service")
[ -n "$TCAPS" ] || fail "the textfile unit has no CapabilityBoundingSet"
TBOUND=-all$(for c in $TCAPS; do c=${c#CAP_}; printf ',+%s' "${c,,}"; done)
step "textfile" setpriv --bounding-set="$TBOUND" "$SVC" -n "$SNS" textfile "$WORK/textfile"
assert_eq "$(ls -A "$WORK/textfile")" hdrstrip.prom "textfile: one file, no temporary left"
step "textfile: Prometheus text format" "$PYTHON" "$REPO_ROOT/tests/install/promcheck.py" \
	"$WORK/textfile/hdrstrip.prom"
assert_match "$(cat "$WORK/textfile/hdrstrip.prom")" "^hdrstrip_list_names\\{dev=\"$SDEV\"" \
	"textfile: the device's metrics"
expect_exit 2 "textfile into a missing directory" "$SVC" textfile "$WORK/no-such-dir"

# HOOKS shrinks: a start (restart) detaches what the file no longer names.
sed -i 's|^HOOKS=.*|HOOKS=xdp|' "$WORK/dev.conf"
step "start with HOOKS=xdp" svc start
assert_eq "$(field hooks)" "xdp" "hooks after HOOKS=xdp"

step "stop" svc stop
expect_exit 1 "status after stop" hs_s status "$SDEV"
[ ! -e "$BPFFS_ROOT/$SDEV" ] || fail "pins of $SDEV left after stop"
step "stop again (nothing attached)" svc stop

# All or none: the second hook fails (bad XDP mode), the first is undone.
cat >"$WORK/dev.conf" <<EOF
HEADERS=$WORK/list1.txt
HOOKS=tc-egress xdp
XDP_MODE=sideways
EOF
expect_exit 2 "start with a hook that cannot attach" svc start
expect_exit 1 "nothing attached after the failed start" hs_s status "$SDEV"
[ ! -e "$BPFFS_ROOT/$SDEV" ] || fail "pins of $SDEV left after the failed start"

# A fresh install: no DEV.conf, so default.conf (installed with the starter
# list) is read.
mkdir "$WORK/etc"
sed -e "s|^HEADERS=.*|HEADERS=$REPO_ROOT/packaging/internal-headers.txt|" \
	"$REPO_ROOT/packaging/default.conf" >"$WORK/etc/default.conf"
step "start with default.conf only" env CONF_DIR="$WORK/etc" setpriv --bounding-set="$BOUND" \
	"$SVC" -n "$SNS" start "$SDEV"
assert_eq "$(field hooks)" "xdp" "default.conf: hooks"
assert_ge "$(field names)" 1 "default.conf: the starter list"
step "stop (default.conf)" env CONF_DIR="$WORK/etc" "$SVC" -n "$SNS" stop "$SDEV"

# Proxy mode for a slice (hdrstrip-proxy@SLICE.service): a nested slice's
# cgroup made here as systemd would make it (a-b.slice in a.slice), and the
# helper given the slice's name, under the proxy unit's capabilities.
CGROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$CGROOT" ] || [ ! -e "$CGROOT/cgroup.procs" ]; then
	log "skip proxy mode: no cgroup2 hierarchy"
	log "PASS"
	exit 0
fi
PCAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$REPO_ROOT/packaging/hdrstrip-proxy@.service")
[ -n "$PCAPS" ] || fail "the proxy unit has no CapabilityBoundingSet"
PBOUND=-all$(for c in $PCAPS; do c=${c#CAP_}; printf ',+%s' "${c,,}"; done)
SLICE=hse2esvc$$-proxy.slice
E2E_CG_PARENT=$CGROOT/hse2esvc$$.slice
step "the slice's parent cgroup" mkdir "$E2E_CG_PARENT"
E2E_CG=$E2E_CG_PARENT/$SLICE
step "the slice's cgroup" mkdir "$E2E_CG"
psvc() { setpriv --bounding-set="$PBOUND" "$SVC" -g -c "$WORK/proxy.conf" "$@" "$SLICE"; }
pfield() { "$HDRSTRIP" status --cgroup "$E2E_CG" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[0][sys.argv[1]])' "$1"; }
printf 'HEADERS=%s\nPORTS=8000\n' "$WORK/list1.txt" >"$WORK/proxy.conf"
step "start (proxy mode, $SLICE)" psvc start
assert_eq "$(pfield names)" 2 "proxy mode: names after start"
sed -i "s|list1.txt|list2.txt|" "$WORK/proxy.conf"
step "reload (proxy mode)" psvc reload
assert_eq "$(pfield names)" 3 "proxy mode: names after reload"
echo "HOOKS=xdp" >>"$WORK/proxy.conf"
expect_exit 2 "HOOKS in a slice's file" psvc reload
assert_match "$EXPECT_OUT" "proxy.conf:3: HOOKS is for interfaces" "the error names the file and line"
sed -i '/^HOOKS=/d' "$WORK/proxy.conf"
expect_exit 2 "a target that is no slice" "$SVC" -g -c "$WORK/proxy.conf" start nginx.service
expect_exit 1 "a slice with no cgroup" "$SVC" -g -c "$WORK/proxy.conf" start "hse2esvc$$-none.slice"
step "start again (proxy mode: an update)" psvc start
step "stop (proxy mode)" psvc stop
expect_exit 1 "status after stop (proxy mode)" "$HDRSTRIP" status --cgroup "$E2E_CG"
step "stop again (proxy mode, nothing attached)" psvc stop

# Origin mode for the slice (hdrstrip-origin@SLICE.service): start runs the
# agent in its place, on a config written from the slice's file; reload
# writes it again and the agent applies it; the agent's SIGTERM (systemctl
# stop) detaches.
OCAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$REPO_ROOT/packaging/hdrstrip-origin@.service")
[ -n "$OCAPS" ] || fail "the origin unit has no CapabilityBoundingSet"
OBOUND=-all$(for c in $OCAPS; do c=${c#CAP_}; printf ',+%s' "${c,,}"; done)
osvc() {
	env RUNTIME_DIRECTORY="$WORK/run" setpriv --bounding-set="$OBOUND" "$SVC" -g -r \
		-c "$WORK/proxy.conf" "$@" "$SLICE"
}
# Each of env, setpriv and the helper execs the next: $! is the agent's pid.
env RUNTIME_DIRECTORY="$WORK/run" setpriv --bounding-set="$OBOUND" "$SVC" -g -r \
	-c "$WORK/proxy.conf" start "$SLICE" >"$WORK/origin-agent.log" 2>&1 &
OAGENT=$!
E2E_PIDS+=("$OAGENT")
attached_receive() { "$HDRSTRIP" status --cgroup "$E2E_CG" --json 2>/dev/null | grep -q '"hook": *"receive"'; }
poll_until 10 attached_receive || fail "origin mode: the agent did not attach: $(cat "$WORK/origin-agent.log")"
log "ok: start (origin mode): the agent attached in ${POLL_WAITED} s"
assert_eq "$(pfield names)" 3 "origin mode: names after start"
assert_match "$(cat "$WORK/run/origin-$SLICE.conf")" '^receive = yes' "the agent's config is origin mode's"
sed -i "s|list2.txt|list1.txt|" "$WORK/proxy.conf"
step "reload (origin mode)" osvc reload
names2() { [ "$(pfield names)" = 2 ]; }
poll_until 5 names2 || fail "origin mode: the reload's list was not applied: $(tail -n 3 "$WORK/origin-agent.log")"
log "ok: reload (origin mode): the agent applied the new list in ${POLL_WAITED} s"
kill -TERM "$OAGENT"
wait "$OAGENT" || fail "origin mode: the agent exited $? on SIGTERM: $(tail -n 3 "$WORK/origin-agent.log")"
expect_exit 1 "status after stop (origin mode)" "$HDRSTRIP" status --cgroup "$E2E_CG"
log "PASS"
