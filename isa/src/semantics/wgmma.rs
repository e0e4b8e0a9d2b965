//! `wgmma.mma_async` (PTX ISA 9.0 §9.7.15, "Asynchronous Warpgroup Level Matrix Multiply-
//! Accumulate"): matrix descriptors, the shared-memory matrix layouts, the register fragment
//! layouts, and the arithmetic of one warp's 16-row slice.
//!
//! A warpgroup (4 consecutive warps, the first a multiple of 4) computes D (64×N) = A (64×K) ·
//! B (K×N) (+ D). Warp q = warp % 4 of the group owns rows 16q..16q+15 of A and D, so each warp's
//! slice is an independent 16×N×K product — this module computes one slice.
//!
//! **Matrix descriptor** (§9.7.15.5.1.2, "Matrix Descriptor Format"), fields in 16-byte units:
//! bits 0–13 the start address, 16–29 the leading-dimension byte offset (LBO), 32–45 the
//! stride-dimension byte offset (SBO); bits 49–51 the base offset, 62–63 the swizzle mode (0
//! none, 1 128B, 2 64B, 3 32B).
//!
//! **Shared-memory layouts** (§9.7.15.5.1, "Shared Memory Matrix Layout"; cute's canonical GMMA
//! layouts), in 16-byte chunks of T = 16 / element-size elements. Rows are the M (A) or N (B)
//! index `mn`, columns the K index. With W = 1, 2, 4, 8 chunks for none/32B/64B/128B:
//! - K-major (no transpose; each mn row contiguous along K): element (mn, k) lies at
//!   `(mn % 8)·W·16 + (mn / 8)·SBO + (k / T)·(LBO if no swizzle else 16) + (k % T)·size`.
//! - MN-major (transpose, `imm-trans` = 1; each k row contiguous along mn): with c = mn / T,
//!   no swizzle: `c·SBO + (k % 8)·16 + (k / 8)·LBO + (mn % T)·size`; swizzled:
//!   `(c % W)·16 + (c / W)·LBO + (k % 8)·W·16 + (k / 8)·SBO + (mn % T)·size`.
//!
//! The byte address is start + offset, then swizzled as a shared address: chunk bits [4, 4+b)
//! are XORed with the pattern row ((address >> 7) - base offset) mod 2^b (b = 1, 2, 3 for
//! 32B, 64B, 128B; `swizzle::swizzle_based`). The row comes from the address, not from the
//! offset to the start: the swizzle repeats on 1024/512/256-byte boundaries of the shared
//! window, the pattern TMA writes, so a descriptor pointing anywhere into a TMA-written tile
//! (a k-step 32 bytes along a row, a warpgroup's rows 8 KiB further, a tile 128 bytes past a
//! boundary) reads it with base offset 0. The base offset is for a pattern that itself starts
//! off a repeat boundary: the ISA sets it to (pattern start >> 7) & 7 (§9.7.15.5.1.2.2), and
//! the row is then counted from that start.
//!
//! **Fragments** (§9.7.15.5.1.1, "Register Fragments"): with g = lane / 4 and t = lane % 4,
//! accumulator value v (register v for .f32, half v % 2 of register v / 2 for .f16) of a lane
//! is D[16q + g + 8·⌊v/2⌋ % 2][8·⌊v/4⌋ + 2t + v % 2] — the m16n8 accumulator layout of `mma`
//! repeated over the N / 8 column blocks. A in registers (4 × .b32) is the `mma` A fragment of
//! the warp's 16 rows: .f16/.bf16 as m16n8k16, .tf32 as m16n8k8, fp8 value v (byte v % 4 of
//! register v / 4, j = v / 4) at (g + 8·(j % 2), 4t + v % 4 + 16·⌊j/2⌋).
//!
//! **Numerics** (as `mma.rs`): elements convert exactly to f64 (fp8 e4m3 and e5m2 decoded per
//! the OCP FP8 formats, e4m3 without infinities; .tf32 ignores the low 13 bits); each product is
//! exact; D = (scale-d ? D : 0) + Σ_k A·B summed in f64 in k order and rounded once to the
//! accumulator type (f32 or f16, nearest even). `imm-scale` -1 negates that operand. A NaN
//! result is the canonical NaN (0x7FFFFFFF, 0x7FFF).

