// SPDX-License-Identifier: GPL-2.0

//! hw.rs bring-up, run in-process against the device model, for both personalities: the same
//! sequences the driver runs at probe and open, with the model standing in for the card.

use std::cell::RefCell;

use atl1c_sim::{Device, MemEnv, Personality};

use crate::hw::{self, Hw, Link, NicType, RegIo};
use crate::regs::{self, Register};

const MAC: [u8; 6] = [0x00, 0x13, 0x74, 0x00, 0x5c, 0x38];

/// BAR0 of a model, with a log of every access (offset, write?) in order.
struct ModelIo {
    dev: RefCell<Device>,
    env: RefCell<MemEnv>,
    log: RefCell<Vec<(usize, bool)>>,
}

impl ModelIo {
    fn new(p: Personality) -> Self {
        let mut dev = Device::new(p, MAC);
        dev.cfg.write(0x04, &[0x06, 0x00]);
        Self {
            dev: RefCell::new(dev),
            env: RefCell::new(MemEnv::new()),
            log: RefCell::new(Vec::new()),
        }
    }

    fn first(&self, off: usize) -> Option<usize> {
        self.log.borrow().iter().position(|&(o, _)| o == off)
    }

    fn count(&self, off: usize) -> usize {
        self.log.borrow().iter().filter(|&&(o, _)| o == off).count()
    }
}

impl RegIo for ModelIo {
    fn read32(&self, offset: usize) -> u32 {
        self.log.borrow_mut().push((offset, false));
        let mut env = self.env.borrow_mut();
        self.dev.borrow_mut().mmio_read(&mut *env, offset as u64, 4) as u32
    }

    fn write32(&self, offset: usize, value: u32) {
        self.log.borrow_mut().push((offset, true));
        let mut env = self.env.borrow_mut();
        self.dev
            .borrow_mut()
            .mmio_write(&mut *env, offset as u64, 4, u64::from(value));
    }

    fn write16(&self, offset: usize, value: u16) {
        self.log.borrow_mut().push((offset, true));
        let mut env = self.env.borrow_mut();
        self.dev
            .borrow_mut()
            .mmio_write(&mut *env, offset as u64, 2, u64::from(value));
    }

    fn udelay(&self, us: u32) {
        self.env.borrow_mut().now += std::time::Duration::from_micros(u64::from(us));
    }

    fn msleep(&self, ms: u32) {
        self.env.borrow_mut().now += std::time::Duration::from_millis(u64::from(ms));
    }
}

/// Probe and open as the driver does them: identify, PCIe reset, MAC reset, PHY reset and
/// init, station address, rx mode, link, ASPM for the link, start the MAC.
fn bring_up(io: &ModelIo) -> (Hw, u32, Link) {
    let nic = hw::identify(io, hw::device_id::L1D_2_0);
    let mut hw = Hw::new(nic, 0xc0);
    hw.reset_pcie(io, true);
    hw.phy_reset(io).expect("PHY reset");
    hw.reset_mac(io).expect("MAC reset");
    let phy_id = hw.phy_init(io).expect("PHY init");
    let mac = hw.read_mac_addr(io).expect("a preloaded MAC address");
    hw.set_mac_addr(io, mac);
    hw.set_rx_mode(io, false, false, [[0x33, 0x33, 0xff, 0, 0, 1]].iter());
    assert!(hw.link_up(io).expect("link state"));
    let link = hw.link(io).expect("speed and duplex");
    hw.hibernate = false;
    hw.set_aspm(io, link.speed);
    hw.post_link_change(io, link.speed)
        .expect("post link change");
    hw.start_mac(io, link);
    (hw, phy_id, link)
}

