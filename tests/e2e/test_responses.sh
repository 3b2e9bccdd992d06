#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Responses end to end: origins that send internal response fields (a raw
# Python origin, node, nginx add_header), real clients that show what they
# got (curl, Python's http.client, node's http, a raw pipelining client),
# with hdrstrip where responses travel:
#  - the origin's side: requests at xdp, responses at tc-egress;
#  - the client's side (a proxy receiving from origins): requests at
#    tc-egress, responses at xdp, then at tc-ingress;
#  - responses only (tc-egress on the origin's side, no hook sees the
#    requests): line by line after the first response, counted.
# Over IPv4 and IPv6, checksum offload off (every rewrite must carry its own
# checksum update). Checks: no internal field reaches a client, in headers,
# 103 interim responses or chunked trailers; every other byte arrives as
# sent (the raw clients compare byte for byte); a HEAD among pipelined GETs;
# a response cut into two segments at every offset; per-direction counters;
# request rules keep to requests; and an origin that reads a GET's body as
# a request (Python's SimpleHTTPRequestHandler), answering more requests
# than were counted: the answers after the GET's go line by line.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nginx curl
require_cli attach detach stats
topo_setup off

PORT_RAW=$PORT_PYTHON # the raw Python origin
PORT_NODE_RESP=$PORT_NODE
PORT_NGX=$PORT_NGINX
LIST=$WORK/list
write_resp_list "$LIST"

resp_origins in_s
start_python_simple --response-header "X-Backend-Server: py-simple.internal"
PORTS=$PORT_RAW,$PORT_NODE_RESP,$PORT_NGX,$PORT_PYHTTP,$PORT_PYTHON_SIMPLE

tool() { in_c "$PYTHON" "$E2E_DIR/resp_tool.py" "$@"; }

# curl: the header block it received, and the body.
curl_check() { # FAM PORT PATH WHAT [BODY_REGEX]
	local host out
	host=$(url_host "$1")
	out=$(in_c curl -sS -g --max-time 10 -D - "http://$host:$2$3") ||
		fail "$4: curl http://$host:$2$3 failed: $out"
	assert_no_match "$out" '^x-backend-server|^x-powered-by|^x-upstream' \
		"$4: curl got no internal field"
	assert_match "$out" '^x-keep: yes' "$4: curl got the benign field"
	assert_match "$out" "${5:-hello}" "$4: curl got the body"
}

# node's http client: headers, 103's fields and trailers it parsed.
node_check() { # FAM WHAT
	local out
	out=$(in_c node "$E2E_DIR/resp_client.js" "$(saddr "$1")" "$PORT_NODE_RESP" \
		GET:/ HEAD:/ GET:/early GET:/chunked GET:/) || fail "$2: node client failed: $out"
	[ -n "${E2E_VERBOSE:-}" ] && printf '%s\n' "$out" | sed 's/^/    | /'
	assert_no_match "$out" 'x-backend-server|x-powered-by|x-upstream' \
		"$2: node's client got no internal field (headers, 103, trailers)"
	assert_eq "$(printf '%s\n' "$out" | grep -c 'x-keep')" 5 "$2: node's responses with x-keep"
	assert_match "$out" 'GET /early 103 ' "$2: node's client got the 103"
	assert_match "$out" 'GET /chunked 200 .*trailers:y-hdrstrip' \
		"$2: node's client got the trailer, masked"
}

counters_of() { # NS DEV
	hs_stats "$1" "$2"
}

cval() { printf '%s\n' "$1" | counter "$2"; }

