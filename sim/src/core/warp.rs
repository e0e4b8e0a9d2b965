//! A warp: its lanes' registers (per call frame), scoreboard, local memory, call frames and
//! reconvergence state.

use super::liveness::LiveTracker;
use crate::simt::{Mask, Reconvergence};
use gpusim_isa::{FuncId, Pc, SymbolId};

/// One function activation. All lanes of a warp that run share it (the token stack keeps the
/// active lanes in one activation); each lane has its own registers and frame bytes.
#[derive(Clone, Debug)]
pub struct Frame {
    pub func: FuncId,
    /// First register slot of this activation.
    pub reg_base: u32,
    /// Byte offset of this activation's frame in each lane's local memory.
    pub local_base: u32,
    /// The caller's variables that receive the callee's return parameters.
    pub ret_dst: Vec<SymbolId>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpState {
    Active,
    /// Waiting at `bar.sync`/`bar.red` for the barriers in this bit set (bit
    /// `simt::CLUSTER_BARRIER`: lanes of an independently scheduled warp at `barrier.cluster`).
    Barrier(u32),
    Completed,
}

/// `repr(C)` with the fields the scheduler reads for every resident warp in every cycle
/// (`sm::stages::classify`: state, readiness, age, unit) first, in one 64-byte line: an SM's
/// step touches one line per warp, not three (a memory-bound launch keeps 64 warps per SM
/// resident, and their lines miss the host's caches: vecadd 1M on V100 ran ~8 % faster).
/// `live` comes next because its flag is the niche `Option<Warp>` keeps its discriminant in
/// (the `Some` test of every slot then reads the same line).
#[repr(C, align(64))]
pub struct Warp {
    pub state: WarpState,
    /// Cycle from which the next instruction's registers are all ready (cached after every
    /// change of pc or of a register's ready time, so schedulers only compare numbers).
    pub next_ready: u64,
    /// Cycle from which the instruction at pc is fetched and decoded (after a control
    /// transfer the instruction buffer refills).
    pub fetch_ready: u64,
    /// Dispatch order on the SM (smaller is older), for oldest-first policies.
    pub age: u64,
    /// Index of the CTA slot on its SM.
    pub cta: usize,
    /// The unit kind the next instruction needs (None past the end of the body).
    pub next_unit: Option<super::program::Unit>,
    /// The wait for `next_ready` is on a long-latency producer.
    pub wait_long: bool,
    /// Why the warp cannot issue before `fetch_ready` (fetch, reconvergence, fence, sleep).
    pub fetch_reason: crate::stats::Stall,
    /// Livelock detection (`core::liveness`).
    pub live: LiveTracker,
    pub warp_in_cta: u32,
    pub warp_size: u32,
    /// Lanes that hold a thread (a partial last warp has fewer).
    pub valid: Mask,
    /// Thread index (x, y, z) of each lane.
    pub tid: Vec<[u32; 3]>,
    /// Register slots × lanes, slot-major: `regs[slot * warp_size + lane]`.
    pub regs: Vec<u64>,
    /// Cycle at which each register slot may be read again.
    pub ready: Vec<u64>,
    /// Whether that slot's pending producer is a long-latency (DRAM-backed) access.
    pub ready_long: Vec<bool>,
    pub frames: Vec<Frame>,
    pub local: Vec<Vec<u8>>,
    pub simt: Box<dyn Reconvergence>,
    pub instructions: u64,
    /// Cycle by which every memory operation the warp has issued has completed (a fence
    /// waits for it).
    pub mem_done: u64,
    /// Memory instructions whose operations the memory system still runs
    /// (`memory_engine: components`; a fence waits for none to be left).
    pub mem_in_flight: u32,
    /// The cycle a fence (or a releasing mbarrier arrive) of this warp was first held back
    /// by its memory operations in flight: the fence's own cost runs from then, beside the
    /// drain, as an H100 overlaps the two waits (`Warp::fence_done`).
    pub fence_from: Option<u64>,
    /// Scratch for the coalescer: the current memory instruction's per-lane accesses and the
    /// sector or word ids it sorts (reused, so steady state does not allocate).
    pub mem_accesses: Vec<crate::mem::coalesce::LaneAccess>,
    pub mem_keys: Vec<u64>,
    /// Scratch for the memory programs (`core::exec::memory`): each executing lane's
    /// (lane, space, address, bytes), its global accesses, their lines, the operations run
    /// on them and the global values a store writes (address, size, value).
    pub mem_lanes: Vec<(u32, gpusim_isa::Space, u64, u32)>,
    pub mem_global: Vec<crate::mem::coalesce::LaneAccess>,
    pub mem_lines: Vec<(u64, crate::mem::cache::Mask)>,
    pub mem_txns: Vec<crate::mem::hierarchy::Txn>,
    pub mem_values: Vec<(u64, u32, u64)>,
    /// `cp.async` copies issued and not yet landed in shared memory, in issue order (the SM
    /// lands each at its `ready` cycle: `Sm::land_async_copies`).
    pub async_copies: Vec<AsyncCopy>,
    /// The warp's open `cp.async` group: copies issued now join it; `commit_group` closes it
    /// (groups below this number are committed). Kept per warp, not per thread: a wait then
    /// covers every lane's groups, never fewer than the thread's own (docs/memory.md).
    pub async_group: u64,
    /// The groups of the warp's `cp.async` instructions whose reads the component memory
    /// system still runs (one entry per instruction; their copies are not in `async_copies`
    /// yet): `cp.async.wait_group` does not issue while one of the groups it waits for is here.
    pub async_in_flight: Vec<u64>,
    /// Bulk groups, pending landings, mbarrier completions and suspensions (Hopper).
    pub hopper: super::async_state::WarpAsync,
    /// The warp's wgmma groups and its position in its warpgroup's wgmma sequence.
    pub wgmma: super::wgmma_state::WarpWgmma,
}

/// One lane's `cp.async`: `len` bytes (source bytes, then the zero fill) for the CTA's shared
/// memory at `addr`, landing at cycle `ready`; `group` is the commit group it belongs to.
#[derive(Clone, Copy, Debug)]
pub struct AsyncCopy {
    pub ready: u64,
    pub group: u64,
    pub addr: u64,
    pub len: u8,
    pub data: [u8; 16],
}

impl Warp {
    pub fn frame(&self) -> &Frame {
        self.frames.last().expect("a running warp has a frame")
    }

