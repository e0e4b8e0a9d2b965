//! Shared-memory swizzle modes of Hopper tensor operations (PTX ISA 9.0 §9.7.15.5.1.2
//! "Shared Memory Matrix Layout", swizzling modes; the same patterns TMA writes with).
//!
//! A swizzle permutes the 16-byte chunks inside each row of a repeating pattern: in the byte
//! offset from a base aligned to the pattern (1024 bytes for 128B, 512 for 64B, 256 for 32B),
//! the chunk index bits `[4, 4+b)` are XORed with the row bits `[7, 7+b)`, with b = 3, 2, 1 for
//! the 128B, 64B and 32B modes (cute's `Swizzle<3,4,3>`, `Swizzle<2,4,3>`, `Swizzle<1,4,3>`).

/// A swizzle mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Swizzle {
    /// No swizzling (the interleaved layout).
    None,
    /// 32-byte swizzle: a 256-byte pattern.
    B32,
    /// 64-byte swizzle: a 512-byte pattern.
    B64,
    /// 128-byte swizzle: a 1024-byte pattern.
    B128,
}

impl Swizzle {
    /// The mode named `none`, `32B`, `64B` or `128B` (case-insensitive, `b` suffix optional).
    pub fn from_name(name: &str) -> Option<Swizzle> {
        let n = name.trim().to_ascii_lowercase();
        let n = n.strip_suffix('b').unwrap_or(&n);
        match n {
            "none" | "0" | "interleave" => Some(Swizzle::None),
            "32" => Some(Swizzle::B32),
            "64" => Some(Swizzle::B64),
            "128" => Some(Swizzle::B128),
            _ => None,
        }
    }

    /// The swizzle width in bytes (the row length the pattern permutes); 0 for `None`.
    pub fn bytes(self) -> u64 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    /// The number of chunk-index bits permuted (b): 0, 1, 2 or 3.
    pub fn bits(self) -> u32 {
        match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 2,
            Swizzle::B128 => 3,
        }
    }

    /// The period of the pattern in bytes (the base alignment it assumes): 1024 for 128B,
    /// 512 for 64B, 256 for 32B, 16 for `None`.
    pub fn period(self) -> u64 {
        match self {
            Swizzle::None => 16,
            Swizzle::B32 => 256,
            Swizzle::B64 => 512,
            Swizzle::B128 => 1024,
        }
    }
}

/// The swizzled byte offset of byte `offset` (relative to a base aligned to `mode.period()`):
/// bits `[4, 4+b)` XOR bits `[7, 7+b)`. An involution, so it is its own inverse.
pub fn swizzle(mode: Swizzle, offset: u64) -> u64 {
    let b = mode.bits();
    if b == 0 {
        return offset;
    }
    let mask = ((1u64 << b) - 1) << 4;
    offset ^ ((offset >> 3) & mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Swizzle; 4] = [Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128];

    #[test]
    fn names_round_trip() {
        for (name, m) in [
            ("none", Swizzle::None),
            ("32B", Swizzle::B32),
            ("64B", Swizzle::B64),
            ("128B", Swizzle::B128),
        ] {
            assert_eq!(Swizzle::from_name(name), Some(m));
        }
        assert_eq!(Swizzle::from_name("16B"), None);
        assert_eq!(Swizzle::B128.bytes(), 128);
        assert_eq!(Swizzle::None.bytes(), 0);
    }

    #[test]
    fn periods() {
        assert_eq!(Swizzle::None.period(), 16);
        assert_eq!(Swizzle::B32.period(), 256);
        assert_eq!(Swizzle::B64.period(), 512);
        assert_eq!(Swizzle::B128.period(), 1024);
    }

    #[test]
    fn identity_for_none() {
        for off in (0..100_000u64).step_by(7) {
            assert_eq!(swizzle(Swizzle::None, off), off);
        }
    }

    #[test]
    fn bijective_within_period_and_keeps_bytes_in_chunks() {
        for m in ALL {
            let p = m.period().max(1024);
            for base in [0u64, p, 7 * p] {
                let mut seen = vec![false; p as usize];
                for off in 0..p {
                    let s = swizzle(m, base + off);
                    assert!(s >= base && s < base + p, "{m:?} {off} -> {s}");
                    assert_eq!(s % 16, off % 16, "bytes stay inside their chunk");
                    assert_eq!(s / 128, (base + off) / 128, "chunks stay in their row");
                    assert!(!seen[(s - base) as usize]);
                    seen[(s - base) as usize] = true;
                    assert_eq!(swizzle(m, s), base + off, "involution");
                }
            }
        }
    }

    #[test]
    fn row_r_chunk_c_goes_to_chunk_c_xor_r() {
        // 128B: row r (128 bytes) of an 8-row pattern has chunk c stored at chunk c ^ r.
        for r in 0..8u64 {
            for c in 0..8u64 {
                assert_eq!(
                    swizzle(Swizzle::B128, r * 128 + c * 16),
                    r * 128 + (c ^ r) * 16
                );
                assert_eq!(
                    swizzle(Swizzle::B64, r * 128 + c * 16),
                    r * 128 + (c ^ (r & 3)) * 16
                );
                assert_eq!(
                    swizzle(Swizzle::B32, r * 128 + c * 16),
                    r * 128 + (c ^ (r & 1)) * 16
                );
            }
        }
    }
}
