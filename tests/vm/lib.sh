# SPDX-License-Identifier: GPL-2.0
#
# Helpers for guest scenarios: scripts/vm ships this file into every guest and names it in
# VM_LIB (Documentation/vm.rst), so a scenario, the project's or anyone's, may
# `source "$VM_LIB"`. Bash only; nothing here runs on its own.
#
# check NAME COMMAND...   runs a check: prints "ok N - NAME (S s)" or "not ok N - NAME (S s)"
#                         (S: the seconds it took, as information) and the last
#                         15 lines of its output as "#   " comments; output lines starting
#                         with "= " (figures worth keeping) are shown after a pass too
# summary                 prints "N passed, N failed"; returns non-zero if any check failed
# remote COMMAND...       runs in the peer's network namespace
# iperf_server            starts a one-shot iperf3 server on the peer and waits until it listens
# iperf_client ARGS...    iperf3 -c ARGS quietly; on failure its exit status and last lines
# nap SECONDS             sleeps without starting a process (see below)
# has_carrier             succeeds if eth0 has carrier now
# link_up                 waits up to 20 s for carrier on eth0
# link_down               waits up to 20 s for eth0's carrier to go
# ping_ok COMMAND...      runs a ping command (`ping ...`, `remote ping ...`); succeeds on 0%
#                         packet loss
# sim_control COMMAND     hands the model a control command (SIM_CONTROL)
# sim KEY[.KEY...]        a value from the model's counters (SIM_STATS; arrays on one line)
# sim_at_least KEY TENTHS N  waits up to TENTHS tenths of a second for the model's counter
#                         KEY (absent: 0) to reach N
# netdev_qstats [IFACE]   the interface's netdev qstats as JSON: {"queues": [per queue in
#                         use], "dev": {device scope}}, counters by netlink name
# ping_resumes            waits up to 20 s for the peer to answer, then 20 pings, no loss
# watchdog_fires          pings the peer for up to 30 s until the tx watchdog fires (a new
#                         NETDEV WATCHDOG line in dmesg), and prints that line
# completes SECS COMMAND...  runs COMMAND, failing if it has not completed within SECS (a
#                         task stuck in the kernel ignores signals: timeout(1) cannot tell);
#                         then prints where it waits (its kernel stack, the blocked tasks)
# KERNEL_REPORTS          what a kernel prints when something is wrong (an extended regex);
#                         scripts/vm fails every run whose kernel log matches it
# no_kernel_report        fails on any KERNEL_REPORTS line in dmesg (a tx watchdog timeout,
#                         which fault scenarios provoke, is not one)
# kernel_log_clean        fails on any warning, oops, lockdep or watchdog report in dmesg
# flood_start / flood_stop  the peer floods the DUT (ping -f) in the background, and stops
# kmemleak_scan           scans for leaks (kmemleak, test kernel) and fails on any; without
#                         kmemleak (Debian's kernel) says so and succeeds
# inject_start KIND PCT   fails PCT% of the allocations made with $DRIVER's code on the stack
#                         (KIND failslab or fail_page_alloc; test kernel); inject_stop KIND
#                         ends it and prints "= KIND: N allocations failed"
# dut_probed              eth0 is the card (1969:1083), bound to $DRIVER
# card_netdevs            the names of the card's net_devices (vendor 0x1969), one a line
# dut_setup               after insmod: waits up to 5 s for the card's net_device, names it
#                         eth0, adds 192.0.2.1/24 and 2001:db8::1/64, sets it up and waits
#                         up to 10 s for carrier (without failing: link_up checks it);
#                         the guest's init does this before every scenario
# driver_removed          eth0 down, rmmod $DRIVER, each within 30 s: no net_device of the
#                         card is left
# driver_loads            insmod $DRIVER again (the module the guest's init loaded), then
#                         dut_setup and link_up: the card back as eth0 with its addresses
# driver_unloads          driver_removed, and kernel_log_clean
#
# JSON is read with jq: a TCG guest takes most of a second to start python.

