//! Decoding the warpgroup matrix instructions (PTX ISA 9.0 §9.7.15): `wgmma.mma_async`,
//! `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group`.

use super::*;

impl<'a> ModuleParser<'a> {
    /// `wgmma.*.sync.aligned`.
    pub(super) fn decode_wgmma(
        &mut self,
        b: &mut Body,
        nspan: Span,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        let kind = match m.take_any(&["mma_async", "fence", "commit_group", "wait_group"]) {
            Some(k) => k,
            None => {
                return Err(self.c.err(
                    nspan,
                    "unsupported `wgmma` form: gpusim supports wgmma.mma_async, wgmma.fence, wgmma.commit_group and wgmma.wait_group",
                ))
            }
        };
        if !(m.take("sync") && m.take("aligned")) {
            return Err(self.c.err(
                span,
                format!("`wgmma.{kind}` needs .sync and .aligned (wgmma.{kind}.sync.aligned)"),
            ));
        }
        match kind {
            "fence" => {
                self.nargs(raw, 0, "wgmma.fence", span)?;
                Ok(Op::WgmmaFence)
            }
            "commit_group" => {
                self.nargs(raw, 0, "wgmma.commit_group", span)?;
                Ok(Op::WgmmaCommit)
            }
            "wait_group" => {
                self.nargs(raw, 1, "wgmma.wait_group", span)?;
                match self.src(b, &raw[0], Type::U32)? {
                    Operand::Imm(n) if n <= u32::MAX as u64 => Ok(Op::WgmmaWait { n: n as u32 }),
                    _ => Err(self.c.err(
                        raw[0].span(),
                        "`wgmma.wait_group` takes an integer constant N",
                    )),
                }
            }
            _ => self.wgmma_mma(b, m, raw, span),
        }
    }

