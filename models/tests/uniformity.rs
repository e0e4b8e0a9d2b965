//! The uniformity analysis against its recorded verdicts: the paper's examples lowered to PTX
//! (`traces/litmus/uniformity/`, one `.expect` per program) and every NVRTC kernel under
//! `traces/kernels/` (`traces/kernels/uniformity.expect`, each flagged one with its reason).

use gpusim_models::uniformity::{
    analyze, analyze_for, analyze_functions, Blocks, FindingKind, Level, Source, Step,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The lines flagged in the PTX file at `path`.
fn flagged_lines(path: &Path) -> BTreeSet<u32> {
    let src = std::fs::read_to_string(path).unwrap();
    let m = gpusim_isa::parse_module(&path.display().to_string(), &src)
        .unwrap_or_else(|e| panic!("{e}"));
    analyze(&m).iter().map(|f| f.span.line).collect()
}

/// `accepted` or `flagged: 12 30 …` (anything after ` — ` is the recorded reason).
fn parse_verdict(s: &str) -> BTreeSet<u32> {
    let s = s.split(" — ").next().unwrap().trim();
    if s == "accepted" {
        return BTreeSet::new();
    }
    let lines = s
        .strip_prefix("flagged:")
        .unwrap_or_else(|| panic!("bad verdict `{s}`"));
    lines
        .split_whitespace()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn paper_examples_match_their_expected_verdicts() {
    let dir = root().join("traces/litmus/uniformity");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 20,
        "expected the paper's examples in {}",
        dir.display()
    );
    let mut bad = Vec::new();
    for ptx in &names {
        let exp = std::fs::read_to_string(ptx.with_extension("expect")).unwrap();
        let want = parse_verdict(exp.lines().next().unwrap());
        let got = flagged_lines(ptx);
        if got != want {
            bad.push(format!("{}: expected {want:?}, got {got:?}", ptx.display()));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn kernels_match_their_recorded_verdicts() {
    let table = std::fs::read_to_string(root().join("traces/kernels/uniformity.expect")).unwrap();
    let mut recorded = std::collections::BTreeMap::new();
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (name, verdict) = line.split_once(' ').unwrap();
        if verdict.starts_with("flagged") {
            assert!(
                verdict.contains(" — "),
                "{name}: a flagged kernel needs its reason"
            );
        }
        recorded.insert(name.to_string(), parse_verdict(verdict));
    }
    let mut seen = 0;
    let mut bad = Vec::new();
    for e in std::fs::read_dir(root().join("traces/kernels"))
        .unwrap()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().to_string();
        let ptx = e.path().join(format!("{name}.ptx"));
        if !ptx.exists() {
            continue;
        }
        seen += 1;
        match recorded.get(&name) {
            None => bad.push(format!("{name}: no recorded verdict")),
            Some(want) => {
                let got = flagged_lines(&ptx);
                if &got != want {
                    bad.push(format!("{name}: expected {want:?}, got {got:?}"));
                }
            }
        }
    }
    assert_eq!(
        seen,
        recorded.len(),
        "the table lists kernels that do not exist"
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn module(src: &str) -> gpusim_isa::Module {
    gpusim_isa::parse_module("t.ptx", src).unwrap_or_else(|e| panic!("{e}"))
}

const HDR: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

#[test]
fn the_chain_names_branch_values_and_source() {
    let src = format!(
        "{HDR}.visible .entry k()\n{{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\
         \tmov.u32 %r1, %tid.x;\n\tadd.s32 %r2, %r1, 1;\n\tsetp.gt.u32 %p1, %r2, 4;\n\
         \t@%p1 bra $L_end;\n\tbar.sync 0;\n$L_end:\n\tret;\n}}\n"
    );
    let f = analyze(&module(&src));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, FindingKind::Barrier("bar.sync"));
    assert_eq!(f[0].level, Level::Cta);
    assert_eq!((f[0].span.line, f[0].span.col), (12, 2));
    assert!(
        matches!(&f[0].chain[0], Step::Branch { on: Some(p), span, .. } if p == "%p1" && span.line == 11)
    );
    assert_eq!(
        f[0].chain.last(),
        Some(&Step::Source(Source::Special("%tid.x".into())))
    );
    assert_eq!(
        f[0].to_string(),
        "bar.sync at t.ptx:12:2 is controlled by the branch at t.ptx:11:2 on %p1, which depends \
         on %p1 (t.ptx:10), which depends on %r2 (t.ptx:9), which depends on %r1 (t.ptx:8), \
         which depends on %tid.x"
    );
}

#[test]
fn ctaid_and_params_are_uniform_but_a_redefinition_is_tracked() {
    // %r1 first holds %tid.x, then %ctaid.x: only the reaching definition matters.
    let src = format!(
        "{HDR}.visible .entry k(.param .u32 n)\n{{\n\t.reg .pred %p<3>;\n\t.reg .b32 %r<4>;\n\
         \tmov.u32 %r1, %tid.x;\n\tmov.u32 %r1, %ctaid.x;\n\tld.param.u32 %r2, [n];\n\
         \tsetp.gt.u32 %p1, %r1, %r2;\n\t@%p1 bra $L_end;\n\tbar.sync 0;\n$L_end:\n\tret;\n}}\n"
    );
    assert!(analyze(&module(&src)).is_empty());
}

#[test]
fn warp_uniform_collective_results_only_matter_for_cta_barriers() {
    let src = format!(
        "{HDR}.visible .entry k()\n{{\n\t.reg .pred %p<3>;\n\t.reg .b32 %r<4>;\n\
         \tmov.u32 %r1, %laneid;\n\tredux.sync.add.u32 %r2, %r1, -1;\n\
         \tsetp.gt.u32 %p1, %r2, 4;\n\t@%p1 bra $L_end;\n\
         \tshfl.sync.idx.b32 %r3, %r1, 0, 31, -1;\n\tbar.sync 0, 64;\n$L_end:\n\tret;\n}}\n"
    );
    // redux gives the whole warp one value, and a counted barrier needs only warp uniformity.
    assert!(analyze(&module(&src)).is_empty());
}

#[test]
fn summaries_follow_the_paper_for_fig7() {
    let src = std::fs::read_to_string(root().join("traces/litmus/uniformity/p4_fig7_summary.ptx"))
        .unwrap();
    let results = analyze_functions(&module(&src));
    let f = results.iter().find(|r| r.name == "f").unwrap();
    let s = &f.summary;
    // §4.6: f must be called from uniform control flow; x and y may be non-uniform; the
    // return value may be non-uniform; both parameters affect it.
    assert_eq!(s.call_site.as_ref().map(|n| n.level), Some(Level::Cta));
    assert!(s.params.iter().all(Option::is_none));
    assert!(s.ret_nonuniform[Level::Cta as usize].is_some());
    assert_eq!(s.ret_params, vec![true, true]);
    assert!(!s.exits);
    assert_eq!(f.findings.len(), 1);
}

#[test]
fn a_callee_that_exits_non_uniformly_makes_the_caller_diverge() {
    let src = format!(
        "{HDR}.func g()\n{{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<2>;\n\
         \tmov.u32 %r1, %tid.x;\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 exit;\n\tret;\n}}\n\
         .visible .entry k()\n{{\n\tcall g, ();\n\tbar.sync 0;\n\tret;\n}}\n"
    );
    let m = module(&src);
    let f = analyze(&m);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].span.line, 16);
    assert!(matches!(&f[0].chain[0], Step::Branch { what, .. } if what.contains("may exit")));
    assert!(
        matches!(
            f[0].chain.last(),
            Some(Step::Source(Source::Callee { exit: true, .. }))
        ),
        "{}",
        f[0]
    );
}

#[test]
fn recursion_reaches_a_fixpoint() {
    // r(p) calls itself and has a barrier that depends on p; calling it with %tid.x is flagged
    // at the call in k, and the recursive call passes the requirement on.
    let src = format!(
        "{HDR}.func r(.param .b32 r_p)\n{{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>;\n\
         \tld.param.u32 %r1, [r_p];\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra $L_end;\n\
         \tbar.sync 0;\n\tsub.s32 %r2, %r1, 1;\n\t{{\n\t.param .b32 a;\n\tst.param.b32 [a], %r2;\n\
         \tcall r, (a);\n\t}}\n$L_end:\n\tret;\n}}\n\
         .visible .entry k()\n{{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, %tid.x;\n\t{{\n\
         \t.param .b32 a;\n\tst.param.b32 [a], %r1;\n\tcall r, (a);\n\t}}\n\tret;\n}}\n"
    );
    let results = analyze_functions(&module(&src));
    let r = results.iter().find(|r| r.name == "r").unwrap();
    assert!(r.summary.params[0].is_some());
    let k = results.iter().find(|r| r.name == "k").unwrap();
    assert_eq!(k.findings.len(), 1);
    assert!(matches!(
        k.findings[0].kind,
        FindingKind::Argument { index: 0, .. }
    ));
}

/// Structured kernels for the property test: a barrier is reported exactly when some enclosing
/// `if` or loop bound is non-uniform (the paper's `if` and loop rules with fresh conditions).
#[derive(Clone, Debug)]
enum Stmt {
    Barrier,
    /// `if (cond != 0) { … }`, with a non-uniform condition when the flag is set.
    If(bool, Vec<Stmt>),
    /// `for (i = 0; i < bound; i++) { … }`, with a non-uniform bound when the flag is set.
    Loop(bool, Vec<Stmt>),
}

fn stmts() -> impl proptest::strategy::Strategy<Value = Vec<Stmt>> {
    use proptest::prelude::*;
    let leaf = Just(Stmt::Barrier);
    let stmt = leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            Just(Stmt::Barrier),
            (any::<bool>(), prop::collection::vec(inner.clone(), 0..3))
                .prop_map(|(n, b)| Stmt::If(n, b)),
            (any::<bool>(), prop::collection::vec(inner, 0..3)).prop_map(|(n, b)| Stmt::Loop(n, b)),
        ]
    });
    prop::collection::vec(stmt, 1..4)
}

