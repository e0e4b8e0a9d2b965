//! Property tests of the semantics added for the sm_70–sm_90 instructions and modifiers, each
//! against a reference written independently here: lop3 from a boolean function evaluated on
//! the ISA's constants and bit by bit from its table, dp4a/dp2a with i64 arithmetic on bytes
//! unpacked by casts, bmsk/szext/fns from their definitions in words (bit ranges and set-bit
//! lists), redux as a fold, testp with the host's float classification, min/max `.NaN` and
//! `.xorsign.abs` with host f32 operations, tf32 rounding with integer bit tricks, `.relu` as
//! a clamp of the unmodified result, packed conversions and packed 16-bit integers per half.

use gpusim_isa::semantics::{
    arith, bmsk, convert, convert_pack, dot, fns, lop3, redux, szext, testp,
};
use gpusim_isa::{ArithOp, DotKind, Mods, ReduxOp, Round, TestpOp, Type};
use proptest::prelude::*;

// ------------------------------------------------------------------------------------------
// lop3
// ------------------------------------------------------------------------------------------

/// A boolean function of three words, F(a, b, c).
type Word3 = fn(u32, u32, u32) -> u32;

/// Boolean functions of three words, as the ISA describes them.
fn functions() -> Vec<(&'static str, Word3)> {
    vec![
        ("a&b&c", |a, b, c| a & b & c),
        ("a|b|c", |a, b, c| a | b | c),
        ("a&b&~c", |a, b, c| a & b & !c),
        ("(a&b|c)^a", |a, b, c| (a & b | c) ^ a),
        ("a^b^c", |a, b, c| a ^ b ^ c),
        ("mux a?b:c", |a, b, c| (a & b) | (!a & c)),
        ("majority", |a, b, c| (a & b) | (a & c) | (b & c)),
        ("~(a|b)&c", |a, b, c| !(a | b) & c),
        ("0", |_, _, _| 0),
        ("~0", |_, _, _| !0),
        ("b", |_, b, _| b),
        ("~c", |_, _, c| !c),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// immLut = F(0xF0, 0xCC, 0xAA) (PTX ISA 8.x §9.7.7.6), and lop3 with it computes F.
    #[test]
    fn lop3_computes_the_function_of_its_table(
        i in 0usize..12, a in any::<u32>(), b in any::<u32>(), c in any::<u32>(),
        junk in any::<u32>(),
    ) {
        let (name, f) = functions()[i];
        let lut = (f(0xF0, 0xCC, 0xAA) & 0xFF) as u8;
        let hi = u64::from(junk) << 32;
        prop_assert_eq!(
            lop3(lut, u64::from(a) | hi, u64::from(b), u64::from(c) | hi),
            u64::from(f(a, b, c)),
            "F = {}", name
        );
    }

    /// Bit by bit: d_i is the table's bit at index 4·a_i + 2·b_i + c_i.
    #[test]
    fn lop3_reads_its_table_bit_by_bit(lut in any::<u8>(), a in any::<u32>(), b in any::<u32>(), c in any::<u32>()) {
        let mut want = 0u64;
        for i in 0..32 {
            let idx = 4 * ((a >> i) & 1) + 2 * ((b >> i) & 1) + ((c >> i) & 1);
            want |= u64::from((lut >> idx) & 1) << i;
        }
        prop_assert_eq!(lop3(lut, a.into(), b.into(), c.into()), want);
    }
}

// ------------------------------------------------------------------------------------------
// dp4a / dp2a
// ------------------------------------------------------------------------------------------

fn byte(v: u32, i: u32, signed: bool) -> i64 {
    let x = (v >> (8 * i)) as u8;
    if signed {
        i64::from(x as i8)
    } else {
        i64::from(x)
    }
}

fn halfword(v: u32, i: u32, signed: bool) -> i64 {
    let x = (v >> (16 * i)) as u16;
    if signed {
        i64::from(x as i16)
    } else {
        i64::from(x)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn dp4a_and_dp2a_match_i64_arithmetic(
        a in any::<u32>(), b in any::<u32>(), c in any::<u32>(), sa in any::<bool>(), sb in any::<bool>(),
    ) {
        // c is .u32 when both inputs are unsigned, else .s32; the sum wraps at 32 bits.
        let c0 = if sa || sb { i64::from(c as i32) } else { i64::from(c) };
        let d4 = c0 + (0..4).map(|i| byte(a, i, sa) * byte(b, i, sb)).sum::<i64>();
        prop_assert_eq!(dot(DotKind::Dp4a, sa, sb, a.into(), b.into(), c.into()), d4 as u32 as u64);
        let lo = c0 + (0..2).map(|i| halfword(a, i, sa) * byte(b, i, sb)).sum::<i64>();
        let hi = c0 + (0..2).map(|i| halfword(a, i, sa) * byte(b, 2 + i, sb)).sum::<i64>();
        prop_assert_eq!(dot(DotKind::Dp2aLo, sa, sb, a.into(), b.into(), c.into()), lo as u32 as u64);
        prop_assert_eq!(dot(DotKind::Dp2aHi, sa, sb, a.into(), b.into(), c.into()), hi as u32 as u64);
    }
}

// ------------------------------------------------------------------------------------------
// bmsk, szext, fns
// ------------------------------------------------------------------------------------------

/// Small and large shift-like operands, both equally likely.
fn amount() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..40, any::<u32>()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// bmsk sets bits [start, start + width) cut at bit 31. `.wrap` takes both operands mod 32;
    /// `.clamp` gives 0 for a start of 32 or more and lets a width of 32 or more run to bit 31.
    #[test]
    fn bmsk_is_a_bit_range(a in amount(), b in amount(), clamp in any::<bool>()) {
        let (start, width) = if clamp {
            (u64::from(a), u64::from(b.min(32)))
        } else {
            (u64::from(a % 32), u64::from(b % 32))
        };
        let want: u64 = (0..32u64)
            .filter(|&i| i >= start && i < start + width)
            .map(|i| 1u64 << i)
            .sum();
        prop_assert_eq!(bmsk(clamp, a.into(), b.into()), want);
    }

    /// szext keeps the low N bits and extends them; N = 0 gives 0; N ≥ 32 keeps a under
    /// `.clamp` and is taken mod 32 under `.wrap`.
    #[test]
    fn szext_extends_the_low_bits(a in any::<u32>(), b in amount(), clamp in any::<bool>(), signed in any::<bool>()) {
        let n = if clamp { b.min(32) } else { b % 32 };
        let want = match n {
            0 => 0u32,
            32 => a,
            n if signed => (((a << (32 - n)) as i32) >> (32 - n)) as u32,
            n => a & ((1u32 << n) - 1),
        };
        prop_assert_eq!(szext(clamp, signed, a.into(), b.into()), u64::from(want));
    }

    /// fns: the |offset|-th set bit at or above base (offset > 0) or at or below it (< 0).
    #[test]
    fn fns_counts_set_bits_from_base(mask in any::<u32>(), base in 0u32..32, offset in -40i32..40) {
        let set: Vec<u32> = (0..32).filter(|i| (mask >> i) & 1 == 1).collect();
        let want = if offset == 0 {
            set.contains(&base).then_some(base)
        } else if offset > 0 {
            set.iter().copied().filter(|&i| i >= base).nth(offset as usize - 1)
        } else {
            set.iter().rev().copied().filter(|&i| i <= base).nth(offset.unsigned_abs() as usize - 1)
        };
        let got = fns(mask.into(), base.into(), u64::from(offset as u32));
        prop_assert_eq!(got, u64::from(want.unwrap_or(u32::MAX)));
    }
}

// ------------------------------------------------------------------------------------------
// redux.sync
// ------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn redux_folds_the_lane_values(vals in prop::collection::vec(any::<u32>(), 1..33), junk in any::<u32>()) {
        let raw = || vals.iter().map(|&v| u64::from(v) | (u64::from(junk) << 32));
        let sum = vals.iter().map(|&v| u64::from(v)).sum::<u64>() & 0xFFFF_FFFF;
        prop_assert_eq!(redux(ReduxOp::Add, Type::U32, raw()), sum);
        prop_assert_eq!(redux(ReduxOp::Add, Type::S32, raw()), sum);
        prop_assert_eq!(redux(ReduxOp::And, Type::B32, raw()), u64::from(vals.iter().fold(!0u32, |x, v| x & v)));
        prop_assert_eq!(redux(ReduxOp::Or, Type::B32, raw()), u64::from(vals.iter().fold(0u32, |x, v| x | v)));
        prop_assert_eq!(redux(ReduxOp::Xor, Type::B32, raw()), u64::from(vals.iter().fold(0u32, |x, v| x ^ v)));
        prop_assert_eq!(redux(ReduxOp::Min, Type::U32, raw()), u64::from(*vals.iter().min().unwrap()));
        prop_assert_eq!(redux(ReduxOp::Max, Type::U32, raw()), u64::from(*vals.iter().max().unwrap()));
        let smin = vals.iter().map(|&v| v as i32).min().unwrap();
        let smax = vals.iter().map(|&v| v as i32).max().unwrap();
        prop_assert_eq!(redux(ReduxOp::Min, Type::S32, raw()), u64::from(smin as u32));
        prop_assert_eq!(redux(ReduxOp::Max, Type::S32, raw()), u64::from(smax as u32));
    }
}

