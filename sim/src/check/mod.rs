//! `gpusim check MANIFEST`: the simulator against the semantic reference models
//! (`gpusim-models`, which share no code with it).
//!
//! What one check does:
//! 1. runs the simulator `runs` times (at least one) under randomised knobs — the first run as
//!    configured, the others with the seeded random scheduler and jittered L2, DRAM and
//!    interconnect latencies (`knobs`) — holds run 0 under the manifest's own policy to the
//!    manifest's `checks:` and `expect_fault` (the other runs' results against them are
//!    reported), and, for a race-free kernel, requires every run to end in the same final
//!    memory (or the same fault);
//! 2. runs the lock-step and the interleaving semantics (`models::lockstep`) on the same
//!    launches and buffers: for a race-free, divergence-free kernel the final buffers must
//!    equal the simulator's; a barrier divergence the models find must be a fault in the
//!    simulator too, and one the simulator finds must be found by the models; races are
//!    reported (the simulator does not detect them, so memory is not compared);
//! 3. runs the uniformity analysis (`models::uniformity`): a kernel it accepts must never
//!    diverge at a barrier in any run;
//! 4. under the `token-stack` policy, runs the formal branching model (`models::token_stack`)
//!    and compares, warp by warp, the state after every control instruction with the
//!    simulator's (`compare::token_stacks`);
//! 5. for a kernel with asynchronous units (wgmma, TMA, `cp.async`, mbarriers), runs the
//!    asynchronous-synchronisation checker (`models::async_sync`, the Exo-GPU abstract
//!    machine) over the first run's events: every violation is a disagreement (`async_sync`);
//! 6. for a manifest that names a SIMT-Step litmus test (`litmus:`), requires every run's
//!    outcome to lie in the allowed set of the variant the policy claims, and reports the
//!    strongest variant consistent with the runs (`litmus`). Litmus runs also randomise the
//!    convergence-barrier switch rule (`knobs::for_litmus_run`). Under a policy claiming CM,
//!    each warp collective's lanes must be its dynamic block's threads
//!    (`litmus::subgroup_masks`, from the runs' warp traces).
//!
//! A model that does not support the kernel (an instruction outside its subset) is reported
//! and skipped, never counted as agreement. The first disagreement is the verdict (exit 1),
//! with the run, the step and the expected and observed values. A check in which no
//! comparison reached a verdict (every run faulted, no model could judge the kernel) is
//! inconclusive (`CheckReport::inconclusive`, exit 1), not agreement.

mod async_sync;
mod compare;
pub mod fuzz;
mod knobs;
pub mod litmus;
mod models;

use crate::launch::LoadedManifest;
use crate::run::{RunError, RunOptions, RunOutput};
use std::path::{Path, PathBuf};

/// What `gpusim check` was asked for.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    pub config: Option<PathBuf>,
    pub sets: Vec<(String, String)>,
    /// The reconvergence policy to run (`sm.reconvergence`); the config's when `None`.
    pub policy: Option<String>,
    pub runs: u32,
    pub seed: u64,
    /// Simulator runs at once (`crate::threads`); the report does not depend on it.
    pub threads: usize,
}

/// The outcome: one line per thing checked, and the first disagreement if any.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    pub lines: Vec<String>,
    pub disagreement: Option<String>,
    /// Nothing disagreed, but nothing was compared either (every simulator run faulted and no
    /// reference could judge the kernel, ...): why. Not agreement (`gpusim check` exits 1).
    pub inconclusive: Option<String>,
    /// For a litmus manifest: the outcomes observed and the strongest consistent variant.
    pub litmus: Option<litmus::LitmusVerdict>,
    /// Comparisons that reached a verdict (a reference's final memory or divergence against
    /// the runs, the manifest's checks, token-stack steps, litmus outcomes, async events).
    evidence: u32,
}

impl CheckReport {
    fn note(&mut self, line: String) {
        self.lines.push(line);
    }

    fn fail(&mut self, why: String) {
        if self.disagreement.is_none() {
            self.disagreement = Some(why);
        }
    }

    /// A comparison reached a verdict (agreeing or not).
    fn compared(&mut self) {
        self.evidence += 1;
    }

    /// A line that records a verdict reached.
    fn note_compared(&mut self, line: String) {
        self.compared();
        self.note(line);
    }

