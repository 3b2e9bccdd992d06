#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: alone (it finds its program among all those named hdrstrip_msg)
# Interfaces that change under an attachment, and the state hdrstrip keeps
# (issue 16). The device's maps are those of its attached programs, found
# from the kernel: pins are their copy, and never make a second set.
#  1. One set of maps for an interface whatever its pins: a second hook
#     attached after a rename, after an attach under 'ip netns exec', after
#     an attach from a private bpffs, uses the first hook's maps (one config
#     map id for every hook), and an update reaches both hooks (a request
#     through both carries the old list's field unmasked).
#  2. The interface's life cycle, each event followed by status, update,
#     detach and attach: down/up, rename, move to another namespace,
#     delete, delete and re-create.
#  3. Stale and partial pins (a killed attach or detach): detach removes
#     any subset of them, attach makes fresh maps at once (counters from
#     zero), whatever the pins were.
#  4. No bpffs to be had (/sys/fs read-only): status, update, stats and
#     detach work from the interface; attach works without pins.
#  5. A cgroup deleted while proxy mode is attached: status lists its pins
#     by cgroup id, 'detach --cgroup-id' removes them and the programs go.
#  6. A second-hook attach killed while its program loads (strace's
#     signal injection) leaves the running list in place: the list is
#     switched last.
# The test runs in a mount namespace of its own with a fresh bpffs: its
# pins are its own, and pins can be hidden or made elsewhere at will.
. "$(dirname "$0")/lib.sh"
private_bpffs "$@"

e2e_init
require_cli attach update detach status stats
require_tools strace
topo_setup
start_node

NS=$SNS DEV=$SDEV
note_attached "$NS" "$DEV"
printf 'x-lifecycle-a\n' >"$WORK/a.list"
printf 'x-lifecycle-b\n' >"$WORK/b.list"
FIELDS=(-H "X-Lifecycle-A: first-list" -H "X-Lifecycle-B: second-list" -H "X-Keep: kept")
MNS=hse2e-m-$$ # part 2: where the interface moves
NEW=${DEV}r     # parts 1 and 2: its new name
extra_cleanup() {
	local pid
	[ -e "/run/netns/$MNS" ] && ip netns del "$MNS" 2>/dev/null
	[ -n "${CG:-}" ] && [ -d "$CG" ] && {
		for pid in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
		"$HDRSTRIP" detach --cgroup "$CG" >/dev/null 2>&1
		rmdir "$CG" 2>/dev/null
	}
	mountpoint -q /sys/fs && umount /sys/fs 2>/dev/null
	return 0
}
trap 'rc=$?; set +e; extra_cleanup; (exit $rc); cleanup' EXIT

# PARTS="3 4" runs only those parts (each starts from nothing attached).
want_part() { [ -z "${PARTS:-}" ] || grep -qw "$1" <<<"$PARTS"; }

# masked_by LIST WHAT: a request through the hooks arrives with LIST's
# fields masked and the others as sent (/dev/null: nothing masked).
masked_by() {
	step "$2" client "$S4" "$PORT_NODE" "${FIELDS[@]}" --check "$1"
}

# config_ids NS DEV: the id of the config map of each hook attached to DEV
# ("hook id" lines), from the kernel: the programs' map ids.
config_ids() {
	local prog hook
	hs_in "$1" status "$2" --json >"$WORK/st.json" || return 1
	"$PYTHON" -c 'import json, sys
for h in json.load(open(sys.argv[1]))[0]["hooks"]:
    print(h["hook"], h["prog_id"])' "$WORK/st.json" | while read -r hook prog; do
		bpftool -j prog show id "$prog" >"$WORK/prog.json" || return 1
		"$PYTHON" - "$WORK/prog.json" "$hook" <<'EOF'
import json, subprocess, sys
for m in json.load(open(sys.argv[1])).get("map_ids", []):
    info = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", str(m)],
                                     capture_output=True, text=True).stdout or "{}")
    if info.get("name") == "config":
        print(sys.argv[2], m)
EOF
	done
}

