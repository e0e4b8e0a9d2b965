//! The instruction-level control flow the uniformity analysis walks: successors (with a virtual
//! exit), reachability, the control dependences of every instruction, and the values its
//! register operands read (definitions joined where control flow merges).
//!
//! Why instruction level rather than `gpusim_isa::analysis::Cfg`'s blocks: a guarded `ret`/`exit`
//! and a call into a function that may `exit` are divergence points in the middle of a block,
//! and the block CFG does not give them an edge to the exit.
//!
//! Both structures are sparse, so the analysis stays near-linear in the size of the function:
//! - **Control.** The paper's `cf` of an instruction depends on every decision whose region
//!   holds it — the region of a decision being everything reachable from its successors before
//!   its immediate post-dominator. Materialising the regions costs O(decisions × size). The
//!   region of `x` is contained in the transitive closure of `x`'s *control dependences*
//!   (Ferrante, Ottenstein and Warren 1987: `y` depends on `x` when `y` post-dominates a
//!   successor of `x` but not `x` itself), and contains its direct ones; since a decision's
//!   `Decision` node depends on its own `cf`, reachability in the uniformity graph is the
//!   same with direct dependences only. Instructions that cannot reach the exit (an endless
//!   loop) have no post-dominators: each depends on its predecessors' control and on the
//!   decisions among them, which covers everything reachable from those decisions.
//! - **Values.** Reaching definitions as dense bitsets cost O(instructions × definitions).
//!   Instead each register operand reads one value: a definition or a join of values where
//!   paths merge (a φ at a block with several predecessors, created on demand, or the merge
//!   after a guarded write, which keeps the old value where its guard is false). The
//!   definitions a join stands for are exactly the reaching definitions of the old formulation.

use gpusim_isa::analysis::DomTree;
use gpusim_isa::{Function, Op, Pc, RegId};
use std::collections::HashMap;

/// What the control flow of an instruction depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CfDep {
    /// The decision at this pc (control dependence).
    Decision(Pc),
    /// The control flow of this instruction, a predecessor (code that cannot reach the exit).
    Cf(Pc),
}

/// Control flow of one function body: node `n` is instruction `n`, node `len` the virtual exit.
pub(crate) struct Flow {
    pub succ: Vec<Vec<usize>>,
    pub reachable: Vec<bool>,
    /// Reachable instructions in reverse postorder.
    pub rpo: Vec<usize>,
    /// For each instruction, what its control flow depends on: the decisions it is control
    /// dependent on, in reverse postorder of the decisions, then (code that cannot reach the
    /// exit) its predecessors.
    pub deps: Vec<Vec<CfDep>>,
}

impl Flow {
    pub fn exit(&self) -> usize {
        self.succ.len() - 1
    }

    /// `may_exit(pc)`: the instruction is a call into a function that may end the thread.
    pub fn build(f: &Function, may_exit: impl Fn(Pc) -> bool) -> Flow {
        let n = f.body.len();
        let exit = n;
        let succ = successors(f, &may_exit);
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
        let mut succ = succ;
        for (x, s) in succ.iter_mut().enumerate() {
            if !reachable[x] {
                s.clear();
            }
        }
        let dom = DomTree::dominators(&succ, 0);
        let rpo: Vec<usize> = dom.rpo().iter().copied().filter(|&x| x != exit).collect();
        let pdom = DomTree::post_dominators(&succ, exit);
        let deps = control_dependences(&succ, &rpo, &pdom, exit);
        Flow {
            succ,
            reachable,
            rpo,
            deps,
        }
    }
}

fn successors(f: &Function, may_exit: &impl Fn(Pc) -> bool) -> Vec<Vec<usize>> {
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
    succ
}

