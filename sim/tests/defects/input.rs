//! Issue 11 regressions: bad input (launch limits, argument and initialiser ranges, output
//! paths, error wording) is exit 2 with the key path before anything is simulated.

use crate::common::root;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What one `gpusim` command did.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn gpusim<S: AsRef<OsStr>>(args: &[S]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .expect("run gpusim");
    Run {
        code: out.status.code().expect("exited, not killed by a signal"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl Run {
    /// Exit 2 with every fragment in the error, nothing simulated (no summary), no panic.
    fn bad_input(&self, fragments: &[&str]) -> &Run {
        assert_eq!(
            self.code, 2,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        assert!(
            !self.stdout.contains("cycles"),
            "simulated before the error:\n{}",
            self.stdout
        );
        for f in fragments {
            assert!(self.stderr.contains(f), "`{f}` not in\n{}", self.stderr);
        }
        assert_plain_words(&self.stderr);
        self
    }
}

/// An error says things in the user's words: no Rust debug dumps (`UnitConfig { count: 0 }`,
/// `ImageError(IoError(Os { .. }))`, `Some(..)`), no panic.
fn assert_plain_words(text: &str) {
    for bad in [
        "Some(",
        "None)",
        "Os {",
        "IoError",
        "ImageError",
        "panicked",
    ] {
        assert!(!text.contains(bad), "`{bad}` in\n{text}");
    }
    // `Name { field: ...`: a struct's Debug form.
    let b = text.as_bytes();
    for (i, w) in text.match_indices(" { ") {
        let _ = w;
        let word_start = text[..i]
            .rfind(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .map_or(0, |k| k + 1);
        let word = &text[word_start..i];
        let capitalised = word.chars().next().is_some_and(|c| c.is_ascii_uppercase());
        let field = text[i + 3..].split_once(':').is_some_and(|(f, _)| {
            !f.is_empty() && f.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        });
        assert!(
            !(capitalised && field && b[i + 3].is_ascii_lowercase()),
            "a debug dump `{word} {{ ...` in\n{text}"
        );
    }
}

/// A fresh scratch directory.
fn scratch(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("gpusim-input-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn vecadd_ptx() -> String {
    root()
        .join("traces/kernels/vecadd/vecadd.ptx")
        .display()
        .to_string()
}

/// A vecadd manifest in `dir` with these launch keys and extra top-level text.
fn vecadd(dir: &Path, launch: &str, extra: &str) -> PathBuf {
    let p = dir.join("m.yaml");
    std::fs::write(
        &p,
        format!(
            "kernel: {}\nlaunches:\n  - {{ entry: vecadd, {launch} }}\nbuffers:\n  a: {{ dtype: f32, shape: [4] }}\n{extra}",
            vecadd_ptx()
        ),
    )
    .unwrap();
    p
}

/// A first launch that faults (out of bounds: 1000 elements of 4-element buffers), so that
/// exit 2 rather than 3 shows an error was found before anything ran.
const FAULTING_LAUNCH: &str =
    "  - { entry: vecadd, grid: [4], block: [256], args: [a, a, a, 1000] }\n";

fn manifest_with_faulting_first_launch(dir: &Path, second: &str, extra: &str) -> PathBuf {
    let p = dir.join("m.yaml");
    std::fs::write(
        &p,
        format!(
            "kernel: {}\nlaunches:\n{FAULTING_LAUNCH}  - {{ entry: vecadd, {second} }}\nbuffers:\n  a: {{ dtype: f32, shape: [4] }}\n{extra}",
            vecadd_ptx()
        ),
    )
    .unwrap();
    p
}

// --- item 13: launch limits --------------------------------------------------------------

/// Grid [4294967295, 1, 1] used to run for days; every dimension beyond CUDA's limits is now
/// bad input naming the launch, the key, the value and the limit.
#[test]
fn launch_dimensions_beyond_cuda_limits_are_bad_input() {
    let dir = scratch("dims");
    for (launch, key, value, limit) in [
        (
            "grid: [4294967295, 1, 1], block: [32]",
            "launches[0].grid",
            "4294967295",
            "2147483647",
        ),
        (
            "grid: [1, 65536, 1], block: [32]",
            "launches[0].grid",
            "65536",
            "65535",
        ),
        (
            "grid: [1, 1, 65536], block: [32]",
            "launches[0].grid",
            "65536",
            "65535",
        ),
        (
            "grid: [1], block: [1025]",
            "launches[0].block",
            "1025",
            "1024",
        ),
        (
            "grid: [1], block: [1, 1025]",
            "launches[0].block",
            "1025",
            "1024",
        ),
        (
            "grid: [1], block: [1, 1, 65]",
            "launches[0].block",
            "65",
            "64",
        ),
        (
            "grid: [1], block: [32, 32, 2]",
            "launches[0].block",
            "2048 threads",
            "1024",
        ),
    ] {
        let m = vecadd(&dir, &format!("{launch}, args: [a, a, a, 4]"), "");
        gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&[key, value, limit]);
    }
    // Zero dimensions were already refused; still so.
    let m = vecadd(&dir, "grid: [0], block: [32], args: [a, a, a, 4]", "");
    gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&["launches[0].grid"]);
    // A later launch is checked before the first (which would fault, exit 3) runs.
    let m = manifest_with_faulting_first_launch(
        &dir,
        "grid: [1], block: [2048], args: [a, a, a, 4]",
        "",
    );
    gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&["launches[1].block", "2048"]);
}

/// Clusters: at most 8 CTAs unless the launch allows a non-portable size (16), they must tile
/// the grid, and each of their CTAs needs its own SM.
#[test]
fn cluster_limits_are_bad_input() {
    let dir = scratch("cluster");
    let run = |launch: &str, sets: &[&str]| {
        let m = vecadd(&dir, &format!("{launch}, args: [a, a, a, 4]"), "");
        let mut args = vec!["run".to_string(), m.display().to_string()];
        for s in sets {
            args.extend(["--set".to_string(), s.to_string()]);
        }
        gpusim(&args)
    };
    run("grid: [16], block: [32], cluster: [16]", &["sm.count=16"]).bad_input(&[
        "launches[0].cluster",
        "16 CTAs",
        "non_portable_cluster",
    ]);
    let ok = run(
        "grid: [16], block: [32], cluster: [16], non_portable_cluster: true",
        &["sm.count=16"],
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    run(
        "grid: [32], block: [32], cluster: [32], non_portable_cluster: true",
        &["sm.count=32"],
    )
    .bad_input(&["launches[0].cluster", "32 CTAs", "16"]);
    run("grid: [6], block: [32], cluster: [4]", &[])
        .bad_input(&["launches[0].cluster", "whole number of clusters"]);
    run("grid: [4], block: [32], cluster: [4]", &[]).bad_input(&[
        "launches[0].cluster",
        "4 SMs",
        "2",
    ]);
}

/// A block or shared memory beyond one SM's capacity used to be a kernel fault (exit 3); it is
/// a launch error (exit 2) naming the key, the value, the limit and the config key.
#[test]
fn blocks_beyond_the_sm_are_launch_errors_not_faults() {
    let dir = scratch("fits");
    let run = |launch: &str, sets: &[&str]| {
        let m =
            manifest_with_faulting_first_launch(&dir, &format!("{launch}, args: [a, a, a, 4]"), "");
        let mut args = vec!["run".to_string(), m.display().to_string()];
        for s in sets {
            args.extend(["--set".to_string(), s.to_string()]);
        }
        gpusim(&args)
    };
    run("grid: [1], block: [32], shared_bytes: 100000", &[]).bad_input(&[
        "launches[1].shared_bytes",
        "100000",
        "49152",
        "sm.shared_bytes",
    ]);
    run(
        "grid: [1], block: [1024]",
        &["sm.max_threads=512", "sm.max_warps=16"],
    )
    .bad_input(&["launches[1].block", "1024 threads", "sm.max_threads"]);
    run("grid: [1], block: [1024]", &["sm.registers=4096"]).bad_input(&[
        "launches[1].block",
        "registers",
        "sm.registers",
    ]);
    // The kernel's `.maxntid`: a larger block cannot launch (the driver refuses it).
    let ptx = dir.join("k.ptx");
    std::fs::write(
        &ptx,
        ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u64 p) .maxntid 64, 1, 1\n{\n  ret;\n}\n",
    )
    .unwrap();
    let m = dir.join("k.yaml");
    std::fs::write(
        &m,
        "kernel: k.ptx\nlaunches:\n  - { entry: k, grid: [1], block: [128], args: [a] }\nbuffers:\n  a: { dtype: u32, shape: [1] }\n",
    )
    .unwrap();
    gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&[
        "launches[0].block",
        "128",
        ".maxntid",
        "64",
    ]);
}

/// `gpusim gemm` builds its launches programmatically: the same limits, before any size runs,
/// at the spec's keys.
#[test]
fn gemm_launches_are_checked_before_any_size_runs() {
    let dir = scratch("gemm");
    let src = std::fs::read_to_string(root().join("traces/gemm/sgemm_simt/gemm.yaml")).unwrap();
    let ptx = root().join("traces/gemm/sgemm_simt/sgemm_simt.ptx");
    let with = |from: &str, to: &str| {
        let text = src
            .replace("ptx: sgemm_simt.ptx", &format!("ptx: {}", ptx.display()))
            .replace(from, to);
        assert_ne!(text, src, "{from}");
        let p = dir.join("gemm.yaml");
        std::fs::write(&p, text).unwrap();
        p
    };
    let block = src
        .lines()
        .find(|l| l.starts_with("block:"))
        .expect("a block line")
        .to_string();
    let spec = with(&block, "block: [2048, 1, 1]");
    gpusim(&[
        OsStr::new("gemm"),
        spec.as_os_str(),
        OsStr::new("--sizes"),
        OsStr::new("64x64x64"),
    ])
    .bad_input(&["block", "2048", "1024"]);
    let spec = with("dynamic_shared_bytes: 0", "dynamic_shared_bytes: 1000000");
    gpusim(&[
        OsStr::new("gemm"),
        spec.as_os_str(),
        OsStr::new("--sizes"),
        OsStr::new("64x64x64"),
    ])
    .bad_input(&["dynamic_shared_bytes", "1000000", "sm.shared_bytes"]);
}

// --- item 14: values that must fit --------------------------------------------------------

/// A kernel with one parameter of each scalar type.
fn params_kernel(dir: &Path) -> PathBuf {
    let ptx = dir.join("p.ptx");
    std::fs::write(
        &ptx,
        ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry p(.param .u64 out, .param .u32 n, .param .s8 s, .param .u8 u, .param .b16 b, .param .f16 h, .param .f32 f)\n{\n  ret;\n}\n",
    )
    .unwrap();
    ptx
}

fn params_manifest(dir: &Path, args: &str) -> PathBuf {
    let m = dir.join("p.yaml");
    std::fs::write(
        &m,
        format!("kernel: p.ptx\nlaunches:\n  - {{ entry: p, grid: [1], block: [32], args: [{args}] }}\nbuffers:\n  a: {{ dtype: u32, shape: [4] }}\n"),
    )
    .unwrap();
    m
}

/// −5, 2.5, 99999999999 or a buffer name for a `.u32`, and the like for every parameter type,
/// were wrapped like C casts; each is now an error naming the argument, value and range.
#[test]
fn scalar_arguments_must_fit_their_parameter_type() {
    let dir = scratch("args");
    params_kernel(&dir);
    let good = ["a", "7", "-128", "255", "-1", "1.5", "1e30"];
    let m = params_manifest(&dir, &good.join(", "));
    let r = gpusim(&[OsStr::new("run"), m.as_os_str()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (k, bad, fragments) in [
        (1, "-5", &["-5", ".u32", "4294967295"][..]),
        (1, "2.5", &["2.5", "not an integer", ".u32"]),
        (1, "99999999999", &["99999999999", ".u32"]),
        (1, "a", &["buffer `a`", "64-bit", ".u32"]),
        (1, "nan", &["NaN", ".u32"]),
        (1, "b", &["no buffer `b`", "buffers: a"]),
        (2, "128", &["128", ".s8", "-128 to 127"]),
        (3, "-1", &["-1", ".u8", "0 to 255"]),
        (3, "256", &["256", ".u8"]),
        (4, "65536", &["65536", ".b16"]),
        (5, "70000", &["70000", ".f16", "65504"]),
        (6, "1e39", &["1e39", ".f32"]),
    ] {
        let mut args: Vec<&str> = good.to_vec();
        args[k] = bad;
        let m = params_manifest(&dir, &args.join(", "));
        let key = format!("launches[0].args[{k}]");
        let mut want = vec![key.as_str()];
        want.extend_from_slice(fragments);
        gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&want);
    }
}

/// Initialisers that do not fit the dtype used to wrap; each is an error with the buffer's key.
#[test]
fn initialisers_must_fit_the_dtype() {
    let dir = scratch("init");
    for (buffer, fragments) in [
        (
            "{ dtype: u8, shape: [4], init: { fill: 300 } }",
            &["300", "u8", "0 to 255"][..],
        ),
        (
            "{ dtype: i8, shape: [200], init: { iota: { start: 0 } } }",
            &["element 199", "199", "i8", "127"],
        ),
        (
            "{ dtype: i8, shape: [4], init: { iota: { start: 0, step: 100 } } }",
            &["element 3", "300", "i8"],
        ),
        (
            "{ dtype: u32, shape: [4], init: { fill: -1 } }",
            &["-1", "u32"],
        ),
        (
            "{ dtype: u32, shape: [4], init: { fill: 1.5 } }",
            &["1.5", "not an integer", "u32"],
        ),
        (
            "{ dtype: u32, shape: [4], init: { fill: 1e20 } }",
            &["u32", "4294967295"],
        ),
        (
            "{ dtype: f16, shape: [4], init: { fill: 1e6 } }",
            &["1000000", "f16", "65504"],
        ),
        (
            "{ dtype: f32, shape: [4], init: { random: { low: nan, high: 1 } } }",
            &["random.low", "NaN"],
        ),
        (
            "{ dtype: f32, shape: [4], init: { random: { low: 2, high: 1 } } }",
            &["high", "below low"],
        ),
        (
            "{ dtype: u8, shape: [4], init: { random: { low: 0, high: 1000 } } }",
            &["random.high", "1000", "u8"],
        ),
        (
            "{ dtype: u32, shape: [4], init: { random: { seed: -1 } } }",
            &["random.seed", "-1"],
        ),
        (
            "{ dtype: u32, shape: [4], init: { iota: { strat: 1 } } }",
            &["unknown key `strat`", "start, step"],
        ),
        (
            "{ dtype: u32, shape: [4], init: { values: [1, 2, 3] } }",
            &["3 elements", "needs 4"],
        ),
        (
            "{ dtype: u32, shape: [2], init: { values: [1, -2] } }",
            &["values[1]", "-2", "u32"],
        ),
    ] {
        let m = vecadd(
            &dir,
            "grid: [1], block: [32], args: [a, a, a, 4]",
            &format!("  b: {buffer}\n"),
        );
        let mut want = vec!["buffers.b.init"];
        want.extend_from_slice(fragments);
        gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&want);
    }
}

/// Checks are validated when the manifest loads, before anything runs: values of the right
/// count that fit the dtype, tolerances that are finite and not negative.
#[test]
fn checks_and_tolerances_are_validated_before_simulating() {
    let dir = scratch("checks");
    for (check, key, fragments) in [
        (
            "{ buffer: a, values: [1, 2, 3] }",
            "checks[0].values",
            &["3 values", "holds 4"][..],
        ),
        (
            "{ buffer: u, values: [0, -1] }",
            "checks[0].values[1]",
            &["-1", "u32"],
        ),
        (
            "{ buffer: a, values: [0, 0, 0, 0], rtol: -1 }",
            "checks[0].rtol",
            &["-1"],
        ),
        (
            "{ buffer: a, values: [0, 0, 0, 0], atol: .nan }",
            "checks[0].atol",
            &["NaN"],
        ),
    ] {
        let m = manifest_with_faulting_first_launch(
            &dir,
            "grid: [1], block: [32], args: [a, a, a, 4]",
            &format!("  u: {{ dtype: u32, shape: [2] }}\nchecks:\n  - {check}\n"),
        );
        let mut want = vec![key];
        want.extend_from_slice(fragments);
        gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&want);
    }
    // A shape with a zero dimension.
    let m = vecadd(
        &dir,
        "grid: [1], block: [32], args: [a, a, a, 4]",
        "  z: { dtype: u32, shape: [4, 0] }\n",
    );
    gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&["buffers.z.shape[1]", "at least 1"]);
}

