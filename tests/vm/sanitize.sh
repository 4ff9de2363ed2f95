#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The sanitizer tier (the test kernel: KASAN, kmemleak, DMA-API debugging, UBSAN, lockdep,
# fault injection): traffic both ways, down/up and MTU changes under traffic, then allocation
# failures injected into the driver's own calls (failslab and fail_page_alloc, limited to
# stacks through the driver's code) at open (at random; with every NAPI thread failing; with
# SWEEP=1 each slab allocation in turn), at rx refill and at xmit. Each must fail cleanly:
# open returns an error and leaves the interface down, a refill that fails is counted
# (netdev qstats rx-alloc-fail) and retried, and xmit, which allocates nothing, sends on;
# traffic resumes once the injection stops. Last, rmmod: no DMA mapping left behind, no
# leak (kmemleak).
#
# ROUNDS (default 3) sets the down/up and MTU rounds, for a longer run that sources this one;
# SWEEP=1 adds the sweep of every slab allocation in ndo_open (make soak).
set -u
source "$VM_LIB"

ROUNDS=${ROUNDS:-3}
SWEEP=${SWEEP:-0}
case $PERSONALITY in
mikrotik) JUMBO=9000 ;;
*) JUMBO=4000 ;;
esac

# Rx refills that failed, every queue (netdev qstats, device scope).
rx_alloc_fail() {
	netdev_qstats | jq '.dev["rx-alloc-fail"] // 0'
}

sum_stat() { # PATTERN: the sum of the ethtool -S counters matching it
	ethtool -S eth0 | awk -v p="$1" '$1 ~ p { s += $2 } END { print s + 0 }'
}

traffic() {
	ping_ok ping -c 20 -i 0.05 -W 2 192.0.2.2 || return 1
	iperf_server
	iperf3 -c 192.0.2.2 -t 2 -J >/tmp/iperf-tx.json || return 1
	iperf_server
	iperf3 -c 192.0.2.2 -t 2 -R -J >/tmp/iperf-rx.json || return 1
	echo "= iperf3 tx $(jq '.end.sum_received.bytes' /tmp/iperf-tx.json) bytes," \
		"rx $(jq '.end.sum_received.bytes' /tmp/iperf-rx.json) bytes"
}

# The peer floods the DUT while the DUT goes down and up and changes its MTU, with adaptive rx
# moderation turned on and off (DIM's lock: NAPI samples, ethtool restarts, stop cancels).
lifecycle() {
	local i rc=0 dim
	flood_start
	for i in $(seq "$ROUNDS"); do
		dim=off
		[ $((i % 2)) = 1 ] && dim=on
		completes 30 ethtool -C eth0 adaptive-rx $dim || rc=1
		completes 30 ip link set eth0 down || rc=1
		completes 30 ip link set eth0 up || rc=1
		link_up || rc=1
		completes 30 ip link set eth0 mtu "$JUMBO" || rc=1
		link_up || rc=1
		completes 30 ip link set eth0 mtu 1500 || rc=1
		link_up || rc=1
		[ $rc -eq 0 ] || break
	done
	flood_stop
	ethtool -C eth0 adaptive-rx off || rc=1
	[ $rc -eq 0 ] || return 1
	echo "= $ROUNDS rounds of down/up, MTU 1500/$JUMBO and adaptive-rx on/off under a flood"
	ping_resumes
}

# Every allocation made through ndo_open fails: open must return an error and leave nothing
# behind. Then a third of them, many times over: each open succeeds or fails whole.
open_fails() {
	local i ok=0 failed=0
	ip link set eth0 down
	inject_start failslab 100 || return 1
	if ip link set eth0 up 2>/tmp/up.err; then
		inject_stop failslab
		echo "open succeeded with every allocation failing"
		return 1
	fi
	inject_stop failslab
	echo "= ip link set up: $(cat /tmp/up.err)"
	[ "$(cat /sys/class/net/eth0/operstate)" = down ] || { echo "eth0 not down after a failed open"; return 1; }
	for i in $(seq 10); do
		inject_start failslab 30 && inject_start fail_page_alloc 30 || return 1
		if ip link set eth0 up 2>/dev/null; then ok=$((ok + 1)); else failed=$((failed + 1)); fi
		inject_stop fail_page_alloc >/dev/null
		inject_stop failslab >/dev/null
		ip link set eth0 down
	done
	echo "= 10 opens with 30% of allocations failing: $ok succeeded, $failed failed"
	ip link set eth0 up || return 1
	link_up || return 1
	ping_resumes
}

