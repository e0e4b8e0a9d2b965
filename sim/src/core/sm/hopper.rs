//! The SM's side of the Hopper asynchronous machinery: landing bulk and tensor copies in
//! shared memory at their cycle, completing mbarrier transactions and arrivals, and waking
//! the warps suspended in `mbarrier.try_wait` when their phase completes.

use super::Sm;
use crate::core::async_state::MbarWaiter;
use crate::core::cta::Cta;
use crate::core::landing::Landing;
use crate::core::program::Program;
use crate::core::warp::Warp;
use gpusim_isa::semantics::mbarrier as mb;
use gpusim_isa::semantics::swizzle;

impl Sm {
    /// Land every copy due by `cycle` (before any warp issues in it), then complete their
    /// mbarrier transactions and arrivals.
    pub(super) fn land_bulk(&mut self, cycle: u64, epoch: &mut u64, prog: &Program) {
        if self.landings.is_empty() {
            return;
        }
        let mut due = std::mem::take(&mut self.landing_buf);
        self.landings.take_due(cycle, &mut due);
        for l in due.drain(..) {
            let Some(cta) = self.ctas[l.cta].as_mut() else {
                continue;
            };
            write_swizzled(cta, &l);
            *epoch += 1;
            if let Some(bar) = l.mbar {
                let word = read_word(cta, bar);
                let mut u = mb::mbar_tx(word, -(l.data.len() as i64)).unwrap_or(mb::MbarUpdate {
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
                    wake(&mut self.warps, cta, bar, cycle, prog);
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
        if h.landings_out.is_empty() && h.mbar_done.is_empty() && h.parks.is_empty() {
            return;
        }
        let cslot = w.cta;
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
            wake(&mut self.warps, cta, bar, cycle, prog);
        }
        if let Some(w) = self.warps[slot].as_mut() {
            w.hopper.parks = parks;
            w.hopper.parks.clear();
            w.hopper.mbar_done = done;
            w.hopper.mbar_done.clear();
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
