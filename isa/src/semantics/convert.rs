//! `cvt` semantics (PTX ISA: `cvt`): integer↔integer, float→integer, integer→float and
//! float↔float conversions with rounding, saturation and flush-to-zero.

use super::float::{format, relu, saturate};
use super::int::{clamp_to, mask, range, sext, width};
use super::rounding::{self, Fmt, Mode, F32, F64, TF32};
use crate::ir::{Mods, Round, Type};

/// What a cvt operand is.
#[derive(Clone, Copy)]
enum Kind {
    Int { signed: bool, w: u32 },
    Float(Fmt),
}

fn kind(ty: Type) -> Kind {
    match format(ty) {
        Some((f, _)) => Kind::Float(f),
        None => Kind::Int {
            signed: ty.is_signed(),
            w: width(ty),
        },
    }
}

fn is_packed(ty: Type) -> bool {
    matches!(ty, Type::F16x2 | Type::Bf16x2)
}

/// `cvt.dty.sty` of `a`. Packed types convert element-wise when both sides are packed and are
/// read as their element type (low half) otherwise.
pub(crate) fn convert(dty: Type, sty: Type, mods: Mods, a: u64) -> u64 {
    // cvt.{rna,rn,rz}{.relu}.tf32.f32 d, a: the IR has no tf32 type, d is a .b32 register
    // (PTX `cvt` has no .bN types, so B32 <- F32 with a float rounding means tf32).
    if sty == Type::F32
        && dty == Type::B32
        && matches!(mods.rnd, Some(Round::Rna | Round::Rn | Round::Rz))
    {
        return to_tf32(a, mods);
    }
    let (d, s) = (kind(dty), kind(sty));
    if is_packed(dty) && is_packed(sty) {
        let lo = scalar(d, s, mods, a & 0xFFFF);
        let hi = scalar(d, s, mods, (a >> 16) & 0xFFFF);
        return (hi << 16) | lo;
    }
    scalar(d, s, mods, a)
}

fn scalar(d: Kind, s: Kind, mods: Mods, a: u64) -> u64 {
    match (d, s) {
        (Kind::Int { signed: ds, w: dw }, Kind::Int { signed: ss, w: sw }) => {
            let v = if ss {
                i128::from(sext(a, sw))
            } else {
                i128::from(a & mask(sw))
            };
            if mods.sat {
                clamp_to(v, ds, dw)
            } else {
                // Truncation, or sign/zero extension of the source.
                v as u64 & mask(dw)
            }
        }
        (Kind::Int { signed, w }, Kind::Float(sf)) => float_to_int(signed, w, sf, mods, a),
        (Kind::Float(df), Kind::Int { signed, w }) => {
            let v = if signed {
                i128::from(sext(a, w))
            } else {
                i128::from(a & mask(w))
            };
            let r = rounding::from_int(df, v < 0, v.unsigned_abs(), Mode::of(mods.rnd));
            if mods.sat {
                saturate(df, r)
            } else {
                r
            }
        }
        (Kind::Float(df), Kind::Float(sf)) => float_to_float(df, sf, mods, a),
    }
}

/// Rounds `x` to an integral value by a cvt integer rounding modifier (none means `.rzi`).
fn round_integral(x: f64, rnd: Option<Round>) -> f64 {
    match rnd {
        Some(Round::Rni) | Some(Round::Rn) => x.round_ties_even(),
        Some(Round::Rmi) | Some(Round::Rm) => x.floor(),
        Some(Round::Rpi) | Some(Round::Rp) => x.ceil(),
        Some(Round::Rna) => x.round(),
        None | Some(Round::Rzi) | Some(Round::Rz) => x.trunc(),
    }
}

/// Float to integer: round to integral, then saturate to the destination range (NaN: see below)
/// (PTX ISA `cvt`: float-to-integer conversions always saturate). `.ftz` flushes f32
/// subnormal sources (which matters for `.rmi`/`.rpi`).
fn float_to_int(signed: bool, w: u32, sf: Fmt, mods: Mods, a: u64) -> u64 {
    let bits = a & sf.mask();
    let bits = if mods.ftz && sf == F32 {
        sf.flush(bits)
    } else {
        bits
    };
    let x = rounding::to_f64(sf, bits);
    if x.is_nan() {
        // PTX ISA cvt, integer notes: NaN converts to 0 from f16/f32 into destinations of at
        // most 32 bits, and to 1 << (w-1) from f64 or into 64-bit destinations (what the
        // hardware's 64-bit F2I produces).
        return if sf != F64 && w <= 32 {
            0
        } else {
            (1u64 << (w - 1)) & mask(w)
        };
    }
    let r = round_integral(x, mods.rnd);
    // `as` casts from float saturate.
    if signed {
        let (lo, hi) = range(true, w);
        (i128::from(r as i64).clamp(lo, hi) as u64) & mask(w)
    } else {
        (r as u64).min(mask(w))
    }
}

/// Float to float. A float rounding modifier (default `.rn`) rounds a narrowing conversion
/// exactly; an integer one (`.rni` ...) rounds to an integral value first. `.ftz` flushes f32
/// subnormal sources and results; `.sat` clamps to [0.0, 1.0]. NaN gives the canonical NaN.
fn float_to_float(df: Fmt, sf: Fmt, mods: Mods, a: u64) -> u64 {
    let bits = a & sf.mask();
    let bits = if mods.ftz && sf == F32 {
        sf.flush(bits)
    } else {
        bits
    };
    let r = match mods.rnd {
        Some(Round::Rni) | Some(Round::Rzi) | Some(Round::Rmi) | Some(Round::Rpi) => {
            let y = round_integral(rounding::to_f64(sf, bits), mods.rnd);
            rounding::convert(F64, df, y.to_bits(), Mode::Nearest)
        }
        rnd => rounding::convert(sf, df, bits, Mode::of(rnd)),
    };
    let r = if mods.ftz && df == F32 {
        df.flush(r)
    } else {
        r
    };
    if mods.sat {
        saturate(df, r)
    } else if mods.relu {
        relu(df, r)
    } else {
        r
    }
}

