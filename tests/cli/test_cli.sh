#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# 'hdrstrip compile' and 'hdrstrip check' as a user sees them: exit codes
# (0 ok, 1 failure, 2 usage or bad input) and the exact lines on stdout and
# stderr. Every case runs even when one fails; the exit status is 1 if any
# failed.
#
#   HDRSTRIP=build/hdrstrip CORPUS=../shared/corpus tests/cli/test_cli.sh
#
# $CC (default cc) builds a probe that prints the trie block's size and
# header fields from include/hdrstrip/trie.h, so the '-o' check follows the
# layout rather than a copy of it; another prints the name tables of
# include/hdrstrip/, which the bash completion and the man page's COUNTERS
# section (and the README's Counters tables) must follow.
set -euo pipefail

: "${HDRSTRIP:?set HDRSTRIP to the hdrstrip binary}"
: "${CORPUS:?set CORPUS to the corpus directory}"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

INTERNAL=$CORPUS/internal-headers.txt
BENCH=$CORPUS/bench-headers-118.txt
failures=0
cases=0
name=

# ---- helpers ----

fail() {
	echo "FAIL: $name: $*" >&2
	failures=$((failures + 1))
}

# t NAME: start a case.
t() {
	name=$1
	cases=$((cases + 1))
}

# run WANT_STATUS CMD...: run CMD, keep its stdout and stderr in $TMP.
run() {
	local want=$1 rc=0
	shift
	"$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	if [[ $rc != "$want" ]]; then
		fail "exit status $rc, expected $want (command: $*)"
		sed 's/^/  stderr: /' "$TMP/err" | head -5 >&2
	fi
}

# same WHICH EXPECTED: stdout or stderr is exactly EXPECTED (lines).
same() {
	local file=$TMP/$1
	if ! diff -u <(printf '%s\n' "$2") "$file" >"$TMP/diff"; then
		fail "$1 differs (expected vs actual):"
		sed 's/^/  /' "$TMP/diff" >&2
	fi
}

empty() {
	if [[ -s $TMP/$1 ]]; then
		fail "$1 should be empty, has: $(head -c 300 "$TMP/$1")"
	fi
}

# first_line WHICH EXPECTED
first_line() {
	local got
	got=$(head -n 1 "$TMP/$1")
	if [[ $got != "$2" ]]; then
		fail "first line of $1 is '$got', expected '$2'"
	fi
}

# matches WHICH ERE: the whole of stdout or stderr is one line matching ERE.
matches() {
	local lines
	lines=$(wc -l <"$TMP/$1")
	if [[ $lines != 1 ]] || ! grep -Eq -- "$2" "$TMP/$1"; then
		fail "$1 is not one line matching /$2/: $(head -c 300 "$TMP/$1")"
	fi
}

has_line() {
	if ! grep -Fxq -- "$2" "$TMP/$1"; then
		fail "$1 has no line '$2'"
	fi
}

# list FILE LINES...: write a header list.
list() {
	local f=$TMP/$1
	shift
	printf '%s\n' "$@" >"$f"
}

# Id of NAME in a corpus list: its position among the list's names.
id_of() {
	awk -v want="$2" '/^[ \t]*(#|$)/ { next } { n++ } $1 == want { print n; exit }' "$1"
}

# ---- the binary and its commands ----

t "hdrstrip --help"
run 0 "$HDRSTRIP" --help
first_line out "Usage: hdrstrip [OPTIONS] COMMAND [ARGS]"
has_line out "  compile    validate a header list and build its trie"
has_line out "  check      look header names up in a header list"
has_line out "Exit status: 0 success, 1 failure, 2 bad usage or bad input."
empty err

t "hdrstrip -h and hdrstrip help"
run 0 "$HDRSTRIP" -h
first_line out "Usage: hdrstrip [OPTIONS] COMMAND [ARGS]"
run 0 "$HDRSTRIP" help
first_line out "Usage: hdrstrip [OPTIONS] COMMAND [ARGS]"

t "hdrstrip without a command"
run 2 "$HDRSTRIP"
empty out
first_line err "Usage: hdrstrip [OPTIONS] COMMAND [ARGS]"

t "unknown command"
run 2 "$HDRSTRIP" frobnicate
empty out
same err "hdrstrip: unknown command 'frobnicate' (see 'hdrstrip --help')"

t "unknown global option"
run 2 "$HDRSTRIP" --bogus compile
empty out
same err "hdrstrip: unknown option '--bogus' (see 'hdrstrip --help')"

