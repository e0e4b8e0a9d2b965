//! Shared helpers for the criterion benchmarks in `benches/benches/`: where the traces are.

use std::path::PathBuf;

/// Path of a manifest under `traces/`, e.g. `trace("kernels/mandelbrot/mandelbrot.yaml")`.
pub fn trace(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../traces")
        .join(rel)
}

/// Simulate a manifest on the default config; returns the warp instructions executed.
pub fn simulate(rel: &str) -> u64 {
    let out = gpusim::run_manifest(&trace(rel), None, &[]).expect("benchmark traces run");
    assert!(
        out.failures.is_empty(),
        "benchmark trace {rel} failed its checks"
    );
    out.stats.totals.warp_instructions
}
