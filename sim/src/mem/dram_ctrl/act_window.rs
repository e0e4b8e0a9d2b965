//! The channel's activation limits: `t_rrd` between any two ACTs and at most four ACTs in any
//! `t_faw` window (the four-activate window, JEDEC's power-delivery limit).

use super::timing::Timing;

#[derive(Clone, Copy, Debug, Default)]
pub struct ActWindow {
    /// The last four ACT cycles, a ring indexed by `count % 4`.
    last: [u64; 4],
    /// ACTs issued so far.
    count: u64,
}

impl ActWindow {
    /// The earliest cycle the next ACT may issue at.
    pub fn earliest(&self, t: &Timing) -> u64 {
        let mut at = 0;
        if self.count >= 1 {
            at = self.last[((self.count - 1) % 4) as usize] + t.t_rrd;
        }
        if self.count >= 4 {
            // The fourth most recent ACT is the slot the next one overwrites.
            at = at.max(self.last[(self.count % 4) as usize] + t.t_faw);
        }
        at
    }

    pub fn record(&mut self, k: u64) {
        self.last[(self.count % 4) as usize] = k;
        self.count += 1;
    }
}
