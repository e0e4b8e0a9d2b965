//! The warp's execution state ς = (pc, α, δ, stack) of Habermaier 2011 §5.4 (digest §3.5):
//! tokens, the disable reasons, `unwind`/`updExecState`, the trace notation, and the paper's
//! two families of runtime checks — the stack-consistency conditions of §6.2 (digest §4.2),
//! checked before the instruction they constrain, and the safety invariant `inv` with
//! `act-cons`/`inact-cons` of §6.4 (digest §4.4), checked after every warp step.

use gpusim_isa::ir::{FuncId, Op, Pc};
use std::fmt;

/// `TokenType` of the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Sync,
    Diverge,
    Call,
    Break,
}

/// `ExecToken τ = (type, α, pc)`. Program addresses of the paper are global; here one is the
/// pair (function, instruction index), and only the index is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub mask: u64,
    pub func: FuncId,
    pub pc: Pc,
}

/// `DisableMask δ` per lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disable {
    Enabled,
    Break,
    Return,
    Exit,
}

/// A program address: function and instruction index.
pub type Addr = (FuncId, Pc);

/// `ExecState ς`; `stack` is bottom first (the paper's head is the last element).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecState {
    pub func: FuncId,
    pub pc: Pc,
    pub alpha: u64,
    pub delta: Vec<Disable>,
    pub stack: Vec<Token>,
}

fn bits(mask: u64, n: usize) -> String {
    let mut b = [0u8; 64];
    String::from_utf8_lossy(bit_bytes(mask, n, &mut b)).into_owned()
}

/// The lanes of `mask` as '0'/'1' bytes, lane 0 first, in `buf` (no allocation).
fn bit_bytes(mask: u64, n: usize, buf: &mut [u8; 64]) -> &[u8] {
    let n = n.min(64);
    for (l, b) in buf[..n].iter_mut().enumerate() {
        *b = if mask >> l & 1 == 1 { b'1' } else { b'0' };
    }
    &buf[..n]
}

impl fmt::Display for ExecState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.delta.len();
        let delta: String = self
            .delta
            .iter()
            .map(|d| match d {
                Disable::Enabled => '0',
                Disable::Break => 'b',
                Disable::Return => 'r',
                Disable::Exit => 'e',
            })
            .collect();
        write!(f, "α={} δ={delta} stack=", bits(self.alpha, n))?;
        if self.stack.is_empty() {
            return write!(f, "ε");
        }
        // Written entry by entry: a deep stack is rendered at every traced step.
        for (i, t) in self.stack.iter().rev().enumerate() {
            let kind = match t.kind {
                TokenKind::Sync => "sync",
                TokenKind::Diverge => "diverge",
                TokenKind::Call => "call",
                TokenKind::Break => "break",
            };
            if i > 0 {
                f.write_str("::")?;
            }
            let mut buf = [0u8; 64];
            let m = std::str::from_utf8(bit_bytes(t.mask, n, &mut buf)).unwrap_or_default();
            write!(f, "({kind},{m},{})", t.pc)?;
        }
        Ok(())
    }
}

/// Outcome of `unwind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unwound {
    Active,
    Completed,
}

impl ExecState {
    /// Lanes whose δ is `enabled`, as a mask.
    fn enabled(&self, delta: &[Disable]) -> u64 {
        delta
            .iter()
            .enumerate()
            .filter(|(_, d)| **d == Disable::Enabled)
            .fold(0, |m, (l, _)| m | 1 << l)
    }

    pub fn all_exited(&self) -> bool {
        self.delta.iter().all(|d| *d == Disable::Exit)
    }

    /// `unwind`: pop tokens until one activates a lane (`updExecState`); a popped token that
    /// activates nobody is dropped together with its δ change (the recursion is on the
    /// original ς, Lemma 2). On an empty stack the warp completes if every lane exited, and
    /// is stuck (⊥, the `Err`) if some lane still waits on a break or return.
    pub fn unwind(&mut self) -> Result<Unwound, String> {
        while let Some(tok) = self.stack.pop() {
            let mut delta = self.delta.clone();
            // updExecState: call and break tokens first re-enable their reason (`enable`).
            let reason = match tok.kind {
                TokenKind::Call => Some(Disable::Return),
                TokenKind::Break => Some(Disable::Break),
                TokenKind::Sync | TokenKind::Diverge => None,
            };
            if let Some(r) = reason {
                for (l, d) in delta.iter_mut().enumerate() {
                    if tok.mask >> l & 1 == 1 && *d == r {
                        *d = Disable::Enabled;
                    }
                }
            }
            let alpha = tok.mask & self.enabled(&delta);
            if alpha != 0 {
                self.func = tok.func;
                self.pc = tok.pc;
                self.alpha = alpha;
                self.delta = delta;
                return Ok(Unwound::Active);
            }
        }
        if self.all_exited() {
            self.alpha = 0;
            Ok(Unwound::Completed)
        } else {
            Err("unwind emptied the stack while a lane still waits on a break or return".into())
        }
    }

