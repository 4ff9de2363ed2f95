// SPDX-License-Identifier: GPL-2.0

//! Atheros AR8151 (atl1c family) and Mikrotik 10/25G Ethernet driver.
//!
//! C version of this driver: drivers/net/ethernet/atheros/atl1c/

use kernel::{
    device::Core,
    io::Io,
    pci,
    prelude::*,
    time::{
        delay,
        Delta, //
    }, //
};

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
use regs::Register;

type Bar0<'a> = pci::Bar<'a, { regs::BAR0_SIZE }>;

/// BAR0 as the hardware layer sees it.
struct Regs<'a>(&'a Bar0<'a>);

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
}

/// One bound atl1c-family device.
struct Atl1c<'bound> {
    bar: Bar0<'bound>,
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
        let io = Regs(&bar);
        let nic = hw::identify(&io, pdev.device_id());
        let rev = pdev.revision_id();
        if nic == NicType::Mt {
            let version = io.read::<regs::MT_VERSION>().raw();
            dev_info!(
                pdev,
                "{} (rev {:#x}, firmware {:#x}), {} queues\n",
                nic.name(),
                rev,
                version,
                nic.queues()
            );
        } else {
            dev_info!(
                pdev,
                "{} (rev {:#x}), {} queue\n",
                nic.name(),
                rev,
                nic.queues()
            );
        }

        Ok(Atl1c { bar, nic })
    }

    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        // Nothing is running yet; leave the device quiet: every interrupt masked.
        Regs(&this.bar).write(regs::IMR(0));
        dev_dbg!(pdev, "{} unbound\n", this.nic.name());
    }
}

kernel::module_pci_driver! {
    type: Atl1cDriver,
    name: "atl1c_rs",
    authors: ["atl1c_rs developers"],
    description: "Atheros AR8151 (atl1c) and Mikrotik 10/25G Ethernet driver",
    license: "GPL v2",
}
