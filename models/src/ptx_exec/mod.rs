//! A thread-level functional PTX executor: one thread, one instruction at a time, no warps, no
//! timing. It owns the per-thread state (registers, local frame, pc), the byte-addressed memory
//! the reference semantics run on (global allocations, a CTA's shared segment, the kernel's
//! parameter block, the module's constants) and the generic-address windows, and `step`, which
//! runs one instruction and reports what the schedulers and race detectors need: every memory
//! access (space, address, size, read/write/atomic) and the control effect (fall through, jump,
//! barrier arrival, exit).
//!
//! Data instructions go through `gpusim_isa::semantics` (the pure ISA layer); this module only
//! decides operands, addresses and state updates. It is deliberately independent of the
//! simulator: the lock-step and interleaving references (`crate::lockstep`) and the token-stack
//! reference are built on it. Warp collectives (`shfl`, `vote`, `mma`, ...), calls and the
//! token instructions are outside the thread-level model and are reported as
//! `ExecError::Unsupported` with the instruction's text and line.

mod memory;

pub use memory::{CtaMemory, GlobalMemory, LOCAL_WINDOW, SHARED_WINDOW};

use gpusim_isa::ir::{
    AddrBase, Address, BarKind, Function, Inst, Module, Op, Operand, Pc, RegId, Space, SpecialReg,
    SymbolId, Type,
};
use gpusim_isa::ir::{Dim, FuncId, FuncKind};
use gpusim_isa::semantics as sem;
use gpusim_isa::SharedLayout;
use thiserror::Error;

/// Grid and block shape of one launch plus its arguments, one `u64` per entry `.param` (a
/// pointer is its global address, a scalar its bits in the param's type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Dynamic shared memory bytes added after the static `.shared` segment.
    pub dynamic_shared: u32,
    pub args: Vec<u64>,
}

impl Launch {
    pub fn threads_per_cta(&self) -> u32 {
        self.block.iter().product()
    }
    pub fn ctas(&self) -> u32 {
        self.grid.iter().product()
    }
    /// The 3-D index of linear CTA `i` (x fastest).
    pub fn cta_index(&self, i: u32) -> [u32; 3] {
        unlinear(i, self.grid)
    }
    /// The 3-D `%tid` of linear thread `i` (x fastest).
    pub fn thread_index(&self, i: u32) -> [u32; 3] {
        unlinear(i, self.block)
    }
}

fn unlinear(i: u32, dims: [u32; 3]) -> [u32; 3] {
    [
        i % dims[0],
        (i / dims[0]) % dims[1],
        i / (dims[0] * dims[1]),
    ]
}

/// Read, plain write, or atomic read-modify-write. Atomics do not race with each other
/// (digest §4.5) but do with plain accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Read,
    Write,
    Atomic,
}

/// One memory access of one instruction, after generic addresses are resolved: `space` is
/// `Global` (addr is the global address), `Shared` (offset in the CTA segment), `Local` (offset
/// in the thread's frame), `Param` or `Const` (offset in their segments).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    pub space: Space,
    pub addr: u64,
    pub size: u32,
    pub kind: AccessKind,
}

/// What the instruction did to control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Continue at pc + 1 (also a branch whose guard is false).
    Next,
    /// A taken branch.
    Jump(Pc),
    /// Arrival at the `bar.sync` at `pc`; the thread's pc is already past it, and it must wait
    /// until the scheduler completes the barrier. `by_id` is the barrier id of a
    /// `barrier.sync` without `.aligned`, which threads may complete from different
    /// instructions (PTX ISA `barrier{.cta}`: only the `.aligned` form requires every thread
    /// of the CTA to execute the same instruction); `None` for the aligned `bar.sync`.
    Barrier { pc: Pc, by_id: Option<u64> },
    /// `ret`/`exit` of the kernel (or running off its body).
    Exit,
}

/// The effect of one `step`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effect {
    pub pc: Pc,
    pub accesses: Vec<Access>,
    pub control: Control,
}

/// Why an instruction could not run.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ExecError {
    #[error("unsupported instruction `{text}` at line {line}: {why}")]
    Unsupported {
        text: String,
        line: u32,
        why: String,
    },
    #[error("memory fault at line {line} (`{text}`): {why}")]
    Fault {
        text: String,
        line: u32,
        why: String,
    },
    #[error("`trap` at line {line}")]
    Trap { line: u32 },
}

