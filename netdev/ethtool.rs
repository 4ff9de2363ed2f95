// SPDX-License-Identifier: GPL-2.0

//! `struct ethtool_ops`: a safe trait for the driver and the trampolines that call it.
//!
//! The ethtool core validates what it can before calling a driver (unsupported coalescing
//! parameters against `supported_coalesce_params`, ring sizes against the reported maximums,
//! channel counts against `max_combined`); the trait gets plain values and returns errors with
//! an optional extack message.

use core::{
    fmt::{
        self,
        Write, //
    },
    marker::PhantomData, //
};

use kernel::{
    bindings as kb,
    prelude::*, //
};

use super::{
    bindings as nb,
    device::NetDev,
    ops::{
        NetDevOps,
        Vtable, //
    },
};

/// An error for an ethtool request, with the message ethtool prints (netlink extack).
pub(crate) struct ExtErr {
    /// The errno returned.
    pub(crate) err: Error,
    /// Why, for the user.
    pub(crate) msg: &'static CStr,
}

impl ExtErr {
    /// `-EINVAL` with `msg`.
    pub(crate) fn inval(msg: &'static CStr) -> Self {
        Self { err: EINVAL, msg }
    }
}

impl From<Error> for ExtErr {
    fn from(err: Error) -> Self {
        Self { err, msg: c"" }
    }
}

/// Result of a request that can explain its failure.
pub(crate) type ExtResult = core::result::Result<(), ExtErr>;

/// Interrupt moderation (`ethtool -c/-C`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Coalesce {
    /// rx-usecs.
    pub(crate) rx_usecs: u32,
    /// tx-usecs.
    pub(crate) tx_usecs: u32,
    /// adaptive-rx.
    pub(crate) adaptive_rx: bool,
}

/// Ring sizes (`ethtool -g/-G`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rings {
    /// Largest rx ring.
    pub(crate) rx_max: u32,
    /// Largest tx ring.
    pub(crate) tx_max: u32,
    /// Current rx ring.
    pub(crate) rx: u32,
    /// Current tx ring.
    pub(crate) tx: u32,
}

/// Queue pairs (`ethtool -l/-L`, combined channels only).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Channels {
    /// Most queue pairs.
    pub(crate) max_combined: u32,
    /// Queue pairs in use.
    pub(crate) combined: u32,
}

/// What `ethtool eth0` reports about the link.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LinkInfo {
    /// Mb/s while the link is up.
    pub(crate) speed: Option<u32>,
    /// Full duplex.
    pub(crate) full_duplex: bool,
    /// Autonegotiation on.
    pub(crate) autoneg: bool,
    /// Supported link modes, legacy `SUPPORTED_*` bits.
    pub(crate) supported: u32,
    /// Advertised link modes, legacy `ADVERTISED_*` bits.
    pub(crate) advertising: u32,
}

/// A `ethtool -s` request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LinkRequest {
    /// Autonegotiation requested.
    pub(crate) autoneg: bool,
    /// Forced speed (without autonegotiation), Mb/s.
    pub(crate) speed: u32,
    /// Forced duplex: full.
    pub(crate) full_duplex: bool,
    /// Modes to advertise, legacy `ADVERTISED_*` bits (with autonegotiation).
    pub(crate) advertising: u32,
}

/// IEEE 802.3 MAC counters (`ethtool -S --groups eth-mac`); `None` is "not counted".
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EthMacStats {
    pub(crate) frames_tx_ok: u64,
    pub(crate) frames_rx_ok: u64,
    pub(crate) fcs_errors: u64,
    pub(crate) alignment_errors: u64,
    pub(crate) octets_tx_ok: u64,
    pub(crate) octets_rx_ok: u64,
    pub(crate) single_collisions: u64,
    pub(crate) multiple_collisions: u64,
    pub(crate) deferred: u64,
    pub(crate) late_collisions: u64,
    pub(crate) aborted_xs_colls: u64,
    pub(crate) lost_int_mac_xmit: u64,
    pub(crate) lost_int_mac_rcv: u64,
    pub(crate) mcast_tx: u64,
    pub(crate) bcast_tx: u64,
    pub(crate) excessive_deferral: u64,
    pub(crate) mcast_rx: u64,
    pub(crate) bcast_rx: u64,
    pub(crate) in_range_length_errors: u64,
    pub(crate) too_long: u64,
}

