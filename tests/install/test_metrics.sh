#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# 'hdrstrip stats --prometheus', 'stats --watch' and the JSON of 'status'
# (ports and flows as numbers, -j and -p) on a real attachment:
# a client and a server namespace joined by a veth pair (tests/e2e/lib.sh),
# hdrstrip on the server's end (XDP and TC egress), python's http.server
# in the server namespace, curl in the client's. The Prometheus output must
# pass a strict parser of the exposition format (promcheck.py, and promtool
# when it is installed) and agree with 'stats --json'. 'stats --json' stays
# one valid array when a device's counters cannot be read (failread.c, an
# LD_PRELOAD shim, fails that read). Everything is removed by the trap.
# Exit 0 pass, 1 fail, 77 skipped.

source "$(dirname "$0")/../e2e/lib.sh"
E2E_NAME=test_metrics
HERE=$(cd "$(dirname "$0")" && pwd)
PORT=8000

e2e_init
require_tools curl
require_cli stats
topo_setup

# A list with names whose label values need escaping.
cat >"$WORK/list.txt" <<'EOF'
x-internal-auth
x-edge-*
x-q"uote
x-back\slash
x-secret drop
EOF
step "attach xdp to $SDEV" hs_s attach "$SDEV" --headers "$WORK/list.txt" --ports "$PORT"
note_attached "$SNS" "$SDEV"
step "attach tc-egress to $SDEV" hs_s attach "$SDEV" --hook tc-egress --headers "$WORK/list.txt"

mkdir -p "$WORK/www"
ip netns exec "$SNS" "$PYTHON" -m http.server "$PORT" --bind "$S4" --directory "$WORK/www" \
	>"$WORK/http.log" 2>&1 &
E2E_PIDS+=($!)
wait_listen "$SNS" "$PORT" "python http.server" $!
log "ok: python http.server on $S4:$PORT"

get() { # extra curl arguments
	in_c curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "http://$S4:$PORT/"
}
for i in 1 2 3; do
	code=$(get -H 'X-Internal-Auth: s3cret' -H 'X-Edge-Trace: 1' -H 'X-Q"uote: 1') ||
		fail "curl request $i failed"
	assert_eq "$code" 200 "request $i answered"
done

# ---- --prometheus ----
step "stats --prometheus" to_file "$WORK/metrics.prom" hs_s stats --prometheus
step "stats --json --per-header" to_file "$WORK/stats.json" hs_s stats "$SDEV" --json --per-header
step "the exposition format is valid (promcheck.py)" \
	to_file "$WORK/families.json" "$PYTHON" "$HERE/promcheck.py" --json "$WORK/metrics.prom"
if command -v promtool >/dev/null 2>&1; then
	step "promtool check metrics" bash -c "promtool check metrics <'$WORK/metrics.prom'"
else
	log "promtool is not installed: promcheck.py alone checked the format"
fi

# What the metrics say, against 'stats --json' and what was sent.
step "metrics agree with stats --json and the traffic" "$PYTHON" - "$WORK/families.json" \
	"$WORK/stats.json" "$SDEV" "$SNS" "$REPO_ROOT/include/hdrstrip/counters.h" \
	"$("$HDRSTRIP" --version | awk 'NR == 1 { print $2 }')" <<'EOF'
import json, re, sys
fams = json.load(open(sys.argv[1]))
stats = json.load(open(sys.argv[2]))
assert isinstance(stats, list) and len(stats) == 1, stats
stats = stats[0]
dev, ns = sys.argv[3], sys.argv[4]
version = sys.argv[6]
want_actions = {"x-internal-auth": "mask", "x-edge-*": "mask", 'x-q"uote': "mask",
                "x-back\\slash": "mask", "x-secret": "drop",
                "http2-settings": "mask"}  # the built-in rule (README, "Header lists")
