//! The formal model's warp-level branching (Habermaier 2011, §5.4, "CRS" rules and `unwind`),
//! rule for rule. Lane 0 is bit 0 of every mask. SIMT-Step variant (simt-step.md §4.3): P1 →
//! CM: one path at a time, every warp instruction one collective step, reconvergence at the
//! `ssy` targets placed at the immediate post-dominators.

use super::{Flow, Mask, Outcome, Reason, Reconvergence, SimtError, StepCtx, TokenKind};
use gpusim_isa::Pc;
use std::fmt::Write;
use std::hash::Hash;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Token {
    pub kind: TokenKind,
    pub mask: Mask,
    pub pc: Pc,
    /// Call-frame depth when the token was pushed (not part of the formal state: the
    /// executor's frames follow the stack).
    pub frame_depth: u32,
}

#[derive(Clone, Debug)]
pub struct TokenStack {
    pc: Pc,
    /// α: active lanes.
    active: Mask,
    /// δ, split by reason; a lane is enabled when it is in none of them.
    broken: Mask,
    returned: Mask,
    exited: Mask,
    stack: Vec<Token>,
    lanes: Mask,
}

impl TokenStack {
    /// A warp whose lanes `valid` exist; padding lanes of a partial warp start disabled with
    /// reason exit (Habermaier §5.4).
    pub fn new(valid: Mask, warp_size: u32) -> TokenStack {
        let lanes = if warp_size >= 64 {
            u64::MAX
        } else {
            (1u64 << warp_size) - 1
        };
        TokenStack {
            pc: 0,
            active: valid,
            broken: 0,
            returned: 0,
            exited: lanes & !valid,
            stack: Vec::new(),
            lanes,
        }
    }

    fn disabled(&self) -> Mask {
        self.broken | self.returned | self.exited
    }

    pub fn tokens(&self) -> &[Token] {
        &self.stack
    }

    /// (sync)/(brk_uni)/(ret_uni)/(exit_uni): pop until a token activates some lane.
    fn unwind(&mut self) -> Result<Outcome, SimtError> {
        while let Some(tok) = self.stack.pop() {
            // updExecState: a call/break token re-enables its lanes disabled for return/break.
            let (mut broken, mut returned) = (self.broken, self.returned);
            match tok.kind {
                TokenKind::Call => returned &= !tok.mask,
                TokenKind::Break => broken &= !tok.mask,
                TokenKind::Sync | TokenKind::Diverge => {}
            }
            let active = tok.mask & !(broken | returned | self.exited);
            if active != 0 {
                self.broken = broken;
                self.returned = returned;
                self.active = active;
                self.pc = tok.pc;
                return Ok(Outcome::Active {
                    popped_frame_depth: Some(tok.frame_depth),
                });
            }
            // Lemma 2: a pop that activates nobody has no effect beyond removing the token.
        }
        if self.exited == self.lanes {
            self.active = 0;
            return Ok(Outcome::Completed);
        }
        Err(SimtError(format!(
            "empty token stack while lanes wait for a break or return (break {:#x}, return {:#x}): the program is not control-flow consistent",
            self.broken, self.returned
        )))
    }
}

impl Reconvergence for TokenStack {
    fn pc(&self) -> Pc {
        self.pc
    }
    fn set_pc(&mut self, pc: Pc) {
        self.pc = pc;
    }
    fn active_mask(&self) -> Mask {
        self.active
    }
    fn exited_mask(&self) -> Mask {
        self.exited
    }
    fn stack_depth(&self) -> usize {
        self.stack.len()
    }

