#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: alone (it waits for every proxy-mode map of a name to go)
# Proxy mode, responses: origins run in a cgroup made here (in the server
# namespace), hdrstrip attach --cgroup on it with response rules, and real
# clients outside it show what they got. The sk_msg program takes internal
# response field lines out whole, as for requests; the sk_skb program reads
# the requests the origins' sockets receive, for HEAD.
#  - a raw Python origin whose responses are a pure function of the
#    request: pipelined GET, HEAD (its Content-Length covers the next
#    response's head), 103 with an internal field, chunked with an internal
#    trailer, HEAD, benign, close; Python's http.client; a 1 MiB body twice
#    on one connection; a response cut into two writes at every offset:
#    every byte as sent but the internal lines (compared byte for byte);
#  - node (setHeader, 103 Early Hints, trailers), nginx add_header, Python's
#    http.server, with curl and node's http client; IPv4 and IPv6;
#  - counters per direction (responses_unframed: every response framed by
#    its request's method, but after a 103, line by line); requests the
#    origins receive are left as sent (proxy mode filters what the cgroup's
#    sockets send);
#  - a request in the SYN (server-side TCP Fast Open): the sk_skb program
#    reads it too (at the origin's first read), so its responses are framed
#    and lose their internal lines (responses_unframed stays);
#  - a response drop rule: the origin's send fails, curl gets nothing;
#  - update: a list without response rules leaves new connections' responses
#    alone, and one with them filters again;
#  - detach: responses pass as sent again, and no map of hdrstrip's is left.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nginx curl bpftool
require_cli attach update detach stats
grep -q -- '--cgroup' <<<"$("$HDRSTRIP" attach --help 2>&1)" || skip "hdrstrip has no proxy mode"
topo_setup
cg_make presp || skip "no cgroup2 hierarchy in /proc/mounts"
CG=$E2E_CG

PORT_RAW=$PORT_PYTHON PORT_NODE_RESP=$PORT_NODE PORT_NGX=$PORT_NGINX
PORTS=$PORT_RAW,$PORT_NODE_RESP,$PORT_NGX,$PORT_PYHTTP
LIST=$WORK/list
write_resp_list "$LIST"

# Server-side TCP Fast Open (the raw origin's listener takes it): a request
# in the SYN is queued before the sk_skb program can see it.
step "server namespace: TCP Fast Open for listeners that ask" in_s sysctl -qw net.ipv4.tcp_fastopen=3

# ---- origins: in the cgroup, in the server namespace ----
in_s_cg() { in_cg_ns "$SNS" "$@"; }
resp_origins in_s_cg

tool() { in_c env RESP_REMOVED=1 "$PYTHON" "$E2E_DIR/resp_tool.py" "$@"; }
cstats() {
	local out
	out=$("$HDRSTRIP" stats --cgroup "$CG" --json) || fail "stats --cgroup --json failed: $out"
	printf '%s\n' "$out" | "$PYTHON" "$E2E_DIR/json_counters.py" stats "cgroup-$CG_ID" ||
		fail "cannot read stats --cgroup --json: $out"
}
cval() { printf '%s\n' "$1" | counter "$2"; }
grew() { echo $(($(cval "$2" "$3") - $(cval "$1" "$3"))); } # BEFORE AFTER NAME

curl_get() { # FAM PORT PATH
	in_c curl -sS -g --max-time 10 -D - "http://$(url_host "$1"):$2$3"
}
curl_check() { # FAM PORT PATH WHAT [BODY_REGEX]
	local out
	out=$(curl_get "$1" "$2" "$3") || fail "$4: curl failed: $out"
	assert_no_match "$out" '^x-backend-server|^x-powered-by|^x-upstream' \
		"$4: curl got no internal field"
	assert_match "$out" '^x-keep: yes' "$4: curl got the benign field"
	assert_match "$out" "${5:-hello}" "$4: curl got the body"
}

step "attach --cgroup (origins inside)" "$HDRSTRIP" attach --cgroup "$CG" --headers "$LIST" \
	--ports "$PORTS"
before=$(cstats)
for fam in 4 6; do
	step "IPv$fam: pipelined GET, HEAD, 103, chunked, HEAD, benign, close: as sent, less the internal lines" \
		tool pipeline "$(saddr "$fam")" "$PORT_RAW"
	step "IPv$fam: http.client GET, HEAD, chunked, benign" tool httpclient "$(saddr "$fam")" "$PORT_RAW"
	step "IPv$fam: a 1 MiB body, twice on one connection, as sent" tool big "$(saddr "$fam")" "$PORT_RAW"
	out=$(in_c node "$E2E_DIR/resp_client.js" "$(saddr "$fam")" "$PORT_NODE_RESP" \
		GET:/ HEAD:/ GET:/early GET:/chunked GET:/) || fail "IPv$fam: node client failed: $out"
	assert_no_match "$out" 'x-backend-server|x-powered-by|x-upstream' \
		"IPv$fam: node's client got no internal field (headers, 103, trailers)"
	assert_eq "$(printf '%s\n' "$out" | grep -c 'x-keep')" 5 "IPv$fam: node's responses with x-keep"
	assert_match "$out" 'GET /early 103 ' "IPv$fam: node's client got the 103"
	# After the 103 on its keep-alive connection, line by line: the
	# trailer masked in place (y-hdrstrip), not taken out.
	assert_match "$out" 'GET /chunked 200 .*trailers:(y-hdrstrip)? body:[1-9]' \
		"IPv$fam: node's client got the chunked body, its trailer taken out or masked"
	curl_check "$fam" "$PORT_NODE_RESP" / "IPv$fam node"
	curl_check "$fam" "$PORT_NGX" / "IPv$fam nginx add_header"
	curl_check "$fam" "$PORT_PYHTTP" / "IPv$fam python http.server" 'request: GET /'
	curl_check "$fam" "$PORT_RAW" /chunked "IPv$fam raw chunked"
