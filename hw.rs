// SPDX-License-Identifier: GPL-2.0

//! Hardware logic over a register-access trait: chip identification, MAC reset and
//! configuration, MDIO and PHY bring-up, link state, ASPM and PCIe quirks per chip type, the
//! station address and rx filtering, as the C driver does them (atl1c_main.c, atl1c_hw.c).
//!
//! Nothing here touches the kernel: [`RegIo`] is implemented by the driver over the mapped BAR
//! and by the host tests over the device model, so the same sequences run in both.
//!
//! This file uses only `core`.

use crate::regs::{self, Register, MT_MAGIC, MT_MAGIC_REG};

/// 32-bit and 16-bit access to BAR0.
pub(crate) trait RegIo {
    /// Reads the 32-bit register at `offset`.
    fn read32(&self, offset: usize) -> u32;
    /// Writes the 32-bit register at `offset`.
    fn write32(&self, offset: usize, value: u32);
    /// Writes the 16-bit register at `offset` (the tx producer indices).
    fn write16(&self, offset: usize, value: u16);
    /// Busy-waits `us` microseconds (poll loops of a few microseconds).
    fn udelay(&self, us: u32);
    /// Sleeps `ms` milliseconds.
    fn msleep(&self, ms: u32);

    /// Reads a typed register.
    fn read<R: Register>(&self) -> R {
        R::from_raw(self.read32(R::OFFSET))
    }

    /// `read_poll_timeout`: reads `R` until `done` holds for it, sleeping `sleep_us` between
    /// reads, for at most `timeout_us`: `Ok` with the value that satisfied `done`, or `Err`
    /// with the last one read. May sleep. The default counts `timeout_us / sleep_us + 1`
    /// reads; the driver's I/O measures the time with the kernel's.
    fn poll<R: Register>(
        &self,
        sleep_us: u32,
        timeout_us: u32,
        mut done: impl FnMut(R) -> bool,
    ) -> Result<R, R> {
        let sleep_us = sleep_us.max(1);
        let mut r = self.read::<R>();
        for _ in 0..timeout_us / sleep_us {
            if done(r) {
                return Ok(r);
            }
            self.msleep(sleep_us.div_ceil(1000));
            r = self.read::<R>();
        }
        if done(r) {
            Ok(r)
        } else {
            Err(r)
        }
    }

    /// `read_poll_timeout_atomic`: reads `R` at most `tries` times until `done` holds for it,
    /// busy-waiting `delay_us` after each read that fails it: `Ok` with the value that
    /// satisfied `done`, or `Err` with the last one read. Never sleeps.
    fn poll_atomic<R: Register>(
        &self,
        delay_us: u32,
        tries: u32,
        mut done: impl FnMut(R) -> bool,
    ) -> Result<R, R> {
        let mut r = R::from_raw(u32::MAX);
        for _ in 0..tries {
            r = self.read::<R>();
            if done(r) {
                return Ok(r);
            }
            self.udelay(delay_us);
        }
        Err(r)
    }

    /// Writes a typed register.
    fn write<R: Register>(&self, r: R) {
        self.write32(R::OFFSET, r.raw());
    }

    /// Read-modify-write of a typed register.
    fn modify<R: Register>(&self, f: impl FnOnce(R) -> R) {
        self.write(f(self.read::<R>()));
    }

    /// Reads offset 0 to flush posted writes (`AT_WRITE_FLUSH`).
    fn flush(&self) {
        let _ = self.read32(0);
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

/// Errors of the hardware layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HwError {
    /// The MAC did not go idle (`IDLE_STATUS` busy bits still set) after a reset or stop.
    NotIdle(u32),
    /// An MDIO transaction did not complete.
    MdioTimeout,
    /// The PHY reported no resolved speed and duplex.
    LinkNotResolved,
    /// A register that cannot read all-ones did: the card is gone (surprise removal, a
    /// PCIe link down).
    Gone,
}

/// Whether a register value is what a read of a card that is no longer there returns.
pub(crate) const fn all_ones(raw: u32) -> bool {
    raw == u32::MAX
}

/// Speed and duplex of an up link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Link {
    /// Mb/s: 10, 100, 1000 from the AR8151 PHY; whatever `MT_SPEED` says on Mikrotik.
    pub(crate) speed: u32,
    /// Full duplex.
    pub(crate) full_duplex: bool,
}

/// What the card may wake the host on while powered down (`AT_WUFC_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wake {
    /// A magic packet (`AT_WUFC_MAG`, ethtool `g`).
    pub(crate) magic: bool,
    /// A link change (`AT_WUFC_LNKC`, ethtool `p`).
    pub(crate) link_change: bool,
}

impl Wake {
    /// Nothing: the PHY powers down with the rest (remove, or shutdown without WoL).
    pub(crate) const NONE: Self = Self {
        magic: false,
        link_change: false,
    };

    fn any(self) -> bool {
        self.magic || self.link_change
    }
}

/// `GPHY_CTRL` less `GPHY_CTRL_CLS` (LED mode, 100BASE-T amplitude, PLL always on): what
/// both the PHY reset and the power-saving sequence clear.
fn gphy_cls_cleared(g: regs::GPHY_CTRL) -> regs::GPHY_CTRL {
    use regs::GPHY_CTRL as G;
    g.with_bit(G::LED_MODE, false)
        .with_bit(G::AB100_EN, false)
        .with_bit(G::PHY_PLL_ON, false)
}

/// `L2CB_V11`: the L2CB revision that also needs the pattern wake bits for a magic packet.
const L2CB_V11: u8 = 0xc1;

/// `AT_HW_MAX_IDLE_DELAY`: idle polls, 1 ms apart, so as many milliseconds.
const MAX_IDLE_MS: u32 = 10;
/// `MDIO_MAX_AC_TO`: MDIO polls, 10 us apart.
const MDIO_POLLS: u32 = 120;
/// `GPHY_CTRL_EXT_RST_TO`: PHY DSP reset time, in 10 us.
const GPHY_EXT_RST_TO: u32 = 80;

/// PHY debug registers (through `MII_DBG_ADDR`/`MII_DBG_DATA`) and their C driver defaults.
mod dbg {
    pub(super) const ANACTRL: u16 = 0x00;
    pub(super) const ANACTRL_DEF: u16 = 0x02ef;
    pub(super) const SYSMODCTRL: u16 = 0x04;
    pub(super) const SYSMODCTRL_IECHOADJ_DEF: u16 = 0x88bb;
    pub(super) const SRDSYSMOD: u16 = 0x05;
    pub(super) const SRDSYSMOD_DEF: u16 = 0x2c46;
    pub(super) const TST10BTCFG: u16 = 0x12;
    pub(super) const TST10BTCFG_DEF: u16 = 0x4c04;
    pub(super) const AZ_ANADECT: u16 = 0x15;
    pub(super) const AZ_ANADECT_DEF: u16 = 0x3220;
    pub(super) const LEGCYPS: u16 = 0x29;
    pub(super) const L1D_LEGCYPS_DEF: u16 = 0x129d;
    pub(super) const L1C_LEGCYPS_DEF: u16 = 0x36dd;
    pub(super) const TST100BTCFG: u16 = 0x36;
    pub(super) const TST100BTCFG_DEF: u16 = 0xe12c;
    pub(super) const TST100BTCFG_LITCH_EN: u16 = 0x80;
}

