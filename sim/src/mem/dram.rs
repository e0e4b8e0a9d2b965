//! DRAM channels, banks and row buffers as a compute-at-issue timing model: each request is
//! timed when it is issued, in issue order, against the state earlier requests left behind
//! (no event queue, no reordering scheduler).
//!
//! Owns: per channel a data bus; per bank a next-free time and its open row; the row policy
//! (`open` keeps a row open after an access, `closed` precharges after each one), chosen by
//! name like `mem::cache::replacement`; the `DramStats` counters.
//!
//! Address mapping (`Dram::locate`): the channel controller's, `mem::dram_ctrl::locate` (its
//! module header describes it).
//!
//! Timing (`t_rcd` and `t_rp` in core cycles: `Config::dram_geometry` converts the config's
//! DRAM-clock values; times kept in ticks of 1 / `bytes_per_cycle` cycle, so the per-channel rate
//! `bytes_per_cycle / channels` need not be an integer: a transfer of n bytes holds its bus
//! n × channels ticks). A request begins at max(arrival, its bank's next free time). Its
//! outcome is a row Hit (the bank's open row is its row), a Miss (no row open: activate,
//! t_rcd) or a Conflict (another row open: precharge and activate, t_rp + t_rcd). Its data
//! moves on the channel bus from max(bank ready, bus free); the bank stays held until that
//! transfer has ended (a burst, at least one cycle), and under `closed` for t_rp more while it
//! precharges.
//!
//! What `DramAccess::start` means: the configured `dram.latency` is the unloaded latency of a
//! Miss, activation included, so the caller's completion is
//! `start + dram.latency + row_adjust(row)` (a Hit is t_rcd faster, a Conflict t_rp slower).
//! `start` is therefore the bus start less the request's own row preparation: it is ≥ the
//! arrival, equal to it for a lone request to an idle bank whatever the outcome, and later
//! only by queueing (bank busy with earlier requests, bus busy).
//!
//! Invariants: times only move forward within a launch; `new_launch` restarts them at 0 and
//! precharges every bank (a new launch's cycle count restarts; rows left open by the last one
//! would otherwise look like hits at cycle 0); statistics are kept; `access` allocates nothing.

use crate::mem::dram_ctrl::{locate, AddressMap};
use crate::mem::server::Server;

/// The organisation and timing of the DRAM (`Config::dram_geometry`).
#[derive(Clone, Debug)]
pub struct DramGeometry {
    pub channels: u32,
    /// Banks per channel.
    pub banks: u32,
    /// Bytes of one row (page) of one bank, as the channel sees it.
    pub row_bytes: u32,
    /// Consecutive bytes mapped to one channel before the next.
    pub interleave_bytes: u32,
    /// Aggregate over all channels; each channel's bus moves `bytes_per_cycle / channels`.
    pub bytes_per_cycle: u32,
    /// Activate-to-read delay in core cycles.
    pub t_rcd: u32,
    /// Precharge time in core cycles.
    pub t_rp: u32,
    /// `open` or `closed` (`ROW_POLICIES`).
    pub row_policy: String,
}

/// The state a request found its row in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowOutcome {
    /// The bank had this row open.
    Hit,
    /// The bank was precharged: activate needed.
    Miss,
    /// Another row open: precharge + activate.
    Conflict,
}

/// The timing of one request (module header for `start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramAccess {
    /// Arrival plus queueing: completion is `start + dram.latency + row_adjust(row)`.
    pub start: u64,
    pub row: RowOutcome,
    pub channel: u32,
    pub bank: u32,
}

/// The row policies are the channel controller's (one list for both models).
pub use crate::mem::dram_ctrl::row_policy::{row_policy, RowPolicy, ROW_POLICIES};

/// DRAM counters (kept across launches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DramStats {
    pub reads: u64,
    pub writes: u64,
    pub row_hits: u64,
    pub row_misses: u64,
    pub row_conflicts: u64,
    /// Summed over channels: bytes / per-channel bytes per cycle.
    pub bus_busy_cycles: u64,
}

/// One bank: when it can take the next request (in ticks) and its open row.
#[derive(Clone, Copy)]
struct Bank {
    free: u64,
    open: Option<u64>,
}

const IDLE: Bank = Bank {
    free: 0,
    open: None,
};

