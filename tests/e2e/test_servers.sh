#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The test harness itself, without hdrstrip: namespaces, the three origin
# servers (node, nginx -> backend, python), the raw client and curl. Every
# server must report exactly the field lines it was sent, over IPv4 and
# IPv6, whole or in segments, with checksum offload on and off.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nginx curl
topo_setup
start_servers

LIST=$WORK/list
write_main_list "$LIST"
HDRS=(-H "User-Agent: hs-e2e/1" -H "Accept: */*" -H "X-Internal-Auth: secret-token"
	-H "X-Keep-Me: plain value" -H "x-EDGE-secret-Colo: fra1")

for offload in on off; do
	set_offload "$offload"
	for fam in 4 6; do
		addr=$(saddr "$fam")
		for sp in "${SERVERS[@]}"; do
			read -r name port <<<"$sp"
			what="$name IPv$fam offload $offload"
			step "$what: raw request" to_file "$WORK/resp" client "$addr" "$port" \
				"${HDRS[@]}" --save "$WORK/req"
			step "$what: every line arrives as sent" check_report --unmasked \
				--sent "$WORK/req" --report "$WORK/resp"
			step "$what: request in 3 segments" to_file "$WORK/resp" client "$addr" "$port" \
				"${HDRS[@]}" --split 20,70 --pause 0.05 --save "$WORK/req"
			step "$what: segmented lines arrive as sent" check_report --unmasked \
				--sent "$WORK/req" --report "$WORK/resp"
			step "$what: request with TCP_MAXSEG 88" to_file "$WORK/resp" client "$addr" "$port" \
				"${HDRS[@]}" -H @pad:5:300 --maxseg 88 --save "$WORK/req"
			step "$what: small-MSS lines arrive as sent" check_report --unmasked \
				--sent "$WORK/req" --report "$WORK/resp"
			out=$(in_c curl -sS --max-time 3 -H "X-Internal-Auth: from-curl" \
				"http://$(url_host "$fam"):$port/curl") || fail "$what: curl failed"
			assert_match "$out" '^header: X-Internal-Auth: from-curl$' "$what: curl request reported"
		done
	done
done

# The logs hold the same reports: the drop tests rely on them.
for name in node nginx python; do
	n=$(grep -c '^server: ' "$WORK/$name.log")
	assert_eq "$n" 16 "$name.log holds one report per request"
done
log "PASS"
