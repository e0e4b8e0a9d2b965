//! Running one memory program over the timed hierarchy (Habermaier §4.4–4.6; digest §2.4–2.6).
//!
//! The program is compiled (`mem::program::Compiled`) and interpreted one macro step at a time
//! (`step`): an operation stops at each `yield` and can resume later — or blocks at a micro
//! step that must wait for another operation, as the formal engine retries it. Today each
//! operation still runs all its steps when its instruction issues (`run`) — a valid schedule
//! of the formal macro-step system, in which any op may be picked and silent rules fire
//! between micro steps — while every micro step is given its time:
//! - a step costs the round-trip distance from where the operation is to the farthest place
//!   it touches (`Costs`; coming back costs nothing more, since the round trip includes it),
//!   so program 4.2 pays exactly the configured L1, L2 or DRAM load-to-use latency;
//! - plus the queueing its traffic meets: interconnect ports and the L2 slice's bandwidth for
//!   a step at L2, the bank and channel bus (and the row-buffer outcome) for a step at DRAM;
//! - an operation that cannot proceed now (formally: it yields and is retried) waits until it
//!   can: a read of a line still in flight waits for its fill (an MSHR merge), a reservation
//!   in a set whose lines are all in flight waits for the first to land (a reservation
//!   failure), a reservation with every MSHR busy waits for one to free, `lock` waits for the
//!   banks' release.
//!
//! Silent write-backs (`wb_L1`, `wb_L2`) fire when a dirty line must leave: for a victim, for
//! `evictX`, for a fence's flush and at the end of a launch. They consume bandwidth but do not
//! delay the operation that caused them.
//!
//! What the formal model calls ⊥ (a cache operation on shared memory, reading a line that was
//! never filled, reserving a cached line, ending with a line reserved or banks locked, or
//! without `releaseRegs`) is a `ProgramError`: a configured program is wrong.

use super::{Backend, Costs, SmMemory, Target, Txn, LOCAL_TAG};
use crate::mem::cache::{copy_masked, Cache, Mask, Slot};
use crate::mem::program::{BExp, Compiled, Instr, Level, OpExp};
use crate::mem::GlobalMemory;
use crate::stats::MemCounters;

/// What one operation may touch. `back` and `global` are the state all SMs share: only the
/// memory exchange after the SMs' step holds them (`core::gpu`); an SM's own step runs the
/// programs of shared, constant and parameter accesses, which never reach them, with `None`.
pub struct Ctx<'a> {
    pub sm: u32,
    pub mem: &'a mut SmMemory,
    pub back: Option<&'a mut Backend>,
    pub global: Option<&'a mut GlobalMemory>,
    pub costs: Costs,
    pub counters: &'a mut MemCounters,
}

/// Why `Ctx::back` / `Ctx::global` can be unwrapped: `run` refuses a device operation without
/// them, and only device operations reach them.
const EXCHANGE: &str = "device operations run in the memory exchange, which holds the shared state";

/// `Ctx::back` borrowed on its own (other fields of the context stay usable).
macro_rules! back {
    ($ctx:expr) => {
        $ctx.back.as_deref_mut().expect(EXCHANGE)
    };
}

macro_rules! back_ref {
    ($ctx:expr) => {
        $ctx.back.as_deref().expect(EXCHANGE)
    };
}

macro_rules! global {
    ($ctx:expr) => {
        $ctx.global.as_deref_mut().expect(EXCHANGE)
    };
}

/// A program did something the formal model leaves undefined (⊥).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProgramError(pub String);

fn bottom<T>(msg: impl Into<String>) -> Result<T, ProgramError> {
    Err(ProgramError(msg.into()))
}

/// ⊥ inside a micro step.
fn stuck(msg: &str) -> Stop {
    Stop::Bottom(ProgramError(msg.into()))
}

/// When an operation's registers were released and when its last step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    pub release: u64,
    pub end: u64,
}

/// The `ready` of a line this operation reserved and has not filled yet (pinned).
const PENDING: u64 = u64::MAX;

/// How a step is given its time.
pub enum Timing<'t> {
    /// Compute at issue (`run`): every micro step books the bandwidth calendars of the
    /// interconnect, the slices and the old DRAM model, and waits for `ready` times.
    Calendars,
    /// The step runs at a component of `mem::system` at core cycle `now`: no calendar is
    /// booked, a line in flight is `PENDING` (never a future time), and the traffic the step
    /// causes is reported in `traffic` for the component to send.
    Components {
        now: u64,
        traffic: &'t mut Vec<Traffic>,
    },
}

/// Traffic a step causes, reported in `Timing::Components` mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    /// Bytes the step read and wrote at L2 (every slice it touched; `slice` is the first).
    L2 { slice: u32, read: u32, write: u32 },
    /// A `readMem` / `writeMem` of device memory.
    Dram { addr: u64, bytes: u32, write: bool },
    /// The silent `wb_L1` of an L1 line: `bytes` dirty bytes for slice `slice`.
    L1WriteBack { slice: u32, bytes: u32 },
    /// The silent `wb_L2` of an L2 line: a DRAM write of `bytes` at `addr`.
    L2WriteBack { addr: u64, bytes: u32 },
}

impl Timing<'_> {
    fn components(&self) -> bool {
        matches!(self, Timing::Components { .. })
    }

    fn report(&mut self, t: Traffic) {
        if let Timing::Components { traffic, .. } = self {
            traffic.push(t);
        }
    }
}

/// Header bytes of an interconnect packet (GPGPU-Sim's 8-byte control flit; our choice).
const HEADER: u64 = 8;

/// Places a step can reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    L1,
    L2,
    Dram,
    Shared,
    Const,
    Param,
}

/// One L2 line's share of the operation's L1-sized line (L2 lines may be larger or smaller).
#[derive(Clone, Copy, Debug, Default)]
struct Chunk {
    l2line: u64,
    slice: usize,
    txn_off: u32,
    l2_off: u32,
    len: u32,
}

impl Chunk {
    /// Waiting on this chunk's L2 set.
    fn l2_set(&self) -> Wait {
        Wait::L2Set {
            slice: self.slice as u32,
            line: self.l2line,
        }
    }

    fn ones(&self) -> Mask {
        if self.len >= 128 {
            Mask::MAX
        } else {
            (1 << self.len) - 1
        }
    }
    /// A mask at operation offsets → L2-line offsets.
    fn in_l2(&self, m: Mask) -> Mask {
        ((m >> self.txn_off) & self.ones()) << self.l2_off
    }
}

/// The accounting of the micro step in progress.
#[derive(Clone, Copy, Debug, Default)]
struct Step {
    /// Round-trip cycles of the farthest place touched, if any.
    level: Option<u32>,
    /// Queueing and row-buffer adjustment.
    extra: i64,
    /// The step cannot end before this (fills and locks waited for).
    wait: u64,
    l2: Option<usize>,
    l2_read: u64,
    l2_write: u64,
    /// Lines this step filled: (is L2, slice, index); they land when the step ends. (Packed:
    /// the step is taken and reset at every step's end.)
    filled: [(bool, u16, u32); 8],
    n_filled: u8,
    release: bool,
    unlock: bool,
}