/// Standard MII registers and bits used here (`include/uapi/linux/mii.h`).
pub(crate) mod mii {
    /// Basic mode control.
    pub(crate) const BMCR: u16 = 0x00;
    /// Basic mode status.
    pub(crate) const BMSR: u16 = 0x01;
    /// PHY identifier 1.
    pub(crate) const PHYSID1: u16 = 0x02;
    /// PHY identifier 2.
    pub(crate) const PHYSID2: u16 = 0x03;
    /// Advertisement.
    pub(crate) const ADVERTISE: u16 = 0x04;
    /// 1000BASE-T control.
    pub(crate) const CTRL1000: u16 = 0x09;
    /// BMCR: reset.
    pub(crate) const BMCR_RESET: u16 = 0x8000;
    /// BMCR: autonegotiation enable.
    pub(crate) const BMCR_ANENABLE: u16 = 0x1000;
    /// BMCR: restart autonegotiation.
    pub(crate) const BMCR_ANRESTART: u16 = 0x0200;
    /// BMSR: link up.
    pub(crate) const BMSR_LSTATUS: u16 = 0x0004;
    /// Advertise 10/100 half/full, pause and asymmetric pause (`ADVERTISE_DEFAULT_CAP`).
    pub(crate) const ADVERTISE_DEFAULT: u16 = 0x01e0 | 0x0400 | 0x0800 | 0x0001;
    /// Advertise 1000 full and half (`GIGA_CR_1000T_DEFAULT_CAP`).
    pub(crate) const CTRL1000_DEFAULT: u16 = 0x0300;
}

/// Extension (clause 45 style) PHY registers.
mod ext {
    pub(super) const ANEG: u8 = 7;
    pub(super) const LOCAL_EEEADV: u16 = 0x3c;
    pub(super) const PCS: u8 = 3;
    pub(super) const CLDCTRL3: u16 = 0x8003;
    pub(super) const L2CB_CLDCTRL3: u16 = 0x4d19;
    pub(super) const CLDCTRL6: u16 = 0x8006;
    pub(super) const CLDCTRL6_CAB_LEN_SHORT1G: u16 = 0x0001;
}

/// Per-chip state and settings of the hardware layer (the relevant part of `struct atl1c_hw`).
#[derive(Clone, Debug)]
pub(crate) struct Hw {
    /// Chip type.
    pub(crate) nic: NicType,
    /// PCI revision id.
    pub(crate) revision: u8,
    /// ASPM L0s allowed (`ATL1C_ASPM_L0S_SUPPORT`).
    pub(crate) aspm_l0s: bool,
    /// ASPM L1 allowed (`ATL1C_ASPM_L1_SUPPORT`).
    pub(crate) aspm_l1: bool,
    /// Hibernation disabled (`ATL1C_HIB_DISABLE`).
    pub(crate) hib_disable: bool,
    /// PHY in hibernation: the C driver reads every register twice until the first link up,
    /// and MDIO uses the slow clock on L2CB2/L1D2.
    pub(crate) hibernate: bool,
    /// Preamble length (`MAC_CTRL_PRMLEN`).
    pub(crate) preamble_len: u32,
    /// Interrupt moderation, tx, in 2 us units.
    pub(crate) tx_imt: u16,
    /// Interrupt moderation, rx, in 2 us units.
    pub(crate) rx_imt: u16,
    /// Interrupt retrigger ("clear") timer, in 2 us units.
    pub(crate) ict: u16,
    /// Statistics message block timer, in 2 us units.
    pub(crate) smb_timer: u32,
    /// TPDs prefetched per burst.
    pub(crate) tpd_burst: u32,
    /// RFDs prefetched per burst.
    pub(crate) rfd_burst: u32,
    /// DMA read request block (`enum atl1c_dma_req_block`).
    pub(crate) dmar_block: u32,
}

/// `DEVICE_CTRL_MAXRRS_MIN`: the smallest DMA read request block used (512 bytes).
const DMAR_BLOCK_MIN: u32 = 2;

impl Hw {
    /// Defaults of `atl1c_sw_init` for a chip.
    pub(crate) fn new(nic: NicType, revision: u8) -> Self {
        Self {
            nic,
            revision,
            aspm_l0s: true,
            aspm_l1: true,
            hib_disable: false,
            hibernate: true,
            preamble_len: 7,
            tx_imt: 1000,
            rx_imt: 200,
            ict: 50000,
            smb_timer: 200_000,
            tpd_burst: 5,
            rfd_burst: 8,
            dmar_block: 3,
        }
    }

    /// Fits the DMA read request block to the function's PCIe Max_Read_Request_Size
    /// `readrq` (bytes), as `atl1c_configure_dma`: no larger, and at least 512 bytes. Returns
    /// the Max_Read_Request_Size to set where the one found is below 512.
    pub(crate) fn fit_read_requests(&mut self, readrq: u32) -> Option<u32> {
        // Blocks of 128 << n bytes.
        let max = (readrq / 128).max(1).ilog2();
        self.dmar_block = self.dmar_block.min(max);
        if self.dmar_block < DMAR_BLOCK_MIN {
            self.dmar_block = DMAR_BLOCK_MIN;
            return Some(128 << DMAR_BLOCK_MIN);
        }
        None
    }

    /// `atl1c_wait_until_idle`: polls until the `mask` busy bits of `IDLE_STATUS` clear.
    pub(crate) fn wait_until_idle(&self, io: &impl RegIo, mask: u32) -> Result<(), HwError> {
        let r = io.poll::<regs::IDLE_STATUS>(1000, MAX_IDLE_MS * 1000, |r| {
            all_ones(r.raw()) || r.raw() & mask == 0
        });
        match r {
            Ok(r) if all_ones(r.raw()) => Err(HwError::Gone),
            Ok(_) => Ok(()),
            Err(r) => Err(HwError::NotIdle(r.raw())),
        }
    }

