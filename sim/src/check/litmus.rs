//! SIMT-Step outcome containment (digest `shared/notes/simt-step.md` §4.4 A): for a manifest
//! that names a litmus test (`litmus:` key), each simulator run's outcome — the test's
//! observed locations read from the final buffers — must lie in the set of outcomes that the
//! SIMT-Step variant the policy claims allows; and the strongest variant consistent with all
//! runs is reported, our counterpart of the paper's per-device results (Fig. 13).
//!
//! A structural invariant backs the outcome check: under a policy claiming CM, every warp
//! collective must run with exactly its dynamic block's threads ([`subgroup_masks`]), which
//! catches a wrong participant set even where the outcome happens to be allowed.
//!
//! The claim of each policy ([`claim`]) is documented with its derivation in
//! docs/reconvergence.md ("SIMT-Step consistency of each policy").

use super::{CheckReport, Outcome};
use crate::config::{Config, ReconvergenceKind, SwitchRule};
use crate::launch::{LitmusBinding, Manifest};
use crate::stats::WarpEvent;
use gpusim_models::simt_step::{self, EnumError, OutcomeSet, Participation, Variant};
use std::collections::BTreeSet;

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
    if judged > 0 {
        report.compared();
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

/// Whether an instruction, as the warp trace prints it (`WarpEvent::text`, guard first), is a
/// warp collective — the PTX form of a SIMT-Step subgroup operation (`vote.sync`,
/// `shfl.sync`, `redux.sync`, `match.*.sync`, and `bar.warp.sync` for `sg_barrier`).
/// `activemask` only reads the mask the collective then uses, so it is not one.
pub fn is_collective(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let mut op = words.next().unwrap_or("");
    if op.starts_with('@') {
        op = words.next().unwrap_or("");
    }
    ["vote.sync", "shfl.sync", "redux.sync", "bar.warp.sync"]
        .iter()
        .any(|p| op.starts_with(p))
        || (op.starts_with("match.") && op.contains(".sync"))
}

/// Per test thread, the (PTX line, participant mask over test-thread ids) of every warp
/// collective its lane executed, in issue order. A lane of warp `w` is test thread
/// `w * warp_size + lane` (subgroup `s` is warp `s`, see [`warps_fit`]); the trace of one
/// warp is in issue order, which is each lane's program order.
fn observed_participation(
    events: &[WarpEvent],
    warp_size: u32,
    threads: usize,
) -> Result<Vec<Vec<(u32, u64)>>, String> {
    let mut per: Vec<Vec<(u32, u64)>> = vec![Vec::new(); threads];
    for e in events.iter().filter(|e| is_collective(&e.text)) {
        // A litmus test is one launch of one CTA: anything else has no test thread.
        if e.launch != 0 || e.cta != [0, 0, 0] {
            return Err(format!(
                "a collective at line {} ran in launch {} CTA {:?}, outside the test's one CTA",
                e.line, e.launch, e.cta
            ));
        }
        let base = e.warp as usize * warp_size as usize;
        let lanes: Vec<usize> = (0..warp_size as usize)
            .filter(|l| e.exec & (1u64 << l) != 0)
            .collect();
        if let Some(&l) = lanes.iter().find(|&&l| base + l >= threads) {
            return Err(format!(
                "lane {l} of warp {} executed the collective at line {} but maps to no test thread (the test has {threads})",
                e.warp, e.line
            ));
        }
        let mask = lanes.iter().fold(0u64, |m, l| m | 1 << (base + l));
        for l in lanes {
            per[base + l].push((e.line, mask));
        }
    }
    Ok(per)
}

fn show_mask(m: u64) -> String {
    let ts: Vec<String> = (0..64)
        .filter(|t| m & (1u64 << t) != 0)
        .map(|t| t.to_string())
        .collect();
    format!("{{{}}}", ts.join(","))
}

/// The subgroup-mask invariant for one run: per test thread, the participant masks of the
/// warp collectives its lane executed (from the run's warp trace, `events`) must be one of
/// the model's allowed participations (`simt_step::participation`). Returns the number of
/// collective instructions the run issued, or what differs from the closest allowed
/// participation: the thread, the k-th collective with its PTX line, the observed mask and the
/// model's.
pub fn compare_masks(
    allowed: &BTreeSet<Participation>,
    events: &[WarpEvent],
    warp_size: u32,
    threads: usize,
) -> Result<usize, String> {
    let observed = observed_participation(events, warp_size, threads)?;
    let issued = events.iter().filter(|e| is_collective(&e.text)).count();
    let masks: Vec<Vec<u64>> = observed
        .iter()
        .map(|seq| seq.iter().map(|(_, m)| *m).collect())
        .collect();
    if allowed.contains(&masks) {
        return Ok(issued);
    }
    // Explain against the allowed participation agreeing with the run in the most places.
    let agreeing = |p: &Participation| -> usize {
        p.iter()
            .zip(&masks)
            .map(|(a, b)| a.iter().zip(b).filter(|(x, y)| x == y).count())
            .sum()
    };
    let Some(closest) = allowed.iter().max_by_key(|p| agreeing(p)) else {
        return Err("the model allows no complete execution".into());
    };
    for (t, (want, got)) in closest.iter().zip(&observed).enumerate() {
        for k in 0..want.len().max(got.len()) {
            let line = got
                .get(k)
                .map_or("none".to_string(), |(l, _)| format!("line {l}"));
            let g = got
                .get(k)
                .map_or("none".to_string(), |(_, m)| show_mask(*m));
            let w = want.get(k).map_or("none".to_string(), |m| show_mask(*m));
            if g != w {
                return Err(format!(
                    "lane of thread {t}, collective #{} ({line}): the run's mask is {g}, the model's dynamic block is {w}",
                    k + 1
                ));
            }
        }
    }
    // Only reachable when `threads` is not the model's thread count (the zips stop early).
    Err(format!(
        "the run's participation {masks:?} is not one the model allows ({} threads)",
        closest.len()
    ))
}

/// The structural invariant over every run whose machine claims CM (`claims[i]`): each
/// subgroup operation's mask equals its dynamic block's threads (see [`compare_masks`]).
/// `traces[i]` is run `i`'s warp trace. The first violation is the disagreement; agreement is
/// a report line with the number of collectives and runs checked.
pub fn subgroup_masks(
    binding: &LitmusBinding,
    outcomes: &[(String, Outcome)],
    claims: &[Option<Variant>],
    traces: &[Vec<WarpEvent>],
    warp_size: u32,
    report: &mut CheckReport,
) {
    let test = &binding.test;
    let allowed = match simt_step::participation(test, Variant::Cm) {
        Ok(a) => a,
        Err(e) => {
            report.note(format!(
                "subgroup masks: the enumerator cannot compute {}'s participation under CM ({e}); not checked",
                test.name
            ));
            return;
        }
    };
    let (mut collectives, mut runs) = (0, 0);
    for (i, ((knobs, o), trace)) in outcomes.iter().zip(traces).enumerate() {
        // A faulted run is already a disagreement (`judge`); its trace stops mid-test.
        if claims.get(i).copied().flatten() != Some(Variant::Cm) || matches!(o, Outcome::Fault(..))
        {
            continue;
        }
        match compare_masks(&allowed, trace, warp_size, test.threads) {
            Ok(n) => {
                collectives += n;
                runs += 1;
            }
            Err(why) => {
                report.fail(format!(
                    "subgroup masks {}: run {i} ({knobs}): {why}",
                    test.name
                ));
                return;
            }
        }
    }
    if runs == 0 {
        report.note("subgroup masks: no completed run claims CM; not checked".into());
    } else {
        report.note(format!(
            "subgroup masks: {collectives} collectives in {runs} runs equal their dynamic blocks (CM)"
        ));
    }
}
