// SPDX-License-Identifier: GPL-2.0

//! PCI driver registration with what the 7.2 kernel crate's `pci::Adapter` leaves out: system
//! sleep (`dev_pm_ops` as `SIMPLE_DEV_PM_OPS` fills it), `.shutdown` and PCI error recovery
//! (`struct pci_error_handlers`).
//!
//! `pci::Adapter` fills `struct pci_driver` itself and keeps its callbacks private, so this
//! adapter registers its own: probe and remove as `pci::Adapter`'s (the driver's
//! [`pci::Driver`] implementation, its data set and borrowed the same way, released by the
//! driver core's post-unbind callback), plus the callbacks of [`PciDriverExt`].
//!
//! Shaped to go upstream as: `suspend`, `resume`, `shutdown`, `error_detected`, `slot_reset`
//! and `error_resume` on `pci::Driver`, with defaults, and `Adapter::register` setting
//! `driver.pm`, `shutdown` and `err_handler` only where `T::HAS_PM` / `T::HAS_SHUTDOWN` /
//! `T::HAS_ERR_HANDLER` say the driver has them (as `net::phy` does with its `HAS_*` consts),
//! with the `pci_dev` calls recovery needs ([`PciDeviceExt`]) on `pci::Device<Core>`.

use kernel::{
    bindings as kb,
    device::{
        Core,
        CoreInternal, //
    },
    device_id::RawDeviceIdIndex,
    driver,
    error::{
        from_result,
        to_result, //
    },
    pci,
    prelude::*,
    types::Opaque,
    ThisModule, //
};

/// `PCI_D3hot`, `PCI_D3cold` (`include/linux/pci.h`; macros bindgen does not see).
const PCI_D3HOT: kb::pci_power_t = 3;
const PCI_D3COLD: kb::pci_power_t = 4;

/// The state of the device's link when an error is reported (`pci_channel_state_t`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PciChannel {
    /// Still working: the error was non-fatal; registers and DMA may be used.
    Normal,
    /// Frozen: no MMIO or DMA reaches the device (reads may return all-ones) until the reset
    /// that follows.
    Frozen,
    /// Dead for good: the device is about to be removed.
    PermFailure,
}

/// What a driver's error callback asks of recovery (`pci_ers_result_t`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PciErs {
    /// Working again.
    Recovered,
    /// A reset of the slot, then [`PciDriverExt::slot_reset`].
    NeedReset,
    /// Cannot recover: the device stays offline.
    Disconnect,
}

impl PciErs {
    fn raw(self) -> kb::pci_ers_result_t {
        match self {
            Self::Recovered => kb::pci_ers_result_PCI_ERS_RESULT_RECOVERED,
            Self::NeedReset => kb::pci_ers_result_PCI_ERS_RESULT_NEED_RESET,
            Self::Disconnect => kb::pci_ers_result_PCI_ERS_RESULT_DISCONNECT,
        }
    }
}

/// The `pci_dev` calls a driver's error recovery makes that `pci::Device` lacks.
pub(crate) trait PciDeviceExt {
    /// `pci_disable_device`: undoes one `enable_device_mem` (bus mastering off with the last).
    fn disable_device(&self);
    /// `pci_restore_state` then `pci_save_state`: the configuration space the PCI core saved
    /// (when the device was added, or last saved) written back after a reset, and saved
    /// again for the next one.
    fn restore_state(&self);
    /// `pci_enable_wake(D3hot and D3cold, false)`: no PME armed.
    fn disable_wake(&self);
}

/// The `pci_dev` that `pdev` wraps (`pci::Device` is a transparent wrapper of
/// `Opaque<pci_dev>`; its own `as_raw` is private to the kernel crate).
fn raw_pci(pdev: &pci::Device<Core<'_>>) -> *mut kb::pci_dev {
    core::ptr::from_ref(pdev).cast::<kb::pci_dev>().cast_mut()
}

