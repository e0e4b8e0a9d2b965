//! A DRAM channel controller as a timing model: per-bank state under the JEDEC timing
//! constraints, bounded read and write queues, a scheduler chosen by name, write draining,
//! bus turnaround, all-bank refresh, an open or closed row policy — in its own clock domain.
//! The shape follows Ramulator 2 (a controller with named scheduler, refresh and row-policy
//! parts); the numbers come from the config (`dram.*`, each with its source there).
//!
//! **Timing only.** The memory system owns the data (`mem::GlobalMemory`) and reads or writes
//! it itself; a channel only says when each request's data transfer ends (`DramDone::at`).
//!
//! Clock domain (`clock`): the controller acts on DRAM command-clock edges (`dram.clock_mhz`);
//! every `dram.t_*` is in those cycles. Edge k is acted on in core cycle ⌈k × core / dram⌉
//! (`clock_mhz` is the core clock); a request pushed at core cycle t is taken at the first edge
//! after t, ⌊t × dram / core⌋ + 1 (so it does not matter whether the caller pushes before or
//! after ticking that cycle); completions are reported in core cycles. Integer arithmetic
//! only.
//!
//! Per DRAM cycle (`channel`):
//! 1. Write drain (`dram.write_drain_high`, `write_drain_low`): the controller serves either
//!    the read queue or the write queue. It starts draining writes when the write queue holds
//!    `high` entries, when no read is queued, or when the oldest write has waited more than
//!    `dram.starvation_cap` cycles, and returns to reads once the write queue is down to `low`
//!    with reads waiting and no write starving (or empty). Writes complete when their data
//!    burst ends, not when they are queued.
//! 2. Refresh (`refresh`): when one is due, nothing else issues; open banks are precharged,
//!    then REF blocks every bank for `t_rfc`.
//! 3. Otherwise each queued request of the served queue needs one command: RD/WR if its row
//!    is open (a hit), ACT if its bank is precharged, PRE if another row is open. The
//!    scheduler (`scheduler`: `fcfs`, `fr-fcfs` with a starvation cap) ranks the requests; of
//!    those whose command meets every constraint now (`bank`, `act_window`, `data_bus`,
//!    `timing`), the best column command and the best row command issue (HBM's separate row
//!    and column command buses; both only if they are for different banks).
//! 4. A column command puts the request's data on the bus `t_cl` (`t_cwl`) later for
//!    ⌈bytes / (`bus_bytes` × `data_rate`)⌉ cycles; the request leaves its queue then, and is
//!    complete when the burst ends. Under the closed policy it auto-precharges.
//!
//! Invariants: bursts never overlap and end in issue order; a request's completion is reported
//! once, by the `tick` whose core cycle reaches it, in completion order with ties by id; equal
//! inputs give equal outputs (no hashing, no randomness, no wall clock); queues and buffers are
//! allocated once (`new`) and never grow; idle time is skipped event to event (`next_wake`).
//!
//! Simplifications: no bank groups (one `t_ccd`, `t_rrd`, `t_wtr`: the different-group values,
//! the address map spreading consecutive pages over banks); one rank; the same `t_rcd` for
//! reads and writes; all-bank refresh only; one command per command bus per cycle.

mod act_window;
mod address;
mod bank;
mod channel;
mod clock;
mod data_bus;
mod queue;
mod refresh;
pub mod row_policy;
pub mod scheduler;
mod stats;
mod timing;

#[cfg(test)]
mod tests;

pub use address::{locate, AddressMap};
pub use channel::DramChannel;
pub use clock::Clocks;
pub use refresh::REFRESH_POLICIES;
pub use row_policy::ROW_POLICIES;
pub use scheduler::SCHEDULERS;
pub use stats::{DramChannelStats, LatencyHistogram, LATENCY_BUCKETS};
pub use timing::Timing;

use crate::config::Config;

/// A read or write of `bytes` at global address `addr`; `id` is the caller's, echoed back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramRequest {
    pub id: u64,
    pub addr: u64,
    pub bytes: u32,
    pub write: bool,
}

/// A request whose data transfer ended at core cycle `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramDone {
    pub id: u64,
    pub at: u64,
}

/// Unloaded read of one L2 sector (`l2.sector_bytes`, the smallest fill) from a precharged
/// bank in core cycles, rounded up: the DRAM edge that takes the request (the first after its
/// arrival), ACT, `t_rcd`, RD, `t_cl`, the burst. A request pushed at core cycle 0 (or any
/// cycle on which a DRAM edge falls) completes exactly this much later; at other phases of the
/// two clocks, within ⌈core / dram⌉ cycles of it.
pub fn unloaded_read_cycles(cfg: &Config) -> u64 {
    unloaded_read_cycles_for(cfg, cfg.l2.sector_bytes)
}

/// `unloaded_read_cycles` for a read of `bytes`.
pub fn unloaded_read_cycles_for(cfg: &Config, bytes: u32) -> u64 {
    let t = Timing::from_config(&cfg.dram);
    cfg.dram_clocks().to_core(1 + t.unloaded_read(bytes))
}