    /// `actToken(α, δ, stack, wl)`: index (bottom first) of the topmost token that will
    /// reactivate the inactive, non-exited lane `wl`.
    pub fn act_token(&self, wl: usize) -> Option<usize> {
        if self.alpha >> wl & 1 == 1 || self.delta[wl] == Disable::Exit {
            return None;
        }
        self.stack.iter().rposition(|t| {
            t.mask >> wl & 1 == 1
                && (self.delta[wl] != Disable::Break || t.kind == TokenKind::Break)
                && (self.delta[wl] != Disable::Return || t.kind == TokenKind::Call)
        })
    }

    /// Stack consistency (§6.2, conditions 1–6) for the instruction `op` about to run at the
    /// warp's pc. `ret_is_exit`: a `ret` of the entry, which the paper's step 5 makes `exit`.
    pub fn check_stack_consistency(&self, op: &Op, ret_is_exit: bool) -> Result<(), String> {
        let has = |k: TokenKind| self.stack.iter().any(|t| t.kind == k);
        let next = self.pc + 1;
        match op {
            Op::Brk if !has(TokenKind::Break) => Err("(1) `brk` without a break token".into()),
            Op::Ret { .. } if !ret_is_exit && !has(TokenKind::Call) => {
                Err("(2) `ret` without a call token".into())
            }
            Op::Sync => {
                let n = self.stack.len();
                match self.stack.last() {
                    Some(top) if top.kind == TokenKind::Diverge => {
                        match n.checked_sub(2).map(|i| self.stack[i]) {
                            Some(second)
                                if second.kind == TokenKind::Sync
                                    && (second.func, second.pc) == (self.func, next)
                                    && (top.mask | self.alpha) & !second.mask == 0 =>
                            {
                                Ok(())
                            }
                            _ => Err(
                                "(4) `sync` over a diverge token needs below it a sync token \
                                  for pc+1 covering the diverge mask and α"
                                    .into(),
                            ),
                        }
                    }
                    Some(top) if top.kind == TokenKind::Sync => {
                        if (top.func, top.pc) == (self.func, next) {
                            Ok(())
                        } else {
                            Err("(5) `sync` whose sync token does not name pc+1".into())
                        }
                    }
                    _ => Err("(3) `sync` without a sync or diverge token on top".into()),
                }
            }
            Op::Call { .. }
                if !self
                    .stack
                    .iter()
                    .any(|t| t.kind == TokenKind::Call && (t.func, t.pc) == (self.func, next)) =>
            {
                Err("(6) `call` without a call token for pc+1".into())
            }
            _ => Ok(()),
        }
    }

    /// The safety property after a step: `inv` (1–6), `act-cons` and `inact-cons` for every
    /// lane, against the per-lane reference pcs of the single-warp semantics (§6.3).
    pub fn check_safety(&self, refs: &[Option<Addr>]) -> Result<(), String> {
        let n = self.delta.len();
        let here = (self.func, self.pc);
        // inv(2)
        if self.alpha == 0 && !self.all_exited() {
            return Err("inv(2): no lane active, yet not every lane exited".into());
        }
        // inv(6)
        if self.stack.iter().any(|t| t.mask == 0) {
            return Err("inv(6): a token with an all-inactive mask".into());
        }
        for (wl, &lane_ref) in refs.iter().enumerate().take(n) {
            let active = self.alpha >> wl & 1 == 1;
            if active {
                // inv(5), first half
                if self.delta[wl] != Disable::Enabled {
                    return Err(format!("inv(5): lane {wl} is active but disabled"));
                }
                // inv(3)
                if self
                    .stack
                    .iter()
                    .any(|t| t.kind != TokenKind::Diverge && t.mask >> wl & 1 == 0)
                {
                    return Err(format!(
                        "inv(3): active lane {wl} is missing from a non-diverge token"
                    ));
                }
                // act-cons
                if lane_ref != Some(here) {
                    return Err(format!(
                        "act-cons: active lane {wl} should be at {:?}, the warp is at pc {}",
                        lane_ref.map(|a| a.1),
                        self.pc
                    ));
                }
            } else if self.delta[wl] != Disable::Exit {
                // inv(1)
                let Some(i) = self.act_token(wl) else {
                    return Err(format!(
                        "inv(1): inactive lane {wl} has no activation token"
                    ));
                };
                // inv(4)
                if self.stack[..i]
                    .iter()
                    .any(|t| t.kind != TokenKind::Diverge && t.mask >> wl & 1 == 0)
                {
                    return Err(format!(
                        "inv(4): below lane {wl}'s activation token a non-diverge token lacks it"
                    ));
                }
                // inact-cons
                let t = self.stack[i];
                if lane_ref != Some((t.func, t.pc)) {
                    return Err(format!(
                        "inact-cons: lane {wl} waits for pc {:?}, its activation token resumes \
                         at pc {}",
                        lane_ref.map(|a| a.1),
                        t.pc
                    ));
                }
            } else if lane_ref.is_some() {
                // Safety: nothing after `exit`.
                return Err(format!("lane {wl} exited but still has a next instruction"));
            }
        }
        Ok(())
    }
}
