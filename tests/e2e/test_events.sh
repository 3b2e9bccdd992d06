#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Match events ('hdrstrip events'), end to end:
#  - at xdp, tc-ingress and tc-egress, over IPv4 and IPv6: a request with an
#    internal field makes one event with the client's and the server's
#    address and port (the port curl used), the hook, the listed name, the
#    name as sent (its case), action mask; a drop rule's request makes drop
#    events with reason rule; the events and events_dropped counters agree;
#  - events are read once; --follow prints an event as it comes and ends at
#    SIGINT with exit 0; an interface hdrstrip is not on: exit 1;
#  - --event-rate holds under a flood: at most the rate (plus each CPU's
#    one-second bucket) a second, the rest counted in events_dropped, every
#    request still masked; --event-rate 0 sends none; update changes it;
#  - proxy mode (attach --cgroup): the proxy's socket and its upstream,
#    hook cgroup, the cgroup's path.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools curl
require_cli attach update detach status stats events

topo_setup off
start_python
LIST=$WORK/list
write_main_list "$LIST"
PORT=$PORT_PYTHON

ev_check() { "$PYTHON" "$E2E_DIR/events_check.py" "$@"; }
# events NS DEV [ARGS]: what 'events DEV --json' prints (and consumes).
events_of() {
	local ns=$1 dev=$2
	shift 2
	hs_in "$ns" events "$dev" --json "$@" >"$WORK/events.json" ||
		fail "hdrstrip events $dev --json failed: $(cat "$WORK/events.json")"
	cat "$WORK/events.json"
}
# curl from the client with HEADERS...; prints curl's local port.
curl_port() { # FAMILY PATH HEADERS...
	local fam=$1 path=$2
	shift 2
	in_c curl -sS -o /dev/null --max-time 3 -w '%{local_port}' "$@" \
		"http://$(url_host "$fam"):$PORT$path"
}
caddr() { if [ "$1" = 6 ]; then echo "$C6"; else echo "$C4"; fi; }

# The keys of an event, in the order hdrstrip(8) lists them.
man_keys=$("$PYTHON" "$REPO_ROOT/tests/install/mankeys.py" "$REPO_ROOT/man/hdrstrip.8" \
	"each event is an object with these keys") || fail "the man page lists no event keys"
keys_of() { "$PYTHON" -c 'import json, sys; print("\n".join(json.loads(sys.stdin.readline())))'; }

for hook in xdp tc-ingress tc-egress; do
	hook_side "$hook"
	step "$hook: attach" hs_in "$NS" attach "$DEV" --hook "$hook" --headers "$LIST" \
		--ports "$PORT"
	out=$(events_of "$NS" "$DEV")
	assert_eq "$out" "" "$hook: no event before any request"
	for fam in 4 6; do
		sport=$(curl_port "$fam" /ev -H "X-INTERNAL-Auth: secret-$hook" -H "X-Keep: k") ||
			fail "$hook IPv$fam: curl failed"
		step "$hook IPv$fam: one mask event, from curl's port to the origin" \
			ev_check --count 1 --want "hook=$hook" --want "dev=$DEV" --want "family=$fam" \
			--want "src=$(caddr "$fam")" --want "sport=$sport" --want "dst=$(saddr "$fam")" \
			--want "dport=$PORT" --want "name=x-internal-auth" \
			--want "received=X-INTERNAL-Auth" --want action=mask --want reason=null \
			--want rule=1 --want generation=1 <<<"$(events_of "$NS" "$DEV")"
	done
	out=$(events_of "$NS" "$DEV")
	assert_eq "$out" "" "$hook: events are read once"

	# A drop rule: the request never arrives (curl times out); each copy
	# TCP sends is dropped, and says why.
	sport=$(curl_port 4 /drop -H "X-Kill-Switch: now" --max-time 1) &&
		fail "$hook: a drop rule's request was answered"
	# One event, not one per copy TCP sent.
	step "$hook: one drop event, reason rule" \
		ev_check --count 1 --want "hook=$hook" --want "name=x-kill-switch" \
		--want "received=X-Kill-Switch" --want action=drop --want reason=rule \
		--want "dport=$PORT" <<<"$(events_of "$NS" "$DEV")"
	# curl gave up, but its closed socket resends the request for a minute:
	# abort it, or the next hook sees those copies.
	step "$hook: abort the dropped request's socket" in_c ss -K dst "$S4" dport = ":$PORT"
	stats=$(hs_stats "$NS" "$DEV")
	assert_eq "$(counter events_dropped <<<"$stats")" 0 "$hook: no event dropped"
	assert_eq "$(counter events <<<"$stats")" 3 "$hook: events counted"
	assert_ge "$(counter retransmits_dropped <<<"$stats")" 1 \
		"$hook: the dropped request's copies counted apart"
	events_of "$NS" "$DEV" >/dev/null
	curl_port 4 /keys -H "X-INTERNAL-Auth: k" >/dev/null || fail "$hook: curl failed"
	assert_eq "$(events_of "$NS" "$DEV" | keys_of | tr '\n' ' ')" "$(tr '\n' ' ' <<<"$man_keys")" \
		"$hook: an event's keys, in the man page's order"

	# The human line names the same things.
	curl_port 4 /human -H "X-Internal-Trace: t" >/dev/null || fail "$hook: curl failed"
	out=$(hs_in "$NS" events "$DEV")
	assert_match "$out" "^[0-9-]+T[0-9:.]+Z $DEV $hook $C4:[0-9]+ -> $S4:$PORT mask x-internal-trace \"X-Internal-Trace\"$" \
		"$hook: the human line"
	step "$hook: detach" hs_in "$NS" detach "$DEV"