# one_set NS DEV HOOKS WHAT: HOOKS hooks attached, all on one config map.
one_set() {
	local ids n distinct
	ids=$(config_ids "$1" "$2") || fail "$4: cannot read the hooks' maps"
	n=$(printf '%s\n' "$ids" | grep -c . || true)
	distinct=$(printf '%s\n' "$ids" | awk '{ print $2 }' | sort -u | grep -c . || true)
	[ "$n" -eq "$3" ] || fail "$4: $n hooks attached, expected $3: $ids"
	[ "$distinct" -eq 1 ] || fail "$4: the hooks use $distinct sets of maps: $(tr '\n' ' ' <<<"$ids")"
	log "ok: $4: $3 hooks, one config map (id $(awk '{ print $2; exit }' <<<"$ids"))"
}

counter_of() { # NS DEV KEY
	hs_stats "$1" "$2" | counter "$3"
}

pins_of() { ls "$BPFFS_ROOT/$1" 2>/dev/null | tr '\n' ' '; }

both_hooks() { # LIST WHAT: xdp then tc-ingress on DEV, the second with LIST
	step "$2: attach xdp" hs_in "$NS" attach "$DEV" --headers "$WORK/a.list"
	step "$2: attach tc-ingress" hs_in "$NS" attach "$DEV" --hook tc-ingress --headers "$1"
}

recreate_pair() { # the topology's veth pair again, as topo_setup made it
	step "re-create veth $CDEV <-> $SDEV" \
		ip -n "$CNS" link add "$CDEV" type veth peer name "$SDEV" netns "$SNS"
	step "client address again" ip -n "$CNS" addr add "$C4/24" dev "$CDEV"
	step "server address again" ip -n "$SNS" addr add "$S4/24" dev "$SDEV"
	step "client link up" ip -n "$CNS" link set "$CDEV" up
	step "server link up" ip -n "$SNS" link set "$SDEV" up
}

# --- 1. one set of maps, whatever the pins ----------------------------------
if want_part 1; then
	# a) The second hook after a rename: the pins are under the old name.
	step "1a: attach xdp with list A" hs_in "$NS" attach "$DEV" --headers "$WORK/a.list"
	step "1a: rename $DEV to $NEW" ip -n "$NS" link set "$DEV" name "$NEW"
	step "1a: attach tc-ingress to $NEW with list B" hs_in "$NS" attach "$NEW" --hook tc-ingress \
		--headers "$WORK/b.list"
	one_set "$NS" "$NEW" 2 "1a: after a rename"
	masked_by "$WORK/b.list" "1a: both hooks on list B"
	step "1a: update $NEW to list A" hs_in "$NS" update "$NEW" --headers "$WORK/a.list"
	masked_by "$WORK/a.list" "1a: the update reached both hooks"
	[ -e "$BPFFS_ROOT/$NEW/config" ] || fail "1a: no pins under the new name"
	[ ! -e "$BPFFS_ROOT/$DEV" ] || fail "1a: pins left under the old name: $(pins_of "$DEV")"
	log "ok: 1a: the pins moved to $BPFFS_ROOT/$NEW"
	step "1a: detach $NEW" hs_in "$NS" detach "$NEW"
	step "1a: rename back" ip -n "$NS" link set "$NEW" name "$DEV"
	assert_clean "$NS" "$DEV"
	[ ! -e "$BPFFS_ROOT/$NEW" ] || fail "1a: pins left: $(pins_of "$NEW")"

	# b) The first hook under 'ip netns exec': its bpffs, and pins, vanished.
	expect_exit 0 "1b: attach xdp under ip netns exec" ip netns exec "$NS" "$HDRSTRIP" attach "$DEV" \
		--headers "$WORK/a.list"
	[ ! -e "$BPFFS_ROOT/$DEV" ] || fail "1b: pins in this bpffs after ip netns exec"
	step "1b: attach tc-ingress with list B" hs_in "$NS" attach "$DEV" --hook tc-ingress \
		--headers "$WORK/b.list"
	one_set "$NS" "$DEV" 2 "1b: after ip netns exec"
	step "1b: update to list A" hs_in "$NS" update "$DEV" --headers "$WORK/a.list"
	masked_by "$WORK/a.list" "1b: the update reached both hooks"
	[ -e "$BPFFS_ROOT/$DEV/config" ] || fail "1b: the second attach made no pins"
	step "1b: detach" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"

	# c) The first hook from a private bpffs (another mount namespace).
	step "1c: attach xdp from a private bpffs" unshare -m --propagation private sh -c \
		'mount -t bpf bpf /sys/fs/bpf && exec nsenter --net="/run/netns/$1" "$2" attach "$3" --headers "$4"' \
		sh "$NS" "$HDRSTRIP" "$DEV" "$WORK/a.list"
	step "1c: attach tc-ingress with list B" hs_in "$NS" attach "$DEV" --hook tc-ingress \
		--headers "$WORK/b.list"
	one_set "$NS" "$DEV" 2 "1c: after a private bpffs"
	masked_by "$WORK/b.list" "1c: both hooks on list B"
	step "1c: detach" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"