export LC_ALL=C

# The helpers below start as few processes as they can: under TCG each one costs the test
# kernel 0.16-0.36 s (KASAN and kmemleak record every allocation it makes; half of it is
# kmemleak's), Debian's 0.01-0.04 s.
# nap: sleep(1) without a process, a read that times out on a pipe nobody writes.
exec {VM_NAP_FD}<> <(:)
nap() { read -rt "$1" -u "$VM_NAP_FD" || :; }
# Reading a down interface's carrier fails: no carrier.
has_carrier() {
	local c=0
	read -r c </sys/class/net/eth0/carrier 2>/dev/null
	[ "$c" = 1 ]
}

# Warnings and oopses (KASAN and KFENCE report as "BUG: KASAN: ..."), lockdep, UBSAN,
# kmemleak and DMA-API debugging reports (not their boot banners), lockup and hung-task
# detectors, Rust panics, skb_over_panic. NETDEV WATCHDOG is not among them: fault scenarios
# provoke it on purpose and check for it themselves. scripts/vm reads this line too.
KERNEL_REPORTS='WARNING:|BUG:|Oops|Call Trace|INFO: task .* blocked|hung_task|soft lockup|hard LOCKUP|rcu_sched self-detected|circular locking|inconsistent lock|lock order|possible recursive locking|sleeping function|UBSAN:|suspected memory leak|DMA-API: .*device driver|skb_over_panic|rust_panic|panicked at'
VM_CHECKS=0
VM_FAILED=0

check() {
	local name=$1 out rc t0=$SECONDS
	shift
	VM_CHECKS=$((VM_CHECKS + 1))
	out=$("$@" 2>&1)
	rc=$?
	# The guest time a check took, for whoever trims a scenario (never a pass criterion).
	if [ $rc -eq 0 ]; then
		echo "ok $VM_CHECKS - $name ($((SECONDS - t0)) s)"
		printf '%s\n' "$out" | sed -n 's/^= /#   /p'
	else
		VM_FAILED=$((VM_FAILED + 1))
		echo "not ok $VM_CHECKS - $name ($((SECONDS - t0)) s)"
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
	for ((i = 0; i < 100; i++)); do
		remote ss -Hltn 'sport = :5201' | grep -q . && return 0
		nap 0.1
	done
	echo "iperf3 server did not start"
	return 1
}

