//! Lay the block graph out as a flat body again: input blocks in input order, each new block
//! next to its anchor, an explicit `bra` wherever the fall-through no longer reaches the
//! intended block, every pc operand and label resolved.

use super::graph::*;
use crate::ir::*;
use std::collections::HashMap;

/// One emitted instruction and how to fill in its pc operand.
struct Emitted {
    inst: Inst,
    fix: Fix,
    origin: Option<Pc>,
}

enum Fix {
    None,
    Item(Target),
    Bra(BlockId),
    Brx(Vec<BlockId>),
}

/// The rewritten function: `f` with the new body, labels and registers, `has_tokens` set.
pub(crate) fn emit(g: &Graph, f: &Function, regs: Vec<RegInfo>) -> Function {
    let order: Vec<BlockId> = block_order(g)
        .into_iter()
        .filter(|&b| !forwarded(g, b))
        .collect();
    let mut out: Vec<Emitted> = Vec::new();
    let mut start = vec![0 as Pc; g.blocks.len()];
    for (i, &b) in order.iter().enumerate() {
        start[b] = out.len() as Pc;
        let next = order.get(i + 1).copied();
        emit_block(g, f.kind, b, next, &mut out);
    }
    let end = out.len() as Pc;
    let body: Vec<Inst> = out
        .iter()
        .enumerate()
        .map(|(pc, e)| resolve(g, &start, pc as Pc, e))
        .collect();
    let mut func = Function {
        regs,
        body,
        has_tokens: true,
        ..f.clone()
    };
    func.labels = labels(g, f, &order, &start, &out, end);
    add_target_labels(&mut func);
    func
}

/// An empty preheader (a loop without exits needs no `preBrk`) is not emitted: edges to it go
/// to the header.
fn forwarded(g: &Graph, b: BlockId) -> bool {
    matches!(g.blocks[b].kind, Kind::Preheader(_)) && g.blocks[b].items.is_empty()
}

fn dest(g: &Graph, mut b: BlockId) -> BlockId {
    while forwarded(g, b) {
        let Term::Goto { target, .. } = g.blocks[b].term else {
            unreachable!("preheaders end in a goto")
        };
        b = target;
    }
    b
}

/// Input blocks in input order; blocks anchored before or after a block surround it, sorted by
/// key (then creation order).
fn block_order(g: &Graph) -> Vec<BlockId> {
    let mut before: Anchored = HashMap::new();
    let mut after: Anchored = HashMap::new();
    for (b, blk) in g.blocks.iter().enumerate() {
        match blk.anchor {
            Anchor::Root => {}
            Anchor::Before(a, key) => before.entry(a).or_default().push((key, b)),
            Anchor::After(a, key) => after.entry(a).or_default().push((key, b)),
        }
    }
    for list in before.values_mut().chain(after.values_mut()) {
        list.sort();
    }
    let mut order = Vec::new();
    for (b, blk) in g.blocks.iter().enumerate() {
        if blk.anchor == Anchor::Root {
            place(b, &before, &after, &mut order);
        }
    }
    order
}

/// Blocks anchored to each block, with their keys.
type Anchored = HashMap<BlockId, Vec<((u32, u32, u32), BlockId)>>;

/// `root`, the blocks anchored before it (each placed the same way) ahead of it, those anchored
/// after it behind it. An explicit stack: anchor chains can be as long as the function.
fn place(root: BlockId, before: &Anchored, after: &Anchored, order: &mut Vec<BlockId>) {
    enum Step {
        Enter(BlockId),
        Emit(BlockId),
    }
    let mut stack = vec![Step::Enter(root)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Emit(b) => order.push(b),
            Step::Enter(b) => {
                let anchored = |m: &Anchored| -> Vec<BlockId> {
                    m.get(&b)
                        .into_iter()
                        .flatten()
                        .rev()
                        .map(|&(_, x)| x)
                        .collect()
                };
                stack.extend(anchored(after).into_iter().map(Step::Enter));
                stack.push(Step::Emit(b));
                stack.extend(anchored(before).into_iter().map(Step::Enter));
            }
        }
    }
}

