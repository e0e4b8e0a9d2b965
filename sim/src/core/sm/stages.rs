//! The issue path of one warp instruction as a sequence of stages, each a function from what
//! the one before produced to what the next needs:
//!
//! 1. `fetch` — fetch and decode: the instruction at the warp's pc (`Fetched`);
//! 2. `classify` — scoreboard and operand read: whether the warp can issue this cycle (run by
//!    `Sm::step` for every warp, before its scheduler picks);
//! 3. `reserve` — issue: the picked instruction takes a unit of its kind;
//! 4. `execute` — the semantics (`ExecEnv::execute` → `Executed`);
//! 5. `request_out` — memory request out: the memory summary the semantics returned (today
//!    the memory programs run inside stage 4, through `ExecEnv::mem`) and the unit's passes
//!    become the result's time (`Timing`);
//! 6. `write_back` then `Sm::complete` — completion and write-back: scoreboard, counters,
//!    barrier arrival, the reconvergence step, fetch hold, warp completion, then the SM-wide
//!    effects (async units, the unit held for every pass, barrier releases).
//!
//! Observers (`sm::hooks`) are called at the boundaries 3→4 (`IssueHook::execute`) and after
//! the warp's part of 6 (`IssueHook::retire`); with none installed no view is built.
//! A new stage (an operand collector, register-bank conflicts) goes between two of these,
//! taking the previous stage's output (docs/adding-an-instruction.md).

use super::hooks::{CtaId, Hooks, IssueView};
use super::{MemSystem, Shared, Sm, StepResult};
use crate::config::BarrierDivergence;
use crate::core::cta::{Arrival, Cta, Release};
use crate::core::deps::DepTable;
use crate::core::exec::{BarOp, ExecEnv, Executed, MemSummary};
use crate::core::fault::{Fault, FaultKind};
use crate::core::program::{Class, Program, Unit};
use crate::core::subpart::SubPartition;
use crate::core::warp::{Warp, WarpState};
use crate::simt::{Flow, Outcome, StepCtx};
use crate::stats::{SmStats, Stall};
use gpusim_isa::{BarKind, FuncId, Inst, Space};
use std::hash::Hasher;

/// An instruction a scheduler picked: the warp's slot, its sub-partition, and its place in
/// the SM's issue order this cycle (`IssueView::order`).
#[derive(Clone, Copy)]
pub(super) struct Picked {
    pub slot: usize,
    pub part: usize,
    pub order: u32,
}

/// Stage 1's output: the instruction at the warp's pc.
pub(super) struct Fetched<'p> {
    pub func_id: FuncId,
    pub pc: usize,
    pub inst: &'p Inst,
    pub class: Class,
}

/// Stage 5's output: when the result is there and how long the instruction holds its unit.
struct Timing {
    /// Passes of a memory instruction through the ldst unit (1 otherwise).
    passes: u32,
    /// Cycles a wgmma.mma_async holds the tensor unit (`wgmma_state::time_issue`).
    tensor_busy: Option<u64>,
    /// Cycles until the destinations are readable.
    latency: u64,
    /// Cycle by which the instruction's memory operations have completed.
    mem_end: u64,
    /// When its programs that ran released the destinations, and the cycles its extra
    /// passes add (for operations completing later: `core::pending`).
    release: u64,
    extra: u64,
    /// A global or local load (its latency is `MemCounters::load_latency`).
    is_load: bool,
}

/// Stage 6's output for the SM's side of completion.
pub(super) struct IssueDone {
    passes: u32,
    tensor_busy: Option<u64>,
    completed: bool,
    release: Option<Release>,
    /// Threads exited while their warp goes on (counted per thread, `Cta::thread_arrivals`).
    lanes_exited: bool,
}

/// The parts of the SM that issuing one warp's instruction touches.
struct IssueCtx<'a> {
    sm_id: u32,
    order: u32,
    cta: &'a mut Cta,
    stats: &'a mut SmStats,
    /// The source view's counters, when collected.
    lines: Option<&'a mut crate::stats::lines::LineCounters>,
    mem: &'a mut crate::mem::hierarchy::SmMemory,
    l2: Option<&'a mut crate::mem::hierarchy::Backend>,
    hooks: &'a mut Hooks,
    /// Memory instructions in flight (`core::pending`).
    pending: &'a mut super::PendingMemory,
    /// Device operations go to the component memory system (`memory_engine: components`).
    submit: bool,
}