/// The direct control dependences of every instruction (see the module doc): for each edge
/// `x → s` of a decision, the post-dominator-tree path from `s` up to (not including) the
/// immediate post-dominator of `x`. Code that cannot reach the exit depends on its
/// predecessors instead.
fn control_dependences(
    succ: &[Vec<usize>],
    rpo: &[usize],
    pdom: &DomTree,
    exit: usize,
) -> Vec<Vec<CfDep>> {
    let n = exit;
    let mut deps: Vec<Vec<CfDep>> = vec![Vec::new(); n];
    let reaches_exit = |y: usize| y == exit || pdom.idom(y).is_some();
    for &x in rpo {
        if succ[x].len() < 2 {
            continue;
        }
        let stop = pdom.idom(x);
        for &s in &succ[x] {
            if !reaches_exit(s) {
                continue;
            }
            let mut y = s;
            while Some(y) != stop && y != exit {
                deps[y].push(CfDep::Decision(x as Pc));
                match pdom.idom(y) {
                    Some(p) => y = p,
                    None => break,
                }
            }
        }
    }
    // Code that cannot reach the exit is closed under successors: whatever controls a
    // predecessor controls it, and so does a predecessor that decides.
    for &z in rpo {
        for &y in &succ[z] {
            if y != exit && !reaches_exit(y) {
                if succ[z].len() >= 2 {
                    deps[y].push(CfDep::Decision(z as Pc));
                }
                if z != y {
                    deps[y].push(CfDep::Cf(z as Pc));
                }
            }
        }
    }
    deps
}

/// One register definition: `pc == None` stands for the register's undefined value on entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Def {
    pub pc: Option<Pc>,
    pub reg: RegId,
}

/// A value a register operand reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Val {
    /// One definition (index into `Values::defs`).
    Def(usize),
    /// A join of values (index into `Values::joins`).
    Join(usize),
}

/// Where a value is not known yet while the values are being built: the value of a register
/// on entry to a block.
#[derive(Clone, Copy, Debug)]
enum Pending {
    Known(Val),
    Entry(usize, RegId),
}

/// The values every register operand of a function reads (see the module doc).
pub(crate) struct Values {
    pub defs: Vec<Def>,
    pub def_at: HashMap<(Pc, RegId), usize>,
    /// Each join's inputs.
    pub joins: Vec<Vec<Val>>,
    /// Per instruction, the values of the registers it reads (`reads_at[pc]`).
    uses: Vec<Vec<(RegId, Val)>>,
}

impl Values {
    /// `writes[pc]` are the registers instruction `pc` writes, `reads[pc]` those it reads
    /// (before its writes take effect).
    pub fn compute(
        f: &Function,
        flow: &Flow,
        writes: &[Vec<RegId>],
        reads: &[Vec<RegId>],
    ) -> Values {
        let mut b = ValueBuilder::new(f, flow);
        b.local_pass(f, writes, reads);
        b.finish()
    }

    /// The value register `reg` holds when instruction `pc` reads it.
    pub fn value(&self, pc: usize, reg: RegId) -> Option<Val> {
        self.uses
            .get(pc)?
            .iter()
            .find(|(r, _)| *r == reg)
            .map(|&(_, v)| v)
    }

    /// The registers instruction `pc` reads and their values.
    pub fn uses_at(&self, pc: usize) -> &[(RegId, Val)] {
        self.uses.get(pc).map_or(&[], Vec::as_slice)
    }

    /// Values in the graph (definitions and joins), for complexity checks.
    pub fn size(&self) -> usize {
        self.defs.len() + self.joins.len() + self.joins.iter().map(Vec::len).sum::<usize>()
    }
}

/// Basic blocks of the instruction graph and the values being built.
struct ValueBuilder {
    n_regs: usize,
    /// Each block's instructions in order.
    blocks: Vec<Vec<usize>>,
    /// Each block's predecessor blocks (the entry block also has the function's entry).
    preds: Vec<Vec<usize>>,
    defs: Vec<Def>,
    def_at: HashMap<(Pc, RegId), usize>,
    joins: Vec<Vec<Val>>,
    /// Guarded writes whose previous value is the block's entry value: (join, block, reg).
    fills: Vec<(usize, usize, RegId)>,
    /// Each block's last value of every register it writes.
    exit_vals: Vec<HashMap<RegId, Val>>,
    /// Values on entry to a block, resolved on demand.
    entry_vals: HashMap<(usize, RegId), Val>,
    uses: Vec<Vec<(RegId, Pending)>>,
}

