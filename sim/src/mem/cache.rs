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

/// Time one request over the sectors `sectors` (ids in units of `sector_bytes`, the
/// coalescer's output) whose byte addresses are shifted by `offset` (distinct per warp for
/// local memory), updating the caches and the `memory` counters. Returns the latency.
#[allow(clippy::too_many_arguments)]
pub fn access(
    l1: &mut Cache,
    l2: &mut Cache,
    lat: Latencies,
    kind: AccessKind,
    sectors: &[u64],
    sector_bytes: u64,
    offset: u64,
    c: &mut MemCounters,
) -> u32 {
    let (mut in_l1, mut in_l2) = (true, true);
    for &s in sectors {
        let a = s * sector_bytes + offset;
        if kind == AccessKind::Load && l1.probe(a) == Lookup::Hit {
            c.l1_hits += 1;
            continue;
        }
        match kind {
            AccessKind::Load => {
                c.l1_misses += 1;
                in_l1 = false;
            }
            // Write-through, no write-allocate: the L1 copy is dropped.
            AccessKind::Store | AccessKind::Atomic => l1.invalidate(a),
        }
        if l2.probe(a) == Lookup::Hit {
            c.l2_hits += 1;
        } else {
            c.l2_misses += 1;
            in_l2 = false;
            // A full-sector store needs no fetch; loads and atomics read DRAM.
            if kind != AccessKind::Store {
                c.dram_reads += 1;
            }
        }
        let wb = l2.stats.writebacks;
        if l2.fill(a, kind != AccessKind::Load) {
            c.l2_evictions += 1;
            c.l2_writebacks += l2.stats.writebacks - wb;
        }
        if kind == AccessKind::Load && l1.fill(a, false) {
            c.l1_evictions += 1;
        }
    }
    match kind {
        AccessKind::Load if in_l1 => lat.l1,
        AccessKind::Store => lat.l2,
        _ if in_l2 => lat.l2,
        _ => lat.dram,
    }
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
        let (mut l1, mut l2) = (cache(1024, 2, "lru"), cache(4096, 4, "lru"));
        let mut m = MemCounters::default();
        let mut go =
            |l1: &mut Cache, l2: &mut Cache, k| access(l1, l2, lat, k, &[0, 1], 32, 0, &mut m);
        assert_eq!(go(&mut l1, &mut l2, AccessKind::Load), 400);
        assert_eq!(go(&mut l1, &mut l2, AccessKind::Load), 20);
        assert_eq!(go(&mut l1, &mut l2, AccessKind::Store), 200);
        assert_eq!(go(&mut l1, &mut l2, AccessKind::Load), 200);
        assert_eq!(go(&mut l1, &mut l2, AccessKind::Atomic), 200);
        assert_eq!(m.dram_reads, 2);
    }
}
