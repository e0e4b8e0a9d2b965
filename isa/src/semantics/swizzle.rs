//! Shared-memory swizzle modes of Hopper tensor operations (PTX ISA 9.0 §9.7.15.5.1.2
//! "Shared Memory Matrix Layout", swizzling modes; the same patterns TMA writes with).
//!
//! A swizzle permutes the 16-byte chunks inside each row of a repeating pattern (1024 bytes
//! for 128B, 512 for 64B, 256 for 32B): the chunk index bits `[4, 4+b)` of the shared address
//! are XORed with its row bits `[7, 7+b)`, with b = 3, 2, 1 for the 128B, 64B and 32B modes
//! (cute's `Swizzle<3,4,3>`, `Swizzle<2,4,3>`, `Swizzle<1,4,3>`). The address is the CTA's
//! shared-window address (`.shared::cta`, from 0), so a pattern repeats on the 1024-, 512- or
//! 256-byte boundaries of that window: TMA and `wgmma` both place bytes this way, which is
//! why a tile TMA wrote anywhere (128-byte aligned) is read back by a descriptor that starts
//! at the tile, with base offset 0. A `wgmma` descriptor's base offset j (§9.7.15.5.1.2.2:
//! `(pattern start >> 7) & 7` for a pattern that does not start on a repeat boundary) moves
//! the row phase back by j rows (`swizzle_based`).

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

/// The swizzled address of shared address `addr` (or of an offset from a base aligned to
/// `mode.period()`): bits `[4, 4+b)` XOR bits `[7, 7+b)`. An involution, so it is its own
/// inverse.
pub fn swizzle(mode: Swizzle, addr: u64) -> u64 {
    swizzle_based(mode, addr, 0)
}

/// The swizzled address of `addr` in a pattern whose row 0 lies `base_offset` rows (of 128
/// bytes) past a repeat boundary: chunk bits `[4, 4+b)` XOR the pattern row
/// `((addr >> 7) - base_offset) mod 2^b`. This is how a `wgmma` matrix descriptor's base
/// offset acts (PTX ISA 9.0 §9.7.15.5.1.2.2: 0 when the pattern starts on a 1024-, 512- or
/// 256-byte boundary, else `(pattern start >> 7) & 7`); it is ignored without swizzling.
pub fn swizzle_based(mode: Swizzle, addr: u64, base_offset: u64) -> u64 {
    let b = mode.bits();
    if b == 0 {
        return addr;
    }
    let row_mask = (1u64 << b) - 1;
    let row = (addr >> 7).wrapping_sub(base_offset) & row_mask;
    addr ^ (row << 4)
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
    fn base_offset_anchors_the_pattern_rows_later() {
        // A pattern starting j rows past a 1024-byte boundary, with base offset j, is the
        // canonical pattern counted from its start; base offset 0 is the address rule.
        for m in ALL {
            for j in 0..8u64 {
                let start = 3 * 1024 + 128 * j;
                for off in 0..2048u64 {
                    let got = swizzle_based(m, start + off, j);
                    assert_eq!(got, start + swizzle(m, off), "{m:?} j={j} off={off}");
                }
                assert_eq!(swizzle_based(m, start + 48, 0), swizzle(m, start + 48));
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
