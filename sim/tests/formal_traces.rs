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

#[test]
fn listing_5_5_if_else_reconverges_as_tabulated() {
    // paper:  1 → 2 → 3 → 7 → 9 → 4 → 5 → 9 → 10
    let expected = [
        "4 α=11 δ=00 stack=ε",
        "5 α=11 δ=00 stack=(sync,11,11)",
        "6 α=10 δ=00 stack=(diverge,01,7)::(sync,11,11)",
        "9 α=10 δ=00 stack=(diverge,01,7)::(sync,11,11)",
        "10 α=01 δ=00 stack=(sync,11,11)",
        "7 α=01 δ=00 stack=(sync,11,11)",
        "8 α=01 δ=00 stack=(sync,11,11)",
        "10 α=11 δ=00 stack=ε",
        "11 α=11 δ=00 stack=ε",
    ];
    let got = control_trace("listing_5_5.yaml", "listing_5_5", 4..=11);
    assert_eq!(got, expected, "\n{}", got.join("\n"));
}

#[test]
fn listing_5_7_nested_return_reconverges_as_tabulated() {
    // paper: 1 → 2 → 3 → 7 → 9 → 4 → 5 → 9 → 10 → 11 → x, with the call token (call,111,x)
    // at the bottom; x is the entry's pc 4. The extra `mul` (pc 10) sets c on the taken path.
    let expected = [
        "5 α=111 δ=000 stack=(call,111,4)",
        "6 α=111 δ=000 stack=(sync,111,13)::(call,111,4)",
        "7 α=011 δ=000 stack=(diverge,100,8)::(sync,111,13)::(call,111,4)",
        "10 α=011 δ=000 stack=(diverge,100,8)::(sync,111,13)::(call,111,4)",
        "11 α=001 δ=0r0 stack=(diverge,100,8)::(sync,111,13)::(call,111,4)",
        "12 α=100 δ=0r0 stack=(sync,111,13)::(call,111,4)",
        "8 α=100 δ=0r0 stack=(sync,111,13)::(call,111,4)",
        "9 α=100 δ=0r0 stack=(sync,111,13)::(call,111,4)",
        "12 α=101 δ=0r0 stack=(call,111,4)",
        "13 α=101 δ=0r0 stack=(call,111,4)",
        "19 α=111 δ=000 stack=ε",
        "4 α=000 δ=eee stack=ε",
    ];
    let got = control_trace("listing_5_7.yaml", "f", 5..=19);
    let got: Vec<String> = got
        .into_iter()
        .filter(|l| {
            !l.starts_with("14 ")
                && !l.starts_with("15 ")
                && !l.starts_with("16 ")
                && !l.starts_with("17 ")
                && !l.starts_with("18 ")
        })
        .collect();
    assert_eq!(got, expected, "\n{}", got.join("\n"));
}
