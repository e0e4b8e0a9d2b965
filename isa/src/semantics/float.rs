//! Floating-point data instructions of every float format (f16, bf16, f32, f64 and the packed
//! f16x2/bf16x2): rounding modifiers, `.ftz`, `.sat`, NaN rules, min/max and comparisons.

use super::rounding::{self, Fmt, Mode, BF16, F16, F32, F64};
use crate::ir::{ArithOp, Cmp, Mods, Type};

/// The element format of a float type and whether the type packs two elements.
pub(crate) fn format(ty: Type) -> Option<(Fmt, bool)> {
    match ty {
        Type::F16 => Some((F16, false)),
        Type::Bf16 => Some((BF16, false)),
        Type::F32 => Some((F32, false)),
        Type::F64 => Some((F64, false)),
        Type::F16x2 => Some((F16, true)),
        Type::Bf16x2 => Some((BF16, true)),
        _ => None,
    }
}

/// Whether `op` is a floating-point operation when its type is a float type.
pub(crate) fn is_float_op(op: ArithOp) -> bool {
    use ArithOp::*;
    matches!(
        op,
        Add | Sub
            | Mul
            | Mad
            | Fma
            | Div
            | Rcp
            | Sqrt
            | Rsqrt
            | Sin
            | Cos
            | Lg2
            | Ex2
            | Tanh
            | Abs
            | Neg
            | Min
            | Max
            | Copysign
    )
}

/// Applies `op` to each 16-bit element of packed operands (element 0 in the low half).
pub(crate) fn arith_packed(op: ArithOp, f: Fmt, mods: Mods, a: u64, b: u64, c: u64) -> u64 {
    let lo = arith(op, f, mods, a & 0xFFFF, b & 0xFFFF, c & 0xFFFF);
    let hi = arith(
        op,
        f,
        mods,
        (a >> 16) & 0xFFFF,
        (b >> 16) & 0xFFFF,
        (c >> 16) & 0xFFFF,
    );
    (hi << 16) | lo
}

/// One floating-point operation on scalars of format `f`.
///
/// `.ftz` flushes subnormal inputs, and results after rounding, to sign-preserving zero; a NaN
/// result is the canonical NaN; `.sat` then clamps to [+0.0, 1.0] (PTX ISA: floating-point instructions).
pub(crate) fn arith(op: ArithOp, f: Fmt, mods: Mods, a: u64, b: u64, c: u64) -> u64 {
    use ArithOp::*;
    let prep = |x: u64| {
        let x = x & f.mask();
        if mods.ftz {
            f.flush(x)
        } else {
            x
        }
    };
    let (a, b, c) = (prep(a), prep(b), prep(c));
    let mode = Mode::of(mods.rnd);
    let r = match op {
        Add => add(f, a, b, mode),
        // a - b is a + (-b) exactly, including the sign of zero results.
        Sub => add(f, a, f.negate(b), mode),
        Mul => mul(f, a, b, mode),
        // mad.f32/f64 is fused on every target since sm_20 (PTX ISA: `mad`).
        Mad | Fma => fma(f, a, b, c, mode),
        Div => div(f, a, b, mode),
        Rcp => div(f, f.one(), a, mode),
        Sqrt => sqrt(f, a, mode),
        Rsqrt | Sin | Cos | Lg2 | Ex2 | Tanh => approx(op, f, a),
        Abs => f.abs(a),
        Neg => f.negate(a),
        // copysign d, a, b: the magnitude of b with the sign of a (PTX ISA: `copysign`).
        Copysign => f.abs(b) | (a & f.sign_bit()),
        Min => min_max_mods(f, false, mods, a, b),
        Max => min_max_mods(f, true, mods, a, b),
        _ => 0,
    };
    finish(f, mods, r)
}

