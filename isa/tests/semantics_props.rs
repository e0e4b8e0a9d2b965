//! Property tests of `gpusim_isa::semantics` against independent references written here: i128
//! and u128 integer arithmetic, literal transcriptions of the PTX pseudocode and tables (bfe,
//! bfi, prmt), and, for floating point, an exact oracle built from error-free f64 expansions
//! (TwoSum, fma-based TwoProduct) that decides on which side of a candidate value, or of the
//! midpoint of two candidates, the exact mathematical result lies.

use gpusim_isa::semantics::{arith, atomic, bfi, combine, compare, convert, set_value, slct};
use gpusim_isa::{ArithOp, AtomOp, BoolOp, Cmp, Mods, PrmtMode, Round, Type};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::cmp::Ordering;

type TestResult = Result<(), TestCaseError>;

fn mods(rnd: Option<Round>) -> Mods {
    Mods {
        rnd,
        ..Mods::default()
    }
}

// ------------------------------------------------------------------------------------------
// Integer reference
// ------------------------------------------------------------------------------------------

fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// The integer value of `x` read as `ty` (two's complement for s-types).
fn ival(ty: Type, x: u64) -> i128 {
    let w = ty.bits();
    let v = i128::from(x & mask(w));
    if ty.is_signed() && (v >> (w - 1)) & 1 == 1 {
        v - (1i128 << w)
    } else {
        v
    }
}

/// The low `w` bits of `v` (two's complement).
fn ibits(w: u32, v: i128) -> u64 {
    (v as u64) & mask(w)
}

fn irange(ty: Type) -> (i128, i128) {
    let w = ty.bits();
    if ty.is_signed() {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

const ITYPES: [Type; 6] = [
    Type::U16,
    Type::U32,
    Type::U64,
    Type::S16,
    Type::S32,
    Type::S64,
];
const ALL_INT: [Type; 12] = [
    Type::U8,
    Type::U16,
    Type::U32,
    Type::U64,
    Type::S8,
    Type::S16,
    Type::S32,
    Type::S64,
    Type::B8,
    Type::B16,
    Type::B32,
    Type::B64,
];

/// Operands with garbage above every width, plus the interesting boundary values.
fn int_operand() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => any::<u64>(),
        2 => prop::sample::select(vec![
            0u64,
            1,
            2,
            u64::MAX,
            0x7F,
            0x80,
            0x7FFF,
            0x8000,
            0xFFFF,
            0x7FFF_FFFF,
            0x8000_0000,
            0xFFFF_FFFF,
            i64::MAX as u64,
            i64::MIN as u64,
            0xFFFF_FFFF_8000_0000,
        ]),
        1 => 0u64..70,
    ]
}

proptest! {
    #[test]
    fn integer_arithmetic_matches_i128(
        ty in prop::sample::select(ITYPES.to_vec()),
        a in int_operand(), b in int_operand(), c in int_operand(),
    ) {
        use ArithOp::*;
        let w = ty.bits();
        let s = ty.is_signed();
        let (x, y, z) = (ival(ty, a), ival(ty, b), ival(ty, c));
        let run = |op| arith(op, ty, Mods::default(), a, b, c);
        prop_assert_eq!(run(Add), ibits(w, x + y));
        prop_assert_eq!(run(Sub), ibits(w, x - y));
        prop_assert_eq!(run(Mul), ibits(w, x.wrapping_mul(y)));
        let hi = if s { (x * y) >> w } else { ((x as u128 * y as u128) >> w) as i128 };
        prop_assert_eq!(run(MulHi), ibits(w, hi));
        prop_assert_eq!(run(Mad), ibits(w, x.wrapping_mul(y).wrapping_add(z)));
        prop_assert_eq!(run(MadHi), ibits(w, hi + z));
        if w <= 32 {
            prop_assert_eq!(run(MulWide), ibits(2 * w, x * y));
            let cw = i128::from(c & mask(2 * w));
            prop_assert_eq!(run(MadWide), ibits(2 * w, x * y + cw));
        }
        // Division by zero: all ones (-1 when signed); remainder by zero: the dividend.
        let (q, r) = if y == 0 { (-1, x) } else { (x / y, x % y) };
        prop_assert_eq!(run(Div), ibits(w, q));
        prop_assert_eq!(run(Rem), ibits(w, r));
        prop_assert_eq!(run(Abs), ibits(w, x.abs()));
        prop_assert_eq!(run(Neg), ibits(w, -x));
        prop_assert_eq!(run(Min), ibits(w, x.min(y)));
        prop_assert_eq!(run(Max), ibits(w, x.max(y)));
        prop_assert_eq!(run(Sad), ibits(w, (x - y).abs() + z));
        if s {
            let sat = Mods { sat: true, ..Mods::default() };
            let (lo, hi_lim) = irange(ty);
            prop_assert_eq!(arith(Add, ty, sat, a, b, c), ibits(w, (x + y).clamp(lo, hi_lim)));
            prop_assert_eq!(arith(Sub, ty, sat, a, b, c), ibits(w, (x - y).clamp(lo, hi_lim)));
            prop_assert_eq!(arith(MadHi, ty, sat, a, b, c), ibits(w, (hi + z).clamp(lo, hi_lim)));
        }
    }

    #[test]
    fn mul24_and_mad24(signed in any::<bool>(), a in int_operand(), b in int_operand(), c in int_operand()) {
        use ArithOp::*;
        let ty = if signed { Type::S32 } else { Type::U32 };
        let e24 = |v: u64| {
            let v = i128::from(v & 0xFF_FFFF);
            if signed && v & 0x80_0000 != 0 { v - (1 << 24) } else { v }
        };
        let p = e24(a) * e24(b);
        let z = ival(ty, c);
        let run = |op, m| arith(op, ty, m, a, b, c);
        let d = Mods::default();
        prop_assert_eq!(run(Mul24Lo, d), ibits(32, p));
        prop_assert_eq!(run(Mul24Hi, d), ibits(32, p >> 16));
        prop_assert_eq!(run(Mad24Lo, d), ibits(32, p + z));
        prop_assert_eq!(run(Mad24Hi, d), ibits(32, (p >> 16) + z));
        if signed {
            let sat = Mods { sat: true, ..d };
            let v = ((p >> 16) + z).clamp(i128::from(i32::MIN), i128::from(i32::MAX));
            prop_assert_eq!(run(Mad24Hi, sat), ibits(32, v));
        }
    }

    #[test]
    fn logic_and_shifts(
        ty in prop::sample::select(vec![
            Type::B16, Type::B32, Type::B64, Type::U16, Type::U32, Type::U64,
            Type::S16, Type::S32, Type::S64,
        ]),
        a in int_operand(),
        b in prop_oneof![0u64..80, any::<u64>(), Just(1u64 << 32)],
    ) {
        use ArithOp::*;
        let w = ty.bits();
        let m = mask(w);
        let run = |op| arith(op, ty, Mods::default(), a, b, 0);
        prop_assert_eq!(run(And), a & b & m);
        prop_assert_eq!(run(Or), (a | b) & m);
        prop_assert_eq!(run(Xor), (a ^ b) & m);
        prop_assert_eq!(run(Not), !a & m);
        prop_assert_eq!(run(Cnot), u64::from(a & m == 0));
        // The shift amount is an unsigned 32-bit value.
        let n = b & 0xFFFF_FFFF;
        let shl = if n >= u64::from(w) { 0 } else { (((a & m) as u128) << n) as u64 & m };
        prop_assert_eq!(run(Shl), shl);
        let shr = if ty.is_signed() {
            ibits(w, ival(ty, a) >> n.min(127))
        } else if n >= u64::from(w) {
            0
        } else {
            (a & m) >> n
        };
        prop_assert_eq!(run(Shr), shr);
    }

    #[test]
    fn predicate_logic(a in 0u64..2, b in 0u64..2, junk in any::<u64>()) {
        use ArithOp::*;
        let (ga, gb) = (a | (junk & !1), b | (junk.rotate_left(7) & !1));
        let run = |op| arith(op, Type::Pred, Mods::default(), ga, gb, 0);
        prop_assert_eq!(run(And), a & b);
        prop_assert_eq!(run(Or), a | b);
        prop_assert_eq!(run(Xor), a ^ b);
        prop_assert_eq!(run(Not), 1 - a);
    }

    #[test]
    fn bit_fields_match_ptx_pseudocode(
        wide in any::<bool>(), signed in any::<bool>(), a in int_operand(), b in int_operand(),
        pos in prop_oneof![0u64..80, any::<u64>()], len in prop_oneof![0u64..80, any::<u64>()],
    ) {
        let (bty, ity) = match (wide, signed) {
            (false, false) => (Type::B32, Type::U32),
            (false, true) => (Type::B32, Type::S32),
            (true, false) => (Type::B64, Type::U64),
            (true, true) => (Type::B64, Type::S64),
        };
        prop_assert_eq!(arith(ArithOp::Bfe, ity, Mods::default(), a, pos, len), ref_bfe(ity, a, pos, len));
        prop_assert_eq!(bfi(bty, a, b, pos, len), ref_bfi(bty, a, b, pos, len));
        let msb = bty.bits() - 1;
        let bit = |i: u32| (a >> i) & 1;
        let brev = (0..=msb).fold(0, |d, i| d | (bit(i) << (msb - i)));
        let popc = (0..=msb).map(bit).sum::<u64>();
        let clz = (0..=msb).rev().take_while(|&i| bit(i) == 0).count() as u64;
        let run = |op| arith(op, bty, Mods::default(), a, 0, 0);
        prop_assert_eq!(run(ArithOp::Brev), brev);
        prop_assert_eq!(run(ArithOp::Popc), popc);
        prop_assert_eq!(run(ArithOp::Clz), clz);
    }

    #[test]
    fn prmt_matches_ptx_table(a in any::<u64>(), b in any::<u64>(), c in any::<u64>(), mode in 0usize..7) {
        let modes = [
            PrmtMode::Default, PrmtMode::F4e, PrmtMode::B4e, PrmtMode::Rc8,
            PrmtMode::Ecl, PrmtMode::Ecr, PrmtMode::Rc16,
        ];
        let got = arith(ArithOp::Prmt(modes[mode]), Type::B32, Mods::default(), a, b, c);
        prop_assert_eq!(got, ref_prmt(modes[mode], a as u32, b as u32, c as u32));
    }
}

