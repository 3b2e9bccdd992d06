#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Network namespaces (issue 9): hdrstrip on a device in another namespace.
#  1. 'hdrstrip -n NS attach', then stats, update and detach with -n, each
#     from a process of its own: requests masked with each list, counters
#     move, status names the namespace.
#  2. 'ip netns exec NS hdrstrip attach' (a private mount namespace whose
#     bpffs vanishes with the command: the warning says so, once, at attach
#     only), then stats, update and detach under 'ip netns exec' too: all
#     work, found from the interface.
#  3. Two namespaces, each with a device of the same name (two containers'
#     eth0): both attach, with lists of their own; the second's pins are
#     NAME@<its namespace's inode>; status in each shows its own list and
#     pins (and no leftover); detach in one leaves the other masking, with
#     its pins.
# After each part nothing is left: no program, no clsact qdisc, no pins.
. "$(dirname "$0")/lib.sh"

e2e_init
require_cli attach update detach status stats
topo_setup
start_node

NS=$SNS DEV=$SDEV
note_attached "$NS" "$DEV"
write_main_list "$WORK/a.list"
printf 'x-second-list\n' >"$WORK/b.list"
VANISH='bpffs was not mounted in this mount namespace.*vanish'

# The namespaces of part 3 (named so that run.sh checks they are gone).
XNS=hse2e-x-$$
YNS=hse2e-y-$$
extra_cleanup() {
	local ns
	for ns in "$XNS" "$YNS"; do
		[ -e "/run/netns/$ns" ] || continue
		nsenter --net="/run/netns/$ns" "$HDRSTRIP" detach "$DEV" >/dev/null 2>&1
		ip netns del "$ns" 2>/dev/null
	done
}
# lib.sh's cleanup reads the exit status from $?: keep it, and run with
# errexit off (a failing step in the trap would skip the cleanup).
trap 'rc=$?; set +e; extra_cleanup; (exit $rc); cleanup' EXIT

# masked LIST WHAT HEADER...: a request with those fields, through the
# hook on the server's device, arrives with the listed ones masked.
masked() {
	local list=$1 what=$2 h=()
	shift 2
	for x in "$@"; do h+=(-H "$x"); done
	step "$what" client "$S4" "$PORT_NODE" "${h[@]}" -H "X-Keep: kept" --check "$list"
}

counter_of() { # KEY STATS-OUTPUT: the value of a counter in 'stats --json'
	printf '%s\n' "$2" | "$PYTHON" "$E2E_DIR/json_counters.py" stats "$DEV" | counter "$1"
}

# --- 1. -n NS from separate processes ----------------------------------------
step "-n: attach" "$HDRSTRIP" -n "$NS" attach "$DEV" --headers "$WORK/a.list"
masked "$WORK/a.list" "-n: request masked with the first list" "X-Internal-Auth: one"
expect_exit 0 "-n: status" "$HDRSTRIP" -n "$NS" status "$DEV"
assert_match "$EXPECT_OUT" "\($NS\)" "-n: status names the namespace"
expect_exit 0 "-n: stats --json" "$HDRSTRIP" -n "$NS" stats "$DEV" --json
assert_ge "$(counter_of headers_masked "$EXPECT_OUT")" 1 "-n: stats: headers_masked"
step "-n: update" "$HDRSTRIP" -n "$NS" update "$DEV" --headers "$WORK/b.list"
masked "$WORK/b.list" "-n: request masked with the updated list" "X-Second-List: two" \
	"X-Internal-Auth: not-any-more"
step "-n: detach" "$HDRSTRIP" -n "$NS" detach "$DEV"
assert_clean "$NS" "$DEV"
masked /dev/null "-n: after detach, requests arrive as sent" "X-Internal-Auth: three"

# --- 2. ip netns exec ---------------------------------------------------------
expect_exit 0 "ip netns exec: attach" ip netns exec "$NS" "$HDRSTRIP" attach "$DEV" \
	--headers "$WORK/a.list"
n=$(printf '%s\n' "$EXPECT_OUT" | grep -cE "$VANISH" || true)
assert_eq "$n" 1 "ip netns exec: attach warns that the pins vanish, once"
masked "$WORK/a.list" "ip netns exec: request masked" "X-Internal-Auth: four"
expect_exit 0 "ip netns exec: stats" ip netns exec "$NS" "$HDRSTRIP" stats "$DEV" --json
assert_ge "$(counter_of headers_masked "$EXPECT_OUT")" 1 "ip netns exec: stats: headers_masked"
assert_no_match "$EXPECT_OUT" "$VANISH" "ip netns exec: stats does not warn again"
expect_exit 0 "ip netns exec: update" ip netns exec "$NS" "$HDRSTRIP" update "$DEV" \
	--headers "$WORK/b.list"
