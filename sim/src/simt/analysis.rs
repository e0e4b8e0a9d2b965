//! Static reconvergence facts of a tokenised program, computed once by `Program::prepare`:
//! each branch's immediate post-dominator (the reconvergence pc of the stack-free IPDOM
//! policies), each `brk`'s break target, and the thread-frontier priority of every pc.
//!
//! The graph is the basic-block CFG of `gpusim_isa::analysis::Cfg` on the tokenised body with
//! one change: a `brk` is a jump to its break target (the target of the innermost break token
//! on the static token stack) instead of the end of a path. Token instructions are otherwise
//! ordinary instructions: `validate_tokens` guarantees that every `sync` pops a token for
//! pc + 1 and every `preRet` names the instruction after its call, so `ssy`, `sync`, `preBrk`
//! and `preRet` fall through and a call returns to pc + 1.

use gpusim_isa::analysis::{cfg::Cfg, dom::DomTree, loops::LoopForest};
use gpusim_isa::{Function, Module, Op, Pc};

/// "No pc": a branch whose immediate post-dominator is the function's exit, or an
/// instruction that is not a `brk`.
pub const NO_PC: Pc = Pc::MAX;

/// The static facts of one function, indexed by pc.
#[derive(Clone, Debug, Default)]
pub struct FuncInfo {
    /// Immediate post-dominator of the branch (`bra`, `brx.idx`, `brk`) at this pc: the first
    /// pc of the IPDOM block, or `NO_PC` (function exit, or not a branch).
    pub ipdom: Vec<Pc>,
    /// Break target of the `brk` at this pc (`NO_PC` elsewhere).
    pub break_target: Vec<Pc>,
    /// Thread-frontier priority (Diamos et al., MICRO 2011): smaller runs first. Blocks
    /// are ranked in a topological order of the forward edges in which every loop is
    /// contiguous, so that a block is scheduled only after every block that can still reach
    /// it in the same iteration; pcs of a block keep their order.
    pub priority: Vec<u32>,
}

impl FuncInfo {
    /// The priority of `pc`; past the end of the body (a fault on issue) it is the lowest.
    pub fn priority_of(&self, pc: Pc) -> u32 {
        self.priority.get(pc as usize).copied().unwrap_or(u32::MAX)
    }
}

/// The static facts of every function, indexed by `FuncId`.
#[derive(Clone, Debug, Default)]
pub struct ProgramInfo {
    pub funcs: Vec<FuncInfo>,
}

impl ProgramInfo {
    pub fn analyze(m: &Module) -> ProgramInfo {
        ProgramInfo {
            funcs: m.functions.iter().map(analyze_function).collect(),
        }
    }
}

/// The facts of one tokenised function. A body the block analysis cannot handle keeps the
/// safe defaults: no IPDOM (reconverge at the function exit) and priority = pc.
pub fn analyze_function(f: &Function) -> FuncInfo {
    let n = f.body.len();
    let mut info = FuncInfo {
        ipdom: vec![NO_PC; n],
        break_target: break_targets(f),
        priority: (0..n as u32).collect(),
    };
    if n == 0 {
        return info;
    }
    let Ok(cfg) = Cfg::build(f) else {
        return info;
    };
    let nb = cfg.blocks.len();
    let exit = cfg.exit();
    // Successors with `brk` → break target.
    let mut succ: Vec<Vec<usize>> = cfg.succs();
    let mut to_exit: Vec<bool> = cfg.blocks.iter().map(|b| b.to_exit).collect();
    for (b, blk) in cfg.blocks.iter().enumerate() {
        let last = blk.last_pc();
        let t = info.break_target[last as usize];
        if f.body[last as usize].op == Op::Brk && t != NO_PC {
            let tb = cfg.block_of(t);
            if !succ[b].contains(&tb) {
                succ[b].push(tb);
            }
            if f.body[last as usize].guard.is_none() {
                to_exit[b] = false;
            }
        }
    }
    let mut with_exit = succ.clone();
    for (b, s) in with_exit.iter_mut().enumerate() {
        if to_exit[b] {
            s.push(exit);
        }
    }
    with_exit.push(Vec::new());
    let pdom = DomTree::post_dominators(&with_exit, exit);
    for (b, blk) in cfg.blocks.iter().enumerate() {
        let last = blk.last_pc();
        if matches!(
            f.body[last as usize].op,
            Op::Bra { .. } | Op::BrxIdx { .. } | Op::Brk
        ) {
            if let Some(p) = pdom.idom(b).filter(|&p| p != exit) {
                info.ipdom[last as usize] = cfg.blocks[p].start;
            }
        }
    }
    let dom = DomTree::dominators(&succ, cfg.entry());
    if let Ok(loops) = LoopForest::compute(&succ, &dom) {
        let order = frontier_order(&succ, &dom, &loops, &cfg, nb);
        let mut next = 0u32;
        for b in order {
            let blk = &cfg.blocks[b];
            for pc in blk.start..blk.end {
                info.priority[pc as usize] = next;
                next += 1;
            }
        }
    }
    info
}

