#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: timing (detach's wait for a slow reader; its own programs and maps are checked by id)
# Origin mode (attach --cgroup CG --receive): the origins run in a cgroup of
# the test's in the server namespace, and are judged by what they read:
#  - node (strict and --insecure-http-parser), nginx and Python's
#    http.server: internal lines masked, every other byte as sent, over
#    IPv4 and IPv6, in one piece and cut at every offset of an internal
#    name, with curl on keep-alive connections;
#  - no window: a connection open before the attach is left alone and
#    counted; a request in the SYN (TCP Fast Open, no cookie) and bytes
#    that arrive before accept() returns (an origin that waits to accept)
#    reach the application masked;
#  - every way to read (servers/readpaths.py, servers/uring_origin.c):
#    read, readv, recv, recvmsg, recv_into, MSG_PEEK, MSG_OOB, SO_OOBINLINE,
#    io_uring's recv, read, readv and recvmsg get the bytes masked (the
#    urgent byte stays in the stream); sendfile() from a socket is refused
#    by the kernel (EINVAL); splice(2), io_uring's splice and
#    TCP_ZEROCOPY_RECEIVE read the bytes that came before accept() as sent
#    (the blind spot the README states), are counted (recv_unscanned) and
#    the connection ends there; after a first read they get nothing;
#  - a drop rule, and framing no server agrees on (--on-error drop), end
#    the connection: the application never reads a byte from there on;
#    with the agent running, the client gets a reset and the application
#    ECONNABORTED; counted (conns_ended), with an event naming the client's
#    address and port (its socket's); attach by hand warns on stderr that
#    such a connection stalls without the agent, the agent's attach does not;
#  - observe mode, an update under traffic, status, stats, Prometheus;
#  - detach: an application that has not read what it was given yet gets
#    it (masked); one that does not read for longer than detach waits stays
#    filtered (its pins stay), the next detach is refused until it has
#    read (it gets its request masked), and the one after is clean;
#    afterwards requests arrive as sent; nothing is left (maps, programs,
#    pins).
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools node nginx curl bpftool nstat
require_cli attach update detach stats status events run
URING=${E2E_BPF_DIR}/uring_origin
[ -x "$URING" ] || skip "$URING is not built (make $(realpath --relative-to="$REPO_ROOT" "$URING"))"
topo_setup
origin_hook_setup
CG=$E2E_CG
# The kernel's warning when a socket's stream has a hole (bytes lost under
# it): none may appear while this test runs.
seq_bugs() { dmesg | grep -c 'TCP recvmsg seq # bug' || true; }
SEQ_BUGS0=$(seq_bugs)

# Servers take data in the SYN without a cookie or a socket option (set
# before they listen).
step "server: TCP Fast Open for every listener, no cookie" in_s sysctl -qw net.ipv4.tcp_fastopen=0x602
step "client: TCP Fast Open without a cookie" in_c sysctl -qw net.ipv4.tcp_fastopen=5
start_servers
start_node_insecure
RP_BASE=8100 UR_BASE=8120
srv_run "$PYTHON" "$E2E_DIR/servers/readpaths.py" serve --base-port "$RP_BASE" \
	--log "$WORK/readpaths.log" --accept-delay 0.3 >"$WORK/readpaths.out.log" 2>&1 &
E2E_PIDS+=($!)
wait_listen "$SNS" $((RP_BASE + 12)) readpaths $!
srv_run "$URING" "$UR_BASE" "$WORK/uring.log" 300 >"$WORK/uring.out.log" 2>&1 &
E2E_PIDS+=($!)
wait_listen "$SNS" $((UR_BASE + 4)) uring_origin $!
PORTS=$HS_PORTS,$PORT_NODE_INSECURE,$RP_BASE-$((UR_BASE + 4))

