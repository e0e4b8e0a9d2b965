//! `gpusim correlate`: simulate the workloads of a measurement CSV and compare each launch's
//! simulated time with the measured one — per-launch error, mean absolute error and Pearson
//! correlation, as Accel-Sim's correlation reports have them.

use super::measured::Measured;
use crate::core::crew::Parallel;
use crate::core::sample::SampleSpec;
use crate::gemm::sizes::Size;
use crate::launch::LoadedManifest;
use crate::run::{load_config_for, run_manifest_with, RunOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How workloads are simulated and times compared.
#[derive(Clone, Debug)]
pub struct Options {
    pub config: Option<PathBuf>,
    pub set: Vec<(String, String)>,
    /// Where workload paths are relative to (the directory `gpusim export` ran in).
    pub root: PathBuf,
    /// Simulate each workload with the core clock locked at its measured mean SM clock
    /// (`clock.fixed_mhz`, unless `set` locks it) and convert its cycles at that clock,
    /// rather than taking the simulated time (the config's clock, or the clocks the power
    /// governor chose).
    pub at_measured_clock: bool,
    pub parallel: Parallel,
    pub sample: Option<SampleSpec>,
    pub progress: bool,
}

/// One launch, measured and simulated.
#[derive(Clone, Debug)]
pub struct Compared {
    pub workload: String,
    pub launch: usize,
    pub entry: String,
    pub measured_us: f64,
    pub cycles: u64,
    /// The clock the cycles were converted at (the simulated mean clock, or the measured one
    /// with `at_measured_clock`).
    pub clock_mhz: f64,
    pub simulated_us: f64,
    /// Simulated ÷ measured − 1.
    pub error: f64,
    /// The launch was sampled (`--sample`): its cycles are a prediction.
    pub sampled: bool,
}

/// A workload that could not be compared, and why.
#[derive(Clone, Debug)]
pub struct Failed {
    pub workload: String,
    pub message: String,
}

/// The agreement over all compared launches.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub launches: usize,
    /// Mean of |error|.
    pub mean_abs_error: f64,
    /// Mean of the signed error (positive: the model is slower than the GPU).
    pub mean_error: f64,
    /// The largest |error| and the row it is in.
    pub max_abs_error: f64,
    pub worst: usize,
    /// Pearson correlation of measured and simulated times (None for fewer than two launches
    /// or no spread).
    pub pearson: Option<f64>,
}

/// One simulated launch: cycles, simulated time (each cycle at the clock it ran at: the
/// power governor may have moved it, docs/power.md), mean clock, whether it was sampled.
struct Launch {
    cycles: u64,
    seconds: f64,
    mean_mhz: f64,
    sampled: bool,
}

impl Launch {
    fn of(k: &crate::stats::KernelStats) -> Launch {
        Launch {
            cycles: k.counters.cycles,
            seconds: k.clock.seconds,
            mean_mhz: k.clock.mean_mhz,
            sampled: k.sample.as_ref().is_some_and(|s| s.skipped_ctas > 0),
        }
    }
}

/// What a workload's simulation gave: its launches.
struct Simulated {
    cycles: Vec<Launch>,
}

/// Simulate every workload of `rows` once (in order of first appearance) and compare each
/// row; `on_workload` hears of each as it finishes (progress for long lists).
pub fn compare(
    rows: &[Measured],
    opts: &Options,
    mut on_workload: impl FnMut(&str, Result<(), &str>),
) -> (Vec<Compared>, Vec<Failed>) {
    let mut order: Vec<&str> = Vec::new();
    let mut by_workload: BTreeMap<&str, Vec<&Measured>> = BTreeMap::new();
    for r in rows {
        let e = by_workload.entry(&r.workload).or_default();
        if e.is_empty() {
            order.push(&r.workload);
        }
        e.push(r);
    }
    let (mut out, mut failed) = (Vec::new(), Vec::new());
    for w in order {
        let measured_clock = by_workload[w].iter().find_map(|r| r.sm_clock_mhz);
        let sim = simulate(w, &locked_at(opts, measured_clock));
        let sim = sim.and_then(|s| {
            let missing = by_workload[w].iter().find(|r| r.launch >= s.cycles.len());
            match missing {
                Some(r) => Err(format!(
                    "line {}: launch {} — the workload has {} launch(es)",
                    r.line,
                    r.launch,
                    s.cycles.len()
                )),
                None => Ok(s),
            }
        });
        match sim {
            Ok(s) => {
                on_workload(w, Ok(()));
                for r in &by_workload[w] {
                    let l = &s.cycles[r.launch];
                    let (cycles, sampled) = (l.cycles, l.sampled);
                    let (clock_mhz, simulated_us) = match (opts.at_measured_clock, r.sm_clock_mhz) {
                        (true, Some(c)) => (c, cycles as f64 / c),
                        _ => (l.mean_mhz, l.seconds * 1e6),
                    };
                    out.push(Compared {
                        workload: w.to_string(),
                        launch: r.launch,
                        entry: r.entry.clone(),
                        measured_us: r.median_us,
                        cycles,
                        clock_mhz,
                        simulated_us,
                        error: simulated_us / r.median_us - 1.0,
                        sampled,
                    });
                }
            }
            Err(message) => {
                on_workload(w, Err(&message));
                failed.push(Failed {
                    workload: w.to_string(),
                    message,
                });
            }
        }
    }
    (out, failed)
}