/// Blocks in thread-frontier priority order: Kahn's topological sort of the forward edges
/// (back edges, to a loop header from inside its loop, are dropped), preferring among ready
/// blocks the one inside the most open loops (a loop is open from its header until all its
/// blocks are placed), then the lowest pc. A non-header block of a natural loop has all its
/// predecessors in the loop, so an open loop always has a ready block until it is complete:
/// every loop is contiguous and its exits come after it. Unreachable blocks go last.
fn frontier_order(
    succ: &[Vec<usize>],
    dom: &DomTree,
    loops: &LoopForest,
    cfg: &Cfg,
    nb: usize,
) -> Vec<usize> {
    // In a reducible graph the back edges are exactly the edges to a dominator.
    let is_back = |u: usize, v: usize| dom.dominates(v, u);
    let mut indeg = vec![0u32; nb];
    for u in (0..nb).filter(|&u| dom.reachable(u)) {
        for &v in &succ[u] {
            if !is_back(u, v) {
                indeg[v] += 1;
            }
        }
    }
    let mut remaining: Vec<usize> = loops.loops.iter().map(|l| l.body.len()).collect();
    let mut opened = vec![false; loops.loops.len()];
    let mut placed = vec![false; nb];
    let mut ready: Vec<usize> = vec![cfg.entry()];
    let mut order = Vec::with_capacity(nb);
    while !ready.is_empty() {
        let open_depth = |b: usize| {
            let mut d = 0;
            let mut l = loops.innermost(b);
            while let Some(id) = l {
                if opened[id] && remaining[id] > 0 {
                    d += 1;
                }
                l = loops.loops[id].parent;
            }
            d
        };
        let (i, _) = ready
            .iter()
            .enumerate()
            .max_by_key(|(_, &b)| (open_depth(b), std::cmp::Reverse(cfg.blocks[b].start)))
            .expect("ready is not empty");
        let b = ready.swap_remove(i);
        placed[b] = true;
        order.push(b);
        let mut l = loops.innermost(b);
        while let Some(id) = l {
            if loops.loops[id].header == b {
                opened[id] = true;
            }
            remaining[id] -= 1;
            l = loops.loops[id].parent;
        }
        for &v in &succ[b] {
            if !is_back(b, v) {
                indeg[v] -= 1;
                if indeg[v] == 0 {
                    ready.push(v);
                }
            }
        }
    }
    order.extend((0..nb).filter(|&b| !placed[b]));
    order
}