/// Canonical NaN, `.ftz` on the result, then `.sat` or `.relu`.
fn finish(f: Fmt, mods: Mods, r: u64) -> u64 {
    let r = r & f.mask();
    let r = if f.is_nan(r) { f.canonical_nan() } else { r };
    let r = if mods.ftz { f.flush(r) } else { r };
    if mods.sat {
        saturate(f, r)
    } else if mods.relu {
        relu(f, r)
    } else {
        r
    }
}

/// `.relu`: a negative result (-0.0 included) becomes +0.0; NaN stays the canonical NaN
/// (PTX ISA 8.x §9.7.4.4, `fma.relu`; `cvt.relu`).
pub(crate) fn relu(f: Fmt, r: u64) -> u64 {
    if !f.is_nan(r) && f.is_neg(r) {
        0
    } else {
        r
    }
}

/// `min`/`max` with the `.NaN` and `.xorsign.abs` modifiers (PTX ISA 8.x §9.7.3.11-12,
/// §9.7.4.7-8): `.NaN` makes any NaN operand give the canonical NaN; `.xorsign.abs` compares
/// magnitudes and gives the result the XOR of the operands' signs, unless it is NaN.
pub(crate) fn min_max_mods(f: Fmt, max: bool, mods: Mods, a: u64, b: u64) -> u64 {
    if mods.nan && (f.is_nan(a) || f.is_nan(b)) {
        return f.canonical_nan();
    }
    if !mods.xorsign_abs {
        return min_max(f, max, a, b);
    }
    let sign = (a ^ b) & f.sign_bit();
    let r = min_max(f, max, f.abs(a), f.abs(b));
    if f.is_nan(r) {
        r
    } else {
        (r & !f.sign_bit()) | sign
    }
}

/// `.sat`: clamps to [0.0, 1.0]; NaN and every negative value (-0.0 included) give +0.0.
pub(crate) fn saturate(f: Fmt, r: u64) -> u64 {
    if f.is_nan(r) || f.is_neg(r) {
        0
    } else {
        // For non-negative floats the bit patterns are ordered like the values.
        r.min(f.one())
    }
}

// The f32/f64 round-to-nearest paths use the host's IEEE operations (always round-to-nearest
// even); every other mode and format goes through the exact software rounding.

fn add(f: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    if mode == Mode::Nearest {
        if f == F32 {
            return u64::from((f32::from_bits(a as u32) + f32::from_bits(b as u32)).to_bits());
        }
        if f == F64 {
            return (f64::from_bits(a) + f64::from_bits(b)).to_bits();
        }
    }
    rounding::add(f, a, b, mode)
}

fn mul(f: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    if mode == Mode::Nearest {
        if f == F32 {
            return u64::from((f32::from_bits(a as u32) * f32::from_bits(b as u32)).to_bits());
        }
        if f == F64 {
            return (f64::from_bits(a) * f64::from_bits(b)).to_bits();
        }
    }
    rounding::mul(f, a, b, mode)
}

fn fma(f: Fmt, a: u64, b: u64, c: u64, mode: Mode) -> u64 {
    if mode == Mode::Nearest {
        if f == F32 {
            let (x, y, z) = (
                f32::from_bits(a as u32),
                f32::from_bits(b as u32),
                f32::from_bits(c as u32),
            );
            return u64::from(x.mul_add(y, z).to_bits());
        }
        if f == F64 {
            return f64::from_bits(a)
                .mul_add(f64::from_bits(b), f64::from_bits(c))
                .to_bits();
        }
    }
    rounding::fma(f, a, b, c, mode)
}

fn div(f: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    if mode == Mode::Nearest {
        if f == F32 {
            return u64::from((f32::from_bits(a as u32) / f32::from_bits(b as u32)).to_bits());
        }
        if f == F64 {
            return (f64::from_bits(a) / f64::from_bits(b)).to_bits();
        }
    }
    rounding::div(f, a, b, mode)
}

fn sqrt(f: Fmt, a: u64, mode: Mode) -> u64 {
    if mode == Mode::Nearest {
        if f == F32 {
            return u64::from(f32::from_bits(a as u32).sqrt().to_bits());
        }
        if f == F64 {
            return f64::from_bits(a).sqrt().to_bits();
        }
    }
    rounding::sqrt(f, a, mode)
}

