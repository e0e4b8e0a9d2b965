//! Operands: raw syntax first (`RawOp`), then conversion to IR operands once the instruction
//! says which type each position has (so `1.5` becomes f32 bits in an `add.f32`).

use super::body::Body;
use super::cursor::PResult;
use super::decl::Const;
use super::ModuleParser;
use crate::ir::*;
use crate::lexer::Tok;
use crate::span::Span;

#[derive(Clone, Debug)]
pub(crate) enum RawOp {
    Name(String, Span),
    NotName(String, Span),
    Special(SpecialReg, Span),
    Imm(Const, Span),
    /// `[base+offset]`; base None for an absolute address.
    Addr(Option<(String, Span)>, i64, Span),
    Vec(Vec<RawOp>, Span),
    /// `a|b`, for dual destinations.
    Pair(Box<RawOp>, Box<RawOp>, Span),
    Sink(Span),
    /// `(a, b)`, the return and argument lists of `call`.
    List(Vec<RawOp>, Span),
    /// `[base+offset, {c0, c1, …}]`: a tensor map and the coordinates of a TMA box.
    TensorAddr(Option<(String, Span)>, i64, Vec<RawOp>, Span),
}

impl RawOp {
    pub fn span(&self) -> Span {
        match self {
            RawOp::Name(_, s)
            | RawOp::NotName(_, s)
            | RawOp::Special(_, s)
            | RawOp::Imm(_, s)
            | RawOp::Addr(_, _, s)
            | RawOp::Vec(_, s)
            | RawOp::Pair(_, _, s)
            | RawOp::Sink(s)
            | RawOp::List(_, s)
            | RawOp::TensorAddr(_, _, _, s) => *s,
        }
    }
}

/// How a register operand's declared type must agree with the type the instruction gives the
/// operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Agree {
    /// PTX ISA §9.4, Table 26: the same size; a bit-size type on either side agrees with
    /// anything, signed and unsigned integers agree, a float type only with itself.
    Exact,
    /// PTX ISA §9.4.1, Tables 27-28 (`ld`, `st`, `cvt`): the register may also be wider than
    /// the type, except that a float register must match a float type exactly.
    Wider,
}

fn is_bit(t: Type) -> bool {
    matches!(t, Type::B8 | Type::B16 | Type::B32 | Type::B64 | Type::B128)
}

fn is_int(t: Type) -> bool {
    matches!(
        t,
        Type::U8 | Type::U16 | Type::U32 | Type::U64 | Type::S8 | Type::S16 | Type::S32 | Type::S64
    )
}

/// Whether a register declared `reg` may hold an operand of type `ty`. The packed types
/// (f16x2, bf16x2, u16x2, s16x2) behave as float types: they agree with their own type and
/// with bit-size registers (ptxas rejects `min.u16x2` on a .u32 register).
pub(crate) fn agrees(reg: Type, ty: Type, agree: Agree) -> bool {
    if reg == Type::Pred || ty == Type::Pred {
        return reg == ty;
    }
    let size_ok = match agree {
        Agree::Exact => reg.size() == ty.size(),
        Agree::Wider => reg.size() >= ty.size(),
    };
    if !size_ok {
        return false;
    }
    if is_bit(ty) || is_bit(reg) {
        return true;
    }
    if is_int(ty) {
        return is_int(reg);
    }
    reg == ty
}

/// Whether `name` is a special register's (`%tid`, `%laneid`, ...): ptxas refuses to declare
/// a register of that name.
pub(crate) fn is_special_register_name(name: &str) -> bool {
    special(name, None).is_some() || special(name, Some(".x")).is_some()
}

