//! Typed GPU configuration (YAML), `--set key=value` overrides, and validation.
//!
//! **API boundary**: the key names (`sm.count`, `sm.warp_size`, `sm.scheduler`, `latency.*`,
//! `watchdog_cycles`, ...) are relied on by scripts and sweeps; keep them stable. Unknown keys
//! are errors that list the valid ones (serde `deny_unknown_fields` on every struct).

pub mod arch;
mod bind;
mod overrides;
pub mod power;
pub mod programs;

pub use arch::Arch;
pub use bind::{TargetError, Unit};
pub use overrides::{apply_override, Origin, Override};
pub use power::{ClockConfig, EnergyConfig, PowerConfig};

use serde::Deserialize;

/// The embedded default GPU: `configs/tiny.yaml`.
pub const TINY_YAML: &str = include_str!("../../../configs/tiny.yaml");

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub name: String,
    pub sm: SmConfig,
    pub latency: LatencyConfig,
    /// The L1 data cache per SM (the coalescer's sectors and lines, and the timing cache).
    pub l1: L1Config,
    /// The L2 cache shared by all SMs (`mem::cache`).
    pub l2: L2Config,
    pub dram: DramConfig,
    /// The crossbar between the SMs and the L2 slices.
    pub interconnect: InterconnectConfig,
    /// A kernel still running after this many cycles is stopped with a watchdog fault.
    pub watchdog_cycles: u64,
    /// The core clock every cycle figure of the config is counted at, in MHz: turns cycles
    /// into time (`gpusim gemm`: seconds, TFLOP/s, the peak rates). Optional: the simulation
    /// itself never reads it.
    #[serde(default)]
    pub clock_mhz: Option<u32>,
    /// How the core clock may move below `clock_mhz` (`config::power`, docs/power.md).
    #[serde(default)]
    pub clock: ClockConfig,
    /// The power model and its limit; absent: no power is reported.
    #[serde(default)]
    pub power: Option<PowerConfig>,
    /// Memory programs by operation, as text (`programs`; key `st_global_wb` for
    /// `st.global.wb`); absent ones are the library's. Parsed and checked on load.
    #[serde(default)]
    pub memory_programs: std::collections::BTreeMap<String, String>,
    /// Every operation's parsed program (from `memory_programs` or the library).
    #[serde(skip)]
    parsed_programs: std::collections::BTreeMap<&'static str, crate::mem::program::Program>,
    /// Knobs that must not change any result, for testing that they do not (`debug`).
    #[serde(default)]
    pub debug: DebugConfig,
    /// Which memory system runs the operations of `ld`, `st`, `atom` and `red` on device
    /// memory (docs/memory.md).
    #[serde(default)]
    pub memory_engine: MemoryEngineKind,
}

/// `memory_engine`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryEngineKind {
    /// Each operation's program runs to its end when its instruction issues, every step
    /// timed by bandwidth calendars (`mem::hierarchy`): the model before issue 12, kept for
    /// comparison.
    Issue,
    /// Operations travel as messages between components with bounded queues — the SM's L1,
    /// the crossbar, L2 slices, DRAM channel controllers — each macro step of its program
    /// run at its place (`mem::system`); registers are written when the operation completes,
    /// and the TMA's line requests go through the SM's TMA engine there. The default.
    #[default]
    Components,
}

/// `debug`: settings that change how the simulator runs, never what it computes.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DebugConfig {
    /// The order the SMs are stepped in within a cycle. Results must not depend on it: SMs
    /// touch only their own state while they step, and the memory exchange that follows runs
    /// in SM-id order (`core::gpu`).
    #[serde(default)]
    pub step_order: StepOrder,
    /// Seed of the `shuffled` order (a new permutation every cycle).
    #[serde(default)]
    pub step_seed: u64,
    /// Which blocked memory operations the component memory system retries after another
    /// one progressed. Results must not depend on it: a blocked operation whose wait has not
    /// changed would block again, having changed nothing (`hierarchy::Wait`).
    #[serde(default)]
    pub retry_blocked: RetryBlocked,
    /// Which resident warps an SM classifies in each step it takes. Results must not depend
    /// on it: a parked warp's stall holds until its wake-up or an event (`core::sm::parked`).
    #[serde(default)]
    pub classify: Classify,
}

/// `debug.classify`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Classify {
    /// Those not parked (a stalled warp is parked until its wake-up; faster).
    #[default]
    Parked,
    /// Every one, every step (the check of parking; slower).
    EveryCycle,
}

/// `debug.retry_blocked`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RetryBlocked {
    /// Those whose wait changed since they blocked (`mem::system`).
    #[default]
    Changed,
    /// Every one (the check of `changed`; slower).
    Every,
}

/// `debug.step_order`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum StepOrder {
    #[default]
    Ascending,
    Descending,
    Shuffled,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmConfig {
    /// The compute capability the config models (`sm_20`, `sm_70`, `sm_90`): a module whose
    /// `.target` a device of this generation cannot run is rejected (`arch`).
    pub arch: Arch,
    pub count: u32,
    pub warp_size: u32,
    /// Sub-partitions (processing blocks) per SM, each with one warp scheduler and its own
    /// functional units; warp slot `i` belongs to sub-partition `i % schedulers`.
    pub schedulers: u32,
    pub scheduler: SchedulerKind,
    /// Seed of the `random` scheduler.
    pub scheduler_seed: u64,
    /// Active-set size of the `two-level` scheduler, per sub-partition.
    #[serde(default = "default_two_level_active")]
    pub two_level_active: u32,
    /// `sm.reconvergence` as written: `auto` or a policy name.
    #[serde(rename = "reconvergence")]
    pub reconvergence_setting: ReconvergenceSetting,
    /// The policy the warps run: the setting, with `auto` decided for the module being run
    /// (`Config::for_module`; until then, as for a module built for `sm.arch`).
    #[serde(skip)]
    pub reconvergence: ReconvergenceKind,
    /// Parameters of the `convergence-barrier` policy (defaults when absent).
    #[serde(default)]
    pub convergence_barrier: ConvergenceBarrierConfig,
    pub max_threads: u32,
    pub max_warps: u32,
    pub max_ctas: u32,
    pub registers: u32,
    pub shared_bytes: u32,
    /// Shared-memory banks and the bytes of one bank word: bank = (address / bytes) mod banks.
    pub shared_banks: u32,
    pub shared_bank_bytes: u32,
    pub local_bytes_per_thread: u32,
    /// Hardware behaviour: a warp that exits counts as arrived at every barrier of its CTA.
    /// `false` is the formal model, where waiters on such a barrier hang (reported as a
    /// deadlock).
    pub exited_warps_arrive: bool,
    pub barrier_divergence: BarrierDivergence,
    /// Which side of a divergent branch runs first under the stack policies (token-stack,
    /// pdom-stack): `taken-first` (the formal model's (bra_guard) rule, the default) or
    /// `not-taken-first`. Either is a valid SIMT execution; `gpusim check` varies it.
    #[serde(default)]
    pub divergence_order: DivergenceOrder,
    /// Cycles to fetch and decode after a control transfer (a taken branch, a reconvergence
    /// pop, a call or return) before the warp's next instruction can issue; straight-line
    /// code streams through the instruction buffer.
    pub ifetch_cycles: u32,
    /// A scheduler may issue a second, independent instruction of the same warp to another
    /// unit in the same cycle (Fermi GF104-style dual issue).
    pub dual_issue: bool,
    pub units: UnitsConfig,
    /// The SM's tensor memory accelerator (TMA copy engine) for `cp.async.bulk{.tensor}`;
    /// absent on GPUs without one (kernels using it are then rejected).
    #[serde(default)]
    pub tma: Option<TmaConfig>,
    /// `wgmma.mma_async` timing on the sub-partition's tensor unit; absent on GPUs without
    /// warpgroup MMA.
    #[serde(default)]
    pub wgmma: Option<WgmmaConfig>,
    /// Thread-block clusters: distributed shared memory; absent on GPUs without clusters.
    #[serde(default)]
    pub cluster: Option<ClusterConfig>,
    /// What a fence costs beyond waiting for the warp's memory operations; absent: nothing.
    #[serde(default)]
    pub fence: FenceConfig,
}

/// The cycles a fence holds its warp once the warp's memory operations have completed, by
/// scope (`membar`/`fence` at .cta; .cluster and .gpu, which ptxas lowers alike to
/// MEMBAR.ALL.GPU on sm_90; .sys). An mbarrier arrive with `.release.cluster` semantics pays
/// the GPU-scope fence first, as its SASS does.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FenceConfig {
    pub cta: u32,
    pub gpu: u32,
    pub sys: u32,
}

impl FenceConfig {
    pub fn cycles(&self, level: gpusim_isa::FenceLevel) -> u64 {
        u64::from(match level {
            gpusim_isa::FenceLevel::Cta => self.cta,
            gpusim_isa::FenceLevel::Gpu => self.gpu,
            gpusim_isa::FenceLevel::Sys => self.sys,
        })
    }
}

