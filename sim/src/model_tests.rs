// SPDX-License-Identifier: GPL-2.0

//! Host tests of the device model: register semantics, ring processing, interrupts and timers,
//! driven the way the C driver drives the card.

use std::time::Duration;

use crate::device::{Device, Personality};
use crate::net;
use crate::phy;
use crate::regs::{self, queue, Register};
use crate::ring::{self, tpd, Rrd, Tpd};
use crate::testbed;
use crate::MemEnv;

const MAC: [u8; 6] = [0x00, 0x13, 0x74, 0x00, 0x5c, 0x38];
const MEM: usize = 1 << 20;
const TPD_BASE: u64 = 0x1_0000;
const RFD_BASE: u64 = 0x2_0000;
const RRD_BASE: u64 = 0x3_0000;
const BUFS: u64 = 0x4_0000;
const RING: u16 = 64;

type TestEnv = MemEnv;

fn w32(d: &mut Device, e: &mut TestEnv, off: usize, v: u32) {
    testbed::w32(d, e, off, v);
}

fn r32(d: &mut Device, e: &mut TestEnv, off: usize) -> u32 {
    d.mmio_read(e, off as u64, 4) as u32
}

const LAYOUT: testbed::Layout = testbed::Layout {
    tpd: TPD_BASE,
    rfd: RFD_BASE,
    rrd: RRD_BASE,
    ring: RING,
    rx_buf: 1536,
};

/// A card brought up the way atl1c_configure + atl1c_start_mac leave it, with MSI-style
/// interrupts unmasked and no moderation.
fn up(pers: Personality) -> (Device, TestEnv) {
    let mut d = Device::new(pers, MAC);
    let mut e = TestEnv::new();
    testbed::up(&mut d, &mut e, LAYOUT);
    (d, e)
}

/// Posts `n` RFDs on queue `q` (buffers of 1536 bytes) and writes the producer index.
fn post_rfds(d: &mut Device, e: &mut TestEnv, q: usize, n: u16) {
    for i in 0..n {
        let addr = BUFS + (q as u64 * 0x1_0000) + u64::from(i) * 2048;
        testbed::put_rfd(e, LAYOUT, q, i, addr);
    }
    w32(d, e, queue::RFD_PROD_IDX[q], u32::from(n));
}

fn frame(dst: [u8; 6], len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
    for (i, b) in f.iter_mut().enumerate().skip(14) {
        *b = i as u8;
    }
    f
}

#[test]
fn identification_and_link_registers() {
    let mut e = TestEnv::new();
    let mut mt = Device::new(Personality::Mikrotik, MAC);
    assert_eq!(
        r32(&mut mt, &mut e, regs::MT_MAGIC_REG::OFFSET),
        regs::MT_MAGIC
    );
    assert_eq!(r32(&mut mt, &mut e, regs::MT_SPEED::OFFSET), 10000);
    mt.set_link(&mut e, false);
    assert_eq!(r32(&mut mt, &mut e, regs::MT_SPEED::OFFSET), 0);
    let mut ar = Device::new(Personality::Ar8151, MAC);
    assert_eq!(r32(&mut ar, &mut e, regs::MT_MAGIC_REG::OFFSET), 0);
    let lo = r32(&mut ar, &mut e, regs::MAC_STA_ADDR::OFFSET);
    let hi = r32(&mut ar, &mut e, regs::MAC_STA_ADDR_HI::OFFSET);
    assert_eq!(regs::regs_to_mac(lo, hi), MAC);
}

#[test]
fn soft_reset_clears_itself_and_idles() {
    let mut e = TestEnv::new();
    let mut d = Device::new(Personality::Ar8151, MAC);
    w32(&mut d, &mut e, regs::TXQ_CTRL::OFFSET, 0x20);
    w32(&mut d, &mut e, regs::MASTER_CTRL::OFFSET, 0xce1);
    assert_eq!(r32(&mut d, &mut e, regs::MASTER_CTRL::OFFSET), 0xce0);
    assert_eq!(r32(&mut d, &mut e, regs::IDLE_STATUS::OFFSET) & 0xf, 0);
    assert_eq!(r32(&mut d, &mut e, regs::TXQ_CTRL::OFFSET), 0);
}

fn mdio_read(d: &mut Device, e: &mut TestEnv, reg: u32) -> u16 {
    let v = regs::MDIO_CTRL::default()
        .with_bit(regs::MDIO_CTRL::START, true)
        .with_bit(regs::MDIO_CTRL::OP_READ, true)
        .with_bit(regs::MDIO_CTRL::SPRES_PRMBL, true)
        .with_field(regs::MDIO_CTRL::REG, reg);
    w32(d, e, regs::MDIO_CTRL::OFFSET, v.raw());
    let r = regs::MDIO_CTRL(r32(d, e, regs::MDIO_CTRL::OFFSET));
    assert!(!r.bit(regs::MDIO_CTRL::BUSY) && !r.bit(regs::MDIO_CTRL::START));
    r.field(regs::MDIO_CTRL::DATA) as u16
}

#[test]
fn mdio_reaches_the_phy_on_ar8151_only() {
    let mut e = TestEnv::new();
    let mut ar = Device::new(Personality::Ar8151, MAC);
    assert_eq!(mdio_read(&mut ar, &mut e, 2), 0x004d);
    assert_eq!(mdio_read(&mut ar, &mut e, 0x11), 0xbc00);
    let mut mt = Device::new(Personality::Mikrotik, MAC);
    assert_eq!(mdio_read(&mut mt, &mut e, 2), 0xffff);
}

fn mdio_write(d: &mut Device, e: &mut TestEnv, reg: u32, data: u16) {
    let v = regs::MDIO_CTRL::default()
        .with_bit(regs::MDIO_CTRL::START, true)
        .with_bit(regs::MDIO_CTRL::SPRES_PRMBL, true)
        .with_field(regs::MDIO_CTRL::REG, reg)
        .with_field(regs::MDIO_CTRL::DATA, u32::from(data));
    w32(d, e, regs::MDIO_CTRL::OFFSET, v.raw());
}

