#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# clang-tidy over FILE... for make lint, two at a time; prints the findings
# in hdrstrip's own files (not in generated skeletons under OUTPUT) and exits
# 1 when there are any.
# The BPF programs (bpf/*, *.bpf.c) parse for their own target, with the build's
# flags in BPF_FLAGS (lint.mk passes BPF_CFLAGS).
#   CLANG_TIDY=clang-tidy-14 OUTPUT=build BPF_FLAGS='-target bpf ...' scripts/lint/tidy.sh FILE...
set -uo pipefail
: "${CLANG_TIDY:=clang-tidy-14}" "${OUTPUT:=build}" "${BPF_FLAGS:=-target bpf -Iinclude}"
flags=(-std=gnu11 -Iinclude -Icore -Iuser -Ilib "-I$OUTPUT" -Itests/unit -Itests/pkt -Itests/fuzz
	'-DHDRSTRIP_VERSION="lint"' '-DHDRSTRIP_BPF_DIR="lint"' '-DHS_CORPUS_DIR="lint"'
	'-DHS_FUZZ_DIR="lint"')

if [ "${1:-}" = --one ]; then
	f=$2 extra=()
	case $f in
	bpf/* | *.bpf.c) read -ra flags <<<"$BPF_FLAGS" ;;
	# The tests see cmocka's _fail() as the noreturn function it is.
	tests/*) extra=(-include scripts/lint/cmocka-analyzer.h) ;;
	esac
	exec "$CLANG_TIDY" -quiet "$f" -- "${flags[@]}" "${extra[@]}" 2>/dev/null
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%s\n' "$@" | xargs -P2 -n1 "$0" --one >"$log"
# Findings, with their context, outside the generated files.
found=$(grep -vE "^(/[^:]*/)?$OUTPUT/" "$log" | grep -A3 -E 'warning:|error:')
if [ -n "$found" ]; then
	printf '%s\n' "$found" >&2
	echo "lint: clang-tidy findings (above)" >&2
	exit 1
fi
