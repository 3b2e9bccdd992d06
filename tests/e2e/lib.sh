# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
#
# Helpers shared by the end-to-end tests. A test sources this file, calls
# topo_setup to get a client and a server namespace joined by a veth pair,
# starts the origin servers it needs, and uses step/assert_* to check every
# stage. Everything it made (servers, hdrstrip attachments and pins,
# namespaces, temporary files) is removed by a trap, even when it fails.
#
# Exit codes of a test: 0 pass, 1 fail, 77 skipped (with the reason printed).

set -euo pipefail

E2E_SKIP=77
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$E2E_DIR/../.." && pwd)
HDRSTRIP=${HDRSTRIP:-$REPO_ROOT/build/hdrstrip}
# Test-only BPF objects (tests/e2e/bpf/, built by e2e.mk).
E2E_BPF_DIR=${E2E_BPF_DIR:-$REPO_ROOT/build/tests/e2e}
BPFFS_ROOT=/sys/fs/bpf/hdrstrip
E2E_NAME=$(basename "$0" .sh)

# The topology's fixed addresses: each test has its own namespaces, so
# the same addresses never meet.
C4=10.199.0.1
S4=10.199.0.2
C6=fd00:199::1
S6=fd00:199::2

# Ports of the origin servers (all inspected by the tests' --ports).
PORT_NODE=80
PORT_NGINX=8080
PORT_PYTHON=8081
PORT_BACKEND=9000 # nginx's upstream, on the server namespace's loopback
PORT_NODE_INSECURE=8082 # start_node_insecure (not in start_servers, HS_PORTS)
# Not in start_servers or HS_PORTS either: start_node_h2c, nginx's h2c
# server (NGINX_H2C=1 before start_nginx), start_python_simple.
PORT_NODE_H2C=8084
PORT_NGINX_H2C=8085
PORT_PYTHON_SIMPLE=8086
PORT_NODE_H2C_UPGRADE=8087 # start_node_h2c_upgrade
HS_PORTS=$PORT_NODE,$PORT_NGINX,$PORT_PYTHON

CNS= SNS= CDEV= SDEV= WORK= PYTHON=python3
# The helpers import each other (check_report, client): no __pycache__ in the tree.
export PYTHONDONTWRITEBYTECODE=1
E2E_PIDS=()
E2E_ATTACHED=() # "NS DEV" pairs hdrstrip may have state on
E2E_PINS= # bpffs directory of the test's own BPF programs (test_bpf_load)
E2E_CG= # the test's cgroup (cg_make), detached and removed by the cleanup

log() { printf '[%s] %s\n' "$E2E_NAME" "$*"; }

fail() {
	printf '[%s] FAIL: %s\n' "$E2E_NAME" "$*" >&2
	exit 1
}

skip() {
	printf '[%s] SKIP: %s\n' "$E2E_NAME" "$*"
	exit "$E2E_SKIP"
}

# step DESCRIPTION CMD...: run CMD; on failure show its output and fail.
step() {
	local what=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ "$rc" -ne 0 ]; then
		printf '%s\n' "$out" | sed 's/^/    | /' >&2
		fail "$what (exit $rc: $*)"
	fi
	[ -n "${E2E_VERBOSE:-}" ] && printf '%s\n' "$out" | sed 's/^/    | /'
	log "ok: $what"
}

# to_file FILE CMD...: run CMD with its standard output in FILE (for step).
to_file() {
	local f=$1
	shift
	"$@" >"$f"
}

# expect_exit CODE DESCRIPTION CMD...: run CMD, which must exit with CODE;
# its combined output is left in $EXPECT_OUT.
EXPECT_OUT=
expect_exit() {
	local want=$1 what=$2 rc=0
	shift 2
	EXPECT_OUT=$("$@" 2>&1) || rc=$?
	if [ "$rc" -ne "$want" ]; then
		printf '%s\n' "$EXPECT_OUT" | sed 's/^/    | /' >&2
		fail "$what: exit $rc, expected $want ($*)"
	fi
	log "ok: $what (exit $rc)"
}

assert_eq() { # ACTUAL EXPECTED WHAT
	[ "$1" == "$2" ] || fail "$3: got '$1', expected '$2'"
	log "ok: $3 = $2"
}

assert_ge() { # ACTUAL MIN WHAT
	[ "$1" -ge "$2" ] || fail "$3: got $1, expected at least $2"
	log "ok: $3 = $1 (>= $2)"
}

# The text goes to grep as a here-string, not through a pipe: with
# pipefail, grep -q closing the pipe early made printf fail a good match.
assert_match() { # TEXT REGEX WHAT  (grep -E, case-insensitive)
	grep -qiE -- "$2" <<<"$1" ||
		fail "$3: output does not match /$2/: $(printf '%s' "$1" | head -c 600)"
	log "ok: $3"
}

assert_no_match() { # TEXT REGEX WHAT
	if grep -qiE -- "$2" <<<"$1"; then
		fail "$3: output matches /$2/: $(printf '%s' "$1" | head -c 600)"
	fi
	log "ok: $3"
}

