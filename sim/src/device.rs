// SPDX-License-Identifier: GPL-2.0

//! The card: BAR0 register semantics, MDIO, interrupts with moderation and retrigger timers,
//! TPD/RFD/RRD ring processing with DMA into guest memory, MAC statistics.
//!
//! Written from the C driver's register definitions and behaviour (atl1c_hw.h, atl1c.h,
//! atl1c_main.c). The device never trusts the driver: every index and address it is given is
//! checked, and whatever does not fit is logged, counted in `protocol_errors` and ignored.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use crate::faults::{Fault, Faults};
use crate::net;
use crate::pci::ConfigSpace;
use crate::phy::Phy;
use crate::regs::{self, queue, stats, Register};
use crate::ring::{self, rrs, tpd, Rrd, Tpd, RFD_SIZE, RRD_SIZE, TPD_SIZE};

/// Which card the model is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Personality {
    /// Mikrotik 10/25G: device 0x1083, MT_MAGIC, no PHY, 4 queues, jumbo 9500.
    Mikrotik,
    /// AR8151 v2.0: device 0x1083, MDIO PHY, 1 queue, 1000 Mb/s.
    Ar8151,
}

impl Personality {
    /// Parses the command-line name.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "mikrotik" => Some(Self::Mikrotik),
            "ar8151" => Some(Self::Ar8151),
            _ => None,
        }
    }

    /// PCI device id.
    pub fn device_id(self) -> u16 {
        0x1083
    }

    /// PCI revision.
    pub fn revision(self) -> u8 {
        0xc0
    }

    /// Largest frame on the wire, without FCS (MTU 9500 or the C driver's 6 KiB jumbo limit).
    pub fn max_frame(self) -> usize {
        match self {
            Self::Mikrotik => 9500 + net::ETH_HLEN + 4,
            Self::Ar8151 => 6 * 1024 - 4,
        }
    }
}

/// What the device needs from its surroundings.
pub trait Env {
    /// Reads guest memory; false when any byte is outside guest memory.
    fn dma_read(&mut self, addr: u64, buf: &mut [u8]) -> bool;
    /// Writes guest memory; false when any byte is outside guest memory.
    fn dma_write(&mut self, addr: u64, data: &[u8]) -> bool;
    /// Puts a frame (without FCS) on the wire.
    fn transmit(&mut self, frame: &[u8]);
    /// Signals the interrupt (MSI, or INTx when MSI is off).
    fn interrupt(&mut self);
    /// Monotonic time.
    fn now(&self) -> Duration;
}

/// Counters the model exports (see Documentation/sim.rst).
#[derive(Default, Debug, Clone)]
pub struct Counters {
    /// BAR0 reads per register offset (dword aligned).
    pub mmio_reads: BTreeMap<u32, u64>,
    /// BAR0 writes per register offset (dword aligned).
    pub mmio_writes: BTreeMap<u32, u64>,
    /// Tx producer-index writes per queue.
    pub doorbells: [u64; 4],
    /// Interrupts raised.
    pub irqs: u64,
    /// Interrupts raised by tx completions that were due (their moderation timer expired, or
    /// off): what the tx timer paces. Tx status riding along another cause is not counted.
    pub irqs_tx: u64,
    /// The same for rx completions.
    pub irqs_rx: u64,
    /// Frames put on the wire, per tx queue (TSO segments counted one by one).
    pub tx_frames: [u64; 4],
    /// Bytes put on the wire, per tx queue.
    pub tx_bytes: [u64; 4],
    /// Frames received into an RFD, per rx queue.
    pub rx_frames: [u64; 4],
    /// Bytes received into RFDs, per rx queue.
    pub rx_bytes: [u64; 4],
    /// Frames dropped because no RFD was free, per rx queue.
    pub rx_dropped: [u64; 4],
    /// Frames not received for other reasons (receiver off, filtered, oversize).
    pub rx_filtered: u64,
    /// `rx_filtered` by reason, indexed by [`RxFiltered`]: every frame from the wire lands in
    /// exactly one of `rx_frames`, `rx_dropped` and `rx_filtered`.
    pub rx_filtered_by: [u64; RxFiltered::COUNT],
    /// Received frames flagged as TCP/UDP with a good checksum (Mikrotik RRD word 3 bit 19).
    pub rx_l4_csum_good: u64,
    /// TSO super-frames segmented.
    pub tso_frames: u64,
    /// Checksums inserted.
    pub csum_inserted: u64,
    /// Transmitted frames given the VLAN tag of their TPD (`INS_VTAG`).
    pub vlan_inserted: u64,
    /// Received frames whose VLAN tag went into the RRD (`MAC_CTRL_RMV_VLAN`).
    pub vlan_stripped: u64,
    /// Times the PHY was powered down (`GPHY_CTRL`; AR8151).
    pub phy_power_downs: u64,
    /// Driver protocol errors, by kind.
    pub protocol_errors: BTreeMap<&'static str, u64>,
    /// Interrupts re-sent by the retrigger timer because the driver had not acknowledged
    /// them (`INT_RETRIG_TIMER`): a driver that forgets to clear ISR relies on these.
    pub irq_retriggers: u64,
    /// MAC soft resets (`MASTER_CTRL` SOFT_RST written), completed or not.
    pub soft_resets: u64,
    /// Moves from D0 to D3hot (PMCSR written by the PCI core at suspend or shutdown).
    pub pm_d3_entries: u64,
    /// Moves from D3hot back to D0: each resets the function, every register back to its
    /// power-on value (No_Soft_Reset is clear).
    pub pm_resets: u64,
    /// Conventional resets of the function (VFIO_USER_DEVICE_RESET: QEMU's at boot, a
    /// secondary bus reset from the root port above, as AER recovery does): every register
    /// and the configuration space back at their power-on values.
    pub pci_resets: u64,
    /// Wake events: magic packets for the station address that reached the card in D3hot
    /// with `WOL_CTRL` `MAGIC_EN` armed...
    pub wol_wake_magic: u64,
    /// ... and links that came up there with `LINK_CHG_EN` armed.
    pub wol_wake_link: u64,
    /// Of those, the ones that set PME_Status (PME_En set by the PCI core).
    pub pme: u64,
}

/// Why a frame from the wire was not received (SIM_STATS `rx_filtered_reasons`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxFiltered {
    /// No link.
    LinkDown,
    /// The receiver is off (MAC_CTRL RX_EN or RXQ_CTRL EN clear: the driver stopped it).
    RxOff,
    /// Shorter than an Ethernet header.
    Runt,
    /// Not for this MAC (unicast, multicast hash, broadcast filters).
    Address,
    /// Longer than the MTU register, the card or the rx buffer allows.
    Oversize,
    /// The driver programmed the rings so that the frame could not be placed (a protocol
    /// error, counted in `protocol_errors` too).
    DriverError,
    /// The card is in D3hot: no DMA; a magic packet may wake it (`wol_wake`).
    Asleep,
}

impl RxFiltered {
    /// Number of reasons.
    pub const COUNT: usize = 7;
    /// Every reason, in index order.
    pub const ALL: [RxFiltered; Self::COUNT] = [
        Self::LinkDown,
        Self::RxOff,
        Self::Runt,
        Self::Address,
        Self::Oversize,
        Self::DriverError,
        Self::Asleep,
    ];

    /// The SIM_STATS key.
    pub fn name(self) -> &'static str {
        match self {
            Self::LinkDown => "link_down",
            Self::RxOff => "rx_off",
            Self::Runt => "runt",
            Self::Address => "address",
            Self::Oversize => "oversize",
            Self::DriverError => "driver_error",
            Self::Asleep => "asleep",
        }
    }
}

const ISR_TX: u32 = (1 << 15) | (1 << 28) | (1 << 29) | (1 << 30);
const ISR_RX: u32 = 0x000f_0000;
const ISR_DIS_INT: u32 = 1 << 31;
const MAC_STATS: usize = stats::RX_COUNT + stats::TX_COUNT;

// Indices into the MAC statistics block (struct atl1c_hw_stats order).
const RX_OK: usize = 0;
const RX_BCAST: usize = 1;
const RX_MCAST: usize = 2;
const RX_BYTE_CNT: usize = 7;
const RX_SZ_64: usize = 10;
const RX_SZ_OV: usize = 17;
const RX_RRD_OV: usize = 19;
const RX_ERR_ADDR: usize = 23;
const TX_OK: usize = stats::RX_COUNT;
const TX_BCAST: usize = TX_OK + 1;
const TX_MCAST: usize = TX_OK + 2;
const TX_BYTE_CNT: usize = TX_OK + 7;
const TX_SZ_64: usize = TX_OK + 8;
const TX_TRUNC: usize = TX_OK + 22;

