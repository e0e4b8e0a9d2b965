//! Integer and bit-manipulation semantics: add/sub/mul/mad (lo, hi, wide, 24-bit), div/rem,
//! abs/neg/min/max, logic ops, shifts, bfe/bfi, brev, popc, clz, prmt and sad.

use crate::ir::{ArithOp, Mods, PrmtMode, Type};

/// Width in bits of an integer operand (a predicate is one bit; b128 is handled as 64 bits).
pub(crate) fn width(ty: Type) -> u32 {
    match ty {
        Type::Pred => 1,
        Type::B128 => 64,
        t => t.bits(),
    }
}

/// Mask of the low `w` bits.
pub(crate) fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// Sign-extends the low `w` bits of `v`.
pub(crate) fn sext(v: u64, w: u32) -> i64 {
    match w {
        0 => 0,
        64.. => v as i64,
        _ => ((v << (64 - w)) as i64) >> (64 - w),
    }
}

/// The integer value of `v` read as `ty`: sign-extended for s-types, zero-extended otherwise.
pub(crate) fn value(ty: Type, v: u64) -> i128 {
    let w = width(ty);
    if ty.is_signed() {
        i128::from(sext(v, w))
    } else {
        i128::from(v & mask(w))
    }
}

/// The range of a `w`-bit signed or unsigned integer.
pub(crate) fn range(signed: bool, w: u32) -> (i128, i128) {
    let w = w.clamp(1, 64);
    if signed {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

/// `v` clamped to the range of a `w`-bit integer, as bits.
pub(crate) fn clamp_to(v: i128, signed: bool, w: u32) -> u64 {
    let (lo, hi) = range(signed, w);
    (v.clamp(lo, hi) as u64) & mask(w)
}

/// The low 128 bits of the product of two extended operands.
fn product(a: i128, b: i128) -> u128 {
    a.wrapping_mul(b) as u128
}

/// Bits `w..2w` of a product (`mul.hi`).
fn high(p: u128, signed: bool, w: u32) -> u64 {
    let h = if signed {
        ((p as i128) >> w) as u64
    } else {
        (p >> w) as u64
    };
    h & mask(w)
}

/// One integer operation of type `ty` (PTX ISA: integer arithmetic and logic). Float-only operations on
/// integer types give 0.
pub(crate) fn arith(op: ArithOp, ty: Type, mods: Mods, a: u64, b: u64, c: u64) -> u64 {
    use ArithOp::*;
    let w = width(ty);
    let m = mask(w);
    let s = ty.is_signed();
    let (va, vb, vc) = (value(ty, a), value(ty, b), value(ty, c));
    // .sat is only defined for s32 (add, sub, mad.hi); we clamp to the range of any signed type.
    let sat = mods.sat && s;
    match op {
        Add if sat => clamp_to(va + vb, true, w),
        Add => a.wrapping_add(b) & m,
        Sub if sat => clamp_to(va - vb, true, w),
        Sub => a.wrapping_sub(b) & m,
        Mul => product(va, vb) as u64 & m,
        MulHi => high(product(va, vb), s, w),
        // mul.wide: the full 2w-bit product (the low 64 bits for 64-bit operands).
        MulWide => product(va, vb) as u64 & mask(2 * w),
        Mad | Fma => (product(va, vb) as u64).wrapping_add(c) & m,
        MadHi => {
            let h = high(product(va, vb), s, w);
            if sat {
                clamp_to(i128::from(sext(h, w)) + vc, true, w)
            } else {
                h.wrapping_add(c) & m
            }
        }
        // mad.wide: c has the destination width 2w.
        MadWide => (product(va, vb) as u64).wrapping_add(c) & mask(2 * w),
        Mul24Lo | Mul24Hi | Mad24Lo | Mad24Hi => mul24(op, s, mods.sat, a, b, c),
        Div => div(s, w, a, b),
        Rem => rem(s, w, a, b),
        // abs of the most negative value wraps to itself.
        Abs => va.unsigned_abs() as u64 & m,
        Neg => 0u64.wrapping_sub(a) & m,
        // `.relu` (s32, s16x2) clamps a negative result to 0 (PTX ISA 8.x §9.7.1.12-13).
        Min => relu(mods.relu, s, w, (if va <= vb { a } else { b }) & m),
        Max => relu(mods.relu, s, w, (if va >= vb { a } else { b }) & m),
        And => a & b & m,
        Or => (a | b) & m,
        Xor => (a ^ b) & m,
        Not => !a & m,
        Cnot => u64::from(a & m == 0),
        Shl => shl(w, a, b),
        Shr => shr(s, w, a, b),
        Bfe => bfe(s, w, a, b, c),
        Brev => (a & m).reverse_bits() >> (64 - w),
        Popc => u64::from((a & m).count_ones()),
        Clz => u64::from((a & m).leading_zeros() - (64 - w)),
        Prmt(mode) => u64::from(prmt(mode, a as u32, b as u32, c as u32)),
        Sad => {
            let d = if va < vb { vb - va } else { va - vb };
            (d as u64).wrapping_add(c) & m
        }
        Bmsk { clamp } => super::newer::bmsk(clamp, a, b),
        Szext { clamp } => super::newer::szext(clamp, s, a, b),
        Fns => super::newer::fns(a, b, c),
        Rcp | Sqrt | Rsqrt | Sin | Cos | Lg2 | Ex2 | Tanh | Copysign => 0,
    }
}

/// `.relu` on a signed result of width `w`: negative values become 0.
fn relu(on: bool, signed: bool, w: u32, r: u64) -> u64 {
    if on && signed && sext(r, w) < 0 {
        0
    } else {
        r
    }
}

/// mul24/mad24 (PTX ISA: `mul24`, `mad24`): 24-bit operands (sign-extended for s32), 48-bit product;
/// `.lo` keeps bits 0..32, `.hi` bits 16..48. `.sat` applies to `mad24.hi.s32`.
fn mul24(op: ArithOp, signed: bool, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    let ext = |v: u64| {
        if signed {
            sext(v & 0xFF_FFFF, 24)
        } else {
            (v & 0xFF_FFFF) as i64
        }
    };
    let p = ext(a) * ext(b);
    let lo = p as u64 & 0xFFFF_FFFF;
    let hi = (p >> 16) as u64 & 0xFFFF_FFFF;
    match op {
        ArithOp::Mul24Lo => lo,
        ArithOp::Mul24Hi => hi,
        ArithOp::Mad24Lo => lo.wrapping_add(c) & 0xFFFF_FFFF,
        ArithOp::Mad24Hi if sat && signed => {
            clamp_to(i128::from(sext(hi, 32)) + i128::from(sext(c, 32)), true, 32)
        }
        _ => hi.wrapping_add(c) & 0xFFFF_FFFF,
    }
}

/// Division; PTX leaves division by zero undefined: we return all ones (-1 for signed types,
/// as the hardware does). The most negative value divided by -1 wraps.
fn div(signed: bool, w: u32, a: u64, b: u64) -> u64 {
    let m = mask(w);
    if signed {
        let (x, y) = (sext(a, w), sext(b, w));
        if y == 0 {
            m
        } else {
            x.wrapping_div(y) as u64 & m
        }
    } else {
        let (x, y) = (a & m, b & m);
        x.checked_div(y).unwrap_or(m)
    }
}

/// Remainder with the sign of the dividend; by zero (undefined in PTX) it returns `a`.
fn rem(signed: bool, w: u32, a: u64, b: u64) -> u64 {
    let m = mask(w);
    if signed {
        let (x, y) = (sext(a, w), sext(b, w));
        if y == 0 {
            a & m
        } else {
            x.wrapping_rem(y) as u64 & m
        }
    } else {
        let (x, y) = (a & m, b & m);
        x.checked_rem(y).unwrap_or(x)
    }
}

/// The shift amount is an unsigned 32-bit value; amounts of at least the width give 0.
fn shl(w: u32, a: u64, b: u64) -> u64 {
    let n = b & 0xFFFF_FFFF;
    if n >= u64::from(w) {
        0
    } else {
        (a << n) & mask(w)
    }
}

/// Logical shift for u/b types, arithmetic for s types (sign fill beyond the width).
fn shr(signed: bool, w: u32, a: u64, b: u64) -> u64 {
    let n = b & 0xFFFF_FFFF;
    if signed {
        (sext(a, w) >> n.min(63)) as u64 & mask(w)
    } else if n >= u64::from(w) {
        0
    } else {
        (a & mask(w)) >> n
    }
}

/// `pos` and `len` of bfe/bfi as the hardware reads them: the PTX ISA takes bits 7..0 of each,
/// which an H100 does for the 32-bit forms; its 64-bit forms use the whole 32-bit operands
/// (docs/correlation/h100-sxm-2026-11-27: `bfe.u64 d, a, 260, 264` gives 0, not bits 4..11).
fn field_operands(w: u32, pos: u64, len: u64) -> (u32, u32) {
    let bits = if w == 64 { 0xFFFF_FFFF } else { 0xFF };
    ((pos & bits) as u32, (len & bits) as u32)
}

/// bfe (PTX ISA: `bfe`): `len` bits from `pos` (read by `field_operands`), zero-extended for
/// unsigned types and extended with the field's last in-range bit for signed ones.
fn bfe(signed: bool, w: u32, a: u64, pos: u64, len: u64) -> u64 {
    let m = mask(w);
    let a = a & m;
    let (pos, len) = field_operands(w, pos, len);
    let last = (u64::from(pos) + u64::from(len))
        .saturating_sub(1)
        .min(u64::from(w - 1));
    let sbit = signed && len != 0 && (a >> last) & 1 == 1;
    // Bits actually taken from `a`.
    let n = if pos < w { len.min(w - pos) } else { 0 };
    let field = if n == 0 { 0 } else { (a >> pos) & mask(n) };
    if sbit {
        field | (m & !mask(n))
    } else {
        field
    }
}

/// bfi (PTX ISA: `bfi`): inserts the low `len` bits of `a` into `b` at `pos` (read by
/// `field_operands`); bits past the msb are dropped.
pub(crate) fn bfi(ty: Type, a: u64, b: u64, pos: u64, len: u64) -> u64 {
    let w = width(ty);
    let m = mask(w);
    let (pos, len) = field_operands(w, pos, len);
    let n = if pos < w { len.min(w - pos) } else { 0 };
    if n == 0 {
        return b & m;
    }
    let field = (mask(n) << pos) & m;
    (b & m & !field) | ((a << pos) & field)
}

/// prmt (PTX ISA: `prmt`): picks bytes of `{b, a}` (a = bytes 0-3, b = bytes 4-7).
pub(crate) fn prmt(mode: PrmtMode, a: u32, b: u32, c: u32) -> u32 {
    let src = (u64::from(b) << 32) | u64::from(a);
    let byte = |i: u32| ((src >> (8 * (i & 7))) & 0xFF) as u32;
    let s = c & 3;
    let mut d = 0;
    for i in 0..4u32 {
        let v = match mode {
            PrmtMode::Default => {
                // Nibble i of c: 3 bits of byte index, msb set = replicate the byte's sign.
                let nib = (c >> (4 * i)) & 0xF;
                let v = byte(nib & 7);
                match (nib & 8 != 0, v & 0x80 != 0) {
                    (false, _) => v,
                    (true, true) => 0xFF,
                    (true, false) => 0,
                }
            }
            PrmtMode::F4e => byte(s + i),
            PrmtMode::B4e => byte(s.wrapping_sub(i)),
            PrmtMode::Rc8 => byte(s),
            PrmtMode::Ecl => byte(s.max(i)),
            PrmtMode::Ecr => byte(s.min(i)),
            PrmtMode::Rc16 => byte((i & 1) | ((s & 1) << 1)),
        };
        d |= v << (8 * i);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(op: ArithOp, ty: Type, a: u64, b: u64, c: u64) -> u64 {
        arith(op, ty, Mods::default(), a, b, c)
    }

    #[test]
    fn prmt_examples() {
        // a = bytes 0..3, b = bytes 4..7, each byte holding its own index.
        let (a, b) = (0x0302_0100, 0x0706_0504);
        assert_eq!(prmt(PrmtMode::Default, a, b, 0x7531), 0x0705_0301);
        assert_eq!(prmt(PrmtMode::Default, a, b, 0x3210), a);
        assert_eq!(prmt(PrmtMode::Default, 0x0000_8000, 0, 0x9998), 0xFFFF_FF00);
        assert_eq!(prmt(PrmtMode::F4e, a, b, 1), 0x0403_0201);
        assert_eq!(prmt(PrmtMode::F4e, a, b, 3), 0x0605_0403);
        assert_eq!(prmt(PrmtMode::B4e, a, b, 0), 0x0506_0700);
        assert_eq!(prmt(PrmtMode::B4e, a, b, 2), 0x0700_0102);
        assert_eq!(prmt(PrmtMode::Rc8, a, b, 2), 0x0202_0202);
        assert_eq!(prmt(PrmtMode::Ecl, a, b, 1), 0x0302_0101);
        assert_eq!(prmt(PrmtMode::Ecr, a, b, 2), 0x0202_0100);
        assert_eq!(prmt(PrmtMode::Rc16, a, b, 1), 0x0302_0302);
        assert_eq!(prmt(PrmtMode::Rc16, a, b, 6), 0x0100_0100);
    }

    #[test]
    fn bit_field_examples() {
        assert_eq!(bfe(false, 32, 0xABCD_1234, 8, 8), 0x12);
        assert_eq!(bfe(true, 32, 0xABCD_1234, 12, 8), 0xFFFF_FFD1);
        assert_eq!(bfe(true, 32, 0x8000_0000, 40, 3), 0xFFFF_FFFF);
        assert_eq!(bfe(false, 32, 0xFFFF_FFFF, 28, 8), 0xF);
        assert_eq!(bfe(true, 32, 0xF000_0000, 28, 8), 0xFFFF_FFFF);
        assert_eq!(bfe(true, 64, u64::MAX, 0, 0), 0);
        assert_eq!(bfe(true, 32, 0x1234, 0x104, 0x108), 0x23);
        assert_eq!(bfi(Type::B32, 0xFF, 0x1234_5678, 8, 4), 0x1234_5F78);
        assert_eq!(bfi(Type::B32, 0xFF, 0x1234_5678, 30, 8), 0xD234_5678);
        assert_eq!(bfi(Type::B32, 0xFF, 0x1234_5678, 32, 8), 0x1234_5678);
        assert_eq!(bfi(Type::B64, 0xAB, 0, 60, 8), 0xB000_0000_0000_0000);
        assert_eq!(op(ArithOp::Brev, Type::B32, 1, 0, 0), 0x8000_0000);
        assert_eq!(
            op(ArithOp::Brev, Type::B64, 0x6, 0, 0),
            0x6000_0000_0000_0000
        );
        assert_eq!(op(ArithOp::Clz, Type::B32, 0x0001_0000, 0, 0), 15);
        assert_eq!(op(ArithOp::Clz, Type::B32, 0, 0, 0), 32);
        assert_eq!(op(ArithOp::Clz, Type::B64, 1, 0, 0), 63);
        assert_eq!(
            op(ArithOp::Popc, Type::B32, 0xFFFF_FFFF_F0F0_F0F0, 0, 0),
            16
        );
    }

    #[test]
    fn arithmetic_examples() {
        assert_eq!(
            op(ArithOp::MulHi, Type::S32, 0xFFFF_FFFF, 2, 0),
            0xFFFF_FFFF
        );
        assert_eq!(op(ArithOp::MulHi, Type::U32, 0xFFFF_FFFF, 2, 0), 1);
        assert_eq!(
            op(ArithOp::MulWide, Type::S16, 0xFFFF, 0x7FFF, 0),
            0xFFFF_8001
        );
        assert_eq!(
            op(ArithOp::MulHi, Type::U64, u64::MAX, u64::MAX, 0),
            u64::MAX - 1
        );
        assert_eq!(
            op(ArithOp::Mul24Hi, Type::U32, 0xFF_FFFF, 0xFF_FFFF, 0),
            0xFFFF_FE00
        );
        assert_eq!(
            op(ArithOp::Mul24Lo, Type::S32, 0x80_0000, 2, 0),
            0xFF00_0000
        );
        assert_eq!(
            op(ArithOp::Div, Type::S32, 0x8000_0000, 0xFFFF_FFFF, 0),
            0x8000_0000
        );
        assert_eq!(op(ArithOp::Rem, Type::S32, 0x8000_0000, 0xFFFF_FFFF, 0), 0);
        assert_eq!(op(ArithOp::Div, Type::U32, 7, 0, 0), 0xFFFF_FFFF);
        assert_eq!(op(ArithOp::Div, Type::S64, 7, 0, 0), u64::MAX);
        assert_eq!(
            op(ArithOp::Rem, Type::S32, (-7i32) as u32 as u64, 2, 0),
            0xFFFF_FFFF
        );
        assert_eq!(op(ArithOp::Rem, Type::U16, 7, 0, 0), 7);
        assert_eq!(op(ArithOp::Shr, Type::S32, 0x8000_0000, 40, 0), 0xFFFF_FFFF);
        assert_eq!(op(ArithOp::Shr, Type::S16, 0x4000, 40, 0), 0);
        assert_eq!(op(ArithOp::Shr, Type::B32, 0x8000_0000, 31, 0), 1);
        assert_eq!(op(ArithOp::Shl, Type::B32, 1, 1 << 32, 0), 1);
        assert_eq!(op(ArithOp::Shl, Type::B32, 1, 32, 0), 0);
        assert_eq!(op(ArithOp::Abs, Type::S32, 0x8000_0000, 0, 0), 0x8000_0000);
        assert_eq!(
            op(ArithOp::Sad, Type::S32, (-3i32) as u32 as u64, 4, 10),
            17
        );
        assert_eq!(op(ArithOp::Sad, Type::U32, 3, 0xFFFF_FFFF, 0), 0xFFFF_FFFC);
        assert_eq!(op(ArithOp::Cnot, Type::B32, 0x1_0000_0000, 0, 0), 1);
        assert_eq!(op(ArithOp::Not, Type::Pred, 1, 0, 0), 0);
        let sat = Mods {
            sat: true,
            ..Mods::default()
        };
        assert_eq!(
            arith(ArithOp::Add, Type::S32, sat, 0x7FFF_FFFF, 1, 0),
            0x7FFF_FFFF
        );
        assert_eq!(
            arith(ArithOp::Sub, Type::S32, sat, 0x8000_0000, 1, 0),
            0x8000_0000
        );
        assert_eq!(
            arith(
                ArithOp::MadHi,
                Type::S32,
                sat,
                0x7FFF_FFFF,
                0x7FFF_FFFF,
                0x7FFF_FFFF
            ),
            0x7FFF_FFFF
        );
    }
}
