#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault recovery: the model's tx engine hangs (SIM_CONTROL "tx hang"); the stack's watchdog
# must fire, the driver must reset the MAC and rings, and traffic must resume.
set -u
source "$VM_LIB"

tx_hang_recovers() {
	local i
	ping -c 5 -i 0.1 -W 2 -q 192.0.2.2 || return 1
	sim_control "tx hang"
	sleep 0.2
	# Traffic now queues up in the ring; the watchdog fires after 5 s without completion.
	ping -c 3 -i 0.2 -W 1 -q 192.0.2.2 >/dev/null 2>&1
	for i in $(seq 300); do
		dmesg | grep -q "NETDEV WATCHDOG" && break
		ping -c 1 -W 1 -q 192.0.2.2 >/dev/null 2>&1
		sleep 0.1
	done
	dmesg | grep -E "NETDEV WATCHDOG|timed out" | head -3
	dmesg | grep -q "NETDEV WATCHDOG" || { echo "the watchdog never fired"; return 1; }
	for i in $(seq 100); do
		ping -c 1 -W 1 -q 192.0.2.2 >/dev/null 2>&1 && break
		sleep 0.2
	done
	ping -c 20 -i 0.05 -W 2 192.0.2.2 | tail -2 | tee /dev/stderr | grep -q ' 0% packet loss'
}

no_oops() {
	! dmesg | grep -E 'BUG:|Oops|circular locking|inconsistent lock|sleeping function|rust_panic'
}

check "tx hang: watchdog, reset, traffic resumes" tx_hang_recovers
check "no oops or lockdep report during recovery" no_oops
summary