struct Lowering {
    text: Vec<String>,
    next: usize,
    expected: BTreeSet<u32>,
}

impl Lowering {
    /// A fresh register holding a uniform (`%ctaid.x`, a kernel parameter) or non-uniform
    /// (`%tid.x`, a shared load) value.
    fn source(&mut self, nonuniform: bool) -> usize {
        let k = self.next;
        self.next += 1;
        let src = match (nonuniform, k % 2) {
            (false, 0) => format!("\tmov.u32 %r{k}, %ctaid.x;"),
            (false, _) => format!("\tld.param.u32 %r{k}, [n];"),
            (true, 0) => format!("\tmov.u32 %r{k}, %tid.x;"),
            (true, _) => format!("\tld.shared.u32 %r{k}, [S];"),
        };
        self.text.push(src);
        k
    }

    fn lower(&mut self, body: &[Stmt], divergent: bool) {
        for s in body {
            match s {
                Stmt::Barrier => {
                    self.text.push("\tbar.sync 0;".into());
                    if divergent {
                        // Lines are 1-based and the header comes first (see `kernel`).
                        self.expected.insert(self.text.len() as u32);
                    }
                }
                Stmt::If(n, b) => {
                    let c = self.source(*n);
                    self.text.push(format!("\tsetp.eq.u32 %p{c}, %r{c}, 0;"));
                    self.text.push(format!("\t@%p{c} bra $L_end{c};"));
                    self.lower(b, divergent || *n);
                    self.text.push(format!("$L_end{c}:"));
                }
                Stmt::Loop(n, b) => {
                    let c = self.source(*n);
                    let i = self.next;
                    self.next += 1;
                    self.text.push(format!("\tmov.u32 %r{i}, 0;"));
                    self.text.push(format!("$L_head{c}:"));
                    self.text
                        .push(format!("\tsetp.ge.u32 %p{c}, %r{i}, %r{c};"));
                    self.text.push(format!("\t@%p{c} bra $L_exit{c};"));
                    self.lower(b, divergent || *n);
                    self.text.push(format!("\tadd.u32 %r{i}, %r{i}, 1;"));
                    self.text.push(format!("\tbra $L_head{c};"));
                    self.text.push(format!("$L_exit{c}:"));
                }
            }
        }
    }
}

