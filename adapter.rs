// SPDX-License-Identifier: GPL-2.0

//! The driver proper: descriptor rings, NAPI, the interrupt handler and the net_device ops,
//! in safe Rust over the netdev layer and hw.rs.

use core::sync::atomic::{
    AtomicBool,
    AtomicU16,
    AtomicU32,
    AtomicU64,
    AtomicUsize,
    Ordering, //
};

use kernel::{
    device::{
        Bound,
        Core,
        Device, //
    },
    dma::Coherent,
    dma_read,
    dma_write,
    new_spinlock,
    pci,
    prelude::*,
    sync::SpinLock, //
};

use crate::{
    hw::{
        self,
        Hw,
        HwError,
        Link,
        NicType,
        RegIo, //
    },
    netdev::{
        self,
        Dir,
        DmaAddr,
        DmaDev,
        DropReason,
        Napi,
        NetDev,
        SkBuff,
        Stats64,
        TxAvail, //
    },
    regs::{
        self,
        queue,
        Register, //
    },
    ring::{
        self,
        tpd,
        RingIndex,
        Rrd,
        Tpd,
        RFD_SIZE,
        RRD_SIZE,
        TPD_SIZE, //
    },
    Bar0,
    Regs, //
};

/// TPDs per tx ring by default (the C driver's).
const TPD_DEFAULT: u16 = 1024;
/// RFDs (and RRDs) per rx ring by default.
const RFD_DEFAULT: u16 = 512;
/// In the IMR shadow, at ISR_DIS_INT's position (no interrupt cause): the interface is up.
const IMR_LIVE: u32 = 1 << 31;
/// Every rx and tx completion cause: what the NAPI instances handle.
const ISR_NAPI: u32 = {
    let mut m = 0;
    let mut i = 0;
    while i < regs::ISR_RX_PKT.len() && i < regs::ISR_TX_PKT.len() {
        m |= regs::ISR_RX_PKT[i] | regs::ISR_TX_PKT[i];
        i += 1;
    }
    m
};
/// Smallest ring `ethtool -G` accepts: room for a few largest frames.
pub(crate) const RING_MIN: u32 = 64;
/// Largest tx ring (`TPD_RING_SIZE` holds 16 bits; 64 KiB of descriptors).
pub(crate) const TPD_MAX: u32 = 4096;
/// Largest rx ring (`RFD_RING_SIZE` and `RRD_RING_SIZE` hold 12 bits).
pub(crate) const RFD_MAX: u32 = 4095;
/// Most TPDs one skb takes: head (split for TSO), frags, the LSO v2 extension.
const MAX_TPD_PER_SKB: u32 = 17 + 3;
/// Stop the queue below this many free TPDs, wake it at twice as many.
const TX_STOP: u32 = MAX_TPD_PER_SKB;
const TX_START: u32 = 2 * MAX_TPD_PER_SKB;
/// `AT_RX_BUF_SIZE`: 1500 + Ethernet header + VLAN + FCS.
const RX_BUF_MIN: u32 = 1518 + 4;
/// `ETH_HLEN`.
const ETH_HLEN: u32 = 14;
/// `MAX_TSO_FRAME_SIZE`: largest MTU with TSO on the gigabit chips.
const MAX_TSO_FRAME_SIZE: u32 = 7 * 1024;
/// MAC statistics registers.
const MAC_STATS: usize = regs::stats::RX_COUNT + regs::stats::TX_COUNT;
/// Index of `rx_rrd_ov` (frames dropped for lack of an RFD) in the MAC statistics.
const RX_RRD_OV: usize = regs::stats::index("rx_rrd_ov");
/// Index of `rx_rxf_ov` (rx FIFO overflow).
const RX_RXF_OV: usize = regs::stats::index("rx_rxf_ov");
/// The error interrupts that need a MAC reset (`ISR_ERROR` without `PHY_LINKDOWN`, which the
/// link task handles).
const ISR_RESET: u32 = regs::ISR_ERROR & !regs::ISR::PHY_LINKDOWN.mask();

/// `NETIF_F_*` bits.
mod features {
    use crate::netdev::bindings as nb;
    pub(super) const SG: u64 = 1 << nb::NETIF_F_SG_BIT;
    pub(super) const HW_CSUM: u64 = 1 << nb::NETIF_F_HW_CSUM_BIT;
    pub(super) const TSO: u64 = 1 << nb::NETIF_F_TSO_BIT;
    pub(super) const TSO6: u64 = 1 << nb::NETIF_F_TSO6_BIT;
    pub(super) const RXCSUM: u64 = 1 << nb::NETIF_F_RXCSUM_BIT;
}

struct TxBuf {
    skb: Option<SkBuff>,
    dma: DmaAddr,
    len: u32,
    page: bool,
}

/// One tx ring and its buffers.
struct TxRing {
    desc: Coherent<[[u8; TPD_SIZE]]>,
    bufs: KVec<Option<TxBuf>>,
}

impl TxRing {
    /// An empty ring of `count` TPDs.
    fn new(dev: &Device<Bound>, count: u16) -> Result<Self> {
        let desc = Coherent::<[u8; TPD_SIZE]>::zeroed_slice(dev, count.into(), GFP_KERNEL)?;
        let mut bufs = KVec::with_capacity(count.into(), GFP_KERNEL)?;
        for _ in 0..count {
            bufs.push(None, GFP_KERNEL)?;
        }
        Ok(Self { desc, bufs })
    }

    /// Zeroes the TPD at `i`.
    fn clear_tpd(&self, i: usize) -> Result {
        dma_write!(self.desc, [try: i], [0u8; TPD_SIZE]);
        Ok(())
    }
}

/// Indices of a tx ring that the BQL stop/wake checks read without the ring lock.
struct TxIdx {
    /// Ring size; changes only while the interface is down (rings replaced).
    count: AtomicU16,
    next_to_use: AtomicU16,
    next_to_clean: AtomicU16,
}

impl TxIdx {
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

struct RxBuf {
    skb: SkBuff,
    dma: DmaAddr,
}

/// One rx queue: RFD ring (free buffers), RRD ring (returned frames) and the buffers.
struct RxRing {
    rfd: Coherent<[[u8; RFD_SIZE]]>,
    rrd: Coherent<[[u8; RRD_SIZE]]>,
    bufs: KVec<Option<RxBuf>>,
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
    fn new(dev: &Device<Bound>, count: u16) -> Result<Self> {
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
            bufs,
            ring,
            rfd_next_to_use: 0,
            rfd_next_to_clean: 0,
            rrd_next_to_clean: 0,
            refill_failed: false,
        })
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

/// Per-queue software counters.
#[derive(Default)]
struct QueueStats {
    packets: AtomicU64,
    bytes: AtomicU64,
    dropped: AtomicU64,
    errors: AtomicU64,
    /// Tx: producer-index writes.
    doorbells: AtomicU64,
    /// Rx: NAPI polls that completed, i.e. interrupts served (DIM's event count).
    completions: AtomicU64,
    /// Tx: times the queue was stopped for lack of descriptors.
    stops: AtomicU64,
    /// Rx: buffer allocations that failed.
    alloc_fail: AtomicU64,
    /// Rx: frames passed up as `CHECKSUM_UNNECESSARY`.
    csum_ok: AtomicU64,
    /// Tx: frames the card segments (TSO), their bytes, and what it sends for them.
    gso_packets: AtomicU64,
    gso_bytes: AtomicU64,
    gso_wire_packets: AtomicU64,
    gso_wire_bytes: AtomicU64,
}

impl QueueStats {
    fn rx(&self) -> netdev::QStatsRx {
        netdev::QStatsRx {
            packets: self.packets.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            alloc_fail: self.alloc_fail.load(Ordering::Relaxed),
            csum_unnecessary: self.csum_ok.load(Ordering::Relaxed),
        }
    }

