#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Doorbell batching (xmit_more + BQL), counted by the device model: pktgen sends COUNT
# 64-byte frames (60 + FCS) on tx queue 0 with a given burst; the model counts tx producer
# index writes. burst 1 -> one doorbell per frame; burst 32 -> at most 1/32 + 1% per frame;
# a burst larger than the ring (nothing may be held back or lost when the queue stops).
# Every frame must reach the peer. Usage in the guest via scripts/vm; COUNT defaults to 100000.
set -u
source "$VM_LIB"
COUNT=${COUNT:-100000}
remote ip link set peer0 promisc on
peer_mac=$(remote cat /sys/class/net/peer0/address)

pgset() { echo "$2" >"$1" || { echo "pktgen: '$2' rejected by $1"; return 1; }; }

stat() { # KEY: the model's counter (doorbells: queue 0)
	sim_jq "if (.$1 | type) == \"array\" then .$1[0] else .$1 end"
}

peer_rx() { remote cat /sys/class/net/peer0/statistics/rx_packets; }

run() { # BURST MAXRATIO(doorbells per frame, as a python expression) NAME [MINRATIO]
	# MINRATIO: doorbells per frame pktgen sent, at least (background frames the qdisc
	# dequeues together may share one: only pktgen's are counted).
	local burst=$1 max=$2 name=$3 min=${4:-0} d0 t0 p0 d1 t1 p1 res
	VM_CHECKS=$((VM_CHECKS + 1))
	pgset /proc/net/pktgen/kpktgend_0 "rem_device_all"
	pgset /proc/net/pktgen/kpktgend_0 "add_device eth0"
	local dev=/proc/net/pktgen/eth0
	pgset $dev "count $COUNT"
	pgset $dev "pkt_size 60"
	pgset $dev "burst $burst"
	pgset $dev "delay 0"
	pgset $dev "dst 192.0.2.2"
	pgset $dev "dst_mac $peer_mac"
	pgset $dev "queue_map_min 0"
	pgset $dev "queue_map_max 0"
	sleep 0.3
	d0=$(stat doorbells) t0=$(stat tx_frames) p0=$(peer_rx)
	pgset /proc/net/pktgen/pgctrl "start"
	sleep 0.3
	d1=$(stat doorbells) t1=$(stat tx_frames)
	# The peer (a virtio NIC in the same slow guest) lags: wait until it stops receiving.
	local last=-1 i
	for i in $(seq 120); do
		p1=$(peer_rx)
		[ "$p1" = "$last" ] && break
		last=$p1
		sleep 0.5
	done
	res=$(grep -E "^Result" $dev)
	if python3 - "$COUNT" "$((d1 - d0))" "$((t1 - t0))" "$((p1 - p0))" "$max" "$res" "$min" <<'PY'; then
import sys
count, db, tx, peer = map(int, sys.argv[1:5])
limit = eval(sys.argv[5])
res = sys.argv[6]
floor = eval(sys.argv[7])
print(f"#   {res}")
print(f"#   frames sent by the card {tx}, reached the peer {peer}, doorbells {db} "
      f"({db / count:.4f} per frame, limit {limit:.4f})")
ok = res.startswith(f"Result: OK") and tx >= count and peer >= count and db <= limit * count + 0.5
ok = ok and db >= 1 and db >= floor * count
if floor:
    print(f"#   at least {floor} doorbell per frame pktgen sent: {db} for {count}")
sys.exit(0 if ok else 1)
PY
		echo "ok $VM_CHECKS - $name"
	else
		VM_FAILED=$((VM_FAILED + 1))
		echo "not ok $VM_CHECKS - $name"
	fi
}

run 1 "1 + 0.01" "pktgen burst 1: one doorbell per frame" 1
run 32 "1 / 32 + 0.01" "pktgen burst 32: at most 1/32 + 1% doorbells per frame"
run 2048 "1 / 32 + 0.01" "pktgen burst 2048 > ring: nothing held back, nothing lost"
summary