LIST=$WORK/list
write_main_list "$LIST"
hs() { "$HDRSTRIP" "$@"; }
cval() { printf '%s\n' "$1" | counter "$2"; }
grew() { echo $(($(cval "$2" "$3") - $(cval "$1" "$3"))); } # BEFORE AFTER KEY
ostats() { hs_hook_stats receive; }
rp_port() { # METHOD
	local i=0 m
	for m in recv read readv recvmsg recv_into peek oob oobinline splice sendfile zerocopy slow stall; do
		[ "$m" = "$1" ] && echo $((RP_BASE + i)) && return
		i=$((i + 1))
	done
	fail "no readpaths method $1"
}
ur_port() { # METHOD
	local i=0 m
	for m in recv read readv recvmsg splice; do
		[ "$m" = "$1" ] && echo $((UR_BASE + i)) && return
		i=$((i + 1))
	done
	fail "no uring_origin method $1"
}
rp_send() { in_c "$PYTHON" "$E2E_DIR/servers/readpaths.py" send "$S4" "$@"; }
rp_check() { "$PYTHON" "$E2E_DIR/servers/readpaths.py" check "$@"; }

# --- a connection open before the attach --------------------------------
# A keep-alive client of node's: one request now, the next once the gate
# file exists (after the attach), both printed.
GATE=$WORK/gate
in_c "$PYTHON" - "$S4" "$PORT_NODE" "$GATE" >"$WORK/held.out" 2>&1 <<'EOF' &
import os, socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=20)
def ask(tag):
    s.sendall(b"GET /held HTTP/1.1\r\nHost: h\r\nX-Internal-Auth: held-" + tag + b"\r\n\r\n")
    got = b""
    while b"\nend\n" not in got:
        got += s.recv(65536)
    return got
print(ask(b"before").decode(), flush=True)
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
print(ask(b"after").decode(), flush=True)
EOF
HELD=$!
poll_until 5 grep -q 'held-before' "$WORK/held.out" || fail "the held connection's first request got no answer"
log "ok: a keep-alive connection to node open before the attach"

out=$(hs attach --cgroup "$CG" --receive --headers "$LIST" --ports "$PORTS" 2>"$WORK/attach.err") ||
	fail "attach --cgroup --receive failed: $out $(cat "$WORK/attach.err")"
assert_match "$out" 'origin mode' "attach says origin mode"
# By hand, with a drop rule: nobody resets what a drop ends (the agent does).
assert_match "$(cat "$WORK/attach.err")" \
	"^hdrstrip: warning: origin mode attached by hand cannot reset a connection a drop ends .*'hdrstrip run' with 'receive = yes'" \
	"attach by hand warns that a dropped connection stalls, on stderr"
assert_no_match "$out" 'warning' "attach: stdout holds no warning"
assert_match "$out" ' 1 connection accepted before' "attach counts the connection accepted before it"
assert_eq "$(cval "$(ostats)" conns_preexisting)" 1 "conns_preexisting"
touch "$GATE"
wait "$HELD" || fail "the held client failed: $(cat "$WORK/held.out")"
assert_match "$(cat "$WORK/held.out")" 'x-internal-auth: held-after' \
	"the connection open before the attach is left alone (its next request arrives as sent)"

# --- status, stats, Prometheus ------------------------------------------------
out=$(hs status --cgroup "$CG") || fail "status --cgroup failed: $out"
assert_match "$out" 'origin mode' "status: origin mode"
assert_match "$out" '^  receive +program [0-9]+' "status: the receive hook's program"
out=$(hs status --cgroup "$CG" --json) || fail "status --json failed: $out"
assert_match "$out" '"hook": *"receive"' "status --json: hook receive"
out=$(hs stats --prometheus) || fail "stats --prometheus failed: $out"
assert_match "$out" "hdrstrip_attached_info\\{cgroup=\"$CG\",hook=\"receive\",mode=\"sockops\\+sk_skb\"\\} 1" \
	"Prometheus: the attachment, with its hook and mode"