done
after=$(cstats)
log "http_responses +$(grew "$before" "$after" http_responses)," \
	"response_headers_matched +$(grew "$before" "$after" response_headers_matched)," \
	"response_headers_removed +$(grew "$before" "$after" response_headers_removed)," \
	"removed_bytes +$(grew "$before" "$after" removed_bytes)"
assert_ge "$(grew "$before" "$after" http_responses)" 30 "http_responses grew by (none counted line by line)"
assert_ge "$(grew "$before" "$after" response_headers_matched)" 60 "response_headers_matched grew by"
assert_eq "$(grew "$before" "$after" response_headers_matched)" \
	"$(($(grew "$before" "$after" response_headers_removed) + $(grew "$before" "$after" response_headers_masked)))" \
	"every matched response line removed, or masked once line by line (response_headers_removed + _masked)"
assert_ge "$(grew "$before" "$after" response_headers_masked)" 1 \
	"response_headers_masked (the lines after each 103, line by line: masked in place, not removed)"
assert_eq "$(grew "$before" "$after" headers_removed)" 0 "headers_removed (requests: none sent)"
assert_eq "$(grew "$before" "$after" responses_unframed)" 4 \
	"responses_unframed (framed by their requests' methods, but after the two 103s a family)"
assert_eq "$(grew "$before" "$after" http_requests)" 0 \
	"http_requests (the origins' received requests are read for framing only)"
assert_eq "$(grew "$before" "$after" scan_incomplete)" 0 "scan_incomplete"

# Requests the origins receive are not changed: proxy mode filters what the
# cgroup's sockets send.
out=$(in_c curl -sS --max-time 10 -H 'X-Internal-Auth: s3cret' "http://$S4:$PORT_PYHTTP/") ||
	fail "curl failed: $out"
assert_match "$out" 'x-internal-auth: s3cret' "received requests left as sent (the origin reports the field)"

# TCP Fast Open: the request in the SYN waits in the socket's own queue
# until the origin's first read runs it through the sk_skb program, before
# the origin answers: its responses are framed by it, and lose their
# internal lines.
before=$(cstats)
step "requests in the SYN (TCP Fast Open): responses without internal lines" \
	tool fastopen "$S4" "$PORT_RAW"
after=$(cstats)
assert_eq "$(grew "$before" "$after" responses_unframed)" 0 \
	"fast open: responses_unframed (the requests in the SYN were seen)"

# A response cut into two writes at every offset: the line that holds
# back while its name is not finished leaves whole or not at all.
len=$(tool length)
step "a response cut at each of its $((len - 1)) offsets" tool splitall "$S4" "$PORT_RAW"

# A drop rule for responses: the origin's send fails (EACCES), so the
# response never leaves; the client gets no response at all.
{ grep -v x-powered-by "$LIST"; echo 'x-powered-by  drop  response'; } >"$WORK/drop.list"
step "update: x-powered-by drop response" "$HDRSTRIP" update --cgroup "$CG" --headers "$WORK/drop.list"
before=$(cstats)
out=$(curl_get 4 "$PORT_NODE_RESP" / 2>&1) && fail "response drop: curl got a response: $out"
assert_no_match "$out" 'x-powered-by' "response drop: node's response (X-Powered-By) never reached curl"
out=$(curl_get 4 "$PORT_PYHTTP" /) || fail "response drop: curl to http.server failed: $out"
assert_match "$out" 'request: GET /' "response drop: a response without the field arrives"
after=$(cstats)
assert_eq "$(grew "$before" "$after" responses_dropped)" 1 "response drop: responses_dropped grew by"
assert_eq "$(grew "$before" "$after" packets_dropped)" 1 "response drop: packets_dropped grew by"

# update: without response rules, new connections' responses are left
# alone; with them again, filtered.
grep -v response "$LIST" >"$WORK/reqonly.list"
step "update: a list without response rules" "$HDRSTRIP" update --cgroup "$CG" --headers "$WORK/reqonly.list"
out=$(curl_get 4 "$PORT_NGX" /) || fail "curl failed: $out"
assert_match "$out" '^x-backend-server: nginx-5' "request rules only: responses untouched"
step "update: response rules again" "$HDRSTRIP" update --cgroup "$CG" --headers "$LIST"
curl_check 4 "$PORT_NGX" / "response rules again: nginx"

step "detach --cgroup" "$HDRSTRIP" detach --cgroup "$CG"
out=$(curl_get 4 "$PORT_NGX" /) || fail "curl failed: $out"
assert_match "$out" '^x-backend-server: nginx-5' "after detach: responses pass as sent"
out=$(curl_get 6 "$PORT_NODE_RESP" /) || fail "curl failed: $out"
assert_match "$out" '^x-backend-server' "after detach: node's responses pass as sent"
# The kernel frees the maps some time after their last user goes.
no_maps_left() { ! bpftool map show | grep -qE 'name (servers|origins|rxstate|rxscratch|rxnest|ended|sk_state) '; }
poll_until 10 no_maps_left || fail "hdrstrip's proxy maps still exist 10 s after detach: $(bpftool map show | grep -E 'servers|origins|rxstate|rxscratch|rxnest|ended|sk_state')"
log "ok: no servers, origins, rxstate, rxscratch, rxnest, ended or sk_state map left"
log "PASS"
