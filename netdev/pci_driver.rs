// SPDX-License-Identifier: GPL-2.0

//! PCI driver registration with what the 7.2 kernel crate's `pci::Adapter` leaves out: system
//! sleep (`dev_pm_ops` as `SIMPLE_DEV_PM_OPS` fills it) and `.shutdown`.
//!
//! `pci::Adapter` fills `struct pci_driver` itself and keeps its callbacks private, so this
//! adapter registers its own: probe and remove as `pci::Adapter`'s (the driver's
//! [`pci::Driver`] implementation, its data set and borrowed the same way, released by the
//! driver core's post-unbind callback), plus the callbacks of [`PciPm`].
//!
//! Shaped to go upstream as: `suspend`, `resume` and `shutdown` on `pci::Driver`, with defaults,
//! and `Adapter::register` setting `driver.pm` and `shutdown` only where `T::HAS_PM` /
//! `T::HAS_SHUTDOWN` say the driver has them (as `net::phy` does with its `HAS_*` consts).

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

/// `PCI_D3hot` (`include/linux/pci.h`; a macro bindgen does not see).
const PCI_D3HOT: kb::pci_power_t = 3;

/// What a PCI driver does on system sleep and shutdown, besides probe and unbind.
///
/// Each is called with the device bound (after probe, before unbind) and its lock held, as
/// probe and unbind are.
pub(crate) trait PciPm: pci::Driver {
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
}

/// The registration of a [`PciPm`] driver, for `driver::Registration` (`kernel::module_driver!`
/// with this adapter in place of `pci::Adapter`).
pub(crate) struct PmAdapter<T>(T);

// SAFETY:
// - `kb::pci_driver` is the C `struct pci_driver`, `repr(C)`;
// - `T::Data` is the driver's device private data: probe stores it, nothing else;
// - `driver` is the embedded `struct device_driver`, at the offset given.
unsafe impl<T: PciPm> driver::DriverLayout for PmAdapter<T> {
    type DriverType = kb::pci_driver;
    type DriverData<'bound> = T::Data<'bound>;
    const DEVICE_DRIVER_OFFSET: usize = core::mem::offset_of!(kb::pci_driver, driver);
}

// SAFETY: `unregister` unregisters what `register` registered, and is called only after it
// succeeded (the trait's requirement on callers).
unsafe impl<T: PciPm + 'static> driver::RegistrationOps for PmAdapter<T> {
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

impl<T: PciPm + 'static> PmAdapter<T> {
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
}