names = re.findall(r'\bX\(([a-z0-9_]+),', open(sys.argv[5]).read().split("#define HS_COUNTERS(X)")[1].split("\n\n")[0])
assert names, "no counter names in counters.h"
def one(fam, **want):
    got = [v for labels, v in fams[fam]["samples"] if all(labels.get(k) == w for k, w in want.items())]
    assert len(got) == 1, f"{fam}{want}: {len(got)} samples"
    return got[0]
assert one("hdrstrip_devices") == 1
assert [l for l, v in fams["hdrstrip_build_info"]["samples"] if v == 1] == [{"version": version}], fams["hdrstrip_build_info"]
for c in names:
    fam = f"hdrstrip_{c}_total"
    assert fams[fam]["type"] == "counter", fam
    assert [l for l, _ in fams[fam]["samples"]] == [{"dev": dev, "netns": ns}], fams[fam]["samples"]
# Counters that only requests move must equal the JSON's (packets may not:
# neighbour discovery goes on).
for c in ("http_requests", "headers_seen", "headers_matched", "headers_masked", "packets_dropped"):
    assert one(f"hdrstrip_{c}_total", dev=dev) == stats[c], (c, one(f"hdrstrip_{c}_total", dev=dev), stats[c])
assert one("hdrstrip_http_requests_total", dev=dev) >= 3
hits = {l["header"]: v for l, v in fams["hdrstrip_header_hits_total"]["samples"]}
actions = {l["header"]: l["action"] for l, v in fams["hdrstrip_header_hits_total"]["samples"]}
assert actions == want_actions, (actions, want_actions)
assert fams["hdrstrip_header_hits_total"]["type"] == "counter"
assert hits == stats["per_header"], (hits, stats["per_header"])
assert hits["x-internal-auth"] >= 3 and hits["x-edge-*"] >= 3, hits
assert 'x-q"uote' in hits and "x-back\\slash" in hits, hits
hooks = sorted((l["hook"], l["mode"]) for l, v in fams["hdrstrip_attached_info"]["samples"] if v == 1)
assert hooks == [("tc-egress", "clsact"), ("xdp", "native")] or hooks == [("tc-egress", "clsact"), ("xdp", "skb")], hooks
assert one("hdrstrip_list_names", dev=dev) == 5
print("metrics: %d families, hits %s" % (len(fams), hits))
EOF

# No attachment in the client namespace: still valid, and says so.
step "stats --prometheus with nothing attached" to_file "$WORK/empty.prom" hs_c stats --prometheus
step "... is valid" "$PYTHON" "$HERE/promcheck.py" "$WORK/empty.prom"
assert_match "$(cat "$WORK/empty.prom")" '^hdrstrip_devices 0$' "hdrstrip_devices 0"
assert_match "$(cat "$WORK/empty.prom")" '^hdrstrip_build_info\{version="' "hdrstrip_build_info"

# ---- --watch ----
(for i in $(seq 1 12); do get -H 'X-Internal-Auth: a' >/dev/null; sleep 0.2; done) &
traffic=$!
step "stats --watch 0.5 --count 3 --json" \
	to_file "$WORK/watch.jsonl" hs_s stats "$SDEV" --watch 0.5 --count 3 --json --per-header
wait "$traffic" || true
step "watch: 3 JSON lines with rates" "$PYTHON" - "$WORK/watch.jsonl" "$SDEV" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 3, lines
recs = [json.loads(l) for l in lines]
for r in recs:
    assert r["dev"] == sys.argv[2] and 0.4 < r["interval"] < 2.0, r
    assert set(r["rates"]) >= {"packets", "http_requests", "headers_masked"}, r
    assert all(v >= 0 for v in r["rates"].values()), r
