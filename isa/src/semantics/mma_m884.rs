//! `mma.sync.aligned.m8n8k4` with `.f16` multiplicands (the Volta quad-pair shape) as a pure
//! function of the whole warp's fragments (PTX ISA 9.0 §9.7.14.5.14 `mma`; layouts from
//! §9.7.14.5.1 "Matrix Fragments for mma.m8n8k4 with .f16 floating point type").
//!
//! The warp computes four independent 8×8×4 products, one per quad pair: quad pair q is the
//! low group of lanes 4q..4q+3 and the high group 16+4q..16+4q+3. With `r = lane % 4` and
//! `h = 4·[lane ≥ 16]`, element i of a lane's fragment sits at (row, column) of its quad
//! pair's matrices:
//!
//! | operand | layout, elements | (row, column) |
//! |---|---|---|
//! | A (8×4) | `.row`, a0..a3 | (r + h, i) |
//! | A (8×4) | `.col`, a0..a3 | (i + h, r) |
//! | B (4×8) | `.row`, b0..b3 | (r, i + h) |
//! | B (4×8) | `.col`, b0..b3 | (i, r + h) |
//! | C, D (8×8) | `.f16`, c0..c7 | (r + h, i) |
//! | C, D (8×8) | `.f32`, c0..c7 | ((lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1)) |
//!
//! A and B take two `.f16x2` registers (element 2j in the low half of register j); `.f16`
//! accumulators four `.f16x2` registers, `.f32` ones eight `.f32` registers.
//!
//! **Numerics** are those of `semantics::mma`: elements convert exactly to f64, D[i][j] =
//! C[i][j] + A[i][0]·B[0][j] + … + A[i][3]·B[3][j] summed in f64 in that order and rounded once
//! to nearest even into `.dtype` (`.f16` or `.f32`, whatever `.ctype` is); a NaN result is the
//! canonical NaN.

use super::mma::MMA_LANES;
use super::wmma::{float_value, round_acc};
use crate::ir::{AccType, MatLayout, WmmaType};

/// Registers per lane of an `m8n8k4` accumulator (c or d) of type `ty`; a and b take 2.
pub fn mma_m884_regs(ty: AccType) -> usize {
    match ty {
        AccType::F16 => 4,
        AccType::F32 => 8,
    }
}

/// Multiply-adds of one warp-wide `mma.m8n8k4`: four 8×8×4 products.
pub const MMA_M884_FMAS: usize = 4 * 8 * 8 * 4;

/// The quad pair (0..4) `lane` belongs to, and 4 for the high group (lanes 16..31), else 0.
fn quad_pair(lane: usize) -> (usize, usize) {
    ((lane % 16) / 4, if lane >= 16 { 4 } else { 0 })
}

/// (row, k) in A of element i of `lane`'s a fragment.
fn a_position(layout: MatLayout, lane: usize, i: usize) -> (usize, usize) {
    let (_, h) = quad_pair(lane);
    match layout {
        MatLayout::Row => (lane % 4 + h, i),
        MatLayout::Col => (i + h, lane % 4),
    }
}

/// (k, column) in B of element i of `lane`'s b fragment.
fn b_position(layout: MatLayout, lane: usize, i: usize) -> (usize, usize) {
    let (_, h) = quad_pair(lane);
    match layout {
        MatLayout::Row => (lane % 4, i + h),
        MatLayout::Col => (i, lane % 4 + h),
    }
}

/// (row, column) in C and D of element i of `lane`'s c or d fragment.
fn c_position(ty: AccType, lane: usize, i: usize) -> (usize, usize) {
    let (_, h) = quad_pair(lane);
    match ty {
        AccType::F16 => (lane % 4 + h, i),
        AccType::F32 => ((lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1)),
    }
}

/// Element i of a fragment of `.f16x2` registers, as bits.
fn half(regs: &[u64], i: usize) -> u64 {
    (regs[i / 2] >> (16 * (i % 2))) & 0xFFFF
}

/// Element i of an accumulator fragment of type `ty`, exactly as an f64.
fn acc_value(ty: AccType, regs: &[u64], i: usize) -> f64 {
    match ty {
        AccType::F16 => float_value(WmmaType::F16, half(regs, i)),
        AccType::F32 => float_value(WmmaType::F32, regs[i]),
    }
}

