//! The split of an SM's unified L1/shared-memory array for one launch (`l1.carveout`).
//!
//! `fixed` keeps the config's split (`l1.size_kib` of L1, `sm.shared_bytes` of shared memory).
//! `driver` does what CUDA's driver does on compute capability 7.0 and later (CUDA C++
//! Programming Guide, "Shared Memory" of each compute capability): it gives each kernel the
//! smallest shared-memory capacity of `l1.carveouts_kib` that does not limit its occupancy — the
//! CTAs the other limits (threads, warps, registers, CTA slots) let an SM hold, times the
//! CTA's shared memory — and leaves the rest of the array to the L1. A kernel with little
//! shared memory then gets a large L1, as on the hardware. (The driver also reserves 1 KiB per
//! CTA on compute capability 8.0 and later; not modelled.)

use serde::Serialize;

use crate::config::{Carveout, Config};

/// One launch's split: shared-memory capacity and L1 size per SM, in KiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct L1Split {
    pub shared_kib: u32,
    pub l1_kib: u32,
}

/// The CTAs of `threads` threads each using `regs_per_warp` registers per warp that an SM
/// holds by every limit but shared memory, registers counted per sub-partition's file (also
/// `gemm::metrics::ctas_per_sm`'s count, with shared memory).
pub fn ctas_by_other_limits(cfg: &Config, threads: u32, regs_per_warp: u32) -> u32 {
    let sm = &cfg.sm;
    let warps = threads.div_ceil(sm.warp_size).max(1);
    let parts = sm.schedulers.max(1);
    let warps_by_regs = (sm.registers / parts / regs_per_warp.max(1)) * parts;
    [
        sm.max_ctas,
        sm.max_threads / threads.max(1),
        sm.max_warps / warps,
        warps_by_regs / warps,
    ]
    .into_iter()
    .min()
    .unwrap_or(0)
}

/// The split `cfg` gives a launch of CTAs of `threads` threads, `regs_per_warp` registers per
/// warp and `shared_per_cta` bytes of shared memory; None under `l1.carveout: fixed`.
pub fn split(
    cfg: &Config,
    threads: u32,
    regs_per_warp: u32,
    shared_per_cta: u64,
) -> Option<L1Split> {
    if cfg.l1.carveout != Carveout::Driver {
        return None;
    }
    let ctas = ctas_by_other_limits(cfg, threads, regs_per_warp);
    Some(split_for(
        cfg,
        shared_per_cta.saturating_mul(u64::from(ctas)),
    ))
}

/// The split that gives `need` bytes of shared memory per SM (the largest carve-out when none
/// does: occupancy is then limited by shared memory, as on the hardware).
pub fn split_for(cfg: &Config, need: u64) -> L1Split {
    let unified = cfg.unified_l1_kib();
    let choices = &cfg.l1.carveouts_kib;
    let shared_kib = choices
        .iter()
        .copied()
        .find(|&k| u64::from(k) * 1024 >= need)
        .or_else(|| choices.last().copied())
        .unwrap_or(cfg.sm.shared_bytes / 1024);
    L1Split {
        shared_kib,
        l1_kib: unified - shared_kib,
    }
}

/// `cfg` with the launch's split applied (the L1's size and the SM's shared capacity).
pub fn apply(cfg: &Config, s: L1Split) -> Config {
    let mut c = cfg.clone();
    c.l1.size_kib = s.l1_kib;
    c.sm.shared_bytes = s.shared_kib * 1024;
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100_driver() -> Config {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/hopper-h100.yaml"),
        )
        .unwrap();
        let sets = [("l1.carveout".to_string(), "driver".to_string())];
        Config::from_yaml("hopper-h100", &text, &sets).unwrap()
    }

    #[test]
    fn the_smallest_carveout_that_keeps_occupancy_leaves_the_rest_to_l1() {
        let c = h100_driver();
        assert_eq!(c.unified_l1_kib(), 256);
        // No shared memory: all of it is L1.
        assert_eq!(
            split_for(&c, 0),
            L1Split {
                shared_kib: 0,
                l1_kib: 256
            }
        );
        // 8 CTAs of 16,640 bytes: 130 KiB -> the 132 KiB carve-out, 124 KiB of L1.
        assert_eq!(
            split_for(&c, 8 * 16_640),
            L1Split {
                shared_kib: 132,
                l1_kib: 124
            }
        );
        // Exactly a carve-out: that one.
        assert_eq!(
            split_for(&c, 64 * 1024),
            L1Split {
                shared_kib: 64,
                l1_kib: 192
            }
        );
        // More than the largest: the largest (shared memory then limits occupancy).
        assert_eq!(
            split_for(&c, 300 * 1024),
            L1Split {
                shared_kib: 228,
                l1_kib: 28
            }
        );
    }

    #[test]
    fn other_limits_bound_the_ctas_counted() {
        let c = h100_driver();
        // 256 threads, 32 registers per thread: threads allow 8, warps 8, registers 8.
        assert_eq!(ctas_by_other_limits(&c, 256, 32 * 32), 8);
        // 1024 threads: 2 by threads.
        assert_eq!(ctas_by_other_limits(&c, 1024, 32 * 32), 2);
    }
}
