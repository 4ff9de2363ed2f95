// SPDX-License-Identifier: GPL-2.0

//! The NAPI instances in a `net_device`'s private area, and DIM beside them.

use core::{
    ffi::c_void,
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    bindings as kb,
    new_spinlock,
    prelude::*,
    sync::SpinLock, //
};

use super::{
    bh_disabled,
    bindings as nb, //
};

/// A NAPI instance embedded in the net_device's private area.
///
/// # Invariants
///
/// Points to an initialised `napi_struct` inside the private area of a net_device of ours
/// (see [`Registration`]) that stays allocated for `'a`: only poll callbacks get one, for
/// their duration.
#[derive(Clone, Copy)]
pub(crate) struct Napi<'a>(NonNull<nb::napi_struct>, PhantomData<&'a nb::napi_struct>);

impl<'a> Napi<'a> {
    /// The handle of instance `n` for `'a`.
    ///
    /// # Safety
    ///
    /// `n` must be an initialised NAPI instance in the private area of a net_device of ours
    /// that stays allocated for `'a` (a poll callback's duration).
    pub(super) unsafe fn from_raw(n: NonNull<nb::napi_struct>) -> Self {
        // INVARIANT: the caller's obligation.
        Self(n, PhantomData)
    }

    pub(super) fn raw(&self) -> *mut nb::napi_struct {
        self.0.as_ptr()
    }

    /// `napi_complete_done`; true if the caller may re-enable the interrupt.
    pub(crate) fn complete_done(&self, work: i32) -> bool {
        // SAFETY: valid NAPI (type invariant), called from its poll function.
        unsafe { nb::napi_complete_done(self.raw(), work) }
    }
}

/// Maximum NAPI instances (4 rx + 4 tx on the Mikrotik NIC).
pub(crate) const MAX_NAPI: usize = 8;

/// The NAPI instances of a registration, for the interrupt handler, and the other
/// process-context state of its private area (task, DIM).
///
/// Instance `i < max_queues` polls rx queue `i`, instance `max_queues + q` completes tx queue
/// `q`. Instances are added to the net_device only while it runs, and only for the queues in
/// use ([`NapiSet::set_queues`], from `ndo_open`; none after `ndo_stop`): the networking core
/// sees no NAPI instance that is disabled or serves no queue. Kernel 7.2 needs that: with
/// threaded NAPI on, writing `threaded` 0 waits in `napi_stop_kthread()` for every listed
/// instance to go idle, and a disabled one never does. An rx instance keeps its persistent
/// config (`netif_napi_add_config`: its id, threaded and IRQ settings) from one open to the
/// next.
///
/// # Invariants
///
/// `priv_` and each non-null `napi` entry point into the private area of a net_device that
/// [`Registration::new`] allocated, stored before it is registered (so that `ndo_open`, the
/// interrupt handler and the task find every instance from the start) and cleared before it
/// is freed; the owner frees the interrupt line (the only reader outside callbacks) first.
/// A `napi` entry is non-null exactly while that instance is added; bit `i` of `enabled` is
/// set exactly while instance `i` is enabled.
pub(crate) struct NapiSet {
    napi: [core::sync::atomic::AtomicPtr<nb::napi_struct>; MAX_NAPI],
    task: core::sync::atomic::AtomicPtr<kb::work_struct>,
    dim: core::sync::atomic::AtomicPtr<nb::dim>,
    /// Held while DIM's state is read or fed (`net_dim` is not reentrant): by NAPI, which
    /// skips a sample rather than wait, and by process context with softirqs off.
    dim_lock: Pin<KBox<SpinLock<()>>>,
    priv_: core::sync::atomic::AtomicPtr<Priv>,
    enabled: core::sync::atomic::AtomicU32,
}

impl NapiSet {
    /// An empty set.
    pub(crate) fn new() -> Result<Self> {
        use core::sync::atomic::{
            AtomicPtr,
            AtomicU32, //
        };
        Ok(Self {
            napi: [const { AtomicPtr::new(core::ptr::null_mut()) }; MAX_NAPI],
            task: AtomicPtr::new(core::ptr::null_mut()),
            dim: AtomicPtr::new(core::ptr::null_mut()),
            dim_lock: KBox::pin_init(new_spinlock!(()), GFP_KERNEL)?,
            priv_: AtomicPtr::new(core::ptr::null_mut()),
            enabled: AtomicU32::new(0),
        })
    }

