//! PTX lexer (logos): turns source text into tokens with spans.
//!
//! Instruction names and their modifiers lex separately: `ld.global.u32` is
//! `Ident(ld) Dot(.global) Dot(.u32)`; the parser reassembles them.

use crate::span::{PtxError, Span};
use logos::Logos;

#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip r"/\*([^*]|\*+[^*/])*\*+/")]
pub enum Tok {
    /// A directive or modifier: `.entry`, `.u32`, `.L2::128B`.
    #[regex(r"\.[A-Za-z0-9_][A-Za-z0-9_]*(::[A-Za-z0-9_]+)*", |lex| lex.slice().to_string())]
    Dot(String),
    /// Identifiers, registers and labels: `%r1`, `$L__BB0_2`, `_Z3fooi`, `%tid`.
    #[regex(r"[A-Za-z_$%][A-Za-z0-9_$]*", |lex| lex.slice().to_string())]
    Ident(String),
    /// `0f3F800000`: the bits of an f32.
    #[regex(r"0[fF][0-9A-Fa-f]{8}", |lex| u32::from_str_radix(&lex.slice()[2..], 16).ok())]
    F32Bits(u32),
    /// `0d3FF0000000000000`: the bits of an f64.
    #[regex(r"0[dD][0-9A-Fa-f]{16}", |lex| u64::from_str_radix(&lex.slice()[2..], 16).ok())]
    F64Bits(u64),
    #[regex(r"0[xX][0-9A-Fa-f]+[uU]?", |lex| parse_radix(lex.slice(), 16))]
    #[regex(r"0[bB][01]+[uU]?", |lex| parse_radix(lex.slice(), 2))]
    #[regex(r"[0-9]+[uU]?", |lex| parse_decimal(lex.slice()))]
    Int(u64),
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?", |lex| lex.slice().parse::<f64>().ok())]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+", |lex| lex.slice().parse::<f64>().ok())]
    Float(f64),
    #[regex(r#""([^"\\\n]|\\.)*""#, |lex| lex.slice().to_string())]
    Str(String),
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("!")]
    Bang,
    #[token("@")]
    At,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("=")]
    Eq,
    #[token("|")]
    Pipe,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
}

fn parse_radix(s: &str, radix: u32) -> Option<u64> {
    let digits = s[2..].trim_end_matches(['u', 'U']);
    u64::from_str_radix(digits, radix).ok()
}

fn parse_decimal(s: &str) -> Option<u64> {
    let digits = s.trim_end_matches(['u', 'U']);
    // PTX octal literals start with 0 (e.g. 017); a lone 0 is decimal zero.
    if digits.len() > 1 && digits.starts_with('0') {
        return u64::from_str_radix(&digits[1..], 8).ok();
    }
    digits.parse::<u64>().ok()
}

impl Tok {
    pub fn describe(&self) -> String {
        match self {
            Tok::Dot(s) | Tok::Ident(s) | Tok::Str(s) => format!("`{s}`"),
            Tok::Int(v) => format!("integer {v}"),
            Tok::Float(v) => format!("number {v}"),
            Tok::F32Bits(v) => format!("0f{v:08X}"),
            Tok::F64Bits(v) => format!("0d{v:016X}"),
            other => format!("`{}`", punct(other)),
        }
    }
}

fn punct(t: &Tok) -> &'static str {
    match t {
        Tok::Comma => ",",
        Tok::Semi => ";",
        Tok::Colon => ":",
        Tok::LBrace => "{",
        Tok::RBrace => "}",
        Tok::LBracket => "[",
        Tok::RBracket => "]",
        Tok::LParen => "(",
        Tok::RParen => ")",
        Tok::Plus => "+",
        Tok::Minus => "-",
        Tok::Bang => "!",
        Tok::At => "@",
        Tok::Lt => "<",
        Tok::Gt => ">",
        Tok::Eq => "=",
        Tok::Pipe => "|",
        Tok::Star => "*",
        Tok::Slash => "/",
        _ => "?",
    }
}

/// Lex a whole file. Errors name the line and column of the first character that is not PTX.
pub fn lex(file: &str, src: &str) -> Result<Vec<(Tok, Span)>, PtxError> {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(src.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    // Tokens come in order, so each column counts on from the previous token's on the same
    // line: linear in the file, however long its lines.
    let mut last = (0usize, 0usize, 1usize); // (line, byte, column) of the previous token
    let mut span_of = |start: usize, end: usize| {
        let line = line_starts.partition_point(|&s| s <= start);
        let (from, col0) = if last.0 == line && last.1 <= start {
            (last.1, last.2)
        } else {
            (line_starts[line - 1], 1)
        };
        let col = col0 + src[from..start].chars().count();
        last = (line, start, col);
        Span {
            line: line as u32,
            col: col as u32,
            start: start as u32,
            end: end as u32,
        }
    };
    // ptxas rejects any byte outside ASCII, in comments too ("Unexpected non-ASCII
    // character"): a file gpusim accepted must also assemble.
    if let Some((at, ch)) = src.char_indices().find(|(_, c)| !c.is_ascii()) {
        return Err(PtxError::new(
            file,
            src,
            span_of(at, at + ch.len_utf8()),
            format!("non-ASCII character `{ch}`: PTX is ASCII throughout, comments included (ptxas rejects it)"),
        ));
    }
    let mut out = Vec::new();
    let mut lexer = Tok::lexer(src);
    while let Some(tok) = lexer.next() {
        let r = lexer.span();
        let span = span_of(r.start, r.end);
        match tok {
            Ok(t) => out.push((t, span)),
            Err(()) => {
                return Err(PtxError::new(
                    file,
                    src,
                    span,
                    "unexpected character or malformed literal",
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex("t.ptx", s)
            .unwrap()
            .into_iter()
            .map(|(t, _)| t)
            .collect()
    }

    #[test]
    fn non_ascii_is_rejected_with_its_position() {
        let e = lex("t.ptx", "// ok\n// paper \u{a7}5.2\nret;").unwrap_err();
        assert_eq!((e.line, e.col), (2, 10), "{e}");
        assert!(e.message.contains("non-ASCII"), "{e}");
    }

    #[test]
    fn instruction_with_modifiers() {
        assert_eq!(
            toks("ld.global.u32 %r1, [%rd2+8];"),
            vec![
                Tok::Ident("ld".into()),
                Tok::Dot(".global".into()),
                Tok::Dot(".u32".into()),
                Tok::Ident("%r1".into()),
                Tok::Comma,
                Tok::LBracket,
                Tok::Ident("%rd2".into()),
                Tok::Plus,
                Tok::Int(8),
                Tok::RBracket,
                Tok::Semi
            ]
        );
    }

    #[test]
    fn literals() {
        assert_eq!(
            toks("0f3F800000 0d3FF0000000000000 0x10 017 0 1.5 2e3 7U"),
            vec![
                Tok::F32Bits(0x3F80_0000),
                Tok::F64Bits(0x3FF0_0000_0000_0000),
                Tok::Int(16),
                Tok::Int(15),
                Tok::Int(0),
                Tok::Float(1.5),
                Tok::Float(2000.0),
                Tok::Int(7)
            ]
        );
    }

    #[test]
    fn comments_and_positions() {
        let t = lex("t.ptx", "// c\n  /* x\n y */ exit;").unwrap();
        assert_eq!(t[0].1.line, 3);
        assert_eq!(t[0].1.col, 7);
    }

    #[test]
    fn bad_character_is_located() {
        let e = lex("k.ptx", "mov.u32 %r1, 1;\n  # oops").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3));
    }
}
