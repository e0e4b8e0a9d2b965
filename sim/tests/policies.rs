//! Reconvergence policies end to end (`sm.reconvergence`): every policy computes the same
//! memory on every race-free trace while cycles and SIMD efficiency differ, every policy is
//! deterministic, and `convergence-barrier` (independent thread scheduling) finishes the
//! spin-lock that livelocks the stack-based policies, reaches barriers group by group, waits
//! at `bar.warp.sync` for its mask, and runs a `.sync` collective once for every live thread
//! of its membermask.

use gpusim::{run_manifest, RunError, RunOutput};
use std::path::{Path, PathBuf};

const POLICIES: [&str; 5] = [
    "token-stack",
    "pdom-stack",
    "convergence-barrier",
    "multi-path",
    "thread-frontiers",
];

/// The convergence-barrier switch rules besides the default (`backward-branch`).
const SWITCH_RULES: [&str; 2] = ["{switch: quantum, quantum: 256}", "{switch: blocked}"];

/// Traces left out of the same-memory comparison, and why.
const SKIPPED: &[(&str, &str)] = &[
    (
        "t5_spinlock_warp",
        "expects a liveness fault (the SIMT deadlock of Habermaier §6.1) under the stack-based \
         policies, while convergence-barrier completes it (`convergence_barrier_finishes_the_spin_lock`)",
    ),
    (
        "t5_spinlock_warp_notokens",
        "as t5_spinlock_warp",
    ),
    (
        "t12_bar_warp_arrival",
        "tests the formal model's warp-level arrival (only lane 0 of each warp executes \
         `@p bar.sync`): the warp-synchronous policies complete it, while under \
         convergence-barrier only executing threads arrive (PTX ISA 9.0 `barrier{.cta}`), so \
         the CTA deadlocks (`its_barrier_counts_only_executing_threads`)",
    ),
];

/// Buffers that observe the order or grouping of diverged paths, which is what the policies
/// choose differently: (trace, buffer, why).
const PATH_DEPENDENT: &[(&str, &str, &str)] = &[
    ("t2_if_else", "ev", EV),
    ("t2_if_else_notokens", "ev", EV),
    ("t4_nested_ret", "ev", EV),
    ("t11_1_ret_taken", "ev", EV),
    ("t11_2_ret_not_taken", "ev", EV),
    ("t11_3_ret_both", "ev", EV),
    ("t11_5_exit_drains", "ev", EV),
    (
        "t11_6_partial_warp",
        "mask",
        "ballots of the active mask after a divergent loop: a yielding convergence-barrier group \
         clears the loop's barrier, so the exits run in groups",
    ),
];

const EV: &str = "tickets in the order the warp ran its diverged blocks: the token stack runs the \
                  taken path first, thread frontiers the highest-priority block, the IPDOM stack \
                  leaves a path that returns until the others finish, multi-path interleaves";

fn traces_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces")
}

fn manifests(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            manifests(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml")
            && std::fs::read_to_string(&p).is_ok_and(|t| t.contains("launches:"))
        {
            out.push(p);
        }
    }
}

fn name(m: &Path) -> String {
    m.file_stem().unwrap().to_string_lossy().to_string()
}

fn sets(policy: &str, extra: Option<&str>) -> Vec<(String, String)> {
    let mut s = vec![("sm.reconvergence".to_string(), policy.to_string())];
    if let Some(e) = extra {
        s.push(("sm.convergence_barrier".to_string(), e.to_string()));
    }
    s
}

fn run(m: &Path, policy: &str, extra: Option<&str>) -> Result<RunOutput, RunError> {
    run_manifest(m, None, &sets(policy, extra))
}

