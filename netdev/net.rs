// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers over `net_device`, its ops, NAPI, BQL tx queues, `sk_buff`, streaming DMA
//! mappings and the interrupt line.

use core::{
    ffi::c_void,
    fmt,
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    bindings as kb,
    device::Core,
    new_spinlock,
    pci,
    prelude::*,
    sync::SpinLock, //
};

use super::{
    bindings as nb,
    ethtool::{
        eopnotsupp,
        EthVtable,
        EthtoolOps,
        StatVtable, //
    },
};

/// The raw `struct device` of a PCI device, for DMA and parenting.
fn pci_raw<C: kernel::device::DeviceContext>(pdev: &pci::Device<C>) -> *mut kb::pci_dev {
    // CAST: `pci::Device` is `#[repr(transparent)]` over `Opaque<struct pci_dev>`.
    core::ptr::from_ref(pdev).cast_mut().cast()
}

/// The PCIe Max_Read_Request_Size of `pdev`, in bytes (`pcie_get_readrq`).
pub(crate) fn pcie_readrq(pdev: &pci::Device<Core<'_>>) -> Result<u32> {
    // SAFETY: `pdev` is a valid, bound PCI device (a `Device<Core>` exists only in its bus
    // callbacks); reading its PCIe capability has no other requirement.
    let v = unsafe { kb::pcie_get_readrq(pci_raw(pdev)) };
    u32::try_from(v).map_err(|_| Error::from_errno(v))
}

/// Sets the PCIe Max_Read_Request_Size of `pdev` to `bytes` (128 to 4096, a power of two;
/// `pcie_set_readrq`).
pub(crate) fn set_pcie_readrq(pdev: &pci::Device<Core<'_>>, bytes: u32) -> Result {
    let rq = i32::try_from(bytes).map_err(|_| EINVAL)?;
    // SAFETY: as in `pcie_readrq`; the core checks the value and the bus's limits.
    kernel::error::to_result(unsafe { kb::pcie_set_readrq(pci_raw(pdev), rq) })
}

/// The `struct device` embedded in the PCI device.
pub(crate) struct DmaDev(NonNull<kb::device>);

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

    fn raw(&self) -> *mut kb::device {
        self.0.as_ptr()
    }
}

/// A bus address the device may DMA to or from.
pub(crate) type DmaAddr = u64;

/// Direction of a streaming mapping.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dir {
    /// CPU to device (tx).
    ToDevice,
    /// Device to CPU (rx).
    FromDevice,
}

