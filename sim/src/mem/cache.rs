//! One set-associative, sectored cache level holding data: the formal model's cache (Habermaier
//! §4.2; digest §2.2) with fixed, aligned lines and per-byte valid and dirty masks (our
//! decision for the digest's gap 1, as it recommends), an eviction class per line, and the
//! cycle each line's pending fill completes.
//!
//! Invariants:
//! - a line is `tag == INVALID` (unused) or holds the aligned address of its first byte; its
//!   `dirty` bytes are a subset of its `valid` bytes;
//! - a line whose `ready` lies after the current cycle is *in flight* (the formal model's
//!   pinned line): it is never chosen as a victim, and readers wait for `ready`;
//! - the victim of a full set is the replacement policy's first choice among the unpinned
//!   lines, taking clean evict-first lines before any other (the formal `canEvict` axiom).
//!   A dirty victim is written back by the caller before it is reused (the silent `wb` rule
//!   fired on demand).
//!
//! The programs that drive it live in `mem::hierarchy`; this module knows no timing beyond the
//! `ready` stamps it is given.

pub use super::server::Server;

/// Byte masks of one line (lines are at most `MAX_LINE_BYTES`, checked by the config).
pub type Mask = u128;

/// The largest line a mask covers.
pub const MAX_LINE_BYTES: u32 = 128;

/// The formal model's eviction classes (`last` is deliberately not modelled there either).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvClass {
    First,
    Normal,
}

/// Which line of a set to evict, chosen by name (`replacement: lru | fifo`).
pub trait Replacement: Send {
    /// A hit on line `idx` (set · ways + way).
    fn touch(&mut self, idx: usize);
    /// Line `idx` was filled.
    fn insert(&mut self, idx: usize);
    /// The eviction rank of line `idx`: among the candidates the lowest goes first.
    fn rank(&self, idx: usize) -> u64;
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

impl Replacement for Lru {
    fn touch(&mut self, idx: usize) {
        self.clock += 1;
        self.stamp[idx] = self.clock;
    }
    fn insert(&mut self, idx: usize) {
        self.touch(idx);
    }
    fn rank(&self, idx: usize) -> u64 {
        self.stamp[idx]
    }
}

impl Replacement for Fifo {
    fn touch(&mut self, _: usize) {}
    fn insert(&mut self, idx: usize) {
        self.clock += 1;
        self.stamp[idx] = self.clock;
    }
    fn rank(&self, idx: usize) -> u64 {
        self.stamp[idx]
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

/// How a line's address picks its set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetIndex {
    /// Line number mod sets (the textbook cache; GPGPU-Sim's `L`).
    Linear,
    /// For one of `share` slices that split the lines between them: the line number ÷ `share`
    /// (dense within the slice) hashed over the sets by `interconnect::spread` (the low field
    /// rotated by the XOR-fold of the high bits). Strides of a power of two lines, which a
    /// linear index sends to a handful of sets (a 16 KiB row stride at 128-byte lines: 2 of
    /// 256), spread over all sets, as the hashed set index of NVIDIA's L2 does (GPGPU-Sim's
    /// `P`, the IPOLY hash of Rau, ISCA 1991, in Accel-Sim's Volta-to-Hopper L2 configs).
    Hashed { share: u32 },
}

/// Names `set_index` accepts.
pub const SET_INDEXES: &[&str] = &["linear", "hashed"];

impl SetIndex {
    /// The policy named `name` for a cache split in `share` slices (None: unknown name).
    pub fn named(name: &str, share: u32) -> Option<SetIndex> {
        match name {
            "linear" => Some(SetIndex::Linear),
            "hashed" => Some(SetIndex::Hashed {
                share: share.max(1),
            }),
            _ => None,
        }
    }

    /// The set of line number `line` among `sets`.
    fn set(self, line: u64, sets: u64) -> u64 {
        match self {
            SetIndex::Linear => line % sets,
            SetIndex::Hashed { share } => {
                crate::mem::interconnect::spread(line / share as u64, sets as u32) as u64
            }
        }
    }
}

/// The geometry and policy of one cache.
#[derive(Clone, Debug)]
pub struct CacheGeometry {
    pub size_bytes: u64,
    pub ways: u32,
    pub line_bytes: u32,
    pub sector_bytes: u32,
    pub replacement: String,
    pub set_index: SetIndex,
}

impl CacheGeometry {
    /// Lines the cache holds.
    pub fn lines(&self) -> u64 {
        self.size_bytes / u64::from(self.line_bytes.max(1))
    }
}

/// An unused line's tag.
pub const INVALID: u64 = u64::MAX;

/// The state of one line (its data bytes are kept apart, `Cache::data`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    pub tag: u64,
    pub valid: Mask,
    pub dirty: Mask,
    /// The cycle the line's last fill completes; in flight (pinned) before it.
    pub ready: u64,
    pub class: EvClass,
    /// Operations waiting to read the line's fill (the formal `read` pins a line it waits
    /// for, Habermaier §4.4 op2): neither a victim nor evictable until they have read it.
    pub pins: u8,
}

const UNUSED: Line = Line {
    tag: INVALID,
    valid: 0,
    dirty: 0,
    ready: 0,
    class: EvClass::Normal,
    pins: 0,
};

/// Where a new line can go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// An unused way.
    Free(usize),
    /// A used, unpinned way to evict (written back first if dirty).
    Victim(usize),
    /// Every way is in flight: retry at this cycle (a reservation failure).
    Busy(u64),
}

