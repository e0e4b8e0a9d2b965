//! `gpusim export`: what running manifests and GEMM sizes on a real GPU needs, in a directory
//! that `tools/correlate/measure.py` reads on the GPU machine — the PTX, each buffer's initial
//! bytes, every launch with its parameters (buffer addresses and tensor maps named, for the
//! driver to rebuild), and the checks. The format is `plan.json`, documented in
//! docs/correlation.md; the workload names it carries are what `gpusim correlate` resolves.

use crate::core::Program;
use crate::gemm::run::{launch_params, MATRIX_NAMES};
use crate::gemm::sizes::Size;
use crate::gemm::spec::{BLayout, GemmSpec};
use crate::launch::params::{Param, ParamValue};
use crate::launch::LoadedManifest;
use crate::mem::GlobalMemory;
use gpusim_isa::semantics::tensor_map::TensorMap;
use gpusim_isa::semantics::Swizzle;
use gpusim_isa::{parse_module, FuncKind};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The plan format's name and version (`plan.json`'s `format`).
pub const FORMAT: &str = "gpusim-export/1";

/// A GEMM workload's name: `gemm:SPEC:MxNxK` (`gpusim correlate` parses it back).
pub fn gemm_workload(spec: &Path, size: Size) -> String {
    format!("gemm:{}:{}x{}x{}", spec.display(), size.m, size.n, size.k)
}

/// An export under way: the directory and the workloads written so far.
pub struct Export {
    dir: PathBuf,
    workloads: Vec<Value>,
}

