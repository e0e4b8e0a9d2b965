//! Barriers, fences and `nanosleep`: the barrier operation is returned for the SM to apply;
//! fences wait for the warp's memory operations (and GPU-scope ones flush the L1); a
//! `nanosleep` keeps the warp from issuing for a bounded number of cycles.

use super::*;

/// The longest `nanosleep`, in cycles. PTX only bounds the sleep to [0, 2t] nanoseconds for a
/// request of t ns (PTX ISA 8.x `nanosleep`); gpusim sleeps min(t, 32) cycles, which stays in
/// that interval at any clock of 0.5 GHz or more. The instruction itself issues to the branch
/// unit with the branch latency, and the warp cannot issue again before it wakes (the wait is
/// counted as a `no_instruction` stall).
pub const NANOSLEEP_CYCLES: u64 = 32;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_sync(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
        out: &mut Executed,
    ) -> Result<(), Fault> {
        let active = w.simt.active_mask();
        match &inst.op {
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
                    let count = count.map(|c| self.val(w, &c, l0));
                    if let Some(problem) = self.barrier_operands(w, *kind, barid, count) {
                        return Err(self.fault(w, inst, l0, FaultKind::InvalidOperand, problem));
                    }
                    let count = count.map(|c| c as u32);
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
                    // Independent thread scheduling: only the arriving group waits.
                    if w.simt.independent_threads() && !matches!(kind, BarKind::Arrive) {
                        out.flow = Flow::BarrierWait(barid as usize);
                    }
                }
            }
            Op::WarpSync { mask } => {
                if exec != 0 {
                    let l0 = exec.trailing_zeros() as usize;
                    let m = self.val(w, mask, l0) & w.valid;
                    if w.simt.independent_threads() {
                        // PTX ISA bar.warp.sync: wait for every non-exited lane of the mask.
                        out.flow = Flow::WarpSync(m);
                    } else if m & !w.simt.active_mask() & !w.simt.exited_mask() != 0 {
                        return Err(self.fault(w, inst, l0, FaultKind::BarrierDivergence, format!("bar.warp.sync mask {m:#x} names lanes that are not converged with this path (active {:#x})", w.simt.active_mask())));
                    }
                }
            }
            // A fence holds the warp until its outstanding memory operations have completed
            // (Habermaier §5.6 canBeScheduled: no thread may have a pending membar) and for
            // the fence's own cost at its scope (`sm.fence`), which runs beside the drain.
            // A GPU- or system-scope fence also fires the formal `flush` rule on this SM's L1,
            // so that its loads after the fence see other SMs' writes (docs/memory.md); a CTA's
            // threads share the SM, so `membar.cta` needs no flush.
            Op::Fence { level } => {
                if exec != 0 {
                    let done = w.fence_done(self.cycle, self.fence.cycles(*level));
                    w.hold(done, crate::stats::Stall::Membar);
                    if *level != FenceLevel::Cta {
                        self.flush_l1();
                    }
                }
            }
            Op::Nop => {}
            Op::Nanosleep { t } => {
                // The warp sleeps min(t, NANOSLEEP_CYCLES) cycles, t taken as the smallest
                // request among its executing lanes (the ISA lets a warp's sleepers wake
                // together).
                if let Some(t) = lanes(exec).map(|l| self.val(w, t, l) & 0xFFFF_FFFF).min() {
                    let wake = self.cycle + t.min(NANOSLEEP_CYCLES);
                    w.hold(wake, crate::stats::Stall::Sleeping);
                }
            }
            _ => unreachable!("`execute` dispatches only sync instructions here"),
        }
        Ok(())
    }

    /// What is wrong with a barrier's id and thread count, if anything (PTX ISA `barrier`:
    /// ids 0 through 15; a thread count that is a multiple of the warp size, non-zero for
    /// `arrive`). A count above the CTA's threads could never be reached: reported here, at
    /// the instruction, rather than as the deadlock it would become.
    fn barrier_operands(
        &self,
        w: &Warp,
        kind: BarKind,
        barid: u64,
        count: Option<u64>,
    ) -> Option<String> {
        if barid >= super::super::cta::N_BARRIERS as u64 {
            return Some(format!("barrier id {barid} is out of range 0..15"));
        }
        let count = count?;
        let ws = u64::from(w.warp_size);
        let threads: u64 = self.geom.block.iter().map(|&d| u64::from(d)).product();
        if count % ws != 0 {
            Some(format!(
                "barrier {barid}: thread count {count} is not a multiple of the warp size ({ws})"
            ))
        } else if count == 0 && kind == BarKind::Arrive {
            Some(format!(
                "barrier {barid}: `bar.arrive` needs a non-zero thread count"
            ))
        } else if count > threads {
            Some(format!(
                "barrier {barid}: thread count {count} exceeds the CTA's {threads} threads, so it could never complete"
            ))
        } else {
            None
        }
    }

    /// The formal `flush` of this SM's L1 (dirty global lines written back, all dropped):
    /// here, or under the component memory system by it, whose links then carry the
    /// write-backs (`Issuing::flush`).
    pub(super) fn flush_l1(&mut self) {
        if self.mem.submit {
            self.mem.issuing.flush = true;
            return;
        }
        let (Some(back), Some(global)) = (self.mem.back.as_deref_mut(), self.global.as_deref_mut())
        else {
            unreachable!("fences run in the memory exchange (`uses_memory_system`)");
        };
        crate::mem::hierarchy::flush_l1_global(
            back,
            self.mem.sm,
            self.sm_id,
            global,
            self.cycle,
            self.mem.counters,
            &mut crate::mem::hierarchy::Timing::Calendars,
        );
    }
}
