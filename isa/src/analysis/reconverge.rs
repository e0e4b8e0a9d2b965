//! Where the reconvergence tokens go: every divergent branch gets `ssy P` right before it and a
//! sync pad (a block holding `sync`) on every edge into its immediate post-dominator D, where
//! P is the instruction right after that pad's `sync`.
//!
//! Each loop body, and the function level, is a separate acyclic graph: the back edge (from the
//! single latch) is cut, a nested loop is one node (its preheader) whose successor is its break
//! target, and inside a loop only the latch leads to the virtual exit. Paths that end in `brk`,
//! `ret` or `exit` are resolved by unwinding and take no part in post-dominance there, so every
//! divergent branch of a loop body reconverges before the back edge. At function level, `ret`
//! and `exit` lead to the virtual exit and a branch post-dominated only by it gets no token.
//!
//! Every node u has a fixed stack T(u) of sync tokens (bottom first) that lanes hold when they
//! reach it; a branch pushes its own token on top of T(b). Tokens are ordered by the depth of
//! their D in the post-dominator tree, then by reverse postorder, so the tokens an edge into D
//! must pop are always on top. The tokens of one D form a tree: a pad pops one token and
//! continues at the pad of the token below it (or at D). An edge pushes, with `ssy` on the edge,
//! any token its target expects and its lanes lack; that only happens where branch regions
//! overlap without nesting (`if (a || b)`), and keeps every `sync` stack-consistent
//! (Habermaier §6.2, control-flow consistency conditions 3–5).
//!
//! The stacks are the least solution of monotone rules (`Solution::solve`). Should a branch's
//! lanes ever have to hold a token that belongs above the branch's own, the branch is reported
//! as an error rather than given inconsistent tokens; no reducible CFG is known to need it.

use super::dom::{reverse, reverse_postorder, DomTree};
use super::graph::*;
use super::structure::LoopInfo;
use super::AnalysisError;
use crate::ir::Op;
use std::collections::{BTreeSet, HashMap};

/// Insert `ssy`, sync pads and `preBrk` at every level (function body and each loop body).
pub(crate) fn insert(g: &mut Graph, loops: &[LoopInfo], fname: &str) -> Result<(), AnalysisError> {
    let levels = std::iter::once(None).chain((0..loops.len()).map(Some));
    for level in levels {
        let lg = LevelGraph::build(g, loops, level);
        let sol = Solution::solve(g, &lg, fname)?;
        apply(g, loops, &lg, &sol, level);
    }
    Ok(())
}

/// The acyclic graph of one level. Node `blocks.len()` is the virtual exit.
struct LevelGraph {
    blocks: Vec<BlockId>,
    succ: Vec<Vec<usize>>,
    entry: usize,
    /// Nodes with an edge to the virtual exit.
    sinks: Vec<usize>,
}

impl LevelGraph {
    fn build(g: &Graph, loops: &[LoopInfo], level: Option<usize>) -> LevelGraph {
        let blocks: Vec<BlockId> = (0..g.blocks.len())
            .filter(|&b| g.blocks[b].reachable && g.blocks[b].level == level)
            .collect();
        let index: HashMap<BlockId, usize> =
            blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let node = |b: BlockId| {
            *index
                .get(&b)
                .expect("level edges stay in their level once exits are lowered")
        };
        let succ: Vec<Vec<usize>> = blocks
            .iter()
            .map(|&b| {
                level_succs(g, loops, level, b)
                    .into_iter()
                    .map(node)
                    .collect()
            })
            .collect();
        let entry = node(level.map_or(g.entry, |l| loops[l].header));
        let sinks = match level {
            None => (0..blocks.len()).filter(|&u| succ[u].is_empty()).collect(),
            Some(l) => vec![node(loops[l].latch)],
        };
        LevelGraph {
            blocks,
            succ,
            entry,
            sinks,
        }
    }

    fn exit(&self) -> usize {
        self.blocks.len()
    }
}

/// A nested loop's preheader stands for the whole loop and continues at its break target; the
/// back edge to the level's own header is cut.
fn level_succs(g: &Graph, loops: &[LoopInfo], level: Option<usize>, b: BlockId) -> Vec<BlockId> {
    if let Kind::Preheader(m) = g.blocks[b].kind {
        return loops[m].break_target.into_iter().collect();
    }
    let header = level.map(|l| loops[l].header);
    g.blocks[b]
        .term
        .succs()
        .into_iter()
        .filter(|&t| Some(t) != header)
        .collect()
}

/// The sync token of one divergent branch: pushed at `node`, popped on the edges into `d`.
struct Token {
    node: usize,
    d: usize,
}

