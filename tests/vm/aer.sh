#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PCI error recovery: uncorrectable errors injected with aer_inject (CONFIG_PCIEAER_INJECT)
# as the root port above the card would report them, recovered by the driver's
# pci_error_handlers with traffic before and after.
# - non-fatal (Completion Timeout): error_detected(normal);
# - fatal (Malformed TLP): error_detected(frozen);
# then, as the driver asks for a reset (and 7.2 resets for both), the port's secondary bus
# reset (the model's function reset: registers and configuration space at their power-on
# values, SIM_STATS pci.resets; the PCI core leaves restoring the state to the driver),
# slot_reset, resume.
# Needs the card behind a PCIe root port with AER: run it with VM_PCIE_PORT=1
# (Documentation/vm.rst).
set -u
source "$VM_LIB"

BDF=$(basename "$(readlink -f /sys/class/net/eth0/device)")
PCI_ERR_UNC_COMP_TIME=$((1 << 14))
PCI_ERR_UNC_MALF_TLP=$((1 << 18))

# Writes one struct aer_error_inj (drivers/pci/pcie/aer_inject.c) for the card.
aer_inject() { # UNCOR_STATUS
	python3 - "$BDF" "$1" <<'PY'
import os, struct, sys
dom, bus, devfn = sys.argv[1].split(":")
dev, fn = devfn.split(".")
einj = struct.pack("<BBBxIIIIIIi", int(bus, 16), int(dev, 16), int(fn, 16),
                   int(sys.argv[2]), 0, 0, 0, 0, 0, int(dom, 16))
fd = os.open("/dev/aer_inject", os.O_WRONLY)
os.write(fd, einj)
os.close(fd)
PY
}

recovered() { dmesg | grep -c "AER: device recovery successful"; }

aer_ready() {
	# Debian's module, or the test kernel's from /job/kmod (Documentation/vm.rst).
	modprobe aer_inject 2>/dev/null || insmod /job/kmod/aer_inject.ko || return 1
	[ -c /dev/aer_inject ] || { echo "no /dev/aer_inject"; return 1; }
	# The card's AER capability (the model's, at 0x100) and the port's AER service.
	[ -n "$(setpci -s "$BDF" ECAP_AER+0.l)" ] || { echo "no AER capability"; return 1; }
	ls /sys/bus/pci_express/devices/ | grep -q ':pcie002$' || { echo "no AER port service"; return 1; }
}

traffic() {
	link_up || return 1
	ping_resumes || return 1
	ping_ok remote ping -c 20 -i 0.05 -W 2 192.0.2.1
}

# One injected error, recovered; the reset count of the function goes up by $2.
inject_recovers() { # UNCOR_STATUS RESETS
	local r0 n0 i
	r0=$(sim pci.resets)
	n0=$(recovered)
	aer_inject "$1" || return 1
	for ((i = 0; i < 100; i++)); do
		[ "$(recovered)" -gt "$n0" ] && break
		nap 0.1
	done
	[ "$(recovered)" -gt "$n0" ] || { dmesg | grep -i -e aer -e "$BDF" | tail -15; return 1; }
	[ "$(sim pci.resets)" = $((r0 + $2)) ] ||
		{ echo "function resets $r0 -> $(sim pci.resets), want +$2"; return 1; }
	echo "= function resets $r0 -> $(sim pci.resets)"
}

down_fatal_up() {
	ip link set eth0 down || return 1
	inject_recovers "$PCI_ERR_UNC_MALF_TLP" 1 || return 1
	ip link set eth0 up || return 1
	traffic
}

check "aer_inject, the card's AER capability, the port's AER service" aer_ready
check "link up, traffic before" traffic
check "non-fatal error (Completion Timeout) recovered through a bus reset" \
	inject_recovers "$PCI_ERR_UNC_COMP_TIME" 1
check "traffic after the non-fatal error" traffic
check "fatal error (Malformed TLP) recovered through a bus reset" \
	inject_recovers "$PCI_ERR_UNC_MALF_TLP" 1
check "traffic after the fatal error" traffic
check "fatal error with the interface down, then up" down_fatal_up
check "a second fatal error recovered" inject_recovers "$PCI_ERR_UNC_MALF_TLP" 1
check "traffic after the second fatal error" traffic
# aer_inject replaced the bus's config accessors with its own, which take a spinlock_t; the
# MSI teardown of free_irq reads config space under the raw irq_desc lock, and lockdep
# reports that nesting ("Invalid wait context": aer_inject's, a real one on PREEMPT_RT).
# Unloading it puts the bus's own accessors back before the driver is removed.
check "aer_inject unloaded" rmmod aer_inject
check "kernel log clean" kernel_log_clean
check "rmmod $DRIVER leaves no net_device behind" driver_unloads
summary
