//! Declarations: function headers and parameters, variables with alignment, array sizes and
//! constant-expression initialisers (`= 10/2+3` folds to 8, as the formal report's step 2).

use super::cursor::PResult;
use super::ModuleParser;
use crate::ir::*;
use crate::lexer::Tok;
use crate::span::Span;

pub(crate) fn space_of(d: &str) -> Option<Space> {
    Some(match d {
        ".global" => Space::Global,
        ".shared" => Space::Shared,
        ".local" => Space::Local,
        ".const" => Space::Const,
        ".param" => Space::Param,
        _ => return None,
    })
}

/// A folded constant: integers keep their two's-complement bits, floats their value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Const {
    Int(i64),
    Float(f64),
    /// `0fXXXXXXXX`: the exact bits of an f32 (also valid for a `.b32` operand).
    F32Bits(u32),
    /// `0dXXXXXXXXXXXXXXXX`: the exact bits of an f64 (also valid for a `.b64` operand).
    F64Bits(u64),
}

impl Const {
    pub fn to_bits(self, ty: Type) -> u64 {
        match (self, ty) {
            // Hex float literals keep their exact bits in their own width (incl. NaN payloads).
            (Const::F32Bits(b), Type::F32 | Type::B32) => b as u64,
            (Const::F64Bits(b), Type::F64 | Type::B64) => b,
            (Const::F32Bits(b), _) => Const::Float(f32::from_bits(b) as f64).to_bits(ty),
            (Const::F64Bits(b), _) => Const::Float(f64::from_bits(b)).to_bits(ty),
            (Const::Int(v), Type::F32) => (v as f32).to_bits() as u64,
            (Const::Int(v), Type::F64) => (v as f64).to_bits(),
            (Const::Float(v), Type::F32) => (v as f32).to_bits() as u64,
            (Const::Float(v), Type::F64) => v.to_bits(),
            (Const::Float(v), Type::F16) => half::f16::from_f64(v).to_bits() as u64,
            (Const::Float(v), Type::Bf16) => half::bf16::from_f64(v).to_bits() as u64,
            (Const::Float(v), _) => v as i64 as u64 & ty.mask(),
            (Const::Int(v), _) => v as u64 & ty.mask(),
        }
    }
}

impl<'a> ModuleParser<'a> {
    pub(crate) fn function(&mut self, kind: FuncKind) -> PResult<()> {
        let head_span = self.c.span();
        self.c.bump()?;
        let mut rets_raw = Vec::new();
        if kind == FuncKind::Func && self.c.peek() == Some(&Tok::LParen) {
            rets_raw = self.param_list()?;
        }
        let (name, name_span) = self.c.expect_ident("a function name")?;
        let params_raw = if self.c.peek() == Some(&Tok::LParen) {
            self.param_list()?
        } else {
            Vec::new()
        };
        let (max_ntid, req_cluster) = self.perf_directives()?;
        for (i, p) in rets_raw.iter().chain(&params_raw).enumerate() {
            if rets_raw
                .iter()
                .chain(&params_raw)
                .take(i)
                .any(|q| q.name == p.name)
            {
                return Err(self
                    .c
                    .err(p.span, format!("parameter `{}` is declared twice", p.name)));
            }
        }
        if self.globals.contains_key(&name) {
            return Err(self.c.err(
                name_span,
                format!("`{name}` names both a module variable and a function"),
            ));
        }
        let id = self.func_id(&name, None);
        let params = self.make_params(id, params_raw, kind)?;
        let rets = self.make_params(id, rets_raw, kind)?;
        {
            let f = &mut self.module.functions[id.0 as usize];
            f.kind = kind;
            f.params = params;
            f.rets = rets;
            f.max_ntid = max_ntid;
            f.req_cluster = req_cluster;
            f.span = Span {
                end: name_span.end,
                ..head_span
            };
        }
        if self.c.eat(&Tok::Semi) {
            return Ok(()); // a prototype; the body comes later or from another module
        }
        if self.defined[id.0 as usize].0 {
            return Err(self
                .c
                .err(name_span, format!("function `{name}` is defined twice")));
        }
        self.defined[id.0 as usize].0 = true;
        self.function_body(id)
    }

