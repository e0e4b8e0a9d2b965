//! The SM's TMA engine (`sm.tma`): bulk and tensor copies wait here as line requests, and the
//! engine issues them into its SM's L1 request queue at `bytes_per_cycle` — one L1 line every
//! `line_bytes / bytes_per_cycle` cycles, a store's lines at `store_bytes_per_cycle` — while
//! that queue has room
//! (a full L1 queue holds the engine: backpressure). A request that moves no global memory (a
//! copy between CTAs' shared memories) only occupies the engine for its bytes and completes
//! when the engine is done with it.
//!
//! The queue is bounded by `sm.tma.queue_lines` (no depth of the hardware's is published; by
//! default one request per 16 bytes of shared memory, the most the copies it can hold may
//! need): a copy is admitted while the queue holds fewer
//! lines than that, whole (its lines are known only once it executes), so the queue holds at
//! most `queue_lines − 1` plus one copy's lines. A copy instruction that finds it full does
//! not issue: its warp's `memory_backpressure` stall, as for a full L1 request queue.
//!
//! Invariant: requests leave in submission order; the engine's time is kept in ticks of
//! 1 / (`bytes_per_cycle` × `store_bytes_per_cycle`) cycle, and a request starts at the first
//! whole cycle the engine is free (it is polled once a cycle): a rate that does not divide the
//! line rounds each line up to whole cycles when requests follow each other.

use std::collections::VecDeque;

use super::MemorySystem;

/// One request waiting for the engine.
#[derive(Clone, Copy, Debug)]
pub(super) enum TmaEntry {
    /// An operation (`MemorySystem::ops`) on one line, for the L1 when the engine issues it;
    /// `store`: a store's or reduction's line (the engine reads it from shared memory).
    Line { id: u32, store: bool },
    /// Engine time only: `bytes` moved between shared memories; `op` completes when they are.
    Engine { op: u32, bytes: u64 },
}

pub(super) struct TmaStage {
    /// Requests in submission order, each with the first cycle the engine may take it.
    queue: VecDeque<(u64, TmaEntry)>,
    /// The engine is busy until this time, in ticks (`cycle × rate × store_rate`).
    free: u64,
    /// Bytes per cycle (`sm.tma.bytes_per_cycle`; 0: the SM has no engine).
    rate: u64,
    /// Bytes per cycle of a store's lines (`sm.tma.store_bytes_per_cycle`).
    store_rate: u64,
    line_bytes: u64,
    /// `sm.tma.queue_lines`: admit a copy only while fewer requests wait.
    cap: usize,
}

impl TmaStage {
    pub fn new(rate: u32, store_rate: u32, line_bytes: u64, cap: usize) -> TmaStage {
        TmaStage {
            queue: VecDeque::new(),
            free: 0,
            rate: rate.max(1) as u64,
            store_rate: store_rate.max(1) as u64,
            line_bytes,
            cap: cap.max(1),
        }
    }

    /// The operations still waiting, in order.
    pub fn waiting(&self) -> impl Iterator<Item = u32> + '_ {
        self.queue.iter().map(|&(_, e)| match e {
            TmaEntry::Line { id, .. } | TmaEntry::Engine { op: id, .. } => id,
        })
    }

    /// Whether a new copy may be admitted.
    pub fn has_room(&self) -> bool {
        self.queue.len() < self.cap
    }

    /// Request `e`, which the engine may take from cycle `from`.
    pub fn push(&mut self, from: u64, e: TmaEntry) {
        self.queue.push_back((from, e));
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Ticks per cycle.
    fn ticks(&self) -> u64 {
        self.rate * self.store_rate
    }

    /// The first cycle the engine is free.
    fn ready(&self) -> u64 {
        self.free.div_ceil(self.ticks())
    }

    /// When the engine next has something to do: `room` tells whether its L1 queue can
    /// take a line now (if not, the L1 wakes the engine when it takes one: never).
    pub fn next_wake(&self, room: bool) -> u64 {
        match self.queue.front() {
            None => u64::MAX,
            Some((_, TmaEntry::Line { .. })) if !room => u64::MAX,
            Some(&(from, _)) => self.ready().max(from),
        }
    }

    /// Take the next request if the engine is free in cycle `c` and (for a line) `room`:
    /// the entry and the cycle after its last byte.
    fn issue(&mut self, c: u64, room: bool) -> Option<(TmaEntry, u64)> {
        let &(from, e) = self.queue.front()?;
        if self.ready().max(from) > c || (matches!(e, TmaEntry::Line { .. }) && !room) {
            return None;
        }
        self.queue.pop_front();
        // A byte at the load rate is `store_rate` ticks; at the store rate, `rate` ticks.
        let ticks = match e {
            TmaEntry::Line { store: false, .. } => self.line_bytes * self.store_rate,
            TmaEntry::Line { store: true, .. } => self.line_bytes * self.rate,
            TmaEntry::Engine { bytes, .. } => bytes * self.store_rate,
        };
        self.free = self.free.max(c * self.ticks()) + ticks;
        Some((e, self.ready().max(c + 1)))
    }
}

