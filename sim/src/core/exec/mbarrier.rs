//! `mbarrier.*`, `cp.async.mbarrier.arrive`, `elect.sync`, `setmaxnreg` and the async-proxy
//! fences (PTX ISA 9.0 §9.7.13.15, §9.7.9.25.3.4, §9.7.13.4).
//!
//! An mbarrier is a 64-bit word in the CTA's shared memory; every operation is one of
//! `semantics::mbarrier`'s pure updates applied lane by lane in lane order (a valid order of
//! the threads' atomic operations). What happens later is left to the SM through the warp's
//! `hopper` state: phases this instruction completed (to wake suspended warps) and lanes a
//! `try_wait` suspended (their predicate is written when the phase completes; until then the
//! scoreboard holds it, so the warp stalls at its first use, as a suspended thread does).
//! `try_wait`'s time limit is taken as unbounded: a program that retries after a timeout sees
//! the same outcome, and one whose phase never completes is reported as a deadlock naming the
//! waiting warps rather than spinning until the watchdog.

use super::*;
use crate::core::async_state::MbarPark;
use crate::core::landing::Landing;
use gpusim_isa::semantics::mbarrier as mb;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_mbarrier(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<(), Fault> {
        match &inst.op {
            Op::MbarInit { space, addr, count } => {
                for l in lanes(exec) {
                    let at = self.mbar_addr(w, inst, *space, addr, l)?;
                    let n = self.val(w, count, l) & 0xFFFF_FFFF;
                    let word = mb::mbar_init(n).map_err(|e| self.mbar_fault(w, inst, l, at, e))?;
                    self.write_mbar(at, word);
                }
            }
            Op::MbarInval { space, addr } => {
                for l in lanes(exec) {
                    let at = self.mbar_addr(w, inst, *space, addr, l)?;
                    self.write_mbar(at, 0);
                }
            }
            Op::MbarArrive {
                space,
                addr,
                state,
                count,
                expect_tx,
                drop,
                no_complete,
                fence,
                ..
            } => {
                // `.release.cluster`: the warp waits as at a GPU-scope fence (for its memory
                // operations and, beside them, the fence's own cost). A remote
                // arrive leaves when the fence is done; a local one is applied now, the warp
                // held for the fence (the waiter sees it up to a fence early).
                let sent = match fence {
                    Some(level) if exec != 0 => {
                        let done = w.fence_done(self.cycle, self.fence.cycles(*level));
                        w.hold(done, crate::stats::Stall::Membar);
                        done
                    }
                    _ => self.cycle,
                };
                for l in lanes(exec) {
                    let n = count.map_or(1, |c| self.val(w, &c, l) as u32);
                    let tx = expect_tx.map_or(0, |t| self.val(w, &t, l) as u32);
                    let at = match self.mbar_target(w, inst, *space, addr, l)? {
                        (Some(rank), at) => {
                            // A remote arrive (`.shared::cluster`) lands after the DSMEM trip.
                            self.remote_mbar(w, rank, at, n, tx, sent);
                            continue;
                        }
                        (None, at) => at,
                    };
                    let u = mb::mbar_arrive(self.read_mbar(at), n, tx, *drop, *no_complete)
                        .map_err(|e| self.mbar_fault(w, inst, l, at, e))?;
                    self.write_mbar(at, u.word);
                    if u.completed {
                        w.hopper.mbar_done.push(at);
                    }
                    if let Some(r) = state {
                        w.write(r.0, l, u.state);
                    }
                }
            }
            Op::MbarTx {
                complete,
                space,
                addr,
                bytes,
                ..
            } => {
                for l in lanes(exec) {
                    let n = (self.val(w, bytes, l) & 0xFFFF_FFFF) as i64;
                    let at = match self.mbar_target(w, inst, *space, addr, l)? {
                        (Some(rank), at) if !*complete => {
                            self.remote_mbar(w, rank, at, 0, n as u32, self.cycle);
                            continue;
                        }
                        (Some(rank), at) => {
                            return Err(self.fault(
                                w,
                                inst,
                                l,
                                FaultKind::Control,
                                format!("mbarrier.complete_tx on the barrier at {at:#x} of cluster rank {rank}: gpusim completes a peer's transactions only through copies"),
                            ))
                        }
                        (None, at) => at,
                    };
                    let delta = if *complete { -n } else { n };
                    let u = mb::mbar_tx(self.read_mbar(at), delta)
                        .map_err(|e| self.mbar_fault(w, inst, l, at, e))?;
                    self.write_mbar(at, u.word);
                    if u.completed {
                        w.hopper.mbar_done.push(at);
                    }
                }
            }
            Op::MbarWait {
                blocking,
                parity,
                done,
                space,
                addr,
                phase,
                ..
            } => {
                for l in lanes(exec) {
                    let at = self.mbar_addr(w, inst, *space, addr, l)?;
                    let word = self.read_mbar(at);
                    let p = self.val(w, phase, l);
                    // A state operand names its phase by parity too (bit 63).
                    let parity = if *parity { p & 1 } else { p >> 63 };
                    let ok = mb::mbar_parity_done(word, parity);
                    w.write(done.0, l, ok as u64);
                    if !ok && *blocking {
                        self.park(
                            w,
                            MbarPark {
                                addr: at,
                                parity,
                                reg: done.0,
                                lanes: 1 << l,
                            },
                        );
                    }
                }
            }
            Op::MbarPendingCount { d, state } => {
                for l in lanes(exec) {
                    let s = self.val(w, state, l);
                    w.write(d.0, l, mb::mbar_pending_count(s) as u64);
                }
            }
            Op::CpAsyncMbarArrive { noinc, space, addr } => {
                // The arrive fires when the warp's copies issued so far have landed.
                let ready = w.async_copies.iter().map(|c| c.ready).max();
                for l in lanes(exec) {
                    let at = self.mbar_addr(w, inst, *space, addr, l)?;
                    if !noinc {
                        let word = mb::mbar_add_pending(self.read_mbar(at))
                            .map_err(|e| self.mbar_fault(w, inst, l, at, e))?;
                        self.write_mbar(at, word);
                    }
                    w.hopper.landings_out.push(Landing {
                        mbar: Some(at),
                        arrivals: 1,
                        ..Landing::control(ready.unwrap_or(self.cycle + 1).max(self.cycle + 1))
                    });
                }
            }
            Op::ElectSync { d, p, mask } => {
                if exec != 0 {
                    let l0 = exec.trailing_zeros() as usize;
                    let m = self.val(w, mask, l0) & w.valid;
                    if m & !exec != 0 {
                        return Err(self.fault(
                            w,
                            inst,
                            l0,
                            FaultKind::BarrierDivergence,
                            format!("elect.sync membermask {m:#x} names lanes that do not execute it (executing {exec:#x})"),
                        ));
                    }
                    // The leader is the lowest lane of the mask (PTX ISA 9.0 §9.7.13.x elect).
                    let leader = (m & exec).trailing_zeros() as u64;
                    for l in lanes(exec) {
                        if let Some(d) = d {
                            w.write(d.0, l, leader);
                        }
                        w.write(p.0, l, (l as u64 == leader) as u64);
                    }
                }
            }
            Op::Setmaxnreg { count, .. } => {
                if exec != 0 {
                    self.require_full_warp(w, inst, exec, "setmaxnreg.sync")?;
                    w.hopper.reg_budget = Some(*count);
                }
            }
            Op::FenceProxyAsync {
                space,
                mbarrier_init,
            } => {
                if exec != 0 {
                    // Generic-proxy writes must be visible to the async proxy (TMA reads from
                    // L2): wait for them, and write back this SM's L1 for global memory.
                    w.hold(w.mem_done, crate::stats::Stall::Membar);
                    if !mbarrier_init && matches!(space, None | Some(Space::Global)) {
                        self.flush_l1();
                    }
                }
            }
            _ => unreachable!("`execute` dispatches only mbarrier instructions here"),
        }
        Ok(())
    }

    /// An arrive (and expected transaction bytes) on a peer CTA's barrier, sent at cycle
    /// `sent` and delivered after the distributed-shared-memory latency.
    fn remote_mbar(
        &self,
        w: &mut Warp,
        rank: u32,
        at: u64,
        arrivals: u32,
        expect_tx: u32,
        sent: u64,
    ) {
        w.hopper.remote_out.push((
            rank,
            Landing {
                mbar: Some(at),
                arrivals,
                expect_tx,
                ..Landing::control(sent + self.dsmem_one_way())
            },
        ));
    }

    /// Suspend lanes: merged with an earlier park of the same barrier and phase.
    fn park(&self, w: &mut Warp, p: MbarPark) {
        match w
            .hopper
            .parks
            .iter_mut()
            .find(|q| q.addr == p.addr && q.parity == p.parity && q.reg == p.reg)
        {
            Some(q) => q.lanes |= p.lanes,
            None => w.hopper.parks.push(p),
        }
    }

    /// The shared-memory offset of lane `l`'s mbarrier in this CTA: in shared memory (a
    /// generic address must point there), 8-byte aligned, in bounds. A peer CTA's barrier is
    /// an error here (only arrives and transaction counts reach across the cluster).
    pub(super) fn mbar_addr(
        &self,
        w: &Warp,
        inst: &Inst,
        space: Space,
        addr: &Address,
        l: usize,
    ) -> Result<u64, Fault> {
        match self.mbar_target(w, inst, space, addr, l)? {
            (None, at) => Ok(at),
            (Some(r), at) => Err(self.fault(
                w,
                inst,
                l,
                FaultKind::OutOfBounds,
                format!("this mbarrier operation cannot reach the barrier at {at:#x} of cluster rank {r}: only arrive, expect_tx and copies complete on a peer CTA's barrier"),
            )),
        }
    }

    /// Lane `l`'s mbarrier as (peer rank or None for this CTA, offset), checked.
    pub(super) fn mbar_target(
        &self,
        w: &Warp,
        inst: &Inst,
        space: Space,
        addr: &Address,
        l: usize,
    ) -> Result<(Option<u32>, u64), Fault> {
        let (sp, at) = self.effective(w, space, addr, l);
        if sp != Space::Shared {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::OutOfBounds,
                format!(
                    "mbarrier address {at:#x} is in .{} memory, not .shared",
                    sp.name()
                ),
            ));
        }
        if at % 8 != 0 {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::Misaligned,
                format!("mbarrier address {at:#x} is not 8-byte aligned"),
            ));
        }
        self.cluster_target(w, inst, l, at, 8)
    }

    fn mbar_fault(&self, w: &Warp, inst: &Inst, l: usize, at: u64, e: mb::MbarError) -> Fault {
        self.fault(
            w,
            inst,
            l,
            FaultKind::Control,
            format!("{e} (mbarrier at shared address {at:#x})"),
        )
    }

    pub(super) fn read_mbar(&self, at: u64) -> u64 {
        let a = at as usize;
        u64::from_le_bytes(self.shared[a..a + 8].try_into().expect("checked"))
    }

    pub(super) fn write_mbar(&mut self, at: u64, word: u64) {
        let a = at as usize;
        self.shared[a..a + 8].copy_from_slice(&word.to_le_bytes());
        *self.epoch += 1;
    }
}