use super::swizzle::{swizzle_based, Swizzle};
use crate::ir::{Type, WgmmaType};
use half::{bf16, f16};

/// Warps in a warpgroup.
pub const WARPGROUP_WARPS: usize = 4;
/// Rows of D (and A) per warp.
pub const SLICE_ROWS: usize = 16;
/// Lanes per warp the fragment layouts are defined for.
pub const WGMMA_LANES: usize = 32;
/// Registers of A in registers, per thread.
pub const A_REGS: usize = 4;

/// A decoded 64-bit shared-memory matrix descriptor (§9.7.15.5.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatrixDesc {
    /// Start address in the CTA's shared memory (bytes; a multiple of 16).
    pub start: u64,
    /// Leading-dimension byte offset.
    pub lbo: u64,
    /// Stride-dimension byte offset.
    pub sbo: u64,
    /// Base offset (bits 49–51): the row of the swizzle pattern's repeat at which the
    /// pattern starts (0 for a pattern starting on a repeat boundary).
    pub base_offset: u64,
    pub swizzle: Swizzle,
}

impl MatrixDesc {
    pub fn decode(bits: u64) -> MatrixDesc {
        let field = |lo: u32| ((bits >> lo) & 0x3FFF) << 4;
        MatrixDesc {
            start: field(0),
            lbo: field(16),
            sbo: field(32),
            base_offset: (bits >> 49) & 7,
            swizzle: match bits >> 62 {
                1 => Swizzle::B128,
                2 => Swizzle::B64,
                3 => Swizzle::B32,
                _ => Swizzle::None,
            },
        }
    }

    /// The descriptor bits (addresses and offsets are truncated to their 14-bit fields).
    pub fn encode(&self) -> u64 {
        let f = |v: u64| (v >> 4) & 0x3FFF;
        let mode: u64 = match self.swizzle {
            Swizzle::None => 0,
            Swizzle::B128 => 1,
            Swizzle::B64 => 2,
            Swizzle::B32 => 3,
        };
        f(self.start)
            | f(self.lbo) << 16
            | f(self.sbo) << 32
            | (self.base_offset & 7) << 49
            | mode << 62
    }
}

/// Chunks (16 bytes) per swizzle row: 1 without swizzling, else the swizzle width / 16.
fn row_chunks(s: Swizzle) -> u64 {
    match s {
        Swizzle::None => 1,
        Swizzle::B32 => 2,
        Swizzle::B64 => 4,
        Swizzle::B128 => 8,
    }
}

/// The shared-memory byte address of element (mn, k) of an operand described by `desc`, with
/// `elem_bytes`-byte elements, K-major or (`mn_major`) MN-major (see the module doc).
pub fn element_addr(
    desc: &MatrixDesc,
    mn_major: bool,
    elem_bytes: u32,
    mn: usize,
    k: usize,
) -> u64 {
    let eb = elem_bytes.max(1) as u64;
    let t = 16 / eb;
    let (mn, k) = (mn as u64, k as u64);
    let w = row_chunks(desc.swizzle);
    let off = if !mn_major {
        let kstep = if desc.swizzle == Swizzle::None {
            desc.lbo
        } else {
            16
        };
        (mn % 8) * w * 16 + (mn / 8) * desc.sbo + (k / t) * kstep + (k % t) * eb
    } else {
        let c = mn / t;
        let e = (mn % t) * eb;
        if desc.swizzle == Swizzle::None {
            c * desc.sbo + (k % 8) * 16 + (k / 8) * desc.lbo + e
        } else {
            (c % w) * 16 + (c / w) * desc.lbo + (k % 8) * w * 16 + (k / 8) * desc.sbo + e
        }
    };
    swizzle_based(desc.swizzle, desc.start.wrapping_add(off), desc.base_offset)
}