fn special(name: &str, dim: Option<&str>) -> Option<SpecialReg> {
    let d = match dim {
        Some(".x") => Some(Dim::X),
        Some(".y") => Some(Dim::Y),
        Some(".z") => Some(Dim::Z),
        _ => None,
    };
    Some(match (name, d) {
        ("%tid", Some(d)) => SpecialReg::Tid(d),
        ("%ntid", Some(d)) => SpecialReg::Ntid(d),
        ("%ctaid", Some(d)) => SpecialReg::Ctaid(d),
        ("%nctaid", Some(d)) => SpecialReg::Nctaid(d),
        ("%laneid", None) => SpecialReg::LaneId,
        ("%warpid", None) => SpecialReg::WarpId,
        ("%nwarpid", None) => SpecialReg::NWarpId,
        ("%smid", None) => SpecialReg::SmId,
        ("%nsmid", None) => SpecialReg::NSmId,
        ("%gridid", None) => SpecialReg::GridId,
        ("%clock", None) => SpecialReg::Clock,
        ("%clock64", None) => SpecialReg::Clock64,
        ("%lanemask_eq", None) => SpecialReg::LanemaskEq,
        ("%lanemask_le", None) => SpecialReg::LanemaskLe,
        ("%lanemask_lt", None) => SpecialReg::LanemaskLt,
        ("%lanemask_ge", None) => SpecialReg::LanemaskGe,
        ("%lanemask_gt", None) => SpecialReg::LanemaskGt,
        ("%dynamic_smem_size", None) => SpecialReg::DynamicSmemSize,
        ("%total_smem_size", None) => SpecialReg::TotalSmemSize,
        ("%cluster_ctarank", None) => SpecialReg::ClusterCtarank,
        ("%cluster_nctarank", None) => SpecialReg::ClusterNctarank,
        ("%clusterid", Some(d)) => SpecialReg::ClusterId(d),
        ("%nclusterid", Some(d)) => SpecialReg::NClusterId(d),
        ("%cluster_ctaid", Some(d)) => SpecialReg::ClusterCtaid(d),
        ("%cluster_nctaid", Some(d)) => SpecialReg::ClusterNctaid(d),
        ("%is_explicit_cluster", None) => SpecialReg::IsExplicitCluster,
        ("%globaltimer", None) => SpecialReg::GlobalTimer,
        ("%clock_hi", None) => SpecialReg::ClockHi,
        ("%globaltimer_lo", None) => SpecialReg::GlobalTimerLo,
        ("%globaltimer_hi", None) => SpecialReg::GlobalTimerHi,
        _ => return None,
    })
}

impl<'a> ModuleParser<'a> {
    /// Operands up to the terminating `;` (consumed).
    pub(crate) fn raw_operands(&mut self) -> PResult<Vec<RawOp>> {
        let mut ops = Vec::new();
        if self.c.eat(&Tok::Semi) {
            return Ok(ops);
        }
        loop {
            ops.push(self.raw_pair()?);
            if self.c.eat(&Tok::Semi) {
                return Ok(ops);
            }
            self.c.expect(&Tok::Comma, "`,` or `;`")?;
        }
    }

    fn raw_pair(&mut self) -> PResult<RawOp> {
        let first = self.raw_operand()?;
        if self.c.eat(&Tok::Pipe) {
            let second = self.raw_operand()?;
            let span = first.span();
            return Ok(RawOp::Pair(Box::new(first), Box::new(second), span));
        }
        Ok(first)
    }

    fn raw_operand(&mut self) -> PResult<RawOp> {
        let span = self.c.span();
        match self.c.peek().cloned() {
            Some(Tok::Ident(name)) => {
                self.c.bump()?;
                if name == "_" {
                    return Ok(RawOp::Sink(span));
                }
                if name.starts_with('%') {
                    let dim = match self.c.peek() {
                        Some(Tok::Dot(d)) if matches!(d.as_str(), ".x" | ".y" | ".z") => {
                            Some(d.clone())
                        }
                        _ => None,
                    };
                    if let Some(s) = special(&name, dim.as_deref()) {
                        if dim.is_some() {
                            self.c.bump()?;
                        }
                        return Ok(RawOp::Special(s, span));
                    }
                }
                // `sym+4` as an operand (address of a variable plus an offset) is folded into
                // an address with an immediate by the caller when it needs one.
                Ok(RawOp::Name(name, span))
            }
            Some(Tok::Bang) => {
                self.c.bump()?;
                let (name, nspan) = self.c.expect_ident("a predicate register")?;
                Ok(RawOp::NotName(name, nspan))
            }
            Some(Tok::LBracket) => {
                self.c.bump()?;
                self.raw_address(span)
            }
            Some(Tok::LBrace) => {
                self.c.bump()?;
                self.enter(span)?;
                let mut items = Vec::new();
                loop {
                    items.push(self.raw_operand()?);
                    if self.c.eat(&Tok::RBrace) {
                        self.leave();
                        return Ok(RawOp::Vec(items, span));
                    }
                    self.c.expect(&Tok::Comma, "`,` or `}`")?;
                }
            }
            Some(Tok::LParen) => {
                self.c.bump()?;
                self.enter(span)?;
                let mut items = Vec::new();
                if !self.c.eat(&Tok::RParen) {
                    loop {
                        items.push(self.raw_operand()?);
                        if self.c.eat(&Tok::RParen) {
                            break;
                        }
                        self.c.expect(&Tok::Comma, "`,` or `)`")?;
                    }
                }
                self.leave();
                Ok(RawOp::List(items, span))
            }
            Some(Tok::Minus | Tok::Int(_) | Tok::Float(_) | Tok::F32Bits(_) | Tok::F64Bits(_)) => {
                let v = self.const_expr()?;
                Ok(RawOp::Imm(v, span))
            }
            _ => Err(self.c.unexpected("an operand")),
        }
    }