    /// Runs `f` on the DIM state with the sampling lock held; `None` before registration or,
    /// when `wait` is false, if another CPU holds the lock.
    pub(super) fn with_dim<R>(&self, wait: bool, f: impl FnOnce(*mut nb::dim) -> R) -> Option<R> {
        let d = self.dim.load(core::sync::atomic::Ordering::Acquire);
        if d.is_null() {
            return None;
        }
        if !wait {
            let _guard = self.dim_lock.try_lock()?;
            return Some(f(d));
        }
        // NAPI takes the lock in softirq context: softirqs off here, or it could spin on a
        // holder it interrupted.
        Some(bh_disabled(|| {
            let _guard = self.dim_lock.lock();
            f(d)
        }))
    }

    /// Feeds adaptive rx moderation (lib/dim) with the rx totals so far: `events` interrupts
    /// (NAPI completions), `packets` and `bytes` received. From NAPI; a sample that finds
    /// another CPU sampling is skipped. When DIM picks a new profile it runs
    /// [`EthtoolOps::dim_update`] from its work item.
    pub(crate) fn dim_sample(&self, events: u16, packets: u64, bytes: u64) {
        let _ = self.with_dim(false, |d| {
            let mut sample = nb::dim_sample::default();
            // SAFETY: `d` is the DIM state of a live registration (type invariant), and the
            // lock serialises `net_dim` callers; `sample` is a local.
            unsafe {
                nb::dim_update_sample(events, packets, bytes, &mut sample);
                nb::net_dim(d, &sample);
            }
        });
    }

    /// Restarts adaptive moderation from its default profile (when it is turned on).
    pub(crate) fn dim_restart(&self) {
        let _ = self.with_dim(true, |d| {
            // SAFETY: as for `dim_sample`: every reader and writer of the state (NAPI's
            // samples, the DIM work item, this) holds the lock.
            unsafe {
                (*d).state = nb::dim_state_DIM_START_MEASURE as u8;
                (*d).profile_ix = DIM_DEFAULT_PROFILE;
                (*d).mode = nb::dim_cq_period_mode_DIM_CQ_PERIOD_MODE_START_FROM_EQE as u8;
                (*d).tune_state = nb::dim_tune_state_DIM_PARKING_ON_TOP as u8;
                (*d).steps_left = 0;
                (*d).steps_right = 0;
                (*d).tired = 0;
            }
        });
    }

    /// Waits for a running DIM work item and keeps it from running until the next sample.
    pub(crate) fn dim_cancel(&self) {
        let d = self.dim.load(core::sync::atomic::Ordering::Acquire);
        if !d.is_null() {
            // SAFETY: the DIM state of a live registration; process context.
            unsafe { kb::cancel_work_sync(&raw mut (*d).work) };
        }
    }

    /// The rx moderation of the current DIM profile, in microseconds.
    pub(crate) fn dim_profile_usecs(&self) -> Option<u32> {
        self.with_dim(true, |d| {
            // SAFETY: as for `dim_sample`.
            let m = unsafe { nb::net_dim_get_rx_moderation((*d).mode, (*d).profile_ix.into()) };
            u32::from(m.usec)
        })
    }

    /// Queues the driver's task ([`NetDevOps::task`]) on the system workqueue; from any
    /// context. Does nothing before registration.
    pub(crate) fn schedule_task(&self) {
        let w = self.task.load(core::sync::atomic::Ordering::Acquire);
        if !w.is_null() {
            // SAFETY: stored from a live registration's private area (type invariant); the
            // owner cancels the work before freeing it.
            unsafe { nb::atl1c_rs_schedule_work(w) };
        }
    }

