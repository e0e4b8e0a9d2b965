//! Software IEEE 754 binary floating point (f16, bf16, tf32, f32, f64) rounded exactly in every
//! mode: operands are unpacked to integer significands, the result is computed exactly (or with a
//! sticky bit standing for the discarded nonzero tail) in 128-bit integers and rounded once. The
//! host rounding mode is never touched, so `.rz`, `.rm` and `.rp` are exact on every host.

use crate::ir::Round;

/// Direction in which an inexact result is rounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// to nearest, ties to even (`.rn`)
    Nearest,
    /// to nearest, ties away from zero (`.rna`)
    NearestAway,
    /// toward zero (`.rz`)
    Zero,
    /// toward negative infinity (`.rm`)
    Down,
    /// toward positive infinity (`.rp`)
    Up,
}

impl Mode {
    /// The float rounding of a PTX modifier: none means `.rn`; an integer form (`.rni` ...) maps
    /// to its float counterpart.
    pub(crate) fn of(r: Option<Round>) -> Mode {
        match r {
            None | Some(Round::Rn) | Some(Round::Rni) => Mode::Nearest,
            Some(Round::Rz) | Some(Round::Rzi) => Mode::Zero,
            Some(Round::Rm) | Some(Round::Rmi) => Mode::Down,
            Some(Round::Rp) | Some(Round::Rpi) => Mode::Up,
            Some(Round::Rna) => Mode::NearestAway,
        }
    }
}

/// An IEEE binary interchange format with `frac` stored fraction bits and `exp` exponent bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fmt {
    pub(crate) frac: u32,
    pub(crate) exp: u32,
}

pub(crate) const F16: Fmt = Fmt { frac: 10, exp: 5 };
pub(crate) const BF16: Fmt = Fmt { frac: 7, exp: 8 };
/// TensorFloat-32: f32's exponent with f16's precision (19 bits when packed on its own).
pub(crate) const TF32: Fmt = Fmt { frac: 10, exp: 8 };
pub(crate) const F32: Fmt = Fmt { frac: 23, exp: 8 };
pub(crate) const F64: Fmt = Fmt { frac: 52, exp: 11 };

/// A nonzero finite value `(-1)^neg * m * 2^e` (`m == 0` is read as an exact zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Num {
    pub(crate) neg: bool,
    pub(crate) m: u128,
    pub(crate) e: i32,
}

/// An unpacked floating-point datum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    Nan,
    Inf(bool),
    Zero(bool),
    Fin(Num),
}

impl Val {
    fn neg(self) -> bool {
        match self {
            Val::Nan => false,
            Val::Inf(n) | Val::Zero(n) => n,
            Val::Fin(x) => x.neg,
        }
    }
}

impl Fmt {
    /// Total number of bits.
    pub(crate) const fn width(self) -> u32 {
        1 + self.exp + self.frac
    }
    /// Mask of the format's bits in a 64-bit slot.
    pub(crate) const fn mask(self) -> u64 {
        u64::MAX >> (64 - self.width())
    }
    pub(crate) const fn sign_bit(self) -> u64 {
        1 << (self.exp + self.frac)
    }
    const fn frac_mask(self) -> u64 {
        (1 << self.frac) - 1
    }
    const fn exp_ones(self) -> u64 {
        (1 << self.exp) - 1
    }
    const fn bias(self) -> i32 {
        (1 << (self.exp - 1)) - 1
    }
    /// Exponent of the least significant bit of a subnormal.
    const fn qmin(self) -> i32 {
        1 - self.bias() - self.frac as i32
    }
    fn exp_field(self, bits: u64) -> u64 {
        (bits >> self.frac) & self.exp_ones()
    }
    pub(crate) fn is_nan(self, bits: u64) -> bool {
        self.exp_field(bits) == self.exp_ones() && bits & self.frac_mask() != 0
    }
    pub(crate) fn is_neg(self, bits: u64) -> bool {
        bits & self.sign_bit() != 0
    }
    pub(crate) fn is_subnormal(self, bits: u64) -> bool {
        self.exp_field(bits) == 0 && bits & self.frac_mask() != 0
    }
    /// The canonical NaN: sign clear, all other bits set (0x7FFF, 0x7FFFFFFF, ...).
    pub(crate) const fn canonical_nan(self) -> u64 {
        self.mask() >> 1
    }
    pub(crate) fn zero(self, neg: bool) -> u64 {
        if neg {
            self.sign_bit()
        } else {
            0
        }
    }
    pub(crate) fn inf(self, neg: bool) -> u64 {
        self.zero(neg) | (self.exp_ones() << self.frac)
    }
    pub(crate) fn max_finite(self, neg: bool) -> u64 {
        self.zero(neg) | ((self.exp_ones() - 1) << self.frac) | self.frac_mask()
    }
    /// The bits of 1.0.
    pub(crate) const fn one(self) -> u64 {
        (self.bias() as u64) << self.frac
    }
    /// Flushes a subnormal to the zero of the same sign.
    pub(crate) fn flush(self, bits: u64) -> u64 {
        if self.is_subnormal(bits) {
            bits & self.sign_bit()
        } else {
            bits
        }
    }
    pub(crate) fn negate(self, bits: u64) -> u64 {
        bits ^ self.sign_bit()
    }
    pub(crate) fn abs(self, bits: u64) -> u64 {
        bits & !self.sign_bit()
    }