    fn tx(&self) -> netdev::QStatsTx {
        netdev::QStatsTx {
            packets: self.packets.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            stop: self.stops.load(Ordering::Relaxed),
            hw_gso_packets: self.gso_packets.load(Ordering::Relaxed),
            hw_gso_bytes: self.gso_bytes.load(Ordering::Relaxed),
            hw_gso_wire_packets: self.gso_wire_packets.load(Ordering::Relaxed),
            hw_gso_wire_bytes: self.gso_wire_bytes.load(Ordering::Relaxed),
        }
    }
}

/// One atl1c-family NIC.
pub(crate) struct Adapter<'a> {
    bar: Bar0<'a>,
    /// The bound device, for ring (re)allocation.
    pdev: &'a Device<Bound>,
    dma: DmaDev,
    nic: NicType,
    /// PCI device id.
    device_id: u16,
    /// Queue pairs the chip has (rings are allocated for all of them).
    max_queues: usize,
    /// Queue pairs in use (`ethtool -L`); changes only while the interface is down.
    queues: AtomicUsize,
    /// Chip settings (read-only after probe).
    hw: Hw,
    /// The link as last programmed into the MAC. MDIO users are serialised by construction:
    /// probe, open and stop run under RTNL with NAPI disabled, link events run in NAPI.
    link: Pin<KBox<SpinLock<Option<Link>>>>,
    /// Rx buffer size for the current MTU.
    rx_buf_len: AtomicU32,
    tx: KVec<Pin<KBox<SpinLock<TxRing>>>>,
    tx_idx: KVec<TxIdx>,
    rx: KVec<Pin<KBox<SpinLock<RxRing>>>>,
    /// RFDs per rx ring (`ethtool -G rx`).
    rx_count: AtomicU16,
    tx_stats: KVec<QueueStats>,
    rx_stats: KVec<QueueStats>,
    /// Frames the device reported with a malformed RRD (dropped, never trusted).
    rx_bad_rrd: AtomicU64,
    /// The MAC's clear-on-read statistics, accumulated (`struct atl1c_hw_stats` order).
    mac_stats: Pin<KBox<SpinLock<[u64; MAC_STATS]>>>,
    up: AtomicBool,
    /// The interrupt saw a link change; the task handles it.
    link_event: AtomicBool,
    /// A tx timeout or an error interrupt asked for a reset; the task does it.
    reset_pending: AtomicBool,
    /// Error interrupts (DMA read/write or tx queue timeout) that asked for a reset.
    hw_errors: AtomicU64,
    /// Resets the task carried out (tx timeout, error interrupt).
    resets: AtomicU64,
    /// The card reads all-ones where it cannot: it is gone (surprise removal); nothing is
    /// asked of it any more.
    gone: AtomicBool,
    napi: netdev::NapiSet,
    rx_csum: AtomicBool,
    /// The interrupts to unmask while up, for the channels in use.
    intr_mask: AtomicU32,
    /// What IMR holds (see [`Self::imr_sync`]): `intr_mask`, minus the rx and tx causes whose
    /// NAPI instance is scheduled (the handler masks them, the instance's completion unmasks
    /// them, as atl1c_intr and atl1c_clean do), with [`IMR_LIVE`] while up.
    imr: AtomicU32,
    /// Interrupt moderation in timer units (2 us): tx, rx (`ethtool -C`).
    tx_imt: AtomicU16,
    rx_imt: AtomicU16,
    /// Serialises moderation updates (ethtool, the DIM work item).
    moderation_lock: Pin<KBox<SpinLock<()>>>,
    /// Adaptive rx moderation (DIM) on.
    adaptive_rx: AtomicBool,
    /// The rx moderation DIM chose last (timer units).
    dim_rx_imt: AtomicU16,
    /// `ethtool -s msglvl` (`NETIF_MSG_*`).
    msg_enable: AtomicU32,
    /// Enabled Wake-on-LAN options (`WAKE_*`).
    wol: AtomicU32,
    /// Link modes advertised by autonegotiation (legacy `ADVERTISED_*`), AR8151.
    advertising: AtomicU32,
}

/// `NETIF_MSG_DRV | NETIF_MSG_PROBE | NETIF_MSG_LINK`, the C driver's default.
const MSG_DEFAULT: u32 = 0x1 | 0x2 | 0x4;

impl<'a> Adapter<'a> {
    /// Allocates the rings for `nic` on `pdev`.
    pub(crate) fn new(
        pdev: &'a pci::Device<Core<'_>>,
        bar: Bar0<'a>,
        nic: NicType,
        revision: u8,
    ) -> Result<Pin<KBox<Self>>> {
        let max_queues = nic.queues();
        let dev: &'a Device<Bound> = pdev.as_ref();
        let mut tx = KVec::new();
        let mut tx_idx = KVec::new();
        let mut rx = KVec::new();
        let mut tx_stats = KVec::new();
        let mut rx_stats = KVec::new();
        // The hardware always has the PRI0 and PRI1 TPD rings: give both memory.
        for _ in 0..max_queues.max(2) {
            tx.push(
                KBox::pin_init(new_spinlock!(TxRing::new(dev, TPD_DEFAULT)?), GFP_KERNEL)?,
                GFP_KERNEL,
            )?;
            tx_idx.push(
                TxIdx {
                    count: AtomicU16::new(TPD_DEFAULT),
                    next_to_use: AtomicU16::new(0),
                    next_to_clean: AtomicU16::new(0),
                },
                GFP_KERNEL,
            )?;
            tx_stats.push(QueueStats::default(), GFP_KERNEL)?;
        }
        for _ in 0..max_queues {
            rx.push(
                KBox::pin_init(new_spinlock!(RxRing::new(dev, RFD_DEFAULT)?), GFP_KERNEL)?,
                GFP_KERNEL,
            )?;
            rx_stats.push(QueueStats::default(), GFP_KERNEL)?;
        }
        let mut hw = Hw::new(nic, revision);
        hw.hibernate = false;
        let (tx_imt, rx_imt) = (hw.tx_imt, hw.rx_imt);
        let link = KBox::pin_init(new_spinlock!(None), GFP_KERNEL)?;
        let mac_stats = KBox::pin_init(new_spinlock!([0u64; MAC_STATS]), GFP_KERNEL)?;
        let this = KBox::new(
            Self {
                bar,
                pdev: dev,
                dma: DmaDev::new(pdev),
                nic,
                device_id: pdev.device_id(),
                max_queues,
                queues: AtomicUsize::new(max_queues),
                hw,
                link,
                rx_buf_len: AtomicU32::new(RX_BUF_MIN),
                tx,
                tx_idx,
                rx,
                rx_count: AtomicU16::new(RFD_DEFAULT),
                tx_stats,
                rx_stats,
                rx_bad_rrd: AtomicU64::new(0),
                mac_stats,
                up: AtomicBool::new(false),
                link_event: AtomicBool::new(false),
                reset_pending: AtomicBool::new(false),
                hw_errors: AtomicU64::new(0),
                resets: AtomicU64::new(0),
                gone: AtomicBool::new(false),
                napi: netdev::NapiSet::new(),
                rx_csum: AtomicBool::new(nic == NicType::Mt),
                intr_mask: AtomicU32::new(Self::intr_mask_for(max_queues, max_queues)),
                imr: AtomicU32::new(0),
                tx_imt: AtomicU16::new(tx_imt),
                rx_imt: AtomicU16::new(rx_imt),
                moderation_lock: KBox::pin_init(new_spinlock!(()), GFP_KERNEL)?,
                adaptive_rx: AtomicBool::new(false),
                dim_rx_imt: AtomicU16::new(rx_imt),
                msg_enable: AtomicU32::new(MSG_DEFAULT),
                wol: AtomicU32::new(0),
                advertising: AtomicU32::new(hw::link_mode::AUTONEG),
            },
            GFP_KERNEL,
        )?;
        Ok(KBox::into_pin(this))
    }

    /// The interrupts to unmask with `queues` channels on a chip of `max_queues` rings: tx
    /// of rings `0..queues`, rx of every ring the card steers to (see [`Self::rx_rings_for`]).
    fn intr_mask_for(queues: usize, max_queues: usize) -> u32 {
        let mut m = regs::IMR_NORMAL_MASK;
        for q in 0..queues.min(regs::ISR_TX_PKT.len()) {
            m |= regs::ISR_TX_PKT[q];
        }
        for r in 0..Self::rx_rings_for(queues, max_queues).min(regs::ISR_RX_PKT.len()) {
            m |= regs::ISR_RX_PKT[r];
        }
        m
    }

    /// The rx rings the card fills with `queues` channels: one, or all of them (the Mikrotik
    /// card spreads rx by flow hash over its four rings in `MT_MODE_4Q` and has no
    /// indirection table to leave one out). Channel `c` polls rings `c, c + queues, ...`.
    fn rx_rings_for(queues: usize, max_queues: usize) -> usize {
        if queues > 1 {
            max_queues
        } else {
            1
        }
    }

    /// The rx rings in use.
    fn rx_rings(&self) -> usize {
        Self::rx_rings_for(self.queues(), self.max_queues)
    }

    /// The channel that polls rx ring `ring`.
    fn rx_channel(&self, ring: usize) -> usize {
        ring.checked_rem(self.queues()).unwrap_or(0)
    }

