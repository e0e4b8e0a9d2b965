//! A sub-partition (processing block) of an SM: one warp scheduler and its functional units.
//! A unit accepts a warp instruction when it is free and then stays busy for the unit kind's
//! issue interval; results are timed separately by the scoreboard.

use super::program::Unit;
use super::sched::{self, WarpScheduler};
use crate::config::Config;

pub struct SubPartition {
    pub sched: Box<dyn WarpScheduler>,
    /// Per unit kind, per unit: the cycle from which it accepts the next instruction.
    busy_until: [Vec<u64>; Unit::ALL.len()],
    /// Per unit kind: cycles one instruction keeps a unit busy.
    interval: [u32; Unit::ALL.len()],
}

impl SubPartition {
    pub fn new(cfg: &Config, sm: u32, index: u32) -> SubPartition {
        let shape = Unit::ALL.map(|u| u.shape(&cfg.sm.units));
        SubPartition {
            sched: sched::make(
                cfg.sm.scheduler,
                cfg.sm.scheduler_seed,
                cfg.sm.two_level_active,
                sm,
                index,
            ),
            busy_until: shape.map(|(count, _)| vec![0; count as usize]),
            interval: shape.map(|(_, ii)| ii),
        }
    }

    /// A unit of kind `u` free at `cycle`, if any.
    #[inline]
    pub fn free_unit(&self, u: Unit, cycle: u64) -> Option<usize> {
        self.busy_until[u as usize].iter().position(|&t| t <= cycle)
    }

    /// The earliest cycle at which a unit of kind `u` is free.
    pub fn earliest_free(&self, u: Unit) -> u64 {
        self.busy_until[u as usize]
            .iter()
            .copied()
            .min()
            .unwrap_or(0)
    }

    /// Occupy unit `idx` of kind `u` from `cycle`; returns the busy cycles.
    #[inline]
    pub fn occupy(&mut self, u: Unit, idx: usize, cycle: u64) -> u64 {
        let ii = self.interval[u as usize] as u64;
        self.busy_until[u as usize][idx] = cycle + ii;
        ii
    }

    /// Keep unit `idx` of kind `u`, occupied at `cycle`, busy for `passes` issue intervals in
    /// all (a replayed memory access); returns the busy cycles added.
    pub fn hold(&mut self, u: Unit, idx: usize, cycle: u64, passes: u32) -> u64 {
        let ii = self.interval[u as usize] as u64;
        let until = cycle + ii * passes as u64;
        let added = until.saturating_sub(self.busy_until[u as usize][idx]);
        self.busy_until[u as usize][idx] = until.max(self.busy_until[u as usize][idx]);
        added
    }
}

impl SubPartition {
    /// Keep unit `idx` of kind `u`, occupied at `cycle`, busy until `cycle + cycles` at least
    /// (a `wgmma` slice); returns the busy cycles added.
    pub fn hold_cycles(&mut self, u: Unit, idx: usize, cycle: u64, cycles: u64) -> u64 {
        let until = cycle + cycles;
        let t = &mut self.busy_until[u as usize][idx];
        let added = until.saturating_sub(*t);
        *t = until.max(*t);
        added
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With one fp32 unit of issue interval 2 (tiny.yaml), a second instruction can go two
    /// cycles after the first, not one.
    #[test]
    fn a_unit_is_busy_for_its_issue_interval() {
        let cfg = Config::tiny();
        let mut p = SubPartition::new(&cfg, 0, 0);
        let i = p.free_unit(Unit::Fp32, 10).unwrap();
        assert_eq!(p.occupy(Unit::Fp32, i, 10), 2);
        assert_eq!(p.free_unit(Unit::Fp32, 11), None);
        assert_eq!(p.earliest_free(Unit::Fp32), 12);
        assert!(p.free_unit(Unit::Fp32, 12).is_some());
        assert!(
            p.free_unit(Unit::Int, 11).is_some(),
            "other unit kinds are independent"
        );
    }

    /// A replayed access (3 passes) keeps the ldst unit (interval 2) busy for 6 cycles.
    #[test]
    fn a_replayed_access_holds_the_unit() {
        let cfg = Config::tiny();
        let mut p = SubPartition::new(&cfg, 0, 0);
        let i = p.free_unit(Unit::LdSt, 10).unwrap();
        assert_eq!(p.occupy(Unit::LdSt, i, 10), 2);
        assert_eq!(p.hold(Unit::LdSt, i, 10, 3), 4);
        assert_eq!(p.earliest_free(Unit::LdSt), 16);
    }
}
