#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark's guest side (bench/run starts it through scripts/vm, one boot per driver):
# measures and prints one line "BENCH <json>" per figure, nothing else that matters. Not a
# test: it asserts nothing but that each measurement ran (a failed one prints "BENCH-ERROR").
#
# Figures (see Documentation/bench.rst):
#   tx      pktgen 64 B frames on queue 0 at bursts 1..64: pps (pktgen's own figure) and the
#           model's doorbells, MMIO reads and writes and interrupts per frame; on the Mikrotik
#           model also all 4 queues at once (aggregate pps)
#   rx      the peer floods eth0 (pktgen in its namespace) with 64 B and 1500 B frames: frames
#           the model delivered per second of the flood, frames it dropped for lack of RFDs,
#           MMIO reads/writes and interrupts per delivered frame
#   tcp     iperf3 each direction: Gbit/s and retransmits (MTU 1500; 9000 on Mikrotik)
#   memory  descriptor ring and rx buffer bytes per queue that the driver hands the card, at
#           MTU 1500 and the personality's jumbo MTU (the model reads them from the ring
#           geometry programmed: what the card may touch, not what the allocator rounds to)
#   profile atl1c_rs at pktgen burst 32: the top kernel symbols (perf, cpu-clock sampling: a
#           TCG guest has no hardware counters), all CPUs
#   rr      netperf TCP_RR transactions/s and ping RTT percentiles, for atl1c_rs at rx-usecs
#           0, 10, 50, 200, 400 and adaptive-rx; for the C driver at its fixed default
#
# BENCH_QUICK=1 (set by bench/run) takes one short pass of each; BENCH_QUICK=selftest only
# a short tx pass (bench/run --selftest, in make check).
set -u
source "$VM_LIB"
QUICK=${BENCH_QUICK:-0}
TX_COUNT=200000 RX_COUNT=100000 TCP_SECONDS=10 RR_SECONDS=10 PINGS=200
BURSTS="1 2 4 8 16 32 64"
RX_USECS="0 10 50 200 400"
if [ "$QUICK" != 0 ]; then
	TX_COUNT=20000 RX_COUNT=20000 TCP_SECONDS=3 RR_SECONDS=3 PINGS=50
	BURSTS="1 32"
	RX_USECS="10 200"
fi

remote ip link set peer0 promisc on
peer_mac=$(remote cat /sys/class/net/peer0/address)
dut_mac=$(cat /sys/class/net/eth0/address)
# Stop the stack from adding traffic of its own to the counters.
for c in /proc/sys/net/ipv6/conf/*/accept_ra /proc/sys/net/ipv6/conf/*/router_solicitations; do
	echo 0 >"$c" 2>/dev/null
done

emit() { echo "BENCH $1"; }
fail() { echo "BENCH-ERROR $*"; }

# The model's counters as one JSON object (the file is rewritten every 20 ms).
counters() {
	sleep 0.1
	jq -c '{t: .time_us, db: .doorbells, rd: .mmio_reads, wr: .mmio_writes, irq: .irqs,
		tx: .tx_frames, rx: .rx_frames, drop: .rx_dropped}' "$SIM_STATS"
}

pgset() { echo "$2" >"$1" || { echo "pktgen: '$2' rejected by $1" >&2; return 1; }; }

# pktgen on DEV (in namespace NS, or here): COUNT frames of SIZE bytes (with FCS) to DST.
# Each "DEV@Q" of QUEUES gets its own pktgen device pinned to tx queue Q, spread over the
# guest's pktgen threads (one per vCPU).
pktgen_setup() { # NS DEV SIZE COUNT BURST DSTIP DSTMAC QUEUES...
	local ns=$1 dev=$2 size=$3 count=$4 burst=$5 dst=$6 mac=$7 q t=0 d run=()
	shift 7
	[ -n "$ns" ] && run=(ip netns exec "$ns")
	"${run[@]}" bash -c 'for f in /proc/net/pktgen/kpktgend_*; do echo rem_device_all >$f; done'
	for q in "$@"; do
		d=$dev@$q
		"${run[@]}" bash -c "echo 'add_device $d' >/proc/net/pktgen/kpktgend_$t" || return 1
		"${run[@]}" bash -c "
			p=/proc/net/pktgen/$d
			for c in 'count $count' 'pkt_size $((size - 4))' 'burst $burst' 'delay 0' \
				'dst $dst' 'dst_mac $mac' 'queue_map_min $q' 'queue_map_max $q'; do
				echo \"\$c\" >\$p || { echo \"pktgen: \$c rejected\" >&2; exit 1; }
			done" || return 1
		t=$(((t + 1) % $(nproc)))
	done
}

