//! Measuring the memory system with the microbenchmarks of `traces/microbench/` (docs/memory.md
//! "Validation"): a manifest rerun with other trip counts, grid or buffer sizes, and what the
//! validation reads from the runs — cycles per dependent load, bytes per cycle between two trip
//! counts (launch, ramp-up and tail cancel), the timed hops of the loaded-latency chase.
//!
//! Shared by `sim/tests/microbench.rs` (which asserts what holds) and
//! `examples/memory_table.rs` (which writes the tables). The kernels, their arguments and
//! buffers are described in `traces/microbench/gen.py` and `memsys.py`; the constants below
//! mirror theirs. Only for the manifests gen.py writes: the rewriting is by line, on the layout
//! gen.py gives them.

use crate::config::{Arch, Config};
use crate::run::{run_manifest, RunOutput};
use crate::stats::{MemCounters, RunStats};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

const LINE: u64 = 128;

/// A GPU to measure: its config file (`None`: the embedded tiny), overrides, and the result.
#[derive(Clone)]
pub struct Gpu {
    pub name: String,
    pub path: Option<PathBuf>,
    pub sets: Vec<(String, String)>,
    pub cfg: Config,
}

impl Gpu {
    /// The config at `path` (`None`: tiny). The microbenchmarks are built for sm_52, CUDA 12's
    /// oldest target: a config of an older generation (Fermi) runs them with `sm.arch=sm_52`,
    /// as `sim/tests/traces.rs` does. They run with the fixed L1/shared split
    /// (`l1.carveout=fixed`, what a kernel asking for the most shared memory gets from the
    /// driver): their arrays are sized against `l1.size_kib`, and under the driver's choice a
    /// kernel without shared memory would have the whole unified array as L1.
    pub fn load(path: Option<&Path>) -> Result<Gpu, String> {
        let mut gpu = Gpu::parse(path, Vec::new())?;
        let sm52 = Arch::parse("sm_52").expect("sm_52 is an architecture");
        if !gpu.cfg.sm.arch.runs(sm52) {
            gpu = gpu.with("sm.arch", "sm_52")?;
        }
        if gpu.cfg.l1.carveout != crate::config::Carveout::Fixed {
            gpu = gpu.with("l1.carveout", "fixed")?;
        }
        Ok(gpu)
    }

    /// The same GPU with `--set key=value` added.
    pub fn with(&self, key: &str, value: &str) -> Result<Gpu, String> {
        let mut sets = self.sets.clone();
        sets.push((key.to_string(), value.to_string()));
        Gpu::parse(self.path.as_deref(), sets)
    }

    fn parse(path: Option<&Path>, sets: Vec<(String, String)>) -> Result<Gpu, String> {
        let (source, text) = match path {
            Some(p) => (
                p.display().to_string(),
                std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
            ),
            None => ("tiny".to_string(), crate::config::TINY_YAML.to_string()),
        };
        let cfg = Config::from_yaml(&source, &text, &sets).map_err(|e| e.to_string())?;
        Ok(Gpu {
            name: cfg.name.clone(),
            path: path.map(Path::to_path_buf),
            sets,
            cfg,
        })
    }
}

/// A manifest of `traces/microbench/` with its last arguments, its grid's x or buffer sizes
/// replaced (and its checks dropped: their values belong to the shipped sizes).
pub struct Variant {
    name: String,
    tail: Vec<u64>,
    grid: Option<u64>,
    shapes: Vec<(String, u64)>,
}

impl Variant {
    pub fn new(name: &str) -> Variant {
        Variant {
            name: name.to_string(),
            tail: Vec::new(),
            grid: None,
            shapes: Vec::new(),
        }
    }
    /// Replace the last `tail.len()` launch arguments (trip counts, sizes).
    pub fn args(mut self, tail: &[u64]) -> Variant {
        self.tail = tail.to_vec();
        self
    }
    pub fn grid(mut self, ctas: u64) -> Variant {
        self.grid = Some(ctas);
        self
    }
    /// Buffer `name` with `len` elements (one-dimensional buffers).
    pub fn shape(mut self, name: &str, len: u64) -> Variant {
        self.shapes.push((name.to_string(), len));
        self
    }
}

/// Runs `Variant`s of the manifests in `dir`, writing them into `scratch`.
pub struct Bench {
    dir: PathBuf,
    scratch: PathBuf,
    written: AtomicU32,
}