#[test]
fn mikrotik_bring_up_never_touches_mdio() {
    let io = ModelIo::new(Personality::Mikrotik);
    let (hw, phy_id, link) = bring_up(&io);
    assert_eq!(hw.nic, NicType::Mt);
    assert_eq!(phy_id, 0);
    assert_eq!(
        link,
        Link {
            speed: 10000,
            full_duplex: true
        }
    );
    assert_eq!(
        io.first(regs::MT_MAGIC_REG::OFFSET),
        Some(0),
        "magic is read first"
    );
    assert_eq!(io.count(regs::MDIO_CTRL::OFFSET), 0, "no PHY behind MDIO");
    let mac = regs::MAC_CTRL(io.read32(regs::MAC_CTRL::OFFSET));
    assert!(mac.bit(regs::MAC_CTRL::TX_EN) && mac.bit(regs::MAC_CTRL::RX_EN));
    assert!(mac.bit(regs::MAC_CTRL::DUPLX));
    assert_eq!(
        mac.field(regs::MAC_CTRL::SPEED),
        regs::MacSpeed::Speed1000 as u32
    );
    assert!(io.dev.borrow().counters.protocol_errors.is_empty());
}

#[test]
fn ar8151_bring_up_through_the_phy() {
    let io = ModelIo::new(Personality::Ar8151);
    let (hw, phy_id, link) = bring_up(&io);
    assert_eq!(hw.nic, NicType::L1d2);
    assert_eq!(phy_id, 0x004d_d073);
    assert_eq!(
        link,
        Link {
            speed: 1000,
            full_duplex: true
        }
    );
    let magic = io.first(regs::MT_MAGIC_REG::OFFSET).expect("magic read");
    let mdio = io.first(regs::MDIO_CTRL::OFFSET).expect("MDIO used");
    assert!(magic < mdio, "MT_MAGIC is read before any MDIO access");
    // The soft reset cleared itself; the SerDes clock slow-down quirk of L1D2 is applied.
    let m = regs::MASTER_CTRL(io.read32(regs::MASTER_CTRL::OFFSET));
    assert!(!m.bit(regs::MASTER_CTRL::SOFT_RST));
    assert!(m.bit(regs::MASTER_CTRL::OOB_DIS));
    let s = regs::SERDES(io.read32(regs::SERDES::OFFSET));
    assert!(s.bit(regs::SERDES::PHY_CLK_SLOWDOWN) && s.bit(regs::SERDES::MAC_CLK_SLOWDOWN));
    // ASPM for a 1000 Mb/s link on L1D2: L1 with the 16 us entry timer, L0s allowed.
    let pm = regs::PM_CTRL(io.read32(regs::PM_CTRL::OFFSET));
    assert!(pm.bit(regs::PM_CTRL::ASPM_L1_EN));
    assert!(pm.bit(regs::PM_CTRL::ASPM_L0S_EN));
    assert_eq!(pm.field(regs::PM_CTRL::L1D_L1_ENTRY_TM), 4);
    let mac = regs::MAC_CTRL(io.read32(regs::MAC_CTRL::OFFSET));
    assert!(mac.bit(regs::MAC_CTRL::TX_EN) && mac.bit(regs::MAC_CTRL::RX_EN));
    assert_eq!(mac.field(regs::MAC_CTRL::PRMLEN), 7);
    assert!(io.dev.borrow().counters.protocol_errors.is_empty());
}

#[test]
fn link_down_is_seen_on_both_personalities() {
    for p in [Personality::Mikrotik, Personality::Ar8151] {
        let io = ModelIo::new(p);
        let (hw, _, _) = bring_up(&io);
        {
            let mut env = io.env.borrow_mut();
            io.dev.borrow_mut().set_link(&mut *env, false);
        }
        assert!(!hw.link_up(&io).expect("link state"), "{p:?}");
        if p == Personality::Ar8151 {
            assert_eq!(hw.link(&io), Err(hw::HwError::LinkNotResolved));
        }
    }
}

