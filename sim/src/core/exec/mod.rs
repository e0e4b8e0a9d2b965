//! Executing one warp instruction: per-lane semantics over the lanes that run it (active and
//! guard true), memory accesses with bounds and alignment checks, and the control-flow effect
//! handed to the reconvergence policy. When things happen is not decided here.

mod alu;
mod async_copy;
mod bulk;
mod cluster;
pub(crate) use cluster::extend;
mod collective;
mod control;
mod matrix;
mod mbarrier;
mod memory;
mod record;
pub use memory::LOCAL_LIMIT_KEY;
mod sync;
mod tensor;
mod wgmma;
mod wmma;

use super::fault::{Fault, FaultKind};
use super::program::{Loc, Program};
use super::warp::Warp;
use crate::mem::{self, decode_generic, load_le, store_le, GlobalMemory};
use crate::simt::{Flow, Mask, Reason, TokenKind};
use gpusim_isa::semantics as sem;
use gpusim_isa::*;

/// The launch-wide facts an instruction can observe.
pub struct LaunchGeom {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Where the dynamic shared window starts: the static data, padded to the window's
    /// declared alignment (`shared.dynamic_offset`).
    pub static_shared: u32,
    /// Where the kernel's `.shared` variables live (`Module::shared_layout`).
    pub shared: SharedLayout,
    pub dynamic_shared: u32,
    pub kernel: String,
    /// The cluster shape (1, 1, 1 without clusters) and whether the launch named one.
    pub cluster: [u32; 3],
    pub explicit_cluster: bool,
    /// `cluster` holds more than one CTA (kept as a flag: every shared access asks).
    pub multi_cta_cluster: bool,
}

/// Everything outside the warp that an instruction may read or change.
pub struct ExecEnv<'a> {
    pub prog: &'a Program,
    /// Global memory's values: only in the memory exchange (`uses_memory_system`).
    pub global: Option<&'a mut GlobalMemory>,
    pub shared: &'a mut [u8],
    pub consts: &'a [u8],
    pub params: &'a [u8],
    pub geom: &'a LaunchGeom,
    pub ctaid: [u32; 3],
    pub hw_warp: u32,
    pub sm_id: u32,
    pub n_sms: u32,
    pub max_warps: u32,
    pub cycle: u64,
    pub local_limit: u32,
    /// Bumped whenever memory changes (livelock detection).
    pub epoch: &'a mut u64,
    /// Sector, line and bank geometry for the coalescer (`Config::coalescer`).
    pub coalescer: mem::coalesce::Geometry,
    /// The memory hierarchy the instruction's memory programs run on.
    pub mem: MemPort<'a>,
    /// The CTA's record of each warpgroup's wgmma instruction sequence.
    pub wgmma_log: &'a mut super::wgmma_state::WarpgroupLog,
    /// Timing-only run: `mma` and `wgmma` leave D unchanged (`RunOptions::skip_tensor_math`).
    pub skip_tensor_math: bool,
    /// The SM's TMA engine (`exec::bulk`), if the config has one.
    pub tma: Option<crate::config::TmaConfig>,
    /// Distributed shared memory (`exec::cluster`), if the config has clusters.
    pub cluster: Option<crate::config::ClusterConfig>,
    /// What fences cost once the warp's memory operations are done (`sm.fence`).
    pub fence: crate::config::FenceConfig,
    /// The SM's power-model counts: tensor instructions add their operands' bits.
    pub energy: &'a mut crate::power::EnergyEvents,
}

/// The memory hierarchy as one SM's instruction sees it (`mem::hierarchy`).
pub struct MemPort<'a> {
    pub sm: &'a mut mem::hierarchy::SmMemory,
    /// The L2 slices, interconnect and DRAM all SMs share: only in the memory exchange.
    pub back: Option<&'a mut mem::hierarchy::Backend>,
    pub programs: &'a mem::hierarchy::ProgramTable,
    pub costs: mem::hierarchy::Costs,
    pub counters: &'a mut crate::stats::MemCounters,
    /// What a memory instruction leaves in flight (`core::pending`).
    pub issuing: &'a mut super::pending::Issuing,
    /// The component memory system runs device operations (`memory_engine: components`):
    /// `ld`, `st`, `atom`, `red` hand theirs over instead of running them at issue.
    pub submit: bool,
}

