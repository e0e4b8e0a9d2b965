//! What one PTX instruction means to the uniformity analysis: the registers it writes and reads,
//! whether its value is a source of non-uniformity (and at which level), whether it requires
//! uniform control flow, and how it moves values through `.param` variables.
//!
//! This is the analysis' one exhaustive match over `Op` (ARCHITECTURE.md: exhaustive matches list
//! every place a new instruction touches), the PTX counterpart of the paper's expression rules
//! (§4.3 / Fig. 9): `lid` and shared reads are `MayBeNonUnif`, everything else inherits the
//! uniformity of its operands and of the control flow it runs under.

use gpusim_isa::{
    AddrBase, BarKind, Inst, MatchMode, Op, Operand, RegId, Space, SpecialReg, SymbolId,
};

/// The scopes at which a value or the control flow can be uniform. Each implies the ones
/// before it (a warpgroup is four whole warps, a CTA whole warpgroups), so every source that
/// is non-uniform within a warp is also non-uniform within its warpgroup and the CTA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// The same in every thread of a warp (what `shfl.sync`, `vote.sync`, `mma.sync`… need).
    Warp,
    /// The same in every thread of a warpgroup: four consecutive warps, the first a multiple
    /// of four (PTX ISA §9.7.15 "warpgroup"; what `wgmma.*` and `setmaxnreg` need).
    Warpgroup,
    /// The same in every thread of the CTA (what `bar.sync` needs).
    Cta,
}

impl Level {
    pub(crate) const ALL: [Level; 3] = [Level::Warp, Level::Warpgroup, Level::Cta];
    pub(crate) fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Level::Warp => "warp",
            Level::Warpgroup => "warpgroup",
            Level::Cta => "CTA",
        }
    }
    /// Threads of the aligned group of consecutive threads at this level (CTA: none).
    pub(crate) fn threads(self) -> Option<u32> {
        match self {
            Level::Warp => Some(32),
            Level::Warpgroup => Some(128),
            Level::Cta => None,
        }
    }
}

/// At which levels a source is non-uniform: `[warp, warpgroup, cta]`.
pub(crate) type Levels = [bool; 3];
const ALL_LEVELS: Levels = [true, true, true];
/// Results that every participating thread of a warp receives identically (vote, redux,
/// match.all) but that differ between warps.
const ABOVE_WARP: Levels = [false, true, true];

/// Why a value may differ between threads (the paper's `MayBeNonUnif` edges, made specific
/// so that a finding can name its origin).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum SourceKind {
    Special(SpecialReg),
    /// A load from memory that other threads may have written differently or that is
    /// per-thread (shared, global, local, generic); the paper's "any shared read".
    Load(Space),
    Atomic,
    /// A warp collective's result, named by its mnemonic.
    Collective(&'static str),
    /// `ld.param` through a register address inside a `.func`: which parameter it reads is
    /// not known statically.
    IndirectParam,
}

impl SourceKind {
    pub(crate) fn levels(&self) -> Levels {
        match self {
            // PTX ISA §10: %warpid, %smid and %nsmid-style ids are per warp or per SM; the
            // clocks and lane masks differ per thread or per read.
            SourceKind::Special(s) => match s {
                SpecialReg::WarpId => ABOVE_WARP,
                _ => ALL_LEVELS,
            },
            SourceKind::Collective(name) => match *name {
                "vote.sync" | "redux.sync" | "match.all.sync" => ABOVE_WARP,
                _ => ALL_LEVELS,
            },
            SourceKind::Load(_) | SourceKind::Atomic | SourceKind::IndirectParam => ALL_LEVELS,
        }
    }
}

/// Whether a special register is the same for every thread of a CTA. `%ctaid`, `%ntid`,
/// `%nctaid`, `%gridid`, `%nwarpid`, `%nsmid`, the shared-memory sizes and `WARP_SZ` are
/// launch constants; the rest differ per thread, per warp or per read.
pub(crate) fn special_is_uniform(s: SpecialReg) -> bool {
    use SpecialReg::*;
    match s {
        Ntid(_) | Ctaid(_) | Nctaid(_) | NWarpId | NSmId | GridId | DynamicSmemSize
        | TotalSmemSize | WarpSz | ClusterNctarank | NClusterId(_) | ClusterNctaid(_)
        | IsExplicitCluster => true,
        // Per CTA: uniform within a CTA, not across the grid (as %ctaid is treated here).
        ClusterCtarank | ClusterId(_) | ClusterCtaid(_) => true,
        Tid(_) | LaneId | WarpId | SmId | Clock | Clock64 | ClockHi | GlobalTimer
        | GlobalTimerLo | GlobalTimerHi | LanemaskEq | LanemaskLe | LanemaskLt | LanemaskGe
        | LanemaskGt => false,
    }
}

