#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Real traffic through hdrstrip (make bench-e2e; root): wrk in a client
# namespace, nginx in a server namespace, one veth pair between them (the
# e2e tests' topology and helpers, tests/e2e/lib.sh).
#
#  1. Request rate, keep-alive and a new connection per request, each
#     request carrying 2 internal fields among 20: no program, then each
#     hook (xdp and tc-ingress at the server's end, tc-egress at the
#     client's), every hook run bracketed by no-program runs; a hook's
#     figure is its rate over the mean of its two neighbours, median over
#     the rounds. The same for CPU per request: wrk's task-clock (perf
#     stat) + the nginx workers' and ksoftirqd's time on a CPU
#     (/proc/PID/schedstat; this kernel charges softirq work to the task it
#     interrupts), per request. Other sessions share the 2 CPUs, so the
#     rate swings from run to run; CPU per request does much less.
#  2. CPU per request: hdrstrip's own run time (BPF statistics:
#     run_time_ns / requests, and run_cnt / requests packets per request)
#     against an nginx reverse proxy in front of the same origin that
#     removes the same names (proxy_set_header NAME "" for each): its
#     worker's CPU time per request, and what it adds to the whole.
#  3. hdrstrip update: wall time of single updates, 100 and 1,000 names,
#     spaced apart (the CLI waits out 20 ms after a previous flip), their
#     CPU time (perf stat), and the CLI's start and compile beside them.
#  4. The flows map as attached: memlock / entries (bpftool).
#
# Every figure is printed as "bench: NAME VALUE UNIT". Namespaces, servers,
# attachments and pins go in the trap; kernel.bpf_stats_enabled is put back.
# Knobs: DURATION (s per run, 3), ROUNDS (5), CONNS (wrk connections, 16),
# BENCH_LISTS (names-{100,1000}.txt, from bench/gen-lists.sh), CORPUS.
# BOUND=1: HDRSTRIP is the lower-bound build (make bench-e2e-bound: the floor's
# loop in place of the scanner, BENCHMARKS.md), which must leave the internal
# field to the origin; every figure is then what the path around the scan
# costs.
# ORIGIN=1 (make bench-origin): the origin nginx runs in a cgroup, and part 1
# alone runs, keep-alive, for origin mode (hook 'receive': attach --cgroup
# --receive; its BPF time is the sk_skb program's, the sockops program runs
# once a connection) beside xdp and tc-ingress, every run bracketed by
# no-program runs as above.

# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/../tests/e2e/lib.sh"

DURATION=${DURATION:-3}
ROUNDS=${ROUNDS:-5}
CONNS=${CONNS:-16}
BOUND=${BOUND:-0}
BENCH_LISTS=${BENCH_LISTS:-$REPO_ROOT/build/bench/lists}
CORPUS=${CORPUS:-$REPO_ROOT/tests/corpus}
LIST=$CORPUS/internal-headers.txt
ORIGIN_PORT=8080
PROXY_PORT=8090
ORIGIN=${ORIGIN:-0}
HOOKS=(xdp tc-ingress tc-egress)
MODES=(keepalive close)
if [ "$ORIGIN" = 1 ]; then
	HOOKS=(receive xdp tc-ingress)
	MODES=(keepalive)
fi
STATS_WAS=

bench_cleanup() {
	local rc=$?
	# Under errexit, the (exit "$rc") below would end the trap there, on
	# a failure, before cleanup() removed anything.
	set +e
	if [ -n "$STATS_WAS" ]; then
		sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS" ||
			echo "bench-e2e: cannot restore kernel.bpf_stats_enabled=$STATS_WAS" >&2
	fi
	(exit "$rc")
	cleanup
}

