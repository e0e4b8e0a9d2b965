//! `convergence-barrier`: Volta-style independent thread scheduling (ITS) with convergence
//! barriers (NVIDIA Tesla V100 whitepaper, 2017, "Independent Thread Scheduling"; NVIDIA's
//! convergence-barrier patent US 10,067,768 B2, 2018). SIMT-Step variant: P3
//! (simt-step.md §4.3) → CM here, because every warp instruction, and so every memory access of
//! a thread group, is one atomic step in our functional memory. With a yielding switch rule a
//! barrier can clear before all its threads arrive (the patent's yield), so threads may stay
//! split after a merge block; an execution that then runs a collective with the split group
//! is outside CM (P4-like, simt-step.md §4.3). A `.sync` collective of an sm_70 module does not
//! run split: it waits for the live threads of its membermask.
//!
//! Every thread has its own pc. Threads at the same pc form a group; the warp issues one group
//! at a time, and groups that reach the same pc merge. Tokens become barrier instructions:
//! - `ssy L` = BSSY: a convergence barrier whose participants are the group's threads, to be
//!   synchronised at L; `sync` (the instruction before L) = BSYNC: the thread waits until every
//!   non-exited participant has arrived or yielded, then all arrived threads continue at L.
//! - `preBrk L` = BSSY for the loop's exit L; `brk` = BREAK out of the inner barriers (the
//!   thread stops participating in them) and arrival at the loop barrier, resuming at L.
//! - `preRet` needs no barrier: a call records its return address (the instruction after the
//!   call); `ret` leaves the callee's barriers and returns there.
//! - `bar.warp.sync m` waits until every non-exited thread of m has reached a
//!   `bar.warp.sync`.
//! - A `.sync` collective (`shfl`, `vote`, `match`, `redux`) of a module for sm_70 or higher
//!   whose group does not hold every non-exited thread of its membermask waits at the
//!   instruction (`Flow::CollectiveWait`) until they all wait at a matching collective (same
//!   operation and membermask, possibly at another pc, e.g. the other side of an if/else); it
//!   then issues once for all of them, each lane with the operands of its own instruction, and
//!   each lane goes on after its own instruction.
//! - `bar.sync`/`bar.red`: the group waits at the CTA barrier; arrivals are counted per
//!   thread (`Cta`), so a diverged warp may arrive group by group.
//!
//! Switch rule (`sm.convergence_barrier.switch`): the running group continues with its taken
//! path until it waits, exits or yields; it yields at a backward branch (`backward-branch`,
//! like a compiler-inserted YIELD in loops), after `quantum` instructions (`quantum`), or never
//! (`blocked`). Yielded threads count as arrived at their barriers until they run again
//! (patent: a barrier clears when every participant is blocked or yielded), and the least
//! recently run group runs next. This is what lets the spin-lock of Habermaier §6.1 finish:
//! the lock owner waits at the loop's barrier, the spinning thread yields at its back edge,
//! the barrier clears and the owner releases the lock.
//!
//! Frames: the executor keeps ONE call-frame stack per warp, so only threads at the deepest
//! call depth are scheduled (a group in a callee runs before groups waiting in the caller);
//! all threads at one depth are then in the same activation and the frames stay a stack.

use super::{
    bits, lane_mask, lanes_of, Flow, Mask, Outcome, Reason, Reconvergence, SimtError, StepCtx,
    TokenKind,
};
use crate::config::{ConvergenceBarrierConfig, SwitchRule};
use gpusim_isa::Pc;
use std::fmt::Write;
use std::hash::Hash;

/// What a thread is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    Ready,
    Exited,
    /// Waiting at convergence barrier `n` (BSYNC).
    Converge(u16),
    /// Waiting at `bar.warp.sync` for these lanes.
    WarpSync(Mask),
    /// Waiting at CTA barrier `n`.
    Cta(u8),
    /// Waiting at a `.sync` collective (pc unchanged) for the other non-exited lanes of
    /// `members` to wait at a matching one (`key`: the operation).
    Collective {
        members: Mask,
        key: u64,
    },
}

/// An entry of a thread's construct stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Construct {
    /// Participates in convergence barrier `n`.
    Barrier(u16),
    /// An activation: return to this pc in the caller.
    Call(Pc),
}

/// A convergence barrier (BSSY/BSYNC; `preBrk` makes a loop-exit barrier).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Barrier {
    pub kind: TokenKind,
    /// Where the released threads continue.
    pub target: Pc,
    pub participants: Mask,
    pub arrived: Mask,
    /// Released (every participant arrived, exited or yielded): late arrivals pass through.
    pub cleared: bool,
    /// Threads whose construct stack still holds the barrier.
    refs: u32,
}

