#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The device-model scenarios (run by scripts/vm in the guest, for any driver and personality):
# probe, link, ethtool, ping v4/v6 both ways, iperf3 both ways, jumbo (Mikrotik), rx
# checksumming (Mikrotik), down/up, and the sim's counters against `ip -s link` on both ends.
#
# Prints one "ok N - name" / "not ok N - name" line per check, then "N passed, N failed";
# exits non-zero if any check failed.
set -u
source "$VM_LIB"

# Quiet the stack so that counters can be compared at rest.
for c in /proc/sys/net/ipv6/conf/*/accept_ra /proc/sys/net/ipv6/conf/*/router_solicitations; do
	echo 0 >"$c" 2>/dev/null
done
remote sh -c 'for c in /proc/sys/net/ipv6/conf/*/accept_ra; do echo 0 >$c; done'
# The peer's NIC must count every frame the card sends: without promiscuous mode its MAC
# filter silently drops multicast it has not joined (MLD reports, ...).
remote ip link set peer0 promisc on

# Counter baseline: the comparison covers the traffic from here on.
snapshot() {
	python3 - "$SIM_STATS" <<'PY'
import json, subprocess, sys, time
def link(ns, dev):
    cmd = ["ip", "-s", "-j", "link", "show", dev]
    if ns:
        cmd = ["ip", "netns", "exec", ns] + cmd
    return json.loads(subprocess.check_output(cmd))[0]["stats64"]
dut = link(None, "eth0")
peer = link("remote", "peer0")
time.sleep(0.1)  # the model refreshes its stats file every 20 ms
sim = json.load(open(sys.argv[1]))
print(json.dumps({"dut": dut, "peer": peer, "sim": sim}))
PY
}
sleep 0.5
baseline=$(snapshot)



ethtool_speed() {
	local want out
	case $PERSONALITY in
	mikrotik) want=10000Mb/s ;;
	*) want=1000Mb/s ;;
	esac
	out=$(ethtool eth0) || return 1
	echo "$out"
	echo "$out" | grep -q "Speed: $want" || { echo "expected Speed: $want"; return 1; }
	echo "$out" | grep -q "Duplex: Full" || return 1
	echo "$out" | grep -q "Link detected: yes"
}


iperf() { # -R for the reverse direction
	local out
	iperf_server || return 1
	out=$(iperf3 -c 192.0.2.2 -t 10 -J "$@") || { echo "$out" | tail -20; return 1; }
	python3 - "$out" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
if "error" in r:
    sys.exit("iperf3 error: " + r["error"])
s = r["end"]["sum_sent"]
rcv = r["end"]["sum_received"]
print(f"sent {s['bytes']} B, received {rcv['bytes']} B, "
      f"{rcv['bits_per_second'] / 1e6:.1f} Mbit/s, retransmits {s.get('retransmits', 0)}")
if rcv["bytes"] <= 0:
    sys.exit("nothing received")
PY
}

jumbo() {
	ip link set eth0 mtu 9000 || return 1
	remote ip link set peer0 mtu 9000 || return 1
	link_up || return 1
	ping_ok ping -c 20 -i 0.05 -W 2 -M do -s 8972 192.0.2.2 || return 1
	ping_ok remote ping -c 20 -i 0.05 -W 2 -M do -s 8972 192.0.2.1 || return 1
	ip link set eth0 mtu 1500
	remote ip link set peer0 mtu 1500
	link_up
}

# The Mikrotik NIC flags TCP/UDP frames with a good checksum (RRD word 3 bit 19). atl1c_rs
# advertises it as rx-checksumming; the upstream C driver uses the bit without advertising
# NETIF_F_RXCSUM, so for it the check is that the model did flag received frames.
rx_csum_on() {
	python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["rx_l4_csum_good"]; print("rx_l4_csum_good", n); sys.exit(n == 0)' "$SIM_STATS" || return 1
	ethtool -k eth0 | grep -E '^rx-checksumming'
	[ "$DRIVER" = atl1c ] || ethtool -k eth0 | grep -qE '^rx-checksumming: on'
}