done

# --- names from the list the event was made with ------------------------------
# An event made under list generation 1 (x-internal-auth is rule 1) read
# after an update that reorders the list: named from generation 1 (the
# idle trie slot). After a second update that list is gone: no name, the
# rule id and generation still given.
NS=$SNS DEV=$SDEV
step "names: attach" hs_in "$NS" attach "$DEV" --headers "$LIST" --ports "$PORT"
curl_port 4 /gen -H "X-Internal-Auth: g1" >/dev/null || fail "names: curl failed"
{ echo "x-first-new"; echo "x-second-new"; cat "$LIST"; } >"$WORK/list2"
step "names: update (the rule is 3rd now)" hs_in "$NS" update "$DEV" --headers "$WORK/list2"
step "names: the event keeps generation 1's name" \
	ev_check --count 1 --want name=x-internal-auth --want rule=1 --want generation=1 \
	<<<"$(events_of "$NS" "$DEV")"
# gen_gone WHAT: an event under the current list (x-internal-auth rule 3:
# generation 2 or 4), then two updates: that list is in no slot any more.
gen_gone() {
	curl_port 4 /gen -H "X-Internal-Auth: $1" >/dev/null || fail "names: curl failed"
	step "names: update ($1)" hs_in "$NS" update "$DEV" --headers "$LIST"
	step "names: update again ($1)" hs_in "$NS" update "$DEV" --headers "$WORK/list2"
}
gen_gone g2
step "names: a list no longer loaded: no name, its rule and generation" \
	ev_check --count 1 --want name=null --want rule=3 --want generation=2 \
	--want received=X-Internal-Auth <<<"$(events_of "$NS" "$DEV")"
gen_gone g4
assert_match "$(hs_in "$NS" events "$DEV")" "mask rule 3 of list generation 4 \\(since replaced\\) \"X-Internal-Auth\"$" \
	"names: the human line says the list was replaced"
step "names: detach" hs_in "$NS" detach "$DEV"

# --- --follow, and a device hdrstrip is not on --------------------------------
NS=$SNS DEV=$SDEV
step "xdp: attach again" hs_in "$NS" attach "$DEV" --headers "$LIST" --ports "$PORT"
# Started directly (nsenter execs hdrstrip): $! is hdrstrip's pid, and the
# SIGINT goes to it, not to a subshell that ignores it.
nsenter --net="/run/netns/$NS" "$HDRSTRIP" events "$DEV" --json --follow \
	>"$WORK/follow.json" 2>"$WORK/follow.err" &
FPID=$!
E2E_PIDS+=($FPID)
sleep 0.5
curl_port 4 /follow -H "X-Internal-Tenant: t1" >/dev/null || fail "follow: curl failed"
poll_until 5 grep -q x-internal-tenant "$WORK/follow.json" ||
	fail "--follow printed no event within 5 s: $(cat "$WORK/follow.json" "$WORK/follow.err")"
kill -INT "$FPID"
rc=0
wait "$FPID" || rc=$?
assert_eq "$rc" 0 "--follow: exit status after SIGINT"
step "--follow: the event" ev_check --count 1 --want name=x-internal-tenant \
	--want received=X-Internal-Tenant <"$WORK/follow.json"