impl Bench {
    pub fn new(dir: &Path, scratch: &Path) -> Result<Bench, String> {
        std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
        Ok(Bench {
            dir: dir.to_path_buf(),
            scratch: scratch.to_path_buf(),
            written: AtomicU32::new(0),
        })
    }

    /// Run `v` on `gpu`.
    pub fn run(&self, v: &Variant, gpu: &Gpu) -> Result<RunOutput, String> {
        let path = self.write(v)?;
        run_manifest(&path, gpu.path.as_deref(), &gpu.sets)
            .map_err(|e| format!("{} on {}: {e}", v.name, gpu.name))
    }

    fn write(&self, v: &Variant) -> Result<PathBuf, String> {
        let src = self.dir.join(format!("{}.yaml", v.name));
        let text = std::fs::read_to_string(&src).map_err(|e| format!("{}: {e}", src.display()))?;
        let mut out = String::new();
        let wanted =
            v.shapes.len() + usize::from(v.grid.is_some()) + usize::from(!v.tail.is_empty());
        let mut made = 0;
        for line in text.lines().take_while(|l| !l.starts_with("checks:")) {
            let (line, edited) = self.edit(line, v);
            made += usize::from(edited);
            out.push_str(&line);
            out.push('\n');
        }
        if made != wanted {
            return Err(format!(
                "{}: {made} of the {wanted} requested changes apply (one launch, each buffer once)",
                src.display()
            ));
        }
        let n = self.written.fetch_add(1, Ordering::Relaxed);
        let path = self.scratch.join(format!("{}-{n}.yaml", v.name));
        std::fs::write(&path, out).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    }

    /// One manifest line with the variant's changes and files made absolute; whether a
    /// requested change was made.
    fn edit(&self, line: &str, v: &Variant) -> (String, bool) {
        if let Some(file) = line.strip_prefix("kernel:") {
            return (
                format!("kernel: {}", self.dir.join(file.trim()).display()),
                false,
            );
        }
        let mut line = line.to_string();
        if let Some((head, rest)) = line.split_once("npy: ") {
            let file = rest.trim_end_matches([' ', '}']);
            line = format!(
                "{head}npy: {}{}",
                self.dir.join(file).display(),
                &rest[file.len()..]
            );
        }
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let list = |s: &str| -> Vec<String> {
            let inner = s.trim().trim_start_matches('[').trim_end_matches(']');
            inner.split(',').map(|x| x.trim().to_string()).collect()
        };
        if let (Some(grid), Some(dims)) = (v.grid, trimmed.strip_prefix("grid:")) {
            let mut d = list(dims);
            d[0] = grid.to_string();
            return (format!("{indent}grid: [{}]", d.join(", ")), true);
        }
        if let (false, Some(args)) = (v.tail.is_empty(), trimmed.strip_prefix("args:")) {
            let mut a = list(args);
            let from = a.len().saturating_sub(v.tail.len());
            for (slot, x) in a[from..].iter_mut().zip(&v.tail) {
                *slot = x.to_string();
            }
            return (format!("{indent}args: [{}]", a.join(", ")), true);
        }
        for (name, len) in &v.shapes {
            let Some(rest) = trimmed.strip_prefix(&format!("{name}: ")) else {
                continue;
            };
            if let Some((before, after)) = rest.split_once("shape: [") {
                let tail = after.split_once(']').map_or("", |(_, t)| t);
                return (
                    format!("{indent}{name}: {before}shape: [{len}]{tail}"),
                    true,
                );
            }
        }
        (line, false)
    }
}

/// The counters of two runs of one kernel that differ only in trip count: what the extra
/// iterations did, with the launch, ramp-up and tail cancelled.
pub struct Window {
    pub short: RunStats,
    pub long: RunStats,
}

impl Window {
    fn between(
        b: &Bench,
        v: impl Fn(u64) -> Variant,
        (n1, n2): (u64, u64),
        gpu: &Gpu,
    ) -> Result<Window, String> {
        Ok(Window {
            short: b.run(&v(n1), gpu)?.stats,
            long: b.run(&v(n2), gpu)?.stats,
        })
    }

    pub fn cycles(&self) -> u64 {
        self.long.totals.cycles - self.short.totals.cycles
    }

