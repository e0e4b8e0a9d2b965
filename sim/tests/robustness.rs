//! Robustness: corrupted PTX, manifests and configs must give an error with a message, never a
//! panic or a hang. Real inputs from `traces/` and `configs/` are truncated, have tokens, lines
//! and numbers deleted, duplicated, swapped or replaced, and bytes flipped, all with a fixed-seed
//! PRNG so that every failure names a mutation that can be replayed by hand. An input that
//! aborts the process (an allocation failure cannot be caught) is found by running with
//! `GPUSIM_FUZZ_TRACE=1 ... -- --nocapture`, which prints every case before it runs.

mod common;

use common::root;

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Truncate PTX at every `K_PTX`-th byte, manifests and configs (which run a kernel) at every
/// `K_RUN`-th byte.
const K_PTX: usize = 3;
const K_RUN: usize = 3;
/// Random mutations per input file.
const N_PTX: usize = 2000;
const N_RUN: usize = 800;
/// A single input that takes longer than this counts as a hang.
const HANG: Duration = Duration::from_secs(30);

/// Low enough that no mutated kernel runs long (the vecadd trace needs under 1000 cycles).
fn cli_set() -> Vec<(String, String)> {
    vec![("watchdog_cycles".into(), "100000".into())]
}

/// xorshift64*: a tiny fixed PRNG, so every run mutates the same way.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Numbers that stress parsers and size computations.
const NASTY_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "-0",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "99999999999999999999999999999999",
    "1e308",
    "-1e400",
    "0x7fffffff",
    "0xffffffffffffffffff",
];

/// Bytes that mean something to the PTX lexer or to YAML.
const PUNCT: &[u8] = b" \n\t{}[]();,.:<>-%$@!\"'#&*|";

/// Token spans: maximal runs of identifier-like characters, or single other non-space bytes.
fn tokens(src: &[u8]) -> Vec<(usize, usize)> {
    let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'%' | b'$');
    let mut out = Vec::new();
    let mut i = 0;
    while i < src.len() {
        if src[i].is_ascii_whitespace() {
            i += 1;
        } else if word(src[i]) {
            let s = i;
            while i < src.len() && word(src[i]) {
                i += 1;
            }
            out.push((s, i));
        } else {
            out.push((i, i + 1));
            i += 1;
        }
    }
    out
}

/// Line spans, each including its newline.
fn lines(src: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut s = 0;
    for (i, &b) in src.iter().enumerate() {
        if b == b'\n' {
            out.push((s, i + 1));
            s = i + 1;
        }
    }
    if s < src.len() {
        out.push((s, src.len()));
    }
    out
}

