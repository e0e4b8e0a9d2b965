//! Two-level warp scheduling (Narasiman et al., "Improving GPU Performance via Large Warps
//! and Two-Level Warp Scheduling", MICRO 2011; Gebhart et al., ISCA 2011): only an active set
//! of `sm.two_level_active` warps competes for issue, round robin among them; a warp that
//! stalls on a long-latency (global/local memory) dependence leaves the active set for the
//! pending queue, and pending warps refill the active set in the order they queued — so groups
//! of warps reach their long-latency loads at different times and hide each other's latency.

use super::{Candidate, WarpScheduler};
use std::collections::VecDeque;

pub struct TwoLevel {
    capacity: usize,
    active: Vec<usize>,
    pending: VecDeque<usize>,
    last: Option<usize>,
}

impl TwoLevel {
    pub fn new(capacity: u32) -> TwoLevel {
        TwoLevel {
            capacity: capacity.max(1) as usize,
            active: Vec::new(),
            pending: VecDeque::new(),
            last: None,
        }
    }

    /// Bring the two sets up to date with this cycle's warps.
    fn update(&mut self, cands: &[Candidate]) {
        let present = |s: usize| cands.iter().find(|c| c.slot == s);
        // warps that left (finished, at a barrier) drop out; long-latency waiters are demoted
        let mut demoted = Vec::new();
        self.active.retain(|&s| match present(s) {
            Some(c) if c.long_wait => {
                demoted.push(s);
                false
            }
            Some(_) => true,
            None => false,
        });
        self.pending.retain(|&s| present(s).is_some());
        self.pending.extend(demoted);
        for c in cands {
            if !self.active.contains(&c.slot) && !self.pending.contains(&c.slot) {
                self.pending.push_back(c.slot);
            }
        }
        // refill from the pending queue with warps not waiting on memory
        let mut i = 0;
        while self.active.len() < self.capacity && i < self.pending.len() {
            let s = self.pending[i];
            if present(s).is_some_and(|c| !c.long_wait) {
                self.pending.remove(i);
                self.active.push(s);
            } else {
                i += 1;
            }
        }
    }
}

impl WarpScheduler for TwoLevel {
    fn pick(&mut self, cands: &[Candidate]) -> Option<usize> {
        self.update(cands);
        let ready = |s: usize| cands.iter().any(|c| c.slot == s && c.ready);
        let n = self.active.len();
        let start = self
            .last
            .and_then(|l| self.active.iter().position(|&s| s == l))
            .map_or(0, |p| p + 1);
        let chosen = (0..n)
            .map(|i| self.active[(start + i) % n])
            .find(|&s| ready(s))?;
        self.last = Some(chosen);
        Some(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(slot: usize, ready: bool, long_wait: bool) -> Candidate {
        Candidate {
            slot,
            age: slot as u64,
            ready,
            long_wait,
        }
    }

    /// With an active set of 2, warps 0 and 1 alternate; when 0 waits on memory, warp 2
    /// (the first pending) takes its place, and 0 queues behind 3.
    #[test]
    fn only_the_active_set_issues_and_memory_waiters_are_replaced() {
        let mut s = TwoLevel::new(2);
        let all = |w0: (bool, bool)| {
            [
                c(0, w0.0, w0.1),
                c(1, true, false),
                c(2, true, false),
                c(3, true, false),
            ]
        };
        assert_eq!(s.pick(&all((true, false))), Some(0));
        assert_eq!(s.pick(&all((true, false))), Some(1));
        assert_eq!(s.pick(&all((true, false))), Some(0));
        assert_eq!(s.active, vec![0, 1]);
        // warp 0 now waits on a global load
        assert_eq!(s.pick(&all((false, true))), Some(1));
        assert_eq!(s.active, vec![1, 2]);
        assert_eq!(s.pending, VecDeque::from(vec![3, 0]));
        assert_eq!(s.pick(&all((false, true))), Some(2));
        assert!(
            !s.active.contains(&3),
            "warp 3 waits: the active set is full"
        );
    }
}
