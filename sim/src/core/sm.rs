//! One SM: resident CTAs and warps, its warp schedulers, the scoreboard, barriers, and the
//! per-cycle issue step. Each scheduler issues at most one instruction per cycle.

pub mod hooks;
mod hopper;
mod parked;
mod report;
mod stages;
use super::cta::{Cta, Release};
use super::fault::Fault;
pub(crate) use super::pending::PendingMemory;
use super::pending::Route;
use super::program::Program;
use super::sched::{checked_pick, not_selected, Candidate};
use super::subpart::SubPartition;
use super::warp::{Warp, WarpState};
use crate::config::Config;
use crate::stats::lines::{Line, LineCounters, ParkedLines};
use crate::stats::{SmStats, Stall};
use crate::timeline::SmTimeline;
pub use report::Wait;
use stages::{classify, next_unit, Picked};

pub struct Sm {
    pub id: u32,
    pub warps: Vec<Option<Warp>>,
    /// Warps of retired CTAs, whose buffers the next CTA's warps reuse (`gpu::make_cta`).
    pub spare_warps: Vec<Warp>,
    /// CTAs whose warps have all completed and that have not retired yet (so the end of a
    /// cycle looks for them only when there are some).
    ctas_done: u32,
    /// Warp instructions of the CTAs retired so far (sampling's per-CTA estimate).
    pub retired_warp_instructions: u64,
    pub ctas: Vec<Option<Cta>>,
    /// Some warp may hold `cp.async` copies still to land (`land_async_copies` walks the
    /// warps only then).
    copies_waiting: bool,
    parts: Vec<SubPartition>,
    pub used_threads: u32,
    pub used_warps: u32,
    pub used_regs: u32,
    /// Registers in use in each sub-partition's register file.
    part_regs: Vec<u32>,
    pub used_shared: u32,
    pub stats: SmStats,
    /// The source view's counters of issues and unparked stalls, when collected
    /// (`collect_lines`; parked stalls: `Parked::lines`).
    pub(super) lines: Option<Box<LineCounters>>,
    /// The timeline's recorder, when one is written (`record_timeline`).
    pub(super) timeline: Option<Box<SmTimeline>>,
    /// This SM's L1, MSHRs and shared-memory bank locks (`mem::hierarchy`).
    pub mem: crate::mem::hierarchy::SmMemory,
    /// Observers of the issue path (`sm::hooks`: the warp trace, the checker's recorder).
    hooks: hooks::Hooks,
    /// The place in this cycle's issue order of the instruction issuing now (0 before any:
    /// landings), for the observers (`hooks::IssueView::order`).
    order: u32,
    next_age: u64,
    cands: Vec<Candidate>,
    /// Bulk and tensor copies on their way into shared memory (`sm::hopper`).
    landings: super::landing::Landings,
    landing_buf: Vec<super::landing::Landing>,
    /// Messages to other SMs and to the cluster barriers, collected by the GPU after each
    /// step (`core::cluster`).
    pub outbox: Vec<super::cluster::Outgoing>,
    /// Instructions picked in this cycle's step, issued in the memory exchange.
    deferred: Vec<Deferred>,
    /// Memory instructions in flight, whose registers are written at completion.
    pending: PendingMemory,
    /// Warps whose stall only an event can end, skipped by the step (`sm::parked`).
    parked: parked::Parked,
    /// Bit `slot` set while `warps[slot]` holds a warp: the step walks the bits, not the
    /// slots (an H100 SM running a GEMM holds 12 warps in 64 slots, and reading an empty
    /// slot's tag reads a line of its own).
    resident: crate::bits::BitSet,
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

impl StepResult {
    /// Some warp may become ready at `t`: the SM wakes by then.
    #[inline]
    fn wake_by(&mut self, t: u64) {
        self.next_ready = Some(self.next_ready.map_or(t, |n| n.min(t)));
    }
}

/// Launch-wide state shared by all SMs during a step.
pub struct Shared<'a> {
    pub prog: &'a Program,
    pub cfg: &'a Config,
    pub geom: &'a super::exec::LaunchGeom,
    pub params: &'a [u8],
    pub consts: &'a [u8],
    /// The memory program of every operation, and the cost of each place a step reaches.
    pub programs: &'a crate::mem::hierarchy::ProgramTable,
    pub costs: crate::mem::hierarchy::Costs,
    /// Timing-only run: tensor instructions leave their accumulators unchanged.
    pub skip_tensor_math: bool,
}

