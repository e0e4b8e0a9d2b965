//! `gpusim gemm`: spec validation (key paths and valid choices), size sweeps, small verified
//! runs of each kernel in traces/gemm/, the metrics arithmetic (TFLOP/s, peaks, waves) and
//! the CSV and command-line output.

mod common;

use common::root;

use gpusim::config::Config;
use gpusim::gemm::{self, metrics, report, GemmOptions, GemmSpec, Size, Verification};
use std::path::{Path, PathBuf};

fn spec_path(kernel: &str) -> PathBuf {
    root().join(format!("traces/gemm/{kernel}/gemm.yaml"))
}

fn config(name: &str, sets: &[(&str, &str)]) -> Config {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let path = root().join(format!("configs/{name}.yaml"));
    gpusim::run::load_config(Some(&path), &[], &sets).unwrap()
}

const GOOD: &str = "
name: k
ptx: k.ptx
entry: k
dtype: { a: bf16, b: bf16, c: f32 }
tile: { m: 128, n: 128, k: 32 }
block: [256]
grid: [n_tiles, m_tiles]
args: [a, b, c, M, N, K]
";

/// The key path and message of the error `text` gives, with `from` replaced by `to` in GOOD.
fn spec_error(from: &str, to: &str) -> (String, String) {
    assert!(GOOD.contains(from), "{from}");
    let text = GOOD.replace(from, to);
    let e = GemmSpec::from_text(Path::new("x/gemm.yaml"), &text).unwrap_err();
    assert_eq!(e.file, "x/gemm.yaml");
    (e.path, e.message)
}

#[test]
fn spec_loads_and_computes_grids() {
    let s = GemmSpec::from_text(Path::new("x/gemm.yaml"), GOOD).unwrap();
    assert_eq!(s.ptx, Path::new("x/k.ptx"));
    assert_eq!(s.block, [256, 1, 1]);
    assert_eq!(s.grid_for(200, 300).unwrap(), [3, 2, 1]);
    assert_eq!(s.grid_for(128, 128).unwrap(), [1, 1, 1]);
    let split = GOOD.replace(
        "grid: [n_tiles, m_tiles]",
        "grid: [n_tiles, m_tiles, split_k]\nsplit_k: 4",
    );
    let s = GemmSpec::from_text(Path::new("gemm.yaml"), &split).unwrap();
    assert_eq!(s.grid_for(256, 512).unwrap(), [4, 2, 4]);
    for kernel in ["sgemm_simt", "hgemm_mma_multistage"] {
        let s = GemmSpec::load(&spec_path(kernel)).unwrap();
        assert_eq!(s.entry, kernel);
        assert!(s.ptx.exists(), "{}", s.ptx.display());
    }
}

#[test]
fn spec_errors_name_the_key_and_the_choices() {
    let (p, m) = spec_error("a: bf16", "a: bf8");
    assert_eq!(p, "dtype.a");
    assert!(m.contains("f32") && m.contains("bf16"), "{m}");
    let (p, m) = spec_error("grid: [n_tiles, m_tiles]", "grid: [n_tiles, rows]");
    assert_eq!(p, "grid[1]");
    assert!(
        m.contains("rows") && m.contains("m_tiles | n_tiles | split_k"),
        "{m}"
    );
    let (p, m) = spec_error("args: [a, b, c, M, N, K]", "args: [a, b, c, M, N, Q]");
    assert_eq!(p, "args[5]");
    assert!(m.contains("`Q`") && m.contains("lda"), "{m}");
    let (p, m) = spec_error("args: [a, b, c, M, N, K]", "args: [a, a, c, M, N, K]");
    assert_eq!(p, "args");
    assert!(m.contains("`a`") && m.contains("2 times"), "{m}");
    let (p, _) = spec_error("tile: { m: 128,", "tile: { m: 0,");
    assert_eq!(p, "tile.m");
    let (p, m) = spec_error("entry: k", "entry: k\ntiles: 3");
    assert_eq!(p, "tiles");
    assert!(m.contains("unknown field") && m.contains("tile"), "{m}");
    let (p, m) = spec_error("entry: k", "entry: k\ncluster: [4, 4, 2]");
    assert_eq!(p, "cluster");
    assert!(m.contains("at most 16"), "{m}");
    let (p, m) = spec_error("entry: k", "entry: k\nsplit_k: 2");
    assert_eq!(p, "split_k");
    assert!(m.contains("no grid dimension"), "{m}");
    let (p, m) = spec_error("entry: k", "entry: k\nmath: fp64");
    assert_eq!(p, "math");
    assert!(m.contains("tensor") && m.contains("fp32"), "{m}");
    let (p, _) = spec_error(
        "entry: k",
        "entry: k\nanchors: [{ config: c, m: 1, n: 1, k: 1, tflops: -2, source: s }]",
    );
    assert_eq!(p, "anchors[0].tflops");
    let (p, _) = spec_error("entry: k", "entry: k\nconstraints: { k_multiple: 0 }");
    assert_eq!(p, "constraints.k_multiple");
}