/// `.approx` special functions. PTX only bounds their error, so we evaluate them with Rust's std
/// functions: in f32 for f32, f16 and bf16 (rounded back to nearest for the 16-bit formats), in
/// f64 for f64. rsqrt is `1 / sqrt(x)`.
fn approx(op: ArithOp, f: Fmt, a: u64) -> u64 {
    use ArithOp::*;
    if f == F64 {
        let x = f64::from_bits(a);
        let r = match op {
            Rsqrt => 1.0 / x.sqrt(),
            Sin => x.sin(),
            Cos => x.cos(),
            Lg2 => x.log2(),
            Ex2 => x.exp2(),
            Tanh => x.tanh(),
            _ => f64::NAN,
        };
        return r.to_bits();
    }
    let x = rounding::to_f64(f, a) as f32;
    let r = match op {
        Rsqrt => 1.0 / x.sqrt(),
        Sin => x.sin(),
        Cos => x.cos(),
        Lg2 => x.log2(),
        Ex2 => x.exp2(),
        Tanh => x.tanh(),
        _ => f32::NAN,
    };
    let bits = u64::from(r.to_bits());
    if f == F32 {
        bits
    } else {
        rounding::convert(F32, f, bits, Mode::Nearest)
    }
}

/// PTX min/max: a NaN operand yields the other one, two NaNs the canonical NaN, and
/// -0.0 < +0.0 (PTX ISA: `min`, `max`).
pub(crate) fn min_max(f: Fmt, max: bool, a: u64, b: u64) -> u64 {
    match (f.is_nan(a), f.is_nan(b)) {
        (true, true) => return f.canonical_nan(),
        (true, false) => return b,
        (false, true) => return a,
        (false, false) => {}
    }
    let (x, y) = (rounding::to_f64(f, a), rounding::to_f64(f, b));
    let a_first = if x == y {
        // Equal values differ at most in the sign of zero.
        f.is_neg(a) != max
    } else {
        (x > y) == max
    };
    if a_first {
        a
    } else {
        b
    }
}

