//! Running the manifest's launches on the reference semantics (`models::lockstep`): the
//! buffers are allocated in the models' own memory, the arguments re-packed against its
//! addresses, and each launch starts from the previous one's final memory.

use super::CheckReport;
use crate::launch::{LoadedManifest, ManifestError};
use crate::run::RunError;
use gpusim_isa::{Module, Type};
use gpusim_models::lockstep::{self, Verdict};
use gpusim_models::ptx_exec::{GlobalMemory, Launch};
use gpusim_models::token_stack;
use serde_norway::Value;

/// Thread steps per CTA the semantics may take, and instructions per warp for the token-stack
/// model, before a check gives up on them (a kernel that loops until the watchdog stops it
/// would otherwise keep the models busy for minutes).
const MAX_THREAD_STEPS: u64 = 4_000_000;
const MAX_WARP_STEPS: u64 = 1_000_000;

/// What one semantics made of the whole manifest.
#[derive(Clone, Debug)]
pub enum RefResult {
    /// Every launch ran cleanly: the buffers after the last one, by name.
    Memory(Vec<(String, Vec<u8>)>),
    /// The first launch that did not: its verdict (race, divergence, unsupported, ...).
    Verdict { launch: usize, verdict: Verdict },
}

/// The lock-step and the interleaving semantics' results.
pub struct References {
    pub lockstep: RefResult,
    pub interleaving: RefResult,
}

pub fn run_references(
    module: &Module,
    lm: &LoadedManifest,
    report: &mut CheckReport,
) -> Result<References, RunError> {
    let lopts = lockstep::LockstepOptions {
        max_steps: MAX_THREAD_STEPS,
    };
    let iopts = lockstep::InterleavingOptions {
        max_steps: MAX_THREAD_STEPS,
        ..Default::default()
    };
    let lockstep = run_semantics(module, lm, |m, e, l, mem| {
        lockstep::run_lockstep(m, e, l, mem, &lopts)
    })?;
    let interleaving = run_semantics(module, lm, |m, e, l, mem| {
        lockstep::run_interleaving(m, e, l, mem, &iopts)
    })?;
    for (name, r) in [("lock-step", &lockstep), ("interleaving", &interleaving)] {
        report.note(match r {
            RefResult::Memory(b) => format!(
                "{name} semantics: race-free and divergence-free, {} buffers",
                b.len()
            ),
            RefResult::Verdict { launch, verdict } => {
                format!("{name} semantics: launch {launch}: {verdict}")
            }
        });
    }
    Ok(References {
        lockstep,
        interleaving,
    })
}

type Semantics<'a> =
    dyn Fn(&Module, &str, &Launch, &GlobalMemory) -> Result<GlobalMemory, Verdict> + 'a;

/// The token-stack reference: per launch, per warp (CTA-major), the state after each
/// instruction; or where it stopped and why.
pub type TokenTraces = Vec<Vec<Vec<token_stack::Step>>>;

pub fn token_stack_traces(
    module: &Module,
    lm: &LoadedManifest,
    warp_size: u32,
) -> Result<Result<TokenTraces, String>, RunError> {
    let (mut mem, _) = initial_memory(module, lm)?;
    let opts = token_stack::Options {
        warp_size,
        max_warp_steps: MAX_WARP_STEPS,
        ..Default::default()
    };
    let mut traces = Vec::new();
    for (i, l) in lm.manifest.launches.iter().enumerate() {
        let launch = launch_for(module, lm, i, &mem)?;
        match token_stack::run(module, &l.entry, &launch, mem.clone(), &opts) {
            Ok(run) => {
                traces.push(run.traces);
                mem = run.memory;
            }
            Err(e) => return Ok(Err(format!("launch {i}: {e}"))),
        }
    }
    Ok(Ok(traces))
}

fn run_semantics(
    module: &Module,
    lm: &LoadedManifest,
    run: impl Fn(&Module, &str, &Launch, &GlobalMemory) -> Result<GlobalMemory, Verdict>,
) -> Result<RefResult, RunError> {
    let run: &Semantics = &run;
    let (mut mem, buffers) = initial_memory(module, lm)?;
    for (i, l) in lm.manifest.launches.iter().enumerate() {
        let launch = launch_for(module, lm, i, &mem)?;
        match run(module, &l.entry, &launch, &mem) {
            Ok(next) => mem = next,
            Err(verdict) => return Ok(RefResult::Verdict { launch: i, verdict }),
        }
    }
    Ok(RefResult::Memory(
        buffers
            .iter()
            .map(|(n, _)| (n.clone(), mem.buffer(n).unwrap_or_default().to_vec()))
            .collect(),
    ))
}

/// The models' memory before the first launch: the module's globals and the manifest's
/// buffers (also returned, by name, in manifest order).
type Buffers = Vec<(String, Vec<u8>)>;

fn initial_memory(
    module: &Module,
    lm: &LoadedManifest,
) -> Result<(GlobalMemory, Buffers), RunError> {
    let buffers = lm.initial_buffers()?;
    let mut mem = GlobalMemory::new();
    mem.load_module_globals(module);
    for (name, bytes) in &buffers {
        mem.alloc(name, bytes.clone());
    }
    Ok((mem, buffers))
}

/// Launch `i` of the manifest in the models' terms.
fn launch_for(
    module: &Module,
    lm: &LoadedManifest,
    i: usize,
    mem: &GlobalMemory,
) -> Result<Launch, RunError> {
    let l = &lm.manifest.launches[i];
    Ok(Launch {
        grid: l.grid.0,
        block: l.block.0,
        dynamic_shared: l.shared_bytes,
        args: args_for(module, lm, i, mem)?,
    })
}

/// Launch `i`'s arguments against the models' addresses: a buffer name is its base, a number
/// its bits in the parameter's type (as the simulator packs them).
fn args_for(
    module: &Module,
    lm: &LoadedManifest,
    i: usize,
    mem: &GlobalMemory,
) -> Result<Vec<u64>, RunError> {
    let l = &lm.manifest.launches[i];
    let err = |msg: String| ManifestError {
        file: lm.path.display().to_string(),
        path: format!("launches[{i}].args"),
        message: msg,
    };
    let f = module
        .find_function(&l.entry)
        .map(|f| module.function(f))
        .ok_or_else(|| err(format!("no function `{}`", l.entry)))?;
    let mut out = Vec::new();
    for (k, a) in l.args.iter().enumerate() {
        let ty = f.params.get(k).map_or(Type::U64, |p| p.ty);
        out.push(match a {
            Value::String(name) => mem
                .base(name)
                .ok_or_else(|| err(format!("args[{k}]: no buffer `{name}`")))?,
            v => {
                let (x, exact) = crate::launch::number(v)
                    .ok_or_else(|| err(format!("args[{k}]: expected a buffer name or a number")))?;
                match ty {
                    Type::F32 => (x as f32).to_bits() as u64,
                    Type::F64 => x.to_bits(),
                    _ => exact.unwrap_or(x as i128) as u64,
                }
            }
        });
    }
    Ok(out)
}
