// SPDX-License-Identifier: GPL-2.0

//! `struct net_device_ops` and NAPI poll: a safe trait for the driver and the trampolines
//! that call it.

use core::{
    ffi::c_void,
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    bindings as kb,
    prelude::*, //
};

use super::{
    bindings as nb,
    device::NetDev,
    eopnotsupp,
    napi::{
        Napi,
        NapiSet,
        Priv, //
    },
    skb::SkBuff, //
};

/// 64-bit interface statistics (`struct rtnl_link_stats64`).
pub(crate) type Stats64 = nb::rtnl_link_stats64;

/// What the driver implements for its net_device (`struct net_device_ops` plus NAPI poll).
pub(crate) trait NetDevOps: Sync {
    /// `ndo_open`.
    fn open(&self, dev: NetDev<'_>) -> Result;
    /// `ndo_stop`.
    fn stop(&self, dev: NetDev<'_>);
    /// `ndo_start_xmit`: the skb is always consumed (sent, or dropped with a reason).
    fn start_xmit(&self, dev: NetDev<'_>, skb: SkBuff, more: bool);
    /// `ndo_get_stats64`.
    fn get_stats64(&self, dev: NetDev<'_>, stats: &mut Stats64);
    /// `ndo_set_rx_mode`.
    fn set_rx_mode(&self, dev: NetDev<'_>);
    /// `ndo_set_mac_address` after the core validated and stored the address; also while the
    /// interface runs (the device is registered with `IFF_LIVE_ADDR_CHANGE`).
    fn set_mac(&self, dev: NetDev<'_>, mac: [u8; 6]);
    /// `ndo_change_mtu`.
    fn change_mtu(&self, dev: NetDev<'_>, mtu: u32) -> Result;
    /// `ndo_tx_timeout`.
    fn tx_timeout(&self, dev: NetDev<'_>, queue: u32);
    /// NAPI poll of instance `index`.
    fn poll(&self, dev: NetDev<'_>, napi: Napi<'_>, index: usize, budget: i32) -> i32;
    /// Where the interrupt handler finds the NAPI instances.
    fn napi_set(&self) -> &NapiSet;
    /// The largest GSO segment size the hardware can cut (`ndo_features_check`): a GSO skb
    /// with a larger `gso_size` is segmented by the stack, never handed to the driver.
    const MAX_GSO_SIZE: u32;
    /// `ndo_fix_features`: drops what the current configuration cannot offer.
    fn fix_features(&self, dev: NetDev<'_>, features: u64) -> u64;
    /// `ndo_set_features`: `features` (already fixed) become active.
    fn set_features(&self, dev: NetDev<'_>, features: u64) -> Result;
    /// MII register `reg` of the PHY (`SIOCGMIIREG`, mii-tool); called under RTNL while the
    /// interface runs. `EOPNOTSUPP` where the card has no MDIO PHY.
    fn mii_read(&self, _dev: NetDev<'_>, _reg: u16) -> Result<u16> {
        Err(eopnotsupp())
    }
    /// Writes MII register `reg` of the PHY (`SIOCSMIIREG`); as [`Self::mii_read`].
    fn mii_write(&self, _dev: NetDev<'_>, _reg: u16, _val: u16) -> Result {
        Err(eopnotsupp())
    }
    /// Process-context work queued with [`NapiSet::schedule_task`]; runs under RTNL, only
    /// while the interface is running.
    fn task(&self, dev: NetDev<'_>);
}

pub(crate) struct Vtable<T>(PhantomData<T>);

impl<T: NetDevOps> Vtable<T> {
    /// The driver behind a net_device.
    ///
    /// # Safety
    ///
    /// `dev` must be a net_device created by `Registration<T>`, still registered, and the
    /// returned reference and handle must not be used beyond the callback `dev` came with
    /// (the registration, and with it the `T`, lives at least that long).
    pub(super) unsafe fn driver<'a>(dev: *mut nb::net_device) -> (&'a T, NetDev<'a>) {
        // SAFETY: a registered net_device (the function's requirement) is not null.
        let nd = unsafe { NonNull::new_unchecked(dev) };
        // SAFETY: the device was created by `Registration<T>`, so its private area is our
        // `Priv`, initialised before registration and not written while registered.
        let p = unsafe { &*nb::netdev_priv(nd.as_ptr()).cast::<Priv>() };
        // SAFETY: `Priv::driver` points to the `T` of that registration, which outlives the
        // registration, and so the callback (the function's requirement).
        let t = unsafe { &*p.driver.cast::<T>() };
        // SAFETY: registered for the callback, which `'a` must not outlive (the function's
        // requirement).
        (t, unsafe { NetDev::from_raw(nd) })
    }

    /// `open` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a net_device registered by `Registration<T>`
    /// (and valid pointers for the other arguments).
    unsafe extern "C" fn open(dev: *mut nb::net_device) -> i32 {
        // SAFETY: the core calls ndo_open with a registered device of ours.
        let (t, d) = unsafe { Self::driver(dev) };
        match t.open(d) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// `stop` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a net_device registered by `Registration<T>`
    /// (and valid pointers for the other arguments).
    unsafe extern "C" fn stop(dev: *mut nb::net_device) -> i32 {
        // SAFETY: as for `open`.
        let (t, d) = unsafe { Self::driver(dev) };
        t.stop(d);
        0
    }

    /// `start_xmit` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a net_device registered by `Registration<T>`
    /// (and valid pointers for the other arguments).
    unsafe extern "C" fn start_xmit(
        skb: *mut kb::sk_buff,
        dev: *mut nb::net_device,
    ) -> nb::netdev_tx_t {
        // SAFETY: as for `open`.
        let (t, d) = unsafe { Self::driver(dev) };
        // `xmit_more` as netdev_xmit_more() reads it (per-CPU softnet data).
        // SAFETY: always callable in the xmit path.
        let more = unsafe { nb::atl1c_rs_xmit_more() } != 0;
        // SAFETY: the stack hands us ownership of a valid skb.
        if let Some(skb) = unsafe { SkBuff::from_raw(skb) } {
            t.start_xmit(d, skb, more);
        }
        nb::netdev_tx_NETDEV_TX_OK
    }

    /// `get_stats64` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a net_device registered by `Registration<T>`
    /// (and valid pointers for the other arguments).
    unsafe extern "C" fn get_stats64(dev: *mut nb::net_device, stats: *mut Stats64) {
        // SAFETY: as for `open`; `stats` is a valid out-structure.
        let (t, d) = unsafe { Self::driver(dev) };
        // SAFETY: `stats` is valid and exclusively ours for the call.
        t.get_stats64(d, unsafe { &mut *stats });
    }

    /// `set_rx_mode` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a net_device registered by `Registration<T>`
    /// (and valid pointers for the other arguments).
    unsafe extern "C" fn set_rx_mode(dev: *mut nb::net_device) {
        // SAFETY: as for `open`.
        let (t, d) = unsafe { Self::driver(dev) };
        t.set_rx_mode(d);
    }

    /// `eth_ioctl` trampoline: the MII ioctls (`atl1c_mii_ioctl`), PHY address 0, registers
    /// 0..31, only while the interface runs.
    ///
    /// # Safety
    ///
    /// Called by the networking core (under RTNL) with a net_device registered by
    /// `Registration<T>` and the request copied into kernel memory.
    unsafe extern "C" fn eth_ioctl(dev: *mut nb::net_device, ifr: *mut kb::ifreq, cmd: i32) -> i32 {
        // SAFETY: as for `open`.
        let (t, d) = unsafe { Self::driver(dev) };
        if !d.running() {
            return EINVAL.to_errno();
        }
        let Ok(cmd) = u32::try_from(cmd) else {
            return eopnotsupp().to_errno();
        };
        // SAFETY: `ifr` is the request in kernel memory; for the MII commands its union holds
        // a `mii_ioctl_data` (what `if_mii` points to), which is all this reads and writes.
        let mii = unsafe { &mut *nb::if_mii(ifr) };
        let r = match cmd {
            // One PHY, at address 0; none where the driver cannot read one.
            nb::SIOCGMIIPHY => t.mii_read(d, 0).map(|_| mii.phy_id = 0),
            nb::SIOCGMIIREG => t.mii_read(d, mii.reg_num & 0x1f).map(|v| mii.val_out = v),
            nb::SIOCSMIIREG if mii.reg_num & !0x1f != 0 => Err(EFAULT),
            nb::SIOCSMIIREG => t.mii_write(d, mii.reg_num, mii.val_in),
            _ => Err(eopnotsupp()),
        };
        match r {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// `set_mac` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a net_device registered by `Registration<T>`
    /// (and valid pointers for the other arguments).
    unsafe extern "C" fn set_mac(dev: *mut nb::net_device, addr: *mut c_void) -> i32 {
        // SAFETY: `addr` is a `struct sockaddr` from the core.
        let err = unsafe { nb::eth_mac_addr(dev, addr) };
        if err != 0 {
            return err;
        }
        // SAFETY: as for `open`.
        let (t, d) = unsafe { Self::driver(dev) };
        t.set_mac(d, d.mac());
        0
    }

    /// `change_mtu` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a net_device registered by `Registration<T>`
    /// (and valid pointers for the other arguments).
    unsafe extern "C" fn change_mtu(dev: *mut nb::net_device, mtu: i32) -> i32 {
        // SAFETY: as for `open`.
        let (t, d) = unsafe { Self::driver(dev) };
        let Ok(mtu) = u32::try_from(mtu) else {
            return EINVAL.to_errno();
        };
        match t.change_mtu(d, mtu) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// `tx_timeout` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a net_device registered by `Registration<T>`
    /// (and valid pointers for the other arguments).
    unsafe extern "C" fn tx_timeout(dev: *mut nb::net_device, q: u32) {
        // SAFETY: as for `open`.
        let (t, d) = unsafe { Self::driver(dev) };
        t.tx_timeout(d, q);
    }

    /// `fix_features` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a net_device registered by `Registration<T>`.
    unsafe extern "C" fn fix_features(dev: *mut nb::net_device, features: u64) -> u64 {
        // SAFETY: as for `open`.
        let (t, d) = unsafe { Self::driver(dev) };
        t.fix_features(d, features)
    }

    /// `set_features` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a net_device registered by `Registration<T>`.
    unsafe extern "C" fn set_features(dev: *mut nb::net_device, features: u64) -> i32 {
        // SAFETY: as for `open`.
        let (t, d) = unsafe { Self::driver(dev) };
        match t.set_features(d, features) {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        }
    }

    /// NAPI poll trampoline.
    ///
    /// # Safety
    ///
    /// `napi` must be one of the NAPI instances of a net_device registered by
    /// `Registration<T>`.
    pub(super) unsafe extern "C" fn poll(napi: *mut nb::napi_struct, budget: i32) -> i32 {
        let Some(n) = NonNull::new(napi) else {
            return 0;
        };
        // SAFETY: our NAPI instances live in `Priv.napi` of a registered device; not null
        // (checked above).
        let dev = unsafe { (*napi).dev };
        // SAFETY: as for `open`.
        let (t, d) = unsafe { Self::driver(dev) };
        // SAFETY: `dev` is ours, so its private area is a `Priv`.
        let p = unsafe { nb::netdev_priv(dev).cast::<Priv>() };
        // SAFETY: both pointers are inside the same `Priv` allocation.
        let base = unsafe { &raw mut (*p).napi }.cast::<nb::napi_struct>();
        // SAFETY: `napi` points into the `napi` array that starts at `base`.
        let index = unsafe { napi.offset_from(base) };
        let Ok(index) = usize::try_from(index) else {
            return 0;
        };
        // SAFETY: an initialised NAPI instance of a registered device of ours, used for this
        // callback only.
        t.poll(d, unsafe { Napi::from_raw(n) }, index, budget)
    }

    /// Work trampoline: the driver's task under RTNL.
    ///
    /// # Safety
    ///
    /// `work` must be the `task` member of the private area of a net_device created by
    /// `Registration<T>` that has not been freed (the registration cancels the work first).
    pub(super) unsafe extern "C" fn task(work: *mut kb::work_struct) {
        // SAFETY: `work` is `Priv::task` (function safety requirement): step back to `Priv`.
        let p = unsafe { work.byte_sub(core::mem::offset_of!(Priv, task)) }.cast::<Priv>();
        // SAFETY: `Priv::dev` was set at allocation.
        let dev = unsafe { (*p).dev };
        // RTNL serialises us with open/stop/unregister.
        super::rtnl_locked(|| {
            // SAFETY: a valid net_device (not freed: see above).
            if unsafe { nb::netif_running(dev) } {
                // SAFETY: registered device of ours, under RTNL.
                let (t, d) = unsafe { Self::driver(dev) };
                t.task(d);
            }
        });
    }

    /// `features_check` trampoline.
    ///
    /// # Safety
    ///
    /// Called by the networking core with a valid skb it is about to transmit.
    unsafe extern "C" fn features_check(
        skb: *mut kb::sk_buff,
        _dev: *mut nb::net_device,
        features: nb::netdev_features_t,
    ) -> nb::netdev_features_t {
        // SAFETY: a valid skb, per the function's safety requirement; the helper only reads
        // its headers and shared info.
        unsafe { nb::atl1c_rs_features_check(skb.cast(), features, T::MAX_GSO_SIZE) }
    }

    pub(super) const OPS: nb::net_device_ops = {
        // SAFETY: `net_device_ops` is plain data: all-zero is "no callback" for every field.
        let mut ops: nb::net_device_ops = unsafe { core::mem::zeroed() };
        ops.ndo_open = Some(Self::open);
        ops.ndo_stop = Some(Self::stop);
        ops.ndo_start_xmit = Some(Self::start_xmit);
        ops.ndo_get_stats64 = Some(Self::get_stats64);
        ops.ndo_set_rx_mode = Some(Self::set_rx_mode);
        ops.ndo_set_mac_address = Some(Self::set_mac);
        ops.ndo_validate_addr = Some(nb::eth_validate_addr);
        ops.ndo_change_mtu = Some(Self::change_mtu);
        ops.ndo_tx_timeout = Some(Self::tx_timeout);
        ops.ndo_features_check = Some(Self::features_check);
        ops.ndo_fix_features = Some(Self::fix_features);
        ops.ndo_set_features = Some(Self::set_features);
        ops.ndo_eth_ioctl = Some(Self::eth_ioctl);
        ops
    };
}
