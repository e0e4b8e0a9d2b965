//! Conformance of the SIMT-Step model (`gpusim_models::simt_step`) with the paper: every test
//! program of the paper (the idiomatic tests of Figs. 1, 2, 3, 5, 9, 10, 11 and the ten
//! generalised hardware tests of §5.2) lives in `traces/litmus/simt_step/` with its allowed
//! outcomes per variant taken from the paper's table (digest §2.3/§2.4); here the enumerator
//! computes every set and must reproduce the committed data exactly. Also checks the strength
//! order, `strongest_consistent` on the documenting tests of Tab. 1, bounds and errors.
//!
//! Disagreements between the paper's table and the rules: none remain for the executable
//! variants. The paper's typos (digest §2.0: unbraced `if` in Figs. 9 and 11, Fig. 11's
//! missing `g[1] = 0`, Fig. 10's caption naming subgroup_all) are resolved in the data files
//! as the digest states and noted there; Symb, the only variant whose table entries (T3b,
//! T7 "any v, v") go beyond the executable ones, is not implemented.

use std::path::PathBuf;

use gpusim_models::simt_step::{
    allowed, contains, enumerate, parse, strongest_consistent, Bounds, EnumError, Litmus, Outcome,
    Variant,
};

/// The paper's test programs by digest §4.5 id: 9 idiomatic, 10 generalised.
const TESTS: [&str; 19] = [
    "conv_div_merge",
    "loop_participation",
    "lockstep_nosg",
    "lockstep_sg",
    "collective_memory",
    "branch_sync_nosg",
    "branch_sync_sg",
    "spec_participation",
    "oota_broadcast",
    "gen_cm",
    "gen_sm_ww",
    "gen_sm_rw",
    "gen_sm_wr",
    "gen_scf_ww",
    "gen_scf_rw",
    "gen_scf_wr",
    "gen_sso_ww",
    "gen_sso_rw",
    "gen_sso_wr",
];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../traces/litmus/simt_step")
}