    /// `atl1c_pcie_patch`: PCIe clock and power quirks per chip type.
    pub(crate) fn pcie_patch(&self, io: &impl RegIo) {
        use regs::MASTER_CTRL as M;
        // pclk may switch to 25 MHz.
        let mst = io.read::<M>().with_bit(M::CLK_SEL_DIS, false);
        io.write(mst);
        if matches!(self.nic, NicType::L1c | NicType::L2c) {
            // Original L1C/L2C: force receiver detection on the PCIe PHY.
            io.modify(|r: regs::PCIE_PHYMISC| r.with_bit(regs::PCIE_PHYMISC::FORCE_RCV_DET, true));
        } else if !mst.bit(M::WAKEN_25M) {
            // Newer chips: wake without the PCIe clock.
            io.write(mst.with_bit(M::WAKEN_25M, true));
        }
        // L2CB v1.0: CDR bandwidth and L0s threshold of the PCIe PHY, longer L1 sync.
        if self.nic == NicType::L2cB && self.revision == 0xc0 {
            io.modify(|r: regs::PCIE_PHYMISC2| {
                r.with_field(regs::PCIE_PHYMISC2::CDR_BW, 3)
                    .with_field(regs::PCIE_PHYMISC2::L0S_TH, 3)
            });
            // REG_LINK_CTRL (0x68) mirrors the PCIe Link Control; LINK_CTRL_EXT_SYNC.
            let v = io.read32(0x68);
            io.write32(0x68, v | 0x80);
        }
        // L2CB 1.x and L1D 1.x: keep rx buffers in L0s, clear the vendor message.
        if matches!(self.nic, NicType::L2cB | NicType::L1d) {
            io.modify(|r: regs::PM_CTRL| r.with_bit(regs::PM_CTRL::L0S_BUFSRX_EN, true));
            io.modify(|r: regs::DMA_DBG| r.with_bit(regs::DMA_DBG::VENDOR_MSG, false));
        }
    }

    /// The BAR0 part of `atl1c_reset_pcie`: clears wake-on-LAN status and LTSSM write
    /// protection, applies the PCIe patches and, with `l0s_l1_disable`, turns ASPM off.
    /// (The PCI config space part, DEVSTA and AER, is the caller's, through the PCI core.)
    pub(crate) fn reset_pcie(&self, io: &impl RegIo, l0s_l1_disable: bool) {
        let _ = io.read::<regs::WOL_CTRL>();
        io.write(regs::WOL_CTRL(0));
        io.modify(|r: regs::LTSSM_ID_CTRL| r.with_bit(regs::LTSSM_ID_CTRL::EN_WRO, false));
        self.pcie_patch(io);
        if l0s_l1_disable {
            self.set_aspm_with(io, 0, false, false);
        }
        io.msleep(5);
    }

    /// `atl1c_set_aspm`: ASPM L0s/L1 through the MAC's own `PM_CTRL`, per chip type and link
    /// speed (0 = link down).
    pub(crate) fn set_aspm(&self, io: &impl RegIo, speed: u32) {
        self.set_aspm_with(io, speed, self.aspm_l0s, self.aspm_l1);
    }

    /// `atl1c_disable_l0s_l1`: ASPM off whatever the chip supports (before system sleep).
    pub(crate) fn disable_l0s_l1(&self, io: &impl RegIo) {
        self.set_aspm_with(io, 0, false, false);
    }

    fn set_aspm_with(&self, io: &impl RegIo, speed: u32, l0s: bool, l1: bool) {
        use regs::PM_CTRL as P;
        let fast = speed == 1000 || speed == 100;
        let mut pm = io
            .read::<P>()
            .with_bit(P::ASPM_L1_EN, false)
            .with_bit(P::ASPM_L0S_EN, false)
            .with_bit(P::MAC_ASPM_CHK, false);
        if matches!(self.nic, NicType::L2cB2 | NicType::L1d2) {
            // L1D v2.0+: 3-bit L1 entry timer, 16 us at 100/1000 Mb/s.
            pm = pm
                .with_bit(P::TXL1_AFTER_L0S, false)
                .with_field(P::L1D_L1_ENTRY_TM, if fast { 4 } else { 1 });
        } else {
            let t = if self.nic == NicType::L2cB { 7 } else { 0xf };
            pm = pm.with_field(P::L1_ENTRY_TIMER, if fast { t } else { 1 });
        }
        if l0s && speed != 0 {
            pm = pm
                .with_bit(P::ASPM_L0S_EN, true)
                .with_bit(P::MAC_ASPM_CHK, true);
        }
        if l1 {
            pm = pm
                .with_bit(P::ASPM_L1_EN, true)
                .with_bit(P::MAC_ASPM_CHK, true);
        }
        if matches!(
            self.nic,
            NicType::L2cB | NicType::L1d | NicType::L2cB2 | NicType::L1d2 | NicType::Mt
        ) {
            pm = pm
                .with_field(P::PM_REQ_TIMER, 0xf)
                .with_bit(P::RCVR_WT_TIMER, true)
                .with_bit(P::SERDES_PD_EX_L1, true)
                .with_bit(P::CLK_SWH_L1, true)
                .with_bit(P::SERDES_L1_EN, false)
                .with_bit(P::SERDES_PLL_L1_EN, false)
                .with_bit(P::SERDES_BUFS_RX_L1_EN, false)
                .with_bit(P::SA_DLY_EN, false)
                .with_bit(P::HOTRST, false);
            // No L0s with the link down, and never on L2CB.
            if speed == 0 || self.nic == NicType::L2cB {
                pm = pm.with_bit(P::ASPM_L0S_EN, false);
            }
        } else {
            // L1C.
            pm = pm.with_field(P::L1_ENTRY_TIMER, 0);
            if speed != 0 {
                pm = pm
                    .with_bit(P::SERDES_L1_EN, true)
                    .with_bit(P::SERDES_PLL_L1_EN, true)
                    .with_bit(P::SERDES_BUFS_RX_L1_EN, true)
                    .with_bit(P::SERDES_PD_EX_L1, false)
                    .with_bit(P::CLK_SWH_L1, false)
                    .with_bit(P::ASPM_L0S_EN, false)
                    .with_bit(P::ASPM_L1_EN, false);
            } else {
                pm = pm
                    .with_bit(P::CLK_SWH_L1, true)
                    .with_bit(P::SERDES_L1_EN, false)
                    .with_bit(P::SERDES_PLL_L1_EN, false)
                    .with_bit(P::SERDES_BUFS_RX_L1_EN, false)
                    .with_bit(P::ASPM_L0S_EN, false);
            }
        }
        io.write(pm);
    }

    /// `atl1c_stop_mac`: disables the queues, waits for them, then the MAC.
    pub(crate) fn stop_mac(&self, io: &impl RegIo) -> Result<(), HwError> {
        io.modify(|r: regs::RXQ_CTRL| r.with_bit(regs::RXQ_CTRL::EN, false));
        io.modify(|r: regs::TXQ_CTRL| r.with_bit(regs::TXQ_CTRL::EN, false));
        let _ = self.wait_until_idle(
            io,
            regs::IDLE_STATUS::RXQ_BUSY.mask() | regs::IDLE_STATUS::TXQ_BUSY.mask(),
        );
        io.modify(|r: regs::MAC_CTRL| {
            r.with_bit(regs::MAC_CTRL::TX_EN, false)
                .with_bit(regs::MAC_CTRL::RX_EN, false)
        });
        self.wait_until_idle(
            io,
            regs::IDLE_STATUS::TXMAC_BUSY.mask() | regs::IDLE_STATUS::RXMAC_BUSY.mask(),
        )
    }

