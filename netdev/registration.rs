// SPDX-License-Identifier: GPL-2.0

//! Allocating, registering and freeing a `net_device`, its interrupt line, and the driver
//! instance that owns both.

use core::{
    ffi::c_void,
    ptr::NonNull, //
};

use kernel::{
    bindings as kb,
    device::Core,
    pci,
    prelude::*, //
};

use super::{
    bindings as nb,
    device::{
        features,
        NetDev, //
    },
    dma::DmaDev,
    ethtool::{
        EthVtable,
        EthtoolOps,
        StatVtable, //
    },
    napi::{
        Priv,
        MAX_NAPI, //
    },
    ops::Vtable, //
};

/// Configuration of a net_device before registration.
pub(crate) struct NetDevConfig {
    /// Tx and rx queues.
    pub(crate) queues: u32,
    /// MTU range.
    pub(crate) min_mtu: u32,
    /// MTU range.
    pub(crate) max_mtu: u32,
    /// Station address; `None` for a random one.
    pub(crate) mac: Option<[u8; 6]>,
    /// `NETIF_F_*` features the user may turn on and off (`hw_features`), all on at start.
    pub(crate) features: u64,
    /// Features on at start besides those, which the user cannot toggle themselves
    /// (`ndo_fix_features` keeps them in step with others).
    pub(crate) features_on: u64,
    /// Tx watchdog (`watchdog_timeo`), in milliseconds.
    pub(crate) watchdog_ms: u32,
}

/// An allocated and registered net_device whose ops call `T`.
///
/// # Invariants
///
/// `dev` was allocated by [`Registration::new`] and is registered while `registered` is set;
/// its private area is a `Priv` whose `driver` points to the `T` given to `new`, which outlives
/// this value (the caller's obligation, see `new`). Dropping unregisters it (waiting for every
/// callback) unless [`Registration::unregister`] did, cancels its work items and frees it.
pub(crate) struct Registration<T: EthtoolOps> {
    dev: NonNull<nb::net_device>,
    /// Cleared once [`Registration::unregister`] ran; the net_device is freed on drop.
    registered: core::sync::atomic::AtomicBool,
    /// The driver, whose [`NapiSet`] points into the private area until it is freed.
    driver: *const T,
}

// SAFETY: the registration is only a handle; the net_device is usable from any thread.
unsafe impl<T: EthtoolOps> Send for Registration<T> {}
// SAFETY: as above.
unsafe impl<T: EthtoolOps> Sync for Registration<T> {}

