#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: alone (it checks that no empty /sys/fs/bpf/hdrstrip is left)
# Bad use of the loader: each case has its exit code (1 failure, 2 usage or
# bad input) and its message, and leaves the machine clean: no XDP program,
# no clsact qdisc, no BPF program (ip link, tc qdisc show, bpftool net) and
# no pins in /sys/fs/bpf/hdrstrip, not even an empty directory.
#  - unknown DEV (the message names the namespace the CLI looked in: -n's,
#    or "this network namespace", never "the host's" under nsenter), bad
#    list, missing list, bad options;
#  - update, detach, status and stats with nothing attached;
#  - attaching twice (use update or detach), updating with a bad list (the
#    old list stays), detaching twice, updating what is not attached;
#  - no root: an unprivileged user, and root without capabilities;
#  - an attach killed (SIGKILL) at many points: a later detach cleans up
#    (exit 0 when the attach left anything, 1 "not attached" when not), and
#    a new attach works.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node setpriv
require_cli attach update detach status
topo_setup
start_node

LIST=$WORK/list
write_main_list "$LIST"
NS=$SNS DEV=$SDEV
note_attached "$NS" "$DEV"
HDRS=(-H "X-Internal-Auth: secret-1" -H "X-Keep: k")

masked_request() { # WHAT
	step "$1: request answered" to_file "$WORK/resp" client "$S4" "$PORT_NODE" "${HDRS[@]}" \
		--save "$WORK/req"
	step "$1: internal line masked" check_report --sent "$WORK/req" --report "$WORK/resp" \
		--list "$LIST"
}

# --- bad input -------------------------------------------------------------
expect_exit 2 "attach to an unknown DEV" hs_s attach nosuchdev0 --headers "$LIST"
assert_match "$EXPECT_OUT" "no interface 'nosuchdev0'" "unknown DEV: message names it"
# Under nsenter the CLI runs in the test's namespace, not the host's.
assert_match "$EXPECT_OUT" "in this network namespace" "unknown DEV: 'this network namespace'"
assert_no_match "$EXPECT_OUT" "host" "unknown DEV under nsenter: the message does not say the host's"
[ ! -e "$BPFFS_ROOT/nosuchdev0" ] || fail "unknown DEV: pins directory made"
expect_exit 2 "detach an unknown DEV" hs_s detach nosuchdev0
assert_match "$EXPECT_OUT" "no interface 'nosuchdev0'" "detach unknown DEV: message names it"
expect_exit 2 "attach to an unknown DEV with -n" "$HDRSTRIP" -n "$NS" attach nosuchdev0 \
	--headers "$LIST"
assert_match "$EXPECT_OUT" "no interface 'nosuchdev0' in network namespace '$NS'" \
	"unknown DEV with -n: message names the namespace"
[ ! -e "$BPFFS_ROOT/nosuchdev0" ] || fail "unknown DEV with -n: pins directory made"

printf 'x-good\nx-bad-action frobnicate\n' >"$WORK/bad.list"
expect_exit 2 "attach with a bad list" hs_s attach "$DEV" --headers "$WORK/bad.list"
assert_match "$EXPECT_OUT" "bad.list:2:" "bad list: message gives file and line"
assert_clean "$NS" "$DEV"

printf 'x-ok\nx-bad:name\n' >"$WORK/bad2.list"
expect_exit 2 "attach with a name holding ':'" hs_s attach "$DEV" --headers "$WORK/bad2.list"
assert_match "$EXPECT_OUT" "bad2.list:2:" "bad name: message gives file and line"
assert_clean "$NS" "$DEV"

expect_exit 2 "attach with a missing list" hs_s attach "$DEV" --headers "$WORK/no-such-list"
assert_match "$EXPECT_OUT" "no-such-list" "missing list: message names the file"
expect_exit 2 "attach with an unknown hook" hs_s attach "$DEV" --headers "$LIST" --hook nope
assert_match "$EXPECT_OUT" "hook" "unknown hook: message says so"
expect_exit 2 "attach with a bad port list" hs_s attach "$DEV" --headers "$LIST" --ports 70000
assert_match "$EXPECT_OUT" "port" "bad ports: message says so"
expect_exit 2 "attach without --headers" hs_s attach "$DEV"
assert_clean "$NS" "$DEV"

# --- state errors ----------------------------------------------------------
# Nothing attached: each command says so, and makes no pin directory.
expect_exit 1 "update what is not attached" hs_s update "$DEV" --headers "$LIST"
assert_match "$EXPECT_OUT" "not attached" "update: message says not attached"
assert_clean "$NS" "$DEV"
for cmd in detach status stats; do
	expect_exit 1 "$cmd with nothing attached" hs_s "$cmd" "$DEV"
	assert_match "$EXPECT_OUT" "not attached" "$cmd: message says not attached"
	assert_clean "$NS" "$DEV"
done
[ ! -e "$BPFFS_ROOT" ] || [ -n "$(ls -A "$BPFFS_ROOT")" ] ||
	fail "an empty $BPFFS_ROOT is left behind"