/// Stage 1 — fetch and decode: the instruction at the warp's pc, its function and latency
/// class (None past the end of the body). Its registers and unit kind, which stage 2 reads,
/// were decoded when the pc last changed (`Warp::refresh_ready`).
pub(super) fn fetch<'p>(w: &Warp, prog: &'p Program) -> Option<Fetched<'p>> {
    let f = w.func();
    let pc = w.pc() as usize;
    let inst = prog.module.function(f).body.get(pc)?;
    Some(Fetched {
        func_id: f,
        pc,
        inst,
        class: prog.funcs[f.0 as usize].class[pc],
    })
}

fn ran_past_end(w: &Warp, prog: &Program, ctaid: [u32; 3]) -> Fault {
    Fault::new(
        FaultKind::Control,
        format!(
            "warp {} of CTA {ctaid:?} ran past the end of `{}` (no exit or ret on this path)",
            w.warp_in_cta,
            prog.module.function(w.func()).name
        ),
    )
}

/// Stage 2 — scoreboard and operand read: whether `w` can issue this cycle (instruction
/// buffer filled, source and destination registers ready, a unit of its kind free), or the
/// state it is stalled in and when it may wake.
pub(super) fn classify(
    w: &Warp,
    part: &SubPartition,
    cycle: u64,
) -> Result<(), (Stall, Option<u64>)> {
    match w.state {
        WarpState::Completed => return Err((Stall::Finished, None)),
        WarpState::Barrier(_) => return Err((Stall::Barrier, None)),
        WarpState::Active => {}
    }
    if w.fetch_ready > cycle {
        return Err((w.fetch_reason, Some(w.fetch_ready)));
    }
    if w.next_ready > cycle {
        let s = if w.wait_long {
            Stall::ScoreboardLong
        } else {
            Stall::ScoreboardShort
        };
        return Err((s, Some(w.next_ready)));
    }
    match next_unit(w) {
        Some(u) if part.free_unit(u, cycle).is_none() => {
            Err((Stall::PipeBusy, Some(part.earliest_free(u))))
        }
        _ => Ok(()),
    }
}

/// The unit kind the warp's next instruction needs (None past the end of the body, where
/// issue reports a fault).
pub(super) fn next_unit(w: &Warp) -> Option<Unit> {
    w.next_unit
}

/// Stage 3 — issue: the instruction takes a free unit of its kind; returns which, so that
/// completion can hold it for every pass.
fn reserve(
    part: &mut SubPartition,
    unit: Option<Unit>,
    cycle: u64,
    stats: &mut SmStats,
) -> Option<(Unit, usize)> {
    let u = unit?;
    let i = part.free_unit(u, cycle)?;
    stats.unit_busy[u as usize] += part.occupy(u, i, cycle);
    Some((u, i))
}

impl Sm {
    /// Issue the next instruction of warp `p.slot` on sub-partition `p.part` (stage 2 found
    /// it ready); returns the unit kind it occupied.
    pub(super) fn issue(
        &mut self,
        p: Picked,
        cycle: u64,
        sh: &Shared,
        mem_sys: Option<MemSystem>,
        epoch: &mut u64,
        res: &mut StepResult,
    ) -> Result<Option<Unit>, Fault> {
        self.order = p.order;
        let w = self.warps[p.slot].as_ref().expect("picked warps exist");
        let unit = next_unit(w);
        let Some(at) = fetch(w, sh.prog) else {
            let cta = self.ctas[w.cta].as_ref().expect("a warp's CTA is resident");
            return Err(ran_past_end(w, sh.prog, cta.ctaid));
        };
        let held = reserve(&mut self.parts[p.part], unit, cycle, &mut self.stats);
        // Borrow the warp, its CTA and the counters side by side (no move of the warp).
        let Sm {
            warps,
            ctas,
            stats,
            lines,
            id,
            mem,
            hooks,
            pending,
            ..
        } = self;
        let w = warps[p.slot].as_mut().expect("picked warps exist");
        let cta = ctas[w.cta].as_mut().expect("a warp's CTA is resident");
        let (global, l2) = match mem_sys {
            Some(m) => (Some(m.global), Some(m.back)),
            None => (None, None),
        };
        let ctx = IssueCtx {
            sm_id: *id,
            order: p.order,
            cta,
            stats,
            lines: lines.as_deref_mut(),
            mem,
            l2,
            hooks,
            pending,
            submit: sh.cfg.memory_engine == crate::config::MemoryEngineKind::Components,
        };
        let r = issue_warp(ctx, w, &at, p.slot, cycle, sh, global, epoch, res);
        w.refresh_ready(sh.prog);
        let done = r?;
        if let Some(t) = &mut self.timeline {
            if let Some(name) = fence_name(&at.inst.op) {
                t.instant(crate::timeline::Track::Warp(p.slot as u32), name, cycle);
            }
        }
        self.complete(p, held, done, cycle, sh, epoch, res);
        Ok(unit)
    }

