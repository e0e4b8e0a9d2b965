//! Tag-only, set-associative, sectored caches for timing (the values stay in `GlobalMemory`),
//! and the L1 → L2 → DRAM latency of one warp request (`access`).
//!
//! Rules (ARCHITECTURE.md, `mem/cache`): a load takes the L1 hit latency if every sector hits
//! in L1, else the L2 hit latency if every missing sector hits in L2, else the DRAM latency
//! (each a load-to-use figure as pointer chases measure it). Missing sectors are filled in L2
//! and L1. Global stores write through to L2 without allocating in L1 and invalidate the L1
//! line (the formal model's `st.global.wb`, `mem/program/library.rs` 4.1: global data never
//! stays in L1 after a store); L2 is write-back and write-allocate. Atomics are performed at
//! L2 (4.4 there): L2 latency on a hit, DRAM latency on a miss.
//!
//! Loaded behaviour (docs/memory.md): each L1 has `l1.mshrs` miss entries (a miss to a line
//! already in flight merges with it; a miss with every entry busy waits for the earliest to
//! free), and L2 and DRAM are each a server of `bytes_per_cycle` whose next-free time advances
//! by the bytes of each transfer. A request leaves for L2 at max(arrival, next free) and
//! completes one level latency later, so a lone request never queues and keeps the unloaded
//! latency the pointer chases measure.

use crate::stats::MemCounters;

/// Which way of a set to evict, chosen by name (`replacement: lru | fifo`).
pub trait Replacement: Send {
    /// A hit on line `idx` (set · ways + way).
    fn touch(&mut self, idx: usize);
    /// Line `idx` was filled.
    fn insert(&mut self, idx: usize);
    /// The victim among lines `first .. first + ways` (all valid).
    fn victim(&self, first: usize, ways: usize) -> usize;
}

/// Least recently used: a stamp per line, refreshed on hits and fills.
struct Lru {
    stamp: Vec<u64>,
    clock: u64,
}

/// First in, first out: a stamp per line, set on fills only.
struct Fifo {
    stamp: Vec<u64>,
    clock: u64,
}

fn oldest(stamp: &[u64], first: usize, ways: usize) -> usize {
    (first..first + ways)
        .min_by_key(|&i| stamp[i])
        .unwrap_or(first)
}

impl Replacement for Lru {
    fn touch(&mut self, idx: usize) {
        self.clock += 1;
        self.stamp[idx] = self.clock;
    }
    fn insert(&mut self, idx: usize) {
        self.touch(idx);
    }
    fn victim(&self, first: usize, ways: usize) -> usize {
        oldest(&self.stamp, first, ways)
    }
}

impl Replacement for Fifo {
    fn touch(&mut self, _: usize) {}
    fn insert(&mut self, idx: usize) {
        self.clock += 1;
        self.stamp[idx] = self.clock;
    }
    fn victim(&self, first: usize, ways: usize) -> usize {
        oldest(&self.stamp, first, ways)
    }
}

/// The replacement policy named `name` for `lines` lines (`None` for an unknown name).
pub fn replacement(name: &str, lines: usize) -> Option<Box<dyn Replacement>> {
    let stamp = vec![0; lines];
    match name {
        "lru" => Some(Box::new(Lru { stamp, clock: 0 })),
        "fifo" => Some(Box::new(Fifo { stamp, clock: 0 })),
        _ => None,
    }
}

/// Names `replacement` accepts.
pub const REPLACEMENTS: &[&str] = &["lru", "fifo"];

/// The outcome of a lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Hit,
    /// The line is present but not this sector.
    SectorMiss,
    LineMiss,
}

/// Per-cache counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    /// Evicted lines with dirty sectors (written back).
    pub writebacks: u64,
}

/// The geometry and policy of one cache.
#[derive(Clone, Debug)]
pub struct CacheGeometry {
    pub size_bytes: u64,
    pub ways: u32,
    pub line_bytes: u32,
    pub sector_bytes: u32,
    pub replacement: String,
}

const INVALID: u64 = u64::MAX;

/// A tag-only set-associative cache with per-sector valid and dirty bits (at most 64 sectors
/// a line, checked by the config).
pub struct Cache {
    sets: u64,
    ways: usize,
    line_bytes: u64,
    sector_bytes: u64,
    tags: Vec<u64>,
    valid: Vec<u64>,
    dirty: Vec<u64>,
    repl: Box<dyn Replacement>,
    pub stats: CacheStats,
}