/// An `.npy` with trailing bytes, another shape of the same element count, or another dtype
/// was accepted; each is an error saying what was expected and what was found.
#[test]
fn npy_files_must_match_their_buffer() {
    let dir = scratch("npy");
    let write = |name: &str, dtype: gpusim::launch::DType, shape: &[usize], extra: usize| {
        let n: usize = shape.iter().product();
        let mut bytes = gpusim::launch::npy::encode(dtype, shape, &vec![0u8; n * dtype.size()]);
        bytes.extend(std::iter::repeat_n(0u8, extra));
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    use gpusim::launch::DType;
    write("trailing.npy", DType::F32, &[4, 4], 4);
    write("reshaped.npy", DType::F32, &[2, 8], 0);
    write("signed.npy", DType::I32, &[4, 4], 0);
    for (init, fragments) in [
        ("trailing.npy", &["trailing.npy", "trailing bytes"][..]),
        (
            "reshaped.npy",
            &[
                "reshaped.npy",
                "expected [4, 4], found [2, 8]",
                "16 elements",
            ],
        ),
        ("signed.npy", &["signed.npy", "expected f32", "found i32"]),
    ] {
        let m = vecadd(
            &dir,
            "grid: [1], block: [32], args: [a, a, a, 4]",
            &format!("  b: {{ dtype: f32, shape: [4, 4], init: {{ npy: {init} }} }}\n"),
        );
        let mut want = vec!["buffers.b.init"];
        want.extend_from_slice(fragments);
        gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&want);
        // The same file as a check's expectation, found before the (faulting) launch runs.
        let m = manifest_with_faulting_first_launch(
            &dir,
            "grid: [1], block: [32], args: [a, a, a, 4]",
            &format!(
                "  b: {{ dtype: f32, shape: [4, 4] }}\nchecks:\n  - {{ buffer: b, npy: {init} }}\n"
            ),
        );
        let mut want = vec!["checks[0].npy"];
        want.extend_from_slice(fragments);
        gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&want);
    }
}