/// Where an operation stands between its macro steps: its program counter and what the
/// engine remembers of it. An operation can stop after any step (`Stepped::Yielded`) or at a
/// micro step that cannot proceed yet (`Stepped::Blocked`) and resume later from here.
#[derive(Clone, Copy, Debug)]
pub struct OpState {
    /// The next instruction of the compiled program.
    pc: u16,
    /// Where the current macro step started, and whether it has changed any state yet (a
    /// step that blocks before it has is restarted: `Run::block`).
    step_pc: u16,
    step_effect: bool,
    /// Start of the current step.
    t: u64,
    /// Round-trip cycles of where the operation is.
    pos: u32,
    /// The accounting of the step in progress (kept across a block).
    step: Step,
    /// The operation reserved an L1 line: L2 and DRAM fetch the L1's sectors.
    l1_fill: bool,
    /// The operation reserved an L1 line, or L2 lines, that its own fill has not settled yet
    /// (a reserved line in another state is another operation's: this one waits for it).
    l1_reserved: bool,
    l2_reserved: bool,
    /// The line this operation waits to read, pinned (is L2, slice, way).
    pin: Option<(bool, usize, usize)>,
    mshr: Option<usize>,
    /// The slice the operation last used and the bytes it read there, still to travel back.
    slice: usize,
    carried: u64,
    locked: bool,
    released: Option<u64>,
    counted: [bool; 2],
    /// `isCachedL1` waited for another operation's fill (component mode).
    waited: bool,
    /// What the operation waits on since its last block.
    wait: Wait,
}

impl OpState {
    /// An operation about to run its first step at cycle `start`.
    pub fn new(start: u64) -> OpState {
        OpState {
            pc: 0,
            step_pc: 0,
            step_effect: false,
            t: start,
            pos: 0,
            step: Step::default(),
            l1_fill: false,
            l1_reserved: false,
            l2_reserved: false,
            pin: None,
            mshr: None,
            slice: 0,
            carried: 0,
            locked: false,
            released: None,
            counted: [false; 2],
            waited: false,
            wait: Wait::Nothing,
        }
    }

    /// The program counter of the next step (or of the micro step it blocked at).
    pub fn pc(&self) -> u16 {
        self.pc
    }

    /// What the operation waited on when it last blocked.
    pub fn wait(&self) -> Wait {
        self.wait
    }

    /// The cycle the operation's last step ended at.
    pub fn time(&self) -> u64 {
        self.t
    }
}

/// What one call of `step` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stepped {
    /// A macro step ran to its `yield`; the next starts at `OpState::pc` (its place:
    /// `Compiled::place`).
    Yielded,
    /// A micro step cannot proceed now: it needs a line or a lock that another operation
    /// holds in a state it must wait out (a reservation not filled yet, busy banks, every way
    /// or MSHR reserved). The step's changes so far stay and the operation resumes at that
    /// micro step: the formal model's retry (digest §2.4.5, (op2): the op yields with the
    /// same statement at the head of its work list).
    Blocked,
    /// The macro step could not start: its first effect must wait for another operation and
    /// nothing has changed; it runs again from its start later (to the formal model, the
    /// operation was not picked).
    Waiting,
    /// The program reached `end`.
    Ended(Done),
}

/// Why a micro step stopped: ⊥, or it must wait for another operation (`Stepped::Blocked`)
/// to change what the `Wait` names.
enum Stop {
    Bottom(ProgramError),
    Block(Wait),
}

/// The state a blocked operation waits on. Whether a micro step blocks depends on that state
/// alone (never on the cycle), so while it is unchanged a retry would block again, having
/// changed nothing: the component system retries an operation only once it has moved
/// (`Cache::set_changes`, `SmMemory::resource_changes`, `Backend::slice_changes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Wait {
    /// Not blocked.
    #[default]
    Nothing,
    /// The lines of the L1 set of the operation's line (reserved, pinned, being filled).
    L1Set,
    /// The SM's MSHRs or shared-memory bank locks.
    SmResources,
    /// The lines of the set of L2 line `line` in slice `slice`.
    L2Set { slice: u32, line: u64 },
    /// The L1 set of the operation's line or any L2 slice (the set's victim's write-back
    /// found no room in L2).
    L1SetOrAnySlice,
}

impl From<ProgramError> for Stop {
    fn from(e: ProgramError) -> Stop {
        Stop::Bottom(e)
    }
}

type MicroResult = Result<(), Stop>;

struct Run<'r, 'a, 't> {
    ctx: &'r mut Ctx<'a>,
    txn: &'r mut Txn,
    /// The operation's state, worked on in place (a retried operation is not copied).
    s: &'r mut OpState,
    tm: &'r mut Timing<'t>,
}

/// Run `prog` for `txn` from cycle `start` to its `end`, step after step: a valid schedule of
/// the macro-step system in which no other operation runs in between, so nothing blocks.
pub fn run(
    prog: &Compiled,
    txn: &mut Txn,
    ctx: &mut Ctx,
    start: u64,
) -> Result<Done, ProgramError> {
    check_device_ctx(txn, ctx)?;
    // One interpreter for all the steps (the hot path: no state copied between them).
    let mut s = OpState::new(start);
    let mut r = Run {
        ctx,
        txn,
        s: &mut s,
        tm: &mut Timing::Calendars,
    };
    loop {
        match r.run_to_yield(prog)? {
            Stepped::Yielded => {}
            Stepped::Ended(d) => return Ok(d),
            Stepped::Blocked | Stepped::Waiting => {
                return bottom(
                    "the program must wait for a line or lock that another operation in flight holds, and a program run at issue cannot wait; or it waits for one it holds itself",
                )
            }
        }
    }
}

/// `run` and `step` refuse a device operation without the shared state.
fn check_device_ctx(txn: &Txn, ctx: &Ctx) -> Result<(), ProgramError> {
    if matches!(txn.target, Target::Global | Target::Local)
        && (ctx.back.is_none() || ctx.global.is_none())
    {
        return bottom(
            "internal: a device-memory operation ran outside the memory exchange (`core::exec::uses_memory_system` must name its instruction)",
        );
    }
    Ok(())
}

/// Run `txn`'s macro step at `st`'s program counter (or resume the micro step it blocked at)
/// to its `yield` or `end`.
pub fn step(
    prog: &Compiled,
    txn: &mut Txn,
    ctx: &mut Ctx,
    st: &mut OpState,
) -> Result<Stepped, ProgramError> {
    step_timed(prog, txn, ctx, st, &mut Timing::Calendars)
}

/// `step` under a timing mode: in `Timing::Components` the operation's clock is set to the
/// component's `now` first, and the step ends at `now`.
pub fn step_timed(
    prog: &Compiled,
    txn: &mut Txn,
    ctx: &mut Ctx,
    st: &mut OpState,
    tm: &mut Timing,
) -> Result<Stepped, ProgramError> {
    if let Timing::Components { now, .. } = tm {
        st.t = *now;
    }
    check_device_ctx(txn, ctx)?;
    let mut r = Run {
        ctx,
        txn,
        s: st,
        tm,
    };
    r.run_to_yield(prog)
}