impl<T: EthtoolOps> Registration<T> {
    /// Allocates, configures and registers a net_device for `driver`, parented to `pdev`.
    ///
    /// # Safety
    ///
    /// `driver` must stay valid and pinned until this registration is dropped. `irq`, the
    /// interrupt line that schedules the NAPI instances, is reported with them (netdev
    /// netlink's `napi-get`, for IRQ affinity tools). Each queue pair gets two NAPI
    /// instances: rx `0..queues`, tx `queues..2 * queues` (see [`NapiSet`]).
    pub(crate) unsafe fn new(
        pdev: &pci::Device<Core<'_>>,
        driver: &T,
        cfg: NetDevConfig,
        irq: Option<u32>,
    ) -> Result<Self> {
        if cfg.queues == 0 || 2 * cfg.queues as usize > MAX_NAPI {
            return Err(EINVAL);
        }
        // SAFETY: plain allocation; size is our `Priv`.
        let dev = unsafe {
            nb::alloc_etherdev_mqs(core::mem::size_of::<Priv>() as i32, cfg.queues, cfg.queues)
        };
        let dev = NonNull::new(dev).ok_or(ENOMEM)?;
        let raw = dev.as_ptr();
        // SAFETY: a freshly allocated, unregistered net_device: we may set any field, and
        // prepare its private area (NAPI instances for `MAX_NAPI`, `cfg.queues` checked above).
        unsafe {
            let p = nb::netdev_priv(raw).cast::<Priv>();
            (*p).driver = core::ptr::from_ref(driver).cast();
            (*p).dev = raw;
            nb::atl1c_rs_set_parent(raw, DmaDev::new(pdev).raw().cast());
            (*raw).netdev_ops = &Vtable::<T>::OPS;
            (*raw).ethtool_ops = &EthVtable::<T>::OPS;
            (*raw).stat_ops = &StatVtable::<T>::OPS;
            (*raw).min_mtu = cfg.min_mtu;
            (*raw).max_mtu = cfg.max_mtu;
            (*raw).watchdog_timeo =
                i32::try_from(kernel::time::msecs_to_jiffies(cfg.watchdog_ms)).unwrap_or(i32::MAX);
            (*raw).hw_features = cfg.features;
            (*raw).features = cfg.features | cfg.features_on;
            // What VLAN devices on top inherit: the offloads, not the tag handling.
            (*raw).vlan_features =
                cfg.features & !(features::HW_VLAN_CTAG_RX | features::HW_VLAN_CTAG_TX);
            match cfg.mac {
                Some(m) => nb::eth_hw_addr_set(raw, m.as_ptr()),
                None => nb::eth_hw_addr_random(raw),
            }
            // `Driver::set_mac` programs the address at any time (it is the unicast filter
            // the MAC reads per frame), so `ndo_set_mac_address` works while up.
            nb::atl1c_rs_set_live_addr_change(raw);
            (*p).poll = Some(Vtable::<T>::poll);
            (*p).irq = irq.and_then(|i| i32::try_from(i).ok()).unwrap_or(-1);
            (*p).queues = cfg.queues as usize;
            nb::atl1c_rs_init_task_work(&raw mut (*p).task, Some(Vtable::<T>::task));
            // The DIM state starts zeroed (alloc_etherdev zeroes the private area).
            (*p).dim.priv_ = p.cast();
            nb::atl1c_rs_init_dim_work(&raw mut (*p).dim.work, Some(dim_work::<T>));
            // ndo_open may run as soon as register_netdev returns (or before, from a notifier):
            // the interrupt handler, NAPI scheduling and the task must find everything by then.
            // INVARIANT (of `NapiSet`): cleared in `free`, which every path that frees `raw`
            // goes through (`queues` checked above).
            driver.napi_set().fill(p);
        }
        // SAFETY: fully configured; register_netdev takes RTNL itself.
        let err = unsafe { nb::register_netdev(raw) };
        if err != 0 {
            // SAFETY: never registered: forget it, delete the NAPIs and free.
            unsafe { Self::free(driver, raw) };
            return Err(Error::from_errno(err));
        }
        // INVARIANT: registered, private area set up above.
        Ok(Self {
            dev,
            registered: core::sync::atomic::AtomicBool::new(true),
            driver,
        })
    }

    /// Unregisters the net_device (closing it first if it is up: `ndo_stop` runs), waiting for
    /// every callback; the first call only. The interrupt line may still be live: the driver
    /// stops its device in `ndo_stop` with interrupts still delivered.
    pub(crate) fn unregister(&self) {
        if self
            .registered
            .swap(false, core::sync::atomic::Ordering::AcqRel)
        {
            // SAFETY: registered until now (type invariant), and only this call unregisters.
            unsafe { nb::unregister_netdev(self.dev.as_ptr()) };
        }
    }

    /// # Safety
    ///
    /// `raw` is an unregistered net_device of ours, and `driver` the driver it was created
    /// for, alive; process context.
    unsafe fn free(driver: *const T, raw: *mut nb::net_device) {
        // SAFETY: `driver` is alive and `raw` unregistered (safety requirement): its NAPI
        // instances are deleted.
        unsafe { (*driver).napi_set().clear() };
        // SAFETY: per the safety requirement; nothing points into it any more.
        unsafe { nb::free_netdev(raw) };
    }

    /// The net_device, for as long as this registration is borrowed.
    pub(crate) fn dev(&self) -> NetDev<'_> {
        // SAFETY: ours, allocated until `self` drops, registered until our owner calls
        // `unregister` (type invariant).
        unsafe { NetDev::from_raw(self.dev) }
    }
}

