//! Parked warps: resident warps whose stall cannot end before a known cycle — or, for those
//! waiting on a completion whose time is not known yet, before an event reaches them — so
//! the step need not look at them until then. A memory-bound SM holds dozens of warps waiting
//! on loads (vecadd 1M on V100: 89 % of all warp-cycles are long-scoreboard waits), a GEMM's
//! consumers wait on the tensor unit or at a named barrier, and `Sm::step` would read every
//! one's state in every cycle to find the same answer. A parked warp is skipped by the step
//! until its `until` cycle, and its stall is charged per partition in one addition (stall
//! accounting by intervals); whatever may change a parked warp unparks it first
//! (`Sm::unpark`), after which the step classifies it again.
//!
//! Why a stall found by `sm::stages::classify` at `cycle` holds until its wake-up `until`
//! unless the warp changes: the instruction buffer refills at `fetch_ready` and registers
//! become ready at `next_ready`, neither earlier except by an event (a completion, a barrier
//! or cluster release, an mbarrier phase, each of which unparks); a unit's free cycle only
//! moves later (`SubPartition::occupy` takes free units only). Finished warps and warps at a
//! barrier wait for an event (`until` is never).
//!
//! Only warps a policy never considers are parked: none while a scheduler that looks at
//! stalled candidates (`WarpScheduler::ready_only` false, e.g. two-level's long-wait
//! demotion) runs.

use crate::bits::BitSet;
use crate::stats::lines::{Line, ParkedLines};
use crate::stats::{SmStats, Stall};

/// Which warp slots of an SM are parked, until when and in which stall, and how many in each
/// stall per sub-partition (a slot's partition is `slot % partitions`).
pub(super) struct Parked {
    /// Whether this SM parks at all (every scheduler picks among ready warps only).
    enabled: bool,
    bits: BitSet,
    /// Per slot: the stall it is parked in, and the cycle it is classified again (never:
    /// `u64::MAX`, until an event unparks it).
    stall: Vec<Stall>,
    until: Vec<u64>,
    /// Parked warps per partition and stall.
    counts: Vec<[u64; Stall::ALL.len()]>,
    /// Per partition, bit `stall` set while its count is not zero (`charge` visits those).
    kinds: Vec<u16>,
    n_parts: usize,
    /// The per-instruction source view's share of the parked stalls, when collected.
    pub lines: Option<ParkedLines>,
}

impl Parked {
    pub fn new(slots: usize, n_parts: usize, enabled: bool) -> Parked {
        Parked {
            enabled,
            bits: BitSet::new(slots),
            stall: vec![Stall::Issued; slots],
            until: vec![0; slots],
            counts: vec![[0; Stall::ALL.len()]; n_parts.max(1)],
            kinds: vec![0; n_parts.max(1)],
            n_parts: n_parts.max(1),
            lines: None,
        }
    }

    #[inline]
    pub fn is_parked(&self, slot: usize) -> bool {
        self.bits.contains(slot)
    }

    /// The cycle parked warp `slot` is classified again.
    #[inline]
    pub fn until(&self, slot: usize) -> u64 {
        self.until[slot]
    }

    /// Park warp `slot`, found in `stall` until `wake` (None: until an event) waiting to
    /// issue `line`, if this SM parks; returns whether it did.
    #[inline]
    pub fn park(&mut self, slot: usize, stall: Stall, wake: Option<u64>, line: Line) -> bool {
        if !self.enabled {
            return false;
        }
        debug_assert!(!self.is_parked(slot));
        self.bits.set(slot);
        self.stall[slot] = stall;
        self.until[slot] = wake.unwrap_or(u64::MAX);
        let part = slot % self.n_parts;
        if let Some(l) = &mut self.lines {
            l.park(slot, part, line);
        }
        self.counts[part][stall as usize] += 1;
        self.kinds[part] |= 1 << stall as u16;
        true
    }

    /// Warp `slot` may change (or its wake-up came): the next step classifies it again.
    #[inline(always)]
    pub fn unpark(&mut self, slot: usize) {
        if self.is_parked(slot) {
            self.bits.clear(slot);
            let (part, k) = (slot % self.n_parts, self.stall[slot] as usize);
            if let Some(l) = &mut self.lines {
                l.settle(slot, part, self.stall[slot]);
            }
            self.counts[part][k] -= 1;
            if self.counts[part][k] == 0 {
                self.kinds[part] &= !(1 << k);
            }
        }
    }

    /// Any warp may change (an event whose reach is not worth working out: rare ones).
    pub fn unpark_all(&mut self) {
        if self.bits.is_empty() {
            return;
        }
        self.settle_lines();
        self.bits.clear_all();
        self.counts
            .iter_mut()
            .for_each(|c| *c = [0; Stall::ALL.len()]);
        self.kinds.iter_mut().for_each(|k| *k = 0);
    }

    /// Settle every parked warp's share of the source view so far (they stay parked).
    pub fn settle_lines(&mut self) {
        let Some(l) = &mut self.lines else { return };
        let mut at = self.bits.next(0);
        while let Some(slot) = at {
            l.settle(slot, slot % self.n_parts, self.stall[slot]);
            at = self.bits.next(slot + 1);
        }
    }

    /// Charge partition `part`'s parked warps `n` cycles of their stalls.
    #[inline(always)]
    pub fn charge(&mut self, part: usize, n: u64, stats: &mut SmStats) {
        if let Some(l) = &mut self.lines {
            l.charge(part, n);
        }
        let mut kinds = self.kinds[part];
        while kinds != 0 {
            let k = kinds.trailing_zeros() as usize;
            kinds &= kinds - 1;
            stats.stall(Stall::ALL[k], self.counts[part][k] * n);
        }
    }

    /// The parked slots with their stall and wake-up, for the debug check that each is
    /// still in its stall.
    pub fn slots(&self) -> impl Iterator<Item = (usize, Stall, u64)> + '_ {
        std::iter::successors(self.bits.next(0), |&s| self.bits.next(s + 1))
            .map(|s| (s, self.stall[s], self.until[s]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parked_warps_are_charged_per_partition_until_unparked() {
        let mut p = Parked::new(8, 2, true);
        assert!(p.park(0, Stall::ScoreboardLong, None, None));
        assert!(p.park(2, Stall::ScoreboardLong, Some(40), None));
        assert!(p.park(3, Stall::Finished, None, None));
        assert!(p.is_parked(2) && !p.is_parked(1));
        assert_eq!((p.until(0), p.until(2)), (u64::MAX, 40));
        let mut s = SmStats::default();
        p.charge(0, 5, &mut s);
        p.charge(1, 5, &mut s);
        assert_eq!(s.stalls[Stall::ScoreboardLong as usize], 10);
        assert_eq!(s.stalls[Stall::Finished as usize], 5);
        p.unpark(2);
        p.unpark(2);
        let mut s = SmStats::default();
        p.charge(0, 1, &mut s);
        assert_eq!(s.stalls[Stall::ScoreboardLong as usize], 1);
        p.unpark_all();
        assert_eq!(p.slots().count(), 0);
    }

    #[test]
    fn a_disabled_set_parks_nothing() {
        let mut p = Parked::new(4, 1, false);
        assert!(!p.park(1, Stall::Barrier, None, None));
        assert!(!p.is_parked(1));
    }
}
