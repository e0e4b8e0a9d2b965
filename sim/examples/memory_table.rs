//! Writes the memory-system tables of `docs/memory.md` (between `<!-- memory_table:begin -->`
//! and `<!-- memory_table:end -->`) and prints them: the microbenchmarks of
//! `traces/microbench/` (`gpusim::microbench`) on every config of `configs/` — idle
//! latencies, L2 and DRAM streaming bandwidth, the loaded-latency curve (volta-v100), DRAM row
//! locality, mixed read/write streams — against the configured figures, under the component
//! memory system (`memory_engine: components`, the default), whose DRAM controllers the
//! row-locality table compares under each `dram.scheduler`, and, on the configs of
//! `ISSUE_GPUS`, under the older model that times accesses at issue (`memory_engine: issue`,
//! rows marked "· issue"). A statistic an engine does not report shows as n/a.
//! Run with `cargo run --release -p gpusim --example memory_table`.

use gpusim::microbench::{self as mb, Bench, Gpu, Window};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// A table of the doc: its text from the runs on the configs.
type Table = fn(&Bench, &[Gpu]) -> String;

const BEGIN: &str = "<!-- memory_table:begin -->";
const END: &str = "<!-- memory_table:end -->";
/// The config the loaded-latency manifests are built for (one CTA per SM).
const LOADED_GPU: &str = "volta-v100";
/// DRAM schedulers compared on the row-locality kernel, under the component memory system
/// (the issue-time model serves DRAM in issue order whatever `dram.scheduler` says).
const SCHEDULERS: [&str; 2] = ["fcfs", "fr-fcfs"];
/// The configs whose tables also show the issue-time model, for comparison.
const ISSUE_GPUS: [&str; 3] = ["tiny", "volta-v100", "hopper-h100"];
/// The suffix of a GPU's name under the issue-time model.
const ISSUE: &str = " · issue";

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scratch = std::env::temp_dir().join(format!("gpusim-memory-table-{}", std::process::id()));
    let bench = Bench::new(&root.join("traces/microbench"), &scratch).unwrap();
    let mut gpus = configs(&root);
    let issue: Vec<Gpu> = gpus
        .iter()
        .filter(|g| ISSUE_GPUS.contains(&g.name.as_str()))
        .map(|g| {
            let mut c = g.with("memory_engine", "issue").unwrap();
            c.name = format!("{}{ISSUE}", g.name);
            c
        })
        .collect();
    gpus.extend(issue);
    let mut doc = String::new();
    let sections: [(&str, Table); 5] = [
        ("Idle latencies", idle_latencies),
        ("Streaming bandwidth", streaming),
        ("Loaded latency", loaded_latency),
        ("DRAM row locality", row_locality),
        ("Mixed reads and writes", mixed),
    ];
    for (title, table) in sections {
        let started = std::time::Instant::now();
        let text = table(&bench, &gpus);
        eprintln!("{title}: {:.0} s", started.elapsed().as_secs_f64());
        println!("{title}\n\n{text}");
        let _ = write!(doc, "**{title}**\n\n{text}\n");
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let path = root.join("docs/memory.md");
    let old = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, replace_between_markers(&old, doc.trim_end())).unwrap();
    eprintln!("wrote {}", path.display());
}

/// Every config of `configs/`, in name order.
fn configs(root: &Path) -> Vec<Gpu> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join("configs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    paths.iter().map(|p| Gpu::load(Some(p)).unwrap()).collect()
}

/// `doc` with the text between the markers replaced by `tables`; the markers and a heading
/// are appended where the doc has none.
fn replace_between_markers(doc: &str, tables: &str) -> String {
    match (doc.find(BEGIN), doc.find(END)) {
        (Some(b), Some(e)) if b < e => {
            format!("{}{BEGIN}\n{tables}\n{}", &doc[..b], &doc[e..])
        }
        _ => format!(
            "{}\n## Validation tables\n\n{BEGIN}\n{tables}\n{END}\n",
            doc.trim_end()
        ),
    }
}

/// A table's header: the first `text` columns left-aligned, the numbers right-aligned.
fn header(text: usize, cols: &[&str]) -> String {
    let align: Vec<&str> = (0..cols.len())
        .map(|i| if i < text { "---" } else { "---:" })
        .collect();
    format!("| {} |\n|{}|\n", cols.join(" | "), align.join("|"))
}