# The programs and maps of this attachment, by id: what detach has to release.
# (Other suites may run origin mode on cgroups of their own meanwhile.) Its
# maps are the ones pinned in PIN_DIR and the ones its programs use; its
# programs, the sockops one on the cgroup and those that use its config map.
origin_ids() { # CG PIN_DIR: "prog ID" and "map ID" lines
	local m
	bpftool -j cgroup show "$1" >"$WORK/cg.json" && bpftool -j prog show >"$WORK/progs.json" ||
		return 1
	for m in "$2"/*; do
		bpftool -j map show pinned "$m" || return 1
		echo
	done >"$WORK/pinned.json"
	"$PYTHON" - "$WORK/cg.json" "$WORK/progs.json" "$WORK/pinned.json" <<'PY'
import json, sys
cg = {p["id"] for p in json.load(open(sys.argv[1])) if p.get("name") == "hdrstrip_origin"}
pinned = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
config = [m["id"] for m in pinned if m.get("name") == "config"]
progs = [p for p in json.load(open(sys.argv[2]))
         if p["id"] in cg or (config and config[0] in p.get("map_ids", []))]
if not cg or not config or len(progs) < 2:
    sys.exit("no sockops program on the cgroup, no config map pinned, or no other program uses it")
for p in progs:
    print("prog", p["id"])
maps = {m for p in progs for m in p.get("map_ids", [])} | {m["id"] for m in pinned}
for m in sorted(maps):
    print("map", m)
PY
}
origin_ids "$CG" "$BPFFS_ROOT/cgroup-$CG_ID" >"$WORK/origin.ids" ||
	fail "cannot list origin mode's programs and maps by id"
mapfile -t ORIGIN_PROGS < <(sed -n 's/^prog //p' "$WORK/origin.ids")
mapfile -t ORIGIN_MAPS < <(sed -n 's/^map //p' "$WORK/origin.ids")
log "ok: origin mode's ${#ORIGIN_PROGS[@]} programs and ${#ORIGIN_MAPS[@]} maps, by id"

# --- the origins -------------------------------------------------------------
HDRS=(-H "User-Agent: hs-e2e/1" -H "X-INTERNAL-AUTH: token-1" -H "Accept: */*"
	-H "x-Internal-Trace: abc-123" -H "X-Keep-Alpha: v1" -H "x_internal_TENANT: t9"
	-H "X-EDGE-Secret-Colo: fra1" -H "X-Internal-Authx: near-miss"
	-H "X-Keep-Beta: v2 with  spaces")
before=$(ostats)
for fam in 4 6; do
	for sp in "${SERVERS[@]}" "node-insecure $PORT_NODE_INSECURE"; do
		read -r name port <<<"$sp"
		step "IPv$fam $name: a request with internal fields answered" \
			to_file "$WORK/resp" client "$(saddr "$fam")" "$port" "${HDRS[@]}" --save "$WORK/req"
		step "IPv$fam $name: internal lines masked, the others as sent" \
			check_report --sent "$WORK/req" --report "$WORK/resp" --list "$LIST"
	done
	out=$(in_c curl -sS --max-time 5 -H "X-Internal-Auth: curl-secret" -H "X-Keep-Gamma: g" \
		"http://$(url_host "$fam"):$PORT_NODE/a" "http://$(url_host "$fam"):$PORT_NODE/b") ||
		fail "curl, two requests on one connection, failed"
	assert_no_match "$out" 'curl-secret' "IPv$fam curl keep-alive: no internal value arrives"
	assert_eq "$(grep -c '^header: y-hdrstrip: x*$' <<<"$out")" 2 \
		"IPv$fam curl keep-alive: both requests' internal lines masked"
done
after=$(ostats)
assert_eq "$(grew "$before" "$after" http_requests)" 12 "http_requests grew by (4 origins and 2 curl requests, twice)"
assert_eq "$(grew "$before" "$after" headers_masked)" $((8 * 4 + 4)) "headers_masked grew by"
assert_eq "$(grew "$before" "$after" packets_dropped)" 0 "packets_dropped grew by"

# A request cut at each byte of an internal name and of the line after it:
# each cut is its own segment (TCP_NODELAY, a pause), and arrives so at
# the origin's socket.
cut0=$(client "$S4" "$PORT_PYTHON" "${HDRS[@]}" --print-offset "x-Internal-Trace") ||
	fail "client --print-offset"
for k in $(seq 0 30); do
	step "python: cut at byte $((cut0 + k)) (in and after x-Internal-Trace)" to_file "$WORK/resp" \
		client "$S4" "$PORT_PYTHON" "${HDRS[@]}" --split $((cut0 + k)) --pause 0.02 \
		--save "$WORK/req"
	step "python: cut at $((cut0 + k)): masked" check_report --premask-ok \
		--sent "$WORK/req" --report "$WORK/resp" --list "$LIST"
