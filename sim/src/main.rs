//! The gpusim command line: `gpusim run MANIFEST`, `gpusim check MANIFEST`, `gpusim ptx FILE`,
//! `gpusim lint FILE`, `gpusim fuzz` and `gpusim gemm SPEC`.

use clap::{Parser, Subcommand};
use gpusim::run::{run_manifest_with, RunError, RunOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gpusim",
    version,
    about = "A cycle-level GPU simulator for PTX kernels"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
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
    /// Write all counters as JSON.
    #[arg(long)]
    stats_json: Option<PathBuf>,
    /// Write one line per issued warp instruction: pc, PTX, lanes, and the reconvergence
    /// state after it (masks and token stack in the formal report's notation).
    #[arg(long)]
    trace_warps: Option<PathBuf>,
    /// Timing-only run: skip the tensor arithmetic of mma.sync and wgmma (their accumulators
    /// keep their values, every cycle count and stall is the same; checks on them fail).
    #[arg(long)]
    skip_tensor_math: bool,
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
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ChartArg {
    /// warp-cycles per stall state, per kernel
    Stalls,
    /// issued instructions by active lanes (SIMD efficiency)
    Simd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a launch manifest: simulate, print a summary, verify its checks.
    Run(RunArgs),
    /// Parse a PTX file and report its functions; --tokens prints them with reconvergence
    /// tokens inserted, --cfg their control-flow graphs.
    Ptx {
        file: PathBuf,
        #[arg(long)]
        tokens: bool,
        #[arg(long)]
        cfg: bool,
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
    },
    /// Check a PTX file's barriers and warp collectives for possibly non-uniform control flow
    /// (the WGSL uniformity analysis); exits 1 when something is reported.
    Lint { file: PathBuf },
    /// Predict a GEMM kernel's performance over problem sizes from its launch spec
    /// (`gemm.yaml`, docs/gemm.md): cycles, time at the config's clock, TFLOP/s, % of peak,
    /// waves, simulation speed, and published figures where the spec has them.
    Gemm(GemmArgs),
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
    let code = match cli.cmd {
        Cmd::Run(args) => cmd_run(&args),
        Cmd::Gemm(args) => cmd_gemm(&args),
        Cmd::Plot {
            chart,
            stats,
            output,
        } => cmd_plot(chart, &stats, &output),
        Cmd::Ptx { file, tokens, cfg } => cmd_ptx(&file, tokens, cfg),
        Cmd::Lint { file } => cmd_lint(&file),
        Cmd::Fuzz { seed, cases, keep } => cmd_fuzz(seed, cases, keep),
        Cmd::Check {
            manifest,
            policy,
            runs,
            seed,
            config,
            set,
        } => cmd_check(&manifest, policy, runs, seed, config, &set),
    };
    ExitCode::from(code as u8)
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
            eprintln!("error: {e}");
            return 2;
        }
    };
    let opts = RunOptions {
        trace_warps: args.trace_warps.is_some(),
        progress: true,
        skip_tensor_math: args.skip_tensor_math,
        ..Default::default()
    };
    let out = match run_manifest_with(manifest, config, &sets, &opts) {
        Ok(o) => o,
        Err(e) => {
            let kind = match &e {
                RunError::Fault(_) => "",
                _ => "error: ",
            };
            eprintln!("{kind}{e}");
            return e.exit_code();
        }
    };
    let s = &out.stats;
    println!("gpusim: {}", manifest.display());
    for k in &s.kernels {
        println!(
            "  kernel {:<28} cycles {:>10}  warp insts {:>10}  IPC {:>6.3}  SIMD eff {:>5.1}%",
            k.kernel,
            k.counters.cycles,
            k.counters.warp_instructions,
            k.counters.ipc,
            100.0 * k.counters.simd_efficiency
        );
    }
    println!("  cycles              {}", s.totals.cycles);
    println!("  warp instructions   {}", s.totals.warp_instructions);
    println!("  thread instructions {}", s.totals.thread_instructions);
    println!("  IPC                 {:.3}", s.totals.ipc);
    println!(
        "  SIMD efficiency     {:.1}%",
        100.0 * s.totals.simd_efficiency
    );
    println!(
        "  occupancy           {:.1}% (at most {} warps resident on an SM)",
        100.0 * s.totals.occupancy,
        s.totals.max_resident_warps
    );
    let units: Vec<String> = s
        .totals
        .unit_utilisation
        .iter()
        .filter(|(_, v)| **v > 0.0)
        .map(|(k, v)| format!("{k} {:.1}%", 100.0 * v))
        .collect();
    println!("  unit utilisation    {}", units.join(", "));
    let m = &s.totals.memory;
    println!(
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
    println!(
        "  caches              L1 {} hits, {} misses, {} evictions, {} write-backs, {} flushed, {} reservation fails; L2 {} hits, {} misses, {} evictions, {} write-backs, {} reservation fails",
        c.l1_hits, c.l1_misses, c.l1_evictions, c.l1_writebacks, c.l1_flushed, c.l1_reservation_fails,
        c.l2_hits, c.l2_misses, c.l2_evictions, c.l2_writebacks, c.l2_reservation_fails
    );
    println!(
        "  DRAM                {} reads, {} writes; row buffer {} hits, {} misses, {} conflicts (hit rate {:.1}%)",
        c.dram_reads, c.dram_writes, c.dram_row_hits, c.dram_row_misses, c.dram_row_conflicts,
        100.0 * m.dram_row_hit_rate
    );
    println!(
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
    let stalls: Vec<String> = s
        .totals
        .stalls
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!("  warp-cycles         {}", stalls.join(", "));
    println!(
        "  simulation speed    {:.0} warp instructions/s ({:.3} s)",
        s.warp_instructions_per_second, s.wall_seconds
    );
    if let Some(f) = &out.expected_fault {
        println!("  expected fault      {f}");
    }
    if let Some(path) = &args.trace_warps {
        let text: String = out.events.iter().map(|e| format!("{e}\n")).collect();
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return 2;
        }
    }
    if let Some(dir) = &args.dump {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: cannot create {}: {e}", dir.display());
            return 2;
        }
        for (name, dtype, shape, bytes) in &out.buffers {
            if let Err(e) =
                gpusim::launch::npy::write(&dir.join(format!("{name}.npy")), *dtype, shape, bytes)
            {
                eprintln!("error: {e}");
                return 2;
            }
        }
    }
    if let Some(path) = &args.stats_json {
        let text = serde_json::to_string_pretty(&out.stats).expect("stats serialise");
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return 2;
        }
    }
    if out.failures.is_empty() {
        println!("  checks              passed");
        0
    } else {
        for f in &out.failures {
            println!("  CHECK FAILED: {} ({} mismatches)", f.buffer, f.mismatches);
            for (i, got, exp) in &f.first {
                println!("    [{i}] got {got}, expected {exp}");
            }
        }
        1
    }
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
        for s in &sizes {
            gemm::sizes::check_size(&spec, *s)?;
        }
        Ok((spec, cfg, clock, sizes))
    })();
    let (spec, cfg, clock, sizes) = match prepared {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let opts = gemm::GemmOptions {
        verify_up_to: args.verify_up_to,
        seed: args.seed,
        progress: true,
        skip_tensor_math: args.skip_tensor_math,
    };
    println!(
        "gpusim gemm: {} on {} ({} SMs at {} MHz; {} peak {:.1} TFLOP/s)",
        spec.name,
        cfg.name,
        cfg.sm.count,
        clock / 1e6,
        match spec.math {
            gemm::spec::Math::Tensor => "tensor",
            gemm::spec::Math::TensorTf32 => "tensor tf32",
            gemm::spec::Math::Fp32 => "FP32",
        },
        metrics::peak_tflops(&cfg, spec.math, clock)
    );
    println!("{}", report::table_header());
    let mut rows = Vec::new();
    let mut code = 0;
    for size in sizes {
        match gemm::run_size(&spec, &cfg, size, &opts) {
            Ok(run) => {
                let m = gemm::metrics(&spec, &cfg, &run, clock);
                println!("{}", report::table_row(&m));
                if let gemm::Verification::Failed {
                    mismatches, first, ..
                } = &m.verification
                {
                    println!(
                        "  VERIFICATION FAILED: {mismatches} elements of C; C[{}] = {}, expected {}",
                        first.0, first.1, first.2
                    );
                    code = 1;
                }
                rows.push(m);
            }
            Err(e) => {
                eprintln!("error: size {size}: {e}");
                code = e.exit_code();
                break;
            }
        }
    }
    let anchors = report::anchor_lines(&rows);
    if !anchors.is_empty() {
        println!("published figures on {}:", cfg.name);
        for l in anchors {
            println!("{l}");
        }
    }
    if let Some(path) = &args.csv {
        if let Err(e) = std::fs::write(path, report::csv(&spec.name, &cfg.name, &rows)) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return 2;
        }
    }
    code
}