t "--help: every option of a command's synopsis has a line of its own"
for cmd in $("$HDRSTRIP" --help | sed -n 's/^  \([a-z]\+\) .*/\1/p'); do
	"$HDRSTRIP" "$cmd" --help >"$TMP/help" 2>&1
	syn=$(sed -n '/^Usage:/,/^$/p' "$TMP/help" | grep -o -- '--[a-z][a-z-]*' | sort -u) || true
	desc=$(grep -oE -- '^  (-[a-zA-Z], )?--[a-z][a-z-]*' "$TMP/help" | grep -o -- '--.*' |
		sort -u) || true
	missing=$(comm -23 <(echo "$syn") <(echo "$desc") | tr '\n' ' ')
	[[ -z ${missing// /} ]] || fail "$cmd --help describes none of: $missing"
done

t "hdrstrip -V: the version, the libraries, what the kernel has (as bpftool -V)"
run 0 "$HDRSTRIP" -V
first_line out "hdrstrip $(sed -n 's/^VERSION := //p' "$ROOT/Makefile")"
empty err
# The libraries as their own tools tell them.
libbpf=$(pkg-config --modversion libbpf 2>/dev/null | cut -d. -f1,2) || true
libxdp=$(pkg-config --modversion libxdp 2>/dev/null) || true
[[ -z $libbpf || -z $libxdp ]] || has_line out "using libbpf v$libbpf, libxdp v$libxdp"
kline=$(grep "^kernel $(uname -r): " "$TMP/out") || fail "no line 'kernel $(uname -r): ...'"
want_btf=no
[[ -e /sys/kernel/btf/vmlinux ]] && want_btf=yes
[[ $kline == *" btf $want_btf,"* ]] || fail "btf: '$kline', /sys/kernel/btf/vmlinux says $want_btf"
# The conntrack kfuncs, by bpftool's reading of the kernel's BTF.
if [[ $want_btf == yes ]] && command -v bpftool >/dev/null; then
	bpftool btf dump file /sys/kernel/btf/vmlinux >"$TMP/vmlinux.btf" 2>/dev/null || true
	for k in bpf_xdp_ct_lookup bpf_skb_ct_lookup; do
		want=no
		grep -q "FUNC '$k'" "$TMP/vmlinux.btf" && want=yes
		[[ $kline == *" $k $want,"* ]] || fail "$k: '$kline', bpftool says $want"
	done
fi
if [[ $(id -u) == 0 ]]; then
	# This kernel runs hdrstrip (its tests do): every probe says yes.
	for k in bpf_loop xdp tc sk_msg; do
		[[ $kline =~ " $k yes"(,|$) ]] || fail "$k is not found on a kernel that runs hdrstrip: '$kline'"
	done
	has_line out "$(grep '^xdp modes: skb on every interface; native on ' "$TMP/out")"
	run 0 "$HDRSTRIP" -j -V
	"${PYTHON:-python3}" -c 'import json, sys
v = json.load(open(sys.argv[1]))
assert v["version"] and v["libbpf"] and v["kernel"], v
assert set(v["features"]) == {"btf", "bpf_loop", "bpf_xdp_ct_lookup", "bpf_skb_ct_lookup",
                              "xdp", "tc", "sk_msg"}, v
assert v["xdp_modes"]["skb"] is True and isinstance(v["xdp_modes"]["native"], list), v' \
		"$TMP/out" || fail "-j -V: not the JSON expected: $(cat "$TMP/out")"
	# A veth's driver runs XDP natively: the namespace's interfaces are asked.
	ns=hs-cli-$$
	if ip netns add "$ns" 2>/dev/null; then
		ip -n "$ns" link add hs-va type veth peer name hs-vb
		run 0 "$HDRSTRIP" -n "$ns" -V
		grep -Eq '^xdp modes: .*native on (hs-va hs-vb|hs-vb hs-va)$' "$TMP/out" ||
			fail "-n $ns -V: $(grep '^xdp modes' "$TMP/out")"
		ip netns del "$ns"
	fi
	cp "$HDRSTRIP" "$TMP/hdrstrip-v"
	chmod 755 "$TMP" "$TMP/hdrstrip-v"
	run 0 setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/hdrstrip-v" -V
	[[ $(grep '^kernel ' "$TMP/out") == *" bpf_loop unknown,"* ]] ||
		fail "a user's -V claims what it cannot probe: $(grep '^kernel ' "$TMP/out")"
fi

# ---- -j and -p: the JSON of status and stats; refused by the others ----

t "hdrstrip --help names -j and -p"
run 0 "$HDRSTRIP" --help
has_line out "  -j, --json         JSON output, as the command's --json, of the commands that"
has_line out "                     print JSON: status, stats, events and flows (the others refuse it)"
has_line out "  -p, --pretty       JSON output, indented: 2 spaces, one key per line (implies -j)"

t "-j and -p: a command that prints no JSON refuses them, before anything is done"
for cmd in attach update detach compile check; do
	for opt in -j --json -p --pretty -jp -vj; do
		run 2 "$HDRSTRIP" "$opt" "$cmd" hs-nodev0 --headers "$INTERNAL"
		empty out
		same err "hdrstrip: $opt: $cmd prints no JSON (status, stats, events and flows do; see 'hdrstrip --help')"
	done
done

t "-j and -p go before the command; a flag cluster of another letter is unknown"
run 2 "$HDRSTRIP" -jx status
empty out
same err "hdrstrip: unknown option '-jx' (see 'hdrstrip --help')"

t "-p: a command's --help is text, and passes unchanged"
for cmd in status stats; do
	"$HDRSTRIP" "$cmd" --help >"$TMP/help" 2>&1
	run 0 "$HDRSTRIP" -p "$cmd" --help
	same out "$(cat "$TMP/help")"
	empty err
done

t "-j stats --prometheus: as stats --json --prometheus, bad usage"
run 2 "$HDRSTRIP" -j stats --prometheus
empty out
first_line err "hdrstrip: stats: --prometheus prints every counter and per-header hit; it goes with no --json, --per-header or --watch"

for cmd in compile check; do
	for h in --help -h; do
		t "$cmd $h"
		run 0 "$HDRSTRIP" "$cmd" "$h"
		first_line out "Usage: hdrstrip $cmd --headers FILE $([[ $cmd == compile ]] &&
			echo '[-o OUT] [--dump] [--no-fold-underscore]' ||
			echo '[--no-fold-underscore] NAME...')"
		empty err
	done

	t "$cmd with an unknown option"
	run 2 "$HDRSTRIP" "$cmd" --headers "$INTERNAL" --bogus x
	empty out
	has_line err "$(head -n 1 <("$HDRSTRIP" "$cmd" --help))"

	t "$cmd without --headers"
	run 2 "$HDRSTRIP" "$cmd" x-a
	empty out
	first_line err "hdrstrip: $cmd: --headers FILE is required"
done

t "compile with an extra argument"
run 2 "$HDRSTRIP" compile --headers "$INTERNAL" extra
empty out
first_line err "hdrstrip: compile: unexpected argument"

t "check without a NAME"
run 2 "$HDRSTRIP" check --headers "$INTERNAL"
empty out
first_line err "hdrstrip: check: give at least one NAME"

# ---- compile ----

# Node and byte counts belong to the compiler; names, distinct bytes and
# depth to the list.
t "compile internal-headers.txt"
run 0 "$HDRSTRIP" compile --headers "$INTERNAL"
matches out "^$INTERNAL: 100 names \+ built-in http2-settings, [0-9]+ nodes, [0-9]+ label bytes, 28 distinct bytes, max depth 24, [0-9]+ bytes \('_' matches '-'\)\$"
empty err

t "compile bench-headers-118.txt: one warning"
run 0 "$HDRSTRIP" compile --headers "$BENCH"
matches out "^$BENCH: 118 names \+ built-in http2-settings, [0-9]+ nodes, [0-9]+ label bytes, [0-9]+ distinct bytes, max depth 40, [0-9]+ bytes \('_' matches '-'\)\$"
same err "hdrstrip: warning: $BENCH:78: header name \"referer[sic]\" is not an RFC 9110 token ('[' is not a token character): strict servers reject such a header, lenient ones accept it; it is matched as written"

t "compile --no-fold-underscore"
run 0 "$HDRSTRIP" compile --headers "$INTERNAL" --no-fold-underscore
matches out " \('_' does not match '-'\)\$"

t "compile: @fold-underscore off in the list"
list fold-off.txt "@fold-underscore off" "x_a"
run 0 "$HDRSTRIP" compile --headers "$TMP/fold-off.txt"
matches out "^$TMP/fold-off.txt: 1 names \+ built-in http2-settings, .* \('_' does not match '-'\)\$"

t "compile --dump"
list two.txt "x-a" "x-ab" "@h2c-upgrade allow"
run 0 "$HDRSTRIP" compile --headers "$TMP/two.txt" --dump
# Two names, one the other's prefix: the compressed trie has one shape.
same out "$(head -n 1 "$TMP/out")
node 0: label \"x-a\" children \"b\" from node 1 ends x-a (request)
node 1: label \"\" ends x-ab (request)"
empty err

t "compile from standard input"
run 0 "$HDRSTRIP" compile --headers - <"$TMP/two.txt"
matches out "^-: 2 names, "
list two-h2c.txt "x-a" "x-ab"
run 0 "$HDRSTRIP" compile --headers - <"$TMP/two-h2c.txt"
matches out "^-: 2 names \+ built-in http2-settings, "
list bad-space.txt "x-ok" "x bad"
run 2 "$HDRSTRIP" compile --headers - <"$TMP/bad-space.txt"
same err "hdrstrip: <stdin>:2: invalid character ' ' in header name \"x...\" (after the name may come an action, 'mask', 'drop', 'observe' or 'reject', and a direction, 'request', 'response' or 'both')"

# The block written by -o is the BPF map value: sizeof(struct hs_trie)
# bytes, starting with the magic and version.
cat >"$TMP/probe.c" <<'EOF'
#include <stdio.h>
#include <hdrstrip/trie.h>

int main(void)
{
	printf("%zu %u %u %zu\n", sizeof(struct hs_trie), HS_TRIE_MAGIC, HS_TRIE_VERSION,
	       __builtin_offsetof(struct hs_trie, n_rules));
	return 0;
}
EOF
"${CC:-cc}" -I"$ROOT/include" -o "$TMP/probe" "$TMP/probe.c"
read -r trie_size trie_magic trie_version off_rules < <("$TMP/probe")

t "compile -o writes the trie block"
run 0 "$HDRSTRIP" compile --headers "$INTERNAL" -o "$TMP/trie.bin"
if [[ ! -f $TMP/trie.bin ]]; then
	fail "no file written"
else
	size=$(stat -c %s "$TMP/trie.bin")
	[[ $size == "$trie_size" ]] || fail "file has $size bytes, sizeof(struct hs_trie) is $trie_size"
	magic=$(od -An -tu4 -N4 --endian=little "$TMP/trie.bin" | tr -d ' ')
	[[ $magic == "$trie_magic" ]] || fail "magic $magic, expected $trie_magic"
	[[ $(head -c 4 "$TMP/trie.bin") == HSTR ]] || fail "the block does not start with \"HSTR\""
	version=$(od -An -tu2 -j4 -N2 --endian=little "$TMP/trie.bin" | tr -d ' ')
	[[ $version == "$trie_version" ]] || fail "version $version, expected $trie_version"
	rules=$(od -An -tu4 -j"$off_rules" -N4 --endian=little "$TMP/trie.bin" | tr -d ' ')
	# The list's 100 and the built-in rule.
	[[ $rules == 101 ]] || fail "n_rules $rules, expected 101"
fi
empty err

t "compile --output (long form)"
run 0 "$HDRSTRIP" compile --headers "$TMP/two.txt" --output "$TMP/two.bin"
[[ $(stat -c %s "$TMP/two.bin" 2>/dev/null) == "$trie_size" ]] || fail "--output did not write the block"

t "compile -o into a missing directory"
run 1 "$HDRSTRIP" compile --headers "$INTERNAL" -o "$TMP/no/such/dir/trie.bin"
same err "hdrstrip: cannot write trie to '$TMP/no/such/dir/trie.bin': No such file or directory"

t "compile -o onto a full device"
if [[ -w /dev/full ]]; then
	run 1 "$HDRSTRIP" compile --headers "$INTERNAL" -o /dev/full
	same err "hdrstrip: cannot write trie to '/dev/full': No space left on device"
fi

# ---- check ----

t "check internal-headers.txt"
auth=$(id_of "$INTERNAL" x-internal-auth)
secret=$(id_of "$INTERNAL" x-proxy-secret)
purge=$(id_of "$INTERNAL" x-purge-token)
[[ $auth == 3 ]] || fail "x-internal-auth is name $auth of the corpus, not 3"
run 0 "$HDRSTRIP" check --headers "$INTERNAL" X-Internal-Auth accept x_internal_auth \
	x-proxy-secret X-PURGE-TOKEN x-internal x-internal-auth-x
same out "X-Internal-Auth: match (id $auth, mask, request)
accept: no match
x_internal_auth: match (id $auth, mask, request, rule \"x-internal-auth\")
x-proxy-secret: match (id $secret, drop, request)
X-PURGE-TOKEN: match (id $purge, drop, request)
x-internal: no match
x-internal-auth-x: no match"
empty err

t "check: every corpus name, upper case"
mapfile -t names < <(awk '/^[ \t]*(#|$)/ { next } { print toupper($1) }' "$INTERNAL")
run 0 "$HDRSTRIP" check --headers "$INTERNAL" "${names[@]}"
[[ $(grep -c ': match (id ' "$TMP/out") == 100 ]] || fail "not every name matched: $(grep -v ': match' "$TMP/out" | head -3)"

t "check: miss-pool.txt misses"
mapfile -t names < <(grep -v '^$' "$CORPUS/miss-pool.txt")
run 1 "$HDRSTRIP" check --headers "$INTERNAL" "${names[@]}"
[[ $(grep -c ': no match$' "$TMP/out") == "${#names[@]}" ]] || fail "some miss-pool names match: $(grep -v ': no match$' "$TMP/out" | head -3)"

t "check: exit status as grep's: 0 a NAME matched, 1 none did, 2 bad input"
run 0 "$HDRSTRIP" check --headers "$INTERNAL" X-Internal-Auth
same out "X-Internal-Auth: match (id $auth, mask, request)"
empty err
run 1 "$HDRSTRIP" check --headers "$INTERNAL" accept
same out "accept: no match"
empty err
run 1 "$HDRSTRIP" check --headers "$INTERNAL" accept x-internal
same out "accept: no match
x-internal: no match"
run 0 "$HDRSTRIP" check --headers "$INTERNAL" accept X-Internal-Auth
list bad-for-check.txt "x-a maks"
run 2 "$HDRSTRIP" check --headers "$TMP/bad-for-check.txt" x-a
empty out
if "$HDRSTRIP" check --headers "$INTERNAL" accept >/dev/null; then
	fail "'if hdrstrip check ... accept' took a name that matches nothing for a match"
fi

t "check: prefix rule and exact name"
list prefix.txt "x-internal-* mask" "x-internal-auth drop"
run 0 "$HDRSTRIP" check --headers "$TMP/prefix.txt" X-INTERNAL-foo x-internal- x-internal \
	x-internal-auth X-Internal-Auth x-internal-auth2
same out "X-INTERNAL-foo: match (id 1, mask, request, rule \"x-internal-*\")
x-internal-: match (id 1, mask, request, rule \"x-internal-*\")
x-internal: no match
x-internal-auth: match (id 2, drop, request)
X-Internal-Auth: match (id 2, drop, request)
x-internal-auth2: match (id 1, mask, request, rule \"x-internal-*\")"

t "check: directions"
list dirs.txt "x-internal-*" "x-internal-id response" "x-debug mask request" \
	"X_Debug DROP Response" "x-both-* observe both"
run 0 "$HDRSTRIP" check --headers "$TMP/dirs.txt" x-internal-id x-internal-foo x-debug \
	x-both-a X-INTERNAL-ID accept
same out "x-internal-id: match (id 1, mask, request, rule \"x-internal-*\"), match (id 2, mask, response)
x-internal-foo: match (id 1, mask, request, rule \"x-internal-*\")
x-debug: match (id 3, mask, request), match (id 4, drop, response, rule \"X_Debug\")
x-both-a: match (id 5, observe, both, rule \"x-both-*\")
X-INTERNAL-ID: match (id 1, mask, request, rule \"x-internal-*\"), match (id 2, mask, response)
accept: no match"
empty err

t "compile --dump: directions"
list dirs2.txt "x-a* response" "x-abc request" "x-abc drop response" "@h2c-upgrade allow"
run 0 "$HDRSTRIP" compile --headers "$TMP/dirs2.txt" --dump
same out "$(head -n 1 "$TMP/out")
node 0: label \"x-a\" children \"b\" from node 1 ends x-a* (response)
node 1: label \"c\" ends x-abc (request), x-abc (response) under x-a* (response)"
empty err

t "the built-in rule: HTTP2-Settings masked in requests unless the list decides"
list h2c.txt "x-a"
run 0 "$HDRSTRIP" compile --headers "$TMP/h2c.txt" --dump
same out "$(head -n 1 "$TMP/out")
node 0: label \"\" children \"hx\" from node 1
node 1: label \"ttp2-settings\" ends http2-settings (request, built-in)
node 2: label \"-a\" ends x-a (request)"
empty err
run 0 "$HDRSTRIP" check --headers "$TMP/h2c.txt" HTTP2-Settings http2_settings
same out "HTTP2-Settings: match (id 2, mask, request, built-in: keeps h2c upgrades out)
http2_settings: match (id 2, mask, request, built-in: keeps h2c upgrades out)"
list h2c-own.txt "x-a" "Http2-Settings observe" "http2-settings drop response"
run 0 "$HDRSTRIP" check --headers "$TMP/h2c-own.txt" http2-settings
same out "http2-settings: match (id 2, observe, request), match (id 3, drop, response)"
list h2c-pfx.txt "x-a" "http2-* drop"
run 0 "$HDRSTRIP" check --headers "$TMP/h2c-pfx.txt" http2-settings
same out "http2-settings: match (id 2, drop, request, rule \"http2-*\")"
list h2c-allow.txt "@h2c-upgrade allow" "x-a"
run 1 "$HDRSTRIP" check --headers "$TMP/h2c-allow.txt" http2-settings
same out "http2-settings: no match"
list h2c-bad.txt "x-a" "@h2c-upgrade yes"
run 2 "$HDRSTRIP" compile --headers "$TMP/h2c-bad.txt"
empty out
same err "hdrstrip: $TMP/h2c-bad.txt:2: @h2c-upgrade takes 'block' or 'allow', not \"yes\""

t "check --no-fold-underscore"
list underscore.txt "x_a" "x-b"
run 0 "$HDRSTRIP" check --headers "$TMP/underscore.txt" x-a x_a X_B
same out "x-a: match (id 1, mask, request, rule \"x_a\")
x_a: match (id 1, mask, request)
X_B: match (id 2, mask, request, rule \"x-b\")"
run 0 "$HDRSTRIP" check --headers "$TMP/underscore.txt" --no-fold-underscore x-a x_a X_A X_B
same out "x-a: no match
x_a: match (id 1, mask, request)
X_A: match (id 1, mask, request)
X_B: no match"

t "check: a name that is not a token warns"
list odd.txt "x-a" "x[b]"
run 0 "$HDRSTRIP" check --headers "$TMP/odd.txt" 'X[B]'
same out "X[B]: match (id 2, mask, request)"
same err "hdrstrip: warning: $TMP/odd.txt:2: header name \"x[b]\" is not an RFC 9110 token ('[' is not a token character): strict servers reject such a header, lenient ones accept it; it is matched as written"

# ---- bad input: exit 2, one exact line on stderr, nothing on stdout ----

# bad FILE EXPECTED_STDERR: both commands refuse the list the same way.
bad() {
	local f=$1 msg=$2
	run 2 "$HDRSTRIP" compile --headers "$f"
	empty out
	same err "$msg"
	run 2 "$HDRSTRIP" check --headers "$f" x-a
	empty out
	same err "$msg"
}

t "bad: invalid character"
list b1.txt "# list" "x bad"
bad "$TMP/b1.txt" "hdrstrip: $TMP/b1.txt:2: invalid character ' ' in header name \"x...\" (after the name may come an action, 'mask', 'drop', 'observe' or 'reject', and a direction, 'request', 'response' or 'both')"
list b1b.txt "x:a"
bad "$TMP/b1b.txt" "hdrstrip: $TMP/b1b.txt:1: invalid character ':' in header name \"x...\""

t "bad: unknown action"
list b2.txt "x-foo maks"
bad "$TMP/b2.txt" "hdrstrip: $TMP/b2.txt:1: unknown action \"maks\" for header name \"x-foo\" (expected 'mask', 'drop', 'observe' or 'reject')"

t "bad: direction"
list b2b.txt "x-foo mask respones"
bad "$TMP/b2b.txt" "hdrstrip: $TMP/b2b.txt:1: unknown direction \"respones\" for header name \"x-foo\" (expected 'request', 'response' or 'both')"
list b2c.txt "x-foo drop response extra"
bad "$TMP/b2c.txt" "hdrstrip: $TMP/b2c.txt:1: unexpected word after the direction of header name \"x-foo\" (a line is NAME [ACTION] [DIRECTION])"
list b2d.txt "x-foo both" "x-foo response"
bad "$TMP/b2d.txt" "hdrstrip: $TMP/b2d.txt:2: duplicate header name \"x-foo\" for responses (first on line 1)"

t "bad: duplicate"
list b3.txt "x-foo" "x-bar" "x-foo drop"
bad "$TMP/b3.txt" "hdrstrip: $TMP/b3.txt:3: duplicate header name \"x-foo\" (first on line 1)"

t "bad: duplicate after folding"
list b4.txt "X-Foo" "x_foo"
bad "$TMP/b4.txt" "hdrstrip: $TMP/b4.txt:2: duplicate header name \"x_foo\": same as \"X-Foo\" on line 1 (names are case-insensitive and '_' matches '-')"
run 0 "$HDRSTRIP" compile --headers "$TMP/b4.txt" --no-fold-underscore
empty err

t "bad: name longer than 128 bytes"
long=x-$(printf 'a%.0s' {1..127})
list b5.txt "$long"
bad "$TMP/b5.txt" "hdrstrip: $TMP/b5.txt:1: header name is 129 bytes long; the limit is 128"
list ok5.txt "${long:0:128}"
run 0 "$HDRSTRIP" check --headers "$TMP/ok5.txt" "${long:0:128}" "$long"
same out "${long:0:128}: match (id 1, mask, request)
$long: no match"

t "bad: names of 65,536 + k bytes (a length narrowed to 16 bits once passed as k)"
for n in 65537 65664 70000; do
	head -c "$n" /dev/zero | tr '\0' 'a' | { printf 'x-ok\n'; cat; echo; } >"$TMP/b5-$n.txt"
	bad "$TMP/b5-$n.txt" "hdrstrip: $TMP/b5-$n.txt:2: header name is $n bytes long; the limit is 128"
done

t "bad: 1025 names"
seq -f 'x-%g' 1 1025 >"$TMP/b6.txt"
bad "$TMP/b6.txt" "hdrstrip: $TMP/b6.txt:1025: more than 1024 header names (the limit)"
seq -f 'x-%g' 1 1023 >"$TMP/ok6.txt"
run 0 "$HDRSTRIP" compile --headers "$TMP/ok6.txt"
matches out "^$TMP/ok6.txt: 1023 names \+ built-in http2-settings, "
# 1024 of the list's own leave the built-in rule no room: an error that
# says what to do, not a list without it.
seq -f 'x-%g' 1 1024 >"$TMP/b6b.txt"
bad "$TMP/b6b.txt" "hdrstrip: $TMP/b6b.txt: 1024 header names leave no room for the built-in rule \"http2-settings\" (it keeps h2c upgrades out; the limit is 1024 in all): list one name fewer, or list \"http2-settings\" in place of another name, or say \"@h2c-upgrade allow\""
{ echo "@h2c-upgrade allow"; seq -f 'x-%g' 1 1024; } >"$TMP/ok6b.txt"
run 0 "$HDRSTRIP" compile --headers "$TMP/ok6b.txt"
matches out "^$TMP/ok6b.txt: 1024 names, "

t "bad: empty list"
list b7.txt "# only" "   # comments" ""
bad "$TMP/b7.txt" "hdrstrip: $TMP/b7.txt: no header names (the list is empty)"

t "bad: missing file"
bad "$TMP/missing.txt" "hdrstrip: cannot open header list '$TMP/missing.txt': No such file or directory"

t "bad: a directory"
bad "$TMP" "hdrstrip: cannot read header list '$TMP': Is a directory"

t "bad: a file that is no list: the line number and what is wrong, not the line"
printf 'root:$y$j9T$N0tAs4lt$5ecretHashHash:19000:0:99999:7:::\ndaemon:*:19000\n' >"$TMP/shadow"
bad "$TMP/shadow" "hdrstrip: $TMP/shadow:1: invalid character ':' in header name \"root...\""
if grep -q 5ecret "$TMP/err"; then fail "the secret is in the message"; fi

t "bad: a symlink loop, an unreadable file: exit 2"
ln -s "$TMP/loop" "$TMP/loop"
bad "$TMP/loop" "hdrstrip: cannot open header list '$TMP/loop': Too many levels of symbolic links"
printf 'x-a\n' >"$TMP/noperm.txt"
chmod 000 "$TMP/noperm.txt"
# root reads anything: ask as nobody, with a copy nobody may run.
chmod 755 "$TMP"
cp "$HDRSTRIP" "$TMP/hdrstrip-copy"
chmod 755 "$TMP/hdrstrip-copy"
if [[ $(id -u) == 0 ]]; then
	as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
else
	as_user() { "$@"; }
fi
run 2 as_user "$TMP/hdrstrip-copy" compile --headers "$TMP/noperm.txt"
same err "hdrstrip: cannot open header list '$TMP/noperm.txt': Permission denied"

t "root without a capability is told which one, not to run as root"
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
	run 1 setpriv --bounding-set=-sys_admin "$HDRSTRIP" --netns-path /proc/self/ns/net status
	same err "hdrstrip: cannot enter network namespace '/proc/self/ns/net': Operation not permitted (it needs CAP_SYS_ADMIN: this process runs as root, but its capability bounding set leaves it out)"
	run 1 setpriv --bounding-set=-bpf,-sys_admin "$HDRSTRIP" status
	same err "hdrstrip: status needs CAP_BPF: this process runs as root, but its capability bounding set leaves it out (add it to the unit's CapabilityBoundingSet= or the container's capabilities)"
	run 1 setpriv --bounding-set=-bpf,-sys_admin,-net_admin "$HDRSTRIP" stats
	same err "hdrstrip: stats needs CAP_BPF and CAP_NET_ADMIN: this process runs as root, but its capability bounding set leaves them out (add them to the unit's CapabilityBoundingSet= or the container's capabilities)"
	run 1 as_user "$TMP/hdrstrip-copy" status
	same err "hdrstrip: status needs root: it is missing CAP_BPF and CAP_NET_ADMIN (run it as root, e.g. with sudo)"
	run 1 as_user "$TMP/hdrstrip-copy" --netns-path /proc/self/ns/net status
	same err "hdrstrip: cannot enter network namespace '/proc/self/ns/net': Operation not permitted (it needs CAP_SYS_ADMIN: run as root)"
fi

t "bad: '*' alone"
list b8.txt "x-a" "*"
bad "$TMP/b8.txt" "hdrstrip: $TMP/b8.txt:2: prefix rule \"*\" needs at least one byte before the '*' (it would match every header)"

t "bad: unknown directive"
list b9.txt "@fold-underscores off" "x-a"
bad "$TMP/b9.txt" "hdrstrip: $TMP/b9.txt:1: unknown directive \"@fold-underscores\" (known: @fold-underscore on|off, @h2c-upgrade block|allow)"

# (on a device that does not exist: should a regression get past the
# options, nothing of the machine's is touched)
# ---- attach, update, detach: usage errors found before any kernel access ----

t "update: --hook, --xdp-mode and --flows do not apply (once accepted and ignored)"
for opt in "--hook tc-egress" "--xdp-mode skb" "--flows 1000"; do
	# shellcheck disable=SC2086
	run 2 "$HDRSTRIP" update hs-nodev0 --headers "$INTERNAL" $opt
	first_line err "hdrstrip: update: ${opt%% *} does not apply (update changes the list and settings every hook of DEV shares; to change a hook itself, detach it and attach it again)"
done

t "detach: list and policy options do not apply"
for opt in "--ports 80" "--on-error pass" "--headers $INTERNAL" "--flows 100" "--no-fold-underscore"; do
	# shellcheck disable=SC2086
	run 2 "$HDRSTRIP" detach hs-nodev0 $opt
	first_line err "hdrstrip: detach: ${opt%% *} does not apply (detach takes DEV (and --hook), --cgroup PATH or --cgroup-id ID only)"
done

t "attach, update, detach: an unknown option, a value missing or given to a flag, named"
run 2 "$HDRSTRIP" attach hs-nodev0 --headers "$INTERNAL" --bogus=1
first_line err "hdrstrip: attach: unknown option '--bogus'"
run 2 "$HDRSTRIP" update hs-nodev0 --headers
first_line err "hdrstrip: update: --headers needs a value"
run 2 "$HDRSTRIP" attach hs-nodev0 --headers "$INTERNAL" --no-fold-underscore=1
first_line err "hdrstrip: attach: --no-fold-underscore takes no value"
run 2 "$HDRSTRIP" attach hs-nodev0 --headers "$INTERNAL" --cgroup-id 5
first_line err "hdrstrip: attach: --cgroup-id does not apply (see --help)"

t "--receive: origin mode is a cgroup's; update and detach do not take it"
run 2 "$HDRSTRIP" attach hs-nodev0 --headers "$INTERNAL" --receive
first_line err "hdrstrip: attach: --receive is origin mode, for the processes of a cgroup: give --cgroup PATH"
run 2 "$HDRSTRIP" update --cgroup /sys/fs/cgroup --headers "$INTERNAL" --receive
first_line err "hdrstrip: update: --receive does not apply (a cgroup keeps the mode it was attached in; to change it, detach and attach again)"
run 2 "$HDRSTRIP" detach --cgroup /sys/fs/cgroup --receive
first_line err "hdrstrip: detach: --receive does not apply (detach takes DEV (and --hook), --cgroup PATH or --cgroup-id ID only)"
run 0 "$HDRSTRIP" attach --help
grep -q -- '--receive' "$TMP/out" || fail "attach --help does not name --receive"

t "attach --receive by hand: a drop stalls its connection: one warning line, stdout as without it"
# Root, a cgroup of its own: nothing connects, nothing is dropped.
cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
cg=${cgroot:-/nonexistent}/hs-cli-$$
if [[ $(id -u) == 0 && -n $cgroot ]] && mkdir "$cg" 2>/dev/null; then
	warn="hdrstrip: warning: origin mode attached by hand cannot reset a connection a drop ends"
	fix="it stalls until a side gives up; run it from the agent instead ('hdrstrip run' with 'receive = yes', or hdrstrip-origin@SLICE.service)"
	list mask.txt "x-a" "x-b mask"
	run 0 "$HDRSTRIP" attach --cgroup "$cg" --receive --headers "$TMP/mask.txt" --on-error pass
	empty err
	sed 's/on-error pass;/on-error drop;/' "$TMP/out" >"$TMP/out.quiet"
	"$HDRSTRIP" detach --cgroup "$cg" >/dev/null || fail "detach --cgroup $cg"
	run 0 "$HDRSTRIP" attach --cgroup "$cg" --receive --headers "$TMP/mask.txt"
	same err "$warn (--on-error drop): $fix"
	diff -u "$TMP/out.quiet" "$TMP/out" >"$TMP/diff" ||
		fail "stdout differs from the attach without the warning: $(cat "$TMP/diff")"
	"$HDRSTRIP" detach --cgroup "$cg" >/dev/null || fail "detach --cgroup $cg"
	run 0 "$HDRSTRIP" attach --cgroup "$cg" --receive --headers "$INTERNAL" --on-error pass
	same err "$warn (a drop or reject rule): $fix"
	"$HDRSTRIP" detach --cgroup "$cg" >/dev/null || fail "detach --cgroup $cg"
	rmdir "$cg" || fail "cannot remove $cg"
fi

t "--ports: an empty item, a sign or a blank is a typo, not a list"
for p in "80," ",80" "80,,81" "+80" " 80" "80-" "-80" "0" "65536" "80-79" "8o" "080000"; do
	run 2 "$HDRSTRIP" attach hs-nodev0 --headers "$INTERNAL" --ports "$p"
	same err "hdrstrip: attach: bad port list '$p' (expected e.g. 80,8080,9000-9010; ports 1-65535)"
done

t "--flows: capped, with its cost per entry"
for n in 15 16777216 1048577 "1e6" "-5"; do
	run 2 "$HDRSTRIP" attach hs-nodev0 --headers "$INTERNAL" --flows "$n"
	same err "hdrstrip: attach: bad --flows '$n' (a count of connections, 16..1048576; each takes about 1084 bytes of kernel memory per hook)"
done

# ---- run --check-config: every error of a config at once, each at its own line ----

t "run --check-config: a good config"
list agent-list.txt "x-internal-*"
cat >"$TMP/good.conf" <<EOF
[attach hs-nodev0]
headers = $TMP/agent-list.txt
hooks = xdp, tc-egress
ports = 80, 8080
flows = 4096

[cgroup /sys/fs/cgroup/hs-none]
headers = $TMP/agent-list.txt
mode = observe
EOF
run 0 "$HDRSTRIP" run --config "$TMP/good.conf" --check-config
same out "$TMP/good.conf: 2 attachments, every list compiles, every setting is valid"
empty err

t "run --check-config: every error of the file, at its own line, in the config's words"
list agent-bad-list.txt "x-a" "x-b maks"
cat >"$TMP/bad.conf" <<EOF
[attach hs-nodev0]
headers = $TMP/agent-list.txt
ports = 80, bogus
flows = 5
on-error = maybe
[attach hs-nodev1]
headers = $TMP/agent-bad-list.txt
untracked = sometimes
event-rate = lots
bogus-key = 1
urgent = keep
xdp-mode = fast
hooks = xdp, tc-sideways
EOF
run 2 "$HDRSTRIP" run --config "$TMP/bad.conf" --check-config
empty out
same err "hdrstrip: $TMP/bad.conf:3: bad port list '80,bogus' (expected e.g. 80,8080,9000-9010; ports 1-65535)
hdrstrip: $TMP/bad.conf:4: bad flows '5' (a count of connections, 16..1048576; each takes about 1084 bytes of kernel memory per hook)
hdrstrip: $TMP/bad.conf:5: unknown policy 'maybe' for on-error (expected drop, reject or pass)
hdrstrip: $TMP/bad.conf:8: unknown policy 'sometimes' for untracked (expected scan, pass or drop)
hdrstrip: $TMP/bad.conf:9: bad event-rate 'lots' (match events a second, 0..1000000; 0 sends none)
hdrstrip: $TMP/bad.conf:10: unknown key 'bogus-key' (known: headers hooks netns mode fold-underscore ports on-error untracked urgent event-rate nat vxlan-ports geneve-ports udp-tunnel-ports receive flows xdp-mode)
hdrstrip: $TMP/bad.conf:11: unknown policy 'keep' for urgent (expected clear or drop)
hdrstrip: $TMP/bad.conf:12: unknown XDP mode 'fast' (expected native or skb)
hdrstrip: $TMP/bad.conf:13: unknown hook 'tc-sideways' (expected xdp, tc-ingress or tc-egress)
hdrstrip: $TMP/agent-bad-list.txt:2: unknown action \"maks\" for header name \"x-b\" (expected 'mask', 'drop', 'observe' or 'reject')
hdrstrip: $TMP/bad.conf:7: headers = $TMP/agent-bad-list.txt: the list does not load (above)"
if grep -q -- '--' "$TMP/err"; then fail "a message names a CLI option: $(grep -- '--' "$TMP/err")"; fi

t "run --check-config: a key given twice, a key of the wrong kind"
cat >"$TMP/twice.conf" <<EOF
[attach hs-nodev0]
headers = $TMP/agent-list.txt
ports = 80
mode = observe
ports = 8080
mode = enforce
[cgroup /sys/fs/cgroup/hs-none]
headers = $TMP/agent-list.txt
xdp-mode = skb
EOF
run 2 "$HDRSTRIP" run --config "$TMP/twice.conf" --check-config
empty out
same err "hdrstrip: $TMP/twice.conf:5: 'ports' again in [attach hs-nodev0] (first on line 3)
hdrstrip: $TMP/twice.conf:6: 'mode' again in [attach hs-nodev0] (first on line 4)
hdrstrip: $TMP/twice.conf:9: 'xdp-mode' is for interfaces, not a [cgroup] (proxy mode)"

t "run --check-config: two sections for one interface, or one cgroup, are refused"
cat >"$TMP/dup.conf" <<EOF
[attach hs-nodev0]
headers = $TMP/agent-list.txt
hooks = xdp

[attach hs-nodev0]
headers = $TMP/agent-list.txt
hooks = tc-egress

[attach hs-nodev0]
netns = /run/netns/hs-none-a
headers = $TMP/agent-list.txt

[attach hs-nodev0]
netns = hs-none-a
headers = $TMP/agent-list.txt

[cgroup /sys/fs/cgroup/hs-none]
headers = $TMP/agent-list.txt

[cgroup /sys/fs/cgroup/hs-none/]
headers = $TMP/agent-list.txt
EOF
run 2 "$HDRSTRIP" run --config "$TMP/dup.conf" --check-config
empty out
same err "hdrstrip: $TMP/dup.conf:5: [attach hs-nodev0] again (first on line 1, the same network namespace): one section names every hook of an interface (hooks = xdp, tc-egress)
hdrstrip: $TMP/dup.conf:13: [attach hs-nodev0] again (first on line 9, the same network namespace): one section names every hook of an interface (hooks = xdp, tc-egress)
hdrstrip: $TMP/dup.conf:20: [cgroup /sys/fs/cgroup/hs-none/] again (first on line 17): one section a cgroup"

t "run --check-config: one interface name in two namespaces is two attachments"
cat >"$TMP/two-ns.conf" <<EOF
[attach hs-nodev0]
headers = $TMP/agent-list.txt

[attach hs-nodev0]
netns = hs-none-b
headers = $TMP/agent-list.txt
EOF
run 0 "$HDRSTRIP" run --config "$TMP/two-ns.conf" --check-config
empty err

# ---- bash completion: each command's options are those it takes ----

# comp WORDS...: what the completion offers for the last word.
comp() {
	bash -c 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));
		_hdrstrip; printf "%s\n" "${COMPREPLY[@]}"' "$ROOT/completion/hdrstrip" "$@"
}
# The options a --help describes, a line each: "  -x, --long ..." or "  --long ...".
help_opts() {
	grep -oE -- '^  (-[a-zA-Z], )?--[a-z][a-z-]*' | sed 's/^ *//; s/, /\n/' | sort -u
}

t "completion: each command offers the options its --help describes, and each is taken"
for cmd in $("$HDRSTRIP" --help | sed -n 's/^  \([a-z]\+\) .*/\1/p'); do
	want=$({ "$HDRSTRIP" "$cmd" --help | help_opts; echo --help; } | grep -- '^--' | sort -u)
	got=$(comp hdrstrip "$cmd" -- | sort -u)
	[[ $got == "$want" ]] || fail "$cmd: completion offers '$(echo $got)', --help describes '$(echo $want)'"
	case $cmd in
	run) pre=(--config "$TMP/no-such.conf") ;;
	compile | check) pre=(--headers "$TMP/no-such.txt") ;;
	*) pre=(hs-nodev0) ;;
	esac
	for o in $got; do
		[[ $o == --help ]] && continue
		"$HDRSTRIP" "$cmd" "${pre[@]}" "$o" >/dev/null 2>"$TMP/err" </dev/null || true
		if grep -qE 'unknown option|unrecognized option|does not apply' "$TMP/err"; then
			fail "$cmd refuses $o, which the completion offers: $(head -1 "$TMP/err")"
		fi
	done
done

t "completion: the global options are those 'hdrstrip --help' describes"
want=$("$HDRSTRIP" --help | help_opts)
got=$(comp hdrstrip - | sort -u)
[[ $got == "$want" ]] || fail "completion offers '$(echo $got)', --help describes '$(echo $want)'"

t "completion: values: files after --headers, --config, -o and --netns-path; namespaces after -n"
mkdir -p "$TMP/comp"
touch "$TMP/comp/agent.conf" "$TMP/comp/list.txt"
for w in "compile --headers" "run --config" "compile -o"; do
	# shellcheck disable=SC2086
	got=$(comp hdrstrip $w "$TMP/comp/a")
	[[ $got == "$TMP/comp/agent.conf" ]] || fail "'$w' completes '$got', not the file"
done
got=$(comp hdrstrip --netns-path "$TMP/comp/l")
[[ $got == "$TMP/comp/list.txt" ]] || fail "--netns-path completes '$got', not the file"
# 'ip netns list', as ip prints it, from a stand-in on PATH.
mkdir -p "$TMP/bin"
printf '#!/bin/sh\n[ "$1 $2" = "netns list" ] && printf "blue (id: 0)\\nbluish\\ngreen\\n"\n' >"$TMP/bin/ip"
chmod +x "$TMP/bin/ip"
got=$(PATH=$TMP/bin:$PATH comp hdrstrip -n blu | tr '\n' ' ')
[[ $got == "blue bluish " ]] || fail "-n completes '$got'"
got=$(PATH=$TMP/bin:$PATH comp hdrstrip -v --netns g | tr '\n' ' ')
[[ $got == "green " ]] || fail "--netns completes '$got'"

t "completion and 'hdrstrip help CMD': a command's own help"
got=$(comp hdrstrip help st | tr '\n' ' ')
[[ $got == "status stats " ]] || fail "help completes '$got'"
for cmd in attach run check; do
	"$HDRSTRIP" "$cmd" --help >"$TMP/want-help"
	run 0 "$HDRSTRIP" help "$cmd"
	same out "$(cat "$TMP/want-help")"
	empty err
done
run 2 "$HDRSTRIP" help frobnicate
same err "hdrstrip: help: no such command (see 'hdrstrip --help')"

# ---- name sets: what the completion offers and the man page lists are include/hdrstrip/'s ----

cat >"$TMP/names.c" <<'EOF'
#include <stdio.h>
#include <hdrstrip/hooks.h>
#include <hdrstrip/maps.h>

int main(void)
{
	printf("--hook");
	for (int h = 0; h < HS_HOOK_CGROUP; h++) /* cgroup is --cgroup, not a --hook */
		printf(" %s", hs_hook_names[h]);
	printf("\n--on-error %s %s %s\n--untracked", hs_policy_names[HS_POLICY_DROP],
	       hs_policy_names[HS_POLICY_PASS], hs_policy_names[HS_POLICY_REJECT]);
	for (int p = 0; p < HS_POLICY_MAX; p++)
		if (p != HS_POLICY_REJECT) /* --on-error's only */
			printf(" %s", hs_policy_names[p]);
	printf("\n--urgent");
	for (int u = 0; u < HS_URGENT_MAX; u++)
		printf(" %s", hs_urgent_names[u]);
	printf("\ncounters");
	for (unsigned int k = 0; k < HS_N_COUNTERS; k++)
		printf(" %s", hs_counter_info[k].name);
	printf("\n");
	return 0;
}
EOF
"${CC:-cc}" -I"$ROOT/include" -o "$TMP/names" "$TMP/names.c"

t "completion: --hook, --on-error, --untracked and --urgent offer the values of the tables"
while read -r opt want; do
	[[ $opt == --* ]] || continue
	got=$(sed -n "/^[[:space:]]*$opt)/,/return/s/.*_hdrstrip_words \"\(.*\)\"/\1/p" \
		"$ROOT/completion/hdrstrip")
	[[ $(tr ' ' '\n' <<<"$got" | sort) == $(tr ' ' '\n' <<<"$want" | sort) ]] ||
		fail "$opt completes '$got', the table has '$want'"
done < <("$TMP/names")

t "man page: COUNTERS lists every counter, in the order stats prints them"
want=$("$TMP/names" | sed -n 's/^counters //p')
got=$(awk '/^\.SH/ { in_c = $2 == "COUNTERS" } in_c && tp && /^\.B / { printf "%s ", $2 }
	{ tp = /^\.TP/ }' "$ROOT/man/hdrstrip.8")
[[ "${got% }" == "$want" ]] || fail "hdrstrip.8 lists '${got% }', the table has '$want'"

t "README: the Counters tables list every counter, in the order stats prints them"
got=$(awk '/^## / { in_c = $0 == "## Counters" }
	in_c && /^\| `/ { split($0, c, "|"); n = split(c[2], w, "`"); for (i = 2; i <= n; i += 2) printf "%s ", w[i] }' \
	"$ROOT/README.md")
[[ "${got% }" == "$want" ]] || fail "README.md lists '${got% }', the table has '$want'"

t "README: each counter's row says what Prometheus' # HELP says (one text, from the table)"
cat >"$TMP/helps.c" <<'EOF'
#include <stdio.h>
#include <hdrstrip/counters.h>

int main(void)
{
	for (unsigned int k = 0; k < HS_N_COUNTERS; k++)
		printf("| `%s` | %s |\n", hs_counter_info[k].name, hs_counter_info[k].help);
	return 0;
}
EOF
"${CC:-cc}" -I"$ROOT/include" -o "$TMP/helps" "$TMP/helps.c"
awk '/^## / { in_c = $0 == "## Counters" } in_c && /^\| `/' "$ROOT/README.md" >"$TMP/readme-rows"
if ! diff -u "$TMP/readme-rows" <("$TMP/helps") >"$TMP/diff"; then
	fail "README.md's Counters rows are not the counters' help texts (- README, + include/hdrstrip/counters.h):"
	sed 's/^/  /' "$TMP/diff" >&2
fi

t "README: at most 1,000 lines (issue 36: the reference is the man page, the tests TESTING.md)"
readme_lines=$(wc -l <"$ROOT/README.md")
((readme_lines <= 1000)) || fail "README.md has $readme_lines lines, over 1,000: move reference to man/hdrstrip.8, test detail to TESTING.md"

echo "test_cli.sh: $cases cases, $failures failed checks"
[[ $failures == 0 ]]
