//! Extended-precision arithmetic with the condition-code carry flag (PTX ISA §9.7.2:
//! add.cc, addc, sub.cc, subc, mad.cc, madc). The flag is an input and an output here; the
//! simulator keeps it in a hidden per-thread register.

use crate::ir::{CarryOp, Type};

/// Returns (result, carry-out). `carry_in` is 0 or 1 (for subtraction it is the borrow).
pub fn carry_op(op: CarryOp, ty: Type, a: u64, b: u64, c: u64, carry_in: u64) -> (u64, u64) {
    let bits = ty.bits().min(64);
    let m = if bits == 64 {
        u64::MAX as u128
    } else {
        (1u128 << bits) - 1
    };
    let (a, b, c, ci) = (
        a as u128 & m,
        b as u128 & m,
        c as u128 & m,
        (carry_in & 1) as u128,
    );
    match op {
        CarryOp::Add => {
            let s = a + b + ci;
            ((s & m) as u64, (s >> bits) as u64 & 1)
        }
        CarryOp::Sub => {
            let sub = b + ci;
            let r = a.wrapping_sub(sub) & m;
            (r as u64, (a < sub) as u64)
        }
        CarryOp::MadLo | CarryOp::MadHi => {
            let p = a * b;
            let part = if op == CarryOp::MadLo {
                p & m
            } else {
                (p >> bits) & m
            };
            let s = part + c + ci;
            ((s & m) as u64, (s >> bits) as u64 & 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_chain_builds_64_bit_sum() {
        // (2^32 - 1) + 1 over two 32-bit limbs: low limb 0 with carry, high limb 1.
        let (lo, c) = carry_op(CarryOp::Add, Type::U32, 0xFFFF_FFFF, 1, 0, 0);
        let (hi, _) = carry_op(CarryOp::Add, Type::U32, 0, 0, 0, c);
        assert_eq!((lo, hi), (0, 1));
    }

    #[test]
    fn sub_chain_borrows() {
        let (lo, b) = carry_op(CarryOp::Sub, Type::U32, 0, 1, 0, 0);
        let (hi, _) = carry_op(CarryOp::Sub, Type::U32, 5, 0, 0, b);
        assert_eq!((lo, hi), (0xFFFF_FFFF, 4));
    }

    #[test]
    fn madc_hi_adds_carry() {
        let (r, c) = carry_op(
            CarryOp::MadHi,
            Type::U32,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            1,
        );
        // hi(0xFFFFFFFE00000001) = 0xFFFFFFFE; + 0xFFFFFFFF + 1 = 0x1_FFFFFFFE
        assert_eq!((r, c), (0xFFFF_FFFE, 1));
    }
}