# wrk's script: the 20 fields of bench_dataplane's typical request (Host is
# wrk's own), two of them internal; with "close", each request asks for a
# new connection.
write_lua() { # FILE keepalive|close
	{
		echo 'wrk.method = "GET"'
		echo 'wrk.path = "/api/v2/orders/58713?include=items"'
		echo 'local h = wrk.headers'
		echo 'h["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Firefox/128.0"'
		echo 'h["Accept"] = "application/json, text/plain, */*"'
		echo 'h["Accept-Language"] = "en-US,en;q=0.5"'
		echo 'h["Accept-Encoding"] = "gzip, deflate, br, zstd"'
		echo 'h["Referer"] = "https://shop.example.com/orders"'
		echo 'h["Origin"] = "https://shop.example.com"'
		if [ "$2" = close ]; then
			echo 'h["Connection"] = "close"'
		else
			echo 'h["Connection"] = "keep-alive"'
		fi
		echo 'h["Cookie"] = "session=8f14e45fceea167a5a36dedd4bea2543"'
		echo 'h["Sec-Fetch-Dest"] = "empty"'
		echo 'h["Sec-Fetch-Mode"] = "cors"'
		echo 'h["Sec-Fetch-Site"] = "same-origin"'
		echo 'h["Priority"] = "u=4"'
		echo 'h["X-Request-Id"] = "2f6c1e0a93b44d519a7e"'
		echo 'h["X-Forwarded-For"] = "203.0.113.77"'
		echo 'h["X-Forwarded-Proto"] = "https"'
		echo 'h["X-Internal-Auth"] = "svc=checkout;sig=c29tZS1zaWduYXR1cmU"'
		echo 'h["X-Internal-Trace"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-01"'
		echo 'h["Cache-Control"] = "no-cache"'
		echo 'h["Pragma"] = "no-cache"'
	} >"$1"
}

# One nginx (master + 1 worker) in the server namespace, from a server block.
start_nginx_conf() { # NAME SERVER_BLOCK
	local name=$1 dir=$WORK/$1
	mkdir -p "$dir"
	cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
user root root;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
$(nginx_temp_paths | sed "s|$WORK/nginx/|$dir/|")
	keepalive_requests 100000000;
	keepalive_timeout 60s;
$2
}
EOF
	srv_run nginx -e "$dir/error.log" -p "$dir" -c "$dir/nginx.conf" \
		>"$WORK/$name.log" 2>&1 &
	E2E_PIDS+=($!)
}

# The pid of an nginx master's (only) worker.
nginx_worker() { # NAME
	local master
	master=$(cat "$WORK/$1/nginx.pid") || fail "no pid file for nginx $1"
	pgrep -P "$master" | head -n 1
}

# CPU time of a process so far, in ns (schedstat: time on a CPU).
cpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }

# CPU time of the ksoftirqd threads, in ns.
ksoftirqd_ns() {
	local t=0 p
	for p in $KSOFTIRQD; do
		t=$((t + $(cpu_ns "$p")))
	done
	echo "$t"
}

# run_wrk URL MODE PID...: one run; sets REQS, RATE, and CPU (ns per
# request: wrk, the processes PID..., ksoftirqd).
run_wrk() {
	local url=$1 mode=$2 out p w c0=0 c1=0 k0 k1
	shift 2
	for p in "$@"; do c0=$((c0 + $(cpu_ns "$p"))); done
	k0=$(ksoftirqd_ns)
	out=$(in_c perf stat -x, -e task-clock -o "$WORK/wrk.perf" \
		wrk -t1 -c"$CONNS" -d"${DURATION}s" -s "$WORK/$mode.lua" "$url" 2>&1) ||
		fail "wrk failed: $out"
	k1=$(ksoftirqd_ns)
	for p in "$@"; do c1=$((c1 + $(cpu_ns "$p"))); done
	printf '%s\n' "$out" >>"$WORK/wrk.log"
	REQS=$(printf '%s\n' "$out" | awk '/requests in/ { print $1 }')
	RATE=$(printf '%s\n' "$out" | awk '/^Requests\/sec:/ { print $2 }')
	[ -n "$REQS" ] && [ -n "$RATE" ] || fail "cannot read wrk's output: $out"
	if printf '%s\n' "$out" | grep -qE 'Non-2xx|Socket errors'; then
		fail "wrk saw errors: $out"
	fi
	w=$(awk -F, '$3 == "task-clock" { printf "%d", $1 * 1e6 }' "$WORK/wrk.perf")
	[ -n "$w" ] || fail "cannot read perf stat's task-clock: $(cat "$WORK/wrk.perf")"
	CPU=$(awk -v t="$((w + c1 - c0 + k1 - k0))" -v r="$REQS" 'BEGIN { printf "%.0f", t / r }')
}

