//! Which registers the checker tracks and which of them an instruction reads and writes.
//!
//! Registers are per thread, so only the asynchronous units can race on them: wgmma's
//! accumulators (wgD) and A fragments (wgA) (digest §1.5, §2.4 "any non-wgmma register access
//! to D needs `wgmma.wait_group`, and a register write before wgmma needs `wgmma.fence`").
//! The checker therefore tracks exactly the registers some `wgmma.mma_async` names, and the
//! simulator records an ordinary instruction only where it touches one of them
//! (`Interest::touches`).

use crate::uniformity::effects::effect;
use gpusim_isa::{FuncKind, Inst, Module, Op, Operand, WgmmaA};
use std::collections::HashSet;

/// The registers wgmma names, per function, and the ordinary instructions touching them.
#[derive(Clone, Debug, Default)]
pub struct Interest {
    regs: HashSet<(u32, u32)>,
    /// `touches[func][pc]`: an instruction other than wgmma reads or writes a tracked
    /// register.
    touches: Vec<Vec<bool>>,
    /// Whether the module has any instruction the checker acts on.
    uses_async: bool,
}

impl Interest {
    pub fn new(module: &Module) -> Interest {
        let mut regs = HashSet::new();
        let mut uses_async = false;
        for (f, func) in module.functions.iter().enumerate() {
            for inst in &func.body {
                if let Op::Wgmma(w) = &inst.op {
                    regs.extend(w.d.as_slice().iter().map(|r| (f as u32, r.0)));
                    if let WgmmaA::Regs(l) = &w.a {
                        regs.extend(l.as_slice().iter().map(|r| (f as u32, r.0)));
                    }
                }
                uses_async |= is_async(&inst.op);
            }
        }
        let touches = module
            .functions
            .iter()
            .enumerate()
            .map(|(f, func)| {
                func.body
                    .iter()
                    .map(|inst| {
                        !matches!(inst.op, Op::Wgmma(_)) && {
                            let (r, w) = ordinary_regs(inst, func.kind == FuncKind::Entry);
                            r.iter().chain(&w).any(|x| regs.contains(&(f as u32, *x)))
                        }
                    })
                    .collect()
            })
            .collect();
        Interest {
            regs,
            touches,
            uses_async,
        }
    }

    /// The kernel uses an asynchronous unit or its synchronisation (the checker has work).
    pub fn uses_async(&self) -> bool {
        self.uses_async
    }

    pub fn touches(&self, func: u32, pc: u32) -> bool {
        self.touches
            .get(func as usize)
            .and_then(|v| v.get(pc as usize))
            .copied()
            .unwrap_or(false)
    }

    pub fn tracked(&self, func: u32, reg: u32) -> bool {
        self.regs.contains(&(func, reg))
    }
}

/// The instructions of the asynchronous units and their synchronisation.
pub fn is_async(op: &Op) -> bool {
    matches!(
        op,
        Op::Wgmma(_)
            | Op::WgmmaFence
            | Op::WgmmaCommit
            | Op::WgmmaWait { .. }
            | Op::CpAsync { .. }
            | Op::CpAsyncCommit
            | Op::CpAsyncWait { .. }
            | Op::CpAsyncMbarArrive { .. }
            | Op::CpAsyncBulk { .. }
            | Op::CpAsyncBulkTensor { .. }
            | Op::CpAsyncBulkCommit
            | Op::CpAsyncBulkWait { .. }
            | Op::MbarArrive { .. }
            | Op::MbarWait { .. }
            | Op::FenceProxyAsync { .. }
            | Op::BarrierCluster { .. }
    )
}

/// (registers read, registers written) by an ordinary instruction, guard included.
pub fn ordinary_regs(inst: &Inst, in_entry: bool) -> (Vec<u32>, Vec<u32>) {
    let e = effect(inst, in_entry);
    let mut reads: Vec<u32> = e
        .reads
        .iter()
        .filter_map(|o| match o {
            Operand::Reg(r) | Operand::NotReg(r) => Some(r.0),
            _ => None,
        })
        .collect();
    if let Some(g) = inst.guard {
        reads.push(g.reg.0);
    }
    (reads, e.writes.iter().map(|r| r.0).collect())
}
