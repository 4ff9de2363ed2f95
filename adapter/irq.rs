// SPDX-License-Identifier: GPL-2.0

//! Interrupts: the handler, the IMR shadow that masks a queue's causes while its NAPI
//! instance runs, the NAPI poll and its completion, and interrupt moderation (DIM).

use core::sync::atomic::Ordering;

use super::{
    add_local,
    Adapter, //
};
use crate::{
    hw::{
        self,
        RegIo, //
    },
    netdev::{
        self,
        Napi,
        NetDev, //
    },
    regs::{
        self,
        Register, //
    },
};

/// What schedules the NAPI instance of rx ring `r`: a received frame, or the ring running dry
/// (`RFDn_UR`). A ring the card has filled raises no `RX_PKT` any more, whatever became of
/// the last one; the first frame it then drops raises the underrun, and the poll takes them
/// all and refills.
fn rx_cause(r: usize) -> u32 {
    regs::ISR_RX_PKT.get(r).copied().unwrap_or(0) | regs::ISR_RFD_UR.get(r).copied().unwrap_or(0)
}

/// Every rx cause of every ring.
const ISR_RX_ANY: u32 = regs::ISR_RX_PKT_ALL | regs::ISR_RFD_UR_ALL;

/// Every cause that schedules a NAPI instance: masked while that instance runs.
const ISR_NAPI: u32 = regs::ISR_PKT | regs::ISR_RFD_UR_ALL;

/// In the IMR shadow, at ISR_DIS_INT's position (no interrupt cause): the interface is up.
pub(super) const IMR_LIVE: u32 = 1 << 31;
/// The error interrupts that need a MAC reset (`ISR_ERROR` without `PHY_LINKDOWN`, which the
/// link task handles).
const ISR_RESET: u32 = regs::ISR_ERROR & !regs::ISR::PHY_LINKDOWN.mask();

impl Adapter<'_> {
    /// Writes the IMR shadow to the card until what it wrote is still the shadow. The handler
    /// (masking) and NAPI completions (unmasking) update it from different CPUs: whichever
    /// writes last has seen every update, so the card ends with the last value, with no lock.
    pub(super) fn imr_sync(&self) {
        let io = self.io();
        loop {
            let v = self.imr.load(Ordering::Acquire);
            io.write(regs::IMR(v & !IMR_LIVE));
            if self.imr.load(Ordering::Acquire) == v {
                return;
            }
        }
    }

    /// Applies `f` to the IMR shadow and, if that changed it, writes it to the card. `f` sees
    /// the shadow (with [`IMR_LIVE`]) and returns the new value, or `None` to leave it.
    fn imr_update(&self, f: impl FnMut(u32) -> Option<u32>) {
        if self
            .imr
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, f)
            .is_ok()
        {
            self.imr_sync();
        }
    }

    /// Masks `bits` (causes whose NAPI instance is being scheduled).
    fn imr_mask(&self, bits: u32) {
        self.imr_update(|v| (v & bits != 0).then_some(v & !bits));
    }

    /// Unmasks `bits` (a NAPI instance completed), unless the interface went down.
    fn imr_unmask(&self, bits: u32) {
        self.imr_update(|v| (v & IMR_LIVE != 0 && v & bits != bits).then_some(v | bits));
    }

    /// The rx causes of the rings channel `ch` polls.
    fn rx_bits(&self, ch: usize) -> u32 {
        let n = self.queues().max(1);
        (ch..self.rx_rings().min(regs::ISR_RX_PKT.len()))
            .step_by(n)
            .fold(0, |m, r| m | rx_cause(r))
    }

    /// The moderation to program (timer units): the `ethtool -C` values, with DIM's current
    /// rx choice while adaptive-rx is on.
    fn moderation(&self) -> (u16, u16) {
        let tx = self.tx_imt.load(Ordering::Relaxed);
        let rx = if self.adaptive_rx.load(Ordering::Relaxed) {
            self.dim_rx_imt.load(Ordering::Relaxed)
        } else {
            self.rx_imt.load(Ordering::Relaxed)
        };
        (tx, rx)
    }

    /// Programs the current moderation (`ethtool -C`, DIM) without touching anything else.
    pub(super) fn apply_moderation(&self) {
        let _guard = self.moderation_lock.lock();
        let (tx, rx) = self.moderation();
        self.hw.set_moderation(&self.io(), tx, rx);
    }

    /// Feeds DIM the rx totals of the queues in use.
    fn dim_sample(&self) {
        let (mut events, mut packets, mut bytes) = (0u64, 0u64, 0u64);
        for s in self.rx.iter().take(self.queues()).map(|rq| &rq.stats) {
            events += s.completions.load(Ordering::Relaxed);
            packets += s.packets.load(Ordering::Relaxed);
            bytes += s.bytes.load(Ordering::Relaxed);
        }
        // CAST: DIM counts events modulo 2^16.
        self.napi.dim_sample(events as u16, packets, bytes);
    }

    /// NAPI poll of instance `index`: rx channels `0..max_queues`, then tx queues. On
    /// completion the instance's interrupt causes are unmasked.
    pub(super) fn napi_poll(
        &self,
        dev: NetDev<'_>,
        napi: &Napi<'_>,
        index: usize,
        budget: i32,
    ) -> i32 {
        if index < self.max_queues {
            let done = self.rx_poll(dev, napi, index, budget);
            if done < budget && napi.complete_done(done) {
                self.imr_unmask(self.rx_bits(index));
                if let Some(rq) = self.rx.get(index) {
                    add_local(&rq.stats.completions, 1);
                }
                if self.adaptive_rx.load(Ordering::Relaxed) {
                    self.dim_sample();
                }
            }
            return done;
        }
        let q = index - self.max_queues;
        let n = self.tx_complete(dev, q, budget);
        // CAST: at most the ring size.
        let n = (n as i32).min(budget);
        if n < budget && napi.complete_done(n) {
            self.imr_unmask(regs::ISR_TX_PKT.get(q).copied().unwrap_or(0));
        }
        n
    }
}

