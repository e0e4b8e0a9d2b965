//! Reconvergence policies: how a warp's lanes follow divergent control flow.
//!
//! Every policy implements `Reconvergence`; the executor turns each control instruction into a
//! `Flow` and the policy decides the next pc and active mask. Policies are chosen by name with
//! `sm.reconvergence` (see `config::ReconvergenceKind`).

pub mod token_stack;

use gpusim_isa::Pc;
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
}

/// What the warp does after a flow step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Keep running; if a token was popped, the frame depth it recorded (the executor drops
    /// call frames above it).
    Active { popped_frame_depth: Option<u32> },
    /// Every lane has exited and the stack is empty.
    Completed,
}

/// A policy-level error: the program is not control-flow consistent for this policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimtError(pub String);

/// The interface of a reconvergence policy. Implementations are per warp.
pub trait Reconvergence: Send {
    fn pc(&self) -> Pc;
    fn set_pc(&mut self, pc: Pc);
    fn active_mask(&self) -> Mask;
    /// Lanes that have exited.
    fn exited_mask(&self) -> Mask;
    fn step(&mut self, flow: Flow, frame_depth: u32) -> Result<Outcome, SimtError>;
    fn stack_depth(&self) -> usize;
    /// Feed the complete branching state into a hasher (for livelock detection).
    fn hash_state(&self, h: &mut dyn std::hash::Hasher);
    /// Human-readable state: pc, masks and the token stack, top first.
    fn describe(&self) -> String;
    /// The state in the formal report's notation (masks as bit strings, lane 0 leftmost):
    /// `α=10 stack=(diverge,01,4)::(sync,11,10)`.
    fn paper_state(&self, lanes: u32) -> String;
}