/// A key given twice in one mapping was silently the last one for map-typed sections
/// (`buffers`, `set`, `memory_programs`); it is an error with the mapping's path in manifests,
/// configs and GEMM specs.
#[test]
fn duplicate_yaml_keys_are_errors() {
    let dir = scratch("dup");
    let m = vecadd(
        &dir,
        "grid: [1], block: [32], args: [a, a, a, 4]",
        "  b: { dtype: u32, shape: [4] }\n  b: { dtype: u32, shape: [8] }\n",
    );
    gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&[
        "m.yaml",
        "buffers",
        "duplicate",
        "\"b\"",
    ]);
    let m = vecadd(
        &dir,
        "grid: [1], block: [32], args: [a, a, a, 4]",
        "set:\n  sm.count: 1\n  sm.count: 2\n",
    );
    gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&["set", "duplicate", "sm.count"]);
    let ok = vecadd(&dir, "grid: [1], block: [32], args: [a, a, a, 4]", "");
    let tiny = std::fs::read_to_string(root().join("configs/tiny.yaml")).unwrap();
    let cfg = dir.join("dup-config.yaml");
    std::fs::write(&cfg, tiny.replacen("sm:\n", "sm:\n  count: 3\n", 1)).unwrap();
    gpusim(&[
        OsStr::new("run"),
        ok.as_os_str(),
        OsStr::new("--config"),
        cfg.as_os_str(),
    ])
    .bad_input(&["dup-config.yaml", "sm", "duplicate", "count"]);
    let spec = std::fs::read_to_string(root().join("traces/gemm/sgemm_simt/gemm.yaml")).unwrap();
    let p = dir.join("gemm.yaml");
    std::fs::write(&p, format!("{spec}\nalpha: 1.0\nalpha: 2.0\n")).unwrap();
    gpusim(&[OsStr::new("gemm"), p.as_os_str()]).bad_input(&["gemm.yaml", "duplicate", "alpha"]);
}

