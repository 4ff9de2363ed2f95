// SPDX-License-Identifier: GPL-2.0

//! Receive: the RFD and RRD rings, buffer refill, and the NAPI rx poll (RRD checks, checksum
//! and VLAN, GRO).

use core::sync::atomic::Ordering;

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::{
        Coherent,
        DmaAddress, //
    },
    dma_read,
    dma_write,
    prelude::*, //
};

use super::{
    add_local,
    Adapter,
    QueueStats, //
};
use crate::{
    hw::{
        NicType,
        RegIo, //
    },
    netdev::{
        self,
        Claim,
        Napi,
        NetDev,
        PagePool,
        RxPage, //
    },
    regs::queue,
    ring::{
        self,
        RingIndex,
        Rrd,
        RFD_SIZE,
        RRD_SIZE, //
    },
};

/// One rx queue: its ring, and the counters of the channel of its index.
///
/// While the interface runs, the ring is its NAPI instance's alone: that instance polls and
/// refills it, with one claim per poll and no lock; open, stop and the ethtool changes reach
/// it only with the instance disabled. A channel polls the rings `ch`, `ch + n`, ... (`n`
/// channels in use) and counts their frames in `stats` of queue `ch`.
pub(super) struct RxQueue {
    pub(super) ring: Claim<RxRing>,
    pub(super) stats: QueueStats,
}

impl RxQueue {
    /// An empty queue of `count` RFDs and RRDs.
    pub(super) fn new(dev: &Device<Bound>, count: u16) -> Result<Self> {
        Ok(Self {
            ring: Claim::new(RxRing::new(dev, count)?),
            stats: QueueStats::default(),
        })
    }
}

/// One rx ring: RFD ring (free buffers), RRD ring (returned frames) and the buffers.
pub(super) struct RxRing {
    rfd: Coherent<[[u8; RFD_SIZE]]>,
    rrd: Coherent<[[u8; RRD_SIZE]]>,
    /// Where the buffers come from while the interface is up (made at open for its MTU,
    /// destroyed at down, in process context: see [`Adapter::rx_take_pool`]).
    pool: Option<PagePool>,
    bufs: KVec<Option<RxPage>>,
    /// RFD and RRD ring size.
    ring: RingIndex,
    rfd_next_to_use: u16,
    rfd_next_to_clean: u16,
    rrd_next_to_clean: u16,
    /// The last refill stopped on an allocation failure: the ring is short of buffers and
    /// NAPI retries the refill (see `rx_poll`).
    refill_failed: bool,
}

impl RxRing {
    /// An empty queue of `count` RFDs and RRDs.
    pub(super) fn new(dev: &Device<Bound>, count: u16) -> Result<Self> {
        let ring = RingIndex::new(count).ok_or(EINVAL)?;
        let rfd = Coherent::<[u8; RFD_SIZE]>::zeroed_slice(dev, count.into(), GFP_KERNEL)?;
        let rrd = Coherent::<[u8; RRD_SIZE]>::zeroed_slice(dev, count.into(), GFP_KERNEL)?;
        let mut bufs = KVec::with_capacity(count.into(), GFP_KERNEL)?;
        for _ in 0..count {
            bufs.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            rfd,
            rrd,
            pool: None,
            bufs,
            ring,
            rfd_next_to_use: 0,
            rfd_next_to_clean: 0,
            rrd_next_to_clean: 0,
            refill_failed: false,
        })
    }

    /// The bus addresses of the RFD and RRD rings, for `RFD_HEAD_ADDR_LO` and
    /// `RRD_HEAD_ADDR_LO`.
    pub(super) fn dma_handles(&self) -> (DmaAddress, DmaAddress) {
        (self.rfd.dma_handle(), self.rrd.dma_handle())
    }

    /// The RRD at `i`, as the device wrote it.
    fn read_rrd(&self, i: usize) -> Result<Rrd> {
        Ok(Rrd::from_bytes(&dma_read!(self.rrd, [try: i])))
    }

    /// Whether the card has written the RRD at `i` (its updated bit, read alone: the other
    /// words are read only after it, see `rx_poll`).
    fn rrd_ready(&self, i: usize) -> Result<bool> {
        Ok(ring::rrd_updated(dma_read!(
            self.rrd,
            [try: i][build: ring::RRD_UPDATED_BYTE]
        )))
    }

    /// Zeroes the RFD at `i`.
    fn clear_rfd(&self, i: usize) -> Result {
        dma_write!(self.rfd, [try: i], [0u8; RFD_SIZE]);
        Ok(())
    }

    /// Clears the RRD at `i` (its updated bit with it) for the device to reuse.
    fn clear_rrd(&self, i: usize) -> Result {
        dma_write!(self.rrd, [try: i], [0u8; RRD_SIZE]);
        Ok(())
    }
}

