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

/// The loaded-latency histogram and the per-component utilisation account for every load and
/// every byte: the idle DRAM chase sees the configured latency (less t_rcd on row hits), the
/// streaming kernel sees queueing on top, and the slices' and channels' bytes add up to the
/// L2 and DRAM totals.
#[test]
fn load_latency_and_component_utilisation_add_up() {
    let v100 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/volta-v100.yaml");
    let text = std::fs::read_to_string(&v100).unwrap();
    let cfg = gpusim::config::Config::from_yaml("volta-v100.yaml", &text, &[]).unwrap();
    let chase = run_manifest(&trace("microbench/chase_dram.yaml"), Some(&v100), &[]).unwrap();
    let m = &chase.stats.kernels[0].counters.memory;
    let hist: u64 = m.load_latency_histogram.iter().map(|b| b.2).sum();
    assert_eq!(hist, m.counters.loads_timed);
    assert!(m.counters.loads_timed >= 100, "{}", m.counters.loads_timed);
    let dram = cfg.dram.latency as f64;
    let hit = (cfg.dram.latency - cfg.dram.t_rcd) as f64;
    assert!(
        m.load_latency_mean >= hit && m.load_latency_mean <= dram,
        "idle chase mean {} outside [{hit}, {dram}]",
        m.load_latency_mean
    );

    let stream = run_manifest(&trace("microbench/stream_dram.yaml"), Some(&v100), &[]).unwrap();
    let k = &stream.stats.kernels[0];
    let m = &k.counters.memory;
    assert!(
        m.load_latency_mean > 1.5 * dram,
        "a saturating stream queues: mean {} vs idle {dram}",
        m.load_latency_mean
    );
    assert!(m.load_latency_p99 >= m.load_latency_p50);
    let cycles = k.counters.cycles as f64;
    let slice_rate = (cfg.l2.bytes_per_cycle / cfg.l2.slices) as f64;
    let channel_rate = cfg.dram.bytes_per_cycle as f64 / cfg.dram.channels as f64;
    let c = &k.components;
    assert_eq!(c.l2_slice_utilisation.len(), cfg.l2.slices as usize);
    assert_eq!(c.dram_channel_utilisation.len(), cfg.dram.channels as usize);
    let slice_bytes: f64 = c.l2_slice_utilisation.iter().sum::<f64>() * cycles * slice_rate;
    let channel_bytes: f64 = c.dram_channel_utilisation.iter().sum::<f64>() * cycles * channel_rate;
    let close = |a: f64, b: u64| (a - b as f64).abs() <= 1e-6 * b as f64 + 1.0;
    assert!(
        close(slice_bytes, m.counters.l2_bytes),
        "{slice_bytes} vs {}",
        m.counters.l2_bytes
    );
    assert!(
        close(channel_bytes, m.counters.dram_bytes),
        "{channel_bytes} vs {}",
        m.counters.dram_bytes
    );
}
