//! Golden traces of the formal report's branching examples: after each instruction, the
//! active mask α, the disable reasons δ and the token stack must be exactly the states the
//! paper tabulates (Habermaier 2011, Fig. 5.5 and 5.7; digest T2 and T4). Masks are bit
//! strings with lane 0 leftmost; pcs are instruction indices (the .ptx comments map them to
//! the paper's line numbers).

use gpusim::{run_manifest_with, RunOptions};
use std::path::Path;

fn control_trace(manifest: &str, func: &str, pcs: std::ops::RangeInclusive<u32>) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/formal")
        .join(manifest);
    let out = run_manifest_with(
        &path,
        None,
        &[],
        &RunOptions {
            trace_warps: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    out.events
        .iter()
        // the listing's instructions, and the caller's final `exit` (the paper's x)
        .filter(|e| {
            (e.func == func && pcs.contains(&e.pc))
                || (e.func != func && e.text.starts_with("exit"))
        })
        .map(|e| format!("{} {}", e.pc, e.after))
        .collect()
}

/// The paper's state table of a listing (`sim/tests/formal/NAME.golden`, shared with the
/// reference model's test): one "pc α=… δ=… stack=…" line per step.
fn golden(name: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/formal/{name}.golden"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn listing_5_5_if_else_reconverges_as_tabulated() {
    let got = control_trace("listing_5_5.yaml", "listing_5_5", 4..=11);
    assert_eq!(got, golden("listing_5_5"), "\n{}", got.join("\n"));
}

#[test]
fn listing_5_7_nested_return_reconverges_as_tabulated() {
    // pcs 14–18 store the result and are not in the paper's table.
    let got: Vec<String> = control_trace("listing_5_7.yaml", "f", 5..=19)
        .into_iter()
        .filter(|l| !(14..=18).any(|pc| l.starts_with(&format!("{pc} "))))
        .collect();
    assert_eq!(got, golden("listing_5_7"), "\n{}", got.join("\n"));
}
