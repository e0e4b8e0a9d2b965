//! Decoding `mma.sync.aligned.m8n8k4` (the quad-pair shape, PTX ISA 9.0 §9.7.14.5.14) and
//! the `wmma` family (§9.7.14.4: `wmma.load`, `wmma.store`, `wmma.mma`). Qualifiers may come
//! in any order (ptxas accepts both `.row.m16n16k16` and `.m16n16k16.row`), except that the
//! first layout of `wmma.mma` is A's and the types are read in order.

use super::*;

/// The unconsumed modifiers, in order, with their indices.
fn rest(m: &Mods) -> Vec<(usize, String)> {
    m.list
        .iter()
        .enumerate()
        .filter(|(i, _)| !m.used[*i])
        .map(|(i, (w, _))| (i, w.clone()))
        .collect()
}

fn layout(w: &str) -> Option<MatLayout> {
    match w {
        "row" => Some(MatLayout::Row),
        "col" => Some(MatLayout::Col),
        _ => None,
    }
}

fn wmma_type(w: &str) -> Option<WmmaType> {
    Some(match w {
        "f16" => WmmaType::F16,
        "bf16" => WmmaType::Bf16,
        "tf32" => WmmaType::Tf32,
        "s8" => WmmaType::S8,
        "u8" => WmmaType::U8,
        "f32" => WmmaType::F32,
        "s32" => WmmaType::S32,
        _ => return None,
    })
}

impl<'a> ModuleParser<'a> {
    /// `mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype d, a, b, c` with
    /// `.dtype`, `.ctype` ∈ {.f16, .f32}; `.sync.aligned.m8n8k4` already consumed.
    pub(super) fn mma_m884(
        &mut self,
        b: &mut Body,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        let rest = rest(m);
        let words: Vec<&str> = rest.iter().map(|(_, w)| w.as_str()).collect();
        let acc = |w: &str| match w {
            "f16" => Some(AccType::F16),
            "f32" => Some(AccType::F32),
            _ => None,
        };
        let form = match words.as_slice() {
            [al, bl, dt, "f16", "f16", ct] => layout(al).zip(layout(bl)).zip(acc(dt).zip(acc(ct))),
            _ => None,
        };
        let Some(((alayout, blayout), (dty, cty))) = form else {
            return Err(self.c.err(
                span,
                format!(
                    "unsupported `mma.m8n8k4` form .{}: gpusim supports .{{row,col}}.{{row,col}}.{{f16,f32}}.f16.f16.{{f16,f32}}",
                    words.join(".")
                ),
            ));
        };
        for (i, _) in rest {
            m.used[i] = true;
        }
        self.nargs(raw, 4, "mma", span)?;
        Ok(Op::MmaM884 {
            alayout,
            blayout,
            dty,
            cty,
            d: self.reg_vec(b, &raw[0], semantics::mma_m884_regs(dty), "mma", "d")?,
            a: self.reg_vec(b, &raw[1], 2, "mma", "a")?,
            b: self.reg_vec(b, &raw[2], 2, "mma", "b")?,
            c: self.reg_vec(b, &raw[3], semantics::mma_m884_regs(cty), "mma", "c")?,
        })
    }

    /// `wmma.load`, `wmma.store`, `wmma.mma` (PTX ISA 9.0 §9.7.14.4.3–5) for the shapes
    /// m16n16k16, m32n8k16, m8n32k16 (.f16, .bf16, .s8, .u8) and m16n16k8 (.tf32). The
    /// f64, sub-byte and single-bit forms are rejected by name.
    pub(super) fn decode_wmma(
        &mut self,
        b: &mut Body,
        nspan: Span,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        let Some(kind) = m.take_any(&["load", "store", "mma"]) else {
            return Err(self.c.err(
                nspan,
                "`wmma` needs .load, .store or .mma (wmma.load.a.sync.aligned...)",
            ));
        };
        let frag = match kind {
            "load" => match m.take_any(&["a", "b", "c"]) {
                Some("a") => Some(WmmaFrag::A),
                Some("b") => Some(WmmaFrag::B),
                Some(_) => Some(WmmaFrag::C),
                None => return Err(self.c.err(span, "`wmma.load` needs .a, .b or .c")),
            },
            "store" if m.take("d") => None,
            "store" => return Err(self.c.err(span, "`wmma.store` needs .d")),
            _ => None,
        };
        if !(m.take("sync") && m.take("aligned")) {
            return Err(self.c.err(
                span,
                format!("`wmma.{kind}` needs .sync and .aligned (wmma.{kind}...sync.aligned...)"),
            ));
        }
        let shape = match m.take_any(&["m16n16k16", "m32n8k16", "m8n32k16", "m16n16k8"]) {
            Some("m16n16k16") => WmmaShape::M16n16k16,
            Some("m32n8k16") => WmmaShape::M32n8k16,
            Some("m8n32k16") => WmmaShape::M8n32k16,
            Some(_) => WmmaShape::M16n16k8,
            None => {
                return Err(self.c.err(
                    span,
                    "unsupported `wmma` shape: gpusim supports .m16n16k16, .m32n8k16, .m8n32k16 (.f16, .bf16, .s8, .u8) and .m16n16k8 (.tf32)",
                ))
            }
        };
        if kind == "mma" {
            return self.wmma_mma(b, m, raw, span, shape);
        }
        let Some(lay) = m.take_any(&["row", "col"]).and_then(layout) else {
            return Err(self
                .c
                .err(span, format!("`wmma.{kind}` needs .row or .col")));
        };
        let space = match m.take_any(&["global", "shared", "shared::cta"]) {
            Some("global") => Space::Global,
            Some(_) => Space::Shared,
            None => Space::Generic,
        };
        let rest = rest(m);
        let ty = match rest.as_slice() {
            [(i, w)] => match wmma_type(w) {
                Some(t) => {
                    m.used[*i] = true;
                    t
                }
                None => {
                    return Err(self.c.err(
                        span,
                        format!("unsupported `wmma.{kind}` element type .{w}: gpusim supports .f16, .bf16, .tf32, .s8, .u8, .f32 and .s32"),
                    ))
                }
            },
            _ => {
                return Err(self.c.err(
                    span,
                    format!("`wmma.{kind}` needs exactly one element type"),
                ))
            }
        };
        let fr = frag.unwrap_or(WmmaFrag::C);
        let Some(n) = semantics::wmma_regs(fr, shape, ty) else {
            let which = match frag {
                Some(f) => format!("matrix {}", f.name()),
                None => "matrix d".to_string(),
            };
            return Err(self.c.err(
                span,
                format!(
                    "`wmma.{kind}` of {which} is not defined for .{} with .{}",
                    shape.name(),
                    ty.name()
                ),
            ));
        };
        if raw.len() != 2 && raw.len() != 3 {
            return Err(self.c.err(
                span,
                format!(
                    "`wmma.{kind}` takes 2 or 3 operands (the third is the stride), found {}",
                    raw.len()
                ),
            ));
        }
        let stride = match raw.get(2) {
            Some(s) => Some(self.src(b, s, Type::U32)?),
            None => None,
        };
        Ok(match frag {
            Some(frag) => Op::WmmaLoad {
                frag,
                layout: lay,
                shape,
                space,
                ty,
                d: self.reg_vec(b, &raw[0], n, "wmma.load", "r")?,
                addr: self.addr(b, &raw[1])?,
                stride,
            },
            None => Op::WmmaStore {
                layout: lay,
                shape,
                space,
                ty,
                addr: self.addr(b, &raw[0])?,
                src: self.reg_vec(b, &raw[1], n, "wmma.store", "r")?,
                stride,
            },
        })
    }