fn kernel(body: &[Stmt]) -> (String, BTreeSet<u32>) {
    let mut l = Lowering {
        text: vec![
            ".version 7.0".into(),
            ".target sm_70".into(),
            ".address_size 64".into(),
            ".shared .align 4 .b32 S[4];".into(),
            ".visible .entry k(.param .u32 n)".into(),
            "{".into(),
            "\t.reg .pred %p<100>;".into(),
            "\t.reg .b32 %r<100>;".into(),
        ],
        next: 1,
        expected: BTreeSet::new(),
    };
    l.lower(body, false);
    l.text.push("\tbar.sync 0;".into());
    l.text.push("\tret;".into());
    l.text.push("}".into());
    (l.text.join("\n") + "\n", l.expected)
}

proptest::proptest! {
    #[test]
    fn barriers_are_flagged_exactly_under_non_uniform_ifs_and_loops(body in stmts()) {
        let (src, expected) = kernel(&body);
        let got: BTreeSet<u32> = analyze(&module(&src)).iter().map(|f| f.span.line).collect();
        proptest::prop_assert_eq!(got, expected, "{}", src);
    }
}

/// A generated kernel of about `n` instructions, for the complexity tests (issue 11 item 12):
/// `line`, a chain of dependent additions ending in a barrier under a branch on it; `ifs`,
/// sequential `if (tid + i == 0) bar.sync`; `loops`, sequential uniform loops with a barrier.
fn generated(kind: &str, n: usize) -> String {
    let mut s = format!(
        "{HDR}.visible .entry big(.param .u32 p)\n{{\n\t.reg .pred %p<{n}>;\n\t.reg .b32 %r<{n}>;\n\
         \tld.param.u32 %r1, [p];\n\tmov.u32 %r0, %tid.x;\n"
    );
    let mut line = |t: String| {
        s.push_str(&t);
        s.push('\n');
    };
    match kind {
        "line" => {
            for i in 2..n {
                // The chain starts at %tid.x (%r0), not at the parameter in %r1.
                let src = if i == 2 { 0 } else { i - 1 };
                line(format!("\tadd.u32 %r{i}, %r{src}, {i};"));
            }
            line(format!("\tsetp.eq.u32 %p1, %r{}, 0;", n - 1));
            line("\t@%p1 bra $L_end;\n\tbar.sync 0;\n$L_end:".into());
        }
        "ifs" => {
            for i in 2..n / 4 {
                line(format!("\tadd.u32 %r{i}, %r0, {i};"));
                line(format!("\tsetp.eq.u32 %p{i}, %r{i}, 0;"));
                line(format!("\t@%p{i} bra $L_{i};\n\tbar.sync 0;\n$L_{i}:"));
            }
        }
        _ => {
            for i in 2..n / 5 {
                line(format!(
                    "\tmov.u32 %r{i}, 0;\n$L_h{i}:\n\tadd.u32 %r{i}, %r{i}, 1;"
                ));
                line(format!("\tbar.sync 0;\n\tsetp.lt.u32 %p{i}, %r{i}, %r1;"));
                line(format!("\t@%p{i} bra $L_h{i};"));
            }
        }
    }
    s.push_str("\tret;\n}\n");
    s
}

