#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Origin mode where the interface hooks see something else than the socket
# reads (issue 34's classes 3 to 5): the origins (node, Python's
# http.server) run in a cgroup in the server namespace with origin mode
# attached, and each request must reach them masked when it comes
#  - through a VXLAN overlay (the request inside UDP on the veth, as an
#    overlay CNI carries pod traffic);
#  - through an nftables DNAT (IPv4) and REDIRECT (IPv6) from a port that
#    is not inspected to one that is (docker -p, a NodePort);
#  - over a link without an Ethernet header: two TUN devices, one in each
#    namespace, joined by a userspace relay (tun_relay.py), as a WireGuard
#    or IPIP device delivers.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nft
require_cli attach detach stats
topo_setup
origin_hook_setup
start_node
start_python

LIST=$WORK/list
write_main_list "$LIST"
step "attach origin mode" "$HDRSTRIP" attach --cgroup "$E2E_CG" --receive --headers "$LIST" \
	--ports "$HS_PORTS"
HDRS=(-H "X-Internal-Auth: path-secret" -H "X-Keep: k" -H "x-edge-secret-pop: pop-secret")
cval() { printf '%s\n' "$1" | counter "$2"; }

# masked_at ADDR WHAT: node and python, reached at ADDR on their own ports
# (or at PORT_OF_$name when set), get the internal lines masked.
masked_at() {
	local addr=$1 what=$2 name port
	for name in node python; do
		port=$(eval echo "\${PORT_AT_$name:-}")
		[ -n "$port" ] || port=$([ $name = node ] && echo "$PORT_NODE" || echo "$PORT_PYTHON")
		step "$what, $name: request answered" to_file "$WORK/resp" \
			client "$addr" "$port" "${HDRS[@]}" --save "$WORK/req"
		step "$what, $name: internal lines masked, the rest as sent" \
			check_report --sent "$WORK/req" --report "$WORK/resp" --list "$LIST"
	done
}

# --- VXLAN --------------------------------------------------------------------
OV_C=10.200.0.1 OV_S=10.200.0.2
step "VXLAN device in $CNS" ip -n "$CNS" link add vxc$$ type vxlan id 42 local "$C4" \
	remote "$S4" dstport 4789 dev "$CDEV"
step "VXLAN device in $SNS" ip -n "$SNS" link add vxs$$ type vxlan id 42 local "$S4" \
	remote "$C4" dstport 4789 dev "$SDEV"
step "overlay address, client" ip -n "$CNS" addr add "$OV_C/24" dev vxc$$
step "overlay address, server" ip -n "$SNS" addr add "$OV_S/24" dev vxs$$
step "overlay up, client" ip -n "$CNS" link set vxc$$ up
step "overlay up, server" ip -n "$SNS" link set vxs$$ up
before=$(hs_hook_stats receive)
masked_at "$OV_S" "VXLAN overlay"
after=$(hs_hook_stats receive)
assert_eq "$(($(cval "$after" headers_masked) - $(cval "$before" headers_masked)))" 4 \
	"VXLAN: headers_masked grew by"

# --- NAT from a port that is not inspected ---------------------------------------------
NAT_NODE=18080 NAT_PY=18081
step "nftables: DNAT (IPv4) and REDIRECT (IPv6) to the origins' ports" in_s nft -f - <<EOF
table ip hse2e_nat {
	chain prerouting {
		type nat hook prerouting priority dstnat;
		tcp dport $NAT_NODE dnat to $S4:$PORT_NODE
		tcp dport $NAT_PY dnat to $S4:$PORT_PYTHON
	}
}
table ip6 hse2e_nat6 {
	chain prerouting {
		type nat hook prerouting priority dstnat;
		tcp dport $NAT_NODE redirect to :$PORT_NODE
		tcp dport $NAT_PY redirect to :$PORT_PYTHON
	}
}
EOF
PORT_AT_node=$NAT_NODE PORT_AT_python=$NAT_PY
before=$(hs_hook_stats receive)
masked_at "$S4" "DNAT from :$NAT_NODE and :$NAT_PY"
masked_at "$S6" "IPv6 REDIRECT from :$NAT_NODE and :$NAT_PY"
after=$(hs_hook_stats receive)
assert_eq "$(($(cval "$after" headers_masked) - $(cval "$before" headers_masked)))" 8 \
	"NAT: headers_masked grew by"
unset PORT_AT_node PORT_AT_python

# --- a device without an Ethernet header -------------------------------------------------
TUN_C=10.201.0.1 TUN_S=10.201.0.2
"$PYTHON" "$E2E_DIR/tun_relay.py" "$CNS" tunc$$ "$SNS" tuns$$ "$WORK/tun.ready" \
	>"$WORK/tun.log" 2>&1 &
E2E_PIDS+=($!)
poll_until 5 test -e "$WORK/tun.ready" || fail "the TUN relay did not start: $(cat "$WORK/tun.log")"
step "TUN address, client" ip -n "$CNS" addr add "$TUN_C" peer "$TUN_S" dev tunc$$
step "TUN address, server" ip -n "$SNS" addr add "$TUN_S" peer "$TUN_C" dev tuns$$
step "TUN up, client" ip -n "$CNS" link set tunc$$ up
step "TUN up, server" ip -n "$SNS" link set tuns$$ up
out=$(ip -n "$SNS" -d link show tuns$$)
assert_match "$out" 'link/none' "the server's TUN device has no link-layer header"
before=$(hs_hook_stats receive)
masked_at "$TUN_S" "TUN (no Ethernet header)"
after=$(hs_hook_stats receive)
assert_eq "$(($(cval "$after" headers_masked) - $(cval "$before" headers_masked)))" 4 \
	"TUN: headers_masked grew by"

step "detach" "$HDRSTRIP" detach --cgroup "$E2E_CG"
assert_hook_clean receive
for name in node python; do
	if grep -nE 'path-secret|pop-secret' "$WORK/$name.log"; then
		fail "$name read an internal value (above)"
	fi
done
log "ok: no origin read an internal value"
log "PASS"