/// DIM work trampoline: applies the profile DIM chose and starts the next measurement.
///
/// # Safety
///
/// `work` must be the `dim.work` member of the private area of a net_device created by
/// `Registration<T>` that has not been freed (the registration cancels the work first).
unsafe extern "C" fn dim_work<T: EthtoolOps>(work: *mut kb::work_struct) {
    let off = core::mem::offset_of!(Priv, dim) + core::mem::offset_of!(nb::dim, work);
    // SAFETY: `work` is `Priv::dim.work` (function safety requirement): step back to `Priv`.
    let p = unsafe { work.byte_sub(off) }.cast::<Priv>();
    // SAFETY: `Priv::dev` was set at allocation; the device is registered until the work is
    // cancelled.
    let (t, d) = unsafe { Vtable::<T>::driver((*p).dev) };
    let dim = t.napi_set();
    // The state is read and written under the DIM lock, as NAPI's samples and ethtool's
    // restarts do.
    let Some(usec) = dim.dim_profile_usecs() else {
        return;
    };
    t.dim_update(d, usec);
    let _ = dim.with_dim(true, |dm| {
        // SAFETY: as above; this is how DIM users end a measurement cycle.
        unsafe { (*dm).state = nb::dim_state_DIM_START_MEASURE as u8 };
    });
}

impl<T: EthtoolOps> Drop for Registration<T> {
    fn drop(&mut self) {
        self.unregister();
        let raw = self.dev.as_ptr();
        // SAFETY: unregistered above: no callback runs any more. The task may still be
        // queued (by an interrupt before the line was freed, or re-queued until unregister
        // completed): cancel it and the DIM work before the private area goes away. The
        // driver outlives this value (type invariant).
        unsafe {
            let p = nb::netdev_priv(raw).cast::<Priv>();
            kb::cancel_work_sync(&raw mut (*p).task);
            kb::cancel_work_sync(&raw mut (*p).dim.work);
            Self::free(self.driver, raw);
        }
    }
}

/// What the interrupt handler implements.
pub(crate) trait IrqHandler: Sync {
    /// Handles the interrupt; true if it was ours.
    fn handle(&self) -> bool;
}

/// A requested interrupt line calling `T`.
///
/// The vector comes from the kernel crate (`pci::Device::alloc_irq_vectors`, released by
/// devres after the driver data is dropped, so after this line is freed). The line itself is
/// requested here: `kernel::irq::Registration` owns a `'static` handler, and the driver's
/// handler borrows the bound device (`Adapter<'bound>` holds the BAR).
///
/// # Invariants
///
/// `irq` was requested with `cookie` pointing to a `T` that outlives this value; dropping
/// frees it (waiting for a running handler).
pub(crate) struct Irq<T: IrqHandler> {
    irq: u32,
    cookie: *const T,
}

// SAFETY: the line can be freed from any thread.
unsafe impl<T: IrqHandler> Send for Irq<T> {}
// SAFETY: no interior state.
unsafe impl<T: IrqHandler> Sync for Irq<T> {}

/// The interrupt trampoline.
///
/// # Safety
///
/// `cookie` must be the `T` the line was requested with, still alive.
unsafe extern "C" fn irq_cb<T: IrqHandler>(_irq: i32, cookie: *mut c_void) -> kb::irqreturn_t {
    // SAFETY: `cookie` is the `T` given to `Irq::request`, alive while the line is requested.
    let t = unsafe { &*cookie.cast::<T>() };
    if t.handle() {
        kb::irqreturn_IRQ_HANDLED
    } else {
        kb::irqreturn_IRQ_NONE
    }
}