/// An operand resolved for one instruction (see `ExecEnv::src`).
enum Src {
    Row(usize),
    Const(u64),
    PerLane(Operand),
}

/// One lane's access: which lane, where, how many bytes.
#[derive(Clone, Copy)]
struct Access {
    lane: usize,
    space: Space,
    addr: u64,
    size: u32,
}

/// A barrier operation for the SM to apply.
pub struct BarOp {
    pub kind: BarKind,
    pub barid: usize,
    pub count: Option<u32>,
    pub red: Option<(RegId, BarRed)>,
    /// (participating lanes, lanes whose predicate is true)
    pub preds: (Mask, Mask),
    /// The warp is diverged: some live lanes are not executing the barrier.
    pub divergent: bool,
}

pub struct Executed {
    pub flow: Flow,
    /// Call-frame depth before the instruction (tokens pushed now record it).
    pub frame_depth: u32,
    pub bar: Option<BarOp>,
    /// A taken branch to an earlier pc (a loop iteration).
    pub backedge: bool,
    /// Lanes that executed (active and guard true).
    pub lanes: Mask,
    /// A memory instruction's transactions (None when no lane accessed memory).
    pub mem: Option<MemSummary>,
}

/// What the coalescer made of one warp memory instruction (`mem::coalesce`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemSummary {
    /// The space of the first executing lane (a generic access is timed by it).
    pub space: Space,
    /// Distinct sectors and lines (global, local, const, param; 0 for shared).
    pub sectors: u32,
    pub lines: u32,
    /// Shared-memory conflict degree (1 = conflict-free; 1 for other spaces).
    pub conflict_degree: u32,
    /// Shared-memory wavefronts (`mem::coalesce::shared_wavefronts`: the degree, or more for
    /// accesses wider than a bank word; 1 for other spaces).
    pub wavefronts: u32,
    /// When its programs released the destination registers and when their last step ended
    /// (absolute cycles, before the ldst unit's extra passes).
    pub release: u64,
    pub end: u64,
}

fn lanes(mut m: Mask) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(l)
    })
}

pub(crate) fn sign_extend(v: u64, from_bits: u32) -> u64 {
    if from_bits >= 64 {
        return v;
    }
    let s = 64 - from_bits;
    (((v << s) as i64) >> s) as u64
}

/// The lanes that execute `inst` now: the warp's active lanes whose guard predicate (if any)
/// is true.
pub fn executing_lanes(w: &Warp, inst: &Inst) -> Mask {
    let active = w.simt.active_mask();
    match inst.guard {
        None => active,
        Some(g) => lanes(active)
            .filter(|&l| ((w.read(g.reg.0, l) & 1) == 1) != g.negated)
            .fold(0, |m, l| m | 1 << l),
    }
}

/// Whether executing `op` may reach the state all SMs share — global memory's values, the
/// L2, interconnect and DRAM — or this SM's L1, in which case it runs in the memory exchange
/// after every SM has stepped, in SM-id order (`Sm::exchange`), so that no result depends on
/// the order the SMs step in. Generic addresses may resolve to global memory, and a device
/// function's parameters live in local memory, so those count; shared and constant accesses
/// and everything else run in the SM's own step.
pub fn uses_memory_system(op: &Op) -> bool {
    let device = |s: &Space| {
        matches!(
            s,
            Space::Global | Space::Generic | Space::Local | Space::Param
        )
    };
    match op {
        Op::Ld { space, .. }
        | Op::St { space, .. }
        | Op::Atom { space, .. }
        | Op::WmmaLoad { space, .. }
        | Op::WmmaStore { space, .. } => device(space),
        Op::Fence { .. }
        | Op::FenceProxyAsync { .. }
        | Op::CpAsync { .. }
        | Op::CpAsyncBulk { .. }
        | Op::CpAsyncBulkTensor { .. } => true,
        _ => false,
    }
}

impl<'a> ExecEnv<'a> {
    /// Global memory (read): present in the memory exchange, where every instruction that
    /// reads it runs (`uses_memory_system`).
    fn global(&self) -> &GlobalMemory {
        self.global
            .as_deref()
            .expect("instructions that read global memory run in the memory exchange")
    }

    fn global_mut(&mut self) -> &mut GlobalMemory {
        self.global
            .as_deref_mut()
            .expect("instructions that write global memory run in the memory exchange")
    }

