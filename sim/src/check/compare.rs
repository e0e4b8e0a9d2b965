//! The comparisons of `gpusim check`: simulator runs against the reference semantics, the
//! uniformity verdict against dynamic barrier divergence, and the token-stack traces.

use super::models::{RefResult, References};
use super::{CheckReport, Outcome};
use crate::core::exec::LOCAL_LIMIT_KEY;
use gpusim_isa::Module;
use gpusim_models::lockstep::Verdict;

/// Fault kinds in which a barrier divergence the models find may show in the simulator: the
/// divergent warp faults, or the CTA waits forever at the barrier.
const DIVERGENCE_FAULTS: [&str; 2] = ["barrier-divergence", "deadlock"];

/// How the configured machine counts barrier arrivals, where it differs from the thread-level
/// semantics (which count only threads at the barrier, and an exited thread as waiting at the
/// final one).
#[derive(Clone, Copy, Debug)]
pub struct Arrivals {
    /// A converged warp's arrival counts all its lanes, guarded off or not.
    pub whole_warps: bool,
    /// Exited threads count as arrived (`sm.exited_warps_arrive`).
    pub exited: bool,
}

pub fn runs_against_references(
    outcomes: &[(String, Outcome)],
    refs: &References,
    arrivals: Arrivals,
    report: &mut CheckReport,
) {
    let warp_arrival = arrivals.whole_warps;
    let only_exits = only_exited_threads_missing(&refs.interleaving);
    if let (RefResult::Memory(a), RefResult::Memory(b)) = (&refs.lockstep, &refs.interleaving) {
        if a != b {
            report.fail("the lock-step and interleaving semantics end in different memory".into());
            return;
        }
    }
    // The lock-step semantics is the reference the paper proves equal to interleaving on
    // race-free kernels; use it, falling back to interleaving's verdict where lock-step has
    // none (a kernel outside it, or past its step bound).
    let judging = match (&refs.lockstep, &refs.interleaving) {
        (RefResult::Verdict { verdict, .. }, i) if !judges(verdict) => i,
        (l, _) => l,
    };
    match (&refs.lockstep, judging) {
        (RefResult::Memory(want), _) | (_, RefResult::Memory(want)) => {
            for (knobs, o) in outcomes {
                match o {
                    Outcome::Buffers(got) => {
                        if let Some(diff) = first_difference(want, got) {
                            report.fail(format!("{knobs}: {diff} (expected from the semantics, observed in the simulator)"));
                            return;
                        }
                    }
                    Outcome::Fault(_, msg) if msg.contains(LOCAL_LIMIT_KEY) => {
                        report.note(format!(
                            "{knobs}: the simulator ran out of local memory, a limit of the configured machine the semantics do not have: {msg}"
                        ));
                        return;
                    }
                    Outcome::Fault(kind, msg) => {
                        report.fail(format!(
                            "{knobs}: the simulator faulted ({kind}) where the semantics complete without race or divergence: {msg}"
                        ));
                        return;
                    }
                }
            }
            report.compared();
            report.note(format!(
                "final memory: all {} run(s) equal the semantics' final buffers",
                outcomes.len()
            ));
        }
        (_, RefResult::Verdict { verdict, launch }) => match verdict {
            Verdict::BarrierDivergence(_) => {
                // Every branch below judges the runs against the semantics' divergence.
                report.compared();
                for (knobs, o) in outcomes {
                    let ok = matches!(o, Outcome::Fault(k, _) if DIVERGENCE_FAULTS.contains(&k.as_str()));
                    if !ok && arrivals.exited && only_exits {
                        report.note(format!(
                            "{knobs}: the semantics find barrier divergence in launch {launch} only because threads exited before a barrier the others reach; the machine counts exited threads as arrived (sm.exited_warps_arrive), so the barrier completes: {verdict}"
                        ));
                        return;
                    }
                    if !ok && warp_arrival {
                        report.note(format!(
                            "{knobs}: the thread-level semantics find barrier divergence in launch {launch}, but the simulator's warps arrive whole (the formal model's rule: one arriving lane counts its warp), under which the kernel completes; the token-stack model is the reference for it: {verdict}"
                        ));
                        return;
                    }
                    if !ok {
                        report.fail(format!(
                            "{knobs}: the semantics find barrier divergence in launch {launch} ({verdict}) but the simulator {}",
                            o.describe()
                        ));
                        return;
                    }
                }
                report.note(format!(
                    "barrier divergence: found by the semantics and by all {} simulator run(s)",
                    outcomes.len()
                ));
            }
            Verdict::DataRace(_) => report.note_compared(format!(
                "data race in launch {launch}: final memory not compared (the simulator does not detect races; its runs: {})",
                distinct(outcomes)
            )),
            _ => {
                report.note(format!(
                    "final memory not compared: the semantics cannot run launch {launch} ({})",
                    verdict.kind()
                ));
                // Without a reference, a simulator-found divergence still needs explaining.
                if let Some((knobs, Outcome::Fault(k, msg))) = outcomes
                    .iter()
                    .find(|(_, o)| matches!(o, Outcome::Fault(k, _) if k == "barrier-divergence"))
                {
                    report.note(format!("{knobs}: the simulator reports {k}: {msg}"));
                }
            }
        },
    }
}