#[test]
fn a_soft_reset_keeps_the_phy_interrupt_the_driver_has_not_read() {
    let gphy = regs::ISR::GPHY.mask();
    let soft_reset = |d: &mut Device, e: &mut TestEnv| {
        w32(d, e, regs::MASTER_CTRL::OFFSET, 0xce1);
    };
    let (mut d, mut e) = up(Personality::Ar8151);
    mdio_write(
        &mut d,
        &mut e,
        0x12,
        phy::PHY_ISR_LINK_UP | phy::PHY_ISR_LINK_DOWN,
    );
    d.set_link(&mut e, false);
    d.set_link(&mut e, true);
    assert_eq!(r32(&mut d, &mut e, regs::ISR::OFFSET) & gphy, gphy);
    // atl1c_check_link_status resets the MAC for the link down before it looks again.
    soft_reset(&mut d, &mut e);
    assert_eq!(
        r32(&mut d, &mut e, regs::ISR::OFFSET) & gphy,
        gphy,
        "the PHY still signals the link-up"
    );
    assert_eq!(
        mdio_read(&mut d, &mut e, 0x13),
        phy::PHY_ISR_LINK_UP | phy::PHY_ISR_LINK_DOWN
    );
    w32(&mut d, &mut e, regs::ISR::OFFSET, gphy);
    soft_reset(&mut d, &mut e);
    assert_eq!(
        r32(&mut d, &mut e, regs::ISR::OFFSET) & gphy,
        0,
        "read and acked"
    );
    // The Mikrotik NIC has no PHY: its link status goes with the reset.
    let (mut mt, mut e) = up(Personality::Mikrotik);
    mt.set_link(&mut e, false);
    soft_reset(&mut mt, &mut e);
    assert_eq!(r32(&mut mt, &mut e, regs::ISR::OFFSET) & gphy, 0);
}

#[test]
fn mac_stats_clear_on_read() {
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 8);
    d.receive(&mut e, &frame(MAC, 100));
    assert_eq!(r32(&mut d, &mut e, regs::stats::RX_BIN), 1);
    assert_eq!(r32(&mut d, &mut e, regs::stats::RX_BIN), 0);
    assert_eq!(r32(&mut d, &mut e, regs::stats::RX_BIN + 7 * 4), 100);
}

/// Writes a one-TPD frame at `idx` of queue 0.
fn post_tpd(e: &mut TestEnv, idx: u16, data: &[u8], word1: u32) {
    let addr = BUFS + 0x8_0000 + u64::from(idx) * 2048;
    e.put(addr, data);
    testbed::put_tpd(e, LAYOUT, idx, addr, data.len(), word1);
}

fn doorbell(d: &mut Device, e: &mut TestEnv, q: usize, pidx: u16) {
    testbed::doorbell(d, e, q, pidx);
}

#[test]
fn tx_ring_transmits_and_completes() {
    let (mut d, mut e) = up(Personality::Ar8151);
    let f = frame([2, 0, 0, 0, 0, 2], 200);
    post_tpd(&mut e, 0, &f, 0);
    post_tpd(&mut e, 1, &f[..60], 0);
    doorbell(&mut d, &mut e, 0, 2);
    assert_eq!(e.wire.len(), 2);
    assert_eq!(e.wire[0], f);
    assert_eq!(d.mmio_read(&mut e, queue::TPD_CIDX[0] as u64, 2), 2);
    assert_eq!(d.counters.doorbells, [1, 0, 0, 0]);
    assert_eq!(d.counters.tx_frames[0], 2);
    assert_eq!(e.irqs, 1);
    assert_ne!(
        r32(&mut d, &mut e, regs::ISR::OFFSET) & regs::ISR_TX_PKT[0],
        0
    );
}

#[test]
fn tx_hang_fault_lasts_until_soft_reset() {
    let (mut d, mut e) = up(Personality::Ar8151);
    let f = frame([2, 0, 0, 0, 0, 2], 64);
    post_tpd(&mut e, 0, &f, 0);
    d.hang_tx();
    doorbell(&mut d, &mut e, 0, 1);
    assert!(e.wire.is_empty());
    assert_eq!(d.counters.doorbells[0], 1);
    w32(&mut d, &mut e, regs::MASTER_CTRL::OFFSET, 1);
    // After the reset the driver reprograms the queues; the engine works again.
    let (mut d2, mut e2) = (d, e);
    w32(
        &mut d2,
        &mut e2,
        regs::TXQ_CTRL::OFFSET,
        regs::TXQ_CTRL::EN.mask(),
    );
    let mac = regs::MAC_CTRL::default().with_bit(regs::MAC_CTRL::TX_EN, true);
    w32(&mut d2, &mut e2, regs::MAC_CTRL::OFFSET, mac.raw());
    w32(&mut d2, &mut e2, regs::LOAD_PTR::OFFSET, 1);
    post_tpd(&mut e2, 0, &f, 0);
    doorbell(&mut d2, &mut e2, 0, 1);
    assert_eq!(e2.wire.len(), 1);
}

#[test]
fn dma_error_raises_the_reset_conditions_and_is_counted() {
    use crate::faults::Fault;
    let (mut d, mut e) = up(Personality::Mikrotik);
    d.inject(&mut e, Fault::DmaError);
    assert_eq!(e.irqs, 1);
    let isr = r32(&mut d, &mut e, regs::ISR::OFFSET);
    assert_eq!(
        isr & regs::ISR_ERROR,
        regs::ISR::DMAR_TO_RST.mask() | regs::ISR::DMAW_TO_RST.mask()
    );
    assert_eq!(d.faults().injected.get("dma_error"), Some(&1));
}

#[test]
fn reset_stuck_keeps_the_mac_busy_until_reset_ok() {
    use crate::faults::Fault;
    let mut e = TestEnv::new();
    let mut d = Device::new(Personality::Ar8151, MAC);
    d.inject(&mut e, Fault::ResetStuck);
    w32(&mut d, &mut e, regs::MASTER_CTRL::OFFSET, 1);
    let busy = regs::IDLE_STATUS::BUSY.mask();
    assert_eq!(r32(&mut d, &mut e, regs::IDLE_STATUS::OFFSET) & busy, busy);
    assert_eq!(d.faults().injected.get("reset_stuck"), Some(&1));
    d.inject(&mut e, Fault::ResetOk);
    w32(&mut d, &mut e, regs::MASTER_CTRL::OFFSET, 1);
    assert_eq!(r32(&mut d, &mut e, regs::IDLE_STATUS::OFFSET) & busy, 0);
    assert_eq!(d.faults().injected.get("reset_stuck"), Some(&1));
    assert_eq!(Fault::from_command("reset  stuck"), None);
}

