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
        threads: 1,
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
    // The manifest's own check fails first (issue 11: `check` verifies it on every run).
    let d = r.disagreement.expect("lost stores must disagree");
    assert!(
        d.contains("run 0") && d.contains("checks fail: c (1000 mismatches: [0] got 0"),
        "{d}"
    );
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

// Imports of the SIMT-Step litmus tests below, kept with them.
use gpusim::check::{litmus, CheckReport, Outcome};
use gpusim::launch::LoadedManifest;
use gpusim_models::simt_step::Variant;

/// SIMT-Step litmus manifests under the token stack: every one of 8 randomised runs is judged
/// against CM, the variant the policy claims, and lies in its allowed set, which is also the
/// strongest variant consistent with the runs.
#[test]
fn litmus_manifests_agree_with_cm_under_the_token_stack() {
    for t in ["conv_div_merge", "loop_participation", "gen_sso_rw"] {
        let mut o = opts(8, &[]);
        o.policy = Some("token-stack".into());
        let r = check(&trace(&format!("litmus/simt_step/{t}.yaml")), &o).unwrap();
        let text = r.lines.join("\n");
        assert_eq!(r.disagreement, None, "{t}:\n{text}");
        let v = r.litmus.expect("a litmus manifest is judged");
        assert_eq!(v.test, t);
        assert_eq!(v.judged, 8, "{t}:\n{text}");
        assert_eq!(v.strongest, Some(Variant::Cm), "{t}:\n{text}");
        assert_eq!(v.observed.iter().map(|(_, n)| n).sum::<usize>(), 8);
    }
}

