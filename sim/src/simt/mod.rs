//! Reconvergence policies: how a warp's lanes follow divergent control flow.
//!
//! Every policy implements `Reconvergence`; the executor turns each control instruction into a
//! `Flow` and the policy decides the next pc and active mask. Policies are chosen by name with
//! `sm.reconvergence` (see `config::ReconvergenceKind`) and built by `make`:
//!
//! | name | file | rule | SIMT-Step variant (simt-step.md §4.3) |
//! |---|---|---|---|
//! | `token-stack` | `token_stack.rs` | Habermaier 2011 §5.4 CRS rules | P1 → CM |
//! | `pdom-stack` | `pdom_stack.rs` | immediate post-dominator stack (GPGPU-Sim) | P1 → CM |
//! | `convergence-barrier` | `convergence_barrier.rs` | Volta ITS, BSSY/BSYNC barriers | P3 → CM |
//! | `multi-path` | `multi_path.rs` | ElTantawy et al., HPCA 2014 | P1 with interleaved paths → CM |
//! | `thread-frontiers` | `thread_frontiers.rs` | Diamos et al., MICRO 2011 | P1 with earlier merges → CM |
//!
//! The static facts the stack-free policies need (each branch's immediate post-dominator, each
//! `brk`'s break target, thread-frontier block priorities) are computed once per program by
//! `analysis::ProgramInfo::analyze` and handed to `step` in a `StepCtx`.

pub mod analysis;
pub mod convergence_barrier;
pub mod multi_path;
pub mod pdom_stack;
pub mod thread_frontiers;
pub mod token_stack;

use crate::config::{ReconvergenceKind, SmConfig};
pub use analysis::{FuncInfo, ProgramInfo, NO_PC};
pub use convergence_barrier::ConvergenceBarrier;
use gpusim_isa::{FuncId, Pc};
pub use multi_path::MultiPath;
pub use pdom_stack::PdomStack;
pub use thread_frontiers::ThreadFrontiers;
pub use token_stack::TokenStack;

pub type Mask = u64;

/// Why a lane is disabled (Habermaier §5.4: the disable mask δ).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    Break,
    Return,
    Exit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    Sync,
    Diverge,
    Call,
    Break,
}

/// The control-flow effect of one warp instruction, computed from the lanes that executed it
/// (active and guard true).
#[derive(Clone, Debug, PartialEq)]
pub enum Flow {
    /// No control flow (or every guard false): continue at pc+1.
    Next,
    /// `ssy` / `preBrk` / `preRet`: push a token of this kind with the current active mask.
    Push(TokenKind, Pc),
    /// `sync`: pop tokens (unwind).
    Sync,
    /// `brk` / `ret` / `exit` by these lanes.
    Disable(Reason, Mask),
    /// A direct branch or call to one target, taken by `taken` lanes (a call's target pc is the
    /// callee's first instruction). A call never pushes a token (design point 2).
    Jump {
        target: Pc,
        taken: Mask,
        is_call: bool,
    },
    /// An indirect branch or call whose lanes go to several targets: (target, lanes) in
    /// ascending target order. The branch re-executes for the lanes not taken now.
    Multi {
        groups: Vec<(Pc, Mask)>,
        is_call: bool,
    },
    /// `bar.warp.sync mask` under independent thread scheduling: the active lanes wait until
    /// every non-exited lane of the mask has reached a `bar.warp.sync` (PTX ISA, bar.warp.sync).
    /// Only produced for policies with `independent_threads()`.
    WarpSync(Mask),
    /// `bar.sync`/`bar.red` under independent thread scheduling: the active lanes wait at CTA
    /// barrier `barid` until the SM releases it (`barrier_released`). Only produced for
    /// policies with `independent_threads()`.
    BarrierWait(usize),
    /// A `.sync` collective (`shfl`, `vote`, `match`, `redux`) under independent thread
    /// scheduling whose active lanes do not cover the live lanes of its membermask `members`:
    /// the collective did not execute and the lanes wait at it (their pc stays) until every
    /// live member waits at a matching collective (same operation, `key`, and the same
    /// membermask); the policy then issues it once for all of them (PTX ISA, shfl.sync: "wait
    /// until all non-exited threads corresponding to membermask have executed"). Only produced
    /// for policies with `independent_threads()`.
    CollectiveWait { members: Mask, key: u64 },
}

/// The barrier id under which independently scheduled lanes wait at `barrier.cluster.wait`
/// (`Flow::BarrierWait`): one past the 16 named CTA barriers, so that a waiting group parks
/// like one at `bar.sync` while the other groups of its warp run on.
pub const CLUSTER_BARRIER: usize = 16;

/// What the warp does after a flow step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Keep running; if a token was popped, the frame depth it recorded (the executor drops
    /// call frames above it).
    Active { popped_frame_depth: Option<u32> },
    /// No lane can run until one of these CTA barriers (bit set) releases lanes of this warp
    /// (independent thread scheduling: the other lanes wait inside the warp).
    Blocked {
        popped_frame_depth: Option<u32>,
        barriers: u32,
    },
    /// Every lane has exited and the stack is empty.
    Completed,
    /// No thread can ever run again: every live thread waits inside the warp (at a convergence
    /// barrier, `bar.warp.sync` or `.sync` collective) for threads that cannot arrive
    /// (independent thread scheduling; the SM reports a deadlock).
    Deadlocked,
}

