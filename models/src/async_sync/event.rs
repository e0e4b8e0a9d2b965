//! The events the simulator records for the asynchronous-synchronisation checker, defined
//! here so that the model never depends on the simulator (`sim/tests/tidy.rs`).
//!
//! One event is one warp instruction at issue (its lanes, its byte ranges as the simulator
//! resolved them from the registers before executing it), or an mbarrier phase completing
//! (a TMA landing or an arrive). Register operands are not in the event: the checker reads
//! them from the IR by `(func, pc)`.

/// A space the checker tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemSpace {
    /// The issuing CTA's shared memory (offsets in its window).
    Shared,
    Global,
    /// The shared memory of another CTA of the issuer's cluster (distributed shared memory),
    /// by its linear CTA id; offsets in that CTA's window. The checker keys it with that
    /// CTA's own `Shared` locations (digest §2.3 bug 1: one CTA's writes into a peer).
    PeerShared(u32),
}

impl MemSpace {
    pub fn name(self) -> &'static str {
        match self {
            MemSpace::Shared => "shared",
            MemSpace::Global => "global",
            MemSpace::PeerShared(_) => "shared::cluster",
        }
    }

    /// Shared memory, the own CTA's or a peer's.
    pub fn is_shared(self) -> bool {
        matches!(self, MemSpace::Shared | MemSpace::PeerShared(_))
    }
}

/// A run of bytes `[start, start + len)` in one space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Range {
    pub space: MemSpace,
    pub start: u64,
    pub len: u64,
}

impl Range {
    pub fn new(space: MemSpace, start: u64, len: u64) -> Range {
        Range { space, start, len }
    }
    pub fn end(&self) -> u64 {
        self.start + self.len
    }
}

/// Sort and merge overlapping or touching ranges of the same space.
pub fn merge_ranges(mut v: Vec<Range>) -> Vec<Range> {
    v.retain(|r| r.len > 0);
    v.sort_unstable();
    let mut out: Vec<Range> = Vec::with_capacity(v.len());
    for r in v {
        match out.last_mut() {
            Some(l) if l.space == r.space && r.start <= l.end() => {
                let e = l.end().max(r.end());
                l.len = e - l.start;
            }
            _ => out.push(r),
        }
    }
    out
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// An ordinary (in-order, generic-proxy) instruction: its memory reads and writes
    /// (`atomic`: `atom`/`red`, which do not conflict with each other). Its register operands
    /// come from the IR.
    Generic {
        reads: Vec<Range>,
        writes: Vec<Range>,
        atomic: bool,
    },
    /// `wgmma.mma_async` by one warp: the shared bytes its A (descriptor) and B operands read
    /// for this warp's slice; `accumulate`: D is read (scale-d not the immediate 0).
    WgmmaIssue {
        smem: Vec<Range>,
        accumulate: bool,
    },
    WgmmaFence,
    WgmmaCommit,
    WgmmaWait {
        n: u32,
    },
    /// A bulk or tensor copy into this CTA's shared memory completing on the mbarrier at
    /// shared offset `mbar` (`complete_tx`).
    TmaLoad {
        smem: Vec<Range>,
        mbar: u64,
    },
    /// A bulk or tensor copy landing in other CTAs of the cluster, or multicast
    /// (`.multicast::cluster`, `ctaMask`): the same shared offsets `smem` of each CTA of
    /// `ctas` (linear ids, the issuer's own where its rank is a destination) are written, and
    /// each completes on its own barrier at shared offset `mbar` (`complete_tx` there).
    TmaLoadCluster {
        smem: Vec<Range>,
        mbar: u64,
        ctas: Vec<u32>,
    },
    /// A bulk or tensor copy (or reduction) from shared to global memory, in the warp's open
    /// bulk group.
    BulkStore {
        smem: Vec<Range>,
        global: Vec<Range>,
        reduce: bool,
    },
    BulkCommit,
    BulkWait {
        n: u32,
        read: bool,
    },
    /// `cp.async` (per thread, one warp's lanes together).
    CpAsync {
        smem: Vec<Range>,
        global: Vec<Range>,
    },
    CpAsyncCommit,
    /// `cp.async.wait_group n` / `wait_all` (None).
    CpAsyncWait {
        n: Option<u32>,
    },
    /// `cp.async.mbarrier.arrive`: an arrive carrying the warp's `cp.async` copies.
    CpAsyncMbarArrive {
        mbar: u64,
    },
    MbarInit {
        mbar: u64,
    },
    /// `mbarrier.arrive{.expect_tx}` on this CTA's barrier.
    MbarArrive {
        mbar: u64,
    },
    /// `mbarrier.arrive{.expect_tx}` through `.shared::cluster` addresses: an arrive on each
    /// (linear CTA id, shared offset) the executing lanes name, peers' barriers included
    /// (remote arrives).
    MbarArriveCluster {
        targets: Vec<(u32, u64)>,
    },
    /// A `test_wait`/`try_wait` that returned true for these lanes: they observed every
    /// completed phase of the barrier.
    MbarWaitDone {
        mbar: u64,
    },
    /// A `try_wait` that suspended these lanes until the phase of `parity` completes.
    MbarWaitPark {
        mbar: u64,
        parity: u64,
    },
    /// A phase of the barrier completed (no warp: the SM's event).
    MbarPhaseComplete {
        mbar: u64,
    },
    /// `fence.proxy.async` (None: every space).
    FenceProxyAsync {
        space: Option<MemSpace>,
    },
    /// `bar.sync`/`barrier.cta.sync`/`bar.red` (`wait`) or `bar.arrive` on barrier `id`.
    CtaBarrier {
        id: u32,
        wait: bool,
    },
    /// `barrier.cluster.arrive` (`wait` false) or `barrier.cluster.wait` of the cluster whose
    /// rank-0 CTA has linear id `cluster`.
    ClusterBarrier {
        cluster: u32,
        wait: bool,
    },
}

/// One recorded event. `warp` and `lanes` are meaningless for `MbarPhaseComplete`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncEvent {
    pub cycle: u64,
    pub sm: u32,
    /// The CTA's linear id in the grid and its index.
    pub cta: u32,
    pub ctaid: [u32; 3],
    pub warp: u32,
    pub lanes: u32,
    /// The instruction: (function id, pc); None for phase completions.
    pub at: Option<(u32, u32)>,
    pub kind: EventKind,
}
