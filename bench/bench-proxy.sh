#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Proxy mode's cost (make bench-proxy; root). The e2e tests' topology
# (tests/e2e/lib.sh): a client and a server namespace joined by a veth pair,
# and a child cgroup made here whose processes (wrk, the send loop) run in
# the client namespace.
#
#  1. Request rate: wrk in the cgroup against nginx in the server namespace,
#     each request the typical one (tests/e2e/proxy_client.py --set typical:
#     716 bytes, 20 field lines, 2 internal), keep-alive and a new connection
#     per request. Runs alternate without and with hdrstrip attached to the
#     cgroup (A B A B ... A, attach before and detach after each B run); a B
#     run's figure is its rate over the mean of its two A neighbours, median
#     over the rounds. Target: at least 0.95 (keep-alive). Also the CPU time
#     per request of the client (the cgroup's cpu.stat) and of nginx's worker
#     (schedstat), and the rate ratio they predict where CPU is the limit:
#     steadier than rates on a machine others use at the same time.
#  2. The sk_msg program's own time per run (BPF statistics, BPF_ENABLE_STATS:
#     run_time_ns / run_cnt) during the runs with it, and runs per request.
#  3. ns per send(): proxy_sendloop (bench/proxy_sendloop.c) writes the
#     typical request SENDS times on a loopback connection in the cgroup, one
#     request per send(); runs alternate: without, the floor (bench/bpf/
#     proxy_floor.bpf.o: the same sockops + sockhash + sk_msg plumbing, an
#     sk_msg program that passes every send untouched), without, hdrstrip,
#     without, ...; each with-run's figure is its time minus the mean of its
#     two neighbours without, median over the rounds. The sending thread's
#     CPU time per send is the figure (wall time is printed too: on a busy
#     machine it mostly shows who else had the CPU).
#
# Every figure is printed as "bench: NAME VALUE UNIT". The cgroup, the
# namespaces, servers, attachments and pins go in the trap. Knobs: DURATION
# (s per wrk run, 5), ROUNDS (5), CONNS (wrk connections, 16), SENDS (sends
# per loop, 200000). BOUND=1: HDRSTRIP is the lower-bound build (make
# bench-proxy-bound: the floor's loop reads each send's bytes in place of the
# scanner, BENCHMARKS.md), which must leave the internal fields to the
# origin; "with" is then what proxy mode costs before any scanning.

. "$(dirname "$0")/../tests/e2e/lib.sh"
. "$(dirname "$0")/proxy-lib.sh"

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-5}
CONNS=${CONNS:-16}
SENDS=${SENDS:-200000}
BOUND=${BOUND:-0}
SENDLOOP=${SENDLOOP:-$REPO_ROOT/build/bench/proxy_sendloop}
FLOOR_OBJ=${FLOOR_OBJ:-$REPO_ROOT/build/bench/proxy_floor.bpf.o}
ORIGIN_PORT=8080
LOOP_PORT=18080 # the send loop's loopback port, in the client namespace
CG= PIN= FLOOR_PIN=

bench_cleanup() {
	local rc=$? i
	set +e
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		"$HDRSTRIP" detach --cgroup "$CG" >/dev/null 2>&1
		echo 1 >"$CG/cgroup.kill" 2>/dev/null
		for i in $(seq 1 100); do
			[ -z "$(cat "$CG/cgroup.procs" 2>/dev/null)" ] && break
			sleep 0.05
		done
		rmdir "$CG" || echo "bench-proxy: cannot remove $CG" >&2
	fi
	[ -n "$PIN" ] && rm -rf "$PIN"
	[ -n "$FLOOR_PIN" ] && rm -rf "$FLOOR_PIN"
	(exit "$rc")
	cleanup
}

in_cg() {
	nsenter --net="/run/netns/$CNS" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
}

attach() {
	"$HDRSTRIP" attach --cgroup "$CG" --headers "$LIST" --ports "$ORIGIN_PORT,$LOOP_PORT" \
		>"$WORK/attach.log" 2>&1 || fail "attach --cgroup: $(cat "$WORK/attach.log")"
}

detach() {
	"$HDRSTRIP" detach --cgroup "$CG" >"$WORK/detach.log" 2>&1 ||
		fail "detach --cgroup: $(cat "$WORK/detach.log")"
}