/// A set-associative cache of `Line`s and their data.
pub struct Cache {
    sets: u64,
    set_index: SetIndex,
    ways: usize,
    line_bytes: u64,
    sector_bytes: u64,
    lines: Vec<Line>,
    data: Vec<u8>,
    repl: Box<dyn Replacement>,
    /// Mutable accesses to lines so far, in all and per set (`changes`, `set_changes`).
    changes: u64,
    set_changes: Vec<u64>,
}

impl Cache {
    /// A cold cache; `None` for an unknown replacement name, a geometry without a set, or
    /// lines over `MAX_LINE_BYTES`.
    pub fn new(g: &CacheGeometry) -> Option<Cache> {
        let ways = g.ways.max(1) as usize;
        let sets = g.size_bytes / (g.line_bytes as u64 * ways as u64);
        if sets == 0 || g.line_bytes > MAX_LINE_BYTES || g.sector_bytes == 0 {
            return None;
        }
        let n = sets as usize * ways;
        Some(Cache {
            sets,
            set_index: g.set_index,
            ways,
            line_bytes: g.line_bytes as u64,
            sector_bytes: g.sector_bytes as u64,
            lines: vec![UNUSED; n],
            data: vec![0; n * g.line_bytes as usize],
            repl: replacement(&g.replacement, n)?,
            changes: 0,
            set_changes: vec![0; sets as usize],
        })
    }

    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    /// The aligned address of the line holding `addr`.
    pub fn line_addr(&self, addr: u64) -> u64 {
        addr - addr % self.line_bytes
    }

    /// Every byte of a line.
    pub fn full(&self) -> Mask {
        if self.line_bytes >= 128 {
            Mask::MAX
        } else {
            (1 << self.line_bytes) - 1
        }
    }

    /// `m` widened to whole sectors (the unit of fills).
    pub fn sectors_of(&self, m: Mask) -> Mask {
        let sb = self.sector_bytes as u32;
        let one: Mask = if sb >= 128 { Mask::MAX } else { (1 << sb) - 1 };
        let mut out = 0;
        // Sector by sector of those `m` touches (a hot path: retried operations ask again).
        let mut rest = m;
        while rest != 0 {
            let b = rest.trailing_zeros();
            let s = b - b % sb;
            if s as u64 >= self.line_bytes {
                break;
            }
            out |= one << s;
            rest &= !(one << s);
        }
        out & self.full()
    }

    /// Sectors in `m` (whole-sector masks).
    pub fn sector_count(&self, m: Mask) -> u64 {
        m.count_ones() as u64 / self.sector_bytes
    }

    /// The line holding aligned address `line_addr`, if present.
    pub fn find(&self, line_addr: u64) -> Option<usize> {
        let first = self.first_of(line_addr);
        (first..first + self.ways).find(|&i| self.lines[i].tag == line_addr)
    }

    fn first_of(&self, line_addr: u64) -> usize {
        self.set_index.set(line_addr / self.line_bytes, self.sets) as usize * self.ways
    }

    /// A way for line `line_addr` at cycle `now`: an unused way, else the victim among the
    /// unpinned ones (clean evict-first lines first, then the policy's choice), else the
    /// cycle the first in-flight line lands.
    pub fn slot_for(&self, line_addr: u64, now: u64) -> Slot {
        let first = self.first_of(line_addr);
        let set = first..first + self.ways;
        if let Some(i) = set.clone().find(|&i| self.lines[i].tag == INVALID) {
            return Slot::Free(i);
        }
        let unpinned = |i: &usize| self.lines[*i].ready <= now && self.lines[*i].pins == 0;
        let clean_first = set
            .clone()
            .filter(unpinned)
            .filter(|&i| self.lines[i].class == EvClass::First && self.lines[i].dirty == 0)
            .min_by_key(|&i| self.repl.rank(i));
        let any = || {
            set.clone()
                .filter(unpinned)
                .min_by_key(|&i| self.repl.rank(i))
        };
        match clean_first.or_else(any) {
            Some(i) => Slot::Victim(i),
            // Lines waited for by readers free only when they have read: u64::MAX (never by
            // time alone) when every way is so held.
            None => Slot::Busy(
                set.filter(|&i| self.lines[i].pins == 0)
                    .map(|i| self.lines[i].ready)
                    .min()
                    .unwrap_or(u64::MAX),
            ),
        }
    }

