//! Basic blocks of a function body, their successors and predecessors, and a virtual exit node.
//!
//! Leaders are pc 0, every branch or token target, and the instruction after a `bra`, `brx.idx`,
//! `ret`, `exit`, `trap`, `brk` or `sync`. A guarded `bra` has two successors (target, then the
//! fall-through), an unguarded one has one; `brx.idx` has its table (and the fall-through when
//! guarded). Unguarded `ret`, `exit`, `trap` and `brk` end a path; a `call` does not end a block.
//! Paths that end, and a body that runs off its last instruction, lead to the virtual exit node,
//! whose index is `blocks.len()`.

use super::AnalysisError;
use crate::ir::{Function, Inst, Op, Pc};

/// A maximal straight-line run of instructions `start..end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BasicBlock {
    pub start: Pc,
    /// One past the last instruction.
    pub end: Pc,
    /// Successor blocks, without duplicates, in the order of the terminator's targets
    /// (branch target first, fall-through last).
    pub succs: Vec<usize>,
    pub preds: Vec<usize>,
    /// The block leads to the virtual exit: its path ends, or it runs off the end of the body.
    pub to_exit: bool,
}

impl BasicBlock {
    pub fn last_pc(&self) -> Pc {
        self.end - 1
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    pub blocks: Vec<BasicBlock>,
    block_of: Vec<usize>,
}

impl Cfg {
    /// Build the CFG; fails when a branch or token target lies outside the body
    /// (program-address consistency, Habermaier §6.2).
    pub fn build(f: &Function) -> Result<Cfg, AnalysisError> {
        check_targets(f)?;
        let leaders = leaders(f);
        let mut blocks = Vec::new();
        let mut block_of = vec![0; f.body.len()];
        for (i, &start) in leaders.iter().enumerate() {
            let end = leaders.get(i + 1).copied().unwrap_or(f.body.len() as Pc);
            for pc in start..end {
                block_of[pc as usize] = i;
            }
            blocks.push(BasicBlock {
                start,
                end,
                succs: vec![],
                preds: vec![],
                to_exit: false,
            });
        }
        let mut cfg = Cfg { blocks, block_of };
        cfg.link(f);
        Ok(cfg)
    }

    /// The block holding instruction `pc`.
    pub fn block_of(&self, pc: Pc) -> usize {
        self.block_of[pc as usize]
    }

    pub fn entry(&self) -> usize {
        0
    }

    /// Index of the virtual exit node.
    pub fn exit(&self) -> usize {
        self.blocks.len()
    }

    /// Successor lists of the blocks plus the virtual exit (last, without successors).
    pub fn succs_with_exit(&self) -> Vec<Vec<usize>> {
        let mut succ: Vec<Vec<usize>> = self.blocks.iter().map(|b| b.succs.clone()).collect();
        for (b, s) in self.blocks.iter().zip(succ.iter_mut()) {
            if b.to_exit {
                s.push(self.exit());
            }
        }
        succ.push(Vec::new());
        succ
    }

    /// Successor lists of the blocks alone.
    pub fn succs(&self) -> Vec<Vec<usize>> {
        self.blocks.iter().map(|b| b.succs.clone()).collect()
    }

    fn link(&mut self, f: &Function) {
        let n = f.body.len() as Pc;
        for b in 0..self.blocks.len() {
            let last = self.blocks[b].last_pc();
            let mut to_exit = false;
            let mut succs = Vec::new();
            for pc in successor_pcs(&f.body[last as usize], last) {
                if pc >= n {
                    to_exit = true;
                    continue;
                }
                let s = self.block_of(pc);
                if !succs.contains(&s) {
                    succs.push(s);
                }
            }
            to_exit |= ends_path(&f.body[last as usize]);
            for &s in &succs {
                self.blocks[s].preds.push(b);
            }
            self.blocks[b].succs = succs;
            self.blocks[b].to_exit = to_exit;
        }
    }
}

/// The pcs control may reach from `inst` at `pc` (the fall-through may equal the body length).
pub fn successor_pcs(inst: &Inst, pc: Pc) -> Vec<Pc> {
    let guarded = inst.guard.is_some();
    let mut out = match &inst.op {
        Op::Bra { target, .. } => vec![*target],
        Op::BrxIdx { targets, .. } => targets.clone(),
        Op::Ret { .. } | Op::Exit | Op::Trap | Op::Brk => vec![],
        _ => return vec![pc + 1],
    };
    if guarded {
        out.push(pc + 1);
    }
    out
}

/// An unguarded `ret`, `exit`, `trap` or `brk`: no lane continues after it.
pub fn ends_path(inst: &Inst) -> bool {
    inst.guard.is_none() && matches!(inst.op, Op::Ret { .. } | Op::Exit | Op::Trap | Op::Brk)
}

/// Whether the instruction after `inst` starts a new block.
pub fn ends_block(inst: &Inst) -> bool {
    matches!(
        inst.op,
        Op::Bra { .. }
            | Op::BrxIdx { .. }
            | Op::Ret { .. }
            | Op::Exit
            | Op::Trap
            | Op::Brk
            | Op::Sync
    )
}

/// The pc-valued operands of an instruction: branch, table, ssy, preBrk and preRet targets.
pub fn target_pcs(inst: &Inst) -> Vec<Pc> {
    match &inst.op {
        Op::Bra { target, .. }
        | Op::Ssy { target }
        | Op::PreBrk { target }
        | Op::PreRet { target } => {
            vec![*target]
        }
        Op::BrxIdx { targets, .. } => targets.clone(),
        _ => vec![],
    }
}

fn leaders(f: &Function) -> Vec<Pc> {
    let n = f.body.len();
    let mut is_leader = vec![false; n];
    if n > 0 {
        is_leader[0] = true;
    }
    for (pc, inst) in f.body.iter().enumerate() {
        for t in target_pcs(inst) {
            is_leader[t as usize] = true;
        }
        if ends_block(inst) && pc + 1 < n {
            is_leader[pc + 1] = true;
        }
    }
    (0..n as Pc).filter(|&pc| is_leader[pc as usize]).collect()
}

fn check_targets(f: &Function) -> Result<(), AnalysisError> {
    let n = f.body.len() as Pc;
    for inst in &f.body {
        if let Some(t) = target_pcs(inst).into_iter().find(|&t| t >= n) {
            let msg = format!("target pc {t} lies outside the function body ({n} instructions)");
            return Err(AnalysisError::new(&f.name, inst.span, msg));
        }
    }
    Ok(())
}
