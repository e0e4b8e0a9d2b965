//! Source positions and the front end's error type.

use std::fmt;

/// A position in a PTX source file: 1-based line and column, and the byte range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub line: u32,
    pub col: u32,
    pub start: u32,
    pub end: u32,
}

/// An error in PTX input: file, line, column, the offending text and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    /// The source text at the span (the offending token or instruction).
    pub text: String,
    pub message: String,
}

impl PtxError {
    pub fn new(file: &str, src: &str, span: Span, message: impl Into<String>) -> PtxError {
        let text = src
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
            .to_string();
        PtxError {
            file: file.to_string(),
            line: span.line,
            col: span.col,
            text,
            message: message.into(),
        }
    }
}

impl fmt::Display for PtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.col, self.message
        )?;
        if !self.text.is_empty() {
            write!(f, " (at `{}`)", self.text)?;
        }
        Ok(())
    }
}

impl std::error::Error for PtxError {}