impl Export {
    pub fn new(dir: &Path) -> Export {
        Export {
            dir: dir.to_path_buf(),
            workloads: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.workloads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.workloads.is_empty()
    }

    /// Write `plan.json`.
    pub fn finish(self) -> Result<PathBuf, String> {
        let plan = json!({ "format": FORMAT, "workloads": self.workloads });
        let path = self.dir.join("plan.json");
        let text = serde_json::to_string_pretty(&plan).expect("plans serialise");
        std::fs::write(&path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// The next workload's folder (`w<index>`), created; its path relative to the export.
    fn folder(&self) -> Result<(PathBuf, String), String> {
        let rel = format!("w{}", self.workloads.len());
        let abs = self.dir.join(&rel);
        std::fs::create_dir_all(&abs)
            .map_err(|e| format!("cannot create {}: {e}", abs.display()))?;
        Ok((abs, rel))
    }

    /// Export a manifest under the name `workload` (the path as the user gave it). A manifest
    /// that no GPU can run is not exported: `Ok(Some(why))`. That is one that expects a fault
    /// (a GPU would not run it to completion) or whose PTX uses the formal model's token
    /// instructions (`ssy`, `preBrk`, ...), which are not PTX, or that sets a warp size
    /// other than the GPU's 32 lanes (`set: {sm.warp_size: 4}`: a GPU would run its votes,
    /// shuffles and branches on 32-lane warps, so its results need not be the trace's).
    pub fn manifest(&mut self, path: &Path) -> Result<Option<String>, String> {
        let lm = LoadedManifest::load(path).map_err(|e| e.to_string())?;
        let m = &lm.manifest;
        if m.expect_fault.is_some() {
            return Ok(Some(
                "expects a fault; a GPU would not run it to completion".into(),
            ));
        }
        if let Some(why) = other_warp_size(&m.set) {
            return Ok(Some(why));
        }
        let kernel = lm.resolve(&m.kernel);
        let src = std::fs::read_to_string(&kernel).map_err(|e| {
            format!(
                "{}: kernel: cannot read {}: {e}",
                path.display(),
                kernel.display()
            )
        })?;
        let module =
            parse_module(&kernel.display().to_string(), &src).map_err(|e| e.to_string())?;
        if let Some(why) = token_instruction(&module) {
            return Ok(Some(why));
        }
        let prog = Program::prepare(module).map_err(|e| e.to_string())?;
        let (abs, rel) = self.folder()?;
        let ptx = write(&abs, &rel, "kernel.ptx", src.as_bytes())?;
        let mut global = GlobalMemory::default();
        let mut addrs = std::collections::BTreeMap::new();
        let mut buffers = Vec::new();
        for (name, bytes) in lm.initial_buffers().map_err(|e| e.to_string())? {
            addrs.insert(name.clone(), global.alloc(&name, &bytes));
            let b = &m.buffers[&name];
            let mut entry = json!({
                "name": name,
                "dtype": b.dtype.name(),
                "shape": b.shape,
                "bytes": bytes.len(),
            });
            if bytes.iter().all(|&x| x == 0) {
                entry["zeros"] = json!(true);
            } else {
                entry["file"] = json!(write(&abs, &rel, &format!("{name}.bin"), &bytes)?);
            }
            buffers.push(entry);
        }
        let mut launches = Vec::new();
        for (i, l) in m.launches.iter().enumerate() {
            let entry = prog
                .module
                .find_function(&l.entry)
                .filter(|f| prog.module.function(*f).kind == FuncKind::Entry)
                .ok_or_else(|| {
                    format!(
                        "{}: launches[{i}].entry: no .entry `{}`",
                        path.display(),
                        l.entry
                    )
                })?;
            let params = crate::run::resolve_params(&prog, entry, &l.args, &addrs, &m.buffers)
                .map_err(|(k, e)| format!("{}: launches[{i}].{k}: {e}", path.display()))?;
            launches.push(launch(
                &l.entry,
                l.grid.0,
                l.block.0,
                l.cluster.map(|c| c.0),
                l.shared_bytes,
                &params,
            ));
        }
        let mut checks = Vec::new();
        for (j, c) in m.checks.iter().enumerate() {
            let b = &m.buffers[&c.buffer];
            let expected = crate::launch::expected_bytes(&lm, c, b.dtype, &b.shape)
                .map_err(|e| format!("{}: checks[{j}]: {e}", path.display()))?;
            checks.push(json!({
                "buffer": c.buffer,
                "dtype": b.dtype.name(),
                "expected": write(&abs, &rel, &format!("check{j}.bin"), &expected)?,
                "rtol": c.rtol.unwrap_or(0.0),
                "atol": c.atol.unwrap_or(0.0),
            }));
        }
        self.workloads.push(json!({
            "workload": path.display().to_string(),
            "ptx": ptx,
            "buffers": buffers,
            "launches": launches,
            "checks": checks,
        }));
        Ok(None)
    }

    /// Export GEMM `spec` (loaded from `path`) at `size`: random inputs in [−1, 1) drawn on
    /// the GPU machine (their values do not change the simulated time; `seed` names them),
    /// checked there against a float64 reference when every dimension is at most
    /// `verify_up_to`.
    pub fn gemm(
        &mut self,
        path: &Path,
        spec: &GemmSpec,
        size: Size,
        seed: u64,
        verify_up_to: u64,
    ) -> Result<(), String> {
        crate::gemm::sizes::check_size(spec, size)?;
        let src = std::fs::read_to_string(&spec.ptx)
            .map_err(|e| format!("cannot read {}: {e}", spec.ptx.display()))?;
        let module =
            parse_module(&spec.ptx.display().to_string(), &src).map_err(|e| e.to_string())?;
        let prog = Program::prepare(module).map_err(|e| e.to_string())?;
        let entry = crate::gemm::run::find_entry(spec, &prog).map_err(|e| e.to_string())?;
        // Addresses only place the matrices for the simulator; the GPU has its own.
        let addrs = [1u64 << 36, 2 << 36, 3 << 36];
        let params = launch_params(spec, &prog, entry, size, addrs).map_err(|e| e.to_string())?;
        let grid = spec.grid_for(size.m, size.n)?;
        let (abs, rel) = self.folder()?;
        let ptx = write(&abs, &rel, "kernel.ptx", src.as_bytes())?;
        let (m, n, k) = (size.m, size.n, size.k);
        let shapes = [m * k, k * n, m * n];
        let elems = [spec.dtype.a, spec.dtype.b, spec.dtype.c];
        let buffers: Vec<Value> = (0..3)
            .map(|i| {
                let mut b = json!({
                    "name": MATRIX_NAMES[i],
                    "dtype": elems[i].name(),
                    "shape": [shapes[i]],
                    "bytes": shapes[i] as usize * elems[i].size(),
                });
                if i < 2 || spec.beta != 0.0 {
                    b["random"] = json!({ "seed": seed + i as u64, "low": -1.0, "high": 1.0 });
                } else {
                    b["zeros"] = json!(true);
                }
                b
            })
            .collect();
        let verify = m.max(n).max(k) <= verify_up_to;
        let tol = crate::gemm::run::tolerance(spec);
        // A GPU's tensor cores do not round their f32 sums correctly (products aligned with
        // truncation: Fasi et al., "Numerical behavior of NVIDIA tensor cores", 2021), so the
        // error grows with K: an f32 epsilon per accumulated term. An H100's tf32 products at
        // K = 2048 were off by up to 1.2e-4 (docs/correlation/h100-sxm-2026-11-27).
        let atol = tol.max(k as f64 * f64::from(f32::EPSILON));
        let checks: Vec<Value> = verify
            .then(|| {
                json!({
                    "buffer": "c",
                    "dtype": spec.dtype.c.name(),
                    "gemm": {
                        "m": m, "n": n, "k": k, "a": "a", "b": "b",
                        "b_layout": if spec.b_layout == BLayout::Nk { "nk" } else { "kn" },
                        "alpha": spec.alpha, "beta": spec.beta,
                        "operand_rounding":
                            if crate::gemm::run::rounds_operands_to_tf32(spec) { "tf32" } else { "none" },
                    },
                    "rtol": tol,
                    "atol": atol,
                })
            })
            .into_iter()
            .collect();
        self.workloads.push(json!({
            "workload": gemm_workload(path, size),
            "ptx": ptx,
            "buffers": buffers,
            "launches": [launch(&spec.entry, grid, spec.block, spec.cluster, spec.dynamic_shared_bytes, &params)],
            "checks": checks,
        }));
        Ok(())
    }
}

/// Why a manifest's config overrides make it run on warps other than a GPU's 32 lanes.
fn other_warp_size(
    set: &std::collections::BTreeMap<String, serde_norway::Value>,
) -> Option<String> {
    let v = set.get("sm.warp_size")?;
    (v.as_u64() != Some(32)).then(|| {
        format!(
            "sets sm.warp_size: {}, and a GPU's warps are 32 lanes (its votes, shuffles and branches would run differently)",
            serde_norway::to_string(v).unwrap_or_default().trim()
        )
    })
}

/// Where a module uses a token instruction of the formal model (Habermaier 2011, Sec. 5.4):
/// gpusim runs those, ptxas does not know them.
fn token_instruction(module: &gpusim_isa::ir::Module) -> Option<String> {
    use gpusim_isa::ir::Op;
    module.functions.iter().find_map(|f| {
        f.body.iter().find_map(|inst| {
            let name = match inst.op {
                Op::Ssy { .. } => "ssy",
                Op::Sync => "sync",
                Op::PreBrk { .. } => "preBrk",
                Op::Brk => "brk",
                Op::PreRet { .. } => "preRet",
                _ => return None,
            };
            Some(format!(
                "uses the formal model's token instruction `{name}` (line {} of {}), which is not PTX: no GPU runs it",
                inst.span.line, f.name
            ))
        })
    })
}

/// Write `bytes` as `abs/file`; its path relative to the export.
fn write(abs: &Path, rel: &str, file: &str, bytes: &[u8]) -> Result<String, String> {
    let p = abs.join(file);
    std::fs::write(&p, bytes).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    Ok(format!("{rel}/{file}"))
}

fn launch(
    entry: &str,
    grid: [u32; 3],
    block: [u32; 3],
    cluster: Option<[u32; 3]>,
    shared_bytes: u32,
    params: &[Param],
) -> Value {
    json!({
        "entry": entry,
        "grid": grid,
        "block": block,
        "cluster": cluster,
        "shared_bytes": shared_bytes,
        "params": params.iter().map(param).collect::<Vec<_>>(),
    })
}

fn param(p: &Param) -> Value {
    let mut v = json!({ "offset": p.offset, "size": p.size });
    match &p.value {
        ParamValue::Bits(b) => {
            let bytes = &b.to_le_bytes()[..p.size.min(8)];
            let mut hex: String = bytes.iter().map(|x| format!("{x:02x}")).collect();
            // Wider scalars than 8 bytes do not exist; pad defensively with zeros.
            hex.extend(std::iter::repeat_n('0', 2 * p.size.saturating_sub(8)));
            v["hex"] = json!(hex);
        }
        ParamValue::Pointer { buffer, .. } => v["pointer"] = json!(buffer),
        ParamValue::TensorMap {
            buffer,
            map,
            by_pointer,
        } => {
            let key = if *by_pointer {
                "tensor_map_pointer"
            } else {
                "tensor_map"
            };
            v[key] = tensor_map(buffer, map);
        }
    }
    v
}

/// A tensor map as `cuTensorMapEncodeTiled` takes it, its address replaced by its buffer.
fn tensor_map(buffer: &str, m: &TensorMap) -> Value {
    let r = m.rank;
    json!({
        "buffer": buffer,
        "dtype": m.dtype.name(),
        "dims": &m.dims[..r],
        "strides": &m.strides[..r - 1],
        "box": &m.boxd[..r],
        "element_strides": &m.estrides[..r],
        "swizzle": match m.swizzle {
            Swizzle::None => "none",
            Swizzle::B32 => "32B",
            Swizzle::B64 => "64B",
            Swizzle::B128 => "128B",
        },
        "oob_fill": if m.oob_nan { "nan" } else { "zero" },
        "interleave": "none",
        "l2_promotion": "none",
    })
}
