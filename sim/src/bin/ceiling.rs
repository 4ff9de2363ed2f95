// SPDX-License-Identifier: GPL-2.0

//! `atl1c-sim-ceiling`: the device model's own throughput when the driver costs nothing
//! (`atl1c_sim::ceiling`), one JSON line per frame size, for `make bench`.
//!
//! usage: atl1c-sim-ceiling --personality mikrotik|ar8151 [--frames N]

use std::process::ExitCode;

use atl1c_sim::{ceiling, Personality};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut pers = None;
    let mut frames = 200_000u64;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match (a.as_str(), it.next()) {
            ("--personality", Some(p)) => pers = Personality::from_name(p),
            ("--frames", Some(n)) => match n.parse() {
                Ok(n) if n > 0 => frames = n,
                _ => pers = None,
            },
            _ => pers = None,
        }
        if pers.is_none() {
            break;
        }
    }
    let Some(pers) = pers else {
        eprintln!("usage: atl1c-sim-ceiling --personality mikrotik|ar8151 [--frames N]");
        return ExitCode::from(2);
    };
    // 64 and 1500 bytes on the wire with the FCS, as the benchmark's rx flood.
    for len in [60, 1496] {
        match ceiling::measure(pers, len, frames) {
            Ok(c) => println!(
                "{}",
                serde_json::json!({
                    "figure": "ceiling",
                    "size": c.frame_len + 4,
                    "tx_frames_per_s": c.tx_frames_per_s,
                    "rx_frames_per_s": c.rx_frames_per_s,
                })
            ),
            Err(e) => {
                eprintln!("atl1c-sim-ceiling: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
