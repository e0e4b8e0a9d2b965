//! Counters and their JSON form.
//!
//! **API boundary**: the top-level JSON keys (`cycles`, `warp_instructions`,
//! `thread_instructions`, `ipc`, `stalls`, `simd_efficiency`, `wall_seconds`,
//! `warp_instructions_per_second`, then `kernels` and `sms`, and `memory`) stay stable.

pub mod lines;
pub mod memory_system;
pub mod source;
pub mod trace;
pub use memory_system::MemorySystemReport;

pub use trace::WarpEvent;

use serde::Serialize;
use std::collections::BTreeMap;

/// What a resident warp did in one cycle: every resident warp is in exactly one state per
/// cycle, so the states sum to resident warp-cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stall {
    Issued,
    /// Ready, but another warp of the same scheduler issued.
    NotSelected,
    /// Waiting for a register from a short-latency producer (ALU, SFU, shared, constant).
    ScoreboardShort,
    /// Waiting for a register from global or local memory or an atomic.
    ScoreboardLong,
    /// Ready, but every unit of the class it needs is busy.
    PipeBusy,
    /// Waiting at a CTA barrier.
    Barrier,
    /// Its next instruction is still being fetched after a taken branch, call or return.
    NoInstruction,
    /// Refetching after a reconvergence point: a token popped (`sync`, uniform `brk`/`ret`/
    /// `exit` unwinding) or the policy switched to another thread group.
    Reconvergence,
    /// At a memory fence, waiting for the warp's outstanding memory operations, or at
    /// `cp.async.wait_group`/`wait_all`, waiting for its copies to land.
    Membar,
    /// Its memory instruction was picked but its SM's L1 request queue is full (the component
    /// memory system's backpressure): it did not issue.
    MemoryBackpressure,
    /// In `nanosleep`.
    Sleeping,
    /// Completed while other warps of its CTA still run.
    Finished,
}

impl Stall {
    pub const ALL: [Stall; 12] = [
        Stall::Issued,
        Stall::NotSelected,
        Stall::ScoreboardShort,
        Stall::ScoreboardLong,
        Stall::PipeBusy,
        Stall::Barrier,
        Stall::NoInstruction,
        Stall::Reconvergence,
        Stall::Membar,
        Stall::MemoryBackpressure,
        Stall::Sleeping,
        Stall::Finished,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stall::Issued => "issued",
            Stall::NotSelected => "not_selected",
            Stall::ScoreboardShort => "scoreboard_short",
            Stall::ScoreboardLong => "scoreboard_long",
            Stall::PipeBusy => "pipe_busy",
            Stall::Barrier => "barrier",
            Stall::NoInstruction => "no_instruction",
            Stall::Reconvergence => "reconvergence",
            Stall::Membar => "membar",
            Stall::MemoryBackpressure => "memory_backpressure",
            Stall::Sleeping => "sleeping",
            Stall::Finished => "finished",
        }
    }
}

/// Lanes per issued instruction: bucket k counts instructions run by k lanes (0..=64).
pub const LANE_BUCKETS: usize = 65;

/// Per-SM counters, updated on the hot path (plain arrays, no maps).
#[derive(Clone, Debug)]
pub struct SmStats {
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    /// Warp-cycles per `Stall` state, indexed by `Stall as usize`.
    pub stalls: [u64; Stall::ALL.len()],
    /// SIMD-efficiency histogram: issued instructions by number of executing lanes.
    pub lanes: [u64; LANE_BUCKETS],
    /// Busy unit-cycles per functional unit kind (`program::Unit as usize`).
    pub unit_busy: [u64; N_UNITS],
    /// Most warps resident at once.
    pub max_resident_warps: u64,
    /// Coalescer and shared-bank counters.
    pub memory: MemCounters,
    /// What only the power model needs (`power::EnergyEvents`).
    pub energy: crate::power::EnergyEvents,
}