    /// Stage 6, the SM's side: the async units' effects, the unit held for every pass,
    /// barrier releases and the warp's (or its threads') completion.
    #[allow(clippy::too_many_arguments)]
    fn complete(
        &mut self,
        p: Picked,
        held: Option<(Unit, usize)>,
        done: IssueDone,
        cycle: u64,
        sh: &Shared,
        epoch: &mut u64,
        res: &mut StepResult,
    ) {
        let (slot, part) = (p.slot, p.part);
        self.after_async(slot, cycle, sh.prog);
        if self.warps[slot]
            .as_ref()
            .is_some_and(|w| !w.async_copies.is_empty())
        {
            self.copies_waiting = true;
        }
        // An uncoalesced or bank-conflicted access holds the ldst unit for all its passes.
        if let (Some((u, i)), true) = (held, done.passes > 1) {
            self.stats.unit_busy[u as usize] += self.parts[part].hold(u, i, cycle, done.passes);
        }
        // A wgmma slice holds the tensor unit for its cycles.
        if let (Some((u, i)), Some(busy)) = (held, done.tensor_busy) {
            self.stats.unit_busy[u as usize] += self.parts[part].hold_cycles(u, i, cycle, busy);
        }
        if let Some(release) = done.release {
            self.apply_release(release, cycle, sh, epoch);
        }
        if done.completed {
            self.warp_completed(slot, sh, epoch, res, cycle);
        } else if done.lanes_exited && sh.cfg.sm.exited_warps_arrive {
            // Per-thread arrivals: waiters proceed once the threads that did not arrive have
            // exited (the hardware rule of `warp_completed`, per thread).
            let cslot = self.warps[slot].as_ref().expect("issued warps exist").cta;
            let cta = self.ctas[cslot].as_mut().expect("a warp's CTA is resident");
            let ws = sh.cfg.sm.warp_size;
            let releases: Vec<Release> = (0..crate::core::cta::N_BARRIERS)
                .filter_map(|b| cta.try_complete(b, ws, true))
                .collect();
            for r in releases {
                self.apply_release(r, cycle, sh, epoch);
            }
        }
    }
}

/// Stages 4 to 6 for the warp itself, its observers told at the boundaries.
#[allow(clippy::too_many_arguments)]
fn issue_warp(
    mut ctx: IssueCtx,
    w: &mut Warp,
    at: &Fetched,
    slot: usize,
    cycle: u64,
    sh: &Shared,
    global: Option<&mut crate::mem::GlobalMemory>,
    epoch: &mut u64,
    res: &mut StepResult,
) -> Result<IssueDone, Fault> {
    let ex = execute(&mut ctx, w, at, slot, cycle, sh, global, epoch)?;
    let in_flight = ctx.submit && !ctx.pending.issuing.ops.is_empty();
    let timing = request_out(w, at, &ex, cycle, sh, ctx.stats, in_flight);
    let done = write_back(&mut ctx, w, at, &ex, &timing, slot, cycle, sh)?;
    if !ctx.hooks.is_empty() {
        let view = view(&ctx, w, at, slot, cycle, sh.prog);
        ctx.hooks.retire(&view, ex.lanes);
    }
    watch_backedge(w, &ex, epoch, res);
    Ok(done)
}