# The id of hdrstrip's program at HOOK, from bpftool in its namespace
# (origin mode: the sk_skb program that uses the cgroup's pinned config).
prog_id() { # HOOK
	local ns=$SNS dev=$SDEV kind=xdp cfg
	if [ "$1" = receive ]; then
		cfg=$(bpftool -j map show pinned "$(hook_pin_dir receive)/config" |
			"$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["id"])') ||
			fail "no config map pinned for origin mode"
		bpftool -j prog show | "$PYTHON" -c '
import json, sys
ids = [p["id"] for p in json.load(sys.stdin)
       if p.get("name") == "hdrstrip_rx" and int(sys.argv[1]) in p.get("map_ids", [])]
print(ids[0]) if len(ids) == 1 else sys.exit("hdrstrip_rx programs: %s" % ids)' "$cfg" ||
			fail "no sk_skb program of origin mode"
		return
	fi
	case $1 in
	tc-ingress) kind=tc ;;
	tc-egress) ns=$CNS dev=$CDEV kind=tc ;;
	esac
	nsenter --net="/run/netns/$ns" bpftool -j net show dev "$dev" | "$PYTHON" -c '
import json, sys
kind = sys.argv[1]
for entry in json.load(sys.stdin):
    for e in entry.get(kind, []):
        if "hdrstrip" in e.get("name", "") or kind == "xdp":
            print(e["id"]); sys.exit(0)
sys.exit(1)' "$kind" || fail "no hdrstrip program at $1 (bpftool net show)"
}

prog_stat() { # ID FIELD
	bpftool -j prog show id "$1" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], 0))' "$2"
}

hook_ns_dev() { # HOOK -> "NS DEV"
	if [ "$1" = tc-egress ]; then echo "$CNS $CDEV"; else echo "$SNS $SDEV"; fi
}

attach_hook() { # HOOK
	local ns dev
	if [ "$1" = receive ]; then
		hs_hook_attach receive --headers "$LIST" --ports "$ORIGIN_PORT" >"$WORK/attach.log" 2>&1 ||
			fail "attach --cgroup --receive: $(cat "$WORK/attach.log")"
		return
	fi
	read -r ns dev <<<"$(hook_ns_dev "$1")"
	note_attached "$ns" "$dev"
	hs_in "$ns" attach "$dev" --headers "$LIST" --hook "$1" --ports "$ORIGIN_PORT" \
		>"$WORK/attach.log" 2>&1 || fail "attach --hook $1: $(cat "$WORK/attach.log")"
}

detach_hook() { # HOOK
	local ns dev
	if [ "$1" = receive ]; then
		hs_hook_cmd receive detach >"$WORK/detach.log" 2>&1 ||
			fail "detach --cgroup: $(cat "$WORK/detach.log")"
		return
	fi
	read -r ns dev <<<"$(hook_ns_dev "$1")"
	hs_in "$ns" detach "$dev" >"$WORK/detach.log" 2>&1 ||
		fail "detach $dev: $(cat "$WORK/detach.log")"
}

# What the origin saw of X-Internal-Auth, through URL (curl, in the client).
seen_auth() { # URL
	in_c curl -s --max-time 5 -H 'X-Internal-Auth: secret-value' "$1"
}

# ---- set-up ------------------------------------------------------------------

e2e_init
require_tools wrk nginx curl pgrep sysctl perf
require_cli attach detach update
for f in "$LIST" "$BENCH_LISTS/names-100.txt" "$BENCH_LISTS/names-1000.txt"; do
	[ -f "$f" ] || skip "$f is missing (make bench-e2e builds it)"
done
trap bench_cleanup EXIT
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
step "kernel.bpf_stats_enabled=1 (was $STATS_WAS)" sysctl -qw kernel.bpf_stats_enabled=1

topo_setup
# Origin mode filters what a cgroup's processes accept: the origin starts in it.
[ "$ORIGIN" = 1 ] && origin_hook_setup
write_lua "$WORK/keepalive.lua" keepalive
write_lua "$WORK/close.lua" close

start_nginx_conf origin "	server {
		listen $ORIGIN_PORT;
		location / { return 200 \"auth=\$http_x_internal_auth\\n\"; }
	}"