#[test]
fn multicast_hash_matches_the_models_filter() {
    // The hash the driver programs must be the one the model (written from the C driver)
    // checks: a frame to the address is received only after set_rx_mode.
    let io = ModelIo::new(Personality::Ar8151);
    let (hw, _, _) = bring_up(&io);
    let mc = [0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb];
    hw.set_rx_mode(&io, false, false, [mc].iter());
    let (word, bit) = hw::mc_hash_position(&mc);
    let table = io.read32(regs::RX_HASH_TABLE::OFFSET + 4 * word);
    assert_eq!(table, 1 << bit);
}

#[test]
fn moderation_is_applied_live() {
    let io = ModelIo::new(Personality::Ar8151);
    let (hw, _, _) = bring_up(&io);
    let tx = hw::usecs_to_modrt(2000).expect("in range");
    let rx = hw::usecs_to_modrt(0).expect("in range");
    hw.set_moderation(&io, tx, rx);
    let t = regs::IRQ_MODRT_TIMER_INIT(io.read32(regs::IRQ_MODRT_TIMER_INIT::OFFSET));
    assert_eq!(t.field(regs::IRQ_MODRT_TIMER_INIT::TX), 1000);
    assert_eq!(t.field(regs::IRQ_MODRT_TIMER_INIT::RX), 0);
    let m = regs::MASTER_CTRL(io.read32(regs::MASTER_CTRL::OFFSET));
    assert!(m.bit(regs::MASTER_CTRL::TX_ITIMER_EN));
    assert!(!m.bit(regs::MASTER_CTRL::RX_ITIMER_EN));
    // The MAC stays up: moderation needs no link reset.
    let mac = regs::MAC_CTRL(io.read32(regs::MAC_CTRL::OFFSET));
    assert!(mac.bit(regs::MAC_CTRL::TX_EN) && mac.bit(regs::MAC_CTRL::RX_EN));
}

#[test]
fn forced_speed_renegotiates() {
    use hw::link_mode as m;
    let io = ModelIo::new(Personality::Ar8151);
    let (hw, _, _) = bring_up(&io);
    hw.restart_autoneg(&io, m::T100_FULL).expect("MDIO answers");
    // The PHY renegotiated 100 full and signalled it (ISR_GPHY, through its IER).
    assert!(io.read32(regs::ISR::OFFSET) & regs::ISR::GPHY.mask() != 0);
    assert!(hw.link_up(&io).expect("MDIO answers"));
    assert_eq!(
        hw.link(&io).expect("resolved"),
        Link {
            speed: 100,
            full_duplex: true
        }
    );
    // Everything again: back to 1000 full.
    hw.restart_autoneg(&io, m::AUTONEG).expect("MDIO answers");
    assert_eq!(hw.link(&io).expect("resolved").speed, 1000);
}

#[test]
fn eeprom_reads_back_the_image() {
    // AR8151: atl1c_check_eeprom_exist sees it (TWSI_DEBUG), every dword reads back as the
    // image holds it, in memory order.
    let io = ModelIo::new(Personality::Ar8151);
    let (hw, _, _) = bring_up(&io);
    assert!(hw.eeprom_exists(&io));
    let image = atl1c_sim::eeprom_image(hw::device_id::L1D_2_0, MAC);
    for off in (0..atl1c_sim::EEPROM_LEN).step_by(4) {
        let v = hw.read_eeprom(&io, off as u32).expect("answered");
        assert_eq!(v.to_le_bytes(), image[off..off + 4], "dword at {off}");
    }
    assert_eq!(hw.read_eeprom(&io, 2), None, "misaligned");
    // The OTP clock is restored as found.
    assert!(!regs::OTP_CTRL(io.read32(regs::OTP_CTRL::OFFSET)).bit(regs::OTP_CTRL::CLK_EN));
    // Mikrotik: none, and MDIO-free as ever.
    let io = ModelIo::new(Personality::Mikrotik);
    let (hw, _, _) = bring_up(&io);
    assert!(!hw.eeprom_exists(&io));
    assert_eq!(
        hw.read_eeprom(&io, 0),
        None,
        "a request nobody answers times out"
    );
}

