//! `gpusim fuzz`: differential fuzzing of the simulator against the reference models.
//!
//! Each case is a random well-formed kernel (`gen`) written as `kernel.ptx` and `case.yaml`
//! into its own directory, then:
//! 1. the whole `gpusim check` harness runs on it (simulator runs under randomised knobs
//!    against the lock-step and interleaving semantics, the uniformity analysis and, under the
//!    token-stack policy, the formal branching model) — its disagreement is a disagreement;
//! 2. the generator's own claims are checked against the models: a kernel generated race-free
//!    and divergence-free must be judged so by both semantics; a planted race must be found as
//!    a race; a planted divergent barrier must be found as barrier divergence by both
//!    semantics and must not be accepted by the uniformity analysis.
//!
//! A failing case is shrunk (statements deleted, `if`s flattened while the same kind of
//! failure remains) and kept with its original next to it, so that `gpusim check` on the kept
//! manifest reproduces it. Case `i` of a campaign with seed `S` has seed `S + i`, so
//! `gpusim fuzz --seed S+i --cases 1` regenerates it.

mod gen;

pub use gen::{Kind, POLICIES};

use super::models::{run_references, RefResult};
use super::{check, CheckOptions, CheckReport};
use crate::launch::LoadedManifest;
use gpusim_models::lockstep::Verdict;
use std::path::{Path, PathBuf};

/// How a campaign runs.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    /// Keep every case under this directory; otherwise cases go to a temporary directory and
    /// only failing ones are kept.
    pub keep: Option<PathBuf>,
    /// Simulator runs per case (`gpusim check --runs`).
    pub runs: u32,
    /// Shrink failing cases before keeping them.
    pub shrink: bool,
    /// Cases judged at once (`crate::threads`); the report does not depend on it.
    pub threads: usize,
}

impl Default for FuzzOptions {
    fn default() -> FuzzOptions {
        FuzzOptions {
            keep: None,
            runs: 3,
            shrink: true,
            threads: 1,
        }
    }
}

/// One failing case.
#[derive(Clone, Debug)]
pub struct FuzzDisagreement {
    pub seed: u64,
    pub kind: Kind,
    pub policy: &'static str,
    /// What disagreed (the check's verdict or the violated claim), for the shrunk case.
    pub what: String,
    /// The directory holding the shrunk `case.yaml` and `kernel.ptx` (and `original/`).
    pub reproducer: PathBuf,
    /// Simulator runs of the check that disagreed.
    pub runs: u32,
}

impl std::fmt::Display for FuzzDisagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "case seed {} ({}, policy {}): {}\n  reproduce: gpusim check {} --runs {} --seed {}",
            self.seed,
            self.kind.name(),
            self.policy,
            self.what,
            self.reproducer.join("case.yaml").display(),
            self.runs,
            self.seed
        )
    }
}

/// What a campaign found.
#[derive(Clone, Debug, Default)]
pub struct FuzzReport {
    pub cases: u32,
    pub clean: u32,
    pub races: u32,
    /// Planted races both semantics reported as races.
    pub races_detected: u32,
    pub divergent: u32,
    /// Planted divergent barriers both semantics reported and the uniformity analysis flagged.
    pub divergent_detected: u32,
    /// Clean kernels the uniformity analysis flagged anyway (it is conservative: not an error).
    pub uniformity_false_alarms: u32,
    /// Cases per policy, in `POLICIES` order.
    pub per_policy: [u32; 5],
    /// Where the cases were written.
    pub dir: PathBuf,
    pub disagreements: Vec<FuzzDisagreement>,
}

/// Why a case failed; the shrinker keeps a step only if the failure stays the same kind.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Failure {
    /// The simulator, parser or config rejected the generated input.
    Input(String),
    /// `gpusim check` disagreed.
    Check(String),
    /// The models contradicted what the generator planted.
    Claim(String),
}

impl Failure {
    fn same_kind(&self, other: &Failure) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
    fn describe(&self) -> String {
        match self {
            Failure::Input(e) => format!("input rejected: {e}"),
            Failure::Check(d) => format!("gpusim check disagrees: {d}"),
            Failure::Claim(c) => format!("generator claim violated: {c}"),
        }
    }
}

/// What the models said about one case.
struct Verdicts {
    check: CheckReport,
    failure: Option<Failure>,
    detected: bool,
    uniformity_flagged: bool,
}

/// What one case contributes to the report.
struct CaseOutcome {
    kind: Kind,
    policy: &'static str,
    detected: bool,
    uniformity_flagged: bool,
    disagreement: Option<FuzzDisagreement>,
}

