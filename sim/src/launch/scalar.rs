//! Numbers from YAML into typed bits: kernel arguments by their PTX parameter type, buffer
//! elements by their dtype. A number that does not fit — a negative or fractional value for
//! an unsigned integer, one beyond the type's range, a finite value that would round to
//! infinity — is an error naming the value and the range, never a silent C-style wrap.

use gpusim_isa::Type;
use serde_norway::Value;

/// A YAML number as (f64, exact integer if it is one); also `nan`, `inf`, `-inf` as strings.
pub fn number(v: &Value) -> Option<(f64, Option<i128>)> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some((i as f64, Some(i as i128)))
            } else if let Some(u) = n.as_u64() {
                Some((u as f64, Some(u as i128)))
            } else {
                n.as_f64().map(|f| (f, None))
            }
        }
        Value::String(s) => match s.as_str() {
            "nan" | "NaN" => Some((f64::NAN, None)),
            "inf" | "+inf" => Some((f64::INFINITY, None)),
            "-inf" => Some((f64::NEG_INFINITY, None)),
            _ => None,
        },
        _ => None,
    }
}

/// The number as written, for messages (`2.5`, `-5`, `NaN`, `1e39`).
pub fn show(v: (f64, Option<i128>)) -> String {
    match v {
        (_, Some(i)) => i.to_string(),
        (f, None) => float_text(f),
    }
}

/// A float in few digits: `1e39` rather than forty digits.
pub fn float_text(f: f64) -> String {
    if f.is_finite() && f != 0.0 && !(1e-5..1e16).contains(&f.abs()) {
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

/// The exact integer value of a number: an integer, or a float with no fraction (`1e3`).
pub fn exact_integer(v: (f64, Option<i128>)) -> Option<i128> {
    match v {
        (_, Some(i)) => Some(i),
        (f, None) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e38 => Some(f as i128),
        _ => None,
    }
}

/// The integers a type of `bits` holds: signed, unsigned, or (untyped bits) either reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signedness {
    Signed,
    Unsigned,
    Bits,
}

/// The inclusive range of a `bits`-wide integer.
pub fn int_range(bits: u32, s: Signedness) -> (i128, i128) {
    let half = 1i128 << (bits - 1);
    match s {
        Signedness::Signed => (-half, half - 1),
        Signedness::Unsigned => (0, 2 * half - 1),
        Signedness::Bits => (-half, 2 * half - 1),
    }
}

/// `v` as a `bits`-wide integer (two's complement bits in the low bits of the result).
pub fn fit_int(
    v: (f64, Option<i128>),
    bits: u32,
    s: Signedness,
    type_name: &str,
) -> Result<u64, String> {
    let (lo, hi) = int_range(bits, s);
    let Some(i) = exact_integer(v) else {
        return Err(format!(
            "{} is not an integer; {type_name} holds integers {lo} to {hi}",
            show(v)
        ));
    };
    if i < lo || i > hi {
        return Err(format!(
            "{i} does not fit {type_name}, which holds {lo} to {hi}"
        ));
    }
    Ok(i as u64 & (u64::MAX >> (64 - bits)))
}

/// A float's encoding, refusing a finite value that rounds to infinity in the narrower type.
pub fn fit_float<T>(
    v: f64,
    type_name: &str,
    max: f64,
    convert: impl Fn(f64) -> T,
    is_infinite: impl Fn(&T) -> bool,
) -> Result<T, String> {
    let x = convert(v);
    if v.is_finite() && is_infinite(&x) {
        return Err(format!(
            "{} is beyond the range of {type_name} (largest finite value {})",
            float_text(v),
            float_text(max)
        ));
    }
    Ok(x)
}

/// The bits of a scalar kernel argument for a parameter of PTX type `ty` (little-endian in the
/// low `ty.size()` bytes).
pub fn param_bits(ty: Type, v: (f64, Option<i128>)) -> Result<u64, String> {
    let name = format!(".{}", ty.name());
    let int = |s| fit_int(v, ty.bits().min(64), s, &name);
    match ty {
        Type::U8 | Type::U16 | Type::U32 | Type::U64 => int(Signedness::Unsigned),
        Type::S8 | Type::S16 | Type::S32 | Type::S64 => int(Signedness::Signed),
        Type::Pred => fit_int(v, 1, Signedness::Unsigned, &name),
        Type::B8 | Type::B16 | Type::B32 | Type::B64 | Type::B128 => int(Signedness::Bits),
        // Packed pairs take the 32-bit pattern.
        Type::F16x2 | Type::Bf16x2 | Type::U16x2 | Type::S16x2 => int(Signedness::Bits),
        Type::F16 => fit_float(v.0, &name, 65504.0, half::f16::from_f64, |x| {
            x.is_infinite()
        })
        .map(|x| x.to_bits() as u64),
        Type::Bf16 => fit_float(
            v.0,
            &name,
            3.3895313892515355e38,
            half::bf16::from_f64,
            |x| x.is_infinite(),
        )
        .map(|x| x.to_bits() as u64),
        Type::F32 => fit_float(
            v.0,
            &name,
            f32::MAX as f64,
            |x| x as f32,
            |x| x.is_infinite(),
        )
        .map(|x| x.to_bits() as u64),
        Type::F64 => Ok(v.0.to_bits()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_fit_or_are_refused() {
        assert_eq!(param_bits(Type::U32, (7.0, Some(7))), Ok(7));
        assert_eq!(param_bits(Type::U32, (1e3, None)), Ok(1000));
        assert_eq!(param_bits(Type::S32, (-5.0, Some(-5))), Ok(0xFFFF_FFFB));
        assert_eq!(param_bits(Type::B32, (-1.0, Some(-1))), Ok(0xFFFF_FFFF));
        assert_eq!(param_bits(Type::B8, (255.0, Some(255))), Ok(255));
        for (ty, v) in [
            (Type::U32, (-5.0, Some(-5))),
            (Type::U32, (2.5, None)),
            (Type::U32, (99999999999.0, Some(99999999999))),
            (Type::U32, (1e20, None)),
            (Type::U32, (f64::NAN, None)),
            (Type::S8, (128.0, Some(128))),
            (Type::B8, (256.0, Some(256))),
            (Type::U64, (-1.0, Some(-1))),
        ] {
            assert!(param_bits(ty, v).is_err(), "{ty:?} {v:?}");
        }
    }

    #[test]
    fn floats_refuse_overflow_but_keep_nan() {
        assert_eq!(
            param_bits(Type::F32, (1.5, None)),
            Ok(1.5f32.to_bits() as u64)
        );
        assert!(param_bits(Type::F32, (1e40, None)).is_err());
        assert!(param_bits(Type::F16, (70000.0, Some(70000))).is_err());
        assert!(param_bits(Type::F16, (f64::NAN, None)).is_ok());
        assert!(param_bits(Type::F32, (f64::INFINITY, None)).is_ok());
        assert_eq!(param_bits(Type::F64, (1e300, None)), Ok(1e300f64.to_bits()));
    }
}
