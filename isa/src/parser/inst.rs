//! One instruction: guard, opcode, modifiers and operands → `ir::Op`.
//!
//! Every opcode accepted here has lane semantics in `semantics` or an effect in the simulator;
//! anything else is rejected with its name, never turned into a no-op.

use super::body::Body;
use super::cursor::PResult;
use super::operand::RawOp;
use super::ModuleParser;
use crate::ir::*;
use crate::lexer::Tok;
use crate::semantics;
use crate::span::Span;

/// The modifiers of one instruction; each must be consumed by its decoder.
struct Mods {
    list: Vec<(String, Span)>,
    used: Vec<bool>,
}

impl Mods {
    fn take(&mut self, word: &str) -> bool {
        for (i, (m, _)) in self.list.iter().enumerate() {
            if !self.used[i] && m == word {
                self.used[i] = true;
                return true;
            }
        }
        false
    }
    /// Whether `word` is present and not yet consumed.
    fn has(&self, word: &str) -> bool {
        self.list
            .iter()
            .zip(&self.used)
            .any(|((m, _), u)| !*u && m == word)
    }
    fn take_any<'w>(&mut self, words: &[&'w str]) -> Option<&'w str> {
        words.iter().copied().find(|w| self.take(w))
    }
    /// All type modifiers, in order.
    fn types(&mut self) -> Vec<Type> {
        let mut out = Vec::new();
        for (i, (m, _)) in self.list.iter().enumerate() {
            if !self.used[i] {
                if let Some(t) = Type::from_name(m) {
                    self.used[i] = true;
                    out.push(t);
                }
            }
        }
        out
    }
    /// Memory-model qualifiers and cache hints that do not change a value.
    fn take_memory_hints(&mut self) {
        for (i, (m, _)) in self.list.iter().enumerate() {
            let hint = matches!(
                m.as_str(),
                "weak"
                    | "relaxed"
                    | "acquire"
                    | "release"
                    | "sc"
                    | "acq_rel"
                    | "cta"
                    | "gpu"
                    | "sys"
                    | "cluster"
                    | "nc"
            ) || m.starts_with("L1::")
                || m.starts_with("L2::")
                || m.starts_with("level::");
            if hint {
                self.used[i] = true;
            }
        }
    }
    fn unused(&self) -> Option<&(String, Span)> {
        self.list
            .iter()
            .zip(&self.used)
            .find(|(_, u)| !**u)
            .map(|(m, _)| m)
    }
}

fn wide(ty: Type) -> Option<Type> {
    Some(match ty {
        Type::U16 => Type::U32,
        Type::S16 => Type::S32,
        Type::U32 => Type::U64,
        Type::S32 => Type::S64,
        Type::B16 => Type::B32,
        Type::B32 => Type::B64,
        _ => return None,
    })
}

fn round_of(m: &mut Mods) -> Option<Round> {
    let r = m.take_any(&["rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna"])?;
    Some(match r {
        "rn" => Round::Rn,
        "rz" => Round::Rz,
        "rm" => Round::Rm,
        "rp" => Round::Rp,
        "rni" => Round::Rni,
        "rzi" => Round::Rzi,
        "rmi" => Round::Rmi,
        "rpi" => Round::Rpi,
        _ => Round::Rna,
    })
}

fn round_name(r: Round) -> &'static str {
    match r {
        Round::Rn => "rn",
        Round::Rz => "rz",
        Round::Rm => "rm",
        Round::Rp => "rp",
        Round::Rni => "rni",
        Round::Rzi => "rzi",
        Round::Rmi => "rmi",
        Round::Rpi => "rpi",
        Round::Rna => "rna",
    }
}