/// The break target of every `brk`: walk the body with the static token stack (the first
/// stack that reaches a pc; `validate_tokens` has checked that they agree), where `ssy`,
/// `preBrk` and `preRet` push, `sync` and a `call` pop, and `brk` pops to the innermost break
/// token and continues at its target (Habermaier §5.4 `unwind`).
fn break_targets(f: &Function) -> Vec<Pc> {
    #[derive(Clone, Copy)]
    enum Tok {
        Sync,
        Break(Pc),
        Call,
    }
    let n = f.body.len();
    let mut out = vec![NO_PC; n];
    let mut seen = vec![false; n];
    let mut work: Vec<(Pc, Vec<Tok>)> = vec![(0, Vec::new())];
    while let Some((pc, mut stack)) = work.pop() {
        if pc as usize >= n || seen[pc as usize] {
            continue;
        }
        seen[pc as usize] = true;
        let inst = &f.body[pc as usize];
        let guarded = inst.guard.is_some();
        match &inst.op {
            Op::Ssy { .. } => stack.push(Tok::Sync),
            Op::PreRet { .. } => stack.push(Tok::Call),
            Op::PreBrk { target } => stack.push(Tok::Break(*target)),
            Op::Sync => {
                stack.pop();
            }
            Op::Call { .. } => {
                if matches!(stack.last(), Some(Tok::Call)) {
                    stack.pop();
                }
            }
            Op::Brk => {
                let mut below = stack.clone();
                while let Some(t) = below.pop() {
                    if let Tok::Break(target) = t {
                        out[pc as usize] = target;
                        work.push((target, below));
                        break;
                    }
                }
                if guarded {
                    work.push((pc + 1, stack));
                }
                continue;
            }
            Op::Bra { target, .. } => {
                work.push((*target, stack.clone()));
                if guarded {
                    work.push((pc + 1, stack));
                }
                continue;
            }
            Op::BrxIdx { targets, .. } => {
                work.extend(targets.iter().map(|&t| (t, stack.clone())));
                if guarded {
                    work.push((pc + 1, stack));
                }
                continue;
            }
            Op::Ret { .. } | Op::Exit | Op::Trap => {
                if guarded {
                    work.push((pc + 1, stack));
                }
                continue;
            }
            _ => {}
        }
        work.push((pc + 1, stack));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func(src: &str) -> Function {
        let m = gpusim_isa::parse_module("t.ptx", src).expect("parses");
        let f = m.functions.into_iter().next().expect("one function");
        gpusim_isa::analysis::insert_tokens(&f).expect("tokens")
    }

    const LOOP: &str = r#"
.version 7.0
.target sm_52
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
L1:
    add.u32 %r2, %r2, 1;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    setp.eq.u32 %p2, %r2, 7;
    @%p2 bra L1;
    add.u32 %r2, %r2, 2;
    bra L1;
DONE:
    ret;
}
"#;

    /// The loop exit (a `brk` after token insertion) post-dominates the loop's branches, and the
    /// whole loop is scheduled before its exit.
    #[test]
    fn loop_exit_is_the_ipdom_and_comes_after_the_loop() {
        let f = func(LOOP);
        let info = analyze_function(&f);
        let brk = f.body.iter().position(|i| i.op == Op::Brk).unwrap();
        let target = info.break_target[brk];
        assert_ne!(target, NO_PC);
        assert_eq!(info.ipdom[brk], target);
        let pre_brk = f
            .body
            .iter()
            .position(|i| matches!(i.op, Op::PreBrk { .. }))
            .unwrap();
        let loop_pcs = (pre_brk + 1)..(target as usize);
        for pc in loop_pcs {
            assert!(
                info.priority[pc] < info.priority[target as usize],
                "pc {pc} of the loop must run before the exit {target}"
            );
        }
    }

    /// If/else: the branch reconverges at the join, which runs after both sides.
    #[test]
    fn if_else_reconverges_at_the_join() {
        let src = r#"
.version 7.0
.target sm_52
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra THEN;
    add.u32 %r2, %r1, 1;
    bra JOIN;
THEN:
    add.u32 %r2, %r1, 2;
JOIN:
    add.u32 %r3, %r2, 1;
    ret;
}
"#;
        let f = func(src);
        let info = analyze_function(&f);
        let br = f
            .body
            .iter()
            .position(|i| matches!(i.op, Op::Bra { .. }) && i.guard.is_some())
            .unwrap();
        let join = info.ipdom[br];
        assert_ne!(join, NO_PC);
        // The join is the sync pad: the instruction there is `sync` (token insertion).
        assert_eq!(f.body[join as usize].op, Op::Sync);
        for pc in br + 1..join as usize {
            assert!(info.priority[pc] < info.priority[join as usize]);
        }
    }
}