/// Frame-size histogram buckets of the MAC (`ethtool -S --groups rmon`): 64, 65-127, 128-255,
/// 256-511, 512-1023, 1024-1518, 1519-max.
pub(crate) const RMON_BUCKETS: usize = 7;

/// RMON counters.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RmonStats {
    pub(crate) undersize: u64,
    pub(crate) oversize: u64,
    pub(crate) fragments: u64,
    pub(crate) rx_hist: [u64; RMON_BUCKETS],
    pub(crate) tx_hist: [u64; RMON_BUCKETS],
}

/// Per-queue counters for netdev qstats (`netdev_queue_stats_rx`), the fields the driver has.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QStatsRx {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    /// Buffer allocations that failed (the RFD stayed empty).
    pub(crate) alloc_fail: u64,
    /// Frames the card vouched for (Mikrotik checksum verdict, `CHECKSUM_UNNECESSARY`).
    pub(crate) csum_unnecessary: u64,
}

/// Per-queue counters for netdev qstats (`netdev_queue_stats_tx`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QStatsTx {
    pub(crate) packets: u64,
    pub(crate) bytes: u64,
    /// Times the queue was stopped for lack of descriptors.
    pub(crate) stop: u64,
    /// Frames the card segmented (TSO), their bytes as handed to it, and the segments and
    /// bytes it put on the wire for them.
    pub(crate) hw_gso_packets: u64,
    pub(crate) hw_gso_bytes: u64,
    pub(crate) hw_gso_wire_packets: u64,
    pub(crate) hw_gso_wire_bytes: u64,
}

impl QStatsRx {
    fn fill(&self, d: &mut nb::netdev_queue_stats_rx) {
        d.packets = self.packets;
        d.bytes = self.bytes;
        d.alloc_fail = self.alloc_fail;
        d.csum_unnecessary = self.csum_unnecessary;
    }
}

impl QStatsTx {
    fn fill(&self, d: &mut nb::netdev_queue_stats_tx) {
        d.packets = self.packets;
        d.bytes = self.bytes;
        d.stop = self.stop;
        d.hw_gso_packets = self.hw_gso_packets;
        d.hw_gso_bytes = self.hw_gso_bytes;
        d.hw_gso_wire_packets = self.hw_gso_wire_packets;
        d.hw_gso_wire_bytes = self.hw_gso_wire_bytes;
    }
}

/// The bucket bounds, terminated by an empty range as the core expects.
static RMON_RANGES: [kb::ethtool_rmon_hist_range; RMON_BUCKETS + 1] = [
    kb::ethtool_rmon_hist_range { low: 0, high: 64 },
    kb::ethtool_rmon_hist_range { low: 65, high: 127 },
    kb::ethtool_rmon_hist_range {
        low: 128,
        high: 255,
    },
    kb::ethtool_rmon_hist_range {
        low: 256,
        high: 511,
    },
    kb::ethtool_rmon_hist_range {
        low: 512,
        high: 1023,
    },
    kb::ethtool_rmon_hist_range {
        low: 1024,
        high: 1518,
    },
    kb::ethtool_rmon_hist_range {
        low: 1519,
        high: 10240,
    },
    kb::ethtool_rmon_hist_range { low: 0, high: 0 },
];

/// `ETH_GSTRING_LEN`.
const GSTRING_LEN: usize = 32;

/// The `ethtool -S` names being written: one `ETH_GSTRING_LEN` slot per counter.
pub(crate) struct StatNames<'a> {
    buf: &'a mut [u8],
    n: usize,
}

/// Writes into one name slot, truncating (the last byte stays NUL).
struct Slot<'a> {
    slot: &'a mut [u8],
    len: usize,
}

