//! The paper's sort order on blocks (§4; digest §3.1): a total order in which (1) every path
//! without back edges goes forward and (2) every loop is contiguous with its header first.
//! Built as the paper describes: topologically sort an innermost loop's body ignoring back
//! edges, collapse it into one node, repeat outwards, sort the rest, expand. Ties go to the
//! lower block index (layout order), so the order is deterministic.

use gpusim_isa::analysis::ControlFlow;
use std::collections::BTreeSet;

/// The reachable blocks of `flow` in sort order (the entry first).
pub fn sort_order(flow: &ControlFlow) -> Vec<usize> {
    let n = flow.cfg.blocks.len();
    let succ = flow.cfg.succs();
    let reachable = |b: usize| flow.dom.reachable(b);
    // A back edge goes to a dominator of its source.
    let forward = |u: usize, v: usize| !flow.dom.dominates(v, u);
    let mut rep: Vec<usize> = (0..n).collect();
    let mut expansion: Vec<Vec<usize>> = (0..n).map(|b| vec![b]).collect();
    let mut sort = |rep: &[usize], members: &[usize], first: usize| -> (usize, Vec<usize>) {
        let nodes: BTreeSet<usize> = members.iter().map(|&b| rep[b]).collect();
        let mut edges = BTreeSet::new();
        for &u in members {
            for &v in &succ[u] {
                if members.contains(&v) && forward(u, v) && rep[u] != rep[v] {
                    edges.insert((rep[u], rep[v]));
                }
            }
        }
        let key = |x: usize, exp: &[Vec<usize>]| (x != first, exp[x].iter().min().copied());
        let mut indeg: Vec<(usize, usize)> = nodes
            .iter()
            .map(|&x| (x, edges.iter().filter(|e| e.1 == x).count()))
            .collect();
        let mut out = Vec::new();
        while !indeg.is_empty() {
            let (i, _) = indeg
                .iter()
                .enumerate()
                .filter(|(_, (_, d))| *d == 0)
                .min_by_key(|(_, (x, _))| key(*x, &expansion))
                .expect("forward edges of a reducible CFG are acyclic");
            let (x, _) = indeg.remove(i);
            for e in edges.iter().filter(|e| e.0 == x) {
                if let Some(p) = indeg.iter_mut().find(|p| p.0 == e.1) {
                    p.1 -= 1;
                }
            }
            out.extend(expansion[x].iter().copied());
        }
        let id = expansion.len();
        expansion.push(out.clone());
        (id, out)
    };
    let forest = &flow.loops;
    for l in forest.postorder() {
        let lp = &forest.loops[l];
        let first = rep[lp.header];
        let (id, _) = sort(&rep, &lp.body, first);
        for &b in &lp.body {
            rep[b] = id;
        }
    }
    let all: Vec<usize> = (0..n).filter(|&b| reachable(b)).collect();
    let first = rep[flow.cfg.entry()];
    sort(&rep, &all, first).1
}
