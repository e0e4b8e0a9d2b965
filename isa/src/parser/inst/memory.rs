//! Decoding memory instructions: ld, st, atom, red, and the asynchronous copies cp.async.

use super::*;

impl<'a> ModuleParser<'a> {
    /// Memory instructions: loads, stores, atomics and reductions.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decode_memory(
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
            "ld" | "ldu" => {
                let volatile = m.take("volatile");
                m.take_memory_hints();
                let mut space = space_of(m);
                if name == "ldu" && space == Space::Generic {
                    space = Space::Global;
                }
                let cop = self.cache_op(m, &["ca", "cg", "cs", "lu", "cv"]);
                let _vec = m.take_any(&["v2", "v4"]);
                let ty = self.one_type(m, name, span)?;
                self.nargs(raw, 2, name, span)?;
                Ok(Op::Ld {
                    space,
                    cop,
                    volatile,
                    ty,
                    d: self.dst_vec_as(b, &raw[0], ty, Agree::Wider)?,
                    addr: self.addr(b, &raw[1])?,
                })
            }
            "st" => {
                let volatile = m.take("volatile");
                m.take_memory_hints();
                let space = space_of(m);
                let cop = self.cache_op(m, &["wb", "cg", "cs", "wt"]);
                let _vec = m.take_any(&["v2", "v4"]);
                let ty = self.one_type(m, name, span)?;
                self.nargs(raw, 2, name, span)?;
                Ok(Op::St {
                    space,
                    cop,
                    volatile,
                    ty,
                    addr: self.addr(b, &raw[0])?,
                    src: self.src_vec_as(b, &raw[1], ty, Agree::Wider)?,
                })
            }
            "atom" | "red" => self.atom(b, name, m, raw, span),
            "cp" => self.cp_async(b, m, raw, span),
            _ => unreachable!("`decode` dispatches only memory instructions here"),
        }
    }

    pub(super) fn atom(
        &mut self,
        b: &mut Body,
        name: &str,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        m.take_memory_hints();
        m.take("noftz");
        let space = space_of(m);
        let op = match m.take_any(&[
            "and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max",
        ]) {
            Some("and") => AtomOp::And,
            Some("or") => AtomOp::Or,
            Some("xor") => AtomOp::Xor,
            Some("cas") => AtomOp::Cas,
            Some("exch") => AtomOp::Exch,
            Some("add") => AtomOp::Add,
            Some("inc") => AtomOp::Inc,
            Some("dec") => AtomOp::Dec,
            Some("min") => AtomOp::Min,
            Some("max") => AtomOp::Max,
            _ => {
                return Err(self
                    .c
                    .err(span, format!("`{name}` needs an operation such as .add")))
            }
        };
        let ty = self.one_type(m, name, span)?;
        let is_red = name == "red";
        let n = if is_red {
            2
        } else if op == AtomOp::Cas {
            4
        } else {
            3
        };
        self.nargs(raw, n, name, span)?;
        let (d, rest) = if is_red {
            (None, raw)
        } else {
            (Some(self.dst_t(b, &raw[0], ty)?), &raw[1..])
        };
        let addr = self.addr(b, &rest[0])?;
        let bv = self.src(b, &rest[1], ty)?;
        let c = if op == AtomOp::Cas {
            Some(self.src(b, &rest[2], ty)?)
        } else {
            None
        };
        Ok(Op::Atom {
            space,
            op,
            ty,
            d,
            addr,
            b: bv,
            c,
        })
    }

    /// `cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size}`,
    /// `cp.async.commit_group`, `cp.async.wait_group N`, `cp.async.wait_all` (PTX ISA 9.0
    /// §9.7.9.25.3). The bulk and mbarrier forms are rejected by name.
    fn cp_async(&mut self, b: &mut Body, m: &mut Mods, raw: &[RawOp], span: Span) -> PResult<Op> {
        if !m.take("async") {
            return Err(self.c.err(
                span,
                "unsupported instruction `cp`: gpusim supports cp.async (non-bulk)",
            ));
        }
        if m.take("commit_group") {
            self.nargs(raw, 0, "cp.async.commit_group", span)?;
            return Ok(Op::CpAsyncCommit);
        }
        if m.take("wait_all") {
            self.nargs(raw, 0, "cp.async.wait_all", span)?;
            return Ok(Op::CpAsyncWait { n: None });
        }
        if m.take("wait_group") {
            self.nargs(raw, 1, "cp.async.wait_group", span)?;
            let n = self.imm_int(&raw[0], "cp.async.wait_group's group count")?;
            let n = u32::try_from(n).map_err(|_| {
                self.c.err(
                    raw[0].span(),
                    format!("cp.async.wait_group's group count must be a non-negative 32-bit integer, found {n}"),
                )
            })?;
            return Ok(Op::CpAsyncWait { n: Some(n) });
        }
        let cop = match m.take_any(&["ca", "cg"]) {
            Some("ca") => CacheOp::Ca,
            Some(_) => CacheOp::Cg,
            None => {
                return Err(self.c.err(
                    span,
                    "`cp.async` needs .ca or .cg (or is .commit_group, .wait_group, .wait_all); bulk and mbarrier forms are not supported",
                ))
            }
        };
        // The state spaces name the destination, then the source: .shared.global.
        let at = |w: &[&str]| m.list.iter().position(|(x, _)| w.contains(&x.as_str()));
        let in_order = matches!(
            (at(&["shared", "shared::cta"]), at(&["global"])),
            (Some(d), Some(s)) if d < s
        );
        if !in_order || m.take_any(&["shared", "shared::cta"]).is_none() || !m.take("global") {
            return Err(self.c.err(
                span,
                "`cp.async` copies from .global to .shared{::cta}: write cp.async.ca.shared.global",
            ));
        }
        m.take_memory_hints();
        if !(3..=4).contains(&raw.len()) {
            return Err(self.c.err(
                span,
                format!(
                    "`cp.async` takes 3 or 4 operands ([dst], [src], cp-size{{, src-size}}), found {}",
                    raw.len()
                ),
            ));
        }
        let dst = self.addr(b, &raw[0])?;
        let src = self.addr(b, &raw[1])?;
        let size = self.imm_int(&raw[2], "cp.async's cp-size")?;
        if !matches!(size, 4 | 8 | 16) {
            return Err(self.c.err(
                raw[2].span(),
                format!("cp.async's cp-size must be 4, 8 or 16, found {size}"),
            ));
        }
        if cop == CacheOp::Cg && size != 16 {
            return Err(self.c.err(
                raw[2].span(),
                format!("cp.async.cg copies 16 bytes (PTX ISA: cp-size 16 only), found {size}"),
            ));
        }
        let src_size = match raw.get(3) {
            Some(r) => {
                let o = self.src_as(b, r, Type::U32, None)?;
                // The `ignore-src` predicate form would otherwise read as a size of 0 or 1.
                if let Operand::Reg(x) | Operand::NotReg(x) = o {
                    if b.regs[x.0 as usize].ty == Type::Pred {
                        return Err(self.c.err(
                            r.span(),
                            "cp.async's ignore-src predicate form is not supported (give src-size as a .u32)",
                        ));
                    }
                }
                Some(o)
            }
            None => None,
        };
        Ok(Op::CpAsync {
            cop,
            size: size as u8,
            dst,
            src,
            src_size,
        })
    }

    /// An integer literal operand (`what` names it in the error).
    pub(super) fn imm_int(&self, raw: &RawOp, what: &str) -> PResult<i64> {
        match raw {
            RawOp::Imm(crate::parser::decl::Const::Int(v), _) => Ok(*v),
            other => Err(self
                .c
                .err(other.span(), format!("{what} must be an integer literal"))),
        }
    }

    pub(super) fn cache_op(&self, m: &mut Mods, allowed: &[&str]) -> Option<CacheOp> {
        Some(match m.take_any(allowed)? {
            "ca" => CacheOp::Ca,
            "cg" => CacheOp::Cg,
            "cs" => CacheOp::Cs,
            "lu" => CacheOp::Lu,
            "cv" => CacheOp::Cv,
            "wb" => CacheOp::Wb,
            _ => CacheOp::Wt,
        })
    }
}
