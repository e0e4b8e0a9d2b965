//! Property tests of `semantics::mma` (warp-level `mma.sync`) against a reference written
//! independently here: whole A, B and C matrices are scattered into the 32 lanes' registers
//! with the fragment layouts of PTX ISA 9.0 §9.7.14.5.7–8 written the other way round (matrix
//! position → lane and element), elements are decoded by hand (f16 from its fields, bf16 as
//! the top half of an f32, tf32 as an f32 without its 13 low bits), and D = A·B + C is
//! computed in f64 with the products summed before C is added. Results agree within one f32
//! rounding of the sum of magnitudes; small integers agree bit for bit.

use gpusim_isa::semantics::{mma, mma_regs, MMA_LANES};
use gpusim_isa::{MmaShape, MmaType};
use proptest::prelude::*;

const FORMS: [(MmaShape, MmaType); 5] = [
    (MmaShape::M16n8k16, MmaType::F16),
    (MmaShape::M16n8k16, MmaType::Bf16),
    (MmaShape::M16n8k8, MmaType::F16),
    (MmaShape::M16n8k8, MmaType::Bf16),
    (MmaShape::M16n8k8, MmaType::Tf32),
];

fn k_of(shape: MmaShape) -> usize {
    match shape {
        MmaShape::M16n8k16 => 16,
        MmaShape::M16n8k8 => 8,
    }
}

/// (lane, element index) that holds A[r][k].
fn a_slot(shape: MmaShape, ty: MmaType, r: usize, k: usize) -> (usize, usize) {
    match (shape, ty) {
        (MmaShape::M16n8k16, _) => ((r % 8) * 4 + (k % 8) / 2, k % 2 + 2 * (r / 8) + 4 * (k / 8)),
        (MmaShape::M16n8k8, MmaType::Tf32) => ((r % 8) * 4 + k % 4, r / 8 + 2 * (k / 4)),
        (MmaShape::M16n8k8, _) => ((r % 8) * 4 + k / 2, k % 2 + 2 * (r / 8)),
    }
}

/// (lane, element index) that holds B[k][n].
fn b_slot(shape: MmaShape, ty: MmaType, k: usize, n: usize) -> (usize, usize) {
    match (shape, ty) {
        (MmaShape::M16n8k16, _) => (n * 4 + (k % 8) / 2, k % 2 + 2 * (k / 8)),
        (MmaShape::M16n8k8, MmaType::Tf32) => (n * 4 + k % 4, k / 4),
        (MmaShape::M16n8k8, _) => (n * 4 + k / 2, k % 2),
    }
}

/// (lane, register) that holds C[r][c] (and D[r][c]).
fn c_slot(r: usize, c: usize) -> (usize, usize) {
    ((r % 8) * 4 + c / 2, c % 2 + 2 * (r / 8))
}

/// Put element `bits` at index i of a fragment: 16-bit types two per register, low half first.
fn put(ty: MmaType, regs: &mut [u64], i: usize, bits: u32) {
    match ty {
        MmaType::F16 | MmaType::Bf16 => regs[i / 2] |= u64::from(bits & 0xFFFF) << (16 * (i % 2)),
        MmaType::Tf32 => regs[i] = u64::from(bits),
    }
}

/// The value of an element's bits, decoded without the crate's helpers.
fn value(ty: MmaType, bits: u32) -> f64 {
    match ty {
        MmaType::F16 => {
            let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
            let exp = ((bits >> 10) & 0x1F) as i32;
            let man = f64::from(bits & 0x3FF);
            match exp {
                0 => sign * man * 2f64.powi(-24),
                31 if man == 0.0 => sign * f64::INFINITY,
                31 => f64::NAN,
                e => sign * (1024.0 + man) * 2f64.powi(e - 25),
            }
        }
        MmaType::Bf16 => f64::from(f32::from_bits((bits & 0xFFFF) << 16)),
        MmaType::Tf32 => f64::from(f32::from_bits(bits & !0x1FFF)),
    }
}

type Frags = (
    [[u64; 4]; MMA_LANES],
    [[u64; 2]; MMA_LANES],
    [[u64; 4]; MMA_LANES],
);

/// Scatter row-major A (16×K), B (K×8) and C (16×8, f32 bits) into the lanes' registers.
fn scatter(shape: MmaShape, ty: MmaType, a: &[u32], b: &[u32], c: &[u32]) -> Frags {
    let k = k_of(shape);
    let (mut fa, mut fb, mut fc) = (
        [[0u64; 4]; MMA_LANES],
        [[0u64; 2]; MMA_LANES],
        [[0u64; 4]; MMA_LANES],
    );
    for r in 0..16 {
        for kk in 0..k {
            let (lane, i) = a_slot(shape, ty, r, kk);
            put(ty, &mut fa[lane], i, a[r * k + kk]);
        }
    }
    for kk in 0..k {
        for n in 0..8 {
            let (lane, i) = b_slot(shape, ty, kk, n);
            put(ty, &mut fb[lane], i, b[kk * 8 + n]);
        }
    }
    for r in 0..16 {
        for n in 0..8 {
            let (lane, i) = c_slot(r, n);
            fc[lane][i] = u64::from(c[r * 8 + n]);
        }
    }
    (fa, fb, fc)
}