impl Write for Slot<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if self.len + 1 >= self.slot.len() {
                break;
            }
            if let Some(d) = self.slot.get_mut(self.len) {
                *d = b;
            }
            self.len += 1;
        }
        Ok(())
    }
}

impl StatNames<'_> {
    /// Adds the next name; names beyond the buffer are ignored.
    pub(crate) fn add(&mut self, args: fmt::Arguments<'_>) {
        let start = self.n * GSTRING_LEN;
        self.n += 1;
        let Some(slot) = self.buf.get_mut(start..start + GSTRING_LEN) else {
            return;
        };
        slot.fill(0);
        let _ = Slot { slot, len: 0 }.write_fmt(args);
    }
}

/// What the driver implements for ethtool, on top of its net_device ops.
pub(crate) trait EthtoolOps: NetDevOps {
    /// Driver name (`ethtool -i`).
    const NAME: &'static CStr;
    /// The link (`ethtool eth0`).
    fn link_info(&self, dev: NetDev<'_>) -> LinkInfo;
    /// `ethtool -s`.
    fn set_link(&self, dev: NetDev<'_>, req: LinkRequest) -> Result;
    /// `ethtool -r`.
    fn nway_reset(&self, dev: NetDev<'_>) -> Result;
    /// Length of the register dump in 32-bit words (`ethtool -d`).
    fn regs_len(&self) -> usize;
    /// Fills the register dump; returns its layout version.
    fn regs(&self, dev: NetDev<'_>, out: &mut [u32]) -> u32;
    /// `ethtool -s msglvl`.
    fn msglevel(&self) -> u32;
    /// See [`EthtoolOps::msglevel`].
    fn set_msglevel(&self, level: u32);
    /// Wake-on-LAN: (supported, enabled) `WAKE_*` bits.
    fn wol(&self) -> (u32, u32);
    /// Sets the enabled Wake-on-LAN options.
    fn set_wol(&self, opts: u32) -> Result;
    /// EEPROM size in bytes; 0 without one.
    fn eeprom_len(&self) -> usize;
    /// Reads `out.len()` EEPROM bytes at `offset`; returns the dump's magic.
    fn eeprom(&self, offset: usize, out: &mut [u8]) -> Result<u32>;
    /// `ethtool -c`.
    fn coalesce(&self) -> Coalesce;
    /// `ethtool -C`, applied live.
    fn set_coalesce(&self, dev: NetDev<'_>, c: Coalesce) -> ExtResult;
    /// `ethtool -g`.
    fn rings(&self) -> Rings;
    /// `ethtool -G rx N tx N`.
    fn set_rings(&self, dev: NetDev<'_>, rx: u32, tx: u32) -> ExtResult;
    /// `ethtool -l`.
    fn channels(&self) -> Channels;
    /// `ethtool -L combined N`.
    fn set_channels(&self, dev: NetDev<'_>, combined: u32) -> ExtResult;
    /// Number of `ethtool -S` counters.
    fn stats_count(&self) -> usize;
    /// Their names, in order.
    fn stats_names(&self, names: &mut StatNames<'_>);
    /// Their values, in the same order.
    fn stats(&self, dev: NetDev<'_>, out: &mut [u64]);
    /// The IEEE 802.3 MAC counters.
    fn eth_mac_stats(&self) -> EthMacStats;
    /// The RMON counters.
    fn rmon_stats(&self) -> RmonStats;
    /// A new adaptive moderation (DIM) profile was chosen: apply `rx_usecs`.
    fn dim_update(&self, dev: NetDev<'_>, rx_usecs: u32);
    /// netdev qstats of rx queue `q` (one in use).
    fn qstats_rx(&self, q: usize) -> QStatsRx;
    /// netdev qstats of tx queue `q` (one in use).
    fn qstats_tx(&self, q: usize) -> QStatsTx;
    /// What the queues in use do not hold (queues no longer in use, ...): with the per-queue
    /// counters it adds up to the device's totals.
    fn qstats_base(&self) -> (QStatsRx, QStatsTx);
}

/// `struct netdev_stat_ops` for `T` (per-queue statistics over the netdev netlink family).
pub(super) struct StatVtable<T>(PhantomData<T>);

impl<T: EthtoolOps> StatVtable<T> {
    /// `get_queue_stats_rx` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the netdev core with a net_device registered by `Registration<T>`, a queue
    /// index below `real_num_rx_queues` and a valid out-structure.
    unsafe extern "C" fn rx(dev: *mut nb::net_device, idx: i32, s: *mut nb::netdev_queue_stats_rx) {
        // SAFETY: per the function's requirement.
        let (t, _) = unsafe { Vtable::<T>::driver(dev) };
        let Ok(q) = usize::try_from(idx) else {
            return;
        };
        // SAFETY: valid out-structure (function requirement).
        t.qstats_rx(q).fill(unsafe { &mut *s });
    }

    /// `get_queue_stats_tx` trampoline.
    ///
    /// # Safety
    ///
    /// As for [`Self::rx`], for tx queues.
    unsafe extern "C" fn tx(dev: *mut nb::net_device, idx: i32, s: *mut nb::netdev_queue_stats_tx) {
        // SAFETY: per the function's requirement.
        let (t, _) = unsafe { Vtable::<T>::driver(dev) };
        let Ok(q) = usize::try_from(idx) else {
            return;
        };
        // SAFETY: valid out-structure (function requirement).
        t.qstats_tx(q).fill(unsafe { &mut *s });
    }

    /// `get_base_stats` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the netdev core with a net_device registered by `Registration<T>` and valid
    /// out-structures.
    unsafe extern "C" fn base(
        dev: *mut nb::net_device,
        rx: *mut nb::netdev_queue_stats_rx,
        tx: *mut nb::netdev_queue_stats_tx,
    ) {
        // SAFETY: per the function's requirement.
        let (t, _) = unsafe { Vtable::<T>::driver(dev) };
        let (r, x) = t.qstats_base();
        // SAFETY: valid out-structures (function requirement).
        unsafe {
            r.fill(&mut *rx);
            x.fill(&mut *tx);
        }
    }

    pub(super) const OPS: nb::netdev_stat_ops = nb::netdev_stat_ops {
        get_queue_stats_rx: Some(Self::rx),
        get_queue_stats_tx: Some(Self::tx),
        get_base_stats: Some(Self::base),
    };
}

/// Sets `extack`'s message, as `NL_SET_ERR_MSG` does.
///
/// # Safety
///
/// `extack` is null or valid for writes.
unsafe fn set_extack(extack: *mut kb::netlink_ext_ack, msg: &'static CStr) {
    if !extack.is_null() && !msg.is_empty() {
        // SAFETY: non-null and valid (function requirement); the message is static.
        unsafe { (*extack)._msg = msg.as_char_ptr() };
    }
}

fn ext_errno(r: ExtResult, extack: *mut kb::netlink_ext_ack) -> i32 {
    match r {
        Ok(()) => 0,
        Err(e) => {
            // SAFETY: the ethtool core passes a valid or null extack.
            unsafe { set_extack(extack, e.msg) };
            e.err.to_errno()
        }
    }
}

fn errno(r: Result) -> i32 {
    match r {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `ETHTOOL_COALESCE_RX_USECS` (a `BIT()` macro, not in the bindings).
const COALESCE_RX_USECS: u32 = 1 << 0;
/// `ETHTOOL_COALESCE_TX_USECS`.
const COALESCE_TX_USECS: u32 = 1 << 4;
/// `ETHTOOL_COALESCE_USE_ADAPTIVE_RX`.
const COALESCE_USE_ADAPTIVE_RX: u32 = 1 << 9;
/// `ETH_SS_STATS`.
const ETH_SS_STATS: i32 = 1;
/// `SPEED_UNKNOWN`.
const SPEED_UNKNOWN: u32 = u32::MAX;
/// `DUPLEX_UNKNOWN`.
const DUPLEX_UNKNOWN: u8 = 0xff;
/// `AUTONEG_ENABLE`.
const AUTONEG_ENABLE: u8 = 1;
/// `PORT_TP`.
const PORT_TP: u8 = 0;

/// `ethtool_ops` for `T`.
pub(super) struct EthVtable<T>(PhantomData<T>);

impl<T: EthtoolOps> EthVtable<T> {
    /// The driver behind `dev`.
    ///
    /// # Safety
    ///
    /// `dev` is a net_device registered by `Registration<T>` (the ethtool core calls us with
    /// no other); the two bindings' `net_device` are the same C type.
    unsafe fn driver<'a>(dev: *mut kb::net_device) -> (&'a T, NetDev<'a>) {
        // SAFETY: per the function's requirement.
        unsafe { Vtable::<T>::driver(dev.cast()) }
    }

    /// `get_link_ksettings` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_link_ksettings(
        dev: *mut kb::net_device,
        ks: *mut kb::ethtool_link_ksettings,
    ) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, d) = unsafe { Self::driver(dev) };
        let info = t.link_info(d);
        // SAFETY: `ks` is a valid, zeroed out-structure for the call.
        let ks = unsafe { &mut *ks };
        match info.speed {
            Some(speed) => {
                ks.base.speed = speed;
                ks.base.duplex = u8::from(info.full_duplex);
            }
            None => {
                ks.base.speed = SPEED_UNKNOWN;
                ks.base.duplex = DUPLEX_UNKNOWN;
            }
        }
        ks.base.port = PORT_TP;
        ks.base.autoneg = u8::from(info.autoneg);
        // SAFETY: the link mode bitmaps are arrays of `__ETHTOOL_LINK_MODE_MASK_NBITS` bits.
        unsafe {
            kb::ethtool_convert_legacy_u32_to_link_mode(
                ks.link_modes.supported.as_mut_ptr(),
                info.supported,
            );
            kb::ethtool_convert_legacy_u32_to_link_mode(
                ks.link_modes.advertising.as_mut_ptr(),
                info.advertising,
            );
        }
        0
    }

    /// `set_link_ksettings` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn set_link_ksettings(
        dev: *mut kb::net_device,
        ks: *const kb::ethtool_link_ksettings,
    ) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, d) = unsafe { Self::driver(dev) };
        // SAFETY: a valid request for the call.
        let ks = unsafe { &*ks };
        let mut advertising = 0u32;
        // SAFETY: as above; the legacy conversion reads the bitmap.
        let _ = unsafe {
            kb::ethtool_convert_link_mode_to_legacy_u32(
                &mut advertising,
                ks.link_modes.advertising.as_ptr(),
            )
        };
        errno(t.set_link(
            d,
            LinkRequest {
                autoneg: ks.base.autoneg == AUTONEG_ENABLE,
                speed: ks.base.speed,
                full_duplex: ks.base.duplex == 1,
                advertising,
            },
        ))
    }

    /// `nway_reset` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn nway_reset(dev: *mut kb::net_device) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, d) = unsafe { Self::driver(dev) };
        errno(t.nway_reset(d))
    }

    /// `get_drvinfo` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_drvinfo(dev: *mut kb::net_device, info: *mut kb::ethtool_drvinfo) {
        // SAFETY: our device; `info` is a valid out-structure. The helper copies the driver
        // name and the parent device's name (the PCI address) with strscpy.
        unsafe { nb::atl1c_rs_drvinfo(dev.cast(), info.cast(), T::NAME.as_char_ptr()) };
    }

    /// `get_regs_len` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_regs_len(dev: *mut kb::net_device) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        i32::try_from(t.regs_len() * 4).unwrap_or(0)
    }

    /// `get_regs` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_regs(
        dev: *mut kb::net_device,
        regs: *mut kb::ethtool_regs,
        p: *mut c_void,
    ) {
        // SAFETY: called by the ethtool core with our device.
        let (t, d) = unsafe { Self::driver(dev) };
        let words = t.regs_len();
        // SAFETY: the core allocated `get_regs_len()` bytes at `p` (zeroed); `u32` aligned.
        let out = unsafe { core::slice::from_raw_parts_mut(p.cast::<u32>(), words) };
        let version = t.regs(d, out);
        // SAFETY: valid out-structure.
        unsafe { (*regs).version = version };
    }

    /// `get_msglevel` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_msglevel(dev: *mut kb::net_device) -> u32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        t.msglevel()
    }