    /// `atl1c_reset_mac`: stops the MAC, soft-resets MAC and DMA, and takes speed/duplex
    /// control into software. The soft reset clears itself; the MAC must then go idle.
    pub(crate) fn reset_mac(&self, io: &impl RegIo) -> Result<(), HwError> {
        use regs::MASTER_CTRL as M;
        let _ = self.stop_mac(io);
        let ctrl = io.read::<M>().with_bit(M::OOB_DIS, true);
        io.write(ctrl.with_bit(M::SOFT_RST, true));
        io.flush();
        io.msleep(10);
        self.wait_until_idle(io, regs::IDLE_STATUS::BUSY.mask())?;
        io.write(ctrl);
        io.modify(|r: regs::MAC_CTRL| r.with_bit(regs::MAC_CTRL::SPEED_MODE_SW, true));
        // Clock slow-down of the SerDes: off on L2CB, on for L2CB2 and L1D2.
        let serdes = io.read::<regs::SERDES>();
        match self.nic {
            NicType::L2cB => io.write(
                serdes
                    .with_bit(regs::SERDES::PHY_CLK_SLOWDOWN, false)
                    .with_bit(regs::SERDES::MAC_CLK_SLOWDOWN, false),
            ),
            NicType::L2cB2 | NicType::L1d2 => io.write(
                serdes
                    .with_bit(regs::SERDES::PHY_CLK_SLOWDOWN, true)
                    .with_bit(regs::SERDES::MAC_CLK_SLOWDOWN, true),
            ),
            _ => {}
        }
        Ok(())
    }

    /// Waits for the MDIO transaction to complete, busy-waiting 10 us between reads as the C
    /// driver does: a transaction takes microseconds.
    fn wait_mdio_idle(&self, io: &impl RegIo) -> Result<regs::MDIO_CTRL, HwError> {
        let r = io.poll_atomic::<regs::MDIO_CTRL>(10, MDIO_POLLS, |r| {
            all_ones(r.raw()) || !r.bit(regs::MDIO_CTRL::BUSY) && !r.bit(regs::MDIO_CTRL::START)
        });
        match r {
            Ok(r) if all_ones(r.raw()) => Err(HwError::Gone),
            Ok(r) => Ok(r),
            Err(_) => Err(HwError::MdioTimeout),
        }
    }

    fn mdio_clk(&self) -> u32 {
        // Only L2CB2 and L1D2 may use the slow MDIO clock, while hibernating.
        if matches!(self.nic, NicType::L2cB2 | NicType::L1d2) && self.hibernate {
            7
        } else {
            0
        }
    }

    /// `atl1c_stop_phy_polling`: MDIO auto-polling off before a software transaction.
    fn stop_phy_polling(&self, io: &impl RegIo) -> Result<(), HwError> {
        if io.read::<regs::MDIO_CTRL>().bit(regs::MDIO_CTRL::AP_EN) {
            io.write(regs::MDIO_CTRL(0));
            self.wait_mdio_idle(io)?;
        }
        Ok(())
    }

    fn mdio(
        &self,
        io: &impl RegIo,
        ext: Option<(u8, u16)>,
        reg: u16,
        write: Option<u16>,
    ) -> Result<u16, HwError> {
        use regs::MDIO_CTRL as C;
        self.stop_phy_polling(io)?;
        let mut v = C::default()
            .with_bit(C::SPRES_PRMBL, true)
            .with_field(C::CLK_SEL, self.mdio_clk())
            .with_bit(C::START, true);
        if let Some((devad, r)) = ext {
            io.write(
                regs::MDIO_EXTN::default()
                    .with_field(regs::MDIO_EXTN::DEVAD, u32::from(devad))
                    .with_field(regs::MDIO_EXTN::REG, u32::from(r)),
            );
            v = v.with_bit(C::MODE_EXT, true);
        } else {
            v = v.with_field(C::REG, u32::from(reg));
        }
        v = match write {
            Some(d) => v.with_field(C::DATA, u32::from(d)),
            None => v.with_bit(C::OP_READ, true),
        };
        io.write(v);
        let done = self.wait_mdio_idle(io)?;
        // CAST: a 16-bit field.
        Ok(done.field(C::DATA) as u16)
    }

    /// Reads a PHY register (`atl1c_read_phy_reg`).
    pub(crate) fn read_phy(&self, io: &impl RegIo, reg: u16) -> Result<u16, HwError> {
        self.mdio(io, None, reg, None)
    }

    /// Writes a PHY register (`atl1c_write_phy_reg`).
    pub(crate) fn write_phy(&self, io: &impl RegIo, reg: u16, v: u16) -> Result<(), HwError> {
        self.mdio(io, None, reg, Some(v)).map(|_| ())
    }

    /// Reads a PHY extension register.
    pub(crate) fn read_phy_ext(&self, io: &impl RegIo, dev: u8, reg: u16) -> Result<u16, HwError> {
        self.mdio(io, Some((dev, reg)), 0, None)
    }

    /// Writes a PHY extension register.
    pub(crate) fn write_phy_ext(
        &self,
        io: &impl RegIo,
        dev: u8,
        reg: u16,
        v: u16,
    ) -> Result<(), HwError> {
        self.mdio(io, Some((dev, reg)), 0, Some(v)).map(|_| ())
    }

    /// Writes a PHY debug register.
    pub(crate) fn write_phy_dbg(&self, io: &impl RegIo, reg: u16, v: u16) -> Result<(), HwError> {
        self.write_phy(io, regs::phy::MII_DBG_ADDR, reg)?;
        self.write_phy(io, regs::phy::MII_DBG_DATA, v)
    }

