//! A channel's counters: commands, row outcomes, refresh and turnaround time, data-bus busy
//! time, queue occupancy, and a read-latency histogram. Fixed-size, updated in place: no
//! allocation per request.
//!
//! Units: the `*_cycles` fields and the occupancy sums are DRAM command-clock cycles (divide
//! by `cycles` for a fraction or a mean); latencies are core cycles.

/// Power-of-two buckets of a latency in core cycles: bucket 0 holds 0 and 1, bucket i ≥ 1
/// holds [2^i, 2^(i+1)); the last bucket holds everything above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencyHistogram {
    pub buckets: [u64; LATENCY_BUCKETS],
    pub count: u64,
    pub sum: u64,
    pub max: u64,
}

pub const LATENCY_BUCKETS: usize = 32;

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            buckets: [0; LATENCY_BUCKETS],
            count: 0,
            sum: 0,
            max: 0,
        }
    }
}

impl LatencyHistogram {
    pub fn record(&mut self, cycles: u64) {
        self.buckets[Self::bucket_of(cycles)] += 1;
        self.count += 1;
        self.sum = self.sum.saturating_add(cycles);
        self.max = self.max.max(cycles);
    }

    /// The bucket of `cycles` (for readers of `buckets`).
    pub fn bucket_of(cycles: u64) -> usize {
        ((u64::BITS - 1).saturating_sub(cycles.leading_zeros()) as usize).min(LATENCY_BUCKETS - 1)
    }
}

/// One channel's statistics (`DramChannel::stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DramChannelStats {
    /// Commands issued. `pre` counts every precharge, the closed policy's auto-precharges and
    /// those before a refresh included.
    pub act: u64,
    pub pre: u64,
    pub rd: u64,
    pub wr: u64,
    pub refresh: u64,
    /// What each request needed when its column command issued: nothing (hit), an ACT (miss),
    /// a PRE and an ACT (conflict).
    pub row_hits: u64,
    pub row_misses: u64,
    pub row_conflicts: u64,
    /// DRAM cycles elapsed (the denominator of the fractions and means below).
    pub cycles: u64,
    /// `t_rfc` per all-bank refresh (cycles no bank could activate), `t_rfc_pb` per per-bank
    /// refresh (cycles its bank could not).
    pub refresh_cycles: u64,
    /// Cycles column commands waited for `t_wtr` / `t_rtw` beyond every other constraint.
    pub turnaround_cycles: u64,
    /// Cycles the data bus carried data (utilisation = busy / cycles).
    pub busy_cycles: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Times the controller switched to draining writes.
    pub write_drains: u64,
    /// Σ over cycles of the queue lengths, and their maxima.
    pub read_queue_sum: u64,
    pub read_queue_max: u32,
    pub write_queue_sum: u64,
    pub write_queue_max: u32,
    /// Reads, arrival (`push`) to the end of their data, core cycles.
    pub read_latency: LatencyHistogram,
}
