// SPDX-License-Identifier: GPL-2.0

//! Transmit: the TPD ring, `ndo_start_xmit` (offload template, mapping, the doorbell with
//! xmit_more and BQL) and completion.

use core::sync::atomic::{
    AtomicU16,
    Ordering, //
};

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::{
        Coherent,
        DmaAddress, //
    },
    dma_write,
    prelude::*, //
};

use super::{
    add_local,
    Adapter, //
};
use crate::{
    hw::RegIo,
    netdev::{
        Dir,
        DmaMap,
        DropReason,
        NetDev,
        SkBuff,
        TxAvail, //
    },
    regs::queue,
    ring::{
        self,
        tpd,
        RingIndex,
        Tpd,
        TPD_SIZE, //
    },
};

/// Most TPDs one skb takes: head (split for TSO), frags, the LSO v2 extension.
const MAX_TPD_PER_SKB: u32 = 17 + 3;
/// Stop the queue below this many free TPDs, wake it at twice as many.
const TX_STOP: u32 = MAX_TPD_PER_SKB;
const TX_START: u32 = 2 * MAX_TPD_PER_SKB;

/// A buffer a TPD points to: its mapping, and on the frame's last TPD the skb.
struct TxBuf {
    skb: Option<SkBuff>,
    map: DmaMap,
}

/// One tx ring and its buffers.
pub(super) struct TxRing {
    desc: Coherent<[[u8; TPD_SIZE]]>,
    bufs: KVec<Option<TxBuf>>,
}

impl TxRing {
    /// An empty ring of `count` TPDs.
    pub(super) fn new(dev: &Device<Bound>, count: u16) -> Result<Self> {
        let desc = Coherent::<[u8; TPD_SIZE]>::zeroed_slice(dev, count.into(), GFP_KERNEL)?;
        let mut bufs = KVec::with_capacity(count.into(), GFP_KERNEL)?;
        for _ in 0..count {
            bufs.push(None, GFP_KERNEL)?;
        }
        Ok(Self { desc, bufs })
    }

    /// The ring's bus address, for `TPD_ADDR_LO`.
    pub(super) fn dma_handle(&self) -> DmaAddress {
        self.desc.dma_handle()
    }

    /// Zeroes the TPD at `i`.
    fn clear_tpd(&self, i: usize) -> Result {
        dma_write!(self.desc, [try: i], [0u8; TPD_SIZE]);
        Ok(())
    }
}

/// Indices of a tx ring that the BQL stop/wake checks read without the ring lock.
pub(super) struct TxIdx {
    /// Ring size; changes only while the interface is down (rings replaced).
    count: AtomicU16,
    next_to_use: AtomicU16,
    next_to_clean: AtomicU16,
}

impl TxIdx {
    /// The indices of an empty ring of `count` TPDs.
    pub(super) fn new(count: u16) -> Self {
        Self {
            count: AtomicU16::new(count),
            next_to_use: AtomicU16::new(0),
            next_to_clean: AtomicU16::new(0),
        }
    }

    /// The ring size.
    pub(super) fn count(&self) -> u16 {
        self.count.load(Ordering::Acquire)
    }

    /// Starts over with an empty ring of `count` TPDs (the rings are being replaced).
    pub(super) fn reset(&self, count: u16) {
        self.count.store(count, Ordering::Release);
        self.next_to_use.store(0, Ordering::Release);
        self.next_to_clean.store(0, Ordering::Release);
    }

    fn ring(&self) -> Option<RingIndex> {
        RingIndex::new(self.count.load(Ordering::Acquire))
    }
}

impl TxAvail for TxIdx {
    fn avail(&self) -> u32 {
        self.ring().map_or(0, |r| {
            u32::from(r.free(
                self.next_to_use.load(Ordering::Acquire),
                self.next_to_clean.load(Ordering::Acquire),
            ))
        })
    }
}

