//! Property tests of `semantics::wmma_*` (PTX ISA 9.0 §9.7.14.4) and `semantics::mma_m884`
//! (§9.7.14.5.1) against references written independently here:
//! - `wmma`: random A, B, C are laid out in a memory image (`.row`/`.col`, random strides), each
//!   lane's fragment is loaded element by element at the addresses the layout gives, `wmma_mma`
//!   runs, D is stored back the same way, and the image must equal D = A·B + C computed by a
//!   plain triple loop (f64, C first then k in order, rounded once: f32 by Rust's `as`, f16 by a
//!   nearest-even search over the f16 values; integers exact in i64) — bit for bit;
//! - `wmma` m16n16k16 f16→f32 equals two `mma.m16n8k16` (one per 8 columns of N) bit for bit;
//! - `mma.m8n8k4`: whole matrices per quad pair are scattered into the lanes' registers with the
//!   PTX formulas written the other way round (matrix position → lane and element) and the
//!   result read back the same way, against the same plain loop.

// The reference indexes matrices by position on purpose, as the PTX formulas do.
#![allow(clippy::needless_range_loop)]

use gpusim_isa::semantics::{
    mma, mma_m884, wmma_default_stride, wmma_dims, wmma_elements, wmma_mma, wmma_offset, wmma_pack,
    wmma_regs, wmma_unpack, WmmaFragments, MMA_LANES, WMMA_MAX_REGS,
};
use gpusim_isa::{AccType, MatLayout, MmaShape, MmaType, WmmaFrag, WmmaShape, WmmaType};
use proptest::prelude::*;

/// The value of a float element's bits, decoded by hand.
fn value(ty: WmmaType, bits: u64) -> f64 {
    match ty {
        WmmaType::F16 => {
            let (s, e, m) = ((bits >> 15) & 1, (bits >> 10) & 0x1F, bits & 0x3FF);
            let sign = if s == 1 { -1.0 } else { 1.0 };
            match e {
                0 => sign * m as f64 * 2f64.powi(-24),
                31 if m == 0 => sign * f64::INFINITY,
                31 => f64::NAN,
                _ => sign * (1024 + m) as f64 * 2f64.powi(e as i32 - 25),
            }
        }
        WmmaType::Bf16 => f32::from_bits((bits as u32) << 16) as f64,
        WmmaType::Tf32 => {
            let f = f32::from_bits(bits as u32);
            if f.is_nan() {
                f64::NAN
            } else {
                f32::from_bits(bits as u32 & !0x1FFF) as f64
            }
        }
        _ => f32::from_bits(bits as u32) as f64,
    }
}

