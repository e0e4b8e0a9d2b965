//! Bytes an asynchronous bulk or tensor copy (TMA) delivers into a CTA's shared memory at a
//! later cycle, and the mbarrier transaction count they complete on arrival.
//!
//! The copy's global reads run through the memory hierarchy when it issues (as a load's do);
//! what they return waits here, owned by the SM rather than the issuing warp (a producer warp
//! may exit before its last copy lands), until the cycle its last line arrived plus the
//! engine's latency. The SM lands due entries before any warp issues in that cycle, in
//! (ready, issue order): deterministic, and one of the orders PTX allows.

use gpusim_isa::semantics::Swizzle;

/// One copy's delivery into one CTA's shared memory.
#[derive(Clone, Debug)]
pub struct Landing {
    pub ready: u64,
    /// CTA slot on the SM.
    pub cta: usize,
    /// Shared address (in the CTA's window) of the first byte, before swizzling.
    pub base: u64,
    /// The bytes in box (or contiguous) order; byte i goes to `swizzle(base + i)`. Swizzles
    /// permute whole 16-byte chunks, so copies keep 16-byte runs together.
    pub data: Vec<u8>,
    pub swizzle: Swizzle,
    /// The mbarrier (shared address) whose transaction count drops by `data.len()` on arrival.
    pub mbar: Option<u64>,
    /// Arrivals on `mbar` when this lands (`cp.async.mbarrier.arrive`: none of `data`).
    pub arrivals: u32,
    /// Transaction bytes `mbar` expects from now on (a remote `arrive.expect_tx`), counted
    /// before the arrivals and the bytes of `data`.
    pub expect_tx: u32,
    /// A distributed-shared-memory load: read these bytes here and send them back.
    pub read: Option<RemoteRead>,
    /// The reply to such a load: (warp slot, register, lane, value) for the requester.
    pub reg_write: Option<(usize, u32, usize, u64)>,
}

/// A peer CTA's `ld.shared::cluster` of `size` bytes at `offset`, for lane `lane`'s register
/// `reg` of warp `warp` (the SM fills `from`: the requester's SM, CTA slot and linear id).
#[derive(Clone, Copy, Debug)]
pub struct RemoteRead {
    pub offset: u64,
    pub size: u32,
    pub warp: usize,
    pub reg: u32,
    pub lane: usize,
    /// Sign-extend from this many bits into a register of `reg_bits` (0: no extension).
    pub sign_bits: u32,
    pub reg_mask: u64,
    pub from: (u32, usize, u64),
}

impl Landing {
    /// A landing of nothing but control (arrivals, transactions, a load or its reply).
    pub fn control(ready: u64) -> Landing {
        Landing {
            ready,
            cta: 0,
            base: 0,
            data: Vec::new(),
            swizzle: Swizzle::None,
            mbar: None,
            arrivals: 0,
            expect_tx: 0,
            read: None,
            reg_write: None,
        }
    }
}

/// The SM's pending landings, in issue order (each copy's `ready` is known at issue).
#[derive(Default)]
pub struct Landings {
    pending: Vec<(u64, Landing)>,
    seq: u64,
}

impl Landings {
    pub fn push(&mut self, l: Landing) {
        self.pending.push((self.seq, l));
        self.seq += 1;
    }

    /// The earliest cycle at which something lands.
    pub fn next_ready(&self) -> Option<u64> {
        self.pending.iter().map(|(_, l)| l.ready).min()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Remove and return the landings due by `cycle`, ordered by (ready, issue order).
    pub fn take_due(&mut self, cycle: u64, out: &mut Vec<Landing>) {
        if self.pending.iter().all(|(_, l)| l.ready > cycle) {
            return;
        }
        let mut due: Vec<(u64, Landing)> = Vec::new();
        let mut i = 0;
        while i < self.pending.len() {
            if self.pending[i].1.ready <= cycle {
                due.push(self.pending.swap_remove(i));
            } else {
                i += 1;
            }
        }
        due.sort_by_key(|(seq, l)| (l.ready, *seq));
        out.extend(due.into_iter().map(|(_, l)| l));
        // swap_remove disturbed the issue order of what stays; restore it.
        self.pending.sort_by_key(|(seq, _)| *seq);
    }

    /// Forget a retired CTA's landings (its shared memory is gone).
    pub fn drop_cta(&mut self, cta: usize) {
        self.pending.retain(|(_, l)| l.cta != cta);
    }
}
