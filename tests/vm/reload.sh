#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmmod and insmod, RELOADS times (default 3), each rmmod while pktgen transmits through the
# card and the peer floods it: rmmod must complete (pktgen lets go of the device when it is
# unregistered), the module must probe again, and traffic must resume; at the end, no leak
# (kmemleak, test kernel) and nothing in the kernel log.
set -u
source "$VM_LIB"

RELOADS=${RELOADS:-3}

# pktgen on eth0 without end (count 0), in the background.
pktgen_start() {
	local peer_mac
	peer_mac=$(remote cat /sys/class/net/peer0/address)
	echo "rem_device_all" >/proc/net/pktgen/kpktgend_0
	echo "add_device eth0" >/proc/net/pktgen/kpktgend_0 || return 1
	echo "count 0" >/proc/net/pktgen/eth0
	echo "pkt_size 60" >/proc/net/pktgen/eth0
	echo "delay 100000" >/proc/net/pktgen/eth0
	echo "dst 192.0.2.2" >/proc/net/pktgen/eth0
	echo "dst_mac $peer_mac" >/proc/net/pktgen/eth0
	echo "start" >/proc/net/pktgen/pgctrl &
	PKTGEN=$!
}


reloads() {
	local i j
	for i in $(seq "$RELOADS"); do
		flood_start
		pktgen_start || return 1
		# rmmod only once pktgen is sending through the card.
		for j in $(seq 100); do
			grep -q 'pkts-sofar: [1-9]' /proc/net/pktgen/eth0 2>/dev/null && break
			sleep 0.1
		done
		grep -q 'pkts-sofar: [1-9]' /proc/net/pktgen/eth0 || { echo "pktgen sends nothing"; return 1; }
		completes 30 rmmod "$DRIVER" || { flood_stop; return 1; }
		flood_stop
		echo stop >/proc/net/pktgen/pgctrl
		for j in $(seq 100); do
			kill -0 $PKTGEN 2>/dev/null || break
			sleep 0.1
		done
		kill -0 $PKTGEN 2>/dev/null && { echo "pktgen did not stop"; return 1; }
		wait $PKTGEN 2>/dev/null
		driver_loads || return 1
		ping_resumes >/dev/null || { echo "no traffic after reload $i"; return 1; }
	done
	echo "= $RELOADS rmmod (under pktgen and a flood) and insmod"
	ping_resumes
}

# A station address set with ip link does not outlive the driver: rmmod gives the card back
# its own (atl1c_remove does the same), and the next probe finds it.
perm_mac_restored() {
	local perm
	perm=$(cat /sys/class/net/eth0/address)
	ip link set eth0 address 02:00:5e:10:20:30 || return 1
	completes 30 rmmod "$DRIVER" || return 1
	driver_loads || return 1
	echo "= $perm, then 02:00:5e:10:20:30, then after rmmod and insmod $(cat /sys/class/net/eth0/address)"
	[ "$(cat /sys/class/net/eth0/address)" = "$perm" ] || return 1
	ping_resumes
}

unloads() {
	driver_removed && kmemleak_scan
}

check "rmmod under pktgen and insmod, $RELOADS times: traffic resumes" reloads
check "rmmod restores the card's own station address" perm_mac_restored
check "rmmod at the end: no leak" unloads
check "no report in the kernel log" no_kernel_report
summary
