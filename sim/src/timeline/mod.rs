//! The timeline (`gpusim run --timeline FILE.json`): what each warp slot of each SM was doing
//! over time, CTA lifetimes, barrier releases, fences and faults, and GPU-wide counters, in
//! the Chrome trace-event format that Perfetto UI and chrome://tracing open.
//!
//! Each SM records its own intervals (`SmTimeline`, owned by the SM, so the SM phase stays
//! free of shared state); the launch loop drains every SM's records in SM order after each
//! cycle and samples the counters, handing both to a `TimelineSink` (`TimelineWriter` streams
//! them to the file, so memory stays bounded however long the run). Recording never changes
//! a result.

mod file;
mod sm;

pub use file::{TimelineError, TimelineOptions, TimelineWriter};
pub use sm::SmTimeline;

use crate::stats::Stall;

/// Where a record is drawn: a warp slot's track or a CTA slot's track of one SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Track {
    Warp(u32),
    Cta(u32),
}

/// One thing an SM recorded, in cycles of its launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// Warp slot `slot` was in `state` over `[start, end)`.
    State {
        slot: u32,
        state: Stall,
        start: u64,
        end: u64,
    },
    /// CTA `ctaid` held CTA slot `cslot` over `[start, end)`.
    Cta {
        cslot: u32,
        ctaid: [u32; 3],
        start: u64,
        end: u64,
    },
    /// A memory request of warp slot `slot` (an operation of its instruction `name`) was in
    /// flight over `[start, end)`: from the instruction's issue to the operation's
    /// completion reaching the SM. `id` tells it from the SM's other requests in flight.
    Request {
        slot: u32,
        id: u64,
        name: String,
        start: u64,
        end: u64,
    },
    /// Something that happened at a cycle: a barrier released, a fence issued.
    Instant {
        track: Track,
        name: String,
        cycle: u64,
    },
}

/// What a launch looks like to the timeline, for its metadata.
#[derive(Clone, Debug)]
pub struct LaunchShape {
    pub kernel: String,
    pub sms: u32,
    pub warp_slots: u32,
    pub cta_slots: u32,
    pub sub_partitions: u32,
    /// The core clock cycles are shown at (MHz).
    pub clock_mhz: f64,
}

/// GPU-wide counters over one sampling interval, ending at `cycle`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CounterSample {
    pub cycle: u64,
    pub ipc: f64,
    pub active_warps: u64,
    /// `None` when the interval had no lookup at that level.
    pub l1_hit_rate: Option<f64>,
    pub l2_hit_rate: Option<f64>,
    /// Bytes per cycle over the interval.
    pub interconnect_bytes_per_cycle: f64,
    pub dram_bytes_per_cycle: f64,
    pub clock_mhz: f64,
    /// The power model's average over its last closed control interval (configs with a
    /// `power` section).
    pub power_watts: Option<f64>,
}

/// A consumer of timeline records (`TimelineWriter`; tests keep them in memory).
pub trait TimelineSink {
    /// Whether SM `sm` is recorded (`--timeline-sms`).
    fn records_sm(&self, sm: u32) -> bool;
    /// Whether memory requests are recorded (`--timeline-memory`).
    fn records_memory(&self) -> bool {
        false
    }
    /// Cycles between counter samples.
    fn counter_interval(&self) -> u64;
    fn launch_begin(&mut self, shape: &LaunchShape);
    fn record(&mut self, sm: u32, r: Record);
    fn counters(&mut self, c: &CounterSample);
    /// A fault stopped the launch at `cycle`.
    fn fault(&mut self, cycle: u64, what: &str);
    /// The launch ended after `cycles` cycles.
    fn launch_end(&mut self, cycles: u64);
}
