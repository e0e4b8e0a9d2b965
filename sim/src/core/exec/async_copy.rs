//! `cp.async` (global → shared, 4/8/16 bytes, zero fill past src-size) and its group
//! bookkeeping (`commit_group`, `wait_group N`, `wait_all`).
//!
//! A copy's global read runs the `ld.global.ca` / `ld.global.cg` program for its lines at
//! issue, like a load (so the bytes come from L1, L2 or DRAM as the caches hold them then);
//! the bytes are kept with the warp (`Warp::async_copies`) and land in the CTA's shared memory
//! when that read completes (`Sm::land_async_copies`). A program that reads the destination
//! before its wait therefore sees the old bytes exactly while they have not arrived — one of
//! the outcomes the PTX memory model allows for that race. `wait_group N` holds the warp (a
//! `membar` stall, as a fence waiting for its memory operations) until every copy of the
//! groups older than the N most recent has landed.
//!
//! Under the component memory system (`memory_engine: components`) the reads are operations
//! like a load's, collected for the memory system (`core::pending`); the copies land when the
//! instruction's last operation completes (`pending::CopyLand`), and until then a
//! `cp.async.wait_group` for their group does not issue (`Sm::held_back`).

use super::memory::{Prog, Timing};
use super::*;
use crate::core::pending::CopyLand;
use crate::core::warp::AsyncCopy;

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_async(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<Option<MemSummary>, Fault> {
        match &inst.op {
            Op::CpAsyncCommit => {
                if exec != 0 {
                    w.async_group += 1;
                }
                Ok(None)
            }
            Op::CpAsyncWait { n } => {
                if exec != 0 {
                    // wait_all is commit_group; wait_group 0 (PTX ISA §9.7.9.25.3.3).
                    if n.is_none() {
                        w.async_group += 1;
                    }
                    let keep = n.unwrap_or(0) as u64;
                    let older = w.async_group.saturating_sub(keep);
                    let landed = w
                        .async_copies
                        .iter()
                        .filter(|c| c.group < older)
                        .map(|c| c.ready)
                        .max();
                    if let Some(t) = landed {
                        w.hold(t, crate::stats::Stall::Membar);
                    }
                }
                Ok(None)
            }
            Op::CpAsync {
                cop,
                size,
                dst,
                src,
                src_size,
            } => self.collected(|env| {
                env.cp_async(w, inst, exec, *cop, *size as u32, (dst, src), src_size)
            }),
            _ => unreachable!("`execute` dispatches only cp.async instructions here"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn cp_async(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
        cop: CacheOp,
        size: u32,
        (dst, src): (&Address, &Address),
        src_size: &Option<Operand>,
    ) -> Result<Option<MemSummary>, Fault> {
        w.mem_accesses.clear();
        w.mem_global.clear();
        w.mem_lanes.clear();
        let mut first_space = None;
        // (lane, shared address, source address, source bytes) of each executing lane.
        let mut copies: Vec<(usize, u64, u64, u32)> =
            Vec::with_capacity(exec.count_ones() as usize);
        for l in lanes(exec) {
            let (_, d) = self.effective(w, Space::Shared, dst, l);
            let (_, s) = self.effective(w, Space::Global, src, l);
            let n = match src_size {
                Some(o) => (self.val(w, o, l) & 0xFFFF_FFFF) as u32,
                None => size,
            };
            // PTX leaves src-size > cp-size undefined; gpusim reports it.
            if n > size {
                return Err(self.fault(
                    w,
                    inst,
                    l,
                    FaultKind::OutOfBounds,
                    format!("cp.async src-size {n} exceeds its cp-size {size}"),
                ));
            }
            for (a, sp) in [(d, "shared"), (s, "global")] {
                if a % size as u64 != 0 {
                    return Err(self.fault(
                        w,
                        inst,
                        l,
                        FaultKind::Misaligned,
                        format!("misaligned {size}-byte cp.async {sp} address {a:#x}"),
                    ));
                }
            }
            let shared_at = Access {
                lane: l,
                space: Space::Shared,
                addr: d,
                size,
            };
            self.check(w, inst, shared_at, "store")?;
            if n > 0 {
                let global_at = Access {
                    lane: l,
                    space: Space::Global,
                    addr: s,
                    size: n,
                };
                self.check(w, inst, global_at, "load")?;
                self.record(w, &mut first_space, l, Space::Global, s, n);
                w.mem_lanes.push((l as u32, Space::Global, s, n));
            }
            copies.push((l, d, s, n));
        }
        let prog = Prog {
            kind: "ld",
            cop: Some(cop),
            volatile: false,
        };
        let mut t = Timing {
            release: self.cycle,
            end: self.cycle,
        };
        self.run_programs(w, inst, prog, first_space, &mut t, |_, _| {})?;
        // The whole instruction's bytes land together, when its last line has come back (as a
        // load's registers are released together); a copy of zero fill only lands a cycle on.
        let ready = t.release.max(self.cycle + 1);
        let lb = self.mem.sm.l1.line_bytes();
        let group = w.async_group;
        // The memory system runs the reads: the copies land when the last completes.
        if self.mem.issuing.collecting && !self.mem.issuing.ops.is_empty() {
            for (_, d, s, n) in copies {
                let line = s - s % lb;
                let op = match w.mem_txns.binary_search_by_key(&line, |x| x.line) {
                    Ok(op) if n > 0 => op,
                    _ if n == 0 => 0,
                    _ => continue,
                };
                self.mem.issuing.copies.push(CopyLand {
                    op: op as u16,
                    off: (s - line) as u8,
                    n: n as u8,
                    len: size as u8,
                    dst: d,
                    group,
                });
            }
            return Ok(first_space.map(|sp| self.summarise(w, sp, t.release, t.end)));
        }
        for (l, d, s, n) in copies {
            let mut data = [0u8; 16];
            if n > 0 {
                let at = Access {
                    lane: l,
                    space: Space::Global,
                    addr: s,
                    size: n,
                };
                // A program that delivers no value (no `writeToRegs`) lands nothing, as a
                // load then leaves its register.
                let Some(line) = line_bytes(w, at, lb) else {
                    continue;
                };
                data[..n as usize].copy_from_slice(line);
            }
            w.async_copies.push(AsyncCopy {
                ready,
                group,
                addr: d,
                len: size as u8,
                data,
            });
        }
        Ok(first_space.map(|sp| self.summarise(w, sp, t.release, t.end)))
    }
}

/// The `at.size` bytes of access `at` from its line's operation (`None` if that program did
/// not deliver values). Copies are aligned to their size, so one never spans two lines.
fn line_bytes(w: &Warp, at: Access, line_bytes: u64) -> Option<&[u8]> {
    let line = at.addr - at.addr % line_bytes;
    let j = w.mem_txns.binary_search_by_key(&line, |x| x.line).ok()?;
    let txn = &w.mem_txns[j];
    let o = (at.addr - line) as usize;
    txn.wrote_regs.then(|| &txn.data[o..o + at.size as usize])
}