/// Memory requests as the coalescer saw them (`mem::coalesce`): global and local requests
/// (the L1 path) with their sectors and lines, shared requests with their conflict replays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemCounters {
    pub global_requests: u64,
    pub global_sectors: u64,
    pub global_lines: u64,
    pub shared_requests: u64,
    /// Σ (conflict degree − 1) over shared requests.
    pub shared_replays: u64,
    /// Sector lookups per level (`mem::hierarchy`): the first `isCachedL1` / `isCachedL2` a
    /// program evaluates, and L2 writes, count each sector they need as a hit or a miss.
    pub l1_hits: u64,
    pub l1_misses: u64,
    pub l1_evictions: u64,
    /// Dirty L1 lines written back to L2 (the silent `wb_L1`).
    pub l1_writebacks: u64,
    /// L1 lines dropped by the flush of a GPU- or system-scope fence.
    pub l1_flushed: u64,
    /// Reservations that found every way of their set in flight and waited.
    pub l1_reservation_fails: u64,
    pub l2_hits: u64,
    pub l2_misses: u64,
    pub l2_evictions: u64,
    /// Dirty L2 lines written back to DRAM (the silent `wb_L2`).
    pub l2_writebacks: u64,
    pub l2_reservation_fails: u64,
    /// With `l2.partitions` > 1: accesses served by another partition's slice across the link
    /// between them (far), and reads from another partition served by the copy in the SM's
    /// own (near).
    pub l2_far_accesses: u64,
    pub l2_copy_hits: u64,
    /// DRAM accesses (`readMem`, `writeMem` and L2 write-backs) and their row-buffer outcomes.
    pub dram_reads: u64,
    pub dram_writes: u64,
    pub dram_row_hits: u64,
    pub dram_row_misses: u64,
    pub dram_row_conflicts: u64,
    /// Loads that found their L1 line still in flight and completed with its fill (MSHR
    /// merges; a subset of `l1_hits`).
    pub mshr_merges: u64,
    /// Misses that waited for an MSHR to free.
    pub mshr_stalls: u64,
    /// Bytes moved at the L2 slices (reads, writes, fills and write-backs) and at DRAM
    /// (reads, writes and write-backs).
    pub l2_bytes: u64,
    pub dram_bytes: u64,
    /// The part of `dram_bytes` written (stores through, L2 write-backs).
    pub dram_write_bytes: u64,
    /// Bytes of the SM's interconnect packets (headers and data, both directions), and the
    /// cycles they waited for busy ports beyond the crossbar's latency.
    pub icnt_bytes: u64,
    pub icnt_queue_cycles: u64,
    /// Global and local loads' latency from issue to their registers' release (the loaded
    /// latency, queueing included), in `latency_bucket` buckets; their sum and count.
    pub load_latency: [u64; LATENCY_BUCKETS],
    pub load_latency_sum: u64,
    pub loads_timed: u64,
}

/// Buckets of the load-latency histogram: two per power of two up to 2^16 cycles.
pub const LATENCY_BUCKETS: usize = 32;

/// The bucket of a latency: 0 and 1 alone, then [2^k, 2^k + 2^(k−1)) and
/// [2^k + 2^(k−1), 2^(k+1)) for k ≥ 1; 2^16 and above in the last.
pub fn latency_bucket(cycles: u64) -> usize {
    if cycles < 2 {
        return cycles as usize;
    }
    let k = 63 - cycles.leading_zeros() as usize;
    let half = ((cycles >> (k - 1)) & 1) as usize;
    (2 * k + half).min(LATENCY_BUCKETS - 1)
}

/// The smallest and largest latency of bucket `i` (the last one is open: `u64::MAX`).
pub fn latency_bucket_range(i: usize) -> (u64, u64) {
    if i < 2 {
        return (i as u64, i as u64);
    }
    let (k, half) = (i / 2, (i % 2) as u64);
    let lo = (1u64 << k) + half * (1 << (k - 1));
    let hi = if i == LATENCY_BUCKETS - 1 {
        u64::MAX
    } else {
        lo + (1 << (k - 1)) - 1
    };
    (lo, hi)
}

impl MemCounters {
    /// Count one global or local load that released its registers `cycles` after issue.
    pub fn record_load_latency(&mut self, cycles: u64) {
        self.load_latency[latency_bucket(cycles)] += 1;
        self.load_latency_sum += cycles;
        self.loads_timed += 1;
    }
}

