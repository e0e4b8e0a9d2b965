//! Integer, logic and classification instructions of the newer targets (sm_50–sm_90): `lop3`,
//! `bmsk`, `szext`, `fns`, `dp4a`/`dp2a`, `redux.sync` and `testp` (PTX ISA 8.x §9.7.1,
//! §9.7.3.1, §9.7.7.6, and `redux.sync` in the parallel synchronization chapter).

use super::float::format;
use crate::ir::{DotKind, ReduxOp, TestpOp, Type};

/// `lop3.b32 d, a, b, c, immLut`: bit i of d is bit `(a_i << 2) | (b_i << 1) | c_i` of the
/// 8-bit table. This is the ISA's definition read backwards: immLut = F(0xF0, 0xCC, 0xAA), so
/// the table's bit k holds F at a = k>>2 & 1, b = k>>1 & 1, c = k & 1 (PTX ISA 8.x §9.7.7.6).
pub fn lop3(lut: u8, a: u64, b: u64, c: u64) -> u64 {
    let (a, b, c) = (a as u32, b as u32, c as u32);
    let mut d = 0u32;
    for k in 0..8u32 {
        if (lut >> k) & 1 == 1 {
            let pick = |v: u32, bit: u32| if (k >> bit) & 1 == 1 { v } else { !v };
            d |= pick(a, 2) & pick(b, 1) & pick(c, 0);
        }
    }
    u64::from(d)
}

/// `bmsk.{clamp,wrap}.b32 d, a, b`: a mask of `b` ones starting at bit `a`, following the ISA
/// pseudo-code (PTX ISA 8.x §9.7.1.22): both operands are taken mod 32 in `.wrap` mode; in
/// `.clamp` mode a start of 32 or more gives 0, and a width of 32 or more runs to bit 31.
pub fn bmsk(clamp: bool, a: u64, b: u64) -> u64 {
    let (a, b) = (a as u32, b as u32);
    let a1 = a & 0x1f;
    let b1 = b & 0x1f;
    let mut mask0 = u32::MAX << a1;
    let sum = a1 + b1;
    let mut mask1 = if sum >= 32 { 0 } else { u32::MAX << sum };
    let mut overflow = sum >= 32;
    if clamp {
        if a >= 32 {
            mask0 = 0;
            overflow = true;
        }
        if b >= 32 {
            overflow = true;
        }
    }
    if overflow {
        mask1 = 0;
    } else if b1 == 0 {
        mask1 = u32::MAX;
    }
    u64::from(mask0 & !mask1)
}

/// `szext.{clamp,wrap}.{u32,s32} d, a, b`: the low N = `b` bits of `a`, zero-extended (.u32) or
/// sign-extended (.s32) to 32 bits; N = 0 gives 0, N ≥ 32 keeps `a` in `.clamp` mode and is
/// taken mod 32 in `.wrap` mode (PTX ISA 8.x §9.7.1.21 pseudo-code).
pub fn szext(clamp: bool, signed: bool, a: u64, b: u64) -> u64 {
    let (a, b) = (a as u32, b as u32);
    let b1 = b & 0x1f;
    let too_large = b >= 32 && clamp;
    let mask = if too_large { 0 } else { u32::MAX << b1 };
    let sign_pos = b1.wrapping_sub(1) & 0x1f;
    let sign = !(b1 == 0 || too_large || !signed) && (a >> sign_pos) & 1 == 1;
    u64::from((a & !mask) | if sign { mask } else { 0 })
}

