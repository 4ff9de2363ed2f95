// SPDX-License-Identifier: GPL-2.0

//! PCI error recovery (`atl1c_io_slot_reset`, `atl1c_io_resume`): the card set up from
//! scratch after the slot reset, the interface brought back once recovery is over. When AER
//! reports the error the card is taken offline as for sleep ([`Adapter::take_offline`]).

use core::sync::atomic::Ordering;

use super::Adapter;
use crate::netdev::{
    self,
    netdev_err,
    NetDev, //
};

impl Adapter<'_> {
    /// `atl1c_io_slot_reset`, under RTNL, the PCI core's state restored: the card set up again
    /// as at probe (after a reset every register has its power-on value). A card that read
    /// all-ones during the error is given a new chance: `gone` is what it reads now.
    pub(crate) fn io_slot_reset(&self, dev: NetDev<'_>) -> bool {
        self.gone.store(false, Ordering::Release);
        match self.reinit_card() {
            Ok(()) => true,
            Err(e) => {
                if self.msg(netdev::msg::HW) {
                    netdev_err!(dev, "the card did not come back from the reset: {e:?}\n");
                }
                false
            }
        }
    }

    /// `atl1c_io_resume`, under RTNL: the interface opened again if it was up, then attached.
    /// An open that fails leaves it detached and down (`ip link set down` and `up` retry).
    pub(crate) fn io_resume(&self, dev: NetDev<'_>, running: bool) {
        let _ = self.reopen(dev, running);
    }
}