/// Run `cases` cases from `seed`, `opts.threads` at a time (each case in its own directory;
/// the report is tallied in case order, so it is the same for any thread count). Errors are
/// only those of writing the cases' files.
pub fn fuzz(seed: u64, cases: u32, opts: &FuzzOptions) -> std::io::Result<FuzzReport> {
    let keep_all = opts.keep.is_some();
    let dir = opts.keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("gpusim-fuzz-{seed}-{}", std::process::id()))
    });
    std::fs::create_dir_all(&dir)?;
    let mut report = FuzzReport {
        dir: dir.clone(),
        ..Default::default()
    };
    let shown = crate::progress::Counter::new("fuzz", "cases", cases as u64);
    let finished = std::sync::atomic::AtomicU64::new(0);
    let outcomes = crate::threads::map(cases as usize, opts.threads, |i| {
        let o = run_case(&dir, seed.wrapping_add(i as u64), opts);
        shown.set(finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
        o
    });
    for o in outcomes {
        tally(&mut report, o?);
    }
    if !keep_all && report.disagreements.is_empty() {
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(report)
}

/// Add case `o` to the report.
fn tally(report: &mut FuzzReport, o: CaseOutcome) {
    report.cases += 1;
    if let Some(k) = POLICIES.iter().position(|p| *p == o.policy) {
        report.per_policy[k] += 1;
    }
    match o.kind {
        Kind::Clean => {
            report.clean += 1;
            report.uniformity_false_alarms += u32::from(o.uniformity_flagged);
        }
        Kind::Race => {
            report.races += 1;
            report.races_detected += u32::from(o.detected);
        }
        Kind::DivergentBarrier => {
            report.divergent += 1;
            report.divergent_detected += u32::from(o.detected);
        }
    }
    report.disagreements.extend(o.disagreement);
}

/// Generate, write and judge the case of seed `case_seed` under `dir`; a failing one is
/// shrunk and kept with its original, a passing one removed unless every case is kept.
fn run_case(dir: &Path, case_seed: u64, opts: &FuzzOptions) -> std::io::Result<CaseOutcome> {
    let case = gen::generate(case_seed);
    let case_dir = dir.join(format!("case-{case_seed}"));
    write_case(&case_dir, &case, &[])?;
    let v = judge(&case_dir, &case, opts.runs);
    let mut outcome = CaseOutcome {
        kind: case.kind,
        policy: case.policy,
        detected: v.detected,
        uniformity_flagged: v.uniformity_flagged,
        disagreement: None,
    };
    let Some(f) = v.failure else {
        if opts.keep.is_none() {
            std::fs::remove_dir_all(&case_dir)?;
        }
        return Ok(outcome);
    };
    let (small, f) = if opts.shrink {
        shrink(&case_dir, case.clone(), f, opts.runs)?
    } else {
        (case.clone(), f)
    };
    let original = case_dir.join("original");
    write_case(&original, &case, &[])?;
    let header = vec![
        format!(
            "gpusim fuzz case seed {case_seed} ({}), shrunk from {} to {} statements (original/).",
            case.kind.name(),
            gen::size(&case.body),
            gen::size(&small.body)
        ),
        format!(
            "Reproduce: gpusim check case.yaml --runs {} --seed {case_seed}",
            opts.runs
        ),
        format!("Found: {}", f.describe()),
    ];
    write_case(&case_dir, &small, &header)?;
    outcome.disagreement = Some(FuzzDisagreement {
        seed: case_seed,
        kind: case.kind,
        policy: case.policy,
        what: f.describe(),
        reproducer: case_dir,
        runs: opts.runs,
    });
    Ok(outcome)
}

fn write_case(dir: &Path, case: &gen::Case, header: &[String]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("kernel.ptx"), gen::ptx(case))?;
    std::fs::write(dir.join("case.yaml"), gen::manifest(case, header))
}

/// Run the harness and the claims on the case written in `dir`.
fn judge(dir: &Path, case: &gen::Case, runs: u32) -> Verdicts {
    let manifest = dir.join("case.yaml");
    let mut v = Verdicts {
        check: CheckReport::default(),
        failure: None,
        detected: false,
        uniformity_flagged: false,
    };
    let o = CheckOptions {
        config: None,
        sets: Vec::new(),
        policy: Some(case.policy.to_string()),
        runs,
        seed: case.seed,
        // The campaign runs its cases in parallel; each case's runs run in turn.
        threads: 1,
    };
    match check(&manifest, &o) {
        Ok(r) => v.check = r,
        Err(e) => {
            v.failure = Some(Failure::Input(e.to_string()));
            return v;
        }
    }
    let claims = claims(&manifest, case.kind);
    match claims {
        Ok((detected, flagged, broken)) => {
            v.detected = detected;
            v.uniformity_flagged = flagged;
            let inconclusive = v
                .check
                .inconclusive
                .as_ref()
                .map(|w| format!("inconclusive: {w}"));
            v.failure = v
                .check
                .disagreement
                .clone()
                .or(inconclusive)
                .map(Failure::Check)
                .or(broken.map(Failure::Claim));
        }
        Err(e) => v.failure = Some(Failure::Input(e)),
    }
    v
}

