//! Tests of the interleaving and lock-step references (`gpusim_models::lockstep`): every litmus
//! kernel of `traces/litmus/lockstep/` against its expectations file (verdict per semantics,
//! final memory for clean ones, under several schedules), and real NVRTC kernels of
//! `traces/kernels/` against their expected outputs under both semantics. Holds a minimal
//! `.npy` reader for those kernels' inputs and outputs.

use gpusim_isa::parse_module;
use gpusim_models::lockstep::{
    run_interleaving, run_lockstep, InterleavingOptions, LockstepOptions, Schedule, Verdict,
};
use gpusim_models::ptx_exec::{AccessKind, GlobalMemory, Launch};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[derive(Default, Debug)]
struct Case {
    name: String,
    file: String,
    block: u32,
    grid: u32,
    buffers: Vec<(String, Vec<u32>)>,
    il: String,
    ls: String,
    finals: Vec<(String, Vec<u32>)>,
    exhaustive: Option<u64>,
    max_steps: Option<u64>,
}

fn nums(s: &str) -> Vec<u32> {
    s.split_whitespace().map(|x| x.parse().unwrap()).collect()
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(root().join("traces/litmus/lockstep/expectations.txt"))
        .expect("expectations file");
    let mut out: Vec<Case> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.push(Case {
                name: name.to_string(),
                file: format!("{name}.ptx"),
                block: 1,
                grid: 1,
                ..Case::default()
            });
            continue;
        }
        let c = out.last_mut().expect("a [case] before its keys");
        let (key, value) = line.split_once('=').expect("key = value");
        let (key, value) = (key.trim(), value.trim());
        let mut words = key.split_whitespace();
        match (words.next().unwrap(), words.next()) {
            ("file", None) => c.file = value.to_string(),
            ("note", None) => {}
            ("block", None) => c.block = value.parse().unwrap(),
            ("grid", None) => c.grid = value.parse().unwrap(),
            ("il", None) => c.il = value.to_string(),
            ("ls", None) => c.ls = value.to_string(),
            ("exhaustive", None) => c.exhaustive = Some(value.parse().unwrap()),
            ("max_steps", None) => c.max_steps = Some(value.parse().unwrap()),
            ("buffer", Some(b)) => c.buffers.push((b.to_string(), nums(value))),
            ("final", Some(b)) => c.finals.push((b.to_string(), nums(value))),
            (k, _) => panic!("unknown key `{k}` in case {}", c.name),
        }
    }
    out
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

type Outcome = Result<GlobalMemory, Verdict>;

fn check(case: &Case, what: &str, expected: &str, got: Outcome) {
    let kind = match &got {
        Ok(_) => "ok",
        Err(v) => v.kind(),
    };
    assert_eq!(
        kind,
        expected,
        "{} under {what}: {}",
        case.name,
        got.as_ref().err().map_or(String::new(), |v| v.to_string())
    );
    if let Ok(mem) = got {
        for (b, want) in &case.finals {
            assert_eq!(
                &words(mem.buffer(b).unwrap()),
                want,
                "{} under {what}: buffer {b}",
                case.name
            );
        }
    }
}

fn setup(case: &Case) -> (gpusim_isa::Module, GlobalMemory, Launch) {
    let path = root().join("traces/litmus/lockstep").join(&case.file);
    let src = std::fs::read_to_string(&path).unwrap();
    let module = parse_module(&case.file, &src).unwrap_or_else(|e| panic!("{e}"));
    let mut mem = GlobalMemory::new();
    let args: Vec<u64> = case
        .buffers
        .iter()
        .map(|(n, v)| mem.alloc(n, v.iter().flat_map(|x| x.to_le_bytes()).collect()))
        .collect();
    let launch = Launch {
        grid: [case.grid, 1, 1],
        block: [case.block, 1, 1],
        dynamic_shared: 0,
        args,
    };
    (module, mem, launch)
}

#[test]
fn litmus_kernels_match_their_expectations() {
    let cases = cases();
    assert!(cases.len() >= 20, "expectations file lists {}", cases.len());
    for case in &cases {
        let (module, mem, launch) = setup(case);
        let max_steps = case.max_steps.unwrap_or(1_000_000);
        let mut schedules = vec![
            Schedule::RunToBarrier,
            Schedule::RoundRobin,
            Schedule::Random { seed: 1 },
            Schedule::Random { seed: 0xC0FFEE },
        ];
        if let Some(max_runs) = case.exhaustive {
            schedules.push(Schedule::Exhaustive { max_runs });
        }
        for schedule in schedules {
            let opts = InterleavingOptions {
                schedule,
                max_steps,
            };
            let got = run_interleaving(&module, "k", &launch, &mem, &opts);
            check(case, &format!("IL {schedule:?}"), &case.il, got);
        }
        let got = run_lockstep(&module, "k", &launch, &mem, &LockstepOptions { max_steps });
        check(case, "LS", &case.ls, got);
    }
}

fn run_case(name: &str, il: bool) -> Outcome {
    let case = cases().into_iter().find(|c| c.name == name).unwrap();
    let (module, mem, launch) = setup(&case);
    if il {
        run_interleaving(&module, "k", &launch, &mem, &InterleavingOptions::default())
    } else {
        run_lockstep(&module, "k", &launch, &mem, &LockstepOptions::default())
    }
}

