//! Prints the policy × litmus matrix of docs/reconvergence.md ("SIMT-Step consistency of each
//! policy"): for every reconvergence policy and every SIMT-Step litmus manifest of
//! `traces/litmus/simt_step`, `gpusim check` with 16 randomised runs (seed 1), the outcomes
//! observed and the strongest SIMT-Step variant consistent with all of them, as Markdown.
//! Run with `cargo run --release -p gpusim --example litmus_matrix`.

use gpusim::check::{check, CheckOptions};
use std::path::{Path, PathBuf};

const RUNS: u32 = 16;
const SEED: u64 = 1;

/// `--set` overrides, as (key, value).
type Sets = &'static [(&'static str, &'static str)];

/// (column title, policy, `--set` overrides). The plain `convergence-barrier` column draws its
/// switch rule per run (`knobs::for_litmus_run`); the `blocked` one fixes it.
const POLICIES: &[(&str, &str, Sets)] = &[
    ("token-stack", "token-stack", &[]),
    ("pdom-stack", "pdom-stack", &[]),
    ("multi-path", "multi-path", &[]),
    ("thread-frontiers", "thread-frontiers", &[]),
    (
        "convergence-barrier (switch rule drawn per run)",
        "convergence-barrier",
        &[],
    ),
    (
        "convergence-barrier, blocked",
        "convergence-barrier",
        &[("sm.convergence_barrier", "{switch: blocked}")],
    ),
];

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/litmus/simt_step");
    let mut manifests: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("traces/litmus/simt_step")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    manifests.sort();

    let titles: Vec<&str> = POLICIES.iter().map(|p| p.0).collect();
    println!("| test | {} |", titles.join(" | "));
    println!("|---|{}", "---|".repeat(titles.len()));
    for m in &manifests {
        let name = m.file_stem().unwrap().to_string_lossy();
        let mut cells = Vec::new();
        for (_, policy, sets) in POLICIES {
            let o = CheckOptions {
                config: None,
                sets: sets
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                policy: Some(policy.to_string()),
                runs: RUNS,
                seed: SEED,
                threads: gpusim::threads::resolve(None).unwrap_or(1),
            };
            let cell = match check(m, &o) {
                Err(e) => format!("error: {e}"),
                Ok(r) => {
                    let mut cell = match &r.litmus {
                        None => "not judged".to_string(),
                        Some(v) => {
                            let seen: Vec<String> =
                                v.observed.iter().map(|(o, n)| format!("{o}×{n}")).collect();
                            let strongest = v.strongest.map_or("none".into(), |s| s.to_string());
                            format!("**{strongest}** {}", seen.join(" "))
                        }
                    };
                    if r.disagreement.is_some() {
                        cell.push_str(" (disagrees with its claim)");
                    }
                    cell
                }
            };
            cells.push(cell);
        }
        println!("| {name} | {} |", cells.join(" | "));
    }
}