#[test]
fn size_sweeps_and_constraints() {
    let sq = gemm::parse_sizes("square").unwrap();
    assert_eq!(sq.len(), 5);
    assert_eq!(sq[0], Size::new(512, 512, 512));
    assert_eq!(sq[4], Size::new(8192, 8192, 8192));
    let sk = gemm::parse_sizes("skinny").unwrap();
    assert_eq!(
        sk,
        vec![Size::new(1536, 1536, 512), Size::new(1536, 1536, 65536)]
    );
    let mixed = gemm::parse_sizes("256x128x64, skinny").unwrap();
    assert_eq!(mixed.len(), 3);
    assert_eq!(mixed[0], Size::new(256, 128, 64));
    for bad in ["256x128", "0x1x1", "axbxc", "tall", "1x1x1x1"] {
        assert!(gemm::parse_sizes(bad).is_err(), "{bad}");
    }
    let spec = GemmSpec::load(&spec_path("hgemm_mma_multistage")).unwrap();
    let e = gemm::sizes::check_size(&spec, Size::new(128, 128, 100)).unwrap_err();
    assert!(
        e.contains("K = 100") && e.contains("constraints.k_multiple"),
        "{e}"
    );
    let cfg = config("ampere-a100", &[]);
    let e =
        gemm::run_size(&spec, &cfg, Size::new(100, 64, 4), &GemmOptions::default()).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("not a multiple of 8"), "{e}");
}

/// Both kernels on small problems (one a multiple of the tile, one not), verified against the
/// ndarray reference on random inputs.
#[test]
fn small_sweeps_verify() {
    let cfg = config("ampere-a100", &[]);
    let clock = metrics::clock_hz(&cfg).unwrap();
    for (kernel, sizes) in [
        ("hgemm_mma_multistage", "128x256x64,200x136x104"),
        ("sgemm_simt", "128x128x16,72x136x20"),
    ] {
        let spec = GemmSpec::load(&spec_path(kernel)).unwrap();
        for size in gemm::parse_sizes(sizes).unwrap() {
            let run = gemm::run_size(&spec, &cfg, size, &GemmOptions::default()).unwrap();
            let Verification::Passed { max_error } = run.verification else {
                panic!("{kernel} {size}: {:?}", run.verification);
            };
            assert!(max_error <= gemm::run::tolerance(&spec), "{max_error}");
            let m = gemm::metrics(&spec, &cfg, &run, clock);
            assert_eq!(m.ctas, size.m.div_ceil(128) * size.n.div_ceil(128));
            assert!(m.cycles > 0 && m.warp_instructions > 0);
            assert!(m.tflops > 0.0 && m.pct_peak > 0.0 && m.pct_peak < 100.0);
        }
    }
}

/// The Hopper kernels through their specs (tensor-map arguments, B stored N×K, clusters,
/// split-K, the tf32-rounded reference), verified on a whole-tile and a ragged size.
#[test]
fn hopper_specs_verify() {
    let cfg = config("hopper-h100", &[]);
    for (kernel, sizes, split) in [
        ("hopper_ws_bf16", "128x256x128,200x300x136", None),
        ("hopper_ws_bf16_cluster2", "256x256x64,512x300x72", None),
        ("hopper_ws_tf32_cluster2", "256x256x64", None),
        ("hopper_ws_bf16_splitk", "128x256x512", Some(3)),
    ] {
        let mut spec = GemmSpec::load(&spec_path(kernel)).unwrap();
        if let Some(k) = split {
            spec.set_split_k(k).unwrap();
        }
        for size in gemm::parse_sizes(sizes).unwrap() {
            let run = gemm::run_size(&spec, &cfg, size, &GemmOptions::default()).unwrap();
            assert!(
                matches!(run.verification, Verification::Passed { .. }),
                "{kernel} {size}: {:?}",
                run.verification
            );
            assert_eq!(run.grid[2], split.unwrap_or(1), "{kernel}");
        }
    }
    // A split-K factor needs a split_k grid dimension.
    let mut plain = GemmSpec::load(&spec_path("hopper_ws_bf16")).unwrap();
    assert!(plain.set_split_k(2).is_err());
}

