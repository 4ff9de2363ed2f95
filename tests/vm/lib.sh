# SPDX-License-Identifier: GPL-2.0
#
# Helpers for guest scenarios: scripts/vm ships this file into every guest and names it in
# VM_LIB (Documentation/vm.rst), so a scenario, the project's or anyone's, may
# `source "$VM_LIB"`. Bash only; nothing here runs on its own.
#
# check NAME COMMAND...   runs a check: prints "ok N - NAME" or "not ok N - NAME" and the last
#                         15 lines of its output as "#   " comments; output lines starting
#                         with "= " (figures worth keeping) are shown after a pass too
# summary                 prints "N passed, N failed"; returns non-zero if any check failed
# remote COMMAND...       runs in the peer's network namespace
# iperf_server            starts a one-shot iperf3 server on the peer and waits until it listens
# link_up                 waits up to 5 s for carrier on eth0
# link_down               waits up to 10 s for eth0's carrier to go
# ping_ok COMMAND...      runs a ping command (`ping ...`, `remote ping ...`); succeeds on 0%
#                         packet loss
# sim_control COMMAND     hands the model a control command (SIM_CONTROL)
# sim KEY[.KEY...]        a value from the model's counters (SIM_STATS; arrays on one line)
# sim_at_least KEY TENTHS N  waits up to TENTHS tenths of a second for the model's counter
#                         KEY (absent: 0) to reach N
# ping_resumes            waits up to 20 s for the peer to answer, then 20 pings, no loss
# watchdog_fires          pings the peer for up to 30 s until the tx watchdog fires (a new
#                         NETDEV WATCHDOG line in dmesg), and prints that line
# completes SECS COMMAND...  runs COMMAND, failing if it has not completed within SECS (a
#                         task stuck in the kernel ignores signals: timeout(1) cannot tell)
# KERNEL_REPORTS          what a kernel prints when something is wrong (an extended regex);
#                         scripts/vm fails every run whose kernel log matches it
# no_kernel_report        fails on any KERNEL_REPORTS line in dmesg (a tx watchdog timeout,
#                         which fault scenarios provoke, is not one)
# kernel_log_clean        fails on any warning, oops, lockdep or watchdog report in dmesg
# dut_probed              eth0 is the card (1969:1083), bound to $DRIVER
# driver_unloads          eth0 down, rmmod $DRIVER: no net_device of the card is left, and
#                         kernel_log_clean
#
# JSON is read with jq: a TCG guest takes most of a second to start python.

export LC_ALL=C

# Warnings and oopses (KASAN and KFENCE report as "BUG: KASAN: ..."), lockdep, UBSAN,
# kmemleak and DMA-API debugging reports (not their boot banners), lockup and hung-task
# detectors, Rust panics, skb_over_panic. NETDEV WATCHDOG is not among them: fault scenarios
# provoke it on purpose and check for it themselves. scripts/vm reads this line too.
KERNEL_REPORTS='WARNING:|BUG:|Oops|Call Trace|INFO: task .* blocked|hung_task|soft lockup|hard LOCKUP|rcu_sched self-detected|circular locking|inconsistent lock|lock order|possible recursive locking|sleeping function|UBSAN:|suspected memory leak|DMA-API: .*device driver|skb_over_panic|rust_panic|panicked at'
VM_CHECKS=0
VM_FAILED=0

check() {
	local name=$1 out rc
	shift
	VM_CHECKS=$((VM_CHECKS + 1))
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok $VM_CHECKS - $name"
		printf '%s\n' "$out" | sed -n 's/^= /#   /p'
	else
		VM_FAILED=$((VM_FAILED + 1))
		echo "not ok $VM_CHECKS - $name"
		printf '%s\n' "$out" | tail -15 | sed 's/^/#   /'
	fi
}

summary() {
	echo "$((VM_CHECKS - VM_FAILED)) passed, $VM_FAILED failed"
	[ $VM_FAILED -eq 0 ]
}

remote() { ip netns exec remote "$@"; }

