// SPDX-License-Identifier: GPL-2.0

//! Streaming DMA: the device that maps, bus addresses, directions and owned mappings.

use core::ptr::NonNull;

use kernel::{
    bindings as kb,
    device::Core,
    pci, //
};

use super::{
    bindings as nb,
    pci_raw, //
};

/// The `struct device` embedded in the PCI device.
pub(crate) struct DmaDev(pub(super) NonNull<kb::device>);

// SAFETY: a `struct device` pointer may be used from any thread; DMA API calls are thread-safe.
unsafe impl Send for DmaDev {}
// SAFETY: as above; the wrapper only hands the pointer to thread-safe DMA API calls.
unsafe impl Sync for DmaDev {}

impl DmaDev {
    /// The DMA device of `pdev`.
    ///
    /// # Invariants
    ///
    /// The pointer stays valid while the driver is bound to `pdev`; every user of a `DmaDev`
    /// lives in the driver's bound data and is dropped before unbind completes.
    pub(crate) fn new(pdev: &pci::Device<Core<'_>>) -> Self {
        let raw = pci_raw(pdev);
        // SAFETY: `raw` points to a live `struct pci_dev` (we hold a reference to it); taking
        // the address of its `dev` field does not read memory.
        let dev = unsafe { &raw mut (*raw).dev };
        // SAFETY: the address of a field of a valid, non-null `struct pci_dev` is not null.
        let dev = unsafe { NonNull::new_unchecked(dev) };
        // INVARIANT: see the doc comment.
        Self(dev)
    }

    pub(super) fn raw(&self) -> *mut kb::device {
        self.0.as_ptr()
    }
}

/// A bus address the device may DMA to or from.
pub(crate) type DmaAddr = u64;

/// Direction of a streaming mapping.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dir {
    /// CPU to device (tx; rx buffers come from a page_pool, which maps them itself).
    ToDevice,
}

impl Dir {
    pub(super) fn raw(self) -> kb::dma_data_direction {
        match self {
            Dir::ToDevice => kb::dma_data_direction_DMA_TO_DEVICE,
        }
    }
}

/// A streaming DMA mapping of an skb's buffer ([`SkBuff::map_head`], [`SkBuff::map_frag`]),
/// owned: it is unmapped once, by consuming it on the device that made it. One that is
/// dropped instead stays mapped (a leak the DMA-API debugging reports, never a double unmap).
///
/// # Invariants
///
/// `addr`, `len` and `dir` describe a live mapping made on the device `dev` points to, by
/// `dma_map_single_attrs` (`page` false) or `skb_frag_dma_map` (`page` true), not yet
/// unmapped. `dev` is only dereferenced when a live [`DmaDev`] with the same pointer is at hand.
pub(crate) struct DmaMap {
    dev: NonNull<kb::device>,
    addr: DmaAddr,
    len: u32,
    dir: Dir,
    page: bool,
}

// SAFETY: a mapping may be unmapped from any CPU; the pointer is only compared (see the type
// invariant) until then.
unsafe impl Send for DmaMap {}

impl DmaMap {
    /// Takes ownership of a mapping.
    ///
    /// # Safety
    ///
    /// `addr`, `len` and `dir` describe a live mapping made on `dev` and not yet unmapped, by
    /// `dma_map_single_attrs` (`page` false) or `skb_frag_dma_map` (`page` true), that
    /// nothing else will unmap.
    pub(super) unsafe fn new(dev: &DmaDev, addr: DmaAddr, len: u32, dir: Dir, page: bool) -> Self {
        // INVARIANT: the function's requirement.
        Self {
            dev: dev.0,
            addr,
            len,
            dir,
            page,
        }
    }

    /// The bus address, for a descriptor.
    pub(crate) fn addr(&self) -> DmaAddr {
        self.addr
    }

    /// The mapped length.
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// Whether `dev` made it; if not, it is reported and left mapped.
    fn made_by(&self, dev: &DmaDev) -> bool {
        if self.dev == dev.0 {
            return true;
        }
        kernel::pr_warn!("atl1c_rs: a DMA mapping offered to another device, left mapped\n");
        false
    }

    /// Unmaps it (`dev`: the device that mapped it).
    pub(crate) fn unmap(self, dev: &DmaDev) {
        if self.made_by(dev) {
            // SAFETY: made by `dev` (checked above).
            unsafe { self.unmap_attrs(dev, 0) };
        }
    }

    /// Unmaps it with DMA attributes `attrs`, as it was mapped (single or page).
    ///
    /// # Safety
    ///
    /// `dev` made it ([`Self::made_by`]).
    unsafe fn unmap_attrs(self, dev: &DmaDev, attrs: usize) {
        let (len, dir) = (self.len as usize, self.dir.raw());
        // SAFETY: a live mapping on `dev` (type invariant, and the function's requirement),
        // which `dev`'s invariant keeps valid; consumed here, so unmapped once.
        unsafe {
            if self.page {
                nb::dma_unmap_page_attrs(dev.raw().cast(), self.addr, len, dir, attrs)
            } else {
                nb::dma_unmap_single_attrs(dev.raw().cast(), self.addr, len, dir, attrs)
            }
        }
    }
}

/// Orders reads of coherent DMA memory (`dma_rmb`): a descriptor's other words are read
/// only after the word that says the device has written it.
pub(crate) fn dma_rmb() {
    // SAFETY: a barrier; no memory is accessed.
    unsafe { nb::atl1c_rs_dma_rmb() }
}