impl netdev::IrqHandler for Adapter<'_> {
    fn handle(&self) -> bool {
        let io = self.io();
        let isr = io.read::<regs::ISR>().raw();
        if hw::all_ones(isr) {
            // Not ours, or the card is gone: the task finds out which.
            if !self.gone.load(Ordering::Relaxed) {
                self.napi.schedule_task();
            }
            return false;
        }
        // Causes masked while their NAPI instance runs stay pending: unmasking raises them.
        let status = isr & self.imr.load(Ordering::Acquire) & !IMR_LIVE;
        if status == 0 || isr & regs::ISR::DIS_INT.mask() != 0 {
            return false;
        }
        // Ack what we saw and hold further interrupts while scheduling.
        io.write(regs::ISR(status | regs::ISR::DIS_INT.mask()));
        if status & ISR_RX_ANY != 0 {
            // The ack clears RX_PKT for every frame the card has received by the time the
            // write reaches it, and a posted write may take its time: a frame landing after
            // the ISR read above but before the ack has its status cleared, and a poll that
            // ran first would not see it either (a ring filled that way never raises RX_PKT
            // again). The read makes the ack land before the poll looks at the ring. The tx
            // poll needs no such read: it reads the TPD consumer index from the card.
            io.flush();
        }
        if self.up.load(Ordering::Acquire) {
            if status & ISR_RESET != 0 {
                // atl1c_intr: a DMA or tx queue timeout needs a MAC reset. Interrupts stay
                // held (ISR_DIS_INT) until the reset reprograms the card.
                self.hw_errors.fetch_add(1, Ordering::Relaxed);
                self.reset_pending.store(true, Ordering::Release);
                self.napi.schedule_task();
                return true;
            }
            // No rx or tx interrupt while the instance it schedules runs: its completion
            // unmasks them (one interrupt per NAPI cycle, not per moderation period).
            self.imr_mask(status & ISR_NAPI);
            for r in 0..self.rx_rings().min(regs::ISR_RX_PKT.len()) {
                if status & rx_cause(r) != 0 {
                    self.napi.schedule(self.rx_channel(r));
                }
            }
            for q in 0..self.queues().min(regs::ISR_TX_PKT.len()) {
                if status & regs::ISR_TX_PKT[q] != 0 {
                    self.napi.schedule(self.max_queues + q);
                }
            }
            if status
                & (regs::ISR::GPHY.mask()
                    | regs::ISR::MANUAL.mask()
                    | regs::ISR::PHY_LINKDOWN.mask())
                != 0
            {
                self.link_event.store(true, Ordering::Release);
                self.napi.schedule_task();
            }
        }
        io.write(regs::ISR(0));
        true
    }
}