done

# --- no window -----------------------------------------------------------------
# Fast Open: the client's kernel sends the request in the SYN (the server
# asks for no cookie); the server's stack queues it before the socket has a
# file, and the origin's first read runs it through the program.
syn_data() { in_s nstat -az TcpExtTCPFastOpenPassive | awk '$1 == "TcpExtTCPFastOpenPassive" { print $2 }'; }
tfo0=$(syn_data)
in_c "$PYTHON" - "$S4" "$PORT_PYTHON" >"$WORK/tfo.out" 2>&1 <<'EOF' || fail "Fast Open client: $(cat "$WORK/tfo.out")"
import socket, sys
s = socket.socket()
s.sendto(b"GET /tfo HTTP/1.1\r\nHost: h\r\nX-Internal-Auth: tfo-secret\r\nX-Keep: k\r\n\r\n",
         socket.MSG_FASTOPEN, (sys.argv[1], int(sys.argv[2])))
s.settimeout(5)
got = b""
while b"\nend\n" not in got:
    d = s.recv(65536)
    if not d:
        break
    got += d
print(got.decode())
EOF
assert_eq "$(($(syn_data) - tfo0))" 1 "the request went in the SYN (TcpExtTCPFastOpenPassive grew by)"
assert_no_match "$(cat "$WORK/tfo.out")" 'tfo-secret' "Fast Open: the request in the SYN reached python masked"
assert_match "$(cat "$WORK/tfo.out")" '^header: X-Keep: k' "Fast Open: the rest as sent"

# --- every way to read -----------------------------------------------------------
# readpaths.py accepts 0.3 s after the handshake: the request's first part
# is queued before accept() returns, its second part after the first read.
before=$(ostats)
for m in recv read readv recvmsg recv_into peek oob oobinline sendfile; do
	u=()
	case $m in oob | oobinline) u=(--urgent) ;; esac
	step "$m: the request answered" rp_send "$(rp_port "$m")" "${u[@]}"
	step "$m: both internal lines masked, the rest as sent" rp_check "$WORK/readpaths.log" "$m" masked
done
step "MSG_PEEK saw the first part masked too" rp_check "$WORK/readpaths.log" peek masked \
	--step "$(printf 'peek:GET /readpath HTTP/1.1\r\nHost: origin\r\ny-hdrstrip: xxxxxxxxxxxxxxx\r\nX-Tag: v')"
step "sendfile() from the socket: refused by the kernel" \
	rp_check "$WORK/readpaths.log" sendfile masked --step sendfile:EINVAL
for m in recv read readv recvmsg; do
	step "io_uring $m: the request answered" rp_send "$(ur_port "$m")"
	step "io_uring $m: both internal lines masked" rp_check --uring "$WORK/uring.log" "$m" masked
done
after=$(ostats)
assert_eq "$(grew "$before" "$after" recv_unscanned)" 0 "recv_unscanned (every read went through the program)"
assert_eq "$(grew "$before" "$after" conns_ended)" 0 "conns_ended"

# The blind spot: splice(2), io_uring's splice and TCP_ZEROCOPY_RECEIVE take
# bytes from the socket's own queue, where those that came before accept()
# wait for the first recvmsg(). They read them as sent; the program sees
# the gap at the next bytes, counts it and ends the connection.
before=$(ostats)
for m in splice zerocopy; do
	rp_send "$(rp_port "$m")" >/dev/null 2>&1 || true
	step "$m: read the bytes that came before accept() as sent, and nothing after" \
		rp_check "$WORK/readpaths.log" "$m" first-part
done
rp_send "$(ur_port splice)" >/dev/null 2>&1 || true
step "io_uring splice: the bytes that came before accept() as sent, nothing after" \
	rp_check --uring "$WORK/uring.log" splice first-part
