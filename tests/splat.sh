#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The splat self-check: every scripts/vm run scans the guest's kernel log for reports and
# fails on one. Proves the scan sees one: tests/vm/splat.sh puts a backtrace in the log and
# passes by itself ("ok 1"), so the run must fail all the same, naming the report.
#
# usage: tests/splat.sh [--kernel test|debian]   (make check; prints "N passed, N failed")
set -uo pipefail
cd "$(dirname "$0")/.."
kernel=debian
[ "${1:-}" = --kernel ] && kernel=$2
passed=0
failed=0
result() { # OK NAME
	if [ "$1" = 1 ]; then
		passed=$((passed + 1))
		echo "ok - $2"
	else
		failed=$((failed + 1))
		echo "not ok - $2"
	fi
}

out=$(scripts/vm --kernel "$kernel" --driver atl1c_rs --personality mikrotik tests/vm/splat.sh 2>&1)
rc=$?
echo "$out" | grep -E '^(ok|not ok) |atl1c-vm: (kernel log report|  )' | head -8
ok=0
[ $rc -ne 0 ] && echo "$out" | grep -q '^1 passed, 0 failed' &&
	echo "$out" | grep -q 'atl1c-vm:   .*Call Trace' && ok=1
result $ok "a run whose kernel log holds a backtrace fails, and the report is named ($kernel)"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
