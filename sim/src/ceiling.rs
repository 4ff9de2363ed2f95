// SPDX-License-Identifier: GPL-2.0

//! The model's own throughput ceiling: frames per second it moves when the driver costs
//! nothing, so that a benchmark figure near it is known to measure the model, not the driver.
//!
//! An idealised driver (`testbed`) runs in-process against the model, with the transport
//! `atl1c-sim` uses around it: the model behind one mutex taken per register access, frames
//! to the wire through a sender thread onto a unix datagram socket with a reader at the other
//! end, frames from the wire read from a socket by a thread that feeds them to the MAC. What
//! it leaves out is what the driver causes: QEMU's vfio-user round trip per MMIO access and
//! the guest's own work.

use std::os::unix::net::UnixDatagram;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use crate::device::{Device, Env, Personality};
use crate::mem_env::MemEnv;
use crate::regs::queue;
use crate::testbed::{self, Layout};

const MEM: usize = 4 << 20;
const RING: u16 = 1024;
const LAYOUT: Layout = Layout {
    tpd: 0x1_0000,
    rfd: 0x2_0000,
    rrd: 0x3_0000,
    ring: RING,
    rx_buf: 1536,
};
/// Tx frame buffer and the rx buffers (all RFDs share one: the content is not looked at).
const TX_BUF: u64 = 0x10_0000;
const RX_BUF: u64 = 0x20_0000;
/// Descriptors per doorbell and per RFD refill: a driver at pktgen burst 32.
const BATCH: u16 = 32;

/// Guest memory as `MemEnv` has it; frames to a sender thread, as `atl1c-sim`'s `Io` does.
struct WireEnv {
    mem: MemEnv,
    wire: Sender<Vec<u8>>,
    irqs: u64,
    start: Instant,
}

impl Env for WireEnv {
    fn dma_read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        self.mem.dma_read(addr, buf)
    }

    fn dma_write(&mut self, addr: u64, data: &[u8]) -> bool {
        self.mem.dma_write(addr, data)
    }

    fn transmit(&mut self, frame: &[u8]) {
        let _ = self.wire.send(frame.to_vec());
    }

    fn interrupt(&mut self) {
        self.irqs += 1;
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }
}

type Model = Mutex<(Device, WireEnv)>;

fn lock(m: &Model) -> MutexGuard<'_, (Device, WireEnv)> {
    // A panic under the lock is a bug in the model: carry on with the state.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Frames per second in each direction, for frames of `len` bytes (without FCS).
#[derive(Debug, Clone, Copy)]
pub struct Ceiling {
    pub frame_len: usize,
    pub tx_frames_per_s: f64,
    pub rx_frames_per_s: f64,
}

/// A frame of `len` bytes to `dst`, from a locally administered address.
fn frame(dst: [u8; 6], len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
    f
}

