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

/// A fence holds the warp until its outstanding memory operations complete (the formal
/// model's `canBeScheduled`: no pending membar): the instruction after `membar.gl` issues no
/// earlier than the store before it plus the global latency, and the wait is counted as the
/// `membar` state. A reconvergence pop is counted as `reconvergence`.
#[test]
fn fences_wait_for_memory_and_are_counted() {
    let dir = std::env::temp_dir().join(format!("gpusim-fence-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("f.ptx"),
        ".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry f(.param .u64 out)\n{\n  .reg .b64 %o;\n  .reg .b32 %r<3>;\n  ld.param.u64 %o, [out];\n  cvta.to.global.u64 %o, %o;\n  st.global.u32 [%o], 7;\n  membar.gl;\n  add.u32 %r1, 1, 2;\n  exit;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("f.yaml"),
        "kernel: f.ptx\nlaunches:\n  - entry: f\n    grid: [1, 1, 1]\n    block: [32, 1, 1]\n    args: [out]\nbuffers:\n  out: { dtype: u32, shape: [1], init: zeros }\nchecks:\n  - buffer: out\n    values: [7]\n",
    )
    .unwrap();
    let opts = gpusim::RunOptions {
        trace_warps: true,
        ..Default::default()
    };
    let out = gpusim::run_manifest_with(&dir.join("f.yaml"), None, &[], &opts).unwrap();
    assert!(out.failures.is_empty());
    let at = |prefix: &str| {
        out.events
            .iter()
            .find(|e| e.text.starts_with(prefix))
            .unwrap()
            .cycle
    };
    // A store completes when L2 has it (`mem::cache`: write-through to L2).
    let global = gpusim::config::Config::tiny().l2.hit_latency as u64;
    assert!(
        at("add.u32") >= at("st.global") + global,
        "the fence let the warp go before the store completed"
    );
    assert!(
        out.stats.totals.stalls["membar"] >= global - 4,
        "{:?}",
        out.stats.totals.stalls
    );
    let _ = std::fs::remove_dir_all(dir);
    let div = run_manifest(&trace("kernels/mandelbrot/mandelbrot.yaml"), None, &[]).unwrap();
    assert!(
        div.stats.totals.stalls["reconvergence"] > 0,
        "divergent loops reconverge"
    );
}