#[test]
fn power_saving_powers_the_phy_down_and_phy_reset_brings_it_back() {
    let io = ModelIo::new(Personality::Ar8151);
    let (hw, _, link) = bring_up(&io);
    assert!(hw.link_up(&io).expect("link"));
    // Remove: the link the MAC ran at is gone (atl1c_down), nothing to wake on.
    hw.power_saving(&io, hw::Wake::NONE, None)
        .expect("power saving");
    assert!(io.dev.borrow().phy_powered_down());
    assert_eq!(io.dev.borrow().counters.phy_power_downs, 1);
    assert!(!hw.link_up(&io).expect("BMSR"), "no link without power");
    let m = regs::MASTER_CTRL(io.read32(regs::MASTER_CTRL::OFFSET));
    assert!(m.bit(regs::MASTER_CTRL::CLK_SEL_DIS));
    let mac = regs::MAC_CTRL(io.read32(regs::MAC_CTRL::OFFSET));
    assert!(!mac.bit(regs::MAC_CTRL::TX_EN) && !mac.bit(regs::MAC_CTRL::RX_EN));
    assert_eq!(io.read32(regs::WOL_CTRL::OFFSET), 0);
    // The next probe's PHY reset powers it up, and it links again.
    hw.phy_reset(&io).expect("PHY reset");
    assert!(!io.dev.borrow().phy_powered_down());
    hw.phy_init(&io).expect("PHY init");
    assert!(hw.link_up(&io).expect("link"));
    assert_eq!(hw.link(&io).expect("link"), link);
    assert!(io.dev.borrow().counters.protocol_errors.is_empty());
}

#[test]
fn power_saving_with_wake_on_magic_keeps_the_phy_and_the_receiver() {
    let io = ModelIo::new(Personality::Ar8151);
    let (hw, _, link) = bring_up(&io);
    let wake = hw::Wake {
        magic: true,
        link_change: true,
    };
    hw.power_saving(&io, wake, Some(link))
        .expect("power saving");
    assert!(!io.dev.borrow().phy_powered_down());
    let w = regs::WOL_CTRL(io.read32(regs::WOL_CTRL::OFFSET));
    assert!(w.bit(regs::WOL_CTRL::MAGIC_EN) && w.bit(regs::WOL_CTRL::MAGIC_PME_EN));
    assert!(w.bit(regs::WOL_CTRL::LINK_CHG_EN) && w.bit(regs::WOL_CTRL::LINK_CHG_PME_EN));
    assert!(
        !w.bit(regs::WOL_CTRL::PATTERN_EN),
        "pattern bits only on L2CB v1.1"
    );
    let mac = regs::MAC_CTRL(io.read32(regs::MAC_CTRL::OFFSET));
    assert!(mac.bit(regs::MAC_CTRL::RX_EN) && mac.bit(regs::MAC_CTRL::BC_EN));
    assert!(!mac.bit(regs::MAC_CTRL::TX_EN));
    assert!(mac.bit(regs::MAC_CTRL::DUPLX));
    assert_eq!(
        mac.field(regs::MAC_CTRL::SPEED),
        regs::MacSpeed::Speed1000 as u32
    );
    let m = regs::MASTER_CTRL(io.read32(regs::MASTER_CTRL::OFFSET));
    assert!(!m.bit(regs::MASTER_CTRL::CLK_SEL_DIS));
}

#[test]
fn power_saving_on_mikrotik_never_touches_mdio() {
    let io = ModelIo::new(Personality::Mikrotik);
    let (hw, _, _) = bring_up(&io);
    let mdio = io.count(regs::MDIO_CTRL::OFFSET);
    hw.power_saving(
        &io,
        hw::Wake {
            magic: true,
            link_change: true,
        },
        None,
    )
    .expect("power saving");
    hw.power_saving(&io, hw::Wake::NONE, None)
        .expect("power saving");
    assert_eq!(
        io.count(regs::MDIO_CTRL::OFFSET),
        mdio,
        "no PHY behind MDIO"
    );
    assert!(io.dev.borrow().counters.protocol_errors.is_empty());
}
