//! FR-FCFS (Rixner et al., ISCA 2000): row hits first, then the oldest request; a row is not
//! closed while requests still hit it. With a starvation cap: a request that has waited more
//! than `cap` DRAM cycles outranks every row hit, and its bank works for it alone (no more hits
//! to the open row), which bounds its wait (Mutlu & Moscibroda's FR-FCFS+Cap, MICRO 2007, caps
//! the bypasses by count; here the cap is an age).

use super::{Candidate, Command, Rank, Scheduler};

pub struct FrFcfs {
    cap: u64,
}

impl FrFcfs {
    pub fn new(cap: u64) -> FrFcfs {
        FrFcfs { cap }
    }
}

/// Rank classes, best first.
const STARVING: u8 = 0;
const ROW_HIT: u8 = 1;
const OTHER: u8 = 2;

impl Scheduler for FrFcfs {
    fn name(&self) -> &'static str {
        "fr-fcfs"
    }

    fn rank(&self, c: &Candidate) -> Option<Rank> {
        match c.bank_starving {
            Some(s) if s == c.seq => return Some((STARVING, c.seq)),
            Some(_) => return None,
            None => {}
        }
        match c.command {
            Command::Column => Some((ROW_HIT, c.seq)),
            // Keep the row open for the requests that still hit it.
            Command::Precharge if c.bank_has_hit => None,
            Command::Precharge | Command::Activate => Some((OTHER, c.seq)),
        }
    }

    fn starving(&self, waited: u64) -> bool {
        waited > self.cap
    }

    fn starvation_cap(&self) -> Option<u64> {
        Some(self.cap)
    }
}
