//! `wgmma` (PTX ISA 9.0 §9.7.15) per warp: warp q = warp % 4 of its warpgroup computes its 16
//! rows of D — exactly the hardware's per-warp slice — from A (shared memory through a matrix
//! descriptor, or the warp's registers) and B (shared memory), read from the CTA's shared memory
//! at issue (`isa::semantics::wgmma`). `.sync.aligned` is enforced: all 32 lanes execute, the
//! CTA holds the whole warpgroup, and the group's four warps execute the same sequence of wgmma
//! instructions (`wgmma_state::WarpgroupLog`); anything else is a barrier-divergence fault.
//! When D becomes ready and how long the tensor unit is held is `wgmma_state::time_issue`.

use super::*;
use crate::core::wgmma_state::WarpgroupLog;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_wgmma(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<(), Fault> {
        // A guard false on every lane skips it uniformly (`.aligned`: the guard must be the
        // same in every thread of the warpgroup).
        if exec == 0 {
            return Ok(());
        }
        let name = match &inst.op {
            Op::Wgmma(_) => "wgmma.mma_async",
            Op::WgmmaFence => "wgmma.fence",
            Op::WgmmaCommit => "wgmma.commit_group",
            Op::WgmmaWait { .. } => "wgmma.wait_group",
            _ => unreachable!("`execute` dispatches only wgmma here"),
        };
        self.require_full_warp(w, inst, exec, name)?;
        self.require_warpgroup(w, inst, name)?;
        match &inst.op {
            Op::WgmmaFence => {}
            Op::WgmmaCommit => w.wgmma.group += 1,
            Op::WgmmaWait { n } => {
                if let Some(t) = w.wgmma.wait_until(*n as u64, self.cycle) {
                    w.hold(t, crate::stats::Stall::Membar);
                }
            }
            Op::Wgmma(op) => self.wgmma_mma(w, inst, op)?,
            _ => unreachable!("matched above"),
        }
        Ok(())
    }

    /// The CTA must hold all four warps of the warp's group, and the group's warps must
    /// execute the same wgmma instructions in the same order (PTX ISA 9.0 §9.7.15.5: the
    /// `.aligned` qualifier; a mismatch is undefined behaviour, reported here).
    fn require_warpgroup(&mut self, w: &mut Warp, inst: &Inst, name: &str) -> Result<(), Fault> {
        let threads: u64 = self.geom.block.iter().map(|&b| b as u64).product();
        let warps = threads.div_ceil(w.warp_size.max(1) as u64);
        let wg = w.warp_in_cta / 4;
        if warps < 4 * (wg as u64 + 1) {
            return Err(self.fault(
                w,
                inst,
                0,
                FaultKind::BarrierDivergence,
                format!(
                    "`{name}` executed by warp {} of a CTA of {warps} warp(s): its warpgroup {wg} (warps {}..={}) is incomplete",
                    w.warp_in_cta,
                    4 * wg,
                    4 * wg + 3
                ),
            ));
        }
        let at = (w.func().0, w.pc());
        let seq = w.wgmma.seq;
        w.wgmma.seq += 1;
        record(self.wgmma_log, w.warp_in_cta, seq, at).map_err(|(other, (f, pc))| {
            let f = self.prog.module.function(FuncId(f));
            let theirs = f
                .body
                .get(pc as usize)
                .map(|i| format!("`{}` at line {}", print::inst_to_ptx(&self.prog.module, f, i), i.span.line))
                .unwrap_or_default();
            self.fault(
                w,
                inst,
                0,
                FaultKind::BarrierDivergence,
                format!(
                    "warpgroup {wg} diverged: warp {} executed `{name}` (pc {}) as its wgmma instruction #{seq}, where warp {other} executed pc {pc} of `{}` {theirs}",
                    w.warp_in_cta,
                    at.1,
                    f.name
                ),
            )
        })
    }

    /// One `wgmma.mma_async` for this warp's 16 rows.
    fn wgmma_mma(&mut self, w: &mut Warp, inst: &Inst, op: &Wgmma) -> Result<(), Fault> {
        let spec = sem::WgmmaSpec {
            n: op.n as usize,
            dty: op.dty,
            aty: op.aty,
            bty: op.bty,
            neg_a: op.neg_a,
            neg_b: op.neg_b,
        };
        let k = spec.k();
        let q = (w.warp_in_cta % 4) as usize;
        let scale_d = self.uniform(w, inst, &op.scale_d, "scale-d")? & 1 == 1;
        if self.skip_tensor_math {
            return self.wgmma_bounds_only(w, inst, op, k, q);
        }
        let a = match &op.a {
            WgmmaA::Desc(o) => {
                let bits = self.uniform(w, inst, o, "a-desc")?;
                let desc = sem::MatrixDesc::decode(bits);
                let mut a = Vec::with_capacity(sem::SLICE_ROWS * k);
                for r in 0..sem::SLICE_ROWS {
                    for kk in 0..k {
                        let at = (desc, op.trans_a, op.aty.size(), 16 * q + r, kk);
                        a.push(self.shared_elem(w, inst, "A", bits, at)?);
                    }
                }
                a
            }
            WgmmaA::Regs(l) => {
                let mut regs = [[0u64; sem::A_REGS]; sem::WGMMA_LANES];
                for (lane, lr) in regs.iter_mut().enumerate() {
                    for (i, r) in l.as_slice().iter().enumerate().take(sem::A_REGS) {
                        lr[i] = w.read(r.0, lane);
                    }
                }
                sem::a_from_regs(op.aty, &regs)
            }
        };
        let bbits = self.uniform(w, inst, &op.b, "b-desc")?;
        let bdesc = sem::MatrixDesc::decode(bbits);
        let n = spec.n;
        let mut b = Vec::with_capacity(k * n);
        for kk in 0..k {
            for j in 0..n {
                let at = (bdesc, op.trans_b, op.bty.size(), j, kk);
                b.push(self.shared_elem(w, inst, "B", bbits, at)?);
            }
        }
        // The power model's operand bit density (`power::model::data_factor`).
        let width = op.aty.size() * 8;
        let elems = a.iter().chain(&b).map(|&e| e as u64);
        self.energy.tensor_operands(elems, width);
        let nregs = op.d.len();
        let mut d = vec![0u64; sem::WGMMA_LANES * nregs];
        for lane in 0..sem::WGMMA_LANES {
            for (i, r) in op.d.as_slice().iter().enumerate() {
                d[lane * nregs + i] = w.read(r.0, lane);
            }
        }
        if sem::wgmma_slice(&spec, &a, &b, &mut d, scale_d).is_none() {
            return Err(self.fault(
                w,
                inst,
                0,
                FaultKind::Control,
                format!(
                    "`wgmma.mma_async.m64n{}k{k}.{}.{}.{}` is not a defined form",
                    spec.n,
                    spec.dty.name(),
                    spec.aty.name(),
                    spec.bty.name()
                ),
            ));
        }
        for lane in 0..sem::WGMMA_LANES {
            for (i, r) in op.d.as_slice().iter().enumerate() {
                w.write(r.0, lane, d[lane * nregs + i]);
            }
        }
        Ok(())
    }

    /// A timing-only `wgmma`: the shared-memory operands are bounds-checked 16 bytes at a
    /// time (each 16-byte chunk is contiguous in every layout and swizzle) and not read.
    /// A (descriptor, operand shape) that passed is remembered by the warp (a GEMM cycles
    /// through a few dozen), so the check runs once per distinct operand.
    fn wgmma_bounds_only(
        &self,
        w: &mut Warp,
        inst: &Inst,
        op: &Wgmma,
        k: usize,
        q: usize,
    ) -> Result<(), Fault> {
        let mut operands = vec![("B", op.b, op.trans_b, op.bty.size(), 0, op.n as usize)];
        if let WgmmaA::Desc(o) = &op.a {
            operands.push(("A", *o, op.trans_a, op.aty.size(), 16 * q, 16));
        }
        for (which, o, mn_major, size, first, rows) in operands {
            let bits = self.uniform(w, inst, &o, "descriptor")?;
            let key = [
                bits,
                (rows as u64) << 32
                    | (first as u64) << 16
                    | (k as u64) << 4
                    | (size as u64) << 1
                    | mn_major as u64,
                self.shared.len() as u64,
            ];
            let slot = checked_slot(&key);
            if w.hopper.checked.get(slot) == Some(&key) {
                continue;
            }
            let desc = sem::MatrixDesc::decode(bits);
            let per = (16 / size as usize).max(1);
            let (mn_step, k_step) = if mn_major { (per, 1) } else { (1, per) };
            for mn in (first..first + rows).step_by(mn_step) {
                for kk in (0..k).step_by(k_step) {
                    self.shared_elem(w, inst, which, bits, (desc, mn_major, size, mn, kk))?;
                }
            }
            if w.hopper.checked.is_empty() {
                w.hopper.checked = vec![[u64::MAX; 3]; 64];
            }
            w.hopper.checked[checked_slot(&key)] = key;
        }
        Ok(())
    }

    /// An operand every lane of the warp must give the same value (descriptors, scale-d).
    fn uniform(&self, w: &Warp, inst: &Inst, o: &Operand, what: &str) -> Result<u64, Fault> {
        let v0 = self.val(w, o, 0);
        for l in 1..sem::WGMMA_LANES {
            let v = self.val(w, o, l);
            if v != v0 {
                return Err(self.fault(
                    w,
                    inst,
                    l,
                    FaultKind::BarrierDivergence,
                    format!("`wgmma` {what} differs between lanes 0 ({v0:#x}) and {l} ({v:#x}); it must be uniform across the warpgroup"),
                ));
            }
        }
        Ok(v0)
    }

    /// The bits of element (mn, k) of a shared-memory operand, bounds-checked.
    fn shared_elem(
        &self,
        w: &Warp,
        inst: &Inst,
        which: &str,
        desc_bits: u64,
        (desc, mn_major, size, mn, k): (sem::MatrixDesc, bool, u32, usize, usize),
    ) -> Result<u32, Fault> {
        let addr = sem::element_addr(&desc, mn_major, size, mn, k);
        let end = addr.checked_add(size as u64);
        match end {
            Some(e) if e <= self.shared.len() as u64 => {
                let mut v = 0u32;
                for i in 0..size as usize {
                    v |= (self.shared[addr as usize + i] as u32) << (8 * i);
                }
                Ok(v)
            }
            _ => Err(self.fault(
                w,
                inst,
                0,
                FaultKind::OutOfBounds,
                format!(
                    "`wgmma` {which} element ({mn}, {k}) at shared address {addr:#x} ({size} bytes) is outside the CTA's {} bytes of shared memory (descriptor {desc_bits:#x})",
                    self.shared.len()
                ),
            )),
        }
    }
}

/// `WarpgroupLog::record`, with a mismatch as (the other warp, its (function, pc)).
fn record(
    log: &mut WarpgroupLog,
    warp: u32,
    seq: u64,
    at: (u32, u32),
) -> Result<(), (u32, (u32, u32))> {
    log.record(warp, seq, at).map_err(|m| (m.warp, m.at))
}

/// The slot of a checked operand in the warp's 64-entry cache (Fibonacci hashing: stage and
/// k-step offsets are multiples of large powers of two).
fn checked_slot(key: &[u64; 3]) -> usize {
    let h = (key[0] ^ key[1].rotate_left(29) ^ key[2].rotate_left(47))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 58) as usize
}
