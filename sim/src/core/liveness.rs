//! Livelock detection: a warp whose complete state (pc, masks, token stack, registers) repeats
//! while no memory anywhere has changed can never make progress (Habermaier §6.5: the
//! spin-lock of Listing 6.1 under the token stack). Brent's cycle detection over the states
//! sampled at backward branches finds any period without storing a history.

use std::hash::Hasher;

/// Backward branches a warp takes without any memory change before sampling starts.
const QUIET_BACKEDGES: u32 = 32;

#[derive(Clone, Debug, Default)]
pub struct LiveTracker {
    epoch: u64,
    quiet: u32,
    reference: Option<u64>,
    since_ref: u32,
    power: u32,
    pub spinning: bool,
}

impl LiveTracker {
    /// Called at each backward branch. `epoch` counts global memory changes, completions and
    /// barrier releases; `state` hashes the warp's state lazily (only once quiet).
    pub fn backedge(&mut self, epoch: u64, state: impl FnOnce(&mut dyn Hasher)) {
        if epoch != self.epoch {
            *self = LiveTracker {
                epoch,
                ..Default::default()
            };
        }
        self.quiet += 1;
        if self.quiet < QUIET_BACKEDGES {
            return;
        }
        let mut h = StateHasher::default();
        state(&mut h);
        let h = h.finish();
        match self.reference {
            Some(r) if r == h => self.spinning = true,
            _ => {
                self.since_ref += 1;
                if self.reference.is_none() || self.since_ref >= self.power.max(1) {
                    self.reference = Some(h);
                    self.since_ref = 0;
                    self.power = self.power.max(1) * 2;
                }
            }
        }
    }

    /// Still spinning only if no memory changed since detection.
    pub fn is_spinning(&self, epoch: u64) -> bool {
        self.spinning && self.epoch == epoch
    }
}

/// A fast, fixed (seedless) hasher for warp states: multiply-rotate over 64-bit words. Not
/// collision-resistant against an adversary, which a livelock check does not need; a false
/// match would need two distinct states to collide *and* the state to recur.
#[derive(Default)]
pub struct StateHasher {
    h: u64,
}

impl Hasher for StateHasher {
    fn finish(&self) -> u64 {
        self.h
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.h = (self.h.rotate_left(5) ^ v).wrapping_mul(0x51_7C_C1_B7_27_22_0A_95);
    }
}