/// Clusters: how long an access to a peer CTA's shared memory takes to arrive (remote stores,
/// mbarrier arrives, loads one way).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    pub dsmem_latency: u32,
}

/// `wgmma.mma_async` timing: each warp's 16-row slice (16·N·K multiply-adds) holds its
/// sub-partition's tensor unit for ⌈FMAs / rate⌉ cycles, the rate being `fmas_per_cycle` for
/// .f16/.bf16, half of it for .tf32 and twice it for fp8; its accumulators are ready `latency`
/// cycles after the slice leaves the unit. With `operand_bytes_per_cycle`, the slice also
/// cannot finish before its shared-memory operands have been read at that rate: A's 16 rows
/// (512 bytes) when A comes from shared memory, and a quarter of B (N rows of 32 bytes, read
/// once for the warpgroup's four warps).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct WgmmaConfig {
    pub fmas_per_cycle: u32,
    pub latency: u32,
    /// Shared-memory operand bytes a sub-partition's tensor unit reads per cycle (absent: the
    /// operands are not timed).
    #[serde(default)]
    pub operand_bytes_per_cycle: Option<u32>,
}

/// The TMA engine of one SM: a bulk or tensor copy is split into L1-line requests that the
/// engine issues at `bytes_per_cycle`; the bytes land in shared memory `latency` cycles after
/// the last line has come back (the engine's address generation and shared-memory write).
/// Its queue admits a copy while it holds fewer than `queue_lines` line requests (no depth is
/// published; by default the most requests the copies shared memory can hold may need: a
/// copy moves at least 16 bytes per row, so one request per 16 bytes of shared memory).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TmaConfig {
    pub latency: u32,
    pub bytes_per_cycle: u32,
    /// The engine's rate for a store's (or reduction's) lines, which it reads from shared
    /// memory and writes out; `bytes_per_cycle` when absent.
    #[serde(default)]
    pub store_bytes_per_cycle: Option<u32>,
    #[serde(default)]
    pub queue_lines: Option<u32>,
}

impl TmaConfig {
    /// `queue_lines`, or one request per 16 bytes of shared memory (`shared_bytes`): a bulk
    /// copy's size and a tensor box's rows are multiples of 16 bytes (PTX ISA,
    /// `cp.async.bulk`; CUDA driver API, `cuTensorMapEncodeTiled`), so no more requests can
    /// be needed to fill shared memory.
    pub fn queue_lines(&self, shared_bytes: u32) -> u32 {
        self.queue_lines.unwrap_or(shared_bytes.div_ceil(16)).max(1)
    }

    /// `store_bytes_per_cycle`, or the load rate.
    pub fn store_bytes_per_cycle(&self) -> u32 {
        self.store_bytes_per_cycle.unwrap_or(self.bytes_per_cycle)
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    /// Loose round robin: start after the warp that issued last.
    Lrr,
    /// Greedy then oldest: keep issuing from one warp until it stalls, then the oldest.
    Gto,
    /// Oldest ready warp first.
    Oldest,
    /// A random ready warp, seeded by `sm.scheduler_seed` (for litmus tests).
    Random,
    /// Two-level: an active set of `sm.two_level_active` warps, memory waiters swapped out.
    TwoLevel,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ReconvergenceKind {
    /// Habermaier 2011 §5.4: the token stack with ssy/sync/preBrk/brk/preRet.
    #[default]
    TokenStack,
    /// The immediate post-dominator SIMT stack without tokens (GPGPU-Sim).
    PdomStack,
    /// Volta independent thread scheduling with BSSY/BSYNC convergence barriers; its switch
    /// rule is `sm.convergence_barrier`.
    ConvergenceBarrier,
    /// Multi-path IPDOM: warp split and reconvergence tables (ElTantawy et al., HPCA 2014).
    MultiPath,
    /// Thread frontiers: highest-priority threads first (Diamos et al., MICRO 2011).
    ThreadFrontiers,
}

/// `sm.divergence_order`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DivergenceOrder {
    #[default]
    TakenFirst,
    NotTakenFirst,
}

/// `sm.reconvergence`: a policy, or `auto` — convergence barriers for modules built for
/// `sm_70` or newer on a Volta-or-later config, the token stack otherwise (`arch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReconvergenceSetting {
    Auto,
    Fixed(ReconvergenceKind),
}

impl ReconvergenceSetting {
    /// The policy for a module whose `.target` is `target`, on a device of `device`.
    pub fn resolve(self, device: Arch, target: Arch) -> ReconvergenceKind {
        match self {
            ReconvergenceSetting::Fixed(k) => k,
            ReconvergenceSetting::Auto if arch::auto_uses_convergence_barriers(device, target) => {
                ReconvergenceKind::ConvergenceBarrier
            }
            ReconvergenceSetting::Auto => ReconvergenceKind::TokenStack,
        }
    }
}

impl<'de> Deserialize<'de> for ReconvergenceSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "auto" {
            return Ok(ReconvergenceSetting::Auto);
        }
        ReconvergenceKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .map(ReconvergenceSetting::Fixed)
            .ok_or_else(|| serde::de::Error::unknown_variant(&s, RECONVERGENCE_CHOICES))
    }
}

/// The spellings of `sm.reconvergence`: `auto` and every policy's name.
pub const RECONVERGENCE_CHOICES: &[&str] = &[
    "auto",
    "token-stack",
    "pdom-stack",
    "convergence-barrier",
    "multi-path",
    "thread-frontiers",
];

impl ReconvergenceKind {
    /// Every policy, in the order the docs list them.
    pub const ALL: [ReconvergenceKind; 5] = [
        ReconvergenceKind::TokenStack,
        ReconvergenceKind::PdomStack,
        ReconvergenceKind::ConvergenceBarrier,
        ReconvergenceKind::MultiPath,
        ReconvergenceKind::ThreadFrontiers,
    ];

    /// The config spelling (`token-stack`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ReconvergenceKind::TokenStack => "token-stack",
            ReconvergenceKind::PdomStack => "pdom-stack",
            ReconvergenceKind::ConvergenceBarrier => "convergence-barrier",
            ReconvergenceKind::MultiPath => "multi-path",
            ReconvergenceKind::ThreadFrontiers => "thread-frontiers",
        }
    }
}

/// Parameters of `sm.reconvergence: convergence-barrier` (key `sm.convergence_barrier`; every
/// field has a default, so the section may be left out or given in part, e.g.
/// `--set 'sm.convergence_barrier={switch: quantum, quantum: 256}'`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct ConvergenceBarrierConfig {
    /// When the running thread group yields to another group of its warp.
    pub switch: SwitchRule,
    /// Instructions a group runs before it yields under `switch: quantum`.
    pub quantum: u32,
}

impl Default for ConvergenceBarrierConfig {
    fn default() -> Self {
        ConvergenceBarrierConfig {
            switch: SwitchRule::BackwardBranch,
            quantum: 256,
        }
    }
}

/// When a thread group of an independently scheduled warp yields (the YIELD of the
/// convergence-barrier patent, US 10,067,768: yielded threads count as arrived at the
/// barriers they participate in).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SwitchRule {
    /// At every backward branch (a loop iteration), as a compiler-inserted YIELD at back edges.
    BackwardBranch,
    /// After `quantum` instructions of the same group.
    Quantum,
    /// Never: a group runs until it waits at a barrier or exits (a spin-lock whose owner
    /// waits can then livelock, as under the token stack).
    Blocked,
}

/// What a `bar.sync` executed by a diverged warp does.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum BarrierDivergence {
    /// Stop the kernel with a barrier-divergence fault (CUDA: undefined behaviour).
    Fault,
    /// The formal model (Habermaier §5.5 updArrCnt): one arriving lane counts its whole warp.
    CountWarp,
}

/// A pipelined functional unit of one sub-partition.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitConfig {
    /// Units of this kind per sub-partition.
    pub count: u32,
    /// Cycles from issue until the result may be read.
    pub latency: u32,
    /// Cycles a unit stays busy per warp instruction (warp size / lanes per unit).
    pub issue_interval: u32,
}

/// The load/store path of one sub-partition: how often it accepts a warp instruction. The
/// latency of an access is that of its memory space (`latency.*`).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemUnitConfig {
    pub count: u32,
    pub issue_interval: u32,
}

/// The functional units of each sub-partition (one warp scheduler each).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitsConfig {
    pub int: UnitConfig,
    pub fp32: UnitConfig,
    pub fp64: UnitConfig,
    pub sfu: UnitConfig,
    pub branch: UnitConfig,
    pub ldst: MemUnitConfig,
    /// Tensor cores: one `mma.sync` warp instruction each (latency and issue interval per
    /// `mma`, whatever its shape).
    pub tensor: UnitConfig,
}

/// Round-trip cycles of the places a memory-program step reaches besides the caches and DRAM
/// (`mem::hierarchy::Costs`: shared memory, the constant bank, kernel parameters), and the
/// barrier release.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyConfig {
    pub shared: u32,
    pub constant: u32,
    pub param: u32,
    pub barrier: u32,
}