after=$(ostats)
assert_eq "$(grew "$before" "$after" recv_unscanned)" 3 "recv_unscanned grew by (one per connection read past the program)"
assert_eq "$(grew "$before" "$after" conns_ended)" 3 "conns_ended grew by (those connections ended)"
# Once something went through the program, splice and zero-copy receive
# find nothing: the bytes wait in the psock's queue for recv().
for m in splice zerocopy; do
	step "$m, the request sent after accept(): answered" rp_send "$(rp_port "$m")" --wait 0.6
	step "$m, after accept(): nothing for $m, recv() gets it masked" \
		rp_check "$WORK/readpaths.log" "$m" masked
done

# --- drop: the connection ends ---------------------------------------------------
before=$(ostats)
rc=0
in_c "$PYTHON" - "$S4" "$PORT_NODE" >"$WORK/drop.out" 2>&1 <<'EOF' || rc=$?
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)
print("sport %d" % s.getsockname()[1], flush=True)
s.sendall(b"GET /drop HTTP/1.1\r\nHost: h\r\nX-Kill-Switch: on\r\nX-Test: drop-one\r\n\r\n")
time.sleep(0.3)
s.sendall(b"GET /later HTTP/1.1\r\nHost: h\r\nX-Test: after-the-drop\r\n\r\n")
try:
    print("answer: %r" % s.recv(65536))
except socket.timeout:
    print("no answer")
EOF
assert_match "$(cat "$WORK/drop.out")" '^no answer' "a drop rule's request: no answer (without the agent the connection stalls)"
after=$(ostats)
assert_eq "$(grew "$before" "$after" conns_ended)" 1 "drop rule: conns_ended grew by"
assert_eq "$(grew "$before" "$after" packets_dropped)" 1 "drop rule: packets_dropped grew by"
if grep -qE 'drop-one|after-the-drop' "$WORK/node.log"; then
	fail "node read bytes of a connection a drop ended"
fi
log "ok: node read nothing of the connection from the drop on"
hs events --cgroup "$CG" --json >"$WORK/events.json" || fail "events --cgroup --json failed"
sport=$(awk '$1 == "sport" { print $2 }' "$WORK/drop.out")
[[ $sport =~ ^[0-9]+$ ]] || fail "the drop's client printed no source port: $(cat "$WORK/drop.out")"
step "the drop's event names the client's address and port, and the origin's port" \
	"$PYTHON" "$E2E_DIR/events_check.py" --min 1 --want hook=receive --want action=drop \
	--want src="$C4" --want sport="$sport" --want dport="$PORT_NODE" --want reason=rule \
	< <(grep '"x-kill-switch"' "$WORK/events.json")

# With the agent running, the ended connection is reset: the client sees a
# RST, the application an error on its next read.
cat >"$WORK/agent.conf" <<EOF
[cgroup $CG]
headers = $LIST
ports = $PORTS
receive = yes
EOF
"$HDRSTRIP" run --config "$WORK/agent.conf" >"$WORK/agent.log" 2>&1 &
AGENT=$!
E2E_PIDS+=("$AGENT")
poll_until 10 grep -q 'run: 1 attachment' "$WORK/agent.log" || fail "the agent did not start: $(cat "$WORK/agent.log")"
before=$(ostats)
rc=0
in_c "$PYTHON" - "$S4" "$(rp_port recv)" >"$WORK/reset.out" 2>&1 <<'EOF' || rc=$?
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.sendall(b"GET /drop HTTP/1.1\r\nHost: h\r\nX-Kill-Switch: on\r\n\r\n")
try:
    print("answer: %r" % s.recv(65536))
except ConnectionResetError:
    print("reset")
    sys.exit(0)
sys.exit(1)
EOF
[ "$rc" -eq 0 ] || fail "the client of a dropped request was not reset: $(cat "$WORK/reset.out")"
log "ok: with the agent, the client of a dropped connection gets a reset"
after=$(ostats)
assert_eq "$(grew "$before" "$after" conns_ended)" 1 "agent: conns_ended grew by"
poll_until 5 grep -q 'reset 1 connection' "$WORK/agent.log" ||
	fail "the agent did not say it reset the connection: $(cat "$WORK/agent.log")"
log "ok: the agent: $(grep -m1 'reset 1 connection' "$WORK/agent.log")"
poll_until 5 grep -q '"error": "ECONNABORTED' "$WORK/readpaths.log" ||
	fail "the application's read did not fail with ECONNABORTED: $(tail -n 1 "$WORK/readpaths.log")"
