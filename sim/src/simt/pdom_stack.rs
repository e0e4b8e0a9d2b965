//! `pdom-stack`: the classic immediate-post-dominator SIMT stack, without explicit tokens, as
//! GPGPU-Sim models pre-Volta NVIDIA GPUs (Fung, Sham, Yuan, Aamodt, "Dynamic Warp
//! Formation and Scheduling for Efficient GPU Control Flow", MICRO 2007; GPGPU-Sim
//! `simt_stack::update`). SIMT-Step variant: P1 → CM (simt-step.md §4.3): one path runs at a
//! time, every warp instruction is one collective step, and the paths meet again at the
//! IPDOM, the merge block of structured code.
//!
//! Entries are (pc, reconvergence pc, mask). A divergent branch turns the top entry into the
//! reconvergence entry (its pc becomes the branch's IPDOM) and pushes the not-taken and then
//! the taken entry, so the taken path runs first; an entry pops when its pc reaches its
//! reconvergence pc. When the IPDOM equals the top entry's own reconvergence pc, the top entry
//! is replaced instead (GPGPU-Sim's `new_recvg_pc == top_recvg_pc`).
//!
//! Tokens: the policy ignores the token machine. `ssy`, `sync`, `preBrk` and `preRet` fall
//! through (`validate_tokens` guarantees a `sync` pops a token for pc + 1 and a `preRet` names
//! the instruction after its call), and `brk` is a branch of its lanes to the break target.
//! The IPDOMs come from `ProgramInfo`, computed on the tokenised body with `brk` as that jump.
//!
//! Calls push a call entry (GPGPU-Sim `STACK_ENTRY_TYPE_CALL`) above the caller's entry, whose
//! pc moves to the return address; lanes that `ret` leave every entry of the callee, and the
//! call entry pops (the executor drops the callee's frame) when none of its lanes is left.

use super::{
    bits, lane_mask, Flow, Mask, Outcome, Reason, Reconvergence, SimtError, StepCtx, NO_PC,
};
use gpusim_isa::Pc;
use std::fmt::Write;
use std::hash::Hash;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    pub pc: Pc,
    /// Reconvergence pc; `NO_PC` never pops by pc (the bottom entry, a call entry, or an IPDOM
    /// at the function exit).
    pub rpc: Pc,
    pub mask: Mask,
    /// A call entry: the caller's frame depth, restored when it pops.
    pub call: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct PdomStack {
    stack: Vec<Entry>,
    exited: Mask,
    lanes: Mask,
}

impl PdomStack {
    /// A warp whose lanes `valid` exist; padding lanes start exited.
    pub fn new(valid: Mask, warp_size: u32) -> PdomStack {
        let lanes = lane_mask(warp_size);
        let mut stack = Vec::with_capacity(16);
        stack.push(Entry {
            pc: 0,
            rpc: NO_PC,
            mask: valid,
            call: None,
        });
        PdomStack {
            stack,
            exited: lanes & !valid,
            lanes,
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.stack
    }

    fn top(&mut self) -> &mut Entry {
        self.stack.last_mut().expect("a running warp has an entry")
    }

    /// Divergence at `pc` of the top entry into `paths` (pc, lanes), listed bottom first: the
    /// last path runs first. `P` = IPDOM of the branch.
    fn diverge(&mut self, pc: Pc, paths: &[(Pc, Mask)], ctx: &StepCtx) {
        let p = ctx.info.funcs[ctx.func.0 as usize].ipdom[pc as usize];
        let top = *self.top();
        if p == top.rpc && top.call.is_none() {
            // The paths reconverge where the top entry does: replace it.
            self.stack.pop();
        } else {
            // The top entry waits at the IPDOM for every path (its reconvergence entry).
            self.top().pc = p;
        }
        for &(t, m) in paths {
            if m != 0 && t != p {
                self.stack.push(Entry {
                    pc: t,
                    rpc: p,
                    mask: m,
                    call: None,
                });
            }
        }
    }

    /// A branch of `taken` lanes of the top entry to `target` (pc+1 for the others).
    fn branch(&mut self, pc: Pc, target: Pc, taken: Mask, ctx: &StepCtx) {
        let act = self.active_mask();
        let taken = taken & act;
        if taken == act {
            self.top().pc = target;
        } else if taken == 0 {
            self.top().pc = pc + 1;
        } else {
            // The path pushed last runs first.
            let (not_taken, taken) = ((pc + 1, act & !taken), (target, taken));
            let paths = if ctx.taken_first {
                [not_taken, taken]
            } else {
                [taken, not_taken]
            };
            self.diverge(pc, &paths, ctx);
        }
    }

    /// `taken` lanes call; `rest` lanes re-execute the call (an indirect call with several
    /// callees) and the others wait at the return address pc + 1.
    fn call(&mut self, pc: Pc, taken: Mask, rest: Mask, frame_depth: u32) {
        self.top().pc = pc + 1;
        if rest != 0 {
            self.stack.push(Entry {
                pc,
                rpc: pc + 1,
                mask: rest,
                call: None,
            });
        }
        self.stack.push(Entry {
            pc: 0,
            rpc: NO_PC,
            mask: taken,
            call: Some(frame_depth),
        });
    }

    /// Pop finished entries: empty ones (their lanes exited or returned) and those at their
    /// reconvergence pc.
    fn normalize(&mut self) -> Result<Outcome, SimtError> {
        let mut popped = None;
        while let Some(top) = self.stack.last() {
            if top.mask & !self.exited == 0 {
                if let Some(d) = top.call {
                    popped = Some(d);
                }
                self.stack.pop();
            } else if top.rpc != NO_PC && top.pc == top.rpc {
                self.stack.pop();
            } else {
                return Ok(Outcome::Active {
                    popped_frame_depth: popped,
                });
            }
        }
        if self.exited == self.lanes {
            Ok(Outcome::Completed)
        } else {
            Err(SimtError(format!(
                "empty SIMT stack while lanes {:#x} have not exited",
                self.lanes & !self.exited
            )))
        }
    }
}

impl Reconvergence for PdomStack {
    fn pc(&self) -> Pc {
        self.stack.last().map_or(0, |e| e.pc)
    }
    fn set_pc(&mut self, pc: Pc) {
        if let Some(e) = self.stack.last_mut() {
            e.pc = pc;
        }
    }
    fn active_mask(&self) -> Mask {
        self.stack.last().map_or(0, |e| e.mask & !self.exited)
    }
    fn exited_mask(&self) -> Mask {
        self.exited
    }
    fn stack_depth(&self) -> usize {
        self.stack.len()
    }

