// SPDX-License-Identifier: GPL-2.0

//! Fault injection: what the SIM_CONTROL commands make the card do wrong.
//!
//! A driver must never trust its device. These faults are what a broken, rebooting or
//! hostile card does: descriptors of random words, lengths beyond the buffer, error frames,
//! a consumer index outside the ring, lost interrupts, DMA errors and a reset that never
//! completes. [`Faults`] holds what is armed; the device consults it where the card would
//! misbehave and counts in [`Faults::injected`] what each fault did, so that a scenario can
//! tell an injected fault from one that never happened.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::ring::{rrs, Rrd};

/// A fault the model can inject, parsed from a SIM_CONTROL command
/// (`Documentation/sim.rst`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `tx hang`: the tx DMA engine stops fetching descriptors until a soft reset.
    TxHang,
    /// `dma error`: ISR raises the DMA read and write timeout bits (the C driver resets).
    DmaError,
    /// `reset stuck`: every later soft reset leaves `IDLE_STATUS` busy, until `reset ok`.
    ResetStuck,
    /// `reset ok`: soft resets complete again.
    ResetOk,
    /// `rrd fuzz N SEED`: the next `N` RRDs are random words with the updated bit set.
    RrdFuzz(u32, u64),
    /// `rrd oversize`: the next frame's RRD gives a length beyond its RFD buffer.
    RrdOversize,
    /// `rx error N`: the next `N` frames are flagged with a CRC error.
    RxError(u32),
    /// `tx cidx VALUE`: the TPD consumer indices read back `VALUE` until a soft reset.
    TxCidx(u16),
    /// `irq lose N`: the next `N` interrupts are not delivered.
    IrqLose(u32),
    /// `surprise removal`: the card is gone for good: BAR0 reads return all-ones, writes are
    /// lost, no DMA, no interrupts, no frames.
    SurpriseRemoval,
    /// `mdio stuck`: MDIO transactions never complete (BUSY stays set), until `mdio ok`.
    MdioStuck,
    /// `mdio ok`: MDIO transactions complete again.
    MdioOk,
    /// `ack delay US`: writes to `ISR` take effect `US` microseconds late, or when the driver
    /// next reads a register, whichever comes first (a read does not pass a posted write);
    /// `ack delay 0` applies them at once again.
    AckDelay(u32),
    /// `underrun off`: a ring that runs dry raises no `ISR_RFDn_UR` (a driver must not need
    /// it to see a full ring); `underrun on` restores it.
    Underrun(bool),
}

impl Fault {
    /// The fault `cmd` names, if it is one (arguments in decimal, or hexadecimal with `0x`).
    pub fn from_command(cmd: &str) -> Option<Self> {
        let words: Vec<&str> = cmd.split(' ').collect();
        Some(match words.as_slice() {
            ["tx", "hang"] => Self::TxHang,
            ["dma", "error"] => Self::DmaError,
            ["reset", "stuck"] => Self::ResetStuck,
            ["reset", "ok"] => Self::ResetOk,
            ["rrd", "fuzz", n, seed] => Self::RrdFuzz(number(n)?, number(seed)?),
            ["rrd", "oversize"] => Self::RrdOversize,
            ["rx", "error", n] => Self::RxError(number(n)?),
            ["tx", "cidx", v] => Self::TxCidx(number(v)?),
            ["irq", "lose", n] => Self::IrqLose(number(n)?),
            ["surprise", "removal"] => Self::SurpriseRemoval,
            ["mdio", "stuck"] => Self::MdioStuck,
            ["mdio", "ok"] => Self::MdioOk,
            ["ack", "delay", us] => Self::AckDelay(number(us)?),
            ["underrun", "off"] => Self::Underrun(false),
            ["underrun", "on"] => Self::Underrun(true),
            _ => return None,
        })
    }
}

fn number<T: TryFrom<u64>>(s: &str) -> Option<T> {
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok()?,
        None => s.parse().ok()?,
    };
    T::try_from(v).ok()
}

/// The faults armed in a device, and what they did.
#[derive(Debug, Default)]
pub struct Faults {
    /// RRDs still to fuzz, and the generator's state.
    rrd_fuzz: u32,
    rng: u64,
    rrd_oversize: bool,
    rx_error: u32,
    /// The consumer index every TPD_CIDX read returns until a soft reset.
    pub(crate) tx_cidx: Option<u16>,
    irq_lose: u32,
    /// Soft resets never go idle.
    pub(crate) reset_stuck: bool,
    /// The card is gone (surprise removal).
    pub(crate) removed: bool,
    /// MDIO transactions never complete.
    pub(crate) mdio_stuck: bool,
    /// How late writes to `ISR` take effect (`ack delay`), if they are held back at all.
    pub(crate) ack_delay: Option<Duration>,
    /// Dry rings raise no underrun (`underrun off`).
    pub(crate) no_underrun: bool,
    /// What each fault did, by SIM_STATS key: `rrd_fuzz` (descriptors written),
    /// `rrd_oversize`, `rx_error` (frames flagged), `tx_cidx` (reads served), `irq_lost`,
    /// `dma_error` (interrupts raised), `reset_stuck` (soft resets that never went idle),
    /// `surprise_removal` (1 once applied), `mdio_stuck` (transactions that never completed),
    /// `ack_delayed` (`ISR` writes held back), `ack_timed_out` (of those, the ones applied when
    /// their delay ran out, not by a read), `underrun_off` (underruns not raised).
    pub injected: BTreeMap<&'static str, u64>,
}

