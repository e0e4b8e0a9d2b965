//! Integer `mma.sync.aligned` (`.s8`/`.u8` multiplicands, `.s32` accumulators) as a pure
//! function of the whole warp's fragments (PTX ISA 9.0 §9.7.14.5.14 `mma`; layouts from
//! §9.7.14.5.6 "Matrix Fragments for mma.m8n8k16", §9.7.14.5.9 "… mma.m16n8k16 with integer
//! type" and §9.7.14.5.10 "… mma.m16n8k32").
//!
//! With `g = lane >> 2` and `t = lane % 4`, element i of a lane's fragment sits at:
//!
//! | operand | shape, elements | (row, column) |
//! |---|---|---|
//! | A (8×16) | m8n8k16, a0..a3 | (g, 4t + i) |
//! | A (16×16) | m16n8k16, a0..a7 | (g + 8·[i ≥ 4], 4t + (i & 3)) |
//! | A (16×32) | m16n8k32, a0..a15 | (g + 8·bit2(i), 4t + (i & 3) + 16·[i ≥ 8]) |
//! | B (16×8) | m8n8k16 and m16n8k16, b0..b3 | (4t + i, g) |
//! | B (32×8) | m16n8k32, b0..b7 | (4t + (i & 3) + 16·[i ≥ 4], g) |
//! | C, D (8×8) | m8n8k16, c0..c1 | (g, 2t + i) |
//! | C, D (16×8) | m16n8k16 and m16n8k32, c0..c3 | (g + 8·[i ≥ 2], 2t + (i & 1)) |
//!
//! Multiplicand elements are packed four per `.b32` register, element 4r + j in byte j of
//! register r; accumulators are one `.s32` per register.
//!
//! **Numerics**: bit-exact. Every product and the whole sum C + Σ A·B are computed exactly in
//! i64 (|Σ| < 32·255² + 2^31 fits easily). Without `.satfinite` the result is that sum modulo
//! 2^32 as two's complement — the same as any order of 32-bit wrapping additions, so no
//! hardware summation order can differ. With `.satfinite` the exact sum is clamped to
//! [i32::MIN, i32::MAX] (PTX: "the value is clamped … on overflow"). Results are written as
//! zero-extended 32-bit patterns, like every other `.s32` result.

use super::mma::MMA_LANES;
use crate::ir::{MmaIntShape, MmaIntType};

/// Registers per lane of (a, b, c and d) for an integer `mma` of `shape`.
pub fn mma_int_regs(shape: MmaIntShape) -> (usize, usize, usize) {
    match shape {
        MmaIntShape::M8n8k16 => (1, 1, 2),
        MmaIntShape::M16n8k16 => (2, 1, 4),
        MmaIntShape::M16n8k32 => (4, 2, 4),
    }
}

/// Multiply-adds of one warp-wide `mma` of `shape` (M·N·K), which its tensor-unit time
/// scales with.
pub fn mma_int_fmas(shape: MmaIntShape) -> usize {
    shape.m() * 8 * shape.k()
}

/// (row, column) in A of element i of `lane`'s a fragment.
fn a_position(shape: MmaIntShape, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    match shape {
        MmaIntShape::M8n8k16 => (g, 4 * t + i),
        MmaIntShape::M16n8k16 => (g + 8 * (i >> 2), 4 * t + (i & 3)),
        MmaIntShape::M16n8k32 => (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)),
    }
}

/// (row k, column n) in B of element i of `lane`'s b fragment.
fn b_position(shape: MmaIntShape, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    match shape {
        MmaIntShape::M8n8k16 | MmaIntShape::M16n8k16 => (4 * t + i, g),
        MmaIntShape::M16n8k32 => (4 * t + (i & 3) + 16 * (i >> 2), g),
    }
}

/// (row, column) in C and D of element i of `lane`'s c or d fragment.
fn c_position(shape: MmaIntShape, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane % 4);
    match shape {
        MmaIntShape::M8n8k16 => (g, 2 * t + i),
        _ => (g + 8 * (i >> 1), 2 * t + (i & 1)),
    }
}

