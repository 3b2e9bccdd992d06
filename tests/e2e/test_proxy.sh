#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: alone (it compares every sockhash, sockmap and sk_storage map before and after)
# Proxy mode (attach --cgroup): a child cgroup made here, client processes
# moved into it in the client namespace, the origins of lib.sh (node :80,
# nginx :8080, python :8081) and a byte-exact echo origin (servers/echo.py,
# :8082 inspected, :8090 not) in the server namespace. The origins must get
# every request as sent minus its internal field lines (with their
# continuation lines): no internal line at all, not even masked, and every
# other byte as sent (the echo origin answers with the exact bytes it got).
#  - curl: single requests, several URLs on one keep-alive connection, IPv6;
#  - a raw client (proxy_client.py) sending whole requests, pipelined
#    requests in one send(), random pieces (seeds printed), one byte per
#    send(), sendfile(), to the echo origin and to every origin of lib.sh;
#    a POST whose body holds text that looks like internal lines (intact,
#    Content-Length right); more internal lines in one send() than one run
#    of the program takes out, also at the send's first byte; requests over
#    64 KiB; a name that may be internal running past 64 KiB and a send()
#    starting with 64 KiB of internal lines (the on-error policy decides);
#    a send that takes more than one scan step a byte (43 KB of blanks in
#    a line after a request, then a request with an internal line): decided
#    under either policy, never given up;
#    a client in a child cgroup; counters against what was removed;
#  - a drop rule: send() fails with EACCES (curl fails), counted;
#  - a connection open before the attach: left alone, counted
#    (conns_preexisting); connections to other ports never in the sockhash;
#  - update under traffic (never a failure, never a mix of lists), detach:
#    it takes the connections in the sockhash out before it returns (polled
#    with a deadline all the same, the time logged; a poll needed fails),
#    then pass-through, also on connections that were filtered;
#  - status/stats --cgroup, their exit codes; bad use: not a cgroup v2
#    directory (2), attach twice (1), detach twice (1);
#  - the machine clean afterwards: no pins, nothing on the cgroup (bpftool
#    cgroup show), no sockhash or sk_storage map left.
# Known issues (tests/e2e/known-issues): proxy-tfo (a request sent with TCP
# Fast Open is never seen), proxy-detach-cork (bytes held back at a detach
# are lost).
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools curl node nginx stat
require_cli attach update detach status stats
grep -q -- '--cgroup' <<<"$("$HDRSTRIP" attach --help 2>&1)" || skip "hdrstrip has no proxy mode (attach --cgroup)"

CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG_ROOT" ] && [ -d "$CG_ROOT" ] || skip "no cgroup2 hierarchy in /proc/mounts"
[ -e "$CG_ROOT/cgroup.procs" ] || skip "$CG_ROOT has no cgroup.procs"

PORT_ECHO=8082
PORT_OTHER=8090 # not inspected
PX_PORTS=$HS_PORTS,$PORT_ECHO
CG= CG_ID= PIN=

# --- cleanup: the cgroup's processes, attachment, pins, the cgroup itself ---
cg_empty() { [ -z "$(cat "$1/cgroup.procs" 2>/dev/null)" ]; }
proxy_cleanup() {
	local p
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		"$HDRSTRIP" detach --cgroup "$CG" >/dev/null 2>&1
		if [ -e "$CG/cgroup.kill" ]; then
			echo 1 >"$CG/cgroup.kill" 2>/dev/null
		else
			for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do
				kill -KILL "$p" 2>/dev/null
			done
		fi
		# The kernel ends the processes some time after cgroup.kill.
		poll_until 5 cg_empty "$CG"
		[ -d "$CG/sub" ] && rmdir "$CG/sub" 2>/dev/null
		rmdir "$CG" 2>/dev/null || printf '[%s] cannot remove %s\n' "$E2E_NAME" "$CG" >&2
	fi
	[ -n "$PIN" ] && rm -rf "$PIN"
}
proxy_exit() {
	local rc=$?
	set +e
	proxy_cleanup
	(exit "$rc")
	cleanup
}
trap proxy_exit EXIT

topo_setup
start_servers
# The echo origin takes data in the SYN (TCP Fast Open, server side: bit 2).
step "TCP Fast Open for servers in $SNS" ip netns exec "$SNS" sysctl -qw net.ipv4.tcp_fastopen=3
ip netns exec "$SNS" "$PYTHON" "$E2E_DIR/servers/echo.py" --port "$PORT_ECHO" \
	--port "$PORT_OTHER" --log "$WORK/echo.requests" --fastopen >"$WORK/echo.out.log" 2>&1 &
E2E_PIDS+=($!)
wait_listen "$SNS" "$PORT_ECHO" echo $!
wait_listen "$SNS" "$PORT_OTHER" echo $!
log "ok: echo origin on :$PORT_ECHO and :$PORT_OTHER"

LIST=$WORK/list
write_main_list "$LIST"

# has_line TEXT REGEX WHAT: lib.sh's assert_match, without its pipe: there
# grep -q may exit at a match while printf still writes the lines after it,
# and pipefail turns printf's SIGPIPE into a failed match (seen here).
has_line() {
	grep -qiE -- "$2" <<<"$1" || fail "$3: output does not match /$2/: $(head -c 600 <<<"$1")"
	log "ok: $3"
}

