//! Buffer initialisers: zeros, fill, iota, random (seeded), values, npy. Every number must fit
//! the buffer's dtype (`scalar`): `fill: 300` into u8 or `-1` into u32 is an error, not a wrap.

use super::scalar::{self, Signedness};
use super::{npy, BufferSpec, DType, LoadedManifest};
use crate::rng::splitmix64 as splitmix;
use serde_norway::Value;

pub use super::scalar::number;

impl DType {
    /// The manifest spelling (`u8`, `bf16`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::U8 => "u8",
            DType::I8 => "i8",
            DType::U16 => "u16",
            DType::I16 => "i16",
            DType::U32 => "u32",
            DType::I32 => "i32",
            DType::U64 => "u64",
            DType::I64 => "i64",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// Whether a signed integer type.
    fn signedness(self) -> Signedness {
        match self {
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => Signedness::Signed,
            _ => Signedness::Unsigned,
        }
    }
}

/// Encode one number as the element bytes of `dtype`, or say why it does not fit.
pub fn encode_number(dtype: DType, v: f64, exact_int: Option<i128>) -> Result<Encoded, String> {
    let name = dtype.name();
    let n = (v, exact_int);
    let bits: u64 = match dtype {
        DType::F16 => {
            scalar::fit_float(v, name, 65504.0, half::f16::from_f64, |x| x.is_infinite())?.to_bits()
                as u64
        }
        DType::Bf16 => {
            scalar::fit_float(v, name, 3.3895313892515355e38, half::bf16::from_f64, |x| {
                x.is_infinite()
            })?
            .to_bits() as u64
        }
        DType::F32 => {
            scalar::fit_float(v, name, f32::MAX as f64, |x| x as f32, |x| x.is_infinite())?
                .to_bits() as u64
        }
        DType::F64 => v.to_bits(),
        _ => scalar::fit_int(n, 8 * dtype.size() as u32, dtype.signedness(), name)?,
    };
    Ok(Encoded {
        bytes: bits.to_le_bytes(),
        len: dtype.size() as u8,
    })
}

/// One element's little-endian bytes (at most 8), without a heap allocation: buffers of
/// millions of elements are encoded one element at a time.
#[derive(Clone, Copy, Debug)]
pub struct Encoded {
    bytes: [u8; 8],
    len: u8,
}