    fn io(&self) -> Regs<'_> {
        Regs(&self.bar)
    }

    /// Number of queue pairs the chip has.
    pub(crate) fn max_queues(&self) -> usize {
        self.max_queues
    }

    /// Queue pairs in use.
    fn queues(&self) -> usize {
        self.queues.load(Ordering::Acquire)
    }

    /// Features to offer for this chip.
    pub(crate) fn features(&self) -> u64 {
        let mut f = features::SG | features::HW_CSUM | features::TSO | features::TSO6;
        if self.nic == NicType::Mt {
            f |= features::RXCSUM;
        }
        f
    }

    /// Largest MTU: 9500 on Mikrotik, 6 KiB frames on the gigabit chips, 1500 otherwise.
    pub(crate) fn max_mtu(&self) -> u32 {
        match self.nic {
            NicType::Mt => 9500,
            NicType::L1c | NicType::L1d | NicType::L1d2 => 6 * 1024 - (14 + 4 + 4),
            _ => 1500,
        }
    }

    /// Probe-time hardware setup: PCIe quirks, PHY and MAC reset, PHY init; returns the
    /// station address the card holds, if valid.
    pub(crate) fn probe_hw(&self) -> Result<Option<[u8; 6]>> {
        let io = self.io();
        // Until the first link up the PHY may hibernate: slow MDIO clock (L1D2/L2CB2).
        let mut hw = self.hw.clone();
        hw.hibernate = true;
        hw.reset_pcie(&io, true);
        hw.phy_reset(&io).map_err(|_| EIO)?;
        hw.reset_mac(&io).map_err(|_| EIO)?;
        hw.phy_init(&io).map_err(|_| EIO)?;
        Ok(hw.read_mac_addr(&io))
    }

    /// Masks every interrupt (unbind).
    pub(crate) fn quiesce(&self) {
        self.imr.store(0, Ordering::Release);
        self.io().write(regs::IMR(0));
    }

    /// Writes the IMR shadow to the card until what it wrote is still the shadow. The handler
    /// (masking) and NAPI completions (unmasking) update it from different CPUs: whichever
    /// writes last has seen every update, so the card ends with the last value, with no lock.
    fn imr_sync(&self) {
        let io = self.io();
        loop {
            let v = self.imr.load(Ordering::Acquire);
            io.write(regs::IMR(v & !IMR_LIVE));
            if self.imr.load(Ordering::Acquire) == v {
                return;
            }
        }
    }

    /// Masks `bits` (causes whose NAPI instance is being scheduled).
    fn imr_mask(&self, bits: u32) {
        let f = |v: u32| (v & bits != 0).then_some(v & !bits);
        if self
            .imr
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, f)
            .is_ok()
        {
            self.imr_sync();
        }
    }

    /// Unmasks `bits` (a NAPI instance completed), unless the interface went down.
    fn imr_unmask(&self, bits: u32) {
        let f = |v: u32| (v & IMR_LIVE != 0 && v & bits != bits).then_some(v | bits);
        if self
            .imr
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, f)
            .is_ok()
        {
            self.imr_sync();
        }
    }

    /// The rx causes of the rings channel `ch` polls.
    fn rx_bits(&self, ch: usize) -> u32 {
        let n = self.queues().max(1);
        (ch..self.rx_rings().min(regs::ISR_RX_PKT.len()))
            .step_by(n)
            .fold(0, |m, r| m | regs::ISR_RX_PKT.get(r).copied().unwrap_or(0))
    }

    /// Whether the card is gone: once a read returned all-ones where the card cannot (here
    /// `MASTER_CTRL`, whose reserved bits read 0), for good. The first time, the task is
    /// scheduled to take the interface down.
    fn card_gone(&self) -> bool {
        if self.gone.load(Ordering::Relaxed) {
            return true;
        }
        if !hw::all_ones(self.io().read::<regs::MASTER_CTRL>().raw()) {
            return false;
        }
        if !self.gone.swap(true, Ordering::AcqRel) {
            self.napi.schedule_task();
        }
        true
    }

    /// Writes the tx producer index: the doorbell.
    fn doorbell(&self, q: usize, ntu: u16) {
        self.io().write16(queue::TPD_PIDX[q], ntu);
        self.tx_stats[q].doorbells.fetch_add(1, Ordering::Relaxed);
    }

    /// The NAPI instances of the queues in use: rx `0..queues`, tx `max_queues + q`.
    fn active_napis(&self) -> impl Iterator<Item = usize> {
        let n = self.queues();
        Iterator::chain(0..n, self.max_queues..self.max_queues + n)
    }

    /// The moderation to program (timer units): the `ethtool -C` values, with DIM's current
    /// rx choice while adaptive-rx is on.
    fn moderation(&self) -> (u16, u16) {
        let tx = self.tx_imt.load(Ordering::Relaxed);
        let rx = if self.adaptive_rx.load(Ordering::Relaxed) {
            self.dim_rx_imt.load(Ordering::Relaxed)
        } else {
            self.rx_imt.load(Ordering::Relaxed)
        };
        (tx, rx)
    }

    /// Feeds DIM the rx totals of the queues in use.
    fn dim_sample(&self) {
        let (mut events, mut packets, mut bytes) = (0u64, 0u64, 0u64);
        for s in self.rx_stats.iter().take(self.queues()) {
            events += s.completions.load(Ordering::Relaxed);
            packets += s.packets.load(Ordering::Relaxed);
            bytes += s.bytes.load(Ordering::Relaxed);
        }
        // CAST: DIM counts events modulo 2^16.
        self.napi.dim_sample(events as u16, packets, bytes);
    }

    fn read16(&self, off: usize) -> u16 {
        let v = self.io().read32(off & !3);
        // CAST: one half of the dword.
        (v >> ((off & 2) * 8)) as u16
    }

    /// Gives the card a buffer in every free RFD. Returns whether the ring is full: on an
    /// allocation or mapping failure it stops, counts `alloc_fail`, and leaves the rest to the
    /// next NAPI poll (which `rx_poll` then schedules itself: a card without buffers raises
    /// no rx interrupt).
    fn rx_fill(&self, dev: NetDev, napi: Option<&Napi>, q: usize, buf_len: u32) -> Result<bool> {
        let Some(lock) = self.rx.get(q) else {
            return Err(EINVAL);
        };
        let mut r = lock.lock();
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
            if r.bufs.get(i).is_some_and(Option::is_some) {
                break;
            }
            let Some(skb) = SkBuff::alloc_rx(&dev, napi, buf_len) else {
                r.refill_failed = true;
                break;
            };
            let dma = match skb.map_head(&self.dma, 0, buf_len, Dir::FromDevice) {
                Ok(a) => a,
                Err(_) => {
                    skb.drop_reason(DropReason::NoMem);
                    r.refill_failed = true;
                    break;
                }
            };
            dma_write!(r.rfd, [try: i], ring::Rfd { buffer_addr: dma }.to_bytes());
            if let Some(slot) = r.bufs.get_mut(i) {
                *slot = Some(RxBuf { skb, dma });
            }
            r.rfd_next_to_use = next;
            filled = true;
        }
        if filled {
            let ntu = r.rfd_next_to_use;
            self.io().write32(queue::RFD_PROD_IDX[q], u32::from(ntu));
        }
        if r.refill_failed {
            if let Some(s) = self.rx_stats.get(self.rx_channel(q)) {
                s.alloc_fail.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(!r.refill_failed)
    }

    /// How many buffers rx queue `q` has given the card.
    fn rx_posted(&self, q: usize) -> usize {
        self.rx
            .get(q)
            .map_or(0, |l| l.lock().bufs.iter().filter(|b| b.is_some()).count())
    }

    /// Counts the frames the card returned that NAPI never took (the MAC is stopped, NAPI
    /// disabled): they are discarded with the ring, and each lands in `rxN_dropped`, so every
    /// frame the card delivered is counted once. Bounded by the ring: the RRDs are the
    /// device's to write.
    fn rx_count_unpolled(&self, q: usize) {
        let (Some(lock), Some(stats)) = (self.rx.get(q), self.rx_stats.get(self.rx_channel(q)))
        else {
            return;
        };
        let r = lock.lock();
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

    fn rx_clean_ring(&self, q: usize) {
        let Some(lock) = self.rx.get(q) else {
            return;
        };
        let mut r = lock.lock();
        let len = self.rx_buf_len();
        for slot in r.bufs.iter_mut() {
            if let Some(b) = slot.take() {
                netdev::unmap(&self.dma, b.dma, len, Dir::FromDevice, false);
                b.skb.drop_reason(DropReason::DevReady);
            }
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

    fn rx_buf_len(&self) -> u32 {
        self.rx_buf_len.load(Ordering::Relaxed)
    }

    fn tx_clean_ring(&self, dev: NetDev, q: usize) {
        let Some(lock) = self.tx.get(q) else {
            return;
        };
        let mut t = lock.lock();
        for slot in t.bufs.iter_mut() {
            if let Some(b) = slot.take() {
                netdev::unmap(&self.dma, b.dma, b.len, Dir::ToDevice, b.page);
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

    /// Programs rings, interrupt moderation, MTU, queues and DMA (`atl1c_configure_mac`).
    fn configure(&self, mtu: u32) -> Result {
        let io = self.io();
        let hw = &self.hw;
        if self.nic == NicType::Mt {
            io.modify(|r: regs::MT_MODE| r.with_bit(regs::MT_MODE::Q4, self.rx_rings() > 1));
        }
        io.modify(|r: regs::MASTER_CTRL| {
            r.with_bit(regs::MASTER_CTRL::TX_ITIMER_EN, false)
                .with_bit(regs::MASTER_CTRL::RX_ITIMER_EN, false)
                .with_bit(regs::MASTER_CTRL::INT_RDCLR, false)
        });
        io.write(regs::ISR(u32::MAX));
        io.write(regs::WOL_CTRL(0));
        io.write(regs::CLK_GATING_CTRL(0));
        io.write(regs::INT_RETRIG_TIMER(u32::from(hw.ict)));
        // Rings: every ring shares the high 32 bits; the DMA mask keeps them at 0.
        io.write(regs::TX_BASE_ADDR_HI(0));
        for (q, lock) in self.tx.iter().enumerate() {
            let t = lock.lock();
            // CAST: the 32-bit DMA mask guarantees the address fits.
            io.write32(queue::TPD_ADDR_LO[q], t.desc.dma_handle() as u32);
        }
        let tpds = self
            .tx_idx
            .first()
            .map_or(TPD_DEFAULT, |i| i.count.load(Ordering::Acquire));
        io.write(regs::TPD_RING_SIZE(u32::from(tpds)));
        io.write(regs::RX_BASE_ADDR_HI(0));
        for (q, lock) in self.rx.iter().enumerate() {
            let r = lock.lock();
            // CAST: as above.
            io.write32(queue::RFD_HEAD_ADDR_LO[q], r.rfd.dma_handle() as u32);
            io.write32(queue::RRD_HEAD_ADDR_LO[q], r.rrd.dma_handle() as u32);
        }
        let rfds = self.rx_count.load(Ordering::Acquire);
        io.write(regs::RFD_RING_SIZE(u32::from(rfds)));
        io.write(regs::RX_BUF_SIZE(self.rx_buf_len.load(Ordering::Relaxed)));
        io.write(regs::RRD_RING_SIZE(u32::from(rfds)));
        io.write(regs::LOAD_PTR(1));
        // The timers and their enables as ethtool -C / DIM last set them.
        self.apply_moderation();
        io.modify(|r: regs::MASTER_CTRL| r.with_bit(regs::MASTER_CTRL::SA_TIMER_EN, true));
        io.write(regs::SMB_STAT_TIMER(hw.smb_timer));
        io.write(regs::MTU(mtu + ETH_HLEN + 4 + 4));
        io.write(regs::TX_TSO_OFFLOAD_THRESH((7 * 1024) >> 3));
        let txq = regs::TXQ_CTRL::default()
            .with_field(regs::TXQ_CTRL::NUM_TPD_BURST, hw.tpd_burst)
            .with_bit(regs::TXQ_CTRL::ENH_MODE, true)
            .with_bit(regs::TXQ_CTRL::LS_8023_EN, true)
            .with_bit(regs::TXQ_CTRL::IP_OPTION_EN, true)
            .with_field(
                regs::TXQ_CTRL::TXF_BURST_NUM,
                if matches!(self.nic, NicType::L2cB | NicType::L2cB2) {
                    0x40
                } else {
                    0x200
                },
            );
        io.write(txq);
        io.write(regs::RXQ_CTRL::default().with_field(regs::RXQ_CTRL::RFD_BURST_NUM, hw.rfd_burst));
        io.write(
            regs::DMA_CTRL::default()
                .with_field(regs::DMA_CTRL::RORDER_MODE, 4)
                .with_bit(regs::DMA_CTRL::RREQ_PRI_DATA, true)
                .with_field(regs::DMA_CTRL::RREQ_BLEN, hw.dmar_block)
                .with_field(regs::DMA_CTRL::WDLY_CNT, 4)
                .with_field(regs::DMA_CTRL::RDLY_CNT, 15),
        );
        Ok(())
    }

    /// Checks the link and starts the MAC for it; carrier follows.
    fn check_link(&self, dev: NetDev) {
        let io = self.io();
        let mut cur = self.link.lock();
        let up = self.hw.link_up(&io).unwrap_or(false);
        if !up {
            if dev.carrier_ok() {
                dev.carrier_off();
                pr_info!("link down\n");
            }
            *cur = None;
            return;
        }
        let Ok(link) = self.hw.link(&io) else {
            return;
        };
        if *cur != Some(link) {
            *cur = Some(link);
            self.hw.set_aspm(&io, link.speed);
            let _ = self.hw.post_link_change(&io, link.speed);
            self.hw.start_mac(&io, link);
            pr_info!(
                "link up <{} Mbps {} duplex>\n",
                link.speed,
                if link.full_duplex { "full" } else { "half" }
            );
        }
        if !dev.carrier_ok() {
            dev.carrier_on();
        }
    }

    fn tx_frame(&self, dev: NetDev, mut skb: SkBuff, more: bool) {
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
        let mut put = |addr, blen: u32, page| {
            k += 1;
            let mut d = tmpl;
            // CAST: buffer lengths are below 64 KiB (skb head and page fragments).
            d.buffer_len = blen as u16;
            d.buffer_addr = addr;
            d.set_bit(tpd::EOP, k == n);
            let buf = TxBuf {
                skb: None,
                dma: addr,
                len: blen,
                page,
            };
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
                    Ok(a) => put(a, len, false),
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
                    Ok((a, len)) => put(a, len, true),
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
                    netdev::unmap(&self.dma, b.dma, b.len, Dir::ToDevice, b.page);
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
        st.packets.fetch_add(segs, Ordering::Relaxed);
        st.bytes.fetch_add(wire, Ordering::Relaxed);
        if gso {
            st.gso_packets.fetch_add(1, Ordering::Relaxed);
            st.gso_bytes.fetch_add(u64::from(len), Ordering::Relaxed);
            st.gso_wire_packets.fetch_add(segs, Ordering::Relaxed);
            st.gso_wire_bytes.fetch_add(wire, Ordering::Relaxed);
        }
        // Stop before the ring can fill; a stopped queue makes `sent` ring the doorbell, so
        // nothing is held back behind xmit_more.
        if !txq.maybe_stop(idx, TX_STOP, TX_START) {
            self.tx_stats[q].stops.fetch_add(1, Ordering::Relaxed);
        }
        if txq.sent(len, more) {
            self.doorbell(q, ntu);
        }
    }

    /// Drops a frame `tx_frame` cannot send (the ring lock released), counted in `txN_dropped`,
    /// after a doorbell at `ntu`: what earlier frames held back behind xmit_more goes out.
    fn tx_drop(&self, q: usize, ntu: u16, skb: SkBuff, reason: DropReason) {
        self.doorbell(q, ntu);
        self.tx_stats[q].dropped.fetch_add(1, Ordering::Relaxed);
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

    fn tx_complete(&self, dev: NetDev, q: usize, budget: i32) -> u32 {
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
                netdev::unmap(&self.dma, b.dma, b.len, Dir::ToDevice, b.page);
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

    /// NAPI rx poll of channel `ch`: its rings share the budget. Returns the budget while
    /// any ring may hold more (NAPI polls again), else the frames taken.
    fn rx_poll(&self, dev: NetDev, napi: &Napi, ch: usize, budget: i32) -> i32 {
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
    fn rx_poll_ring(&self, dev: NetDev, napi: &Napi, ch: usize, q: usize, budget: i32) -> i32 {
        let (Some(lock), Some(st)) = (self.rx.get(q), self.rx_stats.get(ch)) else {
            return 0;
        };
        let buf_len = self.rx_buf_len();
        let mt = self.nic == NicType::Mt;
        let csum = self.rx_csum.load(Ordering::Relaxed);
        let mut done = 0;
        let mut short = false;
        // Counted per poll, not per frame: one atomic add each at the end.
        let (mut packets, mut bytes, mut csum_ok) = (0u64, 0u64, 0u64);
        while done < budget {
            let mut r = lock.lock();
            short = r.refill_failed;
            let ring = r.ring;
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
            drop(r);
            let count = ring.count();
            done += 1;
            let Some(buf) = buf else {
                self.rx_bad_rrd.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            // CAST: rx buffers are below 16 KiB.
            let checked = ring::check_rrd(&rrd, count, expected, buf_len as u16, mt);
            // Sync only what the device wrote (frame and FCS) when the RRD can be trusted.
            let used = checked
                .map(|f| u32::from(f.len) + u32::from(ring::ETH_FCS_LEN))
                .unwrap_or(0);
            netdev::unmap_rx(&self.dma, buf.dma, buf_len, used);
            match checked {
                Ok(f) => {
                    let mut skb = buf.skb;
                    skb.put(u32::from(f.len));
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
                Err(ring::RxError::FrameError) => {
                    st.errors.fetch_add(1, Ordering::Relaxed);
                    buf.skb.drop_reason(DropReason::NotSpecified);
                }
                Err(_) => {
                    self.rx_bad_rrd.fetch_add(1, Ordering::Relaxed);
                    buf.skb.drop_reason(DropReason::NotSpecified);
                }
            }
        }
        if packets > 0 {
            st.packets.fetch_add(packets, Ordering::Relaxed);
            st.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
        if csum_ok > 0 {
            st.csum_ok.fetch_add(csum_ok, Ordering::Relaxed);
        }
        // A ring left short by an allocation failure is refilled even without a frame: the
        // card may have no buffer left to raise an interrupt with. While it stays short, NAPI
        // stays scheduled (the whole budget reported as done) and retries, as ixgbe does.
        if (done > 0 || short) && !self.rx_fill(dev, Some(napi), q, buf_len).unwrap_or(true) {
            return budget;
        }
        done
    }

    /// Stops the interface: transmit, interrupts, NAPI, the MAC, the rings. Idempotent: after
    /// an open that failed (a reset on a wedged card), NAPI is already disabled and the rings
    /// are empty, and only what is still to do is done.
    fn down(&self, dev: NetDev) {
        let io = self.io();
        if self.up.swap(false, Ordering::AcqRel) {
            // Waits for a transmit in progress on another CPU.
            dev.tx_disable();
            self.imr.store(0, Ordering::Release);
            io.write(regs::IMR(0));
            io.write(regs::ISR(regs::ISR::DIS_INT.mask()));
            io.flush();
            for i in self.active_napis() {
                self.napi.disable(i);
            }
            self.napi.dim_cancel();
        }
        // No NAPI instance stays listed while stopped (NapiSet: threaded NAPI waits for every
        // listed instance to go idle); all are disabled by now.
        let _ = self.napi.set_queues(0);
        if !self.gone.load(Ordering::Relaxed) {
            let _ = self.hw.reset_mac(&io);
        }
        dev.carrier_off();
        netdev::bh_disabled(|| {
            *self.link.lock() = None;
            for q in 0..self.tx.len() {
                self.tx_clean_ring(dev, q);
            }
            for q in 0..self.rx.len() {
                self.rx_count_unpolled(q);
                self.rx_clean_ring(q);
            }
        });
    }

    /// Brings the interface up: MAC reset and configuration, rings, link, NAPI, interrupts.
    /// On failure nothing is left running: the MAC reset, the rings emptied.
    fn open_hw(&self, dev: NetDev) -> Result {
        let r = self.open_inner(dev);
        if r.is_err() {
            self.down(dev);
        }
        r
    }

    fn open_inner(&self, dev: NetDev) -> Result {
        dev.carrier_off();
        let mtu = dev.mtu();
        let buf_len = if mtu > 1500 {
            (mtu + ETH_HLEN + 4 + 4).next_multiple_of(8)
        } else {
            RX_BUF_MIN
        };
        self.rx_buf_len.store(buf_len, Ordering::Relaxed);
        netdev::bh_disabled(|| *self.link.lock() = None);
        let io = self.io();
        if self.gone.load(Ordering::Relaxed) {
            return Err(ENODEV);
        }
        self.hw.reset_mac(&io).map_err(|e| match e {
            HwError::Gone => ENODEV,
            _ => EIO,
        })?;
        self.hw.set_mac_addr(&io, dev.mac());
        netdev::NetDevOps::set_rx_mode(self, dev);
        // Ring and link locks are shared with NAPI and xmit: take them with softirqs off.
        netdev::bh_disabled(|| -> Result {
            for q in 0..self.tx.len() {
                self.tx_clean_ring(dev, q);
            }
            for q in 0..self.rx.len() {
                self.rx_clean_ring(q);
            }
            self.configure(mtu)?;
            for q in 0..self.rx_rings() {
                // A short ring is refilled by NAPI; one without a single buffer cannot start.
                if !self.rx_fill(dev, None, q, buf_len)? && self.rx_posted(q) == 0 {
                    return Err(ENOMEM);
                }
            }
            // Link first: MDIO belongs to open until NAPI is enabled.
            self.check_link(dev);
            Ok(())
        })?;
        self.napi.set_queues(self.queues())?;
        self.up.store(true, Ordering::Release);
        for i in self.active_napis() {
            self.napi.enable(i);
        }
        if self.adaptive_rx.load(Ordering::Relaxed) {
            self.napi.dim_restart();
        }
        io.write(regs::ISR(0x7fff_ffff));
        self.imr.store(
            self.intr_mask.load(Ordering::Relaxed) | IMR_LIVE,
            Ordering::Release,
        );
        self.imr_sync();
        io.flush();
        dev.wake_queues();
        Ok(())
    }

    /// Stops and starts a running interface (tx timeout, link loss, ring or MTU change) with
    /// the stack kept out meanwhile: detached, no transmit. If the open fails the device stays
    /// detached with its carrier off, NAPI disabled and the rings empty, so `ip link set
    /// down` and rmmod complete; the next `ip link set up` tries again.
    fn restart(&self, dev: NetDev, f: impl FnOnce()) -> Result {
        dev.detach();
        self.down(dev);
        f();
        let r = self.open_hw(dev);
        if r.is_ok() {
            dev.attach();
        }
        r
    }
}

impl netdev::IrqHandler for Adapter<'_> {
    fn handle(&self) -> bool {
        let io = self.io();
        let isr = io.read::<regs::ISR>().raw();
        if hw::all_ones(isr) {
            // Not ours, or the card is gone: the task finds out which.
            if !self.gone.load(Ordering::Relaxed) {
                self.napi.schedule_task();
            }
            return false;
        }
        // Causes masked while their NAPI instance runs stay pending: unmasking raises them.
        let status = isr & self.imr.load(Ordering::Acquire) & !IMR_LIVE;
        if status == 0 || isr & regs::ISR::DIS_INT.mask() != 0 {
            return false;
        }
        // Ack what we saw and hold further interrupts while scheduling.
        io.write(regs::ISR(status | regs::ISR::DIS_INT.mask()));
        if self.up.load(Ordering::Acquire) {
            if status & ISR_RESET != 0 {
                // atl1c_intr: a DMA or tx queue timeout needs a MAC reset. Interrupts stay
                // held (ISR_DIS_INT) until the reset reprograms the card.
                self.hw_errors.fetch_add(1, Ordering::Relaxed);
                self.reset_pending.store(true, Ordering::Release);
                self.napi.schedule_task();
                return true;
            }
            // No rx or tx interrupt while the instance it schedules runs: its completion
            // unmasks them (one interrupt per NAPI cycle, not per moderation period).
            self.imr_mask(status & ISR_NAPI);
            for r in 0..self.rx_rings().min(regs::ISR_RX_PKT.len()) {
                if status & regs::ISR_RX_PKT[r] != 0 {
                    if let Some(n) = self.napi.get(self.rx_channel(r)) {
                        n.schedule();
                    }
                }
            }
            for q in 0..self.queues().min(regs::ISR_TX_PKT.len()) {
                if status & regs::ISR_TX_PKT[q] != 0 {
                    if let Some(n) = self.napi.get(self.max_queues + q) {
                        n.schedule();
                    }
                }
            }
            if status
                & (regs::ISR::GPHY.mask()
                    | regs::ISR::MANUAL.mask()
                    | regs::ISR::PHY_LINKDOWN.mask())
                != 0
            {
                self.link_event.store(true, Ordering::Release);
                self.napi.schedule_task();
            }
        }
        io.write(regs::ISR(0));
        true
    }
}

impl netdev::NetDevOps for Adapter<'_> {
    // The TPD's MSS field has 13 bits: at MTU 9000 a TCP segment (8948) does not fit, and the
    // stack segments such skbs itself (the C driver masks the MSS and sends runts instead).
    const MAX_GSO_SIZE: u32 = ring::TSO_MSS_MAX;

    fn open(&self, dev: NetDev) -> Result {
        self.open_hw(dev)
    }

    fn stop(&self, dev: NetDev) {
        self.down(dev);
        // A reset whose open failed left the device detached: `ip link set up` retries.
        if !dev.present() && !self.gone.load(Ordering::Relaxed) {
            dev.attach();
        }
    }

    fn start_xmit(&self, dev: NetDev, skb: SkBuff, more: bool) {
        self.tx_frame(dev, skb, more);
    }

    fn get_stats64(&self, _dev: NetDev, s: &mut Stats64) {
        for q in &self.tx_stats {
            s.tx_packets += q.packets.load(Ordering::Relaxed);
            s.tx_bytes += q.bytes.load(Ordering::Relaxed);
            s.tx_dropped += q.dropped.load(Ordering::Relaxed);
            s.tx_errors += q.errors.load(Ordering::Relaxed);
        }
        for q in &self.rx_stats {
            s.rx_packets += q.packets.load(Ordering::Relaxed);
            s.rx_bytes += q.bytes.load(Ordering::Relaxed);
            s.rx_dropped += q.dropped.load(Ordering::Relaxed);
            s.rx_errors += q.errors.load(Ordering::Relaxed);
        }
        s.rx_errors += self.rx_bad_rrd.load(Ordering::Relaxed);
        // What only the MAC sees: frames it dropped for lack of an RFD or FIFO space.
        // The counters clear on read, so every read is accumulated under the lock. Only these
        // two are read here (`ip -s link`, /proc/net/dev), not all 49 (ethtool -S reads them).
        let acc = self.mac_counters_of(&[RX_RRD_OV, RX_RXF_OV]);
        s.rx_dropped += acc[RX_RRD_OV];
        s.rx_fifo_errors += acc[RX_RXF_OV];
    }

    fn set_rx_mode(&self, dev: NetDev) {
        // Called under the address-list spinlock: no sleeping, so no ctrl mutex.
        let (promisc, allmulti) = dev.rx_flags();
        let mut list = [[0u8; 6]; 64];
        let (n, all) = match dev.mc_list(&mut list) {
            Some(n) => (n, allmulti),
            None => (0, true),
        };
        self.hw
            .set_rx_mode(&self.io(), promisc, all, list[..n].iter());
    }

    fn set_mac(&self, _dev: NetDev, mac: [u8; 6]) {
        self.hw.set_mac_addr(&self.io(), mac);
    }

    fn change_mtu(&self, dev: NetDev, mtu: u32) -> Result {
        if mtu > self.max_mtu() {
            return Err(EINVAL);
        }
        self.with_down(dev, || {
            dev.set_mtu(mtu);
            Ok::<(), Error>(())
        })?;
        // TSO depends on the MTU on the gigabit chips (fix_features).
        dev.update_features();
        Ok(())
    }

    fn tx_timeout(&self, _dev: NetDev, queue: u32) {
        // Atomic context: the reset runs in the task.
        pr_warn!("tx queue {} timed out, resetting\n", queue);
        if let Some(s) = self.tx_stats.get(queue as usize) {
            s.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.reset_pending.store(true, Ordering::Release);
        self.napi.schedule_task();
    }

    fn task(&self, dev: NetDev) {
        if self.card_gone() {
            // Surprise removal: the stack is kept out and the rings are released; nothing is
            // asked of the card again. `ip link set down` and rmmod complete at once.
            if dev.present() {
                pr_err!("the card is gone (registers read all-ones); the interface stays down\n");
                dev.detach();
                self.down(dev);
            }
            return;
        }
        if self.reset_pending.swap(false, Ordering::AcqRel) {
            pr_warn!("resetting the MAC and the rings\n");
            self.resets.fetch_add(1, Ordering::Relaxed);
            if self.restart(dev, || {}).is_err() {
                pr_err!("reset failed; the interface stays down until set down and up again\n");
            }
            return;
        }
        if !self.link_event.swap(false, Ordering::AcqRel) {
            return;
        }
        let io = self.io();
        // On AR8151 reading the PHY's interrupt status clears it.
        if self.nic.has_mdio_phy() {
            let _ = self.hw.read_phy(&io, regs::phy::MII_ISR);
        }
        let up = self.hw.link_up(&io).unwrap_or(false);
        let was_up = netdev::bh_disabled(|| self.link.lock().is_some());
        if !up && was_up {
            // Link down (atl1c_check_link_status): carrier off at once, then reset the MAC
            // and the rings; open leaves the MAC stopped until the link returns.
            dev.carrier_off();
            pr_info!("link down\n");
            if self.restart(dev, || {}).is_err() {
                pr_err!("ring reset after link down failed\n");
            }
        } else {
            netdev::bh_disabled(|| self.check_link(dev));
        }
    }

    fn poll(&self, dev: NetDev, napi: Napi, index: usize, budget: i32) -> i32 {
        if index < self.max_queues {
            let done = self.rx_poll(dev, &napi, index, budget);
            if done < budget && napi.complete_done(done) {
                self.imr_unmask(self.rx_bits(index));
                if let Some(s) = self.rx_stats.get(index) {
                    s.completions.fetch_add(1, Ordering::Relaxed);
                }
                if self.adaptive_rx.load(Ordering::Relaxed) {
                    self.dim_sample();
                }
            }
            return done;
        }
        let q = index - self.max_queues;
        let n = self.tx_complete(dev, q, budget);
        // CAST: at most the ring size.
        let n = (n as i32).min(budget);
        if n < budget && napi.complete_done(n) {
            self.imr_unmask(regs::ISR_TX_PKT.get(q).copied().unwrap_or(0));
        }
        n
    }

    fn napi_set(&self) -> &netdev::NapiSet {
        &self.napi
    }

    fn fix_features(&self, dev: NetDev, features: u64) -> u64 {
        // atl1c_fix_features: the gigabit chips cannot segment frames above 7 KiB.
        if self.nic != NicType::Mt && dev.mtu() > MAX_TSO_FRAME_SIZE {
            return features & !(features::TSO | features::TSO6);
        }
        features
    }

    fn set_features(&self, _dev: NetDev, features: u64) -> Result {
        // Tx offloads are per frame (the stack stops asking for them); rx checksumming
        // decides whether the Mikrotik NIC's verdict is used.
        self.rx_csum
            .store(features & features::RXCSUM != 0, Ordering::Relaxed);
        Ok(())
    }
}

/// `ethtool -d` dump: the C driver's layout (`atl1c_get_regs`), 74 dwords, version 1.
const REGS_DUMP: [usize; 22] = [
    regs::PM_CTRL::OFFSET,
    regs::MAC_HALF_DUPLX_CTRL::OFFSET,
    regs::TWSI_CTRL::OFFSET,
    regs::PCIE_DEV_MISC_CTRL::OFFSET,
    regs::MASTER_CTRL::OFFSET,
    regs::MANUAL_TIMER_INIT::OFFSET,
    regs::IRQ_MODRT_TIMER_INIT::OFFSET,
    regs::GPHY_CTRL::OFFSET,
    // REG_LINK_CTRL: the PCIe link control register, mirrored at the start of BAR0.
    0x68,
    regs::IDLE_STATUS::OFFSET,
    regs::MDIO_CTRL::OFFSET,
    regs::SERDES::OFFSET,
    regs::MAC_CTRL::OFFSET,
    regs::MAC_IPG_IFG::OFFSET,
    regs::MAC_STA_ADDR::OFFSET,
    regs::MAC_STA_ADDR::OFFSET + 4,
    regs::RX_HASH_TABLE::OFFSET,
    regs::RX_HASH_TABLE::OFFSET + 4,
    regs::RXQ_CTRL::OFFSET,
    regs::TXQ_CTRL::OFFSET,
    regs::MTU::OFFSET,
    regs::WOL_CTRL::OFFSET,
];
/// `AT_REGS_LEN` in dwords; the PHY's BMCR and BMSR are the last two.
const REGS_LEN: usize = 74;
/// `AT_EEPROM_LEN`.
const EEPROM_LEN: usize = 512;
/// `WAKE_PHY | WAKE_MAGIC`: what the chip can wake on (`atl1c_get_wol`).
const WOL_SUPPORTED: u32 = (1 << 0) | (1 << 5);
/// Per-queue `ethtool -S` counters: tx then rx.
const TX_QUEUE_STATS: [&str; 7] = [
    "packets",
    "bytes",
    "dropped",
    "errors",
    "doorbells",
    "frames_per_doorbell",
    "stopped",
];
const RX_QUEUE_STATS: [&str; 6] = [
    "packets",
    "bytes",
    "errors",
    "dropped",
    "irqs",
    "alloc_fail",
];
const DRIVER_STATS: [&str; 3] = ["rx_bad_rrd", "hw_errors", "resets"];

impl Adapter<'_> {
    /// Programs the current moderation (`ethtool -C`, DIM) without touching anything else.
    fn apply_moderation(&self) {
        let _guard = self.moderation_lock.lock();
        let (tx, rx) = self.moderation();
        self.hw.set_moderation(&self.io(), tx, rx);
    }

    /// The MAC counters, accumulated (reading them clears the hardware's).
    fn mac_counters(&self) -> [u64; MAC_STATS] {
        let all: [usize; MAC_STATS] = core::array::from_fn(|i| i);
        self.mac_counters_of(&all)
    }

    /// Reads the MAC counters at the indices `which` (each register clears on read, so the
    /// others keep counting in the card) into the accumulated ones, and returns those.
    fn mac_counters_of(&self, which: &[usize]) -> [u64; MAC_STATS] {
        let io = self.io();
        netdev::bh_disabled(|| {
            let mut acc = self.mac_stats.lock();
            if self.gone.load(Ordering::Relaxed) {
                return *acc;
            }
            let mut now = [0u32; MAC_STATS];
            for &i in which {
                if let Some(v) = now.get_mut(i) {
                    *v = io.read32(regs::stats::RX_BIN + 4 * i);
                }
            }
            // A card that is gone reads all-ones: its last counts stand.
            if now.iter().any(|v| hw::all_ones(*v)) && self.card_gone() {
                return *acc;
            }
            for (a, v) in acc.iter_mut().zip(now) {
                *a += u64::from(v);
            }
            *acc
        })
    }

    /// Replaces every ring with one of the new size (interface down). On failure the old
    /// rings stay.
    fn resize_rings(&self, rx: u16, tx: u16) -> Result {
        let mut new_tx = KVec::new();
        for _ in 0..self.tx.len() {
            new_tx.push(TxRing::new(self.pdev, tx)?, GFP_KERNEL)?;
        }
        let mut new_rx = KVec::new();
        for _ in 0..self.rx.len() {
            new_rx.push(RxRing::new(self.pdev, rx)?, GFP_KERNEL)?;
        }
        // Swap under the locks (shared with NAPI: softirqs off); free the old rings after,
        // outside the atomic section.
        let mut old_tx = KVec::new();
        let mut old_rx = KVec::new();
        old_tx.reserve(self.tx.len(), GFP_KERNEL)?;
        old_rx.reserve(self.rx.len(), GFP_KERNEL)?;
        netdev::bh_disabled(|| {
            for ((lock, idx), mut ring) in self.tx.iter().zip(&self.tx_idx).zip(new_tx.drain_all())
            {
                core::mem::swap(&mut *lock.lock(), &mut ring);
                idx.count.store(tx, Ordering::Release);
                idx.next_to_use.store(0, Ordering::Release);
                idx.next_to_clean.store(0, Ordering::Release);
                let _ = old_tx.push(ring, GFP_ATOMIC);
            }
            for (lock, mut ring) in self.rx.iter().zip(new_rx.drain_all()) {
                core::mem::swap(&mut *lock.lock(), &mut ring);
                let _ = old_rx.push(ring, GFP_ATOMIC);
            }
            self.rx_count.store(rx, Ordering::Release);
        });
        drop(old_tx);
        drop(old_rx);
        Ok(())
    }

    /// Runs `f` with the interface stopped if it is running, then brings it back up.
    fn with_down<E: From<Error>>(
        &self,
        dev: NetDev,
        f: impl FnOnce() -> core::result::Result<(), E>,
    ) -> core::result::Result<(), E> {
        if !self.up.load(Ordering::Acquire) {
            return f();
        }
        let mut r = Ok(());
        self.restart(dev, || r = f())?;
        r
    }
}

impl netdev::EthtoolOps for Adapter<'_> {
    const NAME: &'static CStr = c"atl1c_rs";

    fn link_info(&self, dev: NetDev) -> netdev::LinkInfo {
        use crate::hw::link_mode as m;
        let link = netdev::bh_disabled(|| *self.link.lock());
        let link = link.filter(|_| dev.carrier_ok());
        let speed = link.map(|l| l.speed);
        let (supported, advertising) = if self.nic.has_mdio_phy() {
            let adv = self
                .hw
                .advertised_modes(self.advertising.load(Ordering::Relaxed));
            (self.hw.supported_modes(0), adv | m::AUTONEG | m::TP)
        } else {
            let s = self.hw.supported_modes(speed.unwrap_or(0));
            (s, s)
        };
        netdev::LinkInfo {
            speed,
            full_duplex: link.is_some_and(|l| l.full_duplex),
            autoneg: self.nic.has_mdio_phy(),
            supported,
            advertising,
        }
    }

    fn set_link(&self, _dev: NetDev, req: netdev::LinkRequest) -> Result {
        use crate::hw::link_mode as m;
        if !self.nic.has_mdio_phy() {
            // The Mikrotik card's rate is fixed by its firmware (MT_SPEED).
            return Err(netdev::eopnotsupp());
        }
        let all = self.hw.advertised_modes(m::AUTONEG);
        let adv = if req.autoneg {
            let modes = req.advertising & all;
            if modes == 0 {
                return Err(EINVAL);
            }
            if modes == all {
                m::AUTONEG
            } else {
                modes
            }
        } else {
            // As the C driver: a forced mode is autonegotiated alone.
            let mode = match (req.speed, req.full_duplex) {
                (1000, true) => m::T1000_FULL,
                (100, true) => m::T100_FULL,
                (100, false) => m::T100_HALF,
                (10, true) => m::T10_FULL,
                (10, false) => m::T10_HALF,
                _ => return Err(EINVAL),
            };
            if mode & all == 0 {
                return Err(EINVAL);
            }
            mode
        };
        if self.advertising.swap(adv, Ordering::AcqRel) != adv {
            // MDIO is serialised by RTNL (ethtool, open/stop and the link task hold it).
            self.hw.restart_autoneg(&self.io(), adv).map_err(|_| EIO)?;
        }
        Ok(())
    }

    fn nway_reset(&self, _dev: NetDev) -> Result {
        if !self.nic.has_mdio_phy() {
            return Err(netdev::eopnotsupp());
        }
        let adv = self.advertising.load(Ordering::Acquire);
        self.hw.restart_autoneg(&self.io(), adv).map_err(|_| EIO)
    }

    fn regs_len(&self) -> usize {
        REGS_LEN
    }

    fn regs(&self, _dev: NetDev, out: &mut [u32]) -> u32 {
        let io = self.io();
        for (o, &off) in out.iter_mut().zip(REGS_DUMP.iter()) {
            *o = io.read32(off);
        }
        // The PHY registers only where there is an MDIO PHY (never touch MDIO on Mikrotik).
        if self.nic.has_mdio_phy() && out.len() == REGS_LEN {
            use crate::hw::mii;
            let bmcr = self.hw.read_phy(&io, mii::BMCR).unwrap_or(0);
            let bmsr = self.hw.read_phy(&io, mii::BMSR).unwrap_or(0);
            out[REGS_LEN - 2] = u32::from(bmcr);
            out[REGS_LEN - 1] = u32::from(bmsr);
        }
        1
    }

    fn msglevel(&self) -> u32 {
        self.msg_enable.load(Ordering::Relaxed)
    }

    fn set_msglevel(&self, level: u32) {
        self.msg_enable.store(level, Ordering::Relaxed);
    }

    fn wol(&self) -> (u32, u32) {
        (WOL_SUPPORTED, self.wol.load(Ordering::Relaxed))
    }

    fn set_wol(&self, opts: u32) -> Result {
        if opts & !WOL_SUPPORTED != 0 {
            return Err(netdev::eopnotsupp());
        }
        self.wol.store(opts, Ordering::Relaxed);
        Ok(())
    }

    fn eeprom_len(&self) -> usize {
        if self.hw.eeprom_exists(&self.io()) {
            EEPROM_LEN
        } else {
            0
        }
    }

    fn eeprom(&self, offset: usize, out: &mut [u8]) -> Result<u32> {
        let end = offset.checked_add(out.len()).ok_or(EINVAL)?;
        if out.is_empty() || end > EEPROM_LEN || !self.hw.eeprom_exists(&self.io()) {
            return Err(EINVAL);
        }
        let io = self.io();
        let first = offset & !3;
        for (k, dword) in (first..end).step_by(4).enumerate() {
            // CAST: below EEPROM_LEN.
            let v = self.hw.read_eeprom(&io, dword as u32).ok_or(EIO)?;
            for (j, b) in v.to_le_bytes().into_iter().enumerate() {
                let at = first + 4 * k + j;
                if at >= offset && at < end {
                    if let Some(d) = out.get_mut(at - offset) {
                        *d = b;
                    }
                }
            }
        }
        // PCI vendor | device << 16, as the C driver.
        Ok(0x1969 | (u32::from(self.device_id) << 16))
    }

    fn coalesce(&self) -> netdev::Coalesce {
        netdev::Coalesce {
            rx_usecs: hw::modrt_to_usecs(self.rx_imt.load(Ordering::Relaxed)),
            tx_usecs: hw::modrt_to_usecs(self.tx_imt.load(Ordering::Relaxed)),
            adaptive_rx: self.adaptive_rx.load(Ordering::Relaxed),
        }
    }

    fn set_coalesce(&self, _dev: NetDev, c: netdev::Coalesce) -> netdev::ExtResult {
        let rx = hw::usecs_to_modrt(c.rx_usecs).map_err(|_| {
            netdev::ExtErr::inval(
                c"rx-usecs out of range: the timer counts 2 us in 16 bits, at most 131070",
            )
        })?;
        let tx = hw::usecs_to_modrt(c.tx_usecs).map_err(|_| {
            netdev::ExtErr::inval(
                c"tx-usecs out of range: the timer counts 2 us in 16 bits, at most 131070",
            )
        })?;
        let was_adaptive = self.adaptive_rx.load(Ordering::Acquire);
        if was_adaptive && !c.adaptive_rx {
            self.napi.dim_cancel();
        }
        self.tx_imt.store(tx, Ordering::Relaxed);
        self.rx_imt.store(rx, Ordering::Relaxed);
        if c.adaptive_rx && !was_adaptive {
            // Start from DIM's default profile.
            self.napi.dim_restart();
            if let Some(us) = self.napi.dim_profile_usecs() {
                let imt = hw::usecs_to_modrt(us).unwrap_or(rx);
                self.dim_rx_imt.store(imt, Ordering::Relaxed);
            }
        }
        self.adaptive_rx.store(c.adaptive_rx, Ordering::Release);
        self.apply_moderation();
        Ok(())
    }

    fn rings(&self) -> netdev::Rings {
        netdev::Rings {
            rx_max: RFD_MAX,
            tx_max: TPD_MAX,
            rx: u32::from(self.rx_count.load(Ordering::Relaxed)),
            tx: self
                .tx_idx
                .first()
                .map_or(0, |i| u32::from(i.count.load(Ordering::Relaxed))),
        }
    }

    fn set_rings(&self, dev: NetDev, rx: u32, tx: u32) -> netdev::ExtResult {
        if rx < RING_MIN || tx < RING_MIN {
            return Err(netdev::ExtErr::inval(c"rings need at least 64 descriptors"));
        }
        // The core already checked the maximums reported by get_ringparam.
        let (Ok(rx), Ok(tx)) = (u16::try_from(rx), u16::try_from(tx)) else {
            return Err(netdev::ExtErr::inval(c"ring too large"));
        };
        let cur = self.rings();
        if u32::from(rx) == cur.rx && u32::from(tx) == cur.tx {
            return Ok(());
        }
        self.with_down(dev, || {
            self.resize_rings(rx, tx).map_err(|e| netdev::ExtErr {
                err: e,
                msg: c"cannot allocate the rings; the old ones stay",
            })
        })
    }

    fn channels(&self) -> netdev::Channels {
        netdev::Channels {
            // CAST: at most 4.
            max_combined: self.max_queues as u32,
            combined: self.queues() as u32,
        }
    }

    fn set_channels(&self, dev: NetDev, combined: u32) -> netdev::ExtResult {
        // Channels are NAPI instances and tx rings; with more than one, the card fills all
        // its rx rings (MT_MODE_4Q) and channel c polls rings c, c + combined, ...
        if combined == 0 || combined as usize > self.max_queues {
            return Err(netdev::ExtErr::inval(
                c"more channels than the card has queues",
            ));
        }
        if combined as usize == self.queues() {
            return Ok(());
        }
        self.with_down(dev, || {
            // CAST: at most max_queues, checked above.
            let n = combined as usize;
            // The next open adds the NAPI instances of the channels in use.
            dev.set_real_num_queues(combined)?;
            self.queues.store(n, Ordering::Release);
            self.intr_mask
                .store(Self::intr_mask_for(n, self.max_queues), Ordering::Relaxed);
            Ok(())
        })
    }

    fn stats_count(&self) -> usize {
        self.tx.len() * TX_QUEUE_STATS.len()
            + self.rx.len() * RX_QUEUE_STATS.len()
            + DRIVER_STATS.len()
            + MAC_STATS
    }

    fn stats_names(&self, names: &mut netdev::StatNames<'_>) {
        for q in 0..self.tx.len() {
            for n in TX_QUEUE_STATS {
                names.add(format_args!("tx{q}_{n}"));
            }
        }
        for q in 0..self.rx.len() {
            for n in RX_QUEUE_STATS {
                names.add(format_args!("rx{q}_{n}"));
            }
        }
        for n in DRIVER_STATS {
            names.add(format_args!("{n}"));
        }
        for n in regs::stats::NAMES {
            names.add(format_args!("mac_{n}"));
        }
    }

    fn stats(&self, _dev: NetDev, out: &mut [u64]) {
        let tx = self.tx_stats.iter().flat_map(|s| {
            let pkts = s.packets.load(Ordering::Relaxed);
            let bells = s.doorbells.load(Ordering::Relaxed);
            [
                pkts,
                s.bytes.load(Ordering::Relaxed),
                s.dropped.load(Ordering::Relaxed),
                s.errors.load(Ordering::Relaxed),
                bells,
                pkts.checked_div(bells).unwrap_or(0),
                s.stops.load(Ordering::Relaxed),
            ]
        });
        let rx = self.rx_stats.iter().flat_map(|s| {
            [
                s.packets.load(Ordering::Relaxed),
                s.bytes.load(Ordering::Relaxed),
                s.errors.load(Ordering::Relaxed),
                s.dropped.load(Ordering::Relaxed),
                s.completions.load(Ordering::Relaxed),
                s.alloc_fail.load(Ordering::Relaxed),
            ]
        });
        // `Iterator::` spelled out: pin-init's blanket `Init::chain` is in scope too.
        let queues = Iterator::chain(tx, rx);
        let driver: [u64; DRIVER_STATS.len()] = [
            self.rx_bad_rrd.load(Ordering::Relaxed),
            self.hw_errors.load(Ordering::Relaxed),
            self.resets.load(Ordering::Relaxed),
        ];
        let driver = Iterator::chain(queues, driver);
        for (o, x) in out
            .iter_mut()
            .zip(Iterator::chain(driver, self.mac_counters()))
        {
            *o = x;
        }
    }

    fn eth_mac_stats(&self) -> netdev::EthMacStats {
        use regs::stats::index as i;
        let m = self.mac_counters();
        let g = |n: &str| m.get(i(n)).copied().unwrap_or(0);
        // The MAC counts a good frame's bytes without its FCS (atl1c.h: rx_byte_cnt,
        // tx_byte_cnt); the octet counters of 802.3 as ethtool reports them (and as
        // drivers/net/hw/ethtool_std_stats.sh checks them) include it.
        let with_fcs = |bytes: u64, frames: u64| bytes.wrapping_add(frames.wrapping_mul(4));
        netdev::EthMacStats {
            frames_tx_ok: g("tx_ok"),
            frames_rx_ok: g("rx_ok"),
            fcs_errors: g("rx_fcs_err"),
            alignment_errors: g("rx_align_err"),
            octets_tx_ok: with_fcs(g("tx_byte_cnt"), g("tx_ok")),
            octets_rx_ok: with_fcs(g("rx_byte_cnt"), g("rx_ok")),
            single_collisions: g("tx_1_col"),
            multiple_collisions: g("tx_2_col"),
            deferred: g("tx_defer"),
            late_collisions: g("tx_late_col"),
            aborted_xs_colls: g("tx_abort_col"),
            lost_int_mac_xmit: g("tx_underrun"),
            lost_int_mac_rcv: g("rx_rxf_ov"),
            mcast_tx: g("tx_mcast"),
            bcast_tx: g("tx_bcast"),
            excessive_deferral: g("tx_exc_defer"),
            mcast_rx: g("rx_mcast"),
            bcast_rx: g("rx_bcast"),
            in_range_length_errors: g("rx_len_err"),
            too_long: g("rx_sz_ov"),
        }
    }

    fn rmon_stats(&self) -> netdev::RmonStats {
        use regs::stats::{
            index as i,
            RX_SZ_64,
            SZ_BUCKETS,
            TX_SZ_64, //
        };
        let m = self.mac_counters();
        let g = |k: usize| m.get(k).copied().unwrap_or(0);
        let mut r = netdev::RmonStats {
            undersize: g(i("rx_runt")),
            oversize: g(i("rx_sz_ov")),
            fragments: g(i("rx_frag")),
            ..Default::default()
        };
        for b in 0..SZ_BUCKETS.min(netdev::RMON_BUCKETS) {
            r.rx_hist[b] = g(RX_SZ_64 + b);
            r.tx_hist[b] = g(TX_SZ_64 + b);
        }
        r
    }

    fn qstats_rx(&self, q: usize) -> netdev::QStatsRx {
        self.rx_stats
            .get(q)
            .map_or_else(Default::default, QueueStats::rx)
    }

    fn qstats_tx(&self, q: usize) -> netdev::QStatsTx {
        self.tx_stats
            .get(q)
            .map_or_else(Default::default, QueueStats::tx)
    }

    fn qstats_base(&self) -> (netdev::QStatsRx, netdev::QStatsTx) {
        // The queues not in use (after ethtool -L) keep what they counted.
        let n = self.queues();
        let mut rx = netdev::QStatsRx::default();
        for r in self.rx_stats.iter().skip(n).map(QueueStats::rx) {
            rx.packets += r.packets;
            rx.bytes += r.bytes;
            rx.alloc_fail += r.alloc_fail;
            rx.csum_unnecessary += r.csum_unnecessary;
        }
        let mut tx = netdev::QStatsTx::default();
        for t in self.tx_stats.iter().skip(n).map(QueueStats::tx) {
            tx.packets += t.packets;
            tx.bytes += t.bytes;
            tx.stop += t.stop;
            tx.hw_gso_packets += t.hw_gso_packets;
            tx.hw_gso_bytes += t.hw_gso_bytes;
            tx.hw_gso_wire_packets += t.hw_gso_wire_packets;
            tx.hw_gso_wire_bytes += t.hw_gso_wire_bytes;
        }
        (rx, tx)
    }

    fn dim_update(&self, _dev: NetDev, rx_usecs: u32) {
        let imt = hw::usecs_to_modrt(rx_usecs).unwrap_or(u16::MAX);
        self.dim_rx_imt.store(imt, Ordering::Relaxed);
        if self.adaptive_rx.load(Ordering::Acquire) {
            self.apply_moderation();
        }
    }
}
