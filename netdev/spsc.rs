// SPDX-License-Identifier: GPL-2.0

//! The buffer slots of a descriptor ring, shared by one producer and one consumer that run at
//! the same time without a lock between them: a tx ring's `ndo_start_xmit` (serialised by the
//! stack's tx queue lock) fills slots while its completion (serialised by NAPI) empties them,
//! as `atl1c_xmit_frame` and `atl1c_clean_tx` share `buffer_info` through `next_to_use` and
//! an atomic `next_to_clean`.
//!
//! Each end is claimed for as long as its handle lives ([`Spsc::producer`],
//! [`Spsc::consumer`]; both at once: [`Spsc::exclusive`]). A claim is not a lock: it never
//! waits. The stack and NAPI already serialise each end, so a claim always succeeds; one that
//! fails means that serialisation was broken, and the caller backs off instead of racing.
//! What the claims buy is soundness for every caller: each slot has one owner at a time, by
//! the indices, whatever the callers do.

use core::{
    cell::UnsafeCell,
    sync::atomic::{
        AtomicBool,
        AtomicU16,
        Ordering, //
    },
};

use kernel::{
    alloc::Flags,
    prelude::*, //
};

use crate::ring::RingIndex;

/// A ring's slots and the ring-wide data `R` (its descriptor memory) that both ends read.
///
/// # Invariants
///
/// - `slots` holds `count` slots, at least 2, and `head` and `tail` are below it; `count`
///   reads 0 only while [`Exclusive::replace`] runs (both claims held);
/// - the slots in `[tail, head)` (published) belong to the consumer, the others to the
///   producer; each end only touches its own, while holding its claim;
/// - `ring` and `slots` are replaced or reached mutably only with both claims held; `ring` is
///   read through `&` with either claim held.
pub(crate) struct Spsc<R, T> {
    ring: UnsafeCell<R>,
    slots: UnsafeCell<KVec<UnsafeCell<Option<T>>>>,
    /// The number of slots, for the claimed ends and lock-free readers ([`Spsc::avail`]).
    count: AtomicU16,
    /// `next_to_use`: published by the producer (release), read by the consumer (acquire).
    head: AtomicU16,
    /// `next_to_clean`: published by the consumer (release), read by the producer (acquire).
    tail: AtomicU16,
    producer: AtomicBool,
    consumer: AtomicBool,
}

// SAFETY: each slot is reached by one end at a time (type invariants), so the values move
// between threads (`T: Send`); `R` is shared by both ends through `&` (`R: Sync`) and reached
// mutably by the one holder of both claims, on any thread (`R: Send`).
unsafe impl<R: Send + Sync, T: Send> Sync for Spsc<R, T> {}
// SAFETY: as above; owning the whole moves `R` and every `T` with it.
unsafe impl<R: Send, T: Send> Send for Spsc<R, T> {}

/// The storage of a ring, allocated ahead (process context) and swapped in with
/// [`Exclusive::replace`].
///
/// # Invariants
///
/// `slots` holds 2 to `u16::MAX` slots.
pub(crate) struct SpscParts<R, T> {
    ring: R,
    slots: KVec<UnsafeCell<Option<T>>>,
}

impl<R, T> SpscParts<R, T> {
    /// `ring` with `count` empty slots; `EINVAL` below 2.
    pub(crate) fn new(ring: R, count: u16, flags: Flags) -> Result<Self> {
        if RingIndex::new(count).is_none() {
            return Err(EINVAL);
        }
        let mut slots = KVec::with_capacity(count.into(), flags)?;
        for _ in 0..count {
            slots.push(UnsafeCell::new(None), flags)?;
        }
        // INVARIANT: `count` slots, pushed above; 2 or more (checked above).
        Ok(Self { ring, slots })
    }

    /// The number of slots.
    fn count(&self) -> u16 {
        // CAST: at most `u16::MAX` (type invariant).
        self.slots.len() as u16
    }
}

impl<R, T> Spsc<R, T> {
    /// An empty ring over `parts`.
    pub(crate) fn new(parts: SpscParts<R, T>) -> Self {
        let count = parts.count();
        // INVARIANT: `parts` has `count` slots, at least 2; both indices are 0, nothing is
        // published.
        Self {
            ring: UnsafeCell::new(parts.ring),
            slots: UnsafeCell::new(parts.slots),
            count: AtomicU16::new(count),
            head: AtomicU16::new(0),
            tail: AtomicU16::new(0),
            producer: AtomicBool::new(false),
            consumer: AtomicBool::new(false),
        }
    }

