// SPDX-License-Identifier: GPL-2.0

//! Hardware logic over a register-access trait: chip identification now, MAC/PHY bring-up next.
//!
//! Nothing here touches the kernel: [`RegIo`] is implemented by the driver over the mapped BAR
//! and by the host tests over the device model, so the same sequences run in both.
//!
//! This file uses only `core`.

use crate::regs::{Register, MT_MAGIC, MT_MAGIC_REG};

/// 32-bit and 16-bit access to BAR0.
pub(crate) trait RegIo {
    /// Reads the 32-bit register at `offset`.
    fn read32(&self, offset: usize) -> u32;
    /// Writes the 32-bit register at `offset`.
    fn write32(&self, offset: usize, value: u32);
    /// Writes the 16-bit register at `offset` (the tx producer indices).
    fn write16(&self, offset: usize, value: u16);

    /// Reads a typed register.
    fn read<R: Register>(&self) -> R {
        R::from_raw(self.read32(R::OFFSET))
    }

    /// Writes a typed register.
    fn write<R: Register>(&self, r: R) {
        self.write32(R::OFFSET, r.raw());
    }
}

/// Atheros vendor id.
pub(crate) const VENDOR_ATHEROS: u16 = 0x1969;

/// PCI device ids of the family (`atl1c_hw.h`).
pub(crate) mod device_id {
    /// L2C (Attansic).
    pub(crate) const L2C: u16 = 0x1062;
    /// L1C (Attansic).
    pub(crate) const L1C: u16 = 0x1063;
    /// AR8152 v1.1 Fast Ethernet.
    pub(crate) const L2C_B: u16 = 0x2060;
    /// AR8152 v2.0 Fast Ethernet.
    pub(crate) const L2C_B2: u16 = 0x2062;
    /// AR8151 v1.0 Gigabit.
    pub(crate) const L1D: u16 = 0x1073;
    /// AR8151 v2.0 Gigabit; also the Mikrotik 10/25G NIC.
    pub(crate) const L1D_2_0: u16 = 0x1083;
}

/// Chip type (`enum atl1c_nic_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NicType {
    /// L1C gigabit.
    L1c,
    /// L2C fast ethernet.
    L2c,
    /// AR8152 v1.1.
    L2cB,
    /// AR8152 v2.0.
    L2cB2,
    /// AR8151 v1.0.
    L1d,
    /// AR8151 v2.0.
    L1d2,
    /// Mikrotik 10/25G.
    Mt,
}

impl NicType {
    /// Human-readable chip name, for the probe message.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::L1c => "L1C",
            Self::L2c => "L2C",
            Self::L2cB => "AR8152 v1.1",
            Self::L2cB2 => "AR8152 v2.0",
            Self::L1d => "AR8151 v1.0",
            Self::L1d2 => "AR8151 v2.0",
            Self::Mt => "Mikrotik 10/25G",
        }
    }

    /// Number of tx/rx queue pairs the driver uses (4 on the Mikrotik NIC, as in the C driver).
    pub(crate) const fn queues(self) -> usize {
        match self {
            Self::Mt => 4,
            _ => 1,
        }
    }

    /// Whether the chip has a gigabit PHY (`ATL1C_LINK_CAP_1000M`).
    pub(crate) const fn gigabit(self) -> bool {
        matches!(self, Self::L1c | Self::L1d | Self::L1d2)
    }

    /// Whether link state comes from `MT_SPEED` instead of an MDIO PHY.
    pub(crate) const fn has_mdio_phy(self) -> bool {
        !matches!(self, Self::Mt)
    }
}

/// Identifies the chip from its PCI device id (`atl1c_get_mac_type`).
///
/// Device 0x1083 is shared by the AR8151 v2.0 and the Mikrotik NIC; only the Mikrotik NIC reads
/// [`MT_MAGIC`] at `MT_MAGIC_REG`. This is read before any MDIO access, since the Mikrotik NIC
/// has no PHY behind MDIO. Unknown ids fall back to L1C, as in the C driver.
pub(crate) fn identify(io: &impl RegIo, device: u16) -> NicType {
    match device {
        device_id::L2C => NicType::L2c,
        device_id::L1C => NicType::L1c,
        device_id::L2C_B => NicType::L2cB,
        device_id::L2C_B2 => NicType::L2cB2,
        device_id::L1D => NicType::L1d,
        device_id::L1D_2_0 => {
            if io.read::<MT_MAGIC_REG>().raw() == MT_MAGIC {
                NicType::Mt
            } else {
                NicType::L1d2
            }
        }
        _ => NicType::L1c,
    }
}

#[cfg(any(test, CONFIG_KUNIT))]
#[cfg_attr(not(test), kernel::prelude::kunit_tests(atl1c_rs_hw))]
mod tests {
    use super::*;
    use core::cell::Cell;

    /// A register file that answers `MT_MAGIC_REG` and counts reads.
    struct Magic {
        magic: u32,
        reads: Cell<u32>,
    }

    impl RegIo for Magic {
        fn read32(&self, offset: usize) -> u32 {
            self.reads.set(self.reads.get() + 1);
            if offset == MT_MAGIC_REG::OFFSET {
                self.magic
            } else {
                0
            }
        }
        fn write32(&self, _offset: usize, _value: u32) {}
        fn write16(&self, _offset: usize, _value: u16) {}
    }

    fn magic(v: u32) -> Magic {
        Magic {
            magic: v,
            reads: Cell::new(0),
        }
    }

    #[test]
    fn identifies_mikrotik_by_magic() {
        let mt = magic(MT_MAGIC);
        assert_eq!(identify(&mt, device_id::L1D_2_0), NicType::Mt);
        assert_eq!(mt.reads.get(), 1);
        assert_eq!(identify(&magic(0), device_id::L1D_2_0), NicType::L1d2);
        assert_eq!(
            identify(&magic(!MT_MAGIC), device_id::L1D_2_0),
            NicType::L1d2
        );
    }

    #[test]
    fn magic_only_on_1083() {
        // Other ids never read the magic register, even when it would match.
        let mt = magic(MT_MAGIC);
        assert_eq!(identify(&mt, device_id::L1D), NicType::L1d);
        assert_eq!(identify(&mt, device_id::L1C), NicType::L1c);
        assert_eq!(identify(&mt, device_id::L2C), NicType::L2c);
        assert_eq!(identify(&mt, device_id::L2C_B), NicType::L2cB);
        assert_eq!(identify(&mt, device_id::L2C_B2), NicType::L2cB2);
        assert_eq!(identify(&mt, 0xffff), NicType::L1c);
        assert_eq!(mt.reads.get(), 0);
    }

    #[test]
    fn chip_properties() {
        assert_eq!(NicType::Mt.queues(), 4);
        assert_eq!(NicType::L1d2.queues(), 1);
        assert!(!NicType::Mt.has_mdio_phy());
        assert!(NicType::L1d.has_mdio_phy());
        assert!(NicType::L1d2.gigabit());
        assert!(!NicType::L2cB.gigabit());
    }
}