log "ok: the application's read failed with ECONNABORTED, nothing read"
kill "$AGENT"
wait "$AGENT" 2>/dev/null || true

# Framing no server agrees on, under --on-error drop (the default): ended.
before=$(ostats)
rc=0
client "$S4" "$PORT_NODE" -H "Content-Length: 3" -H "Content-Length: 4" -H "X-Test: two-lengths" \
	--body "abcd" --timeout 1.5 --abort >"$WORK/resp" 2>&1 || rc=$?
assert_eq "$rc" 3 "two Content-Lengths: no answer"
after=$(ostats)
assert_eq "$(grew "$before" "$after" conns_ended)" 1 "two Content-Lengths: conns_ended grew by"
assert_ge "$(grew "$before" "$after" framing_conflict)" 1 "framing_conflict"
if grep -q 'two-lengths' "$WORK/node.log"; then
	fail "node read the request whose framing is ambiguous"
fi
log "ok: node never read the request with two Content-Lengths"

# --- observe mode ------------------------------------------------------------------
step "update --observe" hs update --cgroup "$CG" --headers "$LIST" --observe
before=$(ostats)
step "observe: a request answered" to_file "$WORK/resp" client "$S4" "$PORT_NODE" "${HDRS[@]}" \
	-H "X-Kill-Switch: on" --save "$WORK/req"
step "observe: every line arrives as sent" check_report --unmasked --sent "$WORK/req" --report "$WORK/resp"
after=$(ostats)
assert_eq "$(grew "$before" "$after" headers_observed)" 5 "observe: headers_observed grew by"
assert_eq "$(grew "$before" "$after" headers_masked)" 0 "observe: headers_masked grew by"
assert_eq "$(grew "$before" "$after" conns_ended)" 0 "observe: the drop rule ended nothing"
step "update --enforce" hs update --cgroup "$CG" --headers "$LIST" --enforce

# --- an update under traffic: each request masked by one list or the other ---
LIST2=$WORK/list2
{
	cat "$LIST"
	echo "x-keep-alpha"
} >"$LIST2"
in_c "$PYTHON" - "$S4" "$PORT_NODE" "$WORK/flip.out" <<'EOF' &
import socket, sys, time
out = open(sys.argv[3], "w")
end = time.monotonic() + 3
while time.monotonic() < end:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
    s.sendall(b"GET /flip HTTP/1.1\r\nHost: h\r\nX-Internal-Auth: s\r\nX-Keep-Alpha: a\r\n"
              b"Connection: close\r\n\r\n")
    got = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
    s.close()
    out.write(got.decode("latin-1").replace("\n", "|") + "\n")
out.close()
EOF
FLIP=$!
for i in 1 2 3 4 5 6; do
	if [ $((i % 2)) -eq 1 ]; then l=$LIST2; else l=$LIST; fi
	step "update $i under traffic" hs update --cgroup "$CG" --headers "$l"
	sleep 0.3
done
wait "$FLIP" || fail "the client under updates failed"
n=$(wc -l <"$WORK/flip.out")
assert_ge "$n" 10 "requests answered during the updates"
assert_eq "$(grep -cvE '^HTTP/1.1 200' "$WORK/flip.out" || true)" 0 "requests during the updates that failed"
if grep -qi 'x-internal-auth' "$WORK/flip.out"; then
	fail "an internal line reached node during the updates"
fi
both=$(grep -c 'header: y-hdrstrip: x*|header: y-hdrstrip: x*|' "$WORK/flip.out" || true)
one=$(grep -c 'header: X-Keep-Alpha: a|' "$WORK/flip.out" || true)
assert_eq "$((both + one))" "$n" "every request masked by one whole list (two lines masked, or one)"
step "back to the first list" hs update --cgroup "$CG" --headers "$LIST"