    /// The TMA engine. `core::run_launch` refuses a program with TMA instructions on a config
    /// without one (`Config::missing_unit`), so an executing TMA instruction finds it.
    fn tma(&self) -> crate::config::TmaConfig {
        self.tma
            .expect("run_launch refuses TMA instructions on a config without sm.tma")
    }

    /// Distributed shared memory; present whenever a cluster instruction runs (as `tma`).
    fn cluster(&self) -> crate::config::ClusterConfig {
        self.cluster
            .expect("run_launch refuses cluster instructions on a config without sm.cluster")
    }

    fn fault(&self, w: &Warp, inst: &Inst, lane: usize, kind: FaultKind, what: String) -> Fault {
        let t = w.tid[lane];
        let f = self.prog.module.function(w.func());
        Fault::new(
            kind,
            format!(
                "{what} in kernel `{}` at {}:{} (`{}`, pc {} of `{}`), CTA ({}, {}, {}), thread ({}, {}, {})",
                self.geom.kernel,
                self.prog.module.file,
                inst.span.line,
                print::inst_to_ptx(&self.prog.module, f, inst),
                w.pc(),
                f.name,
                self.ctaid[0],
                self.ctaid[1],
                self.ctaid[2],
                t[0],
                t[1],
                t[2]
            ),
        )
    }

    fn special(&self, w: &Warp, s: SpecialReg, lane: usize) -> u64 {
        let d = |d: Dim| match d {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        };
        let below = |l: usize| if l >= 64 { u64::MAX } else { (1u64 << l) - 1 };
        match s {
            SpecialReg::Tid(x) => w.tid[lane][d(x)] as u64,
            SpecialReg::Ntid(x) => self.geom.block[d(x)] as u64,
            SpecialReg::Ctaid(x) => self.ctaid[d(x)] as u64,
            SpecialReg::Nctaid(x) => self.geom.grid[d(x)] as u64,
            SpecialReg::LaneId => lane as u64,
            SpecialReg::WarpId => self.hw_warp as u64,
            SpecialReg::NWarpId => self.max_warps as u64,
            SpecialReg::SmId => self.sm_id as u64,
            SpecialReg::NSmId => self.n_sms as u64,
            SpecialReg::GridId => 0,
            SpecialReg::Clock => self.cycle & 0xFFFF_FFFF,
            SpecialReg::Clock64 | SpecialReg::GlobalTimer => self.cycle,
            SpecialReg::ClockHi | SpecialReg::GlobalTimerHi => self.cycle >> 32,
            SpecialReg::GlobalTimerLo => self.cycle & 0xFFFF_FFFF,
            SpecialReg::WarpSz => w.warp_size as u64,
            SpecialReg::LanemaskEq => 1 << lane,
            SpecialReg::LanemaskLt => below(lane),
            SpecialReg::LanemaskLe => below(lane + 1),
            SpecialReg::LanemaskGt => !below(lane + 1) & 0xFFFF_FFFF,
            SpecialReg::LanemaskGe => !below(lane) & 0xFFFF_FFFF,
            SpecialReg::DynamicSmemSize => self.geom.dynamic_shared as u64,
            SpecialReg::ClusterCtarank => self.cluster_rank() as u64,
            SpecialReg::ClusterNctarank => self.geom.cluster.iter().product::<u32>() as u64,
            SpecialReg::ClusterId(x) => (self.ctaid[d(x)] / self.geom.cluster[d(x)]) as u64,
            SpecialReg::NClusterId(x) => (self.geom.grid[d(x)] / self.geom.cluster[d(x)]) as u64,
            SpecialReg::ClusterCtaid(x) => (self.ctaid[d(x)] % self.geom.cluster[d(x)]) as u64,
            SpecialReg::ClusterNctaid(x) => self.geom.cluster[d(x)] as u64,
            SpecialReg::IsExplicitCluster => self.geom.explicit_cluster as u64,
            SpecialReg::TotalSmemSize => {
                (self.geom.static_shared + self.geom.dynamic_shared) as u64
            }
        }
    }

    /// This CTA's rank in its cluster (x fastest, PTX ISA `%cluster_ctarank`).
    pub(super) fn cluster_rank(&self) -> u32 {
        let c = self.geom.cluster;
        let i = |k: usize| self.ctaid[k] % c[k];
        i(0) + c[0] * (i(1) + c[1] * i(2))
    }