fn cmp_of(m: &mut Mods) -> Option<Cmp> {
    let w = m.take_any(&[
        "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu",
        "gtu", "geu", "num", "nan",
    ])?;
    Some(match w {
        "eq" => Cmp::Eq,
        "ne" => Cmp::Ne,
        "lt" => Cmp::Lt,
        "le" => Cmp::Le,
        "gt" => Cmp::Gt,
        "ge" => Cmp::Ge,
        "lo" => Cmp::Lo,
        "ls" => Cmp::Ls,
        "hi" => Cmp::Hi,
        "hs" => Cmp::Hs,
        "equ" => Cmp::Equ,
        "neu" => Cmp::Neu,
        "ltu" => Cmp::Ltu,
        "leu" => Cmp::Leu,
        "gtu" => Cmp::Gtu,
        "geu" => Cmp::Geu,
        "num" => Cmp::Num,
        _ => Cmp::Nan,
    })
}

fn bool_of(m: &mut Mods) -> Option<BoolOp> {
    Some(match m.take_any(&["and", "or", "xor"])? {
        "and" => BoolOp::And,
        "or" => BoolOp::Or,
        _ => BoolOp::Xor,
    })
}

fn space_of(m: &mut Mods) -> Space {
    // `::cta` and `::entry` name the default sub-space of .shared and .param (PTX ISA 7.8, 8.3).
    match m.take_any(&[
        "global",
        "shared",
        "shared::cta",
        "local",
        "const",
        "param",
        "param::entry",
    ]) {
        Some("global") => Space::Global,
        Some("shared" | "shared::cta") => Space::Shared,
        Some("local") => Space::Local,
        Some("const") => Space::Const,
        Some("param" | "param::entry") => Space::Param,
        _ => Space::Generic,
    }
}

fn arith_op(name: &str) -> Option<ArithOp> {
    use ArithOp::*;
    Some(match name {
        "add" => Add,
        "sub" => Sub,
        "mul" => Mul,
        "mad" => Mad,
        "mul24" => Mul24Lo,
        "mad24" => Mad24Lo,
        "div" => Div,
        "rem" => Rem,
        "abs" => Abs,
        "neg" => Neg,
        "min" => Min,
        "max" => Max,
        "and" => And,
        "or" => Or,
        "xor" => Xor,
        "not" => Not,
        "cnot" => Cnot,
        "shl" => Shl,
        "shr" => Shr,
        "bfe" => Bfe,
        "brev" => Brev,
        "popc" => Popc,
        "clz" => Clz,
        "prmt" => Prmt(PrmtMode::Default),
        "fma" => Fma,
        "rcp" => Rcp,
        "sqrt" => Sqrt,
        "rsqrt" => Rsqrt,
        "sin" => Sin,
        "cos" => Cos,
        "lg2" => Lg2,
        "ex2" => Ex2,
        "tanh" => Tanh,
        "copysign" => Copysign,
        "sad" => Sad,
        _ => return None,
    })
}

impl<'a> ModuleParser<'a> {
    pub(crate) fn instruction(&mut self, b: &mut Body) -> PResult<Inst> {
        let start = self.c.span();
        let guard = if self.c.eat(&Tok::At) {
            let negated = self.c.eat(&Tok::Bang);
            let (name, s) = self.c.expect_ident("a predicate register")?;
            let reg = b
                .lookup_reg(&name)
                .ok_or_else(|| self.c.err(s, format!("undefined predicate `{name}`")))?;
            Some(Guard { reg, negated })
        } else {
            None
        };
        let (name, name_span) = self.c.expect_ident("an instruction")?;
        let mut list = Vec::new();
        while let Some(Tok::Dot(d)) = self.c.peek().cloned() {
            list.push((d[1..].to_string(), self.c.span()));
            self.c.bump()?;
        }
        let used = vec![false; list.len()];
        let mut mods = Mods { list, used };
        let raw = self.raw_operands()?;
        let end = self.c.prev_span();
        let span = Span {
            line: start.line,
            col: start.col,
            start: start.start,
            end: end.end,
        };
        let op = self.decode(b, &name, name_span, &mut mods, &raw, span)?;
        if let Some((m, ms)) = mods.unused() {
            return Err(self
                .c
                .err(*ms, format!("unsupported modifier `.{m}` for `{name}`")));
        }
        Ok(Inst { guard, op, span })
    }

