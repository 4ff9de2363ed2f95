#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The short scenario: the driver probes the card, links at the personality's speed, passes
# traffic both ways, and unloads cleanly. For a module built elsewhere (DKMS, a user's build):
# ATL1C_RS_KO=atl1c_rs.ko scripts/vm --kernel debian tests/vm/probe.sh
set -u
source "$VM_LIB"

speed() {
	local want=1000Mb/s
	[ "$PERSONALITY" = mikrotik ] && want=10000Mb/s
	ethtool eth0 | grep -E 'Speed|Duplex'
	ethtool eth0 | grep -q "Speed: $want" || { echo "expected Speed: $want"; return 1; }
}

echo "= $(uname -r): $(dmesg | grep -E "$DRIVER[ :]" | grep -vE 'taint|verification' | head -3 | tr '\n' ' ')"
check "probe: eth0 is the card, bound to $DRIVER" dut_probed
check "link up" link_up
check "ethtool eth0 speed ($PERSONALITY)" speed
check "ping IPv4 DUT -> peer" ping_ok ping -c 20 -i 0.05 -W 2 192.0.2.2
check "ping IPv6 peer -> DUT" ping_ok remote ping -6 -c 20 -i 0.05 -W 2 2001:db8::1
check "rmmod $DRIVER leaves no net_device behind" driver_unloads
summary