impl MemCounters {
    fn add(&mut self, o: &MemCounters) {
        self.global_requests += o.global_requests;
        self.global_sectors += o.global_sectors;
        self.global_lines += o.global_lines;
        self.shared_requests += o.shared_requests;
        self.shared_replays += o.shared_replays;
        self.l1_hits += o.l1_hits;
        self.l1_misses += o.l1_misses;
        self.l1_evictions += o.l1_evictions;
        self.l1_writebacks += o.l1_writebacks;
        self.l1_flushed += o.l1_flushed;
        self.l1_reservation_fails += o.l1_reservation_fails;
        self.l2_hits += o.l2_hits;
        self.l2_misses += o.l2_misses;
        self.l2_evictions += o.l2_evictions;
        self.l2_writebacks += o.l2_writebacks;
        self.l2_reservation_fails += o.l2_reservation_fails;
        self.l2_far_accesses += o.l2_far_accesses;
        self.l2_copy_hits += o.l2_copy_hits;
        self.dram_reads += o.dram_reads;
        self.dram_writes += o.dram_writes;
        self.dram_row_hits += o.dram_row_hits;
        self.dram_row_misses += o.dram_row_misses;
        self.dram_row_conflicts += o.dram_row_conflicts;
        self.mshr_merges += o.mshr_merges;
        self.mshr_stalls += o.mshr_stalls;
        self.l2_bytes += o.l2_bytes;
        for (a, b) in self.load_latency.iter_mut().zip(&o.load_latency) {
            *a += b;
        }
        self.load_latency_sum += o.load_latency_sum;
        self.loads_timed += o.loads_timed;
        self.dram_bytes += o.dram_bytes;
        self.dram_write_bytes += o.dram_write_bytes;
        self.icnt_bytes += o.icnt_bytes;
        self.icnt_queue_cycles += o.icnt_queue_cycles;
    }
}

/// The `memory` object of the stats JSON: the counters and their ratios.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryReport {
    #[serde(flatten)]
    pub counters: MemCounters,
    /// Sectors per global request (4 for a coalesced 32-bit warp access with 32 B sectors).
    pub sectors_per_request: f64,
    /// Lines per global request.
    pub lines_per_request: f64,
    /// Mean shared conflict degree: 1 + replays per request (1 = conflict-free).
    pub shared_conflict_degree: f64,
    /// Cycles the L2 and DRAM servers spend transferring this scope's bytes (bytes /
    /// `bytes_per_cycle`), and that as a fraction of the launch's cycles.
    pub l2_busy_cycles: f64,
    pub dram_busy_cycles: f64,
    pub l2_utilisation: f64,
    pub dram_utilisation: f64,
    /// DRAM row-buffer hits over all DRAM accesses.
    pub dram_row_hit_rate: f64,
    /// The scope's interconnect port occupancy over its capacity.
    pub icnt_utilisation: f64,
    /// Global and local loads, issue to register release: mean, and the upper ends of the
    /// histogram buckets holding the median and the 99th percentile.
    pub load_latency_mean: f64,
    pub load_latency_p50: u64,
    pub load_latency_p99: u64,
    /// The non-empty buckets: smallest and largest latency, loads.
    pub load_latency_histogram: Vec<(u64, u64, u64)>,
}

/// The upper end of the bucket holding quantile `q` of the loads in `hist` (0 without loads).
fn latency_quantile(hist: &[u64; LATENCY_BUCKETS], q: f64) -> u64 {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return 0;
    }
    let rank = ((total as f64 * q).ceil() as u64).max(1);
    let mut seen = 0;
    for (i, n) in hist.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return latency_bucket_range(i).1;
        }
    }
    u64::MAX
}

/// Per-component load of the memory system in one launch (GPU-wide, from `mem::hierarchy`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ComponentReport {
    /// Each L2 slice's bytes over its share of `l2.bytes_per_cycle` × cycles.
    pub l2_slice_utilisation: Vec<f64>,
    /// Each DRAM channel's bytes over its share of `dram.bytes_per_cycle` × cycles.
    pub dram_channel_utilisation: Vec<f64>,
}

