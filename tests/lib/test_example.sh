#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# lib/example.c as built (build/lib/hdrstrip-mask): a request through it
# comes out masked, a drop rule refuses it, a bad list is exit 2.
set -euo pipefail
ex=${LIB_EXAMPLE:?set LIB_EXAMPLE to the example binary}
list=${CORPUS:?set CORPUS to the corpus directory}/internal-headers.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 failed=0

check() { # WHAT COMMAND...
	local what=$1
	shift
	if "$@"; then
		pass=$((pass + 1))
		echo "ok: $what"
	else
		failed=$((failed + 1))
		echo "FAIL: $what" >&2
	fi
}

printf 'GET / HTTP/1.1\r\nHost: a\r\nX-Internal-Auth: s3cret\r\n\r\nbody\r\n' >"$tmp/in"
printf 'GET / HTTP/1.1\r\nHost: a\r\ny-hdrstrip: xxxxxxxxxxx\r\n\r\nbody\r\n' >"$tmp/want"
rc=0
"$ex" "$list" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "masked request, exit 0" test "$rc" -eq 0
check "masked bytes" cmp -s "$tmp/out" "$tmp/want"
check "summary on stderr" grep -q '1 internal, 1 masked' "$tmp/err"

printf 'GET / HTTP/1.1\r\nX-Proxy-Secret: k\r\n\r\n' >"$tmp/in"
rc=0
"$ex" "$list" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "drop rule: exit 1" test "$rc" -eq 1
check "drop rule: nothing written" test ! -s "$tmp/out"
check "drop rule: named" grep -q "x-proxy-secret" "$tmp/err"

printf 'x-ok\nnot a name\n' >"$tmp/bad.txt"
rc=0
"$ex" "$tmp/bad.txt" </dev/null >/dev/null 2>"$tmp/err" || rc=$?
check "bad list: exit 2" test "$rc" -eq 2
check "bad list: file:line" grep -q "bad.txt:2: " "$tmp/err"

echo "example: $pass passed, $failed failed"
[ "$failed" -eq 0 ]