#[test]
fn tx_waits_for_eop() {
    let (mut d, mut e) = up(Personality::Ar8151);
    let f = frame([2, 0, 0, 0, 0, 2], 120);
    // First half without EOP, second half with it.
    let t = Tpd {
        buffer_len: 60,
        vlan_tag: 0,
        word1: 0,
        buffer_addr: BUFS,
    };
    e.put(BUFS, &f[..60]);
    e.put(TPD_BASE, &t.to_bytes());
    doorbell(&mut d, &mut e, 0, 1);
    assert!(e.wire.is_empty());
    assert_eq!(d.mmio_read(&mut e, queue::TPD_CIDX[0] as u64, 2), 0);
    let t2 = Tpd {
        buffer_len: 60,
        vlan_tag: 0,
        word1: tpd::EOP.mask(),
        buffer_addr: BUFS + 60,
    };
    e.put(BUFS + 60, &f[60..]);
    e.put(TPD_BASE + 16, &t2.to_bytes());
    doorbell(&mut d, &mut e, 0, 2);
    assert_eq!(e.wire, vec![f]);
}

#[test]
fn tx_checksum_offload_and_tso() {
    let (mut d, mut e) = up(Personality::Mikrotik);
    let payload: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
    let good = crate::net::tests_support::tcp4(&payload);
    // TSO: header + payload in one buffer (the C driver uses two; the device does not care).
    let mut w1 = tpd::LSO_EN.mask() | tpd::IPV4_PACKET.mask();
    w1 |= 34; // TCP header offset
    w1 |= 1448 << 18; // MSS
    let mut big = good.clone();
    big[50..52].copy_from_slice(&[0, 0]);
    big[24..26].copy_from_slice(&[0, 0]);
    let addr = BUFS + 0x8_0000;
    e.put(addr, &big);
    let t = Tpd {
        buffer_len: big.len() as u16,
        vlan_tag: 0,
        word1: w1 | tpd::EOP.mask(),
        buffer_addr: addr,
    };
    e.put(TPD_BASE, &t.to_bytes());
    doorbell(&mut d, &mut e, 0, 1);
    assert_eq!(e.wire.len(), 3);
    assert!(e.wire.iter().all(|s| net::l4_csum_ok(s) && s.len() <= 1514));
    assert_eq!(d.counters.tso_frames, 1);
}

#[test]
fn rx_writes_frame_and_rrd_the_driver_accepts() {
    let (mut d, mut e) = up(Personality::Mikrotik);
    w32(&mut d, &mut e, regs::MT_MODE::OFFSET, 0); // one queue
    post_rfds(&mut d, &mut e, 0, 8);
    let f = crate::net::tests_support::tcp4(b"payload");
    let mut f2 = f.clone();
    f2[..6].copy_from_slice(&MAC);
    d.receive(&mut e, &f2);
    let rrd = Rrd::from_bytes(e.get(RRD_BASE, 16).try_into().expect("16 bytes"));
    assert!(rrd.is_updated());
    // The driver's own RRD checks accept what the model wrote.
    let got = ring::check_rrd(&rrd, RING, 0, 1536, true).expect("valid RRD");
    assert_eq!(usize::from(got.len), f2.len());
    assert!(got.l4_csum_ok);
    assert_eq!(e.get(BUFS, f2.len()), &f2[..]);
    let fcs = net::crc32(&f2).to_le_bytes();
    assert_eq!(e.get(BUFS + f2.len() as u64, 4), &fcs);
    assert_eq!(d.mmio_read(&mut e, 0x15f8, 2), 1);
    assert_eq!(e.irqs, 1);
}

#[test]
fn rx_without_free_rfd_is_dropped_and_counted() {
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 2);
    for _ in 0..4 {
        d.receive(&mut e, &frame(MAC, 64));
    }
    assert_eq!(d.counters.rx_frames[0], 2);
    assert_eq!(d.counters.rx_dropped[0], 2);
    // rx_rrd_ov is the C driver's rx_dropped.
    assert_eq!(r32(&mut d, &mut e, regs::stats::RX_BIN + 19 * 4), 2);
}

#[test]
fn every_frame_from_the_wire_lands_in_one_counter_with_a_reason() {
    use crate::device::RxFiltered;
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 2);
    let sent = [
        frame(MAC, 64),                // received
        frame([2, 9, 9, 9, 9, 9], 64), // address
        frame(MAC, 64)[..13].to_vec(), // runt
        frame(MAC, 64),                // received
        frame(MAC, 64),                // no free RFD: rx_dropped
        frame(MAC, 1600),              // oversize
    ];
    for f in &sent {
        d.receive(&mut e, f);
    }
    // The driver stops the receiver (MAC soft reset clears RX_EN).
    w32(
        &mut d,
        &mut e,
        regs::MASTER_CTRL::OFFSET,
        regs::MASTER_CTRL::default()
            .with_bit(regs::MASTER_CTRL::SOFT_RST, true)
            .raw(),
    );
    d.receive(&mut e, &frame(MAC, 64));
    d.set_link(&mut e, false);
    d.receive(&mut e, &frame(MAC, 64));
    let c = &d.counters;
    let by = |r: RxFiltered| c.rx_filtered_by[r as usize];
    assert_eq!(c.rx_frames[0], 2);
    assert_eq!(c.rx_dropped[0], 1);
    assert_eq!(by(RxFiltered::Address), 1);
    assert_eq!(by(RxFiltered::Runt), 1);
    assert_eq!(by(RxFiltered::Oversize), 1);
    assert_eq!(by(RxFiltered::RxOff), 1);
    assert_eq!(by(RxFiltered::LinkDown), 1);
    assert_eq!(by(RxFiltered::DriverError), 0);
    assert_eq!(c.rx_filtered, c.rx_filtered_by.iter().sum::<u64>());
    assert_eq!(
        c.rx_frames[0] + c.rx_dropped[0] + c.rx_filtered,
        sent.len() as u64 + 2
    );
}