    /// A program's shared address as this CTA resolves it (`core::cluster::internal_addr`);
    /// outside clusters every address is the CTA's own, unchanged.
    fn internal_shared(&self, at: u64) -> u64 {
        if self.in_cluster() {
            crate::core::cluster::internal_addr(at, self.cluster_rank())
        } else {
            at
        }
    }

    /// Whether the launch has clusters of several CTAs (ranks other than 0 exist).
    #[inline]
    pub(super) fn in_cluster(&self) -> bool {
        self.geom.multi_cta_cluster
    }

    /// A variable's address in its own space (local variables: in the lane's local memory).
    fn sym_addr(&self, w: &Warp, s: SymbolId) -> u64 {
        match self.prog.locs[s.0 as usize] {
            Loc::KernelParam(o) | Loc::Const(o) | Loc::Global(o) => o,
            Loc::Frame(o) => w.frame().local_base as u64 + o,
            // sm_90 shared addresses carry the CTA's cluster rank (`core::cluster`).
            Loc::Shared => {
                // Every `.shared` variable a thread of the kernel can name has a place
                // (`Module::reachable_functions`).
                let offset = self.geom.shared.offset(s);
                debug_assert!(offset.is_some(), "a `.shared` variable outside the kernel");
                let offset = offset.unwrap_or(0);
                if self.in_cluster() {
                    crate::core::cluster::arch_addr(self.cluster_rank(), offset)
                } else {
                    offset
                }
            }
        }
    }

    #[inline]
    fn val(&self, w: &Warp, o: &Operand, lane: usize) -> u64 {
        match *o {
            Operand::Reg(r) => w.read(r.0, lane),
            Operand::NotReg(r) => (w.read(r.0, lane) & 1) ^ 1,
            Operand::Imm(v) => v,
            Operand::Special(s) => self.special(w, s, lane),
            Operand::Symbol(s) => self.sym_addr(w, s),
            Operand::Func(f) => f.0 as u64,
        }
    }

    /// Resolve an operand once per instruction: a register becomes its row in the register
    /// file, a lane-independent value a constant (the hot path then avoids per-lane matching).
    #[inline]
    fn src(&self, w: &Warp, o: &Operand) -> Src {
        match *o {
            Operand::Reg(r) => Src::Row(w.slot(r.0) * w.warp_size as usize),
            Operand::Imm(v) => Src::Const(v),
            Operand::Symbol(s) => Src::Const(self.sym_addr(w, s)),
            Operand::Func(f) => Src::Const(f.0 as u64),
            Operand::NotReg(_) | Operand::Special(_) => Src::PerLane(*o),
        }
    }

    #[inline]
    fn get(&self, w: &Warp, s: &Src, lane: usize) -> u64 {
        match s {
            Src::Row(base) => w.regs[base + lane],
            Src::Const(v) => *v,
            Src::PerLane(o) => self.val(w, o, lane),
        }
    }

    /// Resolve an address operand to (space, offset in that space).
    fn effective(&self, w: &Warp, space: Space, a: &Address, lane: usize) -> (Space, u64) {
        let (base, sym_loc) = match a.base {
            AddrBase::Reg(r) => (w.read(r.0, lane), None),
            AddrBase::Symbol(s) => (self.sym_addr(w, s), Some(self.prog.locs[s.0 as usize])),
            AddrBase::Abs => (0, None),
        };
        let addr = base.wrapping_add(a.offset as u64);
        match space {
            Space::Generic => match decode_generic(addr) {
                (Space::Shared, at) => (Space::Shared, self.internal_shared(at)),
                other => other,
            },
            Space::Shared => (Space::Shared, self.internal_shared(addr)),
            Space::Param => {
                let in_entry = self.prog.module.function(w.func()).kind == FuncKind::Entry;
                match sym_loc {
                    Some(Loc::KernelParam(_)) => (Space::Param, addr),
                    Some(_) => (Space::Local, addr),
                    None if in_entry => (Space::Param, addr),
                    None => (Space::Local, addr),
                }
            }
            s => (s, addr),
        }
    }

