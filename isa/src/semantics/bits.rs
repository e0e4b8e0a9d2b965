//! Bit-search and funnel-shift instructions: `bfind` and `shf` (PTX ISA §9.7.1.19, §9.7.8.7).

use crate::ir::Type;

/// `bfind{.shiftamt}.type d, a`: position of the most significant non-sign bit, or
/// 0xFFFFFFFF when there is none; `.shiftamt` returns the left-shift amount instead.
pub fn bfind(ty: Type, shiftamt: bool, a: u64) -> u64 {
    let bits = ty.bits();
    let m = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let mut v = a & m;
    if ty.is_signed() && (v >> (bits - 1)) & 1 == 1 {
        v = !v & m;
    }
    if v == 0 {
        return 0xFFFF_FFFF;
    }
    let msb = 63 - v.leading_zeros() as u64;
    if shiftamt {
        bits as u64 - 1 - msb
    } else {
        msb
    }
}

/// `shf.{l,r}.{clamp,wrap}.b32 d, a, b, c`: shift the 64-bit value b:a and keep 32 bits.
pub fn shf(left: bool, clamp: bool, a: u64, b: u64, c: u64) -> u64 {
    let n = if clamp {
        (c as u32).min(32)
    } else {
        c as u32 & 31
    };
    let v = ((b & 0xFFFF_FFFF) << 32) | (a & 0xFFFF_FFFF);
    if left {
        ((v << n) >> 32) & 0xFFFF_FFFF
    } else {
        (v >> n) & 0xFFFF_FFFF
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bfind_examples() {
        assert_eq!(bfind(Type::U32, false, 1), 0);
        assert_eq!(bfind(Type::U32, false, 0x8000_0000), 31);
        assert_eq!(bfind(Type::U32, true, 0x8000_0000), 0);
        assert_eq!(bfind(Type::U32, false, 0), 0xFFFF_FFFF);
        assert_eq!(bfind(Type::S32, false, 0xFFFF_FFFF), 0xFFFF_FFFF); // -1: no non-sign bit
        assert_eq!(bfind(Type::S32, false, 0xFFFF_FFFE), 0); // -2
    }

    #[test]
    fn funnel_shifts() {
        assert_eq!(shf(true, false, 0x8000_0000, 0x1, 1), 0x3);
        assert_eq!(shf(false, false, 0x2, 0x1, 1), 0x8000_0001);
        assert_eq!(shf(true, true, 0xAB, 0xCD, 40), 0xAB); // clamped to 32: d = a
        assert_eq!(shf(true, false, 0xAB, 0xCD, 32), 0xCD); // wrap: 32 & 31 = 0
    }
}
