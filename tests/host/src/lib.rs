// SPDX-License-Identifier: GPL-2.0

//! The module's core-only files, compiled unchanged for the host.
//!
//! Their `#[cfg(test)]` suites are the same ones KUnit runs in the kernel; `props` adds
//! property tests that only make sense on the host. The files declare their items
//! `pub(crate)`, as kernel code does, so everything lives in this one crate.

// Items the driver uses but no host test does are expected here.
#![allow(dead_code)]

#[path = "../../../hw.rs"]
mod hw;
#[path = "../../../regs.rs"]
mod regs;
#[path = "../../../ring.rs"]
mod ring;

#[cfg(test)]
mod bringup;
#[cfg(test)]
mod props;
