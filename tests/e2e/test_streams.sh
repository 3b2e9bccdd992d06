#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Streams: hdrstrip follows each connection across TCP segments. At xdp and
# tc-ingress (server side), tc-egress (client side) and receive (origin
# mode: the origins run in the test's cgroup), with checksum offload on
# (IPv6) and off (IPv4), to node, nginx and python:
#  - the kernel cuts header lines: TCP_MAXSEG 88 at the client, and the
#    server's route advertising MSS 64 (curl and pipelined requests too);
#  - the client cuts them where the test says, with pauses: the request
#    line's CR and LF apart, inside an internal name, the colon alone, inside
#    a prefix rule's name, inside an internal value;
#  - curl sends several requests on one kept-alive connection;
#  - pipelined requests in one send, a body between them;
#  - a segment lost once (tests/e2e/bpf/drop_once.bpf.c) in each origin's
#    connection, after hdrstrip saw it: early in the request, inside a long
#    internal value (by the retransmission, more segments than the flow
#    keeps checkpoints for have passed), and late, inside an internal name
#    (a checkpoint holds its state, unless the retransmission is cut
#    elsewhere than the original: a GSO packet sent again in MSS pieces);
#    for the server-side hooks, also before hdrstrip (a gap). Origin mode
#    reads what the stack put together: every loss is before it, so only
#    the first kind runs there (a loss on the wire, the early and the late
#    one), judged by what the origins read; the hooks' counters of
#    retransmissions and gaps do not apply;
#  - with offload off, a ~60 KiB request in MSS-sized segments.
#   STREAMS_HOOKS="xdp" picks the hooks (default: all four).
# Every request must succeed, every internal line arrive masked and every
# other line as sent (or masked, where a segment ended inside a name that
# could still have been internal), and no server log may hold an internal
# value. A failing request is listed and the test goes on, so that one run
# shows every hook, offload and case that fails.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nginx curl
require_cli attach detach stats
topo_setup
HOOKS=${STREAMS_HOOKS:-xdp tc-ingress tc-egress receive}
# Origin mode filters what a cgroup's processes accept: the origins start in it.
if grep -qw receive <<<"$HOOKS"; then
	origin_hook_setup
fi
start_servers
drop_once_load

LIST=$WORK/list
write_main_list "$LIST"
cval() { printf '%s\n' "$1" | counter "$2"; }

# Internal values all hold "secret"; the end of the test looks for it.
HDRS=(-H "User-Agent: hs-e2e/1" -H "X-Internal-Auth: st-secret-1" -H "Accept: */*"
	-H "x-Internal-Trace: st-secret-2" -H "X-Keep-1: k1"
	-H "x-edge-secret-pop: st-secret-3-with-a-longer-value" -H "Keep-2: k2")
# For the losses: an internal value long enough to be cut, early and late.
LONGV=$(printf 'st-secret-4-%080d' 0)
HDRS_LOSS=(-H "User-Agent: hs-e2e/1" -H "X-Internal-Auth: $LONGV" -H @pad:6:120
	-H "x-Internal-Trace: st-secret-5" -H "Keep-2: k2")

PORTS=$PORT_NODE,$PORT_NGINX,$PORT_PYTHON

# sent_ok WHAT CHECK-ARGS CLIENT-ARGS...: the request goes to every origin;
# each answers, and got what check_report expects (client.py --check). A
# failure is shown and counted, and the test goes on: one run shows every
# hook, offload and case that fails.
FAILURES=()
sent_ok() {
	local what=$1 check=$2 out rc=0
	shift 2
	# shellcheck disable=SC2086
	out=$(client "$ADDR" "$PORTS" --check "$LIST" $check "$@" 2>&1) || rc=$?
	if [ "$rc" -ne 0 ]; then
		printf '%s\n' "$out" | sed 's/^/    | /' >&2
		log "FAILED: $what (client exit $rc)"
		FAILURES+=("$what: $(printf '%s\n' "$out" | grep -E '^(!!|client:|check_report: .*(not|rejected))' |
			head -n 3 | tr -s ' ' | cut -c1-200 | paste -sd'|')")
		return 0
	fi
	log "ok: $what: answered by node, nginx and python; internal lines masked, others as sent"
}

# offsets ARRAY TEXT...: where each TEXT starts in the request built from
# the client arguments in the array named ARRAY.
offsets() {
	local -n hdrs=$1
	local args=() t
	shift
	for t in "$@"; do args+=(--print-offset "$t"); done
	client "$ADDR" 1 "${hdrs[@]}" "${args[@]}" || fail "client --print-offset"
}