/// Issue 11 item 12: `gpusim lint` was quadratic (40k instructions 4.1 s and 241 MB, 200k 104 s
/// and 5 GB: dense reaching-definition bitsets per instruction and a region walk with a fresh
/// visited array per decision). Everything the analysis builds — control dependences, values,
/// graph nodes and edges, which bound the work of every pass — must now grow linearly: at most
/// a constant per instruction, and doubling the kernel at most doubles it (not a timing test).
#[test]
fn the_analysis_is_linear_in_the_kernel_size() {
    for (kind, n) in [("line", 100_000), ("ifs", 40_000), ("loops", 40_000)] {
        let size = |n: usize| {
            let m = module(&generated(kind, n));
            let r = analyze_functions(&m);
            (r[0].size, r[0].findings.len())
        };
        let (small, small_findings) = size(n);
        let (large, large_findings) = size(2 * n);
        for s in [small, large] {
            assert!(
                s.total() <= 16 * s.instructions,
                "{kind}: {s:?} is more than linear in {} instructions",
                s.instructions
            );
        }
        let growth = large.total() as f64 / small.total() as f64;
        assert!(
            growth < 2.2,
            "{kind}: doubling the kernel multiplies the analysis by {growth:.2} ({small:?} → {large:?})"
        );
        // The verdicts scale with the kernel, too.
        match kind {
            "line" => assert_eq!((small_findings, large_findings), (1, 1)),
            "ifs" => assert_eq!(large_findings, 2 * small_findings + 2, "{kind}"),
            _ => assert_eq!((small_findings, large_findings), (0, 0)),
        }
    }
}