    /// Everything agreed and something was compared.
    pub fn agrees(&self) -> bool {
        self.disagreement.is_none() && self.inconclusive.is_none()
    }

    /// No disagreement, but no comparison reached a verdict: that is not agreement.
    fn settle(&mut self) {
        if self.disagreement.is_none() && self.evidence == 0 {
            self.inconclusive = Some(
                "nothing was compared: no simulator run completed or met the manifest's \
                 expectations, and no reference model could judge the kernel (see the lines \
                 above)"
                    .into(),
            );
        }
    }
}

/// How one simulator run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The buffers after the last launch, by name.
    Buffers(Vec<(String, Vec<u8>)>),
    /// A kernel fault: its kind name and message.
    Fault(String, String),
}

impl Outcome {
    fn of(r: Result<RunOutput, RunError>) -> Result<Outcome, RunError> {
        match r {
            Ok(out) => {
                // A fault the manifest expects still ends the run in that fault.
                if let Some(f) = &out.expected_fault {
                    return Ok(Outcome::Fault(f.kind.name().to_string(), f.to_string()));
                }
                let bufs = out
                    .buffers
                    .iter()
                    .map(|(n, _, _, b)| (n.clone(), b.clone()))
                    .collect();
                Ok(Outcome::Buffers(bufs))
            }
            Err(RunError::Fault(f)) => Ok(Outcome::Fault(f.kind.name().to_string(), f.to_string())),
            Err(e) => Err(e),
        }
    }

    fn describe(&self) -> String {
        match self {
            Outcome::Buffers(b) => format!("completed ({} buffers)", b.len()),
            Outcome::Fault(k, _) => format!("{k} fault"),
        }
    }
}

