#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Issue 34, class 2: at tc-ingress, a non-linear skb whose IPv6 extension
# headers run past its linear part. A userspace TCP client (rawtcp.py)
# writes its frames to a TAP device in the server namespace, opened with
# IFF_NAPI_FRAGS and written with writev: the kernel keeps the first iovec
# (Ethernet and the IPv6 header, 54 bytes) as the skb's linear part and
# every other one as a page fragment. Every segment carries 1,544 bytes of
# destination options before TCP, so the TCP header starts at byte 1,598:
# past the linear part, and past the 512 bytes the datapath used to pull
# before it looked again (it passed such a segment as 'truncated').
#
# GRO is off on the device: with it on, GRO reads each header it passes
# with pskb_may_pull() (ipv6_gro_receive(), ipv6_gso_pull_exthdrs()) and
# the skb reaches tc with every header linear; measured here, the head
# was then the whole frame. A test-only tc program (bpf/linear_probe.bpf.c)
# measures the head of every such frame, on the same path without
# hdrstrip, before the request that counts is sent.
#
# Judged by what node and Python's http.server received: the internal
# field as sent without hdrstrip (the stack delivers such frames), masked
# with hdrstrip at tc-ingress; and hdrstrip's counters.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node
require_cli attach detach stats
[ -e /dev/net/tun ] || skip "no /dev/net/tun"
topo_setup off
start_node
start_python

TAP=hstap$$
TAP6=fd00:19b::2 FAKE6=fd00:19b::1 FAKE_MAC=02:00:00:00:19:0b
DSTOPTS=1544 # 2 + six options of 257 bytes: the most is eight
FIRST=54     # the first iovec: Ethernet and the IPv6 header
PIECE=1024   # then fragments of this size
TCP_AT=$((14 + 40 + DSTOPTS))
LIST=$WORK/list
write_main_list "$LIST"

step "TAP device $TAP in $SNS" ip -n "$SNS" tuntap add dev "$TAP" mode tap
step "$TAP: MTU 9000" ip -n "$SNS" link set "$TAP" mtu 9000
step "$TAP: GRO off (GRO would pull every header into the linear part)" \
	in_s ethtool -K "$TAP" gro off
step "$TAP: address $TAP6" ip -n "$SNS" -6 addr add "$TAP6/64" dev "$TAP" nodad
step "$TAP up" ip -n "$SNS" link set "$TAP" up
step "static neighbour $FAKE6 on $TAP" \
	ip -n "$SNS" -6 neigh add "$FAKE6" lladdr "$FAKE_MAC" dev "$TAP" nud permanent
TAP_MAC=$(ip -n "$SNS" -o link show dev "$TAP" | sed -E 's/.*link\/ether ([0-9a-f:]+).*/\1/')
[[ $TAP_MAC =~ ^[0-9a-f:]{17}$ ]] || fail "no MAC address for $TAP: '$TAP_MAC'"

# --- the probe: how much of each skb is linear at the tap's tc-ingress -------
test_bpf_load linear_probe.bpf.o probe
step "clsact qdisc on $TAP" nsenter --net="/run/netns/$SNS" tc qdisc add dev "$TAP" clsact
# After hdrstrip's filter (priority 1): without hdrstrip it sees what
# hdrstrip would see.
step "linear_probe at $TAP ingress" nsenter --net="/run/netns/$SNS" \
	tc filter add dev "$TAP" ingress prio 7 handle 7 bpf da pinned "$E2E_PINS/probe"
# probe_reset: count the frames of at least TCP_AT bytes from now on.
probe_reset() {
	# struct probe_stats: min_len, min_linear, max_len, reserved, frames, nonlinear
	# shellcheck disable=SC2046
	bpftool map update pinned "$E2E_PINS/stats" key 0 0 0 0 value $(le32 "$TCP_AT") \
		0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 ||
		fail "cannot reset linear_probe (bpftool map update)"
}
probe_stat() { # FIELD
	bpftool -j map lookup pinned "$E2E_PINS/stats" key 0 0 0 0 |
		"$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["formatted"]["value"][sys.argv[1]])' "$1" ||
		fail "cannot read linear_probe's stats map"
}

