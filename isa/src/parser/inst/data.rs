//! Decoding data instructions: moves, arithmetic, bit operations, comparisons, selects and conversions.

use super::*;

/// The element type of a `mov` vector `{a, b, ...}` packing or unpacking a `ty` value.
fn part_type(ty: Type, parts: usize) -> Type {
    match (ty.size() as usize).checked_div(parts) {
        Some(1) => Type::B8,
        Some(2) => Type::B16,
        Some(4) => Type::B32,
        _ => Type::B64,
    }
}

/// `cvt` operands may be wider registers than their type, except .bf16/.bf16x2 ones (PTX ISA
/// `cvt`, Notes; §9.4.1).
fn cvt_agree(ty: Type) -> Agree {
    if matches!(ty, Type::Bf16 | Type::Bf16x2) {
        Agree::Exact
    } else {
        Agree::Wider
    }
}

/// PTX ISA `cvt`: `.ftz` "can only be specified when either .dtype or .atype is .f32";
/// between integers `.sat` "is illegal in cases where saturation is not possible", i.e. when
/// the destination's range contains the source's. ptxas rejects both.
fn cvt_ftz_sat_problem(what: &str, dty: Type, sty: Type, ftz: bool, sat: bool) -> Option<String> {
    if ftz && dty != Type::F32 && sty != Type::F32 {
        return Some(format!(
            "`{what}` does not take `.ftz` (only conversions from or to .f32 do)"
        ));
    }
    let int = |t: Type| !t.is_float();
    if sat && int(dty) && int(sty) {
        let range = |t: Type| {
            let w = t.bits();
            if t.is_signed() {
                (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
            } else {
                (0, (1i128 << w) - 1)
            }
        };
        let ((dlo, dhi), (slo, shi)) = (range(dty), range(sty));
        if dlo <= slo && shi <= dhi {
            return Some(format!(
                "`{what}` does not take `.sat`: every .{} value fits in .{}",
                sty.name(),
                dty.name()
            ));
        }
    }
    None
}

impl<'a> ModuleParser<'a> {
    /// Data instructions: moves, bit operations, comparisons, selects, conversions and the newer integer/float tests.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decode_data(
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
            "mov" => {
                let ty = self.one_type(m, name, span)?;
                self.nargs(raw, 2, name, span)?;
                match (&raw[0], &raw[1]) {
                    (RawOp::Vec(items, _), _) => Ok(Op::MovUnpack {
                        ty,
                        d: self.dst_vec_as(b, &raw[0], part_type(ty, items.len()), Agree::Exact)?,
                        a: self.src(b, &raw[1], ty)?,
                    }),
                    (_, RawOp::Vec(items, _)) => Ok(Op::MovPack {
                        ty,
                        d: self.dst_t(b, &raw[0], ty)?,
                        parts: self.src_vec(b, &raw[1], part_type(ty, items.len()))?,
                    }),
                    _ => Ok(Op::Mov {
                        ty,
                        d: self.dst_t(b, &raw[0], ty)?,
                        a: self.src(b, &raw[1], ty)?,
                    }),
                }
            }
            "bfind" => {
                let shiftamt = m.take("shiftamt");
                let ty = self.one_type(m, name, span)?;
                self.nargs(raw, 2, name, span)?;
                Ok(Op::Bfind {
                    ty,
                    shiftamt,
                    d: self.dst_t(b, &raw[0], Type::U32)?,
                    a: self.src(b, &raw[1], ty)?,
                })
            }
            "shf" => {
                let left = match m.take_any(&["l", "r"]) {
                    Some("l") => true,
                    Some(_) => false,
                    None => return Err(self.c.err(span, "`shf` needs .l or .r")),
                };
                let clamp = match m.take_any(&["clamp", "wrap"]) {
                    Some("clamp") => true,
                    Some(_) => false,
                    None => return Err(self.c.err(span, "`shf` needs .clamp or .wrap")),
                };
                let _ = self.one_type(m, name, span)?;
                self.nargs(raw, 4, name, span)?;
                Ok(Op::Shf {
                    left,
                    clamp,
                    d: self.dst_t(b, &raw[0], Type::B32)?,
                    a: self.src(b, &raw[1], Type::B32)?,
                    b: self.src(b, &raw[2], Type::B32)?,
                    c: self.src(b, &raw[3], Type::U32)?,
                })
            }
            "bfi" => {
                let ty = self.one_type(m, name, span)?;
                self.nargs(raw, 5, name, span)?;
                Ok(Op::Bfi {
                    ty,
                    d: self.dst_t(b, &raw[0], ty)?,
                    a: self.src(b, &raw[1], ty)?,
                    b: self.src(b, &raw[2], ty)?,
                    pos: self.src(b, &raw[3], Type::U32)?,
                    len: self.src(b, &raw[4], Type::U32)?,
                })
            }
            "setp" => self.setp(b, m, raw, span),
            "set" => {
                let cmp = cmp_of(m)
                    .ok_or_else(|| self.c.err(span, "`set` needs a comparison such as .lt"))?;
                let bop = bool_of(m);
                let ftz = m.take("ftz");
                let (dty, sty) = self.two_types(m, name, span)?;
                self.nargs(raw, if bop.is_some() { 4 } else { 3 }, name, span)?;
                let comb = match bop {
                    Some(o) => Some((o, self.src(b, &raw[3], Type::Pred)?)),
                    None => None,
                };
                Ok(Op::Set {
                    cmp,
                    dty,
                    sty,
                    ftz,
                    d: self.dst_t(b, &raw[0], dty)?,
                    a: self.src(b, &raw[1], sty)?,
                    b: self.src(b, &raw[2], sty)?,
                    comb,
                })
            }
            "selp" => {
                let ty = self.one_type(m, name, span)?;
                self.nargs(raw, 4, name, span)?;
                Ok(Op::Selp {
                    ty,
                    d: self.dst_t(b, &raw[0], ty)?,
                    a: self.src(b, &raw[1], ty)?,
                    b: self.src(b, &raw[2], ty)?,
                    c: self.src(b, &raw[3], Type::Pred)?,
                })
            }
            "slct" => {
                let ftz = m.take("ftz");
                let (dty, cty) = self.two_types(m, name, span)?;
                self.nargs(raw, 4, name, span)?;
                Ok(Op::Slct {
                    dty,
                    cty,
                    ftz,
                    d: self.dst_t(b, &raw[0], dty)?,
                    a: self.src(b, &raw[1], dty)?,
                    b: self.src(b, &raw[2], dty)?,
                    c: self.src(b, &raw[3], cty)?,
                })
            }
            "cvt" => self.cvt(b, m, raw, span),
            "cvta" => {
                let to_space = m.take("to");
                let space = space_of(m);
                if space == Space::Generic {
                    return Err(self
                        .c
                        .err(span, "`cvta` needs a state space such as .global"));
                }
                let ty = self.one_type(m, name, span)?;
                self.nargs(raw, 2, name, span)?;
                Ok(Op::Cvta {
                    to_space,
                    space,
                    ty,
                    d: self.dst_t(b, &raw[0], ty)?,
                    a: self.src(b, &raw[1], ty)?,
                })
            }
            "lop3" => self.lop3(b, m, raw, span),
            "dp4a" | "dp2a" => {
                let kind = if name == "dp4a" {
                    DotKind::Dp4a
                } else {
                    match m.take_any(&["lo", "hi"]) {
                        Some("lo") => DotKind::Dp2aLo,
                        Some(_) => DotKind::Dp2aHi,
                        None => return Err(self.c.err(span, "`dp2a` needs .lo or .hi")),
                    }
                };
                let (at, bt) = self.two_types(m, name, span)?;
                let int32 = |t: Type| matches!(t, Type::U32 | Type::S32);
                if !int32(at) || !int32(bt) {
                    return Err(self.c.err(span, format!("`{name}` types are .u32 or .s32")));
                }
                self.nargs(raw, 4, name, span)?;
                // c and d are .u32 when both inputs are, .s32 otherwise.
                let ct = if at == Type::U32 && bt == Type::U32 {
                    Type::U32
                } else {
                    Type::S32
                };
                Ok(Op::Dot {
                    kind,
                    a_signed: at == Type::S32,
                    b_signed: bt == Type::S32,
                    d: self.dst_t(b, &raw[0], ct)?,
                    a: self.src(b, &raw[1], at)?,
                    b: self.src(b, &raw[2], bt)?,
                    c: self.src(b, &raw[3], ct)?,
                })
            }
            "testp" => {
                let op = match m.take_any(&[
                    "finite",
                    "infinite",
                    "number",
                    "notanumber",
                    "normal",
                    "subnormal",
                ]) {
                    Some("finite") => TestpOp::Finite,
                    Some("infinite") => TestpOp::Infinite,
                    Some("number") => TestpOp::Number,
                    Some("notanumber") => TestpOp::NotANumber,
                    Some("normal") => TestpOp::Normal,
                    Some(_) => TestpOp::Subnormal,
                    None => {
                        return Err(self.c.err(
                            span,
                            "`testp` needs .finite, .infinite, .number, .notanumber, .normal or .subnormal",
                        ))
                    }
                };
                let ty = self.one_type(m, name, span)?;
                if !matches!(ty, Type::F32 | Type::F64) {
                    return Err(self.c.err(span, "`testp` takes .f32 or .f64"));
                }
                self.nargs(raw, 2, name, span)?;
                Ok(Op::Testp {
                    op,
                    ty,
                    p: self.dst_t(b, &raw[0], Type::Pred)?,
                    a: self.src(b, &raw[1], ty)?,
                })
            }
            "isspacep" => {
                // `.shared::cluster` is the CTA's own window here: gpusim launches no clusters.
                let space = match m.take_any(&[
                    "global",
                    "shared",
                    "shared::cta",
                    "shared::cluster",
                    "local",
                    "const",
                    "param",
                    "param::entry",
                ]) {
                    Some("global") => Space::Global,
                    Some("local") => Space::Local,
                    Some("const") => Space::Const,
                    Some("param" | "param::entry") => Space::Param,
                    Some(_) => Space::Shared,
                    None => {
                        return Err(self.c.err(
                            span,
                            "`isspacep` needs .global, .shared, .local, .const or .param",
                        ))
                    }
                };
                self.nargs(raw, 2, name, span)?;
                // ptxas takes a 32- or a 64-bit address register here.
                Ok(Op::Isspacep {
                    space,
                    p: self.dst_t(b, &raw[0], Type::Pred)?,
                    a: self.src_as(b, &raw[1], Type::U64, None)?,
                })
            }
            "bmsk" | "szext" => {
                let clamp = match m.take_any(&["clamp", "wrap"]) {
                    Some(w) => w == "clamp",
                    None => {
                        return Err(self.c.err(span, format!("`{name}` needs .clamp or .wrap")))
                    }
                };
                let ty = self.one_type(m, name, span)?;
                let (op, ok) = if name == "bmsk" {
                    (ArithOp::Bmsk { clamp }, ty == Type::B32)
                } else {
                    (
                        ArithOp::Szext { clamp },
                        matches!(ty, Type::U32 | Type::S32),
                    )
                };
                if !ok {
                    let want = if name == "bmsk" {
                        ".b32"
                    } else {
                        ".u32 or .s32"
                    };
                    return Err(self.c.err(span, format!("`{name}` takes {want}")));
                }
                self.nargs(raw, 3, name, span)?;
                Ok(Op::Arith {
                    op,
                    ty,
                    mods: crate::ir::Mods::default(),
                    d: self.dst_t(b, &raw[0], ty)?,
                    a: self.src(b, &raw[1], ty)?,
                    b: self.src(b, &raw[2], Type::U32)?,
                    c: Operand::Imm(0),
                })
            }
            "fns" => {
                let ty = self.one_type(m, name, span)?;
                if ty != Type::B32 {
                    return Err(self.c.err(span, "`fns` takes .b32"));
                }
                self.nargs(raw, 4, name, span)?;
                Ok(Op::Arith {
                    op: ArithOp::Fns,
                    ty,
                    mods: crate::ir::Mods::default(),
                    d: self.dst_t(b, &raw[0], Type::B32)?,
                    a: self.src(b, &raw[1], Type::B32)?,
                    b: self.src(b, &raw[2], Type::U32)?,
                    c: self.src(b, &raw[3], Type::S32)?,
                })
            }
            _ => unreachable!("`decode` dispatches only data instructions here"),
        }
    }

    pub(super) fn arith(
        &mut self,
        b: &mut Body,
        name: &str,
        base: ArithOp,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        use ArithOp::*;
        if m.take("cc") {
            return Err(self.c.err(
                span,
                format!("unsupported instruction `{name}.cc` (carry chains)"),
            ));
        }
        let width = m.take_any(&["lo", "hi", "wide"]);
        let rnd = round_of(m);
        let ftz = m.take("ftz");
        let sat = m.take("sat");
        let approx = m.take("approx") | m.take("full");
        let prmt_mode = m.take_any(&["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]);
        let ty = self.one_type(m, name, span)?;
        let op = match (base, width) {
            (Mul, Some("hi")) => MulHi,
            (Mul, Some("wide")) => MulWide,
            (Mad, Some("hi")) => MadHi,
            (Mad, Some("wide")) => MadWide,
            (Mad, _) if ty.is_float() => Fma,
            (Mul24Lo, Some("hi")) => Mul24Hi,
            (Mad24Lo, Some("hi")) => Mad24Hi,
            (Prmt(_), _) => Prmt(match prmt_mode {
                Some("f4e") => PrmtMode::F4e,
                Some("b4e") => PrmtMode::B4e,
                Some("rc8") => PrmtMode::Rc8,
                Some("ecl") => PrmtMode::Ecl,
                Some("ecr") => PrmtMode::Ecr,
                Some("rc16") => PrmtMode::Rc16,
                _ => PrmtMode::Default,
            }),
            (op, _) => op,
        };
        if matches!(op, MulWide | MadWide) && wide(ty).is_none() {
            return Err(self.c.err(
                span,
                format!(
                    "`{name}.wide` is defined for 16- and 32-bit integers, not .{}",
                    ty.name()
                ),
            ));
        }
        let half = matches!(ty, Type::F16 | Type::F16x2 | Type::Bf16 | Type::Bf16x2);
        let minmax = matches!(op, Min | Max);
        // min/max{.NaN}{.xorsign.abs} on f32 and the 16-bit float types (PTX ISA 8.x §9.7.3.11-12,
        // §9.7.4.7-8); `.relu` on s32/s16x2 min/max (§9.7.1.12-13) and on f16/bf16 fma (§9.7.4.4).
        let float_minmax = minmax && (ty == Type::F32 || half);
        let nan = float_minmax && m.take("NaN");
        let xorsign_abs = float_minmax && m.has("xorsign") && m.has("abs");
        if xorsign_abs {
            m.take("xorsign");
            m.take("abs");
        }
        let relu = ((minmax && matches!(ty, Type::S32 | Type::S16x2)) || (op == Fma && half))
            && m.take("relu");
        if relu && sat {
            return Err(self
                .c
                .err(span, format!("`{name}` takes `.relu` or `.sat`, not both")));
        }
        self.check_float_rounding(name, op, ty, rnd, approx, span)?;
        self.nargs(raw, 1 + op.arity(), name, span)?;
        let src_ty = |i: usize| -> Type {
            match (op, i) {
                (Shl | Shr, 1) | (Bfe, 1 | 2) => Type::U32,
                (MadWide, 2) => wide(ty).unwrap_or(ty),
                _ => ty,
            }
        };
        let dst_ty = match op {
            Popc | Clz => Type::U32,
            MulWide | MadWide => wide(ty).unwrap_or(ty),
            _ => ty,
        };
        let d = self.dst_t(b, &raw[0], dst_ty)?;
        let mut srcs = [Operand::Imm(0); 3];
        for i in 0..op.arity() {
            srcs[i] = self.src(b, &raw[1 + i], src_ty(i))?;
        }
        let mods = crate::ir::Mods {
            nan,
            xorsign_abs,
            relu,
            ..Mods2 {
                rnd,
                ftz,
                sat,
                approx,
            }
            .into()
        };
        Ok(Op::Arith {
            op,
            ty,
            mods,
            d,
            a: srcs[0],
            b: srcs[1],
            c: srcs[2],
        })
    }

    /// ptxas rejects float `mad`/`fma` without a rounding modifier, and `div`/`rcp`/`sqrt` without
    /// one or `.approx`/`.full`, on every target after sm_1x (PTX ISA 8.x §9.7.3.6-8, 13, 15).
    pub(super) fn check_float_rounding(
        &self,
        name: &str,
        op: ArithOp,
        ty: Type,
        rnd: Option<Round>,
        approx: bool,
        span: Span,
    ) -> PResult<()> {
        if !ty.is_float() || rnd.is_some() || self.legacy_sm1x() {
            return Ok(());
        }
        let t = ty.name();
        match op {
            ArithOp::Fma => Err(self.c.err(
                span,
                format!("`{name}.{t}` needs a rounding modifier (.rn, .rz, .rm or .rp)"),
            )),
            ArithOp::Div | ArithOp::Rcp | ArithOp::Sqrt if !approx => Err(self.c.err(
                span,
                format!("`{name}.{t}` needs a rounding modifier (.rn, .rz, .rm or .rp) or .approx"),
            )),
            _ => Ok(()),
        }
    }

    /// Whether the module targets sm_1x, where float mad/div/cvt rounding rules were looser.
    pub(super) fn legacy_sm1x(&self) -> bool {
        self.module.arch.sm < 20
    }

    /// `lop3.b32 d, a, b, c, immLut` and `lop3.{or,and}.b32 d|p, a, b, c, immLut, q`
    /// (PTX ISA 8.x §9.7.7.6; the predicate form needs PTX 8.2).
    pub(super) fn lop3(
        &mut self,
        b: &mut Body,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        let bop = match m.take_any(&["or", "and"]) {
            Some("or") => Some(BoolOp::Or),
            Some(_) => Some(BoolOp::And),
            None => None,
        };
        let ty = self.one_type(m, "lop3", span)?;
        if ty != Type::B32 {
            return Err(self.c.err(span, "`lop3` takes .b32"));
        }
        self.nargs(raw, if bop.is_some() { 6 } else { 5 }, "lop3", span)?;
        let (d, p) = self.dst_pair(b, &raw[0], Type::B32)?;
        let pred = match (bop, p) {
            (Some(o), Some(p)) => Some((o, p, self.src(b, &raw[5], Type::Pred)?)),
            (None, None) => None,
            _ => {
                return Err(self.c.err(
                    raw[0].span(),
                    "`lop3` writes `d|p` exactly when it has .or or .and",
                ))
            }
        };
        // ptxas keeps the low 8 bits of a wider constant (0x196 assembles as LOP3.LUT 0x96).
        let lut = match (&raw[4], self.src(b, &raw[4], Type::B32)?) {
            (RawOp::Imm(..), Operand::Imm(v)) => (v & 0xFF) as u8,
            _ => {
                return Err(self
                    .c
                    .err(raw[4].span(), "`lop3` immLut must be an integer constant"))
            }
        };
        Ok(Op::Lop3 {
            lut,
            d,
            a: self.src(b, &raw[1], Type::B32)?,
            b: self.src(b, &raw[2], Type::B32)?,
            c: self.src(b, &raw[3], Type::B32)?,
            pred,
        })
    }

    /// `cvt`, including the packed `.f16x2/.bf16x2.f32 d, a, b` form and `.tf32` (kept as a
    /// .b32 destination). The rounding modifier is checked as ptxas does (PTX ISA 8.x `cvt`,
    /// "Rounding modifiers"): integer rounding is required for float→integer and illegal
    /// elsewhere except same-type float→float; float rounding is required for integer→float
    /// and narrowing float→float, optional between f16 and bf16, illegal elsewhere.
    pub(super) fn cvt(
        &mut self,
        b: &mut Body,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        let rnd = round_of(m);
        let ftz = m.take("ftz");
        let sat = m.take("sat");
        let tf32 = m.take("tf32");
        let (dty, sty) = if tf32 {
            match m.types().as_slice() {
                [Type::F32] => (Type::B32, Type::F32),
                _ => return Err(self.c.err(span, "`cvt.tf32` converts from .f32 only")),
            }
        } else {
            self.two_types(m, "cvt", span)?
        };
        let bit_type = |t: Type| matches!(t, Type::B8 | Type::B16 | Type::B32 | Type::B64);
        if (!tf32 && bit_type(dty)) || bit_type(sty) || dty == Type::Pred || sty == Type::Pred {
            return Err(self.c.err(
                span,
                format!(
                    "`cvt` takes value types such as .u32 or .f32, not .{}.{}",
                    dty.name(),
                    sty.name()
                ),
            ));
        }
        let packed = matches!(dty, Type::F16x2 | Type::Bf16x2);
        let half_dst = packed || matches!(dty, Type::F16 | Type::Bf16) || tf32;
        // `.relu` exists only on the f32 → f16/bf16/tf32 (and packed) forms.
        let relu = half_dst && sty == Type::F32 && m.take("relu");
        let legacy = self.legacy_sm1x();
        let int_r = matches!(rnd, Some(Round::Rni | Round::Rzi | Round::Rmi | Round::Rpi));
        let float_r = matches!(rnd, Some(Round::Rn | Round::Rz | Round::Rm | Round::Rp));
        let what = format!(
            "cvt.{}.{}",
            if tf32 { "tf32" } else { dty.name() },
            sty.name()
        );
        let required = |kind: &str| format!("`{what}` needs {kind} rounding modifier");
        let bad = format!(
            "`{what}` does not take the rounding modifier `.{}`",
            rnd.map(round_name).unwrap_or("")
        );
        let (df, sf) = (dty.is_float() || tf32, sty.is_float());
        let problem = if tf32 || packed {
            // cvt.rna.tf32.f32 (sm_80), cvt.{rn,rz}.tf32.f32 (sm_90), cvt.{rn,rz}.{f16x2,bf16x2}.f32.
            let ok = match rnd {
                Some(Round::Rna) => tf32,
                Some(Round::Rn | Round::Rz) => sty == Type::F32,
                _ => false,
            };
            match rnd {
                None => Some(required(if tf32 {
                    "an .rna, .rn or .rz"
                } else {
                    "an .rn or .rz"
                })),
                _ if !ok => Some(bad.clone()),
                _ if ftz || sat => Some(format!("`{what}` takes no .ftz or .sat")),
                _ => None,
            }
        } else if rnd == Some(Round::Rna) {
            Some(bad.clone())
        } else if legacy {
            None
        } else {
            match (df, sf) {
                (false, false) if rnd.is_some() => Some(bad.clone()),
                (true, false) if int_r => Some(bad.clone()),
                (true, false) if rnd.is_none() => Some(required("a float (.rn, .rz, .rm or .rp)")),
                (false, true) if float_r => Some(bad.clone()),
                (false, true) if rnd.is_none() => {
                    Some(required("an integer (.rni, .rzi, .rmi or .rpi)"))
                }
                (true, true) => {
                    let same_size_swap = dty.bits() == sty.bits() && dty != sty;
                    if dty == sty {
                        float_r.then(|| bad.clone())
                    } else if same_size_swap {
                        int_r.then(|| bad.clone())
                    } else if dty.bits() < sty.bits() {
                        if int_r {
                            Some(bad.clone())
                        } else {
                            rnd.is_none()
                                .then(|| required("a float (.rn, .rz, .rm or .rp)"))
                        }
                    } else {
                        rnd.is_some().then(|| bad.clone())
                    }
                }
                _ => None,
            }
        };
        if let Some(msg) = problem.or_else(|| cvt_ftz_sat_problem(&what, dty, sty, ftz, sat)) {
            return Err(self.c.err(span, msg));
        }
        let mods = crate::ir::Mods {
            relu,
            ..Mods2 {
                rnd,
                ftz,
                sat,
                approx: false,
            }
            .into()
        };
        if packed {
            if sty != Type::F32 {
                return Err(self.c.err(
                    span,
                    format!("`{what}` is not a conversion (packed results come from .f32)"),
                ));
            }
            self.nargs(raw, 3, "cvt", span)?;
            return Ok(Op::CvtPack {
                dty,
                mods,
                d: self.dst_as(b, &raw[0], dty, cvt_agree(dty))?,
                a: self.src(b, &raw[1], Type::F32)?,
                b: self.src(b, &raw[2], Type::F32)?,
            });
        }
        self.nargs(raw, 2, "cvt", span)?;
        // A .bf16 (or .tf32) side makes ptxas take both registers at their exact sizes.
        let agree = if tf32 || matches!(dty, Type::Bf16) || matches!(sty, Type::Bf16) {
            Agree::Exact
        } else {
            Agree::Wider
        };
        Ok(Op::Cvt {
            dty,
            sty,
            mods,
            d: self.dst_as(b, &raw[0], dty, agree)?,
            a: self.src_as(b, &raw[1], sty, Some(agree))?,
        })
    }

    /// Carry-chain arithmetic: the flag lives in a hidden per-function register.
    pub(super) fn carry(
        &mut self,
        b: &mut Body,
        name: &str,
        cc_in: bool,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        let cc_out = m.take("cc");
        let op = match name {
            "add" | "addc" => CarryOp::Add,
            "sub" | "subc" => CarryOp::Sub,
            _ => match m.take_any(&["lo", "hi"]) {
                Some("hi") => CarryOp::MadHi,
                _ => CarryOp::MadLo,
            },
        };
        let ty = self.one_type(m, name, span)?;
        if !matches!(
            ty,
            Type::U32 | Type::S32 | Type::U64 | Type::S64 | Type::B32 | Type::B64
        ) {
            return Err(self.c.err(
                span,
                format!("`{name}` with a carry is defined for 32- and 64-bit integers"),
            ));
        }
        let n = if matches!(op, CarryOp::MadLo | CarryOp::MadHi) {
            4
        } else {
            3
        };
        self.nargs(raw, n, name, span)?;
        let d = self.dst_t(b, &raw[0], ty)?;
        let a = self.src(b, &raw[1], ty)?;
        let bb = self.src(b, &raw[2], ty)?;
        let c = if n == 4 {
            self.src(b, &raw[3], ty)?
        } else {
            Operand::Imm(0)
        };
        Ok(Op::Carry {
            op,
            ty,
            cc_in,
            cc_out,
            cc: b.cc_reg(),
            d,
            a,
            b: bb,
            c,
        })
    }

    pub(super) fn setp(
        &mut self,
        b: &mut Body,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        let cmp =
            cmp_of(m).ok_or_else(|| self.c.err(span, "`setp` needs a comparison such as .lt"))?;
        let bop = bool_of(m);
        let ftz = m.take("ftz");
        let ty = self.one_type(m, "setp", span)?;
        self.nargs(raw, if bop.is_some() { 4 } else { 3 }, "setp", span)?;
        let (p, q) = self.dst_pair(b, &raw[0], Type::Pred)?;
        let comb = match bop {
            Some(o) => Some((o, self.src(b, &raw[3], Type::Pred)?)),
            None => None,
        };
        Ok(Op::Setp {
            cmp,
            ty,
            ftz,
            p,
            q,
            a: self.src(b, &raw[1], ty)?,
            b: self.src(b, &raw[2], ty)?,
            comb,
        })
    }
}