/// 200,000 straight-line instructions, the size the issue reports (104 s before): the analysis
/// builds a few values per instruction.
#[test]
fn two_hundred_thousand_instructions() {
    let m = module(&generated("line", 200_000));
    let r = analyze_functions(&m);
    assert_eq!(r[0].findings.len(), 1);
    let s = r[0].size;
    assert!(s.instructions >= 200_000);
    assert!(s.total() <= 16 * s.instructions, "{s:?}");
}

const HOPPER: &str = ".version 8.0\n.target sm_90a\n.address_size 64\n";

/// A warp-specialised kernel: the role is `%tid.x / 128` (or `>> 7`) by `div`/`shr`, the
/// consumers run `setmaxnreg`, `wgmma` and a named barrier of 256 threads, the producer
/// warpgroup `setmaxnreg` and one elected thread (`%tid.x % 128 == 0`). `role` is the PTX that
/// computes %r2 from %r1 = %tid.x.
fn warp_specialised(role: &str, extra_reads: &str) -> String {
    format!(
        "{HOPPER}.visible .entry ws()\n{{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\
         \t.reg .f32 %f<4>;\n\t.reg .b64 %rd<4>;\n\
         \tmov.u32 %r1, %tid.x;\n{extra_reads}\t{role}\n\
         \tsetp.eq.u32 %p1, %r2, 2;\n\t@%p1 bra $L_producer;\n\
         \tsetmaxnreg.inc.sync.aligned.u32 232;\n\twgmma.fence.sync.aligned;\n\
         \twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n\
         \tbar.sync 1, 256;\n\tbra.uni $L_exit;\n\
         $L_producer:\n\tsetmaxnreg.dec.sync.aligned.u32 40;\n\
         \trem.u32 %r3, %r1, 128;\n\tsetp.ne.u32 %p2, %r3, 0;\n\t@%p2 bra $L_exit;\n\
         \tmov.u32 %r4, 0;\n\
         $L_exit:\n\tret;\n}}\n"
    )
}

fn flagged(m: &gpusim_isa::Module, blocks: &Blocks) -> Vec<(u32, Level)> {
    analyze_for(m, blocks)
        .iter()
        .map(|f| (f.span.line, f.level))
        .collect()
}

/// Issue 11 item 3: `gpusim lint` flagged every warp-specialised kernel because `%tid.x / 128`
/// was as non-uniform as `%tid.x`. A quotient by 128 is uniform in every warpgroup (and by 32
/// in every warp) when the rows of `%tid.x` are aligned; `setmaxnreg` and `wgmma` need
/// warpgroup uniformity, the named barrier warp uniformity.
#[test]
fn warpgroup_roles_are_warpgroup_uniform() {
    for role in ["shr.u32 %r2, %r1, 7;", "div.u32 %r2, %r1, 128;"] {
        let m = module(&warp_specialised(role, ""));
        // A 1-D block of 384 threads, or 128 per row: nothing to report.
        for shape in [[384, 1, 1], [128, 3, 1], [256, 2, 1]] {
            assert_eq!(
                flagged(&m, &Blocks::known(vec![shape])),
                [],
                "{role} {shape:?}"
            );
        }
        // Unknown shape: accepted under the stated assumption.
        let r = analyze_functions(&m);
        assert!(r[0].findings.is_empty(), "{role}: {:?}", r[0].findings);
        assert_eq!(r[0].assumptions.len(), 1, "{role}: {:?}", r[0].assumptions);
        assert_eq!(r[0].assumptions[0].k, 128);
        assert_eq!(r[0].assumptions[0].level, Level::Warpgroup);
        // 192 threads per row in 2 rows: the warpgroup of threads 128..255 holds x = 128..191
        // and x = 0..63, which take different roles.
        // (Warps stay whole: 192 is a multiple of 32, so the named barrier is fine.)
        let f = flagged(&m, &Blocks::known(vec![[192, 2, 1]]));
        let wg = Level::Warpgroup;
        assert_eq!(
            f,
            [(14, wg), (15, wg), (16, wg), (17, wg), (21, wg)],
            "{role}"
        );
    }
}

