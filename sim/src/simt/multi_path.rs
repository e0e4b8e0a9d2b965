//! `multi-path`: multi-path IPDOM (ElTantawy, Ma, O'Connor, Aamodt, "A Scalable Multi-Path
//! Microarchitecture for Efficient GPU Control Flow", HPCA 2014). SIMT-Step variant: P1 with
//! interleaved paths → CM (simt-step.md §4.3): every warp-split instruction is one collective
//! step of its path, the paths of a divergence may interleave (SIMT-Step allows any
//! interleaving of diverged paths, §1.5.5), and they meet again at the IPDOM with every thread
//! of the divergence, the merge block of structured code.
//!
//! The SIMT stack is replaced by two tables:
//! - the warp split table (ST): schedulable splits (pc, mask, reconvergence pc, RT entry);
//! - the warp reconvergence table (RT): one entry per pending reconvergence point (its pc, its
//!   own reconvergence pc, the reconvergence mask of the threads that diverged and the
//!   pending mask of those that have not arrived yet).
//!
//! A divergent branch of split S allocates an RT entry at the branch's IPDOM with S's mask as
//! both reconvergence and pending mask, and replaces S by one split per target, each
//! reconverging at the IPDOM (no entry is allocated when the IPDOM is S's own reconvergence
//! pc). A split that reaches its reconvergence pc leaves the ST and clears its threads from
//! the pending mask; an RT entry whose pending mask empties becomes a split again with the
//! reconvergence mask. Both paths of a divergence stay schedulable.
//!
//! Choosing what runs: any split may issue. Our scoreboard is per warp, not per split as in
//! the paper, so the split that issues keeps issuing until it reaches a divergence or
//! reconvergence or issues a long-latency (DRAM-backed) instruction; then the next split of
//! the ST runs (round robin), so that the other path hides the latency, which is the point of
//! the design. A split that diverges continues with its taken path.
//!
//! Tokens are ignored as in `pdom_stack`. Calls allocate an RT entry at the return address
//! (the calling threads pending) and a split for the callee; the threads of the deepest call
//! depth run first because the executor keeps one frame stack per warp.

use super::{
    bits, lane_mask, Flow, Mask, Outcome, Reason, Reconvergence, SimtError, StepCtx, NO_PC,
};
use gpusim_isa::Pc;
use std::fmt::Write;
use std::hash::Hash;

/// No RT entry (a split of the kernel's outermost level).
pub const NO_RT: u32 = u32::MAX;

/// A warp split (an ST entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Split {
    pub pc: Pc,
    pub mask: Mask,
    /// Reconvergence pc (`NO_PC`: the function's exit).
    pub rpc: Pc,
    /// The RT entry it reconverges into.
    pub rt: u32,
    /// Call depth (1 = the kernel).
    pub depth: u32,
}

/// A pending reconvergence point (an RT entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pending {
    pub pc: Pc,
    pub rpc: Pc,
    pub parent: u32,
    /// Threads that reconverge here.
    pub reconv: Mask,
    /// Threads that have not arrived yet.
    pub pending: Mask,
    pub depth: u32,
    /// The return point of a call (its pc is the instruction after the call).
    pub call: bool,
}

#[derive(Clone, Debug)]
pub struct MultiPath {
    st: Vec<Split>,
    rt: Vec<Option<Pending>>,
    /// The split that issues next.
    cur: usize,
    exited: Mask,
    lanes: Mask,
}

impl MultiPath {
    pub fn new(valid: Mask, warp_size: u32) -> MultiPath {
        let mut st = Vec::with_capacity(warp_size as usize + 1);
        st.push(Split {
            pc: 0,
            mask: valid,
            rpc: NO_PC,
            rt: NO_RT,
            depth: 1,
        });
        MultiPath {
            st,
            rt: Vec::with_capacity(16),
            cur: 0,
            exited: lane_mask(warp_size) & !valid,
            lanes: lane_mask(warp_size),
        }
    }

    pub fn splits(&self) -> &[Split] {
        &self.st
    }

    pub fn reconvergence_table(&self) -> impl Iterator<Item = &Pending> {
        self.rt.iter().flatten()
    }

    fn alloc(&mut self, p: Pending) -> u32 {
        match self.rt.iter().position(Option::is_none) {
            Some(i) => {
                self.rt[i] = Some(p);
                i as u32
            }
            None => {
                self.rt.push(Some(p));
                (self.rt.len() - 1) as u32
            }
        }
    }

    fn entry(&mut self, r: u32) -> &mut Pending {
        self.rt[r as usize]
            .as_mut()
            .expect("a split's RT entry is live")
    }

    fn insert(&mut self, at: usize, s: Split) {
        if at < self.cur {
            self.cur += 1;
        }
        self.st.insert(at, s);
    }

