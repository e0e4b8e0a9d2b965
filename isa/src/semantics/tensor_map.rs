//! Tensor maps (the `CUtensorMap` a TMA copy names, PTX ISA 9.0 §5.5 "Tensor" and
//! §9.7.9.25.5 `cp.async.bulk.tensor`) and the tile-mode box addressing they define.
//!
//! PTX keeps the 128-byte object opaque (the driver's `cuTensorMapEncodeTiled` fills it), so
//! gpusim has its own encoding, written by the launch manifest's `tensor_map` argument and read
//! back by every TMA instruction. Dimension 0 is the innermost (contiguous) one, as in the
//! driver API. A box element at box index (j0, j1, …) comes from global coordinates
//! `c_i + j_i · elementStride_i`; elements outside the tensor read as zero (or the NaN fill)
//! and are never written by a store. In shared memory the box is packed innermost-first and
//! the byte offsets are swizzled on the shared address bits (`swizzle`), the layout `wgmma`
//! descriptors read.

use super::swizzle::{swizzle, Swizzle};

/// Size of the encoded object (`CUtensorMap` is 128 bytes, 64-byte aligned).
pub const TENSOR_MAP_BYTES: usize = 128;
/// Largest rank a tiled tensor map has.
pub const TMA_MAX_RANK: usize = 5;
const MAGIC: u32 = 0x5041_4d54; // "TMAP"

/// Element types of a tensor map (`CUtensorMapDataType`), with what a reduce-add needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaType {
    U8,
    U16,
    U32,
    S32,
    U64,
    S64,
    F16,
    F32,
    F64,
    Bf16,
    Tf32,
}

impl TmaType {
    pub const ALL: [TmaType; 11] = [
        TmaType::U8,
        TmaType::U16,
        TmaType::U32,
        TmaType::S32,
        TmaType::U64,
        TmaType::S64,
        TmaType::F16,
        TmaType::F32,
        TmaType::F64,
        TmaType::Bf16,
        TmaType::Tf32,
    ];
    pub fn name(self) -> &'static str {
        match self {
            TmaType::U8 => "u8",
            TmaType::U16 => "u16",
            TmaType::U32 => "u32",
            TmaType::S32 => "s32",
            TmaType::U64 => "u64",
            TmaType::S64 => "s64",
            TmaType::F16 => "f16",
            TmaType::F32 => "f32",
            TmaType::F64 => "f64",
            TmaType::Bf16 => "bf16",
            TmaType::Tf32 => "tf32",
        }
    }
    pub fn from_name(s: &str) -> Option<TmaType> {
        TmaType::ALL.into_iter().find(|t| t.name() == s)
    }
    pub fn bytes(self) -> u64 {
        match self {
            TmaType::U8 => 1,
            TmaType::U16 | TmaType::F16 | TmaType::Bf16 => 2,
            TmaType::U32 | TmaType::S32 | TmaType::F32 | TmaType::Tf32 => 4,
            TmaType::U64 | TmaType::S64 | TmaType::F64 => 8,
        }
    }
    fn code(self) -> u8 {
        TmaType::ALL.iter().position(|&t| t == self).unwrap_or(0) as u8
    }
}

/// A decoded tensor map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMap {
    /// Global address of element (0, 0, …).
    pub global: u64,
    pub dtype: TmaType,
    pub rank: usize,
    /// Extent of each dimension, innermost first.
    pub dims: [u64; TMA_MAX_RANK],
    /// Byte stride of dimensions 1.. (`strides[i]` is that of dimension i + 1).
    pub strides: [u64; TMA_MAX_RANK - 1],
    /// Box extent of each dimension (1 ..= 256).
    pub boxd: [u32; TMA_MAX_RANK],
    /// Traversal stride of each dimension (1 ..= 8).
    pub estrides: [u32; TMA_MAX_RANK],
    pub swizzle: Swizzle,
    /// Out-of-bound elements read as NaN (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA`)
    /// rather than zero.
    pub oob_nan: bool,
}

fn swizzle_code(s: Swizzle) -> u8 {
    match s {
        Swizzle::None => 0,
        Swizzle::B32 => 1,
        Swizzle::B64 => 2,
        Swizzle::B128 => 3,
    }
}

fn swizzle_of(code: u8) -> Option<Swizzle> {
    Some(match code {
        0 => Swizzle::None,
        1 => Swizzle::B32,
        2 => Swizzle::B64,
        3 => Swizzle::B128,
        _ => return None,
    })
}

fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn rd64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