wait_listen "$SNS" "$ORIGIN_PORT" "nginx origin" "${E2E_PIDS[-1]}"
SRV_IN_CG= # the proxy, when there is one, is no origin of origin mode's
PROXY_SETS=$(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' -e '^[[:space:]]*@' "$LIST" |
	awk '{ printf "\t\t\tproxy_set_header %s \"\";\n", $1 }')
[ "$ORIGIN" = 1 ] || start_nginx_conf proxy "	upstream origin { server 127.0.0.1:$ORIGIN_PORT; keepalive 64; }
	server {
		listen $PROXY_PORT;
		location / {
			proxy_pass http://origin;
			proxy_http_version 1.1;
			proxy_set_header Connection \"\";
			proxy_set_header Host \$http_host;
$PROXY_SETS
		}
	}"
[ "$ORIGIN" = 1 ] || wait_listen "$SNS" "$PROXY_PORT" "nginx proxy" "${E2E_PIDS[-1]}"
ORIGIN_URL=http://$S4:$ORIGIN_PORT/
PROXY_URL=http://$S4:$PROXY_PORT/
if [ "$ORIGIN" = 1 ]; then
	log "ok: nginx origin on :$ORIGIN_PORT in $E2E_CG"
else
	log "ok: nginx origin on :$ORIGIN_PORT, nginx proxy on :$PROXY_PORT removing $(printf '%s\n' "$PROXY_SETS" | wc -l) names"
fi

# Every path must do what it claims before it is timed. (The origin answers
# with the field's value: a masked line is another name, so the value is
# empty there too.)
assert_eq "$(seen_auth "$ORIGIN_URL")" "auth=secret-value" "no program: the origin sees X-Internal-Auth"
[ "$ORIGIN" = 1 ] || assert_eq "$(seen_auth "$PROXY_URL")" "auth=" "through the proxy: the origin does not see it"
for hook in "${HOOKS[@]}"; do
	attach_hook "$hook"
	if [ "$BOUND" = 1 ]; then
		assert_eq "$(seen_auth "$ORIGIN_URL")" "auth=secret-value" \
			"the lower-bound build at $hook scans nothing: the origin sees it"
	else
		assert_eq "$(seen_auth "$ORIGIN_URL")" "auth=" "hdrstrip at $hook: the origin does not see it"
	fi
	detach_hook "$hook"
done

# ---- 1 and 2: request rate and CPU per request --------------------------------

KSOFTIRQD=$(pgrep '^ksoftirqd/' | tr '\n' ' ')
ow=$(nginx_worker origin) pw=$ow
[ "$ORIGIN" = 1 ] || pw=$(nginx_worker proxy)
[ -n "$pw" ] && [ -n "$ow" ] || fail "cannot find the nginx workers"

declare -A RATIOS CPU_RATIOS CPU_ADD BPF_NS BPF_PKTS NONE_RATES NONE_CPU
for mode in "${MODES[@]}"; do
	for round in $(seq 1 "$ROUNDS"); do
		run_wrk "$ORIGIN_URL" "$mode" "$ow"
		prev=$RATE prev_cpu=$CPU
		for hook in "${HOOKS[@]}"; do
			attach_hook "$hook"
			id=$(prog_id "$hook")
			t0=$(prog_stat "$id" run_time_ns)
			c0=$(prog_stat "$id" run_cnt)
			run_wrk "$ORIGIN_URL" "$mode" "$ow"
			hrate=$RATE hreqs=$REQS hcpu=$CPU
			t1=$(prog_stat "$id" run_time_ns)
			c1=$(prog_stat "$id" run_cnt)
			detach_hook "$hook"
			run_wrk "$ORIGIN_URL" "$mode" "$ow"
			ratio=$(awk -v h="$hrate" -v a="$prev" -v b="$RATE" 'BEGIN { printf "%.4f", h / ((a + b) / 2) }')
			cratio=$(awk -v h="$hcpu" -v a="$prev_cpu" -v b="$CPU" 'BEGIN { printf "%.4f", ((a + b) / 2) / h }')
			cadd=$(awk -v h="$hcpu" -v a="$prev_cpu" -v b="$CPU" 'BEGIN { printf "%.0f", h - (a + b) / 2 }')
			ns=$(awk -v t="$((t1 - t0))" -v r="$hreqs" 'BEGIN { printf "%.1f", t / r }')
			pk=$(awk -v c="$((c1 - c0))" -v r="$hreqs" 'BEGIN { printf "%.2f", c / r }')
			log "$mode round $round: $hook $hrate req/s between $prev and $RATE (x$ratio); CPU $hcpu ns/request between $prev_cpu and $CPU (x$cratio at equal CPU, +$cadd ns); BPF $ns ns/request, $pk packets/request"
			RATIOS[$mode.$hook]+="$ratio "
			CPU_RATIOS[$mode.$hook]+="$cratio "
			CPU_ADD[$mode.$hook]+="$cadd "
			BPF_NS[$mode.$hook]+="$ns "
			BPF_PKTS[$mode.$hook]+="$pk "
			NONE_RATES[$mode]+="$prev "
			NONE_CPU[$mode]+="$prev_cpu "
			prev=$RATE prev_cpu=$CPU
		done
	done