fn view<'a>(
    ctx: &IssueCtx,
    w: &'a Warp,
    at: &'a Fetched,
    slot: usize,
    cycle: u64,
    prog: &'a Program,
) -> IssueView<'a> {
    IssueView {
        cycle,
        sm: ctx.sm_id,
        slot,
        order: ctx.order,
        cta: CtaId {
            linear: ctx.cta.linear,
            ctaid: ctx.cta.ctaid,
        },
        warp: w,
        prog,
        func: at.func_id,
        pc: at.pc as u32,
        inst: at.inst,
    }
}

/// Stage 4 — execute the semantics for the warp's active, guard-true lanes. Observers see
/// the warp before it.
#[allow(clippy::too_many_arguments)]
fn execute(
    ctx: &mut IssueCtx,
    w: &mut Warp,
    at: &Fetched,
    slot: usize,
    cycle: u64,
    sh: &Shared,
    global: Option<&mut crate::mem::GlobalMemory>,
    epoch: &mut u64,
) -> Result<Executed, Fault> {
    let cta = &mut *ctx.cta;
    let env = ExecEnv {
        prog: sh.prog,
        global,
        shared: &mut cta.shared,
        consts: sh.consts,
        params: sh.params,
        geom: sh.geom,
        ctaid: cta.ctaid,
        hw_warp: slot as u32,
        sm_id: ctx.sm_id,
        n_sms: sh.cfg.sm.count,
        max_warps: sh.cfg.sm.max_warps,
        cycle,
        local_limit: sh.cfg.sm.local_bytes_per_thread,
        epoch,
        coalescer: sh.cfg.coalescer(),
        mem: crate::core::exec::MemPort {
            sm: &mut *ctx.mem,
            back: ctx.l2.as_deref_mut(),
            programs: sh.programs,
            costs: sh.costs,
            counters: &mut ctx.stats.memory,
            issuing: &mut ctx.pending.issuing,
            submit: ctx.submit,
        },
        tma: sh.cfg.sm.tma,
        cluster: sh.cfg.sm.cluster,
        fence: sh.cfg.sm.fence,
        wgmma_log: &mut cta.wgmma_log,
        skip_tensor_math: sh.skip_tensor_math,
        energy: &mut ctx.stats.energy,
    };
    if !ctx.hooks.is_empty() {
        let view = IssueView {
            cycle,
            sm: ctx.sm_id,
            slot,
            order: ctx.order,
            cta: CtaId {
                linear: cta.linear,
                ctaid: cta.ctaid,
            },
            warp: w,
            prog: sh.prog,
            func: at.func_id,
            pc: at.pc as u32,
            inst: at.inst,
        };
        ctx.hooks.execute(&view, &env);
    }
    let mut env = env;
    env.execute(w, at.inst)
}

/// Stage 5 — memory request out: the memory summary of stage 4 (its programs have run and
/// report when they release the destinations and end) and the passes through the unit give
/// the result's time; a wgmma slice's cycles on the tensor unit are timed here too.
fn request_out(
    w: &mut Warp,
    at: &Fetched,
    ex: &Executed,
    cycle: u64,
    sh: &Shared,
    stats: &mut SmStats,
    in_flight: bool,
) -> Timing {
    // An executed wgmma.mma_async: D's completion and the cycles it holds the tensor unit.
    let tensor_busy = match ex.lanes {
        0 => None,
        _ => sh
            .cfg
            .sm
            .wgmma
            .and_then(|wg| crate::core::wgmma_state::time_issue(w, &at.inst.op, cycle, &wg)),
    };
    let class = at.class;
    let passes = match ex.mem {
        Some(m) => mem_passes(&m, stats),
        None => crate::core::program::tensor_passes(&at.inst.op),
    };
    // The last pass leaves the unit (passes − 1) intervals after the first, so the result
    // comes that much later than its programs (or the class latency) say.
    let extra = (passes as u64 - 1) * class.unit().shape(&sh.cfg.sm.units).1 as u64;
    let is_load = ex.mem.is_some_and(|m| {
        matches!(at.inst.op, gpusim_isa::Op::Ld { .. })
            && matches!(m.space, Space::Global | Space::Local)
    });
    let (latency, mem_end) = match ex.mem {
        Some(m) => {
            // The loaded latency of global and local loads (`MemCounters::load_latency`);
            // with operations in the memory system, at their completion.
            if is_load && !in_flight {
                stats.memory.record_load_latency(m.release - cycle + extra);
            }
            (m.release - cycle + extra, m.end + extra)
        }
        None => {
            let l = class.latency(sh.cfg) as u64;
            (l, cycle + l)
        }
    };
    Timing {
        passes,
        tensor_busy,
        latency,
        mem_end,
        release: ex.mem.map_or(cycle, |m| m.release),
        extra,
        is_load,
    }
}

