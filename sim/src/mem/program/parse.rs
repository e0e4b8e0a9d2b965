//! Hand-written lexer and recursive-descent parser for memory programs (digest §2.4.1). Errors
//! carry the 1-based line and column and the offending text, since programs live in configs.
//! `//` starts a comment to the end of the line; `not` binds tighter than `and`, `and` than `or`.
//!
//! Nesting is bounded (`MAX_NESTING`): the parser and every pass over the tree (the engines'
//! evaluation, the printer, `Drop`) recurse, so a program nested thousands deep would overflow
//! the host stack; it is a located error instead.

use super::syntax::{BExp, Level, OpExp, Stm};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{col}: {msg} (found `{found}`)")]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub found: String,
    pub msg: String,
}

/// A token: a slice of the source and where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tok<'a> {
    text: &'a str,
    line: usize,
    col: usize,
}

fn lex(src: &str) -> Result<Vec<Tok<'_>>, ParseError> {
    let mut toks = Vec::new();
    let mut chars = src.char_indices().peekable();
    let (mut line, mut col) = (1, 1);
    while let Some((i, c)) = chars.next() {
        if c == '\n' {
            line += 1;
            col = 1;
        } else if c.is_whitespace() {
            col += 1;
        } else if c == '/' && src[i + 1..].starts_with('/') {
            while chars.next_if(|&(_, c)| c != '\n').is_some() {}
        } else if ";{}()!".contains(c) {
            toks.push(Tok {
                text: &src[i..i + 1],
                line,
                col,
            });
            col += 1;
        } else if c.is_ascii_alphabetic() {
            let mut end = i + 1;
            while let Some((k, _)) = chars.next_if(|&(_, c)| c.is_ascii_alphanumeric()) {
                end = k + 1;
            }
            toks.push(Tok {
                text: &src[i..end],
                line,
                col,
            });
            col += end - i;
        } else {
            return Err(ParseError {
                line,
                col,
                found: c.to_string(),
                msg: "unexpected character".into(),
            });
        }
    }
    Ok(toks)
}

/// The deepest nesting a program may have: `if` blocks inside each other, and the depth of a
/// condition's tree (`!`, parentheses, each `and`/`or` of a chain). Real programs nest a few
/// levels; this keeps every recursive pass far from the host stack's limit.
pub const MAX_NESTING: usize = 64;

/// A condition and the depth of its tree.
type Cond = (BExp, usize);