#[test]
fn races_name_both_threads_lines_and_the_location() {
    for il in [true, false] {
        let Err(Verdict::DataRace(r)) = run_case("a2_scan_no_first_barrier", il) else {
            panic!("expected a race")
        };
        assert_ne!(r.first.tid, r.second.tid);
        assert_ne!(
            r.first.at.line, r.second.at.line,
            "a load and a store: {r:?}"
        );
        assert!([r.first.kind, r.second.kind].contains(&AccessKind::Write));
        let Err(Verdict::DataRace(x)) = run_case("x3_cross_cta_race", il) else {
            panic!("expected a cross-CTA race")
        };
        assert_ne!(x.first.cta, x.second.cta);
        assert_eq!(
            (x.first.kind, x.second.kind),
            (AccessKind::Write, AccessKind::Write)
        );
    }
}

#[test]
fn divergence_reports_the_groups_of_threads() {
    // A4: thread 0 never enters the loop; the others wait at its first barrier. Under IL
    // thread 0 has exited (`End`); under LS it still waits for the block after the loop.
    for il in [true, false] {
        let Err(Verdict::BarrierDivergence(d)) = run_case("a4_shoc_scan_divergent", il) else {
            panic!("expected divergence")
        };
        let zero = d.arrivals.iter().find(|a| a.threads.contains(&0)).unwrap();
        let one = d.arrivals.iter().find(|a| a.threads.contains(&1)).unwrap();
        assert_ne!(zero.at, one.at, "{d:?}");
        assert!(one.at.is_some());
        if il {
            assert_eq!(zero.at, None, "thread 0 has exited");
        }
    }
    // A16a under IL: the same barrier with different loop-counter vectors.
    let Err(Verdict::BarrierDivergence(d)) = run_case("a16a_skip_barrier_iteration", true) else {
        panic!("expected divergence")
    };
    assert!(d
        .arrivals
        .iter()
        .all(|a| a.at == d.arrivals[0].at && a.at.is_some()));
    assert_ne!(d.arrivals[0].loop_counters, d.arrivals[1].loop_counters);
    // A16b: two syntactically distinct barriers.
    let Err(Verdict::BarrierDivergence(d)) = run_case("a16b_two_barriers", true) else {
        panic!("expected divergence")
    };
    assert_ne!(d.arrivals[0].at, d.arrivals[1].at);
}

#[test]
fn unsupported_instructions_name_the_instruction_and_line() {
    for il in [true, false] {
        let Err(Verdict::Unsupported(msg)) = run_case("x5_unsupported_shfl", il) else {
            panic!("expected unsupported")
        };
        let src =
            std::fs::read_to_string(root().join("traces/litmus/lockstep/x5_unsupported_shfl.ptx"));
        let line = src
            .unwrap()
            .lines()
            .position(|l| l.contains("shfl"))
            .unwrap()
            + 1;
        assert!(
            msg.contains("shfl") && msg.contains(&format!("line {line}")),
            "{msg}"
        );
    }
}

// ---- traces/kernels -------------------------------------------------------------------------

