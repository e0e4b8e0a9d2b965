//! Decoding barriers, fences and nanosleep.

use super::*;

impl<'a> ModuleParser<'a> {
    /// Barriers, fences and nanosleep.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decode_sync(
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
            "bar" | "barrier" => self.bar(b, name, m, raw, span),
            "membar" => {
                let level = match m.take_any(&["cta", "gl", "sys"]) {
                    Some("cta") => FenceLevel::Cta,
                    Some("gl") => FenceLevel::Gpu,
                    Some(_) => FenceLevel::Sys,
                    None => return Err(self.c.err(span, "`membar` needs .cta, .gl or .sys")),
                };
                self.nargs(raw, 0, name, span)?;
                Ok(Op::Fence { level })
            }
            "fence" => {
                m.take_any(&["sc", "acq_rel"]);
                let level = match m.take_any(&["cta", "gpu", "sys", "cluster"]) {
                    Some("cta") => FenceLevel::Cta,
                    Some("sys") => FenceLevel::Sys,
                    Some(_) => FenceLevel::Gpu,
                    None => return Err(self.c.err(span, "`fence` needs a scope such as .gpu")),
                };
                self.nargs(raw, 0, name, span)?;
                Ok(Op::Fence { level })
            }
            "nanosleep" => {
                let ty = self.one_type(m, name, span)?;
                if ty != Type::U32 {
                    return Err(self.c.err(span, "`nanosleep` takes .u32"));
                }
                self.nargs(raw, 1, name, span)?;
                Ok(Op::Nanosleep {
                    t: self.src(b, &raw[0], Type::U32)?,
                })
            }
            _ => unreachable!("`decode` dispatches only sync instructions here"),
        }
    }

    pub(super) fn bar(
        &mut self,
        b: &mut Body,
        name: &str,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        if name == "bar" && m.take("warp") {
            m.take("sync");
            self.nargs(raw, 1, "bar.warp.sync", span)?;
            return Ok(Op::WarpSync {
                mask: self.src(b, &raw[0], Type::B32)?,
            });
        }
        m.take("cta");
        let aligned = m.take("aligned") || name == "bar";
        let kind = if m.take("sync") {
            BarKind::Sync
        } else if m.take("arrive") {
            BarKind::Arrive
        } else if m.take("red") {
            let r = match m.take_any(&["popc", "and", "or"]) {
                Some("popc") => BarRed::Popc,
                Some("and") => BarRed::And,
                Some("or") => BarRed::Or,
                _ => return Err(self.c.err(span, "`bar.red` needs .popc, .and or .or")),
            };
            BarKind::Red(r)
        } else {
            return Err(self
                .c
                .err(span, format!("`{name}` needs .sync, .arrive or .red")));
        };
        m.take("aligned");
        match kind {
            BarKind::Red(_) => {
                let dty = self.one_type(m, name, span)?;
                if raw.len() != 3 && raw.len() != 4 {
                    return Err(self
                        .c
                        .err(span, "`bar.red` takes d, barrier, [count,] predicate"));
                }
                let d = self.dst_t(b, &raw[0], dty)?;
                let id = self.barrier_id(b, &raw[1])?;
                let count = if raw.len() == 4 {
                    Some(self.barrier_count(b, &raw[2], kind)?)
                } else {
                    None
                };
                let pred = self.src(b, &raw[raw.len() - 1], Type::Pred)?;
                Ok(Op::Bar {
                    kind,
                    id,
                    count,
                    red: Some((d, pred)),
                    aligned,
                })
            }
            _ => {
                if raw.is_empty() || raw.len() > 2 {
                    return Err(self.c.err(
                        span,
                        format!("`{name}` takes a barrier id and an optional thread count"),
                    ));
                }
                if kind == BarKind::Arrive && raw.len() != 2 {
                    return Err(self.c.err(span, "`bar.arrive` needs a thread count"));
                }
                let id = self.barrier_id(b, &raw[0])?;
                let count = if raw.len() == 2 {
                    Some(self.barrier_count(b, &raw[1], kind)?)
                } else {
                    None
                };
                Ok(Op::Bar {
                    kind,
                    id,
                    count,
                    red: None,
                    aligned,
                })
            }
        }
    }

    /// A barrier id: an immediate must be one of the CTA's 16 barriers (PTX ISA `barrier`:
    /// "a logical barrier resource ... with value 0 through 15"; ptxas rejects others).
    fn barrier_id(&mut self, b: &mut Body, raw: &RawOp) -> PResult<Operand> {
        let id = self.src(b, raw, Type::U32)?;
        if let Operand::Imm(v) = id {
            if v > 15 {
                return Err(self.c.err(
                    raw.span(),
                    format!("barrier number {v} is out of range 0..15"),
                ));
            }
        }
        Ok(id)
    }

    /// A barrier's thread count: an immediate must be a multiple of the warp size (PTX ISA
    /// `barrier`: "the value must be a multiple of the warp size"), and not zero for
    /// `bar.arrive` ("a non-zero thread count is required"); ptxas rejects others.
    fn barrier_count(&mut self, b: &mut Body, raw: &RawOp, kind: BarKind) -> PResult<Operand> {
        let count = self.src(b, raw, Type::U32)?;
        if let Operand::Imm(v) = count {
            if v % 32 != 0 {
                return Err(self.c.err(
                    raw.span(),
                    format!("barrier thread count {v} is not a multiple of the warp size (32)"),
                ));
            }
            if v == 0 && kind == BarKind::Arrive {
                return Err(self
                    .c
                    .err(raw.span(), "`bar.arrive` needs a non-zero thread count"));
            }
        }
        Ok(count)
    }
}