assert_no_match "$EXPECT_OUT" "$VANISH" "ip netns exec: update does not warn again"
masked "$WORK/b.list" "ip netns exec: request masked with the updated list" \
	"X-Second-List: five"
expect_exit 0 "ip netns exec: status" ip netns exec "$NS" "$HDRSTRIP" status "$DEV"
assert_match "$EXPECT_OUT" "\($NS\)" "ip netns exec: status names the namespace"
expect_exit 0 "ip netns exec: detach" ip netns exec "$NS" "$HDRSTRIP" detach "$DEV"
assert_no_match "$EXPECT_OUT" "$VANISH" "ip netns exec: detach does not warn"
assert_clean "$NS" "$DEV"

# --- 3. the same device name in two namespaces --------------------------------
step "attach in $NS" hs_in "$NS" attach "$DEV" --headers "$WORK/a.list"
step "namespace $XNS" ip netns add "$XNS"
step "namespace $YNS" ip netns add "$YNS"
step "veth $DEV in $XNS too" ip -n "$XNS" link add "$DEV" type veth peer name "y$DEV" netns "$YNS"
step "its link up" ip -n "$XNS" link set "$DEV" up
step "its peer up" ip -n "$YNS" link set "y$DEV" up

# The second gets pins of its own, named after its namespace's inode.
XINO=$(stat -L -c %i "/run/netns/$XNS")
XPIN=$BPFFS_ROOT/$DEV@$XINO
note_attached "$XNS" "$DEV"
step "attach to the same name in $XNS" hs_in "$XNS" attach "$DEV" --headers "$WORK/b.list"
[ -e "$XPIN/config" ] || fail "the second attachment's pins are not in $XPIN: $(ls "$BPFFS_ROOT")"
[ -e "$BPFFS_ROOT/$DEV/config" ] || fail "the first attachment's pins went"
log "ok: pins in $BPFFS_ROOT/$DEV and $XPIN"
step "-n: a second hook there too" "$HDRSTRIP" -n "$XNS" attach "$DEV" --hook tc-ingress \
	--headers "$WORK/b.list"
expect_exit 0 "status in $XNS" hs_in "$XNS" status "$DEV" --json
assert_match "$EXPECT_OUT" "\"names\":1,.*\"pin_dir\":\"$XPIN\",.*\"pinned\":true" \
	"status in $XNS: its own list and pins"
expect_exit 0 "status in $NS" hs_in "$NS" status "$DEV" --json
assert_match "$EXPECT_OUT" "\"names\":5,.*\"pin_dir\":\"$BPFFS_ROOT/$DEV\",.*\"pinned\":true" \
	"status in $NS: its own list and pins"
assert_no_match "$(hs_in "$NS" status)" "$DEV(@$XINO)?: .*pins left" \
	"status in $NS lists neither pin directory as left over"
step "update in $XNS" hs_in "$XNS" update "$DEV" --headers "$WORK/b.list"
masked "$WORK/a.list" "the first attachment masks with its own list" "X-Internal-Auth: six"
step "detach in $XNS" hs_in "$XNS" detach "$DEV"
[ ! -e "$XPIN" ] || fail "left behind: $XPIN"
log "ok: no pins in $XPIN"
for ns in "$XNS"; do
	out=$(ip -n "$ns" link show dev "$DEV")
	assert_no_match "$out" 'xdp|prog/' "nothing attached in $ns (ip link)"
	out=$(ip netns exec "$ns" tc qdisc show dev "$DEV")
	assert_no_match "$out" 'clsact' "no clsact qdisc in $ns"
done
[ -e "$BPFFS_ROOT/$DEV/config" ] || fail "the first attachment's pins went with the other's detach"
log "ok: the first attachment's pins stay"
masked "$WORK/a.list" "the first attachment still masks after the other's detach" \
	"X-Internal-Auth: six"
expect_exit 0 "status in $NS after the other's detach" hs_in "$NS" status "$DEV"
assert_match "$EXPECT_OUT" "\($NS\)" "status names $NS"
step "detach in $NS" hs_in "$NS" detach "$DEV"
assert_clean "$NS" "$DEV"
step "now the same name in $XNS attaches" hs_in "$XNS" attach "$DEV" --headers "$WORK/a.list"
expect_exit 0 "status in $XNS" hs_in "$XNS" status "$DEV"
assert_match "$EXPECT_OUT" "\($XNS\)" "status names $XNS"
step "detach in $XNS" hs_in "$XNS" detach "$DEV"
assert_clean "$XNS" "$DEV"
