#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Run every end-to-end test (tests/e2e/test_*.sh, or the ones named on the
# command line); print PASS, FAIL or SKIP for each and a summary. Exit status
# 1 when any test failed, else 0. Needs root; 'make test-e2e' runs it (and
# builds the test-only BPF objects in tests/e2e/bpf/ first).
# A failing test's last lines are shown; E2E_VERBOSE=1 shows every step (and
# runs one suite at a time, so that their lines do not mix).
#
# Two suites run at once (E2E_JOBS, default 2; 1 runs them one by one): the
# suites spend most of their time waiting for packets, servers and the
# kernel, and each one's namespaces, pins and cgroup are named after its pid
# (lib.sh). A suite says in a line '# e2e-run: CLASS (why)' what it may run
# beside:
#   alone   nothing: it checks state that is not its own (every map of a
#           name, every sockhash, all programs of a name, the bpffs root);
#   cpu     it keeps a core busy (over a third of two cores' time, as
#           measured from /proc/stat: the load generator, the verifier's
#           loads, memcheck, the fault injection; the floods of test_bypass
#           and test_events take 15-26 %, test_origin 16 %):
#           it runs beside neither a cpu nor a timing suite;
#   timing  it judges by short waits (a segment dropped when no ACK comes
#           within a fraction of a second): never beside a cpu suite;
#   light   (no line) anything but an alone suite.
# A long suite may also say '# e2e-parts: VAR=VALUE | VAR=VALUE ...': when
# suites run two at a time and VAR is not set already, it runs as one suite
# a part, with VAR set (test_normalize: its hooks, two by two).
# The whole run should stay within E2E_BUDGET seconds (default 900: on two
# cores on 2026-12-07 the 30 suites and the faults took 566 s two at a
# time, test_normalize in two parts; 1,030 s one by one), so this flags
# growth past that, not the run as it is; the
# summary says when it did not. A suite's time is its own wall time, which
# another suite beside it can stretch.
set -uo pipefail

dir=$(cd "$(dirname "$0")" && pwd)
SKIP=77
JOBS=${E2E_JOBS:-2}
[ -z "${E2E_VERBOSE:-}" ] || JOBS=1
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || {
	echo "run.sh: E2E_JOBS must be a positive number, not '$JOBS'" >&2
	exit 2
}

if [ $# -gt 0 ]; then
	tests=("$@")
else
	tests=("$dir"/test_*.sh)
fi

# class_of SUITE: its '# e2e-run:' class, light without one.
class_of() {
	local c
	c=$(sed -n -E 's/^# e2e-run: ([a-z]+).*/\1/p' "$1" | head -n 1)
	case $c in
	alone | cpu | timing) echo "$c" ;;
	'') echo light ;;
	*)
		echo "run.sh: $1: unknown e2e-run class '$c' (alone, cpu, timing)" >&2
		exit 2
		;;
	esac
}

# parts_of SUITE: its '# e2e-parts:' parts, one a line (none when it has
# none, runs one at a time, or its variable is set).
parts_of() {
	local line var
	line=$(sed -n -E 's/^# e2e-parts: (.*)/\1/p' "$1" | head -n 1)
	[ -n "$line" ] && [ "$JOBS" -gt 1 ] || return 0
	var=${line%%=*}
	[ -z "${!var+x}" ] || return 0
	tr '|' '\n' <<<"$line" | sed -E 's/^ +//; s/ +$//'
}

