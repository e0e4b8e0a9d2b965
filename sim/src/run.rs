//! Running a manifest end to end: config, program, buffers, launches in order, checks.

use crate::config::{Config, ConfigError, Origin, Override};
use crate::core::gpu::run_launch_traced;
use crate::core::{Fault, LaunchSpec, Program};
use crate::launch::params::{Param, ParamValue};
use crate::launch::{CheckFailure, LoadedManifest, ManifestError};
use crate::mem::GlobalMemory;
use crate::stats::trace::TraceSink;
use crate::stats::{RunStats, WarpEvent};
use gpusim_isa::{parse_module, FuncKind, PtxError, Type};
use serde_norway::Value;
use std::path::Path;

/// Why a run could not produce results (exit code 2 for input errors, 3 for faults).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Manifest(#[from] ManifestError),
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Ptx(#[from] PtxError),
    /// The config's GPU cannot run the module (generation, units).
    #[error("{0}")]
    Target(#[from] crate::config::TargetError),
    #[error("{0}")]
    Fault(Fault),
}

impl RunError {
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Fault(_) => 3,
            _ => 2,
        }
    }
}

pub struct RunOutput {
    pub stats: RunStats,
    /// (name, dtype, shape, bytes) of every buffer after the last launch.
    pub buffers: Vec<(String, crate::launch::DType, Vec<usize>, Vec<u8>)>,
    pub failures: Vec<CheckFailure>,
    /// The fault, when the manifest expected one and it happened.
    pub expected_fault: Option<Fault>,
    /// Warp events, from `run_manifest_with` (`run_manifest_traced` hands them to its sink).
    pub events: Vec<crate::stats::WarpEvent>,
    /// Per completed launch, the asynchronous-synchronisation checker's events (empty
    /// unless `RunOptions::record_async`).
    pub async_events: Vec<Vec<gpusim_models::async_sync::AsyncEvent>>,
    /// CTAs a sampled run skipped (`RunOptions::sample`): their outputs were never computed,
    /// so the checks were not run when this is not zero.
    pub skipped_ctas: u64,
}

/// Load the config: the file (or the embedded tiny GPU), then the manifest's `set`, then the
/// command line's `--set`.
pub fn load_config(
    config: Option<&Path>,
    manifest_set: &[(String, Value)],
    cli_set: &[(String, String)],
) -> Result<Config, RunError> {
    load_config_for(config, None, manifest_set, cli_set)
}

/// `load_config` for the manifest at `manifest`: an error its `set:` caused names the file.
pub fn load_config_for(
    config: Option<&Path>,
    manifest: Option<&Path>,
    manifest_set: &[(String, Value)],
    cli_set: &[(String, String)],
) -> Result<Config, RunError> {
    let (name, text) = match config {
        Some(p) => (
            p.display().to_string(),
            std::fs::read_to_string(p).map_err(|e| ConfigError {
                source_name: p.display().to_string(),
                path: String::new(),
                message: format!("cannot read the config: {e}"),
            })?,
        ),
        None => (
            "configs/tiny.yaml (embedded)".to_string(),
            crate::config::TINY_YAML.to_string(),
        ),
    };
    let manifest_origin =
        Origin::Manifest(manifest.map_or("the manifest".to_string(), |p| p.display().to_string()));
    let mut sets: Vec<Override> = manifest_set
        .iter()
        .map(|(k, v)| Override {
            key: k.clone(),
            value: serde_norway::to_string(v)
                .unwrap_or_default()
                .trim()
                .to_string(),
            origin: manifest_origin.clone(),
        })
        .collect();
    sets.extend(cli_set.iter().map(|(k, v)| Override {
        key: k.clone(),
        value: v.clone(),
        origin: Origin::CommandLine,
    }));
    Ok(Config::from_yaml_overridden(&name, &text, &sets)?)
}

/// Options beyond the manifest and config.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record a warp event per issued instruction (`RunOutput::events`).
    pub trace_warps: bool,
    /// Show a progress line on stderr during long launches.
    pub progress: bool,
    /// Timing-only run: skip the tensor arithmetic of `mma.sync` and `wgmma` (their
    /// accumulators keep their values; timing and stats are identical). Checks on tensor
    /// results then fail.
    pub skip_tensor_math: bool,
    /// Record the events of the asynchronous-synchronisation checker
    /// (`RunOutput::async_events`; `gpusim check`).
    pub record_async: bool,
    /// Threads for the SM phase (`core::crew`; one by default); the results do not depend on
    /// it.
    pub parallel: crate::core::crew::Parallel,
    /// Sampled simulation of long launches (`core::sample`); checks are not run on a run
    /// that skipped CTAs.
    pub sample: Option<crate::core::sample::SampleSpec>,
    /// Count issues and stalls per PTX line (`KernelStats::source`, `gpusim annotate`).
    pub lines: bool,
}

