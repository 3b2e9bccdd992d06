#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: timing (conntrack flushed inside a client's 2.5 s pause)
# What the stack takes a request out of after the hooks have seen it
# (issue 34), each with real clients and origins (node, nginx, python),
# IPv4 and IPv6, at xdp and tc-ingress:
#  - VXLAN: an overlay on the inspected interface, on the IANA port and on
#    Linux's default one, at xdp, tc-ingress and (the client's underlay)
#    tc-egress; a VXLAN on a port not in the tunnel table goes to the
#    on-error policy, is warned about by attach and status, and is read
#    once 'update' names it; so does one made after the attach (the hooks
#    ask the stack which socket a datagram to a port not in the table
#    goes to), at xdp and tc-ingress; GENEVE the same, where the kernel
#    can make a GENEVE device (else that part is skipped, said in the log);
#  - a device without an Ethernet header: two TUN devices joined by a
#    userspace relay (tunrelay.py), hdrstrip on the server's (the client's
#    at tc-egress);
#  - NAT: nftables DNAT and REDIRECT from ports not inspected to inspected
#    ones (conntrack's lookup kfuncs), at xdp and tc-ingress (at tc-egress
#    the port is rewritten before the hook), and status's warning with
#    --nat off; a connection conntrack forgets mid-request (flushed) is
#    still followed, by the hooks' flow.
# Every case checks what the origins received (check_report: the internal
# field masked, every other byte as sent) and hdrstrip's counters.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nginx nft
require_cli attach detach stats status update
topo_setup off
start_servers

LIST=$WORK/list
write_main_list "$LIST"
ALL_PORTS=$PORT_NODE,$PORT_NGINX,$PORT_PYTHON
# client ADDR: one request with an internal field to every origin, checked
# as each origin received it (client.py --check).
send_checked() { # WHAT ADDR
	step "$1: masked at node, nginx and python" \
		client "$2" "$ALL_PORTS" -H "X-Internal-Auth: wire-secret-$RANDOM" \
		-H "X-Keep: yes" --timeout 3 --check "$LIST"
}
cval() { printf '%s\n' "$1" | counter "$2"; }
grew() { # BEFORE AFTER COUNTER MIN WHAT
	local d=$(($(cval "$2" "$3") - $(cval "$1" "$3")))
	assert_ge "$d" "$4" "$5: $3 grew"
}

# overlay_addrs DEV NET4 NET6 WHAT: the client .1 and the server .2 of the
# overlay device DEV in each namespace (IPv4 NET4.0/24, IPv6 NET6::/64), up.
overlay_addrs() {
	local dev=$1 net4=$2 net6=$3 what=$4
	step "$what addresses" ip -n "$CNS" addr add "$net4.1/24" dev "$dev"
	step "$what address (server)" ip -n "$SNS" addr add "$net4.2/24" dev "$dev"
	step "$what IPv6" ip -n "$CNS" -6 addr add "$net6::1/64" dev "$dev" nodad
	step "$what IPv6 (server)" ip -n "$SNS" -6 addr add "$net6::2/64" dev "$dev" nodad
	step "$what up" ip -n "$CNS" link set "$dev" up
	step "$what up (server)" ip -n "$SNS" link set "$dev" up
}

# overlay_case NS DEV HOOK WHAT ADDR4 ADDR6: attached at HOOK on DEV (the
# underlay), a request with an internal field to every origin over the
# overlay, to ADDR4 and to ADDR6: each masked, counted as tunneled, nothing
# dropped; detached.
overlay_case() {
	local ns=$1 dev=$2 hook=$3 what=$4 a4=$5 a6=$6 before after
	step "$what: attach to the underlay" hs_in "$ns" attach "$dev" --headers "$LIST" \
		--hook "$hook" --ports "$ALL_PORTS"
	before=$(hs_stats "$ns" "$dev")
	send_checked "$what, IPv4" "$a4"
	send_checked "$what, IPv6" "$a6"
	after=$(hs_stats "$ns" "$dev")
	grew "$before" "$after" tunneled 6 "$what"
	grew "$before" "$after" headers_masked 6 "$what"
	assert_eq "$(($(cval "$after" packets_dropped) - $(cval "$before" packets_dropped)))" 0 \
		"$what: nothing dropped"
	step "$what: detach" hs_in "$ns" detach "$dev"
	assert_clean "$ns" "$dev"
}