impl MemorySystem {
    /// SM `sm`'s TMA engine in cycle `c`: issue what it can into the L1's request queue
    /// (before the L1 takes its operation of the cycle, so a line issued now may be taken now).
    pub(super) fn tma_cycle(&mut self, sm: usize, c: u64) {
        loop {
            let room = self.l1s[sm].occupancy() < self.cfg.l1.request_queue as usize;
            let Some((e, done)) = self.l1s[sm].tma.issue(c, room) else {
                return;
            };
            match e {
                TmaEntry::Line { id, .. } => self.l1s[sm].queue.push_back((c, id)),
                TmaEntry::Engine { op, .. } => self.complete(op, done),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(e: TmaEntry) -> u32 {
        match e {
            TmaEntry::Line { id, .. } | TmaEntry::Engine { op: id, .. } => id,
        }
    }

    /// Every cycle from 0, what the engine issues: (operation, cycle).
    fn drain(t: &mut TmaStage) -> Vec<(u32, u64)> {
        (0..64)
            .filter_map(|c| t.issue(c, true).map(|(e, _)| (id(e), c)))
            .collect()
    }

    /// 128-byte lines: a load line is one cycle of a 128 B/cycle engine, a store line four at
    /// 32 B/cycle (`sm.tma.store_bytes_per_cycle`), whatever the order.
    #[test]
    fn store_lines_take_the_store_rate() {
        let mut t = TmaStage::new(128, 32, 128, 16);
        for (id, store) in [(0, true), (1, true), (2, false), (3, false), (4, true)] {
            t.push(0, TmaEntry::Line { id, store });
        }
        assert_eq!(drain(&mut t), [(0, 0), (1, 4), (2, 8), (3, 9), (4, 10)]);
    }

    /// A store rate that does not divide the line: 128-byte lines at 48 B/cycle are 2⅔ cycles
    /// each, and the engine, polled once a cycle, starts the next at the first whole cycle it
    /// is free.
    #[test]
    fn a_fractional_store_rate_starts_each_line_on_a_whole_cycle() {
        let mut t = TmaStage::new(128, 48, 128, 16);
        for id in 0..4 {
            t.push(0, TmaEntry::Line { id, store: true });
        }
        assert_eq!(drain(&mut t), [(0, 0), (1, 3), (2, 6), (3, 9)]);
    }

    /// Without a store rate of its own (`TmaStage::new(r, r, ..)`) a store line is a load line.
    #[test]
    fn equal_rates_time_loads_and_stores_alike() {
        let mut t = TmaStage::new(64, 64, 128, 16);
        t.push(0, TmaEntry::Line { id: 0, store: true });
        t.push(
            0,
            TmaEntry::Line {
                id: 1,
                store: false,
            },
        );
        t.push(0, TmaEntry::Engine { op: 2, bytes: 256 });
        t.push(0, TmaEntry::Line { id: 3, store: true });
        assert_eq!(drain(&mut t), [(0, 0), (1, 2), (2, 4), (3, 8)]);
    }
}