/// Where the value an instruction writes comes from when it is not (only) its register
/// operands; `Effect::origin == None` means the operands and the control flow alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ValueOrigin {
    /// A source of non-uniformity; the operands do not matter.
    Source(SourceKind),
    /// A reduction whose result every thread of the CTA receives (`bar.red`).
    CtaReduction,
    /// `ld.param` from a `.param` variable: the variable's contents.
    ParamVar(SymbolId),
}

/// A requirement of uniform control flow (the paper's `MustBeUnif → cf` for `barrier`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Requirement {
    pub level: Level,
    /// The mnemonic, for messages.
    pub what: &'static str,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Effect {
    pub writes: Vec<RegId>,
    pub reads: Vec<Operand>,
    pub origin: Option<ValueOrigin>,
    pub requirement: Option<Requirement>,
    /// Operands that must themselves be uniform at the requirement's level (a barrier's id and
    /// thread count: threads with different ids wait at different barriers).
    pub required_operands: Vec<Operand>,
    /// `st.param [var], v`: the variable receives the stored operands.
    pub param_store: Option<SymbolId>,
}

fn addr_reads(base: AddrBase) -> Vec<Operand> {
    match base {
        AddrBase::Reg(r) => vec![Operand::Reg(r)],
        AddrBase::Symbol(_) | AddrBase::Abs => vec![],
    }
}

