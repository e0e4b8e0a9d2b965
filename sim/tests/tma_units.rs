//! TMA unit microbenchmarks on configs/hopper-h100.yaml (issue 14), against the model of
//! docs/tensor.md (TMA "Timing") and the published figures (shared/notes/hardware.md §3b,
//! Luo et al. on an H800 PCIe: 114 SMs at 1755 MHz): tensor-load throughput against the
//! number of CTAs and the load size, the latency of one load while other SMs stream, a tile
//! multicast to a cluster against every CTA loading it, and tensor stores. The kernels are
//! the traces traces/microbench/tma_bw.ptx, tma_multicast.ptx and tma_store.ptx (their
//! headers say what they do; gen_tma.py writes their small manifests, which traces.rs runs on
//! every config); here they run at full size, each run checking the bytes it moved against a
//! closed form. The tables of docs/tensor.md ("TMA microbenchmarks") are what these tests
//! print (`-- --nocapture --test-threads 1`).

mod common;

use common::{config_path, root, temp_dir, words};

use gpusim::{run_manifest, RunOutput};
use std::sync::atomic::{AtomicUsize, Ordering};

/// hopper-h100.yaml: SMs, core clock (GHz), DRAM bytes per core cycle.
const SMS: u64 = 132;
const CLOCK_GHZ: f64 = 1.98;
const DRAM_BW: f64 = 1692.0;

/// hopper-h100.yaml's L2 bytes per core cycle (its L2 runs on its own clock).
fn l2_bw() -> f64 {
    gpusim::run::load_config(Some(&config_path("hopper-h100")), &[], &[])
        .unwrap()
        .l2_bytes_per_core_cycle()
}
/// `sm.tma.store_bytes_per_cycle`: one SM's engine, for a store's lines (loads: 128).
const STORE_ENGINE_BW: f64 = 32.0;
/// The H800 PCIe of the published figures: 114 SMs at 1.755 GHz.
const H800_SM_GHZ: f64 = 114.0 * 1.755;

