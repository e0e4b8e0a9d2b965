//! `wmma.load` / `wmma.store` as warp collectives (PTX ISA 9.0 §9.7.14.4.3–4): each lane
//! touches its own fragment's elements (`isa::semantics::wmma_elements`) at
//! p + offset(row, column, stride) in global or shared memory (directly or through a generic
//! address). The three phases of the memory path are kept: addresses, alignment and bounds
//! for every lane first (a fault leaves no effect), then the `ld`/`st` programs of the
//! element accesses (global values through the caches, coalesced per line; shared ones timed
//! by their bank-conflict degree), then the registers.
//!
//! Each lane uses its own `p` and `stride` (PTX requires them uniform; gpusim does not check).
//! Alignment (§9.7.14.4.2): p and stride × element size must be multiples of the fragment's
//! size in bytes (its register count × 4). A stride below the default (the leading
//! dimension), undefined in PTX, is taken as given: rows then overlap.
//!
//! Under the component memory system the global elements' operations are collected for it
//! (`core::pending`): a store's values travel in them, and a load's registers are written at
//! completion, each packed register from its elements' line bytes (`RegSrc::LinePart`).

use super::memory::{Prog, Timing};
use super::*;
use crate::core::pending::RegSrc;
use crate::mem::hierarchy::Txn;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_wmma(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<Option<MemSummary>, Fault> {
        let (load, frag, layout, shape, space, ty, regs, addr, stride) = match &inst.op {
            Op::WmmaLoad {
                frag,
                layout,
                shape,
                space,
                ty,
                d,
                addr,
                stride,
            } => (true, *frag, *layout, *shape, *space, *ty, d, addr, stride),
            Op::WmmaStore {
                layout,
                shape,
                space,
                ty,
                addr,
                src,
                stride,
            } => (
                false,
                WmmaFrag::C,
                *layout,
                *shape,
                *space,
                *ty,
                src,
                addr,
                stride,
            ),
            _ => unreachable!("`execute` dispatches only wmma.load and wmma.store here"),
        };
        let name = if load { "wmma.load" } else { "wmma.store" };
        let what = if load { "load" } else { "store" };
        // A guard false on every lane skips it uniformly, which `.aligned` allows.
        if exec == 0 {
            return Ok(None);
        }
        self.require_full_warp(w, inst, exec, &format!("{name}.sync"))?;
        let Some(nregs) = sem::wmma_regs(frag, shape, ty) else {
            return Err(self.fault(
                w,
                inst,
                0,
                FaultKind::Control,
                format!(
                    "`{name}` of matrix {} is not defined for .{} .{}",
                    frag.name(),
                    shape.name(),
                    ty.name()
                ),
            ));
        };
        let esize = ty.size();
        let frag_bytes = 4 * nregs as u64;
        w.mem_accesses.clear();
        w.mem_global.clear();
        w.mem_lanes.clear();
        let mut first_space = None;
        let default = sem::wmma_default_stride(frag, shape, layout) as u64;
        // Phase 1: every element's address, checked; per lane, the elements in fragment order
        // follow each other in `w.mem_lanes`.
        let mut per_lane = 0;
        for l in 0..sem::MMA_LANES {
            let (sp, base) = self.effective(w, space, addr, l);
            if !matches!(sp, Space::Global | Space::Generic | Space::Shared) {
                return Err(self.fault(
                    w,
                    inst,
                    l,
                    FaultKind::OutOfBounds,
                    format!(
                        "`{name}` address {base:#x} of lane {l} is in {} space, not global or shared",
                        sp.name()
                    ),
                ));
            }
            let stride = match stride {
                Some(o) => self.val(w, o, l) & 0xFFFF_FFFF,
                None => default,
            };
            let row_step = stride * esize as u64;
            if base % frag_bytes != 0 || row_step % frag_bytes != 0 {
                return Err(self.fault(
                    w,
                    inst,
                    l,
                    FaultKind::Misaligned,
                    format!(
                        "misaligned `{name}` of lane {l}: address {base:#x} and stride {stride} × {esize} bytes must be multiples of the {frag_bytes}-byte fragment"
                    ),
                ));
            }
            let elems = sem::wmma_elements(frag, shape, ty, l);
            per_lane = elems.len();
            for (r, c) in elems {
                let off = sem::wmma_offset(layout, stride, r, c) * esize as u64;
                let Some(a) = base.checked_add(off) else {
                    return Err(self.fault(
                        w,
                        inst,
                        l,
                        FaultKind::OutOfBounds,
                        format!("`{name}` element ({r}, {c}) of lane {l} lies past the end of the address space (base {base:#x}, stride {stride})"),
                    ));
                };
                let at = Access {
                    lane: l,
                    space: sp,
                    addr: a,
                    size: esize,
                };
                self.check(w, inst, at, what)?;
                self.record(w, &mut first_space, l, sp, a, esize);
                w.mem_lanes.push((l as u32, sp, a, esize));
            }
        }
        let prog = Prog {
            kind: if load { "ld" } else { "st" },
            cop: None,
            volatile: false,
        };
        let mut t = Timing {
            release: self.cycle,
            end: self.cycle,
        };
        if load {
            let wrote = self.run_programs(w, inst, prog, first_space, &mut t, |_, _| {})?;
            let lb = self.mem.sm.l1.line_bytes();
            let defer = self.mem.issuing.collecting && !self.mem.issuing.ops.is_empty();
            let mut vals = vec![0u64; per_lane];
            for l in 0..sem::MMA_LANES {
                let (_, sp, _, _) = w.mem_lanes[l * per_lane];
                if defer && sp != Space::Shared {
                    self.defer_fragment(w, l * per_lane, l, (frag, shape, ty), regs, lb);
                    continue;
                }
                let mut complete = true;
                for (e, v) in vals.iter_mut().enumerate() {
                    let (_, sp, a, n) = w.mem_lanes[l * per_lane + e];
                    let got = if sp == Space::Shared {
                        let a = a as usize;
                        wrote.then(|| load_le(&self.shared[a..a + n as usize]))
                    } else {
                        line_value(&w.mem_txns, a, n, lb)
                    };
                    match got {
                        Some(x) => *v = x,
                        None => complete = false,
                    }
                }
                // A program that did not write the registers leaves the lane's fragment as is.
                if complete {
                    let packed = sem::wmma_pack(frag, shape, ty, &vals);
                    for (i, r) in regs.as_slice().iter().enumerate() {
                        if defer {
                            self.defer_write(w, r.0, l, RegSrc::Value(packed[i]));
                        } else {
                            w.write(r.0, l, packed[i]);
                        }
                    }
                }
            }
        } else {
            // Shared values are stored now; global ones go into their lines' operations.
            let mut values = Vec::new();
            for l in 0..sem::MMA_LANES {
                let mut raw = [0u64; sem::WMMA_MAX_REGS];
                for (i, r) in regs.as_slice().iter().enumerate() {
                    raw[i] = w.read(r.0, l);
                }
                for (e, v) in sem::wmma_unpack(frag, shape, ty, &raw)
                    .into_iter()
                    .enumerate()
                {
                    let (_, sp, a, n) = w.mem_lanes[l * per_lane + e];
                    if sp == Space::Shared {
                        let a = a as usize;
                        let slot = &mut self.shared[a..a + n as usize];
                        if load_le(slot) != v {
                            store_le(slot, v);
                            *self.epoch += 1;
                        }
                    } else {
                        values.push((a, n, v));
                    }
                }
            }
            self.run_programs(w, inst, prog, first_space, &mut t, |txns, lb| {
                for &(a, n, v) in &values {
                    let line = a - a % lb;
                    if let Ok(j) = txns.binary_search_by_key(&line, |x| x.line) {
                        let o = (a - line) as usize;
                        store_le(&mut txns[j].data[o..o + n as usize], v);
                    }
                }
            })?;
        }
        Ok(first_space.map(|sp| self.summarise(w, sp, t.release, t.end)))
    }
}