impl Run<'_, '_, '_> {
    /// Stop at the micro step at `pc`, which must wait for another operation. A step that has
    /// changed nothing yet did not happen: it runs again from its start, its conditions
    /// evaluated anew (`Stepped::Waiting`; so program 4.2's `if (!isCachedL1) { reserveL1 ..`
    /// never reserves a line another operation filled meanwhile). One that has changed
    /// something resumes at that micro step, as the formal engine retries it.
    fn block(&mut self, pc: usize, wait: Wait) -> Stepped {
        self.s.wait = wait;
        if self.s.step_effect {
            self.s.pc = pc as u16;
            Stepped::Blocked
        } else {
            self.s.pc = self.s.step_pc;
            self.s.step = Step::default();
            Stepped::Waiting
        }
    }

    /// Interpret the compiled code from the operation's pc to its step's `yield` or `end`.
    fn run_to_yield(&mut self, prog: &Compiled) -> Result<Stepped, ProgramError> {
        let code = prog.code();
        let mut pc = self.s.pc as usize;
        loop {
            match &code[pc] {
                Instr::Op(op) => match self.op(*op) {
                    Ok(()) => pc += 1,
                    Err(Stop::Block(w)) => return Ok(self.block(pc, w)),
                    Err(Stop::Bottom(e)) => return Err(e),
                },
                Instr::JumpUnless(b, target) => match self.cond(b) {
                    Ok(true) => pc += 1,
                    Ok(false) => pc = *target as usize,
                    Err(Stop::Block(w)) => return Ok(self.block(pc, w)),
                    Err(Stop::Bottom(e)) => return Err(e),
                },
                Instr::Jump(target) => pc = *target as usize,
                Instr::Yield => {
                    self.end_step();
                    self.s.pc = (pc + 1) as u16;
                    self.s.step_pc = self.s.pc;
                    self.s.step_effect = false;
                    return Ok(Stepped::Yielded);
                }
                Instr::End => {
                    self.end_step();
                    self.s.pc = pc as u16;
                    return self.finish().map(Stepped::Ended);
                }
            }
        }
    }

    /// After `end`: the formal model's stuck states, the reply still to travel, the times.
    fn finish(&mut self) -> Result<Done, ProgramError> {
        self.check_end()?;
        // A program that ends at L2 with data read there still has to bring it back.
        let late = if self.s.carried > 0 && !self.tm.components() {
            self.reply()
        } else {
            0
        };
        match self.s.released {
            Some(release) => Ok(Done {
                release: release + late,
                end: self.s.t + late,
            }),
            None => {
                bottom("the program ended without `releaseRegs`: its registers would stay blocked")
            }
        }
    }

    fn cond(&mut self, b: &BExp) -> Result<bool, Stop> {
        Ok(match b {
            BExp::True => true,
            BExp::False => false,
            BExp::Not(x) => !self.cond(x)?,
            BExp::And(x, y) => self.cond(x)? & self.cond(y)?,
            BExp::Or(x, y) => self.cond(x)? | self.cond(y)?,
            BExp::IsCached(Level::L1) => self.cached_l1()?,
            BExp::IsCached(Level::L2) => self.cached_l2()?,
        })
    }

    fn op(&mut self, op: OpExp) -> MicroResult {
        self.op_inner(op)?;
        // What changes caches, memory, locks or registers (reads only fill the operation's
        // own data; atomOp works on it).
        if !matches!(op, OpExp::ReadMem | OpExp::AtomOp | OpExp::Read(_)) {
            self.s.step_effect = true;
        }
        Ok(())
    }

    fn op_inner(&mut self, op: OpExp) -> MicroResult {
        match op {
            OpExp::ReadMem => self.read_mem()?,
            OpExp::WriteMem => self.write_mem()?,
            OpExp::AtomOp => self.atom_op()?,
            OpExp::ReleaseRegs => self.s.step.release = true,
            OpExp::WriteToRegs => self.txn.wrote_regs = true,
            OpExp::Lock => self.lock()?,
            OpExp::Unlock => self.unlock()?,
            _ => {
                self.device(op)?;
                match op {
                    OpExp::Read(Level::L1) => self.read_l1()?,
                    OpExp::Read(Level::L2) => self.read_l2()?,
                    OpExp::Write(Level::L1) => self.write_l1()?,
                    OpExp::Write(Level::L2) => self.write_l2()?,
                    OpExp::Reserve(Level::L1) => self.reserve_l1()?,
                    OpExp::Reserve(Level::L2) => self.reserve_l2()?,
                    OpExp::Update(Level::L1) => self.update_l1()?,
                    OpExp::Update(Level::L2) => self.update_l2()?,
                    OpExp::Evict(Level::L1) => self.drop_l1(true)?,
                    OpExp::Evict(Level::L2) => self.drop_l2(true)?,
                    OpExp::Discard(Level::L1) => self.drop_l1(false)?,
                    OpExp::Discard(Level::L2) => self.drop_l2(false)?,
                    OpExp::ClassifyFirst(l) => {
                        self.classify(l, crate::mem::cache::EvClass::First)?
                    }
                    OpExp::ClassifyNormal(l) => {
                        self.classify(l, crate::mem::cache::EvClass::Normal)?
                    }
                    _ => unreachable!("handled above"),
                }
            }
        }
        Ok(())
    }

    // ---- timing -------------------------------------------------------------------------

    fn cost(&self, p: Place) -> u32 {
        let c = &self.ctx.costs;
        match p {
            Place::L1 => c.l1,
            Place::L2 => c.l2,
            Place::Dram => c.dram,
            Place::Shared => c.shared,
            Place::Const => c.constant,
            Place::Param => c.param,
        }
    }

    fn touch(&mut self, p: Place) {
        let r = self.cost(p);
        self.s.step.level = Some(self.s.step.level.map_or(r, |l| l.max(r)));
    }

    /// The cycle within the current step: its start, or later once it has waited.
    fn now(&self) -> u64 {
        self.s.t.max(self.s.step.wait)
    }

    fn wait_until(&mut self, at: u64) {
        self.s.step.wait = self.s.step.wait.max(at);
    }

    /// Close the current micro step: its cost, queueing and waits give its end, when the
    /// lines it filled land and the registers or banks it released become free.
    fn end_step(&mut self) {
        let s = std::mem::take(&mut self.s.step);
        let end = if self.tm.components() {
            // The component gives the time: the step ends where and when it runs; its L2
            // bytes are the component's to carry and charge.
            if let Some(slice) = s.l2 {
                self.tm.report(Traffic::L2 {
                    slice: slice as u32,
                    read: s.l2_read as u32,
                    write: s.l2_write as u32,
                });
            }
            self.s.t.max(s.wait)
        } else {
            self.calendar_end(&s)
        };
        self.settle(&s, end);
    }

    /// The end of a step under `Timing::Calendars`: its cost from where the operation is, the
    /// interconnect and slice queueing, and its waits.
    fn calendar_end(&mut self, s: &Step) -> u64 {
        let mut extra = s.extra;
        let l2 = self.ctx.costs.l2;
        // The interconnect is crossed when the operation goes out to L2 (a request carrying
        // the bytes it writes) and when it comes back from L2 or beyond (a reply carrying the
        // bytes it read there); steps while it stays at L2 or DRAM (fills, an atomic's
        // read-modify-write) stay inside the slice.
        if let Some(slice) = s.l2 {
            self.s.slice = slice;
            if self.s.pos < l2 {
                extra += self.request(slice, s.l2_write) as i64;
            }
            self.s.carried += s.l2_read;
        }
        if self.s.pos >= l2 && s.level.is_none_or(|lv| lv < l2) {
            extra += self.reply() as i64;
            if s.level.is_none() {
                // Back at the SM's registers.
                self.s.pos = 0;
            }
        }
        let cost = match s.level {
            Some(level) => {
                let c = level.saturating_sub(self.s.pos);
                self.s.pos = level;
                c
            }
            None => 0,
        };
        let end = ((self.s.t + cost as u64) as i64 + extra).max(self.s.t as i64) as u64;
        end.max(s.wait)
    }

    /// At the end of a step: the lines it filled land, the registers or banks it released
    /// become free.
    fn settle(&mut self, s: &Step, end: u64) {
        for &(l2, slice, i) in &s.filled[..s.n_filled as usize] {
            let (slice, i) = (slice as usize, i as usize);
            let line = if l2 {
                back!(self.ctx).slices[slice].line_mut(i)
            } else {
                self.ctx.mem.l1.line_mut(i)
            };
            line.ready = end;
            if l2 {
                self.s.l2_reserved = false;
            } else {
                self.s.l1_reserved = false;
                if let Some(m) = self.s.mshr.take() {
                    self.ctx.mem.set_mshr(m, end);
                }
            }
        }
        if s.release {
            self.s.released = Some(end);
        }
        if s.unlock {
            self.set_banks(end);
            self.s.locked = false;
        }
        self.s.t = end;
    }

    /// The queueing of a request packet to slice `slice` carrying `write` bytes: the SM's
    /// output port, the slice's input port and its bandwidth (the unloaded trip is in the
    /// step's cost).
    fn request(&mut self, slice: usize, write: u64) -> u64 {
        let (sm, now) = (self.ctx.sm, self.s.t);
        let b = back!(self.ctx);
        let lat = b.icnt.latency() as u64;
        let arrive = b.icnt.to_slice(sm, slice as u32, HEADER + write, now);
        let served = b.slice_bw[slice].serve(arrive, write);
        b.slice_bytes[slice] += write;
        let c = &mut *self.ctx.counters;
        c.l2_bytes += write;
        c.icnt_bytes += HEADER + write;
        c.icnt_queue_cycles += arrive - now - lat;
        served - now - lat
    }

    /// The queueing of the reply that brings the bytes read at L2 back to the SM.
    fn reply(&mut self) -> u64 {
        let (sm, now, slice, read) = (self.ctx.sm, self.s.t, self.s.slice, self.s.carried);
        self.s.carried = 0;
        let b = back!(self.ctx);
        let lat = b.icnt.latency() as u64;
        let served = b.slice_bw[slice].serve(now, read);
        b.slice_bytes[slice] += read;
        let back = b.icnt.to_sm(slice as u32, sm, HEADER + read, served);
        let c = &mut *self.ctx.counters;
        c.l2_bytes += read;
        c.icnt_bytes += HEADER + read;
        c.icnt_queue_cycles += back - served - lat;
        back - now - lat
    }

    fn l2_traffic(&mut self, slice: usize, read: u64, write: u64) {
        self.touch(Place::L2);
        self.s.step.l2.get_or_insert(slice);
        self.s.step.l2_read += read;
        self.s.step.l2_write += write;
    }

    fn filled(&mut self, l2: bool, slice: usize, i: usize) {
        if (self.s.step.n_filled as usize) < self.s.step.filled.len() {
            debug_assert!(slice <= u16::MAX as usize && i <= u32::MAX as usize);
            self.s.step.filled[self.s.step.n_filled as usize] = (l2, slice as u16, i as u32);
            self.s.step.n_filled += 1;
        }
    }

    /// A DRAM access of `bytes` at `addr` in this step: bank and bus queueing and the
    /// row-buffer outcome adjust the step's cost.
    fn dram(&mut self, addr: u64, bytes: u64, write: bool) {
        if self.tm.components() {
            self.tm.report(Traffic::Dram {
                addr,
                bytes: bytes as u32,
                write,
            });
            self.touch(Place::Dram);
            return;
        }
        let now = self.now();
        let c = &mut *self.ctx.counters;
        let d = dram_access(back!(self.ctx), addr, bytes, now, write, c);
        self.s.step.extra += d;
        self.touch(Place::Dram);
    }

    // ---- masks --------------------------------------------------------------------------

    /// The L1 sectors of the operation's bytes.
    fn want_l1(&self) -> Mask {
        self.ctx.mem.l1.sectors_of(self.txn.bytes)
    }

    /// What L2 and DRAM move for this operation, at operation offsets: the L1's sectors when
    /// it fills an L1 line, else its own bytes.
    fn want_below(&self) -> Mask {
        if self.s.l1_fill {
            self.want_l1()
        } else {
            self.txn.bytes
        }
    }

    fn chunks(&self) -> ([Chunk; 4], usize) {
        let l1 = self.ctx.mem.l1.line_bytes();
        let l2 = back_ref!(self.ctx).l2_line as u64;
        let mut out = [Chunk::default(); 4];
        let line = self.txn.line;
        if l2 >= l1 {
            let l2line = line - line % l2;
            out[0] = Chunk {
                l2line,
                slice: back_ref!(self.ctx).slice_of(l2line),
                txn_off: 0,
                l2_off: (line - l2line) as u32,
                len: l1 as u32,
            };
            return (out, 1);
        }
        let n = ((l1 / l2) as usize).min(4);
        for (k, c) in out.iter_mut().enumerate().take(n) {
            let l2line = line + k as u64 * l2;
            *c = Chunk {
                l2line,
                slice: back_ref!(self.ctx).slice_of(l2line),
                txn_off: (k as u64 * l2) as u32,
                l2_off: 0,
                len: l2 as u32,
            };
        }
        (out, n)
    }

    fn device(&self, op: OpExp) -> Result<(), ProgramError> {
        match self.txn.target {
            Target::Global | Target::Local => Ok(()),
            t => bottom(format!(
                "`{}` is not defined for {t:?} memory (the formal model defines cache operations on device memory only)",
                op.keyword()
            )),
        }
    }

    // ---- conditions ---------------------------------------------------------------------

    /// `isCachedL1`: the line is present with every sector the operation needs, or reserved
    /// by another operation and not filled yet (formal `isCached`: valid or pending; the read
    /// that follows waits for the fill). The first evaluation counts hits and misses by sector.
    fn cached_l1(&mut self) -> Result<bool, Stop> {
        self.device(OpExp::Read(Level::L1))?;
        let want = self.want_l1();
        let l1 = &self.ctx.mem.l1;
        let (valid, pending) = l1.find(self.txn.line).map_or((0, false), |i| {
            let l = l1.line(i);
            (l.valid, l.ready == PENDING && !self.s.l1_reserved)
        });
        if pending && valid & want != want && self.tm.components() {
            // A sector cache fills only the sectors its reserving operation asked for: wait
            // for that fill before deciding (the step has not acted yet: it is retried
            // whole), then read the bytes it brought (an MSHR merge) or miss on the others.
            self.s.waited = true;
            return Err(Stop::Block(Wait::L1Set));
        }
        if std::mem::take(&mut self.s.waited) && valid & want == want {
            self.ctx.counters.mshr_merges += 1;
        }
        if !std::mem::replace(&mut self.s.counted[0], true) {
            let c = &mut *self.ctx.counters;
            c.l1_hits += l1.sector_count(valid & want);
            c.l1_misses += l1.sector_count(want & !valid);
        }
        Ok(valid & want == want || pending)
    }

    fn cached_l2(&mut self) -> Result<bool, Stop> {
        self.device(OpExp::Read(Level::L2))?;
        let (chunks, n) = self.chunks();
        let want = self.want_below();
        let count = !std::mem::replace(&mut self.s.counted[1], true);
        let mut all = true;
        for c in &chunks[..n] {
            let s = &back_ref!(self.ctx).slices[c.slice];
            let w = s.sectors_of(c.in_l2(want));
            if w == 0 {
                continue;
            }
            let (valid, pending) = s.find(c.l2line).map_or((0, false), |i| {
                let l = s.line(i);
                (l.valid, l.ready == PENDING && !self.s.l2_reserved)
            });
            if pending && valid & w != w && self.tm.components() {
                // As `cached_l1`: wait for the reserving operation's sectors, then decide.
                return Err(Stop::Block(c.l2_set()));
            }
            if count {
                self.ctx.counters.l2_hits += s.sector_count(valid & w);
                self.ctx.counters.l2_misses += s.sector_count(w & !valid);
            }
            all &= valid & w == w || pending;
        }
        Ok(all)
    }

    // ---- L1 operations ------------------------------------------------------------------

    /// The L1 way holding the operation's line, allocating it if absent (a victim is
    /// written back if dirty; a set all in flight is waited for; a set all reserved by
    /// operations still running blocks).
    fn l1_way(&mut self) -> Result<usize, Stop> {
        loop {
            let now = self.now();
            let ctx = &mut *self.ctx;
            match l1_slot(
                back!(ctx),
                ctx.mem,
                ctx.sm,
                global!(ctx),
                self.txn.line,
                now,
                ctx.counters,
                self.tm,
            ) {
                Ok(i) => return Ok(i),
                Err(PENDING) => {
                    // The set all in flight, or its victim's write-back blocked in L2.
                    let wait = match ctx.mem.l1.slot_for(self.txn.line, now) {
                        Slot::Busy(_) => Wait::L1Set,
                        _ => Wait::L1SetOrAnySlice,
                    };
                    return Err(Stop::Block(wait));
                }
                Err(at) => {
                    ctx.counters.l1_reservation_fails += 1;
                    self.wait_until(at.max(now + 1));
                }
            }
        }
    }

    fn reserve_l1(&mut self) -> MicroResult {
        if self.cached_l1()? {
            return Err(stuck("`reserveL1` of a line already in L1"));
        }
        if self.ctx.mem.mshr_free.iter().all(|&f| f == PENDING) {
            return Err(Stop::Block(Wait::SmResources));
        }
        self.touch(Place::L1);
        let i = self.l1_way()?;
        // One MSHR per line in flight: with all busy the miss waits for the first to free.
        let now = self.now();
        let mem = &mut *self.ctx.mem;
        let (m, free) = mem
            .mshr_free
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, f)| f)
            .expect("at least one MSHR");
        if free > now {
            self.ctx.counters.mshr_stalls += 1;
            self.wait_until(free);
        }
        let mem = &mut *self.ctx.mem;
        mem.set_mshr(m, PENDING);
        self.s.mshr = Some(m);
        mem.l1.line_mut(i).ready = PENDING;
        self.s.l1_fill = true;
        self.s.l1_reserved = true;
        Ok(())
    }

    fn l1_find(&self, what: &str) -> Result<usize, ProgramError> {
        match self.ctx.mem.l1.find(self.txn.line) {
            Some(i) => Ok(i),
            None => bottom(format!("`{what}` of a line not in L1")),
        }
    }

    fn read_l1(&mut self) -> MicroResult {
        self.touch(Place::L1);
        let i = self.l1_find("readL1")?;
        let want = self.want_l1();
        let l = *self.ctx.mem.l1.line(i);
        if l.valid & want != want && l.ready == PENDING && !self.s.l1_reserved {
            return Err(self.wait_to_read(None, i));
        }
        self.unpin();
        if l.valid & want != want {
            return Err(stuck(
                "`readL1` of bytes never filled (the program would wait forever)",
            ));
        }
        if l.ready != PENDING && l.ready > self.now() {
            self.ctx.counters.mshr_merges += 1;
            self.wait_until(l.ready);
        }
        if self.txn.carries_values() {
            copy_masked(&mut self.txn.data, self.ctx.mem.l1.data(i), want);
        }
        self.ctx.mem.l1.touch(i);
        Ok(())
    }

    /// Block on a line another operation reserved and has not filled: pin it (once), so that
    /// nobody evicts it before this operation has read it.
    fn wait_to_read(&mut self, l2: Option<&Chunk>, i: usize) -> Stop {
        let (slice, wait) = l2.map_or((0, Wait::L1Set), |c| (c.slice, c.l2_set()));
        let l2 = l2.is_some();
        if self.s.pin.is_none() {
            self.s.pin = Some((l2, slice, i));
            self.pinned_line(l2, slice, i).pins += 1;
        }
        Stop::Block(wait)
    }

    fn unpin(&mut self) {
        if let Some((l2, slice, i)) = self.s.pin.take() {
            self.pinned_line(l2, slice, i).pins -= 1;
        }
    }

    fn pinned_line(&mut self, l2: bool, slice: usize, i: usize) -> &mut crate::mem::cache::Line {
        if l2 {
            back!(self.ctx).slices[slice].line_mut(i)
        } else {
            self.ctx.mem.l1.line_mut(i)
        }
    }

    fn update_l1(&mut self) -> Result<(), ProgramError> {
        self.touch(Place::L1);
        let i = self.l1_find("updateL1")?;
        let want = self.want_l1();
        let l1 = &mut self.ctx.mem.l1;
        let fill = want & !l1.line(i).valid;
        if self.txn.carries_values() {
            copy_masked(l1.data_mut(i), &self.txn.data, fill);
        }
        l1.line_mut(i).valid |= fill;
        if l1.line(i).ready == PENDING {
            self.filled(false, 0, i);
        }
        Ok(())
    }

    fn write_l1(&mut self) -> MicroResult {
        self.touch(Place::L1);
        let i = self.l1_way()?;
        let values = self.txn.carries_values();
        self.txn.changed |= write_line(
            &mut self.ctx.mem.l1,
            i,
            &self.txn.data,
            self.txn.bytes,
            values,
        );
        self.ctx.mem.l1.touch(i);
        Ok(())
    }

    /// `evictL1` (`write_back`: dirty bytes are written back first, the silent `wb_L1` the
    /// formal `evict` waits for) or `discardL1` (dirty bytes are dropped).
    fn drop_l1(&mut self, write_back: bool) -> MicroResult {
        self.touch(Place::L1);
        let Some(i) = self.ctx.mem.l1.find(self.txn.line) else {
            return Ok(());
        };
        let ready = self.ctx.mem.l1.line(i).ready;
        if (ready == PENDING && !self.s.l1_reserved) || self.ctx.mem.l1.line(i).pins > 0 {
            return Err(Stop::Block(Wait::L1Set));
        }
        if ready == PENDING {
            return Err(stuck(
                "evicting a line this operation reserved (it would wait forever)",
            ));
        }
        if ready > self.now() {
            self.wait_until(ready);
        }
        if write_back && self.ctx.mem.l1.line(i).dirty != 0 {
            loop {
                let now = self.now();
                let ctx = &mut *self.ctx;
                match write_back_l1(
                    back!(ctx),
                    ctx.mem,
                    ctx.sm,
                    global!(ctx),
                    i,
                    now,
                    ctx.counters,
                    self.tm,
                ) {
                    Ok(()) => break,
                    Err(PENDING) => return Err(Stop::Block(Wait::L1SetOrAnySlice)),
                    Err(at) => self.wait_until(at.max(now + 1)),
                }
            }
        }
        let ctx = &mut *self.ctx;
        ctx.mem.l1.invalidate(i);
        ctx.counters.l1_evictions += 1;
        Ok(())
    }

    fn classify(
        &mut self,
        level: Level,
        class: crate::mem::cache::EvClass,
    ) -> Result<(), ProgramError> {
        match level {
            Level::L1 => {
                let i = self.l1_find("classifyL1")?;
                self.ctx.mem.l1.line_mut(i).class = class;
            }
            Level::L2 => {
                let (chunks, n) = self.chunks();
                for c in &chunks[..n] {
                    let s = &mut back!(self.ctx).slices[c.slice];
                    match s.find(c.l2line) {
                        Some(i) => s.line_mut(i).class = class,
                        None => return bottom("`classifyL2` of a line not in L2"),
                    }
                }
            }
        }
        Ok(())
    }

    // ---- L2 operations ------------------------------------------------------------------

    /// The way of chunk `c` in its slice, allocating it if absent (blocks as `l1_way`).
    fn l2_way(&mut self, c: &Chunk) -> Result<usize, Stop> {
        loop {
            let now = self.now();
            let ctx = &mut *self.ctx;
            match l2_slot(
                back!(ctx),
                c.slice,
                c.l2line,
                global!(ctx),
                now,
                ctx.counters,
                self.tm,
            ) {
                Ok(i) => return Ok(i),
                Err(PENDING) => return Err(Stop::Block(c.l2_set())),
                Err(at) => {
                    ctx.counters.l2_reservation_fails += 1;
                    self.wait_until(at.max(now + 1));
                }
            }
        }
    }

    fn reserve_l2(&mut self) -> MicroResult {
        if self.cached_l2()? {
            return Err(stuck("`reserveL2` of a line already in L2"));
        }
        let (chunks, n) = self.chunks();
        let want = self.want_below();
        for c in &chunks[..n] {
            if c.in_l2(want) == 0 {
                continue;
            }
            let i = self.l2_way(c)?;
            back!(self.ctx).slices[c.slice].line_mut(i).ready = PENDING;
            self.s.l2_reserved = true;
            self.l2_traffic(c.slice, 0, 0);
        }
        Ok(())
    }

    fn read_l2(&mut self) -> MicroResult {
        let (chunks, n) = self.chunks();
        let want = self.want_below();
        let values = self.txn.carries_values();
        for c in &chunks[..n] {
            let s = &back_ref!(self.ctx).slices[c.slice];
            let w = s.sectors_of(c.in_l2(want));
            if w == 0 {
                continue;
            }
            let Some(i) = s.find(c.l2line) else {
                return Err(stuck("`readL2` of a line not in L2"));
            };
            let l = *s.line(i);
            if l.valid & w != w && l.ready == PENDING && !self.s.l2_reserved {
                return Err(self.wait_to_read(Some(c), i));
            }
            if l.valid & w != w {
                return Err(stuck(
                    "`readL2` of bytes never filled (the program would wait forever)",
                ));
            }
            if l.ready != PENDING && l.ready > self.now() {
                self.wait_until(l.ready);
            }
            if values {
                let (a, b) = (c.txn_off as usize, c.l2_off as usize);
                let len = c.len as usize;
                let s = &back_ref!(self.ctx).slices[c.slice];
                copy_masked(
                    &mut self.txn.data[a..a + len],
                    &s.data(i)[b..b + len],
                    w >> b,
                );
            }
            back!(self.ctx).slices[c.slice].touch(i);
            self.l2_traffic(c.slice, w.count_ones() as u64, 0);
        }
        self.unpin();
        Ok(())
    }

    fn update_l2(&mut self) -> Result<(), ProgramError> {
        let (chunks, n) = self.chunks();
        let want = self.want_below();
        let values = self.txn.carries_values();
        for c in &chunks[..n] {
            let w = back!(self.ctx).slices[c.slice].sectors_of(c.in_l2(want));
            if w == 0 {
                continue;
            }
            let Some(i) = back!(self.ctx).slices[c.slice].find(c.l2line) else {
                return bottom("`updateL2` of a line not in L2");
            };
            let s = &mut back!(self.ctx).slices[c.slice];
            let fill = w & !s.line(i).valid;
            if values {
                let (a, b, len) = (c.txn_off as usize, c.l2_off as usize, c.len as usize);
                copy_masked(
                    &mut s.data_mut(i)[b..b + len],
                    &self.txn.data[a..a + len],
                    fill >> b,
                );
            }
            s.line_mut(i).valid |= fill;
            let pending = s.line(i).ready == PENDING;
            if pending {
                self.filled(true, c.slice, i);
            }
            // A fill comes from DRAM: no interconnect bytes.
            self.l2_traffic(c.slice, 0, 0);
        }
        Ok(())
    }

    fn write_l2(&mut self) -> MicroResult {
        let (chunks, n) = self.chunks();
        let values = self.txn.carries_values();
        for c in &chunks[..n] {
            let m = c.in_l2(self.txn.bytes);
            if m == 0 {
                continue;
            }
            let s = &back_ref!(self.ctx).slices[c.slice];
            let present = s.find(c.l2line).map_or(0, |i| s.line(i).valid);
            let w = s.sectors_of(m);
            let (hits, misses) = (s.sector_count(present & w), s.sector_count(w & !present));
            // Counted once the way is found: a write that blocks here is tried again.
            let i = self.l2_way(c)?;
            self.ctx.counters.l2_hits += hits;
            self.ctx.counters.l2_misses += misses;
            let (a, b, len) = (c.txn_off as usize, c.l2_off as usize, c.len as usize);
            let mut src = [0u8; 128];
            src[b..b + len].copy_from_slice(&self.txn.data[a..a + len]);
            let s = &mut back!(self.ctx).slices[c.slice];
            self.txn.changed |= write_line(s, i, &src, m, values);
            s.touch(i);
            self.l2_traffic(c.slice, 0, m.count_ones() as u64);
        }
        Ok(())
    }

    fn drop_l2(&mut self, write_back: bool) -> MicroResult {
        let (chunks, n) = self.chunks();
        for c in &chunks[..n] {
            self.l2_traffic(c.slice, 0, 0);
            let Some(i) = back!(self.ctx).slices[c.slice].find(c.l2line) else {
                continue;
            };
            let line = *back!(self.ctx).slices[c.slice].line(i);
            let ready = line.ready;
            if (ready == PENDING && !self.s.l2_reserved) || line.pins > 0 {
                return Err(Stop::Block(c.l2_set()));
            }
            if ready == PENDING {
                return Err(stuck(
                    "evicting a line this operation reserved (it would wait forever)",
                ));
            }
            if ready > self.now() {
                self.wait_until(ready);
            }
            let now = self.now();
            let ctx = &mut *self.ctx;
            if write_back && back!(ctx).slices[c.slice].line(i).dirty != 0 {
                write_back_l2(
                    back!(ctx),
                    c.slice,
                    i,
                    global!(ctx),
                    now,
                    ctx.counters,
                    self.tm,
                );
            }
            back!(ctx).slices[c.slice].invalidate(i);
            ctx.counters.l2_evictions += 1;
        }
        Ok(())
    }

    // ---- memory, atomics, locks ---------------------------------------------------------

    fn read_mem(&mut self) -> Result<(), ProgramError> {
        match self.txn.target {
            Target::Global | Target::Local => {
                let m = self.dram_mask(self.want_below());
                if self.txn.carries_values() {
                    global!(self.ctx).read_raw(self.txn.line, &mut self.txn.data, m);
                }
                self.ctx.counters.dram_reads += 1;
                self.dram(self.txn.line, m.count_ones() as u64, false);
            }
            Target::Shared => self.touch(Place::Shared),
            Target::Const => self.touch(Place::Const),
            Target::Param => self.touch(Place::Param),
        }
        Ok(())
    }

    /// A mask widened to the L2's sectors (DRAM moves whole sectors).
    fn dram_mask(&self, m: Mask) -> Mask {
        let (chunks, n) = self.chunks();
        let mut out = 0;
        for c in &chunks[..n] {
            let s = &back_ref!(self.ctx).slices[c.slice];
            let w = s.sectors_of(c.in_l2(m)) >> c.l2_off;
            out |= (w & c.ones()) << c.txn_off;
        }
        out
    }

    fn write_mem(&mut self) -> Result<(), ProgramError> {
        match self.txn.target {
            Target::Global | Target::Local => {
                let m = self.txn.bytes;
                if self.txn.carries_values() {
                    global!(self.ctx).write_raw(self.txn.line, &self.txn.data, m);
                    self.txn.changed = true;
                }
                self.ctx.counters.dram_writes += 1;
                self.dram(self.txn.line, m.count_ones() as u64, true);
            }
            Target::Shared => self.touch(Place::Shared),
            Target::Const | Target::Param => {
                return bottom("`writeMem` to read-only memory");
            }
        }
        Ok(())
    }

    /// `atomOp`: the new value from the old (global atomics carry their values here; shared
    /// ones are applied by the executing instruction, the program giving their timing).
    fn atom_op(&mut self) -> Result<(), ProgramError> {
        if self.txn.target == Target::Shared {
            return Ok(());
        }
        if let Some(r) = self.txn.reduce.as_deref() {
            reduce_line(r, self.txn.bytes, &mut self.txn.data);
            return Ok(());
        }
        let Some(a) = self.txn.atomic.as_mut() else {
            return bottom("`atomOp` in a program for an operation that is not an atomic");
        };
        if self.txn.target == Target::Global {
            let (o, n) = (a.offset, a.size as usize);
            let old = crate::mem::load_le(&self.txn.data[o..o + n]);
            let new = gpusim_isa::semantics::atomic(a.op, a.ty, old, a.b, a.c);
            crate::mem::store_le(&mut self.txn.data[o..o + n], new);
            a.old = old;
        }
        Ok(())
    }

    fn lock(&mut self) -> MicroResult {
        if self.txn.target != Target::Shared || self.txn.atomic.is_none() {
            return Err(stuck("`lock` is defined for shared-memory atomics only"));
        }
        // The banks' locks are this operation's own, freed only when a step with its `unlock`
        // ends: it would wait for itself for ever (and every later atomic on those banks
        // behind it).
        if self.s.locked {
            return Err(stuck(
                "`lock` while the operation still holds its banks' locks (an `unlock` frees them at the end of its step): it would wait for itself for ever",
            ));
        }
        let banks = self.txn.banks;
        let free = &self.ctx.mem.bank_free;
        let until = (0..free.len())
            .filter(|b| banks >> b & 1 == 1)
            .map(|b| free[b])
            .max()
            .unwrap_or(0);
        if until == PENDING {
            // Another atomic holds one of the banks until its `unlock` step ends.
            return Err(Stop::Block(Wait::SmResources));
        }
        self.wait_until(until);
        self.set_banks(PENDING);
        self.s.locked = true;
        Ok(())
    }

    fn unlock(&mut self) -> Result<(), ProgramError> {
        if self.txn.target != Target::Shared || self.txn.atomic.is_none() {
            return bottom("`unlock` is defined for shared-memory atomics only");
        }
        self.s.step.unlock = true;
        Ok(())
    }

    fn set_banks(&mut self, at: u64) {
        self.ctx.mem.set_banks(self.txn.banks, at);
    }

    /// The formal model's stuck states at `end`: pins nobody will release.
    fn check_end(&self) -> Result<(), ProgramError> {
        if self.s.locked {
            return bottom("the program ended holding shared-memory bank locks");
        }
        if self.s.l1_reserved {
            return bottom("the program ended with its L1 line reserved but never updated");
        }
        if self.s.l2_reserved {
            return bottom("the program ended with its L2 line reserved but never updated");
        }
        Ok(())
    }
}

