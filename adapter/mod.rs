// SPDX-License-Identifier: GPL-2.0

//! The driver proper, in safe Rust over the netdev layer and hw.rs: the adapter's state,
//! bring-up and teardown, and the net_device ops. The paths live one to a file:
//!
//! - [`tx`]: transmit (TPD fill, doorbell) and its completion;
//! - [`rx`]: rx buffers, refill, the RRD parse and NAPI rx poll;
//! - [`irq`]: the interrupt handler, the IMR shadow, NAPI completion and moderation;
//! - [`link`]: the link, resets, and reconfiguration of a running interface;
//! - [`ethtool`]: the ethtool operations and the MAC counters.

mod ethtool;
mod irq;
mod link;
mod power;
mod recovery;
mod rx;
mod tx;

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
        features,
        msg,
        netdev_warn,
        DmaDev,
        Napi,
        NetDev,
        PagePool,
        SkBuff,
        Stats64, //
    },
    regs::{
        self,
        queue,
        Register, //
    },
    ring,
    Bar0,
    Regs, //
};

use irq::IMR_LIVE;
use rx::RxQueue;
use tx::TxQueue;

/// TPDs per tx ring by default (the C driver's).
const TPD_DEFAULT: u16 = 1024;
/// RFDs (and RRDs) per rx ring by default.
const RFD_DEFAULT: u16 = 512;
/// Smallest ring `ethtool -G` accepts: room for a few largest frames.
pub(crate) const RING_MIN: u32 = 64;
/// Largest tx ring (`TPD_RING_SIZE` holds 16 bits; 64 KiB of descriptors).
pub(crate) const TPD_MAX: u32 = 4096;
/// Largest rx ring (`RFD_RING_SIZE` and `RRD_RING_SIZE` hold 12 bits).
pub(crate) const RFD_MAX: u32 = 4095;
/// `AT_RX_BUF_SIZE`: 1500 + Ethernet header + VLAN + FCS.
const RX_BUF_MIN: u32 = 1518 + 4;
/// `ETH_HLEN`.
const ETH_HLEN: u32 = 14;
/// Rx rings a card has at most (one rx interrupt cause each).
const MAX_RX_RINGS: usize = regs::ISR_RX_PKT.len();
/// `MAX_TSO_FRAME_SIZE`: largest MTU with TSO on the gigabit chips.
const MAX_TSO_FRAME_SIZE: u32 = 7 * 1024;
/// MAC statistics registers.
const MAC_STATS: usize = regs::stats::RX_COUNT + regs::stats::TX_COUNT;
/// Index of `rx_rrd_ov` (frames dropped for lack of an RFD) in the MAC statistics.
const RX_RRD_OV: usize = regs::stats::index("rx_rrd_ov");
/// Index of `rx_rxf_ov` (rx FIFO overflow).
const RX_RXF_OV: usize = regs::stats::index("rx_rxf_ov");

/// Adds `n` to a counter that has a single writer: the xmit path of its tx queue (serialised
/// by the stack's tx queue lock) or the NAPI instance of its channel. A load and a store, not a
/// locked read-modify-write (as `u64_stats_add` on 64-bit); readers see the old total or the
/// new one. Counters with writers in more than one context use `fetch_add`.
fn add_local(c: &AtomicU64, n: u64) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
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
    /// Tx queues, one per hardware queue (no lock: see [`TxQueue`]).
    tx: KVec<TxQueue>,
    /// Rx queues, one per hardware queue (no lock: see [`RxQueue`]).
    rx: KVec<RxQueue>,
    /// RFDs per rx ring (`ethtool -G rx`).
    rx_count: AtomicU16,
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
    /// The card is out of reach for a while: asleep (system sleep, D3hot) or in PCI error
    /// recovery; see [`Self::offline`].
    offline: AtomicBool,
    napi: netdev::NapiSet,
    rx_csum: AtomicBool,
    /// The MAC strips VLAN tags into the RRD (`NETIF_F_HW_VLAN_CTAG_RX`) and inserts them
    /// from the TPD.
    vlan_strip: AtomicBool,
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
    /// The station address the card held at probe (48 bits), with [`PERM_MAC_VALID`].
    perm_mac: AtomicU64,
    /// Enabled Wake-on-LAN options (`WAKE_*`).
    wol: AtomicU32,
    /// Link modes advertised by autonegotiation (legacy `ADVERTISED_*`), AR8151.
    advertising: AtomicU32,
}

/// In `Adapter::perm_mac`: the card held a valid address at probe.
const PERM_MAC_VALID: u64 = 1 << 63;

