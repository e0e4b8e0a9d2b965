//! Memory instructions: ld, st, atom/red, with the generic-address windows, bounds and
//! alignment faults, and per-lane local memory. Every access runs its memory program
//! (`mem::hierarchy`): global values travel through the caches (so an SM may read a stale L1
//! copy, as the formal model allows), local, shared, constant and parameter values stay
//! functional while their programs give the timing. Each lane's access is also recorded for
//! the coalescer's statistics (`MemSummary`).
//!
//! An instruction runs in three phases so that a fault leaves no effect behind: addresses and
//! checks for every lane, then the programs (one per line of the request, one per lane for
//! atomics), then the registers.

use super::*;
use crate::core::pending::{RegSrc, RegWrite};
use crate::mem::cache::Mask as ByteMask;
use crate::mem::coalesce::LaneAccess;
use crate::mem::hierarchy::{self as hier, AtomicArgs, Done, OpProgram, Target, Txn};

/// The config key of the per-thread local-memory limit, named in the faults it causes (a
/// limit of the machine, not of the semantics: `gpusim check` tells them apart by it).
pub const LOCAL_LIMIT_KEY: &str = "sm.local_bytes_per_thread";

/// What selects an access's program besides its (per-lane, resolved) space.
#[derive(Clone, Copy)]
pub(super) struct Prog {
    pub(super) kind: &'static str,
    pub(super) cop: Option<CacheOp>,
    pub(super) volatile: bool,
}

impl Prog {
    pub(super) fn id(self, space: Space) -> OpProgram {
        hier::program_id(hier::program_name(
            self.kind,
            space,
            self.cop,
            self.volatile,
        ))
    }
}

/// A load or store as `exec_memory_lanes` decoded it: the instruction, its executing lanes,
/// the space it names, its element type, what selects its program, and its address.
struct LdSt<'i> {
    inst: &'i Inst,
    exec: Mask,
    space: Space,
    ty: Type,
    prog: Prog,
    addr: &'i Address,
}

/// The instruction's timing so far: the latest release and end of its programs.
pub(super) struct Timing {
    pub(super) release: u64,
    pub(super) end: u64,
}

impl Timing {
    pub(super) fn add(&mut self, d: Done) {
        self.release = self.release.max(d.release);
        self.end = self.end.max(d.end);
    }
}

impl<'a> ExecEnv<'a> {
    /// `ld`, `st`, `atom`, `red`. With the component memory system (`MemPort::submit`),
    /// operations on device memory are collected in `MemPort::issuing` for it and their
    /// register writes deferred to their completion (`core::pending`); else their programs
    /// run here, at issue. Shared, constant and parameter accesses complete here.
    pub(super) fn exec_memory(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<Option<MemSummary>, Fault> {
        self.collected(|env| env.exec_memory_lanes(w, inst, exec))
    }

    /// Run `f`, an instruction's execution, with its device operations collected for the
    /// component memory system when it runs them (`MemPort::submit`; `core::pending`).
    pub(super) fn collected<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, Fault>,
    ) -> Result<T, Fault> {
        if !self.mem.submit {
            return f(self);
        }
        self.mem.issuing.start();
        let r = f(self);
        self.mem.issuing.collecting = false;
        r
    }

