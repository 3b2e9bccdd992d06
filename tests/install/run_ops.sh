#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# 'make test-ops': the checker of the Prometheus format on its own, then the
# tests that need a real attachment (root, network namespaces): metrics, the
# service helper, and the Debian packages installed and removed (make deb). Each test exits 0 pass, 1 fail, 77 skipped.
set -uo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
export HDRSTRIP=${HDRSTRIP:-$dir/../../build/hdrstrip}
pass=0 failed=() skipped=()

run() { # NAME COMMAND...
	local name=$1 rc=0
	shift
	"$@" || rc=$?
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $name" ;;
	77) skipped+=("$name"); echo "SKIP $name" ;;
	*) failed+=("$name"); echo "FAIL $name (exit $rc)" ;;
	esac
}

run promcheck-self-test python3 "$dir/promcheck.py" --self-test
run test_metrics bash "$dir/test_metrics.sh"
run test_service bash "$dir/test_service.sh"
run test_deb bash "$dir/test_deb.sh"
echo "ops: $pass passed, ${#failed[@]} failed, ${#skipped[@]} skipped"
[ ${#failed[@]} -eq 0 ]
