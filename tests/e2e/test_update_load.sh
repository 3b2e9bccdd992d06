#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: cpu (a load generator with two workers at three hooks)
# 'hdrstrip update' under load, at every hook: a client loop of at least
# 2,000 requests (one per connection, two at a time) while the list is
# switched 50 times between list A and list B. Zero failed requests, and
# every request stripped by exactly one of the two lists, never a mix
# (loadgen.py interleaves the lines of both lists in each request).
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node
require_cli attach update detach status
topo_setup
start_node

printf '# list A\nx-list-a-1\nx-list-a-2\nx-list-a-3\nx-list-a-4\nx-common-secret\n' >"$WORK/a"
printf '# list B\nx-list-b-1\nX-LIST-B-2\nx-list-b-3\nx-list-b-*\nx-common-secret\n' >"$WORK/b"
SWITCHES=50

for spec in "xdp $SNS $SDEV 4" "tc-ingress $SNS $SDEV 6" "tc-egress $CNS $CDEV 4"; do
	read -r hook NS DEV fam <<<"$spec"
	note_attached "$NS" "$DEV"
	step "$hook: attach with list A" hs_in "$NS" attach "$DEV" --headers "$WORK/a" \
		--hook "$hook" --ports "$PORT_NODE"
	gen0=$(hs_in "$NS" status "$DEV" --json | grep -oE '"generation": *[0-9]+' | grep -oE '[0-9]+$')
	rm -f "$WORK/stop" "$WORK/progress"
	in_c "$PYTHON" "$E2E_DIR/loadgen.py" "$(saddr "$fam")" "$PORT_NODE" --min 2000 \
		--stop "$WORK/stop" --progress "$WORK/progress" >"$WORK/loadgen.log" 2>&1 &
	lg=$!
	E2E_PIDS+=("$lg")
	for _ in $(seq 1 200); do
		[ "$(cat "$WORK/progress" 2>/dev/null || echo 0)" -ge 100 ] && break
		sleep 0.05
	done
	[ "$(cat "$WORK/progress" 2>/dev/null || echo 0)" -ge 100 ] ||
		fail "$hook: the load generator did not get going: $(cat "$WORK/loadgen.log")"
	for i in $(seq 1 "$SWITCHES"); do
		if [ $((i % 2)) -eq 1 ]; then l=b; else l=a; fi
		out=$(hs_in "$NS" update "$DEV" --headers "$WORK/$l" 2>&1) ||
			fail "$hook: update $i to list $l failed: $out"
		sleep 0.03
	done
	log "ok: $hook: $SWITCHES updates under load, after $(cat "$WORK/progress") requests"
	touch "$WORK/stop"
	rc=0
	wait "$lg" || rc=$?
	summary=$(cat "$WORK/loadgen.log")
	printf '%s\n' "$summary" | sed "s/^/[$E2E_NAME] $hook: /"
	[ "$rc" -eq 0 ] || fail "$hook: requests failed or saw a mix of lists: $summary"
	n=$(printf '%s\n' "$summary" | awk '/^requests/ { print $2 }')
	assert_ge "$n" 2000 "$hook: requests under update"
	gen1=$(hs_in "$NS" status "$DEV" --json | grep -oE '"generation": *[0-9]+' | grep -oE '[0-9]+$')
	assert_eq "$((gen1 - gen0))" "$SWITCHES" "$hook: generation grew by one per update"
	step "$hook: detach" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"
done
log "PASS"