/// The formal `write` on one line: "same data ⇒ unchanged" (no dirty bit for a write that
/// changes nothing), else the bytes become valid and dirty. Without values only the masks move.
fn write_line(c: &mut Cache, i: usize, src: &[u8], m: Mask, values: bool) -> bool {
    let l = *c.line(i);
    if values {
        let same = l.valid & m == m && {
            let mut cur = [0u8; 128];
            let n = c.line_bytes() as usize;
            copy_masked(&mut cur[..n], c.data(i), m);
            let mut new = [0u8; 128];
            copy_masked(&mut new[..n], &src[..n], m);
            cur == new
        };
        if same {
            return false;
        }
        let n = c.line_bytes() as usize;
        copy_masked(c.data_mut(i), &src[..n], m);
    }
    let line = c.line_mut(i);
    line.valid |= m;
    line.dirty |= m;
    true
}

/// One DRAM access, counted; returns the cycles it adds to its step (queueing plus the
/// row-buffer adjustment).
fn dram_access(
    back: &mut Backend,
    addr: u64,
    bytes: u64,
    now: u64,
    write: bool,
    c: &mut MemCounters,
) -> i64 {
    use crate::mem::dram::RowOutcome;
    let dram = &mut back.dram;
    let d = dram.access(addr, bytes, now, write);
    back.channel_bytes[dram.locate(addr).0 as usize] += bytes;
    c.dram_bytes += bytes;
    if write {
        c.dram_write_bytes += bytes;
    }
    match d.row {
        RowOutcome::Hit => c.dram_row_hits += 1,
        RowOutcome::Miss => c.dram_row_misses += 1,
        RowOutcome::Conflict => c.dram_row_conflicts += 1,
    }
    (d.start - now) as i64 + dram.row_adjust(d.row)
}

