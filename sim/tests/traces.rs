//! Every manifest under `traces/` runs on the default config and must pass its checks (or
//! fault exactly as it says it should). Adding a trace adds it here.

use std::path::{Path, PathBuf};

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

fn traces_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces")
}

fn run_all(sub: &str) {
    run_all_with(sub, None, &[]);
}

/// The `.target` of a manifest's kernel, and whether the config (after `sets`) can run it.
fn runnable(manifest: &Path, config: Option<&Path>, sets: &[(String, String)]) -> bool {
    let text = std::fs::read_to_string(manifest).unwrap();
    let kernel = text
        .lines()
        .find_map(|l| l.strip_prefix("kernel:"))
        .map(|k| k.split('#').next().unwrap().trim().to_string())
        .expect("a manifest names its kernel");
    let ptx = std::fs::read_to_string(manifest.parent().unwrap().join(kernel)).unwrap();
    let target = ptx
        .lines()
        .find_map(|l| l.trim().strip_prefix(".target"))
        .and_then(|t| gpusim::config::Arch::parse(t.split(',').next().unwrap().trim()))
        .expect("a kernel names its target");
    let cfg_text = match config {
        Some(p) => std::fs::read_to_string(p).unwrap(),
        None => gpusim::config::TINY_YAML.to_string(),
    };
    let cfg = gpusim::config::Config::from_yaml("c", &cfg_text, sets).unwrap();
    cfg.sm.arch.runs(target)
}