impl ComponentReport {
    /// From bytes moved per slice and per channel, at `slice_rate` and `channel_rate` bytes
    /// per cycle each.
    pub fn new(
        cycles: u64,
        slice_bytes: &[u64],
        slice_rate: f64,
        channel_bytes: &[u64],
        channel_rate: f64,
    ) -> ComponentReport {
        let util = |b: &u64, rate: f64| {
            let cap = cycles as f64 * rate;
            if cap > 0.0 {
                *b as f64 / cap
            } else {
                0.0
            }
        };
        ComponentReport {
            l2_slice_utilisation: slice_bytes.iter().map(|b| util(b, slice_rate)).collect(),
            dram_channel_utilisation: channel_bytes
                .iter()
                .map(|b| util(b, channel_rate))
                .collect(),
        }
    }

    /// (min, mean, max) of a utilisation list (zeros when empty).
    pub fn spread(u: &[f64]) -> (f64, f64, f64) {
        if u.is_empty() {
            return (0.0, 0.0, 0.0);
        }
        let min = u.iter().copied().fold(f64::INFINITY, f64::min);
        let max = u.iter().copied().fold(0.0, f64::max);
        (min, u.iter().sum::<f64>() / u.len() as f64, max)
    }
}

impl MemoryReport {
    fn new(c: &MemCounters, cycles: u64, scope: &Scope) -> MemoryReport {
        let per = |a: u64, n: u64| if n == 0 { 0.0 } else { a as f64 / n as f64 };
        let l2_busy_cycles = per(c.l2_bytes, scope.l2_bytes_per_cycle);
        let dram_busy_cycles = per(c.dram_bytes, scope.dram_bytes_per_cycle);
        let util = |busy: f64| {
            if cycles == 0 {
                0.0
            } else {
                busy / cycles as f64
            }
        };
        MemoryReport {
            l2_busy_cycles,
            dram_busy_cycles,
            l2_utilisation: util(l2_busy_cycles),
            icnt_utilisation: util(per(c.icnt_bytes, scope.icnt_bytes_per_cycle)),
            dram_row_hit_rate: per(
                c.dram_row_hits,
                c.dram_row_hits + c.dram_row_misses + c.dram_row_conflicts,
            ),
            dram_utilisation: util(dram_busy_cycles),
            load_latency_mean: per(c.load_latency_sum, c.loads_timed),
            load_latency_p50: latency_quantile(&c.load_latency, 0.5),
            load_latency_p99: latency_quantile(&c.load_latency, 0.99),
            load_latency_histogram: c
                .load_latency
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(i, n)| {
                    let (lo, hi) = latency_bucket_range(i);
                    (lo, hi, *n)
                })
                .collect(),
            counters: *c,
            sectors_per_request: per(c.global_sectors, c.global_requests),
            lines_per_request: per(c.global_lines, c.global_requests),
            shared_conflict_degree: if c.shared_requests == 0 {
                0.0
            } else {
                1.0 + per(c.shared_replays, c.shared_requests)
            },
        }
    }
}

impl Default for SmStats {
    fn default() -> Self {
        SmStats {
            warp_instructions: 0,
            thread_instructions: 0,
            stalls: [0; Stall::ALL.len()],
            lanes: [0; LANE_BUCKETS],
            unit_busy: [0; N_UNITS],
            max_resident_warps: 0,
            memory: MemCounters::default(),
            energy: crate::power::EnergyEvents::default(),
        }
    }
}

impl SmStats {
    #[inline]
    pub fn stall(&mut self, s: Stall, n: u64) {
        self.stalls[s as usize] += n;
    }

    /// A warp-cycle counted `Issued` turned out not to issue, for reason `why`.
    pub fn unissue(&mut self, why: Stall) {
        self.stalls[Stall::Issued as usize] -= 1;
        self.stalls[why as usize] += 1;
    }

