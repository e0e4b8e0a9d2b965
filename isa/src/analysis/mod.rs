//! Control-flow analysis of PTX functions and insertion of the formal model's reconvergence tokens.
//!
//! Map:
//! - `cfg`: basic blocks, successors and predecessors, the virtual exit node.
//! - `dom`: dominator and post-dominator trees (Cooper–Harvey–Kennedy) over adjacency lists.
//! - `loops`: back edges, natural loops, the loop forest and the reducibility check.
//! - `flow`: the bundle of the three above for one function, with located errors.
//! - `tokens`: `insert_tokens`, which rewrites a function so that it carries `ssy`/`sync`,
//!   `preBrk`/`brk` and `preRet` as the formal model requires (Habermaier 2011, §5.4). Its stages
//!   are private modules: `graph` (the block graph being rewritten), `structure` (preheaders,
//!   single latches, loop exits → `brk`), `reconverge` (ssy placement and sync pads), `layout`
//!   (back to a flat body) and `validate` (program-address and stack consistency,
//!   Habermaier §6.2).
//! - `describe`: golden-test friendly listings of a CFG and of a (tokenised) body.
//!
//! Architecture invariant: nothing here knows about warps being simulated; the analyses are pure
//! functions of a `Function`.

pub mod cfg;
pub mod describe;
pub mod dom;
pub mod flow;
mod graph;
mod layout;
pub mod loops;
mod reconverge;
mod structure;
pub mod tokens;
mod validate;

use crate::span::Span;
use std::fmt;

pub use cfg::{BasicBlock, Cfg};
pub use describe::{cfg_dot, describe_body, describe_cfg};
pub use dom::DomTree;
pub use flow::ControlFlow;
pub use loops::{Loop, LoopForest};
pub use tokens::insert_tokens;
pub use validate::validate_tokens;

/// An analysis failure: which function, what is wrong, and where in the PTX source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalysisError {
    pub function: String,
    pub message: String,
    pub span: Span,
}

impl AnalysisError {
    pub fn new(function: &str, span: Span, message: impl Into<String>) -> AnalysisError {
        AnalysisError {
            function: function.to_string(),
            message: message.into(),
            span,
        }
    }
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "in `{}` at line {}, column {}: {}",
            self.function, self.span.line, self.span.col, self.message
        )
    }
}

impl std::error::Error for AnalysisError {}
