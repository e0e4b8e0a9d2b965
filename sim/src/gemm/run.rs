//! Running one GEMM size: the spec's launch built programmatically (no manifest file), the
//! buffers placed in device memory (random values when verifying, zeros otherwise), one
//! launch on the cycle-level machine (`core::run_launch`, as `run::run_manifest_with` does),
//! and the result compared with a reference product computed with ndarray.

use super::sizes::Size;
use super::spec::{Arg, BLayout, Elem, GemmSpec, SizeArg};
use super::GemmError;
use crate::config::Config;
use crate::core::{run_launch, LaunchSpec, Program};
use crate::launch::params::{Param, ParamValue};
use crate::mem::GlobalMemory;
use crate::stats::KernelStats;
use gpusim_isa::{parse_module, FuncId, FuncKind, Space};
use ndarray::Array2;

/// How a size is run.
#[derive(Clone, Debug)]
pub struct GemmOptions {
    /// Verify (random inputs, reference product) when M, N and K are all at most this.
    pub verify_up_to: u64,
    /// Seed of the random inputs.
    pub seed: u64,
    /// Show the simulator's progress line on stderr.
    pub progress: bool,
    /// Skip the tensor units' arithmetic (timing only) for the sizes that are not verified.
    pub skip_tensor_math: bool,
    /// Threads for the SM phase (`core::crew`); the results do not depend on it.
    pub parallel: crate::core::crew::Parallel,
    /// Sampled simulation of the sizes that are not verified (`core::sample`).
    pub sample: Option<crate::core::sample::SampleSpec>,
}

impl Default for GemmOptions {
    fn default() -> Self {
        GemmOptions {
            verify_up_to: 512,
            seed: 1,
            progress: false,
            skip_tensor_math: false,
            parallel: crate::core::crew::Parallel::default(),
            sample: None,
        }
    }
}

/// What checking the output against the reference found.
#[derive(Clone, Debug, PartialEq)]
pub enum Verification {
    /// Not checked: a dimension is above `verify_up_to`, inputs were zeros.
    Skipped,
    /// Every element within tolerance; the largest error relative to max(|reference|, 1).
    Passed { max_error: f64 },
    /// `mismatches` elements out of tolerance; the first as (index, got, expected).
    Failed {
        mismatches: u64,
        max_error: f64,
        first: (usize, f32, f32),
    },
}

/// One size's launch and its statistics.
#[derive(Clone, Debug)]
pub struct SizeRun {
    pub size: Size,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Resident CTAs one SM can hold (`metrics::ctas_per_sm`).
    pub ctas_per_sm: u32,
    pub stats: KernelStats,
    /// Seconds the simulator took for the launch.
    pub wall_seconds: f64,
    pub verification: Verification,
}

/// The relative tolerance of the check: f32 rounding of a different summation order, or the
/// rounding of 16-bit outputs.
pub fn tolerance(spec: &GemmSpec) -> f64 {
    let input = if spec.dtype.a == Elem::F32 && spec.dtype.b == Elem::F32 {
        1e-4
    } else {
        1e-3
    };
    let output = match spec.dtype.c {
        Elem::F32 => 1e-4,
        Elem::F16 => 1e-3,
        Elem::Bf16 => 8e-3,
    };
    f64::max(input, output)
}

/// splitmix64: deterministic inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        crate::rng::splitmix64(&mut self.0)
    }
    /// Uniform in [-1, 1).
    fn uniform(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

fn matrix_bytes(elem: Elem, len: usize, rng: Option<&mut Rng>) -> Vec<u8> {
    match rng {
        None => vec![0; len * elem.size()],
        Some(r) => {
            let mut out = Vec::with_capacity(len * elem.size());
            for _ in 0..len {
                elem.encode(r.uniform(), &mut out);
            }
            out
        }
    }
}

fn to_array(elem: Elem, bytes: &[u8], rows: usize, cols: usize) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |(r, c)| elem.decode(bytes, r * cols + c))
}

