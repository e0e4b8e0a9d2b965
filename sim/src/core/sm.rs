//! One SM: resident CTAs and warps, its warp schedulers, the scoreboard, barriers, and the
//! per-cycle issue step. Each scheduler issues at most one instruction per cycle.

mod hopper;
mod report;
use super::cta::{Arrival, Cta, Release};
use super::exec::{ExecEnv, Executed, MemSummary};
use super::fault::{Fault, FaultKind};
use super::program::Program;
use super::program::Unit;
use super::sched::{checked_pick, not_selected, Candidate};
use super::subpart::SubPartition;
use super::warp::{Warp, WarpState};
use crate::config::{BarrierDivergence, Config};
use crate::simt::{Flow, Outcome, StepCtx};
use crate::stats::{SmStats, Stall, WarpEvent};
use gpusim_isa::{BarKind, Space};
pub use report::Wait;
use std::hash::Hasher;

pub struct Sm {
    pub id: u32,
    pub warps: Vec<Option<Warp>>,
    pub ctas: Vec<Option<Cta>>,
    parts: Vec<SubPartition>,
    pub used_threads: u32,
    pub used_warps: u32,
    pub used_regs: u32,
    /// Registers in use in each sub-partition's register file.
    part_regs: Vec<u32>,
    pub used_shared: u32,
    pub stats: SmStats,
    /// This SM's L1, MSHRs and shared-memory bank locks (`mem::hierarchy`).
    pub mem: crate::mem::hierarchy::SmMemory,
    pub events: Vec<WarpEvent>,
    next_age: u64,
    cands: Vec<Candidate>,
    /// Bulk and tensor copies on their way into shared memory (`sm::hopper`).
    landings: super::landing::Landings,
    landing_buf: Vec<super::landing::Landing>,
    /// Messages to other SMs and to the cluster barriers, collected by the GPU after each
    /// step (`core::cluster`).
    pub outbox: Vec<super::cluster::Outgoing>,
    /// The asynchronous-synchronisation checker's events (None: not recording;
    /// `LaunchSpec::record_async`).
    pub async_log: Option<Vec<gpusim_models::async_sync::AsyncEvent>>,
    /// Instructions picked in this cycle's step, issued in the memory exchange.
    deferred: Vec<Deferred>,
}

/// What one SM cycle did.
pub struct StepResult {
    pub issued: u32,
    /// Earliest future cycle at which a stalled warp becomes ready.
    pub next_ready: Option<u64>,
    pub ctas_completed: u32,
    /// A warp was found spinning (possible livelock): the GPU checks all warps.
    pub spin_suspect: bool,
}

/// Launch-wide state shared by all SMs during a step.
pub struct Shared<'a> {
    pub prog: &'a Program,
    pub cfg: &'a Config,
    pub geom: &'a super::exec::LaunchGeom,
    pub params: &'a [u8],
    pub consts: &'a [u8],
    /// Record a `WarpEvent` per issued instruction.
    pub trace: bool,
    /// The memory program of every operation, and the cost of each place a step reaches.
    pub programs: &'a crate::mem::hierarchy::ProgramTable,
    pub costs: crate::mem::hierarchy::Costs,
    /// Timing-only run: tensor instructions leave their accumulators unchanged.
    pub skip_tensor_math: bool,
    /// What the asynchronous-synchronisation recorder needs (with `Sm::async_log`).
    pub async_interest: Option<&'a gpusim_models::async_sync::Interest>,
}

impl Sm {
    pub fn new(id: u32, cfg: &Config) -> Sm {
        let n = cfg.sm.max_warps as usize;
        Sm {
            id,
            warps: (0..n).map(|_| None).collect(),
            ctas: (0..cfg.sm.max_ctas as usize).map(|_| None).collect(),
            parts: (0..cfg.sm.schedulers)
                .map(|i| SubPartition::new(cfg, id, i))
                .collect(),
            used_threads: 0,
            used_warps: 0,
            used_regs: 0,
            part_regs: vec![0; cfg.sm.schedulers as usize],
            used_shared: 0,
            stats: SmStats::default(),
            mem: crate::mem::hierarchy::SmMemory::new(cfg),
            events: Vec::new(),
            next_age: 0,
            cands: Vec::with_capacity(n),
            landings: Default::default(),
            landing_buf: Vec::new(),
            outbox: Vec::new(),
            async_log: None,
            deferred: Vec::with_capacity(cfg.sm.schedulers as usize * 2),
        }
    }