/// Run `f` on every item with two threads; collect the error lines.
fn parallel<T: Sync>(items: &[T], f: impl Fn(&T) -> Vec<String> + Sync) -> Vec<String> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = items
            .chunks(items.len().div_ceil(2).max(1))
            .map(|chunk| s.spawn(move || chunk.iter().flat_map(f).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// Every policy (and every switch rule of convergence-barrier) leaves the same buffers as the
/// token stack on every race-free trace of `traces/kernels` and `traces/semantics`, and passes
/// the trace's checks, except for the path-dependent buffers listed in `PATH_DEPENDENT`.
#[test]
fn every_policy_computes_the_same_memory() {
    let mut list = Vec::new();
    manifests(&traces_root().join("kernels"), &mut list);
    manifests(&traces_root().join("semantics"), &mut list);
    list.retain(|m| !SKIPPED.iter().any(|(t, _)| *t == name(m)));
    assert!(list.len() > 40, "traces found: {}", list.len());
    let mut configs: Vec<(&str, Option<&str>)> = POLICIES[1..].iter().map(|p| (*p, None)).collect();
    configs.extend(
        SWITCH_RULES
            .iter()
            .map(|r| ("convergence-barrier", Some(*r))),
    );
    let errors = parallel(&list, |m| {
        let t = name(m);
        let excluded = |b: &str| PATH_DEPENDENT.iter().any(|e| e.0 == t && e.1 == b);
        let reference = match run(m, "token-stack", None) {
            Ok(o) if o.failures.is_empty() => o,
            Ok(o) => return vec![format!("{t} token-stack: checks failed {:?}", o.failures)],
            Err(e) => return vec![format!("{t} token-stack: {e}")],
        };
        let mut errs = Vec::new();
        for (p, extra) in &configs {
            let label = format!("{t} under {p} {}", extra.unwrap_or(""));
            let out = match run(m, p, *extra) {
                Ok(o) => o,
                Err(e) => {
                    errs.push(format!("{label}: {e}"));
                    continue;
                }
            };
            for f in out.failures.iter().filter(|f| !excluded(&f.buffer)) {
                errs.push(format!("{label}: check failed {f:?}"));
            }
            for (a, b) in reference.buffers.iter().zip(&out.buffers) {
                if a.0 == b.0 && a.3 != b.3 && !excluded(&a.0) {
                    errs.push(format!("{label}: buffer `{}` differs", a.0));
                }
            }
        }
        errs
    });
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The policies differ in timing: each takes a different number of cycles than the token
/// stack on some divergent kernel, and issues with a different SIMD efficiency on some.
#[test]
fn cycles_and_simd_efficiency_differ() {
    let divergent = [
        "mandelbrot",
        "bfs_step",
        "switch_case",
        "bitonic_sort",
        "spmv_csr",
        "compact",
        "recursive",
    ];
    let stats = |p: &str| -> Vec<(u64, f64)> {
        divergent
            .iter()
            .map(|k| {
                let m = traces_root().join(format!("kernels/{k}/{k}.yaml"));
                let o = run(&m, p, None).unwrap_or_else(|e| panic!("{k} under {p}: {e}"));
                (o.stats.totals.cycles, o.stats.totals.simd_efficiency)
            })
            .collect()
    };
    let reference = stats("token-stack");
    for p in &POLICIES[1..] {
        let s = stats(p);
        assert!(
            s.iter().zip(&reference).any(|(a, b)| a.0 != b.0),
            "{p}: same cycles as the token stack on every divergent kernel"
        );
        assert!(
            s.iter().zip(&reference).any(|(a, b)| a.1 != b.1),
            "{p}: same SIMD efficiency as the token stack on every divergent kernel"
        );
    }
}

/// Two runs of the same trace under the same policy give identical cycles, instruction
/// counts and buffers.
#[test]
fn every_policy_is_deterministic() {
    let traces = [
        "kernels/mandelbrot/mandelbrot",
        "kernels/bfs_step/bfs_step",
        "kernels/recursive/recursive",
        "kernels/switch_case/switch_case",
        "semantics/t4_nested_ret/t4_nested_ret",
        "semantics/t11_6_partial_warp/t11_6_partial_warp",
        "policies/its_divergent_barriers/its_divergent_barriers",
        "policies/its_collectives/its_collectives",
    ];
    let mut cases: Vec<(&str, &str, Option<&str>)> = Vec::new();
    for t in traces {
        for p in POLICIES {
            if !t.starts_with("policies/") || p == "convergence-barrier" {
                cases.push((t, p, None));
            }
        }
        cases.push((t, "convergence-barrier", Some(SWITCH_RULES[0])));
    }
    let errors = parallel(&cases, |(t, p, extra)| {
        let m = traces_root().join(format!("{t}.yaml"));
        let a = run(&m, p, *extra).unwrap_or_else(|e| panic!("{t} under {p}: {e}"));
        let b = run(&m, p, *extra).unwrap_or_else(|e| panic!("{t} under {p}: {e}"));
        let key = |o: &RunOutput| {
            (
                o.stats.totals.cycles,
                o.stats.totals.warp_instructions,
                o.stats.totals.thread_instructions,
            )
        };
        let same_buffers = a.buffers.iter().zip(&b.buffers).all(|(x, y)| x.3 == y.3);
        if key(&a) == key(&b) && same_buffers {
            vec![]
        } else {
            vec![format!("{t} under {p}: two runs differ")]
        }
    });
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Habermaier §6.1: the spin-lock of one warp livelocks every stack-based policy, and thread
/// frontiers (the spinning thread has the higher priority); independent thread scheduling
/// finishes it under the yielding switch rules, each thread entering the critical section
/// once, never two at a time, and the lock ends at 1. Under `switch: blocked` the spinning
/// group never yields: liveness fault again.
#[test]
fn convergence_barrier_finishes_the_spin_lock() {
    for t in ["t5_spinlock_warp", "t5_spinlock_warp_notokens"] {
        let m = traces_root().join(format!("semantics/{t}/{t}.yaml"));
        for p in [
            "token-stack",
            "pdom-stack",
            "multi-path",
            "thread-frontiers",
        ] {
            let o = run(&m, p, None).unwrap_or_else(|e| panic!("{t} under {p}: {e}"));
            let f = o.expected_fault.expect("the manifest expects a fault");
            assert_eq!(f.kind.name(), "liveness", "{t} under {p}");
        }
        let blocked = run(&m, "convergence-barrier", Some(SWITCH_RULES[1])).unwrap();
        assert_eq!(
            blocked.expected_fault.map(|f| f.kind.name()),
            Some("liveness"),
            "{t}: a group that never yields spins forever"
        );
        for extra in [None, Some(SWITCH_RULES[0])] {
            let o = run(&m, "convergence-barrier", extra)
                .unwrap_or_else(|e| panic!("{t} under convergence-barrier: {e}"));
            assert!(o.expected_fault.is_none(), "{t}: completes");
            // The manifest expects the liveness fault of the token stack: that is the only
            // check that fails.
            let failed: Vec<&str> = o.failures.iter().map(|f| f.buffer.as_str()).collect();
            assert_eq!(failed, ["(expect_fault)"], "{t}");
            let buf = |n: &str| -> Vec<i32> {
                let b = &o.buffers.iter().find(|b| b.0 == n).unwrap().3;
                b.chunks(4)
                    .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
                    .collect()
            };
            assert_eq!(buf("lockout"), [1], "{t}: the lock ends at 1");
            assert_eq!(buf("cs"), [1, 1], "{t}: each thread entered once");
            assert_eq!(buf("seen"), [0, 0], "{t}: mutual exclusion");
            assert_eq!(buf("done"), [2], "{t}: both threads released the lock");
            assert_eq!(buf("inside"), [0], "{t}");
        }
    }
}

/// The barrier traces of `traces/policies` (the others are the collective traces of
/// `sync_collectives_wait_for_their_members`).
const BARRIER_TRACES: [&str; 4] = [
    "its_aligned_barrier_sites",
    "its_divergent_barriers",
    "its_exit_after_barrier",
    "its_warp_sync",
];

/// The `.sync` collective traces of `traces/policies`.
const COLLECTIVE_TRACES: [&str; 3] = [
    "its_collective_deadlock",
    "its_collective_exited",
    "its_collectives",
];

fn policy_trace(t: &str) -> PathBuf {
    traces_root().join(format!("policies/{t}/{t}.yaml"))
}

/// A buffer of a run as i32 values.
fn i32s(o: &RunOutput, buffer: &str) -> Vec<i32> {
    let b = &o.buffers.iter().find(|b| b.0 == buffer).unwrap().3;
    b.chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The independent-thread-scheduling barrier traces (`traces/policies`): `barrier.sync`/
/// `barrier.red` reached group by group at two instructions each, the same with the aligned
/// `bar.sync`/`bar.red` (barrier divergence, the fault its manifest expects), a group waiting at
/// `bar.sync` while the rest of its warp exits, and `bar.warp.sync` on both sides of a branch.
/// They pass under convergence-barrier (their manifests select it) and are faults for the
/// lockstep token stack.
#[test]
fn independent_thread_scheduling_traces() {
    let mut list = Vec::new();
    manifests(&traces_root().join("policies"), &mut list);
    let mut names: Vec<String> = list.iter().map(|m| name(m)).collect();
    names.sort();
    let mut known: Vec<&str> = BARRIER_TRACES
        .iter()
        .chain(&COLLECTIVE_TRACES)
        .copied()
        .collect();
    known.sort();
    assert_eq!(
        names, known,
        "every trace of traces/policies is tested here"
    );
    for t in BARRIER_TRACES {
        let m = &policy_trace(t);
        let o = run_manifest(m, None, &[]).unwrap_or_else(|e| panic!("{t}: {e}"));
        assert!(o.failures.is_empty(), "{t}: {:?}", o.failures);
        match run(m, "token-stack", None) {
            Err(RunError::Fault(f)) => assert_eq!(f.kind.name(), "barrier-divergence", "{t}"),
            Ok(o) if o.expected_fault.is_some() => assert_eq!(
                o.expected_fault.unwrap().kind.name(),
                "barrier-divergence",
                "{t}"
            ),
            Err(e) => panic!("{t} under token-stack: {e}"),
            Ok(_) => panic!("{t} under token-stack: expected a barrier-divergence fault"),
        }
    }
}

/// `.sync` collectives under convergence-barrier (independent thread scheduling, sm_70
/// modules) wait for every live thread of their membermask and then run once for all of them:
/// with the full mask on both sides of an if/else, shfl.sync, vote.sync and match.sync give
/// the converged results (`its_collectives`, values from its_collectives.py), exited lanes of
/// the mask are not waited for (`its_collective_exited`), each lane of a collective issued for
/// both sides obeys its own instruction's guard (`gballot`), and a mask naming threads that never
/// arrive is a deadlock the simulator reports (`its_collective_deadlock`), under every switch
/// rule. The lockstep policies run each collective with the active half of the warp: a shuffle
/// from a lane of the other side reads that lane's register as this side's instruction names it
/// (0 where the other side never wrote it), ballots and matches see only their own side.
#[test]
fn sync_collectives_wait_for_their_members() {
    let rules = [None, Some(SWITCH_RULES[0]), Some(SWITCH_RULES[1])];
    for t in ["its_collectives", "its_collective_exited"] {
        for extra in rules {
            let o = run(&policy_trace(t), "convergence-barrier", extra)
                .unwrap_or_else(|e| panic!("{t} under {extra:?}: {e}"));
            assert!(
                o.failures.is_empty(),
                "{t} under {extra:?}: {:?}",
                o.failures
            );
        }
    }
    let lanes = 0..32i32;
    for p in [
        "token-stack",
        "pdom-stack",
        "multi-path",
        "thread-frontiers",
    ] {
        let o = run(&policy_trace("its_collectives"), p, None).unwrap();
        assert_eq!(
            i32s(&o, "shfl"),
            lanes
                .clone()
                .map(|l| if l < 16 { 3 * (l ^ 16) + 1 } else { 0 })
                .collect::<Vec<_>>(),
            "its_collectives under {p}"
        );
        assert_eq!(
            i32s(&o, "ballot"),
            lanes
                .clone()
                .map(|l| if l < 16 { 0xAAAA } else { 0x1111_0000 })
                .collect::<Vec<_>>(),
            "its_collectives under {p}"
        );
        assert_eq!(
            i32s(&o, "match"),
            lanes
                .clone()
                .map(|l| if l < 16 { 0x1111 } else { 0x1111_0000 } << (l & 3))
                .collect::<Vec<_>>(),
            "its_collectives under {p}"
        );
        assert_eq!(
            i32s(&o, "gballot"),
            lanes
                .clone()
                .map(|l| match l {
                    0..=15 => 0xFFFF,
                    _ if l % 4 == 0 => 0x1111_0000,
                    _ => -2,
                })
                .collect::<Vec<_>>(),
            "its_collectives under {p}"
        );
        let failed: Vec<&str> = o.failures.iter().map(|f| f.buffer.as_str()).collect();
        assert_eq!(failed, ["shfl", "ballot", "match", "gballot"], "{p}");
        let o = run(&policy_trace("its_collective_exited"), p, None).unwrap();
        assert_eq!(
            i32s(&o, "shfl"),
            lanes
                .clone()
                .map(|l| match l {
                    0..=7 | 16..=23 => 0,
                    8..=15 => 5 * (l + 8),
                    _ => -1,
                })
                .collect::<Vec<_>>(),
            "its_collective_exited under {p}"
        );
        assert_eq!(
            i32s(&o, "ballot"),
            lanes
                .clone()
                .map(|l| match l {
                    0..=7 => 0xAA,
                    8..=23 => 0xAA_AA00,
                    _ => -1,
                })
                .collect::<Vec<_>>(),
            "its_collective_exited under {p}"
        );
    }
    let m = policy_trace("its_collective_deadlock");
    for extra in rules {
        let o = run(&m, "convergence-barrier", extra).unwrap();
        assert!(o.failures.is_empty(), "{extra:?}: {:?}", o.failures);
        let f = o.expected_fault.expect("the manifest expects a deadlock");
        assert_eq!(f.kind.name(), "deadlock", "{extra:?}");
        assert!(
            f.message.contains("independent thread scheduling deadlock"),
            "{}",
            f.message
        );
        assert!(
            f.details.iter().any(|d| d.contains(".sync collective")),
            "{:?}",
            f.details
        );
    }
    // The lockstep token stack runs the vote with lanes 0..15 and completes.
    let o = run(&m, "token-stack", None).unwrap();
    assert!(o.expected_fault.is_none());
    let failed: Vec<&str> = o.failures.iter().map(|f| f.buffer.as_str()).collect();
    assert_eq!(failed, ["(expect_fault)"]);
    assert_eq!(
        i32s(&o, "out"),
        lanes
            .map(|l| if l < 16 { 0x5555 } else { 7 })
            .collect::<Vec<_>>()
    );
}

/// Only modules for sm_70 or higher wait at `.sync` collectives: for `.target sm_6x` or below
/// PTX requires the member threads to execute the instruction converged (and the IR does not
/// tell a legacy `vote`/`shfl` from `.sync` with a full mask), so there convergence-barrier
/// runs the collective with the current group, like the lockstep policies.
#[test]
fn sync_collectives_before_sm_70_run_with_the_group() {
    let dir = std::env::temp_dir().join(format!("gpusim_its_sm52_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = traces_root().join("policies/its_collectives");
    let ptx = std::fs::read_to_string(src.join("its_collectives.ptx")).unwrap();
    assert!(ptx.contains(".target sm_70"));
    std::fs::write(
        dir.join("its_collectives.ptx"),
        ptx.replace(".target sm_70", ".target sm_52"),
    )
    .unwrap();
    std::fs::copy(
        src.join("its_collectives.yaml"),
        dir.join("its_collectives.yaml"),
    )
    .unwrap();
    let m = dir.join("its_collectives.yaml");
    let its = run(&m, "convergence-barrier", None).unwrap();
    let lockstep = run(&m, "token-stack", None).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    for b in ["shfl", "ballot", "match", "side", "gballot"] {
        assert_eq!(i32s(&its, b), i32s(&lockstep, b), "{b}");
    }
    assert!(!its.failures.is_empty());
}

/// `sm.reconvergence` names a policy; a wrong name lists the choices. The convergence-barrier
/// section rejects unknown keys and a zero quantum.
#[test]
fn policy_configuration_errors() {
    let m = traces_root().join("kernels/vecadd/vecadd.yaml");
    let e = run_manifest(&m, None, &[("sm.reconvergence".into(), "stack".into())])
        .err()
        .expect("an unknown policy is an error")
        .to_string();
    for choice in POLICIES {
        assert!(e.contains(choice), "{e}");
    }
    let e = run(&m, "convergence-barrier", Some("{swich: quantum}"))
        .err()
        .expect("an unknown key is an error")
        .to_string();
    assert!(e.contains("swich") && e.contains("switch"), "{e}");
    let e = run(
        &m,
        "convergence-barrier",
        Some("{switch: quantum, quantum: 0}"),
    )
    .err()
    .expect("a zero quantum is an error")
    .to_string();
    assert!(e.contains("sm.convergence_barrier.quantum"), "{e}");
    let e = run(&m, "convergence-barrier", Some("{switch: sometimes}"))
        .err()
        .expect("an unknown switch rule is an error")
        .to_string();
    assert!(
        e.contains("backward-branch") && e.contains("blocked"),
        "{e}"
    );
}

/// Under independent thread scheduling only the threads that execute a barrier arrive (PTX ISA
/// 9.0 `barrier{.cta}`: an executing thread waits for all non-exited threads of its warp):
/// `t12_bar_warp_arrival`, where only lane 0 of each warp executes `@p bar.sync 0`, deadlocks
/// under convergence-barrier and completes under the token stack (the formal model counts a
/// converged warp's arrival for all its lanes).
#[test]
fn its_barrier_counts_only_executing_threads() {
    let m = traces_root().join("semantics/t12_bar_warp_arrival/t12_bar_warp_arrival.yaml");
    let ok = run(&m, "token-stack", None).expect("the token stack completes it");
    assert!(ok.failures.is_empty(), "{:?}", ok.failures);
    match run(&m, "convergence-barrier", None) {
        Err(e) => assert!(e.to_string().contains("deadlock"), "{e}"),
        Ok(_) => panic!("guard-false lanes must not arrive under convergence-barrier"),
    }
}