done

# The proxy: its worker's CPU per request, what it adds to the whole (wrk,
# both nginx workers, ksoftirqd) over the direct runs beside it, and the
# rate through it.
declare -A PROXY_NS PROXY_RATE PROXY_ADD
[ "$ORIGIN" = 1 ] && MODES_PROXY=() || MODES_PROXY=("${MODES[@]}")
for mode in "${MODES_PROXY[@]}"; do
	for round in $(seq 1 "$ROUNDS"); do
		run_wrk "$ORIGIN_URL" "$mode" "$ow"
		a_cpu=$CPU
		p0=$(cpu_ns "$pw")
		run_wrk "$PROXY_URL" "$mode" "$pw" "$ow"
		p1=$(cpu_ns "$pw")
		pcpu=$CPU
		PROXY_NS[$mode]+="$(awk -v d="$((p1 - p0))" -v r="$REQS" 'BEGIN { printf "%.1f", d / r }') "
		PROXY_RATE[$mode]+="$RATE "
		run_wrk "$ORIGIN_URL" "$mode" "$ow"
		PROXY_ADD[$mode]+="$(awk -v p="$pcpu" -v a="$a_cpu" -v b="$CPU" 'BEGIN { printf "%.0f", p - (a + b) / 2 }') "
		log "$mode round $round: proxy $pcpu ns CPU/request in all, direct $a_cpu and $CPU"
	done
done

