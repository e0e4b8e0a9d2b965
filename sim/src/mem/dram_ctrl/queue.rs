//! A bounded request queue (the read queue or the write queue) in arrival order.
//!
//! Storage is allocated once, at the capacity, and never grows: `push` refuses nothing only
//! because the caller checked `has_room` (the component contract), and removal shifts the
//! younger entries down in place. Index order is age order (oldest first), which the schedulers
//! rely on.

/// One queued request, with what the controller has done for it so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub id: u64,
    pub bank: u32,
    pub row: u64,
    pub bytes: u32,
    pub write: bool,
    /// Core cycle of `push` (for the latency histogram).
    pub arrival: u64,
    /// First DRAM cycle the scheduler may serve it.
    pub eligible: u64,
    /// Arrival sequence number (a strict age order across both queues).
    pub seq: u64,
    /// An ACT was issued for it (a miss, or the second half of a conflict).
    pub activated: bool,
    /// A PRE was issued for it (a conflict).
    pub precharged: bool,
}

#[derive(Clone, Debug)]
pub struct RequestQueue {
    entries: Vec<Entry>,
    capacity: usize,
}

impl RequestQueue {
    pub fn new(capacity: usize) -> RequestQueue {
        RequestQueue {
            entries: Vec::with_capacity(capacity),
            capacity,
        }
    }

    pub fn has_room(&self) -> bool {
        self.entries.len() < self.capacity
    }

    /// # Panics
    /// When full: the caller must check `has_room` first (a full queue is backpressure).
    pub fn push(&mut self, e: Entry) {
        assert!(
            self.has_room(),
            "DRAM request queue full ({} entries): check can_accept before push",
            self.capacity
        );
        self.entries.push(e);
    }

    pub fn remove(&mut self, i: usize) -> Entry {
        self.entries.remove(i)
    }

    /// Entries the controller has taken by DRAM cycle `k` (eligible at or before it; pushes
    /// come in time order, so these are a prefix).
    pub fn taken_by(&self, k: u64) -> usize {
        self.entries.partition_point(|e| e.eligible <= k)
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn get_mut(&mut self, i: usize) -> &mut Entry {
        &mut self.entries[i]
    }
}