# known_issue ID MESSAGE: a check failed. When ID is listed in
# tests/e2e/known-issues (a bug reported and not fixed yet), say so and go
# on; otherwise fail. run.sh lists the known issues seen in its summary.
known_issue() {
	if grep -q "^$1[[:space:]]" "$E2E_DIR/known-issues" 2>/dev/null; then
		printf '[%s] KNOWN ISSUE %s: %s\n' "$E2E_NAME" "$1" "$2"
	else
		fail "$2"
	fi
}

# poll_until SECONDS CMD...: run CMD every 0.05 s until it succeeds, for at
# most SECONDS; return 1 if it never did (the caller fails, saying what).
# For what the kernel does some time after a command returns (RCU grace
# periods, work queues: how long depends on the machine), never a fixed
# sleep. Sets POLL_WAITED (seconds, to the millisecond, from the first run
# to the last) and POLL_TRIES (runs that failed: 0 when it held at once).
# CMD runs as an 'until' condition, where errexit is off: it must return
# its status itself.
POLL_WAITED=0 POLL_TRIES=0
poll_until() {
	local secs=$1 t0 now rc=0
	shift
	t0=$(date +%s%N)
	POLL_TRIES=0
	until "$@"; do
		now=$(date +%s%N)
		if [ $((now - t0)) -ge $((secs * 1000000000)) ]; then
			rc=1
			break
		fi
		POLL_TRIES=$((POLL_TRIES + 1))
		sleep 0.05
	done
	now=$(date +%s%N)
	POLL_WAITED=$(printf '%d.%03d' $(((now - t0) / 1000000000)) $(((now - t0) / 1000000 % 1000)))
	return "$rc"
}

# bpf_ids_left prog|map ID...: those of the ids that still exist, one a line
# (the kernel frees a detached program or map after a grace period: poll).
bpf_ids_left() {
	local kind=$1 id
	shift
	for id in "$@"; do
		! bpftool "$kind" show id "$id" >/dev/null 2>&1 || echo "$id"
	done
}

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, BPF)"
}

require_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "'$t' is not installed (scripts/install-deps.sh installs it)"
	done
}

# Skip, with the reason, when the CLI does not have COMMAND yet.
require_cli() {
	[ -x "$HDRSTRIP" ] || skip "$HDRSTRIP is not built (run make)"
	local c
	for c in "$@"; do
		grep -qE "^  $c " <<<"$("$HDRSTRIP" --help 2>/dev/null)" ||
			skip "hdrstrip has no '$c' command yet"
	done
}

in_c() { ip netns exec "$CNS" "$@"; }
in_s() { ip netns exec "$SNS" "$@"; }

# The CLI runs through nsenter, not 'ip netns exec': the latter mounts a
# fresh sysfs without the host's bpffs, and the pins would vanish with it.
hs_in() { # NS ARGS...
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" "$HDRSTRIP" "$@"
}
hs_c() { hs_in "$CNS" "$@"; }
hs_s() { hs_in "$SNS" "$@"; }

# hook_side HOOK: NS and DEV where HOOK sees the client's requests (the
# client's side for tc-egress, the server's for the others), noted for the
# cleanup.
hook_side() {
	if [ "$1" = receive ] && [ -z "$E2E_CG" ]; then
		origin_hook_setup
	fi
	if [ "$1" = tc-egress ]; then
		NS=$CNS DEV=$CDEV
	else
		NS=$SNS DEV=$SDEV
	fi
	note_attached "$NS" "$DEV"
}

# --- origin mode as one more place to attach (HOOK=receive) ---------------
# The suites that run at every hook take origin mode as the hook 'receive'
# (the name status gives it): attach --cgroup CG --receive, where CG is the
# test's cgroup (cg_make) and the origin servers run in it (SRV_IN_CG).
# NS and DEV are the server's (hook_side), for what still looks at them.

# origin_hook_setup: the cgroup the servers will run in; call before
# starting them. Skips without a cgroup2 hierarchy.
origin_hook_setup() {
	cg_make origin || skip "no cgroup2 hierarchy in /proc/mounts"
	SRV_IN_CG=1
}

# hs_hook_attach HOOK ARGS...: attach HOOK (--headers ... as ARGS).
hs_hook_attach() {
	local hook=$1
	shift
	if [ "$hook" = receive ]; then
		"$HDRSTRIP" attach --cgroup "$E2E_CG" --receive "$@"
	else
		hs_in "$NS" attach "$DEV" --hook "$hook" "$@"
	fi
}

# hs_hook_cmd HOOK CMD ARGS...: status, stats, update, detach, events on
# what HOOK is attached to.
hs_hook_cmd() {
	local hook=$1 cmd=$2
	shift 2
	if [ "$hook" = receive ]; then
		"$HDRSTRIP" "$cmd" --cgroup "$E2E_CG" "$@"
	else
		hs_in "$NS" "$cmd" "$DEV" "$@"
	fi
}

# hs_hook_stats HOOK [ARGS...]: counters as "key value" lines (hs_stats).
hs_hook_stats() {
	local hook=$1 out
	shift
	if [ "$hook" != receive ]; then
		hs_stats "$NS" "$DEV" "$@"
		return
	fi
	out=$("$HDRSTRIP" stats --cgroup "$E2E_CG" --json "$@") ||
		fail "hdrstrip stats --cgroup $E2E_CG --json failed: $out"
	printf '%s\n' "$out" >"$WORK/stats.json"
	"$PYTHON" "$E2E_DIR/json_counters.py" stats "cgroup-$CG_ID" <"$WORK/stats.json" ||
		fail "cannot read 'hdrstrip stats --cgroup --json': $(head -c 400 "$WORK/stats.json")"
}