proxy_tool() { "$PYTHON" "$E2E_DIR/proxy_tool.py" "$@"; }
sock_maps() { bpftool -j map show | proxy_tool sock-maps; }
# in_sockhash ID COOKIE: is the socket with COOKIE in the sockhash with map
# id ID? A map that is gone holds nothing. (bpftool -j prints its error as
# JSON on stdout.)
in_sockhash() {
	local out keys
	if ! out=$(bpftool -j map dump id "$1" 2>&1); then
		grep -q "No such file or directory" <<<"$out" && return 1
		fail "bpftool map dump id $1: $out"
	fi
	keys=$(proxy_tool cookies <<<"$out") || fail "cannot read the dump of map $1: $out"
	grep -qx "$2" <<<"$keys"
}
step "sockhash and sk_storage maps before the test" to_file "$WORK/maps.before" sock_maps

# CG is set once the directory is ours: the cleanup removes what CG names.
cg=$CG_ROOT/hse2e-proxy-$$
[ -e "$cg" ] && fail "$cg already exists"
step "make the cgroup $cg" mkdir "$cg"
CG=$cg
E2E_CG=$cg # lib.sh's in_cg runs there (proxy_cleanup empties and removes it)
CG_ID=$(stat -c %i "$CG")
PIN=$BPFFS_ROOT/cgroup-$CG_ID

pc() { in_cg "$PYTHON" "$E2E_DIR/proxy_client.py" "$@"; }
hs() { "$HDRSTRIP" "$@"; }

# px_stats: the cgroup's counters as "name value" lines.
px_stats() {
	local out
	out=$(hs stats --cgroup "$CG" --json) || fail "stats --cgroup --json failed: $out"
	printf '%s\n' "$out" | "$PYTHON" "$E2E_DIR/json_counters.py" stats "cgroup-$CG_ID" ||
		fail "cannot read stats --cgroup --json: $out"
}

# Background clients, held open at a gate: start_held NAME ARGS... runs
# proxy_client with ARGS, waits until it is connected; open_gate NAME lets
# it send; wait_held NAME waits for its verdict.
declare -A HELD
start_held() {
	local name=$1 i
	shift
	rm -f "$WORK/$name.ready" "$WORK/$name.gate"
	pc "$@" --ready "$WORK/$name.ready" --gate "$WORK/$name.gate" \
		--cookie-file "$WORK/$name.cookie" >"$WORK/$name.out" 2>&1 &
	HELD[$name]=$!
	E2E_PIDS+=($!)
	for i in $(seq 1 200); do
		[ -e "$WORK/$name.ready" ] && break
		kill -0 "${HELD[$name]}" 2>/dev/null || fail "$name: client exited: $(cat "$WORK/$name.out")"
		sleep 0.05
	done
	[ -e "$WORK/$name.ready" ] || fail "$name: the client did not connect"
	log "ok: $name: connected (cookie $(cat "$WORK/$name.cookie")), held"
}
open_gate() { touch "$WORK/$1.gate"; }
wait_held() { # NAME WHAT
	local rc=0
	wait "${HELD[$1]}" || rc=$?
	[ "$rc" -eq 0 ] || fail "$2: exit $rc: $(cat "$WORK/$1.out")"
	log "ok: $2: $(tail -n 1 "$WORK/$1.out")"
}

# --- bad use, before anything is attached ------------------------------------
for bad in /tmp "$WORK" "$CG/cgroup.procs" "$CG_ROOT/hse2e-no-such-cgroup-$$"; do
	expect_exit 2 "attach --cgroup $bad (not a cgroup v2 directory)" \
		hs attach --cgroup "$bad" --headers "$LIST"
done
has_line "$EXPECT_OUT" "$CG_ROOT/hse2e-no-such-cgroup-$$" "a missing cgroup: message names it"
expect_exit 2 "attach --cgroup /tmp: message" hs attach --cgroup /tmp --headers "$LIST"
has_line "$EXPECT_OUT" "not a cgroup v2 directory" "not a cgroup: message says so"
expect_exit 2 "status --cgroup /tmp" hs status --cgroup /tmp
expect_exit 2 "stats --cgroup /tmp" hs stats --cgroup /tmp
expect_exit 2 "detach --cgroup /tmp" hs detach --cgroup /tmp
expect_exit 2 "attach with --cgroup and a DEV" hs attach "$CDEV" --cgroup "$CG" --headers "$LIST"
expect_exit 2 "attach with --cgroup and --hook" hs attach --cgroup "$CG" --hook xdp --headers "$LIST"
expect_exit 2 "attach --cgroup without --headers" hs attach --cgroup "$CG"
expect_exit 1 "status of a cgroup with nothing attached" hs status --cgroup "$CG"
has_line "$EXPECT_OUT" "not attached" "status: message says not attached"
expect_exit 1 "stats of a cgroup with nothing attached" hs stats --cgroup "$CG"
expect_exit 1 "detach a cgroup with nothing attached" hs detach --cgroup "$CG"
expect_exit 1 "update a cgroup with nothing attached" hs update --cgroup "$CG" --headers "$LIST"
[ ! -e "$PIN" ] || fail "nothing attached, yet $PIN exists"
out=$(bpftool cgroup show "$CG")
assert_eq "$out" "" "nothing attached: bpftool cgroup show $CG"

# --- a connection open before the attach ---------------------------------------
start_held pre --set basic --expect unchanged "$S4" "$PORT_ECHO"

# --- attach -------------------------------------------------------------------
# From the test's own namespace, not the client's: a cgroup is no network
# namespace's, and the connections of its processes are found all the same.
step "attach --cgroup" to_file "$WORK/attach.out" hs attach --cgroup "$CG" --headers "$LIST" \
	--ports "$PX_PORTS"
