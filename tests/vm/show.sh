#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Show the driver on the simulated card (used by make demo and for reports): the driver's
# kernel log from probe to link up, ethtool, ping and iperf3 summaries, interface and model
# counters. Fails if the link does not come up or traffic does not pass.
set -u
source "$VM_LIB"
echo "== dmesg: $DRIVER from probe to link up"
dmesg | grep -iE "$DRIVER|eth0|1969:1083|0000:00:05.0" | grep -v "renamed from"
echo "== ethtool eth0"
ethtool eth0 || exit 1
echo "== ping 192.0.2.2 (IPv4) and 2001:db8::2 (IPv6), 50 packets each"
ping -c 50 -i 0.02 -q 192.0.2.2 | tail -2 || exit 1
ping -6 -c 50 -i 0.02 -q 2001:db8::2 | tail -2 || exit 1
for dir in "" -R; do
	if [ -n "$dir" ]; then echo "== iperf3 TCP 5 s, peer -> DUT"; else echo "== iperf3 TCP 5 s, DUT -> peer"; fi
	iperf_server || exit 1
	iperf3 -c 192.0.2.2 -t 5 $dir | grep -E "sender|receiver" || exit 1
done
echo "== ip -s link show eth0"
ip -s link show eth0
echo "== device model counters ($SIM_STATS)"
sleep 0.2
python3 - "$SIM_STATS" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for k in ("personality", "mmio_reads", "mmio_writes", "irqs", "doorbells", "tx_frames",
          "rx_frames", "rx_dropped", "rx_filtered", "tso_frames", "csum_inserted",
          "rx_l4_csum_good", "wire_tx_dropped", "protocol_errors"):
    print(f"{k:>16}: {s.get(k)}")
PY