# Sum of pktgen's own pps over the devices of the last run, and the longest run time (us).
pktgen_result() { # NS DEV QUEUES...
	local ns=$1 dev=$2 q run=()
	shift 2
	[ -n "$ns" ] && run=(ip netns exec "$ns")
	for q in "$@"; do
		"${run[@]}" cat "/proc/net/pktgen/$dev@$q"
	done | awk '/^Result: OK:/ { n++; gsub(/\(.*/, "", $3); if ($3 + 0 > us) us = $3 + 0 }
		{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+pps$/) { sub(/pps$/, "", $i); pps += $i } }
		/pkts-sofar:/ { sent += $2 }
		END { if (n == 0) exit 1; printf "{\"pps\": %d, \"usec\": %d, \"sent\": %d}\n", pps, us, sent }'
}

tx() { # BURST QUEUES...
	local burst=$1 c0 c1 res
	shift
	pktgen_setup "" eth0 64 "$TX_COUNT" "$burst" 192.0.2.2 "$peer_mac" "$@" || return 1
	c0=$(counters)
	pgset /proc/net/pktgen/pgctrl start || return 1
	c1=$(counters)
	res=$(pktgen_result "" eth0 "$@") || return 1
	emit "$(jq -nc --argjson a "$c0" --argjson b "$c1" --argjson r "$res" \
		--arg burst "$burst" --arg queues "$#" '
		($b.tx - $a.tx) as $n | {figure: "tx", burst: ($burst | tonumber),
		queues: ($queues | tonumber), pps: $r.pps, sent: $r.sent, frames: $n,
		doorbells_per_frame: ((($b.db | add) - ($a.db | add)) / $n),
		mmio_reads_per_frame: (($b.rd - $a.rd) / $n),
		mmio_writes_per_frame: (($b.wr - $a.wr) / $n),
		irqs_per_frame: (($b.irq - $a.irq) / $n)}')"
}

rx() { # SIZE
	local size=$1 c0 c1 res
	pktgen_setup remote peer0 "$size" "$RX_COUNT" 32 192.0.2.1 "$dut_mac" 0 || return 1
	c0=$(counters)
	remote bash -c 'echo start >/proc/net/pktgen/pgctrl' || return 1
	c1=$(counters)
	res=$(pktgen_result remote peer0 0) || return 1
	emit "$(jq -nc --argjson a "$c0" --argjson b "$c1" --argjson r "$res" --arg size "$size" '
		($b.rx - $a.rx) as $n | {figure: "rx", size: ($size | tonumber), sent: '"$RX_COUNT"',
		delivered: $n, dropped: ($b.drop - $a.drop), offered_pps: $r.pps,
		delivered_per_s: ($n * 1e6 / $r.usec),
		mmio_reads_per_frame: (if $n > 0 then ($b.rd - $a.rd) / $n else null end),
		mmio_writes_per_frame: (if $n > 0 then ($b.wr - $a.wr) / $n else null end),
		irqs_per_frame: (if $n > 0 then ($b.irq - $a.irq) / $n else null end)}')"
}

