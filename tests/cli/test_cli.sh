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

t "hdrstrip -V"
run 0 "$HDRSTRIP" -V
matches out '^hdrstrip [0-9]+\.[0-9]+\.[0-9]+'

# ---- -j and -p: the JSON of status and stats; refused by the others ----

t "hdrstrip --help names -j and -p"
run 0 "$HDRSTRIP" --help
has_line out "  -j, --json         JSON output, as the command's --json (status and stats; the"
has_line out "  -p, --pretty       JSON output, indented: 2 spaces, one key per line (implies -j)"

t "-j and -p: a command that prints no JSON refuses them, before anything is done"
for cmd in attach update detach compile check; do
	for opt in -j --json -p --pretty -jp -vj; do
		run 2 "$HDRSTRIP" "$opt" "$cmd" hs-nodev0 --headers "$INTERNAL"
		empty out
		same err "hdrstrip: $opt: $cmd prints no JSON (status and stats do; see 'hdrstrip --help')"
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
matches out "^$INTERNAL: 100 names, [0-9]+ nodes, [0-9]+ label bytes, 28 distinct bytes, max depth 24, [0-9]+ bytes \('_' matches '-'\)\$"
empty err

t "compile bench-headers-118.txt: one warning"
run 0 "$HDRSTRIP" compile --headers "$BENCH"
matches out "^$BENCH: 118 names, [0-9]+ nodes, [0-9]+ label bytes, [0-9]+ distinct bytes, max depth 40, [0-9]+ bytes \('_' matches '-'\)\$"
same err "hdrstrip: warning: $BENCH:78: header name \"referer...\" is not an RFC 9110 token ('[' is not a token character): strict servers reject such a header, lenient ones accept it; it is matched as written"

t "compile --no-fold-underscore"
run 0 "$HDRSTRIP" compile --headers "$INTERNAL" --no-fold-underscore
matches out " \('_' does not match '-'\)\$"

t "compile: @fold-underscore off in the list"
list fold-off.txt "@fold-underscore off" "x_a"
run 0 "$HDRSTRIP" compile --headers "$TMP/fold-off.txt"
matches out "^$TMP/fold-off.txt: 1 names, .* \('_' does not match '-'\)\$"

t "compile --dump"
list two.txt "x-a" "x-ab"
run 0 "$HDRSTRIP" compile --headers "$TMP/two.txt" --dump
# Two names, one the other's prefix: the compressed trie has one shape.
same out "$(head -n 1 "$TMP/out")
node 0: label \"x-a\" children \"b\" from node 1 ends x-a (request)
node 1: label \"\" ends x-ab (request)"
empty err

t "compile from standard input"
run 0 "$HDRSTRIP" compile --headers - <"$TMP/two.txt"
matches out "^-: 2 names, "
list bad-space.txt "x-ok" "x bad"
run 2 "$HDRSTRIP" compile --headers - <"$TMP/bad-space.txt"
same err "hdrstrip: <stdin>:2: invalid character ' ' in header name \"x...\" (after the name may come an action, 'mask' or 'drop', and a direction, 'request', 'response' or 'both')"

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
	[[ $rules == 100 ]] || fail "n_rules $rules, expected 100"
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
run 0 "$HDRSTRIP" check --headers "$INTERNAL" "${names[@]}"
[[ $(grep -c ': no match$' "$TMP/out") == "${#names[@]}" ]] || fail "some miss-pool names match: $(grep -v ': no match$' "$TMP/out" | head -3)"

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
list dirs2.txt "x-a* response" "x-abc request" "x-abc drop response"
run 0 "$HDRSTRIP" compile --headers "$TMP/dirs2.txt" --dump
same out "$(head -n 1 "$TMP/out")
node 0: label \"x-a\" children \"b\" from node 1 ends x-a* (response)
node 1: label \"c\" ends x-abc (request), x-abc (response) under x-a* (response)"
empty err

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
same err "hdrstrip: warning: $TMP/odd.txt:2: header name \"x...\" is not an RFC 9110 token ('[' is not a token character): strict servers reject such a header, lenient ones accept it; it is matched as written"

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
bad "$TMP/b1.txt" "hdrstrip: $TMP/b1.txt:2: invalid character ' ' in header name \"x...\" (after the name may come an action, 'mask' or 'drop', and a direction, 'request', 'response' or 'both')"
list b1b.txt "x:a"
bad "$TMP/b1b.txt" "hdrstrip: $TMP/b1b.txt:1: invalid character ':' in header name \"x...\""

t "bad: unknown action"
list b2.txt "x-foo maks"
bad "$TMP/b2.txt" "hdrstrip: $TMP/b2.txt:1: unknown action \"maks\" for header name \"x-foo\" (expected 'mask' or 'drop')"

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
seq -f 'x-%g' 1 1024 >"$TMP/ok6.txt"
run 0 "$HDRSTRIP" compile --headers "$TMP/ok6.txt"
matches out "^$TMP/ok6.txt: 1024 names, "

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

t "bad: '*' alone"
list b8.txt "x-a" "*"
bad "$TMP/b8.txt" "hdrstrip: $TMP/b8.txt:2: prefix rule \"*\" needs at least one byte before the '*' (it would match every header)"

t "bad: unknown directive"
list b9.txt "@fold-underscores off" "x-a"
bad "$TMP/b9.txt" "hdrstrip: $TMP/b9.txt:1: unknown directive \"@fold-underscores\" (known: @fold-underscore on|off)"

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

t "--ports: an empty item, a sign or a blank is a typo, not a list"
for p in "80," ",80" "80,,81" "+80" " 80" "80-" "-80" "0" "65536" "80-79" "8o" "080000"; do
	run 2 "$HDRSTRIP" attach hs-nodev0 --headers "$INTERNAL" --ports "$p"
	same err "hdrstrip: attach: bad port list '$p' (expected e.g. 80,8080,9000-9010; ports 1-65535)"
done

t "--flows: capped, with its cost per entry"
for n in 15 16777216 1048577 "1e6" "-5"; do
	run 2 "$HDRSTRIP" attach hs-nodev0 --headers "$INTERNAL" --flows "$n"
	same err "hdrstrip: attach: bad --flows '$n' (a count of connections, 16..1048576; each takes about 1080 bytes of kernel memory per hook)"
done

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
	printf("\n--on-error %s %s\n--untracked", hs_policy_names[HS_POLICY_DROP],
	       hs_policy_names[HS_POLICY_PASS]);
	for (int p = 0; p < HS_POLICY_MAX; p++)
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

echo "test_cli.sh: $cases cases, $failures failed checks"
[[ $failures == 0 ]]