    fn claim(flag: &AtomicBool) -> bool {
        flag.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// The ring's index arithmetic; `None` only while the ring is being replaced, which no
    /// holder of a claim ever sees.
    fn geometry(&self) -> Option<RingIndex> {
        RingIndex::new(self.count.load(Ordering::Acquire))
    }

    /// Claims `flag` (an end) and reads the geometry under it.
    fn claim_end(&self, flag: &AtomicBool) -> Option<RingIndex> {
        if !Self::claim(flag) {
            return None;
        }
        let g = self.geometry();
        if g.is_none() {
            flag.store(false, Ordering::Release);
        }
        g
    }

    /// Slots the producer can still fill (one always stays empty), read without a claim: a
    /// snapshot for the stop/wake decisions, 0 while the ring is being replaced.
    pub(crate) fn avail(&self) -> u16 {
        self.geometry().map_or(0, |g| {
            let (h, t) = (
                self.head.load(Ordering::Acquire),
                self.tail.load(Ordering::Acquire),
            );
            if g.contains(h) && g.contains(t) {
                g.free(h, t)
            } else {
                0
            }
        })
    }

    /// The number of slots, read without a claim (0 while the ring is being replaced).
    pub(crate) fn count(&self) -> u16 {
        self.count.load(Ordering::Acquire)
    }

    /// Claims the producer end; `None` if it is claimed already.
    pub(crate) fn producer(&self) -> Option<Producer<'_, R, T>> {
        let geometry = self.claim_end(&self.producer)?;
        let head = self.head.load(Ordering::Relaxed);
        // INVARIANT: the claim is ours; `head` is the published one, so nothing is pushed.
        Some(Producer {
            s: self,
            geometry,
            head,
            pushed: 0,
        })
    }

    /// Claims the consumer end; `None` if it is claimed already.
    pub(crate) fn consumer(&self) -> Option<Consumer<'_, R, T>> {
        let geometry = self.claim_end(&self.consumer)?;
        let tail = self.tail.load(Ordering::Relaxed);
        // INVARIANT: the claim is ours.
        Some(Consumer {
            s: self,
            geometry,
            tail,
        })
    }

    /// Claims both ends (the interface is down, or being reset with tx and NAPI stopped);
    /// `None` if either is claimed.
    pub(crate) fn exclusive(&self) -> Option<Exclusive<'_, R, T>> {
        if !Self::claim(&self.producer) {
            return None;
        }
        if !Self::claim(&self.consumer) {
            self.producer.store(false, Ordering::Release);
            return None;
        }
        // INVARIANT: both claims are ours.
        Some(Exclusive { s: self })
    }
}

/// The producer end of an [`Spsc`]: pushes values into the slots after the published head,
/// then publishes them (or takes them back) at once.
///
/// # Invariants
///
/// Holds the producer claim of `s`; `geometry` is `s`'s (its `count` under the claim);
/// `head` is the published head plus `pushed` slots, each of which holds what was pushed and
/// is not published.
pub(crate) struct Producer<'a, R, T> {
    s: &'a Spsc<R, T>,
    geometry: RingIndex,
    head: u16,
    pushed: u16,
}

impl<R, T> Producer<'_, R, T> {
    /// The ring-wide data.
    pub(crate) fn ring(&self) -> &R {
        // SAFETY: the producer claim keeps `ring` from being replaced or borrowed mutably;
        // the consumer only reads it too.
        unsafe { &*self.s.ring.get() }
    }

    /// The slot the next push fills.
    pub(crate) fn head(&self) -> u16 {
        self.head
    }

    /// Slots free for pushing now (the consumer may free more meanwhile).
    pub(crate) fn free(&self) -> u16 {
        let tail = self.s.tail.load(Ordering::Acquire);
        if !self.geometry.contains(tail) {
            return 0;
        }
        self.geometry.free(self.head, tail)
    }

    fn slot(&self, i: u16) -> Option<*mut Option<T>> {
        // SAFETY: the claim keeps `slots` from being replaced; only the `UnsafeCell` of slot
        // `i` is handed out, never a reference to one the consumer owns.
        let slots = unsafe { &*self.s.slots.get() };
        slots.get(usize::from(i)).map(UnsafeCell::get)
    }

    /// Fills the slot at [`Self::head`] with `v` and moves the head on; returns the slot's
    /// index, or gives `v` back when the ring is full.
    pub(crate) fn push(&mut self, v: Option<T>) -> core::result::Result<u16, Option<T>> {
        if self.free() == 0 {
            return Err(v);
        }
        let i = self.head;
        let Some(p) = self.slot(i) else {
            return Err(v);
        };
        // SAFETY: slot `i` is free (checked above against the consumer's published tail, which
        // only moves on): outside `[tail, head)`, it is the producer's, and the claim makes it
        // this handle's alone.
        unsafe { *p = v };
        self.head = self.geometry.next(i);
        self.pushed += 1;
        // INVARIANT: one more pushed slot, holding `v`.
        Ok(i)
    }

    /// The value in the last pushed (unpublished) slot.
    pub(crate) fn last_mut(&mut self) -> Option<&mut T> {
        if self.pushed == 0 {
            return None;
        }
        let i = self.geometry.advance(self.head, self.geometry.count() - 1);
        let p = self.slot(i)?;
        // SAFETY: a pushed, unpublished slot: this handle's alone, borrowed through `&mut self`.
        unsafe { (*p).as_mut() }
    }

    /// Takes back the last pushed slot's value and its index; `None` when nothing is pushed.
    pub(crate) fn unpush(&mut self) -> Option<(u16, Option<T>)> {
        if self.pushed == 0 {
            return None;
        }
        let i = self.geometry.advance(self.head, self.geometry.count() - 1);
        let p = self.slot(i)?;
        // SAFETY: a pushed, unpublished slot: this handle's alone.
        let v = unsafe { (*p).take() };
        self.head = i;
        self.pushed -= 1;
        Some((i, v))
    }

    /// Hands every pushed slot to the consumer; returns the new head.
    pub(crate) fn publish(&mut self) -> u16 {
        // Release: the slot writes (and the descriptors the caller wrote) come before the
        // head the consumer reads with acquire.
        self.s.head.store(self.head, Ordering::Release);
        self.pushed = 0;
        self.head
    }
}

