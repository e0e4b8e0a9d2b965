//! Oldest first: always the ready warp that was dispatched earliest (no greediness).

use super::{Candidate, WarpScheduler};

pub struct Oldest;

impl WarpScheduler for Oldest {
    /// Stalled candidates are never looked at (nor their slots: a ready warp's place in slot
    /// order is the same among the ready ones).
    fn ready_only(&self) -> bool {
        true
    }

    fn pick(&mut self, cands: &[Candidate]) -> Option<usize> {
        Some(
            cands
                .iter()
                .filter(|c| c.ready)
                .min_by_key(|c| (c.age, c.slot))?
                .slot,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::c;
    use super::*;

    /// Unlike GTO it leaves warp 2 as soon as an older warp (1) is ready.
    #[test]
    fn picks_the_oldest_ready_warp() {
        let mut s = Oldest;
        assert_eq!(s.pick(&[c(1, 5, false), c(2, 9, true)]), Some(2));
        assert_eq!(s.pick(&[c(1, 5, true), c(2, 9, true)]), Some(1));
    }
}