/// The L1 way for `line`: present, free, or a victim made free (written back if dirty);
/// `Err(cycle)` when every way is in flight or the write-back cannot find room in L2.
// The timing mode joins the state a victim touches (no natural bundle of the rest).
#[allow(clippy::too_many_arguments)]
pub(super) fn l1_slot(
    back: &mut Backend,
    mem: &mut SmMemory,
    sm: u32,
    global: &mut GlobalMemory,
    line: u64,
    now: u64,
    c: &mut MemCounters,
    tm: &mut Timing,
) -> Result<usize, u64> {
    if let Some(i) = mem.l1.find(line) {
        return Ok(i);
    }
    let i = match mem.l1.slot_for(line, now) {
        Slot::Free(i) => i,
        Slot::Victim(i) => {
            if mem.l1.line(i).dirty != 0 {
                write_back_l1(back, mem, sm, global, i, now, c, tm)?;
            }
            c.l1_evictions += 1;
            i
        }
        Slot::Busy(at) => return Err(at),
    };
    mem.l1.install(i, line);
    Ok(i)
}

/// The way for `l2line` in slice `slice`, as `l1_slot`.
pub(super) fn l2_slot(
    back: &mut Backend,
    slice: usize,
    l2line: u64,
    global: &mut GlobalMemory,
    now: u64,
    c: &mut MemCounters,
    tm: &mut Timing,
) -> Result<usize, u64> {
    let s = &back.slices[slice];
    if let Some(i) = s.find(l2line) {
        return Ok(i);
    }
    let i = match s.slot_for(l2line, now) {
        Slot::Free(i) => i,
        Slot::Victim(i) => {
            if s.line(i).dirty != 0 {
                write_back_l2(back, slice, i, global, now, c, tm);
            }
            c.l2_evictions += 1;
            i
        }
        Slot::Busy(at) => return Err(at),
    };
    back.slices[slice].install(i, l2line);
    Ok(i)
}