/// Runs judged against a variant stronger than their outcome: gen_sm_rw's relaxed witness
/// (0, 1) (thread 1 read thread 0's store) is allowed from SCF on; claimed SM, it is a
/// disagreement naming the run, the outcome and SM's allowed set; claimed SCF, it agrees.
#[test]
fn an_outcome_outside_the_claimed_variant_is_a_disagreement() {
    let lm = LoadedManifest::load(&trace("litmus/simt_step/gen_sm_rw.yaml")).unwrap();
    let binding = lm.litmus().unwrap().expect("gen_sm_rw names its test");
    let words = |w: &[u32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let runs = vec![
        (
            "run 0: synthetic".to_string(),
            Outcome::Buffers(vec![
                ("out".into(), words(&[0, 0])),
                ("s".into(), words(&[1, 1])),
            ]),
        ),
        (
            "run 1: synthetic".to_string(),
            Outcome::Buffers(vec![
                ("out".into(), words(&[0, 1])),
                ("s".into(), words(&[1, 1])),
            ]),
        ),
    ];
    let mut report = CheckReport::default();
    let v = litmus::judge(
        &binding,
        &lm.manifest,
        &runs,
        &[Some(Variant::Sm); 2],
        &mut report,
    )
    .unwrap();
    let d = report.disagreement.expect("(0, 1) is outside SM");
    assert!(d.contains("run 1: synthetic"), "{d}");
    assert!(d.contains("outcome (0, 1) is outside SM"), "{d}");
    assert!(d.contains("SM allows {(0, 0)}"), "{d}");
    assert!(d.contains("allowed by SCF and weaker"), "{d}");
    assert_eq!(v.strongest, Some(Variant::Scf));

    let mut report = CheckReport::default();
    litmus::judge(
        &binding,
        &lm.manifest,
        &runs,
        &[Some(Variant::Scf); 2],
        &mut report,
    );
    assert_eq!(report.disagreement, None);
}

/// convergence-barrier with a short quantum: the `then` group yields while waiting at the
/// if's convergence barrier, the yield counts as arrival, and the merge block's sg_add runs
/// once per thread (c = 1): outside every executable SIMT-Step variant. The policy claims no
/// variant under a yielding switch rule, so the run is reported, not judged against SIMT-Step.
/// The manifest's checks (what every executable variant's outcome shares) fail and are
/// reported too; they do not decide, as `--policy` runs a policy other than the manifest's.
#[test]
fn a_yielding_convergence_barrier_leaves_simt_step_on_conv_div_merge() {
    let mut o = opts(
        1,
        &[("sm.convergence_barrier", "{switch: quantum, quantum: 2}")],
    );
    o.policy = Some("convergence-barrier".into());
    let r = check(&trace("litmus/simt_step/conv_div_merge.yaml"), &o).unwrap();
    let text = r.lines.join("\n");
    assert_eq!(r.disagreement, None, "{text}");
    assert!(
        text.contains(
            "run 0: as configured: the manifest's checks fail: out (2 mismatches: [2] got 1, \
             expected 2, [5] got 1, expected 2) (not counted"
        ),
        "{text}"
    );
    let v = r.litmus.expect("judged");
    assert_eq!(v.judged, 0);
    assert_eq!(v.strongest, None, "{text}");
    assert_eq!(v.observed[0].0 .0, vec![2, 1, 1, 2, 1, 1]);
}

/// The `litmus:` manifest key is validated with its key path: a location the test does not
/// observe, one mapped twice, a missing one and an unknown buffer.
#[test]
fn litmus_links_are_validated_with_their_key_path() {
    let path = trace("litmus/simt_step/inline.yaml");
    let manifest = |observe: &str| {
        format!(
            "kernel: gen_sm_ww.ptx\nlaunches:\n  - {{ entry: gen_sm_ww, grid: [1], block: [2], args: [s] }}\nbuffers:\n  s: {{ dtype: u32, shape: [2] }}\nlitmus:\n  test: gen_sm_ww.litmus\n  observe: {observe}\n"
        )
    };
    let err = |observe: &str| match LoadedManifest::from_text(&path, &manifest(observe)) {
        Ok(_) => panic!("{observe} must be rejected"),
        Err(e) => e.to_string(),
    };
    assert!(LoadedManifest::from_text(&path, &manifest(r#"{ s: ["s[0]", "s[1]"] }"#)).is_ok());
    let e = err(r#"{ s: ["s[0]", "t[1]"] }"#);
    assert!(
        e.contains("litmus.observe.s[1]: `t[1]` is not observed by test gen_sm_ww"),
        "{e}"
    );
    let e = err(r#"{ s: ["s[0]", "s[0]"] }"#);
    assert!(
        e.contains("litmus.observe.s[1]: `s[0]` is already mapped to s[0]"),
        "{e}"
    );
    let e = err(r#"{ s: ["s[0]", ~] }"#);
    assert!(
        e.contains("litmus.observe: test gen_sm_ww observes s[1] but no buffer"),
        "{e}"
    );
    let e = err(r#"{ out: ["s[0]", "s[1]"] }"#);
    assert!(
        e.contains("litmus.observe.out: unknown buffer `out`"),
        "{e}"
    );
    let e = err(r#"{ s: ["s[0", "s[1]"] }"#);
    assert!(
        e.contains("litmus.observe.s[0]: `s[0` is not a litmus location"),
        "{e}"
    );
}

/// A policy that regrouped threads from different loop iterations would run thread 0's
/// iteration-0 ballot together with thread 1's iteration-1 ballot, so both see the mask 3:
/// p = (3, 0, 3, 0, 3, 3). The loop-participation test catches it: outside every variant's
/// set, so a disagreement under the token stack's CM claim, with no consistent variant. (None
/// of gpusim's policies regroups so; the matrix in docs/reconvergence.md shows it.)
#[test]
fn loop_participation_catches_regrouping_across_iterations() {
    let lm = LoadedManifest::load(&trace("litmus/simt_step/loop_participation.yaml")).unwrap();
    let binding = lm
        .litmus()
        .unwrap()
        .expect("loop_participation names its test");
    let words = |w: &[u32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let buffer = lm
        .manifest
        .litmus
        .as_ref()
        .expect("litmus key")
        .observe
        .keys()
        .next()
        .unwrap()
        .clone();
    let runs = vec![(
        "run 0: synthetic regrouping".to_string(),
        Outcome::Buffers(vec![(buffer, words(&[3, 0, 3, 0, 3, 3]))]),
    )];
    let mut report = CheckReport::default();
    let v = litmus::judge(
        &binding,
        &lm.manifest,
        &runs,
        &[Some(Variant::Cm)],
        &mut report,
    )
    .unwrap();
    let d = report
        .disagreement
        .expect("regrouped ballots are outside CM");
    assert!(d.contains("(3, 0, 3, 0, 3, 3)"), "{d}");
    assert_eq!(v.strongest, None);
}

/// The subgroup-mask invariant on litmus manifests under the token stack: every warp
/// collective of every run ran with exactly its CM dynamic block's threads.
#[test]
fn litmus_collectives_run_with_their_dynamic_blocks_under_the_token_stack() {
    for (t, per_run) in [
        ("loop_participation", 3),
        ("collective_memory", 2),
        ("gen_sso_rw", 2),
    ] {
        let mut o = opts(4, &[]);
        o.policy = Some("token-stack".into());
        let r = check(&trace(&format!("litmus/simt_step/{t}.yaml")), &o).unwrap();
        let text = r.lines.join("\n");
        assert_eq!(r.disagreement, None, "{t}:\n{text}");
        let want = format!(
            "subgroup masks: {} collectives in 4 runs equal their dynamic blocks (CM)",
            4 * per_run
        );
        assert!(text.contains(&want), "{t}:\n{text}");
    }
}

/// A wrong participant set is a disagreement naming the thread, the k-th collective with its
/// line, the run's mask and the model's: a machine that ran loop_participation's first ballot
/// with both lanes (lock-step), and one that split collective_memory's second warp.
#[test]
fn a_collective_outside_its_dynamic_block_is_reported() {
    use gpusim::stats::WarpEvent;
    let event = |warp: u32, line: u32, text: &str, exec: u64| WarpEvent {
        launch: 0,
        cycle: u64::from(line),
        sm: 0,
        cta: [0, 0, 0],
        warp,
        func: "k".into(),
        pc: line,
        line,
        text: text.into(),
        exec,
        after: gpusim_models::shared_text::SharedText::new(String::new()),
    };
    let ballot = "vote.sync.ballot.b32 %r4, %pt, %r3;";
    let test = |name: &str| {
        let lm = LoadedManifest::load(&trace(&format!("litmus/simt_step/{name}.yaml"))).unwrap();
        lm.litmus().unwrap().expect("names its test").test
    };

    let lp = test("loop_participation");
    let allowed = gpusim_models::simt_step::participation(&lp, Variant::Cm).unwrap();
    let good = [
        event(0, 27, "activemask.b32 %r3;", 0b01),
        event(0, 28, ballot, 0b01),
        event(0, 28, ballot, 0b10),
        event(0, 28, ballot, 0b11),
    ];
    assert_eq!(litmus::compare_masks(&allowed, &good, 32, 2), Ok(3));
    let lockstep = [
        event(0, 28, ballot, 0b11),
        event(0, 28, ballot, 0b10),
        event(0, 28, ballot, 0b11),
    ];
    let e = litmus::compare_masks(&allowed, &lockstep, 32, 2).unwrap_err();
    assert!(
        e.contains("thread 0, collective #1 (line 28): the run's mask is {0,1}, the model's dynamic block is {0}"),
        "{e}"
    );

    // Two warps of two lanes: warp 1's lanes are test threads 2 and 3.
    let cm = test("collective_memory");
    let allowed = gpusim_models::simt_step::participation(&cm, Variant::Cm).unwrap();
    let matching = "match.all.sync.b32 %r5|%p1, %r4, %r3;";
    let good = [event(0, 30, matching, 0b11), event(1, 30, matching, 0b11)];
    assert_eq!(litmus::compare_masks(&allowed, &good, 2, 4), Ok(2));
    let split = [
        event(0, 30, matching, 0b11),
        event(1, 30, matching, 0b01),
        event(1, 30, matching, 0b10),
    ];
    let e = litmus::compare_masks(&allowed, &split, 2, 4).unwrap_err();
    assert!(
        e.contains("thread 2, collective #1 (line 30): the run's mask is {2}, the model's dynamic block is {2,3}"),
        "{e}"
    );
}

/// The runs of a check run on several threads and are judged in order: the report — every
/// line, the verdict — is the same for 1, 2 and 3 threads, on a plain kernel, a SIMT-Step
/// litmus test (warp traces and machine claims per run) and a broken asynchronous GEMM (the
/// async checker's events from run 0, a disagreement).
#[test]
fn reports_do_not_depend_on_the_thread_count() {
    for (m, runs) in [
        (trace("kernels/reduce_shared/reduce_shared.yaml"), 4),
        (trace("litmus/simt_step/branch_sync_sg.yaml"), 5),
        (
            trace("gemm/hopper_ws_broken/no_empty_wait/hopper_ws_bf16_no_empty_wait.yaml"),
            3,
        ),
    ] {
        let with = |threads| {
            let r = check(
                &m,
                &CheckOptions {
                    threads,
                    ..opts(runs, &[])
                },
            )
            .unwrap();
            (r.lines, r.disagreement, r.inconclusive)
        };
        let serial = with(1);
        assert!(!serial.0.is_empty());
        for t in [2, 3] {
            assert_eq!(with(t), serial, "{} on {t} threads", m.display());
        }
    }
}