/// The L1 data cache: a request touches `sector_bytes` sectors, grouped in `line_bytes` lines
/// (the coalescer, `mem::coalesce`; the L1 takes one line per cycle).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1Config {
    pub line_bytes: u32,
    pub sector_bytes: u32,
    pub size_kib: u32,
    pub ways: u32,
    /// Load-to-use cycles when every sector of a request hits.
    pub hit_latency: u32,
    /// `lru` or `fifo` (`mem::cache::REPLACEMENTS`).
    pub replacement: String,
    /// Miss status holding registers: lines in flight at once (`mem::cache::Mshrs`).
    pub mshrs: u32,
    /// Line operations waiting for (or blocked in) the L1 in the component memory system
    /// (`mem::system`): a memory instruction whose operations do not fit does not issue. At
    /// least `sm.warp_size`, the most operations one instruction makes.
    pub request_queue: u32,
    /// How a launch splits the SM's unified L1/shared array (`size_kib` + `sm.shared_bytes`):
    /// the config's split, or the driver's per-kernel choice among `carveouts_kib`
    /// (`core::carveout`).
    #[serde(default)]
    pub carveout: Carveout,
    /// The shared-memory capacities, KiB, ascending, that `carveout: driver` chooses from.
    #[serde(default)]
    pub carveouts_kib: Vec<u32>,
}

/// `l1.carveout`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Carveout {
    /// `l1.size_kib` of L1 and `sm.shared_bytes` of shared memory for every launch.
    #[default]
    Fixed,
    /// Per launch, the smallest carve-out that does not limit occupancy (CUDA's driver).
    Driver,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Config {
    pub size_kib: u32,
    pub ways: u32,
    /// Load-to-use cycles when the sectors an L1 misses hit in L2.
    pub hit_latency: u32,
    pub line_bytes: u32,
    pub sector_bytes: u32,
    pub replacement: String,
    /// How a line picks its set in its slice: `linear` (line mod sets) or `hashed`
    /// (`mem::cache::SetIndex`); default `linear`.
    #[serde(default = "default_set_index")]
    pub set_index: String,
    /// Aggregate bytes the L2 serves per core cycle (`mem::cache::Server`).
    pub bytes_per_cycle: u32,
    /// The L2 is split into this many slices of `size_kib / slices` each, a line's slice
    /// chosen by `mem::interconnect::slice_of` (`l2_slice_geometry`).
    pub slices: u32,
    /// Entries of each slice's request queue and of each L2 ↔ DRAM link in the component
    /// memory system (`mem::system`; GPGPU-Sim's `-gpgpu_dram_partition_queues`).
    pub request_queue: u32,
    /// The L2's partitions (`mem::system::partition`; default 1): each holds an equal share
    /// of the slices and sits in front of an equal share of the SMs. A hit or fill in a slice
    /// of another partition than the requesting SM's costs `far_latency` more cycles and
    /// leaves a copy of the line's tag in the requester's partition, which takes a way there
    /// and makes its next reads near (the GH100's L2, docs/memory.md). The component memory
    /// system only: the issue-time model (`memory_engine: issue`) has one L2.
    #[serde(default = "one_partition")]
    pub partitions: u32,
    #[serde(default)]
    pub far_latency: u32,
    /// Which SMs sit in front of which partition, as runs of consecutive SMs taking the
    /// partitions in turn (`[16, 48, 50, 18]`: SMs 0–15 partition 0, 16–63 partition 1, 64–113
    /// partition 0, 114–131 partition 1), repeated if `sm.count` is larger than their sum (a
    /// smaller `sm.count` keeps the first SMs'); absent: `partitions` equal runs of the SMs.
    #[serde(default)]
    pub partition_runs: Option<Vec<u32>>,
}

fn one_partition() -> u32 {
    1
}

/// DRAM organisation and timing: the channel controller's (`mem::dram_ctrl`) and the
/// compute-at-issue model's (`mem::dram`, `dram_geometry`). Every `t_*` is in DRAM
/// command-clock cycles (`clock_mhz` here), as datasheets and the Ramulator 2 / DRAMsim3 tables
/// give them; the simulator converts them to core cycles (`Config::dram_clocks`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// Unloaded load-to-use cycles of a request that misses in L2 and finds its bank
    /// precharged (a row Miss: `mem::dram` makes a row hit `t_rcd` faster, a conflict `t_rp`
    /// slower).
    pub latency: u32,
    /// Aggregate bytes DRAM delivers per core cycle over all channels (each channel's bus
    /// moves `bytes_per_cycle / channels`, fractions kept exact).
    pub bytes_per_cycle: u32,
    pub channels: u32,
    /// Banks per channel.
    pub banks: u32,
    /// Bytes of one row (page) of a bank, as its channel sees it.
    pub row_bytes: u32,
    /// Consecutive bytes mapped to one channel before the next (`mem::dram_ctrl::locate`).
    pub interleave_bytes: u32,
    /// The DRAM command clock, MHz: the clock of every `t_*`.
    pub clock_mhz: u32,
    /// Width of one channel's data bus, bytes per transfer.
    pub bus_bytes: u32,
    /// Data transfers per command-clock cycle (2: DDR; 4: GDDR5, HBM3 against their CK).
    pub data_rate: u32,
    /// ACT → RD/WR of a bank.
    pub t_rcd: u32,
    /// PRE → ACT of a bank.
    pub t_rp: u32,
    /// ACT → PRE of a bank.
    pub t_ras: u32,
    /// RD → first read data (CAS latency).
    pub t_cl: u32,
    /// WR → first write data.
    pub t_cwl: u32,
    /// Column command → column command.
    pub t_ccd: u32,
    /// ACT → ACT of different banks.
    pub t_rrd: u32,
    /// Four-activate window: at most four ACTs per channel in any `t_faw` cycles.
    pub t_faw: u32,
    /// End of write data → RD command (write-to-read turnaround).
    pub t_wtr: u32,
    /// End of read data → start of write data (read-to-write bus turnaround).
    pub t_rtw: u32,
    /// End of write data → PRE (write recovery).
    pub t_wr: u32,
    /// RD → PRE.
    pub t_rtp: u32,
    /// Refresh interval (0: no refresh).
    pub t_refi: u32,
    /// All-bank refresh duration.
    pub t_rfc: u32,
    /// `all-bank` or `per-bank` (`mem::dram_ctrl::REFRESH_POLICIES`); `all-bank` when absent.
    #[serde(default = "default_refresh")]
    pub refresh: String,
    /// Per-bank refresh duration (`refresh: per-bank`; 0 when absent).
    #[serde(default)]
    pub t_rfc_pb: u32,
    /// Read and write queue entries per channel.
    pub read_queue: u32,
    pub write_queue: u32,
    /// Write drain starts when the write queue holds this many entries ...
    pub write_drain_high: u32,
    /// ... and stops when it is down to this many (with reads waiting).
    pub write_drain_low: u32,
    /// `fcfs` or `fr-fcfs` (`mem::dram_ctrl::SCHEDULERS`).
    pub scheduler: String,
    /// DRAM cycles after which a waiting request outranks row hits (`fr-fcfs`) and a waiting
    /// write forces a write drain (any scheduler).
    pub starvation_cap: u32,
    /// `open` or `closed` (`mem::dram_ctrl::ROW_POLICIES`).
    pub row_policy: String,
}

/// The SM ↔ L2-slice crossbar (`mem::interconnect`).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterconnectConfig {
    /// One-way latency, SM to slice or back, in core cycles.
    pub latency: u32,
    /// Bytes per core cycle of each port (every SM and every slice has one in each direction).
    pub port_bytes_per_cycle: u32,
    /// Bytes per cycle of each L2 slice's input port (requests, write data, write-backs);
    /// `port_bytes_per_cycle` when absent.
    #[serde(default)]
    pub slice_input_bytes_per_cycle: Option<u32>,
    /// Packets each crossbar link (an SM's or a slice's output port) holds in flight and
    /// waiting in the component memory system (`mem::system`); a full link holds its producer.
    pub buffer_packets: u32,
}

/// Narasiman et al. (MICRO 2011) evaluate fetch groups of 8 warps.
fn default_two_level_active() -> u32 {
    8
}

impl InterconnectConfig {
    /// `slice_input_bytes_per_cycle`, or the port rate.
    pub fn slice_input_bytes_per_cycle(&self) -> u32 {
        self.slice_input_bytes_per_cycle
            .unwrap_or(self.port_bytes_per_cycle)
    }
}

fn default_set_index() -> String {
    "linear".into()
}

fn default_refresh() -> String {
    "all-bank".to_string()
}

/// Upper bound of `sm.count`, `sm.max_warps`, `sm.max_ctas` and `sm.schedulers`.
pub const MAX_SLOTS: u32 = 1024;

