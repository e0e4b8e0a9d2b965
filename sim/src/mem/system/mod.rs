//! The component memory system: memory operations run as messages between components with
//! bounded queues (issue 12). Each operation's compiled program (`mem::program::Compiled`)
//! runs one macro step at a time (`hierarchy::step_timed` in `Timing::Components` mode) at the
//! component of the step's place, then travels to the next:
//!
//! ```text
//! SM ──submit──> L1 request queue ─(L1, l1)─> SM link (icnt i) ─> slice queue ─> slice
//!   slice ─(s)─> slice link (icnt i) ─> L1 (fill) ─> completion
//!   slice ──> DRAM link (⌊d/2⌋) ─> channel (dram_ctrl) ─done─> (⌈d/2⌉) ─> slice
//! SM ──submit_tma──> TMA engine (tma) ─(bytes_per_cycle)─> L1 request queue
//! ```
//!
//! Latencies (`Latencies`), exact when unloaded: an L1 visit costs `l1 = l1.hit_latency`
//! from the cycle the L1 takes the operation; each crossbar hop `i = interconnect.latency`;
//! a slice's reply leaves `s = l2.hit_latency − l1 − 2i` cycles after its step (a request
//! onward to DRAM leaves at once); the L2 → DRAM and DRAM → L2 links take ⌊d/2⌋ and ⌈d/2⌉ of
//! `d = dram.latency − l2.hit_latency − X`, X the channel's unloaded precharged-bank read
//! (`dram_ctrl::unloaded_read_cycles`). So an L1 hit completes `l1` after it is taken, an L2
//! hit or a lone store `l2.hit_latency`, a DRAM read `dram.latency` when it reaches its
//! channel on a DRAM clock edge (else up to one DRAM clock period later: the channel takes a
//! request at the first edge after its arrival).
//!
//! Per cycle (`cycle`), in a fixed order whatever order SMs submitted in: channels (accept
//! arrived requests, run their memory steps, tick), deliveries into the slices, slices (DRAM
//! returns first, then requests, within their bandwidth), deliveries to the SMs (fills run
//! their L1 steps), the L1s (send, then take one operation), then operations blocked at a
//! component are retried, in the order they blocked, if any operation progressed. A
//! delivery due in the cycle it was sent (a zero latency) repeats the pass, so zero-latency
//! configurations stay exact.
//!
//! Idleness: `next_wake` is `None` when nothing is in flight; refresh does not keep the
//! system awake — an idle channel is not ticked, and catches up its refreshes when next
//! ticked (`DramChannel::tick` walks idle stretches refresh by refresh), so a request after
//! an idle stretch meets the refresh state it would have met ticking every cycle. Each kind
//! of component keeps the set of those that may have work (`active`); the cycle, `sample`
//! and `refresh_wake` walk only these, in the fixed order, visiting an empty component being
//! a no-op (so results are those of visiting every component).
//!
//! Modelled: bounded queues with head-of-line backpressure (L1 request queue, SM and slice
//! output links, slice request queues, DRAM links, the channels' own queues); port bandwidth
//! at both ends of the crossbar; slice bandwidth; MSHRs as pending lines; the DRAM channel
//! controller. Not modelled: crossbar arbitration beyond a rotating order of the links; L2
//! MSHRs (a line in flight is a reserved way); the silent write-backs' effects are
//! instantaneous (the formal `wb_L1`/`wb_L2` are atomic), their traffic travels.

mod active;
mod blocked;
mod channel;
mod l1;
mod link;
mod op;
mod partition;
mod slice;
mod stats;
mod tma;

use stats::Held;
pub use stats::{MemSystemStats, QueueStats};

use crate::config::Config;
use crate::mem::dram_ctrl::{locate, AddressMap, DramDone};
use crate::mem::hierarchy::{
    step_timed, Backend, Costs, Ctx, OpProgram, OpState, ProgramError, ProgramTable, SmMemory,
    Stepped, Target, Timing, Traffic, Txn, Wait,
};
use crate::mem::program::Place;
use crate::mem::GlobalMemory;
use crate::stats::MemCounters;
use active::{Active, Rotation};
use channel::{ChannelStage, DramPacket};
use l1::L1Stage;
use op::{MemOp, OpPool};
use slice::SliceStage;

/// Header bytes of a crossbar packet (GPGPU-Sim's 8-byte control flit; our choice, as
/// `hierarchy`).
const HEADER: u64 = 8;

/// Packets of a crossbar link the arbiter considers each cycle (our choice: enough for the
/// links' head-of-line blocking not to bind a uniform stream, `tests/memory_system.rs`).
const LOOKAHEAD: usize = 16;