#[test]
fn rx_filters_other_unicast_and_takes_broadcast() {
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 8);
    d.receive(&mut e, &frame([2, 9, 9, 9, 9, 9], 64));
    assert_eq!(d.counters.rx_frames[0], 0);
    d.receive(&mut e, &frame([0xff; 6], 64));
    assert_eq!(d.counters.rx_frames[0], 1);
}

#[test]
fn multicast_hash_matches_the_c_driver() {
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 8);
    let mc = [0x33, 0x33, 0xff, 0x00, 0x5c, 0x38];
    d.receive(&mut e, &frame(mc, 64));
    assert_eq!(d.counters.rx_frames[0], 0, "hash bit not set yet");
    // atl1c_hash_mc_addr + atl1c_hash_set, computed the C way.
    let crc = !net::crc32(&mc);
    let mut value = 0u32;
    for i in 0..32 {
        value |= ((crc >> i) & 1) << (31 - i);
    }
    let reg = regs::RX_HASH_TABLE::OFFSET + 4 * ((value >> 31) & 1) as usize;
    w32(&mut d, &mut e, reg, 1 << ((value >> 26) & 0x1f));
    d.receive(&mut e, &frame(mc, 64));
    assert_eq!(d.counters.rx_frames[0], 1);
}

/// Sets the tx moderation timer to 2 ms (1000 x 2 us) and sends one frame on queue 0, whose
/// completion interrupts at once; returns the frame.
fn first_moderated_tx(d: &mut Device, e: &mut TestEnv) -> Vec<u8> {
    w32(d, e, regs::IRQ_MODRT_TIMER_INIT::OFFSET, 1000);
    let m = regs::MASTER_CTRL::default().with_bit(regs::MASTER_CTRL::TX_ITIMER_EN, true);
    w32(d, e, regs::MASTER_CTRL::OFFSET, m.raw());
    let f = frame([2, 0, 0, 0, 0, 2], 64);
    post_tpd(e, 0, &f, 0);
    doorbell(d, e, 0, 1);
    f
}

#[test]
fn moderation_holds_back_tx_interrupts() {
    let (mut d, mut e) = up(Personality::Ar8151);
    let f = first_moderated_tx(&mut d, &mut e);
    assert_eq!(e.irqs, 1);
    // Driver acks: ISR write with DIS_INT, then re-enable.
    w32(
        &mut d,
        &mut e,
        regs::ISR::OFFSET,
        regs::ISR_TX_PKT[0] | (1 << 31),
    );
    w32(&mut d, &mut e, regs::ISR::OFFSET, 0);
    e.now += Duration::from_micros(100);
    post_tpd(&mut e, 1, &f, 0);
    doorbell(&mut d, &mut e, 0, 2);
    assert_eq!(e.irqs, 1, "held back by the moderation timer");
    let deadline = d.deadline().expect("a deadline is set");
    assert_eq!(deadline, Duration::from_secs(1) + Duration::from_millis(2));
    e.now = deadline;
    d.tick(&mut e);
    assert_eq!(e.irqs, 2);
    assert_eq!(
        (d.counters.irqs_tx, d.counters.irqs_rx),
        (2, 0),
        "both were tx interrupts"
    );
}

#[test]
fn tx_status_riding_along_an_rx_interrupt_is_not_a_tx_interrupt() {
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 8);
    // rx not moderated.
    let f = first_moderated_tx(&mut d, &mut e);
    let ack = |d: &mut Device, e: &mut TestEnv| {
        let all = regs::ISR_TX_PKT[0] | regs::ISR_RX_PKT[0];
        w32(d, e, regs::ISR::OFFSET, all | (1 << 31));
        w32(d, e, regs::ISR::OFFSET, 0);
    };
    ack(&mut d, &mut e);
    e.now += Duration::from_micros(100);
    post_tpd(&mut e, 1, &f, 0);
    doorbell(&mut d, &mut e, 0, 2);
    assert_eq!(e.irqs, 1, "the second completion waits for the tx timer");
    // A received frame raises an interrupt now; the pending tx status goes with it.
    d.receive(&mut e, &frame(MAC, 64));
    assert_eq!(e.irqs, 2);
    assert_eq!((d.counters.irqs_tx, d.counters.irqs_rx), (1, 1));
}

#[test]
fn a_ring_running_dry_raises_its_underrun_once() {
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 2);
    let ur = regs::ISR_RFD_UR[0];
    w32(&mut d, &mut e, regs::IMR::OFFSET, ur);
    d.receive(&mut e, &frame(MAC, 64));
    d.receive(&mut e, &frame(MAC, 64));
    assert_eq!(
        r32(&mut d, &mut e, regs::ISR::OFFSET) & ur,
        0,
        "buffers left"
    );
    // The first frame dropped raises the underrun; acknowledged, the next ones do not.
    d.receive(&mut e, &frame(MAC, 64));
    assert_ne!(r32(&mut d, &mut e, regs::ISR::OFFSET) & ur, 0);
    assert_eq!(e.irqs, 1);
    w32(&mut d, &mut e, regs::ISR::OFFSET, ur);
    d.receive(&mut e, &frame(MAC, 64));
    assert_eq!(r32(&mut d, &mut e, regs::ISR::OFFSET) & ur, 0);
    assert_eq!(e.irqs, 1);
    // Once a frame has fitted again, the ring can run dry again.
    post_rfds(&mut d, &mut e, 0, 3);
    for _ in 0..2 {
        d.receive(&mut e, &frame(MAC, 64));
    }
    assert_eq!(r32(&mut d, &mut e, regs::ISR::OFFSET) & ur, ur);
    assert_eq!(d.counters.rx_dropped[0], 3);
}

