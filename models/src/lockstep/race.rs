//! Data-race detection as the paper defines it (Def. 3.1 for the interleaving semantics,
//! Def. 4.1 for lock-step): two accesses to the same byte by distinct threads, at least one a
//! write, with no completed barrier (BARRIER_S, or a non-vacuous SYNC) between them. Because
//! the only synchronisation is a CTA-wide barrier, an epoch detector is exact: the shadow state
//! is cleared at each completed barrier and never otherwise (digest §3.4: a vacuous sync must
//! not end an epoch).
//!
//! Extensions from the digest (§4.5): atomics race with plain accesses but not with each
//! other, and accesses to one global byte from two CTAs race whenever one writes, because no
//! barrier orders CTAs; the cross-CTA detector is the same structure keyed by CTA and never
//! cleared within a launch.

use crate::ptx_exec::{Access, AccessKind};
use gpusim_isa::ir::{Pc, Space};
use std::collections::HashMap;

/// One recorded access: who (a thread within the CTA, or a CTA for the cross-CTA detector),
/// which thread, where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acc {
    pub who: u32,
    pub tid: u32,
    pub cta: u32,
    pub pc: Pc,
    pub kind: AccessKind,
}

/// The first two distinct accessors of a set: enough to name one accessor other than any
/// given one.
#[derive(Clone, Copy, Debug, Default)]
struct Two([Option<Acc>; 2]);

impl Two {
    fn other(&self, who: u32) -> Option<Acc> {
        self.0.iter().flatten().find(|a| a.who != who).copied()
    }
    fn add(&mut self, a: Acc) {
        match self.0 {
            [None, _] => self.0[0] = Some(a),
            [Some(x), None] if x.who != a.who => self.0[1] = Some(a),
            _ => {}
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    reads: Two,
    writes: Two,
    atomics: Two,
}

/// Shadow memory for one epoch: per byte, who read, wrote and updated it atomically.
#[derive(Clone, Debug, Default)]
pub struct Detector {
    cells: HashMap<u64, Cell>,
}

/// A conflicting pair found at byte `addr` of `space`: the earlier access and this one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub space: Space,
    pub addr: u64,
    pub earlier: Acc,
    pub later: Acc,
}

fn key(space: Space, addr: u64) -> Option<u64> {
    // Only global and shared bytes are shared variables; local, param and const are private or
    // read-only.
    match space {
        Space::Global => Some(addr & ((1 << 62) - 1)),
        Space::Shared => Some((1 << 62) | addr),
        _ => None,
    }
}

impl Detector {
    /// Record `access` by `acc` and report the first conflict with an earlier access of
    /// another accessor in this epoch.
    pub fn record(&mut self, access: &Access, acc: Acc) -> Option<Conflict> {
        let mut found = None;
        for i in 0..u64::from(access.size) {
            let addr = access.addr + i;
            let k = key(access.space, addr)?;
            let c = self.cells.entry(k).or_default();
            let hit = match access.kind {
                AccessKind::Read => c.writes.other(acc.who).or(c.atomics.other(acc.who)),
                AccessKind::Write => c
                    .writes
                    .other(acc.who)
                    .or(c.reads.other(acc.who))
                    .or(c.atomics.other(acc.who)),
                AccessKind::Atomic => c.writes.other(acc.who).or(c.reads.other(acc.who)),
            };
            match access.kind {
                AccessKind::Read => c.reads.add(acc),
                AccessKind::Write => c.writes.add(acc),
                AccessKind::Atomic => c.atomics.add(acc),
            }
            if found.is_none() {
                found = hit.map(|earlier| Conflict {
                    space: access.space,
                    addr,
                    earlier,
                    later: acc,
                });
            }
        }
        found
    }

    /// End the epoch: a barrier completed.
    pub fn clear(&mut self) {
        self.cells.clear();
    }
}
