// SPDX-License-Identifier: GPL-2.0

//! A value that one context at a time owns, taken without waiting: an rx ring, which its NAPI
//! instance polls and refills while the interface runs, and open, stop and the ethtool
//! changes reach only with that instance disabled (as `atl1c_clean_rx_irq` and
//! `atl1c_alloc_rx_buffer` own `rfd_ring` and `rrd_ring` by NAPI alone).
//!
//! NAPI and RTNL already serialise those users, so a claim always succeeds; one that fails
//! means that serialisation was broken, and the caller backs off instead of racing. A claim is
//! not a lock: it never waits, so it has no ordering against other locks for lockdep to check,
//! and process context may hold it with softirqs on (NAPI on the same CPU finds it taken and
//! backs off). It costs what an uncontended lock does (one compare-and-exchange and one
//! store), once per NAPI poll, not per frame.

use core::{
    cell::UnsafeCell,
    ops::{
        Deref,
        DerefMut, //
    },
    sync::atomic::{
        AtomicBool,
        Ordering, //
    },
};

use kernel::prelude::*;

/// A `T` reached through [`Claim::claim`] by one holder at a time.
///
/// # Invariants
///
/// `value` is reached only through a live [`Claimed`], and at most one [`Claimed`] of it lives
/// at a time: `held` is set while one does.
pub(crate) struct Claim<T> {
    value: UnsafeCell<T>,
    held: AtomicBool,
}

// SAFETY: `value` is reached by one holder at a time (type invariants), on any thread: the
// value moves between threads, so `T: Send` suffices, as for a lock.
unsafe impl<T: Send> Sync for Claim<T> {}

impl<T> Claim<T> {
    /// `value`, unclaimed.
    pub(crate) const fn new(value: T) -> Self {
        // INVARIANT: nothing holds a claim yet.
        Self {
            value: UnsafeCell::new(value),
            held: AtomicBool::new(false),
        }
    }

    /// Claims the value until the returned [`Claimed`] is dropped; `None` if it is claimed.
    pub(crate) fn claim(&self) -> Option<Claimed<'_, T>> {
        // Acquire: what the last holder wrote (released by its drop) is seen.
        self.held
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        // INVARIANT: `held` was clear and is now ours.
        Some(Claimed { c: self })
    }
}

/// A claim on a [`Claim`]'s value: the value, for as long as it lives.
///
/// # Invariants
///
/// `c.held` was set by the [`Claim::claim`] that made this, and only this clears it.
pub(crate) struct Claimed<'a, T> {
    c: &'a Claim<T>,
}

impl<T> Deref for Claimed<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the claim is ours (type invariants): no other `Claimed` exists, so nothing
        // else reaches the value.
        unsafe { &*self.c.value.get() }
    }
}

impl<T> DerefMut for Claimed<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the one borrow through the claim.
        unsafe { &mut *self.c.value.get() }
    }
}

impl<T> Drop for Claimed<'_, T> {
    fn drop(&mut self) {
        // Release: the next holder sees what this one wrote.
        self.c.held.store(false, Ordering::Release);
    }
}

#[kunit_tests(atl1c_rs_claim)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time() -> Result {
        let c = Claim::new(1u32);
        let mut a = c.claim().ok_or(EINVAL)?;
        assert!(c.claim().is_none());
        *a += 1;
        drop(a);
        let b = c.claim().ok_or(EINVAL)?;
        assert_eq!(*b, 2);
        drop(b);
        assert_eq!(c.claim().map(|v| *v), Some(2));
        Ok(())
    }
}
