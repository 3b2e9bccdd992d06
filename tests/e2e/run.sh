#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Run every end-to-end test (tests/e2e/test_*.sh, or the ones named on the
# command line); print PASS, FAIL or SKIP for each and a summary. Exit status
# 1 when any test failed, else 0. Needs root; 'make test-e2e' runs it (and
# builds the test-only BPF objects in tests/e2e/bpf/ first).
# A failing test's last lines are shown; E2E_VERBOSE=1 shows every step.
# The whole run should stay within E2E_BUDGET seconds (default 1200: the
# 29 suites took 925 s on two shared and busy cores on 2026-12-04, the 21
# of 2026-12-02 660-730 s on CI's, so this flags growth past that, not the
# run as it is); the summary says when it did not.
set -uo pipefail

dir=$(cd "$(dirname "$0")" && pwd)
SKIP=77

if [ $# -gt 0 ]; then
	tests=("$@")
else
	tests=("$dir"/test_*.sh)
fi

logdir=$(mktemp -d /tmp/hdrstrip-e2e-run.XXXXXX)
trap 'rm -rf "$logdir"' EXIT
pass=0 failed=() skipped=()
start=$(date +%s)
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	t0=$(date +%s)
	if [ -n "${E2E_VERBOSE:-}" ]; then
		bash "$t" > >(tee "$logdir/$name.log") 2>&1 &
	else
		bash "$t" >"$logdir/$name.log" 2>&1 &
	fi
	pid=$!
	wait "$pid"
	rc=$?
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
	secs=$(($(date +%s) - t0))
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
done

total=$(($(date +%s) - start))
printf '\ne2e: %d passed, %d failed, %d skipped in %ds\n' "$pass" "${#failed[@]}" \
	"${#skipped[@]}" "$total"
[ "$total" -le "${E2E_BUDGET:-1200}" ] ||
	printf 'e2e: the run took %ds, over its budget of %ds (E2E_BUDGET)\n' "$total" "${E2E_BUDGET:-1200}"
[ ${#failed[@]} -eq 0 ] || printf 'failed: %s\n' "${failed[*]}"
[ ${#skipped[@]} -eq 0 ] || printf 'skipped: %s\n' "${skipped[*]}"
if grep -h 'KNOWN ISSUE' "$logdir"/*.log >"$logdir/known" 2>/dev/null; then
	printf 'known issues seen (tests/e2e/known-issues):\n'
	sed -E 's/^\[([^]]*)\] KNOWN ISSUE ([^:]*):.*/  \2 (\1)/' "$logdir/known" | sort | uniq -c
fi
[ ${#failed[@]} -eq 0 ]
