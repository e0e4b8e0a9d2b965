//! Per-instruction counters: the source view (`gpusim annotate`, the report's source page).
//! Each SM counts, for every instruction of the module (`Program::inst_index`), how often it
//! issued with how many active lanes and the warp-cycles warps spent waiting to issue it, per
//! stall state — Nsight Compute's attribution: a stall belongs to the instruction the warp
//! was waiting to issue. Warp-cycles of warps with no instruction to issue (finished warps
//! waiting for their CTA) are counted apart, so the per-instruction stalls and those sum to
//! the launch's stall breakdown exactly. Collected only when asked (`LaunchSpec::lines`):
//! the counters take `(warp size + 1) × 4 + 12 × 8` bytes per instruction per SM.

use super::Stall;

const KINDS: usize = Stall::ALL.len();

/// The counters of one SM (or, summed, of a launch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineCounters {
    /// Buckets per instruction: issues by active lanes, 0..=warp size.
    buckets: usize,
    /// `lanes[i * buckets + k]`: issues of instruction `i` with `k` active lanes.
    lanes: Vec<u32>,
    /// Warp-cycles per instruction and stall state.
    stalls: Vec<[u64; KINDS]>,
    /// Warp-cycles of warps with no instruction to issue.
    unattributed: [u64; KINDS],
}

/// The instruction a stalled warp waits to issue, if any (a finished warp has none).
pub type Line = Option<u32>;

impl LineCounters {
    pub fn new(instructions: u32, warp_size: u32) -> LineCounters {
        let buckets = warp_size as usize + 1;
        LineCounters {
            buckets,
            lanes: vec![0; instructions as usize * buckets],
            stalls: vec![[0; KINDS]; instructions as usize],
            unattributed: [0; KINDS],
        }
    }

    /// Instruction `i` issued with `lanes` active lanes.
    #[inline]
    pub fn issue(&mut self, i: u32, lanes: u32) {
        let b = &mut self.lanes[i as usize * self.buckets + lanes as usize];
        *b = b.saturating_add(1);
    }

    /// `n` warp-cycles in stall `s` waiting to issue `line`.
    #[inline]
    pub fn stall(&mut self, line: Line, s: Stall, n: u64) {
        match line {
            Some(i) => self.stalls[i as usize][s as usize] += n,
            None => self.unattributed[s as usize] += n,
        }
    }

    /// A warp-cycle counted `Issued` at `line` turned out not to issue (`SmStats::unissue`).
    pub fn unissue(&mut self, line: Line, why: Stall) {
        let row = match line {
            Some(i) => &mut self.stalls[i as usize],
            None => &mut self.unattributed,
        };
        row[Stall::Issued as usize] -= 1;
        row[why as usize] += 1;
    }

    /// Add another SM's counters (same program and warp size).
    pub fn add(&mut self, o: &LineCounters) {
        debug_assert_eq!(
            (self.buckets, self.stalls.len()),
            (o.buckets, o.stalls.len())
        );
        for (a, b) in self.lanes.iter_mut().zip(&o.lanes) {
            *a = a.saturating_add(*b);
        }
        for (a, b) in self.stalls.iter_mut().zip(&o.stalls) {
            add_row(a, b);
        }
        add_row(&mut self.unattributed, &o.unattributed);
    }

    pub fn instructions(&self) -> usize {
        self.stalls.len()
    }

    /// Issues of instruction `i` by active lanes (index: lanes, 0..=warp size).
    pub fn lanes(&self, i: usize) -> &[u32] {
        &self.lanes[i * self.buckets..(i + 1) * self.buckets]
    }

    /// Warp-cycles waiting to issue instruction `i`, by `Stall as usize`.
    pub fn stalls(&self, i: usize) -> &[u64; KINDS] {
        &self.stalls[i]
    }

    pub fn unattributed(&self) -> &[u64; KINDS] {
        &self.unattributed
    }
}

fn add_row(a: &mut [u64; KINDS], b: &[u64; KINDS]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Parked warps' stalls per instruction (`sm::parked`): a parked warp's stall is charged per
/// sub-partition in one addition, so the warp's own share is settled when it is unparked, as
/// the partition's charged cycles since it was parked. No per-cycle work.
#[derive(Clone, Debug)]
pub struct ParkedLines {
    /// Per slot: the instruction it waits to issue and the partition's `charged` at parking.
    line: Vec<Line>,
    mark: Vec<u64>,
    /// Per partition: cycles charged to its parked warps so far.
    charged: Vec<u64>,
    pub counters: LineCounters,
}

impl ParkedLines {
    pub fn new(slots: usize, n_parts: usize, counters: LineCounters) -> ParkedLines {
        ParkedLines {
            line: vec![None; slots],
            mark: vec![0; slots],
            charged: vec![0; n_parts.max(1)],
            counters,
        }
    }

    #[inline]
    pub fn park(&mut self, slot: usize, part: usize, line: Line) {
        self.line[slot] = line;
        self.mark[slot] = self.charged[part];
    }

    #[inline]
    pub fn charge(&mut self, part: usize, n: u64) {
        self.charged[part] += n;
    }

    /// Settle parked warp `slot`'s stall `s` up to now (it stays parked or is unparked).
    #[inline]
    pub fn settle(&mut self, slot: usize, part: usize, s: Stall) {
        let n = self.charged[part] - self.mark[slot];
        self.mark[slot] = self.charged[part];
        if n > 0 {
            self.counters.stall(self.line[slot], s, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_up_and_unissue_moves_a_cycle() {
        let mut a = LineCounters::new(3, 4);
        a.issue(1, 4);
        a.issue(1, 2);
        a.stall(Some(1), Stall::Issued, 2);
        a.stall(None, Stall::Finished, 7);
        a.unissue(Some(1), Stall::MemoryBackpressure);
        let mut b = a.clone();
        b.add(&a);
        assert_eq!(b.lanes(1), &[0, 0, 2, 0, 2]);
        assert_eq!(b.stalls(1)[Stall::Issued as usize], 2);
        assert_eq!(b.stalls(1)[Stall::MemoryBackpressure as usize], 2);
        assert_eq!(b.unattributed()[Stall::Finished as usize], 14);
        assert_eq!(b.stalls(0), &[0; KINDS]);
    }

    #[test]
    fn a_parked_warp_is_charged_its_partitions_cycles_since_parking() {
        let mut p = ParkedLines::new(4, 2, LineCounters::new(2, 32));
        p.charge(0, 3);
        p.park(2, 0, Some(1));
        p.charge(0, 5);
        p.charge(1, 100);
        p.settle(2, 0, Stall::ScoreboardLong);
        p.charge(0, 1);
        p.settle(2, 0, Stall::ScoreboardLong);
        assert_eq!(p.counters.stalls(1)[Stall::ScoreboardLong as usize], 6);
    }
}