    /// `atl1c_phy_reset` for the chips the driver targets: PHY core reset through
    /// `GPHY_CTRL`, power-saving and hibernation defaults, EEE off, the analog debug
    /// settings, and link-change interrupts. Nothing to do on the Mikrotik NIC (no PHY).
    pub(crate) fn phy_reset(&self, io: &impl RegIo) -> Result<(), HwError> {
        use regs::GPHY_CTRL as G;
        if !self.nic.has_mdio_phy() {
            return Ok(());
        }
        let mut g = gphy_cls_cleared(io.read::<G>())
            .with_bit(G::EXT_RESET, false)
            .with_bit(G::PHY_IDDQ, false)
            .with_bit(G::GATE_25M_EN, false)
            .with_bit(G::PWDOWN_HW, false)
            .with_bit(G::SEL_ANA_RST, true);
        g = g
            .with_bit(G::HIB_EN, !self.hib_disable)
            .with_bit(G::HIB_PULSE, !self.hib_disable);
        io.write(g);
        io.flush();
        io.udelay(10);
        io.write(g.with_bit(G::EXT_RESET, true));
        io.flush();
        io.udelay(10 * GPHY_EXT_RST_TO);
        if !self.hib_disable {
            let legcyps = if matches!(self.nic, NicType::L1d | NicType::L1d2) {
                dbg::L1D_LEGCYPS_DEF
            } else {
                dbg::L1C_LEGCYPS_DEF
            };
            self.write_phy_dbg(io, dbg::LEGCYPS, legcyps)?;
            self.write_phy_dbg(io, dbg::SYSMODCTRL, dbg::SYSMODCTRL_IECHOADJ_DEF)?;
        }
        // EEE (AZ) off by default on L1D, L1D2 and L2CB2.
        if matches!(self.nic, NicType::L1d | NicType::L1d2 | NicType::L2cB2) {
            io.modify(|r: regs::LPI_CTRL| r.with_bit(regs::LPI_CTRL::EN, false));
            self.write_phy_ext(io, ext::ANEG, ext::LOCAL_EEEADV, 0)?;
            self.write_phy_ext(io, ext::PCS, ext::CLDCTRL3, ext::L2CB_CLDCTRL3)?;
        }
        self.write_phy_dbg(io, dbg::ANACTRL, dbg::ANACTRL_DEF)?;
        self.write_phy_dbg(io, dbg::SRDSYSMOD, dbg::SRDSYSMOD_DEF)?;
        self.write_phy_dbg(io, dbg::TST10BTCFG, dbg::TST10BTCFG_DEF)?;
        // UNH-IOL test issue: bit 7.
        self.write_phy_dbg(
            io,
            dbg::TST100BTCFG,
            dbg::TST100BTCFG_DEF | dbg::TST100BTCFG_LITCH_EN,
        )?;
        self.write_phy(
            io,
            regs::phy::MII_IER,
            regs::phy::IER_LINK_UP | regs::phy::IER_LINK_DOWN,
        )
    }

    /// `atl1c_power_saving`: the MAC stopped, and the card set for the host's sleep. Without
    /// anything to wake on, the PHY powers down (`PHY_IDDQ`, `PWDOWN_HW`) and the MAC's
    /// clock is gated: what remove and a shutdown without WoL leave. Otherwise the PHY stays up
    /// (out of reset) and `WOL_CTRL` arms the wake events, the receiver on for a magic packet.
    /// `link` is the link the MAC ran at (`None`: down, as after `atl1c_down`). A later
    /// [`Hw::phy_reset`] powers the PHY up again.
    pub(crate) fn power_saving(
        &self,
        io: &impl RegIo,
        wake: Wake,
        link: Option<Link>,
    ) -> Result<(), HwError> {
        use regs::{
            GPHY_CTRL as G,
            MAC_CTRL as C,
            MASTER_CTRL as M,
            WOL_CTRL as W, //
        };
        let speed = if link.is_some_and(|l| l.speed == 1000) {
            regs::MacSpeed::Speed1000
        } else {
            regs::MacSpeed::Speed10_100
        };
        let mut master = io.read::<M>().with_bit(M::CLK_SEL_DIS, false);
        let mut mac = io
            .read::<C>()
            .with_field(C::SPEED, speed as u32)
            .with_bit(C::DUPLX, link.is_some_and(|l| l.full_duplex))
            .with_bit(C::RX_EN, false)
            .with_bit(C::TX_EN, false);
        let mut phy = gphy_cls_cleared(io.read::<G>())
            .with_bit(G::EXT_RESET, false)
            .with_bit(G::SEL_ANA_RST, true)
            .with_bit(G::HIB_PULSE, true)
            .with_bit(G::HIB_EN, true);
        let mut wol = W(0);
        if !wake.any() {
            master = master.with_bit(M::CLK_SEL_DIS, true);
            phy = phy.with_bit(G::PHY_IDDQ, true).with_bit(G::PWDOWN_HW, true);
        } else {
            phy = phy.with_bit(G::EXT_RESET, true);
            if wake.magic {
                mac = mac.with_bit(C::RX_EN, true).with_bit(C::BC_EN, true);
                wol = wol
                    .with_bit(W::MAGIC_EN, true)
                    .with_bit(W::MAGIC_PME_EN, true);
                if self.nic == NicType::L2cB && self.revision == L2CB_V11 {
                    wol = wol
                        .with_bit(W::PATTERN_EN, true)
                        .with_bit(W::PATTERN_PME_EN, true);
                }
            }
            if wake.link_change {
                wol = wol
                    .with_bit(W::LINK_CHG_EN, true)
                    .with_bit(W::LINK_CHG_PME_EN, true);
            }
        }
        // The PHY's part goes through MDIO; as in C, a PHY that does not answer does not keep
        // the MAC from being set for sleep: the error is returned once the registers are.
        let mut mdio = Ok(());
        if wake.any() && self.nic.has_mdio_phy() {
            if wake.link_change {
                mdio = self.write_phy(io, regs::phy::MII_IER, regs::phy::IER_LINK_UP);
            }
            // Clears the PHY's pending interrupt.
            mdio = mdio.and(self.read_phy(io, regs::phy::MII_ISR).map(|_| ()));
        }
        io.write(master);
        io.write(mac);
        io.write(phy);
        io.write(wol);
        mdio
    }

    /// `atl1c_phy_init`: checks the PHY answers, advertises everything the chip can do and
    /// restarts autonegotiation. Returns the PHY id (0 on the Mikrotik NIC).
    pub(crate) fn phy_init(&self, io: &impl RegIo) -> Result<u32, HwError> {
        if !self.nic.has_mdio_phy() {
            return Ok(0);
        }
        let id1 = self.read_phy(io, mii::PHYSID1)?;
        let id2 = self.read_phy(io, mii::PHYSID2)?;
        self.restart_autoneg(io, link_mode::AUTONEG)?;
        Ok((u32::from(id1) << 16) | u32::from(id2))
    }

    /// `atl1c_get_link_status`: `MT_SPEED` non-zero on Mikrotik, BMSR (read twice, the first
    /// read returns latched state) elsewhere.
    pub(crate) fn link_up(&self, io: &impl RegIo) -> Result<bool, HwError> {
        if !self.nic.has_mdio_phy() {
            let speed = io.read::<regs::MT_SPEED>().raw();
            if all_ones(speed) {
                return Err(HwError::Gone);
            }
            return Ok(speed != 0);
        }
        let _ = self.read_phy(io, mii::BMSR)?;
        Ok(self.read_phy(io, mii::BMSR)? & mii::BMSR_LSTATUS != 0)
    }

