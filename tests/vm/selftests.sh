#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own NIC driver selftests (tools/testing/selftests/drivers/net, built by
# scripts/selftests and handed in with VM_FILES) against eth0, with the peer's namespace as
# NetDrvEpEnv's remote end: NETIF=eth0, REMOTE_TYPE=netns, REMOTE_ARGS=remote and both
# address families of the guest contract.
#
# SELFTESTS="drivers/net/ping.py ..." chooses the tests (default: the list below; commas
# separate them too, as VM_ENV passes them); SELFTESTS_EXCLUDE (the same form) leaves some out
# of it, each named in a "# TEST: excluded" line.
# Prints one "ok N - TEST CASE" / "not ok N - TEST CASE" line per KTAP result; a case the test
# skipped is an "ok ... # SKIP reason" line and is counted apart. A test that ends without
# its KTAP plan, or with a status its results do not explain, is a failure of its own.
# Ends with "N passed, N failed" (skips not among them) and "N skipped".
set -u
source "$VM_LIB"

[ -n "${VM_FILES:-}" ] && [ -d "$VM_FILES/kselftest" ] ||
	{ echo "no selftests: run with VM_FILES=\$(scripts/selftests setup)"; exit 1; }
KST=$VM_FILES/kselftest
# ethtool from sid first: trixie's 6.14 lacks options the tests use.
export PATH=$VM_FILES/bin:$PATH
export NETIF=eth0 LOCAL_V4=192.0.2.1 REMOTE_V4=192.0.2.2 LOCAL_V6=2001:db8::1 \
	REMOTE_V6=2001:db8::2 REMOTE_TYPE=netns REMOTE_ARGS=remote
SELFTESTS=${SELFTESTS:-drivers/net/ping.py drivers/net/stats.py drivers/net/queues.py
	drivers/net/ring_reconfig.py drivers/net/napi_id.py drivers/net/napi_threaded.py
	drivers/net/netpoll_basic.py
	drivers/net/xdp.py drivers/net/hw/csum.py drivers/net/hw/tso.py drivers/net/hw/irq.py
	drivers/net/hw/pp_alloc_fail.py drivers/net/hw/ethtool_std_stats.sh
	drivers/net/hw/ethtool_rmon.sh net/netdevice.sh}
SKIPPED=0
XFAILED=0

# A failed check: its line, then TEXT (what explains it) as "#   " comments.
fail_check() { # NAME [TEXT]
	VM_CHECKS=$((VM_CHECKS + 1))
	VM_FAILED=$((VM_FAILED + 1))
	echo "not ok $VM_CHECKS - $1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/#   /'
}

# What a driver is known to fail, and why: "DRIVER PERSONALITY TEST CASE REASON" lines (* for
# any personality). Such a case's failure is an "ok ... # XFAIL reason" line; its pass is a
# failure ("expected to fail"), so the list cannot outlive what it describes. atl1c_rs may
# appear here only where the hardware lacks what the test asserts or a later issue builds it.
# A CASE ending in * matches every case it begins.
EXPECTED=$(cat <<'LIST'
# No native XDP yet: the parity issue (13) builds it, on datapath v2's page_pool rx (12).
atl1c_rs * drivers/net/xdp.py xdp.test_xdp_native_* no native XDP yet (issue 13)
# The AR8151 has one TPD ring and one RFD/RRD ring pair for the host: one channel. The test
# asserts two (ksft_ge(combined, 2)) where it would skip.
atl1c_rs ar8151 drivers/net/napi_threaded.py napi_threaded.* one channel on the AR8151; the test wants two
# The AR8151 takes frames up to 6 KiB (atl1c's MAX_JUMBO_FRAME_SIZE): MTU 6100 at most.
atl1c_rs ar8151 drivers/net/ping.py ping.test_xdp_generic_mb the AR8151's largest MTU is below the test's 9000
# Debian's atl1c.ko, the C driver (make soak runs it too): what it lacks, read in its source.
atl1c * drivers/net/stats.py stats.procfs_downup_hammer the C driver has no ethtool -l (get_channels)
atl1c mikrotik drivers/net/queues.py queues.addremove_queues the C driver has no ethtool -l/-L
atl1c * drivers/net/ring_reconfig.py ring_reconfig.* the C driver has no ethtool -l/-L or -G
atl1c * drivers/net/napi_threaded.py napi_threaded.* the C driver has no ethtool -l/-L
atl1c * drivers/net/netpoll_basic.py netpoll_basic.test_netpoll the C driver has no ethtool -l
atl1c * drivers/net/xdp.py xdp.test_xdp_native_* the C driver has no native XDP
atl1c ar8151 drivers/net/ping.py ping.test_xdp_generic_mb the AR8151's largest MTU is below the test's 9000
atl1c * drivers/net/hw/tso.py exit_status the C driver has no queue statistics: the test stops at its feature query
atl1c * drivers/net/hw/irq.py irq.check_irqs_reported the C driver does not give its NAPI instances their IRQ
atl1c * net/netdevice.sh eth0:_Cannot_set_MAC_address the C driver refuses an address change while up (EBUSY)
LIST
)
expected_failure() { # TEST CASE: prints the reason
	awk -v d="$DRIVER" -v p="$PERSONALITY" -v t="$1" -v c="$2" '
		function matches(pat, s) {
			return pat == s || (pat ~ /\*$/ && index(s, substr(pat, 1, length(pat) - 1)) == 1)
		}
		/^#/ || NF < 5 { next }
		$1 == d && ($2 == p || $2 == "*") && $3 == t && matches($4, c) {
			$1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print; found = 1; exit }
		END { exit !found }' <<<"$EXPECTED"
}