    fn add(&mut self, o: &SmStats) {
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
        for (a, b) in self.stalls.iter_mut().zip(o.stalls) {
            *a += b;
        }
        for (a, b) in self.lanes.iter_mut().zip(o.lanes) {
            *a += b;
        }
        for (a, b) in self.unit_busy.iter_mut().zip(o.unit_busy) {
            *a += b;
        }
        self.max_resident_warps = self.max_resident_warps.max(o.max_resident_warps);
        self.memory.add(&o.memory);
        self.energy.add(&o.energy);
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Counters {
    pub cycles: u64,
    pub warp_instructions: u64,
    pub thread_instructions: u64,
    pub ipc: f64,
    pub simd_efficiency: f64,
    /// Warp-cycles per state; they sum to the resident warp-cycles.
    pub stalls: BTreeMap<String, u64>,
    /// `simd_lanes[k]`: issued warp instructions executed by k lanes (k = 0..=warp size).
    pub simd_lanes: Vec<u64>,
    /// Per unit kind: busy unit-cycles / (cycles × units of that kind in the SM or GPU).
    pub unit_utilisation: BTreeMap<String, f64>,
    /// Achieved occupancy: resident warp-cycles / (cycles × warp slots).
    pub occupancy: f64,
    /// Most warps resident at once on one SM.
    pub max_resident_warps: u64,
    /// Coalescer and shared-bank counters.
    pub memory: MemoryReport,
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
    /// The kind of fault that stopped this launch (its counters cover the cycles that ran);
    /// absent when it completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<&'static str>,
    /// The L2 slices' and DRAM channels' utilisation.
    pub components: ComponentReport,
    /// The component memory system's queues, backpressure and DRAM controllers
    /// (`memory_engine: components` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_system: Option<MemorySystemReport>,
    /// The launch's L1/shared-memory split under `l1.carveout: driver` (absent: the config's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l1_split: Option<crate::core::carveout::L1Split>,
    /// Sampled simulation (`--sample`): what was skipped and the prediction's error bound.
    /// `cycles` is then the prediction; every other counter covers the simulated CTAs, its
    /// rates over `sample.simulated_cycles`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample: Option<crate::core::sample::SampleReport>,
    /// The core clock over the launch and the simulated time (`power::governor`).
    pub clock: crate::power::ClockReport,
    /// Per PTX line: issues, lanes and stalls (`stats::source`; collected with
    /// `--stats-json`, `LaunchSpec::lines`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<source::SourceView>,
    /// Energy and power (configs with a `power` section).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::power::PowerReport>,
    pub sms: Vec<SmReport>,
    /// The summed counters, for totals across launches.
    #[serde(skip)]
    pub raw: SmStats,
    /// The whole GPU's units and warp slots.
    #[serde(skip)]
    pub gpu: Scope,
}

/// Functional unit kinds (`program::Unit::ALL`).
pub const N_UNITS: usize = 7;

/// Names of the unit kinds, in `program::Unit` order.
pub const UNIT_NAMES: [&str; N_UNITS] = ["int", "fp32", "fp64", "sfu", "branch", "ldst", "tensor"];

/// Units of each kind in the scope the counters cover (one SM, or all of them).
pub type UnitCounts = [u64; N_UNITS];

/// The hardware the counters cover: units of each kind and warp slots.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scope {
    pub units: UnitCounts,
    pub warp_slots: u64,
    /// `l2.bytes_per_cycle` and `dram.bytes_per_cycle` (the servers are GPU-wide).
    pub l2_bytes_per_cycle: u64,
    pub dram_bytes_per_cycle: u64,
    /// Interconnect port capacity of the scope's SMs, both directions
    /// (2 × `interconnect.port_bytes_per_cycle` per SM).
    pub icnt_bytes_per_cycle: u64,
}

fn counters(cycles: u64, warp_size: u32, s: &SmStats, scope: &Scope) -> Counters {
    let units = &scope.units;
    let resident: u64 = s.stalls.iter().sum();
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
        simd_lanes: s.lanes[..=warp_size as usize].to_vec(),
        unit_utilisation: UNIT_NAMES
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let cap = cycles * units[i];
                (
                    n.to_string(),
                    if cap == 0 {
                        0.0
                    } else {
                        s.unit_busy[i] as f64 / cap as f64
                    },
                )
            })
            .collect(),
        occupancy: if cycles * scope.warp_slots == 0 {
            0.0
        } else {
            resident as f64 / (cycles * scope.warp_slots) as f64
        },
        max_resident_warps: s.max_resident_warps,
        memory: MemoryReport::new(&s.memory, cycles, scope),
    }
}

