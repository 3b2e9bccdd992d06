#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: cpu (strace and the CLI killed and run again: about half of two cores' time)
# Fault injection (issue 16): the CLI is killed (SIGKILL, through strace's
# --inject=SYSCALL:signal=KILL:when=N) at its bpf(), sendto(), mkdir(),
# unlink(), rmdir() and rename() calls during five commands: attach, a
# second hook's attach, update, detach, and proxy-mode attach. The test runs
# in a mount namespace of its own with a fresh bpffs. After each kill:
#  1. status matches the kernel: the same hooks, the same program ids;
#  2. a request through every attached hook arrives masked by the list
#     status names (nothing masked when status says nothing is attached);
#  3. the next attach (of a hook not attached), update and detach succeed,
#     and after the update requests are masked by its list;
#  4. after that detach no hook, qdisc, filter or pin is left, and every
#     program and map seen attached at that kill point is freed (polled:
#     the kernel releases them after an RCU grace period).
# Kill points: the calls a clean run of the command makes, sampled with a
# fixed stride to keep the run to about three minutes: bpf() (50 to 110
# calls a command) every FAULT_STRIDE-th (default 12), other syscalls every
# call when there are at most 6, else every third; the last call of each
# always. The figures are printed at the end.
. "$(dirname "$0")/../e2e/lib.sh"
private_bpffs "$@"

e2e_init
require_cli attach update detach status
require_tools strace
topo_setup
start_node

NS=$SNS DEV=$SDEV
note_attached "$NS" "$DEV"
FAULTS_PY=$(cd "$(dirname "$0")" && pwd)/faults.py
STRIDE=${FAULT_STRIDE:-12}
SYSCALLS="bpf,sendto,mkdir,unlink,unlinkat,rmdir,rename,renameat,renameat2"
printf 'x-faults-list-a\n' >"$WORK/a.list"
printf 'x-faults-list-b\n' >"$WORK/b.list"
FIELDS=(-H "X-Faults-List-A: first-list" -H "X-Faults-List-B: second-list" -H "X-Keep: kept")

CG= CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
extra_cleanup() {
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		"$HDRSTRIP" detach --cgroup "$CG" >/dev/null 2>&1
		rmdir "$CG" 2>/dev/null
	fi
	return 0
}
trap 'rc=$?; set +e; extra_cleanup; (exit $rc); cleanup' EXIT

# Figures: kill points tried, killed there (the others ran through: a run
# made fewer calls than the clean one), and each invariant held.
POINTS=0 KILLED=0 HELD_STATUS=0 HELD_TRAFFIC=0 HELD_NEXT=0 HELD_CLEAN=0
declare -A SC_POINTS=()

hs() { hs_in "$NS" "$@"; }
# The CLI where the scenario runs it: in NS, or (proxy mode) anywhere.
cli() {
	if [ "$MODE" = cgroup ]; then
		"$HDRSTRIP" "$@"
	else
		nsenter --net="/run/netns/$NS" "$HDRSTRIP" "$@"
	fi
}
# strace ARGS before the CLI's own, for a run where the scenario runs it.
cli_strace() { # STRACE_ARGS... -- CLI_ARGS...
	local s=()
	while [ "$1" != -- ]; do
		s+=("$1")
		shift
	done
	shift
	if [ "$MODE" = cgroup ]; then
		strace -f -qq "${s[@]}" "$HDRSTRIP" "$@"
	else
		nsenter --net="/run/netns/$NS" strace -f -qq "${s[@]}" "$HDRSTRIP" "$@"
	fi
}

