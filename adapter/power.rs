// SPDX-License-Identifier: GPL-2.0

//! System sleep and shutdown (`atl1c_suspend`, `atl1c_resume`, `atl1c_shutdown`): the
//! interface stopped and detached, the card set to wake on what `ethtool -s wol` chose, and
//! brought back after the PCI core restored it.

use core::sync::atomic::Ordering;

use kernel::prelude::*;

use super::{
    ethtool::{
        WAKE_MAGIC,
        WAKE_PHY, //
    },
    Adapter, //
};
use crate::{
    hw::{
        self,
        RegIo, //
    },
    netdev::{
        self,
        netdev_err,
        NetDev, //
    },
    regs,
};

impl Adapter<'_> {
    /// The wake events armed with `ethtool -s wol`.
    fn wake(&self) -> hw::Wake {
        let wol = self.wol.load(Ordering::Relaxed);
        hw::Wake {
            magic: wol & WAKE_MAGIC != 0,
            link_change: wol & WAKE_PHY != 0,
        }
    }

    /// Whether the card is to wake the host (`pci_wake_from_d3` at power-off).
    pub(crate) fn wake_armed(&self) -> bool {
        self.wake() != hw::Wake::NONE
    }

    /// Takes the card offline, under RTNL (`running`: the interface is up): the interface
    /// detached and stopped, the MAC counters read into the totals where the card can still be
    /// read (`reachable`; the D3hot or the reset that follows clears them), and from then on
    /// the link task and the counters leave the card alone (a task queued behind RTNL finds it
    /// offline). An unreachable card (a frozen link: `atl1c_io_error_detected`) is offline
    /// from the start, so that stopping the interface does not touch it either.
    pub(crate) fn take_offline(&self, dev: NetDev<'_>, running: bool, reachable: bool) {
        if !reachable {
            self.offline.store(true, Ordering::Release);
        }
        dev.detach();
        if running {
            self.down(dev);
        }
        if reachable && !self.gone.load(Ordering::Relaxed) {
            let _ = self.mac_counters();
        }
        self.offline.store(true, Ordering::Release);
    }

    /// `atl1c_suspend`, under RTNL: the card taken offline, then set for sleep: the PHY
    /// powered down, or kept up with the receiver on for the wake events armed.
    pub(crate) fn suspend(&self, dev: NetDev<'_>, running: bool) {
        let link = netdev::bh_disabled(|| *self.link.lock());
        let io = self.io();
        if !self.gone.load(Ordering::Relaxed) {
            self.hw.disable_l0s_l1(&io);
        }
        self.take_offline(dev, running, true);
        if self.gone.load(Ordering::Relaxed) {
            return;
        }
        let wake = self.wake();
        if self.hw.power_saving(&io, wake, link).is_err() && self.msg(netdev::msg::HW) {
            netdev_err!(dev, "the PHY did not answer while arming wake-up\n");
        }
    }

    /// `atl1c_resume`, under RTNL: wake-up disarmed, the card set up again as at probe (it may
    /// have lost every register in D3hot), the interface opened if it was up, then attached
    /// (the stack's queues wake on a running datapath, as in igb's resume). An open that fails
    /// leaves the interface detached and down, as a failed reset does: `ip link set down` and
    /// `up` retry.
    pub(crate) fn resume(&self, dev: NetDev<'_>, running: bool) -> Result {
        self.reinit_card()?;
        self.reopen(dev, running)
    }

    /// The card back from sleep or a reset, its registers at their power-on values: online
    /// again, wake-up disarmed, set up as at probe. `ENODEV` if it reads all-ones.
    pub(super) fn reinit_card(&self) -> Result {
        self.offline.store(false, Ordering::Release);
        if self.card_gone() {
            return Err(ENODEV);
        }
        // What was pending when it went offline is moot: the card starts from scratch.
        self.reset_pending.store(false, Ordering::Relaxed);
        self.link_event.store(false, Ordering::Relaxed);
        self.io().write(regs::WOL_CTRL(0));
        self.init_card()
    }

    /// The interface opened again if it was up (`running`), then attached.
    pub(super) fn reopen(&self, dev: NetDev<'_>, running: bool) -> Result {
        if running {
            if let Err(e) = self.open_hw(dev) {
                netdev_err!(dev, "cannot bring the interface back up: {e:?}\n");
                return Err(e);
            }
        }
        dev.attach();
        Ok(())
    }
}