/// A configuration error: where (the config file, or the manifest or `--set` that overrode
/// the key), the key path (empty when the source already names it) and what is wrong (with
/// the valid choices).
#[derive(Debug)]
pub struct ConfigError {
    pub source_name: String,
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `--set sm.count=0: must be at least 1`: the key is said once.
        let said = self.source_name.strip_prefix("--set ").is_some_and(|s| {
            s.strip_prefix(self.path.as_str())
                .is_some_and(|r| r.starts_with('='))
        });
        match self.path.as_str() {
            _ if said => write!(f, "{}: {}", self.source_name, self.message),
            "" => write!(f, "{}: {}", self.source_name, self.message),
            p => write!(f, "{}: {p}: {}", self.source_name, self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Parse YAML text, apply `key=value` overrides in order, then validate.
    pub fn from_yaml(
        source_name: &str,
        text: &str,
        overrides: &[(String, String)],
    ) -> Result<Config, ConfigError> {
        let err = |path: &str, message: String| ConfigError {
            source_name: source_name.to_string(),
            path: path.to_string(),
            message,
        };
        let mut value = crate::yaml::parse_value(text).map_err(|e| err(&e.path, e.message))?;
        for (k, v) in overrides {
            apply_override(&mut value, k, v).map_err(|m| err(k, m))?;
        }
        let mut cfg: Config = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let m = crate::yaml::without_path(&path, &e.into_inner().to_string());
            err(&path, m)
        })?;
        cfg.validate().map_err(|(p, m)| err(p, m))?;
        cfg.sm.reconvergence = cfg
            .sm
            .reconvergence_setting
            .resolve(cfg.sm.arch, cfg.sm.arch);
        cfg.parsed_programs = programs::load(&cfg.memory_programs).map_err(|(p, m)| err(&p, m))?;
        Ok(cfg)
    }

    /// `from_yaml` with overrides that say where they were written: an error one of them
    /// caused is reported there (`Override::locate`).
    pub fn from_yaml_overridden(
        source_name: &str,
        text: &str,
        overrides: &[Override],
    ) -> Result<Config, ConfigError> {
        let plain: Vec<(String, String)> = overrides
            .iter()
            .map(|o| (o.key.clone(), o.value.clone()))
            .collect();
        Config::from_yaml(source_name, text, &plain).map_err(|mut e| {
            if let Some(o) = overrides
                .iter()
                .rev()
                .find(|o| o.caused(&e.path, &e.message))
            {
                (e.source_name, e.path) = o.locate(&e.path);
            }
            e
        })
    }

    pub fn tiny() -> Config {
        Config::from_yaml("configs/tiny.yaml", TINY_YAML, &[])
            .expect("the embedded tiny config is valid")
    }

    fn validate(&self) -> Result<(), (&'static str, String)> {
        self.validate_clock_and_power()?;
        let sm = &self.sm;
        if sm.count == 0 {
            return Err(("sm.count", "must be at least 1".into()));
        }
        if sm.warp_size == 0 || sm.warp_size > 64 {
            return Err((
                "sm.warp_size",
                format!("must be between 1 and 64, got {}", sm.warp_size),
            ));
        }
        if sm.convergence_barrier.quantum == 0 {
            return Err((
                "sm.convergence_barrier.quantum",
                "must be at least 1".into(),
            ));
        }
        if sm.schedulers == 0 {
            return Err(("sm.schedulers", "must be at least 1".into()));
        }
        if sm.max_warps == 0 || sm.max_ctas == 0 || sm.max_threads == 0 {
            return Err(("sm.max_warps", "occupancy limits must be positive".into()));
        }
        // Every SM allocates its warp and CTA slots up front: bound them so that a typo is an
        // error, not an allocation failure.
        for (key, v) in [
            ("sm.count", sm.count),
            ("sm.max_warps", sm.max_warps),
            ("sm.max_ctas", sm.max_ctas),
            ("sm.schedulers", sm.schedulers),
        ] {
            if v > MAX_SLOTS {
                return Err((key, format!("must be at most {MAX_SLOTS}, got {v}")));
            }
        }
        if self.watchdog_cycles == 0 {
            return Err(("watchdog_cycles", "must be positive".into()));
        }
        if self.clock_mhz.is_some_and(|c| c == 0 || c > 100_000) {
            return Err(("clock_mhz", "must be between 1 and 100000 (MHz)".into()));
        }
        if sm.arch.variant != arch::Variant::Generic {
            return Err((
                "sm.arch",
                format!(
                    "names the compute capability of the modelled GPU, e.g. sm_{n}; `{}` is a compilation target",
                    sm.arch,
                    n = sm.arch.number
                ),
            ));
        }
        if let Some(w) = &sm.wgmma {
            if w.fmas_per_cycle < 2 || w.fmas_per_cycle > 1 << 20 {
                return Err((
                    "sm.wgmma.fmas_per_cycle",
                    format!("must be in 2..=1048576, got {}", w.fmas_per_cycle),
                ));
            }
            if w.latency > 1 << 20 {
                return Err((
                    "sm.wgmma.latency",
                    format!("must be at most 1048576, got {}", w.latency),
                ));
            }
            if let Some(b) = w.operand_bytes_per_cycle {
                if b == 0 || b > 1 << 20 {
                    return Err((
                        "sm.wgmma.operand_bytes_per_cycle",
                        format!("must be in 1..=1048576 (or absent: operands not timed), got {b}"),
                    ));
                }
            }
        }
        let f = &sm.fence;
        for (key, cycles) in [
            ("sm.fence.cta", f.cta),
            ("sm.fence.gpu", f.gpu),
            ("sm.fence.sys", f.sys),
        ] {
            if cycles > 1 << 20 {
                return Err((key, format!("must be at most 1048576, got {cycles}")));
            }
        }
        if let Some(t) = &sm.tma {
            if t.bytes_per_cycle == 0 || t.bytes_per_cycle > 4096 {
                return Err((
                    "sm.tma.bytes_per_cycle",
                    format!("must be in 1..=4096, got {}", t.bytes_per_cycle),
                ));
            }
            if let Some(r) = t.store_bytes_per_cycle.filter(|&r| r == 0 || r > 4096) {
                return Err((
                    "sm.tma.store_bytes_per_cycle",
                    format!("must be in 1..=4096, got {r}"),
                ));
            }
            if t.queue_lines == Some(0) {
                return Err(("sm.tma.queue_lines", "must be at least 1".into()));
            }
        }
        let u = &sm.units;
        for (key, unit) in [
            ("sm.units.int", u.int),
            ("sm.units.fp32", u.fp32),
            ("sm.units.fp64", u.fp64),
            ("sm.units.sfu", u.sfu),
            ("sm.units.branch", u.branch),
            ("sm.units.tensor", u.tensor),
        ] {
            if unit.count == 0 || unit.count > 64 || unit.issue_interval == 0 || unit.latency == 0 {
                return Err((
                    key,
                    format!(
                        "needs 1..=64 units, a positive latency and issue interval; got count {}, latency {}, issue_interval {}",
                        unit.count, unit.latency, unit.issue_interval
                    ),
                ));
            }
        }
        if u.ldst.count == 0 || u.ldst.count > 64 || u.ldst.issue_interval == 0 {
            return Err((
                "sm.units.ldst",
                format!(
                    "needs 1..=64 units and a positive issue interval; got count {}, issue_interval {}",
                    u.ldst.count, u.ldst.issue_interval
                ),
            ));
        }
        // Bounds keep the MSHR scan and the servers' byte clocks small.
        for (key, n, max) in [
            ("l1.mshrs", self.l1.mshrs, 4096),
            ("l2.bytes_per_cycle", self.l2.bytes_per_cycle, 1 << 20),
            ("dram.bytes_per_cycle", self.dram.bytes_per_cycle, 1 << 20),
        ] {
            if n == 0 || n > max {
                return Err((key, format!("must be in 1..={max}; got {n}")));
            }
        }
        for (k, g) in [(L1_KEYS, self.l1_geometry()), (L2_KEYS, self.l2_geometry())] {
            validate_cache(&k, &g, sm.count)?;
        }
        self.validate_carveouts()?;
        let names = crate::mem::cache::SET_INDEXES;
        if !names.contains(&self.l2.set_index.as_str()) {
            return Err((
                "l2.set_index",
                format!(
                    "must be one of {}, got `{}`",
                    names.join(", "),
                    self.l2.set_index
                ),
            ));
        }
        if sm.shared_banks == 0 || sm.shared_banks as usize > crate::mem::coalesce::MAX_BANKS {
            return Err((
                "sm.shared_banks",
                format!(
                    "must be between 1 and {}, got {}",
                    crate::mem::coalesce::MAX_BANKS,
                    sm.shared_banks
                ),
            ));
        }
        if sm.shared_bank_bytes == 0 {
            return Err(("sm.shared_bank_bytes", "must be positive".into()));
        }
        // Bounds keep the per-bank, per-port and per-slice arrays small.
        let d = &self.dram;
        for (key, n, max) in [
            ("dram.channels", d.channels, 1024),
            ("dram.banks", d.banks, 1024),
            ("dram.row_bytes", d.row_bytes, 1 << 20),
            ("dram.interleave_bytes", d.interleave_bytes, 1 << 20),
            ("l2.slices", self.l2.slices, 1024),
            (
                "interconnect.port_bytes_per_cycle",
                self.interconnect.port_bytes_per_cycle,
                1 << 20,
            ),
            (
                "interconnect.slice_input_bytes_per_cycle",
                self.interconnect.slice_input_bytes_per_cycle(),
                1 << 20,
            ),
        ] {
            if n == 0 || n > max {
                return Err((key, format!("must be in 1..={max}; got {n}")));
            }
        }
        if self.interconnect.latency > 100_000 {
            return Err((
                "interconnect.latency",
                format!(
                    "must be in 0..=100000 cycles; got {}",
                    self.interconnect.latency
                ),
            ));
        }
        self.validate_dram()?;
        self.validate_queues()?;
        self.validate_l2_partitions()?;
        // An L1 line spans at most four L2 lines (`mem::hierarchy` splits an operation so).
        if self.l1.line_bytes > 4 * self.l2.line_bytes {
            return Err((
                "l2.line_bytes",
                format!(
                    "must be at least l1.line_bytes / 4 ({}); got {}",
                    self.l1.line_bytes / 4,
                    self.l2.line_bytes
                ),
            ));
        }
        // A micro step costs the round-trip distance between places (`mem::hierarchy::Costs`):
        // each level must lie farther out than the one before it.
        if !(0 < self.l1.hit_latency
            && self.l1.hit_latency < self.l2.hit_latency
            && self.l2.hit_latency < self.dram.latency)
        {
            return Err((
                "l2.hit_latency",
                format!(
                    "load-to-use latencies must grow outward: 0 < l1.hit_latency ({}) < l2.hit_latency ({}) < dram.latency ({})",
                    self.l1.hit_latency, self.l2.hit_latency, self.dram.latency
                ),
            ));
        }
        let l2 = &self.l2;
        let set_bytes = l2.line_bytes as u64 * l2.ways as u64;
        let size = l2.size_kib as u64 * 1024;
        if size % (l2.slices as u64 * set_bytes) != 0 {
            return Err((
                "l2.slices",
                format!(
                    "each slice must hold whole sets: size_kib × 1024 ({size}) must divide into {} slices of line_bytes × ways ({set_bytes}) byte sets",
                    l2.slices
                ),
            ));
        }
        Ok(())
    }

