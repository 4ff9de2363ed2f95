// SPDX-License-Identifier: GPL-2.0

//! A registered `net_device`, borrowed in its callbacks, and its BQL tx queues.

use core::{
    ffi::c_void,
    fmt,
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    bindings as kb,
    prelude::*, //
};

use super::bindings as nb;

/// A registered `net_device`, borrowed for `'a`.
///
/// # Invariants
///
/// The pointer is a net_device of a `Registration` that stays allocated for `'a`: a callback's
/// duration for the handles the callbacks receive, a borrow of the `Registration` for the one
/// it hands out, so safe code cannot keep a handle beyond either. It is registered throughout
/// `'a` unless the registration's owner unregistered it early (teardown); every method here is
/// one the core allows on an unregistered net_device as well.
#[derive(Clone, Copy)]
pub(crate) struct NetDev<'a>(NonNull<nb::net_device>, PhantomData<&'a nb::net_device>);

/// A kernel log level for [`NetDev::printk`].
#[derive(Clone, Copy)]
pub(crate) enum Level {
    Err,
    Warn,
    Info,
}

/// The `NETIF_F_*` features a driver offers, as bits of `netdev_features_t`.
pub(crate) mod features {
    use super::nb;

    pub(crate) const SG: u64 = 1 << nb::NETIF_F_SG_BIT;
    pub(crate) const HW_CSUM: u64 = 1 << nb::NETIF_F_HW_CSUM_BIT;
    pub(crate) const TSO: u64 = 1 << nb::NETIF_F_TSO_BIT;
    pub(crate) const TSO6: u64 = 1 << nb::NETIF_F_TSO6_BIT;
    pub(crate) const RXCSUM: u64 = 1 << nb::NETIF_F_RXCSUM_BIT;
    pub(crate) const HW_VLAN_CTAG_RX: u64 = 1 << nb::NETIF_F_HW_VLAN_CTAG_RX_BIT;
    pub(crate) const HW_VLAN_CTAG_TX: u64 = 1 << nb::NETIF_F_HW_VLAN_CTAG_TX_BIT;
}

/// The `NETIF_MSG_*` classes of `msg_enable` (`ethtool -s DEV msglvl`), as bits.
pub(crate) mod msg {
    use super::nb;

    pub(crate) const DRV: u32 = 1 << nb::NETIF_MSG_DRV_BIT;
    pub(crate) const PROBE: u32 = 1 << nb::NETIF_MSG_PROBE_BIT;
    pub(crate) const LINK: u32 = 1 << nb::NETIF_MSG_LINK_BIT;
    pub(crate) const TX_ERR: u32 = 1 << nb::NETIF_MSG_TX_ERR_BIT;
    pub(crate) const HW: u32 = 1 << nb::NETIF_MSG_HW_BIT;
}

impl<'a> NetDev<'a> {
    /// The handle of `dev` for `'a`.
    ///
    /// # Safety
    ///
    /// `dev` must be a net_device of a `Registration` that stays allocated for `'a`, and
    /// registered unless that registration's owner unregisters it.
    pub(super) unsafe fn from_raw(dev: NonNull<nb::net_device>) -> Self {
        // INVARIANT: the caller's obligation.
        Self(dev, PhantomData)
    }

    pub(super) fn raw(&self) -> *mut nb::net_device {
        self.0.as_ptr()
    }

    /// Logs `args` at `level` with the driver, bus device and interface name in front
    /// (`netdev_printk`, as netdev_err/netdev_warn/netdev_info); see [`netdev_info!`].
    pub(crate) fn printk(&self, level: Level, args: fmt::Arguments<'_>) {
        let klevel: &[u8] = match level {
            Level::Err => kb::KERN_ERR,
            Level::Warn => kb::KERN_WARNING,
            Level::Info => kb::KERN_INFO,
        };
        // SAFETY: valid net_device (type invariant); `klevel` is one of the kernel's
        // NUL-terminated `KERN_*` strings; the "%pA" format takes a pointer to
        // `fmt::Arguments`, which the last argument is, alive for the whole call.
        unsafe {
            nb::netdev_printk(
                klevel.as_ptr().cast(),
                self.raw(),
                c"%pA".as_char_ptr(),
                core::ptr::from_ref(&args).cast::<c_void>(),
            )
        };
    }