struct Parser<'a> {
    toks: Vec<Tok<'a>>,
    pos: usize,
    eof: (usize, usize),
    /// `if` blocks, parentheses and `!` open at the current token.
    open: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.toks.get(self.pos).map(|t| t.text)
    }

    fn err(&self, msg: &str) -> ParseError {
        match self.toks.get(self.pos) {
            Some(t) => ParseError {
                line: t.line,
                col: t.col,
                found: t.text.to_string(),
                msg: msg.into(),
            },
            None => ParseError {
                line: self.eof.0,
                col: self.eof.1,
                found: "end of input".into(),
                msg: msg.into(),
            },
        }
    }

    fn expect(&mut self, text: &str) -> Result<(), ParseError> {
        if self.peek() == Some(text) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(&format!("expected `{text}`")))
        }
    }

    /// Statements until `}` or the end of input.
    fn block(&mut self) -> Result<Vec<Stm>, ParseError> {
        let mut out = Vec::new();
        while let Some(t) = self.peek() {
            if t == "}" {
                break;
            }
            out.push(self.stm()?);
        }
        Ok(out)
    }

    fn stm(&mut self) -> Result<Stm, ParseError> {
        let t = self.peek().unwrap_or_default();
        match t {
            ";" => {
                self.pos += 1;
                Ok(Stm::Skip)
            }
            "yield" | "end" => {
                self.pos += 1;
                self.expect(";")?;
                Ok(if t == "yield" { Stm::Yield } else { Stm::End })
            }
            "if" => {
                self.pos += 1;
                self.expect("(")?;
                let (b, _) = self.bexp()?;
                self.expect(")")?;
                let then = self.braced()?;
                let els = if self.peek() == Some("else") {
                    self.pos += 1;
                    self.braced()?
                } else {
                    Vec::new()
                };
                Ok(Stm::If(b, then, els))
            }
            _ => match OpExp::from_keyword(t) {
                Some(op) => {
                    self.pos += 1;
                    self.expect(";")?;
                    Ok(Stm::Op(op))
                }
                None => Err(self.err("expected a statement")),
            },
        }
    }

    fn braced(&mut self) -> Result<Vec<Stm>, ParseError> {
        self.expect("{")?;
        self.enter(self.pos - 1)?;
        let b = self.block()?;
        self.open -= 1;
        self.expect("}")?;
        Ok(b)
    }

    /// One more level of nesting opened by token `at`, or the error there.
    fn enter(&mut self, at: usize) -> Result<(), ParseError> {
        self.open += 1;
        if self.open > MAX_NESTING {
            return Err(self.too_deep(at));
        }
        Ok(())
    }

    fn too_deep(&self, at: usize) -> ParseError {
        let t = &self.toks[at];
        ParseError {
            line: t.line,
            col: t.col,
            found: t.text.to_string(),
            msg: format!("nested more than {MAX_NESTING} deep (`if` blocks, parentheses, `!`, `and`/`or` chains)"),
        }
    }

    /// `op(l, r)` unless its tree would be deeper than `MAX_NESTING` (the error is at the
    /// operator, token `at`): a long `and`/`or` chain deepens the tree by one per operator.
    fn join(
        &self,
        at: usize,
        (l, dl): Cond,
        (r, dr): Cond,
        op: fn(Box<BExp>, Box<BExp>) -> BExp,
    ) -> Result<Cond, ParseError> {
        let d = dl.max(dr) + 1;
        if d + self.open > MAX_NESTING {
            return Err(self.too_deep(at));
        }
        Ok((op(Box::new(l), Box::new(r)), d))
    }

    fn bexp(&mut self) -> Result<Cond, ParseError> {
        let mut l = self.conj()?;
        while self.peek() == Some("or") {
            let at = self.pos;
            self.pos += 1;
            let r = self.conj()?;
            l = self.join(at, l, r, BExp::Or)?;
        }
        Ok(l)
    }

    fn conj(&mut self) -> Result<Cond, ParseError> {
        let mut l = self.unary()?;
        while self.peek() == Some("and") {
            let at = self.pos;
            self.pos += 1;
            let r = self.unary()?;
            l = self.join(at, l, r, BExp::And)?;
        }
        Ok(l)
    }

    fn unary(&mut self) -> Result<Cond, ParseError> {
        let b = match self.peek() {
            Some("!") => {
                self.enter(self.pos)?;
                self.pos += 1;
                let (b, d) = self.unary()?;
                self.open -= 1;
                return Ok((BExp::Not(Box::new(b)), d + 1));
            }
            Some("(") => {
                self.enter(self.pos)?;
                self.pos += 1;
                let b = self.bexp()?;
                self.expect(")")?;
                self.open -= 1;
                return Ok(b);
            }
            Some("true") => BExp::True,
            Some("false") => BExp::False,
            Some("isCachedL1") => BExp::IsCached(Level::L1),
            Some("isCachedL2") => BExp::IsCached(Level::L2),
            _ => return Err(self.err("expected a condition")),
        };
        self.pos += 1;
        Ok((b, 1))
    }
}

/// Parses a whole program text.
pub fn parse(src: &str) -> Result<Vec<Stm>, ParseError> {
    let toks = lex(src)?;
    let eof_line = src.lines().count().max(1);
    let eof_col = src.lines().last().map_or(0, |l| l.chars().count()) + 1;
    let mut p = Parser {
        toks,
        pos: 0,
        eof: (eof_line, eof_col),
        open: 0,
    };
    let prog = p.block()?;
    if p.pos < p.toks.len() {
        return Err(p.err("unmatched `}`"));
    }
    Ok(prog)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_not_and_or() {
        let p = parse("if (!isCachedL1 or true and false) { ; }").unwrap();
        let Stm::If(b, _, _) = &p[0] else {
            panic!("not an if")
        };
        assert_eq!(
            *b,
            BExp::Or(
                Box::new(BExp::Not(Box::new(BExp::IsCached(Level::L1)))),
                Box::new(BExp::And(Box::new(BExp::True), Box::new(BExp::False)))
            )
        );
    }

    #[test]
    fn comments_and_bad_characters() {
        assert_eq!(parse("// c\nend; // x").unwrap(), vec![Stm::End]);
        let e = parse("end;\n  end$").unwrap_err();
        assert_eq!((e.line, e.col, e.found.as_str()), (2, 6, "$"));
    }
}