    fn raw_address(&mut self, span: Span) -> PResult<RawOp> {
        self.enter(span)?;
        let a = self.raw_address_inner(span)?;
        self.leave();
        Ok(a)
    }

    fn raw_address_inner(&mut self, span: Span) -> PResult<RawOp> {
        let base = match self.c.peek().cloned() {
            Some(Tok::Ident(n)) => {
                let s = self.c.span();
                self.c.bump()?;
                Some((n, s))
            }
            _ => None,
        };
        let mut offset = 0i64;
        if base.is_none() {
            match self.const_expr()? {
                Const::Int(v) => offset = v,
                _ => return Err(self.c.err(span, "an address must be an integer")),
            }
        } else if matches!(self.c.peek(), Some(Tok::Plus | Tok::Minus)) {
            let neg = self.c.peek() == Some(&Tok::Minus);
            self.c.bump()?;
            match self.const_expr()? {
                Const::Int(v) => offset = if neg { v.wrapping_neg() } else { v },
                _ => return Err(self.c.err(span, "an address offset must be an integer")),
            }
        }
        if self.c.eat(&Tok::Comma) {
            let coords_span = self.c.span();
            self.c
                .expect(&Tok::LBrace, "`{` and the tensor coordinates")?;
            let mut coords = Vec::new();
            loop {
                coords.push(self.raw_operand()?);
                if self.c.eat(&Tok::RBrace) {
                    break;
                }
                self.c.expect(&Tok::Comma, "`,` or `}`")?;
            }
            if coords.is_empty() {
                return Err(self.c.err(coords_span, "a tensor needs its coordinates"));
            }
            self.c.expect(&Tok::RBracket, "`]`")?;
            return Ok(RawOp::TensorAddr(base, offset, coords, span));
        }
        self.c.expect(&Tok::RBracket, "`]`")?;
        Ok(RawOp::Addr(base, offset, span))
    }

    /// A source operand of type `ty`; a register must agree with `ty` exactly (PTX ISA §9.4).
    pub(crate) fn src(&mut self, b: &mut Body, raw: &RawOp, ty: Type) -> PResult<Operand> {
        self.src_as(b, raw, ty, Some(Agree::Exact))
    }

    /// A source operand of type `ty`, its register checked by `agree` (None: not checked, for
    /// operands whose register may have any type the instruction then inspects).
    pub(crate) fn src_as(
        &mut self,
        b: &mut Body,
        raw: &RawOp,
        ty: Type,
        agree: Option<Agree>,
    ) -> PResult<Operand> {
        let op = self.src_unchecked(b, raw, ty)?;
        if let (Some(agree), Operand::Reg(r) | Operand::NotReg(r)) = (agree, op) {
            self.check_reg(b, r, ty, agree, raw.span())?;
        }
        Ok(op)
    }

