//! A module prepared for execution: reconvergence tokens inserted where the PTX has none,
//! per-instruction register dependences and latency classes, and where each variable lives.

use super::deps::DepTable;
use crate::config::{Config, UnitsConfig};
use gpusim_isa::*;

/// The instruction classes that have their own latency in the config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Int,
    Fp32,
    Fp64,
    Sfu,
    /// `mma.sync` on the tensor unit.
    Tensor,
    Branch,
    Shared,
    Global,
    Local,
    Const,
    Param,
    Atomic,
    Barrier,
}

/// The functional units of a sub-partition (`sm.units.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    Int,
    Fp32,
    Fp64,
    Sfu,
    Branch,
    LdSt,
    /// Tensor cores (`mma.sync`).
    Tensor,
}

impl Unit {
    /// In index order (`Unit as usize`, the order of `stats::UNIT_NAMES`).
    pub const ALL: [Unit; crate::stats::N_UNITS] = [
        Unit::Int,
        Unit::Fp32,
        Unit::Fp64,
        Unit::Sfu,
        Unit::Branch,
        Unit::LdSt,
        Unit::Tensor,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Unit::Int => "int",
            Unit::Fp32 => "fp32",
            Unit::Fp64 => "fp64",
            Unit::Sfu => "sfu",
            Unit::Branch => "branch",
            Unit::LdSt => "ldst",
            Unit::Tensor => "tensor",
        }
    }

    /// (units per sub-partition, cycles each stays busy per warp instruction)
    pub fn shape(self, u: &UnitsConfig) -> (u32, u32) {
        match self {
            Unit::Int => (u.int.count, u.int.issue_interval),
            Unit::Fp32 => (u.fp32.count, u.fp32.issue_interval),
            Unit::Fp64 => (u.fp64.count, u.fp64.issue_interval),
            Unit::Sfu => (u.sfu.count, u.sfu.issue_interval),
            Unit::Branch => (u.branch.count, u.branch.issue_interval),
            Unit::LdSt => (u.ldst.count, u.ldst.issue_interval),
            Unit::Tensor => (u.tensor.count, u.tensor.issue_interval),
        }
    }
}

impl Class {
    /// The unit that executes this class.
    pub fn unit(self) -> Unit {
        match self {
            Class::Int => Unit::Int,
            Class::Fp32 => Unit::Fp32,
            Class::Fp64 => Unit::Fp64,
            Class::Sfu => Unit::Sfu,
            Class::Tensor => Unit::Tensor,
            Class::Branch | Class::Barrier => Unit::Branch,
            Class::Shared
            | Class::Global
            | Class::Local
            | Class::Const
            | Class::Param
            | Class::Atomic => Unit::LdSt,
        }
    }

    /// Results that come from DRAM-backed memory: waits on them are "long scoreboard" stalls.
    pub fn is_long(self) -> bool {
        matches!(self, Class::Global | Class::Local | Class::Atomic)
    }

    /// Cycles from issue until the result may be read.
    pub fn latency(self, cfg: &Config) -> u32 {
        let (u, l) = (&cfg.sm.units, &cfg.latency);
        match self {
            Class::Int => u.int.latency,
            Class::Fp32 => u.fp32.latency,
            Class::Fp64 => u.fp64.latency,
            Class::Sfu => u.sfu.latency,
            Class::Tensor => u.tensor.latency,
            Class::Branch => u.branch.latency,
            Class::Shared => l.shared,
            // Only for an instruction no lane executed: memory programs time every access.
            Class::Global | Class::Local | Class::Atomic => cfg.l1.hit_latency,
            Class::Const => l.constant,
            Class::Param => l.param,
            Class::Barrier => l.barrier,
        }
    }
}

