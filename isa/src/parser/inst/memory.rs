//! Decoding memory instructions: ld, st, atom, red.

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