/// Token stacks of one level. Token ids are in stack order (a larger id lies higher).
struct Solution {
    /// Successors among live nodes.
    succ: Vec<Vec<usize>>,
    tokens: Vec<Token>,
    node_tok: Vec<Option<usize>>,
    /// T(u): the tokens lanes hold on arrival at u.
    t_in: Vec<BTreeSet<usize>>,
    /// The tokens of the same D that lie below a token whenever it is on the stack.
    below: Vec<BTreeSet<usize>>,
}

impl Solution {
    fn solve(g: &Graph, lg: &LevelGraph, fname: &str) -> Result<Solution, AnalysisError> {
        let n = lg.blocks.len();
        let live = live_nodes(lg);
        let succ: Vec<Vec<usize>> = (0..n)
            .map(|u| {
                if live[u] {
                    lg.succ[u].iter().copied().filter(|&w| live[w]).collect()
                } else {
                    vec![]
                }
            })
            .collect();
        let tokens = find_tokens(g, lg, &live, &succ);
        let mut node_tok = vec![None; n];
        for (t, tok) in tokens.iter().enumerate() {
            node_tok[tok.node] = Some(t);
        }
        let k = tokens.len();
        let mut sol = Solution {
            succ,
            tokens,
            node_tok,
            t_in: vec![BTreeSet::new(); n],
            below: vec![BTreeSet::new(); k],
        };
        sol.seed_regions();
        while sol.edge_rules() | sol.node_rules() | sol.chain_rules() {}
        sol.check(g, lg, fname)?;
        Ok(sol)
    }

    /// T(u) plus u's own token.
    fn t_out(&self, u: usize) -> BTreeSet<usize> {
        let mut out = self.t_in[u].clone();
        out.extend(self.node_tok[u]);
        out
    }

    /// Lanes that went through branch b hold its token everywhere in its region (the nodes it
    /// reaches without passing D); a branch inside another's region of the same D nests in it.
    fn seed_regions(&mut self) {
        let regions: Vec<Vec<bool>> = self.tokens.iter().map(|tok| self.region(tok)).collect();
        for (t, tok) in self.tokens.iter().enumerate() {
            for (u, &inside) in regions[t].iter().enumerate() {
                if inside && u != tok.node {
                    self.t_in[u].insert(t);
                }
            }
            for (c, other) in self.tokens.iter().enumerate() {
                if c != t && other.d == tok.d && regions[c][tok.node] {
                    self.below[t].insert(c);
                }
            }
        }
    }

    fn region(&self, tok: &Token) -> Vec<bool> {
        let mut inside = vec![false; self.succ.len()];
        let mut work = vec![tok.node];
        inside[tok.node] = true;
        while let Some(u) = work.pop() {
            for &w in &self.succ[u] {
                if w != tok.d && !inside[w] {
                    inside[w] = true;
                    work.push(w);
                }
            }
        }
        inside
    }

    /// Along every edge u → w: the tokens not popped at w reach w (forward); tokens T(w) holds
    /// below them must already be held at u, since an edge can only push on top (backward); and
    /// an edge that pops through pads cannot also push, since a pad chain ends at D itself.
    fn edge_rules(&mut self) -> bool {
        let mut changed = false;
        for u in 0..self.succ.len() {
            for w in self.succ[u].clone() {
                let (popped, kept) = self.split(u, w);
                for &t in &kept {
                    changed |= self.t_in[w].insert(t);
                }
                let mut need: Vec<usize> = match kept.last() {
                    Some(&m) => self.t_in[w]
                        .range(..m)
                        .copied()
                        .filter(|t| !kept.contains(t))
                        .collect(),
                    None => vec![],
                };
                if !popped.is_empty() {
                    need.extend(self.t_in[w].iter().copied());
                }
                for t in need {
                    changed |= self.t_in[u].insert(t);
                }
            }
        }
        changed
    }

    /// A token on the stack has its chain below it; two tokens of the same D held together
    /// are chained in stack order.
    fn node_rules(&mut self) -> bool {
        let mut changed = false;
        for u in 0..self.succ.len() {
            let out = self.t_out(u);
            for &b in &out {
                for c in self.below[b].clone() {
                    if Some(c) != self.node_tok[u] {
                        changed |= self.t_in[u].insert(c);
                    }
                }
            }
            let out: Vec<usize> = out.into_iter().collect();
            for (j, &hi) in out.iter().enumerate() {
                for &lo in &out[..j] {
                    if self.tokens[lo].d == self.tokens[hi].d {
                        changed |= self.below[hi].insert(lo);
                    }
                }
            }
        }
        changed
    }