    /// Stores the task, the DIM state and the private area `p` (its NAPI instances are added
    /// by [`NapiSet::set_queues`]).
    ///
    /// # Safety
    ///
    /// `p` is the private area of a net_device allocated by [`Registration::new`], not yet
    /// registered, with `poll`, `irq` and `queues` (at most `MAX_NAPI / 2`) set, and
    /// [`NapiSet::clear`] runs before it is freed.
    pub(super) unsafe fn fill(&self, p: *mut Priv) {
        use core::sync::atomic::Ordering;
        // SAFETY: per the function's safety requirement `p` is a valid `Priv`; only
        // addresses are taken.
        let (task, dim) = unsafe { (&raw mut (*p).task, &raw mut (*p).dim) };
        self.task.store(task, Ordering::Release);
        self.dim.store(dim, Ordering::Release);
        // INVARIANT: the private area of a net_device of ours, cleared before it is freed.
        self.priv_.store(p, Ordering::Release);
    }

    /// Adds instance `i` to the net_device: rx instances with their persistent config (index
    /// `i`), tx ones without (they have no NAPI id), each with the interrupt line. `ENOMEM`
    /// (and not added) if the instance's config asks for threaded NAPI and its thread could
    /// not be made: `napi_enable` would try again and WARN when that fails too (7.2's
    /// `napi_restore_config`; the core clears only the device's mode, not the config's).
    ///
    /// # Safety
    ///
    /// `priv_` is set, `i < 2 * queues`, instance `i` is not added; process context, RTNL held
    /// or the net_device not registered yet.
    unsafe fn add(&self, i: usize) -> Result {
        use core::sync::atomic::Ordering;
        let p = self.priv_.load(Ordering::Acquire);
        let Some(slot) = self.napi.get(i) else {
            return Ok(());
        };
        // SAFETY: `p` is our private area (type invariant); `i` is within the NAPI array (the
        // function's safety requirement, and `slot` exists), the instance not added. The
        // config index `i` of an rx instance is below `queues`, the net_device's queue count,
        // which is the size of its `napi_config` array. `config` is null or points into
        // that array, which lives as long as the net_device.
        unsafe {
            let raw = (*p).dev;
            let n = (&raw mut (*p).napi).cast::<nb::napi_struct>().add(i);
            if i < (*p).queues {
                // CAST: below MAX_NAPI.
                nb::netif_napi_add_config(raw, n, (*p).poll, i as i32);
                let config = (*n).config;
                if !config.is_null() && (*config).threaded != 0 && (*n).thread.is_null() {
                    // Added, never enabled: nothing polls it.
                    nb::netif_napi_del(n);
                    return Err(ENOMEM);
                }
            } else {
                nb::netif_napi_add_tx_weight(raw, n, (*p).poll, 64);
            }
            if (*p).irq >= 0 {
                nb::netif_napi_set_irq(n, (*p).irq);
            }
            // INVARIANT: instance `i` is added.
            slot.store(n, Ordering::Release);
        }
        Ok(())
    }

    /// Keeps the NAPI instances of queues `0..n` added and removes the others (rx and tx
    /// alike): `n` queues in `ndo_open`, 0 in `ndo_stop`. Added instances start disabled.
    /// `EBUSY` if an instance to remove is still enabled, `EINVAL` for more queues than the
    /// device has, `ENOMEM` if a NAPI thread could not be made (what was added stays, for
    /// `set_queues(0)` to remove). Process context, RTNL held.
    pub(crate) fn set_queues(&self, n: usize) -> Result {
        use core::sync::atomic::Ordering;
        let p = self.priv_.load(Ordering::Acquire);
        if p.is_null() {
            return Err(ENODEV);
        }
        // SAFETY: `p` is our private area (type invariant); a plain field.
        let queues = unsafe { (*p).queues };
        if n > queues {
            return Err(EINVAL);
        }
        let keep = |i: usize| i.checked_rem(queues).is_some_and(|q| q < n);
        let enabled = self.enabled.load(Ordering::Acquire);
        if (0..2 * queues).any(|i| !keep(i) && enabled & (1 << i) != 0) {
            return Err(EBUSY);
        }
        for i in 0..2 * queues {
            let Some(slot) = self.napi.get(i) else {
                continue;
            };
            let added = !slot.load(Ordering::Acquire).is_null();
            if keep(i) && !added {
                // SAFETY: `priv_` set, `i < 2 * queues`, not added; process context under
                // RTNL (this function's requirement).
                unsafe { self.add(i) }?;
            } else if !keep(i) && added {
                // INVARIANT: the instance is removed below.
                let n = slot.swap(core::ptr::null_mut(), Ordering::AcqRel);
                // SAFETY: an added instance of ours that is not enabled (checked above), so
                // nothing polls it; process context (netif_napi_del locks and waits for RCU).
                // Its memory stays (the private area), should an interrupt still read it.
                unsafe { nb::netif_napi_del(n) };
            }
        }
        Ok(())
    }