has_line "$(cat "$WORK/attach.out")" "attached cgroup to 'cgroup-$CG_ID'" "attach: output"
expect_exit 1 "attach twice" hs attach --cgroup "$CG" --headers "$LIST"
has_line "$EXPECT_OUT" "already attached" "attach twice: message says already attached"
# The hint names commands that work (it once said 'detach cgroup-ID --hook
# cgroup', which exits 2).
has_line "$EXPECT_OUT" "'hdrstrip update --cgroup $CG --headers FILE'.*'hdrstrip detach --cgroup $CG'" \
	"attach twice: the hint names update --cgroup and detach --cgroup"
for m in trie config counters header_hits socks; do
	[ -e "$PIN/$m" ] || fail "attach: no $PIN/$m"
done
log "ok: maps pinned in $PIN (trie config counters header_hits socks)"

step "status --cgroup" to_file "$WORK/status" hs status --cgroup "$CG"
st=$(cat "$WORK/status")
has_line "$st" "^cgroup-$CG_ID: cgroup $CG \(proxy mode" "status: names the cgroup"
has_line "$st" "^  cgroup +program [0-9]+" "status: the sockops program"
has_line "$st" "ports +80,8080-8082" "status: ports"
has_line "$st" "on-error +drop" "status: policy"
prog=$(awk '$1 == "cgroup" && $2 == "program" { print $3 }' "$WORK/status")
step "status --cgroup --json" to_file "$WORK/status.json" hs status --cgroup "$CG" --json
step "status --json: cgroup, cgroup_id, hook" "$PYTHON" -c '
import json, sys
docs = json.load(open(sys.argv[1]))
assert isinstance(docs, list) and len(docs) == 1, docs
d = docs[0]
assert d["cgroup"] == sys.argv[2], d["cgroup"]
assert d["cgroup_id"] == int(sys.argv[3]), d["cgroup_id"]
assert [h["hook"] for h in d["hooks"]] == ["cgroup"], d["hooks"]
assert d["hooks"][0]["prog_id"] == int(sys.argv[4]), d["hooks"]
assert d["pin_dir"] == sys.argv[5], d["pin_dir"]
assert d["ports"] == [80, [8080, 8082]], d["ports"]
# No flow table in proxy mode: flows is the sockhash'"'"'s size (bpftool'"'"'s).
assert d["hooks"][0]["flows"] == d["flows"] == int(sys.argv[6]), (d["hooks"], d["flows"], sys.argv[6])
' "$WORK/status.json" "$CG" "$CG_ID" "$prog" "$PIN" \
	"$(bpftool -j map show pinned "$PIN/socks" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["max_entries"])')"
has_line "$st" "^  flows +[0-9]+ connections at once, out and as many in \(the sockhashes" "status: the sockhashes' size"
out=$(bpftool cgroup show "$CG")
has_line "$out" "^$prog +(cgroup_)?sock_ops .*hdrstrip_sockops" "bpftool cgroup show: the sockops program"
step "stats --cgroup" to_file "$WORK/stats.txt" hs stats --cgroup "$CG"
# Proxy mode in the plain commands too, named by its cgroup's path.
step "stats (every attachment)" to_file "$WORK/stats-all.txt" hs stats
has_line "$(cat "$WORK/stats-all.txt")" "cgroup-$CG_ID" "stats: lists the cgroup"
step "stats --prometheus" to_file "$WORK/proxy.prom" hs stats --prometheus
step "stats --prometheus: the cgroup's series and hook" "$PYTHON" - "$E2E_DIR/../install/promcheck.py" \
	"$WORK/proxy.prom" "$CG" <<'EOF'
import json, subprocess, sys
fams = json.loads(subprocess.run([sys.executable, sys.argv[1], "--json", sys.argv[2]],
                                 check=True, capture_output=True, text=True).stdout)
cg = sys.argv[3]
info = [l for l, v in fams["hdrstrip_attached_info"]["samples"] if l.get("cgroup") == cg]
assert info == [{"cgroup": cg, "hook": "cgroup", "mode": "sockops+sk_msg"}], fams["hdrstrip_attached_info"]
assert [l for l, _ in fams["hdrstrip_http_requests_total"]["samples"] if l.get("cgroup") == cg], \
    fams["hdrstrip_http_requests_total"]
EOF
has_line "$(cat "$WORK/stats.txt")" "headers_removed" "stats: headers_removed shown"
assert_eq "$(px_stats | counter conns_preexisting)" 1 "conns_preexisting (the held connection)"

# The held connection never passed the sockops program: left alone.
open_gate pre
wait_held pre "a connection opened before the attach passes unchanged"

# --- curl ------------------------------------------------------------------------
# curl_case WHAT ORIGIN URL...: curl in the cgroup, headers from CURL_H, all
# URLs on one connection; each request curl sent (its --trace), minus its
# internal lines, is what ORIGIN reports (echo: byte for byte).
CURL_N=0
CURL_H=(-H "X-Internal-Auth: secret-c" -H "X-Keep: k" -H "x-edge-secret-zone: z"
	-H "X_INTERNAL_TENANT: t" -H "X-Internal-Authority: kept")
