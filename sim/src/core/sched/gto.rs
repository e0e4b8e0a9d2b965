//! Greedy then oldest (Rogers et al., MICRO 2012): stay on the last warp while it is ready,
//! else take the oldest ready warp.

use super::{Candidate, WarpScheduler};

#[derive(Default)]
pub struct Gto {
    last: Option<usize>,
}

impl WarpScheduler for Gto {
    /// Stalled candidates are never looked at (nor their slots: a ready warp's place in slot
    /// order is the same among the ready ones).
    fn ready_only(&self) -> bool {
        true
    }

    fn pick(&mut self, cands: &[Candidate]) -> Option<usize> {
        if let Some(l) = self.last {
            if cands.iter().any(|c| c.slot == l && c.ready) {
                return Some(l);
            }
        }
        let chosen = cands
            .iter()
            .filter(|c| c.ready)
            .min_by_key(|c| (c.age, c.slot))?
            .slot;
        self.last = Some(chosen);
        Some(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::super::c;
    use super::*;

    /// Greedy on warp 2 until it stalls, then the oldest ready warp (3, age 1).
    #[test]
    fn is_greedy_then_oldest() {
        let mut s = Gto::default();
        assert_eq!(s.pick(&[c(1, 5, false), c(2, 9, true)]), Some(2));
        assert_eq!(s.pick(&[c(1, 5, true), c(2, 9, true)]), Some(2));
        assert_eq!(
            s.pick(&[c(1, 5, true), c(2, 9, false), c(3, 1, true)]),
            Some(3)
        );
    }
}
