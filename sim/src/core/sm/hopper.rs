//! The SM's side of the Hopper asynchronous machinery: landing bulk and tensor copies in
//! shared memory at their cycle, completing mbarrier transactions and arrivals, and waking
//! the warps suspended in `mbarrier.try_wait` when their phase completes.

use super::Sm;
use crate::core::async_state::{ClusterOp, MbarWaiter};
use crate::core::cluster::{ClusterLink, Outgoing};
use crate::core::cta::Cta;
use crate::core::landing::Landing;
use crate::core::program::Program;
use crate::core::warp::{Warp, WarpState};
use gpusim_isa::semantics::mbarrier as mb;
use gpusim_isa::semantics::swizzle;

impl Sm {
    /// Land every copy due by `cycle` (before any warp issues in it), then complete their
    /// mbarrier transactions and arrivals.
    pub(super) fn land_bulk(
        &mut self,
        cycle: u64,
        epoch: &mut u64,
        prog: &Program,
        dsmem_one_way: u64,
    ) {
        if self.landings.is_empty() {
            return;
        }
        let mut due = std::mem::take(&mut self.landing_buf);
        self.landings.take_due(cycle, &mut due);
        for l in due.drain(..) {
            if let Some((slot, reg, lane, v)) = l.reg_write {
                self.reply_arrived(slot, reg, lane, v, cycle, prog);
                continue;
            }
            let Some(cta) = self.ctas[l.cta].as_mut() else {
                continue;
            };
            if let Some(rr) = l.read {
                let mut b = [0u8; 8];
                let (o, n) = (rr.offset as usize, rr.size as usize);
                if let Some(src) = cta.shared.get(o..o + n) {
                    b[..n].copy_from_slice(src);
                }
                let v = crate::core::exec::extend(u64::from_le_bytes(b), rr.sign_bits, rr.reg_mask);
                let (sm, slot, linear) = rr.from;
                self.outbox.push(Outgoing::Land {
                    sm,
                    slot,
                    cta: linear,
                    landing: Landing {
                        reg_write: Some((rr.warp, rr.reg, rr.lane, v)),
                        ..Landing::control(cycle + dsmem_one_way)
                    },
                });
                continue;
            }
            write_swizzled(cta, &l);
            *epoch += 1;
            if let Some(bar) = l.mbar {
                let word = read_word(cta, bar);
                let delta = l.expect_tx as i64 - l.data.len() as i64;
                let mut u = mb::mbar_tx(word, delta).unwrap_or(mb::MbarUpdate {
                    word,
                    completed: false,
                    state: 0,
                });
                for _ in 0..l.arrivals {
                    if let Ok(v) = mb::mbar_arrive(u.word, 1, 0, false, false) {
                        u = mb::MbarUpdate {
                            completed: u.completed || v.completed,
                            ..v
                        };
                    }
                }
                write_word(cta, bar, u.word);
                if u.completed {
                    phase_completed(&mut self.hooks, cta, bar, cycle, self.id, self.order);
                    wake(&mut self.warps, cta, bar, cycle, prog);
                    self.parked.unpark_all();
                }
            }
        }
        self.landing_buf = due;
    }