# origin_agent_start LIST PORTS: the agent (hdrstrip run) keeps origin mode
# on the test's cgroup with LIST and PORTS, as it is deployed: it also
# resets the connections a drop ended (without it, such a connection
# stalls, and the application reads an EOF once the client gives up).
# origin_agent_stop ends it (the attachment stays).
ORIGIN_AGENT=
origin_agent_start() {
	printf '[cgroup %s]\nheaders = %s\nports = %s\nreceive = yes\n' "$E2E_CG" "$1" "$2" \
		>"$WORK/origin-agent.conf"
	"$HDRSTRIP" run --config "$WORK/origin-agent.conf" >>"$WORK/origin-agent.log" 2>&1 &
	ORIGIN_AGENT=$!
	E2E_PIDS+=("$ORIGIN_AGENT")
	poll_until 10 grep -q 'run: 1 attachment' "$WORK/origin-agent.log" ||
		fail "the agent did not start: $(cat "$WORK/origin-agent.log")"
	log "ok: the agent keeps origin mode on $E2E_CG"
}
origin_agent_stop() {
	[ -n "$ORIGIN_AGENT" ] || return 0
	kill -TERM "$ORIGIN_AGENT" 2>/dev/null
	wait "$ORIGIN_AGENT" 2>/dev/null || true
	ORIGIN_AGENT=
}

# hook_pin_dir HOOK: where HOOK's maps are pinned.
hook_pin_dir() {
	if [ "$1" = receive ]; then
		echo "$BPFFS_ROOT/cgroup-$CG_ID"
	else
		echo "$BPFFS_ROOT/$DEV"
	fi
}

# assert_hook_clean HOOK: nothing of hdrstrip's left where HOOK was.
assert_hook_clean() {
	local out
	if [ "$1" != receive ]; then
		assert_clean "$NS" "$DEV"
		return
	fi
	out=$(bpftool cgroup show "$E2E_CG" 2>&1) || fail "bpftool cgroup show $E2E_CG: $out"
	assert_no_match "$out" 'hdrstrip' "no hdrstrip program on the cgroup (bpftool cgroup show)"
	[ ! -e "$BPFFS_ROOT/cgroup-$CG_ID" ] ||
		fail "left behind: $BPFFS_ROOT/cgroup-$CG_ID"
	log "ok: no pins in $BPFFS_ROOT/cgroup-$CG_ID"
}

# Remember that hdrstrip may hold state for DEV in NS, for the cleanup.
note_attached() { E2E_ATTACHED+=("$1 $2"); }

