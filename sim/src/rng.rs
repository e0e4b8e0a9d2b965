//! SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): the one small generator behind every seeded
//! choice — random inits, the `random` scheduler, the shuffled step order, `check`'s knobs, the
//! fuzzer, `gemm`'s inputs. Its whole state is one `u64`, so a seed reproduces a run anywhere.

/// Advance `state` and return the next value.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    /// The reference sequence for seed 0 (Vigna's splitmix64.c).
    #[test]
    fn matches_the_reference_sequence() {
        let mut s = 0;
        assert_eq!(super::splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(super::splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
    }
}