# Routes of the server namespace, with or without an advertised MSS.
server_advmss() { # MSS|off
	local adv=()
	[ "$1" = off ] || adv=(advmss "$1")
	step "server route: advmss $1" ip -n "$SNS" route change 10.199.0.0/24 dev "$SDEV" \
		proto kernel scope link src "$S4" "${adv[@]}"
	step "server IPv6 route: advmss $1" ip -n "$SNS" -6 route change fd00:199::/64 \
		dev "$SDEV" proto kernel metric 256 "${adv[@]}"
}

# Three requests for one send: internal lines in each, a body in between
# that holds a name (skipped as body, never masked).
pipelined_request() {
	local h="Host: $URLH" body="X-Internal-Auth: body, not a field"
	printf 'GET /p1 HTTP/1.1\r\n%s\r\nX-Internal-Auth: pipe-secret-1\r\nKeep-A: a\r\n\r\n' "$h"
	printf 'POST /p2 HTTP/1.1\r\n%s\r\nContent-Length: %d\r\nx-edge-secret-x: pipe-secret-2\r\n\r\n%s' \
		"$h" "${#body}" "$body"
	printf 'GET /p3 HTTP/1.1\r\n%s\r\nKeep-B: b\r\nX-INTERNAL-TRACE: pipe-secret-3\r\n\r\n' "$h"
}

# The kernel cuts the lines: TCP_MAXSEG 88 at the client; the server's
# route advertising MSS 64 (52-byte segments) under the raw client, a
# pipelined send and curl keeping one connection for four requests.
kernel_cuts() { # TAG
	local sp name port what out n
	sent_ok "$1: TCP_MAXSEG 88" --premask-ok "${HDRS[@]}" -H @pad:4:200 --maxseg 88
	server_advmss 64
	sent_ok "$1: server MSS 64" --premask-ok "${HDRS[@]}"
	pipelined_request >"$WORK/pipe.req"
	sent_ok "$1: server MSS 64: three pipelined requests" "--premask-ok --pipelined" \
		--request "$WORK/pipe.req" --responses 3
	for sp in "${SERVERS[@]}"; do
		read -r name port <<<"$sp"
		what="$1 $name: server MSS 64: curl"
		# Keep-Gamma starts with no listed name's first byte: a cut
		# never masks it.
		out=$(in_c curl -sS --max-time 5 -H "X-Internal-Auth: curl-secret-1" \
			-H "x-edge-SECRET-pop: curl-secret-2" -H "Keep-Gamma: g" \
			-w 'connects=%{num_connects}\n' "http://$URLH:$port/ka1" "http://$URLH:$port/ka2" \
			"http://$URLH:$port/ka3" "http://$URLH:$port/ka4") || fail "$what failed"
		assert_no_match "$out" 'secret' "$what: no internal value arrives"
		assert_eq "$(printf '%s\n' "$out" | grep -c '^end$')" 4 "$what: reports"
		assert_eq "$(printf '%s\n' "$out" | grep -c '^header: y-hdrstrip: x*$')" 8 \
			"$what: masked lines"
		assert_eq "$(printf '%s\n' "$out" | grep -c '^header: Keep-Gamma: g$')" 4 \
			"$what: the other line arrives"
		n=$(printf '%s\n' "$out" | awk -F= '/connects=/ { n += $2 } END { print n + 0 }')
		assert_eq "$n" 1 "$what: connections opened for four requests"
	done
	server_advmss off
}

# The client cuts the lines (TCP_NODELAY, pauses): the request line's CR |
# LF; X-Inter|nal-Auth; the colon alone; x-edge-se|cret-pop; a value cut.
client_cuts() { # TAG
	local o cuts
	mapfile -t o < <(offsets HDRS "Host:" "X-Internal-Auth" ": st-secret-2" \
		"x-edge-secret-pop" "nger-value")
	cuts="$((o[0] - 1)),$((o[1] + 7)),${o[2]},$((o[2] + 1)),$((o[3] + 9)),${o[4]}"
	sent_ok "$1: cut at $cuts" "" "${HDRS[@]}" --split "$cuts" --pause 0.03
	pipelined_request >"$WORK/pipe.req"
	sent_ok "$1: three pipelined requests in one send" --pipelined \
		--request "$WORK/pipe.req" --responses 3
}

