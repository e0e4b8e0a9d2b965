//! A launch's kernel parameters before they become bytes: what each `.param` of the entry
//! receives (a scalar, a buffer's address, a tensor map by value or behind a pointer). The
//! simulator lays them out (`lay_out`); `gpusim export` writes them for a real GPU, where the
//! addresses and tensor maps are rebuilt by the driver (`crate::correlate::export`).

use crate::mem::GlobalMemory;
use gpusim_isa::semantics::tensor_map::TensorMap;

/// What one parameter receives.
#[derive(Clone, Debug)]
pub enum ParamValue {
    /// The low `size` bytes of these bits, little-endian (a scalar of the parameter's type).
    Bits(u64),
    /// The 64-bit device address of a buffer.
    Pointer { buffer: String, addr: u64 },
    /// A `CUtensorMap` over `buffer`: the parameter holds the 128-byte map itself
    /// (`const __grid_constant__ CUtensorMap`), or, when `by_pointer`, the address of a copy
    /// placed in device memory.
    TensorMap {
        buffer: String,
        map: TensorMap,
        by_pointer: bool,
    },
}

/// One parameter: its byte offset and size in the parameter space, and its value.
#[derive(Clone, Debug)]
pub struct Param {
    pub offset: usize,
    pub size: usize,
    pub value: ParamValue,
}

/// The parameter bytes of `params`; a tensor map passed by pointer is placed in `global`
/// (labelled with its parameter's index).
pub fn lay_out(params: &[Param], global: &mut GlobalMemory) -> Vec<u8> {
    let end = params.iter().map(|p| p.offset + p.size).max().unwrap_or(0);
    let mut out = vec![0; end];
    for (i, p) in params.iter().enumerate() {
        let bits = match &p.value {
            ParamValue::Bits(b) => *b,
            ParamValue::Pointer { addr, .. } => *addr,
            ParamValue::TensorMap {
                map,
                by_pointer: false,
                ..
            } => {
                let bytes = map.encode();
                out[p.offset..p.offset + bytes.len()].copy_from_slice(&bytes);
                continue;
            }
            ParamValue::TensorMap { map, .. } => {
                global.alloc(&format!("(tensor map of args[{i}])"), &map.encode())
            }
        };
        let n = p.size.min(8);
        out[p.offset..p.offset + n].copy_from_slice(&bits.to_le_bytes()[..n]);
    }
    out
}
