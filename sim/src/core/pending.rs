//! Memory instructions in flight: what a `ld`, `st`, `atom` or `red` that reached the memory
//! system still has to do when its operations complete — at home, on the SM.
//!
//! Execution (`exec::memory`) checks the lanes and builds the instruction's operations (one
//! per L1 line, one per lane of a global atomic) but does not write the destination registers:
//! it records, per lane and register, where the value will come from (`RegSrc`). The SM keeps
//! the record (`InFlight`) with the destination registers held by the scoreboard, and when the
//! last operation has completed writes the registers and releases them. Used under
//! `memory_engine: components`: the memory system (`mem::system`) runs the operations and
//! reports their completions; this module never decides when. (Under `issue` the programs run
//! at issue and write the registers then.)
//!
//! Invariants: an entry lives from issue to the completion of its last operation; the
//! register slots it writes are absolute (a call or return in between cannot redirect them);
//! the buffers of finished entries are reused, so steady state does not allocate.

use super::program::Program;
use super::tma_job::TmaJob;
use super::warp::Warp;
use crate::mem::hierarchy::{OpProgram, Txn};
use crate::mem::load_le;

/// Where one lane's register value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegSrc {
    /// A value known at issue (a lane in shared, constant, parameter or local memory, whose
    /// values stay functional), written if the instruction's programs wrote the registers.
    Value(u64),
    /// `size` bytes at offset `off` of operation `op`'s line, sign-extended from `sext` bits
    /// (0: none) and cut to `mask`; written if that operation's program wrote the registers.
    Line {
        op: u16,
        off: u8,
        size: u8,
        sext: u8,
        mask: u64,
    },
    /// The old value of atomic operation `op`.
    AtomOld { op: u16 },
    /// One element of a packed register (a `wmma.load` fragment): `size` bytes at offset
    /// `off` of operation `op`'s line, shifted up `shift` bits; the register's `first` part
    /// replaces it, the others are OR-ed in. Written if that operation's program wrote the
    /// registers.
    LinePart {
        op: u16,
        off: u8,
        size: u8,
        shift: u8,
        first: bool,
    },
}

/// One `cp.async` copy landing at completion: `n` bytes at offset `off` of operation `op`'s
/// line, zero-filled to `len` bytes, into shared address `dst`, in the warp's group `group`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyLand {
    pub op: u16,
    pub off: u8,
    pub n: u8,
    pub len: u8,
    pub dst: u64,
    pub group: u64,
}

/// One register write at completion: register slot `slot` (absolute, frame base included) of
/// lane `lane`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegWrite {
    pub slot: u32,
    pub lane: u16,
    pub src: RegSrc,
}

/// What execution leaves for the SM about a memory instruction whose operations are in flight
/// (scratch, reused instruction after instruction).
#[derive(Debug, Default)]
pub struct Issuing {
    /// Set by the instructions that defer their registers (`ld`, `st`, `atom`, `red`) while
    /// they execute: their device operations are collected here.
    pub collecting: bool,
    pub regs: Vec<RegWrite>,
    /// A `cp.async`'s copies, landed in shared memory at completion instead of registers.
    pub copies: Vec<CopyLand>,
    /// The instruction's operations on device memory and their programs, in the order they
    /// were built; `RegSrc` indexes them.
    pub ops: Vec<Txn>,
    pub progs: Vec<OpProgram>,
    /// Whether the non-device programs (shared, constant, parameter, local tags) wrote the
    /// registers (`RegSrc::Value` depends on it).
    pub values_written: bool,
    /// A bulk or tensor copy's jobs (one per issuing lane): its operations go to the TMA
    /// engine, and these complete it.
    pub jobs: Vec<TmaJob>,
    /// The instruction (a fence) fires the formal `flush` of the SM's L1, which the memory
    /// system runs after it issued (`MemorySystem::flush_l1`).
    pub flush: bool,
}

impl Issuing {
    /// Operation `txn` running program `prog` belongs to the instruction; its index.
    pub fn push_op(&mut self, prog: OpProgram, txn: Txn) -> u16 {
        self.ops.push(txn);
        self.progs.push(prog);
        (self.ops.len() - 1) as u16
    }

    /// Start collecting for a new instruction.
    pub fn start(&mut self) {
        self.collecting = true;
        self.regs.clear();
        self.copies.clear();
        self.ops.clear();
        self.progs.clear();
        self.jobs.clear();
        self.values_written = true;
    }
}