#[test]
fn a_late_ack_clears_what_came_after_it_unless_a_read_flushes_it() {
    use crate::faults::Fault;
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 8);
    let rx = regs::ISR_RX_PKT[0];
    w32(&mut d, &mut e, regs::IMR::OFFSET, rx);
    d.inject(&mut e, Fault::AckDelay(1000));
    d.receive(&mut e, &frame(MAC, 64));
    assert_eq!(e.irqs, 1);
    // The handler acknowledges what it saw; a frame lands before the write does.
    w32(&mut d, &mut e, regs::ISR::OFFSET, rx);
    assert_eq!(d.deadline(), Some(e.now + Duration::from_micros(1000)));
    d.receive(&mut e, &frame(MAC, 64));
    e.now += Duration::from_micros(1000);
    d.tick(&mut e);
    // Its status went with the first one's, and nothing fires for it.
    assert_eq!(r32(&mut d, &mut e, regs::ISR::OFFSET) & rx, 0);
    assert_eq!(e.irqs, 1);
    assert_eq!(d.faults().injected.get("ack_timed_out"), Some(&1));
    // A read after the acknowledgement makes it land first: the next frame keeps its status.
    w32(&mut d, &mut e, regs::ISR::OFFSET, rx);
    r32(&mut d, &mut e, regs::MAC_CTRL::OFFSET);
    d.receive(&mut e, &frame(MAC, 64));
    assert_eq!(r32(&mut d, &mut e, regs::ISR::OFFSET) & rx, rx);
    assert_eq!(e.irqs, 2);
    assert_eq!(d.faults().injected.get("ack_delayed"), Some(&2));
    assert_eq!(d.deadline(), None);
    // Disarmed, a write still queues behind a held one, and is not counted as held.
    w32(&mut d, &mut e, regs::ISR::OFFSET, rx);
    d.inject(&mut e, Fault::AckDelay(0));
    w32(&mut d, &mut e, regs::ISR::OFFSET, rx);
    e.now += Duration::from_micros(1000);
    d.tick(&mut e);
    assert_eq!(d.deadline(), None);
    assert_eq!(d.faults().injected.get("ack_delayed"), Some(&3));
    assert_eq!(d.faults().injected.get("ack_timed_out"), Some(&2));
}

#[test]
fn underrun_off_leaves_a_dry_ring_silent() {
    use crate::faults::Fault;
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 1);
    w32(&mut d, &mut e, regs::IMR::OFFSET, regs::ISR_RFD_UR[0]);
    d.inject(&mut e, Fault::Underrun(false));
    for _ in 0..3 {
        d.receive(&mut e, &frame(MAC, 64));
    }
    assert_eq!(e.irqs, 0);
    assert_eq!(d.counters.rx_dropped[0], 2);
    assert_eq!(d.faults().injected.get("underrun_off"), Some(&1));
}

#[test]
fn a_buffer_at_fc0_is_the_drivers_error() {
    let (mut d, mut e) = up(Personality::Ar8151);
    testbed::put_rfd(&mut e, LAYOUT, 0, 0, BUFS + 0xfc0);
    testbed::put_rfd(&mut e, LAYOUT, 0, 1, BUFS + 0x1000);
    w32(&mut d, &mut e, queue::RFD_PROD_IDX[0], 2);
    d.receive(&mut e, &frame(MAC, 64));
    d.receive(&mut e, &frame(MAC, 64));
    assert_eq!(d.counters.protocol_errors.get("rx_buffer_at_fc0"), Some(&1));
    assert_eq!(d.counters.rx_frames[0], 2);
}

#[test]
fn masked_status_fires_when_unmasked() {
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 8);
    w32(&mut d, &mut e, regs::IMR::OFFSET, 0);
    d.receive(&mut e, &frame(MAC, 64));
    assert_eq!(e.irqs, 0);
    w32(&mut d, &mut e, regs::IMR::OFFSET, regs::ISR_RX_PKT[0]);
    assert_eq!(e.irqs, 1);
}

#[test]
fn retrigger_resends_unacknowledged_interrupt() {
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 8);
    w32(&mut d, &mut e, regs::INT_RETRIG_TIMER::OFFSET, 50000); // 100 ms
    d.receive(&mut e, &frame(MAC, 64));
    assert_eq!(e.irqs, 1);
    e.now += Duration::from_millis(50);
    d.tick(&mut e);
    assert_eq!(e.irqs, 1);
    e.now += Duration::from_millis(60);
    d.tick(&mut e);
    assert_eq!(e.irqs, 2);
}

#[test]
fn bad_driver_behaviour_is_counted_not_fatal() {
    let (mut d, mut e) = up(Personality::Ar8151);
    doorbell(&mut d, &mut e, 0, RING + 5);
    assert_eq!(
        d.counters.protocol_errors.get("tpd_producer_out_of_range"),
        Some(&1)
    );
    // A TPD pointing outside guest memory.
    let t = Tpd {
        buffer_len: 64,
        vlan_tag: 0,
        word1: tpd::EOP.mask(),
        buffer_addr: 1 << 40,
    };
    e.put(TPD_BASE, &t.to_bytes());
    doorbell(&mut d, &mut e, 0, 1);
    assert_eq!(
        d.counters.protocol_errors.get("dma_outside_guest_memory"),
        Some(&1)
    );
    w32(&mut d, &mut e, 0x3000, 1);
    assert_eq!(
        d.counters.protocol_errors.get("write_to_unknown_register"),
        Some(&1)
    );
    assert!(e.wire.is_empty());
}

#[test]
fn ring_pointers_reload_only_with_the_queues_stopped() {
    let (mut d, mut e) = up(Personality::Ar8151);
    let f = frame([2, 0, 0, 0, 0, 2], 200);
    post_tpd(&mut e, 0, &f, 0);
    doorbell(&mut d, &mut e, 0, 1);
    assert_eq!(d.mmio_read(&mut e, queue::TPD_CIDX[0] as u64, 2), 1);
    // Queues running: refused, counted, the consumer index kept.
    w32(&mut d, &mut e, regs::LOAD_PTR::OFFSET, 1);
    assert_eq!(
        d.counters
            .protocol_errors
            .get("load_ptr_with_queues_running"),
        Some(&1)
    );
    assert_eq!(d.mmio_read(&mut e, queue::TPD_CIDX[0] as u64, 2), 1);
    // Stopped (atl1c_stop_mac): reloaded.
    let rxq = r32(&mut d, &mut e, regs::RXQ_CTRL::OFFSET) & !regs::RXQ_CTRL::EN.mask();
    w32(&mut d, &mut e, regs::RXQ_CTRL::OFFSET, rxq);
    let txq = r32(&mut d, &mut e, regs::TXQ_CTRL::OFFSET) & !regs::TXQ_CTRL::EN.mask();
    w32(&mut d, &mut e, regs::TXQ_CTRL::OFFSET, txq);
    w32(&mut d, &mut e, regs::LOAD_PTR::OFFSET, 1);
    assert_eq!(d.mmio_read(&mut e, queue::TPD_CIDX[0] as u64, 2), 0);
    assert_eq!(d.counters.protocol_errors.len(), 1);
}

