//! Function bodies: nested `{}` scopes, register declarations (`%r<N>` ranges), body-scope
//! variables, labels (scoped, renamed when shadowed), branch tables and call prototypes.
//!
//! Labels may be used before they are defined, so a pre-scan collects each scope's labels
//! first; branch targets are patched to pcs once the body is complete.

use super::cursor::PResult;
use super::decl::space_of;
use super::ModuleParser;
use crate::ir::*;
use crate::lexer::Tok;
use crate::span::Span;
use std::collections::{BTreeSet, HashMap, HashSet};

#[derive(Default)]
pub(crate) struct Scope {
    pub id: usize,
    pub regs: HashMap<String, RegId>,
    pub syms: HashMap<String, SymbolId>,
}

pub(crate) struct Fixup {
    pub inst: usize,
    /// The unique label name (a branch table's name for `brx.idx`).
    pub label: String,
    pub span: Span,
}

pub(crate) struct Body {
    pub func: FuncId,
    pub regs: Vec<RegInfo>,
    pub scopes: Vec<Scope>,
    /// Pre-scanned labels: scope id → source name → unique name.
    pub scope_labels: Vec<HashMap<String, String>>,
    pub next_scope: usize,
    pub insts: Vec<Inst>,
    pub label_pc: HashMap<String, Pc>,
    pub tables: HashMap<String, Vec<(String, Span)>>,
    pub protos: HashSet<String>,
    pub fixups: Vec<Fixup>,
    pub frame_vars: Vec<SymbolId>,
    /// `Function::uses` and `Function::callees`, as the body names them.
    pub uses: BTreeSet<SymbolId>,
    pub callees: BTreeSet<FuncId>,
    pub sink: Option<RegId>,
    pub cc: Option<RegId>,
}

impl Body {
    /// Note that the body names `sym`, when it is a module-scope (segment) variable.
    pub fn note_use(&mut self, sym: SymbolId, space: Space) {
        if matches!(space, Space::Shared | Space::Global | Space::Const) {
            self.uses.insert(sym);
        }
    }
    pub fn lookup_reg(&self, name: &str) -> Option<RegId> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.regs.get(name).copied())
    }
    pub fn lookup_sym(&self, name: &str) -> Option<SymbolId> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.syms.get(name).copied())
    }
    pub fn lookup_label(&self, name: &str) -> Option<String> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| self.scope_labels[s.id].get(name).cloned())
    }
    /// What `name` already names in the innermost scope, if anything: registers, variables
    /// and labels share one namespace per scope (ptxas: "Duplicate definition").
    pub fn declared_here(&self, name: &str) -> Option<&'static str> {
        let s = self.scopes.last()?;
        if s.regs.contains_key(name) {
            Some("a register")
        } else if s.syms.contains_key(name) {
            Some("a variable or parameter")
        } else if self.scope_labels[s.id].contains_key(name) {
            Some("a label")
        } else {
            None
        }
    }

    /// The hidden condition-code register holding the carry flag (PTX `CC.CF`).
    pub fn cc_reg(&mut self) -> RegId {
        if let Some(r) = self.cc {
            return r;
        }
        let r = RegId(self.regs.len() as u32);
        self.regs.push(RegInfo {
            name: "%__cc".into(),
            ty: Type::Pred,
        });
        self.cc = Some(r);
        r
    }

    pub fn sink_reg(&mut self) -> RegId {
        if let Some(r) = self.sink {
            return r;
        }
        let r = RegId(self.regs.len() as u32);
        self.regs.push(RegInfo {
            name: "_".into(),
            ty: Type::B64,
        });
        self.sink = Some(r);
        r
    }
}

impl<'a> ModuleParser<'a> {
    pub(crate) fn function_body(&mut self, id: FuncId) -> PResult<()> {
        let scope_labels = self.prescan_labels()?;
        let mut b = Body {
            func: id,
            regs: Vec::new(),
            scopes: Vec::new(),
            scope_labels,
            next_scope: 0,
            insts: Vec::new(),
            label_pc: HashMap::new(),
            tables: HashMap::new(),
            protos: HashSet::new(),
            fixups: Vec::new(),
            frame_vars: Vec::new(),
            uses: BTreeSet::new(),
            callees: BTreeSet::new(),
            sink: None,
            cc: None,
        };
        // Parameters are visible in the body's outermost scope.
        let mut top = Scope::default();
        let f = &self.module.functions[id.0 as usize];
        for p in f.params.iter().chain(f.rets.iter()) {
            let name = self.module.symbols[p.symbol.0 as usize].name.clone();
            top.syms.insert(name, p.symbol);
        }
        self.c.expect(&Tok::LBrace, "`{`")?;
        top.id = b.next_scope;
        b.next_scope += 1;
        b.scopes.push(top);
        while !b.scopes.is_empty() {
            self.statement(&mut b)?;
        }
        self.finish_body(b)
    }

