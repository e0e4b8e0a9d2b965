//! The instruction-level control flow the uniformity analysis walks: successors (with a virtual
//! exit), reachability, the decision points and the region each one controls up to its
//! immediate post-dominator, and reaching definitions of registers.
//!
//! Why instruction level rather than `gpusim_isa::analysis::Cfg`'s blocks: a guarded `ret`/`exit`
//! and a call into a function that may `exit` are divergence points in the middle of a block,
//! and the block CFG does not give them an edge to the exit.

use gpusim_isa::analysis::DomTree;
use gpusim_isa::{Function, Op, Pc, RegId};

/// Control flow of one function body: node `n` is instruction `n`, node `len` the virtual exit.
pub(crate) struct Flow {
    pub succ: Vec<Vec<usize>>,
    pub reachable: Vec<bool>,
    /// Reachable instructions in reverse postorder.
    pub rpo: Vec<usize>,
    /// For each instruction, the decision points whose region contains it.
    pub controllers: Vec<Vec<Pc>>,
}

impl Flow {
    pub fn exit(&self) -> usize {
        self.succ.len() - 1
    }

    /// `may_exit(pc)`: the instruction is a call into a function that may end the thread.
    pub fn build(f: &Function, may_exit: impl Fn(Pc) -> bool) -> Flow {
        let n = f.body.len();
        let exit = n;
        let pre_brk: Vec<usize> = f
            .body
            .iter()
            .filter_map(|i| match i.op {
                Op::PreBrk { target } => Some(target as usize),
                _ => None,
            })
            .collect();
        let clamp = |t: usize| t.min(exit);
        let mut succ: Vec<Vec<usize>> = Vec::with_capacity(n + 1);
        for (pc, inst) in f.body.iter().enumerate() {
            let mut s = match &inst.op {
                Op::Bra { target, .. } => vec![clamp(*target as usize)],
                Op::BrxIdx { targets, .. } => targets.iter().map(|&t| clamp(t as usize)).collect(),
                Op::Ret { .. } | Op::Exit | Op::Trap => vec![exit],
                // A hand-written `brk` leaves for some `preBrk` target; over-approximate by all.
                Op::Brk => pre_brk.iter().map(|&t| clamp(t)).collect(),
                Op::Call { .. } if may_exit(pc as Pc) => vec![pc + 1, exit],
                _ => vec![pc + 1],
            };
            let transfers = matches!(
                inst.op,
                Op::Bra { .. } | Op::BrxIdx { .. } | Op::Ret { .. } | Op::Exit | Op::Trap | Op::Brk
            );
            if transfers && inst.guard.is_some() {
                s.push(pc + 1);
            }
            let mut dedup = Vec::new();
            for t in s.into_iter().map(clamp) {
                if !dedup.contains(&t) {
                    dedup.push(t);
                }
            }
            succ.push(dedup);
        }
        succ.push(Vec::new());

        let mut reachable = vec![false; n + 1];
        let mut stack = vec![0usize];
        while let Some(x) = stack.pop() {
            if reachable[x] {
                continue;
            }
            reachable[x] = true;
            stack.extend(succ[x].iter().copied());
        }
        // Unreachable code is not analysed (the paper's behaviour analysis skips statements
        // after one without `Next`: Figs 10b and 10d are accepted because of it).
        for (x, s) in succ.iter_mut().enumerate() {
            if !reachable[x] {
                s.clear();
            }
        }
        let dom = DomTree::dominators(&succ, 0);
        let rpo: Vec<usize> = dom.rpo().iter().copied().filter(|&x| x != exit).collect();
        let pdom = DomTree::post_dominators(&succ, exit);

        let mut controllers = vec![Vec::new(); n];
        for &x in &rpo {
            if succ[x].len() < 2 {
                continue;
            }
            // The region of a decision: everything reachable from its successors before its
            // immediate post-dominator, where the paths that split at it meet again. A loop
            // exit's post-dominator lies outside the loop, so its region holds the whole loop
            // body through the back edge — the paper's "cf_head depends on cf_ac" (§4.4).
            // Without a post-dominator (no path to the exit) the region is all that follows.
            let stop = pdom.idom(x);
            let mut seen = vec![false; n + 1];
            let mut work: Vec<usize> = succ[x].clone();
            while let Some(y) = work.pop() {
                if Some(y) == stop || y == exit || seen[y] {
                    continue;
                }
                seen[y] = true;
                controllers[y].push(x as Pc);
                work.extend(succ[y].iter().copied());
            }
        }
        Flow {
            succ,
            reachable,
            rpo,
            controllers,
        }
    }
}

/// One register definition: `pc == None` stands for the register's undefined value on entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Def {
    pub pc: Option<Pc>,
    pub reg: RegId,
}

/// Reaching definitions (the classic gen/kill data flow over instructions). A guarded
/// instruction does not kill: where its guard is false the old value survives.
pub(crate) struct Reaching {
    pub defs: Vec<Def>,
    by_reg: Vec<Vec<usize>>,
    words: usize,
    /// Bitset of the definitions reaching each instruction's start.
    live_in: Vec<Vec<u64>>,
}

impl Reaching {
    pub fn compute(f: &Function, flow: &Flow, writes: &[Vec<RegId>]) -> Reaching {
        let n = f.body.len();
        let mut defs: Vec<Def> = (0..f.regs.len())
            .map(|r| Def {
                pc: None,
                reg: RegId(r as u32),
            })
            .collect();
        let mut gen: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (pc, w) in writes.iter().enumerate() {
            if !flow.reachable[pc] {
                continue;
            }
            for &reg in w {
                gen[pc].push(defs.len());
                defs.push(Def {
                    pc: Some(pc as Pc),
                    reg,
                });
            }
        }
        let mut by_reg = vec![Vec::new(); f.regs.len()];
        for (i, d) in defs.iter().enumerate() {
            by_reg[d.reg.0 as usize].push(i);
        }
        let words = defs.len().div_ceil(64);
        let mut live_in = vec![vec![0u64; words]; n];
        if n > 0 {
            for r in 0..f.regs.len() {
                live_in[0][r / 64] |= 1 << (r % 64);
            }
        }
        let mut out = vec![0u64; words];
        let mut changed = true;
        while changed {
            changed = false;
            for &pc in &flow.rpo {
                out.copy_from_slice(&live_in[pc]);
                if f.body[pc].guard.is_none() {
                    for &reg in &writes[pc] {
                        for &d in &by_reg[reg.0 as usize] {
                            out[d / 64] &= !(1 << (d % 64));
                        }
                    }
                }
                for &d in &gen[pc] {
                    out[d / 64] |= 1 << (d % 64);
                }
                for &s in &flow.succ[pc] {
                    if s == flow.exit() {
                        continue;
                    }
                    for (a, b) in live_in[s].iter_mut().zip(&out) {
                        let merged = *a | *b;
                        if merged != *a {
                            *a = merged;
                            changed = true;
                        }
                    }
                }
            }
        }
        Reaching {
            defs,
            by_reg,
            words,
            live_in,
        }
    }

    /// The definitions of `reg` that reach the start of `pc`.
    pub fn reaching(&self, pc: usize, reg: RegId) -> impl Iterator<Item = usize> + '_ {
        debug_assert_eq!(self.live_in[pc].len(), self.words);
        self.by_reg[reg.0 as usize]
            .iter()
            .copied()
            .filter(move |&d| self.live_in[pc][d / 64] & (1 << (d % 64)) != 0)
    }
}
