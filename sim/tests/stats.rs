//! The counters' contracts: every resident warp is in exactly one state per cycle (the
//! breakdown sums to resident warp-cycles), the SIMD histogram accounts for every issued
//! instruction and lane, and every scheduler is deterministic.

use gpusim::run_manifest;
use std::path::{Path, PathBuf};

fn trace(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../traces")
        .join(rel)
}

#[test]
fn stall_states_sum_to_resident_warp_cycles() {
    // One CTA of 96 threads (3 warps) stays resident from cycle 0 to the end.
    let out = run_manifest(
        &trace("semantics/t12_bar_sync/t12_bar_sync.yaml"),
        None,
        &[],
    )
    .unwrap();
    let k = &out.stats.kernels[0];
    let total: u64 = k.counters.stalls.values().sum();
    assert_eq!(total, 3 * k.counters.cycles, "{:?}", k.counters.stalls);
    let per_sm: u64 = k
        .sms
        .iter()
        .map(|s| s.counters.stalls.values().sum::<u64>())
        .sum();
    assert_eq!(per_sm, total);
    assert_eq!(k.counters.stalls["issued"], k.counters.warp_instructions);
}

#[test]
fn simd_histogram_accounts_for_every_instruction_and_lane() {
    for t in [
        "kernels/mandelbrot/mandelbrot.yaml",
        "kernels/bfs_step/bfs_step.yaml",
        "semantics/t11_6_partial_warp/t11_6_partial_warp.yaml",
    ] {
        let out = run_manifest(&trace(t), None, &[]).unwrap();
        let c = &out.stats.totals;
        assert_eq!(c.simd_lanes.iter().sum::<u64>(), c.warp_instructions, "{t}");
        let lanes: u64 = c
            .simd_lanes
            .iter()
            .enumerate()
            .map(|(k, n)| k as u64 * n)
            .sum();
        assert_eq!(lanes, c.thread_instructions, "{t}");
    }
}

#[test]
fn every_scheduler_is_deterministic() {
    for sched in ["lrr", "gto", "oldest", "random", "two-level"] {
        let sets = [("sm.scheduler".to_string(), sched.to_string())];
        let run = || {
            let out =
                run_manifest(&trace("kernels/histogram/histogram.yaml"), None, &sets).unwrap();
            let mut json = serde_json::to_value(&out.stats).unwrap();
            json.as_object_mut()
                .unwrap()
                .retain(|k, _| !k.contains("wall") && !k.contains("per_second"));
            for k in json["kernels"].as_array_mut().unwrap() {
                k.as_object_mut().unwrap().remove("wall_seconds");
            }
            (json, out.buffers)
        };
        let (a, b) = (run(), run());
        assert_eq!(a.0, b.0, "{sched}: stats differ between identical runs");
        assert_eq!(a.1, b.1, "{sched}: buffers differ between identical runs");
    }
}