impl KernelStats {
    pub fn collect<'a>(
        kernel: &str,
        cycles: u64,
        wall: f64,
        warp_size: u32,
        sm_scope: &Scope,
        sms: impl Iterator<Item = (u32, &'a SmStats)>,
    ) -> KernelStats {
        let mut total = SmStats::default();
        let mut reports = Vec::new();
        for (id, s) in sms {
            total.add(s);
            reports.push(SmReport {
                sm: id,
                counters: counters(cycles, warp_size, s, sm_scope),
            });
        }
        let n = reports.len() as u64;
        let gpu = Scope {
            units: sm_scope.units.map(|u| u * n),
            warp_slots: sm_scope.warp_slots * n,
            icnt_bytes_per_cycle: sm_scope.icnt_bytes_per_cycle * n,
            ..*sm_scope
        };
        KernelStats {
            kernel: kernel.to_string(),
            counters: counters(cycles, warp_size, &total, &gpu),
            gpu,
            wall_seconds: wall,
            fault: None,
            components: ComponentReport::default(),
            memory_system: None,
            l1_split: None,
            sample: None,
            clock: Default::default(),
            power: None,
            source: None,
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
    /// The machine the run simulated, as decided for its module.
    pub machine: Machine,
    pub kernels: Vec<KernelStats>,
}

/// What ran the kernels: the config, its generation, the module's target, and the
/// reconvergence policy actually used (`sm.reconvergence: auto` decided per module).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Machine {
    /// The config's `name`.
    pub config: String,
    /// `sm.arch`.
    pub arch: String,
    /// The module's `.target`.
    pub target: String,
    /// The policy the warps ran.
    pub reconvergence: String,
    /// `auto` when the config left the choice to the module's target, else the policy again.
    pub reconvergence_setting: String,
}

impl RunStats {
    pub fn from_kernels(kernels: Vec<KernelStats>, warp_size: u32, wall: f64) -> RunStats {
        let mut s = SmStats::default();
        let (mut cycles, mut simulated) = (0, 0);
        let scope = kernels.first().map(|k| k.gpu).unwrap_or_default();
        for k in &kernels {
            cycles += k.counters.cycles;
            simulated += k
                .sample
                .as_ref()
                .map_or(k.counters.cycles, |s| s.simulated_cycles);
            s.add(&k.raw);
        }
        // Rates over the cycles that ran; the total cycles include sampled launches' predictions.
        let mut totals = counters(simulated, warp_size, &s, &scope);
        totals.cycles = cycles;
        RunStats {
            warp_instructions_per_second: if wall > 0.0 {
                totals.warp_instructions as f64 / wall
            } else {
                0.0
            },
            totals,
            wall_seconds: wall,
            machine: Machine::default(),
            kernels,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::program::Unit;

    /// The stats names, the unit enum and its index order stay in step.
    #[test]
    fn latency_buckets_tile_the_line() {
        let mut next = 0;
        for i in 0..LATENCY_BUCKETS {
            let (lo, hi) = latency_bucket_range(i);
            assert_eq!(lo, next, "bucket {i}");
            assert!(hi >= lo);
            assert_eq!(latency_bucket(lo), i);
            assert_eq!(latency_bucket(hi.min(1 << 20)), i);
            next = hi.wrapping_add(1);
        }
        assert_eq!(latency_bucket(u64::MAX), LATENCY_BUCKETS - 1);
        // The median of 3 loads at 28 and one at 460 is in 28's bucket [28, 31].
        let mut c = MemCounters::default();
        for l in [28, 28, 28, 460] {
            c.record_load_latency(l);
        }
        assert_eq!(latency_quantile(&c.load_latency, 0.5), 31);
        assert_eq!(latency_quantile(&c.load_latency, 0.99), 511);
    }

    #[test]
    fn unit_names_follow_the_unit_order() {
        assert_eq!(Unit::ALL.len(), N_UNITS);
        for (i, u) in Unit::ALL.iter().enumerate() {
            assert_eq!(*u as usize, i);
            assert_eq!(u.name(), UNIT_NAMES[i]);
        }
    }
}