    /// The parsed memory program of operation `op`, a library name such as `st.global.wb`
    /// (`programs::valid_keys` with `.` for `_`), configured or the default.
    ///
    /// # Panics
    /// If `op` is not an operation name of `mem::program::library::ALL`.
    pub fn memory_program(&self, op: &str) -> &crate::mem::program::Program {
        self.parsed_programs.get(op).unwrap_or_else(|| {
            panic!(
                "unknown memory operation `{op}`; valid: {:?}",
                crate::mem::program::library::ALL.map(|(o, _)| o)
            )
        })
    }

    /// The SM's unified L1/shared array, KiB: the config's L1 and shared memory together.
    pub fn unified_l1_kib(&self) -> u32 {
        self.l1.size_kib + self.sm.shared_bytes / 1024
    }

    /// `l1.carveouts_kib` under `carveout: driver`: ascending capacities of the unified array
    /// that leave the L1 at least one set of `ways` lines, the largest not above
    /// `sm.shared_bytes` (launches are checked against that before they run).
    fn validate_carveouts(&self) -> Result<(), (&'static str, String)> {
        let l1 = &self.l1;
        if l1.carveout != Carveout::Driver {
            return Ok(());
        }
        let c = &l1.carveouts_kib;
        let unified = self.unified_l1_kib();
        let min_l1 = (l1.ways as u64 * l1.line_bytes as u64).div_ceil(1024);
        if c.is_empty() || c.windows(2).any(|w| w[0] >= w[1]) {
            return Err((
                "l1.carveouts_kib",
                format!("`l1.carveout: driver` needs the shared-memory capacities the driver chooses from, ascending (KiB); got {c:?}"),
            ));
        }
        let last = *c.last().expect("not empty");
        if last > self.sm.shared_bytes / 1024 || u64::from(unified - last) < min_l1 {
            return Err((
                "l1.carveouts_kib",
                format!(
                    "the largest capacity ({last} KiB) must be at most sm.shared_bytes ({} KiB) and leave the L1 one set ({min_l1} KiB of the {unified} KiB unified array)",
                    self.sm.shared_bytes / 1024
                ),
            ));
        }
        Ok(())
    }

    /// The coalescer's view of this config.
    pub fn l1_geometry(&self) -> crate::mem::cache::CacheGeometry {
        let l = &self.l1;
        crate::mem::cache::CacheGeometry {
            size_bytes: l.size_kib as u64 * 1024,
            ways: l.ways,
            line_bytes: l.line_bytes,
            sector_bytes: l.sector_bytes,
            replacement: l.replacement.clone(),
            set_index: crate::mem::cache::SetIndex::Linear,
        }
    }

    pub fn l2_geometry(&self) -> crate::mem::cache::CacheGeometry {
        let l = &self.l2;
        crate::mem::cache::CacheGeometry {
            size_bytes: l.size_kib as u64 * 1024,
            ways: l.ways,
            line_bytes: l.line_bytes,
            sector_bytes: l.sector_bytes,
            replacement: l.replacement.clone(),
            // Validated with the config (`validate`); an unknown name is linear here.
            set_index: crate::mem::cache::SetIndex::named(&l.set_index, l.slices)
                .unwrap_or(crate::mem::cache::SetIndex::Linear),
        }
    }

    /// The geometry of one of the `l2.slices` slices (each `size_kib / slices`).
    pub fn l2_slice_geometry(&self) -> crate::mem::cache::CacheGeometry {
        let mut g = self.l2_geometry();
        g.size_bytes /= self.l2.slices.max(1) as u64;
        g
    }

    /// The DRAM's channels, banks, rows and timing (`mem::dram::Dram::new`), its `t_rcd` and
    /// `t_rp` converted to core cycles.
    pub fn dram_geometry(&self) -> crate::mem::dram::DramGeometry {
        let d = &self.dram;
        crate::mem::dram::DramGeometry {
            channels: d.channels,
            banks: d.banks,
            row_bytes: d.row_bytes,
            interleave_bytes: d.interleave_bytes,
            bytes_per_cycle: d.bytes_per_cycle,
            t_rcd: self.dram_cycles_to_core(d.t_rcd),
            t_rp: self.dram_cycles_to_core(d.t_rp),
            row_policy: d.row_policy.clone(),
        }
    }

    /// The core clock (`clock_mhz`) against the DRAM command clock (`dram.clock_mhz`).
    /// Validation requires `clock_mhz`; a config whose clock was cleared after loading counts
    /// DRAM cycles as core cycles.
    pub fn dram_clocks(&self) -> crate::mem::dram_ctrl::Clocks {
        self.dram_clocks_at(self.clock_mhz)
    }

    /// The DRAM command clock against a core clock of `core_mhz` (None: the DRAM's own).
    pub fn dram_clocks_at(&self, core_mhz: Option<u32>) -> crate::mem::dram_ctrl::Clocks {
        let core = core_mhz.unwrap_or(self.dram.clock_mhz);
        crate::mem::dram_ctrl::Clocks::new(core, self.dram.clock_mhz)
    }

    /// `n` DRAM command-clock cycles in core cycles, rounded up.
    pub fn dram_cycles_to_core(&self, n: u32) -> u32 {
        u32::try_from(self.dram_clocks().to_core(n as u64)).unwrap_or(u32::MAX)
    }

    /// The queue sizes of the component memory system (`mem::system`) and the latency split
    /// along its path: the slice's reply pipeline `l2.hit_latency − l1.hit_latency −
    /// 2 × interconnect.latency` and the L2 ↔ DRAM links `dram.latency − l2.hit_latency − X`
    /// (X the controller's unloaded read, `mem::dram_ctrl::unloaded_read_cycles`) must not be
    /// negative.
    /// `l2.partitions` divides the slices and the SMs evenly; `l2.far_latency` is bounded.
    fn validate_l2_partitions(&self) -> Result<(), (&'static str, String)> {
        let (p, l2) = (self.l2.partitions, &self.l2);
        if p == 0 || l2.slices % p != 0 {
            return Err((
                "l2.partitions",
                format!(
                    "must be at least 1 and divide l2.slices ({}); got {p}",
                    l2.slices
                ),
            ));
        }
        if let Some(runs) = &l2.partition_runs {
            if runs.is_empty() || runs.contains(&0) || runs.len() > 1 << 16 {
                return Err((
                    "l2.partition_runs",
                    format!("must be positive run lengths (at most 65536 runs); got {runs:?}"),
                ));
            }
        }
        if l2.far_latency > 100_000 {
            return Err((
                "l2.far_latency",
                format!("must be in 0..=100000 cycles; got {}", l2.far_latency),
            ));
        }
        Ok(())
    }