/// Whether a verdict judges the kernel (a race or a divergence), rather than saying that the
/// semantics could not run it.
fn judges(v: &Verdict) -> bool {
    matches!(v, Verdict::DataRace(_) | Verdict::BarrierDivergence(_))
}

/// Whether the interleaving semantics' divergence is one barrier reached by some threads while
/// every other thread has exited (waits at `End`).
fn only_exited_threads_missing(r: &RefResult) -> bool {
    let RefResult::Verdict {
        verdict: Verdict::BarrierDivergence(d),
        ..
    } = r
    else {
        return false;
    };
    let sites: Vec<_> = d.arrivals.iter().filter_map(|a| a.at).collect();
    let barriers = sites
        .iter()
        .map(|s| s.pc)
        .collect::<std::collections::BTreeSet<_>>();
    barriers.len() == 1 && d.arrivals.iter().any(|a| a.at.is_none())
}

/// Buffers compared by name; the first differing 32-bit word (or byte, for short tails).
fn first_difference(want: &[(String, Vec<u8>)], got: &[(String, Vec<u8>)]) -> Option<String> {
    for (name, w) in want {
        let Some((_, g)) = got.iter().find(|(n, _)| n == name) else {
            return Some(format!("buffer `{name}` is missing"));
        };
        if w == g {
            continue;
        }
        let i = w
            .iter()
            .zip(g)
            .position(|(a, b)| a != b)
            .unwrap_or(w.len().min(g.len()));
        let word = |b: &[u8]| {
            let at = i - i % 4;
            let mut v = [0u8; 4];
            for (k, x) in b.iter().skip(at).take(4).enumerate() {
                v[k] = *x;
            }
            u32::from_le_bytes(v)
        };
        return Some(format!(
            "buffer `{name}` differs at byte {i} (32-bit word {}): {:#010x} vs {:#010x}",
            i / 4,
            word(w),
            word(g)
        ));
    }
    None
}

fn distinct(outcomes: &[(String, Outcome)]) -> String {
    let mut seen: Vec<&Outcome> = Vec::new();
    for (_, o) in outcomes {
        if !seen.contains(&o) {
            seen.push(o);
        }
    }
    format!(
        "{} distinct outcome(s) in {} run(s)",
        seen.len(),
        outcomes.len()
    )
}

/// The uniformity analysis against the runs: a kernel it accepts (no barrier in possibly
/// non-uniform control flow) must not diverge at a barrier in any run.
pub fn lint_against_runs(
    module: &Module,
    lm: &crate::launch::LoadedManifest,
    outcomes: &[(String, Outcome)],
    report: &mut CheckReport,
) {
    use gpusim_models::uniformity::analyze_for;
    let findings = analyze_for(module, &launch_blocks(lm));
    // The simulator's barrier-divergence fault covers CTA barriers and warp collectives, so
    // every finding counts (calls and arguments carry their callees' requirements).
    let barriers = findings.len();
    let diverged = outcomes
        .iter()
        .find(|(_, o)| matches!(o, Outcome::Fault(k, _) if k == "barrier-divergence"));
    match (barriers, diverged) {
        (0, Some((knobs, o))) => report.fail(format!(
            "the uniformity analysis accepts the kernel, but {knobs} diverged: {}",
            match o {
                Outcome::Fault(_, message) => message.clone(),
                other => other.describe(),
            }
        )),
        (0, None) => report.note(
            "uniformity: every barrier and warp collective in uniform control flow; no run diverged"
                .to_string(),
        ),
        (n, _) => report.note(format!(
            "uniformity: {n} finding(s) in possibly non-uniform control flow (first: {}); {}",
            findings.first().map(|f| f.to_string()).unwrap_or_default(),
            if diverged.is_some() {
                "a run diverged dynamically"
            } else {
                "no run diverged dynamically"
            }
        )),
    }
}

