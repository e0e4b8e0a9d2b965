//! The manifest's `tensor_map` argument: a tiled tensor map over one of the manifest's
//! buffers, as `cuTensorMapEncodeTiled` would build it on the host, e.g.
//!
//! ```yaml
//! args:
//!   - { tensor_map: { buffer: A, dims: [K, M], box: [64, 128], swizzle: 128B } }
//! ```
//!
//! Keys: `buffer` (required), `dims` (required, innermost first), `box` (required),
//! `dtype` (default: the buffer's), `strides` (byte strides of dimensions 1.., default packed;
//! any multiple of 16 below 2^40, 0 included, as `cuTensorMapEncodeTiled` accepts — a size-1
//! dimension's stride is often given as 0), `element_strides` (default all 1; the driver
//! ignores the first, TMA having no traversal stride in dimension 0 without interleave),
//! `swizzle` (`none`, `32B`, `64B`, `128B`; default none), `oob_fill` (`zero` or its driver
//! name `none`, or `nan`; default zero). The kernel takes it as a 128-byte `.param`
//! (`const __grid_constant__ CUtensorMap`), or as a `.u64` pointer, in which case the map is
//! placed in global memory. Errors name the key path and the valid choices.

use super::{BufferSpec, DType};
use gpusim_isa::semantics::tensor_map::{TensorMap, TmaType, TMA_MAX_RANK};
use gpusim_isa::semantics::Swizzle;
use serde_norway::Value;
use std::collections::BTreeMap;

const KEYS: [&str; 8] = [
    "buffer",
    "dims",
    "box",
    "dtype",
    "strides",
    "element_strides",
    "swizzle",
    "oob_fill",
];

