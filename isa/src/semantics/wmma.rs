//! `wmma.load`, `wmma.mma` and `wmma.store` as pure functions of the whole warp (PTX ISA 9.0
//! §9.7.14.4: §9.7.14.4.1 "Matrix Fragments for WMMA", §9.7.14.4.2 "Matrix Storage for
//! WMMA", §9.7.14.4.3–6 the instructions).
//!
//! PTX leaves the distribution of a `wmma` fragment over the lanes unspecified; gpusim uses
//! the `mma.sync` layouts tiled over the shape, as sm_80 does. With `g = lane >> 2` and
//! `t = lane % 4`, distinct element i of a tile sits at (row, column) of the tile:
//!
//! | matrix | element types | tile | (row, column) of element i |
//! |---|---|---|---|
//! | A | f16, bf16 | 16×16 (m16n8k16 A) | (g + 8·bit1(i), 2t + bit0(i) + 8·[i ≥ 4]) |
//! | A | f16, bf16 | 8×16 (its top half, M = 8) | (g, 2t + bit0(i) + 8·bit1(i)) |
//! | A | tf32 | 16×8 (m16n8k8 .tf32 A) | (g + 8·bit0(i), t + 4·[i ≥ 2]) |
//! | A | s8, u8 | 16×16 (integer m16n8k16 A) | (g + 8·[i ≥ 4], 4t + (i & 3)) |
//! | A | s8, u8 | 8×16 (m8n8k16 A, M = 8) | (g, 4t + i) |
//! | B | f16, bf16 | 16×8 (m16n8k16 B) | (2t + bit0(i) + 8·[i ≥ 2], g) |
//! | B | tf32 | 8×8 (m16n8k8 .tf32 B) | (t + 4i, g) |
//! | B | s8, u8 | 16×8 (integer m16n8k16 B) | (4t + i, g) |
//! | C, D | f16, f32, s32 | 16×8 (m16n8k16 C) | (g + 8·[i ≥ 2], 2t + bit0(i)) |
//! | C, D | f16, f32, s32 | 8×8 (m8n8k16 C, M = 8) | (g, 2t + i) |
//!
//! A has one tile per 16 (or 8) rows, stacked downwards; B one per 8 columns, left to right;
//! C/D tiles go row by row over the (M / tile rows) × (N / 8) grid. A lane's distinct
//! elements are its first tile's, then its second's, and so on. Elements are packed into the
//! `.b32` registers in order, low bits first: four `.s8`/`.u8`, two `.f16`/`.bf16`, one
//! `.tf32`/`.f32`/`.s32` per register. PTX gives `.f16` multiplicands eight registers for
//! every shape, more than the distinct elements fill (except A of m32n8k16 and B of
//! m8n32k16): register r then holds a copy of register r mod (distinct registers), and
//! `wmma.mma` reads the distinct ones only.
//!
//! The fragments are the same whatever the memory layout: `.row`/`.col` and `stride` only
//! select the addresses (`offset`), so `wmma.mma`'s `.alayout`/`.blayout` do not change the
//! arithmetic.
//!
//! **Numerics** are those of `mma.sync` (`semantics::mma`, `semantics::mma_int`): every
//! element converts exactly to f64; D[i][j] = C[i][j] + A[i][0]·B[0][j] + … + A[i][K−1]·B[K−1][j]
//! summed in f64 in that order and rounded once, to nearest even, to `.f32` or `.f16`; a NaN
//! result is the canonical NaN (0x7FFFFFFF, 0x7FFF); `.tf32` ignores the low 13 bits of its
//! registers. The legacy floating-point `.satfinite` (PTX ISA ≤ 6.4) turns ±∞ results into
//! ±the largest finite value and leaves NaN a NaN (gpusim's choice; PTX removed the modifier).
//! Integer forms are exact in i64: wrapping modulo 2^32, or clamped to the s32 range with
//! `.satfinite`.

use super::mma::MMA_LANES;
use super::rounding::{self, Mode, Val};
use crate::ir::{MatLayout, WmmaFrag, WmmaShape, WmmaType};
use half::{bf16, f16};