#[derive(Clone, Debug)]
pub struct ConvergenceBarrier {
    cfg: ConvergenceBarrierConfig,
    lanes: Mask,
    pc: Vec<Pc>,
    depth: Vec<u32>,
    status: Vec<Status>,
    /// When each thread last issued (least recently run group first after a yield).
    stamp: Vec<u64>,
    stack: Vec<Vec<Construct>>,
    barriers: Vec<Option<Barrier>>,
    exited: Mask,
    /// Threads with `Status::Ready` (kept in step with `status`).
    ready: Mask,
    yielded: Mask,
    /// The deepest call depth of a live thread (its activation is the executor's top frame).
    top_depth: u32,
    /// The group that issues next.
    cur: Mask,
    cur_pc: Pc,
    /// Instructions issued by the current group since it was chosen.
    run_len: u32,
    clock: u64,
    /// The current group is a released `.sync` collective: its lanes may sit at matching
    /// collectives at different pcs, and each goes on after its own.
    released: bool,
}

impl ConvergenceBarrier {
    pub fn new(valid: Mask, warp_size: u32, cfg: ConvergenceBarrierConfig) -> ConvergenceBarrier {
        let n = warp_size as usize;
        let lanes = lane_mask(warp_size);
        let status = (0..n)
            .map(|l| {
                if valid >> l & 1 == 1 {
                    Status::Ready
                } else {
                    Status::Exited
                }
            })
            .collect();
        ConvergenceBarrier {
            cfg,
            lanes,
            pc: vec![0; n],
            depth: vec![1; n],
            status,
            stamp: vec![0; n],
            stack: (0..n).map(|_| Vec::with_capacity(8)).collect(),
            barriers: Vec::with_capacity(8),
            exited: lanes & !valid,
            ready: valid,
            yielded: 0,
            top_depth: 1,
            cur: valid,
            cur_pc: 0,
            run_len: 0,
            clock: 0,
            released: false,
        }
    }

    /// The pc and status of each lane (for tests and reports).
    pub fn lane(&self, l: usize) -> (Pc, u32, Status) {
        (self.pc[l], self.depth[l], self.status[l])
    }

    pub fn barrier(&self, n: usize) -> Option<&Barrier> {
        self.barriers.get(n).and_then(Option::as_ref)
    }

    fn mask_where(&self, f: impl Fn(usize) -> bool) -> Mask {
        (0..self.pc.len())
            .filter(|&l| f(l))
            .fold(0, |m, l| m | 1 << l)
    }

    fn set_status(&mut self, l: usize, st: Status) {
        self.status[l] = st;
        if st == Status::Ready {
            self.ready |= 1 << l;
        } else {
            self.ready &= !(1 << l);
        }
    }

    fn move_to(&mut self, m: Mask, pc: Pc) {
        for l in lanes_of(m) {
            self.pc[l] = pc;
        }
    }

    /// BSSY: a new barrier for the group, pushed on each thread's construct stack.
    fn open(&mut self, kind: TokenKind, target: Pc, group: Mask) {
        let b = Barrier {
            kind,
            target,
            participants: group,
            arrived: 0,
            cleared: false,
            refs: group.count_ones(),
        };
        let n = match self.barriers.iter().position(Option::is_none) {
            Some(i) => {
                self.barriers[i] = Some(b);
                i
            }
            None => {
                self.barriers.push(Some(b));
                self.barriers.len() - 1
            }
        };
        for l in lanes_of(group) {
            self.stack[l].push(Construct::Barrier(n as u16));
        }
    }

    /// Thread `l` drops barrier `n` from its construct stack (already popped by the caller).
    fn unref(&mut self, n: u16, l: usize, leave: bool) {
        let slot = &mut self.barriers[n as usize];
        let b = slot.as_mut().expect("a referenced barrier is live");
        if leave {
            // BREAK: the thread no longer participates.
            b.participants &= !(1 << l);
        }
        b.refs -= 1;
        if b.refs == 0 {
            *slot = None;
        }
    }

    /// Thread `l` arrives at barrier `n` (the innermost of its constructs), resuming at the
    /// barrier's target when it clears; a cleared barrier lets it through at once.
    fn arrive(&mut self, l: usize, n: u16) {
        let b = self.barriers[n as usize]
            .as_mut()
            .expect("a referenced barrier is live");
        if b.cleared {
            let target = b.target;
            self.stack[l].pop();
            self.unref(n, l, false);
            self.pc[l] = target;
        } else {
            b.arrived |= 1 << l;
            self.set_status(l, Status::Converge(n));
        }
    }

