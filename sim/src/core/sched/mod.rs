//! Warp schedulers behind one trait, chosen by `sm.scheduler`. A scheduler sees only its own
//! warps' readiness and ages (a read-only view), never the SM's state. Adding a policy is one
//! file here, one `SchedulerKind` variant and one arm in `make`.

mod gto;
mod lrr;
mod oldest;
mod random;
mod two_level;

use crate::config::SchedulerKind;

/// What a scheduler may know about one of its warps this cycle.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub slot: usize,
    /// Dispatch order on the SM: smaller is older.
    pub age: u64,
    /// Can issue this cycle.
    pub ready: bool,
    /// Stalled on a long-latency (global/local memory) dependence.
    pub long_wait: bool,
}

pub trait WarpScheduler: Send {
    /// Pick a ready warp among `cands` (the scheduler's active warps in slot order, ready or
    /// stalled), or none.
    fn pick(&mut self, cands: &[Candidate]) -> Option<usize>;

    /// Whether the pick depends on the ready candidates alone: a policy that says so may be
    /// handed only those of the stalled warps that can wake by themselves (the SM parks the
    /// rest: `sm::parked`). False unless a policy states it.
    fn ready_only(&self) -> bool {
        false
    }
}

/// The pick of `sched` among `cands`, checked: a policy may only return one of its ready
/// candidates (issuing a warp whose registers or unit are not ready would break the
/// scoreboard, and the not-selected count would lose its meaning). Any other answer is a bug
/// in the policy: debug builds stop on it, release builds issue the first ready candidate in
/// slot order instead.
pub fn checked_pick(sched: &mut dyn WarpScheduler, cands: &[Candidate]) -> Option<usize> {
    let slot = sched.pick(cands)?;
    if cands.iter().any(|c| c.slot == slot && c.ready) {
        return Some(slot);
    }
    debug_assert!(
        false,
        "warp scheduler error: it picked warp slot {slot}, which is not one of its ready candidates {cands:?}"
    );
    cands.iter().find(|c| c.ready).map(|c| c.slot)
}

/// Ready candidates that did not issue this cycle, when one of them did (never negative).
pub fn not_selected(cands: &[Candidate]) -> u64 {
    (cands.iter().filter(|c| c.ready).count() as u64).saturating_sub(1)
}

/// The scheduler `kind` for scheduler `index` of SM `sm`; `seed` feeds the random policy,
/// `active` is the two-level policy's active-set size.
pub fn make(
    kind: SchedulerKind,
    seed: u64,
    active: u32,
    sm: u32,
    index: u32,
) -> Box<dyn WarpScheduler> {
    match kind {
        SchedulerKind::TwoLevel => Box::new(two_level::TwoLevel::new(active)),
        SchedulerKind::Lrr => Box::new(lrr::Lrr::default()),
        SchedulerKind::Gto => Box::new(gto::Gto::default()),
        SchedulerKind::Oldest => Box::new(oldest::Oldest),
        SchedulerKind::Random => Box::new(random::Random::new(seed, sm, index)),
    }
}

#[cfg(test)]
pub(crate) fn c(slot: usize, age: u64, ready: bool) -> Candidate {
    Candidate {
        slot,
        age,
        ready,
        long_wait: false,
    }
}

#[cfg(test)]
mod checks {
    use super::*;

    /// A policy that ignores readiness: it always returns the first candidate.
    struct First;

    impl WarpScheduler for First {
        fn pick(&mut self, cands: &[Candidate]) -> Option<usize> {
            cands.first().map(|c| c.slot)
        }
    }

    /// A policy that names a warp it was not offered.
    struct Stranger;

    impl WarpScheduler for Stranger {
        fn pick(&mut self, _: &[Candidate]) -> Option<usize> {
            Some(99)
        }
    }

    #[test]
    fn a_ready_pick_is_kept_and_counts_the_others_as_not_selected() {
        let cands = [c(0, 0, true), c(4, 1, true), c(8, 2, false)];
        assert_eq!(checked_pick(&mut First, &cands), Some(0));
        assert_eq!(not_selected(&cands), 1);
    }

    /// Issue 11 item 5: a stalled pick made `count() - 1` of the ready candidates wrap.
    #[test]
    fn the_not_selected_count_never_underflows() {
        assert_eq!(not_selected(&[]), 0);
        assert_eq!(not_selected(&[c(0, 0, false), c(4, 1, false)]), 0);
    }

    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "warp scheduler error: it picked warp slot 0")]
    fn a_stalled_pick_stops_a_debug_build() {
        checked_pick(&mut First, &[c(0, 0, false), c(4, 1, true)]);
    }

    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "warp scheduler error: it picked warp slot 99")]
    fn a_pick_outside_the_candidates_stops_a_debug_build() {
        checked_pick(&mut Stranger, &[c(0, 0, true)]);
    }

    #[cfg(not(debug_assertions))]
    #[test]
    fn a_wrong_pick_falls_back_to_a_ready_warp_in_release_builds() {
        let cands = [c(0, 0, false), c(4, 1, true), c(8, 2, true)];
        assert_eq!(checked_pick(&mut First, &cands), Some(4));
        assert_eq!(checked_pick(&mut Stranger, &cands), Some(4));
        assert_eq!(checked_pick(&mut First, &[c(0, 0, false)]), None);
    }
}
