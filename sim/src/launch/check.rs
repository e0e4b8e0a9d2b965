//! Checks: compare a buffer with expected values (exact for integers, rtol/atol for floats).

use super::init::{encode_number, number};
use super::{npy, Check, DType, LoadedManifest};

#[derive(Debug)]
pub struct CheckFailure {
    pub buffer: String,
    pub mismatches: usize,
    /// The first few mismatches: (index, got, expected).
    pub first: Vec<(usize, String, String)>,
}

fn element(dtype: DType, b: &[u8]) -> (f64, i128) {
    match dtype {
        DType::U8 => (b[0] as f64, b[0] as i128),
        DType::I8 => (b[0] as i8 as f64, b[0] as i8 as i128),
        DType::U16 => {
            let v = u16::from_le_bytes([b[0], b[1]]);
            (v as f64, v as i128)
        }
        DType::I16 => {
            let v = i16::from_le_bytes([b[0], b[1]]);
            (v as f64, v as i128)
        }
        DType::U32 => {
            let v = u32::from_le_bytes(b[..4].try_into().unwrap());
            (v as f64, v as i128)
        }
        DType::I32 => {
            let v = i32::from_le_bytes(b[..4].try_into().unwrap());
            (v as f64, v as i128)
        }
        DType::U64 => {
            let v = u64::from_le_bytes(b[..8].try_into().unwrap());
            (v as f64, v as i128)
        }
        DType::I64 => {
            let v = i64::from_le_bytes(b[..8].try_into().unwrap());
            (v as f64, v as i128)
        }
        DType::F16 => (half::f16::from_le_bytes([b[0], b[1]]).to_f64(), 0),
        DType::Bf16 => (half::bf16::from_le_bytes([b[0], b[1]]).to_f64(), 0),
        DType::F32 => (f32::from_le_bytes(b[..4].try_into().unwrap()) as f64, 0),
        DType::F64 => (f64::from_le_bytes(b[..8].try_into().unwrap()), 0),
    }
}

fn show(dtype: DType, v: (f64, i128)) -> String {
    if dtype.is_float() {
        format!("{}", v.0)
    } else {
        format!("{}", v.1)
    }
}

/// The bytes a check expects of a buffer of `dtype` and `shape`: its `values` (each fitting
/// the dtype, as many as the buffer holds) or its `.npy` (the same dtype and shape). Read
/// before anything is simulated, so a bad check is found first.
pub fn expected_bytes(
    m: &LoadedManifest,
    c: &Check,
    dtype: DType,
    shape: &[usize],
) -> Result<Vec<u8>, String> {
    if let Some(file) = &c.npy {
        let path = m.resolve(file);
        let a = npy::read(&path)?;
        npy::expect_layout(&path, &a, dtype, shape)?;
        return Ok(a.data);
    }
    let n: usize = shape.iter().product();
    expected_values(c, dtype, shape, n).map_err(|(k, e)| match k {
        Some(k) => format!("values[{k}]: {e}"),
        None => e,
    })
}

/// A check's `values` as bytes of `dtype`: `n` of them, each fitting the dtype. The error
/// names the element (`Some(index)`) where one is at fault.
pub(super) fn expected_values(
    c: &Check,
    dtype: DType,
    shape: &[usize],
    n: usize,
) -> Result<Vec<u8>, (Option<usize>, String)> {
    let vals = c.values.as_deref().unwrap_or_default();
    if vals.len() != n {
        return Err((
            None,
            format!(
                "{} values for buffer `{}`, whose shape {shape:?} holds {n}",
                vals.len(),
                c.buffer
            ),
        ));
    }
    let mut out = Vec::with_capacity(n * dtype.size());
    for (i, v) in vals.iter().enumerate() {
        let (f, e) = number(v).ok_or_else(|| (Some(i), "not a number".to_string()))?;
        out.extend_from_slice(&encode_number(dtype, f, e).map_err(|e| (Some(i), e))?);
    }
    Ok(out)
}

/// Compare `got` (the buffer's bytes) with the check's expectation.
pub fn check_buffer(
    m: &LoadedManifest,
    c: &Check,
    dtype: DType,
    got: &[u8],
) -> Result<Option<CheckFailure>, String> {
    let shape = m
        .manifest
        .buffers
        .get(&c.buffer)
        .map(|b| b.shape.clone())
        .unwrap_or_else(|| vec![got.len() / dtype.size()]);
    let expected = expected_bytes(m, c, dtype, &shape)?;
    Ok(compare(c, dtype, &expected, got))
}

/// Compare `got` with `expected` (both of `dtype`, the same length): exact for integers,
/// `|got − expected| ≤ atol + rtol·|expected|` for floats.
pub fn compare(c: &Check, dtype: DType, expected: &[u8], got: &[u8]) -> Option<CheckFailure> {
    let size = dtype.size();
    let rtol = c.rtol.unwrap_or(0.0);
    let atol = c.atol.unwrap_or(0.0);
    let mut fail = CheckFailure {
        buffer: c.buffer.clone(),
        mismatches: 0,
        first: Vec::new(),
    };
    for (i, (g, e)) in got.chunks(size).zip(expected.chunks(size)).enumerate() {
        let (gv, ev) = (element(dtype, g), element(dtype, e));
        let ok = if dtype.is_float() {
            (gv.0.is_nan() && ev.0.is_nan())
                || gv.0 == ev.0
                || (gv.0 - ev.0).abs() <= atol + rtol * ev.0.abs()
        } else {
            gv.1 == ev.1
        };
        if !ok {
            fail.mismatches += 1;
            if fail.first.len() < 8 {
                fail.first.push((i, show(dtype, gv), show(dtype, ev)));
            }
        }
    }
    (fail.mismatches > 0).then_some(fail)
}