    /// Pop thread `l`'s constructs down to (excluding) the first one `stop` accepts, leaving
    /// every barrier popped on the way. Returns the construct it stopped at, if any.
    fn unwind_to(
        &mut self,
        l: usize,
        stop: impl Fn(&Construct, &Self) -> bool,
    ) -> Option<Construct> {
        while let Some(&c) = self.stack[l].last() {
            if stop(&c, self) {
                return Some(c);
            }
            self.stack[l].pop();
            if let Construct::Barrier(n) = c {
                self.unref(n, l, true);
            }
        }
        None
    }

    /// Release every barrier whose non-exited participants have all arrived or yielded.
    fn check_barriers(&mut self) {
        for n in 0..self.barriers.len() {
            let Some(b) = self.barriers[n] else { continue };
            if b.cleared || b.participants & !self.exited & !(b.arrived | self.yielded) != 0 {
                continue;
            }
            self.barriers[n].as_mut().unwrap().cleared = true;
            for l in lanes_of(b.arrived) {
                self.set_status(l, Status::Ready);
                self.pc[l] = b.target;
                self.stack[l].pop();
                self.unref(n as u16, l, false);
            }
            if let Some(b) = self.barriers[n].as_mut() {
                b.arrived = 0;
            }
        }
    }

    /// Release `bar.warp.sync` waiters whose mask has fully arrived.
    fn check_warp_syncs(&mut self) {
        let waiting = self.mask_where(|l| matches!(self.status[l], Status::WarpSync(_)));
        for l in lanes_of(waiting) {
            if let Status::WarpSync(m) = self.status[l] {
                let need = m & !self.exited;
                if need & !waiting == 0 {
                    for k in lanes_of(need | 1 << l) {
                        if matches!(self.status[k], Status::WarpSync(_)) {
                            self.set_status(k, Status::Ready);
                        }
                    }
                }
            }
        }
    }

    /// Release the first `.sync` collective (lowest waiting lane first) whose non-exited
    /// members all wait, at the deepest call depth, at a matching collective (same operation)
    /// with the same non-exited members: its waiting lanes become the current group, at the pc
    /// of the lowest one, and issue it once. Returns whether one was released.
    fn release_collective(&mut self) -> bool {
        let d = self.top_depth;
        let waiting = self.mask_where(|l| {
            self.depth[l] == d && matches!(self.status[l], Status::Collective { .. })
        });
        for l in lanes_of(waiting) {
            let Status::Collective { members, key } = self.status[l] else {
                continue;
            };
            let need = members & !self.exited;
            let set = lanes_of(waiting)
                .filter(|&k| {
                    matches!(self.status[k], Status::Collective { members: m, key: k2 }
                        if k2 == key && m & !self.exited == need)
                })
                .fold(0, |m, k| m | 1 << k);
            if need & !set == 0 {
                for k in lanes_of(set) {
                    self.set_status(k, Status::Ready);
                }
                self.cur = set;
                self.cur_pc = self.pc[l];
                self.released = true;
                return true;
            }
        }
        false
    }

    /// The deepest call depth of a live thread.
    fn max_depth(&self) -> u32 {
        lanes_of(self.lanes & !self.exited)
            .map(|l| self.depth[l])
            .max()
            .unwrap_or(1)
    }

    /// Choose the group that issues next among the threads ready at the deepest depth: those
    /// at `prefer` if any, else those at the pc of a ready thread of `cont` (the group that
    /// just ran goes on), else those of the least recently run thread, outside `avoid` if
    /// possible. Returns whether a group was found.
    fn select(&mut self, prefer: Option<Pc>, cont: Mask, avoid: Mask) -> bool {
        let d = self.top_depth;
        let cand = lanes_of(self.ready)
            .filter(|&l| self.depth[l] == d)
            .fold(0, |m, l| m | 1 << l);
        if cand == 0 {
            self.cur = 0;
            return false;
        }
        let at = |pc: Pc| {
            lanes_of(cand)
                .filter(|&l| self.pc[l] == pc)
                .fold(0, |m, l| m | 1 << l)
        };
        let pc = match prefer.filter(|&p| at(p) != 0) {
            Some(p) => p,
            None if cand & cont != 0 => self.pc[(cand & cont).trailing_zeros() as usize],
            None => {
                let pool = if cand & !avoid != 0 {
                    cand & !avoid
                } else {
                    cand
                };
                let l = lanes_of(pool)
                    .min_by_key(|&l| (self.stamp[l], self.pc[l], l))
                    .expect("pool is not empty");
                self.pc[l]
            }
        };
        self.cur = at(pc);
        self.cur_pc = pc;
        true
    }

