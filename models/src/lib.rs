//! Semantic reference models: executable versions of the published semantics that gpusim's
//! simulator is checked against (`gpusim check`, `gpusim lint`).
//!
//! **Architecture invariant:** this crate depends on the PTX front end (`gpusim-isa`: parsing,
//! the IR, CFG analysis, pure instruction semantics) and on nothing of the simulator — not its
//! cores, reconvergence policies, memory system or async units. An oracle that shares code
//! with what it checks proves nothing. Each model follows its paper rule by rule and cites the
//! rule where it implements it; the digests are in `shared/notes/`.
pub mod async_sync;
pub mod lockstep;
pub mod ptx_exec;
pub mod shared_text;
pub mod simt_step;
pub mod token_stack;
pub mod uniformity;