/// Digit runs (with a leading `-` when there is one).
fn numbers(src: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < src.len() {
        if src[i].is_ascii_digit() {
            let s = if i > 0 && src[i - 1] == b'-' {
                i - 1
            } else {
                i
            };
            while i < src.len() && src[i].is_ascii_digit() {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

fn show(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    let s: String = s.chars().take(40).collect();
    format!("{s:?}")
}

fn splice(src: &[u8], (s, e): (usize, usize), with: &[u8]) -> Vec<u8> {
    [&src[..s], with, &src[e..]].concat()
}

/// Swap two non-overlapping spans (a before b).
fn swap(src: &[u8], a: (usize, usize), b: (usize, usize)) -> Vec<u8> {
    let (a, b) = if a.0 <= b.0 { (a, b) } else { (b, a) };
    [
        &src[..a.0],
        &src[b.0..b.1],
        &src[a.1..b.0],
        &src[a.0..a.1],
        &src[b.1..],
    ]
    .concat()
}

/// One random edit of `src`, described so that it can be replayed by hand.
fn mutate_once(src: &[u8], rng: &mut Rng) -> (String, Vec<u8>) {
    if src.is_empty() {
        return ("insert `%`".into(), b"%".to_vec());
    }
    let toks = tokens(src);
    let lns = lines(src);
    let nums = numbers(src);
    loop {
        match rng.below(8) {
            0 if !toks.is_empty() => {
                let t = toks[rng.below(toks.len())];
                return (
                    format!("delete token {} at byte {}", show(&src[t.0..t.1]), t.0),
                    splice(src, t, b""),
                );
            }
            1 if !toks.is_empty() => {
                let t = toks[rng.below(toks.len())];
                let tok = &src[t.0..t.1];
                return (
                    format!("duplicate token {} at byte {}", show(tok), t.0),
                    splice(src, t, &[tok, b" ", tok].concat()),
                );
            }
            2 if toks.len() >= 2 => {
                let (i, j) = (rng.below(toks.len()), rng.below(toks.len()));
                if i == j {
                    continue;
                }
                let (a, b) = (toks[i], toks[j]);
                return (
                    format!(
                        "swap tokens {} at byte {} and {} at byte {}",
                        show(&src[a.0..a.1]),
                        a.0,
                        show(&src[b.0..b.1]),
                        b.0
                    ),
                    swap(src, a, b),
                );
            }
            3 => {
                let l = rng.below(lns.len());
                return (format!("delete line {}", l + 1), splice(src, lns[l], b""));
            }
            4 => {
                let l = rng.below(lns.len());
                let text = &src[lns[l].0..lns[l].1];
                return (
                    format!("duplicate line {}", l + 1),
                    splice(src, lns[l], &[text, text].concat()),
                );
            }
            5 if lns.len() >= 2 => {
                let (i, j) = (rng.below(lns.len()), rng.below(lns.len()));
                if i == j {
                    continue;
                }
                let (a, b) = (lns[i], lns[j]);
                // A last line without a newline would glue onto its new neighbour.
                if !src[a.0..a.1].ends_with(b"\n") || !src[b.0..b.1].ends_with(b"\n") {
                    continue;
                }
                return (
                    format!("swap lines {} and {}", i + 1, j + 1),
                    swap(src, a, b),
                );
            }
            6 if !nums.is_empty() => {
                let n = nums[rng.below(nums.len())];
                let with = NASTY_NUMBERS[rng.below(NASTY_NUMBERS.len())];
                return (
                    format!(
                        "replace number {} at byte {} with `{with}`",
                        show(&src[n.0..n.1]),
                        n.0
                    ),
                    splice(src, n, with.as_bytes()),
                );
            }
            7 => {
                let p = rng.below(src.len());
                let b = match rng.below(3) {
                    0 => src[p] ^ (1 << rng.below(8)),
                    1 => PUNCT[rng.below(PUNCT.len())],
                    _ => rng.next() as u8,
                };
                let mut out = src.to_vec();
                out[p] = b;
                return (format!("byte {p}: {:#04x} -> {b:#04x}", src[p]), out);
            }
            _ => continue,
        }
    }
}

/// Every truncation at a multiple of `k`, then `n` random edits (one or two each).
fn mutations(src: &[u8], seed: u64, k: usize, n: usize) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = (0..src.len())
        .step_by(k)
        .map(|i| (format!("truncate to {i} bytes"), src[..i].to_vec()))
        .collect();
    let mut rng = Rng::new(seed);
    for i in 0..n {
        let (mut desc, mut text) = mutate_once(src, &mut rng);
        if rng.below(3) == 0 {
            let (d2, t2) = mutate_once(&text, &mut rng);
            desc = format!("{desc}; then {d2}");
            text = t2;
        }
        out.push((format!("random #{i} (seed {seed}): {desc}"), text));
    }
    out
}

thread_local! {
    /// While set, a panic records its message and location here instead of printing them.
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn install_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let recorded = CAUGHT.with(|c| match c.borrow_mut().as_mut() {
                Some(slot) => {
                    // The panic's own location may be in std (an overflow in `product`): add the
                    // innermost frames of the gpusim crates.
                    let bt = std::backtrace::Backtrace::force_capture().to_string();
                    let ours: Vec<&str> = bt
                        .lines()
                        .map(str::trim)
                        .filter(|l| {
                            l.starts_with("at ")
                                && l.contains("src/")
                                && !l.contains("/rustc/")
                                && !l.contains("/.cargo/")
                        })
                        .take(3)
                        .collect();
                    *slot = format!("{info} [{}]", ours.join(" <- "));
                    true
                }
                None => false,
            });
            if !recorded {
                default(info);
            }
        }));
    });
}

