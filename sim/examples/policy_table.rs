//! Prints the markdown tables of `docs/reconvergence.md`: cycles and SIMD efficiency of every
//! reconvergence policy on the divergent kernels and the formal-semantics traces, on the
//! embedded tiny GPU. Run with `cargo run --release -p gpusim --example policy_table`.

use std::path::{Path, PathBuf};

/// (column title, `--set` overrides).
const POLICIES: &[(&str, &[(&str, &str)])] = &[
    ("token-stack", &[("sm.reconvergence", "token-stack")]),
    ("pdom-stack", &[("sm.reconvergence", "pdom-stack")]),
    (
        "convergence-barrier",
        &[("sm.reconvergence", "convergence-barrier")],
    ),
    (
        "convergence-barrier, quantum 256",
        &[
            ("sm.reconvergence", "convergence-barrier"),
            ("sm.convergence_barrier", "{switch: quantum, quantum: 256}"),
        ],
    ),
    ("multi-path", &[("sm.reconvergence", "multi-path")]),
    (
        "thread-frontiers",
        &[("sm.reconvergence", "thread-frontiers")],
    ),
];

const KERNELS: &[&str] = &[
    "mandelbrot",
    "bfs_step",
    "switch_case",
    "bitonic_sort",
    "spmv_csr",
    "compact",
    "recursive",
];

fn manifests() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
    let mut out: Vec<(String, PathBuf)> = KERNELS
        .iter()
        .map(|k| {
            (
                format!("kernels/{k}"),
                root.join(format!("kernels/{k}/{k}.yaml")),
            )
        })
        .collect();
    let mut sem: Vec<PathBuf> = std::fs::read_dir(root.join("semantics"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    sem.sort();
    for d in sem {
        let name = d.file_name().unwrap().to_string_lossy().to_string();
        out.push((format!("semantics/{name}"), d.join(format!("{name}.yaml"))));
    }
    out
}

/// One cell: (cycles, SIMD efficiency) or what stopped the run.
type Cell = Result<(u64, f64), String>;

fn run(m: &Path, sets: &[(&str, &str)]) -> Cell {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match gpusim::run_manifest(m, None, &sets) {
        Ok(out) => match out.expected_fault {
            Some(f) => Err(format!("{} fault", f.kind.name())),
            None => Ok((out.stats.totals.cycles, out.stats.totals.simd_efficiency)),
        },
        Err(gpusim::RunError::Fault(f)) => Err(format!("{} fault", f.kind.name())),
        Err(e) => Err(format!("error: {e}")),
    }
}

fn main() {
    let rows: Vec<(String, Vec<Cell>)> = manifests()
        .into_iter()
        .map(|(name, m)| {
            let cells = POLICIES.iter().map(|(_, s)| run(&m, s)).collect();
            (name, cells)
        })
        .collect();
    let header = |what: &str| {
        let titles: Vec<&str> = POLICIES.iter().map(|p| p.0).collect();
        println!("| {what} | {} |", titles.join(" | "));
        println!("|---|{}", "---:|".repeat(POLICIES.len()));
    };
    println!("Cycles (tiny GPU):\n");
    header("trace");
    for (name, cells) in &rows {
        let c: Vec<String> = cells
            .iter()
            .map(|c| match c {
                Ok((cy, _)) => cy.to_string(),
                Err(e) => e.clone(),
            })
            .collect();
        println!("| {name} | {} |", c.join(" | "));
    }
    println!("\nSIMD efficiency (thread instructions / (warp instructions × warp size)):\n");
    header("trace");
    for (name, cells) in &rows {
        let c: Vec<String> = cells
            .iter()
            .map(|c| match c {
                Ok((_, e)) => format!("{:.1}%", e * 100.0),
                Err(e) => e.clone(),
            })
            .collect();
        println!("| {name} | {} |", c.join(" | "));
    }
}