impl PciDeviceExt for pci::Device<Core<'_>> {
    fn disable_device(&self) {
        // SAFETY: a bound `pci_dev` (`Core`), valid for the call; an unbalanced call is caught
        // and warned about by the PCI core, not undefined.
        unsafe { kb::pci_disable_device(raw_pci(self)) }
    }

    fn restore_state(&self) {
        // SAFETY: a bound `pci_dev` with its device lock held (`Core`), as the PCI core's
        // state save and restore require.
        unsafe {
            kb::pci_restore_state(raw_pci(self));
            kb::pci_save_state(raw_pci(self));
        }
    }

    fn disable_wake(&self) {
        // SAFETY: as in `restore_state`.
        unsafe {
            kb::pci_enable_wake(raw_pci(self), PCI_D3HOT, false);
            kb::pci_enable_wake(raw_pci(self), PCI_D3COLD, false);
        }
    }
}

/// What a PCI driver does on system sleep, shutdown and PCI errors, besides probe and unbind.
///
/// Each is called with the device bound (after probe, before unbind) and its lock held, as
/// probe and unbind are.
pub(crate) trait PciDriverExt: pci::Driver {
    /// Quiets the device for system sleep (`suspend`, `freeze`, `poweroff`): no DMA, no
    /// interrupts, wake-up armed. The PCI core saves its state and chooses its power state
    /// after.
    fn suspend<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) -> Result;

    /// Brings the device back after [`PciPm::suspend`] (`resume`, `thaw`, `restore`); the PCI
    /// core has restored its configuration space and put it in D0, whose registers may have
    /// lost their state.
    fn resume<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) -> Result;

    /// Quiets the device for reboot, power-off or kexec. The adapter then arms wake-up and
    /// puts the device in D3hot at power-off only, as igb does (a device left in D3hot across
    /// a reboot or kexec may not come back for the next kernel's probe).
    fn shutdown<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>);

    /// Whether the device is to wake the system (`pci_wake_from_d3` at power-off).
    fn wake_armed(this: Pin<&Self::Data<'_>>) -> bool;

    /// An error was reported on the device's link (AER): stop using it. With
    /// [`PciErs::NeedReset`] the PCI core resets the slot (when `state` is
    /// [`PciChannel::Frozen`]) and calls [`PciDriverExt::slot_reset`].
    fn error_detected<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
        state: PciChannel,
    ) -> PciErs;

    /// After the reset: the device is to be set up from scratch (its registers may hold their
    /// power-on values); [`PciErs::Recovered`] if it answers.
    fn slot_reset<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) -> PciErs;

    /// Recovery is over: traffic may flow again.
    fn error_resume<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>);
}

/// The registration of a [`PciDriverExt`] driver, for `driver::Registration`
/// (`kernel::module_driver!` with this adapter in place of `pci::Adapter`).
pub(crate) struct PciAdapter<T>(T);

// SAFETY:
// - `kb::pci_driver` is the C `struct pci_driver`, `repr(C)`;
// - `T::Data` is the driver's device private data: probe stores it, nothing else;
// - `driver` is the embedded `struct device_driver`, at the offset given.
unsafe impl<T: PciDriverExt> driver::DriverLayout for PciAdapter<T> {
    type DriverType = kb::pci_driver;
    type DriverData<'bound> = T::Data<'bound>;
    const DEVICE_DRIVER_OFFSET: usize = core::mem::offset_of!(kb::pci_driver, driver);
}