    /// The growth of a memory counter.
    pub fn delta(&self, f: impl Fn(&MemCounters) -> u64) -> u64 {
        f(&self.long.totals.memory.counters) - f(&self.short.totals.memory.counters)
    }

    pub fn per_cycle(&self, f: impl Fn(&MemCounters) -> u64) -> f64 {
        self.delta(f) as f64 / self.cycles() as f64
    }

    /// DRAM bytes (reads and writes) per cycle.
    pub fn dram_bytes_per_cycle(&self) -> f64 {
        self.per_cycle(|m| m.dram_bytes)
    }

    /// The share of the DRAM bytes written.
    pub fn dram_write_share(&self) -> f64 {
        self.delta(|m| m.dram_write_bytes) as f64 / self.delta(|m| m.dram_bytes).max(1) as f64
    }

    /// Row hits over all DRAM accesses (from the DRAM controllers under the component memory
    /// system, from the SMs' counters otherwise).
    pub fn row_hit_rate(&self) -> f64 {
        let (h0, m0, c0) = dram_rows(&self.short);
        let (h1, m1, c1) = dram_rows(&self.long);
        let (h, all) = (h1 - h0, (h1 + m1 + c1) - (h0 + m0 + c0));
        h as f64 / all.max(1) as f64
    }

    /// A DRAM controller total of the component memory system (0 under the issue engine).
    pub fn dram_delta(&self, f: impl Fn(&crate::stats::memory_system::DramReport) -> u64) -> u64 {
        let total = |s: &RunStats| {
            s.kernels
                .iter()
                .filter_map(|k| k.memory_system.as_ref())
                .map(|m| f(&m.dram))
                .sum::<u64>()
        };
        total(&self.long) - total(&self.short)
    }
}

/// (row hits, misses, conflicts) of a run.
fn dram_rows(s: &RunStats) -> (u64, u64, u64) {
    let sys: Vec<_> = s
        .kernels
        .iter()
        .filter_map(|k| k.memory_system.as_ref())
        .collect();
    if sys.is_empty() {
        let m = &s.totals.memory.counters;
        (m.dram_row_hits, m.dram_row_misses, m.dram_row_conflicts)
    } else {
        sys.iter().fold((0, 0, 0), |(h, m, c), r| {
            (
                h + r.dram.row_hits,
                m + r.dram.row_misses,
                c + r.dram.row_conflicts,
            )
        })
    }
}

/// An idle latency: cycles per dependent load of a chase against the configured round trip.
pub struct IdleLatency {
    pub level: &'static str,
    pub measured: f64,
    pub configured: u32,
}

/// The pointer chases (`chase_{l1,l2,dram}.yaml`) on `gpu`: cycles per load between two chain
/// lengths, less the int latency of the `mad.wide.u32` that turns each loaded index into the
/// next address. The DRAM chase runs with `dram.row_policy=closed`: every access opens its row,
/// the row miss the configured `dram.latency` is.
pub fn idle_latencies(b: &Bench, gpu: &Gpu) -> Result<Vec<IdleLatency>, String> {
    let closed = gpu.with("dram.row_policy", "closed")?;
    let c = &gpu.cfg;
    let chases = [
        ("L1", "l1", (32, 96), c.l1.hit_latency, gpu),
        ("L2", "l2", (512, 1024), c.l2.hit_latency, gpu),
        ("DRAM", "dram", (64, 192), c.dram.latency, &closed),
    ];
    let mut out = Vec::new();
    for (level, name, (short, long), configured, on) in chases {
        let run = |n: u64| -> Result<u64, String> {
            let v = Variant::new(&format!("chase_{name}")).args(&[n]);
            Ok(b.run(&v, on)?.stats.totals.cycles)
        };
        let per_load = (run(long)? - run(short)?) as f64 / (long - short) as f64;
        out.push(IdleLatency {
            level,
            measured: per_load - c.sm.units.int.latency as f64,
            configured,
        });
    }
    Ok(out)
}

/// The trip counts before a bandwidth window opens: the first iterations ramp up.
const RAMP_ITERATIONS: u64 = 4;
/// A window long enough that its ends move the rate by well under 1 %: the stream's bytes
/// over this many cycles at the configured rate.
const WINDOW_CYCLES: f64 = 12_000.0;