/// Issue intervals an instruction keeps its unit busy for when it is not a memory access:
/// one, except an `mma` with more multiply-adds than m16n8k16 (16·8·16 = 2048, the shape
/// `sm.units.tensor` is calibrated on), which takes ⌈FMAs / 2048⌉ — m16n8k32 (4096) two.
/// Smaller shapes (m16n8k8, m8n8k16) still take a whole interval: the unit issues whole
/// instructions. Its result comes (passes − 1) intervals after the tensor latency. A
/// `wmma.mma` m16n16k16, m32n8k16 or m8n32k16 (4096) takes two, m16n16k8 and `mma.m8n8k4`
/// (four 8·8·4 products, 1024) one.
pub fn tensor_passes(op: &Op) -> u32 {
    const BASE_FMAS: usize = 16 * 8 * 16;
    match op {
        Op::MmaInt { shape, .. } => semantics::mma_int_fmas(*shape).div_ceil(BASE_FMAS) as u32,
        Op::MmaM884 { .. } => semantics::MMA_M884_FMAS.div_ceil(BASE_FMAS) as u32,
        Op::WmmaMma { shape, .. } => semantics::wmma_fmas(*shape).div_ceil(BASE_FMAS) as u32,
        _ => 1,
    }
}

fn class_of(op: &Op) -> Class {
    let mem = |s: Space| match s {
        Space::Shared => Class::Shared,
        Space::Local => Class::Local,
        Space::Const => Class::Const,
        Space::Param => Class::Param,
        Space::Global | Space::Generic => Class::Global,
    };
    match op {
        Op::Arith { op, ty, .. } => {
            use ArithOp::*;
            match op {
                Rcp | Sqrt | Rsqrt | Sin | Cos | Lg2 | Ex2 | Tanh => Class::Sfu,
                Div | Rem if ty.is_float() => Class::Sfu,
                _ if *ty == Type::F64 => Class::Fp64,
                _ if ty.is_float() => Class::Fp32,
                _ => Class::Int,
            }
        }
        Op::Cvt { dty, sty, .. } if *dty == Type::F64 || *sty == Type::F64 => Class::Fp64,
        Op::Cvt { .. } | Op::CvtPack { .. } => Class::Fp32,
        Op::Testp { ty, .. } if *ty == Type::F64 => Class::Fp64,
        Op::Testp { .. } => Class::Fp32,
        // nanosleep occupies the branch unit; the sleep itself is in `exec/sync.rs`.
        Op::Nanosleep { .. } => Class::Branch,
        Op::Setp { ty, .. } | Op::Set { sty: ty, .. } if ty.is_float() => Class::Fp32,
        Op::Ld { space, .. } | Op::St { space, .. } => mem(*space),
        Op::Atom { .. } => Class::Atomic,
        Op::Mma { .. } | Op::MmaInt { .. } | Op::MmaM884 { .. } | Op::WmmaMma { .. } => {
            Class::Tensor
        }
        // `wmma` fragment moves are loads and stores of their space on the ldst unit.
        Op::WmmaLoad { space, .. } | Op::WmmaStore { space, .. } => mem(*space),
        // The fragment moves are shared-memory accesses on the ldst unit; a cp.async is timed
        // by its global read (the landing in shared memory is `Sm::land_async_copies`).
        Op::Ldmatrix { .. } | Op::Stmatrix { .. } => Class::Shared,
        Op::CpAsync { .. } => Class::Global,
        // Group bookkeeping only: like a fence, on the branch unit (the wait is a hold).
        Op::CpAsyncCommit | Op::CpAsyncWait { .. } => Class::Barrier,
        // mbarrier operations are atomic updates of a shared-memory word.
        Op::MbarInit { .. }
        | Op::MbarInval { .. }
        | Op::MbarArrive { .. }
        | Op::MbarTx { .. }
        | Op::MbarWait { .. }
        | Op::CpAsyncMbarArrive { .. } => Class::Shared,
        Op::MbarPendingCount { .. } | Op::ElectSync { .. } | Op::Mapa { .. } => Class::Int,
        Op::BarrierCluster { .. } => Class::Barrier,
        // The copy engine takes the request from the LD/ST unit; the warp does not wait.
        Op::CpAsyncBulk { .. } | Op::CpAsyncBulkTensor { .. } => Class::Global,
        Op::FenceProxyAsync { .. }
        | Op::Setmaxnreg { .. }
        | Op::CpAsyncBulkCommit
        | Op::CpAsyncBulkWait { .. } => Class::Barrier,
        // wgmma.mma_async occupies the tensor unit for its slice (`wgmma_state::slice_cycles`);
        // the fence and the group bookkeeping are cheap, like cp.async's (the wait is a hold).
        Op::Wgmma(_) => Class::Tensor,
        Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => Class::Barrier,
        Op::Bar { .. } | Op::WarpSync { .. } | Op::Fence { .. } => Class::Barrier,
        Op::Bra { .. }
        | Op::BrxIdx { .. }
        | Op::Call { .. }
        | Op::Ret { .. }
        | Op::Exit
        | Op::Trap
        | Op::Ssy { .. }
        | Op::Sync
        | Op::PreBrk { .. }
        | Op::Brk
        | Op::PreRet { .. } => Class::Branch,
        _ => Class::Int,
    }
}