/// The most registers one lane's `wmma` fragment takes.
pub const WMMA_MAX_REGS: usize = 8;

/// Each lane's registers of one fragment (the first `wmma_regs` are meaningful).
pub type Fragments = [[u64; WMMA_MAX_REGS]; MMA_LANES];

/// Whether `ty` is a multiplicand (A, B) element type of `shape`.
fn multiplicand(shape: WmmaShape, ty: WmmaType) -> bool {
    match shape {
        WmmaShape::M16n16k8 => ty == WmmaType::Tf32,
        _ => matches!(
            ty,
            WmmaType::F16 | WmmaType::Bf16 | WmmaType::S8 | WmmaType::U8
        ),
    }
}

/// Whether `ty` is an accumulator (C, D) element type of `shape`.
fn accumulator(shape: WmmaShape, ty: WmmaType) -> bool {
    match shape {
        WmmaShape::M16n16k8 => ty == WmmaType::F32,
        _ => matches!(ty, WmmaType::F16 | WmmaType::F32 | WmmaType::S32),
    }
}

/// (rows, columns) of the matrix `frag` of `shape` (C stands for D too).
pub fn wmma_dims(frag: WmmaFrag, shape: WmmaShape) -> (usize, usize) {
    let (m, n, k) = shape.mnk();
    match frag {
        WmmaFrag::A => (m, k),
        WmmaFrag::B => (k, n),
        WmmaFrag::C => (m, n),
    }
}

/// Distinct elements per lane of `frag`: a 32nd of the matrix.
fn distinct(frag: WmmaFrag, shape: WmmaShape) -> usize {
    let (r, c) = wmma_dims(frag, shape);
    r * c / MMA_LANES
}

/// Elements of `ty` per `.b32` register.
fn per_reg(ty: WmmaType) -> usize {
    4 / ty.size() as usize
}

/// Registers per lane of fragment `frag` (C also stands for D) of `shape` with elements of
/// `ty` (PTX ISA 9.0 §9.7.14.4.1); None for a combination PTX does not define.
pub fn wmma_regs(frag: WmmaFrag, shape: WmmaShape, ty: WmmaType) -> Option<usize> {
    let ok = match frag {
        WmmaFrag::A | WmmaFrag::B => multiplicand(shape, ty),
        WmmaFrag::C => accumulator(shape, ty),
    };
    if !ok {
        return None;
    }
    if frag != WmmaFrag::C && ty == WmmaType::F16 {
        return Some(WMMA_MAX_REGS);
    }
    Some(distinct(frag, shape) / per_reg(ty))
}

/// (row, column) in the matrix `frag` of distinct element `e` of `lane`'s fragment (`e` below
/// the distinct count, M·K/32, K·N/32 or M·N/32; see the module table).
pub fn wmma_position(
    frag: WmmaFrag,
    shape: WmmaShape,
    ty: WmmaType,
    lane: usize,
    e: usize,
) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    let (m, n, k) = shape.mnk();
    let int = matches!(ty, WmmaType::S8 | WmmaType::U8);
    match frag {
        WmmaFrag::A => {
            if ty == WmmaType::Tf32 {
                let i = e;
                return (g + 8 * (i & 1), t + 4 * (i >> 1));
            }
            let rows = m.min(16);
            let per_tile = rows * k / MMA_LANES;
            let (tile, i) = (e / per_tile, e % per_tile);
            let (r, c) = match (rows, int) {
                (16, false) => (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)),
                (_, false) => (g, 2 * t + (i & 1) + 8 * (i >> 1)),
                (16, true) => (g + 8 * (i >> 2), 4 * t + (i & 3)),
                (_, true) => (g, 4 * t + i),
            };
            (16 * tile + r, c)
        }
        WmmaFrag::B => {
            let per_tile = k * 8 / MMA_LANES;
            let (tile, i) = (e / per_tile, e % per_tile);
            let (r, c) = if ty == WmmaType::Tf32 {
                (t + 4 * i, g)
            } else if int {
                (4 * t + i, g)
            } else {
                (2 * t + (i & 1) + 8 * (i >> 1), g)
            };
            (r, 8 * tile + c)
        }
        WmmaFrag::C => {
            let rows = m.min(16);
            let per_tile = rows * 8 / MMA_LANES;
            let (tile, i) = (e / per_tile, e % per_tile);
            let (tr, tc) = (tile / (n / 8), tile % (n / 8));
            let (r, c) = if rows == 16 {
                (g + 8 * (i >> 1), 2 * t + (i & 1))
            } else {
                (g, 2 * t + i)
            };
            (rows * tr + r, 8 * tc + c)
        }
    }
}