# CPU time so far: of the cgroup's processes (wrk: its sends, the sk_msg
# program, what the kernel does for them), and of nginx's worker.
cg_cpu_ns() { awk '$1 == "usage_usec" { printf "%.0f\n", $2 * 1000 }' "$CG/cpu.stat"; }
worker_cpu_ns() { awk '{ print $1 }' "/proc/$WORKER/schedstat"; }

# run_wrk MODE: one run; sets REQS and RATE, and CCPU and SCPU: client
# (cgroup) and server (nginx worker) CPU ns per request.
run_wrk() {
	local out c0 c1 s0 s1
	c0=$(cg_cpu_ns) s0=$(worker_cpu_ns)
	out=$(in_cg wrk -t1 -c"$CONNS" -d"${DURATION}s" -s "$WORK/request.lua" \
		"http://$S4:$ORIGIN_PORT/" -- "$WORK/$1.req" 2>&1) || fail "wrk failed: $out"
	c1=$(cg_cpu_ns) s1=$(worker_cpu_ns)
	printf '%s\n' "$out" >>"$WORK/wrk.log"
	REQS=$(printf '%s\n' "$out" | awk '/requests in/ { print $1 }')
	RATE=$(printf '%s\n' "$out" | awk '/^Requests\/sec:/ { print $2 }')
	[ -n "$REQS" ] && [ -n "$RATE" ] || fail "cannot read wrk's output: $out"
	if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
		fail "wrk saw errors: $out"
	fi
	CCPU=$(awk -v d="$((c1 - c0))" -v r="$REQS" 'BEGIN { printf "%.0f", d / r }')
	SCPU=$(awk -v d="$((s1 - s0))" -v r="$REQS" 'BEGIN { printf "%.0f", d / r }')
}

# The floor's sockops program on the cgroup, or not.
floor_on() {
	bpftool cgroup attach "$CG" sock_ops pinned "$FLOOR_PIN/floor_sockops" multi ||
		fail "cannot attach the floor's sockops program to $CG"
}
floor_off() {
	bpftool cgroup detach "$CG" sock_ops pinned "$FLOOR_PIN/floor_sockops" ||
		fail "cannot detach the floor's sockops program from $CG"
}

# run_loop: one send loop; sets CPU and WALL (ns per send), BYTES and SEGS
# (per send).
run_loop() {
	local out
	out=$(in_cg "$SENDLOOP" --request "$WORK/keepalive.req" --port "$LOOP_PORT" \
		--count "$SENDS" --warmup $((SENDS / 10)) 2>&1) || fail "proxy_sendloop: $out"
	WALL=$(awk '$1 == "ns_per_send" { print $2 }' <<<"$out")
	CPU=$(awk '$1 == "cpu_ns_per_send" { print $2 }' <<<"$out")
	BYTES=$(awk '$1 == "bytes_per_send" { print $2 }' <<<"$out")
	SEGS=$(awk '$1 == "segments_per_send" { print $2 }' <<<"$out")
	[ -n "$WALL" ] && [ -n "$CPU" ] && [ -n "$BYTES" ] || fail "cannot read proxy_sendloop's output: $out"
}

# One without-run of the send loop (its bytes checked); sets CPU, WALL, SEGS.
loop_none() {
	run_loop
	[ "${BYTES%.*}" -eq "$REQ_BYTES" ] || fail "send loop without a program: $BYTES bytes per send"
	LOOP_NONE_CPU+="$CPU " LOOP_NONE_WALL+="$WALL " SEGS_NONE+="$SEGS "
}

# ---- set-up ---------------------------------------------------------------------

e2e_init
require_tools wrk nginx curl
require_cli attach detach stats
[ -x "$SENDLOOP" ] || skip "$SENDLOOP is not built (make bench-proxy builds it)"
[ -f "$FLOOR_OBJ" ] || skip "$FLOOR_OBJ is not built (make bench-proxy builds it)"
CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG_ROOT" ] || skip "no cgroup2 hierarchy in /proc/mounts"
trap bench_cleanup EXIT
bpf_stats_on