/// The models on the generator's claims: (planted bug found, uniformity flagged something,
/// the first broken claim).
fn claims(manifest: &Path, kind: Kind) -> Result<(bool, bool, Option<String>), String> {
    let lm = LoadedManifest::load(manifest).map_err(|e| e.to_string())?;
    let kernel = lm.resolve(&lm.manifest.kernel);
    let src = std::fs::read_to_string(&kernel).map_err(|e| e.to_string())?;
    let module =
        gpusim_isa::parse_module(&kernel.display().to_string(), &src).map_err(|e| e.to_string())?;
    let mut scratch = CheckReport::default();
    let refs = run_references(&module, &lm, &mut scratch).map_err(|e| e.to_string())?;
    let blocks = super::compare::launch_blocks(&lm);
    let flagged = !gpusim_models::uniformity::analyze_for(&module, &blocks).is_empty();
    let judged = [
        ("lock-step", &refs.lockstep),
        ("interleaving", &refs.interleaving),
    ];
    let mut broken = None;
    let mut detected = true;
    for (name, r) in judged {
        let ok = matches!(
            (kind, r),
            (Kind::Clean, RefResult::Memory(_))
                | (
                    Kind::Race,
                    RefResult::Verdict {
                        verdict: Verdict::DataRace(_),
                        ..
                    }
                )
                | (
                    Kind::DivergentBarrier,
                    RefResult::Verdict {
                        verdict: Verdict::BarrierDivergence(_),
                        ..
                    }
                )
        );
        if !ok {
            detected = false;
            broken.get_or_insert_with(|| {
                format!(
                    "generated {}, but the {name} semantics say: {}",
                    kind.name(),
                    match r {
                        RefResult::Memory(_) => "race-free and divergence-free".to_string(),
                        RefResult::Verdict { verdict, .. } => verdict.to_string(),
                    }
                )
            });
        }
    }
    if kind == Kind::DivergentBarrier && !flagged {
        detected = false;
        broken.get_or_insert_with(|| {
            "generated a divergent barrier, but the uniformity analysis accepts the kernel"
                .to_string()
        });
    }
    Ok((detected, flagged, broken))
}

/// Greedy shrinking: take the first one-step-smaller body that fails the same way, until none
/// does (or a bound on attempts is reached). Returns the smallest case and its failure.
fn shrink(
    dir: &Path,
    mut case: gen::Case,
    mut failure: Failure,
    runs: u32,
) -> std::io::Result<(gen::Case, Failure)> {
    let scratch = dir.join("shrinking");
    let mut attempts = 0;
    'outer: while attempts < 400 {
        for body in gen::shrink_steps(&case.body) {
            if !gen::has_bug(&body, case.kind) {
                continue;
            }
            attempts += 1;
            let candidate = gen::Case {
                body,
                ..case.clone()
            };
            write_case(&scratch, &candidate, &[])?;
            if let Some(f) = judge(&scratch, &candidate, runs).failure {
                if f.same_kind(&failure) {
                    case = candidate;
                    failure = f;
                    continue 'outer;
                }
            }
            if attempts >= 400 {
                break;
            }
        }
        break;
    }
    std::fs::remove_dir_all(&scratch)?;
    Ok((case, failure))
}

#[cfg(test)]
mod tests {
    use super::gen;

    /// The same seed gives the same kernel; different seeds differ.
    #[test]
    fn generation_is_deterministic() {
        let a = gen::ptx(&gen::generate(42));
        assert_eq!(a, gen::ptx(&gen::generate(42)));
        assert_ne!(a, gen::ptx(&gen::generate(43)));
    }

    /// Every generated kernel parses, and the shrinker's steps keep it parseable.
    #[test]
    fn generated_kernels_parse() {
        for seed in 0..200 {
            let case = gen::generate(seed);
            let text = gen::ptx(&case);
            gpusim_isa::parse_module("fuzz.ptx", &text)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
            for body in gen::shrink_steps(&case.body).into_iter().take(5) {
                let small = gen::Case {
                    body,
                    ..case.clone()
                };
                gpusim_isa::parse_module("fuzz.ptx", &gen::ptx(&small))
                    .unwrap_or_else(|e| panic!("seed {seed} shrunk: {e}"));
            }
        }
    }
}
