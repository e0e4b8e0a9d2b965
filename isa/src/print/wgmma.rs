//! Printing the warpgroup matrix instructions (`wgmma.*`, PTX ISA 9.0 §9.7.15).

use super::{operand, reg};
use crate::ir::*;

/// The PTX text of `op` if it is a `wgmma` instruction.
pub(super) fn to_ptx(m: &Module, f: &Function, op: &Op) -> Option<String> {
    let list = |l: &RegList| {
        let rs: Vec<&str> = l.as_slice().iter().map(|r| reg(f, *r)).collect();
        format!("{{{}}}", rs.join(", "))
    };
    Some(match op {
        Op::WgmmaFence => "wgmma.fence.sync.aligned;".to_string(),
        Op::WgmmaCommit => "wgmma.commit_group.sync.aligned;".to_string(),
        Op::WgmmaWait { n } => format!("wgmma.wait_group.sync.aligned {n};"),
        Op::Wgmma(w) => {
            let a = match &w.a {
                WgmmaA::Desc(o) => operand(m, f, o, Type::B64),
                WgmmaA::Regs(l) => list(l),
            };
            let scale_d = match w.scale_d {
                Operand::Imm(v) => v.to_string(),
                o => operand(m, f, &o, Type::Pred),
            };
            let sign = |neg: bool| if neg { "-1" } else { "1" };
            let mut s = format!(
                "wgmma.mma_async.sync.aligned.m64n{}k{}.{}.{}.{} {}, {a}, {}, {scale_d}, {}, {}",
                w.n,
                w.aty.k(),
                w.dty.name(),
                w.aty.name(),
                w.bty.name(),
                list(&w.d),
                operand(m, f, &w.b, Type::B64),
                sign(w.neg_a),
                sign(w.neg_b)
            );
            if crate::semantics::transpose_allowed(w.aty) {
                if matches!(w.a, WgmmaA::Desc(_)) {
                    s += &format!(", {}", u8::from(w.trans_a));
                }
                s += &format!(", {}", u8::from(w.trans_b));
            }
            s + ";"
        }
        _ => return None,
    })
}