/// CTAs of 256 threads for a DRAM stream keeping `lines` lines in flight per CTA: enough on
/// every SM for twice the configured bandwidth × idle DRAM latency (Little's law), within the
/// SM's thread and CTA limits.
pub fn stream_ctas(cfg: &Config, lines: u64) -> u64 {
    let sms = cfg.sm.count as u64;
    let need = 2.0 * cfg.dram.bytes_per_cycle as f64 * cfg.dram.latency as f64;
    let per_sm = (need / (lines * LINE * sms) as f64).ceil() as u64;
    let room = (cfg.sm.max_threads as u64 / 256).min(cfg.sm.max_ctas as u64);
    per_sm.clamp(1, room.max(1)) * sms
}

/// The trip counts of a window that opens after `start` iterations and lasts about
/// `WINDOW_CYCLES` at `rate` bytes per cycle, moving `bytes` per iteration.
fn window_trips(start: u64, rate: f64, bytes: u64) -> (u64, u64) {
    let extra = (rate * WINDOW_CYCLES / bytes as f64).ceil() as u64;
    (start, start + extra.max(2))
}

/// Loads per thread and iteration of `stream_dram` (gen.py STREAM_UNROLL).
const STREAM_UNROLL: u64 = 4;

/// `stream_dram.yaml` (every warp load a new line) with `stream_ctas` CTAs: DRAM reads.
pub fn stream_dram(b: &Bench, gpu: &Gpu) -> Result<Window, String> {
    let ctas = stream_ctas(&gpu.cfg, 8 * STREAM_UNROLL);
    let threads = ctas * 256;
    let trips = window_trips(
        RAMP_ITERATIONS,
        gpu.cfg.dram.bytes_per_cycle as f64,
        threads * STREAM_UNROLL * 4,
    );
    let v = |n: u64| {
        Variant::new("stream_dram")
            .grid(ctas)
            .shape("out", threads)
            .shape("in", STREAM_UNROLL * trips.1 * threads)
            .args(&[n])
    };
    Window::between(b, v, trips, gpu)
}

/// The words of `stream_l2`'s array on `cfg`: 256 KiB where the L2 holds 1 MiB or more (so
/// that each slice serves nearly the same number of its lines), else the shipped 64 KiB.
pub fn stream_l2_words(cfg: &Config) -> u64 {
    if cfg.l2.size_kib >= 1024 {
        65536
    } else {
        16384
    }
}

/// CTAs of 256 threads for the L2 stream: gen.py's 240, or every SM full (as many as its
/// thread and CTA limits allow) where that is more, as bandwidth benchmarks launch. Each warp
/// keeps 8 lines in flight; with 240 CTAs the component memory system's queueing latency left
/// H100's stream short of the L2's bandwidth by Little's law (93.2 %; 98.6 % with 480), not
/// for want of bandwidth. (On tiny, 240 CTAs are 20 waves, whose staggered starts keep the
/// warps from issuing in lock step; one full wave reaches only 86 %.)
pub fn stream_l2_ctas(cfg: &Config) -> u64 {
    let room = (cfg.sm.max_threads as u64 / 256).min(cfg.sm.max_ctas as u64);
    (room.max(1) * cfg.sm.count as u64).max(240)
}

/// `stream_l2.yaml` (`ld.global.cg` of an array that stays in L2) with `stream_l2_ctas` CTAs:
/// L2 reads.
pub fn stream_l2(b: &Bench, gpu: &Gpu) -> Result<Window, String> {
    // gen.py: CTAs × 256 threads, 8 loads each per iteration; `out` holds one word per warp.
    let words = stream_l2_words(&gpu.cfg);
    let ctas = stream_l2_ctas(&gpu.cfg);
    let trips = window_trips(
        RAMP_ITERATIONS,
        gpu.cfg.l2.bytes_per_cycle as f64,
        ctas * 256 * 8 * 4,
    );
    let v = |n: u64| {
        Variant::new("stream_l2")
            .grid(ctas)
            .shape("out", ctas * 8)
            .shape("in", words)
            .args(&[words, n])
    };
    Window::between(b, v, trips, gpu)
}

