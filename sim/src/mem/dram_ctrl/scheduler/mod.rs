//! DRAM command schedulers, chosen by name (`dram.scheduler`). Adding one: a file here with a
//! type implementing `Scheduler`, its name in `scheduler` and `SCHEDULERS`.
//!
//! Contract: each DRAM cycle the controller asks the scheduler about every queued request of
//! the queue it is serving (reads, or writes while draining) whose next command it could issue
//! (`Candidate`); the scheduler returns a rank (lower goes first) or `None` to hold the request
//! back. Of the requests whose command is ready this cycle, the best-ranked column command
//! (RD/WR) and the best-ranked row command (ACT/PRE) issue. A scheduler sees only the
//! candidate's facts, never the controller's state, and keeps no state of its own.

mod fcfs;
mod fr_fcfs;

pub use fcfs::Fcfs;
pub use fr_fcfs::FrFcfs;

/// Priority of a candidate: lower first, compared as a tuple (class, then age).
pub type Rank = (u8, u64);

/// The command a request needs next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// RD or WR: its row is open (a row hit).
    Column,
    /// ACT: its bank is precharged.
    Activate,
    /// PRE: another row is open in its bank.
    Precharge,
}

/// What a scheduler may know about one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Arrival order (smaller is older).
    pub seq: u64,
    /// DRAM cycles since it became eligible.
    pub waited: u64,
    pub command: Command,
    /// It is the oldest request of the served queue for its bank.
    pub oldest_in_bank: bool,
    /// Some request of the served queue hits its bank's open row.
    pub bank_has_hit: bool,
    /// The oldest starving request (`Scheduler::starving`) of its bank, if any.
    pub bank_starving: Option<u64>,
}

pub trait Scheduler: Send {
    fn name(&self) -> &'static str;
    /// The rank of issuing `c.command` now, or `None` to hold the request back.
    fn rank(&self, c: &Candidate) -> Option<Rank>;
    /// Whether a request that has waited `waited` cycles is starving (its priority overrides
    /// row locality). Never, unless the policy has a cap.
    fn starving(&self, _waited: u64) -> bool {
        false
    }
    /// The wait at which a held-back request starts starving (so the controller wakes then).
    fn starvation_cap(&self) -> Option<u64> {
        None
    }
}

/// The scheduler named `name`; `starvation_cap` in DRAM cycles for those that use one.
pub fn scheduler(name: &str, starvation_cap: u64) -> Option<Box<dyn Scheduler>> {
    match name {
        "fcfs" => Some(Box::new(Fcfs)),
        "fr-fcfs" => Some(Box::new(FrFcfs::new(starvation_cap))),
        _ => None,
    }
}

/// Names `scheduler` accepts.
pub const SCHEDULERS: &[&str] = &["fcfs", "fr-fcfs"];