/// Run a manifest with default options.
pub fn run_manifest(
    manifest_path: &Path,
    config: Option<&Path>,
    cli_set: &[(String, String)],
) -> Result<RunOutput, RunError> {
    run_manifest_with(manifest_path, config, cli_set, &RunOptions::default())
}

/// Run a manifest; an unexpected fault is `RunError::Fault`. Warp events
/// (`RunOptions::trace_warps`) are kept in `RunOutput::events`.
pub fn run_manifest_with(
    manifest_path: &Path,
    config: Option<&Path>,
    cli_set: &[(String, String)],
    opts: &RunOptions,
) -> Result<RunOutput, RunError> {
    let mut events = Vec::new();
    let (mut out, fault) = run_manifest_traced(manifest_path, config, cli_set, opts, &mut events)?;
    match fault {
        Some(f) => Err(RunError::Fault(f)),
        None => {
            out.events = events;
            Ok(out)
        }
    }
}

/// The warp events of launch `launch`, numbered, on their way to `inner`.
struct Numbered<'a> {
    launch: u32,
    inner: &'a mut dyn TraceSink,
}

impl TraceSink for Numbered<'_> {
    fn event(&mut self, e: WarpEvent) {
        self.inner.event(WarpEvent {
            launch: self.launch,
            ..e
        });
    }

    fn timeline(&mut self) -> Option<&mut dyn crate::timeline::TimelineSink> {
        self.inner.timeline()
    }
}

