#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Hostile input, first part (bypass.py holds the cases): hand-made requests
# over real TCP through the veth pair to node, nginx and python, first
# without hdrstrip (the 'open' phase: what each origin does with them on
# its own), then with hdrstrip at each hook (--flows 64, so that a flood of
# connections evicts a flow's state in the middle of a request; what the
# flood leaves, the test deletes). A case
# passes when no application gets the internal name under any spelling it
# accepts, a valid request still gets 200 from every origin, a request
# hdrstrip must drop (ambiguous framing) reaches no application, and a
# benign request after every case is answered. Origins may refuse hostile
# requests; the table printed at the end says what each one did.
# Origin mode is the hook 'receive' (the origins run in a cgroup; it has
# no flow table to flood), kept by the agent as it is deployed: a request
# it must drop ends its connection with a reset, so that no application
# reads even the part before the drop as a request of its own.
#   BYPASS_HOOKS="xdp tc-egress" picks the hooks (default: all four).
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nginx
require_cli attach detach stats
topo_setup
HOOKS=${BYPASS_HOOKS:-xdp tc-ingress tc-egress receive}
# Origin mode filters what a cgroup's processes accept: the origins start in it.
if grep -qw receive <<<"$HOOKS"; then
	origin_hook_setup
fi
start_servers

LIST=$WORK/list
write_main_list "$LIST"
LOGS=("$WORK/node.log" "$WORK/nginx.log" "$WORK/python.log")
ORIGINS=(--origin "node:$PORT_NODE:$WORK/node.log" --origin "nginx:$PORT_NGINX:$WORK/nginx.log"
	--origin "python:$PORT_PYTHON:$WORK/python.log")
bypass() { in_c "$PYTHON" "$E2E_DIR/bypass.py" "$@"; }
cval() { printf '%s\n' "$1" | counter "$2"; }

step "open: every case to every origin, without hdrstrip" \
	bypass run "$S4" --list "$LIST" "${ORIGINS[@]}" --phase open --out "$WORK/open.json"
# From here on the logs hold only what reached the origins behind hdrstrip
# (the servers open their log for every report).
for f in "${LOGS[@]}"; do : >"$f"; done

results=("$WORK/open.json")
for hook in $HOOKS; do
	case $hook in
	tc-egress) NS=$CNS DEV=$CDEV ;;
	xdp | tc-ingress | receive) NS=$SNS DEV=$SDEV ;;
	*) fail "BYPASS_HOOKS: no hook '$hook'" ;;
	esac
	note_attached "$NS" "$DEV"
	flows=0
	if [ "$hook" = receive ]; then
		origin_agent_start "$LIST" "$HS_PORTS"
	else
		step "$hook: attach (--flows 64)" hs_hook_attach "$hook" --headers "$LIST" \
			--ports "$HS_PORTS" --flows 64
		flows=$(flows_map "$NS" "$DEV") || fail "$hook: no flow table found for the program on $DEV"
	fi
	before=$(hs_hook_stats "$hook")
	step "$hook: every case to every origin" bypass run "$S4" --list "$LIST" "${ORIGINS[@]}" \
		--phase "$hook" --out "$WORK/$hook.json" --flows-map "$flows"
	results+=("$WORK/$hook.json")
	after=$(hs_hook_stats "$hook")
	d=()
	for k in http_requests headers_masked split_names packets_dropped framing_conflict desync \
		untracked retransmits out_of_order scan_incomplete; do
		d+=("$k +$(($(cval "$after" "$k") - $(cval "$before" "$k")))")
	done
	log "$hook: counters: ${d[*]}"
	# evict-line and evict-name at three origins: the flood and the test
	# evicted their flows, so the rest of the request met no state and did
	# not start a request. (evict-value's rest looks like a request line.)
	if [ "$hook" != receive ]; then
		assert_ge "$(($(cval "$after" untracked) - $(cval "$before" untracked)))" 6 \
			"$hook: segments met without flow state (evicted)"
	fi
	origin_agent_stop
	step "$hook: detach" hs_hook_cmd "$hook" detach
	assert_hook_clean "$hook"
done

rc=0
bypass judge --list "$LIST" "${results[@]}" || rc=$?
[ "$rc" -eq 0 ] || fail "hostile requests: see the table and the list above"
log "ok: every case: no internal name reached an application, valid requests answered"
step "no report in any origin's log holds an internal name" bypass scan --list "$LIST" "${LOGS[@]}"
log "PASS"
