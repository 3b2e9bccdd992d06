#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: timing (a segment is taken as dropped when no ACK comes within 0.3 s)
# e2e-parts: NORMALIZE_HOOKS=xdp receive | NORMALIZE_HOOKS=tc-ingress tc-egress
# Normalisation over real TCP (issue 14): a userspace TCP client
# (rawtcp.py, from an address the client namespace does not own, so that
# its kernel never resets the connection) crafts every segment: urgent
# pointers, overlapping retransmissions, bad checksums, RST and SYN the
# receiver ignores, data in the SYN, lost flow state, a 65,495-byte
# segment, IPv4 and IPv6 fragments (the hooks drop them by --on-error; in
# origin mode the stack puts them together and the stream is scanned); and
# request and field lines that some parser reads otherwise;
# HTTP/2's preface (against node's and nginx's h2c servers), h2c by
# Upgrade (against an origin that upgrades as RFC 7540 allows), a GET whose
# body is a request (Python's SimpleHTTPRequestHandler reads it as one), a
# length after a line Python's header parser stops at. The BIG TCP cases
# (packets over 64 KiB, MTU 65535) use the client namespace's own TCP
# instead.
# The cases are in normalize.py; each runs against node, node with
# --insecure-http-parser, nginx and Python's http.server, with hdrstrip at
# xdp, tc-ingress (server side) and tc-egress (client side), and checks
# that no application got an internal name, that benign bytes arrived
# exactly (masked as expected), and hdrstrip's counters. A table at the end
# shows every case at every hook. Origin mode is the hook 'receive': the
# origins run in a cgroup, and the server's own TCP stack has put the
# stream together before the program reads it (normalize.py judges it by
# what the applications read: no internal name, benign bytes exact where
# the case does not depend on a segment the hooks drop).
#   NORMALIZE_HOOKS="xdp tc-egress" picks the hooks (default: all four);
#   NORMALIZE_CASES="urg-name rtx-old" picks the cases.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nginx
require_cli attach detach stats update
topo_setup off

FAKE4=10.199.0.77 FAKE6=fd00:199::77 FAKE_MAC=02:00:00:00:00:77
# The server answers the client's made-up address through a static
# neighbour entry; the client namespace's kernel drops those frames (not
# its MAC address) and the packet socket reads them.
step "static neighbour $FAKE4 on $SDEV" \
	ip -n "$SNS" neigh add "$FAKE4" lladdr "$FAKE_MAC" dev "$SDEV" nud permanent
step "static neighbour $FAKE6 on $SDEV" \
	ip -n "$SNS" -6 neigh add "$FAKE6" lladdr "$FAKE_MAC" dev "$SDEV" nud permanent
# Fast Open without a cookie or a socket option (set before the servers
# listen); challenge ACKs not rate-limited, so each case sees its own.
# Large windows (topo_big_windows): room for one 64 KiB segment, and for
# BIG TCP's larger ones.
step "server: TCP Fast Open for every listener, no cookie" \
	in_s sysctl -qw net.ipv4.tcp_fastopen=0x602
step "server: challenge ACKs without rate limit" in_s sysctl -qw net.ipv4.tcp_invalid_ratelimit=0
topo_big_windows
HOOKS=${NORMALIZE_HOOKS:-xdp tc-ingress tc-egress receive}
# Origin mode filters what a cgroup's processes accept: the origins start in it.
if grep -qw receive <<<"$HOOKS"; then
	origin_hook_setup
fi
NGINX_H2C=1 start_servers
start_node_insecure
start_node_h2c
start_node_h2c_upgrade
start_python_simple
PORTS=$HS_PORTS,$PORT_NODE_INSECURE,$PORT_NODE_H2C,$PORT_NGINX_H2C,$PORT_PYTHON_SIMPLE,$PORT_NODE_H2C_UPGRADE

