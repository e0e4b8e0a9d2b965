//! Parser for the SIMT-Step litmus format (grammar in the module documentation of
//! `simt_step`). Line-oriented; every error carries the line and column it was found at.

use std::collections::{BTreeMap, BTreeSet};

use thiserror::Error;

use super::syntax::{
    BinOp, Block, BlockId, Expr, Inst, InstKind, Litmus, Location, Merge, Outcome, Pos, SgOp, Term,
    TermKind, UnOp,
};
use super::variant::Variant;

/// A syntax or well-formedness error at a source position.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{pos}: {msg}")]
pub struct ParseError {
    pub pos: Pos,
    pub msg: String,
}

fn err<T>(pos: Pos, msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        pos,
        msg: msg.into(),
    })
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    Sym(&'static str),
}

const SYMBOLS: [&str; 22] = [
    "==", "!=", "<=", ">=", "&&", "||", "(", ")", "[", "]", ",", ":", "=", "<", ">", "+", "-", "*",
    "/", "%", "!", "&",
];
const MORE_SYMBOLS: [&str; 2] = ["|", "^"];

fn lex(line: &str, lineno: usize) -> Result<Vec<(Tok, Pos)>, ParseError> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos {
            line: lineno,
            col: i + 1,
        };
        if c == '#' {
            break;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' || c == '.' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            out.push((Tok::Ident(chars[start..i].iter().collect()), pos));
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let Ok(v) = text.parse::<i64>() else {
                return err(pos, format!("integer `{text}` out of range"));
            };
            out.push((Tok::Int(v), pos));
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        let sym = SYMBOLS
            .iter()
            .chain(MORE_SYMBOLS.iter())
            .find(|s| rest.starts_with(**s));
        match sym {
            Some(s) => {
                out.push((Tok::Sym(s), pos));
                i += s.len();
            }
            None => return err(pos, format!("unexpected character `{c}`")),
        }
    }
    Ok(out)
}

/// Names resolved while parsing; labels are resolved after the last block so branches may
/// point forward.
#[derive(Default)]
struct Names {
    arrays: Vec<String>,
    registers: Vec<String>,
    labels: Vec<(String, Pos)>,
    label_uses: Vec<(String, Pos)>,
}

impl Names {
    fn intern(list: &mut Vec<String>, name: &str) -> u32 {
        match list.iter().position(|n| n == name) {
            Some(i) => i as u32,
            None => {
                list.push(name.to_string());
                (list.len() - 1) as u32
            }
        }
    }
    /// Labels are stored as an index into `label_uses`, fixed up to block ids at the end.
    fn use_label(&mut self, name: String, pos: Pos) -> BlockId {
        self.label_uses.push((name, pos));
        (self.label_uses.len() - 1) as BlockId
    }
}

const KEYWORDS: [&str; 16] = [
    "tid",
    "lane",
    "sg",
    "load",
    "store",
    "branch",
    "branch_cond",
    "return",
    "selection_merge",
    "loop_merge",
    "sg_add",
    "sg_all_equal",
    "sg_all",
    "sg_any",
    "ballot",
    "sg_broadcast",
];

struct Line<'a> {
    toks: Vec<(Tok, Pos)>,
    at: usize,
    end: Pos,
    names: &'a mut Names,
}

