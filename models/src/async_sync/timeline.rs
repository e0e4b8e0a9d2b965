//! Qualitative timelines (QualTL, Exo-GPU Fig. 15; digest §1.6), sets of them, the sync
//! timelines' full and temporal sets this checker uses (Fig. 16), and visibility levels
//! (digest §2.2).

/// The kind of agent that performs an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QualTl {
    /// A non-async instruction touching registers.
    Cuda1,
    /// A non-async instruction touching shared or global memory (the generic proxy).
    Cuda2,
    /// `cp.async` (non-bulk).
    Sm80,
    /// A bulk/tensor copy global → shared.
    TmaS,
    /// A bulk/tensor copy shared → global, reductions included.
    TmaG,
    /// wgmma's A operand in registers.
    WgA,
    /// wgmma's accumulator registers.
    WgD,
    /// wgmma's shared-memory operands.
    WgS,
}

impl QualTl {
    pub const ALL: [QualTl; 8] = [
        QualTl::Cuda1,
        QualTl::Cuda2,
        QualTl::Sm80,
        QualTl::TmaS,
        QualTl::TmaG,
        QualTl::WgA,
        QualTl::WgD,
        QualTl::WgS,
    ];

    pub fn name(self) -> &'static str {
        match self {
            QualTl::Cuda1 => "cuda1",
            QualTl::Cuda2 => "cuda2",
            QualTl::Sm80 => "Sm80",
            QualTl::TmaS => "tmaS",
            QualTl::TmaG => "tmaG",
            QualTl::WgA => "wgA",
            QualTl::WgD => "wgD",
            QualTl::WgS => "wgS",
        }
    }

    fn bit(self) -> u16 {
        1 << self as u16
    }

    /// The async proxy (PTX ISA memory consistency model, §8: TMA and wgmma operands).
    pub fn is_async_proxy(self) -> bool {
        ASYNC_PROXY.has(self)
    }
}

/// A set of timelines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QualSet(u16);

impl QualSet {
    pub const EMPTY: QualSet = QualSet(0);
    pub const ALL: QualSet = QualSet(0xFF);

    pub const fn of(qs: &[QualTl]) -> QualSet {
        let mut b = 0u16;
        let mut i = 0;
        while i < qs.len() {
            b |= 1 << qs[i] as u16;
            i += 1;
        }
        QualSet(b)
    }
    pub fn one(q: QualTl) -> QualSet {
        QualSet(q.bit())
    }
    pub fn has(self, q: QualTl) -> bool {
        self.0 & q.bit() != 0
    }
    pub fn union(self, o: QualSet) -> QualSet {
        QualSet(self.0 | o.0)
    }
    pub fn inter(self, o: QualSet) -> QualSet {
        QualSet(self.0 & o.0)
    }
    pub fn minus(self, o: QualSet) -> QualSet {
        QualSet(self.0 & !o.0)
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn subset_of(self, o: QualSet) -> bool {
        self.0 & !o.0 == 0
    }
    pub fn names(self) -> String {
        let v: Vec<&str> = QualTl::ALL
            .iter()
            .filter(|q| self.has(**q))
            .map(|q| q.name())
            .collect();
        format!("{{{}}}", v.join(", "))
    }
}

/// `cuda_in_order`'s full set (Fig. 16): transitive; every other timeline is temporal.
pub const CUDA_IN_ORDER_FULL: QualSet = QualSet::of(&[QualTl::Cuda1, QualTl::Cuda2]);
/// `cuda_generic_and_async_proxy`'s full set: what a commit-group or mbarrier Await
/// publishes (its temporal set is every timeline).
pub const GENERIC_AND_ASYNC_FULL: QualSet = QualSet::of(&[
    QualTl::Cuda1,
    QualTl::Cuda2,
    QualTl::Sm80,
    QualTl::TmaS,
    QualTl::TmaG,
    QualTl::WgS,
]);
/// `Sm80_generic`'s full set (`cp.async.wait_group`).
pub const SM80_GENERIC_FULL: QualSet = QualSet::of(&[QualTl::Cuda1, QualTl::Cuda2, QualTl::Sm80]);
/// `cuda_async_proxy`: the shared/global timelines of TMA and wgmma.
pub const ASYNC_PROXY: QualSet = QualSet::of(&[QualTl::TmaS, QualTl::TmaG, QualTl::WgS]);
/// `wgmma_fence_1` / `wgmma_fence_2` (`wgmma.fence`).
pub const WGMMA_FENCE_1: QualSet = QualSet::of(&[QualTl::Cuda1, QualTl::WgA, QualTl::WgD]);
pub const WGMMA_FENCE_2: QualSet = QualSet::of(&[QualTl::WgA, QualTl::WgD]);
/// The register timelines (not forwarded between threads: registers are private).
pub const REGISTER_TLS: QualSet = QualSet::of(&[QualTl::Cuda1, QualTl::WgA, QualTl::WgD]);

/// Visibility levels, totally ordered (digest §2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    AtomicOnly,
    Unordered,
    Temporal,
    Full,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::AtomicOnly => "atomic_only",
            Level::Unordered => "unordered",
            Level::Temporal => "temporally_ordered",
            Level::Full => "fully_ordered",
        }
    }
}

/// One agent's visibility of one record: the timelines on which it is at least unordered,
/// at least temporally ordered, fully ordered (full ⊆ temporal ⊆ unordered).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vis {
    pub unordered: QualSet,
    pub temporal: QualSet,
    pub full: QualSet,
}

impl Vis {
    pub fn unordered(q: QualSet) -> Vis {
        Vis {
            unordered: q,
            ..Vis::default()
        }
    }
    pub fn full(q: QualSet) -> Vis {
        Vis {
            unordered: q,
            temporal: q,
            full: q,
        }
    }
    /// The pointwise join with full on `full` and temporal on `temporal` (Fence/Await raise).
    pub fn raise(&mut self, full: QualSet, temporal: QualSet) {
        self.full = self.full.union(full);
        self.temporal = self.temporal.union(full).union(temporal);
        self.unordered = self.unordered.union(self.temporal);
    }
    pub fn join(&mut self, o: Vis) {
        self.full = self.full.union(o.full);
        self.temporal = self.temporal.union(o.temporal);
        self.unordered = self.unordered.union(o.unordered);
    }
    /// The level on `q`.
    pub fn level(&self, q: QualTl) -> Option<Level> {
        if self.full.has(q) {
            Some(Level::Full)
        } else if self.temporal.has(q) {
            Some(Level::Temporal)
        } else if self.unordered.has(q) {
            Some(Level::Unordered)
        } else {
            None
        }
    }
}