/// One thread: its ids, registers (64-bit slots, one per `.reg` of the function), carry flags
/// live in their registers, its local frame and its pc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    pub tid: [u32; 3],
    pub ctaid: [u32; 3],
    pub regs: Vec<u64>,
    pub local: Vec<u8>,
    pub pc: Pc,
    pub done: bool,
}

/// A kernel ready to run: the module, its entry, and the parameter block layout.
#[derive(Clone, Debug)]
pub struct Kernel<'m> {
    pub module: &'m Module,
    pub func: &'m Function,
    /// Byte offset of each entry parameter in the parameter block, by symbol.
    param_offsets: Vec<(SymbolId, u64, Type)>,
    param_bytes: u64,
    consts: Vec<u8>,
    /// Where the kernel's `.shared` variables live (ptxas's per-kernel segment).
    shared: SharedLayout,
    /// Lanes per warp for `%laneid`, `%warpid` and `WARP_SZ` (32 unless `with_warp_size`).
    warp_size: u32,
}

impl<'m> Kernel<'m> {
    /// Look up `entry` in `module`; fails (as `Unsupported`) when it is missing or not a
    /// kernel.
    pub fn new(module: &'m Module, entry: &str) -> Result<Kernel<'m>, ExecError> {
        let id = module
            .find_function(entry)
            .filter(|&id| module.function(id).kind == FuncKind::Entry)
            .ok_or_else(|| ExecError::Unsupported {
                text: entry.to_string(),
                line: 0,
                why: "no kernel entry of this name in the module".into(),
            })?;
        let f = module.function(id);
        let mut off = 0u64;
        let mut param_offsets = Vec::new();
        for p in &f.params {
            let align = u64::from(p.align.max(p.ty.size()).max(1));
            off = off.div_ceil(align) * align;
            param_offsets.push((p.symbol, off, p.ty));
            off += u64::from(p.size());
        }
        let mut consts = vec![0u8; module.const_bytes as usize];
        for s in module.symbols.iter().filter(|s| s.space == Space::Const) {
            let o = s.offset as usize;
            let n = s.init.len().min(consts.len().saturating_sub(o));
            consts[o..o + n].copy_from_slice(&s.init[..n]);
        }
        Ok(Kernel {
            module,
            func: f,
            shared: module.shared_layout(id),
            param_offsets,
            param_bytes: off,
            consts,
            warp_size: 32,
        })
    }

    /// The same kernel with `n` lanes per warp, for models whose warps are narrower than 32
    /// (the formal report's examples use warps of 2–4 lanes).
    pub fn with_warp_size(mut self, n: u32) -> Kernel<'m> {
        self.warp_size = n.max(1);
        self
    }

