#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The main job, on a throwaway pair of network namespaces: an origin server
# (Node's http module) receives a request carrying internal headers, first
# as it is, then with hdrstrip attached at XDP in front of it; the match
# events say who sent the internal lines; the counters are read with
# hdrstrip and with bpftool; the list is replaced while
# attached; hdrstrip is detached. Everything it creates is removed at the
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
show "hdrstrip -n $SNS attach $SDEV --headers $(basename "$LIST_FULL")"
note_attached "$SNS" "$SDEV"
hs_s attach "$SDEV" --headers "$LIST_FULL" | sed 's/^/   /'

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

say "7. Detach: requests pass through unchanged again"
show "hdrstrip -n $SNS detach $SDEV"
hs_s detach "$SDEV" | sed 's/^/   /'
request | origin_saw

say "Done: the namespaces, server and pins are removed now."