impl Cache {
    /// A cold cache; `None` for an unknown replacement name or a geometry without a set.
    pub fn new(g: &CacheGeometry) -> Option<Cache> {
        let ways = g.ways.max(1) as usize;
        let sets = g.size_bytes / (g.line_bytes as u64 * ways as u64);
        if sets == 0 {
            return None;
        }
        let lines = sets as usize * ways;
        Some(Cache {
            sets,
            ways,
            line_bytes: g.line_bytes as u64,
            sector_bytes: g.sector_bytes as u64,
            tags: vec![INVALID; lines],
            valid: vec![0; lines],
            dirty: vec![0; lines],
            repl: replacement(&g.replacement, lines)?,
            stats: CacheStats::default(),
        })
    }

    /// (line number, first line index of its set, sector bit).
    fn locate(&self, addr: u64) -> (u64, usize, u64) {
        let line = addr / self.line_bytes;
        let set = (line % self.sets) as usize;
        let bit = 1u64 << ((addr % self.line_bytes) / self.sector_bytes);
        (line, set * self.ways, bit)
    }

    fn find(&self, line: u64, first: usize) -> Option<usize> {
        (first..first + self.ways).find(|&i| self.tags[i] == line)
    }

    /// Look up the sector holding `addr`, counting a hit or a miss; a hit refreshes the line.
    pub fn probe(&mut self, addr: u64) -> Lookup {
        let (line, first, bit) = self.locate(addr);
        match self.find(line, first) {
            Some(i) if self.valid[i] & bit != 0 => {
                self.stats.hits += 1;
                self.repl.touch(i);
                Lookup::Hit
            }
            Some(_) => {
                self.stats.misses += 1;
                Lookup::SectorMiss
            }
            None => {
                self.stats.misses += 1;
                Lookup::LineMiss
            }
        }
    }

    /// Make the sector holding `addr` valid (and dirty if `dirty`), allocating its line if
    /// absent (evicting the policy's victim of a full set). Returns whether a line was
    /// evicted.
    pub fn fill(&mut self, addr: u64, dirty: bool) -> bool {
        let (line, first, bit) = self.locate(addr);
        let mut evicted = false;
        let i = match self.find(line, first) {
            Some(i) => i,
            None => {
                let i = match (first..first + self.ways).find(|&i| self.tags[i] == INVALID) {
                    Some(i) => i,
                    None => {
                        let v = self.repl.victim(first, self.ways);
                        evicted = true;
                        self.stats.evictions += 1;
                        if self.dirty[v] != 0 {
                            self.stats.writebacks += 1;
                        }
                        v
                    }
                };
                self.tags[i] = line;
                self.valid[i] = 0;
                self.dirty[i] = 0;
                self.repl.insert(i);
                i
            }
        };
        self.valid[i] |= bit;
        if dirty {
            self.dirty[i] |= bit;
        }
        evicted
    }

    /// Drop the line holding `addr` if present.
    pub fn invalidate(&mut self, addr: u64) {
        let (line, first, _) = self.locate(addr);
        if let Some(i) = self.find(line, first) {
            self.tags[i] = INVALID;
            self.valid[i] = 0;
            self.dirty[i] = 0;
        }
    }
}

/// What a warp request does to the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

/// Load-to-use latencies of the levels (`l1.hit_latency`, `l2.hit_latency`, `dram.latency`).
#[derive(Clone, Copy, Debug)]
pub struct Latencies {
    pub l1: u32,
    pub l2: u32,
    pub dram: u32,
}

/// A finite-bandwidth server (L2 or DRAM): time is kept in bytes (cycle × `bytes_per_cycle`)
/// so that fractional transfer times stay exact integers.
pub struct Server {
    bytes_per_cycle: u64,
    free: u64,
}

impl Server {
    /// An idle server of `bytes_per_cycle` (at least 1).
    pub fn new(bytes_per_cycle: u32) -> Server {
        Server {
            bytes_per_cycle: bytes_per_cycle.max(1) as u64,
            free: 0,
        }
    }