impl Sm {
    pub fn new(id: u32, cfg: &Config) -> Sm {
        let n = cfg.sm.max_warps as usize;
        let parts: Vec<SubPartition> = (0..cfg.sm.schedulers)
            .map(|i| SubPartition::new(cfg, id, i))
            .collect();
        // Warps are parked only when every scheduler picks among ready warps alone.
        let parks = cfg.debug.classify == crate::config::Classify::Parked
            && parts.iter().all(|p| p.sched.ready_only());
        Sm {
            spare_warps: Vec::new(),
            ctas_done: 0,
            retired_warp_instructions: 0,
            id,
            warps: (0..n).map(|_| None).collect(),
            ctas: (0..cfg.sm.max_ctas as usize).map(|_| None).collect(),
            copies_waiting: false,
            parked: parked::Parked::new(n, parts.len(), parks),
            resident: crate::bits::BitSet::new(n),
            parts,
            used_threads: 0,
            used_warps: 0,
            used_regs: 0,
            part_regs: vec![0; cfg.sm.schedulers as usize],
            used_shared: 0,
            stats: SmStats::default(),
            lines: None,
            timeline: None,
            mem: crate::mem::hierarchy::SmMemory::new(cfg),
            hooks: Default::default(),
            order: 0,
            next_age: 0,
            cands: Vec::with_capacity(n),
            landings: Default::default(),
            landing_buf: Vec::new(),
            outbox: Vec::new(),
            deferred: Vec::with_capacity(cfg.sm.schedulers as usize * 2),
            pending: PendingMemory::default(),
        }
    }

    /// Count issues and stalls per instruction (`stats::lines`) for a module of
    /// `instructions` instructions.
    pub fn collect_lines(&mut self, instructions: u32, warp_size: u32) {
        let counters = LineCounters::new(instructions, warp_size);
        let (slots, parts) = (self.warps.len(), self.parts.len());
        self.parked.lines = Some(ParkedLines::new(slots, parts, counters.clone()));
        self.lines = Some(Box::new(counters));
    }

    /// Record this SM's warp states and CTAs for the timeline (`crate::timeline`), and with
    /// `memory` its memory requests.
    pub fn record_timeline(&mut self, memory: bool) {
        let mut t = SmTimeline::new(self.warps.len(), self.ctas.len());
        t.set_memory(memory);
        self.timeline = Some(Box::new(t));
    }

    /// The timeline records since the last call (`finish_at`: the launch ended then, close
    /// whatever is open first).
    pub fn take_timeline(
        &mut self,
        finish_at: Option<u64>,
        out: &mut Vec<crate::timeline::Record>,
    ) {
        if let Some(t) = &mut self.timeline {
            if let Some(c) = finish_at {
                t.finish(c);
            }
            out.extend(t.drain());
        }
    }

    /// The timeline's slice of memory request `tag`, completing at `at`: from its
    /// instruction's issue, on its warp's track, named by the instruction.
    fn record_request(&mut self, tag: u64, at: u64, prog: &Program) {
        let Some((slot, origin, issued)) = self.pending.started(tag) else {
            return;
        };
        let f = prog.module.function(gpusim_isa::FuncId(origin.func));
        let Some(inst) = f.body.get(origin.pc as usize) else {
            return;
        };
        let name = format!(
            "line {}: {}",
            inst.span.line,
            gpusim_isa::print::inst_to_ptx(&prog.module, f, inst)
        );
        if let Some(t) = &mut self.timeline {
            t.request(slot, tag, name, issued, at.max(issued + 1));
        }
    }

