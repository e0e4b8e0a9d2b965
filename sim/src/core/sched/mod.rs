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
