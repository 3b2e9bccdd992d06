#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Header lists of 10, 100 and 1,000 names for the list-size benchmarks:
#   gen-lists.sh INTERNAL_LIST OUT_DIR
# names-100.txt is the corpus's internal list as it is; names-10.txt its
# first 10 names; names-1000.txt its 100 names and 900 more of the same
# shape, "x-<service>-<attribute>" from two fixed word lists (30 x 30), so
# the trie grows the way a real list would: many names under a few prefixes.
# Every list holds x-internal-auth and x-internal-trace, the two internal
# names of the benchmark's typical request.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 INTERNAL_LIST OUT_DIR" >&2
	exit 2
fi
list=$1
out=$2
mkdir -p "$out"

# Name lines only: no comments, no blank lines, no directives.
names() { grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' -e '^[[:space:]]*@' "$list"; }

n=$(names | wc -l)
if [ "$n" -ne 100 ]; then
	echo "gen-lists: $list has $n names, expected 100" >&2
	exit 1
fi
names | head -n 10 >"$out/names-10.txt"
names >"$out/names-100.txt"
{
	names
	for svc in billing cart catalog checkout search media payments ledger fraud \
		inventory pricing promo shipping tax user session notify mailer export \
		report audit quota flags config deploy build registry metrics alert storage; do
		for attr in id key token version region zone tier owner team cost \
			trace span parent sampled priority deadline retry attempt shard \
			replica leader epoch nonce digest signature scope role tenant \
			locale debug; do
			echo "x-$svc-$attr"
		done
	done
} >"$out/names-1000.txt"
for f in names-10 names-100 names-1000; do
	for want in x-internal-auth x-internal-trace; do
		grep -qx "$want" "$out/$f.txt" || {
			echo "gen-lists: $f.txt lacks $want" >&2
			exit 1
		}
	done
done
dups=$(awk '{ print tolower($1) }' "$out/names-1000.txt" | sort | uniq -d)
if [ -n "$dups" ]; then
	echo "gen-lists: names-1000.txt has duplicates: $dups" >&2
	exit 1
fi
wc -l "$out"/names-*.txt | awk '$2 != "total" { printf "gen-lists: %s: %d names\n", $2, $1 }' >&2
