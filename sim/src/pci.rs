// SPDX-License-Identifier: GPL-2.0

//! PCI configuration space of the card, as the C driver and the PCI core expect it:
//! vendor 0x1969, class 0x020000, a 256 KiB memory BAR0, PM (0x40), MSI (0x48, 64-bit, one
//! vector) and PCIe v2 endpoint (0x58) capabilities, and Advanced Error Reporting (0x100) as
//! the AR8151 has it.

/// Size of the configuration space region served (PCIe extended).
pub const CFG_SIZE: usize = 4096;
/// Size of BAR0.
pub const BAR0_SIZE: u32 = 0x40000;

const PM_CAP: usize = 0x40;
const MSI_CAP: usize = 0x48;
const PCIE_CAP: usize = 0x58;
const AER_CAP: usize = 0x100;

/// AER's uncorrectable error bits (status, mask, severity), PCIe 2.0: data link protocol,
/// surprise down, poisoned TLP to unsupported request, ACS, internal, multicast blocked,
/// atomic egress, TLP prefix blocked.
const AER_UNCOR: u32 = 0x03ff_f030;
/// ... their severities at reset: data link protocol, surprise down, flow control protocol,
/// receiver overflow, malformed TLP and internal errors fatal.
const AER_UNCOR_SEVER: u32 = 0x0046_2030;
/// AER's correctable error bits: receiver error, bad TLP, bad DLLP, REPLAY_NUM rollover,
/// replay timer timeout, advisory non-fatal, internal, header log overflow.
const AER_COR: u32 = 0x0000_f1c1;
/// ... of which advisory non-fatal is masked at reset.
const AER_COR_MASK: u32 = 0x0000_2000;

const PMC_PME_D0: u16 = 1 << 11;
const PMC_PME_D3HOT: u16 = 1 << 14;
const PMCSR_STATE: u16 = 0x0003;
const PMCSR_PME_EN: u16 = 1 << 8;
const PMCSR_PME_STATUS: u16 = 1 << 15;

/// Configuration space: values plus a per-byte mask of what software may write.
pub struct ConfigSpace {
    data: [u8; CFG_SIZE],
    wmask: [u8; CFG_SIZE],
    /// Write-one-to-clear bytes (status registers).
    w1c: [u8; CFG_SIZE],
}

impl ConfigSpace {
    /// Config space of a card with PCI device id `device`, revision `rev`.
    pub fn new(device: u16, rev: u8) -> Self {
        let mut c = Self {
            data: [0; CFG_SIZE],
            wmask: [0; CFG_SIZE],
            w1c: [0; CFG_SIZE],
        };
        c.set16(0x00, 0x1969);
        c.set16(0x02, device);
        c.set16(0x06, 0x0010); // status: capabilities list
        c.data[0x08] = rev;
        c.set16(0x0a, 0x0200); // class: ethernet controller
        c.set16(0x2c, 0x1969);
        c.set16(0x2e, device);
        c.data[0x34] = PM_CAP as u8;
        c.data[0x3d] = 1; // INTA

        // PM: version 3, D3hot from D0, PME from D0 and D3hot (wake-on-LAN); PMCSR
        // No_Soft_Reset clear: D3hot -> D0 resets the function (Device::config_write).
        c.set16(PM_CAP, 0x0001 | ((MSI_CAP as u16) << 8));
        c.set16(PM_CAP + 2, PMC_PME_D0 | PMC_PME_D3HOT | 0x0003);
        // MSI: 64-bit capable, one vector.
        c.set16(MSI_CAP, 0x0005 | ((PCIE_CAP as u16) << 8));
        c.set16(MSI_CAP + 2, 0x0080);
        // PCIe v2 endpoint; DEVCAP max payload 256; DEVCTL MRRS 128 / MPS 256 at reset.
        c.set16(PCIE_CAP, 0x0010);
        c.set16(PCIE_CAP + 2, 0x0002);
        c.set32(PCIE_CAP + 4, 0x0000_0001);
        c.set16(PCIE_CAP + 8, 0x0020);

        c.mask16(0x04, 0x0547); // command: io, mem, master, parity, serr, intx disable
        c.mask32(0x10, !(BAR0_SIZE - 1)); // BAR0: 32-bit memory, non-prefetchable
        c.data[0x3c] = 0;
        c.wmask[0x3c] = 0xff; // interrupt line
        c.mask16(PM_CAP + 4, PMCSR_STATE | PMCSR_PME_EN);
        c.w1c[PM_CAP + 5] = (PMCSR_PME_STATUS >> 8) as u8;
        c.mask16(MSI_CAP + 2, 0x0071); // enable, multiple message enable
        c.mask32(MSI_CAP + 4, 0xffff_fffc);
        c.mask32(MSI_CAP + 8, 0xffff_ffff);
        c.mask16(MSI_CAP + 12, 0xffff);
        c.mask16(PCIE_CAP + 8, 0x7fff); // DEVCTL
        c.w1c[PCIE_CAP + 10] = 0x0f; // DEVSTA error bits
        c.w1c[0x07] = 0xf9; // status error bits

        // AER v1, the last extended capability: status W1C, masks and severity writable,
        // capabilities and header log read-only (no ECRC).
        c.set32(AER_CAP, 0x0001_0001);
        c.w1c32(AER_CAP + 0x04, AER_UNCOR);
        c.mask32(AER_CAP + 0x08, AER_UNCOR);
        c.set32(AER_CAP + 0x0c, AER_UNCOR_SEVER);
        c.mask32(AER_CAP + 0x0c, AER_UNCOR);
        c.w1c32(AER_CAP + 0x10, AER_COR);
        c.set32(AER_CAP + 0x14, AER_COR_MASK);
        c.mask32(AER_CAP + 0x14, AER_COR);
        c
    }

