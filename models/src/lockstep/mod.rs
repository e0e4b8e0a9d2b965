//! Interleaving and lock-step semantics of PTX kernels (Collingbourne, Donaldson, Ketema,
//! Qadeer, ESOP 2013; digest `shared/notes/interleaving-lockstep.md`), with the paper's two
//! error conditions: barrier divergence (Fig. 4d, BARRIER_F; SYNC failure in φ(P)) and data
//! races (Def. 3.1, Def. 4.1).
//!
//! - `interleave`: any thread may step (THREAD_B); a schedule picks which. Schedules: run to
//!   barrier and round robin (deterministic), seeded random, and exhaustive exploration of
//!   every interleaving of shared-memory steps up to a bound on the number of complete runs.
//!   For kernels without atomics one schedule decides race freedom and divergence (digest §2.6,
//!   "one schedule is enough"); exhaustive exploration is for small litmus kernels and atomics.
//! - `lock`: the lock-step semantics φ(P) interpreted directly (digest §3.4): one block at a
//!   time in the sort order of §4 (`order`), each thread enabled when its `v_active` names the
//!   block, loops repeated while any thread wants another iteration.
//! - `race`: the epoch race detector both share.
//!
//! Normalisations (paper §1.2 / §4) and how they are realised:
//! - *final barrier*: a thread that exits waits at a virtual barrier `Fin` ("End" in the
//!   reports); so an early `return` followed by a barrier others reach is divergence (A17);
//! - *deterministic branches*: the PTX predicate is evaluated at the branch, which is the
//!   well-formed `goto` + private `assume` form (digest §1.3);
//! - *reducible CFG*: `gpusim_isa::analysis` builds the CFG, dominators and natural loops; an
//!   irreducible kernel is `Verdict::Unsupported`;
//! - *at most one loop header per goto*, *dedicated latches*, *Start not a header*: not needed
//!   by the direct interpreter, which checks the loops ending at a block innermost first.
//!
//! Beyond the paper (digest §4.5): several CTAs run one after another, each with its own shared
//! memory and barriers; global accesses from two CTAs race when one writes; atomics race only
//! with plain accesses; memory is sequentially consistent (fences are no-ops).

mod interleave;
mod lock;
mod order;
pub mod race;

pub use interleave::{InterleavingOptions, Schedule};
pub use lock::LockstepOptions;
pub use order::sort_order;

use crate::ptx_exec::{AccessKind, ExecError, GlobalMemory, Kernel, Launch};
use gpusim_isa::analysis::ControlFlow;
use gpusim_isa::ir::{Module, Pc, Space};
use std::fmt;

/// Global memory after a clean run.
pub type FinalMemory = GlobalMemory;

/// Where a thread is: an instruction (pc and PTX line), or `None` for `End` (exited, at the
/// final barrier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    pub pc: Pc,
    pub line: u32,
}

/// One side of a data race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaceAccess {
    /// The CTA (`%ctaid`) and thread (`%tid`) that made the access.
    pub cta: [u32; 3],
    pub tid: [u32; 3],
    pub at: Site,
    pub kind: AccessKind,
}

/// A data race (Def. 3.1 / 4.1) on one byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Race {
    pub space: Space,
    /// Global address or shared offset of the first conflicting byte.
    pub addr: u64,
    pub first: RaceAccess,
    pub second: RaceAccess,
}

/// The threads that wait at one place with one barrier-variable vector β.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Linear thread indices within the CTA (x fastest).
    pub threads: Vec<u32>,
    /// The barrier, or `None` for `End` (the final barrier of the normal form). Under lock-step
    /// a thread not at the barrier is reported at the start of the block it will run next.
    pub at: Option<Site>,
    /// Loop counters, one per natural loop in `LoopForest` order (interleaving only).
    pub loop_counters: Vec<u32>,
}

/// Barrier divergence (BARRIER_F / a failed SYNC) in one CTA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    pub cta: [u32; 3],
    /// Distinct groups, the first holding thread 0's.
    pub arrivals: Vec<Arrival>,
}

/// Why a run has no final memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    DataRace(Race),
    BarrierDivergence(Divergence),
    /// An instruction, a launch or a CFG outside the model, with the PTX line.
    Unsupported(String),
    /// An out-of-bounds or misaligned access, or `trap`.
    Fault(String),
    /// More thread steps (or, exhaustively, more runs) than the options allow.
    BoundExceeded {
        limit: u64,
    },
    /// Exhaustive exploration found two clean runs with different final memory (only possible
    /// with atomics, whose order the paper leaves open).
    Nondeterministic,
}

