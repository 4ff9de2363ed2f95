// SPDX-License-Identifier: GPL-2.0

//! Device model of the atl1c family (AR8151) and the Mikrotik 10/25G NIC.
//!
//! The model is a library so that host tests can drive it in-process (and run the driver's
//! hw.rs bring-up against it); `main.rs` serves it to QEMU over vfio-user. The register map and
//! descriptor layouts are the driver's own `regs.rs` and `ring.rs`, compiled unchanged: the
//! upstream C driver, run against this model, is what keeps both honest.

// The shared files describe the whole register map; the model uses part of it.
#![allow(dead_code)]

pub mod ceiling;
pub mod device;
pub mod faults;
pub mod mem_env;
pub mod net;
pub mod pci;
pub mod phy;
pub(crate) mod testbed;

#[path = "../../regs.rs"]
pub(crate) mod regs;
#[path = "../../ring.rs"]
pub(crate) mod ring;

#[cfg(test)]
mod model_tests;

pub use device::{eeprom_image, Counters, Device, Env, Personality, EEPROM_LEN};
pub use faults::Fault;
pub use mem_env::MemEnv;