    fn set16(&mut self, at: usize, v: u16) {
        self.data[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }

    fn set32(&mut self, at: usize, v: u32) {
        self.data[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    fn mask16(&mut self, at: usize, m: u16) {
        self.wmask[at..at + 2].copy_from_slice(&m.to_le_bytes());
    }

    fn mask32(&mut self, at: usize, m: u32) {
        self.wmask[at..at + 4].copy_from_slice(&m.to_le_bytes());
    }

    fn w1c32(&mut self, at: usize, m: u32) {
        self.w1c[at..at + 4].copy_from_slice(&m.to_le_bytes());
    }

    /// Reads `buf.len()` bytes at `offset`; bytes past the end read as 0xff.
    pub fn read(&self, offset: usize, buf: &mut [u8]) {
        for (i, b) in buf.iter_mut().enumerate() {
            *b = self.data.get(offset + i).copied().unwrap_or(0xff);
        }
    }

    /// Writes bytes at `offset`, honouring read-only and write-one-to-clear bits.
    pub fn write(&mut self, offset: usize, data: &[u8]) {
        for (i, &v) in data.iter().enumerate() {
            let at = offset + i;
            if at >= CFG_SIZE {
                return;
            }
            let m = self.wmask[at];
            self.data[at] = (self.data[at] & !m) | (v & m);
            self.data[at] &= !(self.w1c[at] & v);
        }
    }

    /// Little-endian 16-bit value at `at`.
    pub fn get16(&self, at: usize) -> u16 {
        u16::from_le_bytes([self.data[at], self.data[at + 1]])
    }

    /// The function's power state: 0 (D0) to 3 (D3hot), PMCSR bits 1:0.
    pub fn power_state(&self) -> u8 {
        (self.get16(PM_CAP + 4) & PMCSR_STATE) as u8
    }

    /// Whether the guest enabled PME (PMCSR PME_En): a wake event would signal it.
    pub fn pme_enabled(&self) -> bool {
        self.get16(PM_CAP + 4) & PMCSR_PME_EN != 0
    }

    /// Signals a wake event: PME_Status set, if the guest enabled PME (PMCSR PME_En).
    /// Returns whether it was.
    pub fn pme(&mut self) -> bool {
        let pmcsr = self.get16(PM_CAP + 4);
        if pmcsr & PMCSR_PME_EN == 0 {
            return false;
        }
        self.set16(PM_CAP + 4, pmcsr | PMCSR_PME_STATUS);
        true
    }

    /// Whether MSI is enabled by the guest.
    pub fn msi_enabled(&self) -> bool {
        self.get16(MSI_CAP + 2) & 1 != 0
    }

    /// Whether the guest allows the card to master the bus (DMA).
    pub fn bus_master(&self) -> bool {
        self.get16(0x04) & 0x4 != 0
    }

    /// The function's Max_Read_Request_Size in bytes (PCIe DEVCTL bits 14:12): no memory
    /// read request it sends may ask for more.
    pub fn max_read_request(&self) -> u32 {
        128 << ((self.get16(PCIE_CAP + 8) >> 12) & 7)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_and_caps() {
        let c = ConfigSpace::new(0x1083, 0xc0);
        let mut b = [0u8; 4];
        c.read(0, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0x1083_1969);
        c.read(0x08, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0x0200_00c0);
        // Capability chain 0x40 -> 0x48 -> 0x58 -> end.
        assert_eq!(c.data[0x34], 0x40);
        assert_eq!((c.data[0x40], c.data[0x41]), (0x01, 0x48));
        assert_eq!((c.data[0x48], c.data[0x49]), (0x05, 0x58));
        assert_eq!((c.data[0x58], c.data[0x59]), (0x10, 0x00));
        // Extended: AER v1 at 0x100, the last.
        c.read(0x100, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0x0001_0001);
    }

    #[test]
    fn aer_registers() {
        let mut c = ConfigSpace::new(0x1073, 0xc1);
        let mut b = [0u8; 4];
        c.read(0x10c, &mut b);
        assert_eq!(u32::from_le_bytes(b), AER_UNCOR_SEVER);
        // Severity and masks are the guest's; status bits clear on a write of one.
        c.write(0x10c, &0u32.to_le_bytes());
        c.read(0x10c, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0);
        c.set32(0x104, 0x0000_4010);
        c.write(0x104, &0x0000_4000u32.to_le_bytes());
        c.read(0x104, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0x10);
        // The header log is read-only.
        c.write(0x11c, &u32::MAX.to_le_bytes());
        c.read(0x11c, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0);
    }

    #[test]
    fn bar_sizing_and_read_only() {
        let mut c = ConfigSpace::new(0x1083, 0xc0);
        c.write(0x10, &0xffff_ffffu32.to_le_bytes());
        let mut b = [0u8; 4];
        c.read(0x10, &mut b);
        assert_eq!(u32::from_le_bytes(b), !(BAR0_SIZE - 1));
        c.write(0x00, &[0, 0, 0, 0]);
        c.read(0, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0x1083_1969);
    }

    #[test]
    fn msi_enable_and_w1c() {
        let mut c = ConfigSpace::new(0x1083, 0xc0);
        assert!(!c.msi_enabled());
        c.write(0x4a, &[0x81, 0x00]);
        assert!(c.msi_enabled());
        c.data[0x62] = 0x05;
        c.write(0x62, &[0x0f, 0x00]);
        assert_eq!(c.data[0x62], 0);
        c.write(0x04, &[0x07, 0x01]);
        assert!(c.bus_master());
    }
}