/// Cycles from the issue of a memory instruction to its operations' arrival in the L1's
/// request queue (counted in the L1 latency: an L1 hit still completes `l1.hit_latency` after
/// issue). The SMs submit after the memory system has ticked the cycle they issue in.
const ISSUE_TO_L1: u64 = 1;

/// DRAM request ids of silent write-backs (no operation waits for them).
const WRITE_BACK_ID: u64 = 1 << 63;

/// A memory operation the SM hands over: one line (`Txn`) and the program it runs.
#[derive(Clone, Debug)]
pub struct MemRequest {
    pub sm: u32,
    pub tag: u64,
    pub prog: OpProgram,
    pub txn: Txn,
}

/// An operation that ran its program to `end`.
#[derive(Clone, Debug)]
pub struct MemCompletion {
    pub sm: u32,
    /// The SM's handle, echoed.
    pub tag: u64,
    /// After its program: data read, atomic `old`, `wrote_regs`, `changed`.
    pub txn: Txn,
    /// Core cycle the completion reaches the SM (its registers are released then).
    pub at: u64,
}

/// A completion not yet handed over: the key of its order (SM, cycle, tag, submission) and
/// its operation.
#[derive(Clone, Copy, Debug)]
struct Due {
    seq: u64,
    sm: u32,
    tag: u64,
    at: u64,
    id: u32,
}

/// A program the formal model leaves stuck (⊥), with the operation's SM, tag and program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemFault {
    pub sm: u32,
    pub tag: u64,
    pub prog: OpProgram,
    pub line: u64,
    pub error: ProgramError,
}

/// What the SM side lends the memory system for one tick: its L1 and its counters.
pub struct SmSide<'a> {
    pub mem: &'a mut SmMemory,
    pub counters: &'a mut MemCounters,
}

/// The SMs' sides for one tick, lent on demand (the caller builds nothing per tick).
pub trait SmSides {
    fn side(&mut self, sm: usize) -> SmSide<'_>;
}

impl SmSides for Vec<SmSide<'_>> {
    fn side(&mut self, sm: usize) -> SmSide<'_> {
        let s = &mut self[sm];
        SmSide {
            mem: &mut *s.mem,
            counters: &mut *s.counters,
        }
    }
}

/// The latencies of the path (module header).
#[derive(Clone, Copy, Debug)]
struct Latencies {
    l1: u64,
    icnt: u64,
    slice: u64,
    to_dram: u64,
    from_dram: u64,
}

/// Where an operation is when its steps run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Here {
    L1,
    Slice,
    Mem,
}

/// Where an operation goes after its steps at a component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Blocked,
    Ended,
    Go(Place),
}

/// What `tick` borrows from the caller.
struct Env<'e> {
    sms: &'e mut dyn SmSides,
    global: &'e mut GlobalMemory,
    programs: &'e ProgramTable,
}

/// The memory system: per-SM L1 stages, L2 slices, DRAM channels, the links between them,
/// and the operations in flight.
pub struct MemorySystem {
    cfg: Config,
    lat: Latencies,
    costs: Costs,
    map: AddressMap,
    back: Backend,
    /// The L2's partitions (`l2.partitions` > 1), timing far accesses and copies.
    partitions: Option<partition::Partitions>,
    ops: OpPool,
    l1s: Vec<L1Stage>,
    slices: Vec<SliceStage>,
    channels: Vec<ChannelStage>,
    /// The L1s, slices and channels that may have work (`active`): the cycle, the sampling
    /// and `next_wake` visit only these.
    l1_on: Active,
    slice_on: Active,
    ch_on: Active,
    /// `next_wake`, kept up to date: recomputed after each processed cycle, lowered by
    /// `submit`.
    wake: Option<u64>,
    /// The components' part of `wake` (`u64::MAX`: none), kept so that handing completions
    /// over recomputes `wake` without visiting them.
    comp_wake: u64,
    /// The queue lengths as they stand now (the walk of `refresh_wake` takes them; `submit`
    /// and `submit_tma` add theirs): what `sample` weights by the cycles they held.
    held: Held,
    /// The earliest `at` of `pending` (`u64::MAX`: none).
    pending_min: u64,
    /// The next cycle not yet processed.
    cycle: u64,
    seq: u64,
    write_back_seq: u64,
    /// Completions not yet handed over (their `at` may be ahead): small keys, the operation
    /// (its `Txn`) stays in `ops` until it is handed over, so it moves once.
    pending: Vec<Due>,
    /// `debug.retry_blocked: every`.
    retry_every: bool,
    /// Scratch buffers, reused.
    traffic: Vec<Traffic>,
    due: Vec<Due>,
    done: Vec<DramDone>,
    /// An operation progressed in the cycle being processed (blocked ones are retried).
    progressed: bool,
    /// A message was sent for delivery in the cycle being processed (the pass repeats).
    again: bool,
    stats: MemSystemStats,
}