    /// `atl1c_get_speed_and_duplex`.
    pub(crate) fn link(&self, io: &impl RegIo) -> Result<Link, HwError> {
        use regs::phy as p;
        if !self.nic.has_mdio_phy() {
            let speed = io.read::<regs::MT_SPEED>().raw();
            if all_ones(speed) {
                return Err(HwError::Gone);
            }
            return Ok(Link {
                speed,
                full_duplex: true,
            });
        }
        let pssr = self.read_phy(io, p::MII_GIGA_PSSR)?;
        if pssr & p::GIGA_PSSR_SPD_DPLX_RESOLVED == 0 {
            return Err(HwError::LinkNotResolved);
        }
        let speed = match pssr & p::GIGA_PSSR_SPEED {
            p::GIGA_PSSR_1000MBS => 1000,
            p::GIGA_PSSR_100MBS => 100,
            p::GIGA_PSSR_10MBS => 10,
            _ => return Err(HwError::LinkNotResolved),
        };
        Ok(Link {
            speed,
            full_duplex: pssr & p::GIGA_PSSR_DPLX != 0,
        })
    }

    /// `atl1c_post_phy_linkchg`: AR8151 analog settings that depend on the link (1000 Mb/s
    /// with a short cable gets the AZ analog detection default).
    pub(crate) fn post_link_change(&self, io: &impl RegIo, speed: u32) -> Result<(), HwError> {
        if !matches!(self.nic, NicType::L1d | NicType::L1d2) || speed != 1000 {
            return Ok(());
        }
        let c6 = self.read_phy_ext(io, ext::PCS, ext::CLDCTRL6)?;
        if c6 & ext::CLDCTRL6_CAB_LEN_SHORT1G == 0 {
            self.write_phy_dbg(io, dbg::AZ_ANADECT, dbg::AZ_ANADECT_DEF)?;
        }
        Ok(())
    }

    /// `atl1c_start_mac`: enables the queues and the MAC for `link`.
    pub(crate) fn start_mac(&self, io: &impl RegIo, link: Link) {
        use regs::MAC_CTRL as C;
        io.modify(|r: regs::TXQ_CTRL| r.with_bit(regs::TXQ_CTRL::EN, true));
        io.modify(|r: regs::RXQ_CTRL| r.with_bit(regs::RXQ_CTRL::EN, true));
        let speed = if link.speed == 1000 || !self.nic.has_mdio_phy() {
            regs::MacSpeed::Speed1000
        } else {
            regs::MacSpeed::Speed10_100
        };
        io.modify(|r: C| {
            r.with_bit(C::TX_EN, true)
                .with_bit(C::TX_FLOW, true)
                .with_bit(C::RX_EN, true)
                .with_bit(C::RX_FLOW, true)
                .with_bit(C::ADD_CRC, true)
                .with_bit(C::PAD, true)
                .with_bit(C::BC_EN, true)
                .with_bit(C::SINGLE_PAUSE_EN, true)
                .with_bit(C::HASH_ALG_CRC32, true)
                .with_bit(C::DUPLX, link.full_duplex)
                .with_field(C::SPEED, speed as u32)
                .with_field(C::PRMLEN, self.preamble_len)
        });
    }

    /// VLAN tags stripped on receive (into the RRD) and inserted on transmit (from the TPD),
    /// or neither (`MAC_CTRL_RMV_VLAN`, `__atl1c_vlan_mode`).
    pub(crate) fn set_vlan_strip(&self, io: &impl RegIo, on: bool) {
        io.modify(|r: regs::MAC_CTRL| r.with_bit(regs::MAC_CTRL::RMV_VLAN, on));
    }

    /// Reads the station address the firmware or EEPROM loader left in `MAC_STA_ADDR`;
    /// `None` unless it is a valid unicast address.
    pub(crate) fn read_mac_addr(&self, io: &impl RegIo) -> Option<[u8; 6]> {
        let lo = io.read::<regs::MAC_STA_ADDR>().raw();
        let hi = io.read::<regs::MAC_STA_ADDR_HI>().raw();
        let mac = regs::regs_to_mac(lo, hi);
        valid_unicast(&mac).then_some(mac)
    }

    /// `atl1c_hw_set_mac_addr`.
    pub(crate) fn set_mac_addr(&self, io: &impl RegIo, mac: [u8; 6]) {
        let (lo, hi) = regs::mac_to_regs(mac);
        io.write(regs::MAC_STA_ADDR(lo));
        io.write(regs::MAC_STA_ADDR_HI(hi));
    }

    /// `atl1c_set_multi`: promiscuous / all-multicast bits and the multicast hash table.
    pub(crate) fn set_rx_mode<'a>(
        &self,
        io: &impl RegIo,
        promisc: bool,
        allmulti: bool,
        mc: impl Iterator<Item = &'a [u8; 6]>,
    ) {
        use regs::MAC_CTRL as C;
        io.modify(|r: C| {
            r.with_bit(C::PROMIS_EN, promisc)
                .with_bit(C::MC_ALL_EN, allmulti || promisc)
        });
        let mut table = [0u32; 2];
        for addr in mc {
            let (word, bit) = mc_hash_position(addr);
            table[word] |= 1 << bit;
        }
        io.write32(regs::RX_HASH_TABLE::OFFSET, table[0]);
        io.write32(regs::RX_HASH_TABLE::OFFSET + 4, table[1]);
    }
}

/// Unit of the interrupt moderation timers (`IRQ_MODRT_TIMER_INIT`): 2 us.
pub(crate) const MODRT_UNIT_US: u32 = 2;
/// Longest moderation delay: a 16-bit count of 2 us.
pub(crate) const MODRT_MAX_US: u32 = 0xffff * MODRT_UNIT_US;

/// A moderation delay the timer cannot hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ModrtTooLarge {
    /// The largest delay, in microseconds.
    pub(crate) max_us: u32,
}

/// Microseconds to a moderation timer count, rounded up to the 2 us unit so that a requested
/// delay is never shortened (1 us becomes 2 us); 0 turns moderation off for that direction.
pub(crate) fn usecs_to_modrt(us: u32) -> Result<u16, ModrtTooLarge> {
    if us > MODRT_MAX_US {
        return Err(ModrtTooLarge {
            max_us: MODRT_MAX_US,
        });
    }
    // CAST: at most 0xffff after the range check.
    Ok(us.div_ceil(MODRT_UNIT_US) as u16)
}

/// A moderation timer count back to microseconds (what `ethtool -c` reports).
pub(crate) fn modrt_to_usecs(count: u16) -> u32 {
    u32::from(count) * MODRT_UNIT_US
}

