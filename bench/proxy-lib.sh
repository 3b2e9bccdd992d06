#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What the proxy-mode benchmarks share (bench-proxy.sh,
# bench-proxy-responses.sh); sourced after tests/e2e/lib.sh.

# prog_id NAME: the id of program NAME of the attachment whose maps are
# pinned in $PIN (the one that uses its config map).
prog_id() {
	local cfg
	cfg=$(bpftool -j map show pinned "$PIN/config" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["id"])') ||
		fail "no config map pinned in $PIN"
	bpftool -j prog show | "$PYTHON" -c '
import json, sys
ids = [p["id"] for p in json.load(sys.stdin)
       if p.get("name") == sys.argv[2] and int(sys.argv[1]) in p.get("map_ids", [])]
if len(ids) != 1:
    sys.exit("%s programs using map %s: %s" % (sys.argv[2], sys.argv[1], ids))
print(ids[0])' "$cfg" "$1" || fail "cannot find the $1 program"
}

counter_now() { # NAME: a counter of the attachment to $CG
	"$HDRSTRIP" stats --cgroup "$CG" --json |
		"$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)[0][sys.argv[1]])' "$1"
}

prog_stat() { # ID FIELD
	bpftool -j prog show id "$1" | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], 0))' "$2"
}

median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
span() { tr ' ' '\n' | awk 'NF' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }
ratio() { awk -v b="$1" -v a1="$2" -v a2="$3" 'BEGIN { printf "%.4f", b / ((a1 + a2) / 2) }'; }

# bpf_stats_on: BPF run-time statistics, held on by an fd (BPF_ENABLE_STATS)
# for as long as the benchmark runs: kernel.bpf_stats_enabled is left alone,
# so that others who turn it on and off do not switch them off under us.
bpf_stats_on() {
	"$PYTHON" -c '
import ctypes, os, platform, signal, sys
nr = {"x86_64": 321, "aarch64": 280}.get(platform.machine())
libc = ctypes.CDLL(None, use_errno=True)
attr = ctypes.create_string_buffer(128)  # enable_stats.type: BPF_STATS_RUN_TIME (0)
fd = libc.syscall(nr, 32, attr, 128) if nr else -1  # BPF_ENABLE_STATS
if fd < 0:
    sys.exit("BPF_ENABLE_STATS failed: %s" % os.strerror(ctypes.get_errno()))
print("on", flush=True)
signal.pause()' >"$WORK/stats.out" 2>&1 &
	E2E_PIDS+=($!)
	for _ in $(seq 1 100); do
		grep -q . "$WORK/stats.out" && break
		sleep 0.05
	done
	grep -qx on "$WORK/stats.out" || fail "cannot turn BPF statistics on: $(cat "$WORK/stats.out")"
	log "ok: BPF run-time statistics on (BPF_ENABLE_STATS, held until the end)"
}