topo_setup
cg=$CG_ROOT/hsbench-proxy-$$
[ -e "$cg" ] && fail "$cg already exists"
step "make the cgroup $cg" mkdir "$cg"
CG=$cg # only now: the cleanup removes what CG names
PIN=$BPFFS_ROOT/cgroup-$(stat -c %i "$CG")
LIST=$WORK/list
write_main_list "$LIST"
FLOOR_PIN=/sys/fs/bpf/hsbench-floor-$$
step "load the floor programs ($FLOOR_OBJ) into $FLOOR_PIN" \
	bpftool prog loadall "$FLOOR_OBJ" "$FLOOR_PIN" pinmaps "$FLOOR_PIN/maps"
step "the floor's sk_msg program on its sockhash" bpftool prog attach pinned "$FLOOR_PIN/floor_msg" \
	msg_verdict pinned "$FLOOR_PIN/maps/floor_socks"

# The typical request, keep-alive and closing, and wrk's script that sends it.
"$PYTHON" "$E2E_DIR/proxy_client.py" - 0 --set typical --print-set >"$WORK/keepalive.req" ||
	fail "cannot write the typical request"
sed 's/^Connection: keep-alive\r$/Connection: close\r/' "$WORK/keepalive.req" >"$WORK/close.req"
grep -q '^Connection: close' "$WORK/close.req" || fail "no Connection: close in $WORK/close.req"
REQ_BYTES=$(stat -c %s "$WORK/keepalive.req")
REQ_FIELDS=$(grep -c ': ' "$WORK/keepalive.req")
cat >"$WORK/request.lua" <<'EOF'
-- Every request is the exact bytes of the file given after "--".
local raw
function init(args)
	local f = assert(io.open(args[1], "rb"))
	raw = f:read("*a")
	f:close()
end
function request()
	return raw
end
EOF

mkdir -p "$WORK/nginx"
{
	nginx_conf_head "$WORK/nginx/error.log" warn 1024
	cat <<EOF
	keepalive_requests 100000000;
	keepalive_timeout 60s;
	server {
		listen $ORIGIN_PORT;
		location / { return 200 "auth=\$http_x_internal_auth tenant=\$http_x_internal_tenant\n"; }
	}
}
EOF
} >"$WORK/nginx/nginx.conf"
nginx_run "$ORIGIN_PORT"
WORKER=$(pgrep -P "$(cat "$WORK/nginx/nginx.pid")" | head -n 1)
[ -n "$WORKER" ] || fail "cannot find nginx's worker"

# What it measures must work first: the origin sees the internal fields
# without hdrstrip, and not with it.
seen() { in_cg curl -s --max-time 5 -H 'X-Internal-Auth: s3cret' -H 'X-Internal-Tenant: t' "http://$S4:$ORIGIN_PORT/"; }
assert_eq "$(seen)" "auth=s3cret tenant=t" "no program: the origin sees the internal fields"
attach
if [ "$BOUND" = 1 ]; then
	assert_eq "$(seen)" "auth=s3cret tenant=t" "the lower-bound build scans nothing: the origin sees them"
else
	assert_eq "$(seen)" "auth= tenant=" "hdrstrip on the cgroup: the origin does not see them"
fi
detach

# ---- 1 and 2: request rate, the program's time per run ---------------------------

declare -A RATIOS NONE_RATES WITH_RATES PROG_NS RUNS_PER_REQ CPU_NONE CPU_WITH
for mode in keepalive close; do
	run_wrk "$mode"
	prev=$RATE
	CPU_NONE[$mode]+="$CCPU:$SCPU "
	for round in $(seq 1 "$ROUNDS"); do
		attach
		id=$(prog_id hdrstrip_msg)
		t0=$(prog_stat "$id" run_time_ns) c0=$(prog_stat "$id" run_cnt)
		r0=$(counter_now headers_removed)
		run_wrk "$mode"
		with=$RATE reqs=$REQS
		CPU_WITH[$mode]+="$CCPU:$SCPU "
		t1=$(prog_stat "$id" run_time_ns) c1=$(prog_stat "$id" run_cnt)
		r1=$(counter_now headers_removed)
		detach
		# Two internal lines per request, each taken out.
		[ "$BOUND" = 1 ] || [ $((r1 - r0)) -ge $((2 * reqs)) ] ||
			fail "$mode round $round: $((r1 - r0)) lines removed for $reqs requests"
		run_wrk "$mode"
		CPU_NONE[$mode]+="$CCPU:$SCPU "
		x=$(ratio "$with" "$prev" "$RATE")
		RATIOS[$mode]+="$x "
		NONE_RATES[$mode]+="$prev "
		WITH_RATES[$mode]+="$with "
		pns=$(awk -v t="$((t1 - t0))" -v c="$((c1 - c0))" 'BEGIN { printf "%.1f", t / c }')
		runs=$(awk -v c="$((c1 - c0))" -v r="$reqs" 'BEGIN { printf "%.3f", c / r }')
		PROG_NS[$mode]+="$pns " RUNS_PER_REQ[$mode]+="$runs "
		log "$mode round $round: $with req/s with, between $prev and $RATE without (x$x); sk_msg $pns ns/run, $runs runs/request"
		prev=$RATE
	done
	NONE_RATES[$mode]+="$prev "
