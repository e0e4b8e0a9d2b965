//! The channel's data bus and column-command spacing: bursts never overlap, consecutive column
//! commands are `t_ccd` apart, and a change of direction pays its turnaround (`t_wtr` from the
//! end of write data to a read command, `t_rtw` from the end of read data to write data).

use super::timing::Timing;

#[derive(Clone, Copy, Debug, Default)]
pub struct DataBus {
    /// The cycle the last burst ends (the bus is free from then).
    pub free: u64,
    /// Earliest next column command (`t_ccd`).
    next_col: u64,
    /// Ends of the last read and the last write burst (`None` before the first).
    read_end: Option<u64>,
    write_end: Option<u64>,
}

/// When a column command may issue: the bound without the turnaround rule, and the turnaround
/// rule's own bound (the command waits for the later; the stats charge the excess of the
/// second to the turnaround).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnBound {
    pub plain: u64,
    pub turnaround: u64,
}

impl ColumnBound {
    pub fn at(&self) -> u64 {
        self.plain.max(self.turnaround)
    }
}

impl DataBus {
    /// The bounds on a RD (or WR) command from the bus's point of view.
    pub fn bound(&self, write: bool, t: &Timing) -> ColumnBound {
        let lead = if write { t.t_cwl } else { t.t_cl };
        let plain = self.next_col.max(self.free.saturating_sub(lead));
        let turnaround = if write {
            self.read_end
                .map_or(0, |end| (end + t.t_rtw).saturating_sub(t.t_cwl))
        } else {
            self.write_end.map_or(0, |end| end + t.t_wtr)
        };
        ColumnBound { plain, turnaround }
    }

    /// A column command at `k` carrying `burst` cycles of data; returns the end of its data.
    pub fn issue(&mut self, k: u64, write: bool, burst: u64, t: &Timing) -> u64 {
        let start = k + if write { t.t_cwl } else { t.t_cl };
        let end = start + burst;
        self.free = end;
        self.next_col = k + t.t_ccd;
        if write {
            self.write_end = Some(end);
        } else {
            self.read_end = Some(end);
        }
        end
    }
}