    /// The tokens below a token form a chain: transitive, and each one's own chain is the part
    /// of the list beneath it.
    fn chain_rules(&mut self) -> bool {
        let mut changed = false;
        for b in 0..self.tokens.len() {
            for c in self.below[b].clone() {
                for d in self.below[c].clone() {
                    changed |= self.below[b].insert(d);
                }
            }
            let list: Vec<usize> = self.below[b].iter().copied().collect();
            for (j, &hi) in list.iter().enumerate() {
                for &lo in &list[..j] {
                    changed |= self.below[hi].insert(lo);
                }
            }
        }
        changed
    }

    /// A branch's token must go on top of everything its lanes hold.
    fn check(&self, g: &Graph, lg: &LevelGraph, fname: &str) -> Result<(), AnalysisError> {
        for (t, tok) in self.tokens.iter().enumerate() {
            if self.t_in[tok.node].iter().any(|&x| x > t) {
                let span = g.blocks[lg.blocks[tok.node]].term_span();
                let msg = "cannot place a reconvergence token for this branch: its region \
                           overlaps other branch regions in a way no fixed token stack can express";
                return Err(AnalysisError::new(fname, span, msg));
            }
        }
        Ok(())
    }

    /// The tokens edge u → w pops (bottom first) and keeps.
    fn split(&self, u: usize, w: usize) -> (Vec<usize>, BTreeSet<usize>) {
        let (popped, kept): (BTreeSet<usize>, BTreeSet<usize>) = self
            .t_out(u)
            .into_iter()
            .partition(|&t| self.tokens[t].d == w);
        (popped.into_iter().collect(), kept)
    }
}

/// Nodes from which the virtual exit is reachable.
fn live_nodes(lg: &LevelGraph) -> Vec<bool> {
    let mut adj = lg.succ.clone();
    adj.push(Vec::new());
    for &s in &lg.sinks {
        adj[s].push(lg.exit());
    }
    let preds = reverse(&adj);
    let mut live = vec![false; adj.len()];
    for u in reverse_postorder(&preds, lg.exit()) {
        live[u] = true;
    }
    live.truncate(lg.blocks.len());
    live
}

/// Divergent branches that have a real immediate post-dominator, in stack order.
fn find_tokens(g: &Graph, lg: &LevelGraph, live: &[bool], succ: &[Vec<usize>]) -> Vec<Token> {
    let exit = lg.exit();
    let mut adj = succ.to_vec();
    adj.push(Vec::new());
    for &s in &lg.sinks {
        adj[s].push(exit);
    }
    let pdom = DomTree::post_dominators(&adj, exit);
    let rpo = reverse_postorder(&lg.succ, lg.entry);
    let mut rpo_index = vec![usize::MAX; lg.blocks.len()];
    for (i, &u) in rpo.iter().enumerate() {
        rpo_index[u] = i;
    }
    let mut tokens: Vec<(u32, usize, Token)> = Vec::new();
    for u in 0..lg.blocks.len() {
        if !live[u] || rpo_index[u] == usize::MAX || !g.blocks[lg.blocks[u]].term.divergent() {
            continue;
        }
        match pdom.idom(u) {
            Some(d) if d != exit => {
                tokens.push((pdom.depth(d), rpo_index[u], Token { node: u, d }))
            }
            _ => {}
        }
    }
    tokens.sort_by_key(|&(depth, order, _)| (depth, order));
    tokens.into_iter().map(|(_, _, t)| t).collect()
}

fn apply(g: &mut Graph, loops: &[LoopInfo], lg: &LevelGraph, sol: &Solution, level: Option<usize>) {
    let pads = add_pads(g, lg, sol, level);
    for (t, tok) in sol.tokens.iter().enumerate() {
        let b = lg.blocks[tok.node];
        let span = g.blocks[b].term_span();
        // ssy target = instruction after the matching sync (Habermaier §5.4, design point 1)
        g.blocks[b].items.push(Item::token(
            Op::Ssy { target: 0 },
            Target::AfterSync(pads[t]),
            span,
        ));
    }
    let mut break_entry = HashMap::new();
    for u in 0..lg.blocks.len() {
        for &w in &sol.succ[u] {
            let entry = route_edge(g, lg, sol, &pads, u, w, level);
            if matches!(g.blocks[lg.blocks[u]].kind, Kind::Preheader(_)) {
                break_entry.insert(lg.blocks[u], entry);
            }
        }
    }
    add_pre_breaks(g, loops, lg, &break_entry);
    push_at_entry(g, lg, sol, &pads);
}

