//! Tests of the token-stack reference (`gpusim_models::token_stack`) on the formal report's
//! example programs: every manifest of `traces/semantics/` (final memory against its
//! `checks:`, or the liveness verdict its `expect_fault` names), and the step-by-step states
//! of Listings 5.5 and 5.7 against the paper's tables (the fixtures of
//! `sim/tests/formal/`, whose `*.golden` tables `sim/tests/formal_traces.rs` reads too). Holds
//! a reader for the small YAML subset the manifests use.

use gpusim_isa::ir::{FuncId, Op};
use gpusim_isa::parse_module;
use gpusim_models::ptx_exec::{GlobalMemory, Launch};
use gpusim_models::token_stack::{run, Disable, Error, ExecState, Options, Run, Token, TokenKind};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

struct Buffer {
    name: String,
    float: bool,
    data: Vec<u8>,
}

struct Manifest {
    dir: PathBuf,
    kernel: String,
    warp_size: u32,
    entry: String,
    grid: [u32; 3],
    block: [u32; 3],
    args: Vec<String>,
    buffers: Vec<Buffer>,
    checks: Vec<(String, Vec<f64>)>,
    expect_fault: Option<String>,
}

fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.split('#').next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text after `key:` up to the end of its line.
fn scalar<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let i = text.find(&format!("{key}:"))?;
    Some(text[i + key.len() + 1..].lines().next()?.trim())
}

