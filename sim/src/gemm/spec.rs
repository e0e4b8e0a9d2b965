//! GEMM launch specs (`gemm.yaml` beside a kernel): how to launch one GEMM kernel for any
//! M, N, K — PTX and entry, element types, CTA tile, block and grid, shared memory, the
//! argument list, size constraints, published anchors. Loaded with the key path of every
//! error and the valid choices, like manifests and configs (docs/gemm.md).

use crate::launch::Dim3;
use serde::Deserialize;
use serde_norway::Value;
use std::path::{Path, PathBuf};

/// A spec error: the file, the key path, and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {path}: {message}")]
pub struct SpecError {
    pub file: String,
    pub path: String,
    pub message: String,
}

/// Element type of A, B or C.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Elem {
    F32,
    F16,
    Bf16,
}

impl Elem {
    pub fn size(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::F16 | Elem::Bf16 => 2,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::F16 => "f16",
            Elem::Bf16 => "bf16",
        }
    }
    /// Little-endian bytes of `v` rounded to this type (round to nearest even).
    pub fn encode(self, v: f32, out: &mut Vec<u8>) {
        match self {
            Elem::F32 => out.extend_from_slice(&v.to_le_bytes()),
            Elem::F16 => out.extend_from_slice(&half::f16::from_f32(v).to_le_bytes()),
            Elem::Bf16 => out.extend_from_slice(&half::bf16::from_f32(v).to_le_bytes()),
        }
    }
    /// The value of element `i` of little-endian `bytes`.
    pub fn decode(self, bytes: &[u8], i: usize) -> f32 {
        match self {
            Elem::F32 => f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap()),
            Elem::F16 => half::f16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f32(),
            Elem::Bf16 => half::bf16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f32(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dtypes {
    pub a: Elem,
    pub b: Elem,
    pub c: Elem,
}

/// Which of the config's peak rates the kernel is measured against.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Math {
    /// The tensor cores (`sm.units.tensor`).
    #[default]
    Tensor,
    /// The FP32 SIMT pipes (`sm.units.fp32`).
    Fp32,
    /// The tensor cores on tf32 operands: half their f16/bf16 rate (H100: 494.7 of 989.4
    /// dense TFLOP/s, hardware.md §3b).
    #[serde(rename = "tensor-tf32")]
    TensorTf32,
}

impl Math {
    /// Whether the tensor cores do the arithmetic.
    pub fn tensor(self) -> bool {
        matches!(self, Math::Tensor | Math::TensorTf32)
    }
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tile {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// Sizes must be multiples of these (1: any size).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Constraints {
    pub m_multiple: u32,
    pub n_multiple: u32,
    pub k_multiple: u32,
}

impl Default for Constraints {
    fn default() -> Self {
        Constraints {
            m_multiple: 1,
            n_multiple: 1,
            k_multiple: 1,
        }
    }
}

/// A published figure for this problem on real hardware.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    /// The config it is compared on (its `name`).
    pub config: String,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub tflops: f64,
    pub source: String,
}

/// One grid dimension as a function of the problem size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridDim {
    /// ⌈M / tile.m⌉
    MTiles,
    /// ⌈N / tile.n⌉
    NTiles,
    /// The split-K factor.
    SplitK,
    Fixed(u32),
}

pub const GRID_WORDS: &str = "m_tiles | n_tiles | split_k | a positive integer";

