//! All-bank refresh: every `t_refi` cycles the channel stops issuing, precharges every open
//! bank (each PRE when its own constraints allow), and once every bank has been precharged for
//! `t_rp` issues REF, after which no bank activates for `t_rfc`. Due times follow a fixed
//! schedule (a late refresh does not postpone the next), staggered across channels so that
//! they do not all refresh in the same cycle. `t_refi` 0 disables refresh.

use super::timing::Timing;

#[derive(Clone, Copy, Debug)]
pub struct Refresh {
    /// DRAM cycle the next refresh is due (`u64::MAX` when disabled).
    due: u64,
    interval: u64,
}

impl Refresh {
    /// Channel `index` of `channels`: its first refresh at `t_refi × (1 + index / channels)`.
    pub fn new(t: &Timing, index: u32, channels: u32) -> Refresh {
        if t.t_refi == 0 {
            return Refresh {
                due: u64::MAX,
                interval: 0,
            };
        }
        let offset = t.t_refi * index as u64 / channels.max(1) as u64;
        Refresh {
            due: t.t_refi + offset,
            interval: t.t_refi,
        }
    }

    /// Whether the refresh due at or before `k` has not been done yet.
    pub fn pending(&self, k: u64) -> bool {
        k >= self.due
    }

    /// The cycle the next refresh is due.
    pub fn due(&self) -> u64 {
        self.due
    }

    /// The pending refresh was issued: schedule the next.
    pub fn done(&mut self) {
        self.skip(1);
    }

    /// `n` refreshes were issued.
    pub fn skip(&mut self, n: u64) {
        self.due = self.due.saturating_add(self.interval.saturating_mul(n));
    }
}
