// SPDX-License-Identifier: GPL-2.0

//! The link and the changes to a running interface: the link task and resets (tx timeout,
//! error interrupt, card gone), which take it down and up again; and ring, MTU and channel
//! changes, which stop and start its datapath with the link left alone.

use core::sync::atomic::Ordering;

use kernel::prelude::*;

use super::{
    max_frame_len,
    rx::RxRing,
    rx_buf_len,
    tx::tx_ring_parts,
    Adapter, //
};
use crate::{
    hw::{
        Link,
        RegIo, //
    },
    netdev::{
        self,
        msg,
        netdev_err,
        netdev_info,
        netdev_warn,
        NetDev,
        PagePool, //
    },
    regs,
};

impl Adapter<'_> {
    /// Checks the link and starts the MAC for it; carrier follows.
    pub(super) fn check_link(&self, dev: NetDev<'_>) {
        let io = self.io();
        let mut cur = self.link.lock();
        let up = self.hw.link_up(&io).unwrap_or(false);
        if !up {
            if dev.carrier_ok() {
                dev.carrier_off();
                if self.msg(msg::LINK) {
                    netdev_info!(dev, "NIC Link is Down\n");
                }
            }
            *cur = None;
            return;
        }
        let Ok(link) = self.hw.link(&io) else {
            return;
        };
        if *cur != Some(link) {
            *cur = Some(link);
            self.hw.set_aspm(&io, link.speed);
            let _ = self.hw.post_link_change(&io, link.speed);
            self.hw.start_mac(&io, link);
            if self.msg(msg::LINK) {
                netdev_info!(
                    dev,
                    "NIC Link is Up<{} Mbps {}>\n",
                    link.speed,
                    if link.full_duplex {
                        "Full Duplex"
                    } else {
                        "Half Duplex"
                    }
                );
            }
        }
        if !dev.carrier_ok() {
            dev.carrier_on();
        }
    }

    /// Stops and starts a running interface, MAC reset included (tx timeout, link loss, a
    /// change whose MAC did not stop), with the stack kept out meanwhile: detached, no
    /// transmit. If the open fails the device stays detached with its carrier off, NAPI
    /// disabled and the rings empty, so `ip link set down` and rmmod complete; the next `ip
    /// link set up` tries again.
    fn restart(&self, dev: NetDev<'_>, f: impl FnOnce()) -> Result {
        dev.detach();
        self.down(dev);
        f();
        let r = self.open_hw(dev);
        if r.is_ok() {
            dev.attach();
        }
        r
    }

    /// Runs `f` with the datapath of a running interface stopped (ring, channel changes),
    /// then starts it again, as [`Self::pause_datapath`] and [`Self::resume_datapath`]: the
    /// PHY and the link are left alone, so the carrier stays. If `f` fails the datapath
    /// starts again as it was. Where the MAC does not stop, the full restart.
    pub(super) fn with_datapath_paused<E: From<Error>>(
        &self,
        dev: NetDev<'_>,
        f: impl FnOnce() -> core::result::Result<(), E>,
    ) -> core::result::Result<(), E> {
        if !self.up.load(Ordering::Acquire) {
            return f();
        }
        let Some(link) = self.pause_datapath(dev) else {
            let mut r = Ok(());
            self.restart(dev, || r = f())?;
            return r;
        };
        let r = f();
        self.resume_datapath(dev, link, None)?;
        r
    }

    /// Changes the MTU of a running interface with the PHY and the link left alone, so the
    /// carrier stays (`atl1c_change_mtu` resets the MAC and loses the link for seconds).
    /// Where the rx buffers of the new MTU are the size they are now, only the MAC's frame
    /// limit changes. Otherwise pools of the new size are made first (when that fails nothing
    /// has changed), then the datapath stops and starts again with them.
    pub(super) fn change_mtu_running(&self, dev: NetDev<'_>, mtu: u32) -> Result {
        let buf_len = rx_buf_len(mtu);
        if buf_len == self.rx_buf_len.load(Ordering::Relaxed) {
            dev.set_mtu(mtu);
            self.io().write(regs::MTU(max_frame_len(mtu)));
            return Ok(());
        }
        let pools = self.rx_pools(dev, buf_len)?;
        let Some(link) = self.pause_datapath(dev) else {
            drop(pools);
            return self.restart(dev, || dev.set_mtu(mtu));
        };
        dev.set_mtu(mtu);
        self.resume_datapath(dev, link, Some(pools))
    }

    /// Stops the datapath of a running interface, the link left alone: the stack kept out,
    /// transmit, interrupts and NAPI stopped, the MAC's queues and MAC stopped
    /// (`atl1c_stop_mac`), the rings emptied (frames delivered unpolled counted in
    /// `rxN_dropped`, as at down). Returns the link the MAC ran with (`Some(None)`: none
    /// yet), or `None` when the MAC did not stop or the card is gone: the caller then takes
    /// the full restart (the interface is already detached and stopped).
    fn pause_datapath(&self, dev: NetDev<'_>) -> Option<Option<Link>> {
        dev.detach();
        self.stop_datapath(dev);
        if self.gone.load(Ordering::Relaxed) || self.hw.stop_mac(&self.io()).is_err() {
            return None;
        }
        let link = netdev::bh_disabled(|| *self.link.lock());
        drop(self.empty_rings(dev));
        Some(link)
    }

    /// Starts what [`Self::pause_datapath`] stopped, for the MTU, rings and channels set now:
    /// rx buffers from `pools` (made here when `None`), the card programmed and its rx rings
    /// filled, the MAC started for `link` (without one it stays stopped, and the link task
    /// starts it when one comes), NAPI, interrupts, transmit; the stack let in. On failure
    /// the interface stays as a failed restart leaves it: detached, carrier off, rings empty.
    fn resume_datapath(
        &self,
        dev: NetDev<'_>,
        link: Option<Link>,
        pools: Option<KVec<PagePool>>,
    ) -> Result {
        let mtu = dev.mtu();
        let buf_len = rx_buf_len(mtu);
        let r = pools
            .map_or_else(|| self.rx_pools(dev, buf_len), Ok)
            .and_then(|pools| {
                self.rx_buf_len.store(buf_len, Ordering::Relaxed);
                self.load_rings(dev, mtu, pools)
            })
            .and_then(|()| {
                if let Some(link) = link {
                    self.hw.start_mac(&self.io(), link);
                }
                self.run_datapath(dev)
            });
        match r {
            Ok(()) => dev.attach(),
            Err(_) => self.down(dev),
        }
        r
    }

    /// Replaces every ring with one of the new size (interface down). On failure the old
    /// rings stay.
    pub(super) fn resize_rings(&self, rx: u16, tx: u16) -> Result {
        let mut new_tx = KVec::with_capacity(self.tx.len(), GFP_KERNEL)?;
        for _ in 0..self.tx.len() {
            new_tx.push(tx_ring_parts(self.pdev, tx)?, GFP_KERNEL)?;
        }
        // Both ends of every tx ring, or none: the rings share one size register.
        let mut ends = KVec::with_capacity(self.tx.len(), GFP_KERNEL)?;
        for t in &self.tx {
            ends.push(t.ring.exclusive().ok_or(EBUSY)?, GFP_KERNEL)?;
        }
        let mut new_rx = KVec::new();
        for _ in 0..self.rx.len() {
            new_rx.push(RxRing::new(self.pdev, rx)?, GFP_KERNEL)?;
        }
        let mut rx_rings = KVec::with_capacity(self.rx.len(), GFP_KERNEL)?;
        for rq in &self.rx {
            rx_rings.push(rq.ring.claim().ok_or(EBUSY)?, GFP_KERNEL)?;
        }
        // Every ring is claimed (claims do not wait: with xmit and NAPI stopped, each was
        // free), so the swap cannot fail half-way.
        for (x, parts) in ends.iter_mut().zip(new_tx.drain_all()) {
            drop(x.replace(parts));
        }
        for (r, mut ring) in rx_rings.iter_mut().zip(new_rx.drain_all()) {
            core::mem::swap(&mut **r, &mut ring);
            drop(ring);
        }
        self.rx_count.store(rx, Ordering::Release);
        Ok(())
    }

    /// The task (process context, RTNL held): a card that is gone, a reset asked for by the
    /// interrupt or a tx timeout, a link change.
    pub(super) fn link_task(&self, dev: NetDev<'_>) {
        if self.offline() {
            // Queued before the suspend took RTNL; resume sets the card up from scratch.
            return;
        }
        if self.card_gone() {
            // Surprise removal: the stack is kept out and the rings are released; nothing is
            // asked of the card again. `ip link set down` and rmmod complete at once.
            if dev.present() {
                netdev_err!(
                    dev,
                    "the card is gone (registers read all-ones); the interface stays down\n"
                );
                dev.detach();
                self.down(dev);
            }
            return;
        }
        if self.reset_pending.swap(false, Ordering::AcqRel) {
            if self.msg(msg::HW) {
                netdev_warn!(dev, "resetting the MAC and the rings\n");
            }
            self.resets.fetch_add(1, Ordering::Relaxed);
            if self.restart(dev, || {}).is_err() {
                netdev_err!(
                    dev,
                    "reset failed; the interface stays down until set down and up again\n"
                );
            }
            return;
        }
        if !self.link_event.swap(false, Ordering::AcqRel) {
            return;
        }
        let io = self.io();
        // On AR8151 reading the PHY's interrupt status clears it.
        if self.nic.has_mdio_phy() {
            let _ = self.hw.read_phy(&io, regs::phy::MII_ISR);
        }
        let up = self.hw.link_up(&io).unwrap_or(false);
        let was_up = netdev::bh_disabled(|| self.link.lock().is_some());
        if !up && was_up {
            // Link down (atl1c_check_link_status): carrier off at once, then reset the MAC
            // and the rings; open leaves the MAC stopped until the link returns.
            dev.carrier_off();
            if self.msg(msg::LINK) {
                netdev_info!(dev, "NIC Link is Down\n");
            }
            if self.restart(dev, || {}).is_err() {
                netdev_err!(dev, "ring reset after link down failed\n");
            }
        } else {
            netdev::bh_disabled(|| self.check_link(dev));
        }
    }
}