/// Registers the C driver (and atl1c_rs) may touch; a write elsewhere is a protocol error.
const KNOWN: &[(u32, u32)] = &[
    (0x0000, 0x0000), // AT_WRITE_FLUSH reads offset 0
    (0x0004, 0x0004), // the driver's PCI_COMMAND mirror
    (0x0068, 0x0068), // LINK_CTRL
    (0x0080, 0x0084), // PCIE_IND_ACC
    (0x0200, 0x0200), // DEV_SERIALNUM_CTRL
    (0x0218, 0x021c), // TWSI_CTRL, PCIE_DEV_MISC_CTRL
    (0x1000, 0x1004), // PCIE_PHYMISC, PHYMISC2
    (0x1108, 0x1108), // TWSI_DEBUG
    (0x1114, 0x1114), // DMA_DBG
    (0x12c0, 0x12c4), // EEPROM
    (0x12f0, 0x12fc), // OTP_CTRL, PM_CTRL, LTSSM
    (0x1400, 0x1424), // MASTER .. SERDES
    (0x143c, 0x1448), // LPI, MDIO_EXTN
    (0x1480, 0x14a8), // MAC_CTRL .. WOL
    (0x1500, 0x1534), // SRAM partition, LOAD_PTR
    (0x1540, 0x15fc), // rings, queues, DMA, mailboxes
    (0x1600, 0x1608), // ISR, IMR, retrigger
    (0x1700, 0x17c0), // MAC statistics
    (0x1814, 0x1814), // CLK_GATING_CTRL
    (0x1900, 0x1904), // DEBUG_DATA
    (0x1f00, 0x1f1c), // Mikrotik registers, TPD rings 2/3
];

fn known(off: u32) -> bool {
    KNOWN.iter().any(|&(a, b)| (a..=b).contains(&off))
}

/// What SIM_CONTROL arms for the card's next stay in D3hot (`wake magic`, `wake link`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stimulus {
    /// A magic packet for the station address from the wire.
    Magic,
    /// The cable out, and back in.
    LinkDown,
    LinkUp,
}

/// How long after the card enters D3hot the first stimulus comes, and between the next ones.
const STIMULUS_STEP: Duration = Duration::from_millis(100);

/// The device model.
pub struct Device {
    pers: Personality,
    /// PCI configuration space.
    pub cfg: ConfigSpace,
    regs: Vec<u32>,
    phy: Phy,
    isr: u32,
    dis_int: bool,
    signalled: u32,
    last_irq: Option<Duration>,
    rx_next: Duration,
    tx_next: Duration,
    deadline: Option<Duration>,
    /// Writes to `ISR` held back, in order: when each takes effect, the value written, and
    /// whether `ack delay` held it (or it only queued behind one that was).
    late_isr: VecDeque<(Duration, u32, bool)>,
    pidx: [u16; 4],
    tpd_cons: [u16; 4],
    rfd_cons: [u16; 4],
    rrd_prod: [u16; 4],
    /// Rx ring n dropped its last frame for want of an RFD: the ring is dry, and its
    /// underrun was raised (`ISR_RFDn_UR`) when it ran dry, once until a frame fits again.
    rx_dry: [bool; 4],
    link: bool,
    /// The AR8151's PHY is powered down (`GPHY_CTRL` `PWDOWN_HW` or `PHY_IDDQ`, what
    /// `atl1c_power_saving` writes on remove, shutdown and suspend): no link, no frame on the
    /// wire either way, until a write takes it out of reset with power (`EXT_RESET`).
    phy_down: bool,
    speed: u32,
    /// Fault: the tx DMA engine hangs (doorbells are counted but nothing is fetched) until a
    /// soft reset.
    tx_hung: bool,
    /// Faults armed by [`Device::inject`] (SIM_CONTROL), and what they did.
    faults: Faults,
    mac_stats: [u32; MAC_STATS],
    /// The VPD EEPROM behind `EEPROM_CTRL` (AR8151 only; the Mikrotik NIC has none).
    eeprom: Option<Box<[u8; EEPROM_LEN]>>,
    /// The station address the card powers up with (what the EEPROM or firmware loads into
    /// `MAC_STA_ADDR`).
    perm_mac: [u8; 6],
    /// What SIM_CONTROL `wake magic` / `wake link` armed for the card's next stay in D3hot
    /// (the guest, its peer with it, is frozen then)...
    wake_on_d3: Vec<Stimulus>,
    /// ... and when each comes once it is there, [`STIMULUS_STEP`] apart.
    wake_at: VecDeque<(Duration, Stimulus)>,
    /// Exported counters.
    pub counters: Counters,
}

/// Size of the VPD EEPROM (`AT_EEPROM_LEN`).
pub const EEPROM_LEN: usize = 512;

/// The AR8151 personality's EEPROM image: the PCI vendor and device ids (little endian) at 0,
/// the station address at 8, the rest erased (0xff).
pub fn eeprom_image(device_id: u16, mac: [u8; 6]) -> [u8; EEPROM_LEN] {
    let mut e = [0xff; EEPROM_LEN];
    e[0..2].copy_from_slice(&0x1969u16.to_le_bytes());
    e[2..4].copy_from_slice(&device_id.to_le_bytes());
    e[4..8].fill(0);
    e[8..14].copy_from_slice(&mac);
    e
}

impl Device {
    /// A freshly powered card with the given personality, link up, and `mac` preloaded in
    /// `MAC_STA_ADDR` (as the firmware / EEPROM loader does).
    pub fn new(pers: Personality, mac: [u8; 6]) -> Self {
        let mut d = Self {
            pers,
            cfg: ConfigSpace::new(pers.device_id(), pers.revision()),
            regs: vec![0; regs::BAR0_SIZE / 4],
            phy: Phy::new(true),
            isr: 0,
            dis_int: false,
            signalled: 0,
            last_irq: None,
            rx_next: Duration::ZERO,
            tx_next: Duration::ZERO,
            deadline: None,
            pidx: [0; 4],
            tpd_cons: [0; 4],
            rfd_cons: [0; 4],
            rrd_prod: [0; 4],
            rx_dry: [false; 4],
            link: true,
            phy_down: false,
            tx_hung: false,
            faults: Faults::default(),
            late_isr: VecDeque::new(),
            speed: match pers {
                Personality::Mikrotik => 10000,
                Personality::Ar8151 => 1000,
            },
            mac_stats: [0; MAC_STATS],
            eeprom: match pers {
                Personality::Mikrotik => None,
                Personality::Ar8151 => Some(Box::new(eeprom_image(pers.device_id(), mac))),
            },
            perm_mac: mac,
            wake_on_d3: Vec::new(),
            wake_at: VecDeque::new(),
            counters: Counters::default(),
        };
        let (lo, hi) = regs::mac_to_regs(mac);
        d.set(regs::MAC_STA_ADDR::OFFSET, lo);
        d.set(regs::MAC_STA_ADDR_HI::OFFSET, hi);
        d
    }

    /// The personality.
    pub fn personality(&self) -> Personality {
        self.pers
    }

    /// The station address currently programmed.
    pub fn mac(&self) -> [u8; 6] {
        regs::regs_to_mac(
            self.get(regs::MAC_STA_ADDR::OFFSET),
            self.get(regs::MAC_STA_ADDR_HI::OFFSET),
        )
    }

    /// When [`Device::tick`] must run next for a held-back interrupt or `ISR` write, or a
    /// magic packet to deliver, if any.
    pub fn deadline(&self) -> Option<Duration> {
        let d = match (self.deadline, self.late_isr.front()) {
            (Some(d), Some(&(a, _, _))) => Some(d.min(a)),
            (d, a) => d.or(a.map(|&(t, _, _)| t)),
        };
        match (d, self.wake_at.front()) {
            (Some(d), Some(&(w, _))) => Some(d.min(w)),
            (d, w) => d.or(w.map(|&(t, _)| t)),
        }
    }