    /// Whether register `r` may be an operand of type `ty`, with the reason when not.
    pub(crate) fn check_reg(
        &self,
        b: &Body,
        r: RegId,
        ty: Type,
        agree: Agree,
        span: Span,
    ) -> PResult<()> {
        let info = &b.regs[r.0 as usize];
        if agrees(info.ty, ty, agree) {
            return Ok(());
        }
        let want = match (ty, agree) {
            (Type::Pred, _) => "a .pred register".to_string(),
            (t, Agree::Exact) if t.is_float() || matches!(t, Type::U16x2 | Type::S16x2) => {
                format!("a .{} or .b{} register", t.name(), t.bits())
            }
            (t, Agree::Exact) if is_bit(t) => format!("a {}-bit register", t.bits()),
            (t, Agree::Exact) => format!("a .b{0}, .s{0} or .u{0} register", t.bits()),
            (t, Agree::Wider) if t.is_float() => {
                format!(
                    "a .{} register or a bit-size register of at least {} bits",
                    t.name(),
                    t.bits()
                )
            }
            (t, Agree::Wider) if is_bit(t) => format!("a register of at least {} bits", t.bits()),
            (t, Agree::Wider) => format!(
                "an integer or bit-size register of at least {} bits",
                t.bits()
            ),
        };
        Err(self.c.err(
            span,
            format!(
                "`{}` is a .{} register, but this operand is .{}: it needs {want} \
                 (PTX ISA §9.4, operand type rules)",
                info.name,
                info.ty.name(),
                ty.name()
            ),
        ))
    }

    fn src_unchecked(&mut self, b: &mut Body, raw: &RawOp, ty: Type) -> PResult<Operand> {
        match raw {
            RawOp::Name(n, s) => self.name_operand(b, n, *s),
            RawOp::NotName(n, s) => match b.lookup_reg(n) {
                Some(r) => Ok(Operand::NotReg(r)),
                None => Err(self.c.err(*s, format!("undefined register `{n}`"))),
            },
            RawOp::Special(sr, _) => Ok(Operand::Special(*sr)),
            RawOp::Imm(v, s) => {
                let exact_bits = matches!(
                    (v, ty),
                    (Const::F32Bits(_), Type::B32) | (Const::F64Bits(_), Type::B64)
                );
                if matches!(v, Const::Float(_) | Const::F32Bits(_) | Const::F64Bits(_))
                    && !ty.is_float()
                    && !exact_bits
                {
                    return Err(self.c.err(
                        *s,
                        format!(
                            "a floating-point literal cannot be a .{} operand",
                            ty.name()
                        ),
                    ));
                }
                Ok(Operand::Imm(v.to_bits(ty)))
            }
            other => Err(self.c.err(
                other.span(),
                "expected a register, immediate or symbol here",
            )),
        }
    }

    fn name_operand(&mut self, b: &mut Body, n: &str, s: Span) -> PResult<Operand> {
        if let Some(r) = b.lookup_reg(n) {
            return Ok(Operand::Reg(r));
        }
        if let Some(sym) = b.lookup_sym(n).or_else(|| self.globals.get(n).copied()) {
            b.note_use(sym, self.module.symbol(sym).space);
            return Ok(Operand::Symbol(sym));
        }
        if self.funcs.contains_key(n) {
            let id = self.func_id(n, Some(s));
            b.callees.insert(id);
            return Ok(Operand::Func(id));
        }
        // `WARP_SZ` is a run-time constant (PTX ISA §4.4, predefined identifiers), the
        // machine's warp size; NVRTC writes it for `warpSize`.
        if n == "WARP_SZ" {
            return Ok(Operand::Special(SpecialReg::WarpSz));
        }
        let what = if n.starts_with('%') {
            "register"
        } else {
            "identifier"
        };
        Err(self.c.err(s, format!("undefined {what} `{n}`")))
    }

    /// A destination register of type `ty`, checked by `agree`; `_` is a sink.
    pub(crate) fn dst_as(
        &mut self,
        b: &mut Body,
        raw: &RawOp,
        ty: Type,
        agree: Agree,
    ) -> PResult<RegId> {
        let r = self.dst(b, raw)?;
        if !matches!(raw, RawOp::Sink(_)) {
            self.check_reg(b, r, ty, agree, raw.span())?;
        }
        Ok(r)
    }

    /// A destination register of type `ty` that must agree with it exactly.
    pub(crate) fn dst_t(&mut self, b: &mut Body, raw: &RawOp, ty: Type) -> PResult<RegId> {
        self.dst_as(b, raw, ty, Agree::Exact)
    }

