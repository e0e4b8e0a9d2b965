//! NumPy `.npy` files (format versions 1.0–3.0), read and written byte-exactly.

use super::DType;
use std::path::Path;

#[derive(Debug)]
pub struct NpyArray {
    pub dtype: DType,
    pub shape: Vec<usize>,
    /// Little-endian element bytes, C order.
    pub data: Vec<u8>,
}

fn descr_of(d: DType) -> &'static str {
    match d {
        DType::U8 => "|u1",
        DType::I8 => "|i1",
        DType::U16 | DType::Bf16 => "<u2",
        DType::I16 => "<i2",
        DType::U32 => "<u4",
        DType::I32 => "<i4",
        DType::U64 => "<u8",
        DType::I64 => "<i8",
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
    }
}

fn dtype_of(descr: &str) -> Option<DType> {
    Some(match descr {
        "|u1" | "<u1" | "|b1" => DType::U8,
        "|i1" | "<i1" => DType::I8,
        "<u2" => DType::U16,
        "<i2" => DType::I16,
        "<u4" => DType::U32,
        "<i4" => DType::I32,
        "<u8" => DType::U64,
        "<i8" => DType::I64,
        "<f2" => DType::F16,
        "<f4" => DType::F32,
        "<f8" => DType::F64,
        _ => return None,
    })
}

pub fn read(path: &Path) -> Result<NpyArray, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn parse(bytes: &[u8]) -> Result<NpyArray, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (bad magic)".into());
    }
    let (hlen, hstart) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes
        .get(hstart..hstart + hlen)
        .ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "non-text .npy header")?;
    let descr = dict_value(header, "descr").ok_or("header has no descr")?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let dtype = dtype_of(descr)
        .ok_or_else(|| format!("unsupported dtype `{descr}` (use little-endian numeric types)"))?;
    let fortran = dict_value(header, "fortran_order").ok_or("header has no fortran_order")?;
    if fortran.trim() == "True" {
        return Err(
            "Fortran-ordered arrays are not supported; save with np.ascontiguousarray".into(),
        );
    }
    let shape_text = dict_value(header, "shape").ok_or("header has no shape")?;
    let shape: Vec<usize> = shape_text
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| format!("bad shape `{shape_text}`"))
        })
        .collect::<Result<_, _>>()?;
    let data = &bytes[hstart + hlen..];
    let need = shape
        .iter()
        .try_fold(dtype.size(), |a, &d| a.checked_mul(d))
        .ok_or_else(|| format!("shape {} is too large", shape_text.trim()))?;
    if data.len() != need {
        let what = if data.len() < need {
            "is truncated"
        } else {
            "has trailing bytes"
        };
        return Err(format!(
            "{what}: its data is {} bytes, shape {} of {descr} needs {need}",
            data.len(),
            shape_text.trim(),
        ));
    }
    Ok(NpyArray {
        dtype,
        shape,
        data: data.to_vec(),
    })
}

/// Whether an array read from `path` is what a buffer of `dtype` and `shape` holds: the same
/// dtype (bf16 is stored as `<u2`, as `write` does) and the same shape, not merely as many
/// elements. The error says which differs: expected against found.
pub fn expect_layout(
    path: &Path,
    a: &NpyArray,
    dtype: DType,
    shape: &[usize],
) -> Result<(), String> {
    let same_dtype = a.dtype == dtype || (dtype == DType::Bf16 && a.dtype == DType::U16);
    if !same_dtype {
        return Err(format!(
            "{}: wrong dtype: expected {} ({}), found {} ({})",
            path.display(),
            dtype.name(),
            descr_of(dtype),
            a.dtype.name(),
            descr_of(a.dtype)
        ));
    }
    if a.shape != shape {
        let n: usize = a.shape.iter().product();
        let same = if n == shape.iter().product::<usize>() {
            format!(" (the same {n} elements, in another shape)")
        } else {
            String::new()
        };
        return Err(format!(
            "{}: wrong shape: expected {:?}, found {:?}{same}",
            path.display(),
            shape,
            a.shape
        ));
    }
    Ok(())
}

/// The text of `'key': value` in a header dict (value up to the next top-level comma).
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat1 = format!("'{key}':");
    let start = header.find(&pat1)? + pat1.len();
    let rest = &header[start..];
    let mut depth = 0;
    for (i, ch) in rest.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

pub fn write(path: &Path, dtype: DType, shape: &[usize], data: &[u8]) -> Result<(), String> {
    std::fs::write(path, encode(dtype, shape, data))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub fn encode(dtype: DType, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let shape_txt = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_txt}, }}",
        descr_of(dtype)
    );
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let data: Vec<u8> = [1.0f32, -2.5, 3.25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let enc = encode(DType::F32, &[3], &data);
        assert_eq!(enc.len() % 64, 12); // header padded to 64 bytes, then 12 bytes of data
        let a = parse(&enc).unwrap();
        assert_eq!(a.shape, vec![3]);
        assert_eq!(a.data, data);
        assert!(parse(&enc[..20]).is_err());
        assert!(parse(b"hello").is_err());
        let mut long = enc.clone();
        long.push(0);
        assert!(parse(&long).unwrap_err().contains("trailing"));
        assert!(parse(&enc[..enc.len() - 1])
            .unwrap_err()
            .contains("truncated"));
    }
}