impl ExecEnv<'_> {
    /// Lane `l`'s fragment registers `regs`, written when the operations of its elements
    /// (from `w.mem_lanes[first..]`, in fragment order) complete: each register from the
    /// elements `wmma_pack` puts in it.
    fn defer_fragment(
        &mut self,
        w: &Warp,
        first: usize,
        l: usize,
        (frag, shape, ty): (WmmaFrag, WmmaShape, WmmaType),
        regs: &RegVec,
        lb: u64,
    ) {
        let bits = 8 * ty.size() as usize;
        for (i, r) in regs.as_slice().iter().enumerate() {
            let elems = sem::wmma_reg_elements(frag, shape, ty, i);
            let start = elems.start;
            for e in elems {
                let (_, _, a, n) = w.mem_lanes[first + e];
                let line = a - a % lb;
                let Ok(op) = w.mem_txns.binary_search_by_key(&line, |x| x.line) else {
                    continue;
                };
                let src = RegSrc::LinePart {
                    op: op as u16,
                    off: (a - line) as u8,
                    size: n as u8,
                    shift: (bits * (e - start)) as u8,
                    first: e == start,
                };
                self.defer_write(w, r.0, l, src);
            }
        }
    }
}

/// The `n` bytes at global address `a` from its line's operation, if that program wrote the
/// registers. Elements are aligned to their size, so one never spans two lines.
fn line_value(txns: &[Txn], a: u64, n: u32, line_bytes: u64) -> Option<u64> {
    let line = a - a % line_bytes;
    let j = txns.binary_search_by_key(&line, |x| x.line).ok()?;
    let txn = &txns[j];
    let o = (a - line) as usize;
    txn.wrote_regs
        .then(|| load_le(&txn.data[o..o + n as usize]))
}
