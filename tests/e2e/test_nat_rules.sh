#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# status reads the namespace's NAT rules (issue 34): an nftables rule, or
# an iptables-nft one, that takes TCP from a port not inspected on to an
# inspected one is warned about, with its table and chain, before any
# connection exists: under --nat lookup as followed through conntrack,
# under --nat off as passed without a look. Rules to ports not inspected,
# between inspected ports, and for UDP are not. No traffic: what is checked
# is status's reading of the rules, text and JSON.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools nft
require_cli attach detach status
topo_setup

LIST=$WORK/list
write_main_list "$LIST"
cat >"$WORK/nat.nft" <<EOF2
table ip hse2e_rules {
	chain pre {
		type nat hook prerouting priority dstnat;
		tcp dport 18080 redirect to :8080
		tcp dport 18081 dnat to 10.9.0.1:8080
		tcp dport 8080 redirect to :8080
		tcp dport 18090 redirect to :9090
		udp dport 18053 redirect to :8080
		tcp dport { 18082, 18083 } redirect to :8080
		tcp dport 18100-18200 redirect to :8080
	}
}
table ip6 hse2e_rules6 {
	chain pre {
		type nat hook prerouting priority dstnat;
		meta l4proto tcp redirect to :8080
	}
}
EOF2
step "nftables NAT rules in $SNS" in_s nft -f "$WORK/nat.nft"
if command -v iptables >/dev/null 2>&1 && iptables -V | grep -q nf_tables; then
	step "iptables-nft REDIRECT" in_s iptables -t nat -A PREROUTING -p tcp --dport 18085 \
		-j REDIRECT --to-ports 8080
	step "iptables-nft DNAT" in_s iptables -t nat -A PREROUTING -p tcp --dport 18086 \
		-j DNAT --to-destination 10.9.0.2:8080
	step "iptables-nft DNAT, UDP" in_s iptables -t nat -A PREROUTING -p udp --dport 18087 \
		-j DNAT --to-destination 10.9.0.2:8080
	step "ip6tables-nft REDIRECT" in_s ip6tables -t nat -A PREROUTING -p tcp --dport 18088 \
		-j REDIRECT --to-ports 8080
	IPT=1
else
	log "iptables (nf_tables) not installed: its compat rules are not checked"
	IPT=0
fi

warn() { # OUT FROM WHAT
	assert_match "$1" "WARNING +nftables rule in table $2, not inspected, on to inspected port 8080" "$3"
}
step "attach, ports 8080 (--nat lookup)" hs_s attach "$SDEV" --headers "$LIST" --ports 8080
out=$(hs_s status "$SDEV")
warn "$out" "ip hse2e_rules chain pre takes TCP to port 18080" "redirect 18080 -> 8080"
warn "$out" "ip hse2e_rules chain pre takes TCP to port 18081" "dnat 18081 -> 8080"
warn "$out" "ip hse2e_rules chain pre takes TCP to any port \(or a set of ports\)" \
	"a set of ports -> 8080"
warn "$out" "ip hse2e_rules chain pre takes TCP to ports 18100-18200" "a range -> 8080"
warn "$out" "ip6 hse2e_rules6 chain pre takes TCP to any port \\(or a set of ports\\)" "every port -> 8080 (ip6)"
assert_match "$out" "port 18080, not inspected, on to inspected port 8080: the ingress hooks follow its connections through conntrack \(--nat lookup\)" \
	"under --nat lookup: followed through conntrack"
assert_no_match "$out" "port 8080, not inspected" "a rule between inspected ports: no warning"
assert_no_match "$out" "9090" "a rule to a port not inspected: no warning"
assert_no_match "$out" "18053|18087" "UDP rules: no warning"
if [ "$IPT" = 1 ]; then
	warn "$out" "ip nat chain PREROUTING takes TCP to port 18085" "iptables REDIRECT"
	warn "$out" "ip nat chain PREROUTING takes TCP to port 18086" "iptables DNAT"
	warn "$out" "ip6 nat chain PREROUTING takes TCP to port 18088" "ip6tables REDIRECT"
fi
out=$(hs_s status "$SDEV" --json)
assert_match "$out" '"warnings":\[.*nftables rule in table ip hse2e_rules chain pre takes TCP to port 18080' \
	"status --json lists the rule's warning"
step "detach" hs_s detach "$SDEV"
assert_clean "$SNS" "$SDEV"

step "attach, --nat off" hs_s attach "$SDEV" --headers "$LIST" --ports 8080 --nat off
out=$(hs_s status "$SDEV")
assert_match "$out" "table ip hse2e_rules chain pre takes TCP to port 18080, not inspected, on to inspected port 8080: the ingress hooks pass its connections without a look \(--nat off\); use --nat lookup" \
	"under --nat off: the rule, passed without a look, and what to do"
step "detach (--nat off)" hs_s detach "$SDEV"
assert_clean "$SNS" "$SDEV"

step "attach, ports 8080,18080" hs_s attach "$SDEV" --headers "$LIST" --ports 8080,18080
out=$(hs_s status "$SDEV")
assert_no_match "$out" "port 18080, not inspected" "a rule from an inspected port: no warning"
step "detach (two ports)" hs_s detach "$SDEV"
assert_clean "$SNS" "$SDEV"
log "PASS"