/// Registers of D per thread: N / 2 `.f32`, or N / 4 `.f16x2`.
pub fn d_regs(n: usize, dty: Type) -> usize {
    if dty == Type::F16 {
        n / 4
    } else {
        n / 2
    }
}

/// Whether `.dtype.atype.btype` is a dense `wgmma` combination PTX defines (§9.7.15.5.2):
/// .f16 with .f16 or .f32 accumulators, .bf16 and .tf32 with .f32, fp8 (.e4m3/.e5m2 in any
/// mix) with .f16 or .f32.
pub fn types_valid(dty: Type, aty: WgmmaType, bty: WgmmaType) -> bool {
    use WgmmaType::*;
    let acc_f32 = dty == Type::F32;
    let acc_f16 = dty == Type::F16;
    match (aty, bty) {
        (F16, F16) => acc_f32 || acc_f16,
        (Bf16, Bf16) | (Tf32, Tf32) => acc_f32,
        (E4m3 | E5m2, E4m3 | E5m2) => acc_f32 || acc_f16,
        _ => false,
    }
}

/// Whether `imm-trans-a`/`imm-trans-b` may be given: only for .f16/.bf16 (§9.7.15.5.2).
pub fn transpose_allowed(ty: WgmmaType) -> bool {
    matches!(ty, WgmmaType::F16 | WgmmaType::Bf16)
}

/// The exact value of an element's bits.
pub fn element_value(ty: WgmmaType, bits: u32) -> f64 {
    match ty {
        WgmmaType::F16 => f16::from_bits(bits as u16).to_f64(),
        WgmmaType::Bf16 => bf16::from_bits(bits as u16).to_f64(),
        WgmmaType::Tf32 => {
            if f32::from_bits(bits).is_nan() {
                f64::NAN
            } else {
                f32::from_bits(bits & 0xFFFF_E000) as f64
            }
        }
        WgmmaType::E4m3 => fp8_value(bits as u8, 4, 3, false),
        WgmmaType::E5m2 => fp8_value(bits as u8, 5, 2, true),
    }
}

/// An fp8 value with `e` exponent and `m` mantissa bits; `ieee` formats (e5m2) have infinities
/// and NaNs at the top exponent, e4m3 only the NaN S.1111.111 (OCP 8-bit floating point).
fn fp8_value(x: u8, e: u32, m: u32, ieee: bool) -> f64 {
    let sign = if x & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = ((x as u32) >> m) & ((1 << e) - 1);
    let man = (x as u32) & ((1 << m) - 1);
    let top = (1 << e) - 1;
    let bias = (1 << (e - 1)) - 1;
    if ieee && exp == top {
        return if man == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if !ieee && exp == top && man == (1 << m) - 1 {
        return f64::NAN;
    }
    let frac = man as f64 / (1u32 << m) as f64;
    if exp == 0 {
        sign * frac * 2f64.powi(1 - bias)
    } else {
        sign * (1.0 + frac) * 2f64.powi(exp as i32 - bias)
    }
}

/// (row in the warp's 16, column) of accumulator value v of `lane`.
pub fn d_position(lane: usize, v: usize) -> (usize, usize) {
    let (g, t) = (lane >> 2, lane & 3);
    (g + 8 * ((v >> 1) & 1), 8 * (v >> 2) + 2 * t + (v & 1))
}

/// Values of A held in a lane's 4 registers: 8 (16-bit), 4 (tf32) or 16 (fp8).
pub fn a_values(ty: WgmmaType) -> usize {
    16 / ty.size() as usize * A_REGS / 4
}

/// (row in the warp's 16, k) of A value v of `lane` (A in registers), and where it sits: the
/// register and the bit shift of the element in it.
pub fn a_position(ty: WgmmaType, lane: usize, v: usize) -> ((usize, usize), (usize, u32)) {
    let (g, t) = (lane >> 2, lane & 3);
    match ty.size() {
        2 => (
            (g + 8 * ((v >> 1) & 1), 2 * t + (v & 1) + 8 * (v >> 2)),
            (v >> 1, 16 * (v as u32 & 1)),
        ),
        4 => ((g + 8 * (v & 1), t + 4 * (v >> 1)), (v, 0)),
        _ => {
            let j = v >> 2;
            (
                (g + 8 * (j & 1), 4 * t + (v & 3) + 16 * (j >> 1)),
                (j, 8 * (v as u32 & 3)),
            )
        }
    }
}

/// The warp's 16×K slice of A (row-major element bits) from its lanes' 4 registers each.
pub fn a_from_regs(ty: WgmmaType, regs: &[[u64; A_REGS]; WGMMA_LANES]) -> Vec<u32> {
    let k = ty.k();
    let bits = ty.size() * 8;
    let mask = if bits == 32 {
        u32::MAX as u64
    } else {
        (1u64 << bits) - 1
    };
    let mut a = vec![0u32; SLICE_ROWS * k];
    for (lane, r) in regs.iter().enumerate() {
        for v in 0..a_values(ty) {
            let ((row, col), (reg, shift)) = a_position(ty, lane, v);
            a[row * k + col] = ((r[reg] >> shift) & mask) as u32;
        }
    }
    a
}

/// The shape, types and immediates of one `wgmma.mma_async`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaSpec {
    pub n: usize,
    pub dty: Type,
    pub aty: WgmmaType,
    pub bty: WgmmaType,
    pub neg_a: bool,
    pub neg_b: bool,
}