// SAFETY: `unregister` unregisters what `register` registered, and is called only after it
// succeeded (the trait's requirement on callers).
unsafe impl<T: PciDriverExt + 'static> driver::RegistrationOps for PciAdapter<T> {
    unsafe fn register(
        pdrv: &Opaque<Self::DriverType>,
        name: &'static CStr,
        module: &'static ThisModule,
    ) -> Result {
        let d = pdrv.get();
        // SAFETY: `d` is valid for writes and not registered yet: nothing else reads it.
        unsafe {
            (*d).name = name.as_char_ptr();
            (*d).probe = Some(Self::probe_callback);
            (*d).remove = Some(Self::remove_callback);
            (*d).shutdown = Some(Self::shutdown_callback);
            (*d).id_table = T::ID_TABLE.as_ptr();
            (*d).driver.pm = Self::PM_OPS;
            (*d).err_handler = Self::ERR_HANDLER;
        }
        // SAFETY: `d` is a filled `pci_driver`, pinned until `unregister` (the trait's
        // requirement on callers).
        to_result(unsafe { kb::__pci_register_driver(d, module.as_ptr(), name.as_char_ptr()) })
    }

    unsafe fn unregister(pdrv: &Opaque<Self::DriverType>) {
        // SAFETY: registered by `register` (the trait's requirement on callers).
        unsafe { kb::pci_unregister_driver(pdrv.get()) }
    }
}

