#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own NIC driver selftests (tools/testing/selftests/drivers/net, built by
# scripts/selftests and handed in with VM_FILES) against eth0, with the peer's namespace as
# NetDrvEpEnv's remote end: NETIF=eth0, REMOTE_TYPE=netns, REMOTE_ARGS=remote and both
# address families of the guest contract.
#
# SELFTESTS="drivers/net/ping.py ..." chooses the tests (default: the list below; commas
# separate them too, as VM_ENV passes them).
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
	drivers/net/hw/pp_alloc_fail.py}
SKIPPED=0

# A failed check: its line, then TEXT (what explains it) as "#   " comments.
fail_check() { # NAME [TEXT]
	VM_CHECKS=$((VM_CHECKS + 1))
	VM_FAILED=$((VM_FAILED + 1))
	echo "not ok $VM_CHECKS - $1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/#   /'
}

# The ethtool_*.sh tests (forwarding/lib.sh) want both ends in one namespace and mausezahn;
# net/netdevice.sh walks every interface: neither is in the default list yet.

# One selftest: its KTAP results become check lines.
run_test() { # PATH (relative to the install)
	local t=$1 out rc plan n=0 line name status reason
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
			SKIPPED=$((SKIPPED + 1))
			echo "ok - $t $name # $reason"
		elif [ "$status" = ok ] || [[ $reason =~ ^XFAIL ]]; then
			VM_CHECKS=$((VM_CHECKS + 1))
			echo "ok $VM_CHECKS - $t $name${reason:+ # $reason}"
		else
			fail_check "$t $name${reason:+ # $reason}" \
				"$([ ${#diag[@]} -eq 0 ] || printf '%s\n' "${diag[@]}" | tail -12)"
		fi
		diag=()
	done <<<"$out"
	# A test that crashed or hung prints no plan, or fewer results than its status explains.
	if [ "$plan" -eq 0 ] || { [ $rc -ne 0 ] && [ $rc -ne 4 ] && ! printf '%s\n' "$out" | grep -q '^not ok '; }; then
		fail_check "$t: exit status $rc, $n results" "$(printf '%s\n' "$out" | tail -15)"
	fi
}

# Many tests take the interface down and up: without keep_addr_on_down the kernel drops its
# IPv6 address then, and every later IPv6 case fails with "Cannot assign requested address".
sysctl -qw net.ipv6.conf.eth0.keep_addr_on_down=1
remote sysctl -qw net.ipv6.conf.peer0.keep_addr_on_down=1
# netpoll_basic.py drives netconsole's dynamic targets through configfs (Debian: a module).
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
modprobe netconsole 2>/dev/null || echo "# no netconsole module"
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
	[ -x "$KST/$t" ] || { fail_check "$t: not in the install"; continue; }
	echo "# $t"
	run_test "$t"
done
check "kernel log: no warning, oops or lockdep report" no_kernel_report
echo "$SKIPPED skipped"
summary
