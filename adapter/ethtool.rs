// SPDX-License-Identifier: GPL-2.0

//! The ethtool operations, the MAC's clear-on-read counters and the statistics glue.

use core::sync::atomic::Ordering;

use kernel::prelude::*;

use super::{
    Adapter,
    MAC_STATS,
    RFD_MAX,
    RING_MIN,
    TPD_MAX, //
};
use crate::{
    hw::{
        self,
        RegIo, //
    },
    netdev::{
        self,
        NetDev, //
    },
    regs::{
        self,
        Register, //
    },
};

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
/// `WAKE_PHY`, `WAKE_MAGIC` (`include/uapi/linux/ethtool.h`).
pub(super) const WAKE_PHY: u32 = 1 << 0;
pub(super) const WAKE_MAGIC: u32 = 1 << 5;
/// What the chip can wake on (`atl1c_get_wol`).
const WOL_SUPPORTED: u32 = WAKE_PHY | WAKE_MAGIC;
/// Per-queue `ethtool -S` counters, tx then rx: what only the driver counts. Packets, bytes,
/// queue stops and rx allocation failures are netdev qstats, and `ethtool -S` does not repeat
/// what the standard interfaces carry (Documentation/networking/statistics.rst).
const TX_QUEUE_STATS: [&str; 4] = ["dropped", "errors", "doorbells", "frames_per_doorbell"];
const RX_QUEUE_STATS: [&str; 3] = ["errors", "dropped", "irqs"];
const DRIVER_STATS: [&str; 3] = ["rx_bad_rrd", "hw_errors", "resets"];

/// Declares what a standard group reports, field by field with the MAC counter behind it:
/// `$fill` writes those counters from an accumulated snapshot into the group's struct, and
/// `$list` holds their indices, for what `ethtool -S` leaves out ([`IN_GROUPS`]). A name that
/// is not a counter fails the build (`regs::stats::index` in a constant).
macro_rules! mac_group {
    ($fill:ident, $list:ident, $ty:ty { $($field:ident: $counter:literal,)* }) => {
        const $list: &[usize] = &[$(regs::stats::index($counter),)*];

        fn $fill(m: &[u64; MAC_STATS], out: &mut $ty) {
            let g = |k: usize| m.get(k).copied().unwrap_or(0);
            $(out.$field = g(const { regs::stats::index($counter) });)*
        }
    };
}

mac_group!(
    eth_mac_fill,
    ETH_MAC,
    netdev::EthMacStats {
        frames_tx_ok: "tx_ok",
        frames_rx_ok: "rx_ok",
        fcs_errors: "rx_fcs_err",
        alignment_errors: "rx_align_err",
        // Without the FCS here; `eth_mac_stats` adds it.
        octets_tx_ok: "tx_byte_cnt",
        octets_rx_ok: "rx_byte_cnt",
        single_collisions: "tx_1_col",
        multiple_collisions: "tx_2_col",
        deferred: "tx_defer",
        late_collisions: "tx_late_col",
        aborted_xs_colls: "tx_abort_col",
        lost_int_mac_xmit: "tx_underrun",
        lost_int_mac_rcv: "rx_rxf_ov",
        mcast_tx: "tx_mcast",
        bcast_tx: "tx_bcast",
        excessive_deferral: "tx_exc_defer",
        mcast_rx: "rx_mcast",
        bcast_rx: "rx_bcast",
        in_range_length_errors: "rx_len_err",
        too_long: "rx_sz_ov",
    }
);

mac_group!(
    rmon_fill,
    RMON,
    netdev::RmonStats {
        undersize: "rx_runt",
        oversize: "rx_sz_ov",
        fragments: "rx_frag",
    }
);

/// The frame-size buckets `rmon_stats` reports, from `rx_sz_64` and `tx_sz_64` on.
const HIST_BUCKETS: usize = if regs::stats::SZ_BUCKETS < netdev::RMON_BUCKETS {
    regs::stats::SZ_BUCKETS
} else {
    netdev::RMON_BUCKETS
};