// ------------------------------------------------------------------------------------------
// testp
// ------------------------------------------------------------------------------------------

fn f32_special() -> impl Strategy<Value = u32> {
    prop_oneof![
        any::<u32>(),
        prop::sample::select(vec![
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x007F_FFFF,
            0x0080_0000,
            0x7F7F_FFFF,
            0x7F80_0000,
            0xFF80_0000,
            0x7F80_0001,
            0x7FC0_0000,
            0xFFFF_FFFF,
        ]),
    ]
}

fn f64_special() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        prop::sample::select(vec![
            0,
            1 << 63,
            1,
            0x000F_FFFF_FFFF_FFFF,
            0x0010_0000_0000_0000,
            0x7FF0_0000_0000_0000,
            0xFFF0_0000_0000_0000,
            0x7FF8_0000_0000_0000,
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Zeros count as normal numbers (PTX ISA 8.x §9.7.3.1).
    #[test]
    fn testp_matches_host_classification(x in f32_special(), y in f64_special()) {
        let f = f32::from_bits(x);
        let g = f64::from_bits(y);
        let cases = [
            (TestpOp::Finite, f.is_finite(), g.is_finite()),
            (TestpOp::Infinite, f.is_infinite(), g.is_infinite()),
            (TestpOp::Number, !f.is_nan(), !g.is_nan()),
            (TestpOp::NotANumber, f.is_nan(), g.is_nan()),
            (TestpOp::Normal, f.is_normal() || f == 0.0, g.is_normal() || g == 0.0),
            (TestpOp::Subnormal, f.is_subnormal(), g.is_subnormal()),
        ];
        for (op, want32, want64) in cases {
            prop_assert_eq!(testp(op, Type::F32, u64::from(x)), want32, "{:?} f32 {:#x}", op, x);
            prop_assert_eq!(testp(op, Type::F64, y), want64, "{:?} f64 {:#x}", op, y);
        }
    }
}

// ------------------------------------------------------------------------------------------
// min/max .NaN and .xorsign.abs; integer .relu and packed 16-bit integers
// ------------------------------------------------------------------------------------------

const QNAN: u32 = 0x7FFF_FFFF;

/// PTX max/min without modifiers on host floats: a NaN operand yields the other one,
/// +0 > -0.
fn ref_minmax(max: bool, x: f32, y: f32) -> f32 {
    if x.is_nan() {
        return y;
    }
    if y.is_nan() {
        return x;
    }
    if x == y {
        // Only the sign of zero can differ.
        let neg = if max {
            x.is_sign_negative() && y.is_sign_negative()
        } else {
            x.is_sign_negative() || y.is_sign_negative()
        };
        return if neg { -x.abs() } else { x.abs() };
    }
    if (x > y) == max {
        x
    } else {
        y
    }
}

fn bits_or_canonical(v: f32) -> u64 {
    if v.is_nan() {
        u64::from(QNAN)
    } else {
        u64::from(v.to_bits())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn min_max_nan_and_xorsign_abs_f32(x in f32_special(), y in f32_special(), max in any::<bool>()) {
        let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
        let op = if max { ArithOp::Max } else { ArithOp::Min };
        let run = |nan: bool, xa: bool| {
            let m = Mods { nan, xorsign_abs: xa, ..Mods::default() };
            arith(op, Type::F32, m, x.into(), y.into(), 0)
        };
        // .NaN: any NaN input gives the canonical NaN.
        let want = if fx.is_nan() || fy.is_nan() { f32::NAN } else { ref_minmax(max, fx, fy) };
        prop_assert_eq!(run(true, false), bits_or_canonical(want));
        // .xorsign.abs: min/max of the magnitudes with the XOR of the input signs.
        let mag = ref_minmax(max, fx.abs(), fy.abs());
        let neg = fx.is_sign_negative() != fy.is_sign_negative();
        let want = if mag.is_nan() { f32::NAN } else if neg { -mag } else { mag };
        prop_assert_eq!(run(false, true), bits_or_canonical(want));
        let want = if fx.is_nan() || fy.is_nan() { f32::NAN } else { want };
        prop_assert_eq!(run(true, true), bits_or_canonical(want));
    }

    /// The 16-bit float forms follow the same rules, checked through f32 (exact for f16 and
    /// bf16 values); packed forms work per half.
    #[test]
    fn min_max_modifiers_on_half_types(x in any::<u16>(), y in any::<u16>(), bf in any::<bool>(), max in any::<bool>(), nan in any::<bool>(), xa in any::<bool>()) {
        let (ty, pty) = if bf { (Type::Bf16, Type::Bf16x2) } else { (Type::F16, Type::F16x2) };
        let to32 = |b: u16| if bf { half::bf16::from_bits(b).to_f32() } else { half::f16::from_bits(b).to_f32() };
        let (fx, fy) = (to32(x), to32(y));
        let r = if nan && (fx.is_nan() || fy.is_nan()) {
            f32::NAN
        } else if xa {
            let mag = ref_minmax(max, fx.abs(), fy.abs());
            let neg = fx.is_sign_negative() != fy.is_sign_negative();
            if mag.is_nan() { mag } else if neg { -mag } else { mag }
        } else {
            ref_minmax(max, fx, fy)
        };
        let want = if r.is_nan() {
            0x7FFF
        } else if bf {
            u64::from(half::bf16::from_f32(r).to_bits())
        } else {
            u64::from(half::f16::from_f32(r).to_bits())
        };
        let op = if max { ArithOp::Max } else { ArithOp::Min };
        let m = Mods { nan, xorsign_abs: xa, ..Mods::default() };
        prop_assert_eq!(arith(op, ty, m, x.into(), y.into(), 0), want);
        let packed = arith(op, pty, m, (u64::from(x) << 16) | u64::from(y), (u64::from(y) << 16) | u64::from(x), 0);
        let swapped = arith(op, ty, m, y.into(), x.into(), 0);
        prop_assert_eq!(packed, (want << 16) | swapped);
    }

    /// max/min.relu.s32 and the packed .u16x2/.s16x2 forms, per element with host integers.
    #[test]
    fn integer_relu_and_packed_halves(a in any::<u32>(), b in any::<u32>(), max in any::<bool>(), relu in any::<bool>()) {
        let op = if max { ArithOp::Max } else { ArithOp::Min };
        let pick = |x: i64, y: i64| if max { x.max(y) } else { x.min(y) };
        let m = Mods { relu, ..Mods::default() };
        let r32 = pick(i64::from(a as i32), i64::from(b as i32));
        let r32 = if relu { r32.max(0) } else { r32 };
        prop_assert_eq!(arith(op, Type::S32, m, a.into(), b.into(), 0), u64::from(r32 as i32 as u32));
        let half = |v: u32, i: u32, s: bool| {
            let h = (v >> (16 * i)) as u16;
            if s { i64::from(h as i16) } else { i64::from(h) }
        };
        for (ty, s) in [(Type::S16x2, true), (Type::U16x2, false)] {
            let mut want = 0u64;
            for i in 0..2 {
                let r = pick(half(a, i, s), half(b, i, s));
                let r = if relu && s { r.max(0) } else { r };
                want |= u64::from(r as u16) << (16 * i);
            }
            let mods = if s { m } else { Mods::default() };
            prop_assert_eq!(arith(op, ty, mods, a.into(), b.into(), 0), want, "{:?}", ty);
        }
    }
}

// ------------------------------------------------------------------------------------------
// .relu on fma and cvt, packed cvt, tf32
// ------------------------------------------------------------------------------------------

fn rn() -> Mods {
    Mods {
        rnd: Some(Round::Rn),
        ..Mods::default()
    }
}

fn relu_of(bits: u64, sign: u64, nan: u64) -> u64 {
    if bits == nan || bits & sign == 0 {
        bits
    } else {
        0
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// fma.rn.relu: the result of fma.rn, with negatives (-0 included) clamped to +0 and NaN
    /// kept as the canonical NaN (PTX ISA 8.x §9.7.4.4).
    #[test]
    fn fma_relu_clamps_the_fma_result(a in any::<u32>(), b in any::<u32>(), c in any::<u32>(), bf in any::<bool>()) {
        let (ty, pty) = if bf { (Type::Bf16, Type::Bf16x2) } else { (Type::F16, Type::F16x2) };
        let m = Mods { relu: true, ..rn() };
        for (x, y, z) in [(a & 0xFFFF, b & 0xFFFF, c & 0xFFFF), (a >> 16, b >> 16, c >> 16)] {
            let plain = arith(ArithOp::Fma, ty, rn(), x.into(), y.into(), z.into());
            prop_assert_eq!(
                arith(ArithOp::Fma, ty, m, x.into(), y.into(), z.into()),
                relu_of(plain, 0x8000, 0x7FFF)
            );
        }
        let plain = arith(ArithOp::Fma, pty, rn(), a.into(), b.into(), c.into());
        let want = (relu_of(plain >> 16, 0x8000, 0x7FFF) << 16) | relu_of(plain & 0xFFFF, 0x8000, 0x7FFF);
        prop_assert_eq!(arith(ArithOp::Fma, pty, m, a.into(), b.into(), c.into()), want);
    }

    /// cvt.{rn,rz}{.relu}.{f16,bf16}.f32 and the packed .f16x2/.bf16x2 form (a in the upper
    /// half, b in the lower half).
    #[test]
    fn cvt_relu_and_packed_pairs(a in f32_special(), b in f32_special(), bf in any::<bool>(), rz in any::<bool>(), relu in any::<bool>()) {
        let (ty, pty) = if bf { (Type::Bf16, Type::Bf16x2) } else { (Type::F16, Type::F16x2) };
        let rnd = Some(if rz { Round::Rz } else { Round::Rn });
        let plain = Mods { rnd, ..Mods::default() };
        let m = Mods { relu, ..plain };
        let one = |x: u32| {
            let r = convert(ty, Type::F32, plain, x.into());
            if relu { relu_of(r, 0x8000, 0x7FFF) } else { r }
        };
        prop_assert_eq!(convert(ty, Type::F32, m, a.into()), one(a));
        prop_assert_eq!(convert_pack(pty, m, a.into(), b.into()), (one(a) << 16) | one(b));
    }

    /// tf32 keeps 10 fraction bits in f32 layout: rz truncates, rn rounds the 13 dropped bits
    /// to nearest even, rna to nearest with ties away (integer carries into the exponent give
    /// the next binade or infinity). NaN as an H100 gives it (docs/correlation/h100-sxm-2026-11-27),
    /// `.relu` or not: rna keeps the input's tf32 bits, quieted; rn and rz give the canonical
    /// NaN with its low 13 bits clear.
    #[test]
    fn tf32_rounding_by_bit_tricks(x in f32_special(), relu in any::<bool>()) {
        let low = 0x1FFFu32;
        for (rnd, add) in [
            (Round::Rz, 0u32),
            (Round::Rn, 0xFFF + ((x >> 13) & 1)),
            (Round::Rna, 0x1000),
        ] {
            let want: u64 = if f32::from_bits(x).is_nan() {
                if rnd == Round::Rna { ((x | 0x0040_0000) & !low).into() } else { (QNAN & !low).into() }
            } else {
                let sign = x & 0x8000_0000;
                let mag = ((x & 0x7FFF_FFFF) + add) & !low;
                let want = sign | mag;
                if relu { relu_of(want.into(), 0x8000_0000, QNAN.into()) } else { want.into() }
            };
            let m = Mods { rnd: Some(rnd), relu, ..Mods::default() };
            prop_assert_eq!(convert(Type::B32, Type::F32, m, x.into()), want, "{:?} {:#x}", rnd, x);
        }
    }
}