fi

# --- 2. the interface's life cycle --------------------------------------------
if want_part 2; then
	# down/up: the hooks stay.
	both_hooks "$WORK/a.list" "2 down/up"
	step "down/up: down" ip -n "$NS" link set "$DEV" down
	step "down/up: up" ip -n "$NS" link set "$DEV" up
	expect_exit 0 "down/up: status" hs_in "$NS" status "$DEV"
	assert_match "$EXPECT_OUT" "xdp.*program" "down/up: status shows xdp"
	assert_match "$EXPECT_OUT" "tc-ingress.*program" "down/up: status shows tc-ingress"
	step "down/up: update to list B" hs_in "$NS" update "$DEV" --headers "$WORK/b.list"
	one_set "$NS" "$DEV" 2 "down/up"
	poll_until 5 client "$S4" "$PORT_NODE" "${FIELDS[@]}" --check "$WORK/b.list" >/dev/null ||
		fail "down/up: requests do not pass masked with list B"
	log "ok: down/up: masked with list B"
	step "down/up: detach" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"
	step "down/up: attach" hs_in "$NS" attach "$DEV" --headers "$WORK/a.list"
	step "down/up: detach again" hs_in "$NS" detach "$DEV"

	# rename: status, update, detach and attach by the new name.
	both_hooks "$WORK/a.list" "2 rename"
	step "rename: $DEV to $NEW" ip -n "$NS" link set "$DEV" name "$NEW"
	expect_exit 2 "rename: status of the old name" hs_in "$NS" status "$DEV"
	expect_exit 0 "rename: status of the new name" hs_in "$NS" status "$NEW"
	assert_match "$EXPECT_OUT" "tc-ingress.*program" "rename: status shows both hooks"
	expect_exit 0 "rename: status lists the old name's pins" hs_in "$NS" status
	assert_match "$EXPECT_OUT" "$DEV: .*renamed '$NEW'" "rename: the pins under the old name are named"
	step "rename: update" hs_in "$NS" update "$NEW" --headers "$WORK/b.list"
	masked_by "$WORK/b.list" "rename: masked with list B"
	[ ! -e "$BPFFS_ROOT/$DEV" ] || fail "rename: pins left under the old name after update"
	step "rename: attach tc-egress too" hs_in "$NS" attach "$NEW" --hook tc-egress --headers "$WORK/b.list"
	one_set "$NS" "$NEW" 3 "rename"
	step "rename: detach" hs_in "$NS" detach "$NEW"
	[ ! -e "$BPFFS_ROOT/$NEW" ] && [ ! -e "$BPFFS_ROOT/$DEV" ] ||
		fail "rename: pins left: $(pins_of "$NEW") $(pins_of "$DEV")"
	step "rename: attach by the new name" hs_in "$NS" attach "$NEW" --headers "$WORK/a.list"
	step "rename: detach by the new name" hs_in "$NS" detach "$NEW"
	step "rename: back to $DEV" ip -n "$NS" link set "$NEW" name "$DEV"
	assert_clean "$NS" "$DEV"

	# move to another namespace: XDP goes along, the TC filters do not.
	step "move: namespace $MNS" ip netns add "$MNS"
	both_hooks "$WORK/a.list" "2 move"
	step "move: $DEV to $MNS" ip -n "$NS" link set "$DEV" netns "$MNS"
	expect_exit 2 "move: status where it was" hs_in "$NS" status "$DEV"
	expect_exit 1 "move: detach where it was is refused (its pins are in use)" hs_in "$NS" detach "$DEV"
	assert_match "$EXPECT_OUT" "left this network namespace|another namespace" "move: the refusal says why"
	expect_exit 0 "move: status in $MNS" hs_in "$MNS" status "$DEV"
	assert_match "$EXPECT_OUT" "xdp.*program" "move: xdp came along"
	assert_no_match "$EXPECT_OUT" "tc-ingress" "move: the TC filter did not"
	step "move: update in $MNS" hs_in "$MNS" update "$DEV" --headers "$WORK/b.list"
	step "move: attach tc-ingress in $MNS" hs_in "$MNS" attach "$DEV" --hook tc-ingress \
		--headers "$WORK/b.list"
	one_set "$MNS" "$DEV" 2 "move"
	step "move: detach in $MNS" hs_in "$MNS" detach "$DEV"
	assert_clean "$MNS" "$DEV"
	step "move: attach in $MNS" hs_in "$MNS" attach "$DEV" --headers "$WORK/a.list"
	step "move: detach in $MNS again" hs_in "$MNS" detach "$DEV"
	step "move: back to $NS" ip -n "$MNS" link set "$DEV" netns "$NS"
	step "move: address again" ip -n "$NS" addr add "$S4/24" dev "$DEV"
	step "move: up again" ip -n "$NS" link set "$DEV" up
	assert_clean "$NS" "$DEV"
	masked_by /dev/null "move: back, nothing attached"

	# delete: the interface's state goes with it; its pins are stale.
	both_hooks "$WORK/a.list" "2 delete"
	step "delete: $DEV" ip -n "$NS" link del "$DEV"
	expect_exit 2 "delete: status" hs_in "$NS" status "$DEV"
	expect_exit 0 "delete: status lists its pins" hs_in "$NS" status
	assert_match "$EXPECT_OUT" "$DEV: no such interface here; [0-9] pins left" "delete: the stale pins are named"
	expect_exit 2 "delete: update" hs_in "$NS" update "$DEV" --headers "$WORK/b.list"
	expect_exit 0 "delete: detach removes the stale pins" hs_in "$NS" detach "$DEV"
	assert_match "$EXPECT_OUT" "removed the stale pins" "delete: detach says so"
	[ ! -e "$BPFFS_ROOT/$DEV" ] || fail "delete: pins left: $(pins_of "$DEV")"
	expect_exit 2 "delete: attach" hs_in "$NS" attach "$DEV" --headers "$WORK/a.list"
	recreate_pair
	step "delete: attach to the new $DEV" hs_in "$NS" attach "$DEV" --headers "$WORK/a.list"
	masked_by "$WORK/a.list" "delete: the new $DEV masks"
	step "delete: detach" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"

	# re-create while pins are left: the next attach succeeds at once, with
	# fresh maps (counters from zero).
	both_hooks "$WORK/a.list" "2 re-create"
	masked_by "$WORK/a.list" "re-create: masked before"
	ip -n "$NS" link del "$DEV" || fail "re-create: delete $DEV"
	recreate_pair
	expect_exit 1 "re-create: status" hs_in "$NS" status "$DEV"
	expect_exit 1 "re-create: update" hs_in "$NS" update "$DEV" --headers "$WORK/b.list"
	[ -e "$BPFFS_ROOT/$DEV/config" ] || fail "re-create: the old pins went before the attach"
	step "re-create: attach at once" hs_in "$NS" attach "$DEV" --hook tc-ingress --headers "$WORK/b.list"
	assert_eq "$(counter_of "$NS" "$DEV" headers_masked)" 0 "re-create: counters start from zero"
	masked_by "$WORK/b.list" "re-create: masked with the new list"
	step "re-create: detach" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"