/// setp/set comparison of two floats of format `f` (PTX ISA: `setp`, floating-point
/// comparison operators). Ordered operators are false when either operand is NaN, the `u`
/// forms are true. `.ftz` flushes subnormal operands first.
pub(crate) fn compare(cmp: Cmp, f: Fmt, ftz: bool, a: u64, b: u64) -> bool {
    let prep = |v: u64| {
        let v = v & f.mask();
        if ftz {
            f.flush(v)
        } else {
            v
        }
    };
    let (x, y) = (rounding::to_f64(f, prep(a)), rounding::to_f64(f, prep(b)));
    let unordered = x.is_nan() || y.is_nan();
    match cmp {
        Cmp::Eq => x == y,
        Cmp::Ne => !unordered && x != y,
        Cmp::Lt | Cmp::Lo => x < y,
        Cmp::Le | Cmp::Ls => x <= y,
        Cmp::Gt | Cmp::Hi => x > y,
        Cmp::Ge | Cmp::Hs => x >= y,
        Cmp::Equ => unordered || x == y,
        Cmp::Neu => unordered || x != y,
        Cmp::Ltu => unordered || x < y,
        Cmp::Leu => unordered || x <= y,
        Cmp::Gtu => unordered || x > y,
        Cmp::Geu => unordered || x >= y,
        Cmp::Num => !unordered,
        Cmp::Nan => unordered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Round;

    fn m(rnd: Option<Round>) -> Mods {
        Mods {
            rnd,
            ..Mods::default()
        }
    }
    fn b32(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    #[test]
    fn min_max_nan_and_zero_rules() {
        let nan = 0x7FC0_0001;
        assert_eq!(min_max(F32, false, nan, b32(2.0)), b32(2.0));
        assert_eq!(min_max(F32, true, b32(-3.0), nan), b32(-3.0));
        assert_eq!(min_max(F32, true, nan, 0xFFC0_0000), 0x7FFF_FFFF);
        assert_eq!(min_max(F32, false, b32(0.0), b32(-0.0)), b32(-0.0));
        assert_eq!(min_max(F32, true, b32(-0.0), b32(0.0)), b32(0.0));
        assert_eq!(min_max(F16, true, 0x3C00, 0x4000), 0x4000);
    }

    #[test]
    fn modifiers() {
        let sat = Mods {
            sat: true,
            ..Mods::default()
        };
        assert_eq!(
            arith(ArithOp::Add, F32, sat, b32(0.75), b32(0.5), 0),
            b32(1.0)
        );
        assert_eq!(arith(ArithOp::Mul, F32, sat, b32(-2.0), b32(0.5), 0), 0);
        assert_eq!(
            arith(
                ArithOp::Add,
                F32,
                sat,
                b32(f32::INFINITY),
                b32(f32::NEG_INFINITY),
                0
            ),
            0
        );
        let ftz = Mods {
            ftz: true,
            ..Mods::default()
        };
        assert_eq!(arith(ArithOp::Add, F32, ftz, 0x8000_0001, 0, 0), 0);
        assert_eq!(
            arith(ArithOp::Mul, F32, ftz, b32(1e-20), b32(-1e-20), 0),
            0x8000_0000
        );
        assert_eq!(
            arith(ArithOp::Add, F32, m(Some(Round::Rp)), b32(1.0), 1, 0),
            b32(1.0) + 1
        );
        assert_eq!(
            arith(
                ArithOp::Add,
                F32,
                m(Some(Round::Rz)),
                b32(-1.0),
                0x8000_0001,
                0
            ),
            b32(-1.0)
        );
        assert_eq!(
            arith(
                ArithOp::Add,
                F32,
                m(Some(Round::Rm)),
                b32(-1.0),
                0x8000_0001,
                0
            ),
            b32(-1.0) + 1
        );
        assert_eq!(
            arith(ArithOp::Copysign, F32, m(None), b32(-1.0), b32(2.5), 0),
            b32(-2.5)
        );
        assert_eq!(
            arith(ArithOp::Neg, F32, m(None), 0x7FC0_0000, 0, 0),
            0x7FFF_FFFF
        );
    }

    #[test]
    fn half_precision() {
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10 in f16.
        let tiny = 0x1000; // 2^-11
        assert_eq!(arith(ArithOp::Add, F16, m(None), 0x3C00, tiny, 0), 0x3C00);
        assert_eq!(
            arith(ArithOp::Add, F16, m(Some(Round::Rp)), 0x3C00, tiny, 0),
            0x3C01
        );
        assert_eq!(
            arith_packed(ArithOp::Mul, F16, m(None), 0x4000_3C00, 0x4200_4400, 0),
            0x4600_4400
        );
        assert_eq!(
            arith(ArithOp::Fma, BF16, m(None), 0x3F80, 0x3F80, 0x3F80),
            0x4000
        );
        assert_eq!(approx(ArithOp::Ex2, F16, 0x4000), 0x4400);
    }

    #[test]
    fn comparisons_with_nan() {
        let nan = 0x7FC0_0000;
        assert!(!compare(Cmp::Ne, F32, false, nan, b32(1.0)));
        assert!(compare(Cmp::Neu, F32, false, nan, b32(1.0)));
        assert!(compare(Cmp::Nan, F32, false, b32(1.0), nan));
        assert!(!compare(Cmp::Num, F32, false, b32(1.0), nan));
        assert!(compare(Cmp::Eq, F32, false, b32(0.0), b32(-0.0)));
        assert!(compare(Cmp::Eq, F32, true, 1, 0x8000_0000));
        assert!(!compare(Cmp::Eq, F32, false, 1, 0x8000_0000));
        assert!(compare(Cmp::Lt, F16, false, 0xBC00, 0x3C00));
    }
}
