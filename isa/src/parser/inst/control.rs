//! Decoding control flow: branches, calls, returns, exits, prefetch hints and the token instructions.

use super::*;

impl<'a> ModuleParser<'a> {
    /// Control flow: branches, calls, returns, exits, traps, prefetch hints and the formal model's token instructions.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decode_control(
        &mut self,
        b: &mut Body,
        name: &str,
        _nspan: Span,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
        inst_idx: usize,
    ) -> PResult<Op> {
        match name {
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
            "ssy" | "preBrk" | "preRet" => {
                self.nargs(raw, 1, name, span)?;
                self.label_ref(b, &raw[0], inst_idx)?;
                Ok(match name {
                    "ssy" => Op::Ssy { target: Pc::MAX },
                    "preBrk" => Op::PreBrk { target: Pc::MAX },
                    _ => Op::PreRet { target: Pc::MAX },
                })
            }
            _ => unreachable!("`decode` dispatches only control instructions here"),
        }
    }

    pub(super) fn call(
        &mut self,
        b: &mut Body,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
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
                    // A register argument passes as its own type.
                    RawOp::Name(..) => self.src_as(b, a, Type::B64, None)?,
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
                None => {
                    let id = self.func_id(n, Some(*s));
                    b.callees.insert(id);
                    Callee::Direct(id)
                }
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

    pub(super) fn param_symbol(&mut self, b: &mut Body, raw: &RawOp) -> PResult<SymbolId> {
        match raw {
            RawOp::Name(n, s) => b.lookup_sym(n).ok_or_else(|| {
                self.c
                    .err(*s, format!("`{n}` is not a .param variable in scope"))
            }),
            other => Err(self.c.err(other.span(), "expected a .param variable")),
        }
    }
}