    /// Carrier on.
    pub(crate) fn carrier_on(&self) {
        // SAFETY: valid net_device (type invariant).
        unsafe { nb::netif_carrier_on(self.raw()) }
    }

    /// Carrier off.
    pub(crate) fn carrier_off(&self) {
        // SAFETY: valid net_device.
        unsafe { nb::netif_carrier_off(self.raw()) }
    }

    /// Whether the carrier is on.
    pub(crate) fn carrier_ok(&self) -> bool {
        // SAFETY: valid net_device.
        unsafe { nb::netif_carrier_ok(self.raw()) }
    }

    /// Starts every tx queue and reschedules its qdisc (`netif_tx_wake_all_queues`): after a
    /// reconfiguration (ring sizes, channels, MTU, reset) the qdisc may hold a backlog that
    /// only a wake sends (drivers/net/ring_reconfig.py's reconfig_tx_stall).
    pub(crate) fn wake_queues(&self) {
        // SAFETY: valid net_device.
        unsafe { nb::netif_tx_wake_all_queues(self.raw()) }
    }

    /// Stops every tx queue and waits for a transmit in progress on another CPU
    /// (`netif_tx_disable`): afterwards no `start_xmit` runs until the queues are started.
    /// Process context.
    pub(crate) fn tx_disable(&self) {
        // SAFETY: valid net_device; takes each tx queue's lock with softirqs off.
        unsafe { nb::netif_tx_disable(self.raw()) }
    }

    /// Marks the device absent for the stack (`netif_device_detach`): its tx queues stop and
    /// `ip link set up` fails with ENODEV until [`NetDev::attach`].
    pub(crate) fn detach(&self) {
        // SAFETY: valid net_device.
        unsafe { nb::netif_device_detach(self.raw()) }
    }

    /// Marks the device present again (`netif_device_attach`); a running device's queues
    /// wake.
    pub(crate) fn attach(&self) {
        // SAFETY: valid net_device.
        unsafe { nb::netif_device_attach(self.raw()) }
    }

    /// Whether the device is up (`netif_running`).
    pub(crate) fn running(&self) -> bool {
        // SAFETY: valid net_device; reads its state bits.
        unsafe { nb::netif_running(self.raw()) }
    }

    /// Whether the device is present (not detached).
    pub(crate) fn present(&self) -> bool {
        // SAFETY: valid net_device; reads its state bits.
        unsafe { nb::netif_device_present(self.raw()) }
    }

    /// The tx queue `i`; `None` beyond the device's queues.
    pub(crate) fn txq(&self, i: u32) -> Option<TxQueue<'a>> {
        // SAFETY: valid net_device; reading a plain field.
        let n = unsafe { (*self.raw()).num_tx_queues };
        if i >= n {
            return None;
        }
        // SAFETY: `i` is below num_tx_queues.
        let q = unsafe { nb::netdev_get_tx_queue(self.raw(), i) };
        // INVARIANT: a queue of a net_device allocated for `'a`.
        NonNull::new(q).map(|q| TxQueue(q, PhantomData))
    }

    /// Current MTU.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: valid net_device; plain field read.
        unsafe { (*self.raw()).mtu }
    }

    /// Sets the MTU (from `ndo_change_mtu`, under RTNL).
    pub(crate) fn set_mtu(&self, mtu: u32) {
        // SAFETY: valid net_device; the core calls ndo_change_mtu under RTNL and expects the
        // driver to store the new value.
        unsafe { nb::atl1c_rs_set_mtu(self.raw(), mtu) }
    }

    /// Uses `n` tx and rx queues (under RTNL, `n` at most the allocated queues).
    pub(crate) fn set_real_num_queues(&self, n: u32) -> Result {
        // SAFETY: valid net_device; the callers hold RTNL (ndo/ethtool callbacks, probe).
        let err = unsafe { nb::netif_set_real_num_tx_queues(self.raw(), n) };
        if err != 0 {
            return Err(Error::from_errno(err));
        }
        // SAFETY: as above.
        let err = unsafe { nb::netif_set_real_num_rx_queues(self.raw(), n) };
        if err != 0 {
            return Err(Error::from_errno(err));
        }
        Ok(())
    }

    /// Re-evaluates the features (`netdev_update_features`, after an MTU change); under RTNL.
    pub(crate) fn update_features(&self) {
        // SAFETY: valid net_device; the callers hold RTNL.
        unsafe { nb::netdev_update_features(self.raw()) }
    }

    /// The current station address.
    pub(crate) fn mac(&self) -> [u8; 6] {
        let mut m = [0u8; 6];
        // SAFETY: valid net_device; `dev_addr` holds at least ETH_ALEN bytes once set.
        let a = unsafe { (*self.raw()).dev_addr };
        if !a.is_null() {
            // SAFETY: `a` points to `addr_len` (6 for Ethernet) bytes.
            unsafe { core::ptr::copy_nonoverlapping(a, m.as_mut_ptr(), 6) };
        }
        m
    }

    /// (promiscuous, all-multicast) from the interface flags.
    pub(crate) fn rx_flags(&self) -> (bool, bool) {
        // SAFETY: valid net_device.
        let f = unsafe { nb::atl1c_rs_rx_flags(self.raw()) };
        (f & 1 != 0, f & 2 != 0)
    }

    /// Copies the multicast list into `out`; `None` when it does not fit.
    pub(crate) fn mc_list(&self, out: &mut [[u8; 6]]) -> Option<usize> {
        // CAST: the slice length is small (the caller's fixed array).
        let max = out.len() as i32;
        // SAFETY: valid net_device (called under the address list lock by ndo_set_rx_mode);
        // `out` holds `max` addresses.
        let n = unsafe { nb::atl1c_rs_mc_list(self.raw(), out.as_mut_ptr().cast(), max) };
        usize::try_from(n).ok()
    }
}