/// Mean absolute error, mean error, the worst launch and the correlation of `rows`.
pub fn summarise(rows: &[Compared]) -> Option<Summary> {
    if rows.is_empty() {
        return None;
    }
    let n = rows.len() as f64;
    let (worst, max_abs_error) = rows
        .iter()
        .map(|r| r.error.abs())
        .enumerate()
        .fold((0, 0.0), |b, (i, e)| if e > b.1 { (i, e) } else { b });
    let measured: Vec<f64> = rows.iter().map(|r| r.measured_us).collect();
    let simulated: Vec<f64> = rows.iter().map(|r| r.simulated_us).collect();
    Some(Summary {
        launches: rows.len(),
        mean_abs_error: rows.iter().map(|r| r.error.abs()).sum::<f64>() / n,
        mean_error: rows.iter().map(|r| r.error).sum::<f64>() / n,
        max_abs_error,
        worst,
        pearson: pearson(&measured, &simulated),
    })
}

/// Pearson's correlation coefficient of `x` and `y` (None without two points or spread).
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let mean = |v: &[f64]| v[..n].iter().sum::<f64>() / n as f64;
    let (mx, my) = (mean(x), mean(y));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (x[i] - mx, y[i] - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// A workload named `gemm:SPEC:MxNxK` (`export::gemm_workload`): the spec and the size.
pub fn parse_gemm(workload: &str) -> Option<Result<(PathBuf, Size), String>> {
    let rest = workload.strip_prefix("gemm:")?;
    let Some((spec, size)) = rest.rsplit_once(':') else {
        return Some(Err(format!(
            "`{workload}`: a GEMM workload is gemm:SPEC:MxNxK"
        )));
    };
    Some(match crate::gemm::parse_sizes(size) {
        Ok(s) if s.len() == 1 => Ok((PathBuf::from(spec), s[0])),
        Ok(_) => Err(format!("`{workload}`: one size, MxNxK")),
        Err(e) => Err(format!("`{workload}`: {e}")),
    })
}

/// `opts` for simulating a workload measured at `mhz`: with `at_measured_clock`, the core
/// clock locked there — the model's cycles depend on the core clock where other clock domains
/// (the L2's, DRAM's) keep theirs, so they are taken at the clock the GPU ran, not converted.
fn locked_at(opts: &Options, mhz: Option<f64>) -> Options {
    let mut opts = opts.clone();
    let user_locked = opts.set.iter().any(|(k, _)| k == "clock.fixed_mhz");
    if let (true, false, Some(mhz)) = (opts.at_measured_clock, user_locked, mhz) {
        opts.set
            .push(("clock.fixed_mhz".into(), format!("{}", mhz.round() as u32)));
    }
    opts
}

fn simulate(workload: &str, opts: &Options) -> Result<Simulated, String> {
    match parse_gemm(workload) {
        Some(g) => {
            let (spec, size) = g?;
            simulate_gemm(&opts.root.join(spec), size, opts)
        }
        None => simulate_manifest(&opts.root.join(workload), opts),
    }
}

fn simulate_manifest(path: &Path, opts: &Options) -> Result<Simulated, String> {
    let lm = LoadedManifest::load(path).map_err(|e| e.to_string())?;
    let set: Vec<_> = lm
        .manifest
        .set
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let cfg = load_config_for(opts.config.as_deref(), Some(path), &set, &opts.set)
        .map_err(|e| e.to_string())?;
    crate::gemm::metrics::clock_hz(&cfg)?;
    let run = RunOptions {
        progress: opts.progress,
        parallel: opts.parallel,
        sample: opts.sample,
        ..RunOptions::default()
    };
    let out = run_manifest_with(path, opts.config.as_deref(), &opts.set, &run)
        .map_err(|e| e.to_string())?;
    if let Some(f) = out.failures.first() {
        return Err(format!(
            "the simulated run fails its check of `{}` ({} mismatches): its times are not comparable",
            f.buffer, f.mismatches
        ));
    }
    Ok(Simulated {
        cycles: out.stats.kernels.iter().map(Launch::of).collect(),
    })
}

fn simulate_gemm(spec_path: &Path, size: Size, opts: &Options) -> Result<Simulated, String> {
    let spec = crate::gemm::GemmSpec::load(spec_path).map_err(|e| e.to_string())?;
    let cfg = crate::run::load_config(opts.config.as_deref(), &[], &opts.set)
        .map_err(|e| e.to_string())?;
    crate::gemm::metrics::clock_hz(&cfg)?;
    crate::gemm::run::check_launches(&spec, &cfg, &[size]).map_err(|e| e.to_string())?;
    // Timing only: the values do not change a cycle (docs/gemm.md).
    let g = crate::gemm::GemmOptions {
        verify_up_to: 0,
        seed: 1,
        progress: opts.progress,
        skip_tensor_math: true,
        parallel: opts.parallel,
        sample: opts.sample,
    };
    let run = crate::gemm::run_size(&spec, &cfg, size, &g).map_err(|e| e.to_string())?;
    Ok(Simulated {
        cycles: vec![Launch::of(&run.stats)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(measured: f64, simulated: f64) -> Compared {
        Compared {
            workload: "w".into(),
            launch: 0,
            entry: "k".into(),
            measured_us: measured,
            cycles: 0,
            clock_mhz: 1000.0,
            simulated_us: simulated,
            error: simulated / measured - 1.0,
            sampled: false,
        }
    }

    #[test]
    fn summary_is_the_mean_absolute_and_signed_error_and_the_worst_launch() {
        let s = summarise(&[row(100.0, 110.0), row(200.0, 170.0), row(50.0, 50.0)]).unwrap();
        assert!((s.mean_abs_error - (0.10 + 0.15) / 3.0).abs() < 1e-12);
        assert!((s.mean_error - (0.10 - 0.15) / 3.0).abs() < 1e-12);
        assert_eq!(s.worst, 1);
        assert!((s.max_abs_error - 0.15).abs() < 1e-12);
        assert!(summarise(&[]).is_none());
    }

    #[test]
    fn pearson_of_known_series() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert!((pearson(&x, &[2.0, 4.0, 6.0, 8.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((pearson(&x, &[8.0, 6.0, 4.0, 2.0]).unwrap() + 1.0).abs() < 1e-12);
        // x = 1..4, y = 1, 3, 2, 4: r = 0.8.
        assert!((pearson(&x, &[1.0, 3.0, 2.0, 4.0]).unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(pearson(&x, &[5.0; 4]), None);
        assert_eq!(pearson(&[1.0], &[1.0]), None);
    }

    #[test]
    fn gemm_workload_names_round_trip() {
        let name = super::super::export::gemm_workload(
            Path::new("a:b/gemm.yaml"),
            Size::new(8192, 4096, 512),
        );
        let (spec, size) = parse_gemm(&name).unwrap().unwrap();
        assert_eq!(spec, PathBuf::from("a:b/gemm.yaml"));
        assert_eq!(size, Size::new(8192, 4096, 512));
        assert!(parse_gemm("traces/x.yaml").is_none());
        assert!(parse_gemm("gemm:spec.yaml").unwrap().is_err());
        assert!(parse_gemm("gemm:spec.yaml:12").unwrap().is_err());
    }

    #[test]
    fn measured_clocks_lock_the_core_clock_unless_the_user_did() {
        let opts = Options {
            config: None,
            set: vec![("l2.ways".into(), "16".into())],
            root: PathBuf::from("."),
            at_measured_clock: true,
            parallel: Default::default(),
            sample: None,
            progress: false,
        };
        let locked = locked_at(&opts, Some(1646.4));
        assert_eq!(
            locked.set.last(),
            Some(&("clock.fixed_mhz".to_string(), "1646".to_string()))
        );
        assert_eq!(locked_at(&opts, None).set, opts.set);
        let plain = Options {
            at_measured_clock: false,
            ..opts.clone()
        };
        assert_eq!(locked_at(&plain, Some(1646.4)).set, opts.set);
        let user = Options {
            set: vec![("clock.fixed_mhz".into(), "1980".into())],
            ..opts
        };
        assert_eq!(locked_at(&user, Some(1646.4)).set, user.set);
    }
}