    /// A configuration space write. PMCSR moves the function between D0 and D3hot: in D3hot
    /// BAR0 reads all-ones and ignores writes (each access counted in `protocol_errors`
    /// `mmio_in_d3`), no DMA, no interrupt; back in D0 every register has its power-on value,
    /// as on the card (No_Soft_Reset clear), and the driver sets it up from scratch.
    pub fn config_write(&mut self, env: &mut dyn Env, offset: usize, data: &[u8]) {
        let before = self.cfg.power_state();
        self.cfg.write(offset, data);
        let after = self.cfg.power_state();
        if before == 0 && after == 3 {
            self.counters.pm_d3_entries += 1;
            let mut at = env.now();
            for s in std::mem::take(&mut self.wake_on_d3) {
                at += STIMULUS_STEP;
                self.wake_at.push_back((at, s));
            }
        } else if before == 3 && after == 0 {
            self.power_on_reset();
        }
    }

    /// Whether the function is out of D0 (asleep).
    pub fn asleep(&self) -> bool {
        self.cfg.power_state() != 0
    }

    /// The function's reset on D3hot -> D0: a freshly powered card, with its configuration
    /// space, the cable, the EEPROM, what faults are armed and the counters kept.
    fn power_on_reset(&mut self) {
        let cfg = self.fresh();
        self.cfg = cfg;
        self.counters.pm_resets += 1;
    }

    /// A conventional reset (a secondary bus reset, or QEMU's at boot): a freshly powered
    /// card, its configuration space too (the PCI core restores what it saved); the cable,
    /// the EEPROM, what faults are armed and the counters kept.
    pub fn function_reset(&mut self) {
        let _ = self.fresh();
        self.counters.pci_resets += 1;
    }

    /// Makes this a freshly powered card but for what is outside the function (the cable,
    /// the EEPROM, the test's faults, wake stimuli and counters); returns the configuration
    /// space it had.
    fn fresh(&mut self) -> ConfigSpace {
        let fresh = Device::new(self.pers, self.perm_mac);
        let old = std::mem::replace(self, fresh);
        self.counters = old.counters;
        self.faults = old.faults;
        self.eeprom = old.eeprom;
        self.wake_on_d3 = old.wake_on_d3;
        self.wake_at = old.wake_at;
        self.link = old.link;
        self.phy = Phy::new(old.link);
        old.cfg
    }

    /// SIM_CONTROL `wake magic`: a magic packet for the station address arrives from the wire
    /// [`STIMULUS_STEP`] after the card next enters D3hot.
    pub fn wake_magic(&mut self) {
        self.wake_on_d3.push(Stimulus::Magic);
    }

    /// SIM_CONTROL `wake link`: the cable goes out [`STIMULUS_STEP`] after the card next
    /// enters D3hot, and back in one step later.
    pub fn wake_link(&mut self) {
        self.wake_on_d3
            .extend([Stimulus::LinkDown, Stimulus::LinkUp]);
    }

    fn get(&self, off: usize) -> u32 {
        self.regs[off / 4]
    }

    fn set(&mut self, off: usize, v: u32) {
        self.regs[off / 4] = v;
    }

    fn reg<R: Register>(&self) -> R {
        R::from_raw(self.get(R::OFFSET))
    }

    fn error(&mut self, kind: &'static str) {
        *self.counters.protocol_errors.entry(kind).or_default() += 1;
    }

    fn mikrotik(&self) -> bool {
        self.pers == Personality::Mikrotik
    }

    fn queues(&self) -> usize {
        if self.mikrotik() && self.reg::<regs::MT_MODE>().bit(regs::MT_MODE::Q4) {
            4
        } else {
            1
        }
    }

    /// BAR0 read of `len` (1, 2, 4 or 8) bytes.
    pub fn mmio_read(&mut self, env: &mut dyn Env, off: u64, len: usize) -> u64 {
        let mut v = 0u64;
        for p in dword_pieces(off, len) {
            let word = self.read32(env, p.base);
            let part = u64::from(word >> p.shift) & ((1u64 << (p.len * 8)) - 1);
            v |= part << (p.done * 8);
        }
        v
    }

    /// BAR0 write of `len` (1, 2, 4 or 8) bytes.
    pub fn mmio_write(&mut self, env: &mut dyn Env, off: u64, len: usize, value: u64) {
        for p in dword_pieces(off, len) {
            let mask = if p.len == 4 {
                u32::MAX
            } else {
                ((1u32 << (p.len * 8)) - 1) << p.shift
            };
            let part = ((value >> (p.done * 8)) as u32) << p.shift;
            self.write32(env, p.base, part & mask, mask);
        }
    }

    fn read32(&mut self, env: &mut dyn Env, off: usize) -> u32 {
        if self.faults.removed {
            // Nobody answers: the root port completes the read with all-ones.
            return u32::MAX;
        }
        if self.asleep() {
            // D3hot: memory space does not answer (an Unsupported Request, all-ones).
            self.error("mmio_in_d3");
            return u32::MAX;
        }
        if off + 4 > regs::BAR0_SIZE {
            self.error("mmio_read_out_of_range");
            return u32::MAX;
        }
        *self.counters.mmio_reads.entry(off as u32).or_default() += 1;
        // A read does not pass the posted writes before it.
        self.apply_late_isr(env, None);
        match off {
            o if o == regs::MT_MAGIC_REG::OFFSET => {
                if self.mikrotik() {
                    regs::MT_MAGIC
                } else {
                    0
                }
            }
            o if o == regs::MT_SPEED::OFFSET && self.mikrotik() => {
                if self.link {
                    self.speed
                } else {
                    0
                }
            }
            o if o == regs::MT_VERSION::OFFSET && self.mikrotik() => 0x0001_0002,
            o if o == regs::IDLE_STATUS::OFFSET => {
                if self.faults.reset_stuck {
                    regs::IDLE_STATUS::BUSY.mask()
                } else {
                    0
                }
            }
            // atl1c_check_eeprom_exist: the TWSI bus sees the EEPROM.
            o if o == regs::TWSI_DEBUG::OFFSET && self.eeprom.is_some() => {
                regs::TWSI_DEBUG::default()
                    .with_bit(regs::TWSI_DEBUG::DEV_EXIST, true)
                    .raw()
            }
            o if o == regs::ISR::OFFSET => self.isr | if self.dis_int { ISR_DIS_INT } else { 0 },
            0x15f4 | 0x1f1c => {
                let (lo, hi) = if off == 0x15f4 { (1, 0) } else { (3, 2) };
                let cons = match self.faults.tx_cidx {
                    Some(v) => {
                        self.faults.count("tx_cidx");
                        [v; 4]
                    }
                    None => self.tpd_cons,
                };
                u32::from(cons[lo]) | (u32::from(cons[hi]) << 16)
            }
            0x15f8 => u32::from(self.rfd_cons[0]) | (u32::from(self.rfd_cons[1]) << 16),
            0x15fc => u32::from(self.rfd_cons[2]) | (u32::from(self.rfd_cons[3]) << 16),
            o if (stats::RX_BIN..=stats::TX_END).contains(&o) => {
                // Statistics clear on read.
                std::mem::take(&mut self.mac_stats[(o - stats::RX_BIN) / 4])
            }
            o => self.get(o),
        }
    }

