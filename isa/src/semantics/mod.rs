//! Pure per-lane instruction semantics of the PTX data instructions (PTX ISA 8.x, chapter 9.7).
//!
//! **Value convention.** A register value is a `u64` holding the bits of its type in the low
//! bits: an f32 is its IEEE bits in bits 0..32, f16/bf16 use 16 bits, f16x2/bf16x2 pack two
//! halves in 32 bits with element 0 in the low half, a predicate is 0 or 1. Inputs may carry
//! garbage above the type's width and are masked; results are zero-extended to 64 bits.
//! Nothing here allocates or panics, whatever the inputs.
//!
//! **Exact rounding.** `.rn`, `.rz`, `.rm` and `.rp` are exact for every float format and every
//! rounding operation (add, sub, mul, fma/mad, div, rcp, sqrt, cvt): f32/f64 round-to-nearest
//! uses the host's IEEE operations, everything else the integer-based software rounding in
//! `rounding`, which never touches the host rounding mode.
//!
//! **Rules the PTX ISA states that are easy to misread** (pinned by the `cvt_f2i` traces and
//! the integer-only reference in `isa/tests/semantics_props.rs`):
//! - `cvt` float → integer rounds by the integer rounding modifier and then clamps to the
//!   destination's range, with or without `.sat` (±inf give the range's ends). A NaN gives 0
//!   when the source is not `.f64` and the destination is not `.s64`/`.u64`, and otherwise
//!   `1 << (BitWidth(dst) - 1)`: `cvt.rzi.s32.f64` of NaN is 0x80000000 and `cvt.rni.u64.f32`
//!   of NaN is 1 << 63 (PTX ISA `cvt`, Integer Notes).
//! - A narrow `cvt` result in a wider register is sign-extended for `.s8`/`.s16`/`.s32`
//!   destinations and zero-extended otherwise (§9.4.1, Table 28): `extend_to_register`.
//!
//! **Choices where PTX leaves the result undefined or unspecified:**
//! - Integer division by zero gives all ones (-1 for signed types, as the hardware does);
//!   remainder by zero gives the dividend. `MIN / -1` wraps to `MIN`, `MIN % -1` is 0.
//! - Every float result that is a NaN is the canonical NaN: 0x7FFFFFFF (f32),
//!   0x7FFF_FFFF_FFFF_FFFF (f64), 0x7FFF (f16, bf16), abs/neg/copysign of a NaN included.
//! - `.approx` (and `.full`) div, rcp and sqrt are correctly rounded to nearest; `.approx`
//!   rsqrt, sin, cos, lg2, ex2 and tanh are Rust's std functions evaluated in f32 (f64 for an
//!   f64 type; f16/bf16 go through f32 and round back to nearest).
//! - `.ftz` flushes subnormal inputs and (after rounding) results of the operation's format to
//!   sign-preserving zero; for `cvt` only f32 sources and destinations are flushed.
//! - `.sat` clamps to [0.0, 1.0]; NaN and negative values, -0.0 included, give +0.0. On integer
//!   operations it clamps to the range of any signed type (PTX only defines it for s32).
//! - `cvt` without a rounding modifier rounds float→integer toward zero (`.rzi`) and everything
//!   else to nearest even (the parser rejects the forms where PTX makes the modifier
//!   mandatory); `cvt.{rna,rn,rz}.tf32.f32` is `convert(B32, F32, ...)`.
//! - `slct` with a NaN f32 selector picks `b`; `compare` of packed types compares element 0.
//! - `.relu` (`fma` and `cvt` to f16/bf16, integer `max`/`min`) turns every negative result,
//!   -0.0 included, into +0 and keeps NaN as the canonical NaN.
//! - `fns` with a base above 31 (undefined in PTX) returns 0xFFFFFFFF.
//! - `mma` (a function of the whole warp's fragments, `mma.rs`) sums each dot product in f64 in
//!   k order after C and rounds once to f32; tf32 inputs ignore their low 13 bits.
//! - `mma.m8n8k4` (`mma_m884.rs`) and `wmma.mma` (`wmma.rs`) use the same sum, rounded once to
//!   f32 or f16; `wmma` fragments use the `mma.sync` layouts tiled over the shape (PTX leaves
//!   the distribution unspecified).