    fn validate_queues(&self) -> Result<(), (&'static str, String)> {
        let warp = self.sm.warp_size;
        if self.l1.request_queue < warp || self.l1.request_queue > 1 << 16 {
            return Err((
                "l1.request_queue",
                format!(
                    "must be in sm.warp_size ({warp})..=65536 line operations (one instruction makes up to a warp's worth); got {}",
                    self.l1.request_queue
                ),
            ));
        }
        for (key, n) in [
            ("l2.request_queue", self.l2.request_queue),
            (
                "interconnect.buffer_packets",
                self.interconnect.buffer_packets,
            ),
        ] {
            if n == 0 || n > 1 << 16 {
                return Err((key, format!("must be in 1..=65536; got {n}")));
            }
        }
        let (l1, l2, i) = (
            self.l1.hit_latency as i64,
            self.l2.hit_latency as i64,
            self.interconnect.latency as i64,
        );
        if l2 - l1 - 2 * i < 0 {
            return Err((
                "interconnect.latency",
                format!(
                    "must leave the L2 slice a non-negative reply pipeline: l2.hit_latency ({l2}) − l1.hit_latency ({l1}) − 2 × interconnect.latency ({i}) = {}",
                    l2 - l1 - 2 * i
                ),
            ));
        }
        let x = crate::mem::dram_ctrl::unloaded_read_cycles(self) as i64;
        let d = self.dram.latency as i64 - l2 - x;
        if d < 0 {
            return Err((
                "dram.latency",
                format!(
                    "must cover l2.hit_latency ({l2}) plus the DRAM controller's unloaded read ({x} core cycles from dram.t_rcd, dram.t_cl and the burst): the L2 ↔ DRAM links would take dram.latency ({}) − {l2} − {x} = {d} cycles",
                    self.dram.latency
                ),
            ));
        }
        Ok(())
    }

    /// `clock` and `power` (`config::power`): a clock range needs `clock_mhz`.
    fn validate_clock_and_power(&self) -> Result<(), (&'static str, String)> {
        if let Some(p) = &self.power {
            p.validate()?;
        }
        if self.clock != ClockConfig::default() || self.power.is_some() {
            self.clock.validate(self.clock_mhz)?;
        }
        // A limit the governor could never act on would be accepted and ignored.
        let limited = self.power.is_some_and(|p| p.limit_watts.is_some());
        let boost = self.clock_mhz.unwrap_or(0);
        if limited
            && self.clock.fixed_mhz.is_none()
            && self.clock.min_mhz.is_none_or(|m| m >= boost)
        {
            return Err((
                "clock.min_mhz",
                format!(
                    "power.limit_watts needs a clock range to step in: clock.min_mhz below clock_mhz ({boost}); or lock the clock with clock.fixed_mhz"
                ),
            ));
        }
        Ok(())
    }

    /// Whether a governor moves the core clock: a power limit, a range below the boost
    /// clock, no locked clock, and the component memory system (whose DRAM controllers keep
    /// their own clock domain; the issue engine, kept for comparison, times DRAM in core
    /// cycles and runs at the start clock, its power still reported).
    pub fn governed(&self) -> bool {
        let limited = self.power.is_some_and(|p| p.limit_watts.is_some());
        let boost = self.clock_mhz.unwrap_or(0);
        limited
            && self.clock.fixed_mhz.is_none()
            && self.clock.min_mhz.is_some_and(|m| m < boost)
            && self.memory_engine == MemoryEngineKind::Components
    }

    /// The core clock a launch starts at: `clock.fixed_mhz`, else the boost clock.
    pub fn start_mhz(&self) -> Option<u32> {
        self.clock.fixed_mhz.or(self.clock_mhz)
    }

    /// The L2/crossbar ports' rate against the core at core clock `core_mhz`, as (numerator,
    /// denominator) of their bytes per core cycle over the configured bytes per cycle:
    /// `clock.l2_mhz / core_mhz`, or 1 when they share the core clock.
    pub fn l2_rate(&self, core_mhz: Option<u32>) -> (u64, u64) {
        match (self.clock.l2_mhz, core_mhz) {
            (Some(l2), Some(core)) => (l2 as u64, core.max(1) as u64),
            _ => (1, 1),
        }
    }

    /// The L2's configured bytes per core cycle at the starting clock (`start_mhz`): with its
    /// own clock `l2.bytes_per_cycle` is per L2 cycle in the component memory system, while
    /// the issue-time model (`memory_engine: issue`) keeps the core clock.
    pub fn l2_bytes_per_core_cycle(&self) -> f64 {
        let (num, den) = match self.memory_engine {
            MemoryEngineKind::Components => self.l2_rate(self.start_mhz()),
            MemoryEngineKind::Issue => (1, 1),
        };
        self.l2.bytes_per_cycle as f64 * num as f64 / den as f64
    }

    /// The DRAM keys the controller adds (`mem::dram_ctrl`): clocks, bus, timings, queues,
    /// scheduler, row policy; each error at its key.
    fn validate_dram(&self) -> Result<(), (&'static str, String)> {
        let d = &self.dram;
        if self.clock_mhz.is_none() {
            return Err((
                "clock_mhz",
                "is required: the DRAM timings (dram.t_*, in cycles of dram.clock_mhz) are converted to core cycles with it".into(),
            ));
        }
        for (key, n, lo, hi) in [
            ("dram.clock_mhz", d.clock_mhz, 1, 100_000),
            ("dram.bus_bytes", d.bus_bytes, 1, 4096),
            ("dram.data_rate", d.data_rate, 1, 64),
            ("dram.t_ccd", d.t_ccd, 1, 100_000),
            ("dram.read_queue", d.read_queue, 1, 4096),
            ("dram.write_queue", d.write_queue, 1, 4096),
            ("dram.starvation_cap", d.starvation_cap, 1, 1 << 30),
        ] {
            if n < lo || n > hi {
                return Err((key, format!("must be in {lo}..={hi}; got {n}")));
            }
        }
        for (key, n) in [
            ("dram.t_rcd", d.t_rcd),
            ("dram.t_rp", d.t_rp),
            ("dram.t_ras", d.t_ras),
            ("dram.t_cl", d.t_cl),
            ("dram.t_cwl", d.t_cwl),
            ("dram.t_rrd", d.t_rrd),
            ("dram.t_faw", d.t_faw),
            ("dram.t_wtr", d.t_wtr),
            ("dram.t_rtw", d.t_rtw),
            ("dram.t_wr", d.t_wr),
            ("dram.t_rtp", d.t_rtp),
            ("dram.t_rfc", d.t_rfc),
            ("dram.t_rfc_pb", d.t_rfc_pb),
        ] {
            if n > 100_000 {
                return Err((key, format!("must be in 0..=100000 DRAM cycles; got {n}")));
            }
        }
        if d.t_refi != 0 && (d.t_refi <= d.t_rfc || d.t_refi > 100_000_000) {
            return Err((
                "dram.t_refi",
                format!(
                    "must be 0 (no refresh) or in dram.t_rfc + 1 ({})..=100000000 DRAM cycles; got {}",
                    d.t_rfc as u64 + 1,
                    d.t_refi
                ),
            ));
        }
        if d.write_drain_high == 0 || d.write_drain_high > d.write_queue {
            return Err((
                "dram.write_drain_high",
                format!(
                    "must be in 1..=dram.write_queue ({}); got {}",
                    d.write_queue, d.write_drain_high
                ),
            ));
        }
        if d.write_drain_low >= d.write_drain_high {
            return Err((
                "dram.write_drain_low",
                format!(
                    "must be below dram.write_drain_high ({}); got {}",
                    d.write_drain_high, d.write_drain_low
                ),
            ));
        }
        for (key, value, choices) in [
            (
                "dram.scheduler",
                &d.scheduler,
                crate::mem::dram_ctrl::SCHEDULERS,
            ),
            (
                "dram.row_policy",
                &d.row_policy,
                crate::mem::dram_ctrl::ROW_POLICIES,
            ),
            (
                "dram.refresh",
                &d.refresh,
                crate::mem::dram_ctrl::REFRESH_POLICIES,
            ),
        ] {
            if !choices.contains(&value.as_str()) {
                return Err((
                    key,
                    format!("must be one of {}, got `{value}`", choices.join(", ")),
                ));
            }
        }
        if d.refresh == "per-bank"
            && d.t_refi != 0
            && (d.t_rfc_pb == 0 || d.t_rfc_pb >= d.t_refi || d.t_refi < d.banks)
        {
            return Err((
                "dram.t_rfc_pb",
                format!(
                    "with dram.refresh: per-bank, must be in 1..dram.t_refi ({}) and dram.t_refi at least dram.banks ({}); got t_rfc_pb {}",
                    d.t_refi, d.banks, d.t_rfc_pb
                ),
            ));
        }
        // A row hit is t_rcd faster than the configured (row miss) latency: keep it positive.
        let t_rcd = self.dram_cycles_to_core(d.t_rcd);
        if t_rcd >= d.latency {
            return Err((
                "dram.t_rcd",
                format!(
                    "must be below dram.latency ({}) once converted to core cycles, as that includes the activation; got {} DRAM cycles = {t_rcd} core cycles",
                    d.latency, d.t_rcd
                ),
            ));
        }
        Ok(())
    }

    /// An idle crossbar between `sm.count` SMs and `l2.slices` slices.
    pub fn interconnect_model(&self) -> crate::mem::interconnect::Interconnect {
        crate::mem::interconnect::Interconnect::new(
            self.sm.count,
            self.l2.slices,
            self.interconnect.latency,
            self.interconnect.port_bytes_per_cycle,
        )
        .with_slice_input(self.interconnect.slice_input_bytes_per_cycle())
    }