impl MemorySystem {
    /// An idle memory system for `cfg` (validated: the latency split is non-negative).
    pub fn new(cfg: &Config) -> MemorySystem {
        MemorySystem::with_backend(cfg, Backend::new(cfg))
    }

    /// An idle memory system around the L2 `back` (a run's L2 persists across launches).
    pub fn with_backend(cfg: &Config, back: Backend) -> MemorySystem {
        let mut s = MemorySystem {
            lat: Latencies {
                l1: 0,
                icnt: 0,
                slice: 0,
                to_dram: 0,
                from_dram: 0,
            },
            costs: Costs::of(cfg),
            map: AddressMap::from_config(cfg),
            l1s: Vec::new(),
            slices: Vec::new(),
            channels: Vec::new(),
            l1_on: Active::new(0),
            slice_on: Active::new(0),
            ch_on: Active::new(0),
            wake: None,
            pending_min: u64::MAX,
            comp_wake: u64::MAX,
            held: Held::default(),
            back,
            partitions: partition::Partitions::new(cfg),
            ops: OpPool::default(),
            cycle: 0,
            seq: 0,
            write_back_seq: 0,
            pending: Vec::new(),
            retry_every: cfg.debug.retry_blocked == crate::config::RetryBlocked::Every,
            traffic: Vec::new(),
            due: Vec::new(),
            done: Vec::new(),
            progressed: false,
            again: false,
            stats: MemSystemStats::default(),
            cfg: cfg.clone(),
        };
        s.restart();
        s
    }

    /// A new launch restarts the cycle count: links, ports, channels and statistics start
    /// idle; the L2's contents stay (`Backend::new_launch`).
    ///
    /// # Panics
    /// If an operation is still in flight.
    pub fn new_launch(&mut self) {
        assert!(
            self.in_flight() == 0,
            "a launch ends with nothing in flight"
        );
        self.back.new_launch();
        self.restart();
    }

    /// Every component idle at cycle 0 (the L2 `back` and the scratch buffers' capacity
    /// kept).
    fn restart(&mut self) {
        let cfg = &self.cfg;
        let l1 = cfg.l1.hit_latency as u64;
        let l2 = cfg.l2.hit_latency as u64;
        let icnt = cfg.interconnect.latency as u64;
        let x = crate::mem::dram_ctrl::unloaded_read_cycles(cfg);
        let d = (cfg.dram.latency as u64)
            .checked_sub(l2 + x)
            .expect("validated: dram.latency covers l2.hit_latency and the unloaded read");
        let lat = Latencies {
            // The cycle from issue into the L1's request queue is the first of the L1's
            // latency (`submit`).
            l1: l1.saturating_sub(ISSUE_TO_L1),
            icnt,
            slice: l2
                .checked_sub(l1 + 2 * icnt)
                .expect("validated: the slice's reply pipeline is not negative"),
            to_dram: d / 2,
            from_dram: d - d / 2,
        };
        let (sms, slices, channels) = (
            cfg.sm.count as usize,
            self.back.slices.len(),
            cfg.dram.channels.max(1) as usize,
        );
        self.lat = lat;
        self.l1s = (0..sms).map(|_| L1Stage::new(cfg)).collect();
        self.slices = (0..slices).map(|_| SliceStage::new(cfg)).collect();
        self.channels = (0..channels as u32)
            .map(|i| ChannelStage::new(cfg, i, lat.to_dram))
            .collect();
        self.l1_on = Active::new(sms);
        self.slice_on = Active::new(slices);
        self.ch_on = Active::new(channels);
        self.wake = None;
        self.comp_wake = u64::MAX;
        self.held = Held::default();
        self.pending_min = u64::MAX;
        self.ops = OpPool::default();
        self.cycle = 0;
        self.seq = 0;
        self.write_back_seq = 0;
        self.pending.clear();
        self.progressed = false;
        self.again = false;
        self.stats = MemSystemStats::default();
    }

    /// The unloaded latencies of the path (`l1` from submission, `icnt`, `slice`, `to_dram`,
    /// `from_dram`).
    pub fn latencies(&self) -> [u64; 5] {
        let l = self.lat;
        [l.l1 + ISSUE_TO_L1, l.icnt, l.slice, l.to_dram, l.from_dram]
    }

    /// Room in SM `sm`'s L1 request queue for `n` more operations now (a memory instruction
    /// whose operations do not fit does not issue: the SM's `memory_backpressure` stall).
    pub fn can_accept(&self, sm: u32, n: usize) -> bool {
        self.l1s[sm as usize].occupancy() + n <= self.cfg.l1.request_queue as usize
    }

