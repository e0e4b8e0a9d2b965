//! Checks on a body that carries tokens: program-address consistency (every pc operand lies in
//! the body) and an abstract walk of the token stack for stack consistency (Habermaier §6.2,
//! control-flow consistency: `brk` needs a break token, `sync` a sync token for the next pc on
//! top, `call` a call token for the next pc on top; `sync` is never guarded).
//!
//! The walk follows every path with the stack of token kinds and pcs. Diverge tokens are not
//! tracked: both sides of a branch are walked with the same stack, which is what a `sync` finds
//! below a diverge token. A `preBrk X` also resumes at X with the stack below its token.
//!
//! Its bounds are structural, never a fixed size. The walk only looks at the top of the stack
//! (`sync`, `call`) or ends the path (`brk`, whose test only gets easier on a deeper stack),
//! so a path on which one push instruction pushes again while its first token is still on the
//! stack can be repeated for ever: the stack grows without bound. Without such a path no
//! stack holds two tokens of the same push instruction, so it is never deeper than the
//! function has push instructions (`ssy`, `preBrk`, `preRet`): a deeper stack proves the
//! unbounded path. The number of states is finite then, and for the tokens `insert_tokens`
//! emits (one stack per instruction) it is at most the body's length; hand-written tokens
//! whose stacks differ along too many paths are refused as such, never as a growing stack.

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

/// Distinct (pc, stack) states the walk may visit per instruction of the body, beyond a
/// fixed allowance for small functions.
const STATES_PER_INST: usize = 16;
const STATES_BASE: usize = 100_000;

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
    let max_depth = f
        .body
        .iter()
        .filter(|i| matches!(i.op, Op::Ssy { .. } | Op::PreBrk { .. } | Op::PreRet { .. }))
        .count();
    let max_states = STATES_BASE.saturating_add(f.body.len().saturating_mul(STATES_PER_INST));
    let mut seen: HashSet<State> = HashSet::new();
    let mut work: Vec<State> = vec![(0, Vec::new())];
    while let Some(state) = work.pop() {
        if state.0 as usize >= f.body.len() || !seen.insert(state.clone()) {
            continue;
        }
        let span = f.body[state.0 as usize].span;
        if seen.len() > max_states {
            let msg = format!(
                "the token stacks differ along too many paths to validate: more than {max_states} distinct (pc, stack) states ({STATES_PER_INST} per instruction)"
            );
            return Err(AnalysisError::new(&f.name, span, msg));
        }
        let next = step(f, &state)?;
        if let Some(deep) = next.iter().find(|s| s.1.len() > max_depth) {
            let msg = format!(
                "the token stack grows without bound along some path: this push makes it {} tokens deep, more than the function's {max_depth} token pushes, so a push repeats while its earlier token is still on the stack",
                deep.1.len()
            );
            return Err(AnalysisError::new(&f.name, span, msg));
        }
        work.extend(next);
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