assert any(r["rates"]["http_requests"] > 0 for r in recs), [r["rates"] for r in recs]
assert any(r["per_header_rates"]["x-internal-auth"] > 0 for r in recs)
# A rate is the difference of totals over the interval.
a, b = recs[0], recs[1]
want = (b["http_requests"] - a["http_requests"]) / b["interval"]
assert abs(b["rates"]["http_requests"] - want) < 1e-3 * max(1, want), (b, want)
print("watch:", [round(r["rates"]["http_requests"], 1) for r in recs], "requests/s")
EOF
# The keys, in the order hdrstrip(8) lists them (its "counters": every
# counter, in stats --json's order).
"$PYTHON" "$HERE/mankeys.py" "$REPO_ROOT/man/hdrstrip.8" \
	"each update prints one line per interface" >"$WORK/watch.keys" ||
	fail "the man page lists no keys for stats --watch --json"
step "stats --json, for its counters' order" to_file "$WORK/stats-order.json" hs_s stats "$SDEV" --json
step "watch --json: the keys in the man page's order" "$PYTHON" - "$WORK/watch.jsonl" \
	"$WORK/watch.keys" "$WORK/stats-order.json" <<'EOF'
import json, sys
rec = json.loads(open(sys.argv[1]).readline())
stats = json.load(open(sys.argv[3]))[0]
want = []
for k in open(sys.argv[2]).read().split():
    want += [c for c in stats if c not in ("dev", "per_header")] if k == "counters" else [k]
assert list(rec) == want, "watch line %s, man page %s" % (list(rec), want)
EOF
step "stats --watch 0.2 --count 1 (text)" to_file "$WORK/watch.txt" hs_s stats --watch 0.2 --count 1
assert_match "$(cat "$WORK/watch.txt")" "^$SDEV \\(xdp, tc-egress\\)" "watch text names the device and hooks"
assert_match "$(cat "$WORK/watch.txt")" 'per second' "watch text shows rates"

# By default an update shows the counters that changed; --all every one.
(for i in $(seq 1 8); do get -H 'X-Internal-Auth: a' >/dev/null; sleep 0.15; done) &
traffic=$!
step "stats --watch 0.5 --count 2 (text, requests meanwhile)" \
	to_file "$WORK/watch-changed.txt" hs_s stats "$SDEV" --watch 0.5 --count 2
wait "$traffic" || true
last=$(awk '/^hdrstrip stats, every/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' \
	"$WORK/watch-changed.txt")
assert_match "$last" "^  http_requests +[0-9]+ +[0-9.]+$" "watch: a counter that changed is shown"
assert_no_match "$last" "^  fastopen_unfiltered " "watch: a counter that stayed still is not"
assert_match "$last" "^  \\([0-9]+ counters unchanged; --all shows every one\\)$" \
	"watch: how many were left out"
step "stats --watch 0.2 --count 2 --all" to_file "$WORK/watch-all.txt" \
	hs_s stats "$SDEV" --watch 0.2 --count 2 --all
last=$(awk '/^hdrstrip stats, every/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' \
	"$WORK/watch-all.txt")
assert_eq "$(grep -cE '^  [a-z][a-z0-9_]* +[0-9]+ +[0-9.-]+$' <<<"$last")" \
	"$(hs_s stats "$SDEV" --json | "$PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)[0]) - 1)')" \
	"watch --all: every counter"
expect_exit 2 "--all without --watch is bad usage" hs_s stats --all

# Until interrupted: SIGINT ends it with status 0. nsenter execs hdrstrip,
# so $! is hdrstrip itself.
nsenter --net="/run/netns/$SNS" "$HDRSTRIP" stats --watch 0.2 >"$WORK/watch-int.txt" 2>&1 &
wpid=$!
E2E_PIDS+=("$wpid")
sleep 1
kill -INT "$wpid"
for _ in $(seq 1 30); do
	kill -0 "$wpid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$wpid" 2>/dev/null && fail "stats --watch still runs 3 s after SIGINT"
rc=0
wait "$wpid" || rc=$?
assert_eq "$rc" 0 "watch exit status after SIGINT"
assert_ge "$(grep -c '^hdrstrip stats, every' "$WORK/watch-int.txt")" 2 "watch updates before SIGINT"