# --- VXLAN: an overlay whose packets cross the inspected veth as UDP ---------
vxlan_up() { # PORT
	local port=$1
	step "vxlan on UDP $port in $CNS" ip -n "$CNS" link add vxw type vxlan id 42 \
		dstport "$port" local "$C4" remote "$S4" dev "$CDEV"
	step "vxlan on UDP $port in $SNS" ip -n "$SNS" link add vxw type vxlan id 42 \
		dstport "$port" local "$S4" remote "$C4" dev "$SDEV"
	overlay_addrs vxw 10.88.0 fd88 "overlay"
}
vxlan_down() {
	ip -n "$CNS" link del vxw 2>/dev/null
	ip -n "$SNS" link del vxw 2>/dev/null
	return 0
}

note_attached "$SNS" "$SDEV"
note_attached "$CNS" "$CDEV"
for port in 4789 8472; do
	vxlan_up "$port"
	for hook in xdp tc-ingress tc-egress; do
		# tc-egress: on the client's underlay, what its vxlan sends (the
		# inner checksum left to the device: CHECKSUM_PARTIAL).
		hook_side "$hook"
		overlay_case "$NS" "$DEV" "$hook" "VXLAN on $port, $hook" 10.88.0.2 fd88::2
	done
	vxlan_down
done

NS=$SNS DEV=$SDEV
# A VXLAN on a port the table does not name: its socket is found (a BPF
# iterator over the namespace's UDP sockets), so the port goes to the
# on-error policy (drop) rather than passing as plain UDP; said at attach
# and by status; read once update names it.
vxlan_up 4790
expect_exit 0 "VXLAN on 4790: attach" hs_s attach "$SDEV" --headers "$LIST" --ports "$ALL_PORTS"
assert_match "$EXPECT_OUT" "vxw \(vxlan\) takes packets out of UDP port 4790, .*they go to the --on-error policy" \
	"attach warns about the vxlan on a port not in the table"
out=$(hs_s status "$SDEV")
assert_match "$out" "tunnels +vxlan 4789,8472; geneve 6081; udp 4790" \
	"status: the found port is in the table"
assert_match "$out" "WARNING .*vxw \(vxlan\).*4790" "status warns about it too"
out=$(hs_s status "$SDEV" --json)
assert_match "$out" '"warnings":\["vxw \(vxlan\)' "status --json lists the warning"
before=$(hs_stats "$SNS" "$SDEV")
expect_exit 3 "VXLAN on 4790 before update: nothing gets through (on-error drop)" \
	client 10.88.0.2 "$PORT_NODE" -H "X-Internal-Auth: wire-secret-$RANDOM" --timeout 1
after=$(hs_stats "$SNS" "$SDEV")
grew "$before" "$after" encap_unknown 1 "VXLAN on 4790 before update"
step "VXLAN on 4790: update --vxlan-ports names it" hs_s update "$SDEV" --headers "$LIST" \
	--vxlan-ports 4789,8472,4790
out=$(hs_s status "$SDEV")
assert_match "$out" "tunnels +vxlan 4789,4790,8472; geneve 6081" "status shows the tunnel ports"
assert_no_match "$out" "WARNING" "no warning once the port is read"
before=$(hs_stats "$SNS" "$SDEV")
send_checked "VXLAN on 4790 after update, IPv4" 10.88.0.2
after=$(hs_stats "$SNS" "$SDEV")
grew "$before" "$after" tunneled 3 "VXLAN on 4790"
step "VXLAN on 4790: detach" hs_s detach "$SDEV"
assert_clean "$SNS" "$SDEV"
vxlan_down

