#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# Two builds of the datapath side by side (make bench-dataplane-ab; root):
# bench_dataplane on each object in turn, ROUNDS rounds, so that a slow
# spell of this shared machine hits both. Prints, per hook and request,
# every round's hdrstrip / floor ratio of each object and the median of the
# ratios new / old: method A (hot caches; its iterations after the first
# rescan bytes already masked) and, as REQUEST-B, method B's established
# figure (an in-order segment of a tracked connection on fresh bytes: what
# real traffic pays).
#
#   bench/ab-dataplane.sh BENCH_DATAPLANE OLD.bpf.o NEW.bpf.o EMPTY FLOOR CORPUS
#
# make bench-dataplane-ab AB_OLD=REV builds OLD from git revision REV (in a
# temporary worktree) and NEW from the working tree. Knobs: ROUNDS (5),
# RUNS (3 runs per object and round), REPEAT (50000), NEW_ARGS (more
# bench_dataplane arguments for NEW only: make bench-dataplane-bound passes
# "--bound 1" with the lower-bound build as NEW).
set -euo pipefail

[ $# -eq 6 ] || {
	echo "usage: $0 BENCH_DATAPLANE OLD.bpf.o NEW.bpf.o EMPTY.bpf.o FLOOR.bpf.o CORPUS" >&2
	exit 2
}
bin=$1 old=$2 new=$3 empty=$4 floor=$5 corpus=$6
ROUNDS=${ROUNDS:-5} RUNS=${RUNS:-3} REPEAT=${REPEAT:-50000} NEW_ARGS=${NEW_ARGS:-}
out=$(mktemp)
trap 'rm -f "$out" "$out.bench"' EXIT

if [ "$(id -u)" -ne 0 ]; then
	echo "bench-dataplane-ab: skipped (needs root)"
	exit 77
fi
for f in "$bin" "$old" "$new" "$empty" "$floor"; do
	[ -e "$f" ] || {
		echo "$0: $f: no such file" >&2
		exit 1
	}
done

echo "A/B: old $old, new $new; $ROUNDS rounds, $RUNS runs of $REPEAT each; $(date -u)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	for which in old new; do
		obj=$old extra=()
		if [ "$which" = new ]; then
			obj=$new
			read -r -a extra <<<"$NEW_ARGS"
		fi
		"$bin" --obj "$obj" --empty "$empty" --floor "$floor" --corpus "$corpus" \
			--what dataplane --runs "$RUNS" --repeat "$REPEAT" "${extra[@]}" |
			awk -v w="$which" -v r="$r" '
				# The first table is method A (hdrstrip / floor in
				# column 6), the second method B (established /
				# floor in column 7: fresh bytes, tracked flow).
				/^(xdp|tc) +(typical|nointernal|4k) / {
					k = ++seen[$1 $2]
					if (k > 2)
						next
					v = k == 1 ? $6 : $7
					q = k == 1 ? $2 : $2 "-B"
					sub(/x$/, "", v); print w, r, $1, q, $5, v
				}' >>"$out"
	done
done

printf '%-4s %-13s %-34s %-34s %s\n' hook request "old hdrstrip/floor (rounds)" \
	"new hdrstrip/floor (rounds)" "median new/old"
for hook in xdp tc; do
	for req in typical nointernal 4k typical-B nointernal-B 4k-B; do
		awk -v h="$hook" -v q="$req" '
			function median(a, n,   i, j, t) {
				for (i = 1; i <= n; i++)
					for (j = i + 1; j <= n; j++)
						if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			}
			$3 == h && $4 == q { v[$1, $2] = $6; n = $2 > n ? $2 : n }
			END {
				for (r = 1; r <= n; r++) {
					o = o sprintf("%.2f ", v["old", r])
					w = w sprintf("%.2f ", v["new", r])
					d[r] = v["new", r] / v["old", r]
				}
				m = median(d, n)
				printf "%-4s %-13s %-34s %-34s %.3f\n", h, q, o, w, m
				printf "bench: ab_%s_%s_new_over_old %.3f ratio\n", h, q, m >>B
			}' B="$out.bench" "$out"
	done
done
cat "$out.bench"
rm -f "$out.bench"