impl Line<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.0)
    }
    fn pos(&self) -> Pos {
        self.toks.get(self.at).map_or(self.end, |t| t.1)
    }
    fn next(&mut self) -> Option<(Tok, Pos)> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }
    fn eat(&mut self, sym: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Sym(s)) if *s == sym) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, sym: &str) -> Result<(), ParseError> {
        if self.eat(sym) {
            Ok(())
        } else {
            err(self.pos(), format!("expected `{sym}`"))
        }
    }
    fn ident(&mut self, what: &str) -> Result<(String, Pos), ParseError> {
        match self.next() {
            Some((Tok::Ident(s), p)) => Ok((s, p)),
            Some((_, p)) => err(p, format!("expected {what}")),
            None => err(self.end, format!("expected {what}")),
        }
    }
    fn int(&mut self) -> Result<i64, ParseError> {
        let neg = self.eat("-");
        match self.next() {
            Some((Tok::Int(v), _)) => Ok(if neg { -v } else { v }),
            Some((_, p)) => err(p, "expected an integer"),
            None => err(self.end, "expected an integer"),
        }
    }
    fn finish(&self) -> Result<(), ParseError> {
        match self.toks.get(self.at) {
            Some((_, p)) => err(*p, "unexpected text at end of line"),
            None => Ok(()),
        }
    }
    fn register(&mut self) -> Result<u32, ParseError> {
        let (name, p) = self.ident("a register name")?;
        if KEYWORDS.contains(&name.as_str()) {
            return err(p, format!("`{name}` is a keyword, not a register"));
        }
        Ok(Names::intern(&mut self.names.registers, &name))
    }
    fn label(&mut self) -> Result<BlockId, ParseError> {
        let (name, p) = self.ident("a block label")?;
        Ok(self.names.use_label(name, p))
    }

    /// `NAME[EXPR]` or `NAME` (index 0).
    fn location(&mut self) -> Result<(u32, Expr), ParseError> {
        let (name, p) = self.ident("a memory location")?;
        if KEYWORDS.contains(&name.as_str()) {
            return err(p, format!("`{name}` is a keyword, not an array"));
        }
        let array = Names::intern(&mut self.names.arrays, &name);
        if self.eat("[") {
            let e = self.expr()?;
            self.expect("]")?;
            Ok((array, e))
        } else {
            Ok((array, Expr::Const(0)))
        }
    }

    /// A location with a constant index, for `init` and `observe`.
    fn const_location(&mut self) -> Result<Location, ParseError> {
        let (array, p) = self.ident("a memory location")?;
        let index = if self.eat("[") {
            let v = self.int()?;
            self.expect("]")?;
            v
        } else {
            0
        };
        if KEYWORDS.contains(&array.as_str()) {
            return err(p, format!("`{array}` is a keyword, not an array"));
        }
        Names::intern(&mut self.names.arrays, &array);
        Ok(Location { array, index })
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        self.binary(0)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, ParseError> {
        const LEVELS: [&[(&str, BinOp)]; 9] = [
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[("|", BinOp::BitOr)],
            &[("^", BinOp::BitXor)],
            &[("&", BinOp::BitAnd)],
            &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
            &[
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        'outer: loop {
            for (sym, op) in LEVELS[level] {
                if self.eat(sym) {
                    let rhs = self.binary(level + 1)?;
                    lhs = Expr::Bin(*op, Box::new(lhs), Box::new(rhs));
                    continue 'outer;
                }
            }
            return Ok(lhs);
        }
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.eat("!") {
            return Ok(Expr::Un(UnOp::Not, Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(Expr::Un(UnOp::Neg, Box::new(self.unary()?)));
        }
        if self.eat("(") {
            let e = self.expr()?;
            self.expect(")")?;
            return Ok(e);
        }
        match self.next() {
            Some((Tok::Int(v), _)) => Ok(Expr::Const(v)),
            Some((Tok::Ident(s), p)) => match s.as_str() {
                "tid" => Ok(Expr::Tid),
                "lane" => Ok(Expr::Lane),
                "sg" => Ok(Expr::Sg),
                _ if KEYWORDS.contains(&s.as_str()) => {
                    err(p, format!("`{s}` cannot appear inside an expression"))
                }
                _ => Ok(Expr::Reg(Names::intern(&mut self.names.registers, &s))),
            },
            Some((_, p)) => err(p, "expected an expression"),
            None => err(self.end, "expected an expression"),
        }
    }

    fn sg_args(&mut self, n: usize) -> Result<Vec<Expr>, ParseError> {
        self.expect("(")?;
        let mut args = Vec::new();
        for i in 0..n {
            if i > 0 {
                self.expect(",")?;
            }
            args.push(self.expr()?);
        }
        self.expect(")")?;
        Ok(args)
    }
}

/// One line of a block body.
enum BodyLine {
    Inst(Inst),
    Merge(Merge, Pos),
    Term(Term),
}

fn body_line(line: &mut Line<'_>) -> Result<BodyLine, ParseError> {
    let pos = line.pos();
    let (word, _) = line.ident("an instruction")?;
    let out = match word.as_str() {
        "store" => {
            let (array, index) = line.location()?;
            line.expect(",")?;
            let value = line.expr()?;
            BodyLine::Inst(Inst {
                kind: InstKind::Store {
                    array,
                    index,
                    value,
                },
                pos,
            })
        }
        "sg_barrier" => BodyLine::Inst(Inst {
            kind: InstKind::Sg {
                dst: None,
                op: SgOp::Barrier,
            },
            pos,
        }),
        "selection_merge" => BodyLine::Merge(Merge::Selection(line.label()?), pos),
        "loop_merge" => {
            let merge = line.label()?;
            line.expect(",")?;
            let cont = line.label()?;
            BodyLine::Merge(Merge::Loop { merge, cont }, pos)
        }
        "branch" => BodyLine::Term(Term {
            kind: TermKind::Branch(line.label()?),
            pos,
        }),
        "branch_cond" => {
            let c = line.expr()?;
            line.expect(",")?;
            let t = line.label()?;
            line.expect(",")?;
            let f = line.label()?;
            BodyLine::Term(Term {
                kind: TermKind::BranchCond(c, t, f),
                pos,
            })
        }
        "return" => BodyLine::Term(Term {
            kind: TermKind::Return,
            pos,
        }),
        _ => {
            line.at -= 1;
            let dst = line.register()?;
            line.expect("=")?;
            let rhs_pos = line.pos();
            let kind = match line.peek() {
                Some(Tok::Ident(w)) if w == "load" => {
                    line.at += 1;
                    let (array, index) = line.location()?;
                    InstKind::Load { dst, array, index }
                }
                Some(Tok::Ident(w)) if w.starts_with("sg_") || w == "ballot" => {
                    let w = w.clone();
                    line.at += 1;
                    let op = match w.as_str() {
                        "sg_add" => SgOp::Add(line.sg_args(1)?.remove(0)),
                        "sg_all_equal" => SgOp::AllEqual(line.sg_args(1)?.remove(0)),
                        "sg_all" => SgOp::All(line.sg_args(1)?.remove(0)),
                        "sg_any" => SgOp::Any(line.sg_args(1)?.remove(0)),
                        "ballot" => SgOp::Ballot(line.sg_args(1)?.remove(0)),
                        "sg_broadcast" => {
                            let mut a = line.sg_args(2)?;
                            let lane = a.remove(1);
                            SgOp::Broadcast(a.remove(0), lane)
                        }
                        _ => return err(rhs_pos, format!("unknown subgroup operation `{w}`")),
                    };
                    InstKind::Sg { dst: Some(dst), op }
                }
                _ => InstKind::Local {
                    dst,
                    value: line.expr()?,
                },
            };
            BodyLine::Inst(Inst { kind, pos })
        }
    };
    line.finish()?;
    Ok(out)
}

/// Blocks may hold at most this many instructions: synchronous-arrival flags are a bitmask
/// over a block's program counters.
pub const MAX_BLOCK_INSTS: usize = 60;
/// Thread sets are 64-bit masks.
pub const MAX_THREADS: usize = 64;

struct PartialBlock {
    label: String,
    pos: Pos,
    insts: Vec<Inst>,
    merge: Option<(Merge, Pos)>,
    term: Option<Term>,
}

/// Parses a litmus test; see the module documentation for the format.
pub fn parse(text: &str) -> Result<Litmus, ParseError> {
    let mut names = Names::default();
    let mut name = None;
    let mut threads = None;
    let mut subgroup = None;
    let mut init_locs: Vec<(Location, i64, Pos)> = Vec::new();
    let mut observe: Option<Vec<Location>> = None;
    let mut expect: BTreeMap<Variant, BTreeSet<Outcome>> = BTreeMap::new();
    let mut blocks: Vec<PartialBlock> = Vec::new();
    let mut last = Pos { line: 1, col: 1 };

    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let toks = lex(raw, lineno)?;
        last = Pos {
            line: lineno,
            col: 1,
        };
        if toks.is_empty() {
            continue;
        }
        let end = Pos {
            line: lineno,
            col: raw.trim_end().chars().count() + 1,
        };
        let mut line = Line {
            toks,
            at: 0,
            end,
            names: &mut names,
        };
        let first = line.toks[0].clone();
        let header_word = match &first.0 {
            Tok::Ident(w) => w.clone(),
            _ => String::new(),
        };
        if header_word == "block" {
            line.at = 1;
            let (label, p) = line.ident("a block label")?;
            line.expect(":")?;
            line.finish()?;
            if blocks.iter().any(|b| b.label == label) {
                return err(p, format!("block `{label}` defined twice"));
            }
            line.names.labels.push((label.clone(), p));
            blocks.push(PartialBlock {
                label,
                pos: p,
                insts: Vec::new(),
                merge: None,
                term: None,
            });
            continue;
        }
        if let Some(block) = blocks.last_mut() {
            let parsed = body_line(&mut line)?;
            if let Some(t) = &block.term {
                return err(
                    first.1,
                    format!(
                        "instruction after the terminator of block `{}` (line {})",
                        block.label, t.pos.line
                    ),
                );
            }
            match parsed {
                BodyLine::Inst(inst) => {
                    if let Some((_, mp)) = block.merge {
                        return err(
                            inst.pos,
                            format!(
                                "a merge instruction (line {}) must directly precede the terminator",
                                mp.line
                            ),
                        );
                    }
                    if block.insts.len() == MAX_BLOCK_INSTS {
                        return err(
                            inst.pos,
                            format!("a block holds at most {MAX_BLOCK_INSTS} instructions"),
                        );
                    }
                    block.insts.push(inst);
                }
                BodyLine::Merge(m, p) => {
                    if block.merge.is_some() {
                        return err(p, "second merge instruction in one block");
                    }
                    block.merge = Some((m, p));
                }
                BodyLine::Term(t) => block.term = Some(t),
            }
            continue;
        }
        line.at = 1;
        match header_word.as_str() {
            "test" => {
                name = Some(line.ident("a test name")?.0);
            }
            "threads" | "subgroup" => {
                let v = line.int()?;
                if v < 1 || v as usize > MAX_THREADS {
                    return err(first.1, format!("must be between 1 and {MAX_THREADS}"));
                }
                if header_word == "threads" {
                    threads = Some(v as usize);
                } else {
                    subgroup = Some(v as usize);
                }
            }
            "init" => {
                let loc = line.const_location()?;
                line.expect("=")?;
                let v = line.int()?;
                init_locs.push((loc, v, first.1));
            }
            "observe" => {
                let mut locs = vec![line.const_location()?];
                while line.eat(",") {
                    locs.push(line.const_location()?);
                }
                observe = Some(locs);
            }
            "expect" => {
                let (vname, vp) = line.ident("a variant name")?;
                let Some(variant) = Variant::from_name(&vname) else {
                    return err(
                        vp,
                        format!(
                            "unknown or non-executable variant `{vname}` (expected CM, SM, SCF, SSO or Spec)"
                        ),
                    );
                };
                line.expect(":")?;
                let Some(obs) = &observe else {
                    return err(first.1, "`observe` must come before `expect`");
                };
                let set = expect.entry(variant).or_default();
                while line.peek().is_some() {
                    let tp = line.pos();
                    line.expect("(")?;
                    let mut vals = Vec::new();
                    if !line.eat(")") {
                        vals.push(line.int()?);
                        while line.eat(",") {
                            vals.push(line.int()?);
                        }
                        line.expect(")")?;
                    }
                    if vals.len() != obs.len() {
                        return err(
                            tp,
                            format!(
                                "outcome has {} values but {} locations are observed",
                                vals.len(),
                                obs.len()
                            ),
                        );
                    }
                    set.insert(Outcome(vals));
                }
            }
            _ => return err(
                first.1,
                "expected a directive (test, threads, subgroup, init, observe, expect) or `block`",
            ),
        }
        line.finish()?;
    }

    let threads = threads.ok_or(ParseError {
        pos: last,
        msg: "missing `threads`".into(),
    })?;
    let subgroup = subgroup.unwrap_or(threads);
    if threads % subgroup != 0 {
        return err(last, "`threads` must be a multiple of `subgroup`");
    }
    if blocks.is_empty() {
        return err(last, "no blocks");
    }
    let resolve = |use_id: BlockId, names: &Names| -> Result<BlockId, ParseError> {
        let (label, p) = &names.label_uses[use_id as usize];
        match names.labels.iter().position(|(l, _)| l == label) {
            Some(i) => Ok(i as BlockId),
            None => err(*p, format!("no block labelled `{label}`")),
        }
    };
    let mut out_blocks = Vec::new();
    for b in blocks {
        let Some(mut term) = b.term else {
            return err(b.pos, format!("block `{}` has no terminator", b.label));
        };
        term.kind = match term.kind {
            TermKind::Branch(l) => TermKind::Branch(resolve(l, &names)?),
            TermKind::BranchCond(c, t, f) => {
                TermKind::BranchCond(c, resolve(t, &names)?, resolve(f, &names)?)
            }
            TermKind::Return => TermKind::Return,
        };
        let merge = match b.merge {
            None => Merge::None,
            Some((Merge::Selection(m), _)) => Merge::Selection(resolve(m, &names)?),
            Some((Merge::Loop { merge, cont }, _)) => Merge::Loop {
                merge: resolve(merge, &names)?,
                cont: resolve(cont, &names)?,
            },
            Some((Merge::None, _)) => Merge::None,
        };
        out_blocks.push(Block {
            label: b.label,
            pos: b.pos,
            insts: b.insts,
            merge,
            term,
        });
    }
    let array_id =
        |l: &Location| names.arrays.iter().position(|a| *a == l.array).unwrap_or(0) as u32;
    let mut init = BTreeMap::new();
    for (loc, v, p) in &init_locs {
        if init.insert((array_id(loc), loc.index), *v).is_some() {
            return err(*p, format!("{loc} initialised twice"));
        }
    }
    let observe = observe.unwrap_or_default();
    let observe_ids = observe.iter().map(|l| (array_id(l), l.index)).collect();
    Ok(Litmus {
        name: name.unwrap_or_default(),
        threads,
        subgroup,
        arrays: names.arrays,
        registers: names.registers,
        init,
        observe,
        observe_ids,
        expect,
        blocks: out_blocks,
    })
}