    /// Resident warps now (the timeline's `active warps` counter).
    pub fn resident_warps(&self) -> u32 {
        self.used_warps
    }

    /// This SM's per-instruction counters so far, parked warps' stalls included.
    pub fn line_counters(&mut self) -> Option<LineCounters> {
        self.parked.settle_lines();
        let mut out = (**self.lines.as_ref()?).clone();
        if let Some(p) = &self.parked.lines {
            out.add(&p.counters);
        }
        Some(out)
    }

    /// The instruction warp `slot` waits to issue, for the source view (None: finished,
    /// or no view collected).
    #[inline]
    fn waiting_line(&self, slot: usize, prog: &Program) -> Line {
        self.lines.as_ref()?;
        let w = self.warps[slot].as_ref()?;
        (w.state != WarpState::Completed).then(|| prog.inst_index(w.func(), w.pc()))
    }

    /// Charge `n` warp-cycles of stall `s` to the instruction warp `slot` waits to issue.
    #[inline]
    fn line_stall(&mut self, slot: usize, s: Stall, n: u64, prog: &Program) {
        if self.lines.is_some() {
            let line = self.waiting_line(slot, prog);
            if let Some(l) = &mut self.lines {
                l.stall(line, s, n);
            }
        }
    }

    /// The source view's and the timeline's share of a pick: `Issued` for the picked warp
    /// (at its instruction), `NotSelected` for every other ready candidate.
    fn record_pick(&mut self, picked: usize, prog: &Program, cycle: u64) {
        for i in 0..self.cands.len() {
            let c = self.cands[i];
            if c.ready {
                let s = if c.slot == picked {
                    Stall::Issued
                } else {
                    Stall::NotSelected
                };
                self.line_stall(c.slot, s, 1, prog);
                if let Some(t) = &mut self.timeline {
                    t.observe(c.slot, s, cycle);
                }
            }
        }
    }

    /// Attach an observer to this SM's issue path.
    pub fn add_hook(&mut self, h: Box<dyn hooks::IssueHook>) {
        self.hooks.push(h);
    }

    /// This SM's first observer of type `H`.
    pub fn hook_mut<H: hooks::IssueHook>(&mut self) -> Option<&mut H> {
        self.hooks.get_mut::<H>()
    }