done

# ---- 3: ns per send() -------------------------------------------------------------

LOOP_NONE_CPU= LOOP_NONE_WALL= SEGS_NONE=
declare -A LOOP_CPU LOOP_WALL LOOP_ADDED LOOP_ADDED_WALL LOOP_SEGS
floor_id=$(bpftool -j prog show pinned "$FLOOR_PIN/floor_msg" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["id"])') ||
	fail "cannot find the floor's sk_msg program"
loop_none
prev_cpu=$CPU prev_wall=$WALL
for round in $(seq 1 "$ROUNDS"); do
	for what in floor hdrstrip; do
		if [ "$what" = floor ]; then
			floor_on
			c0=$(prog_stat "$floor_id" run_cnt)
			run_loop
			c1=$(prog_stat "$floor_id" run_cnt)
			floor_off
			[ $((c1 - c0)) -ge "$SENDS" ] ||
				fail "send loop round $round: the floor's sk_msg program ran $((c1 - c0)) times"
			[ "${BYTES%.*}" -eq "$REQ_BYTES" ] || fail "the floor changed the bytes: $BYTES per send"
		else
			attach
			run_loop
			detach
			[ "$BOUND" = 1 ] || [ "${BYTES%.*}" -lt "$REQ_BYTES" ] ||
				fail "send loop round $round: $BYTES bytes arrived per send: nothing removed"
		fi
		cpu=$CPU wall=$WALL
		LOOP_SEGS[$what]+="$SEGS "
		loop_none
		added=$(awk -v w="$cpu" -v a="$prev_cpu" -v b="$CPU" 'BEGIN { printf "%.1f", w - (a + b) / 2 }')
		addedw=$(awk -v w="$wall" -v a="$prev_wall" -v b="$WALL" 'BEGIN { printf "%.1f", w - (a + b) / 2 }')
		LOOP_CPU[$what]+="$cpu " LOOP_WALL[$what]+="$wall "
		LOOP_ADDED[$what]+="$added " LOOP_ADDED_WALL[$what]+="$addedw "
		log "send loop round $round: $what $cpu ns CPU/send ($wall wall), between $prev_cpu and $CPU without: +$added ns CPU (+$addedw wall)"
		prev_cpu=$CPU prev_wall=$WALL
	done
done

# ---- results ------------------------------------------------------------------------