expect_exit 2 "--watch 0 is bad usage" hs_s stats --watch 0
expect_exit 2 "--count without --watch is bad usage" hs_s stats --count 2
expect_exit 2 "--prometheus with --json is bad usage" hs_s stats --prometheus --json
expect_exit 1 "--prometheus for a device without hdrstrip fails" hs_c stats "$CDEV" --prometheus

# ---- status --json: numbers for numbers; -j and -p ----
# The ports are a JSON array (a run of 3 or more as [first,last]); flows
# is each hook's table as the kernel sized it (bpftool's max_entries):
# the default from include/hdrstrip/flow.h, then a hook attached again
# with --flows 100 beside one with the default.
status_check() { # WHAT PORTS-JSON FLOWS-JSON ({hook: flows}) TOP-FLOWS
	step "$1: status --json" to_file "$WORK/st.json" hs_s status "$SDEV" --json
	step "$1: hdrstrip -j status" to_file "$WORK/st-j.json" hs_s -j status "$SDEV"
	step "$1: hdrstrip --json status" to_file "$WORK/st-json.json" hs_s --json status "$SDEV"
	step "$1: hdrstrip -p status" to_file "$WORK/st-p.json" hs_s -p status "$SDEV"
	step "$1: -j and --json print what status --json prints" \
		bash -c "cmp '$WORK/st.json' '$WORK/st-j.json' && cmp '$WORK/st.json' '$WORK/st-json.json'"
	step "$1: ports and flows are numbers, the kernel's; -p is the same JSON, indented" \
		"$PYTHON" - "$WORK/st.json" "$WORK/st-p.json" "$2" "$3" "$4" <<'EOF'
import json, subprocess, sys
compact, pretty = open(sys.argv[1]).read(), open(sys.argv[2]).read()
want_ports, want_flows, want_top = json.loads(sys.argv[3]), json.loads(sys.argv[4]), int(sys.argv[5])
st = json.loads(compact)
assert isinstance(st, list) and len(st) == 1, st
st = st[0]
ports = st["ports"]
assert ports == want_ports, (ports, want_ports)
for p in ports:
    assert type(p) is int or (type(p) is list and len(p) == 2 and all(type(q) is int for q in p)
                              and p[1] - p[0] >= 2), ("not a port or a run of 3+", p)
got = {h["hook"]: h["flows"] for h in st["hooks"]}
assert got == want_flows, (got, want_flows)
assert type(st["flows"]) is int and st["flows"] == want_top, (st["flows"], want_top)
def bpftool(*args):
    return json.loads(subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True,
                                     check=True).stdout)
for h in st["hooks"]:
    maps = (bpftool("map", "show", "id", str(i))
            for i in bpftool("prog", "show", "id", str(h["prog_id"]))["map_ids"])
    sizes = [m["max_entries"] for m in maps if m.get("name") == "flows"]
    assert sizes == [h["flows"]], (h, "bpftool says", sizes)
# -p: the same content; 2 spaces a level, one key per line, as
# json.dumps(indent=2) writes it (the content is ASCII here).
assert json.loads(pretty) == json.loads(compact), "-p and --json differ"
assert pretty == json.dumps(json.loads(compact), indent=2) + "\n", pretty
print("status: ports %s, flows %s (top %d)" % (ports, got, st["flows"]))
EOF
}
flows_default=$(sed -n 's/^#define HS_FLOWS_DEFAULT \([0-9]*\).*/\1/p' "$REPO_ROOT/include/hdrstrip/flow.h")
[ -n "$flows_default" ] || fail "no HS_FLOWS_DEFAULT in include/hdrstrip/flow.h"
step "update --ports $PORT,8001,8080-8090" hs_s update "$SDEV" --headers "$WORK/list.txt" \
	--ports "$PORT,8001,8080-8090"
status_check "default flows" "[$PORT, 8001, [8080, 8090]]" \
	"{\"xdp\": $flows_default, \"tc-egress\": $flows_default}" "$flows_default"