fi

# --- 3. stale and partial pins --------------------------------------------
if want_part 3; then
	# A detach killed while unlinking: the hooks are gone, some pins are not
	# (config first to go, so the rest is known to be partial).
	for keep in "trie counters header_hits" "counters" "trie header_hits" "config"; do
		step "3 [$keep]: attach" hs_in "$NS" attach "$DEV" --headers "$WORK/a.list"
		masked_by "$WORK/a.list" "3 [$keep]: masked"
		step "3 [$keep]: the hook off behind hdrstrip's back" ip -n "$NS" link set dev "$DEV" xdp off
		for p in config trie counters header_hits; do
			grep -qw "$p" <<<"$keep" || rm -f "$BPFFS_ROOT/$DEV/$p"
		done
		expect_exit 0 "3 [$keep]: detach removes the pins left" hs_in "$NS" detach "$DEV"
		assert_clean "$NS" "$DEV"
	done
	# An attach killed while pinning: the next attach makes new maps (old
	# counters once came back with the reused pins).
	step "3: attach" hs_in "$NS" attach "$DEV" --headers "$WORK/a.list"
	masked_by "$WORK/a.list" "3: masked"
	assert_ge "$(counter_of "$NS" "$DEV" headers_masked)" 1 "3: headers_masked before"
	step "3: the hook off behind hdrstrip's back" ip -n "$NS" link set dev "$DEV" xdp off
	rm -f "$BPFFS_ROOT/$DEV/config"
	step "3: attach over the partial pins" hs_in "$NS" attach "$DEV" --headers "$WORK/b.list"
	assert_eq "$(counter_of "$NS" "$DEV" headers_masked)" 0 "3: counters from zero, not the old pins'"
	masked_by "$WORK/b.list" "3: masked with the new list"
	step "3: detach" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"