/// Run `spec` for one size on `cfg`.
pub fn run_size(
    spec: &GemmSpec,
    cfg: &Config,
    size: Size,
    opts: &GemmOptions,
) -> Result<SizeRun, GemmError> {
    super::sizes::check_size(spec, size).map_err(GemmError::Input)?;
    let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
    let bytes = [
        m * k * spec.dtype.a.size(),
        k * n * spec.dtype.b.size(),
        m * n * spec.dtype.c.size(),
    ];
    let total: usize = bytes.iter().sum();
    if total > crate::launch::MAX_BUFFER_BYTES {
        return Err(GemmError::Input(format!(
            "size {size}: A, B and C take {} MiB, more than the simulator's {} MiB of device memory for buffers",
            total >> 20,
            crate::launch::MAX_BUFFER_BYTES >> 20
        )));
    }
    let verify = size.m.max(size.n).max(size.k) <= opts.verify_up_to;
    let src = std::fs::read_to_string(&spec.ptx).map_err(|e| {
        GemmError::Spec(spec.error("ptx", format!("cannot read {}: {e}", spec.ptx.display())))
    })?;
    let module = parse_module(&spec.ptx.display().to_string(), &src)?;
    let cfg = &cfg.for_module(&module)?;
    let mut prog = Program::prepare(module)?;
    let entry = find_entry(spec, &prog)?;
    let mut global = GlobalMemory::default();
    let gseg = prog.segment_init(Space::Global);
    let gbase = global.alloc("(module .global data)", &gseg);
    prog.place_globals(gbase);
    let consts = prog.segment_init(Space::Const);

    let mut rng = Rng(opts.seed ^ (size.m << 40) ^ (size.n << 20) ^ size.k);
    let a = matrix_bytes(spec.dtype.a, m * k, verify.then_some(&mut rng));
    let b = matrix_bytes(spec.dtype.b, k * n, verify.then_some(&mut rng));
    let c0 = matrix_bytes(
        spec.dtype.c,
        m * n,
        (verify && spec.beta != 0.0).then_some(&mut rng),
    );
    let addrs = [
        global.alloc("a", &a),
        global.alloc("b", &b),
        global.alloc("c", &c0),
    ];
    let params = launch_params(spec, &prog, entry, size, addrs)?;
    let params = crate::launch::params::lay_out(&params, &mut global);
    let grid = spec.grid_for(size.m, size.n).map_err(GemmError::Input)?;
    let launch = LaunchSpec {
        entry,
        grid,
        block: spec.block,
        dynamic_shared: spec.dynamic_shared_bytes,
        params,
        trace: false,
        progress: opts.progress,
        // Verified sizes need the products; the option speeds up the others only.
        skip_tensor_math: opts.skip_tensor_math && !verify,
        cluster: spec.cluster,
        record_async: false,
        parallel: opts.parallel,
        // A verified size needs every CTA's output.
        sample: opts.sample.filter(|_| !verify),
        lines: false,
    };
    limits(spec, cfg, &prog, entry, size, grid)?;
    let ctas_per_sm = super::metrics::ctas_per_sm(cfg, &prog, entry, &launch);
    let mut l2 = crate::mem::engine::MemoryEngine::new(cfg);
    let started = std::time::Instant::now();
    let result =
        run_launch(&prog, cfg, &mut global, &mut l2, &consts, &launch).map_err(GemmError::Fault)?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let verification = if verify {
        let got = global.slice(addrs[2], bytes[2] as u64);
        check(spec, size, &a, &b, &c0, got)
    } else {
        Verification::Skipped
    };
    Ok(SizeRun {
        size,
        grid,
        block: spec.block,
        ctas_per_sm,
        stats: result.stats,
        wall_seconds,
        verification,
    })
}

/// Check the launch of every size before any is simulated: the kernel's entry, its grid,
/// block, cluster and shared memory against CUDA's limits and the config's SM (exit 2 with the
/// spec's key), and the arguments against their parameter types.
pub fn check_launches(spec: &GemmSpec, cfg: &Config, sizes: &[Size]) -> Result<(), GemmError> {
    let src = std::fs::read_to_string(&spec.ptx).map_err(|e| {
        GemmError::Spec(spec.error("ptx", format!("cannot read {}: {e}", spec.ptx.display())))
    })?;
    let prog = Program::prepare(parse_module(&spec.ptx.display().to_string(), &src)?)?;
    let entry = find_entry(spec, &prog)?;
    for &size in sizes {
        super::sizes::check_size(spec, size).map_err(GemmError::Input)?;
        let grid = spec.grid_for(size.m, size.n).map_err(GemmError::Input)?;
        limits(spec, cfg, &prog, entry, size, grid)?;
        launch_params(spec, &prog, entry, size, [0; 3])?;
    }
    Ok(())
}