    fn step(&mut self, flow: Flow, ctx: &StepCtx) -> Result<Outcome, SimtError> {
        let frame_depth = ctx.frame_depth;
        let cont = Outcome::Active {
            popped_frame_depth: None,
        };
        match flow {
            // (next). `WarpSync`/`BarrierWait` are never produced for this policy (it has no
            // independent threads).
            Flow::Next | Flow::WarpSync(_) | Flow::BarrierWait(_) | Flow::CollectiveWait { .. } => {
                self.pc += 1
            }
            // (ssy)/(preBrk)/(preRet): push (kind, α, target); α includes guard-false lanes.
            Flow::Push(kind, target) => {
                self.stack.push(Token {
                    kind,
                    mask: self.active,
                    pc: target,
                    frame_depth,
                });
                self.pc += 1;
            }
            // (sync): no uniformity check (§7 ambiguity 8).
            Flow::Sync => return self.unwind(),
            // (brk/ret/exit _uni and _div): δ is updated even when uniform (design point 3).
            Flow::Disable(reason, lanes) => {
                let lanes = lanes & self.active;
                match reason {
                    Reason::Break => self.broken |= lanes,
                    Reason::Return => self.returned |= lanes,
                    Reason::Exit => self.exited |= lanes,
                }
                let uniform = self.active & !lanes == 0;
                self.active &= !lanes;
                if uniform {
                    return self.unwind();
                }
                self.pc += 1;
            }
            Flow::Jump {
                target,
                taken,
                is_call,
            } => {
                let taken = taken & self.active;
                if taken == self.active {
                    // (bra_uni)/(call_uni)
                    self.pc = target;
                } else if is_call {
                    // (call_guard): no token; the preRet token brings the others back.
                    self.active = taken;
                    self.pc = target;
                } else if ctx.taken_first {
                    // (bra_guard): the taken path runs first; not-taken lanes wait at pc+1.
                    let not_taken = self.active & !taken;
                    self.stack.push(Token {
                        kind: TokenKind::Diverge,
                        mask: not_taken,
                        pc: self.pc + 1,
                        frame_depth,
                    });
                    self.active = taken;
                    self.pc = target;
                } else {
                    // (bra_guard) mirrored (`sm.divergence_order: not-taken-first`): the
                    // fall-through path runs first; the taken lanes wait at the target.
                    self.stack.push(Token {
                        kind: TokenKind::Diverge,
                        mask: taken,
                        pc: target,
                        frame_depth,
                    });
                    self.active &= !taken;
                    self.pc += 1;
                }
            }
            // (bra_target)/(call_target): run one target now, re-execute the branch for the rest.
            Flow::Multi { groups, .. } => {
                let Some(&(target, lanes)) = groups.first() else {
                    self.pc += 1;
                    return Ok(cont);
                };
                let taken = lanes & self.active;
                let not_taken = self.active & !taken;
                if not_taken != 0 {
                    self.stack.push(Token {
                        kind: TokenKind::Diverge,
                        mask: not_taken,
                        pc: self.pc,
                        frame_depth,
                    });
                }
                self.active = taken;
                self.pc = target;
            }
        }
        Ok(cont)
    }

    fn hash_state(&self, h: &mut dyn std::hash::Hasher) {
        let mut hh = std::collections::hash_map::DefaultHasher::new();
        (
            self.pc,
            self.active,
            self.broken,
            self.returned,
            self.exited,
            &self.stack,
        )
            .hash(&mut hh);
        h.write_u64(std::hash::Hasher::finish(&hh));
    }

    fn paper_state(&self, lanes: u32) -> String {
        let bits = |m: Mask| {
            (0..lanes)
                .map(|l| if m >> l & 1 == 1 { '1' } else { '0' })
                .collect::<String>()
        };
        let kind = |k: TokenKind| match k {
            TokenKind::Sync => "sync",
            TokenKind::Diverge => "diverge",
            TokenKind::Call => "call",
            TokenKind::Break => "break",
        };
        // Written into one string: a deep stack is rendered at every traced step.
        let mut stack = String::with_capacity(self.stack.len() * (lanes as usize + 16));
        for (i, t) in self.stack.iter().rev().enumerate() {
            if i > 0 {
                stack.push_str("::");
            }
            stack.push('(');
            stack.push_str(kind(t.kind));
            stack.push(',');
            stack.extend((0..lanes).map(|l| if t.mask >> l & 1 == 1 { '1' } else { '0' }));
            let _ = write!(stack, ",{})", t.pc);
        }
        if stack.is_empty() {
            stack.push('ε');
        }
        let reason = |l: u32| {
            if self.broken >> l & 1 == 1 {
                'b'
            } else if self.returned >> l & 1 == 1 {
                'r'
            } else if self.exited >> l & 1 == 1 {
                'e'
            } else {
                '0'
            }
        };
        let delta: String = (0..lanes).map(reason).collect();
        format!("α={} δ={} stack={}", bits(self.active), delta, stack)
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "pc {} active {:#x} disabled: break {:#x} return {:#x} exit {:#x}; stack (top first):",
            self.pc, self.active, self.broken, self.returned, self.exited
        );
        if self.stack.is_empty() {
            s.push_str(" empty");
        }
        for t in self.stack.iter().rev() {
            let _ = write!(s, " ({:?}, {:#x}, pc {})", t.kind, t.mask, t.pc);
        }
        let _ = self.disabled();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simt::{ProgramInfo, StepCtx};

