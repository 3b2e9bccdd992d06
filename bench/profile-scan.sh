#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Where a BPF function's time goes, by source line (BENCHMARKS.md, "Speed"):
# bench_dataplane runs while perf samples every CPU; each sample in FUNC is
# mapped through the loaded program's JIT line table (jit_lines) to its
# file and line. Prints the share per file, then per line.
#
#   profile-scan.sh BENCH_DATAPLANE JIT_LINES OBJ EMPTY FLOOR CORPUS LISTS [FUNC]
set -euo pipefail
[ $# -ge 7 ] || { echo "usage: $0 BENCH JIT_LINES OBJ EMPTY FLOOR CORPUS LISTS [FUNC]" >&2; exit 2; }
bench=$1 jit=$2 obj=$3 empty=$4 floor=$5 corpus=$6 lists=$7 func=${8:-scan_cb_xdp}
[ "$(id -u)" -eq 0 ] || { echo "profile-scan: skipped (needs root)"; exit 77; }
command -v perf >/dev/null || { echo "profile-scan: perf is missing (make deps)" >&2; exit 1; }
work=$(mktemp -d)
pid=
# The benchmark has usually ended by then: a kill that finds no process is
# no failure (under set -e it would be the script's exit status).
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
"$bench" --obj "$obj" --empty "$empty" --floor "$floor" --corpus "$corpus" --lists "$lists" \
	--what dataplane --runs 3 >"$work/bench.out" 2>&1 &
pid=$!
id=
for _ in $(seq 1 80); do
	id=$(bpftool prog show name hdrstrip_xdp 2>/dev/null | head -1 | cut -d: -f1 || true)
	[ -n "$id" ] && break
	sleep 0.25
done
[ -n "$id" ] || { echo "profile-scan: the benchmark's program never showed" >&2; exit 1; }
"$jit" "$id" >"$work/lines"
perf record -q -a -o "$work/perf.data" -- sleep 20 >/dev/null 2>&1
perf script -i "$work/perf.data" -F ip,sym,symoff 2>/dev/null |
	sed -n "s/.*_${func}+0x\\([0-9a-f]*\\)\$/\\1/p" >"$work/offs"
python3 - "$work/lines" "$work/offs" "$func" <<'PY'
import bisect, collections, sys
lines = sorted((int(o), src) for f, o, src in (l.split() for l in open(sys.argv[1])) if f == sys.argv[3])
offs = [o for o, _ in lines]
per = collections.Counter()
for l in open(sys.argv[2]):
    i = bisect.bisect_right(offs, int(l, 16)) - 1
    per[lines[i][1] if i >= 0 else '?'] += 1
tot = sum(per.values()) or 1
files = collections.Counter()
for k, v in per.items():
    files[k.split(':')[0]] += v
print("%s: %d samples" % (sys.argv[3], tot))
for k, v in files.most_common(12):
    print("  %5.1f%% %s" % (100.0 * v / tot, k))
for k, v in per.most_common(40):
    print("  %5.1f%% %s" % (100.0 * v / tot, k))
PY
