#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The Debian packages of 'make deb' (build/deb), checked from the outside:
#  - lintian finds nothing (errors, warnings, info, pedantic; the few
#    overrides say why in packaging/debian);
#  - dpkg -i installs them on this machine: the command runs and finds the
#    starter list, the library builds and runs the example, every unit
#    passes systemd-analyze verify with the paths it names present, no
#    unit is enabled by the install, and the units' helper attaches and
#    detaches on an interface in a network namespace;
#  - dpkg -r removes every file but the settings (conffiles), dpkg -P
#    those too: nothing of the packages is left.
# Root. Skipped when a package of these names is installed already (the
# test would remove someone's). Exit 0 pass, 1 fail, 77 skipped.

source "$(dirname "$0")/../e2e/lib.sh"
E2E_NAME=test_deb
DEBS=$REPO_ROOT/build/deb
PKGS=(hdrstrip libhdrstrip0 libhdrstrip-dev)

e2e_init
require_tools dpkg lintian systemd-analyze cc pkg-config
installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q 'ok installed'; }
# Known to dpkg in any state but "not installed" (its settings left, say).
known() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -qv 'not-installed$'; }
for p in "${PKGS[@]}"; do
	known "$p" && skip "$p is known to dpkg on this machine already ($(dpkg-query -W -f='${Status}' "$p"))"
done
[ -e /etc/hdrstrip ] && skip "/etc/hdrstrip exists: someone's settings, which a purge would touch"
debs=()
for p in "${PKGS[@]}"; do
	f=$(ls "$DEBS/${p}_"*.deb 2>/dev/null | head -1)
	[ -n "$f" ] || fail "no $p package in $DEBS (make deb)"
	debs+=("$f")
done

# Whatever happens, the packages go again.
deb_exit() {
	local rc=$?
	set +e
	for p in "${PKGS[@]}"; do known "$p" && dpkg -P "$p" >/dev/null 2>&1; done
	(exit "$rc")
	cleanup
}
trap deb_exit EXIT

step "lintian: nothing to say (pedantic, info)" bash -c \
	"out=\$(lintian -I --pedantic '$DEBS'/*.changes 2>&1 | grep -v 'running with root privileges'); [ -z \"\$out\" ] || { echo \"\$out\"; exit 1; }"

step "dpkg -i" dpkg -i "${debs[@]}"
for p in "${PKGS[@]}"; do installed "$p" || fail "$p is not installed after dpkg -i"; done
dpkg-query -L "${PKGS[@]}" | sort -u >"$WORK/files"
log "ok: $(wc -l <"$WORK/files") paths installed"

step "the command runs" /usr/sbin/hdrstrip --version
assert_match "$(/usr/sbin/hdrstrip check --headers /etc/hdrstrip/internal-headers.txt X-Real-IP)" \
	"^X-Real-IP: match " "the starter list, where the package put it"
assert_match "$(dpkg-query -W -f='${Conffiles}' hdrstrip)" "/etc/hdrstrip/default.conf" \
	"the settings are conffiles (an edit survives upgrades)"
assert_eq "$(/usr/sbin/hdrstrip help update | head -1 | cut -c1-23)" "Usage: hdrstrip update " "help"

# The library: pkg-config finds it, the example builds and masks.
flags=$(pkg-config --cflags --libs hdrstrip) || fail "pkg-config hdrstrip"
step "the example builds against the installed library" \
	cc -Wall -Werror /usr/share/doc/libhdrstrip-dev/examples/example.c $flags -o "$WORK/example"
printf 'GET / HTTP/1.1\r\nHost: a\r\nX-Internal-Auth: s3cret\r\n\r\n' >"$WORK/req"
printf 'x-internal-*\n' >"$WORK/list"
assert_eq "$("$WORK/example" "$WORK/list" <"$WORK/req" 2>/dev/null | grep -c s3cret)" 0 \
	"the installed library masks"

# The units: verified with the paths they name, none enabled by the install.
U=/lib/systemd/system
for u in hdrstrip@eth0.service hdrstrip-agent.service hdrstrip-proxy@proxy.slice.service \
	hdrstrip-origin@web.slice.service \
	hdrstrip-textfile.service hdrstrip-textfile.timer; do
	step "systemd-analyze verify $u" bash -c "out=\$(systemd-analyze verify '$U/$u' 2>&1); [ -z \"\$out\" ] || { echo \"\$out\"; exit 1; }"
done
for f in $(grep -ho '^Exec[A-Za-z]*=[^ ]*' "$U"/hdrstrip*.service | cut -d= -f2 | sort -u); do
	[ -x "$f" ] || fail "a unit runs $f, which the package did not install"
done
log "ok: every command the units run is installed"
enabled=$(find /etc/systemd/system -name 'hdrstrip*' 2>/dev/null | head -3)
assert_eq "$enabled" "" "the install enabled no unit (each needs its settings)"

# What hdrstrip@DEV runs: the installed helper on a real interface.
topo_setup
note_attached "$SNS" "$SDEV"
printf 'HEADERS=/etc/hdrstrip/internal-headers.txt\nHOOKS=xdp\nPORTS=80\n' >"$WORK/dev.conf"
step "hdrstrip@$SDEV's start (the installed helper)" \
	/usr/lib/hdrstrip/hdrstrip-service -n "$SNS" -c "$WORK/dev.conf" start "$SDEV"
assert_match "$(hs_in "$SNS" status "$SDEV")" "xdp" "attached by the installed units' helper"
step "hdrstrip@$SDEV's stop" /usr/lib/hdrstrip/hdrstrip-service -n "$SNS" -c "$WORK/dev.conf" stop "$SDEV"
assert_clean "$SNS" "$SDEV"

step "dpkg -r" dpkg -r "${PKGS[@]}"
# left: the installed paths still there that are not directories.
left() { while read -r f; do if [ ! -d "$f" ] && { [ -e "$f" ] || [ -L "$f" ]; }; then echo "$f"; fi; done <"$WORK/files"; }
left=$(left)
assert_eq "$(grep -v '^/etc/hdrstrip/' <<<"$left" | head -5)" "" "dpkg -r: only the settings stay"
assert_match "$left" "^/etc/hdrstrip/default.conf$" "dpkg -r keeps the settings"
step "dpkg -P" dpkg -P "${PKGS[@]}"
left=$(left)
assert_eq "$left" "" "dpkg -P: no file of the packages is left"
[ ! -e /etc/hdrstrip ] || fail "dpkg -P left /etc/hdrstrip: $(ls -A /etc/hdrstrip)"
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' && fail "$p still installed"
done
log "PASS"