#[test]
fn mikrotik_spreads_flows_over_four_queues() {
    let (mut d, mut e) = up(Personality::Mikrotik);
    for q in 0..4 {
        post_rfds(&mut d, &mut e, q, 32);
    }
    for port in 0..64u16 {
        let mut f = crate::net::tests_support::tcp4(b"x");
        f[..6].copy_from_slice(&MAC);
        f[34..36].copy_from_slice(&(1000 + port).to_be_bytes());
        d.receive(&mut e, &f);
    }
    assert!(
        d.counters.rx_frames.iter().all(|&n| n > 0),
        "{:?}",
        d.counters.rx_frames
    );
    assert_eq!(d.counters.rx_frames.iter().sum::<u64>(), 64);
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the frame, the frame helpers return instead of panicking.
        #[test]
        fn frame_helpers_never_panic(f in proptest::collection::vec(any::<u8>(), 0..200),
                                     a in 0usize..220, b in 0usize..220, mss in 0usize..2000) {
            let _ = net::l4_csum_ok(&f);
            let _ = net::flow_hash(&f);
            let _ = net::tso(&f, a, mss);
            let mut g = f.clone();
            let _ = net::insert_csum(&mut g, a, b);
            let mut v = f.clone();
            let _ = net::strip_vlan(&mut v);
        }

        /// A driver writing garbage descriptors and registers cannot crash the model.
        #[test]
        fn garbage_rings_never_panic(tpds in proptest::collection::vec(any::<[u8; 16]>(), 1..16),
                                     pidx in any::<u16>(),
                                     writes in proptest::collection::vec((0u32..0x2000, any::<u32>()), 0..16),
                                     rx in proptest::collection::vec(any::<u8>(), 0..300)) {
            let (mut d, mut e) = up(Personality::Mikrotik);
            for (i, t) in tpds.iter().enumerate() {
                e.put(TPD_BASE + i as u64 * 16, t);
            }
            for (off, v) in writes {
                let off = (off & !3) as usize;
                if off != regs::MASTER_CTRL::OFFSET {
                    w32(&mut d, &mut e, off, v);
                }
            }
            doorbell(&mut d, &mut e, 0, pidx);
            doorbell(&mut d, &mut e, 0, (tpds.len() as u16) % RING);
            post_rfds(&mut d, &mut e, 0, 4);
            d.receive(&mut e, &rx);
            let mut rxm = rx.clone();
            if rxm.len() >= 6 {
                rxm[..6].copy_from_slice(&MAC);
            }
            d.receive(&mut e, &rxm);
            e.now += Duration::from_secs(1);
            d.tick(&mut e);
        }
    }
}

/// The stats report the ring geometry and the memory the driver handed the card, from the
/// registers it programmed: 4 queues on Mikrotik (MT_MODE_4Q), 1 on AR8151.
#[test]
fn stats_report_ring_memory() {
    for (pers, queues) in [(Personality::Mikrotik, 4), (Personality::Ar8151, 1)] {
        let (d, _e) = up(pers);
        let r = &d.stats_json()["rings"];
        let n = u64::from(RING);
        assert_eq!(r["queues"], queues);
        assert_eq!(r["tpd"], n);
        assert_eq!(r["rx_buf_size"], 1536);
        assert_eq!(r["descriptor_bytes_per_queue"], n * (16 + 8 + 16));
        assert_eq!(r["rx_buffer_bytes_per_queue"], n * 1536);
    }
}

#[test]
fn rrd_faults_reach_the_descriptors_the_driver_checks() {
    use crate::faults::Fault;
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 8);
    let rrd_at = |e: &TestEnv, i: u64| {
        Rrd::from_bytes(e.get(RRD_BASE + 16 * i, 16).try_into().expect("16 bytes"))
    };
    d.inject(&mut e, Fault::RrdOversize);
    d.receive(&mut e, &frame(MAC, 64));
    d.inject(&mut e, Fault::RxError(1));
    d.receive(&mut e, &frame(MAC, 64));
    d.inject(&mut e, Fault::RrdFuzz(1, 3));
    d.receive(&mut e, &frame(MAC, 64));
    d.receive(&mut e, &frame(MAC, 64));
    // The driver's checks (ring.rs) see each fault for what it is.
    let check = |r: &Rrd, i: u16| ring::check_rrd(r, RING, i, 1536, false);
    assert_eq!(check(&rrd_at(&e, 0), 0), Err(ring::RxError::TooLong));
    assert_eq!(check(&rrd_at(&e, 1), 1), Err(ring::RxError::FrameError));
    let fuzzed = rrd_at(&e, 2);
    assert!(fuzzed.is_updated());
    assert!(check(&fuzzed, 2).is_err());
    assert!(check(&rrd_at(&e, 3), 3).is_ok());
    // Each frame still took an RFD: the card consumed them in order.
    assert_eq!(d.counters.rx_frames[0], 4);
    let f = &d.faults().injected;
    assert_eq!(
        (f.get("rrd_oversize"), f.get("rx_error"), f.get("rrd_fuzz")),
        (Some(&1), Some(&1), Some(&1))
    );
}

#[test]
fn tx_cidx_fault_lasts_until_soft_reset() {
    use crate::faults::Fault;
    let (mut d, mut e) = up(Personality::Mikrotik);
    d.inject(&mut e, Fault::TxCidx(0xffff));
    assert_eq!(d.mmio_read(&mut e, 0x15f4, 4), 0xffff_ffff);
    assert_eq!(d.faults().injected.get("tx_cidx"), Some(&1));
    w32(&mut d, &mut e, regs::MASTER_CTRL::OFFSET, 1);
    assert_eq!(d.mmio_read(&mut e, 0x15f4, 4), 0);
}