    /// Make way `i` hold line `line_addr`, empty (the caller has written back what it held).
    pub fn install(&mut self, i: usize, line_addr: u64) {
        self.changed(i);
        self.lines[i] = Line {
            tag: line_addr,
            ..UNUSED
        };
        self.repl.insert(i);
    }

    /// Drop way `i`'s line, dirty bytes included.
    pub fn invalidate(&mut self, i: usize) {
        self.changed(i);
        self.lines[i] = UNUSED;
    }

    /// A use of way `i` (for the replacement policy).
    pub fn touch(&mut self, i: usize) {
        self.repl.touch(i);
    }

    pub fn line(&self, i: usize) -> &Line {
        &self.lines[i]
    }

    pub fn line_mut(&mut self, i: usize) -> &mut Line {
        self.changed(i);
        &mut self.lines[i]
    }

    /// How many times a line's state may have changed (installed, invalidated, lent
    /// mutably): an operation blocked on this cache's lines can only proceed once it has
    /// moved. Data bytes and the replacement order do not count: no operation waits on them.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// `changes` of the set that holds (or would hold) line `line_addr`.
    pub fn set_changes(&self, line_addr: u64) -> u64 {
        self.set_changes[self.set_of(line_addr)]
    }

    /// The set that holds (or would hold) line `line_addr`.
    pub fn set_of(&self, line_addr: u64) -> usize {
        self.first_of(line_addr) / self.ways
    }

    /// `changes` of set `set` (`set_of`).
    pub fn changes_of_set(&self, set: usize) -> u64 {
        self.set_changes[set]
    }

    fn changed(&mut self, i: usize) {
        self.changes += 1;
        self.set_changes[i / self.ways] += 1;
    }

    /// Way `i`'s data bytes.
    pub fn data(&self, i: usize) -> &[u8] {
        let n = self.line_bytes as usize;
        &self.data[i * n..(i + 1) * n]
    }

    pub fn data_mut(&mut self, i: usize) -> &mut [u8] {
        let n = self.line_bytes as usize;
        &mut self.data[i * n..(i + 1) * n]
    }

    /// Ways in the cache (used or not): indices `0..n_ways()` name them.
    pub fn n_ways(&self) -> usize {
        self.lines.len()
    }

    /// Every used way, in index order.
    pub fn used(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.lines.len()).filter(|&i| self.lines[i].tag != INVALID)
    }
}

