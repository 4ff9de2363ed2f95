#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault recovery: the model's tx engine hangs (SIM_CONTROL "tx hang"); the stack's watchdog
# must fire, the driver must reset the MAC and rings, and traffic must resume. An error
# interrupt ("dma error") must make the driver reset the MAC as the C driver does; a reset
# that never completes ("reset stuck") must leave the interface down and closable, and a
# later `ip link set up` must bring it back. On AR8151, a PHY bus that hangs ("mdio stuck")
# must not hang a link event. Acknowledgements that reach the card late ("ack delay") must not
# stop the receiver.
set -u
source "$VM_LIB"

tx_hang_recovers() {
	local ms
	ping -c 5 -i 0.1 -W 2 -q 192.0.2.2 || return 1
	sim_control "tx hang"
	sleep 0.2
	# Traffic now queues up in the ring; the watchdog fires after 5 s without completion.
	ping -c 3 -i 0.2 -W 1 -q 192.0.2.2 >/dev/null 2>&1
	watchdog_fires || return 1
	# The core reports how long the queue went without a transmit: between one and two
	# watchdog periods (AT_TX_WATCHDOG, 5 s, whatever the kernel's HZ).
	ms=$(dmesg | grep -o "NETDEV WATCHDOG.* timed out [0-9]* ms" | tail -1 | grep -o "[0-9]* ms")
	echo "= the queue went ${ms:-?} without a transmit"
	[ "${ms% ms}" -lt 12000 ] 2>/dev/null || { echo "watchdog period above 5 s"; return 1; }
	ping_resumes
}

dma_error_resets() {
	local resets
	ping -c 5 -i 0.1 -W 2 -q 192.0.2.2 || return 1
	resets=$(sim soft_resets)
	sim_control "dma error"
	sim_at_least faults.dma_error 50 1 || return 1
	# The driver resets the MAC from its task (a soft reset the model counts).
	sim_at_least soft_resets 100 $((resets + 1)) || { echo "no MAC reset after the error interrupt"; return 1; }
	ping_resumes || return 1
	if [ "$DRIVER" = atl1c_rs ]; then
		ethtool -S eth0 | grep -E '^ +(hw_errors|resets): ' | sed 's/^ */= /'
		[ "$(ethtool -S eth0 | awk '/^ +hw_errors:/ { print $2 }')" -ge 1 ] || return 1
	fi
}

# A reset that never completes: the interface must stay down (carrier off) without a hang,
# `ip link set down` must complete, and once the card resets again, `ip link set up` must
# bring traffic back.
reset_stuck_recovers() {
	local i rc=0
	sim_control "reset stuck"
	sleep 0.2
	sim_control "dma error"
	sim_at_least faults.reset_stuck 100 1 || return 1
	link_down || rc=1
	# Let the reset task finish its attempt.
	sleep 2
	dmesg | grep -E 'reset failed|stays down' | tail -2
	completes 30 ip link set eth0 down || return 1
	sim_control "reset ok"
	sleep 0.2
	completes 30 ip link set eth0 up || return 1
	link_up || return 1
	ping_resumes || return 1
	return $rc
}

# AR8151: MDIO transactions never complete (the PHY's bus hangs). A link event must not hang
# the driver: the link reads as down, carrier off; once MDIO works again the link returns.
mdio_stuck_recovers() {
	local i
	sim_control "mdio stuck"
	sleep 0.2
	sim_control "link down"
	link_down || return 1
	sim_at_least faults.mdio_stuck 50 1 || return 1
	echo "= MDIO transactions that never completed: $(sim faults.mdio_stuck)"
	completes 30 ethtool eth0 >/dev/null || return 1
	sim_control "mdio ok"
	sleep 0.2
	sim_control "link up"
	link_up || return 1
	ping_resumes
}

