//! `gpusim gemm`: predictions of a GEMM kernel's performance over problem sizes.
//!
//! A spec (`spec`, a `gemm.yaml` beside the kernel) says how to launch the kernel for any
//! M, N, K; `sizes` gives the sweeps; `run` builds each launch programmatically, runs it on
//! the cycle-level machine and checks small sizes against an ndarray reference; `metrics`
//! turns cycles into time, TFLOP/s, % of the config's peak, waves; `report` formats the
//! table and CSV (the binary prints them). docs/gemm.md.

pub mod metrics;
pub mod report;
pub mod run;
pub mod sizes;
pub mod spec;

pub use metrics::{metrics, Metrics};
pub use run::{run_size, GemmOptions, SizeRun, Verification};
pub use sizes::{parse_sizes, Size};
pub use spec::{GemmSpec, SpecError};

use crate::core::Fault;
use gpusim_isa::PtxError;

/// Why a GEMM size could not be predicted (exit code 2 for input errors, 3 for faults).
#[derive(Debug, thiserror::Error)]
pub enum GemmError {
    #[error("{0}")]
    Spec(#[from] SpecError),
    #[error("{0}")]
    Ptx(#[from] PtxError),
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Target(#[from] crate::config::TargetError),
    #[error("{0}")]
    Fault(Fault),
}

impl GemmError {
    pub fn exit_code(&self) -> i32 {
        match self {
            GemmError::Fault(_) => 3,
            _ => 2,
        }
    }
}
