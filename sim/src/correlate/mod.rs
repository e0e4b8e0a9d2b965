//! Hardware correlation: `gpusim export` writes manifests and GEMM sizes for a real GPU
//! (`export`), `tools/correlate/measure.py` times them there and writes a CSV (`measured`),
//! and `gpusim correlate` simulates the same workloads and compares (`compare`).
//! docs/correlation.md describes the steps and the formats.

pub mod compare;
pub mod export;
pub mod measured;