/// Negative cases: a role that is not warpgroup-uniform keeps the warpgroup instructions
/// flagged (and the warp-level named barrier too where warps differ).
#[test]
fn non_warpgroup_uniform_roles_are_still_flagged() {
    let one_d = Blocks::known(vec![[384, 1, 1]]);
    // tid / 64: uniform per warp, not per warpgroup.
    let m = module(&warp_specialised("shr.u32 %r2, %r1, 6;", ""));
    let f = flagged(&m, &one_d);
    let lines: Vec<u32> = f.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [14, 15, 16, 17, 21], "{f:?}");
    assert!(f.iter().all(|(_, l)| *l == Level::Warpgroup), "{f:?}");
    // tid & 1: differs within a warp.
    let m = module(&warp_specialised("and.b32 %r2, %r1, 1;", ""));
    let lines: Vec<u32> = flagged(&m, &one_d).iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [14, 15, 16, 17, 18, 21]);
    // tid / 48: not a multiple of the warp size.
    let m = module(&warp_specialised("div.u32 %r2, %r1, 48;", ""));
    assert_eq!(flagged(&m, &one_d).len(), 6);
    // (tid + 64) / 128 is not a quotient of %tid.x.
    let m = module(&warp_specialised(
        "add.u32 %r5, %r1, 64;\n\tshr.u32 %r2, %r5, 7;",
        "",
    ));
    assert_eq!(flagged(&m, &one_d).len(), 6);
    // and with a mask clearing the low 7 bits keeps the warpgroup: uniform.
    let m = module(&warp_specialised("and.b32 %r2, %r1, -128;", ""));
    assert_eq!(flagged(&m, &one_d), []);
}

/// Unknown block shape and a module that reads %tid.y: it runs multi-dimensional blocks, so
/// rows are not assumed aligned and the roles are flagged; the launch shape decides.
#[test]
fn multi_dimensional_kernels_are_not_assumed_aligned() {
    let m = module(&warp_specialised(
        "shr.u32 %r2, %r1, 7;",
        "\tmov.u32 %r6, %tid.y;\n",
    ));
    let r = analyze_functions(&m);
    assert!(r[0].assumptions.is_empty());
    assert_eq!(r[0].findings.len(), 6, "{:?}", r[0].findings);
    assert_eq!(flagged(&m, &Blocks::known(vec![[128, 3, 1]])), []);
    // %ntid.x at most 128: every quotient is 0.
    assert_eq!(flagged(&m, &Blocks::known(vec![[96, 4, 1]])), []);
}

/// The project's warp-specialised Hopper kernels lint clean (the launch shape of their
/// manifests, and unknown).
#[test]
fn the_hopper_kernels_lint_clean() {
    let mut n = 0;
    for dir in std::fs::read_dir(root().join("traces/gemm"))
        .unwrap()
        .flatten()
    {
        let name = dir.file_name().to_string_lossy().to_string();
        if !name.starts_with("hopper_ws_") || name == "hopper_ws_broken" {
            continue;
        }
        let ptx = dir.path().join(format!("{name}.ptx"));
        let src = std::fs::read_to_string(&ptx).unwrap();
        let m = gpusim_isa::parse_module(&ptx.display().to_string(), &src).unwrap();
        assert_eq!(analyze(&m), [], "{name}");
        assert_eq!(flagged(&m, &Blocks::known(vec![[384, 1, 1]])), [], "{name}");
        n += 1;
    }
    assert!(n >= 5, "the hopper_ws_* kernels");
}