impl Verdict {
    /// A short name: `race`, `divergence`, `unsupported`, `fault`, `bound`, `nondeterministic`.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::DataRace(_) => "race",
            Verdict::BarrierDivergence(_) => "divergence",
            Verdict::Unsupported(_) => "unsupported",
            Verdict::Fault(_) => "fault",
            Verdict::BoundExceeded { .. } => "bound",
            Verdict::Nondeterministic => "nondeterministic",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = |a: &RaceAccess| {
            format!(
                "{:?} by ctaid {:?} tid {:?} at line {} (pc {})",
                a.kind, a.cta, a.tid, a.at.line, a.at.pc
            )
        };
        match self {
            Verdict::DataRace(r) => write!(
                f,
                "data race on {} byte {:#x}: {} and {}",
                r.space.name(),
                r.addr,
                side(&r.first),
                side(&r.second)
            ),
            Verdict::BarrierDivergence(d) => {
                write!(f, "barrier divergence in CTA {:?}:", d.cta)?;
                for a in &d.arrivals {
                    let at = a.at.map_or("End".to_string(), |s| {
                        format!("line {} (pc {})", s.line, s.pc)
                    });
                    let n = a.threads.len();
                    let shown: Vec<String> =
                        a.threads.iter().take(8).map(|t| t.to_string()).collect();
                    let more = if n > 8 { ", ..." } else { "" };
                    write!(f, " [{n} threads {}{more} at {at}", shown.join(","))?;
                    if !a.loop_counters.is_empty() {
                        write!(f, " loops {:?}", a.loop_counters)?;
                    }
                    write!(f, "]")?;
                }
                Ok(())
            }
            Verdict::Unsupported(s) => write!(f, "unsupported: {s}"),
            Verdict::Fault(s) => write!(f, "fault: {s}"),
            Verdict::BoundExceeded { limit } => write!(f, "bound of {limit} exceeded"),
            Verdict::Nondeterministic => write!(f, "clean runs disagree on the final memory"),
        }
    }
}

impl From<ExecError> for Verdict {
    fn from(e: ExecError) -> Verdict {
        match e {
            ExecError::Unsupported { .. } => Verdict::Unsupported(e.to_string()),
            ExecError::Fault { .. } | ExecError::Trap { .. } => Verdict::Fault(e.to_string()),
        }
    }
}

/// Run `entry` of `module` with `launch` on a copy of `memory` under the interleaving
/// semantics.
pub fn run_interleaving(
    module: &Module,
    entry: &str,
    launch: &Launch,
    memory: &GlobalMemory,
    opts: &InterleavingOptions,
) -> Result<FinalMemory, Verdict> {
    let setup = Setup::new(module, entry, launch)?;
    interleave::run(&setup, memory.clone(), opts)
}

/// Run `entry` of `module` with `launch` on a copy of `memory` under the lock-step semantics.
pub fn run_lockstep(
    module: &Module,
    entry: &str,
    launch: &Launch,
    memory: &GlobalMemory,
    opts: &LockstepOptions,
) -> Result<FinalMemory, Verdict> {
    let setup = Setup::new(module, entry, launch)?;
    lock::run(&setup, memory.clone(), opts)
}

/// What both semantics need about the kernel and the launch.
pub(crate) struct Setup<'m> {
    pub kernel: Kernel<'m>,
    pub flow: ControlFlow,
    pub launch: Launch,
    pub params: Vec<u8>,
}

impl<'m> Setup<'m> {
    fn new(module: &'m Module, entry: &str, launch: &Launch) -> Result<Setup<'m>, Verdict> {
        let kernel = Kernel::new(module, entry)?;
        let flow =
            ControlFlow::analyze(kernel.func).map_err(|e| Verdict::Unsupported(e.to_string()))?;
        let params = kernel.param_block(&launch.args)?;
        if launch.threads_per_cta() == 0 || launch.ctas() == 0 {
            return Err(Verdict::Unsupported("empty grid or block".into()));
        }
        Ok(Setup {
            kernel,
            flow,
            launch: launch.clone(),
            params,
        })
    }

    pub fn site(&self, pc: Pc) -> Site {
        Site {
            pc,
            line: self.kernel.line(pc),
        }
    }

    /// A race verdict from a detector conflict.
    pub fn race(&self, c: race::Conflict) -> Verdict {
        let side = |a: race::Acc| RaceAccess {
            cta: self.launch.cta_index(a.cta),
            tid: self.launch.thread_index(a.tid),
            at: self.site(a.pc),
            kind: a.kind,
        };
        Verdict::DataRace(Race {
            space: c.space,
            addr: c.addr,
            first: side(c.earlier),
            second: side(c.later),
        })
    }
}