impl Faults {
    /// Arms `f` (the device applies [`Fault::TxHang`] and [`Fault::DmaError`] itself).
    pub(crate) fn arm(&mut self, f: Fault) {
        match f {
            Fault::TxHang | Fault::DmaError => {}
            Fault::ResetStuck => self.reset_stuck = true,
            Fault::ResetOk => self.reset_stuck = false,
            Fault::RrdFuzz(n, seed) => {
                self.rrd_fuzz = n;
                // xorshift64 must not start at 0.
                self.rng = seed | 1;
            }
            Fault::RrdOversize => self.rrd_oversize = true,
            Fault::RxError(n) => self.rx_error = n,
            Fault::TxCidx(v) => self.tx_cidx = Some(v),
            Fault::IrqLose(n) => self.irq_lose = n,
            Fault::MdioStuck => self.mdio_stuck = true,
            Fault::MdioOk => self.mdio_stuck = false,
            Fault::AckDelay(us) => {
                self.ack_delay = (us > 0).then(|| Duration::from_micros(u64::from(us)));
            }
            Fault::Underrun(on) => self.no_underrun = !on,
            Fault::SurpriseRemoval => {
                if !self.removed {
                    self.removed = true;
                    self.count("surprise_removal");
                }
            }
        }
    }

    /// Counts one occurrence of `key`.
    pub(crate) fn count(&mut self, key: &'static str) {
        *self.injected.entry(key).or_default() += 1;
    }

    /// What a soft reset clears: the consumer index override.
    pub(crate) fn soft_reset(&mut self) {
        self.tx_cidx = None;
        if self.reset_stuck {
            self.count("reset_stuck");
        }
    }

    fn next_random(&mut self) -> u32 {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        // CAST: the high half of the generator's state.
        (x >> 32) as u32
    }

    /// Applies the armed RRD faults to the RRD the card writes for a frame whose RFD buffer
    /// holds `buf_len` bytes: `rrd fuzz` (random words, the updated bit set), `rrd oversize`
    /// (a length 64 bytes beyond the buffer), `rx error` (a CRC error).
    pub(crate) fn rrd(&mut self, rrd: &mut Rrd, buf_len: u32) {
        if self.rrd_fuzz > 0 {
            self.rrd_fuzz -= 1;
            self.count("rrd_fuzz");
            rrd.word0 = self.next_random();
            rrd.rss_hash = self.next_random();
            let w2 = self.next_random();
            // CAST: the two halves of word 2.
            (rrd.vlan_tag, rrd.flag) = (w2 as u16, (w2 >> 16) as u16);
            rrd.word3 = self.next_random() | rrs::RXD_UPDATED.mask();
            return;
        }
        if self.rrd_oversize {
            self.rrd_oversize = false;
            self.count("rrd_oversize");
            let len = (buf_len + 64).min(rrs::PKT_SIZE.mask());
            rrd.word3 = (rrd.word3 & !rrs::PKT_SIZE.mask()) | len;
        }
        if self.rx_error > 0 {
            self.rx_error -= 1;
            self.count("rx_error");
            rrd.word3 |= rrs::RX_ERR_SUM.mask() | rrs::RX_ERR_CRC.mask();
        }
    }

    /// Whether the next interrupt is lost (counted).
    pub(crate) fn lose_irq(&mut self) -> bool {
        if self.irq_lose == 0 {
            return false;
        }
        self.irq_lose -= 1;
        self.count("irq_lost");
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_their_arguments() {
        assert_eq!(
            Fault::from_command("rrd fuzz 10000 7"),
            Some(Fault::RrdFuzz(10000, 7))
        );
        assert_eq!(
            Fault::from_command("tx cidx 0xffff"),
            Some(Fault::TxCidx(0xffff))
        );
        assert_eq!(Fault::from_command("tx cidx 65536"), None);
        assert_eq!(Fault::from_command("irq lose 3"), Some(Fault::IrqLose(3)));
        assert_eq!(Fault::from_command("rx error x"), None);
        assert_eq!(Fault::from_command("rrd fuzz 1"), None);
        assert_eq!(Fault::from_command("reset  stuck"), None);
        assert_eq!(
            Fault::from_command("ack delay 2000"),
            Some(Fault::AckDelay(2000))
        );
        assert_eq!(
            Fault::from_command("underrun off"),
            Some(Fault::Underrun(false))
        );
        assert_eq!(Fault::from_command("underrun maybe"), None);
    }

    #[test]
    fn fuzzed_rrds_are_random_but_updated_and_counted() {
        let mut f = Faults::default();
        f.arm(Fault::RrdFuzz(2, 42));
        let w = Rrd {
            word0: 1,
            rss_hash: 2,
            vlan_tag: 3,
            flag: 0,
            word3: 4,
        };
        let (mut a, mut b, mut c) = (w, w, w);
        f.rrd(&mut a, 1536);
        f.rrd(&mut b, 1536);
        assert_ne!(a, b);
        assert!(a.is_updated() && b.is_updated());
        f.rrd(&mut c, 1536);
        assert_eq!(c, w);
        assert_eq!(f.injected.get("rrd_fuzz"), Some(&2));
    }

    #[test]
    fn oversize_and_error_apply_once_each() {
        let mut f = Faults::default();
        f.arm(Fault::RrdOversize);
        f.arm(Fault::RxError(1));
        let w = Rrd {
            word3: 100,
            ..Rrd::default()
        };
        let (mut a, mut b) = (w, w);
        f.rrd(&mut a, 1536);
        assert_eq!(rrs::PKT_SIZE.get(a.word3), 1600);
        assert!(a.word3 & rrs::RX_ERR_CRC.mask() != 0);
        f.rrd(&mut b, 1536);
        assert_eq!(b, w);
    }
}
