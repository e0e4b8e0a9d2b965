//! Issue 11 regressions: `gpusim check`, `fuzz` and `lint` (verdicts, barrier semantics under
//! independent thread scheduling, scaling).

use crate::common::{root, temp_dir};
use gpusim::check::fuzz::{fuzz, FuzzOptions};
use gpusim::check::{check, CheckOptions, CheckReport};
use std::path::{Path, PathBuf};
use std::process::Command;

fn options(runs: u32) -> CheckOptions {
    CheckOptions {
        config: None,
        sets: Vec::new(),
        policy: None,
        runs,
        seed: 1,
        threads: 1,
    }
}

fn gpusim(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `out[tid] = tid` for one CTA of 32 threads.
const IOTA_PTX: &str = "\
.version 7.0
.target sm_52
.address_size 64
.visible .entry iota(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
";

/// A manifest for `kernel.ptx` in `dir` with the given tail (checks, expect_fault, set).
fn write_case(dir: &Path, ptx: &str, entry: &str, tail: &str) -> PathBuf {
    std::fs::write(dir.join("kernel.ptx"), ptx).unwrap();
    let m = dir.join("case.yaml");
    std::fs::write(
        &m,
        format!(
            "kernel: kernel.ptx\nlaunches:\n  - entry: {entry}\n    grid: [1, 1, 1]\n    \
             block: [32, 1, 1]\n    args: [out]\nbuffers:\n  out: {{ dtype: u32, shape: [32], \
             init: zeros }}\n{tail}"
        ),
    )
    .unwrap();
    m
}

fn report_text(r: &CheckReport) -> String {
    format!(
        "{}\ndisagreement: {:?}\ninconclusive: {:?}",
        r.lines.join("\n"),
        r.disagreement,
        r.inconclusive
    )
}

/// Issue 11 item 6: a manifest whose `run` fails its checks (exit 1) passed `check`, which
/// compared the runs with the semantics only. Every run must now meet the manifest's checks.
#[test]
fn check_fails_when_the_manifests_checks_fail() {
    let dir = temp_dir("check-bad-values");
    let wrong: Vec<String> = (0..32)
        .map(|i| (i + u32::from(i == 7)).to_string())
        .collect();
    let m = write_case(
        &dir,
        IOTA_PTX,
        "iota",
        &format!(
            "checks:\n  - buffer: out\n    values: [{}]\n",
            wrong.join(", ")
        ),
    );
    let (code, _, _) = gpusim(&["run", m.to_str().unwrap()]);
    assert_eq!(code, Some(1), "`run` fails the check");
    let r = check(&m, &options(2)).unwrap();
    let d = r.disagreement.clone().unwrap_or_default();
    assert!(
        d.contains("run 0") && d.contains("checks fail") && d.contains("[7] got 7, expected 8"),
        "{}",
        report_text(&r)
    );
    let (code, stdout, _) = gpusim(&["check", m.to_str().unwrap(), "--runs", "2"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("DISAGREE"), "{stdout}");

    // The same kernel with the right values agrees, and says the checks were verified.
    let right: Vec<String> = (0..32).map(|i| i.to_string()).collect();
    let m = write_case(
        &dir,
        IOTA_PTX,
        "iota",
        &format!(
            "checks:\n  - buffer: out\n    values: [{}]\n",
            right.join(", ")
        ),
    );
    let r = check(&m, &options(2)).unwrap();
    assert!(r.agrees(), "{}", report_text(&r));
    assert!(
        r.lines
            .iter()
            .any(|l| l.contains("manifest checks: met in all 2 run(s)")),
        "{}",
        report_text(&r)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The sibling: `expect_fault` is the manifest's expectation too. A run that completes where
/// the manifest expects a fault, or faults with another kind, fails `check`.
#[test]
fn check_fails_when_the_expected_fault_does_not_happen() {
    let dir = temp_dir("check-expect-fault");
    let m = write_case(&dir, IOTA_PTX, "iota", "expect_fault: barrier-divergence\n");
    let r = check(&m, &options(1)).unwrap();
    let d = r.disagreement.clone().unwrap_or_default();
    assert!(
        d.contains("checks fail") && d.contains("expect_fault"),
        "{}",
        report_text(&r)
    );
    // A watchdog where the manifest expects barrier divergence.
    let spin = "\
.version 7.0
.target sm_52
.address_size 64
.visible .entry spin(.param .u64 out)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
$L_loop:
    ld.volatile.global.u32 %r2, [%rd3];
    add.u32 %r2, %r2, 1;
    st.volatile.global.u32 [%rd3], %r2;
    bra.uni $L_loop;
}
";
    let m = write_case(
        &dir,
        spin,
        "spin",
        "set:\n  watchdog_cycles: 20000\nexpect_fault: barrier-divergence\n",
    );
    let r = check(&m, &options(1)).unwrap();
    let d = r.disagreement.clone().unwrap_or_default();
    assert!(
        d.contains("expects a barrier-divergence fault") && d.contains("watchdog"),
        "{}",
        report_text(&r)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 11 item 6: every run hit the watchdog and the models their step bound, and `check`
/// said "agree". Nothing was compared: the verdict is INCONCLUSIVE, exit 1.
#[test]
fn check_is_inconclusive_when_nothing_is_compared() {
    let dir = temp_dir("check-inconclusive");
    let src = root().join("traces/faults/watchdog_memory_loop");
    let ptx = std::fs::read_to_string(src.join("watchdog_memory_loop.ptx")).unwrap();
    std::fs::write(dir.join("watchdog_memory_loop.ptx"), ptx).unwrap();
    let manifest = std::fs::read_to_string(src.join("watchdog_memory_loop.yaml"))
        .unwrap()
        .replace("expect_fault: watchdog\n", "");
    let m = dir.join("spin.yaml");
    std::fs::write(&m, manifest).unwrap();
    let r = check(&m, &options(2)).unwrap();
    assert_eq!(r.disagreement, None, "{}", report_text(&r));
    let why = r.inconclusive.clone().unwrap_or_default();
    assert!(why.contains("nothing was compared"), "{}", report_text(&r));
    assert!(!r.agrees());
    let (code, stdout, _) = gpusim(&["check", m.to_str().unwrap(), "--runs", "1"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("verdict             INCONCLUSIVE"),
        "{stdout}"
    );
    assert!(!stdout.contains("agree"), "{stdout}");
    // With the fault it expects, the manifest's expectation was verified: agreement.
    let r = check(&src.join("watchdog_memory_loop.yaml"), &options(1)).unwrap();
    assert!(r.agrees(), "{}", report_text(&r));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 11 item 6: `--runs 0` silently did one run; `fuzz --cases 0` reported agreement on
/// nothing. Both are bad input (exit 2, naming the flag, the value and the allowed range).
#[test]
fn zero_runs_and_zero_cases_are_rejected() {
    let m = root().join("traces/kernels/saxpy/saxpy.yaml");
    let (code, stdout, stderr) = gpusim(&["check", m.to_str().unwrap(), "--runs", "0"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("--runs") && stderr.contains('0') && stderr.contains("1.."),
        "{stderr}"
    );
    let (code, stdout, stderr) = gpusim(&["fuzz", "--cases", "0"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains("--cases") && stderr.contains('0') && stderr.contains("1.."),
        "{stderr}"
    );
    // The library refuses too (it used to clamp to one run).
    let e = check(&m, &options(0)).expect_err("runs 0 is an error");
    assert!(e.to_string().contains("--runs"), "{e}");
    assert_eq!(e.exit_code(), 2);
}

/// The six cases of issue 11 item 7 (`gpusim fuzz --cases 3000 --seed 0`): under
/// convergence-barrier whole warps waited at two different `bar.sync 0` and the simulator
/// completed where the semantics find divergence. `bar.sync` is aligned, so the simulator now
/// reports barrier divergence; every case agrees.
#[test]
fn fuzz_cases_with_aligned_barriers_at_two_sites_agree() {
    for seed in [1734u64, 1757, 1843, 2040, 2525, 2960] {
        let o = FuzzOptions {
            shrink: false,
            ..FuzzOptions::default()
        };
        let r = fuzz(seed, 1, &o).unwrap();
        let found: Vec<String> = r.disagreements.iter().map(|d| d.to_string()).collect();
        assert!(found.is_empty(), "seed {seed}: {}", found.join("\n"));
        assert_eq!(
            (r.divergent, r.divergent_detected),
            (1, 1),
            "seed {seed}: {r:?}"
        );
    }
}

/// The kept regression traces: the simulator reports the divergence the semantics find.
#[test]
fn aligned_barrier_regression_traces_fault_as_divergence() {
    let dir = root().join("traces/fuzz");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.starts_with("aligned_barrier_two_sites_") {
            continue;
        }
        n += 1;
        let m = e.path().join(format!("{name}.yaml"));
        let out = gpusim::run_manifest(&m, None, &[]).unwrap();
        let f = out.expected_fault.expect("the manifest expects a fault");
        assert_eq!(f.kind.name(), "barrier-divergence", "{name}");
        assert!(
            f.to_string().contains("two different instructions"),
            "{name}: {f}"
        );
        let r = check(&m, &options(3)).unwrap();
        assert!(r.agrees(), "{name}: {}", report_text(&r));
    }
    assert_eq!(n, 6, "the six cases of the 3000-case campaign");
}

/// `barrier.sync` without `.aligned` may be completed from different instructions under
/// independent thread scheduling: the non-aligned trace completes with its values and `check`
/// agrees (the interleaving semantics meets non-aligned barriers by id); the aligned one is
/// barrier divergence, on the simulator and in the semantics.
#[test]
fn non_aligned_barriers_may_meet_at_different_instructions() {
    let t = root().join("traces/policies/its_divergent_barriers/its_divergent_barriers.yaml");
    let out = gpusim::run_manifest(&t, None, &[]).unwrap();
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    let r = check(&t, &options(3)).unwrap();
    assert!(r.agrees(), "{}", report_text(&r));

    // Two warps meeting at two different non-aligned `barrier.sync 0`, with a neighbour
    // exchange through shared memory that the barrier orders.
    let dir = temp_dir("check-non-aligned");
    let ptx = |bar: &str| {
        format!(
            "\
.version 7.0
.target sm_70
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .shared .align 4 .b32 s[64];
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    mov.u64 %rd3, s;
    add.s64 %rd4, %rd3, %rd2;
    st.shared.u32 [%rd4], %r1;
    xor.b32 %r2, %r1, 32;
    mul.wide.u32 %rd5, %r2, 4;
    add.s64 %rd5, %rd3, %rd5;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra $L_low;
    {bar} 0;
    bra.uni $L_join;
$L_low:
    {bar} 0;
$L_join:
    ld.shared.u32 %r3, [%rd5];
    add.s64 %rd6, %rd1, %rd2;
    st.global.u32 [%rd6], %r3;
    ret;
}}
"
        )
    };
    let expected: Vec<String> = (0..64).map(|t| (t ^ 32).to_string()).collect();
    let manifest = |dir: &Path, tail: &str| {
        let m = dir.join("case.yaml");
        std::fs::write(
            &m,
            format!(
                "kernel: kernel.ptx\nset:\n  sm.reconvergence: convergence-barrier\nlaunches:\n  \
                 - entry: k\n    grid: [1, 1, 1]\n    block: [64, 1, 1]\n    args: [out]\n\
                 buffers:\n  out: {{ dtype: u32, shape: [64], init: zeros }}\n{tail}"
            ),
        )
        .unwrap();
        m
    };
    std::fs::write(dir.join("kernel.ptx"), ptx("barrier.sync")).unwrap();
    let m = manifest(
        &dir,
        &format!(
            "checks:\n  - buffer: out\n    values: [{}]\n",
            expected.join(", ")
        ),
    );
    let out = gpusim::run_manifest(&m, None, &[]).unwrap();
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    let r = check(&m, &options(3)).unwrap();
    assert!(r.agrees(), "{}", report_text(&r));
    assert!(
        r.lines
            .iter()
            .any(|l| l.contains("final memory: all 3 run(s) equal")),
        "the interleaving semantics judged it: {}",
        report_text(&r)
    );

    std::fs::write(dir.join("kernel.ptx"), ptx("bar.sync")).unwrap();
    let m = manifest(&dir, "expect_fault: barrier-divergence\n");
    let out = gpusim::run_manifest(&m, None, &[]).unwrap();
    assert!(out.expected_fault.is_some());
    let r = check(&m, &options(3)).unwrap();
    assert!(r.agrees(), "{}", report_text(&r));
    assert!(
        r.lines
            .iter()
            .any(|l| l.contains("barrier divergence: found by the semantics and by all 3")),
        "{}",
        report_text(&r)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A recursion `depth` calls deep: `out[tid] = rec(depth)` with `rec(n) = n ? rec(n-1) + 1 : 0`.
const RECURSION_PTX: &str = "\
.version 7.0
.target sm_52
.address_size 64
.func (.param .b32 rv) rec(.param .b32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<5>;
    ld.param.u32 %r1, [n];
    setp.eq.u32 %p1, %r1, 0;
    mov.u32 %r4, 0;
    @%p1 bra $L_done;
    sub.u32 %r2, %r1, 1;
    {
    .param .b32 a;
    st.param.b32 [a], %r2;
    .param .b32 r;
    call.uni (r), rec, (a);
    ld.param.b32 %r3, [r];
    }
    add.u32 %r4, %r3, 1;
$L_done:
    st.param.b32 [rv], %r4;
    ret;
}
.visible .entry deep(.param .u64 out, .param .u32 depth)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u32 %r1, [depth];
    {
    .param .b32 a;
    st.param.b32 [a], %r1;
    .param .b32 r;
    call.uni (r), rec, (a);
    ld.param.b32 %r2, [r];
    }
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}
";

fn recursion_case(dir: &Path, depth: u32) -> PathBuf {
    std::fs::write(dir.join("rec.ptx"), RECURSION_PTX).unwrap();
    let values: Vec<String> = (0..32).map(|_| depth.to_string()).collect();
    let m = dir.join(format!("rec{depth}.yaml"));
    std::fs::write(
        &m,
        format!(
            "kernel: rec.ptx\nset:\n  sm.reconvergence: token-stack\n  \
             sm.local_bytes_per_thread: 1048576\nlaunches:\n  - entry: deep\n    grid: [1, 1, 1]\n    \
             block: [32, 1, 1]\n    args: [out, {depth}]\nbuffers:\n  out: {{ dtype: u32, shape: \
             [32], init: zeros }}\nchecks:\n  - buffer: out\n    values: [{}]\n",
            values.join(", ")
        ),
    )
    .unwrap();
    m
}

/// The bytes a warp trace holds of its own, and its steps: the simulator's (`--trace-warps`,
/// and the token-stack comparison of `check`) and the token-stack model's.
fn trace_bytes(m: &Path, depth: u32) -> [(usize, usize); 2] {
    let opts = gpusim::RunOptions {
        trace_warps: true,
        ..Default::default()
    };
    let out = gpusim::run::run_manifest_with(m, None, &[], &opts).unwrap();
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    let sim = (
        out.events
            .iter()
            .map(|e| e.after.own_bytes())
            .sum::<usize>(),
        out.events.len(),
    );
    let module = gpusim_isa::parse_module("rec.ptx", RECURSION_PTX).unwrap();
    let mut mem = gpusim_models::ptx_exec::GlobalMemory::new();
    let out_base = mem.alloc("out", vec![0; 128]);
    let launch = gpusim_models::ptx_exec::Launch {
        grid: [1, 1, 1],
        block: [32, 1, 1],
        dynamic_shared: 0,
        args: vec![out_base, u64::from(depth)],
    };
    let opts = gpusim_models::token_stack::Options {
        warp_size: 32,
        ..Default::default()
    };
    let run = gpusim_models::token_stack::run(&module, "deep", &launch, mem, &opts).unwrap();
    let steps: Vec<_> = run.traces.iter().flatten().collect();
    let model = (
        steps.iter().map(|s| s.state.own_bytes()).sum::<usize>(),
        steps.len(),
    );
    [sim, model]
}

/// Issue 11 item 12: `check` memory grew quadratically with the recursion depth (depth 2000:
/// 4.5 GB). Both token-stack traces stored the whole stack (a call token per frame) as text at
/// every step: O(depth) bytes per step, O(depth²) in all. They now keep what differs from the
/// previous step and share the rest: the bytes held grow linearly with the depth (not a timing
/// test), the texts read back in full, and `check` still compares them state by state.
#[test]
fn recursion_traces_take_memory_linear_in_the_depth() {
    let dir = temp_dir("check-recursion");
    let small = trace_bytes(&recursion_case(&dir, 150), 150);
    let large = trace_bytes(&recursion_case(&dir, 600), 600);
    for (side, (s, l)) in ["simulator", "model"].iter().zip(small.iter().zip(&large)) {
        // Four times the depth: about four times the steps, and so the bytes; quadratic
        // storage would hold sixteen times as much.
        let steps = l.1 as f64 / s.1 as f64;
        let bytes = l.0 as f64 / s.0 as f64;
        assert!(steps > 3.5 && steps < 4.5, "{side}: {s:?} → {l:?}");
        assert!(bytes < 1.25 * steps, "{side}: {s:?} → {l:?}");
        assert!(l.0 < 400 * l.1, "{side}: {l:?} bytes per step");
    }
    let m = recursion_case(&dir, 150);
    let r = check(
        &m,
        &CheckOptions {
            policy: Some("token-stack".into()),
            ..options(1)
        },
    )
    .unwrap();
    assert!(r.agrees(), "{}", report_text(&r));
    assert!(
        r.lines
            .iter()
            .any(|l| l.starts_with("token stack:") && l.contains("equal to the formal model's")),
        "{}",
        report_text(&r)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 11 item 3 (lint): the warp-specialised Hopper kernels were flagged (the warpgroup
/// role `%tid.x >> 7` counted as thread-varying). `gpusim lint` accepts them (exit 0), noting
/// the block-shape assumption, and still flags a role by `%tid.x >> 6` (warp- but not
/// warpgroup-uniform) at its `setmaxnreg`.
#[test]
fn lint_accepts_warp_specialised_kernels_and_flags_finer_roles() {
    let ptx = root().join("traces/gemm/hopper_ws_bf16/hopper_ws_bf16.ptx");
    let (code, stdout, stderr) = gpusim(&["lint", ptx.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout
            .lines()
            .all(|l| l.starts_with("note: ") && l.contains("%tid.x / ")),
        "{stdout}"
    );
    assert!(stdout.contains("%tid.x / 128"), "{stdout}");
    let src = std::fs::read_to_string(&ptx).unwrap();
    let finer = src.replacen("shr.u32 \t%r14, %r0, 7;", "shr.u32 \t%r14, %r0, 6;", 1);
    assert_ne!(finer, src, "the role computation is in the kernel");
    let dir = temp_dir("lint-finer-role");
    let f = dir.join("finer.ptx");
    std::fs::write(&f, finer).unwrap();
    let (code, stdout, _) = gpusim(&["lint", f.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("setmaxnreg at") && stdout.contains("%tid.x / 64"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The manifest's expectations bind the machine it describes: run 0 under its own policy
/// (what `gpusim run` with the same options does). Kernels that observe their execution order
/// (`t2_if_else` records which side of a branch ran first) change their output under the
/// check's randomised divergence order, and under another `--policy` the manifest's values
/// may legitimately differ (the ITS collective traces): those failures are reported, not
/// counted, while the semantics still judge every run.
#[test]
fn manifest_expectations_bind_the_configured_run() {
    let t2 = root().join("traces/semantics/t2_if_else/t2_if_else.yaml");
    let r = check(&t2, &options(4)).unwrap();
    assert!(r.agrees(), "{}", report_text(&r));
    assert!(
        r.lines
            .iter()
            .any(|l| l.contains("the manifest's checks fail") && l.contains("not counted")),
        "a randomised run takes the other side first: {}",
        report_text(&r)
    );
    let its = root().join("traces/policies/its_collectives/its_collectives.yaml");
    let r = check(
        &its,
        &CheckOptions {
            policy: Some("token-stack".into()),
            ..options(1)
        },
    )
    .unwrap();
    assert_eq!(r.disagreement, None, "{}", report_text(&r));
    // Under its own policy the same manifest is held to its values.
    let r = check(&its, &options(2)).unwrap();
    assert!(r.agrees(), "{}", report_text(&r));
    assert!(
        r.lines
            .iter()
            .any(|l| l.contains("manifest checks: met in all 2 run(s)")),
        "{}",
        report_text(&r)
    );
}

/// Item 1 sibling: the semantic models wrote a `.s8`/`.s16` `cvt` result into a wider register
/// without sign extension, so `gpusim check` disagreed with the simulator on `cvt_more` and on
/// the float → integer trace (0x00000080 vs 0xffffff80).
#[test]
fn narrow_signed_cvt_results_agree_between_simulator_and_models() {
    for t in ["cvt_f2i", "cvt_f2i_bf16", "cvt_more"] {
        let manifest = crate::common::root().join(format!("traces/isa/{t}/{t}.yaml"));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpusim"))
            .args(["check", manifest.to_str().unwrap(), "--runs", "1"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{t}:\n{stdout}");
        assert!(
            stdout.contains("verdict             agree"),
            "{t}:\n{stdout}"
        );
    }
}
