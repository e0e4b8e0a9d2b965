//! `gpusim fuzz`: a fixed-seed campaign agrees with every model and finds both kinds of
//! planted bugs; the regression traces the fuzzer found (`traces/fuzz/`) still behave as their
//! manifests document; the CLI reports agreement with exit code 0.

use gpusim::check::fuzz::{fuzz, FuzzOptions};
use gpusim::check::{check, CheckOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A seed whose first cases include planted races and divergent barriers under several
/// policies (the generator is deterministic, so the sample is fixed).
const SEED: u64 = 1;
const CASES: u32 = 60;

#[test]
fn fixed_seed_campaign_agrees_and_detects_planted_bugs() {
    let r = fuzz(SEED, CASES, &FuzzOptions::default()).unwrap();
    let found: Vec<String> = r.disagreements.iter().map(|d| d.to_string()).collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert_eq!(r.cases, CASES);
    assert!(r.clean > 0, "{r:?}");
    assert!(r.races > 0, "no race planted in the sample: {r:?}");
    assert!(
        r.divergent > 0,
        "no divergent barrier planted in the sample: {r:?}"
    );
    assert_eq!(r.races_detected, r.races, "{r:?}");
    assert_eq!(r.divergent_detected, r.divergent, "{r:?}");
    assert!(
        r.per_policy.iter().all(|&n| n > 0),
        "every policy runs in the sample: {r:?}"
    );
    // Nothing is left behind when every case agrees.
    assert!(!r.dir.exists(), "{}", r.dir.display());
}

/// With `keep`, every case stays on disk and `gpusim check` reproduces its verdict from the
/// kept manifest alone.
#[test]
fn kept_cases_reproduce_with_check() {
    let dir = std::env::temp_dir().join(format!("gpusim-fuzz-test-{}", std::process::id()));
    let o = FuzzOptions {
        keep: Some(dir.clone()),
        ..FuzzOptions::default()
    };
    let r = fuzz(7, 4, &o).unwrap();
    assert!(r.disagreements.is_empty(), "{:?}", r.disagreements);
    for seed in 7..11u64 {
        let m = dir.join(format!("case-{seed}")).join("case.yaml");
        let rep = check(
            &m,
            &CheckOptions {
                config: None,
                sets: Vec::new(),
                policy: None,
                runs: 2,
                seed,
                threads: 1,
            },
        )
        .unwrap();
        assert_eq!(rep.disagreement, None, "{}", rep.lines.join("\n"));
        assert!(
            rep.lines.iter().any(|l| l.contains("lock-step semantics")),
            "{}",
            rep.lines.join("\n")
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn fuzz_traces() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/fuzz");
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).unwrap().flatten() {
        if e.path().is_dir() {
            for f in std::fs::read_dir(e.path()).unwrap().flatten() {
                if f.path().extension().is_some_and(|x| x == "yaml") {
                    out.push(f.path());
                }
            }
        }
    }
    out.sort();
    out
}

/// Every regression trace runs in the simulator as its manifest says (completes, or faults
/// as `expect_fault` says), the semantics still see the kernel as its header documents, and
/// `check` now agrees (each was a disagreement, resolved as its header says).
#[test]
fn regression_traces_behave_as_documented() {
    let list = fuzz_traces();
    assert!(!list.is_empty());
    for m in list {
        let out =
            gpusim::run_manifest(&m, None, &[]).unwrap_or_else(|e| panic!("{}: {e}", m.display()));
        assert!(
            out.failures.is_empty(),
            "{}: {:?}",
            m.display(),
            out.failures
        );
        let text = std::fs::read_to_string(&m).unwrap();
        let rep = check(
            &m,
            &CheckOptions {
                config: None,
                sets: Vec::new(),
                policy: None,
                runs: 1,
                seed: 1,
                threads: 1,
            },
        )
        .unwrap();
        let lines = rep.lines.join("\n");
        assert_eq!(rep.disagreement, None, "{}:\n{lines}", m.display());
        for line in text.lines().filter_map(|l| l.strip_prefix("# Semantics: ")) {
            assert!(
                lines.contains(line),
                "{}: `{line}` not in\n{lines}",
                m.display()
            );
        }
    }
}

#[test]
fn cli_reports_agreement() {
    let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(["fuzz", "--seed", "3", "--cases", "5"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("5 case(s)"), "{stdout}");
    assert!(stdout.contains("verdict             agree"), "{stdout}");
}

/// A campaign's cases run on several threads and are tallied in order: the report is the same
/// for 1 and 3 threads.
#[test]
fn campaign_reports_do_not_depend_on_the_thread_count() {
    let with = |threads| {
        let o = FuzzOptions {
            threads,
            ..FuzzOptions::default()
        };
        let r = fuzz(SEED + 100, 12, &o).unwrap();
        let found: Vec<String> = r.disagreements.iter().map(|d| d.to_string()).collect();
        (
            [
                r.cases,
                r.clean,
                r.races,
                r.races_detected,
                r.divergent,
                r.divergent_detected,
                r.uniformity_false_alarms,
            ],
            r.per_policy,
            found,
        )
    };
    let serial = with(1);
    assert_eq!(serial.0[0], 12);
    assert_eq!(with(3), serial);
}