# One case's result: a check line (pass, fail, skip or an expected failure).
report_case() { # TEST CASE ok|fail|skip [REASON [DIAGNOSTICS]]
	local t=$1 name=$2 status=$3 reason=${4:-} diag=${5:-} why
	if [ "$status" = skip ]; then
		SKIPPED=$((SKIPPED + 1))
		echo "ok - $t $name # $reason"
		return
	fi
	if why=$(expected_failure "$t" "$name"); then
		if [ "$status" = fail ]; then
			XFAILED=$((XFAILED + 1))
			VM_CHECKS=$((VM_CHECKS + 1))
			echo "ok $VM_CHECKS - $t $name # XFAIL $why"
		else
			fail_check "$t $name # expected to fail ($why) but passed: update the list in tests/vm/selftests.sh"
		fi
	elif [ "$status" = ok ]; then
		VM_CHECKS=$((VM_CHECKS + 1))
		echo "ok $VM_CHECKS - $t $name${reason:+ # $reason}"
	else
		fail_check "$t $name${reason:+ # $reason}" "$diag"
	fi
}

# net/netdevice.sh is no KTAP test: it prints "PASS: eth0: what", "FAIL: ...", "SKIP: ...",
# "XFAIL: ..." lines and exits 0 whatever failed. It ups, renames (MAC) and downs every
# ethX that is down, so it runs with eth0 down, and eth0 comes back as it was.
run_netdevice() { # PATH
	local t=$1 out mac line n=0 name
	mac=$(cat /sys/class/net/eth0/address)
	ip link set eth0 down
	out=$(cd "$KST/$(dirname "$t")" && timeout 300 "./$(basename "$t")" 2>&1)
	printf '%s\n' "$out" >"/job/work/$(echo "$t" | tr / _).log"
	ip link set eth0 down
	ip link set eth0 address "$mac"
	ip link set eth0 up
	link_up >/dev/null
	while IFS= read -r line; do
		[[ $line =~ ^(PASS|FAIL|SKIP|XFAIL):\ (.*)$ ]] || continue
		n=$((n + 1))
		name=$(echo "${BASH_REMATCH[2]}" | tr ' ' _)
		case ${BASH_REMATCH[1]} in
		PASS) report_case "$t" "$name" ok ;;
		FAIL) report_case "$t" "$name" fail ;;
		SKIP) report_case "$t" "$name" skip "SKIP" ;;
		XFAIL) report_case "$t" "$name" ok "XFAIL" ;;
		esac
	done <<<"$out"
	[ $n -gt 0 ] || fail_check "$t: no result" "$(printf '%s\n' "$out" | tail -15)"
	# The peer learns eth0's address again (the test changed it).
	ping_ok ping -c 3 -i 0.2 -W 2 192.0.2.2 >/dev/null || echo "# the peer does not answer after $t"
}

# A failure whose cause is the test's own instrument under TCG, not the interface: prints the
# reason, and the case is reported as skipped with it. netpoll_basic.py gives bpftrace 30 s
# (a 10 s window + 20 s) while it floods netconsole; with the flood on both vCPUs its start
# and end once took longer (CI, 2026-12-07: "TimeoutExpired: ... bpftrace ... timed out after
# 30 seconds" in its thread, then "bpftrace failed to run!?: {}"). Idle, bpftrace takes 13-15 s.
instrument_failure() { # TEST OUTPUT
	case $1 in
	drivers/net/netpoll_basic.py)
		grep -q "TimeoutExpired: Command '\['bpftrace'" <<<"$2" &&
			echo "SKIP bpftrace did not end within the test's 30 s under TCG (its thread timed out)"
		;;
	*) return 1 ;;
	esac
}

