//! PTX parser: tokens → `ir::Module`.
//!
//! Stages: `cursor` (token access and errors), `decl` (types, variables, parameters,
//! initialisers), `body` (function bodies: scopes, registers, labels), `inst` (one instruction
//! and its modifiers → `ir::Op`), `operand` (operands and immediates).

mod body;
mod cursor;
mod decl;
mod header;
mod inst;
mod operand;

use crate::ir::*;
use crate::lexer::{lex, Tok};
use crate::span::{PtxError, Span};
use cursor::{Cursor, PResult};
use std::collections::HashMap;

/// Parse one PTX module. `file` names the source in error messages.
pub fn parse_module(file: &str, src: &str) -> Result<Module, PtxError> {
    let toks = lex(file, src)?;
    let mut p = ModuleParser {
        c: Cursor::new(file, src, toks),
        module: Module {
            file: file.to_string(),
            version: (0, 0),
            target: String::new(),
            arch: TargetArch {
                sm: 0,
                suffix: None,
                compute: false,
            },
            address_size: 64,
            symbols: Vec::new(),
            functions: Vec::new(),
            global_bytes: 0,
            const_bytes: 0,
        },
        globals: HashMap::new(),
        funcs: HashMap::new(),
        defined: Vec::new(),
        depth: 0,
    };
    p.module_items()?;
    p.check_all_called_defined()?;
    Ok(p.module)
}

pub(crate) struct ModuleParser<'a> {
    pub c: Cursor<'a>,
    pub module: Module,
    /// Module-scope variables by name.
    pub globals: HashMap<String, SymbolId>,
    pub funcs: HashMap<String, FuncId>,
    /// Per function: whether it has a body, and the span of its first use (for errors).
    pub defined: Vec<(bool, Option<Span>)>,
    /// How deep the recursive descent is in nested expressions, initialisers and operands.
    pub depth: usize,
}

/// Bytes of module-scope `.const` data a module may hold (one 64 KiB constant bank, as ptxas
/// allows).
const CONST_BANK_BYTES: u64 = 65536;

/// The deepest nesting of parentheses, braces and unary minus the parser follows, in
/// expressions, initialisers, operands and function-body scopes: deeper input is an error, not
/// a host stack overflow. NVRTC nests a few levels at most.
pub const MAX_NESTING: usize = 256;

impl<'a> ModuleParser<'a> {
    fn module_items(&mut self) -> PResult<()> {
        self.header()?;
        while !self.c.at_end() {
            let span = self.c.span();
            let Tok::Dot(d) = self.c.peek().cloned().unwrap() else {
                return Err(self
                    .c
                    .unexpected("a directive such as .version, .entry or .global"));
            };
            match d.as_str() {
                ".version" | ".target" => {
                    return Err(self.c.err(
                        span,
                        format!("a second `{d}`: a module has one, at its start (PTX ISA §11.1)"),
                    ))
                }
                ".address_size" => {
                    self.c.bump()?;
                    let n = self.c.expect_int("32 or 64")?;
                    if n != 64 && n != 32 {
                        return Err(self
                            .c
                            .err(self.c.prev_span(), "address size must be 32 or 64"));
                    }
                    self.module.address_size = n as u32;
                }
                ".file" | ".pragma" => {
                    self.c.bump()?;
                    self.skip_file_or_pragma()?;
                }
                ".section" => self.skip_section()?,
                ".visible" | ".extern" | ".weak" | ".common" | ".entry" | ".func" | ".global"
                | ".const" | ".shared" | ".local" => self.linkage_item()?,
                _ => {
                    return Err(self
                        .c
                        .err(span, format!("unsupported module directive `{d}`")))
                }
            }
        }
        Ok(())
    }

    /// `.version` then `.target`, before anything else: ptxas rejects a module without them
    /// or with them in another order (PTX ISA §11.1.1-2).
    fn header(&mut self) -> PResult<()> {
        let span = self.c.span();
        if !self.c.eat_dot(".version") {
            return Err(self.c.err(
                span,
                "a PTX module starts with a `.version` directive such as `.version 8.0` \
                 (PTX ISA §11.1.1)",
            ));
        }
        self.module.version = self.version()?;
        let span = self.c.span();
        if !self.c.eat_dot(".target") {
            return Err(self.c.err(
                span,
                "`.version` is followed by a `.target` directive such as `.target sm_80` \
                 (PTX ISA §11.1.2)",
            ));
        }
        let (arch, name) = self.target(span)?;
        self.module.arch = arch;
        self.module.target = name;
        Ok(())
    }