/// Tries for a buffer the card can take ([`ring::rx_buffer_usable`]) before the refill
/// counts as failed.
const RX_ALLOC_TRIES: usize = 4;

/// A buffer of `pool` the card can take: one at an address the card mishandles goes back to
/// the pool and the next fragment is tried (page_pool hands out fragments in order, so the
/// next one sits elsewhere). With the fragments this driver asks for (at most two a page,
/// each behind `NET_SKB_PAD` of headroom) none ends in `0x...fc0` on 4 KiB pages; the check
/// keeps that true whatever the page size and the layout become.
fn alloc_usable(pool: &mut PagePool) -> Option<RxPage> {
    (0..RX_ALLOC_TRIES)
        .map_while(|_| pool.alloc())
        .find(|p| ring::rx_buffer_usable(p.addr()))
}

impl Adapter<'_> {
    /// Gives the card a buffer in every free RFD. Returns whether the ring is full: when its
    /// pool has no page it stops, counts `alloc_fail`, and leaves the rest to the next NAPI
    /// poll (which `rx_poll` then schedules itself: a card without buffers raises no rx
    /// interrupt). `EINVAL` for a ring without a pool (the interface is down), `EBUSY` for one
    /// that NAPI holds.
    pub(super) fn rx_fill(&self, q: usize) -> Result<bool> {
        let rq = self.rx.get(q).ok_or(EINVAL)?;
        self.fill_ring(&mut *rq.ring.claim().ok_or(EBUSY)?, q)
    }

    /// [`Self::rx_fill`] on ring `q`, already claimed.
    fn fill_ring(&self, r: &mut RxRing, q: usize) -> Result<bool> {
        if r.pool.is_none() {
            return Err(EINVAL);
        }
        let ring = r.ring;
        let mut filled = false;
        r.refill_failed = false;
        loop {
            let ntu = r.rfd_next_to_use;
            let next = ring.next(ntu);
            if next == r.rfd_next_to_clean {
                break;
            }
            let i = usize::from(ntu);
            let Some(slot) = r.bufs.get(i) else {
                break;
            };
            if slot.is_some() {
                break;
            }
            let Some(page) = r.pool.as_mut().and_then(alloc_usable) else {
                r.refill_failed = true;
                break;
            };
            let rfd = ring::Rfd {
                buffer_addr: page.addr(),
            };
            dma_write!(r.rfd, [try: i], rfd.to_bytes());
            if let Some(slot) = r.bufs.get_mut(i) {
                *slot = Some(page);
            }
            r.rfd_next_to_use = next;
            filled = true;
        }
        if filled {
            let ntu = r.rfd_next_to_use;
            self.io().write32(queue::RFD_PROD_IDX[q], u32::from(ntu));
        }
        if r.refill_failed {
            if let Some(rq) = self.rx.get(self.rx_channel(q)) {
                rq.stats.alloc_fail.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(!r.refill_failed)
    }

    /// Pools for the rx rings in use, each for buffers of `buf_len` bytes (`ndo_open`, in
    /// process context: making a pool may sleep). Install them with [`Self::rx_install_pool`].
    pub(super) fn rx_pools(&self, dev: NetDev<'_>, buf_len: u32) -> Result<KVec<PagePool>> {
        let count = u32::from(self.rx_count.load(Ordering::Acquire));
        let mut pools = KVec::with_capacity(self.rx_rings(), GFP_KERNEL)?;
        for _ in 0..self.rx_rings() {
            pools.push(PagePool::new(&self.dma, &dev, count, buf_len)?, GFP_KERNEL)?;
        }
        Ok(pools)
    }

    /// Gives ring `q` its pool (NAPI disabled). Returns a pool for the caller to drop in
    /// process context (destroying one may sleep): the one the ring had, if any, or `pool`
    /// itself if the ring is claimed, and then the fill that follows fails.
    pub(super) fn rx_install_pool(&self, q: usize, pool: PagePool) -> Option<PagePool> {
        match self.rx.get(q).and_then(|rq| rq.ring.claim()) {
            Some(mut r) => r.pool.replace(pool),
            None => Some(pool),
        }
    }

    /// Takes ring `q`'s pool, after [`Self::rx_clean_ring`] gave its buffers back (NAPI
    /// disabled). The caller drops it in process context: destroying a pool may sleep.
    pub(super) fn rx_take_pool(&self, q: usize) -> Option<PagePool> {
        self.rx.get(q)?.ring.claim()?.pool.take()
    }

    /// How many buffers rx queue `q` has given the card (0 while NAPI holds it).
    pub(super) fn rx_posted(&self, q: usize) -> usize {
        self.rx
            .get(q)
            .and_then(|rq| rq.ring.claim())
            .map_or(0, |r| r.bufs.iter().filter(|b| b.is_some()).count())
    }

    /// Counts the frames the card returned that NAPI never took (the MAC is stopped, NAPI
    /// disabled): they are discarded with the ring, and each lands in `rxN_dropped`, so every
    /// frame the card delivered is counted once. Bounded by the ring: the RRDs are the
    /// device's to write.
    pub(super) fn rx_count_unpolled(&self, q: usize) {
        let (Some(rq), Some(ch)) = (self.rx.get(q), self.rx.get(self.rx_channel(q))) else {
            return;
        };
        let Some(r) = rq.ring.claim() else {
            return;
        };
        let stats = &ch.stats;
        let ring = r.ring;
        let mut i = r.rrd_next_to_clean;
        let mut n = 0u64;
        for _ in 0..ring.count() {
            if !r.rrd_ready(usize::from(i)).unwrap_or(false) {
                break;
            }
            n += 1;
            i = ring.next(i);
        }
        if n > 0 {
            stats.dropped.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Gives ring `q`'s buffers back to its pool and resets its indices (NAPI disabled).
    pub(super) fn rx_clean_ring(&self, q: usize) {
        let Some(mut r) = self.rx.get(q).and_then(|rq| rq.ring.claim()) else {
            return;
        };
        // Back to the pool (its ring, then the page allocator when the pool goes).
        for slot in r.bufs.iter_mut() {
            drop(slot.take());
        }
        // No RFD keeps pointing at a buffer that is unmapped and freed.
        for i in 0..r.bufs.len() {
            let _ = r.clear_rfd(i);
        }
        r.rfd_next_to_use = 0;
        r.rfd_next_to_clean = 0;
        r.rrd_next_to_clean = 0;
        for i in 0..usize::from(r.ring.count()) {
            let _ = r.clear_rrd(i);
        }
    }

    /// NAPI rx poll of channel `ch`: its rings share the budget. Returns the budget while
    /// any ring may hold more (NAPI polls again), else the frames taken.
    pub(super) fn rx_poll(&self, dev: NetDev<'_>, napi: &Napi<'_>, ch: usize, budget: i32) -> i32 {
        let (n, rings) = (self.queues().max(1), self.rx_rings());
        // CAST: at most 4 rings.
        let k = rings.saturating_sub(ch).div_ceil(n) as i32;
        if k == 0 {
            return 0;
        }
        if k == 1 {
            return self.rx_poll_ring(dev, napi, ch, ch, budget);
        }
        let share = (budget / k).max(1);
        let mut done = 0;
        for ring in (ch..rings).step_by(n) {
            let left = budget - done;
            if left <= 0 {
                return budget;
            }
            let d = self.rx_poll_ring(dev, napi, ch, ring, share.min(left));
            if d >= share.min(left) {
                return budget;
            }
            done += d;
        }
        done
    }

    /// Takes up to `budget` frames from rx ring `q` for channel `ch` (its counters, its rx
    /// queue); returns the budget while the ring is short of buffers (see the end).
    fn rx_poll_ring(
        &self,
        dev: NetDev<'_>,
        napi: &Napi<'_>,
        ch: usize,
        q: usize,
        budget: i32,
    ) -> i32 {
        let (Some(rq), Some(chq)) = (self.rx.get(q), self.rx.get(ch)) else {
            return 0;
        };
        let st = &chq.stats;
        let mt = self.nic == NicType::Mt;
        let csum = self.rx_csum.load(Ordering::Relaxed);
        let mut done = 0;
        // Counted per poll, not per frame: one atomic add each at the end.
        let (mut packets, mut bytes, mut csum_ok) = (0u64, 0u64, 0u64);
        // NAPI is the ring's only user while the interface runs (open, stop and resize disable
        // it first): one claim per poll, not per frame, and it never fails here. Were that
        // serialisation broken, the poll takes nothing rather than race.
        let Some(mut r) = rq.ring.claim() else {
            return 0;
        };
        let short = r.refill_failed;
        let ring = r.ring;
        let count = ring.count();
        while done < budget {
            let ri = usize::from(r.rrd_next_to_clean);
            if !r.rrd_ready(ri).unwrap_or(false) {
                break;
            }
            // The updated bit first, then the rest: a read of all 16 bytes at once can tear
            // (the CPU reads them in pieces; seen under TCG: a cleared word 0 beside a written
            // word 3, a bad RFD count). atl1c_clean_rx_irq reads word 3 first too.
            netdev::dma_rmb();
            let Ok(rrd) = r.read_rrd(ri) else {
                break;
            };
            let _ = r.clear_rrd(ri);
            r.rrd_next_to_clean = ring.next(r.rrd_next_to_clean);
            let expected = r.rfd_next_to_clean;
            r.rfd_next_to_clean = ring.next(expected);
            let buf = r.bufs.get_mut(usize::from(expected)).and_then(Option::take);
            done += 1;
            let Some(buf) = buf else {
                self.rx_bad_rrd.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            // CAST: rx buffers are below 16 KiB.
            let checked = ring::check_rrd(&rrd, count, expected, buf.buf_len() as u16, mt);
            match checked {
                Ok(f) => {
                    // Sync only what the device wrote: the frame and its FCS.
                    let used = u32::from(f.len) + u32::from(ring::ETH_FCS_LEN);
                    let mut skb = match buf.into_skb(used, u32::from(f.len)) {
                        Ok(skb) => skb,
                        Err(e) => {
                            // check_rrd bounds the length by the buffer: only ENOMEM is
                            // reached, and the frame is dropped for want of an skb.
                            if e == ENOMEM {
                                st.alloc_fail.fetch_add(1, Ordering::Relaxed);
                                st.dropped.fetch_add(1, Ordering::Relaxed);
                            } else {
                                self.rx_bad_rrd.fetch_add(1, Ordering::Relaxed);
                            }
                            continue;
                        }
                    };
                    if f.l4_csum_ok && csum {
                        skb.set_csum_unnecessary();
                        csum_ok += 1;
                    }
                    if let Some(tag) = f.vlan {
                        skb.set_vlan(tag.swap_bytes());
                    }
                    packets += 1;
                    bytes += u64::from(f.len);
                    // CAST: at most 4 queues.
                    skb.gro_receive(&dev, napi, ch as u16);
                }
                // The buffer goes back to the pool (dropped).
                Err(ring::RxError::FrameError) => {
                    st.errors.fetch_add(1, Ordering::Relaxed);
                }
                Err(_) => {
                    self.rx_bad_rrd.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        if packets > 0 {
            add_local(&st.packets, packets);
            add_local(&st.bytes, bytes);
        }
        if csum_ok > 0 {
            add_local(&st.csum_ok, csum_ok);
        }
        // A ring left short by an allocation failure is refilled even without a frame: the
        // card may have no buffer left to raise an interrupt with. While it stays short, NAPI
        // stays scheduled (the whole budget reported as done) and retries, as ixgbe does.
        if (done > 0 || short) && !self.fill_ring(&mut r, q).unwrap_or(true) {
            return budget;
        }
        done
    }
}
