#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# System sleep: the driver's suspend and resume (dev_pm_ops) through the kernel's own suspend
# test, with traffic before and after, and Wake-on-LAN (magic packet, link change); last, the
# driver loaded again, a power-off with Wake-on-LAN armed (.shutdown).
# `pm_test` "platform" runs every phase a real suspend runs up to the platform's own (the PCI
# core saves the card's state and puts it in D3hot, where the model forgets every register),
# waits, and resumes. s2idle ("freeze") is the sleep state every QEMU guest has. Needs
# CONFIG_PM_DEBUG (both kernels have it). Run it with VM_SLEEP=1 (Documentation/vm.rst).
set -u
source "$VM_LIB"

BDF=$(basename "$(readlink -f /sys/class/net/eth0/device)")

# One sleep: the card must go to D3hot and come back through the reset of D3hot -> D0.
sleep_cycle() {
	local d0 r0
	d0=$(sim pm.d3_entries)
	r0=$(sim pm.resets)
	echo platform >/sys/power/pm_test || return 1
	echo 2 >/sys/module/suspend/parameters/pm_test_delay
	echo freeze >/sys/power/state || { echo "suspend failed"; dmesg | tail -20; return 1; }
	sim_at_least pm.d3_entries 50 $((d0 + 1)) || return 1
	sim_at_least pm.resets 50 $((r0 + 1)) || return 1
	echo "= pm_d3_entries $d0 -> $(sim pm.d3_entries), pm_resets $r0 -> $(sim pm.resets)"
}

# Nothing touched the card's registers while it slept (they read all-ones in D3hot).
quiet_in_d3() {
	local e
	e=$(sim 'protocol_errors.mmio_in_d3 // 0')
	[ "$e" = 0 ] || { echo "$e register accesses in D3hot"; return 1; }
}

# IPv4 both ways (an interface set down loses its static IPv6 address: keep_addr_on_down).
traffic() {
	link_up || return 1
	ping_resumes || return 1
	ping_ok remote ping -c 20 -i 0.05 -W 2 192.0.2.1
}

wol_off() {
	ethtool -s eth0 wol d || return 1
	ethtool eth0 | grep -q 'Wake-on: d'
}

# Armed for a magic packet: the PCI core enables PME (the device may wake), the card keeps its
# receiver on; the model delivers a magic packet 100 ms after the card enters D3hot.
wol_magic_wakes() {
	local w0
	ethtool -s eth0 wol g || return 1
	ethtool eth0 | grep -q 'Wake-on: g' || { echo "Wake-on not g"; return 1; }
	grep -qx enabled "/sys/bus/pci/devices/$BDF/power/wakeup" ||
		{ echo "PCI wakeup: $(cat "/sys/bus/pci/devices/$BDF/power/wakeup")"; return 1; }
	w0=$(sim pm.wol_wake_by.magic)
	sim_control "wake magic"
	sleep_cycle || return 1
	sim_at_least pm.wol_wake_by.magic 20 $((w0 + 1)) || return 1
	echo "= magic-packet wakes $w0 -> $(sim pm.wol_wake_by.magic), pme $(sim pm.pme)"
	[ "$(sim pm.pme)" -ge 1 ] || { echo "the wake did not set PME_Status"; return 1; }
}

# Armed for a link change (WoL p): the model takes the cable out and puts it back while the
# card sleeps; the link coming up wakes it (the PHY stays powered for it on AR8151).
wol_link_wakes() {
	local w0 p0
	ethtool -s eth0 wol p || return 1
	ethtool eth0 | grep -q 'Wake-on: p' || { echo "Wake-on not p"; return 1; }
	w0=$(sim pm.wol_wake_by.link_change)
	p0=$(sim pm.pme)
	sim_control "wake link"
	sleep_cycle || return 1
	sim_at_least pm.wol_wake_by.link_change 20 $((w0 + 1)) || return 1
	[ "$(sim pm.pme)" -gt "$p0" ] || { echo "the wake did not set PME_Status"; return 1; }
	echo "= link-change wakes $w0 -> $(sim pm.wol_wake_by.link_change)"
}

# Without Wake-on-LAN a magic packet finds nothing armed (and on AR8151 the PHY is down).
wol_off_sleeps() {
	local w0 p0
	wol_off || return 1
	w0=$(sim pm.wol_wake)
	p0=$(sim phy_power_downs)
	sim_control "wake magic"
	sleep_cycle || return 1
	nap 0.5
	[ "$(sim pm.wol_wake)" = "$w0" ] || { echo "woke without Wake-on-LAN"; return 1; }
	if [ "$PERSONALITY" = ar8151 ]; then
		[ "$(sim phy_power_downs)" -gt "$p0" ] || { echo "the PHY stayed powered"; return 1; }
	fi
}

down_sleep_up() {
	ip link set eth0 down || return 1
	sleep_cycle || return 1
	ip link set eth0 up || return 1
	traffic
}

check "link up, traffic before sleep" traffic
check "sleep (pm_test platform): D3hot and back" sleep_cycle
check "traffic after resume" traffic
check "no register access in D3hot" quiet_in_d3
check "Wake-on-LAN off: sleeps without a wake" wol_off_sleeps
check "traffic after resume (WoL off)" traffic
check "Wake-on-LAN g: a magic packet wakes the card" wol_magic_wakes
check "traffic after resume (WoL g)" traffic
check "Wake-on-LAN p: the link coming back wakes the card" wol_link_wakes
check "traffic after resume (WoL p)" traffic
check "sleep with the interface down, then up" down_sleep_up
check "no register access in D3hot (all cycles)" quiet_in_d3
# Power-off with Wake-on-LAN g armed, the driver loaded again: its .shutdown arms the magic
# packet and the card goes to D3hot with PME enabled. Only the model can tell once the guest
# has ended: scripts/vm checks /job/at-exit against its last counters (Documentation/vm.rst).
poweroff_armed() {
	driver_loads || return 1
	ethtool -s eth0 wol g || return 1
	ethtool eth0 | grep -q 'Wake-on: g' || { echo "Wake-on not g"; return 1; }
	[ -d /sys/firmware/acpi ] || { echo "no ACPI: the guest cannot power off"; return 1; }
	printf '%s\n' '.pm.power_state == 3' '.pm.pme_enabled' '.pm.wake_armed.magic' >/job/at-exit
	: >/job/poweroff
	echo "= at exit (scripts/vm checks): $(paste -sd, /job/at-exit)"
}

check "kernel log clean" kernel_log_clean
check "rmmod $DRIVER leaves no net_device behind" driver_unloads
check "power-off armed for a magic packet (checked after the guest ends)" poweroff_armed
summary