for hook in xdp tc-ingress; do
	step "$hook: attach" hs_s attach "$DEV" --headers "$LIST" --hook "$hook"
	expect_exit 1 "$hook: attach twice" hs_s attach "$DEV" --headers "$LIST" --hook "$hook"
	assert_match "$EXPECT_OUT" "update" "$hook: attach twice: message says use update"
	assert_match "$EXPECT_OUT" "detach" "$hook: attach twice: message says or detach"
	masked_request "$hook: after the second attach, the first"
	expect_exit 2 "$hook: update with a bad list" hs_s update "$DEV" --headers "$WORK/bad.list"
	assert_match "$EXPECT_OUT" "bad.list:2:" "$hook: bad update: message gives file and line"
	masked_request "$hook: after a bad update, the old list"
	step "$hook: detach" hs_s detach "$DEV"
	assert_clean "$NS" "$DEV"
	expect_exit 1 "$hook: detach twice" hs_s detach "$DEV"
	assert_match "$EXPECT_OUT" "not attached" "$hook: detach twice: message says not attached"
	assert_clean "$NS" "$DEV"
done

# The -n option and nsenter reach the same state.
step "attach with -n" "$HDRSTRIP" -n "$NS" attach "$DEV" --headers "$LIST"
out=$(hs_s status "$DEV") || fail "status after attach with -n: $out"
assert_match "$out" 'xdp' "status (nsenter) sees the attach made with -n"
step "detach with -n" "$HDRSTRIP" -n "$NS" detach "$DEV"
assert_clean "$NS" "$DEV"

# --- no root ---------------------------------------------------------------
# A copy everybody may run, and a list everybody may read.
mkdir -p "$WORK/bin"
cp "$HDRSTRIP" "$WORK/bin/hdrstrip"
chmod 755 "$WORK/bin" "$WORK/bin/hdrstrip"
chmod 644 "$LIST"
# as WHO CMD...: run CMD in NS as 'nobody' (uid 65534, no capabilities) or
# as 'nocaps' (uid 0 with every capability set emptied).
as() {
	local who=$1
	shift
	if [ "$who" = nobody ]; then
		nsenter --net="/run/netns/$NS" setpriv --reuid=65534 --regid=65534 --clear-groups \
			--inh-caps=-all "$@"
	else
		nsenter --net="/run/netns/$NS" setpriv --inh-caps=-all --ambient-caps=-all \
			--bounding-set=-all "$@"
	fi
}
for who in nobody nocaps; do
	expect_exit 1 "attach as $who" as "$who" "$WORK/bin/hdrstrip" attach "$DEV" --headers "$LIST"
	assert_match "$EXPECT_OUT" 'root|CAP_|permission' "attach as $who: message says root is needed"
	assert_clean "$NS" "$DEV"
	step "attach as root" hs_s attach "$DEV" --headers "$LIST" --hook tc-ingress
	expect_exit 1 "detach as $who" as "$who" "$WORK/bin/hdrstrip" detach "$DEV"
	assert_match "$EXPECT_OUT" 'root|CAP_|permission' "detach as $who: message says root is needed"
	masked_request "after a detach as $who, still attached:"
	step "detach as root" hs_s detach "$DEV"
	assert_clean "$NS" "$DEV"
done

# --- killed attach ---------------------------------------------------------
# Kill points spread over the time one whole attach takes here.
ms_now() { date +%s%3N; }
for hook in xdp tc-ingress; do
	t0=$(ms_now)
	step "$hook: attach, timed" hs_s attach "$DEV" --headers "$LIST" --hook "$hook"
	span=$(($(ms_now) - t0))
	step "$hook: detach" hs_s detach "$DEV"
	delays=()
	for k in 0 1 2 4 6 8 10 12; do
		delays+=("$(printf '%d.%03d' $((span * k / 10 / 1000)) $((span * k / 10 % 1000)))")
	done
	log "$hook: one attach takes ${span}ms; killing at ${delays[*]}s"
	for delay in "${delays[@]}"; do
		nsenter --net="/run/netns/$NS" "$HDRSTRIP" attach "$DEV" --headers "$LIST" \
			--hook "$hook" >/dev/null 2>&1 &
		pid=$!
		sleep "$delay"
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		state=$(ls "$BPFFS_ROOT/$DEV" 2>/dev/null | tr "\n" " " || true)
		progs=$(nsenter --net="/run/netns/$NS" bpftool net show dev "$DEV" | grep -c 'id ' || true)
		rc=0
		out=$(hs_s detach "$DEV" 2>&1) || rc=$?
		# Whatever the killed attach left (pins, a program) is the
		# detach's work, done with exit 0; with nothing left, 1.
		want=1
		[ -n "$state" ] || [ "$progs" -gt 0 ] && want=0
		[ "$rc" -eq "$want" ] ||
			fail "$hook: detach after a kill at ${delay}s (pins: ${state:-none}, programs: $progs): exit $rc, expected $want: $out"
		[ "$want" -eq 0 ] || assert_match "$out" "not attached" "$hook: detach: says not attached"
		log "ok: $hook: attach killed at ${delay}s (pins: ${state:-none}, programs: $progs); detach: exit $rc"
		assert_clean "$NS" "$DEV"
	done
	step "$hook: attach after the killed ones" hs_s attach "$DEV" --headers "$LIST" --hook "$hook"
	masked_request "$hook: after the killed attaches"
	step "$hook: detach" hs_s detach "$DEV"
	assert_clean "$NS" "$DEV"
done
log "PASS"