    /// Whether `step` left instructions for the memory exchange.
    pub fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    pub fn is_idle(&self) -> bool {
        self.ctas.iter().all(Option::is_none)
    }

    /// Whether a CTA with these needs fits next to the resident ones. Each sub-partition has
    /// its own register file (`sm.registers / sm.schedulers`), so the CTA's warps must fit
    /// in the sub-partitions of the slots they would take.
    pub fn fits(&self, cfg: &Config, threads: u32, warps: u32, regs: u32, shared: u32) -> bool {
        self.ctas.iter().any(Option::is_none)
            && self.used_threads + threads <= cfg.sm.max_threads
            && self.used_warps + warps <= cfg.sm.max_warps
            && self.used_regs + regs <= cfg.sm.registers
            && self.used_shared + shared <= cfg.sm.shared_bytes
            && self.fits_register_files(cfg, warps, regs)
    }

    fn fits_register_files(&self, cfg: &Config, warps: u32, regs: u32) -> bool {
        let n = self.parts.len();
        let cap = cfg.sm.registers / n as u32;
        let per_warp = regs / warps.max(1);
        let mut need = vec![0u32; n];
        for slot in self
            .warps
            .iter()
            .enumerate()
            .filter(|(_, w)| w.is_none())
            .map(|(i, _)| i)
            .take(warps as usize)
        {
            need[slot % n] += per_warp;
        }
        need.iter()
            .zip(&self.part_regs)
            .all(|(need, used)| used + need <= cap)
    }

    /// Make a CTA resident: place it and its warps in free slots.
    /// Make a CTA resident; returns its slot.
    pub fn launch_cta(&mut self, mut cta: Cta, warps: Vec<Warp>) -> usize {
        let cslot = self
            .ctas
            .iter()
            .position(Option::is_none)
            .expect("fits() was checked");
        self.used_threads += cta.threads;
        self.used_warps += cta.n_warps;
        self.used_regs += cta.regs;
        self.used_shared += cta.shared_bytes;
        for mut w in warps {
            let slot = self
                .warps
                .iter()
                .position(Option::is_none)
                .expect("warp slots were checked");
            w.cta = cslot;
            self.part_regs[slot % self.parts.len()] += cta.regs / cta.n_warps.max(1);
            w.age = self.next_age;
            self.next_age += 1;
            cta.warps.push(slot);
            self.warps[slot] = Some(w);
        }
        self.ctas[cslot] = Some(cta);
        self.stats.max_resident_warps = self.stats.max_resident_warps.max(self.used_warps as u64);
        cslot
    }

    /// One cycle: every scheduler picks a ready warp and issues its next instruction.
    ///
    /// An instruction that reaches the memory system (`exec::uses_memory_system`) is picked
    /// here but issued in `exchange`, after every SM has stepped: the step touches nothing
    /// outside this SM, so SMs may step in any order (or at once).
    pub fn step(&mut self, cycle: u64, sh: &Shared, epoch: &mut u64) -> Result<StepResult, Fault> {
        let mut res = StepResult {
            issued: 0,
            next_ready: None,
            ctas_completed: 0,
            spin_suspect: false,
        };
        self.land_async_copies(cycle, epoch);
        // No cluster unit, no peer messages: the latency is never used.
        let one_way = sh
            .cfg
            .sm
            .cluster
            .map_or(1, |c| (c.dsmem_latency as u64).div_ceil(2).max(1));
        self.land_bulk(cycle, epoch, sh.prog, one_way);
        if let Some(t) = self.next_landing() {
            res.next_ready = Some(t);
        }
        let n_parts = self.parts.len();
        for s in 0..n_parts {
            self.cands.clear();
            for slot in (s..self.warps.len()).step_by(n_parts) {
                let Some(w) = &self.warps[slot] else { continue };
                match classify(w, &self.parts[s], cycle) {
                    Ok(()) => self.cands.push(Candidate {
                        slot,
                        age: w.age,
                        ready: true,
                        long_wait: false,
                    }),
                    Err((stall, wake)) => {
                        self.stats.stall(stall, 1);
                        if let Some(t) = wake {
                            res.next_ready = Some(res.next_ready.map_or(t, |n: u64| n.min(t)));
                        }
                        // stalled but schedulable later: policies such as two-level track them
                        if !matches!(stall, Stall::Barrier | Stall::Finished) {
                            let long_wait = stall == Stall::ScoreboardLong;
                            self.cands.push(Candidate {
                                slot,
                                age: w.age,
                                ready: false,
                                long_wait,
                            });
                        }
                    }
                }
            }
            let Some(slot) = checked_pick(self.parts[s].sched.as_mut(), &self.cands) else {
                continue;
            };
            self.stats
                .stall(Stall::NotSelected, not_selected(&self.cands));
            self.stats.stall(Stall::Issued, 1);
            res.issued += 1;
            if self.reaches_memory_system(slot, sh) {
                self.defer(slot, s, false);
                continue;
            }
            self.issue_picked(slot, s, cycle, sh, None, epoch, &mut res)?;
        }
        res.ctas_completed = self.retire_completed_ctas();
        Ok(res)
    }