    fn err(&self, what: &str) -> SimtError {
        SimtError(format!("{what}; {}", self.describe()))
    }
}

impl Reconvergence for ConvergenceBarrier {
    fn pc(&self) -> Pc {
        self.cur_pc
    }
    fn set_pc(&mut self, pc: Pc) {
        self.cur_pc = pc;
        let g = self.cur;
        self.move_to(g, pc);
    }
    fn active_mask(&self) -> Mask {
        self.cur
    }
    fn exited_mask(&self) -> Mask {
        self.exited
    }
    fn stack_depth(&self) -> usize {
        self.stack.iter().map(Vec::len).max().unwrap_or(0)
    }
    fn independent_threads(&self) -> bool {
        true
    }
    fn split_issue(&self) -> bool {
        self.released
    }
    fn lane_pc(&self, l: usize) -> Pc {
        self.pc[l]
    }

    fn step(&mut self, flow: Flow, ctx: &StepCtx) -> Result<Outcome, SimtError> {
        let (g, pc) = (self.cur, self.cur_pc);
        if g == 0 {
            return Err(self.err("no thread group to run"));
        }
        self.clock += 1;
        for l in lanes_of(g) {
            self.stamp[l] = self.clock;
        }
        self.yielded &= !g;
        let released = std::mem::take(&mut self.released);
        if released && !matches!(flow, Flow::Next | Flow::CollectiveWait { .. }) {
            return Err(self.err("a released `.sync` collective changed control flow"));
        }
        let mut prefer = Some(pc + 1);
        let mut backward = false;
        let mut sync_state = false;
        // The whole group moved to this pc with no change of status or depth.
        let mut whole = None;
        let depth_changed = matches!(
            flow,
            Flow::Disable(Reason::Exit | Reason::Return, _)
                | Flow::Jump { is_call: true, .. }
                | Flow::Multi { is_call: true, .. }
        );
        match flow {
            // A released collective: every lane goes on after its own instruction.
            Flow::Next if released => {
                for l in lanes_of(g) {
                    self.pc[l] += 1;
                }
            }
            Flow::Next | Flow::Push(TokenKind::Call, _) => {
                self.move_to(g, pc + 1);
                whole = Some(pc + 1);
            }
            // BSSY (`ssy`, and `preBrk` for a loop's exit).
            Flow::Push(kind, target) => {
                self.open(kind, target, g);
                self.move_to(g, pc + 1);
                whole = Some(pc + 1);
            }
            // BSYNC.
            Flow::Sync => {
                for l in lanes_of(g) {
                    match self.stack[l].last() {
                        Some(&Construct::Barrier(n)) => self.arrive(l, n),
                        _ => {
                            return Err(
                                self.err("`sync` by a thread outside any convergence barrier")
                            )
                        }
                    }
                }
                prefer = None;
                sync_state = true;
            }
            Flow::Disable(Reason::Exit, lanes) => {
                let x = lanes & g;
                for l in lanes_of(x) {
                    self.set_status(l, Status::Exited);
                    while let Some(c) = self.stack[l].pop() {
                        if let Construct::Barrier(n) = c {
                            self.unref(n, l, false);
                        }
                    }
                }
                self.exited |= x;
                self.move_to(g & !x, pc + 1);
                sync_state = true;
            }
            Flow::Disable(Reason::Return, lanes) => {
                let r = lanes & g;
                for l in lanes_of(r) {
                    match self.unwind_to(l, |c, _| matches!(c, Construct::Call(_))) {
                        Some(Construct::Call(ret)) => {
                            self.stack[l].pop();
                            self.pc[l] = ret;
                            self.depth[l] -= 1;
                        }
                        _ => return Err(self.err("`ret` by a thread that is not in a call")),
                    }
                }
                self.move_to(g & !r, pc + 1);
                sync_state = true;
            }
            // BREAK out of the inner barriers, then arrive at the loop's barrier.
            Flow::Disable(Reason::Break, lanes) => {
                let b = lanes & g;
                for l in lanes_of(b) {
                    let stop = |c: &Construct, s: &Self| match *c {
                        Construct::Barrier(n) => {
                            s.barriers[n as usize].is_some_and(|b| b.kind == TokenKind::Break)
                        }
                        Construct::Call(_) => true,
                    };
                    match self.unwind_to(l, stop) {
                        Some(Construct::Barrier(n)) => self.arrive(l, n),
                        _ => return Err(self.err("`brk` by a thread outside any loop barrier")),
                    }
                }
                self.move_to(g & !b, pc + 1);
                sync_state = true;
            }
            Flow::Jump {
                target,
                taken,
                is_call: false,
            } => {
                let t = taken & g;
                self.move_to(t, target);
                self.move_to(g & !t, pc + 1);
                if t != 0 {
                    prefer = Some(target);
                    backward = target <= pc;
                }
                if t == g {
                    whole = Some(target);
                }
            }
            Flow::Jump {
                taken,
                is_call: true,
                ..
            } => {
                let t = taken & g;
                for l in lanes_of(t) {
                    self.stack[l].push(Construct::Call(pc + 1));
                    self.depth[l] += 1;
                    self.pc[l] = 0;
                }
                self.move_to(g & !t, pc + 1);
                prefer = Some(0);
            }
            Flow::Multi {
                groups,
                is_call: true,
            } => {
                // One callee now; the other lanes execute the call again afterwards.
                let t = groups.first().map_or(0, |x| x.1) & g;
                for l in lanes_of(t) {
                    self.stack[l].push(Construct::Call(pc + 1));
                    self.depth[l] += 1;
                    self.pc[l] = 0;
                }
                prefer = Some(0);
            }
            Flow::Multi {
                groups,
                is_call: false,
            } => {
                let mut rest = g;
                for &(t, lanes) in &groups {
                    self.move_to(lanes & g, t);
                    rest &= !lanes;
                    backward |= t <= pc && lanes & g != 0;
                }
                self.move_to(rest, pc + 1);
                prefer = groups.first().map(|x| x.0);
            }
            Flow::WarpSync(mask) => {
                for l in lanes_of(g) {
                    self.pc[l] = pc + 1;
                    self.set_status(l, Status::WarpSync(mask | g));
                }
                self.check_warp_syncs();
            }
            Flow::BarrierWait(barid) => {
                for l in lanes_of(g) {
                    self.pc[l] = pc + 1;
                    self.set_status(l, Status::Cta(barid as u8));
                }
            }
            // The collective did not execute: the lanes wait at it (their pcs stay).
            Flow::CollectiveWait { members, key } => {
                for l in lanes_of(g) {
                    self.set_status(l, Status::Collective { members, key });
                }
                prefer = None;
                sync_state = true;
            }
        }
        // Yield (patent US 10,067,768): the group's threads count as arrived at their barriers
        // until they run again, and another group gets the warp.
        let yield_now = match self.cfg.switch {
            SwitchRule::BackwardBranch => backward,
            SwitchRule::Quantum => self.run_len + 1 >= self.cfg.quantum,
            SwitchRule::Blocked => false,
        };
        if depth_changed {
            self.top_depth = self.max_depth();
        }
        // The quantum measures how long the other threads have waited: it restarts when a new
        // group is chosen and while the group is alone in its warp.
        let alone = self.lanes & !self.exited & !g == 0;
        if let Some(to) = whole.filter(|_| !yield_now && self.ready == g) {
            // Fast path: the group goes on and nobody can join it.
            self.cur_pc = to;
            self.run_len = if alone { 0 } else { self.run_len + 1 };
            return Ok(Outcome::Active {
                popped_frame_depth: None,
            });
        }
        // Threads a yield would hand the warp to (ready, or waiting at a convergence barrier
        // the yield may clear).
        let others = self.lanes
            & !self.exited
            & !g
            & self.mask_where(|l| matches!(self.status[l], Status::Ready | Status::Converge(_)));
        let yielding = yield_now && others != 0;
        if yielding {
            self.yielded |= g & self.ready;
            sync_state = true;
        }
        if sync_state {
            self.check_barriers();
            self.check_warp_syncs();
        }
        // A collective whose members have all arrived issues next.
        let found = ((sync_state || released) && self.release_collective())
            || if yielding {
                self.select(None, 0, g)
            } else {
                self.select(prefer, g, 0)
            };
        self.run_len = if found && !yielding && !alone && self.cur & g != 0 {
            self.run_len + 1
        } else {
            0
        };
        let max_depth = self.top_depth;
        let popped_frame_depth = (max_depth < ctx.frame_depth).then_some(max_depth);
        if found {
            return Ok(Outcome::Active { popped_frame_depth });
        }
        if self.exited == self.lanes {
            return Ok(Outcome::Completed);
        }
        let mut barriers = 0u32;
        for l in 0..self.status.len() {
            if let Status::Cta(b) = self.status[l] {
                barriers |= 1 << b;
            }
        }
        if barriers != 0 {
            return Ok(Outcome::Blocked {
                popped_frame_depth,
                barriers,
            });
        }
        // Every live thread waits for threads of its own warp that cannot arrive.
        Ok(Outcome::Deadlocked)
    }