median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minmax() { tr ' ' '\n' | awk 'NF' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s", lo, hi }'; }

echo
echo "Request rate, wrk -t1 -c$CONNS, ${DURATION}s per run, $ROUNDS rounds; each hook run against the mean of"
echo "its two no-program neighbours, median over the rounds (min-max)."
echo "(load average at the end of the runs: $(cut -d' ' -f1-3 /proc/loadavg))"
for mode in "${MODES[@]}"; do
	none=$(printf '%s' "${NONE_RATES[$mode]}" | median)
	ncpu=$(printf '%s' "${NONE_CPU[$mode]}" | median)
	printf '%-9s no program: %s req/s, %s ns CPU/request (medians of the no-program runs)\n' "$mode" "$none" "$ncpu"
	echo "bench: e2e_${mode}_none_rate $none req/s"
	echo "bench: e2e_${mode}_none_cpu_per_request $ncpu ns"
	for hook in "${HOOKS[@]}"; do
		k=$mode.$hook
		r=$(printf '%s' "${RATIOS[$k]}" | median)
		cr=$(printf '%s' "${CPU_RATIOS[$k]}" | median)
		ca=$(printf '%s' "${CPU_ADD[$k]}" | median)
		ns=$(printf '%s' "${BPF_NS[$k]}" | median)
		pk=$(printf '%s' "${BPF_PKTS[$k]}" | median)
		# What the program's own run time alone predicts at equal CPU.
		est=$(awk -v c="$ncpu" -v h="$ns" 'BEGIN { printf "%.4f", c / (c + h) }')
		printf '%-9s %-10s rate x%s (%s); at equal CPU x%s (%s), +%s ns CPU/request; BPF %s ns/request, %s packets/request (alone: x%s)\n' \
			"$mode" "$hook" "$r" "$(printf '%s' "${RATIOS[$k]}" | minmax)" "$cr" \
			"$(printf '%s' "${CPU_RATIOS[$k]}" | minmax)" "$ca" "$ns" "$pk" "$est"
		echo "bench: e2e_${mode}_${hook}_rate_vs_none $r ratio"
		echo "bench: e2e_${mode}_${hook}_equal_cpu_vs_none $cr ratio"
		echo "bench: e2e_${mode}_${hook}_cpu_added_per_request $ca ns"
		echo "bench: e2e_${mode}_${hook}_bpf_ns_per_request $ns ns"
		echo "bench: e2e_${mode}_${hook}_packets_per_request $pk packets"
		echo "bench: e2e_${mode}_${hook}_bpf_alone_vs_none $est ratio"
	done
	[ "$ORIGIN" = 1 ] && continue # no proxy beside origin mode's runs
	pns=$(printf '%s' "${PROXY_NS[$mode]}" | median)
	prate=$(printf '%s' "${PROXY_RATE[$mode]}" | median)
	padd=$(printf '%s' "${PROXY_ADD[$mode]}" | median)
	printf '%-9s nginx proxy: worker %s ns CPU/request (adds %s ns to the whole), %s req/s through it\n' \
		"$mode" "$pns" "$padd" "$prate"
	echo "bench: e2e_${mode}_proxy_cpu_per_request $pns ns"
	echo "bench: e2e_${mode}_proxy_cpu_added_per_request $padd ns"
	echo "bench: e2e_${mode}_proxy_rate $prate req/s"
	for hook in "${HOOKS[@]}"; do
		ns=$(printf '%s' "${BPF_NS[$mode.$hook]}" | median)
		ca=$(printf '%s' "${CPU_ADD[$mode.$hook]}" | median)
		f=$(awk -v p="$pns" -v h="$ns" 'BEGIN { printf "%.1f", p / h }')
		g=$(awk -v p="$padd" -v h="$ca" 'BEGIN { printf "%.1f", p / h }')
		printf '%-9s %-10s proxy worker CPU / hdrstrip BPF run time: %s; added CPU, proxy / hdrstrip: %s\n' \
			"$mode" "$hook" "$f" "$g"
		echo "bench: e2e_${mode}_${hook}_proxy_over_bpf $f ratio"
		echo "bench: e2e_${mode}_${hook}_proxy_over_hdrstrip_added $g ratio"
	done
done

if [ "$ORIGIN" = 1 ]; then
	log "done"
	exit 0
fi

# ---- 3: update latency ----------------------------------------------------------

attach_hook xdp
upd_ms=()
for n in 100 1000; do
	other=1000
	[ "$n" = 1000 ] && other=100
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		# Alternate lists so that every update changes the list; only
		# updates to the N-name list are timed, each 100 ms after the last.
		hs_s update "$SDEV" --headers "$BENCH_LISTS/names-$other.txt" --ports "$ORIGIN_PORT" \
			>/dev/null 2>&1 || fail "update to names-$other.txt"
		sleep 0.1
		t0=$EPOCHREALTIME
		hs_s update "$SDEV" --headers "$BENCH_LISTS/names-$n.txt" --ports "$ORIGIN_PORT" \
			>"$WORK/update.log" 2>&1 || fail "update to names-$n.txt: $(cat "$WORK/update.log")"
		t1=$EPOCHREALTIME
		upd_ms+=("$n $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) * 1000 }')")
		sleep 0.1
	done
done
echo
for n in 100 1000; do
	vals=$(printf '%s\n' "${upd_ms[@]}" | awk -v n="$n" '$1 == n { printf "%s ", $2 }')
	med=$(printf '%s' "$vals" | median)
	printf 'update to %4d names: median %s ms (min-max %s ms, 10 updates, each 100 ms after the last)\n' \
		"$n" "$med" "$(printf '%s' "$vals" | minmax)"
	echo "bench: e2e_update_ms_$n $med ms"
done
# Where the time goes: a bare process start of the CLI, and start + parse +
# compile of each list without touching a map, timed the same way.
wall_ms() { # CMD...: wall time of CMD in ms
	local t0 t1
	t0=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 || fail "$*"
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) * 1000 }'
}
vals=
# (--help: --version asks the kernel for its features, more than a start.)
for _ in 1 2 3 4 5 6 7 8 9 10; do vals+="$(wall_ms "$HDRSTRIP" --help) "; done
med=$(printf '%s' "$vals" | median)
printf 'for comparison: hdrstrip --help (process start and exit): median %s ms\n' "$med"
echo "bench: e2e_cli_start_ms $med ms"
for n in 100 1000; do
	vals=
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		vals+="$(wall_ms "$HDRSTRIP" compile --headers "$BENCH_LISTS/names-$n.txt") "
	done
	med=$(printf '%s' "$vals" | median)
	printf 'for comparison: hdrstrip compile of %4d names (start, parse, compile; no map): median %s ms\n' "$n" "$med"
	echo "bench: e2e_cli_compile_ms_$n $med ms"