    static INFO: ProgramInfo = ProgramInfo { funcs: Vec::new() };

    fn c(frame_depth: u32) -> StepCtx<'static> {
        StepCtx {
            frame_depth,
            func: gpusim_isa::FuncId(0),
            info: &INFO,
            long_latency: false,
            taken_first: true,
        }
    }

    /// T2 (Listing 5.5): lane 0 takes the branch; the trace of the digest, step by step.
    #[test]
    fn if_else_reconverges_as_the_paper_traces() {
        let mut w = TokenStack::new(0b11, 2);
        w.set_pc(1);
        w.step(Flow::Push(TokenKind::Sync, 10), &c(0)).unwrap(); // 2: ssy 10
        assert_eq!(w.pc(), 2);
        w.step(
            Flow::Jump {
                target: 6,
                taken: 0b01,
                is_call: false,
            },
            &c(0),
        )
        .unwrap(); // 3: @p bra
        assert_eq!((w.pc(), w.active_mask(), w.stack_depth()), (6, 0b01, 2));
        w.step(Flow::Next, &c(0)).unwrap(); // 7: mul
        w.set_pc(8);
        w.step(Flow::Sync, &c(0)).unwrap(); // 9: sync pops diverge → pc 3+1
        assert_eq!((w.pc(), w.active_mask(), w.stack_depth()), (3, 0b10, 1));
        w.set_pc(8);
        w.step(Flow::Sync, &c(0)).unwrap(); // sync pops the sync token
        assert_eq!((w.pc(), w.active_mask(), w.stack_depth()), (10, 0b11, 0));
    }

    #[test]
    fn uniform_exit_completes_and_break_with_empty_stack_is_an_error() {
        let mut w = TokenStack::new(0b111, 3);
        assert_eq!(
            w.step(Flow::Disable(Reason::Exit, 0b111), &c(0)).unwrap(),
            Outcome::Completed
        );
        let mut w = TokenStack::new(0b11, 2);
        assert!(w.step(Flow::Disable(Reason::Break, 0b11), &c(0)).is_err());
    }

    /// T11.1: lanes that returned on the taken path are not woken by the sync token.
    #[test]
    fn returned_lanes_stay_disabled_until_the_call_token() {
        let mut w = TokenStack::new(0b11, 2);
        w.step(Flow::Push(TokenKind::Call, 100), &c(0)).unwrap();
        w.step(Flow::Push(TokenKind::Sync, 50), &c(1)).unwrap();
        w.step(
            Flow::Jump {
                target: 20,
                taken: 0b01,
                is_call: false,
            },
            &c(1),
        )
        .unwrap();
        // lane 0 returns uniformly for the active set: diverge pops, lane 1 runs
        let o = w.step(Flow::Disable(Reason::Return, 0b01), &c(1)).unwrap();
        assert_eq!(
            o,
            Outcome::Active {
                popped_frame_depth: Some(1)
            }
        );
        assert_eq!(w.active_mask(), 0b10);
        w.step(Flow::Sync, &c(1)).unwrap(); // sync token: lane 0 masked out by δ
        assert_eq!((w.active_mask(), w.pc()), (0b10, 50));
        w.step(Flow::Disable(Reason::Return, 0b10), &c(1)).unwrap();
        assert_eq!((w.active_mask(), w.pc()), (0b11, 100));
    }
}