impl TensorMap {
    /// Elements the box holds in dimension i (a traversal stride skips elements).
    pub fn box_extent(&self, i: usize) -> u64 {
        (self.boxd[i] as u64).div_ceil(self.estrides[i] as u64)
    }

    /// Bytes the box occupies in shared memory (also the transaction bytes a load signals,
    /// out-of-bound elements included).
    pub fn box_bytes(&self) -> u64 {
        (0..self.rank).map(|i| self.box_extent(i)).product::<u64>() * self.dtype.bytes()
    }

    /// Byte stride of dimension i in global memory.
    pub fn stride(&self, i: usize) -> u64 {
        if i == 0 {
            self.dtype.bytes()
        } else {
            self.strides[i - 1]
        }
    }

    /// The rules `cuTensorMapEncodeTiled` enforces (CUDA driver API), as messages.
    pub fn validate(&self) -> Result<(), String> {
        if self.rank == 0 || self.rank > TMA_MAX_RANK {
            return Err(format!("rank {} is outside 1..={TMA_MAX_RANK}", self.rank));
        }
        if self.global % 16 != 0 {
            return Err(format!(
                "global address {:#x} is not 16-byte aligned",
                self.global
            ));
        }
        for i in 0..self.rank {
            if self.dims[i] == 0 || self.dims[i] > 1 << 32 {
                return Err(format!("dims[{i}] = {} is outside 1..=2^32", self.dims[i]));
            }
            if self.boxd[i] == 0 || self.boxd[i] > 256 {
                return Err(format!("box[{i}] = {} is outside 1..=256", self.boxd[i]));
            }
            if self.estrides[i] == 0 || self.estrides[i] > 8 {
                return Err(format!(
                    "element_strides[{i}] = {} is outside 1..=8",
                    self.estrides[i]
                ));
            }
        }
        for i in 1..self.rank {
            let s = self.strides[i - 1];
            if s % 16 != 0 || s >= 1 << 40 {
                return Err(format!(
                    "strides[{}] = {s} must be a multiple of 16 below 2^40",
                    i - 1
                ));
            }
        }
        let inner = self.boxd[0] as u64 * self.dtype.bytes();
        if inner % 16 != 0 {
            return Err(format!(
                "the box's inner dimension is {inner} bytes; it must be a multiple of 16"
            ));
        }
        if self.swizzle != Swizzle::None && inner > self.swizzle.bytes() {
            return Err(format!(
                "the box's inner dimension is {inner} bytes, more than the {}-byte swizzle span",
                self.swizzle.bytes()
            ));
        }
        Ok(())
    }

    pub fn encode(&self) -> [u8; TENSOR_MAP_BYTES] {
        let mut b = [0u8; TENSOR_MAP_BYTES];
        b[0..8].copy_from_slice(&self.global.to_le_bytes());
        b[8] = self.rank as u8;
        b[9] = self.dtype.code();
        b[10] = swizzle_code(self.swizzle);
        b[11] = self.oob_nan as u8;
        for i in 0..TMA_MAX_RANK {
            b[16 + 8 * i..24 + 8 * i].copy_from_slice(&self.dims[i].to_le_bytes());
        }
        for i in 0..TMA_MAX_RANK - 1 {
            b[56 + 8 * i..64 + 8 * i].copy_from_slice(&self.strides[i].to_le_bytes());
        }
        for i in 0..TMA_MAX_RANK {
            // Box and traversal strides fit 16 bits each (≤ 256, ≤ 8).
            b[88 + 2 * i..90 + 2 * i].copy_from_slice(&(self.boxd[i] as u16).to_le_bytes());
            b[98 + 2 * i..100 + 2 * i].copy_from_slice(&(self.estrides[i] as u16).to_le_bytes());
        }
        b[124..128].copy_from_slice(&MAGIC.to_le_bytes());
        b
    }