// --- item 16: output paths ----------------------------------------------------------------

/// Bad output paths were found after the simulation, or reported without the path: they are
/// checked first (a faulting manifest exits 2, not 3) and every error names the path.
#[test]
fn bad_output_paths_are_found_before_simulating() {
    let dir = scratch("outputs");
    let m =
        manifest_with_faulting_first_launch(&dir, "grid: [1], block: [32], args: [a, a, a, 4]", "");
    let missing = dir.join("no/such/dir/out.json");
    let a_file = dir.join("file");
    std::fs::write(&a_file, "x").unwrap();
    for (flag, path, why) in [
        ("--stats-json", missing.as_path(), "does not exist"),
        ("--trace-warps", missing.as_path(), "does not exist"),
        ("--stats-json", dir.as_path(), "is a directory"),
        ("--dump", a_file.as_path(), "not a directory"),
    ] {
        let r = gpusim(&[
            OsStr::new("run"),
            m.as_os_str(),
            OsStr::new(flag),
            path.as_os_str(),
        ]);
        r.bad_input(&[&path.display().to_string(), why]);
    }
    let spec = root().join("traces/gemm/sgemm_simt/gemm.yaml");
    gpusim(&[
        OsStr::new("gemm"),
        spec.as_os_str(),
        OsStr::new("--csv"),
        missing.as_os_str(),
    ])
    .bad_input(&["--csv", &missing.display().to_string()]);
    gpusim(&[
        OsStr::new("fuzz"),
        OsStr::new("--cases"),
        OsStr::new("1"),
        OsStr::new("--keep"),
        a_file.as_os_str(),
    ])
    .bad_input(&["--keep", &a_file.display().to_string(), "not a directory"]);
}

