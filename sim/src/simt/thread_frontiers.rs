//! `thread-frontiers`: SIMD re-convergence at thread frontiers (Diamos, Ashbaugh, Maiyuran,
//! Kerr, Wu, Yalamanchili; MICRO 2011). SIMT-Step variant: P1 with earlier merges → CM
//! (simt-step.md §4.3): one group runs at a time as one collective step per instruction; on
//! structured code the merges happen at the IPDOMs, the SIMT-Step merge blocks, and on
//! unstructured code earlier, where SIMT-Step gives no meaning (simt-step.md §4.2).
//!
//! Every basic block has a priority (`FuncInfo::priority`: a topological order in which each
//! loop is contiguous, the paper's compiler-assigned block order). The warp always runs the
//! threads whose pc has the highest priority (the smallest number); the threads waiting
//! elsewhere form the thread frontier of that block. Threads reconverge as soon as a running
//! group reaches a pc where others wait: entries are kept sorted by priority with one entry per
//! pc, merged on insertion (the paper's sorted-stack hardware).
//!
//! Tokens are not used: `ssy`, `sync`, `preBrk` and `preRet` fall through and `brk` jumps to
//! its break target (see `pdom_stack`). Calls: the executor keeps one frame stack per warp, so
//! the threads of the deepest call depth run first (a callee finishes before its caller's
//! other threads continue), which keeps frames a stack; within a depth the priority rule
//! applies. A returning thread resumes at the instruction after the call.

use super::{
    bits, lane_mask, Flow, Mask, Outcome, Reason, Reconvergence, SimtError, StepCtx, NO_PC,
};
use gpusim_isa::{FuncId, Pc};
use std::fmt::Write;
use std::hash::Hash;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// Call depth (1 = the kernel).
    pub depth: u32,
    /// Block priority of `pc` in its function (smaller runs first).
    pub prio: u32,
    pub pc: Pc,
    pub mask: Mask,
}

impl Entry {
    /// Sort key: the last entry of the list runs (deepest, then highest priority).
    fn key(&self) -> (u32, std::cmp::Reverse<u32>) {
        (self.depth, std::cmp::Reverse(self.prio))
    }
}

#[derive(Clone, Debug)]
pub struct ThreadFrontiers {
    /// Sorted by `Entry::key`; at most one entry per (depth, pc).
    entries: Vec<Entry>,
    exited: Mask,
    lanes: Mask,
    /// Return pc of the activation at each depth, set by its call.
    ret_pc: Vec<Pc>,
    /// The function running at each depth (recorded when it executes).
    funcs: Vec<FuncId>,
}

