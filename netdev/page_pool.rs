// SPDX-License-Identifier: GPL-2.0

//! Receive buffers from a page_pool: the pool of one rx ring, and its buffers as owned tokens
//! that become skbs (`napi_build_skb`, recycled into the pool when the stack frees them).

use core::ptr::NonNull;

use kernel::{
    bindings as kb,
    prelude::*, //
};

use super::{
    bindings as nb,
    DmaAddr,
    DmaDev,
    NetDev,
    SkBuff, //
};

/// A page_pool for one rx ring: buffers of `buf_len` bytes the card may write, mapped for it,
/// each with the headroom and the room for `skb_shared_info` that an skb built around it
/// needs (`atl1c_rs_rx_pool_create`). Dropping it destroys the pool, which may sleep: drop it
/// in process context. Buffers still out ([`RxPage`], or skbs built from them) keep the pool's
/// memory alive until the last comes back (`page_pool_destroy` defers the release).
///
/// # Invariants
///
/// `raw` is a pool made by `atl1c_rs_rx_pool_create` for buffers of `buf_len` bytes and not
/// yet destroyed; this owns it. The pool has no NAPI instance and no CPU of its own, so only
/// its allocation path ([`PagePool::alloc`], through `&mut self`) touches its allocation cache.
pub(crate) struct PagePool {
    raw: NonNull<kb::page_pool>,
    buf_len: u32,
}

// SAFETY: the pool may be used and destroyed from any thread; allocation needs `&mut self`.
unsafe impl Send for PagePool {}
// SAFETY: `&PagePool` gives access to nothing but `buf_len`.
unsafe impl Sync for PagePool {}

impl PagePool {
    /// A pool for a ring of `count` buffers of `buf_len` bytes, mapped on `dma` for `dev`'s
    /// receive path (the pool is listed under `dev` for netlink's page-pool queries).
    pub(crate) fn new(dma: &DmaDev, dev: &NetDev<'_>, count: u32, buf_len: u32) -> Result<Self> {
        let mut raw = core::ptr::null_mut();
        // SAFETY: `dma` and `dev` are valid devices (their type invariants); `raw` is a valid
        // out-pointer, written on success only.
        kernel::error::to_result(unsafe {
            nb::atl1c_rs_rx_pool_create(dma.raw().cast(), dev.raw(), count, buf_len, &mut raw)
        })?;
        let raw = NonNull::new(raw).ok_or(ENOMEM)?;
        // INVARIANT: a pool just made for `buf_len`, by the helper, which gives it no NAPI
        // instance or CPU.
        Ok(Self { raw, buf_len })
    }

    /// A buffer for the card, or `None` when no page could be had.
    pub(crate) fn alloc(&mut self) -> Option<RxPage> {
        let (mut offset, mut truesize, mut addr) = (0u32, 0u32, 0);
        // SAFETY: a live pool (type invariant) whose allocation cache only this path touches,
        // and `&mut self` makes it exclusive; valid out-pointers.
        let page = unsafe {
            nb::atl1c_rs_rx_page_alloc(
                self.raw.as_ptr(),
                self.buf_len,
                &mut offset,
                &mut truesize,
                &mut addr,
            )
        };
        let page = NonNull::new(page)?;
        // INVARIANT: a fragment reference of a page of this pool, just allocated for a buffer
        // of `buf_len` bytes at `addr`.
        Some(RxPage {
            pool: self.raw,
            page,
            offset,
            truesize,
            buf_len: self.buf_len,
            addr,
        })
    }
}

impl Drop for PagePool {
    fn drop(&mut self) {
        // SAFETY: a live pool, owned (type invariant), destroyed once, here. Buffers still
        // out keep its memory: `page_pool_destroy` frees it when the last one is back.
        unsafe { nb::page_pool_destroy(self.raw.as_ptr()) };
    }
}

/// A receive buffer of a [`PagePool`] that the card may write: `buf_len` bytes at
/// [`RxPage::addr`]. It goes back to its pool when dropped, or becomes an skb
/// ([`RxPage::into_skb`]).
///
/// # Invariants
///
/// `page` is a page of the pool at `pool` and this owns one fragment reference to it: the
/// fragment `[offset, offset + truesize)`, allocated by `atl1c_rs_rx_page_alloc` for buffers
/// of `buf_len` bytes, whose bus address is `addr`. The pool's memory stays allocated while
/// the reference is out, even after `page_pool_destroy`.
pub(crate) struct RxPage {
    pool: NonNull<kb::page_pool>,
    page: NonNull<kb::page>,
    offset: u32,
    truesize: u32,
    buf_len: u32,
    addr: DmaAddr,
}

// SAFETY: a page reference may be given back to its pool from any thread (through the pool's
// ring, never its allocation cache, see `atl1c_rs_rx_page_free`).
unsafe impl Send for RxPage {}
// SAFETY: `&RxPage` gives access to plain values only.
unsafe impl Sync for RxPage {}

impl RxPage {
    /// The bus address where the card may write [`Self::buf_len`] bytes.
    pub(crate) fn addr(&self) -> DmaAddr {
        self.addr
    }

    /// How many bytes the card may write.
    pub(crate) fn buf_len(&self) -> u32 {
        self.buf_len
    }

    /// An skb of the `len` bytes the card received, after syncing the `sync_len` bytes it
    /// wrote (the frame and its FCS) for the CPU. `EINVAL` when `len <= sync_len <= buf_len`
    /// does not hold, `ENOMEM` when no skb could be had; the buffer goes back to its pool in
    /// both cases.
    pub(crate) fn into_skb(self, sync_len: u32, len: u32) -> Result<SkBuff> {
        if len > sync_len || sync_len > self.buf_len {
            return Err(EINVAL);
        }
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: the page reference is ours (type invariant) and passes to the helper, which
        // puts it into the skb or back into the pool; `sync_len` and `len` lie within the
        // buffer (checked above). `this` is not dropped, so the reference is given once.
        let skb = unsafe {
            nb::atl1c_rs_rx_page_build_skb(
                this.pool.as_ptr(),
                this.page.as_ptr().cast(),
                this.offset,
                this.truesize,
                sync_len,
                len,
            )
        };
        // SAFETY: a fresh skb (or null), owned by us.
        unsafe { SkBuff::from_raw(skb.cast()) }.ok_or(ENOMEM)
    }
}

impl Drop for RxPage {
    fn drop(&mut self) {
        // SAFETY: our page reference (type invariant), given back once, here; the pool's
        // memory is alive while it is out.
        unsafe { nb::atl1c_rs_rx_page_free(self.pool.as_ptr(), self.page.as_ptr().cast()) };
    }
}
