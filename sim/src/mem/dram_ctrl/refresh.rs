//! Refresh policies, chosen by `dram.refresh` (Ramulator 2's refresh managers):
//!
//! - `all-bank` (REFab): every `t_refi` cycles the channel stops issuing, precharges every
//!   open bank (each PRE when its own constraints allow), and once every bank has been
//!   precharged for `t_rp` issues REF, after which no bank activates for `t_rfc`.
//! - `per-bank` (HBM2's REFSB, HBM3's REFpb): every `t_refi / banks` cycles the next bank in
//!   turn is refreshed — precharged when its constraints allow, then REF, after which it does
//!   not activate for `t_rfc_pb` — while the other banks keep serving requests. Every bank
//!   is still refreshed once per `t_refi`.
//!
//! Due times follow a fixed schedule (a late refresh does not postpone the next), staggered
//! across channels so that they do not all refresh in the same cycle. `t_refi` 0 disables
//! refresh. Adding a policy: its name in `REFRESH_POLICIES` and its case in `Refresh`.

use super::timing::Timing;

/// The names `dram.refresh` accepts.
pub const REFRESH_POLICIES: &[&str] = &["all-bank", "per-bank"];

#[derive(Clone, Copy, Debug)]
pub struct Refresh {
    /// DRAM cycle the next refresh is due (`u64::MAX` when disabled).
    due: u64,
    interval: u64,
    /// Per-bank refresh: the banks and the one the next refresh is for.
    per_bank: Option<(u32, u32)>,
    /// Cycles one refresh keeps its bank (or every bank) from activating.
    duration: u64,
}

impl Refresh {
    /// Channel `index` of `channels`, with `banks` banks under the policy named `policy`
    /// (validated): its first refresh at `interval × (1 + index / channels)`.
    pub fn new(t: &Timing, policy: &str, banks: u32, index: u32, channels: u32) -> Refresh {
        let per_bank = policy == "per-bank";
        let interval = if per_bank {
            t.t_refi / banks.max(1) as u64
        } else {
            t.t_refi
        };
        if interval == 0 {
            return Refresh {
                due: u64::MAX,
                interval: 0,
                per_bank: None,
                duration: 0,
            };
        }
        let offset = interval * index as u64 / channels.max(1) as u64;
        Refresh {
            due: interval + offset,
            interval,
            per_bank: per_bank.then_some((banks.max(1), 0)),
            duration: if per_bank { t.t_rfc_pb } else { t.t_rfc },
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

    /// The bank the pending refresh is for (`None`: all of them).
    pub fn bank(&self) -> Option<usize> {
        self.per_bank.map(|(_, b)| b as usize)
    }

    /// Cycles a refresh keeps its bank, or every bank, from activating.
    pub fn duration(&self) -> u64 {
        self.duration
    }

    /// The cycles between two refreshes.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// The pending refresh was issued: schedule the next.
    pub fn done(&mut self) {
        self.skip(1);
    }

    /// `n` refreshes were issued.
    pub fn skip(&mut self, n: u64) {
        self.due = self.due.saturating_add(self.interval.saturating_mul(n));
        if let Some((banks, b)) = &mut self.per_bank {
            *b = ((*b as u64 + n) % *banks as u64) as u32;
        }
    }
}