/// The silent `wb_L1`: L1 line `i`'s dirty bytes are written into L2 (allocating there) and
/// the line becomes clean. Its traffic takes interconnect and slice bandwidth at `now`.
// The timing mode joins the state a victim touches (no natural bundle of the rest).
#[allow(clippy::too_many_arguments)]
pub(super) fn write_back_l1(
    back: &mut Backend,
    mem: &mut SmMemory,
    sm: u32,
    global: &mut GlobalMemory,
    i: usize,
    now: u64,
    c: &mut MemCounters,
    tm: &mut Timing,
) -> Result<(), u64> {
    let l = *mem.l1.line(i);
    let l1_bytes = mem.l1.line_bytes();
    let l2_bytes = back.l2_line as u64;
    let values = l.tag < LOCAL_TAG;
    let mut src = [0u8; 128];
    src[..l1_bytes as usize].copy_from_slice(mem.l1.data(i));
    // The L2 lines this L1 line spans (or the one that holds it).
    let (first, step) = if l2_bytes >= l1_bytes {
        (l.tag - l.tag % l2_bytes, l2_bytes)
    } else {
        (l.tag, l2_bytes)
    };
    let mut a = first;
    while a < l.tag + l1_bytes {
        let lo = a.max(l.tag);
        let hi = (a + step).min(l.tag + l1_bytes);
        let span = (hi - lo) as u32;
        let ones: Mask = if span >= 128 {
            Mask::MAX
        } else {
            (1 << span) - 1
        };
        let m = (l.dirty >> (lo - l.tag)) & ones;
        if m != 0 {
            let slice = back.slice_of(a);
            let j = l2_slot(back, slice, a, global, now, c, tm)?;
            let mut buf = [0u8; 128];
            let (src_off, dst_off) = ((lo - l.tag) as usize, (lo - a) as usize);
            buf[dst_off..dst_off + span as usize]
                .copy_from_slice(&src[src_off..src_off + span as usize]);
            write_line(&mut back.slices[slice], j, &buf, m << dst_off, values);
            let bytes = m.count_ones() as u64;
            if tm.components() {
                // The packet's bytes are counted by the link and the slice that carry it.
                tm.report(Traffic::L1WriteBack {
                    slice: slice as u32,
                    bytes: bytes as u32,
                });
            } else {
                let arrive = back.icnt.to_slice(sm, slice as u32, HEADER + bytes, now);
                back.slice_bw[slice].serve(arrive, bytes);
                back.slice_bytes[slice] += bytes;
                c.l2_bytes += bytes;
                c.icnt_bytes += HEADER + bytes;
            }
        }
        a += step;
    }
    mem.l1.line_mut(i).dirty = 0;
    c.l1_writebacks += 1;
    Ok(())
}