/// Run `check` on every case in a worker thread. Returns one line per panic or bad error;
/// fails the test outright if one case runs longer than `HANG`.
fn run_cases(
    what: &'static str,
    cases: Vec<(String, Vec<u8>)>,
    check: impl Fn(&[u8]) -> Result<(), String> + Send + 'static,
) -> Vec<String> {
    install_hook();
    let (tx, rx) = mpsc::channel::<Option<String>>();
    let descs: Vec<String> = cases.iter().map(|c| c.0.clone()).collect();
    let trace = std::env::var_os("GPUSIM_FUZZ_TRACE").is_some();
    std::thread::spawn(move || {
        for (desc, bytes) in cases {
            CAUGHT.with(|c| *c.borrow_mut() = Some(String::new()));
            if trace {
                eprintln!("case: {desc}");
            }
            let r = catch_unwind(AssertUnwindSafe(|| check(&bytes)));
            let msg = CAUGHT.with(|c| c.borrow_mut().take()).unwrap_or_default();
            let problem = match r {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(format!("{what}: {desc}: bad error: {e}")),
                Err(_) => Some(format!("{what}: {desc}: PANIC: {msg}")),
            };
            if tx.send(problem).is_err() {
                return;
            }
        }
    });
    let mut problems = Vec::new();
    // Cases run in order, so the one without a result is the next description.
    for desc in &descs {
        match rx.recv_timeout(HANG) {
            Ok(Some(p)) => problems.push(p),
            Ok(None) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "{what}: hang: no result within {HANG:?} for {}\nproblems so far:\n{}",
                desc,
                problems.join("\n")
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("{what}: the worker died at {desc}")
            }
        }
    }
    problems
}