/// One kernel argument, in `.param` order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg {
    /// The device address of A, B or C.
    A,
    B,
    C,
    /// An integer of the problem: M, N, K, the leading dimensions, the split-K factor.
    Size(SizeArg),
    /// The spec's `alpha` or `beta`.
    Alpha,
    Beta,
    /// A number, passed as the parameter's type.
    Number(f64, Option<i128>),
    /// A tiled tensor map (128-byte `.param`) over matrix 0 (A), 1 (B) or 2 (C), its
    /// dimensions those of the matrix (innermost first), with this box and swizzle.
    TensorMap {
        matrix: u8,
        boxd: [u32; 2],
        swizzle: gpusim_isa::semantics::Swizzle,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeArg {
    M,
    N,
    K,
    Lda,
    Ldb,
    Ldc,
    SplitK,
}

pub const ARG_WORDS: &str =
    "a | b | c | M | N | K | lda | ldb | ldc | split_k | alpha | beta | a number | { tensor_map: { matrix: a|b|c, box: [inner, outer], swizzle: none|32B|64B|128B } }";

/// The file as written; `GemmSpec` is the validated form.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    name: String,
    #[serde(default)]
    description: Option<String>,
    ptx: String,
    entry: String,
    dtype: Dtypes,
    #[serde(default)]
    math: Math,
    tile: Tile,
    block: Dim3,
    grid: Vec<Value>,
    #[serde(default = "one")]
    split_k: u32,
    #[serde(default)]
    cluster: Option<Dim3>,
    /// Clusters of 9 to 16 CTAs (`cudaFuncAttributeNonPortableClusterSizeAllowed`).
    #[serde(default)]
    non_portable_cluster: bool,
    #[serde(default)]
    dynamic_shared_bytes: u32,
    args: Vec<Value>,
    #[serde(default = "one_f64")]
    alpha: f64,
    #[serde(default)]
    beta: f64,
    #[serde(default)]
    constraints: Constraints,
    #[serde(default)]
    anchors: Vec<Anchor>,
    /// `kn` (B is K×N row-major, the default) or `nk` (B is N×K row-major: both operands
    /// K-major, as `wgmma` reads them untransposed).
    #[serde(default)]
    b_layout: BLayout,
}

/// How B is stored.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BLayout {
    #[default]
    Kn,
    Nk,
}

fn one() -> u32 {
    1
}

fn one_f64() -> f64 {
    1.0
}

/// A validated GEMM launch spec. Matrices are row-major: A is M×K (lda = K), B is K×N
/// (ldb = N), C is M×N (ldc = N).
#[derive(Clone, Debug)]
pub struct GemmSpec {
    /// The spec file and its directory (the PTX path resolves against it).
    pub path: PathBuf,
    pub name: String,
    pub description: Option<String>,
    pub ptx: PathBuf,
    pub entry: String,
    pub dtype: Dtypes,
    pub math: Math,
    pub tile: Tile,
    pub block: [u32; 3],
    pub grid: [GridDim; 3],
    pub split_k: u32,
    pub dynamic_shared_bytes: u32,
    pub args: Vec<Arg>,
    pub alpha: f64,
    pub beta: f64,
    pub constraints: Constraints,
    pub anchors: Vec<Anchor>,
    pub b_layout: BLayout,
    /// Thread-block cluster shape (None: the kernel's `.reqnctapercluster`, if any).
    pub cluster: Option<[u32; 3]>,
    /// Clusters may hold up to 16 CTAs instead of 8.
    pub non_portable_cluster: bool,
}