    fn write32(&mut self, env: &mut dyn Env, off: usize, part: u32, mask: u32) {
        if self.faults.removed {
            return;
        }
        if self.asleep() {
            self.error("mmio_in_d3");
            return;
        }
        if off + 4 > regs::BAR0_SIZE {
            self.error("mmio_write_out_of_range");
            return;
        }
        *self.counters.mmio_writes.entry(off as u32).or_default() += 1;
        if !known(off as u32) {
            self.error("write_to_unknown_register");
        }
        let old = self.get(off);
        let v = (old & !mask) | part;
        match off {
            o if o == regs::MASTER_CTRL::OFFSET => {
                let r = regs::MASTER_CTRL(v);
                if r.bit(regs::MASTER_CTRL::SOFT_RST) {
                    // The writes before it land first.
                    self.apply_late_isr(env, None);
                    self.soft_reset();
                }
                self.set(o, r.with_bit(regs::MASTER_CTRL::SOFT_RST, false).raw());
                self.update_irq(env);
            }
            o if o == regs::GPHY_CTRL::OFFSET => {
                self.set(o, v);
                self.gphy_ctrl(env, regs::GPHY_CTRL(v));
            }
            o if o == regs::MDIO_CTRL::OFFSET => {
                if self.mdio(v) {
                    self.isr |= regs::ISR::GPHY.mask();
                    self.update_irq(env);
                }
            }
            o if o == regs::EEPROM_CTRL::OFFSET => self.eeprom_access(v),
            o if o == regs::TWSI_CTRL::OFFSET => {
                // A software load finishes at once, loading nothing (the EEPROM image holds no
                // register table).
                let r = regs::TWSI_CTRL(v)
                    .with_bit(regs::TWSI_CTRL::SW_LDSTART, false)
                    .with_bit(regs::TWSI_CTRL::HW_LDSTAT, false);
                self.set(o, r.raw());
            }
            o if o == regs::ISR::OFFSET => {
                match self.faults.ack_delay {
                    // Behind the writes to ISR still held back, if any.
                    Some(d) => {
                        self.faults.count("ack_delayed");
                        self.late_isr.push_back((env.now() + d, v, true));
                    }
                    None if !self.late_isr.is_empty() => {
                        self.late_isr.push_back((env.now(), v, false));
                    }
                    None => self.isr_write(env, v),
                }
            }
            o if o == regs::IMR::OFFSET => {
                self.set(o, v);
                self.update_irq(env);
            }
            o if o == regs::LOAD_PTR::OFFSET => {
                self.set(o, 0);
                // The ring pointers are reloaded with the queues stopped (after a soft reset,
                // or `atl1c_stop_mac`); under running queues the DMA engines would lose their
                // place.
                if self.reg::<regs::RXQ_CTRL>().bit(regs::RXQ_CTRL::EN)
                    || self.reg::<regs::TXQ_CTRL>().bit(regs::TXQ_CTRL::EN)
                {
                    self.error("load_ptr_with_queues_running");
                    return;
                }
                self.pidx = [0; 4];
                self.tpd_cons = [0; 4];
                self.rfd_cons = [0; 4];
                self.rx_dry = [false; 4];
                self.rrd_prod = [0; 4];
            }
            0x15f0 | 0x1f18 => {
                self.set(off, v);
                let (lo_q, hi_q) = if off == 0x15f0 { (1, 0) } else { (3, 2) };
                if mask & 0xffff != 0 {
                    self.doorbell(env, lo_q, v as u16);
                }
                if mask & 0xffff_0000 != 0 {
                    self.doorbell(env, hi_q, (v >> 16) as u16);
                }
            }
            0x15f4 | 0x1f1c | 0x15f8 | 0x15fc => self.error("write_to_read_only_index"),
            o if (stats::RX_BIN..=stats::TX_END).contains(&o) => {}
            o if o == regs::MT_MAGIC_REG::OFFSET
                || o == regs::MT_SPEED::OFFSET
                || o == regs::MT_VERSION::OFFSET =>
            {
                if !self.mikrotik() {
                    self.set(o, v);
                }
            }
            o if o == regs::TXQ_CTRL::OFFSET || o == regs::MAC_CTRL::OFFSET => {
                self.set(o, v);
                for q in 0..4 {
                    self.process_tx(env, q);
                }
            }
            o => self.set(o, v),
        }
    }

    /// A write to `ISR` takes effect: 1s clear status; bit 31 disables interrupts while set.
    fn isr_write(&mut self, env: &mut dyn Env, v: u32) {
        self.isr &= !(v & !ISR_DIS_INT);
        self.signalled &= self.isr;
        self.dis_int = v & ISR_DIS_INT != 0;
        self.update_irq(env);
    }

    /// Applies the `ISR` writes held back by `ack delay`: all of them, or (`due` given) those
    /// due by then.
    fn apply_late_isr(&mut self, env: &mut dyn Env, due: Option<Duration>) {
        while let Some(&(t, v, delayed)) = self.late_isr.front() {
            if due.is_some_and(|now| t > now) {
                return;
            }
            self.late_isr.pop_front();
            if delayed && due.is_some() {
                self.faults.count("ack_timed_out");
            }
            self.isr_write(env, v);
        }
    }

    fn soft_reset(&mut self) {
        self.counters.soft_resets += 1;
        self.faults.soft_reset();
        for r in [
            regs::TXQ_CTRL::OFFSET,
            regs::RXQ_CTRL::OFFSET,
            regs::MAC_CTRL::OFFSET,
            regs::IMR::OFFSET,
            regs::DMA_CTRL::OFFSET,
            regs::MT_MODE::OFFSET,
        ] {
            self.set(r, 0);
        }
        // The MAC's status goes, but the AR8151's PHY still holds its interrupt line until
        // the driver reads MII_ISR: the link change it signals is latched again at once.
        self.isr = if !self.mikrotik() && !self.phy_down && self.phy.irq_pending() {
            regs::ISR::GPHY.mask()
        } else {
            0
        };
        self.signalled = 0;
        self.dis_int = false;
        self.tx_hung = false;
        self.pidx = [0; 4];
        self.tpd_cons = [0; 4];
        self.rfd_cons = [0; 4];
        self.rx_dry = [false; 4];
        self.rrd_prod = [0; 4];
    }

    /// `EEPROM_CTRL` written: a read request (RW clear) of the dword at ADDR completes at once,
    /// setting RW (done), DATA_HI and `EEPROM_DATA_LO` the way `atl1c_read_eeprom` decodes
    /// them: bytes 0-1 in DATA_HI (big endian), bytes 2-3 in the top half of DATA_LO.
    fn eeprom_access(&mut self, v: u32) {
        use regs::EEPROM_CTRL as E;
        let r = E(v);
        let Some(e) = self.eeprom.as_ref() else {
            // No EEPROM: the request is never answered.
            self.set(E::OFFSET, v);
            return;
        };
        if r.bit(E::RW) {
            self.error("eeprom_write");
            self.set(E::OFFSET, v);
            return;
        }
        let a = (r.field(E::ADDR) & !3) as usize;
        let b = |i: usize| u32::from(e.get(a + i).copied().unwrap_or(0xff));
        let hi = (b(0) << 8) | b(1);
        let lo = (b(2) << 24) | (b(3) << 16);
        self.set(
            E::OFFSET,
            r.with_bit(E::RW, true).with_field(E::DATA_HI, hi).raw(),
        );
        self.set(regs::EEPROM_DATA_LO::OFFSET, lo);
    }

    /// An MDIO transaction; returns whether the PHY raised its interrupt.
    fn mdio(&mut self, v: u32) -> bool {
        let r = regs::MDIO_CTRL(v);
        if !r.bit(regs::MDIO_CTRL::START) {
            self.set(regs::MDIO_CTRL::OFFSET, v);
            return false;
        }
        if self.faults.mdio_stuck {
            // The transaction never completes: START and BUSY stay set, nothing is done.
            self.faults.count("mdio_stuck");
            self.set(
                regs::MDIO_CTRL::OFFSET,
                r.with_bit(regs::MDIO_CTRL::BUSY, true).raw(),
            );
            return false;
        }
        let mut irq = false;
        let read = r.bit(regs::MDIO_CTRL::OP_READ);
        let mut data = r.field(regs::MDIO_CTRL::DATA) as u16;
        if self.mikrotik() {
            // No PHY behind MDIO on the Mikrotik NIC: reads return all ones.
            if read {
                data = 0xffff;
            }
        } else if r.bit(regs::MDIO_CTRL::MODE_EXT) {
            let ext = regs::MDIO_EXTN(self.get(regs::MDIO_EXTN::OFFSET));
            let devad = ext.field(regs::MDIO_EXTN::DEVAD) as u8;
            let reg = ext.field(regs::MDIO_EXTN::REG) as u16;
            if read {
                data = self.phy.read_ext(devad, reg);
            } else {
                self.phy.write_ext(devad, reg, data);
            }
        } else {
            let reg = r.field(regs::MDIO_CTRL::REG) as u8;
            if read {
                data = self.phy.read(reg);
            } else {
                irq = self.phy.write(reg, data);
            }
        }
        let done = r
            .with_bit(regs::MDIO_CTRL::START, false)
            .with_bit(regs::MDIO_CTRL::BUSY, false)
            .with_field(regs::MDIO_CTRL::DATA, u32::from(data));
        self.set(regs::MDIO_CTRL::OFFSET, done.raw());
        irq
    }

    /// Link state.
    pub fn link(&self) -> bool {
        self.link
    }

    /// Whether frames pass between the MAC and the wire: a link, and a PHY with power.
    fn wire_up(&self) -> bool {
        self.link && !self.phy_down
    }

    /// Whether the PHY is powered down.
    pub fn phy_powered_down(&self) -> bool {
        self.phy_down
    }