step "detach tc-egress" hs_s detach "$SDEV" --hook tc-egress
step "attach tc-egress --flows 100" hs_s attach "$SDEV" --hook tc-egress \
	--headers "$WORK/list.txt" --flows 100
status_check "--flows 100 on tc-egress" "[$PORT, 8001, [8080, 8090]]" \
	"{\"xdp\": $flows_default, \"tc-egress\": 100}" 100
assert_match "$(hs_s status "$SDEV")" "^  flows +xdp $flows_default, tc-egress 100 connections$" \
	"status (text): each hook's table"
# stats: the same through -j and -p (the counters move: keys only).
step "hdrstrip -j stats" to_file "$WORK/stats-j.json" hs_s -j stats "$SDEV" --per-header
step "hdrstrip -p stats" to_file "$WORK/stats-p.json" hs_s -p stats "$SDEV" --per-header
step "-j and -p stats: stats --json's keys" "$PYTHON" - "$WORK/stats.json" \
	"$WORK/stats-j.json" "$WORK/stats-p.json" <<'EOF'
import json, sys
want, j, p = (json.load(open(f)) for f in sys.argv[1:4])
for got in (j, p):
    assert isinstance(got, list) and len(got) == 1, got
    assert list(got[0]) == list(want[0]), (list(got[0]), list(want[0]))
    assert list(got[0]["per_header"]) == list(want[0]["per_header"]), got[0]["per_header"]
EOF
expect_exit 2 "-j attach is bad usage" hs_s -j attach "$SDEV" --headers "$WORK/list.txt"
assert_match "$EXPECT_OUT" "attach prints no JSON" "-j attach: the message names the command"
step "hdrstrip -p stats --watch 0.2 --count 2" \
	to_file "$WORK/watch-p.txt" hs_s -p stats "$SDEV" --watch 0.2 --count 2
step "-p --watch: one indented object an update" "$PYTHON" - "$WORK/watch-p.txt" "$SDEV" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
dec, docs, i = json.JSONDecoder(), [], 0
while i < len(text):
    doc, i = dec.raw_decode(text, i)
    docs.append(doc)
    assert text[i] == "\n", repr(text[i:i + 20])
    i += 1
assert len(docs) == 2 and all(d["dev"] == sys.argv[2] for d in docs), docs
assert text.startswith('{\n  "time": "'), text[:40]
EOF

# JSON is UTF-8 whatever the bytes of a path: a list file whose name is not
# UTF-8 (0xff; then U+00E9 as UTF-8, kept) shows as \u00ff.
odd="$WORK/list-"$'\xff'"-"$'\xc3\xa9'".txt"
cp "$WORK/list.txt" "$odd"
step "update from a list whose file name is not UTF-8" hs_s update "$SDEV" --headers "$odd"
step "status --json" to_file "$WORK/status-odd.json" hs_s status "$SDEV" --json
step "status --json is UTF-8 JSON and names the file" "$PYTHON" -c '
import json, sys
st = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert isinstance(st, list) and len(st) == 1, st
st = st[0]
assert st["list"].endswith("/list-\u00ff-\u00e9.txt"), st["list"]
' "$WORK/status-odd.json"

