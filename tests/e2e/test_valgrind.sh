#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# e2e-run: cpu (memcheck: about half of two cores' time)
# The CLI under valgrind's memcheck: compile, check, attach (two hooks),
# status, stats (text, JSON with per-header counts, Prometheus), update,
# detach, and their error paths (a bad list, an unknown device, detaching
# twice), each with its usual exit status and no memcheck error and no
# definite leak (--error-exitcode, --errors-for-leak-kinds=definite).
# tests/e2e/valgrind.supp silences what valgrind cannot see the kernel do
# inside libbpf and libxdp (each entry says why); nothing of hdrstrip's own.
. "$(dirname "$0")/lib.sh"

e2e_init
require_tools valgrind
require_cli attach update detach status stats compile check
topo_setup
start_node

NS=$SNS DEV=$SDEV
note_attached "$NS" "$DEV"
LIST=$WORK/list
write_main_list "$LIST"
printf 'x-other\nx-internal-*\n' >"$WORK/list2"
printf 'x-good\nx-bad-action frobnicate\n' >"$WORK/bad.list"
VG=(valgrind -q --tool=memcheck --error-exitcode=99 --leak-check=full
	--errors-for-leak-kinds=definite --show-leak-kinds=definite --num-callers=40
	--suppressions="$E2E_DIR/valgrind.supp")

# vg CODE WHAT ARGS...: hdrstrip ARGS under memcheck exits with CODE (99 is
# memcheck's own) and memcheck reports nothing.
vg() {
	local want=$1 what=$2
	shift 2
	expect_exit "$want" "valgrind: $what" "${VG[@]}" "$HDRSTRIP" "$@"
	if grep -qE '^==[0-9]+==' <<<"$EXPECT_OUT"; then
		printf '%s\n' "$EXPECT_OUT" | grep -E '^==[0-9]+==' | head -40 | sed 's/^/    | /' >&2
		fail "valgrind: $what: memcheck reported errors"
	fi
}

vg 0 "compile" compile --headers "$LIST"
vg 0 "compile -o, --dump" compile --headers "$LIST" -o "$WORK/trie.bin" --dump
vg 2 "compile a bad list" compile --headers "$WORK/bad.list"
vg 0 "check" check --headers "$LIST" X-Internal-Auth x_edge_secret-1 accept

vg 2 "attach to an unknown device" -n "$NS" attach nosuchdev0 --headers "$LIST"
vg 0 "attach xdp" -n "$NS" attach "$DEV" --headers "$LIST"
vg 0 "attach tc-egress" -n "$NS" attach "$DEV" --hook tc-egress --headers "$LIST" \
	--on-error pass --untracked pass
step "a request through it is masked" client "$S4" "$PORT_NODE" -H "X-Internal-Auth: v" \
	-H "X-Keep: k" --check "$LIST"
vg 0 "status" -n "$NS" status "$DEV"
vg 0 "status --json" -n "$NS" status --json
vg 0 "stats" -n "$NS" stats "$DEV"
vg 0 "stats --json --per-header" -n "$NS" stats "$DEV" --json --per-header
vg 0 "stats --prometheus" -n "$NS" stats --prometheus
vg 2 "update with a bad list" -n "$NS" update "$DEV" --headers "$WORK/bad.list"
vg 0 "update" -n "$NS" update "$DEV" --headers "$WORK/list2" --ports 80,8080
vg 0 "detach one hook" -n "$NS" detach "$DEV" --hook xdp
vg 0 "detach" -n "$NS" detach "$DEV"
vg 1 "detach twice" -n "$NS" detach "$DEV"
assert_clean "$NS" "$DEV"