    /// A transfer of `bytes` arriving at cycle `at`: the cycle it starts (at or after `at`,
    /// once the transfers before it have left); the server is then busy `bytes` longer.
    pub fn serve(&mut self, at: u64, bytes: u64) -> u64 {
        if bytes == 0 {
            return at;
        }
        let start = at.saturating_mul(self.bytes_per_cycle).max(self.free);
        self.free = start.saturating_add(bytes);
        start.div_ceil(self.bytes_per_cycle)
    }
}

/// The part of the hierarchy shared by all SMs of a launch: the L2 tags and the L2 and DRAM
/// bandwidth servers.
pub struct Backend {
    pub l2: Cache,
    pub l2_bw: Server,
    pub dram_bw: Server,
}

impl Backend {
    /// Cold L2 and idle servers for `cfg`.
    pub fn new(cfg: &crate::config::Config) -> Backend {
        Backend {
            l2: Cache::new(&cfg.l2_geometry()).expect("validated L2 geometry"),
            l2_bw: Server::new(cfg.l2.bytes_per_cycle),
            dram_bw: Server::new(cfg.dram.bytes_per_cycle),
        }
    }

    /// A new launch restarts the cycle count: the servers become idle, while the L2's contents
    /// stay (the L2 persists across the launches of one run, as on hardware).
    pub fn new_launch(&mut self, cfg: &crate::config::Config) {
        self.l2_bw = Server::new(cfg.l2.bytes_per_cycle);
        self.dram_bw = Server::new(cfg.dram.bytes_per_cycle);
    }
}

/// The fill time of an entry claimed by the request in progress.
const PENDING: u64 = u64::MAX;

/// An L1's miss status holding registers: the line each entry waits for and the cycle its
/// fill completes (free once that cycle has passed). Fixed capacity, scanned linearly.
pub struct Mshrs {
    line: Vec<u64>,
    done: Vec<u64>,
    /// The latest fill time of any entry: nothing is in flight from this cycle on.
    last: u64,
}

impl Mshrs {
    /// `n` free entries (at least 1).
    pub fn new(n: u32) -> Mshrs {
        let n = n.max(1) as usize;
        Mshrs {
            line: vec![INVALID; n],
            done: vec![0; n],
            last: 0,
        }
    }

    /// The entry waiting for `line` at `cycle`, if any.
    fn in_flight(&self, line: u64, cycle: u64) -> Option<usize> {
        if cycle >= self.last {
            return None;
        }
        (0..self.line.len()).find(|&i| self.line[i] == line && self.done[i] > cycle)
    }

    /// Claim an entry for a miss to `line` at `cycle`: the entry already waiting for the line,
    /// else a free one, else the one that frees first. Returns the cycle the miss may leave
    /// the L1 and whether it had to wait. With every entry claimed by this very request (more
    /// lines than entries) the miss goes on untracked.
    fn claim(&mut self, line: u64, cycle: u64) -> (u64, bool) {
        let i = self
            .in_flight(line, cycle)
            .or_else(|| (0..self.done.len()).find(|&i| self.done[i] <= cycle));
        if let Some(i) = i {
            self.line[i] = line;
            self.done[i] = PENDING;
            return (cycle, false);
        }
        let Some(i) = (0..self.done.len()).min_by_key(|&i| self.done[i]) else {
            return (cycle, false);
        };
        if self.done[i] == PENDING {
            return (cycle, false);
        }
        let at = self.done[i];
        self.line[i] = line;
        self.done[i] = PENDING;
        (at, true)
    }

    /// The request in progress completes at `done`: its claimed entries hold until then.
    fn finish(&mut self, done: u64) {
        for d in self.done.iter_mut().filter(|d| **d == PENDING) {
            *d = done;
        }
        self.last = self.last.max(done);
    }
}

/// One warp request: the sectors `sectors` (ids in units of `sector_bytes`, the coalescer's
/// output, sorted) whose byte addresses are shifted by `offset` (distinct per warp for local
/// memory), issued at `cycle`.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    pub kind: AccessKind,
    pub sectors: &'a [u64],
    pub sector_bytes: u64,
    pub offset: u64,
    pub cycle: u64,
}