#[test]
fn lost_interrupts_come_back_with_the_retrigger() {
    use crate::faults::Fault;
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 8);
    w32(&mut d, &mut e, regs::INT_RETRIG_TIMER::OFFSET, 50000); // 100 ms
    d.inject(&mut e, Fault::IrqLose(1));
    d.receive(&mut e, &frame(MAC, 64));
    assert_eq!(e.irqs, 0);
    assert_eq!(d.faults().injected.get("irq_lost"), Some(&1));
    e.now += Duration::from_millis(110);
    d.tick(&mut e);
    assert_eq!(e.irqs, 1);
    assert_eq!(d.counters.irq_retriggers, 1);
}

#[test]
fn a_removed_card_reads_all_ones_and_does_nothing() {
    use crate::faults::Fault;
    let (mut d, mut e) = up(Personality::Mikrotik);
    post_rfds(&mut d, &mut e, 0, 8);
    d.inject(&mut e, Fault::SurpriseRemoval);
    assert_eq!(r32(&mut d, &mut e, regs::MASTER_CTRL::OFFSET), u32::MAX);
    assert_eq!(d.mmio_read(&mut e, 0x15f4, 2), 0xffff);
    w32(&mut d, &mut e, regs::IMR::OFFSET, 0);
    d.receive(&mut e, &frame(MAC, 64));
    let f = frame([2, 0, 0, 0, 0, 2], 64);
    post_tpd(&mut e, 0, &f, 0);
    doorbell(&mut d, &mut e, 0, 1);
    assert!(e.wire.is_empty());
    assert_eq!(e.irqs, 0);
    assert_eq!(d.counters.rx_frames[0], 0);
    assert_eq!(d.counters.doorbells[0], 0);
    assert_eq!(d.tick(&mut e), None);
    d.inject(&mut e, Fault::SurpriseRemoval);
    assert_eq!(d.faults().injected.get("surprise_removal"), Some(&1));
}

#[test]
fn mdio_stuck_never_completes_until_mdio_ok() {
    use crate::faults::Fault;
    let mut e = TestEnv::new();
    let mut d = Device::new(Personality::Ar8151, MAC);
    d.inject(&mut e, Fault::MdioStuck);
    let start = regs::MDIO_CTRL::default()
        .with_bit(regs::MDIO_CTRL::START, true)
        .with_bit(regs::MDIO_CTRL::OP_READ, true)
        .with_field(regs::MDIO_CTRL::REG, 1);
    w32(&mut d, &mut e, regs::MDIO_CTRL::OFFSET, start.raw());
    let r = regs::MDIO_CTRL(r32(&mut d, &mut e, regs::MDIO_CTRL::OFFSET));
    assert!(r.bit(regs::MDIO_CTRL::BUSY) && r.bit(regs::MDIO_CTRL::START));
    assert_eq!(d.faults().injected.get("mdio_stuck"), Some(&1));
    d.inject(&mut e, Fault::MdioOk);
    assert_ne!(mdio_read(&mut d, &mut e, 1), 0xffff);
}

/// PMCSR power state write (the PCI core's `pci_set_power_state`), PME_En as given.
fn set_power_state(d: &mut Device, e: &mut TestEnv, state: u8, pme_en: bool) {
    let pmcsr = u16::from(state) | if pme_en { 1 << 8 } else { 0 };
    d.config_write(e, 0x44, &pmcsr.to_le_bytes());
}

#[test]
fn d3hot_hides_the_registers_and_d0_resets_them() {
    let (mut d, mut e) = up(Personality::Mikrotik);
    post_rfds(&mut d, &mut e, 0, 8);
    w32(&mut d, &mut e, regs::MAC_STA_ADDR::OFFSET, 0x0102_0304);
    set_power_state(&mut d, &mut e, 3, false);
    assert!(d.asleep());
    assert_eq!(d.counters.pm_d3_entries, 1);
    // Memory space does not answer in D3hot, and the driver is told off for trying.
    assert_eq!(r32(&mut d, &mut e, regs::MAC_CTRL::OFFSET), u32::MAX);
    w32(&mut d, &mut e, regs::IMR::OFFSET, 0);
    assert_eq!(d.counters.protocol_errors.get("mmio_in_d3"), Some(&2));
    // No DMA: a frame from the wire is not received.
    d.receive(&mut e, &frame(MAC, 100));
    assert_eq!(d.counters.rx_frames[0], 0);
    assert_eq!(d.counters.rx_filtered, 1);
    set_power_state(&mut d, &mut e, 0, false);
    assert!(!d.asleep());
    assert_eq!(d.counters.pm_resets, 1);
    // Every register at its power-on value: the MAC and queues off, the station address the
    // card came with, the counters kept.
    assert_eq!(r32(&mut d, &mut e, regs::MAC_CTRL::OFFSET), 0);
    assert_eq!(r32(&mut d, &mut e, regs::RXQ_CTRL::OFFSET), 0);
    assert_eq!(r32(&mut d, &mut e, regs::IMR::OFFSET), 0);
    assert_eq!(d.mac(), MAC);
    assert_eq!(d.counters.protocol_errors.get("mmio_in_d3"), Some(&2));
}

#[test]
fn function_reset_clears_registers_and_config_space() {
    let (mut d, mut e) = up(Personality::Ar8151);
    post_rfds(&mut d, &mut e, 0, 8);
    w32(&mut d, &mut e, regs::MAC_STA_ADDR::OFFSET, 0x0102_0304);
    // What the PCI core programmed: memory and bus master, MSI on.
    d.config_write(&mut e, 0x04, &0x0006u16.to_le_bytes());
    d.config_write(&mut e, 0x4a, &0x0081u16.to_le_bytes());
    assert!(d.cfg.bus_master() && d.cfg.msi_enabled());
    d.function_reset();
    assert_eq!(d.counters.pci_resets, 1);
    assert_eq!(d.counters.pm_resets, 0);
    // Configuration space and registers at their power-on values; the EEPROM's station
    // address loaded again.
    assert!(!d.cfg.bus_master() && !d.cfg.msi_enabled());
    assert_eq!(r32(&mut d, &mut e, regs::MAC_CTRL::OFFSET), 0);
    assert_eq!(r32(&mut d, &mut e, regs::RXQ_CTRL::OFFSET), 0);
    assert_eq!(r32(&mut d, &mut e, regs::IMR::OFFSET), 0);
    assert_eq!(d.mac(), MAC);
}

