//! Writes the memory-system tables of `docs/memory.md` (between `<!-- memory_table:begin -->`
//! and `<!-- memory_table:end -->`) and prints them: the microbenchmarks of
//! `traces/microbench/` (`gpusim::microbench`) on every config of `configs/` — idle
//! latencies, L2 and DRAM streaming bandwidth, the loaded-latency curve (volta-v100), DRAM row
//! locality, mixed read/write streams — against the configured figures. A statistic the
//! simulator does not report yet, or a config key it does not have yet (`dram.scheduler`),
//! shows as n/a. Run with `cargo run --release -p gpusim --example memory_table`.

use gpusim::microbench::{self as mb, Bench, Gpu, Window};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// A table of the doc: its text from the runs on the configs.
type Table = fn(&Bench, &[Gpu]) -> String;

const BEGIN: &str = "<!-- memory_table:begin -->";
const END: &str = "<!-- memory_table:end -->";
/// The config the loaded-latency manifests are built for (one CTA per SM).
const LOADED_GPU: &str = "volta-v100";
/// DRAM schedulers compared on the row-locality kernel. Empty while the timed memory system
/// still serves DRAM in issue order (`mem::dram`): `dram.scheduler` configures the controller
/// of `mem::dram_ctrl`, which does not drive the simulation yet (issue 12); comparing would
/// print identical rows. Then: `["fcfs", "fr-fcfs"]`.
const SCHEDULERS: [&str; 0] = [];
/// Memory counters shown where the simulator reports them (`--stats-json`'s `memory`).
const DRAM_TIME_STATS: [(&str, &str); 2] = [
    ("refresh cycles", "dram_refresh_cycles"),
    ("turnaround cycles", "dram_turnaround_cycles"),
];

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let scratch = std::env::temp_dir().join(format!("gpusim-memory-table-{}", std::process::id()));
    let bench = Bench::new(&root.join("traces/microbench"), &scratch).unwrap();
    let gpus = configs(&root);
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
    t + "\nCycles per dependent load of the pointer chases (configured round trip in parentheses).\n"
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
                gpu.cfg.l2.bytes_per_cycle,
            ),
            (
                "DRAM",
                dram.per_cycle(|m| m.dram_bytes - m.dram_write_bytes),
                gpu.cfg.dram.bytes_per_cycle,
            ),
        ];
        for (level, got, want) in levels {
            t += &row(&[
                gpu.name.clone(),
                level.into(),
                format!("{got:.1}"),
                want.to_string(),
                format!("{:.1}", 100.0 * got / want as f64),
                gbps(got, gpu),
                gbps(want as f64, gpu),
            ]);
        }
    }
    t + "\n`stream_l2` (`ld.global.cg` of an array resident in L2) and `stream_dram` (every warp \
         load a new line), bytes per cycle between two trip counts.\n"
}

fn loaded_latency(b: &Bench, gpus: &[Gpu]) -> String {
    let Some(gpu) = gpus.iter().find(|g| g.name == LOADED_GPU) else {
        return format!("n/a: no {LOADED_GPU} config\n");
    };
    let peak = gpu.cfg.dram.bytes_per_cycle as f64;
    let mut t = header(
        1,
        &[
            "streaming warps",
            "offered B/cycle",
            "DRAM reads B/cycle",
            "mean latency",
            "median",
            "90th percentile",
            "chase end / run cycles",
        ],
    );
    for ctas in mb::LOADED_CTAS {
        let p = mb::loaded_latency(b, gpu, ctas).unwrap();
        t += &row(&[
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

/// The same GPU under each DRAM scheduler, or just itself where the config has no
/// `dram.scheduler` key.
fn schedulers(gpu: &Gpu) -> Vec<(String, Gpu)> {
    let named: Vec<(String, Gpu)> = SCHEDULERS
        .iter()
        .filter_map(|s| Some((s.to_string(), gpu.with("dram.scheduler", s).ok()?)))
        .collect();
    if named.is_empty() {
        vec![("n/a".into(), gpu.clone())]
    } else {
        named
    }
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
         iterations. Scheduler n/a: the timed memory system serves DRAM requests in issue order; \
         `dram.scheduler` selects the controller of `mem::dram_ctrl`, which does not drive the \
         simulation yet.\n"
}

/// A memory counter's growth over `w`, where the stats have it.
fn stat_delta(w: &Window, key: &str) -> String {
    let get = |s: &gpusim::stats::RunStats| serde_json::to_value(s).ok()?["memory"][key].as_f64();
    match (get(&w.short), get(&w.long)) {
        (Some(a), Some(b)) => format!("{:.0}", b - a),
        _ => "n/a".into(),
    }
}

fn mixed(b: &Bench, gpus: &[Gpu]) -> String {
    let mut cols = vec![
        "GPU",
        "kernel",
        "DRAM B/cycle (R+W)",
        "% of peak",
        "written",
    ];
    cols.extend(DRAM_TIME_STATS.iter().map(|s| s.0));
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
                    r.extend(DRAM_TIME_STATS.iter().map(|s| stat_delta(&w, s.1)));
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
