//! FCFS: requests are served in arrival order within each bank (the oldest request of a bank
//! is the only one the bank works for), oldest first across banks; row hits get no priority.
//! Banks still overlap their activations and precharges, as GPGPU-Sim's FIFO scheduler lets
//! them.

use super::{Candidate, Rank, Scheduler};

pub struct Fcfs;

impl Scheduler for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
    }

    fn rank(&self, c: &Candidate) -> Option<Rank> {
        c.oldest_in_bank.then_some((0, c.seq))
    }
}