fn row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

fn idle_latencies(b: &Bench, gpus: &[Gpu]) -> String {
    let mut t = header(1, &["GPU", "L1 hit", "L2 hit", "DRAM (row miss)"]);
    for gpu in gpus {
        let lats = mb::idle_latencies(b, gpu).unwrap();
        let mut cells = vec![gpu.name.clone()];
        cells.extend(
            lats.iter()
                .map(|l| format!("{:.1} ({})", l.measured, l.configured)),
        );
        t += &row(&cells);
    }
    t + "\nCycles per dependent load of the pointer chases (configured round trip in parentheses; \
         with `l2.partitions` > 1 — hopper-h100 — `dram.latency` is a line of the SM's own \
         partition's, and the DRAM chase meets about half its lines in the other, \
         `l2.far_latency` further).\n"
}

/// `rate` bytes per cycle as GB/s at the config's clock.
fn gbps(rate: f64, gpu: &Gpu) -> String {
    gpu.cfg.clock_mhz.map_or("n/a".into(), |mhz| {
        format!("{:.0}", rate * mhz as f64 / 1000.0)
    })
}

fn streaming(b: &Bench, gpus: &[Gpu]) -> String {
    let cols = [
        "GPU",
        "level",
        "B/cycle",
        "configured",
        "%",
        "GB/s",
        "configured GB/s",
    ];
    let mut t = header(2, &cols);
    for gpu in gpus {
        let l2 = mb::stream_l2(b, gpu).unwrap();
        let dram = mb::stream_dram(b, gpu).unwrap();
        let levels = [
            (
                "L2",
                l2.per_cycle(|m| m.l2_bytes),
                gpu.cfg.l2_bytes_per_core_cycle(),
            ),
            (
                "DRAM",
                dram.per_cycle(|m| m.dram_bytes - m.dram_write_bytes),
                gpu.cfg.dram.bytes_per_cycle as f64,
            ),
        ];
        for (level, got, want) in levels {
            t += &row(&[
                gpu.name.clone(),
                level.into(),
                format!("{got:.1}"),
                format!("{want:.0}"),
                format!("{:.1}", 100.0 * got / want),
                gbps(got, gpu),
                gbps(want, gpu),
            ]);
        }
    }
    t + "\n`stream_l2` (`ld.global.cg` of an array resident in L2) and `stream_dram` (every warp \
         load a new line), bytes per cycle between two trip counts; configured: per core cycle \
         at the config's clock (an L2 on its own clock, `clock.l2_mhz`, at that ratio).\n"
}

fn loaded_latency(b: &Bench, gpus: &[Gpu]) -> String {
    let loaded: Vec<&Gpu> = gpus
        .iter()
        .filter(|g| g.name.starts_with(LOADED_GPU))
        .collect();
    if loaded.is_empty() {
        return format!("n/a: no {LOADED_GPU} config\n");
    }
    let mut t = header(
        2,
        &[
            "GPU",
            "streaming warps",
            "offered B/cycle",
            "DRAM reads B/cycle",
            "mean latency",
            "median",
            "90th percentile",
            "chase end / run cycles",
        ],
    );
    for (gpu, ctas) in loaded
        .iter()
        .flat_map(|g| mb::LOADED_CTAS.iter().map(move |c| (*g, *c)))
    {
        let peak = gpu.cfg.dram.bytes_per_cycle as f64;
        let p = mb::loaded_latency(b, gpu, ctas).unwrap();
        t += &row(&[
            gpu.name.clone(),
            p.warps().to_string(),
            format!(
                "{:.0} ({:.0} %)",
                p.offered(&gpu.cfg),
                100.0 * p.offered(&gpu.cfg) / peak
            ),
            format!("{:.0} ({:.0} %)", p.achieved(), 100.0 * p.achieved() / peak),
            format!("{:.1}", p.mean()),
            format!("{:.0}", p.quantile(0.5)),
            format!("{:.0}", p.quantile(0.9)),
            format!("{} / {}", p.chase_end, p.stats.totals.cycles),
        ]);
    }
    t + &format!(
        "\n{LOADED_GPU}: load-to-use cycles of {} chase hops (after {} warm-up hops) beside the \
         streaming warps; offered = warps × {} lines in flight per idle DRAM latency; DRAM \
         reads over the whole run.\n",
        mb::LOADED_HOPS as usize - mb::LOADED_WARMUP,
        mb::LOADED_WARMUP,
        mb::LOADED_UNROLL
    )
}

