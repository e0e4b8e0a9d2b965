//! The L2's partitions (`l2.partitions`, `l2.far_latency`; docs/memory.md "The L2's two
//! partitions"). On the GH100 the L2 is two partitions, each in front of half the SMs: a line
//! lives in the slice of its DRAM channel (its home), and an SM whose partition is not the
//! home's reads it across the link between them — ~155 cycles more than a near hit on an
//! H200 — after which a copy kept in the SM's own partition serves it near
//! (traces/microbench/l2_partition.yaml).
//!
//! The model keeps the data where it was (the home slice: one copy, so results cannot
//! change) and times the copies by their tags: a far access leaves a tag-only line (no valid
//! bytes) in the *mirror* slice — the slice at the home's position in the requester's
//! partition — where it takes a way like any line, so copies cost capacity as on the GPU; a
//! read that finds its copy there is near. A global store, atomic or reduction drops the
//! line's copies (dirty L1 lines written back later do not: their packets carry no address).
//! Copies are made only into a free way or over a clean line nobody waits for.
//!
//! Invariant: a mirror slice never looks up a copy's line for itself (the line's home is
//! another slice), so a copy is invisible to every memory program: timing only.

use crate::config::Config;
use crate::mem::cache::{Cache, Slot};

pub(super) struct Partitions {
    count: u32,
    /// Each SM's partition (`l2.partition_runs`, or equal runs).
    of_sm: Vec<u32>,
    slices: u32,
    far: u64,
    /// Per memory program (`OpProgram::index`): whether it writes global memory at L2.
    writes: Vec<bool>,
}

/// How an access at a home slice is served with respect to partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reach {
    /// The requester's partition is the home's.
    Near,
    /// Another partition, from the copy there.
    Copy,
    /// Another partition, across the link.
    Far,
}

impl Partitions {
    /// `None` for a single partition.
    pub fn new(cfg: &Config) -> Option<Partitions> {
        let count = cfg.l2.partitions;
        let runs = match &cfg.l2.partition_runs {
            Some(r) => r.clone(),
            None => (0..count)
                .map(|p| {
                    let at = |p: u32| (p as u64 * cfg.sm.count as u64 / count as u64) as u32;
                    at(p + 1) - at(p)
                })
                .collect(),
        };
        let pattern: Vec<u32> = runs
            .iter()
            .enumerate()
            .flat_map(|(k, &n)| std::iter::repeat_n(k as u32 % count, n as usize))
            .collect();
        let of_sm = (0..cfg.sm.count as usize)
            .map(|s| pattern[s % pattern.len()])
            .collect();
        (count > 1).then(|| Partitions {
            count,
            of_sm,
            slices: cfg.l2.slices,
            far: cfg.l2.far_latency as u64,
            writes: crate::mem::program::library::ALL
                .iter()
                .map(|(name, _)| {
                    name.starts_with("st.global") || *name == "atom.global" || *name == "red.global"
                })
                .collect(),
        })
    }

    /// The extra cycles of a far access.
    pub fn far_latency(&self) -> u64 {
        self.far
    }

    /// SM `sm`'s partition.
    pub fn of_sm(&self, sm: u32) -> u32 {
        self.of_sm[sm as usize]
    }

    /// Slice `s`'s partition: the slices in `count` contiguous runs (a DRAM channel's slices
    /// are adjacent, so a channel belongs to one partition).
    pub fn of_slice(&self, s: u32) -> u32 {
        s / (self.slices / self.count)
    }

    /// The slice of partition `p` at home slice `s`'s position.
    fn mirror(&self, s: u32, p: u32) -> u32 {
        let per = self.slices / self.count;
        p * per + s % per
    }

