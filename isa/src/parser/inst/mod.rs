//! One instruction: guard, opcode, modifiers and operands → `ir::Op`.
//!
//! Every opcode accepted here has lane semantics in `semantics` or an effect in the simulator;
//! anything else is rejected with its name, never turned into a no-op.

mod collective;
mod control;
mod data;
mod hopper;
mod memory;
mod sync;
mod tensor;
mod wgmma;
mod wmma;

use super::body::Body;
use super::cursor::PResult;
use super::operand::{Agree, RawOp};
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
    /// The first unconsumed modifier spelled like a type that PTX does not have (`.u7`).
    fn unknown_type(&self) -> Option<&(String, Span)> {
        self.list
            .iter()
            .zip(&self.used)
            .find(|((m, _), u)| !**u && looks_like_type(m) && Type::from_name(m).is_none())
            .map(|(m, _)| m)
    }
    fn unused(&self) -> Option<&(String, Span)> {
        self.list
            .iter()
            .zip(&self.used)
            .find(|(_, u)| !**u)
            .map(|(m, _)| m)
    }
}

/// `b`, `s`, `u` or `f` and a width, optionally `xN`: the shape of a PTX type name (the
/// sub-byte types of `mma`, which gpusim does not implement, excepted).
fn looks_like_type(m: &str) -> bool {
    if matches!(m, "b1" | "s2" | "u2" | "s4" | "u4") {
        return false;
    }
    let Some(rest) = m.strip_prefix(['b', 's', 'u', 'f']) else {
        return false;
    };
    let (width, lanes) = rest.split_once('x').unwrap_or((rest, "1"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    digits(width) && digits(lanes)
}

fn unknown_type_error(p: &ModuleParser, m: &Mods, name: &str) -> Option<crate::span::PtxError> {
    let (t, s) = m.unknown_type()?;
    Some(p.c.err(
        *s,
        format!(
            "unknown type `.{t}` for `{name}` (PTX types: .b8 .b16 .b32 .b64 .b128, .u8 … .u64, \
             .s8 … .s64, .f16 .f16x2 .bf16 .bf16x2 .f32 .f64, .pred)"
        ),
    ))
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
        "shared::cluster",
        "local",
        "const",
        "param",
        "param::entry",
    ]) {
        Some("global") => Space::Global,
        // A .shared::cluster address names a peer CTA's memory by its rank bits (mapa).
        Some("shared" | "shared::cta" | "shared::cluster") => Space::Shared,
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
            self.check_reg(b, reg, Type::Pred, Agree::Exact, s)?;
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
        if let Some(e) = unknown_type_error(self, &mods, &name) {
            return Err(e);
        }
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
        if let Some(e) = unknown_type_error(self, m, name) {
            return Err(e);
        }
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
        if let Some(e) = unknown_type_error(self, m, name) {
            return Err(e);
        }
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
            "mov" | "bfind" | "shf" | "bfi" | "setp" | "set" | "selp" | "slct" | "cvt" | "cvta"
            | "lop3" | "dp4a" | "dp2a" | "testp" | "isspacep" | "bmsk" | "szext" | "fns" => {
                self.decode_data(b, name, nspan, m, raw, span, inst_idx)
            }
            "wgmma" => self.decode_wgmma(b, nspan, m, raw, span),
            "mbarrier" | "elect" | "setmaxnreg" | "mapa" => {
                self.decode_hopper(b, name, nspan, m, raw, span)
            }
            "cp" if ["bulk", "mbarrier", "reduce"].iter().any(|w| m.has(w)) => {
                self.decode_hopper(b, name, nspan, m, raw, span)
            }
            "barrier" if m.has("cluster") => self.decode_hopper(b, name, nspan, m, raw, span),
            "fence" if m.has("proxy") || m.has("mbarrier_init") => {
                self.decode_hopper(b, name, nspan, m, raw, span)
            }
            "ld" | "ldu" | "st" | "atom" | "red" | "cp" => {
                self.decode_memory(b, name, nspan, m, raw, span, inst_idx)
            }
            "bar" | "barrier" | "membar" | "fence" | "nanosleep" => {
                self.decode_sync(b, name, nspan, m, raw, span, inst_idx)
            }
            "shfl" | "vote" | "match" | "activemask" | "redux" => {
                self.decode_collective(b, name, nspan, m, raw, span, inst_idx)
            }
            "bra" | "brx" | "call" | "ret" | "exit" | "trap" | "sync" | "brk" | "break"
            | "prefetch" | "prefetchu" | "ssy" | "preBrk" | "preRet" => {
                self.decode_control(b, name, nspan, m, raw, span, inst_idx)
            }
            "mma" | "ldmatrix" | "stmatrix" => {
                self.decode_tensor(b, name, nspan, m, raw, span, inst_idx)
            }
            "wmma" => self.decode_wmma(b, nspan, m, raw, span),
            _ => Err(self
                .c
                .err(nspan, format!("unsupported instruction `{name}`"))),
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