impl Hw {
    /// Applies interrupt moderation live (no link reset): the timers and their enables in
    /// `MASTER_CTRL`; a zero delay disables that direction's timer.
    pub(crate) fn set_moderation(&self, io: &impl RegIo, tx: u16, rx: u16) {
        use regs::MASTER_CTRL as M;
        io.write(
            regs::IRQ_MODRT_TIMER_INIT::default()
                .with_field(regs::IRQ_MODRT_TIMER_INIT::TX, u32::from(tx))
                .with_field(regs::IRQ_MODRT_TIMER_INIT::RX, u32::from(rx)),
        );
        io.modify(|r: M| {
            r.with_bit(M::TX_ITIMER_EN, tx != 0)
                .with_bit(M::RX_ITIMER_EN, rx != 0)
        });
    }
}

/// Legacy ethtool link-mode bits (`SUPPORTED_*` / `ADVERTISED_*`).
pub(crate) mod link_mode {
    /// 10BASE-T half duplex.
    pub(crate) const T10_HALF: u32 = 1 << 0;
    /// 10BASE-T full duplex.
    pub(crate) const T10_FULL: u32 = 1 << 1;
    /// 100BASE-TX half duplex.
    pub(crate) const T100_HALF: u32 = 1 << 2;
    /// 100BASE-TX full duplex.
    pub(crate) const T100_FULL: u32 = 1 << 3;
    /// 1000BASE-T half duplex.
    pub(crate) const T1000_HALF: u32 = 1 << 4;
    /// 1000BASE-T full duplex.
    pub(crate) const T1000_FULL: u32 = 1 << 5;
    /// Autonegotiation: advertise every mode the chip has.
    pub(crate) const AUTONEG: u32 = 1 << 6;
    /// Twisted pair port.
    pub(crate) const TP: u32 = 1 << 7;
    /// 10GBASE-T full duplex.
    pub(crate) const T10000_FULL: u32 = 1 << 12;
    /// 25GBASE-CR full duplex.
    pub(crate) const CR25000_FULL: u32 = 1 << 31;
}

/// MII `ADVERTISE` / `CTRL1000` bits for the speeds.
mod adv {
    pub(super) const T10_HALF: u16 = 0x0020;
    pub(super) const T10_FULL: u16 = 0x0040;
    pub(super) const T100_HALF: u16 = 0x0080;
    pub(super) const T100_FULL: u16 = 0x0100;
    pub(super) const ALL: u16 = T10_HALF | T10_FULL | T100_HALF | T100_FULL;
    pub(super) const T1000_HALF: u16 = 0x0100;
    pub(super) const T1000_FULL: u16 = 0x0200;
}

impl Hw {
    /// Link modes the chip supports (`atl1c_get_link_ksettings`); Mikrotik: its fixed rate.
    pub(crate) fn supported_modes(&self, mt_speed: u32) -> u32 {
        use link_mode as m;
        if !self.nic.has_mdio_phy() {
            return m::TP
                | match mt_speed {
                    25000 => m::CR25000_FULL,
                    _ => m::T10000_FULL,
                };
        }
        let mut s = m::T10_HALF | m::T10_FULL | m::T100_HALF | m::T100_FULL | m::AUTONEG | m::TP;
        if self.nic.gigabit() {
            s |= m::T1000_FULL;
        }
        s
    }

    /// The link modes `advertised` (`ADVERTISED_*`, with `AUTONEG` meaning all of them) stands
    /// for on this chip.
    pub(crate) fn advertised_modes(&self, advertised: u32) -> u32 {
        use link_mode as m;
        let all = self.supported_modes(0) & !(m::AUTONEG | m::TP);
        if advertised & m::AUTONEG != 0 {
            all
        } else {
            advertised & all
        }
    }

    /// `atl1c_phy_setup_adv`: the `ADVERTISE` and `CTRL1000` values for `advertised`.
    pub(crate) fn advert_regs(&self, advertised: u32) -> (u16, u16) {
        use link_mode as m;
        let modes = self.advertised_modes(advertised);
        let mut a = mii::ADVERTISE_DEFAULT & !adv::ALL;
        let mut g = mii::CTRL1000_DEFAULT & !(adv::T1000_HALF | adv::T1000_FULL);
        for (bit, reg) in [
            (m::T10_HALF, adv::T10_HALF),
            (m::T10_FULL, adv::T10_FULL),
            (m::T100_HALF, adv::T100_HALF),
            (m::T100_FULL, adv::T100_FULL),
        ] {
            if modes & bit != 0 {
                a |= reg;
            }
        }
        if self.nic.gigabit() {
            if modes & m::T1000_FULL != 0 {
                g |= adv::T1000_FULL;
            }
            if advertised & m::AUTONEG != 0 {
                // The C driver advertises 1000 half too when autonegotiating everything.
                g |= adv::T1000_HALF;
            }
        }
        (a, g)
    }

    /// `atl1c_check_eeprom_exist`: an EEPROM (TWSI) or OTP holds the chip's settings.
    pub(crate) fn eeprom_exists(&self, io: &impl RegIo) -> bool {
        io.read::<regs::TWSI_DEBUG>()
            .bit(regs::TWSI_DEBUG::DEV_EXIST)
            || io
                .read::<regs::MASTER_CTRL>()
                .bit(regs::MASTER_CTRL::OTP_SEL)
    }

    /// `atl1c_read_eeprom`: the dword at `offset` (a multiple of 4 below 4 KiB), or `None`
    /// when it is misaligned or the EEPROM does not answer within 1 ms.
    pub(crate) fn read_eeprom(&self, io: &impl RegIo, offset: u32) -> Option<u32> {
        use regs::EEPROM_CTRL as E;
        if offset & 3 != 0 || offset > E::ADDR.max() {
            return None;
        }
        let otp = io.read::<regs::OTP_CTRL>();
        let clk_was_on = otp.bit(regs::OTP_CTRL::CLK_EN);
        if !clk_was_on {
            io.write(otp.with_bit(regs::OTP_CTRL::CLK_EN, true));
        }
        io.write(regs::EEPROM_DATA_LO(0));
        io.write(E::default().with_field(E::ADDR, offset));
        io.udelay(100);
        let done = io.poll_atomic::<E>(100, 10, |c| c.bit(E::RW));
        let value = done.is_ok().then(|| {
            let hi = io.read::<E>().field(E::DATA_HI);
            let lo = io.read::<regs::EEPROM_DATA_LO>().raw();
            ((hi << 16) | (lo >> 16)).swap_bytes()
        });
        if !clk_was_on {
            io.write(otp);
        }
        value
    }

    /// `atl1c_restart_autoneg`: advertises `advertised` and restarts autonegotiation.
    pub(crate) fn restart_autoneg(&self, io: &impl RegIo, advertised: u32) -> Result<(), HwError> {
        let (a, g) = self.advert_regs(advertised);
        self.write_phy(io, mii::ADVERTISE, a)?;
        if self.nic.gigabit() {
            self.write_phy(io, mii::CTRL1000, g)?;
        }
        self.write_phy(
            io,
            mii::BMCR,
            mii::BMCR_RESET | mii::BMCR_ANENABLE | mii::BMCR_ANRESTART,
        )
    }
}