# The order they start in: the parts of a long suite first, then the timing
# suites (beside them), the cpu ones (beside light ones), the light ones, and
# the alone ones last; a slot that comes free takes the first one that fits.
# An entry is a suite or one of its parts: its script, its VAR=VALUE (none
# for a whole suite) and its name ('test_x', 'test_x.xdp-receive').
declare -A class=() rank=() script=() setting=() ename=()
declare -A class_rank=([timing]=1 [cpu]=2 [light]=3 [alone]=4)
entries=() waiting=()
for t in "${tests[@]}"; do
	c=$(class_of "$t") || exit 2
	mapfile -t parts < <(parts_of "$t")
	[ ${#parts[@]} -gt 0 ] || parts=("")
	for part in "${parts[@]}"; do
		e=$t${part:+|$part}
		entries+=("$e")
		class[$e]=$c script[$e]=$t setting[$e]=$part
		ename[$e]=$(basename "$t" .sh)
		rank[$e]=${class_rank[$c]}
		if [ -n "$part" ]; then
			rank[$e]=0
			part=${part#*=}
			ename[$e]+=.${part// /-}
		fi
	done
done
for r in 0 1 2 3 4; do
	for e in "${entries[@]}"; do [ "${rank[$e]}" != "$r" ] || waiting+=("$e"); done
done

logdir=$(mktemp -d /tmp/hdrstrip-e2e-run.XXXXXX)
declare -A running=() started=()
# Interrupted: the running suites' own traps clean up after them.
stop() {
	local p
	for p in "${!running[@]}"; do kill -TERM "$p" 2>/dev/null; done
	wait
	rm -rf "$logdir"
	exit 130
}
trap stop INT TERM
trap 'rm -rf "$logdir"' EXIT

# fits ENTRY: may it start beside the running ones?
fits() {
	local c=${class[$1]} p r
	[ ${#running[@]} -lt "$JOBS" ] || return 1
	for p in "${!running[@]}"; do
		r=${class[${running[$p]}]}
		case $c/$r in
		alone/* | */alone | cpu/cpu | cpu/timing | timing/cpu) return 1 ;;
		esac
	done
	return 0
}

pass=0 failed=() skipped=()
# reap PID RC: a suite ended; check that it left nothing behind, report it.
reap() {
	local pid=$1 rc=$2 name secs
	name=${ename[${running[$1]}]}
	unset "running[$pid]"
	# A test names its namespaces and its own pins after its pid (lib.sh);
	# none may stay.
	if grep -qE -- "^hse2e-[a-z]+-$pid( |\$)" <<<"$(ip netns list 2>/dev/null)"; then
		printf '%s left namespaces behind: %s\n' "$name" \
			"$(ip netns list | grep -E -- "^hse2e-[a-z]+-$pid( |\$)" | tr '\n' ' ')" |
			tee -a "$logdir/$name.log"
		[ "$rc" -ne 0 ] || rc=1
	fi
	if [ -e "/sys/fs/bpf/hse2e-$pid" ]; then
		printf '%s left pins behind: /sys/fs/bpf/hse2e-%s\n' "$name" "$pid" |
			tee -a "$logdir/$name.log"
		[ "$rc" -ne 0 ] || rc=1
	fi
	secs=$(($(date +%s) - started[$pid]))
	case $rc in
	0)
		pass=$((pass + 1))
		printf '%-4s %s (%ds)\n' PASS "$name" "$secs"
		;;
	"$SKIP")
		skipped+=("$name")
		printf '%-4s %s: %s\n' SKIP "$name" "$(grep -h 'SKIP:' "$logdir/$name.log" | sed 's/.*SKIP: //')"
		;;
	*)
		failed+=("$name")
		[ -n "${E2E_VERBOSE:-}" ] ||
			grep -B 40 -A 3 -m 1 'FAIL:\|left .* behind' "$logdir/$name.log" | sed 's/^/  /'
		printf '%-4s %s (exit %d, %ds)\n' FAIL "$name" "$rc" "$secs"
		;;
	esac
}

start=$(date +%s)
while [ ${#waiting[@]} -gt 0 ] || [ ${#running[@]} -gt 0 ]; do
	# Start the first waiting suite that fits beside the running ones.
	for i in "${!waiting[@]}"; do
		e=${waiting[$i]}
		fits "$e" || continue
		name=${ename[$e]}
		env=()
		[ -z "${setting[$e]}" ] || env=("${setting[$e]}")
		if [ -n "${E2E_VERBOSE:-}" ]; then
			env "${env[@]}" bash "${script[$e]}" > >(tee "$logdir/$name.log") 2>&1 &
		else
			env "${env[@]}" bash "${script[$e]}" >"$logdir/$name.log" 2>&1 &
		fi
		running[$!]=$e
		started[$!]=$(date +%s)
		unset "waiting[$i]"
		waiting=("${waiting[@]}")
		continue 2
	done
	# None fits: wait for one to end.
	wait -n -p pid "${!running[@]}"
	rc=$?
	reap "$pid" "$rc"
done

total=$(($(date +%s) - start))
[ "$JOBS" -le ${#entries[@]} ] || JOBS=${#entries[@]}
printf '\ne2e: %d passed, %d failed, %d skipped in %ds (at most %d at a time)\n' "$pass" \
	"${#failed[@]}" "${#skipped[@]}" "$total" "$JOBS"
[ "$total" -le "${E2E_BUDGET:-900}" ] ||
	printf 'e2e: the run took %ds, over its budget of %ds (E2E_BUDGET)\n' "$total" "${E2E_BUDGET:-900}"
[ ${#failed[@]} -eq 0 ] || printf 'failed: %s\n' "${failed[*]}"
[ ${#skipped[@]} -eq 0 ] || printf 'skipped: %s\n' "${skipped[*]}"
if grep -h 'KNOWN ISSUE' "$logdir"/*.log >"$logdir/known" 2>/dev/null; then
	printf 'known issues seen (tests/e2e/known-issues):\n'
	sed -E 's/^\[([^]]*)\] KNOWN ISSUE ([^:]*):.*/  \2 (\1)/' "$logdir/known" | sort | uniq -c
fi
[ ${#failed[@]} -eq 0 ]