/// `x` to the nearest f16 (ties to the even significand), by searching the positive f16s.
fn to_f16(x: f64) -> u64 {
    if x.is_nan() {
        return 0x7FFF;
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    // The largest f16 bit pattern (0..=0x7BFF) whose value is ≤ a.
    let (mut lo, mut hi) = (0u64, 0x7BFFu64);
    if a >= value(WmmaType::F16, 0x7BFF) {
        lo = 0x7BFF;
    } else {
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if value(WmmaType::F16, mid) <= a {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
    }
    let below = value(WmmaType::F16, lo);
    // One ulp above the largest finite value (65536) is where infinity starts to win.
    let above = if lo == 0x7BFF {
        65536.0
    } else {
        value(WmmaType::F16, lo + 1)
    };
    let pick = if a - below < above - a || (a - below == above - a && lo % 2 == 0) {
        lo
    } else {
        lo + 1
    };
    sign | pick.min(0x7C00)
}

fn round(dty: WmmaType, acc: f64) -> u64 {
    match dty {
        WmmaType::F16 => to_f16(acc),
        _ => {
            let v = acc as f32;
            if v.is_nan() {
                0x7FFF_FFFF
            } else {
                u64::from(v.to_bits())
            }
        }
    }
}

/// A random element of `ty`: small integers for the integer types, floats in [-2, 2) whose
/// bits fit the type otherwise.
fn element(ty: WmmaType, r: u64) -> u64 {
    let f = ((r % 4096) as f32 - 2048.0) / 1024.0;
    match ty {
        WmmaType::S8 | WmmaType::U8 => r & 0xFF,
        WmmaType::S32 => r & 0xFFFF_FFFF,
        WmmaType::F16 => u64::from(half::f16::from_f32(f).to_bits()),
        WmmaType::Bf16 => u64::from(f.to_bits() >> 16),
        WmmaType::Tf32 => u64::from(f.to_bits()) | (r >> 20 & 0x1FFF),
        WmmaType::F32 => u64::from(f.to_bits()),
    }
}

/// A matrix `frag` in a memory image of `ty` elements with the given layout and stride.
struct Stored {
    layout: MatLayout,
    stride: u64,
    mem: Vec<u64>,
}

fn store(frag: WmmaFrag, shape: WmmaShape, layout: MatLayout, pad: u64, m: &[Vec<u64>]) -> Stored {
    let stride = wmma_default_stride(frag, shape, layout) as u64 + pad;
    let (rows, cols) = wmma_dims(frag, shape);
    let mut mem = vec![0xDEAD; (stride * (rows.max(cols) as u64)) as usize];
    for (r, row) in m.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            let at = match layout {
                MatLayout::Row => r as u64 * stride + c as u64,
                MatLayout::Col => c as u64 * stride + r as u64,
            };
            mem[at as usize] = v;
        }
    }
    Stored {
        layout,
        stride,
        mem,
    }
}

/// `wmma.load` of every lane from the image.
fn load(frag: WmmaFrag, shape: WmmaShape, ty: WmmaType, s: &Stored) -> WmmaFragments {
    let mut f = [[0u64; WMMA_MAX_REGS]; MMA_LANES];
    for (lane, regs) in f.iter_mut().enumerate() {
        let vals: Vec<u64> = wmma_elements(frag, shape, ty, lane)
            .into_iter()
            .map(|(r, c)| s.mem[wmma_offset(s.layout, s.stride, r, c) as usize])
            .collect();
        *regs = wmma_pack(frag, shape, ty, &vals);
    }
    f
}

fn matrix(rows: usize, cols: usize, ty: WmmaType, seed: &mut u64) -> Vec<Vec<u64>> {
    (0..rows)
        .map(|_| {
            (0..cols)
                .map(|_| {
                    *seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    element(ty, *seed >> 11)
                })
                .collect()
        })
        .collect()
}

/// (shape, multiplicand, D type, C type)
const FORMS: [(WmmaShape, WmmaType, WmmaType, WmmaType); 14] = [
    (
        WmmaShape::M16n16k16,
        WmmaType::F16,
        WmmaType::F32,
        WmmaType::F32,
    ),
    (
        WmmaShape::M16n16k16,
        WmmaType::F16,
        WmmaType::F16,
        WmmaType::F16,
    ),
    (
        WmmaShape::M16n16k16,
        WmmaType::F16,
        WmmaType::F16,
        WmmaType::F32,
    ),
    (
        WmmaShape::M32n8k16,
        WmmaType::F16,
        WmmaType::F32,
        WmmaType::F16,
    ),
    (
        WmmaShape::M8n32k16,
        WmmaType::F16,
        WmmaType::F32,
        WmmaType::F32,
    ),
    (
        WmmaShape::M16n16k16,
        WmmaType::Bf16,
        WmmaType::F32,
        WmmaType::F32,
    ),
    (
        WmmaShape::M32n8k16,
        WmmaType::Bf16,
        WmmaType::F32,
        WmmaType::F32,
    ),
    (
        WmmaShape::M8n32k16,
        WmmaType::Bf16,
        WmmaType::F32,
        WmmaType::F32,
    ),
    (
        WmmaShape::M16n16k8,
        WmmaType::Tf32,
        WmmaType::F32,
        WmmaType::F32,
    ),
    (
        WmmaShape::M16n16k16,
        WmmaType::S8,
        WmmaType::S32,
        WmmaType::S32,
    ),
    (
        WmmaShape::M32n8k16,
        WmmaType::U8,
        WmmaType::S32,
        WmmaType::S32,
    ),
    (
        WmmaShape::M8n32k16,
        WmmaType::S8,
        WmmaType::S32,
        WmmaType::S32,
    ),
    (
        WmmaShape::M16n16k16,
        WmmaType::U8,
        WmmaType::S32,
        WmmaType::S32,
    ),
    (
        WmmaShape::M8n32k16,
        WmmaType::U8,
        WmmaType::S32,
        WmmaType::S32,
    ),
];