    /// Splits `bits` (masked to the format) into its class and exact value.
    pub(crate) fn unpack(self, bits: u64) -> Val {
        let bits = bits & self.mask();
        let neg = self.is_neg(bits);
        let ef = self.exp_field(bits);
        let fr = bits & self.frac_mask();
        if ef == self.exp_ones() {
            if fr == 0 {
                Val::Inf(neg)
            } else {
                Val::Nan
            }
        } else if ef == 0 {
            if fr == 0 {
                Val::Zero(neg)
            } else {
                Val::Fin(Num {
                    neg,
                    m: u128::from(fr),
                    e: self.qmin(),
                })
            }
        } else {
            let m = u128::from(fr | (1 << self.frac));
            Val::Fin(Num {
                neg,
                m,
                e: self.qmin() + ef as i32 - 1,
            })
        }
    }
}

fn nbits(m: u128) -> i32 {
    128 - m.leading_zeros() as i32
}

/// Where the discarded part of a significand lies relative to half a unit in the last place.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rest {
    Exact,
    Below,
    Half,
    Above,
}

/// Rounds `x` (plus, when `sticky`, a tail strictly between 0 and one unit of `x.m`'s last
/// place) into format `f`. With `sticky` set, `x.m` must carry at least two bits more than the
/// format's precision; every caller in this module leaves more than twenty.
pub(crate) fn round(f: Fmt, x: Num, sticky: bool, mode: Mode) -> u64 {
    let sign = f.zero(x.neg);
    if x.m == 0 {
        return sign;
    }
    let p = f.frac as i32 + 1;
    let top = x.e + nbits(x.m) - 1;
    // Exponent of the result's last place: p significant bits, never below the subnormal quantum.
    let mut q = (top - (p - 1)).max(f.qmin());
    let shift = q - x.e;
    let (mut keep, rest) = if shift <= 0 {
        // Only reached when the value needs at most p bits, so -shift < p.
        let r = if sticky { Rest::Below } else { Rest::Exact };
        (x.m << (-shift) as u32, r)
    } else if shift > 128 {
        (0, Rest::Below)
    } else {
        let (keep, rem) = if shift == 128 {
            (0, x.m)
        } else {
            (x.m >> shift, x.m & ((1u128 << shift) - 1))
        };
        let half = 1u128 << (shift - 1);
        let rest = if rem > half || (rem == half && sticky) {
            Rest::Above
        } else if rem == half {
            Rest::Half
        } else if rem == 0 && !sticky {
            Rest::Exact
        } else {
            Rest::Below
        };
        (keep, rest)
    };
    let inexact = rest != Rest::Exact;
    let up = match mode {
        Mode::Nearest => rest == Rest::Above || (rest == Rest::Half && keep & 1 == 1),
        Mode::NearestAway => rest == Rest::Above || rest == Rest::Half,
        Mode::Zero => false,
        Mode::Down => x.neg && inexact,
        Mode::Up => !x.neg && inexact,
    };
    if up {
        keep += 1;
    }
    if keep >> p != 0 {
        keep >>= 1;
        q += 1;
    }
    let keep = keep as u64;
    if keep >> (p - 1) != 0 {
        let biased = q + p - 1 + f.bias();
        if biased >= f.exp_ones() as i32 {
            return overflow(f, x.neg, mode);
        }
        sign | ((biased as u64) << f.frac) | (keep & f.frac_mask())
    } else {
        // Subnormal (q is the subnormal quantum) or zero.
        sign | keep
    }
}

/// Result of a finite value too large for the format (IEEE 754 §7.4).
fn overflow(f: Fmt, neg: bool, mode: Mode) -> u64 {
    let to_inf = match mode {
        Mode::Nearest | Mode::NearestAway => true,
        Mode::Zero => false,
        Mode::Down => neg,
        Mode::Up => !neg,
    };
    if to_inf {
        f.inf(neg)
    } else {
        f.max_finite(neg)
    }
}