/// The DRAM of one run: channels × banks, their buses and rows.
pub struct Dram {
    channels: u64,
    banks: u64,
    map: AddressMap,
    /// Ticks per cycle (the aggregate bytes per cycle).
    tick: u64,
    t_rcd: u64,
    t_rp: u64,
    policy: Box<dyn RowPolicy>,
    /// Channel-major: bank `b` of channel `c` is `c × banks + b`.
    bank: Vec<Bank>,
    /// Each channel's data bus, a calendar of `bytes_per_cycle / channels` (`mem::server`).
    bus: Vec<Server>,
    busy_ticks: u64,
    pub stats: DramStats,
}

impl Dram {
    /// Idle, precharged banks; `None` for an unknown row policy or a zero channel, bank, row,
    /// interleave or bandwidth figure.
    pub fn new(g: &DramGeometry) -> Option<Dram> {
        if g.channels == 0
            || g.banks == 0
            || g.row_bytes == 0
            || g.interleave_bytes == 0
            || g.bytes_per_cycle == 0
        {
            return None;
        }
        Some(Dram {
            channels: g.channels as u64,
            banks: g.banks as u64,
            map: AddressMap {
                channels: g.channels,
                banks: g.banks,
                row_bytes: g.row_bytes,
                interleave_bytes: g.interleave_bytes,
            },
            tick: g.bytes_per_cycle as u64,
            t_rcd: g.t_rcd as u64,
            t_rp: g.t_rp as u64,
            policy: row_policy(&g.row_policy)?,
            bank: vec![IDLE; g.channels as usize * g.banks as usize],
            bus: vec![
                Server::with_rate(g.bytes_per_cycle as u64, g.channels as u64);
                g.channels as usize
            ],
            busy_ticks: 0,
            stats: DramStats::default(),
        })
    }

    /// The channel, bank and row of `addr` (module header).
    pub fn locate(&self, addr: u64) -> (u32, u32, u64) {
        locate(&self.map, addr)
    }

    /// `bytes` at `addr` (read or write) arriving at cycle `at`.
    pub fn access(&mut self, addr: u64, bytes: u64, at: u64, write: bool) -> DramAccess {
        let (channel, bank, row) = self.locate(addr);
        let tick = self.tick;
        let b = &mut self.bank[(channel as u64 * self.banks + bank as u64) as usize];
        let begin = at.max(b.free);
        let (outcome, prep) = match b.open {
            Some(r) if r == row => (RowOutcome::Hit, 0),
            None => (RowOutcome::Miss, self.t_rcd),
            Some(_) => (RowOutcome::Conflict, self.t_rp + self.t_rcd),
        };
        let xfer = bytes.saturating_mul(self.channels);
        let (on_bus, last) = self.bus[channel as usize].book(begin + prep, bytes);
        // The column access ends with its transfer: a precharge (the closed policy's, or the
        // next request's conflict) cannot close the row before its data has left.
        b.free = last + 1;
        if self.policy.keep_open() {
            b.open = Some(row);
        } else {
            b.open = None;
            b.free += self.t_rp;
        }
        let s = &mut self.stats;
        if write {
            s.writes += 1;
        } else {
            s.reads += 1;
        }
        match outcome {
            RowOutcome::Hit => s.row_hits += 1,
            RowOutcome::Miss => s.row_misses += 1,
            RowOutcome::Conflict => s.row_conflicts += 1,
        }
        self.busy_ticks = self.busy_ticks.saturating_add(xfer);
        s.bus_busy_cycles = self.busy_ticks / tick;
        DramAccess {
            start: on_bus - prep,
            row: outcome,
            channel,
            bank,
        }
    }

    /// Cycles over the configured `dram.latency` (a Miss's) for an outcome.
    pub fn row_adjust(&self, row: RowOutcome) -> i64 {
        match row {
            RowOutcome::Hit => -(self.t_rcd as i64),
            RowOutcome::Miss => 0,
            RowOutcome::Conflict => self.t_rp as i64,
        }
    }