# ---- stats --json when one device's counters cannot be read ----
# (a device detached between discovery and the read): the others' objects
# still make one valid array, and the exit status is 1. A second device in
# the server's namespace (a veth pair of its own); the shim fails the Nth
# read of a map named counters.
if command -v "${CC:-cc}" >/dev/null 2>&1 &&
	"${CC:-cc}" -shared -fPIC -o "$WORK/failread.so" "$HERE/failread.c" -ldl 2>"$WORK/cc.err"; then
	DEV2=hsm$$
	step "a second device, $DEV2" ip -n "$SNS" link add "$DEV2" type veth peer name "${DEV2}p"
	step "$DEV2 up" ip -n "$SNS" link set "$DEV2" up
	note_attached "$SNS" "$DEV2"
	step "attach xdp to $DEV2" hs_s attach "$DEV2" --headers "$WORK/list.txt" --ports "$PORT"
	stats_array() { # FILE COUNT: FILE is one JSON array of COUNT objects, each a device's
		"$PYTHON" -c '
import json, sys
got = json.load(open(sys.argv[1]))
assert isinstance(got, list) and len(got) == int(sys.argv[2]), got
assert all("dev" in d and "packets" in d for d in got), got
' "$1" "$2"
	}
	step "stats --json: both devices" to_file "$WORK/two.json" hs_s stats --json
	step "... one array of 2" stats_array "$WORK/two.json" 2
	for nth in 1 2; do
		for ph in "" --per-header; do
			rc=0
			HS_FAIL_COUNTERS=$nth LD_PRELOAD="$WORK/failread.so" \
				hs_s stats --json ${ph:+"$ph"} >"$WORK/one.json" 2>"$WORK/one.err" || rc=$?
			assert_eq "$rc" 1 "stats --json${ph:+ $ph}, read $nth of 2 failing: exit status"
			assert_match "$(cat "$WORK/one.err")" "cannot read the counters of" \
				"stats --json${ph:+ $ph}, read $nth failing: the message"
			step "stats --json${ph:+ $ph}, read $nth of 2 failing: a valid array of 1" \
				stats_array "$WORK/one.json" 1
		done
	done
	step "detach $DEV2" hs_s detach "$DEV2"
else
	log "no C compiler ($(head -1 "$WORK/cc.err" 2>/dev/null)): the failed-read case not checked"
fi

# ---- deploy/: the dashboard and the rules read what hdrstrip emits ----
# The families of a real scrape: stats --prometheus here, and the agent's
# own on its /metrics (an agent in the server's namespace, its one section
# an interface that is not there).
printf '[attach hsnone%s]\nheaders = %s\n' "$$" "$WORK/list.txt" >"$WORK/agent.conf"
MPORT=$(in_s "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nsenter --net="/run/netns/$SNS" "$HDRSTRIP" run --config "$WORK/agent.conf" \
	--metrics-listen "127.0.0.1:$MPORT" >"$WORK/agent.log" 2>&1 &
apid=$!
E2E_PIDS+=("$apid")
poll_until 5 in_s curl -sf -o "$WORK/agent.prom" "http://127.0.0.1:$MPORT/metrics" ||
	fail "the agent's /metrics: $(tail -3 "$WORK/agent.log")"
kill -TERM "$apid"
wait "$apid" || true
cat "$WORK/metrics.prom" "$WORK/agent.prom" | sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' | sort -u \
	>"$WORK/families.txt"
# Every counter of the table is a family of the scrape (the list is the
# code's, not a copy).
cat >"$WORK/ctr.c" <<'EOF'
#include <stdio.h>
#include <hdrstrip/counters.h>
int main(void)
{
	for (unsigned int k = 0; k < HS_N_COUNTERS; k++)
		printf("hdrstrip_%s_total\n", hs_counter_info[k].name);
	return 0;
}
EOF
cc -I"$REPO_ROOT/include" -o "$WORK/ctr" "$WORK/ctr.c" || fail "the counter table's probe"
missing=$("$WORK/ctr" | sort | comm -23 - "$WORK/families.txt" | tr '\n' ' ')
assert_eq "$missing" "" "every counter of include/hdrstrip/counters.h is a family of the scrape"
assert_match "$(cat "$WORK/families.txt")" "^hdrstrip_agent_reload_failures_total$" \
	"the agent's families are in the list"
step "the dashboard's and the rules' metrics are families hdrstrip emits" \
	"$PYTHON" "$HERE/check_queries.py" --names "$WORK/families.txt" \
	--dashboard "$REPO_ROOT/deploy/grafana/hdrstrip.json" \
	--rules "$REPO_ROOT/deploy/prometheus/hdrstrip-rules.yml"

step "detach $SDEV" hs_s detach "$SDEV"
[ ! -e "$BPFFS_ROOT/$SDEV" ] || fail "pins of $SDEV left after detach"
log "PASS"