# Threaded NAPI on (the user's choice), its threads cannot be made: every allocation under
# the core's napi_kthread_create fails while the interface comes up. Open fails with ENOMEM
# and the interface stays down; nothing WARNs (7.2's napi_enable makes an instance's thread
# again when its persistent config asks for one, and WARNs if that fails too); the next open
# makes them.
napi_thread_fails() {
	local d=/sys/kernel/debug/failslab r rc=0
	r=$(sort /proc/kallsyms | awk '$3 == "napi_kthread_create" { s = $1; next } s { print s, $1; exit }')
	[ -n "$r" ] || { echo "no napi_kthread_create in /proc/kallsyms"; return 1; }
	echo 1 >/sys/class/net/eth0/threaded || return 1
	ip link set eth0 down
	echo 0 >$d/probability
	echo "0x${r% *}" >$d/require-start
	echo "0x${r#* }" >$d/require-end
	echo 0 >$d/reject-start
	echo 0 >$d/reject-end
	echo 32 >$d/stacktrace-depth
	echo N >$d/task-filter
	echo 1 >$d/interval
	echo 0 >$d/space
	echo $INJECT_TIMES >$d/times
	echo 100 >$d/probability
	if ip link set eth0 up 2>/tmp/up.err; then
		echo "open succeeded without its NAPI threads"
		rc=1
	fi
	echo 0 >$d/probability
	echo "= failslab: $((INJECT_TIMES - $(cat $d/times))) allocations failed; ip link set up: $(cat /tmp/up.err)"
	[ $rc = 0 ] || return 1
	grep -q "Cannot allocate memory" /tmp/up.err || { echo "not ENOMEM"; return 1; }
	[ "$(cat /sys/class/net/eth0/operstate)" = down ] || { echo "eth0 not down after a failed open"; return 1; }
	ip link set eth0 up || return 1
	echo "= threaded $(cat /sys/class/net/eth0/threaded)," \
		"$(ps -e -o comm= | grep -c '^napi/eth0-') NAPI threads"
	[ "$(ps -e -o comm= | grep -c '^napi/eth0-')" -ge 1 ] || { echo "no NAPI thread"; return 1; }
	echo 0 >/sys/class/net/eth0/threaded || return 1
	link_up || return 1
	ping_resumes
}

# Each slab allocation that ndo_open makes through the driver fails in turn, one per open
# (fail-nth: the k-th allocation whose stack passes the driver's filter): at every one the
# open fails whole (the interface down) or does without it, and the sweep ends at the first
# open that made fewer than k. Page allocations (the rx buffers, hundreds) stay out of it:
# open_fails and refill_fails cover them. About 110 opens, 4 minutes here: SWEEP=1 (make
# soak).
open_sweep() {
	local k left failed=0 ok=0 d=/sys/kernel/debug
	ip link set eth0 down
	inject_start failslab 0 || return 1
	inject_start fail_page_alloc 0 || return 1
	echo 11 >$d/fail_page_alloc/min-order
	for ((k = 1; k <= 400; k++)); do
		left=$(cat $d/failslab/times)
		if bash -c "echo $k >/proc/self/fail-nth && exec ip link set eth0 up" 2>/dev/null; then
			[ "$(cat $d/failslab/times)" = "$left" ] && break
			ok=$((ok + 1))
		else
			failed=$((failed + 1))
			if [ "$(cat /sys/class/net/eth0/operstate)" != down ]; then
				echo "eth0 $(cat /sys/class/net/eth0/operstate) after open failed at allocation $k"
				return 1
			fi
		fi
		ip link set eth0 down
	done
	echo 0 >$d/fail_page_alloc/min-order
	inject_stop failslab >/dev/null
	echo "= allocation k of ndo_open failing, k = 1..$((k - 1)): $failed opens failed," \
		"$ok did without it; open $k made fewer"
	[ $k -le 400 ] || { echo "more than 400 allocations in one open"; return 1; }
	link_up || return 1
	ping_resumes
}

