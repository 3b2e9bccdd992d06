#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: cpu (about 30 loads through the verifier)
# Leaks: 14 attach / update / detach cycles on one veth end, over every mix
# of hooks (xdp, tc-ingress, tc-egress, two or three at once; detach all at
# once or hook by hook; --flows, --on-error and --untracked varied), leave
# nothing behind:
#  - every BPF program, map and link the cycles made is gone (by id: other
#    tests may load and free BPF objects at the same time, so the global
#    counts bpftool prog/map/link show before and after are printed, and
#    the check is on the objects this test's attachments used; polled
#    with a deadline, since the kernel frees them some time after the
#    detach);
#  - no pins in /sys/fs/bpf/hdrstrip/DEV, no clsact qdisc, no program on the
#    device (ip link, tc, bpftool net), checked along the way and at the end.
# Cycle i runs mix i % 6 and detaches all at once when i is odd, hook by
# hook when it is even; --flows 64 every 5th cycle, --on-error pass every
# 3rd, --untracked drop every 7th. 14 cycles run each mix, each way to
# detach and each option at least twice; the check is by object id, so one
# leaking cycle is enough to fail. CYCLES=N runs fewer or more cycles.
. "$(dirname "$0")/lib.sh"

e2e_init
require_cli attach update detach status
topo_setup

CYCLES=${CYCLES:-14}
NS=$SNS DEV=$SDEV
note_attached "$NS" "$DEV"
write_main_list "$WORK/a.list"
printf 'x-other-secret\nx-b-*\nx-kill drop\n' >"$WORK/b.list"
: >"$WORK/ours"

# bpftool's objects of KIND (prog, map, link) as "id name" lines.
bpf_objs() {
	bpftool -j "$1" show 2>/dev/null |
		"$PYTHON" -c 'import json, sys
for o in json.load(sys.stdin) or []:
    print(o["id"], o.get("name", o.get("type", "")))'
}

count_all() { # -> "P progs, M maps, L links"
	printf '%s progs, %s maps, %s links' "$(bpf_objs prog | wc -l)" "$(bpf_objs map | wc -l)" \
		"$(bpf_objs link | wc -l)"
}

# Append to $WORK/ours the programs on DEV (bpftool net, not the CLI under
# test), their maps and any link to them, as "prog ID" / "map ID" / "link ID".
record_ours() {
	nsenter --net="/run/netns/$NS" bpftool -j net show dev "$DEV" >"$WORK/net.json" ||
		fail "bpftool net show dev $DEV"
	bpftool -j prog show >"$WORK/progs.json" || fail "bpftool prog show"
	bpftool -j link show >"$WORK/links.json" || fail "bpftool link show"
	"$PYTHON" - "$WORK/net.json" "$WORK/progs.json" "$WORK/links.json" >>"$WORK/ours" <<'EOF' ||
import json, sys
net = json.load(open(sys.argv[1]))
progs = {p["id"]: p for p in json.load(open(sys.argv[2])) or []}
links = json.load(open(sys.argv[3])) or []
ids = set()
for entry in net:
    for hook in ("xdp", "tc"):
        for a in entry.get(hook, []):
            ids.add(a["id"])
if not ids:
    sys.exit("no program on the device")
for i in sorted(ids):
    print("prog", i)
    for m in progs.get(i, {}).get("map_ids", []):
        print("map", m)
for l in links:
    if l.get("prog_id") in ids:
        print("link", l["id"])
EOF
		fail "cannot read what is attached to $DEV"
}

# Nothing of hdrstrip on the device; quiet, for the checks along the way.
quick_clean() { # WHAT
	local out
	out=$(ip -n "$NS" link show dev "$DEV")
	grep -qE 'xdp|prog/' <<<"$out" && fail "$1: an XDP program is left on $DEV"
	out=$(ip netns exec "$NS" tc qdisc show dev "$DEV")
	grep -q clsact <<<"$out" && fail "$1: a clsact qdisc is left on $DEV"
	[ ! -e "$BPFFS_ROOT/$DEV" ] || fail "$1: pins left in $BPFFS_ROOT/$DEV: $(ls "$BPFFS_ROOT/$DEV")"
	return 0
}

HOOK_MIXES=("xdp" "tc-ingress" "tc-egress" "xdp tc-egress" "tc-ingress tc-egress"
	"xdp tc-ingress tc-egress")
before=$(count_all)
log "bpftool before: $before"

for ((i = 1; i <= CYCLES; i++)); do
	read -r -a hooks <<<"${HOOK_MIXES[i % ${#HOOK_MIXES[@]}]}"
	opts=()
	((i % 5 == 0)) && opts+=(--flows 64)
	((i % 3 == 0)) && opts+=(--on-error pass)
	((i % 7 == 0)) && opts+=(--untracked drop)
	for h in "${hooks[@]}"; do
		out=$(hs_in "$NS" attach "$DEV" --headers "$WORK/a.list" --hook "$h" \
			"${opts[@]}" 2>&1) || { printf '%s\n' "$out" | sed 's/^/    | /' >&2; \
			fail "cycle $i: attach $h (${opts[*]})"; }
	done
	record_ours
	out=$(hs_in "$NS" update "$DEV" --headers "$WORK/b.list" 2>&1) ||
		{ printf '%s\n' "$out" | sed 's/^/    | /' >&2; fail "cycle $i: update"; }
	if ((i % 2)); then
		out=$(hs_in "$NS" detach "$DEV" 2>&1) ||
			{ printf '%s\n' "$out" | sed 's/^/    | /' >&2; fail "cycle $i: detach"; }
	else
		for h in "${hooks[@]}"; do
			out=$(hs_in "$NS" detach "$DEV" --hook "$h" 2>&1) ||
				{ printf '%s\n' "$out" | sed 's/^/    | /' >&2; fail "cycle $i: detach --hook $h"; }
		done
	fi
	quick_clean "cycle $i (${hooks[*]})"
	((i % 50 == 0)) && log "ok: $i cycles"
done
log "ok: $CYCLES attach/update/detach cycles over ${#HOOK_MIXES[@]} hook mixes"

assert_clean "$NS" "$DEV"
sort -u "$WORK/ours" >"$WORK/ours.u"
# ours_left KIND: ids of the KIND objects the cycles used still loaded.
# The kernel frees a program some time after its last reference goes (an
# RCU grace period, then a work queue), and its maps after it: polled.
ours_left() {
	bpf_objs "$1" | awk '{ print $1 }' | sort -u >"$WORK/now.$1" || return 1
	awk -v k="$1" '$1 == k { print $2 }' "$WORK/ours.u" | sort -u |
		comm -12 - "$WORK/now.$1" | tr '\n' ' '
}
none_left() {
	local left
	left=$(ours_left "$1") || return 1
	[ -z "$left" ]
}
for kind in prog map link; do
	n=$(grep -c "^$kind " "$WORK/ours.u" || true)
	poll_until 10 none_left "$kind" ||
		fail "${kind}s the cycles used are still loaded 10 s after the last detach: ids $(ours_left "$kind")"
	log "ok: none of the $n ${kind}s the cycles used is left (after ${POLL_WAITED}s)"
done
[ "$(grep -c '^prog ' "$WORK/ours.u")" -ge "$CYCLES" ] ||
	fail "fewer programs recorded than cycles: the id check saw too little"
log "bpftool after: $(count_all) (before: $before; other tests may run meanwhile)"
