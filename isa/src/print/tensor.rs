//! Printing `mma.sync.aligned.m8n8k4` and the `wmma` family (PTX ISA 9.0 §9.7.14.4,
//! §9.7.14.5.14) in the order the parser documents: layouts, shape, space, types.

use super::{address, operand, reg, space_sfx};
use crate::ir::*;

/// The PTX text of `op` if it is `mma.m8n8k4` or a `wmma` instruction.
pub(super) fn to_ptx(m: &Module, f: &Function, op: &Op) -> Option<String> {
    let v = |x: &RegVec| {
        let rs: Vec<&str> = x.as_slice().iter().map(|r| reg(f, *r)).collect();
        format!("{{{}}}", rs.join(", "))
    };
    let stride = |s: &Option<Operand>| match s {
        Some(o) => format!(", {}", operand(m, f, o, Type::U32)),
        None => String::new(),
    };
    Some(match op {
        Op::MmaM884 {
            alayout,
            blayout,
            dty,
            cty,
            d,
            a,
            b,
            c,
        } => format!(
            "mma.sync.aligned.m8n8k4.{}.{}.{}.f16.f16.{} {}, {}, {}, {};",
            alayout.name(),
            blayout.name(),
            dty.name(),
            cty.name(),
            v(d),
            v(a),
            v(b),
            v(c)
        ),
        Op::WmmaLoad {
            frag,
            layout,
            shape,
            space,
            ty,
            d,
            addr,
            stride: st,
        } => format!(
            "wmma.load.{}.sync.aligned.{}.{}{}.{} {}, {}{};",
            frag.name(),
            layout.name(),
            shape.name(),
            space_sfx(*space),
            ty.name(),
            v(d),
            address(m, f, addr),
            stride(st)
        ),
        Op::WmmaStore {
            layout,
            shape,
            space,
            ty,
            addr,
            src,
            stride: st,
        } => format!(
            "wmma.store.d.sync.aligned.{}.{}{}.{} {}, {}{};",
            layout.name(),
            shape.name(),
            space_sfx(*space),
            ty.name(),
            address(m, f, addr),
            v(src),
            stride(st)
        ),
        Op::WmmaMma {
            alayout,
            blayout,
            shape,
            ab,
            dty,
            cty,
            satfinite,
            d,
            a,
            b,
            c,
        } => {
            let types = match ab {
                // `.f16` multiplicands are implicit; the legacy `.satfinite` follows ctype.
                WmmaType::F16 => format!(
                    "{}.{}{}",
                    dty.name(),
                    cty.name(),
                    if *satfinite { ".satfinite" } else { "" }
                ),
                _ => format!(
                    "{}.{t}.{t}.{}{}",
                    dty.name(),
                    cty.name(),
                    if *satfinite { ".satfinite" } else { "" },
                    t = ab.name()
                ),
            };
            format!(
                "wmma.mma.sync.aligned.{}.{}.{}.{types} {}, {}, {}, {};",
                alayout.name(),
                blayout.name(),
                shape.name(),
                v(d),
                v(a),
                v(b),
                v(c)
            )
        }
        _ => return None,
    })
}