impl<R, T> Drop for Producer<'_, R, T> {
    fn drop(&mut self) {
        // Unpublished values are taken back and dropped, so no later push overwrites them.
        while self.unpush().is_some() {}
        self.s.producer.store(false, Ordering::Release);
    }
}

/// The consumer end of an [`Spsc`]: takes values from the published slots in order.
///
/// # Invariants
///
/// Holds the consumer claim of `s`; `geometry` is `s`'s (its `count` under the claim);
/// `tail` is at or after the published tail and within `[tail, head)` as published.
pub(crate) struct Consumer<'a, R, T> {
    s: &'a Spsc<R, T>,
    geometry: RingIndex,
    tail: u16,
}

impl<R, T> Consumer<'_, R, T> {
    /// The ring's index arithmetic.
    pub(crate) fn geometry(&self) -> RingIndex {
        self.geometry
    }

    /// The next slot to take.
    pub(crate) fn tail(&self) -> u16 {
        self.tail
    }

    /// The published head (acquire: the slots before it are written).
    pub(crate) fn head(&self) -> u16 {
        self.s.head.load(Ordering::Acquire)
    }

    /// Takes the value of the slot at [`Self::tail`] and moves on; `None` when every published
    /// slot is taken. A slot without a value yields `Some(None)`.
    pub(crate) fn take(&mut self) -> Option<Option<T>> {
        let head = self.head();
        if self.tail == head || !self.geometry.contains(head) {
            return None;
        }
        // SAFETY: the claim keeps `slots` from being replaced.
        let slots = unsafe { &*self.s.slots.get() };
        let p = slots.get(usize::from(self.tail))?.get();
        // SAFETY: `tail` is in `[tail, head)` as published (checked above; the acquire load of
        // `head` orders the producer's write before this read): the consumer's slot, this
        // handle's alone.
        let v = unsafe { (*p).take() };
        self.tail = self.geometry.next(self.tail);
        Some(v)
    }

    /// Hands the taken slots back to the producer.
    pub(crate) fn publish(&mut self) {
        self.s.tail.store(self.tail, Ordering::Release);
    }
}

impl<R, T> Drop for Consumer<'_, R, T> {
    fn drop(&mut self) {
        self.publish();
        self.s.consumer.store(false, Ordering::Release);
    }
}

/// Both ends of an [`Spsc`] at once: the whole ring, to empty, reset or replace.
///
/// # Invariants
///
/// Holds both claims of `s`.
pub(crate) struct Exclusive<'a, R, T> {
    s: &'a Spsc<R, T>,
}