    /// `wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype d, a, b-desc, scale-d,
    /// imm-scale-a, imm-scale-b{, imm-trans-a}{, imm-trans-b}` (PTX ISA 9.0 §9.7.15.5.2).
    fn wgmma_mma(&mut self, b: &mut Body, m: &mut Mods, raw: &[RawOp], span: Span) -> PResult<Op> {
        // The rest of the modifiers, in order: shape, dtype, atype, btype.
        let rest: Vec<(usize, String, Span)> = m
            .list
            .iter()
            .enumerate()
            .filter(|(i, _)| !m.used[*i])
            .map(|(i, (w, s))| (i, w.clone(), *s))
            .collect();
        let [(_, shape, sspan), (_, dname, dspan), (_, aname, aspan), (_, bname, bspan)] =
            rest.as_slice()
        else {
            return Err(self.c.err(
                span,
                "`wgmma.mma_async` needs .m64nNkK.dtype.atype.btype, e.g. .m64n128k16.f32.bf16.bf16",
            ));
        };
        let ty = |w: &str, s: Span| {
            WgmmaType::from_name(w).ok_or_else(|| {
                self.c.err(
                    s,
                    format!("unsupported `wgmma` input type .{w}: gpusim supports .f16, .bf16, .tf32, .e4m3 and .e5m2"),
                )
            })
        };
        let aty = ty(aname, *aspan)?;
        let bty = ty(bname, *bspan)?;
        let dty = match dname.as_str() {
            "f32" => Type::F32,
            "f16" => Type::F16,
            other => {
                return Err(self.c.err(
                    *dspan,
                    format!(
                    "unsupported `wgmma` accumulator type .{other}: gpusim supports .f32 and .f16"
                ),
                ))
            }
        };
        if !semantics::types_valid(dty, aty, bty) {
            return Err(self.c.err(
                span,
                format!(
                    "`wgmma` is not defined for .{}.{}.{} (f16: .f16/.f32 accumulators; bf16, tf32: .f32; e4m3/e5m2: .f16/.f32)",
                    dname, aname, bname
                ),
            ));
        }
        let k = aty.k();
        let n = shape
            .strip_prefix("m64n")
            .and_then(|s| s.strip_suffix(&format!("k{k}")))
            .and_then(|s| s.parse::<u16>().ok());
        let n = match n {
            Some(n) if (8..=256).contains(&n) && n % 8 == 0 => n,
            _ => {
                return Err(self.c.err(
                    *sspan,
                    format!(
                        "unsupported `wgmma` shape .{shape} for .{aname}: expected .m64nNk{k} with N = 8, 16, ..., 256"
                    ),
                ))
            }
        };
        for (i, ..) in &rest {
            m.used[*i] = true;
        }
        let a_regs = matches!(raw.get(1), Some(RawOp::Vec(..)));
        let trans_ok = semantics::transpose_allowed(aty);
        // d, a, b, scale-d, scale-a, scale-b, then trans-a (descriptor A only) and trans-b.
        let want = 6 + if trans_ok {
            1 + usize::from(!a_regs)
        } else {
            0
        };
        if raw.len() != want {
            return Err(self.c.err(
                span,
                format!(
                    "`wgmma.mma_async` with .{aname} and A {} takes {want} operands (d, a, b-desc, scale-d, imm-scale-a, imm-scale-b{}), found {}",
                    if a_regs { "in registers" } else { "from a descriptor" },
                    match (trans_ok, a_regs) {
                        (false, _) => "",
                        (true, true) => ", imm-trans-b",
                        (true, false) => ", imm-trans-a, imm-trans-b",
                    },
                    raw.len()
                ),
            ));
        }
        let nd = semantics::d_regs(n as usize, dty);
        let d = self.reg_list(b, &raw[0], nd, "d")?;
        let a = if a_regs {
            WgmmaA::Regs(self.reg_list(b, &raw[1], semantics::A_REGS, "a")?)
        } else {
            WgmmaA::Desc(self.desc_operand(b, &raw[1], "a-desc")?)
        };
        let bd = self.desc_operand(b, &raw[2], "b-desc")?;
        let scale_d = match &raw[3] {
            RawOp::Imm(..) => match self.src(b, &raw[3], Type::U32)? {
                Operand::Imm(v) if v <= 1 => Operand::Imm(v),
                _ => {
                    return Err(self
                        .c
                        .err(raw[3].span(), "`wgmma` scale-d is a predicate or 0 / 1"))
                }
            },
            other => {
                let o = self.src_as(b, other, Type::Pred, None)?;
                match o {
                    Operand::Reg(r) | Operand::NotReg(r)
                        if b.regs.get(r.0 as usize).map(|i| i.ty) == Some(Type::Pred) =>
                    {
                        o
                    }
                    _ => {
                        return Err(self
                            .c
                            .err(other.span(), "`wgmma` scale-d is a predicate or 0 / 1"))
                    }
                }
            }
        };
        let imm =
            |this: &mut Self, b: &mut Body, i: usize, what: &str, ok: &[i64]| -> PResult<i64> {
                let v = match this.src(b, &raw[i], Type::S32)? {
                    Operand::Imm(v) => v as u32 as i32 as i64,
                    _ => i64::MAX,
                };
                if ok.contains(&v) {
                    Ok(v)
                } else {
                    Err(this.c.err(
                        raw[i].span(),
                        format!(
                            "`wgmma` {what} is an immediate: {}",
                            ok.iter()
                                .map(|x| x.to_string())
                                .collect::<Vec<_>>()
                                .join(" or ")
                        ),
                    ))
                }
            };
        let neg_a = imm(self, b, 4, "imm-scale-a", &[1, -1])? == -1;
        let neg_b = imm(self, b, 5, "imm-scale-b", &[1, -1])? == -1;
        let (trans_a, trans_b) = match (trans_ok, a_regs) {
            (false, _) => (false, false),
            (true, true) => (false, imm(self, b, 6, "imm-trans-b", &[0, 1])? == 1),
            (true, false) => (
                imm(self, b, 6, "imm-trans-a", &[0, 1])? == 1,
                imm(self, b, 7, "imm-trans-b", &[0, 1])? == 1,
            ),
        };
        Ok(Op::Wgmma(Box::new(Wgmma {
            n,
            dty,
            aty,
            bty,
            d,
            a,
            b: bd,
            scale_d,
            neg_a,
            neg_b,
            trans_a,
            trans_b,
        })))
    }

    /// A 64-bit descriptor: a register or an immediate.
    fn desc_operand(&mut self, b: &mut Body, raw: &RawOp, what: &str) -> PResult<Operand> {
        match self.src(b, raw, Type::B64)? {
            o @ (Operand::Reg(_) | Operand::Imm(_)) => Ok(o),
            _ => Err(self.c.err(
                raw.span(),
                format!("`wgmma` {what} is a 64-bit register or immediate"),
            )),
        }
    }

    /// A brace list of exactly `n` registers.
    fn reg_list(&mut self, b: &mut Body, raw: &RawOp, n: usize, what: &str) -> PResult<RegList> {
        let RawOp::Vec(items, _) = raw else {
            return Err(self.c.err(
                raw.span(),
                format!("`wgmma` operand {what} is a brace list of {n} registers"),
            ));
        };
        if items.len() != n {
            return Err(self.c.err(
                raw.span(),
                format!(
                    "`wgmma` operand {what} takes {n} registers here, found {}",
                    items.len()
                ),
            ));
        }
        let mut regs = Vec::with_capacity(n);
        for it in items {
            regs.push(match it {
                RawOp::Name(name, s) => b
                    .lookup_reg(name)
                    .ok_or_else(|| self.c.err(*s, format!("undefined register `{name}`")))?,
                other => {
                    return Err(self.c.err(
                        other.span(),
                        format!("`wgmma` operand {what} takes registers"),
                    ))
                }
            });
        }
        Ok(RegList(regs.into_boxed_slice()))
    }
}
