//! The timed memory hierarchy: one L1 per SM (`SmMemory`), and the `Backend` all SMs share —
//! L2 slices behind an interconnect, and DRAM channels. Every global, local, shared, constant
//! and parameter access runs its configured memory program (`mem::program`, Habermaier §4)
//! through `exec::run`, which gives each micro step its time; global values travel through the
//! caches' data, so an SM's L1 can hold a stale copy, as the formal model allows.
//!
//! Invariants:
//! - `GlobalMemory` is DRAM. A global byte's current value is the L1 copy for that SM's
//!   reads through L1, else the L2 copy, else DRAM; the default programs keep L1 free of dirty
//!   global data (4.1 discards the line), so L2 ∪ DRAM is the coherent view.
//! - At the end of each launch every dirty L1 line is written back to L2 and the L2's dirty
//!   bytes are copied to DRAM for the host to read (the L2 keeps them: it persists across the
//!   run's launches, as on hardware); the next launch starts with cold L1s (the formal `flush`
//!   rule at the grid boundary).
//! - Local lines carry a private tag above `LOCAL_TAG` and no values.

mod exec;
mod txn;

pub use exec::{
    run, step, step_timed, Ctx, Done, OpState, ProgramError, Stepped, Timing, Traffic, Wait,
};
pub use txn::{AtomicArgs, LineReduce, Target, Txn};

use crate::config::Config;
use crate::mem::cache::{Cache, INVALID};
use crate::mem::dram::Dram;
use crate::mem::interconnect::{Interconnect, SliceMap};
use crate::mem::program::Compiled;
use crate::mem::server::Server;
use crate::mem::GlobalMemory;
use crate::stats::MemCounters;

/// Tags of local lines lie at and above this (global addresses are far below).
pub const LOCAL_TAG: u64 = 1 << 62;

/// The cache tag of a warp's interleaved local address: the warp's GPU-wide slot above bit 40
/// (512 KiB × 64 lanes = 2^25 bytes of local memory per warp fit below), so warps never share
/// local lines.
pub fn local_tag(warp_id: u64, interleaved: u64) -> u64 {
    LOCAL_TAG | (warp_id << 40) | interleaved
}

/// Round-trip (load-to-use) cycles from the SM to each place a step can reach: a micro step
/// costs the distance from where the operation is to the farthest place it touches, so the
/// paper's 4.2 pays exactly `l1.hit_latency`, `l2.hit_latency` or `dram.latency` (docs/memory.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Costs {
    pub l1: u32,
    pub l2: u32,
    pub dram: u32,
    pub shared: u32,
    pub constant: u32,
    pub param: u32,
}

impl Costs {
    pub fn of(cfg: &Config) -> Costs {
        Costs {
            l1: cfg.l1.hit_latency,
            l2: cfg.l2.hit_latency,
            dram: cfg.dram.latency,
            shared: cfg.latency.shared,
            constant: cfg.latency.constant,
            param: cfg.latency.param,
        }
    }
}

/// The per-SM part: the L1, its miss status holding registers and the shared-memory bank
/// locks of `atom.shared` (4.5).
pub struct SmMemory {
    pub l1: Cache,
    /// The cycle each MSHR frees (one per L1 line in flight).
    mshr_free: Vec<u64>,
    /// The cycle each shared-memory bank's lock is released.
    bank_free: Vec<u64>,
    /// The cycle from which the SM's TMA engine can issue its next line request.
    pub tma_free: u64,
    /// Changes to the MSHRs and bank locks (`changes`).
    resource_changes: u64,
}

impl SmMemory {
    pub fn new(cfg: &Config) -> SmMemory {
        SmMemory {
            l1: Cache::new(&cfg.l1_geometry()).expect("validated L1 geometry"),
            mshr_free: vec![0; cfg.l1.mshrs.max(1) as usize],
            bank_free: vec![0; cfg.sm.shared_banks.max(1) as usize],
            tma_free: 0,
            resource_changes: 0,
        }
    }

    /// A count that moves whenever the MSHRs or the bank locks may have changed (an
    /// operation blocked on them waits for it to move; `Cache::set_changes` for lines).
    pub fn resource_changes(&self) -> u64 {
        self.resource_changes
    }