impl<R, T> Exclusive<'_, R, T> {
    /// The ring-wide data.
    pub(crate) fn ring(&self) -> &R {
        // SAFETY: both claims held: nothing else reaches `ring`.
        unsafe { &*self.s.ring.get() }
    }

    /// Takes every value out of every slot (`f`: the slot's index and value) and starts the
    /// ring over empty, both indices at 0.
    pub(crate) fn drain(&mut self, mut f: impl FnMut(u16, T)) {
        // SAFETY: both claims held: every slot is ours, and `slots` is not replaced.
        let slots = unsafe { &mut *self.s.slots.get() };
        for (i, s) in slots.iter_mut().enumerate() {
            if let Some(v) = s.get_mut().take() {
                // CAST: at most `count`, a `u16`, slots (type invariant).
                f(i as u16, v);
            }
        }
        self.s.head.store(0, Ordering::Release);
        self.s.tail.store(0, Ordering::Release);
    }

    /// Swaps in `parts` (an empty ring, indices at 0) and returns the old storage, with what
    /// its slots still hold.
    pub(crate) fn replace(&mut self, mut parts: SpscParts<R, T>) -> SpscParts<R, T> {
        let count = parts.count();
        // Lock-free readers see no ring while it changes.
        self.s.count.store(0, Ordering::Release);
        // SAFETY: both claims held: nothing else reaches `ring` or `slots`, so the pointers
        // are valid for reads and writes (and aligned: `UnsafeCell::get`); the other sides are
        // fields of `parts`, which this function owns.
        unsafe {
            core::ptr::swap(self.s.ring.get(), &mut parts.ring);
            core::ptr::swap(self.s.slots.get(), &mut parts.slots);
        }
        self.s.head.store(0, Ordering::Release);
        self.s.tail.store(0, Ordering::Release);
        // INVARIANT: the new slots number `count`, at least 2; the indices are 0. The old
        // storage goes back whole (its own slots, its own count).
        self.s.count.store(count, Ordering::Release);
        parts
    }
}

impl<R, T> Drop for Exclusive<'_, R, T> {
    fn drop(&mut self) {
        self.s.consumer.store(false, Ordering::Release);
        self.s.producer.store(false, Ordering::Release);
    }
}

#[kunit_tests(atl1c_rs_spsc)]
mod tests {
    use super::*;

    fn ring(count: u16) -> Result<Spsc<(), u32>> {
        Ok(Spsc::new(SpscParts::new((), count, GFP_KERNEL)?))
    }

    #[test]
    fn ends_are_claimed_once() -> Result {
        let s = ring(4)?;
        let p = s.producer().ok_or(EINVAL)?;
        assert!(s.producer().is_none());
        assert!(s.exclusive().is_none());
        let c = s.consumer().ok_or(EINVAL)?;
        assert!(s.consumer().is_none());
        drop(p);
        // The consumer is still claimed.
        assert!(s.exclusive().is_none());
        drop(c);
        let x = s.exclusive().ok_or(EINVAL)?;
        assert!(s.producer().is_none() && s.consumer().is_none());
        drop(x);
        assert!(s.producer().is_some());
        Ok(())
    }

    #[test]
    fn published_slots_go_to_the_consumer_in_order() -> Result {
        let s = ring(4)?;
        assert_eq!(s.avail(), 3);
        let mut p = s.producer().ok_or(EINVAL)?;
        assert_eq!(p.push(Some(1)), Ok(0));
        assert_eq!(p.push(None), Ok(1));
        assert_eq!(p.push(Some(3)), Ok(2));
        // One slot stays empty.
        assert_eq!(p.push(Some(4)), Err(Some(4)));
        if let Some(v) = p.last_mut() {
            *v = 30;
        }
        let mut c = s.consumer().ok_or(EINVAL)?;
        // Nothing published yet.
        assert_eq!(c.take(), None);
        assert_eq!(p.publish(), 3);
        assert_eq!(p.last_mut(), None);
        assert_eq!(c.take(), Some(Some(1)));
        assert_eq!(c.take(), Some(None));
        // The tail is published when the consumer lets go.
        assert_eq!(s.avail(), 0);
        drop(c);
        assert_eq!(s.avail(), 2);
        assert_eq!(p.push(Some(5)), Ok(3));
        // Wraps.
        assert_eq!(p.push(Some(6)), Ok(0));
        assert_eq!(p.unpush(), Some((0, Some(6))));
        drop(p);
        // The unpublished 5 was taken back when the producer let go.
        let mut c = s.consumer().ok_or(EINVAL)?;
        assert_eq!(c.take(), Some(Some(30)));
        assert_eq!(c.take(), None);
        assert_eq!(c.tail(), 3);
        Ok(())
    }

    #[test]
    fn exclusive_drains_and_replaces() -> Result {
        let s = ring(4)?;
        let mut p = s.producer().ok_or(EINVAL)?;
        let _ = p.push(Some(7));
        let _ = p.push(Some(8));
        p.publish();
        drop(p);
        let mut x = s.exclusive().ok_or(EINVAL)?;
        let mut seen = KVec::new();
        x.drain(|i, v| {
            let _ = seen.push((i, v), GFP_KERNEL);
        });
        assert_eq!(&seen[..], &[(0, 7), (1, 8)]);
        let old = x.replace(SpscParts::new((), 8, GFP_KERNEL)?);
        drop(old);
        drop(x);
        assert_eq!(s.count(), 8);
        assert_eq!(s.avail(), 7);
        assert!(SpscParts::<(), u32>::new((), 1, GFP_KERNEL).is_err());
        Ok(())
    }
}