/// `plot -o` into a missing directory printed `ImageError(IoError(Os { .. }))`; bad stats left
/// a blank PNG behind. Now: the path in words, and no file on failure.
#[test]
fn plot_names_its_output_and_leaves_nothing_on_failure() {
    let dir = scratch("plot");
    let stats = dir.join("stats.json");
    let m = root().join("traces/kernels/vecadd/vecadd.yaml");
    let r = gpusim(&[
        OsStr::new("run"),
        m.as_os_str(),
        OsStr::new("--stats-json"),
        stats.as_os_str(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let missing = dir.join("nope/chart.png");
    gpusim(&[
        OsStr::new("plot"),
        OsStr::new("stalls"),
        stats.as_os_str(),
        OsStr::new("-o"),
        missing.as_os_str(),
    ])
    .bad_input(&[&missing.display().to_string()]);
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{}").unwrap();
    for ext in ["png", "svg"] {
        let out = dir.join(format!("chart.{ext}"));
        gpusim(&[
            OsStr::new("plot"),
            OsStr::new("stalls"),
            bad.as_os_str(),
            OsStr::new("-o"),
            out.as_os_str(),
        ])
        .bad_input(&["bad.json", "kernels"]);
        assert!(!out.exists(), "a {ext} was left behind");
        let r = gpusim(&[
            OsStr::new("plot"),
            OsStr::new("stalls"),
            stats.as_os_str(),
            OsStr::new("-o"),
            out.as_os_str(),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(out.metadata().unwrap().len() > 0);
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A full disk: the error names the file and exits 2.
#[test]
fn write_errors_name_the_path() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let m = root().join("traces/kernels/vecadd/vecadd.yaml");
    let r = gpusim(&[
        OsStr::new("run"),
        m.as_os_str(),
        OsStr::new("--stats-json"),
        OsStr::new("/dev/full"),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("cannot write /dev/full"), "{}", r.stderr);
    assert_plain_words(&r.stderr);
}

// --- item 11: closed pipes and full disks on stdout ---------------------------------------

/// `gpusim run … | head -1` panicked (exit 101) once the pipe closed: now the run's own status,
/// quietly. The reading end is closed before gpusim writes anything.
#[test]
fn a_closed_stdout_pipe_is_quiet() {
    for args in [
        vec!["run", "traces/kernels/vecadd/vecadd.yaml"],
        vec!["ptx", "traces/kernels/vecadd/vecadd.ptx", "--tokens"],
        vec!["lint", "traces/kernels/vecadd/vecadd.ptx"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpusim"))
            .args(&args)
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// Standard output on a full disk: reported, exit 2 (not a panic).
#[test]
fn a_full_stdout_is_exit_2() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .args(["run", "traces/kernels/vecadd/vecadd.yaml"])
        .current_dir(root())
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot write standard output"), "{stderr}");
    assert_plain_words(&stderr);
}

// --- item 17: where an error comes from, in plain words ------------------------------------

/// Errors from a manifest's `set:` or a `--set` were blamed on the config file.
#[test]
fn override_errors_name_where_they_were_written() {
    let dir = scratch("origin");
    let m = vecadd(
        &dir,
        "grid: [1], block: [32], args: [a, a, a, 4]",
        "set:\n  sm.count: 0\n",
    );
    let r = gpusim(&[OsStr::new("run"), m.as_os_str()]);
    r.bad_input(&["m.yaml: set.sm.count: must be at least 1"]);
    assert!(!r.stderr.contains("tiny"), "{}", r.stderr);
    let ok = vecadd(&dir, "grid: [1], block: [32], args: [a, a, a, 4]", "");
    let r = gpusim(&[
        OsStr::new("run"),
        ok.as_os_str(),
        OsStr::new("--set"),
        OsStr::new("sm.count=0"),
    ]);
    r.bad_input(&["--set sm.count=0: must be at least 1"]);
    assert_eq!(r.stderr.matches("sm.count").count(), 1, "{}", r.stderr);
    assert!(!r.stderr.contains("tiny"), "{}", r.stderr);
    // An error in the file itself still names the file.
    let tiny = std::fs::read_to_string(root().join("configs/tiny.yaml")).unwrap();
    let cfg = dir.join("bad.yaml");
    std::fs::write(&cfg, tiny.replacen("  count: ", "  count: 0 #", 1)).unwrap();
    gpusim(&[
        OsStr::new("run"),
        ok.as_os_str(),
        OsStr::new("--config"),
        cfg.as_os_str(),
    ])
    .bad_input(&["bad.yaml: sm.count: must be at least 1"]);
}

/// Errors printed Rust debug dumps (`UnitConfig {…}`, `CacheGeometry {…}`) and repeated key
/// paths: each of these says the key once, in words.
#[test]
fn errors_have_no_debug_dumps_and_say_the_key_once() {
    let dir = scratch("words");
    let ok = vecadd(&dir, "grid: [1], block: [32], args: [a, a, a, 4]", "");
    for (set, key) in [
        ("sm.units.tensor.count=0", "sm.units.tensor"),
        ("sm.units.ldst.count=0", "sm.units.ldst"),
        ("l1.line_bytes=48", "l1.line_bytes"),
        ("l2.size_kib=0", "l2.size_kib"),
        ("l1.replacement=random", "l1.replacement"),
        ("dram.row_policy=lru", "dram.row_policy"),
        ("sm.scheduler=fifo", "sm.scheduler"),
    ] {
        let r = gpusim(&[
            OsStr::new("run"),
            ok.as_os_str(),
            OsStr::new("--set"),
            OsStr::new(set),
        ]);
        r.bad_input(&[key]);
        assert!(
            r.stderr.starts_with(&format!("error: --set {set}")),
            "{}",
            r.stderr
        );
    }
    // A serde error inside a launch said its path twice (`launches[0]: launches[0]: ...`).
    let m = dir.join("twice.yaml");
    std::fs::write(&m, format!("kernel: {}\nlaunches: [[1]]\n", vecadd_ptx())).unwrap();
    let r = gpusim(&[OsStr::new("run"), m.as_os_str()]);
    r.bad_input(&["launches[0]"]);
    assert_eq!(r.stderr.matches("launches[0]").count(), 1, "{}", r.stderr);
    // Lists of names are words, not `["a", "b"]`.
    let m = vecadd(
        &dir,
        "grid: [1], block: [32], args: [a, a, a, 4]",
        "checks:\n  - { buffer: q, values: [1] }\n",
    );
    gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&["unknown buffer `q`; buffers: a"]);
}

// --- item 9: nesting -----------------------------------------------------------------------

/// A memory program nested 30,000 deep overflowed the host stack (exit 134): now a located
/// error naming the config key.
#[test]
fn deeply_nested_memory_programs_are_located_errors() {
    let n = 30_000;
    let ifs = format!("{}end;{}", "if (true) { ".repeat(n), " }".repeat(n));
    let nots = format!("if ({}true) {{ ; }} end;", "!".repeat(100_000));
    let parens = format!("if ({}true{}) {{ ; }} end;", "(".repeat(n), ")".repeat(n));
    let chain = format!("if (true{}) {{ ; }} end;", " and true".repeat(n));
    for prog in [&ifs, &nots, &parens, &chain] {
        let e = gpusim::config::Config::from_yaml(
            "t",
            gpusim::config::TINY_YAML,
            &[("memory_programs.st_global_wb".into(), prog.clone())],
        )
        .expect_err("too deep");
        assert_eq!(e.path, "memory_programs.st_global_wb", "{e}");
        assert!(e.message.contains("nested more than"), "{e}");
        assert!(e.message.contains("1:"), "located: {e}");
    }
    // Through the command line, in a config file.
    let dir = scratch("deep-program");
    let mut cfg = gpusim::config::TINY_YAML.to_string();
    cfg.push_str(&format!("  ld_global_ca: |\n    {ifs}\n"));
    let p = dir.join("deep.yaml");
    std::fs::write(&p, cfg).unwrap();
    let m = vecadd(&dir, "grid: [1], block: [32], args: [a, a, a, 4]", "");
    gpusim(&[
        OsStr::new("run"),
        m.as_os_str(),
        OsStr::new("--config"),
        p.as_os_str(),
    ])
    .bad_input(&[
        "deep.yaml",
        "memory_programs.ld_global_ca",
        "nested more than",
    ]);
}

/// A 100,000-deep YAML took a minute before its error: the depth is bounded before parsing,
/// for manifests, configs, GEMM specs and `--set` values, the error naming the file.
#[test]
fn deeply_nested_yaml_is_refused() {
    let dir = scratch("deep-yaml");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let m = dir.join("deep.yaml");
    std::fs::write(&m, format!("kernel: k.ptx\nlaunches: {deep}\n")).unwrap();
    gpusim(&[OsStr::new("run"), m.as_os_str()]).bad_input(&[
        "deep.yaml",
        "nested more than 128 deep",
        "line 2",
    ]);
    let ok = vecadd(&dir, "grid: [1], block: [32], args: [a, a, a, 4]", "");
    let cfg = dir.join("deep-config.yaml");
    std::fs::write(&cfg, format!("name: {deep}\n")).unwrap();
    gpusim(&[
        OsStr::new("run"),
        ok.as_os_str(),
        OsStr::new("--config"),
        cfg.as_os_str(),
    ])
    .bad_input(&["deep-config.yaml", "nested more than 128 deep"]);
    let spec = dir.join("gemm.yaml");
    std::fs::write(&spec, format!("name: {deep}\n")).unwrap();
    gpusim(&[OsStr::new("gemm"), spec.as_os_str()])
        .bad_input(&["gemm.yaml", "nested more than 128 deep"]);
    let set = format!("sm.count={}", "[".repeat(20_000));
    gpusim(&[
        OsStr::new("run"),
        ok.as_os_str(),
        OsStr::new("--set"),
        OsStr::new(&set),
    ])
    .bad_input(&["--set sm.count=", "nested more than 128 deep"]);
    // Block nesting past serde's limit: the place, not a path of a hundred `[0]`s.
    let block: String = (0..200).map(|i| format!("{}-\n", "  ".repeat(i))).collect();
    std::fs::write(&m, format!("kernel: k.ptx\nlaunches:\n{block}")).unwrap();
    let r = gpusim(&[OsStr::new("run"), m.as_os_str()]);
    r.bad_input(&["deep.yaml", "nested more than 128 deep"]);
    assert!(!r.stderr.contains("[0][0]"), "{}", r.stderr);
}

// --- item 19: progress and the statistics' words -------------------------------------------

/// Progress is display only: the same results with or without it; a bad mode is refused.
#[test]
fn progress_never_changes_results() {
    let dir = scratch("progress");
    let m = root().join("traces/kernels/vecadd/vecadd.yaml");
    let mut stats = Vec::new();
    for mode in ["none", "plain", "bar", "auto"] {
        let s = dir.join(format!("{mode}.json"));
        let r = gpusim(&[
            OsStr::new("run"),
            m.as_os_str(),
            OsStr::new("--progress"),
            OsStr::new(mode),
            OsStr::new("--stats-json"),
            s.as_os_str(),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&s).unwrap()).unwrap();
        stats.push((
            v["cycles"].clone(),
            v["stalls"].clone(),
            v["memory"].clone(),
        ));
    }
    assert!(stats.windows(2).all(|w| w[0] == w[1]), "{stats:?}");
    let r = gpusim(&[
        "run",
        "traces/kernels/vecadd/vecadd.yaml",
        "--progress",
        "sometimes",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("auto") && r.stderr.contains("plain"),
        "{}",
        r.stderr
    );
}

/// The summary names its config, says utilisation is averaged over all SMs, lists the live
/// stall states in a fixed order and keeps `finished` apart.
#[test]
fn the_summary_names_its_config_and_orders_its_states() {
    let r = gpusim(&["run", "traces/kernels/vecadd/vecadd.yaml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("config              tiny (embedded)"),
        "{}",
        r.stdout
    );
    let r = gpusim(&[
        "run",
        "traces/kernels/vecadd/vecadd.yaml",
        "--config",
        "configs/volta-v100.yaml",
    ]);
    assert!(
        r.stdout
            .contains("config              configs/volta-v100.yaml"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("averaged over all 80 SMs"),
        "{}",
        r.stdout
    );
    let line = r
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("warp-cycles"))
        .expect("a warp-cycles line");
    let order: Vec<&str> = gpusim::stats::Stall::ALL
        .iter()
        .filter(|s| **s != gpusim::stats::Stall::Finished)
        .map(|s| s.name())
        .collect();
    let at: Vec<usize> = order
        .iter()
        .map(|n| {
            line.find(&format!(" {n} "))
                .unwrap_or_else(|| panic!("{n} in {line}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{line}");
    assert!(!line.contains("finished"), "{line}");
    assert!(
        r.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("finished warps")),
        "{}",
        r.stdout
    );
}

/// docs/stats.md, which `gpusim run --help` points to, explains every key of the stats JSON
/// and every stall state.
#[test]
fn docs_stats_explains_every_key() {
    let help = gpusim(&["run", "--help"]);
    assert!(help.stdout.contains("docs/stats.md"), "{}", help.stdout);
    let doc = std::fs::read_to_string(root().join("docs/stats.md")).unwrap();
    let dir = scratch("doc-keys");
    let s = dir.join("s.json");
    let r = gpusim(&[
        OsStr::new("run"),
        OsStr::new("traces/kernels/vecadd/vecadd.yaml"),
        OsStr::new("--stats-json"),
        s.as_os_str(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&s).unwrap()).unwrap();
    let mut keys: Vec<String> = Vec::new();
    let mut add = |o: &serde_json::Value| {
        keys.extend(o.as_object().unwrap().keys().cloned());
    };
    add(&v);
    add(&v["memory"]);
    add(&v["stalls"]);
    add(&v["unit_utilisation"]);
    add(&v["kernels"][0]);
    add(&v["kernels"][0]["sms"][0]);
    for k in keys {
        assert!(
            doc.contains(&format!("`{k}`")),
            "docs/stats.md does not explain `{k}`"
        );
    }
}

// ---- PTX that ptxas rejects (item 15) and nesting the host stack cannot hold (item 9) ----
mod ptx_front_end {
    use std::process::{Command, Output};

    /// `gpusim ptx` on a file holding `src`.
    fn gpusim_ptx(tag: &str, src: &str) -> (Output, String) {
        let dir = crate::common::temp_dir(tag);
        let path = dir.join("k.ptx");
        std::fs::write(&path, src).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
            .args(["ptx", path.to_str().unwrap()])
            .output()
            .unwrap();
        let path = path.to_str().unwrap().to_string();
        (out, path)
    }

    fn kernel(head: &str, body: &str) -> String {
        format!(
            "{head}.visible .entry k()\n{{\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n{body}  ret;\n}}\n"
        )
    }

    const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

    #[test]
    fn ptx_that_ptxas_rejects_is_exit_2_at_its_line_and_column() {
        let cases = [
            (
                kernel(HEAD, "  .reg .b32 %r1;\n"),
                "8:13: `%r1` is declared twice in one scope",
            ),
            (
                kernel(HEAD, "  add.u64 %r0, %r1, %r2;\n"),
                "8:11: `%r0` is a .b32 register, but this operand is .u64",
            ),
            (
                kernel(HEAD, "  add.u7 %r0, %r1, %r2;\n"),
                "8:6: unknown type `.u7` for `add`",
            ),
            (
                kernel(".version 8.0\n.target sm_91\n.address_size 64\n", ""),
                "2:9: unknown `.target` `sm_91`",
            ),
            (
                kernel(".version 8.9\n.target sm_90\n.address_size 64\n", ""),
                "1:10: unknown PTX ISA version 8.9",
            ),
            (
                kernel(".version 7.7\n.target sm_90\n.address_size 64\n", ""),
                "2:9: PTX ISA 7.7 does not know `.target sm_90`",
            ),
            (
                kernel(".target sm_90\n.address_size 64\n", ""),
                "1:1: a PTX module starts with a `.version` directive",
            ),
        ];
        for (i, (src, want)) in cases.iter().enumerate() {
            let (out, path) = gpusim_ptx(&format!("ptxas-rejects-{i}"), src);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(
                stderr.contains(&format!("{path}:{want}")),
                "{want}:\n{stderr}"
            );
        }
    }

    #[test]
    fn ptx_nested_100000_deep_is_exit_2_not_a_stack_overflow() {
        const N: usize = 100_000;
        let cases = [
            format!(
                "{HEAD}.global .u32 g = {}1{};\n",
                "(".repeat(N),
                ")".repeat(N)
            ),
            format!(
                "{HEAD}.global .u32 g[1] = {}1{};\n",
                "{".repeat(N),
                "}".repeat(N)
            ),
            kernel(HEAD, &format!("  add.u32 %r0, %r1, {}1;\n", "-".repeat(N))),
            kernel(
                HEAD,
                &format!("  mov.b32 %r0, {}%r1{};\n", "{".repeat(N), "}".repeat(N)),
            ),
            kernel(HEAD, &format!("{}{}", "{\n".repeat(N), "}\n".repeat(N))),
        ];
        for (i, src) in cases.iter().enumerate() {
            let (out, path) = gpusim_ptx(&format!("deep-{i}"), src);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains(&format!("{path}:")), "{stderr}");
            assert!(
                stderr.contains("nested deeper than 256")
                    || stderr.contains("nesting deeper than 256"),
                "{stderr}"
            );
        }
    }
}