mod bits;
mod carry;
mod convert;
mod float;
mod int;
mod matrix;
pub mod mbarrier;
mod mma;
mod mma_int;
mod mma_m884;
mod newer;
mod rounding;
mod swizzle;
pub mod tensor_map;
mod wgmma;
mod wmma;

pub use bits::{bfind, shf};
pub use carry::carry_op;
pub use matrix::{ldmatrix, stmatrix, MATRIX_LANES, MATRIX_ROWS};
pub use mma::{mma, mma_regs, MMA_LANES};
pub use mma_int::{mma_int, mma_int_fmas, mma_int_regs};
pub use mma_m884::{mma_m884, mma_m884_regs, MMA_M884_FMAS};
pub use newer::{bmsk, dot, fns, lop3, redux, szext, testp};
pub use swizzle::{swizzle, swizzle_based, Swizzle};
pub use wgmma::{
    a_from_regs, a_position, a_values, d_position, d_regs, element_addr, element_value,
    transpose_allowed, types_valid, wgmma_slice, MatrixDesc, WgmmaSpec, A_REGS, SLICE_ROWS,
    WARPGROUP_WARPS, WGMMA_LANES,
};
pub use wmma::{
    wmma_default_stride, wmma_dims, wmma_elements, wmma_fmas, wmma_mma, wmma_mma_valid,
    wmma_offset, wmma_pack, wmma_position, wmma_reg_elements, wmma_regs, wmma_unpack,
    Fragments as WmmaFragments, WMMA_MAX_REGS,
};

use crate::ir::{ArithOp, AtomOp, BoolOp, Cmp, Mods, Type};

/// Result of `op.ty` with modifiers `mods` on sources a, b, c (unused sources are ignored).
pub fn arith(op: ArithOp, ty: Type, mods: Mods, a: u64, b: u64, c: u64) -> u64 {
    match float::format(ty) {
        Some((f, false)) if float::is_float_op(op) => float::arith(op, f, mods, a, b, c),
        Some((f, true)) if float::is_float_op(op) => float::arith_packed(op, f, mods, a, b, c),
        _ => match ty {
            // Packed 16-bit integers work per halfword (PTX ISA 8.x §9.7.1.12-13, sm_90).
            Type::U16x2 | Type::S16x2 => {
                let e = if ty == Type::S16x2 {
                    Type::S16
                } else {
                    Type::U16
                };
                let half = |i: u32| {
                    let f = |v: u64| (v >> (16 * i)) & 0xFFFF;
                    int::arith(op, e, mods, f(a), f(b), f(c)) & 0xFFFF
                };
                (half(1) << 16) | half(0)
            }
            _ => int::arith(op, ty, mods, a, b, c),
        },
    }
}

/// `cvt.frnd{.relu}.{f16x2,bf16x2}.f32 d, a, b`: `a` converted into the upper half of d and `b`
/// into the lower half (PTX ISA 8.x `cvt`). Other destination types are read as f16x2.
pub fn convert_pack(dty: Type, mods: Mods, a: u64, b: u64) -> u64 {
    let e = if dty == Type::Bf16x2 {
        Type::Bf16
    } else {
        Type::F16
    };
    let hi = convert(e, Type::F32, mods, a) & 0xFFFF;
    let lo = convert(e, Type::F32, mods, b) & 0xFFFF;
    (hi << 16) | lo
}