curl_case() {
	local what=$1 origin=$2 d args=() i=0 u n
	shift 2
	CURL_N=$((CURL_N + 1))
	d=$WORK/curl-$CURL_N
	mkdir "$d"
	for u in "$@"; do
		i=$((i + 1))
		args+=(-o "$d/resp.$i" "$u")
	done
	step "$what: curl" to_file "$d/connects" in_cg curl -sS --fail --max-time 10 \
		--trace "$d/trace" -w '%{num_connects}\n' "${CURL_H[@]}" "${args[@]}"
	assert_eq "$(awk '{ s += $1 } END { print s }' "$d/connects")" 1 "$what: connections opened"
	n=$(proxy_tool curl-sent "$d/trace" "$d/sent") || fail "$what: cannot read curl's trace"
	assert_eq "$n" "$#" "$what: requests sent"
	for i in $(seq 1 "$#"); do
		step "$what: request $i as the origin should get it" \
			proxy_tool expect "$LIST" "$d/sent.$i" "$d/want.$i"
		check_origin "$what: request $i" "$origin" "$d/want.$i" "$d/resp.$i"
	done
}
# check_origin WHAT ORIGIN WANT RESP
check_origin() {
	case $2 in
	echo)
		step "$1: the origin got every byte, minus the internal lines" cmp "$3" "$4"
		;;
	nginx)
		# nginx writes its own Connection line, and Content-Length after Host.
		step "$1: nginx's upstream got the field lines, minus the internal ones" \
			check_report --sent "$3" --report "$4" --unmasked --ignore connection,content-length
		;;
	*)
		step "$1: $2 got the field lines, minus the internal ones" \
			check_report --sent "$3" --report "$4" --unmasked --ignore ''
		;;
	esac
}

curl_case "curl to echo" echo "http://$S4:$PORT_ECHO/one"
curl_case "curl to echo, keep-alive" echo "http://$S4:$PORT_ECHO/a" "http://$S4:$PORT_ECHO/b?c=d" \
	"http://$S4:$PORT_ECHO/e"
curl_case "curl to echo, IPv6" echo "http://[$S6]:$PORT_ECHO/v6" "http://[$S6]:$PORT_ECHO/v6b"
for srv in "${SERVERS[@]}"; do
	read -r name port <<<"$srv"
	curl_case "curl to $name" "$name" "http://$S4:$port/single"
	curl_case "curl to $name, keep-alive" "$name" "http://$S4:$port/k1" "http://$S4:$port/k2" \
		"http://$S4:$port/k3"
done
curl_case "curl to node, IPv6" node "http://[$S6]:$PORT_NODE/v6"

# A POST through curl: the body (text that looks like internal lines) intact.
printf 'X-Internal-Auth: body text\r\nx-edge-secret-a: body\r\n\r\nGET / HTTP/1.1\r\n' >"$WORK/body"
CURL_H+=(--data-binary "@$WORK/body" -H "Content-Type: text/plain")
curl_case "curl POST to echo" echo "http://$S4:$PORT_ECHO/post"
curl_case "curl POST to node" node "http://$S4:$PORT_NODE/post"
blen=$(stat -c %s "$WORK/body")
has_line "$(cat "$WORK/curl-$CURL_N/resp.1")" "^body-bytes: $blen\$" "node got the whole body ($blen bytes)"
unset 'CURL_H[-1]' 'CURL_H[-1]' 'CURL_H[-1]' 'CURL_H[-1]'

# --- a raw client: whole, pipelined, random pieces, byte by byte -----------------
SEEDS=()
for i in 1 2 3 4 5 6; do
	SEEDS+=($((RANDOM * 32768 + RANDOM)))
done
log "random piece seeds: ${SEEDS[*]}"
for set in basic post pipeline; do
	for mode in whole pipelined bytes; do
		step "echo: $set, $mode" pc "$S4" "$PORT_ECHO" --set "$set" --list "$LIST" --send "$mode"
	done
	for seed in "${SEEDS[@]}"; do
		max=$((seed % 23 + 2))
		step "echo: $set, random pieces of 1..$max bytes (seed $seed)" pc "$S4" "$PORT_ECHO" \
			--set "$set" --list "$LIST" --send random --seed "$seed" --max-piece "$max"
	done
done
step "echo, IPv6: basic, random pieces (seed ${SEEDS[0]})" pc "$S6" "$PORT_ECHO" --set basic \
	--list "$LIST" --send random --seed "${SEEDS[0]}"
step "echo, IPv6: pipeline, bytes" pc "$S6" "$PORT_ECHO" --set pipeline --list "$LIST" --send bytes
step "echo: 80 internal lines in two requests, one send()" pc "$S4" "$PORT_ECHO" --set many \
	--list "$LIST" --send pipelined
step "echo: 80 internal lines, random pieces (seed ${SEEDS[1]})" pc "$S4" "$PORT_ECHO" --set many \
	--list "$LIST" --send random --seed "${SEEDS[1]}" --max-piece 300
step "echo: a 70 KiB header block and a 177 KB body, one send()" pc "$S4" "$PORT_ECHO" --set big \
	--list "$LIST" --send pipelined
step "echo: the same, random pieces (seed ${SEEDS[2]})" pc "$S4" "$PORT_ECHO" --set big \
	--list "$LIST" --send random --seed "${SEEDS[2]}" --max-piece 5000

for set in basic pipeline; do
	step "echo: $set, one sendfile()" pc "$S4" "$PORT_ECHO" --set "$set" --list "$LIST" --send sendfile