/// A memory instruction in flight.
#[derive(Debug, Default)]
pub struct Pending {
    /// The issuing warp's slot on the SM.
    pub slot: usize,
    /// Register slots (absolute) the scoreboard holds until completion.
    pub held: Vec<u32>,
    pub long: bool,
    pub regs: Vec<RegWrite>,
    pub copies: Vec<CopyLand>,
    pub ops: Vec<Txn>,
    pub progs: Vec<OpProgram>,
    pub values_written: bool,
    /// A TMA copy's jobs (empty: not a copy): its operations go to the SM's TMA engine.
    pub jobs: Vec<TmaJob>,
    /// Operations not completed yet.
    pub outstanding: u32,
    /// The latest release among completed operations.
    pub release: u64,
    /// Cycles the result comes after its programs (the ldst unit's extra passes).
    pub extra: u64,
    pub issued: u64,
    /// Whether its latency counts as a load's (`MemCounters::load_latency`).
    pub is_load: bool,
    /// Tells a live entry from a finished one whose id was reused.
    pub serial: u64,
    /// The instruction (function, pc) and its first executing lane, to locate a fault.
    pub origin: Origin,
}

/// Where an instruction in flight came from: function index, pc, first executing lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    pub func: u32,
    pub pc: u32,
    pub lane: u16,
}

impl Pending {
    /// An entry whose buffers hold a 32-lane instruction's writes and the operations of a
    /// coalesced access (one to four lines) without growing: the buffers circulate through
    /// `Issuing`, so a fresh one would be grown from empty by the next instruction issued.
    fn sized_for_a_warp() -> Pending {
        const LANES: usize = 32;
        Pending {
            held: Vec::with_capacity(4),
            regs: Vec::with_capacity(LANES),
            ops: Vec::with_capacity(4),
            progs: Vec::with_capacity(4),
            ..Pending::default()
        }
    }

    /// The value lane write `w` receives, or None if its program did not write the registers.
    pub fn value(&self, w: &RegWrite) -> Option<u64> {
        match w.src {
            RegSrc::Value(v) => self.values_written.then_some(v),
            RegSrc::Line {
                op,
                off,
                size,
                sext,
                mask,
            } => {
                let t = &self.ops[op as usize];
                if !t.wrote_regs {
                    return None;
                }
                let (o, n) = (off as usize, size as usize);
                let v = load_le(&t.data[o..o + n]);
                Some(if sext > 0 {
                    crate::core::exec::sign_extend(v, sext as u32) & mask
                } else {
                    v
                })
            }
            RegSrc::AtomOld { op } => {
                let t = &self.ops[op as usize];
                t.wrote_regs.then(|| t.atomic.map_or(0, |a| a.old))
            }
            RegSrc::LinePart {
                op,
                off,
                size,
                shift,
                ..
            } => {
                let t = &self.ops[op as usize];
                let (o, n) = (off as usize, size as usize);
                t.wrote_regs.then(|| load_le(&t.data[o..o + n]) << shift)
            }
        }
    }
}

/// The SM's memory instructions in flight, by handle.
#[derive(Debug, Default)]
pub struct InFlight {
    entries: slab::Slab<Pending>,
    /// Buffers of finished entries, for reuse.
    spare: Vec<Pending>,
}

/// The handle of operation `op` of entry `entry` (whose serial is `serial`), as the memory
/// system echoes it: a completion for an entry that was forgotten is recognised by its serial.
pub fn tag(entry: usize, serial: u64, op: usize) -> u64 {
    ((entry as u64) << 48) | ((serial & 0xFFFF_FFFF) << 16) | op as u64
}

/// (entry, serial's low 32 bits, op) of a handle.
pub fn untag(tag: u64) -> (usize, u64, usize) {
    (
        (tag >> 48) as usize,
        (tag >> 16) & 0xFFFF_FFFF,
        (tag & 0xFFFF) as usize,
    )
}

impl InFlight {
    /// A fresh entry (buffers reused), not yet inserted.
    pub fn blank(&mut self) -> Pending {
        let mut p = self.spare.pop().unwrap_or_else(Pending::sized_for_a_warp);
        p.held.clear();
        p.regs.clear();
        p.copies.clear();
        p.ops.clear();
        p.progs.clear();
        p.jobs.clear();
        p
    }

    pub fn insert(&mut self, p: Pending) -> usize {
        self.entries.insert(p)
    }

    pub fn get(&self, entry: usize) -> Option<&Pending> {
        self.entries.get(entry)
    }

    pub fn get_mut(&mut self, entry: usize) -> Option<&mut Pending> {
        self.entries.get_mut(entry)
    }

    /// Remove a finished entry, keeping its buffers.
    pub fn finish(&mut self, entry: usize) -> Pending {
        self.entries.remove(entry)
    }

