#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A ~60 KiB request in one GSO packet: an internal line after 50 KiB of
# benign lines is masked at tc-egress (the client's GSO packet, before it
# is cut into segments) and at tc-ingress (the GSO packet crossing the veth
# whole, or the segments merged again by GRO), at node, nginx and python,
# over IPv4 and IPv6, with checksum offload on (defaults) and off.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nginx
require_cli attach detach stats
topo_setup
topo_big_windows
start_servers

LIST=$WORK/list
write_main_list "$LIST"
BIG=(-H @pad:50:1024 -H "X-Internal-Auth: big-secret" -H "X-Keep: after the pads"
	-H @pad:8:1024)
# Two requests with bodies first, so the server's window lets the big one
# go in one packet (see topo_big_windows).
SEND=(--warmup 2 --sndbuf 1048576 --timeout 3)

cval() { printf '%s\n' "$1" | counter "$2"; }

for spec in "tc-egress on" "tc-egress off" "tc-ingress on" "tc-ingress off"; do
	read -r hook offload <<<"$spec"
	if [ "$offload" = on ]; then
		set_offload on
		in_s ethtool -K "$SDEV" gro off >/dev/null
	else
		# Checksums in software on both ends, but segmentation stays
		# (GSO at the client, GRO at the server): a request cut into
		# MSS-sized segments is test_streams.sh's business.
		in_c ethtool -K "$CDEV" tx off rx off gso on >/dev/null || fail "ethtool $CDEV"
		in_s ethtool -K "$SDEV" tx off rx off gro on >/dev/null || fail "ethtool $SDEV"
		log "ok: checksum offload off on both ends (GSO on at $CDEV, GRO on at $SDEV)"
	fi
	if [ "$hook" = tc-egress ]; then NS=$CNS DEV=$CDEV; else NS=$SNS DEV=$SDEV; fi
	note_attached "$NS" "$DEV"
	step "$hook offload $offload: attach" hs_in "$NS" attach "$DEV" --headers "$LIST" \
		--hook "$hook" --ports "$HS_PORTS"
	before=$(hs_stats "$NS" "$DEV")
	for fam in 4 6; do
		for sp in "${SERVERS[@]}"; do
			read -r name port <<<"$sp"
			what="$hook offload $offload IPv$fam $name"
			step "$what: 60 KiB request answered" to_file "$WORK/resp" \
				client "$(saddr "$fam")" "$port" "${BIG[@]}" "${SEND[@]}" --save "$WORK/req"
			size=$(stat -c %s "$WORK/req")
			[ "$size" -ge 59000 ] || fail "the big request is only $size bytes"
			step "$what: the line after 50 KiB masked, ${size} bytes otherwise identical" \
				check_report --sent "$WORK/req" --report "$WORK/resp" --list "$LIST"
		done
	done
	after=$(hs_stats "$NS" "$DEV")
	assert_eq "$(($(cval "$after" headers_masked) - $(cval "$before" headers_masked)))" 6 \
		"$hook offload $offload: headers_masked grew by one per big request"
	assert_eq "$(($(cval "$after" scan_incomplete) - $(cval "$before" scan_incomplete)))" 0 \
		"$hook offload $offload: scan_incomplete did not grow"
	assert_eq "$(($(cval "$after" packets_dropped) - $(cval "$before" packets_dropped)))" 0 \
		"$hook offload $offload: packets_dropped did not grow"
	step "$hook offload $offload: detach" hs_in "$NS" detach "$DEV"
	assert_clean "$NS" "$DEV"
done
for name in node nginx python; do
	if grep -n 'big-secret' "$WORK/$name.log"; then
		fail "$name received the internal value (above)"
	fi
done
log "ok: no server log holds the internal value"
log "PASS"