/// `fns.b32 d, mask, base, offset`: the position of the |offset|-th set bit of `mask`, counting
/// from bit `base` upwards (offset > 0) or downwards (offset < 0), `base` itself included;
/// offset 0 returns `base` if that bit is set. 0xFFFFFFFF when there is no such bit
/// (PTX ISA 8.x §9.7.1.17). A base above 31 is undefined in the ISA; we return 0xFFFFFFFF.
pub fn fns(mask: u64, base: u64, offset: u64) -> u64 {
    let mask = mask as u32;
    let base = base as u32;
    let offset = offset as u32 as i32;
    const NONE: u64 = 0xFFFF_FFFF;
    if base > 31 {
        return NONE;
    }
    if offset == 0 {
        return if (mask >> base) & 1 == 1 {
            u64::from(base)
        } else {
            NONE
        };
    }
    let mut count = offset.unsigned_abs() - 1;
    let mut pos = base as i32;
    let inc = if offset > 0 { 1 } else { -1 };
    while (0..32).contains(&pos) {
        if (mask >> pos) & 1 == 1 {
            if count == 0 {
                return pos as u64;
            }
            count -= 1;
        }
        pos += inc;
    }
    NONE
}

/// `dp4a.atype.btype d, a, b, c` and `dp2a.{lo,hi}.atype.btype d, a, b, c`: c plus the dot
/// product of sign- or zero-extended bytes (dp4a), or of the two halfwords of a with bytes
/// 0-1 (`.lo`) or 2-3 (`.hi`) of b (dp2a), wrapping at 32 bits (PTX ISA 8.x §9.7.1.23-24).
pub fn dot(kind: DotKind, a_signed: bool, b_signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let ext = |v: u64, i: u32, bits: u32, signed: bool| -> i64 {
        let x = (v >> (i * bits)) & ((1u64 << bits) - 1);
        if signed && (x >> (bits - 1)) & 1 == 1 {
            x as i64 - (1i64 << bits)
        } else {
            x as i64
        }
    };
    let mut d = c as u32 as i64;
    match kind {
        DotKind::Dp4a => {
            for i in 0..4 {
                d += ext(a, i, 8, a_signed) * ext(b, i, 8, b_signed);
            }
        }
        DotKind::Dp2aLo | DotKind::Dp2aHi => {
            let sel = if kind == DotKind::Dp2aHi { 2 } else { 0 };
            for i in 0..2 {
                d += ext(a, i, 16, a_signed) * ext(b, sel + i, 8, b_signed);
            }
        }
    }
    d as u64 & 0xFFFF_FFFF
}

/// `redux.sync.op.ty`: the reduction of the 32-bit values of the participating lanes; `.add`
/// wraps at 32 bits, `.min`/`.max` compare as `ty` (u32 or s32). With no value it returns the
/// operation's identity.
pub fn redux(op: ReduxOp, ty: Type, vals: impl IntoIterator<Item = u64>) -> u64 {
    let signed = ty.is_signed();
    let key = |v: u32| -> i64 {
        if signed {
            i64::from(v as i32)
        } else {
            i64::from(v)
        }
    };
    let mut acc: Option<u32> = None;
    for v in vals {
        let v = v as u32;
        acc = Some(match acc {
            None => v,
            Some(x) => match op {
                ReduxOp::Add => x.wrapping_add(v),
                ReduxOp::And => x & v,
                ReduxOp::Or => x | v,
                ReduxOp::Xor => x ^ v,
                ReduxOp::Min => {
                    if key(v) < key(x) {
                        v
                    } else {
                        x
                    }
                }
                ReduxOp::Max => {
                    if key(v) > key(x) {
                        v
                    } else {
                        x
                    }
                }
            },
        });
    }
    let identity = match op {
        ReduxOp::Add | ReduxOp::Or | ReduxOp::Xor => 0,
        ReduxOp::And => u32::MAX,
        ReduxOp::Min if signed => i32::MAX as u32,
        ReduxOp::Min => u32::MAX,
        ReduxOp::Max if signed => i32::MIN as u32,
        ReduxOp::Max => 0,
    };
    u64::from(acc.unwrap_or(identity))
}