impl std::ops::Deref for Encoded {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

const FORMS: &str = "zeros | { fill: X } | { iota: { start, step } } | { random: { seed, low, high } } | { values: [...] } | { npy: FILE }";

pub fn initial_bytes(m: &LoadedManifest, spec: &BufferSpec) -> Result<Vec<u8>, String> {
    let n = spec.len();
    let size = spec.dtype.size();
    match &spec.init {
        Value::String(s) if s == "zeros" => Ok(vec![0; n * size]),
        Value::Mapping(map) if map.len() == 1 => {
            let (k, v) = map.iter().next().unwrap();
            match k.as_str().unwrap_or("") {
                "fill" => {
                    let (f, i) = number(v).ok_or("fill needs a number")?;
                    let one = encode_number(spec.dtype, f, i).map_err(|e| format!("fill: {e}"))?;
                    Ok(one.repeat(n))
                }
                "iota" => iota(spec, v),
                "random" => random(spec, v),
                "values" => {
                    let Value::Sequence(items) = v else {
                        return Err("values needs a list".into());
                    };
                    if items.len() != n {
                        return Err(format!(
                            "values has {} elements, shape {:?} needs {n}",
                            items.len(),
                            spec.shape
                        ));
                    }
                    let mut out = Vec::with_capacity(n * size);
                    for (i, it) in items.iter().enumerate() {
                        let (f, e) =
                            number(it).ok_or_else(|| format!("values[{i}] is not a number"))?;
                        out.extend_from_slice(
                            &encode_number(spec.dtype, f, e)
                                .map_err(|e| format!("values[{i}]: {e}"))?,
                        );
                    }
                    Ok(out)
                }
                "npy" => {
                    let file = v.as_str().ok_or("npy needs a file name")?;
                    let path = m.resolve(file);
                    let a = npy::read(&path)?;
                    npy::expect_layout(&path, &a, spec.dtype, &spec.shape)?;
                    Ok(a.data)
                }
                other => Err(format!("unknown init form `{other}`; valid forms: {FORMS}")),
            }
        }
        _ => Err(format!("unknown init form; valid forms: {FORMS}")),
    }
}

/// The numbers of an initialiser's map (`iota: {start, step}`): only `keys`, each a number
/// when present (absent ones take `defaults`).
fn numeric_fields<const N: usize>(
    form: &str,
    v: &Value,
    keys: [&str; N],
    defaults: [(f64, Option<i128>); N],
) -> Result<[(f64, Option<i128>); N], String> {
    let Value::Mapping(map) = v else {
        return Err(format!(
            "{form} needs a map of {}",
            keys.map(|k| format!("`{k}`")).join(", ")
        ));
    };
    for k in map.keys() {
        let name = k.as_str().unwrap_or("");
        if !keys.contains(&name) {
            return Err(format!(
                "{form}: unknown key `{}`; valid keys: {}",
                scalar_text(k),
                keys.join(", ")
            ));
        }
    }
    let mut out = defaults;
    for (i, k) in keys.iter().enumerate() {
        if let Some(x) = map.get(*k) {
            out[i] = number(x)
                .ok_or_else(|| format!("{form}.{k}: `{}` is not a number", scalar_text(x)))?;
        }
    }
    Ok(out)
}

/// A YAML value as one line of text, for messages.
fn scalar_text(v: &Value) -> String {
    serde_norway::to_string(v)
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn iota(spec: &BufferSpec, v: &Value) -> Result<Vec<u8>, String> {
    let n = spec.len();
    let [start, step] = numeric_fields(
        "iota",
        v,
        ["start", "step"],
        [(0.0, Some(0)), (1.0, Some(1))],
    )?;
    for (key, x) in [("start", start), ("step", step)] {
        if !x.0.is_finite() {
            return Err(format!(
                "iota.{key} must be finite, got {}",
                scalar::show(x)
            ));
        }
    }
    let element = |k: usize| {
        let exact = match (start.1, step.1) {
            (Some(a), Some(b)) => Some(a + b * k as i128),
            _ => None,
        };
        (start.0 + step.0 * k as f64, exact)
    };
    // The sequence is monotonic: if its ends fit, so does every element; say which end fails.
    for k in [0, n.saturating_sub(1)] {
        let (f, e) = element(k);
        encode_number(spec.dtype, f, e).map_err(|err| {
            format!(
                "element {k} of iota (start {} + step {} × {k}) is {}: {err}",
                scalar::show(start),
                scalar::show(step),
                scalar::show((f, e))
            )
        })?;
    }
    let mut out = Vec::with_capacity(n * spec.dtype.size());
    for k in 0..n {
        let (f, e) = element(k);
        out.extend_from_slice(
            &encode_number(spec.dtype, f, e).map_err(|err| format!("iota element {k}: {err}"))?,
        );
    }
    Ok(out)
}

fn random(spec: &BufferSpec, v: &Value) -> Result<Vec<u8>, String> {
    let [seed, low, high] = numeric_fields(
        "random",
        v,
        ["seed", "low", "high"],
        [(0.0, Some(0)), (0.0, Some(0)), (1.0, Some(1))],
    )?;
    let seed = match seed.1 {
        Some(s) if (0..=u64::MAX as i128).contains(&s) => s as u64,
        _ => {
            return Err(format!(
                "random.seed must be an integer 0 to {}, got {}",
                u64::MAX,
                scalar::show(seed)
            ))
        }
    };
    for (key, x) in [("low", low), ("high", high)] {
        if !x.0.is_finite() {
            return Err(format!(
                "random.{key} must be finite, got {}",
                scalar::show(x)
            ));
        }
        encode_number(spec.dtype, x.0, scalar::exact_integer(x))
            .map_err(|e| format!("random.{key}: {e}"))?;
    }
    if high.0 < low.0 {
        return Err(format!(
            "random: high ({}) must not be below low ({})",
            scalar::show(high),
            scalar::show(low)
        ));
    }
    let (low, high) = (low.0, high.0);
    let mut st = seed;
    let mut out = Vec::with_capacity(spec.len() * spec.dtype.size());
    for _ in 0..spec.len() {
        let r = splitmix(&mut st);
        if spec.dtype.is_float() {
            let u = (r >> 11) as f64 / (1u64 << 53) as f64;
            out.extend_from_slice(&encode_number(spec.dtype, low + (high - low) * u, None)?);
        } else {
            // low and high are integers of the dtype (checked above): so is every draw.
            let span = ((high - low) as u128).saturating_add(1);
            let i = (low as i128).saturating_add((r as u128 % span) as i128);
            out.extend_from_slice(&encode_number(spec.dtype, i as f64, Some(i))?);
        }
    }
    Ok(out)
}