impl ThreadFrontiers {
    pub fn new(valid: Mask, warp_size: u32) -> ThreadFrontiers {
        let mut entries = Vec::with_capacity(warp_size as usize + 1);
        entries.push(Entry {
            depth: 1,
            prio: 0,
            pc: 0,
            mask: valid,
        });
        ThreadFrontiers {
            entries,
            exited: lane_mask(warp_size) & !valid,
            lanes: lane_mask(warp_size),
            ret_pc: vec![NO_PC; 4],
            funcs: vec![FuncId(0); 4],
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Insert lanes at (depth, pc), merging with threads already waiting there.
    fn add(&mut self, depth: u32, pc: Pc, prio: u32, mask: Mask) {
        if mask == 0 {
            return;
        }
        if let Some(e) = self
            .entries
            .iter_mut()
            .find(|e| e.depth == depth && e.pc == pc)
        {
            e.mask |= mask;
            return;
        }
        let e = Entry {
            depth,
            prio,
            pc,
            mask,
        };
        let at = self.entries.partition_point(|x| x.key() <= e.key());
        self.entries.insert(at, e);
    }
}

/// Grow `v` so that index `i` exists (only when a call goes deeper than before).
fn slot<T: Copy>(v: &mut Vec<T>, i: usize, fill: T) -> &mut T {
    if v.len() <= i {
        v.resize(i + 1, fill);
    }
    &mut v[i]
}

impl Reconvergence for ThreadFrontiers {
    fn pc(&self) -> Pc {
        self.entries.last().map_or(0, |e| e.pc)
    }
    fn set_pc(&mut self, pc: Pc) {
        if let Some(e) = self.entries.last_mut() {
            e.pc = pc;
        }
    }
    fn active_mask(&self) -> Mask {
        self.entries.last().map_or(0, |e| e.mask & !self.exited)
    }
    fn exited_mask(&self) -> Mask {
        self.exited
    }
    fn stack_depth(&self) -> usize {
        self.entries.len()
    }

    fn step(&mut self, flow: Flow, ctx: &StepCtx) -> Result<Outcome, SimtError> {
        let Some(e) = self.entries.pop() else {
            return Err(SimtError("no thread left to run".into()));
        };
        let (d, pc, m) = (e.depth, e.pc, e.mask & !self.exited);
        *slot(&mut self.funcs, d as usize, FuncId(0)) = ctx.func;
        let f = &ctx.info.funcs[ctx.func.0 as usize];
        let prio = |p: Pc| f.priority_of(p);
        match flow {
            Flow::Next
            | Flow::Push(..)
            | Flow::Sync
            | Flow::WarpSync(_)
            | Flow::BarrierWait(_)
            | Flow::CollectiveWait { .. } => self.add(d, pc + 1, prio(pc + 1), m),
            Flow::Disable(Reason::Exit, lanes) => {
                self.exited |= lanes & m;
                self.add(d, pc + 1, prio(pc + 1), m & !lanes);
            }
            Flow::Disable(Reason::Return, lanes) => {
                let l = lanes & m;
                let ret = self.ret_pc.get(d as usize).copied().unwrap_or(NO_PC);
                let caller = self.funcs[(d - 1) as usize];
                let rp = ctx.info.funcs[caller.0 as usize].priority_of(ret);
                self.add(d - 1, ret, rp, l);
                self.add(d, pc + 1, prio(pc + 1), m & !l);
            }
            Flow::Disable(Reason::Break, lanes) => {
                let target = f.break_target[pc as usize];
                if target == NO_PC {
                    return Err(SimtError(format!("`brk` at pc {pc} has no break target")));
                }
                self.add(d, target, prio(target), lanes & m);
                self.add(d, pc + 1, prio(pc + 1), m & !lanes);
            }
            Flow::Jump {
                target,
                taken,
                is_call: false,
            } => {
                self.add(d, target, prio(target), taken & m);
                self.add(d, pc + 1, prio(pc + 1), m & !taken);
            }
            Flow::Jump {
                taken,
                is_call: true,
                ..
            } => {
                *slot(&mut self.ret_pc, d as usize + 1, NO_PC) = pc + 1;
                self.add(d + 1, 0, 0, taken & m);
                self.add(d, pc + 1, prio(pc + 1), m & !taken);
            }
            Flow::Multi {
                groups,
                is_call: true,
            } => {
                // One callee now; the other lanes execute the call again afterwards.
                let taken = groups.first().map_or(0, |g| g.1) & m;
                *slot(&mut self.ret_pc, d as usize + 1, NO_PC) = pc + 1;
                self.add(d + 1, 0, 0, taken);
                self.add(d, pc, prio(pc), m & !taken);
            }
            Flow::Multi {
                groups,
                is_call: false,
            } => {
                let mut rest = m;
                for &(t, lanes) in &groups {
                    self.add(d, t, prio(t), lanes & m);
                    rest &= !lanes;
                }
                self.add(d, pc + 1, prio(pc + 1), rest);
            }
        }
        match self.entries.last() {
            Some(top) => Ok(Outcome::Active {
                popped_frame_depth: (top.depth < ctx.frame_depth).then_some(top.depth),
            }),
            None if self.exited == self.lanes => Ok(Outcome::Completed),
            None => Err(SimtError(format!(
                "no runnable threads while lanes {:#x} have not exited",
                self.lanes & !self.exited
            ))),
        }
    }

    fn hash_state(&self, h: &mut dyn std::hash::Hasher) {
        let mut hh = std::collections::hash_map::DefaultHasher::new();
        (self.exited, &self.entries).hash(&mut hh);
        h.write_u64(std::hash::Hasher::finish(&hh));
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "pc {} active {:#x} exited {:#x}; thread frontier (next first):",
            self.pc(),
            self.active_mask(),
            self.exited
        );
        for e in self.entries.iter().rev() {
            let _ = write!(
                s,
                " (depth {}, pc {}, priority {}, {:#x})",
                e.depth, e.pc, e.prio, e.mask
            );
        }
        s
    }

    fn paper_state(&self, lanes: u32) -> String {
        let frontier: Vec<String> = self
            .entries
            .iter()
            .rev()
            .map(|e| format!("({},{})", e.pc, bits(e.mask & !self.exited, lanes)))
            .collect();
        format!(
            "α={} frontier={}",
            bits(self.active_mask(), lanes),
            frontier.join("::")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simt::testutil::{ctx, info};

    /// The smallest-priority pc runs first and threads merge where others wait: an if/else
    /// whose then side jumps ahead reconverges at the join.
    #[test]
    fn lowest_priority_first_and_merge_at_the_join() {
        // 0: @p bra 3; 1: else; 2: bra 4; 3: then; 4: join
        let inf = info(6, &[], &[]);
        let c = ctx(&inf, 1);
        let mut w = ThreadFrontiers::new(0b11, 2);
        let j = |target, taken| Flow::Jump {
            target,
            taken,
            is_call: false,
        };
        w.step(j(3, 0b01), &c).unwrap();
        // pc 1 (lane 1) has priority over pc 3 (lane 0).
        assert_eq!((w.pc(), w.active_mask()), (1, 0b10));
        w.step(Flow::Next, &c).unwrap();
        w.step(j(4, 0b10), &c).unwrap(); // lane 1 waits at 4; lane 0 runs 3
        assert_eq!((w.pc(), w.active_mask()), (3, 0b01));
        w.step(Flow::Next, &c).unwrap(); // lane 0 reaches 4: merged
        assert_eq!((w.pc(), w.active_mask(), w.stack_depth()), (4, 0b11, 1));
    }

    /// Unstructured control flow reconverges before the IPDOM: two paths that share a tail
    /// merge at its first pc.
    #[test]
    fn early_reconvergence_at_a_shared_tail() {
        // 0: @p bra 2; 1: @q bra 3; 2: a; 3: shared tail; 4: ...
        let inf = info(6, &[], &[]);
        let c = ctx(&inf, 1);
        let mut w = ThreadFrontiers::new(0b111, 3);
        let j = |target, taken| Flow::Jump {
            target,
            taken,
            is_call: false,
        };
        w.step(j(2, 0b001), &c).unwrap(); // lane 0 → 2; lanes 1, 2 → 1
        w.step(j(3, 0b010), &c).unwrap(); // lane 1 → 3; lane 2 → 2 merges with lane 0
        assert_eq!((w.pc(), w.active_mask()), (2, 0b101));
        w.step(Flow::Next, &c).unwrap(); // → 3 merges with lane 1
        assert_eq!((w.pc(), w.active_mask()), (3, 0b111));
    }

    /// A call runs the callee first; lanes return to the instruction after the call and the
    /// executor is told to drop the callee's frame.
    #[test]
    fn callee_runs_first_and_returns_after_the_call() {
        let inf = info(8, &[], &[]);
        let mut w = ThreadFrontiers::new(0b11, 2);
        w.set_pc(4);
        let call = Flow::Jump {
            target: 0,
            taken: 0b01,
            is_call: true,
        };
        w.step(call, &ctx(&inf, 1)).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (0, 0b01));
        let o = w
            .step(Flow::Disable(Reason::Return, 0b01), &ctx(&inf, 2))
            .unwrap();
        assert_eq!(
            o,
            Outcome::Active {
                popped_frame_depth: Some(1)
            }
        );
        assert_eq!((w.pc(), w.active_mask()), (5, 0b11));
    }
}