    /// Decode the 128 bytes at a TMA instruction's tensor-map address; anything the manifest's
    /// `tensor_map` argument did not write is an error.
    pub fn decode(b: &[u8]) -> Result<TensorMap, String> {
        if b.len() < TENSOR_MAP_BYTES || rd32(b, 124) != MAGIC {
            return Err(
                "the bytes there are not a tensor map (pass one with a `tensor_map` argument)"
                    .into(),
            );
        }
        let dtype = *TmaType::ALL
            .get(b[9] as usize)
            .ok_or("corrupt tensor map: data type")?;
        let swizzle = swizzle_of(b[10]).ok_or("corrupt tensor map: swizzle")?;
        let mut m = TensorMap {
            global: rd64(b, 0),
            dtype,
            rank: b[8] as usize,
            dims: [0; TMA_MAX_RANK],
            strides: [0; TMA_MAX_RANK - 1],
            boxd: [0; TMA_MAX_RANK],
            estrides: [0; TMA_MAX_RANK],
            swizzle,
            oob_nan: b[11] != 0,
        };
        for i in 0..TMA_MAX_RANK {
            m.dims[i] = rd64(b, 16 + 8 * i);
            m.boxd[i] = u16::from_le_bytes([b[88 + 2 * i], b[89 + 2 * i]]) as u32;
            m.estrides[i] = u16::from_le_bytes([b[98 + 2 * i], b[99 + 2 * i]]) as u32;
        }
        for i in 0..TMA_MAX_RANK - 1 {
            m.strides[i] = rd64(b, 56 + 8 * i);
        }
        m.validate()
            .map_err(|e| format!("corrupt tensor map: {e}"))?;
        Ok(m)
    }

    /// Every element of the box at coordinates `coords` (one per dimension), in shared-memory
    /// order: (byte offset from the box's shared base before swizzling, global address or None
    /// when out of bounds). `f` is called once per element.
    pub fn for_each_element(&self, coords: &[i64], mut f: impl FnMut(u64, Option<u64>)) {
        let r = self.rank;
        let ext: Vec<u64> = (0..r).map(|i| self.box_extent(i)).collect();
        let total: u64 = ext.iter().product();
        let es = self.dtype.bytes();
        let mut j = [0u64; TMA_MAX_RANK];
        for n in 0..total {
            let mut addr = Some(self.global);
            for i in 0..r {
                let g = coords[i] + (j[i] * self.estrides[i] as u64) as i64;
                addr = match addr {
                    Some(a) if g >= 0 && (g as u64) < self.dims[i] => {
                        Some(a + g as u64 * self.stride(i))
                    }
                    _ => None,
                };
            }
            f(n * es, addr);
            self.next_index(&mut j, 0);
        }
    }

    /// The box's in-bound elements as contiguous runs: (byte offset in the box's shared
    /// image, global address, bytes). Out-of-bound elements belong to no run. With a
    /// traversal stride of 1 in dimension 0 a run is the in-bound part of a box row; otherwise
    /// every element is its own run.
    pub fn for_each_run(&self, coords: &[i64], mut f: impl FnMut(u64, u64, u64)) {
        let es = self.dtype.bytes();
        if self.estrides[0] != 1 {
            self.for_each_element(coords, |off, a| {
                if let Some(a) = a {
                    f(off, a, es)
                }
            });
            return;
        }
        let r = self.rank;
        let ext0 = self.box_extent(0) as i64;
        let rows: u64 = (1..r).map(|i| self.box_extent(i)).product();
        let row_bytes = ext0 as u64 * es;
        let lo = coords[0].max(0);
        let hi = (coords[0] + ext0).min(self.dims[0] as i64);
        let mut j = [0u64; TMA_MAX_RANK];
        for row in 0..rows {
            let mut base = Some(self.global);
            for i in 1..r {
                let g = coords[i] + (j[i] * self.estrides[i] as u64) as i64;
                base = match base {
                    Some(b) if g >= 0 && (g as u64) < self.dims[i] => {
                        Some(b + g as u64 * self.stride(i))
                    }
                    _ => None,
                };
            }
            if let (Some(b), true) = (base, lo < hi) {
                let first = (lo - coords[0]) as u64;
                f(
                    row * row_bytes + first * es,
                    b + lo as u64 * es,
                    (hi - lo) as u64 * es,
                );
            }
            self.next_index(&mut j, 1);
        }
    }

    /// Advance the box index `j` (dimensions `from`.. like an odometer, innermost first).
    fn next_index(&self, j: &mut [u64; TMA_MAX_RANK], from: usize) {
        for (i, x) in j.iter_mut().enumerate().take(self.rank).skip(from) {
            *x += 1;
            if *x < self.box_extent(i) {
                return;
            }
            *x = 0;
        }
    }

    /// Shared address of the byte at `offset` of a box whose base is `base` (an address in the
    /// CTA's shared window, from 0). The swizzle acts on the address bits, as `wgmma`'s does
    /// (`semantics::swizzle`): the pattern repeats on the window's 1024-, 512- or 256-byte
    /// boundaries wherever the (128-byte aligned) box starts, and a descriptor starting at the
    /// box reads it with base offset 0.
    pub fn shared_addr(&self, base: u64, offset: u64) -> u64 {
        swizzle(self.swizzle, base + offset)
    }
}
