//! Register dependences of each instruction, for the scoreboard. Following the formal model,
//! every register an instruction names (sources and destinations, and the guard) must be ready
//! before it issues; destinations become ready `latency` cycles after issue.
//!
//! There is no cap on the number of registers: a `wmma.mma` names 32, a `wgmma` with N = 256
//! 128 accumulators plus its A fragment, a call any number of arguments. The lists of a whole
//! function live in one flat arena (`DepTable`), built once when the program is prepared, so
//! the scoreboard reads a slice and the hot path never allocates.

use gpusim_isa::*;

/// The registers one instruction reads and writes (register numbers within its function).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deps {
    pub reads: Vec<u32>,
    pub writes: Vec<u32>,
}

impl Deps {
    fn read(&mut self, r: RegId) {
        self.reads.push(r.0);
    }
    fn op(&mut self, o: &Operand) {
        if let Operand::Reg(r) | Operand::NotReg(r) = o {
            self.read(*r);
        }
    }
    fn addr(&mut self, a: &Address) {
        if let AddrBase::Reg(r) = a.base {
            self.read(r);
        }
    }
    fn write(&mut self, r: RegId) {
        self.writes.push(r.0);
    }
}

/// Where one instruction's registers lie in the arena: `n_reads` reads from `start`, then
/// `n_writes` writes.
#[derive(Clone, Copy, Debug, Default)]
struct Range {
    start: u32,
    n_reads: u32,
    n_writes: u32,
}

/// The dependences of every instruction of a function, in one arena.
#[derive(Clone, Debug, Default)]
pub struct DepTable {
    regs: Vec<u32>,
    ranges: Vec<Range>,
}

impl DepTable {
    /// The dependences of every instruction of `body`, in pc order.
    pub fn build(body: &[Inst]) -> DepTable {
        let mut t = DepTable {
            regs: Vec::new(),
            ranges: Vec::with_capacity(body.len()),
        };
        for inst in body {
            let d = deps_of(inst);
            t.ranges.push(Range {
                start: t.regs.len() as u32,
                n_reads: d.reads.len() as u32,
                n_writes: d.writes.len() as u32,
            });
            t.regs.extend_from_slice(&d.reads);
            t.regs.extend_from_slice(&d.writes);
        }
        t
    }

    /// Instructions covered.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// (reads, writes) of the instruction at `pc`; None past the end of the body.
    #[inline]
    pub fn get(&self, pc: usize) -> Option<(&[u32], &[u32])> {
        let r = self.ranges.get(pc)?;
        let start = r.start as usize;
        let mid = start + r.n_reads as usize;
        Some((
            &self.regs[start..mid],
            &self.regs[mid..mid + r.n_writes as usize],
        ))
    }

    /// The registers the instruction at `pc` reads (its guard included).
    #[inline]
    pub fn reads(&self, pc: usize) -> &[u32] {
        self.get(pc).expect("pc within the body").0
    }

    /// The registers the instruction at `pc` writes.
    #[inline]
    pub fn writes(&self, pc: usize) -> &[u32] {
        self.get(pc).expect("pc within the body").1
    }
}