/// Whether `mac` is a usable station address (not multicast, not all zeros).
pub(crate) fn valid_unicast(mac: &[u8; 6]) -> bool {
    mac[0] & 1 == 0 && mac.iter().any(|&b| b != 0)
}

/// Little-endian Ethernet CRC without the final inversion (`ether_crc_le`).
fn ether_crc_le(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// `atl1c_hash_mc_addr` + `atl1c_hash_set`: which hash-table word and bit a multicast
/// address sets.
pub(crate) fn mc_hash_position(addr: &[u8; 6]) -> (usize, u32) {
    let h = ether_crc_le(addr).reverse_bits();
    // CAST: one bit.
    ((h >> 31) as usize, (h >> 26) & 0x1f)
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
        fn udelay(&self, _us: u32) {}
        fn msleep(&self, _ms: u32) {}
    }

    fn magic(v: u32) -> Magic {
        Magic {
            magic: v,
            reads: Cell::new(0),
        }
    }

    /// A register file whose `IDLE_STATUS` and `MDIO_CTRL` read `busy_reads` times as busy,
    /// then as `then`; reads counted.
    struct Busy {
        busy_reads: u32,
        then: u32,
        reads: Cell<u32>,
    }

    impl RegIo for Busy {
        fn read32(&self, _offset: usize) -> u32 {
            let n = self.reads.get();
            self.reads.set(n + 1);
            if n < self.busy_reads {
                regs::MDIO_CTRL::BUSY.mask() | 1
            } else {
                self.then
            }
        }
        fn write32(&self, _offset: usize, _value: u32) {}
        fn write16(&self, _offset: usize, _value: u16) {}
        fn udelay(&self, _us: u32) {}
        fn msleep(&self, _ms: u32) {}
    }

    fn busy(busy_reads: u32, then: u32) -> Busy {
        Busy {
            busy_reads,
            then,
            reads: Cell::new(0),
        }
    }

    #[test]
    fn idle_waits_are_bounded_and_see_a_missing_card() {
        let hw = Hw::new(NicType::L1d2, 0);
        let io = busy(3, 0);
        assert_eq!(hw.wait_until_idle(&io, 1), Ok(()));
        assert_eq!(io.reads.get(), 4);
        // Busy for good: 10 ms of 1 ms sleeps, 11 reads, the last value reported.
        let io = busy(u32::MAX, 0);
        let busy_bits = regs::MDIO_CTRL::BUSY.mask() | 1;
        assert_eq!(hw.wait_until_idle(&io, 1), Err(HwError::NotIdle(busy_bits)));
        assert_eq!(io.reads.get(), MAX_IDLE_MS + 1);
        assert_eq!(
            hw.wait_until_idle(&busy(2, u32::MAX), 1),
            Err(HwError::Gone)
        );
    }

    #[test]
    fn mdio_waits_are_bounded_and_see_a_missing_card() {
        let hw = Hw::new(NicType::L1d2, 0);
        let io = busy(5, 0);
        assert!(hw.wait_mdio_idle(&io).is_ok());
        assert_eq!(io.reads.get(), 6);
        let io = busy(u32::MAX, 0);
        assert_eq!(hw.wait_mdio_idle(&io), Err(HwError::MdioTimeout));
        assert_eq!(io.reads.get(), MDIO_POLLS);
        assert_eq!(hw.wait_mdio_idle(&busy(0, u32::MAX)), Err(HwError::Gone));
    }

    #[test]
    fn read_requests_fit_mrrs() {
        let fit = |readrq| {
            let mut hw = Hw::new(NicType::L1d2, 0);
            let set = hw.fit_read_requests(readrq);
            (128u32 << hw.dmar_block, set)
        };
        // Below 512 (the model's reset value is 128): raised to 512, blocks of 512.
        assert_eq!(fit(128), (512, Some(512)));
        assert_eq!(fit(256), (512, Some(512)));
        assert_eq!(fit(512), (512, None));
        // Above: blocks of the default 1024, never more than allowed.
        assert_eq!(fit(1024), (1024, None));
        assert_eq!(fit(4096), (1024, None));
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
    fn advertising_registers() {
        use link_mode as m;
        let hw = Hw::new(NicType::L1d2, 0xc0);
        // Autonegotiate everything: what atl1c_phy_init writes.
        assert_eq!(
            hw.advert_regs(m::AUTONEG),
            (mii::ADVERTISE_DEFAULT, mii::CTRL1000_DEFAULT)
        );
        // One mode: 100 full only, no gigabit.
        assert_eq!(hw.advert_regs(m::T100_FULL), (0x0d01, 0x0000));
        assert_eq!(hw.advert_regs(m::T1000_FULL), (0x0c01, 0x0200));
        // Modes the chip lacks are dropped: the AR8152 has no gigabit.
        let fe = Hw::new(NicType::L2cB2, 0xc0);
        assert_eq!(
            fe.advertised_modes(m::T1000_FULL | m::T10_HALF),
            m::T10_HALF
        );
        assert_eq!(hw.supported_modes(0) & m::T1000_FULL, m::T1000_FULL);
        let mt = Hw::new(NicType::Mt, 0xc0);
        assert_eq!(mt.supported_modes(25000), m::CR25000_FULL | m::TP);
        assert_eq!(mt.supported_modes(10000), m::T10000_FULL | m::TP);
    }

    #[test]
    fn moderation_usecs_round_trip() {
        assert_eq!(usecs_to_modrt(0), Ok(0));
        assert_eq!(usecs_to_modrt(1), Ok(1));
        assert_eq!(usecs_to_modrt(2), Ok(1));
        assert_eq!(usecs_to_modrt(3), Ok(2));
        assert_eq!(usecs_to_modrt(2000), Ok(1000));
        assert_eq!(usecs_to_modrt(MODRT_MAX_US), Ok(0xffff));
        assert_eq!(
            usecs_to_modrt(MODRT_MAX_US + 1),
            Err(ModrtTooLarge { max_us: 131_070 })
        );
        assert!(usecs_to_modrt(u32::MAX).is_err());
        assert_eq!(modrt_to_usecs(1000), 2000);
        assert_eq!(modrt_to_usecs(0xffff), MODRT_MAX_US);
        // What ethtool -c reports back is the rounded request, and it is stable.
        for us in [0u32, 1, 2, 3, 99, 100, 400, 2000, 131_069] {
            let back = usecs_to_modrt(us).map(modrt_to_usecs);
            assert!(back.is_ok_and(|b| b >= us && b - us < MODRT_UNIT_US));
            assert_eq!(back.and_then(usecs_to_modrt), usecs_to_modrt(us));
        }
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