done
# A send() that starts with 40 internal lines: more ranges than one run of
# the program takes out; the lines after them are checked all the same.
for mode in cut pipelined; do
	step "echo: 40 internal lines at the start of a send() ($mode)" pc "$S4" "$PORT_ECHO" \
		--set fill --list "$LIST" --send "$mode" --cut-after-line Host
done
# A whole 64 KiB window of internal lines: nothing to pass while the rest
# waits: the on-error policy (drop) decides.
before=$(px_stats)
step "echo: a send() that starts with 75 KB of internal lines: EACCES (on-error drop)" \
	pc "$S4" "$PORT_ECHO" --set fillwindow --list "$LIST" --send cut --cut-after-line Host \
	--expect-eacces
after=$(px_stats)
assert_eq "$(($(counter scan_incomplete <<<"$after") - $(counter scan_incomplete <<<"$before")))" 1 \
	"scan_incomplete grew by"

# A name that may still be internal and runs past the 64 KiB the program
# scans: the on-error policy decides (drop: the send fails), counted.
before=$(px_stats)
step "echo: a 70 KB name that may be internal: EACCES (on-error drop)" pc "$S4" "$PORT_ECHO" \
	--set longname --list "$LIST" --expect-eacces
after=$(px_stats)
for c in scan_incomplete packets_dropped; do
	assert_eq "$(($(counter $c <<<"$after") - $(counter $c <<<"$before")))" 1 "$c grew by"
done
# Response rules apply to connections the cgroup's processes accept
# (test_proxy_responses.sh); these clients accept none. The update goes
# through without a warning.
{ cat "$LIST"; printf 'x-backend-server  mask  response\n'; } >"$WORK/with-resp.list"
expect_exit 0 "update with a response rule" hs update --cgroup "$CG" --headers "$WORK/with-resp.list"
assert_no_match "$EXPECT_OUT" 'warning' "update with a response rule: no warning"
step "update --on-error pass" hs update --cgroup "$CG" --headers "$LIST" --on-error pass
has_line "$(hs status --cgroup "$CG")" "on-error +pass" "status: on-error pass"
step "echo: the 70 KB name passes, uninspected (on-error pass)" pc "$S4" "$PORT_ECHO" \
	--set longname --expect unchanged
assert_eq "$(($(counter scan_incomplete <<<"$(px_stats)") - $(counter scan_incomplete <<<"$after")))" 1 \
	"scan_incomplete grew by"

# A send the scanner decides in more than one step a byte: after a request,
# a 65,456-byte line of a name the prefix rule x-edge-secret-* matches, 43
# KB of blanks and 'z' bytes (read as a request line, then line by line:
# about 90,000 steps for the first 64 KiB window; test_three_walks_one_line
# in tests/unit/test_fuzz_regress.c), then a request with an internal line,
# all in one send(). The program's budget (HS_STEPS_PER_BYTE steps a byte,
# bpf/scan_loop.h) lets it finish: nothing goes to the on-error policy (with
# a step a byte, pass sent the internal line on, drop failed the send). The
# line, a listed name alone with no colon, is masked as any field line is
# once the connection goes line by line (in place, not taken out: the
# connection's byte counts stay as sent).
for policy in pass drop; do
	step "update --on-error $policy" hs update --cgroup "$CG" --headers "$LIST" --on-error "$policy"
	d=$WORK/threewalks-$policy
	mkdir "$d"
	before=$(px_stats)
	step "echo: 43 KB of blanks in one line after a request, then a request, one send() (on-error $policy)" \
		pc "$S4" "$PORT_ECHO" --set threewalks --send pipelined --no-check --save-dir "$d"
	after=$(px_stats)
	if grep -qai '^x-internal-auth' "$d/resp.2"; then
		fail "on-error $policy: the origin got $(grep -ai -m 1 '^x-internal-auth' "$d/resp.2" | tr -d '\r')"
	fi
	log "ok: on-error $policy: the origin got no X-Internal-Auth line"
	# The origin gets the first request as sent, then the line and the
	# request after it with their internal lines masked in place.
	step "on-error $policy: request 1 as the origin should get it" \
		proxy_tool expect "$LIST" "$d/sent.1" "$d/want.1"
	check_origin "on-error $policy: request 1" echo "$d/want.1" "$d/resp.1"
	step "on-error $policy: the line and request 2 as the origin should get them" \
		proxy_tool expect-masked "$LIST" "$d/sent.2" "$d/want.2"
	check_origin "on-error $policy: the line and request 2" echo "$d/want.2" "$d/resp.2"
	for k in scan_incomplete:0 packets_dropped:0 desync:1 headers_removed:0 headers_masked:2 \
		removed_bytes:0; do
		c=${k%%:*}
		assert_eq "$(($(counter "$c" <<<"$after") - $(counter "$c" <<<"$before")))" "${k#*:}" \
			"on-error $policy: $c grew by"
	done
done

# A process in a cgroup below the attached one is filtered too.
step "make the child cgroup $CG/sub" mkdir "$CG/sub"
step "echo: a client in $CG/sub, random pieces (seed ${SEEDS[4]})" \
	nsenter --net="/run/netns/$CNS" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG/sub" \
	"$PYTHON" "$E2E_DIR/proxy_client.py" "$S4" "$PORT_ECHO" --set pipeline --list "$LIST" \
	--send random --seed "${SEEDS[4]}"
step "remove $CG/sub" rmdir "$CG/sub"

