// SPDX-License-Identifier: GPL-2.0

//! An in-process [`Env`] for driving the model without QEMU: guest memory is a byte vector,
//! the wire a list of frames, the interrupt line a counter and the clock manual.

use std::time::Duration;

use crate::device::Env;

/// Guest memory, wire and clock for host tests.
pub struct MemEnv {
    /// Guest memory, from address 0.
    pub mem: Vec<u8>,
    /// Frames the card transmitted.
    pub wire: Vec<Vec<u8>>,
    /// Interrupts raised.
    pub irqs: u32,
    /// The clock; tests advance it.
    pub now: Duration,
}

impl MemEnv {
    /// 1 MiB of zeroed guest memory, the clock at 1 s.
    pub fn new() -> Self {
        Self {
            mem: vec![0; 1 << 20],
            wire: Vec::new(),
            irqs: 0,
            now: Duration::from_secs(1),
        }
    }

    /// Writes `data` at `addr` (panics outside memory: a test bug).
    pub fn put(&mut self, addr: u64, data: &[u8]) {
        self.mem[addr as usize..addr as usize + data.len()].copy_from_slice(data);
    }

    /// Reads `len` bytes at `addr` (panics outside memory: a test bug).
    pub fn get(&self, addr: u64, len: usize) -> &[u8] {
        &self.mem[addr as usize..addr as usize + len]
    }
}

impl Default for MemEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl Env for MemEnv {
    fn dma_read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        let a = addr as usize;
        match a
            .checked_add(buf.len())
            .and_then(|end| self.mem.get(a..end))
        {
            Some(s) => {
                buf.copy_from_slice(s);
                true
            }
            None => false,
        }
    }

    fn dma_write(&mut self, addr: u64, data: &[u8]) -> bool {
        let a = addr as usize;
        match a
            .checked_add(data.len())
            .and_then(|end| self.mem.get_mut(a..end))
        {
            Some(s) => {
                s.copy_from_slice(data);
                true
            }
            None => false,
        }
    }

    fn transmit(&mut self, frame: &[u8]) {
        self.wire.push(frame.to_vec());
    }

    fn interrupt(&mut self) {
        self.irqs += 1;
    }

    fn now(&self) -> Duration {
        self.now
    }
}