fn cmd_plot(chart: ChartArg, stats: &std::path::Path, output: &std::path::Path) -> i32 {
    let doc = match std::fs::read_to_string(stats)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {}: {e}", stats.display());
            return 2;
        }
    };
    let chart = match chart {
        ChartArg::Stalls => gpusim_viz::Chart::Stalls,
        ChartArg::Simd => gpusim_viz::Chart::Simd,
    };
    match gpusim_viz::plot(chart, &doc, output) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

fn cmd_ptx(file: &std::path::Path, tokens: bool, cfg: bool) -> i32 {
    let src = match std::fs::read_to_string(file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return 2;
        }
    };
    let m = match gpusim_isa::parse_module(&file.display().to_string(), &src) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    for f in m.functions.iter().filter(|f| !f.body.is_empty()) {
        let kind = if f.kind == gpusim_isa::FuncKind::Entry {
            "entry"
        } else {
            "func"
        };
        if !tokens && !cfg {
            println!(
                "{kind} {}: {} params, {} registers, {} instructions",
                f.name,
                f.params.len(),
                f.regs.len(),
                f.body.len()
            );
            continue;
        }
        match gpusim_isa::analysis::insert_tokens(f) {
            Ok(t) => {
                if cfg {
                    print!("{}", gpusim_isa::analysis::describe_cfg(&t));
                }
                if tokens {
                    print!("{}", gpusim_isa::print::function_to_ptx(&m, &t));
                }
            }
            Err(e) => {
                eprintln!(
                    "error: {}:{}:{}: in `{}`: {}",
                    m.file, e.span.line, e.span.col, e.function, e.message
                );
                return 2;
            }
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
            eprintln!("error: cannot read {}: {e}", file.display());
            return 2;
        }
    };
    let m = match gpusim_isa::parse_module(&file.display().to_string(), &src) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let results = gpusim_models::uniformity::analyze_functions(&m);
    let mut found = false;
    for f in results.iter().flat_map(|r| &r.findings) {
        println!("{f}");
        found = true;
    }
    // What the verdict rests on where the block shape is not known (docs/checking.md).
    for a in results.iter().flat_map(|r| &r.assumptions) {
        println!("note: {a}");
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
) -> i32 {
    let sets = match parse_sets(set) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let o = gpusim::check::CheckOptions {
        config,
        sets,
        policy,
        runs,
        seed,
    };
    match gpusim::check::check(manifest, &o) {
        Ok(report) => {
            println!("check {}", manifest.display());
            for l in &report.lines {
                println!("  {l}");
            }
            match (&report.disagreement, &report.inconclusive) {
                (Some(d), _) => {
                    println!("  verdict             DISAGREE: {d}");
                    1
                }
                (None, Some(why)) => {
                    println!("  verdict             INCONCLUSIVE: {why}");
                    1
                }
                (None, None) => {
                    println!("  verdict             agree");
                    0
                }
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// `gpusim fuzz`: a summary, then the first disagreement with its reproducer (exit 1).
fn cmd_fuzz(seed: u64, cases: u32, keep: Option<PathBuf>) -> i32 {
    use gpusim::check::fuzz::{fuzz, FuzzOptions, POLICIES};
    let o = FuzzOptions {
        keep,
        ..FuzzOptions::default()
    };
    let r = match fuzz(seed, cases, &o) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    println!(
        "fuzz seed {seed}: {} case(s) in {}",
        r.cases,
        r.dir.display()
    );
    println!(
        "  clean {} (uniformity false alarms {}), races {} (detected {}), divergent barriers {} (detected {})",
        r.clean, r.uniformity_false_alarms, r.races, r.races_detected, r.divergent, r.divergent_detected
    );
    let policies: Vec<String> = POLICIES
        .iter()
        .zip(r.per_policy)
        .map(|(p, n)| format!("{p} {n}"))
        .collect();
    println!("  policies: {}", policies.join(", "));
    match r.disagreements.first() {
        None => {
            println!("  verdict             agree");
            0
        }
        Some(d) => {
            println!("  {} disagreement(s); the first:", r.disagreements.len());
            println!("  verdict             DISAGREE: {d}");
            1
        }
    }
}