/// Passes through the ldst unit of one memory instruction, counted in `stats`: global and
/// local accesses take one per L1 line they touch (the L1 accepts one line per cycle: the
/// GPGPU-Sim / Accel-Sim L1 model, where an uncoalesced access is replayed line by line),
/// shared ones one per wavefront (CUDA C++ Programming Guide: bank conflicts are serialised;
/// a request wider than a bank word takes at least its banks' time, `shared_wavefronts`);
/// constant and param reads take one.
fn mem_passes(m: &MemSummary, stats: &mut SmStats) -> u32 {
    let c = &mut stats.memory;
    match m.space {
        Space::Global | Space::Generic | Space::Local => {
            c.global_requests += 1;
            c.global_sectors += m.sectors as u64;
            c.global_lines += m.lines as u64;
            m.lines.max(1)
        }
        Space::Shared => {
            c.shared_requests += 1;
            c.shared_replays += m.conflict_degree.max(1) as u64 - 1;
            m.wavefronts.max(1)
        }
        Space::Const | Space::Param => 1,
    }
}

/// Stage 6 — completion and write-back, the warp's part: the scoreboard's ready times, the
/// counters, the barrier arrival, the reconvergence step, exited threads, the instruction
/// buffer's refill after a control transfer and the warp's memory horizon.
#[allow(clippy::too_many_arguments)]
fn write_back(
    ctx: &mut IssueCtx,
    w: &mut Warp,
    at: &Fetched,
    ex: &Executed,
    t: &Timing,
    slot: usize,
    cycle: u64,
    sh: &Shared,
) -> Result<IssueDone, Fault> {
    let (f, pc, class) = (at.func_id, at.pc, at.class);
    let lat = t.latency;
    let deps = &sh.prog.funcs[f.0 as usize].deps;
    if w.simt.split_issue() {
        // A released `.sync` collective: each lane wrote the destinations of the matching
        // instruction at its own pc.
        let active = w.simt.active_mask();
        for l in (0..w.warp_size as usize).filter(|l| active >> l & 1 == 1) {
            let at = w.simt.lane_pc(l) as usize;
            let writes = deps.writes(at);
            w.set_ready(writes, cycle + lat.max(1), class.is_long());
        }
    } else if ctx.submit && !ctx.pending.issuing.ops.is_empty() {
        // The memory system runs its operations: it completes when they have all reported.
        let origin = crate::core::pending::Origin {
            func: f.0,
            pc: pc as u32,
            lane: ex.lanes.trailing_zeros().min(63) as u16,
        };
        ctx.pending.hold_in_flight(
            w,
            deps.writes(pc),
            (slot, origin),
            class.is_long(),
            cycle,
            t.release,
            t.extra,
            t.is_load,
        );
    } else if !matches!(ex.flow, Flow::CollectiveWait { .. }) {
        // (A collective that waits for its members writes nothing yet.)
        w.set_ready(deps.writes(pc), cycle + lat.max(1), class.is_long());
    }
    w.instructions += 1;
    let lanes = ex.lanes.count_ones() as u64;
    ctx.stats.warp_instructions += 1;
    ctx.stats.thread_instructions += lanes;
    ctx.stats.lanes[lanes as usize] += 1;
    if let Some(l) = ctx.lines.as_deref_mut() {
        l.issue(sh.prog.inst_index(f, pc as u32), lanes as u32);
    }
    count_energy_events(&mut ctx.stats.energy, at, lanes, deps);
    let mut done = IssueDone {
        passes: t.passes,
        tensor_busy: t.tensor_busy,
        completed: false,
        release: None,
        lanes_exited: false,
    };
    let cta = &mut *ctx.cta;
    if let Some(bar) = &ex.bar {
        done.release = arrive(cta, w, at, bar, slot, sh)?;
    }
    let exited_before = w.simt.exited_mask();
    done.completed = reconverge(cta, w, at, ex, sh)?;
    if cta.thread_arrivals {
        let gone = w.simt.exited_mask() & !exited_before & w.valid;
        cta.exited_threads += gone.count_ones();
        done.lanes_exited = gone != 0;
    }
    // A control transfer refills the instruction buffer: after a branch, call or return
    // it is a fetch stall; when the reconvergence policy moved the pc (a token popped, a
    // thread group switched) it is a reconvergence stall.
    if w.state != WarpState::Completed && (w.func() != f || w.pc() as usize != pc + 1) {
        let branch = matches!(ex.flow, Flow::Jump { .. } | Flow::Multi { .. })
            || matches!(at.inst.op, gpusim_isa::Op::Ret { .. });
        let why = if branch {
            Stall::NoInstruction
        } else {
            Stall::Reconvergence
        };
        w.hold(cycle + sh.cfg.sm.ifetch_cycles as u64, why);
    }
    if class.unit() == Unit::LdSt {
        w.mem_done = w.mem_done.max(t.mem_end);
    }
    Ok(done)
}

