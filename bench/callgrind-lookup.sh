#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Instructions per header-name lookup, counted by callgrind (noise-free):
#   callgrind-lookup.sh BENCH_LOOKUP CORPUS_DIR OUT_DIR
# bench_lookup --callgrind writes one dump per (method, lookup file), labelled
# "<metric> <lookups>"; each dump's total Ir divided by its lookups is one
# `bench: <metric> <value> instr` line. "loop" is the bare loop that every
# other figure includes.
set -eu

if [ $# -ne 3 ]; then
	echo "usage: $0 BENCH_LOOKUP CORPUS_DIR OUT_DIR" >&2
	exit 2
fi
bin=$1
corpus=$2
out=$3

mkdir -p "$out"
rm -f "$out"/callgrind.out*
valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out/callgrind.out" \
	"$bin" --callgrind --corpus "$corpus" 2>"$out/valgrind.log" || {
	echo "callgrind-lookup: valgrind failed; see $out/valgrind.log" >&2
	tail -5 "$out/valgrind.log" >&2
	exit 1
}
for f in "$out"/callgrind.out.*; do
	[ -e "$f" ] || continue
	awk '
	/^desc: Trigger: Client Request: / { metric = $5; lookups = $6 }
	/^(totals|summary): / { ir = $2 }
	END {
		if (metric != "" && lookups > 0)
			printf "bench: %s %.1f instr\n", metric, ir / lookups
	}' "$f"
done | awk '{ split($2, p, "_"); print p[4], substr(p[3], 5) + 0, p[1], $0 }' |
	sort -k1,1 -k2,2n -k3,3 | cut -d' ' -f4- >"$out/ir.txt"
if [ ! -s "$out/ir.txt" ]; then
	echo "callgrind-lookup: no client-request dumps in $out" >&2
	exit 1
fi
cat "$out/ir.txt"
