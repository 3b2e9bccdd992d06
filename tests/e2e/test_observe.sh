#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Observe mode ('attach/update --observe') and observe rules, end to end, at
# xdp, tc-ingress and tc-egress, over IPv4 and IPv6, whole and cut inside an
# internal name, with checksum offload off:
#  - the same requests first under enforce mode: their internal lines
#    masked, headers_masked counted;
#  - then 'update --observe' (status says so): every byte reaches the node
#    origin as sent, headers_observed counts exactly what enforce mode
#    masked, headers_masked and packets_modified stay still; a drop rule's
#    request is answered, counted as observed (packets_observed) and not
#    dropped; the events say observe, the drop rule's with reason rule;
#  - 'update --enforce' masks again;
#  - a list with an observe rule beside mask rules (enforce mode): its line
#    arrives as sent, the others masked, headers_observed counts it;
#  - proxy mode: --observe sends every line (headers_observed counts them,
#    nothing removed), a drop rule's request too (packets_observed, an
#    event with reason rule); --enforce removes them again.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node
require_cli attach update detach stats status events

topo_setup off
start_node
LIST=$WORK/list
write_main_list "$LIST"

HDRS=(-H "User-Agent: hs-e2e/1" -H "X-INTERNAL-AUTH: token-1" -H "Accept: */*"
	-H "x-Internal-Trace: abc-123" -H "X-Keep-Alpha: v1" -H "x_internal_TENANT: t9"
	-H "X-EDGE-Secret-Colo: fra1" -H "X-Internal-Authx: near-miss")
N_MASKED=4

cval() { printf '%s\n' "$1" | counter "$2"; }
delta() { # BEFORE AFTER KEY
	echo $(($(cval "$2" "$3") - $(cval "$1" "$3")))
}

# send FAM CUT CHECK...: one request (cut at CUT unless it is 0), the
# origin's report checked with check_report CHECK...
send() {
	local fam=$1 cut=$2
	shift 2
	local split=()
	[ "$cut" -gt 0 ] && split=(--split "$cut" --pause 0.05)
	to_file "$WORK/resp" client "$(saddr "$fam")" "$PORT_NODE" "${HDRS[@]}" "${split[@]}" \
		--save "$WORK/req" || return 1
	check_report --sent "$WORK/req" --report "$WORK/resp" "$@"
}

# round WHAT FAM CUT CHECK...: send, and print the counters' deltas.
round() {
	local what=$1 fam=$2 cut=$3 b a
	shift 3
	b=$(hs_stats "$NS" "$DEV")
	step "$what" send "$fam" "$cut" "$@" >&2
	a=$(hs_stats "$NS" "$DEV")
	printf 'masked %s observed %s modified %s dropped %s\n' "$(delta "$b" "$a" headers_masked)" \
		"$(delta "$b" "$a" headers_observed)" "$(delta "$b" "$a" packets_modified)" \
		"$(delta "$b" "$a" packets_dropped)"
}

for hook in xdp tc-ingress tc-egress; do
	hook_side "$hook"
	step "$hook: attach (enforce)" hs_in "$NS" attach "$DEV" --hook "$hook" --headers "$LIST" \
		--ports "$PORT_NODE"
	cut=$(client "$S4" "$PORT_NODE" "${HDRS[@]}" --print-offset "x-Internal-Trace") ||
		fail "client --print-offset"
	cut=$((cut + 6))
	for fam in 4 6; do
		for c in 0 "$cut"; do
			what="$hook IPv$fam cut $c"
			enf=$(round "$what enforce: internal lines masked" "$fam" "$c" --list "$LIST")
			# A cut name is rewritten ahead: two packets modified then.
			assert_match "$enf" "^masked $N_MASKED observed 0 modified [12] dropped 0\$" \
				"$what enforce: counters"
			step "$what: update --observe" hs_in "$NS" update "$DEV" --headers "$LIST" \
				--observe
			assert_match "$(hs_in "$NS" status "$DEV")" "MODE +OBSERVE" \
				"$what: status says observe mode"
			hs_in "$NS" events "$DEV" >/dev/null
			obs=$(round "$what observe: every byte as sent" "$fam" "$c" --unmasked)
			assert_eq "$obs" "masked 0 observed $N_MASKED modified 0 dropped 0" \
				"$what observe: the lines enforce mode masked are counted, none changed"
			step "$what observe: an event a line, action observe" \
				"$PYTHON" "$E2E_DIR/events_check.py" --count "$N_MASKED" --want action=observe \
				--want reason=null <<<"$(hs_in "$NS" events "$DEV" --json)"
			step "$what: update --enforce" hs_in "$NS" update "$DEV" --headers "$LIST" \
				--enforce
		done
	done

	# A drop rule's request under observe mode: answered, as sent.
	step "$hook: update --observe" hs_in "$NS" update "$DEV" --headers "$LIST" --observe
	b=$(hs_stats "$NS" "$DEV")
	step "$hook observe: a drop rule's request is answered" to_file "$WORK/resp" \
		client "$S4" "$PORT_NODE" -H "X-Kill-Switch: on" --save "$WORK/req"
	step "$hook observe: ... as sent" check_report --sent "$WORK/req" --report "$WORK/resp" \
		--unmasked
	a=$(hs_stats "$NS" "$DEV")
	assert_eq "$(delta "$b" "$a" packets_dropped)" 0 "$hook observe: nothing dropped"
	assert_eq "$(delta "$b" "$a" headers_observed)" 1 "$hook observe: the drop rule's line observed"
	assert_eq "$(delta "$b" "$a" packets_observed)" 1 \
		"$hook observe: the packet enforce mode drops counted as observed"
	step "$hook observe: its event, with the reason enforce mode would drop it for" \
		"$PYTHON" "$E2E_DIR/events_check.py" --count 1 --want name=x-kill-switch \
		--want action=observe --want reason=rule <<<"$(hs_in "$NS" events "$DEV" --json)"
	step "$hook: update --enforce" hs_in "$NS" update "$DEV" --headers "$LIST" --enforce
	assert_no_match "$(hs_in "$NS" status "$DEV")" "MODE +OBSERVE" "$hook: status says enforce again"
	step "$hook: detach" hs_in "$NS" detach "$DEV"