/// bfe exactly as the PTX ISA pseudocode of `bfe`, bit by bit.
/// The bits of bfe/bfi's pos and len that count: 7..0 in the PTX ISA, which an H100 follows
/// for 32-bit fields; its 64-bit forms read all 32 bits (docs/correlation/h100-sxm-2026-11-27).
fn field_bits(ty: Type) -> u64 {
    if ty.bits() == 64 {
        0xFFFF_FFFF
    } else {
        0xFF
    }
}

fn ref_bfe(ty: Type, a: u64, b: u64, c: u64) -> u64 {
    let msb = u64::from(ty.bits() - 1);
    let pos = b & field_bits(ty);
    let len = c & field_bits(ty);
    let bit = |i: u64| (a >> i) & 1;
    let sbit = if !ty.is_signed() || len == 0 {
        0
    } else {
        bit((pos + len - 1).min(msb))
    };
    let mut d = 0;
    for i in 0..=msb {
        let v = if i < len && pos + i <= msb {
            bit(pos + i)
        } else {
            sbit
        };
        d |= v << i;
    }
    d
}

/// bfi exactly as the PTX ISA pseudocode of `bfi`.
fn ref_bfi(ty: Type, a: u64, b: u64, c: u64, d: u64) -> u64 {
    let msb = u64::from(ty.bits() - 1);
    let pos = c & field_bits(ty);
    let len = d & field_bits(ty);
    let mut f = b & mask(ty.bits());
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

/// prmt: the generic form from the pseudocode, the modes from the PTX table
/// (each row lists the source byte of d.b3, d.b2, d.b1, d.b0 for c[1:0] = 0..3).
fn ref_prmt(mode: PrmtMode, a: u32, b: u32, c: u32) -> u64 {
    let tmp = (u64::from(b) << 32) | u64::from(a);
    let byte = |i: u32| (tmp >> (8 * i)) & 0xFF;
    let table: [[u32; 4]; 4] = match mode {
        PrmtMode::Default => {
            let mut d = 0;
            for i in 0..4 {
                let ctl = (c >> (4 * i)) & 0xF;
                let mut v = byte(ctl & 7);
                if ctl & 8 != 0 {
                    v = if v & 0x80 != 0 { 0xFF } else { 0 };
                }
                d |= v << (8 * i);
            }
            return d;
        }
        PrmtMode::F4e => [[3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2], [6, 5, 4, 3]],
        PrmtMode::B4e => [[5, 6, 7, 0], [6, 7, 0, 1], [7, 0, 1, 2], [0, 1, 2, 3]],
        PrmtMode::Rc8 => [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
        PrmtMode::Ecl => [[3, 2, 1, 0], [3, 2, 1, 1], [3, 2, 2, 2], [3, 3, 3, 3]],
        PrmtMode::Ecr => [[0, 0, 0, 0], [1, 1, 1, 0], [2, 2, 1, 0], [3, 2, 1, 0]],
        PrmtMode::Rc16 => [[1, 0, 1, 0], [3, 2, 3, 2], [1, 0, 1, 0], [3, 2, 3, 2]],
    };
    let row = table[(c & 3) as usize];
    (0..4).fold(0, |d, i| d | (byte(row[3 - i]) << (8 * i)))
}

#[test]
fn hand_worked_bit_examples() {
    let d = Mods::default();
    // prmt: a = 0x33221100-style byte indices.
    let (a, b) = (0x0302_0100u64, 0x0706_0504u64);
    assert_eq!(
        arith(ArithOp::Prmt(PrmtMode::Default), Type::B32, d, a, b, 0x5140),
        0x0501_0400
    );
    assert_eq!(
        arith(
            ArithOp::Prmt(PrmtMode::Default),
            Type::B32,
            d,
            0x80,
            0,
            0x0008
        ),
        0x8080_80FF
    );
    assert_eq!(
        arith(ArithOp::Prmt(PrmtMode::B4e), Type::B32, d, a, b, 1),
        0x0607_0001
    );
    assert_eq!(
        arith(ArithOp::Prmt(PrmtMode::Ecr), Type::B32, d, a, b, 3),
        0x0302_0100
    );
    // bfe.s32 of bits 4..11 of 0x0000_0F80: field 0xF8 has its sign bit set.
    assert_eq!(arith(ArithOp::Bfe, Type::S32, d, 0x0F80, 4, 8), 0xFFFF_FFF8);
    assert_eq!(arith(ArithOp::Bfe, Type::U32, d, 0x0F80, 4, 8), 0xF8);
    assert_eq!(
        arith(ArithOp::Bfe, Type::S64, d, 1 << 63, 63, 200),
        u64::MAX
    );
    assert_eq!(arith(ArithOp::Bfe, Type::U64, d, u64::MAX, 70, 5), 0);
    assert_eq!(bfi(Type::B32, 0b101, 0xFFFF_FFFF, 4, 3), 0xFFFF_FFDF);
    assert_eq!(bfi(Type::B32, 0xFFFF, 0, 0x100, 4), 0xF);
    assert_eq!(
        arith(ArithOp::Brev, Type::B32, d, 0x0000_00F1, 0, 0),
        0x8F00_0000
    );
    assert_eq!(arith(ArithOp::Clz, Type::B32, d, 0x00F0_0000, 0, 0), 8);
    assert_eq!(arith(ArithOp::Clz, Type::B64, d, 0, 0, 0), 64);
    assert_eq!(arith(ArithOp::Popc, Type::B64, d, u64::MAX, 0, 0), 64);
}

// ------------------------------------------------------------------------------------------
// Exact floating-point oracle
// ------------------------------------------------------------------------------------------

/// A test-side description of an IEEE format.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ff {
    frac: u32,
    exp: u32,
    ty: Type,
}

const H: Ff = Ff {
    frac: 10,
    exp: 5,
    ty: Type::F16,
};
const BH: Ff = Ff {
    frac: 7,
    exp: 8,
    ty: Type::Bf16,
};
const S: Ff = Ff {
    frac: 23,
    exp: 8,
    ty: Type::F32,
};
const D: Ff = Ff {
    frac: 52,
    exp: 11,
    ty: Type::F64,
};

fn ff(ty: Type) -> Ff {
    match ty {
        Type::F16 => H,
        Type::Bf16 => BH,
        Type::F32 => S,
        _ => D,
    }
}

impl Ff {
    fn width(self) -> u32 {
        1 + self.frac + self.exp
    }
    fn mask(self) -> u64 {
        mask(self.width())
    }
    fn sign(self) -> u64 {
        1 << (self.width() - 1)
    }
    fn inf(self) -> u64 {
        ((1 << self.exp) - 1) << self.frac
    }
    fn nan(self) -> u64 {
        self.mask() >> 1
    }
    fn mag(self, b: u64) -> u64 {
        b & (self.mask() >> 1)
    }
    fn is_nan(self, b: u64) -> bool {
        self.mag(b) > self.inf()
    }
    fn is_zero(self, b: u64) -> bool {
        self.mag(b) == 0
    }
    fn is_sub(self, b: u64) -> bool {
        self.mag(b) != 0 && self.mag(b) < (1 << self.frac)
    }
    fn neg(self, b: u64) -> bool {
        b & self.sign() != 0
    }
    fn flush(self, b: u64) -> u64 {
        if self.is_sub(b) {
            b & self.sign()
        } else {
            b
        }
    }
    fn value(self, b: u64) -> f64 {
        match self.ty {
            Type::F16 => half::f16::from_bits(b as u16).to_f64(),
            Type::Bf16 => half::bf16::from_bits(b as u16).to_f64(),
            Type::F32 => f64::from(f32::from_bits(b as u32)),
            _ => f64::from_bits(b),
        }
    }
    /// The bits of an f64 that is exactly a value of this format (or NaN / inf / zero).
    fn bits_of(self, v: f64) -> u64 {
        let s = if v.is_sign_negative() { self.sign() } else { 0 };
        if v.is_nan() {
            self.nan()
        } else if v.is_infinite() {
            s | self.inf()
        } else if v == 0.0 {
            s
        } else {
            match self.ty {
                Type::F16 => u64::from(half::f16::from_f64(v).to_bits()),
                Type::Bf16 => u64::from(half::bf16::from_f64(v).to_bits()),
                Type::F32 => u64::from((v as f32).to_bits()),
                _ => v.to_bits(),
            }
        }
    }
    fn next_up(self, b: u64) -> u64 {
        if self.is_nan(b) || b == self.inf() {
            b
        } else if self.is_zero(b) {
            1
        } else if self.neg(b) {
            b - 1
        } else {
            b + 1
        }
    }
    fn next_down(self, b: u64) -> u64 {
        self.next_up(b ^ self.sign()) ^ self.sign()
    }
    /// 2^(emax+1): where the finite values would continue past the largest one.
    fn beyond_max(self) -> f64 {
        2f64.powi(1 << (self.exp - 1))
    }
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// a*b as an exact two-term expansion (needs no underflow of the error term).
fn two_prod(a: f64, b: f64) -> [f64; 2] {
    let p = a * b;
    [p, a.mul_add(b, -p)]
}

/// The exact sign of the sum of `terms` (Shewchuk's grow-expansion; no overflow allowed).
fn sum_sign(terms: &[f64]) -> Ordering {
    let mut e: Vec<f64> = Vec::new();
    for &t in terms {
        let mut q = t;
        let mut next = Vec::with_capacity(e.len() + 1);
        for &x in &e {
            let (s, err) = two_sum(q, x);
            if err != 0.0 {
                next.push(err);
            }
            q = s;
        }
        if q != 0.0 {
            next.push(q);
        }
        e = next;
    }
    match e.last() {
        None => Ordering::Equal,
        Some(v) if *v > 0.0 => Ordering::Greater,
        Some(_) => Ordering::Less,
    }
}

/// An exact real result X, kept symbolic.
enum Exact {
    /// X = the sum of the terms
    Sum(Vec<f64>),
    /// X = (sum of num) / den
    Quot(Vec<f64>, f64),
    /// X = sqrt(a), a >= 0
    Sqrt(f64),
}

impl Exact {
    /// The sign of X - (v1 + v2) / 2 for finite v1, v2 (adjacent values of a format, or equal).
    fn side(&self, v1: f64, v2: f64) -> Ordering {
        let (h1, h2) = (v1 / 2.0, v2 / 2.0);
        match self {
            Exact::Sum(t) => {
                let mut terms = t.clone();
                terms.extend([-h1, -h2]);
                sum_sign(&terms)
            }
            Exact::Quot(num, den) => {
                let mut terms = num.clone();
                terms.extend(two_prod(h1, *den).map(|x| -x));
                terms.extend(two_prod(h2, *den).map(|x| -x));
                let s = sum_sign(&terms);
                if *den < 0.0 {
                    s.reverse()
                } else {
                    s
                }
            }
            Exact::Sqrt(a) => {
                let s = v1 + v2;
                if s < 0.0 || (s == 0.0 && *a > 0.0) {
                    Ordering::Greater
                } else if s == 0.0 {
                    Ordering::Equal
                } else {
                    // sqrt(a) vs m = h1 + h2 > 0: compare a with m^2 = h1^2 + h1*v2 + h2^2.
                    let mut terms = vec![*a];
                    for p in [two_prod(h1, h1), two_prod(h1, v2), two_prod(h2, h2)] {
                        terms.extend(p.map(|x| -x));
                    }
                    sum_sign(&terms)
                }
            }
        }
    }
}

/// Checks that `r` is the exact value `x` rounded into `f` by `rnd` (none = `.rn`); an exact
/// zero must come out as the zero of sign `zero_neg`.
fn check_rounded(f: Ff, rnd: Option<Round>, r: u64, x: &Exact, zero_neg: bool) -> TestResult {
    let sx = |v: f64| {
        if v == f64::INFINITY {
            Ordering::Less
        } else if v == f64::NEG_INFINITY {
            Ordering::Greater
        } else {
            x.side(v, v)
        }
    };
    prop_assert!(!f.is_nan(r), "NaN {:#x} for a finite exact result", r);
    prop_assert_eq!(r & !f.mask(), 0, "result not zero-extended");
    let x0 = sx(0.0);
    if x0 == Ordering::Equal {
        prop_assert_eq!(r, if zero_neg { f.sign() } else { 0 }, "exact zero");
        return Ok(());
    }
    if f.is_zero(r) {
        prop_assert_eq!(
            f.neg(r),
            x0 == Ordering::Less,
            "sign of a zero result {:#x}",
            r
        );
    }
    let rv = f.value(r);
    let up = f.value(f.next_up(r));
    let dn = f.value(f.next_down(r));
    let below = || sx(rv) != Ordering::Less && sx(up) == Ordering::Less; // r <= X < up
    let above = || sx(rv) != Ordering::Greater && sx(dn) == Ordering::Greater; // dn < X <= r
    match rnd.unwrap_or(Round::Rn) {
        Round::Rm => prop_assert!(below(), "rm: {:#x} ({}) is not the floor", r, rv),
        Round::Rp => prop_assert!(above(), "rp: {:#x} ({}) is not the ceiling", r, rv),
        Round::Rz if x0 == Ordering::Greater => prop_assert!(below(), "rz: {:#x} ({})", r, rv),
        Round::Rz => prop_assert!(above(), "rz: {:#x} ({})", r, rv),
        _ => {
            let big = f.beyond_max();
            let max = f.value(f.inf() - 1);
            let upv = if up.is_infinite() { big } else { up };
            let dnv = if dn.is_infinite() { -big } else { dn };
            if !upv.is_finite() || !dnv.is_finite() {
                // f64 next to overflow: the tests keep f64 operands well inside the range.
                return Ok(());
            }
            if rv.is_infinite() {
                let s = if rv > 0.0 {
                    x.side(max, big)
                } else {
                    x.side(-max, -big).reverse()
                };
                prop_assert!(
                    s != Ordering::Less,
                    "rn: overflow to inf below the threshold"
                );
            } else {
                let hi = x.side(rv, upv);
                let lo = x.side(dnv, rv);
                prop_assert!(
                    hi != Ordering::Greater && lo != Ordering::Less,
                    "rn: {:#x} ({}) is not nearest",
                    r,
                    rv
                );
                if hi == Ordering::Equal || lo == Ordering::Equal {
                    prop_assert_eq!(r & 1, 0, "rn: tie not rounded to even");
                }
            }
        }
    }
    Ok(())
}

const FOPS: [ArithOp; 8] = [
    ArithOp::Add,
    ArithOp::Sub,
    ArithOp::Mul,
    ArithOp::Fma,
    ArithOp::Mad,
    ArithOp::Div,
    ArithOp::Rcp,
    ArithOp::Sqrt,
];

/// The result when an operand is NaN or infinite or the result is undefined or infinite for
/// finite operands (division by zero, sqrt of a negative): exact, computed in f64.
fn special(op: ArithOp, x: f64, y: f64, z: f64) -> Option<f64> {
    use ArithOp::*;
    let uses_y = !matches!(op, Rcp | Sqrt);
    let uses_z = matches!(op, Fma | Mad);
    let non_finite = !x.is_finite() || (uses_y && !y.is_finite()) || (uses_z && !z.is_finite());
    let singular = match op {
        Div => y == 0.0,
        Rcp => x == 0.0,
        Sqrt => x < 0.0,
        _ => false,
    };
    if !(non_finite || singular) {
        return None;
    }
    Some(match op {
        Add => x + y,
        Sub => x - y,
        Mul => x * y,
        Fma | Mad => x.mul_add(y, z),
        Div => x / y,
        Rcp => 1.0 / x,
        _ => x.sqrt(),
    })
}

fn exact_of(op: ArithOp, x: f64, y: f64, z: f64) -> Exact {
    use ArithOp::*;
    match op {
        Add => Exact::Sum(vec![x, y]),
        Sub => Exact::Sum(vec![x, -y]),
        Mul => Exact::Sum(two_prod(x, y).to_vec()),
        Fma | Mad => {
            let mut t = two_prod(x, y).to_vec();
            t.push(z);
            Exact::Sum(t)
        }
        Div => Exact::Quot(vec![x], y),
        Rcp => Exact::Quot(vec![1.0], x),
        _ => Exact::Sqrt(x),
    }
}

/// IEEE 754 §6.3: the sign of an exact zero result.
fn exact_zero_neg(op: ArithOp, rnd: Option<Round>, x: f64, y: f64, z: f64) -> bool {
    use ArithOp::*;
    let down = rnd == Some(Round::Rm);
    let n = |v: f64| v.is_sign_negative();
    match op {
        Add | Sub => {
            let y = if op == Sub { -y } else { y };
            if x == 0.0 && y == 0.0 && n(x) == n(y) {
                n(x)
            } else {
                down
            }
        }
        Mul | Div => n(x) != n(y),
        Fma | Mad => {
            let pn = n(x) != n(y);
            if (x == 0.0 || y == 0.0) && z == 0.0 && pn == n(z) {
                pn
            } else {
                down
            }
        }
        _ => n(x),
    }
}

/// Runs every rounding operation of format `f` on (a, b, c), with garbage above the width, and
/// checks each result against the oracle.
fn check_float_ops(f: Ff, rnd: Option<Round>, a: u64, b: u64, c: u64, junk: u64) -> TestResult {
    let g = |v: u64| {
        if f.width() < 64 {
            v | (junk << f.width())
        } else {
            v
        }
    };
    let (x, y, z) = (f.value(a), f.value(b), f.value(c));
    for op in FOPS {
        let r = arith(op, f.ty, mods(rnd), g(a), g(b), g(c));
        if let Some(e) = special(op, x, y, z) {
            prop_assert_eq!(r, f.bits_of(e), "{:?} {:?} of {}, {}, {}", op, rnd, x, y, z);
            continue;
        }
        let zn = exact_zero_neg(op, rnd, x, y, z);
        check_rounded(f, rnd, r, &exact_of(op, x, y, z), zn).map_err(|e| {
            TestCaseError::fail(format!("{op:?} {rnd:?} of {x:e}, {y:e}, {z:e}: {e}"))
        })?;
    }
    Ok(())
}

fn rnd_mode() -> impl Strategy<Value = Option<Round>> {
    prop::sample::select(vec![
        None,
        Some(Round::Rn),
        Some(Round::Rz),
        Some(Round::Rm),
        Some(Round::Rp),
    ])
}

fn f32_bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => any::<u32>().prop_map(u64::from),
        2 => prop::sample::select(vec![
            0u64, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x7F80_0001, 0xFFFF_FFFF,
            1, 0x8000_0001, 0x007F_FFFF, 0x0080_0000, 0x7F7F_FFFF, 0xFF7F_FFFF, 0x3F80_0000,
            0xBF80_0000, 0x3F80_0001, 0x4B80_0000, 0x3400_0000, 0x3300_0000,
        ]),
        2 => (0u32..0x0100_0000, any::<bool>()).prop_map(|(m, s)| u64::from(m) | (u64::from(s) << 31)),
        2 => (0x3E80_0000u32..0x4100_0000, any::<bool>()).prop_map(|(m, s)| u64::from(m) | (u64::from(s) << 31)),
        1 => (0x7E00_0000u32..0x7F80_0000).prop_map(u64::from),
    ]
}

