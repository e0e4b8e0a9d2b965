//! What a GEMM prediction is made of: the config's clock and peak rates, CTA occupancy and
//! waves, and the derived figures of one run (time, TFLOP/s, % of peak, anchor difference).

use super::run::{SizeRun, Verification};
use super::sizes::Size;
use super::spec::{GemmSpec, Math};
use crate::config::Config;
use crate::core::{LaunchSpec, Program};
use gpusim_isa::FuncId;

/// Multiply-adds one `mma.sync` m16n8k16 performs: the shape `sm.units.tensor` is calibrated
/// on (`core::program::tensor_passes`), so a tensor unit does 2048 FMAs per issue interval.
pub const TENSOR_FMAS_PER_ISSUE: f64 = 16.0 * 8.0 * 16.0;

/// The config's clock in Hz, or an error naming the key.
pub fn clock_hz(cfg: &Config) -> Result<f64, String> {
    cfg.clock_mhz.map(|mhz| mhz as f64 * 1e6).ok_or_else(|| {
        format!(
            "config `{}` has no `clock_mhz`: add it, or pass --set clock_mhz=MHZ",
            cfg.name
        )
    })
}

/// FMAs per cycle of the whole GPU on `math`'s units: SMs × sub-partitions × units ×
/// (FMAs per instruction / issue interval).
pub fn fmas_per_cycle(cfg: &Config, math: Math) -> f64 {
    let per_part = match math {
        Math::Tensor | Math::TensorTf32 => {
            let u = cfg.sm.units.tensor;
            let f16 = u.count as f64 * TENSOR_FMAS_PER_ISSUE / u.issue_interval as f64;
            if math == Math::TensorTf32 {
                f16 / 2.0
            } else {
                f16
            }
        }
        Math::Fp32 => {
            let u = cfg.sm.units.fp32;
            u.count as f64 * cfg.sm.warp_size as f64 / u.issue_interval as f64
        }
    };
    cfg.sm.count as f64 * cfg.sm.schedulers as f64 * per_part
}

/// Peak TFLOP/s on `math`'s units: 2 × FMAs per cycle × clock.
pub fn peak_tflops(cfg: &Config, math: Math, clock_hz: f64) -> f64 {
    2.0 * fmas_per_cycle(cfg, math) * clock_hz / 1e12
}

/// CTAs of `launch` one SM holds at once: the smallest of the CTA slots, threads, warps,
/// registers (the per-sub-partition register files, warps spread evenly over them, as
/// `core::sm::Sm::fits` places them) and shared memory. 0 when one CTA does not fit.
pub fn ctas_per_sm(cfg: &Config, prog: &Program, entry: FuncId, launch: &LaunchSpec) -> u32 {
    let sm = &cfg.sm;
    let threads = launch.block.iter().fold(1u32, |a, &b| a.saturating_mul(b));
    let regs_per_warp = crate::core::gpu::regs_per_thread(prog, cfg, entry)
        .saturating_mul(sm.warp_size)
        .max(1);
    let shared = u32::try_from(prog.shared_layout(entry).dynamic_offset)
        .unwrap_or(u32::MAX)
        .saturating_add(launch.dynamic_shared);
    let by_shared = sm.shared_bytes.checked_div(shared).unwrap_or(u32::MAX);
    crate::core::carveout::ctas_by_other_limits(cfg, threads, regs_per_warp).min(by_shared)
}