    /// The row policy's name.
    pub fn policy(&self) -> &'static str {
        self.policy.name()
    }

    /// A new launch restarts the cycle count at 0: banks and buses idle, every bank
    /// precharged; statistics kept.
    pub fn new_launch(&mut self) {
        self.bank.fill(IDLE);
        self.bus.iter_mut().for_each(Server::reset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 channels × 4 banks, 2 KiB rows, 256 B interleave, 64 B/cycle (16 per channel),
    /// t_rcd 10, t_rp 12.
    fn geometry(policy: &str) -> DramGeometry {
        DramGeometry {
            channels: 4,
            banks: 4,
            row_bytes: 2048,
            interleave_bytes: 256,
            bytes_per_cycle: 64,
            t_rcd: 10,
            t_rp: 12,
            row_policy: policy.into(),
        }
    }

    fn dram(policy: &str) -> Dram {
        Dram::new(&geometry(policy)).unwrap()
    }

    /// The first chunk of channel 0 in bank `bank`, row `row`.
    fn addr(d: &Dram, bank: u32, row: u64) -> u64 {
        (0..1u64 << 24)
            .step_by(256)
            .find(|&a| d.locate(a) == (0, bank, row))
            .unwrap()
    }

    #[test]
    fn lone_request_starts_at_once_as_a_miss() {
        let mut d = dram("open");
        let a = d.access(0x1234_5600, 128, 500, false);
        assert_eq!((a.start, a.row), (500, RowOutcome::Miss));
        assert_eq!(d.stats.reads, 1);
        assert_eq!(d.stats.row_misses, 1);
        // 128 B at 16 B/cycle per channel.
        assert_eq!(d.stats.bus_busy_cycles, 8);
    }

    #[test]
    fn unknown_policy_or_zero_geometry_is_refused() {
        assert!(Dram::new(&geometry("lru")).is_none());
        for zero in 0..5 {
            let mut g = geometry("open");
            match zero {
                0 => g.channels = 0,
                1 => g.banks = 0,
                2 => g.row_bytes = 0,
                3 => g.interleave_bytes = 0,
                _ => g.bytes_per_cycle = 0,
            }
            assert!(Dram::new(&g).is_none(), "{g:?}");
        }
        assert_eq!(dram("closed").policy(), "closed");
    }

    /// Same row back to back: the second hits, waits for the first's transfer (bank and bus),
    /// and completes one burst after it.
    #[test]
    fn same_row_hits_and_queues_behind_the_bank() {
        let mut d = dram("open");
        let a = addr(&d, 1, 7);
        let first = d.access(a, 128, 0, false);
        let second = d.access(a + 128, 128, 0, false);
        assert_eq!(first.row, RowOutcome::Miss);
        assert_eq!(second.row, RowOutcome::Hit);
        assert_eq!((first.channel, first.bank), (second.channel, second.bank));
        // First: activate 10, transfer 8 cycles. Second: starts at 18.
        assert_eq!(first.start, 0);
        assert_eq!(second.start, 18);
        let done = |x: DramAccess| x.start as i64 + 100 + d.row_adjust(x.row);
        assert_eq!(done(second) - done(first), 8);
        // A third hit arriving late does not queue.
        let third = d.access(a, 128, 1000, false);
        assert_eq!((third.start, third.row), (1000, RowOutcome::Hit));
        assert_eq!(d.stats.row_hits, 2);
    }

    /// Two banks of one channel overlap their activations and share the bus.
    #[test]
    fn banks_overlap_and_the_bus_serialises() {
        let mut d = dram("open");
        let x = d.access(addr(&d, 0, 3), 128, 0, false);
        let y = d.access(addr(&d, 1, 3), 128, 0, false);
        assert_eq!((x.row, y.row), (RowOutcome::Miss, RowOutcome::Miss));
        assert_eq!(x.start, 0);
        // y activated alongside x; its transfer waits for x's 8 cycles on the bus.
        assert_eq!(y.start, 8);
    }

    #[test]
    fn another_row_of_the_same_bank_conflicts() {
        let mut d = dram("open");
        let a = d.access(addr(&d, 2, 1), 128, 0, false);
        let b = d.access(addr(&d, 2, 9), 128, 100, true);
        assert_eq!((a.row, b.row), (RowOutcome::Miss, RowOutcome::Conflict));
        assert_eq!(b.start, 100);
        assert_eq!(d.row_adjust(RowOutcome::Conflict), 12);
        assert_eq!(d.row_adjust(RowOutcome::Hit), -10);
        assert_eq!(d.row_adjust(RowOutcome::Miss), 0);
        assert_eq!((d.stats.row_conflicts, d.stats.writes), (1, 1));
    }

    /// Closed-page: every access activates, and the bank precharges behind it.
    #[test]
    fn closed_policy_never_hits() {
        let mut d = dram("closed");
        let a = addr(&d, 0, 4);
        let first = d.access(a, 128, 0, false);
        let second = d.access(a + 128, 128, 0, false);
        assert_eq!(
            (first.row, second.row),
            (RowOutcome::Miss, RowOutcome::Miss)
        );
        // The bank is free after activate 10 + transfer 8 + precharge 12.
        assert_eq!(second.start, 30);
        for i in 0..1000 {
            d.access(i * 128, 128, i, false);
        }
        assert_eq!(d.stats.row_hits, 0);
        assert_eq!(d.stats.row_conflicts, 0);
    }

    #[test]
    fn consecutive_chunks_go_to_different_channels() {
        let d = dram("open");
        for base in [0u64, 1 << 20, 0x7_3400] {
            let base = base / 1024 * 1024;
            let mut seen = [false; 4];
            for k in 0..4 {
                seen[d.locate(base + k * 256 + 17).0 as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "{base:#x}");
        }
        // Inside a chunk the channel is the same.
        assert_eq!(d.locate(256).0, d.locate(511).0);
        // Rows: a channel's 2 KiB page per bank; the row changes every banks × pages.
        assert_eq!(d.locate(0).2, 0);
        assert_eq!(d.locate(2048 * 4 * 4 - 1).2, 0);
        assert_eq!(d.locate(2048 * 4 * 4).2, 1);
    }

    /// A stride of whole channel rounds still spreads over channels.
    #[test]
    fn channel_strides_are_hashed() {
        let d = dram("open");
        let mut seen = [false; 4];
        for i in 0..64u64 {
            seen[d.locate(i * 4 * 256).0 as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    /// Sequential 128 B reads all arriving at once: the channels together move the aggregate
    /// bandwidth (within 5 %), with almost only row hits under open-page, none under closed.
    #[test]
    fn sequential_stream_reaches_the_aggregate_bandwidth() {
        for (channels, bpc) in [(32u32, 588u32), (6, 127), (40, 1103), (2, 16)] {
            let g = DramGeometry {
                channels,
                banks: 16,
                row_bytes: 2048,
                interleave_bytes: 256,
                bytes_per_cycle: bpc,
                t_rcd: 22,
                t_rp: 22,
                row_policy: "open".into(),
            };
            let mut d = Dram::new(&g).unwrap();
            let n = 64 * 1024u64;
            let mut last = 0;
            for i in 0..n {
                last = last.max(d.access(i * 128, 128, 0, false).start);
            }
            // The last transfer is a hit (no preparation); it ends one burst later.
            let end = last as f64 + 128.0 * channels as f64 / bpc as f64;
            let rate = (n * 128) as f64 / end;
            assert!(
                (rate / bpc as f64 - 1.0).abs() < 0.05,
                "{channels} channels: {rate} B/cycle, configured {bpc}"
            );
            let s = d.stats;
            assert!(s.row_hits as f64 > 0.9 * n as f64, "{s:?}");
            assert_eq!(s.row_hits + s.row_misses + s.row_conflicts, n);
            let want = n * 128 * channels as u64 / bpc as u64;
            assert!(s.bus_busy_cycles.abs_diff(want) <= 1, "{s:?}");

            let mut d = Dram::new(&DramGeometry {
                row_policy: "closed".into(),
                ..g
            })
            .unwrap();
            for i in 0..n {
                d.access(i * 128, 128, 0, false);
            }
            assert_eq!(d.stats.row_hits, 0);
        }
    }

    #[test]
    fn new_launch_resets_times_and_rows_and_keeps_stats() {
        let mut d = dram("open");
        let a = addr(&d, 3, 5);
        for _ in 0..100 {
            d.access(a, 128, 0, false);
        }
        let stats = d.stats;
        d.new_launch();
        assert_eq!(d.stats, stats);
        let x = d.access(a, 128, 0, false);
        assert_eq!((x.start, x.row), (0, RowOutcome::Miss));
    }
}