/// Run a manifest, handing warp events (`RunOptions::trace_warps`) to `trace` as they are
/// produced. A fault the manifest does not expect stops the run but is not an error here: it
/// comes back next to everything produced until then — the stats of every cycle that ran
/// (the faulting launch's included), the buffers as they are at the fault — so that every
/// requested output can still be written (the exit code is 3 all the same). Its checks are
/// not run.
pub fn run_manifest_traced(
    manifest_path: &Path,
    config: Option<&Path>,
    cli_set: &[(String, String)],
    opts: &RunOptions,
    trace: &mut dyn TraceSink,
) -> Result<(RunOutput, Option<Fault>), RunError> {
    let lm = LoadedManifest::load(manifest_path)?;
    let m = &lm.manifest;
    let set: Vec<(String, Value)> = m.set.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let unbound = load_config_for(config, Some(manifest_path), &set, cli_set)?;
    let kernel_path = lm.resolve(&m.kernel);
    let src = std::fs::read_to_string(&kernel_path).map_err(|e| ManifestError {
        file: manifest_path.display().to_string(),
        path: "kernel".into(),
        message: format!("cannot read {}: {e}", kernel_path.display()),
    })?;
    let module = parse_module(&kernel_path.display().to_string(), &src)?;
    let cfg = unbound.for_module(&module)?;
    let mut prog = Program::prepare(module)?;
    crate::core::gpu::check_static_shared(&prog, &cfg)?;
    let mut global = GlobalMemory::default();
    let gseg = prog.segment_init(gpusim_isa::Space::Global);
    let gbase = global.alloc("(module .global data)", &gseg);
    prog.place_globals(gbase);
    let consts = prog.segment_init(gpusim_isa::Space::Const);
    let mut addrs = std::collections::BTreeMap::new();
    for (name, bytes) in lm.initial_buffers()? {
        addrs.insert(name.clone(), global.alloc(&name, &bytes));
    }
    // The checks' expected values are read (and checked against their buffers) and every
    // launch is checked (entry, arguments, limits) before any is simulated, so that a mistake
    // at the end does not wait for the simulation to show.
    let mut expected = Vec::with_capacity(m.checks.len());
    for (i, c) in m.checks.iter().enumerate() {
        let b = &m.buffers[&c.buffer];
        let bytes = crate::launch::expected_bytes(&lm, c, b.dtype, &b.shape).map_err(|e| {
            ManifestError {
                file: manifest_path.display().to_string(),
                path: format!(
                    "checks[{i}].{}",
                    if c.npy.is_some() { "npy" } else { "values" }
                ),
                message: e,
            }
        })?;
        expected.push(bytes);
    }
    let mut prepared = Vec::with_capacity(m.launches.len());
    for (i, l) in m.launches.iter().enumerate() {
        let merr = |p: &str, msg: String| ManifestError {
            file: manifest_path.display().to_string(),
            path: format!("launches[{i}].{p}"),
            message: msg,
        };
        let entry = prog
            .module
            .find_function(&l.entry)
            .filter(|f| prog.module.function(*f).kind == FuncKind::Entry)
            .ok_or_else(|| {
                let names: Vec<&str> = prog.module.entries().map(|f| f.name.as_str()).collect();
                merr(
                    "entry",
                    format!(
                        "no .entry `{}` in {}; entries: {}",
                        l.entry,
                        m.kernel,
                        names.join(", ")
                    ),
                )
            })?;
        crate::core::limits::check_launch(&prog, &cfg, entry, &l.shape())
            .map_err(|e| merr(e.key, e.message))?;
        let params = resolve_params(&prog, entry, &l.args, &addrs, &m.buffers)
            .map_err(|(p, e)| merr(&p, e))?;
        let params = crate::launch::params::lay_out(&params, &mut global);
        prepared.push((entry, params));
    }
    let started = std::time::Instant::now();
    let mut kernels = Vec::new();
    let mut fault = None;
    // One L2 for the whole run: it persists across launches, as on hardware.
    let mut l2 = crate::mem::engine::MemoryEngine::new(&cfg);
    let mut async_events = Vec::new();
    for (i, (l, (entry, params))) in m.launches.iter().zip(prepared).enumerate() {
        let spec = LaunchSpec {
            entry,
            grid: l.grid.0,
            block: l.block.0,
            dynamic_shared: l.shared_bytes,
            params,
            trace: opts.trace_warps,
            progress: opts.progress,
            skip_tensor_math: opts.skip_tensor_math,
            cluster: l.cluster.map(|c| c.0),
            record_async: opts.record_async,
            parallel: opts.parallel,
            sample: opts.sample,
            lines: opts.lines,
        };
        let mut numbered = Numbered {
            launch: i as u32,
            inner: &mut *trace,
        };
        let o = run_launch_traced(
            &prog,
            &cfg,
            &mut global,
            &mut l2,
            &consts,
            &spec,
            &mut numbered,
        );
        kernels.push(o.stats);
        if let Some(f) = o.fault {
            fault = Some(f);
            break;
        }
        async_events.push(o.async_events);
    }
    let wall = started.elapsed().as_secs_f64();
    let unexpected = match (&fault, m.expect_fault) {
        (Some(f), Some(exp)) if f.kind.name() == exp.name() => None,
        (Some(_), _) => fault.take(),
        _ => None,
    };
    let mut buffers = Vec::new();
    for (name, spec) in &m.buffers {
        let a = addrs[name];
        let bytes = global
            .slice(a, (spec.len() * spec.dtype.size()) as u64)
            .to_vec();
        buffers.push((name.clone(), spec.dtype, spec.shape.clone(), bytes));
    }
    let skipped_ctas = kernels
        .iter()
        .filter_map(|k| k.sample.as_ref())
        .map(|s| s.skipped_ctas)
        .sum();
    let mut stats = RunStats::from_kernels(kernels, cfg.sm.warp_size, wall);
    stats.machine = machine(&cfg, &prog.module.target);
    if unexpected.is_some() || skipped_ctas > 0 {
        let out = RunOutput {
            stats,
            buffers,
            failures: Vec::new(),
            expected_fault: None,
            events: Vec::new(),
            async_events,
            skipped_ctas,
        };
        return Ok((out, unexpected));
    }
    let mut failures = Vec::new();
    if let (None, Some(exp)) = (&fault, m.expect_fault) {
        failures.push(CheckFailure {
            buffer: "(expect_fault)".into(),
            mismatches: 1,
            first: vec![(
                0,
                "kernel completed".into(),
                format!("{} fault", exp.name()),
            )],
        });
    }
    for (c, exp) in m.checks.iter().zip(&expected) {
        let (_, dtype, _, bytes) = buffers.iter().find(|b| b.0 == c.buffer).unwrap();
        failures.extend(crate::launch::compare(c, *dtype, exp, bytes));
    }
    let out = RunOutput {
        stats,
        buffers,
        failures,
        expected_fault: fault,
        events: Vec::new(),
        async_events,
        skipped_ctas: 0,
    };
    Ok((out, None))
}

/// What ran the kernels: the config bound to the module (`Config::for_module`).
fn machine(cfg: &Config, target: &str) -> crate::stats::Machine {
    crate::stats::Machine {
        config: cfg.name.clone(),
        arch: cfg.sm.arch.to_string(),
        target: target.to_string(),
        reconvergence: cfg.sm.reconvergence.name().to_string(),
        reconvergence_setting: if cfg.reconvergence_is_auto() {
            "auto".to_string()
        } else {
            cfg.sm.reconvergence.name().to_string()
        },
    }
}