    /// A `GPHY_CTRL` write (AR8151; the Mikrotik NIC has no PHY there): `PWDOWN_HW` or
    /// `PHY_IDDQ` powers the PHY down, its link drops without an interrupt; a later write
    /// that clears both and takes the PHY out of reset (`EXT_RESET`, as `atl1c_phy_reset`
    /// does) powers it up, and it links again if the cable is in.
    fn gphy_ctrl(&mut self, env: &mut dyn Env, r: regs::GPHY_CTRL) {
        use regs::GPHY_CTRL as G;
        if self.mikrotik() {
            return;
        }
        let off = r.bit(G::PWDOWN_HW) || r.bit(G::PHY_IDDQ);
        if off && !self.phy_down {
            self.phy_down = true;
            self.counters.phy_power_downs += 1;
            let _ = self.phy.set_link(false);
        } else if !off && self.phy_down && r.bit(G::EXT_RESET) {
            self.phy_down = false;
            if self.link && self.phy.set_link(true) {
                self.isr |= regs::ISR::GPHY.mask();
                self.update_irq(env);
            }
        }
    }

    /// Takes the link up or down (cable / link partner), raising the link interrupt the way the
    /// hardware does: ISR_GPHY (through the PHY's interrupt enable on AR8151).
    pub fn set_link(&mut self, env: &mut dyn Env, up: bool) {
        if self.link == up {
            return;
        }
        self.link = up;
        if self.asleep() {
            self.link_change_asleep(up);
            return;
        }
        let raise = if self.mikrotik() {
            true
        } else if self.phy_down {
            // A PHY without power sees no cable and raises nothing.
            false
        } else {
            self.phy.set_link(up)
        };
        if raise {
            self.isr |= regs::ISR::GPHY.mask();
            self.update_irq(env);
        }
    }

    /// The cable moved while the card is in D3hot: no interrupt. A PHY with power sees it
    /// (the AR8151's powers down without wake-up armed), and the link coming up is a wake event
    /// with `WOL_CTRL` `LINK_CHG_EN` (`atl1c_power_saving` enables only the PHY's link-up
    /// interrupt): `LNKCHG_ST` set, and PME_Status with `LINK_CHG_PME_EN` and PME_En.
    fn link_change_asleep(&mut self, up: bool) {
        use regs::WOL_CTRL as W;
        if !self.mikrotik() && !self.phy_down {
            let _ = self.phy.set_link(up);
        }
        let wol = self.reg::<W>();
        if !up || !self.wire_up() || !wol.bit(W::LINK_CHG_EN) {
            return;
        }
        self.counters.wol_wake_link += 1;
        self.wake_event(W::LNKCHG_ST, W::LINK_CHG_PME_EN);
    }

    /// A wake event in D3hot: its status bit set in `WOL_CTRL`, and PME_Status if its PME
    /// enable is set there and the PCI core enabled PME.
    fn wake_event(&mut self, status: regs::Bit, pme_en: regs::Bit) {
        use regs::WOL_CTRL as W;
        let wol = self.reg::<W>();
        self.set(W::OFFSET, wol.with_bit(status, true).raw());
        if wol.bit(pme_en) && self.cfg.pme() {
            self.counters.pme += 1;
        }
    }

    /// Fault injection: hangs the tx engine until the driver soft-resets the MAC.
    pub fn hang_tx(&mut self) {
        self.tx_hung = true;
    }

    /// Injects `fault` (a SIM_CONTROL command).
    pub fn inject(&mut self, env: &mut dyn Env, fault: Fault) {
        match fault {
            Fault::TxHang => self.hang_tx(),
            Fault::DmaError => {
                self.faults.count("dma_error");
                self.isr |= regs::ISR::DMAR_TO_RST.mask() | regs::ISR::DMAW_TO_RST.mask();
                self.update_irq(env);
            }
            Fault::MdioOk => {
                // The stuck transaction is abandoned: MDIO_CTRL reads idle again.
                self.faults.arm(Fault::MdioOk);
                let r = regs::MDIO_CTRL(self.get(regs::MDIO_CTRL::OFFSET))
                    .with_bit(regs::MDIO_CTRL::BUSY, false)
                    .with_bit(regs::MDIO_CTRL::START, false);
                self.set(regs::MDIO_CTRL::OFFSET, r.raw());
            }
            f => self.faults.arm(f),
        }
    }