    /// Whether SM `sm`'s TMA engine admits another copy now (`sm.tma.queue_lines`; a copy
    /// that is not admitted does not issue: `memory_backpressure`).
    pub fn can_accept_copy(&self, sm: u32) -> bool {
        self.l1s[sm as usize].tma.has_room()
    }

    /// The tags of the operations still waiting in SM `sm`'s TMA engine: a store's engine has
    /// not read their bytes from shared memory yet (`cp.async.bulk.wait_group.read`).
    pub fn tma_waiting(&self, sm: u32) -> impl Iterator<Item = u64> + '_ {
        self.l1s[sm as usize]
            .tma
            .waiting()
            .map(|id| self.ops.get(id).tag)
    }

    /// Hand an operation to SM `req.sm`'s L1 at core cycle `now` (the caller checked
    /// `can_accept`). Call it before `tick(now)`: the L1 can take it in cycle `now`. Operations
    /// of one SM are taken in submission order; operations of different SMs never wait for
    /// each other in the queue, so the order of `submit` calls across SMs does not matter.
    pub fn submit(&mut self, req: MemRequest, now: u64) {
        let sm = req.sm as usize;
        let id = self.insert_op(req, now);
        self.l1s[sm].queue.push_back((now + ISSUE_TO_L1, id));
        self.held.l1_queue.grew_to(self.l1s[sm].occupancy());
        self.l1_on.set(sm);
        // The L1's wake can only come earlier; nothing else changed.
        self.lower_wake(self.l1s[sm].next_wake());
    }

    /// Hand a TMA line request (`engine: None`) or a copy that only occupies the engine for
    /// `engine` bytes to SM `req.sm`'s TMA engine at core cycle `now` (`tma`): it waits there
    /// until the engine issues it, without limit. Call it before `tick(now)`.
    pub fn submit_tma(&mut self, req: MemRequest, engine: Option<u64>, now: u64) {
        let sm = req.sm as usize;
        // A store's (or reduction's) line: the engine reads it from shared memory.
        let store = matches!(req.prog.name(), "st.global.cg" | "red.global");
        let id = self.insert_op(req, now);
        // As `submit`: the cycle into the engine is the first of the L1 latency.
        self.l1s[sm].tma.push(
            now + ISSUE_TO_L1,
            match engine {
                None => tma::TmaEntry::Line { id, store },
                Some(bytes) => tma::TmaEntry::Engine { op: id, bytes },
            },
        );
        self.held.tma_queue.grew_to(self.l1s[sm].tma.len());
        self.l1_on.set(sm);
        self.lower_wake(self.l1s[sm].next_wake());
    }

    /// A component's wake moved to `w` or later: `wake` can only come earlier.
    fn lower_wake(&mut self, w: u64) {
        self.comp_wake = self.comp_wake.min(w);
        self.set_wake();
    }

    /// A new operation in the pool, for `req`, submitted at `now`.
    fn insert_op(&mut self, req: MemRequest, now: u64) -> u32 {
        let slice = self.back.slice_of(req.txn.line) as u32;
        self.seq += 1;
        self.ops.insert(MemOp {
            sm: req.sm,
            tag: req.tag,
            prog: req.prog,
            txn: req.txn,
            st: OpState::new(now),
            seq: self.seq,
            l1_exit: 0,
            first_visit: true,
            held: false,
            ended: false,
            slice,
            reply_bytes: 0,
            dram_wait: 0,
            blocked: blocked::Entry {
                id: 0,
                sm: req.sm,
                on: blocked::WaitOn::Nothing,
                seen: 0,
            },
        })
    }

    /// The formal `flush` of SM `sm`'s L1 at core cycle `now` (a fence): its dirty global
    /// lines are written back — at once in effect, as the formal `wb_L1` is atomic — and
    /// dropped; the write-backs' packets travel the SM's link to their slices.
    pub fn flush_l1(&mut self, sm: u32, side: SmSide, global: &mut GlobalMemory, now: u64) {
        let mut tm = Timing::Components {
            now,
            traffic: &mut self.traffic,
        };
        crate::mem::hierarchy::flush_l1_global(
            &mut self.back,
            side.mem,
            sm,
            global,
            now,
            side.counters,
            &mut tm,
        );
        for k in 0..self.traffic.len() {
            let t = self.traffic[k];
            self.send_write_back(sm as usize, t, now, side.counters);
        }
        self.traffic.clear();
        self.refresh_wake();
    }

    /// Advance every component through core cycle `now` (called with non-decreasing `now`,
    /// at least at every `next_wake`); completions that reach their SM at or before `now` are
    /// appended to `out` ordered by SM, then cycle, then tag, then submission.
    pub fn tick(
        &mut self,
        now: u64,
        sms: &mut dyn SmSides,
        global: &mut GlobalMemory,
        programs: &ProgramTable,
        out: &mut Vec<MemCompletion>,
    ) -> Result<(), MemFault> {
        let mut env = Env {
            sms,
            global,
            programs,
        };
        while let Some(c) = self.wake {
            if c > now {
                break;
            }
            self.sample(c);
            self.cycle_at(c, &mut env)?;
            self.cycle = c + 1;
            self.refresh_wake();
        }
        if self.hand_over(now, out) {
            self.set_wake();
        }
        Ok(())
    }

    /// The earliest cycle at which `tick` could do something (None: nothing in flight).
    /// DRAM commands issued so far this launch, for the power model: activates, and banks
    /// refreshed (an all-bank refresh counts every bank of the channel).
    pub fn dram_commands(&self) -> (u64, u64) {
        let per_ref = match self.cfg.dram.refresh.as_str() {
            "per-bank" => 1,
            _ => self.cfg.dram.banks.max(1) as u64,
        };
        self.channels.iter().fold((0, 0), |(a, r), c| {
            let s = c.chan.stats();
            (a + s.act, r + s.refresh * per_ref)
        })
    }

    /// The core clock changed to `core_mhz` at cycle `now` (the power governor): the DRAM
    /// channels, in their own clock domain, see their edges at the new ratio from here on,
    /// which moves their wake-ups.
    pub fn set_core_clock(&mut self, core_mhz: u32, now: u64) {
        let dram_mhz = self.cfg.dram.clock_mhz;
        for ch in &mut self.channels {
            ch.chan.set_core_clock(core_mhz, dram_mhz, now);
        }
        if self.cfg.clock.l2_mhz.is_some() {
            for s in &mut self.slices {
                s.retime(&self.cfg, core_mhz);
            }
            for l in &mut self.l1s {
                l.retime(&self.cfg, core_mhz);
            }
        }
        self.refresh_wake();
    }

    pub fn next_wake(&self) -> Option<u64> {
        self.wake
    }

    /// Recompute `wake` from the pending completions and the components that may have work,
    /// dropping those found empty from their set (an empty component's wake is never).
    fn refresh_wake(&mut self) {
        let mut t = u64::MAX;
        if self.progressed {
            t = t.min(self.cycle);
        }
        let MemorySystem {
            l1s,
            slices,
            channels,
            l1_on,
            slice_on,
            ch_on,
            held: h,
            ..
        } = self;
        *h = Held::default();
        l1_on.retain(|k| {
            let l = &l1s[k];
            if l.is_idle() {
                return false;
            }
            t = t.min(l.next_wake());
            h.l1_queue.take(l.occupancy());
            h.tma_queue.take(l.tma.len());
            h.sm_links.take(l.link.len());
            h.blocked.take(l.blocked.len());
            true
        });
        slice_on.retain(|k| {
            let s = &slices[k];
            if s.is_idle() {
                return false;
            }
            t = t.min(s.next_wake());
            h.slice_queue.take(s.input.len());
            h.slice_links.take(s.link.len());
            h.blocked.take(s.blocked.len());
            true
        });
        ch_on.retain(|k| {
            let ch = &channels[k];
            if ch.is_idle() {
                return false;
            }
            t = t.min(ch.next_wake());
            h.dram_links.take(ch.link.len());
            true
        });
        self.comp_wake = t;
        self.set_wake();
        #[cfg(debug_assertions)]
        assert_eq!(
            self.wake,
            self.wake_by_scan(),
            "the active sets miss a component"
        );
    }

    /// `wake` from its two parts: the components' and the pending completions'.
    fn set_wake(&mut self) {
        let t = self.comp_wake.min(self.pending_min);
        self.wake = (t != u64::MAX).then_some(t.max(self.cycle));
    }

    /// `next_wake` by visiting every component (the check of the active sets).
    #[cfg(debug_assertions)]
    fn wake_by_scan(&self) -> Option<u64> {
        let mut t = self.pending.iter().map(|d| d.at).min().unwrap_or(u64::MAX);
        if self.progressed {
            t = t.min(self.cycle);
        }
        for (k, l) in self.l1s.iter().enumerate() {
            assert!(l.is_idle() || self.l1_on.next_in(k, k + 1).is_some());
            t = t.min(l.next_wake());
        }
        for (k, s) in self.slices.iter().enumerate() {
            assert!(s.is_idle() || self.slice_on.next_in(k, k + 1).is_some());
            t = t.min(s.next_wake());
        }
        for (k, ch) in self.channels.iter().enumerate() {
            assert!(ch.is_idle() || self.ch_on.next_in(k, k + 1).is_some());
            t = t.min(ch.next_wake());
        }
        (t != u64::MAX).then_some(t.max(self.cycle))
    }

    /// Operations submitted and not yet handed over as completions (a completed operation
    /// stays in `ops` until it is).
    pub fn in_flight(&self) -> usize {
        self.ops.live()
    }

    /// Whether an SM's link still carries packets to the slices (with nothing in flight:
    /// write-backs, whose bytes have not reached L2 yet).
    pub fn writing_back(&self) -> bool {
        self.l1s.iter().any(|l| l.link.len() > 0)
    }

    /// The L2 (slices) for the end-of-launch write-back and host sync.
    pub fn backend(&mut self) -> &mut Backend {
        &mut self.back
    }

    pub fn stats(&self) -> MemSystemStats {
        let mut s = self.stats.clone();
        s.l1_queue.instances = self.l1s.len() as u32;
        s.tma_queue.instances = self.l1s.len() as u32;
        s.sm_links.instances = self.l1s.len() as u32;
        s.slice_queue.instances = self.slices.len() as u32;
        s.slice_links.instances = self.slices.len() as u32;
        s.dram_links.instances = self.channels.len() as u32;
        s.blocked.instances = (self.l1s.len() + self.slices.len()) as u32;
        s.slice_bytes = self.back.slice_bytes.clone();
        s.channel_bytes = self.back.channel_bytes.clone();
        s.channels = self.channels.iter().map(|c| *c.chan.stats()).collect();
        s
    }

    // ---- the cycle ----------------------------------------------------------------------

    /// Queue lengths held since the last processed cycle, weighted by the cycles they held
    /// (components outside the active sets hold nothing).
    fn sample(&mut self, c: u64) {
        let cycles = c.saturating_sub(self.stats.cycles);
        self.stats.cycles = self.stats.cycles.max(c);
        let (s, h) = (&mut self.stats, &self.held);
        s.l1_queue.add(h.l1_queue, cycles);
        s.tma_queue.add(h.tma_queue, cycles);
        s.sm_links.add(h.sm_links, cycles);
        s.slice_queue.add(h.slice_queue, cycles);
        s.slice_links.add(h.slice_links, cycles);
        s.dram_links.add(h.dram_links, cycles);
        s.blocked.add(h.blocked, cycles);
    }

    fn cycle_at(&mut self, c: u64, env: &mut Env) -> Result<(), MemFault> {
        self.progressed = false;
        loop {
            self.again = false;
            let mut i = 0;
            while let Some(ch) = self.ch_on.next(i) {
                self.channel_cycle(ch, c, env)?;
                i = ch + 1;
            }
            self.deliver_to_slices(c, env);
            let mut i = 0;
            while let Some(s) = self.slice_on.next(i) {
                if self.slices[s].has_work_at(c) {
                    self.slice_cycle(s, c, env)?;
                }
                i = s + 1;
            }
            self.deliver_to_sms(c, env)?;
            let mut i = 0;
            while let Some(sm) = self.l1_on.next(i) {
                self.l1_cycle(sm, c, env)?;
                i = sm + 1;
            }
            while self.progressed {
                self.progressed = false;
                self.retry_blocked(c, env)?;
            }
            if !self.again {
                break;
            }
        }
        Ok(())
    }

    /// Retry every blocked operation once, in the order they blocked (L1s by SM, then
    /// slices), skipping those whose wait has not changed (a retry would block again, having
    /// changed nothing); sets `progressed` if one proceeded.
    fn retry_blocked(&mut self, c: u64, env: &mut Env) -> Result<(), MemFault> {
        // Every slice's changes, summed only if an L1 list waits on any slice (a walk over
        // all slices).
        let mut l2 = None;
        let mut next = 0;
        while let Some(sm) = self.l1_on.next(next) {
            next = sm + 1;
            if self.l1s[sm].blocked.is_empty() {
                continue;
            }
            let stamp = {
                let m = &*env.sms.side(sm).mem;
                let l1 = m.l1.changes() + m.resource_changes();
                l1 + if self.l1s[sm].blocked.any_slice {
                    *l2.get_or_insert_with(|| self.back.slice_changes())
                } else {
                    0
                }
            };
            if !self.l1s[sm].blocked.needs_scan(stamp) && !self.retry_every {
                continue;
            }
            let mut i = 0;
            while i < self.l1s[sm].blocked.len() {
                let e = self.l1s[sm].blocked.entries[i];
                if self.may_proceed(&e, env) {
                    let next = self.run_at(e.id, Here::L1, c, env)?;
                    if next != Next::Blocked {
                        self.l1s[sm].blocked.remove(i);
                        self.l1_route(e.id, next, c);
                        continue;
                    }
                    let again = self.ops.get(e.id).blocked;
                    self.l1s[sm].blocked.entries[i] = again;
                    self.l1s[sm].blocked.note(again.on);
                }
                i += 1;
            }
        }
        let mut next = 0;
        while let Some(s) = self.slice_on.next(next) {
            next = s + 1;
            // The list waits on its slices' sets only: a change elsewhere cannot free one.
            let stamp: u64 = self.slices[s]
                .blocked
                .slices
                .iter()
                .map(|&k| self.back.slices[k as usize].changes())
                .sum();
            if self.slices[s].blocked.needs_scan(stamp) || self.retry_every {
                let mut i = 0;
                while i < self.slices[s].blocked.len() {
                    let e = self.slices[s].blocked.entries[i];
                    if !self.may_proceed(&e, env) {
                        i += 1;
                        continue;
                    }
                    let next = self.run_at(e.id, Here::Slice, c, env)?;
                    if next == Next::Blocked {
                        let again = self.ops.get(e.id).blocked;
                        self.slices[s].blocked.entries[i] = again;
                        self.slices[s].blocked.note(again.on);
                        i += 1;
                    } else {
                        self.slices[s].blocked.remove(i);
                        self.slice_route(s, e.id, next, c, env);
                    }
                }
            }
            self.slice_drain(s, c, env);
        }
        Ok(())
    }

    /// Completions due by `now`, in order (SM, cycle, tag, submission), appended to `out`;
    /// whether there were any. (The order of those left in `pending` does not matter: the
    /// key is unique.)
    fn hand_over(&mut self, now: u64, out: &mut Vec<MemCompletion>) -> bool {
        if self.pending_min > now {
            return false;
        }
        let mut i = 0;
        while i < self.pending.len() {
            if self.pending[i].at <= now {
                self.due.push(self.pending.swap_remove(i));
            } else {
                i += 1;
            }
        }
        self.due
            .sort_unstable_by_key(|d| (d.sm, d.at, d.tag, d.seq));
        for d in self.due.drain(..) {
            let op = self.ops.remove(d.id);
            out.push(MemCompletion {
                sm: d.sm,
                tag: d.tag,
                txn: op.txn,
                at: d.at,
            });
        }
        self.pending_min = self.pending.iter().map(|d| d.at).min().unwrap_or(u64::MAX);
        true
    }

    /// Operation `id` is done: its completion reaches its SM at `at`.
    fn complete(&mut self, id: u32, at: u64) {
        let op = self.ops.get(id);
        self.pending_min = self.pending_min.min(at);
        self.pending.push(Due {
            seq: op.seq,
            sm: op.sm,
            tag: op.tag,
            at,
            id,
        });
    }

    // ---- running steps ------------------------------------------------------------------

    /// Run operation `id`'s steps while they act `here` (or anywhere, except at memory,
    /// where the operation waits for its DRAM requests first), at cycle `now`; then send
    /// the traffic they caused.
    fn run_at(&mut self, id: u32, here: Here, now: u64, env: &mut Env) -> Result<Next, MemFault> {
        let next = {
            let MemorySystem {
                ops,
                back,
                traffic,
                costs,
                ..
            } = self;
            let op = ops.get_mut(id);
            let prog = env.programs.get(op.prog);
            let device = matches!(op.txn.target, Target::Global | Target::Local);
            loop {
                let place = prog.place(op.st.pc());
                let runs_here = match here {
                    Here::L1 => {
                        place == Place::L1
                            || place == Place::Anywhere
                            || (place == Place::Mem && !device)
                    }
                    Here::Slice => place == Place::L2 || place == Place::Anywhere,
                    Here::Mem => place == Place::Mem,
                };
                if !runs_here {
                    break Next::Go(place);
                }
                let side = env.sms.side(op.sm as usize);
                let mut ctx = Ctx {
                    sm: op.sm,
                    mem: side.mem,
                    back: Some(&mut *back),
                    global: Some(&mut *env.global),
                    costs: *costs,
                    counters: side.counters,
                };
                let mut tm = Timing::Components { now, traffic };
                let stepped = step_timed(prog, &mut op.txn, &mut ctx, &mut op.st, &mut tm);
                match stepped {
                    Ok(Stepped::Yielded) => {}
                    Ok(Stepped::Blocked | Stepped::Waiting) => break Next::Blocked,
                    Ok(Stepped::Ended(_)) => {
                        op.ended = true;
                        break Next::Ended;
                    }
                    Err(error) => {
                        return Err(MemFault {
                            sm: op.sm,
                            tag: op.tag,
                            prog: op.prog,
                            line: op.txn.line,
                            error,
                        })
                    }
                }
            }
        };
        if next == Next::Blocked {
            let on = self.wait_on(id, env);
            let sm = self.ops.get(id).sm;
            let seen = self.changes_of(sm, on, env);
            self.ops.get_mut(id).blocked = blocked::Entry { id, sm, on, seen };
        } else {
            self.progressed = true;
        }
        self.send_traffic(id, now, env);
        Ok(next)
    }

    /// What blocked operation `id` waits on (`Wait`), resolved to its set.
    fn wait_on(&self, id: u32, env: &mut Env) -> blocked::WaitOn {
        use blocked::WaitOn;
        let op = self.ops.get(id);
        let line = op.txn.line;
        let l1_set = |env: &mut Env| env.sms.side(op.sm as usize).mem.l1.set_of(line);
        match op.st.wait() {
            Wait::Nothing => WaitOn::Nothing,
            Wait::L1Set => WaitOn::L1Set(l1_set(env)),
            Wait::SmResources => WaitOn::SmResources,
            Wait::L2Set { slice, line } => WaitOn::L2Set {
                slice,
                set: self.back.slices[slice as usize].set_of(line),
            },
            Wait::L1SetOrAnySlice => WaitOn::L1SetOrAnySlice(l1_set(env)),
        }
    }

    /// The count of changes to what an operation of SM `sm` waits on (`on`).
    fn changes_of(&self, sm: u32, on: blocked::WaitOn, env: &mut Env) -> u64 {
        use blocked::WaitOn;
        match on {
            WaitOn::Nothing => 0,
            WaitOn::L1Set(set) => env.sms.side(sm as usize).mem.l1.changes_of_set(set),
            WaitOn::SmResources => env.sms.side(sm as usize).mem.resource_changes(),
            WaitOn::L2Set { slice, set } => self.back.slices[slice as usize].changes_of_set(set),
            WaitOn::L1SetOrAnySlice(set) => {
                env.sms.side(sm as usize).mem.l1.changes_of_set(set) + self.back.slice_changes()
            }
        }
    }

    /// Blocked entry `e` may proceed now: what it waits on has changed since it blocked
    /// (else a retry would block again, having changed nothing).
    fn may_proceed(&self, e: &blocked::Entry, env: &mut Env) -> bool {
        self.retry_every || self.changes_of(e.sm, e.on, env) != e.seen
    }

    /// Send what the steps just run caused: bytes charged at the slice, DRAM requests, the
    /// silent write-backs' packets.
    fn send_traffic(&mut self, id: u32, now: u64, env: &mut Env) {
        let sm = self.ops.get(id).sm as usize;
        for k in 0..self.traffic.len() {
            let counters = env.sms.side(sm).counters;
            match self.traffic[k] {
                Traffic::L2 { read, write, .. } => {
                    let op = self.ops.get_mut(id);
                    op.reply_bytes += read as u64;
                    let bytes = (read + write) as u64;
                    let s = op.slice as usize;
                    self.slices[s].bw.transfer(now, bytes);
                    self.back.slice_bytes[s] += bytes;
                    counters.l2_bytes += bytes;
                }
                Traffic::Dram { addr, bytes, write } => {
                    let ch = locate(&self.map, addr).0 as usize;
                    self.ops.get_mut(id).dram_wait += 1;
                    count_dram(counters, bytes as u64, write);
                    self.back.channel_bytes[ch] += bytes as u64;
                    self.channels[ch].push(id as u64, addr, bytes, write, now);
                    self.ch_on.set(ch);
                }
                t @ (Traffic::L1WriteBack { .. } | Traffic::L2WriteBack { .. }) => {
                    self.send_write_back(sm, t, now, counters)
                }
            }
        }
        self.traffic.clear();
    }

    /// Send a silent write-back's packet (SM `sm`'s L1 to its slice, or a slice to DRAM).
    fn send_write_back(&mut self, sm: usize, t: Traffic, now: u64, counters: &mut MemCounters) {
        match t {
            Traffic::L1WriteBack { slice, bytes } => {
                let b = HEADER + bytes as u64;
                counters.icnt_bytes += b;
                let at = self.l1s[sm].link.send(
                    now,
                    l1::Packet::WriteBack {
                        slice,
                        bytes,
                        sent: now,
                    },
                    b,
                );
                self.again |= at <= now;
                self.l1_on.set(sm);
            }
            Traffic::L2WriteBack { addr, bytes } => {
                count_dram(counters, bytes as u64, true);
                let ch = locate(&self.map, addr).0;
                let s = self.back.slice_of(addr);
                self.write_back_seq += 1;
                self.slice_on.set(s);
                self.slices[s].to_dram.push_back((
                    ch,
                    DramPacket::WriteBack {
                        id: WRITE_BACK_ID | self.write_back_seq,
                        addr,
                        bytes,
                    },
                ));
            }
            Traffic::L2 { .. } | Traffic::Dram { .. } => {
                unreachable!("only write-backs travel without an operation")
            }
        }
    }
}

fn count_dram(c: &mut MemCounters, bytes: u64, write: bool) {
    c.dram_bytes += bytes;
    if write {
        c.dram_write_bytes += bytes;
    }
}