# A UDP tunnel made after the attach, on a port the table does not name: no
# iterator saw its socket, but the hooks ask the stack which socket a
# datagram to a port not in the table goes to, and this one takes packets
# out of UDP: the on-error policy (drop) stops it, counted in
# encap_unknown. Read once update names the port.
late_tunnel() { # KIND DEV PORT ADDR4 ADDR6 UPDATE-OPTION...
	local kind=$1 dev=$2 port=$3 a4=$4 a6=$5 what hook
	shift 5
	for hook in xdp tc-ingress; do
		what="$kind on $port made after the attach, $hook"
		step "$what: attach" hs_s attach "$SDEV" --headers "$LIST" --hook "$hook" \
			--ports "$ALL_PORTS"
		"${kind}_up" "$port"
		before=$(hs_stats "$SNS" "$SDEV")
		expect_exit 3 "$what, IPv4 inside: nothing gets through (on-error drop)" \
			client "$a4" "$PORT_NODE" -H "X-Internal-Auth: wire-secret-$RANDOM" --timeout 1
		expect_exit 3 "$what, IPv6 inside: nothing gets through (on-error drop)" \
			client "$a6" "$PORT_NGINX" -H "X-Internal-Auth: wire-secret-$RANDOM" --timeout 1
		after=$(hs_stats "$SNS" "$SDEV")
		grew "$before" "$after" encap_unknown 2 "$what"
		grew "$before" "$after" packets_dropped 2 "$what"
		assert_eq "$(($(cval "$after" tunneled) - $(cval "$before" tunneled)))" 0 \
			"$what: nothing read inside"
		step "$what: update names the port" hs_s update "$SDEV" --headers "$LIST" "$@"
		# Neighbour discovery over the overlay failed while it was
		# dropped: its failure must not end the next connection.
		step "$what: the overlay's neighbours forgotten" ip -n "$CNS" neigh flush dev "$dev"
		step "$what: the overlay's neighbours forgotten (server)" \
			ip -n "$SNS" neigh flush dev "$dev"
		before=$(hs_stats "$SNS" "$SDEV")
		send_checked "$what, after update, IPv4" "$a4"
		send_checked "$what, after update, IPv6" "$a6"
		after=$(hs_stats "$SNS" "$SDEV")
		grew "$before" "$after" tunneled 6 "$what, after update"
		step "$what: detach" hs_s detach "$SDEV"
		assert_clean "$SNS" "$SDEV"
		"${kind}_down"
	done
}
late_tunnel vxlan vxw 4790 10.88.0.2 fd88::2 --vxlan-ports 4789,8472,4790

# GENEVE: the same, where this kernel can make a GENEVE device (a module
# some kernels leave out): first on the IANA port the table reads, then
# made after the attach on one it does not name.
geneve_up() { # PORT
	local port=$1
	step "geneve on UDP $port in $CNS" ip -n "$CNS" link add gnw type geneve id 43 \
		remote "$S4" dstport "$port"
	step "geneve on UDP $port in $SNS" ip -n "$SNS" link add gnw type geneve id 43 \
		remote "$C4" dstport "$port"
	overlay_addrs gnw 10.87.0 fd87 "GENEVE overlay"
}
geneve_down() {
	ip -n "$CNS" link del gnw 2>/dev/null
	ip -n "$SNS" link del gnw 2>/dev/null
	return 0
}
if err=$(ip -n "$CNS" link add gnprobe type geneve id 1 remote "$S4" 2>&1); then
	ip -n "$CNS" link del gnprobe
	geneve_up 6081
	for hook in xdp tc-ingress; do
		overlay_case "$SNS" "$SDEV" "$hook" "GENEVE on 6081, $hook" 10.87.0.2 fd87::2
	done
	geneve_down
	late_tunnel geneve gnw 6082 10.87.0.2 fd87::2 --geneve-ports 6081,6082
else
	log "SKIP (this part only): GENEVE end to end: this kernel cannot make a GENEVE device" \
		"(ip link add ... type geneve: ${err//$'\n'/ })"
fi