# TCP Fast Open: the data leaves with (or right after) the SYN, before the
# connection is established and put in the sockhash.
# hdrstrip cannot see those bytes; it counts such connections.
# The client namespace's count of connections whose SYN carried data.
syn_data() {
	ip netns exec "$CNS" nstat -az TcpExtTCPFastOpenActive |
		awk '$1 == "TcpExtTCPFastOpenActive" { print $2 }'
}
if [ $(($(ip netns exec "$CNS" sysctl -n net.ipv4.tcp_fastopen) & 1)) -eq 1 ]; then
	tfo0=$(px_stats | counter fastopen_unfiltered)
	assert_eq "$tfo0" 0 "fastopen_unfiltered before any Fast Open connection"
	rc=0
	pc "$S4" "$PORT_ECHO" --set basic --list "$LIST" --fastopen >"$WORK/tfo.out" 2>&1 || rc=$?
	# The first connection to the origin has no cookie yet: its bytes go
	# right after the handshake, from the same sendto(). The second has
	# one: its bytes go with the SYN.
	syn_data0=$(syn_data)
	pc "$S4" "$PORT_ECHO" --set basic --list "$LIST" --fastopen >>"$WORK/tfo.out" 2>&1 || rc=$?
	assert_eq "$(($(syn_data) - syn_data0))" 1 "the second connection's data went in its SYN (TcpExtTCPFastOpenActive grew by)"
	assert_eq "$(($(px_stats | counter fastopen_unfiltered) - tfo0))" 2 \
		"fastopen_unfiltered grew by (two Fast Open connections)"
	if [ "$rc" -eq 0 ]; then
		log "ok: a request sent with TCP Fast Open loses its internal lines"
	else
		known_issue proxy-tfo "a request sent with TCP Fast Open (sendto MSG_FASTOPEN) reached the origin with its internal lines ($(grep -m 1 'first difference' "$WORK/tfo.out" | cut -d: -f2-))"
	fi
else
	log "the client namespace has TCP Fast Open off (net.ipv4.tcp_fastopen): not checked"
fi

# The same through real parsers: every origin of lib.sh.
for srv in "${SERVERS[@]}"; do
	read -r name port <<<"$srv"
	for mode in whole pipelined bytes random; do
		d=$WORK/raw-$name-$mode
		mkdir "$d"
		step "$name: origin set, $mode" pc "$S4" "$port" --set origin --send "$mode" \
			--seed "${SEEDS[3]}" --no-check --save-dir "$d"
		for i in 1 2; do
			step "$name, $mode: request $i as the origin should get it" \
				proxy_tool expect "$LIST" "$d/sent.$i" "$d/want.$i"
			check_origin "$name, $mode: request $i" "$name" "$d/want.$i" "$d/resp.$i"
		done
		blen=$(proxy_tool body-length "$d/sent.2")
		has_line "$(cat "$d/resp.2")" "^body-bytes: $blen\$" "$name, $mode: the POST's whole body"
	done
done

# Counters: one request, known lines and bytes.
before=$(px_stats)
step "echo: basic, whole, for the counters" pc "$S4" "$PORT_ECHO" --set basic --list "$LIST"
after=$(px_stats)
step "what the basic set loses" to_file "$WORK/removed" pc "$S4" "$PORT_ECHO" --set basic --print-set
read -r lines bytes <<<"$(proxy_tool removed "$LIST" "$WORK/removed")"
for k in headers_removed:$lines removed_bytes:$bytes headers_matched:$lines flows_new:1 \
	http_requests:1; do
	c=${k%%:*}
	assert_eq "$(($(counter "$c" <<<"$after") - $(counter "$c" <<<"$before")))" "${k#*:}" \
		"$c grew by"
done
seen=$(($(counter headers_seen <<<"$after") - $(counter headers_seen <<<"$before")))
# One byte per send(): lines are held and scanned again; each still counts once.
before=$(px_stats)
step "echo: basic, one byte per send(), for the counters" pc "$S4" "$PORT_ECHO" --set basic \
	--list "$LIST" --send bytes
after=$(px_stats)
for k in headers_removed:$lines removed_bytes:$bytes headers_seen:$seen http_requests:1; do
	c=${k%%:*}
	assert_eq "$(($(counter "$c" <<<"$after") - $(counter "$c" <<<"$before")))" "${k#*:}" \
		"one byte per send(): $c grew by"
done

# --- a drop rule ---------------------------------------------------------------------
before=$(px_stats)
step "drop rule: send() fails with EACCES" pc "$S4" "$PORT_ECHO" --set drop --list "$LIST" \
	--expect-eacces
step "drop rule, one byte per send(): EACCES" pc "$S4" "$PORT_ECHO" --set drop --list "$LIST" \
	--expect-eacces --send bytes
rc=0
in_cg curl -sS --max-time 10 -H "X-Kill-Switch: on" -H "X-Keep: k" "http://$S4:$PORT_NODE/killed" \
	>"$WORK/curl-drop.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "drop rule: curl succeeded: $(cat "$WORK/curl-drop.out")"
has_line "$(cat "$WORK/curl-drop.out")" "Permission denied" "drop rule: curl fails (exit $rc), send() denied"
after=$(px_stats)
assert_eq "$(($(counter packets_dropped <<<"$after") - $(counter packets_dropped <<<"$before")))" 3 \
	"packets_dropped grew by (one per request)"
if grep -qi 'kill-switch\|/killed' "$WORK/node.log"; then
	fail "node got (part of) the dropped request: $(grep -i 'kill-switch\|/killed' "$WORK/node.log")"
fi
log "ok: node never saw the dropped request"