# One placement: requests at RQ_HOOK (none: "-"), responses at RS_HOOK, on
# DEV in NS. Checks every client over both families.
placement() { # NAME NS DEV RQ_HOOK RS_HOOK
	local name=$1 ns=$2 dev=$3 rq=$4 rs=$5 fam before after
	note_attached "$ns" "$dev"
	if [ "$rq" != - ]; then
		step "$name: attach $rq to $dev" hs_in "$ns" attach "$dev" --headers "$LIST" \
			--hook "$rq" --ports "$PORTS"
	fi
	step "$name: attach $rs to $dev" hs_in "$ns" attach "$dev" --headers "$LIST" \
		--hook "$rs" --ports "$PORTS"
	before=$(counters_of "$ns" "$dev")
	for fam in 4 6; do
		step "$name IPv$fam: pipelined GET, HEAD, 103, chunked, HEAD, benign, close" \
			tool pipeline "$(saddr "$fam")" "$PORT_RAW"
		step "$name IPv$fam: http.client GET, HEAD, chunked, benign" \
			tool httpclient "$(saddr "$fam")" "$PORT_RAW"
		step "$name IPv$fam: a 1 MiB body, twice on one connection, arrives as sent" \
			tool big "$(saddr "$fam")" "$PORT_RAW"
		node_check "$fam" "$name IPv$fam"
		curl_check "$fam" "$PORT_NODE_RESP" / "$name IPv$fam node"
		curl_check "$fam" "$PORT_NGX" / "$name IPv$fam nginx add_header"
		curl_check "$fam" "$PORT_PYHTTP" / "$name IPv$fam python http.server" 'request: GET /' 
		curl_check "$fam" "$PORT_RAW" /chunked "$name IPv$fam raw chunked"
		step "$name IPv$fam: a GET whose body SimpleHTTPRequestHandler answers as a HEAD" \
			tool bodyreq "$(saddr "$fam")" "$PORT_PYTHON_SIMPLE"
	done
	after=$(counters_of "$ns" "$dev")
	RESP_MASKED=$(($(cval "$after" response_headers_masked) - $(cval "$before" response_headers_masked)))
	RESP_UNFRAMED=$(($(cval "$after" responses_unframed) - $(cval "$before" responses_unframed)))
	RESP_SEEN=$(($(cval "$after" http_responses) - $(cval "$before" http_responses)))
	REQ_MASKED=$(($(cval "$after" headers_masked) - $(cval "$before" headers_masked)))
	log "$name: http_responses +$RESP_SEEN, response_headers_masked +$RESP_MASKED, responses_unframed +$RESP_UNFRAMED"
	# What the normaliser did (a loss on the veth makes TCP resend).
	local c line=
	for c in retransmits retransmit_unverified retransmit_mismatch bad_checksum csum_unchecked malformed; do
		line+=" $c +$(($(cval "$after" "$c") - $(cval "$before" "$c")))"
	done
	log "$name:$line"
	assert_ge "$RESP_MASKED" 60 "$name: response_headers_masked grew by"
	assert_eq "$REQ_MASKED" 0 "$name: headers_masked (requests: no internal field sent)"
}

unplace() { # NAME NS DEV HOOK...
	local name=$1 ns=$2 dev=$3 h
	shift 3
	for h in "$@"; do
		[ "$h" = - ] && continue
		step "$name: detach $h" hs_in "$ns" detach "$dev" --hook "$h"
	done
	assert_clean "$ns" "$dev"
}

# Every response is framed by its request's method, but after a 103 Early
# Hints (which Python's http.client takes for a final response): its
# connection goes line by line. Two a family (the pipeline's, node's /early).
EARLY_HINTS=4
# And after the answer to a GET with a body (bodyreq): the origin may answer
# requests it found in that body. One a family.
BODY_REQUESTS=2

# The origin's side.
placement "origin side" "$SNS" "$SDEV" xdp tc-egress
assert_eq "$RESP_UNFRAMED" $((EARLY_HINTS + BODY_REQUESTS)) \
	"origin side: responses_unframed (a 103, or a GET's body, sends its connection line by line)"
assert_ge "$RESP_SEEN" 30 "origin side: http_responses (none counted line by line)"
# Match events say which way each field went: a request's from its client,
# a response's from the origin's port.
step "origin side: a request with an internal field" \
	in_c curl -sS -m 5 -o /dev/null -H "X-Internal-Auth: s" "http://$S4:$PORT_NGX/"
hs_s events "$SDEV" --json >"$WORK/events.json" || fail "events --json failed"
step "origin side: one request event, at xdp, from the client" sh -c \
	"grep '\"direction\":\"request\"' '$WORK/events.json' | $PYTHON '$E2E_DIR/events_check.py' --count 1 --want hook=xdp --want name=x-internal-auth --want src=$C4 --want dport=$PORT_NGX"
step "origin side: response events (mask), at tc-egress, from the origins' ports" sh -c \
	"grep '\"direction\":\"response\"' '$WORK/events.json' | grep '\"action\":\"mask\"' | $PYTHON '$E2E_DIR/events_check.py' --min 40 --want hook=tc-egress"