/// `NETIF_MSG_DRV | NETIF_MSG_PROBE | NETIF_MSG_LINK`, the C driver's default.
const MSG_DEFAULT: u32 = msg::DRV | msg::PROBE | msg::LINK;

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
        let mut rx = KVec::new();
        // The hardware always has the PRI0 and PRI1 TPD rings: give both memory.
        for q in 0..max_queues.max(2) {
            tx.push(TxQueue::new(dev, q, TPD_DEFAULT)?, GFP_KERNEL)?;
        }
        for _ in 0..max_queues {
            rx.push(RxQueue::new(dev, RFD_DEFAULT)?, GFP_KERNEL)?;
        }
        let mut hw = Hw::new(nic, revision);
        hw.hibernate = false;
        // DMA read requests within the function's Max_Read_Request_Size, raised to 512 bytes
        // where it is below (atl1c_configure_dma).
        let readrq = netdev::pcie_readrq(pdev)?;
        if let Some(rq) = hw.fit_read_requests(readrq) {
            netdev::set_pcie_readrq(pdev, rq)?;
        }
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
                rx,
                rx_count: AtomicU16::new(RFD_DEFAULT),
                rx_bad_rrd: AtomicU64::new(0),
                mac_stats,
                up: AtomicBool::new(false),
                link_event: AtomicBool::new(false),
                reset_pending: AtomicBool::new(false),
                hw_errors: AtomicU64::new(0),
                resets: AtomicU64::new(0),
                gone: AtomicBool::new(false),
                offline: AtomicBool::new(false),
                napi: netdev::NapiSet::new()?,
                rx_csum: AtomicBool::new(nic == NicType::Mt),
                vlan_strip: AtomicBool::new(true),
                intr_mask: AtomicU32::new(Self::intr_mask_for(max_queues, max_queues)),
                imr: AtomicU32::new(0),
                tx_imt: AtomicU16::new(tx_imt),
                rx_imt: AtomicU16::new(rx_imt),
                moderation_lock: KBox::pin_init(new_spinlock!(()), GFP_KERNEL)?,
                adaptive_rx: AtomicBool::new(false),
                dim_rx_imt: AtomicU16::new(rx_imt),
                msg_enable: AtomicU32::new(MSG_DEFAULT),
                perm_mac: AtomicU64::new(0),
                wol: AtomicU32::new(0),
                advertising: AtomicU32::new(hw::link_mode::AUTONEG),
            },
            GFP_KERNEL,
        )?;
        Ok(KBox::into_pin(this))
    }
}

