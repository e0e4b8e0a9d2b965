//! An operation in flight: the SM's request, its program's state, and where it stands on its
//! path. Operations live in a pool of slots reused after completion, so the hot path does not
//! allocate once the pool has grown to the most operations ever in flight at once.

use crate::mem::hierarchy::{OpProgram, OpState, Txn};
use crate::mem::program::{Compiled, Instr, OpExp};

/// One memory operation in flight.
pub(super) struct MemOp {
    pub sm: u32,
    pub tag: u64,
    pub prog: OpProgram,
    pub txn: Txn,
    pub st: OpState,
    /// Order of submission (the tie-break of completions).
    pub seq: u64,
    /// The cycle its first L1 visit ends (taken + L1 latency): it cannot leave or complete
    /// earlier, even after waiting in the L1.
    pub l1_exit: u64,
    /// Still on its first L1 visit.
    pub first_visit: bool,
    /// Blocked in the L1 on its first visit: it keeps its request-queue entry.
    pub held: bool,
    /// Its program reached `end`; what is left is the trip back to the SM.
    pub ended: bool,
    /// The L2 slice of its line.
    pub slice: u32,
    /// Bytes read at L2 not yet carried back to the SM.
    pub reply_bytes: u64,
    /// DRAM requests not done yet.
    pub dram_wait: u32,
    /// When blocked: what it waits on (`OpState::wait`, resolved) and the count of changes
    /// to it after its last try; it is tried again only once that count has moved.
    pub blocked: super::blocked::Entry,
}

/// The slots of the operations in flight.
#[derive(Default)]
pub(super) struct OpPool {
    slots: Vec<Option<MemOp>>,
    free: Vec<u32>,
    live: usize,
}

impl OpPool {
    pub fn insert(&mut self, op: MemOp) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(op);
                i
            }
            None => {
                self.slots.push(Some(op));
                (self.slots.len() - 1) as u32
            }
        }
    }

    pub fn remove(&mut self, id: u32) -> MemOp {
        let op = self.slots[id as usize].take().expect("a live operation id");
        self.free.push(id);
        self.live -= 1;
        op
    }

    pub fn get(&self, id: u32) -> &MemOp {
        self.slots[id as usize]
            .as_ref()
            .expect("a live operation id")
    }

    pub fn get_mut(&mut self, id: u32) -> &mut MemOp {
        self.slots[id as usize]
            .as_mut()
            .expect("a live operation id")
    }

    pub fn live(&self) -> usize {
        self.live
    }
}

/// Whether the macro step at `pc` may run a micro step `f` accepts (on some path through
/// it). Without allocating: programs of more than 256 statements or steps with more than 32
/// open branches answer `true` (conservative: the caller then reserves room it may not use).
pub(super) fn step_has(prog: &Compiled, pc: u16, f: impl Fn(OpExp) -> bool) -> bool {
    let code = prog.code();
    if code.len() > 256 {
        return true;
    }
    let mut seen = [0u64; 4];
    let mut stack = [0u16; 32];
    let mut n = 1;
    stack[0] = pc;
    while n > 0 {
        n -= 1;
        let mut pc = stack[n] as usize;
        while pc < code.len() && seen[pc / 64] >> (pc % 64) & 1 == 0 {
            seen[pc / 64] |= 1 << (pc % 64);
            match &code[pc] {
                Instr::Op(op) if f(*op) => return true,
                Instr::Op(_) => pc += 1,
                Instr::JumpUnless(_, t) => {
                    if n == stack.len() {
                        return true;
                    }
                    stack[n] = *t;
                    n += 1;
                    pc += 1;
                }
                Instr::Jump(t) => pc = *t as usize,
                Instr::Yield | Instr::End => break,
            }
        }
    }
    false
}
