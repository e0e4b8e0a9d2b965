//! Issue 11 regressions: GPU generations (`sm.arch`, `sm.reconvergence: auto`, units a config
//! does not have).

use crate::common::{config_path, root, temp_dir};
use gpusim::config::{Config, ReconvergenceKind, ReconvergenceSetting};
use std::path::{Path, PathBuf};
use std::process::Command;

fn gpusim(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("gpusim runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn shipped(name: &str) -> Config {
    let p = config_path(name);
    Config::from_yaml(name, &std::fs::read_to_string(p).unwrap(), &[]).unwrap()
}

/// Volta, Ampere and Hopper model independent thread scheduling by target, as the CUDA
/// toolchain decides it; each config names its generation.
#[test]
fn shipped_configs_name_their_generation_and_use_auto() {
    for (name, arch, auto) in [
        ("fermi-gtx480", "sm_20", false),
        ("volta-v100", "sm_70", true),
        ("ampere-a100", "sm_80", true),
        ("hopper-h100", "sm_90", true),
        ("hopper-h200", "sm_90", true),
    ] {
        let c = shipped(name);
        assert_eq!(c.sm.arch.to_string(), arch, "{name}");
        assert_eq!(
            c.sm.reconvergence_setting == ReconvergenceSetting::Auto,
            auto,
            "{name}"
        );
    }
}

/// The ITS spin-lock without the manifest's own `set:`: a copy of traces/arch/its_spinlock
/// (built for compute_70) whose policy is the config's.
fn spinlock_without_set(tag: &str, sub: &str) -> PathBuf {
    let src = root().join("traces/arch").join(sub);
    let dir = temp_dir(tag);
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    let manifest = dir.join(format!("{sub}.yaml"));
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text: String = text
        .lines()
        .filter(|l| !l.starts_with("set:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&manifest, text).unwrap();
    manifest
}

/// The reported defect: a kernel built for sm_70 relying on independent thread scheduling
/// faulted with a liveness violation on the V100 config; now the config's `auto` gives it
/// convergence barriers, and the same source built for compute_60 keeps the token stack.
#[test]
fn its_spinlock_runs_on_volta_and_the_sm60_build_does_not() {
    let m = spinlock_without_set("arch-spin70", "its_spinlock");
    let out = gpusim::run_manifest(&m, Some(&config_path("volta-v100")), &[]).unwrap();
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    assert_eq!(out.stats.machine.reconvergence, "convergence-barrier");
    assert_eq!(out.stats.machine.reconvergence_setting, "auto");
    assert_eq!(out.stats.machine.target, "sm_70");
    // The default config fixes the token stack (the formal model): the lock holder waits for
    // its spinning warp-mates.
    match gpusim::run_manifest(&m, None, &[]) {
        Err(gpusim::RunError::Fault(f)) => assert_eq!(f.kind.name(), "liveness", "{f}"),
        other => panic!(
            "expected a liveness fault, got {:?}",
            other.map(|o| o.failures)
        ),
    }
    let m60 = spinlock_without_set("arch-spin60", "its_spinlock_sm60");
    let out = gpusim::run_manifest(&m60, Some(&config_path("volta-v100")), &[]).unwrap();
    assert!(out.expected_fault.is_some(), "compute_60 code livelocks");
    assert_eq!(out.stats.machine.reconvergence, "token-stack");
}

/// A compute_90a wgmma kernel on the Fermi config is refused as the driver would refuse it,
/// naming both generations; raising `sm.arch` finds the next problem: Fermi has no wgmma unit.
#[test]
fn newer_target_and_missing_units_are_exit_2() {
    let wgmma = "traces/tensor/wgmma_f16_m64n256k16/wgmma_f16_m64n256k16.yaml";
    let fermi = "configs/fermi-gtx480.yaml";
    let (code, _, err) = gpusim(&["run", wgmma, "--config", fermi]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("sm_90a") && err.contains("sm_20") && err.contains("fermi-gtx480"),
        "{err}"
    );
    let (code, _, err) = gpusim(&["run", wgmma, "--config", fermi, "--set", "sm.arch=sm_90"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("sm.wgmma") && err.contains("line "), "{err}");
    // The A100 has neither TMA nor clusters.
    let tma = "traces/tensor/tma_tile/tma_tile.yaml";
    let (code, _, err) = gpusim(&[
        "run",
        tma,
        "--config",
        "configs/ampere-a100.yaml",
        "--set",
        "sm.arch=sm_90",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("sm.tma"), "{err}");
}

/// `sm.arch` names a device's compute capability; bad spellings list the form.
#[test]
fn bad_arch_values_are_rejected_with_the_key() {
    for (bad, says) in [
        ("sm_90a", "compilation target"),
        ("banana", "sm_70"),
        ("sm_7", "sm_70"),
    ] {
        let e = Config::from_yaml(
            "t",
            gpusim::config::TINY_YAML,
            &[("sm.arch".into(), bad.into())],
        )
        .unwrap_err();
        assert_eq!(e.path, "sm.arch", "{bad}: {e}");
        assert!(e.to_string().contains(says), "{bad}: {e}");
    }
    let e = Config::from_yaml(
        "t",
        gpusim::config::TINY_YAML,
        &[("sm.reconvergence".into(), "its".into())],
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("auto") && e.to_string().contains("convergence-barrier"),
        "{e}"
    );
}

/// The policy actually used is in the summary and in the stats JSON.
#[test]
fn policy_used_is_reported() {
    let dir = temp_dir("arch-stats");
    let json = dir.join("s.json");
    let (code, out, err) = gpusim(&[
        "run",
        "traces/isa/barriers/barriers.yaml",
        "--config",
        "configs/volta-v100.yaml",
        "--stats-json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("reconvergence       convergence-barrier (auto: .target sm_70 on sm_70)"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).expect("stats JSON parses");
    assert_eq!(v["machine"]["reconvergence"], "convergence-barrier");
    assert_eq!(v["machine"]["arch"], "sm_70");
    assert_eq!(v["machine"]["config"], "volta-v100");
}

/// Under independent thread scheduling a diverged warp reaches `barrier.cluster.wait` group by
/// group: the producer warp's elected thread still runs its TMA loop while its warp-mates wait
/// (this deadlocked once the Hopper config chose convergence barriers).
#[test]
fn cluster_barrier_waits_per_group_under_its() {
    let m = root().join("traces/gemm/hopper_ws_bf16_cluster2/hopper_ws_bf16_cluster2.yaml");
    for cfg in [Some(config_path("hopper-h100")), None] {
        let sets = [(
            "sm.reconvergence".to_string(),
            "convergence-barrier".to_string(),
        )];
        let out = gpusim::run_manifest(&m, cfg.as_deref().map(Path::new), &sets).unwrap();
        assert!(out.failures.is_empty(), "{:?}", out.failures);
        assert_eq!(
            out.stats.machine.reconvergence,
            ReconvergenceKind::ConvergenceBarrier.name()
        );
    }
}