/// What `atl1c_power_saving` leaves with WoL `g`: the receiver on with broadcast, and
/// `WOL_CTRL` `MAGIC_EN | MAGIC_PME_EN`.
fn arm_magic(d: &mut Device, e: &mut TestEnv) {
    let mac = regs::MAC_CTRL::default()
        .with_bit(regs::MAC_CTRL::RX_EN, true)
        .with_bit(regs::MAC_CTRL::BC_EN, true);
    w32(d, e, regs::MAC_CTRL::OFFSET, mac.raw());
    let wol = regs::WOL_CTRL::default()
        .with_bit(regs::WOL_CTRL::MAGIC_EN, true)
        .with_bit(regs::WOL_CTRL::MAGIC_PME_EN, true);
    w32(d, e, regs::WOL_CTRL::OFFSET, wol.raw());
}

#[test]
fn a_magic_packet_wakes_an_armed_card_in_d3hot() {
    let (mut d, mut e) = up(Personality::Ar8151);
    arm_magic(&mut d, &mut e);
    d.wake_magic();
    set_power_state(&mut d, &mut e, 3, true);
    // Not for us: another address's magic packet, and an ordinary frame.
    d.receive(&mut e, &net::magic_packet(&[2, 0, 0, 0, 0, 1]));
    d.receive(&mut e, &frame(MAC, 100));
    assert_eq!(d.counters.wol_wake_magic, 0);
    // The one `wake magic` asked for comes 100 ms after D3hot.
    e.now += Duration::from_millis(50);
    d.tick(&mut e);
    assert_eq!(d.counters.wol_wake_magic, 0);
    e.now += Duration::from_millis(60);
    d.tick(&mut e);
    assert_eq!(d.counters.wol_wake_magic, 1);
    assert_eq!(d.counters.pme, 1);
    let mut pmcsr = [0u8; 2];
    d.cfg.read(0x44, &mut pmcsr);
    assert_ne!(u16::from_le_bytes(pmcsr) & 0x8000, 0, "PME_Status");
    // PME_Status is write-one-to-clear.
    d.config_write(&mut e, 0x44, &0x8103u16.to_le_bytes());
    d.cfg.read(0x44, &mut pmcsr);
    assert_eq!(u16::from_le_bytes(pmcsr), 0x0103);
    assert_eq!(d.counters.rx_frames[0], 0);
}

#[test]
fn stats_show_what_would_wake_the_card() {
    let (mut d, mut e) = up(Personality::Ar8151);
    let armed = |d: &Device| d.stats_json()["pm"].clone();
    assert_eq!(armed(&d)["wake_armed"]["magic"], false);
    arm_magic(&mut d, &mut e);
    // Armed in WOL_CTRL, PME not enabled: nothing would signal it.
    set_power_state(&mut d, &mut e, 3, false);
    assert_eq!(armed(&d)["pme_enabled"], false);
    assert_eq!(armed(&d)["wake_armed"]["magic"], false);
    set_power_state(&mut d, &mut e, 3, true);
    let pm = armed(&d);
    assert_eq!(pm["power_state"], 3);
    assert_eq!(pm["pme_enabled"], true);
    assert_eq!(pm["wake_armed"]["magic"], true);
    assert_eq!(pm["wake_armed"]["link_change"], false);
}

#[test]
fn nothing_wakes_a_card_without_wol() {
    let (mut d, mut e) = up(Personality::Mikrotik);
    d.wake_magic();
    set_power_state(&mut d, &mut e, 3, true);
    e.now += Duration::from_millis(200);
    d.tick(&mut e);
    assert_eq!(d.counters.wol_wake_magic, 0);
    assert_eq!(d.counters.pme, 0);
    // The packet came, and was not received.
    assert_eq!(d.counters.rx_filtered, 1);
}

#[test]
fn magic_packets_are_recognised_anywhere_after_the_header() {
    let mac = [0x00, 0x13, 0x74, 0x00, 0x5c, 0x38];
    let m = net::magic_packet(&mac);
    assert!(net::is_magic_packet(&m, &mac));
    assert!(!net::is_magic_packet(&m, &[0, 0x13, 0x74, 0, 0x5c, 0x39]));
    // Inside a UDP datagram (ether-wake -i, wakeonlan): 42 bytes of headers first.
    let mut udp = frame([0xff; 6], 42);
    udp.extend_from_slice(&m[14..]);
    assert!(net::is_magic_packet(&udp, &mac));
    // Cut short.
    assert!(!net::is_magic_packet(&m[..m.len() - 1], &mac));
}

#[test]
fn a_link_coming_up_wakes_a_card_armed_for_it() {
    for armed in [false, true] {
        let (mut d, mut e) = up(Personality::Ar8151);
        if armed {
            let wol = regs::WOL_CTRL::default()
                .with_bit(regs::WOL_CTRL::LINK_CHG_EN, true)
                .with_bit(regs::WOL_CTRL::LINK_CHG_PME_EN, true);
            w32(&mut d, &mut e, regs::WOL_CTRL::OFFSET, wol.raw());
        }
        let irqs = e.irqs;
        d.wake_link();
        set_power_state(&mut d, &mut e, 3, true);
        e.now += Duration::from_millis(100);
        d.tick(&mut e);
        assert!(!d.link());
        // The link going away wakes nothing.
        assert_eq!(d.counters.wol_wake_link, 0);
        e.now += Duration::from_millis(100);
        d.tick(&mut e);
        assert!(d.link());
        assert_eq!(d.counters.wol_wake_link, u64::from(armed));
        assert_eq!(d.counters.pme, u64::from(armed));
        // No interrupt from a card in D3hot.
        assert_eq!(e.irqs, irqs);
    }
}