    /// Execute `inst` for the warp's active lanes.
    pub fn execute(&mut self, w: &mut Warp, inst: &Inst) -> Result<Executed, Fault> {
        let exec = executing_lanes(w, inst);
        let frame_depth = w.frames.len() as u32;
        let mut out = Executed {
            flow: Flow::Next,
            frame_depth,
            bar: None,
            backedge: false,
            lanes: exec,
            mem: None,
        };
        // Each group's function matches only its own variants; this match is the exhaustive one,
        // so a new `Op` variant must be placed here.
        match &inst.op {
            Op::Mov { .. }
            | Op::MovPack { .. }
            | Op::MovUnpack { .. }
            | Op::Arith { .. }
            | Op::Carry { .. }
            | Op::Bfind { .. }
            | Op::Shf { .. }
            | Op::Bfi { .. }
            | Op::Setp { .. }
            | Op::Set { .. }
            | Op::Selp { .. }
            | Op::Slct { .. }
            | Op::Cvt { .. }
            | Op::CvtPack { .. }
            | Op::Cvta { .. }
            | Op::Lop3 { .. }
            | Op::Dot { .. }
            | Op::Testp { .. }
            | Op::Isspacep { .. } => self.exec_alu(w, inst, exec)?,
            Op::Ld { .. } | Op::St { .. } | Op::Atom { .. } => {
                out.mem = self.exec_memory(w, inst, exec)?
            }
            Op::Bar { .. }
            | Op::WarpSync { .. }
            | Op::Fence { .. }
            | Op::Nop
            | Op::Nanosleep { .. } => self.exec_sync(w, inst, exec, &mut out)?,
            Op::Shfl { .. }
            | Op::Vote { .. }
            | Op::Match { .. }
            | Op::ActiveMask { .. }
            | Op::Redux { .. } => self.exec_collective(w, inst, exec, &mut out)?,
            Op::Mma { .. } | Op::MmaInt { .. } | Op::MmaM884 { .. } | Op::WmmaMma { .. } => {
                self.exec_tensor(w, inst, exec)?
            }
            Op::WmmaLoad { .. } | Op::WmmaStore { .. } => {
                out.mem = self.collected(|env| env.exec_wmma(w, inst, exec))?
            }
            Op::Ldmatrix { .. } | Op::Stmatrix { .. } => {
                out.mem = self.exec_matrix(w, inst, exec)?
            }
            Op::CpAsync { .. } | Op::CpAsyncCommit | Op::CpAsyncWait { .. } => {
                out.mem = self.exec_async(w, inst, exec)?
            }
            Op::MbarInit { .. }
            | Op::MbarInval { .. }
            | Op::MbarArrive { .. }
            | Op::MbarTx { .. }
            | Op::MbarWait { .. }
            | Op::MbarPendingCount { .. }
            | Op::CpAsyncMbarArrive { .. }
            | Op::FenceProxyAsync { .. }
            | Op::ElectSync { .. }
            | Op::Setmaxnreg { .. } => self.exec_mbarrier(w, inst, exec)?,
            Op::BarrierCluster { wait } => {
                self.exec_cluster(w, inst, exec)?;
                // Independent thread scheduling: only the waiting group parks (like bar.sync);
                // the other groups of its warp run on, and may still have to arrive.
                if *wait && exec != 0 && w.simt.independent_threads() {
                    out.flow = Flow::BarrierWait(crate::simt::CLUSTER_BARRIER);
                }
            }
            Op::Mapa { .. } => self.exec_cluster(w, inst, exec)?,
            Op::CpAsyncBulk { .. }
            | Op::CpAsyncBulkTensor { .. }
            | Op::CpAsyncBulkCommit
            | Op::CpAsyncBulkWait { .. } => self.exec_bulk(w, inst, exec)?,
            Op::Wgmma(_) | Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => {
                self.exec_wgmma(w, inst, exec)?
            }
            Op::Bra { .. }
            | Op::BrxIdx { .. }
            | Op::Call { .. }
            | Op::Ret { .. }
            | Op::Exit
            | Op::Trap
            | Op::Ssy { .. }
            | Op::PreBrk { .. }
            | Op::PreRet { .. }
            | Op::Sync
            | Op::Brk => self.exec_control(w, inst, exec, &mut out)?,
        }
        Ok(out)
    }
}

fn mask_bytes(size: u32) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (size * 8)) - 1
    }
}