/// What each kernel parameter receives: a buffer name passes its address, a number a scalar of
/// the parameter's PTX type (it must fit), a `{tensor_map: ...}` a tensor map. An error is (the
/// key under the launch, message).
pub fn resolve_params(
    prog: &Program,
    entry: gpusim_isa::FuncId,
    args: &[Value],
    addrs: &std::collections::BTreeMap<String, u64>,
    buffers: &std::collections::BTreeMap<String, crate::launch::BufferSpec>,
) -> Result<Vec<Param>, (String, String)> {
    let f = prog.module.function(entry);
    if args.len() != f.params.len() {
        return Err((
            "args".into(),
            format!(
                "`{}` takes {} parameters, the manifest gives {}",
                f.name,
                f.params.len(),
                args.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(args.len());
    for (i, (p, a)) in f.params.iter().zip(args).enumerate() {
        let at = |m: String| (format!("args[{i}]"), m);
        let pname = &prog.module.symbol(p.symbol).name;
        let offset = prog.module.symbol(p.symbol).offset as usize;
        let size = p.size() as usize;
        let value = match a {
            Value::Mapping(m) if m.contains_key("tensor_map") => {
                let path = format!("args[{i}].tensor_map");
                if m.len() != 1 {
                    return Err(at(
                        "a tensor map argument is `{tensor_map: {...}}` alone".into()
                    ));
                }
                let map = crate::launch::tensor_map::tensor_map_arg(
                    &m["tensor_map"],
                    &path,
                    addrs,
                    buffers,
                )
                .map_err(|e| tensor_map_error(&path, e))?;
                // `const __grid_constant__ CUtensorMap`: the map itself is the parameter.
                let by_pointer = size < map.encode().len();
                if by_pointer && size != 8 {
                    return Err((path, format!("parameter `{pname}` must be a 128-byte .b8 array or a .u64 pointer to hold a tensor map ({size} bytes)")));
                }
                let buffer = addrs
                    .iter()
                    .find(|(_, &a)| a == map.global)
                    .map(|(n, _)| n.clone())
                    .unwrap_or_default();
                ParamValue::TensorMap {
                    buffer,
                    map,
                    by_pointer,
                }
            }
            Value::String(name) if addrs.contains_key(name) => {
                if p.count != 1 || !matches!(p.ty, Type::U64 | Type::S64 | Type::B64) {
                    return Err(at(format!(
                        "buffer `{name}` passes its 64-bit address, but parameter `{pname}` is {}; a pointer parameter is .u64, .s64 or .b64",
                        param_type(p)
                    )));
                }
                ParamValue::Pointer {
                    buffer: name.clone(),
                    addr: addrs[name],
                }
            }
            v => {
                let Some(n) = crate::launch::number(v) else {
                    let names: Vec<&str> = addrs.keys().map(String::as_str).collect();
                    let what = match v {
                        Value::String(s) => format!("no buffer `{s}`"),
                        _ => format!("`{}` is not a buffer name or a number", show_value(v)),
                    };
                    return Err(at(format!("{what}; buffers: {}", names.join(", "))));
                };
                if p.count != 1 {
                    return Err(at(format!(
                        "parameter `{pname}` is {}, which takes no number (a buffer or tensor map fills an array parameter)",
                        param_type(p)
                    )));
                }
                ParamValue::Bits(
                    crate::launch::scalar::param_bits(p.ty, n)
                        .map_err(|e| at(format!("parameter `{pname}`: {e}")))?,
                )
            }
        };
        out.push(Param {
            offset,
            size,
            value,
        });
    }
    Ok(out)
}

/// `.u32`, or `.b8[128]` for an array parameter.
fn param_type(p: &gpusim_isa::Param) -> String {
    if p.count == 1 {
        format!(".{}", p.ty.name())
    } else {
        format!(".{}[{}]", p.ty.name(), p.count)
    }
}

/// A YAML value on one line, for messages.
fn show_value(v: &Value) -> String {
    serde_norway::to_string(v)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// A tensor-map error already starts with its key path (`args[0].tensor_map.box: ...`):
/// split it off so that the path is said once.
fn tensor_map_error(path: &str, e: String) -> (String, String) {
    match e.split_once(": ") {
        Some((p, m)) if p.starts_with(path) => (p.to_string(), m.to_string()),
        _ => (path.to_string(), e),
    }
}