/// Runs `frames` frames of `len` bytes through the model each way; `len` is at least 60 and
/// at most 1514 (one RFD of 1536 bytes with the FCS).
pub fn measure(pers: Personality, len: usize, frames: u64) -> std::io::Result<Ceiling> {
    assert!((60..=1514).contains(&len), "frame length out of range");
    let (to_model, from_peer) = UnixDatagram::pair()?;
    let (to_peer, at_peer) = UnixDatagram::pair()?;
    let (wire_tx, wire_rx) = channel::<Vec<u8>>();
    // The wire: a sender thread, as in atl1c-sim, and the peer reading and counting.
    thread::spawn(move || {
        for f in wire_rx {
            if to_peer.send(&f).is_err() {
                break;
            }
        }
    });
    let peer_count = Arc::new(Mutex::new(0u64));
    let pc = peer_count.clone();
    thread::spawn(move || {
        let mut buf = vec![0u8; 2048];
        while at_peer.recv(&mut buf).is_ok() {
            *pc.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        }
    });

    let mac = [0x00, 0x13, 0x74, 0x00, 0x5c, 0x38];
    let mut dev = Device::new(pers, mac);
    let mut env = WireEnv {
        mem: MemEnv {
            mem: vec![0; MEM],
            ..MemEnv::new()
        },
        wire: wire_tx,
        irqs: 0,
        start: Instant::now(),
    };
    testbed::up(&mut dev, &mut env, LAYOUT);
    let model = Arc::new(Mutex::new((dev, env)));

    // Tx: the driver fills BATCH TPDs and rings the doorbell once.
    let f = frame([2, 0, 0, 0, 0, 2], len);
    {
        let mut g = lock(&model);
        let (_, e) = &mut *g;
        assert!(e.dma_write(TX_BUF, &f), "tx buffer outside guest memory");
        for i in 0..RING {
            testbed::put_tpd(e, LAYOUT, i, TX_BUF, len, 0);
        }
    }
    let t0 = Instant::now();
    let mut pidx = 0u16;
    let mut sent = 0u64;
    while sent < frames {
        pidx = (pidx + BATCH) % RING;
        let mut g = lock(&model);
        let (d, e) = &mut *g;
        testbed::doorbell(d, e, 0, pidx);
        sent += u64::from(BATCH);
    }
    while *peer_count.lock().unwrap_or_else(|e| e.into_inner()) < sent {
        thread::sleep(Duration::from_micros(100));
    }
    let tx_secs = t0.elapsed().as_secs_f64();

    // Rx: the peer floods, a reader thread feeds the MAC, the driver refills BATCH RFDs at a
    // time (here: whenever the model has used them, as fast as it can). The frames are all
    // alike, so the Mikrotik NIC's flow hash puts them all on one queue: every queue's ring is
    // kept full.
    let queues = if pers == Personality::Mikrotik { 4 } else { 1 };
    {
        let mut g = lock(&model);
        let (d, e) = &mut *g;
        for q in 0..queues {
            for i in 0..RING {
                testbed::put_rfd(e, LAYOUT, q, i, RX_BUF);
            }
            testbed::w32(d, e, queue::RFD_PROD_IDX[q], u32::from(RING - 1));
        }
    }
    let rx_model = model.clone();
    let reader = thread::spawn(move || {
        let mut buf = vec![0u8; 2048];
        let mut n = 0u64;
        while n < frames {
            let Ok(len) = from_peer.recv(&mut buf) else {
                break;
            };
            let mut g = lock(&rx_model);
            let (d, e) = &mut *g;
            d.receive(e, &buf[..len]);
            n += 1;
            if n.is_multiple_of(u64::from(BATCH)) {
                // The refill: the producer index one behind the consumer, a full ring again.
                let prod = ((n % u64::from(RING)) as u16 + RING - 1) % RING;
                for q in 0..queues {
                    testbed::w32(d, e, queue::RFD_PROD_IDX[q], u32::from(prod));
                }
            }
        }
        n
    });
    let rx = frame(mac, len);
    let t1 = Instant::now();
    for _ in 0..frames {
        to_model.send(&rx)?;
    }
    let received = reader.join().unwrap_or(0);
    let rx_secs = t1.elapsed().as_secs_f64();
    let delivered: u64 = lock(&model).0.counters.rx_frames.iter().sum();
    if received < frames || delivered < frames {
        return Err(std::io::Error::other(format!(
            "the model delivered {delivered} of {frames} frames"
        )));
    }
    Ok(Ceiling {
        frame_len: len,
        tx_frames_per_s: sent as f64 / tx_secs,
        rx_frames_per_s: delivered as f64 / rx_secs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame goes through both ways, and the rates are finite and positive.
    #[test]
    fn ceiling_moves_every_frame() {
        for len in [60, 1514] {
            let c = measure(Personality::Mikrotik, len, 2048).expect("the ceiling run failed");
            assert!(c.tx_frames_per_s.is_finite() && c.tx_frames_per_s > 0.0);
            assert!(c.rx_frames_per_s.is_finite() && c.rx_frames_per_s > 0.0);
        }
    }
}