/// The tensor map a `{tensor_map: {...}}` argument describes; `path` prefixes error messages
/// (e.g. `args[0].tensor_map`). `addrs` and `buffers` are the manifest's buffers.
pub fn tensor_map_arg(
    v: &Value,
    path: &str,
    addrs: &BTreeMap<String, u64>,
    buffers: &BTreeMap<String, BufferSpec>,
) -> Result<TensorMap, String> {
    let Value::Mapping(m) = v else {
        return Err(format!(
            "{path}: expected a mapping with keys {}",
            KEYS.join(", ")
        ));
    };
    let mut get = BTreeMap::new();
    for (k, x) in m {
        let Some(k) = k.as_str().filter(|k| KEYS.contains(k)) else {
            return Err(format!(
                "{path}: unknown key `{}`; valid keys: {}",
                show(k),
                KEYS.join(", ")
            ));
        };
        get.insert(k, x);
    }
    let need = |k: &str| {
        get.get(k)
            .copied()
            .ok_or_else(|| format!("{path}.{k}: missing (required keys: buffer, dims, box)"))
    };
    let name = need("buffer")?
        .as_str()
        .ok_or_else(|| format!("{path}.buffer: expected a buffer name"))?;
    let (Some(&global), Some(buf)) = (addrs.get(name), buffers.get(name)) else {
        return Err(format!(
            "{path}.buffer: no buffer `{name}`; buffers: {}",
            addrs
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let dims = list(need("dims")?, &format!("{path}.dims"), 1)?;
    let rank = dims.len();
    if rank == 0 || rank > TMA_MAX_RANK {
        return Err(format!(
            "{path}.dims: a tiled tensor map has 1 to {TMA_MAX_RANK} dimensions, found {rank}"
        ));
    }
    let boxd = list(need("box")?, &format!("{path}.box"), 1)?;
    if boxd.len() != rank {
        return Err(format!(
            "{path}.box: one extent per dimension ({rank}), found {}",
            boxd.len()
        ));
    }
    let dtype = match get.get("dtype") {
        Some(d) => {
            let s = d.as_str().unwrap_or("");
            TmaType::from_name(s).ok_or_else(|| {
                let names: Vec<&str> = TmaType::ALL.iter().map(|t| t.name()).collect();
                format!(
                    "{path}.dtype: unknown type `{}`; valid: {}",
                    show(d),
                    names.join(", ")
                )
            })?
        }
        None => of_buffer(buf.dtype).ok_or_else(|| {
            format!("{path}.dtype: buffer `{name}` has no tensor-map type; give dtype")
        })?,
    };
    let mut map = TensorMap {
        global,
        dtype,
        rank,
        dims: [1; TMA_MAX_RANK],
        strides: [0; TMA_MAX_RANK - 1],
        boxd: [1; TMA_MAX_RANK],
        estrides: [1; TMA_MAX_RANK],
        swizzle: Swizzle::None,
        oob_nan: false,
    };
    map.dims[..rank].copy_from_slice(&dims);
    for (i, b) in boxd.iter().enumerate() {
        map.boxd[i] = u32::try_from(*b).unwrap_or(u32::MAX);
    }
    let mut packed = dtype.bytes();
    for i in 1..rank {
        packed = packed.saturating_mul(dims[i - 1]);
        map.strides[i - 1] = packed;
    }
    if let Some(s) = get.get("strides") {
        let s = list(s, &format!("{path}.strides"), 0)?;
        if s.len() + 1 != rank {
            return Err(format!(
                "{path}.strides: the byte strides of dimensions 1..{rank} ({} values), found {}",
                rank - 1,
                s.len()
            ));
        }
        map.strides[..rank - 1].copy_from_slice(&s);
    }
    if let Some(e) = get.get("element_strides") {
        let e = list(e, &format!("{path}.element_strides"), 1)?;
        if e.len() != rank {
            return Err(format!(
                "{path}.element_strides: one per dimension ({rank}), found {}",
                e.len()
            ));
        }
        for (i, x) in e.iter().enumerate() {
            map.estrides[i] = u32::try_from(*x).unwrap_or(u32::MAX);
        }
    }
    if let Some(s) = get.get("swizzle") {
        let name = s.as_str().map(str::to_string).unwrap_or_else(|| show(s));
        map.swizzle = Swizzle::from_name(&name).ok_or_else(|| {
            format!("{path}.swizzle: unknown mode `{name}`; valid: none, 32B, 64B, 128B")
        })?;
    }
    if let Some(f) = get.get("oob_fill") {
        map.oob_nan = match f.as_str() {
            Some("zero" | "none") => false,
            Some("nan") => true,
            _ => {
                return Err(format!(
                    "{path}.oob_fill: `{}`; valid: zero (or none), nan",
                    show(f)
                ))
            }
        };
    }
    map.validate().map_err(|e| format!("{path}: {e}"))?;
    // `cuTensorMapEncodeTiled`: "when interleave is CU_TENSOR_MAP_INTERLEAVE_NONE, the first
    // element of [elementStrides] is ignored since TMA doesn't support the stride for
    // dimension zero" (checked to be in 1..=8 above, then dropped).
    map.estrides[0] = 1;
    // The map may describe less than the buffer, never more.
    let last: u64 = (0..rank)
        .map(|i| (map.dims[i] - 1).saturating_mul(map.stride(i)))
        .sum::<u64>()
        + dtype.bytes();
    let have = (buf.len() * buf.dtype.size()) as u64;
    if last > have {
        return Err(format!(
            "{path}: the tensor spans {last} bytes but buffer `{name}` has {have}"
        ));
    }
    Ok(map)
}

/// A YAML value on one line, for messages.
fn show(v: &Value) -> String {
    serde_norway::to_string(v)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// A list of integers, each at least `min` (0 or 1).
fn list(v: &Value, path: &str, min: u64) -> Result<Vec<u64>, String> {
    let what = if min == 0 {
        "non-negative integer"
    } else {
        "positive integer"
    };
    let Value::Sequence(items) = v else {
        return Err(format!("{path}: expected a list of {what}s"));
    };
    items
        .iter()
        .map(|x| {
            x.as_u64()
                .filter(|&n| n >= min)
                .ok_or_else(|| format!("{path}: `{}` is not a {what}", show(x)))
        })
        .collect()
}

fn of_buffer(d: DType) -> Option<TmaType> {
    Some(match d {
        DType::U8 | DType::I8 => TmaType::U8,
        DType::U16 | DType::I16 => TmaType::U16,
        DType::U32 => TmaType::U32,
        DType::I32 => TmaType::S32,
        DType::U64 => TmaType::U64,
        DType::I64 => TmaType::S64,
        DType::F16 => TmaType::F16,
        DType::Bf16 => TmaType::Bf16,
        DType::F32 => TmaType::F32,
        DType::F64 => TmaType::F64,
    })
}