fi

# --- 4. no bpffs to be had -----------------------------------------------------
if want_part 4; then
	both_hooks "$WORK/a.list" "4"
	step "4: /sys/fs read-only, without a bpffs" mount -t tmpfs -o ro,size=4k tmpfs /sys/fs
	expect_exit 0 "4: status" hs_in "$NS" status "$DEV"
	step "4: update" hs_in "$NS" update "$DEV" --headers "$WORK/b.list"
	masked_by "$WORK/b.list" "4: masked with list B"
	step "4: stats" hs_in "$NS" stats "$DEV"
	expect_exit 0 "4: detach" hs_in "$NS" detach "$DEV"
	assert_no_match "$EXPECT_OUT" "cannot|only the hooks" "4: detach says nothing is wrong"
	out=$(ip -n "$NS" link show dev "$DEV")
	assert_no_match "$out" 'xdp|prog/' "4: no XDP program left"
	out=$(ip netns exec "$NS" tc qdisc show dev "$DEV")
	assert_no_match "$out" 'clsact' "4: no clsact qdisc left"
	expect_exit 0 "4: attach without pins" hs_in "$NS" attach "$DEV" --hook tc-ingress \
		--headers "$WORK/a.list"
	assert_match "$EXPECT_OUT" "without pins" "4: attach says it has no pins"
	masked_by "$WORK/a.list" "4: masked with list A"
	step "4: detach" hs_in "$NS" detach "$DEV"
	step "4: /sys/fs as it was" umount /sys/fs
	# The first attach's pins, which a detach without bpffs could not reach.
	expect_exit 0 "4: detach removes the pins left" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"
fi

# --- 6. a second-hook attach killed while its program loads ----------------
if want_part 6; then
	# The list is switched last, after the new hook is loaded, verified and
	# attached: killed while loading (the verifier's ~0.5 s), it leaves the
	# running hook on the running list. The kill point is the BPF_PROG_LOAD of
	# hdrstrip_tc, found in a clean run's trace.
	step "6: attach xdp with list A" hs_in "$NS" attach "$DEV" --headers "$WORK/a.list"
	step "6: trace a second-hook attach" nsenter --net="/run/netns/$NS" strace -f -qq -e trace=bpf \
		-o "$WORK/attach.trace" "$HDRSTRIP" attach "$DEV" --hook tc-ingress --headers "$WORK/b.list"
	step "6: detach tc-ingress" hs_in "$NS" detach "$DEV" --hook tc-ingress
	step "6: back to list A" hs_in "$NS" update "$DEV" --headers "$WORK/a.list"
	# The index of that call among the bpf() calls, as strace's when= counts.
	N=$(grep -n 'BPF_PROG_LOAD.*prog_name="hdrstrip_tc"' "$WORK/attach.trace" | tail -n 1 | cut -d: -f1)
	[ -n "$N" ] || fail "6: no BPF_PROG_LOAD of hdrstrip_tc in the trace"
	expect_exit 137 "6: attach tc-ingress with list B, killed at bpf() call $N (its program load)" \
		nsenter --net="/run/netns/$NS" strace -f -qq -o /dev/null --inject="bpf:signal=KILL:when=$N" \
		"$HDRSTRIP" attach "$DEV" --hook tc-ingress --headers "$WORK/b.list"
	expect_exit 0 "6: status" hs_in "$NS" status "$DEV" --json
	assert_match "$EXPECT_OUT" "\"list\":\"$WORK/a.list\"" "6: status still names list A"
	assert_no_match "$EXPECT_OUT" "tc-ingress" "6: status shows no tc-ingress hook"
	masked_by "$WORK/a.list" "6: requests still masked with list A (not B)"
	step "6: attach tc-ingress again" hs_in "$NS" attach "$DEV" --hook tc-ingress --headers "$WORK/b.list"
	one_set "$NS" "$DEV" 2 "6"
	masked_by "$WORK/b.list" "6: both hooks on list B"
	step "6: detach" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"