LIST=$WORK/list
write_main_list "$LIST"
echo "x-real-ip" >>"$LIST"
SHORT=$WORK/list-short
cp "$LIST" "$SHORT"
# ... and h2c upgrades let through (case h2c-upgrade-allowed).
printf 'x\nx-\n@h2c-upgrade allow\n' >>"$SHORT"
ORIGINS=(--origin "node:$PORT_NODE:$WORK/node.log" --origin "node-insecure:$PORT_NODE_INSECURE:$WORK/node-insecure.log"
	--origin "nginx:$PORT_NGINX:$WORK/nginx.log" --origin "python:$PORT_PYTHON:$WORK/python.log"
	--origin "node-h2c:$PORT_NODE_H2C:$WORK/node-h2c.log" --origin "nginx-h2c:$PORT_NGINX_H2C:$WORK/nginx.log"
	--origin "python-simple:$PORT_PYTHON_SIMPLE:$WORK/python-simple.log"
	--origin "node-h2c-upgrade:$PORT_NODE_H2C_UPGRADE:$WORK/node-h2c-upgrade.log")
SMAC=$(ip -n "$SNS" -o link show dev "$SDEV" | sed -E 's/.*link\/ether ([0-9a-f:]+).*/\1/')
[[ $SMAC =~ ^[0-9a-f:]{17}$ ]] || fail "no MAC address for $SDEV: '$SMAC'"
RESULTS=$WORK/results.json
CASE_ARGS=()
for c in ${NORMALIZE_CASES:-}; do CASE_ARGS+=(--case "$c"); done

normalize() { "$PYTHON" "$E2E_DIR/normalize.py" "$@"; }
wanted() { [ -z "${NORMALIZE_CASES:-}" ] || grep -qw -- "$1" <<<"$NORMALIZE_CASES"; }
# run_group HOOK GROUP LIST [FLOWS_MAP]: the group's cases at every origin.
run_group() {
	local st=(--stats-ns "$NS" --stats-dev "$DEV")
	[ "$1" = receive ] && st=(--stats-cgroup "$E2E_CG")
	step "$1: cases of group '$2'" in_c "$PYTHON" "$E2E_DIR/normalize.py" run --dev "$CDEV" \
		--dst-mac "$SMAC" --hook "$1" --group "$2" --list "$3" "${ORIGINS[@]}" \
		--out "$RESULTS" "${st[@]}" --hdrstrip "$HDRSTRIP" \
		--flows-map "${4:-0}" "${CASE_ARGS[@]}"
}
# group_with HOOK GROUP CASE OPTION...: attach with OPTION..., run GROUP,
# detach; an attach that fails is recorded against CASE.
group_with() {
	local hook=$1 group=$2 cid=$3 rc=0 out
	shift 3
	out=$(hs_hook_attach "$hook" --headers "$LIST" --ports "$PORTS" "$@" 2>&1) ||
		rc=$?
	if [ "$rc" -eq 0 ]; then
		run_group "$hook" "$group" "$LIST"
		detach_clean "$hook"
		return
	fi
	log "$hook: attach $* failed (exit $rc): $(head -n 1 <<<"$out")"
	normalize record --out "$RESULTS" --hook "$hook" --case "$cid" \
		--problem "attach $*: exit $rc: $(head -n 1 <<<"$out")"
	assert_hook_clean "$hook"
}
detach_clean() {
	step "$1: detach" hs_hook_cmd "$1" detach
	assert_hook_clean "$1"
}
# big_frames on|off: MTU 65535, segmentation offloads and BIG TCP sizes
# (185,000) on the pair, large windows; or back to MTU 1500, offloads off.
big_frames() {
	local mtu=1500 size=65536
	if [ "$1" = on ]; then
		mtu=65535 size=185000
		set_offload on
		in_s ethtool -K "$SDEV" gro on >/dev/null || fail "ethtool -K $SDEV gro on"
	else
		set_offload off
	fi
	step "MTU $mtu on $CDEV" ip -n "$CNS" link set dev "$CDEV" mtu "$mtu"
	step "MTU $mtu on $SDEV" ip -n "$SNS" link set dev "$SDEV" mtu "$mtu"
	step "GSO size $size on $CDEV" ip -n "$CNS" link set dev "$CDEV" gso_max_size "$size"
	step "GRO size $size on $SDEV" ip -n "$SNS" link set dev "$SDEV" gro_max_size "$size"
	# iproute2 6.1 has no gso_ipv4_max_size: rtnetlink directly. A kernel
	# without IPv4 BIG TCP (before 6.3) refuses: then case bigtcp fails
	# with the note that no frame over 64 KiB left the client.
	if ! in_c "$PYTHON" "$E2E_DIR/normalize.py" link-size "$CDEV" gso_ipv4_max_size "$size" ||
		! in_s "$PYTHON" "$E2E_DIR/normalize.py" link-size "$SDEV" gro_ipv4_max_size "$size"; then
		log "no IPv4 BIG TCP sizes on this kernel (gso/gro_ipv4_max_size)"
	fi
}

