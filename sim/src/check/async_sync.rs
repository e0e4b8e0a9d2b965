//! The asynchronous-synchronisation part of `gpusim check`: the Exo-GPU abstract machine
//! (`gpusim_models::async_sync`) over the events the simulator recorded in each launch.
//! Each launch is checked alone (a kernel boundary orders everything, digest §2.2 "Kernel
//! boundaries"). Every violation is reported; the first one is the disagreement.

use super::models::{RefResult, References};
use super::CheckReport;
use crate::launch::LoadedManifest;
use gpusim_isa::Module;
use gpusim_models::async_sync::{check, AsyncEvent};
use gpusim_models::lockstep::Verdict;

/// Whether a launch passes a tensor map (a TMA kernel), which the thread-level models cannot
/// lay out.
pub(super) fn has_tensor_maps(lm: &LoadedManifest) -> bool {
    lm.manifest.launches.iter().any(|l| {
        l.args.iter().any(|a| {
            a.as_mapping()
                .is_some_and(|m| m.contains_key(serde_norway::Value::from("tensor_map")))
        })
    })
}

/// The thread-level models' results for a kernel they cannot run: unsupported, reported.
pub(super) fn references_skipped(report: &mut CheckReport) -> References {
    let why = "a tensor-map argument (TMA) is outside the thread-level models";
    report.note(format!(
        "lock-step and interleaving semantics: not run: {why}"
    ));
    let v = || RefResult::Verdict {
        launch: 0,
        verdict: Verdict::Unsupported(why.to_string()),
    };
    References {
        lockstep: v(),
        interleaving: v(),
    }
}

/// Violations listed in the report (the count of all is in the summary).
const LISTED: usize = 16;

pub(super) fn check_launches(
    module: &Module,
    launches: &[Vec<AsyncEvent>],
    report: &mut CheckReport,
) {
    let mut events = 0;
    let mut found = Vec::new();
    for (i, evs) in launches.iter().enumerate() {
        let r = check(module, evs);
        events += r.events;
        for (v, n) in r.violations {
            found.push((i, v, n));
        }
    }
    if found.is_empty() {
        if events > 0 {
            report.compared();
        }
        report.note(format!(
            "async sync: {events} events in {} launch(es) checked (Exo-GPU abstract machine, rules a–d): no violation",
            launches.len()
        ));
        return;
    }
    report.note(format!(
        "async sync: {} distinct violation(s) in {events} events",
        found.len()
    ));
    // Each distinct (rule, line) first, then the rest, up to `LISTED`.
    let mut seen = std::collections::HashSet::new();
    let (firsts, rest): (Vec<_>, Vec<_>) = found
        .iter()
        .partition(|(_, v, _)| seen.insert((v.rule, v.line(module))));
    for (i, v, n) in firsts.into_iter().chain(rest).take(LISTED) {
        report.note(format!(
            "async sync: launch {i}: {} ({n} time(s))",
            v.describe(module)
        ));
    }
    let (i, v, _) = &found[0];
    report.fail(format!("async sync: launch {i}: {}", v.describe(module)));
}