/// The token-stack policy against the formal branching model: warp by warp, the state after
/// every instruction (pc, α, δ and the token stack, in the report's notation) must be the
/// reference's. The simulator run compared is one with a single SM holding one CTA at a time,
/// as the reference runs CTAs; warps of a CTA still interleave differently, which only
/// matters where control flow depends on atomics (a CAS loop retries as often as others
/// interfere): there a difference is reported, not counted as a disagreement.
pub fn token_stacks(
    module: &Module,
    lm: &crate::launch::LoadedManifest,
    out: &crate::run::RunOutput,
    warp_size: u32,
    racy: bool,
    report: &mut CheckReport,
) -> Result<(), crate::run::RunError> {
    if let Some(f) = &out.expected_fault {
        report.note(format!(
            "token stack: the one-SM run ended in the {} fault the manifest expects; the faulting launch keeps no trace to compare",
            f.kind.name()
        ));
        return Ok(());
    }
    let reference = match super::models::token_stack_traces(module, lm, warp_size)? {
        Ok(t) => t,
        Err(why) => {
            report.note(format!("token stack: the reference model stops: {why}"));
            return Ok(());
        }
    };
    let mut steps = 0;
    let mut warps = 0;
    for (li, (l, want_launch)) in lm.manifest.launches.iter().zip(&reference).enumerate() {
        let (grid, block) = (l.grid.0, l.block.0);
        let warps_per_cta = block.iter().product::<u32>().div_ceil(warp_size) as usize;
        let mut observed: Vec<Vec<&crate::stats::WarpEvent>> = vec![Vec::new(); want_launch.len()];
        for e in out.events.iter().filter(|e| e.launch as usize == li) {
            let cta = (e.cta[0] + grid[0] * (e.cta[1] + grid[1] * e.cta[2])) as usize;
            let w = cta * warps_per_cta + e.warp as usize;
            match observed.get_mut(w) {
                Some(v) => v.push(e),
                None => {
                    report.fail(format!(
                        "token stack: launch {li}: the simulator ran warp {} of CTA {:?}, which the reference does not have",
                        e.warp, e.cta
                    ));
                    return Ok(());
                }
            }
        }
        for (w, (want, got)) in want_launch.iter().zip(&observed).enumerate() {
            if let Some(diff) = first_step_difference(want, got) {
                let why = format!("token stack: launch {li}, warp {w} (CTA-major): {diff}");
                if racy || uses_atomic_results(module) {
                    let cause = if racy {
                        "the semantics find a data race"
                    } else {
                        "the kernel branches on atomics' results"
                    };
                    report.note(format!(
                        "{why} — {cause}, so its warps' paths depend on their interleaving: not compared"
                    ));
                    return Ok(());
                }
                report.fail(why);
                return Ok(());
            }
            steps += want.len();
        }
        warps += want_launch.len();
    }
    if steps > 0 {
        report.compared();
    }
    report.note(format!(
        "token stack: {steps} warp steps of {warps} warp(s) equal to the formal model's, state by state"
    ));
    Ok(())
}

fn first_step_difference(
    want: &[gpusim_models::token_stack::Step],
    got: &[&crate::stats::WarpEvent],
) -> Option<String> {
    for (k, r) in want.iter().enumerate() {
        let Some(o) = got.get(k) else {
            return Some(format!(
                "the simulator stops after {k} steps; the reference goes on with pc {} `{}` → {}",
                r.pc, r.text, r.state
            ));
        };
        if o.pc != r.pc || o.after != r.state {
            return Some(format!(
                "step {k}: reference pc {} `{}` → {}; simulator pc {} `{}` → {}",
                r.pc, r.text, r.state, o.pc, o.text, o.after
            ));
        }
    }
    got.get(want.len()).map(|o| {
        format!(
            "the simulator runs longer: step {} pc {} `{}` has no reference step",
            want.len(),
            o.pc,
            o.text
        )
    })
}

/// Whether some atomic's result is used (an `atom` with a destination): the kernel may branch
/// on it.
fn uses_atomic_results(module: &Module) -> bool {
    module.functions.iter().any(|f| {
        f.body
            .iter()
            .any(|i| matches!(i.op, gpusim_isa::Op::Atom { d: Some(_), .. }))
    })
}

/// The block shapes the manifest launches with: the uniformity analysis decides warp and
/// warpgroup uniformity of `%tid.x` quotients exactly for them.
pub fn launch_blocks(lm: &crate::launch::LoadedManifest) -> gpusim_models::uniformity::Blocks {
    gpusim_models::uniformity::Blocks::known(
        lm.manifest.launches.iter().map(|l| l.block.0).collect(),
    )
}