/// `lane`'s distinct elements of `frag` as (row, column), in fragment order. Empty for a
/// combination `wmma_regs` rejects.
pub fn wmma_elements(
    frag: WmmaFrag,
    shape: WmmaShape,
    ty: WmmaType,
    lane: usize,
) -> Vec<(usize, usize)> {
    if wmma_regs(frag, shape, ty).is_none() {
        return Vec::new();
    }
    (0..distinct(frag, shape))
        .map(|e| wmma_position(frag, shape, ty, lane, e))
        .collect()
}

/// The registers holding `vals`, a lane's distinct element bit patterns in fragment order
/// (the copies of `.f16` multiplicands included).
pub fn wmma_pack(
    frag: WmmaFrag,
    shape: WmmaShape,
    ty: WmmaType,
    vals: &[u64],
) -> [u64; WMMA_MAX_REGS] {
    let mut regs = [0u64; WMMA_MAX_REGS];
    let Some(n) = wmma_regs(frag, shape, ty) else {
        return regs;
    };
    let (epr, bits) = (per_reg(ty), 8 * ty.size());
    let mask = (1u64 << bits) - 1;
    for (e, &v) in vals.iter().enumerate().take(distinct(frag, shape)) {
        regs[e / epr] |= (v & mask) << (bits as usize * (e % epr));
    }
    let used = distinct(frag, shape).div_ceil(epr);
    for r in used..n {
        regs[r] = regs[r % used];
    }
    regs
}

/// The elements (indices into a lane's distinct elements, in fragment order) that register
/// `reg` of the fragment holds, the first at bit 0 and each next `8 × ty.size()` bits up: the
/// layout `wmma_pack` writes (registers past the distinct ones repeat them).
pub fn wmma_reg_elements(
    frag: WmmaFrag,
    shape: WmmaShape,
    ty: WmmaType,
    reg: usize,
) -> std::ops::Range<usize> {
    let (epr, d) = (per_reg(ty), distinct(frag, shape));
    let used = d.div_ceil(epr).max(1);
    let first = (reg % used) * epr;
    first..(first + epr).min(d)
}

/// A lane's distinct element bit patterns, in fragment order, from its registers.
pub fn wmma_unpack(frag: WmmaFrag, shape: WmmaShape, ty: WmmaType, regs: &[u64]) -> Vec<u64> {
    if wmma_regs(frag, shape, ty).is_none() {
        return Vec::new();
    }
    let (epr, bits) = (per_reg(ty), 8 * ty.size() as usize);
    let mask = (1u64 << bits) - 1;
    (0..distinct(frag, shape))
        .map(|e| (regs.get(e / epr).copied().unwrap_or(0) >> (bits * (e % epr))) & mask)
        .collect()
}

/// The default `stride` (PTX ISA 9.0 §9.7.14.4.2): the length of the leading dimension —
/// the column count of a row-major matrix, the row count of a column-major one.
pub fn wmma_default_stride(frag: WmmaFrag, shape: WmmaShape, layout: MatLayout) -> u32 {
    let (r, c) = wmma_dims(frag, shape);
    match layout {
        MatLayout::Row => c as u32,
        MatLayout::Col => r as u32,
    }
}

/// Offset in elements of matrix element (row, col) from the base address.
pub fn wmma_offset(layout: MatLayout, stride: u64, row: usize, col: usize) -> u64 {
    match layout {
        MatLayout::Row => row as u64 * stride + col as u64,
        MatLayout::Col => col as u64 * stride + row as u64,
    }
}

/// Multiply-adds of one `wmma.mma` of `shape` (M·N·K), which its tensor-unit time scales with.
pub fn wmma_fmas(shape: WmmaShape) -> usize {
    let (m, n, k) = shape.mnk();
    m * n * k
}