    /// Issue the instructions `step` deferred, in the order it picked them, now that this
    /// SM holds the memory system (global memory and the L2 side): the GPU calls this for
    /// every SM in id order once all have stepped. Their trace events and checker records
    /// take the places they would have had, had they issued in the step.
    pub fn exchange(
        &mut self,
        cycle: u64,
        sh: &Shared,
        global: &mut crate::mem::GlobalMemory,
        l2: &mut crate::mem::hierarchy::Backend,
        epoch: &mut u64,
    ) -> Result<StepResult, Fault> {
        let mut res = StepResult {
            issued: 0,
            next_ready: None,
            ctas_completed: 0,
            spin_suspect: false,
        };
        let deferred = std::mem::take(&mut self.deferred);
        let (mut moved_events, mut moved_logs) = (0, 0);
        for d in &deferred {
            let (events_before, logs_before) = (self.events.len(), self.async_log_len());
            let mem = Some(MemSystem {
                global: &mut *global,
                back: &mut *l2,
            });
            let r = if d.second {
                self.issue(d.slot, d.part, cycle, sh, mem, epoch, &mut res)
                    .map(|_| ())
            } else {
                self.issue_picked(d.slot, d.part, cycle, sh, mem, epoch, &mut res)
            };
            moved_events += move_tail(&mut self.events, events_before, d.events_at + moved_events);
            if let Some(log) = self.async_log.as_mut() {
                moved_logs += move_tail(log, logs_before, d.logs_at + moved_logs);
            }
            if let Err(f) = r {
                self.deferred = deferred;
                self.deferred.clear();
                return Err(f);
            }
        }
        self.deferred = deferred;
        self.deferred.clear();
        res.ctas_completed = self.retire_completed_ctas();
        Ok(res)
    }

    /// Whether warp `slot`'s next instruction reaches the memory system.
    fn reaches_memory_system(&self, slot: usize, sh: &Shared) -> bool {
        let Some(w) = &self.warps[slot] else {
            return false;
        };
        let func = sh.prog.module.function(w.func());
        func.body
            .get(w.pc() as usize)
            .is_some_and(|inst| super::exec::uses_memory_system(&inst.op))
    }

    fn defer(&mut self, slot: usize, part: usize, second: bool) {
        let logs_at = self.async_log_len();
        self.deferred.push(Deferred {
            slot,
            part,
            second,
            events_at: self.events.len(),
            logs_at,
        });
    }

    fn async_log_len(&self) -> usize {
        self.async_log.as_ref().map_or(0, Vec::len)
    }

    /// Issue the instruction a scheduler picked for warp `slot`, and with dual issue a second,
    /// independent one of the same warp to another unit (deferred to the exchange when it
    /// reaches the memory system and `mem` is not held). Counts the second in `res.issued`;
    /// the caller counted the first.
    #[allow(clippy::too_many_arguments)]
    fn issue_picked(
        &mut self,
        slot: usize,
        s: usize,
        cycle: u64,
        sh: &Shared,
        mut mem: Option<MemSystem>,
        epoch: &mut u64,
        res: &mut StepResult,
    ) -> Result<(), Fault> {
        let first = self.issue(slot, s, cycle, sh, reborrow(&mut mem), epoch, res)?;
        if !sh.cfg.sm.dual_issue {
            return Ok(());
        }
        let Some(w) = &self.warps[slot] else {
            return Ok(());
        };
        let second = next_unit(w);
        if !(second.is_some_and(|u| Some(u) != first) && classify(w, &self.parts[s], cycle).is_ok())
        {
            return Ok(());
        }
        res.issued += 1;
        if mem.is_none() && self.reaches_memory_system(slot, sh) {
            self.defer(slot, s, true);
            return Ok(());
        }
        self.issue(slot, s, cycle, sh, mem, epoch, res)?;
        Ok(())
    }