    pub fn func(&self) -> FuncId {
        self.frame().func
    }

    pub fn pc(&self) -> Pc {
        self.simt.pc()
    }

    #[inline]
    pub fn slot(&self, reg: u32) -> usize {
        (self.frame().reg_base + reg) as usize
    }

    #[inline]
    pub fn read(&self, reg: u32, lane: usize) -> u64 {
        self.regs[self.slot(reg) * self.warp_size as usize + lane]
    }

    #[inline]
    pub fn write(&mut self, reg: u32, lane: usize, v: u64) {
        let i = self.slot(reg) * self.warp_size as usize + lane;
        self.regs[i] = v;
    }

    /// Push a callee activation with `n_regs` registers and a frame of `frame_bytes`.
    pub fn push_frame(
        &mut self,
        func: FuncId,
        n_regs: u32,
        caller_regs: u32,
        caller_frame_bytes: u32,
        ret_dst: Vec<SymbolId>,
    ) {
        let top = self.frame();
        let reg_base = top.reg_base + caller_regs;
        // Saturating: a frame past 4 GiB lies beyond `sm.local_bytes_per_thread`, where every
        // access faults, instead of wrapping onto the caller's frame.
        let local_base = top.local_base.saturating_add(caller_frame_bytes);
        let need = (reg_base + n_regs) as usize;
        if self.ready.len() < need {
            self.ready.resize(need, 0);
            self.ready_long.resize(need, false);
            self.regs.resize(need * self.warp_size as usize, 0);
        }
        self.frames.push(Frame {
            func,
            reg_base,
            local_base,
            ret_dst,
        });
    }

    /// Keep the warp from issuing before `until`, for reason `why` (the later hold wins).
    pub fn hold(&mut self, until: u64, why: crate::stats::Stall) {
        if until > self.fetch_ready {
            self.fetch_ready = until;
            self.fetch_reason = why;
        }
    }

    /// Recompute `next_ready` for the instruction at the current pc.
    /// When a fence issued at `now` that costs `cost` cycles is done: after the warp's memory
    /// operations (`mem_done`) and after its own cost, counted from when it first waited
    /// (`fence_from`, taken) — the drain and the fence overlap (docs/memory.md, "Fences").
    pub fn fence_done(&mut self, now: u64, cost: u64) -> u64 {
        let from = self.fence_from.take().unwrap_or(now).min(now);
        self.mem_done.max(now).max(from + cost)
    }

    pub fn refresh_ready(&mut self, prog: &super::program::Program) {
        let f = self.func().0 as usize;
        let pc = self.pc() as usize;
        (self.next_ready, self.wait_long) = match prog.funcs[f].deps.get(pc) {
            Some((reads, writes)) => self.regs_ready_at(reads, writes),
            // Past the end of the body: issue reports the fault.
            None => (0, false),
        };
        self.next_unit = prog.funcs[f].class.get(pc).map(|c| c.unit());
    }

    /// When the registers are all ready, and whether the last of them comes from a
    /// long-latency (DRAM-backed) producer.
    pub fn regs_ready_at(&self, reads: &[u32], writes: &[u32]) -> (u64, bool) {
        let base = self.frame().reg_base;
        let (mut t, mut long) = (0, false);
        for &r in reads.iter().chain(writes) {
            let i = (base + r) as usize;
            if self.ready[i] > t {
                t = self.ready[i];
                long = self.ready_long[i];
            }
        }
        (t, long)
    }

    /// Destinations become readable at `at`; `long` marks a long-latency producer.
    pub fn set_ready(&mut self, writes: &[u32], at: u64, long: bool) {
        let base = self.frame().reg_base;
        for &r in writes {
            self.ready[(base + r) as usize] = at;
            self.ready_long[(base + r) as usize] = long;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Warp;
    use std::mem::offset_of;

    #[test]
    fn the_fields_the_scheduler_reads_share_the_first_line() {
        assert_eq!(std::mem::align_of::<Warp>(), 64);
        for end in [
            offset_of!(Warp, state) + 8,
            offset_of!(Warp, next_ready) + 8,
            offset_of!(Warp, fetch_ready) + 8,
            offset_of!(Warp, age) + 8,
            offset_of!(Warp, next_unit) + 1,
            offset_of!(Warp, wait_long) + 1,
            offset_of!(Warp, fetch_reason) + 1,
        ] {
            assert!(end <= 64, "a scheduler field ends at byte {end}");
        }
    }
}
