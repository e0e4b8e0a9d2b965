//! Property tests of `semantics::mma_int` (integer `mma.sync`: m8n8k16, m16n8k16, m16n8k32
//! with .s8/.u8 inputs and .s32 accumulators) against a reference written independently
//! here: whole A, B and C matrices are scattered into the 32 lanes' registers with the
//! fragment layouts of PTX ISA 9.0 §9.7.14.5.6, .5.9 and .5.10 written the other way round
//! (matrix position → lane, register, byte), and D = A·B + C is computed in i128 and then
//! wrapped or clamped. Integer results must agree bit for bit.

use gpusim_isa::semantics::{mma_int, mma_int_regs, MMA_LANES};
use gpusim_isa::{MmaIntShape, MmaIntType};
use proptest::prelude::*;

const SHAPES: [MmaIntShape; 3] = [
    MmaIntShape::M8n8k16,
    MmaIntShape::M16n8k16,
    MmaIntShape::M16n8k32,
];
const TYPES: [MmaIntType; 2] = [MmaIntType::S8, MmaIntType::U8];

/// (M, K) of each shape, from its name in the ISA.
fn mk(shape: MmaIntShape) -> (usize, usize) {
    match shape {
        MmaIntShape::M8n8k16 => (8, 16),
        MmaIntShape::M16n8k16 => (16, 16),
        MmaIntShape::M16n8k32 => (16, 32),
    }
}

/// (lane, register, byte) that holds A[r][k]: four consecutive k per register, lanes of a
/// group (r % 8) spread along k four at a time, rows 8..15 in the next register, and for
/// K = 32 the second 16 columns two registers further on.
fn a_slot(shape: MmaIntShape, r: usize, k: usize) -> (usize, usize, usize) {
    let lane = (r % 8) * 4 + (k % 16) / 4;
    let reg = match shape {
        MmaIntShape::M8n8k16 => 0,
        MmaIntShape::M16n8k16 => r / 8,
        MmaIntShape::M16n8k32 => r / 8 + 2 * (k / 16),
    };
    (lane, reg, k % 4)
}

/// (lane, register, byte) that holds B[k][n]: column n belongs to group n, four
/// consecutive k per register, the second 16 rows (K = 32) in register 1.
fn b_slot(k: usize, n: usize) -> (usize, usize, usize) {
    (n * 4 + (k % 16) / 4, k / 16, k % 4)
}

/// (lane, register) that holds C[r][c] (and D[r][c]).
fn c_slot(shape: MmaIntShape, r: usize, c: usize) -> (usize, usize) {
    match shape {
        MmaIntShape::M8n8k16 => (r * 4 + c / 2, c % 2),
        _ => ((r % 8) * 4 + c / 2, c % 2 + 2 * (r / 8)),
    }
}

/// The value of an 8-bit element of `ty`.
fn value(ty: MmaIntType, byte: u8) -> i128 {
    match ty {
        MmaIntType::S8 => i128::from(byte) - if byte >= 128 { 256 } else { 0 },
        MmaIntType::U8 => i128::from(byte),
    }
}

/// D (row-major M×8, s32 bits) from row-major A (M×K bytes), B (K×8 bytes), C (M×8 s32).
fn run(
    shape: MmaIntShape,
    (aty, bty): (MmaIntType, MmaIntType),
    sat: bool,
    a: &[u8],
    b: &[u8],
    c: &[i32],
) -> Vec<u32> {
    let (m, k) = mk(shape);
    let (mut fa, mut fb, mut fc) = (
        [[0u64; 4]; MMA_LANES],
        [[0u64; 2]; MMA_LANES],
        [[0u64; 4]; MMA_LANES],
    );
    for r in 0..m {
        for kk in 0..k {
            let (lane, reg, byte) = a_slot(shape, r, kk);
            fa[lane][reg] |= u64::from(a[r * k + kk]) << (8 * byte);
        }
    }
    for kk in 0..k {
        for n in 0..8 {
            let (lane, reg, byte) = b_slot(kk, n);
            fb[lane][reg] |= u64::from(b[kk * 8 + n]) << (8 * byte);
        }
    }
    for r in 0..m {
        for n in 0..8 {
            let (lane, reg) = c_slot(shape, r, n);
            fc[lane][reg] = u64::from(c[r * 8 + n] as u32);
        }
    }
    let d = mma_int(shape, aty, bty, sat, &fa, &fb, &fc);
    let mut out = vec![0u32; m * 8];
    for r in 0..m {
        for n in 0..8 {
            let (lane, reg) = c_slot(shape, r, n);
            assert_eq!(
                d[lane][reg] >> 32,
                0,
                "d registers hold zero-extended s32 bits"
            );
            out[r * 8 + n] = d[lane][reg] as u32;
        }
    }
    out
}