/// D = A·B + C for the four quad pairs of one warp: `a`, `b` are each lane's two `.f16x2`
/// registers, `c` its `.ctype` registers (4 or 8; unused trailing ones ignored). The result
/// is each lane's `.dtype` registers (the first `mma_m884_regs(dty)` meaningful), bits
/// zero-extended.
pub fn mma_m884(
    alayout: MatLayout,
    blayout: MatLayout,
    dty: AccType,
    cty: AccType,
    a: &[[u64; 2]; MMA_LANES],
    b: &[[u64; 2]; MMA_LANES],
    c: &[[u64; 8]; MMA_LANES],
) -> [[u64; 8]; MMA_LANES] {
    let mut am = [[[0f64; 4]; 8]; 4];
    let mut bm = [[[0f64; 8]; 4]; 4];
    let mut cm = [[[0f64; 8]; 8]; 4];
    for lane in 0..MMA_LANES {
        let (q, _) = quad_pair(lane);
        for i in 0..4 {
            let (r, k) = a_position(alayout, lane, i);
            am[q][r][k] = float_value(WmmaType::F16, half(&a[lane], i));
            let (k, col) = b_position(blayout, lane, i);
            bm[q][k][col] = float_value(WmmaType::F16, half(&b[lane], i));
        }
        for i in 0..8 {
            let (r, col) = c_position(cty, lane, i);
            cm[q][r][col] = acc_value(cty, &c[lane], i);
        }
    }
    let mut d = [[0u64; 8]; MMA_LANES];
    for (lane, regs) in d.iter_mut().enumerate() {
        let (q, _) = quad_pair(lane);
        for i in 0..8 {
            let (r, col) = c_position(dty, lane, i);
            let mut acc = cm[q][r][col];
            for (kk, brow) in bm[q].iter().enumerate() {
                acc += am[q][r][kk] * brow[col];
            }
            match dty {
                AccType::F32 => regs[i] = round_acc(WmmaType::F32, acc, false),
                AccType::F16 => {
                    regs[i / 2] |= round_acc(WmmaType::F16, acc, false) << (16 * (i % 2));
                }
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each quad pair's 8 lanes cover its A, B, C exactly once, in every layout.
    #[test]
    fn quad_pairs_tile_their_matrices() {
        for q in 0..4 {
            let lanes: Vec<usize> = (0..MMA_LANES).filter(|&l| quad_pair(l).0 == q).collect();
            assert_eq!(lanes.len(), 8);
            for layout in [MatLayout::Row, MatLayout::Col] {
                let (mut sa, mut sb) = ([0; 32], [0; 32]);
                for &l in &lanes {
                    for i in 0..4 {
                        let (r, k) = a_position(layout, l, i);
                        sa[r * 4 + k] += 1;
                        let (k, c) = b_position(layout, l, i);
                        sb[k * 8 + c] += 1;
                    }
                }
                assert!(sa.iter().chain(&sb).all(|&n| n == 1), "{q} {layout:?}");
            }
            for ty in [AccType::F16, AccType::F32] {
                let mut sc = [0; 64];
                for &l in &lanes {
                    for i in 0..8 {
                        let (r, c) = c_position(ty, l, i);
                        sc[r * 8 + c] += 1;
                    }
                }
                assert!(sc.iter().all(|&n| n == 1), "{q} {ty:?}");
            }
        }
    }

    /// Spot checks against the PTX formulas: lane 17 is in quad pair 0's high group.
    #[test]
    fn fragment_positions() {
        assert_eq!(a_position(MatLayout::Row, 17, 2), (5, 2));
        assert_eq!(a_position(MatLayout::Col, 17, 2), (6, 1));
        assert_eq!(b_position(MatLayout::Row, 6, 3), (2, 3));
        assert_eq!(b_position(MatLayout::Col, 22, 3), (3, 6));
        assert_eq!(c_position(AccType::F32, 19, 7), (7, 7));
        assert_eq!(c_position(AccType::F32, 2, 4), (0, 6));
    }
}
