#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Reject (issue 36): a request with a field a reject rule lists, or whose
# framing --on-error reject refuses, is answered at once with a TCP reset:
# the client's connect-and-send sees "connection reset" (client.py exit 4)
# where a drop leaves it waiting until its timeout (exit 3); the origin
# never gets it; packets_rejected counts it. At xdp (XDP_TX), tc-ingress
# (redirected out of the device) and tc-egress (redirected into it, to the
# local client), IPv4 and IPv6, with node, nginx and python behind. Each
# reset makes its event ('hdrstrip events --json'): action reject, reason
# rule (with the rule's name) or on-error (with none).
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nginx
require_cli attach detach stats events
topo_setup off
start_servers

LIST=$WORK/list
cat >"$LIST" <<'EOF'
x-internal-auth
x-reject-me reject
x-drop-me drop
EOF
ALL_PORTS=$PORT_NODE,$PORT_NGINX,$PORT_PYTHON
cval() { printf '%s\n' "$1" | counter "$2"; }
delta() { echo $(($(cval "$2" "$3") - $(cval "$1" "$3"))); }
ev_check() { "$PYTHON" "$E2E_DIR/events_check.py" "$@"; }
# events_of NS DEV: what 'events DEV --json' prints (and consumes).
events_of() {
	hs_in "$1" events "$2" --json >"$WORK/events.json" ||
		fail "hdrstrip events $2 --json failed: $(cat "$WORK/events.json")"
	cat "$WORK/events.json"
}

for hook in xdp tc-ingress tc-egress; do
	hook_side "$hook"
	# XDP in skb mode: a veth's native XDP_TX waits in its peer's queue
	# until that peer's NAPI runs next (seconds, on an idle pair), where a
	# NIC sends it at once; tests/pkt checks the native program's XDP_TX
	# and every byte of its reset.
	mode=()
	[ "$hook" = xdp ] && mode=(--xdp-mode skb)
	step "$hook: attach with --on-error reject" hs_in "$NS" attach "$DEV" --headers "$LIST" \
		--hook "$hook" --ports "$ALL_PORTS" --on-error reject "${mode[@]}"
	# The events of a reset: one per refused request, saying why.
	step "$hook: no event before any request" ev_check --count 0 <<<"$(events_of "$NS" "$DEV")"
	expect_exit 4 "$hook events: a reject rule resets the client" \
		client "$(saddr 4)" "$PORT_PYTHON" -H "X-Reject-Me: rejected-secret" --timeout 5
	step "$hook: one reject event, reason rule, the rule's name" \
		ev_check --count 1 --want "hook=$hook" --want "dev=$DEV" --want family=4 \
		--want "dst=$(saddr 4)" --want "dport=$PORT_PYTHON" --want name=x-reject-me \
		--want received=X-Reject-Me --want action=reject --want reason=rule \
		--want rule=2 --want generation=1 <<<"$(events_of "$NS" "$DEV")"
	expect_exit 4 "$hook events: --on-error reject resets the client" \
		client "$(saddr 4)" "$PORT_PYTHON" -H "Content-Length: 1" -H "Content-Length: 2" \
		-H "X-Marker: rejected-framing" --timeout 5
	step "$hook: one reject event, reason on-error, no name" \
		ev_check --count 1 --want "hook=$hook" --want "dev=$DEV" --want family=4 \
		--want "dst=$(saddr 4)" --want "dport=$PORT_PYTHON" --want name=null \
		--want action=reject --want reason=on-error --want rule=0 --want generation=0 \
		<<<"$(events_of "$NS" "$DEV")"
	for fam in 4 6; do
		for sp in "${SERVERS[@]}"; do
			read -r name port <<<"$sp"
			what="$hook IPv$fam $name"
			before=$(hs_stats "$NS" "$DEV")
			expect_exit 4 "$what: a reject rule resets the client at once" \
				client "$(saddr "$fam")" "$port" -H "X-Reject-Me: rejected-secret" \
				--timeout 5
			assert_match "$EXPECT_OUT" "reset" "$what: the client read a reset"
			expect_exit 4 "$what: --on-error reject resets the client for two lengths" \
				client "$(saddr "$fam")" "$port" -H "Content-Length: 1" \
				-H "Content-Length: 2" -H "X-Marker: rejected-framing" --timeout 5
			expect_exit 3 "$what: a drop rule leaves the client waiting" \
				client "$(saddr "$fam")" "$port" -H "X-Drop-Me: dropped-secret" --timeout 1 --abort
			step "$what: a clean request still answered" \
				client "$(saddr "$fam")" "$port" -H "X-Internal-Auth: masked-secret" \
				--timeout 3 --check "$LIST"
			after=$(hs_stats "$NS" "$DEV")
			assert_eq "$(delta "$before" "$after" packets_rejected)" 2 \
				"$what: packets_rejected (the rule's and the policy's)"
			assert_ge "$(delta "$before" "$after" packets_dropped)" 3 \
				"$what: packets_dropped (every reject is a drop too)"
		done
	done
	step "$hook: detach" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"
done

for name in node nginx python; do
	if grep -nE 'rejected-secret|rejected-framing|dropped-secret' "$WORK/$name.log"; then
		fail "$name received a request hdrstrip refused (above)"
	fi
done
log "ok: no origin got a refused request"
log "PASS"