/// Streaming CTAs of the loaded-latency manifests (memsys.py LOADED_CTAS).
pub const LOADED_CTAS: [u64; 9] = [0, 8, 16, 24, 32, 40, 48, 64, 79];
/// Loads in flight per streaming warp (LOADED_UNROLL), warps per CTA.
pub const LOADED_UNROLL: u64 = 8;
pub const LOADED_WARPS_PER_CTA: u64 = 8;
/// Hops of the chase recorded, and the first ones left out of the statistics (the streams are
/// still ramping up).
pub const LOADED_HOPS: u64 = 72;
pub const LOADED_WARMUP: usize = 8;

/// One run of `loaded_latency_cNN.yaml`.
pub struct LoadedPoint {
    pub ctas: u64,
    /// Load-to-use latency of each hop after the warm-up: its cycles less the clock overhead
    /// (the calibration hop, an L1 hit, less `l1.hit_latency`).
    pub latencies: Vec<f64>,
    /// The cycle the chase ended, and the run's cycles (the streams should outlast it).
    pub chase_end: u64,
    pub stats: RunStats,
}

impl LoadedPoint {
    pub fn warps(&self) -> u64 {
        self.ctas * LOADED_WARPS_PER_CTA
    }

    /// What the streams offer: their lines in flight per idle DRAM latency, bytes per cycle.
    pub fn offered(&self, cfg: &Config) -> f64 {
        (self.warps() * LOADED_UNROLL * LINE) as f64 / cfg.dram.latency as f64
    }

    /// DRAM reads per cycle over the whole run.
    pub fn achieved(&self) -> f64 {
        let m = &self.stats.totals.memory.counters;
        (m.dram_bytes - m.dram_write_bytes) as f64 / self.stats.totals.cycles as f64
    }

    pub fn mean(&self) -> f64 {
        self.latencies.iter().sum::<f64>() / self.latencies.len() as f64
    }

    /// The `q` quantile (0.5: the median), nearest rank.
    pub fn quantile(&self, q: f64) -> f64 {
        let mut v = self.latencies.clone();
        v.sort_by(f64::total_cmp);
        v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
    }
}

/// `loaded_latency_cNN.yaml` with `ctas` streaming CTAs, `LOADED_HOPS` hops, and streams of
/// 5/4 as many iterations (an iteration takes about one loaded latency, as a hop does, so
/// they outlast the chase).
pub fn loaded_latency(b: &Bench, gpu: &Gpu, ctas: u64) -> Result<LoadedPoint, String> {
    let hops = LOADED_HOPS;
    let v = Variant::new(&format!("loaded_latency_c{ctas:02}")).args(&[hops, hops * 5 / 4]);
    let out = b.run(&v, gpu)?;
    let lat = u32s(&out, "lat")?;
    let hops = hops as usize;
    let overhead = lat[hops + 1] as f64 - gpu.cfg.l1.hit_latency as f64;
    Ok(LoadedPoint {
        ctas,
        latencies: lat[LOADED_WARMUP..hops]
            .iter()
            .map(|&c| c as f64 - overhead)
            .collect(),
        chase_end: lat[hops] as u64,
        stats: out.stats,
    })
}

/// A u32 buffer of a run.
pub fn u32s(out: &RunOutput, name: &str) -> Result<Vec<u32>, String> {
    let (_, _, _, bytes) = out
        .buffers
        .iter()
        .find(|b| b.0 == name)
        .ok_or_else(|| format!("no buffer `{name}`"))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect())
}

/// A DRAM geometry: (channels, banks, row_bytes, interleave_bytes) of `dram`.
pub type DramGeometry = (u32, u32, u32, u32);

/// The DRAM geometries the row-locality tables exist for (memsys.py ROW_GEOMETRIES), with the
/// manifests' suffix.
pub const ROW_GEOMETRIES: [(&str, DramGeometry); 6] = [
    ("tiny", (2, 16, 2048, 256)),
    ("gtx480", (6, 16, 4096, 256)),
    ("v100", (32, 16, 2048, 256)),
    ("a100", (40, 16, 2048, 256)),
    ("h100", (40, 64, 2048, 256)),
    ("h200", (48, 64, 2048, 256)),
];

/// The suffix of the row-locality manifests built for `cfg`'s DRAM geometry.
pub fn row_suffix(cfg: &Config) -> Option<&'static str> {
    let d = &cfg.dram;
    let g = (d.channels, d.banks, d.row_bytes, d.interleave_bytes);
    ROW_GEOMETRIES.iter().find(|r| r.1 == g).map(|r| r.0)
}