/// `testp.op.ty p, a` for f32 and f64 (other types read as f32). Zeros are `.normal`, not
/// `.subnormal` (PTX ISA 8.x §9.7.3.1).
pub fn testp(op: TestpOp, ty: Type, a: u64) -> bool {
    let (f, _) = format(ty).unwrap_or_else(|| format(Type::F32).expect("f32 is a float"));
    let a = a & f.mask();
    let nan = f.is_nan(a);
    let mag = a & !f.sign_bit();
    let inf = mag == f.inf(false);
    let sub = f.is_subnormal(a);
    match op {
        TestpOp::Finite => !nan && !inf,
        TestpOp::Infinite => inf,
        TestpOp::Number => !nan,
        TestpOp::NotANumber => nan,
        TestpOp::Normal => !nan && !inf && !sub,
        TestpOp::Subnormal => sub,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isa_examples() {
        // lop3 tables from the ISA text: a&b&c = 0x80, a|b|c = 0xFE, a&b&~c = 0x40,
        // (a&b|c)^a = 0x1A.
        let (a, b, c) = (0xF0, 0xCC, 0xAA);
        assert_eq!(lop3(0x80, a, b, c), 0x80);
        assert_eq!(lop3(0xFE, a, b, c), 0xFE);
        assert_eq!(lop3(0x1A, a, b, c), 0x1A);
        assert_eq!(lop3(0x96, 0x1234, 0xFF00, 0x0F0F), 0x1234 ^ 0xFF00 ^ 0x0F0F);
        assert_eq!(bmsk(false, 1, 2), 0x6);
        assert_eq!(bmsk(true, 40, 2), 0);
        assert_eq!(bmsk(false, 40, 2), 0x300);
        assert_eq!(bmsk(true, 4, 40), 0xFFFF_FFF0);
        assert_eq!(szext(false, false, 0xFFFF_FFFF, 0), 0);
        assert_eq!(szext(false, true, 0x80, 8), 0xFFFF_FF80);
        assert_eq!(szext(true, true, 0x8000_0080, 40), 0x8000_0080);
        assert_eq!(szext(false, true, 0x80, 40), 0xFFFF_FF80);
        assert_eq!(fns(0xaaaa_aaaa, 3, 1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 3, 0xFFFF_FFFF), 3);
        assert_eq!(fns(0xaaaa_aaaa, 2, 1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 2, 0xFFFF_FFFF), 1);
        assert_eq!(fns(0xaaaa_aaaa, 2, 0), 0xFFFF_FFFF);
        assert_eq!(fns(0x1, 31, 0xFFFF_FFFF), 0);
        assert_eq!(fns(0x1, 32, 0xFFFF_FFFF), 0xFFFF_FFFF);
        assert_eq!(
            dot(DotKind::Dp4a, true, true, 0xFF01_FF01, 0x0202_0202, 10),
            10
        );
        assert_eq!(
            dot(DotKind::Dp4a, false, false, 0xFFFF_FFFF, 0xFFFF_FFFF, 0),
            4 * 255 * 255
        );
        assert_eq!(
            dot(DotKind::Dp2aHi, true, false, 0xFFFF_0002, 0x0304_0000, 0),
            (2 * 4 - 3) as u64
        );
        assert_eq!(
            redux(ReduxOp::Min, Type::S32, [5, 0xFFFF_FFFF, 3]),
            0xFFFF_FFFF
        );
        assert_eq!(redux(ReduxOp::Min, Type::U32, [5, 0xFFFF_FFFF, 3]), 3);
        assert_eq!(redux(ReduxOp::Add, Type::U32, [0xFFFF_FFFF, 2]), 1);
        assert!(testp(TestpOp::Normal, Type::F32, 0x8000_0000));
        assert!(!testp(TestpOp::Subnormal, Type::F32, 0));
        assert!(testp(TestpOp::Subnormal, Type::F64, 1));
        assert!(testp(TestpOp::Infinite, Type::F64, 0xFFF0_0000_0000_0000));
        assert!(!testp(TestpOp::Finite, Type::F32, 0x7FC0_0000));
    }
}
