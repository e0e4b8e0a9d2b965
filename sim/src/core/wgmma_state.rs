//! The simulator's side of `wgmma` (PTX ISA 9.0 §9.7.15): each warp's open and pending groups,
//! the per-warpgroup record of the wgmma instruction sequence (the `.aligned` rule), and the
//! timing of an issued `wgmma.mma_async` on the sub-partition's tensor unit.
//!
//! Timing: a warp's slice of 16·N·K multiply-adds holds the tensor unit for
//! ⌈FMAs / rate⌉ cycles (`sm.wgmma.fmas_per_cycle` for .f16/.bf16, half for .tf32, double for
//! fp8), from issue; a later tensor instruction of the sub-partition waits for the unit (a
//! `pipe busy` stall), so back-to-back wgmmas keep it busy without gaps. The accumulators become
//! ready `sm.wgmma.latency` cycles after the slice leaves the unit: their scoreboard entries are
//! set then, while a later wgmma on the same accumulators does not wait for them (its
//! dependences leave D out: the unit chains accumulations in order).

use super::warp::Warp;
use crate::config::WgmmaConfig;
use gpusim_isa::{Op, Wgmma, WgmmaType};
use std::collections::VecDeque;

/// A warp's wgmma groups.
#[derive(Clone, Debug, Default)]
pub struct WarpWgmma {
    /// The open group: wgmmas issued now join it; `commit_group` closes it.
    pub group: u64,
    /// (group, completion cycle) of each wgmma that may still be running.
    pub pending: Vec<(u64, u64)>,
    /// wgmma instructions (mma_async, fence, commit, wait) this warp has executed: the index
    /// of its next one in its warpgroup's sequence.
    pub seq: u64,
}

impl WarpWgmma {
    /// The cycle by which every wgmma of the groups older than the `keep` most recent
    /// committed ones has completed (None if none is pending).
    pub fn wait_until(&mut self, keep: u64, now: u64) -> Option<u64> {
        self.pending.retain(|&(_, done)| done > now);
        let older = self.group.saturating_sub(keep);
        self.pending
            .iter()
            .filter(|&&(g, _)| g < older)
            .map(|&(_, done)| done)
            .max()
    }
}

/// One position of a warpgroup's wgmma sequence: the first warp's (function, pc), and which
/// of the four warps have reached it.
#[derive(Clone, Copy, Debug)]
struct Step {
    at: (u32, u32),
    first: u32,
    seen: u8,
}

/// Per warpgroup of a CTA: the part of the wgmma sequence not yet reached by all four warps.
#[derive(Clone, Debug, Default)]
pub struct WarpgroupLog {
    groups: Vec<(u64, VecDeque<Step>)>,
}

/// Two warps of a warpgroup that issued different wgmma instructions at the same position:
/// (the earlier warp in the CTA, its (function, pc)).
pub struct SeqMismatch {
    pub warp: u32,
    pub at: (u32, u32),
}

impl WarpgroupLog {
    /// Warp `warp` (in its CTA) executes its `seq`-th wgmma instruction at `at`.
    pub fn record(&mut self, warp: u32, seq: u64, at: (u32, u32)) -> Result<(), SeqMismatch> {
        let wg = (warp / 4) as usize;
        if self.groups.len() <= wg {
            self.groups.resize(wg + 1, (0, VecDeque::new()));
        }
        let (base, steps) = &mut self.groups[wg];
        let bit = 1u8 << (warp % 4);
        let i = seq.saturating_sub(*base) as usize;
        match steps.get_mut(i) {
            Some(s) if s.at != at => {
                return Err(SeqMismatch {
                    warp: s.first,
                    at: s.at,
                })
            }
            Some(s) => s.seen |= bit,
            None => steps.push_back(Step {
                at,
                first: warp,
                seen: bit,
            }),
        }
        while steps.front().is_some_and(|s| s.seen == 0xF) {
            steps.pop_front();
            *base += 1;
        }
        Ok(())
    }
}

/// Cycles one warp's slice of `w` holds the tensor unit: its multiply-adds at the unit's rate,
/// or, when `sm.wgmma.operand_bytes_per_cycle` is set and longer, the reading of its
/// shared-memory operands (`operand_bytes`).
pub fn slice_cycles(w: &Wgmma, cfg: &WgmmaConfig) -> u64 {
    let fmas = 16 * w.n as u64 * w.aty.k() as u64;
    let rate = cfg.fmas_per_cycle as u64;
    let rate = match w.aty {
        WgmmaType::F16 | WgmmaType::Bf16 => rate,
        WgmmaType::Tf32 => rate / 2,
        WgmmaType::E4m3 | WgmmaType::E5m2 => rate * 2,
    };
    let compute = fmas.div_ceil(rate.max(1));
    match cfg.operand_bytes_per_cycle {
        Some(bw) => compute.max(operand_bytes(w).div_ceil(bw.max(1) as u64)),
        None => compute,
    }
}

/// Shared-memory bytes one warp's slice reads: A's 16 rows of 32 bytes (K elements; every
/// type's K is 32 bytes) when A comes from shared memory, and its quarter of B's N rows of 32
/// bytes. A warpgroup's four warps read B once between them: on an H200 a warpgroup's loop of
/// m64nNk16 SS wgmmas runs at 117-125 B/clk of A + B for N = 8…64, one to four warpgroups
/// (traces/microbench/wgmma_issue.yaml, docs/tensor.md).
pub fn operand_bytes(w: &Wgmma) -> u64 {
    let a = match w.a {
        gpusim_isa::WgmmaA::Desc(_) => 16 * 32,
        gpusim_isa::WgmmaA::Regs(_) => 0,
    };
    a + w.n as u64 * 32 / 4
}

/// Time an issued (executed by some lane) `wgmma.mma_async`: its accumulators become ready at
/// completion and it joins the warp's open group. Returns the cycles it holds the tensor unit;
/// None for any other instruction.
pub fn time_issue(w: &mut Warp, op: &Op, cycle: u64, cfg: &WgmmaConfig) -> Option<u64> {
    let Op::Wgmma(wg) = op else {
        return None;
    };
    let busy = slice_cycles(wg, cfg);
    let done = cycle + busy + cfg.latency as u64;
    for r in wg.d.as_slice() {
        w.set_ready(&[r.0], done, false);
    }
    let group = w.wgmma.group;
    w.wgmma.pending.push((group, done));
    Some(busy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warpgroup_sequence_is_checked_and_trimmed() {
        let mut log = WarpgroupLog::default();
        for warp in 0..4 {
            assert!(log.record(warp, 0, (0, 5)).is_ok());
        }
        assert!(
            log.groups[0].1.is_empty(),
            "a step all four reached is dropped"
        );
        assert!(log.record(1, 1, (0, 7)).is_ok());
        let Err(e) = log.record(2, 1, (0, 9)) else {
            panic!("a mismatch")
        };
        assert_eq!((e.warp, e.at), (1, (0, 7)));
        // The second warpgroup keeps its own sequence.
        assert!(log.record(4, 0, (0, 9)).is_ok());
    }

    #[test]
    fn wait_covers_the_older_groups_only() {
        let mut s = WarpWgmma {
            group: 3,
            pending: vec![(0, 100), (1, 200), (2, 300), (3, 400)],
            seq: 0,
        };
        assert_eq!(s.wait_until(1, 0), Some(200));
        assert_eq!(s.wait_until(0, 0), Some(300));
        assert_eq!(s.wait_until(0, 300), None);
    }
}