impl ValueBuilder {
    fn new(f: &Function, flow: &Flow) -> ValueBuilder {
        let n = f.body.len();
        let mut npreds = vec![0u32; n + 1];
        let mut pred_of = vec![usize::MAX; n + 1];
        for &x in &flow.rpo {
            for &y in &flow.succ[x] {
                npreds[y] += 1;
                pred_of[y] = x;
            }
        }
        // A block starts at the entry, at a merge, and after a branch.
        let leader = |y: usize| y == 0 || npreds[y] != 1 || flow.succ[pred_of[y]].len() != 1;
        let mut block_of = vec![usize::MAX; n];
        let mut blocks = Vec::new();
        for &x in &flow.rpo {
            if !leader(x) {
                continue;
            }
            let id = blocks.len();
            let mut body = Vec::new();
            let mut y = x;
            loop {
                block_of[y] = id;
                body.push(y);
                match flow.succ[y].as_slice() {
                    [z] if *z != flow.exit() && !leader(*z) => y = *z,
                    _ => break,
                }
            }
            blocks.push(body);
        }
        let mut preds = vec![Vec::new(); blocks.len()];
        for (id, body) in blocks.iter().enumerate() {
            let last = *body.last().expect("blocks are not empty");
            for &z in &flow.succ[last] {
                if z != flow.exit() {
                    let t = block_of[z];
                    if !preds[t].contains(&id) {
                        preds[t].push(id);
                    }
                }
            }
        }
        let defs = (0..f.regs.len())
            .map(|r| Def {
                pc: None,
                reg: RegId(r as u32),
            })
            .collect();
        ValueBuilder {
            n_regs: f.regs.len(),
            exit_vals: vec![HashMap::new(); blocks.len()],
            blocks,
            preds,
            defs,
            def_at: HashMap::new(),
            joins: Vec::new(),
            fills: Vec::new(),
            entry_vals: HashMap::new(),
            uses: vec![Vec::new(); n],
        }
    }

    /// Within each block: the definitions, the merges after guarded writes, and each read's
    /// value where the block itself defines it.
    fn local_pass(&mut self, f: &Function, writes: &[Vec<RegId>], reads: &[Vec<RegId>]) {
        for id in 0..self.blocks.len() {
            let mut cur: HashMap<RegId, Val> = HashMap::new();
            for k in 0..self.blocks[id].len() {
                let pc = self.blocks[id][k];
                for &r in &reads[pc] {
                    if self.uses[pc].iter().any(|(x, _)| *x == r) {
                        continue;
                    }
                    let v = match cur.get(&r) {
                        Some(&v) => Pending::Known(v),
                        None => Pending::Entry(id, r),
                    };
                    self.uses[pc].push((r, v));
                }
                let guarded = f.body[pc].guard.is_some();
                for &r in &writes[pc] {
                    let d = self.defs.len();
                    self.defs.push(Def {
                        pc: Some(pc as Pc),
                        reg: r,
                    });
                    self.def_at.insert((pc as Pc, r), d);
                    let v = if guarded {
                        // Where the guard is false the old value survives.
                        let j = self.joins.len();
                        match cur.get(&r) {
                            Some(&old) => self.joins.push(vec![Val::Def(d), old]),
                            None => {
                                self.joins.push(vec![Val::Def(d)]);
                                self.fills.push((j, id, r));
                            }
                        }
                        Val::Join(j)
                    } else {
                        Val::Def(d)
                    };
                    cur.insert(r, v);
                }
            }
            self.exit_vals[id] = cur;
        }
    }

    /// The value of `reg` on entry to `block`: through single predecessors to a definition,
    /// or a join where several paths meet (created once, its inputs resolved from a
    /// worklist so that loops terminate).
    fn entry_value(
        &mut self,
        block: usize,
        reg: RegId,
        work: &mut Vec<(usize, usize, RegId)>,
    ) -> Val {
        let mut chain = Vec::new();
        let mut b = block;
        let v = loop {
            if let Some(&v) = self.entry_vals.get(&(b, reg)) {
                break v;
            }
            let preds = &self.preds[b];
            let is_entry = self.blocks[b][0] == 0;
            if is_entry && preds.is_empty() {
                chain.push(b);
                break Val::Def(reg.0 as usize);
            }
            if !is_entry && preds.len() == 1 {
                chain.push(b);
                let p = preds[0];
                if let Some(&v) = self.exit_vals[p].get(&reg) {
                    break v;
                }
                b = p;
                continue;
            }
            let j = self.joins.len();
            self.joins.push(Vec::new());
            self.entry_vals.insert((b, reg), Val::Join(j));
            work.push((j, b, reg));
            break Val::Join(j);
        };
        for c in chain {
            self.entry_vals.insert((c, reg), v);
        }
        v
    }