down_up() {
	ip link set eth0 down || return 1
	sleep 1
	ip link set eth0 up || return 1
	link_up || return 1
	ip addr show eth0 | grep -q 192.0.2.1 || return 1
	ping_ok ping -c 20 -i 0.05 -W 2 192.0.2.2
}

# The model's counters must agree with what both ends' kernels counted over the scenario.
# Background traffic (IPv6 MLD, ...) can land between the reads: compare at rest, retry.
counters_agree() {
	local i now
	for i in 1 2 3 4 5; do
		sleep 0.5
		now=$(snapshot) || return 1
		if python3 - "$baseline" "$now" <<'PY'; then return 0; fi
import json, os, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
def d(path):
    x, y = a, b
    for k in path:
        x, y = x[k], y[k]
    return y - x
sim = lambda k: d(["sim", k])
checks = [
    ("sim tx_frames - wire_tx_dropped == peer rx packets",
     sim("tx_frames") - sim("wire_tx_dropped"), d(["peer", "rx", "packets"])),
    ("sim rx_frames + rx_dropped + rx_filtered == peer tx packets",
     sim("rx_frames") + sim("rx_dropped") + sim("rx_filtered"), d(["peer", "tx", "packets"])),
    ("sim tx_frames == eth0 tx packets", sim("tx_frames"), d(["dut", "tx", "packets"])),
    # The C driver reports rx_packets = rx_ok + rx_errors, and counts the MAC's RFD overflows
    # (rx_rrd_ov) in both rx_errors and rx_dropped.
    ("sim rx_frames (+ rx_dropped for atl1c) == eth0 rx packets",
     sim("rx_frames") + (sim("rx_dropped") if os.environ["DRIVER"] == "atl1c" else 0),
     d(["dut", "rx", "packets"])),
    ("sim rx_dropped == eth0 rx dropped", sim("rx_dropped"), d(["dut", "rx", "dropped"])),
]
for name, x, y in checks:
    print(f"{'ok ' if x == y else 'BAD'} {name}: {x} vs {y}")
errs = b["sim"]["protocol_errors"]
print("protocol_errors:", errs)
sys.exit(1 if errs or any(x != y for _, x, y in checks) else 0)
PY
	done
	return 1
}

check "probe: eth0 is the card, bound to $DRIVER" dut_probed
check "link up" link_up
check "ethtool eth0 speed/duplex ($PERSONALITY)" ethtool_speed
check "ping IPv4 DUT -> peer, 200 packets" ping_ok ping -c 200 -i 0.01 -W 2 192.0.2.2
check "ping IPv4 peer -> DUT, 200 packets" ping_ok remote ping -c 200 -i 0.01 -W 2 192.0.2.1
check "ping IPv6 DUT -> peer, 200 packets" ping_ok ping -6 -c 200 -i 0.01 -W 2 2001:db8::2
check "ping IPv6 peer -> DUT, 200 packets" ping_ok remote ping -6 -c 200 -i 0.01 -W 2 2001:db8::1
check "iperf3 TCP 10 s, DUT -> peer" iperf
check "iperf3 TCP 10 s, peer -> DUT" iperf -R
if [ "$PERSONALITY" = mikrotik ]; then
	check "MTU 9000: ping -M do -s 8972 both ways" jumbo
	check "rx checksum offload (ethtool -k rx-checksumming on for atl1c_rs)" rx_csum_on
fi
check "down/up" down_up
check "sim counters agree with ip -s link on both ends" counters_agree

# The cable: the model takes the link down and up (SIM_CONTROL); the carrier follows and
# traffic resumes.
link_flap() {
	local i
	sim_control "link down"
	for i in $(seq 100); do
		[ "$(cat /sys/class/net/eth0/carrier)" = 0 ] && break
		sleep 0.1
	done
	[ "$(cat /sys/class/net/eth0/carrier)" = 0 ] || { echo "carrier still on"; return 1; }
	ethtool eth0 | grep -q "Link detected: no" || return 1
	sim_control "link up"
	link_up || return 1
	ping_ok ping -c 20 -i 0.05 -W 2 192.0.2.2
}

check "link flap: carrier follows the link, traffic resumes" link_flap
check "kernel log: no warning, oops or lockdep report" kernel_log_clean
check "rmmod $DRIVER leaves no net_device behind" driver_unloads

summary