    /// An access by SM `sm` to line `line` (an L2 line address) at its home slice `home`,
    /// at cycle `now`, by program `prog` (`OpProgram::index`): how it is served, with the
    /// copies it makes or drops in `slices`.
    pub fn access(
        &self,
        slices: &mut [Cache],
        sm: u32,
        home: u32,
        line: u64,
        prog: usize,
        now: u64,
    ) -> Reach {
        let (mine, theirs) = (self.of_sm(sm), self.of_slice(home));
        if self.writes.get(prog).copied().unwrap_or(false) {
            // A write reaches the home: every other partition's copy is stale.
            for p in (0..self.count).filter(|&p| p != theirs) {
                let m = &mut slices[self.mirror(home, p) as usize];
                if let Some(i) = m.find(line) {
                    m.invalidate(i);
                }
            }
            return if mine == theirs {
                Reach::Near
            } else {
                Reach::Far
            };
        }
        if mine == theirs {
            return Reach::Near;
        }
        let m = &mut slices[self.mirror(home, mine) as usize];
        if let Some(i) = m.find(line) {
            m.touch(i);
            return Reach::Copy;
        }
        let way = match m.slot_for(line, now) {
            Slot::Free(i) => Some(i),
            Slot::Victim(i) if m.line(i).dirty == 0 => Some(i),
            _ => None,
        };
        if let Some(i) = way {
            m.install(i, line);
        }
        Reach::Far
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tiny.yaml's two SMs and two slices, split into two partitions: SM 0 and slice 0 in
    /// partition 0, SM 1 and slice 1 in partition 1.
    fn two() -> (Partitions, Vec<Cache>, usize, usize) {
        let set = |k: &str, v: &str| (k.to_string(), v.to_string());
        let cfg = Config::from_yaml(
            "tiny",
            crate::config::TINY_YAML,
            &[set("l2.partitions", "2"), set("l2.far_latency", "100")],
        )
        .unwrap();
        let slices = (0..2)
            .map(|_| Cache::new(&cfg.l2_slice_geometry()).unwrap())
            .collect();
        let id = |name: &str| crate::mem::hierarchy::program_id(name).index();
        (
            Partitions::new(&cfg).unwrap(),
            slices,
            id("ld.global.cg"),
            id("st.global.wb"),
        )
    }

    #[test]
    fn one_partition_needs_nothing() {
        let cfg = Config::from_yaml("tiny", crate::config::TINY_YAML, &[]).unwrap();
        assert!(Partitions::new(&cfg).is_none());
    }

    #[test]
    fn runs_assign_the_sms_in_turn() {
        let set = |k: &str, v: &str| (k.to_string(), v.to_string());
        let cfg = Config::from_yaml(
            "h100",
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../configs/hopper-h100.yaml"
            ))
            .unwrap(),
            &[set("l2.partition_runs", "[2, 3]")],
        )
        .unwrap();
        let p = Partitions::new(&cfg).unwrap();
        let of: Vec<u32> = (0..7).map(|s| p.of_sm(s)).collect();
        assert_eq!(of, [0, 0, 1, 1, 1, 0, 0], "the runs repeat");
        assert_eq!(p.of_sm(131), 0);
        assert_eq!((p.of_slice(0), p.of_slice(39), p.of_slice(40)), (0, 0, 1));
    }

    /// A read from the other partition is far once, then served by its copy; a read from the
    /// home's partition is near; the copy takes a way in the mirror slice.
    #[test]
    fn a_far_read_leaves_a_copy_that_serves_the_next() {
        let (p, mut slices, ld, _) = two();
        let line = 0x4000;
        assert_eq!(p.access(&mut slices, 0, 1, line, ld, 10), Reach::Far);
        assert!(slices[0].find(line).is_some(), "a tag in the mirror slice");
        assert_eq!(slices[0].line(slices[0].find(line).unwrap()).valid, 0);
        assert_eq!(p.access(&mut slices, 0, 1, line, ld, 20), Reach::Copy);
        assert_eq!(p.access(&mut slices, 1, 1, line, ld, 30), Reach::Near);
        assert_eq!(p.far_latency(), 100);
    }

    /// A store drops the other partitions' copies: the next read from there is far again.
    #[test]
    fn a_store_drops_the_copies() {
        let (p, mut slices, ld, st) = two();
        let line = 0x8000;
        p.access(&mut slices, 0, 1, line, ld, 10);
        assert_eq!(p.access(&mut slices, 1, 1, line, st, 20), Reach::Near);
        assert!(slices[0].find(line).is_none());
        assert_eq!(p.access(&mut slices, 0, 1, line, ld, 30), Reach::Far);
        // A store from the other partition is far, and leaves no copy.
        assert_eq!(p.access(&mut slices, 0, 1, line, st, 40), Reach::Far);
        assert!(slices[0].find(line).is_none());
    }

    /// tiny.yaml's L2 ways.
    fn cfg_ways() -> usize {
        Config::from_yaml("tiny", crate::config::TINY_YAML, &[])
            .unwrap()
            .l2
            .ways as usize
    }

    /// A copy never replaces a dirty line (it would need a write-back): with every way of
    /// the set dirty, the access is far and leaves no copy.
    #[test]
    fn a_copy_does_not_evict_dirty_lines() {
        let (p, mut slices, ld, _) = two();
        let line = 0x10000;
        let m = &mut slices[0];
        let set_lines: Vec<u64> = (1..)
            .map(|k| line + k * 128)
            .filter(|&l| m.set_of(l) == m.set_of(line))
            .take(cfg_ways())
            .collect();
        for l in set_lines {
            let slot = m.slot_for(l, 0);
            let crate::mem::cache::Slot::Free(i) = slot else {
                panic!("a free way for {l:#x}: {slot:?}")
            };
            m.install(i, l);
            m.line_mut(i).dirty = 1;
        }
        assert_eq!(p.access(&mut slices, 0, 1, line, ld, 10), Reach::Far);
        assert!(slices[0].find(line).is_none());
    }
}
