//! Launch manifests: the kernel, its buffers (`.npy` in and out), the launches in order, and
//! the checks verified after the last launch.
//!
//! **API boundary**: the manifest format is documented in DESIGN.md and README.md.

mod check;
mod init;
pub use init::number;
pub mod npy;
pub mod params;
pub mod scalar;
pub mod tensor_map;

pub use check::{check_buffer, compare, expected_bytes, CheckFailure};

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
    InvalidOperand,
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
            ExpectedFault::InvalidOperand => "invalid-operand",
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
    /// The SIMT-Step litmus test this kernel implements and where its observed locations end
    /// up (`gpusim check` compares each run's outcome with the test's allowed sets).
    #[serde(default)]
    pub litmus: Option<LitmusLink>,
}

/// `litmus: { test: FILE.litmus, observe: { BUFFER: [LOCATION, ...] } }`: the test file
/// (relative to the manifest) and, per output buffer, the test location each element holds
/// after the run, in element order (`"g[1]"`, or `"x"` for `x[0]`; `~` for an element that
/// observes nothing). Every location of the test's `observe` line must be mapped exactly once.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LitmusLink {
    pub test: String,
    pub observe: BTreeMap<String, Vec<Option<String>>>,
}

/// A manifest's litmus link resolved against its test: the parsed test and, for each of the
/// test's observed locations in the test's order, the (buffer, element) that holds it.
#[derive(Clone, Debug)]
pub struct LitmusBinding {
    pub file: PathBuf,
    pub test: gpusim_models::simt_step::Litmus,
    pub slots: Vec<(String, usize)>,
}

impl LitmusBinding {
    /// The outcome a run's final buffers show, in the order of the test's `observe` line.
    /// `None` when a buffer is missing from `buffers` (a run that faulted keeps none).
    pub fn outcome(
        &self,
        manifest: &Manifest,
        buffers: &[(String, Vec<u8>)],
    ) -> Option<gpusim_models::simt_step::Outcome> {
        let mut values = Vec::with_capacity(self.slots.len());
        for (name, k) in &self.slots {
            let dtype = manifest.buffers.get(name)?.dtype;
            let (_, bytes) = buffers.iter().find(|(n, _)| n == name)?;
            let size = dtype.size();
            let raw = bytes.get(k * size..(k + 1) * size)?;
            let mut word = [0u8; 8];
            word[..size].copy_from_slice(raw);
            let unsigned = u64::from_le_bytes(word);
            // Signed types sign-extend, so a litmus value such as -1 reads back as -1.
            let v = match dtype {
                DType::I8 => unsigned as u8 as i8 as i64,
                DType::I16 => unsigned as u16 as i16 as i64,
                DType::I32 => unsigned as u32 as i32 as i64,
                _ => unsigned as i64,
            };
            values.push(v);
        }
        Some(gpusim_models::simt_step::Outcome(values))
    }
}

