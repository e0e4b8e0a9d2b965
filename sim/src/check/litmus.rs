//! SIMT-Step outcome containment (digest `shared/notes/simt-step.md` §4.4 A): for a manifest
//! that names a litmus test (`litmus:` key), each simulator run's outcome — the test's
//! observed locations read from the final buffers — must lie in the set of outcomes that the
//! SIMT-Step variant the policy claims allows; and the strongest variant consistent with all
//! runs is reported, our counterpart of the paper's per-device results (Fig. 13).
//!
//! The claim of each policy ([`claim`]) is documented with its derivation in
//! docs/reconvergence.md ("SIMT-Step consistency of each policy").

use super::{CheckReport, Outcome};
use crate::config::{Config, ReconvergenceKind, SwitchRule};
use crate::launch::{LitmusBinding, Manifest};
use gpusim_models::simt_step::{self, EnumError, OutcomeSet, Variant};

/// The SIMT-Step variant whose allowed outcomes every run on machine `cfg` must stay within;
/// `None` where the policy guarantees no variant (its runs are reported, never judged).
///
/// Every policy issues a warp (or group) memory instruction once for all its lanes and
/// performs it atomically at issue, and branches, merges and collectives once per warp or
/// group, so what decides the variant is which lanes a policy runs together:
/// * `token-stack`, `pdom-stack`, `multi-path` and `thread-frontiers` keep a diverged path's
///   lanes together until all of them meet at the immediate post-dominator (multi-path
///   interleaves the paths, which SIMT-Step allows; thread-frontiers merges earlier only in
///   unstructured code, which SIMT-Step gives no meaning): the dynamic blocks of the IPDOM
///   stack (digest §4.2–4.3, P1 → CM).
/// * `convergence-barrier` with `switch: blocked` makes every merge a convergence barrier that
///   all its threads reach before any goes on (P3 → CM).
/// * `convergence-barrier` with a yielding switch rule (`backward-branch`, `quantum`): a group
///   that yields counts as arrived at its barriers, so a yield can release a merge before all
///   its threads arrived and they run the merge block split — P4, which digest §4.3 shows can
///   leave SIMT-Step altogether (conv_div_merge's `c`). No claim.
pub fn claim(cfg: &Config) -> Option<Variant> {
    match cfg.sm.reconvergence {
        ReconvergenceKind::TokenStack
        | ReconvergenceKind::PdomStack
        | ReconvergenceKind::MultiPath
        | ReconvergenceKind::ThreadFrontiers => Some(Variant::Cm),
        ReconvergenceKind::ConvergenceBarrier => match cfg.sm.convergence_barrier.switch {
            SwitchRule::Blocked => Some(Variant::Cm),
            SwitchRule::BackwardBranch | SwitchRule::Quantum => None,
        },
    }
}

/// What the runs of one litmus manifest showed.
#[derive(Clone, Debug)]
pub struct LitmusVerdict {
    /// The test's name.
    pub test: String,
    /// Each distinct outcome observed, in first-seen order, with the number of runs.
    pub observed: Vec<(simt_step::Outcome, usize)>,
    /// The strongest variant allowing every observed outcome; `None` when even Spec excludes
    /// one (outside the executable SIMT-Step variants).
    pub strongest: Option<Variant>,
    /// How many runs were judged (their machine claims a variant, see [`claim`]).
    pub judged: usize,
}

/// The allowed set of every executable variant, strongest first.
fn allowed_sets(test: &simt_step::Litmus) -> Result<Vec<(Variant, OutcomeSet)>, EnumError> {
    Variant::ALL
        .into_iter()
        .map(|v| simt_step::allowed(test, v).map(|s| (v, s)))
        .collect()
}

fn show(set: &OutcomeSet) -> String {
    let items: Vec<String> = set.iter().map(|o| o.to_string()).collect();
    format!("{{{}}}", items.join(" "))
}