/// `row_ORDER_GPU.yaml` (`order`: `alternate` or `batched`) for `gpu`'s DRAM geometry, its
/// window between 2 and 8 iterations; `None` where gen.py has no table for the geometry.
pub fn row_locality(b: &Bench, gpu: &Gpu, order: &str) -> Result<Option<Window>, String> {
    let Some(suffix) = row_suffix(&gpu.cfg) else {
        return Ok(None);
    };
    let v = |n: u64| Variant::new(&format!("row_{order}_{suffix}")).args(&[n]);
    Window::between(b, v, (2, 8), gpu).map(Some)
}

/// The largest L2 the mixed streams run on: their writes reach DRAM as L2 write-backs, at the
/// rate they are written once the L2 is full of dirty lines, so the window opens after three
/// L2s of traffic.
pub const MIXED_MAX_L2_KIB: u32 = 8192;
/// Words of each buffer per thread and iteration (memsys.py RW_UNROLL).
const RW_UNROLL: u64 = 4;

/// `rw_copy.yaml` or `rw_add.yaml` (`entry`) with `stream_ctas` CTAs, past the L2's filling;
/// `None` where the L2 is larger than `MIXED_MAX_L2_KIB`.
pub fn mixed(b: &Bench, gpu: &Gpu, entry: &str) -> Result<Option<Window>, String> {
    let cfg = &gpu.cfg;
    if cfg.l2.size_kib > MIXED_MAX_L2_KIB {
        return Ok(None);
    }
    let inputs: &[&str] = if entry == "rw_add" {
        &["a", "b"]
    } else {
        &["src"]
    };
    let buffers = inputs.len() as u64 + 1;
    let ctas = stream_ctas(cfg, 8 * RW_UNROLL * buffers);
    let threads = ctas * 256;
    let per_trip = threads * RW_UNROLL * 4 * buffers;
    let fill = (3 * cfg.l2.size_kib as u64 * 1024).div_ceil(per_trip);
    let trips = window_trips(
        fill.max(RAMP_ITERATIONS),
        cfg.dram.bytes_per_cycle as f64,
        per_trip,
    );
    let v = |n: u64| {
        let mut v = Variant::new(entry).grid(ctas).shape("sums", threads / 32);
        for name in inputs.iter().chain(&["dst"]) {
            v = v.shape(name, RW_UNROLL * trips.1 * threads);
        }
        v.args(&[n])
    };
    Window::between(b, v, trips, gpu).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variant rewrites the last arguments, the grid's x and a buffer's shape, makes the
    /// kernel and `.npy` files absolute and drops the checks; a change that applies nowhere is
    /// an error naming the manifest.
    #[test]
    fn variants_rewrite_the_manifest() {
        let dir = std::env::temp_dir().join(format!("gpusim-microbench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("k.yaml"),
            "kernel: k.ptx\nlaunches:\n  - entry: k\n    grid: [4, 1, 1]\n    block: [32, 1, 1]\n    \
             args: [out, in, 7, 2]\nbuffers:\n  out: { dtype: u32, shape: [4], init: zeros }\n  \
             in: { dtype: u32, shape: [8], init: { npy: in.npy } }\nchecks:\n  - buffer: out\n    values: [1]\n",
        )
        .unwrap();
        let b = Bench::new(&dir, &dir.join("scratch")).unwrap();
        let v = Variant::new("k").args(&[9, 5]).grid(6).shape("in", 16);
        let text = std::fs::read_to_string(b.write(&v).unwrap()).unwrap();
        let d = dir.display();
        assert_eq!(
            text,
            format!(
                "kernel: {d}/k.ptx\nlaunches:\n  - entry: k\n    grid: [6, 1, 1]\n    block: [32, 1, 1]\n    \
                 args: [out, in, 9, 5]\nbuffers:\n  out: {{ dtype: u32, shape: [4], init: zeros }}\n  \
                 in: {{ dtype: u32, shape: [16], init: {{ npy: {d}/in.npy }} }}\n"
            )
        );
        let err = b.write(&Variant::new("k").shape("missing", 1)).unwrap_err();
        assert!(
            err.contains("k.yaml") && err.contains("0 of the 1"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
