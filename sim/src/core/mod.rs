//! The SM core: program preparation, warps, instruction execution, CTAs and barriers, the
//! per-SM schedulers, and the GPU-level cycle loop with CTA dispatch.
//!
//! Architecture invariant: instruction semantics (`exec`) return effects; when they happen is
//! decided by the SM (`sm`) and its latency model, so schedulers, pipelines and the memory
//! system can change without touching semantics.

pub mod async_state;
pub mod carveout;
pub mod cluster;
pub mod crew;
pub mod cta;
pub mod deps;
pub mod exec;
pub mod fault;
pub mod gpu;
pub mod landing;
pub mod limits;
pub mod liveness;
pub mod pending;
pub mod program;
pub mod sample;
pub mod sched;
pub mod sm;
pub mod subpart;
pub mod timeline_tap;
pub mod tma_job;
pub mod warp;
pub mod wgmma_state;

pub use fault::{Fault, FaultKind};
pub use gpu::{run_launch, LaunchResult, LaunchSpec};
pub use program::Program;