done
# The CPU time of an update (perf stat's task-clock), spaced the same way:
# what the machine's other load cannot stretch.
for n in 100 1000; do
	other=1000
	[ "$n" = 1000 ] && other=100
	vals=
	for _ in 1 2 3 4 5; do
		hs_s update "$SDEV" --headers "$BENCH_LISTS/names-$other.txt" --ports "$ORIGIN_PORT" \
			>/dev/null 2>&1 || fail "update to names-$other.txt"
		sleep 0.1
		nsenter --net="/run/netns/$SNS" perf stat -x, -e task-clock -o "$WORK/upd.perf" \
			"$HDRSTRIP" update "$SDEV" --headers "$BENCH_LISTS/names-$n.txt" \
			--ports "$ORIGIN_PORT" >/dev/null 2>&1 || fail "update to names-$n.txt (perf stat)"
		vals+="$(awk -F, '$3 == "task-clock" { printf "%.2f", $1 }' "$WORK/upd.perf") "
		sleep 0.1
	done
	med=$(printf '%s' "$vals" | median)
	printf 'update to %4d names: CPU time (task-clock) median %s ms (min-max %s ms, 5 updates)\n' \
		"$n" "$med" "$(printf '%s' "$vals" | minmax)"
	echo "bench: e2e_update_cpu_ms_$n $med ms"
done
vals=
for _ in 1 2 3 4 5; do
	perf stat -x, -e task-clock -o "$WORK/ver.perf" "$HDRSTRIP" --help >/dev/null 2>&1 ||
		fail "hdrstrip --help (perf stat)"
	vals+="$(awk -F, '$3 == "task-clock" { printf "%.2f", $1 }' "$WORK/ver.perf") "
done
med=$(printf '%s' "$vals" | median)
printf 'for comparison: hdrstrip --help: CPU time (task-clock) median %s ms\n' "$med"
echo "bench: e2e_cli_start_cpu_ms $med ms"
if [ "$BOUND" != 1 ]; then
	assert_eq "$(seen_auth "$ORIGIN_URL")" "auth=" "after the updates, X-Internal-Auth is still removed"
fi

# ---- 4: the flows map as attached ---------------------------------------------------

id=$(prog_id xdp)
bpftool -j prog show id "$id" >"$WORK/prog.json"
"$PYTHON" - "$WORK/prog.json" <<'EOF' >"$WORK/maps.txt" || fail "cannot list the program's maps"
import json, subprocess, sys
prog = json.load(open(sys.argv[1]))
for mid in prog.get("map_ids", []):
    m = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", str(mid)],
                                  capture_output=True, text=True, check=True).stdout)
    print(m.get("name", "?"), m.get("max_entries", 0), m.get("bytes_key", 0),
          m.get("bytes_value", 0), m.get("bytes_memlock", 0))
EOF
echo
while read -r name entries key value memlock; do
	printf 'map %-12s %8s entries, key %4s + value %6s bytes, memlock %10s bytes\n' \
		"$name" "$entries" "$key" "$value" "$memlock"
	if [ "$name" = flows ]; then
		per=$(awk -v m="$memlock" -v e="$entries" 'BEGIN { printf "%.1f", m / e }')
		echo "flows: $per bytes per tracked connection (memlock / entries, as attached)"
		echo "bench: e2e_flows_memlock_per_entry $per bytes"
	fi
done <"$WORK/maps.txt"
detach_hook xdp
log "done"