/// `check` on every manifest of `list`, split over two threads; what the checks pushed.
fn on_two_threads(list: &[PathBuf], check: impl Fn(&Path, &mut Vec<String>) + Sync) -> Vec<String> {
    std::thread::scope(|s| {
        let check = &check;
        let handles: Vec<_> = list
            .chunks(list.len().div_ceil(2).max(1))
            .map(|chunk| {
                s.spawn(move || {
                    let mut fails = Vec::new();
                    for m in chunk {
                        check(m, &mut fails);
                    }
                    fails
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// Run every manifest under `traces/<sub>` with a config file and `--set` overrides. A trace
/// built for a generation the config's GPU cannot run must be refused as bad input (exit 2),
/// naming its target.
fn run_all_with(sub: &str, config: Option<&Path>, sets: &[(String, String)]) {
    let mut list = Vec::new();
    manifests(&traces_root().join(sub), &mut list);
    assert!(!list.is_empty(), "no manifests under traces/{sub}");
    let failures = on_two_threads(&list, |m, fails| {
        if !runnable(m, config, sets) {
            match gpusim::run_manifest(m, config, sets) {
                Err(gpusim::RunError::Target(e)) if e.message.contains(".target") => {}
                Err(e) => fails.push(format!(
                    "{}: refused, but not by its target: {e}",
                    m.display()
                )),
                Ok(_) => fails.push(format!(
                    "{}: ran although its target is newer than the config's sm.arch",
                    m.display()
                )),
            }
            return;
        }
        match gpusim::run_manifest(m, config, sets) {
            Ok(out) if out.failures.is_empty() => {}
            Ok(out) => fails.push(format!(
                "{}: checks failed: {:?}",
                m.display(),
                out.failures
            )),
            Err(e) => fails.push(format!("{}: {e}", m.display())),
        }
    });
    assert!(
        failures.is_empty(),
        "{} of {} traces failed:\n{}",
        failures.len(),
        list.len(),
        failures.join("\n")
    );
}

#[test]
fn semantics_traces() {
    run_all("semantics");
}

#[test]
fn kernel_traces() {
    run_all("kernels");
}

#[test]
fn isa_traces() {
    run_all("isa");
}

#[test]
fn microbench_traces() {
    run_all("microbench");
}

/// Warp-level `mma.sync` (f16, bf16, tf32) against NumPy's matrix products.
#[test]
fn tensor_traces() {
    run_all("tensor");
}

/// The GEMM kernels of `gpusim gemm` (traces/gemm/build.py): SIMT SGEMM and the bf16
/// mma.sync/ldmatrix/cp.async pipeline, against NumPy's products.
#[test]
fn gemm_traces() {
    run_all("gemm");
}

/// Reconvergence-policy traces (their manifests select the policy; see `tests/policies.rs`).
#[test]
fn policy_traces() {
    run_all("policies");
}

/// L1-coherence litmus traces (`traces/memory/coherence/gen.py`): a stale L1 read the formal
/// model permits, and a fence, `.cg` or `volatile` removing it.
#[test]
fn memory_traces() {
    run_all("memory");
}

/// The memory system's policies change timing, never the results of a correctly synchronised
/// kernel: every kernel trace passes its checks with other replacement and row policies, with
/// caches too small to hold anything and one MSHR, and with other memory programs — global
/// stores kept dirty in L1 (written back by fences, evictions and the end of the launch) and
/// global loads that bypass L1.
#[test]
fn kernel_traces_under_memory_variants() {
    let variants: [&[(&str, &str)]; 4] = [
        &[
            ("dram.row_policy", "closed"),
            ("l1.replacement", "fifo"),
            ("l2.replacement", "fifo"),
        ],
        &[
            ("l1.size_kib", "1"),
            ("l1.ways", "2"),
            ("l1.mshrs", "1"),
            ("l2.size_kib", "16"),
            ("l2.slices", "1"),
            ("dram.channels", "1"),
            ("dram.banks", "1"),
        ],
        &[(
            "memory_programs.st_global_wb",
            "writeL1; classifyNormalL1; yield; releaseRegs; end;",
        )],
        &[(
            "memory_programs.ld_global_ca",
            "if (!isCachedL2) { reserveL2; yield; readMem; yield; updateL2; } readL2; yield; writeToRegs; yield; releaseRegs; end;",
        )],
    ];
    for v in variants {
        let sets: Vec<(String, String)> = v
            .iter()
            .map(|(k, x)| (k.to_string(), x.to_string()))
            .collect();
        run_all_with("kernels", None, &sets);
    }
}

/// SIMT-Step litmus tests as PTX (`traces/litmus/simt_step/*.yaml`): their checks assert only
/// what every outcome the weakest executable variant allows shares; `gpusim check` judges the
/// whole outcome against the test (`litmus:` key).
#[test]
fn litmus_traces() {
    run_all("litmus");
}

#[test]
fn fault_traces() {
    run_all("faults");
}

/// Results do not depend on the scheduling policy: every race-free kernel gives the same
/// outputs under every scheduler (their cycles differ; see `sim/tests/cli.rs`).
#[test]
fn kernel_traces_under_every_scheduler() {
    for s in ["gto", "oldest", "random", "two-level"] {
        run_all_with(
            "kernels",
            None,
            &[
                ("sm.scheduler".into(), s.into()),
                ("sm.scheduler_seed".into(), "11".into()),
            ],
        );
    }
}

/// What `sm.reconvergence: auto` decides by target (traces/arch/build.py: one source built
/// for compute_70 and compute_60).
#[test]
fn arch_traces() {
    run_all("arch");
}

/// Every shipped GPU config runs every kernel and litmus trace its generation can run (and
/// refuses the others). The Fermi config also runs the traces built for sm_52 — the CUDA 12
/// toolchain's oldest target, which the formal report's kernels use — with its generation
/// raised as a user would (`--set sm.arch=sm_52`).
#[test]
fn traces_on_every_config() {
    let fermi = traces_root().join("../configs/fermi-gtx480.yaml");
    let sm52 = [("sm.arch".to_string(), "sm_52".to_string())];
    for sub in ["kernels", "semantics", "faults", "microbench"] {
        run_all_with(sub, Some(&fermi), &sm52);
    }
    for name in ["fermi-gtx480", "volta-v100", "ampere-a100", "hopper-h100"] {
        let cfg = traces_root().join(format!("../configs/{name}.yaml"));
        run_all_with("arch", Some(&cfg), &[]);
        run_all_with("kernels", Some(&cfg), &[]);
        run_all_with("semantics", Some(&cfg), &[]);
        run_all_with("microbench", Some(&cfg), &[]);
        run_all_with("isa", Some(&cfg), &[]);
        run_all_with("tensor", Some(&cfg), &[]);
        run_all_with("gemm", Some(&cfg), &[]);
        run_all_with("memory", Some(&cfg), &[]);
        run_all_with("litmus", Some(&cfg), &[]);
    }
}

/// Issue 12: the component memory system (`memory_engine: components`, the default: the tests
/// above run it) gives the same results whatever order the SMs step in and however blocked
/// operations are retried (ascending, retrying those whose wait changed, against shuffled,
/// retrying every one: every trace on tiny); and the issue-time model it replaced
/// (`memory_engine: issue`, kept for comparison) still runs every trace on tiny and the
/// kernel, memory and GEMM traces on the V100 to the same checks and faults.
#[test]
fn traces_on_both_memory_engines() {
    let issue = [("memory_engine".to_string(), "issue".to_string())];
    let comp = [("memory_engine".to_string(), "components".to_string())];
    let v100 = traces_root().join("../configs/volta-v100.yaml");
    for sub in [
        "semantics",
        "kernels",
        "isa",
        "microbench",
        "tensor",
        "gemm",
        "policies",
        "memory",
        "litmus",
        "faults",
        "arch",
        "fuzz",
    ] {
        run_all_with(sub, None, &issue);
    }
    for sub in ["kernels", "memory", "gemm"] {
        run_all_with(sub, Some(&v100), &issue);
    }
    let mut list = Vec::new();
    manifests(&traces_root(), &mut list);
    let failures = on_two_threads(&list, |m, fails| {
        if !runnable(m, None, &[]) {
            return;
        }
        let run = |extra: &[(&str, &str)]| {
            let mut sets = comp.to_vec();
            sets.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
            fingerprint(gpusim::run_manifest(m, None, &sets))
        };
        let (a, b) = (
            run(&[]),
            run(&[
                ("debug.step_order", "shuffled"),
                ("debug.step_seed", "3"),
                ("debug.retry_blocked", "every"),
                ("debug.classify", "every-cycle"),
            ]),
        );
        if a != b {
            fails.push(format!(
                "{}: shuffled order retrying every blocked operation and classifying every warp every cycle differs from ascending retrying those whose wait changed with warps parked:\n  {}\n  vs\n  {}",
                m.display(),
                first_difference(&a, &b),
                first_difference(&b, &a)
            ));
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What a run produced, less what may vary between identical runs (wall time and rates).
fn fingerprint(r: Result<gpusim::RunOutput, gpusim::RunError>) -> String {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| k != "wall_seconds" && k != "warp_instructions_per_second");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    match r {
        Ok(out) => {
            let mut stats = serde_json::to_value(&out.stats).unwrap();
            strip(&mut stats);
            let buffers: Vec<_> = out.buffers.iter().map(|b| (&b.0, &b.3)).collect();
            format!(
                "stats {stats}\nbuffers {buffers:?}\nfailures {:?}\nfault {:?}",
                out.failures,
                out.expected_fault.map(|f| f.to_string())
            )
        }
        Err(e) => format!("error {e}"),
    }
}

/// Issue 12: no result depends on the order in which the SMs are stepped within a cycle
/// (`debug.step_order`): every trace gives the same cycles, stats, buffers and faults stepped
/// ascending, descending and in a shuffled order.
#[test]
fn results_do_not_depend_on_step_order() {
    let mut list = Vec::new();
    manifests(&traces_root(), &mut list);
    assert!(list.len() > 100, "found only {} manifests", list.len());
    let orders: [&[(&str, &str)]; 3] = [
        &[("debug.step_order", "ascending")],
        &[("debug.step_order", "descending")],
        &[("debug.step_order", "shuffled"), ("debug.step_seed", "7")],
    ];
    let failures = on_two_threads(&list, |m, fails| {
        if !runnable(m, None, &[]) {
            return;
        }
        let prints: Vec<String> = orders
            .iter()
            .map(|o| {
                let sets: Vec<(String, String)> = o
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                fingerprint(gpusim::run_manifest(m, None, &sets))
            })
            .collect();
        for (o, p) in orders.iter().zip(&prints).skip(1) {
            let what = format!("{} under {o:?} differs from ascending", m.display());
            note_difference(fails, &what, &prints[0], p);
        }
    });
    assert!(
        failures.is_empty(),
        "{} traces depend on the step order:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Issue 13: no result depends on the number of threads stepping the SMs (`core::crew`):
/// every trace gives the same cycles, stats, buffers and faults on 1 and 2 threads (most run
/// on tiny's 2 SMs, so a third thread would idle), with every cycle's SM phase handed out
/// however little work it has (`min_phase` 0); and a few on V100's 80 SMs on 1, 2 and 3
/// threads, where each thread gets many.
#[test]
fn results_do_not_depend_on_the_thread_count() {
    let mut list = Vec::new();
    manifests(&traces_root(), &mut list);
    assert!(list.len() > 100, "found only {} manifests", list.len());
    let on = |m: &Path, config: Option<&Path>, threads: usize| {
        let opts = gpusim::RunOptions {
            parallel: gpusim::core::crew::Parallel {
                threads,
                min_phase: std::time::Duration::ZERO,
            },
            ..Default::default()
        };
        fingerprint(gpusim::run_manifest_with(m, config, &[], &opts))
    };
    let compare = |m: &Path, config: Option<&Path>, counts: &[usize], fails: &mut Vec<String>| {
        let serial = on(m, config, 1);
        for &threads in counts {
            let what = format!("{} on {threads} threads differs from 1", m.display());
            note_difference(fails, &what, &serial, &on(m, config, threads));
        }
    };
    let mut failures = on_two_threads(&list, |m, fails| {
        if runnable(m, None, &[]) {
            compare(m, None, &[2], fails);
        }
    });
    let v100 = traces_root().join("../configs/volta-v100.yaml");
    for k in ["vecadd", "sgemm_tiled", "histogram", "bitonic_sort"] {
        let m = traces_root().join(format!("kernels/{k}/{k}.yaml"));
        compare(&m, Some(&v100), &[2, 3], &mut failures);
    }
    assert!(
        failures.is_empty(),
        "{} traces depend on the thread count:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// If fingerprint `b` is not `a`, a failure: `what`, then both from shortly before they
/// differ.
fn note_difference(fails: &mut Vec<String>, what: &str, a: &str, b: &str) {
    if a != b {
        fails.push(format!(
            "{what}:\n  {}\n  vs\n  {}",
            first_difference(a, b),
            first_difference(b, a)
        ));
    }
}

/// `a` from shortly before its first difference with `b`.
fn first_difference(a: &str, b: &str) -> String {
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let lo = at.saturating_sub(80);
    a.chars().skip(a[..lo].chars().count()).take(160).collect()
}