    /// Replace split `i` by `children` (in order; empty ones dropped); the first child runs.
    fn replace(&mut self, i: usize, children: &[Split]) {
        self.st.remove(i);
        for (at, c) in (i..).zip(children.iter().filter(|c| c.mask != 0)) {
            self.st.insert(at, *c);
        }
        self.cur = i;
    }

    /// The RT entry `r` has no pending thread left: it becomes a split at position `at`.
    fn maybe_convert(&mut self, r: u32, at: usize) {
        let e = *self.entry(r);
        if e.pending & !self.exited != 0 {
            return;
        }
        self.rt[r as usize] = None;
        let mask = e.reconv & !self.exited;
        if mask != 0 {
            self.insert(
                at.min(self.st.len()),
                Split {
                    pc: e.pc,
                    mask,
                    rpc: e.rpc,
                    rt: e.parent,
                    depth: e.depth,
                },
            );
        }
    }

    /// Lanes that left for good (exit) leave every RT entry of their chain.
    fn leave_chain(&mut self, mut r: u32, lanes: Mask, at: usize) {
        while r != NO_RT {
            let e = self.entry(r);
            e.reconv &= !lanes;
            e.pending &= !lanes;
            let parent = e.parent;
            self.maybe_convert(r, at);
            r = parent;
        }
    }

    /// Lanes returning from depth `depth`: they leave the callee's RT entries and arrive at
    /// the call's return point.
    fn leave_callee(&mut self, mut r: u32, lanes: Mask, depth: u32, at: usize) {
        while r != NO_RT {
            let e = self.entry(r);
            if e.depth < depth {
                e.pending &= !lanes;
                self.maybe_convert(r, at);
                return;
            }
            e.reconv &= !lanes;
            e.pending &= !lanes;
            let parent = e.parent;
            self.maybe_convert(r, at);
            r = parent;
        }
    }

    /// Split `i` diverges at `pc` into `paths` (target, lanes), first path first.
    fn diverge(&mut self, i: usize, pc: Pc, paths: &[(Pc, Mask)], ctx: &StepCtx) {
        let s = self.st[i];
        let p = ctx.info.funcs[ctx.func.0 as usize].ipdom[pc as usize];
        let (rpc, rt) = if p == s.rpc {
            (s.rpc, s.rt)
        } else {
            let r = self.alloc(Pending {
                pc: p,
                rpc: s.rpc,
                parent: s.rt,
                reconv: s.mask,
                pending: s.mask,
                depth: s.depth,
                call: false,
            });
            (p, r)
        };
        let mut children = [Split {
            pc: 0,
            mask: 0,
            rpc,
            rt,
            depth: s.depth,
        }; 65];
        for (c, &(t, m)) in children.iter_mut().zip(paths) {
            c.pc = t;
            c.mask = m;
        }
        self.replace(i, &children[..paths.len()]);
    }

    fn branch(&mut self, i: usize, pc: Pc, target: Pc, taken: Mask, ctx: &StepCtx) {
        let m = self.st[i].mask;
        let taken = taken & m;
        if taken == m {
            self.st[i].pc = target;
        } else if taken == 0 {
            self.st[i].pc = pc + 1;
        } else {
            self.diverge(i, pc, &[(target, taken), (pc + 1, m & !taken)], ctx);
        }
    }

    /// `taken` lanes of split `i` call; `again` lanes execute the call again later (an
    /// indirect call with several callees); the rest wait at the return address.
    fn call(&mut self, i: usize, pc: Pc, taken: Mask, again: Mask) {
        let s = self.st[i];
        let c = self.alloc(Pending {
            pc: pc + 1,
            rpc: s.rpc,
            parent: s.rt,
            reconv: s.mask & !again,
            pending: taken,
            depth: s.depth,
            call: true,
        });
        let callee = Split {
            pc: 0,
            mask: taken,
            rpc: NO_PC,
            rt: c,
            depth: s.depth + 1,
        };
        let rest = Split {
            pc,
            mask: again,
            ..s
        };
        self.replace(i, &[callee, rest]);
    }

    /// Remove splits that emptied or reached their reconvergence pc (arrivals).
    fn settle(&mut self) {
        while let Some(j) = self
            .st
            .iter()
            .position(|s| s.mask == 0 || (s.rpc != NO_PC && s.pc == s.rpc))
        {
            let s = self.st.remove(j);
            if j < self.cur {
                self.cur -= 1;
            }
            if s.mask != 0 && s.rt != NO_RT {
                self.entry(s.rt).pending &= !s.mask;
                self.maybe_convert(s.rt, j);
            }
        }
    }
}