    fn step(&mut self, flow: Flow, ctx: &StepCtx) -> Result<Outcome, SimtError> {
        let pc = self.pc();
        let act = self.active_mask();
        match flow {
            // Token instructions fall through (see the module doc).
            Flow::Next
            | Flow::Push(..)
            | Flow::Sync
            | Flow::WarpSync(_)
            | Flow::BarrierWait(_)
            | Flow::CollectiveWait { .. } => self.top().pc += 1,
            Flow::Disable(Reason::Exit, lanes) => {
                self.exited |= lanes & act;
                self.top().pc += 1;
            }
            // The returning lanes leave every entry of the callee, down to its call entry.
            Flow::Disable(Reason::Return, lanes) => {
                let lanes = lanes & act;
                for e in self.stack.iter_mut().rev() {
                    e.mask &= !lanes;
                    if e.call.is_some() {
                        break;
                    }
                }
                self.top().pc += 1;
            }
            // `brk`: a branch to the break target.
            Flow::Disable(Reason::Break, lanes) => {
                let target = ctx.info.funcs[ctx.func.0 as usize].break_target[pc as usize];
                if target == NO_PC {
                    return Err(SimtError(format!("`brk` at pc {pc} has no break target")));
                }
                self.branch(pc, target, lanes, ctx);
            }
            Flow::Jump {
                target,
                taken,
                is_call: false,
            } => self.branch(pc, target, taken, ctx),
            Flow::Jump {
                taken,
                is_call: true,
                ..
            } => {
                let taken = taken & act;
                self.call(pc, taken, 0, ctx.frame_depth);
            }
            Flow::Multi {
                groups,
                is_call: true,
            } => {
                let taken = groups.first().map_or(0, |g| g.1) & act;
                self.call(pc, taken, act & !taken, ctx.frame_depth);
            }
            Flow::Multi {
                groups,
                is_call: false,
            } => {
                // Guard-false lanes fall through; the lowest target runs first (pushed last).
                let mut paths = [(0, 0); 65];
                let mut n = 0;
                let mut rest = act;
                for &(t, m) in groups.iter().rev() {
                    paths[n + 1] = (t, m & act);
                    rest &= !m;
                    n += 1;
                }
                paths[0] = (pc + 1, rest);
                self.diverge(pc, &paths[..=n], ctx);
            }
        }
        self.normalize()
    }

    fn hash_state(&self, h: &mut dyn std::hash::Hasher) {
        let mut hh = std::collections::hash_map::DefaultHasher::new();
        (self.exited, &self.stack).hash(&mut hh);
        h.write_u64(std::hash::Hasher::finish(&hh));
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "pc {} active {:#x} exited {:#x}; pdom stack (top first):",
            self.pc(),
            self.active_mask(),
            self.exited
        );
        for e in self.stack.iter().rev() {
            let rpc = if e.rpc == NO_PC {
                "exit".to_string()
            } else {
                e.rpc.to_string()
            };
            let _ = write!(s, " (pc {}, rpc {rpc}, {:#x}", e.pc, e.mask);
            if let Some(d) = e.call {
                let _ = write!(s, ", call from depth {d}");
            }
            s.push(')');
        }
        s
    }