    fn exec_memory_lanes(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<Option<MemSummary>, Fault> {
        w.mem_accesses.clear();
        w.mem_global.clear();
        w.mem_lanes.clear();
        let mut first_space = None;
        let mut t = Timing {
            release: self.cycle,
            end: self.cycle,
        };
        if self.peer_access(w, inst, exec) {
            self.exec_dsmem(w, inst, exec)?;
            return Ok(None);
        }
        match &inst.op {
            Op::Ld {
                space,
                cop,
                volatile,
                ty,
                d,
                addr,
            } => {
                let op = LdSt {
                    inst,
                    exec,
                    space: *space,
                    ty: *ty,
                    prog: Prog {
                        kind: "ld",
                        cop: *cop,
                        volatile: *volatile,
                    },
                    addr,
                };
                self.exec_ld(w, &op, d, &mut first_space, &mut t)?
            }
            Op::St {
                space,
                cop,
                volatile,
                ty,
                addr,
                src,
            } => {
                let op = LdSt {
                    inst,
                    exec,
                    space: *space,
                    ty: *ty,
                    prog: Prog {
                        kind: "st",
                        cop: *cop,
                        volatile: *volatile,
                    },
                    addr,
                };
                self.exec_st(w, &op, src, &mut first_space, &mut t)?
            }
            Op::Atom { .. } => self.exec_atom(w, inst, exec, &mut first_space, &mut t)?,
            _ => unreachable!("`execute` dispatches only memory instructions here"),
        }
        Ok(first_space.map(|space| self.summarise(w, space, t.release, t.end)))
    }

    fn exec_ld(
        &mut self,
        w: &mut Warp,
        op: &LdSt,
        d: &RegVec,
        first_space: &mut Option<Space>,
        t: &mut Timing,
    ) -> Result<(), Fault> {
        let (inst, exec, ty, prog) = (op.inst, op.exec, op.ty, op.prog);
        let (space, addr) = (op.space, op.addr);
        let size = ty.size();
        let bytes = size * d.len as u32;
        if self.exec_ld_uniform(w, op, d, first_space, t)? {
            return Ok(());
        }
        self.resolve_lanes(w, inst, exec, (space, addr, bytes), "load", first_space)?;
        let wrote = self.run_programs(w, inst, prog, *first_space, t, |_, _| {})?;
        // Operations on device memory in flight: the registers are written at completion.
        let defer = self.mem.issuing.collecting && !self.mem.issuing.ops.is_empty();
        let f = self.prog.module.function(w.func());
        let lb = self.mem.sm.l1.line_bytes();
        for k in 0..w.mem_lanes.len() {
            let (l, sp, base, _) = w.mem_lanes[k];
            let l = l as usize;
            for (i, r) in d.as_slice().iter().enumerate() {
                let at = Access {
                    lane: l,
                    space: sp,
                    addr: base + (i as u64) * size as u64,
                    size,
                };
                if is_global(sp) && defer {
                    let rty = f.regs[r.0 as usize].ty;
                    let sext = sign_extends(ty, rty);
                    let line = at.addr - at.addr % lb;
                    let Ok(op) = w.mem_txns.binary_search_by_key(&line, |x| x.line) else {
                        continue;
                    };
                    let src = RegSrc::Line {
                        op: op as u16,
                        off: (at.addr - line) as u8,
                        size: size as u8,
                        sext: if sext { ty.bits() as u8 } else { 0 },
                        mask: rty.mask(),
                    };
                    self.defer_write(w, r.0, l, src);
                    continue;
                }
                let v = if is_global(sp) {
                    match global_value(w, at, lb) {
                        Some(v) => v,
                        None => continue,
                    }
                } else if wrote {
                    self.load(w, inst, at)?
                } else {
                    continue;
                };
                let v = widen(v, ty, f.regs[r.0 as usize].ty);
                if defer {
                    self.defer_write(w, r.0, l, RegSrc::Value(v));
                } else {
                    w.write(r.0, l, v);
                }
            }
        }
        Ok(())
    }

    /// A load every lane makes from one address of memory the lanes share — a kernel
    /// parameter or a constant named by a symbol (`ld.param.u64 %rd1, [p]`, most kernels'
    /// first instructions) — resolved, checked, timed and read once and written to every
    /// executing lane: the same registers, faults, program and coalescer summary (one sector)
    /// as lane by lane, without 32 copies of the work. False when the load is not of that kind
    /// (nothing done then).
    fn exec_ld_uniform(
        &mut self,
        w: &mut Warp,
        op: &LdSt,
        d: &RegVec,
        first_space: &mut Option<Space>,
        t: &mut Timing,
    ) -> Result<bool, Fault> {
        let (inst, exec, space, ty) = (op.inst, op.exec, op.space, op.ty);
        let (prog, addr) = (op.prog, op.addr);
        let shared_space = matches!(space, Space::Param | Space::Const);
        if !shared_space || matches!(addr.base, AddrBase::Reg(_)) || exec == 0 {
            return Ok(false);
        }
        let size = ty.size();
        let bytes = size * d.len as u32;
        let l0 = exec.trailing_zeros() as usize;
        let (sp, base) = self.vector_base(w, inst, l0, space, addr, bytes, "load")?;
        // A `.param` symbol of a device function is per-thread (local) memory.
        if !matches!(sp, Space::Param | Space::Const) {
            return Ok(false);
        }
        let at = Access {
            lane: l0,
            space: sp,
            addr: base,
            size: bytes,
        };
        self.check(w, inst, at, "load")?;
        self.record(w, first_space, l0, sp, base, bytes);
        w.mem_lanes.push((l0 as u32, sp, base, bytes));
        if !self.run_programs(w, inst, prog, *first_space, t, |_, _| {})? {
            return Ok(true);
        }
        let defer = self.mem.issuing.collecting && !self.mem.issuing.ops.is_empty();
        let f = self.prog.module.function(w.func());
        for (i, r) in d.as_slice().iter().enumerate() {
            let at = Access {
                lane: l0,
                space: sp,
                addr: base + (i as u64) * size as u64,
                size,
            };
            let v = widen(self.load(w, inst, at)?, ty, f.regs[r.0 as usize].ty);
            for l in lanes(exec) {
                if defer {
                    self.defer_write(w, r.0, l, RegSrc::Value(v));
                } else {
                    w.write(r.0, l, v);
                }
            }
        }
        Ok(true)
    }

    fn exec_st(
        &mut self,
        w: &mut Warp,
        op: &LdSt,
        src: &OpVec,
        first_space: &mut Option<Space>,
        t: &mut Timing,
    ) -> Result<(), Fault> {
        let (inst, ty, prog) = (op.inst, op.ty, op.prog);
        let (exec, space, addr) = (op.exec, op.space, op.addr);
        let size = ty.size();
        let bytes = size * src.len as u32;
        self.resolve_lanes(w, inst, exec, (space, addr, bytes), "store", first_space)?;
        // Non-global values are stored now; global ones go into their lines' operations, lane
        // by lane (when lanes store to one address, the highest lane's value stays: one of
        // the orders PTX allows).
        for k in 0..w.mem_lanes.len() {
            let (l, sp, base, _) = w.mem_lanes[k];
            for (i, s) in src.as_slice().iter().enumerate() {
                let v = self.val(w, s, l as usize) & mask_bytes(size);
                let at = Access {
                    lane: l as usize,
                    space: sp,
                    addr: base + (i as u64) * size as u64,
                    size,
                };
                if is_global(sp) {
                    w.mem_values.push((at.addr, size, v));
                } else {
                    self.store(w, inst, at, v)?;
                }
            }
        }
        let values = std::mem::take(&mut w.mem_values);
        self.run_programs(w, inst, prog, *first_space, t, |txns, lb| {
            for &(a, size, v) in &values {
                let line = a - a % lb;
                if let Ok(j) = txns.binary_search_by_key(&line, |x| x.line) {
                    let o = (a - line) as usize;
                    store_le(&mut txns[j].data[o..o + size as usize], v);
                }
            }
        })?;
        w.mem_values = values;
        w.mem_values.clear();
        Ok(())
    }

    /// Phase 1 of a load or store: each executing lane's space and address (aligned to the
    /// whole vector of `bytes`), checked before anything happens, recorded for the coalescer
    /// and kept in `w.mem_lanes`.
    fn resolve_lanes(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
        (space, addr, bytes): (Space, &Address, u32),
        what: &str,
        first_space: &mut Option<Space>,
    ) -> Result<(), Fault> {
        for l in lanes(exec) {
            let (sp, base) = self.vector_base(w, inst, l, space, addr, bytes, what)?;
            let at = Access {
                lane: l,
                space: sp,
                addr: base,
                size: bytes,
            };
            self.check(w, inst, at, what)?;
            self.record(w, first_space, l, sp, base, bytes);
            w.mem_lanes.push((l as u32, sp, base, bytes));
        }
        Ok(())
    }

    /// Lanes of one warp are serialised in lane order: a valid refinement of the formal model,
    /// which allows any order (§2.7). Global lanes run `atom.global` / `red.global` one each;
    /// shared lanes are applied here and timed by `atom.shared` with their bank locks.
    fn exec_atom(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
        first_space: &mut Option<Space>,
        t: &mut Timing,
    ) -> Result<(), Fault> {
        let Op::Atom {
            space,
            op,
            ty,
            d,
            addr,
            b,
            c,
        } = &inst.op
        else {
            unreachable!("exec_atom runs atom and red")
        };
        let size = ty.size();
        let kind = if d.is_some() { "atom" } else { "red" };
        for l in lanes(exec) {
            let (sp, a) = self.effective(w, *space, addr, l);
            if !matches!(sp, Space::Global | Space::Generic | Space::Shared) {
                return Err(self.fault(
                    w,
                    inst,
                    l,
                    FaultKind::OutOfBounds,
                    format!("atomic on {} space at {a:#x}", sp.name()),
                ));
            }
            let at = Access {
                lane: l,
                space: sp,
                addr: a,
                size,
            };
            self.check(w, inst, at, "load")?;
            self.record(w, first_space, l, sp, a, size);
            w.mem_lanes.push((l as u32, sp, a, size));
        }
        // A global lane's old value comes with its operation's completion.
        let defer = self.mem.submit && w.mem_lanes.iter().any(|x| is_global(x.1));
        for k in 0..w.mem_lanes.len() {
            let (l, sp, a, _) = w.mem_lanes[k];
            let l = l as usize;
            let (bv, cv) = (
                self.val(w, b, l),
                c.map(|c| self.val(w, &c, l)).unwrap_or(0),
            );
            let prog = hier::program_id(hier::program_name(kind, sp, None, false));
            let at = Access {
                lane: l,
                space: sp,
                addr: a,
                size,
            };
            let (old, wrote) = if is_global(sp) {
                let lb = self.mem.sm.l1.line_bytes();
                let line = a - a % lb;
                let mut txn = Txn::new(Target::Global, line, bytes_mask(a - line, size));
                txn.atomic = Some(AtomicArgs {
                    offset: (a - line) as usize,
                    size,
                    op: *op,
                    ty: *ty,
                    b: bv,
                    c: cv,
                    old: 0,
                });
                if self.mem.submit {
                    let op = self.mem.issuing.push_op(prog, txn);
                    if let Some(d) = d {
                        self.defer_write(w, d.0, l, RegSrc::AtomOld { op });
                    }
                    continue;
                }
                t.add(self.run_txn(w, inst, prog, &mut txn, l)?);
                let old = txn.atomic.map_or(0, |x| x.old);
                let new = load_le(&txn.data[(a - line) as usize..][..size as usize]);
                if new != old {
                    *self.epoch += 1;
                }
                (old, txn.wrote_regs)
            } else {
                let old = self.load(w, inst, at)?;
                let new = sem::atomic(*op, *ty, old, bv, cv);
                self.store(w, inst, at, new & mask_bytes(size))?;
                let mut txn = Txn::new(Target::Shared, a, 0);
                txn.banks = self.bank_mask(a, size);
                txn.atomic = Some(AtomicArgs {
                    offset: 0,
                    size,
                    op: *op,
                    ty: *ty,
                    b: bv,
                    c: cv,
                    old,
                });
                t.add(self.run_txn(w, inst, prog, &mut txn, l)?);
                (old, txn.wrote_regs)
            };
            match (d, wrote) {
                (Some(d), true) if defer => self.defer_write(w, d.0, l, RegSrc::Value(old)),
                (Some(d), true) => w.write(d.0, l, old),
                _ => {}
            }
        }
        Ok(())
    }

    /// The shared-memory banks `size` bytes at `addr` occupy.
    fn bank_mask(&self, addr: u64, size: u32) -> ByteMask {
        let g = &self.coalescer;
        let (bb, banks) = (g.bank_bytes.max(1) as u64, g.banks.max(1) as u64);
        let mut m = 0;
        let mut a = addr - addr % bb;
        while a < addr + size as u64 {
            m |= 1 << ((a / bb) % banks).min(127);
            a += bb;
        }
        m
    }

    /// Run the instruction's program: one operation per line for global lanes (values through
    /// the caches; `fill` writes store data into the operations, given the line size) and for
    /// local lanes when the instruction is local (tags), else one operation for the timing of
    /// shared, constant and parameter accesses. Returns whether the non-global programs wrote
    /// the registers (`writeToRegs`).
    pub(super) fn run_programs(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        prog: Prog,
        first: Option<Space>,
        t: &mut Timing,
        fill: impl FnOnce(&mut [Txn], u64),
    ) -> Result<bool, Fault> {
        let lb = self.mem.sm.l1.line_bytes();
        let mut global = std::mem::take(&mut w.mem_global);
        global.clear();
        for &(lane, sp, addr, size) in &w.mem_lanes {
            if is_global(sp) {
                global.push(LaneAccess { lane, addr, size });
            }
        }
        let mut lines = std::mem::take(&mut w.mem_lines);
        crate::mem::coalesce::line_masks(&global, lb as u32, &mut lines);
        w.mem_global = global;
        let mut txns = std::mem::take(&mut w.mem_txns);
        txns.clear();
        txns.extend(
            lines
                .iter()
                .map(|&(line, m)| Txn::new(Target::Global, line, m)),
        );
        fill(&mut txns, lb);
        let mut wrote = true;
        let lane0 = w.mem_lanes.first().map_or(0, |x| x.0 as usize);
        let global_prog = prog.id(Space::Global);
        let submit = self.mem.submit && self.mem.issuing.collecting;
        for txn in txns.iter_mut() {
            if submit {
                // The memory system runs it (`mem::system`); it completes at home.
                self.mem.issuing.push_op(global_prog, txn.clone());
                continue;
            }
            t.add(self.run_txn(w, inst, global_prog, txn, lane0)?);
            if txn.changed {
                *self.epoch += 1;
            }
        }
        match first {
            Some(Space::Local) => {
                let warp = self.sm_id as u64 * self.max_warps as u64 + self.hw_warp as u64;
                crate::mem::coalesce::line_masks(&w.mem_accesses, lb as u32, &mut lines);
                for &(line, m) in &lines {
                    let mut txn = Txn::new(Target::Local, hier::local_tag(warp, line), m);
                    if submit {
                        self.mem.issuing.push_op(prog.id(Space::Local), txn);
                        continue;
                    }
                    t.add(self.run_txn(w, inst, prog.id(Space::Local), &mut txn, lane0)?);
                    wrote &= txn.wrote_regs;
                }
            }
            Some(sp @ (Space::Shared | Space::Const | Space::Param)) => {
                let target = match sp {
                    Space::Shared => Target::Shared,
                    Space::Const => Target::Const,
                    _ => Target::Param,
                };
                let mut txn = Txn::new(target, 0, 0);
                t.add(self.run_txn(w, inst, prog.id(sp), &mut txn, lane0)?);
                wrote = txn.wrote_regs;
            }
            _ => {}
        }
        w.mem_lines = lines;
        w.mem_txns = txns;
        Ok(wrote)
    }

    /// Lane `lane`'s register `reg` (of the current frame) receives `src` when the
    /// instruction's operations complete.
    pub(super) fn defer_write(&mut self, w: &Warp, reg: u32, lane: usize, src: RegSrc) {
        self.mem.issuing.regs.push(RegWrite {
            slot: w.slot(reg) as u32,
            lane: lane as u16,
            src,
        });
    }

    /// Run one operation's program from this cycle; a program the formal model would leave
    /// stuck is a fault naming it.
    pub(super) fn run_txn(
        &mut self,
        w: &Warp,
        inst: &Inst,
        prog: OpProgram,
        txn: &mut Txn,
        lane: usize,
    ) -> Result<Done, Fault> {
        let mut ctx = hier::Ctx {
            sm: self.sm_id,
            mem: &mut *self.mem.sm,
            back: self.mem.back.as_deref_mut(),
            global: self.global.as_deref_mut(),
            costs: self.mem.costs,
            counters: &mut *self.mem.counters,
        };
        hier::run(self.mem.programs.get(prog), txn, &mut ctx, self.cycle).map_err(|e| {
            let name = prog.name();
            self.fault(
                w,
                inst,
                lane,
                FaultKind::MemoryProgram,
                format!(
                    "memory program `{name}` (config key memory_programs.{}) on the line at {:#x}: {e}",
                    name.replace('.', "_"),
                    txn.line
                ),
            )
        })
    }

    /// Bounds (and, for non-global spaces, the rest of) the checks a load or store of `at`
    /// makes, before any effect. Global bytes must lie in one allocation.
    pub(super) fn check(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        at: Access,
        what: &str,
    ) -> Result<(), Fault> {
        let (addr, n) = (at.addr, at.size as u64);
        let ok = match at.space {
            Space::Global | Space::Generic => self.global().bytes(addr, n).is_some(),
            Space::Shared => (addr + n) as usize <= self.shared.len(),
            Space::Const => (addr + n) as usize <= self.consts.len(),
            Space::Param => (addr + n) as usize <= self.params.len(),
            Space::Local => self.local_slot(w, at).is_some(),
        };
        if ok {
            Ok(())
        } else {
            Err(self.access_fault(w, inst, at, FaultKind::OutOfBounds, what))
        }
    }

    /// Record lane `lane`'s access for the coalescer if it is in the instruction's space (that
    /// of its first lane). Local addresses are interleaved across lanes as hardware lays them
    /// out (`coalesce::local_interleave`).
    pub(super) fn record(
        &self,
        w: &mut Warp,
        first: &mut Option<Space>,
        lane: usize,
        space: Space,
        addr: u64,
        size: u32,
    ) {
        if *first.get_or_insert(space) != space {
            return;
        }
        let addr = match space {
            Space::Local => mem::coalesce::local_interleave(addr, lane as u32, w.warp_size),
            _ => addr,
        };
        w.mem_accesses.push(mem::coalesce::LaneAccess {
            lane: lane as u32,
            addr,
            size,
        });
    }

    /// The coalescer's summary of the accesses recorded for this instruction.
    pub(super) fn summarise(
        &self,
        w: &mut Warp,
        space: Space,
        release: u64,
        end: u64,
    ) -> MemSummary {
        let g = &self.coalescer;
        let (acc, keys) = (&w.mem_accesses, &mut w.mem_keys);
        if space == Space::Shared {
            let degree = mem::coalesce::conflict_degree(acc, g, keys);
            MemSummary {
                space,
                sectors: 0,
                lines: 0,
                conflict_degree: degree,
                wavefronts: mem::coalesce::shared_wavefronts(acc, g, degree, keys),
                release,
                end,
            }
        } else {
            let t = mem::coalesce::sectors(acc, g, keys);
            MemSummary {
                space,
                sectors: t.sectors,
                lines: t.lines,
                conflict_degree: 1,
                wavefronts: 1,
                release,
                end,
            }
        }
    }

    /// The fault for a misaligned or out-of-bounds access `at` (`what` is "load" or "store").
    fn access_fault(
        &self,
        w: &Warp,
        inst: &Inst,
        at: Access,
        kind: FaultKind,
        what: &str,
    ) -> Fault {
        let Access {
            lane,
            space,
            addr,
            size,
        } = at;
        let msg = match kind {
            FaultKind::Misaligned => format!(
                "misaligned {size}-byte {} {what} at address {addr:#x}",
                space.name()
            ),
            _ if space == Space::Local => format!(
                "out-of-bounds {size}-byte local {what} at address {addr:#x}: beyond the machine's {LOCAL_LIMIT_KEY} = {}",
                self.local_limit
            ),
            _ => format!(
                "out-of-bounds {size}-byte {} {what} at address {addr:#x}{}",
                space.name(),
                self.nearest(space, addr)
            ),
        };
        self.fault(w, inst, lane, kind, msg)
    }

    /// The lane's local-memory bytes of `at`, grown on first touch up to the per-thread limit.
    fn local_slot<'w>(&self, w: &'w mut Warp, at: Access) -> Option<&'w mut [u8]> {
        let end = at.addr.checked_add(at.size as u64)?;
        if end > self.local_limit as u64 {
            return None;
        }
        let l = &mut w.local[at.lane];
        if l.len() < end as usize {
            l.resize(end as usize, 0);
        }
        Some(&mut l[at.addr as usize..end as usize])
    }

    fn load(&mut self, w: &mut Warp, inst: &Inst, at: Access) -> Result<u64, Fault> {
        let (space, addr, n) = (at.space, at.addr, at.size as u64);
        if addr % n != 0 {
            return Err(self.access_fault(w, inst, at, FaultKind::Misaligned, "load"));
        }
        let range = addr as usize..(addr + n) as usize;
        let bytes: Option<&[u8]> = match space {
            Space::Global | Space::Generic => self.global().bytes(addr, n),
            Space::Shared => self.shared.get(range),
            Space::Const => self.consts.get(range),
            Space::Param => self.params.get(range),
            Space::Local => match self.local_slot(w, at) {
                Some(slot) => return Ok(load_le(slot)),
                None => None,
            },
        };
        match bytes {
            Some(b) => Ok(load_le(b)),
            None => Err(self.access_fault(w, inst, at, FaultKind::OutOfBounds, "load")),
        }
    }

    fn store(&mut self, w: &mut Warp, inst: &Inst, at: Access, v: u64) -> Result<(), Fault> {
        let (space, addr, n) = (at.space, at.addr, at.size as u64);
        if addr % n != 0 {
            return Err(self.access_fault(w, inst, at, FaultKind::Misaligned, "store"));
        }
        if matches!(space, Space::Const | Space::Param) {
            let msg = format!("store to read-only {} space at {addr:#x}", space.name());
            return Err(self.fault(w, inst, at.lane, FaultKind::OutOfBounds, msg));
        }
        let slot: Option<&mut [u8]> = match space {
            Space::Global | Space::Generic => self.global_mut().bytes_mut(addr, n),
            Space::Shared => self.shared.get_mut(addr as usize..(addr + n) as usize),
            _ => self.local_slot(w, at),
        };
        let Some(slot) = slot else {
            return Err(self.access_fault(w, inst, at, FaultKind::OutOfBounds, "store"));
        };
        let changed = load_le(slot) != v & mask_bytes(at.size);
        store_le(slot, v);
        // A changed value is progress (livelock detection watches the epoch).
        if changed {
            *self.epoch += 1;
        }
        Ok(())
    }

    /// The space and first address of a (vector) access of `bytes` bytes, which must be
    /// aligned to its whole size (PTX ISA: vector accesses are aligned to the vector size).
    // Inlined into its callers: it runs for every lane of every load and store.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn vector_base(
        &self,
        w: &Warp,
        inst: &Inst,
        lane: usize,
        space: Space,
        addr: &Address,
        bytes: u32,
        what: &str,
    ) -> Result<(Space, u64), Fault> {
        let (sp, base) = self.effective(w, space, addr, lane);
        if base % bytes as u64 != 0 {
            let msg = format!("misaligned {bytes}-byte {} {what} at {base:#x}", sp.name());
            return Err(self.fault(w, inst, lane, FaultKind::Misaligned, msg));
        }
        Ok((sp, base))
    }

    /// For a global fault: the allocation nearest to `addr`, so the user sees which buffer the
    /// access ran off.
    fn nearest(&self, space: Space, addr: u64) -> String {
        if !matches!(space, Space::Global | Space::Generic) {
            return String::new();
        }
        match self.global().nearest(addr) {
            Some(a) => format!(
                " (nearest buffer `{}`: {} bytes at {:#x}..{:#x})",
                a.name,
                a.len,
                a.start,
                a.start + a.len
            ),
            None => " (no buffer is allocated)".to_string(),
        }
    }

    pub(super) fn write_local(
        &self,
        w: &mut Warp,
        inst: &Inst,
        lane: usize,
        addr: u64,
        bytes: &[u8],
    ) -> Result<(), Fault> {
        let at = Access {
            lane,
            space: Space::Local,
            addr,
            size: bytes.len() as u32,
        };
        match self.local_slot(w, at) {
            Some(slot) => {
                slot.copy_from_slice(bytes);
                Ok(())
            }
            None => Err(self.fault(w, inst, lane, FaultKind::OutOfBounds, format!("local memory exhausted (frame at {addr:#x}; sm.local_bytes_per_thread is {}): recursion too deep?", self.local_limit))),
        }
    }
}