# --- connections to other ports never enter the sockhash -------------------------------
before=$(px_stats)
start_held other --set basic --expect unchanged "$S4" "$PORT_OTHER"
start_held inspected --set basic --list "$LIST" "$S4" "$PORT_ECHO"
step "dump the sockhash" to_file "$WORK/socks.json" bpftool -j map dump pinned "$PIN/socks"
keys=$(proxy_tool cookies <"$WORK/socks.json") || fail "cannot read the sockhash dump"
grep -qx "$(cat "$WORK/inspected.cookie")" <<<"$keys" ||
	fail "the connection to :$PORT_ECHO is not in the sockhash: $keys"
log "ok: the connection to :$PORT_ECHO is in the sockhash"
if grep -qx "$(cat "$WORK/other.cookie")" <<<"$keys"; then
	fail "the connection to :$PORT_OTHER (not inspected) is in the sockhash"
fi
log "ok: the connection to :$PORT_OTHER is not in the sockhash"
open_gate other
open_gate inspected
wait_held other "a connection to :$PORT_OTHER passes unchanged"
wait_held inspected "the connection to :$PORT_ECHO loses its internal lines"
after=$(px_stats)
assert_eq "$(($(counter flows_new <<<"$after") - $(counter flows_new <<<"$before")))" 1 \
	"flows_new grew by (the inspected port only)"

# --- update under traffic ------------------------------------------------------------
printf '# list A\nx-list-a-*\nx-common-secret\nx-kill-switch drop\n' >"$WORK/a"
printf '# list B\nx-list-b-1\nX-LIST-B-2\nx-list-b-3\nx-common-secret\nx-kill-switch drop\n' >"$WORK/b"
for l in b a; do
	step "update --cgroup to list $l" hs update --cgroup "$CG" --headers "$WORK/$l"
	step "list $l applies" pc "$S4" "$PORT_ECHO" --set update --list "$WORK/$l"
done
expect_exit 2 "update with a bad list" hs update --cgroup "$CG" --headers "$WORK/no-such-list"
step "after a bad update, list a still applies" pc "$S4" "$PORT_ECHO" --set update --list "$WORK/a"
gen0=$(hs status --cgroup "$CG" --json | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)[0]["generation"])')
rm -f "$WORK/stop"
UPD_PIDS=() UPD_NAMES=()
for spec in "one whole" "new whole" "one pipelined"; do
	read -r conns mode <<<"$spec"
	UPD_NAMES+=("update-$conns-$mode")
	pc "$S4" "$PORT_ECHO" --set update --list "$WORK/a" --alt-list "$WORK/b" --conns "$conns" \
		--send "$mode" --repeat 200 --stop "$WORK/stop" --progress "$WORK/progress-$conns-$mode" \
		>"$WORK/update-$conns-$mode.out" 2>&1 &
	UPD_PIDS+=($!)
	E2E_PIDS+=($!)
done
for i in $(seq 1 200); do
	[ "$(cat "$WORK/progress-one-whole" 2>/dev/null || echo 0)" -ge 50 ] && break
	sleep 0.05
done
SWITCHES=40
for i in $(seq 1 "$SWITCHES"); do
	if [ $((i % 2)) -eq 1 ]; then l=b; else l=a; fi
	out=$(hs update --cgroup "$CG" --headers "$WORK/$l" 2>&1) || fail "update $i to list $l: $out"
done
log "ok: $SWITCHES updates under traffic"
touch "$WORK/stop"
for i in "${!UPD_PIDS[@]}"; do
	rc=0
	wait "${UPD_PIDS[$i]}" || rc=$?
	f=$WORK/${UPD_NAMES[$i]}.out
	[ "$rc" -eq 0 ] || fail "update under traffic: ${UPD_NAMES[$i]} failed (exit $rc): $(cat "$f")"
	log "ok: ${UPD_NAMES[$i]}: $(tail -n 1 "$f")"
done
gen1=$(hs status --cgroup "$CG" --json | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)[0]["generation"])')
assert_eq "$((gen1 - gen0))" "$SWITCHES" "generation grew by one per update"
step "after the updates, list a applies" pc "$S4" "$PORT_ECHO" --set update --list "$WORK/a"
step "back to the main list" hs update --cgroup "$CG" --headers "$LIST"

# --- the sockhash empties as connections close -----------------------------------------
socks_left() { bpftool -j map dump pinned "$PIN/socks" | proxy_tool cookies | wc -l; }
sockhash_empty() {
	local n
	n=$(socks_left) || return 1
	[ "$n" -eq 0 ]
}
poll_until 5 sockhash_empty ||
	fail "sockets left in the sockhash 5 s after every client is done: $(socks_left)"
log "ok: the sockhash is empty once every client is done (after ${POLL_WAITED}s)"

# Everything the real origins reported so far: no internal line, masked or not.
INTERNAL_RE='^(header|app-header|trailer): *(x[-_]internal[-_](auth|tenant|trace)|x[-_]edge[-_]secret[-_][^:]*|[a-z]-hdrstrip) *:'
for name in node nginx python; do
	[ -s "$WORK/$name.log" ] || fail "$name reported nothing"
	if grep -iE "$INTERNAL_RE" "$WORK/$name.log" >"$WORK/$name.leaks"; then
		fail "$name got internal (or masked) lines: $(head -n 3 "$WORK/$name.leaks")"
	fi
	log "ok: $name: $(grep -c '^server: ' "$WORK/$name.log") reports, no internal or masked line"
