// SPDX-License-Identifier: GPL-2.0

//! Atheros AR8151 (atl1c family) and Mikrotik 10/25G Ethernet driver.
//!
//! C version of this driver: drivers/net/ethernet/atheros/atl1c/

use core::cell::Cell;

use kernel::{
    device::Core,
    io::{
        poll,
        Io, //
    },
    pci,
    prelude::*,
    time::{
        delay,
        Delta, //
    }, //
};

// The driver proper, one file per path (tx, rx, irq, link, ethtool), all safe Rust.
mod adapter;
// The register map and descriptor layouts are complete by design, like atl1c_hw.h: not every
// register, field or descriptor helper has a user in the driver.
#[allow(dead_code, reason = "complete hardware description")]
mod hw;
mod netdev;
#[allow(dead_code, reason = "complete hardware description")]
mod regs;
#[allow(dead_code, reason = "complete hardware description")]
mod ring;

use hw::{
    NicType,
    RegIo, //
};
use netdev::{
    PciChannel,
    PciDeviceExt,
    PciErs, //
};
use regs::Register;

pub(crate) type Bar0<'a> = pci::Bar<'a, { regs::BAR0_SIZE }>;

/// BAR0 as the hardware layer sees it.
pub(crate) struct Regs<'a>(pub(crate) &'a Bar0<'a>);

/// Reads `R` and keeps it in `last`: what a poll that times out reports.
fn read_into<R: Register>(io: &Regs<'_>, last: &Cell<R>) -> R {
    let r = io.read::<R>();
    last.set(r);
    r
}

impl RegIo for Regs<'_> {
    fn read32(&self, offset: usize) -> u32 {
        // Offsets are register constants below `BAR0_SIZE`, the size the BAR is mapped with;
        // should one ever be out of range, read what a missing PCI device reads.
        self.0.try_read32(offset).unwrap_or(u32::MAX)
    }

    fn write32(&self, offset: usize, value: u32) {
        // Out-of-range offsets are dropped, like writes to a missing PCI device.
        let _ = self.0.try_write32(value, offset);
    }

    fn write16(&self, offset: usize, value: u16) {
        let _ = self.0.try_write16(value, offset);
    }

    fn udelay(&self, us: u32) {
        delay::udelay(Delta::from_micros(i64::from(us)));
    }

    fn msleep(&self, ms: u32) {
        delay::fsleep(Delta::from_millis(i64::from(ms)));
    }

    fn poll<R: Register>(
        &self,
        sleep_us: u32,
        timeout_us: u32,
        mut done: impl FnMut(R) -> bool,
    ) -> Result<R, R> {
        let last = Cell::new(R::from_raw(u32::MAX));
        poll::read_poll_timeout(
            || Ok(read_into(self, &last)),
            |&r| done(r),
            Delta::from_micros(i64::from(sleep_us)),
            Delta::from_micros(i64::from(timeout_us)),
        )
        .map_err(|_| last.get())
    }

    fn poll_atomic<R: Register>(
        &self,
        delay_us: u32,
        tries: u32,
        mut done: impl FnMut(R) -> bool,
    ) -> Result<R, R> {
        let last = Cell::new(R::from_raw(u32::MAX));
        poll::read_poll_timeout_atomic(
            || Ok(read_into(self, &last)),
            |&r| done(r),
            Delta::from_micros(i64::from(delay_us)),
            // CAST: u32 to usize is lossless on every target the kernel supports.
            tries as usize,
        )
        .map_err(|_| last.get())
    }
}

/// A MAC address as `xx:xx:xx:xx:xx:xx`.
struct MacFmt([u8; 6]);

impl kernel::fmt::Display for MacFmt {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

/// One bound atl1c-family device.
struct Atl1c<'bound> {
    net: netdev::NetDriver<adapter::Adapter<'bound>>,
    nic: NicType,
}

struct Atl1cDriver;

kernel::pci_device_table!(
    PCI_TABLE,
    MODULE_PCI_TABLE,
    <Atl1cDriver as pci::Driver>::IdInfo,
    [
        (
            pci::DeviceId::from_id(pci::Vendor::ATTANSIC, hw::device_id::L2C as u32),
            ()
        ),
        (
            pci::DeviceId::from_id(pci::Vendor::ATTANSIC, hw::device_id::L1C as u32),
            ()
        ),
        (
            pci::DeviceId::from_id(pci::Vendor::ATTANSIC, hw::device_id::L2C_B as u32),
            ()
        ),
        (
            pci::DeviceId::from_id(pci::Vendor::ATTANSIC, hw::device_id::L2C_B2 as u32),
            ()
        ),
        (
            pci::DeviceId::from_id(pci::Vendor::ATTANSIC, hw::device_id::L1D as u32),
            ()
        ),
        (
            pci::DeviceId::from_id(pci::Vendor::ATTANSIC, hw::device_id::L1D_2_0 as u32),
            ()
        ),
    ]
);

