//! `mma.sync.aligned` with `.f32` accumulators, as a pure function of the whole warp's
//! fragments (PTX ISA 9.0 §9.7.14.5.14 `mma`; layouts from §9.7.14.5.7 "Matrix Fragments for
//! mma.m16n8k8" and §9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point type").
//!
//! The input is, for each of the 32 lanes, the values of its a, b and c registers; the output
//! is, for each lane, its four d registers. With `groupID = lane >> 2` and
//! `threadID_in_group = lane % 4` (g and t below), element i of a lane's fragment sits at:
//!
//! | operand | form | (row, column) |
//! |---|---|---|
//! | A (16×16) | m16n8k16 .f16/.bf16, a0..a7 | (g + 8·bit1(i), 2t + bit0(i) + 8·[i ≥ 4]) |
//! | A (16×8) | m16n8k8 .f16/.bf16, a0..a3 | (g + 8·[i ≥ 2], 2t + bit0(i)) |
//! | A (16×8) | m16n8k8 .tf32, a0..a3 | (g + 8·bit0(i), t + 4·[i ≥ 2]) |
//! | B (16×8) | m16n8k16 .f16/.bf16, b0..b3 | (2t + bit0(i) + 8·[i ≥ 2], g) |
//! | B (8×8) | m16n8k8 .f16/.bf16, b0..b1 | (2t + i, g) |
//! | B (8×8) | m16n8k8 .tf32, b0..b1 | (t + 4i, g) |
//! | C, D (16×8) | every form, c0..c3 | (g + 8·[i ≥ 2], 2t + bit0(i)) |
//!
//! `.f16`/`.bf16` elements are packed two per register, element 2r in the low half of register
//! r; `.tf32` and `.f32` elements have a register each.
//!
//! **Numerics** (PTX does not specify the order or the rounding of the internal sum, and
//! tensor cores differ from any fixed order in detail, so tests compare with tolerances):
//! - every element converts exactly to f64, so each product A[i][k]·B[k][j] is exact;
//! - D[i][j] = C[i][j] + A[i][0]·B[0][j] + … + A[i][K-1]·B[K-1][j], summed in f64 in that order
//!   (C first, then k = 0, 1, …) and rounded once to f32, nearest even; beyond the f32 range the
//!   result is ±inf. No subnormal is flushed.
//! - `.tf32`: the low 13 bits of the register are ignored (the value is truncated to the 10
//!   mantissa bits of tf32); a NaN register stays a NaN. PTX leaves the internal layout of
//!   tf32 implementation-defined; values from `cvt.rna.tf32.f32` are unaffected by this choice.
//! - A NaN result (from a NaN input, ∞·0 or ∞ − ∞) is the canonical NaN 0x7FFFFFFF.

use crate::ir::{MmaShape, MmaType};
use half::{bf16, f16};

/// Lanes of the warp that executes `mma.sync` (the fragment layouts are defined for 32).
pub const MMA_LANES: usize = 32;

/// Registers per lane of the multiplicands (a, b) of `mma.shape.row.col.f32.ty.ty.f32`; the
/// accumulators c and d always take 4. None for a combination PTX does not define.
pub fn mma_regs(shape: MmaShape, ty: MmaType) -> Option<(usize, usize)> {
    match (shape, ty) {
        (MmaShape::M16n8k16, MmaType::F16 | MmaType::Bf16) => Some((4, 2)),
        (MmaShape::M16n8k8, MmaType::Tf32) => Some((4, 2)),
        (MmaShape::M16n8k8, MmaType::F16 | MmaType::Bf16) => Some((2, 1)),
        (MmaShape::M16n8k16, MmaType::Tf32) => None,
    }
}

/// (row, column) in A of element i of `lane`'s a fragment.
fn a_position(shape: MmaShape, ty: MmaType, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    match (shape, ty) {
        (MmaShape::M16n8k8, MmaType::Tf32) => (g + 8 * (i & 1), t + 4 * (i >> 1)),
        (MmaShape::M16n8k8, _) => (g + 8 * (i >> 1), 2 * t + (i & 1)),
        (MmaShape::M16n8k16, _) => (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)),
    }
}

/// (row k, column n) in B of element i of `lane`'s b fragment.
fn b_position(shape: MmaShape, ty: MmaType, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    match (shape, ty) {
        (MmaShape::M16n8k8, MmaType::Tf32) => (t + 4 * i, g),
        (MmaShape::M16n8k8, _) => (2 * t + i, g),
        (MmaShape::M16n8k16, _) => (2 * t + (i & 1) + 8 * (i >> 1), g),
    }
}

/// (row, column) in C and D of element i of `lane`'s c or d fragment.
fn c_position(lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    (g + 8 * (i >> 1), 2 * t + (i & 1))
}