/// The `[ ... ]` list after `key:` in `text`, its items trimmed.
fn list(text: &str, key: &str) -> Vec<String> {
    let i = text
        .find(&format!("{key}:"))
        .unwrap_or_else(|| panic!("no `{key}` in {text}"));
    let rest = &text[i..];
    let open = rest.find('[').unwrap();
    let close = rest.find(']').unwrap();
    rest[open + 1..close]
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn dims(text: &str, key: &str) -> [u32; 3] {
    let v: Vec<u32> = list(text, key).iter().map(|s| s.parse().unwrap()).collect();
    [v[0], v[1], v[2]]
}

/// The `{ ... }` starting at `open` (an index of `{`), braces balanced.
fn braced(text: &str, open: usize) -> &str {
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced braces in {text}")
}

fn load(path: &Path) -> Manifest {
    let text = strip_comments(&std::fs::read_to_string(path).unwrap());
    let buffers_at = text.find("buffers:").unwrap();
    let checks_at = text.find("checks:");
    let buf_text = &text[buffers_at + 8..checks_at.unwrap_or(text.len())];
    let mut buffers = Vec::new();
    let mut pos = 0;
    while let Some(rel) = buf_text[pos..].find('{') {
        let open = pos + rel;
        let name = buf_text[..open]
            .trim_end()
            .trim_end_matches(':')
            .rsplit(|c: char| c.is_whitespace())
            .next()
            .unwrap()
            .to_string();
        let body = braced(buf_text, open);
        pos = open + body.len() + 2;
        let dtype = scalar(body, "dtype").unwrap().split(',').next().unwrap();
        let float = dtype == "f32";
        assert!(
            matches!(dtype, "f32" | "i32" | "u32"),
            "dtype {dtype} of {name}"
        );
        let n: usize = list(body, "shape")
            .iter()
            .map(|s| s.parse::<usize>().unwrap())
            .product();
        let init = &body[body.find("init:").unwrap() + 5..];
        let values: Vec<f64> = if init.trim_start().starts_with("zeros") {
            vec![0.0; n]
        } else if init.contains("values:") {
            list(init, "values")
                .iter()
                .map(|s| s.parse().unwrap())
                .collect()
        } else if init.contains("iota:") {
            let start: f64 = scalar(init, "start")
                .unwrap()
                .split(',')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let step: f64 = scalar(init, "step")
                .unwrap()
                .trim_end_matches(['}', ' '])
                .parse()
                .unwrap();
            (0..n).map(|i| start + step * i as f64).collect()
        } else {
            let fill: f64 = scalar(init, "fill")
                .unwrap()
                .trim_end_matches(['}', ' '])
                .parse()
                .unwrap();
            vec![fill; n]
        };
        assert_eq!(values.len(), n, "buffer {name}");
        let data = values
            .iter()
            .flat_map(|&v| {
                if float {
                    (v as f32).to_le_bytes()
                } else {
                    (v as i64 as u32).to_le_bytes()
                }
            })
            .collect();
        buffers.push(Buffer { name, float, data });
    }
    let mut checks = Vec::new();
    if let Some(c) = checks_at {
        for item in text[c..].split("- buffer:").skip(1) {
            let name = item.split_whitespace().next().unwrap().to_string();
            let values = list(item, "values")
                .iter()
                .map(|s| s.parse().unwrap())
                .collect();
            checks.push((name, values));
        }
    }
    Manifest {
        dir: path.parent().unwrap().to_path_buf(),
        kernel: scalar(&text, "kernel").unwrap().to_string(),
        warp_size: scalar(&text, "sm.warp_size").unwrap().parse().unwrap(),
        entry: scalar(&text, "entry").unwrap().to_string(),
        grid: dims(&text, "grid"),
        block: dims(&text, "block"),
        args: list(&text, "args"),
        buffers,
        checks,
        expect_fault: scalar(&text, "expect_fault").map(str::to_string),
    }
}

fn execute(m: &Manifest) -> (GlobalMemory, Result<Run, Error>) {
    let src = std::fs::read_to_string(m.dir.join(&m.kernel)).unwrap();
    let module = parse_module(&m.kernel, &src).unwrap();
    let mut mem = GlobalMemory::new();
    for b in &m.buffers {
        mem.alloc(&b.name, b.data.clone());
    }
    let args = m
        .args
        .iter()
        .map(|a| mem.base(a).unwrap_or_else(|| panic!("arg {a}")))
        .collect();
    let launch = Launch {
        grid: m.grid,
        block: m.block,
        dynamic_shared: 0,
        args,
    };
    let opts = Options {
        warp_size: m.warp_size,
        liveness_bound: 20_000,
        max_warp_steps: 1_000_000,
        trace: true,
    };
    let r = run(&module, &m.entry, &launch, mem.clone(), &opts);
    (mem, r)
}

fn words(m: &Manifest, mem: &GlobalMemory, name: &str) -> Vec<f64> {
    let float = m.buffers.iter().find(|b| b.name == name).unwrap().float;
    mem.buffer(name)
        .unwrap()
        .chunks_exact(4)
        .map(|c| {
            let b: [u8; 4] = c.try_into().unwrap();
            if float {
                f64::from(f32::from_le_bytes(b))
            } else {
                f64::from(i32::from_le_bytes(b))
            }
        })
        .collect()
}

/// Traces of `traces/semantics/` this model does not run, with the reason. Every trace runs
/// at present; an entry must still fail with `Error::Unsupported`.
const UNSUPPORTED: &[(&str, &str)] = &[];

fn semantics_manifests() -> Vec<PathBuf> {
    let dir = root().join("traces/semantics");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            p.join(format!("{name}.yaml"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_semantics_trace_ends_as_its_manifest_expects() {
    let manifests = semantics_manifests();
    assert!(manifests.len() >= 24, "found {}", manifests.len());
    let mut failures = Vec::new();
    let mut passed = 0;
    for path in &manifests {
        let name = path.file_stem().unwrap().to_str().unwrap();
        let m = load(path);
        let (_, result) = execute(&m);
        if let Some((_, why)) = UNSUPPORTED.iter().find(|u| u.0 == name) {
            assert!(
                matches!(result, Err(Error::Unsupported { .. })),
                "{name} is listed as unsupported ({why}) but ran: {:?}",
                result.as_ref().err()
            );
            continue;
        }
        match (&m.expect_fault, result) {
            (Some(kind), Err(Error::Liveness { .. })) if kind == "liveness" => passed += 1,
            (Some(kind), other) => failures.push(format!(
                "{name}: expected a {kind} fault, got {:?}",
                other.err()
            )),
            (None, Err(e)) => failures.push(format!("{name}: {e}")),
            (None, Ok(r)) => {
                assert!(!m.checks.is_empty(), "{name} has no checks");
                let mut ok = true;
                for (buf, want) in &m.checks {
                    let got = words(&m, &r.memory, buf);
                    if &got != want {
                        ok = false;
                        failures.push(format!("{name}: {buf} = {got:?}, expected {want:?}"));
                    }
                }
                passed += usize::from(ok);
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    assert_eq!(passed + UNSUPPORTED.len(), manifests.len());
}

#[test]
fn spin_lock_within_one_warp_is_a_liveness_violation_and_terminates_across_warps() {
    for name in ["t5_spinlock_warp", "t5_spinlock_warp_notokens"] {
        let m = load(&root().join(format!("traces/semantics/{name}/{name}.yaml")));
        match execute(&m).1 {
            Err(Error::Liveness { at, why }) => {
                // The winner broke divergently and waits on the break token at the bottom.
                assert!(at.state.contains("(break,11,"), "{name}: {at} {why}");
                assert!(at.state.contains('b'), "{name}: {at}");
            }
            other => panic!(
                "{name}: expected a liveness violation, got {:?}",
                other.err()
            ),
        }
    }
    // Warp size 1 (per-thread scheduling, the digest's contrast): the same kernel terminates.
    let mut m = load(&root().join("traces/semantics/t5_spinlock_warp/t5_spinlock_warp.yaml"));
    m.warp_size = 1;
    let r = execute(&m).1.expect("terminates with one lane per warp");
    assert_eq!(words(&m, &r.memory, "cs"), vec![1.0, 1.0]);
}

/// The states after each instruction of the listing (pcs in `pcs` of `func`) and after the
/// caller's final `exit`, as "pc state".
fn control_trace(manifest: &str, func: &str, pcs: std::ops::RangeInclusive<u32>) -> Vec<String> {
    let m = load(&root().join("sim/tests/formal").join(manifest));
    let (_, r) = execute(&m);
    let r = r.unwrap();
    // Without a check the sequence below could come from a run that computed nonsense.
    for (buf, want) in &m.checks {
        assert_eq!(&words(&m, &r.memory, buf), want, "{manifest}: {buf}");
    }
    assert_eq!(r.traces.len(), 1);
    r.traces[0]
        .iter()
        .filter(|s| {
            (s.func == func && pcs.contains(&s.pc))
                || (s.func != func && s.text.starts_with("exit"))
        })
        .map(|s| format!("{} {}", s.pc, s.state))
        .collect()
}

/// The paper's state table of a listing (`sim/tests/formal/NAME.golden`, shared with the
/// simulator's test): one "pc α=… δ=… stack=…" line per step.
fn golden(name: &str) -> Vec<String> {
    std::fs::read_to_string(root().join(format!("sim/tests/formal/{name}.golden")))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn listing_5_5_steps_are_the_papers_table() {
    let got = control_trace("listing_5_5.yaml", "listing_5_5", 4..=11);
    assert_eq!(got, golden("listing_5_5"), "\n{}", got.join("\n"));
}

#[test]
fn listing_5_7_steps_are_the_papers_table() {
    // pcs 14–18 store the result and are not in the paper's table.
    let got: Vec<String> = control_trace("listing_5_7.yaml", "f", 5..=19)
        .into_iter()
        .filter(|l| !(14..=18).any(|pc| l.starts_with(&format!("{pc} "))))
        .collect();
    assert_eq!(got, golden("listing_5_7"), "\n{}", got.join("\n"));
}

fn run_text(src: &str, block: u32, warp_size: u32) -> Result<Run, Error> {
    let module = parse_module("inline.ptx", src).unwrap();
    let launch = Launch {
        grid: [1, 1, 1],
        block: [block, 1, 1],
        dynamic_shared: 0,
        args: vec![],
    };
    let opts = Options {
        warp_size,
        ..Options::default()
    };
    run(&module, "k", &launch, GlobalMemory::new(), &opts)
}

#[test]
fn a_sync_without_its_token_is_rejected_before_running() {
    // `validate_tokens` refuses what stack consistency (3) forbids at run time.
    let src = ".version 7.0\n.target sm_52\n.address_size 64\n\
               .visible .entry k()\n{\n    .reg .b32 r;\n    mov.u32 r, 1;\n    sync;\n    exit;\n}\n";
    match run_text(src, 2, 2) {
        Err(Error::Setup(why)) => assert!(why.contains("line 8"), "{why}"),
        other => panic!("expected a setup error, got {:?}", other.err()),
    }
}

#[test]
fn the_runtime_checks_name_the_violated_condition() {
    let tok = |kind, mask, pc| Token {
        kind,
        mask,
        func: FuncId(0),
        pc,
    };
    let mut st = ExecState {
        func: FuncId(0),
        pc: 9,
        alpha: 0b01,
        delta: vec![Disable::Enabled; 2],
        stack: vec![tok(TokenKind::Sync, 0b11, 12)],
    };
    // (5): the sync token must name the instruction after the `sync`.
    let e = st.check_stack_consistency(&Op::Sync, false).unwrap_err();
    assert!(e.starts_with("(5)"), "{e}");
    st.pc = 11;
    assert_eq!(st.check_stack_consistency(&Op::Sync, false), Ok(()));
    // inact-cons: lane 1 waits on the sync token (pc 12) but would resume elsewhere.
    let refs = [Some((FuncId(0), 11)), Some((FuncId(0), 5))];
    let e = st.check_safety(&refs).unwrap_err();
    assert!(e.starts_with("inact-cons"), "{e}");
    // inv(1): without the token lane 1 could never run again.
    st.stack.clear();
    let e = st.check_safety(&refs).unwrap_err();
    assert!(e.starts_with("inv(1)"), "{e}");
    // unwind on an empty stack with a lane waiting on a break is stuck (⊥).
    st.delta[1] = Disable::Break;
    assert!(st.unwind().is_err());
}

#[test]
fn a_warp_collective_outside_the_model_is_unsupported_with_its_line() {
    let src = ".version 7.0\n.target sm_52\n.address_size 64\n\
               .visible .entry k()\n{\n    .reg .b32 r;\n    mov.u32 r, 1;\n\
               shfl.sync.bfly.b32 r, r, 1, 31, -1;\n    exit;\n}\n";
    match run_text(src, 2, 2) {
        Err(Error::Unsupported { at, .. }) => {
            assert_eq!((at.pc, at.line), (1, 8), "{at}");
            assert!(at.text.starts_with("shfl"), "{at}");
        }
        other => panic!("expected unsupported, got {:?}", other.err()),
    }
}