    /// The performance directives: (`.maxntid`/`.reqntid`, `.reqnctapercluster`).
    #[allow(clippy::type_complexity)]
    fn perf_directives(&mut self) -> PResult<(Option<[u32; 3]>, Option<[u32; 3]>)> {
        let mut max_ntid = None;
        let mut req_cluster = None;
        while let Some(Tok::Dot(d)) = self.c.peek().cloned() {
            match d.as_str() {
                ".maxntid" | ".reqntid" | ".reqnctapercluster" | ".maxclusterrank"
                | ".minnctapersm" | ".maxnreg" | ".maxnctapersm" => {
                    self.c.bump()?;
                    let mut dims = [1u32; 3];
                    dims[0] = self.c.expect_int("a number")? as u32;
                    let mut i = 1;
                    while self.c.eat(&Tok::Comma) {
                        let v = self.c.expect_int("a number")? as u32;
                        if i < 3 {
                            dims[i] = v;
                        }
                        i += 1;
                    }
                    if d == ".maxntid" || d == ".reqntid" {
                        max_ntid = Some(dims);
                    }
                    if d == ".reqnctapercluster" {
                        req_cluster = Some(dims);
                    }
                }
                ".noreturn" | ".explicitcluster" => {
                    self.c.bump()?;
                }
                ".pragma" => {
                    self.c.bump()?;
                    self.c.skip_statement()?;
                }
                _ => break,
            }
        }
        Ok((max_ntid, req_cluster))
    }

    /// `( .param .b32 a, .param .align 8 .b8 b[16] )`
    fn param_list(&mut self) -> PResult<Vec<RawParam>> {
        self.c.expect(&Tok::LParen, "`(`")?;
        let mut out = Vec::new();
        if self.c.eat(&Tok::RParen) {
            return Ok(out);
        }
        loop {
            out.push(self.param()?);
            if self.c.eat(&Tok::RParen) {
                return Ok(out);
            }
            self.c.expect(&Tok::Comma, "`,` or `)`")?;
        }
    }

    fn param(&mut self) -> PResult<RawParam> {
        let span = self.c.span();
        if !self.c.eat_dot(".param") {
            if self.c.eat_dot(".reg") {
                return Err(self
                    .c
                    .err(span, "`.reg` parameters are not supported; use `.param`"));
            }
            return Err(self.c.unexpected("`.param`"));
        }
        let mut align = None;
        let mut ty = None;
        loop {
            match self.c.peek().cloned() {
                Some(Tok::Dot(d)) if d == ".align" => {
                    self.c.bump()?;
                    align = Some(self.alignment()?);
                }
                Some(Tok::Dot(d)) if d == ".ptr" || space_of(&d).is_some() => {
                    self.c.bump()?;
                }
                Some(Tok::Dot(d)) if Type::from_name(&d[1..]).is_some() => {
                    self.c.bump()?;
                    ty = Type::from_name(&d[1..]);
                }
                _ => break,
            }
        }
        let Some(ty) = ty else {
            return Err(self.c.err(span, "parameter has no type"));
        };
        let (name, nspan) = self.c.expect_ident("a parameter name")?;
        let count = self.array_dims()?.unwrap_or(1);
        // `Param::size` is in bytes, in 32 bits.
        if u64::from(ty.size()) * u64::from(count) > u64::from(u32::MAX) {
            return Err(self.c.err(
                nspan,
                format!(
                    "parameter `{name}` of {count} {}-byte elements is larger than 4 GiB",
                    ty.size()
                ),
            ));
        }
        Ok(RawParam {
            name,
            ty,
            count,
            align: align.unwrap_or(ty.size()),
            span: nspan,
        })
    }

    /// `[N]` (repeated for multi-dimensional arrays) → element count; `[]` → 0 (unsized).
    /// Counts are computed in u64 and must fit the IR's u32: a larger array is an error at
    /// its size, never a count that wraps or saturates.
    pub(crate) fn array_dims(&mut self) -> PResult<Option<u32>> {
        let mut count: Option<u32> = None;
        while self.c.eat(&Tok::LBracket) {
            if self.c.eat(&Tok::RBracket) {
                count = Some(0);
                continue;
            }
            let n = self.c.expect_int("an array size")?;
            let span = self.c.prev_span();
            self.c.expect(&Tok::RBracket, "`]`")?;
            count = Some(self.element_count(u64::from(count.unwrap_or(1)), n, span)?);
        }
        Ok(count)
    }