/// A kernel of traces/microbench by absolute path (the manifests are written elsewhere).
fn kernel(name: &str) -> String {
    root()
        .join("traces/microbench")
        .join(name)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

/// Run a one-launch manifest of `kernel` (launch lines and buffers as YAML) on hopper-h100,
/// in its own directory; its checks must pass.
fn run(tag: &str, kernel_ptx: &str, launch: &str, buffers: &str) -> RunOutput {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let dir = temp_dir(&format!(
        "tma-{tag}-{}",
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let m = dir.join("m.yaml");
    std::fs::write(
        &m,
        format!(
            "kernel: {}\nlaunches:\n{launch}\nbuffers:\n{buffers}\n",
            kernel(kernel_ptx)
        ),
    )
    .unwrap();
    let o = run_manifest(&m, Some(&config_path("hopper-h100")), &[])
        .unwrap_or_else(|e| panic!("{tag}: {e}"));
    assert!(o.failures.is_empty(), "{tag}: {:?}", o.failures);
    let _ = std::fs::remove_dir_all(&dir);
    o
}

fn u32s(o: &RunOutput, name: &str) -> Vec<u32> {
    let b = &o.buffers.iter().find(|b| b.0 == name).unwrap().3;
    b.chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// (bytes moved at the L2 slices, DRAM bytes) of the run's launch.
fn memory_bytes(o: &RunOutput) -> (u64, u64) {
    let m = &o.stats.kernels[0].counters.memory.counters;
    (m.l2_bytes, m.dram_bytes)
}

fn gbs(bytes_per_cycle: f64) -> f64 {
    bytes_per_cycle * CLOCK_GHZ
}

/// One run of tma_bw.ptx.
struct Stream {
    /// Bytes the streaming CTAs loaded.
    bytes: u64,
    /// From the first streaming CTA's first copy to the last one's last tile (%clock64).
    window: u64,
    /// The streaming CTAs' (start, end).
    spans: Vec<(u64, u64)>,
    /// With a timer (K > 0): its (start, end) around the K reloads, and the latencies of its
    /// first load (from DRAM) and of the K reloads (from L2).
    timer: Option<(u64, u64)>,
    lat: Vec<u64>,
    dram_bytes: u64,
}

impl Stream {
    fn rate(&self) -> f64 {
        self.bytes as f64 / self.window as f64
    }
}

/// `ctas` CTAs of tma_bw.ptx: each streaming CTA loads `r` tiles of `rows` KiB with `st` in
/// flight; with `k` > 0 CTA 0 times one load of a line and `k` reloads instead. Checks every CTA's
/// checksum: streaming CTA s of G loaded tiles s + i G, tile t holding words t W .. t W + W - 1.
fn stream(ctas: u64, r: u64, st: u64, rows: u64, k: u64) -> Stream {
    let timer = u64::from(k > 0);
    let g = ctas - timer;
    let total_rows = (g * r * rows).max(1);
    let launch = format!(
        "  - entry: tma_bw
    grid: [{ctas}, 1, 1]
    block: [1, 1, 1]
    shared_bytes: {}
    args:
      - {{ tensor_map: {{ buffer: X, dims: [256, {total_rows}], box: [256, {rows}] }} }}
      - SUMS
      - TIMES
      - LAT
      - {{ tensor_map: {{ buffer: L, dims: [32, 16], box: [32, 1] }} }}
      - {r}
      - {st}
      - {rows}
      - {k}",
        st * rows * 1024
    );
    let buffers = format!(
        "  X: {{ dtype: u32, shape: [{}], init: {{ iota: {{ start: 0, step: 1 }} }} }}
  L: {{ dtype: u32, shape: [512], init: {{ iota: {{ start: 7, step: 1 }} }} }}
  SUMS: {{ dtype: u64, shape: [{ctas}], init: zeros }}
  TIMES: {{ dtype: u64, shape: [{}], init: zeros }}
  LAT: {{ dtype: u64, shape: [{}], init: zeros }}",
        total_rows * 256,
        2 * ctas,
        k + 1
    );
    let tag = format!("bw-{ctas}-{r}-{st}-{rows}-{k}");
    let o = run(&tag, "tma_bw.ptx", &launch, &buffers);
    let sums = words(&o, "SUMS");
    let w = 256 * rows;
    for s in 0..g {
        let want: u64 = (0..r).map(|i| 2 * (s + i * g) * w + w - 1).sum();
        assert_eq!(sums[(s + timer) as usize], want, "{tag}: CTA {}", s + timer);
    }
    let t = words(&o, "TIMES");
    let spans: Vec<(u64, u64)> = (timer..ctas)
        .map(|c| (t[2 * c as usize], t[2 * c as usize + 1]))
        .collect();
    let first = spans.iter().map(|s| s.0).min().unwrap_or(0);
    let window = spans.iter().map(|s| s.1).max().unwrap_or(0) - first;
    let (timer, lat) = if k > 0 {
        assert_eq!(sums[0], 7, "{tag}: the timed line's first word");
        (Some((t[0], t[1])), words(&o, "LAT"))
    } else {
        (None, Vec::new())
    };
    Stream {
        bytes: g * r * rows * 1024,
        window,
        spans,
        timer,
        lat,
        dram_bytes: memory_bytes(&o).1,
    }
}

/// Throughput of TMA tensor loads from DRAM, as Luo et al.'s tma_bw measures it: one thread
/// per CTA, one S-byte load in flight (ST = 1), each tile read once; 1, 2 and 4 CTAs per SM.
/// Published (H800 PCIe, 1 KiB loads): 223 GB/s with 114 CTAs, 830 GB/s with 456; loads of
/// 8 KiB or more about 1.8 TB/s. A load in flight per CTA makes the 1 KiB case latency-bound,
/// so throughput grows with the CTAs; large loads are bound by DRAM.
#[test]
fn tma_load_throughput_grows_with_ctas_and_load_size() {
    const R: u64 = 4;
    eprintln!(
        "TMA load throughput ({R} loads per CTA, ST in flight; window = first copy to last tile)"
    );
    eprintln!("| load | CTAs (per SM) | ST | cycles | B/cycle | GB/s | B/SM-cycle | % of DRAM |");
    eprintln!("|---|---|---|---|---|---|---|---|");
    let mut rate = std::collections::BTreeMap::new();
    for (rows, st, per_sm) in [
        (1, 1, 1),
        (1, 1, 2),
        (1, 1, 4),
        (8, 1, 1),
        (8, 1, 2),
        (8, 1, 4),
        (16, 1, 1),
        (16, 1, 4),
        (1, 4, 1),
        (8, 4, 1),
    ] {
        let ctas = SMS * per_sm;
        let s = stream(ctas, R, st, rows, 0);
        let b = s.rate();
        eprintln!(
            "| {rows} KiB | {ctas} ({per_sm}) | {st} | {} | {b:.0} | {:.0} | {:.2} | {:.0}% |",
            s.window,
            gbs(b),
            b / SMS as f64,
            100.0 * b / DRAM_BW
        );
        // Every tile came from DRAM, and no faster than DRAM delivers.
        assert!(
            s.dram_bytes >= s.bytes,
            "{rows} KiB × {ctas}: {} DRAM bytes for {} loaded",
            s.dram_bytes,
            s.bytes
        );
        assert!(b <= DRAM_BW, "{rows} KiB × {ctas}: {b:.0} B/cycle");
        rate.insert((rows, st, per_sm), b);
    }
    for (kib, gb) in [
        ("1 KiB, 114 CTAs", 223.0),
        ("1 KiB, 456 CTAs", 830.0),
        ("≥ 8 KiB", 1800.0),
    ] {
        eprintln!(
            "| published (H800 PCIe) {kib} | | 1 | | {:.0} | {gb:.0} | {:.2} | {:.0}% of 2.0 TB/s |",
            gb / 1.755,
            gb / H800_SM_GHZ,
            100.0 * gb / 2000.0
        );
    }
    // 1 KiB loads, one in flight: bound by latency, so doubling the CTAs nearly doubles it.
    let one = |per_sm| rate[&(1, 1, per_sm)];
    assert!(
        one(2) > 1.7 * one(1) && one(4) > 1.7 * one(2),
        "1 KiB: {rate:?}"
    );
    // Larger loads move more per latency; at 4 CTAs per SM 8 KiB and 16 KiB loads reach a large
    // fraction of DRAM bandwidth.
    for per_sm in [1, 2, 4] {
        assert!(
            rate[&(8, 1, per_sm)] > 2.0 * rate[&(1, 1, per_sm)],
            "{rate:?}"
        );
    }
    for per_sm in [1, 4] {
        assert!(
            rate[&(16, 1, per_sm)] >= 0.95 * rate[&(8, 1, per_sm)],
            "{rate:?}"
        );
    }
    for rows in [8, 16] {
        assert!(rate[&(rows, 1, 4)] > 0.75 * DRAM_BW, "{rows} KiB: {rate:?}");
    }
    // Loads in flight do for one CTA per SM what more CTAs do.
    assert!(rate[&(1, 4, 1)] > 2.0 * rate[&(1, 1, 1)], "{rate:?}");
}

/// The latency of one TMA load of a line in L2 (tma_latency's measurement, 8 times) while the
/// other SMs stream 8 KiB tiles from DRAM, two in flight each: 0, 64 and 131 loaded SMs. The
/// timer's first load of the line, from DRAM, is reported beside them. Published: 365–369
/// cycles from L2 and 708–757 from DRAM, unloaded (no loaded figure).
#[test]
fn tma_load_latency_grows_with_the_load_on_the_memory_system() {
    const K: u64 = 8;
    eprintln!("TMA load latency under load (CTA 0: one load from DRAM, then {K} from L2)");
    eprintln!("| loaded SMs | streaming B/cycle | first load (DRAM) | L2: min | mean | max |");
    eprintln!("|---|---|---|---|---|---|");
    let mut means = Vec::new();
    for loaded in [0, 64, 131] {
        let s = stream(loaded + 1, 24, 2, 8, K);
        let (dram, l2) = (s.lat[0], &s.lat[1..]);
        let (min, max) = (*l2.iter().min().unwrap(), *l2.iter().max().unwrap());
        let mean = l2.iter().sum::<u64>() as f64 / K as f64;
        let b = if loaded > 0 {
            format!("{:.0}", s.rate())
        } else {
            "—".into()
        };
        eprintln!("| {loaded} | {b} | {dram} | {min} | {mean:.0} | {max} |");
        if loaded == 0 {
            // As traces/microbench/tma_latency (sim/tests/hopper.rs): 365 cycles ± 5%.
            assert!(
                l2.iter().all(|&l| (l as f64 - 365.0).abs() <= 0.05 * 365.0),
                "unloaded: {l2:?}"
            );
            // Published: 708–757 from DRAM against 365–369 from L2, about 1.9×.
            assert!(
                dram as f64 >= 1.8 * min as f64,
                "a load from DRAM in {dram} cycles"
            );
        } else {
            // Every timed load ran while every streaming CTA was still streaming.
            let (_, timer_end) = s.timer.unwrap();
            let first_done = s.spans.iter().map(|x| x.1).min().unwrap();
            assert!(
                timer_end < first_done,
                "{loaded} loaded SMs: the timer ended at {timer_end}, a stream at {first_done}"
            );
        }
        means.push(mean);
    }
    eprintln!("| published, unloaded (H800 PCIe) | | 708–757 | 365 | | 369 |");
    assert!(
        means[1] > means[0] && means[2] >= means[1],
        "the latency grows with the load: {means:?}"
    );
}

/// One run of tma_multicast.ptx: (L2 bytes, DRAM bytes, the slowest CTA's cycles from its
/// cluster barrier to its tile, the largest spread of the CTAs' tile clocks within a cluster).
/// Checks every lane's sum of its CTA's tile.
fn multicast(ctas: u64, n: u64, rows: u64, mode: u64) -> (u64, u64, u64, u64) {
    let clusters = ctas / n;
    let launch = format!(
        "  - entry: tma_multicast
    grid: [{ctas}, 1, 1]
    block: [32, 1, 1]
    cluster: [{n}, 1, 1]
    shared_bytes: {}
    args:
      - {{ tensor_map: {{ buffer: X, dims: [256, {}], box: [256, {rows}] }} }}
      - SUMS
      - TIMES
      - {mode}
      - {rows}",
        rows * 1024,
        clusters * rows
    );
    let buffers = format!(
        "  X: {{ dtype: u32, shape: [{}], init: {{ iota: {{ start: 0, step: 1 }} }} }}
  SUMS: {{ dtype: u64, shape: [{}], init: zeros }}
  TIMES: {{ dtype: u64, shape: [{}], init: zeros }}",
        clusters * rows * 256,
        ctas * 32,
        ctas * 2
    );
    let tag = format!("mc-{ctas}-{n}-{rows}-{mode}");
    let o = run(&tag, "tma_multicast.ptx", &launch, &buffers);
    let sums = words(&o, "SUMS");
    let w = 256 * rows;
    for cta in 0..ctas {
        let c = cta / n;
        for l in 0..32 {
            // words c W + l + 32 j, j < W / 32
            let m = w / 32;
            let want = m * (c * w + l) + 32 * m * (m - 1) / 2;
            assert_eq!(
                sums[(32 * cta + l) as usize],
                want,
                "{tag}: CTA {cta} (cluster {c}) lane {l}"
            );
        }
    }
    let t = words(&o, "TIMES");
    let slowest = (0..ctas as usize)
        .map(|c| t[2 * c + 1] - t[2 * c])
        .max()
        .unwrap();
    let spread = t
        .chunks(2 * n as usize)
        .map(|cl| {
            let done = cl.iter().skip(1).step_by(2);
            done.clone().max().unwrap() - done.min().unwrap()
        })
        .max()
        .unwrap();
    let (l2, dram) = memory_bytes(&o);
    (l2, dram, slowest, spread)
}

/// A tile multicast to a cluster (`.multicast::cluster`, ctaMask = every rank) is read from L2
/// once per cluster and lands in every CTA; loaded by each CTA itself it is read once per CTA.
/// 132 CTAs in clusters of 2 and 4, one 16 KiB tile per cluster (from DRAM).
#[test]
fn a_multicast_tile_is_read_from_l2_once_per_cluster_and_lands_in_every_cta() {
    const ROWS: u64 = 16;
    let s = ROWS * 1024;
    // What the kernel stores besides: 32 sums and 2 clocks per CTA, 8 bytes each.
    let stored = |ctas: u64| ctas * 34 * 8;
    eprintln!("TMA multicast: 132 CTAs, one 16 KiB tile per cluster");
    eprintln!(
        "| cluster | delivery | tile bytes read at L2 | DRAM bytes | cycles, barrier to tile (slowest CTA) | spread in a cluster |"
    );
    eprintln!("|---|---|---|---|---|---|");
    for n in [2, 4] {
        let clusters = SMS / n;
        let mut row = Vec::new();
        for mode in [1, 0] {
            let (l2, dram, slowest, spread) = multicast(SMS, n, ROWS, mode);
            let read = l2 - stored(SMS);
            let way = if mode == 1 {
                "multicast by rank 0"
            } else {
                "each CTA loads it"
            };
            eprintln!("| {n} | {way} | {read} | {dram} | {slowest} | {spread} |");
            let copies = if mode == 1 { clusters } else { SMS };
            assert_eq!(read, copies * s, "cluster of {n}, mode {mode}: L2 bytes");
            assert_eq!(
                dram,
                clusters * s,
                "cluster of {n}, mode {mode}: DRAM bytes"
            );
            if mode == 1 {
                // The model lands a multicast tile in every CTA of the mask at once.
                assert!(
                    spread <= 2,
                    "cluster of {n}: the tile landed {spread} cycles apart"
                );
            }
            row.push(slowest);
        }
        // Multicast is never slower than n loads of the same tile.
        assert!(row[0] <= row[1] + 16, "cluster of {n}: {row:?}");
    }
}

/// One run of tma_store.ptx: each CTA's clocks before store 0, after its .read wait, after its
/// wait and after the last wait. Checks every tile of Y.
fn store(ctas: u64, r: u64, rows: u64, serial: bool) -> Vec<[u64; 4]> {
    let launch = format!(
        "  - entry: tma_store
    grid: [{ctas}, 1, 1]
    block: [32, 1, 1]
    shared_bytes: {}
    args:
      - {{ tensor_map: {{ buffer: Y, dims: [256, {}], box: [256, {rows}] }} }}
      - TIMES
      - {r}
      - {rows}
      - {}",
        rows * 1024,
        ctas * r * rows,
        u32::from(serial)
    );
    let buffers = format!(
        "  Y: {{ dtype: u32, shape: [{}], init: zeros }}
  TIMES: {{ dtype: u64, shape: [{}], init: zeros }}",
        ctas * r * rows * 256,
        4 * ctas
    );
    let tag = format!("st-{ctas}-{r}-{rows}-{serial}");
    let o = run(&tag, "tma_store.ptx", &launch, &buffers);
    let y = u32s(&o, "Y");
    let w = (256 * rows) as usize;
    for (t, tile) in y.chunks(w).enumerate() {
        let b = (t as u64 % ctas) as u32;
        for (j, &v) in tile.iter().enumerate() {
            assert_eq!(v, (b << 20) + j as u32, "{tag}: tile {t} word {j}");
        }
    }
    let t = words(&o, "TIMES");
    t.chunks(4).map(|c| c.try_into().unwrap()).collect()
}

/// TMA tensor stores (shared → global, bulk groups): the latency of one store until the engine
/// has read it (`wait_group.read`) and until it is written (`wait_group`), and the throughput
/// of 8 stores per CTA, one at a time or all in flight. No published figure.
#[test]
fn tma_stores_write_their_tiles_at_the_engine_and_l2_rates() {
    eprintln!("TMA store latency (one CTA, one store)");
    eprintln!("| store | .read wait | wait (written) |");
    eprintln!("|---|---|---|");
    let mut written = Vec::new();
    for rows in [1, 8] {
        let c = store(1, 1, rows, true);
        let [t0, read, done, _] = c[0];
        eprintln!("| {rows} KiB | {} | {} |", read - t0, done - t0);
        // The engine reads a line per `line_bytes / store_bytes_per_cycle` cycles.
        assert!(
            read - t0 >= rows * 1024 / STORE_ENGINE_BW as u64,
            "{rows} KiB: {c:?}"
        );
        assert!(done > read, "{rows} KiB: {c:?}");
        written.push(done - t0);
    }
    assert!(written[1] > written[0], "{written:?}");
    const R: u64 = 8;
    eprintln!(
        "TMA store throughput (stores 1 to {} of 8 KiB per CTA; window = end of store 0 to the last wait)",
        R - 1
    );
    eprintln!("| CTAs | in flight | cycles | B/cycle | GB/s | B/SM-cycle | % of L2 |");
    eprintln!("|---|---|---|---|---|---|---|");
    let mut rates = Vec::new();
    for (ctas, serial) in [(SMS, true), (SMS, false), (2 * SMS, false)] {
        let c = store(ctas, R, 8, serial);
        let window = c.iter().map(|x| x[3]).max().unwrap() - c.iter().map(|x| x[2]).min().unwrap();
        let b = (ctas * (R - 1) * 8192) as f64 / window as f64;
        let flight = if serial { "1" } else { "all" };
        eprintln!(
            "| {ctas} | {flight} | {window} | {b:.0} | {:.0} | {:.2} | {:.0}% |",
            gbs(b),
            b / SMS as f64,
            100.0 * b / l2_bw()
        );
        assert!(
            b <= l2_bw() && b <= STORE_ENGINE_BW * SMS as f64,
            "{ctas} CTAs: {b:.0} B/cycle"
        );
        rates.push(b);
    }
    assert!(rates[1] > 1.5 * rates[0], "stores in flight: {rates:?}");
}

/// Per-wave medians of `gemm_phases` stamps (8 u64 per CTA: SM, then clocks at entry, after
/// the first full stage, at the main loop's end, after the epilogue's shared-memory stores,
/// after the TMA store's wait; tools/correlate/gemm_phases.py does the same in Python):
/// [fill, loop, epilogue, store] per wave, a wave being a CTA's place on its SM.
fn phases(stamps: &[u64]) -> Vec<[f64; 4]> {
    let ctas: Vec<&[u64]> = stamps.chunks(8).collect();
    let mut by_sm: std::collections::BTreeMap<u64, Vec<usize>> = Default::default();
    let mut order: Vec<usize> = (0..ctas.len()).collect();
    order.sort_by_key(|&i| ctas[i][1]);
    for i in order {
        by_sm.entry(ctas[i][0]).or_default().push(i);
    }
    let median = |mut v: Vec<u64>| {
        v.sort_unstable();
        let n = v.len();
        (v[(n - 1) / 2] + v[n / 2]) as f64 / 2.0
    };
    let waves = by_sm.values().map(Vec::len).max().unwrap();
    (0..waves)
        .map(|w| {
            let of_wave: Vec<&[u64]> = by_sm
                .values()
                .filter_map(|l| l.get(w).map(|&i| ctas[i]))
                .collect();
            let span = |a: usize| median(of_wave.iter().map(|c| c[a + 1] - c[a]).collect());
            [span(1), span(2), span(3), span(4)]
        })
        .collect()
}

/// A warp-specialised GEMM tile's life, CTA by CTA (traces/microbench/gemm_phases.yaml: 288
/// CTAs of hopper_ws_bf16's kernel with clock stamps, K = 128 and 512), against an H200
/// (docs/correlation/h200-2026-11-28/phases; the SM clock ran at ~1850 MHz, which the model
/// is locked at). The model's 80 L2 slices take a burst of stores more slowly than the H200's
/// 94 (hopper-h100 is an H100), so bursts are compared per slice. The epilogue's shared-memory
/// stores are 8 wavefronts each on both (4,419 cycles against 4,679).
#[test]
fn gemm_tile_phases_follow_the_h200() {
    let m = root().join("traces/microbench/gemm_phases.yaml");
    let opts = gpusim::run::RunOptions {
        skip_tensor_math: true,
        ..Default::default()
    };
    let set = [("clock.fixed_mhz".to_string(), "1850".to_string())];
    let o = gpusim::run::run_manifest_with(&m, Some(&config_path("hopper-h100")), &set, &opts)
        .expect("gemm_phases runs");
    let hw_dir = root().join("docs/correlation/h200-2026-11-28/phases");
    eprintln!("| K | wave | phase | H200 | model |");
    eprintln!("|---|---|---|---|---|");
    let mut loops = Vec::new();
    for k in [128u64, 512] {
        let hw = gpusim::launch::npy::read(&hw_dir.join(format!("stamps_k{k}.npy"))).unwrap();
        let hw: Vec<u64> = hw
            .data
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let (hw, sim) = (phases(&hw), phases(&words(&o, &format!("stamps_k{k}"))));
        assert_eq!(hw.len(), 3, "288 CTAs on 132 SMs are three waves");
        assert_eq!(sim.len(), 3);
        for w in 0..3 {
            for (p, name) in ["fill", "loop", "epilogue", "store"].iter().enumerate() {
                eprintln!(
                    "| {k} | {w} | {name} | {:.0} | {:.0} |",
                    hw[w][p], sim[w][p]
                );
            }
        }
        // A store alone on its SM (wave 2, 24 CTAs): the engine's 32 B a cycle.
        let lone = sim[2][3] / hw[2][3];
        assert!(
            (0.95..1.12).contains(&lone),
            "K = {k}: lone store {lone:.3}×"
        );
        // 132 SMs storing at once are paced by the slices' inputs: slower than alone, on
        // both. Per slice (the model's 80 against the H200's 94) within 20 %.
        let burst = sim[1][3] * 80.0 / 94.0 / hw[1][3];
        assert!(
            (0.8..1.2).contains(&burst),
            "K = {k}: burst {burst:.3}× per slice"
        );
        assert!(sim[1][3] > 1.4 * sim[2][3], "K = {k}: {sim:?}");
        let epilogue = sim[1][2] / hw[1][2];
        assert!(
            (0.75..1.05).contains(&epilogue),
            "K = {k}: epilogue {epilogue:.3}×"
        );
        loops.push((hw[1][1], sim[1][1]));
    }
    // The main loop's steady state: 6 more k-steps of 1,024 tensor cycles each.
    let (hw, sim) = (
        (loops[1].0 - loops[0].0) / 6.0,
        (loops[1].1 - loops[0].1) / 6.0,
    );
    eprintln!("cycles per k-step: H200 {hw:.0}, model {sim:.0}");
    assert!((hw - 1024.0).abs() < 30.0, "{hw}");
    assert!(
        (sim / hw - 1.0).abs() < 0.05,
        "model {sim:.0} against {hw:.0}"
    );
}
