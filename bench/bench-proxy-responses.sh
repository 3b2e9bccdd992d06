#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Proxy mode's cost on responses (make bench-proxy-responses; root). nginx,
# the origin, runs in a child cgroup made here, in the server namespace of
# the e2e tests' topology (tests/e2e/lib.sh); wrk, outside the cgroup in the
# client namespace, sends a plain GET on keep-alive connections. Each
# response is the typical one of bench-dataplane's responses (16 fields, two
# of them internal: X-Backend-Server, X-Powered-By) with a short body.
#
# Runs alternate without and with hdrstrip attached to the cgroup with
# response rules (A B A B ... A, attach before and detach after each B
# run); a B run's figure is over the mean of its two A neighbours, median
# over the rounds:
#  - the request rate (wrk), and the rate that nginx's worker CPU per
#    request predicts where that CPU is the limit (steadier on a machine
#    others use: the programs run in the worker's context, sending and
#    receiving);
#  - the run time per response of the sk_msg program (the response's lines
#    taken out) and per request of the sk_skb program (the received
#    request's framing), from BPF statistics.
# Every figure is printed as "bench: NAME VALUE UNIT". Knobs: DURATION (s
# per wrk run, 5), ROUNDS (5), CONNS (wrk connections, 16).

. "$(dirname "$0")/../tests/e2e/lib.sh"
. "$(dirname "$0")/proxy-lib.sh"

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-5}
CONNS=${CONNS:-16}
PORT=8080

e2e_init
require_tools wrk nginx curl bpftool
require_cli attach detach stats
bpf_stats_on
topo_setup
cg_make bench-presp || skip "no cgroup2 hierarchy in /proc/mounts"
CG=$E2E_CG
PIN=$BPFFS_ROOT/cgroup-$CG_ID
LIST=$WORK/list
printf 'x-internal-auth\nx-backend-server mask response\nx-powered-by mask response\n' >"$LIST"

mkdir -p "$WORK/nginx"
{
	nginx_conf_head "$WORK/nginx/error.log" warn 1024
	cat <<EOF
	keepalive_requests 100000000;
	keepalive_timeout 60s;
	server_tokens off;
	default_type "application/json; charset=utf-8";
	server {
		listen $PORT;
		location / {
			add_header Cache-Control "private, max-age=0";
			add_header ETag 'W/"5f3a-18c9e2b7d41"';
			add_header Vary "Accept-Encoding, Origin";
			add_header X-Backend-Server "app-17.dc2.internal:8080";
			add_header Strict-Transport-Security "max-age=63072000";
			add_header X-Content-Type-Options nosniff;
			add_header X-Powered-By Express;
			add_header Access-Control-Allow-Origin "https://shop.example.com";
			add_header X-Request-Id 2f6c1e0a93b44d519a7e;
			add_header Set-Cookie "session=8f14e45fceea167a5a36dedd4bea2543; Path=/; Secure";
			add_header Referrer-Policy strict-origin-when-cross-origin;
			return 200 '{"ok":true}';
		}
	}
}
EOF
} >"$WORK/nginx/nginx.conf"
nginx_run "$PORT" in_cg_ns "$SNS"
WORKER=$(pgrep -P "$(cat "$WORK/nginx/nginx.pid")" | head -n 1)
[ -n "$WORKER" ] || fail "cannot find nginx's worker"
worker_cpu_ns() { awk '{ print $1 }' "/proc/$WORKER/schedstat"; }

attach() {
	"$HDRSTRIP" attach --cgroup "$CG" --headers "$LIST" --ports "$PORT" >"$WORK/attach.log" 2>&1 ||
		fail "attach --cgroup: $(cat "$WORK/attach.log")"
}
detach() {
	"$HDRSTRIP" detach --cgroup "$CG" >"$WORK/detach.log" 2>&1 ||
		fail "detach --cgroup: $(cat "$WORK/detach.log")"
}
# What it measures must work first.
hdrs() { in_c curl -s -D - -o /dev/null --max-time 5 "http://$S4:$PORT/"; }
assert_match "$(hdrs)" '^x-backend-server' "no program: the internal fields reach the client"
attach
assert_no_match "$(hdrs)" '^x-backend-server|^x-powered-by' "hdrstrip on the cgroup: they do not"
RESP_BYTES=$(in_c curl -s -D - --max-time 5 "http://$S4:$PORT/" | wc -c)
detach
RESP_BYTES_NONE=$(in_c curl -s -D - --max-time 5 "http://$S4:$PORT/" | wc -c)