/// Element i of a multiplicand fragment held in `regs`.
fn element(ty: MmaIntType, regs: &[u64], i: usize) -> i64 {
    let byte = (regs[i >> 2] >> (8 * (i & 3))) as u8;
    match ty {
        MmaIntType::S8 => i64::from(byte as i8),
        MmaIntType::U8 => i64::from(byte),
    }
}

/// D = A·B + C for one warp of an integer `mma`: `a`, `b` and `c` are each lane's registers
/// (unused trailing registers are ignored); the result is each lane's d registers (the
/// first `mma_int_regs(shape).2` are meaningful, the rest zero).
pub fn mma_int(
    shape: MmaIntShape,
    aty: MmaIntType,
    bty: MmaIntType,
    satfinite: bool,
    a: &[[u64; 4]; MMA_LANES],
    b: &[[u64; 2]; MMA_LANES],
    c: &[[u64; 4]; MMA_LANES],
) -> [[u64; 4]; MMA_LANES] {
    let (m, k) = (shape.m(), shape.k());
    let (_, _, nc) = mma_int_regs(shape);
    let (na, nb) = (m * k / MMA_LANES, k * 8 / MMA_LANES);
    let mut am = [[0i64; 32]; 16];
    let mut bm = [[0i64; 8]; 32];
    let mut cm = [[0i64; 8]; 16];
    for lane in 0..MMA_LANES {
        for i in 0..na {
            let (r, col) = a_position(shape, lane, i);
            am[r][col] = element(aty, &a[lane], i);
        }
        for i in 0..nb {
            let (row, n) = b_position(shape, lane, i);
            bm[row][n] = element(bty, &b[lane], i);
        }
        for (i, &v) in c[lane].iter().enumerate().take(nc) {
            let (r, col) = c_position(shape, lane, i);
            cm[r][col] = i64::from(v as u32 as i32);
        }
    }
    let mut d = [[0u64; 4]; MMA_LANES];
    for (lane, regs) in d.iter_mut().enumerate() {
        for (i, out) in regs.iter_mut().enumerate().take(nc) {
            let (r, col) = c_position(shape, lane, i);
            let sum = cm[r][col] + (0..k).map(|kk| am[r][kk] * bm[kk][col]).sum::<i64>();
            let v = if satfinite {
                sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
            } else {
                sum as i32
            };
            *out = u64::from(v as u32);
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every matrix element is covered exactly once by the lanes' fragments.
    #[test]
    fn fragments_tile_the_matrices() {
        for shape in [
            MmaIntShape::M8n8k16,
            MmaIntShape::M16n8k16,
            MmaIntShape::M16n8k32,
        ] {
            let (m, k) = (shape.m(), shape.k());
            let (na, nb, nc) = mma_int_regs(shape);
            assert_eq!((na * 4, nb * 4), (m * k / 32, k * 8 / 32), "{shape:?}");
            let (mut sa, mut sb, mut sc) = (vec![0; m * k], vec![0; k * 8], vec![0; m * 8]);
            for lane in 0..MMA_LANES {
                for i in 0..na * 4 {
                    let (r, c) = a_position(shape, lane, i);
                    sa[r * k + c] += 1;
                }
                for i in 0..nb * 4 {
                    let (r, c) = b_position(shape, lane, i);
                    sb[r * 8 + c] += 1;
                }
                for i in 0..nc {
                    let (r, c) = c_position(shape, lane, i);
                    sc[r * 8 + c] += 1;
                }
            }
            assert!(sa.iter().all(|&n| n == 1), "{shape:?} A");
            assert!(sb.iter().all(|&n| n == 1), "{shape:?} B");
            assert!(sc.iter().all(|&n| n == 1), "{shape:?} C");
        }
    }

    /// Spot checks against the ISA figures (lane 5: group 1, thread 1).
    #[test]
    fn fragment_positions() {
        use MmaIntShape::*;
        assert_eq!(a_position(M8n8k16, 5, 3), (1, 7));
        assert_eq!(a_position(M16n8k16, 5, 6), (9, 6));
        assert_eq!(a_position(M16n8k32, 5, 13), (9, 21));
        assert_eq!(b_position(M16n8k32, 5, 6), (22, 1));
        assert_eq!(c_position(M8n8k16, 31, 1), (7, 7));
        assert_eq!(c_position(M16n8k32, 31, 3), (15, 7));
    }
}
