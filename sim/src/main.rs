//! The gpusim command line: `gpusim run MANIFEST`, `gpusim check MANIFEST`, `gpusim ptx FILE`,
//! `gpusim lint FILE`, `gpusim fuzz`, `gpusim gemm SPEC`, `gpusim export` and `gpusim correlate`.

use clap::{Parser, Subcommand};
use gpusim::output::{check_dir, check_file, write_file};
use gpusim::run::{run_manifest_traced, RunError, RunOptions};
use gpusim::stats::trace::{TraceSink, TraceWriter};
use gpusim::{errln, out, outln};
use std::path::PathBuf;
use std::process::ExitCode;

mod cli_correlate;

#[derive(Parser)]
#[command(
    name = "gpusim",
    version,
    about = "A cycle-level GPU simulator for PTX kernels"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Progress on stderr for long runs (after 2 s): a bar redrawn in place, a plain line
    /// every 10 s, or none; `auto` is a bar on a terminal and plain lines otherwise.
    #[arg(long, global = true, value_enum, default_value_t = ProgressArg::Auto)]
    progress: ProgressArg,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ProgressArg {
    Auto,
    Bar,
    Plain,
    None,
}

#[derive(clap::Args)]
struct RunArgs {
    /// The launch manifest (YAML): kernel, buffers, launches, checks.
    manifest: PathBuf,
    /// GPU config (YAML); the embedded tiny GPU when omitted.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config key, e.g. --set sm.scheduler=gto (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Write every buffer as DIR/<name>.npy after the last launch.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Write all counters as JSON (every key and stall state: docs/stats.md).
    #[arg(long)]
    stats_json: Option<PathBuf>,
    /// Write one line per issued warp instruction: pc, PTX, lanes, and the reconvergence
    /// state after it (masks and token stack in the formal report's notation).
    #[arg(long)]
    trace_warps: Option<PathBuf>,
    /// Write a timeline in the Chrome trace-event format (Perfetto UI, chrome://tracing):
    /// per SM its CTA slots and warp slots with their state intervals, barrier releases,
    /// fences, faults, and GPU-wide counters (docs/timeline.md).
    #[arg(long)]
    timeline: Option<PathBuf>,
    /// Only cycles START:END of the run (launches laid end to end) in the timeline.
    #[arg(long, value_name = "START:END", value_parser = gpusim::timeline::TimelineOptions::parse_window)]
    timeline_window: Option<(u64, u64)>,
    /// Only these SMs in the timeline: ids and ranges, e.g. 0,2,8-11.
    #[arg(long, value_name = "LIST")]
    timeline_sms: Option<String>,
    /// Also write every memory request as an async slice (from its instruction's issue to
    /// its completion reaching the SM, on its warp's track).
    #[arg(long)]
    timeline_memory: bool,
    /// Cycles between the timeline's counter samples.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    timeline_interval: u64,
    /// Timing-only run: skip the tensor arithmetic of mma.sync and wgmma (their accumulators
    /// keep their values, every cycle count and stall is the same; checks on them fail).
    #[arg(long)]
    skip_tensor_math: bool,
    /// Threads stepping the SMs (default: GPUSIM_THREADS, else 1); every result is the same
    /// for any count.
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    sample: SampleArgs,
}

#[derive(clap::Args)]
struct GemmArgs {
    /// The kernel's GEMM launch spec (e.g. traces/gemm/hgemm_mma_multistage/gemm.yaml).
    spec: PathBuf,
    /// GPU config (YAML); the embedded tiny GPU when omitted.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Override a config key, e.g. --set clock_mhz=1830 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Problem sizes, comma-separated: `square` (512³ … 8192³), `skinny` (1536×1536×512 and
    /// 1536×1536×65536) or MxNxK.
    #[arg(long, default_value = "square")]
    sizes: String,
    /// Also write the results as CSV.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Also write each size's launch statistics as JSON (`{"kernels": [...]}`, one per size,
    /// as `run --stats-json` has them): input for `gpusim plot power`.
    #[arg(long)]
    stats_json: Option<PathBuf>,
    /// Skip the tensor units' arithmetic (timing only; needs --verify-up-to below the sizes).
    #[arg(long)]
    skip_tensor_math: bool,
    /// Verify sizes whose M, N and K are all at most this (random inputs against an ndarray
    /// reference); larger sizes run on zero-filled matrices.
    #[arg(long, default_value_t = 512)]
    verify_up_to: u64,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Override the spec's split-K factor (its grid must have a `split_k` dimension).
    #[arg(long)]
    split_k: Option<u32>,
    /// Threads stepping the SMs (default: GPUSIM_THREADS, else 1); every result is the same
    /// for any count.
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    sample: SampleArgs,
}

/// Sampled simulation (docs/performance.md): long launches simulate warm-up and measured
/// waves, skip the steady-state waves at the measured rate, and simulate the tail.
#[derive(clap::Args)]
struct SampleArgs {
    /// Sample long launches (cycles are then a prediction with an error bound; checks and
    /// verification are not run on a launch that skipped CTAs).
    #[arg(long)]
    sample: bool,
    /// Waves simulated before measuring (default 1; implies --sample).
    #[arg(long, value_name = "N")]
    sample_warmup: Option<u32>,
    /// Waves measured for the steady-state rate (default 2, at least 1; implies --sample).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    sample_waves: Option<u32>,
    /// How far apart (percent of their mean) the measured waves' times may be for the launch
    /// to count as settled (default 3; implies --sample).
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    sample_tolerance: Option<f64>,
}