for hook in $HOOKS; do
	case $hook in
	tc-egress) NS=$CNS DEV=$CDEV ;;
	xdp | tc-ingress | receive) NS=$SNS DEV=$SDEV ;;
	*) fail "NORMALIZE_HOOKS: no hook '$hook'" ;;
	esac
	note_attached "$NS" "$DEV"

	# Classes 1-6, 8-10, 12 in one attachment; class 11 after an update.
	step "$hook: attach" hs_hook_attach "$hook" --headers "$LIST" --ports "$PORTS"
	flows=0
	if [ "$hook" != receive ]; then
		flows=$(flows_map "$NS" "$DEV") || fail "$hook: no flow table found for the program on $DEV"
	fi
	run_group "$hook" main "$LIST" "$flows"
	step "$hook: update to a list with 'x' and 'x-'" hs_hook_cmd "$hook" update --headers "$SHORT"
	run_group "$hook" short "$SHORT"
	detach_clean "$hook"

	# Class 1 with --urgent drop (an interface hook's policy: the
	# receiving stack keeps the urgent byte in the stream origin mode
	# reads); class 12 under --on-error pass.
	[ "$hook" != receive ] && wanted urg-drop && group_with "$hook" urgent-drop urg-drop --urgent drop
	wanted pass-ahead-head || wanted pass-ahead-split || wanted pass-chunk-lf-end ||
		wanted pass-ahead-other-framing || wanted h2c-pass || wanted pass-odd-length &&
		group_with "$hook" on-error-pass pass-ahead-head --on-error pass

	# Class 7 at MTU 65535, and BIG TCP (issue 34's class 9: benign
	# requests whose bytes past 64 KiB are body).
	if wanted oversize || wanted xdp-mtu-attach || wanted bigtcp || wanted bigtcp6 ||
		wanted bigtcp-body || wanted bigtcp6-body || wanted oversize-get-body ||
		wanted oversize-post-body; then
		big_frames on
		rc=0
		out=$(hs_hook_attach "$hook" --headers "$LIST" --ports "$PORTS" 2>&1) || rc=$?
		if [ "$hook" = xdp ]; then
			p=()
			[ "$rc" -eq 0 ] || p+=(--problem "attach at MTU 65535: exit $rc: $(tr '\n' ' ' <<<"$out" | head -c 200)")
			[ "$rc" -ne 0 ] || grep -qi 'skb' <<<"$out" ||
				p+=(--problem "attach at MTU 65535: no note of a fallback to skb mode")
			normalize record --out "$RESULTS" --hook "$hook" --case xdp-mtu-attach "${p[@]}" \
				--note "$(tr '\n' ' ' <<<"$out" | head -c 200)"
			if [ "$rc" -ne 0 ]; then
				# Still try the oversized frames, in skb mode.
				log "$hook: attach at MTU 65535 failed (exit $rc): $(head -n 1 <<<"$out"); again with --xdp-mode skb"
				rc=0
				out=$(hs_in "$NS" attach "$DEV" --headers "$LIST" --hook "$hook" \
					--ports "$PORTS" --xdp-mode skb 2>&1) || rc=$?
			fi
		fi
		if [ "$rc" -eq 0 ]; then
			run_group "$hook" big "$LIST"
			detach_clean "$hook"
		else
			log "$hook: attach at MTU 65535 failed (exit $rc): $(head -n 1 <<<"$out")"
			normalize record --out "$RESULTS" --hook "$hook" --case oversize \
				--problem "attach at MTU 65535: exit $rc"
			assert_hook_clean "$hook"
		fi
		big_frames off
	fi
done

rc=0
normalize judge "$RESULTS" || rc=$?
if [ -z "${NORMALIZE_CASES:-}" ]; then
	for f in node node-insecure nginx python node-h2c python-simple node-h2c-upgrade; do
		[ -s "$WORK/$f.log" ] || fail "$f's log is empty: no case reached it"
	done
fi
[ "$rc" -eq 0 ] || fail "normalisation cases failed: see the table and the list above"
log "PASS"
