//! What the component memory system measured: queue occupancy per queue kind, cycles a
//! producer was held by a full queue, bytes per slice and channel, and each DRAM channel's
//! own statistics (commands, row outcomes, refresh and turnaround time, read latencies).

use crate::mem::dram_ctrl::DramChannelStats;

/// One kind of queue (all its instances together): Σ over sampled cycles of the lengths of
/// every instance, and the longest any instance was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub instances: u32,
    pub sum: u64,
    pub max: u64,
}

impl QueueStats {
    /// Mean length of one instance over `cycles`.
    pub fn mean(&self, cycles: u64) -> f64 {
        if cycles == 0 || self.instances == 0 {
            0.0
        } else {
            self.sum as f64 / (cycles as f64 * self.instances as f64)
        }
    }

    /// The lengths `held` held for `cycles`.
    pub(super) fn add(&mut self, held: Lengths, cycles: u64) {
        self.sum += held.sum * cycles;
        self.max = self.max.max(held.max);
    }
}

/// The lengths of one kind of queue at one moment: their sum over the instances and the
/// longest.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Lengths {
    pub sum: u64,
    pub max: u64,
}

impl Lengths {
    /// One more instance, `len` long.
    pub fn take(&mut self, len: usize) {
        self.sum += len as u64;
        self.max = self.max.max(len as u64);
    }

    /// One instance grew by one, to `len`.
    pub fn grew_to(&mut self, len: usize) {
        self.sum += 1;
        self.max = self.max.max(len as u64);
    }
}

/// `Lengths` of every kind of queue (`MemSystemStats`' queue fields).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Held {
    pub l1_queue: Lengths,
    pub tma_queue: Lengths,
    pub sm_links: Lengths,
    pub slice_queue: Lengths,
    pub slice_links: Lengths,
    pub dram_links: Lengths,
    pub blocked: Lengths,
}

/// `MemorySystem::stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemSystemStats {
    /// Core cycles sampled (the denominator of the queue means).
    pub cycles: u64,
    /// Each SM's L1 request queue (operations waiting for the L1 or blocked in it).
    pub l1_queue: QueueStats,
    /// Each SM's TMA engine queue (line requests not issued yet).
    pub tma_queue: QueueStats,
    /// Each SM's output link to the slices (requests, write-backs).
    pub sm_links: QueueStats,
    /// Each slice's request queue.
    pub slice_queue: QueueStats,
    /// Each slice's output link to the SMs (replies, acknowledgements).
    pub slice_links: QueueStats,
    /// Each channel's input link from the slices (requests, write-backs).
    pub dram_links: QueueStats,
    /// Operations blocked at a component, waiting for another (a fill, an MSHR, a way).
    pub blocked: QueueStats,
    /// Backpressure, in cycles a producer was held: an L1 whose next request found its link
    /// full; a link whose next packet found its slice's queue full; a slice whose next reply
    /// or DRAM request found its link full; a DRAM link whose next request found its
    /// channel's queue full.
    pub l1_held_cycles: u64,
    pub sm_link_held_cycles: u64,
    pub slice_held_cycles: u64,
    pub dram_link_held_cycles: u64,
    /// Bytes read and written at each slice (requests, replies, write-backs) and moved by
    /// each channel.
    pub slice_bytes: Vec<u64>,
    pub channel_bytes: Vec<u64>,
    pub channels: Vec<DramChannelStats>,
}