# --- A device without an Ethernet header: TUN, joined by tunrelay.py ----------
step "TUN devices" true
step "TUN device in $CNS" ip -n "$CNS" tuntap add dev tunw mode tun
step "TUN device in $SNS" ip -n "$SNS" tuntap add dev tunw mode tun
"$PYTHON" "$E2E_DIR/tunrelay.py" "$CNS" tunw "$SNS" tunw "$WORK/relay.ready" \
	>"$WORK/relay.log" 2>&1 &
E2E_PIDS+=($!)
poll_until 5 test -e "$WORK/relay.ready" || fail "tunrelay.py did not start: $(cat "$WORK/relay.log")"
step "TUN point-to-point addresses" ip -n "$CNS" addr add 10.89.0.1 peer 10.89.0.2 dev tunw
step "TUN address (server)" ip -n "$SNS" addr add 10.89.0.2 peer 10.89.0.1 dev tunw
step "TUN up" ip -n "$CNS" link set tunw up
step "TUN up (server)" ip -n "$SNS" link set tunw up
step "TUN IPv6" ip -n "$CNS" -6 addr add fd89::1/128 dev tunw nodad
step "TUN IPv6 (server)" ip -n "$SNS" -6 addr add fd89::2/128 dev tunw nodad
step "TUN IPv6 route" ip -n "$CNS" -6 route add fd89::2/128 dev tunw
step "TUN IPv6 route (server)" ip -n "$SNS" -6 route add fd89::1/128 dev tunw
note_attached "$SNS" tunw
note_attached "$CNS" tunw
for hook in xdp tc-ingress tc-egress; do
	what="TUN, $hook"
	NS=$SNS
	[ "$hook" = tc-egress ] && NS=$CNS
	step "$what: attach" hs_in "$NS" attach tunw --headers "$LIST" --hook "$hook" \
		--ports "$ALL_PORTS"
	out=$(hs_in "$NS" status tunw)
	assert_match "$out" "link +none" "$what: status shows a device without a link header"
	before=$(hs_stats "$NS" tunw)
	send_checked "$what, IPv4" 10.89.0.2
	send_checked "$what, IPv6" fd89::2
	after=$(hs_stats "$NS" tunw)
	grew "$before" "$after" headers_masked 6 "$what"
	grew "$before" "$after" inspected 6 "$what"
	step "$what: detach" hs_in "$NS" detach tunw
	assert_clean "$NS" tunw
done

# A device whose link type hdrstrip does not read: refused, saying where to
# attach instead, and nothing left on it.
step "a TUN device posing as InfiniBand" in_s "$PYTHON" "$E2E_DIR/tunrelay.py" linktype \
	"$SNS" tunib 32
expect_exit 2 "attach refuses an InfiniBand device" hs_s attach tunib --headers "$LIST"
assert_match "$EXPECT_OUT" "cannot attach to 'tunib': its link type is infiniband \(32\).*--receive" \
	"the refusal names the link type and where to attach instead"
assert_clean "$SNS" tunib

