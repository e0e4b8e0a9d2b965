//! Loose round robin: the first ready warp after the one that issued last.

use super::{Candidate, WarpScheduler};

#[derive(Default)]
pub struct Lrr {
    last: Option<usize>,
}

impl WarpScheduler for Lrr {
    /// Stalled candidates are never looked at (nor their slots: a ready warp's place in slot
    /// order is the same among the ready ones).
    fn ready_only(&self) -> bool {
        true
    }

    fn pick(&mut self, cands: &[Candidate]) -> Option<usize> {
        let start = match self.last {
            Some(l) => cands.iter().position(|c| c.slot > l).unwrap_or(0),
            None => 0,
        };
        let n = cands.len();
        let chosen = (0..n)
            .map(|i| &cands[(start + i) % n])
            .find(|c| c.ready)?
            .slot;
        self.last = Some(chosen);
        Some(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::super::c;
    use super::*;

    /// After warp 0 issues, warp 2 (the next ready one) goes, then 0 again.
    #[test]
    fn rotates_over_ready_warps() {
        let mut s = Lrr::default();
        let cands = [c(0, 0, true), c(1, 1, false), c(2, 2, true)];
        assert_eq!(s.pick(&cands), Some(0));
        assert_eq!(s.pick(&cands), Some(2));
        assert_eq!(s.pick(&cands), Some(0));
        assert_eq!(s.pick(&[c(0, 0, false)]), None);
    }
}
