//! The component memory system's report (`memory_engine: components`): queue occupancy,
//! backpressure, and the DRAM controllers' commands, row outcomes, refresh and turnaround —
//! the `memory_system` object of `--stats-json` (docs/stats.md).

use crate::mem::system::{MemSystemStats, QueueStats};
use serde::Serialize;

/// One kind of queue: mean length of one instance over the launch, and the longest any was.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct QueueReport {
    pub mean: f64,
    pub max: u64,
}

impl QueueReport {
    fn of(q: &QueueStats, cycles: u64) -> QueueReport {
        QueueReport {
            mean: q.mean(cycles),
            max: q.max,
        }
    }
}

/// Cycles a producer was held by a full queue, per producer kind.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct BackpressureReport {
    /// An L1 whose next request found its link to the slices full.
    pub l1: u64,
    /// A crossbar link whose next packet found its slice's request queue full.
    pub sm_link: u64,
    /// A slice whose next reply or DRAM request found its link full.
    pub slice: u64,
    /// A DRAM link whose next request found its channel's queue full.
    pub dram_link: u64,
}

/// Every DRAM channel summed: commands, row outcomes, time lost to refresh and bus
/// turnaround (DRAM cycles), data-bus utilisation and the reads' latency.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct DramReport {
    pub act: u64,
    pub pre: u64,
    pub rd: u64,
    pub wr: u64,
    pub refresh: u64,
    pub row_hits: u64,
    pub row_misses: u64,
    pub row_conflicts: u64,
    pub refresh_cycles: u64,
    pub turnaround_cycles: u64,
    pub write_drains: u64,
    /// Busy data-bus cycles over elapsed DRAM cycles, all channels together.
    pub bus_utilisation: f64,
    /// Mean read latency, arrival at the controller to the end of its data (core cycles).
    pub read_latency_mean: f64,
    /// Mean read and write queue lengths of one channel.
    pub read_queue_mean: f64,
    pub write_queue_mean: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct MemorySystemReport {
    pub l1_request_queue: QueueReport,
    /// Each SM's TMA engine queue (line requests not issued yet).
    pub tma_queue: QueueReport,
    pub sm_links: QueueReport,
    pub slice_queue: QueueReport,
    pub slice_links: QueueReport,
    pub dram_links: QueueReport,
    /// Operations blocked at a component, waiting for another (a fill, an MSHR, a way).
    pub blocked: QueueReport,
    pub backpressure_cycles: BackpressureReport,
    pub dram: DramReport,
}

impl MemorySystemReport {
    pub fn new(s: &MemSystemStats) -> MemorySystemReport {
        let c = s.cycles;
        let mut d = DramReport::default();
        let (mut busy, mut elapsed, mut lat_sum, mut lat_n) = (0u64, 0u64, 0u64, 0u64);
        let (mut rq, mut wq) = (0u64, 0u64);
        for ch in &s.channels {
            d.act += ch.act;
            d.pre += ch.pre;
            d.rd += ch.rd;
            d.wr += ch.wr;
            d.refresh += ch.refresh;
            d.row_hits += ch.row_hits;
            d.row_misses += ch.row_misses;
            d.row_conflicts += ch.row_conflicts;
            d.refresh_cycles += ch.refresh_cycles;
            d.turnaround_cycles += ch.turnaround_cycles;
            d.write_drains += ch.write_drains;
            busy += ch.busy_cycles;
            elapsed += ch.cycles;
            lat_sum += ch.read_latency.sum;
            lat_n += ch.read_latency.count;
            rq += ch.read_queue_sum;
            wq += ch.write_queue_sum;
        }
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        d.bus_utilisation = ratio(busy, elapsed);
        d.read_latency_mean = ratio(lat_sum, lat_n);
        d.read_queue_mean = ratio(rq, elapsed);
        d.write_queue_mean = ratio(wq, elapsed);
        MemorySystemReport {
            l1_request_queue: QueueReport::of(&s.l1_queue, c),
            tma_queue: QueueReport::of(&s.tma_queue, c),
            sm_links: QueueReport::of(&s.sm_links, c),
            slice_queue: QueueReport::of(&s.slice_queue, c),
            slice_links: QueueReport::of(&s.slice_links, c),
            dram_links: QueueReport::of(&s.dram_links, c),
            blocked: QueueReport::of(&s.blocked, c),
            backpressure_cycles: BackpressureReport {
                l1: s.l1_held_cycles,
                sm_link: s.sm_link_held_cycles,
                slice: s.slice_held_cycles,
                dram_link: s.dram_link_held_cycles,
            },
            dram: d,
        }
    }
}
