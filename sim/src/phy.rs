// SPDX-License-Identifier: GPL-2.0

//! The AR8151's gigabit PHY behind MDIO, as the C driver uses it: standard MII registers,
//! the PHY-specific status (GIGA_PSSR) and interrupt registers, debug registers through
//! 0x1d/0x1e and clause-45 style extension registers (plain storage).

use std::collections::BTreeMap;

const MII_BMCR: u8 = 0x00;
const MII_BMSR: u8 = 0x01;
const MII_PHYSID1: u8 = 0x02;
const MII_PHYSID2: u8 = 0x03;
const MII_ADVERTISE: u8 = 0x04;
const MII_LPA: u8 = 0x05;
const MII_CTRL1000: u8 = 0x09;
const MII_STAT1000: u8 = 0x0a;
const MII_ESTATUS: u8 = 0x0f;
const MII_GIGA_PSSR: u8 = 0x11;
const MII_IER: u8 = 0x12;
const MII_ISR: u8 = 0x13;
const MII_DBG_ADDR: u8 = 0x1d;
const MII_DBG_DATA: u8 = 0x1e;

const BMCR_RESET: u16 = 0x8000;
const BMCR_ANRESTART: u16 = 0x0200;
const BMSR_LSTATUS: u16 = 0x0004;
const BMSR_ANEGCOMPLETE: u16 = 0x0020;
/// PHY interrupt status bits (`ISR_LINK_UP`, `ISR_LINK_DOWN` in atl1c_hw.h).
pub const PHY_ISR_LINK_UP: u16 = 0x0400;
/// See [`PHY_ISR_LINK_UP`].
pub const PHY_ISR_LINK_DOWN: u16 = 0x0800;

/// PHY state.
pub struct Phy {
    regs: [u16; 32],
    dbg_addr: u16,
    dbg: BTreeMap<u16, u16>,
    ext: BTreeMap<(u8, u16), u16>,
    link: bool,
}

impl Phy {
    /// A PHY with its link partner advertising 1000/full; `link` is the initial link state.
    pub fn new(link: bool) -> Self {
        let mut regs = [0u16; 32];
        regs[MII_BMCR as usize] = 0x1140;
        regs[MII_PHYSID1 as usize] = 0x004d;
        regs[MII_PHYSID2 as usize] = 0xd073;
        regs[MII_ADVERTISE as usize] = 0x0de1;
        regs[MII_LPA as usize] = 0xcde1;
        regs[MII_CTRL1000 as usize] = 0x0300;
        regs[MII_STAT1000 as usize] = 0x3c00;
        regs[MII_ESTATUS as usize] = 0x3000;
        Self {
            regs,
            dbg_addr: 0,
            dbg: BTreeMap::new(),
            ext: BTreeMap::new(),
            link,
        }
    }

    /// Current link state.
    pub fn link(&self) -> bool {
        self.link
    }

    /// Changes the link state; returns whether the PHY raises its interrupt (enabled in IER).
    pub fn set_link(&mut self, up: bool) -> bool {
        if self.link == up {
            return false;
        }
        self.link = up;
        let bit = if up {
            PHY_ISR_LINK_UP
        } else {
            PHY_ISR_LINK_DOWN
        };
        self.regs[MII_ISR as usize] |= bit;
        self.regs[MII_IER as usize] & bit != 0
    }

    /// Reads a clause-22 register.
    pub fn read(&mut self, reg: u8) -> u16 {
        let reg = reg & 0x1f;
        match reg {
            MII_BMSR => {
                let mut v = 0x7949;
                if self.link {
                    v |= BMSR_LSTATUS | BMSR_ANEGCOMPLETE;
                }
                v
            }
            MII_GIGA_PSSR => {
                if self.link {
                    // 1000 Mb/s, full duplex, resolved, real-time link.
                    0xbc00
                } else {
                    0x0000
                }
            }
            MII_ISR => std::mem::take(&mut self.regs[MII_ISR as usize]),
            MII_DBG_DATA => self.dbg.get(&self.dbg_addr).copied().unwrap_or(0),
            MII_DBG_ADDR => self.dbg_addr,
            _ => self.regs[reg as usize],
        }
    }

    /// Writes a clause-22 register.
    pub fn write(&mut self, reg: u8, value: u16) {
        let reg = reg & 0x1f;
        match reg {
            // Reset and autonegotiation restart complete at once.
            MII_BMCR => self.regs[MII_BMCR as usize] = value & !(BMCR_RESET | BMCR_ANRESTART),
            MII_BMSR | MII_PHYSID1 | MII_PHYSID2 | MII_LPA | MII_STAT1000 | MII_ESTATUS
            | MII_GIGA_PSSR | MII_ISR => {}
            MII_DBG_ADDR => self.dbg_addr = value,
            MII_DBG_DATA => {
                self.dbg.insert(self.dbg_addr, value);
            }
            _ => self.regs[reg as usize] = value,
        }
    }

    /// Reads an extension register (`MDIO_CTRL_MODE_EXT`).
    pub fn read_ext(&self, devad: u8, reg: u16) -> u16 {
        self.ext.get(&(devad, reg)).copied().unwrap_or(0)
    }

    /// Writes an extension register.
    pub fn write_ext(&mut self, devad: u8, reg: u16, value: u16) {
        self.ext.insert((devad, reg), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_and_speed() {
        let mut p = Phy::new(true);
        assert_eq!(p.read(MII_BMSR) & BMSR_LSTATUS, BMSR_LSTATUS);
        assert_eq!(p.read(MII_GIGA_PSSR), 0xbc00);
        p.write(MII_IER, PHY_ISR_LINK_UP | PHY_ISR_LINK_DOWN);
        assert!(p.set_link(false));
        assert_eq!(p.read(MII_BMSR) & BMSR_LSTATUS, 0);
        assert_eq!(p.read(MII_GIGA_PSSR) & 0x0800, 0);
        assert_eq!(p.read(MII_ISR), PHY_ISR_LINK_DOWN);
        assert_eq!(p.read(MII_ISR), 0, "read clears");
        assert!(!p.set_link(false));
    }

    #[test]
    fn reset_self_clears_and_debug_regs() {
        let mut p = Phy::new(true);
        p.write(MII_BMCR, 0x9200);
        assert_eq!(p.read(MII_BMCR), 0x1000);
        p.write(MII_DBG_ADDR, 0x29);
        p.write(MII_DBG_DATA, 0x36dd);
        p.write(MII_DBG_ADDR, 0x4);
        assert_eq!(p.read(MII_DBG_DATA), 0);
        p.write(MII_DBG_ADDR, 0x29);
        assert_eq!(p.read(MII_DBG_DATA), 0x36dd);
        p.write_ext(3, 0x8003, 0x4d19);
        assert_eq!(p.read_ext(3, 0x8003), 0x4d19);
    }
}