fn lay(b: bool) -> MatLayout {
    if b {
        MatLayout::Row
    } else {
        MatLayout::Col
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// load → mma → store equals the plain triple loop, bit for bit.
    #[test]
    fn wmma_round_trip_matches_the_reference(
        form in 0..FORMS.len(),
        layouts in any::<[bool; 4]>(),
        pads in prop::array::uniform4(0u64..3),
        mut seed in any::<u64>(),
        satfinite in any::<bool>(),
        big_c in any::<bool>(),
    ) {
        let (shape, ab, dty, cty) = FORMS[form];
        let int = matches!(ab, WmmaType::S8 | WmmaType::U8);
        let satfinite = satfinite && (int || ab == WmmaType::F16);
        let (m, n, k) = shape.mnk();
        let am = matrix(m, k, ab, &mut seed);
        let bm = matrix(k, n, ab, &mut seed);
        let mut cm = matrix(m, n, cty, &mut seed);
        if int && big_c {
            // Near the s32 limits, so wrapping and clamping both happen.
            for (i, row) in cm.iter_mut().enumerate() {
                for v in row.iter_mut() {
                    *v = if i % 2 == 0 { 0x7FFF_FF00 } else { 0x8000_0100 };
                }
            }
        }
        let sa = store(WmmaFrag::A, shape, lay(layouts[0]), pads[0], &am);
        let sb = store(WmmaFrag::B, shape, lay(layouts[1]), pads[1], &bm);
        let sc = store(WmmaFrag::C, shape, lay(layouts[2]), pads[2], &cm);
        let fa = load(WmmaFrag::A, shape, ab, &sa);
        let fb = load(WmmaFrag::B, shape, ab, &sb);
        let fc = load(WmmaFrag::C, shape, cty, &sc);
        prop_assert!(wmma_regs(WmmaFrag::A, shape, ab).is_some());
        let fd = wmma_mma(shape, ab, dty, cty, satfinite, &fa, &fb, &fc).expect("a defined form");
        // wmma.store.d into a fresh image.
        let (dl, ds) = (lay(layouts[3]), wmma_default_stride(WmmaFrag::C, shape, lay(layouts[3])) as u64 + pads[3]);
        let mut img = vec![u64::MAX; (ds * m.max(n) as u64) as usize];
        for (lane, regs) in fd.iter().enumerate() {
            let vals = wmma_unpack(WmmaFrag::C, shape, dty, regs);
            for ((r, c), v) in wmma_elements(WmmaFrag::C, shape, dty, lane).into_iter().zip(vals) {
                img[wmma_offset(dl, ds, r, c) as usize] = v;
            }
        }
        for i in 0..m {
            for j in 0..n {
                let want = if int {
                    let s = |v: u64| if ab == WmmaType::S8 { v as u8 as i8 as i64 } else { v as u8 as i64 };
                    let mut acc = cm[i][j] as u32 as i32 as i64;
                    for kk in 0..k {
                        acc += s(am[i][kk]) * s(bm[kk][j]);
                    }
                    if satfinite {
                        acc = acc.clamp(i32::MIN as i64, i32::MAX as i64);
                    }
                    acc as u32 as u64
                } else {
                    let mut acc = value(cty, cm[i][j]);
                    for kk in 0..k {
                        acc += value(ab, am[i][kk]) * value(ab, bm[kk][j]);
                    }
                    round(dty, acc)
                };
                let at = match dl {
                    MatLayout::Row => i as u64 * ds + j as u64,
                    MatLayout::Col => j as u64 * ds + i as u64,
                };
                prop_assert_eq!(img[at as usize], want, "{:?} {:?} D[{}][{}]", shape, ab, i, j);
            }
        }
    }

    /// wmma m16n16k16 .f16 → .f32 is two mma.m16n8k16, bit for bit.
    #[test]
    fn wmma_equals_two_mma_m16n8k16(mut seed in any::<u64>()) {
        let shape = WmmaShape::M16n16k16;
        let (f16t, f32t) = (WmmaType::F16, WmmaType::F32);
        let am = matrix(16, 16, f16t, &mut seed);
        let bm = matrix(16, 16, f16t, &mut seed);
        let cm = matrix(16, 16, f32t, &mut seed);
        let row = |f, m: &[Vec<u64>]| store(f, shape, MatLayout::Row, 0, m);
        let fd = wmma_mma(
            shape, f16t, f32t, f32t, false,
            &load(WmmaFrag::A, shape, f16t, &row(WmmaFrag::A, &am)),
            &load(WmmaFrag::B, shape, f16t, &row(WmmaFrag::B, &bm)),
            &load(WmmaFrag::C, shape, f32t, &row(WmmaFrag::C, &cm)),
        ).expect("defined");
        let mut d = vec![vec![0u64; 16]; 16];
        for (lane, regs) in fd.iter().enumerate() {
            for ((r, c), v) in wmma_elements(WmmaFrag::C, shape, f32t, lane).into_iter().zip(regs) {
                d[r][c] = *v;
            }
        }
        // mma.m16n8k16 fragments from the PTX formulas (§9.7.14.5.8), g = lane / 4, t = lane % 4.
        for half in 0..2 {
            let mut fa = [[0u64; 4]; MMA_LANES];
            let mut fb = [[0u64; 2]; MMA_LANES];
            let mut fc = [[0u64; 4]; MMA_LANES];
            for lane in 0..MMA_LANES {
                let (g, t) = (lane / 4, lane % 4);
                for i in 0..8 {
                    let (r, c) = (g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4));
                    fa[lane][i / 2] |= am[r][c] << (16 * (i % 2));
                }
                for i in 0..4 {
                    let (r, c) = (2 * t + i % 2 + 8 * (i / 2), g);
                    fb[lane][i / 2] |= bm[r][8 * half + c] << (16 * (i % 2));
                    let (r, c) = (g + 8 * (i / 2), 2 * t + i % 2);
                    fc[lane][i] = cm[r][8 * half + c];
                }
            }
            let out = mma(MmaShape::M16n8k16, MmaType::F16, &fa, &fb, &fc).expect("defined");
            for (lane, regs) in out.iter().enumerate() {
                let (g, t) = (lane / 4, lane % 4);
                for (i, v) in regs.iter().enumerate() {
                    let (r, c) = (g + 8 * (i / 2), 2 * t + i % 2);
                    prop_assert_eq!(*v, d[r][8 * half + c], "D[{}][{}]", r, 8 * half + c);
                }
            }
        }
    }

    /// mma.m8n8k4: four quad pairs, each D = A·B + C, bit for bit.
    #[test]
    fn mma_m884_matches_the_reference(
        arow in any::<bool>(),
        brow in any::<bool>(),
        dt16 in any::<bool>(),
        ct16 in any::<bool>(),
        mut seed in any::<u64>(),
    ) {
        let (al, bl) = (lay(arow), lay(brow));
        let acc = |h: bool| if h { AccType::F16 } else { AccType::F32 };
        let wt = |h: bool| if h { WmmaType::F16 } else { WmmaType::F32 };
        let (dty, cty) = (acc(dt16), acc(ct16));
        let ams: Vec<_> = (0..4).map(|_| matrix(8, 4, WmmaType::F16, &mut seed)).collect();
        let bms: Vec<_> = (0..4).map(|_| matrix(4, 8, WmmaType::F16, &mut seed)).collect();
        let cms: Vec<_> = (0..4).map(|_| matrix(8, 8, wt(ct16), &mut seed)).collect();
        // Matrix position → (lane, element) of quad pair q; `hi` is the lane group (0 or 16).
        let lane = |q: usize, hi: bool, x: usize| 4 * q + x + if hi { 16 } else { 0 };
        let mut fa = [[0u64; 2]; MMA_LANES];
        let mut fb = [[0u64; 2]; MMA_LANES];
        let mut fc = [[0u64; 8]; MMA_LANES];
        let c_slot = |ty: AccType, q: usize, r: usize, c: usize| match ty {
            // row = lane%4 (+4 in the high group), col = i
            AccType::F16 => (lane(q, r >= 4, r % 4), c),
            // row = (lane&1) + (i&2) (+4), col = (i&4) + (lane&2) + (i&1)
            AccType::F32 => {
                let x = (r % 4) & 1 | (c & 2);
                (lane(q, r >= 4, x), (c & 4) | (r % 4) & 2 | (c & 1))
            }
        };
        for q in 0..4 {
            for r in 0..8 {
                for kk in 0..4 {
                    let (l, i) = match al {
                        MatLayout::Row => (lane(q, r >= 4, r % 4), kk),
                        MatLayout::Col => (lane(q, r >= 4, kk), r % 4),
                    };
                    fa[l][i / 2] |= ams[q][r][kk] << (16 * (i % 2));
                }
            }
            for kk in 0..4 {
                for c in 0..8 {
                    let (l, i) = match bl {
                        MatLayout::Row => (lane(q, c >= 4, kk), c % 4),
                        MatLayout::Col => (lane(q, c >= 4, c % 4), kk),
                    };
                    fb[l][i / 2] |= bms[q][kk][c] << (16 * (i % 2));
                }
            }
            for r in 0..8 {
                for c in 0..8 {
                    let (l, i) = c_slot(cty, q, r, c);
                    match cty {
                        AccType::F16 => fc[l][i / 2] |= cms[q][r][c] << (16 * (i % 2)),
                        AccType::F32 => fc[l][i] = cms[q][r][c],
                    }
                }
            }
        }
        let out = mma_m884(al, bl, dty, cty, &fa, &fb, &fc);
        for q in 0..4 {
            for r in 0..8 {
                for c in 0..8 {
                    let mut s = value(wt(ct16), cms[q][r][c]);
                    for kk in 0..4 {
                        s += value(WmmaType::F16, ams[q][r][kk]) * value(WmmaType::F16, bms[q][kk][c]);
                    }
                    let want = round(wt(dt16), s);
                    let (l, i) = c_slot(dty, q, r, c);
                    let got = match dty {
                        AccType::F16 => (out[l][i / 2] >> (16 * (i % 2))) & 0xFFFF,
                        AccType::F32 => out[l][i],
                    };
                    prop_assert_eq!(got, want, "quad pair {} D[{}][{}]", q, r, c);
                }
            }
        }
    }
}

/// The f16 reference rounding itself: ties to even, overflow to infinity at 65520.
#[test]
fn reference_f16_rounding() {
    assert_eq!(to_f16(1.0), 0x3C00);
    assert_eq!(to_f16(1.0 + 2f64.powi(-11)), 0x3C00);
    assert_eq!(to_f16(1.0 + 3.0 * 2f64.powi(-11)), 0x3C02);
    assert_eq!(to_f16(65519.0), 0x7BFF);
    assert_eq!(to_f16(65520.0), 0x7C00);
    assert_eq!(to_f16(-2f64.powi(-25)), 0x8000);
    assert_eq!(to_f16(2f64.powi(-24)), 0x0001);
}