/// The sign of an exact zero sum of operands of opposite sign: -0 only when rounding down.
fn zero_sum(f: Fmt, mode: Mode) -> u64 {
    f.zero(mode == Mode::Down)
}

/// Exact sum of two nonzero values whose significands have at most 106 bits, rounded once.
fn add_num(f: Fmt, a: Num, b: Num, mode: Mode) -> u64 {
    let (big, small) = if a.e + nbits(a.m) >= b.e + nbits(b.m) {
        (a, b)
    } else {
        (b, a)
    };
    // Put the larger operand's leading bit at position 125: room for a carry, and at least 19
    // guard bits below a 106-bit significand.
    let sh = 126 - nbits(big.m);
    let bm = big.m << sh;
    let e = big.e - sh;
    let d = e - small.e;
    let (sm, sticky) = if d <= 0 {
        // The smaller operand's leading bit is at most at 125, so nothing is lost.
        (small.m << (-d) as u32, false)
    } else if d >= 128 {
        (0, true)
    } else {
        (small.m >> d, small.m & ((1u128 << d) - 1) != 0)
    };
    if big.neg == small.neg {
        return round(
            f,
            Num {
                neg: big.neg,
                m: bm + sm,
                e,
            },
            sticky,
            mode,
        );
    }
    if sticky {
        // The lost tail makes the subtrahend slightly larger: borrow one unit, keep a tail.
        // Here the smaller operand lies wholly below bit 106, so bm - sm - 1 keeps > 19 bits.
        return round(
            f,
            Num {
                neg: big.neg,
                m: bm - sm - 1,
                e,
            },
            true,
            mode,
        );
    }
    match bm.cmp(&sm) {
        std::cmp::Ordering::Greater => round(
            f,
            Num {
                neg: big.neg,
                m: bm - sm,
                e,
            },
            false,
            mode,
        ),
        std::cmp::Ordering::Less => round(
            f,
            Num {
                neg: small.neg,
                m: sm - bm,
                e,
            },
            false,
            mode,
        ),
        std::cmp::Ordering::Equal => zero_sum(f, mode),
    }
}

fn mul_num(a: Num, b: Num) -> Num {
    Num {
        neg: a.neg != b.neg,
        m: a.m * b.m,
        e: a.e + b.e,
    }
}

/// `a + b` in format `f` (IEEE 754 addition; NaN results are the canonical NaN).
pub(crate) fn add(f: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    match (f.unpack(a), f.unpack(b)) {
        (Val::Nan, _) | (_, Val::Nan) => f.canonical_nan(),
        (Val::Inf(x), Val::Inf(y)) if x != y => f.canonical_nan(),
        (Val::Inf(x), _) | (_, Val::Inf(x)) => f.inf(x),
        (Val::Zero(x), Val::Zero(y)) => {
            if x == y {
                f.zero(x)
            } else {
                zero_sum(f, mode)
            }
        }
        (Val::Zero(_), Val::Fin(_)) => b & f.mask(),
        (Val::Fin(_), Val::Zero(_)) => a & f.mask(),
        (Val::Fin(x), Val::Fin(y)) => add_num(f, x, y, mode),
    }
}

/// `a * b` in format `f`.
pub(crate) fn mul(f: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    let (va, vb) = (f.unpack(a), f.unpack(b));
    let neg = va.neg() != vb.neg();
    match (va, vb) {
        (Val::Nan, _) | (_, Val::Nan) => f.canonical_nan(),
        (Val::Inf(_), Val::Zero(_)) | (Val::Zero(_), Val::Inf(_)) => f.canonical_nan(),
        (Val::Inf(_), _) | (_, Val::Inf(_)) => f.inf(neg),
        (Val::Zero(_), _) | (_, Val::Zero(_)) => f.zero(neg),
        (Val::Fin(x), Val::Fin(y)) => round(f, mul_num(x, y), false, mode),
    }
}