    fn barrier_released(&mut self, barid: usize) {
        self.barrier_released_lanes(barid, Mask::MAX);
    }

    fn barrier_released_lanes(&mut self, barid: usize, lanes: Mask) {
        for l in 0..self.status.len() {
            if self.status[l] == Status::Cta(barid as u8) && lanes >> l & 1 == 1 {
                self.set_status(l, Status::Ready);
            }
        }
        // Released threads at the running group's pc join it (a released collective issues as
        // it is); a blocked warp picks a group.
        if !self.released {
            let keep = (self.cur != 0).then_some(self.cur_pc);
            self.select(keep, 0, 0);
        }
    }

    fn hash_state(&self, h: &mut dyn std::hash::Hasher) {
        let mut hh = std::collections::hash_map::DefaultHasher::new();
        (
            &self.pc,
            &self.depth,
            &self.status,
            &self.stack,
            &self.barriers,
            self.exited,
            self.yielded,
            self.cur,
            self.cur_pc,
            self.released,
        )
            .hash(&mut hh);
        // The quantum counter decides when the group yields: part of the state only then
        // (elsewhere it would hide a true livelock).
        if self.cfg.switch == SwitchRule::Quantum {
            self.run_len.hash(&mut hh);
        }
        // The least-recently-run order decides who runs after a yield; the stamps themselves
        // only grow, so their order is the state.
        let n = self.stamp.len();
        let mut order = [0u8; 64];
        for (i, o) in order[..n].iter_mut().enumerate() {
            *o = i as u8;
        }
        order[..n].sort_unstable_by_key(|&l| (self.stamp[l as usize], l));
        order[..n].hash(&mut hh);
        h.write_u64(std::hash::Hasher::finish(&hh));
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "pc {} group {:#x} exited {:#x}; threads:",
            self.cur_pc, self.cur, self.exited
        );
        for l in lanes_of(self.lanes & !self.exited) {
            let _ = write!(s, " {l}@{}", self.pc[l]);
            if self.depth[l] > 1 {
                let _ = write!(s, "/d{}", self.depth[l]);
            }
            match self.status[l] {
                Status::Ready | Status::Exited => {}
                Status::Converge(n) => {
                    let _ = write!(s, "(waits at convergence barrier {n})");
                }
                Status::WarpSync(m) => {
                    let _ = write!(s, "(waits at bar.warp.sync {m:#x})");
                }
                Status::Cta(b) => {
                    let _ = write!(s, "(waits at CTA barrier {b})");
                }
                Status::Collective { members, .. } => {
                    let _ = write!(s, "(waits at a .sync collective for {members:#x})");
                }
            }
        }
        s.push_str("; convergence barriers:");
        for (n, b) in self.barriers.iter().enumerate() {
            if let Some(b) = b {
                let _ = write!(
                    s,
                    " [{n}] ({:?} → {}, participants {:#x}, arrived {:#x}{})",
                    b.kind,
                    b.target,
                    b.participants,
                    b.arrived,
                    if b.cleared { ", cleared" } else { "" }
                );
            }
        }
        s
    }

    fn paper_state(&self, lanes: u32) -> String {
        let mut groups: Vec<(u32, Pc, Mask)> = Vec::new();
        for l in lanes_of(self.lanes & !self.exited) {
            let key = (self.depth[l], self.pc[l]);
            match groups.iter_mut().find(|g| (g.0, g.1) == key) {
                Some(g) => g.2 |= 1 << l,
                None => groups.push((key.0, key.1, 1 << l)),
            }
        }
        let groups: Vec<String> = groups
            .iter()
            .map(|g| format!("({},{})", g.1, bits(g.2, lanes)))
            .collect();
        let bars: Vec<String> = self
            .barriers
            .iter()
            .flatten()
            .map(|b| {
                format!(
                    "({},{},{})",
                    b.target,
                    bits(b.participants, lanes),
                    bits(b.arrived, lanes)
                )
            })
            .collect();
        format!(
            "α={} pcs={} barriers={}",
            bits(self.cur, lanes),
            groups.join("::"),
            bars.join("::")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simt::testutil::{ctx, info};

    fn cb(valid: Mask, n: u32, switch: SwitchRule) -> ConvergenceBarrier {
        ConvergenceBarrier::new(valid, n, ConvergenceBarrierConfig { switch, quantum: 4 })
    }

    fn j(target: Pc, taken: Mask) -> Flow {
        Flow::Jump {
            target,
            taken,
            is_call: false,
        }
    }

    /// If/else under BSSY/BSYNC: the taken group runs to the `sync` and waits; the other
    /// group runs; the barrier releases both at L as one group.
    #[test]
    fn bsync_waits_for_every_participant() {
        // 0: ssy 6; 1: @p bra 4; 2: else; 3: bra 5; 4: then; 5: sync; 6: join
        let inf = info(8, &[], &[]);
        let c = ctx(&inf, 1);
        let mut w = cb(0b11, 2, SwitchRule::BackwardBranch);
        w.step(Flow::Push(TokenKind::Sync, 6), &c).unwrap();
        w.step(j(4, 0b01), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (4, 0b01));
        w.step(Flow::Next, &c).unwrap();
        w.step(Flow::Sync, &c).unwrap(); // lane 0 waits at the barrier
        assert_eq!(w.lane(0).2, Status::Converge(0));
        assert_eq!((w.pc(), w.active_mask()), (2, 0b10));
        w.step(Flow::Next, &c).unwrap();
        w.step(j(5, 0b10), &c).unwrap();
        w.step(Flow::Sync, &c).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (6, 0b11));
        assert!(w.barrier(0).is_none(), "the barrier is freed");
    }

    /// The spin-lock of Habermaier §6.1: lane 0 gets the lock and waits at the loop's
    /// barrier; lane 1 spins. At its back edge lane 1 yields, which clears the barrier, and
    /// lane 0 (least recently run) runs on to release the lock.
    #[test]
    fn yield_at_the_back_edge_releases_the_lock_owner() {
        // 0: preBrk 4; 1: cas; 2: @p brk; 3: bra 1; 4: release
        let inf = info(6, &[], &[(2, 4)]);
        let c = ctx(&inf, 1);
        let mut w = cb(0b11, 2, SwitchRule::BackwardBranch);
        w.step(Flow::Push(TokenKind::Break, 4), &c).unwrap();
        w.step(Flow::Next, &c).unwrap();
        w.step(Flow::Disable(Reason::Break, 0b01), &c).unwrap();
        assert_eq!(w.lane(0).2, Status::Converge(0));
        assert_eq!((w.pc(), w.active_mask()), (3, 0b10));
        w.step(j(1, 0b10), &c).unwrap(); // back edge: yield
        assert_eq!((w.pc(), w.active_mask()), (4, 0b01));
        // Under `blocked` the spinner keeps the warp.
        let mut w = cb(0b11, 2, SwitchRule::Blocked);
        w.step(Flow::Push(TokenKind::Break, 4), &c).unwrap();
        w.step(Flow::Next, &c).unwrap();
        w.step(Flow::Disable(Reason::Break, 0b01), &c).unwrap();
        w.step(j(1, 0b10), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (1, 0b10));
    }

    /// `quantum`: a group yields after `quantum` instructions.
    #[test]
    fn quantum_switches_groups() {
        let inf = info(40, &[], &[]);
        let c = ctx(&inf, 1);
        let mut w = cb(0b11, 2, SwitchRule::Quantum);
        w.step(j(20, 0b01), &c).unwrap(); // lanes at 20 and 1; the taken one runs
        assert_eq!(w.pc(), 20);
        for _ in 0..3 {
            w.step(Flow::Next, &c).unwrap();
        }
        assert_eq!((w.pc(), w.active_mask()), (23, 0b01));
        w.step(Flow::Next, &c).unwrap(); // the group's 4th instruction since the divergence
        assert_eq!((w.pc(), w.active_mask()), (1, 0b10));
    }

    /// `bar.warp.sync`: the first group waits until every lane of the mask has arrived.
    #[test]
    fn warp_sync_waits_for_its_mask() {
        let inf = info(40, &[], &[]);
        let c = ctx(&inf, 1);
        let mut w = cb(0b11, 2, SwitchRule::Blocked);
        w.step(j(10, 0b01), &c).unwrap();
        w.step(Flow::WarpSync(0b11), &c).unwrap();
        assert_eq!(w.lane(0).2, Status::WarpSync(0b11));
        assert_eq!((w.pc(), w.active_mask()), (1, 0b10));
        w.step(j(10, 0b10), &c).unwrap();
        w.step(Flow::WarpSync(0b11), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (11, 0b11));
    }

    fn cw(members: Mask, key: u64) -> Flow {
        Flow::CollectiveWait { members, key }
    }

    /// A `.sync` collective waits for its members at a matching instruction elsewhere (the
    /// other side of an if/else), then issues once for all of them; afterwards every lane goes
    /// on after its own instruction.
    #[test]
    fn collective_waits_for_its_members_across_pcs() {
        let inf = info(40, &[], &[]);
        let c = ctx(&inf, 1);
        let mut w = cb(0b11, 2, SwitchRule::BackwardBranch);
        w.step(j(10, 0b01), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (10, 0b01));
        w.step(cw(0b11, 7), &c).unwrap();
        assert_eq!(
            w.lane(0),
            (
                10,
                1,
                Status::Collective {
                    members: 0b11,
                    key: 7
                }
            )
        );
        assert_eq!((w.pc(), w.active_mask()), (1, 0b10));
        assert!(!w.split_issue());
        w.step(Flow::Next, &c).unwrap();
        w.step(cw(0b11, 7), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (10, 0b11));
        assert!(w.split_issue());
        assert_eq!((w.lane_pc(0), w.lane_pc(1)), (10, 2));
        w.step(Flow::Next, &c).unwrap();
        assert!(!w.split_issue());
        assert_eq!((w.pc(), w.active_mask()), (11, 0b01));
        assert_eq!(w.lane(1), (3, 1, Status::Ready));
    }

    /// Exited lanes of the membermask are not waited for, whether they exited before the
    /// collective or while others wait at it.
    #[test]
    fn collective_ignores_exited_members() {
        let inf = info(40, &[], &[]);
        let c = ctx(&inf, 1);
        let mut w = cb(0b111, 3, SwitchRule::BackwardBranch);
        w.step(Flow::Disable(Reason::Exit, 0b100), &c).unwrap();
        w.step(j(10, 0b01), &c).unwrap();
        w.step(cw(0b111, 1), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (2, 0b10));
        w.step(cw(0b111, 1), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (10, 0b011));
        // Lane 0 waits for lane 1, which exits instead: lane 0 issues alone.
        let mut w = cb(0b11, 2, SwitchRule::BackwardBranch);
        w.step(j(10, 0b01), &c).unwrap();
        w.step(cw(0b11, 1), &c).unwrap();
        w.step(Flow::Disable(Reason::Exit, 0b10), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (10, 0b01));
        assert!(w.split_issue());
    }

    /// Collectives of another operation or membermask do not match: every live thread waits
    /// for one that cannot arrive, and the warp is deadlocked.
    #[test]
    fn unmatched_collectives_deadlock() {
        let inf = info(40, &[], &[]);
        let c = ctx(&inf, 1);
        for (first, other) in [(cw(0b111, 7), cw(0b111, 8)), (cw(0b011, 7), cw(0b111, 7))] {
            let mut w = cb(0b111, 3, SwitchRule::Quantum);
            w.step(j(10, 0b001), &c).unwrap();
            w.step(first, &c).unwrap();
            assert_eq!((w.pc(), w.active_mask()), (1, 0b110));
            assert_eq!(w.step(other, &c), Ok(Outcome::Deadlocked));
        }
    }

    /// A CTA barrier reached group by group: the warp blocks only when no group can run, and
    /// the release wakes every waiting thread.
    #[test]
    fn cta_barrier_group_by_group() {
        let inf = info(40, &[], &[]);
        let c = ctx(&inf, 1);
        let mut w = cb(0b11, 2, SwitchRule::Blocked);
        w.step(j(10, 0b01), &c).unwrap();
        let o = w.step(Flow::BarrierWait(0), &c).unwrap();
        assert!(matches!(o, Outcome::Active { .. }));
        assert_eq!((w.pc(), w.active_mask()), (1, 0b10));
        let o = w.step(Flow::BarrierWait(0), &c).unwrap();
        assert_eq!(
            o,
            Outcome::Blocked {
                popped_frame_depth: None,
                barriers: 1
            }
        );
        w.barrier_released(0);
        assert_eq!(w.active_mask().count_ones(), 1);
    }

    /// Calls: the callee's threads run first; a return leaves the callee's barriers and the
    /// executor drops the frame when the last thread has returned.
    #[test]
    fn deepest_call_depth_runs_first() {
        let inf = info(40, &[], &[]);
        let mut w = cb(0b11, 2, SwitchRule::BackwardBranch);
        w.set_pc(30);
        let call = Flow::Jump {
            target: 0,
            taken: 0b01,
            is_call: true,
        };
        w.step(call, &ctx(&inf, 1)).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (0, 0b01));
        w.step(Flow::Push(TokenKind::Sync, 5), &ctx(&inf, 2))
            .unwrap();
        let o = w
            .step(Flow::Disable(Reason::Return, 0b01), &ctx(&inf, 2))
            .unwrap();
        assert_eq!(
            o,
            Outcome::Active {
                popped_frame_depth: Some(1)
            }
        );
        assert_eq!((w.pc(), w.active_mask()), (31, 0b11));
        assert!(w.barrier(0).is_none());
    }
}