/// `setp`/`set` comparison `a cmp b` of type `ty` (PTX ISA: `setp`, `set`).
pub fn compare(cmp: Cmp, ty: Type, ftz: bool, a: u64, b: u64) -> bool {
    if let Some((f, _)) = float::format(ty) {
        return float::compare(cmp, f, ftz, a, b);
    }
    let (x, y) = (int::value(ty, a), int::value(ty, b));
    let m = int::mask(int::width(ty));
    let (ux, uy) = (a & m, b & m);
    // Integers have no NaN: the unordered forms equal the ordered ones.
    match cmp {
        Cmp::Eq | Cmp::Equ => x == y,
        Cmp::Ne | Cmp::Neu => x != y,
        Cmp::Lt | Cmp::Ltu => x < y,
        Cmp::Le | Cmp::Leu => x <= y,
        Cmp::Gt | Cmp::Gtu => x > y,
        Cmp::Ge | Cmp::Geu => x >= y,
        Cmp::Lo => ux < uy,
        Cmp::Ls => ux <= uy,
        Cmp::Hi => ux > uy,
        Cmp::Hs => ux >= uy,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// The `.and`/`.or`/`.xor` combination of a comparison result with a predicate.
pub fn combine(op: BoolOp, x: bool, y: bool) -> bool {
    match op {
        BoolOp::And => x && y,
        BoolOp::Or => x || y,
        BoolOp::Xor => x != y,
    }
}

/// `set`: the destination value for a true/false result (0xFFFFFFFF / 1.0f for f32 / 0).
pub fn set_value(dty: Type, result: bool) -> u64 {
    if !result {
        return 0;
    }
    match float::format(dty) {
        // 1.0 in each element of a packed type.
        Some((f, true)) => (f.one() << 16) | f.one(),
        Some((f, false)) => f.one(),
        None => int::mask(int::width(dty)),
    }
}

/// `cvt.dty.sty` of `a` with rounding, `.ftz` and `.sat` from `mods` (PTX ISA: `cvt`).
pub fn convert(dty: Type, sty: Type, mods: Mods, a: u64) -> u64 {
    convert::convert(dty, sty, mods, a)
}

/// A `cvt` (or `ld`) result of type `ty` as it lands in a register declared `reg`, which may be
/// wider: sign-extended to the register's width for a signed integer type, zero-extended
/// otherwise (PTX ISA §9.4.1, Table 28; `cvt`, Notes). The simulator and the semantic models
/// both write through this.
pub fn extend_to_register(ty: Type, reg: Type, v: u64) -> u64 {
    let w = ty.bits();
    if ty.is_signed() && w < 64 && reg.bits() > w {
        let s = 64 - w;
        ((((v << s) as i64) >> s) as u64) & reg.mask()
    } else {
        v
    }
}

/// New value that an atomic stores, given the old memory value `old`, operand b and (cas) c.
pub fn atomic(op: AtomOp, ty: Type, old: u64, b: u64, c: u64) -> u64 {
    let m = match float::format(ty) {
        Some((_, true)) => 0xFFFF_FFFF,
        Some((f, false)) => f.mask(),
        None => int::mask(int::width(ty)),
    };
    let (old, b, c) = (old & m, b & m, c & m);
    match op {
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Cas => {
            if old == b {
                c
            } else {
                old
            }
        }
        AtomOp::Exch => b,
        // atom.add.f32 rounds to nearest and flushes subnormals; f64, f16 and bf16 (.noftz)
        // round to nearest without flushing (PTX ISA: `atom`).
        AtomOp::Add => match float::format(ty) {
            Some((f, packed)) => {
                let mods = Mods {
                    ftz: ty == Type::F32,
                    ..Mods::default()
                };
                if packed {
                    float::arith_packed(ArithOp::Add, f, mods, old, b, 0)
                } else {
                    float::arith(ArithOp::Add, f, mods, old, b, 0)
                }
            }
            None => old.wrapping_add(b) & m,
        },
        // inc/dec are unsigned (PTX ISA: `atom`).
        AtomOp::Inc => {
            if old >= b {
                0
            } else {
                old + 1
            }
        }
        AtomOp::Dec => {
            if old == 0 || old > b {
                b
            } else {
                old - 1
            }
        }
        AtomOp::Min | AtomOp::Max => {
            let op = if op == AtomOp::Min {
                ArithOp::Min
            } else {
                ArithOp::Max
            };
            arith(op, ty, Mods::default(), old, b, 0)
        }
    }
}

/// `bfi.ty d, a, b, pos, len`: insert the low `len` bits of `a` into `b` at `pos`.
pub fn bfi(ty: Type, a: u64, b: u64, pos: u64, len: u64) -> u64 {
    int::bfi(ty, a, b, pos, len)
}

/// `slct`: c >= 0 ? a : b, where c is s32 or f32 (`cty`).
pub fn slct(dty: Type, cty: Type, ftz: bool, a: u64, b: u64, c: u64) -> u64 {
    let take_a = match float::format(cty) {
        // -0.0 >= 0 holds; a NaN selector compares false and picks b.
        Some((f, _)) => {
            let c = c & f.mask();
            let c = if ftz { f.flush(c) } else { c };
            float::compare(Cmp::Ge, f, false, c, 0)
        }
        None => int::value(cty, c) >= 0,
    };
    let m = match float::format(dty) {
        Some((_, true)) => 0xFFFF_FFFF,
        Some((f, false)) => f.mask(),
        None => int::mask(int::width(dty)),
    };
    (if take_a { a } else { b }) & m
}