/// D as a row-major 16×8 matrix of f32 bits, gathered from the lanes' d registers.
fn run(shape: MmaShape, ty: MmaType, a: &[u32], b: &[u32], c: &[u32]) -> Vec<u32> {
    let (fa, fb, fc) = scatter(shape, ty, a, b, c);
    let d = mma(shape, ty, &fa, &fb, &fc).expect("a defined form");
    let mut out = vec![0u32; 128];
    for r in 0..16 {
        for n in 0..8 {
            let (lane, i) = c_slot(r, n);
            assert_eq!(
                d[lane][i] >> 32,
                0,
                "d registers hold zero-extended f32 bits"
            );
            out[r * 8 + n] = d[lane][i] as u32;
        }
    }
    out
}

/// One random element: (sign, exponent seed, mantissa seed) → bits of `ty`, finite and, for
/// bf16 and tf32, within 2^±40 (plus zeros) so that no sum leaves the f32 range.
fn bits_of(ty: MmaType, (s, e, m): (bool, u32, u32)) -> u32 {
    let sign = u32::from(s);
    match ty {
        MmaType::F16 => (sign << 15) | ((e % 31) << 10) | (m % 1024),
        MmaType::Bf16 if e % 29 == 0 => sign << 15,
        MmaType::Bf16 => (sign << 15) | ((87 + e % 81) << 7) | (m % 128),
        MmaType::Tf32 if e % 29 == 0 => (sign << 31) | (m % 0x2000),
        MmaType::Tf32 => (sign << 31) | ((87 + e % 81) << 23) | (m % (1 << 23)),
    }
}

fn f32_bits((s, e, m): (bool, u32, u32)) -> u32 {
    if e % 17 == 0 {
        return u32::from(s) << 31;
    }
    (u32::from(s) << 31) | ((97 + e % 61) << 23) | (m % (1 << 23))
}

