#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# 'make install' and 'make uninstall', checked from the outside:
#  1. into a scratch DESTDIR: exactly the expected files, modes and links;
#     the man page formats without warnings and documents every command,
#     option, counter and exit code; the completion loads and completes;
#     the library, header and .pc build and run the example, static and
#     shared; 'make uninstall' leaves no file behind;
#  2. into a scratch PREFIX (no DESTDIR), so that the unit's paths exist:
#     systemd-analyze verify passes, and the service helper rejects bad
#     configurations with their file and line.
# Needs no root. Run by 'make test-install'.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO" || exit 1
MAKE=${MAKE:-make}
VERSION=${VERSION:?set VERSION}
HDRSTRIP=$REPO/build/hdrstrip
T=$(mktemp -d /tmp/hdrstrip-test-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 failed=0 skipped=0

ok() { pass=$((pass + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
check() { # WHAT COMMAND...: the command must succeed
	local what=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then
		ok "$what"
	else
		bad "$what"
		sed 's/^/    | /' "$T/check.out" | head -20 >&2
	fi
}
skip() { skipped=$((skipped + 1)); echo "skip: $*"; }

# ---- 1. DESTDIR ----
D=$T/dest
P=/usr/local
check "make install DESTDIR" $MAKE --no-print-directory install DESTDIR="$D" LDCONFIG=true

expected() {
	cat <<EOF
$P/sbin/hdrstrip f 755
$P/lib/hdrstrip/hdrstrip.bpf.o f 644
$P/lib/hdrstrip/hdrstrip-service f 755
$P/lib/systemd/system/hdrstrip@.service f 644
$P/lib/systemd/system/hdrstrip-textfile.service f 644
$P/lib/systemd/system/hdrstrip-textfile.timer f 644
$P/lib/systemd/system/hdrstrip-agent.service f 644
$P/lib/systemd/system/hdrstrip-proxy@.service f 644
$P/lib/systemd/system/hdrstrip-origin@.service f 644
/etc/hdrstrip/IFACE.conf.example f 644
/etc/hdrstrip/agent.conf.example f 644
/etc/hdrstrip/internal-headers.txt f 644
/etc/hdrstrip/default.conf f 644
$P/share/man/man8/hdrstrip.8 f 644
$P/share/bash-completion/completions/hdrstrip f 644
$P/share/doc/hdrstrip/example.c f 644
$P/share/doc/hdrstrip/internal-headers.example f 644
$P/share/hdrstrip/prometheus/hdrstrip-rules.yml f 644
$P/share/hdrstrip/grafana/hdrstrip.json f 644
$P/lib/libhdrstrip.a f 644
$P/lib/libhdrstrip.so.$VERSION f 755
$P/lib/libhdrstrip.so.0 l libhdrstrip.so.$VERSION
$P/lib/libhdrstrip.so l libhdrstrip.so.0
$P/include/hdrstrip.h f 644
$P/lib/pkgconfig/hdrstrip.pc f 644
EOF
}
actual() {
	(cd "$D" && find . \( -type f -o -type l \) -printf '/%P %y %m %l\n') |
		while read -r path type mode link; do
			if [ "$type" = l ]; then echo "$path l $link"; else echo "$path $type $mode"; fi
		done
}
expected | sort >"$T/want.txt"
actual | sort >"$T/got.txt"
if diff -u "$T/want.txt" "$T/got.txt" >"$T/tree.diff"; then
	ok "installed tree: $(wc -l <"$T/want.txt") files, modes and links as expected"
else
	bad "installed tree differs (- expected, + installed)"
	sed 's/^/    | /' "$T/tree.diff" >&2
fi
check "installed BPF object is the built one" cmp build/bpf/hdrstrip.bpf.o "$D$P/lib/hdrstrip/hdrstrip.bpf.o"
check "installed CLI runs" "$D$P/sbin/hdrstrip" --version
# The starter list masks the README's examples of internal fields.
for h in X-Internal-Auth X-Real-IP; do
	check "the starter list masks $h" bash -c "'$D$P/sbin/hdrstrip' check --headers \
		'$D/etc/hdrstrip/internal-headers.txt' $h | grep -q '^$h: match (id [0-9]*, mask, '"
done
check "unit names the default paths" grep -qx \
	"ExecStart=$P/lib/hdrstrip/hdrstrip-service start %I" "$D$P/lib/systemd/system/hdrstrip@.service"

# The man page: no formatter warnings, and every command, option, counter
# and exit code documented.
MAN=$D$P/share/man/man8/hdrstrip.8
if command -v man >/dev/null; then
	MANWIDTH=80 man -l --warnings "$MAN" >"$T/man.txt" 2>"$T/man.err"
	if [ -s "$T/man.txt" ] && [ ! -s "$T/man.err" ]; then
		ok "man -l --warnings: no warnings"
	else
		bad "man -l --warnings"
		sed 's/^/    | /' "$T/man.err" >&2
	fi
else
	skip "man is not installed"
fi
if command -v groff >/dev/null; then
	check "groff -ww -man: no warnings" bash -c "[ -z \"\$(groff -ww -man -z '$MAN' 2>&1)\" ]"
fi
# Plain ASCII text on long lines, joined, for the searches below.
if command -v man >/dev/null; then
	LC_ALL=C MANWIDTH=250 man -l "$MAN" 2>/dev/null | col -b | tr '\n' ' ' | tr -s ' ' >"$T/man.txt"
elif command -v groff >/dev/null; then
	groff -man -Tascii -P-cbou -rLL=250n "$MAN" 2>/dev/null | tr '\n' ' ' | tr -s ' ' >"$T/man.txt"
fi
man_has() { grep -qF -- "$1" "$T/man.txt"; }
missing=
if [ ! -s "$T/man.txt" ]; then
	skip "neither man nor groff: the man page's contents are not checked"
else
for c in $("$HDRSTRIP" --help | sed -n 's/^  \([a-z]\+\) .*/\1/p'); do
	man_has "hdrstrip $c" || missing="$missing command:$c"
	for o in $("$HDRSTRIP" "$c" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		man_has "$o" || missing="$missing $c:$o"
	done
done
for o in $("$HDRSTRIP" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	man_has "$o" || missing="$missing global:$o"
done
counters=$(sed -n '/#define HS_COUNTERS(X)/,/^$/p' include/hdrstrip/counters.h | grep -o 'X([a-z0-9_]*' | cut -c3-)
[ -n "$counters" ] || missing="$missing (no HS_COUNTERS found)"
for c in $counters; do
	man_has "$c" || missing="$missing counter:$c"
	man_has "hdrstrip_${c}_total" || grep -q 'hdrstrip_.*COUNTER.*_total' "$MAN" ||
		missing="$missing metric:$c"
done
for p in /sys/fs/bpf/hdrstrip trie config counters header_hits "EXIT STATUS" "HEADER LIST FORMAT" \
	"ip netns exec" hdrstrip.bpf.o hdrstrip_header_hits_total /run/hdrstrip; do
	man_has "$p" || missing="$missing text:'$p'"
done
if [ -z "$missing" ]; then
	ok "man page documents every command, option, counter and pin"
else
	bad "man page lacks:$missing"
fi
fi

# Bash completion: loads, registers, completes.
COMP=$D$P/share/bash-completion/completions/hdrstrip
check "completion loads and registers" bash -c "source '$COMP' && complete -p hdrstrip | grep -q _hdrstrip"
comp() { # WORDS...: print the completions of the last word
	bash -c 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));
		_hdrstrip; printf "%s\n" "${COMPREPLY[@]}"' "$COMP" "$@"
}
got=$(comp hdrstrip up | tr '\n' ' ')
[ "$got" = "update " ] && ok "completes a command" || bad "completes a command: '$got'"
got=$(comp hdrstrip attach lo --hook tc- | tr '\n' ' ')
[ "$got" = "tc-ingress tc-egress " ] && ok "completes --hook values" || bad "completes --hook values: '$got'"
got=$(comp hdrstrip stats --p | tr '\n' ' ')
[ "$got" = "--per-header --prometheus " ] && ok "completes stats options" || bad "completes stats options: '$got'"
got=$(comp hdrstrip detach l | tr '\n' ' ')
[ "$got" = "lo " ] && ok "completes interfaces" || bad "completes interfaces: '$got'"

# The library: pkg-config, the header, the example, static and shared.
if command -v pkg-config >/dev/null; then
	export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_LIBDIR=$D$P/lib/pkgconfig
	check "pkg-config --modversion hdrstrip = $VERSION" \
		bash -c "[ \"\$(pkg-config --modversion hdrstrip)\" = '$VERSION' ]"
	flags=$(pkg-config --cflags --libs hdrstrip)
	unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
	check "example builds against the shared library" \
		cc -Wall -Werror "$D$P/share/doc/hdrstrip/example.c" $flags -o "$T/ex-shared"
	check "example builds against the static library" \
		cc -Wall -Werror "$D$P/share/doc/hdrstrip/example.c" -I"$D$P/include" \
		"$D$P/lib/libhdrstrip.a" -o "$T/ex-static"
	printf 'GET / HTTP/1.1\r\nHost: a\r\nX-Internal-Auth: s3cret\r\n\r\n' >"$T/req"
	printf 'GET / HTTP/1.1\r\nHost: a\r\ny-hdrstrip: xxxxxxxxxxx\r\n\r\n' >"$T/want"
	printf 'x-internal-*\n' >"$T/list"
	check "shared example masks" bash -c "LD_LIBRARY_PATH='$D$P/lib' '$T/ex-shared' '$T/list' <'$T/req' 2>/dev/null | cmp -s - '$T/want'"
	check "static example masks" bash -c "'$T/ex-static' '$T/list' <'$T/req' 2>/dev/null | cmp -s - '$T/want'"
	check "shared example uses the installed soname" bash -c \
		"LD_LIBRARY_PATH='$D$P/lib' ldd '$T/ex-shared' | grep -q '$D$P/lib/libhdrstrip.so.0'"
else
	skip "pkg-config is not installed"
fi
exports=$(nm -D --defined-only "$D$P/lib/libhdrstrip.so.$VERSION" | awk '{print $3}' | sort | tr '\n' ' ')
want="hs_compile_file hs_compile_text hs_free hs_lookup hs_mask_headers hs_rule_count hs_rule_get "
[ "$exports" = "$want" ] && ok "shared library exports the public API only" ||
	bad "shared library exports: $exports"
exports=$(nm -g --defined-only "$D$P/lib/libhdrstrip.a" | awk 'NF == 3 {print $3}' | sort | tr '\n' ' ')
[ "$exports" = "$want" ] && ok "static library defines the public API only" ||
	bad "static library defines: $exports"

check "make uninstall DESTDIR" $MAKE --no-print-directory uninstall DESTDIR="$D" LDCONFIG=true
left=$(cd "$D" && find . \( -type f -o -type l \) | head)
[ -z "$left" ] && ok "uninstall removed every installed file" || bad "left after uninstall: $left"
for d in "$D$P/lib/hdrstrip" "$D/etc/hdrstrip" "$D$P/share/doc/hdrstrip" "$D$P/share/hdrstrip"; do
	[ ! -e "$d" ] && ok "uninstall removed ${d#"$D"}" || bad "uninstall left ${d#"$D"}"
done
# A user's own file in hdrstrip's directories stays, and so does the directory.
check "reinstall" $MAKE --no-print-directory install DESTDIR="$D" LDCONFIG=true
echo "HEADERS=/x" >"$D/etc/hdrstrip/eth0.conf"
check "uninstall with a user's conf" $MAKE --no-print-directory uninstall DESTDIR="$D" LDCONFIG=true
check "the user's conf stays" test -f "$D/etc/hdrstrip/eth0.conf"
rm -rf "$D"

# ---- 2. A real PREFIX: the unit's paths exist ----
R=$T/prefix
check "make install PREFIX" $MAKE --no-print-directory install PREFIX="$R" SYSCONFDIR="$R/etc" LDCONFIG=true
UNIT=$R/lib/systemd/system/hdrstrip@.service
SVC=$R/lib/hdrstrip/hdrstrip-service
check "unit rewritten for PREFIX" grep -qx "ExecStart=$SVC start %I" "$UNIT"
check "textfile unit rewritten for PREFIX" grep -q "^ExecStart=$SVC textfile " \
	"$R/lib/systemd/system/hdrstrip-textfile.service"
check "helper rewritten for PREFIX" grep -q "^HDRSTRIP=\${HDRSTRIP:-$R/sbin/hdrstrip}" "$SVC"
check "man page rewritten for PREFIX" grep -q "$R/lib/hdrstrip/hdrstrip.bpf.o" "$R/share/man/man8/hdrstrip.8"
if command -v systemd-analyze >/dev/null; then
	# verify WHAT UNIT...: systemd-analyze verify, silent (man: finds the
	# installed page).
	verify() {
		local what=$1
		shift
		if MANPATH=$R/share/man systemd-analyze verify "$@" >"$T/verify.out" 2>&1 &&
			[ ! -s "$T/verify.out" ]; then
			ok "systemd-analyze verify $what"
		else
			bad "systemd-analyze verify $what"
			sed 's/^/    | /' "$T/verify.out" >&2
		fi
	}
	U=$R/lib/systemd/system
	verify "hdrstrip@eth0.service (an instance of the template)" "$U/hdrstrip@eth0.service"
	verify hdrstrip-agent.service "$U/hdrstrip-agent.service"
	verify "hdrstrip-proxy@proxy.slice.service (an instance of the template)" \
		"$U/hdrstrip-proxy@proxy.slice.service"
	verify "hdrstrip-origin@web.slice.service (an instance of the template)" \
		"$U/hdrstrip-origin@web.slice.service"
	verify "hdrstrip-textfile.timer and .service" "$U/hdrstrip-textfile.timer" \
		"$U/hdrstrip-textfile.service"
	# The units' hardening, scored offline; the issue asks for under 3.0.
	for u in hdrstrip@eth0.service hdrstrip-agent.service hdrstrip-proxy@proxy.slice.service \
		hdrstrip-textfile.service hdrstrip-origin@web.slice.service; do
		score=$(systemd-analyze security --offline=true "$U/$u" 2>&1 |
			sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
		if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s < 3.0) }'; then
			ok "systemd-analyze security: $u exposure $score (< 3.0)"
		else
			bad "systemd-analyze security: $u exposure '$score', not under 3.0"
		fi
	done
else
	skip "systemd-analyze is not installed"
fi

# The textfile unit writes where the README and the man page say, into a
# directory it may write (the one path of all three), which may be missing
# (node_exporter's: '-', or systemd fails the unit setting up its namespace).
TF=$R/lib/systemd/system/hdrstrip-textfile.service
tf_dir=$(sed -n 's|^ExecStart=.* textfile ||p' packaging/hdrstrip-textfile.service)
check "textfile unit: ReadWritePaths=-$tf_dir, the directory it writes, optional" \
	grep -qx "ReadWritePaths=-$tf_dir" packaging/hdrstrip-textfile.service
docs_dirs=$( (cat README.md; man -l man/hdrstrip.8 2>/dev/null | col -b) |
	grep -o '/[a-z_/.-]*/hdrstrip\.prom' | sed 's|/hdrstrip\.prom$||' | sort -u)
check "README and man page name the textfile unit's path, and only it ($tf_dir)" \
	test "$docs_dirs" = "$tf_dir"
printf 'x-a\n' >"$T/tf-list"
check "textfile helper: a missing directory is named" bash -c \
	"HDRSTRIP=/bin/false '$SVC' textfile '$T/no-such-dir' 2>&1 | grep -q 'no-such-dir is not a directory'"

# deploy/prometheus' alert rules and deploy/grafana's dashboard, offline:
# the rules parse and fire on the series their tests give (promtool test
# rules), every dashboard query is PromQL Prometheus takes, and the
# dashboard shows what operators watch (check_queries.py; test_metrics.sh
# checks the metric names against a real scrape).
if command -v promtool >/dev/null; then
	check "promtool check rules deploy/prometheus/hdrstrip-rules.yml" \
		promtool check rules deploy/prometheus/hdrstrip-rules.yml
	check "promtool test rules: each alert fires on its series, and only then" \
		bash -c 'cd deploy/prometheus && promtool test rules hdrstrip-rules.test.yml'
	check "the dashboard's queries: what it must show, in the datasource variable" \
		python3 tests/install/check_queries.py --dashboard deploy/grafana/hdrstrip.json \
		--rules deploy/prometheus/hdrstrip-rules.yml --promql "$T/dashboard-rules.yml"
	check "the dashboard's queries are PromQL (promtool check rules)" \
		promtool check rules "$T/dashboard-rules.yml"
else
	skip "promtool is not installed (Debian's prometheus; scripts/install-deps.sh): rules not checked"
fi

# The helper's configuration errors (no kernel needed: it stops before).
svc() { # EXPECTED-EXIT EXPECTED-TEXT WHAT ARGS...
	local want=$1 text=$2 what=$3 rc=0
	shift 3
	HDRSTRIP=/bin/false "$SVC" "$@" >"$T/svc.out" 2>&1 || rc=$?
	if [ "$rc" -eq "$want" ] && grep -qF -- "$text" "$T/svc.out"; then
		ok "helper: $what"
	else
		bad "helper: $what: exit $rc, output: $(head -c 300 "$T/svc.out")"
	fi
}
svc 2 "Usage:" "usage" start
# No eth9.conf: default.conf (installed) is read, then without it the
# missing file is named.
printf 'HEADERS=/x\nBOGUS=1\n' >"$T/default.conf"
mv "$R/etc/hdrstrip/default.conf" "$T/default.conf.installed"
cp "$T/default.conf" "$R/etc/hdrstrip/default.conf"
svc 2 "$R/etc/hdrstrip/default.conf:2: unknown key 'BOGUS'" "no DEV.conf: default.conf is read" start eth9
rm "$R/etc/hdrstrip/default.conf"
svc 2 "cannot read $R/etc/hdrstrip/eth9.conf" "missing conf" start eth9
mv "$T/default.conf.installed" "$R/etc/hdrstrip/default.conf"
printf 'HEADERS=/x\nPORTS = 80 # web\nBOGUS=1\n' >"$T/c1.conf"
svc 2 "$T/c1.conf:3: unknown key 'BOGUS'" "unknown key, with file:line" -c "$T/c1.conf" start eth9
printf '# no list\nHOOKS=xdp\n' >"$T/c2.conf"
svc 2 "HEADERS=FILE is required" "HEADERS required" -c "$T/c2.conf" start eth9
printf 'HEADERS=/x\nHOOKS="xdp, tc-sideways"\n' >"$T/c3.conf"
svc 2 "unknown hook 'tc-sideways'" "bad hook" -c "$T/c3.conf" reload eth9
printf 'HEADERS=/x\njust words\n' >"$T/c4.conf"
svc 2 "$T/c4.conf:2: expected KEY=VALUE" "not KEY=VALUE" -c "$T/c4.conf" start eth9
svc 2 "not an interface name" "bad interface name" start ../x
svc 2 "-r (origin mode) goes with -g" "origin mode is a slice's" -r start eth9

check "make uninstall PREFIX" $MAKE --no-print-directory uninstall PREFIX="$R" SYSCONFDIR="$R/etc" LDCONFIG=true
left=$(cd "$R" && find . \( -type f -o -type l \) | head)
[ -z "$left" ] && ok "uninstall PREFIX removed every installed file" || bad "left after uninstall: $left"

echo "install: $pass passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