/// A tx queue of a registered net_device, for BQL and flow control.
///
/// # Invariants
///
/// A queue of a net_device allocated for `'a` (see [`NetDev`]).
#[derive(Clone, Copy)]
pub(crate) struct TxQueue<'a>(NonNull<nb::netdev_queue>, PhantomData<&'a nb::netdev_queue>);

/// The free-descriptor callback the BQL stop/wake macros evaluate.
pub(crate) trait TxAvail {
    /// Descriptors free now.
    fn avail(&self) -> u32;
}

/// `get_desc` of the BQL stop/wake macros.
///
/// # Safety
///
/// `ctx` must point to a live `A` for the duration of the call.
unsafe extern "C" fn avail_cb<A: TxAvail>(ctx: *const c_void) -> u32 {
    // SAFETY: `ctx` is the `&A` passed by `maybe_stop`/`completed_wake` for this call only.
    unsafe { &*ctx.cast::<A>() }.avail()
}

impl TxQueue<'_> {
    pub(super) fn raw(&self) -> *mut nb::netdev_queue {
        self.0.as_ptr()
    }

    /// `__netdev_tx_sent_queue`: accounts `bytes` in BQL; true when the doorbell must be rung
    /// now (no more frames are coming, or the queue was stopped).
    pub(crate) fn sent(&self, bytes: u32, more: bool) -> bool {
        // SAFETY: valid queue (type invariant).
        unsafe { nb::__netdev_tx_sent_queue(self.raw(), bytes, more) }
    }

    /// `netif_txq_maybe_stop`: stops the queue when fewer than `stop` descriptors are free,
    /// and restarts it at once if a completion freed `start` in the meantime.
    pub(crate) fn maybe_stop<A: TxAvail>(&self, a: &A, stop: u32, start: u32) -> bool {
        // The macro's own first test, here: the common case needs no call into C.
        if a.avail() >= stop {
            return true;
        }
        // SAFETY: valid queue; the callback and its context live for the call.
        unsafe {
            nb::atl1c_rs_txq_maybe_stop(
                self.raw(),
                Some(avail_cb::<A>),
                core::ptr::from_ref(a).cast(),
                stop,
                start,
            ) != 0
        }
    }

    /// `netif_txq_completed_wake`: reports completions to BQL and wakes the queue when
    /// `start` descriptors are free (not while the carrier is off).
    pub(crate) fn completed_wake<A: TxAvail>(&self, pkts: u32, bytes: u32, a: &A, start: u32) {
        // SAFETY: valid queue; the callback and its context live for the call.
        unsafe {
            nb::atl1c_rs_txq_completed_wake(
                self.raw(),
                pkts,
                bytes,
                Some(avail_cb::<A>),
                core::ptr::from_ref(a).cast(),
                start,
            )
        };
    }

    /// Resets BQL state (ring reset).
    pub(crate) fn reset(&self) {
        // SAFETY: valid queue.
        unsafe { nb::netdev_tx_reset_queue(self.raw()) }
    }
}
