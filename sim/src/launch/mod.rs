//! Launch manifests: the kernel, its buffers (`.npy` in and out), the launches in order, and
//! the checks verified after the last launch.
//!
//! **API boundary**: the manifest format is documented in DESIGN.md and README.md.

mod check;
mod init;
pub use init::number;
pub mod npy;

pub use check::{check_buffer, CheckFailure};

use serde::Deserialize;
use serde_norway::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    Bf16,
    F32,
    F64,
}

impl DType {
    pub fn size(self) -> usize {
        match self {
            DType::U8 | DType::I8 => 1,
            DType::U16 | DType::I16 | DType::F16 | DType::Bf16 => 2,
            DType::U32 | DType::I32 | DType::F32 => 4,
            DType::U64 | DType::I64 | DType::F64 => 8,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::Bf16 | DType::F32 | DType::F64)
    }
}

/// The outcome a manifest expects when its kernel is meant to fault.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ExpectedFault {
    Liveness,
    OutOfBounds,
    Misaligned,
    BarrierDivergence,
    Watchdog,
    Deadlock,
    Trap,
}

impl ExpectedFault {
    pub fn name(self) -> &'static str {
        match self {
            ExpectedFault::Liveness => "liveness",
            ExpectedFault::OutOfBounds => "out-of-bounds",
            ExpectedFault::Misaligned => "misaligned",
            ExpectedFault::BarrierDivergence => "barrier-divergence",
            ExpectedFault::Watchdog => "watchdog",
            ExpectedFault::Deadlock => "deadlock",
            ExpectedFault::Trap => "trap",
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub kernel: String,
    pub launches: Vec<Launch>,
    #[serde(default)]
    pub buffers: BTreeMap<String, BufferSpec>,
    #[serde(default)]
    pub checks: Vec<Check>,
    #[serde(default)]
    pub expect_fault: Option<ExpectedFault>,
    /// Config overrides for this trace (`sm.warp_size: 4`), applied before `--set`.
    #[serde(default)]
    pub set: BTreeMap<String, Value>,
    /// Free text shown by tools.
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    pub entry: String,
    pub grid: Dim3,
    pub block: Dim3,
    #[serde(default)]
    pub shared_bytes: u32,
    #[serde(default)]
    pub cluster: Option<Dim3>,
    #[serde(default)]
    pub args: Vec<Value>,
}

/// `[x]`, `[x, y]` or `[x, y, z]`; missing dimensions are 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3(pub [u32; 3]);

impl<'de> Deserialize<'de> for Dim3 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v: Vec<u32> = Vec::deserialize(d)?;
        if v.is_empty() || v.len() > 3 || v.contains(&0) {
            return Err(serde::de::Error::custom(
                "expected 1 to 3 positive dimensions, e.g. [256, 1, 1]",
            ));
        }
        let mut out = [1u32; 3];
        out[..v.len()].copy_from_slice(&v);
        Ok(Dim3(out))
    }
}

impl Dim3 {
    pub fn count(&self) -> u64 {
        self.0.iter().map(|&x| x as u64).product()
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    pub dtype: DType,
    pub shape: Vec<usize>,
    #[serde(default = "zeros")]
    pub init: Value,
}

fn zeros() -> Value {
    Value::String("zeros".into())
}

impl BufferSpec {
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub buffer: String,
    #[serde(default)]
    pub npy: Option<String>,
    #[serde(default)]
    pub values: Option<Vec<Value>>,
    #[serde(default)]
    pub rtol: Option<f64>,
    #[serde(default)]
    pub atol: Option<f64>,
}

/// A manifest error: the file, the key path, and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {path}: {message}")]
pub struct ManifestError {
    pub file: String,
    pub path: String,
    pub message: String,
}

/// The most bytes all buffers of one manifest may hold together.
pub const MAX_BUFFER_BYTES: usize = 1 << 30;

/// A manifest with its directory (relative paths resolve against it).
pub struct LoadedManifest {
    pub path: PathBuf,
    pub dir: PathBuf,
    pub manifest: Manifest,
}

impl LoadedManifest {
    pub fn load(path: &Path) -> Result<LoadedManifest, ManifestError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
            file: file.clone(),
            path: "(file)".into(),
            message: e.to_string(),
        })?;
        Self::from_text(path, &text)
    }

    pub fn from_text(path: &Path, text: &str) -> Result<LoadedManifest, ManifestError> {
        let file = path.display().to_string();
        let err = |p: String, m: String| ManifestError {
            file: file.clone(),
            path: p,
            message: m,
        };
        let de = serde_norway::Deserializer::from_str(text);
        let manifest: Manifest = serde_path_to_error::deserialize(de).map_err(|e| {
            let p = e.path().to_string();
            err(p, e.into_inner().to_string())
        })?;
        if manifest.launches.is_empty() {
            return Err(err(
                "launches".into(),
                "at least one launch is required".into(),
            ));
        }
        for (i, l) in manifest.launches.iter().enumerate() {
            if l.cluster.is_some_and(|c| c.count() != 1) {
                return Err(err(
                    format!("launches[{i}].cluster"),
                    "thread-block clusters are not modelled yet; use [1, 1, 1] or leave `cluster` out".into(),
                ));
            }
        }
        for (i, c) in manifest.checks.iter().enumerate() {
            if !manifest.buffers.contains_key(&c.buffer) {
                let names: Vec<&String> = manifest.buffers.keys().collect();
                return Err(err(
                    format!("checks[{i}].buffer"),
                    format!("unknown buffer `{}`; buffers: {names:?}", c.buffer),
                ));
            }
            if c.npy.is_some() == c.values.is_some() {
                return Err(err(
                    format!("checks[{i}]"),
                    "give exactly one of `npy` or `values`".into(),
                ));
            }
        }
        // Sizes are checked here so that `BufferSpec::len` cannot overflow and a typo such as
        // `shape: [4000000000]` is an error rather than an allocation failure.
        let mut total = 0usize;
        for (name, b) in &manifest.buffers {
            let bytes = b
                .shape
                .iter()
                .try_fold(b.dtype.size(), |a, &d| a.checked_mul(d))
                .filter(|&n| n <= MAX_BUFFER_BYTES - total);
            let Some(bytes) = bytes else {
                return Err(err(
                    format!("buffers.{name}.shape"),
                    format!(
                        "{:?} elements of {:?} do not fit the simulator's {} MiB of device memory for buffers",
                        b.shape,
                        b.dtype,
                        MAX_BUFFER_BYTES >> 20
                    ),
                ));
            };
            total += bytes;
        }
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(LoadedManifest {
            path: path.to_path_buf(),
            dir,
            manifest,
        })
    }

    pub fn resolve(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// The initial bytes of every buffer, in name order.
    pub fn initial_buffers(&self) -> Result<Vec<(String, Vec<u8>)>, ManifestError> {
        let mut out = Vec::new();
        for (name, spec) in &self.manifest.buffers {
            let bytes = init::initial_bytes(self, spec).map_err(|m| ManifestError {
                file: self.path.display().to_string(),
                path: format!("buffers.{name}.init"),
                message: m,
            })?;
            out.push((name.clone(), bytes));
        }
        Ok(out)
    }
}