/// Time one request, updating the caches, MSHRs, servers and the `memory` counters. Returns
/// the latency: the latest of its L1 hits (`l1` after issue, or the fill of an in-flight line
/// they merge with) and of its misses (leaving the L1 once an MSHR is free, starting at L2 —
/// and DRAM if any sector misses there — once the servers are free, then one level latency).
pub fn access(
    l1: &mut Cache,
    mshrs: &mut Mshrs,
    back: &mut Backend,
    lat: Latencies,
    req: Request,
    c: &mut MemCounters,
) -> u32 {
    let (kind, cycle, sb) = (req.kind, req.cycle, req.sector_bytes);
    let (mut ready, mut start) = (cycle, cycle);
    let (mut l2_bytes, mut dram_bytes) = (0u64, 0u64);
    let mut prev_line = INVALID;
    for &s in req.sectors {
        let a = s * sb + req.offset;
        let line = a / l1.line_bytes;
        if kind == AccessKind::Load && l1.probe(a) == Lookup::Hit {
            c.l1_hits += 1;
            // A hit on a line still in flight completes with its fill.
            let t = match mshrs.in_flight(line, cycle) {
                Some(i) if mshrs.done[i] != PENDING => {
                    c.mshr_merges += 1;
                    mshrs.done[i].max(cycle + lat.l1 as u64)
                }
                _ => cycle + lat.l1 as u64,
            };
            ready = ready.max(t);
            continue;
        }
        match kind {
            AccessKind::Load => {
                c.l1_misses += 1;
                if line != prev_line {
                    prev_line = line;
                    let (at, waited) = mshrs.claim(line, cycle);
                    c.mshr_stalls += waited as u64;
                    start = start.max(at);
                }
            }
            // Write-through, no write-allocate: the L1 copy is dropped.
            AccessKind::Store | AccessKind::Atomic => l1.invalidate(a),
        }
        l2_bytes += sb;
        if back.l2.probe(a) == Lookup::Hit {
            c.l2_hits += 1;
        } else {
            c.l2_misses += 1;
            // A full-sector store needs no fetch; loads and atomics read DRAM.
            if kind != AccessKind::Store {
                c.dram_reads += 1;
                dram_bytes += sb;
            }
        }
        let wb = back.l2.stats.writebacks;
        if back.l2.fill(a, kind != AccessKind::Load) {
            c.l2_evictions += 1;
            c.l2_writebacks += back.l2.stats.writebacks - wb;
        }
        if kind == AccessKind::Load && l1.fill(a, false) {
            c.l1_evictions += 1;
        }
    }
    if l2_bytes == 0 {
        return (ready - cycle) as u32;
    }
    c.l2_bytes += l2_bytes;
    c.dram_bytes += dram_bytes;
    let at_l2 = back.l2_bw.serve(start, l2_bytes);
    let done = match kind {
        AccessKind::Store => at_l2 + lat.l2 as u64,
        _ if dram_bytes == 0 => at_l2 + lat.l2 as u64,
        _ => back.dram_bw.serve(start, dram_bytes).max(at_l2) + lat.dram as u64,
    };
    if kind == AccessKind::Load {
        mshrs.finish(done);
    }
    (ready.max(done) - cycle) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(size: u64, ways: u32, repl: &str) -> Cache {
        Cache::new(&CacheGeometry {
            size_bytes: size,
            ways,
            line_bytes: 128,
            sector_bytes: 32,
            replacement: repl.into(),
        })
        .unwrap()
    }

    #[test]
    fn sector_and_line_misses() {
        let mut c = cache(1024, 2, "lru");
        assert_eq!(c.probe(0), Lookup::LineMiss);
        c.fill(0, false);
        assert_eq!(c.probe(0), Lookup::Hit);
        assert_eq!(c.probe(32), Lookup::SectorMiss);
        c.invalidate(0);
        assert_eq!(c.probe(0), Lookup::LineMiss);
        assert_eq!(c.stats.hits, 1);
        assert_eq!(c.stats.misses, 3);
    }

    /// 1 KiB, 2 ways, 128 B lines: 4 sets; lines 0, 4, 8 share set 0.
    #[test]
    fn lru_and_fifo_pick_different_victims() {
        for (repl, survivor) in [("lru", 0u64), ("fifo", 4 * 128)] {
            let mut c = cache(1024, 2, repl);
            c.fill(0, false);
            c.fill(4 * 128, false);
            c.probe(0);
            assert!(c.fill(8 * 128, true));
            assert_eq!(c.probe(survivor), Lookup::Hit, "{repl}");
            assert_eq!(c.stats.evictions, 1);
        }
    }

    #[test]
    fn dirty_eviction_counts_a_writeback() {
        let mut c = cache(256, 1, "lru");
        c.fill(0, true);
        assert!(c.fill(256, false));
        assert_eq!(c.stats.writebacks, 1);
    }

    #[test]
    fn load_latency_by_level() {
        let lat = Latencies {
            l1: 20,
            l2: 200,
            dram: 400,
        };
        let mut l1 = cache(1024, 2, "lru");
        let mut back = backend(64, 16);
        let mut mshrs = Mshrs::new(4);
        let mut m = MemCounters::default();
        let mut cycle = 0;
        let mut go = |l1: &mut Cache, back: &mut Backend, kind| {
            cycle += 1000;
            let req = Request {
                kind,
                sectors: &[0, 1],
                sector_bytes: 32,
                offset: 0,
                cycle,
            };
            access(l1, &mut mshrs, back, lat, req, &mut m)
        };
        assert_eq!(go(&mut l1, &mut back, AccessKind::Load), 400);
        assert_eq!(go(&mut l1, &mut back, AccessKind::Load), 20);
        assert_eq!(go(&mut l1, &mut back, AccessKind::Store), 200);
        assert_eq!(go(&mut l1, &mut back, AccessKind::Load), 200);
        assert_eq!(go(&mut l1, &mut back, AccessKind::Atomic), 200);
        assert_eq!(m.dram_reads, 2);
    }

    fn backend(l2_bw: u32, dram_bw: u32) -> Backend {
        Backend {
            l2: cache(1 << 16, 4, "lru"),
            l2_bw: Server::new(l2_bw),
            dram_bw: Server::new(dram_bw),
        }
    }

    fn load(line: u64, cycle: u64) -> Request<'static> {
        const SECTORS: [u64; 64] = {
            let mut s = [0; 64];
            let mut i = 0;
            while i < 64 {
                s[i] = i as u64;
                i += 1;
            }
            s
        };
        let i = line as usize * 4;
        Request {
            kind: AccessKind::Load,
            sectors: &SECTORS[i..i + 4],
            sector_bytes: 32,
            offset: 0,
            cycle,
        }
    }

    const LAT: Latencies = Latencies {
        l1: 20,
        l2: 200,
        dram: 400,
    };

    /// A second warp reading a line in flight completes with the first, without a new L2
    /// access.
    #[test]
    fn miss_to_a_line_in_flight_merges() {
        let (mut l1, mut back, mut mshrs) =
            (cache(4096, 4, "lru"), backend(1024, 1024), Mshrs::new(4));
        let mut m = MemCounters::default();
        assert_eq!(
            access(&mut l1, &mut mshrs, &mut back, LAT, load(0, 0), &mut m),
            400
        );
        assert_eq!(
            access(&mut l1, &mut mshrs, &mut back, LAT, load(0, 10), &mut m),
            390
        );
        assert_eq!(m.mshr_merges, 4);
        assert_eq!((m.dram_reads, m.l2_bytes), (4, 128));
    }

    /// With one MSHR, a second line's miss waits for the first fill.
    #[test]
    fn exhausted_mshrs_add_latency() {
        let (mut l1, mut back, mut mshrs) =
            (cache(4096, 4, "lru"), backend(1024, 1024), Mshrs::new(1));
        let mut m = MemCounters::default();
        assert_eq!(
            access(&mut l1, &mut mshrs, &mut back, LAT, load(0, 0), &mut m),
            400
        );
        assert_eq!(
            access(&mut l1, &mut mshrs, &mut back, LAT, load(1, 0), &mut m),
            800
        );
        assert_eq!(m.mshr_stalls, 1);
    }

    /// A saturated server starts one transfer per bytes / bandwidth.
    #[test]
    fn server_queues_at_its_bandwidth() {
        let mut s = Server::new(16);
        assert_eq!(s.serve(5, 128), 5);
        assert_eq!(s.serve(5, 128), 13);
        assert_eq!(s.serve(5, 8), 21);
        assert_eq!(s.serve(5, 8), 22);
        assert_eq!(s.serve(100, 8), 100);
    }
}