# losses TAG NS DEV DIR SINK COUNTER MIN WHERE [CLIENT-ARGS...]: drop_once
# at DEV's DIR hook (at egress, the segment goes to SINK): each origin's
# connection loses one segment, early in the request and/or late (WHERE:
# "early late"); hdrstrip's COUNTER (retransmits, or out_of_order for a
# gap) must grow by at least MIN (0: not checked).
losses() {
	local tag=$1 dns=$2 ddev=$3 ddir=$4 sink=$5 k=$6 min=$7 where=$8 o off before after
	local -A at
	shift 8
	mapfile -t o < <(offsets HDRS_LOSS "$LONGV" "x-Internal-Trace")
	at=([early]=$((o[0] + 60)) [late]=$((o[1] + 4)))
	drop_once_attach "$dns" "$ddev" "$ddir"
	before=$(hs_hook_stats "$HOOK")
	for off in $where; do
		off=${at[$off]}
		drop_once_arm 0 "$off" "$sink"
		# A retransmission no checkpoint covers has its first line's
		# bytes masked again ("x: xxx"): --resync-ok.
		sent_ok "$tag: the segment with byte $off lost once" "--premask-ok --resync-ok" \
			"${HDRS_LOSS[@]}" --maxseg 88 "$@"
		assert_eq "$(drop_once_stat dropped)" 3 "$tag: byte $off: segments drop_once dropped"
	done
	drop_once_disarm
	after=$(hs_hook_stats "$HOOK")
	[ "$min" -eq 0 ] ||
		assert_ge "$(($(cval "$after" "$k") - $(cval "$before" "$k")))" "$min" "$tag: hdrstrip's $k"
	drop_once_detach "$dns" "$ddev" "$ddir"
}

for HOOK in $HOOKS; do
	case $HOOK in
	tc-egress) NS=$CNS DEV=$CDEV ;;
	xdp | tc-ingress | receive) NS=$SNS DEV=$SDEV ;;
	*) fail "STREAMS_HOOKS: no hook '$HOOK'" ;;
	esac
	note_attached "$NS" "$DEV"
	for offload in on off; do
		set_offload "$offload"
		if [ "$offload" = on ]; then fam=6; else fam=4; fi
		ADDR=$(saddr "$fam") URLH=$(url_host "$fam")
		tag="$HOOK offload $offload IPv$fam"
		step "$tag: attach" hs_hook_attach "$HOOK" --headers "$LIST" --ports "$HS_PORTS"
		before=$(hs_hook_stats "$HOOK")
		kernel_cuts "$tag"
		client_cuts "$tag"
		# After: hdrstrip sees each lost segment twice. Before: it sees
		# the segments after the gap first, and drops them by the
		# default --on-error policy until the lost one comes again.
		# Origin mode reads after the stack: a loss on the wire only
		# (the stack puts the stream together), no counter to check.
		if [ "$HOOK" = receive ]; then
			losses "$tag: loss on the wire" "$SNS" "$SDEV" ingress 0 retransmits 0 "early late"
		else
			losses "$tag: loss after hdrstrip" "$SNS" "$SDEV" ingress 0 retransmits 6 "early late"
		fi
		if [ "$HOOK" = xdp ] || [ "$HOOK" = tc-ingress ]; then
			# TCP hands TC egress one GSO packet per burst (cut later,
			# also with offload off): writes apart make the segments
			# after the lost one reach hdrstrip.
			losses "$tag: loss before hdrstrip" "$CNS" "$CDEV" egress \
				"$(drop_once_sink "$CNS")" out_of_order 3 early \
				--split "$(seq -s, 80 80 900)" --pause 0.02
		elif [ "$HOOK" = receive ]; then
			log "$tag: loss before hdrstrip: skipped (origin mode reads after the stack: the loss on the wire above is the same case)"
		fi
		if [ "$offload" = off ]; then
			sent_ok "$tag: 60 KiB request in MSS-sized segments" --premask-ok \
				-H @pad:50:1024 -H "X-Internal-Auth: st-secret-6" -H "Keep-3: after" \
				-H @pad:8:1024 --timeout 5
		fi
		after=$(hs_hook_stats "$HOOK")
		d=()
		for k in http_requests headers_masked split_names packets_modified retransmits \
			out_of_order packets_dropped scan_incomplete untracked desync; do
			d+=("$k +$(($(cval "$after" "$k") - $(cval "$before" "$k")))")
		done
		log "$tag: counters: ${d[*]}"
		assert_ge "$(($(cval "$after" split_names) - $(cval "$before" split_names)))" 1 \
			"$tag: names cut by segments (split_names)"
		step "$tag: detach" hs_hook_cmd "$HOOK" detach
		assert_hook_clean "$HOOK"
	done
done

for name in node nginx python; do
	n=$(grep -c -- 'secret' "$WORK/$name.log" || true)
	[ "$n" -eq 0 ] || FAILURES+=("$name's log: $n lines hold an internal value")
done
if [ ${#FAILURES[@]} -gt 0 ]; then
	log "${#FAILURES[@]} failures:"
	printf '    %s\n' "${FAILURES[@]}"
	fail "${#FAILURES[@]} requests did not arrive as they should (listed above)"
fi
log "ok: no server log holds an internal value"
log "PASS"