    /// `wmma.mma.sync.aligned.alayout.blayout.shape.<types> d, a, b, c`; `.mma`, `.sync`,
    /// `.aligned` and the shape already consumed. Types: `dtype.ctype` (implicit `.f16`
    /// multiplicands, optionally followed by the legacy `.satfinite`), `dtype.atype.btype.ctype`
    /// with A and B alike, and `.satfinite` after the integer forms.
    fn wmma_mma(
        &mut self,
        b: &mut Body,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
        shape: WmmaShape,
    ) -> PResult<Op> {
        let rest = rest(m);
        let words: Vec<&str> = rest.iter().map(|(_, w)| w.as_str()).collect();
        let lay: Vec<MatLayout> = words.iter().filter_map(|w| layout(w)).collect();
        let types: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| layout(w).is_none())
            .collect();
        let [alayout, blayout] = lay.as_slice() else {
            return Err(self.c.err(
                span,
                "`wmma.mma` needs two layouts, A's then B's (.row or .col each)",
            ));
        };
        let (types, satfinite) = match types.as_slice() {
            [t @ .., "satfinite"] => (t, true),
            t => (t, false),
        };
        let ty = |w: &str| wmma_type(w);
        let form = match types {
            [d, c] => ty(d).zip(ty(c)).map(|(d, c)| (WmmaType::F16, d, c)),
            [d, a, bt, c] if a == bt => ty(a).zip(ty(d).zip(ty(c))).map(|(a, (d, c))| (a, d, c)),
            _ => None,
        };
        let Some((ab, dty, cty)) = form.filter(|&(ab, d, c)| {
            // `.satfinite`: integer forms, and the legacy one of `.f16` inputs.
            let sat_ok = !satfinite || matches!(ab, WmmaType::F16 | WmmaType::S8 | WmmaType::U8);
            sat_ok && semantics::wmma_mma_valid(shape, ab, d, c)
        }) else {
            return Err(self.c.err(
                span,
                format!(
                    "unsupported `wmma.mma.{}` form .{}: gpusim supports .{{f16,f32}}.{{f16,f32}} (f16 inputs), .f32.bf16.bf16.f32, .f32.tf32.tf32.f32 (m16n16k8) and .s32.{{s8,u8}}.{{s8,u8}}.s32{{.satfinite}} with A and B alike",
                    shape.name(),
                    types.join(".")
                ),
            ));
        };
        for (i, _) in rest {
            m.used[i] = true;
        }
        self.nargs(raw, 4, "wmma.mma", span)?;
        let regs = |f| semantics::wmma_regs(f, shape, ab).unwrap_or(0);
        let acc = |t| semantics::wmma_regs(WmmaFrag::C, shape, t).unwrap_or(0);
        Ok(Op::WmmaMma {
            alayout: *alayout,
            blayout: *blayout,
            shape,
            ab,
            dty,
            cty,
            satfinite,
            d: self.reg_vec(b, &raw[0], acc(dty), "wmma.mma", "d")?,
            a: self.reg_vec(b, &raw[1], regs(WmmaFrag::A), "wmma.mma", "a")?,
            b: self.reg_vec(b, &raw[2], regs(WmmaFrag::B), "wmma.mma", "b")?,
            c: self.reg_vec(b, &raw[3], acc(cty), "wmma.mma", "c")?,
        })
    }
}