/// Where a variable lives, resolved once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// Offset in the kernel parameter buffer (an `.entry` parameter).
    KernelParam(u64),
    /// Offset in the current activation's per-thread frame (local memory).
    Frame(u64),
    /// In the CTA's shared memory, where the launched kernel's layout places it
    /// (`LaunchGeom::shared`).
    Shared,
    /// Absolute global address (set when the module's globals are allocated).
    Global(u64),
    /// Offset in the constant segment.
    Const(u64),
}

pub struct PreparedFn {
    /// Each instruction's register dependences (one arena per function).
    pub deps: DepTable,
    pub class: Vec<Class>,
    /// Estimated physical registers per thread (see `register_estimate`).
    pub regs_per_thread: u32,
}

/// PTX registers are virtual and plentiful; ptxas allocates far fewer. Estimate the physical
/// count as the largest number of 32-bit register words whose live ranges (first to last
/// mention, in program order) overlap, predicates excluded, plus 2 for the ABI, at least 16.
pub fn register_estimate(f: &Function, deps: &DepTable) -> u32 {
    let n = f.regs.len();
    let mut first = vec![u32::MAX; n];
    let mut last = vec![0u32; n];
    for pc in 0..deps.len() {
        let (reads, writes) = deps.get(pc).expect("pc within the table");
        for &r in reads.iter().chain(writes) {
            let r = r as usize;
            first[r] = first[r].min(pc as u32);
            last[r] = last[r].max(pc as u32);
        }
    }
    let mut delta = vec![0i64; deps.len() + 2];
    for r in 0..n {
        if first[r] == u32::MAX || f.regs[r].ty == Type::Pred {
            continue;
        }
        let words = f.regs[r].ty.size().div_ceil(4) as i64;
        delta[first[r] as usize] += words;
        delta[last[r] as usize + 1] -= words;
    }
    let (mut cur, mut max) = (0i64, 0i64);
    for d in delta {
        cur += d;
        max = max.max(cur);
    }
    (max as u32 + 2).max(16)
}

pub struct Program {
    pub module: Module,
    pub funcs: Vec<PreparedFn>,
    pub locs: Vec<Loc>,
    /// Each kernel's shared segment, by function id (empty for a `.func`).
    pub shared: Vec<SharedLayout>,
    /// Per function: the index of its first instruction in the module's instructions laid end
    /// to end (`inst_index`), and their count last.
    inst_base: Vec<u32>,
    /// Static reconvergence facts of the tokenised functions (IPDOMs, break targets,
    /// thread-frontier priorities) for the reconvergence policies.
    pub reconv: crate::simt::ProgramInfo,
    /// The module targets sm_70 or higher, so under independent thread scheduling a `.sync`
    /// collective waits for the threads of its membermask (PTX ISA, shfl.sync/vote.sync: for
    /// `.target sm_6x` or below the member threads must execute it in convergence, and only
    /// there may `shfl`/`vote` appear without `.sync`, which the IR reads as a full mask).
    pub member_mask_waits: bool,
}