impl Dir {
    fn raw(self) -> kb::dma_data_direction {
        match self {
            Dir::ToDevice => kb::dma_data_direction_DMA_TO_DEVICE,
            Dir::FromDevice => kb::dma_data_direction_DMA_FROM_DEVICE,
        }
    }
}

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
    unsafe fn from_raw(skb: *mut kb::sk_buff) -> Option<Self> {
        // INVARIANT: the caller passes ownership of a valid skb.
        NonNull::new(skb).map(Self)
    }

    fn raw(&self) -> *mut kb::sk_buff {
        self.0.as_ptr()
    }

    /// Allocates an rx skb of `len` bytes for `napi` (or the netdev outside NAPI).
    pub(crate) fn alloc_rx(dev: &NetDev, napi: Option<&Napi>, len: u32) -> Option<Self> {
        let skb = match napi {
            // SAFETY: `napi` is a registered NAPI instance of `dev`.
            Some(n) => unsafe { nb::napi_alloc_skb(n.raw(), len) },
            // SAFETY: `dev` is a valid registered net_device (type invariant of `NetDev`).
            None => unsafe { nb::netdev_alloc_skb(dev.raw(), len) },
        };
        // SAFETY: a fresh skb, owned by us.
        unsafe { Self::from_raw(skb) }
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
        // SAFETY: valid skb.
        let room = unsafe { nb::atl1c_rs_skb_linear_room(self.raw()) };
        if len == 0 || off.checked_add(len).is_none_or(|end| end > room) {
            return Err(EINVAL);
        }
        // SAFETY: valid skb.
        let data = unsafe { nb::atl1c_rs_skb_data(self.raw()) }.cast::<u8>();
        // SAFETY: `off + len <= room` (checked above): `data + off` and the `len` bytes after
        // it lie inside the skb's linear buffer.
        let ptr = unsafe { data.add(off as usize) };
        // SAFETY: `dev` is a valid device (invariant of `DmaDev`), `ptr`/`len` a kernel buffer.
        let addr = unsafe {
            nb::dma_map_single_attrs(dev.raw().cast(), ptr.cast(), len as usize, dir.raw(), 0)
        };
        // SAFETY: `addr` came from the mapping call on the same device.
        if unsafe { nb::dma_mapping_error(dev.raw().cast(), addr) } != 0 {
            return Err(ENOMEM);
        }
        // INVARIANT: a live single mapping of `len` bytes on `dev`, just made.
        Ok(DmaMap {
            dev: dev.0,
            addr,
            len,
            dir,
            page: false,
        })
    }

    /// Maps page fragment `i` for DMA to the device.
    pub(crate) fn map_frag(&self, dev: &DmaDev, i: u32) -> Result<DmaMap> {
        let mut size = 0u32;
        if i >= self.info().nr_frags {
            return Err(EINVAL);
        }
        // SAFETY: valid skb and `i < nr_frags`.
        unsafe { nb::atl1c_rs_skb_frag(self.raw(), i, &mut size) };
        // SAFETY: valid device and skb, `i < nr_frags`.
        let addr = unsafe { nb::atl1c_rs_skb_frag_map(dev.raw().cast(), self.raw(), i) };
        // SAFETY: `addr` came from the mapping call on the same device.
        if unsafe { nb::dma_mapping_error(dev.raw().cast(), addr) } != 0 {
            return Err(ENOMEM);
        }
        // INVARIANT: a live page mapping of the fragment's `size` bytes on `dev`, just made
        // (`skb_frag_dma_map` maps to the device).
        Ok(DmaMap {
            dev: dev.0,
            addr,
            len: size,
            dir: Dir::ToDevice,
            page: true,
        })
    }

    /// Appends `len` bytes the device wrote to the tail (`skb_put`); `EINVAL` where they do
    /// not fit the tailroom (which `skb_put` would answer with a BUG).
    pub(crate) fn put(&mut self, len: u32) -> Result {
        // SAFETY: valid skb.
        let room = unsafe { nb::skb_tailroom(self.raw()) };
        if u32::try_from(room).map_or(true, |room| len > room) {
            return Err(EINVAL);
        }
        // SAFETY: valid skb with `len` bytes of tailroom (checked above).
        unsafe { kb::skb_put(self.raw(), len) };
        Ok(())
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
    pub(crate) fn gro_receive(self, dev: &NetDev, napi: &Napi, queue: u16) {
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

    /// Hands a received buffer to the CPU: syncs only the `used` bytes the device wrote (at
    /// most the mapped length), then unmaps without another sync.
    pub(crate) fn unmap_rx(self, dev: &DmaDev, used: u32) {
        if !self.made_by(dev) {
            return;
        }
        // SAFETY: a live mapping on `dev` (type invariant, and checked above), which `dev`'s
        // invariant keeps valid; the sync covers `used.min(len)` bytes from the start of the
        // mapping, in its direction.
        unsafe {
            nb::dma_sync_single_for_cpu(
                dev.raw().cast(),
                self.addr,
                used.min(self.len) as usize,
                self.dir.raw(),
            );
            self.unmap_attrs(dev, kb::DMA_ATTR_SKIP_CPU_SYNC as usize);
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

/// A registered `net_device`, borrowed.
///
/// # Invariants
///
/// The pointer is a registered net_device, valid for the lifetime of the `Registration` it
/// came from (every `NetDev` is created from one and used inside its callbacks).
#[derive(Clone, Copy)]
pub(crate) struct NetDev(NonNull<nb::net_device>);

/// A kernel log level for [`NetDev::printk`].
#[derive(Clone, Copy)]
pub(crate) enum Level {
    Err,
    Warn,
    Info,
}

/// The `NETIF_F_*` features a driver offers, as bits of `netdev_features_t`.
pub(crate) mod features {
    use super::nb;

    pub(crate) const SG: u64 = 1 << nb::NETIF_F_SG_BIT;
    pub(crate) const HW_CSUM: u64 = 1 << nb::NETIF_F_HW_CSUM_BIT;
    pub(crate) const TSO: u64 = 1 << nb::NETIF_F_TSO_BIT;
    pub(crate) const TSO6: u64 = 1 << nb::NETIF_F_TSO6_BIT;
    pub(crate) const RXCSUM: u64 = 1 << nb::NETIF_F_RXCSUM_BIT;
    pub(crate) const HW_VLAN_CTAG_RX: u64 = 1 << nb::NETIF_F_HW_VLAN_CTAG_RX_BIT;
    pub(crate) const HW_VLAN_CTAG_TX: u64 = 1 << nb::NETIF_F_HW_VLAN_CTAG_TX_BIT;
}

/// The `NETIF_MSG_*` classes of `msg_enable` (`ethtool -s DEV msglvl`), as bits.
pub(crate) mod msg {
    use super::nb;

    pub(crate) const DRV: u32 = 1 << nb::NETIF_MSG_DRV_BIT;
    pub(crate) const PROBE: u32 = 1 << nb::NETIF_MSG_PROBE_BIT;
    pub(crate) const LINK: u32 = 1 << nb::NETIF_MSG_LINK_BIT;
    pub(crate) const TX_ERR: u32 = 1 << nb::NETIF_MSG_TX_ERR_BIT;
    pub(crate) const HW: u32 = 1 << nb::NETIF_MSG_HW_BIT;
}

impl NetDev {
    fn raw(&self) -> *mut nb::net_device {
        self.0.as_ptr()
    }

    /// Logs `args` at `level` with the driver, bus device and interface name in front
    /// (`netdev_printk`, as netdev_err/netdev_warn/netdev_info); see [`netdev_info!`].
    pub(crate) fn printk(&self, level: Level, args: fmt::Arguments<'_>) {
        let klevel: &[u8] = match level {
            Level::Err => kb::KERN_ERR,
            Level::Warn => kb::KERN_WARNING,
            Level::Info => kb::KERN_INFO,
        };
        // SAFETY: valid net_device (type invariant); `klevel` is one of the kernel's
        // NUL-terminated `KERN_*` strings; the "%pA" format takes a pointer to
        // `fmt::Arguments`, which the last argument is, alive for the whole call.
        unsafe {
            nb::netdev_printk(
                klevel.as_ptr().cast(),
                self.raw(),
                c"%pA".as_char_ptr(),
                core::ptr::from_ref(&args).cast::<c_void>(),
            )
        };
    }

    /// Carrier on.
    pub(crate) fn carrier_on(&self) {
        // SAFETY: valid net_device (type invariant).
        unsafe { nb::netif_carrier_on(self.raw()) }
    }

    /// Carrier off.
    pub(crate) fn carrier_off(&self) {
        // SAFETY: valid net_device.
        unsafe { nb::netif_carrier_off(self.raw()) }
    }

    /// Whether the carrier is on.
    pub(crate) fn carrier_ok(&self) -> bool {
        // SAFETY: valid net_device.
        unsafe { nb::netif_carrier_ok(self.raw()) }
    }

    /// Starts every tx queue and reschedules its qdisc (`netif_tx_wake_all_queues`): after a
    /// reconfiguration (ring sizes, channels, MTU, reset) the qdisc may hold a backlog that
    /// only a wake sends (drivers/net/ring_reconfig.py's reconfig_tx_stall).
    pub(crate) fn wake_queues(&self) {
        // SAFETY: valid net_device.
        unsafe { nb::netif_tx_wake_all_queues(self.raw()) }
    }

    /// Stops every tx queue and waits for a transmit in progress on another CPU
    /// (`netif_tx_disable`): afterwards no `start_xmit` runs until the queues are started.
    /// Process context.
    pub(crate) fn tx_disable(&self) {
        // SAFETY: valid net_device; takes each tx queue's lock with softirqs off.
        unsafe { nb::netif_tx_disable(self.raw()) }
    }

    /// Marks the device absent for the stack (`netif_device_detach`): its tx queues stop and
    /// `ip link set up` fails with ENODEV until [`NetDev::attach`].
    pub(crate) fn detach(&self) {
        // SAFETY: valid net_device.
        unsafe { nb::netif_device_detach(self.raw()) }
    }

    /// Marks the device present again (`netif_device_attach`); a running device's queues
    /// wake.
    pub(crate) fn attach(&self) {
        // SAFETY: valid net_device.
        unsafe { nb::netif_device_attach(self.raw()) }
    }

    /// Whether the device is present (not detached).
    pub(crate) fn present(&self) -> bool {
        // SAFETY: valid net_device; reads its state bits.
        unsafe { nb::netif_device_present(self.raw()) }
    }

    /// The tx queue `i`; `None` beyond the device's queues.
    pub(crate) fn txq(&self, i: u32) -> Option<TxQueue> {
        // SAFETY: valid net_device; reading a plain field.
        let n = unsafe { (*self.raw()).num_tx_queues };
        if i >= n {
            return None;
        }
        // SAFETY: `i` is below num_tx_queues.
        let q = unsafe { nb::netdev_get_tx_queue(self.raw(), i) };
        // INVARIANT: a queue of a valid net_device.
        NonNull::new(q).map(TxQueue)
    }

    /// Current MTU.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: valid net_device; plain field read.
        unsafe { (*self.raw()).mtu }
    }

    /// Sets the MTU (from `ndo_change_mtu`, under RTNL).
    pub(crate) fn set_mtu(&self, mtu: u32) {
        // SAFETY: valid net_device; the core calls ndo_change_mtu under RTNL and expects the
        // driver to store the new value.
        unsafe { nb::atl1c_rs_set_mtu(self.raw(), mtu) }
    }

    /// Uses `n` tx and rx queues (under RTNL, `n` at most the allocated queues).
    pub(crate) fn set_real_num_queues(&self, n: u32) -> Result {
        // SAFETY: valid net_device; the callers hold RTNL (ndo/ethtool callbacks, probe).
        let err = unsafe { nb::netif_set_real_num_tx_queues(self.raw(), n) };
        if err != 0 {
            return Err(Error::from_errno(err));
        }
        // SAFETY: as above.
        let err = unsafe { nb::netif_set_real_num_rx_queues(self.raw(), n) };
        if err != 0 {
            return Err(Error::from_errno(err));
        }
        Ok(())
    }

    /// Re-evaluates the features (`netdev_update_features`, after an MTU change); under RTNL.
    pub(crate) fn update_features(&self) {
        // SAFETY: valid net_device; the callers hold RTNL.
        unsafe { nb::netdev_update_features(self.raw()) }
    }

    /// The current station address.
    pub(crate) fn mac(&self) -> [u8; 6] {
        let mut m = [0u8; 6];
        // SAFETY: valid net_device; `dev_addr` holds at least ETH_ALEN bytes once set.
        let a = unsafe { (*self.raw()).dev_addr };
        if !a.is_null() {
            // SAFETY: `a` points to `addr_len` (6 for Ethernet) bytes.
            unsafe { core::ptr::copy_nonoverlapping(a, m.as_mut_ptr(), 6) };
        }
        m
    }

    /// (promiscuous, all-multicast) from the interface flags.
    pub(crate) fn rx_flags(&self) -> (bool, bool) {
        // SAFETY: valid net_device.
        let f = unsafe { nb::atl1c_rs_rx_flags(self.raw()) };
        (f & 1 != 0, f & 2 != 0)
    }

    /// Copies the multicast list into `out`; `None` when it does not fit.
    pub(crate) fn mc_list(&self, out: &mut [[u8; 6]]) -> Option<usize> {
        // CAST: the slice length is small (the caller's fixed array).
        let max = out.len() as i32;
        // SAFETY: valid net_device (called under the address list lock by ndo_set_rx_mode);
        // `out` holds `max` addresses.
        let n = unsafe { nb::atl1c_rs_mc_list(self.raw(), out.as_mut_ptr().cast(), max) };
        usize::try_from(n).ok()
    }
}

/// A tx queue of a registered net_device, for BQL and flow control.
///
/// # Invariants
///
/// A queue of a registered net_device (see [`NetDev`]).
#[derive(Clone, Copy)]
pub(crate) struct TxQueue(NonNull<nb::netdev_queue>);

/// The free-descriptor callback the BQL stop/wake macros evaluate.
pub(crate) trait TxAvail {
    /// Descriptors free now.
    fn avail(&self) -> u32;
}

/// `get_desc` of the BQL stop/wake macros.
///
/// # Safety
///
/// `ctx` must point to a live `A` for the duration of the call.
unsafe extern "C" fn avail_cb<A: TxAvail>(ctx: *const c_void) -> u32 {
    // SAFETY: `ctx` is the `&A` passed by `maybe_stop`/`completed_wake` for this call only.
    unsafe { &*ctx.cast::<A>() }.avail()
}

impl TxQueue {
    fn raw(&self) -> *mut nb::netdev_queue {
        self.0.as_ptr()
    }

    /// `__netdev_tx_sent_queue`: accounts `bytes` in BQL; true when the doorbell must be rung
    /// now (no more frames are coming, or the queue was stopped).
    pub(crate) fn sent(&self, bytes: u32, more: bool) -> bool {
        // SAFETY: valid queue (type invariant).
        unsafe { nb::__netdev_tx_sent_queue(self.raw(), bytes, more) }
    }

    /// `netif_txq_maybe_stop`: stops the queue when fewer than `stop` descriptors are free,
    /// and restarts it at once if a completion freed `start` in the meantime.
    pub(crate) fn maybe_stop<A: TxAvail>(&self, a: &A, stop: u32, start: u32) -> bool {
        // SAFETY: valid queue; the callback and its context live for the call.
        unsafe {
            nb::atl1c_rs_txq_maybe_stop(
                self.raw(),
                Some(avail_cb::<A>),
                core::ptr::from_ref(a).cast(),
                stop,
                start,
            ) != 0
        }
    }

    /// `netif_txq_completed_wake`: reports completions to BQL and wakes the queue when
    /// `start` descriptors are free (not while the carrier is off).
    pub(crate) fn completed_wake<A: TxAvail>(&self, pkts: u32, bytes: u32, a: &A, start: u32) {
        // SAFETY: valid queue; the callback and its context live for the call.
        unsafe {
            nb::atl1c_rs_txq_completed_wake(
                self.raw(),
                pkts,
                bytes,
                Some(avail_cb::<A>),
                core::ptr::from_ref(a).cast(),
                start,
            )
        };
    }

    /// Resets BQL state (ring reset).
    pub(crate) fn reset(&self) {
        // SAFETY: valid queue.
        unsafe { nb::netdev_tx_reset_queue(self.raw()) }
    }
}

/// A NAPI instance embedded in the net_device's private area.
///
/// # Invariants
///
/// Points to an initialised `napi_struct` inside the private area of a registered
/// net_device (see [`Registration`]).
#[derive(Clone, Copy)]
pub(crate) struct Napi(NonNull<nb::napi_struct>);

impl Napi {
    fn raw(&self) -> *mut nb::napi_struct {
        self.0.as_ptr()
    }

    /// `napi_complete_done`; true if the caller may re-enable the interrupt.
    pub(crate) fn complete_done(&self, work: i32) -> bool {
        // SAFETY: valid NAPI (type invariant), called from its poll function.
        unsafe { nb::napi_complete_done(self.raw(), work) }
    }

    /// `napi_schedule`.
    pub(crate) fn schedule(&self) {
        // SAFETY: valid NAPI.
        let _ = unsafe { nb::napi_schedule(self.raw()) };
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
    fn with_dim<R>(&self, wait: bool, f: impl FnOnce(*mut nb::dim) -> R) -> Option<R> {
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
    unsafe fn fill(&self, p: *mut Priv) {
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
    /// `i`), tx ones without (they have no NAPI id), each with the interrupt line.
    ///
    /// # Safety
    ///
    /// `priv_` is set, `i < 2 * queues`, instance `i` is not added; process context, RTNL held
    /// or the net_device not registered yet.
    unsafe fn add(&self, i: usize) {
        use core::sync::atomic::Ordering;
        let p = self.priv_.load(Ordering::Acquire);
        let Some(slot) = self.napi.get(i) else {
            return;
        };
        // SAFETY: `p` is our private area (type invariant); `i` is within the NAPI array (the
        // function's safety requirement, and `slot` exists), the instance not added. The
        // config index `i` of an rx instance is below `queues`, the net_device's queue count,
        // which is the size of its `napi_config` array.
        unsafe {
            let raw = (*p).dev;
            let n = (&raw mut (*p).napi).cast::<nb::napi_struct>().add(i);
            if i < (*p).queues {
                // CAST: below MAX_NAPI.
                nb::netif_napi_add_config(raw, n, (*p).poll, i as i32);
            } else {
                nb::netif_napi_add_tx_weight(raw, n, (*p).poll, 64);
            }
            if (*p).irq >= 0 {
                nb::netif_napi_set_irq(n, (*p).irq);
            }
            // INVARIANT: instance `i` is added.
            slot.store(n, Ordering::Release);
        }
    }

    /// Keeps the NAPI instances of queues `0..n` added and removes the others (rx and tx
    /// alike): `n` queues in `ndo_open`, 0 in `ndo_stop`. Added instances start disabled.
    /// `EBUSY` if an instance to remove is still enabled, `EINVAL` for more queues than the
    /// device has. Process context, RTNL held.
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
                unsafe { self.add(i) };
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
        let Some(n) = self.get(i) else {
            return;
        };
        if self.enabled.fetch_or(1 << i, Ordering::AcqRel) & (1 << i) == 0 {
            // SAFETY: an added, disabled instance (type invariant); process context.
            unsafe { nb::napi_enable(n.raw()) }
        }
    }

    /// Disables instance `i` (`napi_disable`: waits for a running poll) unless it is not
    /// enabled. Process context, RTNL held.
    pub(crate) fn disable(&self, i: usize) {
        use core::sync::atomic::Ordering;
        let Some(n) = self.get(i) else {
            return;
        };
        if self.enabled.fetch_and(!(1 << i), Ordering::AcqRel) & (1 << i) != 0 {
            // SAFETY: an added, enabled instance (type invariant); process context.
            unsafe { nb::napi_disable(n.raw()) }
        }
    }

    /// Removes every instance and forgets every pointer (before the net_device is freed).
    ///
    /// # Safety
    ///
    /// The net_device is unregistered (every instance disabled); process context.
    unsafe fn clear(&self) {
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
    pub(crate) fn get(&self, i: usize) -> Option<Napi> {
        let p = self
            .napi
            .get(i)?
            .load(core::sync::atomic::Ordering::Acquire);
        // INVARIANT: see the type invariant.
        NonNull::new(p).map(Napi)
    }
}

/// The private area of our net_devices.
#[repr(C)]
struct Priv {
    driver: *const c_void,
    dev: *mut nb::net_device,
    napi: [nb::napi_struct; MAX_NAPI],
    /// The NAPI poll trampoline, for instances added after registration.
    poll: Option<unsafe extern "C" fn(*mut nb::napi_struct, i32) -> i32>,
    /// The interrupt line the NAPI instances report, or -1.
    irq: i32,
    /// Queue pairs: rx NAPI instances `0..queues`, tx ones `queues..2 * queues`.
    queues: usize,
    /// The driver's process-context task (link changes, resets), run under RTNL.
    task: kb::work_struct,
    /// Adaptive rx moderation state; its work item applies a new profile.
    dim: nb::dim,
}

/// The DIM profile adaptive moderation starts from (`NET_DIM_DEF_PROFILE_EQE`'s index).
const DIM_DEFAULT_PROFILE: u8 = 1;

/// 64-bit interface statistics (`struct rtnl_link_stats64`).
pub(crate) type Stats64 = nb::rtnl_link_stats64;

/// What the driver implements for its net_device (`struct net_device_ops` plus NAPI poll).
pub(crate) trait NetDevOps: Sync {
    /// `ndo_open`.
    fn open(&self, dev: NetDev) -> Result;
    /// `ndo_stop`.
    fn stop(&self, dev: NetDev);
    /// `ndo_start_xmit`: the skb is always consumed (sent, or dropped with a reason).
    fn start_xmit(&self, dev: NetDev, skb: SkBuff, more: bool);
    /// `ndo_get_stats64`.
    fn get_stats64(&self, dev: NetDev, stats: &mut Stats64);
    /// `ndo_set_rx_mode`.
    fn set_rx_mode(&self, dev: NetDev);
    /// `ndo_set_mac_address` after the core validated and stored the address; also while the
    /// interface runs (the device is registered with `IFF_LIVE_ADDR_CHANGE`).
    fn set_mac(&self, dev: NetDev, mac: [u8; 6]);
    /// `ndo_change_mtu`.
    fn change_mtu(&self, dev: NetDev, mtu: u32) -> Result;
    /// `ndo_tx_timeout`.
    fn tx_timeout(&self, dev: NetDev, queue: u32);
    /// NAPI poll of instance `index`.
    fn poll(&self, dev: NetDev, napi: Napi, index: usize, budget: i32) -> i32;
    /// Where the interrupt handler finds the NAPI instances.
    fn napi_set(&self) -> &NapiSet;
    /// The largest GSO segment size the hardware can cut (`ndo_features_check`): a GSO skb
    /// with a larger `gso_size` is segmented by the stack, never handed to the driver.
    const MAX_GSO_SIZE: u32;
    /// `ndo_fix_features`: drops what the current configuration cannot offer.
    fn fix_features(&self, dev: NetDev, features: u64) -> u64;
    /// `ndo_set_features`: `features` (already fixed) become active.
    fn set_features(&self, dev: NetDev, features: u64) -> Result;
    /// MII register `reg` of the PHY (`SIOCGMIIREG`, mii-tool); called under RTNL while the
    /// interface runs. `EOPNOTSUPP` where the card has no MDIO PHY.
    fn mii_read(&self, _dev: NetDev, _reg: u16) -> Result<u16> {
        Err(eopnotsupp())
    }
    /// Writes MII register `reg` of the PHY (`SIOCSMIIREG`); as [`Self::mii_read`].
    fn mii_write(&self, _dev: NetDev, _reg: u16, _val: u16) -> Result {
        Err(eopnotsupp())
    }
    /// Process-context work queued with [`NapiSet::schedule_task`]; runs under RTNL, only
    /// while the interface is running.
    fn task(&self, dev: NetDev);
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
    pub(super) unsafe fn driver<'a>(dev: *mut nb::net_device) -> (&'a T, NetDev) {
        // SAFETY: a registered net_device (the function's requirement) is not null.
        let nd = unsafe { NonNull::new_unchecked(dev) };
        // SAFETY: the device was created by `Registration<T>`, so its private area is our
        // `Priv`, initialised before registration and not written while registered.
        let p = unsafe { &*nb::netdev_priv(nd.as_ptr()).cast::<Priv>() };
        // SAFETY: `Priv::driver` points to the `T` of that registration, which outlives the
        // registration, and so the callback (the function's requirement).
        let t = unsafe { &*p.driver.cast::<T>() };
        // INVARIANT: a registered net_device, used within its callback.
        (t, NetDev(nd))
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
        // SAFETY: valid net_device.
        if !unsafe { nb::netif_running(dev) } {
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
    unsafe extern "C" fn poll(napi: *mut nb::napi_struct, budget: i32) -> i32 {
        // SAFETY: our NAPI instances live in `Priv.napi` of a registered device.
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
        // INVARIANT: an initialised NAPI of a registered device.
        let n = Napi(NonNull::new(napi).unwrap_or(NonNull::dangling()));
        t.poll(d, n, index, budget)
    }

    /// Work trampoline: the driver's task under RTNL.
    ///
    /// # Safety
    ///
    /// `work` must be the `task` member of the private area of a net_device created by
    /// `Registration<T>` that has not been freed (the registration cancels the work first).
    unsafe extern "C" fn task(work: *mut kb::work_struct) {
        // SAFETY: `work` is `Priv::task` (function safety requirement): step back to `Priv`.
        let p = unsafe { work.byte_sub(core::mem::offset_of!(Priv, task)) }.cast::<Priv>();
        // SAFETY: `Priv::dev` was set at allocation.
        let dev = unsafe { (*p).dev };
        // SAFETY: RTNL serialises us with open/stop/unregister.
        unsafe { nb::atl1c_rs_rtnl_lock() };
        // SAFETY: a valid net_device (not freed: see above).
        if unsafe { nb::netif_running(dev) } {
            // SAFETY: registered device of ours, under RTNL.
            let (t, d) = unsafe { Self::driver(dev) };
            t.task(d);
        }
        // SAFETY: taken above.
        unsafe { nb::atl1c_rs_rtnl_unlock() };
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

    const OPS: nb::net_device_ops = {
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
    dev: NetDev,
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
            dev: NetDev(dev),
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
            unsafe { nb::unregister_netdev(self.dev.raw()) };
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

    /// The net_device.
    pub(crate) fn dev(&self) -> NetDev {
        self.dev
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
        let raw = self.dev.raw();
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
/// # Invariants
///
/// `irq` was requested with `cookie` pointing to a `T` that outlives this value; dropping
/// frees it (waiting for a running handler).
pub(crate) struct Irq<T: IrqHandler> {
    irq: u32,
    cookie: *const T,
    pdev: *mut kb::pci_dev,
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
        let raw = pci_raw(pdev);
        // SAFETY: valid pci_dev; one vector of MSI or INTx, freed with the device (devres
        // in pci_alloc_irq_vectors' managed mode is not used: freed in Drop).
        let n = unsafe { kb::pci_alloc_irq_vectors(raw, 1, 1, kb::PCI_IRQ_MSI | kb::PCI_IRQ_INTX) };
        if n < 0 {
            return Err(Error::from_errno(n));
        }
        // SAFETY: vector 0 exists now.
        let irq = unsafe { kb::pci_irq_vector(raw, 0) };
        let Ok(irq) = u32::try_from(irq) else {
            // SAFETY: allocated above.
            unsafe { kb::pci_free_irq_vectors(raw) };
            return Err(Error::from_errno(irq));
        };
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
            // SAFETY: allocated above.
            unsafe { kb::pci_free_irq_vectors(raw) };
            return Err(Error::from_errno(err));
        }
        // INVARIANT: requested with `cookie`.
        Ok(Self {
            irq,
            cookie,
            pdev: raw,
        })
    }

    /// Waits for a running handler to finish.
    pub(crate) fn synchronize(&self) {
        // SAFETY: a requested line.
        unsafe { kb::synchronize_irq(self.irq) }
    }
}

impl<T: IrqHandler> Drop for Irq<T> {
    fn drop(&mut self) {
        // SAFETY: requested with this cookie (type invariant); free_irq waits for handlers;
        // then the vectors allocated in `request` are released.
        unsafe {
            kb::free_irq(self.irq, self.cookie.cast_mut().cast());
            kb::pci_free_irq_vectors(self.pdev);
        }
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
    pub(crate) fn dev(&self) -> NetDev {
        self.reg.dev()
    }

    /// Waits for a running interrupt handler.
    pub(crate) fn synchronize_irq(&self) {
        self.irq.synchronize();
    }
}

impl<T: EthtoolOps + IrqHandler> Drop for NetDriver<T> {
    fn drop(&mut self) {
        // Then the fields in order: `irq` (freed), `reg` (work cancelled, net_device freed),
        // `data`.
        self.reg.unregister();
    }
}

/// Orders reads of coherent DMA memory (`dma_rmb`): a descriptor's other words are read
/// only after the word that says the device has written it.
pub(crate) fn dma_rmb() {
    // SAFETY: a barrier; no memory is accessed.
    unsafe { nb::atl1c_rs_dma_rmb() }
}

/// Runs `f` with softirqs disabled on this CPU, so that locks shared with NAPI and the xmit
/// path can be taken from process context (`local_bh_disable`). `f` must not sleep.
pub(crate) fn bh_disabled<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: paired with the enable below; no other precondition.
    unsafe { nb::atl1c_rs_bh_disable() };
    let r = f();
    // SAFETY: paired with the disable above, on the same CPU (no sleeping in between).
    unsafe { nb::atl1c_rs_bh_enable() };
    r
}