    /// `a · b` elements, at most `u32::MAX`.
    fn element_count(&self, a: u64, b: u64, span: Span) -> PResult<u32> {
        a.checked_mul(b)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                let n = u128::from(a) * u128::from(b);
                self.c.err(
                    span,
                    format!(
                        "an array of {n} elements is too large (at most {} elements)",
                        u32::MAX
                    ),
                )
            })
    }

    /// `.align N`: a power of two that fits 32 bits (PTX ISA: "the alignment must be a power
    /// of two").
    fn alignment(&mut self) -> PResult<u32> {
        let n = self.c.expect_int("an alignment")?;
        match u32::try_from(n) {
            Ok(a) if a.is_power_of_two() => Ok(a),
            _ => Err(self.c.err(
                self.c.prev_span(),
                format!("alignment {n} is not a power of two below 2^32"),
            )),
        }
    }

    fn make_params(
        &mut self,
        owner: FuncId,
        raw: Vec<RawParam>,
        kind: FuncKind,
    ) -> PResult<Vec<Param>> {
        let mut out = Vec::new();
        let mut offset = 0u64;
        for p in raw {
            let align = p.align.max(1) as u64;
            offset = offset.div_ceil(align) * align;
            let id = SymbolId(self.module.symbols.len() as u32);
            self.module.symbols.push(Symbol {
                name: p.name,
                space: Space::Param,
                ty: p.ty,
                count: p.count,
                align: p.align,
                init: Vec::new(),
                is_extern: false,
                // Entry params: offset in the kernel parameter buffer. Func params get their
                // frame offsets when the body is parsed.
                offset: if kind == FuncKind::Entry { offset } else { 0 },
                owner: Some(owner),
                span: p.span,
            });
            offset += p.ty.size() as u64 * p.count as u64;
            out.push(Param {
                symbol: id,
                ty: p.ty,
                count: p.count,
                align: p.align,
            });
        }
        Ok(out)
    }

    /// After the space directive: `[.align N] [.vN] .type name[dims] [= init] {, name ...};`
    pub(crate) fn variable_decl(
        &mut self,
        space: Space,
        is_extern: bool,
        owner: Option<FuncId>,
    ) -> PResult<Vec<SymbolId>> {
        let span = self.c.span();
        let mut align = None;
        let mut vec = 1u32;
        let mut ty = None;
        while let Some(Tok::Dot(d)) = self.c.peek().cloned() {
            self.c.bump()?;
            match d.as_str() {
                ".align" => align = Some(self.alignment()?),
                ".v2" => vec = 2,
                ".v4" => vec = 4,
                ".v8" => vec = 8,
                ".ptr" => {}
                _ => match Type::from_name(&d[1..]) {
                    Some(t) => ty = Some(t),
                    None => {
                        return Err(self.c.err(
                            self.c.prev_span(),
                            format!("unknown type or attribute `{d}` in a variable declaration"),
                        ))
                    }
                },
            }
        }
        let Some(ty) = ty else {
            return Err(self.c.err(span, "variable declaration without a type"));
        };
        let mut ids = Vec::new();
        loop {
            let (name, nspan) = self.c.expect_ident("a variable name")?;
            let dims = self.array_dims()?.unwrap_or(1);
            let count = self.element_count(u64::from(dims), u64::from(vec), nspan)?;
            let mut init = Vec::new();
            if self.c.eat(&Tok::Eq) {
                init = self.initializer(ty)?;
                if count > 0 && init.len() as u64 > ty.size() as u64 * count as u64 {
                    return Err(self
                        .c
                        .err(nspan, "initialiser has more elements than the variable"));
                }
            }
            let id = SymbolId(self.module.symbols.len() as u32);
            self.module.symbols.push(Symbol {
                name,
                space,
                ty,
                count,
                align: align.unwrap_or(ty.size() * vec).max(1),
                init,
                is_extern,
                offset: 0,
                owner,
                span: nspan,
            });
            ids.push(id);
            if self.c.eat(&Tok::Semi) {
                return Ok(ids);
            }
            self.c.expect(&Tok::Comma, "`,` or `;`")?;
        }
    }

    fn initializer(&mut self, ty: Type) -> PResult<Vec<u8>> {
        let mut out = Vec::new();
        self.init_items(ty, &mut out)?;
        Ok(out)
    }

    fn init_items(&mut self, ty: Type, out: &mut Vec<u8>) -> PResult<()> {
        let span = self.c.span();
        if self.c.eat(&Tok::LBrace) {
            self.enter(span)?;
            loop {
                self.init_items(ty, out)?;
                if self.c.eat(&Tok::RBrace) {
                    self.leave();
                    return Ok(());
                }
                self.c.expect(&Tok::Comma, "`,` or `}`")?;
            }
        }
        let v = self.const_expr()?;
        let bits = v.to_bits(ty);
        out.extend_from_slice(&bits.to_le_bytes()[..ty.size() as usize]);
        Ok(())
    }

    /// Constant expression: `+ - * /` over integer and float literals, with parentheses.
    pub(crate) fn const_expr(&mut self) -> PResult<Const> {
        let mut acc = self.const_term()?;
        loop {
            let op = match self.c.peek() {
                Some(Tok::Plus) => 0,
                Some(Tok::Minus) => 1,
                _ => return Ok(acc),
            };
            self.c.bump()?;
            let rhs = self.const_term()?;
            acc = fold(acc, rhs, op);
        }
    }

    fn const_term(&mut self) -> PResult<Const> {
        let mut acc = self.const_factor()?;
        loop {
            let op = match self.c.peek() {
                Some(Tok::Star) => 2,
                Some(Tok::Slash) => 3,
                _ => return Ok(acc),
            };
            let span = self.c.span();
            self.c.bump()?;
            let rhs = self.const_factor()?;
            if op == 3 && matches!(rhs, Const::Int(0)) {
                return Err(self
                    .c
                    .err(span, "division by zero in a constant expression"));
            }
            acc = fold(acc, rhs, op);
        }
    }

    fn const_factor(&mut self) -> PResult<Const> {
        let (t, span) = self.c.bump()?;
        Ok(match t {
            Tok::Minus => {
                self.enter(span)?;
                let v = match self.const_factor()? {
                    Const::Int(v) => Const::Int(v.wrapping_neg()),
                    Const::Float(v) => Const::Float(-v),
                    // negating a hex float flips its sign bit exactly
                    Const::F32Bits(b) => Const::F32Bits(b ^ 0x8000_0000),
                    Const::F64Bits(b) => Const::F64Bits(b ^ (1 << 63)),
                };
                self.leave();
                v
            }
            Tok::LParen => {
                self.enter(span)?;
                let v = self.const_expr()?;
                self.c.expect(&Tok::RParen, "`)`")?;
                self.leave();
                v
            }
            Tok::Int(v) => Const::Int(v as i64),
            Tok::Float(v) => Const::Float(v),
            Tok::F32Bits(b) => Const::F32Bits(b),
            Tok::F64Bits(b) => Const::F64Bits(b),
            other => {
                return Err(self.c.err(
                    span,
                    format!("expected a constant, found {}", other.describe()),
                ))
            }
        })
    }
}

fn fold(a: Const, b: Const, op: u8) -> Const {
    match (a, b) {
        (Const::Int(x), Const::Int(y)) => Const::Int(match op {
            0 => x.wrapping_add(y),
            1 => x.wrapping_sub(y),
            2 => x.wrapping_mul(y),
            _ => x.wrapping_div(y),
        }),
        _ => {
            let (x, y) = (as_f64(a), as_f64(b));
            Const::Float(match op {
                0 => x + y,
                1 => x - y,
                2 => x * y,
                _ => x / y,
            })
        }
    }
}

fn as_f64(c: Const) -> f64 {
    match c {
        Const::Int(v) => v as f64,
        Const::Float(v) => v,
        Const::F32Bits(b) => f32::from_bits(b) as f64,
        Const::F64Bits(b) => f64::from_bits(b),
    }
}

pub(crate) struct RawParam {
    pub name: String,
    pub ty: Type,
    pub count: u32,
    pub align: u32,
    pub span: Span,
}