/// The MAC counters the standard groups carry ([`EthtoolOps::eth_mac_stats`],
/// [`EthtoolOps::rmon_stats`]): `ethtool -S` leaves them out.
const IN_GROUPS: [bool; MAC_STATS] = {
    let mut in_groups = [false; MAC_STATS];
    let mut i = 0;
    while i < ETH_MAC.len() {
        in_groups[ETH_MAC[i]] = true;
        i += 1;
    }
    let mut i = 0;
    while i < RMON.len() {
        in_groups[RMON[i]] = true;
        i += 1;
    }
    let mut b = 0;
    while b < HIST_BUCKETS {
        in_groups[regs::stats::RX_SZ_64 + b] = true;
        in_groups[regs::stats::TX_SZ_64 + b] = true;
        b += 1;
    }
    in_groups
};

/// How many MAC counters `ethtool -S` shows.
const MAC_EXTRA_LEN: usize = {
    let (mut i, mut n) = (0, 0);
    while i < MAC_STATS {
        if !IN_GROUPS[i] {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The indices of the MAC counters `ethtool -S` shows (`mac_*`), the ones no standard group
/// carries: pause and control frames, RRD overflows, address-filter drops, broadcast and
/// multicast bytes, tx truncations.
const MAC_EXTRA: [usize; MAC_EXTRA_LEN] = {
    let mut out = [0; MAC_EXTRA_LEN];
    let (mut i, mut k) = (0, 0);
    while i < MAC_STATS {
        if !IN_GROUPS[i] {
            out[k] = i;
            k += 1;
        }
        i += 1;
    }
    out
};

impl Adapter<'_> {
    /// The MAC counters, accumulated (reading them clears the hardware's).
    pub(super) fn mac_counters(&self) -> [u64; MAC_STATS] {
        let all: [usize; MAC_STATS] = core::array::from_fn(|i| i);
        self.mac_counters_of(&all)
    }

    /// Reads the MAC counters at the indices `which` (each register clears on read, so the
    /// others keep counting in the card) into the accumulated ones, and returns those.
    pub(super) fn mac_counters_of(&self, which: &[usize]) -> [u64; MAC_STATS] {
        let io = self.io();
        netdev::bh_disabled(|| {
            let mut acc = self.mac_stats.lock();
            if self.gone.load(Ordering::Relaxed) || self.offline() {
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
}

impl netdev::EthtoolOps for Adapter<'_> {
    const NAME: &'static CStr = c"atl1c_rs";

    fn link_info(&self, dev: NetDev<'_>) -> netdev::LinkInfo {
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

    fn set_link(&self, _dev: NetDev<'_>, req: netdev::LinkRequest) -> Result {
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

    fn nway_reset(&self, _dev: NetDev<'_>) -> Result {
        if !self.nic.has_mdio_phy() {
            return Err(netdev::eopnotsupp());
        }
        let adv = self.advertising.load(Ordering::Acquire);
        self.hw.restart_autoneg(&self.io(), adv).map_err(|_| EIO)
    }

    fn regs_len(&self) -> usize {
        REGS_LEN
    }

    fn regs(&self, _dev: NetDev<'_>, out: &mut [u32]) -> u32 {
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

    fn set_coalesce(&self, _dev: NetDev<'_>, c: netdev::Coalesce) -> netdev::ExtResult {
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
            tx: self.tx.first().map_or(0, |t| u32::from(t.ring.count())),
        }
    }

    fn set_rings(&self, dev: NetDev<'_>, rx: u32, tx: u32) -> netdev::ExtResult {
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
        self.with_datapath_paused(dev, || {
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

    fn set_channels(&self, dev: NetDev<'_>, combined: u32) -> netdev::ExtResult {
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
        self.with_datapath_paused(dev, || {
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
            + MAC_EXTRA.len()
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
        for n in MAC_EXTRA.iter().filter_map(|&i| regs::stats::NAMES.get(i)) {
            names.add(format_args!("mac_{n}"));
        }
    }

    fn stats(&self, _dev: NetDev<'_>, out: &mut [u64]) {
        let tx = self.tx.iter().map(|t| &t.stats).flat_map(|s| {
            let pkts = s.packets.load(Ordering::Relaxed);
            let bells = s.doorbells.load(Ordering::Relaxed);
            [
                s.dropped.load(Ordering::Relaxed),
                s.errors.load(Ordering::Relaxed),
                bells,
                pkts.checked_div(bells).unwrap_or(0),
            ]
        });
        let rx = self.rx.iter().map(|rq| &rq.stats).flat_map(|s| {
            [
                s.errors.load(Ordering::Relaxed),
                s.dropped.load(Ordering::Relaxed),
                s.completions.load(Ordering::Relaxed),
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
        // Only the counters shown are read from the card (each read clears one).
        let mac = self.mac_counters_of(&MAC_EXTRA);
        let mac = MAC_EXTRA.iter().map(|&i| mac.get(i).copied().unwrap_or(0));
        for (o, x) in out.iter_mut().zip(Iterator::chain(driver, mac)) {
            *o = x;
        }
    }

    fn eth_mac_stats(&self) -> netdev::EthMacStats {
        let mut s = netdev::EthMacStats::default();
        eth_mac_fill(&self.mac_counters(), &mut s);
        // The MAC counts a good frame's bytes without its FCS (atl1c.h: rx_byte_cnt,
        // tx_byte_cnt); the octet counters of 802.3 as ethtool reports them (and as
        // drivers/net/hw/ethtool_std_stats.sh checks them) include it.
        s.octets_tx_ok = s.octets_tx_ok.wrapping_add(s.frames_tx_ok.wrapping_mul(4));
        s.octets_rx_ok = s.octets_rx_ok.wrapping_add(s.frames_rx_ok.wrapping_mul(4));
        s
    }

    fn rmon_stats(&self) -> netdev::RmonStats {
        use regs::stats::{
            RX_SZ_64,
            TX_SZ_64, //
        };
        let m = self.mac_counters();
        let mut r = netdev::RmonStats::default();
        rmon_fill(&m, &mut r);
        for b in 0..HIST_BUCKETS {
            r.rx_hist[b] = m.get(RX_SZ_64 + b).copied().unwrap_or(0);
            r.tx_hist[b] = m.get(TX_SZ_64 + b).copied().unwrap_or(0);
        }
        r
    }

    fn qstats_rx(&self, q: usize) -> netdev::QStatsRx {
        self.rx
            .get(q)
            .map_or_else(Default::default, |rq| rq.stats.rx())
    }

    fn qstats_tx(&self, q: usize) -> netdev::QStatsTx {
        self.tx
            .get(q)
            .map_or_else(Default::default, |t| t.stats.tx())
    }

    fn qstats_base(&self) -> (netdev::QStatsRx, netdev::QStatsTx) {
        // The queues not in use (after ethtool -L) keep what they counted.
        let n = self.queues();
        let mut rx = netdev::QStatsRx::default();
        for r in self.rx.iter().skip(n).map(|rq| rq.stats.rx()) {
            rx.packets += r.packets;
            rx.bytes += r.bytes;
            rx.alloc_fail += r.alloc_fail;
            rx.csum_unnecessary += r.csum_unnecessary;
        }
        let mut tx = netdev::QStatsTx::default();
        for t in self.tx.iter().skip(n).map(|t| t.stats.tx()) {
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

    fn dim_update(&self, _dev: NetDev<'_>, rx_usecs: u32) {
        let imt = hw::usecs_to_modrt(rx_usecs).unwrap_or(u16::MAX);
        self.dim_rx_imt.store(imt, Ordering::Relaxed);
        if self.adaptive_rx.load(Ordering::Acquire) {
            self.apply_moderation();
        }
    }
}