    /// Collect the labels of every statement-level scope, in the order scopes open.
    fn prescan_labels(&self) -> PResult<Vec<HashMap<String, String>>> {
        let toks = &self.c.toks;
        let mut i = self.c.pos;
        let mut scopes: Vec<HashMap<String, String>> = Vec::new();
        let mut stack: Vec<Option<usize>> = Vec::new(); // Some(scope) for statement braces
        let mut used: HashSet<String> = HashSet::new();
        let mut at_stmt_start = true;
        while i < toks.len() {
            let next_is_colon = toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Colon);
            match &toks[i].0 {
                Tok::LBrace if at_stmt_start => {
                    stack.push(Some(scopes.len()));
                    scopes.push(HashMap::new());
                }
                Tok::LBrace => stack.push(None),
                Tok::RBrace => {
                    let popped = stack.pop();
                    if stack.is_empty() {
                        break;
                    }
                    at_stmt_start = matches!(popped, Some(Some(_)));
                    i += 1;
                    continue;
                }
                Tok::Ident(name) if at_stmt_start && next_is_colon => {
                    let Some(Some(scope)) = stack.iter().rev().find(|s| s.is_some()) else {
                        return Err(self.c.err(toks[i].1, "label outside a function body"));
                    };
                    let unique = if used.contains(name) {
                        format!("{name}%{scope}")
                    } else {
                        name.clone()
                    };
                    if scopes[*scope]
                        .insert(name.clone(), unique.clone())
                        .is_some()
                    {
                        return Err(self.c.err(
                            toks[i].1,
                            format!("label `{name}` is defined twice in one scope"),
                        ));
                    }
                    used.insert(unique);
                    used.insert(name.clone());
                    i += 2;
                    continue;
                }
                _ => {}
            }
            at_stmt_start = match toks[i].0 {
                Tok::Semi => true,
                Tok::LBrace => matches!(stack.last(), Some(Some(_))),
                _ => false,
            };
            i += 1;
        }
        Ok(scopes)
    }

    fn statement(&mut self, b: &mut Body) -> PResult<()> {
        let span = self.c.span();
        let Some(tok) = self.c.peek().cloned() else {
            return Err(self
                .c
                .err_here("unexpected end of file inside a function body (missing `}`)"));
        };
        match tok {
            Tok::RBrace => {
                self.c.bump()?;
                b.scopes.pop();
            }
            Tok::LBrace => {
                self.c.bump()?;
                if b.scopes.len() >= super::MAX_NESTING {
                    return Err(self.c.err(
                        span,
                        format!(
                            "`{{}}` scopes nested deeper than {} levels",
                            super::MAX_NESTING
                        ),
                    ));
                }
                let id = b.next_scope;
                b.next_scope += 1;
                b.scopes.push(Scope {
                    id,
                    ..Default::default()
                });
            }
            Tok::Dot(d) => self.body_directive(b, &d, span)?,
            Tok::Ident(name) if self.c.peek_at(1) == Some(&Tok::Colon) => {
                self.c.bump()?;
                self.c.bump()?;
                self.label_def(b, &name, span)?;
            }
            Tok::At | Tok::Ident(_) => {
                let inst = self.instruction(b)?;
                b.insts.push(inst);
            }
            other => {
                return Err(self.c.err(
                    span,
                    format!(
                        "expected an instruction, label or declaration, found {}",
                        other.describe()
                    ),
                ))
            }
        }
        Ok(())
    }

    fn label_def(&mut self, b: &mut Body, name: &str, span: Span) -> PResult<()> {
        let unique = b.lookup_label(name).ok_or_else(|| {
            self.c
                .err(span, format!("label `{name}` could not be scoped"))
        })?;
        if self.c.eat_dot(".branchtargets") {
            let mut targets = Vec::new();
            loop {
                let (t, tspan) = self.c.expect_ident("a label")?;
                let u = b
                    .lookup_label(&t)
                    .ok_or_else(|| self.c.err(tspan, format!("undefined label `{t}`")))?;
                targets.push((u, tspan));
                if self.c.eat(&Tok::Semi) {
                    break;
                }
                self.c.expect(&Tok::Comma, "`,` or `;`")?;
            }
            b.tables.insert(unique, targets);
            return Ok(());
        }
        if self.c.eat_dot(".callprototype") || self.c.eat_dot(".calltargets") {
            self.c.skip_statement()?;
            b.protos.insert(unique);
            return Ok(());
        }
        b.label_pc.insert(unique, b.insts.len() as Pc);
        Ok(())
    }

    fn body_directive(&mut self, b: &mut Body, d: &str, span: Span) -> PResult<()> {
        match d {
            ".reg" => {
                self.c.bump()?;
                self.reg_decl(b)
            }
            ".loc" | ".file" => {
                // `.loc 1 12 3[, function_name ...]` has no terminator: skip the rest of the line.
                self.c.bump()?;
                while self.c.peek().is_some() && self.c.span().line == span.line {
                    self.c.bump()?;
                }
                Ok(())
            }
            ".pragma" => {
                self.c.bump()?;
                self.c.skip_statement()
            }
            _ => {
                let Some(space) = space_of(d) else {
                    return Err(self.c.err(
                        span,
                        format!("unsupported directive `{d}` in a function body"),
                    ));
                };
                self.c.bump()?;
                let is_extern = false;
                let ids = self.variable_decl(space, is_extern, Some(b.func))?;
                for id in ids {
                    let name = self.module.symbols[id.0 as usize].name.clone();
                    self.check_new_name(b, &name, self.module.symbols[id.0 as usize].span)?;
                    match space {
                        Space::Local | Space::Param => b.frame_vars.push(id),
                        _ => {
                            // A `.shared` array declared in a body is that function's
                            // (`Module::shared_layout`), named or not: its address may come
                            // from elsewhere (a hard-coded descriptor).
                            b.note_use(id, space);
                            self.place_module_var(id)?;
                            // Module placement registered it globally; keep it scoped instead.
                            self.globals.remove(&name);
                        }
                    }
                    b.scopes.last_mut().unwrap().syms.insert(name, id);
                }
                Ok(())
            }
        }
    }

    /// `.reg .b32 %r<5>, %x;` declares %r0..%r4 and %x.
    fn reg_decl(&mut self, b: &mut Body) -> PResult<()> {
        let span = self.c.span();
        let mut ty = None;
        while let Some(Tok::Dot(d)) = self.c.peek().cloned() {
            self.c.bump()?;
            if matches!(d.as_str(), ".v2" | ".v4" | ".v8") {
                return Err(self.c.err(
                    self.c.prev_span(),
                    "vector registers are not supported; declare scalar registers",
                ));
            }
            match Type::from_name(&d[1..]) {
                Some(t) => ty = Some(t),
                None => {
                    return Err(self
                        .c
                        .err(self.c.prev_span(), format!("unknown register type `{d}`")))
                }
            }
        }
        let Some(ty) = ty else {
            return Err(self.c.err(span, "register declaration without a type"));
        };
        loop {
            let (name, nspan) = self.c.expect_ident("a register name")?;
            if self.c.eat(&Tok::Lt) {
                let n = self.c.expect_int("a register count")?;
                self.c.expect(&Tok::Gt, "`>`")?;
                if n > 1 << 20 {
                    return Err(self.c.err(nspan, "register range too large"));
                }
                for i in 0..n {
                    self.declare_reg(b, format!("{name}{i}"), ty, nspan)?;
                }
            } else {
                if super::operand::is_special_register_name(&name) {
                    return Err(self.c.err(
                        nspan,
                        format!("`{name}` is a special register (PTX ISA, Special Registers); a register may not take its name"),
                    ));
                }
                self.declare_reg(b, name, ty, nspan)?;
            }
            if self.c.eat(&Tok::Semi) {
                return Ok(());
            }
            self.c.expect(&Tok::Comma, "`,` or `;`")?;
        }
    }

    fn declare_reg(&self, b: &mut Body, name: String, ty: Type, span: Span) -> PResult<()> {
        self.check_new_name(b, &name, span)?;
        let id = RegId(b.regs.len() as u32);
        b.regs.push(RegInfo {
            name: name.clone(),
            ty,
        });
        b.scopes.last_mut().unwrap().regs.insert(name, id);
        Ok(())
    }

    /// A declaration of `name` in the innermost scope must be its first there; an inner
    /// scope may shadow an outer one (PTX ISA §5.1, ptxas "Duplicate definition").
    fn check_new_name(&self, b: &Body, name: &str, span: Span) -> PResult<()> {
        match b.declared_here(name) {
            Some(what) => Err(self.c.err(
                span,
                format!("`{name}` is declared twice in one scope: it already names {what}"),
            )),
            None => Ok(()),
        }
    }

    fn finish_body(&mut self, mut b: Body) -> PResult<()> {
        for fx in std::mem::take(&mut b.fixups) {
            if let Op::BrxIdx { targets, .. } = &mut b.insts[fx.inst].op {
                let table = b.tables.get(&fx.label).ok_or_else(|| {
                    self.c.err(
                        fx.span,
                        format!("`{}` is not a .branchtargets table", fx.label),
                    )
                })?;
                for (l, lspan) in table {
                    let pc = *b.label_pc.get(l).ok_or_else(|| {
                        self.c
                            .err(*lspan, format!("`{l}` does not label an instruction"))
                    })?;
                    targets.push(pc);
                }
                continue;
            }
            let pc = *b.label_pc.get(&fx.label).ok_or_else(|| {
                self.c.err(
                    fx.span,
                    format!("`{}` does not label an instruction", fx.label),
                )
            })?;
            match &mut b.insts[fx.inst].op {
                Op::Bra { target, .. }
                | Op::Ssy { target }
                | Op::PreBrk { target }
                | Op::PreRet { target } => *target = pc,
                _ => unreachable!("fixups are only recorded for branch-like instructions"),
            }
        }
        let id = b.func;
        let kind = self.module.functions[id.0 as usize].kind;
        // A label at the very end (after the last instruction) is allowed only if unused:
        // every branch target must be an instruction.
        let n = b.insts.len() as Pc;
        for inst in &b.insts {
            let bad = match &inst.op {
                Op::Bra { target, .. }
                | Op::Ssy { target }
                | Op::PreBrk { target }
                | Op::PreRet { target } => *target >= n,
                Op::BrxIdx { targets, .. } => targets.iter().any(|t| *t >= n),
                _ => false,
            };
            if bad {
                return Err(self.c.err(
                    inst.span,
                    "branch to a label that is not followed by an instruction",
                ));
            }
        }
        let has_tokens = b.insts.iter().any(|i| {
            matches!(
                i.op,
                Op::Ssy { .. } | Op::Sync | Op::PreBrk { .. } | Op::Brk | Op::PreRet { .. }
            )
        });
        let frame_bytes = self.layout_frame(id, kind, &b.frame_vars)?;
        let mut labels: Vec<(String, Pc)> = b.label_pc.into_iter().collect();
        labels.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
        let f = &mut self.module.functions[id.0 as usize];
        f.regs = b.regs;
        f.body = b.insts;
        f.labels = labels;
        f.frame_vars = b.frame_vars;
        f.uses = b.uses.into_iter().collect();
        f.callees = b.callees.into_iter().collect();
        f.frame_bytes = frame_bytes;
        f.has_tokens = has_tokens;
        Ok(())
    }

    /// Per-thread frame of a function activation: formal params, return params, then body
    /// `.param`/`.local` variables, each at its alignment. Entry params live in the kernel
    /// parameter buffer instead.
    fn layout_frame(&mut self, id: FuncId, kind: FuncKind, vars: &[SymbolId]) -> PResult<u32> {
        let f = &self.module.functions[id.0 as usize];
        let mut order: Vec<SymbolId> = Vec::new();
        if kind == FuncKind::Func {
            order.extend(f.params.iter().map(|p| p.symbol));
            order.extend(f.rets.iter().map(|p| p.symbol));
        }
        order.extend_from_slice(vars);
        let mut off = 0u64;
        for s in order {
            let sym = &mut self.module.symbols[s.0 as usize];
            let align = sym.align.max(1) as u64;
            off = off.div_ceil(align) * align;
            sym.offset = off;
            off += sym.size();
            // Frames are addressed with 32-bit offsets (`Function::frame_bytes`).
            if off.div_ceil(16) * 16 > u64::from(u32::MAX) {
                let (name, span) = (sym.name.clone(), sym.span);
                return Err(self.c.err(
                    span,
                    format!("`{name}` ends {off} bytes into its function's per-thread frame; a frame holds at most 4 GiB"),
                ));
            }
        }
        Ok(off.div_ceil(16) as u32 * 16)
    }
}