/// `NAME` or `NAME[K]` (the litmus language's location syntax) as (array, index).
fn parse_location(s: &str) -> Option<(String, i64)> {
    let s = s.trim();
    let ident = |n: &str| {
        n.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match s.split_once('[') {
        None => ident(s).then(|| (s.to_string(), 0)),
        Some((name, rest)) => {
            let index = rest.strip_suffix(']')?.trim().parse().ok()?;
            ident(name.trim()).then(|| (name.trim().to_string(), index))
        }
    }
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
    /// Allow clusters of 9 to 16 CTAs (`cudaFuncAttributeNonPortableClusterSizeAllowed`).
    #[serde(default)]
    pub non_portable_cluster: bool,
    #[serde(default)]
    pub args: Vec<Value>,
}

impl Launch {
    /// The shape `core::limits` checks.
    pub fn shape(&self) -> crate::core::limits::LaunchShape {
        crate::core::limits::LaunchShape {
            grid: self.grid.0,
            block: self.block.0,
            cluster: self.cluster.map(|c| c.0),
            non_portable_cluster: self.non_portable_cluster,
            dynamic_shared: self.shared_bytes,
        }
    }
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

/// A manifest error: the file, the key path (empty for the whole file), and what is wrong.
#[derive(Debug)]
pub struct ManifestError {
    pub file: String,
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.path.as_str() {
            "" => write!(f, "{}: {}", self.file, self.message),
            p => write!(f, "{}: {p}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ManifestError {}

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
            path: String::new(),
            message: format!("cannot read the manifest: {e}"),
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
        crate::yaml::precheck(text).map_err(|e| err(e.path, e.message))?;
        let de = serde_norway::Deserializer::from_str(text);
        let manifest: Manifest = serde_path_to_error::deserialize(de).map_err(|e| {
            let p = e.path().to_string();
            let m = crate::yaml::without_path(&p, &e.into_inner().to_string());
            err(p, m)
        })?;
        if manifest.launches.is_empty() {
            return Err(err(
                "launches".into(),
                "at least one launch is required".into(),
            ));
        }
        // CUDA's dimension limits; what depends on the kernel and the config (an SM's
        // capacity, `.maxntid`, the SM count) is checked by `run` before the first launch.
        for (i, l) in manifest.launches.iter().enumerate() {
            crate::core::limits::check_dims(&l.shape())
                .map_err(|e| err(format!("launches[{i}].{}", e.key), e.message))?;
        }
        for (name, b) in &manifest.buffers {
            // `--dump DIR` writes DIR/NAME.npy: a name is one plain file name.
            let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
            if name.is_empty() || name.starts_with('.') || !name.chars().all(plain) {
                return Err(err(
                    format!("buffers.{name}"),
                    format!("`{name}` is not a buffer name: use letters, digits, `_`, `-` and `.` (not first)"),
                ));
            }
            if let Some(k) = b.shape.iter().position(|&d| d == 0) {
                return Err(err(
                    format!("buffers.{name}.shape[{k}]"),
                    format!(
                        "shape {:?} has a dimension of 0; every dimension must be at least 1",
                        b.shape
                    ),
                ));
            }
        }
        for (i, c) in manifest.checks.iter().enumerate() {
            let Some(buffer) = manifest.buffers.get(&c.buffer) else {
                let names: Vec<&str> = manifest.buffers.keys().map(String::as_str).collect();
                return Err(err(
                    format!("checks[{i}].buffer"),
                    format!(
                        "unknown buffer `{}`; buffers: {}",
                        c.buffer,
                        names.join(", ")
                    ),
                ));
            };
            if c.npy.is_some() == c.values.is_some() {
                return Err(err(
                    format!("checks[{i}]"),
                    "give exactly one of `npy` or `values`".into(),
                ));
            }
            for (key, tol) in [("rtol", c.rtol), ("atol", c.atol)] {
                if let Some(t) = tol.filter(|t| !(t.is_finite() && *t >= 0.0)) {
                    return Err(err(
                        format!("checks[{i}].{key}"),
                        format!("must be a finite number of at least 0, got {t}"),
                    ));
                }
            }
            if c.values.is_some() {
                // Sizes are not yet bounded here; a values list is as long as it is written.
                if let Some(n) = buffer
                    .shape
                    .iter()
                    .try_fold(1usize, |a, &d| a.checked_mul(d))
                {
                    check::expected_values(c, buffer.dtype, &buffer.shape, n).map_err(
                        |(k, e)| match k {
                            Some(k) => err(format!("checks[{i}].values[{k}]"), e),
                            None => err(format!("checks[{i}].values"), e),
                        },
                    )?;
                }
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
                        "{:?} elements of {} do not fit the simulator's {} MiB of device memory for buffers",
                        b.shape,
                        b.dtype.name(),
                        MAX_BUFFER_BYTES >> 20
                    ),
                ));
            };
            total += bytes;
        }
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let lm = LoadedManifest {
            path: path.to_path_buf(),
            dir,
            manifest,
        };
        // Resolved here so that a broken link fails every command, not only `gpusim check`.
        lm.litmus()?;
        Ok(lm)
    }

    /// The manifest's `litmus` link resolved against its test file; `None` without one.
    pub fn litmus(&self) -> Result<Option<LitmusBinding>, ManifestError> {
        let Some(link) = &self.manifest.litmus else {
            return Ok(None);
        };
        let err = |p: String, m: String| ManifestError {
            file: self.path.display().to_string(),
            path: p,
            message: m,
        };
        let file = self.resolve(&link.test);
        let text = std::fs::read_to_string(&file).map_err(|e| {
            err(
                "litmus.test".into(),
                format!("cannot read {}: {e}", file.display()),
            )
        })?;
        let test = gpusim_models::simt_step::parse(&text)
            .map_err(|e| err("litmus.test".into(), format!("{}:{e}", file.display())))?;
        let threads: u64 = self
            .manifest
            .launches
            .iter()
            .map(|l| l.grid.count() * l.block.count())
            .sum();
        if self.manifest.launches.len() != 1 || threads != test.threads as u64 {
            return Err(err(
                "launches".into(),
                format!(
                    "a litmus manifest runs its test's {} threads in one launch (thread t = test thread t); this one has {} launch(es) of {threads} thread(s) in all",
                    test.threads,
                    self.manifest.launches.len()
                ),
            ));
        }
        let mut slots: Vec<Option<(String, usize)>> = vec![None; test.observe.len()];
        for (name, locs) in &link.observe {
            let key = format!("litmus.observe.{name}");
            let Some(spec) = self.manifest.buffers.get(name) else {
                let names: Vec<&str> = self.manifest.buffers.keys().map(String::as_str).collect();
                return Err(err(
                    key,
                    format!("unknown buffer `{name}`; buffers: {}", names.join(", ")),
                ));
            };
            if spec.dtype.is_float() {
                return Err(err(
                    key,
                    format!(
                        "litmus values are integers; buffer `{name}` is {}",
                        spec.dtype.name()
                    ),
                ));
            }
            if locs.len() > spec.len() {
                return Err(err(
                    key,
                    format!(
                        "{} locations for a buffer of {} elements",
                        locs.len(),
                        spec.len()
                    ),
                ));
            }
            for (k, loc) in locs.iter().enumerate() {
                let Some(loc) = loc else { continue };
                let key = format!("litmus.observe.{name}[{k}]");
                let Some((array, index)) = parse_location(loc) else {
                    return Err(err(
                        key,
                        format!("`{loc}` is not a litmus location (`NAME` or `NAME[INDEX]`)"),
                    ));
                };
                let Some(i) = test
                    .observe
                    .iter()
                    .position(|l| l.array == array && l.index == index)
                else {
                    let observed: Vec<String> =
                        test.observe.iter().map(|l| l.to_string()).collect();
                    return Err(err(
                        key,
                        format!(
                            "`{loc}` is not observed by test {}; it observes {}",
                            test.name,
                            observed.join(", ")
                        ),
                    ));
                };
                if let Some((b, e)) = &slots[i] {
                    return Err(err(key, format!("`{loc}` is already mapped to {b}[{e}]")));
                }
                slots[i] = Some((name.clone(), k));
            }
        }
        let missing: Vec<String> = test
            .observe
            .iter()
            .zip(&slots)
            .filter(|(_, s)| s.is_none())
            .map(|(l, _)| l.to_string())
            .collect();
        if !missing.is_empty() {
            return Err(err(
                "litmus.observe".into(),
                format!(
                    "test {} observes {} but no buffer element holds it",
                    test.name,
                    missing.join(", ")
                ),
            ));
        }
        Ok(Some(LitmusBinding {
            file,
            test,
            slots: slots.into_iter().flatten().collect(),
        }))
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
