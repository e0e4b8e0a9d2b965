//! One bank: its open row and the earliest DRAM cycle of each command it can take next.
//!
//! Invariant: the `next_*` times only grow; a command issued at cycle k raises them by the
//! constraints it starts (`Timing`), so "may issue at k" is "k ≥ next_*" with the channel-wide
//! constraints (`ActWindow`, `DataBus`) checked beside it.

use super::timing::Timing;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bank {
    /// The open row, `None` when precharged.
    pub open: Option<u64>,
    /// Earliest ACT (`t_rp` after a precharge, `t_rfc` after a refresh).
    pub next_act: u64,
    /// Earliest PRE (`t_ras` after ACT, `t_rtp` after RD, `t_wr` after write data).
    pub next_pre: u64,
    /// Earliest RD/WR (`t_rcd` after ACT).
    pub next_col: u64,
}

impl Bank {
    pub fn activate(&mut self, k: u64, row: u64, t: &Timing) {
        self.open = Some(row);
        self.next_col = k + t.t_rcd;
        self.next_pre = self.next_pre.max(k + t.t_ras);
    }

    /// A precharge at cycle `k` (explicit, or an auto-precharge that takes effect then).
    pub fn precharge(&mut self, k: u64, t: &Timing) {
        self.open = None;
        self.next_act = self.next_act.max(k + t.t_rp);
    }

    /// A column command at `k` whose data ends at `data_end`.
    pub fn column(&mut self, k: u64, write: bool, data_end: u64, t: &Timing) {
        let pre = if write {
            data_end + t.t_wr
        } else {
            k + t.t_rtp
        };
        self.next_pre = self.next_pre.max(pre);
    }

    /// A refresh of this bank issued at `k`, lasting `duration` (`t_rfc` all-bank,
    /// `t_rfc_pb` per-bank): no ACT before it completes.
    pub fn refresh(&mut self, k: u64, duration: u64) {
        self.next_act = self.next_act.max(k + duration);
    }
}
