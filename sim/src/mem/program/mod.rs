//! The memory-program engine of the formal CUDA model (Habermaier Ch. 4; digest §2): the
//! language, its parser and printer, the formal caches, the micro-step interpreter with its
//! silent rules, and the paper's programs; `compiled` flattens a program for the timed memory
//! system (`mem::system`), which runs it step by step at the components.

pub mod cache;
pub mod compiled;
pub mod engine;
pub mod library;
pub mod parse;
pub mod syntax;

pub use cache::{Cache, CacheError, EvClass, Line, MemOpId, Outcome};
pub use compiled::{Compiled, Instr, Place};
pub use engine::{
    AtomFn, AtomicSpace, DeviceSpace, EnvConfig, FirstReady, MemEnv, MemError, MemOp, Oracle,
    RegSlice, Sigma, Silent, Ya,
};
pub use parse::{parse, ParseError};
pub use syntax::{BExp, Level, OpExp, Stm};

/// A parsed memory program: its statements in order.
pub type Program = Vec<Stm>;
