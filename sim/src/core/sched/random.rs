//! Random: a uniformly chosen ready warp, from a generator seeded by `sm.scheduler_seed`, the
//! SM and the scheduler index — so litmus tests explore other interleavings, reproducibly.

use super::{Candidate, WarpScheduler};

pub struct Random {
    state: u64,
}

impl Random {
    pub fn new(seed: u64, sm: u32, index: u32) -> Random {
        let mut r = Random {
            state: seed ^ ((sm as u64) << 32 | index as u64) ^ 0x9E37_79B9_7F4A_7C15,
        };
        r.next();
        r
    }

    /// SplitMix64.
    fn next(&mut self) -> u64 {
        crate::rng::splitmix64(&mut self.state)
    }
}

impl WarpScheduler for Random {
    /// Stalled candidates are never looked at (nor their slots: a ready warp's place in slot
    /// order is the same among the ready ones).
    fn ready_only(&self) -> bool {
        true
    }

    fn pick(&mut self, cands: &[Candidate]) -> Option<usize> {
        let n = cands.iter().filter(|c| c.ready).count();
        if n == 0 {
            return None;
        }
        let k = (self.next() % n as u64) as usize;
        cands.iter().filter(|c| c.ready).nth(k).map(|c| c.slot)
    }
}

#[cfg(test)]
mod tests {
    use super::super::c;
    use super::*;

    #[test]
    fn same_seed_same_choices_and_every_ready_warp_is_chosen() {
        let cands = [c(0, 0, true), c(1, 1, false), c(2, 2, true), c(3, 3, true)];
        let picks = |seed| {
            let mut s = Random::new(seed, 0, 0);
            (0..64).map(|_| s.pick(&cands).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(picks(7), picks(7));
        assert_ne!(picks(7), picks(8));
        let p = picks(7);
        assert!(!p.contains(&1), "never a stalled warp");
        for w in [0, 2, 3] {
            assert!(p.contains(&w), "warp {w} is chosen at some point");
        }
    }
}