impl GemmSpec {
    pub fn load(path: &Path) -> Result<GemmSpec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| SpecError {
            file: path.display().to_string(),
            path: "(file)".into(),
            message: e.to_string(),
        })?;
        Self::from_text(path, &text)
    }

    pub fn from_text(path: &Path, text: &str) -> Result<GemmSpec, SpecError> {
        let err = |p: &str, m: String| SpecError {
            file: path.display().to_string(),
            path: p.to_string(),
            message: m,
        };
        crate::yaml::precheck(text).map_err(|e| err(&e.path, e.message))?;
        let de = serde_norway::Deserializer::from_str(text);
        let raw: RawSpec = serde_path_to_error::deserialize(de).map_err(|e| {
            let p = e.path().to_string();
            let m = crate::yaml::without_path(&p, &e.into_inner().to_string());
            err(&p, m)
        })?;
        for (key, v) in [
            ("tile.m", raw.tile.m),
            ("tile.n", raw.tile.n),
            ("tile.k", raw.tile.k),
            ("split_k", raw.split_k),
            ("constraints.m_multiple", raw.constraints.m_multiple),
            ("constraints.n_multiple", raw.constraints.n_multiple),
            ("constraints.k_multiple", raw.constraints.k_multiple),
        ] {
            if v == 0 {
                return Err(err(key, "must be at least 1".into()));
            }
        }
        if raw.grid.is_empty() || raw.grid.len() > 3 {
            return Err(err(
                "grid",
                format!("expected 1 to 3 dimensions, each {GRID_WORDS}"),
            ));
        }
        let mut grid = [GridDim::Fixed(1); 3];
        for (i, v) in raw.grid.iter().enumerate() {
            grid[i] = grid_dim(v).ok_or_else(|| {
                err(
                    &format!("grid[{i}]"),
                    format!("`{}` is not one of: {GRID_WORDS}", show(v)),
                )
            })?;
        }
        if raw.split_k > 1 && !grid.contains(&GridDim::SplitK) {
            return Err(err(
                "split_k",
                format!(
                    "split_k is {} but no grid dimension is `split_k`",
                    raw.split_k
                ),
            ));
        }
        // The grid depends on the size: `run::check_launches` checks the rest.
        let block_only = crate::core::limits::LaunchShape {
            grid: [1; 3],
            block: raw.block.0,
            cluster: None,
            non_portable_cluster: raw.non_portable_cluster,
            dynamic_shared: raw.dynamic_shared_bytes,
        };
        crate::core::limits::check_dims(&block_only).map_err(|e| err(e.key, e.message))?;
        if let Some(e) = raw
            .cluster
            .and_then(|c| crate::core::limits::cluster_size_error(c.0, raw.non_portable_cluster))
        {
            return Err(err("cluster", e));
        }
        let mut args = Vec::with_capacity(raw.args.len());
        for (i, v) in raw.args.iter().enumerate() {
            let a = arg(v).ok_or_else(|| {
                err(
                    &format!("args[{i}]"),
                    format!("`{}` is not one of: {ARG_WORDS}", show(v)),
                )
            })?;
            args.push(a);
        }
        for (i, (want, name)) in [(Arg::A, "a"), (Arg::B, "b"), (Arg::C, "c")]
            .into_iter()
            .enumerate()
        {
            // A matrix is passed by address or by a tensor map over it.
            let n = args
                .iter()
                .filter(|a| {
                    **a == want
                        || matches!(a, Arg::TensorMap { matrix, .. } if *matrix as usize == i)
                })
                .count();
            if n != 1 {
                return Err(err(
                    "args",
                    format!("buffer `{name}` must appear exactly once, it appears {n} times"),
                ));
            }
        }
        for (key, x) in [("alpha", raw.alpha), ("beta", raw.beta)] {
            if !x.is_finite() {
                return Err(err(key, "must be a finite number".into()));
            }
        }
        for (i, a) in raw.anchors.iter().enumerate() {
            if a.m == 0 || a.n == 0 || a.k == 0 {
                return Err(err(
                    &format!("anchors[{i}]"),
                    "m, n and k must be at least 1".into(),
                ));
            }
            if !(a.tflops.is_finite() && a.tflops > 0.0) {
                return Err(err(
                    &format!("anchors[{i}].tflops"),
                    "must be a positive number".into(),
                ));
            }
        }
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(GemmSpec {
            path: path.to_path_buf(),
            name: raw.name,
            description: raw.description,
            ptx: dir.join(&raw.ptx),
            entry: raw.entry,
            dtype: raw.dtype,
            math: raw.math,
            tile: raw.tile,
            block: raw.block.0,
            grid,
            split_k: raw.split_k,
            dynamic_shared_bytes: raw.dynamic_shared_bytes,
            args,
            alpha: raw.alpha,
            beta: raw.beta,
            constraints: raw.constraints,
            anchors: raw.anchors,
            b_layout: raw.b_layout,
            cluster: raw.cluster.map(|c| c.0),
            non_portable_cluster: raw.non_portable_cluster,
        })
    }

    /// `--split-k`: a new split-K factor for a spec whose grid splits K.
    pub fn set_split_k(&mut self, k: u32) -> Result<(), String> {
        if k == 0 || !self.grid.contains(&GridDim::SplitK) {
            return Err(format!(
                "--split-k {k}: `{}` has no `split_k` grid dimension (or the factor is 0)",
                self.name
            ));
        }
        self.split_k = k;
        Ok(())
    }

    /// An error about key `path` of this spec.
    pub fn error(&self, path: &str, message: String) -> SpecError {
        SpecError {
            file: self.path.display().to_string(),
            path: path.to_string(),
            message,
        }
    }

    /// The launch grid for an M×N problem.
    pub fn grid_for(&self, m: u64, n: u64) -> Result<[u32; 3], String> {
        let mut out = [1u32; 3];
        for (d, g) in out.iter_mut().zip(self.grid) {
            let v = match g {
                GridDim::MTiles => m.div_ceil(self.tile.m as u64),
                GridDim::NTiles => n.div_ceil(self.tile.n as u64),
                GridDim::SplitK => self.split_k as u64,
                GridDim::Fixed(x) => x as u64,
            };
            *d = u32::try_from(v).map_err(|_| format!("grid dimension {v} exceeds 2^32 - 1"))?;
        }
        Ok(out)
    }

    /// The published figure for this problem on the config named `config`, if any.
    pub fn anchor(&self, config: &str, m: u64, n: u64, k: u64) -> Option<&Anchor> {
        self.anchors
            .iter()
            .find(|a| a.config == config && (a.m, a.n, a.k) == (m, n, k))
    }
}

