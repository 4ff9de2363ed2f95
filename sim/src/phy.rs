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
    /// The mode the last autonegotiation (restart) settled on.
    negotiated: Option<(u32, bool)>,
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
            negotiated: Some((1000, true)),
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
        if up {
            self.negotiated = self.resolved();
        }
        let bit = if up {
            PHY_ISR_LINK_UP
        } else {
            PHY_ISR_LINK_DOWN
        };
        self.regs[MII_ISR as usize] |= bit;
        self.regs[MII_IER as usize] & bit != 0
    }

    /// Whether the PHY's interrupt line is asserted: an enabled interrupt status bit not yet
    /// read (and so cleared) from `MII_ISR`. The line is a level: the MAC latches it into
    /// `ISR_GPHY` again after a soft reset clears its own status.
    pub fn irq_pending(&self) -> bool {
        self.regs[MII_ISR as usize] & self.regs[MII_IER as usize] != 0
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
            MII_GIGA_PSSR => match self.negotiated {
                // Speed (15:14), duplex (13), resolved (11), real-time link (10).
                Some((speed, full)) if self.link => {
                    let s = match speed {
                        1000 => 0x8000,
                        100 => 0x4000,
                        _ => 0x0000,
                    };
                    // Bit 12: MDI crossover status, as the real PHY reports it.
                    s | if full { 0x2000 } else { 0 } | 0x1000 | 0x0800 | 0x0400
                }
                _ => 0x0000,
            },
            MII_ISR => std::mem::take(&mut self.regs[MII_ISR as usize]),
            MII_DBG_DATA => self.dbg.get(&self.dbg_addr).copied().unwrap_or(0),
            MII_DBG_ADDR => self.dbg_addr,
            _ => self.regs[reg as usize],
        }
    }

    /// What autonegotiation resolves to with the link partner (1000/100/10 half and full):
    /// the best mode both advertise; `None` when they share none.
    pub fn resolved(&self) -> Option<(u32, bool)> {
        let adv = self.regs[MII_ADVERTISE as usize] & self.regs[MII_LPA as usize];
        // The partner's 1000BASE-T abilities (STAT1000 11:10) line up with CTRL1000 9:8.
        let giga = self.regs[MII_CTRL1000 as usize] & (self.regs[MII_STAT1000 as usize] >> 2);
        [
            (giga & 0x0200, 1000, true),
            (giga & 0x0100, 1000, false),
            (adv & 0x0100, 100, true),
            (adv & 0x0080, 100, false),
            (adv & 0x0040, 10, true),
            (adv & 0x0020, 10, false),
        ]
        .into_iter()
        .find(|&(bit, _, _)| bit != 0)
        .map(|(_, speed, full)| (speed, full))
    }

    /// Writes a clause-22 register. Returns whether the PHY raises its interrupt: a restart
    /// of autonegotiation (or a reset) that changes the resolved link, with the link up,
    /// signals a link change (link-up status, as after a real renegotiation).
    pub fn write(&mut self, reg: u8, value: u16) -> bool {
        let reg = reg & 0x1f;
        match reg {
            // Reset and autonegotiation restart complete at once.
            MII_BMCR => {
                let before = self.negotiated;
                self.regs[MII_BMCR as usize] = value & !(BMCR_RESET | BMCR_ANRESTART);
                if value & (BMCR_RESET | BMCR_ANRESTART) != 0 {
                    self.negotiated = self.resolved();
                    if self.link && self.negotiated != before {
                        self.regs[MII_ISR as usize] |= PHY_ISR_LINK_UP;
                        return self.regs[MII_IER as usize] & PHY_ISR_LINK_UP != 0;
                    }
                }
            }
            MII_BMSR | MII_PHYSID1 | MII_PHYSID2 | MII_LPA | MII_STAT1000 | MII_ESTATUS
            | MII_GIGA_PSSR | MII_ISR => {}
            MII_DBG_ADDR => self.dbg_addr = value,
            MII_DBG_DATA => {
                self.dbg.insert(self.dbg_addr, value);
            }
            _ => self.regs[reg as usize] = value,
        }
        false
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
        assert!(p.irq_pending());
        assert_eq!(p.read(MII_ISR), PHY_ISR_LINK_DOWN);
        assert_eq!(p.read(MII_ISR), 0, "read clears");
        assert!(!p.irq_pending());
        assert!(!p.set_link(false));
    }

    #[test]
    fn renegotiation_follows_the_advertisement() {
        let mut p = Phy::new(true);
        p.write(MII_IER, PHY_ISR_LINK_UP | PHY_ISR_LINK_DOWN);
        // 100 full only (atl1c_phy_setup_adv for ADVERTISED_100baseT_Full), then restart.
        assert!(!p.write(MII_ADVERTISE, 0x0d01));
        assert!(!p.write(MII_CTRL1000, 0));
        assert_eq!(
            p.read(MII_GIGA_PSSR),
            0xbc00,
            "no change before the restart"
        );
        assert!(p.write(MII_BMCR, 0x9200), "the link renegotiates");
        assert_eq!(p.read(MII_GIGA_PSSR), 0x7c00);
        assert_eq!(p.read(MII_ISR), PHY_ISR_LINK_UP);
        // Restarting with the same advertisement changes nothing.
        assert!(!p.write(MII_BMCR, 0x1200));
        // 10 half only.
        p.write(MII_ADVERTISE, 0x0c21);
        assert!(p.write(MII_BMCR, 0x1200));
        assert_eq!(p.read(MII_GIGA_PSSR), 0x1c00);
        // Nothing in common: no resolution.
        p.write(MII_ADVERTISE, 0x0c01);
        assert_eq!(p.resolved(), None);
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
