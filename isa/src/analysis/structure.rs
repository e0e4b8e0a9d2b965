//! Loop normalisation for token insertion: a preheader per loop (where its `preBrk` goes), one
//! unconditional latch per loop, and every loop exit turned into `brk` towards one break target.
//!
//! After this pass a loop is left only through `brk` (or `ret`/`exit`), so the parent level can
//! treat it as one node whose successor is its break target (Habermaier §5.4: the break token
//! re-enables the break-disabled lanes at the `preBrk` label once all lanes have left).

use super::graph::*;
use super::loops::LoopForest;
use crate::ir::*;
use crate::span::Span;

/// What token insertion needs to know about one loop after normalisation.
#[derive(Clone, Debug)]
pub(crate) struct LoopInfo {
    pub header: BlockId,
    pub parent: Option<usize>,
    pub depth: u32,
    /// The only block that jumps back to the header, unconditionally.
    pub latch: BlockId,
    /// Last input block of the body in layout order: latches, stubs and dispatch blocks follow it.
    pub last: BlockId,
    /// Where the break token resumes the lanes (`None`: the loop has no exit).
    pub break_target: Option<BlockId>,
}

/// Layout keys after a loop's last block: inner loops first, then latch, stubs, dispatch.
fn after_loop_key(depth: u32, rank: u32) -> (u32, u32, u32) {
    (1, u32::MAX - depth, rank)
}

/// Assign levels, then give every loop a preheader and a single unconditional latch.
pub(crate) fn normalize(g: &mut Graph, forest: &LoopForest, n_cfg: usize) -> Vec<LoopInfo> {
    for b in 0..n_cfg {
        if g.blocks[b].reachable {
            g.blocks[b].level = forest.innermost(b);
        }
    }
    let mut infos = Vec::new();
    for (id, l) in forest.loops.iter().enumerate() {
        let last = *l.body.last().unwrap();
        add_preheader(g, forest, id);
        let latch = single_latch(g, forest, id, last);
        infos.push(LoopInfo {
            header: l.header,
            parent: l.parent,
            depth: l.depth,
            latch,
            last,
            break_target: None,
        });
    }
    infos
}

fn within(g: &Graph, forest: &LoopForest, b: BlockId, id: usize) -> bool {
    g.blocks[b].level.is_some_and(|l| forest.encloses(id, l))
}

/// Reachable blocks of loop `id`'s body, nested loops and blocks added so far included.
fn body(g: &Graph, forest: &LoopForest, id: usize) -> Vec<BlockId> {
    (0..g.blocks.len())
        .filter(|&b| g.blocks[b].reachable && within(g, forest, b, id))
        .collect()
}

/// Entry edges of the loop go to a new preheader that falls into the header, so `preBrk`
/// runs once per entry of the loop, not once per iteration.
fn add_preheader(g: &mut Graph, forest: &LoopForest, id: usize) {
    let l = &forest.loops[id];
    let header = l.header;
    let term = Term::Goto {
        target: header,
        bra: None,
    };
    let blk = Block::new(
        Kind::Preheader(id),
        l.parent,
        term,
        g.blocks[header].span,
        Anchor::Before(header, (1, 0, 0)),
    );
    let p = g.add(blk);
    for u in 0..p {
        if g.blocks[u].reachable && !within(g, forest, u, id) {
            g.blocks[u].term.retarget(header, p);
        }
    }
    if g.entry == header {
        g.entry = p;
    }
}

/// All back edges go to one block ending in an unconditional `bra header`, so that every
/// lane that continues the loop can reconverge before the back edge.
fn single_latch(g: &mut Graph, forest: &LoopForest, id: usize, last: BlockId) -> BlockId {
    let header = forest.loops[id].header;
    let sources: Vec<BlockId> = body(g, forest, id)
        .into_iter()
        .filter(|&u| g.blocks[u].term.targets().contains(&header))
        .collect();
    if let [u] = sources[..] {
        if g.blocks[u].level == Some(id) && matches!(g.blocks[u].term, Term::Goto { .. }) {
            return u;
        }
    }
    let span = g.blocks[sources[0]].term_span();
    let term = Term::Goto {
        target: header,
        bra: None,
    };
    let anchor = Anchor::After(last, after_loop_key(forest.loops[id].depth, 0));
    let t = g.add(Block::new(Kind::Latch(id), Some(id), term, span, anchor));
    for u in sources {
        g.blocks[u].term.retarget(header, t);
    }
    t
}

/// The exits of one loop, being lowered.
struct Exits<'a> {
    forest: &'a LoopForest,
    id: usize,
    /// Distinct exit blocks, in order of first appearance.
    targets: Vec<BlockId>,
    /// Hidden per-thread register naming the exit taken, when there are several.
    sel: Option<RegId>,
    last: BlockId,
    depth: u32,
}