fi

# --- 5. a cgroup deleted while attached ---------------------------------------
CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if want_part 5 && { [ -z "$CG_ROOT" ] || [ ! -e "$CG_ROOT/cgroup.procs" ]; }; then
	log "SKIP part 5: no cgroup2 hierarchy"
elif want_part 5; then
	CG=$CG_ROOT/hse2e-life-$$
	step "5: cgroup $CG" mkdir "$CG"
	CG_ID=$(stat -c %i "$CG")
	msg_ids() { { bpftool prog show name hdrstrip_msg 2>/dev/null || true; } | sed -nE 's/^([0-9]+): .*/\1/p' | sort; }
	msg_ids >"$WORK/msg.before"
	step "5: attach --cgroup" "$HDRSTRIP" attach --cgroup "$CG" --headers "$WORK/a.list"
	# This attachment's sk_msg program: the one that was not there before.
	OUR_MSG=$(msg_ids | comm -13 "$WORK/msg.before" -)
	[ -n "$OUR_MSG" ] || fail "5: no new hdrstrip_msg program after the attach"
	# A request from a process of the cgroup loses its internal line.
	nsenter --net="/run/netns/$CNS" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" \
		"$PYTHON" "$E2E_DIR/client.py" "$S4" "$PORT_NODE" "${FIELDS[@]}" >"$WORK/cg.out" ||
		fail "5: request from the cgroup"
	assert_no_match "$(cat "$WORK/cg.out")" "x-lifecycle-a" "5: the internal line was taken out"
	step "5: delete the cgroup" rmdir "$CG"
	expect_exit 0 "5: status lists the deleted cgroup's pins" "$HDRSTRIP" status
	assert_match "$EXPECT_OUT" "cgroup-$CG_ID: cgroup deleted.*detach --cgroup-id $CG_ID" \
		"5: status names them and the command that removes them"
	expect_exit 0 "5: status --json" "$HDRSTRIP" status --json
	assert_match "$EXPECT_OUT" "\"dev\":\"cgroup-$CG_ID\".*\"reason\":\"cgroup deleted\"" "5: in JSON too"
	expect_exit 2 "5: status --cgroup of the deleted path" "$HDRSTRIP" status --cgroup "$CG"
	assert_match "$EXPECT_OUT" "detach --cgroup-id" "5: the message says what to do"
	expect_exit 0 "5: detach --cgroup-id" "$HDRSTRIP" detach --cgroup-id "$CG_ID"
	[ ! -e "$BPFFS_ROOT/cgroup-$CG_ID" ] || fail "5: pins left: $(pins_of "cgroup-$CG_ID")"
	log "ok: 5: no pins left"
	# The sk_msg program lives as long as the sockhash, which the pins
	# held: freed after them (some time later: poll).
	msg_gone() { ! bpftool prog show id "$OUR_MSG" >/dev/null 2>&1; }
	poll_until 10 msg_gone || fail "5: the sk_msg program $OUR_MSG is still loaded"
	log "ok: 5: the sk_msg program $OUR_MSG is freed (after ${POLL_WAITED} s)"
	expect_exit 1 "5: detach --cgroup-id again" "$HDRSTRIP" detach --cgroup-id "$CG_ID"
	CG=
fi
log "PASS"