/// Pairs that include near-cancellations (b close to -a or to a) and operands whose quotient
/// a/b or square root sqrt(a) lies very close to a representable value (a = q*b or a = s*s
/// rounded), where only the sticky information decides directed rounding.
fn f32_pair() -> impl Strategy<Value = (u64, u64)> {
    let f = |v: u64| f32::from_bits(v as u32);
    prop_oneof![
        2 => (f32_bits(), f32_bits()),
        1 => (f32_bits(), -3i64..4, any::<bool>()).prop_map(|(a, d, flip)| {
            let b = if flip { a ^ 0x8000_0000 } else { a };
            (a, (b as i64 + d) as u64 & 0xFFFF_FFFF)
        }),
        1 => (f32_bits(), f32_bits()).prop_map(move |(q, b)| (u64::from((f(q) * f(b)).to_bits()), b)),
        1 => (f32_bits(), f32_bits()).prop_map(move |(r, b)| (u64::from((f(r) * f(r)).to_bits()), b)),
    ]
}

/// f64 values with exponents in [-300, 300] (so that the oracle's products never under- or
/// overflow), plus zeros, infinities and NaN.
fn f64_bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => (any::<bool>(), -300i64..300, any::<u64>()).prop_map(|(s, e, fr)| {
            (u64::from(s) << 63) | (((e + 1023) as u64) << 52) | (fr & ((1 << 52) - 1))
        }),
        2 => (any::<bool>(), -4i64..4, 0u64..8).prop_map(|(s, e, fr)| {
            (u64::from(s) << 63) | (((e + 1023) as u64) << 52) | fr
        }),
        1 => prop::sample::select(vec![
            0u64, 1 << 63, 0x7FF0_0000_0000_0000, 0xFFF0_0000_0000_0000, 0x7FF8_0000_0000_0000,
            0x3FF0_0000_0000_0000, 0xBFF0_0000_0000_0000, 0x3CA0_0000_0000_0000,
        ]),
    ]
}

