#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: timing (a flow's age within a few seconds)
# 'hdrstrip flows': the connections each hook's flow table holds, against
# connections the test opened and knows:
#  - a keep-alive connection over IPv4 and one over IPv6, at xdp on the
#    server's interface and tc-egress on the client's: each listed once per
#    hook, with the client's address and port, request, open, framed, its
#    age growing with the clock; --json has the same, with the keys in the
#    man page's order;
#  - a connection opened before the attach: listed line by line, begun
#    without state;
#  - a connection the client closed: listed closed;
#  - --hook picks a hook's table; a hook or a device without hdrstrip
#    exits 1; as many rows as flows_new counted.
. "$(dirname "$0")/lib.sh"

e2e_init
require_cli attach detach flows stats
topo_setup
start_node
LIST=$WORK/list
printf 'x-internal-auth\n' >"$LIST"

# hold FAMILY SECONDS [--before FILE]: a keep-alive connection from the
# client: one request, its answer, then SECONDS open; prints its local port
# once answered (with --before, after the connect but before any request:
# the request goes when FILE appears).
cat >"$WORK/hold.py" <<'EOF'
import os, socket, sys, time
fam, host, port, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
before = sys.argv[5] if len(sys.argv) > 5 else None
s = socket.socket(socket.AF_INET6 if fam == "6" else socket.AF_INET, socket.SOCK_STREAM)
s.connect((host, port))
if before:
    print(s.getsockname()[1], flush=True)
    while not os.path.exists(before):
        time.sleep(0.05)
s.sendall(b"GET /held HTTP/1.1\r\nHost: h\r\nX-Internal-Auth: a\r\n\r\n")
got = b""
while b"\r\n\r\n" not in got:
    got += s.recv(4096)
if not before:
    print(s.getsockname()[1], flush=True)
time.sleep(secs)
s.close()
EOF
hold() { # FAMILY SECONDS [FILE]: in the background; its port in $WORK/port.$1
	in_c "$PYTHON" "$WORK/hold.py" "$1" "$(saddr "$1")" "$PORT_NODE" "$2" ${3:+"$3"} \
		>"$WORK/port.$1" 2>"$WORK/hold.$1.err" &
	E2E_PIDS+=($!)
	poll_until 5 test -s "$WORK/port.$1" || fail "the client's connection: $(cat "$WORK/hold.$1.err")"
}
# row NS DEV HOOK FAMILY PORT: the flows line of that connection.
row() {
	local addr=$C4 dst=$S4
	[ "$4" = 6 ] && addr="[$C6]" dst="[$S6]"
	hs_in "$1" flows "$2" --hook "$3" | grep -E "^$3 +${addr//[.[\]]/\\&}:$5 -> " |
		grep -F " -> $dst:$PORT_NODE " || true
}

note_attached "$SNS" "$SDEV"
note_attached "$CNS" "$CDEV"
# Opened before any hook: no state for it anywhere.
hold 4 6 "$WORK/go"
early=$(cat "$WORK/port.4")
step "xdp on the server's interface" hs_s attach "$SDEV" --headers "$LIST" --ports "$PORT_NODE"
step "tc-egress on the client's" hs_c attach "$CDEV" --hook tc-egress --headers "$LIST" \
	--ports "$PORT_NODE"
touch "$WORK/go"
poll_until 5 sh -c "[ -n \"\$(nsenter --net=/run/netns/$SNS $HDRSTRIP flows $SDEV | grep -F ':$early ->')\" ]" ||
	fail "the connection older than the attach is not listed: $(hs_s flows "$SDEV")"
assert_match "$(row "$SNS" "$SDEV" xdp 4 "$early")" \
	" request open line-by-line \\(begun without state\\) age [0-9]+s$" \
	"xdp: the connection older than the attach, line by line"

