//! Token cursor with error helpers shared by every parsing stage.

use crate::lexer::Tok;
use crate::span::{PtxError, Span};

pub(crate) struct Cursor<'a> {
    pub file: &'a str,
    pub src: &'a str,
    pub toks: Vec<(Tok, Span)>,
    pub pos: usize,
}

pub(crate) type PResult<T> = Result<T, PtxError>;

impl<'a> Cursor<'a> {
    pub fn new(file: &'a str, src: &'a str, toks: Vec<(Tok, Span)>) -> Self {
        Cursor {
            file,
            src,
            toks,
            pos: 0,
        }
    }

    pub fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }

    pub fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|(t, _)| t)
    }

    /// Span of the next token, or of the end of the file.
    pub fn span(&self) -> Span {
        match self.toks.get(self.pos) {
            Some((_, s)) => *s,
            None => self.eof_span(),
        }
    }

    pub fn prev_span(&self) -> Span {
        self.toks
            .get(self.pos.saturating_sub(1))
            .map(|(_, s)| *s)
            .unwrap_or_default()
    }

    fn eof_span(&self) -> Span {
        let lines = self.src.lines().count().max(1) as u32;
        let last = self.src.lines().last().unwrap_or("");
        Span {
            line: lines,
            col: last.chars().count() as u32 + 1,
            start: self.src.len() as u32,
            end: self.src.len() as u32,
        }
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    pub fn bump(&mut self) -> PResult<(Tok, Span)> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.clone())
            }
            None => Err(self.err_here("unexpected end of file")),
        }
    }

    pub fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub fn eat_dot(&mut self, name: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Dot(d)) if d == name) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub fn expect(&mut self, t: &Tok, what: &str) -> PResult<Span> {
        if self.peek() == Some(t) {
            self.pos += 1;
            Ok(self.prev_span())
        } else {
            Err(self.unexpected(what))
        }
    }

    pub fn expect_ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok((s, self.prev_span()))
            }
            _ => Err(self.unexpected(what)),
        }
    }

    pub fn expect_int(&mut self, what: &str) -> PResult<u64> {
        match self.peek() {
            Some(Tok::Int(v)) => {
                let v = *v;
                self.pos += 1;
                Ok(v)
            }
            _ => Err(self.unexpected(what)),
        }
    }

    pub fn err(&self, span: Span, msg: impl Into<String>) -> PtxError {
        PtxError::new(self.file, self.src, span, msg)
    }

    pub fn err_here(&self, msg: impl Into<String>) -> PtxError {
        self.err(self.span(), msg)
    }

    pub fn unexpected(&self, what: &str) -> PtxError {
        match self.peek() {
            Some(t) => self.err_here(format!("expected {what}, found {}", t.describe())),
            None => self.err_here(format!("expected {what}, found end of file")),
        }
    }

    /// Skip tokens up to and including the next `;` (for directives we accept and ignore).
    pub fn skip_statement(&mut self) -> PResult<()> {
        loop {
            let (t, _) = self.bump()?;
            if t == Tok::Semi {
                return Ok(());
            }
        }
    }
}