    pub fn coalescer(&self) -> crate::mem::coalesce::Geometry {
        crate::mem::coalesce::Geometry {
            sector_bytes: self.l1.sector_bytes,
            line_bytes: self.l1.line_bytes,
            banks: self.sm.shared_banks,
            bank_bytes: self.sm.shared_bank_bytes,
            warp_size: self.sm.warp_size,
        }
    }
}

/// The keys of one cache level, for its errors.
struct CacheKeys {
    level: &'static str,
    sector_bytes: &'static str,
    line_bytes: &'static str,
    ways: &'static str,
    size_kib: &'static str,
    replacement: &'static str,
}

const L1_KEYS: CacheKeys = CacheKeys {
    level: "l1",
    sector_bytes: "l1.sector_bytes",
    line_bytes: "l1.line_bytes",
    ways: "l1.ways",
    size_kib: "l1.size_kib",
    replacement: "l1.replacement",
};

const L2_KEYS: CacheKeys = CacheKeys {
    level: "l2",
    sector_bytes: "l2.sector_bytes",
    line_bytes: "l2.line_bytes",
    ways: "l2.ways",
    size_kib: "l2.size_kib",
    replacement: "l2.replacement",
};

/// One cache level's geometry, each error at the key that is wrong.
fn validate_cache(
    k: &CacheKeys,
    g: &crate::mem::cache::CacheGeometry,
    sms: u32,
) -> Result<(), (&'static str, String)> {
    let (sector, line) = (g.sector_bytes, g.line_bytes);
    if !sector.is_power_of_two() {
        return Err((
            k.sector_bytes,
            format!("must be a power of two, got {sector}"),
        ));
    }
    if !line.is_power_of_two() || line < sector || line / sector > 64 {
        return Err((
            k.line_bytes,
            format!(
                "must be a power of two from {}.sector_bytes ({sector}) to 64 sectors ({}), got {line}",
                k.level,
                64 * sector as u64
            ),
        ));
    }
    // Byte masks of a line are 128 bits (`mem::cache::Mask`).
    if line > crate::mem::cache::MAX_LINE_BYTES {
        return Err((
            k.line_bytes,
            format!(
                "must be at most {}, got {line}",
                crate::mem::cache::MAX_LINE_BYTES
            ),
        ));
    }
    if g.ways == 0 {
        return Err((k.ways, "must be at least 1".into()));
    }
    let kib = g.size_bytes / 1024;
    let set = line as u64 * g.ways as u64;
    if g.size_bytes < set {
        return Err((
            k.size_kib,
            format!(
                "must hold at least one set of {} ways of {line}-byte lines ({set} bytes), got {kib} KiB",
                g.ways
            ),
        ));
    }
    // 256 MiB of tags at most: the tag arrays are allocated per launch.
    if g.size_bytes > 1 << 28 {
        return Err((k.size_kib, format!("must be at most 262144, got {kib}")));
    }
    // Every SM allocates its own L1 tags: bound the total too (1 GiB of L1 in all).
    if k.level == "l1" && g.size_bytes.saturating_mul(sms as u64) > 1 << 30 {
        return Err((
            k.size_kib,
            format!("sm.count × l1.size_kib must be at most 1 GiB; got {sms} SMs × {kib} KiB"),
        ));
    }
    if !crate::mem::cache::REPLACEMENTS.contains(&g.replacement.as_str()) {
        return Err((
            k.replacement,
            format!(
                "must be one of {}, got `{}`",
                crate::mem::cache::REPLACEMENTS.join(", "),
                g.replacement
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_is_valid() {
        let c = Config::tiny();
        assert_eq!(c.sm.warp_size, 32);
    }

    #[test]
    fn unknown_key_lists_valid_ones() {
        let e =
            Config::from_yaml("t", TINY_YAML, &[("sm.wrap_size".into(), "4".into())]).unwrap_err();
        assert!(e.to_string().contains("wrap_size"), "{e}");
        assert!(e.to_string().contains("warp_size"), "{e}");
    }

    #[test]
    fn bad_choice_lists_choices() {
        let e = Config::from_yaml("t", TINY_YAML, &[("sm.scheduler".into(), "fifo".into())])
            .unwrap_err();
        assert!(e.to_string().contains("sm.scheduler"), "{e}");
        assert!(
            e.to_string().contains("lrr") && e.to_string().contains("gto"),
            "{e}"
        );
    }

    /// `l1.carveout: driver` needs ascending carve-outs that fit the shared memory and leave
    /// the L1 a set; each mistake names `l1.carveouts_kib`, and a wrong policy name lists the
    /// choices.
    #[test]
    fn driver_carveouts_are_checked() {
        let with = |list: &str| {
            let sets = [
                ("l1.carveout".to_string(), "driver".to_string()),
                ("l1.carveouts_kib".to_string(), list.to_string()),
            ];
            Config::from_yaml("t", TINY_YAML, &sets)
        };
        let shared_kib = Config::tiny().sm.shared_bytes / 1024;
        assert!(with(&format!("[0, 8, {shared_kib}]")).is_ok());
        for bad in [
            "[]",
            "[8, 0]",
            "[0, 8, 8]",
            &format!("[0, {}]", shared_kib + 1),
        ] {
            let e = with(bad).unwrap_err().to_string();
            assert!(e.contains("l1.carveouts_kib"), "{bad}: {e}");
        }
        let e = Config::from_yaml("t", TINY_YAML, &[("l1.carveout".into(), "auto".into())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("fixed") && e.contains("driver"), "{e}");
    }

    /// A wgmma operand rate of zero would stall every SS wgmma: refused at its key.
    #[test]
    fn a_zero_wgmma_operand_rate_is_refused() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../configs/hopper-h100.yaml"
        ))
        .unwrap();
        let set = [("sm.wgmma.operand_bytes_per_cycle".into(), "0".into())];
        let e = Config::from_yaml("h100", &text, &set).unwrap_err();
        assert_eq!(e.path, "sm.wgmma.operand_bytes_per_cycle", "{e}");
    }

    /// Partitions must divide the slices; their runs are positive.
    #[test]
    fn l2_partitions_are_checked() {
        let set = |k: &str, v: &str| (k.to_string(), v.to_string());
        let err = |sets: &[(String, String)]| Config::from_yaml("t", TINY_YAML, sets).unwrap_err();
        let e = err(&[set("l2.partitions", "3")]);
        assert_eq!(e.path, "l2.partitions", "{e}");
        assert!(e.to_string().contains("divide l2.slices (2)"), "{e}");
        let e = err(&[set("l2.partition_runs", "[2, 0]")]);
        assert_eq!(e.path, "l2.partition_runs", "{e}");
        assert!(e.to_string().contains("positive run lengths"), "{e}");
        let c = Config::from_yaml("t", TINY_YAML, &[set("l2.partitions", "2")]).unwrap();
        assert_eq!((c.l2.partitions, c.l2.far_latency), (2, 0));
    }

    #[test]
    fn l2_set_index_is_a_named_choice() {
        let e = Config::from_yaml("t", TINY_YAML, &[("l2.set_index".into(), "ipoly".into())])
            .unwrap_err();
        assert_eq!(e.path, "l2.set_index", "{e}");
        assert!(e.to_string().contains("linear, hashed"), "{e}");
        let c =
            Config::from_yaml("t", TINY_YAML, &[("l2.set_index".into(), "hashed".into())]).unwrap();
        assert_eq!(
            c.l2_slice_geometry().set_index,
            crate::mem::cache::SetIndex::Hashed { share: c.l2.slices }
        );
        assert_eq!(
            Config::tiny().l2_geometry().set_index,
            crate::mem::cache::SetIndex::Linear
        );
    }

    #[test]
    fn override_changes_value() {
        let c = Config::from_yaml("t", TINY_YAML, &[("sm.warp_size".into(), "4".into())]).unwrap();
        assert_eq!(c.sm.warp_size, 4);
    }

    /// The tensor unit is validated like the others: no zero count, latency or interval.
    #[test]
    fn zero_tensor_unit_is_rejected() {
        for field in ["count", "latency", "issue_interval"] {
            let key = format!("sm.units.tensor.{field}");
            let e = Config::from_yaml("t", TINY_YAML, &[(key, "0".into())]).unwrap_err();
            assert_eq!(e.path, "sm.units.tensor", "{field}: {e}");
        }
    }

    #[test]
    fn tma_queue_lines_default_to_shared_memory_in_16_byte_requests_and_reject_zero() {
        let mut c = Config::tiny();
        let t = c.sm.tma.as_mut().unwrap();
        assert_eq!(t.queue_lines(c.sm.shared_bytes), 3072);
        t.queue_lines = None;
        assert_eq!(t.queue_lines(49152), 3072);
        assert_eq!(t.queue_lines(1000), 63, "a partial 16 bytes counts");
        let e = Config::from_yaml("t", TINY_YAML, &[("sm.tma.queue_lines".into(), "0".into())])
            .unwrap_err();
        assert_eq!(e.path, "sm.tma.queue_lines");
    }

    #[test]
    fn store_and_slice_input_rates_default_to_the_rates_they_refine() {
        let c = Config::tiny();
        let t = c.sm.tma.unwrap();
        assert_eq!(t.store_bytes_per_cycle(), t.bytes_per_cycle);
        assert_eq!(
            c.interconnect.slice_input_bytes_per_cycle(),
            c.interconnect.port_bytes_per_cycle
        );
        let set = |k: &str, v: &str| Config::from_yaml("t", TINY_YAML, &[(k.into(), v.into())]);
        let c = set("sm.tma.store_bytes_per_cycle", "32").unwrap();
        assert_eq!(c.sm.tma.unwrap().store_bytes_per_cycle(), 32);
        let c = set("interconnect.slice_input_bytes_per_cycle", "34").unwrap();
        assert_eq!(c.interconnect.slice_input_bytes_per_cycle(), 34);
        for key in [
            "sm.tma.store_bytes_per_cycle",
            "interconnect.slice_input_bytes_per_cycle",
        ] {
            assert_eq!(set(key, "0").unwrap_err().path, key);
        }
    }

    #[test]
    fn bad_row_policy_lists_choices() {
        let e = Config::from_yaml("t", TINY_YAML, &[("dram.row_policy".into(), "lru".into())])
            .unwrap_err();
        assert_eq!(e.path, "dram.row_policy", "{e}");
        assert!(e.to_string().contains("open") && e.to_string().contains("closed"));
    }

    /// tiny's 256 KiB L2 of 8-way 128 B sets holds 256 sets: 3 slices cannot split it.
    #[test]
    fn l2_slices_must_hold_whole_sets() {
        for bad in ["0", "3", "512"] {
            let e =
                Config::from_yaml("t", TINY_YAML, &[("l2.slices".into(), bad.into())]).unwrap_err();
            assert_eq!(e.path, "l2.slices", "{bad}: {e}");
        }
        let c = Config::from_yaml("t", TINY_YAML, &[("l2.slices".into(), "4".into())]).unwrap();
        assert_eq!(c.l2_slice_geometry().size_bytes, 64 * 1024);
    }

    #[test]
    fn dram_and_interconnect_bounds() {
        for (key, bad) in [
            ("dram.channels", "0"),
            ("dram.banks", "0"),
            ("dram.row_bytes", "0"),
            ("dram.interleave_bytes", "0"),
            ("interconnect.port_bytes_per_cycle", "0"),
            // 400 DRAM cycles at 700 MHz are 800 core cycles, beyond dram.latency 400.
            ("dram.t_rcd", "400"),
            ("dram.t_rcd", "200"),
            ("dram.t_rp", "100001"),
            ("dram.t_faw", "100001"),
            ("dram.clock_mhz", "0"),
            ("dram.bus_bytes", "0"),
            ("dram.data_rate", "0"),
            ("dram.t_ccd", "0"),
            ("dram.read_queue", "0"),
            ("dram.write_queue", "5000"),
            ("dram.starvation_cap", "0"),
            // tiny's t_rfc is 46: a refresh interval must be longer.
            ("dram.t_refi", "46"),
            // tiny's write queue holds 32, drained from 28 down to 16.
            ("dram.write_drain_high", "33"),
            ("dram.write_drain_high", "0"),
            ("dram.write_drain_low", "28"),
        ] {
            let e = Config::from_yaml("t", TINY_YAML, &[(key.into(), bad.into())]).unwrap_err();
            assert_eq!(e.path, key, "{key}={bad}: {e}");
        }
        let e =
            Config::from_yaml("t", TINY_YAML, &[("dram.t_rcd".into(), "89".into())]).unwrap_err();
        assert_eq!(e.path, "dram.latency", "{e}");
        // 88 DRAM cycles: the unloaded read (2 × (1 + 88 + t_cl 9 + 2-cycle burst) = 200
        // core cycles) fills dram.latency 400 − l2.hit_latency 200 exactly, leaving the
        // component memory system's L2 ↔ DRAM links 0 cycles; no refresh is allowed.
        for (key, ok) in [("dram.t_rcd", "88"), ("dram.t_refi", "0")] {
            Config::from_yaml("t", TINY_YAML, &[(key.into(), ok.into())]).unwrap();
        }
    }

    #[test]
    fn bad_dram_scheduler_lists_choices() {
        let e = Config::from_yaml(
            "t",
            TINY_YAML,
            &[("dram.scheduler".into(), "frfcfs".into())],
        )
        .unwrap_err();
        assert_eq!(e.path, "dram.scheduler", "{e}");
        assert!(e.to_string().contains("fcfs, fr-fcfs"), "{e}");
        assert!(e.to_string().contains("`frfcfs`"), "{e}");
    }

    /// `dram.refresh` names a policy; `per-bank` needs its refresh duration.
    #[test]
    fn dram_refresh_policy_is_checked() {
        let set = |kv: &[(&str, &str)]| {
            let v: Vec<(String, String)> = kv
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Config::from_yaml("t", TINY_YAML, &v)
        };
        let e = set(&[("dram.refresh", "per_bank")]).unwrap_err();
        assert_eq!(e.path, "dram.refresh", "{e}");
        assert!(e.to_string().contains("all-bank, per-bank"), "{e}");
        let e = set(&[("dram.refresh", "per-bank")]).unwrap_err();
        assert_eq!(e.path, "dram.t_rfc_pb", "{e}");
        assert!(e.to_string().contains("got t_rfc_pb 0"), "{e}");
        let ok = set(&[("dram.t_rfc_pb", "20"), ("dram.refresh", "per-bank")]).unwrap();
        assert_eq!(ok.dram.refresh, "per-bank");
        assert_eq!(Config::tiny().dram.refresh, "all-bank", "the default");
    }

    /// The DRAM timings are in DRAM cycles and need the core clock to be converted.
    #[test]
    fn dram_timings_need_the_core_clock() {
        let text: String = TINY_YAML
            .lines()
            .filter(|l| !l.starts_with("clock_mhz:"))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = Config::from_yaml("t", &text, &[]).unwrap_err();
        assert_eq!(e.path, "clock_mhz", "{e}");
        assert!(e.to_string().contains("dram.clock_mhz"), "{e}");
    }

    /// The old timing model sees t_rcd and t_rp in core cycles, rounded up: tiny's 9 DRAM
    /// cycles at 700 MHz are 18 at 1400 MHz; V100's 13 at 877 MHz are 22.7, so 23.
    #[test]
    fn dram_cycles_convert_to_core_cycles() {
        let tiny = Config::tiny();
        assert_eq!(
            (tiny.dram_geometry().t_rcd, tiny.dram_geometry().t_rp),
            (18, 18)
        );
        let v100 = Config::from_yaml(
            "t",
            TINY_YAML,
            &[
                ("clock_mhz".into(), "1530".into()),
                ("dram.clock_mhz".into(), "877".into()),
                ("dram.t_rcd".into(), "13".into()),
            ],
        )
        .unwrap();
        assert_eq!(v100.dram_cycles_to_core(13), 23);
        assert_eq!(v100.dram_geometry().t_rcd, 23);
    }

    /// Each shipped config's DRAM bus (channels × bus_bytes × data_rate × dram.clock_mhz) moves
    /// the bandwidth its `dram.bytes_per_cycle` states at `clock_mhz`, within 1 %.
    #[test]
    fn shipped_dram_buses_match_the_stated_bandwidth() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let c = Config::from_yaml(&path.display().to_string(), &text, &[]).unwrap();
            let d = &c.dram;
            let bus =
                d.channels as u64 * d.bus_bytes as u64 * d.data_rate as u64 * d.clock_mhz as u64;
            let stated = d.bytes_per_cycle as u64 * c.clock_mhz.unwrap() as u64;
            assert!(
                bus.abs_diff(stated) * 100 <= stated,
                "{}: bus {bus} MB/s, stated {stated} MB/s",
                path.display()
            );
            n += 1;
        }
        assert!(n >= 5);
    }

    /// Every shipped config builds its DRAM, crossbar and L2 slices.
    #[test]
    fn shipped_configs_build_the_memory_models() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let c = Config::from_yaml(&path.display().to_string(), &text, &[]).unwrap();
            let d = crate::mem::dram::Dram::new(&c.dram_geometry()).expect("valid DRAM");
            assert_eq!(d.policy(), c.dram.row_policy);
            for ch in 0..c.dram.channels {
                let channel = crate::mem::dram_ctrl::DramChannel::new(&c, ch);
                assert!(channel.can_accept(false) && channel.can_accept(true));
            }
            let x = c.interconnect_model();
            assert_eq!(x.latency(), c.interconnect.latency);
            let g = c.l2_slice_geometry();
            assert_eq!(
                g.size_bytes * c.l2.slices as u64,
                c.l2_geometry().size_bytes
            );
            assert_eq!(
                g.size_bytes % (g.line_bytes as u64 * g.ways as u64),
                0,
                "{g:?}"
            );
            n += 1;
        }
        assert!(n >= 5, "{n} configs in {}", dir.display());
    }
}