/// A `.npy` array: its dtype descriptor and raw little-endian data.
fn read_npy(path: &Path) -> (String, Vec<u8>) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&b[..6], b"\x93NUMPY", "{}", path.display());
    let (hlen, start) = if b[6] == 1 {
        (u16::from_le_bytes([b[8], b[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&b[start..start + hlen]).unwrap();
    let descr = header.split("'descr':").nth(1).unwrap();
    let descr = descr.split('\'').nth(1).unwrap().to_string();
    assert!(header.contains("'fortran_order': False"));
    (descr, b[start + hlen..].to_vec())
}

fn kernel_dir(name: &str) -> PathBuf {
    root().join("traces/kernels").join(name)
}

fn load(name: &str) -> gpusim_isa::Module {
    let file = format!("{name}.ptx");
    let src = std::fs::read_to_string(kernel_dir(name).join(&file)).unwrap();
    parse_module(&file, &src).unwrap()
}

fn assert_close(got: &[u8], want: &[u8], descr: &str, tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    if descr == "<f4" {
        for (i, (g, w)) in got.chunks_exact(4).zip(want.chunks_exact(4)).enumerate() {
            let g = f32::from_le_bytes(g.try_into().unwrap());
            let w = f32::from_le_bytes(w.try_into().unwrap());
            assert!(
                (g - w).abs() <= tol + tol * w.abs(),
                "{what}[{i}]: {g} vs {w}"
            );
        }
    } else {
        assert_eq!(got, want, "{what}");
    }
}

type LaunchSpec<'a> = (&'a str, [u32; 3], [u32; 3], Vec<&'a str>);

/// Run `launches` in order under both semantics; args name buffers (`@name`) or give scalars.
fn both(
    module: &gpusim_isa::Module,
    mem: &GlobalMemory,
    launches: &[LaunchSpec],
) -> Vec<GlobalMemory> {
    let mut out = Vec::new();
    for il in [true, false] {
        let mut m = mem.clone();
        for (entry, grid, block, args) in launches {
            let args = args
                .iter()
                .map(|a| match a.strip_prefix('@') {
                    Some(b) => m.base(b).unwrap(),
                    None => a.parse().unwrap(),
                })
                .collect();
            let launch = Launch {
                grid: *grid,
                block: *block,
                dynamic_shared: 0,
                args,
            };
            m = if il {
                run_interleaving(module, entry, &launch, &m, &InterleavingOptions::default())
            } else {
                run_lockstep(module, entry, &launch, &m, &LockstepOptions::default())
            }
            .unwrap_or_else(|v| panic!("{entry} ({}): {v}", if il { "IL" } else { "LS" }));
        }
        out.push(m);
    }
    out
}

#[test]
fn vecadd_matches_expected_output_under_both_semantics() {
    let d = kernel_dir("vecadd");
    let module = load("vecadd");
    let mut mem = GlobalMemory::new();
    mem.alloc("a", read_npy(&d.join("a.npy")).1);
    mem.alloc("b", read_npy(&d.join("b.npy")).1);
    mem.alloc("c", vec![0; 4000]);
    let (descr, want) = read_npy(&d.join("expected_c.npy"));
    let launches = [(
        "vecadd",
        [4, 1, 1],
        [256, 1, 1],
        vec!["@a", "@b", "@c", "1000"],
    )];
    for m in both(&module, &mem, &launches) {
        assert_close(m.buffer("c").unwrap(), &want, &descr, 1e-6, "vecadd c");
    }
}

#[test]
fn reduce_shared_matches_expected_output_under_both_semantics() {
    let d = kernel_dir("reduce_shared");
    let module = load("reduce_shared");
    let mut mem = GlobalMemory::new();
    mem.alloc("x", read_npy(&d.join("x.npy")).1);
    mem.alloc("partial", vec![0; 64]);
    mem.alloc("total", vec![0; 4]);
    let (descr, want) = read_npy(&d.join("expected_partial.npy"));
    let launches = [
        (
            "reduce_shared",
            [16, 1, 1],
            [256, 1, 1],
            vec!["@x", "@partial", "4000"],
        ),
        (
            "reduce_shared",
            [1, 1, 1],
            [256, 1, 1],
            vec!["@partial", "@total", "16"],
        ),
    ];
    for m in both(&module, &mem, &launches) {
        assert_close(m.buffer("partial").unwrap(), &want, &descr, 0.0, "partial");
        // The manifest's inline check value for `total`.
        assert_eq!(m.buffer("total").unwrap(), (-63614i32).to_le_bytes());
    }
}

#[test]
fn sgemm_tiled_matches_expected_output_under_both_semantics() {
    let d = kernel_dir("sgemm_tiled");
    let module = load("sgemm_tiled");
    let mut mem = GlobalMemory::new();
    mem.alloc("A", read_npy(&d.join("A.npy")).1);
    mem.alloc("B", read_npy(&d.join("B.npy")).1);
    mem.alloc("C", vec![0; 3072 * 4]);
    let (descr, want) = read_npy(&d.join("expected_C.npy"));
    let launches = [(
        "sgemm_tiled",
        [4, 3, 1],
        [16, 16, 1],
        vec!["@A", "@B", "@C", "48", "64", "40"],
    )];
    for m in both(&module, &mem, &launches) {
        assert_close(m.buffer("C").unwrap(), &want, &descr, 1e-4, "sgemm C");
    }
}

/// The sort order's two properties (paper §4; digest X10) on every litmus kernel and the real
/// kernels: forward edges go forward, and each loop is contiguous with its header first.
#[test]
fn sort_order_has_the_papers_properties() {
    use gpusim_isa::analysis::ControlFlow;
    let mut modules: Vec<gpusim_isa::Module> = cases().iter().map(|c| setup(c).0).collect();
    modules.extend(["vecadd", "reduce_shared", "sgemm_tiled"].map(load));
    let mut loops_seen = 0;
    for m in &modules {
        let f = m.entries().next().unwrap();
        let flow = ControlFlow::analyze(f).unwrap();
        let order = gpusim_models::lockstep::sort_order(&flow);
        let pos = |b: usize| order.iter().position(|&x| x == b).unwrap();
        assert_eq!(order[0], flow.cfg.entry());
        for (u, succs) in flow.cfg.succs().iter().enumerate() {
            for &v in succs {
                if !flow.dom.dominates(v, u) {
                    assert!(pos(u) < pos(v), "{}: edge {u}->{v} goes backwards", m.file);
                }
            }
        }
        for l in &flow.loops.loops {
            loops_seen += 1;
            let ps: Vec<usize> = l.body.iter().map(|&b| pos(b)).collect();
            let (lo, hi) = (*ps.iter().min().unwrap(), *ps.iter().max().unwrap());
            assert_eq!(hi - lo + 1, l.body.len(), "{}: loop not contiguous", m.file);
            assert_eq!(lo, pos(l.header), "{}: header not first", m.file);
        }
    }
    assert!(loops_seen >= 10, "{loops_seen} loops checked");
}
