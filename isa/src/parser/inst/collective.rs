//! Decoding warp collectives: shfl, vote, match, activemask, redux.

use super::*;

impl<'a> ModuleParser<'a> {
    /// Warp collectives.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decode_collective(
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
            "shfl" => {
                let sync = m.take("sync");
                let mode = match m.take_any(&["up", "down", "bfly", "idx"]) {
                    Some("up") => ShflMode::Up,
                    Some("down") => ShflMode::Down,
                    Some("bfly") => ShflMode::Bfly,
                    Some(_) => ShflMode::Idx,
                    None => return Err(self.c.err(span, "`shfl` needs .up, .down, .bfly or .idx")),
                };
                let ty = self.one_type(m, name, span)?;
                self.nargs(raw, if sync { 5 } else { 4 }, name, span)?;
                let (d, p) = self.dst_pair(b, &raw[0], ty)?;
                let mask = if sync {
                    self.src(b, &raw[4], Type::B32)?
                } else {
                    Operand::Imm(u32::MAX as u64)
                };
                Ok(Op::Shfl {
                    mode,
                    d,
                    p,
                    a: self.src(b, &raw[1], ty)?,
                    b: self.src(b, &raw[2], Type::B32)?,
                    c: self.src(b, &raw[3], Type::B32)?,
                    mask,
                })
            }
            "vote" => {
                let sync = m.take("sync");
                let mode = match m.take_any(&["all", "any", "uni", "ballot"]) {
                    Some("all") => VoteMode::All,
                    Some("any") => VoteMode::Any,
                    Some("uni") => VoteMode::Uni,
                    Some(_) => VoteMode::Ballot,
                    None => {
                        return Err(self.c.err(span, "`vote` needs .all, .any, .uni or .ballot"))
                    }
                };
                // .pred for all/any/uni, .b32 for ballot: the destination's type.
                let dty = self.one_type(m, name, span)?;
                self.nargs(raw, if sync { 3 } else { 2 }, name, span)?;
                let mask = if sync {
                    self.src(b, &raw[2], Type::B32)?
                } else {
                    Operand::Imm(u32::MAX as u64)
                };
                Ok(Op::Vote {
                    mode,
                    d: self.dst_t(b, &raw[0], dty)?,
                    a: self.src(b, &raw[1], Type::Pred)?,
                    mask,
                })
            }
            "match" => {
                let mode = match m.take_any(&["any", "all"]) {
                    Some("any") => MatchMode::Any,
                    Some(_) => MatchMode::All,
                    None => return Err(self.c.err(span, "`match` needs .any or .all")),
                };
                m.take("sync");
                let ty = self.one_type(m, name, span)?;
                self.nargs(raw, 3, name, span)?;
                let (d, p) = self.dst_pair(b, &raw[0], Type::B32)?;
                Ok(Op::Match {
                    mode,
                    ty,
                    d,
                    p,
                    a: self.src(b, &raw[1], ty)?,
                    mask: self.src(b, &raw[2], Type::B32)?,
                })
            }
            "activemask" => {
                let _ = self.one_type(m, name, span)?;
                self.nargs(raw, 1, name, span)?;
                Ok(Op::ActiveMask {
                    d: self.dst_t(b, &raw[0], Type::B32)?,
                })
            }
            "redux" => {
                if !m.take("sync") {
                    return Err(self.c.err(span, "`redux` needs .sync"));
                }
                let op = match m.take_any(&["add", "min", "max", "and", "or", "xor"]) {
                    Some("add") => ReduxOp::Add,
                    Some("min") => ReduxOp::Min,
                    Some("max") => ReduxOp::Max,
                    Some("and") => ReduxOp::And,
                    Some("or") => ReduxOp::Or,
                    Some(_) => ReduxOp::Xor,
                    None => {
                        return Err(self.c.err(
                            span,
                            "`redux.sync` needs .add, .min, .max, .and, .or or .xor",
                        ))
                    }
                };
                let ty = self.one_type(m, name, span)?;
                let bitwise = matches!(op, ReduxOp::And | ReduxOp::Or | ReduxOp::Xor);
                let ok = if bitwise {
                    ty == Type::B32
                } else {
                    matches!(ty, Type::U32 | Type::S32)
                };
                if !ok {
                    let want = if bitwise { ".b32" } else { ".u32 or .s32" };
                    return Err(self.c.err(
                        span,
                        format!(
                            "`redux.sync` with this operation takes {want}, not .{}",
                            ty.name()
                        ),
                    ));
                }
                self.nargs(raw, 3, name, span)?;
                Ok(Op::Redux {
                    op,
                    ty,
                    d: self.dst_t(b, &raw[0], ty)?,
                    a: self.src(b, &raw[1], ty)?,
                    mask: self.src(b, &raw[2], Type::B32)?,
                })
            }
            _ => unreachable!("`decode` dispatches only collective instructions here"),
        }
    }

    /// `d` or `d|p`: d of type `ty`, p a predicate.
    pub(super) fn dst_pair(
        &mut self,
        b: &mut Body,
        raw: &RawOp,
        ty: Type,
    ) -> PResult<(RegId, Option<RegId>)> {
        match raw {
            RawOp::Pair(d, p, _) => {
                Ok((self.dst_t(b, d, ty)?, Some(self.dst_t(b, p, Type::Pred)?)))
            }
            other => Ok((self.dst_t(b, other, ty)?, None)),
        }
    }
}
