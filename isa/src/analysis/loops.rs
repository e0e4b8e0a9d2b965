//! Back edges, natural loops and the loop forest, and the reducibility check.
//!
//! A back edge `u → h` is an edge to a dominator of `u`. The natural loop of header `h` is `h`
//! plus every node that reaches a back-edge source without passing through `h`; loops with the
//! same header are one loop. A CFG is reducible iff every retreating edge of a depth-first
//! search is a back edge.

use super::dom::DomTree;
use std::collections::BTreeSet;

/// One natural loop. Node indices are those of the graph the forest was computed on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub header: usize,
    /// Every node of the loop, nested loops included, ascending.
    pub body: Vec<usize>,
    /// Sources of the back edges, ascending.
    pub latches: Vec<usize>,
    /// Edges `(inside, outside)` that leave the loop.
    pub exits: Vec<(usize, usize)>,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// 1 for an outermost loop.
    pub depth: u32,
}

/// The loops of a reducible graph, ordered by the reverse postorder of their headers (so a
/// parent comes before its children).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopForest {
    pub loops: Vec<Loop>,
    innermost: Vec<Option<usize>>,
}

/// A retreating edge whose target does not dominate its source: the graph is irreducible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Irreducible {
    pub from: usize,
    pub to: usize,
}

impl LoopForest {
    /// Natural loops of `succ` (reachable from `dom`'s root), or the first retreating edge that
    /// makes the graph irreducible.
    pub fn compute(succ: &[Vec<usize>], dom: &DomTree) -> Result<LoopForest, Irreducible> {
        check_reducible(succ, dom)?;
        let preds = super::dom::reverse(succ);
        let mut loops: Vec<Loop> = Vec::new();
        for &h in dom.rpo() {
            let latches: Vec<usize> = preds[h]
                .iter()
                .copied()
                .filter(|&u| dom.dominates(h, u))
                .collect();
            if latches.is_empty() {
                continue;
            }
            let body = natural_loop(&preds, dom, h, &latches);
            let exits = exit_edges(succ, &body);
            let latches = latches
                .into_iter()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            loops.push(Loop {
                header: h,
                body,
                latches,
                exits,
                parent: None,
                children: vec![],
                depth: 1,
            });
        }
        let innermost = nest(&mut loops, succ.len());
        Ok(LoopForest { loops, innermost })
    }

    /// The innermost loop containing `node`.
    pub fn innermost(&self, node: usize) -> Option<usize> {
        self.innermost[node]
    }

    /// Loop ids with every child before its parent.
    pub fn postorder(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for (id, l) in self.loops.iter().enumerate() {
            if l.parent.is_none() {
                self.post_from(id, &mut out);
            }
        }
        out
    }

    /// An explicit stack: loops can nest as deep as the function is long.
    fn post_from(&self, id: usize, out: &mut Vec<usize>) {
        let mut stack = vec![(id, 0usize)];
        while let Some((l, i)) = stack.pop() {
            if let Some(&c) = self.loops[l].children.get(i) {
                stack.push((l, i + 1));
                stack.push((c, 0));
            } else {
                out.push(l);
            }
        }
    }

    /// Whether loop `outer` is `inner` or one of its ancestors.
    pub fn encloses(&self, outer: usize, inner: usize) -> bool {
        let mut l = Some(inner);
        while let Some(id) = l {
            if id == outer {
                return true;
            }
            l = self.loops[id].parent;
        }
        false
    }
}

/// Depth-first search from the root: an edge to a node on the DFS stack is retreating, and must
/// go to a dominator of its source.
pub fn check_reducible(succ: &[Vec<usize>], dom: &DomTree) -> Result<(), Irreducible> {
    let n = succ.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut stack = vec![(dom.root(), 0usize)];
    state[dom.root()] = 1;
    while let Some((u, i)) = stack.pop() {
        let Some(&v) = succ[u].get(i) else {
            state[u] = 2;
            continue;
        };
        stack.push((u, i + 1));
        match state[v] {
            0 => {
                state[v] = 1;
                stack.push((v, 0));
            }
            1 if !dom.dominates(v, u) => return Err(Irreducible { from: u, to: v }),
            _ => {}
        }
    }
    Ok(())
}

fn natural_loop(preds: &[Vec<usize>], dom: &DomTree, h: usize, latches: &[usize]) -> Vec<usize> {
    let mut body = BTreeSet::from([h]);
    let mut work: Vec<usize> = latches.to_vec();
    while let Some(u) = work.pop() {
        if dom.reachable(u) && body.insert(u) {
            work.extend(preds[u].iter().copied());
        }
    }
    body.into_iter().collect()
}

fn exit_edges(succ: &[Vec<usize>], body: &[usize]) -> Vec<(usize, usize)> {
    let mut exits = Vec::new();
    for &u in body {
        for &v in &succ[u] {
            if body.binary_search(&v).is_err() {
                exits.push((u, v));
            }
        }
    }
    exits
}

/// Set parents, children and depths (the parent is the smallest strictly enclosing loop), and
/// return the innermost loop of every node.
fn nest(loops: &mut [Loop], n_nodes: usize) -> Vec<Option<usize>> {
    let n = loops.len();
    for i in 0..n {
        let parent = (0..n)
            .filter(|&j| j != i && loops[j].body.len() > loops[i].body.len())
            .filter(|&j| loops[j].body.binary_search(&loops[i].header).is_ok())
            .min_by_key(|&j| loops[j].body.len());
        loops[i].parent = parent;
    }
    for i in 0..n {
        if let Some(p) = loops[i].parent {
            loops[p].children.push(i);
        }
    }
    // Parents precede children in header reverse postorder, so one forward pass sets depths.
    for i in 0..n {
        loops[i].depth = loops[i].parent.map_or(1, |p| loops[p].depth + 1);
    }
    let mut innermost = vec![None; n_nodes];
    let mut by_size: Vec<usize> = (0..n).collect();
    by_size.sort_by_key(|&i| std::cmp::Reverse(loops[i].body.len()));
    for i in by_size {
        for &b in &loops[i].body {
            innermost[b] = Some(i);
        }
    }
    innermost
}