# iperf3 -c ARGS... quietly: its report is dropped, but when it fails its last lines are printed
# (iperf3 3.18 writes its errors to stdout, so `>/dev/null` would lose them). Returns its status.
iperf_client() {
	local out rc
	out=$(iperf3 -c "$@" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || { echo "iperf3 -c $* exited $rc:"; printf '%s\n' "$out" | tail -3; }
	return $rc
}

# Bounds for "never", not speed requirements: the C driver on the test kernel, beside another
# guest, took more than 5 s to see a link back after a flap (make soak, 2026-12-06).
link_up() {
	local i
	for ((i = 0; i < 200; i++)); do
		has_carrier && return 0
		nap 0.1
	done
	echo "no carrier on eth0"
	return 1
}

link_down() {
	local i
	for ((i = 0; i < 200; i++)); do
		has_carrier || return 0
		nap 0.1
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

# jq FILTER over the model's counters. The model renames a complete file into place, yet a
# read through the 9p share came back empty once under load (ethtool.sh, 2026-12-06; 1500
# reads in a row were all whole): an empty or unparsable read is retried, and said on stderr.
sim_jq() { # [JQ OPTION...] FILTER
	local i out
	for i in 1 2 3 4 5 6 7 8 9 10; do
		if out=$(jq "$@" "$SIM_STATS" 2>/dev/null) && [ -n "$out" ]; then
			printf '%s\n' "$out"
			return 0
		fi
		echo "sim_jq: read $i of $SIM_STATS empty or unparsable" >&2
		nap 0.05
	done
	return 1
}

# netdev_qstats [IFACE]: the interface's netdev qstats (what `ynl --family netdev --dump
# qstats-get` shows) as JSON, read with a minimal generic-netlink client: {"queues": one
# object per queue in use (type rx or tx, id, counters), "dev": the device scope (the queues
# in use plus the base)}. Counters by their netlink names (rx-packets, rx-alloc-fail, ...).
netdev_qstats() {
	python3 - "$(cat "/sys/class/net/${1:-eth0}/ifindex")" <<'PY'
import json, socket, struct, sys
ifindex = int(sys.argv[1])
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)  # NETLINK_GENERIC
s.bind((0, 0))
seq = 0
def attr(t, data):
    return struct.pack("HH", 4 + len(data), t) + data + b"\0" * (-len(data) % 4)
def attrs(buf):
    out, i = {}, 0
    while i + 4 <= len(buf):
        n, t = struct.unpack_from("HH", buf, i)
        out[t & 0x3fff] = buf[i + 4:i + n]
        i += (n + 3) & ~3
    return out
def request(family, cmd, flags, payload):
    global seq
    seq += 1
    body = struct.pack("BBH", cmd, 1, 0) + payload
    s.send(struct.pack("IHHII", 16 + len(body), family, 1 | flags, seq, 0) + body)
    msgs = []
    while True:
        data = s.recv(65536)
        i = 0
        while i < len(data):
            n, typ = struct.unpack_from("IH", data, i)
            if typ == 3:  # NLMSG_DONE
                return msgs
            if typ == 2:  # NLMSG_ERROR
                err = struct.unpack_from("i", data, i + 16)[0]
                if err:
                    sys.exit(f"netlink error {err}")
                return msgs
            msgs.append(attrs(data[i + 20:i + n]))
            i += (n + 3) & ~3
        if not flags:
            return msgs
u = lambda b: int.from_bytes(b, "little")
fam = request(0x10, 3, 0, attr(2, b"netdev\0"))  # CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME
fid = u(fam[0][1])  # CTRL_ATTR_FAMILY_ID
NAMES = {8: "rx-packets", 9: "rx-bytes", 10: "tx-packets", 11: "tx-bytes", 12: "rx-alloc-fail",
         13: "rx-hw-drops", 16: "rx-csum-unnecessary", 33: "tx-stop", 34: "tx-wake"}
def counters(r):
    return {NAMES[k]: u(v) for k, v in r.items() if k in NAMES}
ifi = attr(1, struct.pack("I", ifindex))
# NETDEV_CMD_QSTATS_GET, dumped: per queue (scope 1), then the device.
queues = [dict(type="tx" if u(r[2]) else "rx", id=u(r[3]), **counters(r))
          for r in request(fid, 12, 0x300, ifi + attr(4, struct.pack("I", 1)))]
dev = counters(request(fid, 12, 0x300, ifi)[0])
print(json.dumps({"queues": queues, "dev": dev}))
PY
}

sim() {
	sim_jq -c ".$1"
}

sim_at_least() {
	local i v
	for ((i = 0; i < "$2"; i++)); do
		v=$(sim_jq ".$1 // 0")
		[ "$v" -ge "$3" ] 2>/dev/null && return 0
		nap 0.1
	done
	echo "$1 stayed at $v (want $3)"
	return 1
}

ping_resumes() {
	local i
	for ((i = 0; i < 100; i++)); do
		ping -c 1 -W 1 -q 192.0.2.2 >/dev/null 2>&1 && break
		nap 0.2
	done
	ping_ok ping -c 20 -i 0.05 -W 2 192.0.2.2
}

watchdog_fires() {
	local i w0
	w0=$(dmesg | grep -c "NETDEV WATCHDOG")
	for ((i = 0; i < 300; i++)); do
		[ "$(dmesg | grep -c "NETDEV WATCHDOG")" -gt "$w0" ] && break
		ping -c 1 -W 1 -q 192.0.2.2 >/dev/null 2>&1
		nap 0.1
	done
	[ "$(dmesg | grep -c "NETDEV WATCHDOG")" -gt "$w0" ] || { echo "the watchdog never fired"; return 1; }
	dmesg | grep "NETDEV WATCHDOG" | tail -1
}

completes() {
	local secs=$1 pid i
	shift
	"$@" &
	pid=$!
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 $pid 2>/dev/null || { wait $pid; return; }
		nap 0.1
	done
	echo "'$*' has not completed after $secs s"
	# Where it waits: its kernel stack, and the kernel's own tasks that are blocked too (a
	# worker, a kthread it waits for), so that a hang seen once can be diagnosed.
	echo "its kernel stack:"
	sed 's/^/  /' /proc/$pid/stack 2>/dev/null
	echo w >/proc/sysrq-trigger 2>/dev/null && nap 0.5 &&
		dmesg | awk '/sysrq: Show Blocked State/ { on = 1; n = 0 } on && n++ < 60' | sed 's/^/  /'
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

# The names of the card's net_devices (PCI vendor 0x1969), one a line.
card_netdevs() {
	local n v
	for n in /sys/class/net/*; do
		v=
		[ -e "$n/device/vendor" ] && read -r v <"$n/device/vendor"
		[ "$v" = 0x1969 ] && echo "${n##*/}"
	done
	return 0
}

dut_setup() {
	local i dut=
	for ((i = 0; i < 50; i++)); do
		dut=$(card_netdevs)
		dut=${dut##*$'\n'}
		[ -n "$dut" ] && break
		nap 0.1
	done
	[ -n "$dut" ] || { echo "the ${DRIVER:-} driver registered no netdev"; return 1; }
	[ "$dut" = eth0 ] || ip link set "$dut" name eth0 || return 1
	ip -b - <<IP || return 1
addr add 192.0.2.1/24 dev eth0
addr add 2001:db8::1/64 dev eth0 nodad
link set eth0 up
IP
	for ((i = 0; i < 100; i++)); do
		has_carrier && break
		nap 0.1
	done
	return 0
}

driver_removed() {
	local left
	completes 30 ip link set eth0 down || return 1
	completes 30 rmmod "$DRIVER" || return 1
	left=$(card_netdevs)
	[ -z "$left" ] || { echo "$left" | sed 's/$/ still registered/'; return 1; }
}

driver_loads() {
	local ko
	for ko in /job/modules/*-"$DRIVER".ko; do
		[ -f "$ko" ] || break
		insmod "$ko" && dut_setup && link_up
		return
	done
	echo "no module for $DRIVER in /job/modules"
	return 1
}

driver_unloads() {
	driver_removed && kernel_log_clean
}

kmemleak_scan() {
	local f=/sys/kernel/debug/kmemleak out
	[ -e $f ] || { echo "= kmemleak: not in this kernel"; return 0; }
	# kmemleak reports an object only once it has been unreferenced for 5 s, and after two
	# scans that agree.
	sleep 5
	echo scan >$f && echo scan >$f || return 1
	out=$(cat $f) || { echo "kmemleak is off (it disables itself when out of memory)"; return 1; }
	[ -z "$out" ] || { echo "$out" | head -40; return 1; }
	echo "= kmemleak: no leak"
}

# Addresses of $DRIVER's code: the first and past the last of its text symbols.
driver_text() {
	[ "$(cat /proc/sys/kernel/kptr_restrict)" = 0 ] || echo 0 >/proc/sys/kernel/kptr_restrict
	awk -v m="[$DRIVER]" '$4 == m && ($2 == "t" || $2 == "T") { print $1 }' /proc/kallsyms |
		sort | sed -n '1p;$p' | tr '\n' ' '
}

# Addresses of DMA-API debugging's code (kernel/dma/debug.c, one stretch of text): the
# allocations it makes under the driver's calls are not the driver's, and when one fails it
# switches itself off for good ("cacheline tracking ENOMEM, dma-debug disabled").
dma_debug_text() {
	local m a lo= hi=
	m=$(awk '$3 == "debug_dma_map_phys" { print $1 }' /proc/kallsyms)
	[ -n "$m" ] || return 0
	# Kernel text addresses: bash's signed 64-bit arithmetic orders them correctly.
	for a in $(awk '($2 == "t" || $2 == "T") && $3 ~ /^(debug_dma_|dma_debug_|dma_entry_|add_dma_entry|check_unmap|check_sync|active_cacheline_|__hash_bucket_find)/ { print $1 }' /proc/kallsyms); do
		# Not the init code (dma_debug_init and its command-line parsers), far away.
		[ $((0x$a - 0x$m)) -gt -1048576 ] && [ $((0x$a - 0x$m)) -lt 1048576 ] || continue
		[ -z "$lo" ] || [ $((0x$a)) -lt $((lo)) ] && lo=0x$a
		[ -z "$hi" ] || [ $((0x$a)) -gt $((hi)) ] && hi=0x$a
	done
	printf '%s 0x%x\n' "$lo" $((hi + 0x4000))
}

INJECT_TIMES=1000000
inject_start() {
	local d=/sys/kernel/debug/$1 key
	[ -d "$d" ] || { echo "no $d in this kernel"; return 1; }
	# /proc/kallsyms takes seconds to read in a sanitizer guest: read it again only when the
	# driver was loaded anew.
	key=$(cat "/sys/module/$DRIVER/sections/.text" 2>/dev/null)
	if [ "$key" != "${INJECT_KEY:-}" ]; then
		INJECT_TEXT=($(driver_text))
		INJECT_DBG=($(dma_debug_text))
		INJECT_KEY=$key
	fi
	[ ${#INJECT_TEXT[@]} -eq 2 ] || { echo "no text symbols of $DRIVER"; return 1; }
	echo 0 >"$d/probability"
	echo "0x${INJECT_TEXT[0]}" >"$d/require-start"
	# Past the last function's start: the largest function is well below 64 KiB.
	printf '0x%x\n' $((0x${INJECT_TEXT[1]} + 0x10000)) >"$d/require-end"
	echo 32 >"$d/stacktrace-depth"
	if [ ${#INJECT_DBG[@]} -eq 2 ]; then
		echo "${INJECT_DBG[0]}" >"$d/reject-start"
		echo "${INJECT_DBG[1]}" >"$d/reject-end"
	fi
	echo N >"$d/task-filter"
	echo N >"$d/ignore-gfp-wait"
	[ "$1" != fail_page_alloc ] || { echo N >"$d/ignore-gfp-highmem"; echo 0 >"$d/min-order"; }
	echo 0 >"$d/verbose"
	echo 0 >"$d/space"
	echo 1 >"$d/interval"
	echo $INJECT_TIMES >"$d/times"
	echo "$2" >"$d/probability"
}

inject_stop() {
	local d=/sys/kernel/debug/$1
	echo 0 >"$d/probability"
	echo "= $1: $((INJECT_TIMES - $(cat "$d/times"))) allocations failed"
}

# `remote ping ... &` would give the PID of a subshell: killing it leaves ping flooding.
flood_start() {
	ip netns exec remote ping -f -W 1 -q 192.0.2.1 >/dev/null 2>&1 &
}

flood_stop() {
	local i
	pkill -f '^ping -f -W 1 -q 192.0.2.1$'
	for ((i = 0; i < 50; i++)); do
		pgrep -f '^ping -f -W 1 -q 192.0.2.1$' >/dev/null || return 0
		nap 0.1
	done
	echo "the flood did not stop"
	return 1
}
