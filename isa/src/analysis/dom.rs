//! Dominator and post-dominator trees over an adjacency list (Cooper, Harvey and Kennedy,
//! "A Simple, Fast Dominance Algorithm", 2001: iterate over reverse postorder until stable).

/// A dominator tree rooted at `root`. Post-dominator trees are dominator trees of the reversed
/// graph rooted at the exit node. Nodes not reachable from the root have no immediate
/// dominator and dominate nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomTree {
    root: usize,
    idom: Vec<Option<usize>>,
    rpo: Vec<usize>,
    rpo_index: Vec<Option<usize>>,
    depth: Vec<u32>,
}

impl DomTree {
    /// Dominators of `succ` (node → successors) from `root`.
    pub fn dominators(succ: &[Vec<usize>], root: usize) -> DomTree {
        let preds = reverse(succ);
        DomTree::build(succ, &preds, root)
    }

    /// Post-dominators of `succ` with respect to `exit`.
    pub fn post_dominators(succ: &[Vec<usize>], exit: usize) -> DomTree {
        let preds = reverse(succ);
        DomTree::build(&preds, succ, exit)
    }

    fn build(fwd: &[Vec<usize>], back: &[Vec<usize>], root: usize) -> DomTree {
        let rpo = reverse_postorder(fwd, root);
        let mut rpo_index = vec![None; fwd.len()];
        for (i, &n) in rpo.iter().enumerate() {
            rpo_index[n] = Some(i);
        }
        let mut idom = vec![None; fwd.len()];
        idom[root] = Some(root);
        let mut changed = true;
        while changed {
            changed = false;
            for &n in rpo.iter().skip(1) {
                let new = back[n]
                    .iter()
                    .filter(|&&p| idom[p].is_some())
                    .fold(None, |acc, &p| {
                        Some(acc.map_or(p, |a| intersect(&idom, &rpo_index, a, p)))
                    });
                if new.is_some() && idom[n] != new {
                    idom[n] = new;
                    changed = true;
                }
            }
        }
        let mut depth = vec![0; fwd.len()];
        for &n in rpo.iter().skip(1) {
            depth[n] = depth[idom[n].unwrap()] + 1;
        }
        DomTree {
            root,
            idom,
            rpo,
            rpo_index,
            depth,
        }
    }

    pub fn root(&self) -> usize {
        self.root
    }

    /// The immediate dominator; `None` for the root and for unreachable nodes.
    pub fn idom(&self, n: usize) -> Option<usize> {
        if n == self.root {
            return None;
        }
        self.idom[n]
    }

    pub fn reachable(&self, n: usize) -> bool {
        self.idom[n].is_some()
    }

    /// Whether `a` dominates `b` (reflexive).
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        if !self.reachable(a) || !self.reachable(b) {
            return false;
        }
        let mut n = b;
        while self.depth[n] > self.depth[a] {
            n = self.idom[n].unwrap();
        }
        n == a
    }

    /// Depth in the tree (the root has depth 0).
    pub fn depth(&self, n: usize) -> u32 {
        self.depth[n]
    }

    /// Reachable nodes in reverse postorder of the (possibly reversed) graph walked.
    pub fn rpo(&self) -> &[usize] {
        &self.rpo
    }

    pub fn rpo_index(&self, n: usize) -> Option<usize> {
        self.rpo_index[n]
    }
}

fn intersect(
    idom: &[Option<usize>],
    rpo_index: &[Option<usize>],
    mut a: usize,
    mut b: usize,
) -> usize {
    while a != b {
        while rpo_index[a] > rpo_index[b] {
            a = idom[a].unwrap();
        }
        while rpo_index[b] > rpo_index[a] {
            b = idom[b].unwrap();
        }
    }
    a
}

/// Predecessor lists of `succ`.
pub fn reverse(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut preds = vec![Vec::new(); succ.len()];
    for (n, ss) in succ.iter().enumerate() {
        for &s in ss {
            preds[s].push(n);
        }
    }
    preds
}

/// Nodes reachable from `root`, in reverse postorder of a depth-first search that visits
/// successors in list order.
pub fn reverse_postorder(succ: &[Vec<usize>], root: usize) -> Vec<usize> {
    let mut seen = vec![false; succ.len()];
    let mut post = Vec::new();
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some((n, i)) = stack.pop() {
        if let Some(&s) = succ[n].get(i) {
            stack.push((n, i + 1));
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(n);
        }
    }
    post.reverse();
    post
}