    fn exit_value(
        &mut self,
        block: usize,
        reg: RegId,
        work: &mut Vec<(usize, usize, RegId)>,
    ) -> Val {
        match self.exit_vals[block].get(&reg) {
            Some(&v) => v,
            None => self.entry_value(block, reg, work),
        }
    }

    fn finish(mut self) -> Values {
        let mut work = Vec::new();
        let mut uses = vec![Vec::new(); self.uses.len()];
        for pc in 0..self.uses.len() {
            for k in 0..self.uses[pc].len() {
                let (r, p) = self.uses[pc][k];
                let v = match p {
                    Pending::Known(v) => v,
                    Pending::Entry(b, r) => self.entry_value(b, r, &mut work),
                };
                uses[pc].push((r, v));
            }
        }
        for (j, b, r) in std::mem::take(&mut self.fills) {
            let old = self.entry_value(b, r, &mut work);
            self.joins[j].push(old);
        }
        while let Some((j, b, r)) = work.pop() {
            let mut inputs = Vec::new();
            if self.blocks[b][0] == 0 {
                inputs.push(Val::Def(r.0 as usize));
            }
            for k in 0..self.preds[b].len() {
                let p = self.preds[b][k];
                let v = self.exit_value(p, r, &mut work);
                if !inputs.contains(&v) {
                    inputs.push(v);
                }
            }
            self.joins[j] = inputs;
        }
        debug_assert!(self.defs.len() >= self.n_regs);
        let alias = trivial_joins(&self.joins);
        let resolve = |v: Val| match v {
            Val::Join(j) => alias[j].unwrap_or(v),
            v => v,
        };
        for u in uses.iter_mut() {
            for (_, v) in u.iter_mut() {
                *v = resolve(*v);
            }
        }
        let mut joins = self.joins;
        for (j, inputs) in joins.iter_mut().enumerate() {
            if alias[j].is_some() {
                // Nothing refers to it any more.
                inputs.clear();
                continue;
            }
            let mut resolved: Vec<Val> = Vec::with_capacity(inputs.len());
            for v in inputs.iter().map(|&v| resolve(v)) {
                if !resolved.contains(&v) {
                    resolved.push(v);
                }
            }
            *inputs = resolved;
        }
        Values {
            defs: self.defs,
            def_at: self.def_at,
            joins,
            uses,
        }
    }
}

/// Joins that stand for one value only — all inputs the same value or the join itself (a
/// register no branch redefines, carried through every merge) — resolved to that value
/// (Braun et al., "Simple and Efficient Construction of Static Single Assignment Form", CC
/// 2013, trivial φ removal), so that chains of them cost nothing. A worklist: removing one may
/// make the joins that use it trivial.
fn trivial_joins(joins: &[Vec<Val>]) -> Vec<Option<Val>> {
    let mut alias: Vec<Option<Val>> = vec![None; joins.len()];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); joins.len()];
    for (j, inputs) in joins.iter().enumerate() {
        for v in inputs {
            if let Val::Join(i) = *v {
                users[i].push(j);
            }
        }
    }
    fn find(alias: &mut [Option<Val>], v: Val) -> Val {
        let mut cur = v;
        while let Val::Join(j) = cur {
            match alias[j] {
                Some(next) => cur = next,
                None => break,
            }
        }
        // Path compression.
        let mut x = v;
        while let Val::Join(j) = x {
            match alias[j] {
                Some(next) if next != cur => {
                    alias[j] = Some(cur);
                    x = next;
                }
                _ => break,
            }
        }
        cur
    }
    let mut work: Vec<usize> = (0..joins.len()).rev().collect();
    while let Some(j) = work.pop() {
        if alias[j].is_some() {
            continue;
        }
        let mut only: Option<Val> = None;
        let mut trivial = true;
        for &v in &joins[j] {
            let v = find(&mut alias, v);
            if v == Val::Join(j) || Some(v) == only {
                continue;
            }
            if only.is_some() {
                trivial = false;
                break;
            }
            only = Some(v);
        }
        if let (true, Some(v)) = (trivial, only) {
            alias[j] = Some(v);
            work.extend(users[j].iter().copied());
        }
    }
    for j in 0..joins.len() {
        if alias[j].is_some() {
            let v = find(&mut alias, Val::Join(j));
            alias[j] = Some(v);
        }
    }
    alias
}