/// A signed load into a wider register is sign-extended (PTX ISA, `ld`).
fn sign_extends(ty: Type, rty: Type) -> bool {
    ty.is_signed() && rty.bits() > ty.bits()
}

/// Loaded value `v` of type `ty` as register type `rty` holds it.
fn widen(v: u64, ty: Type, rty: Type) -> u64 {
    if sign_extends(ty, rty) {
        sign_extend(v, ty.bits()) & rty.mask()
    } else {
        v
    }
}

fn is_global(sp: Space) -> bool {
    matches!(sp, Space::Global | Space::Generic)
}

/// The mask of `size` bytes at line offset `off`.
fn bytes_mask(off: u64, size: u32) -> ByteMask {
    let ones: ByteMask = if size >= 128 {
        ByteMask::MAX
    } else {
        (1 << size) - 1
    };
    ones << off
}

/// Lane access `at`'s value from its line's operation (`None` if that program did not write
/// the registers). Accesses are aligned to their size, so one never spans two lines.
fn global_value(w: &Warp, at: Access, line_bytes: u64) -> Option<u64> {
    let line = at.addr - at.addr % line_bytes;
    let j = w.mem_txns.binary_search_by_key(&line, |x| x.line).ok()?;
    let txn = &w.mem_txns[j];
    let o = (at.addr - line) as usize;
    txn.wrote_regs
        .then(|| load_le(&txn.data[o..o + at.size as usize]))
}