impl Reconvergence for MultiPath {
    fn pc(&self) -> Pc {
        self.st.get(self.cur).map_or(0, |s| s.pc)
    }
    fn set_pc(&mut self, pc: Pc) {
        if let Some(s) = self.st.get_mut(self.cur) {
            s.pc = pc;
        }
    }
    fn active_mask(&self) -> Mask {
        self.st.get(self.cur).map_or(0, |s| s.mask)
    }
    fn exited_mask(&self) -> Mask {
        self.exited
    }
    fn stack_depth(&self) -> usize {
        self.st.len() + self.rt.iter().flatten().count()
    }

    fn step(&mut self, flow: Flow, ctx: &StepCtx) -> Result<Outcome, SimtError> {
        let i = self.cur;
        let Some(&s) = self.st.get(i) else {
            return Err(SimtError("no warp split to run".into()));
        };
        let (pc, m) = (s.pc, s.mask);
        let mut rotate = false;
        match flow {
            Flow::Next
            | Flow::Push(..)
            | Flow::Sync
            | Flow::WarpSync(_)
            | Flow::BarrierWait(_)
            | Flow::CollectiveWait { .. } => {
                self.st[i].pc += 1;
                rotate = ctx.long_latency;
            }
            Flow::Disable(Reason::Exit, lanes) => {
                let l = lanes & m;
                self.exited |= l;
                self.st[i].mask &= !l;
                self.st[i].pc += 1;
                self.leave_chain(s.rt, l, i + 1);
            }
            Flow::Disable(Reason::Return, lanes) => {
                let l = lanes & m;
                self.st[i].mask &= !l;
                self.st[i].pc += 1;
                self.leave_callee(s.rt, l, s.depth, i + 1);
            }
            Flow::Disable(Reason::Break, lanes) => {
                let target = ctx.info.funcs[ctx.func.0 as usize].break_target[pc as usize];
                if target == NO_PC {
                    return Err(SimtError(format!("`brk` at pc {pc} has no break target")));
                }
                self.branch(i, pc, target, lanes, ctx);
            }
            Flow::Jump {
                target,
                taken,
                is_call: false,
            } => self.branch(i, pc, target, taken, ctx),
            Flow::Jump {
                taken,
                is_call: true,
                ..
            } => self.call(i, pc, taken & m, 0),
            Flow::Multi {
                groups,
                is_call: true,
            } => {
                let taken = groups.first().map_or(0, |g| g.1) & m;
                self.call(i, pc, taken, m & !taken);
            }
            Flow::Multi {
                groups,
                is_call: false,
            } => {
                let mut paths = [(0, 0); 65];
                let mut rest = m;
                for (k, &(t, lanes)) in groups.iter().enumerate() {
                    paths[k] = (t, lanes & m);
                    rest &= !lanes;
                }
                paths[groups.len()] = (pc + 1, rest);
                self.diverge(i, pc, &paths[..=groups.len()], ctx);
            }
        }
        self.settle();
        if self.st.is_empty() {
            return if self.exited == self.lanes {
                Ok(Outcome::Completed)
            } else {
                Err(SimtError(format!(
                    "no warp split left while lanes {:#x} wait in the reconvergence table",
                    self.lanes & !self.exited
                )))
            };
        }
        // The deepest call depth runs (one frame stack per warp); among its splits the
        // current one, or the next one after a long-latency instruction.
        let max_depth = self.st.iter().map(|s| s.depth).max().unwrap_or(1);
        let n = self.st.len();
        let start = if self.cur >= n { 0 } else { self.cur };
        let eligible = |k: usize| self.st[k].depth == max_depth;
        let first = if rotate { 1 } else { 0 };
        self.cur = (first..n + first)
            .map(|o| (start + o) % n)
            .find(|&k| eligible(k))
            .unwrap_or(start);
        Ok(Outcome::Active {
            popped_frame_depth: (max_depth < ctx.frame_depth).then_some(max_depth),
        })
    }

    fn hash_state(&self, h: &mut dyn std::hash::Hasher) {
        let mut hh = std::collections::hash_map::DefaultHasher::new();
        (self.cur, self.exited, &self.st, &self.rt).hash(&mut hh);
        h.write_u64(std::hash::Hasher::finish(&hh));
    }

    fn describe(&self) -> String {
        let pc = |p: Pc| {
            if p == NO_PC {
                "exit".to_string()
            } else {
                p.to_string()
            }
        };
        let mut s = format!(
            "pc {} active {:#x} exited {:#x}; splits:",
            self.pc(),
            self.active_mask(),
            self.exited
        );
        for (k, sp) in self.st.iter().enumerate() {
            let mark = if k == self.cur { "*" } else { "" };
            let _ = write!(
                s,
                " {mark}(pc {}, {:#x}, rpc {}, depth {})",
                sp.pc,
                sp.mask,
                pc(sp.rpc),
                sp.depth
            );
        }
        s.push_str("; reconvergence table:");
        for (r, e) in self.rt.iter().enumerate() {
            if let Some(e) = e {
                let _ = write!(
                    s,
                    " [{r}] (pc {}, rpc {}, reconv {:#x}, pending {:#x}{})",
                    pc(e.pc),
                    pc(e.rpc),
                    e.reconv,
                    e.pending,
                    if e.call { ", return point" } else { "" }
                );
            }
        }
        s
    }