echo
echo "Proxy mode: the typical request ($REQ_BYTES bytes, $REQ_FIELDS field lines, 2 internal);"
echo "wrk -t1 -c$CONNS, ${DURATION}s per run, $ROUNDS rounds, without/with alternated;"
echo "$(nproc) CPUs, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in keepalive close; do
	none=$(printf '%s' "${NONE_RATES[$mode]}" | median)
	with=$(printf '%s' "${WITH_RATES[$mode]}" | median)
	x=$(printf '%s' "${RATIOS[$mode]}" | median)
	printf '%-9s without %s req/s, with %s req/s (medians); with / neighbours without: x%s (rounds %s)\n' \
		"$mode" "$none" "$with" "$x" "$(printf '%s' "${RATIOS[$mode]}" | span)"
	echo "bench: proxy_${mode}_none_rate $none req/s"
	echo "bench: proxy_${mode}_with_rate $with req/s"
	echo "bench: proxy_${mode}_vs_none $x ratio"
	# CPU per request, client (the cgroup: wrk and its kernel work) and
	# server (nginx's worker): what the rate would be where CPU is all
	# that limits it, however busy the machine is.
	cn=$(printf '%s' "${CPU_NONE[$mode]}" | tr ' ' '\n' | cut -d: -f1 | median)
	sn=$(printf '%s' "${CPU_NONE[$mode]}" | tr ' ' '\n' | cut -d: -f2 | median)
	cw=$(printf '%s' "${CPU_WITH[$mode]}" | tr ' ' '\n' | cut -d: -f1 | median)
	sw=$(printf '%s' "${CPU_WITH[$mode]}" | tr ' ' '\n' | cut -d: -f2 | median)
	pr=$(awk -v a="$cn" -v b="$sn" -v c="$cw" -v d="$sw" 'BEGIN { printf "%.4f", (a + b) / (c + d) }')
	printf '%-9s CPU per request: client %s ns without, %s with; nginx worker %s without, %s with; CPU-bound rate x%s\n' \
		"$mode" "$cn" "$cw" "$sn" "$sw" "$pr"
	echo "bench: proxy_${mode}_client_cpu_ns_none $cn ns"
	echo "bench: proxy_${mode}_client_cpu_ns_with $cw ns"
	echo "bench: proxy_${mode}_server_cpu_ns_none $sn ns"
	echo "bench: proxy_${mode}_server_cpu_ns_with $sw ns"
	echo "bench: proxy_${mode}_cpu_bound_vs_none $pr ratio"
done
x=$(printf '%s' "${RATIOS[keepalive]}" | median)
if awk -v x="$x" 'BEGIN { exit !(x >= 0.95) }'; then
	echo "target (keep-alive rate with >= 0.95 of without): met, x$x"
else
	echo "target (keep-alive rate with >= 0.95 of without): NOT met, x$x"
fi
for mode in keepalive close; do
	pns=$(printf '%s' "${PROG_NS[$mode]}" | median)
	runs=$(printf '%s' "${RUNS_PER_REQ[$mode]}" | median)
	printf '%-9s sk_msg program: %s ns per run (BPF statistics; rounds %s), %s runs per request\n' \
		"$mode" "$pns" "$(printf '%s' "${PROG_NS[$mode]}" | span)" "$runs"
	echo "bench: proxy_${mode}_msg_prog_ns_per_run $pns ns"
	echo "bench: proxy_${mode}_msg_runs_per_request $runs runs"
done
echo
nc=$(printf '%s' "$LOOP_NONE_CPU" | median)
nw=$(printf '%s' "$LOOP_NONE_WALL" | median)
sn=$(printf '%s' "$SEGS_NONE" | median)
printf 'send loop (%s sends of the typical request per run, loopback, TCP_NODELAY), ns per send():\n' "$SENDS"
printf '  %-9s CPU %8s  wall %8s  segments/send %s\n' without "$nc" "$nw" "$sn"
echo "bench: proxy_send_cpu_ns_none $nc ns"
echo "bench: proxy_send_wall_ns_none $nw ns"
for what in floor hdrstrip; do
	c=$(printf '%s' "${LOOP_CPU[$what]}" | median)
	w=$(printf '%s' "${LOOP_WALL[$what]}" | median)
	a=$(printf '%s' "${LOOP_ADDED[$what]}" | median)
	aw=$(printf '%s' "${LOOP_ADDED_WALL[$what]}" | median)
	sg=$(printf '%s' "${LOOP_SEGS[$what]}" | median)
	printf '  %-9s CPU %8s  wall %8s  segments/send %s; added: CPU %s ns (rounds %s), wall %s ns\n' \
		"$what" "$c" "$w" "$sg" "$a" "$(printf '%s' "${LOOP_ADDED[$what]}" | span)" "$aw"
	echo "bench: proxy_send_cpu_ns_$what $c ns"
	echo "bench: proxy_send_cpu_ns_added_$what $a ns"
	echo "bench: proxy_send_wall_ns_added_$what $aw ns"
	echo "bench: proxy_send_segments_$what $sg segments"
done
echo "bench: proxy_send_segments_none $sn segments"
log "done"