    /// After warp `slot` issued: queue its copies, wake the warps whose phase it completed and
    /// suspend the lanes it parked in `try_wait`.
    pub(super) fn after_async(&mut self, slot: usize, cycle: u64, prog: &Program) {
        let Some(w) = self.warps[slot].as_mut() else {
            return;
        };
        let h = &mut w.hopper;
        if h.landings_out.is_empty()
            && h.mbar_done.is_empty()
            && h.parks.is_empty()
            && h.remote_out.is_empty()
            && h.cluster_ops.is_empty()
        {
            return;
        }
        let loads = std::mem::take(&mut h.remote_loads);
        for &r in &loads {
            match w.hopper.pending_regs.iter_mut().find(|p| p.0 == r) {
                Some(p) => p.1 += 1,
                None => w.hopper.pending_regs.push((r, 1)),
            }
            w.set_ready(&[r], u64::MAX, true);
        }
        w.hopper.remote_loads = loads;
        w.hopper.remote_loads.clear();
        let h = &mut w.hopper;
        let cslot = w.cta;
        let link = &self.ctas[cslot]
            .as_ref()
            .expect("a warp's CTA is resident")
            .cluster;
        let me = (
            self.id,
            cslot,
            self.ctas[cslot].as_ref().map_or(0, |c| c.linear),
        );
        for (rank, mut l) in h.remote_out.drain(..) {
            h.remote_done = h.remote_done.max(l.ready);
            if let Some(rr) = l.read.as_mut() {
                rr.from = me;
            }
            let (sm, slot, cta) = link.peers[rank as usize];
            self.outbox.push(Outgoing::Land {
                sm,
                slot,
                cta,
                landing: l,
            });
        }
        for op in h.cluster_ops.drain(..) {
            self.outbox.push(match op {
                ClusterOp::Arrive(threads) => Outgoing::ClusterArrive {
                    cluster: link.id,
                    threads,
                    at: h.remote_done,
                },
                ClusterOp::Wait(phases, lanes) => {
                    // Suspended until the GPU releases it (`release_cluster_wait`); under
                    // independent thread scheduling the policy parked only the waiting lanes.
                    if !w.simt.independent_threads() {
                        w.fetch_ready = u64::MAX;
                        w.fetch_reason = crate::stats::Stall::Barrier;
                    }
                    Outgoing::ClusterWait {
                        cluster: link.id,
                        sm: self.id,
                        slot,
                        phases,
                        lanes,
                    }
                }
            });
        }
        for l in h.landings_out.drain(..) {
            self.landings.push(Landing { cta: cslot, ..l });
        }
        let parks = std::mem::take(&mut h.parks);
        let done = std::mem::take(&mut h.mbar_done);
        let cta = self.ctas[cslot].as_mut().expect("a warp's CTA is resident");
        for p in &parks {
            // Until the phase completes, the predicate is not there to read.
            w.set_ready(&[p.reg], u64::MAX, false);
            cta.mbar_waiters.push(MbarWaiter { slot, park: *p });
        }
        w.refresh_ready(prog);
        for &bar in &done {
            phase_completed(&mut self.hooks, cta, bar, cycle, self.id, self.order);
            wake(&mut self.warps, cta, bar, cycle, prog);
        }
        if !done.is_empty() {
            self.parked.unpark_all();
        }
        if let Some(w) = self.warps[slot].as_mut() {
            w.hopper.parks = parks;
            w.hopper.parks.clear();
            w.hopper.mbar_done = done;
            w.hopper.mbar_done.clear();
        }
    }

    /// Record CTA `slot`'s cluster: its id, rank and where every rank runs.
    pub fn set_cluster(&mut self, slot: usize, id: u64, rank: u32, peers: Vec<(u32, usize, u64)>) {
        if let Some(c) = self.ctas[slot].as_mut() {
            c.cluster = ClusterLink { id, rank, peers };
        }
    }

    /// Queue a delivery from a peer for CTA `slot` if that is still CTA `cta`; returns whether
    /// it was queued.
    pub fn accept_landing(&mut self, slot: usize, cta: u64, l: Landing, ready: u64) -> bool {
        if self.ctas[slot].as_ref().is_some_and(|c| c.linear == cta) {
            self.landings.push(Landing {
                cta: slot,
                ready,
                ..l
            });
            true
        } else {
            false
        }
    }

    /// The cluster barrier phase that `lanes` of a warp waited on has completed: they may
    /// issue from `cycle`.
    pub fn release_cluster_wait(&mut self, slot: usize, cycle: u64, lanes: u64, prog: &Program) {
        self.parked.unpark(slot);
        let Some(w) = self.warps[slot].as_mut() else {
            return;
        };
        if !w.simt.independent_threads() {
            w.fetch_ready = cycle;
            return;
        }
        w.simt
            .barrier_released_lanes(crate::simt::CLUSTER_BARRIER, lanes);
        w.refresh_ready(prog);
        if let WarpState::Barrier(_) = w.state {
            // The whole warp waited: it resumes when the phase's writes are visible.
            w.state = WarpState::Active;
            w.fetch_ready = w.fetch_ready.max(cycle);
        }
    }