/// The same GPU under each DRAM scheduler (component memory system), or just itself
/// (issue order) under the issue-time model.
fn schedulers(gpu: &Gpu) -> Vec<(String, Gpu)> {
    if gpu.name.ends_with(ISSUE) {
        return vec![("issue order".into(), gpu.clone())];
    }
    SCHEDULERS
        .iter()
        .map(|s| (s.to_string(), gpu.with("dram.scheduler", s).unwrap()))
        .collect()
}

fn row_locality(b: &Bench, gpus: &[Gpu]) -> String {
    let mut t = header(
        3,
        &[
            "GPU",
            "scheduler",
            "order",
            "DRAM B/cycle",
            "% of peak",
            "row-hit rate",
        ],
    );
    for gpu in gpus {
        for (sched, on) in schedulers(gpu) {
            for order in ["alternate", "batched"] {
                let cells = match mb::row_locality(b, &on, order).unwrap() {
                    Some(w) => vec![
                        format!("{:.1}", w.dram_bytes_per_cycle()),
                        format!(
                            "{:.1}",
                            100.0 * w.dram_bytes_per_cycle() / gpu.cfg.dram.bytes_per_cycle as f64
                        ),
                        format!("{:.3}", w.row_hit_rate()),
                    ],
                    None => vec![
                        "n/a (no table for this DRAM geometry)".into(),
                        "".into(),
                        "".into(),
                    ],
                };
                let mut r = vec![gpu.name.clone(), sched.clone(), order.into()];
                r.extend(cells);
                t += &row(&r);
            }
        }
    }
    t + "\n`row_alternate` / `row_batched`: one warp per channel, 32 lines in flight, alternating \
         between two rows of one bank or reading each row's 16 lines in a run; between 2 and 8 \
         iterations. Under the issue-time model DRAM serves requests in issue order; under the \
         component memory system the controllers of `mem::dram_ctrl` schedule them \
         (`dram.scheduler`).\n"
}

/// The DRAM controllers' refresh and turnaround cycles over `w` (component memory system
/// only: the issue-time model has neither).
fn dram_time(w: &Window, gpu: &Gpu) -> [String; 2] {
    if gpu.name.ends_with(ISSUE) {
        return ["n/a".into(), "n/a".into()];
    }
    [
        w.dram_delta(|d| d.refresh_cycles).to_string(),
        w.dram_delta(|d| d.turnaround_cycles).to_string(),
    ]
}

fn mixed(b: &Bench, gpus: &[Gpu]) -> String {
    let mut cols = vec![
        "GPU",
        "kernel",
        "DRAM B/cycle (R+W)",
        "% of peak",
        "written",
    ];
    cols.extend(["refresh cycles", "turnaround cycles"]);
    let mut t = header(2, &cols);
    for gpu in gpus {
        for entry in ["rw_copy", "rw_add"] {
            let mut r = vec![gpu.name.clone(), entry.into()];
            match mb::mixed(b, gpu, entry).unwrap() {
                Some(w) => {
                    let rate = w.dram_bytes_per_cycle();
                    r.push(format!("{rate:.1}"));
                    r.push(format!(
                        "{:.1}",
                        100.0 * rate / gpu.cfg.dram.bytes_per_cycle as f64
                    ));
                    r.push(format!("{:.0} %", 100.0 * w.dram_write_share()));
                    r.extend(dram_time(&w, gpu));
                }
                None => r.push(format!(
                    "not run: L2 {} KiB > {} KiB",
                    gpu.cfg.l2.size_kib,
                    mb::MIXED_MAX_L2_KIB
                )),
            }
            t += &row(&r);
        }
    }
    t + "\n`rw_copy` (dst = src + 1) and `rw_add` (dst = a + b): the stores reach DRAM as L2 \
         write-backs, so the window opens once three L2s of traffic have gone by.\n"
}