    /// Land every `cp.async` copy whose global read has completed by `cycle` in its CTA's
    /// shared memory, before any warp issues in this cycle (so an instruction issued at or
    /// after a copy's `ready` sees its bytes, one issued before sees the old ones). Copies land
    /// in warp-slot order, each warp's in issue order: deterministic, and any order is one
    /// PTX allows for racing copies. Cycles skipped while no warp can issue need no landing:
    /// nothing reads shared memory in them. A CTA that retires drops its pending copies
    /// (its shared memory is gone).
    fn land_async_copies(&mut self, cycle: u64, epoch: &mut u64) {
        let Sm { warps, ctas, .. } = self;
        for w in warps.iter_mut().flatten() {
            if w.async_copies.iter().all(|c| c.ready > cycle) {
                continue;
            }
            let cta = ctas[w.cta].as_mut().expect("a warp's CTA is resident");
            let mut changed = false;
            w.async_copies.retain(|c| {
                if c.ready > cycle {
                    return true;
                }
                let (a, n) = (c.addr as usize, c.len as usize);
                let dst = &mut cta.shared[a..a + n];
                if dst != &c.data[..n] {
                    dst.copy_from_slice(&c.data[..n]);
                    changed = true;
                }
                false
            });
            // New shared bytes are progress (livelock detection watches the epoch).
            if changed {
                *epoch += 1;
            }
        }
    }

    /// Account for `n` skipped cycles from `cycle` on, in which no warp can issue: each warp
    /// stays in the state it is in now (the skip ends at the earliest wake-up of any warp).
    pub fn account_idle(&mut self, cycle: u64, n: u64) {
        let n_parts = self.parts.len();
        for (slot, w) in self.warps.iter().enumerate() {
            let Some(w) = w else { continue };
            let stall = match classify(w, &self.parts[slot % n_parts], cycle) {
                Ok(()) => Stall::PipeBusy,
                Err((s, _)) => s,
            };
            self.stats.stall(stall, n);
        }
    }