    /// Lock (`PENDING`) or free at `at` the shared-memory banks in the mask `banks`.
    fn set_banks(&mut self, banks: crate::mem::cache::Mask, at: u64) {
        self.resource_changes += 1;
        for (b, f) in self.bank_free.iter_mut().enumerate() {
            if banks >> b & 1 == 1 {
                *f = at;
            }
        }
    }

    fn set_mshr(&mut self, m: usize, free: u64) {
        self.resource_changes += 1;
        self.mshr_free[m] = free;
    }
}

/// The shared part: L2 slices with their bandwidth, the interconnect and DRAM.
pub struct Backend {
    pub slices: Vec<Cache>,
    slice_bw: Vec<Server>,
    pub icnt: Interconnect,
    pub dram: Dram,
    l2_line: u32,
    /// Which slice holds an address.
    slice_map: SliceMap,
    /// Bytes each L2 slice and each DRAM channel moved in this launch (reads, writes, fills
    /// and write-backs), for their utilisation (`stats::ComponentReport`).
    pub slice_bytes: Vec<u64>,
    pub channel_bytes: Vec<u64>,
}

impl Backend {
    /// Cold L2 slices and idle ports, servers and banks for `cfg`.
    pub fn new(cfg: &Config) -> Backend {
        let n = cfg.l2.slices.max(1);
        let per_slice = (cfg.l2.bytes_per_cycle / n).max(1);
        Backend {
            slices: (0..n)
                .map(|_| Cache::new(&cfg.l2_slice_geometry()).expect("validated L2 geometry"))
                .collect(),
            slice_bw: (0..n).map(|_| Server::new(per_slice)).collect(),
            icnt: cfg.interconnect_model(),
            dram: Dram::new(&cfg.dram_geometry()).expect("validated DRAM geometry"),
            l2_line: cfg.l2.line_bytes,
            slice_map: SliceMap::new(cfg),
            slice_bytes: vec![0; n as usize],
            channel_bytes: vec![0; cfg.dram.channels.max(1) as usize],
        }
    }

    /// A new launch restarts the cycle count: ports, servers and banks become idle; the L2's
    /// contents stay.
    pub fn new_launch(&mut self) {
        self.slice_bw.iter_mut().for_each(Server::reset);
        self.slice_bytes.iter_mut().for_each(|b| *b = 0);
        self.channel_bytes.iter_mut().for_each(|b| *b = 0);
        self.icnt.new_launch();
        self.dram.new_launch();
        for s in &mut self.slices {
            let used: Vec<usize> = s.used().collect();
            for i in used {
                s.line_mut(i).ready = 0;
            }
        }
    }

    /// `Cache::changes` summed over the slices: moves when any slice's lines may have.
    pub fn slice_changes(&self) -> u64 {
        self.slices.iter().map(Cache::changes).sum()
    }

    /// The slice holding the L2 line of `addr`.
    pub fn slice_of(&self, addr: u64) -> usize {
        self.slice_map.slice_of(addr) as usize
    }

    /// End of a launch, for one SM: its dirty L1 lines are written back to L2 (the formal
    /// `flush` needs a clean L1; the next launch starts with a cold one).
    pub fn write_back_sm(
        &mut self,
        m: &mut SmMemory,
        sm: u32,
        global: &mut GlobalMemory,
        counters: &mut MemCounters,
    ) {
        let dirty: Vec<usize> = m.l1.used().filter(|&i| m.l1.line(i).dirty != 0).collect();
        for i in dirty {
            // Time has stopped: nothing is in flight, so room in L2 is always found. The
            // traffic is booked far past the launch (at half the clock's range: the calendars
            // add latencies and walk forward from it, which near u64::MAX overflowed and, in
            // release builds, wrapped the interconnect's queueing count).
            let _ = exec::write_back_l1(
                self,
                m,
                sm,
                global,
                i,
                u64::MAX / 2,
                counters,
                &mut Timing::Calendars,
            );
        }
    }

    /// Copy the L2's dirty global bytes to DRAM so the host reads the coherent values; the
    /// lines stay dirty and cached (the L2 persists across launches).
    pub fn sync_host(&self, global: &mut GlobalMemory) {
        for s in &self.slices {
            for i in s.used() {
                let l = s.line(i);
                if l.dirty != 0 && l.tag < LOCAL_TAG {
                    global.write_raw(l.tag, s.data(i), l.dirty);
                }
            }
        }
    }
}

/// The programs of every operation, indexed by `OpProgram`, resolved once from the config and
/// compiled to macro steps.
pub struct ProgramTable {
    progs: Vec<Compiled>,
}