    /// Whether `step` left instructions for the memory exchange.
    pub fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// No CTA resident (every resident CTA holds at least one warp; asked every cycle, so
    /// from the count rather than a walk over the CTA slots).
    pub fn is_idle(&self) -> bool {
        debug_assert_eq!(self.used_warps == 0, self.ctas.iter().all(Option::is_none));
        self.used_warps == 0
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
    pub fn launch_cta(&mut self, mut cta: Cta, warps: Vec<Warp>, cycle: u64) -> usize {
        let cslot = self
            .ctas
            .iter()
            .position(Option::is_none)
            .expect("fits() was checked");
        self.used_threads += cta.threads;
        self.used_warps += cta.n_warps;
        self.used_regs += cta.regs;
        self.used_shared += cta.shared_bytes;
        if cta.n_warps == 0 {
            self.ctas_done += 1;
        }
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
            // Retirement unparked the slot's last warp.
            debug_assert!(!self.parked.is_parked(slot));
            self.resident.set(slot);
            self.warps[slot] = Some(w);
        }
        if let Some(t) = &mut self.timeline {
            t.cta_start(cslot, cta.ctaid, cycle);
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
        self.order = 0;
        self.stats.energy.active_cycles += 1;
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
        self.check_parked(cycle);
        let n_parts = self.parts.len();
        let mut picks = 0;
        for s in 0..n_parts {
            self.cands.clear();
            // (A plain loop: `step_by` here compiled to a slower iterator.)
            let mut next_slot = s;
            while next_slot < self.warps.len() {
                let slot = next_slot;
                next_slot += n_parts;
                if !self.resident.contains(slot) {
                    continue;
                }
                // A parked warp is charged below, and read only once its wake-up has come.
                if self.parked.is_parked(slot) {
                    let until = self.parked.until(slot);
                    if until > cycle {
                        if until != u64::MAX {
                            res.wake_by(until);
                        }
                        continue;
                    }
                    self.parked.unpark(slot);
                }
                let Some(w) = &self.warps[slot] else { continue };
                match classify(w, &self.parts[s], cycle) {
                    Ok(()) => self.cands.push(Candidate {
                        slot,
                        age: w.age,
                        ready: true,
                        long_wait: false,
                    }),
                    Err((stall, wake)) => {
                        if let Some(t) = wake {
                            res.wake_by(t);
                        }
                        if let Some(t) = &mut self.timeline {
                            t.observe(slot, stall, cycle);
                        }
                        let line = self.waiting_line(slot, sh.prog);
                        if self.parked.park(slot, stall, wake, line) {
                            continue;
                        }
                        self.stats.stall(stall, 1);
                        if let Some(l) = &mut self.lines {
                            l.stall(line, stall, 1);
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
            self.parked.charge(s, 1, &mut self.stats);
            let Some(slot) = checked_pick(self.parts[s].sched.as_mut(), &self.cands) else {
                continue;
            };
            self.stats
                .stall(Stall::NotSelected, not_selected(&self.cands));
            self.stats.stall(Stall::Issued, 1);
            if self.lines.is_some() || self.timeline.is_some() {
                self.record_pick(slot, sh.prog, cycle);
            }
            res.issued += 1;
            // Two places per pick: a dual issue's second instruction takes the odd one.
            let p = Picked {
                slot,
                part: s,
                order: 2 * picks,
            };
            picks += 1;
            if self.reaches_memory_system(slot, sh) {
                self.defer(p, false);
                continue;
            }
            self.issue_picked(p, cycle, sh, None, epoch, &mut res)?;
        }
        res.ctas_completed = self.retire_completed_ctas(cycle);
        Ok(res)
    }

    /// Issue the instructions `step` deferred, in the order it picked them, now that this
    /// SM holds the memory system (global memory and the L2 side): the GPU calls this for
    /// every SM in id order once all have stepped. Each keeps the place in the issue order it
    /// was picked at (`hooks::IssueView::order`), so observers record it there.
    pub fn exchange(
        &mut self,
        cycle: u64,
        sh: &Shared,
        global: &mut crate::mem::GlobalMemory,
        engine: &mut crate::mem::engine::MemoryEngine,
        epoch: &mut u64,
    ) -> Result<StepResult, Fault> {
        let mut res = StepResult {
            issued: 0,
            next_ready: None,
            ctas_completed: 0,
            spin_suspect: false,
        };
        let deferred = std::mem::take(&mut self.deferred);
        for d in &deferred {
            if let Some(ms) = engine.system() {
                if let Some(held) = self.held_back(d.picked.slot, sh, ms) {
                    // Picked, but the memory system cannot take it now: not issued. A fence
                    // starts its own wait now, beside the drain it waits for.
                    if held.fence {
                        if let Some(w) = self.warps[d.picked.slot].as_mut() {
                            w.fence_from.get_or_insert(cycle);
                        }
                    }
                    // A dual issue's second instruction took no warp-cycle of its own: the
                    // first issued in it.
                    if !d.second {
                        self.stats.unissue(held.why);
                        let line = self.waiting_line(d.picked.slot, sh.prog);
                        if let Some(l) = &mut self.lines {
                            l.unissue(line, held.why);
                        }
                        if let Some(t) = &mut self.timeline {
                            t.amend(d.picked.slot, held.why, cycle);
                        }
                    }
                    continue;
                }
            }
            let mem = Some(MemSystem {
                global: &mut *global,
                back: engine.backend(),
            });
            let r = if d.second {
                self.issue(d.picked, cycle, sh, mem, epoch, &mut res)
                    .map(|_| ())
            } else {
                self.issue_picked(d.picked, cycle, sh, mem, epoch, &mut res)
            };
            if let Err(f) = r {
                self.deferred = deferred;
                self.deferred.clear();
                return Err(f);
            }
            if let Some(ms) = engine.system() {
                let sm = self.id;
                self.pending.take_submissions(|tag, prog, txn, route| {
                    let req = crate::mem::system::MemRequest {
                        sm,
                        tag,
                        prog,
                        txn: txn.clone(),
                    };
                    match route {
                        Route::L1 => ms.submit(req, cycle),
                        Route::Tma => ms.submit_tma(req, None, cycle),
                        Route::TmaEngine(bytes) => ms.submit_tma(req, Some(bytes), cycle),
                    }
                });
                if std::mem::take(&mut self.pending.issuing.flush) {
                    let side = crate::mem::system::SmSide {
                        mem: &mut self.mem,
                        counters: &mut self.stats.memory,
                    };
                    ms.flush_l1(self.id, side, global, cycle);
                }
            }
        }
        self.deferred = deferred;
        self.deferred.clear();
        res.ctas_completed = self.retire_completed_ctas(cycle);
        Ok(res)
    }

    /// Where the instruction that memory operation `tag` belongs to is, for a fault: kernel,
    /// file and line, the instruction, its CTA and first lane's thread (None: no longer in
    /// flight).
    pub fn locate_op(&mut self, tag: u64, prog: &Program, kernel: &str) -> Option<String> {
        let (slot, o) = self.pending.origin(tag)?;
        let w = self.warps[slot].as_ref()?;
        let ctaid = self.ctas[w.cta].as_ref()?.ctaid;
        let f = prog.module.function(gpusim_isa::FuncId(o.func));
        let inst = f.body.get(o.pc as usize)?;
        let t = w.tid.get(o.lane as usize).copied().unwrap_or_default();
        Some(format!(
            "in kernel `{kernel}` at {}:{} (`{}`, pc {} of `{}`), CTA ({}, {}, {}), thread ({}, {}, {})",
            prog.module.file,
            inst.span.line,
            gpusim_isa::print::inst_to_ptx(&prog.module, f, inst),
            o.pc,
            f.name,
            ctaid[0],
            ctaid[1],
            ctaid[2],
            t[0],
            t[1],
            t[2]
        ))
    }

    /// The memory system's completions for this SM, applied when they reach it, before it
    /// steps in that cycle: registers written and released, the loads' latency counted,
    /// memory changes counted as progress. Returns whether the SM must step this cycle (an
    /// instruction finished: a warp may issue, copies may land, messages may leave); a
    /// completion that is not its instruction's last changes nothing a step would see, so the
    /// SM sleeps on (a TMA copy's lines complete one by one).
    pub fn apply_completions(
        &mut self,
        completions: impl Iterator<Item = crate::mem::system::MemCompletion>,
        cycle: u64,
        sh: &Shared,
        epoch: &mut u64,
    ) -> bool {
        let mut wake = false;
        for c in completions {
            if self.timeline.as_ref().is_some_and(|t| t.memory()) {
                self.record_request(c.tag, c.at, sh.prog);
            }
            let done = self
                .pending
                .complete(c.tag, c.txn, c.at, &mut self.warps, sh.prog);
            if let Some(slot) = done.warp {
                self.parked.unpark(slot);
            }
            if let Some(l) = done.latency {
                self.stats.memory.record_load_latency(l);
            }
            if done.changed {
                *epoch += 1;
            }
            // A finished copy's bytes go to the landing queues (here or at cluster peers).
            if let Some(slot) = done.copy_of {
                self.after_async(slot, cycle, sh.prog);
            }
            wake |= done.finished;
        }
        // A completed `cp.async` joins its warp's copies to land.
        self.copies_waiting |= wake;
        wake || !self.outbox.is_empty()
    }

    /// Why warp `slot`'s picked instruction cannot go to the component memory system now: its
    /// L1 request queue is full (a load, store or atomic on device memory), it is a fence
    /// and the warp's earlier operations have not all completed (Habermaier §5.6: no thread
    /// proceeds past a pending membar) — the fence's L1 flush must come after them —, or it
    /// is a `cp.async.wait_group` whose groups still have reads in flight (a
    /// `cp.async.bulk.wait_group`, stores).
    fn held_back(
        &self,
        slot: usize,
        sh: &Shared,
        ms: &crate::mem::system::MemorySystem,
    ) -> Option<Held> {
        use gpusim_isa::{Op, Space};
        let w = self.warps[slot].as_ref()?;
        let at = stages::fetch(w, sh.prog)?;
        // An instruction no lane executes (its guard false in every active lane) asks nothing
        // of the memory system: it issues as the no-op it is.
        if super::exec::executing_lanes(w, at.inst) == 0 {
            return None;
        }
        let device = |sp: &Space| matches!(sp, Space::Global | Space::Generic | Space::Local);
        let why = match &at.inst.op {
            Op::Ld { space, .. }
            | Op::St { space, .. }
            | Op::Atom { space, .. }
            | Op::WmmaLoad { space, .. }
            | Op::WmmaStore { space, .. }
                if device(space) && !ms.can_accept(self.id, 1) =>
            {
                Some(Stall::MemoryBackpressure)
            }
            Op::CpAsync { .. } if !ms.can_accept(self.id, 1) => Some(Stall::MemoryBackpressure),
            Op::CpAsyncBulk { .. } | Op::CpAsyncBulkTensor { .. }
                if !ms.can_accept_copy(self.id) =>
            {
                Some(Stall::MemoryBackpressure)
            }
            // A fence with a cost of its own starts that wait now (`Warp::fence_done`).
            Op::Fence { .. } | Op::MbarArrive { fence: Some(_), .. } if w.mem_in_flight > 0 => {
                return Some(Held {
                    why: Stall::Membar,
                    fence: true,
                });
            }
            Op::FenceProxyAsync { .. } if w.mem_in_flight > 0 => Some(Stall::Membar),
            // The groups it waits for: those below the N most recent (`wait_all` commits the
            // open group first); their reads must all have completed.
            Op::CpAsyncWait { n } => {
                let committed = w.async_group + n.is_none() as u64;
                let older = committed.saturating_sub(n.unwrap_or(0) as u64);
                w.async_in_flight
                    .iter()
                    .any(|&g| g < older)
                    .then_some(Stall::Membar)
            }
            // Likewise a bulk wait for groups whose stores are still in flight; `.read` only
            // while the engine has not read all their bytes from shared memory (some line
            // still waits in it).
            Op::CpAsyncBulkWait { n, read } => {
                let older = w.hopper.bulk_group.saturating_sub(*n as u64);
                let in_flight = w.hopper.bulk_in_flight.iter().any(|&g| g < older);
                let waits = in_flight && (!read || self.engine_still_reads(slot, older, ms));
                waits.then_some(Stall::Membar)
            }
            _ => None,
        }?;
        Some(Held { why, fence: false })
    }

    /// Whether this SM's TMA engine still holds a line of a store copy of warp `slot` in a bulk
    /// group before `older` (its bytes not yet read from shared memory).
    fn engine_still_reads(
        &self,
        slot: usize,
        older: u64,
        ms: &crate::mem::system::MemorySystem,
    ) -> bool {
        ms.tma_waiting(self.id).any(|tag| {
            self.pending
                .store_group(tag)
                .is_some_and(|(s, g)| s == slot && g < older)
        })
    }

    /// Whether warp `slot`'s next instruction reaches the memory system (under the component
    /// memory system, `cp.async.wait_group` and `cp.async.bulk.wait_group` too: whether they
    /// may issue depends on completions, which the exchange has seen).
    fn reaches_memory_system(&self, slot: usize, sh: &Shared) -> bool {
        let Some(w) = &self.warps[slot] else {
            return false;
        };
        let components = sh.cfg.memory_engine == crate::config::MemoryEngineKind::Components;
        stages::fetch(w, sh.prog).is_some_and(|at| {
            super::exec::uses_memory_system(&at.inst.op)
                || (components
                    && matches!(
                        at.inst.op,
                        gpusim_isa::Op::CpAsyncWait { .. } | gpusim_isa::Op::CpAsyncBulkWait { .. }
                    ))
        })
    }

    fn defer(&mut self, picked: Picked, second: bool) {
        self.deferred.push(Deferred { picked, second });
    }

    /// Issue the instruction a scheduler picked (`p`), and with dual issue a second,
    /// independent one of the same warp to another unit (deferred to the exchange when it
    /// reaches the memory system and `mem` is not held). Counts the second in `res.issued`;
    /// the caller counted the first.
    fn issue_picked(
        &mut self,
        p: Picked,
        cycle: u64,
        sh: &Shared,
        mut mem: Option<MemSystem>,
        epoch: &mut u64,
        res: &mut StepResult,
    ) -> Result<(), Fault> {
        let first = self.issue(p, cycle, sh, reborrow(&mut mem), epoch, res)?;
        if !sh.cfg.sm.dual_issue {
            return Ok(());
        }
        let Some(w) = &self.warps[p.slot] else {
            return Ok(());
        };
        let second = next_unit(w);
        if !(second.is_some_and(|u| Some(u) != first)
            && classify(w, &self.parts[p.part], cycle).is_ok())
        {
            return Ok(());
        }
        res.issued += 1;
        let p = Picked {
            order: p.order + 1,
            ..p
        };
        if mem.is_none() && self.reaches_memory_system(p.slot, sh) {
            self.defer(p, true);
            return Ok(());
        }
        self.issue(p, cycle, sh, mem, epoch, res)?;
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
        if !self.copies_waiting {
            return;
        }
        let Sm {
            warps,
            ctas,
            copies_waiting,
            ..
        } = self;
        *copies_waiting = false;
        for w in warps.iter_mut().flatten() {
            if w.async_copies.iter().all(|c| c.ready > cycle) {
                *copies_waiting |= !w.async_copies.is_empty();
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
            *copies_waiting |= !w.async_copies.is_empty();
        }
    }

    /// Account for `n` skipped cycles from `cycle` on, in which no warp can issue: each warp
    /// stays in the state it is in now (the skip ends at the earliest wake-up of any warp).
    pub fn account_idle(&mut self, cycle: u64, n: u64, prog: &Program) {
        self.stats.energy.active_cycles += n;
        let n_parts = self.parts.len();
        for (slot, w) in self.warps.iter().enumerate() {
            // The parked bit first: it spares reading the warp (`sm::parked`). The SM is
            // stepped by the earliest wake-up of its parked warps, so each is still in its
            // stall at the span's first cycle (where the others are classified).
            if !self.resident.contains(slot) {
                continue;
            }
            if self.parked.is_parked(slot) {
                debug_assert!(self.parked.until(slot) > cycle);
                continue;
            }
            let Some(w) = w else { continue };
            let stall = match classify(w, &self.parts[slot % n_parts], cycle) {
                Ok(()) => Stall::PipeBusy,
                Err((s, _)) => s,
            };
            self.stats.stall(stall, n);
        }
        if self.lines.is_some() || self.timeline.is_some() {
            self.account_idle_lines(cycle, n, prog);
        }
        for s in 0..n_parts {
            self.parked.charge(s, n, &mut self.stats);
        }
    }

    /// `account_idle`'s share of the source view and the timeline: the unparked warps' `n`
    /// cycles at the instructions they wait to issue, their states from `cycle` on (kept out of
    /// the loop above, which runs without them).
    fn account_idle_lines(&mut self, cycle: u64, n: u64, prog: &Program) {
        let n_parts = self.parts.len();
        let mut at = self.resident.next(0);
        while let Some(slot) = at {
            at = self.resident.next(slot + 1);
            if self.parked.is_parked(slot) {
                continue;
            }
            let Some(w) = &self.warps[slot] else { continue };
            let stall = match classify(w, &self.parts[slot % n_parts], cycle) {
                Ok(()) => Stall::PipeBusy,
                Err((s, _)) => s,
            };
            let line = self.waiting_line(slot, prog);
            if let Some(l) = &mut self.lines {
                l.stall(line, stall, n);
            }
            if let Some(t) = &mut self.timeline {
                t.observe(slot, stall, cycle);
            }
        }
    }

    fn apply_release(&mut self, rel: Release, cycle: u64, sh: &Shared, epoch: &mut u64) {
        *epoch += 1;
        if let Some(t) = &mut self.timeline {
            let cta = rel.warps.first().and_then(|(s, _)| self.warps[*s].as_ref());
            if let Some(w) = cta {
                let name = format!("barrier {} released", rel.barid);
                t.instant(crate::timeline::Track::Cta(w.cta as u32), name, cycle);
            }
        }
        for (slot, red) in rel.warps {
            self.parked.unpark(slot);
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
        if cta.completed_warps == cta.n_warps {
            self.ctas_done += 1;
        }
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
    fn retire_completed_ctas(&mut self, cycle: u64) -> u32 {
        if self.ctas_done == 0 {
            return 0;
        }
        self.ctas_done = 0;
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
            // Resident through this cycle.
            if let Some(t) = &mut self.timeline {
                t.cta_end(cslot, cycle + 1);
                for &s in &cta.warps {
                    t.close(s, cycle + 1);
                }
            }
            let n_parts = self.parts.len();
            for s in &cta.warps {
                self.parked.unpark(*s);
                self.resident.clear(*s);
                // Kept for the next CTA's warps to reuse their buffers (`gpu::make_cta`).
                if let Some(w) = self.warps[*s].take() {
                    self.retired_warp_instructions += w.instructions;
                    self.spare_warps.push(w);
                }
                self.pending.forget_warp(*s);
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

impl Sm {
    /// Debug builds: every parked warp is still in the stall it was parked in (an event that
    /// changed it without unparking it would freeze it there).
    fn check_parked(&self, cycle: u64) {
        if cfg!(debug_assertions) {
            for (slot, w) in self.warps.iter().enumerate() {
                assert_eq!(
                    self.resident.contains(slot),
                    w.is_some(),
                    "SM {} slot {slot}'s resident bit",
                    self.id
                );
            }
            let n_parts = self.parts.len();
            for (slot, stall, until) in self.parked.slots().filter(|p| p.2 > cycle) {
                let w = self.warps[slot]
                    .as_ref()
                    .expect("parked warps are resident");
                let found = classify(w, &self.parts[slot % n_parts], cycle)
                    .err()
                    .map(|(s, wake)| (s, wake.unwrap_or(u64::MAX)));
                assert_eq!(
                    found,
                    Some((stall, until)),
                    "SM {} warp slot {slot} changed while parked (cycle {cycle})",
                    self.id
                );
            }
        }
    }
}

/// Why a picked instruction was not handed to the memory system (`Sm::held_back`): its stall
/// state, and whether it is a fence whose own cost starts while it waits.
struct Held {
    why: Stall,
    fence: bool,
}

/// The state all SMs share, held by one SM at a time in the memory exchange.
pub struct MemSystem<'a> {
    pub global: &'a mut crate::mem::GlobalMemory,
    pub back: &'a mut crate::mem::hierarchy::Backend,
}

/// An instruction `step` picked and `exchange` issues.
struct Deferred {
    picked: Picked,
    /// The second instruction of a dual issue (no third follows it).
    second: bool,
}

fn reborrow<'b>(m: &'b mut Option<MemSystem<'_>>) -> Option<MemSystem<'b>> {
    m.as_mut().map(|m| MemSystem {
        global: &mut *m.global,
        back: &mut *m.back,
    })
}