rm -f "$WORK/port.4"
hold 4 6
p4=$(cat "$WORK/port.4")
hold 6 6
p6=$(cat "$WORK/port.6")
for fam in 4 6; do
	p=$p4
	[ "$fam" = 6 ] && p=$p6
	assert_match "$(row "$SNS" "$SDEV" xdp "$fam" "$p")" " request open framed age [0-9]+s$" \
		"xdp IPv$fam: the keep-alive connection, open, framed"
	assert_match "$(row "$CNS" "$CDEV" tc-egress "$fam" "$p")" " request open framed age [0-9]+s$" \
		"tc-egress IPv$fam: the same connection, in its own table"
	assert_eq "$(hs_s flows "$SDEV" | grep -cF ":$p -> ")" 1 "xdp IPv$fam: listed once"
done
age0=$(row "$SNS" "$SDEV" xdp 4 "$p4" | sed -n 's/.* age \([0-9]*\)s$/\1/p')
sleep 2.2
age1=$(row "$SNS" "$SDEV" xdp 4 "$p4" | sed -n 's/.* age \([0-9]*\)s$/\1/p')
assert_ge "$age1" $((age0 + 2)) "the age follows the clock ($age0 s, then $age1 s)"
assert_ge 5 "$age1" "the age is the connection's (at most 5 s: $age1 s)"

# --json: the same, one object a line, keys as the man page lists them.
man_keys=$("$PYTHON" "$REPO_ROOT/tests/install/mankeys.py" "$REPO_ROOT/man/hdrstrip.8" \
	"each connection is an object with these keys") || fail "the man page lists no keys for flows --json"
step "flows --json" to_file "$WORK/flows.json" hs_s flows "$SDEV" --json
step "flows --json: the connections, as the text has them" "$PYTHON" - "$WORK/flows.json" \
	"$SDEV" "$C4" "$C6" "$p4" "$p6" "$early" "$PORT_NODE" "$man_keys" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
dev, c4, c6, p4, p6, early, port = sys.argv[2:5] + [int(x) for x in sys.argv[5:9]]
keys = sys.argv[9].split()
for r in rows:
    assert list(r) == keys, (list(r), keys)
by = {(r["src"], r["sport"]): r for r in rows}
for src, p in ((c4, p4), (c6, p6)):
    r = by[(src, p)]
    assert r["dev"] == dev and r["hook"] == "xdp" and r["dport"] == port, r
    assert r["direction"] == "request" and r["state"] == "open" and r["read"] == "framed", r
    assert r["started"] is True and 2 <= r["age"] <= 8, r
    assert r["family"] == (6 if src == c6 else 4), r
r = by[(c4, early)]
assert r["read"] == "line-by-line" and r["started"] is False, r
print("flows --json:", len(rows), "connections")
EOF

# Closed by the client: the flow stays (it checks resends), closed.
rm -f "$WORK/port.4"
hold 4 0.2
pc=$(cat "$WORK/port.4")
poll_until 5 sh -c "nsenter --net=/run/netns/$SNS $HDRSTRIP flows $SDEV | grep -F ':$pc -> ' | grep -q ' closed '" ||
	fail "the closed connection is not listed closed: $(row "$SNS" "$SDEV" xdp 4 "$pc")"
log "ok: a connection the client closed is listed closed"

# As many rows begun by a SYN as flows_new counted (nothing evicted at
# this size), and the one begun without state.
assert_eq "$(hs_s flows "$SDEV" --hook xdp | grep ' -> ' | grep -vc 'begun without state')" \
	"$(hs_stats "$SNS" "$SDEV" | counter flows_new)" "xdp: a row for every flow counted"
assert_eq "$(hs_s flows "$SDEV" --hook xdp | grep -c 'begun without state')" 1 \
	"xdp: one row begun without state"
assert_match "$(hs_s flows "$SDEV" | tail -n 1)" \
	"^$SDEV xdp: [0-9]+ connections tracked \\(table of 32768\\)$" "the table's summary"
expect_exit 1 "--hook of a hook not attached" hs_s flows "$SDEV" --hook tc-ingress
assert_match "$EXPECT_OUT" "tc-ingress is not attached to '$SDEV'" "... says so"
expect_exit 2 "--hook with no such hook" hs_s flows "$SDEV" --hook sideways
step "detach" hs_s detach "$SDEV"
step "detach the client's" hs_c detach "$CDEV"
expect_exit 1 "flows with nothing attached" hs_s flows
log "PASS"