/// The registers `inst` names, for the scoreboard. A `wgmma.mma_async`'s accumulators are
/// left out: `wgmma_state::time_issue` sets their ready time at completion.
pub fn deps_of(inst: &Inst) -> Deps {
    let mut d = Deps::default();
    if let Some(g) = inst.guard {
        d.read(g.reg);
    }
    match &inst.op {
        Op::Mov { d: r, a, .. } | Op::Cvt { d: r, a, .. } | Op::Cvta { d: r, a, .. } => {
            d.op(a);
            d.write(*r);
        }
        Op::MovPack { d: r, parts, .. } => {
            parts.as_slice().iter().for_each(|p| d.op(p));
            d.write(*r);
        }
        Op::MovUnpack { d: rs, a, .. } => {
            d.op(a);
            rs.as_slice().iter().for_each(|r| d.write(*r));
        }
        Op::Arith {
            d: r, a, b, c, op, ..
        } => {
            for (i, x) in [a, b, c].into_iter().enumerate() {
                if i < op.arity() {
                    d.op(x);
                }
            }
            d.write(*r);
        }
        Op::Carry {
            cc,
            cc_in,
            cc_out,
            d: r,
            a,
            b,
            c,
            ..
        } => {
            [a, b, c].into_iter().for_each(|x| d.op(x));
            if *cc_in {
                d.read(*cc);
            }
            d.write(*r);
            if *cc_out {
                d.write(*cc);
            }
        }
        Op::Bfind { d: r, a, .. } => {
            d.op(a);
            d.write(*r);
        }
        Op::Shf { d: r, a, b, c, .. } => {
            [a, b, c].into_iter().for_each(|x| d.op(x));
            d.write(*r);
        }
        Op::Bfi {
            d: r,
            a,
            b,
            pos,
            len,
            ..
        } => {
            [a, b, pos, len].into_iter().for_each(|x| d.op(x));
            d.write(*r);
        }
        Op::Setp {
            p, q, a, b, comb, ..
        } => {
            d.op(a);
            d.op(b);
            if let Some((_, c)) = comb {
                d.op(c);
            }
            d.write(*p);
            if let Some(q) = q {
                d.write(*q);
            }
        }
        Op::Set {
            d: r, a, b, comb, ..
        } => {
            d.op(a);
            d.op(b);
            if let Some((_, c)) = comb {
                d.op(c);
            }
            d.write(*r);
        }
        Op::Selp { d: r, a, b, c, .. } | Op::Slct { d: r, a, b, c, .. } => {
            [a, b, c].into_iter().for_each(|x| d.op(x));
            d.write(*r);
        }
        Op::Ld { d: rs, addr, .. } => {
            d.addr(addr);
            rs.as_slice().iter().for_each(|r| d.write(*r));
        }
        Op::St { addr, src, .. } => {
            d.addr(addr);
            src.as_slice().iter().for_each(|x| d.op(x));
        }
        Op::Atom {
            d: r, addr, b, c, ..
        } => {
            d.addr(addr);
            d.op(b);
            if let Some(c) = c {
                d.op(c);
            }
            if let Some(r) = r {
                d.write(*r);
            }
        }
        Op::Bar { id, count, red, .. } => {
            d.op(id);
            if let Some(c) = count {
                d.op(c);
            }
            if let Some((r, p)) = red {
                d.op(p);
                d.write(*r);
            }
        }
        Op::WarpSync { mask } => d.op(mask),
        Op::Shfl {
            d: r,
            p,
            a,
            b,
            c,
            mask,
            ..
        } => {
            [a, b, c, mask].into_iter().for_each(|x| d.op(x));
            d.write(*r);
            if let Some(p) = p {
                d.write(*p);
            }
        }
        Op::Vote { d: r, a, mask, .. } => {
            d.op(a);
            d.op(mask);
            d.write(*r);
        }
        Op::Match {
            d: r, p, a, mask, ..
        } => {
            d.op(a);
            d.op(mask);
            d.write(*r);
            if let Some(p) = p {
                d.write(*p);
            }
        }
        Op::ActiveMask { d: r } => d.write(*r),
        Op::Redux { d: r, a, mask, .. } => {
            d.op(a);
            d.op(mask);
            d.write(*r);
        }
        Op::Lop3 {
            d: r,
            a,
            b,
            c,
            pred,
            ..
        } => {
            [a, b, c].into_iter().for_each(|x| d.op(x));
            d.write(*r);
            if let Some((_, p, q)) = pred {
                d.op(q);
                d.write(*p);
            }
        }
        Op::Dot { d: r, a, b, c, .. } => {
            [a, b, c].into_iter().for_each(|x| d.op(x));
            d.write(*r);
        }
        Op::Testp { p: r, a, .. } | Op::Isspacep { p: r, a, .. } => {
            d.op(a);
            d.write(*r);
        }
        Op::CvtPack { d: r, a, b, .. } => {
            d.op(a);
            d.op(b);
            d.write(*r);
        }
        Op::Nanosleep { t } => d.op(t),
        Op::Mma { d: rd, a, b, c, .. } | Op::MmaInt { d: rd, a, b, c, .. } => {
            for r in a.as_slice().iter().chain(b.as_slice()).chain(c.as_slice()) {
                d.read(*r);
            }
            rd.as_slice().iter().for_each(|r| d.write(*r));
        }
        Op::Ldmatrix { d: rs, addr, .. } => {
            d.addr(addr);
            rs.as_slice().iter().for_each(|r| d.write(*r));
        }
        // D is neither read nor written here: its scoreboard entries are set at completion
        // (`wgmma_state::time_issue`) and a later wgmma accumulating into it does not wait.
        Op::Wgmma(w) => {
            match &w.a {
                WgmmaA::Desc(o) => d.op(o),
                WgmmaA::Regs(l) => l.as_slice().iter().for_each(|r| d.read(*r)),
            }
            d.op(&w.b);
            d.op(&w.scale_d);
        }
        Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => {}
        Op::Stmatrix { addr, src, .. } => {
            d.addr(addr);
            src.as_slice().iter().for_each(|r| d.read(*r));
        }
        Op::MmaM884 { d: rd, a, b, c, .. } | Op::WmmaMma { d: rd, a, b, c, .. } => {
            for r in a.as_slice().iter().chain(b.as_slice()).chain(c.as_slice()) {
                d.read(*r);
            }
            rd.as_slice().iter().for_each(|r| d.write(*r));
        }
        Op::WmmaLoad {
            d: rs,
            addr,
            stride,
            ..
        } => {
            d.addr(addr);
            if let Some(s) = stride {
                d.op(s);
            }
            rs.as_slice().iter().for_each(|r| d.write(*r));
        }
        Op::WmmaStore {
            addr, src, stride, ..
        } => {
            d.addr(addr);
            if let Some(s) = stride {
                d.op(s);
            }
            src.as_slice().iter().for_each(|r| d.read(*r));
        }
        // The copy writes shared memory, not registers: nothing for the scoreboard to hold.
        Op::CpAsync {
            dst, src, src_size, ..
        } => {
            d.addr(dst);
            d.addr(src);
            if let Some(s) = src_size {
                d.op(s);
            }
        }
        Op::BrxIdx { index, .. } => d.op(index),
        Op::Call { callee, args, .. } => {
            if let Callee::Indirect { reg, .. } = callee {
                d.read(*reg);
            }
            args.iter().for_each(|a| d.op(a));
        }
        Op::MbarInit { addr, count, .. } => {
            d.addr(addr);
            d.op(count);
        }
        Op::MbarInval { addr, .. } | Op::CpAsyncMbarArrive { addr, .. } => d.addr(addr),
        Op::MbarArrive {
            addr,
            state,
            count,
            expect_tx,
            ..
        } => {
            d.addr(addr);
            count.iter().chain(expect_tx).for_each(|o| d.op(o));
            if let Some(r) = state {
                d.write(*r);
            }
        }
        Op::MbarTx { addr, bytes, .. } => {
            d.addr(addr);
            d.op(bytes);
        }
        Op::MbarWait {
            done,
            addr,
            phase,
            hint,
            ..
        } => {
            d.addr(addr);
            d.op(phase);
            if let Some(h) = hint {
                d.op(h);
            }
            d.write(*done);
        }
        Op::MbarPendingCount { d: r, state } => {
            d.op(state);
            d.write(*r);
        }
        Op::ElectSync { d: r, p, mask } => {
            d.op(mask);
            if let Some(r) = r {
                d.write(*r);
            }
            d.write(*p);
        }
        Op::CpAsyncBulk {
            dst,
            src,
            size,
            mbar,
            multicast,
            ..
        } => {
            d.addr(dst);
            d.addr(src);
            d.op(size);
            mbar.iter().for_each(|a| d.addr(a));
            multicast.iter().for_each(|o| d.op(o));
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
            d.addr(smem);
            d.addr(tmap);
            coords[..*rank as usize].iter().for_each(|o| d.op(o));
            mbar.iter().for_each(|a| d.addr(a));
            multicast.iter().for_each(|o| d.op(o));
        }
        Op::Mapa { d: r, a, rank, .. } => {
            d.op(a);
            d.op(rank);
            d.write(*r);
        }
        Op::BarrierCluster { .. } => {}
        Op::FenceProxyAsync { .. }
        | Op::Setmaxnreg { .. }
        | Op::CpAsyncBulkCommit
        | Op::CpAsyncBulkWait { .. } => {}
        Op::Fence { .. }
        | Op::CpAsyncCommit
        | Op::CpAsyncWait { .. }
        | Op::Bra { .. }
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
    d
}
