//! Checks on a body that carries tokens: program-address consistency (every pc operand lies in
//! the body) and an abstract walk of the token stack for stack consistency (Habermaier §6.2,
//! control-flow consistency: `brk` needs a break token, `sync` a sync token for the next pc on
//! top, `call` a call token for the next pc on top; `sync` is never guarded).
//!
//! The walk follows every path with the stack of token kinds and pcs. Diverge tokens are not
//! tracked: both sides of a branch are walked with the same stack, which is what a `sync` finds
//! below a diverge token. A `preBrk X` also resumes at X with the stack below its token.

use super::cfg::target_pcs;
use super::AnalysisError;
use crate::ir::*;
use std::collections::HashSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Tok {
    Sync(Pc),
    Break(Pc),
    Call(Pc),
}

type State = (Pc, Vec<Tok>);

const MAX_STATES: usize = 200_000;
const MAX_DEPTH: usize = 256;

/// Validate a token-carrying function.
pub fn validate_tokens(f: &Function) -> Result<(), AnalysisError> {
    let n = f.body.len() as Pc;
    for inst in &f.body {
        if let Some(t) = target_pcs(inst).into_iter().find(|&t| t >= n) {
            let msg = format!("target pc {t} lies outside the function body ({n} instructions)");
            return Err(AnalysisError::new(&f.name, inst.span, msg));
        }
        if inst.op == Op::Sync && inst.guard.is_some() {
            return Err(AnalysisError::new(
                &f.name,
                inst.span,
                "`sync` must not be guarded",
            ));
        }
    }
    walk(f)
}

fn walk(f: &Function) -> Result<(), AnalysisError> {
    if f.body.is_empty() {
        return Ok(());
    }
    let mut seen: HashSet<State> = HashSet::new();
    let mut work: Vec<State> = vec![(0, Vec::new())];
    while let Some(state) = work.pop() {
        if state.0 as usize >= f.body.len() || !seen.insert(state.clone()) {
            continue;
        }
        let span = f.body[state.0 as usize].span;
        if seen.len() > MAX_STATES || state.1.len() > MAX_DEPTH {
            let msg = "the token stack grows without bound along some path";
            return Err(AnalysisError::new(&f.name, span, msg));
        }
        work.extend(step(f, &state)?);
    }
    Ok(())
}

/// The states after the instruction at `pc`, or the consistency condition it breaks.
fn step(f: &Function, (pc, stack): &State) -> Result<Vec<State>, AnalysisError> {
    let (pc, stack) = (*pc, stack.clone());
    let inst = &f.body[pc as usize];
    let err = |msg: String| {
        Err(AnalysisError::new(
            &f.name,
            inst.span,
            format!("pc {pc}: {msg}"),
        ))
    };
    let pushed = |t: Tok| {
        let mut s = stack.clone();
        s.push(t);
        s
    };
    let mut popped = stack.clone();
    popped.pop();
    let mut out: Vec<State> = Vec::new();
    let skip = inst.guard.is_some();
    match &inst.op {
        Op::Ssy { target } => out.push((pc + 1, pushed(Tok::Sync(*target)))),
        Op::PreRet { target } => out.push((pc + 1, pushed(Tok::Call(*target)))),
        Op::PreBrk { target } => {
            out.push((pc + 1, pushed(Tok::Break(*target))));
            out.push((*target, stack.clone()));
        }
        Op::Sync => match stack.last() {
            Some(Tok::Sync(t)) if *t == pc + 1 => out.push((pc + 1, popped)),
            Some(Tok::Sync(t)) => {
                return err(format!(
                    "`sync` pops a sync token for pc {t}, not for pc {}",
                    pc + 1
                ))
            }
            other => {
                return err(format!(
                    "`sync` needs a sync token on top of the stack, found {other:?}"
                ))
            }
        },
        // The preRet before a call carries the call's guard, so a call token for pc + 1 on top
        // means some lane calls (Habermaier §5.4, design point 2).
        Op::Call { .. } => match stack.last() {
            Some(Tok::Call(t)) if *t == pc + 1 => return Ok(vec![(pc + 1, popped)]),
            _ if skip => {}
            _ => {
                return err(format!(
                    "`call` needs a call token for pc {} on top of the stack",
                    pc + 1
                ))
            }
        },
        Op::Brk if !stack.iter().any(|t| matches!(t, Tok::Break(_))) => {
            return err("`brk` with no break token on the stack".into())
        }
        Op::Bra { target, .. } => out.push((*target, stack.clone())),
        Op::BrxIdx { targets, .. } => out.extend(targets.iter().map(|&t| (t, stack.clone()))),
        Op::Ret { .. } | Op::Exit | Op::Trap | Op::Brk => {}
        _ => return Ok(vec![(pc + 1, stack)]),
    }
    if skip {
        // A guard false in every lane: no action, the warp goes on (rule `next`).
        out.push((pc + 1, stack));
    }
    Ok(out)
}