done

# --- an observe rule beside mask rules ----------------------------------------
OLIST=$WORK/olist
sed 's/^x-internal-auth$/x-internal-auth observe/' "$LIST" >"$OLIST"
grep -q '^x-internal-auth observe$' "$OLIST" || fail "the observe list was not written"
NS=$SNS DEV=$SDEV
step "xdp: attach with an observe rule" hs_in "$NS" attach "$DEV" --headers "$OLIST" \
	--ports "$PORT_NODE"
# check_report's list: the rules that mask.
grep -v ' observe$' "$OLIST" >"$WORK/masking"
for c in 0 "$cut"; do
	out=$(round "observe rule, cut $c: its line as sent, the others masked" 4 "$c" \
		--list "$WORK/masking")
	assert_match "$out" "^masked $((N_MASKED - 1)) observed 1 modified [12] dropped 0\$" \
		"observe rule, cut $c: counters"
done
step "detach" hs_in "$NS" detach "$DEV"

# --- proxy mode ---------------------------------------------------------------
cg_make observe || {
	log "no cgroup2 hierarchy: proxy mode's observe not checked"
	exit 0
}
CG=$E2E_CG
px_stats() {
	"$HDRSTRIP" stats --cgroup "$CG" --json | "$PYTHON" "$E2E_DIR/json_counters.py" stats \
		"cgroup-$CG_ID"
}
# px_send CHECK...: the request from a process in the cgroup.
px_send() {
	in_cg "$PYTHON" "$E2E_DIR/client.py" "$S4" "$PORT_NODE" "${HDRS[@]}" --save "$WORK/req" \
		>"$WORK/resp" || return 1
	check_report --sent "$WORK/req" --report "$WORK/resp" "$@"
}
step "proxy: attach --cgroup --observe" "$HDRSTRIP" attach --cgroup "$CG" --headers "$LIST" \
	--ports "$PORT_NODE" --observe
b=$(px_stats)
step "proxy observe: every line reaches the origin as sent" px_send --unmasked
a=$(px_stats)
assert_eq "$(delta "$b" "$a" headers_observed)" "$N_MASKED" "proxy observe: lines observed"
assert_eq "$(delta "$b" "$a" headers_removed)" 0 "proxy observe: no line removed"
assert_eq "$(delta "$b" "$a" removed_bytes)" 0 "proxy observe: no byte removed"
# A drop rule's request under observe mode: sent, counted as observed, an
# event with the reason.
"$HDRSTRIP" events --cgroup "$CG" >/dev/null
b=$(px_stats)
step "proxy observe: a drop rule's request is answered" to_file "$WORK/resp" \
	in_cg "$PYTHON" "$E2E_DIR/client.py" "$S4" "$PORT_NODE" -H "X-Kill-Switch: on" \
	--save "$WORK/req"
step "proxy observe: ... as sent" check_report --sent "$WORK/req" --report "$WORK/resp" --unmasked
a=$(px_stats)
assert_eq "$(delta "$b" "$a" packets_dropped)" 0 "proxy observe: nothing dropped"
assert_eq "$(delta "$b" "$a" packets_observed)" 1 \
	"proxy observe: the send enforce mode drops counted as observed"
step "proxy observe: its event, with the reason" "$PYTHON" "$E2E_DIR/events_check.py" \
	--count 1 --want name=x-kill-switch --want action=observe --want reason=rule \
	<<<"$("$HDRSTRIP" events --cgroup "$CG" --json)"
step "proxy: update --enforce" "$HDRSTRIP" update --cgroup "$CG" --headers "$LIST" --enforce
b=$(px_stats)
px_send --unmasked >/dev/null 2>&1 && fail "proxy enforce: the lines arrived as sent"
a=$(px_stats)
assert_eq "$(delta "$b" "$a" headers_removed)" "$N_MASKED" "proxy enforce: lines removed"
assert_no_match "$(cat "$WORK/resp")" "token-1|abc-123|fra1" "proxy enforce: no internal value arrives"
step "proxy: detach" "$HDRSTRIP" detach --cgroup "$CG"
log "PASS"