# Drops by the normaliser (a segment the stack would read another way) are
# no rule's: a drop event here names no rule, and there is none by a rule.
assert_no_match "$(grep '"reason":"rule"' "$WORK/events.json" || true)" . \
	"origin side: no drop by a rule (the list has none)"
step "origin side: a response event names the origin as its source" \
	grep -q "\"direction\":\"response\",\"family\":4,\"src\":\"$S4\",\"sport\":$PORT_NGX,\"dst\":\"$C4\"" "$WORK/events.json"
# The raw origin cuts one response at every offset into two writes.
len=$(tool length)
step "origin side: a response cut at each of its $((len - 1)) offsets" tool splitall "$S4" "$PORT_RAW"
unplace "origin side" "$SNS" "$SDEV" tc-egress xdp

# A proxy's side: responses come in from the origins.
placement "client side, xdp" "$CNS" "$CDEV" tc-egress xdp
assert_eq "$RESP_UNFRAMED" $((EARLY_HINTS + BODY_REQUESTS)) \
	"client side, xdp: responses_unframed (a 103, or a GET's body, sends its connection line by line)"
unplace "client side, xdp" "$CNS" "$CDEV" xdp tc-egress
placement "client side, tc-ingress" "$CNS" "$CDEV" tc-egress tc-ingress
assert_eq "$RESP_UNFRAMED" $((EARLY_HINTS + BODY_REQUESTS)) \
	"client side, tc-ingress: responses_unframed (a 103, or a GET's body, sends its connection line by line)"
unplace "client side, tc-ingress" "$CNS" "$CDEV" tc-ingress tc-egress

# No hook sees the requests: each connection's responses after its first
# are checked line by line; still nothing internal gets through.
placement "responses only" "$SNS" "$SDEV" - tc-egress
assert_ge "$RESP_UNFRAMED" 10 "responses only: responses_unframed"
unplace "responses only" "$SNS" "$SDEV" tc-egress

# A drop rule for responses: the segment that carries the field is dropped,
# and so is every copy TCP resends; the client never gets the response.
printf 'x-powered-by  drop  response\n' >"$WORK/drop.list"
note_attached "$SNS" "$SDEV"
step "response drop: attach xdp" hs_s attach "$SDEV" --headers "$WORK/drop.list" --hook xdp \
	--ports "$PORTS"
step "response drop: attach tc-egress" hs_s attach "$SDEV" --headers "$WORK/drop.list" \
	--hook tc-egress --ports "$PORTS"
before=$(counters_of "$SNS" "$SDEV")
expect_exit 28 "response drop: curl to nginx times out" \
	in_c curl -sS -m 3 -o /dev/null "http://$S4:$PORT_NGX/"
out=$(in_c curl -sS -m 5 -D - "http://$S4:$PORT_PYHTTP/") || fail "response drop: curl failed: $out"
assert_match "$out" '^x-backend-server: py-origin' \
	"response drop: a response without the field arrives (this list does not name the others)"
after=$(counters_of "$SNS" "$SDEV")
assert_eq $(($(cval "$after" responses_dropped) - $(cval "$before" responses_dropped))) 1 \
	"response drop: responses_dropped grew by"
assert_ge $(($(cval "$after" retransmits_dropped) - $(cval "$before" retransmits_dropped))) 1 \
	"response drop: TCP's resent copies dropped again (retransmits_dropped)"
unplace "response drop" "$SNS" "$SDEV" tc-egress xdp

# A list without response rules leaves responses alone: they arrive with
# their internal fields (nothing inspects them).
grep -v response "$LIST" >"$WORK/reqonly.list"
note_attached "$SNS" "$SDEV"
step "request rules only: attach tc-egress" hs_s attach "$SDEV" --headers "$WORK/reqonly.list" \
	--hook tc-egress --ports "$PORTS"
out=$(in_c curl -sS --max-time 10 -D - "http://$S4:$PORT_NGX/") || fail "curl failed: $out"
assert_match "$out" '^x-backend-server: nginx-5' "request rules only: responses untouched"
unplace "request rules only" "$SNS" "$SDEV" tc-egress
log "PASS"
