#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Install everything hdrstrip needs to build, test and benchmark, from
# Debian's packages. Idempotent: when every package is present it only says so.
set -euo pipefail

PKGS=(
	# build
	make gcc clang llvm libbpf-dev libxdp-dev libelf-dev zlib1g-dev pkg-config bpftool
	# the agent's metrics endpoint (hdrstrip run --metrics-listen)
	libmicrohttpd-dev
	# the second compiler the BPF object must build with
	clang-19
	# tests
	libcmocka-dev iproute2 ethtool util-linux curl python3 nginx-light xdp-tools
	nodejs python3-yaml valgrind libclang-rt-14-dev man-db groff-base systemd
	# test_wire.sh: NAT rules (DNAT, REDIRECT) in a test namespace;
	# test_nat_rules.sh: status reads nftables' and iptables-nft's rules;
	# conntrack -F: a connection conntrack forgets (test_wire.sh)
	nftables iptables conntrack
	# make test-faults: kills the CLI at chosen syscalls
	strace
	# deploy/prometheus' rules checked offline (promtool); make deb, lintian
	prometheus debhelper dpkg-dev fakeroot lintian
	# origin mode's tests: an nftables DNAT to an origin, io_uring receives
	nftables liburing-dev
	# make lint, make fuzz-cov
	cppcheck clang-tidy-14 clang-format-14 llvm-14
	# benchmarks
	gperf wrk gnuplot-nox linux-perf procps
)

# The Kubernetes manifests' offline check takes its schemas from npm's
# registry; Debian's nodejs comes without npm (a nodejs that bundles it
# needs nothing more).
command -v npm >/dev/null 2>&1 || PKGS+=(npm)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages present"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# Keep package scripts from starting services (nginx) on the host: the tests
# run their own servers inside network namespaces.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod +x "$policy"
	created_policy=1
fi
trap '[ "$created_policy" = 1 ] && rm -f "$policy"' EXIT
apt-get install -y -q --no-install-recommends "${missing[@]}"
