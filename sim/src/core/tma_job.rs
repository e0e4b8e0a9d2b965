//! A bulk or tensor copy (TMA) in flight under the component memory system: what its
//! instruction still has to do when its line operations have all completed.
//!
//! Execution (`exec::bulk`) checks the copy and builds one operation per global L1 line, for
//! the SM's TMA engine (`mem::system::tma`), but lands nothing and completes no group: the
//! job records where the bytes go. The entry's operations complete in the memory system; at
//! the last (`pending::PendingMemory::complete`), a load's bytes are gathered from its lines
//! and land in each destination CTA the engine's latency later (completing the mbarrier's
//! transactions there), and a store's bulk group learns it is done. (Under `memory_engine:
//! issue`, `exec::bulk` runs the lines' programs at issue and needs no job.)

use std::ops::Range;

use super::async_state::BulkOp;
use super::landing::Landing;
use super::warp::Warp;
use crate::mem::hierarchy::Txn;

/// A run of bytes: (offset in the shared image, global address, length).
pub type Run = (u64, u64, u64);

/// What completes a copy.
#[derive(Clone, Debug)]
pub enum TmaJob {
    /// Bytes for shared memory: `landing` (its `data` the image before the reads: zeros or the
    /// out-of-bounds fill, or a shared-to-shared copy's bytes) takes each run's bytes from the
    /// lines of operations `ops` and lands in each CTA of `ranks` (None: the issuing warp's)
    /// `latency` cycles after the last completed. `engine`: the copy moves no global memory
    /// and its one operation only occupies the TMA engine for that many bytes.
    Land {
        ops: Range<usize>,
        runs: Vec<Run>,
        line_bytes: u64,
        landing: Box<Landing>,
        ranks: Vec<Option<u32>>,
        latency: u64,
        engine: Option<u64>,
    },
    /// A store or reduction of bulk group `group`.
    Store { group: u64 },
}

impl TmaJob {
    /// The engine bytes of operation `k` when it only occupies the engine.
    pub fn engine_bytes(&self, k: usize) -> Option<u64> {
        match self {
            TmaJob::Land {
                ops,
                engine: Some(b),
                ..
            } if ops.contains(&k) => Some(*b),
            _ => None,
        }
    }

    /// At issue: the warp's bulk group has a store in flight.
    pub fn issued(&self, w: &mut Warp) {
        if let TmaJob::Store { group } = self {
            w.hopper.bulk_in_flight.push(*group);
        }
    }

    /// Every operation of its instruction (`ops`) completed; the last reached the SM at
    /// `at`: land the bytes or complete the group.
    pub fn finish(&self, w: &mut Warp, ops: &[Txn], at: u64) {
        match self {
            TmaJob::Land {
                ops: range,
                runs,
                line_bytes,
                landing,
                ranks,
                latency,
                ..
            } => {
                let lines = &ops[range.clone()];
                let mut l = Landing::clone(landing);
                gather_runs(
                    runs,
                    *line_bytes,
                    |line| {
                        let j = lines.binary_search_by_key(&line, |t| t.line).ok()?;
                        lines[j].wrote_regs.then_some(&lines[j].data)
                    },
                    &mut l.data,
                );
                l.ready = at + latency;
                land_in(w, ranks, l);
            }
            TmaJob::Store { group } => {
                if let Some(i) = w.hopper.bulk_in_flight.iter().position(|g| g == group) {
                    w.hopper.bulk_in_flight.swap_remove(i);
                }
                w.hopper.bulk_ops.push(BulkOp {
                    group: *group,
                    read_done: at,
                    done: at,
                });
            }
        }
    }
}

/// Queue `l` for each CTA of `ranks` (None: the warp's own), the same bytes and barrier offset
/// in each (multicast writes every destination at the same CTA-relative place).
pub fn land_in(w: &mut Warp, ranks: &[Option<u32>], l: Landing) {
    for r in ranks {
        let copy = l.clone();
        match r {
            None => w.hopper.landings_out.push(copy),
            Some(rank) => w.hopper.remote_out.push((*rank, copy)),
        }
    }
}

/// Copy each run's bytes out of the `line_bytes` lines that hold them (`line_data(line)`:
/// the line's bytes, None where its program delivered none: those bytes stay) into `out`
/// at the run's offsets.
pub fn gather_runs<'d>(
    runs: &[Run],
    line_bytes: u64,
    line_data: impl Fn(u64) -> Option<&'d [u8; 128]>,
    out: &mut [u8],
) {
    for &(o, a, n) in runs {
        let mut x = a;
        while x < a + n {
            let line = x - x % line_bytes;
            let hi = (a + n).min(line + line_bytes);
            if let Some(d) = line_data(line) {
                let (s, e) = ((x - line) as usize, (hi - line) as usize);
                let at = (o + x - a) as usize;
                out[at..at + e - s].copy_from_slice(&d[s..e]);
            }
            x = hi;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_gathered_from_their_lines_and_undelivered_lines_leave_the_fill() {
        let mut a = [0u8; 128];
        let mut b = [0u8; 128];
        for i in 0..128 {
            a[i] = i as u8;
            b[i] = 128 + i as u8;
        }
        // 8 bytes straddling lines 0 and 128 land at offset 4; 4 bytes of line 256 at 0.
        let runs = [(4, 124, 8), (0, 256, 4)];
        let mut out = [0xEEu8; 12];
        gather_runs(
            &runs,
            128,
            |line| match line {
                0 => Some(&a),
                128 => Some(&b),
                _ => None,
            },
            &mut out,
        );
        assert_eq!(
            out,
            [0xEE, 0xEE, 0xEE, 0xEE, 124, 125, 126, 127, 128, 129, 130, 131]
        );
    }
}