fn f64_pair() -> impl Strategy<Value = (u64, u64)> {
    let f = f64::from_bits;
    prop_oneof![
        2 => (f64_bits(), f64_bits()),
        1 => (f64_bits(), f64_bits()).prop_map(move |(q, b)| ((f(q) * f(b)).to_bits(), b)),
        1 => (f64_bits(), f64_bits()).prop_map(move |(r, b)| ((f(r) * f(r)).to_bits(), b)),
        1 => (f64_bits(), -3i64..4, any::<bool>()).prop_map(|(a, d, flip)| {
            let b = if flip { a ^ (1 << 63) } else { a };
            let nb = (b as i64).wrapping_add(d) as u64;
            // Keep f64 subnormals out: the oracle halves values exactly only above them.
            (a, if (nb >> 52) & 0x7FF == 0 { b } else { nb })
        }),
    ]
}

fn f16_bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => any::<u16>().prop_map(u64::from),
        1 => prop::sample::select(vec![0u64, 0x8000, 0x7C00, 0xFC00, 0x7E00, 1, 0x3C00, 0x7BFF, 0x0400]),
    ]
}

/// f16/bf16 operand pairs, some with a ≈ q*b or a ≈ s*s (see `f32_pair`).
fn f16_pair(bf: bool) -> impl Strategy<Value = (u64, u64)> {
    let f = Ff::value;
    let fmt = if bf { BH } else { H };
    let near = move |v: f64| {
        let v = v as f32;
        if bf {
            u64::from(half::bf16::from_f32(v).to_bits())
        } else {
            u64::from(half::f16::from_f32(v).to_bits())
        }
    };
    prop_oneof![
        2 => (f16_bits(), f16_bits()),
        1 => (f16_bits(), f16_bits()).prop_map(move |(q, b)| (near(f(fmt, q) * f(fmt, b)), b)),
        1 => (f16_bits(), f16_bits()).prop_map(move |(r, b)| (near(f(fmt, r) * f(fmt, r)), b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn f32_rounding_is_exact((a, b) in f32_pair(), c in f32_bits(), rnd in rnd_mode(), junk in any::<u32>()) {
        check_float_ops(S, rnd, a, b, c, u64::from(junk))?;
    }

    #[test]
    fn f64_rounding_is_exact((a, b) in f64_pair(), c in f64_bits(), rnd in rnd_mode()) {
        check_float_ops(D, rnd, a, b, c, 0)?;
    }

    #[test]
    fn f16_and_bf16_rounding_is_exact(
        (bf, (a, b)) in any::<bool>().prop_flat_map(|bf| (Just(bf), f16_pair(bf))),
        c in f16_bits(), rnd in rnd_mode(), junk in any::<u64>(),
    ) {
        check_float_ops(if bf { BH } else { H }, rnd, a, b, c, junk)?;
    }

    #[test]
    fn packed_halves_work_per_element(
        bf in any::<bool>(), a in any::<u32>(), b in any::<u32>(), c in any::<u32>(),
        rnd in rnd_mode(), op in prop::sample::select(vec![
            ArithOp::Add, ArithOp::Sub, ArithOp::Mul, ArithOp::Fma, ArithOp::Neg,
            ArithOp::Abs, ArithOp::Min, ArithOp::Max,
        ]),
        sat in any::<bool>(),
    ) {
        let (pty, ety) = if bf { (Type::Bf16x2, Type::Bf16) } else { (Type::F16x2, Type::F16) };
        let m = Mods { rnd, sat, ..Mods::default() };
        let (a, b, c) = (u64::from(a), u64::from(b), u64::from(c));
        let lo = arith(op, ety, m, a & 0xFFFF, b & 0xFFFF, c & 0xFFFF);
        let hi = arith(op, ety, m, a >> 16, b >> 16, c >> 16);
        prop_assert_eq!(arith(op, pty, m, a | (0xDEAD << 32), b, c), (hi << 16) | lo);
    }

    #[test]
    fn ftz_and_sat(
        ty in prop::sample::select(vec![Type::F32, Type::F16]),
        a in f32_bits(), b in f32_bits(), c in f32_bits(), rnd in rnd_mode(),
    ) {
        let f = ff(ty);
        let (a, b, c) = (a & f.mask(), b & f.mask(), c & f.mask());
        for op in FOPS {
            let plain = arith(op, ty, mods(rnd), f.flush(a), f.flush(b), f.flush(c));
            let ftz = arith(op, ty, Mods { rnd, ftz: true, ..Mods::default() }, a, b, c);
            prop_assert_eq!(ftz, f.flush(plain), "{:?} .ftz", op);
            prop_assert!(!f.is_sub(ftz));
            let sat = arith(op, ty, Mods { rnd, sat: true, ..Mods::default() }, a, b, c);
            let raw = arith(op, ty, mods(rnd), a, b, c);
            let want = if f.is_nan(raw) || f.neg(raw) {
                0
            } else if f.value(raw) > 1.0 {
                f.bits_of(1.0)
            } else {
                raw
            };
            prop_assert_eq!(sat, want, "{:?} .sat", op);
        }
    }

    #[test]
    fn min_max_abs_neg_copysign(
        ty in prop::sample::select(vec![Type::F16, Type::Bf16, Type::F32, Type::F64]),
        a in any::<u64>(), b in any::<u64>(), pick in 0u8..4,
    ) {
        let f = ff(ty);
        // Mix in special values so that NaNs and zeros meet often.
        let sp = [0, f.sign(), f.nan() ^ 1, f.inf()];
        let a = if pick == 1 { sp[(b % 4) as usize] } else { a & f.mask() };
        let b = if pick == 2 { sp[(a % 4) as usize] } else { b & f.mask() };
        let canon = |v: u64| if f.is_nan(v) { f.nan() } else { v };
        let d = Mods::default();
        for max in [false, true] {
            let want = match (f.is_nan(a), f.is_nan(b)) {
                (true, true) => f.nan(),
                (true, false) => b,
                (false, true) => a,
                (false, false) => {
                    let (x, y) = (f.value(a), f.value(b));
                    if x == y {
                        // Only zeros can differ: -0 < +0.
                        if f.neg(a) == max { b } else { a }
                    } else if (x > y) == max { a } else { b }
                }
            };
            let op = if max { ArithOp::Max } else { ArithOp::Min };
            prop_assert_eq!(arith(op, ty, d, a, b, 0), want, "{:?}", op);
        }
        prop_assert_eq!(arith(ArithOp::Abs, ty, d, a, 0, 0), canon(a & !f.sign()));
        prop_assert_eq!(arith(ArithOp::Neg, ty, d, a, 0, 0), canon(a ^ f.sign()));
        prop_assert_eq!(arith(ArithOp::Copysign, ty, d, a, b, 0), canon((b & !f.sign()) | (a & f.sign())));
    }

    #[test]
    fn float_compare_matches_partial_cmp(
        ty in prop::sample::select(vec![Type::F16, Type::Bf16, Type::F32, Type::F64]),
        a in any::<u64>(), b in any::<u64>(), same in any::<bool>(), ftz in any::<bool>(),
    ) {
        let f = ff(ty);
        let b = if same { a ^ (b & 1) } else { b };
        let prep = |v: u64| if ftz && ty != Type::F64 { f.flush(v & f.mask()) } else { v & f.mask() };
        let (x, y) = (f.value(prep(a)), f.value(prep(b)));
        let o = x.partial_cmp(&y);
        use Ordering::*;
        let table = [
            (Cmp::Eq, o == Some(Equal)),
            (Cmp::Ne, o == Some(Less) || o == Some(Greater)),
            (Cmp::Lt, o == Some(Less)),
            (Cmp::Le, o == Some(Less) || o == Some(Equal)),
            (Cmp::Gt, o == Some(Greater)),
            (Cmp::Ge, o == Some(Greater) || o == Some(Equal)),
            (Cmp::Equ, o.is_none() || o == Some(Equal)),
            (Cmp::Neu, o != Some(Equal)),
            (Cmp::Ltu, o.is_none() || o == Some(Less)),
            (Cmp::Leu, o != Some(Greater)),
            (Cmp::Gtu, o.is_none() || o == Some(Greater)),
            (Cmp::Geu, o != Some(Less)),
            (Cmp::Num, o.is_some()),
            (Cmp::Nan, o.is_none()),
        ];
        for (cmp, want) in table {
            prop_assert_eq!(compare(cmp, ty, ftz && ty != Type::F64, a, b), want, "{:?}", cmp);
        }
    }

    #[test]
    fn integer_compare(
        ty in prop::sample::select(vec![Type::U16, Type::U32, Type::U64, Type::S16, Type::S32, Type::S64, Type::B32]),
        a in int_operand(), b in int_operand(),
    ) {
        let (x, y) = (ival(ty, a), ival(ty, b));
        let m = mask(ty.bits());
        let (ux, uy) = (a & m, b & m);
        let table = [
            (Cmp::Eq, x == y), (Cmp::Ne, x != y), (Cmp::Lt, x < y), (Cmp::Le, x <= y),
            (Cmp::Gt, x > y), (Cmp::Ge, x >= y), (Cmp::Lo, ux < uy), (Cmp::Ls, ux <= uy),
            (Cmp::Hi, ux > uy), (Cmp::Hs, ux >= uy),
        ];
        for (cmp, want) in table {
            prop_assert_eq!(compare(cmp, ty, false, a, b), want, "{:?}", cmp);
        }
    }
}

#[test]
fn float_special_values() {
    let d = Mods::default();
    let f = |x: f32| u64::from(x.to_bits());
    let nan = 0x7FFF_FFFF;
    assert_eq!(
        arith(
            ArithOp::Add,
            Type::F32,
            d,
            f(f32::INFINITY),
            f(f32::NEG_INFINITY),
            0
        ),
        nan
    );
    assert_eq!(
        arith(ArithOp::Mul, Type::F32, d, f(0.0), f(f32::INFINITY), 0),
        nan
    );
    assert_eq!(arith(ArithOp::Div, Type::F32, d, f(0.0), f(-0.0), 0), nan);
    assert_eq!(
        arith(ArithOp::Div, Type::F32, d, f(-1.0), f(0.0), 0),
        f(f32::NEG_INFINITY)
    );
    assert_eq!(
        arith(
            ArithOp::Sqrt,
            Type::F32,
            mods(Some(Round::Rz)),
            f(-0.0),
            0,
            0
        ),
        f(-0.0)
    );
    assert_eq!(arith(ArithOp::Sqrt, Type::F32, d, f(-1.0), 0, 0), nan);
    assert_eq!(
        arith(
            ArithOp::Rcp,
            Type::F32,
            mods(Some(Round::Rn)),
            f(-0.0),
            0,
            0
        ),
        f(f32::NEG_INFINITY)
    );
    assert_eq!(
        arith(
            ArithOp::Add,
            Type::F32,
            mods(Some(Round::Rm)),
            f(1.5),
            f(-1.5),
            0
        ),
        f(-0.0)
    );
    assert_eq!(
        arith(
            ArithOp::Add,
            Type::F32,
            mods(Some(Round::Rp)),
            f(1.5),
            f(-1.5),
            0
        ),
        f(0.0)
    );
    assert_eq!(
        arith(ArithOp::Add, Type::F64, d, 0x7FF8_0000_0000_0001, 0, 0),
        0x7FFF_FFFF_FFFF_FFFF
    );
    // Directed overflow: .rz and .rm keep the largest finite value for a positive result.
    let big = f(f32::MAX);
    assert_eq!(
        arith(
            ArithOp::Mul,
            Type::F32,
            mods(Some(Round::Rz)),
            big,
            f(2.0),
            0
        ),
        big
    );
    assert_eq!(
        arith(
            ArithOp::Mul,
            Type::F32,
            mods(Some(Round::Rm)),
            big,
            f(2.0),
            0
        ),
        big
    );
    assert_eq!(
        arith(
            ArithOp::Mul,
            Type::F32,
            mods(Some(Round::Rp)),
            big,
            f(2.0),
            0
        ),
        f(f32::INFINITY)
    );
    assert_eq!(
        arith(
            ArithOp::Mul,
            Type::F32,
            mods(Some(Round::Rm)),
            big,
            f(-2.0),
            0
        ),
        f(f32::NEG_INFINITY)
    );
    // 1/3 rounded each way.
    let third = 1.0f32 / 3.0;
    assert_eq!(
        arith(ArithOp::Rcp, Type::F32, mods(Some(Round::Rz)), f(3.0), 0, 0),
        f(third) - 1
    );
    assert_eq!(
        arith(ArithOp::Rcp, Type::F32, mods(Some(Round::Rp)), f(3.0), 0, 0),
        f(third)
    );
    assert_eq!(
        arith(
            ArithOp::Rcp,
            Type::F32,
            mods(Some(Round::Rm)),
            f(-3.0),
            0,
            0
        ),
        f(-third)
    );
    // fma keeps the product exact: (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46.
    let e = f(1.0) + 1;
    assert_eq!(
        arith(ArithOp::Fma, Type::F32, d, e, e, f(-(1.0 + 2f32.powi(-22)))),
        f(2f32.powi(-46))
    );
    // .ftz flushes subnormal inputs and results; .sat maps NaN to +0.
    let ftz = Mods { ftz: true, ..d };
    assert_eq!(
        arith(ArithOp::Mul, Type::F32, ftz, 0x0040_0000, f(4.0), 0),
        0
    );
    assert_eq!(
        arith(ArithOp::Mul, Type::F32, d, 0x0040_0000, f(4.0), 0),
        0x0100_0000
    );
    assert_eq!(
        arith(
            ArithOp::Mul,
            Type::F32,
            ftz,
            f(2f32.powi(-70)),
            f(-(2f32.powi(-70))),
            0
        ),
        0x8000_0000
    );
    let sat = Mods { sat: true, ..d };
    assert_eq!(arith(ArithOp::Sqrt, Type::F32, sat, f(-4.0), 0, 0), 0);
    assert_eq!(arith(ArithOp::Add, Type::F32, sat, f(-0.0), f(-0.0), 0), 0);
    // .approx transcendentals follow the std functions.
    let ap = Mods { approx: true, ..d };
    assert_eq!(arith(ArithOp::Lg2, Type::F32, ap, f(8.0), 0, 0), f(3.0));
    assert_eq!(
        arith(ArithOp::Lg2, Type::F32, ap, f(0.0), 0, 0),
        f(f32::NEG_INFINITY)
    );
    assert_eq!(arith(ArithOp::Lg2, Type::F32, ap, f(-1.0), 0, 0), nan);
    assert_eq!(
        arith(ArithOp::Ex2, Type::F32, ap, f(f32::NEG_INFINITY), 0, 0),
        0
    );
    assert_eq!(arith(ArithOp::Ex2, Type::F32, ap, f(10.0), 0, 0), f(1024.0));
    assert_eq!(arith(ArithOp::Rsqrt, Type::F32, ap, f(4.0), 0, 0), f(0.5));
    assert_eq!(
        arith(ArithOp::Rsqrt, Type::F32, ap, f(-0.0), 0, 0),
        f(f32::NEG_INFINITY)
    );
    assert_eq!(
        arith(ArithOp::Sin, Type::F32, ap, f(f32::INFINITY), 0, 0),
        nan
    );
    assert_eq!(arith(ArithOp::Cos, Type::F32, ap, f(0.0), 0, 0), f(1.0));
    assert_eq!(arith(ArithOp::Tanh, Type::F32, ap, f(-0.0), 0, 0), f(-0.0));
    assert_eq!(arith(ArithOp::Tanh, Type::F32, ap, f(100.0), 0, 0), f(1.0));
    assert_eq!(arith(ArithOp::Ex2, Type::F16, ap, 0x4000, 0, 0), 0x4400);
}

// ------------------------------------------------------------------------------------------
// cvt
// ------------------------------------------------------------------------------------------

fn int_round(x: f64, rnd: Option<Round>) -> f64 {
    match rnd {
        Some(Round::Rni) => x.round_ties_even(),
        Some(Round::Rmi) => x.floor(),
        Some(Round::Rpi) => x.ceil(),
        _ => x.trunc(),
    }
}

fn float_source() -> impl Strategy<Value = (Type, u64)> {
    prop_oneof![
        (Just(Type::F16), f16_bits()),
        (Just(Type::Bf16), f16_bits()),
        (Just(Type::F32), f32_bits()),
        (Just(Type::F64), f64_bits()),
        (Just(Type::F64), any::<u64>()),
        // Values around the integer ranges.
        (
            Just(Type::F64),
            (any::<bool>(), -2i64..70, any::<u64>()).prop_map(|(s, e, fr)| {
                (u64::from(s) << 63) | (((e + 1023) as u64) << 52) | (fr >> 12)
            })
        ),
        (
            Just(Type::F32),
            (any::<bool>(), -2i32..70, any::<u32>()).prop_map(|(s, e, fr)| {
                (u64::from(s) << 31) | (((e + 127) as u64) << 23) | u64::from(fr >> 9)
            })
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn cvt_int_to_int(
        d in prop::sample::select(ALL_INT.to_vec()), s in prop::sample::select(ALL_INT.to_vec()),
        a in int_operand(), sat in any::<bool>(),
    ) {
        let v = ival(s, a);
        let want = if sat {
            let (lo, hi) = irange(d);
            ibits(d.bits(), v.clamp(lo, hi))
        } else {
            ibits(d.bits(), v)
        };
        prop_assert_eq!(convert(d, s, Mods { sat, ..Mods::default() }, a), want);
    }

    #[test]
    fn cvt_float_to_int(
        d in prop::sample::select(ALL_INT.to_vec()), (s, a) in float_source(),
        rnd in prop::sample::select(vec![None, Some(Round::Rni), Some(Round::Rzi), Some(Round::Rmi), Some(Round::Rpi)]),
        ftz in any::<bool>(), junk in any::<u64>(),
    ) {
        let f = ff(s);
        let a = a & f.mask();
        let flushed = if ftz && s == Type::F32 { f.flush(a) } else { a };
        let r = int_round(f.value(flushed), rnd);
        let (lo, hi) = irange(d);
        let limit = 2f64.powi(100);
        // PTX ISA cvt integer notes: NaN → 0 from f16/f32 into ≤32-bit destinations, else
        // the destination's sign bit alone.
        let v = if r.is_nan() {
            if s != Type::F64 && d.bits() <= 32 { 0 } else { 1i128 << (d.bits() - 1) }
        } else if r >= limit {
            hi
        } else if r <= -limit {
            lo
        } else {
            (r as i128).clamp(lo, hi)
        };
        let arg = if f.width() < 64 { a | (junk << f.width()) } else { a };
        prop_assert_eq!(convert(d, s, Mods { rnd, ftz, ..Mods::default() }, arg), ibits(d.bits(), v));
    }

    #[test]
    fn cvt_int_to_float(
        d in prop::sample::select(vec![Type::F16, Type::Bf16, Type::F32, Type::F64]),
        s in prop::sample::select(ALL_INT.to_vec()), a in int_operand(), rnd in rnd_mode(),
    ) {
        let v = ival(s, a);
        let r = convert(d, s, mods(rnd), a);
        let x = Exact::Sum(vec![((v >> 32) as f64) * 2f64.powi(32), (v & 0xFFFF_FFFF) as f64]);
        check_rounded(ff(d), rnd, r, &x, false)?;
    }

    #[test]
    fn cvt_float_to_float(
        d in prop::sample::select(vec![Type::F16, Type::Bf16, Type::F32, Type::F64]),
        (s, a) in float_source(), rnd in rnd_mode(),
    ) {
        let (sf, df) = (ff(s), ff(d));
        let a = a & sf.mask();
        let x = sf.value(a);
        let r = convert(d, s, mods(rnd), a);
        if x.is_nan() || x.is_infinite() {
            prop_assert_eq!(r, df.bits_of(x));
        } else if d == Type::F64 {
            // Widening (or identity) is exact.
            prop_assert_eq!(r, x.to_bits());
        } else {
            check_rounded(df, rnd, r, &Exact::Sum(vec![x]), x.is_sign_negative())?;
        }
    }

    #[test]
    fn cvt_float_integer_rounding(
        (s, a) in float_source(),
        rnd in prop::sample::select(vec![Some(Round::Rni), Some(Round::Rzi), Some(Round::Rmi), Some(Round::Rpi)]),
        sat in any::<bool>(),
    ) {
        let f = ff(s);
        let a = a & f.mask();
        let v = int_round(f.value(a), rnd);
        let want = f.bits_of(v);
        let want = if !sat {
            want
        } else if f.is_nan(want) || f.neg(want) {
            0
        } else if v > 1.0 {
            f.bits_of(1.0)
        } else {
            want
        };
        prop_assert_eq!(convert(s, s, Mods { rnd, sat, ..Mods::default() }, a), want);
    }

    #[test]
    fn cvt_ftz_f32(a in f32_bits(), d in prop::sample::select(vec![Type::F32, Type::F64, Type::F16])) {
        let ftz = Mods { ftz: true, ..Mods::default() };
        let r = convert(d, Type::F32, ftz, a);
        prop_assert_eq!(r, convert(d, Type::F32, Mods::default(), S.flush(a)));
        // f64 -> f32 with .ftz flushes subnormal results.
        let wide = f64::from(f32::from_bits(a as u32)) * 0.75;
        let n = convert(Type::F32, Type::F64, ftz, wide.to_bits());
        prop_assert!(!S.is_sub(n));
    }
}

#[test]
fn cvt_hand_examples() {
    use Type::*;
    let m = |rnd: Option<Round>, sat: bool| Mods {
        rnd,
        sat,
        ..Mods::default()
    };
    let f = |x: f32| u64::from(x.to_bits());
    assert_eq!(
        convert(S32, F32, m(Some(Round::Rzi), false), f(1e10)),
        0x7FFF_FFFF
    );
    assert_eq!(
        convert(S32, F32, m(Some(Round::Rzi), false), f(f32::NEG_INFINITY)),
        0x8000_0000
    );
    assert_eq!(convert(U16, F32, m(Some(Round::Rni), false), f(-0.7)), 0);
    assert_eq!(
        convert(U16, F32, m(Some(Round::Rni), false), f(65535.4)),
        0xFFFF
    );
    assert_eq!(
        convert(S64, F64, m(None, false), f64::NAN.to_bits()),
        1 << 63
    );
    assert_eq!(
        convert(S32, F64, m(None, false), f64::NAN.to_bits()),
        0x8000_0000
    );
    assert_eq!(
        convert(S32, F32, m(None, false), f32::NAN.to_bits() as u64),
        0
    );
    assert_eq!(convert(S32, F32, m(Some(Round::Rni), false), f(2.5)), 2);
    assert_eq!(
        convert(S32, F32, m(Some(Round::Rni), false), f(-3.5)),
        (-4i32) as u32 as u64
    );
    assert_eq!(convert(S32, F32, m(Some(Round::Rpi), false), 1), 1);
    let ftz = Mods {
        rnd: Some(Round::Rpi),
        ftz: true,
        ..Mods::default()
    };
    assert_eq!(convert(S32, F32, ftz, 1), 0);
    assert_eq!(convert(U8, U32, m(None, true), 256), 255);
    assert_eq!(convert(S16, S64, m(None, true), (-40000i64) as u64), 0x8000);
    assert_eq!(convert(U32, S64, m(None, true), (-1i64) as u64), 0);
    assert_eq!(
        convert(S32, U64, m(None, false), 0x1_2345_6789),
        0x2345_6789
    );
    assert_eq!(convert(U64, S8, m(None, false), 0xFF), u64::MAX);
    assert_eq!(convert(B16, S8, m(None, false), 0x80), 0xFF80);
    assert_eq!(
        convert(F32, U64, m(Some(Round::Rz), false), u64::MAX),
        f(f32::from_bits(0x5F7F_FFFF))
    );
    assert_eq!(
        convert(F32, U64, m(None, false), u64::MAX),
        f(2f32.powi(64))
    );
    assert_eq!(
        convert(
            F16,
            S32,
            m(Some(Round::Rm), false),
            (-65520i32) as u32 as u64
        ),
        0xFC00
    );
    assert_eq!(
        convert(
            F16,
            S32,
            m(Some(Round::Rz), false),
            (-65520i32) as u32 as u64
        ),
        0xFBFF
    );
    assert_eq!(
        convert(Bf16, F32, m(Some(Round::Rn), false), f(1.0 + 2f32.powi(-8))),
        0x3F80
    );
    assert_eq!(
        convert(Bf16, F32, m(Some(Round::Rp), false), f(1.0 + 2f32.powi(-8))),
        0x3F81
    );
    assert_eq!(convert(F32, F16, m(None, false), 0x7E00), 0x7FFF_FFFF);
    assert_eq!(convert(F32, F32, m(None, true), f(3.0)), f(1.0));
    assert_eq!(
        convert(F32, F64, m(Some(Round::Rn), true), f64::NAN.to_bits()),
        0
    );
    assert_eq!(
        convert(F16x2, F16x2, m(None, false), 0x3C00_BC00),
        0x3C00_BC00
    );
    let tf32 = m(Some(Round::Rna), false);
    assert_eq!(convert(B32, F32, tf32, 0x3F80_1000), 0x3F80_2000);
}

// ------------------------------------------------------------------------------------------
// cvt float → integer against an integer-only reference (issue 11, item 1)
// ------------------------------------------------------------------------------------------

const F2I_DSTS: [Type; 8] = [
    Type::S8,
    Type::U8,
    Type::S16,
    Type::U16,
    Type::S32,
    Type::U32,
    Type::S64,
    Type::U64,
];
const F2I_MODES: [Round; 4] = [Round::Rni, Round::Rzi, Round::Rmi, Round::Rpi];

/// Float → integer with integer arithmetic only, written apart from `semantics::convert` (which
/// rounds in f64 and saturates with Rust casts): the bits are split into sign, exponent field
/// and fraction; the value `sig · 2^exp2` is cut into an integral part and a remainder compared
/// with one half; the integer rounding modifier decides whether the magnitude goes up; the
/// result is clamped to the destination's range (PTX ISA `cvt`: "For float-to-integer
/// conversions, the result is clamped to the destination range by default"). NaN follows the
/// PTX ISA's integer notes: 0 when the source is not .f64 and the destination is not 64-bit,
/// otherwise `1 << (BitWidth(dst) - 1)`. `.ftz` flushes f32 subnormal sources to zero.
fn ref_float_to_int(src: Ff, dst: Type, rnd: Round, ftz: bool, bits: u64) -> u64 {
    let bits = bits & src.mask();
    let w = dst.bits();
    let (lo, hi) = irange(dst);
    let neg = bits >> (src.width() - 1) == 1;
    let field = (bits >> src.frac) & ((1 << src.exp) - 1);
    let frac = bits & ((1 << src.frac) - 1);
    let bias = (1i32 << (src.exp - 1)) - 1;
    if field == (1 << src.exp) - 1 {
        if frac != 0 {
            let nan = if src.ty != Type::F64 && w <= 32 {
                0
            } else {
                1i128 << (w - 1)
            };
            return ibits(w, nan);
        }
        return ibits(w, if neg { lo } else { hi });
    }
    let (sig, exp2): (u128, i32) = if field == 0 {
        let flushed = ftz && src.ty == Type::F32;
        (
            if flushed { 0 } else { u128::from(frac) },
            1 - bias - src.frac as i32,
        )
    } else {
        (
            u128::from(frac | (1 << src.frac)),
            field as i32 - bias - src.frac as i32,
        )
    };
    // Integral part, and the remainder against one half: Less, Equal or Greater, or None when
    // there is no remainder.
    let (int, rem): (u128, Option<Ordering>) = if exp2 >= 0 {
        // sig < 2^53, so anything shifted past 2^70 is far outside every range.
        (if exp2 > 70 { 1 << 120 } else { sig << exp2 }, None)
    } else {
        let sh = -exp2 as u32;
        if sh >= 120 {
            (0, (sig != 0).then_some(Ordering::Less))
        } else {
            let r = sig & ((1u128 << sh) - 1);
            (sig >> sh, (r != 0).then(|| r.cmp(&(1u128 << (sh - 1)))))
        }
    };
    let up = match (rnd, rem) {
        (_, None) => false,
        (Round::Rzi, _) => false,
        (Round::Rmi, _) => neg,
        (Round::Rpi, _) => !neg,
        (_, Some(Ordering::Greater)) => true,
        (_, Some(Ordering::Equal)) => int % 2 == 1,
        (_, Some(Ordering::Less)) => false,
    };
    let mag = (int + u128::from(up)).min(1 << 100) as i128;
    ibits(w, if neg { -mag } else { mag }.clamp(lo, hi))
}

/// The bit patterns every float → integer conversion is tried on: zeros, subnormals, the
/// extremes, infinities, NaNs (quiet, signalling, negative, with payload), small halves, and
/// for each destination the values just inside and just outside its range, with their
/// neighbours in the source format.
fn f2i_specials(src: Ff) -> Vec<u64> {
    let sign = src.sign();
    let mut v = vec![
        0,
        sign,
        1,
        sign | 1,
        (1 << src.frac) - 1,
        1 << src.frac,
        src.inf() - 1,
        sign | (src.inf() - 1),
        src.inf(),
        sign | src.inf(),
        src.nan(),
        src.inf() | 1,
        src.inf() | (1 << (src.frac - 1)),
        sign | src.inf() | (1 << (src.frac - 1)),
        src.mask(),
    ];
    let mut values = vec![0.5, 1.5, 2.5, 3.5, 0.49, 0.51, 1.0, 7.0];
    for d in F2I_DSTS {
        let (lo, hi) = irange(d);
        for edge in [lo as f64, hi as f64, hi as f64 + 1.0, lo as f64 - 1.0] {
            values.extend([edge, edge - 0.5, edge + 0.5]);
        }
    }
    for x in values {
        for y in [x, -x] {
            let b = src.bits_of(y);
            v.extend([b, src.next_up(b), src.next_down(b)]);
        }
    }
    v
}

fn f2i_mods(rnd: Round, sat: bool, ftz: bool) -> Mods {
    Mods {
        rnd: Some(rnd),
        sat,
        ftz,
        ..Mods::default()
    }
}

#[test]
fn cvt_float_to_int_every_type_mode_and_special_value() {
    let mut cases = 0;
    for src in [H, BH, S, D] {
        for bits in f2i_specials(src) {
            for dst in F2I_DSTS {
                for rnd in F2I_MODES {
                    for sat in [false, true] {
                        for ftz in [false, true] {
                            if ftz && src.ty != Type::F32 {
                                continue;
                            }
                            let got = convert(dst, src.ty, f2i_mods(rnd, sat, ftz), bits);
                            let want = ref_float_to_int(src, dst, rnd, ftz, bits);
                            assert_eq!(
                                got,
                                want,
                                "cvt.{rnd:?}{}{}.{}.{} of {bits:#x}",
                                if ftz { ".ftz" } else { "" },
                                if sat { ".sat" } else { "" },
                                dst.name(),
                                src.ty.name()
                            );
                            cases += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(cases > 40_000, "{cases} cases");
}

/// The reference's own hand-checked points, so that it is not merely self-consistent.
#[test]
fn float_to_int_reference_examples() {
    let f = |x: f32| u64::from(x.to_bits());
    let r = ref_float_to_int;
    assert_eq!(
        r(D, Type::S32, Round::Rzi, false, f64::NAN.to_bits()),
        0x8000_0000
    );
    assert_eq!(r(S, Type::S32, Round::Rzi, false, f(f32::NAN)), 0);
    assert_eq!(r(S, Type::U64, Round::Rni, false, f(f32::NAN)), 1 << 63);
    assert_eq!(r(D, Type::U8, Round::Rni, false, f64::NAN.to_bits()), 0x80);
    assert_eq!(r(H, Type::S16, Round::Rni, false, 0x7E00), 0);
    assert_eq!(r(S, Type::S8, Round::Rni, false, f(-128.5)), 0x80);
    assert_eq!(r(S, Type::S8, Round::Rni, false, f(127.5)), 0x7F);
    assert_eq!(r(S, Type::U16, Round::Rpi, false, f(65534.5)), 0xFFFF);
    assert_eq!(
        r(S, Type::S32, Round::Rni, false, f(-2.5)),
        (-2i32) as u32 as u64
    );
    assert_eq!(r(S, Type::S32, Round::Rmi, false, f(-0.0)), 0);
    assert_eq!(
        r(S, Type::S32, Round::Rmi, false, 0x8000_0001),
        u64::from(u32::MAX)
    );
    assert_eq!(r(S, Type::S32, Round::Rmi, true, 0x8000_0001), 0);
    assert_eq!(r(S, Type::U32, Round::Rzi, false, f(-0.9)), 0);
    assert_eq!(
        r(D, Type::S64, Round::Rzi, false, 2f64.powi(63).to_bits()),
        i64::MAX as u64
    );
    assert_eq!(
        r(D, Type::U64, Round::Rzi, false, f64::INFINITY.to_bits()),
        u64::MAX
    );
    assert_eq!(r(BH, Type::U8, Round::Rzi, false, 0x4380), 0xFF); // bf16 256.0
    assert_eq!(r(H, Type::U32, Round::Rpi, false, 0x0001), 1); // smallest f16 subnormal
}

fn f2i_source() -> impl Strategy<Value = (Ff, u64)> {
    prop_oneof![
        (Just(H), f16_bits()),
        (Just(BH), f16_bits()),
        (Just(S), f32_bits()),
        (Just(S), any::<u32>().prop_map(u64::from)),
        (Just(D), f64_bits()),
        (Just(D), any::<u64>()),
        (
            Just(D),
            (any::<bool>(), 1000u64..1100, any::<u64>())
                .prop_map(|(s, e, fr)| { (u64::from(s) << 63) | (e << 52) | (fr >> 12) })
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn cvt_float_to_int_matches_integer_reference(
        (src, bits) in f2i_source(), dst in prop::sample::select(F2I_DSTS.to_vec()),
        rnd in prop::sample::select(F2I_MODES.to_vec()), sat in any::<bool>(),
        ftz in any::<bool>(), junk in any::<u64>(),
    ) {
        let ftz = ftz && src.ty == Type::F32;
        let arg = if src.width() < 64 { bits | (junk << src.width()) } else { bits };
        prop_assert_eq!(
            convert(dst, src.ty, f2i_mods(rnd, sat, ftz), arg),
            ref_float_to_int(src, dst, rnd, ftz, bits)
        );
    }
}

// ------------------------------------------------------------------------------------------
// atom, slct, set, combine
// ------------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn atomics_match_reference(
        ty in prop::sample::select(vec![Type::U32, Type::S32, Type::U64, Type::S64, Type::B32, Type::B64]),
        old in int_operand(), b in int_operand(), c in int_operand(),
    ) {
        let m = mask(ty.bits());
        let (o, bb, cc) = (old & m, b & m, c & m);
        let (x, y) = (ival(ty, old), ival(ty, b));
        let run = |op| atomic(op, ty, old, b, c);
        prop_assert_eq!(run(AtomOp::And), o & bb);
        prop_assert_eq!(run(AtomOp::Or), o | bb);
        prop_assert_eq!(run(AtomOp::Xor), o ^ bb);
        prop_assert_eq!(run(AtomOp::Exch), bb);
        prop_assert_eq!(run(AtomOp::Cas), if o == bb { cc } else { o });
        prop_assert_eq!(run(AtomOp::Add), ibits(ty.bits(), x + y));
        prop_assert_eq!(run(AtomOp::Inc), if o >= bb { 0 } else { o + 1 });
        prop_assert_eq!(run(AtomOp::Dec), if o == 0 || o > bb { bb } else { o - 1 });
        prop_assert_eq!(run(AtomOp::Min), ibits(ty.bits(), x.min(y)));
        prop_assert_eq!(run(AtomOp::Max), ibits(ty.bits(), x.max(y)));
        prop_assert_eq!(atomic(AtomOp::Cas, ty, old, old, c), cc);
    }

    #[test]
    fn float_atomic_add(a in f32_bits(), b in f32_bits(), (da, db) in f64_pair()) {
        // atom.add.f32: round to nearest, subnormal inputs and results flushed.
        let (x, y) = (f32::from_bits(S.flush(a) as u32), f32::from_bits(S.flush(b) as u32));
        let s = u64::from((x + y).to_bits());
        let want = if S.is_nan(s) { S.nan() } else { S.flush(s) };
        prop_assert_eq!(atomic(AtomOp::Add, Type::F32, a, b, 0), want);
        let s = (f64::from_bits(da) + f64::from_bits(db)).to_bits();
        prop_assert_eq!(atomic(AtomOp::Add, Type::F64, da, db, 0), if D.is_nan(s) { D.nan() } else { s });
        let (ha, hb) = (a & 0xFFFF_FFFF, b & 0xFFFF_FFFF);
        let lo = arith(ArithOp::Add, Type::F16, Mods::default(), ha & 0xFFFF, hb & 0xFFFF, 0);
        let hi = arith(ArithOp::Add, Type::F16, Mods::default(), ha >> 16, hb >> 16, 0);
        prop_assert_eq!(atomic(AtomOp::Add, Type::F16x2, ha, hb, 0), (hi << 16) | lo);
    }

    #[test]
    fn slct_selects_on_sign(a in any::<u64>(), b in any::<u64>(), c in any::<u64>(), cf in f32_bits(), ftz in any::<bool>()) {
        let want = (if (c as u32 as i32) >= 0 { a } else { b }) & 0xFFFF_FFFF;
        prop_assert_eq!(slct(Type::U32, Type::S32, false, a, b, c), want);
        let v = S.value(if ftz { S.flush(cf) } else { cf });
        let want = if v >= 0.0 { a } else { b };
        prop_assert_eq!(slct(Type::B64, Type::F32, ftz, a, b, cf), want);
        prop_assert_eq!(slct(Type::F32, Type::F32, ftz, a, b, cf), want & 0xFFFF_FFFF);
    }
}

#[test]
fn set_and_combine() {
    assert_eq!(set_value(Type::U32, true), 0xFFFF_FFFF);
    assert_eq!(set_value(Type::S32, true), 0xFFFF_FFFF);
    assert_eq!(set_value(Type::F32, true), 0x3F80_0000);
    assert_eq!(set_value(Type::F16, true), 0x3C00);
    assert_eq!(set_value(Type::F16x2, true), 0x3C00_3C00);
    assert_eq!(set_value(Type::Pred, true), 1);
    for ty in [Type::U32, Type::S32, Type::F32, Type::F16x2, Type::Pred] {
        assert_eq!(set_value(ty, false), 0);
    }
    for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
        assert_eq!(combine(BoolOp::And, x, y), x & y);
        assert_eq!(combine(BoolOp::Or, x, y), x | y);
        assert_eq!(combine(BoolOp::Xor, x, y), x ^ y);
    }
    // slct.f32 treats -0.0 as >= 0 and picks b for NaN.
    assert_eq!(slct(Type::U32, Type::F32, false, 1, 2, 0x8000_0000), 1);
    assert_eq!(slct(Type::U32, Type::F32, false, 1, 2, 0x7FC0_0000), 2);
    assert_eq!(slct(Type::U32, Type::F32, true, 1, 2, 0x8000_0001), 1);
    assert_eq!(slct(Type::U32, Type::F32, false, 1, 2, 0x8000_0001), 2);
}

// ------------------------------------------------------------------------------------------
// Totality: every op on every type with every modifier answers, within the destination width
// ------------------------------------------------------------------------------------------

const ALL_TYPES: [Type; 20] = [
    Type::B8,
    Type::B16,
    Type::B32,
    Type::B64,
    Type::B128,
    Type::U8,
    Type::U16,
    Type::U32,
    Type::U64,
    Type::S8,
    Type::S16,
    Type::S32,
    Type::S64,
    Type::F16,
    Type::F16x2,
    Type::Bf16,
    Type::Bf16x2,
    Type::F32,
    Type::F64,
    Type::Pred,
];

fn all_ops() -> Vec<ArithOp> {
    use ArithOp::*;
    let mut v = vec![
        Add, Sub, Mul, MulHi, MulWide, Mad, MadHi, MadWide, Mul24Lo, Mul24Hi, Mad24Lo, Mad24Hi,
        Div, Rem, Abs, Neg, Min, Max, And, Or, Xor, Not, Cnot, Shl, Shr, Bfe, Brev, Popc, Clz, Fma,
        Rcp, Sqrt, Rsqrt, Sin, Cos, Lg2, Ex2, Tanh, Copysign, Sad,
    ];
    for m in [
        PrmtMode::Default,
        PrmtMode::F4e,
        PrmtMode::B4e,
        PrmtMode::Rc8,
        PrmtMode::Ecl,
        PrmtMode::Ecr,
        PrmtMode::Rc16,
    ] {
        v.push(Prmt(m));
    }
    v
}

fn any_mods() -> impl Strategy<Value = Mods> {
    let rounds = vec![
        None,
        Some(Round::Rn),
        Some(Round::Rz),
        Some(Round::Rm),
        Some(Round::Rp),
        Some(Round::Rni),
        Some(Round::Rzi),
        Some(Round::Rmi),
        Some(Round::Rpi),
        Some(Round::Rna),
    ];
    (
        prop::sample::select(rounds),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(rnd, ftz, sat, approx)| Mods {
            rnd,
            ftz,
            sat,
            approx,
            ..Mods::default()
        })
}

fn dest_mask(op: ArithOp, ty: Type) -> u64 {
    use ArithOp::*;
    let w = match ty {
        Type::Pred => 1,
        Type::B128 => 64,
        t => t.bits(),
    };
    match op {
        MulWide | MadWide => mask(2 * w),
        Mul24Lo | Mul24Hi | Mad24Lo | Mad24Hi | Prmt(_) | Popc | Clz => 0xFFFF_FFFF,
        _ => ty.mask(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn every_operation_is_total(
        op in prop::sample::select(all_ops()), ty in prop::sample::select(ALL_TYPES.to_vec()),
        m in any_mods(), a in int_operand(), b in int_operand(), c in int_operand(),
    ) {
        let r = arith(op, ty, m, a, b, c);
        prop_assert_eq!(r & !dest_mask(op, ty), 0, "{:?}.{:?} gave {:#x}", op, ty, r);
    }

    #[test]
    fn every_conversion_is_total(
        d in prop::sample::select(ALL_TYPES.to_vec()), s in prop::sample::select(ALL_TYPES.to_vec()),
        m in any_mods(), a in int_operand(),
    ) {
        let r = convert(d, s, m, a);
        prop_assert_eq!(r & !d.mask(), 0, "cvt.{:?}.{:?} gave {:#x}", d, s, r);
    }

    #[test]
    fn every_atomic_compare_slct_bfi_is_total(
        ty in prop::sample::select(ALL_TYPES.to_vec()), ty2 in prop::sample::select(ALL_TYPES.to_vec()),
        a in int_operand(), b in int_operand(), c in int_operand(), ftz in any::<bool>(),
    ) {
        for op in [
            AtomOp::And, AtomOp::Or, AtomOp::Xor, AtomOp::Cas, AtomOp::Exch, AtomOp::Add,
            AtomOp::Inc, AtomOp::Dec, AtomOp::Min, AtomOp::Max,
        ] {
            let r = atomic(op, ty, a, b, c);
            prop_assert_eq!(r & !ty.mask(), 0, "atom.{:?}.{:?}", op, ty);
        }
        for cmp in [
            Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Lo, Cmp::Ls, Cmp::Hi,
            Cmp::Hs, Cmp::Equ, Cmp::Neu, Cmp::Ltu, Cmp::Leu, Cmp::Gtu, Cmp::Geu, Cmp::Num, Cmp::Nan,
        ] {
            let _ = compare(cmp, ty, ftz, a, b);
        }
        prop_assert_eq!(slct(ty, ty2, ftz, a, b, c) & !ty.mask(), 0);
        prop_assert_eq!(bfi(ty, a, b, c, a ^ b) & !ty.mask(), 0);
        prop_assert_eq!(set_value(ty, true) & !ty.mask(), 0);
    }
}