fn elements(n: usize) -> impl Strategy<Value = Vec<(bool, u32, u32)>> {
    prop::collection::vec((any::<bool>(), any::<u32>(), any::<u32>()), n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random finite inputs: each D element is within one f32 rounding (relative to the sum
    /// of the magnitudes of its terms) of the f64 reference.
    #[test]
    fn mma_matches_the_f64_reference(
        form in 0usize..FORMS.len(),
        ea in elements(256), eb in elements(128), ec in elements(128),
    ) {
        let (shape, ty) = FORMS[form];
        let k = k_of(shape);
        let a: Vec<u32> = ea[..16 * k].iter().map(|&x| bits_of(ty, x)).collect();
        let b: Vec<u32> = eb[..k * 8].iter().map(|&x| bits_of(ty, x)).collect();
        let c: Vec<u32> = ec.iter().map(|&x| f32_bits(x)).collect();
        let d = run(shape, ty, &a, &b, &c);
        for r in 0..16 {
            for n in 0..8 {
                let terms: Vec<f64> = (0..k)
                    .map(|kk| value(ty, a[r * k + kk]) * value(ty, b[kk * 8 + n]))
                    .collect();
                let cv = f64::from(f32::from_bits(c[r * 8 + n]));
                let want = terms.iter().sum::<f64>() + cv;
                let scale = terms.iter().map(|t| t.abs()).sum::<f64>() + cv.abs();
                let got = f64::from(f32::from_bits(d[r * 8 + n]));
                prop_assert!(
                    (got - want).abs() <= scale * 2f64.powi(-22) + 2f64.powi(-140),
                    "{:?} {:?} D[{}][{}] = {} (bits {:#x}), reference {}", shape, ty, r, n, got, d[r * 8 + n], want
                );
            }
        }
    }

    /// Small integers are exact: D equals integer arithmetic bit for bit.
    #[test]
    fn integer_inputs_are_exact(
        form in 0usize..FORMS.len(),
        ia in prop::collection::vec(-16i64..=16, 256),
        ib in prop::collection::vec(-16i64..=16, 128),
        ic in prop::collection::vec(-1000i64..=1000, 128),
    ) {
        let (shape, ty) = FORMS[form];
        let k = k_of(shape);
        let enc = |v: i64| -> u32 {
            let f = v as f32;
            match ty {
                MmaType::F16 => u32::from(half::f16::from_f32(f).to_bits()),
                MmaType::Bf16 => f.to_bits() >> 16,
                MmaType::Tf32 => f.to_bits(),
            }
        };
        let a: Vec<u32> = ia[..16 * k].iter().map(|&v| enc(v)).collect();
        let b: Vec<u32> = ib[..k * 8].iter().map(|&v| enc(v)).collect();
        let c: Vec<u32> = ic.iter().map(|&v| (v as f32).to_bits()).collect();
        let d = run(shape, ty, &a, &b, &c);
        for r in 0..16 {
            for n in 0..8 {
                let want = ic[r * 8 + n] + (0..k).map(|kk| ia[r * k + kk] * ib[kk * 8 + n]).sum::<i64>();
                prop_assert_eq!(d[r * 8 + n], (want as f32).to_bits(), "{:?} {:?} D[{}][{}]", shape, ty, r, n);
            }
        }
    }
}

/// One-hot A against a B whose elements are all different: D's row r is B's row k when A has
/// its single 1 at (r, k), and every other row is C (zero). This pins every fragment position.
#[test]
fn one_hot_rows_select_rows_of_b() {
    for (shape, ty) in FORMS {
        let k = k_of(shape);
        let one = |v: f32| match ty {
            MmaType::F16 => u32::from(half::f16::from_f32(v).to_bits()),
            MmaType::Bf16 => v.to_bits() >> 16,
            MmaType::Tf32 => v.to_bits(),
        };
        // B[k][n] = k * 8 + n + 1: exact in every input type (at most 128, 8 significant bits)
        let b: Vec<u32> = (0..k * 8).map(|i| one((i + 1) as f32)).collect();
        let c = vec![0u32; 128];
        for r in 0..16 {
            for kk in 0..k {
                let mut a = vec![0u32; 16 * k];
                a[r * k + kk] = one(1.0);
                let d = run(shape, ty, &a, &b, &c);
                for rr in 0..16 {
                    for n in 0..8 {
                        let want = if rr == r {
                            (kk * 8 + n + 1) as f32
                        } else {
                            0.0
                        };
                        assert_eq!(
                            f32::from_bits(d[rr * 8 + n]),
                            want,
                            "{shape:?} {ty:?}: A[{r}][{kk}] = 1, D[{rr}][{n}]"
                        );
                    }
                }
            }
        }
    }
}

/// A NaN in A[r][k] makes row r of D the canonical NaN; ∞·0 is NaN; ∞ alone stays ∞; the
/// other rows are untouched.
#[test]
fn nan_and_infinity() {
    let (shape, ty) = (MmaShape::M16n8k16, MmaType::F16);
    let one = 0x3C00u32;
    let b = vec![one; 128];
    let c = vec![0u32; 128];
    let mut a = vec![one; 256];
    a[3 * 16 + 5] = 0x7E00; // NaN in row 3
    a[7 * 16] = 0x7C00; // +inf in row 7: inf * 1 + 15 * 1 = inf
    let d = run(shape, ty, &a, &b, &c);
    for n in 0..8 {
        assert_eq!(d[3 * 8 + n], 0x7FFF_FFFF);
        assert_eq!(d[7 * 8 + n], f32::INFINITY.to_bits());
        assert_eq!(f32::from_bits(d[n]), 16.0, "row 0");
    }
    let mut b0 = b.clone();
    b0[0] = 0; // B[0][0] = 0: row 7, column 0 is inf * 0 = NaN
    let d = run(shape, ty, &a, &b0, &c);
    assert_eq!(d[7 * 8], 0x7FFF_FFFF);
    assert_eq!(d[7 * 8 + 1], f32::INFINITY.to_bits());
}

/// A sum beyond the f32 range rounds to infinity; tf32 ignores the 13 low bits of its inputs.
#[test]
fn overflow_and_tf32_truncation() {
    let (shape, ty) = (MmaShape::M16n8k8, MmaType::Bf16);
    let big = (2f32.powi(120)).to_bits() >> 16;
    let a = vec![big; 128];
    let b = vec![big; 64];
    let d = run(shape, ty, &a, &b, &[0u32; 128]);
    assert!(d.iter().all(|&x| x == f32::INFINITY.to_bits()));

    let (shape, ty) = (MmaShape::M16n8k8, MmaType::Tf32);
    let a = vec![1.0f32.to_bits() | 0x1FFF; 128]; // 1 + garbage below tf32 precision
    let b = vec![1.0f32.to_bits(); 64];
    let d = run(shape, ty, &a, &b, &[0u32; 128]);
    assert!(d.iter().all(|&x| f32::from_bits(x) == 8.0));
}

#[test]
fn register_counts() {
    assert_eq!(mma_regs(MmaShape::M16n8k16, MmaType::F16), Some((4, 2)));
    assert_eq!(mma_regs(MmaShape::M16n8k16, MmaType::Bf16), Some((4, 2)));
    assert_eq!(mma_regs(MmaShape::M16n8k8, MmaType::F16), Some((2, 1)));
    assert_eq!(mma_regs(MmaShape::M16n8k8, MmaType::Tf32), Some((4, 2)));
    assert_eq!(mma_regs(MmaShape::M16n8k16, MmaType::Tf32), None);
}