/// The silent `wb_L2`: the line's dirty bytes go to DRAM (values only for global lines) and it
/// becomes clean.
pub(super) fn write_back_l2(
    back: &mut Backend,
    slice: usize,
    i: usize,
    global: &mut GlobalMemory,
    now: u64,
    c: &mut MemCounters,
    tm: &mut Timing,
) {
    let l = *back.slices[slice].line(i);
    if l.tag < LOCAL_TAG {
        global.write_raw(l.tag, back.slices[slice].data(i), l.dirty);
    }
    let bytes = l.dirty.count_ones() as u64;
    if tm.components() {
        // The channel that serves the write counts its bytes and row outcome.
        tm.report(Traffic::L2WriteBack {
            addr: l.tag,
            bytes: bytes as u32,
        });
    } else {
        dram_access(back, l.tag, bytes, now, true, c);
    }
    c.dram_writes += 1;
    back.slices[slice].line_mut(i).dirty = 0;
    c.l2_writebacks += 1;
}

/// `data = data ⊕ operand` for each element of a line reduction under `bytes` (whole
/// elements: a bulk reduction's runs start and end on element boundaries).
fn reduce_line(r: &super::LineReduce, bytes: crate::mem::cache::Mask, data: &mut [u8; 128]) {
    let es = r.ty.size() as usize;
    for o in (0..128).step_by(es) {
        if bytes >> o & 1 == 0 {
            continue;
        }
        let old = crate::mem::load_le(&data[o..o + es]);
        let b = crate::mem::load_le(&r.operand[o..o + es]);
        let new = gpusim_isa::semantics::atomic(r.op, r.ty, old, b, 0);
        crate::mem::store_le(&mut data[o..o + es], new);
    }
}