    /// Issue the next instruction of warp `slot` on sub-partition `part`; returns the unit
    /// kind it occupied.
    #[allow(clippy::too_many_arguments)]
    fn issue(
        &mut self,
        slot: usize,
        part: usize,
        cycle: u64,
        sh: &Shared,
        mem_sys: Option<MemSystem>,
        epoch: &mut u64,
        res: &mut StepResult,
    ) -> Result<Option<Unit>, Fault> {
        let unit = self.warps[slot].as_ref().and_then(next_unit);
        let mut held = None;
        if let Some(u) = unit {
            let p = &mut self.parts[part];
            if let Some(i) = p.free_unit(u, cycle) {
                self.stats.unit_busy[u as usize] += p.occupy(u, i, cycle);
                held = Some((u, i));
            }
        }
        // Borrow the warp, its CTA and the counters side by side (no move of the warp).
        let Sm {
            warps,
            ctas,
            stats,
            events,
            id,
            mem,
            async_log,
            ..
        } = self;
        let w = warps[slot].as_mut().expect("picked warps exist");
        let cta = ctas[w.cta].as_mut().expect("a warp's CTA is resident");
        let (global, l2) = match mem_sys {
            Some(m) => (Some(m.global), Some(m.back)),
            None => (None, None),
        };
        let ctx = IssueCtx {
            sm_id: *id,
            cta,
            stats,
            events,
            mem,
            l2,
            async_log,
        };
        let r = Self::issue_warp(ctx, w, slot, cycle, sh, global, epoch, res);
        w.refresh_ready(sh.prog);
        let done = r?;
        self.after_async(slot, cycle, sh.prog);
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
            let releases: Vec<Release> = (0..super::cta::N_BARRIERS)
                .filter_map(|b| cta.try_complete(b, ws, true))
                .collect();
            for r in releases {
                self.apply_release(r, cycle, sh, epoch);
            }
        }
        Ok(unit)
    }

    #[allow(clippy::too_many_arguments)]
    fn issue_warp(
        ctx: IssueCtx,
        w: &mut Warp,
        slot: usize,
        cycle: u64,
        sh: &Shared,
        global: Option<&mut crate::mem::GlobalMemory>,
        epoch: &mut u64,
        res: &mut StepResult,
    ) -> Result<IssueDone, Fault> {
        let f = w.func();
        let pc = w.pc() as usize;
        let func = sh.prog.module.function(f);
        let Some(inst) = func.body.get(pc) else {
            let cta = ctx.cta.ctaid;
            return Err(Fault::new(
                FaultKind::Control,
                format!(
                    "warp {} of CTA {cta:?} ran past the end of `{}` (no exit or ret on this path)",
                    w.warp_in_cta, func.name
                ),
            ));
        };
        let cta = ctx.cta;
        let mut env = ExecEnv {
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
            mem: super::exec::MemPort {
                sm: &mut *ctx.mem,
                back: ctx.l2,
                programs: sh.programs,
                costs: sh.costs,
                counters: &mut ctx.stats.memory,
            },
            tma: sh.cfg.sm.tma,
            cluster: sh.cfg.sm.cluster,
            wgmma_log: &mut cta.wgmma_log,
            skip_tensor_math: sh.skip_tensor_math,
        };
        if let (Some(log), Some(interest)) = (ctx.async_log.as_mut(), sh.async_interest) {
            if let Some((kind, lanes)) = env.async_event(w, inst, interest) {
                log.push(gpusim_models::async_sync::AsyncEvent {
                    cycle,
                    sm: ctx.sm_id,
                    cta: cta.linear as u32,
                    ctaid: cta.ctaid,
                    warp: w.warp_in_cta,
                    lanes: lanes as u32,
                    at: Some((f.0, pc as u32)),
                    kind,
                });
            }
        }
        let ex: Executed = env.execute(w, inst)?;
        // An executed wgmma.mma_async: D's completion and the cycles it holds the tensor unit.
        let tensor_busy = match ex.lanes {
            0 => None,
            _ => sh
                .cfg
                .sm
                .wgmma
                .and_then(|wg| super::wgmma_state::time_issue(w, &inst.op, cycle, &wg)),
        };
        let class = sh.prog.funcs[f.0 as usize].class[pc];
        let passes = match ex.mem {
            Some(m) => mem_passes(&m, ctx.stats),
            None => super::program::tensor_passes(&inst.op),
        };
        // The last pass leaves the unit (passes − 1) intervals after the first, so the result
        // comes that much later than its programs (or the class latency) say.
        let extra = (passes as u64 - 1) * class.unit().shape(&sh.cfg.sm.units).1 as u64;
        let (lat, mem_end) = match ex.mem {
            Some(m) => {
                if matches!(inst.op, gpusim_isa::Op::Ld { .. })
                    && matches!(m.space, Space::Global | Space::Local)
                {
                    ctx.stats
                        .memory
                        .record_load_latency(m.release - cycle + extra);
                }
                (m.release - cycle + extra, m.end + extra)
            }
            None => {
                let l = class.latency(sh.cfg) as u64;
                (l, cycle + l)
            }
        };

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
        } else if !matches!(ex.flow, Flow::CollectiveWait { .. }) {
            // (A collective that waits for its members writes nothing yet.)
            w.set_ready(deps.writes(pc), cycle + lat.max(1), class.is_long());
        }
        w.instructions += 1;
        ctx.stats.warp_instructions += 1;
        ctx.stats.thread_instructions += ex.lanes.count_ones() as u64;
        ctx.stats.lanes[ex.lanes.count_ones() as usize] += 1;
        let mut done = IssueDone {
            passes,
            tensor_busy,
            completed: false,
            release: None,
            lanes_exited: false,
        };
        // Independent thread scheduling: a diverged warp reaches a CTA barrier group by group;
        // each arrival counts the group's threads and only the group waits (the policy parks
        // it, `Flow::BarrierWait`); the warp blocks when no group can run (`Outcome::Blocked`).
        let its = w.simt.independent_threads();
        if let Some(bar) = ex.bar {
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
                site: super::cta::Site {
                    func: f.0,
                    pc: pc as u32,
                    line: inst.span.line,
                    aligned: matches!(inst.op, gpusim_isa::Op::Bar { aligned: true, .. }),
                },
            };
            let rel = cta
                .arrive(arrival, w.warp_size, sh.cfg.sm.exited_warps_arrive)
                .map_err(|m| {
                    Fault::new(
                        FaultKind::BarrierDivergence,
                        format!(
                            "{m} in kernel `{}` at {}:{}",
                            sh.geom.kernel, sh.prog.module.file, inst.span.line
                        ),
                    )
                })?;
            done.release = rel;
        }
        let exited_before = w.simt.exited_mask();
        let step_ctx = StepCtx {
            frame_depth: ex.frame_depth,
            func: f,
            info: &sh.prog.reconv,
            long_latency: class.is_long(),
            taken_first: sh.cfg.sm.divergence_order == crate::config::DivergenceOrder::TakenFirst,
        };
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
                done.completed = true;
            }
            Ok(Outcome::Deadlocked) => {
                let mut f = Fault::new(
                    FaultKind::Deadlock,
                    format!(
                        "independent thread scheduling deadlock: every live thread of warp {} of CTA {:?} waits at a convergence barrier, bar.warp.sync or .sync collective for threads of its warp that cannot arrive (last issued: {}:{} in kernel `{}`)",
                        w.warp_in_cta, cta.ctaid, sh.prog.module.file, inst.span.line, sh.geom.kernel
                    ),
                );
                f.details = vec![super::fault::summarise_state(&w.simt.describe())];
                return Err(f);
            }
            Err(e) => {
                return Err(Fault::new(
                    FaultKind::Control,
                    format!(
                        "{} at {}:{} in kernel `{}` (CTA {:?}, warp {})",
                        e.0,
                        sh.prog.module.file,
                        inst.span.line,
                        sh.geom.kernel,
                        cta.ctaid,
                        w.warp_in_cta
                    ),
                ))
            }
        }
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
                || matches!(inst.op, gpusim_isa::Op::Ret { .. });
            let why = if branch {
                Stall::NoInstruction
            } else {
                Stall::Reconvergence
            };
            w.hold(cycle + sh.cfg.sm.ifetch_cycles as u64, why);
        }
        if class.unit() == super::program::Unit::LdSt {
            w.mem_done = w.mem_done.max(mem_end);
        }
        if sh.trace {
            let after = w.simt.paper_state(w.warp_size);
            let after = w.trace_states.push(after);
            ctx.events.push(WarpEvent {
                // `run` numbers the launches.
                launch: 0,
                cycle,
                sm: ctx.sm_id,
                cta: cta.ctaid,
                warp: w.warp_in_cta,
                func: func.name.clone(),
                pc: pc as u32,
                line: inst.span.line,
                text: gpusim_isa::print::inst_to_ptx(&sh.prog.module, func, inst),
                exec: ex.lanes,
                after,
            });
        }
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
        Ok(done)
    }

    fn apply_release(&mut self, rel: Release, cycle: u64, sh: &Shared, epoch: &mut u64) {
        *epoch += 1;
        for (slot, red) in rel.warps {
            let Some(w) = self.warps[slot].as_mut() else {
                continue;
            };
            if let Some((r, lanes, value)) = red {
                for l in 0..w.warp_size as usize {
                    if lanes >> l & 1 == 1 {
                        w.write(r.0, l, value);
                    }
                }
                w.set_ready(&[r.0], cycle + sh.cfg.latency.barrier as u64, false);
                w.refresh_ready(sh.prog);
            }
            if w.simt.independent_threads() {
                // Only the threads waiting at this barrier run again.
                w.simt.barrier_released(rel.barid);
                w.refresh_ready(sh.prog);
            }
            if let WarpState::Barrier(_) = w.state {
                w.state = WarpState::Active;
            }
        }
    }

    fn warp_completed(
        &mut self,
        slot: usize,
        sh: &Shared,
        epoch: &mut u64,
        res: &mut StepResult,
        cycle: u64,
    ) {
        *epoch += 1;
        let cslot = self.warps[slot].as_ref().unwrap().cta;
        let cta = self.ctas[cslot].as_mut().unwrap();
        cta.completed_warps += 1;
        if cta.cluster.peers.len() > 1 {
            // Exited threads count as arrived at the cluster barrier from now on.
            let threads = self.warps[slot]
                .as_ref()
                .map_or(0, |w| w.valid.count_ones());
            self.outbox.push(super::cluster::Outgoing::ClusterExit {
                cluster: cta.cluster.id,
                threads,
            });
        }
        let ws = sh.cfg.sm.warp_size;
        if sh.cfg.sm.exited_warps_arrive {
            // Hardware: waiters on a barrier proceed once the non-arriving warps have exited.
            let mut releases = Vec::new();
            for b in 0..super::cta::N_BARRIERS {
                if let Some(r) = cta.try_complete(b, ws, true) {
                    releases.push(r);
                }
            }
            for r in releases {
                self.apply_release(r, cycle, sh, epoch);
            }
        }
        let _ = res;
    }

    /// Retire the CTAs whose warps have all completed, at the end of a cycle (so every warp is
    /// accounted for in every cycle it was resident); returns how many retired.
    fn retire_completed_ctas(&mut self) -> u32 {
        let mut n = 0;
        for cslot in 0..self.ctas.len() {
            let done = self.ctas[cslot]
                .as_ref()
                .is_some_and(|c| c.completed_warps == c.n_warps);
            if !done {
                continue;
            }
            let cta = self.ctas[cslot].take().unwrap();
            self.forget_cta(cslot);
            let n_parts = self.parts.len();
            for s in &cta.warps {
                self.warps[*s] = None;
                self.part_regs[s % n_parts] -= cta.regs / cta.n_warps.max(1);
            }
            self.used_threads -= cta.threads;
            self.used_warps -= cta.n_warps;
            self.used_regs -= cta.regs;
            self.used_shared -= cta.shared_bytes;
            n += 1;
        }
        n
    }
}