/// The reference D element: the exact sum, then wrapped (two's complement) or clamped.
fn reference(sum: i128, sat: bool) -> u32 {
    if sat {
        sum.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32 as u32
    } else {
        (sum & 0xFFFF_FFFF) as u32
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random bytes and accumulators (some near the ends of the s32 range, so that both
    /// wrapping and clamping happen): D matches the exact reference bit for bit.
    #[test]
    fn mma_int_matches_the_exact_reference(
        shape in 0usize..3, ta in 0usize..2, tb in 0usize..2, sat in any::<bool>(),
        a in prop::collection::vec(any::<u8>(), 512),
        b in prop::collection::vec(any::<u8>(), 256),
        c in prop::collection::vec(prop_oneof![any::<i32>(), Just(i32::MAX - 3), Just(i32::MIN + 3), -1000i32..1000], 128),
    ) {
        let shape = SHAPES[shape];
        let tys = (TYPES[ta], TYPES[tb]);
        let (m, k) = mk(shape);
        let d = run(shape, tys, sat, &a[..m * k], &b[..k * 8], &c[..m * 8]);
        for r in 0..m {
            for n in 0..8 {
                let sum = i128::from(c[r * 8 + n])
                    + (0..k).map(|kk| value(tys.0, a[r * k + kk]) * value(tys.1, b[kk * 8 + n])).sum::<i128>();
                prop_assert_eq!(d[r * 8 + n], reference(sum, sat), "{:?} {:?} sat {} D[{}][{}]", shape, tys, sat, r, n);
            }
        }
    }
}

/// One-hot A against a B whose elements are all different: D's row r is B's row k when A has
/// its single 1 at (r, k). This pins every fragment position of every shape.
#[test]
fn one_hot_rows_select_rows_of_b() {
    for shape in SHAPES {
        let (m, k) = mk(shape);
        let b: Vec<u8> = (0..k * 8).map(|i| (i % 251 + 1) as u8).collect();
        let c = vec![0i32; m * 8];
        for r in 0..m {
            for kk in 0..k {
                let mut a = vec![0u8; m * k];
                a[r * k + kk] = 1;
                let d = run(shape, (MmaIntType::U8, MmaIntType::U8), false, &a, &b, &c);
                for rr in 0..m {
                    for n in 0..8 {
                        let want = if rr == r { u32::from(b[kk * 8 + n]) } else { 0 };
                        assert_eq!(
                            d[rr * 8 + n],
                            want,
                            "{shape:?}: A[{r}][{kk}] = 1, D[{rr}][{n}]"
                        );
                    }
                }
            }
        }
    }
}

/// s8 reads 0x80 as −128 and u8 as 128; the extreme product sums clamp with .satfinite and
/// wrap without it.
#[test]
fn signedness_and_saturation() {
    let shape = MmaIntShape::M16n8k32;
    let a = vec![0x80u8; 16 * 32];
    let b = vec![0x80u8; 32 * 8];
    let c = vec![i32::MAX; 128];
    let s8 = MmaIntType::S8;
    let u8t = MmaIntType::U8;
    // s8·s8: 32 · 16384 = 524288 on top of i32::MAX
    let d = run(shape, (s8, s8), true, &a, &b, &c);
    assert!(d.iter().all(|&x| x == i32::MAX as u32));
    let d = run(shape, (s8, s8), false, &a, &b, &c);
    let wrapped = (i64::from(i32::MAX) + 524_288) as u32;
    assert!(d.iter().all(|&x| x == wrapped));
    // s8·u8: 32 · (−16384) below a C of i32::MIN + 1
    let c = vec![i32::MIN + 1; 128];
    let d = run(shape, (s8, u8t), true, &a, &b, &c);
    assert!(d.iter().all(|&x| x == i32::MIN as u32));
    let d = run(shape, (u8t, u8t), true, &a, &b, &[0; 128]);
    assert!(d.iter().all(|&x| x == 524_288));
}

#[test]
fn register_counts() {
    assert_eq!(mma_int_regs(MmaIntShape::M8n8k16), (1, 1, 2));
    assert_eq!(mma_int_regs(MmaIntShape::M16n8k16), (2, 1, 4));
    assert_eq!(mma_int_regs(MmaIntShape::M16n8k32), (4, 2, 4));
}