    /// A peer's reply to a DSMEM load: the lane's register gets its value; the register is
    /// readable again once no other reply for it is due.
    fn reply_arrived(
        &mut self,
        slot: usize,
        reg: u32,
        lane: usize,
        v: u64,
        cycle: u64,
        prog: &Program,
    ) {
        self.parked.unpark(slot);
        let Some(w) = self.warps[slot].as_mut() else {
            return;
        };
        w.write(reg, lane, v);
        let h = &mut w.hopper;
        if let Some(i) = h.pending_regs.iter().position(|p| p.0 == reg) {
            h.pending_regs[i].1 -= 1;
            if h.pending_regs[i].1 == 0 {
                h.pending_regs.swap_remove(i);
                w.set_ready(&[reg], cycle + 1, true);
                w.refresh_ready(prog);
            }
        }
    }

    /// The earliest cycle at which a copy lands.
    pub(super) fn next_landing(&self) -> Option<u64> {
        self.landings.next_ready()
    }

    /// A retiring CTA's copies and suspended warps go with it.
    pub(super) fn forget_cta(&mut self, cslot: usize) {
        self.landings.drop_cta(cslot);
    }
}

/// Tell the observers that a phase of `bar` completed (the asynchronous-synchronisation
/// checker's recorder keeps it).
fn phase_completed(
    hooks: &mut super::hooks::Hooks,
    cta: &Cta,
    bar: u64,
    cycle: u64,
    sm: u32,
    order: u32,
) {
    if hooks.is_empty() {
        return;
    }
    hooks.mbarrier_phase(&super::hooks::PhaseView {
        cycle,
        sm,
        order,
        cta: super::hooks::CtaId {
            linear: cta.linear,
            ctaid: cta.ctaid,
        },
        mbar: bar,
    });
}

/// Wake the waiters on `bar` whose phase has completed: their predicate lanes become true a
/// cycle later (the shared-memory word is read again as the thread resumes).
fn wake(warps: &mut [Option<Warp>], cta: &mut Cta, bar: u64, cycle: u64, prog: &Program) {
    let word = read_word(cta, bar);
    let mut i = 0;
    while i < cta.mbar_waiters.len() {
        let MbarWaiter { slot, park } = cta.mbar_waiters[i];
        if park.addr != bar || !mb::mbar_parity_done(word, park.parity) {
            i += 1;
            continue;
        }
        cta.mbar_waiters.swap_remove(i);
        let Some(w) = warps[slot].as_mut() else {
            continue;
        };
        for l in (0..w.warp_size as usize).filter(|l| park.lanes >> l & 1 == 1) {
            w.write(park.reg, l, 1);
        }
        // The register is readable once no other suspension of the warp still writes it.
        let still = cta
            .mbar_waiters
            .iter()
            .any(|x| x.slot == slot && x.park.reg == park.reg);
        if !still {
            w.set_ready(&[park.reg], cycle + 1, false);
            w.refresh_ready(prog);
        }
    }
}

fn read_word(cta: &Cta, at: u64) -> u64 {
    let a = at as usize;
    cta.shared
        .get(a..a + 8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

fn write_word(cta: &mut Cta, at: u64, v: u64) {
    let a = at as usize;
    if let Some(b) = cta.shared.get_mut(a..a + 8) {
        b.copy_from_slice(&v.to_le_bytes());
    }
}

/// Write a landing's bytes 16 at a time through its swizzle (checked at issue to fit).
fn write_swizzled(cta: &mut Cta, l: &Landing) {
    for (k, chunk) in l.data.chunks(16).enumerate() {
        let a = swizzle(l.swizzle, l.base + 16 * k as u64) as usize;
        if let Some(dst) = cta.shared.get_mut(a..a + chunk.len()) {
            dst.copy_from_slice(chunk);
        }
    }
}

/// A suspended `try_wait` for fault reports: the barrier, the phase awaited and what the
/// current phase still lacks.
pub(super) fn describe_park(cta: &Cta, p: &crate::core::async_state::MbarPark) -> String {
    let s = mb::MbarState::decode(read_word(cta, p.addr));
    format!(
        "suspended in mbarrier.try_wait (lanes {:#x}) on the barrier at shared {:#x} for the phase of parity {}; its current phase still waits for {} of {} arrivals and {} transaction bytes",
        p.lanes, p.addr, p.parity, s.pending, s.expected, s.tx
    )
}