/// A fence's name for the timeline's instants (None: not a fence).
fn fence_name(op: &gpusim_isa::Op) -> Option<String> {
    match op {
        gpusim_isa::Op::Fence { level, .. } => Some(format!("fence {level:?}")),
        gpusim_isa::Op::FenceProxyAsync { .. } => Some("fence.proxy.async".into()),
        _ => None,
    }
}

/// The power model's counts of one issued instruction (`power::EnergyEvents`): its lanes on
/// their unit, their register reads and writes, a tensor instruction's multiply-adds.
#[inline]
fn count_energy_events(
    e: &mut crate::power::EnergyEvents,
    at: &Fetched,
    lanes: u64,
    deps: &DepTable,
) {
    e.lane_ops[at.class.unit() as usize] += lanes;
    let regs = (deps.reads(at.pc).len() + deps.writes(at.pc).len()) as u64;
    e.register_accesses += lanes * regs;
    if at.class.unit() == Unit::Tensor && lanes > 0 {
        if let Some((kind, fmas)) = crate::power::tensor::tensor_fmas(&at.inst.op) {
            e.tensor_fmas[kind as usize] += fmas;
        }
    }
}

/// Stage 6: the warp arrives at a CTA barrier; returns the release if it was the last.
///
/// Independent thread scheduling: a diverged warp reaches a CTA barrier group by group;
/// each arrival counts the group's threads and only the group waits (the policy parks it,
/// `Flow::BarrierWait`); the warp blocks when no group can run (`Outcome::Blocked`).
fn arrive(
    cta: &mut Cta,
    w: &mut Warp,
    at: &Fetched,
    bar: &BarOp,
    slot: usize,
    sh: &Shared,
) -> Result<Option<Release>, Fault> {
    let its = w.simt.independent_threads();
    let inst = at.inst;
    if bar.divergent && !its && sh.cfg.sm.barrier_divergence == BarrierDivergence::Fault {
        return Err(Fault::new(
            FaultKind::BarrierDivergence,
            format!(
                "barrier {} reached by a diverged warp in kernel `{}` at {}:{}: executing lanes {:#x}, live lanes {:#x} (CTA {:?}, warp {}; set sm.barrier_divergence: count-warp for the formal model's rule)",
                bar.barid, sh.geom.kernel, sh.prog.module.file, inst.span.line, bar.preds.0, w.valid & !w.simt.exited_mask(), cta.ctaid, w.warp_in_cta
            ),
        ));
    }
    let wait = matches!(bar.kind, BarKind::Sync | BarKind::Red(_));
    if wait {
        // Under ITS the waiting lanes are parked by the policy; the per-warp scoreboard
        // must not hold the destination, or another group could not reach its bar.red.
        if !its {
            w.state = WarpState::Barrier(1 << bar.barid);
            if let Some((r, _)) = bar.red {
                w.set_ready(&[r.0], u64::MAX, false);
            }
        }
    }
    let arrival = Arrival {
        barid: bar.barid,
        count: bar.count,
        red: bar.red.map(|r| r.1),
        preds: bar.preds,
        wait: wait.then_some((slot, bar.red.map(|(r, _)| (r, bar.preds.0)))),
        // Under ITS only the executing (guard-true) threads arrive: PTX ISA 9.0
        // `barrier{.cta}` — an executing thread "waits for all non-exited threads from
        // its warp", so lanes that skip the barrier leave the CTA waiting. The
        // warp-synchronous policies count the whole warp (Habermaier §5.5).
        threads: if its {
            bar.preds.0.count_ones()
        } else {
            w.warp_size
        },
        site: crate::core::cta::Site {
            func: at.func_id.0,
            pc: at.pc as u32,
            line: inst.span.line,
            aligned: matches!(inst.op, gpusim_isa::Op::Bar { aligned: true, .. }),
        },
    };
    cta.arrive(arrival, w.warp_size, sh.cfg.sm.exited_warps_arrive)
        .map_err(|m| {
            Fault::new(
                FaultKind::BarrierDivergence,
                format!(
                    "{m} in kernel `{}` at {}:{}",
                    sh.geom.kernel, sh.prog.module.file, inst.span.line
                ),
            )
        })
}