/// Whether `w` can issue this cycle, or the state it is stalled in and when it may wake.
fn classify(w: &Warp, part: &SubPartition, cycle: u64) -> Result<(), (Stall, Option<u64>)> {
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
fn next_unit(w: &Warp) -> Option<Unit> {
    w.next_unit
}

/// Passes through the ldst unit of one memory instruction, counted in `stats`: global and
/// local accesses take one per L1 line they touch (the L1 accepts one line per cycle: the
/// GPGPU-Sim / Accel-Sim L1 model, where an uncoalesced access is replayed line by line),
/// shared ones one per conflict wavefront (the conflict degree, CUDA C++ Programming Guide:
/// bank conflicts are serialised); constant and param reads take one.
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
            m.conflict_degree.max(1)
        }
        Space::Const | Space::Param => 1,
    }
}

/// The parts of the SM that issuing one warp's instruction touches.
/// The state all SMs share, held by one SM at a time in the memory exchange.
pub struct MemSystem<'a> {
    pub global: &'a mut crate::mem::GlobalMemory,
    pub back: &'a mut crate::mem::hierarchy::Backend,
}

/// An instruction `step` picked and `exchange` issues.
struct Deferred {
    slot: usize,
    part: usize,
    /// The second instruction of a dual issue (no third follows it).
    second: bool,
    /// Where its trace event and checker record go among the SM's (their lengths then).
    events_at: usize,
    logs_at: usize,
}