done

# --- detach ------------------------------------------------------------------------------
start_held filtered --set basic --expect unchanged "$S4" "$PORT_ECHO"
# One stopped inside an internal name: those bytes are held (corked).
start_held cut --set basic --expect unchanged --gate-at X-Internal-Auth "$S4" "$PORT_ECHO"
SOCKS_ID=$(bpftool -j map show pinned "$PIN/socks" |
	"$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["id"])') ||
	fail "cannot read the sockhash's map id"
for name in filtered cut; do
	in_sockhash "$SOCKS_ID" "$(cat "$WORK/$name.cookie")" ||
		fail "$name: not in the sockhash (map id $SOCKS_ID) before the detach"
done
log "ok: both held connections are in the sockhash (map id $SOCKS_ID)"
# The test holds the sockhash across the detach (a pin of its own): its id
# vanishes as soon as the last reference goes, but the kernel lets go of
# its sockets only later, when a work queue frees the map (after an RCU
# grace period), so "the map is gone" would not mean "the sockets are
# free". Held, the map can lose a socket only by a delete (or a close): a
# socket out of its last sockhash has its own protocol operations back,
# and its next send() is not filtered.
E2E_PINS=/sys/fs/bpf/hse2e-$$
[ ! -e "$E2E_PINS" ] || fail "$E2E_PINS already exists"
step "make $E2E_PINS" mkdir "$E2E_PINS"
step "hold the sockhash (map id $SOCKS_ID) across the detach" \
	bpftool map pin id "$SOCKS_ID" "$E2E_PINS/socks"
# held_out NAME...: are the held connections NAME... out of the sockhash?
held_out() {
	local name
	for name in "$@"; do
		in_sockhash "$SOCKS_ID" "$(cat "$WORK/$name.cookie")" && return 1
	done
	return 0
}
step "detach --cgroup" to_file "$WORK/detach.out" hs detach --cgroup "$CG"
has_line "$(cat "$WORK/detach.out")" "detached cgroup from 'cgroup-$CG_ID'" "detach: output"
# detach takes every socket out of the sockhash before it returns. Without
# that, the sockets would leave only when the kernel frees the map, some
# time after its pins go (deferred: seconds on a busy machine; never, here,
# while the test holds it), and a request sent meanwhile would still be
# filtered. Polled with a deadline all the same, the time logged; that a
# poll was needed at all fails the test (a first look that finds the
# sockets still there), not a duration.
poll_until 10 held_out filtered cut ||
	fail "the held connections are still in the sockhash (map id $SOCKS_ID) 10 s after the detach"
log "the held connections: out of the sockhash at look $((POLL_TRIES + 1)) after the detach returned (${POLL_WAITED}s from the first look to that one's end, bpftool included)"
assert_eq "$POLL_TRIES" 0 "polls before the held connections were out of the sockhash (detach empties it)"
step "let go of the sockhash" rm -r "$E2E_PINS"
E2E_PINS=
open_gate filtered
wait_held filtered "a connection that was in the sockhash passes unchanged after the detach"
open_gate cut
rc=0
wait "${HELD[cut]}" || rc=$?
if [ "$rc" -eq 0 ]; then
	log "ok: a connection held inside a name at the detach passes unchanged"
else
	known_issue proxy-detach-cork "bytes held back at the detach were lost ($(grep -m 1 'first difference' "$WORK/cut.out" | cut -d: -f2-))"
fi
step "after the detach, a new connection passes unchanged" pc "$S4" "$PORT_ECHO" --set basic \
	--expect unchanged --send bytes
CURL_H=(-H "X-Internal-Auth: after-detach" -H "X-Keep: k")
d=$WORK/curl-detached
mkdir "$d"
step "after the detach, curl to node" in_cg curl -sS --fail --max-time 10 --trace "$d/trace" \
	-o "$d/resp.1" "${CURL_H[@]}" "http://$S4:$PORT_NODE/detached"
step "curl's request" proxy_tool curl-sent "$d/trace" "$d/sent"
check_origin "after the detach, curl to node" node "$d/sent.1" "$d/resp.1"

expect_exit 1 "detach twice" hs detach --cgroup "$CG"
has_line "$EXPECT_OUT" "not attached" "detach twice: message says not attached"
expect_exit 1 "status after the detach" hs status --cgroup "$CG"
expect_exit 1 "stats after the detach" hs stats --cgroup "$CG"
expect_exit 1 "update after the detach" hs update --cgroup "$CG" --headers "$LIST"

# --- the machine is clean ---------------------------------------------------------------
[ ! -e "$PIN" ] || fail "pins left in $PIN: $(ls -A "$PIN")"
log "ok: no pins in $PIN"
out=$(bpftool cgroup show "$CG")
assert_eq "$out" "" "bpftool cgroup show $CG"
# The sk_msg program and its maps go when the kernel frees them, some time
# after their last reference (RCU, a work queue).
sock_maps_left() {
	sock_maps >"$WORK/maps.after" || return 1
	comm -13 <(sort "$WORK/maps.before") <(sort "$WORK/maps.after")
}
no_sock_maps_left() {
	local left
	left=$(sock_maps_left) || return 1
	[ -z "$left" ]
}
poll_until 10 no_sock_maps_left ||
	fail "sockhash/sk_storage maps left behind 10 s after the detach: $(sock_maps_left)"
log "ok: no sockhash or sk_storage map left (bpftool map show), after ${POLL_WAITED}s"
log "PASS"