/// `core::limits` for one size's launch, the error at the spec's key.
fn limits(
    spec: &GemmSpec,
    cfg: &Config,
    prog: &Program,
    entry: FuncId,
    size: Size,
    grid: [u32; 3],
) -> Result<(), GemmError> {
    let shape = crate::core::limits::LaunchShape {
        grid,
        block: spec.block,
        cluster: spec.cluster,
        non_portable_cluster: spec.non_portable_cluster,
        dynamic_shared: spec.dynamic_shared_bytes,
    };
    crate::core::limits::check_launch(prog, cfg, entry, &shape).map_err(|e| {
        let key = match e.key {
            "shared_bytes" => "dynamic_shared_bytes",
            k => k,
        };
        GemmError::Spec(spec.error(key, format!("size {size}: {}", e.message)))
    })
}

pub fn find_entry(spec: &GemmSpec, prog: &Program) -> Result<FuncId, GemmError> {
    prog.module
        .find_function(&spec.entry)
        .filter(|f| prog.module.function(*f).kind == FuncKind::Entry)
        .ok_or_else(|| {
            let names: Vec<&str> = prog.module.entries().map(|f| f.name.as_str()).collect();
            GemmError::Spec(spec.error(
                "entry",
                format!(
                    "no .entry `{}` in {}; entries: {}",
                    spec.entry,
                    spec.ptx.display(),
                    names.join(", ")
                ),
            ))
        })
}

/// What each parameter receives: buffers pass their address (named `a`, `b`, `c`), sizes and
/// numbers a scalar of the parameter's PTX type, tensor maps their map.
pub fn launch_params(
    spec: &GemmSpec,
    prog: &Program,
    entry: FuncId,
    size: Size,
    addrs: [u64; 3],
) -> Result<Vec<Param>, GemmError> {
    let f = prog.module.function(entry);
    if spec.args.len() != f.params.len() {
        return Err(GemmError::Spec(spec.error(
            "args",
            format!(
                "`{}` takes {} parameters, the spec gives {}",
                f.name,
                f.params.len(),
                spec.args.len()
            ),
        )));
    }
    let mut out = Vec::with_capacity(spec.args.len());
    for (i, (p, a)) in f.params.iter().zip(&spec.args).enumerate() {
        let offset = prog.module.symbol(p.symbol).offset as usize;
        let width = p.size() as usize;
        let number = |x: f64, exact: Option<i128>| -> Result<ParamValue, GemmError> {
            crate::launch::scalar::param_bits(p.ty, (x, exact))
                .map(ParamValue::Bits)
                .map_err(|e| {
                    let pname = &prog.module.symbol(p.symbol).name;
                    GemmError::Spec(spec.error(
                        &format!("args[{i}]"),
                        format!("size {size}: parameter `{pname}`: {e}"),
                    ))
                })
        };
        let value = match *a {
            Arg::A | Arg::B | Arg::C => {
                if width != 8 {
                    return Err(GemmError::Spec(spec.error(
                        &format!("args[{i}]"),
                        format!("a buffer address needs a 64-bit parameter, `{}` parameter {i} has {width} bytes", f.name),
                    )));
                }
                let m = matrix_index(*a);
                ParamValue::Pointer {
                    buffer: MATRIX_NAMES[m].to_string(),
                    addr: addrs[m],
                }
            }
            Arg::Size(s) => {
                let v = match s {
                    SizeArg::M => size.m,
                    SizeArg::N | SizeArg::Ldb | SizeArg::Ldc => size.n,
                    SizeArg::K | SizeArg::Lda => size.k,
                    SizeArg::SplitK => spec.split_k as u64,
                };
                number(v as f64, Some(v as i128))?
            }
            Arg::TensorMap {
                matrix,
                boxd,
                swizzle,
            } => {
                let map = matrix_map(spec, size, addrs, matrix, boxd, swizzle).map_err(|e| {
                    GemmError::Spec(spec.error(&format!("args[{i}].tensor_map"), e))
                })?;
                if width < map.encode().len() {
                    return Err(GemmError::Spec(spec.error(
                        &format!("args[{i}]"),
                        format!("a tensor map needs a 128-byte .param, `{}` parameter {i} has {width} bytes", f.name),
                    )));
                }
                ParamValue::TensorMap {
                    buffer: MATRIX_NAMES[matrix as usize].to_string(),
                    map,
                    by_pointer: false,
                }
            }
            Arg::Alpha => number(spec.alpha, None)?,
            Arg::Beta => number(spec.beta, None)?,
            Arg::Number(x, exact) => number(x, exact)?,
        };
        out.push(Param {
            offset,
            size: width,
            value,
        });
    }
    Ok(out)
}

