//! `gpusim export` and `gpusim correlate`: the command-line side of hardware correlation
//! (`gpusim::correlate`, docs/correlation.md).

use crate::{parse_sets, sm_threads_or_exit, SampleArgs};
use gpusim::correlate::compare::{self, Compared, Options};
use gpusim::correlate::{export::Export, measured};
use gpusim::output::{check_dir, check_file, write_file};
use gpusim::{errln, outln};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ExportArgs {
    /// Launch manifests to export (one that expects a fault is skipped, with a note).
    manifests: Vec<PathBuf>,
    /// The directory to write (plan.json and a folder per workload); copy it to the GPU machine.
    #[arg(long)]
    out: PathBuf,
    /// A GEMM launch spec to export at each of --sizes (repeatable).
    #[arg(long = "gemm", value_name = "SPEC")]
    gemms: Vec<PathBuf>,
    /// The GEMM sizes: `square` (512³ … 8192³), `skinny`, or MxNxK, comma-separated.
    #[arg(long, default_value = "square")]
    sizes: String,
    /// Check the GPU's GEMM results (against a float64 NumPy product) when M, N and K are all
    /// at most this.
    #[arg(long, default_value_t = 2048)]
    verify_up_to: u64,
    /// Seed of the GEMMs' random inputs (drawn on the GPU machine).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(clap::Args)]
pub struct CorrelateArgs {
    /// Measurements from tools/correlate/measure.py (CSV with a header: workload, launch,
    /// median_us, and optionally sm_clock_mhz, check, gpu, …).
    csv: PathBuf,
    /// GPU config (YAML); the embedded tiny GPU when omitted.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config key, e.g. --set clock_mhz=1755 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// The directory the workloads' paths are relative to (where `gpusim export` ran).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Simulate each workload with the core clock locked at its measured mean SM clock and
    /// convert its cycles at that clock, instead of taking the simulated time (the config's
    /// clock, or the clocks its power governor chose).
    #[arg(long)]
    at_measured_clock: bool,
    /// Draw simulated against measured time (PNG or SVG by extension).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Write the comparison as CSV.
    #[arg(long = "write-csv", value_name = "FILE")]
    write_csv: Option<PathBuf>,
    /// Threads stepping the SMs (default: GPUSIM_THREADS, else 1).
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    sample: SampleArgs,
}

pub fn cmd_export(args: &ExportArgs) -> i32 {
    if args.manifests.is_empty() && args.gemms.is_empty() {
        errln!("error: nothing to export: give manifests and/or --gemm SPEC");
        return 2;
    }
    if let Err(e) = check_dir(&args.out) {
        errln!("error: --out: {e}");
        return 2;
    }
    let sizes = if args.gemms.is_empty() {
        Vec::new()
    } else {
        match gpusim::gemm::parse_sizes(&args.sizes) {
            Ok(s) => s,
            Err(e) => {
                errln!("error: --sizes: {e}");
                return 2;
            }
        }
    };
    let mut export = Export::new(&args.out);
    for m in &args.manifests {
        match export.manifest(m) {
            Ok(None) => {}
            Ok(Some(why)) => errln!("note: {} {why}: not exported", m.display()),
            Err(e) => {
                errln!("error: {e}");
                return 2;
            }
        }
    }
    for g in &args.gemms {
        let spec = match gpusim::gemm::GemmSpec::load(g) {
            Ok(s) => s,
            Err(e) => {
                errln!("error: {e}");
                return 2;
            }
        };
        for &size in &sizes {
            if let Err(e) = export.gemm(g, &spec, size, args.seed, args.verify_up_to) {
                errln!("error: {}: size {size}: {e}", g.display());
                return 2;
            }
        }
    }
    let n = export.len();
    match export.finish() {
        Ok(plan) => {
            outln!(
                "exported {n} workload(s) to {}; on the GPU machine: python3 tools/correlate/measure.py {} --csv measured.csv",
                plan.display(),
                args.out.display()
            );
            0
        }
        Err(e) => {
            errln!("error: {e}");
            2
        }
    }
}

pub fn cmd_correlate(args: &CorrelateArgs) -> i32 {
    let prepared = (|| -> Result<_, String> {
        let text = std::fs::read_to_string(&args.csv)
            .map_err(|e| format!("cannot read {}: {e}", args.csv.display()))?;
        let (rows, failed) = measured::parse(&args.csv, &text)?;
        if rows.is_empty() {
            return Err(format!("{}: no measured launches", args.csv.display()));
        }
        for (flag, out) in [("--plot", &args.plot), ("--write-csv", &args.write_csv)] {
            if let Some(p) = out {
                check_file(p).map_err(|e| format!("{flag}: {e}"))?;
            }
        }
        if let Some(p) = &args.plot {
            gpusim_viz::image_format(p).map_err(|e| format!("--plot: {e}"))?;
        }
        Ok((rows, failed, parse_sets(&args.set)?))
    })();
    let (rows, failed_on_gpu, set) = match prepared {
        Ok(p) => p,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    let Some(threads) = sm_threads_or_exit(args.threads) else {
        return 2;
    };
    let opts = Options {
        config: args.config.clone(),
        set,
        root: args.root.clone(),
        at_measured_clock: args.at_measured_clock,
        parallel: gpusim::core::crew::Parallel::threads(threads),
        sample: args.sample.spec(),
        progress: true,
    };
    let gpu = rows.iter().map(|r| r.gpu.as_str()).find(|g| !g.is_empty());
    let config = args
        .config
        .as_ref()
        .map_or("configs/tiny.yaml (embedded)".to_string(), |c| {
            c.display().to_string()
        });
    outln!(
        "gpusim correlate: {} ({}) against {config}, times at {}",
        args.csv.display(),
        gpu.unwrap_or("GPU not recorded"),
        if args.at_measured_clock {
            "each launch's measured SM clock"
        } else {
            "the config's clock"
        }
    );
    if failed_on_gpu > 0 {
        outln!("  {failed_on_gpu} launch row(s) have no time (the workload failed on the GPU): left out");
    }
    let (compared, failed) = compare::compare(&rows, &opts, |w, r| {
        if let Err(e) = r {
            errln!("error: {w}: {e}");
        }
    });
    print_table(&compared, &rows);
    let summary = compare::summarise(&compared);
    if let Some(s) = &summary {
        let worst = &compared[s.worst];
        outln!(
            "{} launch(es): mean absolute error {:.1} %, mean error {:+.1} % (positive: the model is slower), max |error| {:.1} % ({} launch {}), Pearson r {}",
            s.launches,
            100.0 * s.mean_abs_error,
            100.0 * s.mean_error,
            100.0 * s.max_abs_error,
            worst.workload,
            worst.launch,
            s.pearson.map_or("n/a".to_string(), |r| format!("{r:.3}"))
        );
    }
    let mut code = if failed.is_empty() { 0 } else { 1 };
    if let (Some(p), Some(s)) = (&args.plot, &summary) {
        let points: Vec<gpusim_viz::Point> = compared
            .iter()
            .map(|c| gpusim_viz::Point {
                label: format!("{} #{}", c.workload, c.launch),
                measured_us: c.measured_us,
                simulated_us: c.simulated_us,
            })
            .collect();
        let title = format!(
            "{} vs {}: MAE {:.1} %, r {}",
            gpu.unwrap_or("GPU"),
            config,
            100.0 * s.mean_abs_error,
            s.pearson.map_or("n/a".to_string(), |r| format!("{r:.3}"))
        );
        if let Err(e) = gpusim_viz::plot_correlation(&points, &title, p) {
            errln!("error: --plot: {e}");
            code = 2;
        }
    }
    if let Some(p) = &args.write_csv {
        if let Err(e) = write_file(p, comparison_csv(&compared).as_bytes()) {
            errln!("error: --write-csv: {e}");
            code = 2;
        }
    }
    if !failed.is_empty() {
        outln!("{} workload(s) could not be compared (above)", failed.len());
    }
    code
}

fn print_table(compared: &[Compared], rows: &[measured::Measured]) {
    let width = compared
        .iter()
        .map(|c| c.workload.len())
        .max()
        .unwrap_or(8)
        .max(8);
    outln!(
        "  {:<width$} {:>6} {:<24} {:>12} {:>12} {:>12} {:>8}",
        "workload",
        "launch",
        "entry",
        "measured µs",
        "simulated µs",
        "cycles",
        "error"
    );
    for c in compared {
        let measured_fail = rows
            .iter()
            .any(|r| r.workload == c.workload && r.launch == c.launch && r.check == "fail");
        outln!(
            "  {:<width$} {:>6} {:<24} {:>12.2} {:>12.2} {:>12} {:>+7.1}%{}{}",
            c.workload,
            c.launch,
            c.entry,
            c.measured_us,
            c.simulated_us,
            c.cycles,
            100.0 * c.error,
            if c.sampled { "  (sampled)" } else { "" },
            if measured_fail {
                "  (the GPU's output failed its check)"
            } else {
                ""
            }
        );
    }
}

fn comparison_csv(compared: &[Compared]) -> String {
    let mut s = String::from(
        "workload,launch,entry,measured_us,simulated_us,cycles,clock_mhz,error,sampled\n",
    );
    for c in compared {
        s += &format!(
            "{},{},{},{:.3},{:.3},{},{},{:.5},{}\n",
            csv_field(&c.workload),
            c.launch,
            csv_field(&c.entry),
            c.measured_us,
            c.simulated_us,
            c.cycles,
            c.clock_mhz,
            c.error,
            c.sampled
        );
    }
    s
}

/// A CSV field, quoted when it holds a comma or a quote.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