/// Whether the test's threads and subgroups map onto the configured warps: subgroup `s` is
/// warp `s` (the manifest may set `sm.warp_size`), or a one-subgroup test fits one warp.
pub fn warps_fit(test: &simt_step::Litmus, warp_size: u32) -> bool {
    let ws = warp_size as usize;
    test.subgroup == ws || (test.subgroup == test.threads && test.threads <= ws)
}

/// Judge the runs (`outcomes`, each with its knobs) against the test: every run must have
/// completed, and a run whose machine claims a variant (`claims[i]`, see [`claim`]) must show
/// an outcome inside that variant's allowed set. The first run that did not is the
/// disagreement, with its knobs, its outcome and the allowed set.
pub fn judge(
    binding: &LitmusBinding,
    manifest: &Manifest,
    outcomes: &[(String, Outcome)],
    claims: &[Option<Variant>],
    report: &mut CheckReport,
) -> Option<LitmusVerdict> {
    let test = &binding.test;
    let sets = match allowed_sets(test) {
        Ok(s) => s,
        Err(e) => {
            report.note(format!(
                "SIMT-Step: the enumerator cannot compute {}'s outcome sets ({e}); runs not judged",
                test.name
            ));
            return None;
        }
    };
    let mut observed: Vec<(simt_step::Outcome, usize)> = Vec::new();
    let mut judged = 0;
    for (i, (knobs, o)) in outcomes.iter().enumerate() {
        let got = match o {
            Outcome::Buffers(bufs) => binding.outcome(manifest, bufs),
            Outcome::Fault(kind, msg) => {
                // Every executable variant completes every test of the suite (the enumerator
                // reports a deadlock as an error, handled above), so a fault is never allowed.
                report.fail(format!(
                    "SIMT-Step {}: {knobs}: the simulator faulted ({kind}) where the test completes under every variant: {msg}",
                    test.name
                ));
                return None;
            }
        };
        let Some(got) = got else {
            report.fail(format!(
                "SIMT-Step {}: {knobs}: a buffer of the litmus mapping is missing from the run's output",
                test.name
            ));
            return None;
        };
        match observed.iter_mut().find(|(x, _)| *x == got) {
            Some((_, n)) => *n += 1,
            None => observed.push((got.clone(), 1)),
        }
        if let Some(v) = claims.get(i).copied().flatten() {
            judged += 1;
            let set = &sets.iter().find(|(w, _)| *w == v).expect("every variant").1;
            if !simt_step::contains(set, &got) {
                let strongest_holding = sets
                    .iter()
                    .find(|(_, s)| simt_step::contains(s, &got))
                    .map_or("no executable variant".to_string(), |(w, _)| {
                        format!("{w} and weaker")
                    });
                report.fail(format!(
                    "SIMT-Step {}: {knobs}: outcome {got} is outside {v}, which the policy claims; {v} allows {} (the outcome is allowed by {strongest_holding})",
                    test.name,
                    show(set)
                ));
            }
        }
    }
    let distinct: Vec<simt_step::Outcome> = observed.iter().map(|(o, _)| o.clone()).collect();
    // The enumeration is deterministic and `sets` above succeeded with the same default
    // bounds, so the same computation cannot fail now.
    let strongest = simt_step::strongest_consistent(test, &distinct)
        .expect("the allowed sets were computed above with the same bounds");
    let shown: Vec<String> = observed.iter().map(|(o, n)| format!("{o} ×{n}")).collect();
    report.note(format!(
        "SIMT-Step {} ({}): observed {}; {judged} of {} run(s) judged against their policy's claim; strongest consistent variant: {}",
        test.name,
        binding.file.display(),
        shown.join(", "),
        outcomes.len(),
        strongest.map_or("none (outside every executable variant)".into(), |v| v
            .to_string()),
    ));
    Some(LitmusVerdict {
        test: test.name.clone(),
        observed,
        strongest,
        judged,
    })
}