/// A spec that swaps A and B computes B·A: the check must catch it.
#[test]
fn verification_catches_a_wrong_product() {
    let path = spec_path("hgemm_mma_multistage");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("args: [a, b, c, M, N, K]", "args: [b, a, c, M, N, K]");
    let spec = GemmSpec::from_text(&path, &text).unwrap();
    let cfg = config("ampere-a100", &[]);
    let run = gemm::run_size(
        &spec,
        &cfg,
        Size::new(128, 128, 128),
        &GemmOptions::default(),
    )
    .unwrap();
    match run.verification {
        Verification::Failed { mismatches, .. } => assert!(mismatches > 1000, "{mismatches}"),
        v => panic!("{v:?}"),
    }
    // Above --verify-up-to nothing is checked.
    let opts = GemmOptions {
        verify_up_to: 64,
        ..GemmOptions::default()
    };
    let run = gemm::run_size(&spec, &cfg, Size::new(128, 128, 128), &opts).unwrap();
    assert_eq!(run.verification, Verification::Skipped);
}

#[test]
fn tflops_peaks_and_waves() {
    // 2·1000³ = 2e9 FLOP in 1e6 cycles at 1 GHz (1 ms): 2 TFLOP/s.
    let t = metrics::tflops(Size::new(1000, 1000, 1000), 1_000_000, 1e9);
    assert!((t - 2.0).abs() < 1e-12, "{t}");
    // A100: 108 SMs × 4 tensor cores × 2048 FMAs / 8 cycles × 2 × 1.41 GHz = 311.9 TFLOP/s,
    // the whitepaper's 312 dense BF16.
    let a100 = config("ampere-a100", &[]);
    let clock = metrics::clock_hz(&a100).unwrap();
    assert_eq!(clock, 1.41e9);
    let peak = metrics::peak_tflops(&a100, gemm::spec::Math::Tensor, clock);
    assert!((peak - 108.0 * 1024.0 * 2.0 * 1.41e9 / 1e12).abs() < 1e-9);
    assert!((peak / 312.0 - 1.0).abs() < 0.001, "{peak}");
    // FP32: 108 × 64 lanes × 2 × 1.41 GHz = 19.5 TFLOP/s.
    let fp32 = metrics::peak_tflops(&a100, gemm::spec::Math::Fp32, clock);
    assert!((fp32 - 19.49).abs() < 0.01, "{fp32}");
    // H100 at the rated tensor clock: 989.4 TFLOP/s.
    let h100 = config("hopper-h100", &[("clock_mhz", "1830")]);
    let clock = metrics::clock_hz(&h100).unwrap();
    let peak = metrics::peak_tflops(&h100, gemm::spec::Math::Tensor, clock);
    assert!((peak / 989.4 - 1.0).abs() < 0.001, "{peak}");
    // 256 CTAs on 108 SMs × 2: 1.19 waves, the second one 19% full.
    let (w, eff) = metrics::waves(256, 108, 2);
    assert!((w - 256.0 / 216.0).abs() < 1e-12);
    assert!((eff - 256.0 / 432.0).abs() < 1e-12);
    assert_eq!(metrics::waves(216, 108, 2), (1.0, 1.0));
    let mut noclock = config("ampere-a100", &[]);
    noclock.clock_mhz = None;
    let e = metrics::clock_hz(&noclock).unwrap_err();
    assert!(e.contains("clock_mhz"), "{e}");
}

