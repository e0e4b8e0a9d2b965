//! Buffer initialisers: zeros, fill, iota, random (seeded), values, npy.

use super::{npy, BufferSpec, DType, LoadedManifest};
use serde_norway::Value;

/// Encode one number as the element bytes of `dtype` (integers wrap like C casts).
pub fn encode_number(dtype: DType, v: f64, exact_int: Option<i128>) -> Vec<u8> {
    let i = exact_int.unwrap_or(v as i128);
    match dtype {
        DType::U8 | DType::I8 => vec![i as u8],
        DType::U16 | DType::I16 => (i as u16).to_le_bytes().to_vec(),
        DType::U32 | DType::I32 => (i as u32).to_le_bytes().to_vec(),
        DType::U64 | DType::I64 => (i as u64).to_le_bytes().to_vec(),
        DType::F16 => half::f16::from_f64(v).to_le_bytes().to_vec(),
        DType::Bf16 => half::bf16::from_f64(v).to_le_bytes().to_vec(),
        DType::F32 => (v as f32).to_le_bytes().to_vec(),
        DType::F64 => v.to_le_bytes().to_vec(),
    }
}

/// A YAML number as (f64, exact integer if it is one).
pub fn number(v: &Value) -> Option<(f64, Option<i128>)> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some((i as f64, Some(i as i128)))
            } else if let Some(u) = n.as_u64() {
                Some((u as f64, Some(u as i128)))
            } else {
                n.as_f64().map(|f| (f, None))
            }
        }
        Value::String(s) => match s.as_str() {
            "nan" | "NaN" => Some((f64::NAN, None)),
            "inf" | "+inf" => Some((f64::INFINITY, None)),
            "-inf" => Some((f64::NEG_INFINITY, None)),
            _ => None,
        },
        _ => None,
    }
}

pub fn initial_bytes(m: &LoadedManifest, spec: &BufferSpec) -> Result<Vec<u8>, String> {
    let n = spec.len();
    let size = spec.dtype.size();
    let forms = "zeros | { fill: X } | { iota: { start, step } } | { random: { seed, low, high } } | { values: [...] } | { npy: FILE }";
    match &spec.init {
        Value::String(s) if s == "zeros" => Ok(vec![0; n * size]),
        Value::Mapping(map) if map.len() == 1 => {
            let (k, v) = map.iter().next().unwrap();
            match k.as_str().unwrap_or("") {
                "fill" => {
                    let (f, i) = number(v).ok_or("fill needs a number")?;
                    Ok(encode_number(spec.dtype, f, i).repeat(n))
                }
                "iota" => {
                    let start = v.get("start").and_then(number).unwrap_or((0.0, Some(0)));
                    let step = v.get("step").and_then(number).unwrap_or((1.0, Some(1)));
                    let mut out = Vec::with_capacity(n * size);
                    for k in 0..n {
                        let exact = match (start.1, step.1) {
                            (Some(a), Some(b)) => Some(a + b * k as i128),
                            _ => None,
                        };
                        out.extend(encode_number(
                            spec.dtype,
                            start.0 + step.0 * k as f64,
                            exact,
                        ));
                    }
                    Ok(out)
                }
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
                        out.extend(encode_number(spec.dtype, f, e));
                    }
                    Ok(out)
                }
                "npy" => {
                    let file = v.as_str().ok_or("npy needs a file name")?;
                    let a = npy::read(&m.resolve(file))?;
                    if a.dtype.size() != size
                        || (a.dtype.is_float() != spec.dtype.is_float()
                            && spec.dtype != DType::Bf16)
                    {
                        return Err(format!(
                            "{file} holds {:?}, the buffer is {:?}",
                            a.dtype, spec.dtype
                        ));
                    }
                    if a.data.len() != n * size {
                        return Err(format!(
                            "{file} has shape {:?}, the buffer has shape {:?}",
                            a.shape, spec.shape
                        ));
                    }
                    Ok(a.data)
                }
                other => Err(format!("unknown init form `{other}`; valid forms: {forms}")),
            }
        }
        _ => Err(format!("unknown init form; valid forms: {forms}")),
    }
}

/// SplitMix64: a small, fixed generator so `random` inits are identical everywhere.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn random(spec: &BufferSpec, v: &Value) -> Result<Vec<u8>, String> {
    let seed = v.get("seed").and_then(Value::as_u64).unwrap_or(0);
    let low = v.get("low").and_then(number).map(|x| x.0).unwrap_or(0.0);
    let high = v.get("high").and_then(number).map(|x| x.0).unwrap_or(1.0);
    if high < low {
        return Err("random: high must not be below low".into());
    }
    let mut st = seed;
    let mut out = Vec::with_capacity(spec.len() * spec.dtype.size());
    for _ in 0..spec.len() {
        let r = splitmix(&mut st);
        if spec.dtype.is_float() {
            let u = (r >> 11) as f64 / (1u64 << 53) as f64;
            out.extend(encode_number(spec.dtype, low + (high - low) * u, None));
        } else {
            // Saturating: `low`/`high` may be any f64 (the integer then wraps like a C cast).
            let span = ((high - low).floor() as u128).saturating_add(1);
            let i = (low.floor() as i128).saturating_add((r as u128 % span) as i128);
            out.extend(encode_number(spec.dtype, i as f64, Some(i)));
        }
    }
    Ok(out)
}