/// A percentage in (0, 100].
fn parse_percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!("`{s}` is not a percentage in (0, 100]")),
    }
}

impl SampleArgs {
    fn spec(&self) -> Option<gpusim::core::sample::SampleSpec> {
        let on = self.sample
            || self.sample_warmup.is_some()
            || self.sample_waves.is_some()
            || self.sample_tolerance.is_some();
        let d = gpusim::core::sample::SampleSpec::default();
        on.then(|| gpusim::core::sample::SampleSpec {
            warmup_waves: self.sample_warmup.unwrap_or(d.warmup_waves),
            measured_waves: self.sample_waves.unwrap_or(d.measured_waves),
            tolerance: self.sample_tolerance.map_or(d.tolerance, |p| p / 100.0),
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CfgArg {
    /// after the reconvergence tokens are inserted (what the token-stack machine runs)
    Tokens,
    /// as written in the file
    Source,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ChartArg {
    /// warp-cycles per stall state, per kernel
    Stalls,
    /// issued instructions by active lanes (SIMD efficiency)
    Simd,
    /// power (with its limit) and the core clock over simulated time
    Power,
    /// the hottest PTX lines, their warp-cycles by stall state (the source view)
    Lines,
    /// per-SM live warps over time, from a `run --timeline` file
    Timeline,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a launch manifest: simulate, print a summary, verify its checks. The statistics
    /// and stall states of the summary and of --stats-json are explained in docs/stats.md.
    Run(RunArgs),
    /// Parse a PTX file and report its functions; --tokens prints them with reconvergence
    /// tokens inserted, --cfg their control-flow graphs (blocks, immediate post-dominators,
    /// loops and their exits), --dot the graphs as Graphviz DOT.
    Ptx {
        file: PathBuf,
        #[arg(long)]
        tokens: bool,
        /// The CFG after token insertion (`--cfg`, `--cfg=tokens`) or as written
        /// (`--cfg=source`).
        #[arg(long, value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "tokens")]
        cfg: Option<CfgArg>,
        /// Write the CFG (of `--cfg`'s choice; tokens by default) as Graphviz DOT, the token
        /// pushes as dashed edges to where they reconverge (`dot -Tsvg`).
        #[arg(long)]
        dot: bool,
    },
    /// Cross-check a manifest against the semantic reference models: several simulator runs
    /// under randomised knobs against the lock-step and interleaving semantics, the uniformity
    /// analysis and (token-stack policy) the formal branching model. Exit 0 when everything
    /// agrees, 1 with the first disagreement, a failed manifest check, or an inconclusive
    /// check (nothing could be compared).
    Check {
        /// The launch manifest.
        manifest: PathBuf,
        /// The reconvergence policy to check (`sm.reconvergence`); the config's by default.
        #[arg(long)]
        policy: Option<String>,
        /// Simulator runs (the first as configured, the others randomised); at least 1.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
        /// Seed of the randomised knobs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// GPU config (YAML); the embedded tiny GPU when omitted.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Override a config key (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Simulator runs at once (default: GPUSIM_THREADS, else the machine's cores); the
        /// report is the same for any count.
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Differential fuzzing: random well-formed kernels (some with a planted race or divergent
    /// barrier) through `check` and the models. Exit 0 when everything agrees, 1 with the first
    /// disagreement and its reproducer.
    Fuzz {
        /// Seed of the campaign (case i has seed S + i).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Number of cases; at least 1.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
        cases: u32,
        /// Keep every case here (default: a temporary directory keeping only failing cases).
        #[arg(long)]
        keep: Option<PathBuf>,
        /// Cases judged at once (default: GPUSIM_THREADS, else the machine's cores); the
        /// report is the same for any count.
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Check a PTX file's barriers and warp collectives for possibly non-uniform control flow
    /// (the WGSL uniformity analysis); exits 1 when something is reported.
    Lint { file: PathBuf },
    /// Predict a GEMM kernel's performance over problem sizes from its launch spec
    /// (`gemm.yaml`, docs/gemm.md): cycles, time at the config's clock, TFLOP/s, % of peak,
    /// waves, simulation speed, and published figures where the spec has them.
    Gemm(GemmArgs),
    /// Write manifests and GEMM sizes for a real GPU: PTX, initial buffers, launches with
    /// their parameters (addresses and tensor maps named), checks — the input of
    /// tools/correlate/measure.py (docs/correlation.md).
    Export(cli_correlate::ExportArgs),
    /// Simulate the workloads of a measurement CSV (tools/correlate/measure.py) and compare
    /// each launch's time: per-launch error, mean absolute error, Pearson correlation, a plot (docs/correlation.md).
    Correlate(cli_correlate::CorrelateArgs),
    /// Print the PTX of `run --stats-json` output with per-line counters: share of warp-cycles
    /// waiting to issue the line, warp instructions issued, average active lanes, largest
    /// stall states (docs/stats.md, "Source view").
    Annotate {
        stats: PathBuf,
        /// Only the N lines with the most warp-cycles, hottest first.
        #[arg(long)]
        top: Option<usize>,
        /// Only this kernel.
        #[arg(long)]
        kernel: Option<String>,
    },
    /// Write one self-contained HTML page about a run: summary, stall and SIMD charts, the
    /// source view with per-line heat, one SM's warps over a window of cycles, the memory
    /// counters, and (small kernels) a warp step-through with masks and token stacks
    /// (docs/report.md).
    Report {
        /// The launch manifest.
        manifest: PathBuf,
        /// GPU config (YAML); the embedded tiny GPU when omitted.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Override a config key (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// The HTML file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Cycles of the first launch in the warp timeline.
        #[arg(long, value_name = "START:END", default_value = "0:4000", value_parser = gpusim::timeline::TimelineOptions::parse_window)]
        window: (u64, u64),
        /// The SM whose warps the timeline shows.
        #[arg(long, default_value_t = 0)]
        sm: u32,
        /// Build the step-through for runs of at most this many warp instructions.
        #[arg(long, default_value_t = 20_000)]
        step_limit: u64,
        /// Threads stepping the SMs (default: GPUSIM_THREADS, else 1).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Draw a chart (PNG or SVG, by the output's extension) from `run --stats-json` output.
    Plot {
        chart: ChartArg,
        stats: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    gpusim::progress::set_mode(match cli.progress {
        ProgressArg::Auto => gpusim::progress::Mode::Auto,
        ProgressArg::Bar => gpusim::progress::Mode::Bar,
        ProgressArg::Plain => gpusim::progress::Mode::Plain,
        ProgressArg::None => gpusim::progress::Mode::None,
    });
    let code = match cli.cmd {
        Cmd::Run(args) => cmd_run(&args),
        Cmd::Gemm(args) => cmd_gemm(&args),
        Cmd::Export(args) => cli_correlate::cmd_export(&args),
        Cmd::Correlate(args) => cli_correlate::cmd_correlate(&args),
        Cmd::Plot {
            chart,
            stats,
            output,
        } => cmd_plot(chart, &stats, &output),
        Cmd::Annotate { stats, top, kernel } => cmd_annotate(&stats, top, kernel),
        Cmd::Report {
            manifest,
            config,
            set,
            output,
            window,
            sm,
            step_limit,
            threads,
        } => {
            let opts = gpusim::report::ReportOptions {
                window,
                sm,
                step_limit,
            };
            cmd_report(&manifest, config.as_deref(), &set, &output, &opts, threads)
        }
        Cmd::Ptx {
            file,
            tokens,
            cfg,
            dot,
        } => cmd_ptx(&file, tokens, cfg, dot),
        Cmd::Lint { file } => cmd_lint(&file),
        Cmd::Fuzz {
            seed,
            cases,
            keep,
            threads,
        } => cmd_fuzz(seed, cases, keep, threads),
        Cmd::Check {
            manifest,
            policy,
            runs,
            seed,
            config,
            set,
            threads,
        } => cmd_check(&manifest, policy, runs, seed, config, &set, threads),
    };
    ExitCode::from(gpusim::output::finish(code) as u8)
}

/// The thread count for independent runs (`gpusim::threads::resolve`), or None after
/// reporting a bad one.
fn threads_or_exit(cli: Option<usize>) -> Option<usize> {
    report_threads(gpusim::threads::resolve(cli))
}

/// The thread count for the SMs of one simulation (`gpusim::core::crew`; one unless asked),
/// or None after reporting a bad one.
fn sm_threads_or_exit(cli: Option<usize>) -> Option<usize> {
    report_threads(gpusim::threads::resolve_or(cli, 1))
}

fn report_threads(r: Result<usize, String>) -> Option<usize> {
    match r {
        Ok(n) => Some(n),
        Err(e) => {
            errln!("error: {e}");
            None
        }
    }
}

fn parse_sets(set: &[String]) -> Result<Vec<(String, String)>, String> {
    set.iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| format!("--set {s}: expected KEY=VALUE"))
        })
        .collect()
}

fn cmd_run(args: &RunArgs) -> i32 {
    let (manifest, config, set) = (args.manifest.as_path(), args.config.as_deref(), &args.set);
    let sets = match parse_sets(set) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    // Output paths are checked before the simulation, which may take long.
    let files = [&args.stats_json, &args.trace_warps, &args.timeline];
    let checked = files
        .into_iter()
        .flatten()
        .try_for_each(|p| check_file(p))
        .and_then(|()| args.dump.as_deref().map_or(Ok(()), check_dir));
    if let Err(e) = checked {
        errln!("error: {e}");
        return 2;
    }
    let Some(threads) = sm_threads_or_exit(args.threads) else {
        return 2;
    };
    let opts = RunOptions {
        trace_warps: args.trace_warps.is_some(),
        progress: true,
        skip_tensor_math: args.skip_tensor_math,
        parallel: gpusim::core::crew::Parallel::threads(threads),
        sample: args.sample.spec(),
        // The source view goes to the stats file (`gpusim annotate`).
        lines: args.stats_json.is_some(),
        ..Default::default()
    };
    // The trace streams to its file as the simulation runs (bounded memory).
    let mut trace = match args
        .trace_warps
        .as_deref()
        .map(TraceWriter::create)
        .transpose()
    {
        Ok(t) => t,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    let sms = args
        .timeline_sms
        .as_deref()
        .map(gpusim::timeline::TimelineOptions::parse_sms)
        .transpose();
    let sms = match sms {
        Ok(s) => s,
        Err(e) => {
            errln!("error: --timeline-sms {e}");
            return 2;
        }
    };
    let timeline_opts = gpusim::timeline::TimelineOptions {
        window: args.timeline_window,
        sms,
        interval: args.timeline_interval,
        memory: args.timeline_memory,
    };
    let timeline = match args
        .timeline
        .as_deref()
        .map(|p| gpusim::timeline::TimelineWriter::create(p, timeline_opts))
        .transpose()
    {
        Ok(t) => t,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    let mut sinks = Sinks {
        warps: trace.take(),
        timeline,
    };
    let (out, fault) = match run_manifest_traced(manifest, config, &sets, &opts, &mut sinks) {
        Ok(o) => o,
        Err(e) => {
            let kind = match &e {
                RunError::Fault(_) => "",
                _ => "error: ",
            };
            errln!("{kind}{e}");
            drop(sinks);
            for path in [&args.trace_warps, &args.timeline].into_iter().flatten() {
                let _ = std::fs::remove_file(path);
            }
            return e.exit_code();
        }
    };
    let s = &out.stats;
    let n_sms = s.kernels.first().map_or(0, |k| k.sms.len());
    let mc = &s.machine;
    outln!("gpusim: {}", manifest.display());
    outln!(
        "  config              {} ({}, {})",
        config.map_or("tiny (embedded)".to_string(), |p| p.display().to_string()),
        mc.config,
        mc.arch
    );
    let chosen = if mc.reconvergence_setting == "auto" {
        format!(" (auto: .target {} on {})", mc.target, mc.arch)
    } else {
        String::new()
    };
    outln!("  reconvergence       {}{chosen}", mc.reconvergence);
    for k in &s.kernels {
        outln!(
            "  kernel {:<28} cycles {:>10}  warp insts {:>10}  IPC {:>6.3}  SIMD eff {:>5.1}%",
            k.kernel,
            k.counters.cycles,
            k.counters.warp_instructions,
            k.counters.ipc,
            100.0 * k.counters.simd_efficiency
        );
        if let Some(line) = k.sample.as_ref().map(sample_line) {
            outln!("    {line}");
        }
        if let Some(sp) = k.l1_split {
            outln!(
                "    L1/shared split: {} KiB shared memory, {} KiB L1 per SM (l1.carveout: driver)",
                sp.shared_kib,
                sp.l1_kib
            );
        }
    }
    outln!("  cycles              {}", s.totals.cycles);
    outln!("  warp instructions   {}", s.totals.warp_instructions);
    outln!("  thread instructions {}", s.totals.thread_instructions);
    outln!("  IPC                 {:.3}", s.totals.ipc);
    outln!(
        "  SIMD efficiency     {:.1}%",
        100.0 * s.totals.simd_efficiency
    );
    outln!(
        "  occupancy           {:.1}% (averaged over all {n_sms} SMs; at most {} warps resident on an SM)",
        100.0 * s.totals.occupancy,
        s.totals.max_resident_warps
    );
    let units: Vec<String> = gpusim::stats::UNIT_NAMES
        .iter()
        .filter_map(|k| Some((k, *s.totals.unit_utilisation.get(*k)?)))
        .filter(|(_, v)| *v > 0.0)
        .map(|(k, v)| format!("{k} {:.1}%", 100.0 * v))
        .collect();
    outln!(
        "  unit utilisation    {} (averaged over all {n_sms} SMs)",
        units.join(", ")
    );
    let m = &s.totals.memory;
    outln!(
        "  memory              global {} requests, {} sectors ({:.2}/request), {} lines; shared {} requests, {} conflict replays (degree {:.2})",
        m.counters.global_requests,
        m.counters.global_sectors,
        m.sectors_per_request,
        m.counters.global_lines,
        m.counters.shared_requests,
        m.counters.shared_replays,
        m.shared_conflict_degree
    );
    let c = &m.counters;
    // The partitions' counts only where the L2 has partitions (`l2.partitions`).
    let partitions = if c.l2_far_accesses + c.l2_copy_hits > 0 {
        format!(
            "; {} far accesses, {} copy hits (L2 partitions)",
            c.l2_far_accesses, c.l2_copy_hits
        )
    } else {
        String::new()
    };
    outln!(
        "  caches              L1 {} hits, {} misses, {} evictions, {} write-backs, {} flushed, {} reservation fails; L2 {} hits, {} misses, {} evictions, {} write-backs, {} reservation fails{}",
        c.l1_hits, c.l1_misses, c.l1_evictions, c.l1_writebacks, c.l1_flushed, c.l1_reservation_fails,
        c.l2_hits, c.l2_misses, c.l2_evictions, c.l2_writebacks, c.l2_reservation_fails, partitions
    );
    outln!(
        "  DRAM                {} reads, {} writes; row buffer {} hits, {} misses, {} conflicts (hit rate {:.1}%)",
        c.dram_reads, c.dram_writes, c.dram_row_hits, c.dram_row_misses, c.dram_row_conflicts,
        100.0 * m.dram_row_hit_rate
    );
    outln!(
        "  bandwidth           MSHR {} merges, {} stalls; L2 {:.0} busy cycles ({:.1}%), DRAM {:.0} busy cycles ({:.1}%); interconnect {:.1}% of the SM ports, {} queueing cycles",
        c.mshr_merges,
        c.mshr_stalls,
        m.l2_busy_cycles,
        100.0 * m.l2_utilisation,
        m.dram_busy_cycles,
        100.0 * m.dram_utilisation,
        100.0 * m.icnt_utilisation,
        c.icnt_queue_cycles
    );
    if c.loads_timed > 0 {
        outln!(
            "  load latency        {} global/local loads, issue to registers: mean {:.1} cycles, median ≤ {}, p99 ≤ {}",
            c.loads_timed,
            m.load_latency_mean,
            m.load_latency_p50,
            m.load_latency_p99
        );
    }
    if let Some(k) = s.kernels.iter().max_by_key(|k| k.counters.cycles) {
        use gpusim::stats::ComponentReport;
        let (s0, s1, s2) = ComponentReport::spread(&k.components.l2_slice_utilisation);
        let (d0, d1, d2) = ComponentReport::spread(&k.components.dram_channel_utilisation);
        outln!(
            "  components          L2 slices {:.1}/{:.1}/{:.1}%, DRAM channels {:.1}/{:.1}/{:.1}% busy (min/mean/max, launch of `{}`{})",
            100.0 * s0,
            100.0 * s1,
            100.0 * s2,
            100.0 * d0,
            100.0 * d1,
            100.0 * d2,
            k.kernel,
            if s.kernels.len() > 1 { ", the longest" } else { "" }
        );
        if let Some(m) = &k.memory_system {
            let d = &m.dram;
            outln!(
                "  memory system       L1 queue mean {:.2} max {}, slice queue mean {:.2} max {}; held by full queues: L1 {}, links {}, slices {} cycles; DRAM {} ACT, {} RD, {} WR, row hits/misses/conflicts {}/{}/{}, refresh {} cycles, turnaround {} cycles, bus {:.1}% busy",
                m.l1_request_queue.mean,
                m.l1_request_queue.max,
                m.slice_queue.mean,
                m.slice_queue.max,
                m.backpressure_cycles.l1,
                m.backpressure_cycles.sm_link + m.backpressure_cycles.dram_link,
                m.backpressure_cycles.slice,
                d.act,
                d.rd,
                d.wr,
                d.row_hits,
                d.row_misses,
                d.row_conflicts,
                d.refresh_cycles,
                d.turnaround_cycles,
                100.0 * d.bus_utilisation
            );
        }
    }
    for k in &s.kernels {
        print_clock_and_power(k, s.kernels.len() > 1);
    }
    // The states of live warps in the order of docs/stats.md; finished warps apart.
    use gpusim::stats::Stall;
    let count = |st: Stall| s.totals.stalls.get(st.name()).copied().unwrap_or(0);
    let live: Vec<String> = Stall::ALL
        .iter()
        .filter(|&&st| st != Stall::Finished)
        .map(|&st| format!("{} {}", st.name(), count(st)))
        .collect();
    outln!("  warp-cycles         {} (live warps)", live.join(", "));
    outln!(
        "  finished warps      {} warp-cycles (done, waiting for the rest of their CTA)",
        count(Stall::Finished)
    );
    outln!(
        "  simulation speed    {:.0} warp instructions/s ({:.3} s)",
        s.warp_instructions_per_second,
        s.wall_seconds
    );
    if let Some(f) = &out.expected_fault {
        outln!("  expected fault      {f}");
    }
    // Every requested output is written, a faulted run's too (up to the fault).
    let written = write_outputs(args, &out, sinks);
    if let Some(f) = fault {
        outln!("  checks              not run: the kernel faulted");
        errln!("{f}");
        return 3;
    }
    if let Err(e) = written {
        errln!("error: {e}");
        return 2;
    }
    if out.skipped_ctas > 0 {
        outln!(
            "  checks              not run: the run was sampled ({} CTAs skipped, their outputs never computed)",
            out.skipped_ctas
        );
        0
    } else if out.failures.is_empty() {
        outln!("  checks              passed");
        0
    } else {
        for f in &out.failures {
            outln!("  CHECK FAILED: {} ({} mismatches)", f.buffer, f.mismatches);
            for (i, got, exp) in &f.first {
                outln!("    [{i}] got {got}, expected {exp}");
            }
        }
        1
    }
}

/// What sampling did to a launch, in one line.
fn sample_line(s: &gpusim::core::sample::SampleReport) -> String {
    if !s.sampled {
        let why = s.not_sampled_because.as_deref().unwrap_or("");
        return format!("not sampled: {why}");
    }
    let error = s
        .estimated_error
        .map_or("(no error bound from one measured unit)".to_string(), |e| {
            format!("±{:.2}%", 100.0 * e)
        });
    format!(
        "sampled: {} of {} CTAs simulated in {} cycles, {} skipped ≈ {} cycles (rate of the last {} units of {} CTAs; units took {:?} cycles); predicted {} cycles {error}",
        s.simulated_ctas,
        s.ctas,
        s.simulated_cycles,
        s.skipped_ctas,
        s.skipped_cycles,
        s.measured_waves,
        s.unit_ctas,
        s.unit_cycles,
        s.predicted_cycles
    )
}

/// The files a run streams to as it simulates: the warp trace and the timeline.
struct Sinks {
    warps: Option<TraceWriter>,
    timeline: Option<gpusim::timeline::TimelineWriter>,
}

impl TraceSink for Sinks {
    fn event(&mut self, e: gpusim::stats::WarpEvent) {
        if let Some(w) = &mut self.warps {
            w.event(e);
        }
    }

    fn timeline(&mut self) -> Option<&mut dyn gpusim::timeline::TimelineSink> {
        self.timeline
            .as_mut()
            .map(|t| t as &mut dyn gpusim::timeline::TimelineSink)
    }
}

/// Finish the warp trace and the timeline and write `--dump` and `--stats-json`; the first
/// error.
fn write_outputs(args: &RunArgs, out: &gpusim::RunOutput, sinks: Sinks) -> Result<(), String> {
    if let Some(t) = sinks.warps {
        t.finish().map_err(|e| e.to_string())?;
    }
    if let Some(t) = sinks.timeline {
        t.finish().map_err(|e| e.to_string())?;
    }
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (name, dtype, shape, bytes) in &out.buffers {
            gpusim::launch::npy::write(&dir.join(format!("{name}.npy")), *dtype, shape, bytes)
                .map_err(|e| e.to_string())?;
        }
    }
    if let Some(path) = &args.stats_json {
        let text = serde_json::to_string_pretty(&out.stats).expect("stats serialise");
        write_file(path, text)?;
    }
    Ok(())
}

/// `gpusim gemm`: a table row per size as it finishes, the anchors, the CSV. Exit 0, 1 when a
/// verification failed, 2 for bad input, 3 for a fault.
fn cmd_gemm(args: &GemmArgs) -> i32 {
    use gpusim::gemm::{self, metrics, report};
    let prepared = (|| -> Result<_, String> {
        let mut spec = gemm::GemmSpec::load(&args.spec).map_err(|e| e.to_string())?;
        if let Some(k) = args.split_k {
            spec.set_split_k(k)?;
        }
        let sets = parse_sets(&args.set)?;
        let cfg = gpusim::run::load_config(args.config.as_deref(), &[], &sets)
            .map_err(|e| e.to_string())?;
        let clock = metrics::clock_hz(&cfg)?;
        let sizes = gemm::parse_sizes(&args.sizes).map_err(|e| format!("--sizes: {e}"))?;
        if let Some(csv) = &args.csv {
            check_file(csv).map_err(|e| format!("--csv: {e}"))?;
        }
        if let Some(json) = &args.stats_json {
            check_file(json).map_err(|e| format!("--stats-json: {e}"))?;
        }
        for s in &sizes {
            gemm::sizes::check_size(&spec, *s)?;
        }
        // Every size's launch is checked before the first is simulated.
        gemm::run::check_launches(&spec, &cfg, &sizes).map_err(|e| e.to_string())?;
        Ok((spec, cfg, clock, sizes))
    })();
    let (spec, cfg, clock, sizes) = match prepared {
        Ok(p) => p,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    let Some(threads) = sm_threads_or_exit(args.threads) else {
        return 2;
    };
    let opts = gemm::GemmOptions {
        verify_up_to: args.verify_up_to,
        seed: args.seed,
        progress: true,
        skip_tensor_math: args.skip_tensor_math,
        parallel: gpusim::core::crew::Parallel::threads(threads),
        sample: args.sample.spec(),
    };
    // The clock the peak is stated at, and how the run's clock may move (docs/power.md).
    let clock_policy = match (cfg.clock.fixed_mhz, cfg.governed()) {
        (Some(f), _) => format!("locked at {f} MHz"),
        (None, true) => format!(
            "boost {} MHz, power-limited to {:.0} W",
            clock / 1e6,
            cfg.power.and_then(|p| p.limit_watts).unwrap_or(0.0)
        ),
        (None, false) => format!("at {} MHz", clock / 1e6),
    };
    outln!(
        "gpusim gemm: {} on {} ({} SMs {}; {} peak {:.1} TFLOP/s at {} MHz)",
        spec.name,
        cfg.name,
        cfg.sm.count,
        clock_policy,
        match spec.math {
            gemm::spec::Math::Tensor => "tensor",
            gemm::spec::Math::TensorTf32 => "tensor tf32",
            gemm::spec::Math::Fp32 => "FP32",
        },
        metrics::peak_tflops(&cfg, spec.math, clock),
        clock / 1e6
    );
    outln!("{}", report::table_header());
    let mut rows = Vec::new();
    let mut launches = Vec::new();
    let mut code = 0;
    for size in sizes {
        match gemm::run_size(&spec, &cfg, size, &opts) {
            Ok(run) => {
                let m = gemm::metrics(&spec, &cfg, &run, clock);
                if args.stats_json.is_some() {
                    let mut k = serde_json::to_value(&run.stats).unwrap_or_default();
                    k["size"] = serde_json::json!(size.to_string());
                    launches.push(k);
                }
                outln!("{}", report::table_row(&m));
                if let Some(line) = m.sample.as_ref().map(sample_line) {
                    outln!("  {line}");
                }
                if let gemm::Verification::Failed {
                    mismatches, first, ..
                } = &m.verification
                {
                    outln!(
                        "  VERIFICATION FAILED: {mismatches} elements of C; C[{}] = {}, expected {}",
                        first.0, first.1, first.2
                    );
                    code = 1;
                }
                rows.push(m);
            }
            Err(e) => {
                errln!("error: size {size}: {e}");
                code = e.exit_code();
                break;
            }
        }
    }
    let anchors = report::anchor_lines(&rows);
    if !anchors.is_empty() {
        outln!("published figures on {}:", cfg.name);
        for l in anchors {
            outln!("{l}");
        }
    }
    if let Some(path) = &args.csv {
        if let Err(e) = write_file(path, report::csv(&spec.name, &cfg.name, &rows)) {
            errln!("error: {e}");
            return 2;
        }
    }
    if let Some(path) = &args.stats_json {
        let doc = serde_json::json!({ "config": cfg.name, "kernels": launches });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        if let Err(e) = write_file(path, text) {
            errln!("error: {e}");
            return 2;
        }
    }
    code
}

/// The summary's clock and power lines of one launch (`power::governor`).
fn print_clock_and_power(k: &gpusim::stats::KernelStats, name_it: bool) {
    let c = &k.clock;
    let of = if name_it {
        format!(" (`{}`)", k.kernel)
    } else {
        String::new()
    };
    let range = if c.min_mhz == c.max_mhz {
        format!("{} MHz", c.max_mhz)
    } else {
        format!(
            "mean {:.0} MHz, {}–{} MHz, {} changes",
            c.mean_mhz, c.min_mhz, c.max_mhz, c.changes
        )
    };
    outln!(
        "  clock{of:<14} {range}; {:.3} us simulated{}",
        c.seconds * 1e6,
        if c.governed { " (power-governed)" } else { "" }
    );
    if let Some(p) = &k.power {
        let j = &p.joules;
        let pct = |x: f64| 100.0 * x / p.energy_joules.max(f64::MIN_POSITIVE);
        let limit = p
            .limit_watts
            .map_or(String::new(), |l| format!(" (limit {l:.0} W)"));
        outln!(
            "  power{of:<14} average {:.1} W, peak {:.1} W{limit}; energy {:.3} mJ: static {:.0}%, issue {:.0}%, ALU {:.0}%, registers {:.0}%, tensor {:.0}%, shared/L1 {:.0}%, L2/crossbar {:.0}%, DRAM {:.0}%{}",
            p.average_watts,
            p.peak_watts,
            p.energy_joules * 1e3,
            pct(j.static_),
            pct(j.issue),
            pct(j.alu),
            pct(j.registers),
            pct(j.tensor),
            pct(j.shared_l1),
            pct(j.l2_icnt),
            pct(j.dram),
            p.pj_per_tensor_flop
                .map_or(String::new(), |e| format!("; {e:.3} pJ per tensor FLOP"))
        );
    }
}

fn cmd_plot(chart: ChartArg, stats: &std::path::Path, output: &std::path::Path) -> i32 {
    let doc = match std::fs::read_to_string(stats)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            errln!("error: {}: {e}", stats.display());
            return 2;
        }
    };
    let chart = match chart {
        ChartArg::Stalls => gpusim_viz::Chart::Stalls,
        ChartArg::Simd => gpusim_viz::Chart::Simd,
        ChartArg::Power => gpusim_viz::Chart::Power,
        ChartArg::Lines => gpusim_viz::Chart::Lines,
        ChartArg::Timeline => gpusim_viz::Chart::Timeline,
    };
    match gpusim_viz::plot(chart, &doc, output) {
        Ok(()) => 0,
        Err(gpusim_viz::VizError::Input(e)) => {
            errln!("error: {}: {e}", stats.display());
            2
        }
        Err(e) => {
            errln!("error: {e}");
            2
        }
    }
}

fn cmd_report(
    manifest: &std::path::Path,
    config: Option<&std::path::Path>,
    set: &[String],
    output: &std::path::Path,
    opts: &gpusim::report::ReportOptions,
    threads: Option<usize>,
) -> i32 {
    let sets = match parse_sets(set) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    if let Err(e) = check_file(output) {
        errln!("error: {e}");
        return 2;
    }
    let Some(threads) = sm_threads_or_exit(threads) else {
        return 2;
    };
    let run = RunOptions {
        progress: true,
        parallel: gpusim::core::crew::Parallel::threads(threads),
        ..Default::default()
    };
    match gpusim::report::report(manifest, config, &sets, &run, opts) {
        Ok((html, fault)) => match write_file(output, html) {
            Ok(()) => {
                outln!("gpusim: wrote {}", output.display());
                // The page shows the run up to an unexpected fault; the exit code says so.
                match fault {
                    Some(f) => {
                        errln!("{f}");
                        3
                    }
                    None => 0,
                }
            }
            Err(e) => {
                errln!("error: {e}");
                2
            }
        },
        Err(e) => {
            errln!("error: {e}");
            e.exit_code()
        }
    }
}

fn cmd_annotate(stats: &std::path::Path, top: Option<usize>, kernel: Option<String>) -> i32 {
    let doc: serde_json::Value = match std::fs::read_to_string(stats)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            errln!("error: {}: {e}", stats.display());
            return 2;
        }
    };
    let base = stats.parent().unwrap_or(std::path::Path::new("."));
    let opts = gpusim::annotate::AnnotateOptions { top, kernel };
    match gpusim::annotate::annotate(&doc, base, &opts) {
        Ok(text) => {
            outln!("{}", text.trim_end());
            0
        }
        Err(e) => {
            errln!("error: {}: {e}", stats.display());
            2
        }
    }
}

fn cmd_ptx(file: &std::path::Path, tokens: bool, cfg: Option<CfgArg>, dot: bool) -> i32 {
    let src = match std::fs::read_to_string(file) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: cannot read {}: {e}", file.display());
            return 2;
        }
    };
    let m = match gpusim_isa::parse_module(&file.display().to_string(), &src) {
        Ok(m) => m,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    for f in m.functions.iter().filter(|f| !f.body.is_empty()) {
        let kind = if f.kind == gpusim_isa::FuncKind::Entry {
            "entry"
        } else {
            "func"
        };
        if !tokens && cfg.is_none() && !dot {
            outln!(
                "{kind} {}: {} params, {} registers, {} instructions",
                f.name,
                f.params.len(),
                f.regs.len(),
                f.body.len()
            );
            continue;
        }
        let t = match gpusim_isa::analysis::insert_tokens(f) {
            Ok(t) => t,
            Err(e) => {
                errln!(
                    "error: {}:{}:{}: in `{}`: {}",
                    m.file,
                    e.span.line,
                    e.span.col,
                    e.function,
                    e.message
                );
                return 2;
            }
        };
        // The graph as written, or as the token-stack machine runs it.
        let graph = if cfg == Some(CfgArg::Source) { f } else { &t };
        if dot {
            out!("{}", gpusim_isa::analysis::cfg_dot(graph));
        } else if cfg.is_some() {
            out!("{}", gpusim_isa::analysis::describe_cfg(graph));
        }
        if tokens {
            out!("{}", gpusim_isa::print::function_to_ptx(&m, &t));
        }
    }
    0
}

/// `gpusim lint FILE`: one line per finding; 0 when there are none, 1 when there are, 2 when
/// the file cannot be read or parsed.
fn cmd_lint(file: &std::path::Path) -> i32 {
    let src = match std::fs::read_to_string(file) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: cannot read {}: {e}", file.display());
            return 2;
        }
    };
    let m = match gpusim_isa::parse_module(&file.display().to_string(), &src) {
        Ok(m) => m,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    let results = gpusim_models::uniformity::analyze_functions(&m);
    let mut found = false;
    for f in results.iter().flat_map(|r| &r.findings) {
        outln!("{f}");
        found = true;
    }
    // What the verdict rests on where the block shape is not known (docs/checking.md).
    for a in results.iter().flat_map(|r| &r.assumptions) {
        outln!("note: {a}");
    }
    i32::from(found)
}

/// `gpusim check`: the report, then the verdict (0 agree, 1 disagree, 2 bad input).
fn cmd_check(
    manifest: &std::path::Path,
    policy: Option<String>,
    runs: u32,
    seed: u64,
    config: Option<PathBuf>,
    set: &[String],
    threads: Option<usize>,
) -> i32 {
    let sets = match parse_sets(set) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {e}");
            return 2;
        }
    };
    let Some(threads) = threads_or_exit(threads) else {
        return 2;
    };
    let o = gpusim::check::CheckOptions {
        config,
        sets,
        policy,
        runs,
        seed,
        threads,
    };
    match gpusim::check::check(manifest, &o) {
        Ok(report) => {
            outln!("check {}", manifest.display());
            for l in &report.lines {
                outln!("  {l}");
            }
            match (&report.disagreement, &report.inconclusive) {
                (Some(d), _) => {
                    outln!("  verdict             DISAGREE: {d}");
                    1
                }
                (None, Some(why)) => {
                    outln!("  verdict             INCONCLUSIVE: {why}");
                    1
                }
                (None, None) => {
                    outln!("  verdict             agree");
                    0
                }
            }
        }
        Err(e) => {
            errln!("error: {e}");
            e.exit_code()
        }
    }
}

/// `gpusim fuzz`: a summary, then the first disagreement with its reproducer (exit 1).
fn cmd_fuzz(seed: u64, cases: u32, keep: Option<PathBuf>, threads: Option<usize>) -> i32 {
    use gpusim::check::fuzz::{fuzz, FuzzOptions, POLICIES};
    if let Some(Err(e)) = keep.as_deref().map(check_dir) {
        errln!("error: --keep: {e}");
        return 2;
    }
    let Some(threads) = threads_or_exit(threads) else {
        return 2;
    };
    let o = FuzzOptions {
        keep,
        threads,
        ..FuzzOptions::default()
    };
    let r = match fuzz(seed, cases, &o) {
        Ok(r) => r,
        Err(e) => {
            let dir = o
                .keep
                .as_ref()
                .map_or("a temporary directory".into(), |d| d.display().to_string());
            errln!("error: cannot write the fuzz cases under {dir}: {e}");
            return 2;
        }
    };
    outln!(
        "fuzz seed {seed}: {} case(s) in {}",
        r.cases,
        r.dir.display()
    );
    outln!(
        "  clean {} (uniformity false alarms {}), races {} (detected {}), divergent barriers {} (detected {})",
        r.clean, r.uniformity_false_alarms, r.races, r.races_detected, r.divergent, r.divergent_detected
    );
    let policies: Vec<String> = POLICIES
        .iter()
        .zip(r.per_policy)
        .map(|(p, n)| format!("{p} {n}"))
        .collect();
    outln!("  policies: {}", policies.join(", "));
    match r.disagreements.first() {
        None => {
            outln!("  verdict             agree");
            0
        }
        Some(d) => {
            outln!("  {} disagreement(s); the first:", r.disagreements.len());
            outln!("  verdict             DISAGREE: {d}");
            1
        }
    }
}