/// Element i of a multiplicand fragment held in `regs`, exactly as an f64.
fn element(ty: MmaType, regs: &[u64], i: usize) -> f64 {
    let half = |r: u64| ((r >> (16 * (i & 1))) & 0xFFFF) as u16;
    match ty {
        MmaType::F16 => f16::from_bits(half(regs[i >> 1])).to_f64(),
        MmaType::Bf16 => bf16::from_bits(half(regs[i >> 1])).to_f64(),
        MmaType::Tf32 => {
            let bits = regs[i] as u32;
            if f32::from_bits(bits).is_nan() {
                f64::NAN
            } else {
                f32::from_bits(bits & 0xFFFF_E000) as f64
            }
        }
    }
}

/// D = A·B + C for one warp: `a`, `b` and `c` are each lane's registers (unused trailing
/// registers are ignored); the result is each lane's four d registers, f32 bits zero-extended.
/// None for a shape and type PTX does not define (see `mma_regs`).
pub fn mma(
    shape: MmaShape,
    ty: MmaType,
    a: &[[u64; 4]; MMA_LANES],
    b: &[[u64; 2]; MMA_LANES],
    c: &[[u64; 4]; MMA_LANES],
) -> Option<[[u64; 4]; MMA_LANES]> {
    mma_regs(shape, ty)?;
    let k = shape.k();
    // Elements per lane: M·K / 32 of A, K·N / 32 of B (M = 16, N = 8).
    let (na, nb) = (16 * k / MMA_LANES, k * 8 / MMA_LANES);
    let mut am = [[0f64; 16]; 16];
    let mut bm = [[0f64; 8]; 16];
    let mut cm = [[0f64; 8]; 16];
    for lane in 0..MMA_LANES {
        for i in 0..na {
            let (r, col) = a_position(shape, ty, lane, i);
            am[r][col] = element(ty, &a[lane], i);
        }
        for i in 0..nb {
            let (row, n) = b_position(shape, ty, lane, i);
            bm[row][n] = element(ty, &b[lane], i);
        }
        for (i, &v) in c[lane].iter().enumerate() {
            let (r, col) = c_position(lane, i);
            cm[r][col] = f32::from_bits(v as u32) as f64;
        }
    }
    let mut d = [[0u64; 4]; MMA_LANES];
    for (lane, regs) in d.iter_mut().enumerate() {
        for (i, out) in regs.iter_mut().enumerate() {
            let (r, col) = c_position(lane, i);
            let mut acc = cm[r][col];
            for (kk, brow) in bm.iter().enumerate().take(k) {
                acc += am[r][kk] * brow[col];
            }
            let v = acc as f32;
            *out = if v.is_nan() {
                0x7FFF_FFFF
            } else {
                v.to_bits() as u64
            };
        }
    }
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spot checks against the figures of the PTX ISA (lane 0 holds the top-left corners;
    /// lane 5 is group 1, thread 1 of its group).
    #[test]
    fn fragment_positions() {
        let (s16, s8) = (MmaShape::M16n8k16, MmaShape::M16n8k8);
        let (h, t) = (MmaType::F16, MmaType::Tf32);
        assert_eq!(a_position(s16, h, 0, 0), (0, 0));
        assert_eq!(a_position(s16, h, 0, 2), (8, 0));
        assert_eq!(a_position(s16, h, 0, 5), (0, 9));
        assert_eq!(a_position(s16, h, 5, 7), (9, 11));
        assert_eq!(b_position(s16, h, 5, 3), (11, 1));
        assert_eq!(a_position(s8, t, 5, 1), (9, 1));
        assert_eq!(a_position(s8, t, 5, 2), (1, 5));
        assert_eq!(b_position(s8, t, 5, 1), (5, 1));
        assert_eq!(a_position(s8, h, 5, 3), (9, 3));
        assert_eq!(b_position(s8, h, 5, 1), (3, 1));
        assert_eq!(c_position(31, 3), (15, 7));
    }

    /// Every matrix element is covered exactly once by the lanes' fragments.
    #[test]
    fn fragments_tile_the_matrices() {
        for (shape, ty) in [
            (MmaShape::M16n8k16, MmaType::F16),
            (MmaShape::M16n8k8, MmaType::F16),
            (MmaShape::M16n8k8, MmaType::Tf32),
        ] {
            let k = shape.k();
            let mut seen_a = vec![0; 16 * k];
            let mut seen_b = vec![0; k * 8];
            for lane in 0..MMA_LANES {
                for i in 0..16 * k / MMA_LANES {
                    let (r, c) = a_position(shape, ty, lane, i);
                    seen_a[r * k + c] += 1;
                }
                for i in 0..k * 8 / MMA_LANES {
                    let (r, c) = b_position(shape, ty, lane, i);
                    seen_b[r * 8 + c] += 1;
                }
            }
            assert!(seen_a.iter().all(|&n| n == 1), "{shape:?} {ty:?} A");
            assert!(seen_b.iter().all(|&n| n == 1), "{shape:?} {ty:?} B");
        }
    }

    #[test]
    fn undefined_combination_is_none() {
        let z4 = [[0u64; 4]; MMA_LANES];
        let z2 = [[0u64; 2]; MMA_LANES];
        assert!(mma(MmaShape::M16n8k16, MmaType::Tf32, &z4, &z2, &z4).is_none());
        assert!(mma(MmaShape::M16n8k16, MmaType::F16, &z4, &z2, &z4).is_some());
    }
}