/// A policy-level error: the program is not control-flow consistent for this policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimtError(pub String);

/// What a policy may consult when it steps: facts about the instruction just executed and the
/// program's static reconvergence information.
#[derive(Clone, Copy)]
pub struct StepCtx<'a> {
    /// Call-frame depth before the instruction (tokens pushed now record it).
    pub frame_depth: u32,
    /// The function the instruction belongs to.
    pub func: FuncId,
    /// Static reconvergence facts of every function of the program.
    pub info: &'a ProgramInfo,
    /// The instruction's result comes from a long-latency (DRAM-backed) unit.
    pub long_latency: bool,
    /// After a divergent branch the taken lanes run first (`sm.divergence_order`); the
    /// stack policies honour it, the others schedule paths by their own rules.
    pub taken_first: bool,
}

/// The interface of a reconvergence policy. Implementations are per warp.
pub trait Reconvergence: Send {
    fn pc(&self) -> Pc;
    fn set_pc(&mut self, pc: Pc);
    fn active_mask(&self) -> Mask;
    /// Lanes that have exited.
    fn exited_mask(&self) -> Mask;
    fn step(&mut self, flow: Flow, ctx: &StepCtx) -> Result<Outcome, SimtError>;
    fn stack_depth(&self) -> usize;
    /// Feed the complete branching state into a hasher (for livelock detection).
    fn hash_state(&self, h: &mut dyn std::hash::Hasher);
    /// Human-readable state: pc, masks and the token stack, top first.
    fn describe(&self) -> String;
    /// The state in the formal report's notation (masks as bit strings, lane 0 leftmost):
    /// `α=10 stack=(diverge,01,4)::(sync,11,10)`.
    fn paper_state(&self, lanes: u32) -> String;
    /// Lanes have their own pcs and wait for each other inside the warp (independent thread
    /// scheduling): `bar.warp.sync` becomes `Flow::WarpSync`, a CTA barrier
    /// `Flow::BarrierWait`, and CTA barrier arrivals are counted per thread, not per warp.
    fn independent_threads(&self) -> bool {
        false
    }
    /// The SM released CTA barrier `barid`: lanes of this warp waiting there may run again.
    fn barrier_released(&mut self, _barid: usize) {}
    /// Only `lanes` of those waiting at `barid` may run again (the cluster barrier releases
    /// each waiting group for the phase it waited on).
    fn barrier_released_lanes(&mut self, barid: usize, _lanes: Mask) {
        self.barrier_released(barid)
    }
    /// The current group's lanes sit at more than one pc: a released `.sync` collective whose
    /// members waited at matching instructions (`Flow::CollectiveWait`). The executor takes
    /// each lane's operands from the instruction at its own `lane_pc`; `pc()` is one of them.
    fn split_issue(&self) -> bool {
        false
    }
    /// The pc of lane `l` (for a lane of the current group: the instruction it issues).
    fn lane_pc(&self, _lane: usize) -> Pc {
        self.pc()
    }
}

/// The policy object for one warp whose lanes `valid` exist.
pub fn make(sm: &SmConfig, valid: Mask, warp_size: u32) -> Box<dyn Reconvergence> {
    match sm.reconvergence {
        ReconvergenceKind::TokenStack => Box::new(TokenStack::new(valid, warp_size)),
        ReconvergenceKind::PdomStack => Box::new(PdomStack::new(valid, warp_size)),
        ReconvergenceKind::ConvergenceBarrier => Box::new(ConvergenceBarrier::new(
            valid,
            warp_size,
            sm.convergence_barrier,
        )),
        ReconvergenceKind::MultiPath => Box::new(MultiPath::new(valid, warp_size)),
        ReconvergenceKind::ThreadFrontiers => Box::new(ThreadFrontiers::new(valid, warp_size)),
    }
}

/// All lanes of a warp of `warp_size`.
pub(crate) fn lane_mask(warp_size: u32) -> Mask {
    if warp_size >= 64 {
        u64::MAX
    } else {
        (1u64 << warp_size) - 1
    }
}

/// The lanes of a mask, lowest first.
pub(crate) fn lanes_of(mut m: Mask) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(l)
    })
}

/// A mask as a bit string, lane 0 leftmost (the formal report's notation).
pub(crate) fn bits(m: Mask, lanes: u32) -> String {
    (0..lanes)
        .map(|l| if m >> l & 1 == 1 { '1' } else { '0' })
        .collect()
}

#[cfg(test)]
pub(crate) mod testutil {
    //! A program-free step context for the policies' unit tests.
    use super::*;

    /// Static facts for one function of `n` instructions: IPDOMs and break targets as given,
    /// priority = pc.
    pub fn info(n: usize, ipdom: &[(Pc, Pc)], breaks: &[(Pc, Pc)]) -> ProgramInfo {
        let mut f = FuncInfo {
            ipdom: vec![NO_PC; n],
            break_target: vec![NO_PC; n],
            priority: (0..n as u32).collect(),
        };
        for &(pc, r) in ipdom {
            f.ipdom[pc as usize] = r;
        }
        for &(pc, t) in breaks {
            f.break_target[pc as usize] = t;
        }
        ProgramInfo { funcs: vec![f] }
    }

    pub fn ctx(info: &ProgramInfo, depth: u32) -> StepCtx<'_> {
        StepCtx {
            frame_depth: depth,
            func: FuncId(0),
            info,
            long_latency: false,
            taken_first: true,
        }
    }
}