    fn paper_state(&self, lanes: u32) -> String {
        let stack: Vec<String> = self
            .stack
            .iter()
            .rev()
            .map(|e| {
                let rpc = if e.rpc == NO_PC {
                    "-".to_string()
                } else {
                    e.rpc.to_string()
                };
                let kind = if e.call.is_some() { "call," } else { "" };
                format!(
                    "({kind}{},{},{})",
                    e.pc,
                    rpc,
                    bits(e.mask & !self.exited, lanes)
                )
            })
            .collect();
        format!(
            "α={} stack={}",
            bits(self.active_mask(), lanes),
            stack.join("::")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simt::testutil::{ctx, info};

    /// If/else: taken path first, then the not-taken path, then both at the IPDOM.
    #[test]
    fn if_else_runs_taken_then_not_taken_then_reconverges() {
        // 0: @p bra 3; 1: else; 2: bra 4; 3: then; 4: join
        let inf = info(6, &[(0, 4)], &[]);
        let c = ctx(&inf, 1);
        let mut w = PdomStack::new(0b11, 2);
        let j = |target, taken| Flow::Jump {
            target,
            taken,
            is_call: false,
        };
        w.step(j(3, 0b01), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask(), w.stack_depth()), (3, 0b01, 3));
        w.step(Flow::Next, &c).unwrap(); // then → 4 = rpc: pops
        assert_eq!((w.pc(), w.active_mask(), w.stack_depth()), (1, 0b10, 2));
        w.step(Flow::Next, &c).unwrap();
        w.step(j(4, 0b10), &c).unwrap(); // else: bra 4 → pops
        assert_eq!((w.pc(), w.active_mask(), w.stack_depth()), (4, 0b11, 1));
    }

    /// A loop exit through `brk`: lanes that break wait at the break target (the IPDOM) until
    /// the last lane breaks; the reconvergence entry is reused (IPDOM = rpc).
    #[test]
    fn brk_lanes_wait_at_the_loop_exit() {
        // 0: preBrk 4; 1: body; 2: @p brk; 3: bra 1; 4: exit block
        let inf = info(6, &[(2, 4)], &[(2, 4)]);
        let c = ctx(&inf, 1);
        let mut w = PdomStack::new(0b111, 3);
        w.step(Flow::Push(crate::simt::TokenKind::Break, 4), &c)
            .unwrap();
        w.step(Flow::Next, &c).unwrap();
        w.step(Flow::Disable(Reason::Break, 0b001), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask(), w.stack_depth()), (3, 0b110, 2));
        let back = Flow::Jump {
            target: 1,
            taken: 0b110,
            is_call: false,
        };
        w.step(back.clone(), &c).unwrap();
        w.step(Flow::Next, &c).unwrap();
        w.step(Flow::Disable(Reason::Break, 0b010), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask(), w.stack_depth()), (3, 0b100, 2));
        w.step(back, &c).unwrap();
        w.step(Flow::Next, &c).unwrap();
        w.step(Flow::Disable(Reason::Break, 0b100), &c).unwrap();
        assert_eq!((w.pc(), w.active_mask(), w.stack_depth()), (4, 0b111, 1));
    }

    /// A guarded call: the callee runs for its lanes; a divergent return parks lanes until the
    /// whole call entry has returned, then the caller resumes at pc + 1 with every lane.
    #[test]
    fn call_entry_pops_when_every_lane_returned() {
        let inf = info(8, &[(1, NO_PC)], &[]);
        let c1 = ctx(&inf, 1);
        let c2 = ctx(&inf, 2);
        let mut w = PdomStack::new(0b111, 3);
        w.set_pc(5);
        let call = Flow::Jump {
            target: 0,
            taken: 0b011,
            is_call: true,
        };
        w.step(call, &c1).unwrap();
        assert_eq!((w.pc(), w.active_mask()), (0, 0b011));
        // callee 1: @p ret (lane 0): divergent return
        w.set_pc(1);
        let o = w.step(Flow::Disable(Reason::Return, 0b001), &c2).unwrap();
        assert_eq!(
            o,
            Outcome::Active {
                popped_frame_depth: None
            }
        );
        assert_eq!((w.pc(), w.active_mask()), (2, 0b010));
        let o = w.step(Flow::Disable(Reason::Return, 0b010), &c2).unwrap();
        assert_eq!(
            o,
            Outcome::Active {
                popped_frame_depth: Some(1)
            }
        );
        assert_eq!((w.pc(), w.active_mask()), (6, 0b111));
    }

    #[test]
    fn exit_of_every_lane_completes() {
        let inf = info(4, &[], &[]);
        let mut w = PdomStack::new(0b11, 2);
        assert_eq!(
            w.step(Flow::Disable(Reason::Exit, 0b11), &ctx(&inf, 1))
                .unwrap(),
            Outcome::Completed
        );
    }
}