fn reborrow<'b>(m: &'b mut Option<MemSystem<'_>>) -> Option<MemSystem<'b>> {
    m.as_mut().map(|m| MemSystem {
        global: &mut *m.global,
        back: &mut *m.back,
    })
}

/// Move the items pushed since `from` to position `to`; returns how many moved.
fn move_tail<T>(v: &mut [T], from: usize, to: usize) -> usize {
    let n = v.len() - from;
    if n > 0 && to < from {
        v[to..].rotate_right(n);
    }
    n
}

struct IssueCtx<'a> {
    sm_id: u32,
    cta: &'a mut Cta,
    stats: &'a mut SmStats,
    events: &'a mut Vec<WarpEvent>,
    mem: &'a mut crate::mem::hierarchy::SmMemory,
    l2: Option<&'a mut crate::mem::hierarchy::Backend>,
    async_log: &'a mut Option<Vec<gpusim_models::async_sync::AsyncEvent>>,
}

struct IssueDone {
    /// Passes of a memory instruction through the ldst unit (1 otherwise).
    passes: u32,
    /// Cycles a wgmma.mma_async holds the tensor unit (`wgmma_state::time_issue`).
    tensor_busy: Option<u64>,
    completed: bool,
    release: Option<Release>,
    /// Threads exited while their warp goes on (counted per thread, `Cta::thread_arrivals`).
    lanes_exited: bool,
}
