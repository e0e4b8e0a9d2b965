//! Warp schedulers behind one trait, chosen by `sm.scheduler`. A scheduler sees only its own
//! warps' readiness and ages (a read-only view), never the SM's state.

use crate::config::SchedulerKind;

/// What a scheduler may know about one of its warps this cycle.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub slot: usize,
    pub age: u64,
    pub ready: bool,
}

pub trait WarpScheduler: Send {
    /// Pick a ready warp among `cands` (in slot order), or none.
    fn pick(&mut self, cands: &[Candidate]) -> Option<usize>;
}

pub fn make(kind: SchedulerKind) -> Box<dyn WarpScheduler> {
    match kind {
        SchedulerKind::Lrr => Box::new(Lrr { last: None }),
        SchedulerKind::Gto => Box::new(Gto { last: None }),
    }
}

/// Loose round robin: the first ready warp after the one that issued last.
pub struct Lrr {
    last: Option<usize>,
}

impl WarpScheduler for Lrr {
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

/// Greedy then oldest: stay on the last warp while it is ready, else the oldest ready warp.
pub struct Gto {
    last: Option<usize>,
}

impl WarpScheduler for Gto {
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
    use super::*;

    fn c(slot: usize, age: u64, ready: bool) -> Candidate {
        Candidate { slot, age, ready }
    }

    /// LRR rotates: after warp 0 issues, warp 2 (next ready) goes, then 0 again.
    #[test]
    fn lrr_rotates() {
        let mut s = make(SchedulerKind::Lrr);
        let cands = [c(0, 0, true), c(1, 1, false), c(2, 2, true)];
        assert_eq!(s.pick(&cands), Some(0));
        assert_eq!(s.pick(&cands), Some(2));
        assert_eq!(s.pick(&cands), Some(0));
    }

    /// GTO stays greedy on warp 2 until it stalls, then takes the oldest (warp 1).
    #[test]
    fn gto_is_greedy_then_oldest() {
        let mut s = make(SchedulerKind::Gto);
        assert_eq!(s.pick(&[c(1, 5, false), c(2, 9, true)]), Some(2));
        assert_eq!(s.pick(&[c(1, 5, true), c(2, 9, true)]), Some(2));
        assert_eq!(
            s.pick(&[c(1, 5, true), c(2, 9, false), c(3, 1, true)]),
            Some(3)
        );
    }
}