/// `cvt.{rna,rn,rz}{.relu}.tf32.f32`: round to 10 fraction bits (`.rna`: ties away from zero,
/// the default; `.rn`, `.rz`: sm_90), kept in f32 layout with the low 13 bits clear.
///
/// NaN is not in the PTX ISA's text; an H100 (docs/correlation/h100-sxm-2026-11-27) gives the
/// canonical NaN in tf32 layout (0x7FFFE000) for `.rn`/`.rz`, and keeps the input NaN's tf32
/// bits, quieted, for `.rna` (0x7FC00000 stays 0x7FC00000).
fn to_tf32(a: u64, mods: Mods) -> u64 {
    const LOW: u64 = 0x1FFF;
    const QUIET: u64 = 0x0040_0000;
    let bits = a & F32.mask();
    let mode = match mods.rnd {
        Some(Round::Rn) => Mode::Nearest,
        Some(Round::Rz) => Mode::Zero,
        _ => Mode::NearestAway,
    };
    if F32.is_nan(bits) {
        return match mode {
            Mode::NearestAway => (bits | QUIET) & !LOW,
            _ => F32.canonical_nan() & !LOW,
        };
    }
    let r = rounding::convert(F32, TF32, bits, mode) << 13;
    if mods.relu {
        relu(F32, r)
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cvt(d: Type, s: Type, rnd: Option<Round>, sat: bool, a: u64) -> u64 {
        convert(
            d,
            s,
            Mods {
                rnd,
                sat,
                ..Mods::default()
            },
            a,
        )
    }
    fn b32(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    #[test]
    fn saturation_examples() {
        use Type::*;
        assert_eq!(
            cvt(S32, F32, Some(Round::Rzi), false, b32(3e9)),
            0x7FFF_FFFF
        );
        assert_eq!(
            cvt(S32, F32, Some(Round::Rzi), false, b32(-3e9)),
            0x8000_0000
        );
        assert_eq!(cvt(S32, F32, Some(Round::Rni), false, b32(f32::NAN)), 0);
        assert_eq!(cvt(U32, F32, Some(Round::Rzi), false, b32(-1.5)), 0);
        assert_eq!(cvt(U8, F32, Some(Round::Rni), false, b32(255.5)), 255);
        assert_eq!(
            cvt(S8, F64, Some(Round::Rmi), false, (-128.5f64).to_bits()),
            0x80
        );
        assert_eq!(cvt(U64, F32, None, false, b32(f32::INFINITY)), u64::MAX);
        assert_eq!(cvt(U8, S32, None, true, 300), 255);
        assert_eq!(cvt(U8, S32, None, true, (-5i32) as u32 as u64), 0);
        assert_eq!(cvt(S8, S32, None, false, 300), 44);
        assert_eq!(cvt(S8, S32, None, true, 300), 127);
        assert_eq!(cvt(S32, S8, None, false, 0x80), 0xFFFF_FF80);
        assert_eq!(cvt(U32, S8, None, true, 0x80), 0);
        assert_eq!(cvt(S32, U32, None, true, 0xFFFF_FFFF), 0x7FFF_FFFF);
        assert_eq!(cvt(S64, S16, None, false, 0x8000), 0xFFFF_FFFF_FFFF_8000);
        assert_eq!(cvt(F32, S32, None, true, 5), b32(1.0));
        assert_eq!(cvt(F16, F32, Some(Round::Rz), false, b32(1e6)), 0x7BFF);
        assert_eq!(cvt(F16, F32, Some(Round::Rn), false, b32(1e6)), 0x7C00);
        assert_eq!(cvt(F32, F32, Some(Round::Rni), false, b32(2.5)), b32(2.0));
        assert_eq!(cvt(F32, F32, Some(Round::Rpi), false, b32(-0.5)), b32(-0.0));
        assert_eq!(cvt(F32, F32, None, true, b32(-0.5)), 0);
    }

    #[test]
    fn tf32() {
        let m = Mods {
            rnd: Some(Round::Rna),
            ..Mods::default()
        };
        assert_eq!(convert(Type::B32, Type::F32, m, 0x3F80_1000), 0x3F80_2000);
        assert_eq!(convert(Type::B32, Type::F32, m, 0x3F80_0FFF), 0x3F80_0000);
        // NaN as an H100 gives it (docs/correlation/h100-sxm-2026-11-27): `.rna` keeps the
        // input's tf32 bits, quieted; `.rn`/`.rz` give the canonical NaN in tf32 layout.
        assert_eq!(convert(Type::B32, Type::F32, m, 0x7FC0_0000), 0x7FC0_0000);
        assert_eq!(convert(Type::B32, Type::F32, m, 0xFF80_0001), 0xFFC0_0000);
        for rnd in [Round::Rn, Round::Rz] {
            let m = Mods {
                rnd: Some(rnd),
                ..Mods::default()
            };
            assert_eq!(convert(Type::B32, Type::F32, m, 0x7FC0_0000), 0x7FFF_E000);
        }
    }
}