impl<T: PciDriverExt + 'static> PciAdapter<T> {
    /// `SIMPLE_DEV_PM_OPS(suspend, resume)`: the same pair for suspend, hibernation's freeze
    /// and thaw, power-off and restore.
    const PM_OPS: &'static kb::dev_pm_ops = &{
        // SAFETY: `dev_pm_ops` is plain data: all-zero is "no callback" for every field.
        let mut ops: kb::dev_pm_ops = unsafe { core::mem::zeroed() };
        ops.suspend = Some(Self::suspend_callback);
        ops.resume = Some(Self::resume_callback);
        ops.freeze = Some(Self::suspend_callback);
        ops.thaw = Some(Self::resume_callback);
        ops.poweroff = Some(Self::suspend_callback);
        ops.restore = Some(Self::resume_callback);
        ops
    };

    const ERR_HANDLER: &'static kb::pci_error_handlers = &kb::pci_error_handlers {
        error_detected: Some(Self::error_detected_callback),
        mmio_enabled: None,
        slot_reset: Some(Self::slot_reset_callback),
        reset_prepare: None,
        reset_done: None,
        resume: Some(Self::error_resume_callback),
        cor_error_detected: None,
    };

    extern "C" fn probe_callback(
        pdev: *mut kb::pci_dev,
        id: *const kb::pci_device_id,
    ) -> kernel::ffi::c_int {
        // SAFETY: the PCI core calls probe with a valid `pci_dev`, its lock held, for the
        // duration of the call: what `CoreInternal` stands for (`pci::Device` is a transparent
        // wrapper of `pci_dev`).
        let pdev = unsafe { &*pdev.cast::<pci::Device<CoreInternal<'_>>>() };
        // SAFETY: `id` is an entry of `T::ID_TABLE`, which the PCI core matched;
        // `pci::DeviceId` is a transparent wrapper of `pci_device_id`.
        let id = unsafe { &*id.cast::<pci::DeviceId>() };
        let info = T::ID_TABLE.info(id.index());
        from_result(|| {
            let data = T::probe(pdev, info);
            pdev.as_ref().set_drvdata(data)?;
            Ok(0)
        })
    }

    /// The bound device behind `pdev`, and its data.
    ///
    /// # Safety
    ///
    /// `pdev` is a `pci_dev` bound to this driver (probe succeeded, remove has not completed),
    /// valid and with its device lock held for `'a`.
    unsafe fn bound<'a>(
        pdev: *mut kb::pci_dev,
    ) -> (&'a pci::Device<CoreInternal<'a>>, Pin<&'a T::Data<'a>>) {
        // SAFETY: valid and locked for `'a` (function safety requirement).
        let pdev = unsafe { &*pdev.cast::<pci::Device<CoreInternal<'a>>>() };
        // SAFETY: bound to us, so `probe_callback` stored a `T::Data` and the driver core has
        // not released it (it does after remove).
        let data = unsafe { pdev.as_ref().drvdata_borrow::<T::Data<'a>>() };
        (pdev, data)
    }

    extern "C" fn remove_callback(pdev: *mut kb::pci_dev) {
        // SAFETY: the PCI core calls remove on a device this driver probed, locked, before
        // the driver core releases its data.
        let (pdev, data) = unsafe { Self::bound(pdev) };
        T::unbind(pdev, data);
    }

    extern "C" fn shutdown_callback(pdev: *mut kb::pci_dev) {
        // SAFETY: the PCI core calls shutdown only on a device bound to this driver, with the
        // device lock held (`device_shutdown`).
        let (dev, data) = unsafe { Self::bound(pdev) };
        T::shutdown(dev, data);
        // SAFETY: `system_state` is written once, before the devices are shut down.
        if unsafe { kb::system_state } == kb::system_states_SYSTEM_POWER_OFF {
            // SAFETY: `pdev` is a valid, bound `pci_dev` (above).
            unsafe {
                kb::pci_wake_from_d3(pdev, T::wake_armed(data));
                kb::pci_set_power_state(pdev, PCI_D3HOT);
            }
        }
    }

    /// The `pci_dev` of `dev`, a device of a driver's `dev_pm_ops`.
    ///
    /// # Safety
    ///
    /// `dev` is the `dev` member of a `pci_dev` bound to this driver: the PCI core passes
    /// `PM_OPS`'s callbacks the device of a `pci_dev` whose driver's `driver.pm` they are,
    /// i.e. one bound to us.
    unsafe fn pci_of(dev: *mut kb::device) -> *mut kb::pci_dev {
        // SAFETY: `dev` is embedded in a `pci_dev` (function safety requirement).
        unsafe { dev.byte_sub(core::mem::offset_of!(kb::pci_dev, dev)) }.cast()
    }

    extern "C" fn suspend_callback(dev: *mut kb::device) -> kernel::ffi::c_int {
        // SAFETY: a PM callback of ours: the device of a bound `pci_dev`, whose lock the PM
        // core holds across the callback (`device_suspend`).
        let (pdev, data) = unsafe { Self::bound(Self::pci_of(dev)) };
        from_result(|| T::suspend(pdev, data).map(|()| 0))
    }

    extern "C" fn resume_callback(dev: *mut kb::device) -> kernel::ffi::c_int {
        // SAFETY: as in `suspend_callback` (`device_resume` holds the lock).
        let (pdev, data) = unsafe { Self::bound(Self::pci_of(dev)) };
        from_result(|| T::resume(pdev, data).map(|()| 0))
    }

    // The PCI core calls the error handlers with the device lock held and the driver bound
    // (`report_error_detected` and the others check `pdev->driver` under `device_lock`).

    extern "C" fn error_detected_callback(
        pdev: *mut kb::pci_dev,
        state: kb::pci_channel_state_t,
    ) -> kb::pci_ers_result_t {
        // SAFETY: bound and locked for the call (above).
        let (dev, data) = unsafe { Self::bound(pdev) };
        let state = match state {
            kb::pci_channel_io_normal => PciChannel::Normal,
            kb::pci_channel_io_frozen => PciChannel::Frozen,
            _ => PciChannel::PermFailure,
        };
        T::error_detected(dev, data, state).raw()
    }

    extern "C" fn slot_reset_callback(pdev: *mut kb::pci_dev) -> kb::pci_ers_result_t {
        // SAFETY: bound and locked for the call (above).
        let (dev, data) = unsafe { Self::bound(pdev) };
        T::slot_reset(dev, data).raw()
    }

    extern "C" fn error_resume_callback(pdev: *mut kb::pci_dev) {
        // SAFETY: bound and locked for the call (above).
        let (dev, data) = unsafe { Self::bound(pdev) };
        T::error_resume(dev, data);
    }
}