/// Copy the bytes of `mask` from `src` to `dst` (both a line long).
pub fn copy_masked(dst: &mut [u8], src: &[u8], mask: Mask) {
    let mut m = mask;
    while m != 0 {
        let b = m.trailing_zeros() as usize;
        // Runs of set bits copy as slices.
        let run = (!(m >> b)).trailing_zeros() as usize;
        let end = (b + run).min(dst.len());
        dst[b..end].copy_from_slice(&src[b..end]);
        if b + run >= 128 {
            break;
        }
        m &= !(((1u128 << run) - 1) << b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets_touched(index: SetIndex, lines: impl Iterator<Item = u64>, sets: u64) -> usize {
        let seen: std::collections::BTreeSet<u64> = lines.map(|l| index.set(l, sets)).collect();
        seen.len()
    }

    /// The 8192³ GEMM's failure mode: the rows of a K-major bf16 tile, 16 KiB apart (128 lines
    /// of 128 bytes), of one slice of 80. Linear indexing puts them in 2 of 256 sets; the hash
    /// spreads them over nearly all.
    #[test]
    fn hashed_set_index_spreads_power_of_two_strides() {
        let rows = (0..4096u64).map(|j| 1_000_003 + 128 * j);
        assert_eq!(sets_touched(SetIndex::Linear, rows.clone(), 256), 2);
        let hashed = SetIndex::named("hashed", 80).unwrap();
        assert!(sets_touched(hashed, rows, 256) >= 250);
    }

    /// A slice's lines, one in every `share`, fill its sets evenly: each aligned run of
    /// `sets` of them takes every set once.
    #[test]
    fn hashed_set_index_is_even_on_a_slices_sequential_lines() {
        let (share, sets) = (80u64, 256u64);
        let hashed = SetIndex::named("hashed", share as u32).unwrap();
        for run in 0..8u64 {
            let lines = (0..sets).map(|i| (run * sets + i) * share + 17);
            assert_eq!(
                sets_touched(hashed, lines, sets),
                sets as usize,
                "run {run}"
            );
        }
        assert_eq!(SetIndex::named("linear", 80), Some(SetIndex::Linear));
        assert_eq!(SetIndex::named("ipoly", 80), None);
    }

    /// `sectors_of` as a walk over every sector of the line (its definition).
    fn sectors_by_walk(c: &Cache, m: Mask) -> Mask {
        let sb = c.sector_bytes as u32;
        let one: Mask = if sb >= 128 { Mask::MAX } else { (1 << sb) - 1 };
        let mut out = 0;
        let mut s = 0;
        while s < c.line_bytes as u32 {
            if (m >> s) & one != 0 {
                out |= one << s;
            }
            s += sb;
        }
        out & c.full()
    }

    #[test]
    fn sectors_of_widens_each_touched_sector() {
        let mut state = 7u64;
        for (line, sector) in [
            (128, 32),
            (128, 128),
            (128, 1),
            (64, 32),
            (32, 64),
            (96, 32),
        ] {
            let c = Cache::new(&CacheGeometry {
                size_bytes: 4096,
                ways: 1,
                line_bytes: line,
                sector_bytes: sector,
                replacement: "lru".into(),
                set_index: SetIndex::Linear,
            })
            .unwrap();
            for k in 0..2000 {
                let r = crate::rng::splitmix64(&mut state) as u128;
                let m = match k % 4 {
                    0 => r << 64 | crate::rng::splitmix64(&mut state) as u128,
                    1 => 1 << (r % 128),
                    2 => (r & 0xff) << ((r >> 8) % 121),
                    _ => 0,
                };
                assert_eq!(
                    c.sectors_of(m),
                    sectors_by_walk(&c, m),
                    "{line}/{sector} {m:#x}"
                );
            }
        }
    }

    fn cache(size: u64, ways: u32, repl: &str) -> Cache {
        Cache::new(&CacheGeometry {
            size_bytes: size,
            ways,
            line_bytes: 128,
            sector_bytes: 32,
            replacement: repl.into(),
            set_index: SetIndex::Linear,
        })
        .unwrap()
    }

    fn fill(c: &mut Cache, addr: u64) -> usize {
        let i = match c.slot_for(addr, 0) {
            Slot::Free(i) | Slot::Victim(i) => i,
            Slot::Busy(_) => panic!("busy"),
        };
        c.install(i, addr);
        c.line_mut(i).valid = c.full();
        i
    }

    #[test]
    fn sectors_round_up_masks() {
        let c = cache(1024, 2, "lru");
        assert_eq!(c.sectors_of(0b1), 0xFFFF_FFFF);
        assert_eq!(c.sectors_of(1 << 40), 0xFFFF_FFFF << 32);
        assert_eq!(c.sector_count(c.sectors_of(1 | 1 << 100)), 2);
        assert_eq!(c.sectors_of(Mask::MAX), Mask::MAX);
    }

    /// 1 KiB, 2 ways, 128 B lines: 4 sets; lines 0, 4, 8 share set 0.
    #[test]
    fn lru_and_fifo_pick_different_victims() {
        for (repl, victim_line) in [("lru", 4 * 128u64), ("fifo", 0)] {
            let mut c = cache(1024, 2, repl);
            fill(&mut c, 0);
            fill(&mut c, 4 * 128);
            let i = c.find(0).unwrap();
            c.touch(i);
            match c.slot_for(8 * 128, 0) {
                Slot::Victim(v) => assert_eq!(c.line(v).tag, victim_line, "{repl}"),
                s => panic!("{s:?}"),
            }
        }
    }

    /// Clean evict-first lines go before the policy's choice; in-flight lines never go, and
    /// a set of them reports when the first lands.
    #[test]
    fn eviction_classes_and_pins() {
        let mut c = cache(1024, 2, "lru");
        let a = fill(&mut c, 0);
        let b = fill(&mut c, 4 * 128);
        c.line_mut(b).class = EvClass::First;
        assert_eq!(c.slot_for(8 * 128, 0), Slot::Victim(b));
        c.line_mut(b).dirty = 1;
        assert_eq!(
            c.slot_for(8 * 128, 0),
            Slot::Victim(a),
            "dirty first-class lines lose their precedence"
        );
        c.line_mut(a).ready = 50;
        c.line_mut(b).ready = 70;
        assert_eq!(c.slot_for(8 * 128, 10), Slot::Busy(50));
        assert_eq!(c.slot_for(8 * 128, 60), Slot::Victim(a));
    }

    #[test]
    fn masked_copy_copies_only_the_mask() {
        let src = [7u8; 128];
        let mut dst = [0u8; 128];
        copy_masked(&mut dst, &src, 0b1011 | 1 << 127);
        assert_eq!(&dst[..5], &[7, 7, 0, 7, 0]);
        assert_eq!(dst[127], 7);
        let mut all = [0u8; 128];
        copy_masked(&mut all, &src, Mask::MAX);
        assert_eq!(all, src);
    }
}
