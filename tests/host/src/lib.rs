// SPDX-License-Identifier: GPL-2.0

//! The module's core-only files, compiled unchanged for the host.
//!
//! Their `#[cfg(test)]` suites are the same ones KUnit runs in the kernel; the integration
//! tests in `tests/` add property tests that only make sense on the host.

#[path = "../../../hw.rs"]
pub mod hw;
#[path = "../../../regs.rs"]
pub mod regs;
#[path = "../../../ring.rs"]
pub mod ring;