fn show(v: &Value) -> String {
    serde_norway::to_string(v)
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn grid_dim(v: &Value) -> Option<GridDim> {
    match v {
        Value::String(s) => match s.as_str() {
            "m_tiles" => Some(GridDim::MTiles),
            "n_tiles" => Some(GridDim::NTiles),
            "split_k" => Some(GridDim::SplitK),
            _ => None,
        },
        Value::Number(n) => n
            .as_u64()
            .filter(|&x| x >= 1)
            .and_then(|x| u32::try_from(x).ok())
            .map(GridDim::Fixed),
        _ => None,
    }
}

fn arg(v: &Value) -> Option<Arg> {
    match v {
        Value::String(s) => Some(match s.as_str() {
            "a" => Arg::A,
            "b" => Arg::B,
            "c" => Arg::C,
            "M" => Arg::Size(SizeArg::M),
            "N" => Arg::Size(SizeArg::N),
            "K" => Arg::Size(SizeArg::K),
            "lda" => Arg::Size(SizeArg::Lda),
            "ldb" => Arg::Size(SizeArg::Ldb),
            "ldc" => Arg::Size(SizeArg::Ldc),
            "split_k" => Arg::Size(SizeArg::SplitK),
            "alpha" => Arg::Alpha,
            "beta" => Arg::Beta,
            _ => return None,
        }),
        Value::Number(_) => {
            let (f, exact) = crate::launch::number(v)?;
            f.is_finite().then_some(Arg::Number(f, exact))
        }
        Value::Mapping(m) if m.len() == 1 => tensor_map_arg(m.get("tensor_map")?),
        _ => None,
    }
}

fn tensor_map_arg(v: &Value) -> Option<Arg> {
    let Value::Mapping(m) = v else { return None };
    if m.keys()
        .any(|k| !matches!(k.as_str(), Some("matrix" | "box" | "swizzle")))
    {
        return None;
    }
    let matrix = match m.get("matrix")?.as_str()? {
        "a" => 0,
        "b" => 1,
        "c" => 2,
        _ => return None,
    };
    let Value::Sequence(b) = m.get("box")? else {
        return None;
    };
    let dims: Vec<u32> = b
        .iter()
        .map(|x| x.as_u64().and_then(|x| u32::try_from(x).ok()))
        .collect::<Option<_>>()?;
    let boxd: [u32; 2] = dims.try_into().ok()?;
    let swizzle = match m.get("swizzle") {
        Some(s) => gpusim_isa::semantics::Swizzle::from_name(s.as_str()?)?,
        None => gpusim_isa::semantics::Swizzle::None,
    };
    Some(Arg::TensorMap {
        matrix,
        boxd,
        swizzle,
    })
}