    fn skip_file_or_pragma(&mut self) -> PResult<()> {
        // `.file 1 "name"` has no terminating semicolon; `.pragma "x";` has one.
        while let Some(t) = self.c.peek() {
            match t {
                Tok::Semi => {
                    self.c.bump()?;
                    return Ok(());
                }
                Tok::Int(_) | Tok::Str(_) | Tok::Comma => {
                    self.c.bump()?;
                }
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    fn skip_section(&mut self) -> PResult<()> {
        self.c.bump()?;
        while !matches!(self.c.peek(), Some(Tok::LBrace) | None) {
            self.c.bump()?;
        }
        self.c.expect(&Tok::LBrace, "`{`")?;
        let mut depth = 1;
        while depth > 0 {
            match self.c.bump()?.0 {
                Tok::LBrace => depth += 1,
                Tok::RBrace => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    fn linkage_item(&mut self) -> PResult<()> {
        let mut is_extern = false;
        loop {
            if self.c.eat_dot(".visible") || self.c.eat_dot(".weak") || self.c.eat_dot(".common") {
                continue;
            }
            if self.c.eat_dot(".extern") {
                is_extern = true;
                continue;
            }
            break;
        }
        let span = self.c.span();
        match self.c.peek() {
            Some(Tok::Dot(d)) if d == ".entry" => self.function(FuncKind::Entry),
            Some(Tok::Dot(d)) if d == ".func" => self.function(FuncKind::Func),
            Some(Tok::Dot(d))
                if matches!(d.as_str(), ".global" | ".const" | ".shared" | ".local") =>
            {
                let space = decl::space_of(d).unwrap();
                self.c.bump()?;
                let syms = self.variable_decl(space, is_extern, None)?;
                for id in syms {
                    self.check_module_name(id)?;
                    self.place_module_var(id)?;
                }
                Ok(())
            }
            _ => Err(self
                .c
                .err(span, "expected .entry, .func or a variable declaration")),
        }
    }

    /// A module-scope variable's name is new, or repeats an `.extern` declaration as
    /// `.extern` (ptxas: "Duplicate definition of variable").
    fn check_module_name(&self, id: SymbolId) -> PResult<()> {
        let sym = &self.module.symbols[id.0 as usize];
        if self.funcs.contains_key(&sym.name) {
            return Err(self.c.err(
                sym.span,
                format!("`{}` names both a function and a module variable", sym.name),
            ));
        }
        match self.globals.get(&sym.name) {
            Some(&prev) if !(self.module.symbol(prev).is_extern && sym.is_extern) => {
                let first = self.module.symbol(prev).span;
                Err(self.c.err(
                    sym.span,
                    format!(
                        "module variable `{}` is declared twice (first at line {})",
                        sym.name, first.line
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Give a module-scope `.global` or `.const` variable its offset in its space's segment.
    /// `.shared` variables are placed per kernel (`Module::shared_layout`).
    pub(crate) fn place_module_var(&mut self, id: SymbolId) -> PResult<()> {
        let sym = &self.module.symbols[id.0 as usize];
        let (align, size) = (sym.align.max(1) as u64, sym.size());
        let seg = match sym.space {
            Space::Shared => {
                let name = sym.name.clone();
                self.globals.insert(name, id);
                return Ok(());
            }
            Space::Global => &mut self.module.global_bytes,
            Space::Const => &mut self.module.const_bytes,
            _ => {
                let span = sym.span;
                return Err(self.c.err(
                    span,
                    "only .global, .const and .shared variables may be declared at module scope",
                ));
            }
        };
        let off = seg.div_ceil(align) * align;
        *seg = off + size;
        // ptxas: "File uses too much global constant data (… 0x10000 max)".
        if sym.space == Space::Const && *seg > CONST_BANK_BYTES {
            let (name, span, total) = (sym.name.clone(), sym.span, *seg);
            return Err(self.c.err(
                span,
                format!("`.const` variable `{name}` brings the module's constant data to {total} bytes; constant memory holds {CONST_BANK_BYTES}"),
            ));
        }
        self.module.symbols[id.0 as usize].offset = off;
        let name = self.module.symbols[id.0 as usize].name.clone();
        self.globals.insert(name, id);
        Ok(())
    }

    pub(crate) fn func_id(&mut self, name: &str, use_span: Option<Span>) -> FuncId {
        if let Some(&id) = self.funcs.get(name) {
            if self.defined[id.0 as usize].1.is_none() {
                self.defined[id.0 as usize].1 = use_span;
            }
            return id;
        }
        let id = FuncId(self.module.functions.len() as u32);
        self.module.functions.push(Function {
            name: name.to_string(),
            kind: FuncKind::Func,
            params: Vec::new(),
            rets: Vec::new(),
            regs: Vec::new(),
            body: Vec::new(),
            labels: Vec::new(),
            frame_vars: Vec::new(),
            frame_bytes: 0,
            uses: Vec::new(),
            callees: Vec::new(),
            max_ntid: None,
            req_cluster: None,
            has_tokens: false,
            span: use_span.unwrap_or_default(),
        });
        self.defined.push((false, use_span));
        self.funcs.insert(name.to_string(), id);
        id
    }

    /// One level deeper at `span`, or an error past `MAX_NESTING`. Each `enter` that
    /// succeeds is paired with a `leave` (an error ends the parse, so it needs none).
    pub(crate) fn enter(&mut self, span: Span) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.c.err(
                span,
                format!(
                    "nesting deeper than {MAX_NESTING} levels (parentheses, braces or unary minus)"
                ),
            ));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    fn check_all_called_defined(&self) -> PResult<()> {
        for (i, (has_body, used)) in self.defined.iter().enumerate() {
            if let (false, Some(span)) = (has_body, used) {
                let name = &self.module.functions[i].name;
                return Err(self.c.err(
                    *span,
                    format!(
                        "call to function `{name}`, which this module declares but never defines"
                    ),
                ));
            }
        }
        Ok(())
    }
}