# run_wrk: one run; sets REQS, RATE and SCPU (the worker's CPU ns a request).
run_wrk() {
	local out s0 s1
	s0=$(worker_cpu_ns)
	out=$(in_c wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://$S4:$PORT/" 2>&1) || fail "wrk failed: $out"
	s1=$(worker_cpu_ns)
	REQS=$(printf '%s\n' "$out" | awk '/requests in/ { print $1 }')
	RATE=$(printf '%s\n' "$out" | awk '/^Requests\/sec:/ { print $2 }')
	[ -n "$REQS" ] && [ -n "$RATE" ] || fail "cannot read wrk's output: $out"
	grep -qE 'Non-2xx|Socket errors' <<<"$out" && fail "wrk saw errors: $out"
	SCPU=$(awk -v d="$((s1 - s0))" -v r="$REQS" 'BEGIN { printf "%.0f", d / r }')
}

RATIOS= CPU_RATIOS= NONE_CPU= WITH_CPU= MSG_NS= RX_NS= MSG_RUNS= RX_RUNS=
run_wrk
prev=$RATE prev_cpu=$SCPU
NONE_CPU+="$SCPU "
for round in $(seq 1 "$ROUNDS"); do
	attach
	msg=$(prog_id hdrstrip_msg) rx=$(prog_id hdrstrip_rx)
	m0=$(prog_stat "$msg" run_time_ns) mc0=$(prog_stat "$msg" run_cnt)
	x0=$(prog_stat "$rx" run_time_ns) xc0=$(prog_stat "$rx" run_cnt)
	r0=$(counter_now response_headers_removed)
	run_wrk
	with=$RATE with_cpu=$SCPU reqs=$REQS
	m1=$(prog_stat "$msg" run_time_ns) mc1=$(prog_stat "$msg" run_cnt)
	x1=$(prog_stat "$rx" run_time_ns) xc1=$(prog_stat "$rx" run_cnt)
	r1=$(counter_now response_headers_removed)
	detach
	[ $((r1 - r0)) -ge $((2 * reqs)) ] || fail "round $round: $((r1 - r0)) lines removed for $reqs responses"
	run_wrk
	RATIOS+="$(ratio "$with" "$prev" "$RATE") "
	CPU_RATIOS+="$(awk -v w="$with_cpu" -v a="$prev_cpu" -v b="$SCPU" 'BEGIN { printf "%.4f", (a + b) / 2 / w }') "
	NONE_CPU+="$SCPU " WITH_CPU+="$with_cpu "
	MSG_NS+="$(awk -v t="$((m1 - m0))" -v r="$reqs" 'BEGIN { printf "%.1f", t / r }') "
	RX_NS+="$(awk -v t="$((x1 - x0))" -v r="$reqs" 'BEGIN { printf "%.1f", t / r }') "
	MSG_RUNS+="$(awk -v c="$((mc1 - mc0))" -v r="$reqs" 'BEGIN { printf "%.3f", c / r }') "
	RX_RUNS+="$(awk -v c="$((xc1 - xc0))" -v r="$reqs" 'BEGIN { printf "%.3f", c / r }') "
	log "round $round: $with req/s with, between $prev and $RATE without; worker $with_cpu ns/request with, $prev_cpu and $SCPU without"
	prev=$RATE prev_cpu=$SCPU
done

echo
echo "Proxy mode, responses: nginx in the cgroup, the typical response ($RESP_BYTES_NONE bytes as sent,"
echo "$RESP_BYTES with its 2 internal lines taken out); wrk -t1 -c$CONNS keep-alive, ${DURATION}s per run,"
echo "$ROUNDS rounds, without/with alternated; $(nproc) CPUs, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
x=$(printf '%s' "$RATIOS" | median)
cx=$(printf '%s' "$CPU_RATIOS" | median)
printf 'rate with / neighbours without: x%s (rounds %s)\n' "$x" "$(printf '%s' "$RATIOS" | span)"
printf "nginx worker CPU per request: %s ns without, %s with; CPU-bound rate x%s (rounds %s)\n" \
	"$(printf '%s' "$NONE_CPU" | median)" "$(printf '%s' "$WITH_CPU" | median)" "$cx" \
	"$(printf '%s' "$CPU_RATIOS" | span)"
printf 'sk_msg (responses): %s ns per response, %s runs per response (rounds %s)\n' \
	"$(printf '%s' "$MSG_NS" | median)" "$(printf '%s' "$MSG_RUNS" | median)" "$(printf '%s' "$MSG_NS" | span)"
printf 'sk_skb (received requests): %s ns per request, %s runs per request (rounds %s)\n' \
	"$(printf '%s' "$RX_NS" | median)" "$(printf '%s' "$RX_RUNS" | median)" "$(printf '%s' "$RX_NS" | span)"
echo "bench: proxy_resp_rate_vs_none $x ratio"
echo "bench: proxy_resp_cpu_bound_vs_none $cx ratio"
echo "bench: proxy_resp_worker_cpu_ns_none $(printf '%s' "$NONE_CPU" | median) ns"
echo "bench: proxy_resp_worker_cpu_ns_with $(printf '%s' "$WITH_CPU" | median) ns"
echo "bench: proxy_resp_msg_ns_per_response $(printf '%s' "$MSG_NS" | median) ns"
echo "bench: proxy_resp_rx_ns_per_request $(printf '%s' "$RX_NS" | median) ns"
log "done"