/// The analysis' view of `inst`. `in_entry`: kernel parameters are launch constants, so an
/// `ld.param` through a register in an `.entry` depends on its address only.
pub(crate) fn effect(inst: &Inst, in_entry: bool) -> Effect {
    let mut e = Effect::default();
    let source = |k: SourceKind| Some(ValueOrigin::Source(k));
    match &inst.op {
        Op::Mov { d, a, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a];
        }
        Op::MovPack { d, parts, .. } => {
            e.writes = vec![*d];
            e.reads = parts.as_slice().to_vec();
        }
        Op::MovUnpack { d, a, .. } => {
            e.writes = d.as_slice().to_vec();
            e.reads = vec![*a];
        }
        Op::Arith { d, a, b, c, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *b, *c];
        }
        Op::Carry {
            cc_in,
            cc_out,
            cc,
            d,
            a,
            b,
            c,
            ..
        } => {
            e.writes = vec![*d];
            if *cc_out {
                e.writes.push(*cc);
            }
            e.reads = vec![*a, *b, *c];
            if *cc_in {
                e.reads.push(Operand::Reg(*cc));
            }
        }
        Op::Bfind { d, a, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a];
        }
        Op::Shf { d, a, b, c, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *b, *c];
        }
        Op::Bfi {
            d, a, b, pos, len, ..
        } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *b, *pos, *len];
        }
        Op::Setp {
            p, q, a, b, comb, ..
        } => {
            e.writes = vec![*p];
            e.writes.extend(q);
            e.reads = vec![*a, *b];
            e.reads.extend(comb.map(|(_, c)| c));
        }
        Op::Set { d, a, b, comb, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *b];
            e.reads.extend(comb.map(|(_, c)| c));
        }
        Op::Selp { d, a, b, c, .. } | Op::Slct { d, a, b, c, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *b, *c];
        }
        Op::Cvt { d, a, .. } | Op::Cvta { d, a, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a];
        }
        Op::Ld { space, d, addr, .. } => {
            e.writes = d.as_slice().to_vec();
            e.reads = addr_reads(addr.base);
            e.origin = match space {
                // Read-only for the whole grid: the same address gives the same value.
                Space::Const => None,
                // A kernel parameter's variable is never stored to, so it stays uniform; a
                // call's result variable carries what the callee stored.
                Space::Param => match addr.base {
                    AddrBase::Symbol(s) => Some(ValueOrigin::ParamVar(s)),
                    // Through a register, a kernel reads its own (uniform) parameters.
                    AddrBase::Reg(_) | AddrBase::Abs if in_entry => None,
                    AddrBase::Reg(_) | AddrBase::Abs => source(SourceKind::IndirectParam),
                },
                Space::Shared | Space::Global | Space::Local | Space::Generic => {
                    source(SourceKind::Load(*space))
                }
            };
        }
        Op::St {
            space, addr, src, ..
        } => {
            e.reads = src.as_slice().to_vec();
            if let (Space::Param, AddrBase::Symbol(s)) = (space, addr.base) {
                e.param_store = Some(s);
            }
        }
        Op::Atom { d, addr, b, c, .. } => {
            e.writes = d.iter().copied().collect();
            e.reads = addr_reads(addr.base);
            e.reads.push(*b);
            e.reads.extend(c);
            e.origin = source(SourceKind::Atomic);
        }
        Op::Bar {
            kind,
            id,
            count,
            red,
            aligned,
        } => {
            // PTX ISA `bar`/`barrier`: without a thread count every thread of the CTA takes
            // part; with one, only that many threads, counted in whole warps (the count must
            // be a multiple of the warp size), so warp-specialised code may use it under
            // CTA-divergent but warp-uniform control flow.
            let level = if count.is_some() {
                Level::Warp
            } else {
                Level::Cta
            };
            let what = match (kind, aligned) {
                (BarKind::Sync, true) => "bar.sync",
                (BarKind::Sync, false) => "barrier.sync",
                (BarKind::Arrive, _) => "bar.arrive",
                (BarKind::Red(_), _) => "bar.red",
            };
            e.requirement = Some(Requirement { level, what });
            e.required_operands = vec![*id];
            e.required_operands.extend(count);
            if let Some((p, a)) = red {
                e.writes = vec![*p];
                e.reads = vec![*a];
                e.origin = Some(ValueOrigin::CtaReduction);
            }
        }
        Op::WarpSync { mask } => {
            e.reads = vec![*mask];
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "bar.warp.sync",
            });
        }
        Op::Fence { .. } | Op::Nanosleep { .. } => {}
        Op::Shfl {
            d,
            p,
            a,
            b,
            c,
            mask,
            ..
        } => {
            e.writes = vec![*d];
            e.writes.extend(p);
            e.reads = vec![*a, *b, *c, *mask];
            e.origin = source(SourceKind::Collective("shfl.sync"));
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "shfl.sync",
            });
        }
        Op::Vote { d, a, mask, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *mask];
            e.origin = source(SourceKind::Collective("vote.sync"));
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "vote.sync",
            });
        }
        Op::Match {
            mode,
            d,
            p,
            a,
            mask,
            ..
        } => {
            e.writes = vec![*d];
            e.writes.extend(p);
            e.reads = vec![*a, *mask];
            let name = match mode {
                MatchMode::All => "match.all.sync",
                MatchMode::Any => "match.any.sync",
            };
            e.origin = source(SourceKind::Collective(name));
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: name,
            });
        }
        Op::ActiveMask { d } => {
            // Not a collective that needs convergence, but its value is whichever lanes happen
            // to execute it together, which independent thread scheduling does not fix.
            e.writes = vec![*d];
            e.origin = source(SourceKind::Collective("activemask"));
        }
        Op::Redux { d, a, mask, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *mask];
            e.origin = source(SourceKind::Collective("redux.sync"));
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "redux.sync",
            });
        }
        Op::Lop3 {
            d, a, b, c, pred, ..
        } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *b, *c];
            if let Some((_, p, q)) = pred {
                e.writes.push(*p);
                e.reads.push(*q);
            }
        }
        Op::Dot { d, a, b, c, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *b, *c];
        }
        Op::Testp { p, a, .. } | Op::Isspacep { p, a, .. } => {
            e.writes = vec![*p];
            e.reads = vec![*a];
        }
        Op::Mma { d, .. } | Op::MmaInt { d, .. } => {
            // Each lane receives its own fragment of D.
            e.writes = d.as_slice().to_vec();
            e.origin = source(SourceKind::Collective("mma.sync"));
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "mma.sync",
            });
        }
        Op::Ldmatrix { d, addr, .. } => {
            // Each lane receives elements of rows other lanes addressed.
            e.writes = d.as_slice().to_vec();
            e.reads = addr_reads(addr.base);
            e.origin = source(SourceKind::Collective("ldmatrix"));
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "ldmatrix",
            });
        }
        Op::Stmatrix { addr, src, .. } => {
            e.reads = src.as_slice().iter().map(|r| Operand::Reg(*r)).collect();
            e.reads.extend(addr_reads(addr.base));
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "stmatrix",
            });
        }
        Op::MmaM884 { d, .. } | Op::WmmaMma { d, .. } => {
            // Each lane receives its own fragment of D, computed from every lane's.
            e.writes = d.as_slice().to_vec();
            e.origin = source(SourceKind::Collective("mma.sync"));
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "mma.sync",
            });
        }
        Op::WmmaLoad {
            d, addr, stride, ..
        } => {
            // Each lane receives elements other lanes' rows hold.
            e.writes = d.as_slice().to_vec();
            e.reads = addr_reads(addr.base);
            e.reads.extend(stride.iter().copied());
            e.origin = source(SourceKind::Collective("wmma.load"));
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "wmma.load",
            });
        }
        Op::WmmaStore {
            addr, src, stride, ..
        } => {
            e.reads = src.as_slice().iter().map(|r| Operand::Reg(*r)).collect();
            e.reads.extend(addr_reads(addr.base));
            e.reads.extend(stride.iter().copied());
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "wmma.store",
            });
        }
        // A per-thread copy into shared memory: it writes no register.
        Op::CpAsync {
            dst, src, src_size, ..
        } => {
            e.reads = addr_reads(dst.base);
            e.reads.extend(addr_reads(src.base));
            e.reads.extend(src_size.iter().copied());
        }
        Op::CpAsyncCommit | Op::CpAsyncWait { .. } => {}
        // mbarrier operations are atomics on a shared word: what they return differs per
        // thread and per moment.
        Op::MbarInit { addr, count, .. } => {
            e.reads = addr_reads(addr.base);
            e.reads.push(*count);
        }
        Op::MbarInval { addr, .. } | Op::CpAsyncMbarArrive { addr, .. } => {
            e.reads = addr_reads(addr.base);
        }
        Op::MbarTx { addr, bytes, .. } => {
            e.reads = addr_reads(addr.base);
            e.reads.push(*bytes);
        }
        Op::MbarArrive {
            addr,
            state,
            count,
            expect_tx,
            ..
        } => {
            e.writes = state.iter().copied().collect();
            e.reads = addr_reads(addr.base);
            e.reads.extend(count.iter().chain(expect_tx).copied());
            e.origin = source(SourceKind::Atomic);
        }
        Op::MbarWait {
            done, addr, phase, ..
        } => {
            e.writes = vec![*done];
            e.reads = addr_reads(addr.base);
            e.reads.push(*phase);
            e.origin = source(SourceKind::Atomic);
        }
        Op::MbarPendingCount { d, state } => {
            e.writes = vec![*d];
            e.reads = vec![*state];
        }
        // One lane of the mask is elected: p differs per lane, d is the same everywhere.
        Op::ElectSync { d, p, mask } => {
            e.writes = d.iter().copied().chain([*p]).collect();
            e.reads = vec![*mask];
            e.origin = source(SourceKind::Collective("elect.sync"));
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "elect.sync",
            });
        }
        // `.sync.aligned` warpgroup instructions: every thread of the warpgroup executes the
        // same instruction (PTX ISA `setmaxnreg`, `wgmma.*`).
        Op::Setmaxnreg { .. } => {
            e.requirement = Some(Requirement {
                level: Level::Warpgroup,
                what: "setmaxnreg",
            });
        }
        Op::FenceProxyAsync { .. } | Op::CpAsyncBulkCommit | Op::CpAsyncBulkWait { .. } => {}
        Op::BarrierCluster { .. } => {
            e.requirement = Some(Requirement {
                level: Level::Warp,
                what: "barrier.cluster.aligned",
            });
        }
        Op::Mapa { d, a, rank, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *rank];
        }
        Op::CpAsyncBulk {
            dst,
            src,
            size,
            mbar,
            multicast,
            ..
        } => {
            e.reads = addr_reads(dst.base);
            e.reads.extend(addr_reads(src.base));
            e.reads.push(*size);
            if let Some(m) = mbar {
                e.reads.extend(addr_reads(m.base));
            }
            e.reads.extend(multicast.iter().copied());
        }
        Op::CpAsyncBulkTensor {
            rank,
            smem,
            tmap,
            coords,
            mbar,
            multicast,
            ..
        } => {
            e.reads = addr_reads(smem.base);
            e.reads.extend(addr_reads(tmap.base));
            e.reads.extend(coords[..*rank as usize].iter().copied());
            if let Some(m) = mbar {
                e.reads.extend(addr_reads(m.base));
            }
            e.reads.extend(multicast.iter().copied());
        }
        // A warpgroup collective: each lane receives its fragment of D, computed from the
        // shared-memory operands and the other lanes' A fragments.
        Op::Wgmma(w) => {
            e.writes = w.d.as_slice().to_vec();
            if let gpusim_isa::WgmmaA::Desc(o) = &w.a {
                e.reads.push(*o);
            }
            e.reads.extend([w.b, w.scale_d]);
            e.origin = source(SourceKind::Collective("wgmma.mma_async"));
            e.requirement = Some(Requirement {
                level: Level::Warpgroup,
                what: "wgmma.mma_async",
            });
        }
        Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => {
            e.requirement = Some(Requirement {
                level: Level::Warpgroup,
                what: "wgmma",
            });
        }
        Op::CvtPack { d, a, b, .. } => {
            e.writes = vec![*d];
            e.reads = vec![*a, *b];
        }
        Op::BrxIdx { index, .. } => e.reads = vec![*index],
        Op::Bra { .. }
        | Op::Call { .. }
        | Op::Ret { .. }
        | Op::Exit
        | Op::Trap
        | Op::Ssy { .. }
        | Op::Sync
        | Op::PreBrk { .. }
        | Op::Brk
        | Op::PreRet { .. }
        | Op::Nop => {}
    }
    e
}