# send_request NAME PORT TOKEN OUT: one connection to the origin through the
# TAP device, every frame of it in fragments with the long header; the
# request has an internal field carrying TOKEN and two fields to keep.
send_request() {
	local name=$1 port=$2 tok=$3 out=$4
	printf 'GET /frags/%s HTTP/1.1\r\nHost: [%s]:%s\r\nX-Keep: before\r\nX-Internal-Auth: %s\r\nX-Keep: after\r\n\r\n' \
		"$name" "$TAP6" "$port" "$tok" >"$out.req"
	step "$name: a request in non-linear frames, $DSTOPTS bytes of destination options" \
		nsenter --net="/run/netns/$SNS" "$PYTHON" "$E2E_DIR/rawtcp.py" "$TAP" "$FAKE6" "$TAP6" \
		"$port" --src-mac "$FAKE_MAC" --dst-mac "$TAP_MAC" --tap --frags "$FIRST,$PIECE" \
		--dstopts "$DSTOPTS" --seg-file "$out.req" --timeout 3 --out "$out.resp"
}

ORIGINS=("node $PORT_NODE" "python $PORT_PYTHON")

# --- without hdrstrip: the frames are non-linear, and the stack delivers ----
probe_reset
for o in "${ORIGINS[@]}"; do
	read -r name port <<<"$o"
	send_request "$name" "$port" "frags-control-$RANDOM" "$WORK/control-$name"
	step "$name: without hdrstrip, the field arrives as sent (the stack takes such frames)" \
		check_report --sent "$WORK/control-$name.req" --report "$WORK/control-$name.resp" --unmasked
done
frames=$(probe_stat frames)
nonlinear=$(probe_stat nonlinear)
min_linear=$(probe_stat min_linear)
log "probe: $frames frames of at least $TCP_AT bytes, $nonlinear of them non-linear, the shortest head $min_linear bytes, the longest frame $(probe_stat max_len) bytes"
# Each connection: SYN, the handshake's ACK, the request, ACKs, RST.
assert_ge "$frames" 8 "frames with the long header at tc-ingress"
assert_eq "$nonlinear" "$frames" "every one of them non-linear at tc-ingress"
assert_eq "$min_linear" "$FIRST" "the shortest linear head (the first iovec)"
if [ "$min_linear" -ge 512 ] || [ "$min_linear" -ge "$TCP_AT" ]; then
	fail "the linear head ($min_linear) reaches the TCP header ($TCP_AT) or the old 512-byte pull"
fi
log "ok: the TCP header (byte $TCP_AT) lies outside the linear head ($min_linear bytes) and past 512"

# --- hdrstrip at tc-ingress: the field arrives masked ------------------------
note_attached "$SNS" "$TAP"
step "attach hdrstrip at $TAP tc-ingress" hs_s attach "$TAP" --headers "$LIST" --hook tc-ingress \
	--ports "$PORT_NODE,$PORT_PYTHON"
before=$(hs_stats "$SNS" "$TAP")
probe_reset
for o in "${ORIGINS[@]}"; do
	read -r name port <<<"$o"
	send_request "$name" "$port" "frags-secret-$RANDOM" "$WORK/masked-$name"
	step "$name: with hdrstrip, the field arrives masked, every other byte as sent" \
		check_report --sent "$WORK/masked-$name.req" --report "$WORK/masked-$name.resp" --list "$LIST"
done
after=$(hs_stats "$SNS" "$TAP")
log "probe behind hdrstrip: $(probe_stat nonlinear) of $(probe_stat frames) frames still non-linear"
moved() { echo $(($(counter "$1" <<<"$after") - $(counter "$1" <<<"$before"))); }
assert_ge "$(moved inspected)" 2 "inspected (one request a connection)"
assert_ge "$(moved headers_masked)" 2 "headers_masked"
assert_eq "$(moved truncated)" 0 "truncated (the headers were pulled, not passed)"
assert_eq "$(moved encap_unknown)" 0 "encap_unknown (no pull failed)"
assert_eq "$(moved packets_dropped)" 0 "packets_dropped"
step "detach" hs_s detach "$TAP"
[ ! -e "$BPFFS_ROOT/$TAP" ] || fail "left behind: $BPFFS_ROOT/$TAP"
out=$(nsenter --net="/run/netns/$SNS" tc filter show dev "$TAP" ingress)
assert_no_match "$out" 'hdrstrip' "no hdrstrip filter on $TAP (the probe's stays)"

for name in node python; do
	if grep -n 'frags-secret' "$WORK/$name.log"; then
		fail "$name received an internal value with hdrstrip attached (above)"
	fi
done
log "ok: no origin log holds a value sent with hdrstrip attached"
log "PASS"
