// SPDX-License-Identifier: GPL-2.0

//! An idealised driver for in-process use of the model: the card brought up the way
//! atl1c_configure + atl1c_start_mac leave it, and descriptor helpers. The host tests and the
//! model's throughput ceiling (`ceiling`) drive the model through it.

use crate::device::{Device, Env, Personality};
use crate::regs::{self, queue, Register};
use crate::ring::{tpd, Rfd, Tpd, RFD_SIZE, TPD_SIZE};

/// Where the rings and buffers live in guest memory.
#[derive(Clone, Copy)]
pub(crate) struct Layout {
    /// TPD ring of queue 0; queue q's is `q * 0x1000` above (same for RFD and RRD).
    pub(crate) tpd: u64,
    pub(crate) rfd: u64,
    pub(crate) rrd: u64,
    /// Descriptors per ring.
    pub(crate) ring: u16,
    /// Rx buffer size programmed into RX_BUF_SIZE.
    pub(crate) rx_buf: u32,
}

pub(crate) fn w32(d: &mut Device, e: &mut dyn Env, off: usize, v: u32) {
    d.mmio_write(e, off as u64, 4, u64::from(v));
}

/// Brings the card up: rings, sizes, MTU, queues and MAC enabled, interrupts unmasked, no
/// moderation; 4 queues on the Mikrotik NIC.
pub(crate) fn up(d: &mut Device, e: &mut dyn Env, l: Layout) {
    d.cfg.write(0x04, &[0x06, 0x00]); // memory + bus master
    if d.personality() == Personality::Mikrotik {
        w32(d, e, regs::MT_MODE::OFFSET, 1);
    }
    w32(d, e, regs::TX_BASE_ADDR_HI::OFFSET, 0);
    for q in 0..4 {
        let o = q as u32 * 0x1000;
        w32(d, e, queue::TPD_ADDR_LO[q], l.tpd as u32 + o);
        w32(d, e, queue::RFD_HEAD_ADDR_LO[q], l.rfd as u32 + o);
        w32(d, e, queue::RRD_HEAD_ADDR_LO[q], l.rrd as u32 + o);
    }
    w32(d, e, regs::TPD_RING_SIZE::OFFSET, u32::from(l.ring));
    w32(d, e, regs::RFD_RING_SIZE::OFFSET, u32::from(l.ring));
    w32(d, e, regs::RRD_RING_SIZE::OFFSET, u32::from(l.ring));
    w32(d, e, regs::RX_BUF_SIZE::OFFSET, l.rx_buf);
    w32(d, e, regs::MTU::OFFSET, 1522);
    w32(d, e, regs::LOAD_PTR::OFFSET, 1);
    w32(d, e, regs::TXQ_CTRL::OFFSET, regs::TXQ_CTRL::EN.mask());
    w32(d, e, regs::RXQ_CTRL::OFFSET, regs::RXQ_CTRL::EN.mask());
    let mac = regs::MAC_CTRL::default()
        .with_bit(regs::MAC_CTRL::TX_EN, true)
        .with_bit(regs::MAC_CTRL::RX_EN, true)
        .with_bit(regs::MAC_CTRL::BC_EN, true);
    w32(d, e, regs::MAC_CTRL::OFFSET, mac.raw());
    w32(d, e, regs::IMR::OFFSET, !(1u32 << 31));
}

/// Writes the RFD at `idx` of queue `q`, pointing at `buf`.
pub(crate) fn put_rfd(e: &mut dyn Env, l: Layout, q: usize, idx: u16, buf: u64) {
    let rfd = Rfd { buffer_addr: buf };
    let at = l.rfd + q as u64 * 0x1000 + u64::from(idx) * RFD_SIZE as u64;
    assert!(e.dma_write(at, &rfd.to_bytes()), "RFD outside guest memory");
}

/// Writes a one-buffer frame's TPD at `idx` of queue 0 (`word1` plus EOP).
pub(crate) fn put_tpd(e: &mut dyn Env, l: Layout, idx: u16, buf: u64, len: usize, word1: u32) {
    let t = Tpd {
        buffer_len: len as u16,
        vlan_tag: 0,
        word1: word1 | tpd::EOP.mask(),
        buffer_addr: buf,
    };
    let at = l.tpd + u64::from(idx) * TPD_SIZE as u64;
    assert!(e.dma_write(at, &t.to_bytes()), "TPD outside guest memory");
}

/// The tx doorbell of queue `q`: a 16-bit producer-index write, as the C driver does.
pub(crate) fn doorbell(d: &mut Device, e: &mut dyn Env, q: usize, pidx: u16) {
    d.mmio_write(e, queue::TPD_PIDX[q] as u64, 2, u64::from(pidx));
}
