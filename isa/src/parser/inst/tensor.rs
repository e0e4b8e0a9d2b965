//! Decoding tensor-core instructions: mma.sync and the fragment moves ldmatrix / stmatrix.

use super::*;

impl<'a> ModuleParser<'a> {
    /// Tensor-core instructions.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decode_tensor(
        &mut self,
        b: &mut Body,
        name: &str,
        _nspan: Span,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
        _inst_idx: usize,
    ) -> PResult<Op> {
        match name {
            "mma" => self.mma(b, m, raw, span),
            "ldmatrix" | "stmatrix" => self.matrix(b, name, m, raw, span),
            _ => unreachable!("`decode` dispatches only tensor instructions here"),
        }
    }

    /// `mma.sync.aligned.shape.row.col.f32.ty.ty.f32 d, a, b, c` with shape m16n8k16 (f16,
    /// bf16) or m16n8k8 (f16, bf16, tf32), and the integer forms
    /// `mma.sync.aligned.shape.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32` with shape m8n8k16,
    /// m16n8k16 or m16n8k32: PTX ISA 9.0 §9.7.14.5.14. Other shapes and types, and f16
    /// accumulators, are rejected by name.
    pub(super) fn mma(
        &mut self,
        b: &mut Body,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        if !(m.take("sync") && m.take("aligned")) {
            return Err(self
                .c
                .err(span, "`mma` needs .sync and .aligned (mma.sync.aligned...)"));
        }
        // The Volta quad-pair shape has its own layouts and accumulator types (PTX ISA 9.0
        // §9.7.14.5.1): `wmma.rs`.
        if m.take("m8n8k4") {
            return self.mma_m884(b, m, raw, span);
        }
        let shape_name = match m.take_any(&["m16n8k16", "m16n8k8", "m8n8k16", "m16n8k32"]) {
            Some(s) => s,
            None => {
                return Err(self.c.err(
                    span,
                    "unsupported `mma` shape: gpusim supports .m16n8k16 and .m16n8k8 (floating point), .m8n8k4 (.f16) and .m8n8k16, .m16n8k16 and .m16n8k32 (.s8/.u8)",
                ))
            }
        };
        // The rest, in order: .row.col{.satfinite}.dtype.atype.btype.ctype.
        let rest: Vec<(usize, String)> = m
            .list
            .iter()
            .enumerate()
            .filter(|(i, _)| !m.used[*i])
            .map(|(i, (w, _))| (i, w.clone()))
            .collect();
        let words: Vec<&str> = rest.iter().map(|(_, w)| w.as_str()).collect();
        let int_ty = |w: &str| match w {
            "s8" => Some(MmaIntType::S8),
            "u8" => Some(MmaIntType::U8),
            _ => None,
        };
        // Integer forms: .s32 accumulators, row.col only (the only layout PTX defines for them).
        let int_form = match words.as_slice() {
            ["row", "col", "s32", a, bt, "s32"] => int_ty(a).zip(int_ty(bt)).map(|t| (false, t)),
            ["row", "col", "satfinite", "s32", a, bt, "s32"] => {
                int_ty(a).zip(int_ty(bt)).map(|t| (true, t))
            }
            _ => None,
        };
        if let Some((satfinite, (aty, bty))) = int_form {
            let shape = match shape_name {
                "m8n8k16" => MmaIntShape::M8n8k16,
                "m16n8k16" => MmaIntShape::M16n8k16,
                "m16n8k32" => MmaIntShape::M16n8k32,
                other => {
                    return Err(self.c.err(
                        span,
                        format!("`mma.{other}` is not defined for .s8/.u8 inputs (use .m8n8k16, .m16n8k16 or .m16n8k32)"),
                    ))
                }
            };
            for (i, _) in rest {
                m.used[i] = true;
            }
            self.nargs(raw, 4, "mma", span)?;
            let (na, nb, nc) = semantics::mma_int_regs(shape);
            return Ok(Op::MmaInt {
                shape,
                aty,
                bty,
                satfinite,
                d: self.reg_vec(b, &raw[0], nc, "mma", "d")?,
                a: self.reg_vec(b, &raw[1], na, "mma", "a")?,
                b: self.reg_vec(b, &raw[2], nb, "mma", "b")?,
                c: self.reg_vec(b, &raw[3], nc, "mma", "c")?,
            });
        }
        let shape = match shape_name {
            "m16n8k16" => MmaShape::M16n8k16,
            "m16n8k8" => MmaShape::M16n8k8,
            other => {
                return Err(self.c.err(
                    span,
                    format!(
                        "unsupported `mma` form .{other}.{}: gpusim supports .{other} only as .row.col{{.satfinite}}.s32.{{s8,u8}}.{{s8,u8}}.s32",
                        words.join(".")
                    ),
                ))
            }
        };
        let ty = match words.as_slice() {
            ["row", "col", "f32", a, bt, "f32"] if a == bt => match *a {
                "f16" => MmaType::F16,
                "bf16" => MmaType::Bf16,
                "tf32" => MmaType::Tf32,
                other => {
                    return Err(self.c.err(
                        span,
                        format!("unsupported `mma` input type .{other}: gpusim supports .f16, .bf16 and .tf32"),
                    ))
                }
            },
            _ => {
                return Err(self.c.err(
                    span,
                    format!(
                        "unsupported `mma` form .{}: gpusim supports .row.col.f32.{{f16,bf16,tf32}}.{{f16,bf16,tf32}}.f32 (same A and B type, f32 accumulators)",
                        words.join(".")
                    ),
                ))
            }
        };
        let Some((na, nb)) = semantics::mma_regs(shape, ty) else {
            return Err(self.c.err(
                span,
                format!(
                    "`mma.{}` is not defined for .{} inputs (use .m16n8k8)",
                    shape.name(),
                    ty.name()
                ),
            ));
        };
        for (i, _) in rest {
            m.used[i] = true;
        }
        self.nargs(raw, 4, "mma", span)?;
        let d = self.dst_vec(b, &raw[0])?;
        if d.len != 4 {
            return Err(self
                .c
                .err(raw[0].span(), "`mma` operand d takes 4 .f32 registers"));
        }
        Ok(Op::Mma {
            shape,
            ty,
            d,
            a: self.reg_vec(b, &raw[1], na, "mma", "a")?,
            b: self.reg_vec(b, &raw[2], nb, "mma", "b")?,
            c: self.reg_vec(b, &raw[3], 4, "mma", "c")?,
        })
    }

    /// `ldmatrix.sync.aligned.m8n8.num{.trans}{.shared{::cta}}.b16 d, [p]` and
    /// `stmatrix.sync.aligned.m8n8.num{.trans}{.shared{::cta}}.b16 [p], r` with num .x1, .x2
    /// or .x4 (PTX ISA 9.0 §9.7.14.5.15–16); d / r take one register per matrix. The other
    /// shapes and element types (.m16n16, .m8n16, .b8) are rejected by name.
    fn matrix(
        &mut self,
        b: &mut Body,
        name: &str,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        if !(m.take("sync") && m.take("aligned")) {
            return Err(self.c.err(
                span,
                format!("`{name}` needs .sync and .aligned ({name}.sync.aligned...)"),
            ));
        }
        if !m.take("m8n8") {
            return Err(self.c.err(
                span,
                format!("unsupported `{name}` shape: gpusim supports .m8n8"),
            ));
        }
        let num = match m.take_any(&["x1", "x2", "x4"]) {
            Some("x1") => 1,
            Some("x2") => 2,
            Some(_) => 4,
            None => return Err(self.c.err(span, format!("`{name}` needs .x1, .x2 or .x4"))),
        };
        let trans = m.take("trans");
        let space = match m.take_any(&["shared", "shared::cta"]) {
            Some(_) => Space::Shared,
            None => Space::Generic,
        };
        if !m.take("b16") {
            return Err(self.c.err(
                span,
                format!("unsupported `{name}` element type: gpusim supports .b16"),
            ));
        }
        self.nargs(raw, 2, name, span)?;
        Ok(if name == "ldmatrix" {
            Op::Ldmatrix {
                num,
                trans,
                space,
                d: self.reg_vec(b, &raw[0], num as usize, name, "d")?,
                addr: self.addr(b, &raw[1])?,
            }
        } else {
            Op::Stmatrix {
                num,
                trans,
                space,
                addr: self.addr(b, &raw[0])?,
                src: self.reg_vec(b, &raw[1], num as usize, name, "r")?,
            }
        })
    }

    /// A vector of exactly `n` registers (`{%r1, %r2}`; one register may go without braces),
    /// for the `what` operand of instruction `inst`.
    pub(super) fn reg_vec(
        &mut self,
        b: &mut Body,
        raw: &RawOp,
        n: usize,
        inst: &str,
        what: &str,
    ) -> PResult<RegVec> {
        let items: Vec<&RawOp> = match raw {
            RawOp::Vec(items, _) => items.iter().collect(),
            other => vec![other],
        };
        if items.len() != n {
            return Err(self.c.err(
                raw.span(),
                format!(
                    "`{inst}` operand {what} takes {n} register{} here, found {}",
                    if n == 1 { "" } else { "s" },
                    items.len()
                ),
            ));
        }
        let mut v = RegVec {
            regs: [RegId(0); RegVec::MAX],
            len: n as u8,
        };
        for (i, it) in items.into_iter().enumerate() {
            v.regs[i] = match it {
                RawOp::Name(name, s) => b
                    .lookup_reg(name)
                    .ok_or_else(|| self.c.err(*s, format!("undefined register `{name}`")))?,
                other => {
                    return Err(self.c.err(
                        other.span(),
                        format!("`{inst}` operand {what} takes registers"),
                    ))
                }
            };
        }
        Ok(v)
    }
}
