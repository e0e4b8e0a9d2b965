//! Validation by microbenchmark (`traces/microbench/`): dependent chains show each unit's
//! configured latency and independent streams its issue interval, in cycles per instruction
//! within ±1 over a long chain (the tensor unit's with `mma.sync`, on every config: gpusim does
//! not check `.target`, so Fermi runs it with the values its config gives); the scheduler issue
//! order matches each policy's rule; the occupancy limits (threads, warps, CTAs, shared memory,
//! registers) bound residency.

mod common;

use common::{root, temp_dir};

use gpusim::config::Config;
use gpusim::{run_manifest, run_manifest_with, RunOptions};
use std::path::{Path, PathBuf};

const BODY: f64 = 64.0;

/// A copy of `traces/microbench/NAME.yaml` with `n` iterations and no checks (the values
/// depend on n; the original manifests are checked by `traces.rs`).
fn manifest_with_n(name: &str, n: u32, dir: &Path) -> PathBuf {
    let src =
        std::fs::read_to_string(root().join(format!("traces/microbench/{name}.yaml"))).unwrap();
    let mut text = String::new();
    for line in src.lines() {
        if line.starts_with("checks:") {
            break;
        }
        let line = if let Some(file) = line.strip_prefix("kernel:") {
            let ptx = root().join("traces/microbench").join(file.trim());
            format!("kernel: {}", ptx.display())
        } else if line.trim_start().starts_with("args:") {
            format!("    args: [out, {n}]")
        } else {
            line.to_string()
        };
        text.push_str(&line);
        text.push('\n');
    }
    let path = dir.join(format!("{name}_{n}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn cycles(m: &Path, config: Option<&Path>, sets: &[(String, String)]) -> u64 {
    let out = run_manifest(m, config, sets).unwrap_or_else(|e| panic!("{}: {e}", m.display()));
    out.stats.totals.cycles
}

/// Cycles per instruction of the loop body, from two trip counts (overheads cancel).
fn cpi(name: &str, config: Option<&Path>, sets: &[(String, String)], dir: &Path) -> f64 {
    let (a, b) = (4, 12);
    let ca = cycles(&manifest_with_n(name, a, dir), config, sets);
    let cb = cycles(&manifest_with_n(name, b, dir), config, sets);
    (cb - ca) as f64 / ((b - a) as f64 * BODY)
}

fn check_config(cfg_path: Option<PathBuf>, tag: &str) {
    check_config_with(cfg_path, tag, &[])
}

fn check_config_with(cfg_path: Option<PathBuf>, tag: &str, sets: &[(String, String)]) {
    let cfg = match &cfg_path {
        Some(p) => Config::from_yaml(
            &p.display().to_string(),
            &std::fs::read_to_string(p).unwrap(),
            sets,
        )
        .unwrap(),
        None => Config::tiny(),
    };
    let dir = temp_dir(tag);
    let u = &cfg.sm.units;
    let mut report = Vec::new();
    // The tensor unit through the shape the config's generation runs: m16n8k16 from sm_80,
    // Volta's m8n8k4 on sm_70; a pre-Volta GPU has no tensor cores to time.
    let arch = |a: &str| cfg.sm.arch.runs(gpusim::config::Arch::parse(a).unwrap());
    let tensor = if arch("sm_80") {
        Some("tensor")
    } else if arch("sm_70") {
        Some("tensor_m884")
    } else {
        None
    };
    let units = [
        ("int", u.int),
        ("fp32", u.fp32),
        ("fp64", u.fp64),
        ("sfu", u.sfu),
    ];
    for (kind, unit) in units.into_iter().chain(tensor.map(|t| (t, u.tensor))) {
        let (lat, ii) = (unit.latency as f64, unit.issue_interval as f64);
        let chain = cpi(&format!("chain_{kind}"), cfg_path.as_deref(), sets, &dir);
        let stream = cpi(&format!("stream_{kind}"), cfg_path.as_deref(), sets, &dir);
        let want_chain = lat.max(ii);
        // `count` units take turns (Volta has 2 tensor cores per sub-core); one issue per cycle.
        let want_stream = (ii / unit.count as f64).max(lat / 8.0).max(1.0);
        report.push(format!("{kind}: chain {chain:.2} (config {want_chain}), stream {stream:.2} (config {want_stream})"));
        assert!((chain - want_chain).abs() <= 1.0, "{tag} {kind} dependent chain: {chain:.2} cycles/inst, config latency {want_chain}\n{report:#?}");
        assert!((stream - want_stream).abs() <= 1.0, "{tag} {kind} independent stream: {stream:.2} cycles/inst, config interval {want_stream}\n{report:#?}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn latency_and_throughput_match_tiny() {
    check_config(None, "tiny");
}

/// The microbenchmarks are built for sm_52 (CUDA 12's oldest target): the Fermi config runs
/// them with its generation raised, as a user would (`--set sm.arch=sm_52`).
#[test]
fn latency_and_throughput_match_fermi() {
    check_config_with(
        Some(root().join("configs/fermi-gtx480.yaml")),
        "fermi",
        &[("sm.arch".into(), "sm_52".into())],
    );
}

#[test]
fn latency_and_throughput_match_volta() {
    check_config(Some(root().join("configs/volta-v100.yaml")), "volta");
}

#[test]
fn latency_and_throughput_match_ampere() {
    check_config(Some(root().join("configs/ampere-a100.yaml")), "ampere");
}

#[test]
fn latency_and_throughput_match_hopper() {
    check_config(Some(root().join("configs/hopper-h100.yaml")), "hopper");
}

/// Issue order with two ready warps on one scheduler, both running independent int
/// instructions: LRR alternates; GTO and oldest-first keep issuing the older warp while it
/// is ready (it always is, in this stream).
#[test]
fn scheduler_issue_order() {
    let dir = temp_dir("sched");
    let m = manifest_with_n("stream_int", 2, &dir);
    let text = std::fs::read_to_string(&m)
        .unwrap()
        .replace("block: [32, 1, 1]", "block: [64, 1, 1]")
        .replace("shape: [32]", "shape: [64]");
    std::fs::write(&m, text).unwrap();
    let order = |sched: &str| -> Vec<u32> {
        let sets = [
            ("sm.scheduler".to_string(), sched.to_string()),
            ("sm.schedulers".to_string(), "1".to_string()),
            ("sm.count".to_string(), "1".to_string()),
        ];
        let out = run_manifest_with(
            &m,
            None,
            &sets,
            &RunOptions {
                trace_warps: true,
                ..Default::default()
            },
        )
        .unwrap();
        // the loop body: after the set-up, both warps are in their independent adds
        out.events
            .iter()
            .filter(|e| e.text.starts_with("add.u32 %x"))
            .take(12)
            .map(|e| e.warp)
            .collect()
    };
    assert_eq!(
        order("lrr"),
        vec![0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1],
        "loose round robin alternates"
    );
    assert_eq!(
        order("gto"),
        vec![0; 12],
        "greedy-then-oldest stays on warp 0"
    );
    assert_eq!(order("oldest"), vec![0; 12], "oldest-first prefers warp 0");
    let _ = std::fs::remove_dir_all(dir);
}

/// Residency is bounded by whichever occupancy limit binds first.
#[test]
fn occupancy_limits() {
    let dir = temp_dir("occ");
    let m = manifest_with_n("stream_int", 1, &dir);
    // 12 CTAs of 512 threads (16 warps) on 2 SMs.
    let text = std::fs::read_to_string(&m)
        .unwrap()
        .replace("grid: [1, 1, 1]", "grid: [12, 1, 1]")
        .replace("block: [32, 1, 1]", "block: [512, 1, 1]")
        .replace("shape: [32]", "shape: [512]");
    std::fs::write(&m, &text).unwrap();
    let max_warps = |sets: &[(&str, &str)], shared: u32| -> u64 {
        let path = dir.join(format!("occ_{shared}.yaml"));
        std::fs::write(
            &path,
            text.replace(
                "    args:",
                &format!("    shared_bytes: {shared}\n    args:"),
            ),
        )
        .unwrap();
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        run_manifest(&path, None, &sets)
            .unwrap()
            .stats
            .totals
            .max_resident_warps
    };
    let roomy = [("sm.registers", "1000000")];
    // tiny: 1536 threads per SM → 3 CTAs (48 warps)
    assert_eq!(max_warps(&roomy, 0), 48);
    // 20000 B of shared memory each: 49152 / 20000 → 2 CTAs
    assert_eq!(max_warps(&roomy, 20000), 32);
    // one CTA slot
    assert_eq!(
        max_warps(&[("sm.registers", "1000000"), ("sm.max_ctas", "1")], 0),
        16
    );
    // 40 warp slots → 2 CTAs
    assert_eq!(
        max_warps(&[("sm.registers", "1000000"), ("sm.max_warps", "40")], 0),
        32
    );
    // registers: a CTA needs 512 × (the kernel's per-thread estimate); room for one and a half
    let src = std::fs::read_to_string(root().join("traces/microbench/microbench.ptx")).unwrap();
    let prog =
        gpusim::core::Program::prepare(gpusim_isa::parse_module("microbench.ptx", &src).unwrap())
            .unwrap();
    let entry = prog.module.find_function("stream_int").unwrap();
    let per_cta = 512 * prog.funcs[entry.0 as usize].regs_per_thread;
    let regs = (per_cta * 3 / 2).to_string();
    assert_eq!(max_warps(&[("sm.registers", regs.as_str())], 0), 16);
    let _ = std::fs::remove_dir_all(dir);
}