/// Innermost loops first: every exit edge becomes `brk`, and the loop gets its break target.
pub(crate) fn lower_exits(
    g: &mut Graph,
    forest: &LoopForest,
    loops: &mut [LoopInfo],
    regs: &mut Vec<RegInfo>,
) {
    for id in forest.postorder() {
        let body = body(g, forest, id);
        let mut sources = Vec::new();
        let mut targets = Vec::new();
        for &u in &body {
            for w in g.blocks[u].term.succs() {
                if !within(g, forest, w, id) {
                    if !sources.contains(&u) {
                        sources.push(u);
                    }
                    if !targets.contains(&w) {
                        targets.push(w);
                    }
                }
            }
        }
        if targets.is_empty() {
            continue;
        }
        let sel = (targets.len() > 1).then(|| {
            regs.push(RegInfo {
                name: format!("%__brk_sel{id}"),
                ty: Type::U32,
            });
            RegId(regs.len() as u32 - 1)
        });
        let info = &loops[id];
        let ex = Exits {
            forest,
            id,
            targets,
            sel,
            last: info.last,
            depth: info.depth,
        };
        let x = break_target(g, &ex, info.parent, g.blocks[sources[0]].term_span());
        for u in sources {
            lower_block(g, &ex, u);
        }
        loops[id].break_target = Some(x);
    }
}

/// The one exit block if it is at the parent level; otherwise a dispatch block at the parent
/// level that branches on the selector (or jumps to the one exit further out).
fn break_target(g: &mut Graph, ex: &Exits, parent: Option<usize>, span: Span) -> BlockId {
    if let [y] = ex.targets[..] {
        if g.blocks[y].level == parent {
            return y;
        }
    }
    let term = match ex.sel {
        Some(sel) => Term::Switch {
            guard: None,
            index: Operand::Reg(sel),
            targets: ex.targets.clone(),
            fall: None,
            jump: Jump {
                span,
                uni: false,
                origin: None,
            },
        },
        None => Term::Goto {
            target: ex.targets[0],
            bra: None,
        },
    };
    let anchor = Anchor::After(ex.last, after_loop_key(ex.depth, 2));
    g.add(Block::new(
        Kind::Dispatch(ex.id),
        parent,
        term,
        span,
        anchor,
    ))
}

/// `[@g] mov.u32 %sel, i` for exit `w`, when the loop has several exit blocks.
fn select(ex: &Exits, guard: Option<Guard>, w: BlockId, span: Span) -> Option<Item> {
    let i = ex.targets.iter().position(|&t| t == w).unwrap() as u64;
    ex.sel.map(|sel| {
        Item::synth(
            guard,
            Op::Mov {
                ty: Type::U32,
                d: sel,
                a: Operand::Imm(i),
            },
            span,
        )
    })
}

fn brk(guard: Option<Guard>, span: Span, origin: Option<Pc>) -> Item {
    Item {
        inst: Inst {
            guard,
            op: Op::Brk,
            span,
        },
        target: None,
        origin,
    }
}

fn negate(g: Guard) -> Guard {
    Guard {
        reg: g.reg,
        negated: !g.negated,
    }
}

/// Rewrite the exit edges of block `u` into `brk`: the lanes that leave wait, disabled with
/// reason break, until every lane has left and the break token re-enables them at the break
/// target (Habermaier §5.4, rules brk_div / brk_uni and unwind).
fn lower_block(g: &mut Graph, ex: &Exits, u: BlockId) {
    let out = |w: BlockId| !within(g, ex.forest, w, ex.id);
    let term = g.blocks[u].term.clone();
    let mut items: Vec<Item> = Vec::new();
    let new_term = match term {
        Term::Goto { target, bra } => {
            let span = bra.map_or(g.blocks[u].span, |j| j.span);
            items.extend(select(ex, None, target, span));
            Term::Stop(brk(None, span, bra.and_then(|j| j.origin)))
        }
        Term::Branch {
            guard,
            taken,
            fall,
            jump,
        } => {
            let (s, o) = (jump.span, jump.origin);
            match (out(taken), out(fall)) {
                // `@p bra y` (exit taken) becomes `@p brk`; the others fall through.
                (true, false) => {
                    items.extend(select(ex, Some(guard), taken, s));
                    items.push(brk(Some(guard), s, o));
                    Term::Goto {
                        target: fall,
                        bra: None,
                    }
                }
                // Exit on the fall-through: `@!p brk` first, then the remaining lanes (all with
                // p true) jump unconditionally.
                (false, true) => {
                    items.extend(select(ex, Some(negate(guard)), fall, s));
                    items.push(brk(Some(negate(guard)), s, o));
                    Term::Goto {
                        target: taken,
                        bra: None,
                    }
                }
                _ => {
                    if taken != fall {
                        items.extend(select(ex, Some(guard), taken, s));
                        items.extend(select(ex, Some(negate(guard)), fall, s));
                    } else {
                        items.extend(select(ex, None, taken, s));
                    }
                    Term::Stop(brk(None, s, o))
                }
            }
        }
        Term::Switch { jump, .. } => {
            let exits: Vec<BlockId> = term.succs().into_iter().filter(|&w| out(w)).collect();
            for w in exits {
                let stub = brk_stub(g, ex, w, jump.span);
                g.blocks[u].term.retarget(w, stub);
            }
            return;
        }
        Term::Stop(_) | Term::FallOff => return,
    };
    g.blocks[u].items.extend(items);
    g.blocks[u].term = new_term;
}

/// A block `[mov.u32 %sel, i;] brk` standing for one exit slot of a `brx.idx`.
fn brk_stub(g: &mut Graph, ex: &Exits, w: BlockId, span: Span) -> BlockId {
    let anchor = Anchor::After(ex.last, after_loop_key(ex.depth, 1));
    let mut blk = Block::new(
        Kind::BrkStub,
        Some(ex.id),
        Term::Stop(brk(None, span, None)),
        span,
        anchor,
    );
    blk.items.extend(select(ex, None, w, span));
    g.add(blk)
}