/// `a * b + c` with a single rounding (IEEE 754 fusedMultiplyAdd).
pub(crate) fn fma(f: Fmt, a: u64, b: u64, c: u64, mode: Mode) -> u64 {
    let (va, vb, vc) = (f.unpack(a), f.unpack(b), f.unpack(c));
    let nan = f.canonical_nan();
    if matches!(va, Val::Nan) || matches!(vb, Val::Nan) || matches!(vc, Val::Nan) {
        return nan;
    }
    let p_inf = matches!(va, Val::Inf(_)) || matches!(vb, Val::Inf(_));
    let p_zero = matches!(va, Val::Zero(_)) || matches!(vb, Val::Zero(_));
    let pneg = va.neg() != vb.neg();
    if p_inf && p_zero {
        return nan;
    }
    if p_inf {
        return match vc {
            Val::Inf(cn) if cn != pneg => nan,
            _ => f.inf(pneg),
        };
    }
    if let Val::Inf(cn) = vc {
        return f.inf(cn);
    }
    if p_zero {
        return match vc {
            Val::Zero(cn) if cn == pneg => f.zero(cn),
            Val::Zero(_) => zero_sum(f, mode),
            _ => c & f.mask(),
        };
    }
    match (va, vb, vc) {
        (Val::Fin(x), Val::Fin(y), Val::Fin(z)) => add_num(f, mul_num(x, y), z, mode),
        (Val::Fin(x), Val::Fin(y), _) => round(f, mul_num(x, y), false, mode),
        _ => nan,
    }
}

/// `a / b` in format `f`.
pub(crate) fn div(f: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    let (va, vb) = (f.unpack(a), f.unpack(b));
    let neg = va.neg() != vb.neg();
    match (va, vb) {
        (Val::Nan, _) | (_, Val::Nan) => f.canonical_nan(),
        (Val::Inf(_), Val::Inf(_)) | (Val::Zero(_), Val::Zero(_)) => f.canonical_nan(),
        (Val::Inf(_), _) | (_, Val::Zero(_)) => f.inf(neg),
        (_, Val::Inf(_)) | (Val::Zero(_), _) => f.zero(neg),
        (Val::Fin(x), Val::Fin(y)) => {
            // Dividend's leading bit at 126: the quotient keeps at least 73 bits.
            let sh = 127 - nbits(x.m);
            let n = x.m << sh;
            let (q, r) = (n / y.m, n % y.m);
            round(
                f,
                Num {
                    neg,
                    m: q,
                    e: x.e - sh - y.e,
                },
                r != 0,
                mode,
            )
        }
    }
}

/// `sqrt(a)` in format `f` (`sqrt(-0) = -0`, negative inputs give NaN).
pub(crate) fn sqrt(f: Fmt, a: u64, mode: Mode) -> u64 {
    match f.unpack(a) {
        Val::Nan | Val::Inf(true) => f.canonical_nan(),
        Val::Inf(false) => f.inf(false),
        Val::Zero(n) => f.zero(n),
        Val::Fin(x) if x.neg => f.canonical_nan(),
        Val::Fin(x) => {
            let (mut m, mut e) = (x.m, x.e);
            if e & 1 != 0 {
                m <<= 1;
                e -= 1;
            }
            // Scale by an even power so the radicand has ~126 bits: the root keeps ~63.
            let k = (126 - nbits(m)) / 2;
            m <<= 2 * k;
            e -= 2 * k;
            let s = m.isqrt();
            round(
                f,
                Num {
                    neg: false,
                    m: s,
                    e: e / 2,
                },
                s * s != m,
                mode,
            )
        }
    }
}

/// Converts `bits` of format `from` to format `to` (exact when widening).
pub(crate) fn convert(from: Fmt, to: Fmt, bits: u64, mode: Mode) -> u64 {
    match from.unpack(bits) {
        Val::Nan => to.canonical_nan(),
        Val::Inf(n) => to.inf(n),
        Val::Zero(n) => to.zero(n),
        Val::Fin(x) => round(to, x, false, mode),
    }
}

/// Converts the integer `(-1)^neg * mag` to format `f` (zero converts to +0).
pub(crate) fn from_int(f: Fmt, neg: bool, mag: u128, mode: Mode) -> u64 {
    round(
        f,
        Num {
            neg: neg && mag != 0,
            m: mag,
            e: 0,
        },
        false,
        mode,
    )
}