# Rx buffers fail to allocate while the peer floods: the refills are counted and retried
# (a ring left empty would stall rx for good), and rx resumes when the injection stops.
refill_fails() {
	local a0 a1
	a0=$(rx_alloc_fail)
	flood_start
	inject_start failslab 50 && inject_start fail_page_alloc 50 || { flood_stop; return 1; }
	sleep 3
	inject_stop fail_page_alloc
	inject_stop failslab
	flood_stop
	a1=$(rx_alloc_fail)
	echo "= rx refills that failed: $((a1 - a0))"
	[ "$a1" -gt "$a0" ] || { echo "no refill failed: the injection missed the driver"; return 1; }
	ping_resumes || return 1
	ping_ok remote ping -c 20 -i 0.05 -W 2 192.0.2.1
}

# xmit allocates nothing of its own (descriptors are written as buffers are mapped): with
# every allocation failing on the driver's stacks, UDP from the DUT still all goes out. (A
# TSO frame whose header is really cloned is copied first, skb_cow_head; when that copy fails
# the frame is dropped and counted in txN_dropped. TCP's own clones need no copy.)
# rx does allocate: each received buffer becomes an skb (napi_build_skb), so while every
# allocation fails every received frame is dropped. iperf3's control connection (its setup
# and its results, from the peer) must fall outside the failures: they start once the UDP
# flow is under way and end before it does (1000 frames later, within 12 s of its 20).
xmit_allocates_nothing() {
	local d0 d1 f0 f1 pid i rc=0
	iperf_server || return 1
	f0=$(sim tx_frames)
	iperf3 -c 192.0.2.2 -u -b 20M -l 1000 -t 20 >/dev/null 2>&1 &
	pid=$!
	sim_at_least tx_frames 100 $((f0 + 300)) || { kill $pid; wait $pid; return 1; }
	d0=$(sum_stat '^tx[0-9]+_dropped:')
	f0=$(sim tx_frames)
	# Until 1000 frames have gone out (a sanitizer guest under load sends 300 a second).
	if inject_start failslab 100 && inject_start fail_page_alloc 100; then
		sim_at_least tx_frames 120 $((f0 + 1000)) >/dev/null
	else
		rc=1
	fi
	inject_stop fail_page_alloc
	inject_stop failslab
	d1=$(sum_stat '^tx[0-9]+_dropped:')
	f1=$(sim tx_frames)
	for ((i = 0; i < 600; i++)); do
		kill -0 $pid 2>/dev/null || break
		nap 0.1
	done
	if kill -0 $pid 2>/dev/null; then
		echo "iperf3 has not ended 60 s after the failures"
		kill $pid
		rc=1
	fi
	wait $pid
	[ $rc -eq 0 ] || return 1
	echo "= frames sent $((f1 - f0)), transmits dropped $((d1 - d0))"
	[ "$d1" -eq "$d0" ] || { echo "xmit dropped frames for want of memory"; return 1; }
	[ $((f1 - f0)) -ge 1000 ] || { echo "too few frames sent to tell"; return 1; }
	ping_resumes
}

unload_clean() {
	local dis=/sys/kernel/debug/dma-api/disabled
	# DMA-API debugging switches itself off for good when it runs out of memory: then it
	# would see no mapping left behind.
	if [ -e $dis ] && [ "$(cat $dis)" != N ]; then
		echo "DMA-API debugging is off: $(dmesg | grep 'DMA-API' | tail -1)"
		return 1
	fi
	driver_removed && kmemleak_scan
}

check "traffic both ways" traffic
check "down/up and MTU changes under a flood, $ROUNDS rounds" lifecycle
check "allocation failures at open: an error, nothing left behind" open_fails
check "no NAPI thread: open fails with ENOMEM, nothing WARNs" napi_thread_fails
[ "$SWEEP" = 1 ] && check "every allocation of open failing in turn: an error or done without" open_sweep
check "allocation failures at rx refill: counted, retried, rx resumes" refill_fails
check "xmit allocates nothing: every allocation failing, UDP still goes out" xmit_allocates_nothing
check "no report from KASAN, UBSAN, lockdep, DMA-API or the lockup detectors" no_kernel_report
check "rmmod: no DMA mapping left, no leak" unload_clean
check "no report after rmmod" no_kernel_report
summary
