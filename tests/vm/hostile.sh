#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A hostile card (SIM_CONTROL faults, Documentation/sim.rst): RRDs of random words, an RRD
# length beyond its buffer, frames flagged with CRC errors, a TPD consumer index outside the
# ring, lost interrupts, and last a surprise removal. For each: the bad input is dropped and
# counted, nothing in the kernel log, no busy loop, recovery by reset where the C driver would
# reset, traffic afterwards; after the removal, rmmod in under 10 s.
#
# FUZZ (default 1000) sets how many RRDs are fuzzed, for a longer run that sources this one.
set -u
source "$VM_LIB"

FUZZ=${FUZZ:-1000}

# rx packets + rx errors of eth0, and the model's rx_frames, at rest.
rx_counts() {
	local i a b
	for i in $(seq 20); do
		a="$(ip -s -j link show eth0 | jq -c '.[0].stats64.rx | [.packets, .errors]') $(sim rx_frames)"
		sleep 0.3
		b="$(ip -s -j link show eth0 | jq -c '.[0].stats64.rx | [.packets, .errors]') $(sim rx_frames)"
		[ "$a" = "$b" ] && break
	done
	echo "$b" | tr -d '[]' | tr ',' ' '
}

# Every frame the card returned is either passed up or counted as an error: frames whose
# RRD the driver cannot trust never reach the stack uncounted.
accounted() { # BEFORE AFTER (rx_counts outputs)
	python3 - "$1" "$2" <<'PY'
import sys
(p0, e0, s0), (p1, e1, s1) = (map(int, a.split()) for a in sys.argv[1:3])
print(f"= card returned {s1 - s0}; driver passed up {p1 - p0}, counted as errors {e1 - e0}")
sys.exit(0 if s1 - s0 == (p1 - p0) + (e1 - e0) else 1)
PY
}

rrd_fuzz() {
	local before after n=0
	before=$(rx_counts)
	# Every frame the card receives now is fuzzed, ARP replies too: the peer must not need
	# one to keep sending.
	remote ip neigh replace 192.0.2.1 lladdr "$(cat /sys/class/net/eth0/address)" dev peer0 nud permanent
	sim_control "rrd fuzz $FUZZ 12345"
	sleep 0.2
	# Frames from the peer until every fuzzed RRD has been written.
	while [ "$(sim faults.rrd_fuzz)" = null ] || [ "$(sim faults.rrd_fuzz)" -lt "$FUZZ" ]; do
		remote ping -f -c 500 -W 1 -q 192.0.2.1 >/dev/null 2>&1
		n=$((n + 1))
		[ $n -le $((FUZZ / 100 + 10)) ] || { echo "only $(sim faults.rrd_fuzz) RRDs fuzzed"; return 1; }
	done
	remote ip neigh del 192.0.2.1 dev peer0
	echo "= rrd_fuzz: $(sim faults.rrd_fuzz) descriptors"
	ping_resumes || return 1
	after=$(rx_counts)
	accounted "$before" "$after" || return 1
	if [ "$DRIVER" = atl1c_rs ]; then
		ethtool -S eth0 | grep -E '^ +(rx_bad_rrd|rx0_errors): ' | sed 's/^ */= /'
	fi
}

# An rx fault: armed, then COUNT pings from the peer at INTERVAL until the model has applied
# it N times; traffic must resume and every frame be accounted. RX_BEFORE and RX_AFTER keep
# the rx_counts around it.
rx_fault() { # COMMAND KEY N COUNT INTERVAL
	RX_BEFORE=$(rx_counts)
	sim_control "$1"
	sleep 0.2
	remote ping -c "$4" -i "$5" -W 1 -q 192.0.2.1 >/dev/null 2>&1
	sim_at_least "faults.$2" 50 "$3" || return 1
	ping_resumes || return 1
	RX_AFTER=$(rx_counts)
	accounted "$RX_BEFORE" "$RX_AFTER"
}

rrd_oversize() {
	rx_fault "rrd oversize" rrd_oversize 1 3 0.2
}

rx_error() {
	rx_fault "rx error 5" rx_error 5 10 0.1 || return 1
	# The five error frames are errors, not packets.
	python3 -c "import sys; e0, e1 = int(sys.argv[1]), int(sys.argv[2]); print(f'= rx errors +{e1 - e0}'); sys.exit(e1 - e0 < 5)" \
		"$(echo "$RX_BEFORE" | cut -d' ' -f2)" "$(echo "$RX_AFTER" | cut -d' ' -f2)"
}

# The TPD consumer index reads back 0xffff (a card that rebooted under the driver; the C
# driver's soft lockup of 2026): nothing completes, the queue stops, the watchdog resets.
tx_cidx() {
	sim_control "tx cidx 0xffff"
	sleep 0.2
	ping -c 3 -i 0.2 -W 1 -q 192.0.2.2 >/dev/null 2>&1
	sim_at_least faults.tx_cidx 50 1 || return 1
	watchdog_fires || return 1
	ping_resumes || return 1
	echo "= tx_cidx reads served: $(sim faults.tx_cidx)"
	no_kernel_report
}

irq_lose() {
	sim_control "irq lose 3"
	sleep 0.2
	ping_resumes || return 1
	sim_at_least faults.irq_lost 50 3 || return 1
	echo "= interrupts lost: $(sim faults.irq_lost), retriggers: $(sim irq_retriggers)"
}

# Surprise removal, last: the card is gone for good. The driver must notice (all-ones reads),
# take the interface down without a report, keep its counters sane, and let rmmod complete
# in under 10 s.
surprise_removal() {
	local i st
	sim_control "surprise removal"
	sim_at_least faults.surprise_removal 50 1 || return 1
	# Traffic and a statistics read: either makes the driver read the card.
	ping -c 3 -i 0.2 -W 1 -q 192.0.2.2 >/dev/null 2>&1
	for i in $(seq 150); do
		ip -s link show eth0 >/dev/null
		[ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" = 1 ] || break
		sleep 0.1
	done
	[ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" != 1 ] || { echo "carrier still on"; return 1; }
	dmesg | grep -E 'atl1c' | tail -3
	# All-ones MAC counters must not have been added to the statistics.
	st=$(ip -s -j link show eth0 | jq -c '.[0].stats64 | [.rx.packets, .tx.packets, .rx.errors, .rx.dropped]')
	echo "= after removal: rx/tx packets, rx errors, rx dropped: $st"
	echo "$st" | jq -e 'all(. < 4294967295)' >/dev/null || { echo "all-ones counted"; return 1; }
	no_kernel_report
}

unloads_fast() {
	local start
	start=$(date +%s)
	driver_removed || return 1
	echo "= ip link set down + rmmod: $(($(date +%s) - start)) s"
	[ $(($(date +%s) - start)) -lt 10 ] || { echo "took 10 s or more"; return 1; }
	[ "$(sim control_errors)" = 0 ] || { echo "the model did not understand a command"; return 1; }
	echo "= faults: $(sim faults)"
	kmemleak_scan
}

check "rrd fuzz $FUZZ: every frame passed up or counted, traffic resumes" rrd_fuzz
check "rrd oversize: dropped and counted, traffic resumes" rrd_oversize
check "rx error 5: counted as errors, traffic resumes" rx_error
check "tx cidx 0xffff: no busy loop, the watchdog resets, traffic resumes" tx_cidx
check "irq lose 3: the retrigger brings them back, traffic resumes" irq_lose
check "no oops, warning or lockdep report" no_kernel_report
check "surprise removal: carrier off, no all-ones counts, no report" surprise_removal
check "ip link set down and rmmod in under 10 s; every command understood; no leak" unloads_fast
summary