    pub fn recycle(&mut self, p: Pending) {
        self.spare.push(p);
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries of warp `slot` still in flight.
    pub fn of_warp(&self, slot: usize) -> usize {
        self.entries.iter().filter(|(_, p)| p.slot == slot).count()
    }

    /// Drop every entry of warp `slot` (its CTA retired or faulted).
    pub fn forget_warp(&mut self, slot: usize) {
        self.entries.retain(|_, p| p.slot != slot);
    }
}

/// The register-side bookkeeping of an SM's memory instructions in flight.
#[derive(Debug, Default)]
pub struct PendingMemory {
    /// Scratch filled by the instruction executing now.
    pub issuing: Issuing,
    inflight: InFlight,
    serial: u64,
    /// Entries held since the operations were last handed to the memory system.
    to_submit: Vec<usize>,
}

/// Where an operation enters the memory system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// The SM's L1 request queue (`MemorySystem::submit`).
    L1,
    /// The SM's TMA engine, as a line request (`MemorySystem::submit_tma`).
    Tma,
    /// The SM's TMA engine, for this many bytes of engine time only.
    TmaEngine(u64),
}

/// `PendingMemory::complete`'s report.
#[derive(Clone, Copy, Debug)]
pub struct Completed {
    pub latency: Option<u64>,
    pub changed: bool,
    pub copy_of: Option<usize>,
    /// The operation was its instruction's last: registers, copies or landings changed.
    pub finished: bool,
    /// The warp slot whose registers, copies or landings it changed (when `finished`).
    pub warp: Option<usize>,
}

/// A destination whose value the memory system has not delivered yet.
const IN_FLIGHT: u64 = u64::MAX;

impl PendingMemory {
    /// Drop the entries of warp `slot` (its CTA retired: nothing will read its registers).
    pub fn forget_warp(&mut self, slot: usize) {
        self.inflight.forget_warp(slot);
    }

    /// Hold the issuing instruction's destinations `writes` until the memory system has
    /// completed every one of its operations (their times are not known yet); `release` is
    /// when its other programs (shared, constant, parameter lanes) released them, `extra` the
    /// cycles its extra passes through the unit add. The operations wait in the entry for
    /// `take_submissions`.
    #[allow(clippy::too_many_arguments)]
    pub fn hold_in_flight(
        &mut self,
        w: &mut Warp,
        writes: &[u32],
        (slot, origin): (usize, Origin),
        long: bool,
        issued: u64,
        release: u64,
        extra: u64,
        is_load: bool,
    ) {
        let mut p = self.inflight.blank();
        p.slot = slot;
        p.origin = origin;
        let base = w.frame().reg_base;
        p.held.extend(writes.iter().map(|r| base + r));
        p.long = long;
        std::mem::swap(&mut p.regs, &mut self.issuing.regs);
        std::mem::swap(&mut p.copies, &mut self.issuing.copies);
        if let Some(c) = p.copies.first() {
            w.async_in_flight.push(c.group);
        }
        std::mem::swap(&mut p.ops, &mut self.issuing.ops);
        std::mem::swap(&mut p.progs, &mut self.issuing.progs);
        std::mem::swap(&mut p.jobs, &mut self.issuing.jobs);
        for j in &p.jobs {
            j.issued(w);
        }
        p.values_written = self.issuing.values_written;
        p.outstanding = p.ops.len() as u32;
        p.release = release;
        p.extra = extra;
        p.issued = issued;
        p.is_load = is_load;
        self.serial += 1;
        p.serial = self.serial;
        w.set_ready(writes, IN_FLIGHT, long);
        // A copy is asynchronous: fences do not wait for it (its bulk group or mbarrier does).
        if p.jobs.is_empty() {
            w.mem_in_flight += 1;
        }
        let e = self.inflight.insert(p);
        self.to_submit.push(e);
    }

    /// The operations of the instructions held since the last call, each with its handle and
    /// its way in, in issue order (`f(tag, program, operation, route)`).
    pub fn take_submissions(&mut self, mut f: impl FnMut(u64, OpProgram, &Txn, Route)) {
        for e in self.to_submit.drain(..) {
            let Some(p) = self.inflight.get_mut(e) else {
                continue;
            };
            for (k, (txn, prog)) in p.ops.iter().zip(&p.progs).enumerate() {
                let route = if p.jobs.is_empty() {
                    Route::L1
                } else {
                    match p.jobs.iter().find_map(|j| j.engine_bytes(k)) {
                        Some(bytes) => Route::TmaEngine(bytes),
                        None => Route::Tma,
                    }
                };
                f(tag(e, p.serial, k), *prog, txn, route);
            }
        }
    }