/// One pad per token, laid out before D so that each pad falls through to the pad of the
/// token below it (post-order of the token tree of D).
fn add_pads(g: &mut Graph, lg: &LevelGraph, sol: &Solution, level: Option<usize>) -> Vec<BlockId> {
    let ranks = pad_ranks(sol);
    let mut pads = Vec::new();
    for (t, tok) in sol.tokens.iter().enumerate() {
        let d = lg.blocks[tok.d];
        let span = g.blocks[lg.blocks[tok.node]].term_span();
        let term = Term::Goto {
            target: d,
            bra: None,
        };
        let mut blk = Block::new(
            Kind::SyncPad,
            level,
            term,
            span,
            Anchor::Before(d, (1, ranks[t], 0)),
        );
        blk.items.push(Item::synth(None, Op::Sync, span));
        pads.push(g.add(blk));
    }
    for (t, below) in sol.below.iter().enumerate() {
        if let Some(&c) = below.last() {
            g.blocks[pads[t]].term = Term::Goto {
                target: pads[c],
                bra: None,
            };
        }
    }
    pads
}

fn pad_ranks(sol: &Solution) -> Vec<u32> {
    let k = sol.tokens.len();
    let mut children = vec![Vec::new(); k];
    let mut roots = Vec::new();
    for (t, below) in sol.below.iter().enumerate() {
        match below.last() {
            Some(&p) => children[p].push(t),
            None => roots.push(t),
        }
    }
    // Post-order, with an explicit stack: token stacks can be as deep as the function.
    let mut ranks = vec![0; k];
    let mut next = 0;
    for r in roots {
        let mut stack = vec![(r, 0usize)];
        while let Some((t, i)) = stack.pop() {
            if let Some(&c) = children[t].get(i) {
                stack.push((t, i + 1));
                stack.push((c, 0));
            } else {
                ranks[t] = next;
                next += 1;
            }
        }
    }
    ranks
}

/// Make edge u → w pop (through pads) or push (with `ssy`) what it must; returns the block the
/// edge now enters.
fn route_edge(
    g: &mut Graph,
    lg: &LevelGraph,
    sol: &Solution,
    pads: &[BlockId],
    u: usize,
    w: usize,
    level: Option<usize>,
) -> BlockId {
    let (ub, wb) = (lg.blocks[u], lg.blocks[w]);
    let collapsed = matches!(g.blocks[ub].kind, Kind::Preheader(_));
    let (popped, kept) = sol.split(u, w);
    if let Some(&top) = popped.last() {
        if !collapsed {
            g.blocks[ub].term.retarget(wb, pads[top]);
        }
        return pads[top];
    }
    let push: Vec<usize> = sol.t_in[w]
        .iter()
        .copied()
        .filter(|t| !kept.contains(t))
        .collect();
    if push.is_empty() {
        return wb;
    }
    let span = g.blocks[ub].term_span();
    let items: Vec<Item> = push.iter().map(|&t| ssy(pads[t], span)).collect();
    if !collapsed && matches!(g.blocks[ub].term, Term::Goto { .. }) {
        g.blocks[ub].items.extend(items);
        return wb;
    }
    let anchor = if g.blocks[ub].term.falls_to(wb) {
        Anchor::After(ub, (0, 0, 0))
    } else {
        Anchor::Before(wb, (0, 0, 0))
    };
    let mut blk = Block::new(
        Kind::Trampoline,
        level,
        Term::Goto {
            target: wb,
            bra: None,
        },
        span,
        anchor,
    );
    blk.items = items;
    let tramp = g.add(blk);
    if !collapsed {
        g.blocks[ub].term.retarget(wb, tramp);
    }
    tramp
}

fn ssy(pad: BlockId, span: crate::span::Span) -> Item {
    Item::token(Op::Ssy { target: 0 }, Target::AfterSync(pad), span)
}

/// `preBrk X` at the end of each nested loop's preheader, X being where its break edge now
/// enters (the first pad when the break target is a reconvergence point).
fn add_pre_breaks(
    g: &mut Graph,
    loops: &[LoopInfo],
    lg: &LevelGraph,
    break_entry: &HashMap<BlockId, BlockId>,
) {
    for &b in &lg.blocks {
        let Kind::Preheader(m) = g.blocks[b].kind else {
            continue;
        };
        let Some(x) = loops[m].break_target else {
            continue;
        };
        let target = break_entry.get(&b).copied().unwrap_or(x);
        let span = g.blocks[b].span;
        // the break token re-enables the break-disabled lanes at X (Habermaier §5.4, preBrk/brk)
        g.blocks[b].items.push(Item::token(
            Op::PreBrk { target: 0 },
            Target::Block(target),
            span,
        ));
    }
}

/// Tokens the level's entry expects are pushed at its start (lanes enter with none).
fn push_at_entry(g: &mut Graph, lg: &LevelGraph, sol: &Solution, pads: &[BlockId]) {
    let b = lg.blocks[lg.entry];
    let span = g.blocks[b].span;
    let items: Vec<Item> = sol.t_in[lg.entry]
        .iter()
        .map(|&t| ssy(pads[t], span))
        .collect();
    g.blocks[b].items.splice(0..0, items);
}