    /// Enables instance `i` (`napi_enable`) unless it is enabled or not added. From `ndo_open`
    /// (process context, RTNL held).
    pub(crate) fn enable(&self, i: usize) {
        use core::sync::atomic::Ordering;
        let Some(n) = self.added(i) else {
            return;
        };
        if self.enabled.fetch_or(1 << i, Ordering::AcqRel) & (1 << i) == 0 {
            // SAFETY: an added, disabled instance (type invariant); process context.
            unsafe { nb::napi_enable(n.as_ptr()) }
        }
    }

    /// Disables instance `i` (`napi_disable`: waits for a running poll) unless it is not
    /// enabled. Process context, RTNL held.
    pub(crate) fn disable(&self, i: usize) {
        use core::sync::atomic::Ordering;
        let Some(n) = self.added(i) else {
            return;
        };
        if self.enabled.fetch_and(!(1 << i), Ordering::AcqRel) & (1 << i) != 0 {
            // SAFETY: an added, enabled instance (type invariant); process context.
            unsafe { nb::napi_disable(n.as_ptr()) }
        }
    }

    /// Removes every instance and forgets every pointer (before the net_device is freed).
    ///
    /// # Safety
    ///
    /// The net_device is unregistered (every instance disabled); process context.
    pub(super) unsafe fn clear(&self) {
        use core::sync::atomic::Ordering;
        for slot in &self.napi {
            let n = slot.swap(core::ptr::null_mut(), Ordering::AcqRel);
            if !n.is_null() {
                // SAFETY: an added instance of an unregistered net_device (the function's
                // safety requirement): nothing polls it.
                unsafe { nb::netif_napi_del(n) };
            }
        }
        self.enabled.store(0, Ordering::Release);
        self.task.store(core::ptr::null_mut(), Ordering::Release);
        self.dim.store(core::ptr::null_mut(), Ordering::Release);
        self.priv_.store(core::ptr::null_mut(), Ordering::Release);
    }

    /// Instance `i`, while it is added.
    fn added(&self, i: usize) -> Option<NonNull<nb::napi_struct>> {
        NonNull::new(
            self.napi
                .get(i)?
                .load(core::sync::atomic::Ordering::Acquire),
        )
    }

    /// Schedules instance `i` if it is added (`napi_schedule`); false if it is not. No handle
    /// leaves the set: the instances live as long as the registration, not this borrow.
    pub(crate) fn schedule(&self, i: usize) -> bool {
        let Some(n) = self.added(i) else {
            return false;
        };
        // SAFETY: an added instance of a net_device of ours, not yet freed (type invariant:
        // the slot is cleared first, after the interrupt line, the only caller outside
        // callbacks, was freed).
        let _ = unsafe { nb::napi_schedule(n.as_ptr()) };
        true
    }
}

/// The private area of our net_devices.
#[repr(C)]
pub(super) struct Priv {
    pub(super) driver: *const c_void,
    pub(super) dev: *mut nb::net_device,
    pub(super) napi: [nb::napi_struct; MAX_NAPI],
    /// The NAPI poll trampoline, for instances added after registration.
    pub(super) poll: Option<unsafe extern "C" fn(*mut nb::napi_struct, i32) -> i32>,
    /// The interrupt line the NAPI instances report, or -1.
    pub(super) irq: i32,
    /// Queue pairs: rx NAPI instances `0..queues`, tx ones `queues..2 * queues`.
    pub(super) queues: usize,
    /// The driver's process-context task (link changes, resets), run under RTNL.
    pub(super) task: kb::work_struct,
    /// Adaptive rx moderation state; its work item applies a new profile.
    pub(super) dim: nb::dim,
}

/// The DIM profile adaptive moderation starts from (`NET_DIM_DEF_PROFILE_EQE`'s index).
pub(super) const DIM_DEFAULT_PROFILE: u8 = 1;