/// Element bits `v` of a floating-point type as an exact f64 (`.tf32`: low 13 bits ignored).
pub(crate) fn float_value(ty: WmmaType, v: u64) -> f64 {
    match ty {
        WmmaType::F16 => f16::from_bits(v as u16).to_f64(),
        WmmaType::Bf16 => bf16::from_bits(v as u16).to_f64(),
        WmmaType::Tf32 => {
            let bits = v as u32;
            if f32::from_bits(bits).is_nan() {
                f64::NAN
            } else {
                f32::from_bits(bits & 0xFFFF_E000) as f64
            }
        }
        _ => f32::from_bits(v as u32) as f64,
    }
}

/// `x` rounded once to nearest even in `.f16` (`.f32` otherwise), with the canonical NaN, as
/// zero-extended bits; `satfinite` turns an infinite result into the largest finite value of
/// its sign.
pub(crate) fn round_acc(dty: WmmaType, x: f64, satfinite: bool) -> u64 {
    let fmt = if dty == WmmaType::F16 {
        rounding::F16
    } else {
        rounding::F32
    };
    let bits = match rounding::F64.unpack(x.to_bits()) {
        Val::Nan => fmt.canonical_nan(),
        Val::Inf(neg) => fmt.inf(neg),
        Val::Zero(neg) => fmt.zero(neg),
        Val::Fin(num) => rounding::round(fmt, num, false, Mode::Nearest),
    };
    let inf = |b: u64| !fmt.is_nan(b) && b & !fmt.sign_bit() == fmt.inf(false);
    if satfinite && inf(bits) {
        fmt.max_finite(fmt.is_neg(bits))
    } else {
        bits
    }
}

/// Whether `wmma.mma` of `shape` is defined for multiplicands `ab` and accumulators `dty`
/// (D), `cty` (C): `.f16` multiplicands with `.f16`/`.f32` accumulators in any mix, `.bf16`
/// and `.tf32` with `.f32`, `.s8`/`.u8` with `.s32` (PTX ISA 9.0 §9.7.14.4.5).
pub fn wmma_mma_valid(shape: WmmaShape, ab: WmmaType, dty: WmmaType, cty: WmmaType) -> bool {
    let regs = wmma_regs(WmmaFrag::A, shape, ab).is_some()
        && wmma_regs(WmmaFrag::C, shape, dty).is_some()
        && wmma_regs(WmmaFrag::C, shape, cty).is_some();
    regs && match ab {
        WmmaType::F16 => dty != WmmaType::S32 && cty != WmmaType::S32,
        WmmaType::S8 | WmmaType::U8 => dty == WmmaType::S32 && cty == WmmaType::S32,
        _ => dty == WmmaType::F32 && cty == WmmaType::F32,
    }
}