expect_exit 1 "events of an interface hdrstrip is not on" hs_in "$CNS" events "$CDEV"
assert_match "$EXPECT_OUT" "not attached" "events: the message says so"
expect_exit 2 "events with an unknown option" hs_in "$NS" events "$DEV" --bogus

# --- the rate limit under a flood ---------------------------------------------
RATE=40
step "update --event-rate $RATE" hs_in "$NS" update "$DEV" --headers "$LIST" --event-rate "$RATE"
assert_match "$(hs_in "$NS" status "$DEV")" "events +$RATE a second" "status shows the rate"
events_of "$NS" "$DEV" >/dev/null
before=$(hs_stats "$NS" "$DEV")
# Batches of 200 requests pipelined on a connection, as fast as TCP takes
# them, for 2 s; prints how many were sent.
flood() {
	in_c "$PYTHON" - "$S4" "$PORT" <<'PY'
import socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
req = b"GET /flood HTTP/1.1\r\nHost: h\r\nX-Internal-Auth: flood\r\n\r\n" * 200
n, end = 0, time.monotonic() + 2
while time.monotonic() < end:
    s = socket.create_connection((host, port), timeout=20)
    s.sendall(req)
    s.shutdown(socket.SHUT_WR)
    while s.recv(65536):
        pass
    s.close()
    n += 200
print(n)
PY
}
t0=$(date +%s.%N)
N=$(flood) || fail "flood: the client failed"
t1=$(date +%s.%N)
after=$(hs_stats "$NS" "$DEV")
got=$(events_of "$NS" "$DEV" | ev_check --want name=x-internal-auth | awk '{print $2}')
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
ncpu=$(nproc --all)
# Each CPU's bucket starts full (RATE/ncpu, rounded up) and refills at that
# rate: the whole flood may send the rate for its length plus one bucket a CPU.
limit=$(awk -v r="$RATE" -v s="$secs" -v n="$ncpu" \
	'BEGIN { c = int((r + n - 1) / n); printf "%d", c * n * (s + 1) + n }')
log "flood: $N requests in $secs s, $got events: $(awk -v g="$got" -v s="$secs" 'BEGIN { printf "%.1f", g / s }') a second (limit $limit, rate $RATE/s on $ncpu CPUs)"
d() { echo $(($(counter "$1" <<<"$after") - $(counter "$1" <<<"$before"))); }
assert_ge "$got" 1 "flood: some events"
[ "$got" -le "$limit" ] || fail "flood: $got events in $secs s, over the limit $limit"
assert_eq "$(d headers_masked)" "$N" "flood: every request masked"
assert_eq "$(d events)" "$got" "flood: events counted as read"
assert_eq "$(d events_dropped)" "$((N - got))" "flood: the rest counted in events_dropped"

step "update --event-rate 0" hs_in "$NS" update "$DEV" --headers "$LIST" --event-rate 0
curl_port 4 /none -H "X-Internal-Auth: x" >/dev/null || fail "rate 0: curl failed"
assert_eq "$(events_of "$NS" "$DEV")" "" "--event-rate 0: no event"
step "detach" hs_in "$NS" detach "$DEV"

# --- proxy mode ---------------------------------------------------------------
cg_make events || {
	log "no cgroup2 hierarchy: proxy mode's events not checked"
	exit 0
}
CG=$E2E_CG
step "attach --cgroup" "$HDRSTRIP" attach --cgroup "$CG" --headers "$LIST" --ports "$PORT"
for fam in 4 6; do
	sport=$(in_cg curl -sS -o /dev/null --max-time 3 -w '%{local_port}' \
		-H "X-Internal-Auth: proxy-$fam" "http://$(url_host "$fam"):$PORT/proxy") ||
		fail "proxy IPv$fam: curl failed"
	"$HDRSTRIP" events --cgroup "$CG" --json >"$WORK/events.json" ||
		fail "events --cgroup failed: $(cat "$WORK/events.json")"
	step "proxy IPv$fam: one event, the proxy's socket to its upstream" \
		ev_check --count 1 --want hook=cgroup --want dev=null --want "cgroup=$CG" \
		--want "family=$fam" --want "src=$(caddr "$fam")" --want "sport=$sport" \
		--want "dst=$(saddr "$fam")" --want "dport=$PORT" --want name=x-internal-auth \
		--want received=X-Internal-Auth --want action=mask <"$WORK/events.json"
done
step "detach --cgroup" "$HDRSTRIP" detach --cgroup "$CG"
log "PASS"