impl<T: IrqHandler> Irq<T> {
    /// Allocates one MSI (or INTx) vector of `pdev` and requests it for `handler`.
    ///
    /// # Safety
    ///
    /// `handler` must outlive the returned value.
    pub(crate) unsafe fn request(
        pdev: &pci::Device<Core<'_>>,
        handler: &T,
        name: &'static CStr,
    ) -> Result<Self> {
        let types = pci::IrqTypes::default()
            .with(pci::IrqType::Msi)
            .with(pci::IrqType::Intx);
        let vectors = pdev.alloc_irq_vectors(1, 1, types)?;
        let request: kernel::irq::IrqRequest<'_> = (*vectors.start()).try_into()?;
        let irq = request.irq();
        let cookie = core::ptr::from_ref(handler);
        // SAFETY: `irq_cb::<T>` matches the handler type; `cookie` outlives the line (the
        // caller's obligation). Shared: INTx may be shared.
        let err = unsafe {
            nb::request_irq(
                irq,
                Some(irq_cb::<T>),
                nb::IRQF_SHARED as usize,
                name.as_char_ptr(),
                cookie.cast_mut().cast(),
            )
        };
        if err != 0 {
            return Err(Error::from_errno(err));
        }
        // INVARIANT: requested with `cookie`.
        Ok(Self { irq, cookie })
    }

    /// Waits for a running handler to finish.
    pub(crate) fn synchronize(&self) {
        // SAFETY: a requested line.
        unsafe { kb::synchronize_irq(self.irq) }
    }
}

impl<T: IrqHandler> Drop for Irq<T> {
    fn drop(&mut self) {
        // SAFETY: requested with this cookie (type invariant); free_irq waits for handlers.
        // The vector stays allocated until devres releases it, after the driver data.
        unsafe { kb::free_irq(self.irq, self.cookie.cast_mut().cast()) };
    }
}

/// A driver instance that owns its data, its interrupt line and its net_device, torn down in
/// the safe order: the net_device unregistered (closed with its interrupts still delivered;
/// unregister waits for every callback), the interrupt line freed (waiting for a running
/// handler), the net_device freed, the data.
pub(crate) struct NetDriver<T: EthtoolOps + IrqHandler> {
    irq: Irq<T>,
    reg: Registration<T>,
    data: Pin<KBox<T>>,
}

impl<T: EthtoolOps + IrqHandler> NetDriver<T> {
    /// Requests the interrupt for `data`, then registers a net_device calling it.
    pub(crate) fn new(
        pdev: &pci::Device<Core<'_>>,
        data: Pin<KBox<T>>,
        cfg: NetDevConfig,
        irq_name: &'static CStr,
    ) -> Result<Self> {
        let t: &T = &data;
        // SAFETY: `data` is pinned on the heap and dropped after `irq` (field order).
        let irq = unsafe { Irq::request(pdev, t, irq_name)? };
        // SAFETY: as above, `data` outlives `reg`.
        let reg = unsafe { Registration::new(pdev, t, cfg, Some(irq.irq))? };
        Ok(Self { irq, reg, data })
    }

    /// Unregisters the net_device now, while the interrupt line still serves it (from
    /// `unbind`, before the card is quiesced); dropping does it otherwise.
    pub(crate) fn unregister(&self) {
        self.reg.unregister();
    }

    /// The driver data.
    pub(crate) fn data(&self) -> &T {
        &self.data
    }

    /// The net_device.
    pub(crate) fn dev(&self) -> NetDev<'_> {
        self.reg.dev()
    }

    /// Waits for a running interrupt handler.
    pub(crate) fn synchronize_irq(&self) {
        self.irq.synchronize();
    }

    /// Runs `f` under RTNL with the net_device and whether it is up (`netif_running`), for the
    /// device's own callbacks that the stack does not serialise (system sleep): open, stop and
    /// the ethtool changes wait meanwhile, as igb's `__igb_shutdown` makes them.
    pub(crate) fn with_rtnl<R>(&self, f: impl FnOnce(NetDev<'_>, bool) -> R) -> R {
        super::rtnl_locked(|| {
            let dev = self.dev();
            f(dev, dev.running())
        })
    }
}

impl<T: EthtoolOps + IrqHandler> Drop for NetDriver<T> {
    fn drop(&mut self) {
        // Then the fields in order: `irq` (freed), `reg` (work cancelled, net_device freed),
        // `data`.
        self.reg.unregister();
    }
}
