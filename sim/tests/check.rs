//! `gpusim check`: the simulator agrees with the reference models on race-free kernels, finds
//! the same barrier divergence, matches the formal token stack state by state, and reports a
//! broken machine (a memory program that loses stores) as a disagreement with exit code 1.

use gpusim::check::{check, CheckOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

fn trace(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../traces")
        .join(rel)
}

fn opts(runs: u32, sets: &[(&str, &str)]) -> CheckOptions {
    CheckOptions {
        config: None,
        sets: sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        policy: None,
        runs,
        seed: 7,
    }
}

/// Race-free kernels: every randomised run ends in the semantics' final memory, the lint
/// accepts them, and the token-stack traces equal the formal model's.
#[test]
fn race_free_kernels_agree_with_every_model() {
    for k in [
        "vecadd",
        "reduce_shared",
        "sgemm_tiled",
        "bitonic_sort",
        "switch_case",
    ] {
        let r = check(&trace(&format!("kernels/{k}/{k}.yaml")), &opts(3, &[])).unwrap();
        let text = r.lines.join("\n");
        assert_eq!(r.disagreement, None, "{k}:\n{text}");
        assert!(
            text.contains("equal the semantics' final buffers"),
            "{k}:\n{text}"
        );
        assert!(
            text.contains("equal to the formal model's, state by state"),
            "{k}:\n{text}"
        );
    }
}

/// The formal report's branching examples: the simulator's token stack after every
/// instruction is the reference model's (listings 5.5/5.7 and the T11 call/return cases).
#[test]
fn formal_traces_match_the_token_stack_model() {
    for t in [
        "t2_if_else",
        "t3_indirect_bra",
        "t4_nested_ret",
        "t11_3_ret_both",
        "t11_7_guarded_call",
    ] {
        let r = check(&trace(&format!("semantics/{t}/{t}.yaml")), &opts(1, &[])).unwrap();
        let text = r.lines.join("\n");
        assert_eq!(r.disagreement, None, "{t}:\n{text}");
        assert!(text.contains("state by state"), "{t}:\n{text}");
    }
}

/// Barrier divergence is found by the semantics and by every simulator run.
#[test]
fn barrier_divergence_is_found_on_both_sides() {
    let r = check(
        &trace("faults/barrier_divergent_if/barrier_divergent_if.yaml"),
        &opts(2, &[]),
    )
    .unwrap();
    let text = r.lines.join("\n");
    assert_eq!(r.disagreement, None, "{text}");
    assert!(
        text.contains("found by the semantics and by all 2 simulator run(s)"),
        "{text}"
    );
}

/// A machine that loses global stores (a memory program that never writes) is caught: the
/// final memory differs from the semantics', named by buffer, word and values; exit code 1.
#[test]
fn a_broken_machine_is_a_disagreement() {
    let lose = (
        "memory_programs.st_global_wb",
        "discardL1; yield; releaseRegs; end;",
    );
    let r = check(&trace("kernels/vecadd/vecadd.yaml"), &opts(1, &[lose])).unwrap();
    let d = r.disagreement.expect("lost stores must disagree");
    assert!(d.contains("buffer `c` differs at byte 0"), "{d}");
    let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args([
            "check",
            trace("kernels/vecadd/vecadd.yaml").to_str().unwrap(),
        ])
        .args(["--runs", "1", "--set", &format!("{}={}", lose.0, lose.1)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("DISAGREE"), "{stdout}");
}

/// The command line: agreement exits 0 and prints each model's verdict.
#[test]
fn cli_agreement_exits_0() {
    let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args([
            "check",
            trace("kernels/saxpy/saxpy.yaml").to_str().unwrap(),
            "--runs",
            "2",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for want in [
        "lock-step semantics",
        "interleaving semantics",
        "uniformity",
        "token stack",
        "verdict             agree",
    ] {
        assert!(stdout.contains(want), "{want:?} missing:\n{stdout}");
    }
}