fn load(name: &str) -> Litmus {
    let path = dir().join(format!("{name}.litmus"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse(&text).unwrap_or_else(|e| panic!("{}:{e}", path.display()))
}

fn show(set: &std::collections::BTreeSet<Outcome>) -> String {
    set.iter()
        .map(|o| o.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_data_directory_holds_exactly_the_paper_tests() {
    let mut found: Vec<String> = std::fs::read_dir(dir())
        .expect("traces/litmus/simt_step exists")
        .map(|e| {
            e.expect("readable entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter_map(|n| n.strip_suffix(".litmus").map(str::to_string))
        .collect();
    found.sort();
    let mut want: Vec<String> = TESTS.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(found, want);
    for name in TESTS {
        let t = load(name);
        assert_eq!(t.name, name, "test name inside {name}.litmus");
        let vs: Vec<Variant> = t.expect.keys().copied().collect();
        assert_eq!(vs, Variant::ALL, "{name}: an expectation for every variant");
    }
}

#[test]
fn computed_outcome_sets_equal_the_paper_table() {
    let mut report = String::new();
    let mut mismatches = 0;
    for name in TESTS {
        let t = load(name);
        for (variant, expected) in &t.expect {
            let computed = allowed(&t, *variant).unwrap_or_else(|e| panic!("{name}: {e}"));
            let ok = computed == *expected;
            mismatches += usize::from(!ok);
            report.push_str(&format!(
                "{name:20} {:5} {} computed {{{}}} paper {{{}}}\n",
                variant.name(),
                if ok { "ok  " } else { "DIFF" },
                show(&computed),
                show(expected)
            ));
        }
    }
    println!("{report}");
    assert_eq!(mismatches, 0, "\n{report}");
}

#[test]
fn allowed_sets_nest_in_the_strength_order() {
    for name in TESTS {
        let t = load(name);
        let sets: Vec<_> = Variant::ALL
            .iter()
            .map(|v| allowed(&t, *v).unwrap_or_else(|e| panic!("{name}: {e}")))
            .collect();
        for (i, pair) in sets.windows(2).enumerate() {
            assert!(
                pair[0].is_subset(&pair[1]),
                "{name}: {} allows {{{}}}, not within {} {{{}}}",
                Variant::ALL[i],
                show(&pair[0]),
                Variant::ALL[i + 1],
                show(&pair[1])
            );
            assert!(
                !pair[0].is_empty(),
                "{name}: {} allows nothing",
                Variant::ALL[i]
            );
        }
    }
}

/// Paper Tab. 1: each model allows the relaxed outcome of its first documenting test and
/// enforces the synchronous one of its second; so the relaxed witness of a model's first
/// test is classified as exactly that model.
#[test]
fn strongest_consistent_follows_the_documenting_tests() {
    let o = |v: &[i64]| Outcome(v.to_vec());
    let cases: [(&str, Vec<Outcome>, Option<Variant>); 7] = [
        ("lockstep_nosg", vec![o(&[1, 1])], Some(Variant::Cm)),
        (
            "collective_memory",
            vec![o(&[1, 1, 1, 1]), o(&[0, 0, 1, 1])],
            Some(Variant::Sm),
        ),
        ("lockstep_nosg", vec![o(&[0, 1])], Some(Variant::Scf)),
        (
            "branch_sync_nosg",
            vec![o(&[1, 0]), o(&[1, 1])],
            Some(Variant::Sso),
        ),
        (
            "spec_participation",
            vec![o(&[1, 0, 1])],
            Some(Variant::Spec),
        ),
        // c = 1: no reconvergence before the merge block, outside every variant (digest §2.1).
        ("conv_div_merge", vec![o(&[2, 1, 1, 2, 1, 1])], None),
        // Thin air is Symb only (Fig. 11).
        ("oota_broadcast", vec![o(&[7, 7])], None),
    ];
    for (name, observed, want) in cases {
        let t = load(name);
        assert_eq!(
            strongest_consistent(&t, &observed).unwrap(),
            want,
            "{name} observed {observed:?}"
        );
    }
    let t = load("lockstep_sg");
    let cm = allowed(&t, Variant::Cm).unwrap();
    assert!(contains(&cm, &o(&[1, 1])));
    assert!(!contains(&cm, &o(&[0, 1])));
}

/// The partial-order reduction must lose no outcome: full interleaving gives the same sets.
#[test]
fn reduction_preserves_every_outcome() {
    let full = Bounds {
        reduce: false,
        ..Bounds::default()
    };
    for name in TESTS {
        let t = load(name);
        for v in Variant::ALL {
            assert_eq!(
                enumerate(&t, v, Bounds::default()).unwrap(),
                enumerate(&t, v, full).unwrap(),
                "{name} under {v}"
            );
        }
    }
}

/// Divergent trip counts: thread t runs t + 1 iterations with an SG op in each. Thread 0
/// leaves the loop after one iteration, so by the "leaving a construct" bookkeeping (digest
/// §1.5.6) the second iteration's op must neither wait for it (SSO, Spec would deadlock) nor
/// count it; by Non-repeating it is a fresh DB with thread 1 alone. p[2t + i] = sg_add(1).
#[test]
fn threads_leaving_a_loop_stop_counting_for_later_iterations() {
    let t = parse(
        "threads 2\nobserve p[0], p[1], p[2], p[3]\nblock entry:\n  i = 0\n  branch head\n\
         block head:\n  loop_merge out, cont\n  branch_cond i <= tid, body, out\nblock body:\n  \
         n = sg_add(1)\n  store p[2 * tid + i], n\n  branch cont\nblock cont:\n  i = i + 1\n  \
         branch head\nblock out:\n  return\n",
    )
    .unwrap();
    for v in Variant::ALL {
        let set = allowed(&t, v).unwrap();
        assert_eq!(set.len(), 1, "{v}: {}", show(&set));
        assert!(
            contains(&set, &Outcome(vec![2, 0, 2, 1])),
            "{v}: {}",
            show(&set)
        );
    }
}

#[test]
fn enumeration_is_deterministic() {
    let t = load("collective_memory");
    for v in Variant::ALL {
        assert_eq!(allowed(&t, v).unwrap(), allowed(&t, v).unwrap());
    }
}

/// A spin loop: SIMT-Step gives each iteration fresh dynamic blocks, so the state space is
/// infinite and the step bound must be reported.
#[test]
fn non_terminating_tests_hit_the_step_bound() {
    let t = parse(
        "threads 1\nobserve f\nblock entry:\n  branch head\nblock head:\n  v = load f\n  \
         loop_merge out, cont\n  branch_cond v == 0, cont, out\nblock cont:\n  branch head\nblock out:\n  return\n",
    )
    .unwrap();
    let bounds = Bounds {
        max_steps: 300,
        max_states: 100_000,
        reduce: true,
    };
    for v in Variant::ALL {
        assert_eq!(
            enumerate(&t, v, bounds),
            Err(EnumError::StepBound {
                variant: v,
                limit: 300
            })
        );
    }
}

#[test]
fn broadcast_from_a_non_participant_is_undefined() {
    let t = parse(
        "threads 2\nblock entry:\n  selection_merge m\n  branch_cond tid == 1, a, m\nblock a:\n  \
         w = sg_broadcast(1, 0)\n  branch m\nblock m:\n  return\n",
    )
    .unwrap();
    for v in Variant::ALL {
        match allowed(&t, v) {
            Err(EnumError::Undefined { pos, .. }) => assert_eq!((pos.line, pos.col), (6, 3)),
            other => panic!("{v}: {other:?}"),
        }
    }
}

#[test]
fn parse_errors_carry_line_and_column() {
    let cases: [(&str, (usize, usize)); 6] = [
        ("threads 2\nblock e:\n  x = 1 +\n  return\n", (3, 10)),
        ("threads 2\nblock e:\n  branch nowhere\n", (3, 10)),
        ("threads 2\nblock e:\n  return\n  x = 1\n", (4, 3)),
        (
            "threads 2\nobserve g\nexpect CM: (1, 2)\nblock e:\n  return\n",
            (3, 12),
        ),
        ("threads 2\nblock e:\n  x = 1\n", (2, 7)),
        ("threads 2\nexpect Symb: ()\n", (2, 8)),
    ];
    for (text, (line, col)) in cases {
        let e = parse(text).expect_err(text);
        assert_eq!((e.pos.line, e.pos.col), (line, col), "{text:?}: {e}");
    }
}

mod robustness {
    use super::parse;
    use proptest::prelude::*;

    proptest! {
        /// The parser returns an error, never panics, on arbitrary input.
        #[test]
        fn parser_never_panics(text in "[a-z_ 0-9=\\[\\](),:+*<!|&\\n-]{0,200}") {
            let _ = parse(&text);
        }
    }
}

/// Participation under CM: per test, every complete execution's per-thread sequence of
/// subgroup-operation participant masks. CM's collective control flow fixes each dynamic
/// block's threads from the threads' own paths, and CM runs a subgroup's loads collectively,
/// so a path could depend on the interleaving only through another subgroup's writes; no test
/// of the suite branches on those, so every test has exactly one participation.
/// (The reduction must not lose one: the unreduced search agrees.)
#[test]
fn participation_under_cm_is_one_sequence_per_test() {
    use gpusim_models::simt_step::{enumerate_participation, participation};
    let full = Bounds {
        reduce: false,
        ..Bounds::default()
    };
    for name in TESTS {
        let t = load(name);
        let p = participation(&t, Variant::Cm).unwrap();
        assert_eq!(p.len(), 1, "{name}: {p:?}");
        assert_eq!(
            p,
            enumerate_participation(&t, Variant::Cm, full).unwrap(),
            "{name}: the reduction lost a participation"
        );
        let only = p.into_iter().next().unwrap();
        assert_eq!(only.len(), t.threads, "{name}: one sequence per thread");
    }
    let one = |name: &str| {
        participation(&load(name), Variant::Cm)
            .unwrap()
            .into_iter()
            .next()
            .unwrap()
    };
    // Paper Fig. 5: {0} at i = 0, {1} at i = 1, {0,1} at i = 2.
    assert_eq!(
        one("loop_participation"),
        vec![vec![0b01, 0b11], vec![0b10, 0b11]]
    );
    // Two subgroups of two: each sg_all_equal runs over its own subgroup.
    assert_eq!(
        one("collective_memory"),
        vec![vec![0b0011], vec![0b0011], vec![0b1100], vec![0b1100]]
    );
    // The branches split the threads: each sg_all runs alone.
    assert_eq!(one("gen_sso_rw"), vec![vec![0b01], vec![0b10]]);
    // No subgroup operation: empty sequences.
    assert_eq!(one("lockstep_nosg"), vec![Vec::<u64>::new(), Vec::new()]);
}

/// Under weaker variants participation can depend on the interleaving: Spec's speculative
/// ballot in spec_participation may run before the other thread arrives.
#[test]
fn participation_under_spec_can_differ_between_executions() {
    let p = gpusim_models::simt_step::participation(&load("spec_participation"), Variant::Spec)
        .unwrap();
    assert!(p.contains(&vec![vec![0b11], vec![0b11]]), "{p:?}");
    assert!(p.contains(&vec![vec![0b01], vec![]]), "{p:?}");
}