/// A fresh, uniquely named scratch directory under the system temp dir.
fn scratch(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!(
        "gpusim-robustness-{}-{tag}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

/// An error's message must say something.
fn check_run_error(e: &gpusim::RunError) -> Result<(), String> {
    use gpusim::RunError::*;
    let (msg, extra) = match e {
        Manifest(m) => (m.message.clone(), String::new()),
        Config(c) => (c.message.clone(), String::new()),
        Ptx(p) => (
            p.message.clone(),
            if p.line >= 1 {
                String::new()
            } else {
                format!("PTX error with line {}", p.line)
            },
        ),
        Target(t) => (t.message.clone(), String::new()),
        Fault(f) => (f.message.clone(), String::new()),
    };
    if msg.trim().is_empty() {
        return Err(format!("empty message: {e}"));
    }
    if !extra.is_empty() {
        return Err(format!("{extra}: {e}"));
    }
    Ok(())
}

/// How many mutated runs completed and how many were rejected: a corpus that only ever hits
/// one of the two would test little.
#[derive(Clone, Default)]
struct Tally(std::sync::Arc<[std::sync::atomic::AtomicUsize; 2]>);

impl Tally {
    fn record(&self, r: Result<gpusim::RunOutput, gpusim::RunError>) -> Result<(), String> {
        self.count(r.is_ok());
        match r {
            Ok(_) => Ok(()),
            Err(e) => check_run_error(&e),
        }
    }
    fn count(&self, ok: bool) {
        self.0[!ok as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    fn assert_both(&self, what: &str) {
        let [ok, err] = [0, 1].map(|i| self.0[i].load(std::sync::atomic::Ordering::Relaxed));
        assert!(
            ok >= 10 && err >= 10,
            "{what}: {ok} mutations ran, {err} were rejected"
        );
    }
}

fn report(kind: &str, total: usize, problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{} of {total} corrupted {kind} inputs panicked or gave a bad error:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn corrupted_ptx_gives_errors() {
    let files = [
        "traces/kernels/vecadd/vecadd.ptx",
        "traces/kernels/sgemm_tiled/sgemm_tiled.ptx",
        "traces/kernels/recursive/recursive.ptx",
        "traces/kernels/switch_case/switch_case.ptx",
        "traces/kernels/const_globals/const_globals.ptx",
        "traces/kernels/compact/compact.ptx",
        "traces/semantics/t3_indirect_bra/t3_indirect_bra.ptx",
        "traces/semantics/t11_4_ret_inner_call/t11_4_ret_inner_call.ptx",
        "traces/semantics/t12_bar_sync/t12_bar_sync.ptx",
        "traces/faults/spinlock_two_warps/spinlock_two_warps.ptx",
    ];
    let mut cases = Vec::new();
    for (seed, f) in files.iter().enumerate() {
        let src = std::fs::read(root().join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        // The unmutated file must parse and prepare: otherwise the test would prove nothing.
        let text = String::from_utf8(src.clone()).expect("utf-8");
        let m = gpusim_isa::parse_module(f, &text).unwrap_or_else(|e| panic!("{e}"));
        gpusim::core::Program::prepare(m).unwrap_or_else(|e| panic!("{e}"));
        for (d, b) in mutations(&src, 1000 + seed as u64, K_PTX, N_PTX) {
            cases.push((format!("{f}: {d}"), b));
        }
    }
    let total = cases.len();
    let tally = Tally::default();
    let t = tally.clone();
    let problems = run_cases("ptx", cases, move |bytes| {
        let text = String::from_utf8_lossy(bytes);
        let checked = |e: gpusim_isa::PtxError| {
            t.count(false);
            if e.message.trim().is_empty() || e.line < 1 {
                Err(format!(
                    "{}:{}:{}: message {:?}",
                    e.file, e.line, e.col, e.message
                ))
            } else {
                Ok(())
            }
        };
        match gpusim_isa::parse_module("mutated.ptx", &text) {
            Err(e) => checked(e),
            Ok(m) => match gpusim::core::Program::prepare(m) {
                Err(e) => checked(e),
                Ok(_) => {
                    t.count(true);
                    Ok(())
                }
            },
        }
    });
    tally.assert_both("PTX");
    report("PTX", total, problems);
}

/// Copy a trace folder (PTX and .npy files) into a scratch dir; the manifest is rewritten per case.
fn copy_trace(dir: &str, tag: &str) -> PathBuf {
    let d = scratch(tag);
    for e in std::fs::read_dir(root().join(dir))
        .expect("trace dir")
        .flatten()
    {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "ptx" || x == "npy") {
            std::fs::copy(&p, d.join(p.file_name().unwrap())).expect("copy");
        }
    }
    d
}

#[test]
fn corrupted_manifests_give_errors() {
    let manifests = [
        "traces/kernels/vecadd/vecadd.yaml",
        "traces/kernels/reduce_shared/reduce_shared.yaml",
        "traces/semantics/t2_if_else/t2_if_else.yaml",
        "traces/faults/deadlock_bar_count/deadlock_bar_count.yaml",
    ];
    let mut problems = Vec::new();
    let mut total = 0;
    for (seed, m) in manifests.iter().enumerate() {
        let src = std::fs::read(root().join(m)).unwrap_or_else(|e| panic!("{m}: {e}"));
        let dir = Path::new(m).parent().unwrap().to_str().unwrap();
        let scratch_dir = copy_trace(dir, "manifest");
        let path = scratch_dir.join("mutated.yaml");
        // The unmutated copy must run cleanly from the scratch dir.
        std::fs::write(&path, &src).unwrap();
        let out =
            gpusim::run_manifest(&path, None, &cli_set()).unwrap_or_else(|e| panic!("{m}: {e}"));
        assert!(out.failures.is_empty(), "{m}: {:?}", out.failures);
        let cases: Vec<(String, Vec<u8>)> = mutations(&src, 2000 + seed as u64, K_RUN, N_RUN)
            .into_iter()
            .map(|(d, b)| (format!("{m}: {d}"), b))
            .collect();
        total += cases.len();
        let (p, tally) = (path.clone(), Tally::default());
        let t = tally.clone();
        problems.extend(run_cases("manifest", cases, move |bytes| {
            std::fs::write(&p, bytes).map_err(|e| e.to_string())?;
            t.record(gpusim::run_manifest(&p, None, &cli_set()))
        }));
        tally.assert_both(m);
        let _ = std::fs::remove_dir_all(&scratch_dir);
    }
    report("manifest", total, problems);
}

#[test]
fn corrupted_configs_give_errors() {
    let configs = ["configs/tiny.yaml", "configs/fermi-gtx480.yaml"];
    let manifest = root().join("traces/kernels/vecadd/vecadd.yaml");
    let mut problems = Vec::new();
    let mut total = 0;
    for (seed, c) in configs.iter().enumerate() {
        let src = std::fs::read(root().join(c)).unwrap_or_else(|e| panic!("{c}: {e}"));
        let scratch_dir = scratch("config");
        let path = scratch_dir.join("mutated.yaml");
        std::fs::write(&path, &src).unwrap();
        // vecadd is built for sm_52: the Fermi config runs it with its generation raised.
        let mut sets = cli_set();
        if c.contains("fermi") {
            sets.push(("sm.arch".into(), "sm_52".into()));
        }
        let out = gpusim::run_manifest(&manifest, Some(&path), &sets)
            .unwrap_or_else(|e| panic!("{c}: {e}"));
        assert!(out.failures.is_empty(), "{c}: {:?}", out.failures);
        let cases: Vec<(String, Vec<u8>)> = mutations(&src, 3000 + seed as u64, K_RUN, N_RUN)
            .into_iter()
            .map(|(d, b)| (format!("{c}: {d}"), b))
            .collect();
        total += cases.len();
        let (p, m, tally) = (path.clone(), manifest.clone(), Tally::default());
        let sets = sets.clone();
        let t = tally.clone();
        problems.extend(run_cases("config", cases, move |bytes| {
            std::fs::write(&p, bytes).map_err(|e| e.to_string())?;
            t.record(gpusim::run_manifest(&m, Some(&p), &sets))
        }));
        tally.assert_both(c);
        let _ = std::fs::remove_dir_all(&scratch_dir);
    }
    report("config", total, problems);
}

#[test]
fn mutations_are_deterministic_and_varied() {
    let src = b"ld.global.u32 %r1, [%rd2+4];\nadd.s32 %r3, %r1, 17;\n";
    let a = mutations(src, 7, 5, 50);
    let b = mutations(src, 7, 5, 50);
    assert_eq!(a, b, "same seed, same mutations");
    assert_eq!(
        a.iter().filter(|m| m.0.starts_with("truncate")).count(),
        src.len().div_ceil(5)
    );
    let distinct: std::collections::BTreeSet<&Vec<u8>> = a.iter().map(|m| &m.1).collect();
    assert!(
        distinct.len() > 40,
        "mutations should differ: {}",
        distinct.len()
    );
    assert!(
        a.iter().filter(|m| m.1 != src).count() > 45,
        "nearly every mutation changes the input"
    );
    assert_eq!(swap(b"ab cd ef", (0, 2), (6, 8)), b"ef cd ab");
    assert_eq!(numbers(b"x -12 y7"), vec![(2, 5), (7, 8)]);
}

/// The inputs that used to panic or abort, each pinned down (found by the mutations above).
#[test]
fn former_panics_are_errors() {
    let dir = scratch("regressions");
    let ptx = root().join("traces/kernels/vecadd/vecadd.ptx");
    let run = |name: &str,
               grid: &str,
               block: &str,
               shape: &str,
               init: &str,
               set: &[(&str, &str)]| {
        let text = format!(
            "kernel: {}\nlaunches:\n  - entry: vecadd\n    grid: {grid}\n    block: {block}\n    args: [a, a, a, 8]\nbuffers:\n  a: {{ dtype: i32, shape: {shape}, init: {init} }}\n",
            ptx.display()
        );
        let p = dir.join(format!("{name}.yaml"));
        std::fs::write(&p, text).unwrap();
        let mut sets = cli_set();
        sets.extend(set.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        gpusim::run_manifest(&p, None, &sets)
    };
    // The baseline runs.
    run("ok", "[1]", "[32]", "[8]", "zeros", &[]).expect("baseline runs");
    // A block of 2^32 threads overflowed u32 (gpu.rs); since issue 11 it is bad input, before
    // anything runs: CUDA allows 1024 threads per block.
    match run("block", "[1]", "[65536, 65536, 1]", "[8]", "zeros", &[]) {
        Err(gpusim::RunError::Manifest(e)) => {
            assert_eq!(e.path, "launches[0].block", "{e}");
            assert!(e.message.contains("1024"), "{e}");
        }
        other => panic!("expected a launch error, got {:?}", other.err()),
    }
    // 2^96 CTAs overflowed u64 (gpu.rs), then ran into the watchdog; since issue 11 a grid
    // beyond CUDA's limits is bad input.
    match run(
        "grid",
        "[4294967295, 4294967295, 4294967295]",
        "[32]",
        "[8]",
        "zeros",
        &[],
    ) {
        Err(gpusim::RunError::Manifest(e)) => {
            assert_eq!(e.path, "launches[0].grid", "{e}");
            assert!(e.message.contains("2147483647"), "{e}");
        }
        other => panic!("expected a launch error, got {:?}", other.err()),
    }
    // Buffer sizes overflowed usize or exhausted memory (launch/mod.rs): now a manifest error.
    for shape in [
        "[9223372036854775807]",
        "[4294967296, 4294967296]",
        "[2147483648]",
    ] {
        match run("shape", "[1]", "[32]", shape, "zeros", &[]) {
            Err(gpusim::RunError::Manifest(e)) => {
                assert_eq!(e.path, "buffers.a.shape", "{e}");
                assert!(e.message.contains("MiB"), "{e}");
            }
            other => panic!("{shape}: expected a manifest error, got {:?}", other.err()),
        }
    }
    // An integer `random` init with a huge range overflowed i128/u128 (launch/init.rs); since
    // issue 11 bounds beyond the dtype are bad input, and the full range still runs.
    for (low, high) in [("0", "1e308"), ("1e308", "1e308"), ("-1e308", "1e308")] {
        let init = format!("{{ random: {{ seed: 1, low: {low}, high: {high} }} }}");
        match run("random", "[1]", "[32]", "[8]", &init, &[]) {
            Err(gpusim::RunError::Manifest(e)) => {
                assert_eq!(e.path, "buffers.a.init", "{e}");
                assert!(e.message.contains("i32"), "{e}");
            }
            other => panic!(
                "{low}..{high}: expected a manifest error, got {:?}",
                other.err()
            ),
        }
    }
    let init = "{ random: { seed: 1, low: -2147483648, high: 2147483647 } }";
    run("random", "[1]", "[32]", "[8]", init, &[]).expect("the full i32 range runs");
    // Huge slot counts aborted on allocation (config/mod.rs): now a config error naming the key.
    for key in ["sm.count", "sm.max_warps", "sm.max_ctas", "sm.schedulers"] {
        match run(
            "slots",
            "[1]",
            "[32]",
            "[8]",
            "zeros",
            &[(key, "2147483647")],
        ) {
            Err(gpusim::RunError::Config(e)) => {
                assert_eq!(e.path, key, "{e}");
                assert!(e.message.contains("at most"), "{e}");
            }
            other => panic!("{key}: expected a config error, got {:?}", other.err()),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
