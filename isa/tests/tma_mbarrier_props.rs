//! Property tests of the two pure models behind TMA and mbarriers
//! (`semantics::tensor_map`, `semantics::mbarrier`):
//! - a tensor map survives encode → decode, and its box runs cover exactly the in-bound box
//!   elements at the addresses the element-wise definition gives;
//! - random sequences of mbarrier operations agree with a plain reference counter model
//!   (phase completes when arrivals and transactions are both in; parity flips; state/parity
//!   waits).

use gpusim_isa::semantics::mbarrier::*;
use gpusim_isa::semantics::tensor_map::{TensorMap, TmaType, TMA_MAX_RANK};
use gpusim_isa::semantics::Swizzle;
use proptest::prelude::*;

fn map_strategy() -> impl Strategy<Value = (TensorMap, Vec<i64>)> {
    (1usize..=3, any::<u64>()).prop_map(|(rank, seed)| {
        let mut r = seed;
        let mut next = |m: u64| {
            r = r
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (r >> 33) % m
        };
        let dtype = [TmaType::U8, TmaType::F16, TmaType::F32, TmaType::F64][next(4) as usize];
        let es = dtype.bytes();
        let mut m = TensorMap {
            global: 0x1000_0000,
            dtype,
            rank,
            dims: [1; TMA_MAX_RANK],
            strides: [0; TMA_MAX_RANK - 1],
            boxd: [1; TMA_MAX_RANK],
            estrides: [1; TMA_MAX_RANK],
            swizzle: Swizzle::None,
            oob_nan: false,
        };
        // inner box a multiple of 16 bytes
        m.boxd[0] = ((16 / es.min(16)) * (1 + next(4))) as u32;
        m.dims[0] = 1 + next(80);
        m.estrides[0] = if next(3) == 0 { 1 + next(3) as u32 } else { 1 };
        let mut stride = (m.dims[0] * es).div_ceil(16) * 16 + 16 * next(3);
        for i in 1..rank {
            m.dims[i] = 1 + next(12);
            m.boxd[i] = 1 + next(8) as u32;
            m.estrides[i] = 1 + next(2) as u32;
            // The driver takes any multiple of 16, 0 included (hosts pass 0 for a size-1
            // dimension).
            m.strides[i - 1] = if m.dims[i] == 1 && next(2) == 0 {
                0
            } else {
                stride
            };
            stride = stride * m.dims[i] + 16 * next(2);
        }
        let coords = (0..rank).map(|i| next(m.dims[i] + 10) as i64 - 5).collect();
        (m, coords)
    })
}

proptest! {
    #[test]
    fn tensor_maps_round_trip_and_runs_match_elements((map, coords) in map_strategy()) {
        prop_assume!(map.validate().is_ok());
        let back = TensorMap::decode(&map.encode()).unwrap();
        prop_assert_eq!(&back, &map);
        let mut by_elem = std::collections::BTreeMap::new();
        map.for_each_element(&coords, |off, a| {
            if let Some(a) = a {
                by_elem.insert(off, a);
            }
        });
        let es = map.dtype.bytes();
        let mut by_run = std::collections::BTreeMap::new();
        map.for_each_run(&coords, |off, a, n| {
            for k in 0..n / es {
                by_run.insert(off + k * es, a + k * es);
            }
        });
        prop_assert_eq!(by_elem, by_run);
        prop_assert_eq!(map.box_bytes() % es, 0);
    }

    #[test]
    fn mbarrier_updates_match_a_counter_model(
        count in 1u32..6,
        ops in proptest::collection::vec((0u8..4, 1u32..4, 0u32..200), 1..40),
    ) {
        // reference: (expected, pending, tx, phase)
        let (mut exp, mut pend, mut tx, mut phase) = (count, count, 0i64, 0u64);
        let mut word = mbar_init(count as u64).unwrap();
        for (kind, n, bytes) in ops {
            match kind {
                0 => {
                    // arrive n (with expect_tx bytes)
                    let r = mbar_arrive(word, n, bytes, false, false);
                    if n > pend {
                        prop_assert!(r.is_err());
                        continue;
                    }
                    let u = r.unwrap();
                    tx += bytes as i64;
                    pend -= n;
                    prop_assert_eq!(u.state >> 63, phase);
                    let done = pend == 0 && tx == 0;
                    prop_assert_eq!(u.completed, done);
                    if done { phase ^= 1; pend = exp; }
                    word = u.word;
                }
                1 => {
                    let u = mbar_tx(word, bytes as i64).unwrap();
                    tx += bytes as i64;
                    prop_assert!(!u.completed);
                    word = u.word;
                }
                2 => {
                    let d = (bytes as i64).min(tx.max(0));
                    let u = mbar_tx(word, -d).unwrap();
                    tx -= d;
                    let done = d > 0 && pend == 0 && tx == 0;
                    prop_assert_eq!(u.completed, done);
                    if done { phase ^= 1; pend = exp; }
                    word = u.word;
                }
                _ => {
                    // arrive_drop of one
                    let r = mbar_arrive(word, 1, 0, true, false);
                    if pend == 0 {
                        prop_assert!(r.is_err());
                        continue;
                    }
                    let u = r.unwrap();
                    pend -= 1;
                    exp -= 1;
                    let done = pend == 0 && tx == 0;
                    prop_assert_eq!(u.completed, done);
                    if done { phase ^= 1; pend = exp; }
                    word = u.word;
                    if exp == 0 { break; }
                }
            }
            let s = MbarState::decode(word);
            prop_assert_eq!((s.expected, s.pending, s.tx as i64, s.phase as u64), (exp, pend, tx, phase));
            prop_assert_eq!(mbar_parity_done(word, phase ^ 1), true);
            prop_assert_eq!(mbar_parity_done(word, phase), false);
        }
    }
}

#[test]
fn bad_counts_and_overflows_are_errors() {
    assert!(mbar_init(0).is_err());
    assert!(mbar_init(1 << 20).is_err());
    let w = mbar_init(2).unwrap();
    assert!(mbar_arrive(w, 1, 0, false, true).is_ok());
    assert!(
        mbar_arrive(w, 2, 0, false, true).is_err(),
        "noComplete must not complete"
    );
    assert!(mbar_tx(w, 1 << 21).is_err());
    assert!(TensorMap::decode(&[0u8; 128]).is_err());
}