/// The names the matrices' buffers have in an export (`gpusim export`) and in messages.
pub const MATRIX_NAMES: [&str; 3] = ["a", "b", "c"];

fn matrix_index(a: Arg) -> usize {
    match a {
        Arg::A => 0,
        Arg::B => 1,
        _ => 2,
    }
}

/// The tensor map of matrix `matrix` (0 A, 1 B, 2 C): its rows and columns as the spec
/// stores them, innermost dimension first.
fn matrix_map(
    spec: &GemmSpec,
    size: Size,
    addrs: [u64; 3],
    matrix: u8,
    boxd: [u32; 2],
    swizzle: gpusim_isa::semantics::Swizzle,
) -> Result<gpusim_isa::semantics::tensor_map::TensorMap, String> {
    use gpusim_isa::semantics::tensor_map::{TensorMap, TmaType, TMA_MAX_RANK};
    let (elem, cols, rows) = match matrix {
        0 => (spec.dtype.a, size.k, size.m),
        1 if spec.b_layout == BLayout::Nk => (spec.dtype.b, size.k, size.n),
        1 => (spec.dtype.b, size.n, size.k),
        _ => (spec.dtype.c, size.n, size.m),
    };
    let dtype = match elem {
        Elem::F32 => TmaType::F32,
        Elem::F16 => TmaType::F16,
        Elem::Bf16 => TmaType::Bf16,
    };
    let mut map = TensorMap {
        global: addrs[matrix as usize],
        dtype,
        rank: 2,
        dims: [1; TMA_MAX_RANK],
        strides: [0; TMA_MAX_RANK - 1],
        boxd: [1; TMA_MAX_RANK],
        estrides: [1; TMA_MAX_RANK],
        swizzle,
        oob_nan: false,
    };
    map.dims[0] = cols;
    map.dims[1] = rows;
    map.strides[0] = cols * elem.size() as u64;
    map.boxd[..2].copy_from_slice(&boxd);
    map.validate()?;
    Ok(map)
}

/// Compare C with alpha·A·B + beta·C₀ (ndarray's f32 product of the exact input values).
/// Tensor cores read f32 operands as tf32 (the low 13 mantissa bits ignored, PTX ISA
/// `.tf32`): a reference must multiply what they multiply.
pub fn rounds_operands_to_tf32(spec: &GemmSpec) -> bool {
    spec.math.tensor() && spec.dtype.a == Elem::F32 && spec.dtype.b == Elem::F32
}

fn check(spec: &GemmSpec, size: Size, a: &[u8], b: &[u8], c0: &[u8], got: &[u8]) -> Verification {
    let (m, n, k) = (size.m as usize, size.n as usize, size.k as usize);
    let mut av = to_array(spec.dtype.a, a, m, k);
    let mut bv = match spec.b_layout {
        BLayout::Kn => to_array(spec.dtype.b, b, k, n),
        BLayout::Nk => to_array(spec.dtype.b, b, n, k).reversed_axes(),
    };
    if rounds_operands_to_tf32(spec) {
        let tf32 = |x: &mut f32| *x = f32::from_bits(x.to_bits() & !0x1FFF);
        av.map_inplace(tf32);
        bv.map_inplace(tf32);
    }
    let mut want = av.dot(&bv) * spec.alpha as f32;
    if spec.beta != 0.0 {
        want = want + to_array(spec.dtype.c, c0, m, n) * spec.beta as f32;
    }
    let tol = tolerance(spec);
    let mut mismatches = 0u64;
    let mut max_error = 0f64;
    let mut first = None;
    for (i, w) in want.iter().enumerate() {
        let g = spec.dtype.c.decode(got, i);
        let err = ((g - w).abs() as f64) / (w.abs() as f64).max(1.0);
        let err = if err.is_nan() { f64::INFINITY } else { err };
        max_error = max_error.max(err);
        if err > tol {
            mismatches += 1;
            first.get_or_insert((i, g, *w));
        }
    }
    match first {
        None => Verification::Passed { max_error },
        Some(first) => Verification::Failed {
            mismatches,
            max_error,
            first,
        },
    }
}
