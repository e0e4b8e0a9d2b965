//! Warp-level matrix multiply-accumulate (`mma.sync.aligned`) as a warp collective: the lanes'
//! fragments are gathered, `isa::semantics::mma` computes D = A·B + C for the whole warp, and
//! each lane receives its d registers (`isa::semantics::mma_int` for the .s8/.u8 forms,
//! `mma_m884` for the quad-pair m8n8k4, `wmma_mma` for `wmma.mma`). Its timing is the tensor
//! unit's (`sm.units.tensor`), scaled by the shape (`tensor_passes`).

use super::*;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_tensor(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<(), Fault> {
        let (d, a, b, c) = match &inst.op {
            Op::Mma { d, a, b, c, .. }
            | Op::MmaInt { d, a, b, c, .. }
            | Op::MmaM884 { d, a, b, c, .. }
            | Op::WmmaMma { d, a, b, c, .. } => (d, a, b, c),
            _ => unreachable!("`execute` dispatches only mma and wmma.mma here"),
        };
        // A guard false on every lane skips it uniformly, which `.aligned` allows (PTX ISA 9.0
        // §9.7.14.5.14: the condition must evaluate identically across the warp).
        if exec == 0 {
            return Ok(());
        }
        let name = match inst.op {
            Op::WmmaMma { .. } => "wmma.mma.sync",
            _ => "mma.sync",
        };
        self.require_full_warp(w, inst, exec, name)?;
        if matches!(inst.op, Op::MmaM884 { .. } | Op::WmmaMma { .. }) {
            return self.exec_wide_mma(w, inst, (d, a, b, c));
        }
        // A timing-only run leaves D as it is (`RunOptions::skip_tensor_math`).
        if self.skip_tensor_math {
            return Ok(());
        }
        let mut fa = [[0u64; 4]; sem::MMA_LANES];
        let mut fb = [[0u64; 2]; sem::MMA_LANES];
        let mut fc = [[0u64; 4]; sem::MMA_LANES];
        for l in 0..sem::MMA_LANES {
            for (i, r) in a.as_slice().iter().enumerate() {
                fa[l][i] = w.read(r.0, l);
            }
            for (i, r) in b.as_slice().iter().enumerate() {
                fb[l][i] = w.read(r.0, l);
            }
            for (i, r) in c.as_slice().iter().enumerate() {
                fc[l][i] = w.read(r.0, l);
            }
        }
        // The power model's operand bit density: the A and B registers as they are packed.
        let (na, nb) = (a.as_slice().len(), b.as_slice().len());
        let words = fa.iter().flat_map(|r| r[..na].iter().copied());
        self.energy.tensor_operands(words, 32);
        let words = fb.iter().flat_map(|r| r[..nb].iter().copied());
        self.energy.tensor_operands(words, 32);
        let out = match &inst.op {
            Op::MmaInt {
                shape,
                aty,
                bty,
                satfinite,
                ..
            } => sem::mma_int(*shape, *aty, *bty, *satfinite, &fa, &fb, &fc),
            Op::Mma { shape, ty, .. } => match sem::mma(*shape, *ty, &fa, &fb, &fc) {
                Some(out) => out,
                None => {
                    return Err(self.fault(
                        w,
                        inst,
                        0,
                        FaultKind::Control,
                        format!(
                            "`mma.{}` is not defined for .{} inputs",
                            shape.name(),
                            ty.name()
                        ),
                    ))
                }
            },
            _ => unreachable!("matched above"),
        };
        // All inputs were read above, so d may name the same registers as c.
        for (l, regs) in out.iter().enumerate() {
            for (i, r) in d.as_slice().iter().enumerate() {
                w.write(r.0, l, regs[i]);
            }
        }
        Ok(())
    }
}

impl ExecEnv<'_> {
    /// `mma.m8n8k4` and `wmma.mma`, whose fragments take up to eight registers per operand.
    fn exec_wide_mma(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        (d, a, b, c): (&RegVec, &RegVec, &RegVec, &RegVec),
    ) -> Result<(), Fault> {
        let gather = |v: &RegVec| {
            let mut f = [[0u64; sem::WMMA_MAX_REGS]; sem::MMA_LANES];
            for (l, regs) in f.iter_mut().enumerate() {
                for (i, r) in v.as_slice().iter().enumerate() {
                    regs[i] = w.read(r.0, l);
                }
            }
            f
        };
        let (fa, fb, fc) = (gather(a), gather(b), gather(c));
        let out = match &inst.op {
            Op::MmaM884 {
                alayout,
                blayout,
                dty,
                cty,
                ..
            } => {
                let two = |f: &sem::WmmaFragments| {
                    let mut o = [[0u64; 2]; sem::MMA_LANES];
                    for (x, y) in o.iter_mut().zip(f) {
                        x.copy_from_slice(&y[..2]);
                    }
                    o
                };
                sem::mma_m884(*alayout, *blayout, *dty, *cty, &two(&fa), &two(&fb), &fc)
            }
            Op::WmmaMma {
                shape,
                ab,
                dty,
                cty,
                satfinite,
                ..
            } => match sem::wmma_mma(*shape, *ab, *dty, *cty, *satfinite, &fa, &fb, &fc) {
                Some(out) => out,
                None => {
                    return Err(self.fault(
                        w,
                        inst,
                        0,
                        FaultKind::Control,
                        format!(
                            "`wmma.mma.{}` is not defined for .{} multiplicands with .{} / .{} accumulators",
                            shape.name(),
                            ab.name(),
                            dty.name(),
                            cty.name()
                        ),
                    ))
                }
            },
            _ => unreachable!("exec_wide_mma runs mma.m8n8k4 and wmma.mma"),
        };
        // All inputs were read above, so d may name the same registers as c.
        for (l, regs) in out.iter().enumerate() {
            for (i, r) in d.as_slice().iter().enumerate() {
                w.write(r.0, l, regs[i]);
            }
        }
        Ok(())
    }

    /// `.sync.aligned` warp collectives (`mma.sync`, `ldmatrix`, `stmatrix`): their fragment
    /// layouts are defined for 32-lane warps, and every thread of the warp executes the same
    /// instruction, none exited (PTX ISA §9.7.14.5.14); anything else is a divergent
    /// warp-wide synchronisation, reported like a divergent barrier.
    pub(super) fn require_full_warp(
        &self,
        w: &Warp,
        inst: &Inst,
        exec: Mask,
        name: &str,
    ) -> Result<(), Fault> {
        let first = exec.trailing_zeros() as usize;
        if w.warp_size as usize != sem::MMA_LANES {
            return Err(self.fault(
                w,
                inst,
                first,
                FaultKind::Launch,
                format!(
                    "`{name}` needs 32-lane warps (its fragment layouts are defined for 32), but sm.warp_size is {}",
                    w.warp_size
                ),
            ));
        }
        let full: Mask = (1 << sem::MMA_LANES) - 1;
        if exec != full {
            return Err(self.fault(
                w,
                inst,
                first,
                FaultKind::BarrierDivergence,
                format!(
                    "`{name}.aligned` executed by lanes {exec:#x} of a warp that must execute it with all 32 lanes (active lanes {:#x}, live lanes {:#x})",
                    w.simt.active_mask(),
                    w.valid & !w.simt.exited_mask()
                ),
            ));
        }
        Ok(())
    }
}
