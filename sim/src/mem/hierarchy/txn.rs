//! Σ of the timed engine (digest §2.4.2): what one memory operation reads or writes, and what
//! running its program produced. One `Txn` is one line of a warp request (the coalescer's
//! unit; the formal translator `memOp` may coalesce a warp's accesses so, §2.7) or one lane
//! of an atomic.

use crate::mem::cache::Mask;
use gpusim_isa::{AtomOp, Type};

/// The state space an operation addresses, which decides what `readMem` / `writeMem` reach
/// and which cache operations are defined (the formal model defines them for device spaces
/// only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Global,
    /// Tags only: a thread's local memory is private, so its values stay functional (the
    /// warp's per-lane arrays) while its lines occupy the caches.
    Local,
    Shared,
    Const,
    Param,
}

/// The operands and result of one lane's atomic (Σ_atomic: `v_out` is `old`, `v_in1`/`v_in2`
/// are `b`/`c`; the new value travels in `Txn::data`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicArgs {
    /// Byte offset of the operand in the line.
    pub offset: usize,
    pub size: u32,
    pub op: AtomOp,
    pub ty: Type,
    pub b: u64,
    pub c: u64,
    /// The value read (returned to the lane), set by `atomOp`.
    pub old: u64,
}

/// A bulk reduction of one line (`cp.reduce.async.bulk`): `atomOp` combines every element of
/// `ty` under the operation's byte mask, `old ⊕ operand`, into `Txn::data` (the new line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineReduce {
    pub op: AtomOp,
    pub ty: Type,
    /// The source bytes, at line offsets.
    pub operand: [u8; 128],
}

/// One memory operation in flight.
#[derive(Clone, Debug)]
pub struct Txn {
    pub target: Target,
    /// The aligned address of the L1 line the operation covers (device targets); for local
    /// memory a private tag (`mem::hierarchy::local_tag`).
    pub line: u64,
    /// The bytes of the line read or written.
    pub bytes: Mask,
    /// `v_io`: the line's bytes as read (loads) or to write (stores), at line offsets.
    pub data: [u8; 128],
    pub atomic: Option<AtomicArgs>,
    /// A whole-line reduction's operands (boxed: rare, and `Txn` travels by value).
    pub reduce: Option<Box<LineReduce>>,
    /// Shared-memory banks an atomic locks (`lock` / `unlock`).
    pub banks: Mask,
    /// Set by `writeToRegs`: the destination registers receive `data` (or `old`).
    pub wrote_regs: bool,
    /// Set when a write changed a value (progress, for livelock detection).
    pub changed: bool,
}

impl Txn {
    /// An operation on `bytes` of the line at `line`.
    pub fn new(target: Target, line: u64, bytes: Mask) -> Txn {
        Txn {
            target,
            line,
            bytes,
            data: [0; 128],
            atomic: None,
            reduce: None,
            banks: 0,
            wrote_regs: false,
            changed: false,
        }
    }

    /// Whether values flow through the caches (global memory) rather than only tags.
    pub fn carries_values(&self) -> bool {
        self.target == Target::Global
    }
}
