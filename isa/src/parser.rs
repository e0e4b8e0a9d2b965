//! PTX parser: tokens → `ir::Module`.
use crate::ir::Module;
use crate::span::PtxError;

/// Parse one PTX module. `file` is used in error messages.
pub fn parse_module(file: &str, src: &str) -> Result<Module, PtxError> {
    let _ = src;
    Err(PtxError { file: file.into(), line: 1, col: 1, text: String::new(), message: "parser is being written".into() })
}