    /// `set_msglevel` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn set_msglevel(dev: *mut kb::net_device, level: u32) {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        t.set_msglevel(level);
    }

    /// `get_wol` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_wol(dev: *mut kb::net_device, wol: *mut kb::ethtool_wolinfo) {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        let (supported, opts) = t.wol();
        // SAFETY: valid out-structure.
        unsafe {
            (*wol).supported = supported;
            (*wol).wolopts = opts;
        }
    }

    /// `set_wol` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn set_wol(dev: *mut kb::net_device, wol: *mut kb::ethtool_wolinfo) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        // SAFETY: a valid request.
        let opts = unsafe { (*wol).wolopts };
        let r = t.set_wol(opts);
        if r.is_ok() {
            // SAFETY: our device's parent is the bound PCI device.
            unsafe { nb::atl1c_rs_set_wakeup(dev.cast(), opts != 0) };
        }
        errno(r)
    }

    /// `get_eeprom_len` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_eeprom_len(dev: *mut kb::net_device) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        i32::try_from(t.eeprom_len()).unwrap_or(0)
    }

    /// `get_eeprom` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_eeprom(
        dev: *mut kb::net_device,
        ee: *mut kb::ethtool_eeprom,
        bytes: *mut u8,
    ) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        // SAFETY: a valid request; the core checked offset + len against get_eeprom_len and
        // allocated `len` bytes at `bytes`.
        let (offset, len) = unsafe { ((*ee).offset, (*ee).len) };
        // SAFETY: `bytes` holds `len` bytes (see above), ours for the call. CAST: `len` is
        // bounded by the EEPROM length (a few hundred bytes).
        let out = unsafe { core::slice::from_raw_parts_mut(bytes, len as usize) };
        match t.eeprom(offset as usize, out) {
            Ok(magic) => {
                // SAFETY: valid out-structure.
                unsafe { (*ee).magic = magic };
                0
            }
            Err(e) => e.to_errno(),
        }
    }

    /// `get_coalesce` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_coalesce(
        dev: *mut kb::net_device,
        ec: *mut kb::ethtool_coalesce,
        _kec: *mut kb::kernel_ethtool_coalesce,
        _extack: *mut kb::netlink_ext_ack,
    ) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        let c = t.coalesce();
        // SAFETY: valid, zeroed out-structure.
        unsafe {
            (*ec).rx_coalesce_usecs = c.rx_usecs;
            (*ec).tx_coalesce_usecs = c.tx_usecs;
            (*ec).use_adaptive_rx_coalesce = u32::from(c.adaptive_rx);
        }
        0
    }

    /// `set_coalesce` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn set_coalesce(
        dev: *mut kb::net_device,
        ec: *mut kb::ethtool_coalesce,
        _kec: *mut kb::kernel_ethtool_coalesce,
        extack: *mut kb::netlink_ext_ack,
    ) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, d) = unsafe { Self::driver(dev) };
        // SAFETY: a valid request (current values with the user's changes merged in).
        let c = unsafe {
            Coalesce {
                rx_usecs: (*ec).rx_coalesce_usecs,
                tx_usecs: (*ec).tx_coalesce_usecs,
                adaptive_rx: (*ec).use_adaptive_rx_coalesce != 0,
            }
        };
        ext_errno(t.set_coalesce(d, c), extack)
    }

    /// `get_ringparam` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_ringparam(
        dev: *mut kb::net_device,
        rp: *mut kb::ethtool_ringparam,
        _krp: *mut kb::kernel_ethtool_ringparam,
        _extack: *mut kb::netlink_ext_ack,
    ) {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        let r = t.rings();
        // SAFETY: valid out-structure.
        unsafe {
            (*rp).rx_max_pending = r.rx_max;
            (*rp).tx_max_pending = r.tx_max;
            (*rp).rx_pending = r.rx;
            (*rp).tx_pending = r.tx;
        }
    }

    /// `set_ringparam` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn set_ringparam(
        dev: *mut kb::net_device,
        rp: *mut kb::ethtool_ringparam,
        _krp: *mut kb::kernel_ethtool_ringparam,
        extack: *mut kb::netlink_ext_ack,
    ) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, d) = unsafe { Self::driver(dev) };
        // SAFETY: a valid request.
        let (rx, tx, mini, jumbo) = unsafe {
            (
                (*rp).rx_pending,
                (*rp).tx_pending,
                (*rp).rx_mini_pending,
                (*rp).rx_jumbo_pending,
            )
        };
        if mini != 0 || jumbo != 0 {
            return ext_errno(
                Err(ExtErr::inval(c"no separate mini or jumbo rx rings")),
                extack,
            );
        }
        ext_errno(t.set_rings(d, rx, tx), extack)
    }

    /// `get_channels` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_channels(dev: *mut kb::net_device, ch: *mut kb::ethtool_channels) {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        let c = t.channels();
        // SAFETY: valid out-structure.
        unsafe {
            (*ch).max_combined = c.max_combined;
            (*ch).combined_count = c.combined;
        }
    }

    /// `set_channels` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn set_channels(
        dev: *mut kb::net_device,
        ch: *mut kb::ethtool_channels,
    ) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, d) = unsafe { Self::driver(dev) };
        // SAFETY: a valid request; the core checked it against get_channels' maximums (so
        // rx/tx/other counts are 0).
        let combined = unsafe { (*ch).combined_count };
        match t.set_channels(d, combined) {
            Ok(()) => 0,
            Err(e) => {
                // set_channels has no extack: the reason goes to the log, with the device.
                d.printk(
                    super::Level::Info,
                    format_args!("ethtool -L: {}\n", e.msg.to_str().unwrap_or("")),
                );
                e.err.to_errno()
            }
        }
    }

    /// `get_sset_count` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_sset_count(dev: *mut kb::net_device, set: i32) -> i32 {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        match set {
            ETH_SS_STATS => i32::try_from(t.stats_count()).unwrap_or(0),
            _ => -(kb::EOPNOTSUPP as i32),
        }
    }

    /// `get_strings` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_strings(dev: *mut kb::net_device, set: u32, data: *mut u8) {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        if set != ETH_SS_STATS as u32 {
            return;
        }
        let n = t.stats_count();
        // SAFETY: the core allocated get_sset_count() * ETH_GSTRING_LEN bytes (under RTNL,
        // so the count has not changed since).
        let buf = unsafe { core::slice::from_raw_parts_mut(data, n * GSTRING_LEN) };
        t.stats_names(&mut StatNames { buf, n: 0 });
    }

    /// `get_ethtool_stats` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_ethtool_stats(
        dev: *mut kb::net_device,
        _stats: *mut kb::ethtool_stats,
        data: *mut u64,
    ) {
        // SAFETY: called by the ethtool core with our device.
        let (t, d) = unsafe { Self::driver(dev) };
        let n = t.stats_count();
        // SAFETY: the core allocated get_sset_count() counters (under RTNL, as above).
        let out = unsafe { core::slice::from_raw_parts_mut(data, n) };
        t.stats(d, out);
    }

    /// `get_eth_mac_stats` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_eth_mac_stats(
        dev: *mut kb::net_device,
        s: *mut kb::ethtool_eth_mac_stats,
    ) {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        let m = t.eth_mac_stats();
        // SAFETY: a valid out-structure; the core preset every field to "not set", the
        // driver fills in what the MAC counts. The union's two views are the same fields.
        let s = unsafe { &mut (*s).__bindgen_anon_1.__bindgen_anon_1 };
        s.FramesTransmittedOK = m.frames_tx_ok;
        s.SingleCollisionFrames = m.single_collisions;
        s.MultipleCollisionFrames = m.multiple_collisions;
        s.FramesReceivedOK = m.frames_rx_ok;
        s.FrameCheckSequenceErrors = m.fcs_errors;
        s.AlignmentErrors = m.alignment_errors;
        s.OctetsTransmittedOK = m.octets_tx_ok;
        s.FramesWithDeferredXmissions = m.deferred;
        s.LateCollisions = m.late_collisions;
        s.FramesAbortedDueToXSColls = m.aborted_xs_colls;
        s.FramesLostDueToIntMACXmitError = m.lost_int_mac_xmit;
        s.OctetsReceivedOK = m.octets_rx_ok;
        s.FramesLostDueToIntMACRcvError = m.lost_int_mac_rcv;
        s.MulticastFramesXmittedOK = m.mcast_tx;
        s.BroadcastFramesXmittedOK = m.bcast_tx;
        s.FramesWithExcessiveDeferral = m.excessive_deferral;
        s.MulticastFramesReceivedOK = m.mcast_rx;
        s.BroadcastFramesReceivedOK = m.bcast_rx;
        s.InRangeLengthErrors = m.in_range_length_errors;
        s.FrameTooLongErrors = m.too_long;
    }

    /// `get_rmon_stats` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the ethtool core (under RTNL) with a net_device registered by
    /// `Registration<T>` and valid pointers for the other arguments.
    unsafe extern "C" fn get_rmon_stats(
        dev: *mut kb::net_device,
        s: *mut kb::ethtool_rmon_stats,
        ranges: *mut *const kb::ethtool_rmon_hist_range,
    ) {
        // SAFETY: called by the ethtool core with our device.
        let (t, _) = unsafe { Self::driver(dev) };
        let r = t.rmon_stats();
        // SAFETY: valid out-structures, as for the MAC statistics.
        let s = unsafe { &mut (*s).__bindgen_anon_1.__bindgen_anon_1 };
        s.undersize_pkts = r.undersize;
        s.oversize_pkts = r.oversize;
        s.fragments = r.fragments;
        for (d, v) in s.hist.iter_mut().zip(r.rx_hist) {
            *d = v;
        }
        for (d, v) in s.hist_tx.iter_mut().zip(r.tx_hist) {
            *d = v;
        }
        // SAFETY: `ranges` is a valid out-pointer; the table is static.
        unsafe { *ranges = RMON_RANGES.as_ptr() };
    }

    pub(super) const OPS: kb::ethtool_ops = {
        // SAFETY: plain data: all-zero is "not supported" for every field.
        let mut ops: kb::ethtool_ops = unsafe { core::mem::zeroed() };
        ops.supported_coalesce_params =
            COALESCE_RX_USECS | COALESCE_TX_USECS | COALESCE_USE_ADAPTIVE_RX;
        ops.get_drvinfo = Some(Self::get_drvinfo);
        ops.get_regs_len = Some(Self::get_regs_len);
        ops.get_regs = Some(Self::get_regs);
        ops.get_wol = Some(Self::get_wol);
        ops.set_wol = Some(Self::set_wol);
        ops.get_msglevel = Some(Self::get_msglevel);
        ops.set_msglevel = Some(Self::set_msglevel);
        ops.nway_reset = Some(Self::nway_reset);
        ops.get_link = Some(kb::ethtool_op_get_link);
        ops.get_eeprom_len = Some(Self::get_eeprom_len);
        ops.get_eeprom = Some(Self::get_eeprom);
        ops.get_coalesce = Some(Self::get_coalesce);
        ops.set_coalesce = Some(Self::set_coalesce);
        ops.get_ringparam = Some(Self::get_ringparam);
        ops.set_ringparam = Some(Self::set_ringparam);
        ops.get_channels = Some(Self::get_channels);
        ops.set_channels = Some(Self::set_channels);
        ops.get_sset_count = Some(Self::get_sset_count);
        ops.get_strings = Some(Self::get_strings);
        ops.get_ethtool_stats = Some(Self::get_ethtool_stats);
        ops.get_eth_mac_stats = Some(Self::get_eth_mac_stats);
        ops.get_rmon_stats = Some(Self::get_rmon_stats);
        ops.get_link_ksettings = Some(Self::get_link_ksettings);
        ops.set_link_ksettings = Some(Self::set_link_ksettings);
        ops
    };
}