    /// The faults armed and what they did.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    fn doorbell(&mut self, env: &mut dyn Env, q: usize, pidx: u16) {
        self.counters.doorbells[q] += 1;
        self.pidx[q] = pidx;
        self.process_tx(env, q);
    }

    fn tx_enabled(&self) -> bool {
        self.reg::<regs::TXQ_CTRL>().bit(regs::TXQ_CTRL::EN)
            && self.reg::<regs::MAC_CTRL>().bit(regs::MAC_CTRL::TX_EN)
    }

    fn tpd_base(&self, q: usize) -> u64 {
        (u64::from(self.get(regs::TX_BASE_ADDR_HI::OFFSET)) << 32)
            | u64::from(self.get(queue::TPD_ADDR_LO[q]))
    }

    fn process_tx(&mut self, env: &mut dyn Env, q: usize) {
        // PRI0 and PRI1 always exist; PRI2/PRI3 only in the Mikrotik NIC's 4-queue mode.
        if self.tx_hung
            || self.faults.removed
            || !self.tx_enabled()
            || (q >= 2 && self.queues() < 4)
        {
            return;
        }
        let count = self
            .reg::<regs::TPD_RING_SIZE>()
            .field(regs::TPD_RING_SIZE::SIZE) as u16;
        let Some(ring) = ring::RingIndex::new(count) else {
            return;
        };
        let pidx = self.pidx[q];
        if !ring.contains(pidx) {
            self.error("tpd_producer_out_of_range");
            return;
        }
        if !self.cfg.bus_master() {
            self.error("dma_without_bus_master");
            return;
        }
        // The tx DMA engine reads in requests of DMA_CTRL RREQ_BLEN (128 << n bytes); one above
        // the Max_Read_Request_Size in DEVCTL is a malformed TLP on PCIe. The C driver clamps
        // the block to pcie_get_readrq() (and raises a readrq below 512 to 512).
        let rreq = 128u32
            << self
                .reg::<regs::DMA_CTRL>()
                .field(regs::DMA_CTRL::RREQ_BLEN);
        if rreq > self.cfg.max_read_request() {
            self.error("dma_read_above_mrrs");
        }
        let base = self.tpd_base(q);
        let mut completed = false;
        while self.tpd_cons[q] != pidx {
            // Gather one frame: TPDs up to the one with EOP.
            let mut descs = Vec::new();
            let mut i = self.tpd_cons[q];
            let mut eop = false;
            while i != pidx {
                let mut b = [0u8; TPD_SIZE];
                if !env.dma_read(base + u64::from(i) * TPD_SIZE as u64, &mut b) {
                    self.error("dma_outside_guest_memory");
                    return;
                }
                let t = Tpd::from_bytes(&b);
                descs.push(t);
                i = ring.next(i);
                if t.bit(tpd::EOP) {
                    eop = true;
                    break;
                }
            }
            if !eop {
                // The rest of the frame has not been posted yet.
                break;
            }
            self.tpd_cons[q] = i;
            completed = true;
            self.transmit_frame(env, q, &descs);
        }
        if completed {
            self.isr |= regs::ISR_TX_PKT[q];
            self.update_irq(env);
        }
    }

    fn transmit_frame(&mut self, env: &mut dyn Env, q: usize, descs: &[Tpd]) {
        let mut descs = descs;
        // LSO v2 (IPv6): the first TPD is the extension descriptor, carrying no buffer.
        if descs.len() > 1 && descs[0].bit(tpd::LSO_EN) && descs[0].bit(tpd::LSO_VER) {
            descs = &descs[1..];
        }
        let first = descs[0];
        let mut frame = Vec::new();
        for t in descs {
            let len = usize::from(t.buffer_len);
            let start = frame.len();
            frame.resize(start + len, 0);
            if len > 0 && !env.dma_read(t.buffer_addr, &mut frame[start..]) {
                self.error("dma_outside_guest_memory");
                return;
            }
        }
        let mut out = if first.bit(tpd::LSO_EN) {
            let tcp = first.field(tpd::L4HDR_OFFSET) as usize;
            let mss = first.field(tpd::MSS) as usize;
            match net::tso(&frame, tcp, mss) {
                Some(segs) => {
                    self.counters.tso_frames += 1;
                    segs
                }
                None => {
                    self.error("tso_unparsable_frame");
                    return;
                }
            }
        } else {
            if first.bit(tpd::CCSUM_EN) {
                let start = first.field(tpd::L4HDR_OFFSET) as usize * 2;
                let at = first.field(tpd::CCSUM_OFFSET) as usize * 2;
                if net::insert_csum(&mut frame, start, at).is_some() {
                    self.counters.csum_inserted += 1;
                } else {
                    self.error("csum_offsets_outside_frame");
                }
            }
            vec![frame]
        };
        if first.bit(tpd::INS_VTAG) {
            let tci = first.vlan_tag.swap_bytes();
            out = out.iter().map(|f| net::insert_vlan(f, tci)).collect();
            self.counters.vlan_inserted += out.len() as u64;
        }
        let mtu = self.get(regs::MTU::OFFSET) as usize;
        for mut f in out {
            if f.len() < 60 {
                f.resize(60, 0);
            }
            if f.len() > self.pers.max_frame() + 4 || (mtu != 0 && f.len() + 4 > mtu) {
                self.mac_stats[TX_TRUNC] += 1;
                self.error("tx_frame_exceeds_mtu");
                continue;
            }
            if !self.wire_up() {
                continue;
            }
            env.transmit(&f);
            self.counters.tx_frames[q] += 1;
            self.counters.tx_bytes[q] += f.len() as u64;
            self.mac_stats[TX_OK] += 1;
            self.mac_stats[TX_BYTE_CNT] += f.len() as u32;
            if f[0] & 1 != 0 {
                let bucket = if f[..6] == [0xff; 6] {
                    TX_BCAST
                } else {
                    TX_MCAST
                };
                self.mac_stats[bucket] += 1;
            }
            self.mac_stats[TX_SZ_64 + size_bucket(f.len() + 4)] += 1;
        }
    }

    /// A frame reached the card in D3hot: a magic packet for the station address, with
    /// `WOL_CTRL` `MAGIC_EN` armed and the MAC's receiver left on (`atl1c_power_saving`), is a
    /// wake event: `MAGIC_ST` set, and PME_Status if the PCI core enabled PME.
    fn wake_on(&mut self, frame: &[u8]) {
        use regs::WOL_CTRL as W;
        let wol = self.reg::<W>();
        let armed = wol.bit(W::MAGIC_EN)
            && self.reg::<regs::MAC_CTRL>().bit(regs::MAC_CTRL::RX_EN)
            && self.accepts(frame);
        if !armed || !net::is_magic_packet(frame, &self.mac()) {
            return;
        }
        self.counters.wol_wake_magic += 1;
        self.wake_event(W::MAGIC_ST, W::MAGIC_PME_EN);
    }

    fn rx_enabled(&self) -> bool {
        self.reg::<regs::RXQ_CTRL>().bit(regs::RXQ_CTRL::EN)
            && self.reg::<regs::MAC_CTRL>().bit(regs::MAC_CTRL::RX_EN)
    }

    fn accepts(&self, f: &[u8]) -> bool {
        let mac = self.reg::<regs::MAC_CTRL>();
        if mac.bit(regs::MAC_CTRL::PROMIS_EN) {
            return true;
        }
        let dst = &f[..6];
        if dst == [0xff; 6] {
            return mac.bit(regs::MAC_CTRL::BC_EN);
        }
        if dst[0] & 1 != 0 {
            if mac.bit(regs::MAC_CTRL::MC_ALL_EN) {
                return true;
            }
            // atl1c_hash_mc_addr: bit-reversed little-endian CRC; bit 31 picks the word,
            // bits 30:26 the bit.
            let h = (!net::crc32(dst)).reverse_bits();
            let word = self.get(regs::RX_HASH_TABLE::OFFSET + 4 * (h >> 31) as usize);
            return word & (1 << ((h >> 26) & 0x1f)) != 0;
        }
        dst == self.mac()
    }

    /// A frame arrives from the wire (without FCS).
    pub fn receive(&mut self, env: &mut dyn Env, frame: &[u8]) {
        if let Err(why) = self.place(env, frame) {
            self.counters.rx_filtered += 1;
            self.counters.rx_filtered_by[why as usize] += 1;
        }
    }

    /// Receives `frame` into an RFD (or drops it for want of one, counted in `rx_dropped`);
    /// the reason it was not received otherwise.
    fn place(&mut self, env: &mut dyn Env, frame: &[u8]) -> Result<(), RxFiltered> {
        // A card that is gone has no link either.
        if !self.wire_up() || self.faults.removed {
            return Err(RxFiltered::LinkDown);
        }
        if self.asleep() {
            self.wake_on(frame);
            return Err(RxFiltered::Asleep);
        }
        if !self.rx_enabled() {
            return Err(RxFiltered::RxOff);
        }
        if frame.len() < net::ETH_HLEN {
            return Err(RxFiltered::Runt);
        }
        if !self.accepts(frame) {
            self.mac_stats[RX_ERR_ADDR] += 1;
            return Err(RxFiltered::Address);
        }
        let mtu = self.get(regs::MTU::OFFSET) as usize;
        if frame.len() + 4 > mtu || frame.len() > self.pers.max_frame() {
            self.mac_stats[RX_SZ_OV] += 1;
            return Err(RxFiltered::Oversize);
        }
        let mut f = frame.to_vec();
        let mut vlan = None;
        if self.reg::<regs::MAC_CTRL>().bit(regs::MAC_CTRL::RMV_VLAN) {
            vlan = net::strip_vlan(&mut f);
        }
        let q = if self.queues() > 1 {
            (net::flow_hash(&f) % self.queues() as u32) as usize
        } else {
            0
        };
        let (rfd_count, rrd_count) = self.rx_ring_sizes();
        let (Some(rfd_ring), Some(rrd_ring)) = (
            ring::RingIndex::new(rfd_count),
            ring::RingIndex::new(rrd_count),
        ) else {
            self.error("rx_ring_size_invalid");
            return Err(RxFiltered::DriverError);
        };
        let prod = self.get(queue::RFD_PROD_IDX[q]) as u16;
        if !rfd_ring.contains(prod) {
            self.error("rfd_producer_out_of_range");
            return Err(RxFiltered::DriverError);
        }
        let cons = self.rfd_cons[q];
        if rfd_ring.used(prod, cons) == 0 {
            self.counters.rx_dropped[q] += 1;
            self.mac_stats[RX_RRD_OV] += 1;
            // The ring ran dry: the underrun status is raised once, on the first frame it
            // drops, and again only after a frame has fitted.
            if !self.rx_dry[q] {
                self.rx_dry[q] = true;
                if self.faults.no_underrun {
                    self.faults.count("underrun_off");
                } else {
                    self.isr |= regs::ISR_RFD_UR[q];
                    self.update_irq(env);
                }
            }
            return Ok(());
        }
        self.rx_dry[q] = false;
        if !self.cfg.bus_master() {
            self.error("dma_without_bus_master");
            return Err(RxFiltered::DriverError);
        }
        let buf_len = self
            .reg::<regs::RX_BUF_SIZE>()
            .field(regs::RX_BUF_SIZE::SIZE) as usize;
        if f.len() + 4 > buf_len {
            // Frames spanning several RFDs are not modelled (the C driver cannot take them).
            self.mac_stats[RX_SZ_OV] += 1;
            self.error("rx_frame_exceeds_rx_buf_size");
            return Err(RxFiltered::Oversize);
        }
        let rx_hi = u64::from(self.get(regs::RX_BASE_ADDR_HI::OFFSET)) << 32;
        let rfd_addr = (rx_hi | u64::from(self.get(queue::RFD_HEAD_ADDR_LO[q])))
            + u64::from(cons) * RFD_SIZE as u64;
        let mut b = [0u8; RFD_SIZE];
        if !env.dma_read(rfd_addr, &mut b) {
            self.error("dma_outside_guest_memory");
            return Err(RxFiltered::DriverError);
        }
        let buf = ring::Rfd::from_bytes(&b).buffer_addr;
        if !ring::rx_buffer_usable(buf) {
            // The card's erratum (atl1c_alloc_rx_buffer): a buffer at 0x...fc0 is very likely
            // to overflow. The model counts it and writes the frame as if it had not.
            self.error("rx_buffer_at_fc0");
        }
        let fcs = net::crc32(&f).to_le_bytes();
        let mut data = f.clone();
        data.extend_from_slice(&fcs);
        if !env.dma_write(buf, &data) {
            self.error("dma_outside_guest_memory");
            return Err(RxFiltered::DriverError);
        }
        let len = data.len() as u32;
        let mut word3 = len | rrs::RXD_UPDATED.mask();
        if f[0] & 1 != 0 {
            word3 |= if f[..6] == [0xff; 6] {
                rrs::PACKET_BCAST.mask()
            } else {
                rrs::PACKET_MCAST.mask()
            };
        }
        if self.mikrotik() && net::l4_csum_ok(&f) {
            word3 |= rrs::MT_PROT_ID_TCPUDP.mask();
            self.counters.rx_l4_csum_good += 1;
        }
        let mut rrd = Rrd {
            word0: (u32::from(cons) << 20)
                | (1 << 16)
                | u32::from(net::csum_fold(net::csum_add(0, &f))),
            rss_hash: net::flow_hash(&f),
            vlan_tag: 0,
            flag: 0,
            word3,
        };
        if let Some(tci) = vlan {
            rrd.word3 |= rrs::VLAN_INS.mask();
            rrd.vlan_tag = tci.swap_bytes();
            self.counters.vlan_stripped += 1;
        }
        // CAST: the RX_BUF_SIZE field is 14 bits.
        self.faults.rrd(&mut rrd, buf_len as u32);
        let rrd_idx = self.rrd_prod[q];
        let rrd_addr = (rx_hi | u64::from(self.get(queue::RRD_HEAD_ADDR_LO[q])))
            + u64::from(rrd_idx) * RRD_SIZE as u64;
        if !env.dma_write(rrd_addr, &rrd.to_bytes()) {
            self.error("dma_outside_guest_memory");
            return Err(RxFiltered::DriverError);
        }
        self.rfd_cons[q] = rfd_ring.next(cons);
        self.rrd_prod[q] = rrd_ring.next(rrd_idx);
        self.counters.rx_frames[q] += 1;
        self.counters.rx_bytes[q] += f.len() as u64;
        self.mac_stats[RX_OK] += 1;
        self.mac_stats[RX_BYTE_CNT] += f.len() as u32;
        if word3 & rrs::PACKET_BCAST.mask() != 0 {
            self.mac_stats[RX_BCAST] += 1;
        } else if word3 & rrs::PACKET_MCAST.mask() != 0 {
            self.mac_stats[RX_MCAST] += 1;
        }
        self.mac_stats[RX_SZ_64 + size_bucket(data.len())] += 1;
        self.isr |= regs::ISR_RX_PKT[q];
        self.update_irq(env);
        Ok(())
    }

    fn timers(&self) -> (Option<Duration>, Option<Duration>) {
        let m = self.reg::<regs::MASTER_CTRL>();
        let t = self.reg::<regs::IRQ_MODRT_TIMER_INIT>();
        let us2 = |v: u32| Duration::from_micros(u64::from(v) * 2);
        let tx = (m.bit(regs::MASTER_CTRL::TX_ITIMER_EN)
            && t.field(regs::IRQ_MODRT_TIMER_INIT::TX) != 0)
            .then(|| us2(t.field(regs::IRQ_MODRT_TIMER_INIT::TX)));
        let rx = (m.bit(regs::MASTER_CTRL::RX_ITIMER_EN)
            && t.field(regs::IRQ_MODRT_TIMER_INIT::RX) != 0)
            .then(|| us2(t.field(regs::IRQ_MODRT_TIMER_INIT::RX)));
        (tx, rx)
    }

    /// Re-evaluates the interrupt line: raises the MSI for newly pending, unmasked status,
    /// holding tx/rx completions back until their moderation timer allows.
    fn update_irq(&mut self, env: &mut dyn Env) {
        self.deadline = None;
        if self.dis_int || self.faults.removed {
            return;
        }
        let eligible = self.isr & self.get(regs::IMR::OFFSET);
        let pending = eligible & !self.signalled;
        if pending == 0 {
            return;
        }
        let now = env.now();
        let (tx_imt, rx_imt) = self.timers();
        let tx_due = pending & ISR_TX != 0 && (tx_imt.is_none() || now >= self.tx_next);
        let rx_due = pending & ISR_RX != 0 && (rx_imt.is_none() || now >= self.rx_next);
        let immediate = pending & !(ISR_TX | ISR_RX) != 0 || tx_due || rx_due;
        if !immediate {
            let mut d: Option<Duration> = None;
            if pending & ISR_TX != 0 {
                d = Some(self.tx_next);
            }
            if pending & ISR_RX != 0 {
                d = Some(d.map_or(self.rx_next, |x| x.min(self.rx_next)));
            }
            self.deadline = d;
            return;
        }
        self.fire(env, eligible, now, (tx_imt, tx_due), (rx_imt, rx_due));
    }

    /// Raises the interrupt for `eligible` status; `tx`/`rx`: the direction's moderation timer
    /// and whether its completions are what raise this interrupt (counted in `irqs_tx` /
    /// `irqs_rx`; status that only rides along is not).
    fn fire(
        &mut self,
        env: &mut dyn Env,
        eligible: u32,
        now: Duration,
        (tx_imt, tx_due): (Option<Duration>, bool),
        (rx_imt, rx_due): (Option<Duration>, bool),
    ) {
        self.signalled |= eligible;
        self.last_irq = Some(now);
        if eligible & ISR_TX != 0 {
            self.tx_next = now + tx_imt.unwrap_or_default();
        }
        if eligible & ISR_RX != 0 {
            self.rx_next = now + rx_imt.unwrap_or_default();
        }
        if self.faults.lose_irq() {
            return;
        }
        self.counters.irqs += 1;
        if tx_due {
            self.counters.irqs_tx += 1;
        }
        if rx_due {
            self.counters.irqs_rx += 1;
        }
        env.interrupt();
    }

    /// Runs timers due at `env.now()`: moderation hold-offs that expired and the retrigger of
    /// an interrupt the driver has not acknowledged. Returns when to call again.
    pub fn tick(&mut self, env: &mut dyn Env) -> Option<Duration> {
        if self.faults.removed {
            return None;
        }
        let now = env.now();
        while let Some(&(_, s)) = self.wake_at.front().filter(|&&(t, _)| now >= t) {
            self.wake_at.pop_front();
            match s {
                Stimulus::Magic => {
                    let frame = net::magic_packet(&self.mac());
                    self.receive(env, &frame);
                }
                Stimulus::LinkDown => self.set_link(env, false),
                Stimulus::LinkUp => self.set_link(env, true),
            }
        }
        if self.asleep() {
            // No interrupt, no timer: what was pending waits for the reset on the way out.
            return self.wake_at.front().map(|&(t, _)| t);
        }
        self.apply_late_isr(env, Some(now));
        if let Some(d) = self.deadline {
            if now >= d {
                self.update_irq(env);
            }
        }
        let retrig = self.get(regs::INT_RETRIG_TIMER::OFFSET) & 0xffff;
        let eligible = self.isr & self.get(regs::IMR::OFFSET);
        let mut next = self.deadline();
        if retrig != 0 && !self.dis_int && eligible & self.signalled != 0 {
            let period = Duration::from_micros(u64::from(retrig) * 2);
            let due = self.last_irq.unwrap_or(now) + period;
            if now >= due {
                // A retrigger: nothing new is due.
                self.counters.irq_retriggers += 1;
                let (tx, rx) = self.timers();
                self.fire(env, eligible, now, (tx, false), (rx, false));
                next = Some(next.map_or(now + period, |n| n.min(now + period)));
            } else {
                next = Some(next.map_or(due, |n| n.min(due)));
            }
        }
        next
    }

    /// Counters and a few state values as JSON.
    pub fn stats_json(&self) -> serde_json::Value {
        let c = &self.counters;
        let by_reg = |m: &BTreeMap<u32, u64>| {
            serde_json::Value::Object(
                m.iter()
                    .map(|(k, v)| (format!("{k:#06x}"), serde_json::Value::from(*v)))
                    .collect(),
            )
        };
        let sum = |a: &[u64; 4]| a.iter().sum::<u64>();
        serde_json::json!({
            "personality": match self.pers {
                Personality::Mikrotik => "mikrotik",
                Personality::Ar8151 => "ar8151",
            },
            "link": self.link,
            "phy_powered_down": self.phy_down,
            "phy_power_downs": c.phy_power_downs,
            "tx_hung": self.tx_hung,
            "reset_stuck": self.faults.reset_stuck,
            "faults": self.faults.injected,
            "irq_retriggers": c.irq_retriggers,
            "soft_resets": c.soft_resets,
            "mmio_reads": c.mmio_reads.values().sum::<u64>(),
            "mmio_writes": c.mmio_writes.values().sum::<u64>(),
            "mmio_reads_by_reg": by_reg(&c.mmio_reads),
            "mmio_writes_by_reg": by_reg(&c.mmio_writes),
            "doorbells": c.doorbells,
            "irqs": c.irqs,
            "irqs_tx": c.irqs_tx,
            "irqs_rx": c.irqs_rx,
            "moderation_us": {
                "tx": self.timers().0.map_or(0, |d| d.as_micros() as u64),
                "rx": self.timers().1.map_or(0, |d| d.as_micros() as u64),
            },
            "tx_frames": sum(&c.tx_frames),
            "tx_bytes": sum(&c.tx_bytes),
            "rx_frames": sum(&c.rx_frames),
            "rx_bytes": sum(&c.rx_bytes),
            "rx_dropped": sum(&c.rx_dropped),
            "tx_frames_per_queue": c.tx_frames,
            "rx_frames_per_queue": c.rx_frames,
            "rx_dropped_per_queue": c.rx_dropped,
            "rx_filtered": c.rx_filtered,
            "rx_filtered_reasons": RxFiltered::ALL
                .iter()
                .map(|r| (r.name(), c.rx_filtered_by[*r as usize]))
                .collect::<BTreeMap<_, _>>(),
            "rx_l4_csum_good": c.rx_l4_csum_good,
            "tso_frames": c.tso_frames,
            "csum_inserted": c.csum_inserted,
            "vlan_inserted": c.vlan_inserted,
            "vlan_stripped": c.vlan_stripped,
            "protocol_errors": c.protocol_errors,
            "rings": self.rings_json(),
            "state": self.state_json(),
            "pm": self.pm_json(),
            "pci": {"resets": c.pci_resets},
        })
    }

    /// Power management and wake-up (see Documentation/sim.rst).
    fn pm_json(&self) -> serde_json::Value {
        use regs::WOL_CTRL as W;
        let c = &self.counters;
        let wol = self.reg::<W>();
        let pme = self.cfg.pme_enabled();
        serde_json::json!({
            "power_state": self.cfg.power_state(),
            "d3_entries": c.pm_d3_entries,
            "resets": c.pm_resets,
            "wol_wake": c.wol_wake_magic + c.wol_wake_link,
            "wol_wake_by": {"magic": c.wol_wake_magic, "link_change": c.wol_wake_link},
            "pme": c.pme,
            "pme_enabled": pme,
            // What would signal PME now: a magic packet (with the receiver on), a link change.
            "wake_armed": {
                "magic": pme && wol.bit(W::MAGIC_EN) && wol.bit(W::MAGIC_PME_EN)
                    && self.reg::<regs::MAC_CTRL>().bit(regs::MAC_CTRL::RX_EN),
                "link_change": pme && wol.bit(W::LINK_CHG_EN) && wol.bit(W::LINK_CHG_PME_EN),
            },
        })
    }

    /// The rx rings as the driver left them in guest memory, one line per queue: the ring
    /// indices, then each RRD the card marked updated and not yet cleared by the driver
    /// (`index:rfd_index`) and each RFD slot with no buffer address (SIM_CONTROL `dump rx`,
    /// written to the model's log: a diagnostic for a stalled receiver).
    pub fn dump_rx(&self, env: &mut dyn Env) -> String {
        let (rfd_count, rrd_count) = self.rx_ring_sizes();
        let (rfd_count, rrd_count) = (u64::from(rfd_count), u64::from(rrd_count));
        let rx_hi = u64::from(self.get(regs::RX_BASE_ADDR_HI::OFFSET)) << 32;
        let mut out = String::new();
        for q in 0..self.queues().clamp(1, 4) {
            let rrd_base = rx_hi | u64::from(self.get(queue::RRD_HEAD_ADDR_LO[q]));
            let rfd_base = rx_hi | u64::from(self.get(queue::RFD_HEAD_ADDR_LO[q]));
            let mut updated = Vec::new();
            for i in 0..rrd_count {
                let mut b = [0u8; RRD_SIZE];
                if env.dma_read(rrd_base + i * RRD_SIZE as u64, &mut b) {
                    let r = Rrd::from_bytes(&b);
                    if r.word3 & rrs::RXD_UPDATED.mask() != 0 {
                        updated.push(format!("{i}:{}", r.word0 >> 20));
                    }
                }
            }
            let mut empty = Vec::new();
            for i in 0..rfd_count {
                let mut b = [0u8; RFD_SIZE];
                if env.dma_read(rfd_base + i * RFD_SIZE as u64, &mut b)
                    && ring::Rfd::from_bytes(&b).buffer_addr == 0
                {
                    empty.push(i.to_string());
                }
            }
            out += &format!(
                "atl1c-sim: rx{q}: rfd_prod {} rfd_cons {} rrd_prod {}; rrd updated [{}]; rfd empty [{}]\n",
                self.get(queue::RFD_PROD_IDX[q]) & 0xffff,
                self.rfd_cons[q],
                self.rrd_prod[q],
                updated.join(" "),
                empty.join(" "),
            );
        }
        out
    }

    /// The interrupt and ring state now, for telling a stalled driver from a stalled card:
    /// pending status, the mask, what was signalled and not yet acknowledged, whether a
    /// moderation hold-off is running, and each queue's RFD producer (the driver's) and
    /// consumer and RRD producer (the card's).
    fn state_json(&self) -> serde_json::Value {
        let q = self.queues().clamp(1, 4);
        serde_json::json!({
            "isr": self.isr,
            "imr": self.get(regs::IMR::OFFSET),
            "signalled": self.signalled,
            "dis_int": self.dis_int,
            "holdoff": self.deadline.is_some(),
            "rfd_prod": (0..q).map(|i| self.get(queue::RFD_PROD_IDX[i]) & 0xffff).collect::<Vec<_>>(),
            "rfd_cons": &self.rfd_cons[..q],
            "rrd_prod": &self.rrd_prod[..q],
        })
    }

    /// The RFD and RRD ring sizes the driver programmed (the same for every queue).
    fn rx_ring_sizes(&self) -> (u16, u16) {
        // CAST: the SIZE fields are 12 bits wide.
        let rfd = self
            .reg::<regs::RFD_RING_SIZE>()
            .field(regs::RFD_RING_SIZE::SIZE) as u16;
        let rrd = self
            .reg::<regs::RRD_RING_SIZE>()
            .field(regs::RRD_RING_SIZE::SIZE) as u16;
        (rfd, rrd)
    }

    /// The ring geometry the driver programmed, per queue, and the memory it hands the card:
    /// descriptor rings (TPD, RFD, RRD) and the rx buffers the RFDs point at, in bytes.
    fn rings_json(&self) -> serde_json::Value {
        let tpd = self
            .reg::<regs::TPD_RING_SIZE>()
            .field(regs::TPD_RING_SIZE::SIZE) as usize;
        let (rfd, rrd) = self.rx_ring_sizes();
        let (rfd, rrd) = (usize::from(rfd), usize::from(rrd));
        let buf = self
            .reg::<regs::RX_BUF_SIZE>()
            .field(regs::RX_BUF_SIZE::SIZE) as usize;
        serde_json::json!({
            "queues": self.queues(),
            "tpd": tpd,
            "rfd": rfd,
            "rrd": rrd,
            "rx_buf_size": buf,
            "descriptor_bytes_per_queue": tpd * TPD_SIZE + rfd * RFD_SIZE + rrd * RRD_SIZE,
            "rx_buffer_bytes_per_queue": rfd * buf,
        })
    }
}

/// The part of an access of `len` bytes at `off` that falls in one dword.
struct Piece {
    /// Dword-aligned register offset.
    base: usize,
    /// Bit position of the piece in the dword.
    shift: usize,
    /// Bytes in the piece.
    len: usize,
    /// Bytes of the access before this piece.
    done: usize,
}

/// Splits an access into per-dword pieces (registers are 32-bit; the tx producer indices are
/// written as 16-bit halves).
fn dword_pieces(off: u64, len: usize) -> impl Iterator<Item = Piece> {
    let mut done = 0;
    std::iter::from_fn(move || {
        if done >= len {
            return None;
        }
        let at = off as usize + done;
        let base = at & !3;
        let n = (4 - (at - base)).min(len - done);
        let p = Piece {
            base,
            shift: (at - base) * 8,
            len: n,
            done,
        };
        done += n;
        Some(p)
    })
}

/// Index of the 64 / 65-127 / ... / 1519-max size bucket for a frame length with FCS.
fn size_bucket(len: usize) -> usize {
    match len {
        0..=64 => 0,
        65..=127 => 1,
        128..=255 => 2,
        256..=511 => 3,
        512..=1023 => 4,
        1024..=1518 => 5,
        _ => 6,
    }
}
