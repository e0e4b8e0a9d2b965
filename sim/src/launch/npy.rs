//! NumPy `.npy` files (format versions 1.0–3.0), read and written byte-exactly.

use super::DType;
use std::path::Path;

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
    let n: usize = shape.iter().product();
    let data = &bytes[hstart + hlen..];
    let need = n * dtype.size();
    if data.len() < need {
        return Err(format!(
            "data has {} bytes, shape {:?} of {} needs {need}",
            data.len(),
            shape,
            descr
        ));
    }
    Ok(NpyArray {
        dtype,
        shape,
        data: data[..need].to_vec(),
    })
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
    }
}