iperf_server() {
	local i
	remote iperf3 -s -1 -D -B 192.0.2.2 >/dev/null 2>&1
	for i in $(seq 100); do
		remote ss -Hltn 'sport = :5201' | grep -q . && return 0
		sleep 0.1
	done
	echo "iperf3 server did not start"
	return 1
}

link_up() {
	local i
	for i in $(seq 50); do
		[ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" = 1 ] && return 0
		sleep 0.1
	done
	echo "no carrier on eth0"
	return 1
}

link_down() {
	local i
	for i in $(seq 100); do
		[ "$(cat /sys/class/net/eth0/carrier 2>/dev/null)" = 1 ] || return 0
		sleep 0.1
	done
	echo "carrier still on"
	return 1
}

ping_ok() {
	local out
	out=$("$@") || { echo "$out"; return 1; }
	echo "$out" | tail -3
	echo "$out" | grep -q ' 0% packet loss'
}

# Written whole, then renamed into place: the model polls the file.
sim_control() {
	echo "$1" >"$SIM_CONTROL.tmp" && mv "$SIM_CONTROL.tmp" "$SIM_CONTROL"
}

sim() {
	jq -c ".$1" "$SIM_STATS"
}

sim_at_least() {
	local i v
	for i in $(seq "$2"); do
		v=$(jq ".$1 // 0" "$SIM_STATS")
		[ "$v" -ge "$3" ] 2>/dev/null && return 0
		sleep 0.1
	done
	echo "$1 stayed at $v (want $3)"
	return 1
}

ping_resumes() {
	local i
	for i in $(seq 100); do
		ping -c 1 -W 1 -q 192.0.2.2 >/dev/null 2>&1 && break
		sleep 0.2
	done
	ping_ok ping -c 20 -i 0.05 -W 2 192.0.2.2
}

watchdog_fires() {
	local i w0
	w0=$(dmesg | grep -c "NETDEV WATCHDOG")
	for i in $(seq 300); do
		[ "$(dmesg | grep -c "NETDEV WATCHDOG")" -gt "$w0" ] && break
		ping -c 1 -W 1 -q 192.0.2.2 >/dev/null 2>&1
		sleep 0.1
	done
	[ "$(dmesg | grep -c "NETDEV WATCHDOG")" -gt "$w0" ] || { echo "the watchdog never fired"; return 1; }
	dmesg | grep "NETDEV WATCHDOG" | tail -1
}

completes() {
	local secs=$1 pid i
	shift
	"$@" &
	pid=$!
	for i in $(seq $((secs * 10))); do
		kill -0 $pid 2>/dev/null || { wait $pid; return; }
		sleep 0.1
	done
	echo "'$*' has not completed after $secs s"
	return 1
}

no_kernel_report() {
	local bad
	bad=$(dmesg | grep -E "$KERNEL_REPORTS")
	[ -z "$bad" ] || { echo "$bad" | head -20; return 1; }
}

kernel_log_clean() {
	local bad
	bad=$(dmesg | grep -E "$KERNEL_REPORTS|NETDEV WATCHDOG")
	[ -z "$bad" ] || { echo "$bad" | head -20; return 1; }
}

dut_probed() {
	local drv
	drv=$(basename "$(readlink -f /sys/class/net/eth0/device/driver)")
	[ "$drv" = "$DRIVER" ] || { echo "eth0 is bound to '$drv', not $DRIVER"; return 1; }
	[ "$(cat /sys/class/net/eth0/device/vendor)" = 0x1969 ] || return 1
	[ "$(cat /sys/class/net/eth0/device/device)" = 0x1083 ] || return 1
	ip link show eth0
}

driver_unloads() {
	local n
	ip link set eth0 down
	rmmod "$DRIVER" || return 1
	for n in /sys/class/net/*; do
		[ -e "$n/device/vendor" ] && [ "$(cat "$n/device/vendor")" = 0x1969 ] &&
			{ echo "$(basename "$n") still registered"; return 1; }
	done
	kernel_log_clean
}