impl Adapter<'_> {
    /// Writes the tx producer index: the doorbell.
    fn doorbell(&self, q: usize, ntu: u16) {
        self.io().write16(queue::TPD_PIDX[q], ntu);
        add_local(&self.tx_stats[q].doorbells, 1);
    }

    pub(super) fn tx_clean_ring(&self, dev: NetDev, q: usize) {
        let Some(lock) = self.tx.get(q) else {
            return;
        };
        let mut t = lock.lock();
        for slot in t.bufs.iter_mut() {
            if let Some(b) = slot.take() {
                b.map.unmap(&self.dma);
                if let Some(skb) = b.skb {
                    skb.drop_reason(DropReason::DevReady);
                }
            }
        }
        // No TPD keeps pointing at a buffer that is unmapped and freed.
        for i in 0..t.bufs.len() {
            let _ = t.clear_tpd(i);
        }
        if let Some(idx) = self.tx_idx.get(q) {
            idx.next_to_use.store(0, Ordering::Release);
            idx.next_to_clean.store(0, Ordering::Release);
        }
        if let Some(txq) = dev.txq(q as u32) {
            txq.reset();
        }
    }

    pub(super) fn tx_frame(&self, dev: NetDev, mut skb: SkBuff, more: bool) {
        let mut info = skb.info();
        let q = (info.queue as usize).min(self.queues().saturating_sub(1));
        let (Some(lock), Some(idx), Some(txq)) =
            (self.tx.get(q), self.tx_idx.get(q), dev.txq(q as u32))
        else {
            skb.drop_reason(DropReason::NotSpecified);
            return;
        };
        let mut t = lock.lock();
        let Some(ring) = idx.ring() else {
            drop(t);
            skb.drop_reason(DropReason::NotSpecified);
            return;
        };
        let ntu0 = idx.next_to_use.load(Ordering::Relaxed);
        if info.gso_size != 0 {
            // The header rewrite for segmentation may copy the head or trim padding beyond the
            // IP length: the layout is read again after it.
            if skb.tso_prep().is_err() {
                drop(t);
                self.tx_drop(q, ntu0, skb, DropReason::NoMem);
                return;
            }
            info = skb.info();
        }
        let offload = ring::TxOffload {
            gso_size: info.gso_size,
            gso_v6: info.gso_type & 0x10 != 0, // SKB_GSO_TCPV6
            transport_offset: info.transport_offset,
            csum_partial: info.ip_summed == 3, // CHECKSUM_PARTIAL
            csum_start: info.csum_start,
            csum_offset: info.csum_offset,
            // CAST: a 16-bit TCI.
            vlan: (info.vlan_present != 0).then_some(info.vlan_tci as u16),
            network_offset: info.network_offset,
        };
        let gso = offload.gso_size != 0;
        let split = if gso {
            info.tcp_all_headers.min(info.headlen)
        } else {
            0
        };
        let need = ring::tpds_needed(info.nr_frags, &offload, split < info.headlen);
        if idx.avail() < need || !self.up.load(Ordering::Acquire) {
            // Should not happen (the queue stops early): drop, and flush what is held back.
            txq.maybe_stop(idx, TX_STOP, TX_START);
            drop(t);
            self.tx_drop(q, ntu0, skb, DropReason::FullRing);
            return;
        }
        // Offload template for every TPD of the frame.
        let mut res = Ok(());
        let tmpl = match ring::tx_template(&offload) {
            Ok(t) => t,
            Err(_) => {
                res = Err(EINVAL);
                Tpd::default()
            }
        };
        let mut ntu = ntu0;
        if res.is_ok() && gso && offload.gso_v6 {
            // The LSO v2 extension TPD: flags and the total length, no buffer.
            res = self.put_tpd(&mut t, ntu, ring::lso_ext(info.len), None);
            ntu = ring.next(ntu);
        }
        // Buffers: head (headers alone first for TSO), then every fragment, each TPD written
        // as its buffer is mapped (the card reads none before the doorbell); the skb goes
        // with the last one (EOP) and is freed when it completes.
        let head = [split, info.headlen - split];
        let n = head.iter().filter(|&&l| l != 0).count() + info.nr_frags as usize;
        if n == 0 {
            res = Err(EINVAL);
        }
        let mut k = 0;
        let mut last = None;
        let mut put = |map: DmaMap| {
            k += 1;
            let mut d = tmpl;
            // CAST: buffer lengths are below 64 KiB (skb head and page fragments).
            d.buffer_len = map.len() as u16;
            d.buffer_addr = map.addr();
            d.set_bit(tpd::EOP, k == n);
            let buf = TxBuf { skb: None, map };
            let _ = self.put_tpd(&mut t, ntu, d, Some(buf));
            last = Some(ntu);
            ntu = ring.next(ntu);
        };
        if res.is_ok() {
            let mut off = 0;
            for len in head {
                if len == 0 {
                    continue;
                }
                match skb.map_head(&self.dma, off, len, Dir::ToDevice) {
                    Ok(m) => put(m),
                    Err(e) => {
                        res = Err(e);
                        break;
                    }
                }
                off += len;
            }
        }
        if res.is_ok() {
            for f in 0..info.nr_frags {
                match skb.map_frag(&self.dma, f) {
                    Ok(m) => put(m),
                    Err(e) => {
                        res = Err(e);
                        break;
                    }
                }
            }
        }
        let slot = last.and_then(|i| t.bufs.get_mut(usize::from(i))?.as_mut());
        let Some(slot) = slot.filter(|_| res.is_ok()) else {
            // Roll back: unmap and clear what was written, flush earlier frames.
            let mut i = ntu0;
            while i != ntu {
                if let Some(b) = t.bufs.get_mut(usize::from(i)).and_then(Option::take) {
                    b.map.unmap(&self.dma);
                }
                let _ = t.clear_tpd(usize::from(i));
                i = ring.next(i);
            }
            drop(t);
            self.tx_drop(q, ntu0, skb, DropReason::NoMem);
            return;
        };
        let len = skb.len();
        slot.skb = Some(skb);
        idx.next_to_use.store(ntu, Ordering::Release);
        drop(t);
        // Count what goes on the wire: every TSO segment repeats the headers.
        let segs = u64::from(info.gso_segs.max(1));
        let wire = u64::from(len) + (segs - 1) * u64::from(info.tcp_all_headers);
        let st = &self.tx_stats[q];
        add_local(&st.packets, segs);
        add_local(&st.bytes, wire);
        if gso {
            add_local(&st.gso_packets, 1);
            add_local(&st.gso_bytes, u64::from(len));
            add_local(&st.gso_wire_packets, segs);
            add_local(&st.gso_wire_bytes, wire);
        }
        // Stop before the ring can fill; a stopped queue makes `sent` ring the doorbell, so
        // nothing is held back behind xmit_more.
        if !txq.maybe_stop(idx, TX_STOP, TX_START) {
            add_local(&self.tx_stats[q].stops, 1);
        }
        if txq.sent(len, more) {
            self.doorbell(q, ntu);
        }
    }

    /// Drops a frame `tx_frame` cannot send (the ring lock released), counted in `txN_dropped`,
    /// after a doorbell at `ntu`: what earlier frames held back behind xmit_more goes out.
    fn tx_drop(&self, q: usize, ntu: u16, skb: SkBuff, reason: DropReason) {
        self.doorbell(q, ntu);
        add_local(&self.tx_stats[q].dropped, 1);
        skb.drop_reason(reason);
    }

    fn put_tpd(&self, t: &mut TxRing, i: u16, d: Tpd, buf: Option<TxBuf>) -> Result {
        let i = usize::from(i);
        dma_write!(t.desc, [try: i], d.to_bytes());
        if let Some(slot) = t.bufs.get_mut(i) {
            *slot = buf;
        }
        Ok(())
    }

    pub(super) fn tx_complete(&self, dev: NetDev, q: usize, budget: i32) -> u32 {
        let (Some(lock), Some(idx), Some(txq)) =
            (self.tx.get(q), self.tx_idx.get(q), dev.txq(q as u32))
        else {
            return 0;
        };
        let hw_cons = self.read16(queue::TPD_CIDX[q]);
        let mut t = lock.lock();
        let Some(ring) = idx.ring() else {
            return 0;
        };
        let ntu = idx.next_to_use.load(Ordering::Acquire);
        let mut ntc = idx.next_to_clean.load(Ordering::Relaxed);
        if !ring.valid_consumer(hw_cons, ntu, ntc) {
            // Never trust the device: an index outside what we posted is ignored.
            self.tx_stats[q].errors.fetch_add(1, Ordering::Relaxed);
            return 0;
        }
        let (mut pkts, mut bytes) = (0u32, 0u32);
        while ntc != hw_cons {
            if let Some(b) = t.bufs.get_mut(usize::from(ntc)).and_then(Option::take) {
                b.map.unmap(&self.dma);
                if let Some(skb) = b.skb {
                    pkts += 1;
                    bytes += skb.len();
                    skb.consume(budget);
                }
            }
            ntc = ring.next(ntc);
        }
        idx.next_to_clean.store(ntc, Ordering::Release);
        drop(t);
        txq.completed_wake(pkts, bytes, idx, TX_START);
        pkts
    }
}