#[test]
fn csv_and_anchor_lines() {
    let spec = GemmSpec::load(&spec_path("hgemm_mma_multistage")).unwrap();
    let cfg = config("ampere-a100", &[]);
    let clock = metrics::clock_hz(&cfg).unwrap();
    let run = gemm::run_size(
        &spec,
        &cfg,
        Size::new(128, 128, 64),
        &GemmOptions::default(),
    )
    .unwrap();
    let mut m = gemm::metrics(&spec, &cfg, &run, clock);
    let text = report::csv(&spec.name, &cfg.name, std::slice::from_ref(&m));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    let header: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(header.len(), row.len());
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(col("kernel"), "hgemm_mma_multistage");
    assert_eq!(col("config"), "ampere-a100");
    assert_eq!((col("m"), col("n"), col("k")), ("128", "128", "64"));
    assert_eq!(col("verified"), "passed");
    assert_eq!(col("anchor_tflops"), "");
    let cycles: f64 = col("cycles").parse().unwrap();
    let tflops: f64 = col("tflops").parse().unwrap();
    let want = 2.0 * 128.0 * 128.0 * 64.0 / (cycles / 1.41e9) / 1e12;
    assert!((tflops - want).abs() < 1e-3, "{tflops} vs {want}");
    let pct: f64 = col("pct_peak").parse().unwrap();
    assert!((pct - 100.0 * want / 311.869).abs() < 0.01, "{pct}");
    // An anchored size reports the published figure and the relative difference.
    m.anchor = Some((200.0, (m.tflops - 200.0) / 200.0, "a source, quoted".into()));
    let lines = report::anchor_lines(std::slice::from_ref(&m));
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].contains("published   200.00 TFLOP/s"),
        "{}",
        lines[0]
    );
    let row = report::csv_row("k", "c", &m);
    assert!(
        row.contains(&format!(
            ",2.000000e2,{:.6e},false,{},,{},{:.1},",
            m.anchor.as_ref().unwrap().1,
            m.ctas,
            m.warp_instructions,
            m.mean_mhz
        )),
        "{row}"
    );
    // ampere-a100 has a power model: average and peak watts, joules and pJ per FLOP follow.
    let power: Vec<f64> = row
        .rsplit(',')
        .take(4)
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{row}")))
        .collect();
    assert!(power.iter().all(|&v| v > 0.0), "{row}");
    let a = spec.anchor("hopper-h100", 8192, 8192, 8192).unwrap();
    assert_eq!(a.tflops, 798.0);
    assert!(spec.anchor("ampere-a100", 4096, 4096, 4096).is_none());
}

#[test]
fn command_prints_the_table_and_writes_the_csv() {
    let dir = std::env::temp_dir().join(format!("gpusim-gemm-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("out.csv");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .arg("gemm")
        .arg(spec_path("sgemm_simt"))
        .args(["--config"])
        .arg(root().join("configs/ampere-a100.yaml"))
        .args(["--sizes", "64x64x16,128x64x8", "--csv"])
        .arg(&csv)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout
            .contains("sgemm_simt on ampere-a100 (108 SMs boost 1410 MHz, power-limited to 400 W"),
        "{stdout}"
    );
    assert!(
        stdout.contains("TFLOP/s") && stdout.contains("64x64x16"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("passed").count(), 2, "{stdout}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.starts_with(report::CSV_HEADER));
    // Bad input: exit 2 with the reason.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .arg("gemm")
        .arg(spec_path("hgemm_mma_multistage"))
        .args(["--sizes", "64x64x12"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("K = 12 is not a multiple of 8"), "{err}");
    // A kernel built for sm_80 on the V100 (sm_70): refused, naming both generations.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpusim"))
        .arg("gemm")
        .arg(spec_path("sgemm_simt"))
        .args(["--config"])
        .arg(root().join("configs/volta-v100.yaml"))
        .args(["--sizes", "64x64x16"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sm_80") && err.contains("sm_70"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--skip-tensor-math` keeps the timing; sizes it is asked to verify still do the products.
#[test]
fn skip_tensor_math_is_timing_only() {
    let spec = GemmSpec::load(&spec_path("hgemm_mma_multistage")).unwrap();
    let cfg = config("ampere-a100", &[]);
    let size = Size::new(128, 256, 64);
    let skip = GemmOptions {
        skip_tensor_math: true,
        ..GemmOptions::default()
    };
    let verified = gemm::run_size(&spec, &cfg, size, &skip).unwrap();
    assert!(
        matches!(verified.verification, Verification::Passed { .. }),
        "{:?}",
        verified.verification
    );
    let timing = GemmOptions {
        verify_up_to: 0,
        ..skip
    };
    let fast = gemm::run_size(&spec, &cfg, size, &timing).unwrap();
    assert_eq!(fast.verification, Verification::Skipped);
    let full = gemm::run_size(&spec, &cfg, size, &GemmOptions::default()).unwrap();
    assert_eq!(fast.stats.counters.cycles, full.stats.counters.cycles);
}
