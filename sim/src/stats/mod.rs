//! Counters and their JSON form.
//!
//! **API boundary**: the top-level JSON keys (`cycles`, `warp_instructions`,
//! `thread_instructions`, `ipc`, `stalls`, `simd_efficiency`, `wall_seconds`,
//! `warp_instructions_per_second`, then `kernels` and `sms`) stay stable.

pub mod trace;

pub use trace::WarpEvent;

use serde::Serialize;
use std::collections::BTreeMap;

/// What a resident warp did in one cycle (every warp is in exactly one state per cycle).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stall {
    Issued,
    /// Ready but another warp of the same scheduler issued.
    NotSelected,
    /// Waiting for a register written by an earlier instruction.
    Scoreboard,
    Barrier,
}

impl Stall {
    pub const ALL: [Stall; 4] = [
        Stall::Issued,
        Stall::NotSelected,
        Stall::Scoreboard,
        Stall::Barrier,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stall::Issued => "issued",
            Stall::NotSelected => "not_selected",
            Stall::Scoreboard => "scoreboard",
            Stall::Barrier => "barrier",
        }
    }
}

/// Per-SM counters, updated on the hot path (plain arrays, no maps).
#[derive(Clone, Debug, Default)]
pub struct SmStats {
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    /// Warp-cycles per `Stall` state, indexed by `Stall as usize`.
    pub stalls: [u64; Stall::ALL.len()],
}

impl SmStats {
    #[inline]
    pub fn stall(&mut self, s: Stall, n: u64) {
        self.stalls[s as usize] += n;
    }

    fn add(&mut self, o: &SmStats) {
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
        for (a, b) in self.stalls.iter_mut().zip(o.stalls) {
            *a += b;
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Counters {
    pub cycles: u64,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    pub ipc: f64,
    pub simd_efficiency: f64,
    pub stalls: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SmReport {
    pub sm: u32,
    #[serde(flatten)]
    pub counters: Counters,
}

#[derive(Clone, Debug, Serialize)]
pub struct KernelStats {
    pub kernel: String,
    #[serde(flatten)]
    pub counters: Counters,
    pub wall_seconds: f64,
    pub sms: Vec<SmReport>,
    /// The summed counters, for totals across launches.
    #[serde(skip)]
    pub raw: SmStats,
}

fn counters(cycles: u64, warp_size: u32, s: &SmStats) -> Counters {
    Counters {
        cycles,
        warp_instructions: s.warp_instructions,
        thread_instructions: s.thread_instructions,
        ipc: if cycles == 0 {
            0.0
        } else {
            s.warp_instructions as f64 / cycles as f64
        },
        simd_efficiency: if s.warp_instructions == 0 {
            0.0
        } else {
            s.thread_instructions as f64 / (s.warp_instructions * warp_size as u64) as f64
        },
        stalls: Stall::ALL
            .iter()
            .map(|k| (k.name().to_string(), s.stalls[*k as usize]))
            .collect(),
    }
}

impl KernelStats {
    pub fn collect<'a>(
        kernel: &str,
        cycles: u64,
        wall: f64,
        warp_size: u32,
        sms: impl Iterator<Item = (u32, &'a SmStats)>,
    ) -> KernelStats {
        let mut total = SmStats::default();
        let mut reports = Vec::new();
        for (id, s) in sms {
            total.add(s);
            reports.push(SmReport {
                sm: id,
                counters: counters(cycles, warp_size, s),
            });
        }
        KernelStats {
            kernel: kernel.to_string(),
            counters: counters(cycles, warp_size, &total),
            wall_seconds: wall,
            sms: reports,
            raw: total,
        }
    }
}

/// The whole run: every launch, plus totals.
#[derive(Clone, Debug, Serialize)]
pub struct RunStats {
    #[serde(flatten)]
    pub totals: Counters,
    pub wall_seconds: f64,
    pub warp_instructions_per_second: f64,
    pub kernels: Vec<KernelStats>,
}

impl RunStats {
    pub fn from_kernels(kernels: Vec<KernelStats>, warp_size: u32, wall: f64) -> RunStats {
        let mut s = SmStats::default();
        let mut cycles = 0;
        for k in &kernels {
            cycles += k.counters.cycles;
            s.add(&k.raw);
        }
        let totals = counters(cycles, warp_size, &s);
        RunStats {
            warp_instructions_per_second: if wall > 0.0 {
                totals.warp_instructions as f64 / wall
            } else {
                0.0
            },
            totals,
            wall_seconds: wall,
            kernels,
        }
    }
}