/// The exact value of `bits` of format `f` as an f64 (every supported format fits in f64).
pub(crate) fn to_f64(f: Fmt, bits: u64) -> f64 {
    if f == F64 {
        f64::from_bits(bits)
    } else if f == F32 {
        f64::from(f32::from_bits(bits as u32))
    } else if f == F16 {
        half::f16::from_bits(bits as u16).to_f64()
    } else if f == BF16 {
        half::bf16::from_bits(bits as u16).to_f64()
    } else {
        f64::from_bits(convert(f, F64, bits, Mode::Nearest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn canon32(x: f32) -> u64 {
        if x.to_bits() & 0x7FFF_FFFF > 0x7F80_0000 {
            F32.canonical_nan()
        } else {
            u64::from(x.to_bits())
        }
    }
    // NaN is tested on the bits: LLVM may fold `sqrt(x).is_nan()` for a signalling-NaN x
    // differently in release builds.
    fn canon64(x: f64) -> u64 {
        if x.to_bits() & 0x7FFF_FFFF_FFFF_FFFF > 0x7FF0_0000_0000_0000 {
            F64.canonical_nan()
        } else {
            x.to_bits()
        }
    }
    /// Bit patterns biased toward specials, subnormals and close-by operands.
    fn bits32() -> impl Strategy<Value = u32> {
        prop_oneof![
            any::<u32>(),
            0u32..0x0080_0000,
            Just(0x7F7F_FFFF),
            Just(0x0080_0000),
            Just(0x8000_0000),
            Just(0x7F80_0000),
            0x3F00_0000u32..0x4000_0000,
        ]
    }
    fn bits64() -> impl Strategy<Value = u64> {
        prop_oneof![
            any::<u64>(),
            0u64..0x0010_0000_0000_0000,
            Just(0x7FEF_FFFF_FFFF_FFFF),
            Just(0x8000_0000_0000_0000),
            0x3FE0_0000_0000_0000u64..0x4000_0000_0000_0000,
        ]
    }

    #[test]
    fn unpack_and_round_trip_specials() {
        for &b in &[
            0u64,
            0x8000_0000,
            1,
            0x807F_FFFF,
            0x7F7F_FFFF,
            0x3F80_0000,
            0x7F80_0000,
        ] {
            assert_eq!(convert(F32, F32, b, Mode::Nearest), b);
        }
        assert_eq!(F32.canonical_nan(), 0x7FFF_FFFF);
        assert_eq!(F16.canonical_nan(), 0x7FFF);
        assert_eq!(F64.one(), 1f64.to_bits());
        assert_eq!(F16.max_finite(false), 0x7BFF);
        assert_eq!(
            from_int(F32, true, 3, Mode::Nearest),
            u64::from((-3f32).to_bits())
        );
        assert_eq!(
            from_int(F32, false, (1 << 24) + 1, Mode::Up),
            u64::from(16777218f32.to_bits())
        );
        assert_eq!(from_int(F16, false, 70000, Mode::Zero), 0x7BFF);
        assert_eq!(from_int(F16, false, 70000, Mode::Nearest), 0x7C00);
        assert_eq!(sqrt(F64, (-0f64).to_bits(), Mode::Up), (-0f64).to_bits());
        // 1 - 1 is +0 except when rounding down.
        let one = F32.one();
        assert_eq!(add(F32, one, one | F32.sign_bit(), Mode::Nearest), 0);
        assert_eq!(add(F32, one, one | F32.sign_bit(), Mode::Down), 0x8000_0000);
    }

    proptest! {
        #[test]
        fn f32_nearest_matches_host(a in bits32(), b in bits32(), c in bits32()) {
            let (x, y, z) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
            let (a, b, c) = (u64::from(a), u64::from(b), u64::from(c));
            prop_assert_eq!(add(F32, a, b, Mode::Nearest), canon32(x + y));
            prop_assert_eq!(mul(F32, a, b, Mode::Nearest), canon32(x * y));
            prop_assert_eq!(div(F32, a, b, Mode::Nearest), canon32(x / y));
            prop_assert_eq!(sqrt(F32, a, Mode::Nearest), canon32(x.sqrt()));
            prop_assert_eq!(fma(F32, a, b, c, Mode::Nearest), canon32(x.mul_add(y, z)));
        }

        #[test]
        fn f64_nearest_matches_host(a in bits64(), b in bits64(), c in bits64()) {
            let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
            prop_assert_eq!(add(F64, a, b, Mode::Nearest), canon64(x + y));
            prop_assert_eq!(mul(F64, a, b, Mode::Nearest), canon64(x * y));
            prop_assert_eq!(div(F64, a, b, Mode::Nearest), canon64(x / y));
            prop_assert_eq!(sqrt(F64, a, Mode::Nearest), canon64(x.sqrt()));
            prop_assert_eq!(fma(F64, a, b, c, Mode::Nearest), canon64(x.mul_add(y, z)));
        }

        #[test]
        fn narrowing_nearest_matches_host(a in bits64(), s in bits32()) {
            prop_assert_eq!(convert(F64, F32, a, Mode::Nearest), canon32(f64::from_bits(a) as f32));
            let h = half::f16::from_f32(f32::from_bits(s));
            let want = if h.is_nan() { 0x7FFF } else { u64::from(h.to_bits()) };
            prop_assert_eq!(convert(F32, F16, u64::from(s), Mode::Nearest), want);
            prop_assert_eq!(canon64(to_f64(F32, u64::from(s))), canon64(f64::from(f32::from_bits(s))));
        }
    }
}