cleanup() {
	local rc=$? p nsdev ns dev
	set +e
	trap - EXIT INT TERM
	for p in "${E2E_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for nsdev in "${E2E_ATTACHED[@]}"; do
		read -r ns dev <<<"$nsdev"
		if [ -e "/run/netns/$ns" ] && [ -x "$HDRSTRIP" ]; then
			hs_in "$ns" detach "$dev" >/dev/null 2>&1
		fi
		rm -rf "${BPFFS_ROOT:?}/$dev"
	done
	for ns in "$CNS" "$SNS"; do
		[ -n "$ns" ] && [ -e "/run/netns/$ns" ] || continue
		# Anything still running in our own namespaces is ours.
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
	done
	for p in "${E2E_PIDS[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	for ns in "$CNS" "$SNS"; do
		[ -n "$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	[ -n "$E2E_PINS" ] && rm -rf "$E2E_PINS"
	if [ -n "$E2E_CG" ] && [ -d "$E2E_CG" ]; then
		"$HDRSTRIP" detach --cgroup "$E2E_CG" >/dev/null 2>&1
		# Servers the test ran in it (their children too) end some time
		# after the kill.
		[ -e "$E2E_CG/cgroup.kill" ] && echo 1 >"$E2E_CG/cgroup.kill" 2>/dev/null
		for _ in $(seq 1 50); do
			[ -z "$(cat "$E2E_CG/cgroup.procs" 2>/dev/null)" ] && break
			sleep 0.1
		done
		rmdir "$E2E_CG" 2>/dev/null || printf '[%s] cannot remove %s\n' "$E2E_NAME" "$E2E_CG" >&2
	fi
	# The test's cgroup's parent when the test made that too (a slice's).
	if [ -n "${E2E_CG_PARENT:-}" ] && [ -d "$E2E_CG_PARENT" ]; then
		rmdir "$E2E_CG_PARENT" 2>/dev/null ||
			printf '[%s] cannot remove %s\n' "$E2E_NAME" "$E2E_CG_PARENT" >&2
	fi
	# Pins of our devices only; the directory itself when nobody else uses it.
	for dev in "$CDEV" "$SDEV"; do
		[ -n "$dev" ] && rm -rf "${BPFFS_ROOT:?}/$dev"
	done
	rmdir "$BPFFS_ROOT" 2>/dev/null
	if [ -n "$WORK" ] && [ -d "$WORK" ]; then
		if [ "$rc" -ne 0 ] && [ "$rc" -ne "$E2E_SKIP" ]; then
			for f in "$WORK"/*.log; do
				[ -s "$f" ] || continue
				printf '    --- %s (last lines) ---\n' "$(basename "$f")" >&2
				tail -n 15 "$f" | sed 's/^/    | /' >&2
			done
		fi
		if [ -n "${E2E_KEEP:-}" ]; then
			log "kept $WORK"
		else
			rm -rf "$WORK"
		fi
	fi
	exit "$rc"
}

# private_bpffs "$@": the rest of the test runs in a mount namespace of its
# own with a fresh bpffs, so its pins are its own and can be hidden or made
# elsewhere at will. Call it first, before e2e_init (it runs the test anew).
private_bpffs() {
	if [ -z "${HS_PRIVATE_MNT:-}" ]; then
		require_root
		exec unshare -m --propagation private env HS_PRIVATE_MNT=1 bash "$0" "$@"
	fi
	mount -t bpf bpf /sys/fs/bpf || fail "cannot mount a private bpffs"
}

# Make the work directory and the trap; every test calls this first.
e2e_init() {
	require_root
	require_tools ip tc ethtool nsenter python3 bpftool ss
	# The interpreter itself, not a version manager's shim: it is run
	# hundreds of times.
	PYTHON=$(python3 -c 'import sys; print(sys.executable)') || fail "python3 does not run"
	WORK=$(mktemp -d "/tmp/hdrstrip-e2e-$E2E_NAME.XXXXXX")
	chmod 755 "$WORK"
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# Checksum offload (and the segmentation offloads that depend on it) off
# or back to the veth defaults, on both ends.
set_offload() { # on|off
	local mode=$1
	if [ "$mode" = off ]; then
		in_c ethtool -K "$CDEV" tx off rx off tso off gso off gro off >/dev/null 2>&1 ||
			fail "ethtool -K $CDEV tx off rx off"
		in_s ethtool -K "$SDEV" tx off rx off tso off gso off gro off >/dev/null 2>&1 ||
			fail "ethtool -K $SDEV tx off rx off"
	else
		in_c ethtool -K "$CDEV" tx on rx on tso on gso on >/dev/null 2>&1 ||
			fail "ethtool -K $CDEV tx on rx on"
		in_s ethtool -K "$SDEV" tx on rx on tso on gso on >/dev/null 2>&1 ||
			fail "ethtool -K $SDEV tx on rx on"
	fi
	log "ok: checksum offload $mode on $CDEV and $SDEV"
}

wait_dad() { # NS DEV
	local i
	for i in $(seq 1 100); do
		if [ -z "$(ip -n "$1" -6 addr show dev "$2" tentative)" ]; then
			return 0
		fi
		sleep 0.05
	done
	ip -n "$1" -6 addr show dev "$2" >&2
	fail "IPv6 DAD did not finish on $2 in $1"
}

# topo_setup [off]: client namespace CNS (CDEV: C4, C6) and server
# namespace SNS (SDEV: S4, S6) joined by one veth pair; with 'off',
# checksum offload is switched off on both ends.
topo_setup() {
	local id=$$
	CNS=hse2e-c-$id
	SNS=hse2e-s-$id
	CDEV=hsc$id
	SDEV=hss$id
	[ -e "/run/netns/$CNS" ] && fail "namespace $CNS already exists"
	[ -e "/run/netns/$SNS" ] && fail "namespace $SNS already exists"
	step "create namespaces $CNS and $SNS" ip netns add "$CNS"
	step "create namespace $SNS" ip netns add "$SNS"
	step "create veth $CDEV <-> $SDEV" \
		ip -n "$CNS" link add "$CDEV" type veth peer name "$SDEV" netns "$SNS"
	step "client addresses" ip -n "$CNS" addr add "$C4/24" dev "$CDEV"
	step "client IPv6 address" ip -n "$CNS" -6 addr add "$C6/64" dev "$CDEV"
	step "server addresses" ip -n "$SNS" addr add "$S4/24" dev "$SDEV"
	step "server IPv6 address" ip -n "$SNS" -6 addr add "$S6/64" dev "$SDEV"
	step "links up" ip -n "$CNS" link set "$CDEV" up
	step "server link up" ip -n "$SNS" link set "$SDEV" up
	step "client loopback up" ip -n "$CNS" link set lo up
	step "server loopback up" ip -n "$SNS" link set lo up
	[ "${1:-on}" = off ] && set_offload off
	wait_dad "$CNS" "$CDEV"
	wait_dad "$SNS" "$SDEV"
}

# Let one segment (a GSO packet) carry a whole ~60 KiB request. TCP caps a
# segment at half the largest window the peer has shown; a SYN's window is
# at most 64 KiB, so the request goes second on a connection (client.py
# --warmup), after the server's answer showed a scaled window: a large
# initial receive window and buffer at the server, a large initial
# congestion window at the client.
topo_big_windows() {
	step "server receive buffer" ip netns exec "$SNS" sysctl -qw \
		net.ipv4.tcp_rmem="4096 1048576 4194304"
	step "client initcwnd" ip -n "$CNS" route change 10.199.0.0/24 dev "$CDEV" initcwnd 64
	step "client IPv6 initcwnd" ip -n "$CNS" -6 route change fd00:199::/64 dev "$CDEV" metric 256 proto kernel initcwnd 64
	step "server initrwnd" ip -n "$SNS" route change 10.199.0.0/24 dev "$SDEV" initrwnd 128
	step "server IPv6 initrwnd" ip -n "$SNS" -6 route change fd00:199::/64 dev "$SDEV" metric 256 proto kernel initrwnd 128
}

wait_listen() { # NS PORT WHAT PID
	local i
	for i in $(seq 1 100); do
		if [ -n "$(ip netns exec "$1" ss -Hltn "sport = :$2")" ]; then
			return 0
		fi
		kill -0 "$4" 2>/dev/null || fail "$3 exited before listening on :$2"
		sleep 0.05
	done
	fail "$3 is not listening on :$2 in $1"
}

# srv_run CMD...: an origin server in SNS: in the test's cgroup when
# SRV_IN_CG is set (origin mode filters what that cgroup's processes
# accept: their listening sockets must be made there), else as in_s.
SRV_IN_CG=
srv_run() {
	if [ -n "$SRV_IN_CG" ]; then
		in_cg_ns "$SNS" "$@"
	else
		ip netns exec "$SNS" "$@"
	fi
}

# Origin servers in SNS; each writes its reports to $WORK/<name>.log.
start_node() {
	require_tools node
	srv_run node --max-http-header-size=131072 \
		"$E2E_DIR/servers/origin.js" "$PORT_NODE" "$WORK/node.log" \
		>"$WORK/node.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$PORT_NODE" node $!
	log "ok: node origin on :$PORT_NODE"
}

# node with its lenient parser (--insecure-http-parser), reporting as
# "node-insecure" in $WORK/node-insecure.log.
start_node_insecure() {
	require_tools node
	srv_run node --max-http-header-size=131072 --insecure-http-parser \
		"$E2E_DIR/servers/origin.js" "$PORT_NODE_INSECURE" "$WORK/node-insecure.log" \
		node-insecure >"$WORK/node-insecure.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$PORT_NODE_INSECURE" node-insecure $!
	log "ok: node origin with --insecure-http-parser on :$PORT_NODE_INSECURE"
}

start_python() {
	srv_run "$PYTHON" "$E2E_DIR/servers/pyorigin.py" --mode http \
		--port "$PORT_PYTHON" --log "$WORK/python.log" >"$WORK/python.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$PORT_PYTHON" python $!
	log "ok: python http.server origin on :$PORT_PYTHON"
}

# node's HTTP/2 server without TLS (h2c with prior knowledge), reporting as
# "node-h2c" in $WORK/node-h2c.log.
start_node_h2c() {
	require_tools node
	srv_run node "$E2E_DIR/servers/h2origin.js" "$PORT_NODE_H2C" \
		"$WORK/node-h2c.log" >"$WORK/node-h2c.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$PORT_NODE_H2C" node-h2c $!
	log "ok: node h2c origin on :$PORT_NODE_H2C"
}

# The same in upgrade mode: HTTP/1.1 that upgrades to h2c as RFC 7540 3.2
# lets a server, reporting as "node-h2c-upgrade" in $WORK/node-h2c-upgrade.log.
start_node_h2c_upgrade() {
	require_tools node
	srv_run node "$E2E_DIR/servers/h2origin.js" "$PORT_NODE_H2C_UPGRADE" \
		"$WORK/node-h2c-upgrade.log" node-h2c-upgrade upgrade \
		>"$WORK/node-h2c-upgrade.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$PORT_NODE_H2C_UPGRADE" node-h2c-upgrade $!
	log "ok: node h2c-by-Upgrade origin on :$PORT_NODE_H2C_UPGRADE"
}

# Python's SimpleHTTPRequestHandler as it is (it never reads a request's
# body), keep-alive, serving $WORK/www (f.txt in it), reporting as
# "python-simple" in $WORK/python-simple.log. Extra arguments go to
# pyorigin.py (--response-header ...).
start_python_simple() {
	mkdir -p "$WORK/www"
	# Longer than a response's head: framed as another's, its length
	# covers the next response's head.
	for i in $(seq 1 32); do printf 'line %02d of the file f.txt\n' "$i"; done >"$WORK/www/f.txt"
	srv_run "$PYTHON" "$E2E_DIR/servers/pyorigin.py" --mode simple \
		--port "$PORT_PYTHON_SIMPLE" --dir "$WORK/www" --log "$WORK/python-simple.log" \
		"$@" >"$WORK/python-simple.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$PORT_PYTHON_SIMPLE" python-simple $!
	log "ok: python SimpleHTTPRequestHandler origin on :$PORT_PYTHON_SIMPLE"
}

# nginx's temp-path directives, for the modules this build has.
nginx_temp_paths() {
	local m v
	v=$(nginx -V 2>&1)
	printf '\tclient_body_temp_path %s/nginx/body;\n\tproxy_temp_path %s/nginx/proxy;\n' "$WORK" "$WORK"
	for m in fastcgi uwsgi scgi; do
		case $v in
		*"--without-http_${m}_module"*) ;;
		*) printf '\t%s_temp_path %s/nginx/%s;\n' "$m" "$WORK" "$m" ;;
		esac
	done
}

# nginx_conf_head ERROR_LOG LEVEL CONNECTIONS: the start of an nginx.conf
# run in the foreground from $WORK/nginx, up to the inside of its http block.
nginx_conf_head() {
	cat <<EOF
daemon off;
master_process on;
worker_processes 1;
user root root;
pid $WORK/nginx/nginx.pid;
error_log $1 $2;
events { worker_connections $3; }
http {
	access_log off;
$(nginx_temp_paths)
EOF
}

# nginx_run PORT [RUNNER...]: nginx with $WORK/nginx/nginx.conf in the server
# namespace (run by RUNNER: default ip netns exec $SNS), listening on PORT.
nginx_run() {
	local port=$1
	shift
	[ $# -gt 0 ] || set -- srv_run
	"$@" nginx -e "$WORK/nginx-error.log" -p "$WORK/nginx" \
		-c "$WORK/nginx/nginx.conf" >"$WORK/nginx.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$port" nginx $!
}

start_nginx() {
	require_tools nginx
	mkdir -p "$WORK/nginx"
	srv_run "$PYTHON" "$E2E_DIR/servers/pyorigin.py" --mode raw \
		--port "$PORT_BACKEND" --bind 127.0.0.1 --server-name nginx \
		--log "$WORK/nginx.log" >"$WORK/backend.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$PORT_BACKEND" "nginx's backend" $!
	{
		nginx_conf_head "$WORK/nginx-error.log" info 256
		cat <<EOF
	large_client_header_buffers 4 128k;
	underscores_in_headers on;
	client_header_buffer_size 4k;
	proxy_buffer_size 128k;
	proxy_buffers 4 128k;
	proxy_busy_buffers_size 128k;
	server {
		listen $PORT_NGINX;
		listen [::]:$PORT_NGINX;
		location / {
			proxy_pass http://127.0.0.1:$PORT_BACKEND;
			proxy_set_header Host \$http_host;
		}
	}
EOF
		# h2c with prior knowledge: HTTP/2 without TLS on a port of its own.
		[ -z "${NGINX_H2C:-}" ] || cat <<EOF
	server {
		listen $PORT_NGINX_H2C http2;
		listen [::]:$PORT_NGINX_H2C http2;
		location / {
			proxy_pass http://127.0.0.1:$PORT_BACKEND;
			proxy_set_header Host \$http_host;
		}
	}
EOF
		echo "}"
	} >"$WORK/nginx/nginx.conf"
	nginx_run "$PORT_NGINX"
	# (one nginx, listening on both ports once it listens on one)
	[ -z "${NGINX_H2C:-}" ] || [ -n "$(ip netns exec "$SNS" ss -Hltn "sport = :$PORT_NGINX_H2C")" ] ||
		fail "nginx is not listening on :$PORT_NGINX_H2C (h2c) in $SNS"
	log "ok: nginx on :$PORT_NGINX${NGINX_H2C:+ (h2c on :$PORT_NGINX_H2C)}, proxying to the backend on 127.0.0.1:$PORT_BACKEND"
}

# resp_origins RUNNER: the origins of the response tests, in the server
# namespace, each started by RUNNER (in_s, or one into a cgroup), each
# sending internal response fields: resp_tool.py's raw origin on
# $PORT_PYTHON, node's (servers/resp_origin.js) on $PORT_NODE, nginx
# add_header on $PORT_NGINX, Python's http.server on $PORT_PYHTTP.
PORT_PYHTTP=8083
resp_origins() {
	local run=$1
	"$run" "$PYTHON" "$E2E_DIR/resp_tool.py" serve "$PORT_PYTHON" >"$WORK/raw.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$PORT_PYTHON" "raw origin" $!
	"$run" node "$E2E_DIR/servers/resp_origin.js" "$PORT_NODE" >"$WORK/node.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$PORT_NODE" "node origin" $!
	mkdir -p "$WORK/nginx"
	{
		nginx_conf_head "$WORK/nginx-error.log" info 256
		cat <<EOF
	server {
		listen $PORT_NGINX;
		listen [::]:$PORT_NGINX;
		location / {
			add_header X-Backend-Server "nginx-5.internal" always;
			add_header X-Powered-By "nginx/hs-test" always;
			add_header X-Keep "yes" always;
			return 200 "nginx says hello\n";
		}
	}
}
EOF
	} >"$WORK/nginx/nginx.conf"
	nginx_run "$PORT_NGINX" "$run"
	"$run" "$PYTHON" "$E2E_DIR/servers/pyorigin.py" --mode http --port "$PORT_PYHTTP" \
		--response-header "X-Backend-Server: py-origin-2.internal" \
		--response-header "X-Keep: yes" >"$WORK/pyhttp.out.log" 2>&1 &
	E2E_PIDS+=($!)
	wait_listen "$SNS" "$PORT_PYHTTP" "python http.server origin" $!
}

start_servers() {
	start_node
	start_nginx
	start_python
}

# Targets: "name port" of every origin server.
SERVERS=("node $PORT_NODE" "nginx $PORT_NGINX" "python $PORT_PYTHON")

# The raw client, run in the client namespace.
client() { in_c "$PYTHON" "$E2E_DIR/client.py" "$@"; }

# check_report ARGS...: compare what a server reported with what was sent.
check_report() { "$PYTHON" "$E2E_DIR/check_report.py" "$@"; }

# Address for family 4|6.
saddr() { if [ "$1" = 6 ]; then echo "$S6"; else echo "$S4"; fi; }
url_host() { if [ "$1" = 6 ]; then echo "[$S6]"; else echo "$S4"; fi; }

# hdrstrip's counters for DEV as "key value" lines, from 'stats --json'.
hs_stats() { # NS DEV [extra args]
	local ns=$1 dev=$2 out
	shift 2
	out=$(hs_in "$ns" stats "$dev" --json "$@") || fail "hdrstrip stats $dev --json failed: $out"
	printf '%s\n' "$out" >"$WORK/stats.json"
	"$PYTHON" "$E2E_DIR/json_counters.py" stats "$dev" <"$WORK/stats.json" ||
		fail "cannot read 'hdrstrip stats --json': $(head -c 400 "$WORK/stats.json")"
}

# The same counters summed over CPUs from bpftool's dump of the pinned map.
bpftool_counters() { # DEV
	bpftool -j map dump pinned "$BPFFS_ROOT/$1/counters" >"$WORK/bpftool.json" ||
		fail "bpftool map dump pinned $BPFFS_ROOT/$1/counters failed"
	"$PYTHON" "$E2E_DIR/json_counters.py" bpftool <"$WORK/bpftool.json" ||
		fail "cannot read bpftool's dump: $(head -c 400 "$WORK/bpftool.json")"
}

counter() { # KEY <<<"key value lines"
	awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print "missing" }'
}

# assert_clean NS DEV: no XDP program, no clsact qdisc, no BPF program on
# DEV and no pins of DEV.
assert_clean() {
	local ns=$1 dev=$2 out
	out=$(ip -n "$ns" link show dev "$dev")
	assert_no_match "$out" 'xdp|prog/' "no XDP program on $dev (ip link)"
	out=$(ip netns exec "$ns" tc qdisc show dev "$dev")
	assert_no_match "$out" 'clsact|ingress' "no clsact qdisc on $dev (tc qdisc show)"
	out=$(nsenter --net="/run/netns/$ns" bpftool net show dev "$dev")
	assert_no_match "$out" 'hdrstrip|id [0-9]+' "no BPF program on $dev (bpftool net)"
	[ ! -e "$BPFFS_ROOT/$dev" ] ||
		fail "left behind: $BPFFS_ROOT/$dev, holding: $(ls -A "$BPFFS_ROOT/$dev" | tr '\n' ' ')"
	log "ok: no pins in $BPFFS_ROOT/$dev"
}

# cg_make TAG: a cgroup v2 directory of this test's (E2E_CG, CG_ID), which
# the cleanup detaches and removes; returns 1 when there is no cgroup2
# hierarchy. Its processes must be gone by then (short-lived clients).
cg_make() {
	local root cg
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$root" ] && [ -e "$root/cgroup.procs" ] || return 1
	cg=$root/hse2e-$1-$$
	[ -e "$cg" ] && fail "$cg already exists"
	step "make the cgroup $cg" mkdir "$cg"
	E2E_CG=$cg
	CG_ID=$(stat -c %i "$cg")
}

# in_cg_ns NS CMD...: run CMD in the test's cgroup, in namespace NS.
# nsenter, not 'ip netns exec': the latter mounts a sysfs without the
# cgroup hierarchy.
in_cg_ns() {
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$E2E_CG" "$@"
}
# in_cg CMD...: in the test's cgroup, in the client namespace.
in_cg() { in_cg_ns "$CNS" "$@"; }

# write_resp_list FILE: the response tests' list (resp_origins' internal
# fields as response rules, one request rule).
write_resp_list() {
	cat >"$1" <<'EOF'
# request rules (the default direction)
x-internal-auth
# response rules
x-backend-server  mask  response
x-powered-by      mask  response
x-upstream-*      mask  response
EOF
}

# Header lists used by several tests.
write_main_list() { # FILE
	cat >"$1" <<'EOF'
# e2e: internal headers, one prefix rule, one drop rule
x-internal-auth
x-internal-trace mask
X-Internal-Tenant
x-edge-secret-*
x-kill-switch drop
EOF
}

# --- the test-only BPF programs: tests/e2e/bpf/ -------------------------------
# test_bpf_load OBJ PIN: load $E2E_BPF_DIR/OBJ as a tc program, pinned as
# $E2E_PINS/PIN with its maps beside it ($E2E_PINS is made by the first
# call and removed by the cleanup).
test_bpf_load() {
	local obj=$E2E_BPF_DIR/$1
	[ -f "$obj" ] || skip "$obj is not built (make $(realpath --relative-to="$REPO_ROOT" "$obj"))"
	if [ -z "$E2E_PINS" ]; then
		E2E_PINS=/sys/fs/bpf/hse2e-$$
		[ -e "$E2E_PINS" ] && fail "$E2E_PINS already exists"
		mkdir "$E2E_PINS" || fail "cannot make $E2E_PINS"
	fi
	step "load $1, pinned in $E2E_PINS" \
		bpftool prog load "$obj" "$E2E_PINS/$2" type classifier pinmaps "$E2E_PINS"
}

# --- loss on cue: tests/e2e/bpf/drop_once.bpf.c ----------------------------
# drop_once_load: load the program and pin it with its maps in $E2E_PINS
# (removed by the cleanup). Attach it with drop_once_attach, arm it with
# drop_once_arm.
drop_once_load() {
	test_bpf_load drop_once.bpf.o prog
}

# drop_once_attach NS DEV ingress|egress: run drop_once on DEV's clsact
# hook, after any filter already there (hdrstrip's has priority 1). The
# clsact qdisc is made if missing, and then removed by drop_once_detach.
DROP_QDISC_MADE=()
drop_once_attach() {
	local ns=$1 dev=$2 dir=$3
	if ! grep -q clsact <<<"$(nsenter --net="/run/netns/$ns" tc qdisc show dev "$dev")"; then
		step "clsact qdisc on $dev for drop_once" \
			nsenter --net="/run/netns/$ns" tc qdisc add dev "$dev" clsact
		DROP_QDISC_MADE+=("$ns $dev")
	fi
	# nsenter, not 'ip netns exec': tc must see the host's bpffs.
	step "drop_once at $dev $dir" nsenter --net="/run/netns/$ns" \
		tc filter add dev "$dev" "$dir" prio 7 handle 7 bpf da pinned "$E2E_PINS/prog"
}

drop_once_detach() { # NS DEV ingress|egress
	local ns=$1 dev=$2 dir=$3 i
	step "drop_once off $dev $dir" nsenter --net="/run/netns/$ns" \
		tc filter del dev "$dev" "$dir" prio 7 handle 7 bpf
	for i in "${!DROP_QDISC_MADE[@]}"; do
		[ "${DROP_QDISC_MADE[$i]}" = "$ns $dev" ] || continue
		if [ -z "$(nsenter --net="/run/netns/$ns" tc filter show dev "$dev" ingress)" ] &&
			[ -z "$(nsenter --net="/run/netns/$ns" tc filter show dev "$dev" egress)" ]; then
			step "remove the clsact qdisc drop_once made on $dev" \
				nsenter --net="/run/netns/$ns" tc qdisc del dev "$dev" clsact
			unset "DROP_QDISC_MADE[$i]"
		fi
	done
}

# Four bytes of a 32-bit number, little-endian, for bpftool.
le32() { printf '%d %d %d %d' $(($1 & 255)) $((($1 >> 8) & 255)) $((($1 >> 16) & 255)) $((($1 >> 24) & 255)); }

# drop_once_arm PORT OFFSET [SINK]: every connection to PORT (0: any) opened
# from now on loses its first data segment carrying byte OFFSET of the
# stream (0 = the first byte after the SYN), once; at egress the segment
# goes to the ifindex SINK (drop_once_sink) instead. Zeroes the counters.
drop_once_arm() {
	# struct drop_conf: offset, armed, port, sink_ifindex, dropped, data_segments
	# shellcheck disable=SC2046
	bpftool map update pinned "$E2E_PINS/conf" key 0 0 0 0 value $(le32 "$2") $(le32 1) \
		$(le32 "$1") $(le32 "${3:-0}") 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 ||
		fail "cannot arm drop_once (bpftool map update)"
}

# drop_once_sink NS: the ifindex of a device in NS where a segment sent
# from it vanishes: its loopback (the frame, addressed to another host's
# MAC, is dropped on the way back in).
drop_once_sink() {
	ip -n "$1" -o link show dev lo | cut -d: -f1
}

drop_once_disarm() {
	# shellcheck disable=SC2046
	bpftool map update pinned "$E2E_PINS/conf" key 0 0 0 0 value $(le32 0) $(le32 0) \
		$(le32 0) $(le32 0) 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 ||
		fail "cannot disarm drop_once (bpftool map update)"
}

# drop_once_stat FIELD: a field of struct drop_conf (dropped, armed, ...).
drop_once_stat() {
	bpftool -j map lookup pinned "$E2E_PINS/conf" key 0 0 0 0 |
		"$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["formatted"]["value"][sys.argv[1]])' "$1" ||
		fail "cannot read drop_once's conf map"
}

# flows_map NS DEV: the id of the flow table of the program hdrstrip
# attached to DEV (tests that empty it: the kernel's LRU is not strict).
flows_map() { # NS DEV
	local prog
	prog=$(hs_in "$1" status "$2" --json | "$PYTHON" -c 'import json, sys
print(json.load(sys.stdin)[0]["hooks"][0]["prog_id"])') || return 1
	bpftool -j prog show id "$prog" >"$WORK/prog.json" && bpftool -j map show >"$WORK/maps.json" ||
		return 1
	"$PYTHON" - "$WORK/prog.json" "$WORK/maps.json" <<'EOF'
import json, sys
ids = set(json.load(open(sys.argv[1]))["map_ids"])
flows = [m["id"] for m in json.load(open(sys.argv[2])) if m["id"] in ids and m.get("name") == "flows"]
print(flows[0]) if flows else sys.exit(1)
EOF
}