/// Check `manifest`. Input errors (manifest, config, PTX) are `Err`; everything else is in the
/// report.
pub fn check(manifest: &Path, o: &CheckOptions) -> Result<CheckReport, RunError> {
    if o.runs == 0 {
        return Err(crate::launch::ManifestError {
            file: "gpusim check".into(),
            path: "--runs".into(),
            message: "0: at least one simulator run is needed (runs >= 1)".into(),
        }
        .into());
    }
    let lm = LoadedManifest::load(manifest)?;
    let kernel_path = lm.resolve(&lm.manifest.kernel);
    let src = std::fs::read_to_string(&kernel_path).map_err(|e| crate::launch::ManifestError {
        file: manifest.display().to_string(),
        path: "kernel".into(),
        message: format!("cannot read {}: {e}", kernel_path.display()),
    })?;
    let module = gpusim_isa::parse_module(&kernel_path.display().to_string(), &src)?;
    let mut report = CheckReport::default();

    let base = crate::run::load_config_for(
        o.config.as_deref(),
        Some(manifest),
        &manifest_sets(&lm),
        &o.sets,
    )?
    .for_module(&module)?;
    let configured_policy = base.sm.reconvergence.name().to_string();
    let policy = o
        .policy
        .clone()
        .unwrap_or_else(|| configured_policy.clone());
    let binding = lm.litmus()?;
    let mut outcomes = Vec::new();
    // The SIMT-Step variant each run's machine claims (litmus manifests only).
    let mut claims = Vec::new();
    // Each run's warp trace (litmus manifests only; empty otherwise).
    let mut traces = Vec::new();
    let uses_async = gpusim_models::async_sync::Interest::new(&module).uses_async();
    let mut async_events = Vec::new();
    // Per run: whether the manifest's expectations held (None: nothing to verify).
    let mut expectations: Vec<Option<bool>> = Vec::new();
    // The runs are independent: they run `o.threads` at a time and are judged in order.
    let shown = crate::progress::Counter::new("check", "simulator runs", o.runs as u64);
    let finished = std::sync::atomic::AtomicU64::new(0);
    let runs = crate::threads::map(o.runs as usize, o.threads, |i| {
        let i = i as u32;
        let (sets, knobs) = match binding {
            Some(_) => knobs::for_litmus_run(&base, &o.sets, &policy, o.seed, i),
            None => knobs::for_run(&base, &o.sets, &policy, o.seed, i),
        };
        let claim = match binding {
            Some(_) => Some(litmus::claim(
                &crate::run::load_config(o.config.as_deref(), &manifest_sets(&lm), &sets)?
                    .for_module(&module)?,
            )),
            None => None,
        };
        // Litmus runs keep their warp traces for the subgroup-mask invariant; the first run
        // of a kernel with asynchronous units records the async checker's events.
        let opts = RunOptions {
            trace_warps: binding.is_some(),
            progress: true,
            skip_tensor_math: false,
            record_async: i == 0 && uses_async,
            parallel: Default::default(),
            sample: None,
            lines: false,
        };
        let r = crate::run::run_manifest_with(manifest, o.config.as_deref(), &sets, &opts);
        shown.set(finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
        Ok::<_, RunError>((knobs, claim, r))
    });
    for (i, run) in runs.into_iter().enumerate() {
        let (knobs, claim, mut r) = run?;
        claims.extend(claim);
        if i == 0 && uses_async {
            if let Ok(out) = &mut r {
                async_events = std::mem::take(&mut out.async_events);
            }
        }
        traces.push(match &mut r {
            Ok(out) => std::mem::take(&mut out.events),
            Err(_) => Vec::new(),
        });
        // The manifest's expectations describe its own machine: run 0 under the configured
        // policy is `gpusim run` with the same options, and decides. The knobs of the other
        // runs, or another `--policy`, change what order-observing kernels may output (the
        // semantics judge those runs), so there a failure is reported, not counted.
        let decisive = i == 0 && policy == configured_policy;
        let held = manifest_expectations(&lm, &knobs, &r, decisive, &mut report);
        expectations.push(held);
        outcomes.push((knobs, Outcome::of(r)?));
    }
    report.note(format!(
        "simulator: {} run(s) under policy {policy}: {}",
        outcomes.len(),
        summarise(&outcomes)
    ));
    let verified: Vec<bool> = expectations.iter().flatten().copied().collect();
    if !lm.manifest.checks.is_empty() || lm.manifest.expect_fault.is_some() {
        let held = verified.iter().filter(|&&h| h).count();
        report.note(if verified.is_empty() {
            "manifest checks: not verified: no run completed".to_string()
        } else if held == verified.len() {
            format!("manifest checks: met in all {held} run(s)")
        } else {
            format!(
                "manifest checks: met in {held} of {} run(s)",
                verified.len()
            )
        });
    }

    if let Some(b) = &binding {
        if litmus::warps_fit(&b.test, base.sm.warp_size) {
            report.litmus = litmus::judge(b, &lm.manifest, &outcomes, &claims, &mut report);
            litmus::subgroup_masks(
                b,
                &outcomes,
                &claims,
                &traces,
                base.sm.warp_size,
                &mut report,
            );
        } else {
            report.fail(format!(
                "SIMT-Step {}: {} threads in subgroups of {} do not map onto warps of {} lanes (set `sm.warp_size` in the manifest)",
                b.test.name, b.test.threads, b.test.subgroup, base.sm.warp_size
            ));
        }
    }
    if uses_async {
        // The events name pcs of the program the simulator ran (tokens inserted).
        let prepared = crate::core::Program::prepare(module.clone())?;
        async_sync::check_launches(&prepared.module, &async_events, &mut report);
    }
    let refs = if async_sync::has_tensor_maps(&lm) {
        async_sync::references_skipped(&mut report)
    } else {
        models::run_references(&module, &lm, &mut report)?
    };
    // Warp-synchronous policies count a converged warp's arrival at a barrier for all its
    // lanes, guarded off or not (the formal model's barrier rule); independent thread
    // scheduling counts threads.
    let arrivals = compare::Arrivals {
        whole_warps: policy != "convergence-barrier"
            || base.sm.barrier_divergence == crate::config::BarrierDivergence::CountWarp,
        exited: base.sm.exited_warps_arrive,
    };
    compare::runs_against_references(&outcomes, &refs, arrivals, &mut report);
    let racy = [&refs.lockstep, &refs.interleaving].iter().any(|r| {
        matches!(
            r,
            models::RefResult::Verdict {
                verdict: gpusim_models::lockstep::Verdict::DataRace(_),
                ..
            }
        )
    });
    compare::lint_against_runs(&module, &lm, &outcomes, &mut report);
    if policy == "token-stack" && async_sync::has_tensor_maps(&lm) {
        report.note(
            "token stack: not compared: the reference model cannot lay out tensor-map arguments"
                .into(),
        );
    } else if policy == "token-stack" && clustered(&module, &lm) {
        report.note(
            "token stack: not compared: a cluster of several CTAs needs several SMs, and the reference's CTA order needs one"
                .into(),
        );
    } else if policy == "token-stack" {
        // One SM holding one CTA at a time runs CTAs in sequence, as the reference does.
        let mut sets = o.sets.clone();
        sets.extend([
            ("sm.reconvergence".to_string(), policy.clone()),
            ("sm.count".to_string(), "1".to_string()),
            ("sm.max_ctas".to_string(), "1".to_string()),
        ]);
        let opts = RunOptions {
            trace_warps: true,
            progress: true,
            skip_tensor_math: false,
            record_async: false,
            parallel: Default::default(),
            sample: None,
            lines: false,
        };
        match crate::run::run_manifest_with(manifest, o.config.as_deref(), &sets, &opts) {
            Ok(out) => {
                compare::token_stacks(&module, &lm, &out, base.sm.warp_size, racy, &mut report)?
            }
            Err(RunError::Fault(f)) => report.note(format!(
                "token stack: the one-SM run faulted ({}); no trace to compare",
                f.kind.name()
            )),
            Err(e) => return Err(e),
        }
    }
    report.settle();
    Ok(report)
}

/// Whether a launch runs clusters of more than one CTA (the manifest's or the kernel's
/// `.reqnctapercluster`): a one-SM machine cannot hold them (`core::limits`).
fn clustered(module: &gpusim_isa::Module, lm: &LoadedManifest) -> bool {
    lm.manifest.launches.iter().any(|l| {
        let required = module
            .find_function(&l.entry)
            .and_then(|f| module.function(f).req_cluster);
        l.cluster
            .map(|c| c.0)
            .or(required)
            .is_some_and(|c| c.iter().product::<u32>() > 1)
    })
}

/// The manifest's own expectations on one run: its `checks:` must pass, and a fault it
/// expects (`expect_fault`) must be the one that happened (`gpusim run` exits 1 otherwise).
/// A failure on a `decisive` run is a disagreement; on another it is reported.
fn manifest_expectations(
    lm: &LoadedManifest,
    knobs: &str,
    r: &Result<RunOutput, RunError>,
    decisive: bool,
    report: &mut CheckReport,
) -> Option<bool> {
    let m = &lm.manifest;
    let failed = match r {
        Ok(out) if !out.failures.is_empty() => {
            let what: Vec<String> = out.failures.iter().map(describe_failure).collect();
            format!("the manifest's checks fail: {}", what.join("; "))
        }
        Ok(_) => {
            if m.checks.is_empty() && m.expect_fault.is_none() {
                return None;
            }
            report.compared();
            return Some(true);
        }
        Err(RunError::Fault(f)) => match m.expect_fault {
            Some(want) => format!(
                "the manifest expects a {} fault, the run faulted with {}: {f}",
                want.name(),
                f.kind.name()
            ),
            None => return None,
        },
        Err(_) => return None,
    };
    if decisive {
        report.fail(format!("{knobs}: {failed}"));
    } else {
        report.note(format!(
            "{knobs}: {failed} (not counted: the manifest's expectations describe its own \
             configuration, run 0 under its policy; this run's knobs or policy differ)"
        ));
    }
    Some(false)
}

/// One failed check as `gpusim run` reports it, on one line.
fn describe_failure(f: &crate::launch::CheckFailure) -> String {
    let first: Vec<String> = f
        .first
        .iter()
        .map(|(i, got, exp)| format!("[{i}] got {got}, expected {exp}"))
        .collect();
    format!(
        "{} ({} mismatches: {})",
        f.buffer,
        f.mismatches,
        first.join(", ")
    )
}

/// The manifest's own `set:` overrides, in the form `load_config` takes.
fn manifest_sets(lm: &LoadedManifest) -> Vec<(String, serde_norway::Value)> {
    lm.manifest
        .set
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn summarise(outcomes: &[(String, Outcome)]) -> String {
    let first = &outcomes[0].1;
    if outcomes.iter().all(|(_, o)| o == first) {
        format!("all {}, identical", first.describe())
    } else {
        let kinds: Vec<String> = outcomes
            .iter()
            .map(|(k, o)| format!("[{k}: {}]", o.describe()))
            .collect();
        format!("outcomes differ: {}", kinds.join(" "))
    }
}