fn emit_block(
    g: &Graph,
    kind: FuncKind,
    b: BlockId,
    next: Option<BlockId>,
    out: &mut Vec<Emitted>,
) {
    let blk = &g.blocks[b];
    for item in &blk.items {
        let fix = item.target.map_or(Fix::None, Fix::Item);
        out.push(Emitted {
            inst: item.inst.clone(),
            fix,
            origin: item.origin,
        });
    }
    let falls_to = |t: BlockId| next == Some(dest(g, t));
    let bra = |t: BlockId, span, uni, origin| Emitted {
        inst: Inst {
            guard: None,
            op: Op::Bra { target: 0, uni },
            span,
        },
        fix: Fix::Bra(dest(g, t)),
        origin,
    };
    match &blk.term {
        Term::Goto { target, bra: jump } => {
            if jump.is_some() || !falls_to(*target) {
                let (span, uni, origin) =
                    jump.map_or((blk.span, false, None), |j| (j.span, j.uni, j.origin));
                out.push(bra(*target, span, uni, origin));
            }
        }
        Term::Branch {
            guard,
            taken,
            fall,
            jump,
        } => {
            let mut e = bra(*taken, jump.span, jump.uni, jump.origin);
            e.inst.guard = Some(*guard);
            out.push(e);
            if !falls_to(*fall) {
                out.push(bra(*fall, jump.span, false, None));
            }
        }
        Term::Switch {
            guard,
            index,
            targets,
            fall,
            jump,
        } => {
            let op = Op::BrxIdx {
                index: *index,
                targets: vec![],
                uni: jump.uni,
            };
            let fix = Fix::Brx(targets.iter().map(|&t| dest(g, t)).collect());
            out.push(Emitted {
                inst: Inst {
                    guard: *guard,
                    op,
                    span: jump.span,
                },
                fix,
                origin: jump.origin,
            });
            if let Some(fall) = fall.filter(|&t| !falls_to(t)) {
                out.push(bra(fall, jump.span, false, None));
            }
        }
        Term::Stop(item) => out.push(Emitted {
            inst: item.inst.clone(),
            fix: Fix::None,
            origin: item.origin,
        }),
        Term::FallOff => {
            // Every path ends in ret or exit (Habermaier §5.1, transformation step 5).
            let op = if kind == FuncKind::Entry {
                Op::Exit
            } else {
                Op::Ret { uni: false }
            };
            out.push(Emitted {
                inst: Inst {
                    guard: None,
                    op,
                    span: blk.span,
                },
                fix: Fix::None,
                origin: None,
            });
        }
    }
}

fn resolve(g: &Graph, start: &[Pc], pc: Pc, e: &Emitted) -> Inst {
    let mut inst = e.inst.clone();
    let at = |t: Target| match t {
        Target::Block(b) => start[dest(g, b)],
        Target::AfterSync(pad) => start[pad] + 1,
        Target::AfterCall => pc + 2,
    };
    match (&mut inst.op, &e.fix) {
        (Op::Bra { target, .. }, Fix::Bra(b)) => *target = start[*b],
        (Op::BrxIdx { targets, .. }, Fix::Brx(bs)) => {
            *targets = bs.iter().map(|&b| start[b]).collect()
        }
        (Op::Ssy { target } | Op::PreBrk { target } | Op::PreRet { target }, Fix::Item(t)) => {
            *target = at(*t)
        }
        _ => {}
    }
    inst
}

/// Input labels stay on their blocks (or instructions); new blocks get `$__<kind>_<n>`.
fn labels(
    g: &Graph,
    f: &Function,
    order: &[BlockId],
    start: &[Pc],
    out: &[Emitted],
    end: Pc,
) -> Vec<(String, Pc)> {
    let block_at: HashMap<Pc, Pc> = order
        .iter()
        .filter_map(|&b| g.blocks[b].start.map(|pc| (pc, start[b])))
        .collect();
    let by_origin: HashMap<Pc, Pc> = out
        .iter()
        .enumerate()
        .filter_map(|(pc, e)| e.origin.map(|o| (o, pc as Pc)))
        .collect();
    let old_len = f.body.len() as Pc;
    let mut labels: Vec<(String, Pc)> = f
        .labels
        .iter()
        .map(|(name, pc)| {
            let new = if *pc >= old_len {
                end
            } else {
                block_at
                    .get(pc)
                    .or_else(|| by_origin.get(pc))
                    .copied()
                    .unwrap_or(end)
            };
            (name.clone(), new)
        })
        .collect();
    let mut counters: HashMap<&str, u32> = HashMap::new();
    for &b in order {
        let Some(prefix) = new_block_prefix(g.blocks[b].kind) else {
            continue;
        };
        let n = counters.entry(prefix).or_insert(0);
        labels.push((format!("$__{prefix}_{n}"), start[b]));
        *n += 1;
    }
    labels.sort_by_key(|(_, pc)| *pc);
    labels
}

fn new_block_prefix(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Original | Kind::End => None,
        Kind::Preheader(_) => Some("preheader"),
        Kind::Latch(_) => Some("latch"),
        Kind::Dispatch(_) => Some("brk_dispatch"),
        Kind::BrkStub => Some("brk_stub"),
        Kind::SyncPad => Some("sync_pad"),
        Kind::Trampoline => Some("ssy_push"),
    }
}

/// Every pc operand gets a label, so the printed function parses again: `$__reconverge_<n>`
/// for an `ssy` target, `$__break_<n>` for a `preBrk` target, `$__call_return_<n>` after a
/// call, `$__L<n>` otherwise.
fn add_target_labels(f: &mut Function) {
    let mut extra: Vec<(String, Pc)> = Vec::new();
    let mut counters: HashMap<&str, u32> = HashMap::new();
    for inst in &f.body {
        let prefix = match inst.op {
            Op::Ssy { .. } => "$__reconverge_",
            Op::PreBrk { .. } => "$__break_",
            Op::PreRet { .. } => "$__call_return_",
            _ => "$__L",
        };
        for t in super::cfg::target_pcs(inst) {
            if f.label_at(t).is_none() && !extra.iter().any(|(_, p)| *p == t) {
                let n = counters.entry(prefix).or_insert(0);
                extra.push((format!("{prefix}{n}"), t));
                *n += 1;
            }
        }
    }
    f.labels.extend(extra);
    f.labels.sort_by_key(|(_, pc)| *pc);
}