# --- NAT: DNAT and REDIRECT from ports not inspected to inspected ones --------
cat >"$WORK/nat.nft" <<EOF
table inet hse2e_nat {
	chain pre {
		type nat hook prerouting priority dstnat;
		tcp dport 18080 dnat ip to $S4:$PORT_NGINX
		tcp dport 18080 dnat ip6 to [$S6]:$PORT_NGINX
		tcp dport 18000 redirect to :$PORT_NODE
		tcp dport 18081 redirect to :$PORT_PYTHON
	}
}
EOF
step "nftables DNAT and REDIRECT in $SNS" in_s nft -f "$WORK/nat.nft"
for hook in xdp tc-ingress; do
	what="NAT, $hook"
	step "$what: attach (ports $ALL_PORTS only)" hs_s attach "$SDEV" --headers "$LIST" \
		--hook "$hook" --ports "$ALL_PORTS"
	before=$(hs_stats "$SNS" "$SDEV")
	for fam in 4 6; do
		step "$what: IPv$fam, DNAT 18080 -> nginx, REDIRECT 18000 -> node, 18081 -> python" \
			client "$(saddr "$fam")" 18080,18000,18081 -H "X-Internal-Auth: nat-secret-$RANDOM" \
			-H "X-Keep: yes" --timeout 3 --check "$LIST"
	done
	after=$(hs_stats "$SNS" "$SDEV")
	grew "$before" "$after" nat_inspected 6 "$what"
	grew "$before" "$after" headers_masked 6 "$what"
	# Framed from their first byte (conntrack saw their SYNs and no data
	# before it), not checked line by line as connections without state.
	grew "$before" "$after" flows_new 6 "$what"
	assert_eq "$(($(cval "$after" untracked) - $(cval "$before" untracked)))" 0 \
		"$what: no NAT'd connection went untracked"
	# conntrack forgets a connection in the middle of a request (flushed,
	# as a timeout or 'conntrack -F' would): the stack picks the rest up
	# and NATs it again to the origin; the hooks, finding no conntrack
	# entry, follow it by the flow they keep for its tuple.
	if command -v conntrack >/dev/null 2>&1; then
		before=$(hs_stats "$SNS" "$SDEV")
		(sleep 1 && in_s conntrack -F >/dev/null 2>&1) &
		flush=$!
		step "$what: conntrack flushed between a request's first bytes and its internal field (REDIRECT 18000 -> node): masked" \
			client "$S4" 18000 -H "X-Keep: yes" -H "X-Internal-Auth: nat-secret-$RANDOM" \
			--split 20 --pause 2.5 --timeout 6 --check "$LIST"
		wait "$flush" || fail "$what: conntrack -F in $SNS failed"
		after=$(hs_stats "$SNS" "$SDEV")
		grew "$before" "$after" nat_inspected 2 "$what, conntrack flushed"
		grew "$before" "$after" headers_masked 1 "$what, conntrack flushed"
	else
		log "SKIP (this part only): conntrack is not installed (scripts/install-deps.sh installs it)"
	fi
	step "$what: detach" hs_s detach "$SDEV"
	assert_clean "$SNS" "$SDEV"
done

# NAT inside a tunnel: the vxlan device of this namespace hands the inner
# packet to the same conntrack, which the hooks ask for the inner tuple.
vxlan_up 4789
for hook in xdp tc-ingress; do
	what="NAT inside VXLAN, $hook"
	step "$what: attach" hs_s attach "$SDEV" --headers "$LIST" --hook "$hook" --ports "$ALL_PORTS"
	before=$(hs_stats "$SNS" "$SDEV")
	step "$what: DNAT 18080 -> nginx, REDIRECT 18000 -> node over the overlay" \
		client 10.88.0.2 18080,18000 -H "X-Internal-Auth: nat-secret-$RANDOM" -H "X-Keep: yes" \
		--timeout 3 --check "$LIST"
	after=$(hs_stats "$SNS" "$SDEV")
	grew "$before" "$after" nat_inspected 2 "$what"
	grew "$before" "$after" tunneled 2 "$what"
	grew "$before" "$after" headers_masked 2 "$what"
	step "$what: detach" hs_s detach "$SDEV"
	assert_clean "$SNS" "$SDEV"
done
vxlan_down

# --nat off: the hooks do not look, and status says which NAT'd
# connections conntrack holds that they pass (the ones just made).
step "NAT, --nat off: attach" hs_s attach "$SDEV" --headers "$LIST" --ports "$ALL_PORTS" --nat off
out=$(hs_s status "$SDEV")
assert_match "$out" "nat +off" "status shows --nat off"
assert_match "$out" "WARNING .*NAT'd from port 18080, not inspected, to inspected port $PORT_NGINX" \
	"status warns about the DNAT to nginx it cannot see"
assert_match "$out" "WARNING .*NAT'd from port 18000, not inspected, to inspected port $PORT_NODE" \
	"status warns about the REDIRECT to node"
step "NAT, --nat off: detach" hs_s detach "$SDEV"
assert_clean "$SNS" "$SDEV"

for name in node nginx python; do
	if grep -nE 'wire-secret|nat-secret' "$WORK/$name.log"; then
		fail "$name received an internal value (above)"
	fi
done
log "ok: no server log holds an internal value"
log "PASS"
