#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo's scenario: the driver's log, ethtool, ping, iperf3, a pktgen burst, counters.
set -u
source "$VM_LIB"
stat() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$SIM_STATS" "$1"; }
echo "== $DRIVER on the simulated $PERSONALITY card"
dmesg | grep -E "atl1c_rs" | grep -v "Subtest\|# \|ok [0-9]" | sed 's/^/  /'
echo "== ethtool eth0"
ethtool eth0 | grep -E "Speed|Duplex|Link detected|Auto-neg" | sed 's/^\t/  /'
ethtool -k eth0 | grep -E "^(rx-checksumming|tx-checksumming|scatter-gather|tcp-segmentation-offload):" | sed 's/^/  /'
echo "== ping the peer (IPv4, IPv6)"
ping -c 20 -i 0.05 -q 192.0.2.2 | tail -2 | sed 's/^/  /'
ping -6 -c 20 -i 0.05 -q 2001:db8::2 | tail -2 | sed 's/^/  /'
echo "== iperf3 TCP, 5 s each way"
for dir in "" -R; do
	iperf_server || exit 1
	iperf3 -c 192.0.2.2 -t 5 $dir | grep -E "receiver" | sed "s/^/  ${dir:-  } /"
done
echo "== pktgen: 50000 x 64 B frames, burst 32 (xmit_more)"
remote ip link set peer0 promisc on
d0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["doorbells"][0])' "$SIM_STATS")
echo "rem_device_all" >/proc/net/pktgen/kpktgend_0
echo "add_device eth0" >/proc/net/pktgen/kpktgend_0
for c in "count 50000" "pkt_size 60" "burst 32" "delay 0" "dst 192.0.2.2" \
	"dst_mac $(remote cat /sys/class/net/peer0/address)" "queue_map_min 0" "queue_map_max 0"; do
	echo "$c" >/proc/net/pktgen/eth0
done
echo start >/proc/net/pktgen/pgctrl
sleep 0.3
d1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["doorbells"][0])' "$SIM_STATS")
grep -E "^Result" /proc/net/pktgen/eth0 | sed 's/^/  /'
echo "  doorbells rung for 50000 frames: $((d1 - d0))"
echo "== ip -s link show eth0"
ip -s link show eth0 | sed 's/^/  /'
echo "== device model counters"
sleep 0.2
python3 - "$SIM_STATS" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for k in ("mmio_reads", "mmio_writes", "irqs", "doorbells", "tx_frames", "rx_frames",
          "rx_dropped", "tso_frames", "csum_inserted", "rx_l4_csum_good", "protocol_errors"):
    print(f"  {k:>16}: {s.get(k)}")
PY