    /// A destination register, its type not checked here; `_` is a sink.
    pub(crate) fn dst(&mut self, b: &mut Body, raw: &RawOp) -> PResult<RegId> {
        match raw {
            RawOp::Name(n, s) => b
                .lookup_reg(n)
                .ok_or_else(|| self.c.err(*s, format!("undefined register `{n}`"))),
            RawOp::Sink(_) => Ok(b.sink_reg()),
            other => Err(self.c.err(other.span(), "expected a destination register")),
        }
    }

    pub(crate) fn addr(&mut self, b: &mut Body, raw: &RawOp) -> PResult<Address> {
        match raw {
            RawOp::Addr(None, off, _) => Ok(Address {
                base: AddrBase::Abs,
                offset: *off,
            }),
            RawOp::Addr(Some((n, s)), off, _) => {
                if let Some(r) = b.lookup_reg(n) {
                    return Ok(Address {
                        base: AddrBase::Reg(r),
                        offset: *off,
                    });
                }
                if let Some(sym) = b.lookup_sym(n).or_else(|| self.globals.get(n).copied()) {
                    b.note_use(sym, self.module.symbol(sym).space);
                    return Ok(Address {
                        base: AddrBase::Symbol(sym),
                        offset: *off,
                    });
                }
                Err(self
                    .c
                    .err(*s, format!("undefined identifier `{n}` in an address")))
            }
            other => Err(self.c.err(other.span(), "expected an address `[...]`")),
        }
    }

    /// A destination register or vector of them, each of element type `ty`, checked by `agree`.
    pub(crate) fn dst_vec_as(
        &mut self,
        b: &mut Body,
        raw: &RawOp,
        ty: Type,
        agree: Agree,
    ) -> PResult<RegVec> {
        let v = self.dst_vec(b, raw)?;
        let items: &[RawOp] = match raw {
            RawOp::Vec(items, _) => items,
            other => std::slice::from_ref(other),
        };
        for (i, it) in items.iter().enumerate() {
            if !matches!(it, RawOp::Sink(_)) {
                self.check_reg(b, v.regs[i], ty, agree, it.span())?;
            }
        }
        Ok(v)
    }

    pub(crate) fn dst_vec(&mut self, b: &mut Body, raw: &RawOp) -> PResult<RegVec> {
        match raw {
            RawOp::Vec(items, s) => {
                if items.is_empty() || items.len() > 4 {
                    return Err(self.c.err(*s, "a vector operand has 1, 2 or 4 elements"));
                }
                let mut v = RegVec {
                    regs: [RegId(0); RegVec::MAX],
                    len: items.len() as u8,
                };
                for (i, it) in items.iter().enumerate() {
                    v.regs[i] = self.dst(b, it)?;
                }
                Ok(v)
            }
            other => Ok(RegVec::one(self.dst(b, other)?)),
        }
    }

    /// A source operand or vector of them whose registers agree with `ty` exactly.
    pub(crate) fn src_vec(&mut self, b: &mut Body, raw: &RawOp, ty: Type) -> PResult<OpVec> {
        self.src_vec_as(b, raw, ty, Agree::Exact)
    }

    pub(crate) fn src_vec_as(
        &mut self,
        b: &mut Body,
        raw: &RawOp,
        ty: Type,
        agree: Agree,
    ) -> PResult<OpVec> {
        let items: Vec<RawOp> = match raw {
            RawOp::Vec(items, _) => items.clone(),
            other => vec![other.clone()],
        };
        if items.is_empty() || items.len() > 4 {
            return Err(self
                .c
                .err(raw.span(), "a vector operand has 1, 2 or 4 elements"));
        }
        let mut v = OpVec {
            ops: [Operand::Imm(0); 4],
            len: items.len() as u8,
        };
        for (i, it) in items.iter().enumerate() {
            v.ops[i] = match it {
                RawOp::Sink(_) => Operand::Imm(0),
                _ => self.src_as(b, it, ty, Some(agree))?,
            };
        }
        Ok(v)
    }

    pub(crate) fn label_ref(&mut self, b: &mut Body, raw: &RawOp, inst: usize) -> PResult<()> {
        let RawOp::Name(n, s) = raw else {
            return Err(self.c.err(raw.span(), "expected a label"));
        };
        let unique = b
            .lookup_label(n)
            .ok_or_else(|| self.c.err(*s, format!("undefined label `{n}`")))?;
        b.fixups.push(super::body::Fixup {
            inst,
            label: unique,
            span: *s,
        });
        Ok(())
    }
}