impl Adapter<'_> {
    /// The interrupts to unmask with `queues` channels on a chip of `max_queues` rings: tx
    /// of rings `0..queues`, rx and RFD underrun of every ring the card steers to (see
    /// [`Self::rx_rings_for`]).
    fn intr_mask_for(queues: usize, max_queues: usize) -> u32 {
        let mut m = regs::IMR_NORMAL_MASK;
        for q in 0..queues.min(regs::ISR_TX_PKT.len()) {
            m |= regs::ISR_TX_PKT[q];
        }
        for r in 0..Self::rx_rings_for(queues, max_queues).min(regs::ISR_RX_PKT.len()) {
            m |= regs::ISR_RX_PKT[r] | regs::ISR_RFD_UR[r];
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

    /// Whether `ethtool -s DEV msglvl` has messages of `class` (`msg::*`) on.
    fn msg(&self, class: u32) -> bool {
        self.msg_enable.load(Ordering::Relaxed) & class != 0
    }

    /// Queue pairs in use.
    fn queues(&self) -> usize {
        self.queues.load(Ordering::Acquire)
    }

    /// Features to offer for this chip (the user may toggle each).
    pub(crate) fn features(&self) -> u64 {
        let mut f = features::SG
            | features::HW_CSUM
            | features::TSO
            | features::TSO6
            | features::HW_VLAN_CTAG_RX;
        if self.nic == NicType::Mt {
            f |= features::RXCSUM;
        }
        f
    }

    /// Features on besides: VLAN tag insertion, which follows stripping (`fix_features`).
    pub(crate) fn features_on(&self) -> u64 {
        features::HW_VLAN_CTAG_TX
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
        self.init_card()?;
        let mac = self.hw.read_mac_addr(&self.io());
        if let Some(m) = mac {
            let v = m.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b));
            self.perm_mac.store(v | PERM_MAC_VALID, Ordering::Relaxed);
        }
        Ok(mac)
    }

    /// What `atl1c_remove` leaves the card in, once the interface is closed: the station
    /// address it came with (so that the next probe reads the permanent address, not the
    /// last one set with `ip link`), the MAC stopped and the PHY powered down
    /// (`atl1c_phy_disable`); the next probe's PHY reset powers it up.
    pub(crate) fn release_card(&self) {
        if self.gone.load(Ordering::Relaxed) {
            return;
        }
        let v = self.perm_mac.load(Ordering::Relaxed);
        if v & PERM_MAC_VALID != 0 {
            // CAST: the six low bytes, most significant first.
            let mac: [u8; 6] = core::array::from_fn(|i| (v >> (8 * (5 - i))) as u8);
            self.hw.set_mac_addr(&self.io(), mac);
        }
        // Nothing to wake on: no MDIO access, so no error (the link is down once closed).
        let _ = self.hw.power_saving(&self.io(), hw::Wake::NONE, None);
    }

    /// PCIe quirks, PHY and MAC reset, PHY init: what probe and resume do before the
    /// interface may open.
    fn init_card(&self) -> Result {
        let io = self.io();
        // Until the first link up the PHY may hibernate: slow MDIO clock (L1D2/L2CB2).
        let mut hw = self.hw.clone();
        hw.hibernate = true;
        hw.reset_pcie(&io, true);
        hw.phy_reset(&io).map_err(|_| EIO)?;
        hw.reset_mac(&io).map_err(|_| EIO)?;
        hw.phy_init(&io).map_err(|_| EIO)?;
        Ok(())
    }

    /// Masks every interrupt (unbind).
    pub(crate) fn quiesce(&self) {
        self.imr.store(0, Ordering::Release);
        self.io().write(regs::IMR(0));
    }

    /// Whether the card is offline (system sleep or PCI error recovery, until resume): nothing
    /// reaches its registers, which in D3hot or on a frozen link read all-ones. The link task
    /// and the MAC counters leave it alone; resume sets it up from scratch.
    pub(super) fn offline(&self) -> bool {
        self.offline.load(Ordering::Acquire)
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

    /// The NAPI instances of the queues in use: rx `0..queues`, tx `max_queues + q`.
    fn active_napis(&self) -> impl Iterator<Item = usize> {
        let n = self.queues();
        Iterator::chain(0..n, self.max_queues..self.max_queues + n)
    }

    fn read16(&self, off: usize) -> u16 {
        let v = self.io().read32(off & !3);
        // CAST: one half of the dword.
        (v >> ((off & 2) * 8)) as u16
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
        for (q, t) in self.tx.iter().enumerate() {
            // Configured with the interface down or its datapath stopped: both ends are free.
            let x = t.ring.exclusive().ok_or(EBUSY)?;
            // CAST: the 32-bit DMA mask guarantees the address fits.
            io.write32(queue::TPD_ADDR_LO[q], x.ring().dma_handle() as u32);
        }
        let tpds = self.tx.first().map_or(TPD_DEFAULT, |t| t.ring.count());
        io.write(regs::TPD_RING_SIZE(u32::from(tpds)));
        io.write(regs::RX_BASE_ADDR_HI(0));
        for (q, rq) in self.rx.iter().enumerate() {
            let r = rq.ring.claim().ok_or(EBUSY)?;
            // CAST: as above.
            let (rfd, rrd) = r.dma_handles();
            io.write32(queue::RFD_HEAD_ADDR_LO[q], rfd as u32);
            io.write32(queue::RRD_HEAD_ADDR_LO[q], rrd as u32);
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
        io.write(regs::MTU(max_frame_len(mtu)));
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

    /// Stops the interface: transmit, interrupts, NAPI, the MAC, the rings. Idempotent: after
    /// an open that failed (a reset on a wedged card), NAPI is already disabled and the rings
    /// are empty, and only what is still to do is done.
    fn down(&self, dev: NetDev<'_>) {
        self.stop_datapath(dev);
        if !self.gone.load(Ordering::Relaxed) && !self.offline() {
            let _ = self.hw.reset_mac(&self.io());
        }
        dev.carrier_off();
        netdev::bh_disabled(|| *self.link.lock() = None);
        // Destroyed here, in process context (it may sleep), with every buffer given back.
        drop(self.empty_rings(dev));
    }

    /// Stops transmit, interrupts and NAPI: nothing of the driver runs on the rings after it.
    /// Idempotent.
    pub(super) fn stop_datapath(&self, dev: NetDev<'_>) {
        if self.up.swap(false, Ordering::AcqRel) {
            let io = self.io();
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
    }

    /// Empties every ring (the card's queues stopped, NAPI disabled): what tx held is freed,
    /// what rx delivered unpolled is counted dropped. Returns the rx pools, for the caller to
    /// drop in process context.
    #[must_use]
    pub(super) fn empty_rings(&self, dev: NetDev<'_>) -> [Option<PagePool>; MAX_RX_RINGS] {
        let mut pools: [Option<PagePool>; MAX_RX_RINGS] = [const { None }; MAX_RX_RINGS];
        netdev::bh_disabled(|| {
            for q in 0..self.tx.len() {
                self.tx_clean_ring(dev, q);
            }
            for q in 0..self.rx.len() {
                self.rx_count_unpolled(q);
                self.rx_clean_ring(q);
                if let Some(slot) = pools.get_mut(q) {
                    *slot = self.rx_take_pool(q);
                }
            }
        });
        pools
    }

    /// Brings the interface up: MAC reset and configuration, rings, link, NAPI, interrupts.
    /// On failure nothing is left running: the MAC reset, the rings emptied.
    fn open_hw(&self, dev: NetDev<'_>) -> Result {
        let r = self.open_inner(dev);
        if r.is_err() {
            self.down(dev);
        }
        r
    }

    fn open_inner(&self, dev: NetDev<'_>) -> Result {
        dev.carrier_off();
        let mtu = dev.mtu();
        let buf_len = rx_buf_len(mtu);
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
        // Made here, where making them may sleep.
        let pools = self.rx_pools(dev, buf_len)?;
        self.load_rings(dev, mtu, pools)?;
        // Link first: MDIO belongs to open until NAPI is enabled. Its lock is shared with
        // NAPI: softirqs off.
        netdev::bh_disabled(|| self.check_link(dev));
        self.run_datapath(dev)
    }

    /// Gives the rx rings `pools`, programs the card for `mtu` and fills the rx rings: the
    /// card's queues stopped, the rings empty. What a ring already had (none after a down)
    /// is dropped here too.
    pub(super) fn load_rings(&self, dev: NetDev<'_>, mtu: u32, pools: KVec<PagePool>) -> Result {
        let io = self.io();
        let mut old: [Option<PagePool>; MAX_RX_RINGS] = [const { None }; MAX_RX_RINGS];
        // The pools' lockless caches are NAPI's: fill and free with softirqs off, as NAPI does.
        let r = netdev::bh_disabled(|| -> Result {
            for q in 0..self.tx.len() {
                self.tx_clean_ring(dev, q);
            }
            for q in 0..self.rx.len() {
                self.rx_clean_ring(q);
            }
            for ((q, pool), slot) in pools.into_iter().enumerate().zip(old.iter_mut()) {
                *slot = self.rx_install_pool(q, pool);
            }
            self.configure(mtu)?;
            self.hw
                .set_vlan_strip(&io, self.vlan_strip.load(Ordering::Relaxed));
            for q in 0..self.rx_rings() {
                // A short ring is refilled by NAPI; one without a single buffer cannot start.
                if !self.rx_fill(q)? && self.rx_posted(q) == 0 {
                    return Err(ENOMEM);
                }
            }
            Ok(())
        });
        drop(old);
        r
    }

    /// Starts what [`Self::stop_datapath`] stopped: NAPI, interrupts, transmit.
    pub(super) fn run_datapath(&self, dev: NetDev<'_>) -> Result {
        let io = self.io();
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
}

/// The largest frame at `mtu`, what the MAC's `MTU` register holds: the Ethernet header, a
/// VLAN tag and the FCS around the payload.
pub(super) fn max_frame_len(mtu: u32) -> u32 {
    mtu + ETH_HLEN + 4 + 4
}

/// The rx buffer for `mtu`: its largest frame, 8-byte aligned, never less than a standard
/// frame's. (`atl1c_set_rxbufsize` keeps the standard size up to MTU 1522, 22 bytes short of
/// such a frame above 1500.)
pub(super) fn rx_buf_len(mtu: u32) -> u32 {
    if mtu > 1500 {
        max_frame_len(mtu).next_multiple_of(8)
    } else {
        RX_BUF_MIN
    }
}

impl netdev::NetDevOps for Adapter<'_> {
    // The TPD's MSS field has 13 bits: at MTU 9000 a TCP segment (8948) does not fit, and the
    // stack segments such skbs itself (the C driver masks the MSS and sends runts instead).
    const MAX_GSO_SIZE: u32 = ring::TSO_MSS_MAX;

    fn open(&self, dev: NetDev<'_>) -> Result {
        self.open_hw(dev)
    }

    fn stop(&self, dev: NetDev<'_>) {
        self.down(dev);
        // A reset whose open failed left the device detached: `ip link set up` retries. Not
        // while the card is offline (PCI error recovery): its resume attaches it.
        if !dev.present() && !self.gone.load(Ordering::Relaxed) && !self.offline() {
            dev.attach();
        }
    }

    fn start_xmit(&self, dev: NetDev<'_>, skb: SkBuff, more: bool) {
        self.tx_frame(dev, skb, more);
    }

    fn get_stats64(&self, _dev: NetDev<'_>, s: &mut Stats64) {
        for q in self.tx.iter().map(|t| &t.stats) {
            s.tx_packets += q.packets.load(Ordering::Relaxed);
            s.tx_bytes += q.bytes.load(Ordering::Relaxed);
            s.tx_dropped += q.dropped.load(Ordering::Relaxed);
            s.tx_errors += q.errors.load(Ordering::Relaxed);
        }
        for q in self.rx.iter().map(|rq| &rq.stats) {
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

    fn set_rx_mode(&self, dev: NetDev<'_>) {
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

    fn set_mac(&self, _dev: NetDev<'_>, mac: [u8; 6]) {
        self.hw.set_mac_addr(&self.io(), mac);
    }

    fn change_mtu(&self, dev: NetDev<'_>, mtu: u32) -> Result {
        if mtu > self.max_mtu() {
            return Err(EINVAL);
        }
        if self.up.load(Ordering::Acquire) {
            self.change_mtu_running(dev, mtu)?;
        } else {
            dev.set_mtu(mtu);
        }
        // TSO depends on the MTU on the gigabit chips (fix_features).
        dev.update_features();
        Ok(())
    }

    fn tx_timeout(&self, dev: NetDev<'_>, queue: u32) {
        // Atomic context: the reset runs in the task.
        if self.msg(msg::TX_ERR) {
            netdev_warn!(dev, "tx queue {} timed out, resetting\n", queue);
        }
        if let Some(t) = self.tx.get(queue as usize) {
            t.stats.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.reset_pending.store(true, Ordering::Release);
        self.napi.schedule_task();
    }

    fn task(&self, dev: NetDev<'_>) {
        self.link_task(dev);
    }

    fn poll(&self, dev: NetDev<'_>, napi: Napi<'_>, index: usize, budget: i32) -> i32 {
        self.napi_poll(dev, &napi, index, budget)
    }

    fn napi_set(&self) -> &netdev::NapiSet {
        &self.napi
    }

    fn fix_features(&self, dev: NetDev<'_>, features: u64) -> u64 {
        // atl1c_fix_features: the MAC inserts tags only when it strips them (one MAC_CTRL
        // bit, RMV_VLAN, governs both)...
        let mut f = features;
        if f & features::HW_VLAN_CTAG_RX != 0 {
            f |= features::HW_VLAN_CTAG_TX;
        } else {
            f &= !features::HW_VLAN_CTAG_TX;
        }
        // ...and the gigabit chips cannot segment frames above 7 KiB.
        if self.nic != NicType::Mt && dev.mtu() > MAX_TSO_FRAME_SIZE {
            f &= !(features::TSO | features::TSO6);
        }
        f
    }

    fn mii_read(&self, _dev: NetDev<'_>, reg: u16) -> Result<u16> {
        if !self.nic.has_mdio_phy() {
            return Err(netdev::eopnotsupp());
        }
        // MDIO is serialised by RTNL (the ioctl, ethtool, open/stop and the link task).
        self.hw.read_phy(&self.io(), reg).map_err(|_| EIO)
    }

    fn mii_write(&self, _dev: NetDev<'_>, reg: u16, val: u16) -> Result {
        if !self.nic.has_mdio_phy() {
            return Err(netdev::eopnotsupp());
        }
        self.hw.write_phy(&self.io(), reg, val).map_err(|_| EIO)
    }

    fn set_features(&self, _dev: NetDev<'_>, features: u64) -> Result {
        // Tx offloads are per frame (the stack stops asking for them); rx checksumming
        // decides whether the Mikrotik NIC's verdict is used.
        self.rx_csum
            .store(features & features::RXCSUM != 0, Ordering::Relaxed);
        // VLAN tag stripping is the MAC's (atl1c_vlan_mode), changed live while up (RTNL
        // serialises this with open and stop).
        let strip = features & features::HW_VLAN_CTAG_RX != 0;
        self.vlan_strip.store(strip, Ordering::Relaxed);
        if self.up.load(Ordering::Acquire) {
            self.hw.set_vlan_strip(&self.io(), strip);
        }
        Ok(())
    }
}