/// The derived figures of one size's run.
#[derive(Clone, Debug)]
pub struct Metrics {
    pub size: Size,
    pub ctas: u64,
    pub ctas_per_sm: u32,
    /// CTAs / (SMs × CTAs per SM): how many full GPU loads the grid is.
    pub waves: f64,
    /// CTAs / (⌈waves⌉ × SMs × CTAs per SM): the share of the last wave's slots in use,
    /// averaged over all waves.
    pub wave_efficiency: f64,
    pub cycles: u64,
    pub seconds: f64,
    pub tflops: f64,
    pub peak_tflops: f64,
    /// Percent of `peak_tflops`.
    pub pct_peak: f64,
    pub warp_instructions: u64,
    pub sim_seconds: f64,
    pub warp_instructions_per_second: f64,
    pub verification: Verification,
    /// What `--sample` did (None when not asked for).
    pub sample: Option<crate::core::sample::SampleReport>,
    /// (published TFLOP/s, (predicted − published) / published, source).
    pub anchor: Option<(f64, f64, String)>,
    /// The cycle-weighted mean core clock (below the boost clock when the power governor
    /// stepped it down).
    pub mean_mhz: f64,
    /// Average power, energy and energy per FLOP of the 2·M·N·K product (configs with a
    /// `power` section).
    pub watts: Option<f64>,
    pub peak_watts: Option<f64>,
    pub joules: Option<f64>,
    pub pj_per_flop: Option<f64>,
}

/// TFLOP/s of a 2·M·N·K product that took `cycles` at `clock_hz`.
pub fn tflops(size: Size, cycles: u64, clock_hz: f64) -> f64 {
    if cycles == 0 {
        return 0.0;
    }
    tflops_in(size, cycles as f64 / clock_hz)
}

/// TFLOP/s of a 2·M·N·K product that took `seconds`.
pub fn tflops_in(size: Size, seconds: f64) -> f64 {
    if seconds <= 0.0 {
        return 0.0;
    }
    size.flops() / seconds / 1e12
}

/// Waves and wave efficiency of `ctas` CTAs on `sms` SMs holding `per_sm` each.
pub fn waves(ctas: u64, sms: u32, per_sm: u32) -> (f64, f64) {
    let slots = sms as u64 * per_sm as u64;
    if slots == 0 || ctas == 0 {
        return (0.0, 0.0);
    }
    let w = ctas as f64 / slots as f64;
    (w, ctas as f64 / (ctas.div_ceil(slots) * slots) as f64)
}

pub fn metrics(spec: &GemmSpec, cfg: &Config, run: &SizeRun, clock_hz: f64) -> Metrics {
    let ctas = run.grid.iter().map(|&g| g as u64).product();
    let cycles = run.stats.counters.cycles;
    // Simulated time counts each cycle at the clock it ran at (`power::governor`).
    let clock = &run.stats.clock;
    let seconds = if clock.seconds > 0.0 {
        clock.seconds
    } else {
        cycles as f64 / clock_hz
    };
    let tf = tflops_in(run.size, seconds);
    let power = run.stats.power.as_ref();
    let peak = peak_tflops(cfg, spec.math, clock_hz);
    let (w, eff) = waves(ctas, cfg.sm.count, run.ctas_per_sm);
    // A sampled run counts the skipped CTAs' instructions at the measured rate; the
    // simulation speed is what ran over the time it took.
    let sample = run.stats.sample.clone();
    let simulated = run.stats.counters.warp_instructions;
    let insts = sample
        .as_ref()
        .map_or(simulated, |s| s.estimated_warp_instructions);
    let s = run.size;
    Metrics {
        size: s,
        ctas,
        ctas_per_sm: run.ctas_per_sm,
        waves: w,
        wave_efficiency: eff,
        cycles,
        seconds,
        tflops: tf,
        peak_tflops: peak,
        pct_peak: if peak > 0.0 { 100.0 * tf / peak } else { 0.0 },
        warp_instructions: insts,
        sim_seconds: run.wall_seconds,
        warp_instructions_per_second: if run.wall_seconds > 0.0 {
            simulated as f64 / run.wall_seconds
        } else {
            0.0
        },
        verification: run.verification.clone(),
        sample,
        anchor: spec
            .anchor(&cfg.name, s.m, s.n, s.k)
            .map(|a| (a.tflops, (tf - a.tflops) / a.tflops, a.source.clone())),
        mean_mhz: if clock.mean_mhz > 0.0 {
            clock.mean_mhz
        } else {
            clock_hz / 1e6
        },
        watts: power.map(|p| p.average_watts),
        peak_watts: power.map(|p| p.peak_watts),
        joules: power.map(|p| p.energy_joules),
        pj_per_flop: power.map(|p| p.energy_joules / s.flops() * 1e12),
    }
}