impl WgmmaSpec {
    /// K: 16 (.f16/.bf16), 8 (.tf32), 32 (fp8).
    pub fn k(&self) -> usize {
        self.aty.k()
    }
    /// Multiply-adds of one warp's slice: 16·N·K.
    pub fn slice_fmas(&self) -> u64 {
        (SLICE_ROWS * self.n * self.k()) as u64
    }
}

/// One warp's slice: D (16×N) = A (16×K) · B (K×N) + (scale_d ? D : 0). `a` holds A's element
/// bits row-major (`a[row·K + k]`), `b` B's (`b[k·N + j]`), `d` the accumulator registers
/// lane-major (`d[lane·regs + r]`, `regs = d_regs(N, dty)`), read when `scale_d` and overwritten.
/// None when the sizes do not match the spec or the types are not a defined combination.
pub fn wgmma_slice(
    spec: &WgmmaSpec,
    a: &[u32],
    b: &[u32],
    d: &mut [u64],
    scale_d: bool,
) -> Option<()> {
    let (n, k) = (spec.n, spec.k());
    let nregs = d_regs(n, spec.dty);
    if !types_valid(spec.dty, spec.aty, spec.bty)
        || spec.bty.k() != k
        || n == 0
        || n % 8 != 0
        || a.len() != SLICE_ROWS * k
        || b.len() != k * n
        || d.len() != WGMMA_LANES * nregs
    {
        return None;
    }
    let sa = if spec.neg_a { -1.0 } else { 1.0 };
    let sb = if spec.neg_b { -1.0 } else { 1.0 };
    let av: Vec<f64> = a.iter().map(|&x| sa * element_value(spec.aty, x)).collect();
    // B transposed (column j contiguous over k) for the inner loop.
    let mut bt = vec![0f64; n * k];
    for kk in 0..k {
        for j in 0..n {
            bt[j * k + kk] = sb * element_value(spec.bty, b[kk * n + j]);
        }
    }
    let f16_acc = spec.dty == Type::F16;
    let values = if f16_acc { 2 * nregs } else { nregs };
    for lane in 0..WGMMA_LANES {
        let regs = &mut d[lane * nregs..(lane + 1) * nregs];
        for v in 0..values {
            let (row, col) = d_position(lane, v);
            let (reg, shift) = if f16_acc {
                (v >> 1, 16 * (v as u32 & 1))
            } else {
                (v, 0)
            };
            let mut acc = if !scale_d {
                0.0
            } else if f16_acc {
                f16::from_bits((regs[reg] >> shift) as u16).to_f64()
            } else {
                f32::from_bits(regs[reg] as u32) as f64
            };
            let arow = &av[row * k..(row + 1) * k];
            let bcol = &bt[col * k..(col + 1) * k];
            for (x, y) in arow.iter().zip(bcol) {
                acc += x * y;
            }
            if f16_acc {
                let h = f16::from_f64(acc);
                let bits = if h.is_nan() { 0x7FFF } else { h.to_bits() } as u64;
                regs[reg] = (regs[reg] & !(0xFFFF << shift) & 0xFFFF_FFFF) | bits << shift;
            } else {
                let f = acc as f32;
                regs[reg] = if f.is_nan() {
                    0x7FFF_FFFF
                } else {
                    f.to_bits() as u64
                };
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_round_trips() {
        let d = MatrixDesc {
            start: 0x1230,
            lbo: 16,
            sbo: 1024,
            base_offset: 3,
            swizzle: Swizzle::B64,
        };
        assert_eq!(MatrixDesc::decode(d.encode()), d);
        assert_eq!(MatrixDesc::decode(1u64 << 62).swizzle, Swizzle::B128);
        assert_eq!(MatrixDesc::decode(3u64 << 62).swizzle, Swizzle::B32);
    }

    #[test]
    fn fp8_values() {
        assert_eq!(element_value(WgmmaType::E4m3, 0x38), 1.0);
        assert_eq!(element_value(WgmmaType::E4m3, 0x7E), 448.0);
        assert!(element_value(WgmmaType::E4m3, 0x7F).is_nan());
        assert_eq!(element_value(WgmmaType::E4m3, 0x01), 2f64.powi(-9));
        assert_eq!(element_value(WgmmaType::E5m2, 0x3C), 1.0);
        assert_eq!(element_value(WgmmaType::E5m2, 0x7B), 57344.0);
        assert_eq!(element_value(WgmmaType::E5m2, 0xFC), f64::NEG_INFINITY);
        assert!(element_value(WgmmaType::E5m2, 0x7D).is_nan());
        assert_eq!(element_value(WgmmaType::E5m2, 0x01), 2f64.powi(-16));
    }

    #[test]
    fn fragments_tile_the_slice() {
        for n in [8, 64, 256] {
            let mut seen = vec![0; 16 * n];
            for lane in 0..32 {
                for v in 0..n / 2 {
                    let (r, c) = d_position(lane, v);
                    seen[r * n + c] += 1;
                }
            }
            assert!(seen.iter().all(|&x| x == 1));
        }
        for ty in [WgmmaType::F16, WgmmaType::Tf32, WgmmaType::E4m3] {
            let k = ty.k();
            let mut seen = vec![0; 16 * k];
            for lane in 0..32 {
                for v in 0..a_values(ty) {
                    let ((r, c), _) = a_position(ty, lane, v);
                    seen[r * k + c] += 1;
                }
            }
            assert!(seen.iter().all(|&x| x == 1), "{ty:?}");
        }
    }

    /// 128B swizzle, K-major bf16, 1024-byte SBO (the canonical `Layout_K_SW128_Atom`): row r
    /// chunk c of an 8-row atom sits at chunk c ^ r.
    #[test]
    fn k_major_128b_is_the_atom() {
        let d = MatrixDesc {
            start: 2048,
            lbo: 16,
            sbo: 1024,
            base_offset: 0,
            swizzle: Swizzle::B128,
        };
        for r in 0..16usize {
            for k in 0..16usize {
                let c = (k / 8) as u64;
                let want = 2048 + (r as u64 / 8) * 1024 + (r as u64 % 8) * 128;
                let want = want + ((c ^ (r as u64 % 8)) * 16) + (k as u64 % 8) * 2;
                assert_eq!(element_addr(&d, false, 2, r, k), want);
            }
        }
    }
}
