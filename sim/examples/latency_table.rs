//! Prints the latency table of `docs/memory.md`: cycles per load of the pointer chases
//! (`traces/microbench/chase_*.yaml`, one thread's dependent loads) on volta-v100 under the
//! component memory system (the default) and the issue-time model, against the published V100
//! figures. Run with `cargo run --release -p gpusim --example latency_table`.

use gpusim::config::Config;
use gpusim::microbench::{Bench, Gpu, Variant};
use std::path::Path;

/// (level, chase, shorter and longer chain in loads, row policy, published cycles, its
/// source). The DRAM chase walks along rows, so under the open-page policy most of its loads
/// are row hits; the closed-page run has every load activate its row, the case the configured
/// (and published) latency describes.
const LEVELS: &[(&str, &str, u64, u64, &str, f64, &str)] = &[
    ("L1 hit", "l1", 32, 96, "open", 28.0, "Jia et al. 2018"),
    ("shared", "shared", 32, 96, "open", 19.0, "Jia et al. 2018"),
    (
        "L2 hit",
        "l2",
        512,
        1024,
        "open",
        193.0,
        "Jia et al. 2018 (~193)",
    ),
    (
        "DRAM, row miss (closed page)",
        "dram",
        64,
        192,
        "closed",
        460.0,
        "markdewing pointer chase (~460)",
    ),
    (
        "DRAM, along open rows (open page)",
        "dram",
        64,
        192,
        "open",
        460.0,
        "markdewing pointer chase (~460)",
    ),
];

fn main() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/volta-v100.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    let cfg = Config::from_yaml("volta-v100", &text, &[]).expect("volta-v100 is valid");
    let int = cfg.sm.units.int.latency as f64;
    let dir = std::env::temp_dir().join(format!("gpusim-latency-table-{}", std::process::id()));
    let microbench = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/microbench");
    let bench = Bench::new(&microbench, &dir).unwrap();
    let gpu = Gpu::load(Some(&config)).unwrap();
    let cycles = |name: &str, n: u64, rows: &str, engine: &str| {
        let v = Variant::new(&format!("chase_{name}")).args(&[n]);
        let on = gpu
            .with("dram.row_policy", rows)
            .and_then(|g| g.with("memory_engine", engine))
            .unwrap();
        bench.run(&v, &on).unwrap().stats.totals.cycles
    };
    let per_load = |name: &str, (short, long): (u64, u64), rows: &str, engine: &str| {
        let (a, b) = (
            cycles(name, short, rows, engine),
            cycles(name, long, rows, engine),
        );
        (b - a) as f64 / (long - short) as f64 - int
    };
    println!("| level | cycles per load (components) | difference | cycles per load (issue) | published V100 | source |");
    println!("|---|---:|---:|---:|---:|---|");
    for &(level, name, short, long, rows, published, source) in LEVELS {
        let comp = per_load(name, (short, long), rows, "components");
        let issue = per_load(name, (short, long), rows, "issue");
        println!(
            "| {level} | {comp:.1} | {:+.1} | {issue:.1} | {published:.0} | {source} |",
            comp - published
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