# --- detach ---------------------------------------------------------------------------
# 'slow' reads 2 s after accept(), 'stall' 13 s after (past what two
# detaches wait, 5 s each): their requests wait unread when detach starts
# (readpaths.py serves each connection in a thread of its own).
rp_send "$(rp_port slow)" >"$WORK/slow.out" 2>&1 &
SLOW=$!
rp_send "$(rp_port stall)" --timeout 25 >"$WORK/stall.out" 2>&1 &
STALL=$!
sleep 1
t0=$(date +%s%N)
out=$(hs detach --cgroup "$CG") || fail "detach --cgroup failed: $out"
log "detach took $((($(date +%s%N) - t0) / 1000000)) ms: $(tr '\n' ' ' <<<"$out")"
assert_match "$out" '1 connection still holds bytes' \
	"detach leaves the connection whose application has not read filtered"
[ -e "$BPFFS_ROOT/cgroup-$CG_ID/origins" ] || fail "the pins that keep that connection filtered went"
log "ok: its pins stay"
step "new connections: not filtered once detach returned" to_file "$WORK/resp" \
	client "$S4" "$PORT_NODE" "${HDRS[@]}" --save "$WORK/req"
step "new connections: every line arrives as sent" \
	check_report --unmasked --sent "$WORK/req" --report "$WORK/resp"
wait "$SLOW" || fail "the slow reader's client failed: $(cat "$WORK/slow.out")"
step "the slow reader got its request, masked, once detach was done with it" \
	rp_check "$WORK/readpaths.log" slow masked
out=$(hs detach --cgroup "$CG" 2>&1) && fail "detach with a connection still filtered succeeded: $out"
assert_match "$out" 'still hold 1 connection' "detach again, the connection still unread: refused"
wait "$STALL" || fail "the stalled reader's client failed: $(cat "$WORK/stall.out")"
step "the stalled reader got its request masked (filtered until it read it)" \
	rp_check "$WORK/readpaths.log" stall masked
out=$(hs detach --cgroup "$CG") || fail "the last detach failed: $out"
log "ok: detach again, once it was read: $(tr '\n' ' ' <<<"$out")"
if [ "$(seq_bugs)" != "$SEQ_BUGS0" ]; then
	fail "the kernel warned of a hole in a stream (TCP recvmsg seq # bug; this suite's, or one running beside it): $(dmesg | grep 'seq # bug' | tail -n 1)"
fi
log "ok: no hole in any stream (no 'TCP recvmsg seq # bug' in the kernel's log)"
assert_hook_clean receive
for sp in "${SERVERS[@]}"; do
	read -r name port <<<"$sp"
	step "detached, $name: request answered" to_file "$WORK/resp" \
		client "$S4" "$port" "${HDRS[@]}" --save "$WORK/req"
	step "detached, $name: every line arrives as sent" \
		check_report --unmasked --sent "$WORK/req" --report "$WORK/resp"
done
ids_left() {
	printf 'programs: %s; maps: %s' "$(bpf_ids_left prog "${ORIGIN_PROGS[@]}" | tr '\n' ' ')" \
		"$(bpf_ids_left map "${ORIGIN_MAPS[@]}" | tr '\n' ' ')"
}
none_left() { [ -z "$(bpf_ids_left prog "${ORIGIN_PROGS[@]}")$(bpf_ids_left map "${ORIGIN_MAPS[@]}")" ]; }
poll_until 10 none_left || fail "origin mode's programs or maps still exist 10 s after detach: $(ids_left)"
log "ok: none of its programs and maps is left (after ${POLL_WAITED} s)"

# The agent attaches origin mode itself (it resets what a drop ends): no
# warning then. --detach-on-exit: it detaches when it ends.
"$HDRSTRIP" run --config "$WORK/agent.conf" --detach-on-exit >"$WORK/agent2.log" 2>&1 &
AGENT=$!
E2E_PIDS+=("$AGENT")
poll_until 10 grep -q 'run: 1 attachment' "$WORK/agent2.log" ||
	fail "the agent did not start: $(cat "$WORK/agent2.log")"
assert_match "$(cat "$WORK/agent2.log")" '^attached receive to' "the agent attached origin mode"
assert_no_match "$(cat "$WORK/agent2.log")" 'cannot reset' \
	"the agent's attach does not warn that a dropped connection stalls"
kill "$AGENT"
wait "$AGENT" 2>/dev/null || true
assert_hook_clean receive
log "PASS"