impl pci::Driver for Atl1cDriver {
    type IdInfo = ();
    type Data<'bound> = Atl1c<'bound>;

    const ID_TABLE: pci::IdTable<Self::IdInfo> = &PCI_TABLE;

    fn probe<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        _info: &'bound Self::IdInfo,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        pdev.enable_device_mem()?;
        netdev::set_dma_mask_32(pdev)?;
        pdev.set_master();

        let bar = pdev.iomap_region_sized::<{ regs::BAR0_SIZE }>(0, c"atl1c_rs")?;
        // Mikrotik detection reads MT_MAGIC before any MDIO access (hw::identify).
        let nic = hw::identify(&Regs(&bar), pdev.device_id());
        let rev = pdev.revision_id();
        let version = (nic == NicType::Mt).then(|| Regs(&bar).read::<regs::MT_VERSION>().raw());
        let adapter = adapter::Adapter::new(pdev, bar, nic, rev)?;
        let mac = adapter.probe_hw()?;
        if mac.is_none() {
            dev_warn!(
                pdev,
                "no valid MAC address in the chip, using a random one\n"
            );
        }
        let queues = adapter.max_queues();
        let cfg = netdev::NetDevConfig {
            // CAST: 1 or 4.
            queues: queues as u32,
            min_mtu: 60 - 14 - 4,
            max_mtu: adapter.max_mtu(),
            mac,
            features: adapter.features(),
            features_on: adapter.features_on(),
            // AT_TX_WATCHDOG: 5 s.
            watchdog_ms: 5000,
        };
        let net = netdev::NetDriver::new(pdev, adapter, cfg, c"atl1c_rs")?;
        match version {
            Some(v) => dev_info!(
                pdev,
                "{} (rev {:#x}, firmware {:#x}), {} queues, MAC {}\n",
                nic.name(),
                rev,
                v,
                queues,
                MacFmt(net.dev().mac())
            ),
            None => dev_info!(
                pdev,
                "{} (rev {:#x}), {} queue, MAC {}\n",
                nic.name(),
                rev,
                queues,
                MacFmt(net.dev().mac())
            ),
        }
        Ok(Atl1c { net, nic })
    }

    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        // Close and unregister the interface while its interrupts are still served, then
        // quiet the card; the line is freed when the data drops.
        this.net.unregister();
        this.net.data().release_card();
        this.net.data().quiesce();
        this.net.synchronize_irq();
        dev_dbg!(pdev, "{} unbound\n", this.nic.name());
    }
}

impl netdev::PciDriverExt for Atl1cDriver {
    fn suspend<'bound>(
        _pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) -> Result {
        let a = this.net.data();
        this.net.with_rtnl(|dev, running| a.suspend(dev, running));
        // No interrupt handler runs past this point on the sleeping card.
        this.net.synchronize_irq();
        Ok(())
    }

    fn resume<'bound>(
        _pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) -> Result {
        let a = this.net.data();
        this.net.with_rtnl(|dev, running| a.resume(dev, running))
    }

    fn shutdown<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        let _ = Self::suspend(pdev, this);
    }

    fn wake_armed(this: Pin<&Self::Data<'_>>) -> bool {
        this.net.data().wake_armed()
    }

    fn error_detected<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
        state: PciChannel,
    ) -> PciErs {
        let a = this.net.data();
        if state == PciChannel::PermFailure {
            // The device is about to be removed: the stack is kept out until then.
            this.net.with_rtnl(|dev, _| dev.detach());
            return PciErs::Disconnect;
        }
        // `atl1c_io_error_detected`: on a frozen link the card cannot be read or written.
        this.net
            .with_rtnl(|dev, running| a.take_offline(dev, running, state != PciChannel::Frozen));
        this.net.synchronize_irq();
        pdev.disable_device();
        PciErs::NeedReset
    }

    fn slot_reset<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) -> PciErs {
        // The reset cleared the configuration space (BAR, MSI) and the PCI core does not
        // restore it after an error reset: what it saved goes back first.
        pdev.restore_state();
        if pdev.enable_device_mem().is_err() {
            dev_err!(pdev.as_ref(), "cannot enable the device after the reset\n");
            return PciErs::Disconnect;
        }
        pdev.set_master();
        pdev.disable_wake();
        let a = this.net.data();
        if this.net.with_rtnl(|dev, _| a.io_slot_reset(dev)) {
            PciErs::Recovered
        } else {
            PciErs::Disconnect
        }
    }

    fn error_resume<'bound>(_pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        let a = this.net.data();
        this.net.with_rtnl(|dev, running| a.io_resume(dev, running));
    }
}

// `module_pci_driver!` with the registration that carries system sleep, shutdown and PCI error
// recovery.
kernel::module_driver!(<T>, netdev::PciAdapter<T>, {
    type: Atl1cDriver,
    name: "atl1c_rs",
    authors: ["atl1c_rs developers"],
    description: "Atheros AR8151 (atl1c) and Mikrotik 10/25G Ethernet driver",
    license: "GPL v2",
});