# The card applies writes to ISR late ("ack delay", a slow posted write): the status of a frame
# that lands between the handler's read of ISR and its acknowledgement is cleared with the rest.
# A ring filled that way raises no RX_PKT again, and with the underrun off ("underrun off") no
# other status either: only a driver whose acknowledgement lands before its poll looks at the
# ring keeps receiving. 16 TCP streams from the peer into 64-entry rings fill one in a window.
# What is asserted is the receiver, with the faults still on, after each round: every ring in
# use gets back all its free buffers (every frame the card wrote was taken), and a ping is
# answered. A receiver that missed a frame's status leaves it in the ring. iperf3 is the load,
# not the verdict: how it ended is reported (it failed once in CI and hung once in ~200 rounds
# on the test kernel, 2026-12-07, with the receiver not examined either time).
late_ack_keeps_receiving() {
	local i rc=0 rx0 rx_was t0 r free
	rx_was=$(ethtool -g eth0 | awk '/^Current/ { c = 1 } c && /^RX:/ { print $2; exit }')
	ethtool -G eth0 rx 64 || return 1
	link_up || return 1
	sim_control "underrun off"
	sim_control "ack delay 3000"
	sim_at_least faults.ack_delayed 50 1 || rc=1
	free=$(rx_free)
	for ((i = 1; i <= ${ROUNDS:-3} && rc == 0; i++)); do
		rx0=$(sim rx_frames)
		iperf_server || { rc=1; break; }
		t0=$SECONDS
		completes 60 iperf_client 192.0.2.2 -R -P 16 -t 4
		r=$?
		echo "= round $i: $(($(sim rx_frames) - rx0)) frames received, iperf3 exit $r after $((SECONDS - t0)) s"
		[ $r -eq 0 ] || pkill iperf3
		rings_refilled "$free" || rc=1
		ping_ok ping -c 3 -i 0.2 -W 2 192.0.2.2 >/dev/null || { echo "no ping answer with the faults on"; rc=1; }
	done
	echo "= ISR writes held back: $(sim faults.ack_delayed), landed late: $(sim faults.ack_timed_out), dry rings without an underrun: $(sim faults.underrun_off)"
	if [ $rc -ne 0 ]; then
		# The rings as the driver left them, in the model's log (sim.log of the run).
		sim_control "dump rx"
		echo "model state: $(sim_jq -c '{state, irqs, irq_retriggers, rx_dropped_per_queue}')"
		ethtool -S eth0 | grep -E '_irqs:|errors:|dropped:|bad_rrd:' | tr -s ' ' | tr '\n' ' '
		echo
	fi
	remote pkill iperf3
	sim_control "ack delay 0"
	sim_control "underrun on"
	ethtool -G eth0 rx "$rx_was" || rc=1
	link_up || rc=1
	ping_resumes || rc=1
	return $rc
}

# The free buffers of each rx ring in use, as the model sees them (rfd_prod - rfd_cons).
rx_free() {
	sim_jq -r '.rings as $r | .state as $s | [range(0; $r.queues)
		| ($s.rfd_prod[.] - $s.rfd_cons[.] + $r.rfd) % $r.rfd | tostring] | join(" ")'
}

# Every rx ring in use is back to the free buffers it had before (BASE, from rx_free) within
# 5 s: every frame the card wrote was taken and its buffer replaced. A frame whose status was
# lost stays in its ring until the next one, and a ring the card filled that way for good.
rings_refilled() { # BASE
	local i free
	for ((i = 0; i < 50; i++)); do
		free=$(rx_free)
		[ "$free" = "$1" ] && return 0
		nap 0.1
	done
	echo "free rx buffers per ring: $free after 5 s, $1 before: $(sim_jq -c .state)"
	return 1
}

# The watchdog report of the tx hang is expected here, so not driver_unloads' log check.
unloads() {
	driver_removed && kmemleak_scan
}

check "tx hang: watchdog, reset, traffic resumes" tx_hang_recovers
check "dma error: the driver resets the MAC, traffic resumes" dma_error_resets
check "reset stuck: down without a hang, up again once the card resets" reset_stuck_recovers
if [ "$PERSONALITY" = ar8151 ]; then
	check "mdio stuck: a link event does not hang, the link returns with MDIO" mdio_stuck_recovers
fi
check "late acknowledgements: the receiver keeps going" late_ack_keeps_receiving
check "no oops or lockdep report during recovery" no_kernel_report
check "rmmod after the faults, no leak" unloads
summary