    /// A view of the same launch that executes the body of `id`, a `.func` this kernel calls:
    /// threads made by it carry that function's registers and frame, and its `.param`
    /// variables (formal, return and body-declared) live in that frame.
    pub fn callee(&self, id: FuncId) -> Kernel<'m> {
        Kernel {
            func: self.module.function(id),
            ..self.clone()
        }
    }

    /// The parameter block for `args` (one value per `.param`, in order).
    pub fn param_block(&self, args: &[u64]) -> Result<Vec<u8>, ExecError> {
        if args.len() != self.param_offsets.len() {
            return Err(ExecError::Unsupported {
                text: self.func.name.clone(),
                line: self.func.span.line,
                why: format!(
                    "the kernel takes {} parameters, the launch gives {}",
                    self.param_offsets.len(),
                    args.len()
                ),
            });
        }
        let mut block = vec![0u8; self.param_bytes as usize];
        for (&(_, off, ty), &v) in self.param_offsets.iter().zip(args) {
            let n = ty.size().min(8) as usize;
            block[off as usize..off as usize + n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
        Ok(block)
    }

    /// Bytes of shared memory one CTA needs (static segment, padded to the dynamic window's
    /// alignment, plus `dynamic`).
    pub fn shared_bytes(&self, dynamic: u32) -> usize {
        self.shared.dynamic_offset as usize + dynamic as usize
    }

    /// A fresh thread at pc 0.
    pub fn thread(&self, tid: [u32; 3], ctaid: [u32; 3]) -> Thread {
        Thread {
            tid,
            ctaid,
            regs: vec![0; self.func.regs.len()],
            local: vec![0; self.func.frame_bytes as usize],
            pc: 0,
            done: false,
        }
    }

    /// The source line of instruction `pc`.
    pub fn line(&self, pc: Pc) -> u32 {
        self.func
            .body
            .get(pc as usize)
            .map_or(self.func.span.line, |i| i.span.line)
    }

    /// The PTX text of instruction `pc`, for reports.
    pub fn text(&self, pc: Pc) -> String {
        self.func
            .body
            .get(pc as usize)
            .map_or_else(String::new, |i| {
                gpusim_isa::print::inst_to_ptx(self.module, self.func, i)
                    .trim()
                    .to_string()
            })
    }

    /// Run the instruction at `t.pc` for thread `t` and advance its pc. A thread whose pc has
    /// run off the body exits.
    pub fn step(
        &self,
        t: &mut Thread,
        mem: &mut CtaMemory,
        launch: &Launch,
    ) -> Result<Effect, ExecError> {
        let pc = t.pc;
        let Some(inst) = self.func.body.get(pc as usize) else {
            t.done = true;
            return Ok(Effect {
                pc,
                accesses: vec![],
                control: Control::Exit,
            });
        };
        let mut ex = Exec {
            k: self,
            t,
            mem,
            launch,
            inst,
            pc,
            accesses: Vec::new(),
        };
        let control = ex.run()?;
        let accesses = ex.accesses;
        match control {
            Control::Next | Control::Barrier { .. } => t.pc = pc + 1,
            Control::Jump(target) => t.pc = target,
            Control::Exit => t.done = true,
        }
        Ok(Effect {
            pc,
            accesses,
            control,
        })
    }
}

struct Exec<'a, 'm> {
    k: &'a Kernel<'m>,
    t: &'a mut Thread,
    mem: &'a mut CtaMemory,
    launch: &'a Launch,
    inst: &'a Inst,
    pc: Pc,
    accesses: Vec<Access>,
}

impl Exec<'_, '_> {
    fn unsupported(&self, why: &str) -> ExecError {
        ExecError::Unsupported {
            text: self.k.text(self.pc),
            line: self.inst.span.line,
            why: why.to_string(),
        }
    }

    fn fault(&self, why: String) -> ExecError {
        ExecError::Fault {
            text: self.k.text(self.pc),
            line: self.inst.span.line,
            why,
        }
    }

    fn reg(&self, r: RegId) -> u64 {
        self.t.regs[r.0 as usize]
    }

    fn set(&mut self, r: RegId, v: u64) {
        self.t.regs[r.0 as usize] = v;
    }

    fn special(&self, s: SpecialReg) -> Result<u64, ExecError> {
        let d = |dim: Dim| match dim {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        };
        let tid_linear = self.t.tid[0]
            + self.launch.block[0] * (self.t.tid[1] + self.launch.block[1] * self.t.tid[2]);
        Ok(u64::from(match s {
            SpecialReg::Tid(x) => self.t.tid[d(x)],
            SpecialReg::Ntid(x) => self.launch.block[d(x)],
            SpecialReg::Ctaid(x) => self.t.ctaid[d(x)],
            SpecialReg::Nctaid(x) => self.launch.grid[d(x)],
            // Lanes are numbered in linear thread order, as the CUDA guide lays out warps.
            SpecialReg::LaneId => tid_linear % self.k.warp_size,
            SpecialReg::WarpId => tid_linear / self.k.warp_size,
            SpecialReg::WarpSz => self.k.warp_size,
            SpecialReg::DynamicSmemSize => self.launch.dynamic_shared,
            _ => return Err(self.unsupported("special register outside the thread-level model")),
        }))
    }

    fn symbol_addr(&self, s: SymbolId) -> Result<u64, ExecError> {
        let sym = self.k.module.symbol(s);
        match sym.space {
            Space::Param => self
                .k
                .param_offsets
                .iter()
                .find(|p| p.0 == s)
                .map(|p| p.1)
                .ok_or_else(|| self.unsupported("parameter of another function")),
            Space::Shared => self
                .k
                .shared
                .offset(s)
                .ok_or_else(|| self.unsupported("`.shared` variable the kernel cannot name")),
            Space::Local | Space::Const => Ok(sym.offset),
            Space::Global => self
                .mem
                .module_global(sym.offset)
                .ok_or_else(|| self.unsupported("module-scope .global variable")),
            Space::Generic => Err(self.unsupported("symbol without a state space")),
        }
    }

    fn op(&self, o: Operand) -> Result<u64, ExecError> {
        match o {
            Operand::Reg(r) => Ok(self.reg(r)),
            Operand::NotReg(r) => Ok(u64::from(self.reg(r) & 1 == 0)),
            Operand::Imm(v) => Ok(v),
            Operand::Special(s) => self.special(s),
            Operand::Symbol(s) => self.symbol_addr(s),
            Operand::Func(_) => Err(self.unsupported("function addresses (indirect calls)")),
        }
    }

    fn guard_true(&self) -> bool {
        self.inst
            .guard
            .is_none_or(|g| (self.reg(g.reg) & 1 == 1) != g.negated)
    }

    /// The effective address of `a` in `space`, resolved from generic to a concrete space.
    fn address(&self, space: Space, a: &Address) -> Result<(Space, u64), ExecError> {
        // `.param` variables other than the entry's parameters (a `.func`'s formal and return
        // parameters, a caller's call-site `.param`s) are per-activation frame variables.
        if let AddrBase::Symbol(s) = a.base {
            if space == Space::Param && !self.k.param_offsets.iter().any(|p| p.0 == s) {
                let sym = self.k.module.symbol(s);
                return Ok((Space::Local, sym.offset.wrapping_add(a.offset as u64)));
            }
        }
        let base = match a.base {
            AddrBase::Reg(r) => self.reg(r),
            AddrBase::Symbol(s) => self.symbol_addr(s)?,
            AddrBase::Abs => 0,
        };
        let addr = base.wrapping_add(a.offset as u64);
        if space != Space::Generic {
            return Ok((space, addr));
        }
        Ok(memory::resolve_generic(addr))
    }

    fn read(&mut self, space: Space, addr: u64, size: u32) -> Result<Vec<u8>, ExecError> {
        let local = &self.t.local;
        let r = match space {
            Space::Local => memory::slice(local, addr, size).map(<[u8]>::to_vec),
            Space::Const => memory::slice(&self.k.consts, addr, size).map(<[u8]>::to_vec),
            _ => self.mem.read(space, addr, size),
        };
        r.map_err(|e| self.fault(e))
    }

    fn write(&mut self, space: Space, addr: u64, bytes: &[u8]) -> Result<(), ExecError> {
        let r = match space {
            Space::Local => memory::slice_mut(&mut self.t.local, addr, bytes.len() as u32)
                .map(|s| s.copy_from_slice(bytes)),
            Space::Const | Space::Param => Err(format!("{} space is read-only", space.name())),
            _ => self.mem.write(space, addr, bytes),
        };
        r.map_err(|e| self.fault(e))
    }

    fn check_align(&self, addr: u64, size: u32) -> Result<(), ExecError> {
        if addr % u64::from(size) != 0 {
            return Err(self.fault(format!("address {addr:#x} is not aligned to {size} bytes")));
        }
        Ok(())
    }

    fn run(&mut self) -> Result<Control, ExecError> {
        let inst = self.inst;
        // A guard-false instruction is a no-op, branches and barriers included (a false
        // barrier guard is the paper's BARRIER_SKIP).
        if !self.guard_true() {
            return Ok(Control::Next);
        }
        match &inst.op {
            Op::Mov { ty, d, a } => {
                let v = self.op(*a)? & ty.mask();
                self.set(*d, v);
            }
            Op::MovPack { ty, d, parts } => {
                let n = parts.len as u32;
                let w = ty.bits() / n;
                let mut v = 0u64;
                for (i, p) in parts.as_slice().iter().enumerate() {
                    let m = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
                    v |= (self.op(*p)? & m) << (w * i as u32);
                }
                self.set(*d, v);
            }
            Op::MovUnpack { ty, d, a } => {
                let v = self.op(*a)?;
                let w = ty.bits() / u32::from(d.len);
                let m = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
                for (i, r) in d.as_slice().iter().enumerate() {
                    self.set(*r, (v >> (w * i as u32)) & m);
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
                let v = sem::arith(*op, *ty, *mods, self.op(*a)?, self.op(*b)?, self.op(*c)?);
                self.set(*d, v);
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
                let cin = if *cc_in { self.reg(*cc) } else { 0 };
                let (v, cout) =
                    sem::carry_op(*op, *ty, self.op(*a)?, self.op(*b)?, self.op(*c)?, cin);
                self.set(*d, v);
                if *cc_out {
                    self.set(*cc, cout);
                }
            }
            Op::Bfind { ty, shiftamt, d, a } => {
                let v = sem::bfind(*ty, *shiftamt, self.op(*a)?);
                self.set(*d, v);
            }
            Op::Shf {
                left,
                clamp,
                d,
                a,
                b,
                c,
            } => {
                let v = sem::shf(*left, *clamp, self.op(*a)?, self.op(*b)?, self.op(*c)?);
                self.set(*d, v);
            }
            Op::Bfi {
                ty,
                d,
                a,
                b,
                pos,
                len,
            } => {
                let v = sem::bfi(
                    *ty,
                    self.op(*a)?,
                    self.op(*b)?,
                    self.op(*pos)?,
                    self.op(*len)?,
                );
                self.set(*d, v);
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
                let r = sem::compare(*cmp, *ty, *ftz, self.op(*a)?, self.op(*b)?);
                let (rp, rq) = match comb {
                    Some((bop, c)) => {
                        let c = self.op(*c)? & 1 == 1;
                        (sem::combine(*bop, r, c), sem::combine(*bop, !r, c))
                    }
                    None => (r, !r),
                };
                self.set(*p, u64::from(rp));
                if let Some(q) = q {
                    self.set(*q, u64::from(rq));
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
                let mut r = sem::compare(*cmp, *sty, *ftz, self.op(*a)?, self.op(*b)?);
                if let Some((bop, c)) = comb {
                    r = sem::combine(*bop, r, self.op(*c)? & 1 == 1);
                }
                self.set(*d, sem::set_value(*dty, r));
            }
            Op::Selp { ty, d, a, b, c } => {
                let v = if self.op(*c)? & 1 == 1 {
                    self.op(*a)?
                } else {
                    self.op(*b)?
                };
                self.set(*d, v & ty.mask());
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
                let v = sem::slct(*dty, *cty, *ftz, self.op(*a)?, self.op(*b)?, self.op(*c)?);
                self.set(*d, v);
            }
            Op::Cvt {
                dty,
                sty,
                mods,
                d,
                a,
            } => {
                let v = sem::convert(*dty, *sty, *mods, self.op(*a)?);
                let reg = self.k.func.regs[d.0 as usize].ty;
                self.set(*d, sem::extend_to_register(*dty, reg, v));
            }
            Op::CvtPack { dty, mods, d, a, b } => {
                let v = sem::convert_pack(*dty, *mods, self.op(*a)?, self.op(*b)?);
                self.set(*d, v);
            }
            Op::Cvta {
                to_space,
                space,
                ty,
                d,
                a,
            } => {
                let v = self.op(*a)?;
                let v = memory::cvta(*to_space, *space, v)
                    .ok_or_else(|| self.unsupported("cvta for this state space"))?;
                self.set(*d, v & ty.mask());
            }
            Op::Isspacep { space, p, a } => {
                let (s, _) = memory::resolve_generic(self.op(*a)?);
                self.set(*p, u64::from(s == *space));
            }
            Op::Lop3 {
                lut,
                d,
                a,
                b,
                c,
                pred,
            } => {
                let v = sem::lop3(*lut, self.op(*a)?, self.op(*b)?, self.op(*c)?);
                self.set(*d, v);
                if pred.is_some() {
                    return Err(self.unsupported("lop3 with a predicate output"));
                }
            }
            Op::Dot {
                kind,
                a_signed,
                b_signed,
                d,
                a,
                b,
                c,
            } => {
                let v = sem::dot(
                    *kind,
                    *a_signed,
                    *b_signed,
                    self.op(*a)?,
                    self.op(*b)?,
                    self.op(*c)?,
                );
                self.set(*d, v);
            }
            Op::Testp { op, ty, p, a } => {
                let v = sem::testp(*op, *ty, self.op(*a)?);
                self.set(*p, u64::from(v));
            }
            Op::Ld {
                space, ty, d, addr, ..
            } => {
                let (sp, a) = self.address(*space, addr)?;
                let n = u32::from(d.len);
                let es = ty.size();
                self.check_align(a, es * n)?;
                let bytes = self.read(sp, a, es * n)?;
                self.accesses.push(Access {
                    space: sp,
                    addr: a,
                    size: es * n,
                    kind: AccessKind::Read,
                });
                for (i, r) in d.as_slice().iter().enumerate() {
                    let v = memory::le(&bytes[i * es as usize..(i + 1) * es as usize]);
                    self.set(*r, extend(*ty, v));
                }
            }
            Op::St {
                space,
                ty,
                addr,
                src,
                ..
            } => {
                let (sp, a) = self.address(*space, addr)?;
                let es = ty.size() as usize;
                let n = src.len as usize;
                self.check_align(a, (es * n) as u32)?;
                let mut bytes = Vec::with_capacity(es * n);
                for o in src.as_slice() {
                    bytes.extend_from_slice(&self.op(*o)?.to_le_bytes()[..es.min(8)]);
                }
                self.write(sp, a, &bytes)?;
                self.accesses.push(Access {
                    space: sp,
                    addr: a,
                    size: (es * n) as u32,
                    kind: AccessKind::Write,
                });
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
                let (sp, a) = self.address(*space, addr)?;
                let es = ty.size();
                self.check_align(a, es)?;
                let old = memory::le(&self.read(sp, a, es)?);
                let bv = self.op(*b)?;
                let cv = match c {
                    Some(c) => self.op(*c)?,
                    None => 0,
                };
                let new = sem::atomic(*op, *ty, old, bv, cv);
                self.write(sp, a, &new.to_le_bytes()[..es as usize])?;
                self.accesses.push(Access {
                    space: sp,
                    addr: a,
                    size: es,
                    kind: AccessKind::Atomic,
                });
                if let Some(d) = d {
                    self.set(*d, extend(*ty, old));
                }
            }
            Op::Bar {
                kind: BarKind::Sync,
                count: None,
                red: None,
                aligned,
                id,
            } => {
                let by_id = if *aligned { None } else { Some(self.op(*id)?) };
                return Ok(Control::Barrier { pc: self.pc, by_id });
            }
            Op::Bar { .. } => {
                return Err(self.unsupported(
                    "only `bar.sync` without a thread count is modelled (the paper's `barrier`)",
                ))
            }
            // Memory is sequentially consistent in both references (paper §3.2), so fences
            // order nothing further.
            Op::Fence { .. } | Op::Nop => {}
            Op::Bra { target, .. } => return Ok(Control::Jump(*target)),
            Op::Ret { .. } | Op::Exit => return Ok(Control::Exit),
            Op::Trap => {
                return Err(ExecError::Trap {
                    line: inst.span.line,
                })
            }
            Op::WarpSync { .. }
            | Op::Shfl { .. }
            | Op::Vote { .. }
            | Op::Match { .. }
            | Op::ActiveMask { .. }
            | Op::Redux { .. }
            | Op::Mma { .. }
            | Op::MmaInt { .. }
            | Op::Ldmatrix { .. }
            | Op::Stmatrix { .. }
            | Op::MmaM884 { .. }
            | Op::WmmaLoad { .. }
            | Op::WmmaStore { .. }
            | Op::WmmaMma { .. } => {
                return Err(
                    self.unsupported("warp-collective instructions have no thread-level semantics")
                )
            }
            Op::BrxIdx { index, targets, .. } => {
                let i = self.op(*index)? & 0xFFFF_FFFF;
                return match targets.get(i as usize) {
                    Some(&t) => Ok(Control::Jump(t)),
                    None => Err(self.fault(format!("brx.idx index {i} outside its table"))),
                };
            }
            Op::Call { .. } => return Err(self.unsupported("calls are not inlined by this model")),
            Op::Nanosleep { .. } => {}
            Op::Wgmma(_) | Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => {
                return Err(self.unsupported(
                    "warpgroup matrix instructions (wgmma) have no thread-level semantics",
                ))
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
            | Op::Setmaxnreg { .. }
            | Op::CpAsyncBulk { .. }
            | Op::CpAsyncBulkTensor { .. }
            | Op::CpAsyncBulkCommit
            | Op::CpAsyncBulkWait { .. }
            | Op::BarrierCluster { .. }
            | Op::Mapa { .. } => {
                return Err(self.unsupported(
                    "mbarriers, elect, setmaxnreg and bulk/tensor copies belong to the async-proxy checker (`models::async_sync`), not to this sequentially consistent reference",
                ))
            }
            Op::CpAsync { .. } | Op::CpAsyncCommit | Op::CpAsyncWait { .. } => {
                return Err(self.unsupported(
                    "asynchronous copies (cp.async) have no place in this sequentially consistent reference",
                ))
            }
            Op::Ssy { .. } | Op::Sync | Op::PreBrk { .. } | Op::Brk | Op::PreRet { .. } => {
                return Err(self.unsupported(
                    "reconvergence tokens belong to the token-stack model, not to a thread",
                ))
            }
        }
        Ok(Control::Next)
    }
}

/// A loaded value in a register slot: signed types are sign-extended to 64 bits.
fn extend(ty: Type, v: u64) -> u64 {
    let bits = ty.bits();
    if ty.is_signed() && bits < 64 {
        (((v << (64 - bits)) as i64) >> (64 - bits)) as u64
    } else {
        v
    }
}
