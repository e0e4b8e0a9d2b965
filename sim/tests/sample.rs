//! Sampled simulation (`--sample`, `core::sample`): a sampled launch predicts the full run's
//! cycles closely while simulating a fraction of its CTAs, reports what it skipped, does not
//! depend on the thread count, and leaves a launch too short to sample exactly as it was.

mod common;

use gpusim::core::sample::SampleSpec;
use gpusim::{run_manifest_with, RunOptions, RunOutput};
use std::path::{Path, PathBuf};

/// A manifest of the tiled SGEMM trace kernel (16×16 tiles) on a `gx` × `gy` grid, K = 64,
/// on tiny with an L2 of `l2_kib` (its 256 KiB by default).
fn sgemm_manifest(tag: &str, gx: u32, gy: u32, l2_kib: Option<u32>) -> PathBuf {
    let (m, n, k) = (16 * gy, 16 * gx, 64);
    let ptx = common::root().join("traces/kernels/sgemm_tiled/sgemm_tiled.ptx");
    let text = format!(
        "{}kernel: {}\nlaunches:\n  - entry: sgemm_tiled\n    grid: [{gx}, {gy}, 1]\n    \
         block: [16, 16, 1]\n    args: [A, B, C, {m}, {n}, {k}]\nbuffers:\n  \
         A: {{ dtype: f32, shape: [{}], init: {{ iota: {{ start: 0, step: 1 }} }} }}\n  \
         B: {{ dtype: f32, shape: [{}], init: zeros }}\n  \
         C: {{ dtype: f32, shape: [{}], init: zeros }}\n",
        l2_kib.map_or(String::new(), |k| format!("set: {{ l2.size_kib: {k} }}\n")),
        ptx.display(),
        m * k,
        k * n,
        m * n
    );
    let path = common::temp_dir(tag).join("sgemm.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

fn run(manifest: &Path, sample: Option<SampleSpec>, threads: usize) -> RunOutput {
    let opts = RunOptions {
        sample,
        parallel: gpusim::core::crew::Parallel {
            threads,
            min_phase: std::time::Duration::ZERO,
        },
        ..Default::default()
    };
    run_manifest_with(manifest, None, &[], &opts).expect("the run completes")
}

#[test]
fn a_sampled_launch_predicts_the_full_run() {
    // 192 CTAs, 8 resident at once on tiny: 24 waves; rows of 8 and of 4 CTAs. The L2 is cut
    // to 32 KiB so that it warms up in the first waves (the warm-up lasts until it has
    // evicted as many lines as it holds).
    for (gx, gy) in [(8, 24), (4, 48)] {
        let m = sgemm_manifest(&format!("predict-{gx}"), gx, gy, Some(32));
        let full = run(&m, None, 1);
        let sampled = run(&m, Some(SampleSpec::default()), 1);
        let (f, s) = (&full.stats.kernels[0], &sampled.stats.kernels[0]);
        assert!(f.sample.is_none());
        let r = s.sample.as_ref().expect("a sample report");
        assert!(r.sampled, "{r:?}");
        assert_eq!(r.ctas, 192);
        assert_eq!(r.wave_ctas, 8);
        assert_eq!(r.simulated_ctas + r.skipped_ctas, 192);
        assert_eq!(r.skipped_ctas % r.wave_ctas, 0, "whole waves are skipped");
        assert!(r.skipped_ctas >= 192 / 2, "{r:?}");
        assert_eq!(s.counters.cycles, r.predicted_cycles);
        assert_eq!(r.predicted_cycles, r.simulated_cycles + r.skipped_cycles);
        assert_eq!(sampled.stats.totals.cycles, r.predicted_cycles);
        assert_eq!(r.simulated_warp_instructions, s.counters.warp_instructions);
        let err = r.predicted_cycles as f64 / f.counters.cycles as f64 - 1.0;
        assert!(
            err.abs() < 0.05,
            "{gx}×{gy}: sampled {} vs full {} cycles ({:+.2}%)",
            r.predicted_cycles,
            f.counters.cycles,
            100.0 * err
        );
        // The instruction estimate (the instructions of the CTAs completed in the measured units,
        // per CTA): every CTA issues the same instructions here.
        let insts = r.estimated_warp_instructions as f64 / f.counters.warp_instructions as f64;
        assert!((insts - 1.0).abs() < 1e-9, "{r:?}");
        // The skipped CTAs' outputs were never computed: no checks.
        assert_eq!(sampled.skipped_ctas, r.skipped_ctas);
        assert!(sampled.failures.is_empty());
    }
}

#[test]
fn a_launch_whose_l2_never_warms_up_runs_in_full() {
    // A (96 KiB) and C (192 KiB) stream through tiny's 256 KiB L2 (B, 32 KiB, is read by
    // every CTA): by the end it has evicted fewer lines than it holds, so the warm-up never
    // ends, and the launch runs in full — the same cycles as without --sample.
    let m = sgemm_manifest("l2-cold", 8, 24, None);
    let full = run(&m, None, 1);
    let sampled = run(&m, Some(SampleSpec::default()), 1);
    let r = sampled.stats.kernels[0].sample.as_ref().unwrap();
    assert!(!r.sampled, "{r:?}");
    let why = r.not_sampled_because.as_deref().unwrap();
    assert!(why.contains("still warming up"), "{why}");
    assert_eq!(r.predicted_cycles, full.stats.totals.cycles);
    assert_eq!(sampled.stats.totals.cycles, full.stats.totals.cycles);
    assert_eq!(sampled.buffers, full.buffers);
}

#[test]
fn sampling_does_not_depend_on_the_thread_count() {
    let m = sgemm_manifest("threads", 8, 24, Some(32));
    let one = run(&m, Some(SampleSpec::default()), 1);
    let two = run(&m, Some(SampleSpec::default()), 2);
    assert_eq!(one.stats.kernels[0].sample, two.stats.kernels[0].sample);
    assert_eq!(one.stats.totals.cycles, two.stats.totals.cycles);
    assert_eq!(one.buffers, two.buffers);
}

#[test]
fn a_launch_too_short_to_sample_runs_in_full() {
    let m = sgemm_manifest("short", 4, 6, Some(32));
    let full = run(&m, None, 1);
    let sampled = run(&m, Some(SampleSpec::default()), 1);
    let r = sampled.stats.kernels[0].sample.as_ref().unwrap();
    assert!(!r.sampled);
    assert_eq!(r.skipped_ctas, 0);
    let why = r.not_sampled_because.as_deref().unwrap();
    assert!(why.contains("fewer than"), "{why}");
    assert_eq!(sampled.skipped_ctas, 0);
    assert_eq!(full.stats.totals.cycles, sampled.stats.totals.cycles);
    assert_eq!(
        full.stats.totals.warp_instructions,
        sampled.stats.totals.warp_instructions
    );
    assert_eq!(full.buffers, sampled.buffers);
}
