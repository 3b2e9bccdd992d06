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
#           name, every sockhash, dmesg, every attachment's status);
#   cpu     it keeps a core busy (over a third of two cores' time, as
#           measured from /proc/stat: the load generator, the verifier's
#           loads; the floods of test_bypass and test_events take 15-26 %):
#           it runs beside neither a cpu nor a timing suite;
#   timing  it judges by short waits (a segment dropped when no ACK comes
#           within a fraction of a second): never beside a cpu suite;
#   light   (no line) anything but an alone suite.
# The whole run should stay within E2E_BUDGET seconds (default 900: the 30
# suites took 596-605 s two at a time, 909 s one by one, on two cores on
# 2026-12-07), so this flags growth past that, not the run as it is; the
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

# The order they start in: the longest first (test_normalize, which the
# light and timing suites run beside), the alone ones last, so that none
# waits in the middle for the others to end.
declare -A class=() rank=()
waiting=()
for t in "${tests[@]}"; do
	class[$t]=$(class_of "$t") || exit 2
	rank[$t]=1
	[ "${class[$t]}" != alone ] || rank[$t]=2
	[[ $t != */test_normalize.sh ]] || rank[$t]=0
done
for r in 0 1 2; do
	for t in "${tests[@]}"; do [ "${rank[$t]}" != "$r" ] || waiting+=("$t"); done
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

# fits SUITE: may it start beside the running ones?
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
	local pid=$1 rc=$2 t=${running[$1]} name secs
	name=$(basename "$t" .sh)
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
		t=${waiting[$i]}
		fits "$t" || continue
		name=$(basename "$t" .sh)
		if [ -n "${E2E_VERBOSE:-}" ]; then
			bash "$t" > >(tee "$logdir/$name.log") 2>&1 &
		else
			bash "$t" >"$logdir/$name.log" 2>&1 &
		fi
		running[$!]=$t
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
[ "$JOBS" -le ${#tests[@]} ] || JOBS=${#tests[@]}
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