impl Program {
    /// Insert tokens into every function that lacks them and precompute what execution needs.
    pub fn prepare(mut module: Module) -> Result<Program, PtxError> {
        for i in 0..module.functions.len() {
            let f = &module.functions[i];
            if f.body.is_empty() {
                continue;
            }
            let tokenised = gpusim_isa::analysis::insert_tokens(f).map_err(|e| PtxError {
                file: module.file.clone(),
                line: e.span.line,
                col: e.span.col,
                text: String::new(),
                message: format!("in `{}`: {}", e.function, e.message),
            })?;
            module.functions[i] = tokenised;
        }
        let funcs = module
            .functions
            .iter()
            .map(|f| {
                let deps = DepTable::build(&f.body);
                PreparedFn {
                    regs_per_thread: register_estimate(f, &deps),
                    class: f.body.iter().map(|i| class_of(&i.op)).collect(),
                    deps,
                }
            })
            .collect();
        let mut locs: Vec<Loc> = module
            .symbols
            .iter()
            .map(|s| match s.space {
                Space::Param | Space::Local => Loc::Frame(s.offset),
                Space::Shared => Loc::Shared,
                Space::Const => Loc::Const(s.offset),
                Space::Global | Space::Generic => Loc::Global(s.offset),
            })
            .collect();
        for f in module.entries() {
            for p in &f.params {
                locs[p.symbol.0 as usize] = Loc::KernelParam(module.symbol(p.symbol).offset);
            }
        }
        let shared = (0..module.functions.len() as u32)
            .map(FuncId)
            .map(|f| match module.function(f).kind {
                FuncKind::Entry => module.shared_layout(f),
                FuncKind::Func => SharedLayout::default(),
            })
            .collect();
        let inst_base = std::iter::once(0)
            .chain(module.functions.iter().scan(0u32, |n, f| {
                *n += f.body.len() as u32;
                Some(*n)
            }))
            .collect();
        let reconv = crate::simt::ProgramInfo::analyze(&module);
        let member_mask_waits = sm_version(&module.target).is_some_and(|v| v >= 70);
        Ok(Program {
            module,
            funcs,
            locs,
            shared,
            inst_base,
            reconv,
            member_mask_waits,
        })
    }

    /// Instruction `pc` of `func` numbered across the module (per-instruction counters,
    /// `stats::lines`).
    #[inline]
    pub fn inst_index(&self, func: FuncId, pc: Pc) -> u32 {
        self.inst_base[func.0 as usize] + pc
    }

    /// Instructions in the module (after token insertion).
    pub fn inst_count(&self) -> u32 {
        *self
            .inst_base
            .last()
            .expect("one entry per function and the total")
    }

    /// The function and pc of module-wide instruction `i` (`inst_index`'s inverse).
    pub fn inst_at(&self, i: u32) -> (FuncId, Pc) {
        let f = self.inst_base.partition_point(|&b| b <= i) - 1;
        (FuncId(f as u32), i - self.inst_base[f])
    }

    /// Where kernel `entry`'s `.shared` variables and dynamic window live in a CTA.
    pub fn shared_layout(&self, entry: FuncId) -> &SharedLayout {
        &self.shared[entry.0 as usize]
    }

    /// Rebase module globals once their segment is allocated at `base`.
    pub fn place_globals(&mut self, base: u64) {
        for (i, s) in self.module.symbols.iter().enumerate() {
            if s.space == Space::Global {
                self.locs[i] = Loc::Global(base + s.offset);
            }
        }
    }

    /// Initial bytes of the module's `.global` and `.const` segments.
    pub fn segment_init(&self, space: Space) -> Vec<u8> {
        let len = match space {
            Space::Global => self.module.global_bytes,
            _ => self.module.const_bytes,
        } as usize;
        let mut out = vec![0u8; len];
        for s in self
            .module
            .symbols
            .iter()
            .filter(|s| s.space == space && s.owner.is_none())
        {
            let off = s.offset as usize;
            let n = s.init.len().min(len.saturating_sub(off));
            out[off..off + n].copy_from_slice(&s.init[..n]);
        }
        out
    }
}

/// The compute capability of a `.target` list (`sm_70`, `sm_90a, debug`): the number of its
/// first `sm_NN` entry.
fn sm_version(target: &str) -> Option<u32> {
    target
        .split(',')
        .filter_map(|t| t.trim().strip_prefix("sm_"))
        .map(|t| t.trim_end_matches(|c: char| c.is_ascii_alphabetic()))
        .find_map(|t| t.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::sm_version;

    #[test]
    fn target_compute_capability() {
        assert_eq!(sm_version("sm_70"), Some(70));
        assert_eq!(sm_version("sm_90a"), Some(90));
        assert_eq!(sm_version("sm_52, debug"), Some(52));
        assert_eq!(sm_version("compute_70"), None);
    }
}
