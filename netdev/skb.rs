// SPDX-License-Identifier: GPL-2.0

//! An owned `sk_buff`: its layout for the tx path, mapping its buffers, and every way out.

use core::ptr::NonNull;

use kernel::{
    bindings as kb,
    prelude::*, //
};

use super::{
    bindings as nb,
    device::NetDev,
    dma::{
        Dir,
        DmaDev,
        DmaMap, //
    },
    napi::Napi, //
};

/// An owned `struct sk_buff`.
///
/// # Invariants
///
/// The pointer is a valid skb owned by this value; it is released only through one of the
/// consuming methods (never by a silent destructor).
pub(crate) struct SkBuff(NonNull<kb::sk_buff>);

// SAFETY: an owned skb may move between CPUs (the network stack does it all the time).
unsafe impl Send for SkBuff {}

/// What the tx path needs from an skb.
pub(crate) type SkbInfo = nb::atl1c_rs_skb_info;

impl SkBuff {
    /// Takes ownership of an skb handed over by the stack.
    ///
    /// # Safety
    ///
    /// `skb` must be a valid skb whose ownership passes to the caller.
    pub(super) unsafe fn from_raw(skb: *mut kb::sk_buff) -> Option<Self> {
        // INVARIANT: the caller passes ownership of a valid skb.
        NonNull::new(skb).map(Self)
    }

    pub(super) fn raw(&self) -> *mut kb::sk_buff {
        self.0.as_ptr()
    }

    /// Length of the data.
    pub(crate) fn len(&self) -> u32 {
        // SAFETY: valid skb by the type invariant.
        unsafe { (*self.raw()).len }
    }

    /// Transmit properties.
    pub(crate) fn info(&self) -> SkbInfo {
        let mut info = SkbInfo::default();
        // SAFETY: valid skb; `info` is a valid out-pointer.
        unsafe { nb::atl1c_rs_skb_info(self.raw(), &mut info) };
        info
    }

    /// Rewrites the headers of a GSO skb for hardware segmentation (`atl1c_tso_csum`).
    pub(crate) fn tso_prep(&mut self) -> Result {
        // SAFETY: valid skb, owned (so writable after the COW the helper does).
        kernel::error::to_result(unsafe { nb::atl1c_rs_skb_tso_prep(self.raw()) })
    }

    /// Maps `[off, off + len)` of the linear buffer from `data` on (the head, and the tailroom
    /// of a linear skb, where a receive buffer lies) for DMA; `EINVAL` beyond it.
    pub(crate) fn map_head(&self, dev: &DmaDev, off: u32, len: u32, dir: Dir) -> Result<DmaMap> {
        let mut addr = 0;
        // SAFETY: `dev` is a valid device (invariant of `DmaDev`), the skb valid (type
        // invariant); the helper maps only within the linear buffer (it checks the range) and
        // writes `addr`, a valid out-pointer.
        kernel::error::to_result(unsafe {
            nb::atl1c_rs_skb_map_linear(
                dev.raw().cast(),
                self.raw(),
                off,
                len,
                dir.raw(),
                &mut addr,
            )
        })?;
        // SAFETY: a live single mapping of `len` bytes on `dev`, just made (and checked).
        Ok(unsafe { DmaMap::new(dev, addr, len, dir, false) })
    }

    /// Maps page fragment `i` for DMA to the device; `EINVAL` when there is no fragment `i`.
    pub(crate) fn map_frag(&self, dev: &DmaDev, i: u32) -> Result<DmaMap> {
        let (mut addr, mut size) = (0, 0u32);
        // SAFETY: valid device and skb (type invariants); the helper checks `i` against the
        // skb's fragments and writes `addr` and `size`, valid out-pointers.
        kernel::error::to_result(unsafe {
            nb::atl1c_rs_skb_map_frag(dev.raw().cast(), self.raw(), i, &mut addr, &mut size)
        })?;
        // SAFETY: a live page mapping of the fragment's `size` bytes on `dev`, just made and
        // checked (`skb_frag_dma_map` maps to the device).
        Ok(unsafe { DmaMap::new(dev, addr, size, Dir::ToDevice, true) })
    }

    /// Marks the L4 checksum as verified by the device.
    pub(crate) fn set_csum_unnecessary(&mut self) {
        // SAFETY: valid skb.
        unsafe { nb::atl1c_rs_skb_set_csum_unnecessary(self.raw()) };
    }

    /// Records a VLAN tag the device stripped.
    pub(crate) fn set_vlan(&mut self, tci: u16) {
        // SAFETY: valid skb.
        unsafe { nb::atl1c_rs_skb_set_vlan(self.raw(), tci) };
    }

    /// Hands a received frame to GRO (after `eth_type_trans`).
    pub(crate) fn gro_receive(self, dev: &NetDev<'_>, napi: &Napi<'_>, queue: u16) {
        let skb = self.raw();
        core::mem::forget(self);
        // SAFETY: valid skb whose ownership passes to the stack; `dev`/`napi` are registered.
        unsafe { nb::atl1c_rs_rx_deliver(napi.raw(), skb, dev.raw(), queue) };
    }

    /// Frees a transmitted skb (`napi_consume_skb`; `budget` 0 outside NAPI).
    pub(crate) fn consume(self, budget: i32) {
        let skb = self.raw();
        core::mem::forget(self);
        // SAFETY: valid skb whose ownership ends here.
        unsafe { nb::napi_consume_skb(skb, budget) };
    }

    /// Drops an skb that was not delivered, with a reason for drop monitors.
    pub(crate) fn drop_reason(self, reason: DropReason) {
        let skb = self.raw();
        core::mem::forget(self);
        // SAFETY: valid skb whose ownership ends here; any context is fine for the _any
        // variant.
        unsafe { nb::dev_kfree_skb_any_reason(skb, reason as u32) };
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // Every skb must leave through consume/drop_reason/gro_receive; one that does not is a
        // driver bug. Free it rather than leak, and say so.
        kernel::pr_warn!("atl1c_rs: skb dropped without a reason\n");
        // SAFETY: valid skb owned by `self`.
        unsafe { nb::dev_kfree_skb_any_reason(self.raw(), DropReason::NotSpecified as u32) };
    }
}

/// Why an skb was dropped (`enum skb_drop_reason`).
#[derive(Clone, Copy, Debug)]
#[repr(u32)]
pub(crate) enum DropReason {
    /// `SKB_DROP_REASON_NOT_SPECIFIED`.
    NotSpecified = nb::skb_drop_reason_SKB_DROP_REASON_NOT_SPECIFIED,
    /// `SKB_DROP_REASON_DEV_READY`: the device is down.
    DevReady = nb::skb_drop_reason_SKB_DROP_REASON_DEV_READY,
    /// `SKB_DROP_REASON_NOMEM`: a DMA mapping failed.
    NoMem = nb::skb_drop_reason_SKB_DROP_REASON_NOMEM,
    /// `SKB_DROP_REASON_FULL_RING`: no descriptors.
    FullRing = nb::skb_drop_reason_SKB_DROP_REASON_FULL_RING,
}