/// D = A·B + C for one warp (`wmma.mma`, PTX ISA 9.0 §9.7.14.4.5): `ab` is the multiplicand
/// type, `cty`/`dty` the accumulators'. None for a combination PTX does not define (see
/// `wmma_regs`; integer forms need `.s32` for both accumulators, floating ones `.f32`
/// unless the multiplicands are `.f16`). Each lane gets its d registers.
#[allow(clippy::too_many_arguments)]
pub fn wmma_mma(
    shape: WmmaShape,
    ab: WmmaType,
    dty: WmmaType,
    cty: WmmaType,
    satfinite: bool,
    a: &Fragments,
    b: &Fragments,
    c: &Fragments,
) -> Option<Fragments> {
    use WmmaFrag::{A, B, C};
    if !wmma_mma_valid(shape, ab, dty, cty) {
        return None;
    }
    let int = matches!(ab, WmmaType::S8 | WmmaType::U8);
    let (m, n, k) = shape.mnk();
    let mut am = vec![vec![0u64; k]; m];
    let mut bm = vec![vec![0u64; n]; k];
    let mut cm = vec![vec![0u64; n]; m];
    for lane in 0..MMA_LANES {
        let put = |mat: &mut Vec<Vec<u64>>, frag, ty, regs: &[u64]| {
            for (e, v) in wmma_unpack(frag, shape, ty, regs).into_iter().enumerate() {
                let (r, col) = wmma_position(frag, shape, ty, lane, e);
                mat[r][col] = v;
            }
        };
        put(&mut am, A, ab, &a[lane]);
        put(&mut bm, B, ab, &b[lane]);
        put(&mut cm, C, cty, &c[lane]);
    }
    let mut dm = vec![vec![0u64; n]; m];
    for i in 0..m {
        for j in 0..n {
            dm[i][j] = if int {
                let s = |v: u64| match ab {
                    WmmaType::S8 => i64::from(v as u8 as i8),
                    _ => i64::from(v as u8),
                };
                let mut acc = i64::from(cm[i][j] as u32 as i32);
                for kk in 0..k {
                    acc += s(am[i][kk]) * s(bm[kk][j]);
                }
                let r = if satfinite {
                    acc.clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                } else {
                    acc
                };
                r as u32 as u64
            } else {
                let mut acc = float_value(cty, cm[i][j]);
                for kk in 0..k {
                    acc += float_value(ab, am[i][kk]) * float_value(ab, bm[kk][j]);
                }
                round_acc(dty, acc, satfinite)
            };
        }
    }
    let mut d = [[0u64; WMMA_MAX_REGS]; MMA_LANES];
    for (lane, regs) in d.iter_mut().enumerate() {
        let vals: Vec<u64> = wmma_elements(C, shape, dty, lane)
            .into_iter()
            .map(|(r, col)| dm[r][col])
            .collect();
        *regs = wmma_pack(C, shape, dty, &vals);
    }
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPES: [WmmaShape; 4] = [
        WmmaShape::M16n16k16,
        WmmaShape::M32n8k16,
        WmmaShape::M8n32k16,
        WmmaShape::M16n16k8,
    ];
    const TYPES: [WmmaType; 7] = [
        WmmaType::F16,
        WmmaType::Bf16,
        WmmaType::Tf32,
        WmmaType::S8,
        WmmaType::U8,
        WmmaType::F32,
        WmmaType::S32,
    ];

    /// Every matrix element is covered exactly once by the lanes' distinct elements.
    #[test]
    fn fragments_tile_the_matrices() {
        for shape in SHAPES {
            for ty in TYPES {
                for frag in [WmmaFrag::A, WmmaFrag::B, WmmaFrag::C] {
                    if wmma_regs(frag, shape, ty).is_none() {
                        continue;
                    }
                    let (r, c) = wmma_dims(frag, shape);
                    let mut seen = vec![0; r * c];
                    for lane in 0..MMA_LANES {
                        for (row, col) in wmma_elements(frag, shape, ty, lane) {
                            seen[row * c + col] += 1;
                        }
                    }
                    assert!(seen.iter().all(|&x| x == 1), "{frag:?} {shape:?} {ty:?}");
                }
            }
        }
    }

    /// `wmma_reg_elements` describes `wmma_pack`'s layout: OR-ing each register's elements
    /// at their shifts gives the packed registers, copies included.
    #[test]
    fn register_elements_rebuild_the_packed_registers() {
        for shape in SHAPES {
            for ty in TYPES {
                for frag in [WmmaFrag::A, WmmaFrag::B, WmmaFrag::C] {
                    let Some(n) = wmma_regs(frag, shape, ty) else {
                        continue;
                    };
                    let bits = 8 * ty.size() as usize;
                    let mask = (1u64 << bits) - 1;
                    let vals: Vec<u64> = (0..distinct(frag, shape) as u64)
                        .map(|e| (e * 0x9E37 + 0x51) & mask)
                        .collect();
                    let packed = wmma_pack(frag, shape, ty, &vals);
                    for (r, &want) in packed.iter().enumerate().take(n) {
                        let elems = wmma_reg_elements(frag, shape, ty, r);
                        let start = elems.start;
                        let got = elems.fold(0, |acc, e| acc | vals[e] << (bits * (e - start)));
                        assert_eq!(got, want, "{frag:?} {shape:?} {ty:?} register {r}");
                    }
                }
            }
        }
    }

    /// The register counts of PTX ISA 9.0 §9.7.14.4.1.
    #[test]
    fn register_counts_follow_the_ptx_tables() {
        use WmmaFrag::{A, B, C};
        use WmmaShape::*;
        use WmmaType::*;
        assert_eq!(wmma_regs(A, M16n16k16, F16), Some(8));
        assert_eq!(wmma_regs(B, M32n8k16, F16), Some(8));
        assert_eq!(wmma_regs(C, M16n16k16, F16), Some(4));
        assert_eq!(wmma_regs(C, M8n32k16, F32), Some(8));
        assert_eq!(wmma_regs(A, M16n16k16, Bf16), Some(4));
        assert_eq!(wmma_regs(A, M8n32k16, Bf16), Some(2));
        assert_eq!(wmma_regs(B, M8n32k16, Bf16), Some(8));
        assert_eq!(wmma_regs(A, M32n8k16, Bf16), Some(8));
        assert_eq!(wmma_regs(B, M32n8k16, Bf16), Some(2));
        assert_eq!(wmma_regs(A, M16n16k8, Tf32), Some(4));
        assert_eq!(wmma_regs(B, M16n16k8, Tf32), Some(4));
        assert_eq!(wmma_regs(A, M16n16k16, S8), Some(2));
        assert_eq!(wmma_regs(A, M8n32k16, U8), Some(1));
        assert_eq!(wmma_regs(B, M8n32k16, S8), Some(4));
        assert_eq!(wmma_regs(A, M32n8k16, S8), Some(4));
        assert_eq!(wmma_regs(B, M32n8k16, S8), Some(1));
        assert_eq!(wmma_regs(C, M16n16k16, S32), Some(8));
        assert_eq!(wmma_regs(A, M16n16k8, F16), None);
        assert_eq!(wmma_regs(A, M16n16k16, Tf32), None);
        assert_eq!(wmma_regs(C, M16n16k8, F16), None);
    }

    /// `.f16` multiplicand registers past the distinct ones repeat them.
    #[test]
    fn f16_copies_repeat_the_distinct_registers() {
        let vals: Vec<u64> = (1..=8).collect();
        let regs = wmma_pack(WmmaFrag::A, WmmaShape::M16n16k16, WmmaType::F16, &vals);
        assert_eq!(regs[0], 1 | 2 << 16);
        assert_eq!(regs[4], regs[0]);
        assert_eq!(regs[7], regs[3]);
        let back = wmma_unpack(WmmaFrag::A, WmmaShape::M16n16k16, WmmaType::F16, &regs);
        assert_eq!(back, vals);
    }

    #[test]
    fn f16_rounding_is_single_and_to_nearest_even() {
        // 1 + 2^-11 is halfway between 1 and the next f16: ties to even (1.0).
        assert_eq!(
            round_acc(WmmaType::F16, 1.0 + 2f64.powi(-11), false),
            0x3C00
        );
        // a hair above the tie rounds up (an f32 step first would have lost it).
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(round_acc(WmmaType::F16, x, false), 0x3C01);
        assert_eq!(round_acc(WmmaType::F16, 1e6, false), 0x7C00);
        assert_eq!(round_acc(WmmaType::F16, -1e6, true), 0xFBFF);
        assert_eq!(round_acc(WmmaType::F32, f64::NAN, false), 0x7FFF_FFFF);
        assert_eq!(round_acc(WmmaType::F16, f64::NAN, true), 0x7FFF);
    }

    #[test]
    fn undefined_combinations_are_none() {
        let z = [[0u64; WMMA_MAX_REGS]; MMA_LANES];
        use WmmaType::*;
        let s = WmmaShape::M16n16k16;
        assert!(wmma_mma(s, Bf16, F16, F32, false, &z, &z, &z).is_none());
        assert!(wmma_mma(s, S8, F32, S32, false, &z, &z, &z).is_none());
        assert!(wmma_mma(WmmaShape::M16n16k8, F16, F32, F32, false, &z, &z, &z).is_none());
        assert!(wmma_mma(s, F16, F16, F32, false, &z, &z, &z).is_some());
    }
}