/// Which program an access runs (`mem::program::library::ALL` names, in that order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpProgram(usize);

impl ProgramTable {
    pub fn new(cfg: &Config) -> ProgramTable {
        ProgramTable {
            progs: crate::mem::program::library::ALL
                .iter()
                .map(|(name, _)| {
                    Compiled::new(cfg.memory_program(name))
                        .expect("the config loader compiled every program")
                })
                .collect(),
        }
    }

    pub fn get(&self, p: OpProgram) -> &Compiled {
        &self.progs[p.0]
    }
}

/// The library name of the program for an access (`kind` is "ld", "st", "atom" or "red").
pub fn program_name(
    kind: &str,
    space: gpusim_isa::Space,
    cop: Option<gpusim_isa::CacheOp>,
    volatile: bool,
) -> &'static str {
    use gpusim_isa::{CacheOp as C, Space as S};
    match (kind, space) {
        ("atom", S::Shared) | ("red", S::Shared) => "atom.shared",
        ("atom", _) => "atom.global",
        ("red", _) => "red.global",
        ("ld", S::Shared) => "ld.shared",
        ("st", S::Shared) => "st.shared",
        ("ld", S::Const) => "ld.const",
        ("ld", S::Param) => "ld.param",
        ("ld", S::Local) => match cop {
            Some(C::Cg) => "ld.local.cg",
            Some(C::Cs) => "ld.local.cs",
            Some(C::Lu) => "ld.local.lu",
            Some(C::Cv) => "ld.local.cv",
            _ => "ld.local.ca",
        },
        ("ld", _) if volatile => "ld.global.volatile",
        ("ld", _) => match cop {
            Some(C::Cg) => "ld.global.cg",
            Some(C::Cs) => "ld.global.cs",
            Some(C::Lu) => "ld.global.lu",
            Some(C::Cv) => "ld.global.cv",
            _ => "ld.global.ca",
        },
        (_, S::Local) => match cop {
            Some(C::Cg) => "st.local.cg",
            Some(C::Cs) => "st.local.cs",
            Some(C::Wt) => "st.local.wt",
            _ => "st.local.wb",
        },
        _ if volatile => "st.global.volatile",
        _ => match cop {
            Some(C::Cg) => "st.global.cg",
            Some(C::Cs) => "st.global.cs",
            Some(C::Wt) => "st.global.wt",
            _ => "st.global.wb",
        },
    }
}

impl OpProgram {
    /// The library name (`ld.global.ca`, ...).
    pub fn name(self) -> &'static str {
        crate::mem::program::library::ALL[self.0].0
    }

    /// Its index in `library::ALL`.
    pub fn index(self) -> usize {
        self.0
    }
}

/// The table index of library program `name`.
pub fn program_id(name: &str) -> OpProgram {
    OpProgram(
        crate::mem::program::library::ALL
            .iter()
            .position(|(n, _)| *n == name)
            .expect("a library program name"),
    )
}

/// The formal `flush` rule fired by a GPU- or system-scope fence on one SM (our decision for
/// gap 2: only lines not in flight, and dirty ones written back first so that nothing is lost):
/// every global L1 line is dropped, local lines stay.
/// Whether SM memory `m`'s L1 holds a dirty global line (what a `flush` would write back).
pub fn has_dirty_global(m: &SmMemory) -> bool {
    (0..m.l1.n_ways()).any(|i| {
        let l = m.l1.line(i);
        l.tag != INVALID && l.tag < LOCAL_TAG && l.dirty != 0
    })
}

pub fn flush_l1_global(
    back: &mut Backend,
    m: &mut SmMemory,
    sm: u32,
    global: &mut GlobalMemory,
    now: u64,
    counters: &mut MemCounters,
    tm: &mut Timing,
) {
    // Fences can be frequent (`__threadfence` in a loop): walk the ways without collecting.
    for i in 0..m.l1.n_ways() {
        let l = m.l1.line(i);
        if l.tag == INVALID || l.tag >= LOCAL_TAG || l.ready > now {
            continue;
        }
        // A write-back that finds no room in L2 now leaves the line for a later flush.
        if m.l1.line(i).dirty != 0
            && exec::write_back_l1(back, m, sm, global, i, now, counters, tm).is_err()
        {
            continue;
        }
        m.l1.invalidate(i);
        counters.l1_flushed += 1;
    }
}
