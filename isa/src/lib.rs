//! gpusim-isa: the PTX front end. It parses PTX text into the IR (`ir`), analyses control flow
//! (`analysis`: CFG, dominators, post-dominators, loops, reducibility) and inserts the formal
//! model's reconvergence tokens (`analysis::tokens`), and defines the pure per-lane semantics of
//! every data instruction (`semantics`).
//!
//! Architecture invariant: this crate knows nothing about cycles, caches, warps or memory
//! systems. It depends on no other gpusim crate.

pub mod analysis;
pub mod ir;
pub mod lexer;
pub mod parser;
pub mod print;
pub mod semantics;
pub mod shared_layout;
pub mod span;

pub use ir::*;
pub use parser::{parse_module, MAX_NESTING};
pub use shared_layout::SharedLayout;
pub use span::{PtxError, Span};
