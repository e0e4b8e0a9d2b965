//! `insert_tokens`: rewrite a function without tokens so that it carries the formal model's
//! `ssy`/`sync`, `preBrk`/`brk` and `preRet` (Habermaier 2011, §5.4), as ptxas would for an
//! SSY/SYNC machine.
//!
//! Stages: calls get `preRet` and an entry's `ret` becomes `exit`; loops get a preheader and a
//! single latch and their exits become `brk` (`structure`); each level gets `ssy` and sync pads
//! (`reconverge`); the blocks are laid out again (`layout`) and the result is validated
//! (`validate`). The output is deterministic.

use super::flow::ControlFlow;
use super::graph::{Graph, Item, Target, Term};
use super::validate::validate_tokens;
use super::{layout, reconverge, structure, AnalysisError};
use crate::ir::*;

/// The function with reconvergence tokens inserted. A function that already has tokens
/// (`has_tokens`, or any token instruction in its body) is validated and returned unchanged.
/// Fails on out-of-body targets, on irreducible control flow (naming the line of the branch
/// that closes the cycle), on token code that is not stack-consistent, and on a branch whose
/// token cannot be placed consistently (see `reconverge`).
pub fn insert_tokens(f: &Function) -> Result<Function, AnalysisError> {
    if f.has_tokens || f.body.iter().any(|i| is_token(&i.op)) {
        validate_tokens(f)?;
        return Ok(f.clone());
    }
    if f.body.is_empty() {
        return Ok(Function {
            has_tokens: true,
            ..f.clone()
        });
    }
    let flow = ControlFlow::analyze(f)?;
    let mut g = Graph::from_function(f, &flow);
    lower_calls_and_returns(&mut g, f.kind);
    let mut regs = f.regs.clone();
    let mut loops = structure::normalize(&mut g, &flow.loops, flow.cfg.blocks.len());
    structure::lower_exits(&mut g, &flow.loops, &mut loops, &mut regs);
    reconverge::insert(&mut g, &loops, &f.name)?;
    let out = layout::emit(&g, f, regs);
    validate_tokens(&out)?;
    Ok(out)
}

fn is_token(op: &Op) -> bool {
    matches!(
        op,
        Op::Ssy { .. } | Op::Sync | Op::PreBrk { .. } | Op::Brk | Op::PreRet { .. }
    )
}

/// `preRet L` before every call, with the call's guard and L the instruction after the call
/// (Habermaier §5.4, design point 2); in an entry, `ret` is `exit` (§5.1, transformation
/// step 5).
fn lower_calls_and_returns(g: &mut Graph, kind: FuncKind) {
    for blk in &mut g.blocks {
        let mut items = Vec::with_capacity(blk.items.len());
        for mut item in std::mem::take(&mut blk.items) {
            if matches!(item.inst.op, Op::Call { .. }) {
                let span = item.inst.span;
                let mut pre = Item::token(Op::PreRet { target: 0 }, Target::AfterCall, span);
                pre.inst.guard = item.inst.guard;
                items.push(pre);
            }
            exit_for_ret(&mut item, kind);
            items.push(item);
        }
        blk.items = items;
        if let Term::Stop(item) = &mut blk.term {
            exit_for_ret(item, kind);
        }
    }
}

fn exit_for_ret(item: &mut Item, kind: FuncKind) {
    if kind == FuncKind::Entry && matches!(item.inst.op, Op::Ret { .. }) {
        item.inst.op = Op::Exit;
    }
}
