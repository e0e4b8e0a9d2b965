//! The `gpusim` binary's contract: exit codes (0 ok, 1 a check failed, 2 bad input, 3 kernel
//! fault), the summary and error texts, `--dump`, `--stats-json`, `gpusim ptx`, and that runs
//! are deterministic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("repository root")
}

fn trace(rel: &str) -> PathBuf {
    root().join(rel)
}

/// A fresh, uniquely named scratch directory under the system temp dir.
fn scratch(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("gpusim-cli-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn gpusim<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Run {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run gpusim");
    Run {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl Run {
    fn expect(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }
    /// The number after `label` on the summary line that starts with it.
    fn summary(&self, label: &str) -> f64 {
        let line = self
            .stdout
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(label) && l[label.len()..].starts_with(' '))
            .unwrap_or_else(|| panic!("no `{label}` line in\n{}", self.stdout));
        let v = line[label.len()..].split_whitespace().next().unwrap();
        v.trim_end_matches('%')
            .parse()
            .unwrap_or_else(|_| panic!("`{line}`: not a number"))
    }
}

/// A vecadd manifest of `n` elements with `a = 1.5`, `b = 2.25`, whose check expects `expect`.
fn vecadd_manifest(dir: &Path, n: usize, expect: &[f32]) -> PathBuf {
    let ptx = trace("traces/kernels/vecadd/vecadd.ptx");
    let values: Vec<String> = expect.iter().map(|v| format!("{v:?}")).collect();
    let text = format!(
        "# cli test: vecadd with an inline check\nkernel: {}\nlaunches:\n  - entry: vecadd\n    grid: [1]\n    block: [32]\n    args: [a, b, c, {n}]\nbuffers:\n  a: {{ dtype: f32, shape: [{n}], init: {{ fill: 1.5 }} }}\n  b: {{ dtype: f32, shape: [{n}], init: {{ fill: 2.25 }} }}\n  c: {{ dtype: f32, shape: [{n}], init: zeros }}\nchecks:\n  - buffer: c\n    values: [{}]\n",
        ptx.display(),
        values.join(", ")
    );
    let p = dir.join("vecadd_check.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn vecadd_prints_the_summary_and_exits_0() {
    let r = gpusim(&["run", "traces/kernels/vecadd/vecadd.yaml"]).expect(0);
    assert!(
        r.stdout
            .starts_with("gpusim: traces/kernels/vecadd/vecadd.yaml"),
        "{}",
        r.stdout
    );
    let cycles = r.summary("cycles");
    let warp_insts = r.summary("warp instructions");
    let thread_insts = r.summary("thread instructions");
    let ipc = r.summary("IPC");
    assert!(
        cycles >= 400.0,
        "a global load alone takes 400 cycles: {cycles}"
    );
    // 4 CTAs of 8 warps, at least the ~20 instructions of the kernel each (the last CTA's
    // upper 24 threads skip most of them).
    assert!(warp_insts >= 32.0 * 12.0, "{warp_insts}");
    assert!(thread_insts > warp_insts && thread_insts <= 32.0 * warp_insts);
    assert!(
        (ipc - warp_insts / cycles).abs() < 0.001,
        "IPC {ipc} vs {warp_insts}/{cycles}"
    );
    assert!(
        r.stdout.contains("simulation speed") && r.stdout.contains("warp instructions/s"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("kernel vecadd"), "{}", r.stdout);
    let last = r.stdout.lines().last().unwrap();
    assert!(
        last.trim().starts_with("checks") && last.trim().ends_with("passed"),
        "{last}"
    );
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn failed_check_exits_1() {
    let dir = scratch("check");
    // The same manifest with the right values passes: only the check decides the exit code.
    let good = vecadd_manifest(&dir, 8, &[3.75; 8]);
    gpusim(&[Path::new("run"), &good]).expect(0);
    let mut wrong = [3.75f32; 8];
    wrong[6] = 4.0;
    let bad = vecadd_manifest(&dir, 8, &wrong);
    let r = gpusim(&[Path::new("run"), &bad]).expect(1);
    assert!(
        r.stdout.contains("CHECK FAILED: c (1 mismatches)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("[6] got 3.75, expected 4"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("passed"), "{}", r.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_scheduler_choice_exits_2_with_the_choices() {
    let r = gpusim(&[
        "run",
        "traces/kernels/vecadd/vecadd.yaml",
        "--set",
        "sm.scheduler=fifo",
    ])
    .expect(2);
    for s in ["sm.scheduler", "fifo", "lrr", "gto"] {
        assert!(r.stderr.contains(s), "`{s}` missing: {}", r.stderr);
    }
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

/// `sm.fence`: each scope's cycles are bounded, a wrong key names the three valid ones.
#[test]
fn bad_fence_costs_exit_2_with_the_key() {
    for (set, want) in [
        ("sm.fence.gpu=4000000000", "sm.fence.gpu"),
        ("sm.fence.cta=abc", "expected u32"),
        ("sm.fence.bogus=3", "`cta`, `gpu`, `sys`"),
    ] {
        let r = gpusim(&[
            "run",
            "traces/microbench/fence_cost.yaml",
            "--config",
            "configs/hopper-h100.yaml",
            "--set",
            set,
        ])
        .expect(2);
        assert!(r.stderr.contains(want), "{set}: {}", r.stderr);
    }
}

#[test]
fn unknown_config_key_exits_2_with_the_valid_keys() {
    let r = gpusim(&[
        "run",
        "traces/kernels/vecadd/vecadd.yaml",
        "--set",
        "sm.wrap_size=4",
    ])
    .expect(2);
    for s in ["wrap_size", "warp_size", "max_warps", "scheduler"] {
        assert!(r.stderr.contains(s), "`{s}` missing: {}", r.stderr);
    }
    // A missing section is named too.
    let r = gpusim(&[
        "run",
        "traces/kernels/vecadd/vecadd.yaml",
        "--set",
        "sim.warp_size=4",
    ])
    .expect(2);
    assert!(
        r.stderr.contains("sim") && r.stderr.contains("latency"),
        "{}",
        r.stderr
    );
}

#[test]
fn unknown_manifest_key_exits_2() {
    let dir = scratch("manifest-key");
    let good = vecadd_manifest(&dir, 8, &[3.75; 8]);
    let text = std::fs::read_to_string(&good).unwrap();
    let bad = dir.join("colour.yaml");
    std::fs::write(&bad, text.replace("launches:", "colour: blue\nlaunches:")).unwrap();
    let r = gpusim(&[Path::new("run"), &bad]).expect(2);
    for s in [
        bad.display().to_string().as_str(),
        "colour",
        "launches",
        "expect_fault",
    ] {
        assert!(r.stderr.contains(s), "`{s}` missing: {}", r.stderr);
    }
    // ... also inside a launch, with the key path.
    let bad = dir.join("blcok.yaml");
    std::fs::write(&bad, text.replace("block:", "blcok:")).unwrap();
    let r = gpusim(&[Path::new("run"), &bad]).expect(2);
    assert!(
        r.stderr.contains("launches[0]") && r.stderr.contains("blcok"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ptx_syntax_error_exits_2_with_file_line_col() {
    let dir = scratch("ptx-error");
    let src = std::fs::read_to_string(trace("traces/kernels/vecadd/vecadd.ptx")).unwrap();
    let good = "add.f32 \t%f3, %f2, %f1;";
    assert!(src.contains(good), "vecadd.ptx changed");
    let src = src.replace(good, "add.f32 \t%f3, %f2, ;");
    let (ln, line) = src
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("%f2, ;"))
        .unwrap();
    let col = line.find(';').unwrap() + 1;
    let ptx = dir.join("vecadd.ptx");
    std::fs::write(&ptx, &src).unwrap();
    let at = format!("{}:{}:{col}:", ptx.display(), ln + 1);

    let r = gpusim(&[Path::new("ptx"), &ptx]).expect(2);
    assert!(r.stderr.contains(&at), "expected `{at}` in {}", r.stderr);

    let manifest = trace("traces/kernels/vecadd/vecadd.yaml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    for f in ["a.npy", "b.npy", "expected_c.npy"] {
        std::fs::copy(trace("traces/kernels/vecadd").join(f), dir.join(f)).unwrap();
    }
    let m = dir.join("vecadd.yaml");
    std::fs::write(&m, text).unwrap();
    let r = gpusim(&[Path::new("run"), &m]).expect(2);
    assert!(r.stderr.contains(&at), "expected `{at}` in {}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kernel_fault_exits_3_with_the_report() {
    let name = "oob_global_load_past_end";
    let orig = trace(&format!("traces/faults/{name}/{name}.yaml"));
    // As committed, the fault is expected: exit 0, and the fault is shown.
    let r = gpusim(&[Path::new("run"), &orig]).expect(0);
    assert!(
        r.stdout.contains("expected fault") && r.stdout.contains("out-of-bounds"),
        "{}",
        r.stdout
    );

    let dir = scratch("fault");
    let ptx = trace(&format!("traces/faults/{name}/{name}.ptx"));
    let text = std::fs::read_to_string(&orig).unwrap();
    assert!(text.contains("expect_fault: out-of-bounds"));
    let text = text.replace("expect_fault: out-of-bounds", "").replace(
        &format!("kernel: {name}.ptx"),
        &format!("kernel: {}", ptx.display()),
    );
    let m = dir.join("unexpected.yaml");
    std::fs::write(&m, text).unwrap();
    let r = gpusim(&[Path::new("run"), &m]).expect(3);
    for s in [
        "kernel fault (out-of-bounds)",
        "4-byte global load",
        "address 0x100000190",
        "CTA (0, 0, 0)",
        "thread (100, 0, 0)",
        &format!("{}:30", ptx.display()),
    ] {
        assert!(r.stderr.contains(s), "`{s}` missing: {}", r.stderr);
    }
    assert!(!r.stdout.contains("passed"), "{}", r.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dump_writes_npy_files_that_read_back() {
    let dir = scratch("dump");
    gpusim(&[
        Path::new("run"),
        Path::new("traces/kernels/vecadd/vecadd.yaml"),
        Path::new("--dump"),
        &dir,
    ])
    .expect(0);
    let npy = gpusim::launch::npy::read;
    let src = trace("traces/kernels/vecadd");
    for (dumped, expected) in [("a", "a"), ("b", "b"), ("c", "expected_c")] {
        let got = npy(&dir.join(format!("{dumped}.npy"))).unwrap();
        let want = npy(&src.join(format!("{expected}.npy"))).unwrap();
        assert_eq!(got.dtype, gpusim::launch::DType::F32, "{dumped}");
        assert_eq!(got.shape, vec![1000], "{dumped}");
        assert_eq!(got.shape, want.shape, "{dumped}");
        // f32 a + b is exact in both numpy and the simulator.
        assert!(
            got.data == want.data,
            "{dumped}.npy differs from {expected}.npy"
        );
    }
    let c = npy(&dir.join("c.npy")).unwrap();
    assert!(c.data.iter().any(|&b| b != 0), "c was computed");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.npy", "b.npy", "c.npy"]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn stats_json(run_args: &[&str], json: &Path) -> (Run, serde_json::Value) {
    let mut args: Vec<&std::ffi::OsStr> = run_args.iter().map(std::ffi::OsStr::new).collect();
    args.push("--stats-json".as_ref());
    args.push(json.as_os_str());
    let r = gpusim(&args).expect(0);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (r, v)
}

#[test]
fn stats_json_has_the_documented_keys() {
    let dir = scratch("stats");
    let json = dir.join("stats.json");
    let (r, v) = stats_json(&["run", "traces/kernels/vecadd/vecadd.yaml"], &json);
    let obj = v.as_object().expect("a JSON object");
    for k in [
        "cycles",
        "warp_instructions",
        "thread_instructions",
        "ipc",
        "stalls",
        "simd_efficiency",
        "wall_seconds",
        "warp_instructions_per_second",
        "kernels",
    ] {
        assert!(obj.contains_key(k), "missing `{k}`: {v}");
    }
    assert_eq!(v["cycles"].as_u64().unwrap() as f64, r.summary("cycles"));
    assert_eq!(
        v["warp_instructions"].as_u64().unwrap() as f64,
        r.summary("warp instructions")
    );
    assert!((v["ipc"].as_f64().unwrap() - r.summary("IPC")).abs() < 0.0005);
    let eff = v["simd_efficiency"].as_f64().unwrap();
    assert!(eff > 0.0 && eff <= 1.0, "{eff}");
    assert!(
        v["stalls"].is_object() && v["stalls"]["issued"].as_u64().is_some(),
        "{v}"
    );
    assert!(v["wall_seconds"].as_f64().unwrap() >= 0.0);
    assert!(v["warp_instructions_per_second"].as_f64().unwrap() > 0.0);
    let kernels = v["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 1);
    assert_eq!(kernels[0]["kernel"], "vecadd");
    assert_eq!(kernels[0]["cycles"], v["cycles"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ptx_lists_the_entries() {
    let r = gpusim(&["ptx", "traces/kernels/switch_case/switch_case.ptx"]).expect(0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    assert!(
        lines[0].starts_with("entry switch_dense: 3 params"),
        "{}",
        r.stdout
    );
    assert!(
        lines[1].starts_with("entry switch_sparse: 3 params"),
        "{}",
        r.stdout
    );
    let r = gpusim(&["ptx", "traces/kernels/device_func/device_func.ptx"]).expect(0);
    assert!(
        r.stdout.lines().any(|l| l.starts_with("entry ")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.lines().any(|l| l.starts_with("func ")),
        "{}",
        r.stdout
    );
    gpusim(&["ptx", "traces/no/such/file.ptx"]).expect(2);
}

#[test]
fn ptx_tokens_inserts_ssy_and_sync() {
    let file = "traces/semantics/t2_if_else_notokens/t2_if_else_notokens.ptx";
    let src = std::fs::read_to_string(trace(file)).unwrap();
    let is_inst = |l: &str, op: &str| {
        let l = l.trim_start();
        let l = l.strip_prefix(op).unwrap_or("");
        !l.is_empty() && (l.starts_with(' ') || l.starts_with('\t') || l.starts_with(';'))
    };
    // The input has no tokens (comments aside) ...
    assert!(!src.lines().any(|l| is_inst(l, "ssy") || is_inst(l, "sync")));
    let r = gpusim(&["ptx", "--tokens", file]).expect(0);
    // ... the output has an `ssy` before the branch and the `sync` that reconverges it.
    let ssy = r.stdout.lines().position(|l| is_inst(l, "ssy"));
    let sync = r.stdout.lines().position(|l| is_inst(l, "sync"));
    assert!(ssy.is_some() && sync.is_some(), "{}", r.stdout);
    assert!(ssy < sync, "{}", r.stdout);
}

/// cycles, warp instructions, and every dumped buffer's bytes.
fn fingerprint(manifest: &str, extra: &[&str], tag: &str) -> (u64, u64, Vec<(String, Vec<u8>)>) {
    let dir = scratch(tag);
    let json = dir.join("stats.json");
    let dump = dir.join("dump");
    let mut args = vec!["run", manifest, "--dump", dump.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (_, v) = stats_json(&args, &json);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dump)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    let _ = std::fs::remove_dir_all(&dir);
    (
        v["cycles"].as_u64().unwrap(),
        v["warp_instructions"].as_u64().unwrap(),
        files,
    )
}

#[test]
fn runs_are_deterministic() {
    for m in [
        "traces/kernels/bfs_step/bfs_step.yaml",
        "traces/kernels/histogram/histogram.yaml",
        "traces/kernels/mandelbrot/mandelbrot.yaml",
    ] {
        let mut per_scheduler = Vec::new();
        for extra in [&[][..], &["--set", "sm.scheduler=gto"][..]] {
            let a = fingerprint(m, extra, "det-a");
            let b = fingerprint(m, extra, "det-b");
            assert!(a.0 > 0 && a.1 > 0 && !a.2.is_empty(), "{m} {extra:?}");
            assert_eq!(a.0, b.0, "{m} {extra:?}: cycles differ");
            assert_eq!(a.1, b.1, "{m} {extra:?}: warp instructions differ");
            assert_eq!(a.2.len(), b.2.len(), "{m} {extra:?}");
            for (x, y) in a.2.iter().zip(&b.2) {
                assert_eq!(x.0, y.0);
                assert!(x.1 == y.1, "{m} {extra:?}: {} differs between runs", x.0);
            }
            per_scheduler.push(a);
        }
        // Both schedulers compute the same results (the checks passed: exit 0), and the
        // override really reached the machine: the schedule, hence the cycle count, differs.
        assert_ne!(
            (per_scheduler[0].0, per_scheduler[0].1),
            (per_scheduler[1].0, per_scheduler[1].1),
            "{m}: lrr and gto ran identically"
        );
    }
}

/// `gpusim plot` draws the stall, SIMD and hottest-lines charts from `--stats-json` output and
/// per-SM occupancy from `--timeline` output.
#[test]
fn plot_draws_charts_from_stats_json() {
    let dir = std::env::temp_dir().join(format!("gpusim-cli-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stats = dir.join("stats.json");
    let manifest =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/kernels/mandelbrot/mandelbrot.yaml");
    let run = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .arg("run")
        .arg(&manifest)
        .arg("--stats-json")
        .arg(&stats)
        .output()
        .unwrap();
    assert!(run.status.success());
    for (chart, file) in [("stalls", "s.svg"), ("simd", "h.png")] {
        let out = dir.join(file);
        let p = Command::new(env!("CARGO_BIN_EXE_gpusim"))
            .args(["plot", chart])
            .arg(&stats)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
        assert!(
            std::fs::metadata(&out).unwrap().len() > 1000,
            "{file} is too small to be a chart"
        );
    }
    // The source view's hottest lines (the stats file), and per-SM occupancy over time (a
    // timeline file).
    let timeline = dir.join("t.json");
    let run = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .arg("run")
        .arg(&manifest)
        .arg("--timeline")
        .arg(&timeline)
        .output()
        .unwrap();
    assert!(run.status.success());
    for (chart, input, file) in [("lines", &stats, "l.svg"), ("timeline", &timeline, "o.png")] {
        let out = dir.join(file);
        let p = Command::new(env!("CARGO_BIN_EXE_gpusim"))
            .args(["plot", chart])
            .arg(input)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
        assert!(std::fs::metadata(&out).unwrap().len() > 1000, "{file}");
    }
    let wrong = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(["plot", "timeline"])
        .arg(&stats)
        .arg("-o")
        .arg(dir.join("w.png"))
        .output()
        .unwrap();
    assert_eq!(
        wrong.status.code(),
        Some(2),
        "a stats file is not a timeline"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(["plot", "stalls"])
        .arg(&manifest)
        .arg("-o")
        .arg(dir.join("x.svg"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "a non-JSON input is bad input");
    let _ = std::fs::remove_dir_all(dir);
}

/// A thread count of 0, from `--threads` or `GPUSIM_THREADS`, is bad input (exit 2) naming
/// where it came from; a valid one from the environment is used.
#[test]
fn bad_thread_counts_are_input_errors() {
    let r = gpusim(&["fuzz", "--cases", "1", "--threads", "0"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--threads"), "{}", r.stderr);
    let env = |v: &str| {
        Command::new(env!("CARGO_BIN_EXE_gpusim"))
            .args(["fuzz", "--cases", "1"])
            .env("GPUSIM_THREADS", v)
            .current_dir(root())
            .output()
            .expect("run gpusim")
    };
    let bad = env("lots");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("GPUSIM_THREADS=lots"));
    assert_eq!(env("2").status.code(), Some(0));
    // More threads than SMs: the extra ones are never started.
    let many = gpusim(&[
        "run",
        "traces/kernels/vecadd/vecadd.yaml",
        "--threads",
        "100000",
    ]);
    assert_eq!(many.code, 0, "{}", many.stderr);
}

#[test]
fn sampling_options_are_checked_and_reported() {
    for bad in [
        ["--sample-waves", "0"],
        ["--sample-tolerance", "0"],
        ["--sample-tolerance", "lots"],
    ] {
        let r = gpusim(&["run", "traces/kernels/vecadd/vecadd.yaml", bad[0], bad[1]]);
        assert_eq!(r.code, 2, "{bad:?}: {}", r.stderr);
        assert!(r.stderr.contains(bad[0]), "{}", r.stderr);
    }
    // A launch too short to sample runs in full, says why, and is checked.
    let r = gpusim(&["run", "traces/kernels/vecadd/vecadd.yaml", "--sample"]).expect(0);
    assert!(r.stdout.contains("not sampled: "), "{}", r.stdout);
    assert!(
        r.stdout.contains("checks              passed"),
        "{}",
        r.stdout
    );
    // A sampled GEMM size: the CSV says so, with what was simulated and the error bound.
    let dir = scratch("sample");
    let csv = dir.join("g.csv");
    gpusim(&[
        "gemm",
        "traces/gemm/hgemm_mma_multistage/gemm.yaml",
        "--sizes",
        "2048x512x64",
        "--skip-tensor-math",
        "--verify-up-to",
        "0",
        "--sample",
        "--csv",
        csv.to_str().unwrap(),
    ])
    .expect(0);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(col("sampled"), "true");
    let simulated: u64 = col("simulated_ctas").parse().unwrap();
    assert!(simulated < 64 / 2, "{text}");
    let bound: f64 = col("sample_error").parse().unwrap();
    assert!(bound > 0.0 && bound < 0.05, "{text}");
}

/// `gpusim annotate` prints the PTX with the source view of `run --stats-json` beside it:
/// the whole file, or the hottest lines with `--top`; a file without a source view or an
/// unknown kernel is bad input (exit 2).
#[test]
fn annotate_prints_the_ptx_with_per_line_counters() {
    let dir = scratch("annotate");
    let stats = dir.join("stats.json");
    let m = trace("traces/kernels/sgemm_tiled/sgemm_tiled.yaml");
    let r = gpusim(&[
        "run".as_ref(),
        m.as_os_str(),
        "--config".as_ref(),
        root().join("configs/volta-v100.yaml").as_os_str(),
        "--stats-json".as_ref(),
        stats.as_os_str(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let full = gpusim(&["annotate".as_ref(), stats.as_os_str()]);
    assert_eq!(full.code, 0, "{}", full.stderr);
    let ptx =
        std::fs::read_to_string(root().join("traces/kernels/sgemm_tiled/sgemm_tiled.ptx")).unwrap();
    // Header lines, then every line of the file.
    assert_eq!(full.stdout.lines().count(), ptx.lines().count() + 2);
    assert!(
        full.stdout.starts_with("kernel sgemm_tiled"),
        "{}",
        full.stdout
    );
    let fma = full
        .stdout
        .lines()
        .find(|l| l.contains("fma.rn.f32"))
        .expect("an fma line");
    assert!(fma.contains("32.0"), "full lanes: {fma}");
    let top = gpusim(&[
        "annotate".as_ref(),
        stats.as_os_str(),
        "--top".as_ref(),
        "3".as_ref(),
    ]);
    assert_eq!(top.code, 0, "{}", top.stderr);
    let rows: Vec<&str> = top.stdout.lines().skip(2).collect();
    assert_eq!(rows.len(), 3, "{}", top.stdout);
    let share = |l: &str| -> f64 { l.split('%').next().unwrap().trim().parse().unwrap() };
    assert!(share(rows[0]) >= share(rows[1]) && share(rows[1]) >= share(rows[2]));
    let bad = gpusim(&[
        "annotate".as_ref(),
        stats.as_os_str(),
        "--kernel".as_ref(),
        "nope".as_ref(),
    ]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("kernels: sgemm_tiled"),
        "{}",
        bad.stderr
    );
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "{\"kernels\": [{\"kernel\": \"k\"}]}").unwrap();
    let none = gpusim(&["annotate".as_ref(), empty.as_os_str()]);
    assert_eq!(none.code, 2);
    assert!(
        none.stderr.contains("no kernel has a source view"),
        "{}",
        none.stderr
    );
}

/// The timeline's slices of one track, per (pid, tid): (start cycle, end cycle, name).
type Tracks = std::collections::BTreeMap<(u64, u64), Vec<(u64, u64, String)>>;

fn timeline_tracks(doc: &serde_json::Value) -> Tracks {
    let mut tracks = Tracks::new();
    for e in doc["traceEvents"].as_array().expect("traceEvents") {
        if e["ph"] == "X" {
            let (s, n) = (
                e["args"]["start_cycle"].as_u64().unwrap(),
                e["args"]["cycles"].as_u64().unwrap(),
            );
            assert!(n > 0, "empty slice {e}");
            let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            tracks.entry(key).or_default().push((
                s,
                s + n,
                e["name"].as_str().unwrap().to_string(),
            ));
        }
    }
    for l in tracks.values_mut() {
        l.sort();
    }
    tracks
}

/// `run --timeline` writes a Chrome trace-event file: named processes (GPU, SMs) and threads
/// (CTA slots, warp slots by sub-partition); per warp slot non-overlapping state slices whose
/// cycles sum to the stall breakdown of `--stats-json`; one slice per CTA; barrier instants;
/// counter tracks; `--timeline-window` and `--timeline-sms` bound it.
#[test]
fn timeline_is_a_chrome_trace_that_accounts_for_every_warp_cycle() {
    let dir = scratch("timeline");
    let (tl, stats) = (dir.join("t.json"), dir.join("s.json"));
    for (rel, cfg, ctas) in [
        ("traces/semantics/t12_bar_sync/t12_bar_sync.yaml", "tiny", 1),
        (
            "traces/kernels/sgemm_tiled/sgemm_tiled.yaml",
            "volta-v100",
            12,
        ),
    ] {
        let r = gpusim(&[
            "run".as_ref(),
            trace(rel).as_os_str(),
            "--config".as_ref(),
            root().join(format!("configs/{cfg}.yaml")).as_os_str(),
            "--timeline".as_ref(),
            tl.as_os_str(),
            "--stats-json".as_ref(),
            stats.as_os_str(),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&tl).unwrap()).expect("valid JSON");
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        let names: Vec<&str> = events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names[0], "GPU");
        assert!(names.contains(&"SM 0"), "{names:?}");
        let tracks = timeline_tracks(&doc);
        let mut by_state = std::collections::BTreeMap::<String, u64>::new();
        let mut cta_slices = 0;
        for ((pid, tid), slices) in &tracks {
            // Perfetto nests slices of one track: none may overlap partially (here: at all).
            for w in slices.windows(2) {
                assert!(w[1].0 >= w[0].1, "{rel}: overlap on ({pid},{tid}): {w:?}");
            }
            if *pid == 0 {
                continue;
            }
            if *tid >= 10_000 {
                cta_slices += slices.len();
            } else {
                for (a, b, n) in slices {
                    *by_state.entry(n.clone()).or_default() += b - a;
                }
            }
        }
        assert_eq!(cta_slices, ctas, "{rel}");
        let mut want = std::collections::BTreeMap::<String, u64>::new();
        for (k, v) in s["kernels"][0]["stalls"].as_object().unwrap() {
            if v.as_u64().unwrap() > 0 {
                want.insert(k.clone(), v.as_u64().unwrap());
            }
        }
        assert_eq!(by_state, want, "{rel}: slices vs the stall breakdown");
        assert!(events.iter().any(|e| e["ph"] == "C" && e["name"] == "IPC"));
        let cycles = s["cycles"].as_u64().unwrap();
        let kernel = s["kernels"][0]["kernel"].as_str().unwrap().to_string();
        assert_eq!(
            tracks[&(0, 0)],
            vec![(0, cycles, kernel)],
            "the launch slice"
        );
    }
    // Bounded: SM 1 only, cycles 100..300.
    let r = gpusim(&[
        "run".as_ref(),
        trace("traces/kernels/sgemm_tiled/sgemm_tiled.yaml").as_os_str(),
        "--config".as_ref(),
        root().join("configs/volta-v100.yaml").as_os_str(),
        "--timeline".as_ref(),
        tl.as_os_str(),
        "--timeline-window".as_ref(),
        "100:300".as_ref(),
        "--timeline-sms".as_ref(),
        "1".as_ref(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tl).unwrap()).unwrap();
    let tracks = timeline_tracks(&doc);
    assert!(
        tracks.keys().all(|(pid, _)| *pid == 0 || *pid == 2),
        "{:?}",
        tracks.keys()
    );
    assert!(tracks.keys().any(|(pid, _)| *pid == 2));
    for ((pid, _), slices) in &tracks {
        if *pid == 2 {
            assert!(slices.iter().all(|(a, b, _)| *a >= 100 && *b <= 300));
        }
    }
    // A config with a power model: the power counter once a control interval has closed.
    let r = gpusim(&[
        "run".as_ref(),
        trace("traces/kernels/sgemm_tiled/sgemm_tiled.yaml").as_os_str(),
        "--config".as_ref(),
        root().join("configs/hopper-h100.yaml").as_os_str(),
        "--set".as_ref(),
        "clock.control_interval_us=1".as_ref(),
        "--timeline".as_ref(),
        tl.as_os_str(),
        "--timeline-interval".as_ref(),
        "500".as_ref(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tl).unwrap()).unwrap();
    let watts: Vec<f64> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "power W")
        .map(|e| e["args"]["value"].as_f64().unwrap())
        .collect();
    assert!(
        !watts.is_empty() && watts.iter().all(|w| *w > 0.0),
        "{watts:?}"
    );
    // Memory requests: a begin and an end per request, ids unique, ends after begins.
    let r = gpusim(&[
        "run".as_ref(),
        trace("traces/kernels/sgemm_tiled/sgemm_tiled.yaml").as_os_str(),
        "--config".as_ref(),
        root().join("configs/volta-v100.yaml").as_os_str(),
        "--timeline".as_ref(),
        tl.as_os_str(),
        "--timeline-memory".as_ref(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tl).unwrap()).unwrap();
    let mut open = std::collections::BTreeMap::<String, f64>::new();
    let mut requests = 0;
    for e in doc["traceEvents"].as_array().unwrap() {
        let id = e["id"].as_str().unwrap_or_default().to_string();
        match e["ph"].as_str() {
            Some("b") => {
                assert!(open.insert(id, e["ts"].as_f64().unwrap()).is_none(), "{e}");
                assert!(
                    e["name"].as_str().unwrap().contains("ld.global")
                        || e["name"].as_str().unwrap().contains("st.global")
                );
                requests += 1;
            }
            Some("e") => {
                let start = open.remove(&id).expect("an end after its begin");
                assert!(e["ts"].as_f64().unwrap() > start, "{e}");
            }
            _ => {}
        }
    }
    assert!(
        requests > 0 && open.is_empty(),
        "{requests} requests, {} open",
        open.len()
    );
    let bad = gpusim(&[
        "run".as_ref(),
        trace("traces/kernels/sgemm_tiled/sgemm_tiled.yaml").as_os_str(),
        "--timeline".as_ref(),
        tl.as_os_str(),
        "--timeline-window".as_ref(),
        "300:100".as_ref(),
    ]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("END must be after START"),
        "{}",
        bad.stderr
    );
}

/// The first Chromium-compatible browser on the PATH.
fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(str::to_string)
}

/// The DOM of `page` after its scripts ran, in headless Chromium.
fn dump_dom(browser: &str, page: &Path, hash: &str) -> String {
    let url = format!("file://{}{hash}", page.display());
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=3000",
            "--dump-dom",
            &url,
        ])
        .output()
        .expect("run the browser");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The inner HTML of the first element with `id` (a crude reader of a dumped DOM).
fn by_id<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let open = at + dom[at..].find('>').unwrap() + 1;
    let close = open + dom[open..].find("</").unwrap_or(0);
    let end = if id == "stack" || id == "alpha" || id == "exec" {
        open + dom[open..]
            .find("</ol>")
            .or_else(|| dom[open..].find("</div></div>"))
            .unwrap()
    } else {
        close
    };
    &dom[open..end]
}

/// `gpusim report` writes one self-contained page (nothing fetched from the network) that a
/// real browser renders: the charts and the source view are there, and stepping through the
/// T2 if/else warp changes the displayed active mask and token stack. Runs in headless
/// Chromium (tools/report/install_chromium.sh installs it; `.ci/run` does, and sets
/// GPUSIM_REQUIRE_BROWSER so that a missing browser fails the test there).
#[test]
fn report_renders_and_steps_in_headless_chromium() {
    let dir = scratch("report");
    let page = dir.join("report.html");
    let m = trace("traces/semantics/t2_if_else/t2_if_else.yaml");
    let r = gpusim(&[
        "report".as_ref(),
        m.as_os_str(),
        "-o".as_ref(),
        page.as_os_str(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    for section in [
        "summary",
        "charts",
        "source-view",
        "timeline",
        "memory",
        "step-through",
    ] {
        assert!(
            html.contains(&format!("<section id=\"{section}\"")),
            "no {section}"
        );
    }
    // Self-contained: no scripts, styles or images from elsewhere.
    for attr in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(!html.contains(attr), "fetches from the network: {attr}");
    }
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("GPUSIM_REQUIRE_BROWSER").is_none(),
            "no Chromium: run tools/report/install_chromium.sh"
        );
        eprintln!(
            "report_renders_and_steps_in_headless_chromium: no Chromium, browser part skipped"
        );
        return;
    };
    let first = dump_dom(&browser, &page, "#warp=0&step=0");
    assert!(
        first.matches("<svg").count() >= 3,
        "charts and the warp timeline"
    );
    assert!(
        first.contains("data-line=\"85\""),
        "the source view lists the PTX"
    );
    // T2: after `@%p1 bra DIVERGE` (step 37) lane 0 runs alone and the stack holds the
    // diverge and sync tokens; at the start both lanes run with an empty stack.
    assert!(
        by_id(&first, "step-info").starts_with("step 1 / 70"),
        "{}",
        by_id(&first, "step-info")
    );
    let (alpha0, stack0) = (by_id(&first, "alpha"), by_id(&first, "stack"));
    assert!(stack0.contains("ε (empty)"), "{stack0}");
    assert_eq!(alpha0.matches("lane on").count(), 2, "{alpha0}");
    let later = dump_dom(&browser, &page, "#warp=0&step=36");
    assert!(by_id(&later, "step-info").starts_with("step 37 / 70"));
    assert!(
        by_id(&later, "step-line").contains("bra DIVERGE"),
        "{}",
        by_id(&later, "step-line")
    );
    let (alpha1, stack1) = (by_id(&later, "alpha"), by_id(&later, "stack"));
    assert_eq!(alpha1.matches("lane on").count(), 1, "{alpha1}");
    assert_eq!(stack1.matches("<li>").count(), 2, "{stack1}");
    assert!(
        stack1.contains("(diverge,01,37)") && stack1.contains("(sync,11,57)"),
        "{stack1}"
    );
}

/// `gpusim ptx`: `--tokens` keeps the source's compact `%r<N>` declarations; `--cfg=source`
/// shows the graph as written (no token blocks), `--cfg` as tokenised; `--dot` is a Graphviz
/// digraph whose edges join declared blocks, with the token pushes as dashed edges.
#[test]
fn ptx_prints_compact_registers_source_cfgs_and_dot() {
    let r = gpusim(&[
        "ptx",
        "--tokens",
        "traces/kernels/sgemm_tiled/sgemm_tiled.ptx",
    ])
    .expect(0);
    for decl in [
        ".reg .pred %p<12>;",
        ".reg .f32 %f<63>;",
        ".reg .b32 %r<30>;",
        ".reg .b64 %rd<25>;",
    ] {
        assert!(r.stdout.contains(decl), "{decl}: {}", r.stdout);
    }
    assert_eq!(r.stdout.matches(".reg ").count(), 4, "{}", r.stdout);
    // The listing, body-declared `.shared` arrays included, parses again on its own.
    assert!(
        r.stdout
            .contains(".shared .align 4 .b8 _ZZ11sgemm_tiledE2As[1024];"),
        "{}",
        r.stdout
    );
    let dir = scratch("reprint");
    let again = dir.join("again.ptx");
    let header = ".version 8.8\n.target sm_52\n.address_size 64\n.visible ";
    std::fs::write(&again, format!("{header}{}", r.stdout)).unwrap();
    let parsed = gpusim(&["ptx".as_ref(), again.as_os_str()]).expect(0);
    assert!(
        parsed.stdout.starts_with("entry sgemm_tiled:"),
        "{}",
        parsed.stdout
    );
    let file = "traces/semantics/t2_if_else_notokens/t2_if_else_notokens.ptx";
    let source = gpusim(&["ptx", "--cfg=source", file]).expect(0).stdout;
    let tokens = gpusim(&["ptx", "--cfg", file]).expect(0).stdout;
    assert!(source.starts_with("cfg t2_if_else_notokens"), "{source}");
    assert!(
        !source.contains("$__sync_pad") && tokens.contains("$__sync_pad"),
        "{source}\n{tokens}"
    );
    let dot = gpusim(&["ptx", "--dot", file]).expect(0).stdout;
    assert!(dot.starts_with("digraph \"t2_if_else_notokens\" {") && dot.trim_end().ends_with('}'));
    let declared: Vec<&str> = dot
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains(" [") && !l.contains("->"))
        .map(|l| l.trim().split(' ').next().unwrap())
        .collect();
    for edge in dot.lines().filter(|l| l.contains("->")) {
        let mut ends = edge.trim().split(" -> ");
        let from = ends.next().unwrap();
        let to = ends.next().unwrap().split([' ', ';']).next().unwrap();
        assert!(declared.contains(&from) && declared.contains(&to), "{edge}");
    }
    assert!(
        dot.contains("style=dashed") && dot.contains("label=\"ssy @"),
        "{dot}"
    );
    let plain_dot = gpusim(&["ptx", "--dot", "--cfg=source", file])
        .expect(0)
        .stdout;
    assert!(
        !plain_dot.contains("style=dashed"),
        "the source has no tokens: {plain_dot}"
    );
}
