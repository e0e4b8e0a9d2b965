//! Per-warp and per-CTA state of the Hopper asynchronous machinery that the SM acts on after
//! an instruction: bulk commit groups, copies to land, mbarrier phases completed and threads
//! suspended in `mbarrier.try_wait`.

use super::landing::Landing;
use crate::simt::Mask;

/// One bulk copy of a warp's bulk groups (`cp.async.bulk{.tensor}` to global memory).
#[derive(Clone, Copy, Debug)]
pub struct BulkOp {
    pub group: u64,
    /// When its shared-memory source has been read (`wait_group.read`).
    pub read_done: u64,
    /// When its global writes have completed.
    pub done: u64,
}

/// Lanes of a warp suspended in `mbarrier.try_wait` until the phase of `parity` of the
/// barrier at shared address `addr` completes; `reg` then receives true.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MbarPark {
    pub addr: u64,
    pub parity: u64,
    pub reg: u32,
    pub lanes: Mask,
}

/// A parked warp as its CTA records it.
#[derive(Clone, Copy, Debug)]
pub struct MbarWaiter {
    pub slot: usize,
    pub park: MbarPark,
}

/// The warp's side of the asynchronous units.
#[derive(Default)]
pub struct WarpAsync {
    /// The open bulk group (groups below it are committed), per warp as the hardware keeps it.
    pub bulk_group: u64,
    pub bulk_ops: Vec<BulkOp>,
    /// Groups of the stores still in the component memory system (`tma_job`), one entry per
    /// copy: a `cp.async.bulk.wait_group` for them does not issue yet.
    pub bulk_in_flight: Vec<u64>,
    /// Copies issued by the last instruction, for the SM's landing queue.
    pub landings_out: Vec<Landing>,
    /// Shared addresses of mbarriers whose phase the last instruction completed.
    pub mbar_done: Vec<u64>,
    /// Lanes the last instruction suspended in `try_wait`.
    pub parks: Vec<MbarPark>,
    /// The register budget set by `setmaxnreg` (None: the kernel's).
    pub reg_budget: Option<u32>,
    /// Deliveries to cluster peers by the last instruction: (rank, what lands there).
    pub remote_out: Vec<(u32, super::landing::Landing)>,
    /// `barrier.cluster` operations of the last instruction: `Arrive(threads)` or
    /// `Wait(phases)` (the phases the waiting lanes' arrivals need).
    pub cluster_ops: Vec<ClusterOp>,
    /// Timing-only `wgmma` operands already bounds-checked: (descriptor, shape, shared
    /// size), direct-mapped (`exec::wgmma`).
    pub checked: Vec<[u64; 3]>,
    /// When this warp's stores and arrives to peers so far have all landed.
    pub remote_done: u64,
    /// Registers the last instruction's peer loads will write (held until the replies).
    pub remote_loads: Vec<u32>,
    /// Replies still due per register: (register, count).
    pub pending_regs: Vec<(u32, u32)>,
    /// `barrier.cluster.arrive`s each lane has made (its wait waits for that many phases).
    pub cluster_arrivals: Vec<u32>,
}

/// A `barrier.cluster` operation for the GPU's cluster barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterOp {
    Arrive(u32),
    /// Wait for this many completed phases; these lanes wait (independent thread scheduling
    /// parks only them).
    Wait(u32, crate::simt::Mask),
}
