//! Executing one warp instruction: per-lane semantics over the lanes that run it (active and
//! guard true), memory accesses with bounds and alignment checks, and the control-flow effect
//! handed to the reconvergence policy. When things happen is not decided here.

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
    pub static_shared: u32,
    pub dynamic_shared: u32,
    pub kernel: String,
}

/// Everything outside the warp that an instruction may read or change.
pub struct ExecEnv<'a> {
    pub prog: &'a Program,
    pub global: &'a mut GlobalMemory,
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

fn sign_extend(v: u64, from_bits: u32) -> u64 {
    if from_bits >= 64 {
        return v;
    }
    let s = 64 - from_bits;
    (((v << s) as i64) >> s) as u64
}

impl<'a> ExecEnv<'a> {
    fn fault(&self, w: &Warp, inst: &Inst, lane: usize, kind: FaultKind, what: String) -> Fault {
        let t = w.tid[lane];
        Fault::new(
            kind,
            format!(
                "{what} in kernel `{}` at {}:{} (`{}`), CTA ({}, {}, {}), thread ({}, {}, {})",
                self.geom.kernel,
                self.prog.module.file,
                inst.span.line,
                print::inst_to_ptx(&self.prog.module, self.prog.module.function(w.func()), inst),
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
            SpecialReg::LanemaskEq => 1 << lane,
            SpecialReg::LanemaskLt => below(lane),
            SpecialReg::LanemaskLe => below(lane + 1),
            SpecialReg::LanemaskGt => !below(lane + 1) & 0xFFFF_FFFF,
            SpecialReg::LanemaskGe => !below(lane) & 0xFFFF_FFFF,
            SpecialReg::DynamicSmemSize => self.geom.dynamic_shared as u64,
            SpecialReg::TotalSmemSize => {
                (self.geom.static_shared + self.geom.dynamic_shared) as u64
            }
        }
    }

    /// A variable's address in its own space (local variables: in the lane's local memory).
    fn sym_addr(&self, w: &Warp, s: SymbolId) -> u64 {
        match self.prog.locs[s.0 as usize] {
            Loc::KernelParam(o) | Loc::Const(o) | Loc::Global(o) => o,
            Loc::Frame(o) => w.frame().local_base as u64 + o,
            Loc::Shared { offset, dynamic } => {
                if dynamic {
                    self.geom.static_shared as u64
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
            Space::Generic => decode_generic(addr),
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

    fn load(&mut self, w: &mut Warp, inst: &Inst, at: Access) -> Result<u64, Fault> {
        let Access {
            lane,
            space,
            addr,
            size,
        } = at;
        let n = size as u64;
        if addr % n != 0 {
            return Err(self.fault(
                w,
                inst,
                lane,
                FaultKind::Misaligned,
                format!(
                    "misaligned {size}-byte {} load at address {addr:#x}",
                    space.name()
                ),
            ));
        }
        let oob = |env: &Self, w: &Warp| {
            env.fault(
                w,
                inst,
                lane,
                FaultKind::OutOfBounds,
                format!(
                    "out-of-bounds {size}-byte {} load at address {addr:#x}",
                    space.name()
                ),
            )
        };
        let bytes: &[u8] = match space {
            Space::Global | Space::Generic => {
                self.global.bytes(addr, n).ok_or_else(|| oob(self, w))?
            }
            Space::Shared => self
                .shared
                .get(addr as usize..(addr + n) as usize)
                .ok_or_else(|| oob(self, w))?,
            Space::Const => self
                .consts
                .get(addr as usize..(addr + n) as usize)
                .ok_or_else(|| oob(self, w))?,
            Space::Param => self
                .params
                .get(addr as usize..(addr + n) as usize)
                .ok_or_else(|| oob(self, w))?,
            Space::Local => {
                if addr + n > self.local_limit as u64 {
                    return Err(oob(self, w));
                }
                let l = &mut w.local[lane];
                if l.len() < (addr + n) as usize {
                    l.resize((addr + n) as usize, 0);
                }
                return Ok(load_le(&l[addr as usize..(addr + n) as usize]));
            }
        };
        Ok(load_le(bytes))
    }

    fn store(&mut self, w: &mut Warp, inst: &Inst, at: Access, v: u64) -> Result<(), Fault> {
        let Access {
            lane,
            space,
            addr,
            size,
        } = at;
        let n = size as u64;
        if addr % n != 0 {
            return Err(self.fault(
                w,
                inst,
                lane,
                FaultKind::Misaligned,
                format!(
                    "misaligned {size}-byte {} store at address {addr:#x}",
                    space.name()
                ),
            ));
        }
        let oob = |env: &Self, w: &Warp| {
            env.fault(
                w,
                inst,
                lane,
                FaultKind::OutOfBounds,
                format!(
                    "out-of-bounds {size}-byte {} store at address {addr:#x}",
                    space.name()
                ),
            )
        };
        let slot: &mut [u8] = match space {
            Space::Global | Space::Generic => {
                if self.global.bytes(addr, n).is_none() {
                    return Err(oob(self, w));
                }
                self.global
                    .bytes_mut(addr, n)
                    .expect("bounds checked above")
            }
            Space::Shared => {
                let len = self.shared.len();
                if addr + n > len as u64 {
                    return Err(oob(self, w));
                }
                &mut self.shared[addr as usize..(addr + n) as usize]
            }
            Space::Local => {
                if addr + n > self.local_limit as u64 {
                    return Err(oob(self, w));
                }
                let l = &mut w.local[lane];
                if l.len() < (addr + n) as usize {
                    l.resize((addr + n) as usize, 0);
                }
                let slot = &mut l[addr as usize..(addr + n) as usize];
                if load_le(slot) != v & mask_bytes(size) {
                    *self.epoch += 1;
                }
                store_le(slot, v);
                return Ok(());
            }
            Space::Const | Space::Param => {
                return Err(self.fault(
                    w,
                    inst,
                    lane,
                    FaultKind::OutOfBounds,
                    format!("store to read-only {} space at {addr:#x}", space.name()),
                ));
            }
        };
        if load_le(slot) != v & mask_bytes(size) {
            *self.epoch += 1;
        }
        store_le(slot, v);
        Ok(())
    }

    /// Execute `inst` for the warp's active lanes.
    pub fn execute(&mut self, w: &mut Warp, inst: &Inst) -> Result<Executed, Fault> {
        let active = w.simt.active_mask();
        let exec = match inst.guard {
            None => active,
            Some(g) => lanes(active)
                .filter(|&l| ((w.read(g.reg.0, l) & 1) == 1) != g.negated)
                .fold(0, |m, l| m | 1 << l),
        };
        let frame_depth = w.frames.len() as u32;
        let mut out = Executed {
            flow: Flow::Next,
            frame_depth,
            bar: None,
            backedge: false,
            lanes: exec,
        };
        let pc = w.pc();
        match &inst.op {
            Op::Mov { d, a, ty } => {
                let sa = self.src(w, a);
                let row = w.slot(d.0) * w.warp_size as usize;
                for l in lanes(exec) {
                    w.regs[row + l] = self.get(w, &sa, l) & ty.mask();
                }
            }
            Op::MovPack { ty, d, parts } => {
                let n = parts.len as u32;
                let bits = ty.bits() / n;
                for l in lanes(exec) {
                    let mut v = 0u64;
                    for (i, p) in parts.as_slice().iter().enumerate() {
                        let part = self.val(w, p, l)
                            & if bits >= 64 {
                                u64::MAX
                            } else {
                                (1 << bits) - 1
                            };
                        v |= part << (bits * i as u32);
                    }
                    w.write(d.0, l, v);
                }
            }
            Op::MovUnpack { ty, d, a } => {
                let n = d.len as u32;
                let bits = ty.bits() / n;
                for l in lanes(exec) {
                    let v = self.val(w, a, l);
                    for (i, r) in d.as_slice().iter().enumerate() {
                        let part = (v >> (bits * i as u32))
                            & if bits >= 64 {
                                u64::MAX
                            } else {
                                (1 << bits) - 1
                            };
                        w.write(r.0, l, part);
                    }
                }
            }
            Op::Arith {
                op,
                ty,
                mods,
                d,
                a,
                b,
                c,
            } => {
                let (sa, sb, sc) = (self.src(w, a), self.src(w, b), self.src(w, c));
                let row = w.slot(d.0) * w.warp_size as usize;
                for l in lanes(exec) {
                    let (x, y, z) = (
                        self.get(w, &sa, l),
                        self.get(w, &sb, l),
                        self.get(w, &sc, l),
                    );
                    w.regs[row + l] = sem::arith(*op, *ty, *mods, x, y, z);
                }
            }
            Op::Carry {
                op,
                ty,
                cc_in,
                cc_out,
                cc,
                d,
                a,
                b,
                c,
            } => {
                for l in lanes(exec) {
                    let ci = if *cc_in { w.read(cc.0, l) & 1 } else { 0 };
                    let (r, co) = sem::carry_op(
                        *op,
                        *ty,
                        self.val(w, a, l),
                        self.val(w, b, l),
                        self.val(w, c, l),
                        ci,
                    );
                    w.write(d.0, l, r);
                    if *cc_out {
                        w.write(cc.0, l, co);
                    }
                }
            }
            Op::Bfind { ty, shiftamt, d, a } => {
                for l in lanes(exec) {
                    let v = sem::bfind(*ty, *shiftamt, self.val(w, a, l));
                    w.write(d.0, l, v);
                }
            }
            Op::Shf {
                left,
                clamp,
                d,
                a,
                b,
                c,
            } => {
                for l in lanes(exec) {
                    let v = sem::shf(
                        *left,
                        *clamp,
                        self.val(w, a, l),
                        self.val(w, b, l),
                        self.val(w, c, l),
                    );
                    w.write(d.0, l, v);
                }
            }
            Op::Bfi {
                ty,
                d,
                a,
                b,
                pos,
                len,
            } => {
                for l in lanes(exec) {
                    let v = sem::bfi(
                        *ty,
                        self.val(w, a, l),
                        self.val(w, b, l),
                        self.val(w, pos, l),
                        self.val(w, len, l),
                    );
                    w.write(d.0, l, v);
                }
            }
            Op::Setp {
                cmp,
                ty,
                ftz,
                p,
                q,
                a,
                b,
                comb,
            } => {
                let (sa, sb) = (self.src(w, a), self.src(w, b));
                for l in lanes(exec) {
                    let t = sem::compare(*cmp, *ty, *ftz, self.get(w, &sa, l), self.get(w, &sb, l));
                    let (r1, r2) = match comb {
                        Some((op, c)) => {
                            let cv = self.val(w, c, l) & 1 == 1;
                            (sem::combine(*op, t, cv), sem::combine(*op, !t, cv))
                        }
                        None => (t, !t),
                    };
                    w.write(p.0, l, r1 as u64);
                    if let Some(q) = q {
                        w.write(q.0, l, r2 as u64);
                    }
                }
            }
            Op::Set {
                cmp,
                dty,
                sty,
                ftz,
                d,
                a,
                b,
                comb,
            } => {
                for l in lanes(exec) {
                    let mut t =
                        sem::compare(*cmp, *sty, *ftz, self.val(w, a, l), self.val(w, b, l));
                    if let Some((op, c)) = comb {
                        t = sem::combine(*op, t, self.val(w, c, l) & 1 == 1);
                    }
                    w.write(d.0, l, sem::set_value(*dty, t));
                }
            }
            Op::Selp { ty, d, a, b, c } => {
                for l in lanes(exec) {
                    let v = if self.val(w, c, l) & 1 == 1 {
                        self.val(w, a, l)
                    } else {
                        self.val(w, b, l)
                    };
                    w.write(d.0, l, v & ty.mask());
                }
            }
            Op::Slct {
                dty,
                cty,
                ftz,
                d,
                a,
                b,
                c,
            } => {
                for l in lanes(exec) {
                    let v = sem::slct(
                        *dty,
                        *cty,
                        *ftz,
                        self.val(w, a, l),
                        self.val(w, b, l),
                        self.val(w, c, l),
                    );
                    w.write(d.0, l, v);
                }
            }
            Op::Cvt {
                dty,
                sty,
                mods,
                d,
                a,
            } => {
                let dst_ty = self.prog.module.function(w.func()).regs[d.0 as usize].ty;
                for l in lanes(exec) {
                    let mut v = sem::convert(*dty, *sty, *mods, self.val(w, a, l));
                    // A narrow signed result in a wider register is sign-extended (PTX §9.7.9.21).
                    if dty.is_signed() && dst_ty.bits() > dty.bits() {
                        v = sign_extend(v, dty.bits()) & dst_ty.mask();
                    }
                    w.write(d.0, l, v);
                }
            }
            Op::Cvta {
                to_space,
                space,
                ty,
                d,
                a,
            } => {
                let base = mem::window_base(*space);
                for l in lanes(exec) {
                    let v = self.val(w, a, l);
                    let r = if *to_space {
                        v.wrapping_sub(base)
                    } else {
                        v.wrapping_add(base)
                    };
                    w.write(d.0, l, r & ty.mask());
                }
            }
            Op::Ld {
                space, ty, d, addr, ..
            } => self.exec_ld(w, inst, exec, *space, *ty, d, addr)?,
            Op::St {
                space,
                ty,
                addr,
                src,
                ..
            } => {
                let size = ty.size();
                for l in lanes(exec) {
                    let (sp, base) = self.effective(w, *space, addr, l);
                    if base % (size as u64 * src.len as u64) != 0 {
                        return Err(self.fault(
                            w,
                            inst,
                            l,
                            FaultKind::Misaligned,
                            format!("misaligned vector store at {base:#x}"),
                        ));
                    }
                    for (i, s) in src.as_slice().iter().enumerate() {
                        let v = self.val(w, s, l);
                        let at = Access {
                            lane: l,
                            space: sp,
                            addr: base + (i as u64) * size as u64,
                            size,
                        };
                        self.store(w, inst, at, v & mask_bytes(size))?;
                    }
                }
            }
            Op::Atom {
                space,
                op,
                ty,
                d,
                addr,
                b,
                c,
            } => {
                let size = ty.size();
                // Lanes of one warp are serialised in lane order: a valid refinement of the
                // formal model, which allows any order (§2.7).
                for l in lanes(exec) {
                    let (sp, a) = self.effective(w, *space, addr, l);
                    if !matches!(sp, Space::Global | Space::Shared) {
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
                    let old = self.load(w, inst, at)?;
                    let bv = self.val(w, b, l);
                    let cv = c.map(|c| self.val(w, &c, l)).unwrap_or(0);
                    let new = sem::atomic(*op, *ty, old, bv, cv);
                    self.store(w, inst, at, new & mask_bytes(size))?;
                    if let Some(d) = d {
                        w.write(d.0, l, old);
                    }
                }
            }
            Op::Bar {
                kind,
                id,
                count,
                red,
                ..
            } => {
                if exec != 0 {
                    let l0 = exec.trailing_zeros() as usize;
                    let barid = self.val(w, id, l0);
                    if barid >= 16 {
                        return Err(self.fault(
                            w,
                            inst,
                            l0,
                            FaultKind::BarrierDivergence,
                            format!("barrier id {barid} out of range 0..15"),
                        ));
                    }
                    let count = count.map(|c| self.val(w, &c, l0) as u32);
                    let mut trues = 0;
                    if let Some((_, p)) = red {
                        for l in lanes(exec) {
                            if self.val(w, p, l) & 1 == 1 {
                                trues |= 1 << l;
                            }
                        }
                    }
                    let live = w.valid & !w.simt.exited_mask();
                    let red = match (kind, red) {
                        (BarKind::Red(k), Some((r, _))) => Some((*r, *k)),
                        _ => None,
                    };
                    // Divergence is about control flow (the active mask), not guards: a guarded-off lane of a
                    // converged warp is counted with its warp (Habermaier §5.5 updArrCnt).
                    out.bar = Some(BarOp {
                        kind: *kind,
                        barid: barid as usize,
                        count,
                        red,
                        preds: (exec, trues),
                        divergent: active != live,
                    });
                }
            }
            Op::WarpSync { mask } => {
                if exec != 0 {
                    let l0 = exec.trailing_zeros() as usize;
                    let m = self.val(w, mask, l0) & w.valid;
                    if m & !w.simt.active_mask() & !w.simt.exited_mask() != 0 {
                        return Err(self.fault(w, inst, l0, FaultKind::BarrierDivergence, format!("bar.warp.sync mask {m:#x} names lanes that are not converged with this path (active {:#x})", w.simt.active_mask())));
                    }
                }
            }
            Op::Fence { .. } | Op::Nop => {}
            Op::Shfl {
                mode,
                d,
                p,
                a,
                b,
                c,
                ..
            } => self.exec_shfl(w, exec, *mode, *d, *p, a, b, c),
            Op::Vote { mode, d, a, .. } => {
                let mut trues = 0u64;
                for l in lanes(exec) {
                    if self.val(w, a, l) & 1 == 1 {
                        trues |= 1 << l;
                    }
                }
                // Only active lanes with a true guard vote; others count as false (§5.4.2).
                let v = match mode {
                    VoteMode::All => (trues == exec) as u64,
                    VoteMode::Any => (trues != 0) as u64,
                    VoteMode::Uni => (trues == 0 || trues == exec) as u64,
                    VoteMode::Ballot => trues & 0xFFFF_FFFF,
                };
                for l in lanes(exec) {
                    w.write(d.0, l, v);
                }
            }
            Op::Match {
                mode, ty, d, p, a, ..
            } => {
                let vals: Vec<(usize, u64)> = lanes(exec)
                    .map(|l| (l, self.val(w, a, l) & ty.mask()))
                    .collect();
                let all_eq = vals.windows(2).all(|x| x[0].1 == x[1].1);
                for &(l, v) in &vals {
                    let r = match mode {
                        MatchMode::Any => vals
                            .iter()
                            .filter(|x| x.1 == v)
                            .fold(0u64, |m, x| m | 1 << x.0),
                        MatchMode::All => {
                            if all_eq {
                                exec
                            } else {
                                0
                            }
                        }
                    };
                    w.write(d.0, l, r);
                    if let Some(p) = p {
                        w.write(p.0, l, all_eq as u64);
                    }
                }
            }
            Op::ActiveMask { d } => {
                for l in lanes(exec) {
                    w.write(d.0, l, active);
                }
            }
            Op::Bra { target, .. } => {
                if exec != 0 {
                    out.flow = Flow::Jump {
                        target: *target,
                        taken: exec,
                        is_call: false,
                    };
                    out.backedge = *target <= pc;
                }
            }
            Op::BrxIdx { index, targets, .. } => {
                let mut groups: Vec<(Pc, Mask)> = Vec::new();
                for l in lanes(exec) {
                    let i = self.val(w, index, l) as usize;
                    let Some(&t) = targets.get(i) else {
                        return Err(self.fault(
                            w,
                            inst,
                            l,
                            FaultKind::OutOfBounds,
                            format!("brx.idx index {i} outside its table of {}", targets.len()),
                        ));
                    };
                    match groups.iter_mut().find(|g| g.0 == t) {
                        Some(g) => g.1 |= 1 << l,
                        None => groups.push((t, 1 << l)),
                    }
                }
                groups.sort_by_key(|g| g.0);
                out.backedge = groups.iter().any(|g| g.0 <= pc);
                out.flow = match groups.len() {
                    0 => Flow::Next,
                    1 => Flow::Jump {
                        target: groups[0].0,
                        taken: groups[0].1,
                        is_call: false,
                    },
                    _ => Flow::Multi {
                        groups,
                        is_call: false,
                    },
                };
            }
            Op::Call {
                callee, rets, args, ..
            } => {
                if exec != 0 {
                    out.flow = self.exec_call(w, inst, exec, callee, rets, args)?;
                }
            }
            Op::Ret { .. } => {
                if exec != 0 {
                    let f = self.prog.module.function(w.func());
                    if f.kind == FuncKind::Entry || w.frames.len() == 1 {
                        out.flow = Flow::Disable(Reason::Exit, exec);
                    } else {
                        self.copy_returns(w, exec);
                        out.flow = Flow::Disable(Reason::Return, exec);
                    }
                }
            }
            Op::Exit => {
                if exec != 0 {
                    out.flow = Flow::Disable(Reason::Exit, exec);
                }
            }
            Op::Trap => {
                if exec != 0 {
                    let l = exec.trailing_zeros() as usize;
                    return Err(self.fault(w, inst, l, FaultKind::Trap, "trap executed".into()));
                }
            }
            Op::Ssy { target } | Op::PreBrk { target } | Op::PreRet { target } => {
                if exec != 0 {
                    let kind = match inst.op {
                        Op::Ssy { .. } => TokenKind::Sync,
                        Op::PreBrk { .. } => TokenKind::Break,
                        _ => TokenKind::Call,
                    };
                    out.flow = Flow::Push(kind, *target);
                }
            }
            Op::Sync => {
                if exec != 0 {
                    out.flow = Flow::Sync;
                }
            }
            Op::Brk => {
                if exec != 0 {
                    out.flow = Flow::Disable(Reason::Break, exec);
                }
            }
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_ld(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
        space: Space,
        ty: Type,
        d: &RegVec,
        addr: &Address,
    ) -> Result<(), Fault> {
        let size = ty.size();
        let f = self.prog.module.function(w.func());
        for l in lanes(exec) {
            let (sp, base) = self.effective(w, space, addr, l);
            if base % (size as u64 * d.len as u64) != 0 {
                return Err(self.fault(
                    w,
                    inst,
                    l,
                    FaultKind::Misaligned,
                    format!(
                        "misaligned {}-byte vector {} load at {base:#x}",
                        size * d.len as u32,
                        sp.name()
                    ),
                ));
            }
            for (i, r) in d.as_slice().iter().enumerate() {
                let at = Access {
                    lane: l,
                    space: sp,
                    addr: base + (i as u64) * size as u64,
                    size,
                };
                let mut v = self.load(w, inst, at)?;
                let rty = f.regs[r.0 as usize].ty;
                if ty.is_signed() && rty.bits() > ty.bits() {
                    v = sign_extend(v, ty.bits()) & rty.mask();
                }
                w.write(r.0, l, v);
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_shfl(
        &self,
        w: &mut Warp,
        exec: Mask,
        mode: ShflMode,
        d: RegId,
        p: Option<RegId>,
        a: &Operand,
        b: &Operand,
        c: &Operand,
    ) {
        // PTX ISA shfl.sync pseudocode: c packs the clamp (bits 0..4) and segment mask (8..12).
        let ws = w.warp_size as u64;
        let src: Vec<u64> = (0..w.warp_size as usize)
            .map(|l| self.val(w, a, l))
            .collect();
        let mut results = Vec::with_capacity(exec.count_ones() as usize);
        for l in lanes(exec) {
            let bv = self.val(w, b, l) & 0x1f;
            let cv = self.val(w, c, l);
            let clamp = cv & 0x1f;
            let seg = (cv >> 8) & 0x1f;
            let lane = l as u64;
            let max_lane = (lane & seg) | (clamp & !seg);
            let min_lane = lane & seg;
            let (j, ok) = match mode {
                ShflMode::Up => {
                    let j = lane as i64 - bv as i64;
                    (j, j >= max_lane as i64)
                }
                ShflMode::Down => {
                    let j = (lane + bv) as i64;
                    (j, j <= max_lane as i64)
                }
                ShflMode::Bfly => {
                    let j = (lane ^ bv) as i64;
                    (j, j <= max_lane as i64)
                }
                ShflMode::Idx => {
                    let j = (min_lane | (bv & !seg)) as i64;
                    (j, j <= max_lane as i64)
                }
            };
            let ok = ok && j >= 0 && (j as u64) < ws;
            let srcl = if ok { j as usize } else { l };
            results.push((l, src[srcl], ok));
        }
        for (l, v, ok) in results {
            w.write(d.0, l, v & 0xFFFF_FFFF);
            if let Some(p) = p {
                w.write(p.0, l, ok as u64);
            }
        }
    }

    fn exec_call(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
        callee: &Callee,
        rets: &[SymbolId],
        args: &[Operand],
    ) -> Result<Flow, Fault> {
        let (target_fn, taken, flow) = match callee {
            Callee::Direct(f) => (
                *f,
                exec,
                Flow::Jump {
                    target: 0,
                    taken: exec,
                    is_call: true,
                },
            ),
            Callee::Indirect { reg, .. } => {
                let mut groups: Vec<(u32, Mask)> = Vec::new();
                for l in lanes(exec) {
                    let f = w.read(reg.0, l) as u32;
                    if f as usize >= self.prog.module.functions.len()
                        || self.prog.module.functions[f as usize].body.is_empty()
                    {
                        return Err(self.fault(
                            w,
                            inst,
                            l,
                            FaultKind::OutOfBounds,
                            format!(
                                "indirect call to {f:#x}, which is not a function of this module"
                            ),
                        ));
                    }
                    match groups.iter_mut().find(|g| g.0 == f) {
                        Some(g) => g.1 |= 1 << l,
                        None => groups.push((f, 1 << l)),
                    }
                }
                groups.sort_by_key(|g| g.0);
                let (f, m) = groups[0];
                let flow = if groups.len() == 1 {
                    Flow::Jump {
                        target: 0,
                        taken: m,
                        is_call: true,
                    }
                } else {
                    Flow::Multi {
                        groups: vec![(0, m)],
                        is_call: true,
                    }
                };
                (FuncId(f), m, flow)
            }
        };
        let caller = self.prog.module.function(w.func());
        let callee_f = self.prog.module.function(target_fn);
        if callee_f.params.len() != args.len() || callee_f.rets.len() != rets.len() {
            let l = taken.trailing_zeros() as usize;
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::Control,
                format!(
                    "call of `{}` with {} arguments and {} results; it takes {} and {}",
                    callee_f.name,
                    args.len(),
                    rets.len(),
                    callee_f.params.len(),
                    callee_f.rets.len()
                ),
            ));
        }
        let caller_base = w.frame().local_base as u64;
        let (caller_regs, caller_bytes) = (caller.regs.len() as u32, caller.frame_bytes);
        // The callee's frame sits right above the caller's (see `Warp::push_frame`).
        let callee_base = caller_base + caller_bytes as u64;
        for (p, a) in callee_f.params.iter().zip(args) {
            let dst = callee_base + self.prog.module.symbol(p.symbol).offset;
            let size = p.size() as u64;
            for l in lanes(taken) {
                let bytes: Vec<u8> = match a {
                    Operand::Symbol(s) if matches!(self.prog.locs[s.0 as usize], Loc::Frame(_)) => {
                        let src = caller_base + self.prog.module.symbol(*s).offset;
                        (0..size)
                            .map(|i| w.local[l].get((src + i) as usize).copied().unwrap_or(0))
                            .collect()
                    }
                    other => self.val(w, other, l).to_le_bytes()[..size.min(8) as usize].to_vec(),
                };
                self.write_local(w, inst, l, dst, &bytes)?;
            }
        }
        w.push_frame(
            target_fn,
            callee_f.regs.len() as u32,
            caller_regs,
            caller_bytes,
            rets.to_vec(),
        );
        Ok(flow)
    }

    fn write_local(
        &self,
        w: &mut Warp,
        inst: &Inst,
        lane: usize,
        addr: u64,
        bytes: &[u8],
    ) -> Result<(), Fault> {
        let end = addr + bytes.len() as u64;
        if end > self.local_limit as u64 {
            return Err(self.fault(w, inst, lane, FaultKind::OutOfBounds, format!("local memory exhausted (frame at {addr:#x}; sm.local_bytes_per_thread is {}): recursion too deep?", self.local_limit)));
        }
        let l = &mut w.local[lane];
        if l.len() < end as usize {
            l.resize(end as usize, 0);
        }
        l[addr as usize..end as usize].copy_from_slice(bytes);
        Ok(())
    }

    /// `ret` in a function: copy its return parameters into the caller's variables.
    fn copy_returns(&self, w: &mut Warp, exec: Mask) {
        let f = self.prog.module.function(w.func());
        let n = w.frames.len();
        let (callee_base, dsts) = (
            w.frames[n - 1].local_base as u64,
            w.frames[n - 1].ret_dst.clone(),
        );
        let caller_base = w.frames[n - 2].local_base as u64;
        for (p, dst) in f.rets.iter().zip(dsts) {
            let src = callee_base + self.prog.module.symbol(p.symbol).offset;
            let dst = caller_base + self.prog.module.symbol(dst).offset;
            let size = p.size() as usize;
            for l in lanes(exec) {
                let loc = &mut w.local[l];
                let need = (src as usize + size).max(dst as usize + size);
                if loc.len() < need {
                    loc.resize(need, 0);
                }
                loc.copy_within(src as usize..src as usize + size, dst as usize);
            }
        }
    }
}

fn mask_bytes(size: u32) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (size * 8)) - 1
    }
}