    fn nargs(&self, raw: &[RawOp], n: usize, name: &str, span: Span) -> PResult<()> {
        if raw.len() != n {
            return Err(self.c.err(
                span,
                format!("`{name}` takes {n} operands, found {}", raw.len()),
            ));
        }
        Ok(())
    }

    fn one_type(&self, m: &mut Mods, name: &str, span: Span) -> PResult<Type> {
        match m.types().as_slice() {
            [t] => Ok(*t),
            [] => Err(self
                .c
                .err(span, format!("`{name}` needs a type modifier such as .u32"))),
            _ => Err(self
                .c
                .err(span, format!("`{name}` takes one type modifier"))),
        }
    }

    fn two_types(&self, m: &mut Mods, name: &str, span: Span) -> PResult<(Type, Type)> {
        match m.types().as_slice() {
            [d, s] => Ok((*d, *s)),
            _ => Err(self.c.err(
                span,
                format!("`{name}` needs a destination and a source type, e.g. `.f32.s32`"),
            )),
        }
    }

    fn decode(
        &mut self,
        b: &mut Body,
        name: &str,
        nspan: Span,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        let inst_idx = b.insts.len();
        let carry_in = matches!(name, "addc" | "subc" | "madc");
        if carry_in
            || (matches!(name, "add" | "sub" | "mad") && m.list.iter().any(|(w, _)| w == "cc"))
        {
            return self.carry(b, name, carry_in, m, raw, span);
        }
        if let Some(op) = arith_op(name) {
            return self.arith(b, name, op, m, raw, span);
        }
        match name {
            "mov" => {
                let ty = self.one_type(m, name, span)?;
                self.nargs(raw, 2, name, span)?;
                match (&raw[0], &raw[1]) {
                    (RawOp::Vec(..), _) => Ok(Op::MovUnpack {
                        ty,
                        d: self.dst_vec(b, &raw[0])?,
                        a: self.src(b, &raw[1], ty)?,
                    }),
                    (_, RawOp::Vec(items, _)) => {
                        let part_ty = match (ty.size() as usize).checked_div(items.len()) {
                            Some(1) => Type::B8,
                            Some(2) => Type::B16,
                            Some(4) => Type::B32,
                            _ => Type::B64,
                        };
                        Ok(Op::MovPack {
                            ty,
                            d: self.dst(b, &raw[0])?,
                            parts: self.src_vec(b, &raw[1], part_ty)?,
                        })
                    }
                    _ => Ok(Op::Mov {
                        ty,
                        d: self.dst(b, &raw[0])?,
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
                    d: self.dst(b, &raw[0])?,
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
                    d: self.dst(b, &raw[0])?,
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
                    d: self.dst(b, &raw[0])?,
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
                    d: self.dst(b, &raw[0])?,
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
                    d: self.dst(b, &raw[0])?,
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
                    d: self.dst(b, &raw[0])?,
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
                    d: self.dst(b, &raw[0])?,
                    a: self.src(b, &raw[1], ty)?,
                })
            }
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
                    d: self.dst_vec(b, &raw[0])?,
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
                    src: self.src_vec(b, &raw[1], ty)?,
                })
            }
            "atom" | "red" => self.atom(b, name, m, raw, span),
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
                if m.take("proxy") {
                    return Err(self.c.err(nspan, "unsupported instruction `fence.proxy` (async proxies are not modelled yet)"));
                }
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
                let (d, p) = self.dst_pair(b, &raw[0])?;
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
                let _ty = self.one_type(m, name, span)?;
                self.nargs(raw, if sync { 3 } else { 2 }, name, span)?;
                let mask = if sync {
                    self.src(b, &raw[2], Type::B32)?
                } else {
                    Operand::Imm(u32::MAX as u64)
                };
                Ok(Op::Vote {
                    mode,
                    d: self.dst(b, &raw[0])?,
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
                let (d, p) = self.dst_pair(b, &raw[0])?;
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
                    d: self.dst(b, &raw[0])?,
                })
            }
            "bra" => {
                let uni = m.take("uni");
                self.nargs(raw, 1, name, span)?;
                self.label_ref(b, &raw[0], inst_idx)?;
                Ok(Op::Bra {
                    target: Pc::MAX,
                    uni,
                })
            }
            "brx" => {
                if !m.take("idx") {
                    return Err(self.c.err(span, "only `brx.idx` is supported"));
                }
                let uni = m.take("uni");
                self.nargs(raw, 2, name, span)?;
                let index = self.src(b, &raw[0], Type::U32)?;
                self.label_ref(b, &raw[1], inst_idx)?;
                Ok(Op::BrxIdx {
                    index,
                    targets: Vec::new(),
                    uni,
                })
            }
            "call" => self.call(b, m, raw, span),
            "ret" => {
                let uni = m.take("uni");
                self.nargs(raw, 0, name, span)?;
                Ok(Op::Ret { uni })
            }
            "exit" | "trap" | "sync" | "brk" | "break" | "prefetch" | "prefetchu" => {
                if name.starts_with("prefetch") {
                    // `prefetch{.space}.level [a]`: a cache hint that changes no value, so it
                    // retires as a no-op (the address is still parsed and checked).
                    m.take_memory_hints();
                    m.take_any(&["L1", "L2"]);
                    space_of(m);
                    self.nargs(raw, 1, name, span)?;
                    self.addr(b, &raw[0])?;
                    return Ok(Op::Nop);
                }
                self.nargs(raw, 0, name, span)?;
                Ok(match name {
                    "exit" => Op::Exit,
                    "trap" => Op::Trap,
                    "sync" => Op::Sync,
                    _ => Op::Brk,
                })
            }
            "lop3" => self.lop3(b, m, raw, span),
            "mma" => self.mma(b, m, raw, span),
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
                    d: self.dst(b, &raw[0])?,
                    a: self.src(b, &raw[1], at)?,
                    b: self.src(b, &raw[2], bt)?,
                    c: self.src(b, &raw[3], ct)?,
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
                    d: self.dst(b, &raw[0])?,
                    a: self.src(b, &raw[1], ty)?,
                    mask: self.src(b, &raw[2], Type::B32)?,
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
                    p: self.dst(b, &raw[0])?,
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
                Ok(Op::Isspacep {
                    space,
                    p: self.dst(b, &raw[0])?,
                    a: self.src(b, &raw[1], Type::U64)?,
                })
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
                    d: self.dst(b, &raw[0])?,
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
                    d: self.dst(b, &raw[0])?,
                    a: self.src(b, &raw[1], Type::B32)?,
                    b: self.src(b, &raw[2], Type::U32)?,
                    c: self.src(b, &raw[3], Type::S32)?,
                })
            }
            "ssy" | "preBrk" | "preRet" => {
                self.nargs(raw, 1, name, span)?;
                self.label_ref(b, &raw[0], inst_idx)?;
                Ok(match name {
                    "ssy" => Op::Ssy { target: Pc::MAX },
                    "preBrk" => Op::PreBrk { target: Pc::MAX },
                    _ => Op::PreRet { target: Pc::MAX },
                })
            }
            _ => Err(self
                .c
                .err(nspan, format!("unsupported instruction `{name}`"))),
        }
    }

    /// `mma.sync.aligned.shape.row.col.f32.ty.ty.f32 d, a, b, c` with shape m16n8k16 (f16,
    /// bf16) or m16n8k8 (f16, bf16, tf32): PTX ISA 9.0 §9.7.14.5.14. Other shapes and types,
    /// and f16 accumulators, are rejected by name.
    fn mma(&mut self, b: &mut Body, m: &mut Mods, raw: &[RawOp], span: Span) -> PResult<Op> {
        if !(m.take("sync") && m.take("aligned")) {
            return Err(self
                .c
                .err(span, "`mma` needs .sync and .aligned (mma.sync.aligned...)"));
        }
        let shape = match m.take_any(&["m16n8k16", "m16n8k8"]) {
            Some("m16n8k16") => MmaShape::M16n8k16,
            Some(_) => MmaShape::M16n8k8,
            None => {
                return Err(self.c.err(
                    span,
                    "unsupported `mma` shape: gpusim supports .m16n8k16 and .m16n8k8",
                ))
            }
        };
        // The rest, in order: .row.col.dtype.atype.btype.ctype.
        let rest: Vec<(usize, String)> = m
            .list
            .iter()
            .enumerate()
            .filter(|(i, _)| !m.used[*i])
            .map(|(i, (w, _))| (i, w.clone()))
            .collect();
        let words: Vec<&str> = rest.iter().map(|(_, w)| w.as_str()).collect();
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
            a: self.reg_vec(b, &raw[1], na, "a")?,
            b: self.reg_vec(b, &raw[2], nb, "b")?,
            c: self.reg_vec(b, &raw[3], 4, "c")?,
        })
    }

    /// A source vector of exactly `n` registers (`{%r1, %r2}`; one register may go without
    /// braces), for the `what` operand of `mma`.
    fn reg_vec(&mut self, b: &mut Body, raw: &RawOp, n: usize, what: &str) -> PResult<RegVec> {
        let items: Vec<&RawOp> = match raw {
            RawOp::Vec(items, _) => items.iter().collect(),
            other => vec![other],
        };
        if items.len() != n {
            return Err(self.c.err(
                raw.span(),
                format!(
                    "`mma` operand {what} takes {n} register{} here, found {}",
                    if n == 1 { "" } else { "s" },
                    items.len()
                ),
            ));
        }
        let mut v = RegVec {
            regs: [RegId(0); 4],
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
                        format!("`mma` operand {what} takes registers"),
                    ))
                }
            };
        }
        Ok(v)
    }

    fn cache_op(&self, m: &mut Mods, allowed: &[&str]) -> Option<CacheOp> {
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

    fn dst_pair(&mut self, b: &mut Body, raw: &RawOp) -> PResult<(RegId, Option<RegId>)> {
        match raw {
            RawOp::Pair(d, p, _) => Ok((self.dst(b, d)?, Some(self.dst(b, p)?))),
            other => Ok((self.dst(b, other)?, None)),
        }
    }

    fn arith(
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
        let d = self.dst(b, &raw[0])?;
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
    fn check_float_rounding(
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
    fn legacy_sm1x(&self) -> bool {
        matches!(
            self.module.target.as_str(),
            "sm_10" | "sm_11" | "sm_12" | "sm_13"
        )
    }

    /// `lop3.b32 d, a, b, c, immLut` and `lop3.{or,and}.b32 d|p, a, b, c, immLut, q`
    /// (PTX ISA 8.x §9.7.7.6; the predicate form needs PTX 8.2).
    fn lop3(&mut self, b: &mut Body, m: &mut Mods, raw: &[RawOp], span: Span) -> PResult<Op> {
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
        let (d, p) = self.dst_pair(b, &raw[0])?;
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
    fn cvt(&mut self, b: &mut Body, m: &mut Mods, raw: &[RawOp], span: Span) -> PResult<Op> {
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
        if let Some(msg) = problem {
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
                d: self.dst(b, &raw[0])?,
                a: self.src(b, &raw[1], Type::F32)?,
                b: self.src(b, &raw[2], Type::F32)?,
            });
        }
        self.nargs(raw, 2, "cvt", span)?;
        Ok(Op::Cvt {
            dty,
            sty,
            mods,
            d: self.dst(b, &raw[0])?,
            a: self.src(b, &raw[1], sty)?,
        })
    }

    /// Carry-chain arithmetic: the flag lives in a hidden per-function register.
    fn carry(
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
        let d = self.dst(b, &raw[0])?;
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

    fn setp(&mut self, b: &mut Body, m: &mut Mods, raw: &[RawOp], span: Span) -> PResult<Op> {
        let cmp =
            cmp_of(m).ok_or_else(|| self.c.err(span, "`setp` needs a comparison such as .lt"))?;
        let bop = bool_of(m);
        let ftz = m.take("ftz");
        let ty = self.one_type(m, "setp", span)?;
        self.nargs(raw, if bop.is_some() { 4 } else { 3 }, "setp", span)?;
        let (p, q) = self.dst_pair(b, &raw[0])?;
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

    fn atom(
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
            (Some(self.dst(b, &raw[0])?), &raw[1..])
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

    fn bar(
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
                let _ = self.one_type(m, name, span)?;
                if raw.len() != 3 && raw.len() != 4 {
                    return Err(self
                        .c
                        .err(span, "`bar.red` takes d, barrier, [count,] predicate"));
                }
                let d = self.dst(b, &raw[0])?;
                let id = self.src(b, &raw[1], Type::U32)?;
                let count = if raw.len() == 4 {
                    Some(self.src(b, &raw[2], Type::U32)?)
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
                let id = self.src(b, &raw[0], Type::U32)?;
                let count = if raw.len() == 2 {
                    Some(self.src(b, &raw[1], Type::U32)?)
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

    fn call(&mut self, b: &mut Body, m: &mut Mods, raw: &[RawOp], span: Span) -> PResult<Op> {
        let uni = m.take("uni");
        let mut it = raw.iter().peekable();
        let mut rets = Vec::new();
        if let Some(RawOp::List(items, _)) = it.peek() {
            for r in items {
                rets.push(self.param_symbol(b, r)?);
            }
            it.next();
        }
        let Some(target) = it.next() else {
            return Err(self.c.err(span, "`call` needs a function"));
        };
        let mut args = Vec::new();
        if let Some(RawOp::List(items, _)) = it.peek() {
            for a in items {
                let op = match a {
                    RawOp::Name(..) => self.src(b, a, Type::B64)?,
                    RawOp::Imm(..) => self.src(b, a, Type::B32)?,
                    other => {
                        return Err(self.c.err(
                            other.span(),
                            "a call argument must be a .param variable, register or constant",
                        ))
                    }
                };
                args.push(op);
            }
            it.next();
        }
        let callee = match target {
            RawOp::Name(n, s) => match b.lookup_reg(n) {
                Some(reg) => {
                    // Indirect: the last operand names a prototype or a .calltargets table.
                    let Some(RawOp::Name(..)) = it.next() else {
                        return Err(self
                            .c
                            .err(*s, "an indirect call needs a prototype or target list"));
                    };
                    Callee::Indirect {
                        reg,
                        targets: Vec::new(),
                    }
                }
                None => Callee::Direct(self.func_id(n, Some(*s))),
            },
            other => return Err(self.c.err(other.span(), "expected a function name")),
        };
        if it.next().is_some() {
            return Err(self.c.err(span, "too many operands for `call`"));
        }
        Ok(Op::Call {
            callee,
            rets,
            args,
            uni,
        })
    }

    fn param_symbol(&mut self, b: &mut Body, raw: &RawOp) -> PResult<SymbolId> {
        match raw {
            RawOp::Name(n, s) => b.lookup_sym(n).ok_or_else(|| {
                self.c
                    .err(*s, format!("`{n}` is not a .param variable in scope"))
            }),
            other => Err(self.c.err(other.span(), "expected a .param variable")),
        }
    }
}

/// Builder for `ir::Mods` (kept separate so decoders name each field).
struct Mods2 {
    rnd: Option<Round>,
    ftz: bool,
    sat: bool,
    approx: bool,
}

impl From<Mods2> for crate::ir::Mods {
    fn from(m: Mods2) -> Self {
        crate::ir::Mods {
            rnd: m.rnd,
            ftz: m.ftz,
            sat: m.sat,
            approx: m.approx,
            ..crate::ir::Mods::default()
        }
    }
}