# A request through the hooks, masked by LIST (/dev/null: nothing masked).
# Proxy mode filters what the cgroup's processes send (the client joins
# the cgroup) and takes a listed line out: the origin's report must lack
# exactly the listed fields.
traffic() { # LIST
	local f out
	if [ "$MODE" != cgroup ]; then
		client "$S4" "$PORT_NODE" "${FIELDS[@]}" --check "$1"
		return
	fi
	out=$(nsenter --net="/run/netns/$CNS" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" \
		"$PYTHON" "$E2E_DIR/client.py" "$S4" "$PORT_NODE" "${FIELDS[@]}") || return 1
	grep -qi '^header: x-keep: kept' <<<"$out" || { echo "no X-Keep line arrived"; return 1; }
	for f in x-faults-list-a x-faults-list-b; do
		if grep -qx "$f" "$1"; then
			! grep -qi "^header: $f:" <<<"$out" || { echo "$f arrived"; return 1; }
		else
			grep -qi "^header: $f:" <<<"$out" || { echo "$f did not arrive"; return 1; }
		fi
	done
}

# status against the kernel: sets LIST, HOOKS and adds the programs'
# (and their maps') ids to SEEN_PROGS and SEEN_MAPS.
observe() { # WHAT
	local out progs maps
	if [ "$MODE" = cgroup ]; then
		out=$("$PYTHON" "$FAULTS_PY" cgroup "$CG" "$HDRSTRIP" 2>&1) || fail "$1: $out"
	else
		out=$("$PYTHON" "$FAULTS_PY" dev "$NS" "$DEV" "$HDRSTRIP" 2>&1) || fail "$1: $out"
	fi
	read -r LIST HOOKS progs maps <<<"$out"
	[ "$progs" = - ] || SEEN_PROGS+=(${progs//,/ })
	[ "$maps" = - ] || SEEN_MAPS+=(${maps//,/ })
}

# Nothing of hdrstrip's left on the device (or cgroup), in bpffs, or of
# the programs and maps seen at this kill point.
clean() {
	if [ "$MODE" = cgroup ]; then
		grep -q hdrstrip <<<"$(bpftool cgroup show "$CG" 2>&1)" && return 1
	else
		grep -q 'xdp' <<<"$(ip -n "$NS" link show dev "$DEV")" && return 1
		grep -q clsact <<<"$(tc -n "$NS" qdisc show dev "$DEV")" && return 1
	fi
	[ -e "$BPFFS_ROOT" ] && return 1
	[ -z "$(bpf_ids_left prog "${SEEN_PROGS[@]}")$(bpf_ids_left map "${SEEN_MAPS[@]}")" ]
}

why_not_clean() {
	printf 'hooks: %s; pins: %s; programs left: ' \
		"$(if [ "$MODE" = cgroup ]; then bpftool cgroup show "$CG"; else
			ip -n "$NS" link show dev "$DEV" | grep -o 'xdp.*'
			tc -n "$NS" qdisc show dev "$DEV" | grep clsact
		fi | tr '\n' ' ')" "$(find "$BPFFS_ROOT" 2>/dev/null | tr '\n' ' ')"
	printf '%s; maps left: %s' "$(bpf_ids_left prog "${SEEN_PROGS[@]}" | tr '\n' ' ')" \
		"$(bpf_ids_left map "${SEEN_MAPS[@]}" | tr '\n' ' ')"
}

# The invariants after a kill at point WHAT.
check_point() { # WHAT
	local what=$1 hook target=()
	SEEN_PROGS=() SEEN_MAPS=()
	observe "$what: status against the kernel"
	HELD_STATUS=$((HELD_STATUS + 1))
	if [ "$LIST" = - ]; then
		traffic /dev/null >"$WORK/traffic.out" 2>&1 ||
			fail "$what: nothing attached, yet a request was changed: $(tail -3 "$WORK/traffic.out")"
	else
		traffic "$LIST" >"$WORK/traffic.out" 2>&1 ||
			fail "$what: a request through $HOOKS is not masked by $LIST, the list status names: $(tail -3 "$WORK/traffic.out")"
	fi
	HELD_TRAFFIC=$((HELD_TRAFFIC + 1))
	# The next command of each kind.
	if [ "$MODE" = cgroup ]; then
		target=(--cgroup "$CG")
		[ "$HOOKS" = - ] && step "$what: next attach" cli attach "${target[@]}" --headers "$WORK/a.list"
	else
		target=("$DEV")
		for hook in xdp tc-ingress tc-egress; do
			grep -qw -- "$hook" <<<"$HOOKS" && continue
			step "$what: next attach ($hook)" cli attach "$DEV" --hook "$hook" --headers "$WORK/a.list"
			break
		done
	fi
	step "$what: next update" cli update "${target[@]}" --headers "$WORK/b.list"
	observe "$what: status against the kernel after the update"
	[ "$LIST" = "$WORK/b.list" ] || fail "$what: status names $LIST after an update to b.list"
	traffic "$WORK/b.list" >"$WORK/traffic.out" 2>&1 ||
		fail "$what: after the update, a request through $HOOKS is not masked by b.list: $(tail -3 "$WORK/traffic.out")"
	step "$what: next detach" cli detach "${target[@]}"
	HELD_NEXT=$((HELD_NEXT + 1))
	poll_until 10 clean || fail "$what: left after the final detach: $(why_not_clean)"
	HELD_CLEAN=$((HELD_CLEAN + 1))
}

# One scenario: PRE (a function that sets the state up) then the command,
# killed at each point of a clean run's trace.
scenario() { # NAME MODE PRE CLI_ARGS...
	local name=$1 pre=$3 sc c n t0 rc stride
	MODE=$2
	shift 3
	t0=$(date +%s)
	# A clean run: how many calls of each syscall the command makes.
	"$pre"
	cli_strace -e trace="$SYSCALLS" -o "$WORK/clean.trace" -- "$@" >"$WORK/clean.out" 2>&1 ||
		fail "$name: the command fails without a fault: $(cat "$WORK/clean.out")"
	check_point "$name (no fault)"
	# Counted apart: the figures are the kill points'.
	HELD_STATUS=$((HELD_STATUS - 1)) HELD_TRAFFIC=$((HELD_TRAFFIC - 1))
	HELD_NEXT=$((HELD_NEXT - 1)) HELD_CLEAN=$((HELD_CLEAN - 1))
	SC_POINTS[$name]=0
	while read -r c sc; do
		stride=1
		[ "$sc" = bpf ] && stride=$STRIDE
		[ "$sc" != bpf ] && [ "$c" -gt 6 ] && stride=3
		for n in $(seq 1 "$stride" "$c"; [ $(((c - 1) % stride)) -eq 0 ] || echo "$c"); do
			"$pre"
			rc=0
			cli_strace -o /dev/null -e trace="$sc" -e inject="$sc:signal=KILL:when=$n" -- "$@" \
				>"$WORK/kill.out" 2>&1 || rc=$?
			POINTS=$((POINTS + 1))
			SC_POINTS[$name]=$((SC_POINTS[$name] + 1))
			if [ "$rc" -eq 137 ]; then
				KILLED=$((KILLED + 1))
			elif [ "$rc" -ne 0 ]; then
				fail "$name: not killed at $sc() call $n, yet exit $rc: $(tail -3 "$WORK/kill.out")"
			fi
			check_point "$name, killed at $sc() call $n of $c"
		done
	done < <(sed -nE 's/^[0-9]+ +([a-z0-9_]+)\(.*/\1/p' "$WORK/clean.trace" | sort | uniq -c)
	log "ok: $name: ${SC_POINTS[$name]} kill points ($(sed -nE 's/^[0-9]+ +([a-z0-9_]+)\(.*/\1/p' "$WORK/clean.trace" | sort | uniq -c | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }') calls), $(($(date +%s) - t0)) s"
}

pre_none() { :; }
pre_xdp() { step "set up: attach xdp" hs attach "$DEV" --headers "$WORK/a.list" >/dev/null; }
pre_two() {
	pre_xdp
	step "set up: attach tc-ingress" hs attach "$DEV" --hook tc-ingress --headers "$WORK/a.list" >/dev/null
}

T0=$(date +%s)
scenario attach dev pre_none attach "$DEV" --headers "$WORK/a.list"
scenario "second-hook attach" dev pre_xdp attach "$DEV" --hook tc-ingress --headers "$WORK/b.list"
scenario update dev pre_two update "$DEV" --headers "$WORK/b.list"
scenario detach dev pre_two detach "$DEV"
if [ -n "$CG_ROOT" ] && [ -e "$CG_ROOT/cgroup.procs" ]; then
	CG=$CG_ROOT/hse2e-faults-$$
	step "cgroup $CG" mkdir "$CG"
	scenario "proxy-mode attach" cgroup pre_none attach --cgroup "$CG" --headers "$WORK/a.list"
	step "remove cgroup $CG" rmdir "$CG"
	CG=
else
	log "SKIP proxy-mode attach: no cgroup2 hierarchy"
fi
log "faults: $POINTS kill points ($KILLED killed there, $((POINTS - KILLED)) ran through) in $(($(date +%s) - T0)) s, bpf() every ${STRIDE}th"
for name in "${!SC_POINTS[@]}"; do
	log "faults:   $name: ${SC_POINTS[$name]} points"
done
log "faults: invariants held: status = kernel $HELD_STATUS/$POINTS, traffic = status's list $HELD_TRAFFIC/$POINTS, next attach/update/detach $HELD_NEXT/$POINTS, nothing left $HELD_CLEAN/$POINTS (and at each command's fault-free run)"
log "PASS"