tcp() { # MTU REVERSE(0|1)
	local mtu=$1 rev=$2 out
	ip link set eth0 mtu "$mtu" && remote ip link set peer0 mtu "$mtu" || return 1
	link_up >/dev/null || return 1
	iperf_server >/dev/null || return 1
	out=$(iperf3 -c 192.0.2.2 -t "$TCP_SECONDS" -J $([ "$rev" = 1 ] && echo -R)) || return 1
	emit "$(echo "$out" | jq -c --arg mtu "$mtu" --arg rev "$rev" '{figure: "tcp",
		mtu: ($mtu | tonumber), direction: (if $rev == "1" then "peer->dut" else "dut->peer" end),
		gbit_s: (.end.sum_received.bits_per_second / 1e9),
		retransmits: (.end.sum_sent.retransmits // 0)}')"
}

rr() { # SETTING (a label: "default", "rx-usecs N", "adaptive-rx")
	local setting=$1 trans pings
	trans=$(netperf -H 192.0.2.2 -t TCP_RR -l "$RR_SECONDS" -P 0 -- -o THROUGHPUT 2>/dev/null |
		tail -1) || return 1
	pings=$(ping -c "$PINGS" -i 0.01 -W 2 192.0.2.2 | sed -n 's/.* time=\([0-9.]*\) ms/\1/p' |
		sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1;
			printf "{\"p50\": %s, \"p90\": %s, \"p99\": %s, \"n\": %d}",
			v[int(NR * 0.5 + 0.5)], v[int(NR * 0.9 + 0.5)], v[int(NR * 0.99 + 0.5)], NR }') ||
		return 1
	emit "$(jq -nc --arg s "$setting" --arg t "$trans" --argjson p "$pings" \
		'{figure: "rr", setting: $s, trans_per_s: ($t | tonumber), ping_ms: $p}')"
}

memory() { # MTU
	ip link set eth0 mtu "$1" || return 1
	link_up >/dev/null || return 1
	emit "$(jq -c --arg mtu "$1" '.rings | {figure: "memory", mtu: ($mtu | tonumber),
		queues, descriptor_bytes_per_queue, rx_buffer_bytes_per_queue}' "$SIM_STATS")"
}

profile() {
	local top
	command -v perf >/dev/null || { echo "no perf in the guest" >&2; return 1; }
	echo 0 >/proc/sys/kernel/kptr_restrict
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	pktgen_setup "" eth0 64 "$TX_COUNT" 32 192.0.2.2 "$peer_mac" 0 || return 1
	perf record -q -a -e cpu-clock -F 2000 -o /tmp/perf.data -- \
		bash -c 'echo start >/proc/net/pktgen/pgctrl' >/dev/null 2>&1 || return 1
	top=$(perf report -q -i /tmp/perf.data --stdio --sort sym --percent-limit 1 2>/dev/null |
		awk '$1 ~ /%$/ { pct = $1; sub(/%$/, "", pct); $1 = ""; $2 = "";
			sub(/^ +/, ""); printf "%s{\"pct\": %s, \"symbol\": \"%s\"}", sep, pct, $0; sep = "," }
			NR >= 25 { exit }')
	[ -n "$top" ] || return 1
	emit "{\"figure\": \"profile\", \"burst\": 32, \"top\": [$top]}"
}

measure() { # what: runs "$@", says so if it failed
	"$@" || fail "$*"
}

if [ "$QUICK" = selftest ]; then
	measure tx 32 0
	echo "BENCH-DONE"
	exit 0
fi
queues=1
[ "$PERSONALITY" = mikrotik ] && queues=4
for b in $BURSTS; do
	measure tx "$b" 0
done
[ "$queues" = 4 ] && measure tx 32 0 1 2 3
[ "$DRIVER" = atl1c_rs ] && measure profile

measure rx 64
measure rx 1500

mtus=1500
[ "$PERSONALITY" = mikrotik ] && mtus="1500 9000"
for m in $mtus; do
	measure tcp "$m" 0
	measure tcp "$m" 1
done
jumbo=9000
[ "$PERSONALITY" = ar8151 ] && jumbo=6000 # the AR8151's jumbo limit is 6 KiB frames
measure memory 1500
measure memory "$jumbo"
ip link set eth0 mtu 1500
remote ip link set peer0 mtu 1500
link_up >/dev/null

remote netserver >/dev/null 2>&1
if [ "$DRIVER" = atl1c_rs ]; then
	for u in $RX_USECS; do
		ethtool -C eth0 adaptive-rx off rx-usecs "$u" && measure rr "rx-usecs $u"
	done
	ethtool -C eth0 adaptive-rx on && measure rr "adaptive-rx"
else
	measure rr default
fi
echo "BENCH-DONE"