    /// The warp slot and bulk group of the store (or reduction) copy operation `tag` belongs
    /// to, if it is one and still in flight.
    pub fn store_group(&self, tag_: u64) -> Option<(usize, u64)> {
        let (e, serial, _) = untag(tag_);
        let p = self
            .inflight
            .get(e)
            .filter(|p| p.serial & 0xFFFF_FFFF == serial)?;
        p.jobs.iter().find_map(|j| match j {
            TmaJob::Store { group } => Some((p.slot, *group)),
            _ => None,
        })
    }

    /// The warp slot, origin and issue cycle of the instruction operation `tag` belongs to,
    /// if it is still in flight (the timeline's memory slices).
    pub fn started(&self, tag_: u64) -> Option<(usize, Origin, u64)> {
        let (e, serial, _) = untag(tag_);
        self.inflight
            .get(e)
            .filter(|p| p.serial & 0xFFFF_FFFF == serial)
            .map(|p| (p.slot, p.origin, p.issued))
    }

    /// The warp slot and origin of the instruction operation `tag` belongs to, if it is still
    /// in flight.
    pub fn origin(&mut self, tag_: u64) -> Option<(usize, Origin)> {
        let (e, serial, _) = untag(tag_);
        self.inflight
            .get_mut(e)
            .filter(|p| p.serial & 0xFFFF_FFFF == serial)
            .map(|p| (p.slot, p.origin))
    }

    /// Operation `tag` completed, reaching the SM at `at`, as `txn`. When it was its
    /// instruction's last, the registers are written and released (a copy's bytes queued to
    /// land, its group completed); returns the instruction's latency if it was a load
    /// (`MemCounters::load_latency`), whether the operation changed memory (progress, for
    /// livelock detection) and the warp slot of a copy that finished (its landings are in
    /// the warp's outboxes).
    pub fn complete(
        &mut self,
        tag_: u64,
        txn: Txn,
        at: u64,
        warps: &mut [Option<Warp>],
        prog: &Program,
    ) -> Completed {
        let (e, serial, k) = untag(tag_);
        let mut done = Completed {
            latency: None,
            changed: txn.changed,
            copy_of: None,
            finished: false,
            warp: None,
        };
        let Some(p) = self
            .inflight
            .get_mut(e)
            .filter(|p| p.serial & 0xFFFF_FFFF == serial && k < p.ops.len())
        else {
            return done;
        };
        if txn.target == crate::mem::hierarchy::Target::Local {
            p.values_written &= txn.wrote_regs;
        }
        p.ops[k] = txn;
        p.release = p.release.max(at);
        p.outstanding -= 1;
        if p.outstanding > 0 {
            return done;
        }
        let p = self.inflight.finish(e);
        done.finished = true;
        done.warp = Some(p.slot);
        let ready = (p.release + p.extra).max(p.issued + 1);
        if let Some(w) = warps[p.slot].as_mut() {
            write_back(w, &p, ready, prog);
            land_copies(w, &p, ready);
            if p.jobs.is_empty() {
                w.mem_in_flight -= 1;
            } else {
                for j in &p.jobs {
                    j.finish(w, &p.ops, ready);
                }
                done.copy_of = Some(p.slot);
            }
        }
        done.latency = p.is_load.then(|| p.release + p.extra - p.issued);
        self.inflight.recycle(p);
        done
    }
}

/// The completed `cp.async` `p`'s copies join the warp's, to land in shared memory at `at`
/// (`Sm::land_async_copies`); a copy whose program delivered no value lands nothing, as a load
/// then leaves its register.
fn land_copies(w: &mut Warp, p: &Pending, at: u64) {
    let Some(first) = p.copies.first() else {
        return;
    };
    if let Some(i) = w.async_in_flight.iter().position(|&g| g == first.group) {
        w.async_in_flight.swap_remove(i);
    }
    for c in &p.copies {
        let t = &p.ops[c.op as usize];
        if c.n > 0 && !t.wrote_regs {
            continue;
        }
        let mut data = [0u8; 16];
        let (o, n) = (c.off as usize, c.n as usize);
        data[..n].copy_from_slice(&t.data[o..o + n]);
        w.async_copies.push(super::warp::AsyncCopy {
            ready: at,
            group: c.group,
            addr: c.dst,
            len: c.len,
            data,
        });
    }
}

/// The completed instruction `p`'s registers, readable from cycle `at`.
fn write_back(w: &mut Warp, p: &Pending, at: u64, prog: &Program) {
    let ws = w.warp_size as usize;
    for rw in &p.regs {
        if let Some(v) = p.value(rw) {
            let r = &mut w.regs[rw.slot as usize * ws + rw.lane as usize];
            *r = match rw.src {
                RegSrc::LinePart { first: false, .. } => *r | v,
                _ => v,
            };
        }
    }
    for &s in &p.held {
        w.ready[s as usize] = at;
        w.ready_long[s as usize] = p.long;
    }
    w.refresh_ready(prog);
}
