//! gpusim: a cycle-level GPU simulator for PTX kernels.
//!
//! Data flow: a manifest (`launch`) and a config (`config`) → the PTX is parsed and prepared
//! (`core::program`, tokens inserted by `gpusim_isa::analysis`) → buffers are allocated in
//! device memory (`mem`) → each launch runs on the cycle-level machine (`core`, with the
//! reconvergence policy from `simt`) → checks are verified and stats reported (`stats`).
//!
//! Architecture invariant: only `stats` and the binary know about JSON or stdout.

pub mod annotate;
pub mod bits;
pub mod check;
pub mod config;
pub mod core;
pub mod correlate;
pub mod gemm;
pub mod launch;
pub mod mem;
pub mod microbench;
pub mod output;
pub mod power;
pub mod progress;
pub mod report;
pub mod rng;
pub mod run;
pub mod simt;
pub mod stats;
pub mod threads;
pub mod timeline;
pub mod yaml;

pub use run::{run_manifest, run_manifest_with, RunError, RunOptions, RunOutput};