    fn paper_state(&self, lanes: u32) -> String {
        let st: Vec<String> = self
            .st
            .iter()
            .map(|s| format!("({},{})", s.pc, bits(s.mask, lanes)))
            .collect();
        let rt: Vec<String> = self
            .rt
            .iter()
            .flatten()
            .map(|e| {
                format!(
                    "({},{},{})",
                    if e.pc == NO_PC {
                        "-".to_string()
                    } else {
                        e.pc.to_string()
                    },
                    bits(e.reconv, lanes),
                    bits(e.pending, lanes)
                )
            })
            .collect();
        format!(
            "α={} ST={} RT={}",
            bits(self.active_mask(), lanes),
            st.join("::"),
            rt.join("::")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simt::testutil::{ctx, info};

    fn j(target: Pc, taken: Mask) -> Flow {
        Flow::Jump {
            target,
            taken,
            is_call: false,
        }
    }

    /// A divergence allocates one RT entry; both paths are splits; the entry becomes a split
    /// again when the last path arrives.
    #[test]
    fn both_paths_are_splits_and_reconverge_through_the_rt() {
        // 0: @p bra 3; 1: else; 2: bra 4; 3: then; 4: join
        let inf = info(6, &[(0, 4)], &[]);
        let c = ctx(&inf, 1);
        let mut w = MultiPath::new(0b11, 2);
        w.step(j(3, 0b01), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (3, 0b01));
        assert_eq!(w.splits().len(), 2);
        let e = *w.reconvergence_table().next().unwrap();
        assert_eq!((e.pc, e.reconv, e.pending), (4, 0b11, 0b11));
        w.step(Flow::Next, &c).unwrap(); // then arrives at 4
        assert_eq!((w.pc(), w.active_mask()), (1, 0b10));
        assert_eq!(w.reconvergence_table().next().unwrap().pending, 0b10);
        w.step(Flow::Next, &c).unwrap();
        w.step(j(4, 0b10), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask(), w.splits().len()), (4, 0b11, 1));
        assert_eq!(w.reconvergence_table().count(), 0);
    }

    /// After a long-latency instruction the other path issues (interleaving).
    #[test]
    fn long_latency_switches_to_the_other_split() {
        let inf = info(8, &[(0, 6)], &[]);
        let c = ctx(&inf, 1);
        let mut long = c;
        long.long_latency = true;
        let mut w = MultiPath::new(0b11, 2);
        w.step(j(3, 0b01), &c).unwrap();
        assert_eq!(w.pc(), 3);
        w.step(Flow::Next, &long).unwrap(); // a load on the taken path
        assert_eq!((w.pc(), w.active_mask()), (1, 0b10));
        w.step(Flow::Next, &long).unwrap(); // a load on the other path
        assert_eq!((w.pc(), w.active_mask()), (4, 0b01));
    }

    /// A loop exit: breaking threads arrive at the exit's RT entry and wait for the others.
    #[test]
    fn loop_exit_waits_for_every_thread() {
        // 0: preBrk 4; 1: body; 2: @p brk; 3: bra 1; 4: exit block
        let inf = info(6, &[(2, 4)], &[(2, 4)]);
        let c = ctx(&inf, 1);
        let mut w = MultiPath::new(0b11, 2);
        w.step(Flow::Next, &c).unwrap();
        w.step(Flow::Next, &c).unwrap();
        w.step(Flow::Disable(Reason::Break, 0b01), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask(), w.splits().len()), (3, 0b10, 1));
        w.step(j(1, 0b10), &c).unwrap();
        w.step(Flow::Next, &c).unwrap();
        w.step(Flow::Disable(Reason::Break, 0b10), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask(), w.splits().len()), (4, 0b11, 1));
    }

    /// A call: the callee split runs; its return converts the return point into a split and
    /// the caller's frame depth is reported.
    #[test]
    fn return_point_is_an_rt_entry() {
        let inf = info(8, &[], &[]);
        let mut w = MultiPath::new(0b11, 2);
        w.set_pc(4);
        let call = Flow::Jump {
            target: 0,
            taken: 0b10,
            is_call: true,
        };
        w.step(call, &ctx(&inf, 1)).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (0, 0b10));
        let o = w
            .step(Flow::Disable(Reason::Return, 0b10), &ctx(&inf, 2))
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