# One selftest: its KTAP results become check lines.
run_test() { # PATH (relative to the install)
	local t=$1 out rc plan n=0 line name status reason why
	out=$(cd "$KST/$(dirname "$t")" && timeout 300 "./$(basename "$t")" 2>&1)
	rc=$?
	printf '%s\n' "$out" >"/job/work/$(echo "$t" | tr / _).log"
	plan=$(printf '%s\n' "$out" | grep -cE '^1\.\.[0-9]+$')
	local diag=()
	while IFS= read -r line; do
		# A case's diagnostics ("# Check failed ...") come before its result line.
		if [[ $line == "#"* ]]; then
			diag+=("$line")
			continue
		fi
		[[ $line =~ ^(not ok|ok)\ [0-9]+\ ([^#]*)(#\ *(.*))?$ ]] || continue
		status=${BASH_REMATCH[1]}
		name=$(echo "${BASH_REMATCH[2]}" | sed 's/ *$//')
		reason=${BASH_REMATCH[4]}
		n=$((n + 1))
		if [[ $reason =~ ^SKIP ]]; then
			report_case "$t" "$name" skip "$reason"
		elif [ "$status" = ok ] || [[ $reason =~ ^XFAIL ]]; then
			report_case "$t" "$name" ok "$reason"
		elif why=$(instrument_failure "$t" "$out"); then
			report_case "$t" "$name" skip "$why"
		else
			report_case "$t" "$name" fail "$reason" \
				"$([ ${#diag[@]} -eq 0 ] || printf '%s\n' "${diag[@]}" | tail -12)"
		fi
		diag=()
	done <<<"$out"
	# A test that crashed or hung prints no plan, or fewer results than its status explains.
	if [ "$plan" -eq 0 ] || { [ $rc -ne 0 ] && [ $rc -ne 4 ] && ! printf '%s\n' "$out" | grep -q '^not ok '; }; then
		report_case "$t" exit_status fail "$rc after $n results" "$(printf '%s\n' "$out" | tail -15)"
	fi
}

# Many tests take the interface down and up: without keep_addr_on_down the kernel drops its
# IPv6 address then, and every later IPv6 case fails with "Cannot assign requested address".
sysctl -qw net.ipv6.conf.eth0.keep_addr_on_down=1
remote sysctl -qw net.ipv6.conf.peer0.keep_addr_on_down=1
# netpoll_basic.py drives netconsole's dynamic targets through configfs (Debian: a module).
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
modprobe netconsole 2>/dev/null || echo "# no netconsole module"
# netpoll_basic.py starts bpftrace and floods netconsole at once; bpftrace must attach within
# the flood (about 12 s here) and end within 30 s. Its first start reads its 150 MB (LLVM)
# over the guest's 9p root: start it once before, so the test's start is a warm one.
command -v bpftrace >/dev/null && timeout 60 bpftrace -q -e 'BEGIN { exit(); }' >/dev/null 2>&1 ||
	echo "# bpftrace does not start"
# Both ends know each other's addresses in both families before the first test: several
# send one ping with a 0.5 s deadline, which a neighbour resolution under TCG can eat.
link_up
for a in 192.0.2.2 2001:db8::2; do
	ping_ok ping -c 3 -i 0.2 -W 2 $a >/dev/null || echo "# the peer does not answer at $a"
done
for a in 192.0.2.1 2001:db8::1; do
	ping_ok remote ping -c 3 -i 0.2 -W 2 $a >/dev/null || echo "# the DUT does not answer at $a"
done
for t in ${SELFTESTS//,/ }; do
	case ",${SELFTESTS_EXCLUDE:-}," in *",$t,"*)
		echo "# $t: excluded (SELFTESTS_EXCLUDE)"
		continue
		;;
	esac
	[ -x "$KST/$t" ] || { fail_check "$t: not in the install"; continue; }
	echo "# $t"
	t0=$SECONDS
	case $t in
	net/netdevice.sh) run_netdevice "$t" ;;
	drivers/net/hw/ethtool_std_stats.sh)
		# Its peer sends 2000 frames back to back and the MAC's counters must see them all.
		# Under TCG the DUT drains far slower than the model's 10G wire fills: at 512 RFDs
		# the model dropped 649 (rx_dropped, "no RFD", counted by the MAC as rrd_ov, not as
		# received). The largest ring the card has gives it the time a real host would.
		rx=$(ethtool -g eth0 2>/dev/null | awk '/^Current/ { c = 1 } c && /^RX:/ { print $2; exit }')
		max=$(ethtool -g eth0 2>/dev/null | awk '/^RX:/ { print $2; exit }')
		[ -z "$rx" ] || { ethtool -G eth0 rx "$max" && link_up >/dev/null; }
		run_test "$t"
		[ -z "$rx" ] || { ethtool -G eth0 rx "$rx" && link_up >/dev/null; }
		;;
	*) run_test "$t" ;;
	esac
	echo "# $t: $((SECONDS - t0)) s"
done
check "kernel log: no warning, oops or lockdep report" no_kernel_report
echo "$SKIPPED skipped, $XFAILED expected failures (the list in tests/vm/selftests.sh)"
summary