/// Stage 6: the reconvergence policy steps the warp past the instruction (`simt`); returns
/// whether the warp completed.
fn reconverge(
    cta: &Cta,
    w: &mut Warp,
    at: &Fetched,
    ex: &Executed,
    sh: &Shared,
) -> Result<bool, Fault> {
    let step_ctx = StepCtx {
        frame_depth: ex.frame_depth,
        func: at.func_id,
        info: &sh.prog.reconv,
        long_latency: at.class.is_long(),
        taken_first: sh.cfg.sm.divergence_order == crate::config::DivergenceOrder::TakenFirst,
    };
    let line = at.inst.span.line;
    match w.simt.step(ex.flow.clone(), &step_ctx) {
        Ok(Outcome::Active { popped_frame_depth }) => {
            if let Some(d) = popped_frame_depth {
                w.frames.truncate((d as usize).max(1));
            }
        }
        Ok(Outcome::Blocked {
            popped_frame_depth,
            barriers,
        }) => {
            if let Some(d) = popped_frame_depth {
                w.frames.truncate((d as usize).max(1));
            }
            w.state = WarpState::Barrier(barriers);
        }
        Ok(Outcome::Completed) => {
            w.state = WarpState::Completed;
            return Ok(true);
        }
        Ok(Outcome::Deadlocked) => {
            let mut f = Fault::new(
                FaultKind::Deadlock,
                format!(
                    "independent thread scheduling deadlock: every live thread of warp {} of CTA {:?} waits at a convergence barrier, bar.warp.sync or .sync collective for threads of its warp that cannot arrive (last issued: {}:{} in kernel `{}`)",
                    w.warp_in_cta, cta.ctaid, sh.prog.module.file, line, sh.geom.kernel
                ),
            );
            f.details = vec![crate::core::fault::summarise_state(&w.simt.describe())];
            return Err(f);
        }
        Err(e) => {
            return Err(Fault::new(
                FaultKind::Control,
                format!(
                    "{} at {}:{} in kernel `{}` (CTA {:?}, warp {})",
                    e.0, sh.prog.module.file, line, sh.geom.kernel, cta.ctaid, w.warp_in_cta
                ),
            ))
        }
    }
    Ok(false)
}

/// Livelock detection (`core::liveness`): at a taken backward branch the warp's complete
/// state is recorded; a repeat within one memory epoch is a suspect for the GPU to check.
fn watch_backedge(w: &mut Warp, ex: &Executed, epoch: &mut u64, res: &mut StepResult) {
    if ex.backedge && matches!(ex.flow, Flow::Jump { .. } | Flow::Multi { .. }) {
        let ep = *epoch;
        let regs = &w.regs;
        let simt = &w.simt;
        let depth = w.frames.len();
        w.live.backedge(ep, |h: &mut dyn Hasher| {
            simt.hash_state(h);
            h.write_usize(depth);
            for r in regs {
                h.write_u64(*r);
            }
        });
        if w.live.is_spinning(ep) {
            res.spin_suspect = true;
        }
    }
}
