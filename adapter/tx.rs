// SPDX-License-Identifier: GPL-2.0

//! Transmit: the TPD ring, `ndo_start_xmit` (offload template, mapping, the doorbell with
//! xmit_more and BQL) and completion.

use core::sync::atomic::Ordering;

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::Coherent,
    dma_write,
    prelude::*, //
};

use super::{
    add_local,
    Adapter,
    QueueStats, //
};
use crate::{
    hw::RegIo,
    netdev::{
        netdev_warn,
        Dir,
        DmaMap,
        DropReason,
        NetDev,
        Producer,
        SkBuff,
        Spsc,
        SpscParts,
        TxAvail, //
    },
    regs::queue,
    ring::{
        self,
        tpd,
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
pub(super) struct TxBuf {
    skb: Option<SkBuff>,
    map: DmaMap,
}

/// A tx ring's descriptors.
pub(super) type TxDesc = Coherent<[[u8; TPD_SIZE]]>;

/// One tx ring: its TPDs, and per TPD the buffer it points to. `ndo_start_xmit` fills it
/// (the producer, under the stack's tx queue lock) while completion empties it (the consumer,
/// in NAPI), without a lock between them.
pub(super) type TxRing = Spsc<TxDesc, TxBuf>;

/// One tx queue: its TPD ring and its counters. Its xmit (the ring's producer, under the
/// stack's tx queue lock) and its completion (the consumer, in NAPI) are each the single
/// writer of their end and of their counters: no driver lock.
pub(super) struct TxQueue {
    pub(super) ring: TxRing,
    pub(super) stats: QueueStats,
    /// Its producer-index register: the doorbell.
    pidx: usize,
    /// Its consumer-index register: what the card has sent.
    cidx: usize,
}

impl TxQueue {
    /// Hardware queue `q` with an empty ring of `count` TPDs; `EINVAL` beyond the queues the
    /// card has.
    pub(super) fn new(dev: &Device<Bound>, q: usize, count: u16) -> Result<Self> {
        let (Some(&pidx), Some(&cidx)) = (queue::TPD_PIDX.get(q), queue::TPD_CIDX.get(q)) else {
            return Err(EINVAL);
        };
        Ok(Self {
            ring: TxRing::new(tx_ring_parts(dev, count)?),
            stats: QueueStats::default(),
            pidx,
            cidx,
        })
    }
}

/// The storage of an empty ring of `count` TPDs.
pub(super) fn tx_ring_parts(dev: &Device<Bound>, count: u16) -> Result<SpscParts<TxDesc, TxBuf>> {
    let desc = Coherent::<[u8; TPD_SIZE]>::zeroed_slice(dev, count.into(), GFP_KERNEL)?;
    SpscParts::new(desc, count, GFP_KERNEL)
}

/// Zeroes the TPD at `i`.
fn clear_tpd(desc: &TxDesc, i: u16) -> Result {
    dma_write!(*desc, [try: usize::from(i)], [0u8; TPD_SIZE]);
    Ok(())
}

fn put_tpd(desc: &TxDesc, i: u16, d: Tpd) -> Result {
    dma_write!(*desc, [try: usize::from(i)], d.to_bytes());
    Ok(())
}

impl TxAvail for TxRing {
    fn avail(&self) -> u32 {
        u32::from(Spsc::avail(self))
    }
}

impl Adapter<'_> {
    /// Writes the producer index of `t`: the doorbell.
    fn doorbell(&self, t: &TxQueue, ntu: u16) {
        self.io().write16(t.pidx, ntu);
        add_local(&t.stats.doorbells, 1);
    }

    pub(super) fn tx_clean_ring(&self, dev: NetDev<'_>, q: usize) {
        let Some(TxQueue { ring, .. }) = self.tx.get(q) else {
            return;
        };
        let Some(mut x) = ring.exclusive() else {
            // xmit or completion still runs on it: the caller did not stop them first.
            netdev_warn!(dev, "tx ring {q} busy: not cleaned\n");
            return;
        };
        x.drain(|_, b| {
            b.map.unmap(&self.dma);
            if let Some(skb) = b.skb {
                skb.drop_reason(DropReason::DevReady);
            }
        });
        // No TPD keeps pointing at a buffer that is unmapped and freed.
        for i in 0..ring.count() {
            let _ = clear_tpd(x.ring(), i);
        }
        drop(x);
        if let Some(txq) = dev.txq(q as u32) {
            txq.reset();
        }
    }

    pub(super) fn tx_frame(&self, dev: NetDev<'_>, mut skb: SkBuff, more: bool) {
        let mut info = skb.info();
        let q = (info.queue as usize).min(self.queues().saturating_sub(1));
        let (Some(t), Some(txq)) = (self.tx.get(q), dev.txq(q as u32)) else {
            skb.drop_reason(DropReason::NotSpecified);
            return;
        };
        let ring = &t.ring;
        let Some(mut p) = ring.producer() else {
            // The stack serialises xmit on a queue; a second one at once is a bug. Nothing of
            // this frame was written: drop it.
            add_local(&t.stats.dropped, 1);
            skb.drop_reason(DropReason::NotSpecified);
            return;
        };
        let ntu0 = p.head();
        if info.gso_size != 0 {
            // The header rewrite for segmentation may copy the head or trim padding beyond the
            // IP length: the layout is read again after it.
            if skb.tso_prep().is_err() {
                drop(p);
                self.tx_drop(t, ntu0, skb, DropReason::NoMem);
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
        if u32::from(p.free()) < need || !self.up.load(Ordering::Acquire) {
            // Should not happen (the queue stops early): drop, and flush what is held back.
            drop(p);
            txq.maybe_stop(ring, TX_STOP, TX_START);
            self.tx_drop(t, ntu0, skb, DropReason::FullRing);
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
        if res.is_ok() && gso && offload.gso_v6 {
            // The LSO v2 extension TPD: flags and the total length, no buffer.
            res = put_tpd(p.ring(), p.head(), ring::lso_ext(info.len));
            if res.is_ok() && p.push(None).is_err() {
                res = Err(ENOSPC);
            }
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
        let mut put = |p: &mut Producer<'_, TxDesc, TxBuf>, map: DmaMap| -> Result {
            k += 1;
            let mut d = tmpl;
            // CAST: buffer lengths are below 64 KiB (skb head and page fragments).
            d.buffer_len = map.len() as u16;
            d.buffer_addr = map.addr();
            d.set_bit(tpd::EOP, k == n);
            let written = put_tpd(p.ring(), p.head(), d);
            match p.push(Some(TxBuf { skb: None, map })) {
                Ok(_) => written,
                Err(b) => {
                    if let Some(b) = b {
                        b.map.unmap(&self.dma);
                    }
                    Err(ENOSPC)
                }
            }
        };
        if res.is_ok() {
            let mut off = 0;
            for len in head {
                if len == 0 {
                    continue;
                }
                res = skb
                    .map_head(&self.dma, off, len, Dir::ToDevice)
                    .and_then(|m| put(&mut p, m));
                if res.is_err() {
                    break;
                }
                off += len;
            }
        }
        if res.is_ok() {
            for f in 0..info.nr_frags {
                res = skb.map_frag(&self.dma, f).and_then(|m| put(&mut p, m));
                if res.is_err() {
                    break;
                }
            }
        }
        let Some(last) = res.is_ok().then(|| p.last_mut()).flatten() else {
            // Roll back: unmap and clear what was written, flush earlier frames.
            while let Some((i, b)) = p.unpush() {
                if let Some(b) = b {
                    b.map.unmap(&self.dma);
                }
                let _ = clear_tpd(p.ring(), i);
            }
            drop(p);
            self.tx_drop(t, ntu0, skb, DropReason::NoMem);
            return;
        };
        let len = skb.len();
        last.skb = Some(skb);
        let ntu = p.publish();
        drop(p);
        // Count what goes on the wire: every TSO segment repeats the headers.
        let segs = u64::from(info.gso_segs.max(1));
        let wire = u64::from(len) + (segs - 1) * u64::from(info.tcp_all_headers);
        let st = &t.stats;
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
        if !txq.maybe_stop(ring, TX_STOP, TX_START) {
            add_local(&st.stops, 1);
        }
        if txq.sent(len, more) {
            self.doorbell(t, ntu);
        }
    }

    /// Drops a frame `tx_frame` cannot send (the producer end released), counted in
    /// `txN_dropped`, after a doorbell at `ntu`: what earlier frames held back behind
    /// xmit_more goes out.
    fn tx_drop(&self, t: &TxQueue, ntu: u16, skb: SkBuff, reason: DropReason) {
        self.doorbell(t, ntu);
        add_local(&t.stats.dropped, 1);
        skb.drop_reason(reason);
    }

    pub(super) fn tx_complete(&self, dev: NetDev<'_>, q: usize, budget: i32) -> u32 {
        let (
            Some(TxQueue {
                ring, stats, cidx, ..
            }),
            Some(txq),
        ) = (self.tx.get(q), dev.txq(q as u32))
        else {
            return 0;
        };
        let hw_cons = self.read16(*cidx);
        let Some(mut c) = ring.consumer() else {
            return 0;
        };
        if !c.geometry().valid_consumer(hw_cons, c.head(), c.tail()) {
            // Never trust the device: an index outside what we posted is ignored.
            stats.errors.fetch_add(1, Ordering::Relaxed);
            return 0;
        }
        let (mut pkts, mut bytes) = (0u32, 0u32);
        while c.tail() != hw_cons {
            let Some(slot) = c.take() else {
                break;
            };
            if let Some(b) = slot {
                b.map.unmap(&self.dma);
                if let Some(skb) = b.skb {
                    pkts += 1;
                    bytes += skb.len();
                    skb.consume(budget);
                }
            }
        }
        // The slots go back to xmit before the wake check reads what is free.
        drop(c);
        txq.completed_wake(pkts, bytes, ring, TX_START);
        pkts
    }
}
