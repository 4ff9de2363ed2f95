#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The splat self-check's scenario: puts a report in the kernel log on purpose (sysrq 'l':
# a backtrace of every CPU, with "Call Trace"), so that tests/splat.sh can prove that
# scripts/vm's kernel log scan fails a run that holds one. Passes by itself.
set -u
source "$VM_LIB"

provoke() {
	[ -w /proc/sysrq-trigger ] || { echo "no /proc/sysrq-trigger (CONFIG_MAGIC_SYSRQ)"; return 1; }
	echo l >/proc/sysrq-trigger
	sleep 1
	dmesg | grep -m1 'Call Trace'
}

check "a backtrace in the kernel log (sysrq l)" provoke
summary
