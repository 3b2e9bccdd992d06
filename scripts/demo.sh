#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The main job, on a throwaway pair of network namespaces: an origin server
# (Node's http module) receives a request carrying internal headers, first
# as it is, then with hdrstrip attached at XDP in front of it; the match
# events say who sent the internal lines; the counters are read with
# hdrstrip and with bpftool; the list is replaced while
# attached; response rules strip what an origin sends back; hdrstrip is
# detached. Everything it creates is removed at the
# end, also on failure or Ctrl-C. Run it with 'make demo'.

# The namespaces, servers and cleanup are the end-to-end tests' own.
# shellcheck source=../tests/e2e/lib.sh
source "$(dirname "$0")/../tests/e2e/lib.sh"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '   $ %s\n' "$*"; }

LIST_FULL=${CORPUS:-$REPO_ROOT/tests/corpus}/internal-headers.txt

e2e_init
require_cli
require_tools node curl
topo_setup
start_node
# A second origin whose responses carry its own internal fields.
PORT_RESP=8090
in_s node "$E2E_DIR/servers/resp_origin.js" "$PORT_RESP" >"$WORK/resp.out.log" 2>&1 &
E2E_PIDS+=($!)
wait_listen "$SNS" "$PORT_RESP" "node origin (responses)" $!

# The request an edge proxy would forward: two internal headers (one in
# odd case), one a spoofed drop-class secret is not, and ordinary ones.
request() {
	in_c curl -sS -m 3 "http://$S4:$PORT_NODE/account" \
		-H 'Accept: text/html' \
		-H 'X-Internal-Auth: user=admin;role=root' \
		-H 'x-EDGE-pop: fra1' \
		-H 'Cookie: session=abc123' \
		-H 'X-Request-Id: 7f3a9c'
}

origin_saw() {
	grep -E '^(request|header):' | sed 's/^/   origin received  /'
}

say "1. Without hdrstrip: the origin receives every header the client sent"
show "curl -H 'X-Internal-Auth: ...' -H 'x-EDGE-pop: fra1' ... http://$S4/account"
request | origin_saw

say "2. Attach hdrstrip at XDP on the server's interface ($SDEV)"
show "hdrstrip -n $SNS attach $SDEV --headers $(basename "$LIST_FULL") --ports 80,$PORT_RESP"
note_attached "$SNS" "$SDEV"
hs_s attach "$SDEV" --headers "$LIST_FULL" --ports "80,$PORT_RESP" | sed 's/^/   /'

say "3. The same request: internal lines arrive masked, same length; the rest untouched"
request | origin_saw

say "4. Who sent them: one match event per internal line (read once: the buffer is emptied)"
show "hdrstrip -n $SNS events $SDEV"
hs_s events "$SDEV" | sed 's/^/   /'

say "5. Counters, from hdrstrip and from bpftool (BTF names the fields)"
show "hdrstrip -n $SNS stats $SDEV --per-header (names with hits)"
hs_s stats "$SDEV" --per-header | awk '/per header/ {ph=1; next}
	!ph && $2 != 0 {print "   " $0}
	ph && $2 != 0 {print "   " $0}'
show "bpftool map dump pinned /sys/fs/bpf/hdrstrip/$SDEV/counters (CPU 0)"
bpftool map dump pinned "/sys/fs/bpf/hdrstrip/$SDEV/counters" |
	grep -E '"(packets|http_requests|headers_seen|headers_matched|headers_masked)"' |
	head -5 | sed 's/^ */   /'

say "6. Replace the list while attached: only X-Internal-* now"
printf 'x-internal-*\n' >"$WORK/only-internal.txt"
show "hdrstrip -n $SNS update $SDEV --headers only-internal.txt"
hs_s update "$SDEV" --headers "$WORK/only-internal.txt" | sed 's/^/   /'
request | origin_saw

response_headers() {
	in_c curl -sS -m 3 -D - -o /dev/null "http://$S4:$PORT_RESP/" | tr -d '\r' |
		grep -v '^$' | sed 's/^/   client received  /'
}

say "7. Responses: what the origin sends back reaches the client as it is"
show "curl -D - http://$S4:$PORT_RESP/"
response_headers

say "8. Response rules: two names for responses, and tc-egress, where responses leave"
printf 'x-internal-*\nx-backend-server  mask  response\nx-powered-by      mask  response\n' \
	>"$WORK/with-responses.txt"
sed 's/^/   | /' "$WORK/with-responses.txt"
show "hdrstrip -n $SNS update $SDEV --headers with-responses.txt"
hs_s update "$SDEV" --headers "$WORK/with-responses.txt" | sed 's/^/   /'
show "hdrstrip -n $SNS attach $SDEV --hook tc-egress --headers with-responses.txt --ports 80,$PORT_RESP"
hs_s attach "$SDEV" --hook tc-egress --headers "$WORK/with-responses.txt" \
	--ports "80,$PORT_RESP" | sed 's/^/   /'
response_headers
show "hdrstrip -n $SNS stats $SDEV (the response counters)"
hs_s stats "$SDEV" | grep -E '^ *(http_responses|response_headers_(seen|masked)|responses_unframed) ' |
	sed 's/^ */   /'

say "9. Detach: requests pass through unchanged again"
show "hdrstrip -n $SNS detach $SDEV"
hs_s detach "$SDEV" | sed 's/^/   /'
request | origin_saw

say "Done: the namespaces, server and pins are removed now."
